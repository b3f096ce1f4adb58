#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""No T3 timeout without loss.

A flow paced at a low rate behind a deep pacer queue (5 Mbit/s, about
100 ms of frames waiting in the pacer: more than the 100 ms minimum RTO)
loses nothing, so SCTP must take no T3 timeout and resend nothing.

usrsctp's fast SACK path (sctp_express_handle_sack, every SACK without gap
reports) did not restart the T3-rtx timer when the cumulative ack moved,
unlike its slow path and RFC 9260 6.3.2 R3: the timer armed by a flight's
first DATA chunk expired one RTO later however steadily SACKs came back,
and the expiry resent every chunk outstanding longer than SRTT + 4 RTTVAR
(not floored at RTO.min) and cut cwnd to one MTU.  Any flow whose flight
never drains for an RTO took a T3 timeout per RTO: seed 001's paced
all-to-all (about one per association per iteration), seed 003's rails
behind tbf (79-171 per run, nothing lost).  scripts/usrsctp-patches/0001
restarts the timer.  The third case checks the other half:
a frame the pacer refuses when its queue is full must stay unsent in
usrsctp (sg_conn_output returns ENOBUFS), not be lost at our own pacer.

RTO.min is 500 ms here, not the default 100: with the fix a T3 needs
half a second in which no SACK moves the cumulative ack (they come one per
13 ms frame), which a process descheduled on a loaded 2-core machine can
cause at 100 ms (seen once: 5 T3 in a run stalled to 14 s next to a
build) but not at 500; without the fix the timer still expires about once
per RTO whatever the SACKs: 6 T3 in each 5 s run (17-19 at 100 ms).
"""

import harness
from harness import check, run, tool

RATE = "5M"	     # per destination, bit/s
TOTAL = 3 << 20	     # bytes: ~5 s at 5 Mbit/s
SIZE = "8K"	     # one DATA chunk, one 8 KiB frame per message (MTU 9000)
# The flight is bounded by the send buffer (64 KiB: 8 frames, ~105 ms at
# 5 Mbit/s) so that the pacer's per-destination queue (16 frames) never
# overflows: nothing is lost anywhere, by construction.
SG = "sndbuf=64K sack_delay_ms=0 rto_min_ms=500"


def drops(dp):
    """Every frame our dataplane dropped on one end, by reason."""
    d = dict(dp.get("drops", {}))
    for k in ("pace_drops", "pace_dest_drops"):
        if dp.get(k):
            d[k] = dp[k]
    return d


def lossless_paced(dp_keys):
    r = tool("sdp-perf", "--fabric", "memif", "--test", "bw", "--size",
             SIZE, "--total", str(TOTAL), "--sg", SG, "--dp", dp_keys,
             timeout=900)
    s = r["server"]
    u = r["usrsctp"]
    check(r["verified"] and r["peer"]["bytes_ok"] == TOTAL,
          f"verified {r['verified']} bytes {r['peer']['bytes_ok']} of "
          f"{TOTAL}")
    # the precondition: no frame was lost, so any resend is spurious
    lost = {"client": drops(r["dp"]), "server": drops(s["dp"])}
    check(not lost["client"] and not lost["server"],
          f"frames were dropped, the run is not lossless: {lost}")
    mbps = r["gbps"] * 1000
    print(f"    {dp_keys}: {mbps:.2f} Mbit/s goodput in "
          f"{r['seconds']:.1f} s, {u['t3_timeouts']} T3, "
          f"{u['retrans_chunks']} retransmitted chunks "
          f"({u['fast_retrans_chunks']} fast), server dup chunks "
          f"{s['usrsctp']['dup_chunks_in']}, sacks in {u['sacks_in']}")
    check(u["t3_timeouts"] == 0,
          f"{u['t3_timeouts']} T3 timeouts with nothing lost "
          f"(usrsctp's fast SACK path does not restart T3: is "
          f"scripts/usrsctp-patches/0001 applied? rerun scripts/setup.sh)")
    check(u["retrans_chunks"] == 0 and s["usrsctp"]["dup_chunks_in"] == 0,
          f"{u['retrans_chunks']} chunks resent, "
          f"{s['usrsctp']['dup_chunks_in']} duplicates at the server, "
          f"with nothing lost")


def test_dest_paced_pacer_full():
    """Without the send-buffer bound, cwnd outgrows the pacer's queue for
    the destination (16 frames): the pacer refuses frames (-ENOBUFS), and
    sg_conn_output hands that back to usrsctp, whose chunks then stay
    unsent instead of being lost at our own pacer (reported as sent,
    each refusal would be a loss: tail drops of a burst, resends, T3)."""
    sg = SG.replace("sndbuf=64K ", "")
    r = tool("sdp-perf", "--fabric", "memif", "--test", "bw", "--size",
             SIZE, "--total", str(TOTAL), "--sg", sg, "--dp",
             "dest_rate=" + RATE + " link=10G", timeout=900)
    s = r["server"]
    u = r["usrsctp"]
    check(r["verified"] and r["peer"]["bytes_ok"] == TOTAL,
          f"verified {r['verified']} bytes {r['peer']['bytes_ok']} of "
          f"{TOTAL}")
    refused = r["dp"]["pace_dest_drops"]
    check(refused > 0 and r["sg"]["tx_nobufs"] >= refused,
          f"the pacer refused {refused} frames (sg tx_nobufs "
          f"{r['sg']['tx_nobufs']}): its queue never filled, the test "
          f"checks nothing")
    other = {"client": r["dp"]["drops"], "server": drops(s["dp"])}
    check(not other["client"] and not other["server"],
          f"frames were dropped elsewhere: {other}")
    print(f"    sndbuf 4M: {r['gbps'] * 1000:.2f} Mbit/s goodput, "
          f"{refused} frames refused by the pacer, {u['t3_timeouts']} T3, "
          f"{u['retrans_chunks']} retransmitted chunks, server dup chunks "
          f"{s['usrsctp']['dup_chunks_in']}")
    check(u["retrans_chunks"] == 0 and u["t3_timeouts"] == 0 and
          s["usrsctp"]["dup_chunks_in"] == 0,
          f"{u['retrans_chunks']} chunks resent, {u['t3_timeouts']} T3, "
          f"{s['usrsctp']['dup_chunks_in']} duplicates: the pacer's "
          f"refusals were losses (sg_conn_output must return ENOBUFS)")


def test_dest_paced_deep_queue():
    lossless_paced("dest_rate=" + RATE + " link=10G")


def test_total_paced_deep_queue():
    lossless_paced("rate=" + RATE + " link=10G")


if __name__ == "__main__":
    harness.require_root()
    run("per-destination pacing at 5 Mbit/s, ~100 ms queued: no T3, "
        "no resend", test_dest_paced_deep_queue)
    run("total pacing at 5 Mbit/s, ~100 ms queued: no T3, no resend",
        test_total_paced_deep_queue)
    run("per-destination pacing, cwnd beyond the pacer's queue: refused "
        "frames stay unsent, no resend", test_dest_paced_pacer_full)
    harness.done()
