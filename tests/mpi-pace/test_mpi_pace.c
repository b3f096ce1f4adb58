/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_mpi_pace.c - MPI test of mpi-pace: the rate API, the attributes and
 * the rate-managed MPI_Alltoall/MPI_Alltoallv of libsdp_pace_coll.
 *
 * Built once per MPI implementation and run by test_mpi_pace.sh under
 * mpirun with 2 and 4 ranks.  argv[1] names the case, which must match the
 * environment the script set up:
 *
 *   full          fake transport + coll lib preloaded, SDP_PACE_MAXRATE=10G
 *   no-transport  coll lib preloaded, no transport, SDP_PACE_MAXRATE=10G
 *   no-maxrate    fake transport + coll lib, SDP_PACE_MAXRATE unset
 *   coll-off      fake transport + coll lib, SDP_PACE_COLL=0
 *   dest          fake transport + coll lib, SDP_PACE_MAXRATE=10G,
 *                 SDP_PACE_COLL_PER=dest: B/N per destination
 *
 * The rates the transport saw come from the fake transport's in-memory log
 * (fake_transport.c), reached with dlsym so this program does not link it.
 * Every rank checks; rank 0 prints "case <name>: ok" or the failure count,
 * and the exit status is non-zero if any rank failed.
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdp_pace_mpi.h"

#define B_BPS UINT64_C(10000000000) /* SDP_PACE_MAXRATE=10G */
#define PREV_BPS UINT64_C(1000000000) /* rate set before each collective */
#define PER_PEER 3			/* Alltoall elements per peer */
#define LOG_MAX 64

static int rank, nranks, failures;

