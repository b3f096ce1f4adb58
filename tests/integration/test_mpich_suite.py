#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""MPICH's own test suite (test/mpi/pt2pt of the installed Debian mpich,
fetched and built by scripts/setup-mpich-tests.sh) over sctp_dpdk and over
UCX's tcp transport in the same run, through apps/sdp-mpirun.

Every testlist entry (program, process count, args, MPIR_CVAR_ env, time
limit) runs twice:
  sctp_dpdk  2 ranks on a memif pair, 1 or more than 2 on the af_packet
             bridge (UCX_TLS=sctp_dpdk,self);
  tcp        the same count on the bridge, kernel addresses of the same
             veths (--tls tcp, UCX_TLS=tcp,self): what a user would pick.
Each run has a deadline (the entry's timeLimit, else DEFAULT_LIMIT_S; the
subset caps it at SUBSET_LIMIT_S, --limit at any value) and
passes when it exits 0 and rank 0 printed MPICH's "No Errors".  The result
of each is pass, fail or hang (or error: the launcher could not set the
testbed up, so nothing was tried; that fails the run); the run fails when a
test passes over tcp but not over sctp_dpdk.  sctp_dpdk runs first: when it passed, no tcp
result can fail the run, so tcp gets at most TCP_LIMIT_AFTER_PASS_S (its
result is then only a comparison; "hang" means "not done by that cap");
when it did not pass, tcp gets the full deadline.

Entries not run, with reasons (counted and printed):
  xfail=...   upstream marks them expected to fail (runtests skips them
              unless configured --enable-xfail);
  mem=G > 2   large_message needs 6.5 GB per process; this machine is
              shared.

  test_mpich_suite.py [--full] [--only NAME ...] [--limit S] [--markdown FILE]
                      [--fabric memif|bridge|vhost] [--np MIN-MAX] [--no-tcp]
      default: the SUBSET below (the meson test); --np 4-8: the entries
      of pt2pt/testlist with 4 to 8 processes; --full: every entry of
      pt2pt/testlist (~10 min; results in docs/CONFORMANCE.md); --fabric
      puts every sctp_dpdk run on that fabric (vhost: Open vSwitch);
      --no-tcp runs sctp_dpdk only, and every run must pass (the meson
      test mpich-suite-vhost: --fabric vhost --np 4-8 --vhost-set
      --no-tcp --limit 90).
