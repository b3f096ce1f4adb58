/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_queue.c - queue pairs k > 0 of a port with queues=N (a lane per
 * core).  Queue 0 is the port itself (dp_rx.c, dp_tx.c, ARP, the
 * pacer); queue k has its own RX burst, rx ring, TX buffer and counters,
 * touched only by queue k's thread.  What the queues share:
 *
 *   - the neighbour table, under port->arp_lock (taken only when N > 1);
 *   - ARP traffic, which is queue 0's: a frame sent on queue k to a
 *     neighbour not yet resolved goes onto port->handoff (MP/SC) and queue
 *     0's poll holds it and sends it once the reply came (so a lane's first
 *     packets may leave on queue 0; everything after resolution leaves on
 *     its own queue);
 *   - the mempool (DPDK mempools are thread-safe).
 *
 * A queue's TX buffer takes frames from any thread (q->tx_lock: usrsctp
 * sends a lane's SACKs and retransmissions from whichever thread runs its
 * timers); its RX side is polled by one thread at a time.
 *
 * Which drivers: queue k must reach the peer's queue k.  memif does when
 * both ends configure N queues (the client's TX ring k is the server's RX
 * ring k and back); net_null carries nothing (configuration tests).
 * af_packet spreads received frames over its queues by kernel fanout,
 * and a NIC would need RSS or flow rules steering SCTP port P + k to queue
 * k: refused (not done).
 */
#include <errno.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>

#include "dp_internal.h"
#include "sdp_trace.h"

#define TX_RETRIES 4

int dp_queues_check(const struct dp_port *port, const struct dp_config *cfg,
		    const char *driver, uint16_t max_rxq, uint16_t max_txq)
{
	if (cfg->nb_queues <= 1)
		return 0;
	if (strcmp(driver, "net_memif") != 0 &&
	    strcmp(driver, "net_null") != 0) {
		SDP_LOG(ERR, DP, "config: queues=%u on port %u (%s): its queue k "
			"does not reach the peer's queue k (%s): use a memif "
			"port or queues=1 (UCX: UCX_SCTP_DPDK_LANES=1)",
			cfg->nb_queues, port->port_id, driver,
			strcmp(driver, "net_af_packet") == 0
				? "af_packet spreads frames over queues by "
				  "kernel fanout"
				: "a NIC would need RSS or flow rules by SCTP "
				  "port, not done");
		return -EINVAL;
	}
	if (cfg->nb_queues > max_rxq || cfg->nb_queues > max_txq) {
		SDP_LOG(ERR, DP, "config: queues=%u is above what port %u (%s) "
			"supports (%u rx, %u tx queues): lower queues= (UCX: "
			"UCX_SCTP_DPDK_LANES)", cfg->nb_queues, port->port_id,
			driver, max_rxq, max_txq);
		return -EINVAL;
	}
	return 0;
}

int dp_queues_create(struct dp_port *port, int socket)
{
	char name[RTE_RING_NAMESIZE];
	uint16_t k;

	port->nb_queues = port->cfg.nb_queues > 1 ? port->cfg.nb_queues : 1;
	port->arp_shared = port->nb_queues > 1;
	rte_spinlock_init(&port->arp_lock);
	if (port->nb_queues == 1)
		return 0;
	port->xq = rte_zmalloc_socket("dp_queues",
				      sizeof(*port->xq) *
					      (port->nb_queues - 1u),
				      RTE_CACHE_LINE_SIZE, socket);
	if (port->xq == NULL)
		return -ENOMEM;
	snprintf(name, sizeof(name), "dp_ho_%u", port->port_id);
	port->handoff = rte_ring_create(name, DP_HANDOFF_RING, socket,
					RING_F_SC_DEQ);
	if (port->handoff == NULL)
		return -ENOMEM;
	for (k = 1; k < port->nb_queues; k++) {
		struct dp_queue *q = &port->xq[k - 1];

		q->id = k;
		rte_spinlock_init(&q->tx_lock);
		snprintf(name, sizeof(name), "dp_rx_%u_%u", port->port_id, k);
		q->rx_ring = rte_ring_create(name, port->cfg.rx_ring, socket,
					     RING_F_SP_ENQ | RING_F_SC_DEQ |
						     RING_F_EXACT_SZ);
		if (q->rx_ring == NULL)
			return -ENOMEM;
	}
	return 0;
}

