/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sg_rx.cc - the sctp layer's receive path (sg_rxring.c, sg_place.c,
 * sg_conn.c): descriptors reused last in first out, direct placement,
 * packets kept in their DPDK mbufs (rx_ext) and given back, the copy
 * fall-backs, a port closed before its endpoint, malformed packets.
 */
#include "sg_twonodes.h"

namespace sgtest {
namespace {

/*
 * Free receive descriptors are reused last in, first out.  With
 * the FIFO they replaced, a ping-pong wrote every message into the
 * descriptor released rx_descs messages earlier: cold cache lines, and a
 * page fault per page on the first round (16 KiB one-way latency over
 * memif went from ~10 to ~40 us, traced with bench/trace_stages.py).
 */
TEST_F(SgTwoNodes, FreeDescriptorsAreReusedLastInFirstOut)
{
	Child c = spawn([&](Node &) {
		dp_config dcfg;
		sg_config scfg;
		sg_rxpool pool;
		std::string dpc = "dev=net_null0 ip=10.77.9.1/24 mem=256 "
				  "prefix=sdp-" + g_job + "-pool";

		CHILD_CHECK(dp_config_parse(dpc.c_str(), &dcfg) == 0);
		CHILD_CHECK(dp_eal_init(&dcfg) == 0);
		CHILD_CHECK(sg_config_parse("rx_descs=16 rx_buf=4096 max_msg=65536",
					    &scfg) == 0);
		CHILD_CHECK(sg_rxpool_init(&pool, &scfg, &pool) == 0);
		sg_rxdesc *a = sg_rxpool_get(&pool);
		CHILD_CHECK(a != nullptr);
		for (int i = 0; i < 100; i++) { /* steady exchange */
			sg_rxpool_put_chain(&a->pub);
			sg_rxdesc *b = sg_rxpool_get(&pool);
			CHILD_CHECK(b == a);
		}
		sg_rxdesc *b = sg_rxpool_get(&pool);
		CHILD_CHECK(b != nullptr && b != a);
		sg_rxpool_put_chain(&a->pub);
		sg_rxpool_put_chain(&b->pub);
		CHILD_CHECK(sg_rxpool_get(&pool) == b);
		CHILD_CHECK(sg_rxpool_get(&pool) == a);
		/* all 16 come out, then none */
		std::vector<sg_rxdesc *> all{ a, b };
		while (sg_rxdesc *d = sg_rxpool_get(&pool))
			all.push_back(d);
		CHILD_CHECK(all.size() == 16);
		for (sg_rxdesc *d : all)
			sg_rxpool_put_chain(&d->pub);
		sg_rxpool_fini(&pool);
		dp_eal_fini();
	});
	kids.push_back(&c);
	EXPECT_EQ(0, reap(c, 60));
}

/*
 * Direct placement (sg_ep_set_place, sg_place.c): the receiver peeks 16
 * bytes of each message; the header names what its place function does
 * with the rest of a 100000-byte message (no multiple of the MTU):
 *   0  declines at once: the message comes whole in one descriptor
 *   1  hands out its buffer 1000 bytes per call: every byte lands there,
 *      the message is published as its 16 bytes with SG_MSG_PLACED
 *   2  hands out 3000 bytes, then NULL (its destination went away): the
 *      rest is discarded (SG_MSG_DISCARDED), the buffer past 3000 bytes
 *      is never written, and the next message is intact
 * and a 10-byte message ends within the peek.  rx_direct_bytes and
 * rx_discard_bytes count exactly those bytes; done runs after every read
 * into a buffer place gave (bytes summed == placed).
 */
struct PlaceState {
	std::vector<uint8_t> dst;
	uint32_t calls = 0, dones = 0;
	uint64_t done_bytes = 0;
};

void *place_cb(void *arg, sg_ep *, const sg_msg_desc *head, uint32_t off,
	       size_t *len_p)
{
	PlaceState *ps = static_cast<PlaceState *>(arg);
	uint32_t mode;
	size_t at;

	if (head->len < 16)
		return nullptr;
	memcpy(&mode, head->data, sizeof(mode));
	ps->calls++;
	at = off - 16;
	if (mode == 0 || at >= ps->dst.size() || (mode == 2 && at >= 3000))
		return nullptr;
	*len_p = std::min<size_t>(1000, ps->dst.size() - at);
	return ps->dst.data() + at;
}

void place_done_cb(void *arg, const sg_msg_desc *, uint32_t, size_t bytes)
{
	PlaceState *ps = static_cast<PlaceState *>(arg);

	ps->dones++;
	ps->done_bytes += bytes;
}

uint8_t place_byte(uint32_t mode, size_t i)
{
	return (uint8_t)(i * 13 + mode * 101 + 5);
}

TEST_F(SgTwoNodes, PlaceWritesTheRestStraightIntoTheConsumersBuffer)
{
	constexpr uint32_t kLen = 100000, kPeek = 16;

	Child srv = spawn([&](Node &n) {
		n.up(true, "server", "");
		PlaceState ps;
		sg_event ev;
		sg_stats s0, s1;
		CHILD_CHECK(n.wait_event(SG_EV_UP, &ev, 30));
		CHILD_CHECK(sg_ep_set_place(n.ep, 0, place_cb, place_done_cb,
					    &ps) == -EINVAL);
		CHILD_CHECK(sg_ep_set_place(n.ep, kPeek, place_cb,
					    place_done_cb, &ps) == 0);
		for (uint32_t mode = 0; mode < 4; mode++) {
			uint32_t len = mode == 3 ? 10 : kLen;
			sg_msg_desc *m = nullptr;

			ps.dst.assign(kLen - kPeek, 0xee);
			ps.calls = ps.dones = 0;
			ps.done_bytes = 0;
			sg_ep_stats(n.ep, &s0);
			CHILD_CHECK(n.wait(
				[&] { return sg_recv(n.ep, &m, 1) == 1; }, 60));
			sg_ep_stats(n.ep, &s1);
			if (m->msg_len != len)
				fprintf(stderr, "mode %u: msg_len %u flags %u "
					"len %u\n", mode, m->msg_len, m->flags,
					m->len);
			CHILD_CHECK(m->msg_len == len);
			uint64_t direct = s1.rx_direct_bytes -
					  s0.rx_direct_bytes;
			uint64_t discard = s1.rx_discard_bytes -
					   s0.rx_discard_bytes;
			char line[160];
			snprintf(line, sizeof(line),
				 "MODE %u flags %u len %u direct %" PRIu64
				 " discard %" PRIu64 " calls %u dones %u", mode,
				 m->flags, m->len, direct, discard, ps.calls,
				 ps.dones);
			n.report(line);
			CHILD_CHECK(ps.done_bytes == direct);
			if (mode == 0 || mode == 3) {
				/* whole, in descriptors (rx_buf 64 KiB: two
				 * for 100000 bytes, the first one full) */
				uint32_t i = 0;

				CHILD_CHECK(m->flags == 0 && direct == 0 &&
					    discard == 0);
				CHILD_CHECK(m->nb_segs == (mode == 0 ? 2u : 1u));
				for (sg_msg_desc *s = m; s != nullptr;
				     s = s->next)
					for (uint32_t k = 0; k < s->len; k++, i++)
						CHILD_CHECK(i < 4 ||
							    s->data[k] ==
								    place_byte(
									    mode,
									    i));
				CHILD_CHECK(i == len);
				CHILD_CHECK(ps.calls == (mode == 0 ? 1u : 0u));
			} else {
				size_t placed = mode == 1 ? kLen - kPeek : 3000;

				CHILD_CHECK(m->len == kPeek && m->nb_segs == 1);
				CHILD_CHECK(m->flags ==
					    (mode == 1 ? SG_MSG_PLACED :
							 SG_MSG_PLACED |
								 SG_MSG_DISCARDED));
				CHILD_CHECK(direct == placed &&
					    discard == kLen - kPeek - placed);
				CHILD_CHECK(ps.dones == ps.calls - (mode == 2));
				for (size_t i = 0; i < ps.dst.size(); i++)
					CHILD_CHECK(ps.dst[i] ==
						    (i < placed ?
							     place_byte(mode,
									i + kPeek) :
							     0xee));
			}
			sg_msg_release(m);
		}
		n.send(ev.assoc, 0, 0, PPID_OK, "ok", 2);
		n.wait_event(SG_EV_SHUTDOWN, nullptr, 10);
		n.down();
	});
	kids.push_back(&srv);
	ASSERT_TRUE(wait_server_socket(20));
	Child cli = spawn([&](Node &n) {
		n.up(false, "client", "");
		sg_assoc_t a = 0;
		CHILD_CHECK(sg_connect(n.ep, ip_of(1), kSctpPort, &a) == 0);
		CHILD_CHECK(n.wait_event(SG_EV_UP, nullptr, 30));
		usleep(200000); /* the server sets its place function */
		for (uint32_t mode = 0; mode < 4; mode++) {
			std::vector<uint8_t> m(mode == 3 ? 10 : kLen);

			for (size_t i = 0; i < m.size(); i++)
				m[i] = place_byte(mode, i);
			memcpy(m.data(), &mode, sizeof(mode));
			n.send(a, 0, 0, PPID_BULK, m.data(),
			       m.size());
		}
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 60));
		sg_disconnect(n.ep, a);
		n.wait_event(SG_EV_SHUTDOWN, nullptr, 10);
		n.down();
	});
	kids.push_back(&cli);
	for (int mode = 0; mode < 4; mode++) {
		std::string l;
		EXPECT_TRUE(expect_line(srv, "MODE " + std::to_string(mode), 90,
					&l));
		printf("%s\n", l.c_str());
	}
	EXPECT_EQ(0, reap(cli, 60));
	EXPECT_EQ(0, reap(srv, 60));
}

