#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# af_packet_frames.sh [REPS] [MTUS] - frames per MB over af_packet (MPI
# 1 MiB only, MPICH, 2 ranks on the bridge, busy polling) with the RMA
# message settings off and on, interleaved: one line per run with the
# bandwidth and, summed over both ranks from UCX_SCTP_DPDK_STATS, frames
# sent, data chunks, SACKs, T3 timeouts, retransmitted chunks and
# dataplane drops (the frames per MB behind af_packet's bandwidth).
# Counts survive load; the bandwidth does not.
cd "$(dirname "$0")/.." || exit 1
reps=${1:-1} mtus=${2:-9000 32000 64000}
variants=${VARIANTS:-"n,n y,n y,y"} # RMA_WHOLE_PACKETS,RMA_SACK_LAST
for rep in $(seq "$reps"); do
  for mtu in $mtus; do
    for v in $variants; do
      w=${v%,*} s=${v#*,} job=fr$((RANDOM % 100000))
      out=$(mktemp)
      la=$(cut -d' ' -f1 /proc/loadavg)
      timeout 400 apps/sdp-mpirun --mpi mpich --fabric bridge -np 2 \
        --idle-sleep-us 0 --mtu "$mtu" --timeout 300 --job "$job" \
        --env UCX_SCTP_DPDK_STATS=y \
        --env UCX_SCTP_DPDK_RMA_WHOLE_PACKETS="$w" \
        --env UCX_SCTP_DPDK_RMA_SACK_LAST="$s" \
        "${SDP_BUILD_DIR:-build}"/apps/sdp-mpi-bench-mpich \
        --min-size 1048576 --max-size 1048576 >"$out" 2>&1
      rc=$?
      python3 - "$out" "$rep" "$mtu" "$w" "$s" "$rc" "$la" <<'PY'
import json, sys
f, rep, mtu, w, s, rc, la = sys.argv[1:]
rows = [json.loads(l.split("sctp_dpdk stats: ", 1)[1])
        for l in open(f) if l.startswith("sctp_dpdk stats: ")]
bw = [l.split()[3] for l in open(f) if l.startswith("   1048576")]
u = [r["usrsctp"] for r in rows]
fr = sum(r["dp"]["tx_pkts"] for r in rows)
mb = sum(r["dp"]["tx_bytes"] for r in rows) / 1e6
print(json.dumps({"rep": int(rep), "mtu": int(mtu), "whole_packets": w,
                  "sack_last": s, "rc": int(rc), "load1": float(la),
                  "bw_mbps": float(bw[0]) if bw else None,
                  "frames": fr, "mb": round(mb, 1),
                  "frames_per_mb": round(fr / mb, 1) if mb else None,
                  "data_chunks": sum(x["data_chunks_out"] for x in u),
                  "sacks": sum(x["sacks_out"] for x in u),
                  "t3": sum(x["t3_timeouts"] for x in u),
                  "retrans_chunks": sum(x["retrans_chunks"] for x in u),
                  "dp_drops": [r["dp"]["drops"] for r in rows]}))
PY
      rm -f "$out"
    done
  done
done
