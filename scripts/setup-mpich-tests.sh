#!/bin/bash
# setup-mpich-tests.sh DEST - MPICH's own test suite (test/mpi) for the
# installed Debian mpich, with its pt2pt tests built against it, for
# tests/integration/test_mpich_suite.py.
#
#   1. the source version of the installed mpich (dpkg's source:Version,
#      e.g. 4.0.2-3 for the binNMU 4.0.2-3+b1);
#   2. `apt-get source --download-only mpich=<that version>` (apt checks
#      the .dsc's hashes) through the deb-src entry setup-ucx-src.sh wrote;
#      when apt cannot get it (a mirror serving the release's binary
#      packages but no source packages), the upstream archive
#      $SDP_SRC_ARCHIVE_DIR/mpich-<upstream>.tar.{gz,xz,bz2} instead: an
#      MPICH release tarball, or `git archive` of the release's tag holding
#      at least test/mpi, confdb and maint/version.m4 (test/mpi's own
#      autogen.sh then generates its configure: autoconf, automake,
#      libtool, python3);
#   3. only test/mpi of the upstream tarball is unpacked (after checking
#      that no Debian patch touches it): ~20 MB instead of the whole tree;
#   4. test/mpi's own configure with mpicc.mpich, then make in util/ and
#      pt2pt/ only (pt2pt pulls in dtpools/ itself), and coll/opminloc
#      (tests/integration/test_exit_drain.py).
#
# A stamp makes later runs a no-op.  Nothing of MPICH enters the project's
# tree.  The last line printed is the configured test/mpi directory (pass
# it to meson as -Dmpich_tests=...).
set -euo pipefail

SRC_LIST=/etc/apt/sources.list.d/sdp-deb-src.sources

log() { echo "setup-mpich-tests: $*" >&2; }
die() { echo "setup-mpich-tests: error: $*" >&2; exit 1; }