#define CHECK(cond, ...)                                                      \
	do {                                                                  \
		if (!(cond)) {                                                \
			failures++;                                           \
			fprintf(stderr, "rank %d: FAIL %s:%d: %s: ", rank,    \
				__func__, __LINE__, #cond);                   \
			fprintf(stderr, __VA_ARGS__);                         \
			fputc('\n', stderr);                                  \
		}                                                             \
	} while (0)

/* The fake transport's test hooks; NULL when it is not loaded. */
static size_t (*fake_log)(uint64_t *rates_bps, size_t max);
static void (*fake_log_clear)(void);
static void (*fake_fail_next)(unsigned int skip, int err);
static size_t (*fake_dest_log)(uint64_t *rates_bps, size_t max);

static void fake_lookup(void)
{
	*(void **)&fake_log = dlsym(RTLD_DEFAULT, "sdp_fake_transport_log");
	*(void **)&fake_log_clear =
		dlsym(RTLD_DEFAULT, "sdp_fake_transport_log_clear");
	*(void **)&fake_fail_next =
		dlsym(RTLD_DEFAULT, "sdp_fake_transport_fail_next");
	*(void **)&fake_dest_log =
		dlsym(RTLD_DEFAULT, "sdp_fake_transport_dest_log");
}

static int err_class(int ret)
{
	int cls = ret;

	if (ret != MPI_SUCCESS)
		MPI_Error_class(ret, &cls);
	return cls;
}

/* Does the fake's log hold exactly the n rates in want? */
static void check_log(const char *what, const uint64_t *want, size_t n)
{
	uint64_t got[LOG_MAX];
	size_t len, i;

	if (fake_log == NULL) {
		CHECK(0, "%s: fake transport not loaded", what);
		return;
	}
	len = fake_log(got, LOG_MAX);
	CHECK(len == n, "%s: %zu rates applied, want %zu", what, len, n);
	for (i = 0; i < len && i < n; i++)
		CHECK(got[i] == want[i], "%s: rate %zu is %" PRIu64 ", want %"
		      PRIu64, what, i, got[i], want[i]);
}

static void log_clear(void)
{
	if (fake_log_clear != NULL)
		fake_log_clear();
}

/* Attribute keyval on comm: present?  and its uint64_t value. */
static int attr_get(MPI_Comm comm, int keyval, uint64_t *value_p)
{
	void *p = NULL;
	int flag = 0;

	CHECK(MPI_Comm_get_attr(comm, keyval, &p, &flag) == MPI_SUCCESS,
	      "keyval %d", keyval);
	if (flag)
		*value_p = *(const uint64_t *)p;
	return flag;
}

/* B/N as the coll lib computes it: N from SDP_PACE_COLL_NSENDERS or size. */
static uint64_t coll_matb_bps(void)
{
	const char *n = getenv("SDP_PACE_COLL_NSENDERS");

	return B_BPS / (uint64_t)(n != NULL ? atoi(n) : nranks);
}

/*
 * Alltoall of PER_PEER ints per peer; element k for peer j from rank i is
 * i * 10000 + j * 100 + k.  Returns the call's result; *ok_p tells whether
 * recvbuf held exactly what was sent (untouched == sentinel -1 everywhere).
 */
static int run_alltoall(int sendcount, int *ok_p, int *untouched_p)
{
	int *sendbuf = malloc(sizeof(int) * PER_PEER * nranks);
	int *recvbuf = malloc(sizeof(int) * PER_PEER * nranks);
	int i, k, ret;

	for (i = 0; i < nranks; i++)
		for (k = 0; k < PER_PEER; k++) {
			sendbuf[i * PER_PEER + k] = rank * 10000 + i * 100 + k;
			recvbuf[i * PER_PEER + k] = -1;
		}
	ret = MPI_Alltoall(sendbuf, sendcount, MPI_INT, recvbuf, PER_PEER,
			   MPI_INT, MPI_COMM_WORLD);
	*ok_p = 1;
	*untouched_p = 1;
	for (i = 0; i < nranks; i++)
		for (k = 0; k < PER_PEER; k++) {
			int v = recvbuf[i * PER_PEER + k];

			*ok_p &= v == i * 10000 + rank * 100 + k;
			*untouched_p &= v == -1;
		}
	free(sendbuf);
	free(recvbuf);
	return ret;
}

/*
 * Alltoallv: rank i sends (2i + j) % 3 + 1 ints to rank j, same values as
 * run_alltoall; send and receive counts (and so displacements) differ.
 */
static int run_alltoallv(int *ok_p)
{
	int *scounts = malloc(sizeof(int) * nranks);
	int *rcounts = malloc(sizeof(int) * nranks);
	int *sdispls = malloc(sizeof(int) * nranks);
	int *rdispls = malloc(sizeof(int) * nranks);
	int *sendbuf = malloc(sizeof(int) * 3 * nranks);
	int *recvbuf = malloc(sizeof(int) * 3 * nranks);
	int i, k, ret, soff = 0, roff = 0;

	for (i = 0; i < nranks; i++) {
		scounts[i] = (2 * rank + i) % 3 + 1;
		rcounts[i] = (2 * i + rank) % 3 + 1;
		sdispls[i] = soff;
		rdispls[i] = roff;
		for (k = 0; k < scounts[i]; k++)
			sendbuf[soff + k] = rank * 10000 + i * 100 + k;
		for (k = 0; k < rcounts[i]; k++)
			recvbuf[roff + k] = -1;
		soff += scounts[i];
		roff += rcounts[i];
	}
	ret = MPI_Alltoallv(sendbuf, scounts, sdispls, MPI_INT, recvbuf,
			    rcounts, rdispls, MPI_INT, MPI_COMM_WORLD);
	*ok_p = 1;
	for (i = 0; i < nranks; i++)
		for (k = 0; k < rcounts[i]; k++)
			*ok_p &= recvbuf[rdispls[i] + k] ==
				 i * 10000 + rank * 100 + k;
	free(scounts);
	free(rcounts);
	free(sdispls);
	free(rdispls);
	free(sendbuf);
	free(recvbuf);
	return ret;
}

static void case_full(void)
{
	const uint64_t b_n[] = {312500000};
	const uint64_t coll[] = {coll_matb_bps(), PREV_BPS};
	const uint64_t coll_enter_only[] = {coll_matb_bps()};
	uint64_t rate = 0, v = 0;
	MPI_Comm dup, split;
	int ok, untouched, ret, kv_max, kv_matb;

	if (fake_log == NULL || fake_fail_next == NULL) {
		CHECK(0, "the fake transport is not loaded (LD_PRELOAD)");
		return;
	}

	/* MATB helper: seed 001 Table I with B = 10G, N = 32. */
	CHECK(sdp_pace_matb_bps(SDP_PACE_MATB_B_N, 32, &rate) == MPI_SUCCESS &&
		      rate == 312500000, "B/N %" PRIu64, rate);
	CHECK(sdp_pace_matb_bps(SDP_PACE_MATB_B_HALF_N, 32, &rate) ==
			      MPI_SUCCESS && rate == 625000000,
	      "B/(N/2) %" PRIu64, rate);
	CHECK(sdp_pace_matb_bps(SDP_PACE_MATB_B_2SQRT_2N, 32, &rate) ==
			      MPI_SUCCESS && rate == 625000000,
	      "B/(2 sqrt(2N)) %" PRIu64, rate);
	CHECK(sdp_pace_matb_bps(SDP_PACE_MATB_B_2N, 32, &rate) ==
			      MPI_SUCCESS && rate == 156250000,
	      "B/2N %" PRIu64, rate);
	CHECK(sdp_pace_matb_bps(SDP_PACE_MATB_B_N, 0, &rate) == MPI_ERR_ARG,
	      "N = 0");
	CHECK(sdp_pace_matb_bps(SDP_PACE_MATB_B_HALF_N, 1, &rate) ==
		      MPI_ERR_ARG, "B/(N/2) with N = 1");
	CHECK(sdp_pace_matb_bps(7, 32, &rate) == MPI_ERR_ARG, "pattern 7");
	CHECK(sdp_pace_get_maxrate(&rate) == MPI_SUCCESS && rate == B_BPS,
	      "maxrate %" PRIu64, rate);

	/* psp_set_limit(32): B/N applied to the transport. */
	log_clear();
	CHECK(sdp_pace_set_limit(MPI_COMM_WORLD, 32) == MPI_SUCCESS, "limit");
	check_log("set_limit(32)", b_n, 1);
	CHECK(sdp_pace_get_matb(MPI_COMM_WORLD, &rate) == MPI_SUCCESS &&
		      rate == 312500000, "get_matb %" PRIu64, rate);
	CHECK(sdp_pace_set_limit(MPI_COMM_WORLD, 0) == MPI_ERR_ARG, "N = 0");
	CHECK(sdp_pace_set_limit(MPI_COMM_NULL, 32) == MPI_ERR_COMM, "NULL");
	check_log("rejected set_limit", b_n, 1);

	/* Attributes: B and the current MATB, also on duplicates. */
	kv_max = sdp_pace_keyval_maxrate();
	kv_matb = sdp_pace_keyval_matb();
	CHECK(kv_max != MPI_KEYVAL_INVALID && kv_matb != MPI_KEYVAL_INVALID &&
		      kv_max != kv_matb, "keyvals %d %d", kv_max, kv_matb);
	CHECK(attr_get(MPI_COMM_WORLD, kv_max, &v) && v == B_BPS,
	      "B attr %" PRIu64, v);
	CHECK(attr_get(MPI_COMM_WORLD, kv_matb, &v) && v == 312500000,
	      "MATB attr %" PRIu64, v);
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	CHECK(sdp_pace_set_matb(MPI_COMM_WORLD, PREV_BPS) == MPI_SUCCESS, "1G");
	CHECK(attr_get(MPI_COMM_WORLD, kv_matb, &v) && v == PREV_BPS,
	      "MATB attr after set %" PRIu64, v);
	CHECK(attr_get(dup, kv_matb, &v) && v == PREV_BPS,
	      "MATB attr of dup %" PRIu64, v);
	CHECK(attr_get(dup, kv_max, &v) && v == B_BPS, "B attr of dup");
	MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &split);
	CHECK(!attr_get(split, kv_matb, &v), "split comm has attr early");
	CHECK(sdp_pace_get_matb(split, &rate) == MPI_SUCCESS &&
		      rate == PREV_BPS, "get_matb(split) %" PRIu64, rate);
	CHECK(attr_get(split, kv_matb, &v) && v == PREV_BPS,
	      "MATB attr of split %" PRIu64, v);
	/* documented limit: a put does not reach the transport */
	log_clear();
	v = 42;
	MPI_Comm_set_attr(dup, kv_matb, &v);
	check_log("MPI_Comm_set_attr", NULL, 0);
	MPI_Comm_free(&split);
	MPI_Comm_free(&dup);

	/* Transport errors map to classes. */
	fake_fail_next(0, -EINVAL);
	CHECK(sdp_pace_set_matb(MPI_COMM_WORLD, 5) == MPI_ERR_ARG, "EINVAL");
	fake_fail_next(0, -EIO);
	CHECK(sdp_pace_set_matb(MPI_COMM_WORLD, 5) == MPI_ERR_OTHER, "EIO");
	CHECK(sdp_pace_set_matb(MPI_COMM_WORLD, UINT64_C(200000000000)) ==
		      MPI_ERR_ARG, "above the fake link rate");
	check_log("rejected set_matb", NULL, 0);
	CHECK(sdp_pace_get_matb(MPI_COMM_WORLD, &rate) == MPI_SUCCESS &&
		      rate == PREV_BPS, "rate kept %" PRIu64, rate);

	/* Alltoall: B/N on entry, previous rate on exit, data intact. */
	log_clear();
	ret = run_alltoall(PER_PEER, &ok, &untouched);
	CHECK(ret == MPI_SUCCESS && ok, "alltoall ret %d data ok %d", ret, ok);
	check_log("alltoall", coll, 2);

	log_clear();
	ret = run_alltoallv(&ok);
	CHECK(ret == MPI_SUCCESS && ok, "alltoallv ret %d data ok %d", ret,
	      ok);
	check_log("alltoallv", coll, 2);

	/* The inner call fails (count -1): the rate is restored anyway. */
	log_clear();
	ret = run_alltoall(-1, &ok, &untouched);
	CHECK(err_class(ret) == MPI_ERR_COUNT, "bad count: class %d",
	      err_class(ret));
	check_log("failed alltoall", coll, 2);

	/* B/N rejected on entry: error, no exchange, rate untouched. */
	log_clear();
	fake_fail_next(0, -EINVAL);
	ret = run_alltoall(PER_PEER, &ok, &untouched);
	CHECK(err_class(ret) == MPI_ERR_ARG && untouched,
	      "entry rejected: class %d untouched %d", err_class(ret),
	      untouched);
	check_log("entry rejected", NULL, 0);

	/* Restore rejected: data exchanged, error reported. */
	fake_fail_next(1, -EIO);
	ret = run_alltoall(PER_PEER, &ok, &untouched);
	CHECK(err_class(ret) == MPI_ERR_OTHER && ok,
	      "restore rejected: class %d ok %d", err_class(ret), ok);
	check_log("restore rejected", coll_enter_only, 1);
	CHECK(sdp_pace_set_matb(MPI_COMM_WORLD, PREV_BPS) == MPI_SUCCESS, "1G");
}

