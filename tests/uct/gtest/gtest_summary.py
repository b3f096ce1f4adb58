#!/usr/bin/env python3
"""gtest_summary.py JSON LOG - one line "tests pass skip fail failed-names"
for one run of UCX's gtest binary (scripts/uct-gtest.sh).

UCX's own skips (UCS_TEST_SKIP_R: a missing capability, "Can't fill UCT
resources in the given time") are passes in gtest's JSON; they are counted
as skips from the "[     SKIP ]" lines of the log, so a transport that
skips a test is not credited with passing it.
"""
import json
import re
import sys


def main():
    try:
        with open(sys.argv[1]) as f:
            report = json.load(f)
    except (OSError, ValueError):
        print(0, 0, 0, 0, "-")
        return
    skipped = set()
    cur = None
    with open(sys.argv[2], errors="replace") as f:
        for line in f:
            m = re.match(r"\[ RUN      \] (\S+)", line)
            if m:
                cur = m.group(1)
            elif line.startswith("[     SKIP ]") and cur:
                skipped.add(cur)
    n = npass = nskip = nfail = 0
    bad = set()
    for suite in report.get("testsuites", []):
        for t in suite.get("testsuite", []):
            if t.get("status") == "NOTRUN":
                continue
            n += 1
            name = suite["name"] + "." + t["name"]
            if t.get("failures"):
                nfail += 1
                bad.add(t["name"].split("/")[0])
            elif name in skipped or t.get("result") == "SKIPPED":
                nskip += 1
            else:
                npass += 1
    print(n, npass, nskip, nfail, ",".join(sorted(bad)) or "-")


if __name__ == "__main__":
    main()
