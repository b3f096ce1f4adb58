#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""usrsctp_build.py - what the build of usrsctp and its allocator are worth.

The usrsctp loop (bench/sctp_loop.c: two AF_CONN sockets in ONE process,
ISA-L CRC32c, 64 KiB messages for bandwidth, 8 B ping-pong for latency),
interleaved repetitions in one run, median, for each build:

  debian        Debian's libusrsctp2 (compiled at -O0), glibc malloc
  O2            Debian's source built optimised (setup-usrsctp.sh), glibc
  O2+preload    the same with Debian's libmimalloc2.0 preloaded: mimalloc
                becomes the allocator of the WHOLE process (what an MPI
                application would get if we shipped it that way)
  O2+mi         the project's build: only usrsctp's malloc/calloc/free
                renamed to mimalloc's mi_ API (static, non-overriding
                mimalloc); the application keeps glibc's malloc

  bench/usrsctp_build.py --json bench/results/usrsctp_build.json \\
      --plot docs/img/usrsctp_build.png
  bench/usrsctp_build.py --callgrind    # instructions per message instead

--callgrind counts instructions under valgrind (repeatable on a loaded
machine, blind to page faults and cache misses): each variant runs 128 and
256 messages and the difference / 128 is the cost of one 64 KiB message
(bandwidth test) or one 8 B exchange (latency test), set-up excluded.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

BIN = os.environ.get("SDP_BENCH_BIN_DIR", os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build",
    "bench"))
PRELOAD_MI = "/usr/lib/x86_64-linux-gnu/libmimalloc.so.2"


def variants():
    v = []
    if os.access(os.path.join(BIN, "sctp-loop-ep-debian"), os.X_OK):
        v.append(("debian", "sctp-loop-ep-debian", None))
    v.append(("O2", "sctp-loop-ep-libc", None))
    if os.path.exists(PRELOAD_MI):
        v.append(("O2+preload", "sctp-loop-ep-libc", PRELOAD_MI))
    v.append(("O2+mi", "sctp-loop-ep", None))
    return v


def loop(exe, preload, test, pathmtu, count):
    env = dict(os.environ)
    if preload:
        env["LD_PRELOAD"] = preload
    size = "8" if test == "lat" else "65536"
    r = subprocess.run([os.path.join(BIN, exe), "--test", test, "--size",
                        size, "--count", str(count), "--pathmtu",
                        str(pathmtu), "--crc", "isal"],
                       capture_output=True, text=True, timeout=600, env=env)
    rows = [json.loads(l) for l in r.stdout.splitlines()
            if l.startswith("{")]
    if r.returncode != 0 or not rows or not rows[-1]["verified"]:
        raise RuntimeError(f"{exe} {test} mtu {pathmtu}: rc "
                           f"{r.returncode}\n{r.stderr[-2000:]}")
    return rows[-1]


def instructions(exe, preload, test, pathmtu, count):
    env = dict(os.environ)
    if preload:
        env["LD_PRELOAD"] = preload
    size = "8" if test == "lat" else "65536"
    r = subprocess.run(["valgrind", "--tool=callgrind",
                        "--callgrind-out-file=/dev/null",
                        os.path.join(BIN, exe), "--test", test, "--size",
                        size, "--count", str(count), "--pathmtu",
                        str(pathmtu), "--crc", "isal"],
                       capture_output=True, text=True, timeout=1200, env=env)
    for line in r.stderr.splitlines():
        if "Collected :" in line:
            return int(line.split(":")[-1])
    raise RuntimeError(f"{exe} under callgrind: rc {r.returncode}\n"
                       f"{r.stderr[-2000:]}")


