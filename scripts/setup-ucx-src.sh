#!/bin/bash
# setup-ucx-src.sh DEST - fetch and configure the UCX source tree that matches
# the installed Debian UCX (whatever version the release ships: libucx0's
# source package version), so ucx-tl/ can be built against UCX's internal
# headers with a config.h whose layout-relevant macros match libucx0.
#
#   1. dpkg-dev present (apt-get source needs dpkg-source);
#   2. a deb-src entry for the repository that serves the installed libucx-dev;
#      when none exists, one is DERIVED from the configured `deb` entry for
#      that repository (URIs/Suites/Components/Signed-By) and written to
#      $SRC_LIST, then only that list is updated;
#   3. `apt-get source ucx=$UCX_SRC_VERSION` into DEST (patches applied);
#   4. autotools + the -dev packages configure needs for the same module set;
#   5. autogen.sh + ./configure with the flags Debian used: debhelper's
#      standard arguments plus the override_dh_auto_configure arguments read
#      from debian/rules itself;
#   6. config.h must have the installed library's uct_MODULES, and the
#      macros that change structure layout must match `ucx_info -b` (the
#      config.h of the installed library).
#
# A stamp file makes a second run a no-op.  The last line printed is the path
# of the configured source tree (pass it to meson as -Ducx_src=...).
# shellcheck source-path=SCRIPTDIR source=lib/debsrc.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/lib/debsrc.sh"
debsrc_init setup-ucx-src

# shellcheck source=lib/release.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/lib/release.sh"

# The installed UCX: its binary version (what apt's indexes list) and its
# source version (what `apt-get source` takes; a binNMU's +bN is not in it).
UCX_VERSION=$(dpkg-query -W -f='${Version}' libucx-dev 2>/dev/null) || UCX_VERSION=
UCX_SRC_VERSION=$(release_source_version libucx-dev)
[[ -n $UCX_SRC_VERSION && -n $UCX_VERSION ]] ||
  die "libucx-dev is not installed: install libucx-dev, libucx0 and ucx-utils (scripts/setup.sh does)"
command -v ucx_info >/dev/null ||
  die "ucx_info not found: install ucx-utils (scripts/setup.sh does); its build configuration (ucx_info -b) is what the tree must match"
ucx_info_b=$(ucx_info -b) || die "ucx_info -b failed: is ucx-utils $UCX_VERSION installed and working?"
# Debian's build of this version: the transport modules it detected.
EXPECT_UCT_MODULES=$(sed -n 's/^#define[ \t]\{1,\}uct_MODULES[ \t]\{1,\}"\(.*\)"[ \t]*$/\1/p' <<<"$ucx_info_b")
[[ -n $EXPECT_UCT_MODULES ]] || die "ucx_info -b names no uct_MODULES: is ucx-utils $UCX_VERSION installed and working?"
SRC_LIST=/etc/apt/sources.list.d/sdp-deb-src.sources
# configure checks for these to build the same module set as Debian:
# ib (verbs), rdmacm, numa.  What else the installed library was built with
# (its `ucx_info -v` flags and `ucx_info -b` modules) adds the -dev package
# configure looks for: ROCm's runtime (uct/ucm rocm modules; Debian 13),
# libibmad (--with-mad, ucx_perftest's mad module), FUSE 3 (ucs's vfs
# module).  Debian 12's build has none of these (ucs_MODULES is empty there).
CONFIGURE_DEPS=(libibverbs-dev librdmacm-dev libnuma-dev pkg-config make gcc g++)
installed_flags_v=$(ucx_info -v | sed -n 's/^# Configured with: //p')
if [[ " $installed_flags_v " == *" --with-rocm"* ]]; then CONFIGURE_DEPS+=(libhsa-runtime-dev libhsakmt-dev); fi
if [[ " $installed_flags_v " == *" --with-mad=yes "* ]]; then CONFIGURE_DEPS+=(libibmad-dev libibumad-dev); fi
if grep -q '^#define[ \t]*ucs_MODULES[ \t].*:fuse' <<<"$ucx_info_b"; then CONFIGURE_DEPS+=(libfuse3-dev); fi
# Flags of Debian's build that add nothing to the libraries this tree's
# headers describe and need tools of their own: the Go bindings (a Go
# toolchain) and the coverage-report make target (lcov; config/m4/lcov.m4
# sets only an automake conditional).
DROP_FLAGS='^--(with-go|enable-lcov)(=.*)?$'
AUTOTOOLS=(autoconf automake libtool)
# config.h macros whose mismatch changes UCX structure layout or inline
# behaviour seen by an out-of-tree component.
LAYOUT_MACROS='^(ENABLE_[A-Z_]+|HAVE_TL_[A-Z]+|HAVE_IB|HAVE_DEVX|HAVE_MLX5_[A-Z_]+|UCS_MAX_LOG_LEVEL|NVALGRIND|uct_MODULES|ucs_MODULES|uct_ib_MODULES)$'

