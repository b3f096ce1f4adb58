/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_pace.c - the port's pacer: pacing/ decides, this file moves mbufs.
 *
 * Every port has a pacer, so the rate can change at run time; at rate 0
 * and with no per-destination rate, frames bypass it as long as nothing is
 * queued (order is kept: once a frame waits, later ones queue behind it).
 * dp_pace_xmit is queue 0's transmit entry (output and ARP call it, as
 * Linux's neighbour code calls dev_queue_xmit into the qdisc); released
 * frames go into queue 0's TX object (dp_txq.c), which never calls back.
 *
 * Frames wait in per-destination flows (pacing/pace_fq.c, keyed by the
 * IPv4 destination; ARP and other frames share one unpaced flow): a frame
 * leaves when its destination's own deadline has come and the queue's
 * total rate allows, so a destination paced at B/N never holds back
 * another one (seed 001's all-to-all, where each receiver is its own
 * bottleneck).  Per-destination deadlines are on the TSC in both modes;
 * the total is realised as its mode says.
 *
 *   DEADLINE mode (vdevs: a gap frame costs no wire time there): frames wait
 *   in the fifo; each poll reads the clock once and releases the frames
 *   whose departure time has come (pace_may_send / pace_frame_sent), and
 *   pushes them to the NIC at once: the l2fwd-style drain deadline would
 *   otherwise bunch paced frames together.
 *
 *   GAP mode (real line rate): each real frame is followed by the gap
 *   frames pace_gap_plan() asks for (MAC Control frames the next switch
 *   discards, never PAUSE: pacing/pace_gap.c).  They are indirect mbufs
 *   pointing into one pre-built maximum-size gap frame (a prefix of one
 *   padded with zeros is itself one), so no gap frame is written per
 *   packet.  Frames leave back to back; the gap frames set the spacing.
 *
 *   Gap mode needs the link speed (the gap is computed from it) and gap
 *   frames that actually leave: an unknown speed refuses pace=gap unless
 *   link= gives it; a driver known to drop transmitted MAC Control frames
 *   (i40e installs such a filter), or a probe burst the port's counters do
 *   not show leaving, moves the pacer to deadline mode with a log line
 *   naming why (dp_pace_choose, dp_pace_gap_blocked).
 *
 * Rate changes are published by dp_port_set_rate() from any thread and
 * applied by pace_queue_sync() at the next poll of the owning thread;
 * per-destination rates (dp_port_set_dest_rate) travel through an MPSC
 * ring of requests, applied at the same point.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_ring_elem.h>

#include "dp_internal.h"

#define GAP_PLAN_MAX 16
#define DEST_REQ_RING 1024	/* rate requests not yet applied */

/* A per-destination rate request, from any thread to the owning one. */
struct dest_req {
	uint32_t is_default;	/* 1: the default rate, ip_be unused */
	uint32_t ip_be;		/* destination, network order */
	uint64_t rate_bps;	/* or DP_DEST_RATE_DEFAULT */
};

struct dp_pacer {
	struct pace_queue q;		/* total rate (cache aligned) */
	struct pace_profile prof;	/* validated, precomputed */
	struct pace_fq *fq;		/* per-destination flows of mbufs */
	struct rte_ring *dest_reqs;	/* struct dest_req, MP/SC */
	struct rte_mbuf *gap_frame;	/* max-size gap frame, direct */
	bool backlogged;		/* a frame waited when the last left */
	uint32_t limit_frames;		/* total depth for pace_queue_us */
	struct rte_mempool *gap_pool;	/* indirect mbufs for gap frames */
	_Atomic uint64_t dest_default_bps; /* last default requested */
};

/*
 * A paced queue holds at most pace_queue_us of full-size frames: beyond
 * that the pacer refuses the frame (-ENOBUFS, counted as pace_drops) and
 * SCTP keeps the packet's chunks unsent (sg_conn_output hands ENOBUFS
 * back to usrsctp), so the queueing stays in usrsctp's send queue, where
 * no RTT clock runs, instead of piling up a delay here that outlasts the
 * minimum RTO.
 */
