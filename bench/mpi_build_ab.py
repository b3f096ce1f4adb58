#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""mpi_build_ab.py - the same sdp-mpi-compare sweep over two builds of the
transport, interleaved (A B, B A, A B, ...), one sweep per build and
round, with the load average before each: on a shared machine only
interleaved runs compare, and only medians.

  bench/mpi_build_ab.py --build base=<build dir> --build new=<build dir>
      [--rounds 3] [--jsonl FILE] -- <sdp-mpi-compare arguments>

e.g. -- --mpi mpich --min-size 1048576 --max-size 1048576.  Each round
runs apps/sdp-mpi-compare (this checkout's) with SDP_BUILD_DIR set to the
build, --reps 1 and its --json; every run is appended to --jsonl with the
build's name, the round and the load averages.  Prints, per build, the
median over the rounds of each fabric's bandwidth (and of tcp's, which
runs in every sweep) for every size.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
COMPARE = os.path.join(os.path.dirname(HERE), "apps", "sdp-mpi-compare")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build", action="append", required=True,
                    help="NAME=BUILD_DIR (twice)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--jsonl")
    ap.add_argument("rest", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    builds = []
    for b in a.build:
        name, _, path = b.partition("=")
        if not name or not os.path.isdir(path):
            ap.error(f"--build {b!r}: use NAME=BUILD_DIR (an existing "
                     "build directory)")
        builds.append((name, os.path.abspath(path)))
    rest = [x for x in a.rest if x != "--"]
    res = {name: [] for name, _ in builds}
    for rnd in range(a.rounds):
        order = builds if rnd % 2 == 0 else builds[::-1]
        for name, path in order:
            with tempfile.NamedTemporaryFile(suffix=".json") as tmp:
                load0 = os.getloadavg()
                t0 = time.time()
                cmd = [COMPARE] + rest + ["--reps", "1", "--json", tmp.name]
                r = subprocess.run(cmd, env=dict(os.environ,
                                                 SDP_BUILD_DIR=path),
                                   capture_output=True, text=True)
                load1 = os.getloadavg()
                if r.returncode != 0:
                    print(f"{name} round {rnd + 1}: rc {r.returncode}\n"
                          f"{r.stdout[-1500:]}{r.stderr[-1500:]}",
                          file=sys.stderr)
                    continue
                with open(tmp.name) as f:
                    d = json.load(f)
            row = {"build": name, "round": rnd + 1,
                   "start": time.strftime("%H:%M:%S", time.gmtime(t0)),
                   "seconds": round(time.time() - t0, 1),
                   "loadavg_before": load0, "loadavg_after": load1,
                   "args": rest, "sctp_dpdk": d["sctp_dpdk"],
                   "tcp": d["tcp"]}
            res[name].append(row)
            brief = {f: {s: v["bw_mbps"] for s, v in x.items()}
                     for f, x in d["sctp_dpdk"].items()}
            brief["tcp"] = {s: v["bw_mbps"] for s, v in d["tcp"].items()}
            print(f"{name} round {rnd + 1} (load {load0[0]:.1f}): "
                  f"MB/s {brief}", flush=True)
            if a.jsonl:
                with open(a.jsonl, "a") as f:
                    f.write(json.dumps(row) + "\n")
    print("\nmedians over the rounds (MB/s):")
    for name, rows in res.items():
        if not rows:
            print(f"  {name}: no run succeeded")
            continue
        fabrics = list(rows[0]["sctp_dpdk"]) + ["tcp"]
        for fab in fabrics:
            per = {}
            for row in rows:
                src = row["tcp"] if fab == "tcp" else row["sctp_dpdk"][fab]
                for s, v in src.items():
                    per.setdefault(s, []).append(v["bw_mbps"])
            for s, v in sorted(per.items(), key=lambda x: int(x[0])):
                print(f"  {name:>8} {fab:>7} {s:>8} B: "
                      f"{statistics.median(v):8.1f} (runs "
                      f"{', '.join(f'{x:.0f}' for x in v)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
