#!/bin/bash
# setup.sh - install everything sctp-dpdk needs on a fresh Debian 12 or
# Debian 13 machine (as root, or with sudo), fetch and configure the source
# tree of the installed UCX for its internal headers, build an optimised
# usrsctp from its Debian source (setup-usrsctp.sh), and build the project
# into ./build.  The package set is the release's (scripts/lib/release.sh);
# versions are whatever the release ships.  Idempotent: when everything is
# present it only checks and rebuilds what changed (seconds).
#
#   scripts/setup.sh            install + configure + build
#   SDP_BUILD_DIR=dir           build directory (default: build)
#   SDP_WERROR=1                configure with -Dwerror=true (CI)
#   SDP_DEPS_DIR=dir            where fetched sources live (default: .deps)
#   SDP_UCX_PREFIX=dir          a site's own UCX installation (its
#   SDP_UCX_SRC=dir             lib/pkgconfig is searched first) and the
#                               configured source tree it was built from
#                               (both or neither; ucx-tl/README.md)
#   SDP_RELEASE=codename        bookworm|trixie, when /etc/os-release names
#                               another (a derivative)
set -eEuo pipefail

# Safety net: set -e stops at the first failing command; never without a word.
on_err() { # status line command
  [[ $- == *e* ]] && ((BASH_SUBSHELL == 0)) || return 0
  local fn=${FUNCNAME[1]:-main}
  if [[ $fn == main ]]; then fn=; else fn=" in $fn()"; fi
  echo "setup: error: line $2$fn: '$3' failed with status $1 (output above, if any, says why)" >&2
}
trap 'on_err $? $LINENO "$BASH_COMMAND"' ERR

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${SDP_BUILD_DIR:-$ROOT/build}
DEPS=${SDP_DEPS_DIR:-$ROOT/.deps}
# shellcheck source=lib/release.sh
source "$ROOT/scripts/lib/release.sh"
release_init

# The release's packages.  UCX is not pinned: ucx-tl/ is built against the
# internal headers of the installed version's own source (setup-ucx-src.sh),
# and meson refuses a version outside the tested range.
PACKAGES=(
  # build
  build-essential pkg-config meson ninja-build libgtest-dev python3
  # dataplane: DPDK 22.11 or 24.11 (libraries + PMD plugins + dpdk-testpmd)
  libdpdk-dev dpdk dpdk-dev
  # CRC32c (crc32_iscsi)
  libisal-dev
  # UCX transport: headers, ucx_info/ucx_perftest; the source tree for
  # UCX's internal headers is configured by setup-ucx-src.sh
  libucx-dev ucx-utils libucx0
  dpkg-dev autoconf automake libtool libibverbs-dev librdmacm-dev libnuma-dev
  # MPI: both implementations use UCX (pml ucx / ch4:ucx); mpi4py and pip
  # for the mpi4py test suite (its upstream sdist, see setup-mpi4py-tests.sh)
  openmpi-bin libopenmpi-dev mpich libmpich-dev python3-mpi4py python3-pip
  # usrsctp and mimalloc are built from Debian's source (setup-usrsctp.sh,
  # setup-mimalloc.sh); Debian's own -O0 usrsctp and whole-process
  # mimalloc stay installed as the baselines of bench/usrsctp_build.py
  cmake libusrsctp-dev "$REL_MIMALLOC_PKG"
  # virtual testbed: namespaces, veth, bridge, netem; ping for its self-test;
  # ethtool turns off the hosts' checksum offloads under the user-space
  # impairment forwarder (without it kernel TCP's checksums arrive
  # unfilled and every segment is dropped: the UCX tcp baseline hangs)
  iproute2 iputils-ping procps ethtool
  # benchmark plots
  python3-matplotlib
  # applications of bench/apps_vs_tcp.py and the demo (Open MPI builds)
  lammps hpcc
  # fuzzing (tests/fuzz): clang with libFuzzer and the sanitizer runtimes
  "${REL_CLANG_PKGS[@]}"
  # the vhost testbed's switch (sdp-testbed vhost runs its own daemons)
  "${REL_OVS_PKGS[@]}"
)

log() { echo "setup: $*" >&2; }
die() { echo "setup: error: $*" >&2; exit 1; }

SUDO=
if [[ $EUID -ne 0 ]]; then
  command -v sudo >/dev/null || die "run as root (or install sudo): packages must be installed"
  SUDO=sudo
fi

# Prints the installed version of package $1, or nothing.  dpkg-query exits 1
# for a package it has never seen: that is an answer here, not a failure.
installed_version() {
  local out
  out=$(dpkg-query -W -f='${Status} ${Version}' "$1" 2>/dev/null) || true
  sed -n 's/^install ok installed //p' <<<"$out"
}

