#!/bin/bash
# demo.sh - the main job: install and build everything (scripts/setup.sh),
# then run the demo on a virtual two-host testbed.
#
# Today the demo is the dataplane: sdp-ping between two DPDK processes over
# a memif pair and over af_packet ports in two network namespaces joined by
# a bridge, every payload verified.  It becomes the MPI latency/bandwidth
# sweep over UCX_TLS=sctp_dpdk once the transport lands (issue 5).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export SDP_BUILD_DIR=${SDP_BUILD_DIR:-$ROOT/build}
"$ROOT/scripts/setup.sh"
export SDP_BIN_DIR=$SDP_BUILD_DIR/apps

echo
echo "== sdp-ping: ping-pong latency, memif pair (two DPDK processes)"
"$ROOT/apps/sdp-ping" --fabric memif --count 20000 --size 64
echo
echo "== sdp-ping: 32 probes in flight, memif pair"
"$ROOT/apps/sdp-ping" --fabric memif --count 200000 --size 64 --window 32
echo
echo "== sdp-ping: ping-pong latency, two namespaces on a bridge (af_packet)"
"$ROOT/apps/sdp-ping" --fabric bridge --count 20000 --size 64
echo
echo "== sdp-ping: paced at 200 Mbit/s, 1000-byte probes, memif pair"
"$ROOT/apps/sdp-ping" --fabric memif --count 20000 --size 1000 --window 64 --rate 200M
