#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# af_packet_mpi_ab.sh BEFORE_ROOT AFTER_ROOT REPS [OUTDIR] - interleaved
# before/after MPI sweeps (8 B..1 MiB, MPICH, 2 ranks, bridge, MTU 9000,
# busy polling) of two built checkouts, over sctp_dpdk (af_packet) and
# over UCX tcp (TLSS="sctp_dpdk" for ours only); one JSON line per size
# in OUTDIR/<before|after>-<tls>-<rep>.jsonl.
b_root=${1:?BEFORE_ROOT} a_root=${2:?AFTER_ROOT} reps=${3:?REPS}
out=${4:-/tmp/af_packet_mpi_ab}; mkdir -p "$out"
for rep in $(seq "${FIRST:-1}" "$reps"); do
  for v in before after; do
    if [[ $v == before ]]; then root=$b_root; else root=$a_root; fi
    for tls in ${TLSS:-sctp_dpdk tcp}; do
      f=$out/$v-$tls-$rep.jsonl
      la=$(cut -d' ' -f1 /proc/loadavg)
      ( cd $root && SDP_BUILD_DIR=$root/build timeout 400 apps/sdp-mpirun --mpi mpich --fabric bridge --tls $tls -np 2 \
          --idle-sleep-us 0 --mtu 9000 --timeout 300 --job ab$((RANDOM % 100000)) \
          $root/build/apps/sdp-mpi-bench-mpich --json --min-size 8 --max-size 1048576 ) > $f 2> $f.err
      echo "$v $tls rep $rep rc $? load_before $la load_after $(cut -d' ' -f1 /proc/loadavg) rows $(grep -c '^{' $f)"
    done
  done
done
