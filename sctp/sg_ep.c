/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sg_ep.c - an endpoint: one one-to-many (SOCK_SEQPACKET) usrsctp socket on
 * one dataplane port, its associations and its poll loop.
 *
 * The socket is bound to all AF_CONN addresses (sconn_addr NULL) on the
 * configured SCTP port and listens, so peers' INITs are accepted; sg_connect
 * starts associations with usrsctp_connect (on a one-to-many socket it
 * returns at once, the association comes up later).  Associations are
 * known by usrsctp's id; a hash map keeps each one's peer (IPv4 address
 * and port, learnt from the AF_CONN address) and whether it is up.
 *
 * The socket is non-blocking.  usrsctp's upcall (run from inside
 * usrsctp_conninput / timers, possibly deferred) only sets ep->readable;
 * sg_poll reads afterwards.  Options set at open, for all future
 * associations: streams (SCTP_INITMSG), RTO (SCTP_RTOINFO), heartbeat,
 * path retransmissions and path MTU (SCTP_PEER_ADDR_PARAMS, PMTU discovery
 * off: the link MTU is known), association retransmissions
 * (SCTP_ASSOCINFO), SCTP_NODELAY, SCTP_EXPLICIT_EOR (large messages in
 * pieces), SCTP_RECVRCVINFO, SCTP_FRAGMENT_INTERLEAVE 0 (a partially read
 * message is finished before any other), SCTP_PARTIAL_DELIVERY_POINT
 * (min(max_msg, rcvbuf / 2): messages up to that size are read whole), buffer
 * sizes and events.
 *
 * Path MTU: conn_output packets are SCTP packets (common header included)
 * that the dataplane wraps in IPv4 (and perhaps UDP); for AF_CONN usrsctp
 * counts spp_pathmtu without the 12-byte common header, so
 * spp_pathmtu = dp_port_mtu - 20 (IPv4) - 8 (UDP room) - 12.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <usrsctp.h>

#include "sg_internal.h"

uint64_t sg_assoc_pack(const struct sg_assoc_info *ai)
{
	return (uint64_t)ai->peer_ip_be << 32 | (uint64_t)ai->peer_port << 16 |
	       (ai->up ? 1u : 0u);
}

void sg_assoc_unpack(uint64_t v, struct sg_assoc_info *ai)
{
	ai->peer_ip_be = (uint32_t)(v >> 32);
	ai->peer_port = (uint16_t)(v >> 16);
	ai->up = (v & 1) != 0;
}

static void upcall(struct socket *so, void *arg, int flags)
{
	struct sg_ep *ep = arg;

	(void)flags;
	if (usrsctp_get_events(so) & SCTP_EVENT_READ)
		ep->readable = true;
}

static int set_opt(struct sg_ep *ep, int level, int name, const char *what,
		   const void *val, socklen_t len)
{
	if (usrsctp_setsockopt(ep->so, level, name, val, len) != 0) {
		SDP_LOG(ERR, SCTP, "port %u: usrsctp refused %s: %m",
			ep->cfg.port, what);
		return -EIO;
	}
	return 0;
}

