/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_pace.c - the port's pacer: pacing/ decides, this file moves mbufs.
 *
 * Every port has a pacer, so the rate can change at run time; at rate 0
 * frames bypass it as long as nothing is queued (order is kept: once a
 * frame waits, later ones queue behind it).
 *
 *   DEADLINE mode (vdevs: a gap frame costs no wire time there): frames wait
 *   in the fifo; each poll reads the clock once and releases the frames
 *   whose departure time has come (pace_may_send / pace_frame_sent), and
 *   pushes them to the NIC at once: the l2fwd-style drain deadline would
 *   otherwise bunch paced frames together.
 *
 *   GAP mode (real line rate): each real frame is followed by the PAUSE
 *   frames pace_gap_plan() asks for.  They are indirect mbufs pointing into
 *   one pre-built maximum-size PAUSE frame (a prefix of a PAUSE frame padded
 *   with zeros is itself a valid PAUSE frame), so no gap frame is written
 *   per packet.  Frames leave back to back; the gap frames set the spacing.
 *
 * Rate changes are published by dp_port_set_rate() from any thread and
 * applied by pace_queue_sync() at the next poll of the owning thread.
 */
#include <errno.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_malloc.h>

#include "dp_internal.h"

#define GAP_PLAN_MAX 16

struct dp_pacer {
	struct pace_queue q;		/* per-queue state (cache aligned) */
	struct pace_profile prof;	/* validated, precomputed */
	struct rte_ring *fifo;		/* frames waiting for departure */
	struct rte_mbuf *next;		/* dequeued, not yet due */
	struct rte_mbuf *gap_frame;	/* max-size PAUSE frame, direct */
	bool backlogged;		/* a frame waited when the last left */
	uint32_t limit_frames;		/* fifo depth for pace_queue_us */
	struct rte_mempool *gap_pool;	/* indirect mbufs for gap frames */
};

/*
 * A paced queue holds at most pace_queue_us of full-size frames: beyond
 * that the pacer is the bottleneck, and like a real one it drops, so
 * SCTP's congestion control sees loss and backs off instead of piling up
 * a queueing delay it cannot see (which outlasts the minimum RTO).
 */
static void set_limit(struct dp_port *port, struct dp_pacer *p)
{
	uint64_t frame_bits = (uint64_t)pace_wire_bytes(port->mtu +
						RTE_ETHER_HDR_LEN) * 8;
	uint64_t n = p->q.rate_bps / 1000 * port->cfg.pace_queue_us / 1000 /
		     frame_bits;

	if (n < 16)
		n = 16;
	if (n > rte_ring_get_capacity(p->fifo))
		n = rte_ring_get_capacity(p->fifo);
	p->limit_frames = p->q.rate_bps == 0 ? UINT32_MAX : (uint32_t)n;
}

static void log_setup(const struct dp_port *port, const struct dp_pacer *p)
{
	SDP_LOG(INFO, DP, "port %u: pacer %s mode, link %" PRIu64
		" bit/s, rate %" PRIu64 " bit/s%s", port->port_id,
		pace_mode_name(p->prof.mode), p->prof.link_rate_bps,
		p->q.rate_bps, p->q.rate_bps == 0 ? " (unpaced)" : "");
}

static int gap_frame_setup(struct dp_port *port, struct dp_pacer *p)
{
	char name[RTE_MEMPOOL_NAMESIZE];
	uint32_t len = p->prof.gap_wire_max_bytes - PACE_WIRE_OVERHEAD_BYTES;

	snprintf(name, sizeof(name), "dp_gap_%u", port->port_id);
	p->gap_pool = rte_pktmbuf_pool_create(name, 4095, 128, 0, 0,
					      rte_socket_id());
	if (p->gap_pool == NULL)
		return -ENOMEM;
	p->gap_frame = rte_pktmbuf_alloc(port->pool);
	if (p->gap_frame == NULL ||
	    rte_pktmbuf_append(p->gap_frame, (uint16_t)len) == NULL)
		return -ENOMEM;
	return pace_gap_frame_build(rte_pktmbuf_mtod(p->gap_frame, void *),
				    len, len, port->fctx.mac.addr_bytes);
}

