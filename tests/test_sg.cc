/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sg.cc - tests of the SCTP layer (sctp/, prefix sg_): configuration,
 * the maps, and two endpoints' associations (messages on streams, big
 * messages, back-pressure, shutdown, a peer lost and back, two endpoints in
 * one process).  The other concepts have their own files: test_sg_tx.cc
 * (send path), test_sg_rx.cc (receive path), test_sg_sack.cc (SACKs),
 * test_sg_lanes.cc (lanes); the two-endpoint fixture is sg_twonodes.h.
 *
 * Configuration: every field has a negative test (copy a valid config,
 * break one field, expect -EINVAL).
 */
#include "sg_twonodes.h"

namespace sgtest {
namespace {

/* ---------------------------------------------------------------------- */
/* configuration                                                           */

TEST(SgConfig, DefaultsAreValid)
{
	sg_config c;

	ASSERT_EQ(0, sg_config_parse(nullptr, &c));
	EXPECT_EQ(10, c.streams);
	EXPECT_EQ(0u, c.max_burst); /* no SCTP burst limit (sg_config.c) */
	EXPECT_EQ(0, sg_config_check(&c));
	EXPECT_TRUE(c.sack_immediate);
	ASSERT_EQ(0, sg_config_parse("max_burst=4 sack_immediate=0", &c));
	EXPECT_EQ(4u, c.max_burst);
	EXPECT_FALSE(c.sack_immediate);
	ASSERT_EQ(0, sg_config_parse("streams=65535 port=7 rto_min_ms=10 sack_delay_ms=5 "
				     "rto_initial_ms=20 rto_max_ms=30 "
				     "sndbuf=1M rx_buf=4K rx_descs=1024 "
				     "max_msg=4M",
				     &c));
	EXPECT_EQ(65535, c.streams);
	EXPECT_EQ(7, c.port);
	EXPECT_EQ(1u << 20, c.sndbuf_bytes);
	EXPECT_EQ(4096u, c.rx_buf_bytes);
	EXPECT_NE(nullptr, strstr(sg_config_help(), "streams="));
	EXPECT_EQ(0u, c.nr_sack); /* off unless asked */
	ASSERT_EQ(0, sg_config_parse("nr_sack=2", &c));
	EXPECT_EQ(2u, c.nr_sack);
	EXPECT_NE(nullptr, strstr(sg_config_help(), "nr_sack="));
	EXPECT_EQ(1024u, c.pending_peers);
	EXPECT_EQ(5000u, c.pending_ms);
	ASSERT_EQ(0, sg_config_parse("pending_peers=128 pending_ms=10", &c));
	EXPECT_EQ(128u, c.pending_peers);
	EXPECT_EQ(10u, c.pending_ms);
	EXPECT_NE(nullptr, strstr(sg_config_help(), "pending_peers="));
	EXPECT_NE(nullptr, strstr(sg_config_help(), "pending_ms="));
}

TEST(SgConfig, EachBadTokenIsRejected)
{
	const char *bad[] = {
		"streams=0", "streams=65536", "streams=x", "streams=10k",
		"port=0", "port=65536", "rto_initial_ms=0",
		"rto_min_ms=0", "rto_max_ms=600001", "hb_interval_ms=3600001",
		"path_max_rxt=0", "path_max_rxt=101", "nodelay=2",
		"sndbuf=1000", "rcvbuf=2G", "rx_descs=8", "rx_buf=512",
		"rx_headroom=4097", "max_msg=0", "max_peers=0",
		"event_queue=8", "bogus=1", "streams", "=5",
		"max_burst=1025", "max_burst=-1", "sack_immediate=2",
		"nr_sack=3", "nr_sack=-1",
		"pending_peers=127", "pending_peers=16777217",
		"pending_ms=9", "pending_ms=3600001",
		/* relations between fields */
		"rto_min_ms=500 rto_initial_ms=400",
		"rto_initial_ms=5000 rto_max_ms=4000",
		"rx_descs=16 rx_buf=1K max_msg=17K",
		"sack_delay_ms=501", "sack_delay_ms=100",
		"rto_min_ms=10 sack_delay_ms=20",
	};
	sg_config c;

	for (const char *b : bad)
		EXPECT_EQ(-EINVAL, sg_config_parse(b, &c)) << b;
}

TEST(SgConfig, CheckRejectsEachBadField)
{
	sg_config good;
	sg_config_defaults(&good);
	std::vector<std::function<void(sg_config &)>> breakers = {
		[](sg_config &c) { c.streams = 0; },
		[](sg_config &c) { c.port = 0; },
		[](sg_config &c) { c.rto_min_ms = 0; },
		[](sg_config &c) { c.rto_initial_ms = 0; },
		[](sg_config &c) { c.rto_max_ms = 700000; },
		[](sg_config &c) { c.hb_interval_ms = 4000000; },
		[](sg_config &c) { c.path_max_rxt = 0; },
		[](sg_config &c) { c.sndbuf_bytes = 1; },
		[](sg_config &c) { c.rcvbuf_bytes = 1; },
		[](sg_config &c) { c.rx_descs = 1; },
		[](sg_config &c) { c.rx_buf_bytes = 1; },
		[](sg_config &c) { c.rx_headroom_bytes = 5000; },
		[](sg_config &c) { c.max_msg_bytes = 0; },
		[](sg_config &c) { c.max_peers = 0; },
		[](sg_config &c) { c.event_queue = 1; },
		[](sg_config &c) { c.max_burst = 1025; },
		[](sg_config &c) { c.rto_min_ms = c.rto_initial_ms + 1; },
		[](sg_config &c) { c.rto_max_ms = c.rto_initial_ms - 1; },
		[](sg_config &c) { c.sack_delay_ms = c.rto_min_ms; },
		[](sg_config &c) { c.sack_hold_us = 100001; },
		[](sg_config &c) { c.sack_hold_us = c.rto_min_ms * 1000; },
		[](sg_config &c) {
			c.max_msg_bytes = c.rx_descs * c.rx_buf_bytes + 1;
		},
	};
	for (size_t i = 0; i < breakers.size(); i++) {
		sg_config c = good;

		breakers[i](c);
		EXPECT_EQ(-EINVAL, sg_config_check(&c)) << "breaker " << i;
	}
}

/* tx_cluster (usrsctp-patches/0005): 0 or 2048..16M; below usrsctp's
 * cluster it names the fix. */
TEST(SgConfig, TxClusterRange)
{
	sg_config c;

	ASSERT_EQ(0, sg_config_parse(nullptr, &c));
	EXPECT_EQ(64u << 10, c.tx_cluster_bytes);
	ASSERT_EQ(0, sg_config_parse("tx_cluster=0", &c));
	EXPECT_EQ(0u, c.tx_cluster_bytes);
	ASSERT_EQ(0, sg_config_parse("tx_cluster=256k", &c));
	EXPECT_EQ(256u << 10, c.tx_cluster_bytes);
	ASSERT_EQ(0, sg_config_parse("tx_cluster=2048", &c));
	EXPECT_EQ(-EINVAL, sg_config_parse("tx_cluster=2047", &c));
	EXPECT_EQ(-EINVAL, sg_config_parse("tx_cluster=1", &c));
	EXPECT_EQ(-EINVAL, sg_config_parse("tx_cluster=17M", &c));
	EXPECT_NE(nullptr, strstr(sg_config_help(), "tx_cluster="));
}

TEST(SgMap, PutGetDelWithCollisions)
{
	sg_map m;
	std::map<uint32_t, uint64_t> ref;
	std::mt19937 rng(7);

	ASSERT_EQ(0, sg_map_init(&m, 64));
	for (int round = 0; round < 20000; round++) {
		uint32_t k = 1 + rng() % 200;
		uint64_t v;

		if (rng() % 3 == 0) {
			EXPECT_EQ(ref.erase(k) == 1, sg_map_del(&m, k));
		} else if (ref.size() < 64 || ref.count(k)) {
			ASSERT_EQ(0, sg_map_put(&m, k, round));
			ref[k] = round;
		} else {
			EXPECT_EQ(-ENOSPC, sg_map_put(&m, k, round));
		}
		for (uint32_t q = 1; q <= 200; q += 13) {
			bool in = ref.count(q) != 0;
			ASSERT_EQ(in, sg_map_get(&m, q, &v)) << q;
			if (in) {
				ASSERT_EQ(ref[q], v);
			}
		}
	}
	sg_map_free(&m);
}

/* The table starts at SG_MAP_SLOTS_MIN slots and doubles as keys arrive:
 * 100000 keys (spread like IPv4 addresses of one /16 and beyond) all stay
 * reachable across every doubling and deletion, the table stays at most
 * half full, and the limit still holds. */
TEST(SgMap, GrowsFromSmallToManyKeys)
{
	const uint32_t n = 100000;
	sg_map m;
	uint64_t v;

	ASSERT_EQ(0, sg_map_init(&m, n));
	EXPECT_EQ(SG_MAP_SLOTS_MIN, m.mask + 1);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t k = 0x0a000001u + i * 257u;

		ASSERT_EQ(0, sg_map_put(&m, k, i)) << i;
		ASSERT_LE(2 * m.count, m.mask + 1);
	}
	EXPECT_EQ(n, m.count);
	EXPECT_EQ(-ENOSPC, sg_map_put(&m, 7, 1));
	for (uint32_t i = 0; i < n; i++) {
		ASSERT_TRUE(sg_map_get(&m, 0x0a000001u + i * 257u, &v)) << i;
		ASSERT_EQ(i, v);
	}
	for (uint32_t i = 0; i < n; i += 2)
		ASSERT_TRUE(sg_map_del(&m, 0x0a000001u + i * 257u));
	for (uint32_t i = 0; i < n; i++)
		ASSERT_EQ(i % 2 == 1,
			  sg_map_get(&m, 0x0a000001u + i * 257u, &v)) << i;
	ASSERT_EQ(0, sg_map_put(&m, 7, 1));
	EXPECT_EQ(-EINVAL, sg_map_init(&m, 0));
	sg_map_free(&m);
}

/* The peer table has no fixed size: 5000 peers (the old default was 256)
 * are created one by one, each at a stable address that usrsctp keeps,
 * each found again by its address, and max_peers still bounds them. */
TEST(SgLink, PeersGrowBeyondAnyInitialSizeAtStableAddresses)
{
	const uint32_t n = 5000;
	std::vector<sg_peer *> seen;
	sg_stats st{};
	sg_link lk;

	/* no port: sg_link_init only takes a hold on it; usrsctp is up
	 * (peers register their address with it) */
	ASSERT_EQ(0, sg_stack_get());
	memset(&lk, 0, sizeof(lk));
	lk.max_peers = n;
	lk.ms_div = 1;
	ASSERT_EQ(0, sg_map_init(&lk.peer_map, n * SG_PATHS_MAX));
	lk.st = &st;
	for (uint32_t i = 0; i < n; i++) {
		sg_peer *p = sg_link_peer(&lk, htonl(0x0a010000u + i + 1));

		ASSERT_NE(nullptr, p) << i;
		seen.push_back(p);
	}
	EXPECT_EQ(nullptr, sg_link_peer(&lk, htonl(0x0a020001u)));
	for (uint32_t i = 0; i < n; i++) {
		ASSERT_EQ(seen[i], sg_link_peer_find(&lk,
						     htonl(0x0a010000u + i + 1)));
		ASSERT_EQ(seen[i], sg_link_peer_at(&lk, i));
		ASSERT_EQ(htonl(0x0a010000u + i + 1), seen[i]->ip_be);
	}
	sg_link_release(&lk);
	sg_map_free(&lk.peer_map);
	for (uint32_t b = 0; b < lk.nb_blocks; b++)
		free(lk.blocks[b]);
	free(lk.blocks);
	sg_stack_put();
}

/* ---------------------------------------------------------------------- */
/* two endpoints in two processes over memif                              */

/*
 * Association setup, 10 streams of interleaved messages with per-stream
 * order, unordered messages, a 16 MiB message, back-pressure with a stalled
 * consumer, then a graceful shutdown seen on both sides.
 */
TEST_F(SgTwoNodes, StreamsOrderBigMessageAndShutdown)
{
	constexpr uint32_t kStreams = 10, kMsgs = 3000, kUnord = 300;
	constexpr uint32_t kBig = 16u << 20, kStall = 2000;

	Child srv = spawn([&](Node &n) {
		n.up(true, "server", "");
		sg_event ev;
		CHILD_CHECK(n.wait_event(SG_EV_UP, &ev, 30));
		CHILD_CHECK(ev.peer_ip_be == ip_of(2));
		CHILD_CHECK(ev.peer_port == kSctpPort);
		n.report("UP");
		sg_assoc_t a = ev.assoc;

		/* Phase 1: ordered per stream + unordered. */
		std::vector<uint32_t> next(kStreams, 0);
		uint32_t got = 0, unord = 0;
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		while (got < kMsgs + kUnord) {
			MsgHdr h;

			CHILD_CHECK(n.recv(b, meta, 60));
			CHILD_CHECK(meta.ppid == PPID_DATA);
			CHILD_CHECK(check_msg(b, h));
			CHILD_CHECK(h.stream == meta.stream);
			if (h.unordered) {
				CHILD_CHECK(meta.flags & SG_MSG_UNORDERED);
				unord++;
			} else {
				CHILD_CHECK(!(meta.flags & SG_MSG_UNORDERED));
				CHILD_CHECK(h.seq == next[h.stream]);
				next[h.stream]++;
			}
			got++;
		}
		CHILD_CHECK(unord == kUnord);
		n.send(a, 0, 0, PPID_OK, "ok1", 3);

		/* Phase 2: one 16 MiB message, CRC in the first 4 bytes. */
		CHILD_CHECK(n.recv(b, meta, 120));
		CHILD_CHECK(meta.ppid == PPID_BIG);
		CHILD_CHECK(b.size() == kBig);
		CHILD_CHECK(meta.nb_segs > 1);
		uint32_t crc;
		memcpy(&crc, b.data(), 4);
		CHILD_CHECK(crc == dp_crc32c(DP_CRC_ISAL, b.data() + 4,
					     b.size() - 4));
		n.send(a, 0, 0, PPID_OK, "ok2", 3);

		/* Phase 3: stop consuming; the sender must be held back,
		 * nothing may be lost. */
		double t_end = now_s() + 1.5;
		n.wait([&] { return now_s() > t_end; }, 5);
		sg_stats st;
		sg_ep_stats(n.ep, &st);
		CHILD_CHECK(st.rx_backpressure > 0);
		for (uint32_t i = 0; i < kStall; i++) {
			MsgHdr h;

			CHILD_CHECK(n.recv(b, meta, 60));
			CHILD_CHECK(check_msg(b, h));
			CHILD_CHECK(h.seq == i);
		}
		n.send(a, 0, 0, PPID_OK, "ok3", 3);

		CHILD_CHECK(n.wait_event(SG_EV_SHUTDOWN, &ev, 30));
		CHILD_CHECK(ev.assoc == a);
		sg_ep_stats(n.ep, &st);
		sg_stats_print(&st, stderr);
		/* every received message byte copied once, by usrsctp
		 * (recvv into a descriptor), out of the DPDK mbuf it kept
		 * the packet in (rx_ext: conninput copied no packet) */
		CHILD_CHECK(st.rx_copy_recv_bytes == st.bytes_in);
		CHILD_CHECK(st.rx_copy_input_bytes == 0);
		CHILD_CHECK(st.rx_ext_bytes >= st.bytes_in);
		CHILD_CHECK(st.rx_ext_pkts == st.pkts_in);
		CHILD_CHECK(st.rx_copies >= st.msgs_in);
		CHILD_CHECK(st.crc_drops == 0);
		/* Path MTU right: no packet refused by the dataplane. */
		CHILD_CHECK(st.tx_drops == 0);
		/* CRC32c left to the dataplane: usrsctp computed none. */
		struct sctpstat us;
		usrsctp_get_stat(&us);
		CHILD_CHECK(us.sctps_sendswcrc == 0 && us.sctps_recvswcrc == 0);
		CHILD_CHECK(us.sctps_sendhwcrc > 0);
		n.report("SHUTDOWN");
		n.down();
	});
	kids.push_back(&srv);
	ASSERT_TRUE(wait_server_socket(20));
	Child cli = spawn([&](Node &n) {
		n.up(false, "client", "");
		sg_assoc_t a = 0;
		CHILD_CHECK(sg_connect(n.ep, ip_of(1), kSctpPort, &a) == 0);
		sg_event ev;
		CHILD_CHECK(n.wait_event(SG_EV_UP, &ev, 30));
		CHILD_CHECK(ev.assoc == a);
		CHILD_CHECK(sg_assoc_up(n.ep, a));
		n.report("UP");

		/* Invalid sends. */
		iovec iov = { (void *)"x", 1 };
		CHILD_CHECK(sg_send(n.ep, a, 10, 0, 1, &iov, 1) == -EINVAL);
		CHILD_CHECK(sg_send(n.ep, a + 1000, 0, 0, 1, &iov, 1) ==
			    -ENOTCONN);
		iovec big = { (void *)"x", (16u << 20) + 1 };
		CHILD_CHECK(sg_send(n.ep, a, 0, 0, 1, &big, 1) == -EMSGSIZE);

		std::mt19937 rng(42);
		std::vector<uint32_t> seq(kStreams, 0);
		uint32_t unord_left = kUnord;
		for (uint32_t i = 0; i < kMsgs + kUnord; i++) {
			bool u = unord_left > 0 && rng() % 11 == 0;
			uint16_t s = (uint16_t)(rng() % kStreams);
			uint32_t len = 24 + rng() % 3000;

			if (i % 101 == 0)
				len = 100000 + rng() % 100000; /* > 1 desc */
			if (!u && kMsgs + kUnord - i == unord_left)
				u = true; /* finish the unordered quota */
			if (u)
				unord_left--;
			auto m = make_msg(s, u ? 0 : seq[s]++, len, u);
			n.send(a, s, u ? SG_SEND_UNORDERED : 0, PPID_DATA,
			       m.data(), m.size());
		}
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 60));
		CHILD_CHECK(meta.ppid == PPID_OK);

		std::vector<uint8_t> m(kBig);
		for (size_t i = 4; i < m.size(); i++)
			m[i] = (uint8_t)(i * 2654435761u >> 13);
		uint32_t crc = dp_crc32c(DP_CRC_ISAL, m.data() + 4,
					 m.size() - 4);
		memcpy(m.data(), &crc, 4);
		n.send(a, 2, 0, PPID_BIG, m.data(), m.size());
		CHILD_CHECK(n.recv(b, meta, 120));
		CHILD_CHECK(meta.ppid == PPID_OK);

		for (uint32_t i = 0; i < kStall; i++) {
			auto mm = make_msg(3, i, 8000, false);
			n.send(a, 3, 0, PPID_DATA, mm.data(), mm.size());
		}
		CHILD_CHECK(n.recv(b, meta, 60));
		CHILD_CHECK(meta.ppid == PPID_OK);
		sg_stats st;
		sg_ep_stats(n.ep, &st);
		CHILD_CHECK(st.tx_backpressure > 0);

		CHILD_CHECK(sg_disconnect(n.ep, a) == 0);
		CHILD_CHECK(n.wait_event(SG_EV_SHUTDOWN, &ev, 30));
		CHILD_CHECK(!sg_assoc_up(n.ep, a));
		n.report("SHUTDOWN");
		n.down();
	});
	kids.push_back(&cli);

	EXPECT_TRUE(expect_line(srv, "UP", 40));
	EXPECT_TRUE(expect_line(cli, "UP", 40));
	EXPECT_TRUE(expect_line(cli, "SHUTDOWN", 240));
	EXPECT_TRUE(expect_line(srv, "SHUTDOWN", 30));
	EXPECT_EQ(0, reap(cli, 30));
	EXPECT_EQ(0, reap(srv, 30));
}

