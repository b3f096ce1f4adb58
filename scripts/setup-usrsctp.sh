#!/bin/bash
# setup-usrsctp.sh DEST - build usrsctp optimised, from the Debian
# source package of the installed libusrsctp-dev, for the project to link
# privately.
#
# Why: Debian's libusrsctp2 0.9.5 is compiled at -O0.  Its configure.ac
# defaults --enable-debug to yes and then appends "-g -O0" after the
# distribution's flags, and debian/rules passes nothing (the installed
# library disassembles to unoptimised code).  Rebuilt from the same source
# with --disable-debug at -O2, the single-process loop (bench/sctp_loop.c)
# runs ~0.6x the instructions per message (docs/BENCHMARKS.md, "SCTP").
#
#   1. a deb-src entry for Debian's main archive (scripts/setup-ucx-src.sh
#      derives one from the machine's apt configuration; run first);
#   2. `apt-get source libusrsctp=$USRSCTP_VERSION` into DEST;
#   3. autoreconf + configure --disable-debug --disable-programs, static
#      and position-independent (it goes into libuct_sctp_dpdk.so, whose
#      link hides its symbols: an application's own usrsctp is unaffected);
#   4. make install into DEST/prefix; a stamp makes later runs a no-op.
#
# Patches: every scripts/usrsctp-patches/*.patch, in name order, is
# applied (patch -p1) to a copy of the fetched tree (DEST/libusrsctp-*-sdp),
# so the fetched tree stays Debian's; the stamp names their checksum, so a
# changed patch rebuilds.  0001: the fast SACK path restarts the T3-rtx
# timer when the cumulative ack moves (RFC 9260 6.3.2 R3), as the slow path
# does; without it every flight longer than one RTO took a T3 timeout with
# no loss (resending the chunks older than SRTT + 4 RTTVAR, if any, and
# cutting cwnd to one MTU; tests/integration/test_t3.py).  0002:
# usrsctp_set_conn_output_alloc(), the application allocates the buffer
# each AF_CONN packet is written into (sg: the data area of a DPDK mbuf,
# sent as is: one copy per byte less on TX); unset, or when it returns
# NULL, malloc as before.
# 0003: usrsctp_conninput_ext(), a received packet enters usrsctp as the
# external storage of an mbuf (sg: the DPDK mbuf it arrived in, freed
# through a callback when usrsctp lets go): one copy per byte less on RX.
# 0004: usrsctp_set_conn_output_chain(), a packet leaves as usrsctp's own
# mbuf chain (its pieces, then usrsctp_conn_chain_free once sent): sg
# chains the payload as external buffers, no copy out of usrsctp;
# declined or unset, as before.
# 0005: usrsctp_set_tx_cluster_bytes(), a send's data go into buffers of
# up to that size instead of 2048-byte clusters (sg: tx_cluster, 64k), so
# a DATA chunk is one chained segment, not ~5 at MTU 9000; 0, as before.
# 0006: usrsctp_sendv_ext(), a send references the caller's bytes (read-
# only external mbufs) instead of copying them into clusters, and calls
# its free function once nothing references them (sg_send_zc, UCT
# put_zcopy above TX_ZCOPY_MIN).
# 0007: a bound-all association finds a local AF_CONN address in the
# VRF's address hash (16384 buckets instead of 16) instead of walking every
# address on every received packet: sg registers one address per peer, so
# the walk was O(peers) per packet (docs/BENCHMARKS.md, "Thousands of peers
# on one endpoint").
# 0008: getsockopt SCTP_SDP_UNSENT, an association's queued bytes not yet
# transmitted (sg_assoc_unsent: the transport keeps polling while a send
# it completed still has bytes there; docs/APPLICATIONS.md).
# 0009: usrsctp_zcopy_detach(), an association's queued and
# unacknowledged DATA stops referencing 0006's bytes in a range (each such
# piece copied into memory usrsctp owns): a deregistration under
# zero-copy GET replies waits for the port's chained packets, not for the
# peer's SACK (sg_assoc_zc_detach, ucx-tl/sctp_dpdk_getzc.c).
#
# The last line printed is the install prefix (pass it to meson as
# -Dusrsctp_prefix=...).  scripts/check-usrsctp-opt.py fails the build if
# the library in use is the unoptimised one.
# shellcheck source-path=SCRIPTDIR source=lib/debsrc.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/lib/debsrc.sh"
debsrc_init setup-usrsctp

# The source of the installed libusrsctp-dev (Debian 12 and 13: 0.9.5.0-2).
# shellcheck source=lib/release.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/lib/release.sh"
USRSCTP_VERSION=$(release_source_version libusrsctp-dev)
[[ -n $USRSCTP_VERSION ]] ||
  die "libusrsctp-dev is not installed: its source package is what is built here (scripts/setup.sh installs it)"
UPSTREAM=${USRSCTP_VERSION#*:}
UPSTREAM=${UPSTREAM%-*}
# -O2 as measured; -g keeps symbols for profiles and costs no speed.
# Debian's own maintainer flag, for the packed-member warnings of its code.
USRSCTP_CFLAGS="-O2 -g -Wno-address-of-packed-member"

debsrc_dest .deps/usrsctp "$@"
SRC_TREE=$DEST/libusrsctp-$UPSTREAM
TREE=$DEST/libusrsctp-$UPSTREAM-sdp
PREFIX=$DEST/prefix
STAMP=$DEST/.sdp-usrsctp.stamp
PATCH_DIR=$(cd "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)/usrsctp-patches
PATCHES=()
for p in "$PATCH_DIR"/*.patch; do
  [[ -f $p ]] && PATCHES+=("$p")
done
PATCH_SUM=none
if ((${#PATCHES[@]} > 0)); then
  PATCH_SUM=$(cat "${PATCHES[@]}" | sha256sum | cut -c1-16)
fi
STAMP_TEXT="libusrsctp=$USRSCTP_VERSION cflags=$USRSCTP_CFLAGS debug=no static=yes pic=yes patches=$PATCH_SUM prefix=$PREFIX"

if debsrc_stamp_ok "$STAMP" "$STAMP_TEXT" "$PREFIX/lib/libusrsctp.a" "$PREFIX/include/usrsctp.h"; then
  echo "$PREFIX"
  exit 0
fi

debsrc_fetch_or_archive libusrsctp "$USRSCTP_VERSION" "$SRC_TREE"

command -v patch >/dev/null || die "patch not found: apt-get install patch"
rm -rf "$TREE"
cp -a "$SRC_TREE" "$TREE" || die "cannot copy $SRC_TREE to $TREE (disk space?)"
for p in "${PATCHES[@]}"; do
  log "patch $(basename -- "$p")"
  patch -d "$TREE" -p1 --forward --quiet <"$p" >&2 ||
    die "$p does not apply to $SRC_TREE (usrsctp $USRSCTP_VERSION): update the patch for this version"
done

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