/*
 * Receive without usrsctp's copy (rx_ext, usrsctp-patches/0003): every
 * packet stays in the DPDK mbuf it arrived in, usrsctp_recvv copies the
 * messages out of it intact (sizes from a header to several packets and
 * descriptors), and once the endpoints are closed every mbuf is back in
 * its pool.  Without rx_ext usrsctp_conninput copies each packet
 * (rx_copy_input_bytes > 0, rx_ext_pkts 0).
 */
TEST_F(SgTwoNodes, RxKeepsPacketsInTheirMbufsAndGivesThemBack)
{
	constexpr uint32_t kCount = 400;

	g_check_pool = true;
	pair_start("", "", [&](Node &n, sg_assoc_t a) {
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		for (uint32_t i = 0; i < kCount; i++) {
			MsgHdr h;

			CHILD_CHECK(n.recv(b, meta, 60));
			CHILD_CHECK(meta.ppid == PPID_DATA);
			CHILD_CHECK(check_msg(b, h));
			CHILD_CHECK(h.seq == i);
		}
		sg_stats st;
		sg_ep_stats(n.ep, &st);
		sg_stats_print(&st, stderr);
		CHILD_CHECK(st.rx_copy_input_bytes == 0);
		CHILD_CHECK(st.rx_ext_pkts == st.pkts_in && st.pkts_in > 0);
		CHILD_CHECK(st.rx_ext_bytes >= st.bytes_in);
		CHILD_CHECK(st.rx_ext_pool_low == 0);
		CHILD_CHECK(st.rx_copy_recv_bytes == st.bytes_in);
		n.send(a, 0, 0, PPID_OK, "ok", 2);
		n.report("DONE");
	}, [&](Node &n, sg_assoc_t a) {
		std::mt19937 rng(11);
		for (uint32_t i = 0; i < kCount; i++) {
			uint32_t len = i % 4 == 0 ? 24 + rng() % 200 :
				       24 + rng() % 140000;
			auto m = make_msg(0, i, len, false);
			n.send(a, 0, 0, PPID_DATA, m.data(), m.size());
		}
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 120));
		CHILD_CHECK(meta.ppid == PPID_OK);
		sg_stats st;
		sg_ep_stats(n.ep, &st);
		/* the client's SACKs and the reply came in the same way */
		CHILD_CHECK(st.rx_copy_input_bytes == 0);
		CHILD_CHECK(st.rx_ext_pkts == st.pkts_in && st.pkts_in > 0);
	});
	EXPECT_TRUE(expect_line(pair_srv, "DONE", 240));
	pair_end();
}

