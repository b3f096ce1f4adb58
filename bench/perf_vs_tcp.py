#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""perf_vs_tcp - sdp-perf against usrsctp in one process and kernel TCP.

In one run, per MTU (1500, 9000), interleaved repetitions, median:
  (a) sdp-perf over a memif pair: bw of 64 KiB messages, lat of 8 B
  (b) sdp-perf over the bridge testbed (af_packet on a veth pair)
  (c) sctp-loop-ep: usrsctp with two sockets in ONE process over AF_CONN
      and an in-memory FIFO (the stack's own ceiling), with usrsctp's CRC
      offload flag; once with no CRC at all, once with ISA-L CRC32c
      filled/checked in the loop like the dataplane does
  (d) kernel TCP (TCP_NODELAY) over the same veth pair as (b), server and
      client in the two host namespaces (tcp-perf-ep)
All sdp-perf endpoints busy-poll (--busy), one core each (lcore 0 and 1).
Prints a table with ratios; --json writes every run; --plot draws a PNG.

  bench/perf_vs_tcp.py --json bench/results/perf_vs_tcp.json \\
      --plot docs/img/perf_vs_tcp.png
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "apps"))
import sdp_launch  # noqa: E402

BW_SIZE = 64 << 10
LAT_SIZE = 8


def bench_bin(name):
    d = os.environ.get("SDP_BENCH_BIN_DIR") or os.path.join(
        os.environ.get("SDP_BUILD_DIR", os.path.join(ROOT, "build")), "bench")
    p = os.path.join(d, name)
    if not os.access(p, os.X_OK):
        sys.exit(f"{name} not found in {d}: build first (ninja -C build)")
    return p


def sdp_perf(tb, test, args):
    """One sdp-perf run on an up testbed; returns the client JSON."""
    ep = sdp_launch.find_bin("sdp-perf-ep")
    common = ["--json", "--busy", "--deadline-s", "300"]
    srv = [ep, "--server", "--idle-exit-ms", "30000",
           "--dp", tb.dp_config(tb.server_idx)] + common
    cli = [ep, "--peer", tb.ip(tb.server_idx), "--test", test,
           "--dp", tb.dp_config(tb.client_idx)] + common + args
    (crc, cout, cerr), (src, sout, serr) = sdp_launch.run_pair(
        tb, srv, cli, 330)
    c = sdp_launch.last_json(cout)
    s = sdp_launch.last_json(sout)
    if crc != 0 or src != 0 or c is None or not c["verified"]:
        raise RuntimeError(f"sdp-perf {test} {args} failed: client rc "
                           f"{crc}, server rc {src}\n{cerr[-2000:]}\n"
                           f"{serr[-2000:]}")
    return c


def tcp(tb, test, args):
    ep = bench_bin("tcp-perf-ep")
    srv = tb.start(tb.server_idx, [ep, "--server"])
    time.sleep(0.3)
    cli = tb.start(tb.client_idx, [ep, "--peer",
                                   tb.kernel_ip_of(tb.server_idx),
                                   "--test", test] + args)
    crc, cout, cerr = sdp_launch.finish(cli, 300)
    src, sout, serr = sdp_launch.finish(srv, 30)
    c = sdp_launch.last_json(cout)
    s = sdp_launch.last_json(sout)
    if crc != 0 or src != 0 or c is None or not s["verified"]:
        raise RuntimeError(f"tcp {test} failed: {cerr} {serr}")
    return c


def loop(test, pathmtu, crc, args):
    r = subprocess.run([bench_bin("sctp-loop-ep"), "--test", test,
                        "--pathmtu", str(pathmtu), "--crc", crc] + args,
                       capture_output=True, text=True, timeout=300)
    c = sdp_launch.last_json(r.stdout)
    if r.returncode != 0 or c is None or not c["verified"]:
        raise RuntimeError(f"sctp-loop {test} failed: {r.stderr}")
    return c