def callgrind_table(vs):
    print("usrsctp loop under callgrind: instructions per 64 KiB message "
          "(bw) and per 8 B exchange (lat), set-up excluded")
    print(f"{'build':<11} | {'bw MTU 1500':>11} | {'bw MTU 9000':>11} | "
          f"{'lat':>9}")
    table = {}
    for name, exe, pre in vs:
        row = {}
        for key, test, pmtu in (("bw_1500", "bw", 1488),
                                ("bw_9000", "bw", 8988),
                                ("lat", "lat", 1488)):
            a = instructions(exe, pre, test, pmtu, 128)
            b = instructions(exe, pre, test, pmtu, 256)
            row[key] = (b - a) / 128
        table[name] = row
        print(f"{name:<11} | {row['bw_1500']:>11.0f} | "
              f"{row['bw_9000']:>11.0f} | {row['lat']:>9.0f}")
    return table


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--bw-count", type=int, default=4096)
    ap.add_argument("--lat-count", type=int, default=20000)
    ap.add_argument("--json")
    ap.add_argument("--plot")
    ap.add_argument("--from-json", help="print and plot a previous --json")
    ap.add_argument("--callgrind", action="store_true",
                    help="count instructions instead of timing")
    a = ap.parse_args()
    if a.callgrind:
        table = callgrind_table(variants())
        if a.json:
            with open(a.json, "w") as f:
                json.dump({"callgrind": table, "command": " ".join(
                    ["bench/usrsctp_build.py"] + sys.argv[1:])}, f, indent=1)
        return 0
    if a.from_json:
        with open(a.from_json) as f:
            d = json.load(f)
        runs = d["runs"]
        names = list(d["table"])
        vs = [(n, None, None) for n in names]
        a.reps = max(r["rep"] for r in runs) + 1
        a.json = None
    else:
        vs = variants()
        runs = None
    # path MTU = link MTU - 12 (IPv4 + SCTP-over-nothing: our framing)
    cases = [("bw", 1488), ("bw", 8988), ("lat", 1488)]
    for rep in range(a.reps if runs is None else 0):
        for test, pmtu in cases:
            for name, exe, pre in vs:
                r = loop(exe, pre, test, pmtu,
                         a.bw_count if test == "bw" else a.lat_count)
                r.update(variant=name, rep=rep)
                runs = (runs or []) + [r]

    def med(name, test, pmtu, key):
        xs = [r[key] for r in runs if r["variant"] == name and
              r["test"] == test and r["pathmtu"] == pmtu]
        return statistics.median(xs) if xs else None

    base = "debian" if any(n == "debian" for n, _, _ in vs) else "O2"
    print(f"usrsctp loop, one process, median of {a.reps} interleaved runs "
          f"(ratios against {base})")
    print(f"{'build':<11} | {'Gbit/s MTU 1500':>15} {'x':>5} | "
          f"{'Gbit/s MTU 9000':>15} {'x':>5} | {'8 B one-way us':>14} "
          f"{'x':>5}")
    table = {}
    for name, _, _ in vs:
        b15 = med(name, "bw", 1488, "gbps")
        b90 = med(name, "bw", 8988, "gbps")
        lat = med(name, "lat", 1488, "latency_us_p50")
        table[name] = {"gbps_1500": b15, "gbps_9000": b90, "lat_us": lat}
        r15 = b15 / med(base, "bw", 1488, "gbps")
        r90 = b90 / med(base, "bw", 8988, "gbps")
        rl = lat / med(base, "lat", 1488, "latency_us_p50")
        print(f"{name:<11} | {b15:>15.2f} {r15:>5.2f} | {b90:>15.2f} "
              f"{r90:>5.2f} | {lat:>14.2f} {rl:>5.2f}")
    if a.json:
        os.makedirs(os.path.dirname(os.path.abspath(a.json)), exist_ok=True)
        with open(a.json, "w") as f:
            json.dump({"table": table, "runs": runs,
                       "command": " ".join(["bench/usrsctp_build.py"] +
                                           sys.argv[1:])}, f, indent=1)
    if a.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        names = [n for n, _, _ in vs]
        fig, ax = plt.subplots(1, 2, figsize=(11, 3.8))
        w = 0.38
        xs = range(len(names))
        ax[0].bar([x - w / 2 for x in xs],
                  [table[n]["gbps_1500"] for n in names], w, label="MTU 1500")
        ax[0].bar([x + w / 2 for x in xs],
                  [table[n]["gbps_9000"] for n in names], w, label="MTU 9000")
        ax[0].set_ylabel("Gbit/s (64 KiB messages)")
        ax[0].legend()
        ax[1].bar(list(xs), [table[n]["lat_us"] for n in names], 0.5,
                  color="tab:gray")
        ax[1].set_ylabel("8 B one-way latency p50 (us)")
        for x_ in ax:
            x_.set_xticks(list(xs))
            x_.set_xticklabels(names)
        ax[0].set_title("usrsctp loop: build and allocator")
        fig.tight_layout()
        fig.savefig(a.plot, dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
