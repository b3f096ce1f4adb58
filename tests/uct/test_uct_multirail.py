#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""test_uct_multirail.py - several ports per process, one UCT device each:
UCX's multi-rail stripes over them with no change to UCX.

Two processes joined by TWO memif pairs (/run/sdp/<job>/m0.sock, m1.sock),
UCX_SCTP_DPDK_DEVARGS="<pair 0 end>;<pair 1 end>", one subnet per rail
(10.77.1.0/24, 10.77.2.0/24).  Cases:

  info        ucx_info -d lists sctp_dpdk on sdp0 and sdp1 (two net_null
              ports), and bad lists are refused naming the variable and
              the entry: one IP for two ports, MTU entry 1 out of range,
              three MTU entries for two ports
  ucp-inline  ucx_perftest UCP tag_bw 4 MiB with UCX_MAX_EAGER_RAILS=2
  ucp-thread  UCX_MAX_RNDV_RAILS=2 (inline progress and PROGRESS=thread):
              the client's ep config uses sctp_dpdk/sdp0 AND sdp1, and with
              UCX_SCTP_DPDK_STATS=y both ports of the sender carried at least
              a quarter of the payload bytes
  af-packet   the same perftest over af_packet ports on two veth pairs,
              each port in its own network namespace (DP="netns=A;netns=B":
              the second port is hot-plugged inside its namespace)
  mpi-openmpi Open MPI (pml ucx) ping-pong 0 B..16 MiB, every byte checked
  mpi-mpich   (tests/mpi/mpi_check.c), and the same with MPICH (ch4:ucx),
              over the two rails; both ports of both ranks carried at
              least a quarter of the bytes

