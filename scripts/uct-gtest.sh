#!/bin/bash
# uct-gtest.sh - judge the transport by the installed UCX's own UCT gtest
# suite (UCX 1.13.1 on Debian 12, 1.18.1 on Debian 13, or a site's own
# build: scripts/site-ucx-check.sh).
#
# Builds the UCT part of UCX's test/gtest out of tree, into a cache outside
# any checkout, and links it against the INSTALLED libucs/libuct/libucp
# (Debian's libucx0): the process then has one libuct, the one
# libuct_sctp_dpdk.so links and registers with.  The tree only provides
# the sources and its config.h (Debian's flags, scripts/setup-ucx-src.sh).
# The one change to UCX's sources is
# tests/uct/gtest/ucx-<version>-gtest-sctp_dpdk.patch (one per UCX version
# the suite runs with; the macro moved between releases), applied to the
# cached copy: it adds `sctp_dpdk` to the transports the UCT test cases
# are instantiated for (UCT_TEST_NO_SELF_TLS in uct/uct_test.h; in 1.23,
# whose lists already fill UCS_PP_FOREACH's 21 arguments, one more
# instantiation in UCT_INSTANTIATE_TEST_CASE, _NO_SELF_ and _NO_GPU_).
#
# Every test case runs in its own process under a memory limit (some grew
# past 20 GB when a send path had no bound) and a deadline, once per
# progress mode (UCX_SCTP_DPDK_PROGRESS=inline and =thread), with
# libuct_sctp_dpdk.so preloaded and a net_null port (all traffic of the
# suite is between ifaces of one process, i.e. local delivery), and then
# in "wire mode" (UCX_SCTP_DPDK_SELF_WIRE=y: the device is both ends of a
# memif pair in the process and ifaces take the ends in turn, so a test's
# sender and receiver talk over SCTP across the wire).  Prints one line
# per case and exits non-zero when any test failed, crashed or timed out.
#
#   scripts/uct-gtest.sh                    build if needed, run the cases
#   scripts/uct-gtest.sh --build-only
#   scripts/uct-gtest.sh --cases 'test_uct_pending uct_flush_test'
#   scripts/uct-gtest.sh --filter 'sctp_dpdk/uct_p2p_am_test.am_short/*'
#   scripts/uct-gtest.sh --progress thread  (default: both inline and thread)
#   scripts/uct-gtest.sh --wire self        (default: local, then self with
#                                            the cases of CASES_WIRE, inline)
#
# Environment: SDP_UCX_SRC (the configured tree of the installed UCX),
# PKG_CONFIG_PATH (which UCX: meson passes the one it built with), SDP_UCT_LIB
# (libuct_sctp_dpdk.so), SDP_GTEST_CACHE (/var/cache/sctp-dpdk-gtest),
# SDP_GTEST_AS_BYTES (address-space limit, 6000000000), SDP_GTEST_TIMEOUT_S
# (per case, 900), SDP_GTEST_JOBS (compile jobs, 2), SDP_GTEST_LOG_DIR.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${SDP_BUILD_DIR:-$ROOT/build}
DEPS=${SDP_DEPS_DIR:-$ROOT/.deps}
UCX_SRC=${SDP_UCX_SRC:-}
LIB=${SDP_UCT_LIB:-$BUILD/ucx-tl/libuct_sctp_dpdk.so}
CACHE=${SDP_GTEST_CACHE:-/var/cache/sctp-dpdk-gtest}
AS_BYTES=${SDP_GTEST_AS_BYTES:-6000000000}
TIMEOUT_S=${SDP_GTEST_TIMEOUT_S:-900}
JOBS=${SDP_GTEST_JOBS:-2}

