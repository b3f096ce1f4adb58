/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sg_many.cc - one endpoint with thousands of peers: every one a
 * distinct IPv4 address, all over one memif port.
 *
 *   hub child (sg stack)                  many child (usrsctp + raw ethdev)
 *   10.9.0.1/16, memif server  <-memif->  memif client; answers ARP for
 *   sg_ep, default config;                10.9.16.0 + i (i < N) and sends
 *   echoes every message on the           from that address: N AF_CONN
 *   association it came on                addresses in one usrsctp, one
 *                                         association each to the hub
 *
 * The many child opens N associations (N = SDP_MANY_PEERS, default 4096)
 * from one one-to-many socket, each to the hub as seen from its own
 * address, sends two messages on each (one packet and two packets long,
 * contents a function of the address index and the message number), and
 * checks each echo: length, every byte, and that it came back on the same
 * association.  The hub checks that it learnt N peers and N associations
 * and reports its heap growth per association (sg's peer tables and
 * usrsctp's association state; DPDK memory is not on the heap).  When the
 * many side closes its port, the hub aborts all N associations after
 * peer_gone_ms.
 *
 * Needs root (memif vdevs under /run/sdp).  Every wait has a deadline; the
 * parent kills both children at its deadline and removes the socket
 * directory and the children's DPDK run directories.
 */
#include <gtest/gtest.h>

#include <string>
#include <unordered_map>
#include <vector>

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_arp.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "dp_internal.h"
#include "sg_child_pair.h"
#include "sg_internal.h"

#define CHECK SG_CHILD_CHECK

#include <usrsctp.h>

namespace {

const uint32_t HUB_IP = 0x0a090001u;	  /* 10.9.0.1, host order */
const uint32_t MANY_IP0 = 0x0a091000u;	  /* 10.9.16.0 + i */
const uint16_t HUB_PORT = 7000;
const uint16_t MANY_PORT = 7001;
const uint32_t MSGS = 2;		  /* per association */
const uint32_t MSG_BYTES[MSGS] = { 100, 2000 };
const double DEADLINE_S = 240;

std::string g_job, g_sockdir;
uint32_t g_n;

using sgpair::now_s;

} /* namespace */

/* usrsctp allocates from mimalloc when built with usrsctp_alloc=mimalloc
 * (its malloc renamed to mi_malloc, meson.build); these are absent
 * otherwise.  The area layout is mimalloc 2.0's mi_heap_area_t. */
struct mi_heap_s;
struct mi_area {
	void *blocks;
	size_t reserved, committed, used, block_size, full_block_size;
};
extern "C" mi_heap_s *mi_heap_get_backing(void) __attribute__((weak));
extern "C" bool mi_heap_visit_blocks(const mi_heap_s *heap, bool all,
				     bool (*visitor)(const mi_heap_s *,
						     const mi_area *, void *,
						     size_t, void *),
				     void *arg) __attribute__((weak));

namespace {

bool mi_count(const mi_heap_s *, const mi_area *area, void *block, size_t,
	      void *arg)
{
	if (block == nullptr) /* once per area: its blocks in use */
		*(uint64_t *)arg += area->used * area->block_size;
	return true;
}

/* Bytes the process has allocated: glibc's heap in use (small chunks and
 * mmapped ones) plus the blocks in use in this thread's mimalloc heap, if
 * usrsctp uses it (every usrsctp call here is on this thread).  DPDK
 * memory (pools, rings) is neither. */
uint64_t heap_bytes()
{
	struct mallinfo2 mi = mallinfo2();
	uint64_t mi_used = 0;

	if (mi_heap_get_backing != nullptr && mi_heap_visit_blocks != nullptr)
		mi_heap_visit_blocks(mi_heap_get_backing(), false, mi_count,
				     &mi_used);
	return (uint64_t)mi.uordblks + (uint64_t)mi.hblkhd + mi_used;
}

uint8_t pattern(uint32_t idx, uint32_t seq, uint32_t j)
{
	return (uint8_t)(idx * 31u + seq * 7u + j);
}

/* ------------------------------------------------------------------ */
/* hub: the stack under test                                          */

void hub_main(int done_fd)
{
	std::vector<sg_msg_desc *> backlog; /* echoes waiting for room */
	char dpc[512], ip[16];
	dp_config *dcfg = new dp_config;
	sg_config scfg;
	dp_port *port;
	sg_ep *ep;
	uint64_t echoed = 0, ups = 0, heap0, heap1;
	uint64_t want = (uint64_t)g_n * MSGS;
	double end = now_s() + DEADLINE_S;
	sg_event ev;

	dp_ip_str(htonl(HUB_IP), ip, sizeof(ip));
	snprintf(dpc, sizeof(dpc),
		 "dev=net_memif0,role=server,id=0,socket=%s/memif0.sock,"
		 "socket-abstract=no ip=%s/16 prefix=sdp-%s-hub mem=512 "
		 "idle_sleep_us=0 link_wait_ms=15000",
		 g_sockdir.c_str(), ip, g_job.c_str());
	CHECK(dp_config_parse(dpc, dcfg) == 0);
	CHECK(dp_eal_init(dcfg) == 0);
	CHECK(dp_port_open(dcfg, &port) == 0);
	/* defaults but the port: no max_peers raised */
	CHECK(sg_config_parse("port=7000", &scfg) == 0);
	CHECK(sg_ep_open(port, &scfg, &ep) == 0);
	heap0 = heap_bytes();

	for (uint64_t it = 0; echoed < want || !backlog.empty(); it++) {
		sg_msg_desc *msgs[32];
		unsigned int n, i;

		CHECK(now_s() < end);
		if (it % 1024 == 0) {
			pollfd pfd = { done_fd, POLLIN, 0 };

			/* the many side gave up: fail now, not at the
			 * deadline */
			CHECK(poll(&pfd, 1, 0) == 0);
		}
		if (sg_poll(ep, dp_tsc()) == 0)
			usleep(20); /* two cores shared with the many side */
		while (sg_next_event(ep, &ev) == 0)
			if (ev.type == SG_EV_UP)
				ups++;
		n = sg_recv(ep, msgs, 32);
		for (i = 0; i < n; i++)
			backlog.push_back(msgs[i]);
		while (!backlog.empty()) {
			sg_msg_desc *m = backlog.front();
			iovec iov = { m->data, m->len };
			int rc;

			CHECK(m->next == nullptr && m->len == m->msg_len);
			rc = sg_send(ep, m->assoc, m->stream, 0, m->ppid, &iov,
				     1);
			if (rc == -EAGAIN)
				break;
			CHECK(rc == 0);
			sg_msg_release(m);
			backlog.erase(backlog.begin());
			echoed++;
		}
	}
	heap1 = heap_bytes();
	fprintf(stderr,
		"hub: %u peers, %u associations (%" PRIu64 " up events), "
		"%" PRIu64 " messages echoed; peer map %u slots, association "
		"map %u slots; heap +%" PRIu64 " bytes = %" PRIu64 " per "
		"association (sizeof sg_peer %zu)\n",
		ep->lk->nb_peers - ep->lk->nb_free, ep->assocs.count, ups,
		echoed,
		ep->lk->peer_map.mask + 1, ep->assocs.mask + 1,
		heap1 - heap0, (heap1 - heap0) / g_n, sizeof(sg_peer));
	{
		dp_stats ds;

		dp_port_stats(port, &ds);
		fprintf(stderr, "hub: port rx %" PRIu64 " tx %" PRIu64
			" arp in %" PRIu64 " out %" PRIu64 "; drops:",
			ds.rx_pkts, ds.tx_pkts, ds.arp_rx, ds.arp_tx);
		for (int d = 0; d < DP_DROP_MAX; d++)
			if (ds.drops[d] != 0)
				fprintf(stderr, " %s %" PRIu64,
					dp_drop_name((dp_drop)d),
					ds.drops[d]);
		fprintf(stderr, "\n");
	}
	/* every peer trusted (an association each), no stranger left */
	CHECK(ep->lk->nb_peers - ep->lk->nb_free == g_n);
	CHECK(ep->lk->nb_pending == 0);
	CHECK(ep->assocs.count == g_n);
	CHECK(ep->st.rx_no_peer == 0);
	/* keep answering (SACKs, retransmissions) until the many side
	 * checked every echo */
	for (;;) {
		pollfd pfd = { done_fd, POLLIN, 0 };

		if (poll(&pfd, 1, 0) > 0)
			break;
		CHECK(now_s() < end);
		for (int k = 0; k < 64; k++)
			sg_poll(ep, dp_tsc());
		while (sg_next_event(ep, &ev) == 0)
			;
	}
	/* the many side closed its port: every association ends after
	 * peer_gone_ms (sg_gone.c), not only the first batch of them */
	double gone_end = now_s() + 10;
	uint64_t lost = 0;

	while (lost < g_n && now_s() < gone_end) {
		if (sg_poll(ep, dp_tsc()) == 0)
			usleep(100);
		while (sg_next_event(ep, &ev) == 0)
			if (ev.type == SG_EV_LOST)
				lost++;
	}
	fprintf(stderr, "hub: the many side left: %" PRIu64 " associations "
		"aborted, %" PRIu64 " lost events, %u left\n",
		ep->st.peer_gone_aborts, lost, ep->assocs.count);
	CHECK(ep->st.peer_gone_aborts == g_n);
	CHECK(lost == g_n);
	sg_ep_close(ep);
	dp_port_close(port);
	dp_eal_fini();
	_exit(0);
}

/* ------------------------------------------------------------------ */
/* many: N addresses in one usrsctp, frames built by hand             */

struct alias {
	uint32_t ip_be;
	uint32_t idx;
};

struct many {
	uint16_t port_id;
	rte_mempool *pool;
	rte_ether_addr mac, hub_mac;
	bool hub_mac_known;
	std::vector<rte_mbuf *> tx; /* frames waiting for the ring */
	uint64_t tx_drops;
	std::vector<alias> al;
	struct socket *so;
};

many g_m;

/* Hand the queued frames to the port; what its ring cannot take now
 * stays queued (the next loop retries after polling RX, so neither side
 * waits on the other's full ring). */
void many_flush()
{
	unsigned int sent = rte_eth_tx_burst(g_m.port_id, 0, g_m.tx.data(),
					     (uint16_t)RTE_MIN(
						     g_m.tx.size(), 512u));

	g_m.tx.erase(g_m.tx.begin(), g_m.tx.begin() + sent);
}

void many_queue(rte_mbuf *m)
{
	if (g_m.tx.size() >= 8192) { /* the pool's half */
		rte_pktmbuf_free(m);
		g_m.tx_drops++;
		return;
	}
	g_m.tx.push_back(m);
}

void many_arp(uint16_t op, uint32_t sip_be, const rte_ether_addr *tha,
	      uint32_t tip_be)
{
	rte_mbuf *m = rte_pktmbuf_alloc(g_m.pool);
	rte_ether_hdr *eth;
	rte_arp_hdr *arp;

	if (m == nullptr)
		return;
	eth = (rte_ether_hdr *)rte_pktmbuf_append(
		m, sizeof(*eth) + sizeof(*arp));
	arp = (rte_arp_hdr *)(eth + 1);
	if (op == RTE_ARP_OP_REQUEST)
		memset(&eth->dst_addr, 0xff, sizeof(eth->dst_addr));
	else
		rte_ether_addr_copy(tha, &eth->dst_addr);
	rte_ether_addr_copy(&g_m.mac, &eth->src_addr);
	eth->ether_type = htons(RTE_ETHER_TYPE_ARP);
	arp->arp_hardware = htons(RTE_ARP_HRD_ETHER);
	arp->arp_protocol = htons(RTE_ETHER_TYPE_IPV4);
	arp->arp_hlen = RTE_ETHER_ADDR_LEN;
	arp->arp_plen = 4;
	arp->arp_opcode = htons(op);
	rte_ether_addr_copy(&g_m.mac, &arp->arp_data.arp_sha);
	arp->arp_data.arp_sip = sip_be;
	if (op == RTE_ARP_OP_REQUEST)
		memset(&arp->arp_data.arp_tha, 0, RTE_ETHER_ADDR_LEN);
	else
		rte_ether_addr_copy(tha, &arp->arp_data.arp_tha);
	arp->arp_data.arp_tip = tip_be;
	many_queue(m);
}

/* usrsctp's conn_output: @addr is the alias the association belongs to;
 * the packet leaves from that address to the hub. */
int many_output(void *addr, void *buf, size_t len, uint8_t, uint8_t)
{
	const alias *a = (const alias *)addr;
	rte_mbuf *m;
	rte_ether_hdr *eth;
	rte_ipv4_hdr *iph;

	if (!g_m.hub_mac_known || len > 1500 - sizeof(*iph))
		return 0;
	m = rte_pktmbuf_alloc(g_m.pool);
	if (m == nullptr) {
		g_m.tx_drops++;
		return 0;
	}
	eth = (rte_ether_hdr *)rte_pktmbuf_append(
		m, (uint16_t)(sizeof(*eth) + sizeof(*iph) + len));
	iph = (rte_ipv4_hdr *)(eth + 1);
	rte_ether_addr_copy(&g_m.hub_mac, &eth->dst_addr);
	rte_ether_addr_copy(&g_m.mac, &eth->src_addr);
	eth->ether_type = htons(RTE_ETHER_TYPE_IPV4);
	memset(iph, 0, sizeof(*iph));
	iph->version_ihl = RTE_IPV4_VHL_DEF;
	iph->total_length = htons((uint16_t)(sizeof(*iph) + len));
	iph->fragment_offset = htons(RTE_IPV4_HDR_DF_FLAG);
	iph->time_to_live = 64;
	iph->next_proto_id = IPPROTO_SCTP;
	iph->src_addr = a->ip_be;
	iph->dst_addr = htonl(HUB_IP);
	iph->hdr_checksum = rte_ipv4_cksum(iph);
	/* checksum 0 (RFC 9653): usrsctp computes none (offload flag) and
	 * the hub's memif port accepts zero checksums */
	memcpy(iph + 1, buf, len);
	many_queue(m);
	return 0;
}

/* @return frames received. */
unsigned int many_rx()
{
	rte_mbuf *pkts[32];
	uint16_t n = rte_eth_rx_burst(g_m.port_id, 0, pkts, 32), i;

	for (i = 0; i < n; i++) {
		rte_mbuf *m = pkts[i];
		auto *eth = rte_pktmbuf_mtod(m, rte_ether_hdr *);
		uint16_t type = ntohs(eth->ether_type);

		if (type == RTE_ETHER_TYPE_ARP) {
			auto *arp = (rte_arp_hdr *)(eth + 1);
			uint32_t tip = ntohl(arp->arp_data.arp_tip);

			if (arp->arp_data.arp_sip == htonl(HUB_IP)) {
				rte_ether_addr_copy(&arp->arp_data.arp_sha,
						    &g_m.hub_mac);
				g_m.hub_mac_known = true;
			}
			if (ntohs(arp->arp_opcode) == RTE_ARP_OP_REQUEST &&
			    tip - MANY_IP0 < g_n)
				many_arp(RTE_ARP_OP_REPLY,
					 arp->arp_data.arp_tip,
					 &arp->arp_data.arp_sha,
					 arp->arp_data.arp_sip);
		} else if (type == RTE_ETHER_TYPE_IPV4) {
			auto *iph = (rte_ipv4_hdr *)(eth + 1);
			uint32_t dst = ntohl(iph->dst_addr);
			unsigned int ihl = rte_ipv4_hdr_len(iph);

			if (iph->next_proto_id == IPPROTO_SCTP &&
			    dst - MANY_IP0 < g_n)
				usrsctp_conninput(
					&g_m.al[dst - MANY_IP0],
					(uint8_t *)iph + ihl,
					ntohs(iph->total_length) - ihl, 0);
		}
		rte_pktmbuf_free(m);
	}
	return n;
}

void many_main()
{
	char dpc[512];
	dp_config *dcfg = new dp_config;
	rte_eth_conf conf;
	std::unordered_map<sctp_assoc_t, uint32_t> idx_of;
	std::vector<sctp_assoc_t> assoc(g_n, 0);
	std::vector<uint8_t> up(g_n, 0), got(g_n * MSGS, 0), sent(g_n, 0);
	std::vector<uint8_t> buf(4096);
	uint64_t ups = 0, echoes = 0, heap0, heap1;
	uint32_t connected = 0, next_send = 0;
	double end = now_s() + DEADLINE_S, next_arp = 0, t0;
	uint64_t last_ms;
	sctp_event event;
	uint16_t ev_types[] = { SCTP_ASSOC_CHANGE };
	const int on = 1, bufsz = 64 << 20;
	sockaddr_conn sc;

	snprintf(dpc, sizeof(dpc),
		 "dev=net_memif0,role=client,id=0,socket=%s/memif0.sock,"
		 "socket-abstract=no ip=10.9.16.0/16 prefix=sdp-%s-many "
		 "mem=256",
		 g_sockdir.c_str(), g_job.c_str());
	CHECK(dp_config_parse(dpc, dcfg) == 0);
	CHECK(dp_eal_init(dcfg) == 0);
	CHECK(rte_eth_dev_get_port_by_name("net_memif0", &g_m.port_id) == 0);
	g_m.pool = rte_pktmbuf_pool_create("many", 16383, 256, 0,
					   RTE_MBUF_DEFAULT_BUF_SIZE,
					   SOCKET_ID_ANY);
	CHECK(g_m.pool != nullptr);
	memset(&conf, 0, sizeof(conf));
	CHECK(rte_eth_dev_configure(g_m.port_id, 1, 1, &conf) == 0);
	CHECK(rte_eth_rx_queue_setup(g_m.port_id, 0, 1024, SOCKET_ID_ANY,
				     nullptr, g_m.pool) == 0);
	CHECK(rte_eth_tx_queue_setup(g_m.port_id, 0, 1024, SOCKET_ID_ANY,
				     nullptr) == 0);
	CHECK(rte_eth_dev_start(g_m.port_id) == 0);
	CHECK(rte_eth_macaddr_get(g_m.port_id, &g_m.mac) == 0);
	for (;;) {
		rte_eth_link link;

		CHECK(now_s() < end);
		CHECK(rte_eth_link_get_nowait(g_m.port_id, &link) == 0);
		if (link.link_status == RTE_ETH_LINK_UP)
			break;
		usleep(10000);
	}

	usrsctp_init_nothreads(0, many_output, nullptr);
	usrsctp_enable_crc32c_offload();
	usrsctp_sysctl_set_sctp_ecn_enable(0);
	heap0 = heap_bytes();
	g_m.al.resize(g_n);
	for (uint32_t i = 0; i < g_n; i++) {
		g_m.al[i].ip_be = htonl(MANY_IP0 + i);
		g_m.al[i].idx = i;
		usrsctp_register_address(&g_m.al[i]);
	}
	g_m.so = usrsctp_socket(AF_CONN, SOCK_SEQPACKET, IPPROTO_SCTP,
				nullptr, nullptr, 0, nullptr);
	CHECK(g_m.so != nullptr);
	CHECK(usrsctp_set_non_blocking(g_m.so, 1) == 0);
	CHECK(usrsctp_setsockopt(g_m.so, SOL_SOCKET, SO_RCVBUF, &bufsz,
				 sizeof(bufsz)) == 0);
	CHECK(usrsctp_setsockopt(g_m.so, SOL_SOCKET, SO_SNDBUF, &bufsz,
				 sizeof(bufsz)) == 0);
	CHECK(usrsctp_setsockopt(g_m.so, IPPROTO_SCTP, SCTP_RECVRCVINFO, &on,
				 sizeof(on)) == 0);
	memset(&event, 0, sizeof(event));
	event.se_assoc_id = SCTP_FUTURE_ASSOC;
	event.se_on = 1;
	event.se_type = ev_types[0];
	CHECK(usrsctp_setsockopt(g_m.so, IPPROTO_SCTP, SCTP_EVENT, &event,
				 sizeof(event)) == 0);
	/* the hub's timers (sg defaults): a lost packet costs a second at
	 * most, not usrsctp's default 3 s initial / 60 s maximum RTO */
	sctp_rtoinfo rto;
	memset(&rto, 0, sizeof(rto));
	rto.srto_initial = 1000;
	rto.srto_min = 100;
	rto.srto_max = 1000;
	CHECK(usrsctp_setsockopt(g_m.so, IPPROTO_SCTP, SCTP_RTOINFO, &rto,
				 sizeof(rto)) == 0);
	memset(&sc, 0, sizeof(sc));
	sc.sconn_family = AF_CONN;
	sc.sconn_port = htons(MANY_PORT);
	sc.sconn_addr = nullptr;
	CHECK(usrsctp_bind(g_m.so, (sockaddr *)&sc, sizeof(sc)) == 0);

	t0 = now_s();
	last_ms = (uint64_t)(t0 * 1000);
	double next_report = t0 + 5;
	while (echoes < (uint64_t)g_n * MSGS) {
		uint64_t ms = (uint64_t)(now_s() * 1000);

		CHECK(now_s() < end);
		if (now_s() > next_report) {
			fprintf(stderr, "many: %.0f s: %u connecting, %" PRIu64
				" up, %" PRIu64 " echoes, %" PRIu64 " TX "
				"drops\n", now_s() - t0, connected,
				ups, echoes, g_m.tx_drops);
			next_report += 5;
		}
		if (ms != last_ms) {
			usrsctp_handle_timers((uint32_t)(ms - last_ms));
			last_ms = ms;
		}
		if (!g_m.hub_mac_known && now_s() > next_arp) {
			many_arp(RTE_ARP_OP_REQUEST, htonl(MANY_IP0), nullptr,
				 htonl(HUB_IP));
			next_arp = now_s() + 0.2;
		}
		if (many_rx() == 0 && g_m.tx.empty())
			usleep(20);
		/* connect in waves: at most 64 handshakes in flight */
		while (g_m.hub_mac_known && connected < g_n &&
		       connected - ups < 64) {
			sc.sconn_port = htons(HUB_PORT);
			sc.sconn_addr = &g_m.al[connected];
			if (usrsctp_connect(g_m.so, (sockaddr *)&sc,
					    sizeof(sc)) != 0)
				CHECK(errno == EINPROGRESS);
			assoc[connected] = usrsctp_getassocid(g_m.so,
							      (sockaddr *)&sc);
			CHECK(assoc[connected] != 0);
			idx_of[assoc[connected]] = connected;
			connected++;
		}
		/* receive: notifications and echoes */
		for (;;) {
			sctp_rcvinfo ri;
			socklen_t ril = sizeof(ri), fl = 0;
			unsigned int infotype = 0;
			int flags = 0;
			ssize_t r = usrsctp_recvv(g_m.so, buf.data(),
						  buf.size(), nullptr, &fl,
						  &ri, &ril, &infotype,
						  &flags);

			if (r < 0) {
				CHECK(errno == EWOULDBLOCK || errno == EAGAIN);
				break;
			}
			if (flags & MSG_NOTIFICATION) {
				auto *n = (sctp_notification *)buf.data();

				if (n->sn_header.sn_type != SCTP_ASSOC_CHANGE)
					continue;
				auto *ac = &n->sn_assoc_change;
				auto it = idx_of.find(ac->sac_assoc_id);

				CHECK(ac->sac_state == SCTP_COMM_UP);
				CHECK(it != idx_of.end());
				CHECK(!up[it->second]);
				up[it->second] = 1;
				ups++;
				continue;
			}
			CHECK(flags & MSG_EOR);
			CHECK(infotype == SCTP_RECVV_RCVINFO);
			CHECK(r >= 8);
			uint32_t idx, seq;

			memcpy(&idx, buf.data(), 4);
			memcpy(&seq, buf.data() + 4, 4);
			CHECK(idx < g_n && seq < MSGS);
			CHECK(ri.rcv_assoc_id == assoc[idx]);
			CHECK((size_t)r == MSG_BYTES[seq]);
			for (uint32_t j = 8; j < (uint32_t)r; j++)
				CHECK(buf[j] == pattern(idx, seq, j));
			CHECK(!got[idx * MSGS + seq]);
			got[idx * MSGS + seq] = 1;
			echoes++;
		}
		/* send on associations that came up, in order */
		while (next_send < g_n && up[next_send]) {
			uint32_t i = next_send;
			bool full = false;

			for (uint32_t s = sent[i]; s < MSGS; s++) {
				std::vector<uint8_t> msg(MSG_BYTES[s]);
				sctp_sndinfo si;

				memcpy(msg.data(), &i, 4);
				memcpy(msg.data() + 4, &s, 4);
				for (uint32_t j = 8; j < MSG_BYTES[s]; j++)
					msg[j] = pattern(i, s, j);
				memset(&si, 0, sizeof(si));
				si.snd_assoc_id = assoc[i];
				si.snd_sid = (uint16_t)(i % 10);
				if (usrsctp_sendv(g_m.so, msg.data(),
						  msg.size(), nullptr, 0, &si,
						  sizeof(si),
						  SCTP_SENDV_SNDINFO,
						  0) < 0) {
					CHECK(errno == EWOULDBLOCK ||
					      errno == EAGAIN);
					full = true;
					break;
				}
				sent[i] = (uint8_t)(s + 1);
			}
			if (full)
				break;
			next_send++;
		}
		many_flush();
	}
	heap1 = heap_bytes();
	fprintf(stderr,
		"many: %u associations up, %" PRIu64 " echoes checked in "
		"%.1f s (%" PRIu64 " frames dropped at TX); usrsctp heap "
		"+%" PRIu64 " bytes = %" PRIu64 " per association\n",
		(uint32_t)ups, echoes, now_s() - t0, g_m.tx_drops,
		heap1 - heap0, (heap1 - heap0) / g_n);
	/* no teardown of the associations: the hub stops answering once
	 * the parent tells it, and usrsctp_finish would wait for them */
	rte_eth_dev_stop(g_m.port_id);
	rte_eth_dev_close(g_m.port_id);
	rte_eal_cleanup();
	_exit(0);
}

/* ------------------------------------------------------------------ */

} /* namespace */

TEST(SgManyPeers, ThousandsOfAssociationsToDistinctAddressesOverOnePort)
{
	const char *env = getenv("SDP_MANY_PEERS");
	sgpair::SgChildPair pair;
	int done[2];

	g_n = env != nullptr ? (uint32_t)atoi(env) : 4096;
	ASSERT_TRUE(g_n >= 1 && g_n <= 16384) << "SDP_MANY_PEERS=" << g_n;
	ASSERT_NO_FATAL_FAILURE(pair.setup("many", { "hub", "many" }));
	g_job = pair.job;
	g_sockdir = pair.sockdir;
	ASSERT_EQ(0, pipe(done));
	/* the hub ends once it knows the many side is done (or gone): at
	 * EOF on done[0], when both write ends are closed */
	pair.run(
		[&] {
			close(done[1]);
			hub_main(done[0]);
		},
		"memif0.sock",
		[&] {
			close(done[1]);
			many_main();
		},
		DEADLINE_S + 30,
		[&] {
			close(done[1]);
			close(done[0]);
		},
		30);
	EXPECT_EQ(0, pair.rc_client)
		<< "many child (-1: killed at the deadline)";
	EXPECT_EQ(0, pair.rc_server)
		<< "hub child (-1: killed at the deadline)";
}
