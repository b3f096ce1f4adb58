/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdp_pace_fortran.c - Fortran entry points of the rate API, for gfortran
 * (lower case, one trailing underscore, every argument by reference), in
 * the MPI subroutine style: the status comes back in a final ierr.
 *
 *   call sdp_pace_set_limit(comm, nsenders, ierr)  integer comm, nsenders
 *   call sdp_pace_set_matb(comm, rate_bps, ierr)   integer*8 rate_bps
 *   call sdp_pace_get_matb(comm, rate_bps, ierr)   integer*8 rate_bps
 *   call sdp_pace_get_maxrate(rate_bps, ierr)      integer*8 rate_bps
 *   call sdp_pace_matb_bps(pattern, nodes, rate_bps, ierr)
 *
 * Communicators are Fortran handles (MPI_Fint), converted with
 * MPI_Comm_f2c.  Rates are integer*8 because 10 Gbit/s does not fit a
 * default integer; Fortran has no unsigned type, so negative rates are
 * rejected with MPI_ERR_ARG.
 */
#include <stdint.h>

#include "sdp.h"
#include "sdp_pace_internal.h"

void sdp_pace_set_limit_(MPI_Fint *comm, MPI_Fint *nsenders, MPI_Fint *ierr)
{
	*ierr = sdp_pace_set_limit(MPI_Comm_f2c(*comm), *nsenders);
}

void sdp_pace_set_matb_(MPI_Fint *comm, int64_t *rate_bps, MPI_Fint *ierr)
{
	if (*rate_bps < 0) {
		SDP_LOG(ERR, PACE, "sdp_pace_set_matb: rate %lld bit/s is "
			"negative; pass 0 (unpaced) or a rate in bit/s",
			(long long)*rate_bps);
		*ierr = MPI_ERR_ARG;
		return;
	}
	*ierr = sdp_pace_set_matb(MPI_Comm_f2c(*comm), (uint64_t)*rate_bps);
}

void sdp_pace_get_matb_(MPI_Fint *comm, int64_t *rate_bps, MPI_Fint *ierr)
{
	uint64_t rate_u64 = 0;

	*ierr = sdp_pace_get_matb(MPI_Comm_f2c(*comm), &rate_u64);
	if (*ierr == MPI_SUCCESS)
		*rate_bps = (int64_t)rate_u64; /* <= PACE_RATE_MAX_BPS */
}

void sdp_pace_get_maxrate_(int64_t *rate_bps, MPI_Fint *ierr)
{
	uint64_t rate_u64 = 0;

	*ierr = sdp_pace_get_maxrate(&rate_u64);
	if (*ierr == MPI_SUCCESS)
		*rate_bps = (int64_t)rate_u64;
}

void sdp_pace_matb_bps_(MPI_Fint *pattern, MPI_Fint *nodes, int64_t *rate_bps,
			MPI_Fint *ierr)
{
	uint64_t rate_u64 = 0;

	*ierr = sdp_pace_matb_bps(*pattern, *nodes, &rate_u64);
	if (*ierr == MPI_SUCCESS)
		*rate_bps = (int64_t)rate_u64;
}