static void set_limit(struct dp_port *port, struct dp_pacer *p)
{
	uint64_t frame_bits = (uint64_t)pace_wire_bytes(port->mtu +
						RTE_ETHER_HDR_LEN) * 8;
	uint64_t n = p->q.rate_bps / 1000 * port->cfg.pace_queue_us / 1000 /
		     frame_bits;

	if (n < 16)
		n = 16;
	if (n > port->cfg.tx_hold)
		n = port->cfg.tx_hold;
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

int dp_pace_choose(const struct dp_config *cfg, uint32_t speed_mbps,
		   bool *gap_p, uint64_t *link_bps_p, const char **why_p)
{
	bool known = cfg->link_bps != 0 || speed_mbps != 0;

	*why_p = NULL;
	*link_bps_p = cfg->link_bps != 0 ? cfg->link_bps
		      : speed_mbps != 0	 ? (uint64_t)speed_mbps * 1000000
					 : DP_PACE_LINK_UNKNOWN_BPS;
	switch (cfg->pace_mode) {
	case DP_PACE_GAP:
		if (!known)
			return -EINVAL;
		*gap_p = true;
		return 0;
	case DP_PACE_DEADLINE:
		*gap_p = false;
		return 0;
	default:
		*gap_p = cfg->is_pci && known;
		if (cfg->is_pci && !known)
			*why_p = "the driver reports no link speed (give "
				 "link= for gap mode)";
		return 0;
	}
}

/* MAC Control frames some drivers' transmit path drops (a filter the PMD
 * installs): gap frames would vanish and frames go back to back. */
static const char *const gap_dropping_drivers[] = {
	"net_i40e", /* i40e_add_tx_flow_control_drop_filter */
};

const char *dp_pace_gap_blocked(const char *driver, uint32_t probe_sent,
				uint64_t probe_left, bool counters)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(gap_dropping_drivers); i++)
		if (strcmp(driver, gap_dropping_drivers[i]) == 0)
			return "its driver drops transmitted MAC Control "
			       "frames (ether type 0x8808)";
	if (!counters)
		return "the port has no TX counters to show that gap frames "
		       "leave";
	if (probe_sent == 0)
		return "the port took none of the probe's gap frames";
	if (probe_left < probe_sent)
		return "the port's TX counters did not count the probe's gap "
		       "frames: they do not leave";
	return NULL;
}

/*
 * Send GAP_PROBE_FRAMES minimum-size gap frames and wait (up to
 * GAP_PROBE_WAIT_MS) for the port's opackets counter to count them.
 * Before the port carries traffic.  @return why gap mode cannot work,
 * or NULL.
 */
#define GAP_PROBE_FRAMES 32
#define GAP_PROBE_WAIT_MS 100

