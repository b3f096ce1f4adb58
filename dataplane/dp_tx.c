/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_tx.c - the transmit half of the port: framing of outgoing L4 payloads,
 * the SCTP CRC32c (software or offload), ARP hold, and buffered TX drained
 * when a burst is full, on an explicit flush, or when the drain deadline
 * (tx_drain_us, l2fwd-style) passes.  When the port is paced, frames go
 * through the pacer (dp_pace.c) before the TX buffer.
 *
 *   dp_port_send -> frame -> ARP? -(unresolved)-> hold[] -> (reply) -+
 *                                 \-(resolved)------------------------+
 *                                                                     v
 *              dp_tx_enqueue -> paced? -> pace fifo -> (deadline) -> tx_buf
 *                                      \--------------------------->  tx_buf
 *              tx_buf -> rte_eth_tx_burst (full / flush / deadline)
 *   dp_port_send_held -> frame -> held[] -> tail of the next burst that
 *              carries another frame, or dp_port_release_held -> tx_buf
 *
 * Frames the NIC does not take after a bounded number of retries are
 * dropped and counted (DP_DROP_TX_FULL): the loop never spins on a stuck
 * queue, SCTP retransmits.
 */
#include <errno.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_ip.h>

#include "dp_internal.h"
#include "sdp_trace.h"

#define TX_RETRIES 4

/* Held frames (dp_port_send_held) ride at the tail of a burst that goes
 * anyway: after every frame queued before it, in the same sendto. */
static void tx_take_held(struct dp_port *port)
{
	uint16_t room = (uint16_t)(DP_BURST - port->nb_tx), n, i;

	n = port->nb_held < room ? port->nb_held : room;
	for (i = 0; i < n; i++) {
		port->st.tx_bytes += rte_pktmbuf_pkt_len(port->held[i]);
		port->tx_buf[port->nb_tx++] = port->held[i];
	}
	port->nb_held = (uint16_t)(port->nb_held - n);
	memmove(port->held, port->held + n,
		port->nb_held * sizeof(port->held[0]));
}

/*
 * Hand the TX buffer to the NIC.  What the NIC does not take after
 * TX_RETRIES stays in the buffer, in order, for the next attempt: nothing
 * is dropped here, gap frames (indirect mbufs on the pacer's PAUSE frame)
 * included: a dropped gap frame would let the next data frame leave early,
 * back to back with the previous one.
 */
void dp_tx_burst_now(struct dp_port *port)
{
	uint16_t sent = 0, n, kept = 0, clones = 0, i;
	unsigned int tries = 0;

	if (unlikely(dp_rings_off(port)))
		return; /* a memif peer is leaving: frames stay (dp_bye.c) */
	if (port->nb_held != 0 && port->nb_tx != 0)
		tx_take_held(port);
	n = port->nb_tx;
	/* before the PMD frees them: mbufs are not ours after tx_burst */
	for (i = 0; i < n; i++)
		clones += !!RTE_MBUF_CLONED(port->tx_buf[i]);

	if (unlikely(!dp_gate_enter(port)))
		return; /* DPDK's interrupt thread runs: frames stay */
	while (sent < n && tries++ < TX_RETRIES)
		sent = (uint16_t)(sent +
				  rte_eth_tx_burst(port->port_id,
						   port->queue_id,
						   port->tx_buf + sent,
						   (uint16_t)(n - sent)));
	dp_gate_leave(port);
	if (port->nb_afp_socks != 0)
		dp_afp_kick_arm(port, dp_tsc());
	SDP_TRACE(TX_BURST, sent);
	port->st.tx_bursts += tries;
	port->st.tx_pkts += sent;
	for (i = sent; i < n; i++) {
		clones -= !!RTE_MBUF_CLONED(port->tx_buf[i]);
		port->tx_buf[kept++] = port->tx_buf[i];
	}
	port->st.gap_frames += clones;
	port->nb_tx = kept;
}

/* Room for @n more frames in the TX buffer (after trying the NIC). */
bool dp_tx_room(struct dp_port *port, uint16_t n)
{
	if (port->nb_tx + n > DP_BURST)
		dp_tx_burst_now(port);
	return port->nb_tx + n <= DP_BURST;
}

/*
 * Put a fully framed frame in the TX buffer (bypassing the pacer).  Every
 * writer of tx_buf goes through here: the room check is what keeps a
 * buffer held full by back-pressure from overflowing.
 * @return 0, or -ENOBUFS dropped and counted (the NIC has taken nothing
 *         for a whole burst).
 */
static inline int tx_buffer(struct dp_port *port, struct rte_mbuf *m,
			    uint64_t now_tsc)
{
	if (unlikely(!dp_tx_room(port, 1))) {
		port->st.drops[DP_DROP_TX_FULL]++;
		rte_pktmbuf_free(m);
		return -ENOBUFS;
	}
	if (port->nb_tx == 0)
		port->tx_deadline_tsc = now_tsc + port->tx_drain_tsc;
	port->st.tx_bytes += rte_pktmbuf_pkt_len(m);
	port->tx_buf[port->nb_tx++] = m;
	if (port->nb_tx == DP_BURST)
		dp_tx_burst_now(port);
	return 0;
}