int dp_queues_setup(struct dp_port *port, uint16_t nb_rxd, uint16_t nb_txd,
		    int socket)
{
	uint16_t k;
	int rc;

	for (k = 1; k < port->nb_queues; k++) {
		rc = rte_eth_rx_queue_setup(port->port_id, k, nb_rxd,
					    (unsigned int)socket, NULL,
					    port->pool);
		if (rc == 0)
			rc = rte_eth_tx_queue_setup(port->port_id, k, nb_txd,
						    (unsigned int)socket,
						    NULL);
		if (rc != 0) {
			SDP_LOG(ERR, DP, "port %u: queue %u setup failed: %s: "
				"lower queues=", port->port_id, k,
				rte_strerror(-rc));
			return rc;
		}
	}
	return 0;
}

void dp_queues_free(struct dp_port *port)
{
	struct rte_mbuf *m;
	uint16_t k;

	if (port->handoff != NULL) {
		while (rte_ring_sc_dequeue(port->handoff, (void **)&m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(port->handoff);
		port->handoff = NULL;
	}
	if (port->xq == NULL)
		return;
	for (k = 1; k < port->nb_queues; k++) {
		struct dp_queue *q = &port->xq[k - 1];

		if (q->nb_tx != 0)
			rte_pktmbuf_free_bulk(q->tx_buf, q->nb_tx);
		q->nb_tx = 0;
		if (q->rx_ring == NULL)
			continue;
		while (rte_ring_sc_dequeue(q->rx_ring, (void **)&m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(q->rx_ring);
	}
	rte_free(port->xq);
	port->xq = NULL;
}

void dp_queues_handoff(struct dp_port *port, uint64_t now_tsc)
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
			dp_tx_enqueue(port, m, now_tsc);
			continue;
		}
		/* the queue's own lookup may have created the entry: then
		 * the first request is still owed (m->hash.usr) */
		if (rc == -EAGAIN && m->hash.usr == (uint32_t)-ENOENT)
			rc = -ENOENT;
		dp_tx_hold(port, m, dst_ip_be, rc, now_tsc);
		dp_arp_unlock(port);
	}
}

static inline struct dp_queue *queue_of(struct dp_port *port, uint16_t q)
{
	return &port->xq[q - 1];
}

/*
 * A burst of queue k only while the rings are on: a thread counts itself
 * in, then checks; dp_bye.c sets rings_off, then waits for the count to
 * reach 0 before it lets a leaving memif peer go (both sequentially
 * consistent: one of the two sees the other).
 */
static inline bool xq_enter(struct dp_port *port, struct dp_queue *q)
{
	__atomic_add_fetch(&q->in_burst, 1, __ATOMIC_SEQ_CST);
	if (likely(__atomic_load_n(&port->rings_off, __ATOMIC_SEQ_CST) == 0))
		return true;
	__atomic_sub_fetch(&q->in_burst, 1, __ATOMIC_RELEASE);
	return false;
}

static inline void xq_leave(struct dp_queue *q)
{
	__atomic_sub_fetch(&q->in_burst, 1, __ATOMIC_RELEASE);
}

static void xq_burst_now(struct dp_port *port, struct dp_queue *q)
{
	uint16_t sent = 0, n = q->nb_tx, kept = 0, i;
	unsigned int tries = 0;

	if (!xq_enter(port, q))
		return; /* frames stay until the rings are back */
	if (unlikely(!dp_gate_enter(port))) {
		xq_leave(q);
		return; /* DPDK's interrupt thread runs (dp_gate.c) */
	}
	while (sent < n && tries++ < TX_RETRIES)
		sent = (uint16_t)(sent + rte_eth_tx_burst(port->port_id, q->id,
							  q->tx_buf + sent,
							  (uint16_t)(n -
								     sent)));
	dp_gate_leave(port);
	xq_leave(q);
	SDP_TRACE(TX_BURST, sent);
	q->st.tx_pkts += sent;
	for (i = sent; i < n; i++)
		q->tx_buf[kept++] = q->tx_buf[i];
	q->nb_tx = kept;
}

static int xq_buffer(struct dp_port *port, struct dp_queue *q,
		     struct rte_mbuf *m, uint64_t now_tsc)
{
	if (q->nb_tx == DP_BURST)
		xq_burst_now(port, q);
	if (unlikely(q->nb_tx == DP_BURST)) {
		q->st.drops[DP_DROP_TX_FULL]++;
		rte_pktmbuf_free(m);
		return -ENOBUFS;
	}
	if (q->nb_tx == 0)
		q->tx_deadline_tsc = now_tsc + port->tx_drain_tsc;
	q->st.tx_bytes += rte_pktmbuf_pkt_len(m);
	q->tx_buf[q->nb_tx++] = m;
	if (q->nb_tx == DP_BURST)
		xq_burst_now(port, q);
	return 0;
}

unsigned int dp_port_nb_queues(const struct dp_port *port)
{
	return port->nb_queues;
}

unsigned int dp_port_poll_queue(struct dp_port *port, uint16_t qid,
				uint64_t now_tsc)
{
	struct rte_mbuf *pkts[DP_BURST];
	struct dp_queue *q;
	uint16_t i, n;

	if (qid == 0)
		return dp_port_poll(port, now_tsc);
	q = queue_of(port, qid);
	if (__atomic_load_n(&q->nb_tx, __ATOMIC_RELAXED) != 0) {
		rte_spinlock_lock(&q->tx_lock);
		if ((int64_t)(now_tsc - q->tx_deadline_tsc) >= 0)
			xq_burst_now(port, q);
		rte_spinlock_unlock(&q->tx_lock);
	}
	if (!xq_enter(port, q))
		return 0;
	if (unlikely(!dp_gate_enter(port))) {
		xq_leave(q);
		return 0;
	}
	n = rte_eth_rx_burst(port->port_id, qid, pkts, DP_BURST);
	dp_gate_leave(port);
	xq_leave(q);
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
	return rte_ring_sc_dequeue_burst(queue_of(port, qid)->rx_ring,
					 (void **)pkts, n, NULL);
}

int dp_port_send_queue(struct dp_port *port, uint16_t qid, uint32_t dst_ip_be,
		       uint8_t proto, struct rte_mbuf *m, uint64_t now_tsc)
{
	struct dp_queue *q;
	int rc, arp_rc;

	if (qid == 0)
		return dp_port_send(port, dst_ip_be, proto, m, now_tsc);
	q = queue_of(port, qid);
	rc = dp_tx_frame(port, &q->st, false, dst_ip_be, proto, m, now_tsc,
			 &arp_rc);
	if (rc != 0)
		return rc > 0 ? 0 : rc;
	if (likely(arp_rc == 0)) {
		rte_spinlock_lock(&q->tx_lock);
		rc = xq_buffer(port, q, m, now_tsc);
		rte_spinlock_unlock(&q->tx_lock);
		return rc;
	}
	/* ARP is queue 0's: it holds the frame until the neighbour
	 * answers and sends it on queue 0 */
	m->hash.usr = (uint32_t)arp_rc;
	if (rte_ring_mp_enqueue(port->handoff, m) != 0) {
		q->st.drops[DP_DROP_HOLD_FULL]++;
		rte_pktmbuf_free(m);
		return -ENOBUFS;
	}
	return 0;
}

void dp_port_flush_queue(struct dp_port *port, uint16_t qid, uint64_t now_tsc)
{
	struct dp_queue *q;

	if (qid == 0) {
		dp_port_flush(port, now_tsc);
		return;
	}
	q = queue_of(port, qid);
	if (__atomic_load_n(&q->nb_tx, __ATOMIC_RELAXED) == 0)
		return;
	rte_spinlock_lock(&q->tx_lock);
	xq_burst_now(port, q);
	rte_spinlock_unlock(&q->tx_lock);
}

unsigned int dp_port_tx_queued_queue(const struct dp_port *port, uint16_t qid)
{
	if (qid == 0)
		return dp_port_tx_queued(port);
	return __atomic_load_n(&port->xq[qid - 1].nb_tx, __ATOMIC_RELAXED);
}

void dp_port_queue_stats(const struct dp_port *port, uint16_t qid,
			 struct dp_stats *stats)
{
	if (qid == 0) {
		*stats = port->st;
		dp_pace_stats(port, stats);
		return;
	}
	*stats = port->xq[qid - 1].st;
}
