# scripts/lib/debsrc.sh - sourced (not run) by the scripts that build a
# dependency from a pinned Debian source package (setup-ucx-src.sh,
# setup-usrsctp.sh, setup-mimalloc.sh).  What they share:
#
#   debsrc_init NAME   strict mode (set -eEuo pipefail), log/die prefixed
#                      with NAME, an ERR trap that names the line, the
#                      function and the command that failed
#   debsrc_dest DEST_EXAMPLE "$@"
#                      the one DEST argument (usage otherwise); sets DEST
#   debsrc_stamp_ok STAMP TEXT FILE...
#                      the stamp says TEXT and every FILE exists (a second
#                      run is a no-op)
#   debsrc_available PKG VERSION
#                      apt knows source package PKG at VERSION
#   debsrc_require PKG VERSION
#                      debsrc_available, or die saying how to add the deb-src
#                      entry (setup-ucx-src.sh derives it)
#   debsrc_fetch PKG VERSION TREE
#                      `apt-get source PKG=VERSION` into DEST unless TREE
#                      already holds that version (debian/changelog)
#   debsrc_fetch_or_archive PKG VERSION TREE
#                      debsrc_fetch; when apt cannot get that source package
#                      (a mirror that serves the release's binary packages
#                      but not its sources), the upstream release archive
#                      $SDP_SRC_ARCHIVE_DIR/PKG-UPSTREAM.tar.{gz,xz,bz2} of
#                      the same upstream version instead, unpacked into
#                      TREE (no Debian patches; DEBSRC_FROM_ARCHIVE=1 and
#                      TREE/.sdp-upstream-archive say so)
#
# Every failure says what failed and how to fix it.
# shellcheck shell=bash

debsrc_init() {
  DEBSRC_NAME=$1
  set -eEuo pipefail
  trap 'debsrc_on_err $? $LINENO "$BASH_COMMAND"' ERR
}

log() { echo "$DEBSRC_NAME: $*" >&2; }
die() { echo "$DEBSRC_NAME: error: $*" >&2; exit 1; }

# Safety net: set -e stops at the first failing command; never without a
# word.  Only the failure that ends the script is reported (not one inside
# a subshell or a condition).
debsrc_on_err() { # status line command
  [[ $- == *e* ]] && ((BASH_SUBSHELL == 0)) || return 0
  local fn=${FUNCNAME[1]:-main}
  if [[ $fn == main ]]; then fn=; else fn=" in $fn()"; fi
  echo "$DEBSRC_NAME: error: line $2$fn: '$3' failed with status $1 (output above, if any, says why)" >&2
}

debsrc_dest() { # example "$@"
  local example=$1
  shift
  [[ $# -eq 1 ]] || die "usage: $0 DEST   (e.g. $0 $example)"
  DEST=$(realpath -m -- "$1")
}

debsrc_stamp_ok() { # stamp text file...
  local stamp=$1 text=$2 f
  shift 2
  [[ -f $stamp ]] || return 1
  for f in "$@"; do
    [[ -f $f ]] || return 1
  done
  [[ $(cat "$stamp") == "$text" ]]
}

# No `| grep -q` under pipefail: grep leaving early can fail the writer
# (SIGPIPE).
debsrc_available() { # pkg version
  local out
  out=$(apt-cache showsrc --only-source "$1" 2>/dev/null) || return 1
  grep -qx "Version: $2" <<<"$out"
}

debsrc_require() { # pkg version
  debsrc_available "$1" "$2" ||
    die "$1 $2 is not available as a source package (apt-cache showsrc $1): run scripts/setup-ucx-src.sh first, which adds the deb-src entry, or add a deb-src line for Debian 12's main archive"
}

debsrc_have_tree() { # tree version
  [[ -f $1/debian/changelog ]] &&
    [[ $(dpkg-parsechangelog -l "$1/debian/changelog" -S Version) == "$2" ]]
}

# The upstream version in Debian version $1: no epoch, no Debian
# revision, no +ds/+dfsg repack suffix.
debsrc_upstream() {
  local v=${1#*:}
  v=${v%-*}
  echo "${v%%+*}"
}

DEBSRC_FROM_ARCHIVE=0
debsrc_fetch_or_archive() { # pkg version tree
  local pkg=$1 version=$2 tree=$3 up a archive=
  DEBSRC_FROM_ARCHIVE=0
  if [[ -f $tree/.sdp-upstream-archive && $(cat "$tree/.sdp-upstream-archive") == "$pkg $version" ]]; then
    DEBSRC_FROM_ARCHIVE=1
    return 0
  fi
  if debsrc_available "$pkg" "$version" && (debsrc_fetch "$pkg" "$version" "$tree"); then
    return 0
  fi
  up=$(debsrc_upstream "$version")
  for a in "${SDP_SRC_ARCHIVE_DIR:-/nonexistent}/$pkg-$up".tar.{gz,xz,bz2}; do
    if [[ -f $a ]]; then archive=$a; break; fi
  done
  [[ -n $archive ]] ||
    die "apt-get source $pkg=$version is not possible here (no deb-src entry for it, or the mirror does not serve that source package) and no upstream archive was given: put the upstream release archive $pkg-$up.tar.gz (or .xz) in a directory named by SDP_SRC_ARCHIVE_DIR"
  log "using the upstream archive $archive for $pkg $version (Debian's source package is not available from this machine's apt sources; no Debian patches)"
  mkdir -p "$DEST" || die "cannot create $DEST (set SDP_DEPS_DIR to a writable directory)"
  rm -rf "$tree" "$tree.tmp"
  mkdir -p "$tree.tmp"
  tar -xf "$archive" -C "$tree.tmp" --strip-components=1 || die "cannot unpack $archive"
  echo "$pkg $version" >"$tree.tmp/.sdp-upstream-archive"
  mv "$tree.tmp" "$tree"
  DEBSRC_FROM_ARCHIVE=1
}

debsrc_fetch() { # pkg version tree
  local pkg=$1 version=$2 tree=$3
  mkdir -p "$DEST" || die "cannot create $DEST (set SDP_DEPS_DIR to a writable directory)"
  debsrc_have_tree "$tree" "$version" && return 0
  rm -rf "$tree"
  log "apt-get source $pkg=$version into $DEST"
  # Sandboxed download as _apt needs a directory _apt can write; ours may
  # not be.
  (cd "$DEST" && apt-get source -q --only-source -o APT::Sandbox::User=root \
    "$pkg=$version" >&2) ||
    die "apt-get source $pkg=$version failed (network, or the deb-src entry: scripts/setup-ucx-src.sh adds it)"
  debsrc_have_tree "$tree" "$version" ||
    die "$tree was not produced by apt-get source (is the directory name different?)"
}