/*
 * The application closes the port before the endpoint (trust gap 1, session
 * 8): the receiver has left unread messages in usrsctp, whose packets sit
 * in the port's mbufs (rx_ext).  dp_port_close then must not free the pool
 * (usrsctp frees those mbufs when the endpoint closes: they would go back
 * into freed memory) nor the port (sg_ep_close flushes it): the close is
 * deferred, logged, to sg_ep_close, which then closes the port and frees
 * the pool.  Before the fix the pool was gone right after dp_port_close
 * (rte_mempool_lookup found nothing while usrsctp held its mbufs).
 */
TEST_F(SgTwoNodes, PortClosedBeforeItsEndpointWaitsForIt)
{
	constexpr uint32_t kLen = 64u << 10;

	pair_start("rx_descs=16 max_msg=1M", "", [&](Node &n, sg_assoc_t a) {
		(void)a;
		/* nothing is read: usrsctp keeps what the descriptors
		 * cannot take until it stops growing */
		uint32_t held = 0;
		for (double end = now_s() + 60, still = now_s() + 2;
		     now_s() < end && now_s() < still;) {
			n.poll_once();
			if (sg_rx_ext_held_now() != held) {
				held = sg_rx_ext_held_now();
				still = now_s() + 2;
			}
		}
		fprintf(stderr, "usrsctp holds %u received mbufs\n", held);
		CHILD_CHECK(held > 0);
		std::string pool = n.port->pool->name;
		dp_port_close(n.port);	/* the wrong order */
		CHILD_CHECK(sg_rx_ext_held_now() == held);
		/* the pool they belong to is still there */
		CHILD_CHECK(rte_mempool_lookup(pool.c_str()) != nullptr);
		sg_ep_close(n.ep);
		CHILD_CHECK(sg_rx_ext_held_now() == 0);
		/* the deferred close ran: pool freed, EAL still ours */
		CHILD_CHECK(rte_mempool_lookup(pool.c_str()) == nullptr);
		dp_eal_fini();
		n.report("DONE");
		_exit(0);
	}, [&](Node &n, sg_assoc_t a) {
		std::vector<uint8_t> m = make_msg(0, 0, kLen, false);
		iovec iov = {m.data(), m.size()};
		sg_event ev;
		uint32_t sent = 0;

		/* until the receiver's window closes, then its ABORT */
		for (double end = now_s() + 120; now_s() < end;) {
			if (!sg_send_busy(n.ep) &&
			    sg_send(n.ep, a, 0, 0, PPID_DATA, &iov, 1) != -EAGAIN)
				sent++;
			n.poll_once();
			bool lost = false;
			for (auto &e : n.events)
				lost = lost || e.type == SG_EV_LOST;
			if (lost)
				break;
		}
		(void)ev;
		fprintf(stderr, "client: %u messages sent\n", sent);
		CHILD_CHECK(sent > 0);
	});
	EXPECT_TRUE(expect_line(pair_srv, "DONE", 240));
	pair_end();
}

