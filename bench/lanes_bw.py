#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""lanes_bw.py - UCP tag_bw over one memif pair with UCX_SCTP_DPDK_LANES=1
and 2, alternating runs, medians (issue 10.3).

  bench/lanes_bw.py --lib build/ucx-tl/libuct_sctp_dpdk.so \\
      [--runs 5] [--size 4194304] [--iters 40] [--lanes 1,2] \\
      [--env KEY=VALUE ...] [--json out.json]

Each run: ucx_perftest server + client (UCX_TLS=sctp_dpdk,self,
UCX_MAX_EAGER_RAILS=2, UCX_MAX_RNDV_RAILS=2), the client's "Final" MB/s;
the load average is printed with every run (the machine may be shared).
Every process has a deadline; the memif dir and /var/run/dpdk/<prefix>
are removed after each run.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

JOB = "lnbw%d" % os.getpid()
RUN_DIR = "/run/sdp/" + JOB
PREFIXES = ["sdp-%s-r0" % JOB, "sdp-%s-r1" % JOB]
TCP_PORT = 24000 + os.getpid() % 20000


def env_of(lib, rank, lanes, extra):
    role = "server" if rank == 0 else "client"
    env = dict(os.environ)
    env.update({
        "LD_PRELOAD": lib, "UCX_TLS": "sctp_dpdk,self",
        "UCX_SCTP_DPDK_DEVARGS": "net_memif0,role=%s,id=0,socket=%s/m0.sock,"
                                 "socket-abstract=no" % (role, RUN_DIR),
        "UCX_SCTP_DPDK_IP": "10.77.1.%d/24" % (rank + 1),
        "UCX_SCTP_DPDK_PREFIX": PREFIXES[rank],
        "UCX_SCTP_DPDK_LANES": str(lanes),
        "UCX_MAX_EAGER_RAILS": "2", "UCX_MAX_RNDV_RAILS": "2"})
    env.update(extra)
    return env


def cleanup(procs):
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait(timeout=10)
    shutil.rmtree(RUN_DIR, ignore_errors=True)
    for p in PREFIXES:
        shutil.rmtree("/var/run/dpdk/" + p, ignore_errors=True)


def run_once(a, lanes, extra):
    os.makedirs(RUN_DIR, mode=0o700, exist_ok=True)
    procs = []
    try:
        srv = subprocess.Popen(["ucx_perftest", "-p", str(TCP_PORT)],
                               env=env_of(a.lib, 0, lanes, extra),
                               stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
        procs.append(srv)
        time.sleep(0.5)
        cli = subprocess.Popen(["ucx_perftest", "127.0.0.1", "-p",
                                str(TCP_PORT), "-t", "tag_bw", "-s",
                                str(a.size), "-n", str(a.iters)],
                               env=env_of(a.lib, 1, lanes, extra),
                               stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
        procs.append(cli)
        out, _ = cli.communicate(timeout=300)
        srv.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        return None
    finally:
        cleanup(procs)
    m = [l for l in out.splitlines() if l.startswith("Final:")]
    return float(m[0].split()[6]) if m and cli.returncode == 0 else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--size", type=int, default=4 << 20)
    ap.add_argument("--iters", type=int, default=40)
    ap.add_argument("--lanes", default="1,2")
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--json")
    a = ap.parse_args()
    extra = dict(e.split("=", 1) for e in a.env)
    lanes = [int(x) for x in a.lanes.split(",")]
    res = {n: [] for n in lanes}
    loads = []
    for r in range(a.runs):
        for n in lanes:
            mbs = run_once(a, n, extra)
            load = os.getloadavg()[0]
            loads.append(load)
            res[n].append(mbs)
            print("run %d lanes %d: %s MB/s (load %.1f)" % (
                r, n, "FAILED" if mbs is None else "%.1f" % mbs, load),
                flush=True)
    summary = {}
    for n in lanes:
        ok = [x for x in res[n] if x is not None]
        summary[n] = statistics.median(ok) if ok else None
        print("lanes %d: median %s MB/s of %d runs %s" % (
            n, "%.1f" % summary[n] if ok else "-", len(ok), res[n]))
    print("load average during the runs: %.1f..%.1f" % (min(loads),
                                                       max(loads)))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"size": a.size, "iters": a.iters, "env": extra,
                       "runs": res, "median_mbs": summary,
                       "load": [min(loads), max(loads)]}, f, indent=1)
    return 0 if all(v is not None for v in summary.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
