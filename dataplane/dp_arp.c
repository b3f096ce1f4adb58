/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_arp.c - ARP for the dataplane port: a neighbour cache, resolution with
 * retries and a timeout, replies to requests for our address, and the hold
 * queue for packets waiting on a resolution (queue 0's own, and those
 * queues k > 0 hand over).  Like Linux's neighbour code it sits between
 * output and transmit: dp_out.c asks it, and it sends down only, its own
 * frames straight into queue 0's TX buffer (dp_txq.c, bypassing the pacer)
 * and released held frames through the pacer (dp_pace_xmit).
 *
 * Cache: open addressing on the IPv4 address, linear probing, at most 3/4
 * of the slots used.  It starts at DP_ARP_SIZE slots and doubles (rehash)
 * when a new neighbour would fill more than that, up to max_entries
 * (DP_ARP_MAX_ENTRIES unless dp_arp_table_set_max raised it: a port takes
 * arp_max=); deletion shifts the following entries of the probe run
 * back, so probing needs no tombstones.
 *
 * Eviction at max_entries: every entry but a STATIC one has one live
 * record in the fifo of its class, UNCONFIRMED (learned from a request
 * nobody asked for, resolving, or failed) or CONFIRMED (it answered a
 * request of ours).  A new entry evicts the oldest UNCONFIRMED one first,
 * a CONFIRMED one only when there is none, and a sender learned from an
 * unsolicited request never evicts a CONFIRMED one: a flood of invented
 * senders displaces itself, not the neighbours we talk to.  An entry used
 * since it was queued goes to the tail once (second chance, CLOCK-like).
 * Records of deleted or re-classed entries go stale (their seq no longer
 * matches) and are skipped or compacted away, so each eviction costs O(1)
 * amortised, never a scan of the slots.  State machine per entry:
 *
 *   FREE --lookup--> INCOMPLETE --reply--> REACHABLE (confirmed) --ttl-->
 *                                                    (re-armed: INCOMPLETE)
 *   FREE --request for our address--> REACHABLE (unconfirmed)
 *                        |  retry_tsc: request again, tries++
 *                        +--tries == max--> REACHABLE, expired, no MAC:
 *                                           held packets dropped
 *   any but STATIC --table full, oldest of its class--> FREE (evicted)
 *   STATIC: configured, never expires, never overwritten or evicted.
 *
 * All time is TSC passed by the caller; the table itself is pure logic.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_byteorder.h>
#include <rte_ether.h>

#include "dp_internal.h"

/* Room for twice @max_entries records: live ones never exceed
 * max_entries, so a full fifo is half stale and a compaction frees at
 * least half of it. */
static int fifo_size(struct dp_arp_fifo *f, uint32_t max_entries)
{
	uint32_t n = 1;
	struct dp_arp_rec *r;
	uint32_t i, k = 0;

	while (n < 2 * max_entries)
		n <<= 1;
	if (f->r != NULL && n <= f->mask + 1)
		return 0;
	r = calloc(n, sizeof(*r));
	if (r == NULL)
		return -ENOMEM;
	for (i = f->head; i != f->tail; i++)
		r[k++] = f->r[i & f->mask];
	free(f->r);
	f->r = r;
	f->mask = n - 1;
	f->head = 0;
	f->tail = k;
	return 0;
}

int dp_arp_table_init(struct dp_arp_table *t, uint64_t ttl_tsc,
		      uint64_t retry_tsc, uint32_t max_tries)
{
	unsigned int c;

	memset(t, 0, sizeof(*t));
	t->e = calloc(DP_ARP_SIZE, sizeof(*t->e));
	if (t->e == NULL)
		return -ENOMEM;
	t->size_log2 = DP_ARP_SIZE_LOG2;
	t->mask = DP_ARP_SIZE - 1;
	t->max_entries = DP_ARP_MAX_ENTRIES;
	t->ttl_tsc = ttl_tsc;
	t->retry_tsc = retry_tsc;
	t->max_tries = max_tries;
	t->next_seq = 1;
	for (c = 0; c < DP_ARP_CLASSES; c++) {
		if (fifo_size(&t->fifo[c], t->max_entries) != 0) {
			dp_arp_table_fini(t);
			return -ENOMEM;
		}
	}
	return 0;
}