/* rx_ext=0: usrsctp_conninput copies every packet again (the control of
 * the test above; also what UCX_SCTP_DPDK_RX_EXT=n sets). */
TEST_F(SgTwoNodes, RxExtOffCopiesEveryPacket)
{
	constexpr uint32_t kCount = 100;

	g_check_pool = true;
	pair_start("rx_ext=0", "", [&](Node &n, sg_assoc_t a) {
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		for (uint32_t i = 0; i < kCount; i++) {
			MsgHdr h;

			CHILD_CHECK(n.recv(b, meta, 60));
			CHILD_CHECK(check_msg(b, h) && h.seq == i);
		}
		sg_stats st;
		sg_ep_stats(n.ep, &st);
		CHILD_CHECK(st.rx_ext_pkts == 0 && st.rx_ext_bytes == 0);
		CHILD_CHECK(st.rx_copy_input_bytes >= st.bytes_in);
		CHILD_CHECK(st.rx_copies >= st.pkts_in + st.msgs_in);
		n.send(a, 0, 0, PPID_OK, "ok", 2);
		n.report("DONE");
	}, [&](Node &n, sg_assoc_t a) {
		for (uint32_t i = 0; i < kCount; i++) {
			auto m = make_msg(0, i, 100 + i * 300, false);
			n.send(a, 0, 0, PPID_DATA, m.data(), m.size());
		}
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 120));
	});
	EXPECT_TRUE(expect_line(pair_srv, "DONE", 180));
	pair_end();
}

