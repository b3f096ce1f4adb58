/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdp_pace_attr.c - the B and MATB attributes, after GridMPI's
 * YAMPI_PSP_MAXRATE and YAMPI_PSP_MATB.
 *
 * GridMPI defines those as attributes of its own MPI library, so a put of
 * YAMPI_PSP_MATB reaches the pacer.  A library outside MPI can only create
 * user keyvals, and MPI gives user keyvals no hook on a put: only the
 * delete callback of the value being replaced runs, and it never sees the
 * new value.  So the attributes here are read-only views, and rates are
 * set by sdp_pace_set_matb() / sdp_pace_set_limit().
 *
 * The rate is one per process (one transport), not one per communicator,
 * so every attribute value points at the same process-wide storage below:
 * B (fixed once parsed) and a mirror of the current MATB, rewritten after
 * each rate operation of this library.  MPI_COMM_DUP_FN copies the pointer
 * into duplicates; nothing is owned by a communicator, so the delete
 * callback is a no-op.  Readers load a naturally aligned uint64_t, which is
 * single-copy atomic on the platforms MPI and DPDK run on here.
 */
#include <pthread.h>
#include <stdlib.h>

#include "sdp.h"
#include "sdp_pace_internal.h"

static pthread_once_t keyval_once = PTHREAD_ONCE_INIT;
static int keyval_maxrate = MPI_KEYVAL_INVALID; /* B attribute */
static int keyval_matb = MPI_KEYVAL_INVALID;	/* MATB attribute */
static uint64_t attr_maxrate_bps;		/* B, bit/s, set once */
static uint64_t attr_matb_bps;			/* current MATB mirror, bit/s */

static int keyval_create(const char *what, int *keyval_p)
{
	int ret = PMPI_Comm_create_keyval(MPI_COMM_DUP_FN,
					  MPI_COMM_NULL_DELETE_FN, keyval_p,
					  NULL);

	if (ret != MPI_SUCCESS) {
		SDP_LOG(ERR, PACE, "cannot create the %s attribute keyval: "
			"MPI error %d (call after MPI_Init, before "
			"MPI_Finalize)", what, ret);
		*keyval_p = MPI_KEYVAL_INVALID;
	}
	return ret;
}

/* Attach value under keyval unless comm already has the attribute. */
static int attr_put(MPI_Comm comm, int keyval, void *value)
{
	void *old;
	int flag = 0;
	int ret;

	if (keyval == MPI_KEYVAL_INVALID)
		return MPI_ERR_KEYVAL;
	ret = PMPI_Comm_get_attr(comm, keyval, &old, &flag);
	if (ret == MPI_SUCCESS && !flag)
		ret = PMPI_Comm_set_attr(comm, keyval, value);
	if (ret != MPI_SUCCESS)
		SDP_LOG(ERR, PACE, "cannot attach the pacing attributes to a "
			"communicator: MPI error %d", ret);
	return ret;
}

/*
 * B is attached only when SDP_PACE_MAXRATE is set, so a program that only
 * uses sdp_pace_set_matb() is not told about a variable it does not need;
 * a set but invalid value is reported (once) by sdp_pace_env_maxrate().
 */
static int attr_put_both(MPI_Comm comm)
{
	int ret;

	if (getenv(SDP_PACE_ENV_MAXRATE) != NULL &&
	    sdp_pace_env_maxrate(&attr_maxrate_bps) == MPI_SUCCESS) {
		ret = attr_put(comm, keyval_maxrate, &attr_maxrate_bps);
		if (ret != MPI_SUCCESS)
			return ret;
	}
	return attr_put(comm, keyval_matb, &attr_matb_bps);
}

static void keyval_init(void)
{
	if (keyval_create("B (maxrate)", &keyval_maxrate) != MPI_SUCCESS ||
	    keyval_create("MATB", &keyval_matb) != MPI_SUCCESS)
		return;
	if (attr_put_both(MPI_COMM_WORLD) == MPI_SUCCESS)
		attr_put_both(MPI_COMM_SELF);
}

int sdp_pace_attr_attach(MPI_Comm comm)
{
	pthread_once(&keyval_once, keyval_init);
	if (keyval_maxrate == MPI_KEYVAL_INVALID ||
	    keyval_matb == MPI_KEYVAL_INVALID)
		return MPI_ERR_KEYVAL;
	return attr_put_both(comm);
}

void sdp_pace_attr_mirror(uint64_t rate_bps)
{
	__atomic_store_n(&attr_matb_bps, rate_bps, __ATOMIC_RELAXED);
}

int sdp_pace_keyval_maxrate(void)
{
	pthread_once(&keyval_once, keyval_init);
	return keyval_maxrate;
}

int sdp_pace_keyval_matb(void)
{
	uint64_t rate_bps;

	pthread_once(&keyval_once, keyval_init);
	/* start from the transport's rate, not 0 (logs once if absent) */
	if (sdp_pace_transport_get(&rate_bps) == MPI_SUCCESS)
		sdp_pace_attr_mirror(rate_bps);
	return keyval_matb;
}