void dp_arp_table_fini(struct dp_arp_table *t)
{
	unsigned int c;

	free(t->e);
	t->e = NULL;
	t->nb_used = 0;
	for (c = 0; c < DP_ARP_CLASSES; c++) {
		free(t->fifo[c].r);
		memset(&t->fifo[c], 0, sizeof(t->fifo[c]));
	}
}

int dp_arp_table_set_max(struct dp_arp_table *t, uint32_t max_entries)
{
	unsigned int c;

	if (max_entries < t->nb_used || max_entries > DP_ARP_MAX_LIMIT)
		return -EINVAL;
	for (c = 0; c < DP_ARP_CLASSES; c++)
		if (fifo_size(&t->fifo[c], max_entries) != 0)
			return -ENOMEM;
	t->max_entries = max_entries;
	return 0;
}

static inline uint32_t slot_of(const struct dp_arp_table *t, uint32_t ip_be)
{
	uint32_t h = ip_be * 0x9E3779B1u; /* Fibonacci hashing */

	return h >> (32 - t->size_log2);
}

/* Slot holding @ip_be, or the free slot where it would go, or NULL. */
static struct dp_arp_entry *probe(struct dp_arp_table *t, uint32_t ip_be)
{
	uint32_t i, s = slot_of(t, ip_be);

	for (i = 0; i <= t->mask; i++) {
		struct dp_arp_entry *e = &t->e[(s + i) & t->mask];

		if (e->state == DP_ARP_FREE || e->ip_be == ip_be)
			return e;
	}
	return NULL;
}

/* Double the slots and reinsert every entry.  @return 0 or -ENOMEM (the
 * table is unchanged then). */
static int grow(struct dp_arp_table *t)
{
	struct dp_arp_entry *old = t->e;
	uint32_t old_slots = t->mask + 1, i;

	if (t->size_log2 >= 31)
		return -ENOMEM;
	t->e = calloc(2 * (size_t)old_slots, sizeof(*t->e));
	if (t->e == NULL) {
		t->e = old;
		return -ENOMEM;
	}
	t->size_log2++;
	t->mask = 2 * old_slots - 1;
	for (i = 0; i < old_slots; i++)
		if (old[i].state != DP_ARP_FREE)
			*probe(t, old[i].ip_be) = old[i];
	free(old);
	t->grows++;
	return 0;
}

/* Free slot @i and shift later entries of its probe run back into the
 * hole, so that every entry stays reachable from its home slot. */
static void delete_slot(struct dp_arp_table *t, uint32_t i)
{
	const uint32_t mask = t->mask;
	uint32_t j = i;

	for (;;) {
		uint32_t home;

		j = (j + 1) & mask;
		if (t->e[j].state == DP_ARP_FREE)
			break;
		home = slot_of(t, t->e[j].ip_be);
		/* entry j may move to i if its home is not in (i, j] */
		if (((j - home) & mask) >= ((j - i) & mask)) {
			t->e[i] = t->e[j];
			i = j;
		}
	}
	memset(&t->e[i], 0, sizeof(t->e[i]));
	t->nb_used--;
}

static bool rec_live(struct dp_arp_table *t, const struct dp_arp_rec *r,
		     struct dp_arp_entry **e_p)
{
	struct dp_arp_entry *e = probe(t, r->ip_be);

	*e_p = e;
	return e != NULL && e->state != DP_ARP_FREE && e->seq == r->seq;
}

/* Drop the stale records of a full fifo (amortised: at least half of a
 * full fifo is stale, see fifo_size). */