/*
 * usrsctp may keep packets only while it holds fewer than a quarter of
 * the pool (SG_RX_EXT_POOL_DIV): a small pool (mbufs=1023) and a consumer
 * that reads nothing while 60 messages of 64 KiB arrive (16 descriptors,
 * the rest waits in usrsctp's 4 MiB receive buffer, ~1900 packets).
 * Without the bound usrsctp would hold more than the pool can spare (the
 * NIC could not refill its ring); with it the rest is copied, and every
 * message still arrives intact.
 */
TEST_F(SgTwoNodes, RxFallsBackToACopyWhenUsrsctpHoldsAQuarterOfThePool)
{
	constexpr uint32_t kCount = 60, kLen = 64u << 10, kPool = 1023;

	g_dp_extra = "mbufs=" + std::to_string(kPool);
	g_check_pool = true;
	pair_start("rx_descs=16 max_msg=1M", "", [&](Node &n, sg_assoc_t a) {
		sg_stats st;
		uint32_t most = 0;
		CHILD_CHECK(n.wait([&] {
			sg_ep_stats(n.ep, &st);
			most = std::max(most, sg_rx_ext_held_now());
			return st.rx_ext_pool_low > 0;
		}, 90));
		/* let more arrive while nothing is read */
		double t_end = now_s() + 0.5;
		n.wait([&] {
			most = std::max(most, sg_rx_ext_held_now());
			return now_s() > t_end;
		}, 5);
		fprintf(stderr, "usrsctp held at most %u mbufs of %u\n", most,
			kPool);
		CHILD_CHECK(most <= kPool / SG_RX_EXT_POOL_DIV);
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		for (uint32_t i = 0; i < kCount; i++) {
			MsgHdr h;

			CHILD_CHECK(n.recv(b, meta, 60));
			CHILD_CHECK(check_msg(b, h) && h.seq == i);
		}
		sg_ep_stats(n.ep, &st);
		sg_stats_print(&st, stderr);
		CHILD_CHECK(st.rx_ext_pkts > 0 && st.rx_ext_pool_low > 0);
		CHILD_CHECK(st.rx_copy_input_bytes > 0);
		CHILD_CHECK(st.rx_copy_recv_bytes == st.bytes_in);
		n.send(a, 0, 0, PPID_OK, "ok", 2);
		n.report("DONE");
	}, [&](Node &n, sg_assoc_t a) {
		for (uint32_t i = 0; i < kCount; i++) {
			auto m = make_msg(0, i, kLen, false);
			n.send(a, 0, 0, PPID_DATA, m.data(), m.size());
		}
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 180));
	});
	EXPECT_TRUE(expect_line(pair_srv, "DONE", 300));
	pair_end();
}

/* Send @len bytes of @pkt as an SCTP packet (the dataplane fills the
 * CRC32c, so usrsctp sees it). */
void send_raw_sctp(Node &n, const uint8_t *pkt, uint16_t len)
{
	rte_mbuf *m = dp_pkt_alloc(n.port);
	CHILD_CHECK(m != nullptr);
	uint8_t *p = (uint8_t *)rte_pktmbuf_append(m, len);
	CHILD_CHECK(p != nullptr);
	memcpy(p, pkt, len);
	CHILD_CHECK(dp_port_send(n.port, ip_of(1), DP_IPPROTO_SCTP, m,
				 dp_tsc()) == 0);
	dp_port_flush(n.port, dp_tsc());
}

/*
 * Malformed packets taken without a copy are still refused and given
 * back: a DATA chunk with a wrong verification tag, one whose chunk
 * length is impossible, one for a port nobody listens on (usrsctp drops
 * them; shorter than a chunk header the dataplane drops before, as
 * sctp_len).  The association carries on and, after close, every mbuf is
 * in the pool.
 */
