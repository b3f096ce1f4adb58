/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pace.h - the per-TX-queue pacer: the only header other components include.
 *
 * One pacer per TX queue, no token bucket.  Each queue has a target rate and
 * knows its link rate; after every real frame it schedules the gap the
 * target rate requires, computed from the frame's wire size (preamble 8 +
 * frame + FCS 4 + inter-frame gap 12, short frames padded to the minimum).
 * Two ways to realise the gap, chosen per port by the caller:
 *
 *   GAP mode (physical NICs, after PSPacer): the gap is filled with 802.3
 *   MAC Control frames of an opcode no MAC implements (PSPacer used PAUSE
 *   with pause time 0, which is an XON), which the next switch discards.  The
 *   NIC sends back to back at link rate, so the gap frames set the spacing
 *   and no clock is needed:
 *     gap_bytes = wire_bytes(frame) * (link_rate / target_rate - 1)
 *
 *   DEADLINE mode (virtual links, where a gap frame costs no wire time):
 *   each queue holds its next departure time on the TSC, like Linux sch_fq's
 *   time_next_packet:
 *     next_tsc = previous next_tsc + wire_bytes * 8 / target_rate  (in TSC)
 *
 * Everything is pure logic: time (now_tsc) and lengths are arguments, there
 * are no DPDK or usrsctp calls.  Per-frame work is integer only; rates are
 * turned into 64.64 fixed-point factors when a rate is configured, and the
 * fractional remainders are carried forward, so the schedule never drifts.
 *
 * TX burst loop (one owning lcore per queue):
 *
 *   now_tsc = rte_rdtsc();                    read the clock once
 *   pace_queue_sync(q);                       apply a published rate
 *   for each frame:
 *       if (!pace_may_send(q, now_tsc)) break;
 *       send frame; pace_frame_sent(q, frame_bytes, now_tsc);
 *       GAP mode: n = pace_gap_plan(q, sizes, N);
 *                 pace_gap_frame_build() each size, send them in order
 *   pace_port_refresh(port);                  earliest deadline for idling
 *
 * Lengths called frame_bytes are Ethernet frames from the destination MAC to
 * the end of the payload, without FCS (what the NIC is handed: the mbuf's
 * pkt_len).  Lengths called wire_bytes include preamble, padding, FCS and
 * inter-frame gap.
 */
#ifndef PACE_H
#define PACE_H

#include <stdint.h>

#include "sdp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Ethernet framing overheads, bytes. */
#define PACE_PREAMBLE_BYTES 8u	/* preamble + start-of-frame delimiter */
#define PACE_FCS_BYTES 4u	/* frame check sequence */
#define PACE_IFG_BYTES 12u	/* minimum inter-frame gap */
#define PACE_FRAME_MIN_BYTES 60u /* shortest frame w/o FCS; shorter is padded */
#define PACE_FRAME_MAX_BYTES 65535u /* longest frame_bytes pace_* accept */
#define PACE_WIRE_OVERHEAD_BYTES                                              \
	(PACE_PREAMBLE_BYTES + PACE_FCS_BYTES + PACE_IFG_BYTES)
/* Smallest gap a gap frame can fill: a 64-byte frame (with FCS) on the wire. */
#define PACE_GAP_MIN_WIRE_BYTES                                               \
	(PACE_FRAME_MIN_BYTES + PACE_WIRE_OVERHEAD_BYTES)

/* Configuration limits; beyond them the fixed-point products could overflow. */
#define PACE_TSC_HZ_MAX UINT64_C(100000000000)		/* 100 GHz */
#define PACE_RATE_MAX_BPS UINT64_C(10000000000000)	/* 10 Tbit/s */
#define PACE_MAX_GAP_MIN_NS UINT64_C(1000)		/* 1 us */
#define PACE_MAX_GAP_MAX_NS UINT64_C(10000000000)	/* 10 s */
#define PACE_MAX_GAP_DEFAULT_NS UINT64_C(1000000000)	/* 1 s, as sch_fq */
#define PACE_GAP_FRAME_MIN_BYTES 64u	/* legal gap frame sizes, with FCS */
#define PACE_GAP_FRAME_MAX_BYTES 9018u	/* jumbo: 9000 MTU + 14 + 4 */
#define PACE_GAP_FRAME_DEFAULT_BYTES 1518u

