/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pace_internal.h - shared by pacing's .c files and its unit test only:
 * 64.64 fixed-point arithmetic, the rate mailbox sentinel, the PAUSE frame
 * layout and the rate precomputation.
 */
#ifndef PACE_INTERNAL_H
#define PACE_INTERNAL_H

#include <stdint.h>

#include "pace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* GCC/Clang 128-bit integers: config-time division, per-frame 64x64 mul. */
__extension__ typedef unsigned __int128 pace_u128;

/* pending_rate_bps when no rate is waiting; above any valid rate. */
#define PACE_RATE_NONE UINT64_MAX

/*
 * 802.3x PAUSE frame as written on the wire (no FCS).  Big-endian fields;
 * the padding up to 60 bytes follows.
 */
struct pace_pause_hdr {
	uint8_t dst_addr[6];	/* 01:80:C2:00:00:01 */
	uint8_t src_addr[6];	/* sending port's MAC */
	uint16_t ether_type_be; /* 0x8808, MAC control */
	uint16_t opcode_be;	/* PACE_GAP_OPCODE (never PAUSE) */
	uint16_t quanta_be;	/* PAUSE's pause time field; 0 */
} __attribute__((packed));

/*
 * n * (whole + frac / 2^64) + *residual / 2^64, returning the integer part
 * and keeping the fraction in *residual, so that the sum over any sequence
 * of calls is floor(sum n * factor): nothing is lost between calls.
 * n < 2^17 and whole < 2^44 (the configuration limits) keep this in 64 bits.
 */
static inline uint64_t pace_fp_mul(uint64_t n, uint64_t whole, uint64_t frac,
				   uint64_t *residual)
{
	pace_u128 f = (pace_u128)n * frac + *residual;

	*residual = (uint64_t)f;
	return n * whole + (uint64_t)(f >> 64);
}

/* num / den as 64.64 fixed point, rounded down; den != 0. */
static inline void pace_fp_div(uint64_t num, uint64_t den, uint64_t *whole_p,
			       uint64_t *frac_p)
{
	*whole_p = num / den;
	*frac_p = (uint64_t)(((pace_u128)(num % den) << 64) / den);
}

/*
 * Precompute the per-wire-byte factors of rate_bps on profile's link:
 * TSC cycles per byte (8 * tsc_hz / rate) and gap bytes per byte
 * ((link - rate) / rate).  rate_bps 0 gives all zero (unpaced).  rate_bps
 * must already be validated (<= link rate).
 */
void pace_rate_precompute(const struct pace_profile *profile,
			  uint64_t rate_bps, struct pace_rate_fp *rate_p);

/*
 * Per-destination scheduler (pace_fq.c).  Flows and frame slots are
 * indices into arrays allocated at creation; PACE_FQ_NIL ends every list.
 * Flow 0 holds frames without a destination (never paced per
 * destination), flow 1 is the shared overflow flow (default rate), flows
 * 2 .. max_flows + 1 are the table, chained by hash of the destination.
 */
#define PACE_FQ_NIL UINT32_MAX
#define PACE_FQ_FLOW_NODEST 0u
#define PACE_FQ_FLOW_OVERFLOW 1u
#define PACE_FQ_FLOW_FIRST 2u

struct pace_fq_flow {
	uint64_t next_tsc;	  /* earliest next departure, TSC */
	uint64_t tsc_residual;	  /* carried fraction, 2^-64 cycle */
	struct pace_rate_fp rate; /* own rate (own_rate set) */
	uint32_t limit_frames;	  /* own rate's queue bound, frames */
	uint32_t dest;		  /* key */
	uint32_t head;		  /* first queued slot, or NIL */
	uint32_t tail;		  /* last queued slot, or NIL */
	uint32_t nb_frames;	  /* queued frames */
	uint32_t hash_next;	  /* next flow in bucket, or in the free list */
	uint32_t active_next;	  /* next flow with frames (round robin) */
	uint8_t in_use;		  /* in the table */
	uint8_t own_rate;	  /* rate set for this destination */
	uint8_t active;		  /* on the round-robin list */
	uint8_t fresh;		  /* no frame sent yet: no late credit */
};

struct pace_fq {
	const struct pace_profile *profile; /* clock and link */
	struct pace_fq_flow *flows;	    /* max_flows + 2 */
	uint32_t *buckets;		    /* hash heads, bucket_mask + 1 */
	uint32_t bucket_mask;
	uint32_t max_flows;		    /* table bound */
	uint32_t nb_flows;		    /* table entries in use */
	uint32_t free_flow;		    /* free table entries */
	void **slot_frame;		    /* max_frames: queued frames */
	uint32_t *slot_next;		    /* next slot in flow / free list */
	uint32_t *slot_bytes;		    /* frame_bytes of each slot */
	uint32_t free_slot;		    /* free slots */
	uint32_t max_frames;		    /* slots */
	uint32_t nb_frames;		    /* queued, all flows */
	uint32_t active_head;		    /* round robin of flows w/ frames */
	uint32_t active_tail;
	uint32_t nb_own_paced;		    /* flows with own rate != 0 */
	struct pace_rate_fp default_rate;   /* destinations without own */
	uint32_t default_limit_frames;	    /* its queue bound, frames */
	uint64_t flow_queue_ns;		    /* cfg */
	uint32_t full_wire_bytes;	    /* wire bytes of a full frame */
	uint64_t earliest_tsc;		    /* min next_tsc of active, lower
					     * bound */
	uint64_t last_now_tsc;		    /* now_tsc of the last call */
	uint8_t earliest_stale;		    /* a rate changed: rescan */
	struct pace_fq_stats stats;
};

#ifdef __cplusplus
}
#endif

#endif /* PACE_INTERNAL_H */
