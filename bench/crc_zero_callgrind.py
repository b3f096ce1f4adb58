#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""crc_zero_callgrind.py - instructions per MiB on the data sender and on
the receiver of sdp-perf over a memif pair (1 MiB messages, bw test, the
default MTU 9000), each endpoint under callgrind, with the zero checksum
(crc=none, RFC 9653: memif's crc=auto) and with ISA-L's CRC32c
(crc=isal), per endpoint also the instructions in the dataplane's CRC
(inclusive cost of dp_sctp_crc_fill, dp_sctp_crc_fill_segs and
dp_sctp_crc_check; sdp-perf's own end-to-end CRC32c of every message, the
same in both modes, is not among them).  glibc's memcpy is kept off
`rep movsb` (as bench/tx_cluster_callgrind.py): callgrind counts it once
per byte moved, which would make memif's copy look far dearer than it is.

callgrind counts instructions: repeatable on a loaded machine, unlike
wall-clock bandwidth.  Per setting and endpoint, (Ir(--count C2) -
Ir(--count C1)) / ((C2 - C1) MiB): one MiB without the set-up.  Caveat:
a polling endpoint also counts the empty polls it makes while it waits
for the other (its start under valgrind, the link, the window), which
varies from run to run; both ends run idle_sleep_us=2000 (after 256 empty
polls, 2 ms per poll instead of 20 us) to keep that small, yet the totals
carry some timing noise.  The CRC functions' instructions do not.

  bench/crc_zero_callgrind.py [--counts 16,48] [--modes none,isal]
      [--reps 1] [--json FILE]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "apps"))
import sdp_launch  # noqa: E402
import bench_common  # noqa: E402

MIB = 1 << 20
DP_EXTRA = "link_wait_ms=120000 idle_sleep_us=2000"


DP_CRC_FUNCS = ("dp_sctp_crc_fill", "dp_sctp_crc_fill_segs",
                "dp_sctp_crc_check")


def annotate(out):
    """(total Ir, inclusive Ir of the dataplane's CRC functions) of one
    callgrind file."""
    total, rows = bench_common.callgrind_rows(out, "--inclusive=yes")
    crc = sum(n for n, what in rows
              if what.split(" ")[0].split(":")[-1] in DP_CRC_FUNCS)
    return total, crc


def run(count, mode, tmp, idx):
    """One sdp-perf bw run of @count 1 MiB messages, both endpoints under
    callgrind; {"sender": (Ir, crc Ir), "receiver": ...}."""
    ep = sdp_launch.find_bin("sdp-perf-ep")
    outs = {r: os.path.join(tmp, f"cg-{mode}-{count}-{idx}-{r}.out")
            for r in ("sender", "receiver")}

    def vg(role):
        return ["valgrind", "--tool=callgrind",
                f"--callgrind-out-file={outs[role]}", ep]
    common = ["--json", "--crc", mode, "--deadline-s", "1200"]
    with sdp_launch.Testbed("memif", job=f"cz{os.getpid() % 1000000}") as tb:
        srv = vg("receiver") + [
            "--server", "--idle-exit-ms", "600000", "--dp",
            tb.dp_config(tb.server_idx, DP_EXTRA)] + common
        cli = vg("sender") + [
            "--peer", tb.ip(tb.server_idx), "--test", "bw", "--size",
            str(MIB), "--count", str(count), "--dp",
            tb.dp_config(tb.client_idx, DP_EXTRA)] + common
        (crc, cout, cerr), (src, sout, serr) = sdp_launch.run_pair(
            tb, srv, cli, 1500, server_grace=300)
    c = sdp_launch.last_json(cout)
    s = sdp_launch.last_json(sout)
    if crc != 0 or src != 0 or c is None or s is None or \
            not (c["verified"] and s["verified"]):
        sys.exit(f"count {count} crc={mode}: failed (client rc {crc}, "
                 f"server rc {src})\n{cerr[-2000:]}\n{serr[-2000:]}")
    if c["dp"]["crc"] != mode or s["dp"]["crc"] != mode:
        sys.exit(f"crc={mode} asked, ports ran {c['dp']['crc']}/"
                 f"{s['dp']['crc']}")
    res = {r: annotate(outs[r]) for r in outs}
    res["retrans"] = c["usrsctp"]["retrans_chunks"]
    res["dp"] = {"sender": c["dp"], "receiver": s["dp"]}
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--counts", default="16,48")
    ap.add_argument("--modes", default="none,isal")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--json")
    a = ap.parse_args()
    c1, c2 = (int(x) for x in a.counts.split(","))
    bench_common.vector_memcpy()
    rows = []
    sdp_launch.install_signal_handlers()
    with tempfile.TemporaryDirectory(prefix="crczero-cg-") as tmp:
        for rep in range(a.reps):
            for mode in a.modes.split(","):
                r1 = run(c1, mode, tmp, rep)
                r2 = run(c2, mode, tmp, rep)
                row = {"mode": mode, "rep": rep,
                       "load1": os.getloadavg()[0],
                       "retrans": [r1["retrans"], r2["retrans"]]}
                for side in ("sender", "receiver"):
                    row[side + "_ir_per_mib"] = \
                        (r2[side][0] - r1[side][0]) / (c2 - c1)
                    row[side + "_crc_ir_per_mib"] = \
                        (r2[side][1] - r1[side][1]) / (c2 - c1)
                    d = r2["dp"][side]
                    row[side + "_dp"] = {k: d[k] for k in (
                        "crc_sw", "crc_zero_tx", "crc_zero_rx", "tx_pkts",
                        "rx_pkts")}
                rows.append(row)
                print(f"crc={mode:4} rep {rep}: sender "
                      f"{row['sender_ir_per_mib'] / 1e6:.2f} M Ir/MiB "
                      f"(CRC {row['sender_crc_ir_per_mib'] / 1e6:.2f} M), "
                      f"receiver {row['receiver_ir_per_mib'] / 1e6:.2f} M "
                      f"Ir/MiB (CRC "
                      f"{row['receiver_crc_ir_per_mib'] / 1e6:.2f} M), "
                      f"retrans {row['retrans']}, load {row['load1']:.1f}",
                      flush=True)
    summary = {}
    for mode in a.modes.split(","):
        mine = [r for r in rows if r["mode"] == mode]
        summary[mode] = {k: statistics.median(r[k] for r in mine)
                         for k in ("sender_ir_per_mib", "receiver_ir_per_mib",
                                   "sender_crc_ir_per_mib",
                                   "receiver_crc_ir_per_mib")}
    print(json.dumps(summary, indent=1))
    bench_common.write_json(a.json, "crc_zero_callgrind", size=MIB,
                            counts=[c1, c2], rows=rows, median=summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
