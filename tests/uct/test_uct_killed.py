#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""A UCT test killed mid-run leaves nothing (meson test uct-killed).

Runs a fixture test (argv[1], e.g. test_uct_rma: it forks a memif peer,
both bring their EAL up), waits until both runtime dirs exist, SIGKILLs
the test process (a runner's timeout, a crash: its exit cleanup never
runs) and then wants, within GONE_S: the peer gone (it dies with the
test), and the job's /run/sdp/<job> and /var/run/dpdk/sdp-<job>-* removed
(uct_fixture's reaper).  Before the reaper such tests left /run/sdp/uctt*
dirs behind.  Whatever is left is removed here after a failure."""

import glob
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))), "apps"))
import sdp_launch  # noqa: E402

UP_S = 90      # both EALs up
GONE_S = 30    # after the kill


def children(pid):
    """The direct children of @pid (the forked peer)."""
    kids = []
    for t in glob.glob(f"/proc/{pid}/task/*/children"):
        try:
            with open(t) as f:
                kids += [int(x) for x in f.read().split()]
        except OSError:
            pass
    return kids


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def main():
    if os.geteuid() != 0:
        print("FAIL: needs root (DPDK vdevs, /run/sdp): run as root")
        return 1
    p = subprocess.Popen([sys.argv[1]], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, start_new_session=True)
    job = f"uctt{p.pid}"
    run_dir = f"/run/sdp/{job}"
    stem = os.path.join(sdp_launch.DPDK_RUN_ROOT, f"sdp-{job}-")
    peers, fails = [], []
    try:
        end = time.time() + UP_S
        while time.time() < end and p.poll() is None and \
                len(glob.glob(stem + "*")) < 2:
            time.sleep(0.1)
        if len(glob.glob(stem + "*")) < 2 or p.poll() is not None:
            fails.append(f"{sys.argv[1]} did not bring both EALs up within "
                         f"{UP_S} s (rc {p.poll()})")
            return 1
        time.sleep(1)  # the transfer is under way
        peers = children(p.pid)
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=10)
        end = time.time() + GONE_S
        while time.time() < end and (
                any(alive(k) for k in peers) or os.path.exists(run_dir) or
                glob.glob(stem + "*")):
            time.sleep(0.2)
        if not peers:
            fails.append("the test had no forked peer to check")
        for k in peers:
            if alive(k):
                fails.append(f"peer pid {k} still runs {GONE_S} s after "
                             "its test was killed")
        if os.path.exists(run_dir):
            fails.append(f"{run_dir} (memif sockets) left {GONE_S} s after "
                         "the test was killed")
        for d in glob.glob(stem + "*"):
            fails.append(f"DPDK runtime dir {d} left {GONE_S} s after the "
                         "test was killed")
        return 1 if fails else 0
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=10)
        for k in peers:
            if alive(k):
                os.kill(k, signal.SIGKILL)
        time.sleep(0.5)
        shutil.rmtree(run_dir, ignore_errors=True)
        sdp_launch.remove_runtime_dirs(f"sdp-{job}-")
        for f in fails:
            print("FAIL:", f)
        if not fails:
            print(f"uct-killed: {os.path.basename(sys.argv[1])} SIGKILLed: "
                  f"peer {peers} gone, {run_dir} and {stem}* removed")


if __name__ == "__main__":
    sys.exit(main())
