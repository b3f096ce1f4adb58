#!/bin/bash
# site-ucx-check.sh - prove the transport against a site's own UCX build:
# build that UCX into a prefix, set sctp-dpdk up against it the README's
# way (SDP_UCX_PREFIX + SDP_UCX_SRC with scripts/setup.sh), check that UCX
# loads the transport from UCX_PLUGIN_PATH alone (UCX >= 1.22), and run
# the unit suite, UCX's own UCT gtest of that version and the MPI tests
# with that UCX's libraries (LD_LIBRARY_PATH: Open MPI's and MPICH's
# libucp.so.0 is then the site's, same soname).  As root, on a machine
# set up by scripts/setup.sh.  On 2 cores: UCX's build ~2 min (the flags
# below), the gtest's ~2 min (once), the rest ~4-5 min.
#
#   scripts/site-ucx-check.sh --source SRC --prefix DIR [--build-dir DIR]
#
#   SRC   a UCX source tree (DIR), a release or Debian .orig archive
#         (FILE.tar.gz|.tar.xz|.tar.bz2), or apt:VERSION@SUITE: Debian's
#         source package ucx=VERSION from SUITE (e.g.
#         apt:1.23.0~rc1-1@sid) through a deb-src entry for SUITE made
#         from this machine's first configured `deb` URI, in a private apt
#         state (nothing in /etc/apt or /var/lib/apt changes).
#   --prefix     where UCX is installed (skipped when it already holds the
#                tree's version); its configured tree stays next to SRC
#                (archives and apt: in DIR.src/)
#   --build-dir  sctp-dpdk's build directory (default: build-site-ucx)
#
# Environment: SDP_SITE_UCX_CONFIGURE (configure flags; default below:
# Debian's multi-threaded release build without GPU, InfiniBand and
# language bindings), SDP_SITE_UCX_JOBS (make -j, 2), SDP_SITE_TESTS
# (meson tests after the unit suite, default "uct-gtest mpi"),
# SDP_SITE_APT_OPTS (more apt-get options for apt:, e.g.
# "-o Acquire::Check-Valid-Until=false" for a mirror that serves a dated
# snapshot, as this machine's own apt configuration may say).
# Prints one line per check and exits non-zero when any failed.
set -eEuo pipefail

on_err() { # status line command
  [[ $- == *e* ]] && ((BASH_SUBSHELL == 0)) || return 0
  echo "site-ucx-check: error: line $2: '$3' failed with status $1 (output above, if any, says why)" >&2
}
trap 'on_err $? $LINENO "$BASH_COMMAND"' ERR

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
log() { echo "site-ucx-check: $*" >&2; }
die() { echo "site-ucx-check: error: $*" >&2; exit 1; }

SRC= PREFIX= BUILD=$ROOT/build-site-ucx
while [[ $# -gt 0 ]]; do
  case $1 in
  --source) SRC=$2; shift ;;
  --prefix) PREFIX=$2; shift ;;
  --build-dir) BUILD=$2; shift ;;
  *) die "unknown argument '$1' (--source SRC --prefix DIR [--build-dir DIR])" ;;
  esac
  shift
