#!/bin/bash
# test.sh - the whole test suite: set up (install + build), then every
# unit, integration and MPI test with meson.  Needs root: the integration
# tests create network namespaces and DPDK ports.
#
#   scripts/test.sh                 everything
#   scripts/test.sh --suite unit    meson test arguments pass through
set -eEuo pipefail
# Safety net: set -e stops at the first failing command; never without a word.
on_err() { # status line command
  [[ $- == *e* ]] && ((BASH_SUBSHELL == 0)) || return 0
  local fn=${FUNCNAME[1]:-main}
  if [[ $fn == main ]]; then fn=; else fn=" in $fn()"; fi
  echo "test: error: line $2$fn: '$3' failed with status $1 (output above, if any, says why)" >&2
}
trap 'on_err $? $LINENO "$BASH_COMMAND"' ERR
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${SDP_BUILD_DIR:-$ROOT/build}
export SDP_BUILD_DIR=$BUILD
"$ROOT/scripts/setup.sh" || { echo "test: error: scripts/setup.sh failed (see above); no test was run" >&2; exit 1; }
cd "$BUILD"
# Suite 'open' holds tests of known, unfixed contract violations (see
# tests/meson.build): they fail today and are left out of this run; run
# them with `meson test --suite open`.
skip=(--no-suite open)
if [[ " $* " == *" --suite "* ]]; then skip=(); fi
exec meson test --print-errorlogs --num-processes 1 "${skip[@]}" "$@"
