#!/bin/bash
# setup-usrsctp-src.sh DEST - an optimised usrsctp for sctp-dpdk, built from
# the pinned Debian source.  Debian's libusrsctp2 is built with configure's
# default --enable-debug, which adds `-g -O0` and SCTP_DEBUG: every SCTP
# packet then goes through unoptimised code.  This script:
#
#   1. `apt-get source libusrsctp=$USRSCTP_VERSION` into DEST (the deb-src
#      entry is the one scripts/setup-ucx-src.sh derived; run that first);
#   2. bootstrap + configure --disable-debug --disable-programs
#      --enable-static --disable-shared --with-pic CFLAGS=-O2, make, install
#      into DEST/install (a static library that meson links privately);
#   3. checks that the result has no SCTP_DEBUG symbol.
#
# A stamp makes a second run a no-op.  The last line printed is the install
# prefix (pass it to meson as -Dusrsctp_prefix=...).
set -eEuo pipefail

# Safety net: set -e stops at the first failing command; never without a word.
on_err() { # status line command
  [[ $- == *e* ]] && ((BASH_SUBSHELL == 0)) || return 0
  local fn=${FUNCNAME[1]:-main}
  if [[ $fn == main ]]; then fn=; else fn=" in $fn()"; fi
  echo "setup-usrsctp-src: error: line $2$fn: '$3' failed with status $1 (output above, if any, says why)" >&2
}
trap 'on_err $? $LINENO "$BASH_COMMAND"' ERR

USRSCTP_VERSION=0.9.5.0-2
USRSCTP_UPSTREAM=${USRSCTP_VERSION%-*}
# Warnings of a third-party library are not ours to fix: -Werror off.
CONF_FLAGS=(--disable-debug --disable-programs --enable-static --disable-shared
  --with-pic --disable-warnings-as-errors)
CONF_CFLAGS=-O2
# Exported only when SCTP_DEBUG is compiled in (configure's --enable-debug).
DEBUG_SYMBOL=usrsctp_sysctl_get_sctp_debug_on

log() { echo "setup-usrsctp-src: $*" >&2; }
die() { echo "setup-usrsctp-src: error: $*" >&2; exit 1; }

[[ $# -eq 1 ]] || die "usage: $0 DEST   (e.g. $0 .deps/usrsctp)"
DEST=$(realpath -m -- "$1")
TREE=$DEST/libusrsctp-$USRSCTP_UPSTREAM
PREFIX=$DEST/install
STAMP=$PREFIX/.sdp-usrsctp.stamp
STAMP_TEXT="libusrsctp=$USRSCTP_VERSION flags=${CONF_FLAGS[*]} CFLAGS=$CONF_CFLAGS prefix=$PREFIX"

if [[ -f $STAMP && -f $PREFIX/lib/libusrsctp.a ]] && [[ $(cat "$STAMP") == "$STAMP_TEXT" ]]; then
  echo "$PREFIX"
  exit 0
fi

for c in dpkg-parsechangelog make gcc libtoolize aclocal autoconf automake nm; do
  command -v "$c" >/dev/null ||
    die "'$c' not found: install dpkg-dev build-essential autoconf automake libtool (scripts/setup.sh does)"
done

# ---- 1. source ---------------------------------------------------------------
mkdir -p "$DEST" || die "cannot create $DEST (set SDP_DEPS_DIR to a writable directory)"
have_tree() {
  [[ -f $TREE/debian/changelog ]] &&
    [[ $(dpkg-parsechangelog -l "$TREE/debian/changelog" -S Version) == "$USRSCTP_VERSION" ]]
}
if ! have_tree; then
  rm -rf "$TREE"
  log "apt-get source libusrsctp=$USRSCTP_VERSION into $DEST"
  (cd "$DEST" && apt-get source -q --only-source -o APT::Sandbox::User=root "libusrsctp=$USRSCTP_VERSION" >&2) ||
    die "apt-get source libusrsctp=$USRSCTP_VERSION failed: needs a deb-src entry for Debian 12 (scripts/setup-ucx-src.sh writes one) and apt-get update"
  have_tree || die "$TREE was not produced by apt-get source"
fi

# ---- 2. build ----------------------------------------------------------------
rm -f "$STAMP"
if [[ ! -x $TREE/configure ]]; then
  log "bootstrap (log: $TREE/sdp-bootstrap.log)"
  (cd "$TREE" && ./bootstrap >"$TREE/sdp-bootstrap.log" 2>&1) ||
    die "bootstrap failed; see $TREE/sdp-bootstrap.log"
fi
log "configure ${CONF_FLAGS[*]} CFLAGS=$CONF_CFLAGS (log: $TREE/sdp-configure.log)"
(cd "$TREE" && ./configure --prefix="$PREFIX" "${CONF_FLAGS[@]}" CFLAGS="$CONF_CFLAGS" \
  >"$TREE/sdp-configure.log" 2>&1) ||
  die "configure failed; see $TREE/sdp-configure.log and $TREE/config.log"
log "make (log: $TREE/sdp-make.log)"
(cd "$TREE" && { make clean >/dev/null 2>&1 || true; } && make -j"$(nproc)" >"$TREE/sdp-make.log" 2>&1 &&
  rm -rf "$PREFIX" && make install >>"$TREE/sdp-make.log" 2>&1) ||
  die "building usrsctp failed; see $TREE/sdp-make.log"

# ---- 3. verify ---------------------------------------------------------------
lib=$PREFIX/lib/libusrsctp.a
[[ -f $lib && -f $PREFIX/include/usrsctp.h ]] || die "make install did not produce $lib and $PREFIX/include/usrsctp.h"
syms=$(nm -g --defined-only "$lib" 2>/dev/null) || die "nm $lib failed"
if grep -qw "$DEBUG_SYMBOL" <<<"$syms"; then
  die "$lib still defines $DEBUG_SYMBOL: it was built with SCTP_DEBUG (-O0); see $TREE/sdp-configure.log"
fi
echo "$STAMP_TEXT" >"$STAMP" || die "cannot write $STAMP"
log "usrsctp $USRSCTP_VERSION built -O2 without SCTP_DEBUG into $PREFIX"
echo "$PREFIX"
