#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""perftest_vs_tcp.py - ucx_perftest over sctp_dpdk (memif pair) and over
UCX's tcp transport (a veth pair on the bridge testbed, kernel addresses),
the same cases in the same run, interleaved, medians and ratios.

  UCT: am_lat 8 B (-D short), am_bw 8 KiB (-D bcopy), put_bw 1 MiB (-D zcopy),
       get (bandwidth) 1 MiB (-D zcopy)
  UCP: tag_lat 8 B, tag_bw 1 MiB, ucp_put_bw 1 MiB

Both transports busy-poll (UCX_SCTP_DPDK_IDLE_SLEEP_US=0; tcp's progress
polls its sockets).  Every process has a deadline and is killed by PID;
the testbed and the memif directory are always removed.  Prints a table;
--json keeps every run.

  bench/perftest_vs_tcp.py [--reps 3] [--json FILE]
"""
import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("SDP_BUILD_DIR", os.path.join(ROOT, "build"))
LIB = os.path.join(BUILD, "ucx-tl", "libuct_sctp_dpdk.so")
TESTBED = os.path.join(ROOT, "apps", "sdp-testbed")
JOB = "ptc%d" % (os.getpid() % 100000)
RUN_DIR = "/run/sdp/" + JOB
PREFIXES = ["sdp-%s-r0" % JOB, "sdp-%s-r1" % JOB]
PORT = 21000 + os.getpid() % 20000
TIMEOUT_S = 120

# name, ucx_perftest args, UCP?, latency (else bandwidth)
CASES = [
    ("uct am_lat 8 B short", ["-t", "am_lat", "-D", "short", "-s", "8",
                              "-n", "20000"], False, True),
    ("uct am_bw 8 KiB bcopy", ["-t", "am_bw", "-D", "bcopy", "-s", "8192",
                               "-n", "2000"], False, False),
    ("uct put_bw 1 MiB zcopy", ["-t", "put_bw", "-D", "zcopy", "-s",
                                "1048576", "-n", "100"], False, False),
    ("ucp tag_lat 8 B", ["-t", "tag_lat", "-s", "8", "-n", "20000"], True,
     True),
    ("ucp tag_bw 1 MiB", ["-t", "tag_bw", "-s", "1048576", "-n", "100"],
     True, False),
    ("ucp put_bw 1 MiB", ["-t", "ucp_put_bw", "-s", "1048576", "-n", "100"],
     True, False),
    ("uct get_bw 1 MiB zcopy", ["-t", "get", "-D", "zcopy", "-s",
                                "1048576", "-n", "100"], False, False),
]
# UCX's tcp transport has no get_zcopy ("does not support operation get
# zcopy"): these cases run over sctp_dpdk only (compare with ucp tag_bw,
# whose default rendezvous is a GET)
SCTP_ONLY = {"uct get_bw 1 MiB zcopy"}


def final_line(out):
    """Final: iters p50 avg overall bw_avg bw_overall rate_avg rate_ov"""
    for line in out.splitlines():
        if line.startswith("Final:"):
            return [float(x) for x in line.split()[1:]]
    return None


def run_pair(srv_cmd, cli_cmd, env0, env1):
    procs = []
    try:
        srv = subprocess.Popen(srv_cmd, env=env0, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True,
                               start_new_session=True)
        procs.append(srv)
        time.sleep(0.5)
        cli = subprocess.Popen(cli_cmd, env=env1, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True,
                               start_new_session=True)
        procs.append(cli)
        out, _ = cli.communicate(timeout=TIMEOUT_S)
        srv.communicate(timeout=30)
        return final_line(out), out
    except subprocess.TimeoutExpired:
        return None, "timeout"
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


def memif_env(rank, ucp):
    role = "server" if rank == 0 else "client"
    env = dict(os.environ)
    env.update({
        "LD_PRELOAD": LIB,
        "UCX_SCTP_DPDK_DEVARGS": "net_memif0,role=%s,id=0,socket=%s/memif0"
                                 ".sock,socket-abstract=no" % (role, RUN_DIR),
        "UCX_SCTP_DPDK_IP": "10.77.1.%d/24" % (rank + 1),
        "UCX_SCTP_DPDK_PREFIX": PREFIXES[rank],
        "UCX_SCTP_DPDK_MTU": "9000",
        "UCX_SCTP_DPDK_LCORE": str(rank),
        "UCX_SCTP_DPDK_IDLE_SLEEP_US": "0",
    })
    if ucp:
        env["UCX_TLS"] = "sctp_dpdk,self"
    return env


def run_sctp(args, ucp):
    shutil.rmtree(RUN_DIR, ignore_errors=True)
    os.makedirs(RUN_DIR, mode=0o700)
    uct = [] if ucp else ["-d", "sdp0", "-x", "sctp_dpdk"]
    try:
        return run_pair(["ucx_perftest"] + uct + ["-p", str(PORT)],
                        ["ucx_perftest", "127.0.0.1", "-p", str(PORT)] +
                        uct + args, memif_env(0, ucp), memif_env(1, ucp))
    finally:
        shutil.rmtree(RUN_DIR, ignore_errors=True)
        for p in PREFIXES:
            shutil.rmtree("/var/run/dpdk/" + p, ignore_errors=True)


def run_tcp(tb, args, ucp):
    uct = [] if ucp else ["-d", tb["SDP_IF_0"], "-x", "tcp"]
    env = dict(os.environ)
    if ucp:
        env.update({"UCX_TLS": "tcp,self", "UCX_NET_DEVICES": "sdpnet0"})
    ns = [["ip", "netns", "exec", tb["SDP_NS_%d" % i]] for i in (0, 1)]
    return run_pair(ns[0] + ["ucx_perftest"] + uct + ["-p", str(PORT)],
                    ns[1] + ["ucx_perftest", tb["SDP_KERNEL_IP_0"], "-p",
                             str(PORT)] + uct + args, env, env)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--cases", default="",
                    help="regular expression: run only matching cases")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("perftest_vs_tcp: needs root (memif, namespaces)")
    if not os.path.isfile(LIB) or shutil.which("ucx_perftest") is None:
        sys.exit(f"perftest_vs_tcp: {LIB} or ucx_perftest missing: build "
                 "first (scripts/setup.sh), install ucx-utils")
    out = subprocess.run([TESTBED, "bridge", "up", "--job", JOB, "--hosts",
                          "2", "--mtu", "9000", "--kernel-ip"],
                         capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        sys.exit("perftest_vs_tcp: testbed failed: " + out.stderr[-2000:])
    tb = dict(l.split("=", 1) for l in out.stdout.splitlines() if "=" in l)
    runs = []
    # SIGTERM runs the finally below (testbed down) like ^C does
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    try:
        for rep in range(a.reps):
            for name, args, ucp, lat in CASES:
                if a.cases and not re.search(a.cases, name):
                    continue
                for tl in ("sctp_dpdk", "tcp"):
                    if tl == "tcp" and name in SCTP_ONLY:
                        continue
                    f, log = (run_sctp(args, ucp) if tl == "sctp_dpdk"
                              else run_tcp(tb, args, ucp))
                    v = None if f is None else (f[1] if lat else f[5])
                    runs.append({"rep": rep, "case": name, "tl": tl,
                                 "lat": lat, "value": v,
                                 "final": f,
                                 "log": None if f else log[-1500:]})
                    print(f"rep {rep} {name:24s} {tl:9s} "
                          f"{'FAILED' if v is None else round(v, 2)}",
                          file=sys.stderr, flush=True)
    finally:
        subprocess.run([TESTBED, "down", "--job", JOB, "--kill-procs"],
                       capture_output=True, timeout=120)
    print(f"\nucx_perftest, sctp_dpdk over memif vs tcp over veth, MTU 9000, "
          f"busy poll, median of {a.reps} interleaved runs")
    print(f"{'case':26s} {'sctp_dpdk':>12s} {'tcp':>12s} {'ratio':>8s}  "
          f"(latency us one way, p50; bandwidth MB/s)")
    for name, _, _, lat in CASES:
        vals = {}
        for tl in ("sctp_dpdk", "tcp"):
            v = [r["value"] for r in runs if r["case"] == name and
                 r["tl"] == tl and r["value"] is not None]
            vals[tl] = statistics.median(v) if v else None
        if vals["sctp_dpdk"] is None and vals["tcp"] is None:
            continue
        s, t = vals["sctp_dpdk"], vals["tcp"]
        ratio = f"{s / t:.2f}x" if s and t else "-"
        fmt = (lambda x: ("n/a" if name in SCTP_ONLY else "failed")
               if x is None else f"{x:.2f}")
        print(f"{name:26s} {fmt(s):>12s} {fmt(t):>12s} {ratio:>8s}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"runs": runs}, f, indent=1)
    return 0 if all(r["value"] is not None for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
