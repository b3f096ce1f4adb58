#!/bin/bash
# test.sh - the whole test suite: set up (install + build), then every
# unit, integration and MPI test with meson.  Needs root: the integration
# tests create network namespaces and DPDK ports.
#
#   scripts/test.sh                 everything
#   scripts/test.sh --suite unit    meson test arguments pass through
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${SDP_BUILD_DIR:-$ROOT/build}
export SDP_BUILD_DIR=$BUILD
"$ROOT/scripts/setup.sh"
cd "$BUILD"
exec meson test --print-errorlogs --num-processes 1 "$@"
