/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdp_pace_mpi.h - rate control from MPI (seed 001, GridMPI + PSPacer): the
 * only header applications and the transport include.
 *
 * Two parts:
 *
 * 1. The transport contract (no MPI needed; define SDP_PACE_NO_MPI before
 *    including to get only this part).  The sctp_dpdk transport
 *    (libuct_sctp_dpdk.so, loaded into every rank with LD_PRELOAD by
 *    sdp-mpirun) exports two C symbols with default visibility:
 *
 *      int sdp_transport_set_rate_bps(uint64_t rate_bps);
 *      uint64_t sdp_transport_get_rate_bps(void);
 *
 *    set publishes rate_bps (bit/s, 0 = unpaced) to every TX queue pacer of
 *    this process (pace_queue_set_rate_bps()) and returns 0 or a negative
 *    errno: -EINVAL for a rate it cannot apply (above the link rate, ...),
 *    which it logs itself, naming the value, the limit and the setting; the
 *    MPI library only propagates it.  It is callable from any thread and
 *    takes effect at each queue's next burst.  get returns the rate last
 *    set (or configured at start-up), bit/s.
 *
 *    libsdp_pace_mpi finds them with dlsym(RTLD_DEFAULT, ...) when a rate is
 *    first used, so the transport must be in the global scope: LD_PRELOAD,
 *    a link-time dependency, or dlopen(RTLD_GLOBAL).  A transport that UCX
 *    dlopen()s privately is not found.
 *
 * 2. The MPI-facing API, one process-wide rate: each process has its own
 *    transport and TX queues, so "this process's MATB" is what every call
 *    below reads or writes, whatever the communicator.  All functions are
 *    for use between MPI_Init and MPI_Finalize and return MPI_SUCCESS or an
 *    MPI error class; they log the reason on stderr (once per process for
 *    configuration errors) and do not call the communicator's error
 *    handler.
 *
 *    B, the bandwidth shared by the senders, comes from the environment
 *    variable SDP_PACE_MAXRATE in bit/s with an optional SI suffix ("10G",
 *    "2500M"; pace_rate_parse()).  It mirrors GridMPI's YAMPI_PSP_MAXRATE,
 *    which is in Kbytes/s: YAMPI_PSP_MAXRATE=1250000 is
 *    SDP_PACE_MAXRATE=10G.
 *
 * Attributes (seed: YAMPI_PSP_MAXRATE and YAMPI_PSP_MATB): keyvals from
 * sdp_pace_keyval_maxrate() and sdp_pace_keyval_matb(), attached to
 * MPI_COMM_WORLD, MPI_COMM_SELF, every communicator passed to a function
 * below, and copied to their duplicates.  MPI_Comm_get_attr() returns a
 * `const uint64_t *`, bit/s: B, and this process's current MATB.  The MATB
 * value is a mirror refreshed by every call below; a rate set by other
 * means shows after the next call (sdp_pace_get_matb() reads the transport
 * directly).  MPI has no set hook for user keyvals (a put only runs the
 * delete callback of the old value), so MPI_Comm_set_attr() on these
 * keyvals does NOT change the rate: use sdp_pace_set_matb() or
 * sdp_pace_set_limit().  Both attributes are read-only by convention.
 */
#ifndef SDP_PACE_MPI_H
#define SDP_PACE_MPI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The transport contract (see above), resolved by name at run time. */
#define SDP_TRANSPORT_SET_RATE_SYM "sdp_transport_set_rate_bps"
#define SDP_TRANSPORT_GET_RATE_SYM "sdp_transport_get_rate_bps"
typedef int (*sdp_transport_set_rate_bps_fn)(uint64_t rate_bps);
typedef uint64_t (*sdp_transport_get_rate_bps_fn)(void);

/*
 * Per-destination pacing (optional part of the contract): every
 * destination's frames at their own rate, under the process's total above.
 *
 *   int sdp_transport_set_dest_default_rate_bps(uint64_t rate_bps);
 *   uint64_t sdp_transport_get_dest_default_rate_bps(void);
 *   int sdp_transport_set_dest_rate_bps(uint32_t ipv4_be, uint64_t rate_bps);
 *
 * The default applies to every destination without a rate of its own (0 =
 * destinations are not paced separately); errors as for the total rate.
 * A rate-managed all-to-all in "dest" mode (SDP_PACE_COLL_PER=dest) sets
 * the default to B/N for the call: in a topology where every receiver has
 * its own bottleneck of B, that is each sender's share of each receiver.
 */
#define SDP_TRANSPORT_SET_DEST_DEFAULT_RATE_SYM                               \
	"sdp_transport_set_dest_default_rate_bps"
#define SDP_TRANSPORT_GET_DEST_DEFAULT_RATE_SYM                               \
	"sdp_transport_get_dest_default_rate_bps"
#define SDP_TRANSPORT_SET_DEST_RATE_SYM "sdp_transport_set_dest_rate_bps"
typedef int (*sdp_transport_set_dest_default_rate_bps_fn)(uint64_t rate_bps);
typedef uint64_t (*sdp_transport_get_dest_default_rate_bps_fn)(void);
typedef int (*sdp_transport_set_dest_rate_bps_fn)(uint32_t ipv4_be,
						   uint64_t rate_bps);

/* Environment variables read by libsdp_pace_mpi and libsdp_pace_coll. */
#define SDP_PACE_ENV_MAXRATE "SDP_PACE_MAXRATE"	 /* B, bit/s, SI suffix */
#define SDP_PACE_ENV_COLL "SDP_PACE_COLL"	 /* 0: no collective pacing */
#define SDP_PACE_ENV_COLL_NSENDERS "SDP_PACE_COLL_NSENDERS" /* N override */
#define SDP_PACE_ENV_COLL_PER "SDP_PACE_COLL_PER" /* "process" or "dest" */

