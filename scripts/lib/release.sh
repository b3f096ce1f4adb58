# scripts/lib/release.sh - sourced (not run): the package names that differ
# between the Debian releases sctp-dpdk supports, chosen by the release this
# machine runs (VERSION_CODENAME in /etc/os-release).
#
#   release_init       sets SDP_RELEASE and the REL_* variables below, or
#                      dies naming the supported releases
#
#   REL_NAME           "Debian 12 (bookworm)", for messages
#   REL_MIMALLOC_PKG   the mimalloc runtime package (its source package,
#                      mimalloc, is what setup-mimalloc.sh builds): mimalloc 2
#                      on Debian 12, mimalloc 3 on Debian 13
#   REL_CLANG_PKGS     clang with libFuzzer and the sanitizer runtimes
#                      (tests/fuzz): the release's default clang major
#   REL_CLANG          the clang binary those install
#   REL_OVS_PKGS       Open vSwitch with DPDK, the switch of the vhost
#                      testbed (sdp-testbed vhost; test mpi-vhost)
#
# Versions are not pinned here: UCX, usrsctp, mimalloc, MPICH are built or
# fetched from the source package of whatever version is installed
# (release_source_version), and meson checks the UCX version against the
# range the transport is tested with (ucx-tl/meson.build).
#
# SDP_RELEASE=codename overrides the detection (e.g. a derivative whose
# VERSION_CODENAME is its own; use the Debian release it is based on).
# shellcheck shell=bash

release_init() {
  local codename=${SDP_RELEASE:-}
  if [[ -z $codename ]]; then
    codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}") || codename=
  fi
  case $codename in
  bookworm)
    REL_NAME="Debian 12 (bookworm)"
    REL_MIMALLOC_PKG=libmimalloc2.0
    REL_CLANG_PKGS=(clang-14 libclang-rt-14-dev)
    REL_CLANG=clang-14
    REL_OVS_PKGS=(openvswitch-switch-dpdk)
    ;;
  trixie)
    REL_NAME="Debian 13 (trixie)"
    REL_MIMALLOC_PKG=libmimalloc3
    REL_CLANG_PKGS=(clang-19 libclang-rt-19-dev)
    REL_CLANG=clang-19
    REL_OVS_PKGS=(openvswitch-switch-dpdk)
    ;;
  *)
    echo "${DEBSRC_NAME:-setup}: error: this system's release is '${codename:-unknown}' (VERSION_CODENAME in /etc/os-release); supported: Debian 12 (bookworm) and Debian 13 (trixie). A derivative: set SDP_RELEASE=bookworm or SDP_RELEASE=trixie, the Debian release it is based on" >&2
    exit 1
    ;;
  esac
  SDP_RELEASE=$codename
  export SDP_RELEASE
}

# The source-package version of installed binary package $1 (what
# `apt-get source` needs: a binNMU's +bN is not part of it), or nothing
# when the package is not installed.
release_source_version() {
  local out
  out=$(dpkg-query -W -f='${Status}|${source:Version}' "$1" 2>/dev/null) || true
  [[ $out == "install ok installed|"* ]] || return 0
  echo "${out#*|}"
}

# The directory `apt-get source` unpacks source version $2 of package $1
# into: <package>-<upstream version, no epoch, no Debian revision>.
release_source_dir() {
  local v=${2#*:}
  echo "$1-${v%-*}"
}
