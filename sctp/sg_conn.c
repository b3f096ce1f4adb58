/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sg_conn.c - AF_CONN glue between usrsctp and one dataplane port (a link).
 *
 * usrsctp knows no IP addresses here: an association's remote address is a
 * struct sockaddr_conn whose sconn_addr is an opaque pointer.  We use one
 * sg_peer object per peer IPv4 address as that pointer:
 *
 *   RX: dp_port_recv -> SCTP? -> peer = lookup/create(src IP)
 *       -> usrsctp_conninput_ext(peer, payload, len, sg_rx_ext_free, m)
 *       (usrsctp keeps the mbuf; sg_rx_ext_free when it lets go), or
 *       usrsctp_conninput(peer, payload, len) -> dp_pkt_free
 *   TX: usrsctp -> sg_conn_output_alloc(peer, len): dp_pkt_alloc, the
 *       mbuf's data area -> usrsctp writes the packet there ->
 *       sg_conn_output(peer, buf, len): that mbuf -> dp_port_send(port,
 *       peer->ip, SCTP, m, now) (enqueue only) -> sg_conn_output_free
 *   TX of packets with DATA from tx_chain_min bytes on (usrsctp-patches/
 *       0004): usrsctp -> sg_conn_output_chain(peer, pieces, chain): a
 *       header mbuf (copy up to the first DATA payload) + ext mbufs on
 *       usrsctp's buffers -> dp_port_send; the last segment freed gives
 *       the chain back (usrsctp_conn_chain_free)
 *
 * usrsctp_conninput gives a packet the same address as source and
 * destination, so each peer object is also registered as a local address
 * (usrsctp_register_address) and the endpoint's socket is bound to all
 * addresses: each side binds and connects with its own handles.
 *
 * Buffer ownership: usrsctp linearises each packet into a buffer it frees
 * when conn_output returns.  With scripts/usrsctp-patches/0002 that buffer
 * is the data area of a DPDK mbuf we allocate (sg_conn_output_alloc, with
 * the port's headroom for the framing in front), so conn_output sends the
 * mbuf itself: no copy of ours.  Only a packet usrsctp put in malloc'd
 * memory (the hook unset or refusing it) is copied into an mbuf (counted:
 * sg_stats.tx_copy_bytes); an empty pool drops the packet (tx_drops,
 * ENOBUFS: usrsctp sends it later).  The mbuf belongs to the dataplane
 * from dp_port_send on.
 * RX mbufs are ours until we hand them to usrsctp.  With rx_ext (the
 * default; scripts/usrsctp-patches/0003) usrsctp_conninput_ext makes the
 * mbuf's data area the packet's external storage: the chunks' data stay
 * there, shared by reference count, through the reassembly queue and the
 * socket buffer until usrsctp_recvv has copied them out (usrsctp's only
 * receive copy then), and the last reference calls sg_rx_ext_free, which
 * frees the mbuf.  That runs inside usrsctp calls on the poll thread
 * (usrsctp_conninput_ext itself for control packets, usrsctp_recvv,
 * usrsctp_close, the timers), under whatever lock the caller holds around
 * sg_poll (lanes share it); the held count is atomic all the same.  Only
 * sole, direct, one-segment mbufs go this way (usrsctp writes into the
 * packet in place, e.g. a COOKIE ECHO's addresses), and only while usrsctp
 * holds fewer than a quarter of the mbuf's pool (SG_RX_EXT_POOL_DIV): a
 * receive window of small packets would otherwise keep the NIC from
 * refilling its ring.  Every other packet is copied by usrsctp_conninput
 * into usrsctp's own mbufs and freed at once (counted in
 * sg_stats.rx_copies; rx_ext_pool_low when the pool share was the
 * reason).  conn_output runs re-entrantly inside usrsctp_conninput*,
 * usrsctp_sendv and usrsctp_handle_timers: it only enqueues.
 *
 * Peers a stranger can create.  Any packet with a valid CRC32c from a
 * new source address makes a peer object (usrsctp must see an address to
 * answer an INIT), so a flood of spoofed sources would grow the tables
 * without end.  Rules:
 *   - a source no peer can have (sg_link_src_invalid: 0.0.0.0/8, 127/8,
 *     multicast, 240/4, broadcast, our own addresses) is refused before
 *     the table is touched (sg_stats.rx_bad_src);
 *   - a peer made by a packet is untrusted ("pending") until an
 *     association with it exists: usrsctp sends it a COOKIE ACK (it
 *     answered our INIT ACK, so it receives at that address), or reports
 *     the association up (sg_ep_assoc_up).  Peers this process names
 *     (connect, path addresses) are trusted from the start.  Trusted
 *     peers are never reclaimed nor displaced;
 *   - at most pending_peers strangers at a time: a new one takes the
 *     slot of the least recently heard, unless that one was heard in
 *     this or the previous input round (then the packet is refused,
 *     rx_pending_full; cannot happen with pending_peers above the
 *     2 x SG_BURST packets of two rounds, the configured minimum, so a
 *     flood can delay but never lock out a new peer's handshake: each
 *     of its packets finds a slot); a stranger silent for pending_ms is
 *     reclaimed (sg_link_reclaim, each poll).  Reclaimed slots are
 *     reused, so a flood's memory is bounded by pending_peers peer
 *     objects and their map keys (sg_stats.peers_reclaimed).
 * Dropping a stranger between our INIT ACK and its COOKIE ECHO is
 * harmless: usrsctp takes the peer address of a new association from
 * the COOKIE ECHO's source, not from the cookie.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <usrsctp.h>

#include "sg_internal.h"
#include "sdp_trace.h"

static void sg_chain_refs_fini(struct sg_link *link);

int sg_link_init(struct sg_link *link, struct dp_port *port,
		 uint32_t max_peers, struct sg_stats *st)
{
	int rc;

	memset(link, 0, sizeof(*link));
	link->port = port;
	link->st = st;
	link->max_peers = max_peers;
	link->ports[0] = port;
	link->own_ip_be[0] = dp_port_ip(port);
	link->nb_ports = 1;
	link->nb_queues = 1;
	link->ms_div = dp_tsc_hz() / 1000 != 0 ? dp_tsc_hz() / 1000 : 1;
	link->pst.nb_paths = 1;
	link->pst.last_switch_to_tx_ms = -1;
	link->pst.last_switch_to_rx_ms = -1;
	/* sg_ep_open sets the endpoint's pending_peers and pending_ms */
	link->max_pending = max_peers;
	link->pending_tsc = UINT64_MAX;
	/* a peer's path addresses are keys too (SG_PATHS_MAX - 1 more) */
	rc = sg_map_init(&link->peer_map,
			 max_peers <= SG_MAP_LIMIT_MAX / SG_PATHS_MAX ?
				 max_peers * SG_PATHS_MAX :
				 SG_MAP_LIMIT_MAX);
	if (rc != 0)
		return rc;
	/* usrsctp may keep its mbufs until sg_link_fini */
	dp_port_hold(port);
	return 0;
}

void sg_link_release(struct sg_link *link)
{
	uint32_t i;

	for (i = 0; i < link->nb_peers; i++) {
		struct sg_peer *p = sg_link_peer_at(link, i);

		if (p->magic != SG_PEER_MAGIC)
			continue;
		usrsctp_deregister_address(p);
		p->magic = 0;
	}
}

void sg_link_fini(struct sg_link *link)
{
	uint32_t i;

	sg_chain_refs_fini(link);
	if (link->replay != NULL) {
		for (i = 0; i < SG_REPLAY_MAX; i++)
			dp_pkt_free(link->replay[i].m);
		free(link->replay);
		link->replay = NULL;
	}
	if (link->peer_map.keys == NULL)
		return;
	sg_map_free(&link->peer_map);
	for (i = 0; i < link->nb_blocks; i++)
		free(link->blocks[i]);
	free(link->blocks);
	link->blocks = NULL;
	link->nb_blocks = 0;
	link->cap_blocks = 0;
	link->nb_peers = 0;
	/* last: a port closed before its endpoint closes now */
	for (i = 0; i < link->nb_ports; i++)
		dp_port_unhold(link->ports[i]);
}

/* Room for peer nb_peers: a new block (and a larger block table) when
 * the last block is full.  @return 0 or -ENOMEM. */
static int sg_link_peer_room(struct sg_link *link)
{
	uint32_t b = link->nb_peers / SG_PEER_BLOCK;

	if (b < link->nb_blocks)
		return 0;
	if (b == link->cap_blocks) {
		uint32_t cap = link->cap_blocks != 0 ? 2 * link->cap_blocks
						     : 4;
		struct sg_peer **nb = realloc(link->blocks,
					      cap * sizeof(*nb));

		if (nb == NULL)
			return -ENOMEM;
		link->blocks = nb;
		link->cap_blocks = cap;
	}
	link->blocks[b] = calloc(SG_PEER_BLOCK, sizeof(struct sg_peer));
	if (link->blocks[b] == NULL)
		return -ENOMEM;
	link->nb_blocks++;
	return 0;
}

bool sg_link_src_invalid(const struct sg_link *link, uint32_t ip_be)
{
	uint32_t ip = rte_be_to_cpu_32(ip_be);
	unsigned int k;

	if ((ip >> 24) == 0 || (ip >> 24) == 127 || ip >= 0xe0000000u)
		return true; /* this network, loopback, multicast, 240/4 */
	for (k = 0; k < link->nb_ports; k++)
		if (ip_be == link->own_ip_be[k])
			return true;
	return false;
}

/* Pending list: strangers, least recently heard at the head. */
static void sg_pend_unlink(struct sg_link *link, struct sg_peer *p)
{
	if (p->lru_prev != NULL)
		p->lru_prev->lru_next = p->lru_next;
	else
		link->pend_head = p->lru_next;
	if (p->lru_next != NULL)
		p->lru_next->lru_prev = p->lru_prev;
	else
		link->pend_tail = p->lru_prev;
	p->lru_prev = p->lru_next = NULL;
	link->nb_pending--;
}

static void sg_pend_append(struct sg_link *link, struct sg_peer *p)
{
	p->lru_next = NULL;
	p->lru_prev = link->pend_tail;
	if (link->pend_tail != NULL)
		link->pend_tail->lru_next = p;
	else
		link->pend_head = p;
	link->pend_tail = p;
	link->nb_pending++;
}

/* Give a stranger's slot back: usrsctp forgets the address (packets
 * it still sends to it are dropped by conn_output: magic 0), the map
 * forgets the key, the slot goes to the free list.  A stranger has no
 * association, so no path addresses and nothing in the replay ring. */
static void sg_link_peer_drop(struct sg_link *link, struct sg_peer *p)
{
	sg_pend_unlink(link, p);
	usrsctp_deregister_address(p);
	sg_map_del(&link->peer_map, p->ip_be);
	if (link->last == p)
		link->last = NULL;
	memset(p, 0, sizeof(*p));
	p->lru_next = link->free_peers;
	link->free_peers = p;
	link->nb_free++;
	link->st->peers_reclaimed++;
}

static struct sg_peer *sg_link_peer_new(struct sg_link *link, uint32_t ip_be,
					bool trusted)
{
	struct sg_peer *p;

	if (sg_link_src_invalid(link, ip_be))
		return NULL;
	if (link->free_peers != NULL) {
		p = link->free_peers;
		if (sg_map_add(&link->peer_map, ip_be, (uintptr_t)p) != 0)
			return NULL;
		link->free_peers = p->lru_next;
		link->nb_free--;
		p->lru_next = NULL;
	} else {
		if (link->nb_peers == link->max_peers)
			return NULL;
		if (sg_link_peer_room(link) != 0)
			return NULL;
		p = sg_link_peer_at(link, link->nb_peers);
		if (sg_map_add(&link->peer_map, ip_be, (uintptr_t)p) != 0)
			return NULL;
		link->nb_peers++;
	}
	p->magic = SG_PEER_MAGIC;
	p->ip_be = ip_be;
	p->link = link;
	p->path_ip_be[0] = ip_be;
	p->last_rx_tsc = link->now_tsc;
	p->rx_round = link->rx_round;
	p->trusted = trusted;
	if (!trusted)
		sg_pend_append(link, p);
	sg_paths_init(&p->paths, 1, link->now_tsc / link->ms_div);
	usrsctp_register_address(p);
	link->last = p;
	return p;
}

void sg_link_peer_trust(struct sg_link *link, struct sg_peer *peer)
{
	if (peer->trusted)
		return;
	sg_pend_unlink(link, peer);
	peer->trusted = true;
}

struct sg_peer *sg_link_peer(struct sg_link *link, uint32_t ip_be)
{
	struct sg_peer *p;

	if (link->last != NULL && link->last->ip_be == ip_be)
		p = link->last;
	else
		p = sg_link_peer_find(link, ip_be);
	if (p == NULL)
		return sg_link_peer_new(link, ip_be, true);
	link->last = p;
	sg_link_peer_trust(link, p);
	return p;
}

struct sg_peer *sg_link_peer_rx(struct sg_link *link, uint32_t ip_be)
{
	struct sg_peer *p;

	if (likely(link->last != NULL && link->last->ip_be == ip_be))
		p = link->last;
	else
		p = sg_link_peer_find(link, ip_be);
	if (likely(p != NULL)) {
		link->last = p;
		if (unlikely(!p->trusted)) {
			/* most recently heard: to the tail */
			p->rx_round = link->rx_round;
			p->last_rx_tsc = link->now_tsc;
			sg_pend_unlink(link, p);
			sg_pend_append(link, p);
		}
		return p;
	}
	if (link->nb_pending >= link->max_pending) {
		struct sg_peer *old = link->pend_head;

		/* Only a stranger quiet since before the previous round
		 * makes room: one heard since may be in the middle of
		 * making an association (its COOKIE ECHO in this burst).
		 * A round takes at most SG_BURST packets, so with
		 * pending_peers above 2 * SG_BURST (sg_config.c: at least
		 * 128) there is always one: a new source is never
		 * refused, only the oldest stranger forgotten. */
		if (old == NULL || old->rx_round + 1 >= link->rx_round) {
			link->st->rx_pending_full++;
			return NULL;
		}
		sg_link_peer_drop(link, old);
	}
	return sg_link_peer_new(link, ip_be, false);
}

/* Strangers dropped per sg_link_reclaim call: bounds the work of a poll
 * after a flood stopped; the rest go at the next polls. */
#define SG_RECLAIM_BATCH 64

unsigned int sg_link_reclaim(struct sg_link *link, uint64_t now_tsc)
{
	unsigned int n = 0;

	while (link->pend_head != NULL && n < SG_RECLAIM_BATCH &&
	       now_tsc - link->pend_head->last_rx_tsc >= link->pending_tsc) {
		sg_link_peer_drop(link, link->pend_head);
		n++;
	}
	return n;
}

/* The chunk walks below look at no more than this many chunks (a
 * packet's control chunks come first, RFC 9260 6.10). */
#define SG_PKT_CHUNKS_MAX 64
#define SG_CHUNK_COOKIE_ACK 11 /* RFC 9260 3.3.12 */

/* Whether an SCTP packet carries user data (DATA or I-DATA chunk): such a
 * packet is owed a SACK (delayed up to sack_delay_ms).  The dataplane
 * checked the length and CRC32c.  Counts the NR-SACK chunks (nr_sack) on
 * the way into @st: an NR-SACK has its number of NR gap blocks at +14
 * (control chunks come before DATA in a packet). */
static bool sg_pkt_has_data(const uint8_t *pkt, size_t len,
			    struct sg_stats *st)
{
	struct dp_chunk_walk w;
	struct dp_chunk c;

	dp_chunk_walk_init(&w, pkt, len, SG_PKT_CHUNKS_MAX);
	DP_CHUNK_FOREACH(&w, &c) {
		if (dp_chunk_is_data(&c))
			return true;
		if (c.type == DP_SCTP_CHUNK_NR_SACK && c.avail >= 20 &&
		    dp_chunk_len(&c) >= 20) {
			st->rx_nr_sacks++;
			if ((c.p[14] | c.p[15]) != 0)
				st->rx_nr_sacks_nr_gaps++;
		}
	}
	return false;
}

/* SACK hold: whether every chunk of a packet we send is a SACK or NR-SACK
 * (what usrsctp emits, with sack_delay_ms=0, for each DATA packet it
 * takes). */
static bool sg_pkt_sack_only(const uint8_t *pkt, size_t len)
{
	struct dp_chunk_walk w;
	struct dp_chunk c;

	dp_chunk_walk_init(&w, pkt, len, SG_PKT_CHUNKS_MAX);
	DP_CHUNK_FOREACH(&w, &c)
		if (!dp_chunk_is_sack(&c))
			return false;
	/* at least one chunk, each whole (a bad one leaves w.off before
	 * len), and nothing after them */
	return w.off > DP_SCTP_COMMON_HDR_LEN && w.off >= len;
}

static uint32_t sg_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

/* Whether a packet we send carries a COOKIE ACK: usrsctp sends one only
 * for a valid COOKIE ECHO, after it made the association (RFC 9260
 * 5.1), so its peer has proven it receives at its address. */
static bool sg_pkt_has_cookie_ack(const uint8_t *pkt, size_t len)
{
	struct dp_chunk_walk w;
	struct dp_chunk c;

	dp_chunk_walk_init(&w, pkt, len, SG_PKT_CHUNKS_MAX);
	DP_CHUNK_FOREACH(&w, &c)
		if (c.type == SG_CHUNK_COOKIE_ACK)
			return true;
	return false;
}

/* Failover replay: the TSN of the last DATA/I-DATA chunk of a packet we
 * send.  @return false when it carries none. */
static bool sg_pkt_last_tsn(const uint8_t *pkt, size_t len, uint32_t *tsn_p)
{
	struct dp_chunk_walk w;
	struct dp_chunk c;
	bool found = false;

	dp_chunk_walk_init(&w, pkt, len, SG_PKT_CHUNKS_MAX);
	dp_chunk_walk_need(&w, 8); /* header + TSN */
	DP_CHUNK_FOREACH(&w, &c) {
		if (dp_chunk_is_data(&c)) {
			*tsn_p = sg_be32(c.p + 4);
			found = true;
		}
	}
	return found;
}

/* Failover replay: the cumulative TSN ack of a SACK or NR-SACK in a packet
 * from the peer, kept in @peer (serial arithmetic, RFC 1982). */
static void sg_pkt_note_sack(struct sg_peer *peer, const uint8_t *pkt,
			     size_t len)
{
	struct dp_chunk_walk w;
	struct dp_chunk c;

	dp_chunk_walk_init(&w, pkt, len, SG_PKT_CHUNKS_MAX);
	dp_chunk_walk_need(&w, 8); /* header + cumulative TSN ack */
	DP_CHUNK_FOREACH(&w, &c) {
		uint32_t cum;

		if (!dp_chunk_is_sack(&c) || dp_chunk_len(&c) < 8)
			continue;
		cum = sg_be32(c.p + 4);
		if (!peer->cum_ack_valid || (int32_t)(cum - peer->cum_ack) > 0)
			peer->cum_ack = cum;
		peer->cum_ack_valid = true;
	}
}

int sg_link_peer_paths(struct sg_link *link, struct sg_peer *peer,
		       const uint32_t *ips, unsigned int n)
{
	uint64_t now_ms = link->now_tsc / link->ms_div;
	unsigned int k, nb = peer->paths.nb;
	int rc;

	for (k = 0; k < n && k + 1 < link->nb_ports; k++) {
		uint32_t old = peer->path_ip_be[k + 1];

		if (ips[k] == 0 || old == ips[k])
			continue;
		if (sg_link_src_invalid(link, ips[k]))
			return -EINVAL;
		/* Packets from that address belong to this peer; an address
		 * another peer has keeps its peer (never rewritten). */
		rc = sg_map_add(&link->peer_map, ips[k], (uintptr_t)peer);
		if (rc == -EEXIST && sg_link_peer_find(link, ips[k]) == peer)
			rc = 0;
		if (rc != 0)
			return rc;
		if (old != 0 && old != peer->ip_be &&
		    sg_link_peer_find(link, old) == peer)
			sg_map_del(&link->peer_map, old);
		peer->path_ip_be[k + 1] = ips[k];
		if (k + 2 > nb)
			nb = k + 2;
	}
	if (nb > peer->paths.nb) {
		/* New paths start alive with one dead_ms of grace. */
		for (k = peer->paths.nb; k < nb; k++) {
			peer->paths.p[k].heard_ms = now_ms;
			peer->paths.p[k].alive_since_ms = now_ms;
			peer->paths.p[k].alive = true;
		}
		peer->paths.nb = (uint8_t)nb;
	}
	return 0;
}

/* Wall clock for log lines that tests line up with the testbed's. */
static double sg_wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sg_link_first_rx(struct sg_link *link, struct sg_peer *peer,
			     uint64_t now_ms)
{
	char a[16];

	peer->paths.await_rx = false;
	link->pst.last_switch_to_rx_ms =
		(int64_t)(now_ms - peer->paths.switch_ms);
	SDP_LOG(WARN, SCTP, "failover: peer %s: first SCTP packet from it on "
		"path %u %" PRId64 " ms after the switch, at %.3f (wall clock)",
		dp_ip_str(peer->ip_be, a, sizeof(a)), peer->paths.active,
		link->pst.last_switch_to_rx_ms, sg_wall_s());
}

/* Keep a reference to a DATA-bearing packet for a failover replay. */
static void sg_link_replay_keep(struct sg_link *link, struct sg_peer *peer,
				unsigned int k, struct rte_mbuf *m,
				uint32_t tsn, uint64_t now_ms)
{
	struct sg_replay *r = &link->replay[link->replay_next];

	link->replay_next = (link->replay_next + 1) % SG_REPLAY_MAX;
	dp_pkt_free(r->m);
	rte_mbuf_refcnt_update(m, 1);
	r->m = m;
	r->pkt = rte_pktmbuf_mtod(m, const uint8_t *);
	r->len = rte_pktmbuf_data_len(m);
	r->path = (uint8_t)k;
	r->peer = peer;
	r->tsn = tsn;
	r->tx_ms = now_ms;
}

/* Failover of @peer from path @from to its active path: send again, in
 * order, the DATA packets sent on @from that the peer has not acknowledged
 * cumulatively (its last SACK), or, before any SACK, since @since_ms. */
static unsigned int sg_link_replay(struct sg_link *link, struct sg_peer *peer,
				   unsigned int from, uint64_t since_ms)
{
	unsigned int k = peer->paths.active, n = 0;
	uint32_t i, slot;

	for (i = 0; i < SG_REPLAY_MAX; i++) {
		struct sg_replay *r;
		struct rte_mbuf *m;
		uint8_t *p;

		slot = (link->replay_next + i) % SG_REPLAY_MAX;
		r = &link->replay[slot];
		if (r->m == NULL || r->peer != peer || r->path != from)
			continue;
		if (peer->cum_ack_valid ?
			    (int32_t)(r->tsn - peer->cum_ack) <= 0 :
			    r->tx_ms < since_ms)
			continue; /* acknowledged */
		m = dp_pkt_alloc(link->ports[k]);
		if (m == NULL)
			break;
		p = (uint8_t *)rte_pktmbuf_append(m, r->len);
		if (p == NULL) {
			dp_pkt_free(m);
			break;
		}
		memcpy(p, r->pkt, r->len);
		memset(p + 8, 0, 4); /* CRC32c: filled again on the way out */
		dp_pkt_set_udp_dport(link->ports[k], m,
				     peer->path_udp_port[k]);
		if (dp_port_send(link->ports[k], peer->path_ip_be[k],
				 DP_IPPROTO_SCTP, m, link->now_tsc) == 0)
			n++;
	}
	link->pst.replayed += n;
	return n;
}

void sg_link_probe_in(struct sg_link *link, unsigned int k,
		      uint32_t src_ip_be, const uint8_t *pl, uint32_t len,
		      uint64_t now_ms)
{
	struct sg_peer *peer;
	uint32_t magic, primary;

	if (len < SG_PROBE_BYTES)
		goto bad;
	memcpy(&magic, pl, 4);
	memcpy(&primary, pl + 4, 4);
	if (rte_be_to_cpu_32(magic) != SG_PROBE_MAGIC || primary == 0)
		goto bad;
	link->pst.probes_in++;
	/* A probe carries no proof of who sent it: it may only tell about
	 * a peer with an association (trusted), and only fill in a path
	 * address not known yet and owned by no peer.  It never creates a
	 * peer, never moves an address to another peer and never changes
	 * a known path address. */
	peer = sg_link_peer_find(link, primary);
	if (peer == NULL || !peer->trusted || peer->ip_be != primary)
		goto refused;
	if (k != 0 && peer->path_ip_be[k] == 0) {
		/* Learn the path address (the peer may know ours before
		 * we know its: its UCX ep came first). */
		uint32_t ips[SG_PATHS_MAX - 1] = { 0 };

		ips[k - 1] = src_ip_be;
		if (sg_link_peer_paths(link, peer, ips, k) != 0)
			goto refused;
	}
	if (peer->path_ip_be[k] != src_ip_be)
		goto refused;
	sg_paths_heard(&peer->paths, k, now_ms);
	return;
refused:
	link->st->rx_probe_refused++;
	return;
bad:
	link->st->rx_not_sctp++;
}

/* Receive without usrsctp's copy: mbufs usrsctp holds, process-wide
 * (every pool; usrsctp may drop them from any thread it runs on). */
static uint32_t sg_rx_ext_held;

uint32_t sg_rx_ext_held_now(void)
{
	return __atomic_load_n(&sg_rx_ext_held, __ATOMIC_RELAXED);
}

/* usrsctp dropped the last reference to a packet of ours. */
static void sg_rx_ext_free(void *buf, void *arg)
{
	(void)buf;
	__atomic_fetch_sub(&sg_rx_ext_held, 1, __ATOMIC_RELAXED);
	dp_pkt_free(arg);
}

/* Hand @m to usrsctp without a copy when it may keep it.  @return true
 * when usrsctp took it (@m may be freed already). */
static bool sg_link_input_ext(struct sg_link *link, struct sg_peer *peer,
			      struct rte_mbuf *m, uint16_t len)
{
	if (!RTE_MBUF_DIRECT(m) || m->nb_segs != 1 ||
	    rte_mbuf_refcnt_read(m) != 1)
		return false; /* not ours alone to write into */
	if (sg_rx_ext_held_now() >= m->pool->size / SG_RX_EXT_POOL_DIV) {
		link->st->rx_ext_pool_low++;
		return false;
	}
	__atomic_fetch_add(&sg_rx_ext_held, 1, __ATOMIC_RELAXED);
	if (unlikely(usrsctp_conninput_ext(peer, rte_pktmbuf_mtod(m, void *),
					   len, 0, sg_rx_ext_free, m) != 0)) {
		__atomic_fetch_sub(&sg_rx_ext_held, 1, __ATOMIC_RELAXED);
		return false; /* no mbuf in usrsctp: its copy fails too */
	}
	link->st->rx_ext_pkts++;
	link->st->rx_ext_bytes += len;
	return true;
}

/*
 * What a packet may change: usrsctp authenticates a packet by its
 * verification tag only when it processes it, after this layer has read
 * it.  Anyone who can put a peer's address on a packet could otherwise
 * move its UDP port (RFC 6951), keep a dead path "heard" or feed a SACK
 * to failover.  So only a packet carrying a tag we gave the peer (our
 * INIT / INIT ACK's Initiate Tag) updates where the peer is and which of
 * its paths work; before we sent either there is no association to
 * protect, and the INIT's port is where our INIT ACK must go.  Every
 * packet still goes to usrsctp.  Receive times and the DATA sequence
 * (sg_assoc_quiet) are kept for every packet: lanes give one peer
 * several associations, more than the two tags kept, and a forged DATA
 * only makes a flush wait for our next packet.
 */
static inline bool sg_peer_vtag_ok(const struct sg_peer *peer,
				   const uint8_t *sctp)
{
	uint32_t vtag;

	if (peer->rx_vtag[0] == 0)
		return true;
	memcpy(&vtag, sctp + 4, 4);
	/* an empty slot (0, before our second INIT / INIT ACK) is no tag:
	 * an INIT's tag 0 must not match it */
	return vtag != 0 &&
	       (vtag == peer->rx_vtag[0] || vtag == peer->rx_vtag[1]);
}

/* One received packet of path @k (for queues, path 0, queue @q). */
static void sg_link_input_pkt(struct sg_link *link, unsigned int k,
			      uint16_t q, struct rte_mbuf *m, uint64_t now_tsc,
			      uint64_t now_ms)
{
	struct dp_pkt_info info;
	struct sg_peer *peer;
	uint16_t len;

	/* Length and CRC32c were checked by dp_port_poll. */
	dp_pkt_info(m, &info);
	if (unlikely(info.proto != DP_IPPROTO_SCTP)) {
		if (info.proto == DP_IPPROTO_EXP && link->nb_ports > 1)
			sg_link_probe_in(link, k, info.src_ip_be,
					 rte_pktmbuf_mtod(m, const uint8_t *),
					 rte_pktmbuf_data_len(m), now_ms);
		else
			link->st->rx_not_sctp++;
		dp_pkt_free(m);
		return;
	}
	if (unlikely(sg_link_src_invalid(link, info.src_ip_be))) {
		link->st->rx_bad_src++;
		dp_pkt_free(m);
		return;
	}
	if (k == 0) {
		peer = sg_link_peer_rx(link, info.src_ip_be);
	} else {
		/* A backup path carries only peers whose path addresses
		 * are known. */
		peer = sg_link_peer_find(link, info.src_ip_be);
	}
	if (unlikely(peer == NULL)) {
		link->st->rx_no_peer++;
		dp_pkt_free(m);
		return;
	}
	link->st->pkts_in++;
	link->pst.pkts_in[k]++;
	peer->last_rx_tsc = now_tsc;
	if (info.udp_encap && rte_pktmbuf_data_len(m) >= 16 &&
	    rte_pktmbuf_mtod(m, const uint8_t *)[12] == 1)
		/* an INIT: its INIT ACK goes back to its port (RFC 6951
		 * 5.4), whether or not its tag lets it change the path's */
		peer->init_udp_port[k] = info.udp_sport;
	if (unlikely(!sg_peer_vtag_ok(peer, rte_pktmbuf_mtod(m,
							  const uint8_t *)))) {
		/* usrsctp checks the tag and drops what fails; where the
		 * peer is and which paths work is not learned from it */
		link->st->rx_bad_vtag++;
		goto data;
	}
	if (info.udp_encap)
		peer->path_udp_port[k] = info.udp_sport;
	if (link->nb_ports > 1) {
		sg_paths_heard(&peer->paths, k, now_ms);
		if (unlikely(peer->paths.await_rx && k == peer->paths.active))
			sg_link_first_rx(link, peer, now_ms);
		sg_pkt_note_sack(peer, rte_pktmbuf_mtod(m, const uint8_t *),
				 rte_pktmbuf_data_len(m));
	}
data:
	if (sg_pkt_has_data(rte_pktmbuf_mtod(m, const uint8_t *),
			    rte_pktmbuf_data_len(m), link->st)) {
		peer->last_rx_data_tsc = now_tsc;
		peer->rx_data_seq = ++link->seq;
		if (link->nb_queues > 1) {
			/* the destination port names the lane */
			const uint8_t *h = rte_pktmbuf_mtod(m, const uint8_t *);
			uint16_t dq = (uint16_t)(((unsigned int)h[2] << 8 |
						  h[3]) - link->queue_port0);

			if (dq < link->nb_queues && dq != q)
				link->st->rx_data_wrong_queue++;
		}
	}
	len = rte_pktmbuf_data_len(m);
	if (link->rx_ext && sg_link_input_ext(link, peer, m, len)) {
		SDP_TRACE(CONNINPUT, len);
		return;
	}
	/* usrsctp copies the packet into its own mbuf chain */
	link->st->rx_copies++;
	link->st->rx_copy_input_bytes += len;
	usrsctp_conninput(peer, rte_pktmbuf_mtod(m, const void *), len, 0);
	SDP_TRACE(CONNINPUT, len);
	dp_pkt_free(m);
}

unsigned int sg_link_input(struct sg_link *link, uint64_t now_tsc)
{
	struct rte_mbuf *pkts[SG_BURST];
	uint64_t now_ms = now_tsc / link->ms_div;
	unsigned int i, n, k, total = 0;

	link->now_tsc = now_tsc;
	link->in_input = link->hold_tsc != 0;
	link->rx_round++;
	for (k = 0; k < link->nb_ports; k++) {
		n = dp_port_recv(link->ports[k], pkts, SG_BURST);
		total += n;
		for (i = 0; i < n; i++)
			sg_link_input_pkt(link, k, 0, pkts[i], now_tsc,
					  now_ms);
	}
	link->in_input = false;
	return total;
}

unsigned int sg_link_input_queue(struct sg_link *link, uint16_t q,
				 uint64_t now_tsc)
{
	struct rte_mbuf *pkts[SG_BURST];
	uint64_t now_ms = now_tsc / link->ms_div;
	unsigned int i, n;

	link->now_tsc = now_tsc;
	link->rx_round++;
	n = dp_port_recv_queue(link->port, q, pkts, SG_BURST);
	for (i = 0; i < n; i++)
		sg_link_input_pkt(link, 0, q, pkts[i], now_tsc, now_ms);
	return n;
}

void sg_link_hold_release(struct sg_link *link, uint64_t now_tsc)
{
	unsigned int k;

	for (k = 0; k < link->nb_ports; k++) {
		link->held_until_tsc[k] = 0;
		if (dp_port_held(link->ports[k]) != 0)
			dp_port_release_held(link->ports[k], now_tsc);
	}
}

/*
 * The SACK hold's rule, per port, at the end of each poll (before its
 * flush).  A SACK held by this poll: kept if the poll delivered messages
 * (the application may answer at once: its reply's burst carries the
 * SACK, after the reply), for hold_tsc; else released now.  A SACK held
 * longer: released once hold_tsc has passed.  Any burst before that
 * takes it along (dp_port_send_held).
 */
void sg_link_hold_end(struct sg_link *link, unsigned int delivered,
		      uint64_t now_tsc)
{
	unsigned int k;

	for (k = 0; k < link->nb_ports; k++) {
		struct dp_port *port = link->ports[k];
		uint64_t *until = &link->held_until_tsc[k];

		if (dp_port_held(port) == 0) {
			*until = 0;
			continue;
		}
		if (*until == 0 && delivered != 0) {
			*until = now_tsc + link->hold_tsc;
			continue;
		}
		if (*until == 0 || (int64_t)(now_tsc - *until) >= 0) {
			*until = 0;
			dp_port_release_held(port, now_tsc);
		}
	}
}

static void sg_link_probe_out(struct sg_link *link, struct sg_peer *peer,
			      unsigned int k, uint64_t now_ms)
{
	struct rte_mbuf *m = dp_pkt_alloc(link->ports[k]);
	uint32_t v;
	uint8_t *p;

	sg_paths_sent(&peer->paths, k, now_ms); /* also when it failed */
	if (m == NULL)
		return;
	p = (uint8_t *)rte_pktmbuf_append(m, SG_PROBE_BYTES);
	if (p == NULL) {
		dp_pkt_free(m);
		return;
	}
	memset(p, 0, SG_PROBE_BYTES);
	v = rte_cpu_to_be_32(SG_PROBE_MAGIC);
	memcpy(p, &v, 4);
	v = dp_port_ip(link->ports[0]);
	memcpy(p + 4, &v, 4);
	p[8] = (uint8_t)k;
	if (dp_port_send(link->ports[k], peer->path_ip_be[k], DP_IPPROTO_EXP,
			 m, link->now_tsc) == 0)
		link->pst.probes_out++;
}

unsigned int sg_link_paths_tick(struct sg_link *link, uint64_t now_tsc)
{
	uint64_t now_ms = now_tsc / link->ms_div;
	bool up[SG_PATHS_MAX];
	unsigned int i, k, work = 0;
	char a[16], b[16], c[16];
	int r;

	if (link->nb_ports < 2 || now_ms == link->tick_ms)
		return 0;
	link->tick_ms = now_ms;
	link->now_tsc = now_tsc;
	for (k = 0; k < link->nb_ports; k++)
		up[k] = dp_port_link_up(link->ports[k], NULL);
	for (i = 0; i < link->nb_peers; i++) {
		struct sg_peer *peer = sg_link_peer_at(link, i);
		struct sg_paths *ps = &peer->paths;
		uint8_t from = ps->active;
		uint64_t fb = ps->failbacks;

		if (peer->magic != SG_PEER_MAGIC || ps->nb < 2)
			continue;
		for (k = 0; k < ps->nb; k++)
			sg_paths_link(ps, k, up[k]);
		r = sg_paths_tick(ps, &link->pcfg, now_ms);
		if (r >= 0) {
			unsigned int replayed = 0;

			ps->await_tx = true;
			ps->await_rx = true;
			if (ps->failbacks != fb) {
				link->pst.failbacks++;
			} else {
				link->pst.failovers++;
				/* what may have been lost: sent since two
				 * probe intervals before it was last heard */
				replayed = sg_link_replay(
					link, peer, from,
					ps->p[from].heard_ms -
						2 * link->pcfg.probe_ms);
			}
			SDP_LOG(WARN, SCTP, "failover: peer %s: path %u (%s) "
				"%s (last heard %" PRIu64 " ms ago); traffic "
				"moves to path %u (%s) at %.3f (wall clock), "
				"%u packets sent again",
				dp_ip_str(peer->ip_be, a, sizeof(a)), from,
				dp_ip_str(peer->path_ip_be[from], b,
					  sizeof(b)),
				ps->failbacks != fb ? "still up, the primary "
						      "is back" :
				!up[from] ? "link down" : "silent",
				now_ms - ps->p[from].heard_ms, (unsigned int)r,
				dp_ip_str(peer->path_ip_be[r], c, sizeof(c)),
				sg_wall_s(), replayed);
			work++;
		}
		for (k = 0; k < ps->nb; k++) {
			if (up[k] && peer->path_ip_be[k] != 0 &&
			    sg_paths_probe_due(ps, &link->pcfg, k, now_ms)) {
				sg_link_probe_out(link, peer, k, now_ms);
				work++;
			}
		}
	}
	return work;
}

/* Queues (lanes): the lane on SCTP port queue_port0 + q sends on queue
 * q, so the peer's lane q receives on its queue q.  @pkt starts with the
 * SCTP common header: its source port names the lane. */
static uint16_t sg_link_queue_of(const struct sg_link *link, const void *pkt)
{
	const uint8_t *b = pkt;
	uint16_t q = (uint16_t)(((unsigned int)b[0] << 8 | b[1]) -
				link->queue_port0);

	return q < link->nb_queues ? q : 0;
}

/*
 * The mbuf whose data area usrsctp is filling: set by
 * sg_conn_output_alloc, taken by sg_conn_output (or freed by
 * sg_conn_output_free when conn_output did not take it).  usrsctp calls
 * the three back to back on one thread, with only its m_copydata in
 * between, so one slot per thread is enough (usrsctp's iterator thread
 * has its own).
 */
static __thread struct {
	void *buf;
	struct rte_mbuf *m;
	bool no_mbuf;	/* the pool was empty: conn_output need not try */
} sg_tx_slot;

void *sg_conn_output_alloc(void *addr, size_t len)
{
	struct sg_peer *peer = addr;
	struct rte_mbuf *m;
	void *p;

	sg_tx_slot.no_mbuf = false;
	if (unlikely(peer == NULL || peer->magic != SG_PEER_MAGIC ||
		     len > UINT16_MAX))
		return NULL; /* malloc; conn_output refuses it */
	if (unlikely(sg_tx_slot.m != NULL)) {
		/* not taken nor freed: cannot happen with the patch */
		dp_pkt_free(sg_tx_slot.m);
		sg_tx_slot.m = NULL;
	}
	/* the port conn_output sends on: the peer's active path */
	m = dp_pkt_alloc(peer->link->ports[peer->paths.active]);
	if (unlikely(m == NULL)) {
		sg_tx_slot.no_mbuf = true; /* conn_output drops it */
		return NULL;
	}
	p = rte_pktmbuf_append(m, (uint16_t)len);
	if (unlikely(p == NULL)) {
		dp_pkt_free(m);
		return NULL; /* conn_output refuses it (EMSGSIZE) */
	}
	sg_tx_slot.buf = p;
	sg_tx_slot.m = m;
	return p;
}

void sg_conn_output_free(void *addr, void *buf)
{
	(void)addr;
	if (sg_tx_slot.m != NULL && sg_tx_slot.buf == buf) {
		dp_pkt_free(sg_tx_slot.m);
		sg_tx_slot.m = NULL;
	}
	sg_tx_slot.buf = NULL;
	sg_tx_slot.no_mbuf = false;
}

static int sg_conn_send(struct sg_peer *peer, struct rte_mbuf *m,
			const void *buf, size_t len);

int sg_conn_output(void *addr, void *buf, size_t len, uint8_t tos,
		   uint8_t set_df)
{
	struct sg_peer *peer = addr;
	struct sg_link *link;
	struct rte_mbuf *m;
	unsigned int k;
	uint32_t tsn;
	void *p;

	(void)tos;
	(void)set_df; /* the dataplane never fragments */
	SDP_TRACE(CONN_OUTPUT, len);
	if (unlikely(peer == NULL || peer->magic != SG_PEER_MAGIC))
		return EINVAL; /* an mbuf in the slot: conn_output_free */
	link = peer->link;
	/* Failover: the peer's active path (0 without paths). */
	k = peer->paths.active;
	if (likely(sg_tx_slot.m != NULL && sg_tx_slot.buf == buf)) {
		/* usrsctp wrote the packet into our mbuf: send it as is */
		m = sg_tx_slot.m;
		sg_tx_slot.m = NULL;
		link->st->tx_direct_pkts++;
		link->st->tx_direct_bytes += len;
	} else {
		/* sg_conn_output_alloc found the pool empty: no second try */
		m = likely(!sg_tx_slot.no_mbuf) ? dp_pkt_alloc(link->ports[k])
						: NULL;
		sg_tx_slot.no_mbuf = false;
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
		link->st->tx_copy_bytes += len;
	}
	if (link->replay != NULL && sg_pkt_last_tsn(buf, len, &tsn))
		sg_link_replay_keep(link, peer, k, m, tsn,
				    link->now_tsc / link->ms_div);
	return sg_conn_send(peer, m, buf, len);
}

/*
 * Send @m (an SCTP packet) to @peer on its active path, for usrsctp:
 * @buf, @len are the packet, or its first segment (a chain: common header
 * to the first DATA chunk's header).  @return what conn_output returns.
 */
static int sg_conn_send(struct sg_peer *peer, struct rte_mbuf *m,
			const void *buf, size_t len)
{
	struct sg_link *link = peer->link;
	unsigned int k = peer->paths.active;
	int rc;

	if (unlikely(!peer->trusted) && sg_pkt_has_cookie_ack(buf, len))
		sg_link_peer_trust(link, peer);
	if (unlikely(len >= 20 && ((const uint8_t *)buf)[12] == 2 &&
		     peer->init_udp_port[k] != 0)) {
		/* INIT ACK: to the port its INIT came from (RFC 6951 5.4) */
		dp_pkt_set_udp_dport(link->ports[k], m,
				     peer->init_udp_port[k]);
		peer->init_udp_port[k] = 0;
	} else {
		dp_pkt_set_udp_dport(link->ports[k], m,
				     peer->path_udp_port[k]);
	}
	if (unlikely(len >= 20 && (((const uint8_t *)buf)[12] == 1 ||
				   ((const uint8_t *)buf)[12] == 2))) {
		/* INIT or INIT ACK: the peer will tag its packets with our
		 * Initiate Tag */
		peer->rx_vtag[1] = peer->rx_vtag[0];
		memcpy(&peer->rx_vtag[0], (const uint8_t *)buf + 16, 4);
	}
	if (link->nb_queues > 1 && k == 0)
		rc = dp_port_send_queue(link->port, sg_link_queue_of(link, buf),
					peer->path_ip_be[0], DP_IPPROTO_SCTP, m,
					link->now_tsc);
	/* SACK hold: a SACK for what this poll reads waits for the reply */
	else if (link->in_input && sg_pkt_sack_only(buf, len))
		rc = dp_port_send_held(link->ports[k], peer->path_ip_be[k],
				       DP_IPPROTO_SCTP, m, link->now_tsc);
	else
		rc = dp_port_send(link->ports[k], peer->path_ip_be[k],
				  DP_IPPROTO_SCTP, m, link->now_tsc);
	if (unlikely(rc == -ENOBUFS)) {
		/* Back-pressure (pacer queue, TX buffer or ARP hold full;
		 * counted by the dataplane too): ENOBUFS tells usrsctp the
		 * packet was not sent, so its chunks stay unsent (no RTT
		 * clock, not in flight) and go out on its next output: the
		 * next SACK, or the T3 timer it armed before this attempt.
		 * Reporting success instead turned a full pacer queue into
		 * losses of our own making (tail drops of a burst: a T3 and
		 * a cwnd cut). */
		link->st->tx_nobufs++;
		return ENOBUFS;
	}
	if (unlikely(rc != 0)) {
		link->st->tx_drops++; /* counted by the dataplane too */
		return 0;	       /* SCTP retransmits */
	}
	link->st->pkts_out++;
	peer->tx_seq = ++link->seq;
	if (link->nb_ports > 1) {
		uint64_t now_ms = link->now_tsc / link->ms_div;

		link->pst.pkts_out[k]++;
		sg_paths_sent(&peer->paths, k, now_ms);
		if (unlikely(peer->paths.await_tx)) {
			char a[16];

			peer->paths.await_tx = false;
			link->pst.last_switch_to_tx_ms =
				(int64_t)(now_ms - peer->paths.switch_ms);
			SDP_LOG(WARN, SCTP, "failover: peer %s: first SCTP "
				"packet on path %u %" PRId64 " ms after the "
				"switch, at %.3f (wall clock)",
				dp_ip_str(peer->ip_be, a, sizeof(a)), k,
				link->pst.last_switch_to_tx_ms, sg_wall_s());
		}
	}
	return 0;
}

/*
 * Chained TX (usrsctp-patches/0004): usrsctp hands over a packet as the
 * pieces of its mbuf chain: the common header, chunk headers, and
 * m_copym references to the send queue's clusters that hold the DATA
 * payload.  We copy everything up to the first DATA chunk's payload into
 * a header mbuf (room for our framing in front: every check of the layers
 * below that looks for DATA finds its chunk header there) and attach the
 * rest as external buffers (ext mbufs of the port's second pool).  One
 * shared-info per packet counts the attached segments; when the last
 * leaves (the PMD frees it after its copy into the ring or socket, or a
 * drop frees it) its callback gives the chain back to usrsctp
 * (usrsctp_conn_chain_free: m_freem, reference counts are atomic, any
 * thread).  Retransmissions reference the same clusters: usrsctp never
 * writes bytes a chunk has sent.
 *
 * Declined (usrsctp writes the packet into one mbuf, 0002): off
 * (tx_chain_min=0), smaller than tx_chain_min, no DATA chunk, failover
 * replay on (it keeps linear packets), or no ext mbuf.  No mbuf for the
 * head: dropped as conn_output drops it (ENOBUFS, tx_drops).
 */
struct sg_chain_ref {
	struct rte_mbuf_ext_shared_info shinfo; /* refcnt: attached segs */
	void *chain;				/* usrsctp's */
	struct sg_chain_ref *next;		/* while spare */
};

static uint64_t sg_chains_held;

uint64_t sg_tx_chains_held(void)
{
	return __atomic_load_n(&sg_chains_held, __ATOMIC_RELAXED);
}

/*
 * The records are reused, not malloc'd and freed per packet (glibc's
 * malloc and free per packet are a visible share of a bulk sender's
 * instructions).  The last segment's free (any thread: a PMD's TX, a
 * drop) pushes its record on one process-wide list (CAS push, ABA-free
 * since nobody pops single records from it); a link takes that whole
 * list at once (exchange) into its own spare list when it runs dry, and
 * allocates from there without atomics (usrsctp's output runs under the
 * endpoint's lock).  Their number is bounded by the chains in flight at
 * the peak (each holds an ext mbuf of the port's pool); sg_link_fini
 * frees its spares and the list.
 */
static struct sg_chain_ref *sg_chain_refs_back;
static uint64_t sg_chain_refs_live;	/* malloc'd, not yet freed */
static uint64_t sg_chain_refs_mallocs;	/* ever malloc'd */

void sg_tx_chain_refs(uint64_t *live, uint64_t *mallocs)
{
	*live = __atomic_load_n(&sg_chain_refs_live, __ATOMIC_RELAXED);
	*mallocs = __atomic_load_n(&sg_chain_refs_mallocs, __ATOMIC_RELAXED);
}

static struct sg_chain_ref *sg_chain_ref_get(struct sg_link *link)
{
	struct sg_chain_ref *ref = link->chain_spare;

	if (ref == NULL &&
	    __atomic_load_n(&sg_chain_refs_back, __ATOMIC_RELAXED) != NULL)
		ref = __atomic_exchange_n(&sg_chain_refs_back, NULL,
					  __ATOMIC_ACQUIRE);
	if (ref != NULL) {
		link->chain_spare = ref->next;
		return ref;
	}
	ref = malloc(sizeof(*ref));
	if (ref != NULL) {
		__atomic_fetch_add(&sg_chain_refs_live, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&sg_chain_refs_mallocs, 1,
				   __ATOMIC_RELAXED);
	}
	return ref;
}

static void sg_chain_ref_put(struct sg_chain_ref *ref)
{
	ref->next = __atomic_load_n(&sg_chain_refs_back, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&sg_chain_refs_back, &ref->next,
					    ref, true, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED))
		;
}

