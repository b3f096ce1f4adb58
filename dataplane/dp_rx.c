/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_rx.c - the receive half of the port's poll loop (queue 0's, and
 * queue k's with queues=N) and the zero-copy hand-off to the layer above.
 * A poll first does its transmit work (dp_out_drain), then receives.
 *
 * A frame is never copied: after classification the mbuf's data offset is
 * advanced past the Ethernet/IPv4(/UDP) headers with rte_pktmbuf_adj() and
 * the mbuf pointer itself goes onto the SPSC rx ring.  The headers stay in
 * the buffer in front of the data, where dp_pkt_info() finds them through
 * the l2_len/l3_len/l4_len fields set here.
 *
 * Order of checks for SCTP: length (dp_frame_classify), then CRC32c
 * (the NIC's verdict when it checked, software otherwise; crc=none accepts
 * checksum 0 unverified, RFC 9653), then delivery.
 */
#include <string.h>

#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf_dyn.h>

#include "dp_internal.h"
#include "sdp_trace.h"

/* Per-packet metadata kept in the mbuf while it sits on the rx ring. */
static inline void set_meta(struct rte_mbuf *m, const struct dp_parsed *p)
{
	m->l2_len = RTE_ETHER_HDR_LEN;
	m->l3_len = (uint16_t)(p->udp_encap ? p->l4_off - 8 - p->l3_off
					    : p->l4_off - p->l3_off) &
		    0x1ff;
	m->l4_len = p->udp_encap ? 8 : 0;
	m->packet_type = p->proto == DP_IPPROTO_SCTP ? RTE_PTYPE_L4_SCTP
						     : RTE_PTYPE_L4_NONFRAG;
}

/*
 * A packet with checksum 0 that fails verification on a port that verifies
 * every CRC: its peer sends zero checksums (crc=none, memif's default).
 * Every such packet is dropped and counted; the cause is logged once.
 */
static void crc_zero_refused(struct dp_port *port, const struct dp_parsed *p)
{
	uint32_t src = rte_be_to_cpu_32(p->src_ip_be);

	if (__atomic_exchange_n(&port->crc_zero_logged, true, __ATOMIC_RELAXED))
		return;
	SDP_LOG(ERR, DP, "port %u: dropped an SCTP packet from %u.%u.%u.%u "
		"with checksum 0: that peer sends without CRC32c (crc=none) "
		"and this port verifies (crc=%s): set crc=isal on the peer, "
		"or crc=none here (memif); counted as drop sctp_crc_zero",
		port->port_id,
		src >> 24, (src >> 16) & 0xff, (src >> 8) & 0xff, src & 0xff,
		dp_crc_name(port->crc));
}

/* @return DP_DROP_MAX when the SCTP packet passes, else the drop reason. */
static enum dp_drop crc_check(struct dp_port *port, struct dp_stats *st,
			      struct rte_mbuf *m, const struct dp_parsed *p)
{
	uint64_t fl = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;
	const uint8_t *sctp =
		rte_pktmbuf_mtod_offset(m, const uint8_t *, p->l4_off);
	enum dp_crc_rx r;

	if (port->crc_rx_offload && !p->udp_encap) {
		if (fl == RTE_MBUF_F_RX_L4_CKSUM_GOOD) {
			st->crc_hw++;
			return DP_DROP_MAX;
		}
		if (fl == RTE_MBUF_F_RX_L4_CKSUM_BAD) {
			st->crc_hw++;
			r = memcmp(sctp + 8, "\0\0\0\0", 4) == 0
				    ? DP_CRC_RX_BAD_ZERO
				    : DP_CRC_RX_BAD;
			goto bad;
		}
	}
	r = dp_sctp_crc_check(port->crc == DP_CRC_OFFLOAD ? DP_CRC_ISAL
							  : port->crc,
			      sctp, p->l4_len);
	if (likely(r == DP_CRC_RX_ZERO)) {
		st->crc_zero_rx++;
		return DP_DROP_MAX;
	}
	st->crc_sw++;
	if (likely(r == DP_CRC_RX_OK))
		return DP_DROP_MAX;
bad:
	if (r == DP_CRC_RX_BAD_ZERO) {
		crc_zero_refused(port, p);
		return DP_DROP_SCTP_CRC_ZERO;
	}
	return DP_DROP_SCTP_CRC;
}