Environment: SDP_MPICH_TESTS = the configured test/mpi directory.
"""

import argparse
import os
import re
import subprocess
import sys
import time

import harness

DEFAULT_LIMIT_S = 180  # MPICH's runtests default (MPITEST_TIMEOUT)
# The subset's cap: each of its tests takes < 10 s when it works, and UCX
# tcp often hangs in MPICH's MPI_Finalize (see docs/CONFORMANCE.md), which
# would otherwise cost 180 s each.
SUBSET_LIMIT_S = 60
# tcp's deadline once sctp_dpdk passed (the verdict no longer depends on
# it): a working run takes < 10 s; UCX tcp's MPI_Finalize hangs cost the
# whole deadline otherwise.
TCP_LIMIT_AFTER_PASS_S = 20
MAX_MEM_GB = 2.0
# The meson test: the two tests reported hanging over sctp_dpdk, their
# siblings, and one of each kind of traffic (many ranks, ANY_SOURCE,
# probes, big messages, cancel), ~3 min.
SUBSET = [
    "sendrecv3 2 arg=-isendrecv",
    "sendrecv3 2",
    "precv_anysrc 2 timeLimit=60",
    "precv_anysrc 2 timeLimit=60 env=MPIR_CVAR_CH4_OFI_AM_LONG_FORCE_PIPELINE=true",
    "precv_anysrc_exp 2 timeLimit=60",
    "anyall 2",
    "isendrecv 4",
    "sendall 4",
    "mprobe 2",
    "huge_anysrc 2",
    "rcancel 2",
    "pt2pt_large 2",
]
# The meson test mpich-suite-vhost (--fabric vhost --no-tcp): programs of
# the 4-8 process entries, each kind once: many ranks sending to one
# (sendall, sendflood), ANY_SOURCE probes (icprobe, probe_unexp), buffered
# and request-freeing sends (bsend5, rqfreeb), ~1 min.
VHOST_SET = ["sendall", "icprobe", "probe_unexp", "bsend5", "rqfreeb",
             "isendrecv"]


class Entry:
    def __init__(self, line):
        self.line = " ".join(line.split())
        tok = self.line.split()
        self.name, self.np = tok[0], int(tok[1])
        self.args, self.env, self.skip = [], [], None
        self.limit = DEFAULT_LIMIT_S
        for t in tok[2:]:
            if "=" not in t:
                continue  # e.g. sendself's stray path token; runtests ignores it
            k, v = t.split("=", 1)
            if k == "arg":
                self.args.append(v)
            elif k == "env":
                self.env.append(v)
            elif k == "timeLimit":
                self.limit = int(v)
            elif k == "xfail":
                self.skip = "xfail upstream"
            elif k == "mem" and float(v) > MAX_MEM_GB:
                self.skip = f"needs {v} GB per process"


def read_testlist(path):
    entries = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                entries.append(Entry(line))
    return entries


_runs = 0


SCTP_FABRIC = None  # --fabric: where the sctp_dpdk runs go


def run_one(e, tls, tests_dir, limit):
    """One run of entry e over tls with a deadline of limit seconds:
    ('pass'|'fail'|'hang', seconds, log)."""
    global _runs
    _runs += 1
    job = f"m{os.getpid() % 10000:04d}{_runs % 1000:03d}"
    fabric = "memif" if (tls == "sctp_dpdk" and e.np == 2) else "bridge"
    if tls == "sctp_dpdk" and SCTP_FABRIC:
        fabric = SCTP_FABRIC
    cmd = [os.path.join(harness.APPS, "sdp-mpirun"), "--mpi", "mpich",
           "--fabric", fabric, "--tls", tls, "-np", str(e.np),
           "--job", job, "--timeout", str(limit)]
    for kv in e.env:
        cmd += ["--env", kv]
    cmd += [os.path.join(tests_dir, "pt2pt", e.name)] + e.args
    t0 = time.monotonic()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=limit + 120)
        rc, out = r.returncode, r.stdout + r.stderr
    except subprocess.TimeoutExpired as x:
        rc = 124
        out = (x.stdout or b"").decode(errors="replace") + \
              (x.stderr or b"").decode(errors="replace")
    dt = time.monotonic() - t0
    if rc == 124:
        return "hang", dt, out
    # The launcher could not build the virtual testbed: neither transport
    # was tried, so this run proves nothing either way.
    m = re.search(r"RuntimeError: (sdp-testbed .*)", out)
    if rc != 0 and m:
        return "error", dt, out + f"\n[testbed not set up: {m.group(1)}]"
    ok = rc == 0 and re.search(r"^\s*No Errors\s*$", out, re.M)
    if ok and tls == "sctp_dpdk" and e.np >= 2 and \
            len(re.findall(r"sdp\.sctp: endpoint on SCTP port", out)) < e.np:
        return "fail", dt, out + "\n[not every rank opened sctp_dpdk]"
    return ("pass" if ok else "fail"), dt, out


def suite(entries, tests_dir, markdown=None, tcp=True):
    rows, regressions, skipped = [], [], []
    for e in entries:
        label = e.line
        if e.skip:
            skipped.append((label, e.skip))
            print(f"    skip  {label}: {e.skip}", flush=True)
            continue
        res = {"sctp_dpdk": run_one(e, "sctp_dpdk", tests_dir, e.limit)}
        # Only a tcp pass where sctp_dpdk did not pass fails the run.
        tcp_limit = e.limit
        if res["sctp_dpdk"][0] == "pass":
            tcp_limit = min(e.limit, TCP_LIMIT_AFTER_PASS_S)
        res["tcp"] = (run_one(e, "tcp", tests_dir, tcp_limit) if tcp
                      else ("not run", 0.0, ""))
        s, t = res["sctp_dpdk"], res["tcp"]
        mark = ""
        if not tcp and s[0] != "pass":
            regressions.append(label)
            mark = "   <-- fails over sctp_dpdk"
        elif t[0] == "pass" and s[0] != "pass":
            regressions.append(label)
            mark = "   <-- passes over tcp only"
        elif t[0] == "hang" and tcp_limit < e.limit:
            mark = f"   (tcp capped at {tcp_limit} s: sctp_dpdk passed)"
        print(f"    {label:<72} sctp_dpdk {s[0]:<4} {s[1]:6.1f}s   "
              f"tcp {t[0]:<4} {t[1]:6.1f}s{mark}", flush=True)
        for tls in ("sctp_dpdk", "tcp"):
            if res[tls][0] not in ("pass", "not run"):
                tail = "\n".join(l for l in res[tls][2].splitlines()
                                 if not l.startswith("sdp."))[-1500:]
                print(f"      [{tls} output, last lines]\n" +
                      "\n".join("      | " + l for l in tail.splitlines()),
                      flush=True)
        rows.append((label, s, t))
    n = len(rows)
    both = sum(1 for _, s, t in rows if s[0] == t[0] == "pass")
    both = f"passed over both: {both}; " if tcp else ""
    print(f"    {n} run, {len(skipped)} skipped; {both}"
          f"sctp_dpdk pass/fail/hang "
          f"{sum(s[0] == 'pass' for _, s, _ in rows)}/"
          f"{sum(s[0] == 'fail' for _, s, _ in rows)}/"
          f"{sum(s[0] == 'hang' for _, s, _ in rows)}" +
          (f"; tcp {sum(t[0] == 'pass' for _, _, t in rows)}/"
           f"{sum(t[0] == 'fail' for _, _, t in rows)}/"
           f"{sum(t[0] == 'hang' for _, _, t in rows)}" if tcp else ""))
    if markdown:
        with open(markdown, "w") as f:
            f.write("| test (pt2pt/testlist entry) | sctp_dpdk | s | tcp | s |\n")
            f.write("|---|---|---:|---|---:|\n")
            for label, s, t in rows:
                f.write(f"| `{label}` | {s[0]} | {s[1]:.1f} | {t[0]} | "
                        f"{t[1]:.1f} |\n")
            for label, why in skipped:
                f.write(f"| `{label}` | not run: {why} | | not run | |\n")
    broken = [f"{label} over {tls}" for label, s, t in rows
              for tls, r in (("sctp_dpdk", s), ("tcp", t))
              if r[0] == "error"]
    harness.check(not broken, "the testbed could not be set up for: "
                  f"{broken} (output above names the failing command)")
    harness.check(not regressions,
                  (f"fails over sctp_dpdk: {regressions}" if not tcp else
                   f"passes over tcp but not over sctp_dpdk: {regressions}"))
    harness.check(n > 0, "no test ran")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--full", action="store_true",
                    help="every entry of pt2pt/testlist")
    ap.add_argument("--only", action="append", default=[],
                    help="only entries whose program is NAME")
    ap.add_argument("--markdown", help="write the result table here")
    ap.add_argument("--fabric", choices=["memif", "bridge", "vhost"],
                    help="the sctp_dpdk runs' fabric (default: memif for 2 "
                    "ranks, else bridge); tcp stays on the bridge")
    ap.add_argument("--no-tcp", action="store_true",
                    help="sctp_dpdk runs only (no UCX tcp baseline): every "
                    "run must pass")
    ap.add_argument("--vhost-set", action="store_true",
                    help="the programs of VHOST_SET (with --np: of that "
                    "process range)")
    ap.add_argument("--limit", type=int,
                    help="cap every deadline at this many seconds")
    ap.add_argument("--np", metavar="MIN-MAX",
                    help="only entries of MIN..MAX processes, from the "
                    "whole pt2pt testlist (e.g. 4-8: the many-rank ones)")
    a = ap.parse_args()
    np_range = None
    if a.np:
        m = re.fullmatch(r"(\d+)-(\d+)", a.np)
        if not m or int(m.group(1)) > int(m.group(2)):
            ap.error(f"--np {a.np!r}: expected MIN-MAX, e.g. 4-8")
        np_range = (int(m.group(1)), int(m.group(2)))
    global SCTP_FABRIC
    SCTP_FABRIC = a.fabric
    harness.require_root()
    tests_dir = os.environ.get("SDP_MPICH_TESTS", "")
    testlist = os.path.join(tests_dir, "pt2pt", "testlist")
    if not os.path.isfile(testlist):
        print(f"SDP_MPICH_TESTS={tests_dir!r}: no pt2pt/testlist there; run "
              "scripts/setup-mpich-tests.sh DEST and pass its last line "
              "(meson: -Dmpich_tests=DIR)")
        print("0 passed, 1 failed")
        sys.exit(1)
    if a.vhost_set:
        a.only = a.only + VHOST_SET
    if a.full or a.only or np_range:
        entries = read_testlist(testlist)
    else:
        listed = {e.line for e in read_testlist(testlist)}
        entries = [Entry(l) for l in SUBSET]
        missing = [e.line for e in entries if e.line not in listed]
        if missing:
            print(f"subset entries not in {testlist}: {missing}")
            print("0 passed, 1 failed")
            sys.exit(1)
    if a.only:
        entries = [e for e in entries if e.name in a.only]
    if np_range:
        entries = [e for e in entries
                   if np_range[0] <= e.np <= np_range[1]]
    limit = a.limit or (None if (a.full or a.only) else SUBSET_LIMIT_S)
    if limit:
        for e in entries:
            e.limit = min(e.limit, limit)
    what = ("full pt2pt testlist" if a.full else
            f"pt2pt {', '.join(a.only)}" if a.only else
            f"pt2pt entries of {a.np} processes" if np_range else
            "pt2pt subset")
    vs = "" if a.no_tcp else " vs UCX tcp"
    where = f" over {a.fabric}" if a.fabric else ""
    harness.run(f"MPICH test/mpi {what}: sctp_dpdk{where}{vs} "
                f"({len(entries)} entries)",
                lambda: suite(entries, tests_dir, a.markdown,
                              tcp=not a.no_tcp))
    harness.done()


if __name__ == "__main__":
    main()