/* PAUSE frame (IEEE 802.3x MAC control) used as a gap frame. */
#define PACE_PAUSE_ETHER_TYPE 0x8808u
#define PACE_PAUSE_OPCODE 0x0001u /* never sent: see PACE_GAP_OPCODE */
/* Opcode of a gap frame: a MAC Control opcode no MAC implements (IEEE
 * 802.3 Annex 31A reserves 0x0000), so the receiving port discards the
 * frame without acting on it.  Never PAUSE: a PAUSE with pause time 0 is
 * an XON, which would end a pause this port's own flow control asked of
 * its link partner (its RX ring full), and overrun it. */
#define PACE_GAP_OPCODE 0x0000u
#define PACE_PAUSE_HDR_BYTES 18u /* dst, src, ether type, opcode, quanta */

/*
 * How a port realises gaps.  AUTO is for configuration text only: the caller
 * resolves it (GAP on physical NICs, DEADLINE on virtual links) before
 * pace_profile_init(), which rejects it.
 */
enum pace_mode {
	PACE_MODE_AUTO = 0,
	PACE_MODE_DEADLINE,
	PACE_MODE_GAP,
};

/* Raw, user-facing configuration of one port; see pace_config_default(). */
struct pace_config {
	uint64_t tsc_hz;	       /* TSC frequency, cycles/s; 1..100 G */
	uint64_t link_rate_bps;	       /* link speed, bit/s; 1..10 T */
	uint64_t target_rate_bps;      /* initial queue rate, bit/s; 0 unpaced */
	uint64_t max_gap_ns;	       /* gap clamp, ns; 1 us..10 s */
	uint32_t gap_frame_max_bytes;  /* largest gap frame with FCS; 64..9018 */
	enum pace_mode mode;	       /* DEADLINE or GAP, never AUTO */
};

/* One rate as 64.64 fixed-point factors per wire byte. */
struct pace_rate_fp {
	uint64_t rate_bps;	  /* target rate, bit/s; 0 unpaced */
	uint64_t tsc_per_byte;	  /* TSC cycles per wire byte, integer part */
	uint64_t tsc_per_byte_frac; /* ... fraction, units of 2^-64 cycle */
	uint64_t gap_per_byte;	  /* gap wire bytes per frame wire byte, int */
	uint64_t gap_per_byte_frac; /* ... fraction, units of 2^-64 byte */
};

/* Validated, precomputed configuration; read-only once initialised. */
struct pace_profile {
	uint64_t tsc_hz;	    /* TSC frequency, cycles/s */
	uint64_t link_rate_bps;	    /* link speed, bit/s */
	uint64_t max_gap_tsc;	    /* deadline-mode gap clamp, TSC cycles */
	uint64_t max_gap_bytes;	    /* gap-mode gap clamp, wire bytes */
	uint32_t gap_wire_max_bytes; /* largest gap frame on the wire, bytes */
	enum pace_mode mode;	    /* DEADLINE or GAP */
	struct pace_rate_fp initial; /* the configured target rate */
};

/* Per-queue counters; written by the owning lcore only. */
struct pace_stats {
	uint64_t frames;	 /* real frames sent */
	uint64_t wire_bytes;	 /* their wire bytes, bytes */
	uint64_t gap_frames;	 /* gap (PAUSE) frames planned */
	uint64_t gap_bytes;	 /* their wire bytes, bytes */
	uint64_t clamps;	 /* gaps cut to the configured maximum */
	uint64_t late_polls;	 /* sends whose catch-up was limited */
	uint64_t rate_changes;	 /* published rates applied by sync */
	uint64_t catchups;	 /* gaps shortened to pay back lost time */
};