#ifndef SDP_PACE_NO_MPI
#include <mpi.h>

/*
 * Communication patterns of seed 001 Table I, N nodes (senders) per
 * cluster.  Values are stable: Fortran passes them as integers.
 */
enum sdp_pace_pattern {
	SDP_PACE_MATB_B_N = 0,	  /* B/N: all-to-all; NPB LU, MG, FT, IS */
	SDP_PACE_MATB_B_HALF_N = 1, /* B/(N/2): NPB CG */
	SDP_PACE_MATB_B_2SQRT_2N = 2, /* B/(2*sqrt(2N)): NPB BT, SP */
	SDP_PACE_MATB_B_2N = 3,	  /* B/2N: avoids incast at the receiver */
};

/**
 * Apply MATB = B / nsenders to this process's transport, as GridMPI's
 * psp_set_limit(n).  Rounded down to whole bit/s.  Example: B = 10G,
 * nsenders = 32 gives 312500000 bit/s.
 *
 * @param comm      Valid communicator; gets the attributes attached.
 * @param nsenders  Processes sending across the shared link at once, >= 1.
 * @return MPI_SUCCESS, MPI_ERR_COMM (comm is MPI_COMM_NULL), MPI_ERR_ARG
 *   (nsenders < 1, or the transport rejected the rate), or MPI_ERR_OTHER
 *   (SDP_PACE_MAXRATE unset, malformed or 0; transport not loaded; other
 *   transport failure).
 */
int sdp_pace_set_limit(MPI_Comm comm, int nsenders);

/**
 * Apply rate_bps to this process's transport (the seed's MPI_Attr_put of
 * YAMPI_PSP_MATB).  Does not need SDP_PACE_MAXRATE.
 *
 * @param rate_bps  bit/s, 0 = unpaced; the transport checks the upper limit.
 * @return MPI_SUCCESS, MPI_ERR_COMM, MPI_ERR_ARG (transport rejected the
 *   rate), or MPI_ERR_OTHER (transport not loaded or failed).
 */
int sdp_pace_set_matb(MPI_Comm comm, uint64_t rate_bps);

/**
 * Read this process's current rate from the transport, bit/s (0 = unpaced).
 * @return MPI_SUCCESS, MPI_ERR_COMM, MPI_ERR_ARG (rate_bps_p NULL), or
 *   MPI_ERR_OTHER (transport not loaded).
 */
int sdp_pace_get_matb(MPI_Comm comm, uint64_t *rate_bps_p);

/**
 * Pace each destination without a rate of its own at rate_bps (0: no
 * per-destination pacing), under the process's total rate.  For patterns
 * where every receiver has its own bottleneck (an all-to-all between
 * hosts on their own links): B/N per destination.  Not mirrored in the
 * MATB attribute (that is the total).
 *
 * @return MPI_SUCCESS, MPI_ERR_COMM, MPI_ERR_ARG (transport rejected the
 *   rate), or MPI_ERR_OTHER (transport not loaded, or without
 *   per-destination pacing; logged once).
 */
int sdp_pace_set_dest_matb(MPI_Comm comm, uint64_t rate_bps);

/**
 * Read the per-destination default rate, bit/s (0 = none).
 * @return as sdp_pace_get_matb().
 */
int sdp_pace_get_dest_matb(MPI_Comm comm, uint64_t *rate_bps_p);

/**
 * B from SDP_PACE_MAXRATE, bit/s (parsed once per process).
 * @return MPI_SUCCESS, MPI_ERR_ARG (rate_bps_p NULL), or MPI_ERR_OTHER
 *   (unset, malformed or 0).
 */
int sdp_pace_get_maxrate(uint64_t *rate_bps_p);

/**
 * MATB for a pattern and N senders from B, without applying it; rounded
 * down (pace_matb_rate_bps()).  B = 10G, N = 32: B_N 312500000, B_HALF_N
 * 625000000, B_2SQRT_2N 625000000, B_2N 156250000.
 *
 * @param pattern  enum sdp_pace_pattern.
 * @param nodes    N, >= 1 (>= 2 for B_HALF_N).
 * @return MPI_SUCCESS, MPI_ERR_ARG (bad pattern, N, NULL rate_bps_p, or a
 *   MATB of 0), or MPI_ERR_OTHER (SDP_PACE_MAXRATE unset, malformed or 0).
 */
int sdp_pace_matb_bps(int pattern, int nodes, uint64_t *rate_bps_p);

/**
 * Keyval of the B attribute (seed: YAMPI_PSP_MAXRATE); created on first
 * call, attached to MPI_COMM_WORLD and MPI_COMM_SELF when B is set.
 * @return the keyval, or MPI_KEYVAL_INVALID (logged) if it cannot be
 *   created.
 */
int sdp_pace_keyval_maxrate(void);

/**
 * Keyval of the MATB attribute (seed: YAMPI_PSP_MATB); created on first
 * call, attached to MPI_COMM_WORLD and MPI_COMM_SELF.  Read-only: see the
 * file comment.
 * @return the keyval, or MPI_KEYVAL_INVALID (logged).
 */
int sdp_pace_keyval_matb(void);

#endif /* SDP_PACE_NO_MPI */

#ifdef __cplusplus
}
#endif

#endif /* SDP_PACE_MPI_H */