static void fifo_compact(struct dp_arp_table *t, struct dp_arp_fifo *f)
{
	struct dp_arp_entry *e;
	uint32_t i, k = f->head;

	for (i = f->head; i != f->tail; i++) {
		struct dp_arp_rec r = f->r[i & f->mask];

		if (rec_live(t, &r, &e))
			f->r[k++ & f->mask] = r;
	}
	f->tail = k;
}

static void fifo_push(struct dp_arp_table *t, enum dp_arp_class c,
		      const struct dp_arp_rec *r)
{
	struct dp_arp_fifo *f = &t->fifo[c];

	if (f->tail - f->head > f->mask)
		fifo_compact(t, f);
	f->r[f->tail++ & f->mask] = *r;
}

/* Queue @e as a new member of class @c (its older record goes stale). */
static void classify(struct dp_arp_table *t, struct dp_arp_entry *e,
		     enum dp_arp_class c)
{
	struct dp_arp_rec r;

	e->seq = t->next_seq++;
	if (t->next_seq == 0)
		t->next_seq = 1;
	r.ip_be = e->ip_be;
	r.seq = e->seq;
	r.tsc = e->used_tsc;
	fifo_push(t, c, &r);
}

/* Evict the oldest entry of class @c not used since it was queued (one
 * used since gets a second chance at the tail).  @return false when the
 * class is empty. */
static bool evict_class(struct dp_arp_table *t, enum dp_arp_class c)
{
	struct dp_arp_fifo *f = &t->fifo[c];
	struct dp_arp_entry *e;

	while (f->head != f->tail) {
		struct dp_arp_rec r = f->r[f->head++ & f->mask];

		if (!rec_live(t, &r, &e))
			continue;
		if (e->used_tsc != r.tsc) {
			r.tsc = e->used_tsc;
			f->r[f->tail++ & f->mask] = r; /* the slot just freed */
			continue;
		}
		delete_slot(t, (uint32_t)(e - t->e));
		t->evictions++;
		if (c == DP_ARP_CONFIRMED)
			t->evictions_confirmed++;
		return true;
	}
	return false;
}

/* The slot for @ip_be: its entry, or a free slot (growing the table when
 * it is 3/4 full, evicting at max_entries or when it cannot grow; only an
 * UNCONFIRMED entry unless @may_evict_confirmed).  NULL when nothing can
 * be evicted. */
static struct dp_arp_entry *slot_for(struct dp_arp_table *t, uint32_t ip_be,
				     bool may_evict_confirmed)
{
	struct dp_arp_entry *e = probe(t, ip_be);

	if (e != NULL && e->state != DP_ARP_FREE)
		return e;
	if (t->nb_used >= t->max_entries ||
	    (t->nb_used >= (t->mask + 1) / 4 * 3 && grow(t) != 0)) {
		if (!evict_class(t, DP_ARP_UNCONFIRMED) &&
		    (!may_evict_confirmed ||
		     !evict_class(t, DP_ARP_CONFIRMED)))
			return NULL;
	}
	return probe(t, ip_be); /* a shift or a rehash moved the hole */
}

struct dp_arp_entry *dp_arp_find(struct dp_arp_table *t, uint32_t ip_be)
{
	struct dp_arp_entry *e = probe(t, ip_be);

	return (e != NULL && e->state != DP_ARP_FREE) ? e : NULL;
}

int dp_arp_add_static(struct dp_arp_table *t, uint32_t ip_be,
		      const struct rte_ether_addr *mac)
{
	struct dp_arp_entry *e = slot_for(t, ip_be, true);

	if (e == NULL)
		return -ENOSPC;
	if (e->state == DP_ARP_FREE)
		t->nb_used++;
	e->ip_be = ip_be;
	e->state = DP_ARP_STATIC;
	e->seq = 0; /* no record: never evicted */
	e->mac = *mac;
	return 0;
}

