/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sg_conn.c - AF_CONN glue between usrsctp and one dataplane port (a link).
 *
 * usrsctp knows no IP addresses here: an association's remote address is a
 * struct sockaddr_conn whose sconn_addr is an opaque pointer.  We use one
 * sg_peer object per peer IPv4 address as that pointer:
 *
 *   RX: dp_port_recv -> SCTP? -> peer = lookup/create(src IP)
 *       -> usrsctp_conninput(peer, payload, len) -> dp_pkt_free
 *   TX: usrsctp -> sg_conn_output(peer, buf, len) -> dp_pkt_alloc + one
 *       copy -> dp_port_send(port, peer->ip, SCTP, m, now) (enqueue only)
 *
 * usrsctp_conninput gives a packet the same address as source and
 * destination, so each peer object is also registered as a local address
 * (usrsctp_register_address) and the endpoint's socket is bound to all
 * addresses: each side binds and connects with its own handles.
 *
 * Buffer ownership: usrsctp frees the buffer passed to conn_output when the
 * callback returns, so it is copied into an mbuf (our one TX copy, after
 * usrsctp's own); the mbuf belongs to the dataplane from dp_port_send on.
 * RX mbufs are ours until dp_pkt_free; usrsctp_conninput copies the packet
 * into its own mbufs (the first of usrsctp's two receive copies, counted
 * in sg_stats.rx_copies).  conn_output runs re-entrantly inside
 * usrsctp_conninput, usrsctp_sendv and usrsctp_handle_timers: it only
 * enqueues.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <usrsctp.h>

#include "sg_internal.h"
#include "sdp_trace.h"

int sg_link_init(struct sg_link *link, struct dp_port *port,
		 uint32_t max_peers, struct sg_stats *st)
{
	int rc;

	memset(link, 0, sizeof(*link));
	link->port = port;
	link->st = st;
	link->max_peers = max_peers;
	link->peers = calloc(max_peers, sizeof(*link->peers));
	if (link->peers == NULL)
		return -ENOMEM;
	rc = sg_map_init(&link->peer_map, max_peers);
	if (rc != 0) {
		free(link->peers);
		link->peers = NULL;
		return rc;
	}
	return 0;
}

void sg_link_release(struct sg_link *link)
{
	uint32_t i;

	for (i = 0; i < link->nb_peers; i++) {
		if (link->peers[i].magic != SG_PEER_MAGIC)
			continue;
		usrsctp_deregister_address(&link->peers[i]);
		link->peers[i].magic = 0;
	}
}

void sg_link_fini(struct sg_link *link)
{
	if (link->peers == NULL)
		return;
	sg_map_free(&link->peer_map);
	free(link->peers);
	link->peers = NULL;
	link->nb_peers = 0;
}

struct sg_peer *sg_link_peer(struct sg_link *link, uint32_t ip_be)
{
	struct sg_peer *p;
	uint64_t idx;

	if (link->last != NULL && link->last->ip_be == ip_be)
		return link->last;
	if (sg_map_get(&link->peer_map, ip_be, &idx)) {
		link->last = &link->peers[idx];
		return link->last;
	}
	if (link->nb_peers == link->max_peers)
		return NULL;
	p = &link->peers[link->nb_peers];
	if (sg_map_put(&link->peer_map, ip_be, link->nb_peers) != 0)
		return NULL;
	link->nb_peers++;
	p->magic = SG_PEER_MAGIC;
	p->ip_be = ip_be;
	p->link = link;
	usrsctp_register_address(p);
	link->last = p;
	return p;
}

/* Whether an SCTP packet carries user data (DATA or I-DATA chunk): such a
 * packet is owed a SACK (delayed up to sack_delay_ms).  Walks the chunk
 * list within @len; the dataplane checked the length and CRC32c. */
static bool sg_pkt_has_data(const uint8_t *pkt, size_t len)
{
	size_t off = 12; /* common header */
	unsigned int n;

	for (n = 0; n < 64 && off + 4 <= len; n++) {
		uint16_t clen = (uint16_t)(pkt[off + 2] << 8 | pkt[off + 3]);

		if (pkt[off] == 0 /* DATA */ || pkt[off] == 64 /* I-DATA */)
			return true;
		if (clen < 4)
			return false;
		off += ((size_t)clen + 3) & ~(size_t)3;
	}
	return false;
}

unsigned int sg_link_input(struct sg_link *link, uint64_t now_tsc)
{
	struct rte_mbuf *pkts[SG_BURST];
	struct dp_pkt_info info;
	struct sg_peer *peer;
	unsigned int i, n;

	link->now_tsc = now_tsc;
	n = dp_port_recv(link->port, pkts, SG_BURST);
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];

		/* Length and CRC32c were checked by dp_port_poll. */
		dp_pkt_info(m, &info);
		if (unlikely(info.proto != DP_IPPROTO_SCTP)) {
			link->st->rx_not_sctp++;
			dp_pkt_free(m);
			continue;
		}
		peer = sg_link_peer(link, info.src_ip_be);
		if (unlikely(peer == NULL)) {
			link->st->rx_no_peer++;
			dp_pkt_free(m);
			continue;
		}
		link->st->pkts_in++;
		peer->last_rx_tsc = now_tsc;
		if (sg_pkt_has_data(rte_pktmbuf_mtod(m, const uint8_t *),
				    rte_pktmbuf_data_len(m))) {
			peer->last_rx_data_tsc = now_tsc;
			peer->rx_data_seq = ++link->seq;
		}
		/* usrsctp copies the packet into its own mbuf chain */
		link->st->rx_copies++;
		link->st->rx_copy_input_bytes += rte_pktmbuf_data_len(m);
		usrsctp_conninput(peer, rte_pktmbuf_mtod(m, const void *),
				  rte_pktmbuf_data_len(m), 0);
		SDP_TRACE(CONNINPUT, rte_pktmbuf_data_len(m));
		dp_pkt_free(m);
	}
	return n;
}

int sg_conn_output(void *addr, void *buf, size_t len, uint8_t tos,
		   uint8_t set_df)
{
	struct sg_peer *peer = addr;
	struct sg_link *link;
	struct rte_mbuf *m;
	void *p;
	int rc;

	(void)tos;
	(void)set_df; /* the dataplane never fragments */
	SDP_TRACE(CONN_OUTPUT, len);
	if (unlikely(peer == NULL || peer->magic != SG_PEER_MAGIC))
		return EINVAL;
	link = peer->link;
	m = dp_pkt_alloc(link->port);
	if (unlikely(m == NULL)) {
		link->st->tx_drops++;
		return ENOBUFS; /* usrsctp retransmits */
	}
	p = rte_pktmbuf_append(m, (uint16_t)len);
	if (unlikely(p == NULL || len > UINT16_MAX)) {
		link->st->tx_drops++;
		dp_pkt_free(m);
		return EMSGSIZE;
	}
	memcpy(p, buf, len);
	rc = dp_port_send(link->port, peer->ip_be, DP_IPPROTO_SCTP, m,
			  link->now_tsc);
	if (unlikely(rc != 0)) {
		/* Counted by the dataplane too; SCTP retransmits. */
		if (rc == -ENOBUFS)
			link->st->tx_nobufs++;
		else
			link->st->tx_drops++;
		return 0;
	}
	link->st->pkts_out++;
	peer->tx_seq = ++link->seq;
	return 0;
}