Every process has a deadline and is killed by PID in cleanup; the memif dir
and /var/run/dpdk/<prefix> are removed even on failure.  Environment:
SDP_UCT_LIB = libuct_sctp_dpdk.so, SDP_MPI_CHECK = mpi_check_openmpi,
SDP_MPI_CHECK_MPICH = mpi_check_mpich (a case fails when its program is
missing).  Exit 77 (skip) when not root.
"""
import os
import re
import shutil
import subprocess
import sys
import time

LIB = os.environ.get("SDP_UCT_LIB", "")
MPI_CHECK = os.environ.get("SDP_MPI_CHECK", "")
MPI_CHECK_MPICH = os.environ.get("SDP_MPI_CHECK_MPICH", "")
JOB = "uctmr%d" % os.getpid()
RUN_DIR = "/run/sdp/" + JOB
PREFIXES = ["sdp-%s-r0" % JOB, "sdp-%s-r1" % JOB]
TCP_PORT = 21000 + os.getpid() % 20000
CASE_TIMEOUT = 300
RAILS = 2

from uct_procs import finish, kill_all, remove_dirs, report, tail  # noqa: E402
from uct_procs import results  # noqa: E402
from uct_procs import start as _start  # noqa: E402


def devargs(rank):
    role = "server" if rank == 0 else "client"
    return ";".join("net_memif%d,role=%s,id=0,socket=%s/m%d.sock,"
                    "socket-abstract=no" % (k, role, RUN_DIR, k)
                    for k in range(RAILS))


def rank_env(rank, extra=None):
    env = {
        "LD_PRELOAD": LIB,
        "UCX_TLS": "sctp_dpdk,self",
        "UCX_SCTP_DPDK_DEVARGS": devargs(rank),
        "UCX_SCTP_DPDK_IP": ";".join("10.77.%d.%d/24" % (k + 1, rank + 1)
                                     for k in range(RAILS)),
        "UCX_SCTP_DPDK_PREFIX": PREFIXES[rank],
        "UCX_SCTP_DPDK_IDLE_SLEEP_US": "20",
        "UCX_SCTP_DPDK_STATS": "y",
        "UCX_MAX_EAGER_RAILS": str(RAILS),
        "UCX_MAX_RNDV_RAILS": str(RAILS),
    }
    env.update(extra or {})
    return env


def cleanup():
    kill_all()
    remove_dirs(RUN_DIR, PREFIXES + ["sdp-%s-info" % JOB])


def start(argv, env):
    return _start(argv, env, base=os.environ)


def stats(out):
    """{(ip, dev): tx_bytes} from the STATS lines of one output."""
    res = {}
    for m in re.finditer(r'sctp_dpdk stats: \{"dev": "(sdp\d+)", "ip": '
                         r'"([0-9.]+)".*?"tx_bytes": (\d+)', out):
        res[(m.group(2), m.group(1))] = int(m.group(3))
    return res


def info_case():
    base = {"LD_PRELOAD": LIB,
            "UCX_SCTP_DPDK_DEVARGS": "net_null0;net_null1",
            "UCX_SCTP_DPDK_PREFIX": "sdp-%s-info" % JOB}
    runs = [
        ({"UCX_SCTP_DPDK_IP": "10.77.1.1/24;10.77.2.1/24"}, None),
        ({"UCX_SCTP_DPDK_IP": "10.77.1.1/24"},
         r"UCX_SCTP_DPDK_IP='10\.77\.1\.1/24' is one address for 2 ports"),
        ({"UCX_SCTP_DPDK_IP": "10.77.1.1/24;10.77.2.1/24",
          "UCX_SCTP_DPDK_MTU": "1500;99999"},
         r"invalid UCX_SCTP_DPDK_MTU entry 1 \('mtu=99999'"),
        ({"UCX_SCTP_DPDK_IP": "10.77.1.1/24;10.77.2.1/24",
          "UCX_SCTP_DPDK_MTU": "1500;1500;1500"},
         r"UCX_SCTP_DPDK_MTU has 3 ';'-separated entries and "
         r"UCX_SCTP_DPDK_DEVARGS 2 ports"),
    ]
    for extra, want_err in runs:
        env = dict(base)
        env.update(extra)
        p = start(["ucx_info", "-d"], env)
        rc, out = finish(p, time.time() + 120)
        cleanup()
        devs = re.findall(r"Transport: sctp_dpdk\s*\n#\s*Device: (sdp\d+)",
                          out)
        if want_err is None:
            opened = out.count("failed to open interface") == 0
            ok = rc == 0 and devs == ["sdp0", "sdp1"] and opened
            report("info", ok, "devices %s%s" % (
                devs, "" if ok else ": " + tail(out)))
        else:
            ok = re.search(want_err, out) is not None and \
                devs == ["sdp0", "sdp1"]
            report("info-err", ok, "%s -> %s" % (
                extra.get("UCX_SCTP_DPDK_MTU", extra["UCX_SCTP_DPDK_IP"]),
                "refused naming it" if ok else tail(out)))


def check_rails(name, sender_out, payload_bytes, ok0, detail):
    st = stats(sender_out)
    per = {dev: b for (ip, dev), b in st.items()}
    quarter = payload_bytes // 4
    both = len(st) == RAILS and all(b >= quarter for b in st.values())
    report(name, ok0 and both, "%s; sender tx_bytes per port %s (each must "
           "be >= %d)" % (detail, per, quarter))


NS = "mr%d" % (os.getpid() % 100000)     # + h<rank>r<rail>
namespaces = []


def netns_up():
    """Two veth pairs, one per rail; each end in a namespace of its own."""
    for k in range(RAILS):
        for r in range(2):
            ns = "%sh%dr%d" % (NS, r, k)
            subprocess.run(["ip", "netns", "add", ns], check=True)
            namespaces.append(ns)
        a, b = "%sv0r%d" % (NS, k), "%sv1r%d" % (NS, k)
        subprocess.run(["ip", "link", "add", a, "type", "veth", "peer",
                        "name", b], check=True)
        for r, v in ((0, a), (1, b)):
            ns = "%sh%dr%d" % (NS, r, k)
            subprocess.run(["ip", "link", "set", v, "netns", ns], check=True)
            subprocess.run(["ip", "-n", ns, "link", "set", v, "up"],
                           check=True)


def netns_down():
    for ns in namespaces:
        subprocess.run(["ip", "netns", "del", ns], check=False)
    namespaces.clear()


def af_packet_env(rank):
    return {
        "UCX_SCTP_DPDK_DEVARGS": ";".join(
            "net_af_packet%d,iface=%sv%dr%d" % (k, NS, rank, k)
            for k in range(RAILS)),
        "UCX_SCTP_DPDK_DP": ";".join("netns=%sh%dr%d" % (NS, rank, k)
                                     for k in range(RAILS)),
    }


def ucp_case(name, extra, per_rank=None):
    cleanup()
    os.makedirs(RUN_DIR, mode=0o700)
    deadline = time.time() + CASE_TIMEOUT
    size, iters = 4 << 20, 40
    own = per_rank or (lambda r: {})
    srv = start(["ucx_perftest", "-p", str(TCP_PORT)],
                rank_env(0, dict(extra, **own(0))))
    time.sleep(0.5)
    cli = start(["ucx_perftest", "127.0.0.1", "-p", str(TCP_PORT), "-t",
                 "tag_bw", "-s", str(size), "-n", str(iters)],
                rank_env(1, dict(extra, UCX_LOG_LEVEL="info", **own(1))))
    crc, cout = finish(cli, deadline)
    src, sout = finish(srv, deadline)
    cleanup()
    lanes = re.search(r"ep_cfg\[\d+\]: tag\(([^)]*)\)", cout)
    lanes = lanes.group(1) if lanes else ""
    final = [l for l in cout.splitlines() if l.startswith("Final:")]
    ok = crc == 0 and src == 0 and bool(final) and \
        "sctp_dpdk/sdp0" in lanes and "sctp_dpdk/sdp1" in lanes
    detail = "tag lanes (%s) %s" % (lanes, final[0].split()[6] + " MB/s overall"
                                    if final else tail(cout + sout))
    # the client sends: its two ports carry the payload
    check_rails(name, cout, size * iters, ok, detail)


def mpi_case(impl, prog):
    name = "mpi-" + impl
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
        for k, v in rank_env(r).items():
            argv += ["-x", "%s=%s" % (k, v)] if impl == "openmpi" \
                else ["-env", k, v]
        argv += [prog, "--only", "pingpong", "--iters", "3"]
    p = start(argv, {})
    rc, out = finish(p, time.time() + CASE_TIMEOUT)
    cleanup()
    st = stats(out)
    # ping-pong 0 B..16 MiB, 3 iterations, both ways: each rank sends
    # about 3 * 32 MiB; each of its ports must carry a quarter of it
    quarter = 3 * (32 << 20) // 4
    both = len(st) == 2 * RAILS and all(b >= quarter for b in st.values())
    ok = rc == 0 and "ok   pingpong" in out and "1 passed, 0 failed" in out
    report(name, ok and both, "%s; tx_bytes per rank and port %s (each "
           "must be >= %d)%s" % ("pingpong verified" if ok else "FAILED",
                                 st, quarter, "" if ok and both
                                 else ": " + tail(out, 12)))


def main():
    if os.geteuid() != 0:
        print("skip: needs root (DPDK vdevs)")
        return 77
    if not LIB or not os.path.exists(LIB):
        print("FAIL: SDP_UCT_LIB=%r is not a file: build the transport" % LIB)
        return 1
    try:
        info_case()
        ucp_case("ucp-inline", {})
        ucp_case("ucp-thread", {"UCX_SCTP_DPDK_PROGRESS": "thread"})
        try:
            netns_up()
            ucp_case("af-packet", {}, af_packet_env)
        except subprocess.CalledProcessError as e:
            report("af-packet", False, "testbed: %s" % e)
        finally:
            netns_down()
        mpi_case("openmpi", MPI_CHECK)
        mpi_case("mpich", MPI_CHECK_MPICH)
    finally:
        cleanup()
        netns_down()
    failed = results.count(False)
    print("%d passed, %d failed" % (results.count(True), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