static int configure_socket(struct sg_ep *ep)
{
	const struct sg_config *c = &ep->cfg;
	struct sctp_initmsg init = { 0 };
	struct sctp_rtoinfo rto = { 0 };
	struct sctp_assocparams ap = { 0 };
	struct sctp_paddrparams pp;
	struct sctp_sack_info sack;
	struct sctp_assoc_value burst, ss, nr;
	struct sctp_event ev = { 0 };
	static const uint16_t events[] = { SCTP_ASSOC_CHANGE,
					   SCTP_SHUTDOWN_EVENT };
	int one = 1, zero = 0, nodelay = c->nodelay ? 1 : 0;
	int sndbuf = (int)c->sndbuf_bytes, rcvbuf = (int)c->rcvbuf_bytes;
	uint32_t mtu = dp_port_mtu(ep->lk->port), pd_point;
	size_t i;
	int rc = 0;

	init.sinit_num_ostreams = c->streams;
	init.sinit_max_instreams = c->streams;
	init.sinit_max_attempts = c->path_max_rxt;
	init.sinit_max_init_timeo = (uint16_t)(c->rto_max_ms > 65535
						       ? 65535
						       : c->rto_max_ms);
	rto.srto_assoc_id = SCTP_FUTURE_ASSOC;
	rto.srto_initial = c->rto_initial_ms;
	rto.srto_min = c->rto_min_ms;
	rto.srto_max = c->rto_max_ms;
	ap.sasoc_assoc_id = SCTP_FUTURE_ASSOC;
	ap.sasoc_asocmaxrxt = c->path_max_rxt;
	memset(&pp, 0, sizeof(pp));
	pp.spp_assoc_id = SCTP_FUTURE_ASSOC;
	pp.spp_pathmaxrxt = c->path_max_rxt;
	pp.spp_pathmtu = mtu - SG_L3_OVERHEAD - SG_SCTP_HDR;
	pp.spp_hbinterval = c->hb_interval_ms;
	pp.spp_flags = SPP_PMTUD_DISABLE |
		       (c->hb_interval_ms != 0 ? SPP_HB_ENABLE
					       : SPP_HB_DISABLE);

	rc |= set_opt(ep, SOL_SOCKET, SO_SNDBUF, "SO_SNDBUF (sndbuf)",
		      &sndbuf, sizeof(sndbuf));
	rc |= set_opt(ep, SOL_SOCKET, SO_RCVBUF, "SO_RCVBUF (rcvbuf)",
		      &rcvbuf, sizeof(rcvbuf));
	rc |= set_opt(ep, IPPROTO_SCTP, SCTP_INITMSG,
		      "SCTP_INITMSG (streams)", &init, sizeof(init));
	rc |= set_opt(ep, IPPROTO_SCTP, SCTP_RTOINFO,
		      "SCTP_RTOINFO (rto_*_ms)", &rto, sizeof(rto));
	rc |= set_opt(ep, IPPROTO_SCTP, SCTP_ASSOCINFO,
		      "SCTP_ASSOCINFO (path_max_rxt)", &ap, sizeof(ap));
	rc |= set_opt(ep, IPPROTO_SCTP, SCTP_PEER_ADDR_PARAMS,
		      "SCTP_PEER_ADDR_PARAMS (hb_interval_ms, path_max_rxt, "
		      "path mtu)", &pp, sizeof(pp));
	sack.sack_assoc_id = SCTP_FUTURE_ASSOC;
	sack.sack_delay = c->sack_delay_ms;
	sack.sack_freq = c->sack_delay_ms == 0 ? 1 : 2;
	rc |= set_opt(ep, IPPROTO_SCTP, SCTP_DELAYED_SACK,
		      "SCTP_DELAYED_SACK (sack_delay_ms)", &sack, sizeof(sack));
	/* usrsctp cuts the cwnd to flight + max_burst MTUs at every output
	 * (sctp_use_cwnd_based_maxburst): with its default 4 a 64 KiB message
	 * at MTU 9000 (8 packets) waits a round trip for its last 4. */
	burst.assoc_id = SCTP_FUTURE_ASSOC;
	burst.assoc_value = c->max_burst;
	rc |= set_opt(ep, IPPROTO_SCTP, SCTP_MAX_BURST,
		      "SCTP_MAX_BURST (max_burst)", &burst, sizeof(burst));
	/* Which stream's queued message leaves next.  usrsctp's default
	 * round-robins over the streams with data, so messages queued on
	 * several streams (the transport's stream map) leave interleaved:
	 * each finishes later than in the order sent (seed 000's farm).
	 * 5 (first come first served) keeps the send
	 * order; the streams still spare the receiver head-of-line waits. */
	ss.assoc_id = SCTP_FUTURE_ASSOC;
	ss.assoc_value = c->stream_sched;
	rc |= set_opt(ep, IPPROTO_SCTP, SCTP_PLUGGABLE_SS,
		      "SCTP_PLUGGABLE_SS (stream_sched)", &ss, sizeof(ss));
	/* NR-SACK: offered in INIT/INIT-ACK, used when both ends offer it.
	 * The receiver then reports what it will never renege; the sender
	 * frees that from its send buffer before the cumulative ack, so
	 * messages complete on other streams stop holding buffer space
	 * behind a hole.  usrsctp marks data non-renegable when it is
	 * delivered; nr_sack=2 marks every chunk on arrival
	 * (sctp_do_drain=0, process-wide: nothing calls sctp_drain in
	 * usrsctp, so no data is ever reneged either way). */
	nr.assoc_id = SCTP_FUTURE_ASSOC;
	nr.assoc_value = c->nr_sack != 0 ? 1 : 0;
	rc |= set_opt(ep, IPPROTO_SCTP, SCTP_NRSACK_SUPPORTED,
		      "SCTP_NRSACK_SUPPORTED (nr_sack)", &nr, sizeof(nr));
	if (c->nr_sack == 2)
		usrsctp_sysctl_set_sctp_do_drain(0);
	rc |= set_opt(ep, IPPROTO_SCTP, SCTP_NODELAY, "SCTP_NODELAY",
		      &nodelay, sizeof(nodelay));
	rc |= set_opt(ep, IPPROTO_SCTP, SCTP_EXPLICIT_EOR,
		      "SCTP_EXPLICIT_EOR", &one, sizeof(one));
	rc |= set_opt(ep, IPPROTO_SCTP, SCTP_RECVRCVINFO, "SCTP_RECVRCVINFO",
		      &one, sizeof(one));
	rc |= set_opt(ep, IPPROTO_SCTP, SCTP_FRAGMENT_INTERLEAVE,
		      "SCTP_FRAGMENT_INTERLEAVE", &zero, sizeof(zero));
	/* usrsctp starts partial delivery at half its default receive space
	 * (64 KiB), fixed when the socket is created: a longer message would
	 * be read in pieces while it arrives.  Deliver messages up to
	 * max_msg whole, but start partial delivery by half the receive
	 * buffer: the window (which counts per-chunk overhead too) must
	 * still admit enough of a longer message to reach the point. */
	pd_point = c->max_msg_bytes < c->rcvbuf_bytes / 2 ?
			   c->max_msg_bytes :
			   c->rcvbuf_bytes / 2;
	rc |= set_opt(ep, IPPROTO_SCTP, SCTP_PARTIAL_DELIVERY_POINT,
		      "SCTP_PARTIAL_DELIVERY_POINT (max_msg, rcvbuf / 2)",
		      &pd_point, sizeof(pd_point));
	ev.se_assoc_id = SCTP_FUTURE_ASSOC;
	ev.se_on = 1;
	for (i = 0; i < SDP_ARRAY_SIZE(events); i++) {
		ev.se_type = events[i];
		rc |= set_opt(ep, IPPROTO_SCTP, SCTP_EVENT, "SCTP_EVENT", &ev,
			      sizeof(ev));
	}
	return rc != 0 ? -EIO : 0;
}