done
[[ -n $SRC && -n $PREFIX ]] || die "give --source (a UCX tree, an archive or apt:VERSION@SUITE) and --prefix (where UCX is installed)"
[[ $EUID -eq 0 ]] || die "run as root (DPDK, namespaces, apt-get source)"
[[ $PREFIX == /* ]] || PREFIX=$PWD/$PREFIX
[[ $BUILD == /* ]] || BUILD=$PWD/$BUILD

CONFIGURE_FLAGS=${SDP_SITE_UCX_CONFIGURE:---enable-mt --disable-debug --disable-assertions --disable-params-check --enable-logging --enable-devel-headers --enable-cma --enable-examples --without-cuda --without-rocm --without-ze --without-java --without-go --without-xpmem --without-verbs --without-rdmacm --without-mad --without-mlx5 --without-mpi --without-gdrcopy --without-knem --without-ugni --without-fuse3}
JOBS=${SDP_SITE_UCX_JOBS:-2}
TESTS=${SDP_SITE_TESTS:-uct-gtest mpi}
WORK=$PREFIX.src

# The first URI of a configured `deb` entry and its Signed-By (deb822
# *.sources first, then one-line lists): the mirror this machine uses.
first_deb_uri() {
  local f
  shopt -s nullglob
  for f in /etc/apt/sources.list.d/*.sources; do
    awk 'BEGIN { IGNORECASE = 1 }
      /^[ \t]*$/ { if (deb && uri != "") { print uri, signed; exit } deb = 0; uri = signed = "" }
      /^Types:.*(^| )deb( |$)/ { deb = 1 }
      /^URIs:/ { uri = $2 }
      /^Signed-By:/ { signed = $2 }
      END { if (deb && uri != "") print uri, signed }' "$f"
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [[ -f $f ]] && awk '/^[ \t]*deb[ \t]/ { sub(/\[[^]]*\]/, ""); print $2; exit }' "$f"
  done
}

# ---- 1. the UCX source tree --------------------------------------------------
case $SRC in
apt:*)
  spec=${SRC#apt:}
  version=${spec%@*} suite=${spec#*@}
  [[ $version != "$spec" && -n $suite ]] || die "--source apt:VERSION@SUITE, e.g. apt:1.23.0~rc1-1@sid"
  read -r uri signed < <(first_deb_uri | head -n 1) || true
  [[ -n ${uri:-} ]] || die "no 'deb' entry in /etc/apt to derive a deb-src entry from"
  apt_dir=$WORK/apt
  mkdir -p "$apt_dir/lists/partial"
  echo "deb-src ${signed:+[signed-by=$signed] }$uri $suite main" >"$apt_dir/sources.list"
  log "deb-src entry (private apt state in $apt_dir): $(cat "$apt_dir/sources.list")"
  apt_opts=(-o Dir::Etc::SourceList="$apt_dir/sources.list" -o Dir::Etc::SourceParts=-
    -o Dir::State::Lists="$apt_dir/lists" -o Dir::Cache="$apt_dir/cache")
  # shellcheck disable=SC2206  # options are words
  apt_opts+=(${SDP_SITE_APT_OPTS:-})
  apt-get "${apt_opts[@]}" update -q >&2 || die "apt-get update of the deb-src entry for $suite failed"
  (cd "$WORK" && apt-get "${apt_opts[@]}" source --download-only "ucx=$version" >&2) ||
    die "apt-get source ucx=$version failed: the mirror $uri does not serve it (a 404 means its pool lacks the files: put the upstream archive in a directory and give --source FILE)"
  (cd "$WORK" && dpkg-source -x --skip-patches ./*.dsc >&2) || die "dpkg-source -x failed in $WORK"
  TREE=$(find "$WORK" -mindepth 1 -maxdepth 1 -type d -name 'ucx-*' | head -n 1)
  ;;
*.tar.gz | *.tar.xz | *.tar.bz2 | *.tgz)
  [[ -f $SRC ]] || die "--source $SRC: no such archive"
  mkdir -p "$WORK"
  top=$(tar -tf "$SRC" | head -n 1 | cut -d/ -f1)
  [[ -d $WORK/$top ]] || tar -xf "$SRC" -C "$WORK"
  TREE=$WORK/$top
  ;;
*)
  [[ -d $SRC ]] || die "--source $SRC is neither a directory, an archive nor apt:VERSION@SUITE"
  TREE=$(cd "$SRC" && pwd)
  ;;
esac
[[ -n ${TREE:-} && -f $TREE/configure.ac && -f $TREE/src/uct/base/uct_iface.h ]] ||
  die "no UCX source tree found from --source $SRC (${TREE:-nothing extracted})"
log "UCX source tree: $TREE"

# ---- 2. build and install UCX ------------------------------------------------
ucx_ver() { sed -n 's/^define(\[ucx_ver_\(major\|minor\|patch\)\], *\([0-9]*\)).*/\2/p' "$TREE/configure.ac" | paste -sd.; }
want=$(ucx_ver)
have=$(PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig pkg-config --modversion ucx-uct 2>/dev/null || true)
if [[ $have == "$want" && -f $TREE/config.h ]]; then
  log "UCX $have already installed in $PREFIX (configured tree $TREE)"
else
  log "building UCX $want into $PREFIX (configure: $CONFIGURE_FLAGS)"
  [[ -x $TREE/configure ]] || (cd "$TREE" && ./autogen.sh >"$TREE/sdp-autogen.log" 2>&1) ||
    die "autogen.sh failed: $TREE/sdp-autogen.log"
  # shellcheck disable=SC2086  # the flags are words
  (cd "$TREE" && ./configure --prefix="$PREFIX" $CONFIGURE_FLAGS >"$TREE/sdp-configure.log" 2>&1) ||
    die "configure failed: $TREE/sdp-configure.log"
  (cd "$TREE" && make -j"$JOBS" >"$TREE/sdp-make.log" 2>&1 && make install >>"$TREE/sdp-make.log" 2>&1) ||
    die "make failed: $TREE/sdp-make.log"
fi

# ---- 3. sctp-dpdk against it (README: "A site's own UCX build") --------------
SDP_BUILD_DIR=$BUILD SDP_UCX_PREFIX=$PREFIX SDP_UCX_SRC=$TREE "$ROOT/scripts/setup.sh" ||
  die "scripts/setup.sh with SDP_UCX_PREFIX=$PREFIX SDP_UCX_SRC=$TREE failed (above)"

export LD_LIBRARY_PATH=$PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$PREFIX/bin:$PATH
results=()
rc_all=0
result() { # name status detail
  results+=("$(printf '%-28s %-5s %s' "$1" "$2" "$3")")
  [[ $2 == ok ]] || rc_all=1
}

# ---- 4. UCX loads the transport from UCX_PLUGIN_PATH (UCX >= 1.22) ----------
mm=${want%.*}
if [[ $(printf '%s\n1.22\n' "$mm" | sort -V | head -n 1) == 1.22 ]]; then
  plain=$(env -u LD_PRELOAD ucx_info -d 2>&1 | grep -c 'Transport: sctp_dpdk' || true)
  plug=$(env -u LD_PRELOAD UCX_PLUGIN_PATH="$BUILD/ucx-tl" ucx_info -d 2>&1 | grep -c 'Transport: sctp_dpdk' || true)
  if [[ $plain == 0 && $plug -ge 1 ]]; then
    result "plugin (UCX_PLUGIN_PATH)" ok "ucx_info -d lists sctp_dpdk with UCX_PLUGIN_PATH=$BUILD/ucx-tl, not without"
  else
    result "plugin (UCX_PLUGIN_PATH)" FAIL "sctp_dpdk listed $plug times with UCX_PLUGIN_PATH, $plain without"
  fi
else
  result "plugin (UCX_PLUGIN_PATH)" ok "skipped: UCX $want < 1.22 has no plugin path (LD_PRELOAD)"
fi

# Open MPI's pml ucx (in libmpi, or a plugin where Open MPI was built with
# dlopen'ed components) and MPICH must load the site's libucp.
mpi_libs=$(ldconfig -p | awk '$1 == "libmpi.so.40" || $1 == "libmpich.so.12" {print $NF}')
for lib in $mpi_libs /usr/lib/*/openmpi/lib/openmpi*/mca_pml_ucx.so; do
  [[ -f $lib ]] || continue
  got=$(ldd "$lib" | awk '/libucp\.so/ {print $3}')
  if [[ $got == "$PREFIX"/lib/* ]]; then
    result "libucp of $(basename "$lib")" ok "$got"
  else
    result "libucp of $(basename "$lib")" FAIL "${got:-none}, not $PREFIX/lib's"
  fi
done

# ---- 5. tests -----------------------------------------------------------------
for t in unit $TESTS; do
  if [[ $t == unit ]]; then args=(--suite unit); else args=("$t"); fi
  t0=$SECONDS
  # The tests' own output (uct-gtest's table per case, mpi's checks) in
  # $BUILD/meson-logs/site-ucx-<test>.txt.
  if meson test -C "$BUILD" "${args[@]}" --logbase "site-ucx-$t" --print-errorlogs \
    >"$BUILD/site-ucx-$t.log" 2>&1; then
    result "meson test $t" ok "$(grep -E '^Ok:' "$BUILD/site-ucx-$t.log" | tr -s ' ') ($((SECONDS - t0)) s; $BUILD/meson-logs/site-ucx-$t.txt)"
  else
    result "meson test $t" FAIL "$BUILD/site-ucx-$t.log ($((SECONDS - t0)) s)"
  fi
done

echo "site-ucx-check: UCX $want ($PREFIX, tree $TREE), build $BUILD"
printf '%s\n' "${results[@]}"
exit $rc_all
