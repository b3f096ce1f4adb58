/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdp_pace_transport.c - the run-time link to the sctp_dpdk transport: the
 * two contract symbols (sdp_pace_mpi.h) looked up with dlsym(RTLD_DEFAULT).
 *
 * A successful lookup is cached; a failed one is retried on every call, so
 * a transport that is dlopen()ed RTLD_GLOBAL later is still found.  The
 * "not loaded" message is printed at most once per process: a job whose
 * every Alltoall fails for the same reason should say so once, not per
 * call.  Both symbols are needed; a transport exporting only one of them
 * counts as not loaded.
 */
#include <dlfcn.h>
#include <errno.h>

#include "sdp.h"
#include "sdp_pace_internal.h"

static sdp_transport_set_rate_bps_fn transport_set_fn; /* NULL: not found */
static sdp_transport_get_rate_bps_fn transport_get_fn; /* NULL: not found */
static int missing_logged;			       /* 1 once printed */

static int transport_lookup(void)
{
	sdp_transport_set_rate_bps_fn set_fn;
	sdp_transport_get_rate_bps_fn get_fn;

	if (__atomic_load_n(&transport_get_fn, __ATOMIC_ACQUIRE) != NULL)
		return 0;
	set_fn = (sdp_transport_set_rate_bps_fn)dlsym(
		RTLD_DEFAULT, SDP_TRANSPORT_SET_RATE_SYM);
	get_fn = (sdp_transport_get_rate_bps_fn)dlsym(
		RTLD_DEFAULT, SDP_TRANSPORT_GET_RATE_SYM);
	if (set_fn == NULL || get_fn == NULL) {
		if (!__atomic_exchange_n(&missing_logged, 1, __ATOMIC_RELAXED))
			SDP_LOG(ERR, PACE, "%s", SDP_PACE_NO_TRANSPORT_MSG);
		return -ENOENT;
	}
	/* set first: a reader that sees get_fn also sees set_fn */
	__atomic_store_n(&transport_set_fn, set_fn, __ATOMIC_RELAXED);
	__atomic_store_n(&transport_get_fn, get_fn, __ATOMIC_RELEASE);
	return 0;
}

int sdp_pace_transport_set(uint64_t rate_bps)
{
	int ret;

	if (transport_lookup() != 0)
		return MPI_ERR_OTHER;
	ret = __atomic_load_n(&transport_set_fn, __ATOMIC_RELAXED)(rate_bps);
	if (ret == 0)
		return MPI_SUCCESS;
	/* the transport logged the value, the limit and the setting */
	return (ret == -EINVAL || ret == -ERANGE) ? MPI_ERR_ARG : MPI_ERR_OTHER;
}

int sdp_pace_transport_get(uint64_t *rate_bps_p)
{
	if (transport_lookup() != 0)
		return MPI_ERR_OTHER;
	*rate_bps_p = __atomic_load_n(&transport_get_fn, __ATOMIC_RELAXED)();
	return MPI_SUCCESS;
}

/* The optional per-destination pair, cached and logged as the total's. */
static sdp_transport_set_dest_default_rate_bps_fn dest_set_fn;
static sdp_transport_get_dest_default_rate_bps_fn dest_get_fn;
static int dest_missing_logged; /* 1 once printed */

static int dest_lookup(void)
{
	sdp_transport_set_dest_default_rate_bps_fn set_fn;
	sdp_transport_get_dest_default_rate_bps_fn get_fn;

	if (__atomic_load_n(&dest_get_fn, __ATOMIC_ACQUIRE) != NULL)
		return 0;
	if (transport_lookup() != 0)
		return -ENOENT; /* "not loaded" logged there */
	set_fn = (sdp_transport_set_dest_default_rate_bps_fn)dlsym(
		RTLD_DEFAULT, SDP_TRANSPORT_SET_DEST_DEFAULT_RATE_SYM);
	get_fn = (sdp_transport_get_dest_default_rate_bps_fn)dlsym(
		RTLD_DEFAULT, SDP_TRANSPORT_GET_DEST_DEFAULT_RATE_SYM);
	if (set_fn == NULL || get_fn == NULL) {
		if (!__atomic_exchange_n(&dest_missing_logged, 1,
					 __ATOMIC_RELAXED))
			SDP_LOG(ERR, PACE, "%s", SDP_PACE_NO_DEST_MSG);
		return -ENOENT;
	}
	__atomic_store_n(&dest_set_fn, set_fn, __ATOMIC_RELAXED);
	__atomic_store_n(&dest_get_fn, get_fn, __ATOMIC_RELEASE);
	return 0;
}

int sdp_pace_transport_set_dest(uint64_t rate_bps)
{
	int ret;

	if (dest_lookup() != 0)
		return MPI_ERR_OTHER;
	ret = __atomic_load_n(&dest_set_fn, __ATOMIC_RELAXED)(rate_bps);
	if (ret == 0)
		return MPI_SUCCESS;
	return (ret == -EINVAL || ret == -ERANGE) ? MPI_ERR_ARG : MPI_ERR_OTHER;
}

int sdp_pace_transport_get_dest(uint64_t *rate_bps_p)
{
	if (dest_lookup() != 0)
		return MPI_ERR_OTHER;
	*rate_bps_p = __atomic_load_n(&dest_get_fn, __ATOMIC_RELAXED)();
	return MPI_SUCCESS;
}
