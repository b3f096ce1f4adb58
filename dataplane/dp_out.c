/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_out.c - IPv4 output of the port: an L4 payload from the layer above
 * becomes a frame (SCTP CRC32c in software or by offload, IPv4 + Ethernet
 * headers, the neighbour's MAC) and goes down to the queue that sends it,
 * as Linux's ip_output reaches dev_queue_xmit through the neighbour code:
 *
 *   dp_port_send[_queue] -> dp_out_frame (CRC, headers, ARP lookup)
 *     resolved, queue 0 -> held? -> txq[0] held frames (dp_txq.c)
 *                       \-> dp_pace_xmit (dp_pace.c) -> txq[0]
 *     resolved, queue k -> txq[k] (under its lock)
 *     unresolved        -> dp_arp_port_hold (queue 0; queue k hands the
 *                          frame over on port->handoff), sent by ARP
 *                          through dp_pace_xmit when the reply comes
 *
 * This file also runs the transmit side of each poll (dp_out_drain): the
 * pacer's releases, the drain deadline of queue 0's buffer, af_packet
 * ring kicks.  Calls go down only: nothing below calls back here.
 */
#include <errno.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_ip.h>

#include "dp_internal.h"
#include "sdp_trace.h"

int dp_out_frame(struct dp_port *port, struct dp_stats *st, bool q0,
		 uint32_t dst_ip_be, uint8_t proto, struct rte_mbuf *m,
		 uint64_t now_tsc, int *arp_rc_p)
{
	uint32_t l4_len = rte_pktmbuf_pkt_len(m);
	bool udp = port->udp_encap && proto == DP_IPPROTO_SCTP;
	uint16_t udp_dport = port->udp_dport;
	uint16_t hlen = dp_frame_hdr_len(udp);
	uint32_t ip_payload = l4_len + (udp ? 8 : 0);
	struct rte_ether_addr dst_mac;
	uint16_t ip_id;
	uint8_t *hdr;
	int rc;

	if (m->ol_flags & port->udp_dport_flag) {
		udp_dport = *RTE_MBUF_DYNFIELD(m, port->udp_dport_off,
					       uint16_t *);
		m->ol_flags &= ~port->udp_dport_flag;
	}

	/* a chain (sg's usrsctp chains) has the SCTP common header in its
	 * first segment, and room in front of it for ours */
	if (unlikely(ip_payload + 20 > port->mtu ||
		     rte_pktmbuf_data_len(m) < (m->nb_segs != 1 ? 12 : 0))) {
		rte_pktmbuf_free(m);
		return -EMSGSIZE;
	}
	if (unlikely(((dst_ip_be ^ port->fctx.ip_be) & port->net_mask_be) !=
		     0)) {
		rte_pktmbuf_free(m);
		return -EHOSTUNREACH;
	}
	if (unlikely(q0 && dp_drop_active(&port->cfg.drop_tx)) &&
	    proto == DP_IPPROTO_SCTP &&
	    dp_sctp_has_data(rte_pktmbuf_mtod(m, const uint8_t *),
			     rte_pktmbuf_data_len(m)) &&
	    dp_drop_decide(&port->drop_tx_st, &port->cfg.drop_tx)) {
		/* lost on the wire: the sender sees a successful send */
		st->drops[DP_DROP_HOOK]++;
		rte_pktmbuf_free(m);
		return 1;
	}
	if (proto == DP_IPPROTO_SCTP) {
		if (port->crc == DP_CRC_OFFLOAD) {
			m->ol_flags |= RTE_MBUF_F_TX_SCTP_CKSUM |
				       RTE_MBUF_F_TX_IPV4;
			st->crc_hw++;
		} else if (port->crc == DP_CRC_NONE) {
			/* RFC 9653: checksum 0, nothing computed (the
			 * header is in the first segment, ours) */
			dp_sctp_crc_fill(DP_CRC_NONE,
					 rte_pktmbuf_mtod(m, void *),
					 rte_pktmbuf_data_len(m));
			st->crc_zero_tx++;
		} else if (likely(m->nb_segs == 1)) {
			dp_sctp_crc_fill(port->crc,
					 rte_pktmbuf_mtod(m, void *), l4_len);
			st->crc_sw++;
		} else {
			dp_sctp_crc_fill_segs(port->crc, m);
			st->crc_sw++;
		}
	}
	hdr = (uint8_t *)rte_pktmbuf_prepend(m, hlen);
	if (unlikely(hdr == NULL)) {
		rte_pktmbuf_free(m);
		return -EMSGSIZE;
	}
	m->l2_len = RTE_ETHER_HDR_LEN;
	m->l3_len = 20;
	if (port->ip_cksum_tx_offload)
		m->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM;
	dp_arp_lock(port);
	rc = dp_arp_lookup(&port->arp, dst_ip_be, now_tsc, &dst_mac);
	dp_arp_unlock(port);
	if (rc != 0) /* filled in when the neighbour answers */
		memset(&dst_mac, 0, sizeof(dst_mac));
	/* IPv4 ids of several queues' threads may repeat: nothing is
	 * fragmented (DF traffic, fragments are dropped on receive) */
	ip_id = port->arp_shared
			? __atomic_fetch_add(&port->ip_id, 1, __ATOMIC_RELAXED)
			: port->ip_id++;
	dp_frame_build(hdr, &port->fctx.mac, &dst_mac, port->fctx.ip_be,
		       dst_ip_be, proto, udp ? port->cfg.udp_port : 0,
		       udp_dport, (uint16_t)l4_len, ip_id,
		       port->ip_cksum_tx_offload);
	SDP_TRACE(PORT_SEND, l4_len);
	*arp_rc_p = rc;
	return 0;
}

/* Whether this poll must run the pacer (see dp_port.pace_busy). */
static inline bool pace_busy(const struct dp_port *port)
{
	return __atomic_load_n(&port->pace_busy, __ATOMIC_RELAXED) != 0;
}

/* Whether a frame may wait in queue 0's held frames (dp_port_send_held):
 * only where a burst is worth saving, a port that batches TX (af_packet:
 * a sendto per burst).  On memif a burst costs ~0.1 us and the held SACK
 * only moved the peer's processing of it in front of the reply's
 * delivery. */
static inline bool may_hold(const struct dp_port *port)
{
	return port->tx_batch && port->txq[0].nb_held < DP_BURST &&
	       !pace_busy(port);
}

static int port_send(struct dp_port *port, uint32_t dst_ip_be, uint8_t proto,
		     struct rte_mbuf *m, uint64_t now_tsc, bool hold)
{
	int rc, arp_rc;

	rc = dp_out_frame(port, &port->st, true, dst_ip_be, proto, m, now_tsc,
			  &arp_rc);
	if (rc != 0)
		return rc > 0 ? 0 : rc;
	if (likely(arp_rc == 0)) {
		if (hold && may_hold(port)) {
			dp_txq_hold(&port->txq[0], m);
			return 0;
		}
		return dp_pace_xmit(port, m, now_tsc);
	}
	dp_arp_lock(port);
	rc = dp_arp_port_hold(port, m, dst_ip_be, arp_rc, now_tsc);
	dp_arp_unlock(port);
	return rc;
}

int dp_port_send(struct dp_port *port, uint32_t dst_ip_be, uint8_t proto,
		 struct rte_mbuf *m, uint64_t now_tsc)
{
	return port_send(port, dst_ip_be, proto, m, now_tsc, false);
}

int dp_port_send_held(struct dp_port *port, uint32_t dst_ip_be,
		      uint8_t proto, struct rte_mbuf *m, uint64_t now_tsc)
{
	return port_send(port, dst_ip_be, proto, m, now_tsc, true);
}

unsigned int dp_port_held(const struct dp_port *port)
{
	return port->txq[0].nb_held;
}

void dp_port_release_held(struct dp_port *port, uint64_t now_tsc)
{
	dp_txq_release_held(port, &port->txq[0], now_tsc);
}

void dp_out_drain(struct dp_port *port, uint64_t now_tsc)
{
	if (pace_busy(port))
		dp_pace_drain(port, now_tsc);
	dp_txq_drain(port, &port->txq[0], now_tsc);
	if (unlikely(port->afp_kick_tsc != 0) &&
	    (int64_t)(now_tsc - port->afp_kick_tsc) >= 0)
		dp_afp_kick(port, now_tsc);
}

void dp_port_flush(struct dp_port *port, uint64_t now_tsc)
{
	if (pace_busy(port))
		dp_pace_drain(port, now_tsc);
	if (port->txq[0].nb_tx != 0)
		dp_txq_burst(port, &port->txq[0]);
}

void dp_port_send_flush(struct dp_port *port, uint64_t now_tsc)
{
	if (!port->tx_batch && port->txq[0].nb_tx != 0)
		dp_port_flush(port, now_tsc);
}

void dp_out_release(struct dp_port *port)
{
	uint16_t k;

	if (port->txq != NULL)
		for (k = 0; k < port->nb_queues; k++)
			dp_txq_free(&port->txq[k]);
	dp_pace_release(port);
}

/* ---- queues k > 0 (queues=N): no pacer, ARP is queue 0's ---- */

int dp_port_send_queue(struct dp_port *port, uint16_t qid, uint32_t dst_ip_be,
		       uint8_t proto, struct rte_mbuf *m, uint64_t now_tsc)
{
	struct dp_txq *txq;
	int rc, arp_rc;

	if (qid == 0)
		return dp_port_send(port, dst_ip_be, proto, m, now_tsc);
	rc = dp_out_frame(port, &port->xq[qid - 1].st, false, dst_ip_be, proto,
			  m, now_tsc, &arp_rc);
	if (rc != 0)
		return rc > 0 ? 0 : rc;
	if (likely(arp_rc == 0)) {
		txq = &port->txq[qid];
		rte_spinlock_lock(&txq->lock);
		rc = dp_txq_push(port, txq, m, now_tsc);
		rte_spinlock_unlock(&txq->lock);
		return rc;
	}
	/* ARP is queue 0's: it holds the frame until the neighbour
	 * answers and sends it on queue 0 (dp_arp_port_handoff) */
	m->hash.usr = (uint32_t)arp_rc;
	if (rte_ring_mp_enqueue(port->handoff, m) != 0) {
		port->xq[qid - 1].st.drops[DP_DROP_HOLD_FULL]++;
		rte_pktmbuf_free(m);
		return -ENOBUFS;
	}
	return 0;
}

void dp_out_drain_queue(struct dp_port *port, uint16_t qid, uint64_t now_tsc)
{
	struct dp_txq *txq = &port->txq[qid];

	if (__atomic_load_n(&txq->nb_tx, __ATOMIC_RELAXED) == 0)
		return;
	rte_spinlock_lock(&txq->lock);
	dp_txq_drain(port, txq, now_tsc);
	rte_spinlock_unlock(&txq->lock);
}

void dp_port_flush_queue(struct dp_port *port, uint16_t qid, uint64_t now_tsc)
{
	struct dp_txq *txq;

	if (qid == 0) {
		dp_port_flush(port, now_tsc);
		return;
	}
	txq = &port->txq[qid];
	if (__atomic_load_n(&txq->nb_tx, __ATOMIC_RELAXED) == 0)
		return;
	rte_spinlock_lock(&txq->lock);
	dp_txq_burst(port, txq);
	rte_spinlock_unlock(&txq->lock);
}

unsigned int dp_port_tx_queued_queue(const struct dp_port *port, uint16_t qid)
{
	if (qid == 0)
		return dp_port_tx_queued(port);
	return __atomic_load_n(&port->txq[qid].nb_tx, __ATOMIC_RELAXED);
}
