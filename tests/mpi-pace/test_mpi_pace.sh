#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# test_mpi_pace.sh - runs the mpi-pace MPI tests under every MPI
# implementation mpi-pace/ was built for, with 2 and 4 ranks, each run
# bounded by `timeout`.  Paths come from tests/meson.build:
#
#   SDP_PACE_TEST_FAKE          libsdp_fake_transport.so
#   SDP_PACE_TEST_IMPLS         "openmpi mpich" (those built)
#   SDP_PACE_TEST_EXE_<impl>    test_mpi_pace_<impl>
#   SDP_PACE_TEST_COLL_<impl>   libsdp_pace_coll_<impl>.so
#   SDP_PACE_TEST_FEXE_<impl>   test_mpi_pace_f_<impl> (if gfortran)
#
# LD_PRELOAD goes to the ranks only (mpirun -x / mpiexec -genv), never to
# the launcher.  The environment of every run is built from scratch with
# `env -u`, so variables of the caller cannot leak into a case.  Prints
# "N passed, M failed" last and exits non-zero on any failure.
set -u

RUN_TIMEOUT_S=${SDP_PACE_TEST_TIMEOUT_S:-120}
NO_TRANSPORT_MSG='sctp_dpdk transport not loaded: run with sdp-mpirun or LD_PRELOAD=libuct_sctp_dpdk.so'
NO_MAXRATE_MSG='SDP_PACE_MAXRATE is not set'

passed=0
failed=0
tmp=$(mktemp -d /tmp/test_mpi_pace.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

pass() { passed=$((passed + 1)); echo "PASS: $*"; }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }

# launch IMPL NP PRELOAD VAR=VALUE... -- PROGRAM ARGS...
# Runs PROGRAM on NP ranks; stdout and stderr land in $tmp/out, $tmp/err.
launch() {
	local impl=$1 np=$2 preload=$3
	shift 3
	local -a vars=() mpi_env=()
	while [ "$1" != "--" ]; do
		vars+=("$1")
		shift
	done
	shift
	local -a clean=(env -u LD_PRELOAD -u SDP_PACE_MAXRATE -u SDP_PACE_COLL
		-u SDP_PACE_COLL_NSENDERS -u SDP_FAKE_TRANSPORT_TRACE
		-u SDP_PACE_COLL_PER)
	case $impl in
	openmpi)
		[ -n "$preload" ] && mpi_env+=(-x "LD_PRELOAD=$preload")
		for v in "${vars[@]}"; do mpi_env+=(-x "$v"); done
		"${clean[@]}" OMPI_ALLOW_RUN_AS_ROOT=1 \
			OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
			timeout "$RUN_TIMEOUT_S" mpirun --oversubscribe \
			--allow-run-as-root -np "$np" --mca pml ob1 \
			--mca btl self,vader \
			--mca btl_vader_single_copy_mechanism none \
			--mca mpi_yield_when_idle 1 "${mpi_env[@]}" "$@" \
			>"$tmp/out" 2>"$tmp/err"
		;;
	mpich)
		[ -n "$preload" ] && mpi_env+=(-genv LD_PRELOAD "$preload")
		for v in "${vars[@]}"; do
			mpi_env+=(-genv "${v%%=*}" "${v#*=}")
		done
		"${clean[@]}" timeout "$RUN_TIMEOUT_S" mpiexec.mpich \
			-np "$np" "${mpi_env[@]}" "$@" \
			>"$tmp/out" 2>"$tmp/err"
		;;
	esac
}

# expect_ok LABEL: the last launch exited 0 and printed "<...>: ok".
expect_ok() {
	local rc=$1 label=$2
	if [ "$rc" -eq 0 ] && grep -q ": ok" "$tmp/out"; then
		pass "$label"
	else
		fail "$label (exit $rc)"
		sed 's/^/    /' "$tmp/out" "$tmp/err" | grep -v "^    sdp.pace: error: matb" | head -40
	fi
}

# expect_lines LABEL FILE PATTERN COUNT: exactly COUNT matching lines.
expect_lines() {
	local label=$1 file=$2 pattern=$3 want=$4 got
	got=$(grep -cF -- "$pattern" "$file")
	if [ "$got" -eq "$want" ]; then
		pass "$label"
	else
		fail "$label: $got lines of '$pattern', want $want"
	fi
}