static void sg_chain_refs_free(struct sg_chain_ref *ref)
{
	struct sg_chain_ref *next;

	for (; ref != NULL; ref = next) {
		next = ref->next;
		free(ref);
		__atomic_fetch_sub(&sg_chain_refs_live, 1, __ATOMIC_RELAXED);
	}
}

/* The link's spares and the process's list; chains still in flight put
 * theirs back later: freed by the next fini, or left to the exit. */
static void sg_chain_refs_fini(struct sg_link *link)
{
	sg_chain_refs_free(link->chain_spare);
	link->chain_spare = NULL;
	sg_chain_refs_free(__atomic_exchange_n(&sg_chain_refs_back, NULL,
					       __ATOMIC_ACQUIRE));
}

static void sg_chain_free_cb(void *addr, void *opaque)
{
	struct sg_chain_ref *ref = opaque;

	(void)addr;
	usrsctp_conn_chain_free(ref->chain);
	sg_chain_ref_put(ref);
	__atomic_fetch_sub(&sg_chains_held, 1, __ATOMIC_RELAXED);
}

/* Read @n bytes at @off of the packet in @segs. @return false past its
 * end. */
static bool sg_segs_read(const struct usrsctp_conn_seg *segs, int nsegs,
			 size_t off, uint8_t *dst, size_t n)
{
	int i;

	for (i = 0; i < nsegs && n > 0; i++) {
		size_t l = segs[i].len, c;

		if (off >= l) {
			off -= l;
			continue;
		}
		c = l - off < n ? l - off : n;
		memcpy(dst, (const uint8_t *)segs[i].base + off, c);
		dst += c;
		n -= c;
		off = 0;
	}
	return n == 0;
}

