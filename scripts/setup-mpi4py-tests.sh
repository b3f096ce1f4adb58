#!/bin/bash
# setup-mpi4py-tests.sh DEST - the test suite of mpi4py, matching the
# installed Debian python3-mpi4py, for tests/integration/test_mpi4py.py.
# The Debian binary package has no tests; the upstream source
# distribution of the same version has them (test/).  Fetched once with
# pip's ordinary client (download only, nothing installed); a stamp makes
# later runs a no-op.  Prints the test directory on the last line.
set -eEuo pipefail
# Safety net: set -e stops at the first failing command; never without a word.
on_err() { # status line command
  [[ $- == *e* ]] && ((BASH_SUBSHELL == 0)) || return 0
  local fn=${FUNCNAME[1]:-main}
  if [[ $fn == main ]]; then fn=; else fn=" in $fn()"; fi
  echo "setup-mpi4py-tests: error: line $2$fn: '$3' failed with status $1 (output above, if any, says why)" >&2
}
trap 'on_err $? $LINENO "$BASH_COMMAND"' ERR
DEST=$(realpath -m -- "${1:?usage: $0 DEST}")
# dpkg-query fails for a package it has never seen: that is "not installed".
ver=$(dpkg-query -W -f='${Version}' python3-mpi4py 2>/dev/null) || ver=
ver=${ver%%-*}
[[ -n $ver ]] || { echo "setup-mpi4py-tests: error: python3-mpi4py is not installed (apt-get install python3-mpi4py, or run scripts/setup.sh)" >&2; exit 1; }
tree=$DEST/mpi4py-$ver
if [[ -f $tree/test/runtests.py ]]; then
  echo "$tree/test"
  exit 0
fi
mkdir -p "$DEST" || { echo "setup-mpi4py-tests: error: cannot create $DEST (set SDP_DEPS_DIR to a writable directory)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pip=(/usr/bin/python3 -m pip)
"${pip[@]}" --version >/dev/null 2>&1 || { echo "setup-mpi4py-tests: error: needs python3-pip (apt-get install python3-pip)" >&2; exit 1; }
"${pip[@]}" download --quiet --no-deps --no-binary :all: --no-build-isolation \
  -d "$tmp" "mpi4py==$ver" >&2 ||
  { echo "setup-mpi4py-tests: error: pip download mpi4py==$ver failed: check pip's index and proxy settings (pip config list)" >&2; exit 1; }
tar -xzf "$tmp/mpi4py-$ver.tar.gz" -C "$DEST" ||
  { echo "setup-mpi4py-tests: error: cannot unpack $tmp/mpi4py-$ver.tar.gz into $DEST" >&2; exit 1; }
[[ -f $tree/test/runtests.py ]] || { echo "setup-mpi4py-tests: error: no test/runtests.py in the mpi4py $ver sdist" >&2; exit 1; }
echo "$tree/test"
