#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# tests/fuzz/run.sh [SECONDS] - the short fuzz run of the test suite:
# build the harnesses with clang (build.sh), replay the committed
# regression inputs (regress/<harness>/, each once), then fuzz each harness
# for SECONDS (default 15) from a copy of its seed corpus (corpus/<name>/).
# Fails on any crash, sanitizer report, leak or broken invariant, and when
# the harnesses cannot be built or run (no clang, not root for the EAL):
# a test that cannot run is not a pass.  Findings are left in
# $FUZZ_OUT/artifacts.  FUZZ_HARNESSES picks the harnesses (default
# "frame arp link"; "tl" is fuzz_tl, which needs SDP_UCX_SRC for build.sh).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
SECS=${1:-15}
OUT=${FUZZ_OUT:-$ROOT/build/fuzz}

[[ $EUID -eq 0 ]] || { echo "fuzz: FAIL: needs root (the ARP and link harnesses open a DPDK port): run as root" >&2; exit 1; }
"$HERE/build.sh" "$OUT"
work=$(mktemp -d /tmp/sdp-fuzz.XXXXXX)
# A harness interrupted (timeout) or crashing ends by _Exit, before its
# EAL removes /var/run/dpdk/<prefix>: this job's prefixes are
# sdp-fuzz-<job>-<pid>, removed here on any exit (sdp_launch's helper:
# only this job's, never a live EAL's).
export SDP_FUZZ_JOB=j$$
fuzz_cleanup() {
  rm -rf "$work"
  python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import sdp_launch; sdp_launch.remove_runtime_dirs(sys.argv[2])' \
    "$ROOT/apps" "sdp-fuzz-$SDP_FUZZ_JOB-" || echo "fuzz: removing the runtime dirs of job $SDP_FUZZ_JOB failed" >&2
}
trap fuzz_cleanup EXIT
mkdir -p "$OUT/artifacts"
fails=0
HARNESSES=${FUZZ_HARNESSES:-frame arp link}
if [[ " $HARNESSES " == *" tl "* && -z ${SDP_UCX_SRC:-} ]]; then
  echo "fuzz: FAIL: fuzz_tl needs SDP_UCX_SRC (the UCX source tree of meson's -Ducx_src)" >&2
  exit 1
fi
# fuzz_tl: the transport's contexts live until exit by design (lsan-tl.supp)
export LSAN_OPTIONS=suppressions=$HERE/lsan-tl.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}
for h in $HARNESSES; do
  bin=$OUT/fuzz_$h
  if compgen -G "$HERE/regress/$h/*" >/dev/null; then
    if ! "$bin" -runs=1 "$HERE"/regress/$h/* >"$work/$h.regress.log" 2>&1; then
      echo "fuzz: FAIL: fuzz_$h regression input crashes again:" >&2
      tail -n 30 "$work/$h.regress.log" >&2
      fails=$((fails + 1))
      continue
    fi
  fi
  mkdir -p "$work/$h"
  cp "$HERE"/corpus/$h/* "$work/$h/"
  if timeout $((SECS * 4 + 60)) "$bin" -max_total_time="$SECS" \
       -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="$OUT/artifacts/$h-" "$work/$h" \
       >"$work/$h.log" 2>&1; then
    echo "fuzz_$h: $(grep -o 'Done [0-9]* runs in [0-9]* second(s)' "$work/$h.log")"
  else
    echo "fuzz: FAIL: fuzz_$h found a crash (artifact in $OUT/artifacts):" >&2
    tail -n 40 "$work/$h.log" >&2
    fails=$((fails + 1))
  fi
done
exit $((fails != 0))
