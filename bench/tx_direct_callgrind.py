#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""tx_direct_callgrind.py - instructions per 64 KiB message of the usrsctp
loop (bench/sctp_loop.c) with the packet copied out of usrsctp's buffer
(as sg_conn_output did) and written straight into the FIFO slot
(--direct: usrsctp_set_conn_output_alloc, as sg does for small packets)
and gathered from usrsctp's chain into the slot (--chain:
usrsctp_set_conn_output_chain, as sg sends packets from tx_chain_min
bytes on; the gather stands for memif's copy into its ring, which the
copy setting's memcpy stands for too), with and without ISA-L CRC32c (filled on output, verified on input, as the
dataplane does).

callgrind counts instructions: repeatable on a loaded machine.  Each
setting runs --count 128 and 256 messages; (Ir(256) - Ir(128)) / 128 is
one message without the set-up.  Per setting also the instructions in
memcpy and in ISA-L's CRC (by object), the same way.  Caveat: glibc's
memcpy copies large blocks with `rep movsb`, which callgrind counts once
per byte moved (the CPU does it in a few dozen cycles per KiB): memcpy's
share of instructions overstates its share of time.

  bench/tx_direct_callgrind.py [--bin build/bench/sctp-loop-ep]
      [--pathmtu 8960] [--modes copy,direct,chain] [--json FILE]

