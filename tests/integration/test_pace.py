#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Pacer integration: frames leave a memif port spaced by the pacer.

These are functional checks that hold on a shared, noisy machine: CPU
contention can only make a paced sender late (slower), never early, so the
asserts are one-sided where timing is involved; the accuracy figures
themselves are benchmarks (docs/BENCHMARKS.md, "Pacing accuracy").  The unpaced control run
shows that the checks fail when pacing does not happen."""

import harness
from harness import check, run, tool


def paced(rate, count=6000, mode="deadline"):
    return tool("sdp-pace", "--fabric", "memif", "--rate", rate,
                "--mode", mode, "--count", str(count))


def test_paced_never_faster_and_evenly_spaced():
    for rate, bps in (("200M", 200e6), ("1G", 1e9)):
        r = paced(rate)
        check(r["received"] == 6000 and r["lost"] == 0,
              f"{rate}: received {r['received']} lost {r['lost']}")
        # never faster than the target (1% tolerance for TSC rounding)
        check(r["rate_bps"] <= bps * 1.01,
              f"{rate}: {r['rate_bps']:.0f} bit/s above target")
        # the median departure gap is the ideal one (stalls move the tail)
        check(abs(r["gap_ns_p50"] - r["ideal_gap_ns"]) <=
              0.02 * r["ideal_gap_ns"] + 500,
              f"{rate}: median gap {r['gap_ns_p50']} vs ideal "
              f"{r['ideal_gap_ns']}")
        # bounded catch-up: no real burst after a stall (a few frames can
        # share one TX burst when the peer's ring was momentarily full;
        # a 1 kHz token bucket sends 16+ at this rate)
        check(r["max_burst"] <= 4, f"{rate}: burst of {r['max_burst']}")
        print(f"    {rate}: {r['rate_bps'] / 1e6:.1f} Mbit/s "
              f"({r['rate_error_pct']:+.2f}%), gap err p99 "
              f"{r['gap_err_ns_p99'] / 1e3:.2f} us, late polls "
              f"{r['tx']['pace_late']}")


def test_unpaced_control_fails_the_same_checks():
    # The paced checks above must reject unpaced traffic.  Its rate is
    # whatever the CPU gives (111 Mbit/s once in CI at load 14, below the
    # 200M target), so the control asks for the checks' verdict, not for a
    # rate: unpaced frames leave in TX bursts and off the ideal gap.
    r = tool("sdp-pace", "--fabric", "memif", "--rate", "200M",
             "--limiter", "none", "--count", "6000")
    fails = []
    if r["rate_bps"] > 200e6 * 1.01:
        fails.append("rate")
    if abs(r["gap_ns_p50"] - r["ideal_gap_ns"]) > \
            0.02 * r["ideal_gap_ns"] + 500:
        fails.append("median gap")
    if r["max_burst"] > 4:
        fails.append("burst")
    check("burst" in fails,
          f"unpaced traffic shows no bursts (max {r['max_burst']})")
    check(len(fails) >= 2,
          f"only the {fails} check rejects unpaced traffic: rate "
          f"{r['rate_bps']:.0f} bit/s, median gap {r['gap_ns_p50']} ns vs "
          f"ideal {r['ideal_gap_ns']}")
    print(f"    unpaced: {r['rate_bps'] / 1e6:.0f} Mbit/s, burst "
          f"{r['max_burst']}, median gap {r['gap_ns_p50']} ns: rejected by "
          f"{', '.join(fails)}")


def test_token_bucket_bursts():
    r = tool("sdp-pace", "--fabric", "memif", "--rate", "200M",
             "--limiter", "tb", "--count", "6000")
    check(r["max_burst"] >= 8,
          f"1 kHz token bucket burst only {r['max_burst']} frames")


def test_gap_mode_sends_gap_frames_receiver_drops_them():
    r = tool("sdp-pace", "--fabric", "memif", "--rate", "500M", "--link",
             "1G", "--mode", "gap", "--count", "3000")
    check(r["tx"]["gap_frames"] > 0, "no gap frames sent in gap mode")
    # one gap frame per data frame at half the link rate; the receiver
    # stops at the first of the sender's 10 FIN frames, whose gap frames
    # it then no longer sees
    # gap frames the NIC has no room for wait (with their data frame),
    # they are never dropped
    sent = r["tx"]["gap_frames"]
    check(sent >= 3000, f"only {sent} gap frames for 3000 frames")
    check(sent - 10 <= r["gap_frames_dropped"] <= sent,
          f"receiver dropped {r['gap_frames_dropped']} gap frames of "
          f"{sent} sent")
    check(r["received"] == 3000, f"received {r['received']}")


def test_paced_sctp_never_stalls():
    """SCTP's congestion control over a paced port: every byte arrives,
    goodput stays below the pacing rate and well above zero (the pacer's
    short queue drops like a bottleneck instead of hiding a delay longer
    than the minimum RTO)."""
    # The unpaced control, same size, same moment: on a loaded machine the
    # CPU, not the pacer, may bound both; a stall (T3 storms behind a
    # queue that hides more than the RTO) leaves the paced run far below
    # both its rate and what the same machine moved unpaced.
    u = tool("sdp-perf", "--fabric", "memif", "--test", "bw", "--size",
             "64K", "--total", "32M")
    check(u["verified"], "unpaced control run not verified")
    r = tool("sdp-perf", "--fabric", "memif", "--test", "bw", "--size",
             "64K", "--total", "32M", "--dp", "rate=200M link=10G")
    check(r["verified"] and r["peer"]["bytes_ok"] == 32 << 20,
          f"verified {r['verified']} bytes {r['peer']['bytes_ok']}")
    check(r["gbps"] <= 0.2, f"goodput {r['gbps']} Gbit/s above 200M pacing")
    floor = min(0.05, 0.25 * u["gbps"])
    check(r["gbps"] >= floor,
          f"goodput {r['gbps']} Gbit/s: stalled (floor {floor:.3f}: a "
          f"quarter of min(200M, unpaced {u['gbps']} Gbit/s))")
    print(f"    unpaced {u['gbps'] * 1000:.0f} Mbit/s; "
          f"200M paced: {r['gbps'] * 1000:.0f} Mbit/s goodput, "
          f"{r['usrsctp']['retrans_chunks']} retransmitted chunks, "
          f"{r['usrsctp']['t3_timeouts']} T3, pacer drops "
          f"{r['dp']['pace_drops']}")


if __name__ == "__main__":
    harness.require_root()
    run("paced: never faster than target, median gap ideal, no bursts",
        test_paced_never_faster_and_evenly_spaced)
    run("unpaced control run bursts", test_unpaced_control_fails_the_same_checks)
    run("token bucket on a 1 kHz tick bursts", test_token_bucket_bursts)
    run("gap mode: gap frames sent and dropped at the receiver",
        test_gap_mode_sends_gap_frames_receiver_drops_them)
    run("paced SCTP over memif never stalls, goodput below the rate",
        test_paced_sctp_never_stalls)
    harness.done()
