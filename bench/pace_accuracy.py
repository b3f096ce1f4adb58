#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Pacer accuracy sweep: achieved rate, departure-gap error and bursts from
10 Mbit/s to 90% of the link, the gap pacer (deadline mode, memif) against
a token bucket served by a 1 kHz timer (DPDK rte_meter) in the same run.

Each point runs apps/sdp-pace (both ends on a memif pair; departures are
stamped in an ethdev TX callback) --repeat times; the median is reported.

  bench/pace_accuracy.py --json out.json --plot docs/img/pace_accuracy.png
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINK = 10e9
FRAME_WIRE_BITS = 1538 * 8


def run(rate, limiter, count):
    r = subprocess.run([os.path.join(ROOT, "apps", "sdp-pace"), "--json",
                        "--fabric", "memif", "--rate", rate, "--link", "10G",
                        "--limiter", limiter, "--count", str(count)],
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise RuntimeError(f"sdp-pace {rate} {limiter}: {r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def bps(text):
    mult = {"M": 1e6, "G": 1e9}
    return float(text[:-1]) * mult[text[-1]]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rates", default="10M,100M,500M,1G,2G,5G,9G")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=0.5,
                    help="traffic per point (frame count follows)")
    ap.add_argument("--json")
    ap.add_argument("--plot")
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("pace_accuracy: needs root (testbeds)")
        return 77
    rows = []
    for rate in a.rates.split(","):
        count = max(2000, int(bps(rate) * a.seconds / FRAME_WIRE_BITS))
        for lim in ("pace", "tb"):
            runs = [run(rate, lim, count) for _ in range(a.repeat)]
            med = lambda k: statistics.median(r[k] for r in runs)
            row = {"rate": rate, "target_bps": bps(rate), "limiter": lim,
                   "frames": count,
                   "rate_error_pct": med("rate_error_pct"),
                   "gap_err_us_p50": med("gap_err_ns_p50") / 1e3,
                   "gap_err_us_p99": med("gap_err_ns_p99") / 1e3,
                   "max_burst": med("max_burst"),
                   "late_polls": statistics.median(
                       r["tx"]["pace_late"] for r in runs),
                   "runs": runs}
            rows.append(row)
            print(f"{rate:>5} {lim:>4}: rate error {row['rate_error_pct']:+7.3f}%"
                  f"  gap error p50 {row['gap_err_us_p50']:8.2f} us"
                  f"  p99 {row['gap_err_us_p99']:8.2f} us"
                  f"  largest burst {row['max_burst']:4.0f}"
                  f"  late polls {row['late_polls']:.0f}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    if a.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(1, 3, figsize=(15, 4.2))
        for lim, color, name in (("pace", "tab:blue", "gap pacer (deadline)"),
                                 ("tb", "tab:orange",
                                  "token bucket, 1 kHz tick")):
            rs = [r for r in rows if r["limiter"] == lim]
            x = [r["target_bps"] / 1e6 for r in rs]
            ax[0].plot(x, [r["rate_error_pct"] for r in rs], "o-",
                       color=color, label=name)
            ax[1].plot(x, [r["gap_err_us_p99"] for r in rs], "o-",
                       color=color, label=name)
            ax[2].plot(x, [r["max_burst"] for r in rs], "o-", color=color,
                       label=name)
        for x_ in ax:
            x_.set_xscale("log")
            x_.set_xlabel("target rate (Mbit/s), 1514-byte frames")
            x_.legend(fontsize=8)
        ax[0].axhspan(-1, 1, color="green", alpha=0.1)
        ax[0].set_ylabel("achieved - target (%)")
        ax[0].set_title("rate error (target band: 1%)")
        ax[1].axhline(2, color="green", ls="--", lw=0.8)
        ax[1].set_yscale("log")
        ax[1].set_ylabel("|departure gap - ideal|, p99 (us)")
        ax[1].set_title("gap error p99 (target: 2 us)")
        ax[2].set_yscale("log")
        ax[2].set_ylabel("frames")
        ax[2].set_title("largest burst beyond the schedule")
        fig.tight_layout()
        fig.savefig(a.plot, dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
