#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""lanes_bw.py - UCP tag_bw over one memif pair with UCX_SCTP_DPDK_LANES=1
and 2, alternating runs, medians.

  bench/lanes_bw.py --lib build/ucx-tl/libuct_sctp_dpdk.so \\
      [--runs 5] [--size 4194304] [--iters 40] [--lanes 1,2] \\
      [--env KEY=VALUE ...] [--json out.json] [--thread] \\
      [--perf DIR]

--thread: UCX_SCTP_DPDK_PROGRESS=thread, so each lane is polled by a
thread of its own on its own queue pair, pinned from
POLL_LCORE=0 on (lane k on the k-th CPU after it).  Every run then
prints the receiver's per-lane counters from UCX_SCTP_DPDK_STATS: frames
per queue, polls of each lane's thread and the trylocks it lost to the
process-wide lock (lock_misses / (polls + lock_misses) = the share of its
attempts that found the lock taken).
--perf DIR: the server runs under `perf record -g`; DIR/lanes<N>-r<R>.data.

  bench/lanes_bw.py --sg build/bench/sdp-lanes-sg [--runs 5] \\
      [--seconds 5] [--size 8192] [--locks global,none] [--perf DIR]

--sg: the one-process experiment instead (bench/lanes_sg.c): both ends of
a memif pair in one process, lane k's both ends polled by thread k on CPU
k; 1 lane (global lock) against 2 lanes under each of --locks, runs
interleaved, median MB/s, per-lane lock wait share.

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
        "UCX_MAX_EAGER_RAILS": "2", "UCX_MAX_RNDV_RAILS": "2",
        "UCX_SCTP_DPDK_STATS": "y"})
    env.update(extra)
    return env


def lanes_stats(out):
    """The "lanes" member of the STATS line in @out, or None."""
    for line in out.splitlines():
        i = line.find("sctp_dpdk stats: ")
        if i >= 0:
            try:
                return json.loads(line[i + 17:]).get("lanes")
            except ValueError:
                return None
    return None


def cleanup(procs):
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait(timeout=10)
    shutil.rmtree(RUN_DIR, ignore_errors=True)
    for p in PREFIXES:
        shutil.rmtree("/var/run/dpdk/" + p, ignore_errors=True)


def run_once(a, lanes, extra, run):
    os.makedirs(RUN_DIR, mode=0o700, exist_ok=True)
    procs = []
    pre = []
    if a.perf:
        os.makedirs(a.perf, exist_ok=True)
        pre = ["perf", "record", "-g", "-q", "-o",
               os.path.join(a.perf, "lanes%d-r%d.data" % (lanes, run))]
    try:
        srv = subprocess.Popen(pre + ["ucx_perftest", "-p", str(TCP_PORT)],
                               env=env_of(a.lib, 0, lanes, extra),
                               stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
        procs.append(srv)
        time.sleep(2.0 if a.perf else 0.5) # perf starts slower
        cli = subprocess.Popen(["ucx_perftest", "127.0.0.1", "-p",
                                str(TCP_PORT), "-t", "tag_bw", "-s",
                                str(a.size), "-n", str(a.iters)],
                               env=env_of(a.lib, 1, lanes, extra),
                               stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
        procs.append(cli)
        out, _ = cli.communicate(timeout=300)
        sout, _ = srv.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        return None, None
    finally:
        cleanup(procs)
    m = [l for l in out.splitlines() if l.startswith("Final:")]
    mbs = float(m[0].split()[6]) if m and cli.returncode == 0 else None
    return mbs, lanes_stats(sout)


def sg_once(a, lanes, lock, run):
    argv = [a.sg, "--lanes", str(lanes), "--lock", lock, "--seconds",
            str(a.seconds), "--size", str(a.sg_size), "--cpu0", "0"]
    if a.perf:
        os.makedirs(a.perf, exist_ok=True)
        argv = ["perf", "record", "-g", "-q", "-o", os.path.join(
            a.perf, "sg-lanes%d-%s-r%d.data" % (lanes, lock, run))] + argv
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True,
                           timeout=a.seconds + 60)
    except subprocess.TimeoutExpired:
        return None
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            return r if r.get("verified") and p.returncode == 0 else None
    return None


def sg_main(a):
    configs = [(1, "global")] + [(2, l) for l in a.locks.split(",")]
    res = {"%d-%s" % c: [] for c in configs}
    loads = []
    for r in range(a.runs):
        for n, lock in configs:
            out = sg_once(a, n, lock, r)
            load = os.getloadavg()[0]
            loads.append(load)
            res["%d-%s" % (n, lock)].append(out)
            print("run %d lanes %d lock %s: %s (load %.1f)" % (
                r, n, lock, "FAILED" if out is None else
                "%.1f MB/s, per lane %s, lock wait share %s" % (
                    out["mbs"], [x["mbs"] for x in out["per_lane"]],
                    [x["lock_wait_share"] for x in out["per_lane"]]),
                load), flush=True)
    summary = {}
    for key, runs in res.items():
        ok = [x["mbs"] for x in runs if x is not None]
        summary[key] = statistics.median(ok) if ok else None
        waits = [statistics.median([x["per_lane"][k]["lock_wait_share"]
                                    for x in runs if x is not None])
                 for k in range(int(key.split("-")[0]))] if ok else []
        print("lanes %s: median %s MB/s of %d runs %s; median lock wait "
              "share per lane %s" % (
                  key, "%.1f" % summary[key] if ok else "-", len(ok),
                  ["%.1f" % x for x in ok], waits))
    print("load average during the runs: %.1f..%.1f" % (min(loads),
                                                       max(loads)))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"size": a.sg_size, "seconds": a.seconds,
                       "runs": res, "median_mbs": summary,
                       "load": [min(loads), max(loads)]}, f, indent=1)
    return 0 if all(v is not None for v in summary.values()) else 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib")
    ap.add_argument("--sg")
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--sg-size", type=int, default=8192)
    ap.add_argument("--locks", default="global,none")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--size", type=int, default=4 << 20)
    ap.add_argument("--iters", type=int, default=40)
    ap.add_argument("--lanes", default="1,2")
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--json")
    ap.add_argument("--thread", action="store_true")
    ap.add_argument("--perf")
    a = ap.parse_args()
    if a.sg:
        return sg_main(a)
    if not a.lib:
        ap.error("give --lib (ucx_perftest runs) or --sg (one process)")
    extra = dict(e.split("=", 1) for e in a.env)
    if a.thread:
        extra.setdefault("UCX_SCTP_DPDK_PROGRESS", "thread")
        extra.setdefault("UCX_SCTP_DPDK_POLL_LCORE", "0")
    lanes = [int(x) for x in a.lanes.split(",")]
    res = {n: [] for n in lanes}
    lstats = {n: [] for n in lanes}
    loads = []
    for r in range(a.runs):
        for n in lanes:
            mbs, ls = run_once(a, n, extra, r)
            load = os.getloadavg()[0]
            loads.append(load)
            res[n].append(mbs)
            lstats[n].append(ls)
            more = ""
            if ls:
                more = "; receiver rxq_pkts %s thread_polls %s " \
                    "lock_misses %s" % (ls.get("rxq_pkts"),
                                        ls.get("thread_polls"),
                                        ls.get("lock_misses"))
            print("run %d lanes %d: %s MB/s (load %.1f)%s" % (
                r, n, "FAILED" if mbs is None else "%.1f" % mbs, load,
                more), flush=True)
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
                       "receiver_lanes": lstats,
                       "load": [min(loads), max(loads)]}, f, indent=1)
    return 0 if all(v is not None for v in summary.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