void dp_rx_one(struct dp_port *port, struct dp_stats *st,
	       struct rte_ring *ring, bool q0, struct rte_mbuf *m,
	       uint64_t now_tsc)
{
	struct dp_frame_ctx fctx;
	struct dp_parsed p;
	enum dp_verdict v;
	uint32_t pkt_len = rte_pktmbuf_pkt_len(m);

	st->rx_bytes += pkt_len;
	if (unlikely(m->nb_segs != 1)) {
		/* Pools are sized for one frame per mbuf; a chained frame
		 * means a PMD split it (e.g. memif bsize below the MTU). */
		st->drops[DP_DROP_IP_LEN]++;
		rte_pktmbuf_free(m);
		return;
	}
	fctx = port->fctx; /* per call: queues' threads share the port */
	fctx.ip_cksum_checked =
		port->ip_cksum_rx_offload &&
		(m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) ==
			RTE_MBUF_F_RX_IP_CKSUM_GOOD;
	v = dp_frame_classify(&fctx, rte_pktmbuf_mtod(m, uint8_t *),
			      pkt_len, &p);
	if (unlikely(v == DP_V_DROP && p.drop == DP_DROP_ETHERTYPE) && q0 &&
	    port->memif && dp_bye_input(port, m))
		return;
	if (v == DP_V_ARP) {
		if (unlikely(!q0)) {
			/* ARP is queue 0's (a memif peer sends it there) */
			st->drops[DP_DROP_ARP]++;
			rte_pktmbuf_free(m);
			return;
		}
		dp_arp_lock(port);
		dp_arp_port_input(port, m, now_tsc);
		dp_arp_unlock(port);
		return;
	}
	if (v == DP_V_DELIVER && p.proto == DP_IPPROTO_SCTP) {
		p.drop = crc_check(port, st, m, &p);
		if (p.drop != DP_DROP_MAX)
			v = DP_V_DROP;
	}
	if (unlikely(q0 && dp_drop_active(&port->cfg.drop_rx)) &&
	    v == DP_V_DELIVER && p.proto == DP_IPPROTO_SCTP &&
	    dp_sctp_has_data(rte_pktmbuf_mtod_offset(m, const uint8_t *,
						     p.l4_off),
			     p.l4_len) &&
	    dp_drop_decide(&port->drop_rx_st, &port->cfg.drop_rx)) {
		v = DP_V_DROP;
		p.drop = DP_DROP_HOOK;
	}
	if (v == DP_V_DROP) {
		st->drops[p.drop]++;
		rte_pktmbuf_free(m);
		return;
	}
	/* Neighbours are learned from ARP only, never from the Ethernet
	 * source of IP traffic: no checksum covers that address (the IPv4
	 * checksum covers the IP header, CRC32c the SCTP packet), so one
	 * frame corrupted after the FCS would point the neighbour entry at
	 * a MAC nobody has until it expires. */
	/* Trim Ethernet padding, then move the data offset to the L4
	 * payload: zero copy. */
	rte_pktmbuf_trim(m, (uint16_t)(pkt_len - p.l4_off - p.l4_len));
	rte_pktmbuf_adj(m, p.l4_off);
	set_meta(m, &p);
	if (unlikely(rte_ring_sp_enqueue(ring, m) != 0)) {
		st->drops[DP_DROP_RX_RING_FULL]++;
		rte_pktmbuf_free(m);
		return;
	}
	st->delivered++;
}

unsigned int dp_port_poll(struct dp_port *port, uint64_t now_tsc)
{
	struct rte_mbuf *pkts[DP_BURST];
	uint16_t i, n;

	/* a memif peer is leaving (dp_bye.c): its rings may go any time */
	if (unlikely(dp_rings_off(port)) && !dp_bye_rings_back(port))
		return 0;
	if (unlikely(port->handoff != NULL))
		dp_arp_port_handoff(port, now_tsc);
	dp_out_drain(port, now_tsc);
	if (unlikely(!dp_gate_enter(port)))
		return 0; /* DPDK's interrupt thread runs (dp_gate.c) */
	n = rte_eth_rx_burst(port->port_id, port->queue_id, pkts, DP_BURST);
	dp_gate_leave(port);
	port->st.rx_pkts += n;
	if (n != 0)
		SDP_TRACE(RX_BURST, n);
	for (i = 0; i < n; i++) {
		if (i + 2 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 2], void *));
		dp_rx_one(port, &port->st, port->rx_ring, true, pkts[i],
			  now_tsc);
	}
	if (unlikely((int64_t)(now_tsc - port->arp_next_tick_tsc) >= 0)) {
		dp_arp_lock(port);
		dp_arp_port_tick(port, now_tsc);
		dp_arp_unlock(port);
		port->arp_next_tick_tsc = now_tsc + port->arp.retry_tsc / 4 + 1;
	}
	return n;
}