int dp_tx_pace_setup(struct dp_port *port, uint32_t speed_mbps)
{
	const struct dp_config *cfg = &port->cfg;
	struct pace_config pc;
	struct dp_pacer *p;
	char name[RTE_RING_NAMESIZE];
	int rc;

	p = rte_zmalloc("dp_pacer", sizeof(*p), RTE_CACHE_LINE_SIZE);
	if (p == NULL)
		return -ENOMEM;
	pace_config_default(&pc);
	pc.tsc_hz = dp_tsc_hz();
	pc.link_rate_bps = cfg->link_bps != 0 ? cfg->link_bps
			 : speed_mbps != 0 ? (uint64_t)speed_mbps * 1000000
					   : UINT64_C(10000000000);
	pc.target_rate_bps = cfg->pace_rate_bps;
	switch (cfg->pace_mode) {
	case DP_PACE_GAP:
		pc.mode = PACE_MODE_GAP;
		break;
	case DP_PACE_DEADLINE:
		pc.mode = PACE_MODE_DEADLINE;
		break;
	default:
		pc.mode = cfg->is_pci ? PACE_MODE_GAP : PACE_MODE_DEADLINE;
		break;
	}
	if (pc.mode == PACE_MODE_GAP)
		pc.gap_frame_max_bytes = (uint32_t)port->mtu +
					 DP_ETH_OVERHEAD;
	rc = pace_profile_init(&p->prof, &pc);
	if (rc != 0) {
		SDP_LOG(ERR, DP, "port %u: pacing config rejected (rate=%"
			PRIu64 " link=%" PRIu64 "): fix rate= or link=",
			port->port_id, pc.target_rate_bps, pc.link_rate_bps);
		goto err_free;
	}
	rc = pace_queue_init(&p->q, &p->prof, dp_tsc());
	if (rc != 0)
		goto err_free;
	snprintf(name, sizeof(name), "dp_pace_%u", port->port_id);
	p->fifo = rte_ring_create(name, cfg->tx_hold, rte_socket_id(),
				  RING_F_SP_ENQ | RING_F_SC_DEQ |
					  RING_F_EXACT_SZ);
	if (p->fifo == NULL) {
		rc = -ENOMEM;
		goto err_free;
	}
	if (p->prof.mode == PACE_MODE_GAP) {
		rc = gap_frame_setup(port, p);
		if (rc != 0)
			goto err_ring;
	}
	set_limit(port, p);
	port->pacer = p;
	__atomic_store_n(&port->pace_busy, p->q.rate_bps != 0,
			 __ATOMIC_RELAXED);
	port->link_bps = pc.link_rate_bps;
	log_setup(port, p);
	if (p->q.rate_bps != 0)
		SDP_LOG(INFO, DP, "port %u: pacer queue %u frames (%u us)",
			port->port_id, p->limit_frames,
			port->cfg.pace_queue_us);
	return 0;

err_ring:
	rte_pktmbuf_free(p->gap_frame);
	rte_mempool_free(p->gap_pool);
	rte_ring_free(p->fifo);
err_free:
	rte_free(p);
	return rc;
}

int dp_pace_enqueue(struct dp_port *port, struct rte_mbuf *m,
		    uint64_t now_tsc)
{
	struct dp_pacer *p = port->pacer;

	if (p->q.rate_bps == 0 && p->next == NULL &&
	    rte_ring_empty(p->fifo))
		return dp_tx_push(port, m, now_tsc) == 0 ? 0 : -EAGAIN;
	if (unlikely(rte_ring_count(p->fifo) >= p->limit_frames))
		return -ENOBUFS;
	if (rte_ring_sp_enqueue(p->fifo, m) != 0)
		return -ENOBUFS;
	__atomic_store_n(&port->pace_busy, 1, __ATOMIC_RELAXED);
	return 0;
}

/*
 * Queue the gap the pacer owes, as far as the TX buffer has room.  What
 * does not fit stays owed (pace_may_send() holds the next data frame back
 * until it is paid), so a frame and its gap always reach the NIC whole and
 * in order: a full NIC queue delays the pair, it never turns the gap into
 * a back-to-back burst.  Same when the gap pool is empty (the NIC still
 * holds 4095 gap frames).
 */
static void send_gap(struct dp_port *port, struct dp_pacer *p,
		     uint64_t now_tsc)
{
	struct rte_mbuf *g[DP_BURST];
	uint16_t sizes[DP_BURST];
	uint16_t i, n, room;

	while (p->q.gap_debt_bytes >= PACE_GAP_MIN_WIRE_BYTES) {
		if (!dp_tx_room(port, 1))
			return;
		room = (uint16_t)(DP_BURST - port->nb_tx);
		if (rte_pktmbuf_alloc_bulk(p->gap_pool, g, room) != 0)
			return;
		n = pace_gap_plan(&p->q, sizes, room);
		for (i = 0; i < n; i++) {
			rte_pktmbuf_attach(g[i], p->gap_frame);
			g[i]->data_len = sizes[i];
			g[i]->pkt_len = sizes[i];
			dp_tx_push(port, g[i], now_tsc); /* has room */
		}
		if (n < room)
			rte_pktmbuf_free_bulk(g + n, (unsigned int)(room - n));
	}
}

