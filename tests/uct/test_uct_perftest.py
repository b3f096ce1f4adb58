#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""test_uct_perftest.py - the `sctp_dpdk` UCX transport between two processes.

Cases (each one a fresh memif pair under /run/sdp/<job>/, processes with
their own EAL prefixes sdp-<job>-r0/r1 and IPs 10.77.1.1/24 and .2/24):

  info          ucx_info -d (LD_PRELOAD) lists transport sctp_dpdk, device sdp0
  uct-*         ucx_perftest UCT level: am_lat and am_bw with -D short,
                bcopy and zcopy (server: -d sdp0 -x sctp_dpdk -p PORT)
  ucp-*         UCX_TLS=sctp_dpdk,self ucx_perftest: tag_lat 8 B and 16 MiB,
                tag_bw 64 KiB, 1 MiB and 16 MiB
  uct-put_*/get-*  RMA (sctp_dpdk_rma.c): put_lat -D short, put_bw -D short/
                bcopy/zcopy (zcopy 1 MiB and 16 MiB: split into messages),
                get (bandwidth) -D bcopy/zcopy
  ucp-put/get   ucp_put_lat, ucp_put_bw and ucp_get 1 MiB over the RMA path
(Peer failure is tested in test_uct_cycles.c (uct-cycles): ucx_perftest's
UCT mode has no error handler and only logs failed sends.)

Every process has a deadline and is killed by PID in cleanup; the memif dir
and /var/run/dpdk/<prefix> are removed even on failure.  Prints one line
per case with the measured figures and "N passed, M failed".
Environment: SDP_UCT_LIB = path of libuct_sctp_dpdk.so; SDP_PERFTEST_CASES
= a regular expression to run only the matching cases.  Exit 77 (skip)
when not root or ucx_perftest is missing.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import time

LIB = os.environ.get("SDP_UCT_LIB", "")
JOB = "uctp%d" % os.getpid()
RUN_DIR = "/run/sdp/" + JOB
PREFIXES = ["sdp-%s-r0" % JOB, "sdp-%s-r1" % JOB]
TCP_PORT = 20000 + os.getpid() % 20000
CASE_TIMEOUT = 120

from uct_procs import finish, kill_all  # noqa: E402
from uct_procs import report as _report, tail as _tail  # noqa: E402
from uct_procs import results, start  # noqa: E402
from uct_procs import remove_dirs  # noqa: E402


def env_for(rank, extra=None):
    sock = RUN_DIR + "/memif0.sock"
    role = "server" if rank == 0 else "client"
    env = dict(os.environ)
    env.update({
        "LD_PRELOAD": LIB,
        "UCX_SCTP_DPDK_DEVARGS": "net_memif0,role=%s,id=0,socket=%s,"
                                 "socket-abstract=no" % (role, sock),
        "UCX_SCTP_DPDK_IP": "10.77.1.%d/24" % (rank + 1),
        "UCX_SCTP_DPDK_PREFIX": PREFIXES[rank],
        "UCX_SCTP_DPDK_IDLE_SLEEP_US": "20",
    })
    env.update(extra or {})
    return env


def cleanup_dirs():
    remove_dirs(RUN_DIR, PREFIXES)


def final_line(out):
    """Final: iters p50 avg overall bw_avg bw_overall rate_avg rate_ov"""
    for line in out.splitlines():
        if line.startswith("Final:"):
            return [float(x) for x in line.split()[1:]]
    return None


def pair(server_argv, client_argv, extra_env=None):
    """Run a perftest pair; return (ok, client output, server output)."""
    cleanup_dirs()
    os.makedirs(RUN_DIR, mode=0o700)
    deadline = time.time() + CASE_TIMEOUT
    srv = start(server_argv, env_for(0, extra_env))
    time.sleep(0.3)
    cli = start(client_argv, env_for(1, extra_env))
    crc, cout = finish(cli, deadline)
    src, sout = finish(srv, deadline)
    kill_all()
    cleanup_dirs()
    return crc, src, cout, sout


def perftest(args, ucp=False, extra_env=None):
    base = ["ucx_perftest"]
    uct = [] if ucp else ["-d", "sdp0", "-x", "sctp_dpdk"]
    env = dict(extra_env or {})
    if ucp:
        env["UCX_TLS"] = "sctp_dpdk,self"
    server = base + uct + ["-p", str(TCP_PORT)]
    client = base + ["127.0.0.1", "-p", str(TCP_PORT)] + uct + args
    return pair(server, client, env)