/* The @n bytes at @off of the packet in @segs, read forward: *@seg_p /
 * *@start_p are the piece the previous read ended in and its offset (0 /
 * 0 at first), so a walk does not rescan the pieces before.  In place when
 * one piece holds them, else gathered into @tmp.  @return NULL past the
 * end. */
static const uint8_t *sg_segs_at(const struct usrsctp_conn_seg *segs,
				 int nsegs, int *seg_p, size_t *start_p,
				 size_t off, uint8_t *tmp, size_t n)
{
	int i = *seg_p;
	size_t start = *start_p;

	while (i < nsegs && off >= start + segs[i].len) {
		start += segs[i].len;
		i++;
	}
	*seg_p = i;
	*start_p = start;
	if (i == nsegs)
		return NULL;
	if (off + n <= start + segs[i].len)
		return (const uint8_t *)segs[i].base + (off - start);
	return sg_segs_read(segs + i, nsegs - i, off - start, tmp, n) ? tmp :
									 NULL;
}

/* Bytes up to the first DATA (I-DATA) chunk's payload: its offset plus
 * its header.  @return 0 without DATA. */
static size_t sg_segs_head_len(const struct usrsctp_conn_seg *segs,
			       int nsegs, size_t len)
{
	struct dp_chunk_walk w;
	uint8_t tmp[DP_SCTP_CHUNK_HDR_LEN];
	const uint8_t *h;
	size_t start = 0;
	int seg = 0;

	dp_chunk_walk_init(&w, NULL, len, SG_PKT_CHUNKS_MAX);
	while (dp_chunk_walk_more(&w)) {
		h = sg_segs_at(segs, nsegs, &seg, &start, w.off, tmp,
			       sizeof(tmp));
		if (h == NULL)
			return 0;
		/* DATA: chunk header + TSN, stream, SSN, PPID; I-DATA: TSN,
		 * stream, reserved, MID, PPID/FSN (RFC 8260) */
		if (h[0] == DP_SCTP_CHUNK_DATA)
			return w.off + 16 <= len ? w.off + 16 : 0;
		if (h[0] == DP_SCTP_CHUNK_IDATA)
			return w.off + 20 <= len ? w.off + 20 : 0;
		dp_chunk_walk_step(&w, (uint16_t)(h[2] << 8 | h[3]));
	}
	return 0;
}

