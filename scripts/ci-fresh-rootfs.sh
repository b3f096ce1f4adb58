#!/bin/bash
# ci-fresh-rootfs.sh [bookworm|trixie] - prove the README's commands on a
# fresh Debian 12 (bookworm, the default) or Debian 13 (trixie): a minimal
# root filesystem of that release made by debootstrap from this machine's
# own apt mirror, the checkout and the machine's package-registry settings
# copied in and nothing else, then, inside it (chroot, as root):
#     ./scripts/setup.sh               install + fetch + build
#     ./scripts/test.sh --suite unit   the unit suite
#     meson test mpi mpich-suite uct-gtest mpi4py
#                                      the MPI integration tests that need
#                                      no second machine: Open MPI and
#                                      MPICH jobs, MPICH's test/mpi subset,
#                                      the installed UCX's UCT gtest,
#                                      mpi4py's suite (SDP_CI_TESTS)
# Everything mounted or made here is removed on exit, failure or Ctrl-C.
# Needs root.  Phase times are printed at the end.
#
# The mirror is the one whose `deb` entry names the release; when none
# does (the machine runs the other release), the mirror of the entries for
# the machine's own release, and the copied apt sources name the release
# tested instead of the machine's (bookworm -> trixie, bookworm-updates ->
# trixie-updates, bookworm-security -> trixie-security).
#
#   SDP_CI_CACHE_DIR=dir    cached base tarball (default /var/cache/sctp-dpdk-ci;
#                           outside the checkout); SDP_CI_CACHE=0 ignores it
#   SDP_CI_CACHE_DAYS=N     rebuild a cached base older than N days (default 7)
#   SDP_CI_TMPDIR=dir       where the root filesystem is made (default /var/tmp)
#   SDP_CI_APT_SOURCES=machine|debootstrap
#                           apt sources inside: the machine's own (default), or
#                           debootstrap's one-line sources.list (no Signed-By,
#                           what the Debian 12 installer writes)
#   SDP_CI_MIRROR=URI       Debian mirror for debootstrap, when it cannot be
#                           derived from /etc/apt/sources.list{,.d}
#   SDP_CI_SETUP_TIMEOUT=S  deadline of setup.sh inside (default 1800 s)
#   SDP_CI_TEST_TIMEOUT=S   deadline of the unit suite inside (default 900 s)
#   SDP_CI_TESTS="..."      meson tests run after the unit suite (default
#                           "mpi mpich-suite uct-gtest mpi4py"; empty: none);
#                           each must be built, or the run fails naming it
#   SDP_CI_MPI_TIMEOUT=S    deadline of those tests together (default 2400 s)
#   The UCT gtest's build (~1-10 min) is kept between runs in
#   $SDP_CI_CACHE_DIR/gtest-<release> (keyed by its inputs, as
#   scripts/uct-gtest.sh does; SDP_CI_CACHE=0: built afresh).
#   SDP_WERROR=1            passed on to setup.sh inside
#   SDP_SRC_ARCHIVE_DIR=dir upstream source archives for the set-up scripts,
#                           when the mirror serves no source package of the
#                           release (default /var/cache/sctp-dpdk-ci/src when
#                           it exists); copied in (scripts/lib/debsrc.sh)
set -eEuo pipefail