# The UCT test cases run; each is one process.
CASES_DEFAULT="test_uct_pending uct_flush_test uct_cancel_test
uct_p2p_am_test uct_p2p_am_misc uct_p2p_am_tx_bufs uct_p2p_am_alignment
test_uct_peer_failure test_uct_peer_failure_multiple test_uct_ep
test_uct_query test_uct_event test_uct_progress test_many2one_am
uct_p2p_err_test uct_p2p_mix_test uct_fence_test"
# The cases run in wire mode (SELF_WIRE=y) unless --cases is given.
CASES_WIRE="test_uct_pending uct_flush_test uct_p2p_am_alignment
test_uct_peer_failure test_uct_peer_failure_multiple test_uct_ep
test_uct_query test_uct_event test_uct_progress test_many2one_am
uct_p2p_am_misc uct_p2p_mix_test"

# gtest sources built: the common harness, the UCT harness and the files
# of the cases above (googletest itself comes with the tree).
SOURCES="common/main.cc common/test_gtest_cmn.cc common/mem_buffer.cc
common/test_helpers.cc common/test_watchdog.cc common/test.cc
uct/uct_test.cc uct/uct_p2p_test.cc uct/test_pending.cc uct/test_flush.cc
uct/test_p2p_am.cc uct/test_peer_failure.cc uct/test_uct_ep.cc
uct/v2/test_uct_query.cc uct/test_event.cc uct/test_progress.cc
uct/test_many2one_am.cc uct/test_p2p_err.cc uct/test_p2p_mix.cc
uct/test_fence.cc
common/googletest/gtest.cc common/googletest/gtest-death-test.cc
common/googletest/gtest-filepath.cc common/googletest/gtest-port.cc
common/googletest/gtest-printers.cc common/googletest/gtest-test-part.cc
common/googletest/gtest-typed-test.cc"

die() { echo "uct-gtest: $*" >&2; exit 2; }

build_only=0
cases=$CASES_DEFAULT
cases_given=0
filter=""
modes="inline thread"
modes_given=0
wires="local self"
while [ $# -gt 0 ]; do
	case "$1" in
	--build-only) build_only=1 ;;
	--cases) shift; cases=$1; cases_given=1 ;;
	--filter) shift; filter=$1 ;;
	--progress) shift; modes=$1; modes_given=1 ;;
	--wire) shift; wires=$1 ;;
	*) die "unknown argument '$1' (--build-only, --cases LIST, --filter GTEST_FILTER, --progress 'inline thread', --wire 'local self')" ;;
	esac
	shift
done

ver=$(pkg-config --modversion ucx-uct 2>/dev/null || true)
[ -n "$ver" ] || die "no installed UCX (pkg-config ucx-uct): install libucx-dev (scripts/setup.sh)"
# A site's UCX outside the system's library path (SDP_UCX_PREFIX of
# setup.sh; meson passes its pkg-config directory): the gtest links it and
# finds it at run time (RUNPATH), as libuct_sctp_dpdk.so does.  pkg-config
# prints no -L for the system's own directories: Debian's UCX adds nothing.
ucx_ldirs=$(pkg-config --libs-only-L ucx-uct ucx-ucs ucx 2>/dev/null || true)
ucx_rpath=$(for d in $ucx_ldirs; do printf ' -Wl,-rpath,%s' "${d#-L}"; done)
if [ -z "$UCX_SRC" ]; then
	UCX_SRC=$(ls -d "$DEPS/ucx/ucx-$ver" "$DEPS/ucx/ucx-$ver"+* 2>/dev/null | head -n 1 || true)
fi
[ -n "$UCX_SRC" ] && [ -f "$UCX_SRC/config.h" ] && [ -d "$UCX_SRC/test/gtest/uct" ] ||
	die "SDP_UCX_SRC='$UCX_SRC' is not a configured UCX $ver tree: run scripts/setup-ucx-src.sh (it prints the path)"
src_ver=$(sed -n 's/^#define UCT_VERNO_STRING *"\(.*\)"/\1/p' "$UCX_SRC/src/uct/api/version.h")
[ "$src_ver" = "$ver" ] ||
	die "SDP_UCX_SRC=$UCX_SRC is UCX '$src_ver' but the installed UCX is $ver: the gtest links the installed libraries, so its sources must be of the same version (scripts/setup-ucx-src.sh)"
