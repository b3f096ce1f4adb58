#!/bin/bash
# setup-mpi4py-tests.sh DEST - the test suite of mpi4py, matching the
# installed Debian python3-mpi4py, for tests/integration/test_mpi4py.py.
# The Debian binary package has no tests; the upstream source
# distribution of the same version has them (test/).  Fetched once with
# pip's ordinary client (download only, nothing installed); a stamp makes
# later runs a no-op.  Prints the test directory on the last line.
set -euo pipefail
DEST=$(realpath -m -- "${1:?usage: $0 DEST}")
ver=$(dpkg-query -W -f='${Version}' python3-mpi4py 2>/dev/null | sed 's/-.*//')
[[ -n $ver ]] || { echo "setup-mpi4py-tests: python3-mpi4py is not installed" >&2; exit 1; }
tree=$DEST/mpi4py-$ver
if [[ -f $tree/test/runtests.py ]]; then
  echo "$tree/test"
  exit 0
fi
mkdir -p "$DEST"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pip=(/usr/bin/python3 -m pip)
"${pip[@]}" --version >/dev/null 2>&1 || { echo "setup-mpi4py-tests: needs python3-pip" >&2; exit 1; }
"${pip[@]}" download --quiet --no-deps --no-binary :all: --no-build-isolation \
  -d "$tmp" "mpi4py==$ver" >&2 ||
  { echo "setup-mpi4py-tests: pip download mpi4py==$ver failed" >&2; exit 1; }
tar -xzf "$tmp/mpi4py-$ver.tar.gz" -C "$DEST"
[[ -f $tree/test/runtests.py ]] || { echo "setup-mpi4py-tests: no test/ in the sdist" >&2; exit 1; }
echo "$tree/test"
