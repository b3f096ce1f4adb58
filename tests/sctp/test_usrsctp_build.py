#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""test_usrsctp_build.py SO - the usrsctp inside the transport library is
the optimised build, linked in privately.

  1. SO has no dynamic dependency on a usrsctp shared library (Debian's
     libusrsctp2 is compiled at -O0);
  2. SO's usrsctp code is optimised (sctp/check_usrsctp_opt.py: functions
     that open with a frame pointer; Debian's library: ~60%, ours: ~0%),
     and the same check REJECTS the system library when it is installed,
     so the check itself is shown to discriminate;
  3. SO exports no usrsctp symbol: an MPI application that links its own
     usrsctp keeps it;
  4. with usrsctp_alloc=mimalloc, usrsctp's code calls only mimalloc's mi_
     API, and SO defines no malloc/free/mi_ symbol for anyone else: the
     application's malloc is not replaced.
"""
import re
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..",
                                "integration"))
from harness import check, done, run  # noqa: E402

SO = sys.argv[1]
CHECK = os.environ["SDP_USRSCTP_CHECK"]
SYSTEM_LIB = "/usr/lib/x86_64-linux-gnu/libusrsctp.so.2"


def test_not_linked_dynamically():
    out = subprocess.run(["ldd", SO], capture_output=True, text=True,
                         check=True).stdout
    check("usrsctp" not in out, f"{SO} loads a usrsctp library:\n{out}")


def test_optimised():
    r = subprocess.run([sys.executable, CHECK, SO], capture_output=True,
                       text=True)
    check(r.returncode == 0, f"{r.stdout}{r.stderr}")
    print("    " + r.stdout.strip())
    if os.path.exists(SYSTEM_LIB):
        r = subprocess.run([sys.executable, CHECK, SYSTEM_LIB],
                           capture_output=True, text=True)
        check(r.returncode != 0, "the check accepts Debian's -O0 library: "
              f"it does not discriminate\n{r.stdout}")
        print("    Debian's library is rejected: " +
              r.stderr.strip().split(": it is")[0].split(": ", 1)[-1])


def test_symbols_hidden():
    out = subprocess.run(["nm", "-D", "--defined-only", SO],
                         capture_output=True, text=True, check=True).stdout
    leaked = [l.split()[-1] for l in out.splitlines()
              if l.split()[-1].startswith(("usrsctp_", "sctp_"))]
    check(not leaked, f"{len(leaked)} usrsctp symbols exported, e.g. "
          f"{leaked[:5]}")


def calls_by_caller(so):
    """{callee: set(callers)} for direct calls in SO's disassembly."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", so],
                         capture_output=True, text=True, check=True).stdout
    calls, fn = {}, None
    for line in out.splitlines():
        m = re.match(r"^[0-9a-f]+ <([^>]+)>:$", line)
        if m:
            fn = m.group(1)
            continue
        m = re.search(r"\bcall\s+[0-9a-f]+ <([^>]+)>", line)
        if m and fn:
            calls.setdefault(m.group(1), set()).add(fn)
    return calls


def test_allocator():
    alloc = os.environ.get("SDP_USRSCTP_ALLOC", "mimalloc")
    calls = calls_by_caller(SO)
    own = re.compile(r"^(usrsctp_|sctp_|sctp6_|m_|sb|so[a-z]|uma_)")
    libc = {c: sorted(f for f in fs if own.match(f))
            for c, fs in calls.items()
            if c.split("@")[0] in ("malloc", "calloc", "realloc", "free")}
    libc = {c: fs for c, fs in libc.items() if fs}
    mi = sum(len(fs) for c, fs in calls.items()
             if c in ("mi_malloc", "mi_calloc", "mi_realloc", "mi_free"))
    if alloc == "libc":
        check(mi == 0, f"usrsctp_alloc=libc but {mi} calls to mi_*")
        return
    check(not libc, f"usrsctp functions still call glibc: {libc}")
    check(mi > 50, f"only {mi} call sites of mi_malloc/mi_free in {SO}")
    out = subprocess.run(["nm", "-D", "--defined-only", SO],
                         capture_output=True, text=True, check=True).stdout
    exported = [l.split()[-1] for l in out.splitlines()
                if re.match(r"^(malloc|calloc|realloc|free|mi_\w+)$",
                            l.split()[-1])]
    check(not exported, f"{SO} exports allocator symbols {exported[:5]}: "
          "it would replace the application's malloc")
    print(f"    {mi} usrsctp call sites use mimalloc; none uses glibc; "
          "no allocator symbol exported")


if __name__ == "__main__":
    run("no usrsctp shared library loaded", test_not_linked_dynamically)
    run("usrsctp code optimised (and the check rejects -O0)", test_optimised)
    run("no usrsctp symbol exported", test_symbols_hidden)
    run("usrsctp's allocations, and only those, go to mimalloc",
        test_allocator)
    done()