/* The socket of @ep: non-blocking, configured, bound to all AF_CONN
 * addresses on cfg.port and listening.  ep->lk is set. */
static int sg_ep_socket_open(struct sg_ep *ep)
{
	const struct sg_config *cfg = &ep->cfg;
	struct sockaddr_conn sc;
	int rc;

	ep->lk->now_tsc = dp_tsc();
	ep->so = usrsctp_socket(AF_CONN, SOCK_SEQPACKET, IPPROTO_SCTP, NULL,
				NULL, 0, NULL);
	if (ep->so == NULL) {
		SDP_LOG(ERR, SCTP, "port %u: usrsctp_socket failed: %m",
			cfg->port);
		return -ENOMEM;
	}
	if (usrsctp_set_non_blocking(ep->so, 1) != 0 ||
	    usrsctp_set_upcall(ep->so, upcall, ep) != 0) {
		SDP_LOG(ERR, SCTP, "port %u: cannot make the socket "
			"non-blocking: %m", cfg->port);
		rc = -EIO;
		goto err_close;
	}
	rc = configure_socket(ep);
	if (rc != 0)
		goto err_close;
	memset(&sc, 0, sizeof(sc));
	sc.sconn_family = AF_CONN;
	sc.sconn_port = htons(cfg->port);
	sc.sconn_addr = NULL; /* all addresses: every registered peer */
	if (usrsctp_bind(ep->so, (struct sockaddr *)&sc, sizeof(sc)) != 0) {
		rc = errno == EADDRINUSE ? -EADDRINUSE : -EIO;
		SDP_LOG(ERR, SCTP, "cannot bind SCTP port %u: %m: pick another "
			"port=", cfg->port);
		goto err_close;
	}
	if (usrsctp_listen(ep->so, 1) != 0) {
		SDP_LOG(ERR, SCTP, "port %u: usrsctp_listen failed: %m",
			cfg->port);
		rc = -EIO;
		goto err_close;
	}
	SDP_LOG(INFO, SCTP, "endpoint on SCTP port %u%s: %u streams, path mtu "
		"%u, rto %u/%u/%u ms, path_max_rxt %u, %u rx descriptors of "
		"%u bytes", cfg->port, ep->base != NULL ? " (lane)" : "",
		cfg->streams,
		dp_port_mtu(ep->lk->port) - SG_L3_OVERHEAD - SG_SCTP_HDR,
		cfg->rto_min_ms, cfg->rto_initial_ms, cfg->rto_max_ms,
		cfg->path_max_rxt, cfg->rx_descs, cfg->rx_buf_bytes);
	return 0;

err_close:
	usrsctp_close(ep->so);
	ep->so = NULL;
	return rc;
}

