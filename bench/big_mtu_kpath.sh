#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# big_mtu_kpath.sh [REPS] - kernel CPU time per frame of the af_packet path
# (bench/af_packet_kpath.py) for frames of a 9000, 16000, 32000 and 64000
# MTU, interleaved, on one `sdp-testbed --mtu 64000` bridge; each size sends
# about the same bytes (the per-frame kernel cost behind docs/BENCHMARKS.md, "MPI" ("Why af_packet stays near 0.5x tcp")).
set -euo pipefail
reps=${1:-5}
here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
tb=$here/../apps/sdp-testbed kp=$here/af_packet_kpath.py
job=bk$(($$ % 100000))
trap '"$tb" down --job "$job" --kill-procs >/dev/null 2>&1 || true' EXIT
env=$("$tb" bridge up --job "$job" --hosts 2 --mtu 64000 2>/dev/null)
kv() { sed -n "s/^$1=//p" <<<"$env"; }
h0=$(kv SDP_NS_0) h1=$(kv SDP_NS_1) dip=$(kv SDP_DP_IP_1)
own() { printf '02:5d:%02x:%02x:%02x:%02x' ${1//./ }; }   # dp own_mac
own0=$(own "$(kv SDP_DP_IP_0)") own1=$(own "$dip")
ip netns exec "$h1" "$kp" sdpnet0 ff:ff:ff:ff:ff:ff "$own1" "$(kv SDP_DP_IP_0)" 3 100 >/dev/null
for ((rep = 1; rep <= reps; rep++)); do
  for size in 9014 16014 32014 64014; do
    n=$((30000 * 9014 / size))
    echo "size $size rep $rep: $(ip netns exec "$h0" "$kp" sdpnet0 "$own1" "$own0" "$dip" "$n" "$size") load $(cut -d' ' -f1 /proc/loadavg)"
  done
done