# The whole script is one { } block: bash reads it all before running any of
# it, so editing the file during a (long) run cannot change what runs.
{
PROG=ci-fresh-rootfs${1:+-$1}
# Safety net: set -e stops at the first failing command; never without a word.
on_err() { # status line command
  [[ $- == *e* ]] && ((BASH_SUBSHELL == 0)) || return 0
  local fn=${FUNCNAME[1]:-main}
  if [[ $fn == main ]]; then fn=; else fn=" in $fn()"; fi
  echo "$PROG: error: line $2$fn: '$3' failed with status $1 (output above, if any, says why)" >&2
}
trap 'on_err $? $LINENO "$BASH_COMMAND"' ERR

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SUITE=${1:-bookworm}
case $SUITE in
bookworm | trixie) ;;
*) echo "$PROG: error: release '$SUITE' is not supported: use bookworm or trixie" >&2; exit 2 ;;
esac
HOST_SUITE=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}") || HOST_SUITE=
SRC_ARCHIVES=${SDP_SRC_ARCHIVE_DIR:-}
if [[ -z $SRC_ARCHIVES && -d /var/cache/sctp-dpdk-ci/src ]]; then SRC_ARCHIVES=/var/cache/sctp-dpdk-ci/src; fi
VARIANT=minbase
CACHE_DIR=${SDP_CI_CACHE_DIR:-/var/cache/sctp-dpdk-ci}
CACHE_DAYS=${SDP_CI_CACHE_DAYS:-7}
TMP_BASE=${SDP_CI_TMPDIR:-/var/tmp}
APT_SOURCES=${SDP_CI_APT_SOURCES:-machine}
SETUP_TIMEOUT_S=${SDP_CI_SETUP_TIMEOUT:-1800}
TEST_TIMEOUT_S=${SDP_CI_TEST_TIMEOUT:-900}
TESTS=${SDP_CI_TESTS-mpi mpich-suite uct-gtest mpi4py}
MPI_TIMEOUT_S=${SDP_CI_MPI_TIMEOUT:-2400}
IN_CHROOT_DIR=/root/sctp-dpdk
NEED_FREE_KB=$((8 * 1024 * 1024))   # packages + deps + build, with margin

log() { echo "$PROG: $*" >&2; }
die() { echo "$PROG: error: $*" >&2; exit 1; }

[[ $EUID -eq 0 ]] || die "needs root (debootstrap, mount, chroot): sudo $0"
[[ $APT_SOURCES == machine || $APT_SOURCES == debootstrap ]] ||
  die "SDP_CI_APT_SOURCES='$APT_SOURCES' is invalid: use machine or debootstrap"
for v in CACHE_DAYS SETUP_TIMEOUT_S TEST_TIMEOUT_S MPI_TIMEOUT_S; do
  [[ ${!v} =~ ^[0-9]+$ ]] || die "$v='${!v}' is not a whole number (see the SDP_CI_* settings in $0)"
done

