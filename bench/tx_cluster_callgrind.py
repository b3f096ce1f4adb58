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
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from tx_direct_callgrind import per_msg, row_text  # noqa: E402


def segs_per_pkt(binary, pathmtu, extra):
    """Pieces per chained packet of a 256-message run (no callgrind)."""
    cmd = [binary, "--test", "bw", "--size", "65536", "--pathmtu",
           str(pathmtu), "--crc", "isal", "--count", "256", "--chain",
           *extra]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed (rc {r.returncode}):\n"
                 f"{r.stderr[-2000:]}")
    res = json.loads(r.stdout.strip().splitlines()[-1])
    if not res.get("verified") or res["fifo_drops"] or res["crc_bad"]:
        sys.exit(f"{' '.join(cmd)}: not verified or drops: {res}")
    return res["chain_segs"] / max(res["chain_pkts"], 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(
        os.path.dirname(HERE), "build", "bench", "sctp-loop-ep"))
    ap.add_argument("--pathmtu", type=int, action="append")
    ap.add_argument("--clusters", default="0,16384,65536,262144")
    ap.add_argument("--json")
    ap.add_argument("--rep-movsb", action="store_true",
                    help="leave glibc's memcpy its `rep movsb` for large "
                    "copies (callgrind counts it once per byte)")
    a = ap.parse_args()
    if not a.rep_movsb:
        # glibc copies blocks above x86_rep_movsb_threshold (a few KiB)
        # with `rep movsb`, which callgrind counts once per BYTE, below it
        # with vector loops (once per 32-64 bytes): larger buffers copy in
        # larger blocks and would look 4x dearer in memcpy for no real
        # cost.  Vector loops at every size make the settings comparable.
        os.environ["GLIBC_TUNABLES"] = (
            "glibc.cpu.x86_rep_movsb_threshold=1073741824")
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
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"tool": "tx_cluster_callgrind", "size": 65536,
                       "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