int dp_arp_lookup(struct dp_arp_table *t, uint32_t ip_be, uint64_t now_tsc,
		  struct rte_ether_addr *mac_p)
{
	struct dp_arp_entry *e = slot_for(t, ip_be, true);

	if (e == NULL)
		return -ENOSPC;
	switch (e->state) {
	case DP_ARP_STATIC:
		*mac_p = e->mac;
		return 0;
	case DP_ARP_REACHABLE:
		if ((int64_t)(now_tsc - e->deadline_tsc) < 0) {
			e->used_tsc = now_tsc;
			*mac_p = e->mac;
			return 0;
		}
		break; /* expired: resolve again */
	case DP_ARP_INCOMPLETE:
		return -EAGAIN;
	default:
		t->nb_used++;
		break;
	}
	e->ip_be = ip_be;
	e->state = DP_ARP_INCOMPLETE;
	t->incomplete_maybe = true;
	e->used_tsc = now_tsc;
	e->tries = 1;
	e->deadline_tsc = now_tsc + t->retry_tsc;
	classify(t, e, DP_ARP_UNCONFIRMED);
	return -ENOENT;
}

bool dp_arp_learn(struct dp_arp_table *t, uint32_t ip_be,
		  const struct rte_ether_addr *mac, uint64_t now_tsc)
{
	struct dp_arp_entry *e = slot_for(t, ip_be, false);
	uint8_t was;

	if (e == NULL) {
		t->learn_refused++;
		return false;
	}
	if (e->state == DP_ARP_STATIC)
		return false;
	was = e->state;
	if (was == DP_ARP_FREE)
		t->nb_used++;
	e->ip_be = ip_be;
	e->state = DP_ARP_REACHABLE;
	e->mac = *mac;
	e->tries = 0;
	e->deadline_tsc = now_tsc + t->ttl_tsc;
	e->used_tsc = now_tsc;
	/* the answer to our own request confirms; a sender we never asked
	 * stays unconfirmed (a refresh keeps the class it has) */
	if (was == DP_ARP_INCOMPLETE)
		classify(t, e, DP_ARP_CONFIRMED);
	else if (was == DP_ARP_FREE)
		classify(t, e, DP_ARP_UNCONFIRMED);
	return was != DP_ARP_REACHABLE;
}

unsigned int dp_arp_tick(struct dp_arp_table *t, uint64_t now_tsc,
			 dp_arp_event_cb cb, void *arg)
{
	unsigned int i, n = 0, waiting = 0;

	/* Nothing asked since a scan found no request waiting: no scan of
	 * the slots (every retry/4 of every port's poll) */
	if (!t->incomplete_maybe)
		return 0;
	/* cleared first: a callback's lookup below sets it again */
	t->incomplete_maybe = false;
	for (i = 0; i <= t->mask; i++) {
		struct dp_arp_entry *e = &t->e[i];

		if (e->state != DP_ARP_INCOMPLETE)
			continue;
		if ((int64_t)(now_tsc - e->deadline_tsc) < 0) {
			waiting++;
			continue;
		}
		n++;
		if (e->tries >= t->max_tries) {
			/* Keep the slot (no tombstones) but mark it
			 * expired-reachable-less: the next lookup re-arms. */
			e->state = DP_ARP_REACHABLE;
			e->deadline_tsc = now_tsc;
			memset(&e->mac, 0, sizeof(e->mac));
			cb(arg, e->ip_be, DP_ARP_EV_FAILED);
			continue;
		}
		e->tries++;
		e->deadline_tsc = now_tsc + t->retry_tsc;
		waiting++;
		cb(arg, e->ip_be, DP_ARP_EV_RETRY);
	}
	/* only dp_arp_lookup makes entries INCOMPLETE (and sets it) */
	if (waiting != 0)
		t->incomplete_maybe = true;
	return n;
}