debsrc_dest .deps/ucx "$@"
TREE=$DEST/$(release_source_dir ucx "$UCX_SRC_VERSION")
STAMP=$DEST/.sdp-ucx-src.stamp
STAMP_TEXT="ucx=$UCX_SRC_VERSION tree=$TREE uct_MODULES=$EXPECT_UCT_MODULES"

if debsrc_stamp_ok "$STAMP" "$STAMP_TEXT" "$TREE/config.h"; then
  echo "$TREE"
  exit 0
fi

SUDO=
if [[ $EUID -ne 0 ]]; then
  command -v sudo >/dev/null || die "needs root (or sudo) for apt-get"
  SUDO=sudo
fi

is_installed() {
  [[ $(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) == "install ok installed" ]]
}

apt_install() {
  local missing=() p
  for p in "$@"; do is_installed "$p" || missing+=("$p"); done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  log "installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends \
    "${missing[@]}" >&2 || die "apt-get install ${missing[*]} failed"
}

# ---- 1. dpkg-dev -------------------------------------------------------------
apt_install dpkg-dev

# ---- 2. deb-src entry --------------------------------------------------------
src_available() { debsrc_available ucx "$UCX_SRC_VERSION"; }

# Print "URI SUITE COMPONENT" of the repository that serves the installed
# binary version, from apt's own view (no host names known to this script).
ucx_origin() {
  apt-cache madison libucx-dev 2>/dev/null | awk -F'|' -v v="$UCX_VERSION" '
    { for (i = 1; i <= NF; i++) gsub(/^[ \t]+|[ \t]+$/, "", $i) }
    !found && $1 == "libucx-dev" && $2 == v && $3 ~ / Packages$/ {
      split($3, f, " "); n = split(f[2], sc, "/");
      comp = (n > 1) ? sc[n] : "main"; suite = sc[1];
      for (i = 2; i < n; i++) suite = suite "/" sc[i];
      print f[1], suite, comp; found = 1 }'
}

# Print the configured `deb` entries as "URI<TAB>SUITES<TAB>COMPONENTS<TAB>SIGNED-BY"
# from deb822 *.sources and one-line *.list files.
configured_debs() {
  local f
  shopt -s nullglob
  for f in /etc/apt/sources.list.d/*.sources; do
    awk '
      function flush() {
        if (types ~ /(^| )deb( |$)/ && enabled !~ /^[Nn]o$/ && uris != "")
          { n = split(uris, u, " "); for (i = 1; i <= n; i++)
              printf "%s\t%s\t%s\t%s\n", u[i], suites, comps, signed }
        types = uris = suites = comps = signed = enabled = ""; last = "" }
      /^#/ { next }
      /^[ \t]*$/ { flush(); next }
      /^[ \t]/ { if (last == "signed-by") signed = ""; next }  # inline key: unusable here
      { key = tolower($0); sub(/:.*/, "", key); val = $0; sub(/^[^:]*:[ \t]*/, "", val);
        last = key;
        if (key == "types") types = val; else if (key == "uris") uris = val;
        else if (key == "suites") suites = val; else if (key == "components") comps = val;
        else if (key == "signed-by") signed = val; else if (key == "enabled") enabled = val }
      END { flush() }' "$f"
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [[ -f $f ]] || continue
    awk '
      /^[ \t]*deb[ \t]/ {
        line = $0; sub(/#.*/, "", line); signed = "";
        if (match(line, /\[[^]]*\]/)) {
          opts = substr(line, RSTART + 1, RLENGTH - 2);
          line = substr(line, 1, RSTART - 1) substr(line, RSTART + RLENGTH);
          n = split(opts, o, " ");
          for (i = 1; i <= n; i++) if (tolower(o[i]) ~ /^signed-by=/) { signed = o[i]; sub(/^[^=]*=/, "", signed) } }
        n = split(line, w, " "); if (n < 3) next;
        comps = ""; for (i = 4; i <= n; i++) comps = comps (i > 4 ? " " : "") w[i];
        printf "%s\t%s\t%s\t%s\n", w[2], w[3], comps, signed }' "$f"
  done
}

