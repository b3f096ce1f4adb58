/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_dp_port.cc - a port's receive and transmit (dp_rx.c, dp_out.c,
 * dp_port.c): the zero-copy RX ring and mempool accounting, ring-full
 * drops, send errors, flush and held frames, two hot-plugged ports, and a
 * close while mbufs are still referenced.
 */
#include "dp_fixture.h"

namespace dptest {
namespace {

TEST_F(DpPortTest, LoopbackZeroCopyAndNoLeak)
{
	rte_mempool *mp = port->pool;
	unsigned int base, i;
	std::vector<rte_mbuf *> got(64);
	std::vector<const uint8_t *> written; /* payload addresses sent */
	dp_stats st;

	/* first packet resolves our own address through the loopback */
	base = rte_mempool_in_use_count(mp);
	for (i = 0; i < 40; i++) {
		rte_mbuf *m = dp_pkt_alloc(port);
		ASSERT_NE(nullptr, m);
		auto *p = (uint8_t *)rte_pktmbuf_append(m, 100);
		for (int k = 0; k < 100; k++)
			p[k] = (uint8_t)(i + k);
		written.push_back(p);
		ASSERT_EQ(0, dp_port_send(port, cfg.ip_be, DP_IPPROTO_EXP, m,
					  dp_tsc()));
	}
	dp_port_flush(port, dp_tsc());
	ASSERT_EQ(40u, poll_recv(got.data(), 40));
	for (i = 0; i < 40; i++) {
		struct dp_pkt_info info;
		const uint8_t *p = rte_pktmbuf_mtod(got[i], const uint8_t *);

		dp_pkt_info(got[i], &info);
		EXPECT_EQ(DP_IPPROTO_EXP, info.proto);
		EXPECT_EQ(cfg.ip_be, info.src_ip_be);
		ASSERT_EQ(100u, rte_pktmbuf_data_len(got[i]));
		/* zero copy: the payload is where the frame was written, in
		 * the buffer the NIC handed us, headers right in front */
		EXPECT_EQ(0x45, p[-20]);
		EXPECT_EQ(written[i], p);
		for (int k = 0; k < 100; k++)
			ASSERT_EQ((uint8_t)(i + k), p[k]);
	}
	/* the consumer owns them until it frees them */
	EXPECT_EQ(base + 40, rte_mempool_in_use_count(mp));
	for (i = 0; i < 40; i++)
		dp_pkt_free(got[i]);
	EXPECT_EQ(base, rte_mempool_in_use_count(mp));
	dp_port_stats(port, &st);
	EXPECT_GE(st.arp_tx, 2u); /* request + reply to ourselves */
}

TEST_F(DpPortTest, RingFullDropsAndCounts)
{
	std::vector<rte_mbuf *> got(512);
	unsigned int base = rte_mempool_in_use_count(port->pool);
	dp_stats before, after;
	unsigned int n = 0;

	dp_port_stats(port, &before);
	/* 300 frames into a 256-entry ring without consuming */
	for (int i = 0; i < 300; i++) {
		rte_mbuf *m = dp_pkt_alloc(port);
		rte_pktmbuf_append(m, 32);
		ASSERT_EQ(0, dp_port_send(port, cfg.ip_be, DP_IPPROTO_EXP, m,
					  dp_tsc()));
		if (i % 16 == 15) {
			dp_port_flush(port, dp_tsc());
			dp_port_poll(port, dp_tsc());
		}
	}
	dp_port_flush(port, dp_tsc());
	for (int i = 0; i < 100; i++)
		dp_port_poll(port, dp_tsc());
	dp_port_stats(port, &after);
	while (unsigned int k = dp_port_recv(port, got.data() + n, 64))
		n += k;
	EXPECT_EQ(256u, n);
	EXPECT_EQ(before.drops[DP_DROP_RX_RING_FULL] + 44,
		  after.drops[DP_DROP_RX_RING_FULL]);
	for (unsigned int i = 0; i < n; i++)
		dp_pkt_free(got[i]);
	EXPECT_EQ(base, rte_mempool_in_use_count(port->pool));
}

TEST_F(DpPortTest, SendErrors)
{
	rte_mbuf *m = dp_pkt_alloc(port);
	rte_pktmbuf_append(m, 32);
	EXPECT_EQ(-EHOSTUNREACH, dp_port_send(port, ipv4("192.168.77.1"),
					      DP_IPPROTO_EXP, m, dp_tsc()));
	m = dp_pkt_alloc(port);
	ASSERT_NE(nullptr, rte_pktmbuf_append(m, 1600));
	EXPECT_EQ(-EMSGSIZE,
		  dp_port_send(port, cfg.ip_be, DP_IPPROTO_EXP, m, dp_tsc()));
}

/*
 * Several ports in one process: a memif server and its client
 * opened by dp_port_open in this process, neither named to the EAL (which
 * probed only net_ring0), so both are hot-plugged and each must be found
 * by its own name -- before, the lookup fell back to "the only port" and
 * the server opened net_ring0 a second time.  Frames go both ways, each
 * port with its own address, pool and ARP cache; closing removes the
 * devices, so the same devargs open again.
 */
TEST_F(DpPortTest, TwoHotPluggedPortsExchangeFramesBothWays)
{
	MemifPair mp;
	std::vector<rte_mbuf *> got(64);

	ASSERT_NO_FATAL_FAILURE(mp.config("dptest", "net_memif0", "net_memif1",
					  "10.9.0", "rx_ring=256",
					  "rx_ring=256"));
	dp_config &cs = mp.cs, &cc = mp.cc;
	for (int round = 0; round < 2; round++) {
		ASSERT_NO_FATAL_FAILURE(mp.open());
		dp_port *srv = mp.srv, *cli = mp.cli;
		char sn[RTE_ETH_NAME_MAX_LEN], cn[RTE_ETH_NAME_MAX_LEN];
		ASSERT_EQ(0, rte_eth_dev_get_name_by_port(dp_port_id(srv), sn));
		ASSERT_EQ(0, rte_eth_dev_get_name_by_port(dp_port_id(cli), cn));
		EXPECT_STREQ("net_memif0", sn);
		EXPECT_STREQ("net_memif1", cn);
		EXPECT_NE(dp_port_id(port), dp_port_id(srv));
		EXPECT_NE(srv->pool, cli->pool);
		EXPECT_NE(port->pool, srv->pool);

		/* one frame resolves the client first: meanwhile the hold
		 * queue keeps DP_ARP_HOLD_DEST frames for a destination, and
		 * the client learns the server from its request */
		send_burst(srv, cc.ip_be, 1, 1);
		ASSERT_EQ(1u, poll_pair(srv, cli, cli, got.data(), 1));
		check_burst(got.data(), 1, cs.ip_be, 1);
		send_burst(srv, cc.ip_be, 1, 40);
		ASSERT_EQ(40u, poll_pair(srv, cli, cli, got.data(), 40));
		check_burst(got.data(), 40, cs.ip_be, 1);
		send_burst(cli, cs.ip_be, 7, 40);
		ASSERT_EQ(40u, poll_pair(srv, cli, srv, got.data(), 40));
		check_burst(got.data(), 40, cc.ip_be, 7);
		/* nothing reached the EAL's own port */
		EXPECT_EQ(0u, poll_recv(got.data(), 1));

		dp_stats ss, sc;
		dp_port_stats(srv, &ss);
		dp_port_stats(cli, &sc);
		EXPECT_GE(ss.tx_pkts, 40u);
		EXPECT_GE(sc.tx_pkts, 40u);
		EXPECT_EQ(40u, ss.delivered);
		EXPECT_EQ(41u, sc.delivered);
		/* each port learned the other's MAC in its own cache */
		EXPECT_NE(nullptr, dp_arp_find(&srv->arp, cc.ip_be));
		EXPECT_NE(nullptr, dp_arp_find(&cli->arp, cs.ip_be));
		EXPECT_EQ(nullptr, dp_arp_find(&port->arp, cc.ip_be));
		mp.close();
		uint16_t pid;
		EXPECT_NE(0, rte_eth_dev_get_port_by_name("net_memif0", &pid))
			<< "server device left behind at close";
	}
	mp.cleanup();
}

/* An application send reaches the NIC at once
 * (dp_port_send_flush), unless the port batches TX to one burst per poll
 * (af_packet: a sendto per burst), where it waits for the poll. */
TEST_F(DpPortTest, SendFlushUnlessThePortBatches)
{
	dp_stats a, b;
	rte_mbuf *got[DP_BURST];

	dp_arp_add_static(&port->arp, cfg.ip_be, &port->fctx.mac);
	repace(port, DP_PACE_DEADLINE, 0);
	EXPECT_FALSE(port->tx_batch) << "net_ring does not batch";
	for (bool batch : { false, true }) {
		port->tx_batch = batch;
		dp_port_stats(port, &a);
		rte_mbuf *m = dp_pkt_alloc(port);
		ASSERT_NE(nullptr, m);
		rte_pktmbuf_append(m, 100);
		ASSERT_EQ(0, dp_port_send(port, cfg.ip_be, DP_IPPROTO_EXP, m,
					  dp_tsc()));
		dp_port_send_flush(port, dp_tsc());
		dp_port_stats(port, &b);
		EXPECT_EQ(a.tx_pkts + (batch ? 0 : 1), b.tx_pkts) << batch;
		EXPECT_EQ(batch ? 1 : 0, port->txq[0].nb_tx) << batch;
		dp_port_flush(port, dp_tsc()); /* the poll's flush */
		EXPECT_EQ(0, port->txq[0].nb_tx);
		for (int i = 0; i < 1000; i++) {
			dp_port_poll(port, dp_tsc());
			if (unsigned int n = dp_port_recv(port, got, DP_BURST)) {
				rte_pktmbuf_free_bulk(got, n);
				break;
			}
		}
	}
	port->tx_batch = false;
}

/* SACK hold: on a port that batches TX a held frame takes no burst of
 * its own: it rides at the tail of the next burst carrying another frame
 * (after it: the reply first), and leaves alone only when released; other
 * ports send it at once.  Frames are told apart by their first payload
 * byte; net_ring0 loops them back in wire order. */
TEST_F(DpPortTest, HeldFrameRidesAfterTheNextFrame)
{
	dp_stats a, b;
	rte_mbuf *got[DP_BURST];

	dp_arp_add_static(&port->arp, cfg.ip_be, &port->fctx.mac);
	repace(port, DP_PACE_DEADLINE, 0);
	auto frame = [&](uint8_t tag) {
		rte_mbuf *m = dp_pkt_alloc(port);

		EXPECT_NE(nullptr, m);
		memset(rte_pktmbuf_append(m, 64), tag, 64);
		return m;
	};
	/* a port that does not batch TX (net_ring, memif) does not hold */
	ASSERT_FALSE(port->tx_batch);
	dp_port_stats(port, &a);
	ASSERT_EQ(0, dp_port_send_held(port, cfg.ip_be, DP_IPPROTO_EXP,
				       frame('S'), dp_tsc()));
	EXPECT_EQ(0u, dp_port_held(port));
	dp_port_flush(port, dp_tsc());
	ASSERT_EQ(1u, poll_recv(got, 1));
	rte_pktmbuf_free(got[0]);
	dp_port_stats(port, &b);
	EXPECT_EQ(a.tx_held, b.tx_held);

	port->tx_batch = true; /* af_packet's */
	dp_port_stats(port, &a);
	ASSERT_EQ(0, dp_port_send_held(port, cfg.ip_be, DP_IPPROTO_EXP,
				       frame('S'), dp_tsc()));
	EXPECT_EQ(1u, dp_port_held(port));
	EXPECT_TRUE(dp_port_tx_pending(port)) << "held counts as pending";
	for (int i = 0; i < 100; i++) /* polls and flushes leave it */
		dp_port_poll(port, dp_tsc());
	dp_port_flush(port, dp_tsc());
	dp_port_stats(port, &b);
	EXPECT_EQ(a.tx_pkts, b.tx_pkts) << "a held frame left alone";
	EXPECT_EQ(a.tx_bursts, b.tx_bursts);
	EXPECT_EQ(a.tx_held + 1, b.tx_held);

	/* the next frame's burst carries it, after that frame */
	ASSERT_EQ(0, dp_port_send(port, cfg.ip_be, DP_IPPROTO_EXP, frame('D'),
				  dp_tsc()));
	dp_port_flush(port, dp_tsc());
	dp_port_stats(port, &a);
	EXPECT_EQ(b.tx_pkts + 2, a.tx_pkts);
	EXPECT_EQ(b.tx_bursts + 1, a.tx_bursts) << "one burst for both";
	EXPECT_EQ(0u, dp_port_held(port));
	ASSERT_EQ(2u, poll_recv(got, 2));
	EXPECT_EQ('D', *rte_pktmbuf_mtod(got[0], uint8_t *)) << "reply first";
	EXPECT_EQ('S', *rte_pktmbuf_mtod(got[1], uint8_t *));
	rte_pktmbuf_free_bulk(got, 2);

	/* released: it leaves at the next flush, alone */
	ASSERT_EQ(0, dp_port_send_held(port, cfg.ip_be, DP_IPPROTO_EXP,
				       frame('S'), dp_tsc()));
	dp_port_release_held(port, dp_tsc());
	EXPECT_EQ(0u, dp_port_held(port));
	dp_port_flush(port, dp_tsc());
	dp_port_stats(port, &b);
	EXPECT_EQ(a.tx_bursts + 1, b.tx_bursts);
	ASSERT_EQ(1u, poll_recv(got, 1));
	EXPECT_EQ('S', *rte_pktmbuf_mtod(got[0], uint8_t *));
	rte_pktmbuf_free(got[0]);
	EXPECT_FALSE(dp_port_tx_pending(port));
	port->tx_batch = false;
}

/*
 * Closing a port while mbufs of its pools are still referenced (usrsctp
 * keeps received packets, rx_ext, and chained packets' external buffers; an application may keep its own): the pools
 * stay allocated so those late frees do not write into freed memory (before
 * the fix both pools were freed, rte_mempool_lookup found neither).  A
 * held port (dp_port_hold: an sg endpoint) closes only at its last
 * dp_port_unhold, then frees a pool with nothing in use.
 */
TEST_F(DpPortTest, CloseKeepsPoolsWhoseMbufsAreStillReferenced)
{
	dp_config c2;
	dp_port *p2 = nullptr;

	ASSERT_EQ(0, dp_config_parse("dev=net_ring5 ip=10.0.5.1 mem=256 "
				     "link_wait_ms=2000 rx_ring=256", &c2));
	ASSERT_EQ(0, dp_port_open(&c2, &p2));
	std::string pool = p2->pool->name;
	ASSERT_NE(nullptr, p2->ext_pool);
	std::string ext = p2->ext_pool->name;
	rte_mbuf *m = dp_pkt_alloc(p2);
	rte_mbuf *e = dp_pkt_ext_alloc(p2);
	ASSERT_NE(nullptr, m);
	ASSERT_NE(nullptr, e);
	dp_port_close(p2);
	EXPECT_NE(nullptr, rte_mempool_lookup(pool.c_str()));
	EXPECT_NE(nullptr, rte_mempool_lookup(ext.c_str()));
	/* the late frees go back into pools that still exist */
	rte_pktmbuf_free(m);
	rte_pktmbuf_free(e);
	rte_mempool *mp = rte_mempool_lookup(pool.c_str());
	if (mp != nullptr) {
		EXPECT_EQ(0u, rte_mempool_in_use_count(mp));
	}

	/* held: the close waits for the last user */
	ASSERT_EQ(0, dp_config_parse("dev=net_ring6 ip=10.0.6.1 mem=256 "
				     "link_wait_ms=2000 rx_ring=256", &c2));
	ASSERT_EQ(0, dp_port_open(&c2, &p2));
	pool = p2->pool->name;
	dp_port_hold(p2);
	dp_port_hold(p2);
	dp_port_close(p2);
	dp_port_close(p2); /* twice: still one deferred close */
	EXPECT_NE(nullptr, rte_mempool_lookup(pool.c_str()));
	dp_port_poll(p2, dp_tsc()); /* still a port */
	dp_port_unhold(p2);
	EXPECT_NE(nullptr, rte_mempool_lookup(pool.c_str()));
	dp_port_unhold(p2);
	EXPECT_EQ(nullptr, rte_mempool_lookup(pool.c_str()));
}

} /* namespace */
} /* namespace dptest */
