/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_bye.c - the memif close handshake: a port whose memif peer leaves has
 * stopped touching the shared rings before the peer disconnects.
 *
 * Why: DPDK 22.11's memif tears a connection down from the EAL interrupt
 * thread when the peer closes its control socket (memif_intr_handler ->
 * memif_disconnect -> memif_free_regions: munmap of the shared regions),
 * with no synchronisation against rte_eth_rx_burst/tx_burst on the polling
 * thread.  A burst that checked "connected" before the teardown then reads
 * unmapped memory: sdp-ping's server died by SIGSEGV in eth_memif_rx while
 * it polled after its client's FIN (the client closed its port meanwhile).
 *
 * The handshake (memif ports only, frames of ethertype DP_BYE_ETHERTYPE on
 * queue 0):
 *   - the closing end sends BYE and polls queue 0 for BYE_ACK, up to
 *     bye_wait_ms (the link going down ends the wait too);
 *   - the other end, on BYE, marks its rings off (every burst of every
 *     queue is skipped from then on), waits until no queue is inside a
 *     burst, and answers BYE_ACK with a last burst of its own;
 *   - both ends closing at once: the server's close wins; a closing server
 *     ignores its client's BYE, a closing client answers the server's BYE
 *     and closes once the link went down (the server left).
 * Rings stay off until the link was seen down and is up again (a new
 * peer; memif marks the link up only after mapping the new regions).
 *
 * A peer that never answers (killed, not polling, built without this) costs
 * the closing end bye_wait_ms, after which it closes as before: a peer
 * killed mid-burst can still take the remaining end down with it.
 */
#include <string.h>
#include <time.h>

#include <rte_ethdev.h>

#include "dp_internal.h"

#define BYE_MAGIC "sdp-bye"	/* 8 bytes with its NUL */
#define BYE_FRAME_LEN 60

enum bye_kind { BYE_LEAVING = 1, BYE_ACK = 2 };

struct bye_msg {
	char magic[8];
	uint8_t kind;
} __rte_packed;

static bool link_up(const struct dp_port *port)
{
	struct rte_eth_link link;

	memset(&link, 0, sizeof(link));
	if (rte_eth_link_get_nowait(port->port_id, &link) != 0)
		return false; /* port gone or no link state: not up */
	return link.link_status == RTE_ETH_LINK_UP;
}

/* Send one handshake frame straight to the NIC (queue 0), outside the TX
 * buffer: the rings may be marked off for everything else already.
 * @return true when the NIC took it. */
static bool bye_send(struct dp_port *port, enum bye_kind kind)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(port->pool);
	struct rte_ether_hdr *eth;
	struct bye_msg *b;
	unsigned int tries;
	char *frame;

	if (m == NULL)
		return false;
	frame = rte_pktmbuf_append(m, BYE_FRAME_LEN);
	if (frame == NULL) {
		rte_pktmbuf_free(m);
		return false;
	}
	memset(frame, 0, BYE_FRAME_LEN);
	eth = (struct rte_ether_hdr *)frame;
	memset(&eth->dst_addr, 0xff, sizeof(eth->dst_addr));
	rte_ether_addr_copy(&port->fctx.mac, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(DP_BYE_ETHERTYPE);
	b = (struct bye_msg *)(eth + 1);
	memcpy(b->magic, BYE_MAGIC, sizeof(b->magic));
	b->kind = (uint8_t)kind;
	for (tries = 0; tries < 1000; tries++) {
		uint16_t sent = 0;

		if (dp_gate_enter(port)) {
			sent = rte_eth_tx_burst(port->port_id, 0, &m, 1);
			dp_gate_leave(port);
		}
		if (sent == 1) {
			port->st.tx_pkts++;
			return true;
		}
	}
	rte_pktmbuf_free(m);
	return false;
}

/* The kind of a handshake frame, or 0 for anything else. */
static int bye_kind_of(const struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eth;
	const struct bye_msg *b;

	if (rte_pktmbuf_data_len(m) < sizeof(*eth) + sizeof(*b))
		return 0;
	eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	if (eth->ether_type != rte_cpu_to_be_16(DP_BYE_ETHERTYPE))
		return 0;
	b = (const struct bye_msg *)(eth + 1);
	if (memcmp(b->magic, BYE_MAGIC, sizeof(b->magic)) != 0)
		return 0;
	return b->kind;
}