add_deb_src() {
  local origin uri suite comp entry e_uri e_suites e_comps e_signed
  origin=$(ucx_origin) || die "apt-cache madison libucx-dev failed; run apt-get update"
  [[ -n $origin ]] || die "apt does not know libucx-dev $UCX_VERSION; is the Debian 'deb' entry configured and updated?"
  read -r uri suite comp <<<"$origin"
  entry=
  while IFS=$'\t' read -r e_uri e_suites e_comps e_signed; do
    [[ ${e_uri%/} == "${uri%/}" ]] || continue
    [[ " $e_suites " == *" $suite "* && " $e_comps " == *" $comp "* ]] || continue
    entry=1
    break
  done < <(configured_debs)
  [[ -n $entry ]] || die "no configured 'deb' entry matches $uri $suite $comp (the origin of libucx-dev $UCX_VERSION)"
  log "adding deb-src entry $SRC_LIST derived from: $e_uri [$e_suites] [$e_comps]"
  # (A one-line sources.list has no Signed-By: the group must not end on a
  # failed test, or set -e + pipefail end the script without a word.)
  {
    echo "# Written by sctp-dpdk scripts/setup-ucx-src.sh: the source counterpart of"
    echo "# the configured 'deb' entry that serves libucx-dev $UCX_VERSION."
    echo "Types: deb-src"
    echo "URIs: $e_uri"
    echo "Suites: $e_suites"
    echo "Components: $e_comps"
    if [[ -n $e_signed ]]; then echo "Signed-By: $e_signed"; fi
  } | $SUDO tee "$SRC_LIST.tmp" >/dev/null || die "cannot write $SRC_LIST.tmp"
  $SUDO mv "$SRC_LIST.tmp" "$SRC_LIST" || die "cannot move $SRC_LIST.tmp to $SRC_LIST"
  # Update only the new list; List-Cleanup=0 keeps every other index intact.
  log "apt-get update (deb-src entry only)"
  $SUDO apt-get update -q -o Dir::Etc::sourcelist="$SRC_LIST" -o Dir::Etc::sourceparts=- \
    -o APT::Get::List-Cleanup=0 >&2 || die "apt-get update of $SRC_LIST failed"
}

# Without a usable deb-src entry the upstream archive (SDP_SRC_ARCHIVE_DIR)
# may still serve: a failure here is reported, not fatal.
if ! src_available; then
  if [[ -f $SRC_LIST ]]; then
    log "$SRC_LIST exists but ucx $UCX_SRC_VERSION sources are not indexed; updating it"
    $SUDO apt-get update -q -o Dir::Etc::sourcelist="$SRC_LIST" -o Dir::Etc::sourceparts=- \
      -o APT::Get::List-Cleanup=0 >&2 || log "warning: apt-get update of $SRC_LIST failed"
  else
    (add_deb_src) || log "warning: no deb-src entry could be derived (above)"
  fi
  src_available || log "ucx $UCX_SRC_VERSION is not available as a source package (apt-cache showsrc ucx)"
fi

# ---- 3. apt-get source -------------------------------------------------------
debsrc_fetch_or_archive ucx "$UCX_SRC_VERSION" "$TREE"

# ---- 4. build tools and configure dependencies -------------------------------
apt_install "${CONFIGURE_DEPS[@]}"
[[ -x $TREE/configure ]] || apt_install "${AUTOTOOLS[@]}"

# ---- 5. configure with Debian's flags ----------------------------------------
# debhelper (compat 13) passes these to every autoconf package; they fix the
# module directory (libdir) and the config file location (sysconfdir).
arch_env=$(dpkg-architecture -s) || die "dpkg-architecture failed: is dpkg-dev installed? (apt-get install dpkg-dev)"
eval "$arch_env"
export DEB_BUILD_GNU_TYPE DEB_HOST_MULTIARCH DEB_TARGET_ARCH DEB_HOST_ARCH
# shellcheck disable=SC2016  # ${prefix} is for configure to expand
DH_FLAGS=(--build="$DEB_BUILD_GNU_TYPE" --prefix=/usr '--includedir=${prefix}/include'
  '--mandir=${prefix}/share/man' '--infodir=${prefix}/share/info' --sysconfdir=/etc
  --localstatedir=/var --disable-option-checking --disable-silent-rules
  "--libdir=\${prefix}/lib/$DEB_HOST_MULTIARCH" --runstatedir=/run
  --disable-maintainer-mode --disable-dependency-tracking)