/* 100 MiB in 64 KiB messages must take seconds, not minutes. */
TEST_F(SgTwoNodes, BulkTransferIsFast)
{
	constexpr uint32_t kMsg = 64u << 10, kCount = 1600;

	pair_start("", "", [&](Node &n, sg_assoc_t a) {
		uint64_t bytes = 0;
		for (uint32_t i = 0; i < kCount; i++) {
			sg_msg_desc *m = nullptr;

			CHILD_CHECK(n.wait(
				[&] { return sg_recv(n.ep, &m, 1) == 1; }, 60));
			CHILD_CHECK(m->msg_len == kMsg && m->ppid == PPID_BULK);
			bytes += m->msg_len;
			sg_msg_release(m);
		}
		n.send(a, 0, 0, PPID_OK, "ok", 2);
		sg_stats st;
		sg_ep_stats(n.ep, &st);
		/* 64 KiB messages: each byte copied out of usrsctp exactly
		 * once, never into it (rx_ext: kept in the DPDK mbufs) */
		CHILD_CHECK(st.bytes_in >= (uint64_t)kMsg * kCount);
		CHILD_CHECK(st.rx_copy_recv_bytes == st.bytes_in);
		CHILD_CHECK(st.rx_copy_input_bytes == 0);
		CHILD_CHECK(st.rx_ext_bytes >= st.bytes_in);
		CHILD_CHECK(st.rx_ext_pkts == st.pkts_in);
		/* its SACKs: written by usrsctp into our mbufs, not copied */
		CHILD_CHECK(tx_direct(st));
	}, [&](Node &n, sg_assoc_t a) {
		std::vector<uint8_t> m(kMsg, 0x5a);
		double t0 = now_s();
		for (uint32_t i = 0; i < kCount; i++)
			n.send(a, (uint16_t)(i % 10), 0, PPID_BULK, m.data(),
			       m.size());
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 120));
		double dt = now_s() - t0;
		sg_stats st;
		sg_ep_stats(n.ep, &st);
		sg_stats_print(&st, stderr);
		/* 100 MiB sent without a copy of ours: every packet left in
		 * the mbuf usrsctp wrote it into (usrsctp-patches/0002;
		 * without it tx_copy_bytes > 100 MiB) */
		CHILD_CHECK(st.bytes_out >= (uint64_t)kMsg * kCount);
		CHILD_CHECK(tx_direct(st));
		char line[128];
		snprintf(line, sizeof(line), "RATE %.2f Gbit/s in %.2f s",
			 (double)kMsg * kCount * 8 / dt / 1e9, dt);
		n.report(line);
	});

	std::string rate;
	EXPECT_TRUE(expect_line(pair_cli, "RATE", 120, &rate));
	fprintf(stderr, "100 MiB over memif: %s\n", rate.c_str());
	double secs = 1e9;
	sscanf(rate.c_str(), "RATE %*f Gbit/s in %lf s", &secs);
	EXPECT_LT(secs, 60.0) << rate;
	pair_end();
}