int sg_conn_output_chain(void *addr, const struct usrsctp_conn_seg *segs,
			 int nsegs, size_t len, uint8_t tos, uint8_t set_df,
			 void *chain)
{
	struct rte_mbuf *ext[USRSCTP_CONN_CHAIN_SEGS_MAX];
	struct sg_peer *peer = addr;
	struct sg_chain_ref *ref;
	struct sg_link *link;
	struct dp_port *port;
	struct rte_mbuf *h;
	unsigned int n = 0, j;
	size_t head, off, skip;
	uint64_t sent;
	uint8_t *p;
	int i, rc;

	(void)tos;
	(void)set_df;
	if (unlikely(peer == NULL || peer->magic != SG_PEER_MAGIC))
		return USRSCTP_CONN_CHAIN_DECLINED; /* conn_output: EINVAL */
	link = peer->link;
	if (link->chain_min_bytes == 0 || len < link->chain_min_bytes ||
	    len > UINT16_MAX || nsegs > USRSCTP_CONN_CHAIN_SEGS_MAX ||
	    link->replay != NULL)
		return USRSCTP_CONN_CHAIN_DECLINED;
	head = sg_segs_head_len(segs, nsegs, len);
	if (head == 0 || head == len)
		return USRSCTP_CONN_CHAIN_DECLINED;
	port = link->ports[peer->paths.active];
	h = dp_pkt_alloc(port);
	if (unlikely(h == NULL)) {
		/* as conn_output with an empty pool: one no_mbuf drop per
		 * tx_drop, usrsctp sends the chunks again */
		usrsctp_conn_chain_free(chain);
		link->st->tx_drops++;
		return ENOBUFS;
	}
	p = (uint8_t *)rte_pktmbuf_append(h, (uint16_t)head);
	if (unlikely(p == NULL || !sg_segs_read(segs, nsegs, 0, p, head)))
		goto err_head;
	/* one ext mbuf per piece that ends after the head */
	for (i = 0, off = 0; i < nsegs; i++) {
		off += segs[i].len;
		if (off <= head)
			continue;
		if (unlikely(segs[i].len > UINT16_MAX))
			goto err_ext; /* an mbuf's buf_len is 16-bit */
		ext[n] = dp_pkt_ext_alloc(port);
		if (unlikely(ext[n] == NULL))
			goto err_ext;
		n++;
	}
	ref = sg_chain_ref_get(link); /* the last segment's free puts it */
	if (unlikely(ref == NULL))
		goto err_ext;
	ref->chain = chain;
	ref->shinfo.free_cb = sg_chain_free_cb;
	ref->shinfo.fcb_opaque = ref;
	rte_mbuf_ext_refcnt_set(&ref->shinfo, (uint16_t)n);
	/* from here on the chain is ours: the last segment freed frees it */
	for (i = 0, j = 0, off = 0; i < nsegs; i++) {
		struct rte_mbuf *e;
		size_t l = segs[i].len;

		if (off + l <= head) {
			off += l;
			continue;
		}
		skip = off < head ? head - off : 0;
		off += l;
		e = ext[j];
		rte_pktmbuf_attach_extbuf(
			e, (uint8_t *)(uintptr_t)segs[i].base + skip,
			RTE_BAD_IOVA, (uint16_t)(l - skip), &ref->shinfo);
		e->data_len = (uint16_t)(l - skip);
		e->pkt_len = e->data_len;
		(j == 0 ? h : ext[j - 1])->next = e;
		j++;
	}
	h->nb_segs = (uint16_t)(n + 1);
	h->pkt_len = (uint32_t)len;
	__atomic_fetch_add(&sg_chains_held, 1, __ATOMIC_RELAXED);
	SDP_TRACE(CONN_OUTPUT, len);
	sent = link->st->pkts_out;
	rc = sg_conn_send(peer, h, p, head);
	if (link->st->pkts_out != sent) {
		/* counted as pkts_out is: not a try refused with ENOBUFS
		 * (usrsctp sends it again) nor a drop */
		link->st->tx_chain_pkts++;
		link->st->tx_chain_ref_bytes += len - head;
		link->st->tx_chain_copy_bytes += head;
		link->st->tx_chain_segs += n;
	}
	return rc;

err_ext:
	for (j = 0; j < n; j++)
		dp_pkt_free(ext[j]);
err_head:
	dp_pkt_free(h);
	return USRSCTP_CONN_CHAIN_DECLINED;
}
