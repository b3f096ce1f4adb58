#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""test_uct_lanes.py - several associations per peer on ONE port
(UCX_SCTP_DPDK_LANES): the device reports dev_num_paths =
LANES, UCP opens one lane per path, and lane k is an SCTP endpoint of its
own on SCTP_PORT + k (its own association to the peer's lane k).

Two processes joined by one memif pair (/run/sdp/<job>/m0.sock).  Cases:

  config      ucx_info -d (net_null port) with LANES=2 shows "device num
              paths: 2" for sdp0; LANES=0, LANES=9, LANES=2 with two
              ports in DEVARGS are refused naming UCX_SCTP_DPDK_LANES
  mismatch    server LANES=2, client LANES=1: the peer's iface address
              carries its LANES, refused naming UCX_SCTP_DPDK_LANES
  ucp-1lane   ucx_perftest UCP tag_bw 4 MiB x 40 with LANES=1: ep config
              has ONE sctp_dpdk lane and the STATS line no "lanes" member;
              the 2-lane predicate below is evaluated on it and must be
              false (the check can fail)
  ucp-2lanes  the same with LANES=2, UCX_MAX_EAGER_RAILS=2,
              UCX_MAX_RNDV_RAILS=2: the client's ep_cfg tag lanes name
              sctp_dpdk/sdp0 twice; both processes' STATS say "lanes":
              {"n": 2, "sctp_ports": [P, P+1], "peers": [1, 1]} and the
              receiver's messages per lane are each >= a quarter of all
  ucp-thread  ucp-2lanes with PROGRESS=thread; and the queue check below
  queues      (in ucp-2lanes, ucp-thread, mpi-*): the port has 2 queue
              pairs and lane k's frames arrive on queue k: every queue
              received frames (STATS lanes.rxq_pkts), no DATA packet of
              lane j came in on another queue (rx_data_wrong_queue 0);
              with PROGRESS=thread each lane's own poll thread ran
              (thread_polls > 0 each), inline none did
  config      + LANES=2 on an af_packet port is refused naming
              UCX_SCTP_DPDK_LANES (its queues cannot be mapped)
  mpi-mpich-thread  mpi-mpich with PROGRESS=thread (one poll thread per
              lane), every byte checked
  mpi-openmpi Open MPI (pml ucx) and MPICH (ch4:ucx) ping-pong 0 B..16 MiB
  mpi-mpich   with LANES=2 (tests/mpi/mpi_check.c checks every byte): both
              lanes of both ranks received messages

Every process has a deadline and is killed by PID in cleanup; the memif dir
and /var/run/dpdk/<prefix> are removed even on failure.  Environment:
SDP_UCT_LIB = libuct_sctp_dpdk.so, SDP_MPI_CHECK = mpi_check_openmpi,
SDP_MPI_CHECK_MPICH = mpi_check_mpich (a case fails when its program is
missing).  Exit 77 (skip) when not root.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time

LIB = os.environ.get("SDP_UCT_LIB", "")
MPI_CHECK = os.environ.get("SDP_MPI_CHECK", "")
MPI_CHECK_MPICH = os.environ.get("SDP_MPI_CHECK_MPICH", "")
JOB = "uctln%d" % os.getpid()
RUN_DIR = "/run/sdp/" + JOB
PREFIXES = ["sdp-%s-r0" % JOB, "sdp-%s-r1" % JOB]
TCP_PORT = 22000 + os.getpid() % 20000
SCTP_PORT = 5000
CASE_TIMEOUT = 300

from uct_procs import finish, kill_all, remove_dirs, report, tail  # noqa: E402
from uct_procs import results  # noqa: E402
from uct_procs import start as _start  # noqa: E402


def rank_env(rank, lanes, extra=None):
    role = "server" if rank == 0 else "client"
    env = {
        "LD_PRELOAD": LIB,
        "UCX_TLS": "sctp_dpdk,self",
        "UCX_SCTP_DPDK_DEVARGS": "net_memif0,role=%s,id=0,socket=%s/m0.sock,"
                                 "socket-abstract=no" % (role, RUN_DIR),
        "UCX_SCTP_DPDK_IP": "10.77.1.%d/24" % (rank + 1),
        "UCX_SCTP_DPDK_PREFIX": PREFIXES[rank],
        "UCX_SCTP_DPDK_IDLE_SLEEP_US": "20",
        "UCX_SCTP_DPDK_STATS": "y",
        "UCX_SCTP_DPDK_LANES": str(lanes),
        "UCX_MAX_EAGER_RAILS": "2",
        "UCX_MAX_RNDV_RAILS": "2",
    }
    env.update(extra or {})
    return env


def cleanup():
    kill_all()
    remove_dirs(RUN_DIR, PREFIXES + ["sdp-%s-info" % JOB])


def start(argv, env):
    return _start(argv, env, base=os.environ)


def stats(out):
    """The STATS lines of one output, parsed: [{...}]."""
    res = []
    for line in out.splitlines():
        i = line.find("sctp_dpdk stats: ")
        if i >= 0:
            try:
                res.append(json.loads(line[i + len("sctp_dpdk stats: "):]))
            except ValueError:
                pass
    return res


def two_lanes(st, receiver_msgs=None):
    """The 2-lane predicate on one process's STATS: (ok, why)."""
    if len(st) != 1:
        return False, "%d STATS lines" % len(st)
    ln = st[0].get("lanes")
    if ln is None:
        return False, "no \"lanes\" in STATS"
    if ln.get("n") != 2 or ln.get("sctp_ports") != [SCTP_PORT,
                                                      SCTP_PORT + 1]:
        return False, "lanes %s" % ln
    if ln.get("peers") != [1, 1]:
        return False, "peers per lane %s (want [1, 1])" % ln.get("peers")
    rx = ln.get("rx_msgs", [])
    if receiver_msgs is not None and \
            not all(n >= receiver_msgs // 4 for n in rx):
        return False, "rx_msgs per lane %s (each must be >= %d)" % (
            rx, receiver_msgs // 4)
    if receiver_msgs is None and not all(n > 0 for n in rx):
        return False, "rx_msgs per lane %s (each must be > 0)" % rx
    return True, "lanes %s" % ln


def queue_lanes(st, thread):
    """Lane k on queue k, on one process's STATS: (ok, why)."""
    if len(st) != 1 or "lanes" not in st[0]:
        return False, "no lanes in STATS"
    ln = st[0]["lanes"]
    rxq, polls = ln.get("rxq_pkts", []), ln.get("thread_polls", [])
    wrong = ln.get("rx_data_wrong_queue")
    why = "queues %s rxq_pkts %s thread_polls %s rx_data_wrong_queue %s" % (
        ln.get("queues"), rxq, polls, wrong)
    if ln.get("queues") != 2 or len(rxq) != 2 or not all(n > 0 for n in rxq):
        return False, why
    if wrong != 0:
        return False, why
    if thread and not (len(polls) == 2 and all(n > 0 for n in polls)):
        return False, why
    if not thread and polls != [0, 0]:
        return False, why
    return True, why


def config_case():
    base = {"LD_PRELOAD": LIB,
            "UCX_SCTP_DPDK_DEVARGS": "net_null0",
            "UCX_SCTP_DPDK_IP": "10.77.1.1/24",
            "UCX_SCTP_DPDK_PREFIX": "sdp-%s-info" % JOB}
    runs = [
        ({"UCX_SCTP_DPDK_LANES": "2"},
         r"Transport: sctp_dpdk\s*\n#\s*Device: sdp0(.*\n)*?"
         r"#\s*device num paths: 2\n"),
        ({"UCX_SCTP_DPDK_LANES": "0"}, r"UCX_SCTP_DPDK_LANES=0 is out of "
         r"range: give 1\.\.8"),
        ({"UCX_SCTP_DPDK_LANES": "9"}, r"UCX_SCTP_DPDK_LANES=9 is out of "
         r"range"),
        ({"UCX_SCTP_DPDK_LANES": "2",
          "UCX_SCTP_DPDK_DEVARGS": "net_null0;net_null1",
          "UCX_SCTP_DPDK_IP": "10.77.1.1/24;10.77.2.1/24"},
         r"UCX_SCTP_DPDK_LANES=2 needs one port, UCX_SCTP_DPDK_DEVARGS "
         r"lists 2"),
        ({"UCX_SCTP_DPDK_LANES": "2",
          "UCX_SCTP_DPDK_DEVARGS": "net_af_packet0,iface=lo"},
         r"UCX_SCTP_DPDK_LANES=2 puts lane k on queue k of the port, and "
         r"net_af_packet0,iface=lo cannot steer .*kernel fanout.*use a "
         r"memif port"),
    ]
    for extra, want in runs:
        env = dict(base)
        env.update(extra)
        p = start(["ucx_info", "-d"], env)
        rc, out = finish(p, time.time() + 120)
        cleanup()
        ok = re.search(want, out) is not None
        report("config", ok, "LANES=%s%s -> %s" % (
            extra["UCX_SCTP_DPDK_LANES"],
            " (2 ports)" if ";" in env["UCX_SCTP_DPDK_DEVARGS"] else "",
            ("ucx_info: device num paths: 2" if "num paths" in want else
             "refused naming it") if ok else tail(out)))


def perftest(lanes, extra, server_lanes=None, timeout=CASE_TIMEOUT):
    cleanup()
    os.makedirs(RUN_DIR, mode=0o700)
    deadline = time.time() + timeout
    size, iters = 4 << 20, 40
    srv = start(["ucx_perftest", "-p", str(TCP_PORT)],
                rank_env(0, server_lanes or lanes, extra))
    time.sleep(0.5)
    cli = start(["ucx_perftest", "127.0.0.1", "-p", str(TCP_PORT), "-t",
                 "tag_bw", "-s", str(size), "-n", str(iters)],
                rank_env(1, lanes, dict(extra, UCX_LOG_LEVEL="info")))
    crc, cout = finish(cli, deadline)
    src, sout = finish(srv, deadline)
    cleanup()
    m = re.search(r"ep_cfg\[\d+\]: tag\(([^)]*)\)", cout)
    tag_lanes = m.group(1).split() if m else []
    final = [l for l in cout.splitlines() if l.startswith("Final:")]
    ran = crc == 0 and src == 0 and bool(final)
    mbs = final[0].split()[6] + " MB/s" if final else tail(cout + sout)
    if server_lanes is not None:
        return ran, cout + sout
    return ran, tag_lanes, stats(cout), stats(sout), mbs


def mismatch_case():
    """Server LANES=2, client LANES=1: refused naming the variable."""
    ran, out = perftest(1, {}, server_lanes=2, timeout=90)
    want = r"has UCX_SCTP_DPDK_LANES=[12], this process [12]: set the " \
        r"same value on every process"
    ok = not ran and re.search(want, out) is not None
    report("mismatch", ok, "LANES 2 vs 1: %s" % (
        "refused naming UCX_SCTP_DPDK_LANES" if ok else
        ("perftest ran" if ran else tail(out))))


def ucp_one_lane():
    ran, tag_lanes, cst, sst, mbs = perftest(1, {})
    one = tag_lanes.count("sctp_dpdk/sdp0") == 1
    # The receiver (server) holds the rx counters of the data.
    pred, why = two_lanes(sst)
    ok = ran and one and not pred
    report("ucp-1lane", ok, "tag lanes %s, %s; 2-lane check on it: %s "
           "(%s)" % (tag_lanes, mbs, "false as it must be" if not pred
                     else "TRUE: the check cannot fail", why))


def ucp_two_lanes(name, extra):
    ran, tag_lanes, cst, sst, mbs = perftest(2, extra)
    two = tag_lanes.count("sctp_dpdk/sdp0") == 2
    cok, cwhy = two_lanes(cst)
    # GET replies of the rendezvous: one per SEG_SIZE segment, striped
    sok, swhy = two_lanes(sst, sum(sst[0].get("lanes", {}).get(
        "rx_msgs", [0])) if len(sst) == 1 else 0)
    thread = extra.get("UCX_SCTP_DPDK_PROGRESS") == "thread"
    cq, cqwhy = queue_lanes(cst, thread)
    sq, sqwhy = queue_lanes(sst, thread)
    ok = ran and two and cok and sok and cq and sq
    report(name, ok, "tag lanes %s, %s; client %s; server %s; client %s; "
           "server %s%s" % (tag_lanes, mbs, cwhy, swhy, cqwhy, sqwhy,
                            "" if ran else ": perftest failed"))


def mpi_case(impl, prog, extra=None, suffix=""):
    name = "mpi-" + impl + suffix
    extra = extra or {}
    thread = extra.get("UCX_SCTP_DPDK_PROGRESS") == "thread"
    cleanup()
    if not prog or not os.access(prog, os.X_OK):
        report(name, False, "mpi_check_%s not found (SDP_MPI_CHECK%s): "
               "build with %s installed" % (
                   impl, "" if impl == "openmpi" else "_MPICH", impl))
        return
    os.makedirs(RUN_DIR, mode=0o700)
    if impl == "openmpi":
        argv = ["mpirun", "--allow-run-as-root", "--oversubscribe",
                "--bind-to", "none", "--mca", "pml", "ucx",
                "--mca", "pml_ucx_tls", "any",
                "--mca", "pml_ucx_devices", "any",
                "--mca", "btl", "self", "--mca", "mpi_yield_when_idle", "1"]
    else:
        argv = ["mpiexec.mpich"]
    for r in range(2):
        if r:
            argv.append(":")
        argv += ["-np" if impl == "openmpi" else "-n", "1"]
        for k, v in rank_env(r, 2, extra).items():
            argv += ["-x", "%s=%s" % (k, v)] if impl == "openmpi" \
                else ["-env", k, v]
        argv += [prog, "--only", "pingpong", "--iters", "3"]
    p = start(argv, {})
    rc, out = finish(p, time.time() + CASE_TIMEOUT)
    cleanup()
    st = stats(out)
    both = len(st) == 2 and all(two_lanes([s])[0] and
                                queue_lanes([s], thread)[0] for s in st)
    ok = rc == 0 and "ok   pingpong" in out and "1 passed, 0 failed" in out
    report(name, ok and both, "%s; lanes per rank %s%s" % (
        "pingpong verified" if ok else "FAILED",
        [s.get("lanes") for s in st], "" if ok and both
        else ": " + tail(out, 12)))


def main():
    if os.geteuid() != 0:
        print("skip: needs root (DPDK vdevs)")
        return 77
    if not LIB or not os.path.exists(LIB):
        print("FAIL: SDP_UCT_LIB=%r is not a file: build the transport" % LIB)
        return 1
    only = sys.argv[1:]
    try:
        if not only or "config" in only:
            config_case()
            mismatch_case()
        if not only or "ucp" in only:
            ucp_one_lane()
            ucp_two_lanes("ucp-2lanes", {})
            ucp_two_lanes("ucp-thread", {"UCX_SCTP_DPDK_PROGRESS": "thread"})
        if not only or "mpi" in only:
            mpi_case("openmpi", MPI_CHECK)
            mpi_case("mpich", MPI_CHECK_MPICH)
            mpi_case("mpich", MPI_CHECK_MPICH,
                     {"UCX_SCTP_DPDK_PROGRESS": "thread"}, "-thread")
    finally:
        cleanup()
    failed = results.count(False)
    print("%d passed, %d failed" % (results.count(True), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