/*
 * C code sees the rate mailbox as a C11 atomic.  C++ (the unit tests) sees
 * plain storage of the same size; only pacing's .c files touch the field,
 * and the field's own 64-byte alignment fixes the layout in both languages.
 */
#ifdef __cplusplus
#define PACE_ATOMIC_U64 uint64_t
#else
#define PACE_ATOMIC_U64 _Atomic uint64_t
#endif

/*
 * Per-queue pacer state.  Owned by one TX lcore; the only field another
 * thread writes is pending_rate_bps, on its own cache line.
 */
struct pace_queue {
	/* First cache line: read and written for every frame. */
	uint64_t next_tsc;	   /* earliest next departure, TSC; wraps */
	uint64_t tsc_residual;	   /* carried fraction, 2^-64 cycle */
	uint64_t gap_debt_bytes;   /* gap owed before the next frame, wire B */
	uint64_t gap_residual;	   /* carried fraction, 2^-64 byte */
	uint64_t tsc_per_byte;	   /* copy of rate.tsc_per_byte */
	uint64_t tsc_per_byte_frac; /* copy of rate.tsc_per_byte_frac */
	uint64_t gap_per_byte;	   /* copy of rate.gap_per_byte */
	uint64_t gap_per_byte_frac; /* copy of rate.gap_per_byte_frac */

	/* Second cache line: read for every frame, written on rate change. */
	uint64_t rate_bps __attribute__((aligned(64))); /* 0: unpaced */
	uint64_t max_gap_tsc;	   /* copy of profile->max_gap_tsc */
	uint64_t max_gap_bytes;	   /* copy of profile->max_gap_bytes */
	uint32_t gap_wire_max_bytes; /* copy of profile->gap_wire_max_bytes */
	enum pace_mode mode;	   /* copy of profile->mode */
	const struct pace_profile *profile; /* caller-owned, outlives queue */
	uint64_t debt_tsc;	   /* backlogged time lost to late polls, TSC */

	/* Third cache line: counters, written by the owning lcore. */
	struct pace_stats stats __attribute__((aligned(64)));

	/* Fourth cache line: written by the control thread, read per burst. */
	PACE_ATOMIC_U64 pending_rate_bps __attribute__((aligned(64)));
} __attribute__((aligned(64)));

/*
 * Earliest deadline among one port's queues, so the TX loop can tell in O(1)
 * whether any queue is due, and how long it may idle.
 */
struct pace_port {
	uint64_t earliest_tsc;	   /* min next_tsc over queues, TSC */
	struct pace_queue **queues; /* caller-owned array */
	uint16_t nb_queues;	   /* entries in queues */
};

/** Wire bytes of a frame of frame_bytes (no FCS): padding and overheads. */
static inline uint32_t pace_wire_bytes(uint32_t frame_bytes)
{
	if (frame_bytes < PACE_FRAME_MIN_BYTES)
		frame_bytes = PACE_FRAME_MIN_BYTES;
	return frame_bytes + PACE_WIRE_OVERHEAD_BYTES;
}

/*
 * Configuration: pace_profile.c
 */

/**
 * Fill cfg with defaults: max_gap_ns 1 s (as sch_fq), gap frames up to 1518
 * bytes, unpaced, mode AUTO.  tsc_hz, link_rate_bps and the mode must still
 * be set by the caller.
 */
void pace_config_default(struct pace_config *cfg);

/**
 * Validate cfg and precompute the fixed-point factors of its target rate.
 * Every bad field is logged once (field, value, limit, fix); nothing is
 * clamped.
 *
 * @param profile  Filled on success; must outlive every queue using it.
 * @param cfg      Raw configuration; mode must be DEADLINE or GAP.
 * @return 0, or -EINVAL if profile or cfg is NULL or any field is out of
 *   range (tsc_hz, link_rate_bps, target_rate_bps above the link rate,
 *   max_gap_ns, gap_frame_max_bytes, mode).
 */