/* The client's stand-in for a pool that runs dry now and then: every
 * third buffer usrsctp asks for is refused, so usrsctp falls back to
 * malloc and sg_conn_output copies that packet. */
uint64_t g_refused_bytes, g_asked;

void *alloc_refusing_some(void *addr, size_t len)
{
	if (++g_asked % 3 == 0) {
		g_refused_bytes += len;
		return nullptr;
	}
	return sg_conn_output_alloc(addr, len);
}

/*
 * usrsctp_set_conn_output_alloc's fallback: a packet whose buffer the
 * application does not give is put in malloc'd memory by usrsctp and
 * copied by conn_output (exactly those bytes counted in tx_copy_bytes),
 * the others leave in their mbufs; mixed, every message arrives whole and
 * in order.
 */
TEST_F(SgTwoNodes, TxFallsBackToACopyWhenNoBufferIsGiven)
{
	constexpr uint32_t kCount = 3000;

	Child srv = spawn([&](Node &n) {
		n.up(true, "server", "");
		sg_event ev;
		CHILD_CHECK(n.wait_event(SG_EV_UP, &ev, 30));
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		for (uint32_t i = 0; i < kCount; i++) {
			MsgHdr h;

			CHILD_CHECK(n.recv(b, meta, 60));
			CHILD_CHECK(meta.ppid == PPID_DATA);
			CHILD_CHECK(check_msg(b, h));
			CHILD_CHECK(h.seq == i);
		}
		n.send(ev.assoc, 0, 0, PPID_OK, "ok", 2);
		sg_stats st;
		sg_ep_stats(n.ep, &st);
		CHILD_CHECK(tx_direct(st)); /* the hook is the client's */
		n.wait_event(SG_EV_SHUTDOWN, nullptr, 10);
		n.down();
	});
	kids.push_back(&srv);
	ASSERT_TRUE(wait_server_socket(20));
	Child cli = spawn([&](Node &n) {
		n.up(false, "client", "");
		usrsctp_set_conn_output_alloc(alloc_refusing_some,
					      sg_conn_output_free);
		sg_assoc_t a = 0;
		CHILD_CHECK(sg_connect(n.ep, ip_of(1), kSctpPort, &a) == 0);
		CHILD_CHECK(n.wait_event(SG_EV_UP, nullptr, 30));
		std::mt19937 rng(9);
		for (uint32_t i = 0; i < kCount; i++) {
			auto m = make_msg(1, i, 24 + rng() % 9000, false);
			n.send(a, 1, 0, PPID_DATA, m.data(), m.size());
		}
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 60));
		CHILD_CHECK(meta.ppid == PPID_OK);
		sg_stats st;
		sg_ep_stats(n.ep, &st);
		sg_stats_print(&st, stderr);
		fprintf(stderr, "refused %" PRIu64 " of %" PRIu64
			" buffers, %" PRIu64 " bytes\n", g_asked / 3, g_asked,
			g_refused_bytes);
		CHILD_CHECK(st.tx_drops == 0);
		CHILD_CHECK(g_refused_bytes > 0);
		CHILD_CHECK(st.tx_copy_bytes == g_refused_bytes);
		CHILD_CHECK(st.tx_direct_pkts > 0 &&
			    st.tx_direct_pkts < st.pkts_out);
		n.report("DONE");
		sg_disconnect(n.ep, a);
		n.wait_event(SG_EV_SHUTDOWN, nullptr, 10);
		n.down();
	});
	kids.push_back(&cli);

	EXPECT_TRUE(expect_line(cli, "DONE", 180));
	EXPECT_EQ(0, reap(cli, 30));
	EXPECT_EQ(0, reap(srv, 30));
}