int dp_tx_enqueue(struct dp_port *port, struct rte_mbuf *m,
		  uint64_t now_tsc)
{
	int rc;

	if (port->pacer == NULL)
		return tx_buffer(port, m, now_tsc);
	rc = dp_pace_enqueue(port, m, now_tsc);
	if (unlikely(rc == -ENOBUFS)) {
		/* the pacer's queue holds pace_queue_us already */
		port->st.pace_drops++;
		rte_pktmbuf_free(m);
	}
	/* -EAGAIN: bypassed the pacer, dropped by tx_buffer (counted) */
	return rc == 0 ? 0 : -ENOBUFS;
}

int dp_tx_push(struct dp_port *port, struct rte_mbuf *m, uint64_t now_tsc)
{
	return tx_buffer(port, m, now_tsc);
}

/* Whether this poll must run the pacer (see dp_port.pace_busy). */
static inline bool pace_busy(const struct dp_port *port)
{
	return __atomic_load_n(&port->pace_busy, __ATOMIC_RELAXED) != 0;
}

void dp_tx_drain(struct dp_port *port, uint64_t now_tsc)
{
	if (pace_busy(port))
		dp_pace_drain(port, now_tsc);
	if (port->nb_tx != 0 &&
	    (int64_t)(now_tsc - port->tx_deadline_tsc) >= 0)
		dp_tx_burst_now(port);
	if (unlikely(port->afp_kick_tsc != 0) &&
	    (int64_t)(now_tsc - port->afp_kick_tsc) >= 0)
		dp_afp_kick(port, now_tsc);
}

void dp_port_flush(struct dp_port *port, uint64_t now_tsc)
{
	if (pace_busy(port))
		dp_pace_drain(port, now_tsc);
	if (port->nb_tx != 0)
		dp_tx_burst_now(port);
}

void dp_port_send_flush(struct dp_port *port, uint64_t now_tsc)
{
	if (!port->tx_batch && port->nb_tx != 0)
		dp_port_flush(port, now_tsc);
}

void dp_tx_release(struct dp_port *port)
{
	if (port->nb_tx != 0)
		rte_pktmbuf_free_bulk(port->tx_buf, port->nb_tx);
	port->nb_tx = 0;
	if (port->nb_held != 0)
		rte_pktmbuf_free_bulk(port->held, port->nb_held);
	port->nb_held = 0;
	dp_pace_release(port);
}

/* Whether a frame may wait in held[] (dp_port_send_held): only where a
 * burst is worth saving, a port that batches TX (af_packet: a sendto per
 * burst).  On memif a burst costs ~0.1 us and the held SACK only moved
 * the peer's processing of it in front of the reply's delivery. */
static inline bool tx_may_hold(const struct dp_port *port)
{
	return port->tx_batch && port->nb_held < DP_BURST &&
	       !pace_busy(port);
}

int dp_tx_frame(struct dp_port *port, struct dp_stats *st, bool q0,
		uint32_t dst_ip_be, uint8_t proto, struct rte_mbuf *m,
		uint64_t now_tsc, int *arp_rc_p)
{
	uint32_t l4_len = rte_pktmbuf_pkt_len(m);
	bool udp = port->udp_encap && proto == DP_IPPROTO_SCTP;
	uint16_t hlen = dp_frame_hdr_len(udp);
	uint32_t ip_payload = l4_len + (udp ? 8 : 0);
	struct rte_ether_addr dst_mac;
	uint16_t ip_id;
	uint8_t *hdr;
	int rc;

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
		       (uint16_t)l4_len, ip_id, port->ip_cksum_tx_offload);
	SDP_TRACE(PORT_SEND, l4_len);
	*arp_rc_p = rc;
	return 0;
}

int dp_tx_hold(struct dp_port *port, struct rte_mbuf *m, uint32_t dst_ip_be,
	       int arp_rc, uint64_t now_tsc)
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

static int port_send(struct dp_port *port, uint32_t dst_ip_be, uint8_t proto,
		     struct rte_mbuf *m, uint64_t now_tsc, bool hold)
{
	int rc, arp_rc;

	rc = dp_tx_frame(port, &port->st, true, dst_ip_be, proto, m, now_tsc,
			 &arp_rc);
	if (rc != 0)
		return rc > 0 ? 0 : rc;
	if (likely(arp_rc == 0)) {
		if (hold && tx_may_hold(port)) {
			port->held[port->nb_held++] = m;
			port->st.tx_held++;
			return 0;
		}
		return dp_tx_enqueue(port, m, now_tsc);
	}
	dp_arp_lock(port);
	rc = dp_tx_hold(port, m, dst_ip_be, arp_rc, now_tsc);
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
	return port->nb_held;
}

void dp_port_release_held(struct dp_port *port, uint64_t now_tsc)
{
	struct rte_mbuf *m[DP_BURST];
	uint16_t n = port->nb_held, i;

	/* tx_buffer may burst, which takes held frames itself: empty
	 * held[] first, then queue them in order */
	memcpy(m, port->held, n * sizeof(m[0]));
	port->nb_held = 0;
	for (i = 0; i < n; i++)
		tx_buffer(port, m[i], now_tsc);
}