int pace_profile_init(struct pace_profile *profile,
		      const struct pace_config *cfg);

/** Name of a mode: "auto", "deadline", "gap", or "?" for other values. */
const char *pace_mode_name(enum pace_mode mode);

/**
 * Parse "auto", "deadline" or "gap".
 * @return 0, or -EINVAL (logged) for any other text or NULL arguments.
 */
int pace_mode_parse(const char *text, enum pace_mode *mode_p);

/*
 * Per-queue pacing: pace_queue.c
 */

/**
 * Initialise q at the profile's target rate; the first frame may leave at
 * now_tsc.  Called by the control thread before the TX lcore starts.
 *
 * @return 0, or -EINVAL if q or profile is NULL or profile's mode is not
 *   DEADLINE or GAP (not initialised by pace_profile_init()).
 */
int pace_queue_init(struct pace_queue *q, const struct pace_profile *profile,
		    uint64_t now_tsc);

/**
 * Publish a new target rate for q.  Safe from any thread while the owning
 * lcore runs; takes effect at that lcore's next pace_queue_sync().  A later
 * publish before the sync replaces an earlier one.
 *
 * @param rate_bps  0 (unpaced) .. the profile's link rate, bit/s.
 * @return 0, or -EINVAL (logged) if q is NULL or rate_bps exceeds the link
 *   rate.
 */
int pace_queue_set_rate_bps(struct pace_queue *q, uint64_t rate_bps);

/**
 * Apply a rate published by pace_queue_set_rate_bps(), recomputing the
 * fixed-point factors.  Owning lcore only, once per burst.  The deadline
 * and gap already scheduled are kept; carried fractions are kept.
 *
 * @return 1 if a new rate was applied, 0 if none was pending.
 */
int pace_queue_sync(struct pace_queue *q);

/**
 * May q send a real frame at now_tsc?  DEADLINE mode: the deadline has
 * passed (wrap-safe).  GAP mode: no gap frame is owed (only a carried gap
 * shorter than one minimum frame remains).  Always true when unpaced.
 */
static inline int pace_may_send(const struct pace_queue *q, uint64_t now_tsc)
{
	if (q->mode == PACE_MODE_GAP)
		return q->gap_debt_bytes < PACE_GAP_MIN_WIRE_BYTES;
	return (int64_t)(now_tsc - q->next_tsc) >= 0;
}

/** Next departure time of q, TSC (now or earlier in GAP mode / unpaced). */
static inline uint64_t pace_queue_next_tsc(const struct pace_queue *q)
{
	return q->next_tsc;
}

/**
 * Account one real frame handed to the NIC at now_tsc and schedule the gap
 * it requires.  DEADLINE mode moves the deadline by the frame's wire time at
 * the target rate; if the poll came late, up to half that time is credited
 * back (as sch_fq's fq_dequeue) and a larger lateness counts a late poll.
 * GAP mode adds the frame's gap to the owed gap bytes.  Gaps above the
 * configured maximum are clamped and counted.  Owning lcore only.
 *
 * @param frame_bytes  Frame without FCS, at most PACE_FRAME_MAX_BYTES.
 */
void pace_frame_sent(struct pace_queue *q, uint32_t frame_bytes,
		     uint64_t now_tsc);

/**
 * As pace_frame_sent(), for a frame that was already waiting in the queue
 * when the previous one left (the queue is backlogged).  Then lateness
 * beyond the half-gap credit is not idle time but time the sender lost
 * (preempted, late poll): it is recorded as debt and paid back by making
 * the following gaps up to a quarter shorter (at most 4/3 of the rate, no
 * two frames closer than 3/4 of the gap), so the long-run rate stays on
 * target without a burst.  The debt is capped at the maximum gap.  After
 * the queue ran empty, use pace_frame_sent(): idle time is never paid back.
 */
void pace_frame_sent_backlogged(struct pace_queue *q, uint32_t frame_bytes,
				uint64_t now_tsc);