installed_flags=$(ucx_info -v 2>/dev/null | sed -n 's/^# Configured with: //p' || true)
if [[ $DEBSRC_FROM_ARCHIVE == 1 ]]; then
  # No debian/rules in an upstream archive: the flags the installed library
  # was configured with (ucx_info -v) are Debian's, exactly.
  [[ -n $installed_flags ]] ||
    die "ucx_info -v prints no 'Configured with' line: cannot configure the upstream archive like Debian's build"
  read -r -a CONF_FLAGS <<<"$installed_flags"
  kept=()
  for f in "${CONF_FLAGS[@]}"; do
    if [[ $f =~ $DROP_FLAGS ]]; then log "not passing $f (bindings or report targets only: no effect on the libraries' headers)"; else kept+=("$f"); fi
  done
  CONF_FLAGS=("${kept[@]}")
else
  # The package's own flags: expand the override_dh_auto_configure recipe of
  # debian/rules with make (no commands run) and keep what follows `--`.
  rules_cmd=$(make -s -n -C "$TREE" -f debian/rules override_dh_auto_configure 2>/dev/null | tr '\\\n' '  ') ||
    die "cannot expand override_dh_auto_configure in $TREE/debian/rules"
  [[ $rules_cmd == *"dh_auto_configure --"* ]] ||
    die "unexpected override_dh_auto_configure recipe in debian/rules: $rules_cmd"
  read -r -a PKG_FLAGS <<<"${rules_cmd#*dh_auto_configure --}"
  CONF_FLAGS=("${DH_FLAGS[@]}" "${PKG_FLAGS[@]}")
fi
log "configure flags: ${CONF_FLAGS[*]}"
if [[ -n $installed_flags && $installed_flags != "${CONF_FLAGS[*]}" ]]; then
  log "warning: flags differ from the installed UCX's 'Configured with': $installed_flags"
fi

if [[ ! -x $TREE/configure ]]; then
  log "autogen.sh (Debian's build runs dh_autoreconf too)"
  (cd "$TREE" && ./autogen.sh >"$TREE/autogen.log" 2>&1) || die "autogen.sh failed; see $TREE/autogen.log"
fi
rm -f "$STAMP"
log "configure (log: $TREE/sdp-configure.log)"
(cd "$TREE" && ./configure "${CONF_FLAGS[@]}" >"$TREE/sdp-configure.log" 2>&1) ||
  die "configure failed; see $TREE/sdp-configure.log and $TREE/config.log"

# ---- 6. verify ---------------------------------------------------------------
defines() { # NAME VALUE pairs from a config.h-like text on stdin
  sed -n 's/^#define[ \t]\{1,\}\([A-Za-z_][A-Za-z0-9_]*\)[ \t]*\(.*\)$/\1 \2/p' | sed 's/[ \t]*$//' | sort
}
got_modules=$(defines <"$TREE/config.h" | sed -n 's/^uct_MODULES //p')
[[ $got_modules == "\"$EXPECT_UCT_MODULES\"" ]] ||
  die "config.h has uct_MODULES $got_modules, expected \"$EXPECT_UCT_MODULES\" (Debian's libucx0 $UCX_VERSION, ucx_info -b); a configure dependency is missing: check $TREE/sdp-configure.log"

ref=$(defines <<<"$ucx_info_b")
ours=$(defines <"$TREE/config.h")
layout_diff=$(diff <(awk -v re="$LAYOUT_MACROS" '$1 ~ re' <<<"$ref") \
                   <(awk -v re="$LAYOUT_MACROS" '$1 ~ re' <<<"$ours") || true)
[[ -z $layout_diff ]] ||
  die "config.h differs from the installed UCX (ucx_info -b) in layout-relevant macros:"$'\n'"$layout_diff"
other=$(diff <(grep -v '^UCX_CONFIGURE_FLAGS ' <<<"$ref") <(grep -v '^UCX_CONFIGURE_FLAGS ' <<<"$ours") | grep -c '^[<>]' || true)
[[ $other -eq 0 ]] || log "note: $other other config.h lines differ from ucx_info -b (not layout-relevant)"

echo "$STAMP_TEXT" >"$STAMP" || die "cannot write $STAMP"
log "configured UCX $UCX_SRC_VERSION source tree ready"
echo "$TREE"
