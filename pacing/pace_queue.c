/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pace_queue.c - per-TX-queue pacing state: the next-departure deadline (or
 * the gap owed), carried fractions, run-time rate changes and counters.
 *
 * Invariants:
 *  - next_tsc is compared only through signed differences, as the kernel's
 *    time_after(): the TSC may wrap and the pacer does not care, as long as
 *    deadlines stay within 2^63 cycles of now.
 *  - tsc_residual and gap_residual hold the fraction (2^-64 units) not yet
 *    scheduled; summed over any run, the scheduled time or gap equals the
 *    exact product rounded down once, so long runs do not drift.
 *  - In GAP mode and when unpaced, next_tsc follows the last send time so
 *    pace_port_any_due() and a later switch to a paced rate stay sensible.
 *  - Only pending_rate_bps is shared between threads: the control thread
 *    stores it (release), the owning lcore exchanges it (acquire) in
 *    pace_queue_sync(); everything else belongs to the owning lcore.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "pace_internal.h"

/* C++ sees pending_rate_bps as a plain uint64_t: keep the layouts equal. */
_Static_assert(sizeof(_Atomic uint64_t) == sizeof(uint64_t),
	       "atomic u64 size differs from u64");
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "atomic u64 is not lock-free");
_Static_assert(sizeof(struct pace_queue) == 4 * 64,
	       "pace_queue is four cache lines");
_Static_assert(offsetof(struct pace_queue, stats) == 2 * 64,
	       "counters start the third cache line");
_Static_assert(offsetof(struct pace_queue, pending_rate_bps) == 3 * 64,
	       "the rate mailbox has the fourth cache line to itself");

static void queue_apply_rate(struct pace_queue *q, uint64_t rate_bps)
{
	struct pace_rate_fp rate;

	pace_rate_precompute(q->profile, rate_bps, &rate);
	q->rate_bps = rate.rate_bps;
	q->tsc_per_byte = rate.tsc_per_byte;
	q->tsc_per_byte_frac = rate.tsc_per_byte_frac;
	q->gap_per_byte = rate.gap_per_byte;
	q->gap_per_byte_frac = rate.gap_per_byte_frac;
}

int pace_queue_init(struct pace_queue *q, const struct pace_profile *profile,
		    uint64_t now_tsc)
{
	if (q == NULL || profile == NULL) {
		SDP_LOG(ERR, PACE, "queue init: queue %p or profile %p is NULL",
			(void *)q, (const void *)profile);
		return -EINVAL;
	}
	if (profile->mode != PACE_MODE_DEADLINE &&
	    profile->mode != PACE_MODE_GAP) {
		SDP_LOG(ERR, PACE,
			"queue init: profile mode %s (%d) is not deadline or "
			"gap; initialise the profile with pace_profile_init()",
			pace_mode_name(profile->mode), (int)profile->mode);
		return -EINVAL;
	}
	memset(q, 0, sizeof(*q));
	q->next_tsc = now_tsc;
	q->max_gap_tsc = profile->max_gap_tsc;
	q->max_gap_bytes = profile->max_gap_bytes;
	q->gap_wire_max_bytes = profile->gap_wire_max_bytes;
	q->mode = profile->mode;
	q->profile = profile;
	queue_apply_rate(q, profile->initial.rate_bps);
	atomic_init(&q->pending_rate_bps, PACE_RATE_NONE);
	return 0;
}

int pace_queue_set_rate_bps(struct pace_queue *q, uint64_t rate_bps)
{
	if (q == NULL) {
		SDP_LOG(ERR, PACE, "set rate: queue is NULL");
		return -EINVAL;
	}
	if (rate_bps > q->profile->link_rate_bps) {
		SDP_LOG(ERR, PACE,
			"queue rate_bps %" PRIu64 " is above link_rate_bps %" PRIu64
			"; lower the rate (e.g. an MATB from pace_matb_rate_bps), "
			"or use 0 for unpaced",
			rate_bps, q->profile->link_rate_bps);
		return -EINVAL;
	}
	atomic_store_explicit(&q->pending_rate_bps, rate_bps,
			      memory_order_release);
	return 0;
}

