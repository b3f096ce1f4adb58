#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# mpi_latency_ab.sh - MPI one-way latency of two builds of the transport and
# of UCX tcp, interleaved (per repetition: memif A, memif B, af_packet A,
# af_packet B, tcp), one JSON line per size per run; summarise with
# bench/mpi_latency_ab.py.  A = the "before" build directory (e.g. another
# commit built in a separate tree), B = this checkout's build.
#   bench/mpi_latency_ab.sh BEFORE_BUILD_DIR OUT.jsonl [REPS]
# Optional environment: AB_ENV_A / AB_ENV_B = space-separated VAR=VALUE
# given to the ranks of A / B (e.g. the same build twice, a setting off and
# on: AB_ENV_A=UCX_SCTP_DPDK_SACK_HOLD_US=0); AB_BENCH_ARGS replaces the
# benchmark's size and mode arguments (e.g. "--min-size 1048576 --max-size
# 1048576" for bandwidth too); AB_JOB prefixes the testbed job names
# (default lab: give each concurrent user of this script its own).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
A=$1 OUT=$2 REPS=${3:-5}
BENCH=$ROOT/build/apps/sdp-mpi-bench-mpich
read -r -a BARGS <<<"${AB_BENCH_ARGS:---min-size 8 --max-size 16384 --no-bw}"
envs() { local v; for v in $1; do printf -- '--env\n%s\n' "$v"; done; }
run() { # tag build fabric tls job [VAR=VALUE ...]
  local e=()
  [[ -n ${6:-} ]] && mapfile -t e < <(envs "$6")
  SDP_BUILD_DIR=$2 timeout 300 "$ROOT/apps/sdp-mpirun" --mpi mpich --fabric "$3" \
    --tls "$4" --mtu 9000 --idle-sleep-us 0 -np 2 --job "$5" "${e[@]}" \
    "$BENCH" --json "${BARGS[@]}" --iters 1000 2>/dev/null |
    grep '^{' | sed "s/^{/{\"rep\": $rep, \"v\": \"$1\", \"fabric\": \"$3\", /" >>"$OUT" || true
}
for rep in $(seq 1 "$REPS"); do
  for fab in memif bridge; do
    run base "$A" $fab sctp_dpdk "${AB_JOB:-lab}$rep${fab:0:1}a" "${AB_ENV_A:-}"
    run new "$ROOT/build" $fab sctp_dpdk "${AB_JOB:-lab}$rep${fab:0:1}b" "${AB_ENV_B:-}"
  done
  run tcp "$ROOT/build" bridge tcp "${AB_JOB:-lab}${rep}t"
done
