#!/bin/bash
# setup-mimalloc.sh DEST - build mimalloc as a private allocator for
# usrsctp, from the Debian source package of the installed mimalloc runtime
# (mimalloc 2.0 on Debian 12, 3.0 on Debian 13; scripts/lib/release.sh).
#
# Why: usrsctp's zones are plain malloc (its SCTP_SIMPLE_ALLOCATOR is
# hard-wired): every 2 KiB cluster costs three allocations and every
# output packet a malloc + copy + free.  Only usrsctp's own calls are sent
# to mimalloc (meson renames malloc/calloc/free in usrsctp's objects to
# mi_malloc/mi_calloc/mi_free); the MPI application keeps its malloc.
# Debian's libmimalloc2.0/libmimalloc3 cannot serve that: a shared library
# built to override malloc for the whole process when loaded.  So this
# builds the same Debian source as a static, position-independent archive
# with MI_OVERRIDE=OFF: it defines only mi_* symbols, and the link hides
# them (--exclude-libs).  The alternatives and their figures are in
# docs/BENCHMARKS.md, "SCTP" ("Why usrsctp is built here").
#
# The last line printed is the install prefix (meson -Dmimalloc_prefix=).
# shellcheck source-path=SCRIPTDIR source=lib/debsrc.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/lib/debsrc.sh"
debsrc_init setup-mimalloc

# shellcheck source=lib/release.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/lib/release.sh"
release_init
MIMALLOC_VERSION=$(release_source_version "$REL_MIMALLOC_PKG")
[[ -n $MIMALLOC_VERSION ]] ||
  die "$REL_MIMALLOC_PKG is not installed: its source package is what is built here (scripts/setup.sh installs it)"

debsrc_dest .deps/mimalloc "$@"
TREE=$DEST/$(release_source_dir mimalloc "$MIMALLOC_VERSION")
PREFIX=$DEST/prefix
STAMP=$DEST/.sdp-mimalloc.stamp
CMAKE_FLAGS=(-DCMAKE_BUILD_TYPE=Release -DMI_OVERRIDE=OFF -DMI_BUILD_SHARED=OFF
  -DMI_BUILD_STATIC=ON -DMI_BUILD_OBJECT=OFF -DMI_BUILD_TESTS=OFF
  -DMI_INSTALL_TOPLEVEL=ON -DCMAKE_POSITION_INDEPENDENT_CODE=ON)
STAMP_TEXT="mimalloc=$MIMALLOC_VERSION ${CMAKE_FLAGS[*]} prefix=$PREFIX"

if debsrc_stamp_ok "$STAMP" "$STAMP_TEXT" "$PREFIX/lib/libmimalloc.a" "$PREFIX/include/mimalloc.h"; then
  echo "$PREFIX"
  exit 0
fi

command -v cmake >/dev/null || die "cmake not found: install cmake (scripts/setup.sh does)"
debsrc_fetch_or_archive mimalloc "$MIMALLOC_VERSION" "$TREE"

rm -f "$STAMP"
rm -rf "$TREE/sdp-build"
log "cmake ${CMAKE_FLAGS[*]} (log: $TREE/sdp-build.log)"
(cmake -S "$TREE" -B "$TREE/sdp-build" -DCMAKE_INSTALL_PREFIX="$PREFIX" \
  "${CMAKE_FLAGS[@]}" >"$TREE/sdp-build.log" 2>&1 &&
  cmake --build "$TREE/sdp-build" -j"$(nproc)" >>"$TREE/sdp-build.log" 2>&1 &&
  cmake --install "$TREE/sdp-build" >>"$TREE/sdp-build.log" 2>&1) ||
  die "mimalloc build failed; see $TREE/sdp-build.log"
[[ -f $PREFIX/lib/libmimalloc.a ]] || die "$PREFIX/lib/libmimalloc.a was not installed"
if nm --defined-only "$PREFIX/lib/libmimalloc.a" 2>/dev/null | grep -qE ' T (malloc|free|calloc)$'; then
  die "$PREFIX/lib/libmimalloc.a defines malloc/free: MI_OVERRIDE=OFF was not honoured"
fi

echo "$STAMP_TEXT" >"$STAMP"
log "mimalloc $MIMALLOC_VERSION built (static, PIC, no override) into $PREFIX"
echo "$PREFIX"