def report(name, ok, detail):
    _report(name, ok, detail, width=22)


def tail(out, n=6):
    return _tail(out, n)


def case_info():
    env = dict(os.environ, LD_PRELOAD=LIB)
    out = subprocess.run(["ucx_info", "-d"], env=env, capture_output=True,
                         text=True, timeout=60).stdout
    ok = re.search(r"Transport: sctp_dpdk\s*\n#\s*Device: sdp0", out) \
        is not None
    m = re.search(r"Transport: sctp_dpdk.*?am_short: ([^\n]*)", out, re.S)
    report("info", ok, "am_short " + (m.group(1) if m else "missing"))


def selected(name):
    pat = os.environ.get("SDP_PERFTEST_CASES", "")
    return not pat or re.search(pat, name) is not None


def case_perf(name, args, ucp=False, lat=True):
    if not selected(name):
        return
    crc, src, cout, sout = perftest(args, ucp)
    f = final_line(cout)
    ok = crc == 0 and src == 0 and f is not None
    if not ok:
        detail = "client rc %s server rc %s: %s" % (crc, src, tail(cout))
    elif lat:
        detail = "latency p50 %.2f us avg %.2f us (one way)" % (f[1], f[2])
    else:
        detail = "bandwidth %.1f MB/s, %.0f msg/s" % (f[5], f[7])
    report(name, ok, detail)


def main():
    if os.geteuid() != 0:
        print("SKIP: needs root")
        return 77
    if shutil.which("ucx_perftest") is None or not os.path.isfile(LIB):
        print("SKIP: ucx_perftest or SDP_UCT_LIB (%s) missing" % LIB)
        return 77
    try:
        if selected("info"):
            case_info()
        for d in ("short", "bcopy", "zcopy"):
            case_perf("uct-am_lat-" + d, ["-t", "am_lat", "-D", d,
                                          "-n", "20000"])
        for d, s in (("short", "1024"), ("bcopy", "65000"),
                     ("zcopy", "65000")):
            case_perf("uct-am_bw-%s-%s" % (d, s),
                      ["-t", "am_bw", "-D", d, "-s", s, "-n", "20000"],
                      lat=False)
        case_perf("ucp-tag_lat-8", ["-t", "tag_lat", "-s", "8",
                                    "-n", "20000"], ucp=True)
        case_perf("ucp-tag_lat-16M", ["-t", "tag_lat", "-s", "16777216",
                                      "-n", "10"], ucp=True)
        for s, n in (("65536", "5000"), ("1048576", "500"),
                     ("16777216", "20")):
            case_perf("ucp-tag_bw-" + s, ["-t", "tag_bw", "-s", s,
                                          "-n", n], ucp=True, lat=False)
        # RMA (put/get emulated over SCTP messages)
        case_perf("uct-put_lat-short", ["-t", "put_lat", "-D", "short",
                                        "-s", "8", "-n", "20000"])
        for d, s, n in (("short", "1024", "20000"), ("bcopy", "65000", "5000"),
                        ("zcopy", "65000", "5000"),
                        ("zcopy", "1048576", "300"),
                        ("zcopy", "16777216", "20")):
            case_perf("uct-put_bw-%s-%s" % (d, s),
                      ["-t", "put_bw", "-D", d, "-s", s, "-n", n], lat=False)
        for d, s, n in (("bcopy", "65000", "2000"),
                        ("zcopy", "1048576", "200")):
            case_perf("uct-get-%s-%s" % (d, s),
                      ["-t", "get", "-D", d, "-s", s, "-n", n], lat=False)
        case_perf("ucp-put_lat-8", ["-t", "ucp_put_lat", "-s", "8",
                                    "-n", "10000"], ucp=True)
        case_perf("ucp-put_bw-1M", ["-t", "ucp_put_bw", "-s", "1048576",
                                    "-n", "300"], ucp=True, lat=False)
        case_perf("ucp-get-1M", ["-t", "ucp_get", "-s", "1048576",
                                 "-n", "300"], ucp=True, lat=False)
    finally:
        kill_all()
        cleanup_dirs()
    passed = sum(1 for r in results if r)
    failed = len(results) - passed
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(1))
    sys.exit(main())
