# SPDX-License-Identifier: BSD-3-Clause
"""Tiny harness for the integration tests: named checks, a summary line
"N passed, M failed", exit status 1 on any failure.  Each test is a
function; an exception fails it and the run goes on."""

import json
import os
import subprocess
import sys
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
APPS = os.path.join(ROOT, "apps")

_passed = 0
_failed = 0


def require_root():
    if os.geteuid() != 0:
        # Not a skip: these tests are part of the suite and CI runs as root.
        print("integration tests need root (namespaces, DPDK ports)")
        print("0 passed, 1 failed")
        sys.exit(1)


def run(name, fn):
    global _passed, _failed
    print(f"--- {name}", flush=True)
    try:
        fn()
    except Exception:
        _failed += 1
        print(f"FAIL {name}\n{traceback.format_exc()}", flush=True)
        return
    _passed += 1
    print(f"ok   {name}", flush=True)


def done():
    print(f"{_passed} passed, {_failed} failed")
    sys.exit(1 if _failed else 0)


def tool(name, *args, timeout=600):
    """Run apps/<name> --json ... and return its parsed JSON."""
    r = subprocess.run([os.path.join(APPS, name), "--json"] + list(args),
                       capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise AssertionError(f"{name} {' '.join(args)} exited "
                             f"{r.returncode}\nstdout: {r.stdout}\n"
                             f"stderr: {r.stderr[-4000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)
