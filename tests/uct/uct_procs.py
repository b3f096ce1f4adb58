# SPDX-License-Identifier: BSD-3-Clause
"""uct_procs.py - process bookkeeping shared by the Python UCT tests
(test_uct_perftest, test_uct_multirail, test_uct_lanes).

Every process is started in its own session and remembered, waited for
with a deadline, and killed by PID at cleanup (never by name).  Verdicts
are printed one per line as they come and kept for the summary.
"""
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))), "apps"))
import sdp_launch  # noqa: E402

procs = []
results = []


def start(argv, env, base=None):
    """Start argv with @env on top of @base (None: env is the whole
    environment), output captured."""
    full = dict(base) if base is not None else {}
    full.update(env)
    p = subprocess.Popen(argv, env=full, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True,
                         start_new_session=True)
    procs.append(p)
    return p


def finish(p, deadline):
    """(returncode, output); (None, output) when killed at @deadline."""
    try:
        out, _ = p.communicate(timeout=max(1, deadline - time.time()))
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
        return None, out
    return p.returncode, out


def kill_all():
    """Kill every process this test started that still runs."""
    for p in procs:
        if p.poll() is None:
            p.kill()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
    procs.clear()


def remove_dirs(run_dir, prefixes):
    """The memif socket dir and each DPDK runtime dir /var/run/dpdk/<p>."""
    shutil.rmtree(run_dir, ignore_errors=True)
    for p in prefixes:
        sdp_launch.remove_runtime_dir(p)


def report(name, ok, detail, width=12):
    results.append(ok)
    print("%-*s %s  %s" % (width, name, "PASS" if ok else "FAIL", detail),
          flush=True)


def tail(out, n=8):
    return " | ".join(out.strip().splitlines()[-n:])
