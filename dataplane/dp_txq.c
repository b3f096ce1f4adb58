/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_txq.c - transmit: one TX queue's burst buffer and its hand-off to the
 * driver (l2fwd's rte_eth_tx_buffer, Linux's dev_queue_xmit under the
 * qdisc).  Every queue of a port has one (port->txq[k]); the layers above
 * put fully framed frames into it:
 *
 *   output (dp_out.c) -> ARP (dp_arp.c) -> pacer (dp_pace.c) -> txq
 *                     \------------------------------------->/
 *
 * and nothing here calls back up: a full buffer is back-pressure the
 * caller sees as -ENOBUFS, never a call into ARP or the pacer.
 *
 * The buffer goes to the NIC when it is full, on an explicit flush, or
 * when its drain deadline (tx_drain_us, l2fwd-style) passes.  Frames the
 * NIC does not take after TX_RETRIES stay buffered, in order (see
 * dp_txq_burst); a frame that finds the buffer still full is refused:
 * freed, counted (DP_DROP_TX_FULL) and reported as -ENOBUFS, which the
 * sctp layer hands to usrsctp as "not sent" (its chunks stay unsent and
 * leave on its next output, no retransmission timeout involved).  The
 * loop never spins on a stuck queue.
 *
 * Held frames (queue 0, dp_port_send_held): they ride at the tail of the
 * next burst that carries another frame, after every frame queued before
 * it, in the same sendto; or they join the buffer when the layer above
 * releases them.
 *
 * Bursts run only while the rings are on (dp_bye.c): queue 0's thread runs
 * the close handshake itself and only checks; a thread bursting on queue
 * k > 0 counts itself in (in_burst), so the handshake can wait for it.
 */
#include <errno.h>
#include <string.h>

#include <rte_ethdev.h>

#include "dp_internal.h"
#include "sdp_trace.h"

#define TX_RETRIES 4

void dp_txq_init(struct dp_txq *txq, uint16_t id, struct dp_stats *st,
		 uint32_t *in_burst)
{
	memset(txq, 0, sizeof(*txq));
	txq->id = id;
	txq->st = st;
	txq->in_burst = in_burst;
	rte_spinlock_init(&txq->lock);
}

void dp_txq_free(struct dp_txq *txq)
{
	if (txq->nb_tx != 0)
		rte_pktmbuf_free_bulk(txq->buf, txq->nb_tx);
	txq->nb_tx = 0;
	if (txq->nb_held != 0)
		rte_pktmbuf_free_bulk(txq->held, txq->nb_held);
	txq->nb_held = 0;
}

static void take_held(struct dp_txq *txq)
{
	uint16_t room = (uint16_t)(DP_BURST - txq->nb_tx), n, i;

	n = txq->nb_held < room ? txq->nb_held : room;
	for (i = 0; i < n; i++) {
		txq->st->tx_bytes += rte_pktmbuf_pkt_len(txq->held[i]);
		txq->buf[txq->nb_tx++] = txq->held[i];
	}
	txq->nb_held = (uint16_t)(txq->nb_held - n);
	memmove(txq->held, txq->held + n, txq->nb_held * sizeof(txq->held[0]));
}

/*
 * Hand the buffer to the NIC.  What the NIC does not take after
 * TX_RETRIES stays in the buffer, in order, for the next attempt: nothing
 * is dropped here, gap frames (indirect mbufs on the pacer's PAUSE frame)
 * included: a dropped gap frame would let the next data frame leave early,
 * back to back with the previous one.
 */
void dp_txq_burst(struct dp_port *port, struct dp_txq *txq)
{
	uint16_t sent = 0, n, kept = 0, clones = 0, i;
	unsigned int tries = 0;

	if (unlikely(!dp_rings_enter(port, txq->in_burst)))
		return; /* a memif peer is leaving: frames stay (dp_bye.c) */
	if (txq->nb_held != 0 && txq->nb_tx != 0)
		take_held(txq);
	n = txq->nb_tx;
	/* before the PMD frees them: mbufs are not ours after tx_burst */
	for (i = 0; i < n; i++)
		clones += !!RTE_MBUF_CLONED(txq->buf[i]);

	if (unlikely(!dp_gate_enter(port))) {
		dp_rings_leave(txq->in_burst);
		return; /* DPDK's interrupt thread runs: frames stay */
	}
	while (sent < n && tries++ < TX_RETRIES)
		sent = (uint16_t)(sent +
				  rte_eth_tx_burst(port->port_id, txq->id,
						   txq->buf + sent,
						   (uint16_t)(n - sent)));
	dp_gate_leave(port);
	dp_rings_leave(txq->in_burst);
	if (port->nb_afp_socks != 0)
		dp_afp_kick_arm(port, dp_tsc());
	SDP_TRACE(TX_BURST, sent);
	txq->st->tx_bursts += tries;
	txq->st->tx_pkts += sent;
	for (i = sent; i < n; i++) {
		clones -= !!RTE_MBUF_CLONED(txq->buf[i]);
		txq->buf[kept++] = txq->buf[i];
	}
	txq->st->gap_frames += clones;
	txq->nb_tx = kept;
}

bool dp_txq_room(struct dp_port *port, struct dp_txq *txq, uint16_t n)
{
	if (txq->nb_tx + n > DP_BURST)
		dp_txq_burst(port, txq);
	return txq->nb_tx + n <= DP_BURST;
}

/*
 * Every writer of the buffer goes through here: the room check is what
 * keeps a buffer held full by back-pressure from overflowing.
 */
int dp_txq_push(struct dp_port *port, struct dp_txq *txq, struct rte_mbuf *m,
		uint64_t now_tsc)
{
	if (unlikely(!dp_txq_room(port, txq, 1))) {
		txq->st->drops[DP_DROP_TX_FULL]++;
		rte_pktmbuf_free(m);
		return -ENOBUFS;
	}
	if (txq->nb_tx == 0)
		txq->deadline_tsc = now_tsc + port->tx_drain_tsc;
	txq->st->tx_bytes += rte_pktmbuf_pkt_len(m);
	txq->buf[txq->nb_tx++] = m;
	if (txq->nb_tx == DP_BURST)
		dp_txq_burst(port, txq);
	return 0;
}

void dp_txq_release_held(struct dp_port *port, struct dp_txq *txq,
			 uint64_t now_tsc)
{
	struct rte_mbuf *m[DP_BURST];
	uint16_t n = txq->nb_held, i;

	/* a push may burst, which takes held frames itself: empty held[]
	 * first, then queue them in order */
	memcpy(m, txq->held, n * sizeof(m[0]));
	txq->nb_held = 0;
	for (i = 0; i < n; i++)
		dp_txq_push(port, txq, m[i], now_tsc);
}