/** Copy q's counters into stats_p (approximate if q is in use). */
void pace_queue_stats_get(const struct pace_queue *q,
			  struct pace_stats *stats_p);

/*
 * Gap frames: pace_gap.c
 */

/**
 * Turn the gap q owes into gap frames of legal size (64 bytes to the
 * profile's gap_frame_max_bytes, with FCS), largest first, and remove them
 * from the debt.  Sizes are written as frame_bytes (without FCS, 60 ..
 * gap_frame_max_bytes - 4); their wire bytes add up to exactly the gap
 * removed.  A remainder shorter than one minimum frame stays owed and joins
 * the next frame's gap.  The caller must send every planned frame, in
 * order, before the next real frame.  Owning lcore only.
 *
 * @param frame_bytes  Output array of max_frames entries.
 * @return the number of frames planned (0 .. max_frames).
 */
uint16_t pace_gap_plan(struct pace_queue *q, uint16_t *frame_bytes,
		       uint16_t max_frames);

/**
 * Write a gap frame: a MAC Control frame to 01:80:C2:00:00:01, ether type
 * 0x8808, opcode PACE_GAP_OPCODE (not PAUSE), zero-padded to frame_bytes.
 * Not logged (called per frame).
 *
 * @param buf          Caller-owned, at least frame_bytes long.
 * @param frame_bytes  60 .. PACE_GAP_FRAME_MAX_BYTES - 4 (no FCS).
 * @param src_mac      The port's 6-byte MAC address.
 * @return 0, or -EINVAL if buf or src_mac is NULL, frame_bytes is out of
 *   range or buf_bytes < frame_bytes.
 */
int pace_gap_frame_build(void *buf, uint32_t buf_bytes, uint32_t frame_bytes,
			 const uint8_t src_mac[6]);

/**
 * Is this received frame a gap frame (MAC Control to 01:80:C2:00:00:01
 * with opcode PACE_GAP_OPCODE and zero parameters)?  Receivers drop and
 * count those.
 * @return 1 if so, 0 otherwise (also for NULL or len < 18).
 */
int pace_is_gap_frame(const void *buf, uint32_t len);

/*
 * Earliest deadline of a port: pace_port.c
 */

/**
 * Attach a port's queues (caller-owned array, initialised queues) and
 * compute the earliest deadline.
 * @return 0, or -EINVAL if port or queues is NULL, nb_queues is 0 or an
 *   entry is NULL.
 */
int pace_port_init(struct pace_port *port, struct pace_queue **queues,
		   uint16_t nb_queues);

/** Recompute the earliest deadline after a TX pass over the port. O(n). */
void pace_port_refresh(struct pace_port *port);

/** Is any queue of port due at now_tsc?  O(1), wrap-safe. */
static inline int pace_port_any_due(const struct pace_port *port,
				    uint64_t now_tsc)
{
	return (int64_t)(now_tsc - port->earliest_tsc) >= 0;
}

/*
 * Per-destination pacing: pace_fq.c
 *
 * A queue's frames wait in per-destination flows, each with its own rate
 * and next departure time, as sch_fq's per-flow time_next_packet; the
 * queue's total rate (struct pace_queue) still applies on top.  A frame
 * leaves when its flow is due and the caller's total pacer lets it; due
 * flows are served round robin, one frame each, so a throttled flow never
 * holds back another destination (per-destination FIFO order is kept).
 *
 * Destinations are opaque 32-bit keys (the dataplane uses the IPv4
 * destination in network order); PACE_FQ_DEST_NONE is for frames without
 * one (ARP) and for control frames the caller keeps out of per-destination
 * pacing (SCTP packets without DATA: SACKs, heartbeats, handshakes): they
 * are never paced per destination and leave before any other due frame,
 * as sch_fq's internal flow for TC_PRIO_CONTROL packets (the total rate
 * still applies).  The table is bounded
 * (max_flows): a destination with no rate of its own gets a flow at the
 * default rate on its first frame; when the table is full, an empty flow
 * whose deadline has passed (its state is then the same as a fresh one's)
 * is reclaimed, and if there is none the frame joins one shared overflow
 * flow at the default rate (counted).  Rates set for a destination stay
 * until set back to PACE_FQ_RATE_DEFAULT.
 *
 * Owning lcore only: every call, rate changes included (the dataplane
 * hands rates from other threads over through a ring).  Allocated once at
 * init; nothing is allocated per frame.
 */