# ---- phase timing ------------------------------------------------------------
PHASES=()
phase_t0=0
phase_open=   # the phase running now (printed by cleanup if it fails)
phase_start() { phase_t0=$SECONDS; phase_open=$1; log "== $1"; }
phase_end() { # name
  local dt=$((SECONDS - phase_t0))
  PHASES+=("$(printf '%-42s %5d s' "$1" "$dt")")
  phase_open=
  log "== $1: ${dt} s"
}
# Every phase's time, also when the run fails or is interrupted.
print_phases() {
  if [[ -n $phase_open ]]; then
    PHASES+=("$(printf '%-42s %5d s (did not finish)' "$phase_open" $((SECONDS - phase_t0)))")
    phase_open=
  fi
  if ((${#PHASES[@]})); then
    log "phase times:"
    printf '  %s\n' "${PHASES[@]}" >&2
  fi
}

# ---- cleanup: processes, mounts, directory -----------------------------------
R=          # the root filesystem being tested
CHILD=      # the timeout/chroot process being waited for
mounts_under() { # dir: mount points at or below it, deepest first
  awk -v d="$1" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r
}
kill_chroot_procs() { # every process whose root is inside $R (all started by this run)
  local p root pids=()
  for p in /proc/[0-9]*; do
    root=$(readlink "$p/root" 2>/dev/null) || continue
    if [[ $root == "$R" || $root == "$R"/* ]]; then pids+=("${p#/proc/}"); fi
  done
  ((${#pids[@]})) || return 0
  log "stopping ${#pids[@]} process(es) still inside $R: ${pids[*]}"
  kill -TERM "${pids[@]}" 2>/dev/null || true
  for _ in $(seq 50); do
    kill -0 "${pids[@]}" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "${pids[@]}" 2>/dev/null || true
  sleep 0.5
}
cleanup() {
  local rc=$? m left
  trap - EXIT INT TERM
  set +e
  if [[ -n $CHILD ]]; then kill -TERM "$CHILD" 2>/dev/null; wait "$CHILD" 2>/dev/null; fi
  if [[ -n $R && -d $R ]]; then
    kill_chroot_procs
    for m in $(mounts_under "$R"); do
      umount "$m" 2>/dev/null || { log "umount $m failed; detaching it (umount -l)"; umount -l "$m"; }
    done
    left=$(mounts_under "$R")
    if [[ -n $left ]]; then
      log "error: refusing to remove $R: still mounted: $left; unmount them, then: rm -rf $R"
      ((rc == 0)) && rc=1
    else
      rm -rf --one-file-system -- "$R" || { log "error: could not remove $R"; ((rc == 0)) && rc=1; }
    fi
  fi
  print_phases
  if ((rc != 0)); then log "FAILED (status $rc)"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT
trap 'log "terminated"; exit 143' TERM

# Runs "$@" with a deadline in the background and waits, so that INT/TERM
# reach the traps at once instead of after the command.
run_waited() { # seconds what command...
  local secs=$1 what=$2 rc=0
  shift 2
  timeout --kill-after=30 "$secs" "$@" &
  CHILD=$!
  wait "$CHILD" || rc=$?
  CHILD=
  if ((rc == 124)); then die "$what did not finish within ${secs} s (deadline; raise it with the SDP_CI_* setting)"; fi
  ((rc == 0)) || die "$what failed with status $rc (its output is above)"
}

# ---- the machine's apt configuration ------------------------------------------
# Source files apt reads; files written by this project (setup-ucx-src.sh's
# deb-src entry) are not the machine's configuration.
apt_source_files() {
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [[ -f $f ]] || continue
    grep -q 'Written by sctp-dpdk' "$f" && continue
    echo "$f"
  done
}

# "URI<TAB>SUITES<TAB>SIGNED-BY" of every enabled `deb` entry (deb822 and one-line).
deb_entries() {
  local f
  while read -r f; do
    if [[ $f == *.sources ]]; then
      awk '
        function flush() {
          if (types ~ /(^| )deb( |$)/ && enabled !~ /^[Nn]o$/ && uris != "")
            { n = split(uris, u, " "); for (i = 1; i <= n; i++) printf "%s\t%s\t%s\n", u[i], suites, signed }
          types = uris = suites = signed = enabled = "" }
        /^#/ { next }
        /^[ \t]*$/ { flush(); next }
        /^[ \t]/ { next }
        { key = tolower($0); sub(/:.*/, "", key); val = $0; sub(/^[^:]*:[ \t]*/, "", val);
          if (key == "types") types = val; else if (key == "uris") uris = val;
          else if (key == "suites") suites = val; else if (key == "signed-by") signed = val;
          else if (key == "enabled") enabled = val }
        END { flush() }' "$f"
    else
      awk '
        /^[ \t]*deb[ \t]/ {
          line = $0; sub(/#.*/, "", line); signed = "";
          if (match(line, /\[[^]]*\]/)) {
            opts = substr(line, RSTART + 1, RLENGTH - 2);
            line = substr(line, 1, RSTART - 1) substr(line, RSTART + RLENGTH);
            n = split(opts, o, " ");
            for (i = 1; i <= n; i++) if (tolower(o[i]) ~ /^signed-by=/) { signed = o[i]; sub(/^[^=]*=/, "", signed) } }
          n = split(line, w, " "); if (n >= 3) printf "%s\t%s\t%s\n", w[2], w[3], signed }' "$f"
    fi
  done < <(apt_source_files)
}

# The mirror (and its keyring, if the entry names one) that serves $SUITE.
MIRROR=${SDP_CI_MIRROR:-}
MIRROR_KEYRING=
RENAME_SUITES=   # the machine's release, renamed to $SUITE in the copied sources
if [[ -z $MIRROR ]]; then
  for want in "$SUITE" "$HOST_SUITE"; do
    [[ -n $want ]] || continue
    while IFS=$'\t' read -r uri suites signed; do
      [[ " $suites " == *" $want "* ]] || continue
      MIRROR=$uri
      if [[ $signed == /* && -f $signed ]]; then MIRROR_KEYRING=$signed; fi
      break
    done < <(deb_entries)
    if [[ -n $MIRROR ]]; then
      if [[ $want != "$SUITE" ]]; then RENAME_SUITES=$want; fi
      break
    fi
  done
  [[ -n $MIRROR ]] ||
    die "no 'deb' entry for suite $SUITE (nor $HOST_SUITE) in /etc/apt/sources.list or /etc/apt/sources.list.d/: cannot tell which Debian mirror this machine uses; set SDP_CI_MIRROR=URI"
fi
ARCH=$(dpkg --print-architecture) || die "dpkg --print-architecture failed: is this Debian?"

# debootstrap fetches with wget: give it apt's proxy when the environment has none.
for scheme in http https; do
  var=${scheme}_proxy
  if [[ -z ${!var:-} ]]; then
    p=
    eval "$(apt-config shell p "Acquire::$scheme::Proxy" 2>/dev/null)" || p=
    if [[ -n $p && $p != DIRECT && $p != false ]]; then
      export "$var=$p"
      log "debootstrap uses apt's Acquire::$scheme::Proxy"
    fi
  fi
done

command -v chroot >/dev/null || die "chroot not found (coreutils)"
if ! command -v debootstrap >/dev/null; then
  log "debootstrap is not installed: installing the debootstrap package"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap >&2 ||
    die "apt-get install debootstrap failed: check the apt sources in /etc/apt (apt-get update first?)"
fi

mkdir -p "$TMP_BASE" || die "cannot create $TMP_BASE (SDP_CI_TMPDIR)"
free_kb=$(df -Pk "$TMP_BASE" | awk 'NR == 2 { print $4 }')
((free_kb >= NEED_FREE_KB)) ||
  die "$TMP_BASE has $((free_kb / 1024)) MiB free, need $((NEED_FREE_KB / 1024)) MiB: free space or set SDP_CI_TMPDIR"
R=$(mktemp -d "$TMP_BASE/sctp-dpdk-ci.XXXXXX") || die "mktemp in $TMP_BASE failed"
chmod 755 "$R"
log "root filesystem: $R (mirror $MIRROR, $SUITE $VARIANT $ARCH, apt sources: $APT_SOURCES)"

# ---- phase 1: base system (cached tarball or debootstrap) ----------------------
phase_start "base system"
TARBALL=$CACHE_DIR/$SUITE-$VARIANT-$ARCH.tar.gz
META_TEXT="suite=$SUITE variant=$VARIANT arch=$ARCH mirror=$MIRROR"
cache_state() { # prints: ok | missing | stale | corrupt | other
  [[ ${SDP_CI_CACHE:-1} == 0 ]] && { echo disabled; return 0; }
  [[ -f $TARBALL ]] || { echo missing; return 0; }
  [[ -f $TARBALL.meta && $(cat "$TARBALL.meta") == "$META_TEXT" ]] || { echo "made from other settings"; return 0; }
  [[ -n $(find "$TARBALL" -mtime -"$CACHE_DAYS") ]] || { echo "older than $CACHE_DAYS days"; return 0; }
  (cd "$CACHE_DIR" && sha256sum --quiet -c "$TARBALL.sha256" >/dev/null 2>&1) || { echo "corrupt (checksum)"; return 0; }
  echo ok
}
state=$(cache_state)
if [[ $state == ok ]] && tar --numeric-owner -xpzf "$TARBALL" -C "$R" && [[ -x $R/usr/bin/apt-get ]]; then
  log "cache USED: $TARBALL (made $(date -r "$TARBALL" -u '+%F %H:%M UTC'))"
  phase_end "base system (cached tarball)"
else
  if [[ $state == ok ]]; then
    state="corrupt (does not unpack to a system)"
    find "$R" -mindepth 1 -delete
  fi
  log "cache not used: $TARBALL: $state; running debootstrap"
  db=(debootstrap --variant="$VARIANT" --arch="$ARCH")
  if [[ -n $MIRROR_KEYRING ]]; then db+=(--keyring="$MIRROR_KEYRING"); fi
  run_waited 1200 debootstrap "${db[@]}" "$SUITE" "$R" "$MIRROR"
  if [[ ${SDP_CI_CACHE:-1} != 0 ]]; then
    if mkdir -p "$CACHE_DIR" && tar --numeric-owner -cpzf "$TARBALL.tmp" -C "$R" . &&
      (cd "$CACHE_DIR" && sha256sum "${TARBALL##*/}.tmp" | sed 's/\.tmp$//' >"$TARBALL.sha256") &&
      echo "$META_TEXT" >"$TARBALL.meta" && mv "$TARBALL.tmp" "$TARBALL"; then
      log "cache written: $TARBALL"
    else
      log "warning: could not write the cache $TARBALL (next run will debootstrap again)"
      rm -f "$TARBALL.tmp"
    fi
  fi
  phase_end "base system (debootstrap)"
fi

# ---- phase 2: checkout + registry configuration -------------------------------
phase_start "copy checkout and registry configuration"
declare -A COPIED=()
copy_in() { # path...: copy files/dirs to the same path inside $R (once each)
  local f
  for f in "$@"; do
    [[ -e $f && -z ${COPIED[$f]:-} ]] || continue
    COPIED[$f]=1
    mkdir -p "$R$(dirname -- "$f")"
    cp -a -- "$f" "$R$(dirname -- "$f")/" || die "cannot copy $f into $R"
    echo "  $f" >&2
  done
}
log "registry configuration copied in:"
if [[ $APT_SOURCES == machine ]]; then
  rm -f "$R/etc/apt/sources.list" "$R"/etc/apt/sources.list.d/*
  mapfile -t srcs < <(apt_source_files)
  ((${#srcs[@]})) || die "no apt source files on this machine"
  copy_in "${srcs[@]}"
  # keyrings the entries name (Signed-By paths), and apt's trusted keyrings
  mapfile -t keys < <(deb_entries | cut -f3 | tr ', ' '\n\n' | grep '^/' | sort -u || true)
  copy_in "${keys[@]}"
  if [[ -n $RENAME_SUITES ]]; then
    # The machine's release's suites, as whole words of the suite field
    # only (deb822 Suites: lines, the third word of one-line entries).
    for f in "${srcs[@]}"; do
      awk -v from="$RENAME_SUITES" -v to="$SUITE" '
        function ren(w) { return (w == from || index(w, from "-") == 1) ? to substr(w, length(from) + 1) : w }
        tolower($1) == "suites:" { out = $1; for (i = 2; i <= NF; i++) out = out " " ren($i); print out; next }
        /^[ \t]*deb(-src)?[ \t]/ {
          n = split($0, w, /[ \t]+/); out = ""; k = 0; inopt = 0
          for (i = 1; i <= n; i++) { if (w[i] == "") continue; k++
            if (w[i] ~ /^\[/) inopt = 1
            if (!inopt) { pos++ }
            if (!inopt && pos == 3) w[i] = ren(w[i])
            if (w[i] ~ /\]$/) inopt = 0
            out = out (out == "" ? "" : " ") w[i] }
          pos = 0; print out; next }
        { print }' "$f" >"$R$f.tmp" && mv "$R$f.tmp" "$R$f" || die "cannot rewrite the suites of $R$f"
      echo "  (suites $RENAME_SUITES* -> $SUITE* in $f)" >&2
    done
  fi
else
  echo "  (apt sources: debootstrap's one-line $R/etc/apt/sources.list: $(cat "$R/etc/apt/sources.list"))" >&2
fi
copy_in /etc/apt/trusted.gpg /etc/apt/trusted.gpg.d
# apt settings that concern reaching the registry (proxy, TLS, Release dates)
for f in /etc/apt/apt.conf /etc/apt/apt.conf.d/*; do
  if [[ -f $f ]] && grep -qiE 'proxy|Acquire::(https?|ftp|socks)|Check-Valid-Until|Check-Date|CaInfo|Verify-' "$f"; then
    copy_in "$f"
  fi
done
# pip's configuration, system-wide and root's
copy_in /etc/pip.conf /etc/xdg/pip /root/.config/pip /root/.pip
# certificate authorities this machine trusts (extra local CAs, the bundle,
# and any CA file the registry variables or pip.conf name)
copy_in /usr/local/share/ca-certificates /etc/ssl/certs/ca-certificates.crt
cafiles=()
for v in SSL_CERT_FILE REQUESTS_CA_BUNDLE PIP_CERT CURL_CA_BUNDLE; do
  if [[ -n ${!v:-} && -f ${!v} ]]; then cafiles+=("${!v}"); fi
done
while read -r f; do if [[ -f $f ]]; then cafiles+=("$f"); fi; done < <(
  sed -n 's/^[ \t]*cert[ \t]*=[ \t]*//p' /etc/pip.conf /etc/xdg/pip/pip.conf /root/.config/pip/pip.conf /root/.pip/pip.conf 2>/dev/null || true)
copy_in "${cafiles[@]}"
# name resolution: how this machine finds the registries
copy_in /etc/resolv.conf /etc/hosts

# registry-related environment variables
CHROOT_ENV=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
  LANG=C.UTF-8 TERM=dumb "CI=${CI:-}" "SDP_WERROR=${SDP_WERROR:-0}")
if [[ -n $SRC_ARCHIVES ]]; then
  [[ -d $SRC_ARCHIVES ]] || die "SDP_SRC_ARCHIVE_DIR=$SRC_ARCHIVES is not a directory"
  mkdir -p "$R/var/cache/sdp-src"
  cp -a "$SRC_ARCHIVES"/. "$R/var/cache/sdp-src/" || die "cannot copy $SRC_ARCHIVES into $R"
  CHROOT_ENV+=(SDP_SRC_ARCHIVE_DIR=/var/cache/sdp-src)
  echo "  $SRC_ARCHIVES/ -> /var/cache/sdp-src (SDP_SRC_ARCHIVE_DIR: $(ls "$SRC_ARCHIVES" | tr '\n' ' '))" >&2
fi
while IFS='=' read -r name _; do
  if [[ $name =~ ^(PIP_[A-Z_]+|SSL_CERT_(FILE|DIR)|REQUESTS_CA_BUNDLE|CURL_CA_BUNDLE|[Hh][Tt][Tt][Pp][Ss]?_[Pp][Rr][Oo][Xx][Yy]|[Nn][Oo]_[Pp][Rr][Oo][Xx][Yy]|[Aa][Ll][Ll]_[Pp][Rr][Oo][Xx][Yy])$ ]]; then
    CHROOT_ENV+=("$name=${!name}")
    log "environment passed in: $name"
  fi
done < <(env)

# the checkout: the working tree (tracked and untracked, not ignored files:
# so no build/ nor .deps/)
mkdir -p "$R$IN_CHROOT_DIR"
if git -C "$ROOT" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  (cd "$ROOT" && git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do [[ -e $f || -L $f ]] && printf '%s\0' "$f"; done |
    tar --null -T - -cf - | tar -xf - -C "$R$IN_CHROOT_DIR") ||
    die "copying the checkout $ROOT into $R$IN_CHROOT_DIR failed"
  log "checkout: $(git -C "$ROOT" rev-parse --short HEAD) working tree ($(git -C "$ROOT" status --porcelain | wc -l) changed/untracked paths) -> $IN_CHROOT_DIR"
else
  tar -C "$ROOT" --exclude=./build --exclude='./build-*' --exclude=./.deps --exclude=./.git -cf - . |
    tar -xf - -C "$R$IN_CHROOT_DIR" || die "copying $ROOT into $R$IN_CHROOT_DIR failed"
  log "checkout: $ROOT (not a git work tree; build/ and .deps/ left out) -> $IN_CHROOT_DIR"
fi
phase_end "copy checkout and registry configuration"

# A chroot has no init: keep package scripts from starting daemons in it
# (Debian's convention for chroots), so nothing outlives the phase.
printf '#!/bin/sh\nexit 101\n' >"$R/usr/sbin/policy-rc.d"
chmod 755 "$R/usr/sbin/policy-rc.d"
# A throwaway system: dpkg need not fsync each of its ~60000 files (what
# Debian's own build chroots do); the installation is otherwise the same.
echo force-unsafe-io >"$R/etc/dpkg/dpkg.cfg.d/sctp-dpdk-ci-unsafe-io"
log "in the chroot: policy-rc.d (no daemons), dpkg force-unsafe-io (no fsync)"

# ---- mounts -------------------------------------------------------------------
# The root filesystem on itself first, private: '/' inside is then a mount
# point ('ip netns exec' remounts it rslave; the testbed's namespaces), and
# nothing mounted below it propagates to this machine.
mount --bind "$R" "$R"
mount --make-private "$R"
mount -t proc proc "$R/proc"
mount -t sysfs sysfs "$R/sys"
mount --bind /dev "$R/dev"
mount --make-private "$R/dev"
mount --bind /dev/pts "$R/dev/pts"
mount -t tmpfs -o mode=1777 shm "$R/dev/shm"
mount -t tmpfs -o mode=755 run "$R/run"
mkdir -m 1777 "$R/run/lock"
if [[ " $TESTS " == *" uct-gtest "* && ${SDP_CI_CACHE:-1} != 0 ]]; then
  mkdir -p "$CACHE_DIR/gtest-$SUITE" "$R/var/cache/sctp-dpdk-gtest"
  mount --bind "$CACHE_DIR/gtest-$SUITE" "$R/var/cache/sctp-dpdk-gtest"
fi
log "mounted: $(mounts_under "$R" | sort | sed "s#^$R##" | tr '\n' ' ')"

in_chroot() { # seconds what command-line
  run_waited "$1" "$2" chroot "$R" /usr/bin/env -i "${CHROOT_ENV[@]}" /bin/bash -c "cd $IN_CHROOT_DIR && $3"
}

# ---- phase 3: the README's set-up, inside ---------------------------------------
phase_start "setup.sh inside the fresh system"
in_chroot "$SETUP_TIMEOUT_S" "scripts/setup.sh inside the fresh $SUITE" ./scripts/setup.sh
phase_end "setup.sh inside the fresh system"

# ---- phase 4: unit suite, inside --------------------------------------------------
phase_start "unit suite inside the fresh system"
in_chroot "$TEST_TIMEOUT_S" "the unit suite inside the fresh $SUITE" './scripts/test.sh --suite unit'
phase_end "unit suite inside the fresh system"

# ---- phase 5: the MPI integration tests, inside ------------------------------------
if [[ -n ${TESTS// /} ]]; then
  phase_start "MPI integration tests inside ($TESTS)"
  built=$(chroot "$R" /usr/bin/env -i "${CHROOT_ENV[@]}" /bin/bash -c \
    "cd $IN_CHROOT_DIR/build && meson test --list 2>/dev/null") ||
    die "meson test --list failed inside the fresh $SUITE"
  for t in $TESTS; do
    grep -qE "(^| )$t\$" <<<"$built" ||
      die "test '$t' is not built in the fresh $SUITE (scripts/setup.sh's warnings above say why; SDP_CI_TESTS chooses the tests)"
  done
  in_chroot "$MPI_TIMEOUT_S" "the MPI integration tests inside the fresh $SUITE" \
    "cd build && meson test --no-rebuild --print-errorlogs --num-processes 1 $TESTS"
  phase_end "MPI integration tests inside ($TESTS)"
fi

log "fresh $SUITE: setup.sh, the unit suite${TESTS:+ and $TESTS} passed"
exit 0
}