static const char *gap_probe(struct dp_port *port, const char *driver,
			     uint32_t *sent_p, uint64_t *left_p)
{
	struct rte_mbuf *m[GAP_PROBE_FRAMES];
	struct rte_eth_stats before, after;
	struct timespec ts = { 0, 1000 * 1000 };
	const char *why;
	unsigned int n = 0, i, waited;

	*sent_p = 0;
	*left_p = 0;
	why = dp_pace_gap_blocked(driver, 1, 1, true);
	if (why != NULL)
		return why;
	if (rte_eth_stats_get(port->port_id, &before) != 0)
		return dp_pace_gap_blocked(driver, 0, 0, false);
	for (i = 0; i < GAP_PROBE_FRAMES; i++) {
		m[n] = rte_pktmbuf_alloc(port->pool);
		if (m[n] == NULL)
			break;
		if (rte_pktmbuf_append(m[n], PACE_FRAME_MIN_BYTES) == NULL ||
		    pace_gap_frame_build(rte_pktmbuf_mtod(m[n], void *),
					 PACE_FRAME_MIN_BYTES,
					 PACE_FRAME_MIN_BYTES,
					 port->fctx.mac.addr_bytes) != 0) {
			rte_pktmbuf_free(m[n]);
			break;
		}
		n++;
	}
	for (i = 0; i < n && *sent_p < n; i++)
		*sent_p += rte_eth_tx_burst(port->port_id, 0, m + *sent_p,
					    (uint16_t)(n - *sent_p));
	if (*sent_p < n)
		rte_pktmbuf_free_bulk(m + *sent_p, n - *sent_p);
	/* gap frames the NIC took, as the pacer's are (the peer drops and
	 * counts them) */
	port->st.gap_frames += *sent_p;
	for (waited = 0; waited <= GAP_PROBE_WAIT_MS; waited++) {
		if (rte_eth_stats_get(port->port_id, &after) != 0)
			return dp_pace_gap_blocked(driver, 0, 0, false);
		*left_p = after.opackets - before.opackets;
		if (*left_p >= *sent_p && *sent_p != 0)
			break;
		nanosleep(&ts, NULL);
	}
	return dp_pace_gap_blocked(driver, *sent_p, *left_p, true);
}

int dp_tx_pace_setup(struct dp_port *port, uint32_t speed_mbps)
{
	const struct dp_config *cfg = &port->cfg;
	struct pace_config pc;
	struct pace_fq_config fc;
	struct dp_pacer *p;
	char name[RTE_RING_NAMESIZE];
	struct rte_eth_dev_info info;
	const char *driver = "?", *why;
	bool gap;
	int rc;

	if (rte_eth_dev_info_get(port->port_id, &info) == 0)
		driver = info.driver_name;
	p = rte_zmalloc("dp_pacer", sizeof(*p), RTE_CACHE_LINE_SIZE);
	if (p == NULL)
		return -ENOMEM;
	pace_config_default(&pc);
	pc.tsc_hz = dp_tsc_hz();
	pc.target_rate_bps = cfg->pace_rate_bps;
	if (dp_pace_choose(cfg, speed_mbps, &gap, &pc.link_rate_bps,
			   &why) != 0) {
		SDP_LOG(ERR, DP, "port %u (%s): pace=gap needs the link "
			"speed, which the driver does not report: give it "
			"with link= (e.g. link=25G), or use pace=deadline",
			port->port_id, driver);
		rc = -EINVAL;
		goto err_free;
	}
	if (gap) {
		uint32_t sent;
		uint64_t left;

		why = gap_probe(port, driver, &sent, &left);
		if (why != NULL) {
			gap = false;
			SDP_LOG(WARN, DP, "port %u (%s): gap frames do not "
				"leave this port: %s (probe: %u sent, %" PRIu64
				" counted); the pacer uses deadline mode (TSC "
				"deadlines, less exact at line rate)",
				port->port_id, driver, why, sent, left);
		} else {
			SDP_LOG(INFO, DP, "port %u: gap frames leave the port "
				"(probe: %u sent, %" PRIu64 " counted)",
				port->port_id, sent, left);
		}
	} else if (why != NULL) {
		SDP_LOG(INFO, DP, "port %u (%s): pacer in deadline mode: %s",
			port->port_id, driver, why);
	}
	pc.mode = gap ? PACE_MODE_GAP : PACE_MODE_DEADLINE;
	/* gap frames are MAC Control frames of at most a 9000-MTU jumbo frame, also
	 * when the port's MTU is larger */
	if (pc.mode == PACE_MODE_GAP)
		pc.gap_frame_max_bytes = RTE_MIN((uint32_t)port->mtu +
						 DP_ETH_OVERHEAD,
						 PACE_GAP_FRAME_MAX_BYTES);
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
	memset(&fc, 0, sizeof(fc));
	fc.max_flows = cfg->pace_dests;
	fc.max_frames = cfg->tx_hold;
	fc.default_rate_bps = cfg->pace_dest_rate_bps;
	fc.flow_queue_ns = (uint64_t)cfg->pace_queue_us * 1000;
	fc.full_frame_bytes = (uint32_t)port->mtu + RTE_ETHER_HDR_LEN;
	rc = pace_fq_create(&p->prof, &fc, &p->fq);
	if (rc != 0) {
		SDP_LOG(ERR, DP, "port %u: per-destination pacing config "
			"rejected (dest_rate=%" PRIu64 " pace_dests=%u): fix "
			"dest_rate= or pace_dests=", port->port_id,
			cfg->pace_dest_rate_bps, cfg->pace_dests);
		goto err_free;
	}
	atomic_init(&p->dest_default_bps, cfg->pace_dest_rate_bps);
	snprintf(name, sizeof(name), "dp_dreq_%u", port->port_id);
	p->dest_reqs = rte_ring_create_elem(name, sizeof(struct dest_req),
					    DEST_REQ_RING, rte_socket_id(),
					    RING_F_SC_DEQ);
	if (p->dest_reqs == NULL) {
		rc = -ENOMEM;
		goto err_fq;
	}
	if (p->prof.mode == PACE_MODE_GAP) {
		rc = gap_frame_setup(port, p);
		if (rc != 0)
			goto err_ring;
	}
	set_limit(port, p);
	port->pacer = p;
	__atomic_store_n(&port->pace_busy,
			 p->q.rate_bps != 0 || pace_fq_paced(p->fq),
			 __ATOMIC_RELAXED);
	port->link_bps = pc.link_rate_bps;
	log_setup(port, p);
	if (p->q.rate_bps != 0)
		SDP_LOG(INFO, DP, "port %u: pacer queue %u frames (%u us)",
			port->port_id, p->limit_frames,
			port->cfg.pace_queue_us);
	if (cfg->pace_dest_rate_bps != 0)
		SDP_LOG(INFO, DP, "port %u: destinations paced at %" PRIu64
			" bit/s each, %u with own state", port->port_id,
			cfg->pace_dest_rate_bps, cfg->pace_dests);
	return 0;

err_ring:
	rte_pktmbuf_free(p->gap_frame);
	rte_mempool_free(p->gap_pool);
	rte_ring_free(p->dest_reqs);
err_fq:
	pace_fq_destroy(p->fq);
err_free:
	rte_free(p);
	return rc;
}