static void case_no_transport(void)
{
	uint64_t rate = 0, v = 0;
	int ok, untouched, ret;

	CHECK(fake_log == NULL, "the fake transport is loaded");
	CHECK(sdp_pace_set_limit(MPI_COMM_WORLD, 32) == MPI_ERR_OTHER, "1st");
	CHECK(sdp_pace_set_limit(MPI_COMM_WORLD, 32) == MPI_ERR_OTHER, "2nd");
	CHECK(sdp_pace_set_matb(MPI_COMM_WORLD, PREV_BPS) == MPI_ERR_OTHER,
	      "set_matb");
	CHECK(sdp_pace_get_matb(MPI_COMM_WORLD, &rate) == MPI_ERR_OTHER,
	      "get_matb");
	/* B needs no transport */
	CHECK(attr_get(MPI_COMM_WORLD, sdp_pace_keyval_maxrate(), &v) &&
		      v == B_BPS, "B attr %" PRIu64, v);
	ret = run_alltoall(PER_PEER, &ok, &untouched);
	CHECK(err_class(ret) == MPI_ERR_OTHER && untouched,
	      "alltoall class %d untouched %d", err_class(ret), untouched);
}

static void case_no_maxrate(void)
{
	const uint64_t prev[] = {PREV_BPS};
	uint64_t rate = 0, v = 0;
	int ok, untouched, ret;

	log_clear();
	CHECK(sdp_pace_set_limit(MPI_COMM_WORLD, 32) == MPI_ERR_OTHER, "1st");
	CHECK(sdp_pace_set_limit(MPI_COMM_WORLD, 32) == MPI_ERR_OTHER, "2nd");
	CHECK(sdp_pace_matb_bps(SDP_PACE_MATB_B_N, 32, &rate) ==
		      MPI_ERR_OTHER, "matb_bps");
	CHECK(sdp_pace_get_maxrate(&rate) == MPI_ERR_OTHER, "get_maxrate");
	CHECK(!attr_get(MPI_COMM_WORLD, sdp_pace_keyval_maxrate(), &v),
	      "B attr present: %" PRIu64, v);
	check_log("no B", NULL, 0);
	/* an explicit rate needs no B */
	CHECK(sdp_pace_set_matb(MPI_COMM_WORLD, PREV_BPS) == MPI_SUCCESS, "1G");
	CHECK(attr_get(MPI_COMM_WORLD, sdp_pace_keyval_matb(), &v) &&
		      v == PREV_BPS, "MATB attr %" PRIu64, v);
	ret = run_alltoall(PER_PEER, &ok, &untouched);
	CHECK(err_class(ret) == MPI_ERR_OTHER && untouched,
	      "alltoall class %d untouched %d", err_class(ret), untouched);
	check_log("no B", prev, 1);
}

