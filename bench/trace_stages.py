#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""trace_stages.py - where a one-way message spends its time, from the
stage timestamps of a -Dtrace=true build (common/sdp_trace.h).

Merges the dumps of the two processes of a ping-pong on their shared TSC
and, for every message (a uct_send in one process up to the AM handler in
the other), takes the time from the send to the first and last event of
each stage on each side.  Prints, per message size, the median of each.

  meson setup build-trace -Dtrace=true ... && ninja -C build-trace
  SDP_BUILD_DIR=$PWD/build-trace apps/sdp-mpirun --mpi mpich --fabric memif \\
      -np 2 --env SDP_TRACE=/tmp/tr/t.%p build-trace/apps/sdp-mpi-bench-mpich \\
      --min-size 8 --max-size 16384 --no-bw
  bench/trace_stages.py /tmp/tr/t.*
"""
import argparse
import collections
import statistics
import sys

ORDER = ["uct_send", "sendv", "conn_output", "port_send", "tx_burst",
         "rx_burst", "conninput", "recv", "am_handler"]


def load(path, side):
    hz = None
    ev = []
    with open(path) as f:
        for line in f:
            if line.startswith("# tsc_hz"):
                hz = float(line.split()[2])
                continue
            t, st, arg = line.split()
            ev.append((int(t), side, st, int(arg)))
    return hz, ev


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("dumps", nargs=2)
    ap.add_argument("--skip", type=int, default=20,
                    help="messages of each size to skip (warm-up)")
    a = ap.parse_args()
    hz0, e0 = load(a.dumps[0], 0)
    hz1, e1 = load(a.dumps[1], 1)
    hz = (hz0 + hz1) / 2
    ev = sorted(e0 + e1)
    msgs = []  # (size, {(side, stage): [t_first, t_last, count]})
    cur = None
    for t, side, st, arg in ev:
        if st == "uct_send" and (cur is None or side == cur["dst"]):
            # a new message (a send from the receiver ends the previous)
            cur = {"src": side, "dst": 1 - side, "t0": t, "size": arg,
                   "st": {}}
            continue
        if cur is None:
            continue
        rel = "tx" if side == cur["src"] else "rx"
        k = (rel, st)
        d = cur["st"].setdefault(k, [t - cur["t0"], t - cur["t0"], 0, 0])
        d[1] = t - cur["t0"]
        d[2] += 1
        d[3] += arg
        if st == "am_handler" and side == cur["dst"]:
            msgs.append(cur)
            cur = None
    by = collections.defaultdict(list)
    for m in msgs:
        by[m["size"]].append(m)
    us = 1e6 / hz
    print(f"tsc {hz / 1e9:.3f} GHz; {len(msgs)} one-way messages; medians "
          f"(us after uct_send: first..last event of the stage; n = events "
          f"per message)")
    for size in sorted(by):
        ms = by[size][a.skip:]
        if not ms:
            continue
        print(f"\n-- AM of {size} bytes (incl. headers), {len(ms)} messages")
        for rel in ("tx", "rx"):
            for st in ORDER:
                k = (rel, st)
                have = [m["st"][k] for m in ms if k in m["st"]]
                if len(have) < len(ms) / 2:
                    continue
                f = statistics.median(h[0] for h in have) * us
                l = statistics.median(h[1] for h in have) * us
                n = statistics.median(h[2] for h in have)
                arg = statistics.median(h[3] / h[2] for h in have)
                print(f"  {rel} {st:12s} {f:8.2f} .. {l:8.2f}  n {n:4.1f}"
                      f"  arg/ev {arg:8.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