PATCH=$ROOT/tests/uct/gtest/ucx-$ver-gtest-sctp_dpdk.patch
[ -f "$PATCH" ] ||
	die "no $PATCH: the suite is instantiated for sctp_dpdk by one such patch per UCX version (add sctp_dpdk to UCT_TEST_NO_SELF_TLS in test/gtest/uct/uct_test.h of UCX $ver and save the diff there)"
case "$CACHE" in
"$ROOT"/*) die "SDP_GTEST_CACHE=$CACHE is inside the checkout: use a directory outside it" ;;
esac

# ---- build (cached by the inputs' hash) ----
# Bump BUILD_REV when the compile or link commands below change.
BUILD_REV=2
key=$( (echo "$BUILD_REV $UCX_SRC${ucx_ldirs:+ $ucx_ldirs}"; echo "$SOURCES"; cat "$PATCH" "$UCX_SRC/config.h";
	g++ --version | head -1) | sha256sum | cut -c1-16)
DIR=$CACHE/$key
BIN=$DIR/gtest
if [ ! -x "$BIN" ]; then
	echo "uct-gtest: building the UCT gtest in $DIR (once; ~10 min on 2 cores)"
	mkdir -p "$DIR"
	rm -rf "$DIR/src.tmp"
	cp -a "$UCX_SRC/test/gtest" "$DIR/src.tmp"
	patch -s -d "$DIR/src.tmp" -p3 < "$PATCH" ||
		die "$PATCH does not apply to $UCX_SRC/test/gtest"
	rm -rf "$DIR/src" && mv "$DIR/src.tmp" "$DIR/src"
	mkdir -p "$DIR/obj" "$DIR/inc"
	# <gtest/uct/uct_test.h> (v2/, ...) must find the patched copy too.
	ln -sfn "$DIR/src" "$DIR/inc/gtest"
	# The tree's config.h, found first (-I$DIR/inc), without HAVE_ROCM:
	# Debian 13's UCX is built with ROCm, whose headers only the gtest's
	# GPU memory helpers include (common/mem_buffer.cc; nothing in src/
	# changes layout with it); sctp_dpdk moves host memory only.
	sed 's|^#define HAVE_ROCM 1$|/* HAVE_ROCM left out for the gtest (scripts/uct-gtest.sh) */|' \
		"$UCX_SRC/config.h" > "$DIR/inc/config.h"
	# The flags of the tree's test/gtest/Makefile (BASE_CXXFLAGS,
	# GTEST_CXXFLAGS, gtest_CPPFLAGS) without -Werror: newer compilers
	# warn where UCX's CI compiler did not.
	CXXFLAGS="-O2 -g -Wall -funwind-tables -Wno-missing-field-initializers
		-Wno-unused-parameter -Wno-unused-label -Wno-long-long
		-Wno-endif-labels -Wno-sign-compare -Wno-multichar
		-Wno-deprecated-declarations -fno-tree-vectorize -std=c++11
		-fopenmp -DHAVE_CONFIG_H -DCPU_FLAGS= -DTOP_SRCDIR=\"$UCX_SRC\"
		-DGTEST_UCM_HOOK_LIB_DIR=\"$DIR/none\"
		-I$DIR/src -I$DIR/inc -I$UCX_SRC -I$UCX_SRC/src
		-I$UCX_SRC/test"
	export CXXFLAGS DIR
	echo "$SOURCES" | tr ' ' '\n' | grep . | xargs -P "$JOBS" -I{} sh -c '
		o="$DIR/obj/$(echo {} | tr / _).o"
		[ -f "$o" ] || { g++ $CXXFLAGS -c "$DIR/src/{}" -o "$o.tmp" &&
			mv "$o.tmp" "$o"; }' ||
		die "compiling failed (see above)"
	objs=$(for s in $SOURCES; do echo "$DIR/obj/$(echo "$s" | tr / _).o"; done)
	# shellcheck disable=SC2086
	g++ -fopenmp -o "$BIN.tmp" $objs -Wl,-dynamic-list-data \
		$ucx_ldirs $ucx_rpath -lucp -luct -lucs -lucm -lpthread -ldl -lrt ||
		die "linking failed (see above)"
	mv "$BIN.tmp" "$BIN"
