# SPDX-License-Identifier: BSD-3-Clause
"""bench_common - what the seed scripts (bench/seed001.py, bench/seed003.py)
share: parsing a tc-style rate, and the end of a run (print the table,
write --json, draw --plot); and what the callgrind scripts share: the
sctp-loop-ep command line (loop_parser) and run (loop_run), glibc's memcpy kept off
`rep movsb` (vector_memcpy), the reading of a callgrind output file
(callgrind_rows) and the --json file (write_json).

  import bench_common
  bench_common.rate_bps("20mbit", "seed001")  -> 20e6
  bench_common.emit(out, table_text, a, plot_fn, "seed001")
"""
import argparse
import json
import os
import re
import subprocess
import sys

RATE_RE = re.compile(r"^(\d+(?:\.\d+)?)(k|m|g)?bit$")


def rate_bps(s, who):
    """A tc rate ('200mbit', '1.5gbit', '800kbit') in bit/s; exits naming
    --rate and the expected form when it is not one."""
    m = RATE_RE.match(s.lower())
    if not m:
        sys.exit(f"{who}: --rate {s!r}: expected e.g. 200mbit")
    return float(m.group(1)) * {None: 1, "k": 1e3, "m": 1e6,
                                "g": 1e9}[m.group(2)]


def emit(out, table_text, a, plot_fn, who):
    """Print @table_text; write @out to a.json and plot_fn(out, a.plot) if
    those options were given."""
    print(table_text)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
        print(f"{who}: results written to {a.json}", file=sys.stderr,
              flush=True)
    if a.plot:
        plot_fn(out, a.plot)


CG_ROW_RE = re.compile(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)$")


def callgrind_rows(out, *opts):
    """callgrind_annotate of the file @out (extra options @opts, e.g.
    "--inclusive=yes"): (the program's total Ir, [(Ir, what)] for every
    function row, "what" as callgrind_annotate names it)."""
    ann = subprocess.run(["callgrind_annotate", "--threshold=100",
                          "--auto=no", *opts, out],
                         capture_output=True, text=True, check=True).stdout
    total, rows = 0, []
    for line in ann.splitlines():
        m = CG_ROW_RE.match(line)
        if not m:
            continue
        n = int(m.group(1).replace(",", ""))
        if "PROGRAM TOTALS" in m.group(2):
            total = n
        else:
            rows.append((n, m.group(2)))
    return total, rows


HERE = os.path.dirname(os.path.abspath(__file__))
LOOP_EP = os.path.join(os.path.dirname(HERE), "build", "bench",
                       "sctp-loop-ep")


def loop_parser(doc, pathmtu_default=None):
    """The callgrind scripts' parser: description @doc, --bin (the
    usrsctp loop, sctp-loop-ep) and --pathmtu (repeatable when
    @pathmtu_default is None, else one value)."""
    ap = argparse.ArgumentParser(description=doc,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--bin", default=LOOP_EP)
    if pathmtu_default is None:
        ap.add_argument("--pathmtu", type=int, action="append")
    else:
        ap.add_argument("--pathmtu", type=int, default=pathmtu_default)
    return ap


def vector_memcpy():
    """glibc copies blocks above x86_rep_movsb_threshold (a few KiB) with
    `rep movsb`, which callgrind counts once per BYTE, below it with
    vector loops (once per 32-64 bytes): larger buffers copy in larger
    blocks and would look 4x dearer in memcpy for no real cost.  Vector
    loops at every size (for this process's children) make the settings
    comparable."""
    os.environ["GLIBC_TUNABLES"] = (
        "glibc.cpu.x86_rep_movsb_threshold=1073741824")


def write_json(path, tool, **fields):
    """A callgrind script's --json file: {"tool": @tool, **fields} (in the
    order given); nothing when @path is None."""
    if path:
        with open(path, "w") as f:
            json.dump({"tool": tool, **fields}, f, indent=1)


def loop_run(cmd, timeout):
    """Run an sctp-loop-ep command line @cmd (under valgrind or not) and
    return its JSON result; exits naming the command when it fails, or
    when the run was not verified or dropped or damaged packets."""
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed (rc {r.returncode}):\n"
                 f"{r.stderr[-2000:]}")
    res = json.loads(r.stdout.strip().splitlines()[-1])
    if not res.get("verified") or res["fifo_drops"] or res["crc_bad"]:
        sys.exit(f"{' '.join(cmd)}: not verified or drops: {res}")
    return res
