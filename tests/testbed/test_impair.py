#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""test_impair.py - the user-space impairment forwarder's decisions
(apps/sdp_impair.py: parse() and Impairment), without sockets or a clock:
seeded random numbers, time given as an argument.  The forwarder itself,
live between namespaces, is exercised by test_testbed.sh and every
impaired integration test."""
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "apps"))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import sdp_impair  # noqa: E402
from harness import check, done, run  # noqa: E402

N = 100000


def cfg(*args):
    c, _ = sdp_impair.parse(list(args))
    return c


def refused(*args):
    try:
        sdp_impair.parse(list(args))
    except sdp_impair.ImpairError as e:
        return str(e)
    return None


def test_parse():
    c = cfg("delay", "10ms", "2ms", "loss", "2%", "reorder", "25%", "50%",
            "rate", "200mbit", "limit", "30")
    check(abs(c["delay"] - 0.010) < 1e-12 and abs(c["jitter"] - 0.002) < 1e-12,
          f"delay {c['delay']} jitter {c['jitter']}")
    check(c["loss"] == 0.02 and c["reorder"] == 0.25 and c["gap"] == 1,
          f"loss {c['loss']} reorder {c['reorder']} gap {c['gap']}")
    check(c["rate"] == 200e6 and c["limit"] == 30, f"{c}")
    check(abs(cfg("delay", "100")["delay"] - 100e-6) < 1e-15,
          "bare number is usec")
    check(cfg("loss", "2")["loss"] == 0.02, "bare loss number is percent")
    check(cfg("rate", "1gbps")["rate"] == 8e9, "gbps is bytes")
    _, ignored = sdp_impair.parse(["loss", "1%", "25%"])
    check(ignored == ["loss correlation"], f"ignored {ignored}")
    for bad in (("foo",), ("loss",), ("loss", "x"), ("loss", "150%"),
                ("loss", "state", "1"), ("distribution", "pareto"),
                ("delay", "-1ms")):
        check(refused(*bad) is not None, f"{bad} accepted")
    check("foo" in refused("foo"), "the error names the keyword")


def rate_of(c, key, n=N, seed=1):
    imp = sdp_impair.Impairment(c, random.Random(seed))
    for i in range(n):
        imp.arrive(i * 1e-6, b"x" * 100)
    return imp.st[key] / n


def test_loss_dup_corrupt_rates():
    for p in (0.01, 0.05):
        got = rate_of(cfg("loss", f"{p * 100}%"), "lost")
        check(abs(got - p) < 0.004, f"loss {p}: {got}")
    got = rate_of(cfg("duplicate", "1%"), "dup")
    check(abs(got - 0.01) < 0.003, f"duplicate 1%: {got}")
    check(rate_of(cfg("delay", "1ms"), "lost") == 0, "loss without loss")


def test_corrupt_flips_one_bit():
    imp = sdp_impair.Impairment(cfg("corrupt", "100%"), random.Random(2))
    pkt = bytes(range(256)) * 4
    for i in range(1000):
        (t, p), = imp.arrive(0.0, pkt)
        diff = [a ^ b for a, b in zip(p, pkt) if a != b]
        check(len(p) == len(pkt) and len(diff) == 1 and
              bin(diff[0]).count("1") == 1, f"frame {i}: {diff}")


def test_delay_and_jitter():
    imp = sdp_impair.Impairment(cfg("delay", "10ms", "2ms"),
                                random.Random(3))
    ts = [imp.arrive(1.0, b"x")[0][0] - 1.0 for _ in range(N // 10)]
    check(min(ts) >= 0.008 - 1e-9 and max(ts) <= 0.012 + 1e-9,
          f"uniform jitter out of range: {min(ts)}..{max(ts)}")
    mean = sum(ts) / len(ts)
    check(abs(mean - 0.010) < 0.0002, f"mean delay {mean}")


def test_reorder_gap():
    # reorder 25% gap 5: at most one frame in 5 goes at once (no delay),
    # the others wait the delay: sent-at-once frames overtake them
    imp = sdp_impair.Impairment(cfg("delay", "10ms", "reorder", "25%",
                                    "gap", "5"), random.Random(4))
    at_once = run_len = 0
    for i in range(N):
        (t, _), = imp.arrive(float(i), b"x")
        if t == float(i):
            check(run_len >= 4, f"frame {i}: reordered after {run_len} "
                  "delayed frames, gap 5 wants 4")
            at_once += 1
            run_len = 0
        else:
            check(abs(t - i - 0.010) < 1e-9, f"frame {i} delay {t - i}")
            run_len += 1
    # after 4 delayed frames each frame goes at once with p = 0.25:
    # one in 4 + 1/0.25 = 8 frames on average
    share = at_once / N
    check(abs(share - 1 / 8) < 0.01, f"{share:.3f} of frames reordered, "
          "expected 0.125")


def test_rate_spacing_and_limit():
    # 8000 bit frames at 8 Mbit/s: 1 ms each, back to back
    imp = sdp_impair.Impairment(cfg("rate", "8mbit", "limit", "10"),
                                random.Random(5))
    held = []
    for i in range(20):
        held += imp.arrive(0.0, b"x" * 1000, queue_len=len(held))
    check(len(held) == 10, f"{len(held)} frames queued with limit 10")
    check(imp.st["overlimit"] == 10, f"overlimit {imp.st['overlimit']}")
    ts = [t for t, _ in held]
    gaps = [b - a for a, b in zip(ts, ts[1:])]
    check(all(abs(g - 0.001) < 1e-9 for g in gaps) and
          abs(ts[0] - 0.001) < 1e-9, f"departures {ts}")


def test_main_check_mode():
    check(sdp_impair.main(["--check", "--", "delay", "1ms"]) == 0,
          "--check refused valid arguments")
    check(sdp_impair.main(["--check", "--", "bogus"]) == 2,
          "--check accepted a bad keyword")
    check(sdp_impair.main(["nonsense"]) == 2, "no -- accepted")


if __name__ == "__main__":
    run("netem arguments parsed, bad ones refused with the keyword",
        test_parse)
    run("loss and duplicate rates match the asked ones",
        test_loss_dup_corrupt_rates)
    run("corrupt flips exactly one bit", test_corrupt_flips_one_bit)
    run("delay with uniform jitter stays in range, right mean",
        test_delay_and_jitter)
    run("reorder with gap: only after gap-1 delayed frames",
        test_reorder_gap)
    run("rate spaces frames by their length; limit drops beyond",
        test_rate_spacing_and_limit)
    run("--check mode", test_main_check_mode)
    done()
