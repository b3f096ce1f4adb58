#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""A job's end costs no EXIT_TIMEOUT: MPICH's coll/opminloc (its own test
suite, scripts/setup-mpich-tests.sh) with 4 ranks on the bridge, several
runs in a row, every rank's transport STATS line read at exit.

At exit every association is shut down (SCTP SHUTDOWN after the queued
data) and the process polls until they are gone or EXIT_TIMEOUT (5 s)
passes.  Ranks that finish together often leave an association with
both ends in SHUTDOWN-SENT and everything acknowledged: each waited for
the other's SHUTDOWN ACK for the whole 5 s (about half of the runs took
6 s instead of 1).  The drain now lets an association go once nothing of
ours is unacknowledged, we owe no SACK and our SHUTDOWN is sent (or the
peer's SHUTDOWN answered): "exit".acked_unfinished counts them, and
"exit".timed_out (associations still open when EXIT_TIMEOUT passed) must
be 0 on every rank of every run.
"""

import json
import os
import re
import subprocess

import harness
from harness import check, run

APPS = harness.APPS
TESTS = os.environ.get("SDP_MPICH_TESTS", "")
RUNS = 6


def test_opminloc_bridge4():
    exe = os.path.join(TESTS, "coll", "opminloc")
    check(os.access(exe, os.X_OK),
          f"{exe} missing: scripts/setup-mpich-tests.sh builds it "
          "(SDP_MPICH_TESTS)")
    unfinished = 0
    for i in range(RUNS):
        cmd = [os.path.join(APPS, "sdp-mpirun"), "--mpi", "mpich", "-np",
               "4", "--fabric", "bridge", "--timeout", "120",
               "--env", "UCX_SCTP_DPDK_STATS=y", exe]
        r = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=300)
        check(r.returncode == 0 and "No Errors" in r.stdout,
              f"run {i}: {harness.job_failure(r)}")
        stats = [json.loads(m) for m in
                 re.findall(r"^sctp_dpdk stats: (\{.*\})$", r.stderr,
                            re.M)]
        check(len(stats) == 4, f"run {i}: {len(stats)} STATS lines, not "
              f"4:\n{r.stderr[-3000:]}")
        ex = [s["exit"] for s in stats]
        print(f"    run {i}: exit {ex}")
        check(all(e["timed_out"] == 0 for e in ex),
              f"run {i}: a rank's exit drain waited out EXIT_TIMEOUT: {ex}")
        unfinished += sum(e["acked_unfinished"] for e in ex)
    print(f"    {unfinished} associations let go with everything "
          f"acknowledged and the SHUTDOWN handshake unfinished")


if __name__ == "__main__":
    run("MPICH coll/opminloc, 4 ranks on the bridge: no drain waits out "
        "EXIT_TIMEOUT", test_opminloc_bridge4)
    harness.done()