/* Everything of an endpoint but its link and socket. */
static int sg_ep_alloc(const struct sg_config *cfg, struct dp_port *port,
		       struct sg_ep **ep_p)
{
	struct sg_ep *ep;
	int rc;

	rc = sg_config_check(cfg);
	if (rc != 0)
		return rc;
	if (dp_port_mtu(port) < SG_L3_OVERHEAD + SG_SCTP_HDR + 512) {
		SDP_LOG(ERR, SCTP, "port mtu %u too small for SCTP: use "
			"mtu >= %u", dp_port_mtu(port),
			SG_L3_OVERHEAD + SG_SCTP_HDR + 512);
		return -EINVAL;
	}
	ep = calloc(1, sizeof(*ep));
	if (ep == NULL)
		return -ENOMEM;
	ep->cfg = *cfg;
	/* a DATA chunk's payload in one packet (spp_pathmtu less the
	 * 16-byte chunk header), less 16 bytes of margin */
	ep->big.head_cap = (size_t)dp_port_mtu(port) - SG_L3_OVERHEAD -
			   SG_SCTP_HDR - 16 - 16;
	ep->big.head = malloc(ep->big.head_cap);
	if (ep->big.head == NULL) {
		rc = -ENOMEM;
		goto err_free_ep;
	}
	rc = sg_map_init(&ep->assocs, 4 * cfg->max_peers);
	if (rc != 0)
		goto err_free_ep;
	rc = sg_evq_init(&ep->evq, cfg->event_queue);
	if (rc != 0)
		goto err_assocs;
	rc = sg_rxpool_init(&ep->rx, cfg, ep);
	if (rc != 0)
		goto err_evq;
	*ep_p = ep;
	return 0;

err_evq:
	sg_evq_fini(&ep->evq);
err_assocs:
	sg_map_free(&ep->assocs);
err_free_ep:
	free(ep->big.head);
	free(ep);
	return rc;
}

static void sg_ep_free(struct sg_ep *ep)
{
	sg_rxpool_fini(&ep->rx);
	sg_evq_fini(&ep->evq);
	sg_map_free(&ep->assocs);
	free(ep->big.bounce);
	free(ep->big.head);
	free(ep->scratch);
	free(ep);
}

/* usrsctp's send buffer size (usrsctp-patches/0005) is process-wide: the
 * endpoint opened last sets it. sg_config_check has checked the range. */
static void sg_ep_set_tx_cluster(const struct sg_config *cfg)
{
	if (usrsctp_set_tx_cluster_bytes(cfg->tx_cluster_bytes) != 0)
		SDP_LOG(ERR, SCTP, "port %u: usrsctp refused tx_cluster=%u: "
			"give 0 or 2048..16M", cfg->port,
			cfg->tx_cluster_bytes);
}

int sg_ep_open(struct dp_port *port, const struct sg_config *cfg,
	       struct sg_ep **ep_p)
{
	struct sg_ep *ep;
	int rc;

	if (port == NULL || cfg == NULL || ep_p == NULL)
		return -EINVAL;
	rc = sg_ep_alloc(cfg, port, &ep);
	if (rc != 0)
		return rc;
	ep->lk = &ep->link;
	rc = sg_link_init(ep->lk, port, cfg->max_peers, &ep->st);
	if (rc != 0)
		goto err_free;
	/* strangers (sg_conn.c): how many, for how long */
	ep->lk->max_pending = cfg->pending_peers;
	ep->lk->pending_tsc = dp_tsc_hz() / 1000 * cfg->pending_ms;
	/* a port with several queues: lane q (port + q) sends on queue q */
	ep->lk->queue_port0 = cfg->port;
	ep->lk->nb_queues = (uint16_t)dp_port_nb_queues(port);
	/* at least one tick: 0 means off */
	ep->lk->hold_tsc = cfg->sack_hold_us == 0 ? 0 :
			   dp_tsc_hz() * cfg->sack_hold_us / 1000000 + 1;
	/* a port whose device reads by IOVA gets every packet in one mbuf
	 * of its pool: usrsctp's buffers have no IOVA */
	ep->lk->chain_min_bytes = dp_port_tx_ext(port) ?
					  cfg->tx_chain_min_bytes : 0;
	ep->lk->rx_ext = cfg->rx_ext;
	sg_stack_get();
	sg_ep_set_tx_cluster(cfg);
	rc = sg_ep_socket_open(ep);
	if (rc != 0)
		goto err_stack;
	*ep_p = ep;
	return 0;

err_stack:
	sg_link_release(ep->lk);
	sg_stack_put();
	sg_link_fini(ep->lk);
err_free:
	sg_ep_free(ep);
	return rc;
}

