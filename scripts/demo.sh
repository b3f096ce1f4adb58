#!/bin/bash
# demo.sh - the main job: install and build everything (scripts/setup.sh),
# then run an MPI latency/bandwidth sweep between two ranks over
# UCX_TLS=sctp_dpdk (usrsctp over DPDK, no kernel stack in the data path) on
# a memif pair and on a virtual two-host testbed (two network namespaces on
# a Linux bridge, af_packet ports), beside UCX's tcp transport on the same
# veths, with ratios; then data-verified MPI checks over a memif pair with
# Open MPI.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export SDP_BUILD_DIR=${SDP_BUILD_DIR:-$ROOT/build}
"$ROOT/scripts/setup.sh"

echo
echo "== MPI (MPICH, 2 ranks, MTU 9000, busy polling): sctp_dpdk over a memif pair"
echo "   and over af_packet on a bridge, vs UCX tcp over the same bridge"
"$ROOT/apps/sdp-mpirun" --help >/dev/null
"$ROOT/apps/sdp-mpi-compare" --mpi mpich --max-size 4194304

echo
echo "== Open MPI over sctp_dpdk on a memif pair: data-verified checks"
"$ROOT/apps/sdp-mpirun" --mpi openmpi --fabric memif -np 2 \
  "$SDP_BUILD_DIR/tests/mpi_check_openmpi" --max-size 4194304 2>&1 |
  grep -E '^(ok|FAIL)|passed'

echo
echo "== dataplane: sdp-ping over a memif pair (32 probes in flight)"
"$ROOT/apps/sdp-ping" --fabric memif --count 200000 --window 32
