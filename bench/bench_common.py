# SPDX-License-Identifier: BSD-3-Clause
"""bench_common - what the seed scripts (bench/seed001.py, bench/seed003.py)
share: parsing a tc-style rate, and the end of a run (print the table,
write --json, draw --plot); and the callgrind scripts' reading of a
callgrind output file (callgrind_rows).

  import bench_common
  bench_common.rate_bps("20mbit", "seed001")  -> 20e6
  bench_common.emit(out, table_text, a, plot_fn, "seed001")
"""
import json
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