/*
 * An empty pool: each packet usrsctp sends meanwhile is dropped once
 * (sg_conn_output_alloc finds no mbuf, conn_output does not try again:
 * one no_mbuf drop per tx_drop), and once mbufs are back the message gets
 * through, intact.
 */
TEST_F(SgTwoNodes, EmptyPoolDropsEachPacketOnceThenRecovers)
{
	pair_start("", "", [&](Node &n, sg_assoc_t a) {
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		MsgHdr h;
		CHILD_CHECK(n.recv(b, meta, 60));
		CHILD_CHECK(check_msg(b, h) && h.seq == 7);
		n.send(a, 0, 0, PPID_OK, "ok", 2);
	}, [&](Node &n, sg_assoc_t a) {
		std::vector<rte_mbuf *> held;
		rte_mbuf *m;
		while ((m = dp_pkt_alloc(n.port)) != nullptr)
			held.push_back(m);
		sg_stats s0, s1;
		dp_stats d0, d1;
		sg_ep_stats(n.ep, &s0);
		dp_port_stats(n.port, &d0);
		auto msg = make_msg(0, 7, 20000, false);
		n.send(a, 0, 0, PPID_DATA, msg.data(), msg.size());
		double t_end = now_s() + 0.3;
		n.wait([&] { return now_s() > t_end; }, 5);
		sg_ep_stats(n.ep, &s1);
		dp_port_stats(n.port, &d1);
		uint64_t drops = s1.tx_drops - s0.tx_drops;
		uint64_t no_mbuf = d1.drops[DP_DROP_NO_MBUF] -
				   d0.drops[DP_DROP_NO_MBUF];
		fprintf(stderr, "held %zu mbufs: tx_drops %" PRIu64
			", no_mbuf drops %" PRIu64 "\n", held.size(), drops,
			no_mbuf);
		CHILD_CHECK(drops > 0);
		CHILD_CHECK(no_mbuf == drops);
		CHILD_CHECK(s1.tx_copy_bytes == 0);
		for (rte_mbuf *x : held)
			dp_pkt_free(x);
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 60));
		CHILD_CHECK(meta.ppid == PPID_OK);
		n.report("DONE");
	});

	EXPECT_TRUE(expect_line(pair_cli, "DONE", 120));
	pair_end();
}