TEST_F(SgTwoNodes, RxMalformedPacketsAreRefusedAndGivenBack)
{
	g_check_pool = true;
	pair_start("", "", [&](Node &n, sg_assoc_t a) {
		sg_stats s0, s1;
		dp_stats d0, d1;
		struct sctpstat u0, u1;
		sg_ep_stats(n.ep, &s0);
		dp_port_stats(n.port, &d0);
		usrsctp_get_stat(&u0);
		n.report("READY");
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		MsgHdr h;
		CHILD_CHECK(n.recv(b, meta, 60));
		CHILD_CHECK(check_msg(b, h) && h.seq == 77);
		/* every packet usrsctp kept is back once dropped or read */
		CHILD_CHECK(n.wait([] { return sg_rx_ext_held_now() == 0; },
				   10));
		sg_ep_stats(n.ep, &s1);
		dp_port_stats(n.port, &d1);
		usrsctp_get_stat(&u1);
		fprintf(stderr, "pkts_in +%" PRIu64 ", rx_ext_pkts +%" PRIu64
			", badvtag +%u, noport +%u, sctp_len drops +%" PRIu64
			"\n", s1.pkts_in - s0.pkts_in,
			s1.rx_ext_pkts - s0.rx_ext_pkts,
			u1.sctps_badvtag - u0.sctps_badvtag,
			u1.sctps_noport - u0.sctps_noport,
			d1.drops[DP_DROP_SCTP_LEN] - d0.drops[DP_DROP_SCTP_LEN]);
		CHILD_CHECK(s1.pkts_in - s0.pkts_in >= 4);
		CHILD_CHECK(s1.rx_ext_pkts - s0.rx_ext_pkts ==
			    s1.pkts_in - s0.pkts_in);
		CHILD_CHECK(s1.rx_copy_input_bytes == s0.rx_copy_input_bytes);
		CHILD_CHECK(u1.sctps_badvtag - u0.sctps_badvtag >= 2);
		CHILD_CHECK(u1.sctps_noport - u0.sctps_noport >= 1);
		CHILD_CHECK(d1.drops[DP_DROP_SCTP_LEN] -
				    d0.drops[DP_DROP_SCTP_LEN] == 2);
		CHILD_CHECK(sg_assoc_up(n.ep, a));
		n.send(a, 0, 0, PPID_OK, "ok", 2);
	}, [&](Node &n, sg_assoc_t a) {
		uint8_t pkt[12 + 16 + 8] = {
			0x13, 0x88, 0x13, 0x88,	/* ports 5000 -> 5000 */
			0xde, 0xad, 0xbe, 0xef,	/* not the association's tag */
			0, 0, 0, 0,		/* CRC32c: the dataplane's */
			0, 3, 0, 24,		/* DATA, B+E, 24 bytes */
			0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1,
			1, 2, 3, 4, 5, 6, 7, 8,
		};
		usleep(300000); /* the server takes its counters */
		send_raw_sctp(n, pkt, 12);	/* a common header alone */
		send_raw_sctp(n, pkt, 14);	/* half a chunk header */
		send_raw_sctp(n, pkt, sizeof(pkt)); /* wrong tag */
		pkt[2] = 0x17;			/* to port 6000 */
		pkt[3] = 0x70;
		send_raw_sctp(n, pkt, sizeof(pkt));
		pkt[2] = 0x13;
		pkt[3] = 0x88;
		pkt[13] = 0;			/* no flags, length 3 */
		pkt[15] = 3;
		send_raw_sctp(n, pkt, sizeof(pkt));
		pkt[14] = 0x40;			/* length past the packet */
		send_raw_sctp(n, pkt, sizeof(pkt));
		auto m = make_msg(0, 77, 5000, false);
		n.send(a, 0, 0, PPID_DATA, m.data(), m.size());
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 60));
		CHILD_CHECK(meta.ppid == PPID_OK);
	});
	EXPECT_TRUE(expect_line(pair_srv, "READY", 60));
	pair_end();
}

} /* namespace */
} /* namespace sgtest */