void dp_arp_build(uint8_t *frame, uint16_t op, const struct rte_ether_addr *sha,
		  uint32_t sip_be, const struct rte_ether_addr *tha,
		  uint32_t tip_be)
{
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)frame;
	struct rte_arp_hdr *arp = (struct rte_arp_hdr *)(eth + 1);
	static const struct rte_ether_addr bcast = {
		.addr_bytes = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } };

	eth->dst_addr = op == RTE_ARP_OP_REQUEST ? bcast : *tha;
	eth->src_addr = *sha;
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	arp->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	arp->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	arp->arp_hlen = RTE_ETHER_ADDR_LEN;
	arp->arp_plen = 4;
	arp->arp_opcode = rte_cpu_to_be_16(op);
	arp->arp_data.arp_sha = *sha;
	arp->arp_data.arp_sip = sip_be;
	if (op == RTE_ARP_OP_REQUEST)
		memset(&arp->arp_data.arp_tha, 0, RTE_ETHER_ADDR_LEN);
	else
		arp->arp_data.arp_tha = *tha;
	arp->arp_data.arp_tip = tip_be;
}

int dp_arp_parse(const uint8_t *frame, uint32_t len, uint16_t *op_p,
		 struct rte_ether_addr *sha_p, uint32_t *sip_be_p,
		 uint32_t *tip_be_p)
{
	struct rte_arp_hdr arp;
	uint16_t op;

	if (len < DP_ARP_FRAME_LEN)
		return -EINVAL;
	memcpy(&arp, frame + RTE_ETHER_HDR_LEN, sizeof(arp));
	op = rte_be_to_cpu_16(arp.arp_opcode);
	if (rte_be_to_cpu_16(arp.arp_hardware) != RTE_ARP_HRD_ETHER ||
	    rte_be_to_cpu_16(arp.arp_protocol) != RTE_ETHER_TYPE_IPV4 ||
	    arp.arp_hlen != RTE_ETHER_ADDR_LEN || arp.arp_plen != 4 ||
	    (op != RTE_ARP_OP_REQUEST && op != RTE_ARP_OP_REPLY))
		return -EINVAL;
	if (rte_is_multicast_ether_addr(&arp.arp_data.arp_sha) ||
	    rte_is_zero_ether_addr(&arp.arp_data.arp_sha))
		return -EINVAL;
	*op_p = op;
	*sha_p = arp.arp_data.arp_sha;
	*sip_be_p = arp.arp_data.arp_sip;
	*tip_be_p = arp.arp_data.arp_tip;
	return 0;
}

/* ---- port level: mbufs in and out ---- */

static void send_arp(struct dp_port *port, uint16_t op,
		     const struct rte_ether_addr *tha, uint32_t tip_be,
		     uint64_t now_tsc)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(port->pool);
	uint8_t *p;

	if (m == NULL) {
		port->st.drops[DP_DROP_NO_MBUF]++;
		return;
	}
	p = (uint8_t *)rte_pktmbuf_append(m, DP_ARP_FRAME_LEN);
	dp_arp_build(p, op, &port->fctx.mac, port->fctx.ip_be, tha, tip_be);
	/* ARP bypasses the pacer: it is tiny and rare.  Under TX
	 * back-pressure it is dropped and counted (DP_DROP_TX_FULL) like any
	 * frame: requests are retried, a peer asks again. */
	if (dp_txq_push(port, &port->txq[0], m, now_tsc) == 0)
		port->st.arp_tx++;
}

void dp_arp_port_request(struct dp_port *port, uint32_t ip_be,
			 uint64_t now_tsc)
{
	send_arp(port, RTE_ARP_OP_REQUEST, NULL, ip_be, now_tsc);
}

