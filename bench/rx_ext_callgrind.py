#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""rx_ext_callgrind.py - instructions per 64 KiB message of the usrsctp
loop (bench/sctp_loop.c) with each received packet copied into usrsctp's
own mbufs (usrsctp_conninput) and kept in its buffer instead (--rx-ext:
usrsctp_conninput_ext, usrsctp-patches/0003, as sg does with rx_ext=1).
Both with --direct (usrsctp writes each packet into the FIFO buffer, as sg
has it write into a DPDK mbuf) and ISA-L CRC32c, as the dataplane does.

callgrind counts instructions: repeatable on a loaded machine.  Per
setting, (Ir(256) - Ir(128)) / 128 messages (tx_direct_callgrind.ir_run),
also the instructions in memcpy/memmove and in ISA-L's CRC.  glibc copies
large blocks with `rep movsb`, which callgrind counts once per byte moved:
memcpy's share of instructions overstates its share of time.

  bench/rx_ext_callgrind.py [--bin build/bench/sctp-loop-ep]
      [--pathmtu 8960 [--pathmtu 1460]] [--json FILE]
"""
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_common  # noqa: E402
from tx_direct_callgrind import per_msg, row_text  # noqa: E402


def main():
    ap = bench_common.loop_parser(__doc__)
    ap.add_argument("--json")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="rxext-cg-") as tmp:
        for mtu in a.pathmtu or [8960]:
            for ext in (False, True):
                extra = ("--sack-delay", "0") + (("--rx-ext",) if ext
                                                 else ())
                row = {"pathmtu": mtu, "rx_ext": ext}
                row.update(per_msg(a.bin, "direct", "isal", mtu, tmp, extra))
                rows.append(row)
                print(f"pathmtu {mtu} {'rx_ext' if ext else 'copy  '}: "
                      f"{row_text(row)}", flush=True)
    bench_common.write_json(a.json, "rx_ext_callgrind", size=65536,
                            rows=rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
