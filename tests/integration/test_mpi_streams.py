#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The transport's stream map (UCX_SCTP_DPDK_STREAM_TAG_MASK, set by
`sdp-mpirun --stream-map`) with unmodified Open MPI and MPICH programs.

1. Spread: tests/mpi/mpi_streams.c sends on 10 communicators; with
   `--stream-map comm` and STREAMS=11 the sender's STATS line must show its
   tag messages on at least 10 streams and every middle fragment on its
   first's stream (UCX_RNDV_THRESH=inf: 300 KB eager), with `off` none
   mapped.  This is
   what the map is for: a loss on one communicator's stream no longer
   delays the others.  With the default rendezvous threshold the 300 KB
   messages go by rendezvous GET: the sender's GET replies (the bulk data)
   must come on the streams of their RTS, >= 10 of them (comm), and on one
   stream (off); the receiver's GETs all found their RTS.
2. Legal: under 2% loss on the bridge, 3 ranks, in every mode (off, comm,
   tag), tests/mpi/mpi_check.c (ping-pong, collectives, ANY_SOURCE/ANY_TAG,
   non-overtaking, many outstanding) and mpi_streams (per-communicator
   MPI_ANY_TAG order for off/comm; per-tag order for tag, whose promise is
   no MPI_ANY_TAG) pass with every message checked."""

import json
import os
import re
import subprocess

import harness
from harness import check, run

APPS = harness.APPS
BIN = os.environ.get("SDP_MPI_TEST_DIR", "")
STATS_RE = re.compile(r"^sctp_dpdk stats: (\{.*\})$", re.M)


def mpirun(impl, np, prog, args, stream_map, fabric, netem=None,
           timeout=900, env=()):
    exe = os.path.join(BIN, f"{prog}_{impl}")
    check(os.access(exe, os.X_OK), f"{exe} missing (SDP_MPI_TEST_DIR)")
    cmd = [os.path.join(APPS, "sdp-mpirun"), "--mpi", impl, "-np", str(np),
           "--timeout", str(timeout), "--fabric", fabric,
           "--stream-map", stream_map,
           "--env", "UCX_SCTP_DPDK_STATS=y",
           "--env", "UCX_SCTP_DPDK_STREAMS=11"]
    if netem:
        cmd += ["--netem", netem]
    for kv in env:
        cmd += ["--env", kv]
    r = subprocess.run(cmd + [exe] + list(args), capture_output=True,
                       text=True, timeout=timeout + 120)
    m = re.search(r"^(\d+) passed, (\d+) failed$", r.stdout, re.M)
    if r.returncode != 0 or m is None or m.group(2) != "0":
        raise AssertionError(f"{impl} {prog} {' '.join(args)} "
                             f"--stream-map {stream_map}: rc {r.returncode}"
                             f"\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    print("    " + " | ".join(l for l in r.stdout.splitlines()
                              if l.startswith(("ok", "FAIL"))))
    stats = [json.loads(s) for s in STATS_RE.findall(r.stderr)]
    check(len(stats) == np, f"{len(stats)} STATS lines of {np} ranks")
    for s in stats:
        check("streams" in s, f"no streams in the STATS line: {s}")
    return stats


def summary(stats):
    return "; ".join(
        f"{s['ip']}: mapped {s['streams']['mapped_msgs']}, streams "
        f"{len(s['streams']['tx_msgs'])} {s['streams']['tx_msgs']}"
        for s in stats)


def test_spread(impl):
    # RNDV_THRESH=inf: the 300 KB messages go eager in several fragments,
    # whose middles must follow their first (no frag_misses)
    stats = mpirun(impl, 2, "mpi_streams", ["--any-tag", "--rounds", "12"],
                   "comm", "memif", env=["UCX_RNDV_THRESH=inf"])
    print("    comm: " + summary(stats))
    for s in stats:
        check(s["streams"]["frag_misses"] == 0,
              f"{s['streams']['frag_misses']} middles lost their first")
    # rank 1 sends (its address is the testbed's second, .2)
    sender = max(stats, key=lambda s: s["streams"]["mapped_msgs"])
    st = sender["streams"]
    check(st["mapped_msgs"] >= 10 * 12,
          f"only {st['mapped_msgs']} tag messages mapped")
    check(len(st["tx_msgs"]) >= 10,
          f"10 communicators on {len(st['tx_msgs'])} streams: "
          f"{st['tx_msgs']}")
    stats = mpirun(impl, 2, "mpi_streams", ["--any-tag", "--rounds", "12"],
                   "off", "memif")
    print("    off:  " + summary(stats))
    for s in stats:
        check(s["streams"]["mapped_msgs"] == 0,
              f"off mapped {s['streams']['mapped_msgs']} messages")
        check(s["streams"]["mask"] == "0x0", f"mask {s['streams']['mask']}")


def rndv(s):
    return s["streams"].get("rndv", {})


def test_rndv_spread(impl):
    """Rendezvous data on the RTS's stream (comm) or the ep's (off)."""
    for mode in ("comm", "off"):
        # GET rendezvous (UCX's default; sdp-mpirun picks put_zcopy on
        # memif, whose PUTs go on the ep's stream)
        stats = mpirun(impl, 2, "mpi_streams", ["--any-tag", "--rounds",
                                                "12"], mode, "memif",
                       env=["UCX_RNDV_SCHEME=get_zcopy"])
        # rank 1 sends, so it serves rank 0's GETs: the replies are its
        sender = max(stats, key=lambda s: sum(
            rndv(s).get("rep_msgs", {}).values()))
        getter = min(stats, key=lambda s: sum(
            rndv(s).get("rep_msgs", {}).values()))
        rep = rndv(sender).get("rep_msgs", {})
        g = rndv(getter)
        print(f"    {mode}: GET replies per stream {rep}; the receiver's "
              f"RTS noted {g.get('rts_noted')}, GETs on an RTS's stream "
              f"{g.get('gets_mapped')}, not {g.get('gets_unmapped')}")
        # 12 rounds x 10 communicators, a third of them 300 KB
        check(sum(rep.values()) >= 40, f"{mode}: only {rep} GET replies")
        if mode == "comm":
            check(len(rep) >= 10, f"300 KB on 10 communicators: GET "
                  f"replies on {len(rep)} streams {rep}")
            check(g.get("gets_mapped", 0) >= 40 and
                  g.get("gets_unmapped", 1) == 0,
                  f"the receiver's GETs: {g}")
        else:
            check(len(rep) == 1, f"off: GET replies on {rep}")
            check(g.get("gets_mapped", 1) == 0, f"off mapped GETs: {g}")


def test_bad_mask(impl):
    """A STREAM_TAG_MASK that is neither a number nor a known name fails
    the iface open with the variable, the value and the fix named."""
    exe = os.path.join(BIN, f"mpi_streams_{impl}")
    r = subprocess.run([os.path.join(APPS, "sdp-mpirun"), "--mpi", impl,
                        "-np", "2", "--timeout", "120", "--env",
                        "UCX_SCTP_DPDK_STREAM_TAG_MASK=comm", exe],
                       capture_output=True, text=True, timeout=300)
    check(r.returncode != 0, "a job with a bad mask ran")
    check("UCX_SCTP_DPDK_STREAM_TAG_MASK='comm' is not a number" in
          r.stdout + r.stderr, f"no error naming the variable:\n"
          f"{r.stderr[-2000:]}")


def test_legal_under_loss(impl, mode):
    mpirun(impl, 3, "mpi_check", ["--max-size", str(1 << 20), "--iters",
                                  "1"], mode, "bridge", netem="loss 2%")
    args = ["--rounds", "20"] + (["--any-tag"] if mode != "tag" else [])
    stats = mpirun(impl, 3, "mpi_streams", args, mode, "bridge",
                   netem="loss 2%")
    rtx = sum(s["usrsctp"]["retrans_chunks"] for s in stats)
    print(f"    {mode}: {summary(stats)}; retransmitted chunks {rtx}; "
          f"GETs on an RTS's stream "
          f"{sum(rndv(s).get('gets_mapped', 0) for s in stats)}")
    # the loss was there: SCTP repaired some
    check(rtx > 0, "no retransmission under 2% loss")
    mapped = sum(s["streams"]["mapped_msgs"] for s in stats)
    if mode == "off":
        check(mapped == 0, f"off mapped {mapped}")
    else:
        check(mapped > 0, f"{mode}: nothing mapped")
        # mpi_streams' 300 KB go by rendezvous on their RTS's stream
        gets = sum(rndv(s).get("gets_mapped", 0) for s in stats)
        check(gets > 0, f"{mode}: no GET on an RTS's stream")


if __name__ == "__main__":
    harness.require_root()
    impls = os.environ.get("SDP_MPI_IMPLS", "openmpi mpich").split()
    modes = os.environ.get("SDP_STREAM_MODES", "off comm tag").split()
    for impl in impls:
        run(f"{impl}: 10 communicators spread over >= 10 streams (comm), "
            "none mapped (off), memif",
            lambda: test_spread(impl))
        run(f"{impl}: 300 KB rendezvous data on their RTS's streams "
            "(comm), on one (off), memif",
            lambda: test_rndv_spread(impl))
        run(f"{impl}: STREAM_TAG_MASK=comm (no such name) is refused, "
            "named", lambda: test_bad_mask(impl))
        for mode in modes:
            run(f"{impl}: --stream-map {mode}, 3 ranks, 2% loss: mpi_check "
                "and mpi_streams in order and intact",
                lambda: test_legal_under_loss(impl, mode))
    harness.done()