static void case_coll_off(void)
{
	int ok, untouched, ret;

	CHECK(sdp_pace_set_matb(MPI_COMM_WORLD, PREV_BPS) == MPI_SUCCESS, "1G");
	log_clear();
	ret = run_alltoall(PER_PEER, &ok, &untouched);
	CHECK(ret == MPI_SUCCESS && ok, "alltoall ret %d ok %d", ret, ok);
	ret = run_alltoallv(&ok);
	CHECK(ret == MPI_SUCCESS && ok, "alltoallv ret %d ok %d", ret, ok);
	check_log("SDP_PACE_COLL=0", NULL, 0);
}

/* Does the fake's per-destination log hold exactly the n rates in want? */
static void check_dest_log(const char *what, const uint64_t *want, size_t n)
{
	uint64_t got[LOG_MAX];
	size_t len, i;

	if (fake_dest_log == NULL) {
		CHECK(0, "%s: fake transport not loaded", what);
		return;
	}
	len = fake_dest_log(got, LOG_MAX);
	CHECK(len == n, "%s: %zu destination rates applied, want %zu", what,
	      len, n);
	for (i = 0; i < len && i < n; i++)
		CHECK(got[i] == want[i], "%s: destination rate %zu is %" PRIu64
		      ", want %" PRIu64, what, i, got[i], want[i]);
}

