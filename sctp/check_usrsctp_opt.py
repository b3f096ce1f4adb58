#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""check_usrsctp_opt.py LIB [--json] - refuse an unoptimised usrsctp.

Debian's libusrsctp2 is built at -O0 (configure.ac appends "-g -O0" by
default), which costs ~30% of the stack's throughput.  Code compiled at -O0
gives itself away: every function sets up a frame pointer (push %rbp;
mov %rsp,%rbp) and spills its argument registers into that frame, while
-O2 omits the frame pointer (x86-64) in nearly every function.  This
script disassembles the usrsctp functions in LIB (a static archive, a
shared library, or our transport .so that links usrsctp in) and counts the
functions that open with a frame pointer.  Above a quarter: unoptimised; exit 1
with a message naming the fix.
"""
import re
import subprocess
import sys

THRESHOLD = 0.25
# usrsctp's own functions: its API and its kernel-style internals.
OWN = re.compile(r"^(usrsctp_|sctp_|sctp6?_|m_|sb|so|user_)")


def frame_pointer_share(lib):
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", lib],
                         capture_output=True, text=True, check=True).stdout
    total = framed = 0
    name, first = None, []
    for line in out.splitlines() + ["<end>:"]:
        m = re.match(r"^[0-9a-f]+ <([^>]+)>:$", line)
        if m or line == "<end>:":
            if name and OWN.match(name) and first:
                total += 1
                text = " ".join(first[:3])
                if re.search(r"push\s+%rbp.*mov\s+%rsp,%rbp", text):
                    framed += 1
            name, first = (m.group(1) if m else None), []
            continue
        parts = line.split("\t")
        if name and len(parts) >= 2 and len(first) < 3:
            ins = parts[-1].strip()
            if ins.startswith(("endbr64", "nop")):
                continue
            first.append(ins)
    return framed, total


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: check_usrsctp_opt.py LIB")
    lib = sys.argv[1]
    framed, total = frame_pointer_share(lib)
    if total < 100:
        sys.exit(f"check_usrsctp_opt: only {total} usrsctp functions found "
                 f"in {lib}: is usrsctp linked into it?")
    share = framed / total
    msg = (f"usrsctp in {lib}: {framed} of {total} functions "
           f"({share:.0%}) set up a frame pointer")
    if share > THRESHOLD:
        sys.exit(f"check_usrsctp_opt: {msg}: it is compiled without "
                 f"optimisation (Debian's libusrsctp2 is -O0).  Run "
                 f"scripts/setup.sh, which builds it optimised "
                 f"(scripts/setup-usrsctp.sh), and configure meson with "
                 f"-Dusrsctp_prefix=<its prefix>")
    print(f"check_usrsctp_opt: ok: {msg} (optimised)")


if __name__ == "__main__":
    main()