/*
 * Does this SCTP packet (common header first, len bytes) carry DATA or
 * I-DATA?  Control chunks come first in a bundle (RFC 9260 6.10), so the
 * walk is short; a malformed chunk length counts as data (paced).
 */
static bool sctp_has_data(const uint8_t *sctp, uint32_t len)
{
	struct dp_chunk_walk w;
	struct dp_chunk c;

	dp_chunk_walk_init(&w, sctp, len, DP_CHUNK_ALL);
	return dp_chunk_find_data(&w, &c) || w.bad;
}

/*
 * The frame's flow: its IPv4 destination, or PACE_FQ_DEST_NONE for ARP
 * and other non-IPv4 frames, and for SCTP packets without DATA (SACKs,
 * heartbeats, the handshake).  Those leave first, under the total only:
 * a SACK queued behind our own paced data to its destination would add
 * that queue's delay to the peer's RTT (and fire its T3 timer), for no
 * gain in load.
 */
static uint32_t frame_dest(const struct dp_port *port,
			   const struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eth;
	const struct rte_ipv4_hdr *ip;
	uint32_t len = rte_pktmbuf_data_len(m), l4;

	if (len < RTE_ETHER_HDR_LEN + sizeof(*ip))
		return PACE_FQ_DEST_NONE;
	eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	if (eth->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4))
		return PACE_FQ_DEST_NONE;
	ip = (const struct rte_ipv4_hdr *)(eth + 1);
	l4 = RTE_ETHER_HDR_LEN + (uint32_t)(ip->version_ihl & 0xf) * 4;
	if (ip->next_proto_id == DP_IPPROTO_UDP && port->udp_encap)
		l4 += 8; /* RFC 6951: SCTP after the UDP header */
	else if (ip->next_proto_id != DP_IPPROTO_SCTP)
		return ip->dst_addr;
	if (l4 + 12 <= len &&
	    !sctp_has_data((const uint8_t *)eth + l4, len - l4))
		return PACE_FQ_DEST_NONE;
	return ip->dst_addr;
}

