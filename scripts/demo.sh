#!/bin/bash
# demo.sh - the main job: install and build everything (scripts/setup.sh),
# then run an MPI latency/bandwidth sweep between two ranks over
# UCX_TLS=sctp_dpdk (usrsctp over DPDK, no kernel stack in the data path) on
# a memif pair and on a virtual two-host testbed (two network namespaces on
# a Linux bridge, af_packet ports), beside UCX's tcp transport on the same
# veths, with ratios; then a real application (LAMMPS) over both; then
# data-verified MPI checks over a memif pair with Open MPI.
set -eEuo pipefail
# Safety net: set -e stops at the first failing command; never without a word.
on_err() { # status line command
  [[ $- == *e* ]] && ((BASH_SUBSHELL == 0)) || return 0
  local fn=${FUNCNAME[1]:-main}
  if [[ $fn == main ]]; then fn=; else fn=" in $fn()"; fi
  echo "demo: error: line $2$fn: '$3' failed with status $1 (output above, if any, says why)" >&2
}
trap 'on_err $? $LINENO "$BASH_COMMAND"' ERR
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export SDP_BUILD_DIR=${SDP_BUILD_DIR:-$ROOT/build}
die() { echo "demo: error: $*" >&2; exit 1; }
"$ROOT/scripts/setup.sh" || die "scripts/setup.sh failed (see above)"

echo
echo "== MPI (MPICH, 2 ranks, MTU 9000, busy polling): sctp_dpdk over a memif pair"
echo "   and over af_packet on a bridge, vs UCX tcp over the same bridge"
"$ROOT/apps/sdp-mpirun" --help >/dev/null || die "apps/sdp-mpirun does not start (see above)"
"$ROOT/apps/sdp-mpi-compare" --mpi mpich --max-size 4194304 ||
  die "the MPI comparison failed (apps/sdp-mpi-compare; its messages are above)"

echo
echo "== An application: LAMMPS (Debian's, Open MPI), the Lennard-Jones melt, 2 ranks:"
echo "   sctp_dpdk over a memif pair vs UCX tcp over the bridge (loop and Comm time;"
echo "   the physics output must be identical over both)"
"$ROOT/bench/apps_vs_tcp.py" --cases lammps --layouts memif2 --rounds 1 ||
  die "the LAMMPS comparison failed (bench/apps_vs_tcp.py; its messages are above)"

echo
echo "== Open MPI over sctp_dpdk on a memif pair: data-verified checks"
# Only the verdict lines are shown; on failure, everything.
log=$(mktemp /tmp/sdp-demo.XXXXXX)
trap 'rm -f "$log"' EXIT
if ! "$ROOT/apps/sdp-mpirun" --mpi openmpi --fabric memif -np 2 \
    "$SDP_BUILD_DIR/tests/mpi_check_openmpi" --max-size 4194304 >"$log" 2>&1; then
  cat "$log" >&2
  die "the Open MPI checks over memif failed (full output above)"
fi
grep -E '^(ok|FAIL)|passed' "$log" || cat "$log"

echo
echo "== dataplane: sdp-ping over a memif pair (32 probes in flight)"
"$ROOT/apps/sdp-ping" --fabric memif --count 200000 --window 32 ||
  die "sdp-ping over memif failed (see above)"