--path uct-put: the whole sender instead of the loop: ucx_perftest put_bw
-D zcopy (1 MiB puts, -O 16 in flight so the sender seldom idles) over a
memif pair at MTU 9000 through libuct_sctp_dpdk.so (UCT, sg, usrsctp,
the dataplane, memif's ring copy), the client (the sender) under
callgrind, the receiver native.  Ir per MiB sent = (run of 2N puts - run
of N) / N MiB, the median of --reps pairs, and the functions with the
most Ir per MiB (medians).  Needs root; SDP_BUILD_DIR picks the build
(e.g. a copy of an older libuct_sctp_dpdk.so for an A/B).  Caveat: the
sender runs ~50x slower under callgrind, so per-poll and time-driven work
(polls per MiB, timers) weighs less than at full speed; per-packet and
per-message work is counted as it is.

  bench/tx_direct_callgrind.py --path uct-put [--iters 50] [--reps 3]
      [--size 1048576] [--mtu 9000] [--outstanding 16] [--env VAR=VALUE]
      [--keep DIR] [--top 25] [--json FILE]
"""
import os
import re
import subprocess
import shutil
import statistics
import sys
import tempfile
import time

import bench_common

HERE = os.path.dirname(os.path.abspath(__file__))


def ir_run(binary, count, mode, crc, pathmtu, tmp, extra=()):
    """mode: "copy", "direct" or "chain" (the loop's TX path); extra:
    more sctp-loop-ep options (e.g. --rx-ext)."""
    out = os.path.join(tmp, f"cg-{count}-{mode}-{crc}-{len(extra)}.out")
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
           binary, "--test", "bw", "--size", "65536", "--pathmtu",
           str(pathmtu), "--crc", crc, "--count", str(count)]
    if mode != "copy":
        cmd.append("--" + mode)
    cmd += list(extra)
    res = bench_common.loop_run(cmd, 900)
    row = annotate(out)
    row["packets"] = res["packets"]
    return row


def annotate(out):
    """Totals of a callgrind output file: total, memcpy (memcpy and
    memmove), isal_crc (ISA-L's object) and "fn": Ir per function
    ("file:function" as callgrind_annotate names it)."""
    total, rows = bench_common.callgrind_rows(out, "--tree=none")
    memcpy = isal = 0
    fn = {}
    for n, what in rows:
        if what.startswith("???") and "librte_" in what:
            # stripped DPDK objects: callgrind names the object of an
            # address differently from run to run; keep the address
            what = re.sub(r" \[[^]]*\]$", " [DPDK]", what)
        elif not what.startswith("???"):  # the object only when no symbol
            what = re.sub(r" \[[^]]*\]$", "", what)
        what = re.sub(r"^\S*/", "", what)  # file without directories
        fn[what] = fn.get(what, 0) + n
        if "memcpy" in what or "memmove" in what:
            memcpy += n
        elif "libisal" in what:
            isal += n
    return {"total": total, "memcpy": memcpy, "isal_crc": isal, "fn": fn}


def per_msg(binary, mode, crc, pathmtu, tmp, extra=()):
    """Ir per 64 KiB message: (run of 256 - run of 128) / 128, so set-up
    and teardown cancel; the row's *_per_msg fields."""
    lo = ir_run(binary, 128, mode, crc, pathmtu, tmp, extra)
    hi = ir_run(binary, 256, mode, crc, pathmtu, tmp, extra)
    row = {f"{k}_per_msg": (hi[k] - lo[k]) / 128
           for k in ("total", "memcpy", "isal_crc")}
    row["top"] = top_diff(lo["fn"], hi["fn"], 128)
    row["packets_per_msg"] = (hi["packets"] - lo["packets"]) / 128
    return row


def top_diff(lo_fn, hi_fn, div, n=25):
    """The @n functions with the most Ir in (hi - lo) / @div: a list of
    [name, Ir per unit]."""
    d = {k: (hi_fn.get(k, 0) - lo_fn.get(k, 0)) / div
         for k in set(lo_fn) | set(hi_fn)}
    return [[k, round(v)] for k, v in
            sorted(d.items(), key=lambda kv: -kv[1])[:n]]


# ---- --path uct-put: the UCT transport's sender over a memif pair ----

ROOT = os.path.dirname(HERE)
UCT_TIMEOUT_S = 900


def uct_env(rank, job, mtu, extra):
    """Environment of perftest rank 0 (memif server) or 1 (client, the
    sender of put_bw)."""
    run_dir = "/run/sdp/" + job
    # sdp-testbed's memif buffer: a whole frame in one buffer
    bsize = min((mtu + 18 + 2047) // 2048 * 2048, 65535)
    env = dict(os.environ)
    env.update({
        "LD_PRELOAD": os.path.join(os.environ.get(
            "SDP_BUILD_DIR", os.path.join(ROOT, "build")), "ucx-tl",
            "libuct_sctp_dpdk.so"),
        "UCX_SCTP_DPDK_DEVARGS":
            "net_memif0,role=%s,id=0,socket=%s/memif0.sock,"
            "socket-abstract=no,bsize=%d" % ("server" if rank == 0 else
                                             "client", run_dir, bsize),
        "UCX_SCTP_DPDK_IP": "10.77.1.%d/24" % (rank + 1),
        "UCX_SCTP_DPDK_MTU": str(mtu),
        "UCX_SCTP_DPDK_PREFIX": "sdp-%s-r%d" % (job, rank),
        "UCX_SCTP_DPDK_IDLE_SLEEP_US": "20",
        # the memif server's port opens when the client connects to
        # ucx_perftest, then waits for the client's port: under callgrind
        # (a loaded machine) that takes more than the default 5 s
        "UCX_SCTP_DPDK_DP": "link_wait_ms=120000",
    })
    env.update(extra)
    return env


def uct_ir_run(iters, size, mtu, outstanding, tmp, extra_env):
    """Ir of the sender (ucx_perftest client, put_bw -D zcopy of @size
    bytes x @iters) under callgrind; the receiver runs natively."""
    job = "txcg%d" % (os.getpid() % 100000)
    run_dir = "/run/sdp/" + job
    port = 22000 + os.getpid() % 20000
    out = os.path.join(tmp, f"cg-uct-{iters}.out")
    procs = []

    def cleanup():
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(timeout=30)
        shutil.rmtree(run_dir, ignore_errors=True)
        for r in (0, 1):
            shutil.rmtree("/var/run/dpdk/sdp-%s-r%d" % (job, r),
                          ignore_errors=True)
    cleanup()
    os.makedirs(run_dir, mode=0o700)
    uct = ["-d", "sdp0", "-x", "sctp_dpdk"]
    try:
        procs.append(subprocess.Popen(
            ["ucx_perftest", *uct, "-p", str(port)],
            env=uct_env(0, job, mtu, extra_env), stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, start_new_session=True))
        time.sleep(0.5)
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
               "ucx_perftest", "127.0.0.1", "-p", str(port), *uct,
               "-t", "put_bw", "-D", "zcopy", "-s", str(size),
               "-n", str(iters), "-w", "2", "-O", str(outstanding)]
        procs.append(subprocess.Popen(
            cmd, env=uct_env(1, job, mtu, extra_env),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            start_new_session=True))
        cout, _ = procs[1].communicate(timeout=UCT_TIMEOUT_S)
        sout, _ = procs[0].communicate(timeout=120)
        if procs[1].returncode != 0 or procs[0].returncode != 0 or \
                "Final:" not in cout:
            sys.exit(f"{' '.join(cmd)}: client rc {procs[1].returncode} "
                     f"server rc {procs[0].returncode}:\n{cout[-2000:]}"
                     f"\n{sout[-2000:]}")
    finally:
        cleanup()
    return annotate(out)


def uct_per_mib(size, mtu, iters, outstanding, tmp, extra_env, reps):
    """Ir per MiB sent: (run of 2 x @iters - run of @iters) / MiB of the
    @iters more puts, so set-up, connection and teardown cancel; the
    median of @reps such pairs (total and per function: the sender's idle
    polls and the time-driven work, e.g. dp_arp_tick's scan every
    retry/4, vary by ~1.5% from pair to pair)."""
    mib = iters * size / 1048576
    runs = []
    for _ in range(reps):
        lo = uct_ir_run(iters, size, mtu, outstanding, tmp, extra_env)
        hi = uct_ir_run(2 * iters, size, mtu, outstanding, tmp, extra_env)
        run = {f"{k}_per_mib": (hi[k] - lo[k]) / mib
               for k in ("total", "memcpy", "isal_crc")}
        run["fn"] = dict(top_diff(lo["fn"], hi["fn"], mib, 100000))
        runs.append(run)
        print(f"  pair {len(runs)}: {run['total_per_mib']:.0f} Ir/MiB",
              flush=True)
    row = {k: statistics.median(r[k] for r in runs)
           for k in ("total_per_mib", "memcpy_per_mib", "isal_crc_per_mib")}
    row["totals"] = [round(r["total_per_mib"]) for r in runs]
    names = set().union(*(r["fn"] for r in runs))
    med = {k: statistics.median(r["fn"].get(k, 0) for r in runs)
           for k in names}
    row["top"] = [[k, round(v)] for k, v in
                  sorted(med.items(), key=lambda kv: -kv[1])[:100]]
    return row


def row_text(row):
    return (f"{row['total_per_msg']:>9.0f} Ir/msg, memcpy "
            f"{row['memcpy_per_msg']:>8.0f}, isal "
            f"{row['isal_crc_per_msg']:>7.0f}, packets/msg "
            f"{row['packets_per_msg']:.2f}")


def main_uct(a):
    bench_common.vector_memcpy()
    extra = dict(e.split("=", 1) for e in a.env)
    with tempfile.TemporaryDirectory(prefix="txdirect-cg-") as tmp:
        if a.keep:
            tmp = a.keep
            os.makedirs(tmp, exist_ok=True)
        row = uct_per_mib(a.size, a.mtu, a.iters, a.outstanding, tmp,
                          extra, a.reps)
    row.update({"path": "uct-put", "size": a.size, "mtu": a.mtu,
                "iters": a.iters, "env": extra})
    print(f"uct put_bw zcopy {a.size} B, MTU {a.mtu}: "
          f"{row['total_per_mib']:.0f} Ir/MiB sent (median of "
          f"{row['totals']}), memcpy "
          f"{row['memcpy_per_mib']:.0f}, isal {row['isal_crc_per_mib']:.0f}")
    for name, ir in row["top"][:a.top]:
        print(f"  {ir:>10} {name}")
    bench_common.write_json(a.json, "tx_direct_callgrind", rows=[row])
    return 0


def main():
    ap = bench_common.loop_parser(__doc__, pathmtu_default=8960)
    ap.add_argument("--json")
    ap.add_argument("--modes", default="copy,direct,chain",
                    help="comma-separated: copy (conn_output copies), "
                    "direct (0002), chain (0004)")
    ap.add_argument("--path", choices=("loop", "uct-put"), default="loop",
                    help="loop: the usrsctp loop (sctp-loop-ep, --modes); "
                    "uct-put: ucx_perftest put_bw -D zcopy over a memif "
                    "pair, the sender (client) under callgrind, Ir per "
                    "MiB sent (needs root and a built libuct_sctp_dpdk.so)")
    ap.add_argument("--size", type=int, default=1048576,
                    help="uct-put: bytes per put")
    ap.add_argument("--iters", type=int, default=100,
                    help="uct-put: puts of the shorter run (the longer "
                    "one does twice as many)")
    ap.add_argument("--mtu", type=int, default=9000,
                    help="uct-put: UCX_SCTP_DPDK_MTU")
    ap.add_argument("--outstanding", type=int, default=16,
                    help="uct-put: puts in flight (ucx_perftest -O): the "
                    "sender always has data to send, so few idle polls")
    ap.add_argument("--env", action="append", default=[],
                    help="uct-put: VAR=VALUE for both ranks")
    ap.add_argument("--reps", type=int, default=3,
                    help="uct-put: pairs of runs (median)")
    ap.add_argument("--keep", metavar="DIR",
                    help="uct-put: keep the callgrind files in DIR")
    ap.add_argument("--top", type=int, default=25,
                    help="functions to print (uct-put)")
    a = ap.parse_args()
    if a.path == "uct-put":
        return main_uct(a)
    rows = []
    with tempfile.TemporaryDirectory(prefix="txdirect-cg-") as tmp:
        for crc in ("isal", "none"):
            for mode in a.modes.split(","):
                row = {"crc": crc, "direct": mode == "direct",
                       "mode": mode, "pathmtu": a.pathmtu}
                row.update(per_msg(a.bin, mode, crc, a.pathmtu, tmp))
                rows.append(row)
                print(f"crc {crc:4} {mode:6}: {row_text(row)}", flush=True)
    bench_common.write_json(a.json, "tx_direct_callgrind", size=65536,
                            rows=rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
