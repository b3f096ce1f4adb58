#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Applications that compute between exchanges (apps/sdp_mpi_proxy.c, the
halo pattern: C us of computation, then 4 exchanges of 160 KiB with the
other rank, every byte checked), two ranks over a memif pair.

With inline progress nothing moves a rank's SCTP stack while the rank
computes: bytes a send left in usrsctp (held back by the congestion
window) wait for the rank's next MPI call, and its peer waits with them.
The transport's STATS line counts it: "linger".unsent_stalls is the number
of progress calls that returned with bytes untransmitted and were followed
by the next one more than 1 ms later (the rank computed meanwhile).

1. SG max_burst=4 (usrsctp's own default: cwnd cut to flight + 4 MTUs at
   every output, so every exchange after a computation is window-limited)
   and LINGER_US=0: the stall is there, in most steps (the counter works).
2. The same with the default LINGER_US: a progress call polls on while
   its bytes are untransmitted and leave ("linger".done counts those that
   saw every byte leave: at least one), so few steps leave bytes behind
   (0-4 of 100 on a quiet machine; where the peer is descheduled, as on a
   loaded machine, lingering cannot help: at most a fifth of the steps, or
   no more than without lingering).
3. Defaults (max_burst=0): the window is not cut after a computation, so
   nothing is left in usrsctp at all in steady state.
Each run also checks the exit drain ended without a timeout
("exit".timed_out == 0).
"""

import json
import os
import re
import subprocess

import harness
from harness import check, run

APPS = harness.APPS
BUILD = os.environ.get("SDP_BUILD_DIR", "")
STEPS = 100


def halo(impl, *env):
    exe = os.path.join(BUILD, "apps", f"sdp-mpi-proxy-{impl}")
    check(os.access(exe, os.X_OK), f"{exe} missing (SDP_BUILD_DIR)")
    cmd = [os.path.join(APPS, "sdp-mpirun"), "--mpi", impl, "-np", "2",
           "--fabric", "memif", "--timeout", "240",
           "--env", "UCX_SCTP_DPDK_STATS=y"]
    for kv in env:
        cmd += ["--env", kv]
    cmd += [exe, "--pattern", "halo", "--size", "163840", "--compute-us",
            "2000", "--steps", str(STEPS)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=400)
    check(r.returncode == 0, f"{' '.join(cmd)}: {harness.job_failure(r)}")
    res = [json.loads(l) for l in r.stdout.splitlines()
           if l.startswith("{")]
    check(res and res[-1]["verified"], f"no verified result:\n{r.stdout}")
    stats = [json.loads(m) for m in
             re.findall(r"^sctp_dpdk stats: (\{.*\})$", r.stderr, re.M)]
    check(len(stats) == 2, f"{len(stats)} STATS lines, not 2:\n"
          f"{r.stderr[-3000:]}")
    for s in stats:
        check(s["exit"]["timed_out"] == 0,
              f"exit drain timed out: {s['exit']}")
    lg = [s["linger"] for s in stats]
    print(f"    {' '.join(env) or 'defaults'}: comm "
          f"{res[-1]['comm_us_mean']:.0f} us/step, linger {lg}")
    return lg


def stalls(lg):
    return sum(x["unsent_stalls"] for x in lg)


WITHOUT = []


def test_window_limited_without_linger():
    lg = halo("mpich", "UCX_SCTP_DPDK_SG=max_burst=4",
              "UCX_SCTP_DPDK_LINGER_US=0")
    check(stalls(lg) >= STEPS * 3 // 10,
          f"only {stalls(lg)} stalls in {STEPS} steps without linger: the "
          f"counter does not see bytes left behind ({lg})")
    WITHOUT.append(stalls(lg))


def test_window_limited_with_linger():
    lg = halo("mpich", "UCX_SCTP_DPDK_SG=max_burst=4")
    check(sum(x["done"] for x in lg) > 0,
          f"no linger ever saw its bytes leave: {lg}")
    # A linger cannot help while the peer is descheduled (a loaded
    # machine), so the bound is relative to the run without it as well.
    bound = max(STEPS // 5, WITHOUT[0] if WITHOUT else STEPS)
    check(stalls(lg) <= bound,
          f"{stalls(lg)} steps in {STEPS} left bytes in usrsctp while the "
          f"rank computed, despite lingering (bound {bound}; {lg})")


def test_defaults_leave_nothing_behind():
    for impl in os.environ.get("SDP_MPI_IMPLS", "mpich").split():
        lg = halo(impl)
        check(stalls(lg) <= STEPS // 10,
              f"{impl}: {stalls(lg)} of {STEPS} steps left bytes in "
              f"usrsctp while the rank computed ({lg})")


if __name__ == "__main__":
    run("window-limited halo, LINGER_US=0: the stall is counted",
        test_window_limited_without_linger)
    run("window-limited halo, linger on: bytes leave before the rank "
        "computes", test_window_limited_with_linger)
    run("defaults (max_burst=0, linger): nothing left behind",
        test_defaults_leave_nothing_behind)
    harness.done()