/* Send (or drop) every held packet for @ip_be. */
static void release_held(struct dp_port *port, uint32_t ip_be,
			 const struct rte_ether_addr *mac, uint64_t now_tsc)
{
	uint32_t i, kept = 0;

	for (i = 0; i < port->nb_hold; i++) {
		struct dp_hold *h = &port->hold[i];

		if (h->ip_be != ip_be) {
			port->hold[kept++] = *h;
			continue;
		}
		if (mac == NULL) {
			port->st.drops[DP_DROP_ARP_TIMEOUT]++;
			rte_pktmbuf_free(h->m);
			continue;
		}
		rte_ether_addr_copy(
			mac, &rte_pktmbuf_mtod(h->m, struct rte_ether_hdr *)
				      ->dst_addr);
		dp_pace_xmit(port, h->m, now_tsc);
	}
	port->nb_hold = kept;
}

int dp_arp_port_hold(struct dp_port *port, struct rte_mbuf *m,
		     uint32_t dst_ip_be, int arp_rc, uint64_t now_tsc)
{
	uint32_t i, same = 0;

	if (arp_rc == -ENOENT)
		dp_arp_port_request(port, dst_ip_be, now_tsc);
	if (port->nb_hold == DP_ARP_HOLD || arp_rc == -ENOSPC) {
		port->st.drops[DP_DROP_HOLD_FULL]++;
		rte_pktmbuf_free(m);
		return -ENOBUFS;
	}
	/* one destination that never answers must not take the whole
	 * queue from the others */
	for (i = 0; i < port->nb_hold; i++)
		same += port->hold[i].ip_be == dst_ip_be;
	if (same >= DP_ARP_HOLD_DEST) {
		port->st.drops[DP_DROP_HOLD_DEST_FULL]++;
		rte_pktmbuf_free(m);
		return -ENOBUFS;
	}
	port->hold[port->nb_hold].m = m;
	port->hold[port->nb_hold].ip_be = dst_ip_be;
	port->nb_hold++;
	return 0;
}

void dp_arp_port_handoff(struct dp_port *port, uint64_t now_tsc)
{
	struct rte_mbuf *pkts[DP_BURST];
	struct rte_ether_addr mac;
	unsigned int n, i;
	uint32_t dst_ip_be;
	int rc;

	n = rte_ring_sc_dequeue_burst(port->handoff, (void **)pkts, DP_BURST,
				      NULL);
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];

		/* framed: the IPv4 destination is in the header */
		memcpy(&dst_ip_be, rte_pktmbuf_mtod_offset(m, uint8_t *,
							   RTE_ETHER_HDR_LEN +
								   16), 4);
		dp_arp_lock(port);
		rc = dp_arp_lookup(&port->arp, dst_ip_be, now_tsc, &mac);
		if (rc == 0) {
			dp_arp_unlock(port);
			rte_ether_addr_copy(
				&mac, &rte_pktmbuf_mtod(m, struct rte_ether_hdr
								*)->dst_addr);
			dp_pace_xmit(port, m, now_tsc);
			continue;
		}
		/* the queue's own lookup may have created the entry: then
		 * the first request is still owed (m->hash.usr) */
		if (rc == -EAGAIN && m->hash.usr == (uint32_t)-ENOENT)
			rc = -ENOENT;
		dp_arp_port_hold(port, m, dst_ip_be, rc, now_tsc);
		dp_arp_unlock(port);
	}
}

/*
 * Whether an ARP frame may teach us its sender's MAC: a reply to a request
 * of ours (the entry is INCOMPLETE), or a frame whose sender hardware
 * address equals its Ethernet source.  No checksum covers either address
 * (the FCS is gone by now), so a frame corrupted on the way, or one from a
 * host that speaks for another, must not point a neighbour at a MAC
 * nobody answers on until the entry expires.
 */
static bool arp_trusted(struct dp_port *port, const struct rte_mbuf *m,
			uint16_t op, const struct rte_ether_addr *sha,
			uint32_t sip)
{
	const struct rte_ether_hdr *eth =
		rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	const struct dp_arp_entry *e;

	if (rte_is_same_ether_addr(&eth->src_addr, sha))
		return true;
	if (op != RTE_ARP_OP_REPLY)
		return false;
	e = dp_arp_find(&port->arp, sip);
	return e != NULL && e->state == DP_ARP_INCOMPLETE;
}