[[ $# -eq 1 ]] || die "usage: $0 DEST   (e.g. $0 .deps/mpich)"
DEST=$(realpath -m -- "$1")

status=$(dpkg-query -W -f='${Status}' mpich 2>/dev/null) || true
[[ $status == "install ok installed" ]] ||
  die "the Debian package mpich is not installed (apt-get install mpich libmpich-dev)"
SRC_VERSION=$(dpkg-query -W -f='${source:Version}' mpich)
# Debian's upstream version names the orig tarball; the real upstream
# version (after "+really": Debian 13's 4.3.0+really4.2.1 is MPICH 4.2.1)
# names the tree in it and the upstream archive.
DEB_UPSTREAM=${SRC_VERSION#*:}
DEB_UPSTREAM=${DEB_UPSTREAM%-*}
UPSTREAM=${DEB_UPSTREAM##*+really}
UPSTREAM=${UPSTREAM%%+*}
command -v mpicc.mpich >/dev/null ||
  die "mpicc.mpich not found: install libmpich-dev (the tests are built with it)"
for tool in make gcc xz tar; do
  command -v "$tool" >/dev/null || die "$tool not found: install build-essential xz-utils"
done

TREE=$DEST/mpich-$UPSTREAM/test/mpi
STAMP=$DEST/.sdp-mpich-tests.stamp
STAMP_TEXT="mpich=$SRC_VERSION tree=$TREE built=util,pt2pt,coll/opminloc"
if [[ -f $STAMP && -f $TREE/pt2pt/testlist && -x $TREE/pt2pt/sendrecv3 &&
      -x $TREE/coll/opminloc ]] &&
   [[ $(cat "$STAMP") == "$STAMP_TEXT" ]]; then
  echo "$TREE"
  exit 0
fi

SUDO=
[[ $EUID -eq 0 ]] || SUDO=sudo

# ---- 2. the source package ---------------------------------------------------
src_available() {
  local out
  out=$(apt-cache showsrc --only-source mpich 2>/dev/null) || return 1
  grep -qx "Version: $SRC_VERSION" <<<"$out"
}
ARCHIVE=
for a in "${SDP_SRC_ARCHIVE_DIR:-/nonexistent}/mpich-$UPSTREAM".tar.{gz,xz,bz2}; do
  if [[ -f $a ]]; then ARCHIVE=$a; break; fi
done
NO_SRC="mpich $SRC_VERSION is not available as a source package (apt-cache showsrc mpich) and no upstream archive was given: put mpich-$UPSTREAM.tar.gz (a release tarball, or git archive of tag v$UPSTREAM with test/mpi, confdb and maint/version.m4) in a directory named by SDP_SRC_ARCHIVE_DIR, or add a deb-src line for your Debian mirror"
if ! src_available && [[ -f $SRC_LIST ]]; then
  log "updating $SRC_LIST (mpich $SRC_VERSION sources not indexed yet)"
  if ! $SUDO apt-get update -q -o Dir::Etc::sourcelist="$SRC_LIST" -o Dir::Etc::sourceparts=- \
      -o APT::Get::List-Cleanup=0 >&2; then
    [[ -n $ARCHIVE ]] || die "apt-get update of $SRC_LIST failed"
    log "apt-get update of $SRC_LIST failed; the upstream archive is used"
  fi
fi
if ! src_available && [[ -z $ARCHIVE ]]; then
  [[ -f $SRC_LIST ]] ||
    die "apt knows no source package mpich $SRC_VERSION: run scripts/setup-ucx-src.sh first (it writes the deb-src entry $SRC_LIST); otherwise: $NO_SRC"
  die "$NO_SRC"
fi

mkdir -p "$DEST"
rm -f "$STAMP"

# Debian's source package: test/mpi of its orig tarball.  Returns non-zero
# when apt cannot download it (the index names it, the mirror has no file).
from_debsrc() {
  local dl=$DEST/.download orig debian patched
  src_available || return 1
  rm -rf "$dl"
  mkdir -p "$dl"
  log "apt-get source --download-only mpich=$SRC_VERSION"
  # Sandboxed download as _apt needs a directory _apt can write; ours may not be.
  if ! (cd "$dl" && apt-get source -q --download-only --only-source \
      -o APT::Sandbox::User=root "mpich=$SRC_VERSION" >&2); then
    rm -rf "$dl"
    return 1
  fi
  orig=$(find "$dl" -maxdepth 1 -name "mpich_${DEB_UPSTREAM}.orig.tar.*" | head -n 1)
  debian=$(find "$dl" -maxdepth 1 -name "mpich_*.debian.tar.*" | head -n 1)
  [[ -n $orig && -n $debian ]] || die "apt-get source left no orig/debian tarballs in $dl"

  # ---- 3. test/mpi only, unless Debian patches it -----------------------------
  patched=$(tar -xOf "$debian" --wildcards 'debian/patches/*' 2>/dev/null |
    grep -E '^\+\+\+ [^ ]*test/mpi/' || true)
  [[ -z $patched ]] ||
    die "Debian's patches touch test/mpi ($patched): this script unpacks test/mpi unpatched; apply them here first"
  rm -rf "$DEST/mpich-$UPSTREAM"
  log "unpacking mpich-$UPSTREAM/test/mpi from $(basename "$orig")"
  tar -xf "$orig" -C "$DEST" "mpich-$UPSTREAM/test/mpi" ||
    die "$(basename "$orig") has no mpich-$UPSTREAM/test/mpi"
  rm -rf "$dl"
}

# The upstream archive: a release tarball has test/mpi/configure; a git
# archive of the tag has not, and test/mpi's autogen.sh makes it from
# confdb and maint/version.m4 at the top of the tree.
from_archive() {
  log "using the upstream archive $ARCHIVE for mpich $SRC_VERSION (the mirror serves no source package of it; no Debian patches)"
  rm -rf "$DEST/mpich-$UPSTREAM"
  tar -xf "$ARCHIVE" -C "$DEST" "mpich-$UPSTREAM/test/mpi" ||
    die "$ARCHIVE has no mpich-$UPSTREAM/test/mpi"
  [[ -x $TREE/configure ]] && return 0
  tar -xf "$ARCHIVE" -C "$DEST" "mpich-$UPSTREAM/confdb" "mpich-$UPSTREAM/maint/version.m4" ||
    die "$ARCHIVE has no configure in test/mpi, nor confdb and maint/version.m4 to generate it"
  local tool
  for tool in autoreconf automake libtoolize python3 perl; do
    command -v "$tool" >/dev/null || die "$tool not found: install autoconf automake libtool python3 perl (test/mpi's autogen.sh)"
  done
  log "test/mpi/autogen.sh (log: $TREE/sdp-autogen.log)"
  (cd "$TREE" && ./autogen.sh >"$TREE/sdp-autogen.log" 2>&1) ||
    die "test/mpi/autogen.sh failed; see $TREE/sdp-autogen.log"
}

if ! from_debsrc; then
  [[ -n $ARCHIVE ]] || die "apt-get source --download-only mpich=$SRC_VERSION failed; $NO_SRC"
  from_archive
fi

# ---- 4. configure and build pt2pt -------------------------------------------
log "configure (log: $TREE/sdp-configure.log)"
(cd "$TREE" && ./configure CC=mpicc.mpich MPICC=mpicc.mpich MPIEXEC=mpiexec.mpich \
  --enable-fortran=no --disable-cxx --disable-romio --disable-spawn \
  --disable-ft-tests --disable-perftest --disable-checkerrors \
  --disable-dependency-tracking >"$TREE/sdp-configure.log" 2>&1) ||
  die "configure failed; see $TREE/sdp-configure.log and $TREE/config.log"
log "make util pt2pt coll/opminloc (log: $TREE/sdp-make.log)"
jobs=$(nproc 2>/dev/null || echo 1)
(make -C "$TREE/util" -j"$jobs" && make -C "$TREE/pt2pt" -j"$jobs" &&
  make -C "$TREE/coll" opminloc) \
  >"$TREE/sdp-make.log" 2>&1 || die "build failed; see $TREE/sdp-make.log"
[[ -f $TREE/pt2pt/testlist && -x $TREE/pt2pt/sendrecv3 &&
   -x $TREE/coll/opminloc ]] ||
  die "the build left no pt2pt/testlist, pt2pt/sendrecv3 or coll/opminloc in $TREE"

echo "$STAMP_TEXT" >"$STAMP"
log "MPICH $UPSTREAM test suite ready (pt2pt built)"
echo "$TREE"