int sg_ep_open_lane(struct sg_ep *base, const struct sg_config *cfg,
		    struct sg_ep **ep_p)
{
	struct sg_ep *ep;
	int rc;

	if (base == NULL || base->base != NULL || cfg == NULL || ep_p == NULL)
		return -EINVAL;
	if (cfg->port == base->cfg.port) {
		SDP_LOG(ERR, SCTP, "lane on SCTP port %u: the base endpoint "
			"has it; give each lane its own port=", cfg->port);
		return -EADDRINUSE;
	}
	rc = sg_ep_alloc(cfg, base->lk->port, &ep);
	if (rc != 0)
		return rc;
	ep->base = base;
	ep->lk = base->lk;
	if ((uint16_t)(cfg->port - ep->lk->queue_port0) < ep->lk->nb_queues)
		ep->queue = (uint16_t)(cfg->port - ep->lk->queue_port0);
	sg_stack_get();
	sg_ep_set_tx_cluster(cfg);
	rc = sg_ep_socket_open(ep);
	if (rc != 0) {
		sg_stack_put();
		sg_ep_free(ep);
		return rc;
	}
	base->nb_lanes++;
	*ep_p = ep;
	return 0;
}

void sg_ep_close(struct sg_ep *ep)
{
	struct linger lg = { 1, 0 };
	uint64_t now;

	if (ep == NULL) {
		SDP_LOG(WARN, SCTP, "sg_ep_close(NULL)");
		return;
	}
	if (ep->base == NULL && ep->nb_lanes != 0)
		SDP_LOG(ERR, SCTP, "sg_ep_close: %u lanes still open on SCTP "
			"port %u: close them first", ep->nb_lanes,
			ep->cfg.port);
	now = dp_tsc();
	ep->lk->now_tsc = now;
	/* Linger 0: abort every association now (ABORT chunks go out
	 * through conn_output while the link still exists). */
	usrsctp_setsockopt(ep->so, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	usrsctp_set_upcall(ep->so, NULL, NULL);
	usrsctp_close(ep->so);
	sg_link_hold_release(ep->lk, now);
	for (unsigned int k = 0; k < ep->lk->nb_ports; k++)
		dp_port_flush(ep->lk->ports[k], now);
	if (ep->queue != 0)
		dp_port_flush_queue(ep->lk->port, ep->queue, now);
	/* zero-copy sends: usrsctp let go of them all (chained packets
	 * still in a port aside) */
	if (ep->big.active)
		sg_msg_send_abort(ep, ep->big.assoc);
	sg_zc_close(ep);
	sg_rxpool_put_chain(ep->rx_head);
	if (ep->base != NULL) {
		/* A lane: the link (peers, port) is the base's. */
		ep->base->nb_lanes--;
		sg_stack_put();
		ep->rx_head = NULL;
		sg_ep_free(ep);
		return;
	}
	/* Addresses go before usrsctp does; peer memory after it, as its
	 * last timers may still name a peer. */
	sg_link_release(ep->lk);
	sg_stack_put();
	sg_link_fini(ep->lk);
	sg_ep_free(ep);
}

int sg_ep_assoc_up(struct sg_ep *ep, sg_assoc_t assoc)
{
	struct sg_assoc_info ai = { 0 };
	struct sockaddr *addrs = NULL;
	char ip[16];
	uint64_t v;
	int n, rc;

	if (sg_map_get(&ep->assocs, assoc, &v))
		sg_assoc_unpack(v, &ai);
	n = usrsctp_getpaddrs(ep->so, (sctp_assoc_t)assoc, &addrs);
	if (n > 0 && addrs->sa_family == AF_CONN) {
		const struct sockaddr_conn *sc =
			(const struct sockaddr_conn *)addrs;
		struct sg_peer *p = sc->sconn_addr;

		if (p != NULL && p->magic == SG_PEER_MAGIC) {
			ai.peer_ip_be = p->ip_be;
			sg_link_peer_trust(ep->lk, p);
		}
		ai.peer_port = ntohs(sc->sconn_port);
	}
	if (addrs != NULL)
		usrsctp_freepaddrs(addrs);
	ai.up = true;
	rc = sg_map_put(&ep->assocs, assoc, sg_assoc_pack(&ai));
	if (rc == 0)
		return 0;
	/* An association sg cannot track could never send: end it now
	 * (the peer sees an ABORT) rather than leave it up and mute. */
	ep->st.assoc_table_full++;
	SDP_LOG(ERR, SCTP, "association %u from %s aborted: the endpoint's "
		"association table %s (%u of at most %u = 4 x max_peers): "
		"raise sg max_peers", assoc,
		dp_ip_str(ai.peer_ip_be, ip, sizeof(ip)),
		rc == -ENOSPC ? "is full" : "cannot grow (out of memory)",
		ep->assocs.count, ep->assocs.limit);
	sg_assoc_abort(ep, assoc);
	return rc;
}

void sg_ep_assoc_gone(struct sg_ep *ep, sg_assoc_t assoc)
{
	sg_msg_send_abort(ep, assoc);
	if (ep->rx_head != NULL && ep->rx_head->assoc == assoc) {
		/* The rest of a partly read message will never come. */
		sg_rxpool_put_chain(ep->rx_head);
		ep->rx_head = ep->rx_tail = NULL;
		sg_place_reset(ep);
	}
	sg_map_del(&ep->assocs, assoc);
}

bool sg_assoc_up(const struct sg_ep *ep, sg_assoc_t assoc)
{
	struct sg_assoc_info ai;
	uint64_t v;

	if (!sg_map_get(&ep->assocs, assoc, &v))
		return false;
	sg_assoc_unpack(v, &ai);
	return ai.up;
}

int sg_connect(struct sg_ep *ep, uint32_t peer_ip_be, uint16_t peer_port,
	       sg_assoc_t *assoc_p)
{
	struct sg_assoc_info ai = { peer_ip_be, peer_port, false };
	struct sockaddr_conn sc;
	struct sg_peer *peer;
	sctp_assoc_t id;
	int rc = 0;

	if (sg_link_src_invalid(ep->lk, peer_ip_be)) {
		char a[16];

		SDP_LOG(ERR, SCTP, "connect: %s cannot be a peer (0.0.0.0/8, "
			"loopback, multicast, broadcast or this port's own "
			"address): give the peer's unicast address",
			dp_ip_str(peer_ip_be, a, sizeof(a)));
		return -EINVAL;
	}
	peer = sg_link_peer(ep->lk, peer_ip_be);
	if (peer == NULL && ep->lk->nb_peers == ep->lk->max_peers) {
		SDP_LOG(ERR, SCTP, "connect: %u peers already known: raise "
			"max_peers", ep->lk->max_peers);
		return -ENOSPC;
	}
	if (peer == NULL) {
		SDP_LOG(ERR, SCTP, "connect: out of memory for peer %u",
			ep->lk->nb_peers + 1);
		return -ENOMEM;
	}
	memset(&sc, 0, sizeof(sc));
	sc.sconn_family = AF_CONN;
	sc.sconn_port = htons(peer_port);
	sc.sconn_addr = peer;
	ep->lk->now_tsc = dp_tsc();
	if (usrsctp_connect(ep->so, (struct sockaddr *)&sc, sizeof(sc)) != 0) {
		if (errno != EALREADY && errno != EINPROGRESS) {
			SDP_LOG(ERR, SCTP, "connect to port %u: usrsctp_connect "
				"failed: %m", peer_port);
			return -EIO;
		}
		if (errno == EALREADY)
			rc = -EALREADY;
	}
	id = usrsctp_getassocid(ep->so, (struct sockaddr *)&sc);
	if (id == 0) {
		SDP_LOG(ERR, SCTP, "connect to port %u: no association id",
			peer_port);
		return -EIO;
	}
	if (rc == 0) {
		rc = sg_map_put(&ep->assocs, (uint32_t)id, sg_assoc_pack(&ai));
		if (rc != 0) {
			ep->st.assoc_table_full++;
			SDP_LOG(ERR, SCTP, "connect to port %u: the endpoint's "
				"association table %s (%u of at most %u = 4 x "
				"max_peers): raise sg max_peers", peer_port,
				rc == -ENOSPC ? "is full" :
						"cannot grow (out of memory)",
				ep->assocs.count, ep->assocs.limit);
			sg_assoc_abort(ep, (sg_assoc_t)id);
			return rc;
		}
	}
	*assoc_p = (sg_assoc_t)id;
	return rc;
}

int sg_disconnect(struct sg_ep *ep, sg_assoc_t assoc)
{
	struct sctp_sndinfo si = { 0 };

	if (!sg_map_get(&ep->assocs, assoc, &(uint64_t){ 0 }))
		return -ENOTCONN;
	si.snd_flags = SCTP_EOF;
	si.snd_assoc_id = (sctp_assoc_t)assoc;
	ep->lk->now_tsc = dp_tsc();
	/* usrsctp_sendv insists on a data pointer even for 0 bytes. */
	if (usrsctp_sendv(ep->so, &si, 0, NULL, 0, &si, sizeof(si),
			  SCTP_SENDV_SNDINFO, 0) < 0 && errno != EINPROGRESS) {
		/* usrsctp refuses any send, SCTP_EOF included, on an
		 * association the peer is already shutting down (it sent
		 * SHUTDOWN): that shutdown is under way and ends as usual,
		 * once this side's SHUTDOWN ACK is answered. */
		if (errno == ECONNRESET &&
		    sg_map_get(&ep->assocs, assoc, &(uint64_t){ 0 }))
			return 0;
		SDP_LOG(WARN, SCTP, "assoc %u: shutdown failed: %m", assoc);
		return -ENOTCONN;
	}
	return 0;
}

/* A lane's loop: the base endpoint's sg_poll polls the shared port and
 * runs usrsctp (whose input demultiplexes to this socket by SCTP port and
 * raises its upcall); the lane reads its socket, continues its large
 * send and flushes what that queued on the port. */
static unsigned int sg_poll_lane(struct sg_ep *ep, uint64_t now_tsc)
{
	unsigned int work = 0;
	unsigned int k;

	ep->lk->now_tsc = now_tsc;
	/* Timer-driven notifications (COMM_LOST) ran in the base's poll
	 * and do not always raise the upcall: ask the socket. */
	if (ep->timer_gen_seen != ep->lk->timer_gen) {
		ep->timer_gen_seen = ep->lk->timer_gen;
		if (usrsctp_get_events(ep->so) & SCTP_EVENT_READ)
			ep->readable = true;
	}
	if (ep->queue != 0) {
		/* its own queue: the peer's lane sends to us on it */
		work += dp_port_poll_queue(ep->lk->port, ep->queue, now_tsc);
		if (sg_link_input_queue(ep->lk, ep->queue, now_tsc) != 0)
			ep->readable = true;
	}
	work += sg_gone_tick(ep, now_tsc);
	if (ep->big.active)
		work += sg_msg_send_more(ep);
	work += sg_msg_read(ep);
	work += sg_zc_deliver(ep);
	if (ep->nb_unsent != 0)
		sg_unsent_update(ep);
	if (ep->queue != 0) {
		dp_port_flush_queue(ep->lk->port, ep->queue, now_tsc);
		return work;
	}
	for (k = 0; k < ep->lk->nb_ports; k++)
		dp_port_flush(ep->lk->ports[k], now_tsc);
	return work;
}

unsigned int sg_poll(struct sg_ep *ep, uint64_t now_tsc)
{
	unsigned int work, n;
	unsigned int k;

	work = 0;
	if (ep->base != NULL)
		return sg_poll_lane(ep, now_tsc);
	for (k = 0; k < ep->lk->nb_ports; k++)
		work += dp_port_poll(ep->lk->ports[k], now_tsc);
	n = sg_link_input(ep->lk, now_tsc);
	if (n != 0)
		ep->readable = true;
	if (ep->lk->pend_head != NULL)
		work += sg_link_reclaim(ep->lk, now_tsc);
	n = sg_stack_timers(now_tsc);
	ep->st.timer_runs += n;
	ep->lk->timer_gen += n;
	work += n;
	/* Timer-driven notifications (COMM_LOST after retransmissions)
	 * do not always raise the upcall: ask the socket. */
	if (n != 0 && (usrsctp_get_events(ep->so) & SCTP_EVENT_READ))
		ep->readable = true;
	work += sg_gone_tick(ep, now_tsc);
	if (ep->big.active)
		work += sg_msg_send_more(ep);
	n = sg_msg_read(ep);
	work += n;
	/* after the notifications: a lost association is known */
	work += sg_zc_deliver(ep);
	if (ep->lk->nb_ports > 1)
		work += sg_link_paths_tick(ep->lk, now_tsc);
	if (ep->lk->hold_tsc != 0)
		sg_link_hold_end(ep->lk, n, now_tsc);
	if (ep->nb_unsent != 0)
		sg_unsent_update(ep);
	for (k = 0; k < ep->lk->nb_ports; k++)
		dp_port_flush(ep->lk->ports[k], now_tsc);
	return work;
}

void sg_ep_stats(const struct sg_ep *ep, struct sg_stats *stats)
{
	struct dp_stats ds;

	*stats = ep->st;
	dp_port_stats(ep->lk->port, &ds);
	stats->crc_drops = ds.drops[DP_DROP_SCTP_CRC];
	stats->rx_ext_held = sg_rx_ext_held_now();
	stats->tx_cluster_bytes = usrsctp_get_tx_cluster_bytes();
	stats->tx_clusters_held = usrsctp_get_tx_clusters_held();
}

void sg_stats_print(const struct sg_stats *s, FILE *f)
{
#define P(x) fprintf(f, #x " %" PRIu64 "\n", s->x)
	P(msgs_out);
	P(bytes_out);
	P(msgs_in);
	P(bytes_in);
	P(pkts_in);
	P(pkts_out);
	P(rx_copies);
	P(rx_copy_input_bytes);
	P(rx_copy_recv_bytes);
	P(rx_backpressure);
	P(tx_backpressure);
	P(tx_drops);
	P(tx_nobufs);
	P(rx_not_sctp);
	P(rx_no_peer);
	P(rx_bad_src);
	P(rx_bad_vtag);
	P(rx_pending_full);
	P(peers_reclaimed);
	P(rx_probe_refused);
	P(notify_cut);
	P(notify_bad);
	P(assoc_table_full);
	P(events_dropped);
	P(timer_runs);
	P(crc_drops);
	P(rx_data_wrong_queue);
	P(tx_first_pkt_early);
	P(unsent_untracked);
	P(rx_direct_bytes);
	P(rx_direct_msgs);
	P(rx_discard_bytes);
	P(tx_direct_pkts);
	P(tx_copy_bytes);
	P(tx_chain_pkts);
	P(tx_chain_ref_bytes);
	P(tx_chain_copy_bytes);
	P(tx_direct_bytes);
	P(rx_ext_pkts);
	P(rx_ext_bytes);
	P(rx_ext_pool_low);
	P(rx_ext_held);
	P(peer_gone_aborts);
	P(rx_nr_sacks);
	P(rx_nr_sacks_nr_gaps);
	P(tx_chain_segs);
	P(tx_cluster_bytes);
	P(tx_clusters_held);
#undef P
}

int sg_ep_paths(struct sg_ep *ep, struct dp_port *const *ports, unsigned int n,
		const struct sg_path_config *cfg)
{
	unsigned int k;

	if (n < 1 || n >= SG_PATHS_MAX || cfg == NULL || !cfg->on ||
	    ep->lk->nb_ports != 1) {
		SDP_LOG(ERR, SCTP, "port %u: %u backup paths: give 1..%u, "
			"once, with failover on", ep->cfg.port, n,
			SG_PATHS_MAX - 1);
		return -EINVAL;
	}
	for (k = 0; k < n; k++) {
		if (dp_port_mtu(ports[k]) != dp_port_mtu(ep->lk->port)) {
			SDP_LOG(ERR, SCTP, "port %u: path %u has MTU %u, path "
				"0 %u: give every path the same mtu",
				ep->cfg.port, k + 1, dp_port_mtu(ports[k]),
				dp_port_mtu(ep->lk->port));
			return -EINVAL;
		}
	}
	if (ep->lk->nb_queues > 1) {
		SDP_LOG(ERR, SCTP, "port %u: failover paths on a port with %u "
			"queues: give the port queues=1", ep->cfg.port,
			ep->lk->nb_queues);
		return -EINVAL;
	}
	ep->lk->replay = calloc(SG_REPLAY_MAX, sizeof(*ep->lk->replay));
	if (ep->lk->replay == NULL)
		return -ENOMEM;
	for (k = 0; k < n; k++) {
		ep->lk->ports[k + 1] = ports[k];
		ep->lk->own_ip_be[k + 1] = dp_port_ip(ports[k]);
		dp_port_hold(ports[k]);
	}
	ep->lk->nb_ports = n + 1;
	ep->lk->pcfg = *cfg;
	ep->lk->pst.nb_paths = n + 1;
	SDP_LOG(INFO, SCTP, "port %u: failover over %u paths: probe %u ms, "
		"dead %u ms, return %u ms", ep->cfg.port, n + 1, cfg->probe_ms,
		cfg->dead_ms, cfg->return_ms);
	return 0;
}

int sg_ep_peer_paths(struct sg_ep *ep, uint32_t peer_ip_be,
		     const uint32_t *path_ips_be, unsigned int n)
{
	struct sg_peer *peer;

	if (ep->lk->nb_ports < 2 || n >= ep->lk->nb_ports)
		return -EINVAL;
	peer = sg_link_peer(ep->lk, peer_ip_be);
	if (peer == NULL)
		return -ENOSPC;
	ep->lk->now_tsc = dp_tsc();
	return sg_link_peer_paths(ep->lk, peer, path_ips_be, n);
}

void sg_ep_path_stats(const struct sg_ep *ep, struct sg_path_stats *st)
{
	*st = ep->lk->pst;
}

struct dp_port *sg_ep_port(const struct sg_ep *ep)
{
	return ep->lk->port;
}