/*
 * Whether @sip may be a neighbour at all: not 0.0.0.0 (an RFC 5227 probe,
 * or the empty key), not our own address (a conflict or a spoof: we would
 * send our own traffic to it), and inside our subnet (we never send to an
 * address outside it, dp_out_frame).  Anything else would only fill the
 * cache.
 */
static bool sender_valid(const struct dp_port *port, uint32_t sip)
{
	return sip != 0 && sip != port->fctx.ip_be &&
	       ((sip ^ port->fctx.ip_be) & port->net_mask_be) == 0;
}

void dp_arp_port_input(struct dp_port *port, struct rte_mbuf *m,
		       uint64_t now_tsc)
{
	struct rte_ether_addr sha;
	uint32_t sip, tip;
	uint16_t op;
	bool trusted;

	if (rte_pktmbuf_data_len(m) != rte_pktmbuf_pkt_len(m) ||
	    dp_arp_parse(rte_pktmbuf_mtod(m, const uint8_t *),
			 rte_pktmbuf_data_len(m), &op, &sha, &sip, &tip) != 0) {
		port->st.drops[DP_DROP_ARP]++;
		rte_pktmbuf_free(m);
		return;
	}
	if (!sender_valid(port, sip)) {
		port->st.drops[DP_DROP_ARP_SENDER]++;
		rte_pktmbuf_free(m);
		return;
	}
	trusted = arp_trusted(port, m, op, &sha, sip);
	rte_pktmbuf_free(m);
	if (!trusted) {
		/* neither learned nor answered: a real peer asks again */
		port->st.drops[DP_DROP_ARP_UNTRUSTED]++;
		return;
	}
	port->st.arp_rx++; /* valid ones; the others count as drops */
	if (tip != port->fctx.ip_be) {
		/* Not about us.  Refresh an entry we already have (RFC 826
		 * "merge"), but do not create one. */
		if (dp_arp_find(&port->arp, sip) != NULL)
			dp_arp_learn(&port->arp, sip, &sha, now_tsc);
		return;
	}
	dp_arp_learn(&port->arp, sip, &sha, now_tsc);
	release_held(port, sip, &sha, now_tsc);
	if (op == RTE_ARP_OP_REQUEST)
		send_arp(port, RTE_ARP_OP_REPLY, &sha, sip, now_tsc);
}

static void tick_event(void *arg, uint32_t ip_be, enum dp_arp_event ev)
{
	struct dp_port *port = arg;

	if (ev == DP_ARP_EV_RETRY)
		dp_arp_port_request(port, ip_be, port->arp_tick_tsc);
	else
		release_held(port, ip_be, NULL, port->arp_tick_tsc);
}

/* Drop held packets whose entry is no longer resolving (evicted for a
 * new neighbour): nothing would ever release them. */
static void drop_orphans(struct dp_port *port)
{
	uint32_t i, kept = 0;

	for (i = 0; i < port->nb_hold; i++) {
		struct dp_hold *h = &port->hold[i];
		const struct dp_arp_entry *e = dp_arp_find(&port->arp,
							   h->ip_be);

		if (e != NULL && e->state == DP_ARP_INCOMPLETE) {
			port->hold[kept++] = *h;
			continue;
		}
		port->st.drops[DP_DROP_ARP_TIMEOUT]++;
		rte_pktmbuf_free(h->m);
	}
	port->nb_hold = kept;
}

void dp_arp_port_tick(struct dp_port *port, uint64_t now_tsc)
{
	port->arp_tick_tsc = now_tsc;
	dp_arp_tick(&port->arp, now_tsc, tick_event, port);
	if (port->nb_hold != 0)
		drop_orphans(port);
}

void dp_arp_port_release(struct dp_port *port)
{
	uint32_t i;

	for (i = 0; i < port->nb_hold; i++)
		rte_pktmbuf_free(port->hold[i].m);
	port->nb_hold = 0;
}
