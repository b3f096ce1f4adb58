#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# af_packet_kpath_ab.sh [REPS] [FRAMES] - interleaved A/B of the kernel's
# cost per 9000-byte frame on the bridge testbed: host 0 sends FRAMES frames to host 1's
# DPDK address through bench/af_packet_kpath.py, in four variants
#   A  switch passes bridged frames to iptables (bridge-nf-call-*=1),
#      destination MAC = host 1's sdpnet0 (the kernel routes each frame)
#   B  bridge-nf-call-*=0 (sdp-testbed's setting)
#   C  iptables on, destination = the dataplane's own MAC (own_mac=1:
#      host 1's kernel drops the frame as PACKET_OTHERHOST)
#   D  both (what sdp-mpirun's bridge ranks get)
# and prints the kernel CPU time per frame of each run (the median is
# the figure to quote; the machine's load is printed with each run).
set -euo pipefail
reps=${1:-5} n=${2:-30000}
here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
tb=$here/../apps/sdp-testbed kp=$here/af_packet_kpath.py
job=kp$(($$ % 100000))
trap '"$tb" down --job "$job" --kill-procs >/dev/null 2>&1 || true' EXIT
env=$("$tb" bridge up --job "$job" --hosts 2 --mtu 9000 2>/dev/null)
kv() { sed -n "s/^$1=//p" <<<"$env"; }
sw=$(kv SDP_NS_SW) h0=$(kv SDP_NS_0) h1=$(kv SDP_NS_1)
m0=$(kv SDP_MAC_0) m1=$(kv SDP_MAC_1) dip=$(kv SDP_DP_IP_1)
own() { printf '02:5d:%02x:%02x:%02x:%02x' ${1//./ }; }   # dp own_mac
own0=$(own "$(kv SDP_DP_IP_0)") own1=$(own "$dip")
# the bridge learns host 1's own MAC, as from the dataplane's frames
ip netns exec "$h1" "$kp" sdpnet0 ff:ff:ff:ff:ff:ff "$own1" "$(kv SDP_DP_IP_0)" 3 100 >/dev/null
for ((rep = 1; rep <= reps; rep++)); do
  for v in A B C D; do
    case $v in A | C) nf=1 ;; *) nf=0 ;; esac
    case $v in A | B) dm=$m1 sm=$m0 ;; *) dm=$own1 sm=$own0 ;; esac
    ip netns exec "$sw" sysctl -qw net.bridge.bridge-nf-call-iptables=$nf \
      net.bridge.bridge-nf-call-ip6tables=$nf net.bridge.bridge-nf-call-arptables=$nf
    echo "$v rep $rep bridge-nf-call=$nf dst $dm: $(ip netns exec "$h0" "$kp" sdpnet0 "$dm" "$sm" "$dip" "$n" 9014) load $(cut -d' ' -f1 /proc/loadavg)"
  done
done
