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
 * arp_max=); a table at max_entries evicts its least recently used
 * REACHABLE entry (a linear scan: only when a new neighbour arrives at a
 * full table); deletion shifts the following entries of the probe run
 * back, so probing needs no tombstones.  State machine per entry:
 *
 *   FREE --lookup--> INCOMPLETE --reply--> REACHABLE --ttl--> (re-armed)
 *                        |  retry_tsc: request again, tries++
 *                        +--tries == max--> REACHABLE, expired, no MAC:
 *                                           held packets dropped
 *   REACHABLE --table full, least recently used--> FREE (evicted)
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

int dp_arp_table_init(struct dp_arp_table *t, uint64_t ttl_tsc,
		      uint64_t retry_tsc, uint32_t max_tries)
{
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
	return 0;
}

void dp_arp_table_fini(struct dp_arp_table *t)
{
	free(t->e);
	t->e = NULL;
	t->nb_used = 0;
}

int dp_arp_table_set_max(struct dp_arp_table *t, uint32_t max_entries)
{
	if (max_entries < t->nb_used || max_entries > DP_ARP_MAX_LIMIT)
		return -EINVAL;
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

/* Evict the least recently used REACHABLE entry.  @return false when
 * every entry is STATIC or INCOMPLETE. */
static bool evict_lru(struct dp_arp_table *t)
{
	uint32_t i, victim = t->mask + 1;
	uint64_t oldest = UINT64_MAX;

	for (i = 0; i <= t->mask; i++) {
		const struct dp_arp_entry *e = &t->e[i];

		if (e->state == DP_ARP_REACHABLE && e->used_tsc <= oldest) {
			oldest = e->used_tsc;
			victim = i;
		}
	}
	if (victim == t->mask + 1)
		return false;
	delete_slot(t, victim);
	t->evictions++;
	return true;
}

/* The slot for @ip_be: its entry, or a free slot (growing the table when
 * it is 3/4 full, evicting at max_entries or when it cannot grow).  NULL
 * when nothing can be evicted. */
static struct dp_arp_entry *slot_for(struct dp_arp_table *t, uint32_t ip_be)
{
	struct dp_arp_entry *e = probe(t, ip_be);

	if (e != NULL && e->state != DP_ARP_FREE)
		return e;
	if (t->nb_used >= t->max_entries ||
	    (t->nb_used >= (t->mask + 1) / 4 * 3 && grow(t) != 0)) {
		if (!evict_lru(t))
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
	struct dp_arp_entry *e = slot_for(t, ip_be);

	if (e == NULL)
		return -ENOSPC;
	if (e->state == DP_ARP_FREE)
		t->nb_used++;
	e->ip_be = ip_be;
	e->state = DP_ARP_STATIC;
	e->mac = *mac;
	return 0;
}

int dp_arp_lookup(struct dp_arp_table *t, uint32_t ip_be, uint64_t now_tsc,
		  struct rte_ether_addr *mac_p)
{
	struct dp_arp_entry *e = slot_for(t, ip_be);

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
	return -ENOENT;
}

bool dp_arp_learn(struct dp_arp_table *t, uint32_t ip_be,
		  const struct rte_ether_addr *mac, uint64_t now_tsc)
{
	struct dp_arp_entry *e = slot_for(t, ip_be);
	bool fresh;

	if (e == NULL || e->state == DP_ARP_STATIC)
		return false;
	fresh = e->state != DP_ARP_REACHABLE;
	if (e->state == DP_ARP_FREE)
		t->nb_used++;
	e->ip_be = ip_be;
	e->state = DP_ARP_REACHABLE;
	e->mac = *mac;
	e->tries = 0;
	e->deadline_tsc = now_tsc + t->ttl_tsc;
	e->used_tsc = now_tsc;
	return fresh;
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
	if (arp_rc == -ENOENT)
		dp_arp_port_request(port, dst_ip_be, now_tsc);
	if (port->nb_hold == DP_ARP_HOLD || arp_rc == -ENOSPC) {
		port->st.drops[DP_DROP_HOLD_FULL]++;
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

void dp_arp_port_tick(struct dp_port *port, uint64_t now_tsc)
{
	port->arp_tick_tsc = now_tsc;
	dp_arp_tick(&port->arp, now_tsc, tick_event, port);
}

void dp_arp_port_release(struct dp_port *port)
{
	uint32_t i;

	for (i = 0; i < port->nb_hold; i++)
		rte_pktmbuf_free(port->hold[i].m);
	port->nb_hold = 0;
}