/*
 * SIGKILL the client: the server reports the association lost within its
 * configured timeout and keeps running; a restarted client reconnects.
 */
TEST_F(SgTwoNodes, PeerKilledIsLostThenReconnects)
{
	Child srv = spawn([&](Node &n) {
		n.up(true, "server", kFastFail);
		sg_event ev;
		CHILD_CHECK(n.wait_event(SG_EV_UP, &ev, 30));
		n.report("UP");
		double t0 = 0;
		/* Keep data flowing so the loss is noticed by T3 as well. */
		CHILD_CHECK(n.wait(
			[&] {
				if (n.events.size() && t0 == 0)
					t0 = now_s();
				for (auto &e : n.events)
					if (e.type == SG_EV_LOST)
						return true;
				return false;
			},
			30));
		char line[64];
		snprintf(line, sizeof(line), "LOST");
		n.report(line);
		n.events.clear();
		CHILD_CHECK(!sg_assoc_up(n.ep, ev.assoc));
		CHILD_CHECK(n.wait_event(SG_EV_UP, &ev, 40));
		CHILD_CHECK(ev.peer_ip_be == ip_of(2));
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 30));
		CHILD_CHECK(b.size() == 5 && memcmp(b.data(), "hello", 5) == 0);
		n.send(ev.assoc, 1, 0, PPID_OK, "ok", 2);
		n.report("UP2");
		n.wait_event(SG_EV_SHUTDOWN, nullptr, 10);
		n.down();
	});
	kids.push_back(&srv);
	auto client = [&](Node &n, bool second) {
		n.up(false, second ? "client2" : "client", kFastFail);
		sg_assoc_t a = 0;
		CHILD_CHECK(sg_connect(n.ep, ip_of(1), kSctpPort, &a) == 0);
		CHILD_CHECK(n.wait_event(SG_EV_UP, nullptr, 30));
		n.report("UP");
		if (!second) {
			/* Wait to be killed. */
			n.wait([] { return false; }, 60);
			_exit(4);
		}
		n.send(a, 1, 0, PPID_DATA, "hello", 5);
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 30));
		CHILD_CHECK(meta.ppid == PPID_OK);
		sg_disconnect(n.ep, a);
		n.wait_event(SG_EV_SHUTDOWN, nullptr, 10);
		n.down();
	};
	ASSERT_TRUE(wait_server_socket(20));
	Child cli = spawn([&](Node &n) { client(n, false); });
	kids.push_back(&cli);

	ASSERT_TRUE(expect_line(srv, "UP", 40));
	ASSERT_TRUE(expect_line(cli, "UP", 40));
	double t_kill = now_s();
	kill(cli.pid, SIGKILL);
	reap(cli, 5);
	EXPECT_EQ(0, dp_eal_runtime_dir_remove(
			     ("sdp-" + g_job + "-client").c_str()));
	/* hb 100 ms + (path_max_rxt + 1) * rto_max 200 ms, plus slack. */
	ASSERT_TRUE(expect_line(srv, "LOST", 10));
	double lost_s = now_s() - t_kill;
	fprintf(stderr, "association lost %.2f s after SIGKILL\n", lost_s);
	EXPECT_LT(lost_s, 5.0);

	Child cli2 = spawn([&](Node &n) { client(n, true); });
	kids.push_back(&cli2);
	EXPECT_TRUE(expect_line(cli2, "UP", 40));
	EXPECT_TRUE(expect_line(srv, "UP2", 40));
	EXPECT_EQ(0, reap(cli2, 30));
	EXPECT_EQ(0, reap(srv, 30));
}