/* Rings off; return once no queue k > 0 is inside a burst (queue 0 is the
 * caller's). */
static void rings_off(struct dp_port *port)
{
	uint16_t k;

	__atomic_store_n(&port->rings_off, 1, __ATOMIC_SEQ_CST);
	port->bye_down_seen = false;
	for (k = 1; k < port->nb_queues; k++)
		while (__atomic_load_n(&port->xq[k - 1].in_burst,
				       __ATOMIC_SEQ_CST) != 0)
			rte_pause();
}

bool dp_bye_input(struct dp_port *port, struct rte_mbuf *m)
{
	int kind = bye_kind_of(m);

	if (kind == 0)
		return false;
	port->st.bye_rx++;
	rte_pktmbuf_free(m);
	if (kind != BYE_LEAVING || port->rings_off)
		return true;
	/* both closing: the server's close wins (see the top of the file) */
	if (port->closing && !dp_port_is_memif_client(port))
		return true;
	rings_off(port);
	port->peer_left = true;
	bye_send(port, BYE_ACK);
	return true;
}

bool dp_bye_rings_back(struct dp_port *port)
{
	bool up = link_up(port);

	if (!up) {
		port->bye_down_seen = true;
		return false;
	}
	if (!port->bye_down_seen || port->closing)
		return false;
	port->bye_down_seen = false;
	port->peer_left = false;
	__atomic_store_n(&port->rings_off, 0, __ATOMIC_SEQ_CST);
	return true;
}

/* Poll queue 0 for the answer to our BYE; frames other than the handshake
 * are freed uncounted (we are closing: the counters were read).  @return true once acknowledged. */
static bool bye_wait_ack(struct dp_port *port)
{
	struct rte_mbuf *pkts[DP_BURST];
	struct timespec ts = { 0, 100 * 1000 };
	uint64_t end = dp_tsc() + dp_ms_to_tsc(port->cfg.bye_wait_ms);
	uint16_t n, i;
	bool acked = false;

	while (!acked && !port->peer_left && dp_tsc() < end) {
		if (!link_up(port))
			return false;
		n = 0;
		if (dp_gate_enter(port)) {
			n = rte_eth_rx_burst(port->port_id, 0, pkts, DP_BURST);
			dp_gate_leave(port);
		}
		for (i = 0; i < n; i++) {
			if (bye_kind_of(pkts[i]) == BYE_ACK) {
				rte_pktmbuf_free(pkts[i]);
				acked = true;
			} else if (!dp_bye_input(port, pkts[i])) {
				rte_pktmbuf_free(pkts[i]);
			}
		}
		if (n == 0)
			nanosleep(&ts, NULL);
	}
	return acked;
}

void dp_bye_leave(struct dp_port *port)
{
	struct timespec ts = { 0, 1000 * 1000 };
	uint64_t end;

	if (!port->memif || port->cfg.bye_wait_ms == 0)
		return;
	port->closing = true;
	if (port->rings_off || !link_up(port))
		goto wait_peer;
	if (!bye_send(port, BYE_LEAVING)) {
		SDP_LOG(WARN, DP, "port %u: cannot send the memif close "
			"handshake: closing without it", port->port_id);
		return;
	}
	if (bye_wait_ack(port)) {
		rings_off(port);
		return;
	}
wait_peer:
	if (port->peer_left) {
		/* we answered the peer's BYE: it closes now; our own close
		 * follows once its teardown reached us (link down) */
		end = dp_tsc() + dp_ms_to_tsc(port->cfg.bye_wait_ms);
		while (link_up(port) && dp_tsc() < end)
			nanosleep(&ts, NULL);
		return;
	}
	if (link_up(port))
		SDP_LOG(INFO, DP, "port %u: memif peer did not answer the close "
			"handshake within bye_wait_ms=%u: closing anyway",
			port->port_id, port->cfg.bye_wait_ms);
}
