#!/bin/bash
# setup-usrsctp.sh DEST - build usrsctp optimised, from the pinned Debian
# source package, for the project to link privately.
#
# Why: Debian's libusrsctp2 0.9.5 is compiled at -O0.  Its configure.ac
# defaults --enable-debug to yes and then appends "-g -O0" after the
# distribution's flags, and debian/rules passes nothing (the installed
# library disassembles to unoptimised code).  Rebuilt from the same source
# with --disable-debug at -O2, the single-process loop (bench/sctp_loop.c)
# went from 4.0 to 5.8 Gbit/s at MTU 1500 (docs/BENCHMARKS.md).
#
#   1. a deb-src entry for Debian's main archive (scripts/setup-ucx-src.sh
#      derives one from the machine's apt configuration; run first);
#   2. `apt-get source libusrsctp=$USRSCTP_VERSION` into DEST;
#   3. autoreconf + configure --disable-debug --disable-programs, static
#      and position-independent (it goes into libuct_sctp_dpdk.so, whose
#      link hides its symbols: an application's own usrsctp is unaffected);
#   4. make install into DEST/prefix; a stamp makes later runs a no-op.
#
# The last line printed is the install prefix (pass it to meson as
# -Dusrsctp_prefix=...).  scripts/check-usrsctp-opt.py fails the build if
# the library in use is the unoptimised one.
# shellcheck source-path=SCRIPTDIR source=lib/debsrc.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/lib/debsrc.sh"
debsrc_init setup-usrsctp

USRSCTP_VERSION=0.9.5.0-2
UPSTREAM=${USRSCTP_VERSION%-*}
# -O2 as measured; -g keeps symbols for profiles and costs no speed.
# Debian's own maintainer flag, for the packed-member warnings of its code.
USRSCTP_CFLAGS="-O2 -g -Wno-address-of-packed-member"

debsrc_dest .deps/usrsctp "$@"
TREE=$DEST/libusrsctp-$UPSTREAM
PREFIX=$DEST/prefix
STAMP=$DEST/.sdp-usrsctp.stamp
STAMP_TEXT="libusrsctp=$USRSCTP_VERSION cflags=$USRSCTP_CFLAGS debug=no static=yes pic=yes prefix=$PREFIX"

if debsrc_stamp_ok "$STAMP" "$STAMP_TEXT" "$PREFIX/lib/libusrsctp.a" "$PREFIX/include/usrsctp.h"; then
  echo "$PREFIX"
  exit 0
fi

debsrc_require libusrsctp "$USRSCTP_VERSION"
debsrc_fetch libusrsctp "$USRSCTP_VERSION" "$TREE"

for tool in autoreconf libtoolize make gcc; do
  command -v "$tool" >/dev/null ||
    die "$tool not found: install autoconf automake libtool build-essential (scripts/setup.sh does)"
done

rm -f "$STAMP"
log "autoreconf (log: $TREE/sdp-autoreconf.log)"
(cd "$TREE" && autoreconf -fi >"$TREE/sdp-autoreconf.log" 2>&1) ||
  die "autoreconf failed; see $TREE/sdp-autoreconf.log"
log "configure --disable-debug --disable-programs, static, PIC, CFLAGS=$USRSCTP_CFLAGS"
(cd "$TREE" && ./configure --prefix="$PREFIX" --disable-debug --disable-programs \
  --enable-static --disable-shared --with-pic CFLAGS="$USRSCTP_CFLAGS" \
  >"$TREE/sdp-configure.log" 2>&1) ||
  die "configure failed; see $TREE/sdp-configure.log and $TREE/config.log"
grep -q -- '-O0' "$TREE/usrsctplib/Makefile" &&
  die "configure still adds -O0 (usrsctplib/Makefile): --disable-debug was not honoured"
log "make (log: $TREE/sdp-make.log)"
(cd "$TREE" && make -j"$(nproc)" >"$TREE/sdp-make.log" 2>&1 && make install >>"$TREE/sdp-make.log" 2>&1) ||
  die "make failed; see $TREE/sdp-make.log"
[[ -f $PREFIX/lib/libusrsctp.a ]] || die "$PREFIX/lib/libusrsctp.a was not installed"

echo "$STAMP_TEXT" >"$STAMP"
log "usrsctp $USRSCTP_VERSION built optimised into $PREFIX"
echo "$PREFIX"