/*
 * Two endpoints in ONE process (one sg_ep per port), each on
 * its own port of a memif pair opened in this process (the second port
 * hot-plugged), on SCTP ports 5000 and 5001: usrsctp's AF_CONN registers
 * the two peer addresses on two links and keeps the associations apart.
 * Both endpoints are polled by one thread; messages go both ways on
 * several streams, every byte checked.  Runs in a child (process-wide
 * EAL and usrsctp).  Before several ports per process, the second port's
 * open found the first one ("the only port") and failed.
 */
TEST_F(SgTwoNodes, TwoEndpointsInOneProcessOverTwoPorts)
{
	Child c = spawn([&](Node &n) {
		char cfg[2][1024];
		dp_config dcfg[2];
		sg_config scfg[2];
		dp_port *port[2] = {nullptr, nullptr};
		sg_ep *ep[2] = {nullptr, nullptr};
		int rc_a = -1;

		for (int e = 0; e < 2; e++) {
			snprintf(cfg[e], sizeof(cfg[e]),
				 "dev=net_memif%d,role=%s,id=0,socket=%s/"
				 "memif0.sock,socket-abstract=no "
				 "ip=10.77.1.%d/24 prefix=sdp-%s-one mem=256 "
				 "link_wait_ms=15000", e,
				 e == 0 ? "server" : "client",
				 g_sockdir.c_str(), e + 1, g_job.c_str());
			CHILD_CHECK(dp_config_parse(cfg[e], &dcfg[e]) == 0);
			CHILD_CHECK(sg_config_parse(e == 0 ? "port=5000" :
							     "port=5001",
						    &scfg[e]) == 0);
		}
		CHILD_CHECK(dp_eal_init(&dcfg[0]) == 0);
		/* the server's open waits for its link: the client opens
		 * (hot-plugged) meanwhile */
		std::thread t([&] { rc_a = dp_port_open(&dcfg[0], &port[0]); });
		usleep(200 * 1000);
		int rc_b = dp_port_open(&dcfg[1], &port[1]);
		t.join();
		CHILD_CHECK(rc_a == 0 && rc_b == 0);
		CHILD_CHECK(dp_port_id(port[0]) != dp_port_id(port[1]));
		for (int e = 0; e < 2; e++)
			CHILD_CHECK(sg_ep_open(port[e], &scfg[e], &ep[e]) == 0);

		std::vector<sg_event> evs[2];
		auto poll_both = [&] {
			sg_event ev;

			for (int e = 0; e < 2; e++) {
				sg_poll(ep[e], dp_tsc());
				while (sg_next_event(ep[e], &ev) == 0)
					evs[e].push_back(ev);
			}
		};
		auto up = [&](int e, sg_assoc_t *a) {
			for (double end = now_s() + 20; now_s() < end;) {
				poll_both();
				for (auto &ev : evs[e])
					if (ev.type == SG_EV_UP) {
						*a = ev.assoc;
						return true;
					}
			}
			return false;
		};
		sg_assoc_t a0 = 0, a1 = 0;
		CHILD_CHECK(sg_connect(ep[0], dcfg[1].ip_be, 5001, &a0) == 0);
		CHILD_CHECK(up(0, &a0));
		CHILD_CHECK(up(1, &a1));

		constexpr uint32_t kMsgs = 400;
		for (int dir = 0; dir < 2; dir++) {
			int from = dir, to = 1 - dir;
			sg_assoc_t a = dir == 0 ? a0 : a1;
			uint32_t sent = 0, got = 0;
			uint32_t next[4] = {0, 0, 0, 0};

			for (double end = now_s() + 60;
			     got < kMsgs && now_s() < end;) {
				if (sent < kMsgs) {
					uint16_t st = (uint16_t)(1 + sent % 4);
					auto b = make_msg(st, sent / 4,
							  100 + sent * 37 % 3000,
							  false);
					iovec iov = {b.data(), b.size()};

					if (sg_send(ep[from], a, st, 0,
						    PPID_DATA, &iov, 1) == 0)
						sent++;
				}
				poll_both();
				sg_msg_desc *m = nullptr;
				while (sg_recv(ep[to], &m, 1) == 1) {
					std::vector<uint8_t> out;
					MsgHdr h;

					for (sg_msg_desc *x = m; x != nullptr;
					     x = x->next)
						out.insert(out.end(), x->data,
							   x->data + x->len);
					CHILD_CHECK(check_msg(out, h));
					CHILD_CHECK(h.stream == m->stream);
					CHILD_CHECK(h.seq ==
						    next[h.stream - 1]++);
					sg_msg_release(m);
					got++;
				}
			}
			CHILD_CHECK(got == kMsgs);
			n.report(dir == 0 ? "AB" : "BA");
		}
		sg_ep_close(ep[1]);
		sg_ep_close(ep[0]);
		/* The ports stay open: closing both ends of a memif pair in
		 * one process races in DPDK 22.11's memif (the last device
		 * of a socket frees the listener's interrupt handle while its
		 * callback is registered), and this child exits now; the
		 * fixture removes the runtime directory. */
		n.report("DONE");
	});
	kids.push_back(&c);
	EXPECT_TRUE(expect_line(c, "AB", 60));
	EXPECT_TRUE(expect_line(c, "BA", 60));
	EXPECT_TRUE(expect_line(c, "DONE", 30));
	EXPECT_EQ(0, reap(c, 30));
}

} /* namespace */
} /* namespace sgtest */
