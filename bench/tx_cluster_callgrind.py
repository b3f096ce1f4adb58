#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""tx_cluster_callgrind.py - instructions per 64 KiB message of the usrsctp
loop (bench/sctp_loop.c) with a send's data copied into usrsctp's
2048-byte clusters (--tx-cluster 0, as before usrsctp-patches/0005) and
into larger buffers (--tx-cluster B, as sg's tx_cluster), the way sg sends:
full packets as usrsctp's chain (--chain, 0004, gathered into the FIFO
slot as memif gathers a chained mbuf), the others written into the slot
(--direct, 0002), packets kept in their buffer on input (--rx-ext, 0003),
ISA-L CRC32c.  Also the pieces per chained packet of 1024 bytes or more
(chain_segs / chain_pkts, from a plain run; the header piece included):
what sg turns into DPDK segments, one memif copy each.

callgrind counts instructions: repeatable on a loaded machine.  Per
setting, (Ir(256) - Ir(128)) / 128 messages (tx_direct_callgrind.per_msg).
glibc's memcpy is kept off `rep movsb` (GLIBC_TUNABLES, see --rep-movsb):
callgrind counts that instruction once per byte moved, so with it the
larger blocks of larger buffers would count ~4x the memcpy instructions
of 2048-byte ones for the same bytes.

  bench/tx_cluster_callgrind.py [--bin build/bench/sctp-loop-ep]
      [--pathmtu 8960 ...] [--clusters 0,16384,65536,262144] [--json FILE]
      [--rep-movsb]
"""
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_common  # noqa: E402
from tx_direct_callgrind import per_msg, row_text  # noqa: E402


def segs_per_pkt(binary, pathmtu, extra):
    """Pieces per chained packet of a 256-message run (no callgrind)."""
    cmd = [binary, "--test", "bw", "--size", "65536", "--pathmtu",
           str(pathmtu), "--crc", "isal", "--count", "256", "--chain",
           *extra]
    res = bench_common.loop_run(cmd, 600)
    return res["chain_segs"] / max(res["chain_pkts"], 1)


def main():
    ap = bench_common.loop_parser(__doc__)
    ap.add_argument("--clusters", default="0,16384,65536,262144")
    ap.add_argument("--json")
    ap.add_argument("--rep-movsb", action="store_true",
                    help="leave glibc's memcpy its `rep movsb` for large "
                    "copies (callgrind counts it once per byte)")
    a = ap.parse_args()
    if not a.rep_movsb:
        bench_common.vector_memcpy()
    rows = []
    with tempfile.TemporaryDirectory(prefix="txcluster-cg-") as tmp:
        for mtu in a.pathmtu or [8960]:
            for cl in a.clusters.split(","):
                extra = ("--direct", "--rx-ext", "--tx-cluster", cl)
                row = {"pathmtu": mtu, "tx_cluster": int(cl)}
                row.update(per_msg(a.bin, "chain", "isal", mtu, tmp, extra))
                row["segs_per_pkt"] = segs_per_pkt(a.bin, mtu, extra)
                rows.append(row)
                print(f"pathmtu {mtu:5} tx_cluster {int(cl):7}: "
                      f"{row_text(row)}, pieces/packet "
                      f"{row['segs_per_pkt']:.2f}", flush=True)
    bench_common.write_json(a.json, "tx_cluster_callgrind", size=65536,
                            rows=rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