#define PACE_FQ_DEST_NONE 0u			/* frames with no destination */
#define PACE_FQ_RATE_DEFAULT UINT64_MAX		/* rate: follow the default */
#define PACE_FQ_FLOWS_MAX 65536u		/* max_flows limit */
#define PACE_FQ_FRAMES_MAX (1u << 24)		/* max_frames limit */
#define PACE_FQ_FLOW_FRAMES_MIN 16u		/* smallest per-flow queue */

struct pace_fq;

/* Configuration of a per-destination scheduler. */
struct pace_fq_config {
	uint32_t max_flows;	    /* destinations with own state; 1..64 Ki */
	uint32_t max_frames;	    /* frames queued, all flows; 1..16 Mi */
	uint64_t default_rate_bps;  /* destinations without a rate; 0 = not
				     * paced per destination */
	uint64_t flow_queue_ns;	    /* a paced flow holds at most this much
				     * time of full frames (at least 16
				     * frames) before dropping; 0 = no bound
				     * but max_frames */
	uint32_t full_frame_bytes;  /* a full-size frame (MTU + 14), bytes,
				     * for flow_queue_ns; 60..65535 */
};

/* Counters of a per-destination scheduler; owning lcore only. */
struct pace_fq_stats {
	uint64_t frames_in;	   /* frames accepted */
	uint64_t frames_out;	   /* frames released */
	uint64_t flow_drops;	   /* refused: the flow's queue was full */
	uint64_t full_drops;	   /* refused: max_frames queued */
	uint64_t overflow_frames;  /* queued on the shared overflow flow */
	uint64_t flows_created;	   /* flows set up for a destination */
	uint64_t flows_reclaimed;  /* idle flows recycled when full */
	uint64_t throttled;	   /* dequeues that found no flow due */
	uint64_t clamps;	   /* per-flow gaps cut to max_gap */
	uint64_t late_polls;	   /* per-flow catch-ups limited */
};

/**
 * Create a scheduler on profile's clock and link (the profile must outlive
 * it).  Each bad field is logged once, naming it, its limit and the fix.
 *
 * @return 0, -EINVAL (NULL argument, a field out of range, default rate
 *   above the link), or -ENOMEM.
 */
int pace_fq_create(const struct pace_profile *profile,
		   const struct pace_fq_config *cfg, struct pace_fq **fq_p);

/** Free fq (NULL accepted).  Frames still queued are the caller's. */
void pace_fq_destroy(struct pace_fq *fq);

/**
 * Give destination dest its own rate, or PACE_FQ_RATE_DEFAULT to follow
 * the default again.  Kept departure time: a lower rate applies from the
 * next frame.
 *
 * @param rate_bps  0 (not paced per destination) .. link rate, or
 *   PACE_FQ_RATE_DEFAULT.
 * @return 0, -EINVAL (logged: fq NULL, dest PACE_FQ_DEST_NONE, rate above
 *   the link) or -ENOSPC (logged: max_flows destinations hold their own
 *   rate or frames; raise max_flows).
 */
int pace_fq_set_dest_rate_bps(struct pace_fq *fq, uint32_t dest,
			      uint64_t rate_bps);

/**
 * Rate of destinations without their own (0 = not paced per destination).
 * @return 0, or -EINVAL (logged) above the link rate.
 */
int pace_fq_set_default_rate_bps(struct pace_fq *fq, uint64_t rate_bps);

/** The rate dest's frames get now, bit/s (0: not paced per destination). */
uint64_t pace_fq_dest_rate_bps(const struct pace_fq *fq, uint32_t dest);

