#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Memif peers killed mid-burst, many times (meson test vanish-stress,
suite stress; by hand: vanish_stress.py [ROUNDS] [--out FILE]).

Each round starts an sdp-perf-ep pair over a fresh memif pair, waits
until the transfer runs, sleeps a random 0.05-1.5 s and kills one end
(SIGKILL, by the PID started here).  Rounds cycle through every case:
the memif server or the memif client killed, a copying or a zero-copy
client (--memif-zc), 1 MiB or 256-byte messages (big frames or many
small bursts).  The survivor is in rte_eth_rx_burst/tx_burst most of
the time, so the kill races DPDK 22.11's memif interrupt thread, which
unmaps the shared regions on the control channel's hangup
(memif_disconnect -> memif_free_regions) while the data path only
checks ETH_MEMIF_FLAG_CONNECTED once, on entry to the burst.

The ports run with the dataplane's default (memif_gate=auto: unpaced
memif ports are gated, dataplane/dp_gate.c: no burst while that thread
has work); --gate 1 forces it on, --no-gate (--gate 0) runs them
ungated, which reproduces the crash (in about 1% of rounds under load,
the memif server killed under a copying client's 1 MiB sends, SIGSEGV in
eth_memif_tx; docs/BENCHMARKS.md, "Robustness").

A survivor must exit by itself (peer_gone_ms) within SURVIVOR_S with a
nonzero status and not by a signal; a crash is reported with gdb's
backtrace of its core (sdp_launch.finish).  Every round is one JSON line
(--out); the summary counts crashes and hangs per case.  Fails when any
survivor crashed or hung."""

import argparse
import json
import os
import random
import sys
import time

import harness
from test_vanish import wait_line

import sdp_launch

SURVIVOR_S = 20
START_S = 60


def finished_before_kill(out, size):
    """The survivor's JSON (server or client) says the server verified
    every message the client was to send (64 GiB / size, capped at
    sdp-perf's 1 Mi messages)."""
    want = min((64 << 30) // size, 1 << 20)
    for line in out.splitlines():
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if r.get("role") in ("server", "client"):
            return r.get("verified") is True and r.get("messages") == want
    return False


def one_round(i, victim, zc, size, delay_s, gate):
    ep = sdp_launch.find_bin("sdp-perf-ep")
    rec = {"round": i, "victim": victim, "zc": zc, "size": size,
           "delay_s": round(delay_s, 3), "memif_gate": gate}
    extra = "" if gate == "default" else f"memif_gate={gate}"
    job = f"vs{os.getpid() % 10000:04d}{i % 100:02d}"
    with sdp_launch.Testbed("memif", job=job, memif_zc=zc) as tb:
        common = ["--json", "--deadline-s", "120"]
        srv = [ep, "--server", "--idle-exit-ms", "60000",
               "--dp", tb.dp_config(tb.server_idx, extra)] + common
        cli = [ep, "--peer", tb.ip(tb.server_idx), "--test", "bw",
               "--size", str(size), "--total", str(64 << 30),
               "--dp", tb.dp_config(tb.client_idx, extra)] + common
        s = tb.start(tb.server_idx, srv)
        time.sleep(0.2)
        c = tb.start(tb.client_idx, cli)
        early = wait_line(s, "sdp-perf: test started", START_S)
        if "test started" not in early:
            rec["result"] = "no-start"
            rec["tail"] = early[-1500:]
            return rec
        time.sleep(delay_s)
        v, surv = (s, c) if victim == "server" else (c, s)
        if v.poll() is not None or surv.poll() is not None:
            rec["result"] = "ended-before-kill"
            return rec
        sdp_launch.kill(v)  # reaps it and removes its runtime dir
        t0 = time.time()
        rc, out, err = sdp_launch.finish(surv, SURVIVOR_S)
        rec["survivor_s"] = round(time.time() - t0, 2)
        rec["rc"] = rc
    if rc == 124:
        rec["result"] = "hang"
    elif rc < 0:
        rec["result"] = "crash"
    elif rc == 0 and finished_before_kill(out, size):
        # sdp-perf caps a bw test at 1 Mi messages (MAX_COUNT): at 256 B
        # the test can finish (every message verified by the server, its
        # result at the client) before the kill, which then only cut the
        # SHUTDOWN
        rec["result"] = "ended-before-kill"
    elif rc == 0:
        rec["result"] = "reported-success"
    else:
        rec["result"] = "ok"
    if rec["result"] != "ok":
        rec["tail"] = err[-20000:]
    return rec


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rounds", type=int, nargs="?", default=8)
    ap.add_argument("--out", default=None)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--gate", choices=("default", "0", "1", "auto"),
                    default="default",
                    help="memif_gate for both ports (default: the "
                    "dataplane's default, auto)")
    ap.add_argument("--no-gate", action="store_true",
                    help="memif_gate=0: reproduces the crash")
    ap.add_argument("--only", default=None,
                    help="one case: VICTIM:copy|zc:SIZE, e.g. "
                    "server:copy:1048576 (the one that crashed)")
    a = ap.parse_args()
    harness.require_root()
    sdp_launch.install_signal_handlers()
    seed = a.seed if a.seed is not None else int(time.time())
    rng = random.Random(seed)
    cases = [(v, zc, size) for zc in (False, True)
             for v in ("server", "client") for size in (1048576, 256)]
    if a.only:
        try:
            v, mode, size = a.only.split(":")
            cases = [(v, mode == "zc", int(size))]
            assert v in ("server", "client") and mode in ("copy", "zc")
        except (ValueError, AssertionError):
            sys.exit(f"--only {a.only!r}: give VICTIM:MODE:SIZE, VICTIM "
                     f"server or client, MODE copy or zc, e.g. "
                     f"server:copy:1048576")
    out = open(a.out, "a") if a.out else None
    bad = []
    t_start = time.time()
    for i in range(a.rounds):
        victim, zc, size = cases[i % len(cases)]
        rec = one_round(i, victim, zc, size, rng.uniform(0.05, 1.5),
                        "0" if a.no_gate else a.gate)
        rec["load1"] = round(os.getloadavg()[0], 2)
        line = json.dumps(rec)
        if out:
            out.write(line + "\n")
            out.flush()
        short = {k: v for k, v in rec.items() if k != "tail"}
        print(json.dumps(short), flush=True)
        if rec["result"] in ("crash", "hang", "reported-success"):
            bad.append(rec)
            print(rec.get("tail", ""), flush=True)
    counts = {}
    for r in bad:
        k = (r["victim"], r["zc"], r["size"], r["result"])
        counts[k] = counts.get(k, 0) + 1
    print(f"vanish-stress: seed {seed}, {a.rounds} rounds in "
          f"{time.time() - t_start:.0f} s, {len(bad)} bad: {counts}")
    print(f"{a.rounds - len(bad)} passed, {len(bad)} failed")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
