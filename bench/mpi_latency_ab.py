#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""mpi_latency_ab.py OUT.jsonl - medians of bench/mpi_latency_ab.sh runs:
p50 one-way latency per size, before/after and against UCX tcp."""
import collections
import json
import statistics
import sys

rows = [json.loads(l) for l in open(sys.argv[1])]
d = collections.defaultdict(list)
for r in rows:
    d[(r["v"], r["fabric"], r["size"])].append(r["latency_us_p50"])


def med(v, f, s):
    x = d.get((v, f, s))
    return statistics.median(x) if x else None


def fmt(x):
    return "-" if x is None else f"{x:.2f}"


def ratio(a, b):
    return "-" if a is None or b is None else f"{a / b:.2f}"


print("size | memif before | memif after | after/before | af_packet before"
      " | af_packet after | after/before | tcp | memif/tcp | af_packet/tcp")
for s in sorted({r["size"] for r in rows}):
    mb, ma = med("base", "memif", s), med("new", "memif", s)
    bb, ba = med("base", "bridge", s), med("new", "bridge", s)
    t = med("tcp", "bridge", s)
    print(f"{s} | {fmt(mb)} | {fmt(ma)} | {ratio(ma, mb)} | {fmt(bb)} | "
          f"{fmt(ba)} | {ratio(ba, bb)} | {fmt(t)} | {ratio(ma, t)} | "
          f"{ratio(ba, t)}")