/** The default rate, bit/s. */
uint64_t pace_fq_default_rate_bps(const struct pace_fq *fq);

/** Does any destination have a non-zero rate (own or default)? */
int pace_fq_paced(const struct pace_fq *fq);

/**
 * Queue frame (opaque, caller-owned until dequeued) for dest.
 * @return 0, or -ENOBUFS (counted, not logged): max_frames queued, or the
 *   flow holds flow_queue_ns of frames at its rate.
 */
int pace_fq_enqueue(struct pace_fq *fq, uint32_t dest, void *frame,
		    uint32_t frame_bytes, uint64_t now_tsc);

/**
 * The next frame whose destination is due at now_tsc (round robin over
 * due flows), charged to its flow: the flow's next departure moves by the
 * frame's wire time at the flow's rate (late polls: at most half a gap of
 * credit, as pace_frame_sent()).  The caller applies the total rate
 * before calling, and must send what it gets.
 *
 * @return the frame (its length in *frame_bytes_p), or NULL if no queued
 *   frame is due.
 */
void *pace_fq_dequeue(struct pace_fq *fq, uint64_t now_tsc,
		      uint32_t *frame_bytes_p);

/** Take any queued frame regardless of time (teardown); NULL when empty. */
void *pace_fq_purge_one(struct pace_fq *fq);

/** Frames queued over all flows. */
uint32_t pace_fq_frames(const struct pace_fq *fq);

/** Frames queued without a destination (PACE_FQ_DEST_NONE). */
uint32_t pace_fq_control_frames(const struct pace_fq *fq);

/**
 * Earliest departure among flows with frames, TSC (a lower bound: it may
 * be stale towards earlier); meaningless when pace_fq_frames() is 0.
 */
uint64_t pace_fq_next_tsc(const struct pace_fq *fq);

/** Copy fq's counters. */
void pace_fq_stats_get(const struct pace_fq *fq,
		       struct pace_fq_stats *stats_p);

/*
 * MATB (maximum allowed transfer bandwidth, seed 001 Table I): pace_matb.c
 */

/* B is the inter-cluster bandwidth, N the nodes per cluster. */
enum pace_matb_pattern {
	PACE_MATB_B_N = 0,    /* B/N: all-to-all; NPB LU, MG, FT, IS */
	PACE_MATB_B_HALF_N,   /* B/(N/2): NPB CG */
	PACE_MATB_B_2SQRT_2N, /* B/(2*sqrt(2N)): NPB BT, SP */
	PACE_MATB_B_2N,	      /* B/2N: avoids incast at the receiver switch */
};

/**
 * MATB for a communication pattern, rounded down to whole bit/s (never
 * above the exact value).
 *
 * @param link_rate_bps  B, bit/s: 1 .. PACE_RATE_MAX_BPS.
 * @param nodes          N, nodes per cluster: at least 1.
 * @return 0, -EINVAL (logged) for NULL rate_bps_p, an unknown pattern,
 *   N = 0 or B out of range, or -ERANGE (logged) if the result is 0 or
 *   above B (CG with N = 1).
 */
int pace_matb_rate_bps(enum pace_matb_pattern pattern, uint64_t link_rate_bps,
		       uint32_t nodes, uint64_t *rate_bps_p);

/*
 * Rate text: pace_rate.c
 */

/**
 * Parse a rate in bit/s with an optional SI suffix: "1G" = 10^9, "500M",
 * "10m" (m and M both mean 10^6), "100k", "0" (unpaced).  Digits only (no
 * sign, spaces, fraction, hex or leading zeros).
 *
 * @return 0, or -EINVAL (logged, naming the text and the accepted form) if
 *   the text is malformed, overflows or exceeds PACE_RATE_MAX_BPS.
 */
int pace_rate_parse(const char *text, uint64_t *rate_bps_p);

#ifdef __cplusplus
}
#endif

#endif /* PACE_H */
