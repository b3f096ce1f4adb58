/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdp_pace_internal.h - shared by mpi-pace's .c files: the transport lookup,
 * the parsed environment, the attribute mirror, and the Fortran entry
 * points' prototypes.  Not installed; applications use sdp_pace_mpi.h.
 *
 * Process-wide state lives in the .c file that owns it and is reached only
 * through these functions.  It is written with atomics, so concurrent
 * callers (MPI_THREAD_MULTIPLE) see consistent values; the rate itself is
 * one per process, so concurrent setters still race for the last word.
 */
#ifndef SDP_PACE_INTERNAL_H
#define SDP_PACE_INTERNAL_H

#include <stdint.h>

#include "sdp_pace_mpi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Message printed (once per process) when the transport symbols are absent. */
#define SDP_PACE_NO_TRANSPORT_MSG                                             \
	"sctp_dpdk transport not loaded: run with sdp-mpirun or "             \
	"LD_PRELOAD=libuct_sctp_dpdk.so"
/* ... when it is loaded but predates per-destination pacing. */
#define SDP_PACE_NO_DEST_MSG                                                  \
	"the sctp_dpdk transport loaded has no per-destination pacing "      \
	"(sdp_transport_set_dest_default_rate_bps): rebuild "                 \
	"libuct_sctp_dpdk.so, or unset SDP_PACE_COLL_PER"

/*
 * Transport: sdp_pace_transport.c
 */

/**
 * Apply rate_bps through sdp_transport_set_rate_bps().  The transport logs
 * its own rejections; a missing transport is logged here, once.
 * @return MPI_SUCCESS, MPI_ERR_ARG (-EINVAL/-ERANGE from the transport) or
 *   MPI_ERR_OTHER (not loaded, other errno).
 */
int sdp_pace_transport_set(uint64_t rate_bps);

/**
 * Read the rate through sdp_transport_get_rate_bps().
 * @return MPI_SUCCESS or MPI_ERR_OTHER (not loaded; logged once).
 */
int sdp_pace_transport_get(uint64_t *rate_bps_p);

/**
 * Per-destination default rate through the transport's optional symbols;
 * same returns as sdp_pace_transport_set/get (a transport without them
 * is MPI_ERR_OTHER, logged once).
 */
int sdp_pace_transport_set_dest(uint64_t rate_bps);
int sdp_pace_transport_get_dest(uint64_t *rate_bps_p);

/*
 * Environment: sdp_pace_env.c
 */

/**
 * B from SDP_PACE_MAXRATE, parsed on first call; errors logged once.
 * @return MPI_SUCCESS or MPI_ERR_OTHER.
 */
int sdp_pace_env_maxrate(uint64_t *rate_bps_p);

/*
 * Attributes: sdp_pace_attr.c
 */

/**
 * Create the keyvals if needed and attach both attributes to comm (and to
 * MPI_COMM_WORLD and MPI_COMM_SELF), unless already there.
 * @return MPI_SUCCESS or the MPI error code of the failed call (logged).
 */
int sdp_pace_attr_attach(MPI_Comm comm);

/** Store rate_bps in the MATB attribute mirror. */
void sdp_pace_attr_mirror(uint64_t rate_bps);

/*
 * Fortran entry points: sdp_pace_fortran.c.  gfortran appends one
 * underscore and passes every argument by reference; rates are integer*8.
 */
void sdp_pace_set_limit_(MPI_Fint *comm, MPI_Fint *nsenders, MPI_Fint *ierr);
void sdp_pace_set_matb_(MPI_Fint *comm, int64_t *rate_bps, MPI_Fint *ierr);
void sdp_pace_get_matb_(MPI_Fint *comm, int64_t *rate_bps, MPI_Fint *ierr);
void sdp_pace_get_maxrate_(int64_t *rate_bps, MPI_Fint *ierr);
void sdp_pace_matb_bps_(MPI_Fint *pattern, MPI_Fint *nodes, int64_t *rate_bps,
			MPI_Fint *ierr);

#ifdef __cplusplus
}
#endif

#endif /* SDP_PACE_INTERNAL_H */
