#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""tx_direct_callgrind.py - instructions per 64 KiB message of the usrsctp
loop (bench/sctp_loop.c) with the packet copied out of usrsctp's buffer
(as sg_conn_output did) and written straight into the FIFO slot
(--direct: usrsctp_set_conn_output_alloc, as sg does for small packets)
and gathered from usrsctp's chain into the slot (--chain:
usrsctp_set_conn_output_chain, as sg sends packets from tx_chain_min
bytes on; the gather stands for memif's copy into its ring, which the
copy setting's memcpy stands for too), with and without ISA-L CRC32c (filled on output, verified on input, as the
dataplane does).

callgrind counts instructions: repeatable on a loaded machine.  Each
setting runs --count 128 and 256 messages; (Ir(256) - Ir(128)) / 128 is
one message without the set-up.  Per setting also the instructions in
memcpy and in ISA-L's CRC (by object), the same way.  Caveat: glibc's
memcpy copies large blocks with `rep movsb`, which callgrind counts once
per byte moved (the CPU does it in a few dozen cycles per KiB): memcpy's
share of instructions overstates its share of time.

  bench/tx_direct_callgrind.py [--bin build/bench/sctp-loop-ep]
      [--pathmtu 8960] [--modes copy,direct,chain] [--json FILE]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def ir_run(binary, count, mode, crc, pathmtu, tmp, extra=()):
    """mode: "copy", "direct" or "chain" (the loop's TX path); extra:
    more sctp-loop-ep options (e.g. --rx-ext)."""
    out = os.path.join(tmp, f"cg-{count}-{mode}-{crc}-{len(extra)}.out")
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
           binary, "--test", "bw", "--size", "65536", "--pathmtu",
           str(pathmtu), "--crc", crc, "--count", str(count)]
    if mode != "copy":
        cmd.append("--" + mode)
    cmd += list(extra)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed (rc {r.returncode}):\n"
                 f"{r.stderr[-2000:]}")
    res = json.loads(r.stdout.strip().splitlines()[-1])
    if not res.get("verified") or res["fifo_drops"] or res["crc_bad"]:
        sys.exit(f"{' '.join(cmd)}: not verified or drops: {res}")
    ann = subprocess.run(["callgrind_annotate", "--threshold=100", "--auto=no",
                          "--tree=none", out],
                         capture_output=True, text=True, check=True).stdout
    total = memcpy = isal = 0
    for line in ann.splitlines():
        m = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)$", line)
        if not m:
            continue
        n = int(m.group(1).replace(",", ""))
        what = m.group(2)
        if "PROGRAM TOTALS" in what:
            total = n
        elif "memcpy" in what or "memmove" in what:
            memcpy += n
        elif "libisal" in what:
            isal += n
    return {"total": total, "memcpy": memcpy, "isal_crc": isal,
            "packets": res["packets"]}


def per_msg(binary, mode, crc, pathmtu, tmp, extra=()):
    """Ir per 64 KiB message: (run of 256 - run of 128) / 128, so set-up
    and teardown cancel; the row's *_per_msg fields."""
    lo = ir_run(binary, 128, mode, crc, pathmtu, tmp, extra)
    hi = ir_run(binary, 256, mode, crc, pathmtu, tmp, extra)
    row = {f"{k}_per_msg": (hi[k] - lo[k]) / 128
           for k in ("total", "memcpy", "isal_crc")}
    row["packets_per_msg"] = (hi["packets"] - lo["packets"]) / 128
    return row


def row_text(row):
    return (f"{row['total_per_msg']:>9.0f} Ir/msg, memcpy "
            f"{row['memcpy_per_msg']:>8.0f}, isal "
            f"{row['isal_crc_per_msg']:>7.0f}, packets/msg "
            f"{row['packets_per_msg']:.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(
        os.path.dirname(HERE), "build", "bench", "sctp-loop-ep"))
    ap.add_argument("--pathmtu", type=int, default=8960)
    ap.add_argument("--json")
    ap.add_argument("--modes", default="copy,direct,chain",
                    help="comma-separated: copy (conn_output copies), "
                    "direct (0002), chain (0004)")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="txdirect-cg-") as tmp:
        for crc in ("isal", "none"):
            for mode in a.modes.split(","):
                row = {"crc": crc, "direct": mode == "direct",
                       "mode": mode, "pathmtu": a.pathmtu}
                row.update(per_msg(a.bin, mode, crc, a.pathmtu, tmp))
                rows.append(row)
                print(f"crc {crc:4} {mode:6}: {row_text(row)}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"tool": "tx_direct_callgrind", "size": 65536,
                       "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