int pace_queue_sync(struct pace_queue *q)
{
	uint64_t rate_bps;

	/* The common case is one relaxed load of a line nobody else writes. */
	if (likely(atomic_load_explicit(&q->pending_rate_bps,
					memory_order_relaxed) == PACE_RATE_NONE))
		return 0;
	rate_bps = atomic_exchange_explicit(&q->pending_rate_bps,
					    PACE_RATE_NONE,
					    memory_order_acquire);
	if (rate_bps == PACE_RATE_NONE)
		return 0;
	queue_apply_rate(q, rate_bps);
	q->debt_tsc = 0; /* owed at the old rate: void */
	q->stats.rate_changes++;
	return 1;
}

/*
 * DEADLINE mode, after fq_dequeue: a frame sent on time (or early) moves the
 * deadline by exactly its interval, so the schedule is the exact rational
 * one.  A late frame restarts from now, minus at most half an interval of
 * credit: a late poll does not burst to catch up.  When the queue was
 * backlogged (pace_frame_sent_backlogged) the lateness beyond the credit is
 * debt, paid back by gaps up to a quarter shorter while on time: the
 * long-run rate stays on target, the instantaneous one within 4/3 of it.
 */
static void deadline_frame_sent(struct pace_queue *q, uint32_t wire_bytes,
				uint64_t now_tsc, bool backlogged)
{
	uint64_t interval_tsc, credit_tsc, pay_tsc;
	int64_t late_tsc;

	interval_tsc = pace_fp_mul(wire_bytes, q->tsc_per_byte,
				   q->tsc_per_byte_frac, &q->tsc_residual);
	if (unlikely(interval_tsc > q->max_gap_tsc)) {
		interval_tsc = q->max_gap_tsc;
		q->stats.clamps++;
	}
	late_tsc = (int64_t)(now_tsc - q->next_tsc);
	if (late_tsc <= 0) {
		/* on time: pay back debt, at most a quarter of a gap */
		pay_tsc = interval_tsc >> 2;
		if (pay_tsc > q->debt_tsc)
			pay_tsc = q->debt_tsc;
		if (pay_tsc != 0) {
			q->debt_tsc -= pay_tsc;
			q->stats.catchups++;
		}
		q->next_tsc += interval_tsc - pay_tsc;
		return;
	}
	credit_tsc = interval_tsc >> 1;
	if ((uint64_t)late_tsc > credit_tsc) {
		q->stats.late_polls++;
		if (backlogged) {
			q->debt_tsc += (uint64_t)late_tsc - credit_tsc;
			if (q->debt_tsc > q->max_gap_tsc)
				q->debt_tsc = q->max_gap_tsc;
		}
	} else {
		credit_tsc = (uint64_t)late_tsc;
	}
	q->next_tsc = now_tsc + interval_tsc - credit_tsc;
}

/* GAP mode: the gap is owed in wire bytes, planned by pace_gap_plan(). */
static void gap_frame_sent(struct pace_queue *q, uint32_t wire_bytes,
			   uint64_t now_tsc)
{
	uint64_t gap_bytes;

	gap_bytes = pace_fp_mul(wire_bytes, q->gap_per_byte,
				q->gap_per_byte_frac, &q->gap_residual);
	if (unlikely(gap_bytes > q->max_gap_bytes)) {
		gap_bytes = q->max_gap_bytes;
		q->stats.clamps++;
	}
	q->gap_debt_bytes += gap_bytes;
	q->next_tsc = now_tsc;
}

static void frame_sent(struct pace_queue *q, uint32_t frame_bytes,
		       uint64_t now_tsc, bool backlogged)
{
	uint32_t wire_bytes;

	SDP_ASSERT(frame_bytes <= PACE_FRAME_MAX_BYTES);
	wire_bytes = pace_wire_bytes(frame_bytes);
	q->stats.frames++;
	q->stats.wire_bytes += wire_bytes;
	if (q->rate_bps == 0)
		q->next_tsc = now_tsc;
	else if (q->mode == PACE_MODE_GAP)
		gap_frame_sent(q, wire_bytes, now_tsc);
	else
		deadline_frame_sent(q, wire_bytes, now_tsc, backlogged);
}

void pace_frame_sent(struct pace_queue *q, uint32_t frame_bytes,
		     uint64_t now_tsc)
{
	frame_sent(q, frame_bytes, now_tsc, false);
	/* the queue was idle: lost time is not owed any more */
	q->debt_tsc = 0;
}

void pace_frame_sent_backlogged(struct pace_queue *q, uint32_t frame_bytes,
				uint64_t now_tsc)
{
	frame_sent(q, frame_bytes, now_tsc, true);
}

void pace_queue_stats_get(const struct pace_queue *q,
			  struct pace_stats *stats_p)
{
	*stats_p = q->stats;
}