for impl in ${SDP_PACE_TEST_IMPLS:-}; do
	exe_var=SDP_PACE_TEST_EXE_$impl
	coll_var=SDP_PACE_TEST_COLL_$impl
	fexe_var=SDP_PACE_TEST_FEXE_$impl
	exe=${!exe_var}
	coll=${!coll_var}
	fexe=${!fexe_var:-}
	fake=$SDP_PACE_TEST_FAKE
	launcher=mpirun
	[ "$impl" = mpich ] && launcher=mpiexec.mpich
	if ! command -v "$launcher" >/dev/null; then
		fail "$impl: $launcher not found"
		continue
	fi

	for np in 2 4; do
		launch "$impl" "$np" "$fake:$coll" SDP_PACE_MAXRATE=10G -- \
			"$exe" full
		expect_ok $? "$impl np $np: full (set_limit, attributes, alltoall[v] B/N + restore)"

		launch "$impl" "$np" "$coll" SDP_PACE_MAXRATE=10G -- \
			"$exe" no-transport
		expect_ok $? "$impl np $np: no-transport returns errors"
		expect_lines "$impl np $np: no-transport message once per rank" \
			"$tmp/err" "$NO_TRANSPORT_MSG" "$np"
	done

	launch "$impl" 4 "$fake:$coll" SDP_PACE_MAXRATE=10G \
		SDP_PACE_COLL_NSENDERS=2 -- "$exe" full
	expect_ok $? "$impl np 4: SDP_PACE_COLL_NSENDERS=2 gives B/2"

	launch "$impl" 4 "$fake:$coll" SDP_PACE_MAXRATE=10G \
		SDP_PACE_COLL_PER=dest -- "$exe" dest
	expect_ok $? "$impl np 4: SDP_PACE_COLL_PER=dest paces destinations at B/N"
	# ... and only with the setting: the same case fails without it.
	launch "$impl" 2 "$fake:$coll" SDP_PACE_MAXRATE=10G -- "$exe" dest
	rc=$?
	if [ "$rc" -ne 0 ] && grep -q "alltoall: 0 destination rates" "$tmp/err"; then
		pass "$impl np 2: dest fails without SDP_PACE_COLL_PER=dest"
	else
		fail "$impl np 2: dest passed without SDP_PACE_COLL_PER (exit $rc)"
	fi

	launch "$impl" 2 "$fake:$coll" -- "$exe" no-maxrate
	expect_ok $? "$impl np 2: no SDP_PACE_MAXRATE returns errors"
	expect_lines "$impl np 2: SDP_PACE_MAXRATE message once per rank" \
		"$tmp/err" "$NO_MAXRATE_MSG" 2

	launch "$impl" 2 "$fake:$coll" SDP_PACE_MAXRATE=10G SDP_PACE_COLL=0 \
		-- "$exe" coll-off
	expect_ok $? "$impl np 2: SDP_PACE_COLL=0 disables"

	# The coll lib's B/N must come from the wrapper: without it, full fails.
	launch "$impl" 2 "$fake" SDP_PACE_MAXRATE=10G -- "$exe" full
	rc=$?
	if [ "$rc" -ne 0 ] && grep -q "alltoall: 0 rates applied" "$tmp/err"; then
		pass "$impl np 2: full fails without the coll lib"
	else
		fail "$impl np 2: full passed without the coll lib (exit $rc)"
	fi

	if [ -z "$fexe" ]; then
		echo "SKIP: $impl fortran (no gfortran or MPI Fortran library)"
		continue
	fi
	# Fortran API, and MPI_ALLTOALL from Fortran paced at B/2 (5G) and
	# restored to 1G, seen in the fake's trace.
	launch "$impl" 2 "$fake:$coll" SDP_PACE_MAXRATE=10G \
		SDP_FAKE_TRANSPORT_TRACE=1 -- "$fexe"
	expect_ok $? "$impl np 2: fortran API"
	expect_lines "$impl np 2: fortran MPI_ALLTOALL paced at B/N" \
		"$tmp/err" "sdp_fake_transport: set 5000000000" 2
	expect_lines "$impl np 2: fortran MPI_ALLTOALL restores 1G" \
		"$tmp/err" "sdp_fake_transport: set 1000000000" 4
done

if [ -z "${SDP_PACE_TEST_IMPLS:-}" ]; then
	echo "no MPI implementation built"
	exit 77
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
