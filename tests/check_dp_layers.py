#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""check_dp_layers.py - the dataplane's files call each other one way.

Reads the defined (T/D/B/R) and undefined (U) symbols of every object in
libdp.a (nm), draws an edge from each file to each file whose symbols it
uses, and fails when:
  - any two files depend on each other, directly or through others (a
    cycle: a layer is missing, see STYLE.md "Direction of calls");
  - the transmit path calls up: its order is
        dp_out.c -> dp_arp.c -> dp_pace.c -> dp_txq.c
    (output, neighbours, pacer, per-queue transmit), and a file may call
    only the ones after it.
Prints the dependency order it found (files first that use no other).

usage: check_dp_layers.py <libdp.a>
"""
import collections
import os
import subprocess
import sys

TX_ORDER = ["dp_out.c", "dp_arp.c", "dp_pace.c", "dp_txq.c"]


def graph(lib):
    out = subprocess.run(["nm", "-A", lib], capture_output=True, text=True,
                         check=True).stdout
    defs, uses = {}, collections.defaultdict(set)
    members = set()
    for line in out.splitlines():
        # "<lib>:<member>: [addr] <type> <symbol>"
        _, member, rest = line.split(":", 2)
        member = os.path.basename(member).removesuffix(".o")
        members.add(member)
        parts = rest.split()
        if len(parts) < 2:
            continue
        kind, sym = parts[-2], parts[-1]
        if kind in "TDBRC":
            defs[sym] = member
        elif kind == "U":
            uses[member].add(sym)
    edges = collections.defaultdict(set)
    for member, syms in uses.items():
        for sym in syms:
            owner = defs.get(sym)
            if owner is not None and owner != member:
                edges[member].add(owner)
    return members, edges


def topo_order(members, edges):
    """Files whose dependencies all come before them; None on a cycle."""
    order, done = [], set()
    pending = sorted(members)
    while pending:
        ready = [m for m in pending if edges[m] <= done]
        if not ready:
            return None, pending
        for m in ready:
            order.append(m)
            done.add(m)
        pending = [m for m in pending if m not in done]
    return order, []


def cycles(nodes, edges):
    """The strongly connected components of more than one file."""
    nodes = set(nodes)
    reach = {m: set() for m in nodes}
    for m in nodes:
        todo = [m]
        while todo:
            for n in edges[todo.pop()] & nodes:
                if n not in reach[m]:
                    reach[m].add(n)
                    todo.append(n)
    sccs = []
    for m in sorted(nodes):
        scc = {n for n in reach[m] if m in reach[n]} | {m}
        if len(scc) > 1 and scc not in sccs:
            sccs.append(scc)
    return sccs


def main():
    if len(sys.argv) != 2 or not os.path.exists(sys.argv[1]):
        sys.exit("usage: check_dp_layers.py <libdp.a> (not found: %s)" %
                 sys.argv[1:])
    members, edges = graph(sys.argv[1])
    failures = ["%s (transmit path) is not in %s" % (f, sys.argv[1])
                for f in TX_ORDER if f not in members]
    order, stuck = topo_order(members, edges)
    if order is None:
        for scc in cycles(stuck, edges):
            inner = ["%s uses %s" % (m, ", ".join(sorted(edges[m] & scc)))
                     for m in sorted(scc)]
            failures.append("cycle among %s: %s" %
                            (", ".join(sorted(scc)), "; ".join(inner)))
    for i, f in enumerate(TX_ORDER):
        for above in TX_ORDER[:i]:
            if above in edges[f]:
                failures.append("%s calls up into %s (transmit order: %s)"
                                % (f, above, " -> ".join(TX_ORDER)))
    if failures:
        print("\n".join("FAIL: " + f for f in failures))
        sys.exit(1)
    print("dataplane dependency order (each uses only files before it):")
    print("  " + " ".join(order))


if __name__ == "__main__":
    main()