/*
 * Release the frames whose time has come.  A frame leaves the fifo only
 * when the TX buffer has room for it: a full NIC queue holds paced frames
 * back instead of dropping them.  In GAP mode a frame leaves only once
 * the NIC has taken everything before it (the previous frame's gap
 * included): each burst carries one frame and as much of its gap as fits.
 */
void dp_pace_drain(struct dp_port *port, uint64_t now_tsc)
{
	struct dp_pacer *p = port->pacer;
	bool gap = p->prof.mode == PACE_MODE_GAP, queued = false;

	/* Clear before reading the rate mailbox: a rate published after
	 * this sets it again, so the next poll comes back here. */
	__atomic_exchange_n(&port->pace_busy, 0, __ATOMIC_ACQUIRE);
	port->st.pace_polls++;
	if (unlikely(pace_queue_sync(&p->q) != 0))
		set_limit(port, p);
	if (gap) {
		queued = port->nb_tx != 0;
		send_gap(port, p, now_tsc); /* what the last frame still owes */
	}
	for (;;) {
		struct rte_mbuf *m = p->next;

		if (m == NULL &&
		    rte_ring_sc_dequeue(p->fifo, (void **)&m) != 0)
			break;
		if ((p->q.rate_bps != 0 && !pace_may_send(&p->q, now_tsc)) ||
		    !dp_tx_room(port, gap && p->q.rate_bps != 0 ? DP_BURST
								: 1)) {
			p->next = m;
			break;
		}
		p->next = NULL;
		if (p->q.rate_bps != 0) {
			if (p->backlogged)
				pace_frame_sent_backlogged(
					&p->q, rte_pktmbuf_pkt_len(m), now_tsc);
			else
				pace_frame_sent(&p->q, rte_pktmbuf_pkt_len(m),
						now_tsc);
		}
		p->backlogged = !rte_ring_empty(p->fifo);
		dp_tx_push(port, m, now_tsc); /* has room */
		queued = true;
		if (gap && p->q.rate_bps != 0)
			send_gap(port, p, now_tsc);
	}
	if (queued)
		dp_tx_burst_now(port);
	if (p->q.rate_bps != 0 || p->next != NULL ||
	    !rte_ring_empty(p->fifo) ||
	    (gap && p->q.gap_debt_bytes >= PACE_GAP_MIN_WIRE_BYTES))
		__atomic_store_n(&port->pace_busy, 1, __ATOMIC_RELAXED);
}

void dp_pace_release(struct dp_port *port)
{
	struct dp_pacer *p = port->pacer;
	struct rte_mbuf *m;

	if (p == NULL)
		return;
	__atomic_store_n(&port->pace_busy, 0, __ATOMIC_RELAXED);
	rte_pktmbuf_free(p->next);
	while (rte_ring_sc_dequeue(p->fifo, (void **)&m) == 0)
		rte_pktmbuf_free(m);
	rte_ring_free(p->fifo);
	rte_pktmbuf_free(p->gap_frame);
	/* after the device is closed (dp_port_close): the NIC may hold
	 * gap frames until then */
	rte_mempool_free(p->gap_pool);
	rte_free(p);
	port->pacer = NULL;
}

int dp_port_set_rate(struct dp_port *port, uint64_t rate_bps)
{
	struct dp_pacer *p = port->pacer;

	int rc;

	if (p == NULL)
		return -EINVAL;
	rc = pace_queue_set_rate_bps(&p->q, rate_bps);
	if (rc == 0) /* after the mailbox: the poll reads it after this */
		__atomic_store_n(&port->pace_busy, 1, __ATOMIC_RELEASE);
	return rc;
}

uint64_t dp_port_rate(const struct dp_port *port)
{
	const struct dp_pacer *p = port->pacer;

	return p != NULL ? p->q.rate_bps : 0;
}

void dp_pace_stats(const struct dp_port *port, struct dp_stats *st)
{
	const struct dp_pacer *p = port->pacer;
	struct pace_stats ps;

	if (p == NULL)
		return;
	pace_queue_stats_get(&p->q, &ps);
	st->pace_clamps = ps.clamps;
	st->pace_late = ps.late_polls;
	st->pace_rate_changes = ps.rate_changes;
}

bool dp_port_tx_pending(const struct dp_port *port)
{
	const struct dp_pacer *p = port->pacer;

	return port->nb_tx != 0 ||
	       (p != NULL && (p->next != NULL || !rte_ring_empty(p->fifo)));
}

unsigned int dp_port_tx_queued(const struct dp_port *port)
{
	const struct dp_pacer *p = port->pacer;
	unsigned int n = port->nb_tx;

	if (p != NULL)
		n += rte_ring_count(p->fifo) + (p->next != NULL);
	return n;
}
