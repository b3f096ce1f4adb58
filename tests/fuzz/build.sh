#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# tests/fuzz/build.sh [OUT_DIR] - build the libFuzzer harnesses with clang
# (-fsanitize=fuzzer,address,undefined), separately from the meson build
# (which may use gcc): the dataplane, sctp, pacing and common sources are
# compiled again, instrumented, into OUT_DIR (default build/fuzz).
#
#   fuzz_frame  dp_frame_classify + CRC32c + dp_arp_parse on any frame
#   fuzz_arp    ARP input on a net_ring port (learn, answer, hold, retry)
#   fuzz_link   frame -> dp_port_poll -> sg_poll -> usrsctp_conninput
#   fuzz_tl     the transport's wire format (AM and RMA headers, stream-map
#               RTS) inside an association, through ucx-tl's receive path;
#               built only when SDP_UCX_SRC names the configured UCX source
#               tree the transport builds against (meson's -Ducx_src)
#
# Needs the release's clang and its libclang-rt-N-dev (scripts/setup.sh
# installs them: clang-14 on Debian 12, clang-19 on Debian 13,
# scripts/lib/release.sh).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-$ROOT/build/fuzz}
CC=${FUZZ_CC:-}
if [[ -z $CC ]]; then
  # shellcheck source=../../scripts/lib/release.sh
  source "$ROOT/scripts/lib/release.sh"
  release_init
  for c in "$REL_CLANG" clang; do
    if command -v "$c" >/dev/null; then CC=$c; break; fi
  done
fi
[[ -n $CC ]] || { echo "fuzz: clang not found: install ${REL_CLANG_PKGS[*]} (scripts/setup.sh)" >&2; exit 1; }
mkdir -p "$OUT/obj"

# The project's usrsctp (scripts/setup-usrsctp.sh: Debian's source with
# scripts/usrsctp-patches applied, static), never the system's: sg needs
# the patches' API (usrsctp_set_conn_output_alloc).  meson's fuzz test
# passes SDP_USRSCTP_PREFIX; by hand it defaults to the set-up's place.
USRSCTP_PREFIX=${SDP_USRSCTP_PREFIX:-${SDP_DEPS_DIR:-$ROOT/.deps}/usrsctp/prefix}
[[ -e $USRSCTP_PREFIX/lib/pkgconfig/usrsctp.pc ]] || {
  echo "fuzz: no usrsctp build at $USRSCTP_PREFIX (set SDP_USRSCTP_PREFIX or run scripts/setup.sh)" >&2; exit 1; }
export PKG_CONFIG_PATH=$USRSCTP_PREFIX/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}

SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
# A 256-slot neighbour cache (192 entries): inputs naming 256 hosts reach
# LRU eviction and the probe-run shifts; every input resets the cache.
SMALL_ARP="-DDP_ARP_SIZE_LOG2=8"
CFLAGS="-g -O1 -fno-omit-frame-pointer -std=gnu11 -D_GNU_SOURCE $SAN $SMALL_ARP \
  -Wall -Wno-unused-function -Wno-address-of-packed-member \
  -I$ROOT/common -I$ROOT/pacing -I$ROOT/dataplane -I$ROOT/sctp \
  $(pkg-config --cflags libdpdk libisal usrsctp)"
LIBS="$(pkg-config --libs libdpdk libisal usrsctp) -lpthread -lm"

objs=()
for src in "$ROOT"/common/*.c "$ROOT"/pacing/*.c "$ROOT"/dataplane/*.c \
           "$ROOT"/sctp/*.c; do
  # the stage trace ring exists only in meson -Dtrace=true builds
  [[ $(basename "$src") == sdp_trace.c ]] && continue
  o="$OUT/obj/$(basename "$(dirname "$src")")_$(basename "${src%.c}").o"
  if [[ ! -e $o || $src -nt $o || $0 -nt $o ]] ||
     find "$ROOT/common" "$ROOT/pacing" "$ROOT/dataplane" "$ROOT/sctp" \
       -name '*.h' -newer "$o" | grep -q .; then
    $CC $CFLAGS -fsanitize=fuzzer-no-link -c "$src" -o "$o"
  fi
  objs+=("$o")
done
built=()
for h in fuzz_frame fuzz_arp fuzz_link; do
  $CC $CFLAGS -fsanitize=fuzzer "$ROOT/tests/fuzz/$h.c" "${objs[@]}" \
    $LIBS -o "$OUT/$h"
  built+=("$OUT/$h")
done

# fuzz_tl: the transport's sources too, against UCX's internal headers and
# the config.h of its source tree (as ucx-tl/meson.build does).
if [[ -n ${SDP_UCX_SRC:-} ]]; then
  [[ -e $SDP_UCX_SRC/config.h && -e $SDP_UCX_SRC/src/uct/base/uct_iface.h ]] || {
    echo "fuzz: SDP_UCX_SRC=$SDP_UCX_SRC is not a configured UCX source tree (scripts/setup-ucx-src.sh)" >&2; exit 1; }
  ucx_ver=$(pkg-config --modversion ucx-uct)
  ucx_num=$(( $(cut -d. -f1 <<<"$ucx_ver") * 100 + $(cut -d. -f2 <<<"$ucx_ver") ))
  # UCX's ucs_offsetof (behind ucs_derived_of, ucs_container_of) is
  # &((type *)0)->member, which UBSan's null and object-size checks report
  # on every use: both are off for these objects (a real NULL dereference
  # is still a SEGV that libFuzzer reports; ASan still bounds every access).
  TLFLAGS="-DHAVE_CONFIG_H -isystem $SDP_UCX_SRC -isystem $SDP_UCX_SRC/src \
    -DUCT_SCTP_DPDK_UCX_VERSION=$ucx_num -I$ROOT/ucx-tl -fno-sanitize=null,object-size"
  tlobjs=()
  for src in "$ROOT"/ucx-tl/*.c; do
    o="$OUT/obj/ucx-tl_$(basename "${src%.c}").o"
    if [[ ! -e $o || $src -nt $o || $0 -nt $o ]] ||
       find "$ROOT/ucx-tl" "$ROOT/common" "$ROOT/dataplane" "$ROOT/sctp" \
         -name '*.h' -newer "$o" | grep -q .; then
      $CC $CFLAGS $TLFLAGS -fsanitize=fuzzer-no-link -c "$src" -o "$o"
    fi
    tlobjs+=("$o")
  done
  $CC $CFLAGS $TLFLAGS -fsanitize=fuzzer "$ROOT/tests/fuzz/fuzz_tl.c" \
    "${tlobjs[@]}" "${objs[@]}" $LIBS $(pkg-config --libs ucx-uct ucx-ucs) \
    -o "$OUT/fuzz_tl"
  built+=("$OUT/fuzz_tl")
fi
echo "fuzz: built ${built[*]}"
