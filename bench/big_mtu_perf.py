#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""big_mtu_perf - the SCTP stack alone (sdp-perf, no MPI, no UCX) at
several testbed MTUs over memif and af_packet, interleaved.

Per repetition, for every MTU in turn and every fabric: sdp-perf bw of
--bw-size messages (--total bytes), then sdp-perf lat of each --lat-sizes
message; both ends busy-poll.  Every message is verified by sdp-perf.
Prints the medians per (fabric, MTU) with the 1-minute load average at
each run's start; --jsonl appends every run.

  bench/big_mtu_perf.py --mtus 9000,16000,32000,64000 --reps 3 \\
      --jsonl bench/results/big_mtu_perf.jsonl
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PERF = os.path.join(os.path.dirname(HERE), "apps", "sdp-perf")


def perf(fabric, mtu, args, timeout):
    cmd = [PERF, "--json", "--busy", "--fabric", fabric, "--mtu", str(mtu),
           *args]
    for attempt in range(2):
        r = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=timeout)
        if r.returncode == 0:
            break
        # under load a memif link can miss its 5 s deadline: once more
        print(f"big_mtu_perf: {' '.join(cmd[1:])} failed (rc "
              f"{r.returncode}), retrying once", file=sys.stderr)
    if r.returncode != 0:
        sys.exit(f"big_mtu_perf: {' '.join(cmd)} failed (rc {r.returncode})"
                 f"\n{r.stdout[-1500:]}\n{r.stderr[-2500:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--mtus", default="9000,16000,32000,64000")
    ap.add_argument("--fabrics", default="memif,bridge")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--bw-size", default="1M")
    ap.add_argument("--total", default="256M")
    ap.add_argument("--lat-sizes", default="16K,64K",
                    help="comma-separated; empty: no latency runs")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--jsonl", help="append every run here")
    a = ap.parse_args()
    mtus = [int(m) for m in a.mtus.split(",") if m]
    fabrics = [f for f in a.fabrics.split(",") if f]
    lat_sizes = [s for s in a.lat_sizes.split(",") if s]
    res = {}
    out = open(a.jsonl, "a") if a.jsonl else None
    for rep in range(a.reps):
        for mtu in mtus:
            for fab in fabrics:
                tests = [("bw", a.bw_size, ["--test", "bw", "--size",
                                            a.bw_size, "--total", a.total])]
                tests += [("lat", s, ["--test", "lat", "--size", s,
                                      "--count", "2000"]) for s in lat_sizes]
                for test, size, args in tests:
                    load = os.getloadavg()[0]
                    r = perf(fab, mtu, args, a.timeout)
                    v = r["gbps"] if test == "bw" else r["latency_us_p50"]
                    res.setdefault((fab, test, size, mtu), []).append(v)
                    rec = {"time": time.time(), "rep": rep, "fabric": fab,
                           "mtu": mtu, "test": test, "size": size,
                           "value": v, "unit": "Gbit/s" if test == "bw"
                           else "us p50", "load1": load}
                    if out:
                        out.write(json.dumps(rec) + "\n")
                        out.flush()
                    res.setdefault(("load",), []).append(load)
        print(f"big_mtu_perf: repetition {rep + 1}/{a.reps} done",
              file=sys.stderr, flush=True)
    loads = res[("load",)]
    print(f"\nsdp-perf medians of {a.reps} interleaved runs (busy polling); "
          f"load average {min(loads):.1f}-{max(loads):.1f} "
          f"(median {statistics.median(loads):.1f})")
    hdr = f"{'fabric':<7} {'test':<14} | " + " | ".join(
        f"{m:>8}" for m in mtus)
    print(hdr)
    for fab in fabrics:
        for test, size in [("bw", a.bw_size)] + [("lat", s)
                                                  for s in lat_sizes]:
            name = (f"bw {size} Gb/s" if test == "bw" else
                    f"lat {size} us")
            cells = [statistics.median(res[(fab, test, size, m)])
                     for m in mtus]
            print(f"{fab:<7} {name:<14} | " + " | ".join(
                f"{c:>8.2f}" for c in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