/* Apply the per-destination rate requests other threads queued. */
static void apply_dest_reqs(struct dp_pacer *p)
{
	struct dest_req r;

	while (rte_ring_sc_dequeue_elem(p->dest_reqs, &r, sizeof(r)) == 0) {
		/* both log their own errors; the request is dropped */
		if (r.is_default)
			(void)pace_fq_set_default_rate_bps(p->fq, r.rate_bps);
		else
			(void)pace_fq_set_dest_rate_bps(p->fq, r.ip_be,
							r.rate_bps);
	}
}

/* @return 0; -ENOBUFS queue full (the caller frees and counts
 * pace_drops); -EAGAIN bypassed to the TX buffer, which dropped and
 * counted it (freed). */
static int pace_enqueue(struct dp_port *port, struct rte_mbuf *m,
			uint64_t now_tsc)
{
	struct dp_pacer *p = port->pacer;
	uint32_t dest;
	int rc;

	/* A rate set just before this send (an MPI collective starting)
	 * applies to it, not from the next poll on: otherwise a whole
	 * congestion window could leave unpaced first. */
	if (unlikely(!rte_ring_empty(p->dest_reqs)))
		apply_dest_reqs(p);
	if (unlikely(pace_queue_sync(&p->q) != 0))
		set_limit(port, p);
	if (p->q.rate_bps == 0 && pace_fq_frames(p->fq) == 0 &&
	    !pace_fq_paced(p->fq))
		return dp_txq_push(port, &port->txq[0], m, now_tsc) == 0
			       ? 0
			       : -EAGAIN;
	dest = frame_dest(port, m);
	/* control frames do not count against pace_queue_us: a SACK dropped
	 * because our own data filled the queue costs the peer an RTO */
	if (unlikely(pace_fq_frames(p->fq) - pace_fq_control_frames(p->fq) >=
		     p->limit_frames && dest != PACE_FQ_DEST_NONE))
		return -ENOBUFS;
	rc = pace_fq_enqueue(p->fq, dest, m, rte_pktmbuf_pkt_len(m), now_tsc);
	if (rc == 0)
		__atomic_store_n(&port->pace_busy, 1, __ATOMIC_RELAXED);
	return rc;
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
	struct dp_txq *txq = &port->txq[0];
	struct rte_mbuf *g[DP_BURST];
	uint16_t sizes[DP_BURST];
	uint16_t i, n, room;

	while (p->q.gap_debt_bytes >= PACE_GAP_MIN_WIRE_BYTES) {
		if (!dp_txq_room(port, txq, 1))
			return;
		room = (uint16_t)(DP_BURST - txq->nb_tx);
		if (rte_pktmbuf_alloc_bulk(p->gap_pool, g, room) != 0)
			return;
		n = pace_gap_plan(&p->q, sizes, room);
		for (i = 0; i < n; i++) {
			rte_pktmbuf_attach(g[i], p->gap_frame);
			g[i]->data_len = sizes[i];
			g[i]->pkt_len = sizes[i];
			dp_txq_push(port, txq, g[i], now_tsc); /* has room */
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
	struct dp_txq *txq = &port->txq[0];
	bool gap = p->prof.mode == PACE_MODE_GAP, queued = false;

	/* Clear before reading the rate mailbox: a rate published after
	 * this sets it again, so the next poll comes back here. */
	__atomic_exchange_n(&port->pace_busy, 0, __ATOMIC_ACQUIRE);
	port->st.pace_polls++;
	if (unlikely(pace_queue_sync(&p->q) != 0))
		set_limit(port, p);
	if (unlikely(!rte_ring_empty(p->dest_reqs)))
		apply_dest_reqs(p);
	if (gap) {
		queued = txq->nb_tx != 0;
		send_gap(port, p, now_tsc); /* what the last frame still owes */
	}
	while (pace_fq_frames(p->fq) != 0) {
		struct rte_mbuf *m;
		uint32_t len;

		/* DEADLINE mode: control frames (pace_fq serves them first)
		 * do not wait for the total either, as sch_fq's internal
		 * flow; they are still charged to it.  GAP mode keeps every
		 * frame behind its predecessor's gap. */
		if ((p->q.rate_bps != 0 && !pace_may_send(&p->q, now_tsc) &&
		     (gap || pace_fq_control_frames(p->fq) == 0)) ||
		    !dp_txq_room(port, txq,
				 gap && p->q.rate_bps != 0 ? DP_BURST : 1))
			break;
		m = pace_fq_dequeue(p->fq, now_tsc, &len);
		if (m == NULL)
			break; /* no destination is due */
		if (p->q.rate_bps != 0) {
			if (p->backlogged)
				pace_frame_sent_backlogged(&p->q, len,
							   now_tsc);
			else
				pace_frame_sent(&p->q, len, now_tsc);
		}
		/* Backlogged for the total only when nothing holds frames
		 * back but the total itself: frames waiting for their
		 * destination's deadline are not time the total lost. */
		p->backlogged = pace_fq_frames(p->fq) != 0 &&
				!pace_fq_paced(p->fq);
		dp_txq_push(port, txq, m, now_tsc); /* has room */
		queued = true;
		if (gap && p->q.rate_bps != 0)
			send_gap(port, p, now_tsc);
	}
	if (queued)
		dp_txq_burst(port, txq);
	/* Come back next poll while anything is paced or queued. */
	if (p->q.rate_bps != 0 || pace_fq_paced(p->fq) ||
	    pace_fq_frames(p->fq) != 0 || !rte_ring_empty(p->dest_reqs) ||
	    (gap && p->q.gap_debt_bytes >= PACE_GAP_MIN_WIRE_BYTES))
		__atomic_store_n(&port->pace_busy, 1, __ATOMIC_RELAXED);
}

int dp_pace_xmit(struct dp_port *port, struct rte_mbuf *m, uint64_t now_tsc)
{
	int rc;

	if (port->pacer == NULL)
		return dp_txq_push(port, &port->txq[0], m, now_tsc);
	rc = pace_enqueue(port, m, now_tsc);
	if (unlikely(rc == -ENOBUFS)) {
		/* the pacer's queue holds pace_queue_us already */
		port->st.pace_drops++;
		rte_pktmbuf_free(m);
	}
	/* -EAGAIN: bypassed the pacer, dropped by the TX buffer (counted) */
	return rc == 0 ? 0 : -ENOBUFS;
}

void dp_pace_release(struct dp_port *port)
{
	struct dp_pacer *p = port->pacer;
	struct rte_mbuf *m;

	if (p == NULL)
		return;
	__atomic_store_n(&port->pace_busy, 0, __ATOMIC_RELAXED);
	while ((m = pace_fq_purge_one(p->fq)) != NULL)
		rte_pktmbuf_free(m);
	pace_fq_destroy(p->fq);
	rte_ring_free(p->dest_reqs);
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

static int dest_req_post(struct dp_port *port, const struct dest_req *r)
{
	struct dp_pacer *p = port->pacer;

	if (p == NULL)
		return -EINVAL;
	if (r->rate_bps != DP_DEST_RATE_DEFAULT &&
	    r->rate_bps > p->prof.link_rate_bps) {
		SDP_LOG(ERR, DP, "port %u: destination rate %" PRIu64
			" bit/s is above the link's %" PRIu64 " bit/s; lower "
			"it (e.g. B/N), or 0 for no per-destination pacing",
			port->port_id, r->rate_bps, p->prof.link_rate_bps);
		return -EINVAL;
	}
	if (rte_ring_mp_enqueue_elem(p->dest_reqs, (void *)r,
				     sizeof(*r)) != 0) {
		SDP_LOG(ERR, DP, "port %u: %u destination rate requests "
			"wait to be applied: poll the port (dp_port_poll) "
			"between requests", port->port_id, DEST_REQ_RING);
		return -EBUSY;
	}
	/* after the request: the poll that sees this reads it */
	__atomic_store_n(&port->pace_busy, 1, __ATOMIC_RELEASE);
	return 0;
}

int dp_port_set_dest_rate(struct dp_port *port, uint32_t ip_be,
			  uint64_t rate_bps)
{
	struct dest_req r = {.is_default = 0, .ip_be = ip_be,
			     .rate_bps = rate_bps};

	if (ip_be == PACE_FQ_DEST_NONE) {
		SDP_LOG(ERR, DP, "destination rate for address 0.0.0.0: "
			"give the peer's IPv4 address");
		return -EINVAL;
	}
	return dest_req_post(port, &r);
}

int dp_port_set_dest_default_rate(struct dp_port *port, uint64_t rate_bps)
{
	struct dest_req r = {.is_default = 1, .ip_be = 0,
			     .rate_bps = rate_bps};
	int rc;

	if (rate_bps == DP_DEST_RATE_DEFAULT) {
		SDP_LOG(ERR, DP, "the default destination rate cannot be "
			"DP_DEST_RATE_DEFAULT; give a rate in bit/s or 0");
		return -EINVAL;
	}
	rc = dest_req_post(port, &r);
	if (rc == 0)
		atomic_store(&((struct dp_pacer *)port->pacer)
				      ->dest_default_bps, rate_bps);
	return rc;
}

uint64_t dp_port_dest_default_rate(const struct dp_port *port)
{
	struct dp_pacer *p = port->pacer;

	return p != NULL ? atomic_load(&p->dest_default_bps) : 0;
}

void dp_pace_stats(const struct dp_port *port, struct dp_stats *st)
{
	const struct dp_pacer *p = port->pacer;
	struct pace_stats ps;
	struct pace_fq_stats fs;

	if (p == NULL)
		return;
	pace_queue_stats_get(&p->q, &ps);
	pace_fq_stats_get(p->fq, &fs);
	st->pace_clamps = ps.clamps + fs.clamps;
	st->pace_late = ps.late_polls + fs.late_polls;
	st->pace_rate_changes = ps.rate_changes;
	st->pace_dest_drops = fs.flow_drops;
	st->pace_dest_overflow = fs.overflow_frames;
}

bool dp_pace_active(const struct dp_port *port)
{
	struct dp_pacer *p = port->pacer;

	return p != NULL &&
	       (p->q.rate_bps != 0 || pace_fq_paced(p->fq) ||
		pace_fq_frames(p->fq) != 0 || !rte_ring_empty(p->dest_reqs) ||
		atomic_load_explicit(&p->q.pending_rate_bps,
				     memory_order_relaxed) != UINT64_MAX);
}

bool dp_port_tx_pending(const struct dp_port *port)
{
	const struct dp_pacer *p = port->pacer;

	return port->txq[0].nb_tx != 0 || port->txq[0].nb_held != 0 ||
	       (p != NULL && pace_fq_frames(p->fq) != 0);
}

unsigned int dp_port_tx_queued(const struct dp_port *port)
{
	const struct dp_pacer *p = port->pacer;
	unsigned int n = port->txq[0].nb_tx + port->txq[0].nb_held;

	if (p != NULL)
		n += pace_fq_frames(p->fq);
	return n;
}
