#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""SCTP integration: sdp-perf between two processes (one dataplane port,
one usrsctp endpoint, one association each) over memif and over af_packet
in namespaces.  Every message is verified byte for byte on the receiving
end (pattern + CRC32c, each seq exactly once, in order per stream when
ordered); under loss, delay and reordering 32 MiB arrive intact; under
corruption the SCTP CRC32c drops the damaged packets (counted) and nothing
corrupted is delivered."""

import json
import os
import subprocess
import time

import harness
from harness import check, run, tool

MIB = 1 << 20
# The impaired transfer: WAN_MIB through 10 ms each way, 2% loss and 25% of
# the frames overtaking the delayed ones (netem "reorder": they go out at
# once).  Congestion control under that loss holds it to ~6 Mbit/s: ~45 s,
# ~1700 chunks retransmitted.
NETEM_WAN = "delay 10ms loss 2% reorder 25% 50%"
WAN_MIB = 32
# Big socket buffers so neither window limits the impaired transfer (it is
# limited by congestion control under 2% loss; docs/BENCHMARKS.md, "SCTP").
SG_WAN = "sndbuf=16M rcvbuf=16M"


def intact(r, what):
    """Client and server agree every message arrived exactly once, whole."""
    s = r["server"]
    peer = r["peer"]
    check(r["verified"], f"{what}: not verified: client {r['recv_local']}, "
          f"server {s['recv']}")
    check(peer["msgs_ok"] == r["messages"] and peer["missing"] == 0 and
          peer["bad"] == 0 and peer["dup"] == 0 and peer["order_err"] == 0,
          f"{what}: server saw {peer}")
    if r["test"] == "bw":
        check(peer["bytes_ok"] == r["bytes"] == r["messages"] * r["size"],
              f"{what}: {peer['bytes_ok']} bytes verified of {r['bytes']}")
    else:
        loc = r["recv_local"]
        check(loc["msgs_ok"] == r["messages"] and loc["bad"] == 0,
              f"{what}: client verified {loc}")
    # usrsctp copies every received message byte exactly once, out of
    # the DPDK mbuf it kept the packet in (rx_ext, usrsctp-patches/0003);
    # it copies a packet into its own chain only while it holds a quarter
    # of the pool already (rx_ext_pool_low: a 16 MiB window of 1500-byte
    # packets); nothing else copies
    for side, sg in (("client", r["sg"]), ("server", s["sg"])):
        check(sg["rx_copy_recv_bytes"] == sg["bytes_in"] and
              sg["rx_ext_pkts"] > 0 and
              sg["rx_ext_bytes"] + sg["rx_copy_input_bytes"] >=
              sg["bytes_in"] and
              (sg["rx_copy_input_bytes"] == 0 or sg["rx_ext_pool_low"] > 0)
              and sg["rx_copies"] >= sg["msgs_in"],
              f"{what}: {side} receive copies {sg}")
        # and on send nothing past usrsctp copies: each packet leaves in
        # the mbuf usrsctp wrote it into (usrsctp-patches/0002) or as
        # usrsctp's own chain (0004, tx_chain_min)
        check(sg["tx_copy_bytes"] == 0 and
              sg["tx_direct_pkts"] + sg["tx_chain_pkts"] >=
              sg["pkts_out"] > 0,
              f"{what}: {side} sent packets copied {sg}")


def perf(*args, timeout=600):
    return tool("sdp-perf", *args, timeout=timeout)


# (size, lat exchanges, bw messages)
SIZES = [(1, 2000, 50000), (8, 2000, 50000), (64 << 10, 500, 1024),
         (1 << 20, 50, 64), (16 << 20, 4, 6)]


def test_memif_lat():
    for size, n, _ in SIZES:
        r = perf("--fabric", "memif", "--test", "lat", "--size", str(size),
                 "--count", str(n))
        intact(r, f"lat {size} B")
        check(r["latency_us_p50"] > 0 and
              r["latency_us_p99"] >= r["latency_us_p50"],
              f"lat {size} B: percentiles {r['latency_us_p50']} "
              f"{r['latency_us_p99']}")
        print(f"    lat {size:>8} B: one-way p50 {r['latency_us_p50']:.2f} "
              f"us, p99 {r['latency_us_p99']:.2f} us")


def test_memif_bw():
    for size, _, n in SIZES:
        r = perf("--fabric", "memif", "--test", "bw", "--size", str(size),
                 "--count", str(n))
        intact(r, f"bw {size} B")
        check(r["gbps"] > 0, f"bw {size} B: no goodput")
        print(f"    bw  {size:>8} B: {r['gbps']:.3f} Gbit/s, "
              f"{r['messages']} messages")


def test_memif_streams_unordered_crc():
    # 8 ordered streams: per-stream order is checked on every message
    r = perf("--fabric", "memif", "--test", "bw", "--size", "3000",
             "--count", "20000", "--streams", "8")
    intact(r, "8 ordered streams")
    # unordered over 4 streams, each seq still exactly once
    r = perf("--fabric", "memif", "--test", "bw", "--size", "65536",
             "--count", "512", "--streams", "4", "--unordered")
    intact(r, "4 unordered streams")
    check(r["unordered"], "not sent unordered")
    # memif's crc=auto is the zero checksum (crc=none, RFC 9653): every
    # SCTP packet, usrsctp's chains included, leaves with checksum 0 and
    # is accepted unverified; no CRC is computed on either end
    cli, srv = r["dp"], r["server"]["dp"]
    check(cli["crc"] == "none" and srv["crc"] == "none",
          f"memif crc=auto ran {cli['crc']}/{srv['crc']}, not none")
    check(cli["crc_sw"] == 0 and srv["crc_sw"] == 0 and
          cli["crc_zero_tx"] == r["sg"]["pkts_out"] and
          srv["crc_zero_rx"] == srv["delivered"] and
          srv["crc_zero_tx"] > 0 and cli["crc_zero_rx"] > 0,
          f"zero checksum: client {cli}, server {srv}")
    for be in ("sse42", "table", "isal"):
        r = perf("--fabric", "memif", "--test", "bw", "--size", "65536",
                 "--count", "256", "--crc", be)
        intact(r, f"crc {be}")
        check(r["crc"] == be and r["server"]["dp"]["crc"] == be,
              f"crc back-end {r['crc']}/{r['server']['dp']['crc']} "
              f"instead of {be}")
        cli, srv = r["dp"], r["server"]["dp"]
        check(cli["crc_sw"] > 0 and srv["crc_sw"] > 0 and
              cli["crc_zero_tx"] + cli["crc_zero_rx"] +
              srv["crc_zero_tx"] + srv["crc_zero_rx"] == 0,
              f"crc {be}: a zero checksum went out: {cli} {srv}")


def test_memif_crc_mismatch_named():
    """A verifying server (crc=isal) facing memif's default zero checksum:
    no association, every zero-checksum packet counted as sctp_crc_zero
    at the server, the cause and the fix logged once."""
    p = subprocess.run([os.path.join(harness.APPS, "sdp-perf"), "--json",
                        "--fabric", "memif", "--test", "bw", "--size",
                        "65536", "--count", "16", "--crc-server", "isal",
                        "--deadline", "20"],
                       capture_output=True, text=True, timeout=300)
    check(p.returncode != 0, "crc=none client and crc=isal server "
          f"exchanged data:\n{p.stdout[-3000:]}")
    r = json.loads(p.stdout.strip().splitlines()[-1])
    cli, srv = r["dp"], r["server"]["dp"]
    check(cli["crc"] == "none" and srv["crc"] == "isal",
          f"ran {cli['crc']}/{srv['crc']}, not none/isal")
    check(srv["drops"].get("sctp_crc_zero", 0) > 0 and
          srv["drops"].get("sctp_crc", 0) == 0,
          f"server drops {srv['drops']}")
    msg = "with checksum 0: that peer sends without CRC32c"
    check(p.stderr.count(msg) == 1 and "set crc=isal on the peer" in
          p.stderr, f"the mismatch was not named once:\n{p.stderr[-3000:]}")
    print(f"    server dropped {srv['drops']['sctp_crc_zero']} zero-checksum "
          "packets, named once")


def test_memif_mtu1500():
    """Jumbo frames are the default (9000); 1500 stays available."""
    r = perf("--fabric", "memif", "--test", "bw", "--size", "65536",
             "--count", "256")
    check(r["mtu"] == 9000, f"default mtu {r['mtu']}, expected 9000")
    r = perf("--fabric", "memif", "--mtu", "1500", "--test", "bw",
             "--size", "65536", "--count", "1024")
    intact(r, "memif mtu 1500")
    check(r["mtu"] == 1500, f"mtu {r['mtu']}")
    print(f"    memif mtu 1500: {r['gbps']:.3f} Gbit/s")


# The largest MTU (dataplane DP_MTU_MAX, sdp-testbed --mtu): a frame fills
# one DPDK mbuf, whose size is 16-bit.
BIG_MTU = 64000


def test_big_mtu():
    """memif and af_packet at the largest MTU: every byte verified, and
    the packets really are larger than a 9000-MTU frame could be."""
    for fabric in ("memif", "bridge"):
        r = perf("--fabric", fabric, "--mtu", str(BIG_MTU), "--test", "bw",
                 "--size", str(MIB), "--count", "64")
        intact(r, f"{fabric} mtu {BIG_MTU} bw")
        check(r["mtu"] == BIG_MTU, f"{fabric}: mtu {r['mtu']}")
        sg = r["server"]["sg"]
        per_pkt = sg["bytes_in"] / max(sg["pkts_in"], 1)
        check(per_pkt > 20000, f"{fabric} mtu {BIG_MTU}: {per_pkt:.0f} "
              f"payload bytes per received packet, expected > 20000 "
              f"({sg})")
        r = perf("--fabric", fabric, "--mtu", str(BIG_MTU), "--test", "lat",
                 "--size", "60000", "--count", "200")
        intact(r, f"{fabric} mtu {BIG_MTU} lat 60000 B")
        print(f"    {fabric} mtu {BIG_MTU}: {per_pkt:.0f} B per packet, "
              f"60000 B one-way p50 {r['latency_us_p50']:.2f} us")


def test_bridge_mtu_8150():
    """An MTU whose af_packet frame (MTU + 84 rounded up to 1 KiB: 9216)
    outgrows MTU + 18 rounded up (8192): the mbufs must hold the former
    (before, the PMD's queue set-up failed: 'Cannot allocate memory')."""
    r = perf("--fabric", "bridge", "--mtu", "8150", "--test", "bw",
             "--size", "65536", "--count", "256")
    intact(r, "bridge mtu 8150")
    check(r["mtu"] == 8150, f"mtu {r['mtu']}")


def test_mtu_above_limit():
    """One byte above the limit: a clear error naming it, before anything
    is set up."""
    for cmd in (["sdp-perf", "--fabric", "memif", "--test", "bw", "--size",
                 "1K", "--count", "1"],
                ["sdp-testbed", "memif", "up", "--job", "mt%d" % (os.getpid() % 100000)]):
        r = subprocess.run([os.path.join(harness.APPS, cmd[0]), *cmd[1:],
                            "--mtu", str(BIG_MTU + 1)],
                           capture_output=True, text=True, timeout=120)
        t = r.stdout + r.stderr
        check(r.returncode == 2, f"{cmd[0]} --mtu {BIG_MTU + 1}: exit "
              f"{r.returncode}, expected 2 (usage error): {t[-800:]}")
        check(f"{BIG_MTU + 1} is above {BIG_MTU}" in t and "mbuf" in t and
              "Traceback" not in t, f"{cmd[0]} --mtu {BIG_MTU + 1}: no "
              f"clear error naming the limit: {t[-800:]}")


def test_bridge():
    r = perf("--fabric", "bridge", "--test", "bw", "--size", "65536",
             "--count", "512")
    intact(r, "bridge bw")
    r = perf("--fabric", "bridge", "--test", "lat", "--size", "8",
             "--count", "1000")
    intact(r, "bridge lat")
    print(f"    bridge lat 8 B: p50 {r['latency_us_p50']:.2f} us")


def test_bridge_wan():
    t0 = time.time()
    r = perf("--fabric", "bridge", "--mtu", "1500", "--test", "bw",
             "--size", str(MIB), "--total", str(WAN_MIB * MIB), "--sg", SG_WAN, "--netem", NETEM_WAN,
             timeout=900)
    dt = time.time() - t0
    intact(r, f"{WAN_MIB} MiB under netem")
    check(r["bytes"] == WAN_MIB * MIB, f"bytes {r['bytes']}")
    u = r["usrsctp"]
    check(u["retrans_chunks"] > 0, "2% loss but nothing retransmitted")
    print(f"    {WAN_MIB} MiB in {r['seconds']:.1f} s ({r['gbps'] * 1000:.1f} "
          f"Mbit/s; {dt:.1f} s with set-up); retransmitted chunks "
          f"{u['retrans_chunks']} ({u['fast_retrans_chunks']} fast, "
          f"{u['t3_timeouts']} T3 timeouts)")


def test_bridge_corruption():
    # af_packet: crc=auto is isal (crc=none is refused off memif: there is
    # a wire), so every packet carries a CRC and corruption is caught.  On
    # memif the default zero checksum would not catch it, by design (as
    # over Linux's lo): a corruption test there must force crc=isal.
    r = perf("--fabric", "bridge", "--test", "bw", "--size", "65536",
             "--count", "256", "--netem", "corrupt 1% loss 1%",
             timeout=600)
    intact(r, "under corruption")
    drops = r["server"]["sg"]["crc_drops"]
    check(drops > 0, "1% corruption but the receiver dropped no packet "
          "for a bad CRC32c")
    check(r["server"]["dp"]["drops"].get("sctp_crc", 0) == drops,
          f"sg crc_drops {drops} != dataplane sctp_crc "
          f"{r['server']['dp']['drops']}")
    print(f"    receiver CRC32c drops {drops}, sender "
          f"{r['sg']['crc_drops']}; all {r['messages']} messages verified")


if __name__ == "__main__":
    harness.require_root()
    run("memif: ping-pong 1 B..16 MiB verified", test_memif_lat)
    run("memif: streaming 1 B..16 MiB verified", test_memif_bw)
    run("memif: streams, unordered, CRC back-ends",
        test_memif_streams_unordered_crc)
    run("memif: crc=isal server vs zero-checksum client, named",
        test_memif_crc_mismatch_named)
    run("memif: MTU 9000 by default, 1500 on request", test_memif_mtu1500)
    run("af_packet bridge: bw and lat verified", test_bridge)
    run(f"memif and af_packet at MTU {BIG_MTU}: bw and lat verified",
        test_big_mtu)
    run("af_packet bridge: MTU 8150 (frame room from af_packet's framesz)",
        test_bridge_mtu_8150)
    run(f"MTU above {BIG_MTU}: an error naming the limit",
        test_mtu_above_limit)
    run(f"af_packet bridge: {WAN_MIB} MiB intact under " + NETEM_WAN,
        test_bridge_wan)
    run("af_packet bridge: corruption caught by CRC32c",
        test_bridge_corruption)
    harness.done()
