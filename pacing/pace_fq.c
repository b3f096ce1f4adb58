/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pace_fq.c - per-destination pacing under a queue's total rate, after
 * Linux sch_fq: each destination is a flow with its own queue of frames and
 * its own next departure time (sch_fq's time_next_packet); due flows are
 * served round robin, one frame per turn.
 *
 *   enqueue(dest) -> lookup -(miss)-> new flow at the default rate
 *                           -(table full)-> reclaim an idle flow
 *                                           -(none)-> shared overflow flow
 *   dequeue(now)  -> walk the round-robin list from its head: the first
 *                    flow due gives its oldest frame and goes to the tail
 *
 * Why seed 001 needs it: in an all-to-all every receiver has its own
 * bottleneck; a total rate of B/N per process leaves each receiver only
 * B/N in all.  Pacing each destination at B/N fills each receiver link to
 * (N-1)/N of B while no destination gets a burst above its share.
 *
 * Invariants:
 *  - next_tsc is compared through signed differences only (wrap-safe).
 *  - A flow is on the round-robin list iff it holds frames (active).
 *  - A table flow without its own rate, with no frames and a deadline
 *    that has passed, is equivalent to a fresh flow: only such flows are
 *    reclaimed, so reclaiming never lets a frame leave early.
 *  - earliest_tsc is a lower bound on the deadlines of active flows:
 *    sending only moves a deadline later, so a stale value errs towards a
 *    scan that finds nothing due, never towards holding a due frame.
 *
 * Cost: O(1) enqueue (hash chain), dequeue O(active flows) when some are
 * throttled (sch_fq keeps throttled flows in an rb-tree; the flows active
 * at once here are the peers of one collective, and the earliest-deadline
 * cache makes a poll with nothing due O(1)).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "pace_internal.h"

#define NS_PER_S UINT64_C(1000000000)

static uint32_t fq_hash(uint32_t dest)
{
	/* Fibonacci hashing: IPv4 addresses differ mostly in a few bits */
	return (uint32_t)(((uint64_t)dest * UINT64_C(0x9E3779B97F4A7C15)) >>
			  32);
}

/* Frames a flow at rate_bps may hold: flow_queue_ns of full frames. */
static uint32_t fq_limit_frames(const struct pace_fq *fq, uint64_t rate_bps)
{
	pace_u128 n;

	if (rate_bps == 0 || fq->flow_queue_ns == 0)
		return fq->max_frames;
	n = (pace_u128)rate_bps * fq->flow_queue_ns /
	    ((pace_u128)NS_PER_S * 8 * fq->full_wire_bytes);
	if (n < PACE_FQ_FLOW_FRAMES_MIN)
		n = PACE_FQ_FLOW_FRAMES_MIN;
	if (n > fq->max_frames)
		n = fq->max_frames;
	return (uint32_t)n;
}

static const struct pace_rate_fp *flow_rate(const struct pace_fq *fq,
					    const struct pace_fq_flow *f)
{
	static const struct pace_rate_fp unpaced;

	if (f->own_rate)
		return &f->rate;
	if (f == &fq->flows[PACE_FQ_FLOW_NODEST])
		return &unpaced;
	return &fq->default_rate;
}

static uint32_t flow_limit(const struct pace_fq *fq,
			   const struct pace_fq_flow *f)
{
	if (f->own_rate)
		return f->limit_frames;
	if (f == &fq->flows[PACE_FQ_FLOW_NODEST])
		return fq->max_frames;
	return fq->default_limit_frames;
}

static int check_config(const struct pace_profile *profile,
			const struct pace_fq_config *cfg)
{
	int ret = 0;

	if (cfg->max_flows == 0 || cfg->max_flows > PACE_FQ_FLOWS_MAX) {
		SDP_LOG(ERR, PACE, "fq max_flows %u is outside 1..%u; set the "
			"number of destinations to pace separately",
			cfg->max_flows, PACE_FQ_FLOWS_MAX);
		ret = -EINVAL;
	}
	if (cfg->max_frames == 0 || cfg->max_frames > PACE_FQ_FRAMES_MAX) {
		SDP_LOG(ERR, PACE, "fq max_frames %u is outside 1..%u; set the "
			"frames the pacer may hold", cfg->max_frames,
			PACE_FQ_FRAMES_MAX);
		ret = -EINVAL;
	}
	if (cfg->default_rate_bps > profile->link_rate_bps) {
		SDP_LOG(ERR, PACE, "fq default_rate_bps %" PRIu64 " is above "
			"link_rate_bps %" PRIu64 "; lower it, or 0 for no "
			"per-destination pacing", cfg->default_rate_bps,
			profile->link_rate_bps);
		ret = -EINVAL;
	}
	if (cfg->flow_queue_ns > PACE_MAX_GAP_MAX_NS) {
		SDP_LOG(ERR, PACE, "fq flow_queue_ns %" PRIu64 " is above %"
			PRIu64 "; use a queue of at most 10 s, or 0 for none",
			cfg->flow_queue_ns, PACE_MAX_GAP_MAX_NS);
		ret = -EINVAL;
	}
	if (cfg->full_frame_bytes < PACE_FRAME_MIN_BYTES ||
	    cfg->full_frame_bytes > PACE_FRAME_MAX_BYTES) {
		SDP_LOG(ERR, PACE, "fq full_frame_bytes %u is outside %u..%u; "
			"pass the MTU plus the 14-byte Ethernet header",
			cfg->full_frame_bytes, PACE_FRAME_MIN_BYTES,
			PACE_FRAME_MAX_BYTES);
		ret = -EINVAL;
	}
	return ret;
}

int pace_fq_create(const struct pace_profile *profile,
		   const struct pace_fq_config *cfg, struct pace_fq **fq_p)
{
	struct pace_fq *fq;
	uint32_t i, nb_buckets = 1;

	if (profile == NULL || cfg == NULL || fq_p == NULL) {
		SDP_LOG(ERR, PACE, "fq create: profile %p, cfg %p or fq_p %p "
			"is NULL", (const void *)profile, (const void *)cfg,
			(void *)fq_p);
		return -EINVAL;
	}
	if (check_config(profile, cfg) != 0)
		return -EINVAL;
	while (nb_buckets < cfg->max_flows)
		nb_buckets <<= 1;
	fq = calloc(1, sizeof(*fq));
	if (fq == NULL)
		return -ENOMEM;
	fq->flows = calloc(cfg->max_flows + PACE_FQ_FLOW_FIRST,
			   sizeof(*fq->flows));
	fq->buckets = malloc(nb_buckets * sizeof(*fq->buckets));
	fq->slot_frame = calloc(cfg->max_frames, sizeof(*fq->slot_frame));
	fq->slot_next = malloc(cfg->max_frames * sizeof(*fq->slot_next));
	fq->slot_bytes = malloc(cfg->max_frames * sizeof(*fq->slot_bytes));
	if (fq->flows == NULL || fq->buckets == NULL ||
	    fq->slot_frame == NULL || fq->slot_next == NULL ||
	    fq->slot_bytes == NULL) {
		pace_fq_destroy(fq);
		return -ENOMEM;
	}
	fq->profile = profile;
	fq->bucket_mask = nb_buckets - 1;
	for (i = 0; i < nb_buckets; i++)
		fq->buckets[i] = PACE_FQ_NIL;
	fq->max_flows = cfg->max_flows;
	for (i = 0; i < cfg->max_flows + PACE_FQ_FLOW_FIRST; i++) {
		fq->flows[i].head = PACE_FQ_NIL;
		fq->flows[i].tail = PACE_FQ_NIL;
		fq->flows[i].active_next = PACE_FQ_NIL;
		fq->flows[i].fresh = 1;
		fq->flows[i].hash_next = i + 1 < cfg->max_flows +
					 PACE_FQ_FLOW_FIRST ? i + 1
							    : PACE_FQ_NIL;
	}
	fq->free_flow = PACE_FQ_FLOW_FIRST;
	fq->max_frames = cfg->max_frames;
	for (i = 0; i < cfg->max_frames; i++)
		fq->slot_next[i] = i + 1 < cfg->max_frames ? i + 1
							   : PACE_FQ_NIL;
	fq->free_slot = 0;
	fq->active_head = PACE_FQ_NIL;
	fq->active_tail = PACE_FQ_NIL;
	fq->flow_queue_ns = cfg->flow_queue_ns;
	fq->full_wire_bytes = pace_wire_bytes(cfg->full_frame_bytes);
	pace_rate_precompute(profile, cfg->default_rate_bps,
			     &fq->default_rate);
	fq->default_limit_frames = fq_limit_frames(fq, cfg->default_rate_bps);
	*fq_p = fq;
	return 0;
}

void pace_fq_destroy(struct pace_fq *fq)
{
	if (fq == NULL)
		return;
	if (fq->nb_frames != 0)
		SDP_LOG(WARN, PACE, "fq destroyed with %u frames queued; "
			"purge them first (pace_fq_purge_one)", fq->nb_frames);
	free(fq->flows);
	free(fq->buckets);
	free(fq->slot_frame);
	free(fq->slot_next);
	free(fq->slot_bytes);
	free(fq);
}

static uint32_t fq_lookup(const struct pace_fq *fq, uint32_t dest)
{
	uint32_t i = fq->buckets[fq_hash(dest) & fq->bucket_mask];

	while (i != PACE_FQ_NIL && fq->flows[i].dest != dest)
		i = fq->flows[i].hash_next;
	return i;
}

static void fq_unlink(struct pace_fq *fq, uint32_t idx)
{
	uint32_t *link = &fq->buckets[fq_hash(fq->flows[idx].dest) &
				      fq->bucket_mask];

	while (*link != idx)
		link = &fq->flows[*link].hash_next;
	*link = fq->flows[idx].hash_next;
}

/* An idle flow without its own rate whose deadline has passed. */
static uint32_t fq_reclaim(struct pace_fq *fq, uint64_t now_tsc)
{
	uint32_t i;

	for (i = PACE_FQ_FLOW_FIRST; i < fq->max_flows + PACE_FQ_FLOW_FIRST;
	     i++) {
		struct pace_fq_flow *f = &fq->flows[i];

		if (f->in_use && !f->own_rate && f->nb_frames == 0 &&
		    (int64_t)(now_tsc - f->next_tsc) >= 0) {
			fq_unlink(fq, i);
			f->in_use = 0;
			f->hash_next = fq->free_flow;
			fq->free_flow = i;
			fq->nb_flows--;
			fq->stats.flows_reclaimed++;
			return i;
		}
	}
	return PACE_FQ_NIL;
}

/* A new table flow for dest starting at now_tsc, or NIL when full. */
static uint32_t fq_insert(struct pace_fq *fq, uint32_t dest, uint64_t now_tsc)
{
	uint32_t idx = fq->free_flow, b;
	struct pace_fq_flow *f;

	if (idx == PACE_FQ_NIL && fq_reclaim(fq, now_tsc) == PACE_FQ_NIL)
		return PACE_FQ_NIL;
	idx = fq->free_flow;
	f = &fq->flows[idx];
	fq->free_flow = f->hash_next;
	memset(f, 0, sizeof(*f));
	f->dest = dest;
	f->next_tsc = now_tsc;
	f->head = PACE_FQ_NIL;
	f->tail = PACE_FQ_NIL;
	f->active_next = PACE_FQ_NIL;
	f->in_use = 1;
	f->fresh = 1;
	b = fq_hash(dest) & fq->bucket_mask;
	f->hash_next = fq->buckets[b];
	fq->buckets[b] = idx;
	fq->nb_flows++;
	fq->stats.flows_created++;
	return idx;
}

int pace_fq_set_dest_rate_bps(struct pace_fq *fq, uint32_t dest,
			      uint64_t rate_bps)
{
	struct pace_fq_flow *f;
	uint32_t idx;

	if (fq == NULL || dest == PACE_FQ_DEST_NONE) {
		SDP_LOG(ERR, PACE, "fq set dest rate: fq %p is NULL or "
			"destination %u is the reserved none", (void *)fq,
			dest);
		return -EINVAL;
	}
	if (rate_bps != PACE_FQ_RATE_DEFAULT &&
	    rate_bps > fq->profile->link_rate_bps) {
		SDP_LOG(ERR, PACE, "destination rate_bps %" PRIu64 " is above "
			"link_rate_bps %" PRIu64 "; lower it (e.g. B/N), or 0 "
			"for no per-destination pacing", rate_bps,
			fq->profile->link_rate_bps);
		return -EINVAL;
	}
	idx = fq_lookup(fq, dest);
	if (idx == PACE_FQ_NIL) {
		if (rate_bps == PACE_FQ_RATE_DEFAULT)
			return 0; /* follows the default already */
		/* due at once: the last time the scheduler saw */
		idx = fq_insert(fq, dest, fq->last_now_tsc);
		if (idx == PACE_FQ_NIL) {
			SDP_LOG(ERR, PACE, "no room for a rate of destination "
				"%#" PRIx32 ": all %u flows hold a rate or "
				"frames; raise pace_dests (max_flows)", dest,
				fq->max_flows);
			return -ENOSPC;
		}
	}
	f = &fq->flows[idx];
	fq->earliest_stale = 1; /* a flow may be due earlier now */
	if (f->own_rate && f->rate.rate_bps != 0)
		fq->nb_own_paced--;
	if (rate_bps == PACE_FQ_RATE_DEFAULT) {
		f->own_rate = 0;
		return 0;
	}
	f->own_rate = 1;
	pace_rate_precompute(fq->profile, rate_bps, &f->rate);
	f->limit_frames = fq_limit_frames(fq, rate_bps);
	if (rate_bps != 0)
		fq->nb_own_paced++;
	return 0;
}

int pace_fq_set_default_rate_bps(struct pace_fq *fq, uint64_t rate_bps)
{
	if (fq == NULL || rate_bps > fq->profile->link_rate_bps) {
		SDP_LOG(ERR, PACE, "default destination rate_bps %" PRIu64
			" is above link_rate_bps %" PRIu64 " (or fq %p is "
			"NULL); lower it, or 0 for no per-destination pacing",
			rate_bps, fq != NULL ? fq->profile->link_rate_bps : 0,
			(void *)fq);
		return -EINVAL;
	}
	pace_rate_precompute(fq->profile, rate_bps, &fq->default_rate);
	fq->default_limit_frames = fq_limit_frames(fq, rate_bps);
	fq->earliest_stale = 1;
	return 0;
}

uint64_t pace_fq_dest_rate_bps(const struct pace_fq *fq, uint32_t dest)
{
	uint32_t idx;

	if (dest == PACE_FQ_DEST_NONE)
		return 0;
	idx = fq_lookup(fq, dest);
	if (idx != PACE_FQ_NIL && fq->flows[idx].own_rate)
		return fq->flows[idx].rate.rate_bps;
	return fq->default_rate.rate_bps;
}

uint64_t pace_fq_default_rate_bps(const struct pace_fq *fq)
{
	return fq->default_rate.rate_bps;
}

int pace_fq_paced(const struct pace_fq *fq)
{
	return fq->default_rate.rate_bps != 0 || fq->nb_own_paced != 0;
}

int pace_fq_enqueue(struct pace_fq *fq, uint32_t dest, void *frame,
		    uint32_t frame_bytes, uint64_t now_tsc)
{
	struct pace_fq_flow *f;
	uint32_t idx, slot;

	fq->last_now_tsc = now_tsc;
	if (fq->free_slot == PACE_FQ_NIL) {
		fq->stats.full_drops++;
		return -ENOBUFS;
	}
	if (dest == PACE_FQ_DEST_NONE) {
		idx = PACE_FQ_FLOW_NODEST;
	} else {
		idx = fq_lookup(fq, dest);
		if (idx == PACE_FQ_NIL)
			idx = fq_insert(fq, dest, now_tsc);
		if (idx == PACE_FQ_NIL) {
			idx = PACE_FQ_FLOW_OVERFLOW;
			fq->stats.overflow_frames++;
		}
	}
	f = &fq->flows[idx];
	if (f->nb_frames >= flow_limit(fq, f)) {
		fq->stats.flow_drops++;
		return -ENOBUFS;
	}
	slot = fq->free_slot;
	fq->free_slot = fq->slot_next[slot];
	fq->slot_frame[slot] = frame;
	fq->slot_bytes[slot] = frame_bytes;
	fq->slot_next[slot] = PACE_FQ_NIL;
	if (f->tail == PACE_FQ_NIL)
		f->head = slot;
	else
		fq->slot_next[f->tail] = slot;
	f->tail = slot;
	f->nb_frames++;
	fq->nb_frames++;
	fq->stats.frames_in++;
	if (!f->active) {
		/* a flow idle since its last frame restarts no earlier than
		 * its deadline; an unpaced one is due now */
		if (flow_rate(fq, f)->rate_bps == 0)
			f->next_tsc = now_tsc;
		f->active = 1;
		f->active_next = PACE_FQ_NIL;
		if (fq->active_tail == PACE_FQ_NIL)
			fq->active_head = idx;
		else
			fq->flows[fq->active_tail].active_next = idx;
		fq->active_tail = idx;
		if (fq->nb_frames == 1 ||
		    (int64_t)(f->next_tsc - fq->earliest_tsc) < 0)
			fq->earliest_tsc = f->next_tsc;
	}
	return 0;
}

/* Move the flow's deadline by the frame's wire time at its rate. */
static void flow_charge(struct pace_fq *fq, struct pace_fq_flow *f,
			uint32_t frame_bytes, uint64_t now_tsc)
{
	const struct pace_rate_fp *r = flow_rate(fq, f);
	uint64_t interval_tsc, credit_tsc;
	int64_t late_tsc;

	if (r->rate_bps == 0) {
		f->next_tsc = now_tsc;
		return;
	}
	interval_tsc = pace_fp_mul(pace_wire_bytes(frame_bytes),
				   r->tsc_per_byte, r->tsc_per_byte_frac,
				   &f->tsc_residual);
	if (unlikely(interval_tsc > fq->profile->max_gap_tsc)) {
		interval_tsc = fq->profile->max_gap_tsc;
		fq->stats.clamps++;
	}
	late_tsc = (int64_t)(now_tsc - f->next_tsc);
	if (f->fresh) {
		/* a flow's first frame: no credit (sch_fq: no
		 * time_next_packet yet) */
		f->fresh = 0;
		f->next_tsc = (late_tsc > 0 ? now_tsc : f->next_tsc) +
			      interval_tsc;
		return;
	}
	if (late_tsc <= 0) {
		f->next_tsc += interval_tsc;
		return;
	}
	/* late (or idle): at most half a gap of credit, as fq_dequeue */
	credit_tsc = interval_tsc >> 1;
	if ((uint64_t)late_tsc > credit_tsc)
		fq->stats.late_polls += f->nb_frames != 0;
	else
		credit_tsc = (uint64_t)late_tsc;
	f->next_tsc = now_tsc + interval_tsc - credit_tsc;
}

static int flow_due(const struct pace_fq *fq, const struct pace_fq_flow *f,
		    uint64_t now_tsc)
{
	return flow_rate(fq, f)->rate_bps == 0 ||
	       (int64_t)(now_tsc - f->next_tsc) >= 0;
}

/* Take the head frame of flow idx (prev: its predecessor on the list). */
static void *flow_take(struct pace_fq *fq, uint32_t idx, uint32_t prev,
		       uint32_t *frame_bytes_p)
{
	struct pace_fq_flow *f = &fq->flows[idx];
	uint32_t slot = f->head;
	void *frame = fq->slot_frame[slot];

	*frame_bytes_p = fq->slot_bytes[slot];
	f->head = fq->slot_next[slot];
	if (f->head == PACE_FQ_NIL)
		f->tail = PACE_FQ_NIL;
	f->nb_frames--;
	fq->slot_next[slot] = fq->free_slot;
	fq->free_slot = slot;
	fq->nb_frames--;
	fq->stats.frames_out++;
	/* off the list; back on at the tail if frames remain */
	if (prev == PACE_FQ_NIL)
		fq->active_head = f->active_next;
	else
		fq->flows[prev].active_next = f->active_next;
	if (fq->active_tail == idx)
		fq->active_tail = prev;
	f->active_next = PACE_FQ_NIL;
	if (f->nb_frames == 0) {
		f->active = 0;
	} else {
		if (fq->active_tail == PACE_FQ_NIL)
			fq->active_head = idx;
		else
			fq->flows[fq->active_tail].active_next = idx;
		fq->active_tail = idx;
	}
	return frame;
}

void *pace_fq_dequeue(struct pace_fq *fq, uint64_t now_tsc,
		      uint32_t *frame_bytes_p)
{
	uint32_t idx, prev = PACE_FQ_NIL;
	uint64_t earliest_tsc = 0;
	int first = 1;
	void *frame;

	fq->last_now_tsc = now_tsc;
	if (fq->nb_frames == 0)
		return NULL;
	if (!fq->earliest_stale &&
	    (int64_t)(now_tsc - fq->earliest_tsc) < 0) {
		/* O(1): nothing is due before the earliest deadline */
		fq->stats.throttled++;
		return NULL;
	}
	if (fq->flows[PACE_FQ_FLOW_NODEST].active) {
		/* frames without a destination go first, as sch_fq's
		 * internal flow for control packets */
		for (idx = fq->active_head; idx != PACE_FQ_FLOW_NODEST;
		     prev = idx, idx = fq->flows[idx].active_next)
			;
		frame = flow_take(fq, idx, prev, frame_bytes_p);
		fq->flows[idx].next_tsc = now_tsc;
		return frame;
	}
	for (idx = fq->active_head; idx != PACE_FQ_NIL;
	     prev = idx, idx = fq->flows[idx].active_next) {
		struct pace_fq_flow *f = &fq->flows[idx];

		if (flow_due(fq, f, now_tsc)) {
			frame = flow_take(fq, idx, prev, frame_bytes_p);
			flow_charge(fq, f, *frame_bytes_p, now_tsc);
			return frame;
		}
		if (first || (int64_t)(f->next_tsc - earliest_tsc) < 0)
			earliest_tsc = f->next_tsc;
		first = 0;
	}
	fq->earliest_tsc = earliest_tsc;
	fq->earliest_stale = 0;
	fq->stats.throttled++;
	return NULL;
}

void *pace_fq_purge_one(struct pace_fq *fq)
{
	uint32_t frame_bytes;

	if (fq->active_head == PACE_FQ_NIL)
		return NULL;
	return flow_take(fq, fq->active_head, PACE_FQ_NIL, &frame_bytes);
}

uint32_t pace_fq_frames(const struct pace_fq *fq)
{
	return fq->nb_frames;
}

uint32_t pace_fq_control_frames(const struct pace_fq *fq)
{
	return fq->flows[PACE_FQ_FLOW_NODEST].nb_frames;
}

uint64_t pace_fq_next_tsc(const struct pace_fq *fq)
{
	return fq->earliest_tsc;
}

void pace_fq_stats_get(const struct pace_fq *fq,
		       struct pace_fq_stats *stats_p)
{
	*stats_p = fq->stats;
}
