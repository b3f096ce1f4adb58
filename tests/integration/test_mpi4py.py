#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The test suite of mpi4py (upstream's own, for the installed
python3-mpi4py) under Open MPI over UCX_TLS=sctp_dpdk, two ranks on a memif
pair, through apps/sdp-mpirun.  `--fabric vhost|bridge --np N` runs it
over that fabric with N ranks instead (N files, N verdicts).

Excluded, with reasons:
  spawn, dynproc  MPI_Comm_spawn / connect-accept start or join processes
                  outside the launcher, which gives every rank its own
                  dataplane port up front; a spawned process has none.
  test_win        MPI_Win_create_dynamic + attach/detach crashes in
                  ucp_mem_unmap (ucs_rcache_region_invalidate, address
                  0x30) inside Open MPI 4.1.4's osc ucx with UCX 1.13.1;
                  reproduced the same with UCX_TLS=tcp on loopback, so not
                  this transport's.
On Open MPI 5 (Debian 13: 5.0.7 with UCX 1.18.1) also these (both
reproduced the same with --tls tcp, so not this transport's):
  test_util_sync  mpi4py.util.sync's RMA mutex and condition hang:
                  MPI_Fetch_and_op never returns (osc ucx's fence spins in
                  ucp_worker_fence; on COMM_SELF and on COMM_WORLD windows)
                  while the other rank waits in MPI_Compare_and_swap.
  test_util_pkl5.*.testWaitAll  (by name: mpi4py 4's runtests -x)
                  segfault in MPI_Waitall -> ompi_request_check_same_instance
                  (address 0x160): a request pml ucx completed at once
                  carries MPI_COMM_NULL's instance (open-mpi/ompi#12942).
  test_comm_inter.TestIntercommCreateFromGroups  (by name) "The PML being
                  used - ucx - does not support MPI sessions related
                  features" (MPI_Intercomm_create_from_groups).
  test_ulfm.*.testRevoke  (by name) MPI_Comm_revoke leaves
                  MPI_Comm_is_revoked false: Debian's Open MPI 5 is built
                  without ULFM's fault-tolerant PML support.
One-sided communication runs through osc ucx over the transport's put/get
(sctp_dpdk_rma.c): test_rma and test_rma_nb run (with Open MPI's osc
pt2pt they were skipped: it refuses MPI_THREAD_MULTIPLE).  UCX logs
"invalid atomic operation datatype" for the 1- and 2-byte fetch-and-op
cases osc ucx hands to UCP (also with tcp); those tests still pass.  The
skip count is printed."""

import argparse
import os
import re
import subprocess
import tempfile

import harness
from harness import check, run

EXCLUDE = ["spawn", "dynproc", "test_win"]
EXCLUDE_OMPI5 = ["test_util_sync"]
EXCLUDE_NAMES_OMPI5 = ["test_util_pkl5.*.testWaitAll",
                       "test_comm_inter.TestIntercommCreateFromGroups.*",
                       "test_ulfm.*.testRevoke"]


def openmpi_major():
    """Open MPI's major version, from `mpirun --version`."""
    out = subprocess.run(["mpirun", "--version"], capture_output=True,
                         text=True, timeout=60).stdout
    m = re.search(r"\(Open MPI\) (\d+)\.", out)
    check(m is not None, f"mpirun --version names no Open MPI: {out!r}")
    return int(m.group(1))


def test_suite(fabric="memif", np=2):
    tests = os.environ["SDP_MPI4PY_TESTS"]
    # Each rank writes its own file: on one shared stdout the two ranks'
    # verdicts interleave character by character now and then ("OOKK"),
    # which no parser can split (CI saw ran [1282, 1282] with one "OK").
    with tempfile.TemporaryDirectory(prefix="sdp-mpi4py-") as out_dir:
        suite = [os.path.join(tests, "runtests.py"), "--no-builddir"]
        for e in EXCLUDE:
            suite += ["-e", e]
        if openmpi_major() >= 5:
            for e in EXCLUDE_OMPI5:
                suite += ["-e", e]
            for x in EXCLUDE_NAMES_OMPI5:
                suite += ["-x", x]
        rank_cmd = ('exec /usr/bin/python3 "$@" '
                    '>"$0/rank.$OMPI_COMM_WORLD_RANK" 2>&1')
        cmd = [os.path.join(harness.APPS, "sdp-mpirun"), "--mpi", "openmpi",
               "--fabric", fabric, "-np", str(np), "--timeout", "1200",
               "/bin/sh", "-c", rank_cmd, out_dir] + suite
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=1500)
        ranks = {}
        for name in sorted(os.listdir(out_dir)):
            with open(os.path.join(out_dir, name), errors="replace") as f:
                ranks[name] = f.read()
    out = r.stdout + r.stderr + "".join(ranks.values())
    tail = "\n".join(f"--- {n} (last 2000 chars)\n{t[-2000:]}"
                     for n, t in ranks.items())
    check(sorted(ranks) == sorted(f"rank.{i}" for i in range(np)),
          f"expected one output file per rank, got {sorted(ranks)}\n"
          f"{(r.stdout + r.stderr)[-4000:]}")
    ran = [int(m.group(1)) for t in ranks.values()
           for m in [re.search(r"^Ran (\d+) tests? in", t, re.M)] if m]
    oks = [n for n, t in ranks.items()
           if re.search(r"^OK( \(.*\))?$", t, re.M)]
    check(not any("FAILED (" in t for t in ranks.values()),
          f"a rank reported FAILED\n{tail}")
    check(r.returncode == 0, f"rc {r.returncode}\n{out[-4000:]}")
    check(len(ran) == np and len(oks) == np,
          f"expected both ranks to report OK: ran {ran}, ok {oks}\n{tail}")
    check(min(ran) >= 1000, f"only {ran} tests ran")
    eps = len(re.findall(r"sdp\.sctp: endpoint on SCTP port", out))
    check(eps >= np, "the ranks did not run over sctp_dpdk")
    print(f"    ran {ran} tests per rank, OK from {oks}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--fabric", choices=["memif", "bridge", "vhost"],
                    default="memif")
    ap.add_argument("--np", type=int, default=2)
    a = ap.parse_args()
    harness.require_root()
    run(f"mpi4py test suite, Open MPI, {a.np} ranks over sctp_dpdk "
        f"({a.fabric})", lambda: test_suite(a.fabric, a.np))
    harness.done()
