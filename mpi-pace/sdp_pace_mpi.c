/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdp_pace_mpi.c - the MPI-facing rate API: MATB = f(B, N) from seed 001
 * Table I, applied to this process's transport (GridMPI's psp_set_limit()).
 *
 *   SDP_PACE_MAXRATE --pace_rate_parse--> B
 *   (pattern, N) --pace_matb_rate_bps--> MATB --dlsym'd transport--> pacers
 *                                          \--> MATB attribute mirror
 *
 * Errors are MPI error classes, returned, not raised through the
 * communicator's error handler: these are library calls beside MPI, as
 * psp_set_limit() was.  Each is logged once where it is detected.
 */
#include <errno.h>

#include "pace.h"
#include "sdp.h"
#include "sdp_pace_internal.h"

static int comm_check(const char *func, MPI_Comm comm)
{
	if (comm == MPI_COMM_NULL) {
		SDP_LOG(ERR, PACE, "%s: comm is MPI_COMM_NULL; pass a valid "
			"communicator such as MPI_COMM_WORLD", func);
		return MPI_ERR_COMM;
	}
	return sdp_pace_attr_attach(comm);
}

/* Apply rate_bps and refresh the attribute mirror from the transport. */
static int rate_apply(uint64_t rate_bps)
{
	uint64_t now_bps;
	int ret = sdp_pace_transport_set(rate_bps);

	if (ret != MPI_SUCCESS)
		return ret;
	if (sdp_pace_transport_get(&now_bps) == MPI_SUCCESS)
		sdp_pace_attr_mirror(now_bps);
	return MPI_SUCCESS;
}

static int pattern_to_pace(int pattern, enum pace_matb_pattern *pace_p)
{
	switch (pattern) {
	case SDP_PACE_MATB_B_N:
		*pace_p = PACE_MATB_B_N;
		return 0;
	case SDP_PACE_MATB_B_HALF_N:
		*pace_p = PACE_MATB_B_HALF_N;
		return 0;
	case SDP_PACE_MATB_B_2SQRT_2N:
		*pace_p = PACE_MATB_B_2SQRT_2N;
		return 0;
	case SDP_PACE_MATB_B_2N:
		*pace_p = PACE_MATB_B_2N;
		return 0;
	}
	SDP_LOG(ERR, PACE, "matb pattern %d is unknown; use SDP_PACE_MATB_B_N "
		"(0), _B_HALF_N (1), _B_2SQRT_2N (2) or _B_2N (3)", pattern);
	return -EINVAL;
}

int sdp_pace_matb_bps(int pattern, int nodes, uint64_t *rate_bps_p)
{
	enum pace_matb_pattern pace_pattern;
	uint64_t b_bps;
	int ret;

	if (rate_bps_p == NULL) {
		SDP_LOG(ERR, PACE, "sdp_pace_matb_bps: rate_bps_p is NULL");
		return MPI_ERR_ARG;
	}
	if (nodes < 1) {
		SDP_LOG(ERR, PACE, "matb nodes %d is invalid: pass the number "
			"of processes sending across the shared link at once, "
			"at least 1", nodes);
		return MPI_ERR_ARG;
	}
	if (pattern_to_pace(pattern, &pace_pattern) != 0)
		return MPI_ERR_ARG;
	ret = sdp_pace_env_maxrate(&b_bps);
	if (ret != MPI_SUCCESS)
		return ret;
	/* logs B/(N/2) with N = 1 and a MATB below 1 bit/s */
	if (pace_matb_rate_bps(pace_pattern, b_bps, (uint32_t)nodes,
			       rate_bps_p) != 0)
		return MPI_ERR_ARG;
	return MPI_SUCCESS;
}

int sdp_pace_set_limit(MPI_Comm comm, int nsenders)
{
	uint64_t rate_bps;
	int ret;

	ret = comm_check("sdp_pace_set_limit", comm);
	if (ret != MPI_SUCCESS)
		return ret;
	ret = sdp_pace_matb_bps(SDP_PACE_MATB_B_N, nsenders, &rate_bps);
	if (ret != MPI_SUCCESS)
		return ret;
	return rate_apply(rate_bps);
}

int sdp_pace_set_matb(MPI_Comm comm, uint64_t rate_bps)
{
	int ret = comm_check("sdp_pace_set_matb", comm);

	if (ret != MPI_SUCCESS)
		return ret;
	return rate_apply(rate_bps);
}

int sdp_pace_get_matb(MPI_Comm comm, uint64_t *rate_bps_p)
{
	int ret;

	if (rate_bps_p == NULL) {
		SDP_LOG(ERR, PACE, "sdp_pace_get_matb: rate_bps_p is NULL");
		return MPI_ERR_ARG;
	}
	ret = comm_check("sdp_pace_get_matb", comm);
	if (ret != MPI_SUCCESS)
		return ret;
	ret = sdp_pace_transport_get(rate_bps_p);
	if (ret == MPI_SUCCESS)
		sdp_pace_attr_mirror(*rate_bps_p);
	return ret;
}

int sdp_pace_set_dest_matb(MPI_Comm comm, uint64_t rate_bps)
{
	int ret = comm_check("sdp_pace_set_dest_matb", comm);

	if (ret != MPI_SUCCESS)
		return ret;
	return sdp_pace_transport_set_dest(rate_bps);
}

int sdp_pace_get_dest_matb(MPI_Comm comm, uint64_t *rate_bps_p)
{
	int ret;

	if (rate_bps_p == NULL) {
		SDP_LOG(ERR, PACE, "sdp_pace_get_dest_matb: rate_bps_p is "
			"NULL");
		return MPI_ERR_ARG;
	}
	ret = comm_check("sdp_pace_get_dest_matb", comm);
	if (ret != MPI_SUCCESS)
		return ret;
	return sdp_pace_transport_get_dest(rate_bps_p);
}

int sdp_pace_get_maxrate(uint64_t *rate_bps_p)
{
	if (rate_bps_p == NULL) {
		SDP_LOG(ERR, PACE, "sdp_pace_get_maxrate: rate_bps_p is NULL");
		return MPI_ERR_ARG;
	}
	return sdp_pace_env_maxrate(rate_bps_p);
}