fi
echo "uct-gtest: binary $BIN"
[ "$build_only" = 1 ] && exit 0

# ---- run ----
[ -f "$LIB" ] || die "SDP_UCT_LIB=$LIB missing: build ucx-tl first (scripts/setup.sh)"
[ "$(id -u)" = 0 ] || die "needs root (DPDK EAL, net_null port)"
for l in $(ldd "$BIN" | awk '/libuct\.so/ {print $3}') $(ldd "$LIB" | awk '/libuct\.so/ {print $3}'); do
	echo "$l"
done | sort -u | { read -r one; if read -r two; then
	die "gtest and $LIB load different libuct ($one, $two)"; fi; }

LOGS=${SDP_GTEST_LOG_DIR:-$(mktemp -d /tmp/sdp-uct-gtest.XXXXXX)}
mkdir -p "$LOGS"
if [ -n "$filter" ]; then
	runs="custom"
else
	runs=$cases
fi
rc_all=0
printf '%-39s %5s %5s %5s %5s %6s  %s\n' "progress/wire/case" tests pass skip fail secs "failed tests / status"
for wire in $wires; do
case "$wire" in
local) devargs=net_null0; self_wire=n; sg=""; wruns=$runs; wmodes=$modes ;;
# A small send buffer, so the cases that fill the transport until
# NO_RESOURCE (test_uct_pending) get there within their 3 s.
# Inline progress unless --progress says otherwise: with PROGRESS=thread
# two cases fail over the wire (docs/CONFORMANCE.md, "UCX's UCT gtest").
self) devargs=""; self_wire=y; sg="sndbuf=64K"
	wmodes=$modes; [ "$modes_given" = 0 ] && wmodes=inline
	wruns=$runs
	[ -z "$filter" ] && [ "$cases_given" = 0 ] && wruns=$CASES_WIRE ;;
*) die "--wire '$wire': use local or self" ;;
esac
for mode in $wmodes; do
for c in $wruns; do
	if [ "$c" = custom ]; then f=$filter; else f="sctp_dpdk/$c.*"; fi
	log=$LOGS/$mode-$wire-$c.log
	json=$LOGS/$mode-$wire-$c.json
	rm -f "$json"
	t0=$(date +%s)
	set +e
	env LD_PRELOAD="$LIB" \
		UCX_SCTP_DPDK_DEVARGS="$devargs" \
		UCX_SCTP_DPDK_SELF_WIRE=$self_wire \
		UCX_SCTP_DPDK_SG="$sg" \
		UCX_SCTP_DPDK_IP=10.77.9.1/24 \
		UCX_SCTP_DPDK_PREFIX="sdp-gt$$-$c" \
		UCX_SCTP_DPDK_PROGRESS="$mode" \
		UCX_HANDLE_ERRORS=bt UCX_LOG_LEVEL=warn \
		prlimit --as="$AS_BYTES" -- \
		timeout -k 10 "$TIMEOUT_S" "$BIN" --gtest_filter="$f" \
		--gtest_output="json:$json" > "$log" 2>&1
	rc=$?
	set -e
	secs=$(( $(date +%s) - t0 ))
	rm -rf "/var/run/dpdk/sdp-gt$$-$c"
	read -r n pass skip fail failed < <(python3 \
		"$ROOT/tests/uct/gtest/gtest_summary.py" "$json" "$log")
	status=$failed
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		status="TIMEOUT after ${TIMEOUT_S}s ($failed)"
	elif [ "$rc" != 0 ] && [ "$fail" = 0 ]; then
		status="EXIT $rc (crash or abort; $log)"
	fi
	if [ "$n" = 0 ] && [ "$rc" = 0 ]; then
		status="NO TESTS matched '$f'"
		rc=1
	fi
	[ "$rc" != 0 ] && rc_all=1
	printf '%-39s %5s %5s %5s %5s %6s  %s\n' "$mode/$wire/$c" "$n" "$pass" "$skip" "$fail" "$secs" "$status"
done
done
done
echo "uct-gtest: logs in $LOGS"
exit $rc_all
