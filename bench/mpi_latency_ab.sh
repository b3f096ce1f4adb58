#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# mpi_latency_ab.sh - MPI one-way latency of two builds of the transport and
# of UCX tcp, interleaved (per repetition: memif A, memif B, af_packet A,
# af_packet B, tcp), one JSON line per size per run; summarise with
# bench/mpi_latency_ab.py.  A = the "before" build directory (e.g. another
# commit built in a separate tree), B = this checkout's build.
#   bench/mpi_latency_ab.sh BEFORE_BUILD_DIR OUT.jsonl [REPS]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
A=$1 OUT=$2 REPS=${3:-5}
BENCH=$ROOT/build/apps/sdp-mpi-bench-mpich
run() { # tag build fabric tls job
  SDP_BUILD_DIR=$2 timeout 300 "$ROOT/apps/sdp-mpirun" --mpi mpich --fabric "$3" \
    --tls "$4" --mtu 9000 --idle-sleep-us 0 -np 2 --job "$5" \
    "$BENCH" --json --min-size 8 --max-size 16384 --no-bw --iters 1000 2>/dev/null |
    grep '^{' | sed "s/^{/{\"rep\": $rep, \"v\": \"$1\", \"fabric\": \"$3\", /" >>"$OUT" || true
}
for rep in $(seq 1 "$REPS"); do
  for fab in memif bridge; do
    run base "$A" $fab sctp_dpdk "lab$rep${fab:0:1}a"
    run new "$ROOT/build" $fab sctp_dpdk "lab$rep${fab:0:1}b"
  done
  run tcp "$ROOT/build" bridge tcp "lab${rep}t"
done