/* SDP_PACE_COLL_PER=dest: B/N per destination, the total untouched. */
static void case_dest(void)
{
	const uint64_t dest_prev = UINT64_C(2000000000);
	const uint64_t coll[] = {coll_matb_bps(), dest_prev};
	const uint64_t set_prev[] = {dest_prev};
	uint64_t rate = 0;
	int ok, untouched, ret;

	CHECK(sdp_pace_set_matb(MPI_COMM_WORLD, PREV_BPS) == MPI_SUCCESS, "1G");
	log_clear();
	CHECK(sdp_pace_set_dest_matb(MPI_COMM_WORLD, dest_prev) == MPI_SUCCESS,
	      "set_dest_matb");
	CHECK(sdp_pace_get_dest_matb(MPI_COMM_WORLD, &rate) == MPI_SUCCESS &&
		      rate == dest_prev, "get_dest_matb %" PRIu64, rate);
	CHECK(sdp_pace_set_dest_matb(MPI_COMM_NULL, 1) == MPI_ERR_COMM,
	      "NULL comm");
	check_dest_log("set_dest_matb", set_prev, 1);

	log_clear();
	ret = run_alltoall(PER_PEER, &ok, &untouched);
	CHECK(ret == MPI_SUCCESS && ok, "alltoall ret %d ok %d", ret, ok);
	check_dest_log("alltoall", coll, 2);
	check_log("alltoall total", NULL, 0);
	log_clear();
	ret = run_alltoallv(&ok);
	CHECK(ret == MPI_SUCCESS && ok, "alltoallv ret %d ok %d", ret, ok);
	check_dest_log("alltoallv", coll, 2);
	check_log("alltoallv total", NULL, 0);
	CHECK(sdp_pace_get_matb(MPI_COMM_WORLD, &rate) == MPI_SUCCESS &&
		      rate == PREV_BPS, "total kept %" PRIu64, rate);
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "";
	int total = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	/* errors come back as values, so failures can be asserted */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	fake_lookup();

	if (strcmp(name, "full") == 0)
		case_full();
	else if (strcmp(name, "no-transport") == 0)
		case_no_transport();
	else if (strcmp(name, "no-maxrate") == 0)
		case_no_maxrate();
	else if (strcmp(name, "coll-off") == 0)
		case_coll_off();
	else if (strcmp(name, "dest") == 0)
		case_dest();
	else
		CHECK(0, "unknown case '%s'", name);

	MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("case %s, %d ranks: %s (%d failed checks)\n", name,
		       nranks, total == 0 ? "ok" : "FAILED", total);
	MPI_Finalize();
	return total == 0 ? 0 : 1;
}