def measure(a):
    runs = []  # (kind, mtu, test, result)
    bw_args = ["--size", str(BW_SIZE), "--count", str(a.bw_count)]
    lat_args = ["--size", str(LAT_SIZE), "--count", str(a.lat_count)]
    for rep in range(a.reps):
        for mtu in a.mtus:
            print(f"rep {rep + 1}/{a.reps} mtu {mtu}", file=sys.stderr,
                  flush=True)
            with sdp_launch.Testbed("memif", mtu=mtu) as tb:
                for test, args in (("bw", bw_args), ("lat", lat_args)):
                    runs.append(("memif", mtu, test,
                                 sdp_perf(tb, test, args)))
            with sdp_launch.Testbed("bridge", mtu=mtu,
                                    kernel_ip=True) as tb:
                for test, args in (("bw", bw_args), ("lat", lat_args)):
                    runs.append(("bridge", mtu, test,
                                 sdp_perf(tb, test, args)))
                    runs.append(("tcp", mtu, test, tcp(tb, test, args)))
            pmtu = mtu - 40  # as sg sets it: IPv4 + UDP room + SCTP header
            for crc in ("none", "isal"):
                runs.append((f"loop-{crc}", mtu, "bw",
                             loop("bw", pmtu, crc, bw_args)))
            runs.append(("loop-none", mtu, "lat",
                         loop("lat", pmtu, "none", lat_args)))
    return runs


def median(runs, kind, mtu, test, key):
    v = [r[key] for k, m, t, r in runs if k == kind and m == mtu and
         t == test and r.get(key) is not None]
    return statistics.median(v) if v else None


KINDS = [("memif", "sdp-perf memif"), ("bridge", "sdp-perf af_packet"),
         ("loop-none", "usrsctp loop, no CRC"),
         ("loop-isal", "usrsctp loop, ISA-L CRC"),
         ("tcp", "kernel TCP veth")]


def table(runs, mtus):
    def f(v, fmt):
        return "-" if v is None else format(v, fmt)

    lines = []
    head = "| metric (median) | " + " | ".join(f"MTU {m}" for m in mtus) + " |"
    lines += [head, "|---|" + "---:|" * len(mtus)]
    for kind, name in KINDS:
        vals = [median(runs, kind, m, "bw", "gbps") for m in mtus]
        if any(v is not None for v in vals):
            lines.append(f"| bw 64 KiB Gbit/s, {name} | " +
                         " | ".join(f(v, ".2f") for v in vals) + " |")
    for ref, name in (("loop-none", "usrsctp loop"), ("tcp", "kernel TCP")):
        for kind in ("memif", "bridge"):
            vals = []
            for m in mtus:
                x = median(runs, kind, m, "bw", "gbps")
                y = median(runs, ref, m, "bw", "gbps")
                vals.append(x / y if x and y else None)
            lines.append(f"|   ratio sdp-perf {kind} / {name} | " +
                         " | ".join(f(v, ".2f") + "x" if v else "-"
                                    for v in vals) + " |")
    for key, label in (("latency_us_p50", "p50"), ("latency_us_p99", "p99")):
        for kind, name in KINDS:
            vals = [median(runs, kind, m, "lat", key) for m in mtus]
            if any(v is not None for v in vals):
                lines.append(f"| 8 B one-way {label} us, {name} | " +
                             " | ".join(f(v, ".2f") for v in vals) + " |")
    for kind in ("memif", "bridge"):
        vals = []
        for m in mtus:
            x = median(runs, kind, m, "lat", "latency_us_p50")
            y = median(runs, "tcp", m, "lat", "latency_us_p50")
            vals.append(x / y if x and y else None)
        lines.append(f"|   ratio p50 sdp-perf {kind} / kernel TCP | " +
                     " | ".join(f(v, ".2f") + "x" if v else "-"
                                for v in vals) + " |")
    return "\n".join(lines)