unsigned int dp_port_recv(struct dp_port *port, struct rte_mbuf **pkts,
			  unsigned int n)
{
	return rte_ring_sc_dequeue_burst(port->rx_ring, (void **)pkts, n,
					 NULL);
}

unsigned int dp_port_poll_queue(struct dp_port *port, uint16_t qid,
				uint64_t now_tsc)
{
	struct rte_mbuf *pkts[DP_BURST];
	struct dp_queue *q;
	uint16_t i, n;

	if (qid == 0)
		return dp_port_poll(port, now_tsc);
	q = &port->xq[qid - 1];
	dp_out_drain_queue(port, qid, now_tsc);
	if (!dp_rings_enter(port, &q->in_burst))
		return 0;
	if (unlikely(!dp_gate_enter(port))) {
		dp_rings_leave(&q->in_burst);
		return 0;
	}
	n = rte_eth_rx_burst(port->port_id, qid, pkts, DP_BURST);
	dp_gate_leave(port);
	dp_rings_leave(&q->in_burst);
	q->st.rx_pkts += n;
	if (n != 0)
		SDP_TRACE(RX_BURST, n);
	for (i = 0; i < n; i++) {
		if (i + 2 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 2], void *));
		dp_rx_one(port, &q->st, q->rx_ring, false, pkts[i], now_tsc);
	}
	return n;
}

unsigned int dp_port_recv_queue(struct dp_port *port, uint16_t qid,
				struct rte_mbuf **pkts, unsigned int n)
{
	if (qid == 0)
		return dp_port_recv(port, pkts, n);
	return rte_ring_sc_dequeue_burst(port->xq[qid - 1].rx_ring,
					 (void **)pkts, n, NULL);
}

void dp_pkt_info(const struct rte_mbuf *m, struct dp_pkt_info *info)
{
	const uint8_t *l4 = rte_pktmbuf_mtod(m, const uint8_t *);
	const uint8_t *ip = l4 - m->l4_len - m->l3_len;

	memcpy(&info->src_ip_be, ip + 12, 4);
	memcpy(&info->dst_ip_be, ip + 16, 4);
	info->udp_encap = m->l4_len == 8;
	info->proto = info->udp_encap ? DP_IPPROTO_SCTP : ip[9];
	info->udp_sport = info->udp_encap
				  ? (uint16_t)(l4[-8] << 8 | l4[-7])
				  : 0;
}

void dp_pkt_set_udp_dport(const struct dp_port *port, struct rte_mbuf *m,
			  uint16_t dport)
{
	if (port->udp_dport_flag == 0 || dport == 0)
		return;
	*RTE_MBUF_DYNFIELD(m, port->udp_dport_off, uint16_t *) = dport;
	m->ol_flags |= port->udp_dport_flag;
}

struct rte_mbuf *dp_pkt_alloc(struct dp_port *port)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(port->pool);

	if (unlikely(m == NULL))
		port->st.drops[DP_DROP_NO_MBUF]++;
	return m;
}

void dp_pkt_free(struct rte_mbuf *m)
{
	rte_pktmbuf_free(m);
}

/* Not counted when empty: the caller sends a copy instead. */
bool dp_port_tx_ext(const struct dp_port *port)
{
	return port->ext_pool != NULL;
}

struct rte_mbuf *dp_pkt_ext_alloc(struct dp_port *port)
{
	return port->ext_pool != NULL ? rte_pktmbuf_alloc(port->ext_pool)
				      : NULL;
}

unsigned int dp_port_mbufs_in_use(const struct dp_port *port)
{
	return rte_mempool_in_use_count(port->pool) +
	       (port->ext_pool != NULL ?
			rte_mempool_in_use_count(port->ext_pool) : 0);
}
