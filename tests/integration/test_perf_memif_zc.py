#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""SCTP integration: sdp-perf over a memif pair whose client runs DPDK's
zero-copy mode (sdp-perf --memif-zc: devargs zero-copy=yes on the client,
dataplane/dp_memif_zc.c).  Every message is verified byte for byte on the
receiving end, both ways (bw: client to server; lat: there and back), and
the client's dataplane says it is in zero-copy mode with its RX ring
stocked from its own pool (a copying memif client holds no mbufs when
idle); the server copies as before."""

import harness
from harness import check, run, tool

from test_perf import intact

RING = 1024  # memif's default rsize=10


def zc_in_use(r, what):
    c, s = r["dp"], r["server"]["dp"]
    check(r["memif_zc"], f"{what}: sdp-perf did not ask for zero-copy")
    check(c["memif_zc"] == 1, f"{what}: client not in zero-copy mode: {c}")
    check(s["memif_zc"] == 0, f"{what}: the server is never zero-copy: {s}")
    check(c["pool_in_use"] >= RING - 32,
          f"{what}: client's ring holds {c['pool_in_use']} of its mbufs, "
          f"expected ~{RING}: not zero-copy")


def test_bw():
    for size, n in ((1 << 20, 256), (65536, 2048), (3000, 20000)):
        r = tool("sdp-perf", "--fabric", "memif", "--memif-zc", "--test",
                 "bw", "--size", str(size), "--count", str(n))
        intact(r, f"zero-copy bw {size} B")
        zc_in_use(r, f"zero-copy bw {size} B")
        print(f"    bw {size:>8} B: {r['gbps']:.3f} Gbit/s, "
              f"{r['bytes'] >> 20} MiB verified")


def test_lat():
    for size in (8, 65536, 1 << 20):
        r = tool("sdp-perf", "--fabric", "memif", "--memif-zc", "--test",
                 "lat", "--size", str(size), "--count", "200")
        intact(r, f"zero-copy lat {size} B")
        zc_in_use(r, f"zero-copy lat {size} B")
        print(f"    lat {size:>8} B: one-way p50 "
              f"{r['latency_us_p50']:.2f} us")


if __name__ == "__main__":
    harness.require_root()
    run("memif zero-copy client: streaming 3000 B..1 MiB verified", test_bw)
    run("memif zero-copy client: ping-pong 8 B..1 MiB verified", test_lat)
    harness.done()
