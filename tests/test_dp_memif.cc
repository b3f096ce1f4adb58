/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_dp_memif.cc - memif ports (dp_bye.c, dp_queue.c, dp_gate.c): a peer
 * leaving during a burst, mixed frame sizes at MTU 9000, queue pairs, and
 * the gate that keeps bursts away from DPDK's interrupt thread.
 */
#include "dp_fixture.h"

namespace dptest {
namespace {

/*
 * A memif peer leaves while this end is inside an RX burst.  DPDK 22.11's
 * memif unmaps the shared regions from its interrupt thread when the peer
 * closes, with nothing against a burst under way on the polling thread:
 * sdp-ping's server died by SIGSEGV in eth_memif_rx (its client closed
 * while it polled, under load).  Here the race is made certain: the
 * server's mbuf pool holds the polling thread inside eth_memif_rx (the
 * PMD allocates an mbuf between reading the ring's head and its
 * descriptors) while the client closes.  With the close handshake
 * (dp_bye.c) the client's close waits until the server has answered its
 * BYE, which the server can only do after the burst: the link stays up
 * while the burst is held, every frame arrives, and the link goes down
 * once the server stopped polling.  Without it the server's link went
 * down under the held burst and the burst then read unmapped memory.
 */
static rte_mempool_ops gate_ops;

static const rte_mempool_ops *gate_inner;

static std::atomic<rte_mempool *> gate_pool{nullptr};

/* 0 idle, 1 armed, 2 a thread is held, 3 released */
static std::atomic<int> gate_state{0};

static int gate_dequeue(rte_mempool *mp, void **objs, unsigned int n)
{
	int armed = 1;

	if (mp == gate_pool.load() &&
	    gate_state.compare_exchange_strong(armed, 2))
		for (int i = 0; i < 20000 && gate_state.load() == 2; i++)
			usleep(1000);
	return gate_inner->dequeue(mp, objs, n);
}

/* mempool ops "sdp_test_gate": ring_mp_mc's, with a dequeue that can hold
 * its caller. */
static void gate_register(void)
{
	if (gate_inner != nullptr)
		return;
	for (unsigned int i = 0; i < rte_mempool_ops_table.num_ops; i++)
		if (strcmp(rte_mempool_ops_table.ops[i].name, "ring_mp_mc") ==
		    0)
			gate_inner = &rte_mempool_ops_table.ops[i];
	ASSERT_NE(nullptr, gate_inner) << "no ring_mp_mc mempool ops";
	gate_ops = *gate_inner;
	snprintf(gate_ops.name, sizeof(gate_ops.name), "sdp_test_gate");
	gate_ops.dequeue = gate_dequeue;
	ASSERT_GE(rte_mempool_register_ops(&gate_ops), 0);
}

TEST_F(DpPortTest, MemifPeerLeavingDuringABurstWaitsForIt)
{
	MemifPair mp;
	std::vector<rte_mbuf *> got(64);

	gate_register();
	ASSERT_NO_FATAL_FAILURE(mp.config("dpbye", "net_memif4", "net_memif5",
					  "10.9.2", "rx_ring=256",
					  "rx_ring=256 bye_wait_ms=5000"));
	/* the server's pools get the gate ops, the client's the default */
	ASSERT_EQ(0, rte_mbuf_set_user_mempool_ops("sdp_test_gate"));
	ASSERT_NO_FATAL_FAILURE(mp.open(
		[] { rte_mbuf_set_user_mempool_ops("ring_mp_mc"); }));
	dp_port *srv = mp.srv, *cli = mp.cli;
	dp_config &cs = mp.cs, &cc = mp.cc;
	ASSERT_STREQ("sdp_test_gate", rte_mempool_get_ops(srv->pool->ops_index)
					      ->name);
	/* neighbours resolved both ways */
	send_burst(srv, cc.ip_be, 1, 4);
	ASSERT_EQ(4u, poll_pair(srv, cli, cli, got.data(), 4));
	check_burst(got.data(), 4, cs.ip_be, 1);
	send_burst(cli, cs.ip_be, 2, 4);
	ASSERT_EQ(4u, poll_pair(srv, cli, srv, got.data(), 4));
	check_burst(got.data(), 4, cc.ip_be, 2);

	/* 8 frames wait in the server's RX ring; its next burst is held */
	send_burst(cli, cs.ip_be, 9, 8);
	gate_pool = srv->pool;
	gate_state = 1;
	std::atomic<bool> stop{false};
	std::vector<rte_mbuf *> srv_got;
	std::thread poller([&] {
		rte_mbuf *pkts[32];

		while (!stop.load()) {
			dp_port_poll(srv, dp_tsc());
			unsigned int n = dp_port_recv(srv, pkts, 32);
			srv_got.insert(srv_got.end(), pkts, pkts + n);
		}
	});
	for (int i = 0; i < 5000 && gate_state.load() != 2; i++)
		usleep(1000);
	ASSERT_EQ(2, gate_state.load()) << "the server never polled";

	/* the client leaves while the server is inside eth_memif_rx */
	std::thread closer([&] { dp_port_close(cli); });
	bool down_while_held = false;
	for (int i = 0; i < 50 && !down_while_held; i++) {
		usleep(10 * 1000);
		down_while_held = !dp_port_link_up(srv, nullptr);
	}
	if (down_while_held)
		usleep(100 * 1000); /* the teardown has unmapped by now */
	gate_state = 3;
	closer.join();
	for (int i = 0; i < 500 && dp_port_link_up(srv, nullptr); i++)
		usleep(10 * 1000);
	stop = true;
	poller.join();
	gate_pool = nullptr;

	EXPECT_FALSE(down_while_held)
		<< "the client closed while the server was inside a burst";
	EXPECT_FALSE(dp_port_link_up(srv, nullptr))
		<< "the client never left";
	ASSERT_EQ(8u, srv_got.size());
	check_burst(srv_got.data(), 8, cc.ip_be, 9);
	dp_stats ss;
	dp_port_stats(srv, &ss);
	EXPECT_EQ(1u, ss.bye_rx) << "the client's BYE";
	dp_port_close(srv);
	mp.cleanup();
}

/*
 * Frames of 8 KB and of 100 B mixed, at mtu 9000 over
 * a memif pair whose devargs give no bsize=, each arrive exactly once and
 * whole.  With DPDK's 2048-byte default the big ones were chained over
 * 4 buffers and DPDK 22.11's memif TX mangled the ring (dp_config.c
 * memif_bsize_fill): 3200 frames sent arrived as 274,377, small ones
 * merged into the next frame, old buffers replayed, 776 dropped as bad
 * ethertype.  The dataplane now gives buffers that hold a frame.
 */
TEST_F(DpPortTest, MemifMixedFramesAtMtu9000ArriveOnceEach)
{
	MemifPair mp;
	std::vector<rte_mbuf *> got(64);
	unsigned int sent = 0, ok = 0, bad = 0, gaps = 0;
	uint32_t next = 0;

	ASSERT_NO_FATAL_FAILURE(mp.config("dpmix", "net_memif8", "net_memif9",
					  "10.9.8", "rx_ring=1024 mtu=9000",
					  "rx_ring=1024 mtu=9000"));
	ASSERT_NO_FATAL_FAILURE(mp.open());
	dp_port *srv = mp.srv, *cli = mp.cli;
	/* neighbours resolved both ways */
	send_burst(cli, mp.cs.ip_be, 1, 1);
	ASSERT_EQ(1u, poll_pair(srv, cli, srv, got.data(), 1));
	dp_pkt_free(got[0]);
	send_burst(srv, mp.cc.ip_be, 1, 1);
	ASSERT_EQ(1u, poll_pair(srv, cli, cli, got.data(), 1));
	dp_pkt_free(got[0]);
	for (int round = 0; round < 200; round++) {
		for (int i = 0; i < 16; i++) {
			rte_mbuf *m = dp_pkt_alloc(cli);

			ASSERT_NE(nullptr, m);
			uint32_t len = sent % 3 == 2 ? 100 : 8000;
			auto *d = (uint8_t *)rte_pktmbuf_append(m,
							       (uint16_t)len);
			memcpy(d, &sent, 4);
			for (uint32_t k = 4; k < len; k++)
				d[k] = (uint8_t)(sent + k);
			ASSERT_EQ(0, dp_port_send(cli, mp.cs.ip_be,
						  DP_IPPROTO_EXP, m,
						  dp_tsc()));
			sent++;
		}
		dp_port_flush(cli, dp_tsc());
		for (int j = 0; j < 50; j++) {
			dp_port_poll(cli, dp_tsc());
			dp_port_poll(srv, dp_tsc());
			unsigned int r = dp_port_recv(srv, got.data(), 64);

			for (unsigned int i = 0; i < r; i++) {
				const uint8_t *d = rte_pktmbuf_mtod(
					got[i], const uint8_t *);
				uint32_t s, len = rte_pktmbuf_pkt_len(got[i]);

				memcpy(&s, d, 4);
				bool g = len == (s % 3 == 2 ? 100u : 8000u);
				for (uint32_t k = 4; g && k < len; k++)
					g = d[k] == (uint8_t)(s + k);
				ok += g;
				bad += !g;
				gaps += s != next;
				next = s + 1;
				dp_pkt_free(got[i]);
			}
		}
	}
	for (int i = 0; i < 5 && ok + bad < sent; i++) {
		unsigned int r = poll_pair(srv, cli, srv, got.data(), 64);

		for (unsigned int k = 0; k < r; k++)
			dp_pkt_free(got[k]), bad++;
	}
	dp_stats ss;
	dp_port_stats(srv, &ss);
	EXPECT_EQ(sent, ok) << "frames arrived whole (of " << sent << ")";
	EXPECT_EQ(0u, bad) << "frames late, damaged or replayed";
	EXPECT_EQ(0u, gaps) << "frames lost or out of order";
	EXPECT_EQ(0u, ss.drops[DP_DROP_ETHERTYPE]);
	EXPECT_EQ(0u, ss.drops[DP_DROP_IP_LEN]);
	mp.close();
	mp.cleanup();
}

/*
 * Queue pairs (queues=N): over a memif pair with 2 queues,
 * what the client sends on its queue k arrives on the server's queue k
 * and nowhere else, while each queue pair is driven by its own thread
 * (queue 1 of both ports on one thread, queue 0 of both on this one,
 * sending both ways at once).  A frame sent on queue 1 before the
 * neighbour is resolved is handed to queue 0, which resolves it by ARP and
 * sends it there.  Per-queue counters count what each queue did; the
 * port's counters are their sum.  queues= out of range and a driver whose
 * queues do not map (net_ring) are refused.
 */
static void send_queue(dp_port *from, uint16_t q, uint32_t to_ip, uint8_t tag,
		       unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		rte_mbuf *m = dp_pkt_alloc(from);
		ASSERT_NE(nullptr, m);
		auto *p = (uint8_t *)rte_pktmbuf_append(m, 200);
		for (int k = 0; k < 200; k++)
			p[k] = (uint8_t)(tag + i + k);
		ASSERT_EQ(0, dp_port_send_queue(from, q, to_ip, DP_IPPROTO_EXP,
						m, dp_tsc()));
		/* the peer's ring holds what we burst: pace the sends a bit */
		if (i % 16 == 15)
			dp_port_flush_queue(from, q, dp_tsc());
	}
	dp_port_flush_queue(from, q, dp_tsc());
}

/* Poll queue @q of both ports; collect what @rx's queue @q delivers. */
static void collect_queue(dp_port *a, dp_port *b, dp_port *rx, uint16_t q,
			  std::vector<rte_mbuf *> *got, unsigned int want,
			  unsigned int max_polls)
{
	rte_mbuf *pkts[32];

	for (unsigned int i = 0; i < max_polls && got->size() < want; i++) {
		dp_port_poll_queue(a, q, dp_tsc());
		dp_port_poll_queue(b, q, dp_tsc());
		unsigned int n = dp_port_recv_queue(rx, q, pkts, 32);
		got->insert(got->end(), pkts, pkts + n);
	}
}

TEST_F(DpPortTest, QueuePairQueueKReachesThePeersQueueK)
{
	MemifPair mp;
	dp_config bad;
	dp_port *none = nullptr;

	EXPECT_NE(0, dp_config_parse("dev=net_memif9 ip=10.9.1.1 queues=9",
				     &bad));
	EXPECT_NE(0, dp_config_parse("dev=net_memif9 ip=10.9.1.1 queues=0",
				     &bad));
	ASSERT_EQ(0, dp_config_parse("dev=net_ring7 ip=10.9.1.1 queues=2 "
				     "link_wait_ms=100", &bad));
	EXPECT_EQ(-EINVAL, dp_port_open(&bad, &none));

	ASSERT_NO_FATAL_FAILURE(mp.config("dpq", "net_memif2", "net_memif3",
					  "10.9.1", "rx_ring=1024 queues=2",
					  "rx_ring=1024 queues=2"));
	ASSERT_NO_FATAL_FAILURE(mp.open());
	dp_port *srv = mp.srv, *cli = mp.cli;
	dp_config &cs = mp.cs, &cc = mp.cc;
	EXPECT_EQ(2u, dp_port_nb_queues(srv));
	EXPECT_EQ(2u, dp_port_nb_queues(cli));
	EXPECT_EQ(1u, dp_port_nb_queues(port));

	/* unresolved: queue 1 hands the frame to queue 0 (ARP is there) */
	std::vector<rte_mbuf *> got0, got1;
	send_queue(cli, 1, cs.ip_be, 3, 1);
	for (int i = 0; i < 400000 && got0.size() + got1.size() < 1; i++) {
		collect_queue(srv, cli, srv, 0, &got0, 1, 1);
		collect_queue(srv, cli, srv, 1, &got1, 1, 1);
	}
	ASSERT_EQ(1u, got0.size()) << "the unresolved frame goes via queue 0";
	ASSERT_EQ(0u, got1.size());
	check_burst(got0.data(), 1, cc.ip_be, 3);
	got0.clear();

	/* resolved: each queue pair on its own thread, both directions */
	const unsigned int n = 300;
	std::vector<rte_mbuf *> srv_q1, cli_q0, stray_srv0, stray_cli1;
	std::thread q1([&] {
		send_queue(cli, 1, cs.ip_be, 11, n);
		collect_queue(srv, cli, srv, 1, &srv_q1, n, 2000000);
	});
	send_queue(srv, 0, cc.ip_be, 77, n);
	collect_queue(srv, cli, cli, 0, &cli_q0, n, 2000000);
	q1.join();
	/* nothing crossed to the other queue */
	collect_queue(srv, cli, srv, 0, &stray_srv0, 1, 20000);
	collect_queue(srv, cli, cli, 1, &stray_cli1, 1, 20000);
	ASSERT_EQ(n, srv_q1.size());
	ASSERT_EQ(n, cli_q0.size());
	EXPECT_EQ(0u, stray_srv0.size()) << "queue 1's frames on queue 0";
	EXPECT_EQ(0u, stray_cli1.size()) << "queue 0's frames on queue 1";
	check_burst(srv_q1.data(), n, cc.ip_be, 11);
	check_burst(cli_q0.data(), n, cs.ip_be, 77);
	for (rte_mbuf *m : stray_srv0)
		dp_pkt_free(m);
	for (rte_mbuf *m : stray_cli1)
		dp_pkt_free(m);

	dp_stats s0, s1, c0, c1, all;
	dp_port_queue_stats(srv, 0, &s0);
	dp_port_queue_stats(srv, 1, &s1);
	dp_port_queue_stats(cli, 0, &c0);
	dp_port_queue_stats(cli, 1, &c1);
	EXPECT_EQ(n, s1.delivered);
	EXPECT_EQ(n, s1.rx_pkts);
	EXPECT_EQ(1u, s0.delivered); /* the frame sent before ARP */
	EXPECT_EQ(n, c1.tx_pkts);    /* queue 1 sent its own frames */
	EXPECT_EQ(0u, c1.rx_pkts);
	EXPECT_EQ(n, c0.delivered);
	EXPECT_EQ(0u, s1.tx_pkts);
	dp_port_stats(srv, &all);
	EXPECT_EQ(s0.rx_pkts + s1.rx_pkts, all.rx_pkts);
	EXPECT_EQ(n + 1, all.delivered);

	mp.close();
	mp.cleanup();
}

/*
 * DPDK 22.11's memif_disconnect, run on the EAL
 * interrupt thread when a peer dies, unmaps the regions an rx/tx burst
 * on the polling thread may be reading (vanish-stress: the survivor's
 * SIGSEGV in eth_memif_tx).  dp_gate.c lets that thread run callbacks
 * only between memif bursts.  Here an RX callback (it runs inside
 * rte_eth_rx_burst) stretches every burst to 100 us and flags it, and an
 * alarm (run on the interrupt thread, as memif's control channel is)
 * samples the flag 300 times: never inside a burst.  Without the gate
 * most samples land inside one.
 */
static volatile int g_gate_in_burst;

static std::atomic<unsigned> g_gate_probes, g_gate_overlaps;

static uint64_t g_gate_bursts;

static uint16_t gate_rx_cb(uint16_t port_id, uint16_t queue,
			   rte_mbuf **pkts, uint16_t nb_pkts,
			   uint16_t max_pkts, void *arg)
{
	(void)port_id;
	(void)queue;
	(void)pkts;
	(void)max_pkts;
	(void)arg;
	g_gate_in_burst = 1;
	g_gate_bursts++;
	rte_delay_us_block(100);
	g_gate_in_burst = 0;
	return nb_pkts;
}

static void gate_probe(void *arg)
{
	(void)arg;
	if (g_gate_in_burst)
		g_gate_overlaps++;
	if (++g_gate_probes < 300)
		rte_eal_alarm_set(50, gate_probe, nullptr);
}

TEST_F(DpPortTest, MemifBurstsNeverOverlapTheInterruptThread)
{
	MemifPair mp;

	ASSERT_NO_FATAL_FAILURE(mp.config("dpgate", "net_memif12",
					  "net_memif13", "10.9.12",
					  "rx_ring=256 memif_gate=1",
					  "rx_ring=256 memif_gate=1"));
	ASSERT_NO_FATAL_FAILURE(mp.open());
	const rte_eth_rxtx_callback *cb = rte_eth_add_rx_callback(
		dp_port_id(mp.cli), 0, gate_rx_cb, nullptr);
	ASSERT_NE(nullptr, cb);
	g_gate_probes = 0;
	g_gate_overlaps = 0;
	ASSERT_EQ(0, rte_eal_alarm_set(50, gate_probe, nullptr));
	uint64_t polls = 0, t0 = dp_tsc();
	uint64_t end = dp_tsc() + dp_ms_to_tsc(30000);
	g_gate_bursts = 0;
	for (; g_gate_probes < 300 && dp_tsc() < end; polls++)
		dp_port_poll(mp.cli, dp_tsc());
	unsigned probes = g_gate_probes, overlaps = g_gate_overlaps;
	rte_eal_alarm_cancel(gate_probe, (void *)-1);
	rte_eth_remove_rx_callback(dp_port_id(mp.cli), 0, cb);
	fprintf(stderr, "gate: %u probes on the interrupt thread over %"
		PRIu64 " polls (%" PRIu64 " bursts of 100 us in %.2f s), %u "
		"inside a burst\n", probes, polls, g_gate_bursts,
		(double)(dp_tsc() - t0) / (double)dp_tsc_hz(), overlaps);
	EXPECT_EQ(300u, probes);
	EXPECT_EQ(0u, overlaps);
	mp.close();
	mp.cleanup();
}

/*
 * memif_gate=auto: a memif port is gated unless its configuration paces
 * it (rate=, dest_rate=: the gate's closed spells would cost pacing
 * precision under load); auto is the default; 0 and 1 as given.
 */
/* Opens a memif pair with @srv_extra / @cli_extra and checks each port's
 * memif_gated against @srv_gated / @cli_gated (@why names the case). */
static void check_memif_gated(const char *tag, const char *srv_dev,
			      const char *cli_dev, const char *net,
			      const std::string &srv_extra,
			      const std::string &cli_extra, uint64_t srv_gated,
			      uint64_t cli_gated, const char *why)
{
	struct dp_stats s;
	MemifPair mp;

	ASSERT_NO_FATAL_FAILURE(mp.config(tag, srv_dev, cli_dev, net,
					  srv_extra, cli_extra));
	ASSERT_NO_FATAL_FAILURE(mp.open());
	dp_port_stats(mp.srv, &s);
	EXPECT_EQ(srv_gated, s.memif_gated) << why << ": server";
	dp_port_stats(mp.cli, &s);
	EXPECT_EQ(cli_gated, s.memif_gated) << why << ": client";
	mp.close();
	mp.cleanup();
}

TEST_F(DpPortTest, MemifGateAutoGatesUnpacedPortsOnly)
{
	check_memif_gated("dpgateauto", "net_memif14", "net_memif15",
			  "10.9.14", "rx_ring=256 memif_gate=auto",
			  "rx_ring=256 rate=500M memif_gate=auto", 1, 0,
			  "auto: unpaced server gated, paced client not");
	check_memif_gated("dpgateoff", "net_memif16", "net_memif17",
			  "10.9.16", "rx_ring=256 memif_gate=0",
			  "rx_ring=256 rate=500M memif_gate=1", 0, 1,
			  "memif_gate=0 server, memif_gate=1 on a paced "
			  "client");
	check_memif_gated("dpgatedef", "net_memif18", "net_memif19",
			  "10.9.18", "rx_ring=256", "rx_ring=256 rate=500M",
			  1, 0,
			  "default (auto): unpaced server gated, paced client "
			  "not");
}

static void gate_note(void *arg)
{
	__atomic_store_n((int *)arg, 1, __ATOMIC_RELEASE);
}

/*
 * The gate closes only when the EAL interrupt thread has work (one of its
 * other sources is readable): a closed spell refuses bursts, and on a
 * loaded machine it lasts until that thread is scheduled again (the
 * sender's TX buffer then filled: ENOBUFS in QueuePairQueueKReachesThe-
 * PeersQueueK, 1 run in 3 with 10 ms slices).  So 300 ms of traffic over a
 * gated pair see no closed spell (slices: ~30), and an alarm, work for
 * that thread, closes it at least once and runs with it closed.
 */
static int g_gate_seen_closed;

static void gate_alarm_check(void *arg)
{
	g_gate_seen_closed =
		(__atomic_load_n(&dp_gate.word, __ATOMIC_ACQUIRE) &
		 DP_GATE_INTR) != 0;
	gate_note(arg);
}

TEST_F(DpPortTest, MemifGateClosesOnlyWhenTheInterruptThreadHasWork)
{
	MemifPair mp;

	ASSERT_NO_FATAL_FAILURE(mp.config("dpgateidle", "net_memif20",
					  "net_memif21", "10.9.20",
					  "rx_ring=1024", "rx_ring=1024"));
	ASSERT_NO_FATAL_FAILURE(mp.open());
	dp_stats s;
	dp_port_stats(mp.cli, &s);
	ASSERT_EQ(1u, s.memif_gated) << "the default gates unpaced memif";
	/* settle: the handshake's last control messages */
	uint64_t end = dp_tsc() + dp_ms_to_tsc(200);
	while (dp_tsc() < end) {
		dp_port_poll(mp.srv, dp_tsc());
		dp_port_poll(mp.cli, dp_tsc());
	}
	uint64_t before = dp_gate_closings(), frames = 0;
	std::vector<rte_mbuf *> got;
	end = dp_tsc() + dp_ms_to_tsc(300);
	while (dp_tsc() < end) {
		send_queue(mp.cli, 0, mp.cs.ip_be, 5, 16);
		collect_queue(mp.srv, mp.cli, mp.srv, 0, &got, 16, 100000);
		frames += got.size();
		for (rte_mbuf *m : got)
			dp_pkt_free(m);
		got.clear();
	}
	uint64_t closings = dp_gate_closings() - before;
	fprintf(stderr, "gate: %" PRIu64 " closed spells over 300 ms, %"
		PRIu64 " frames\n", closings, frames);
	EXPECT_GT(frames, 0u);
	/* unrelated EAL work may close it once or twice; slices: ~30 */
	EXPECT_LE(closings, 2u);

	int done = 0;
	before = dp_gate_closings();
	ASSERT_EQ(0, rte_eal_alarm_set(1000, gate_alarm_check, &done));
	end = dp_tsc() + dp_ms_to_tsc(10000);
	while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE) && dp_tsc() < end)
		dp_port_poll(mp.cli, dp_tsc());
	ASSERT_EQ(1, __atomic_load_n(&done, __ATOMIC_ACQUIRE));
	EXPECT_EQ(1, g_gate_seen_closed) << "the alarm ran with the gate open";
	EXPECT_GE(dp_gate_closings() - before, 1u);
	mp.close();
	mp.cleanup();
}

} /* namespace */
} /* namespace dptest */