def targets(runs):
    out = []
    bw9 = median(runs, "memif", 9000, "bw", "gbps")
    bw15 = median(runs, "memif", 1500, "bw", "gbps")
    lat = median(runs, "memif", 1500, "lat", "latency_us_p50")
    tcp = median(runs, "tcp", 1500, "lat", "latency_us_p50")
    if bw9 is not None:
        out.append(("memif MTU 9000 bw >= 5 Gbit/s", f"{bw9:.2f}", bw9 >= 5))
    if bw15 is not None:
        out.append(("memif MTU 1500 bw >= 2.5 Gbit/s", f"{bw15:.2f}",
                    bw15 >= 2.5))
    if lat is not None and tcp is not None:
        out.append(("memif 8 B one-way p50 < kernel TCP veth",
                    f"{lat:.2f} vs {tcp:.2f} us", lat < tcp))
    return out


def plot(runs, mtus, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        if sys.executable != "/usr/bin/python3" and \
                os.access("/usr/bin/python3", os.X_OK):
            return "rerun"
        raise
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    w = 0.8 / len(KINDS)
    for i, (kind, name) in enumerate(KINDS):
        bw = [median(runs, kind, m, "bw", "gbps") or 0 for m in mtus]
        ax1.bar([x + i * w for x in range(len(mtus))], bw, w, label=name)
        lat = [median(runs, kind, m, "lat", "latency_us_p50") or 0
               for m in mtus]
        ax2.bar([x + i * w for x in range(len(mtus))], lat, w, label=name)
    for ax in (ax1, ax2):
        ax.set_xticks([x + w * (len(KINDS) - 1) / 2
                       for x in range(len(mtus))])
        ax.set_xticklabels([f"MTU {m}" for m in mtus])
    ax1.axhline(5, color="grey", ls="--", lw=0.8)
    ax1.axhline(2.5, color="grey", ls=":", lw=0.8)
    ax1.set_ylabel("goodput, 64 KiB messages (Gbit/s)")
    ax1.set_title("bandwidth (targets: 2.5 @1500, 5 @9000 memif)")
    ax2.set_ylabel("8 B one-way latency p50 (us)")
    ax2.set_title("latency (ping-pong RTT/2)")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return "ok"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--mtus", default="1500,9000")
    ap.add_argument("--bw-count", type=int, default=2048,
                    help="64 KiB messages per bw run (default 128 MiB)")
    ap.add_argument("--lat-count", type=int, default=20000)
    ap.add_argument("--json", help="write all runs here")
    ap.add_argument("--plot", help="write a PNG here")
    ap.add_argument("--from-json", help="redraw from a previous --json")
    a = ap.parse_args()
    a.mtus = [int(m) for m in a.mtus.split(",")]
    if os.geteuid() != 0 and not a.from_json:
        print("perf_vs_tcp: needs root (testbeds)")
        return 77
    if a.from_json:
        with open(a.from_json) as f:
            d = json.load(f)
        runs = [tuple(r) for r in d["runs"]]
        a.mtus = d["mtus"]
    else:
        sdp_launch.install_signal_handlers()
        t0 = time.time()
        runs = measure(a)
        d = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
             "host": platform.node(), "kernel": platform.release(),
             "nproc": os.cpu_count(), "mtus": a.mtus, "reps": a.reps,
             "seconds": round(time.time() - t0, 1),
             "runs": [list(r) for r in runs]}
        if a.json:
            with open(a.json, "w") as f:
                json.dump(d, f, indent=1)
    print(table(runs, a.mtus))
    print()
    for name, val, ok in targets(runs):
        print(f"target {name}: {val} -> {'met' if ok else 'NOT met'}")
    if a.plot:
        if plot(runs, a.mtus, a.plot) == "rerun":
            src = a.json or a.from_json
            if src is None:
                print("plot: no matplotlib here and no --json to redraw "
                      "from", file=sys.stderr)
                return 1
            subprocess.run(["/usr/bin/python3", os.path.abspath(__file__),
                            "--from-json", src, "--plot", a.plot],
                           check=True, stdout=subprocess.DEVNULL)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