missing=()
for spec in "${PACKAGES[@]}"; do
  name=${spec%%=*}
  want=${spec#*=}
  have=$(installed_version "$name")
  if [[ -z $have ]] || { [[ $spec == *=* ]] && [[ $have != "$want" ]]; }; then
    missing+=("$spec")
  fi
done

if [[ ${#missing[@]} -gt 0 ]]; then
  log "installing: ${missing[*]}"
  $SUDO apt-get update -q >&2 || die "apt-get update failed: check the apt sources in /etc/apt"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q \
    --no-install-recommends --allow-downgrades "${missing[@]}" >&2 ||
    die "apt-get install failed for: ${missing[*]}"
  # The package starts the system's Open vSwitch service where systemd
  # runs; the testbed never uses it (each vhost job starts its own switch
  # with its own database and run directory), so the service installed
  # here is stopped and left disabled, and nothing else is touched.
  if [[ " ${missing[*]} " == *" openvswitch-switch"* ]] &&
    command -v systemctl >/dev/null && systemctl is-active --quiet openvswitch-switch.service; then
    log "stopping and disabling openvswitch-switch.service (installed just now; sdp-testbed vhost starts its own switch)"
    $SUDO systemctl disable --now openvswitch-switch.service >&2 ||
      log "warning: could not stop openvswitch-switch.service: stop it with systemctl stop openvswitch-switch"
  fi
else
  log "all ${#PACKAGES[@]} packages present"
fi
log "$REL_NAME: UCX $(installed_version libucx0), DPDK $(installed_version libdpdk-dev), Open MPI $(installed_version openmpi-bin), MPICH $(installed_version mpich)"

if [[ -n ${SDP_UCX_PREFIX:-}${SDP_UCX_SRC:-} ]]; then
  # A site's own UCX: its pkg-config files first, its configured tree for
  # the internal headers.  meson checks that both are the same version.
  [[ -n ${SDP_UCX_PREFIX:-} && -n ${SDP_UCX_SRC:-} ]] ||
    die "set both SDP_UCX_PREFIX (the UCX installation) and SDP_UCX_SRC (the configured source tree it was built from), or neither"
  pc_dir=
  for d in "$SDP_UCX_PREFIX"/lib/pkgconfig "$SDP_UCX_PREFIX"/lib/*/pkgconfig "$SDP_UCX_PREFIX"/lib64/pkgconfig; do
    if [[ -f $d/ucx-uct.pc ]]; then pc_dir=$d; break; fi
  done
  [[ -n $pc_dir ]] || die "SDP_UCX_PREFIX=$SDP_UCX_PREFIX has no lib/pkgconfig/ucx-uct.pc: is it the prefix UCX was installed into (make install)?"
  export PKG_CONFIG_PATH=$pc_dir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
  UCX_SRC=$SDP_UCX_SRC
  log "site UCX: $SDP_UCX_PREFIX (pkg-config: $pc_dir), source tree $UCX_SRC"
  [[ -f $UCX_SRC/config.h && -f $UCX_SRC/src/uct/base/uct_iface.h ]] ||
    die "SDP_UCX_SRC=$UCX_SRC is not a configured UCX source tree (no config.h or src/uct/base/uct_iface.h)"
else
  UCX_SRC=$("$ROOT/scripts/setup-ucx-src.sh" "$DEPS/ucx" | tail -n 1) ||
    die "scripts/setup-ucx-src.sh failed (its messages above say why)"
  [[ -f $UCX_SRC/config.h ]] || die "UCX source tree not configured: $UCX_SRC"
fi

USRSCTP_PREFIX=$("$ROOT/scripts/setup-usrsctp.sh" "$DEPS/usrsctp" | tail -n 1) ||
  die "scripts/setup-usrsctp.sh failed (its messages above say why)"
[[ -f $USRSCTP_PREFIX/lib/libusrsctp.a ]] || die "usrsctp was not built: $USRSCTP_PREFIX"

MIMALLOC_PREFIX=$("$ROOT/scripts/setup-mimalloc.sh" "$DEPS/mimalloc" | tail -n 1) ||
  die "scripts/setup-mimalloc.sh failed (its messages above say why)"
[[ -f $MIMALLOC_PREFIX/lib/libmimalloc.a ]] || die "mimalloc was not built: $MIMALLOC_PREFIX"

MPI4PY_TESTS=$("$ROOT/scripts/setup-mpi4py-tests.sh" "$DEPS/mpi4py" | tail -n 1) ||
  die "scripts/setup-mpi4py-tests.sh failed (its messages above say why)"

# MPICH's own test suite comes from the installed mpich's source package;
# a machine whose apt sources cannot serve it still gets everything else
# (the mpich-suite test is then not built, and this says so).
if MPICH_TESTS=$("$ROOT/scripts/setup-mpich-tests.sh" "$DEPS/mpich" | tail -n 1); then
  :
else
  MPICH_TESTS=
  log "warning: MPICH's test suite was not set up (scripts/setup-mpich-tests.sh, above): the mpich-suite integration test is not built"
fi

opts=(-Ducx_src="$UCX_SRC" -Dmpi4py_tests="$MPI4PY_TESTS" -Dusrsctp_prefix="$USRSCTP_PREFIX"
  -Dmimalloc_prefix="$MIMALLOC_PREFIX" -Dmpich_tests="$MPICH_TESTS")
[[ ${SDP_WERROR:-0} == 1 ]] && opts+=(-Dwerror=true)
# --reconfigure on an existing build: `meson configure` refuses options the
# build directory was set up before they existed.
if [[ -f $BUILD/build.ninja ]]; then
  meson setup --reconfigure "$BUILD" "$ROOT" "${opts[@]}" >"$BUILD/sdp-meson-setup.log" 2>&1 ||
    die "meson setup --reconfigure failed; see $BUILD/sdp-meson-setup.log (if the build directory is stale, remove it: rm -rf $BUILD)"
else
  meson setup "$BUILD" "$ROOT" "${opts[@]}" >&2 ||
    die "meson setup failed; see $BUILD/meson-logs/meson-log.txt"
fi
ninja -C "$BUILD" >&2 || die "build failed (ninja -C $BUILD): the compiler's messages are above"
log "built into $BUILD"
