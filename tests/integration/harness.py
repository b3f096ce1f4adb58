# SPDX-License-Identifier: BSD-3-Clause
"""Tiny harness for the integration tests: named checks, a summary line
"N passed, M failed", exit status 1 on any failure.  Each test is a
function; an exception fails it and the run goes on.

Crashes say where: every process the tests start may dump core (limits
set here are inherited, shared memory left out of the core), a process
that died by a signal is named with its signal, and a core that appears
in the working directory during a test fails that test with gdb's
backtrace of every thread (the core is removed after)."""

import glob
import json
import os
import subprocess
import sys
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
APPS = os.path.join(ROOT, "apps")
sys.path.insert(0, APPS)
import sdp_launch  # noqa: E402

sdp_launch.enable_cores()
os.environ["SDP_KEEP_CORES"] = "1"  # run() reports and removes them
# SIGTERM (meson's timeout, a CI cancel) unwinds like Ctrl-C: every
# `with Testbed` stops its endpoints, removes their runtime dirs and runs
# sdp-testbed down (memif sockets, namespaces) instead of leaving them.
sdp_launch.install_signal_handlers()

_passed = 0
_failed = 0


def require_root():
    if os.geteuid() != 0:
        # Not a skip: these tests are part of the suite and CI runs as root.
        print("integration tests need root (namespaces, DPDK ports)")
        print("0 passed, 1 failed")
        sys.exit(1)


def new_cores(since):
    """Core files written in the working directory since @since, with
    gdb's backtraces (the cores are removed: they are large)."""
    reports = []
    for c in sorted(glob.glob(os.path.join(os.getcwd(), "core*"))):
        try:
            if not os.path.isfile(c) or os.path.getmtime(c) < since:
                continue
        except OSError:
            continue
        reports.append(f"[core {c}]\n" + sdp_launch.core_backtrace(c))
        try:
            os.unlink(c)
        except OSError:
            pass
    return reports


def run(name, fn):
    global _passed, _failed
    print(f"--- {name}", flush=True)
    t0 = time.time() - 1
    err = None
    try:
        fn()
    except Exception:
        err = traceback.format_exc()
    cores = new_cores(t0)
    if cores:
        err = (err or "") + ("a process crashed during this test:\n" +
                             "\n".join(cores))
    if err is not None:
        _failed += 1
        print(f"FAIL {name}\n{err}", flush=True)
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
        sig = sdp_launch.signal_name(r.returncode)
        raise AssertionError(f"{name} {' '.join(args)} exited "
                             f"{r.returncode}"
                             f"{' (' + sig + ')' if sig else ''}\n"
                             f"stdout: {r.stdout}\n"
                             f"stderr: {r.stderr[-12000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def job_failure(r, tail=1500):
    """What a failed MPI launcher run said, for a check's message: the
    stderr tail, the stdout tail (hydra's BAD TERMINATION banner names the
    PID and exit code), then, last so that a truncated log still shows
    them, every stderr line naming an abort, a fatal error or a UCX error
    (a rank's own reason, which the other rank's logs can push out of a
    plain tail) and the exit status read the launcher's way: hydra returns
    a rank's signal number or its MPI error class (15 is MPI_ERR_OTHER)."""
    why = [ln for ln in r.stderr.splitlines()
           if any(k in ln for k in ("Abort", "abort", "Fatal", "fatal",
                                    "rror", "failed", "lost", "Terminated"))]
    return (f"--- stderr tail:\n{r.stderr[-tail:]}\n"
            f"--- stdout tail:\n{r.stdout[-tail:]}\n"
            f"--- stderr lines naming an error ({len(why)}):\n"
            + "\n".join(why[-30:]) +
            f"\n--- launcher rc {r.returncode}")


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)
