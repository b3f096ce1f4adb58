/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_queue.c - the queue pairs of a port with queues=N (a lane per core):
 * their creation, setup and teardown.  Every queue has its TX queue
 * object (port->txq[k], dp_txq.c); queue 0 is otherwise the port itself
 * (dp_rx.c, dp_out.c, ARP, the pacer); queue k > 0 has its own RX burst
 * (dp_port_poll_queue), rx ring and counters (port->xq[k - 1]), touched
 * only by queue k's thread.  What the queues share:
 *
 *   - the neighbour table, under port->arp_lock (taken only when N > 1);
 *   - ARP traffic, which is queue 0's: a frame sent on queue k to a
 *     neighbour not yet resolved goes onto port->handoff (MP/SC) and queue
 *     0's poll holds it and sends it once the reply came
 *     (dp_arp_port_handoff; so a lane's first packets may leave on queue
 *     0; everything after resolution leaves on its own queue);
 *   - the mempool (DPDK mempools are thread-safe).
 *
 * A queue's TX buffer takes frames from any thread (port->txq[k].lock: usrsctp
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
	port->txq = rte_zmalloc_socket("dp_txq",
				       sizeof(*port->txq) * port->nb_queues,
				       RTE_CACHE_LINE_SIZE, socket);
	if (port->txq == NULL)
		return -ENOMEM;
	dp_txq_init(&port->txq[0], port->queue_id, &port->st, NULL);
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
		dp_txq_init(&port->txq[k], k, &q->st, &q->in_burst);
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
	if (port->txq != NULL) {
		for (k = 0; k < port->nb_queues; k++)
			dp_txq_free(&port->txq[k]);
		rte_free(port->txq);
		port->txq = NULL;
	}
	if (port->xq == NULL)
		return;
	for (k = 1; k < port->nb_queues; k++) {
		struct dp_queue *q = &port->xq[k - 1];

		if (q->rx_ring == NULL)
			continue;
		while (rte_ring_sc_dequeue(q->rx_ring, (void **)&m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(q->rx_ring);
	}
	rte_free(port->xq);
	port->xq = NULL;
}

unsigned int dp_port_nb_queues(const struct dp_port *port)
{
	return port->nb_queues;
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
