/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sg_hostile.cc - what a hostile or broken peer can do to the sctp
 * layer's shared tables (sctp/sg_map.c, the peer table and the path
 * probes of sctp/sg_conn.c), and the rules that stop it:
 *   - the map's empty key 0 is never a key, in every build;
 *   - no peer for a source no peer can have;
 *   - strangers (peers made by packets, no association) are bounded by
 *     pending_peers, reclaimed after pending_ms, and never displace a
 *     trusted peer;
 *   - a path probe never creates a peer, never moves an address to
 *     another peer and never changes a known path address.
 * The link tests run in-process on a link without a port (usrsctp up, as
 * the peers register their addresses with it), with a virtual clock.
 */
#include "sg_twonodes.h"

#include <arpa/inet.h>

#include <rte_ethdev.h>

namespace sgtest {
namespace {

uint32_t be(const char *dotted)
{
	return inet_addr(dotted);
}

TEST(SgMap, KeyZeroIsNeverAKeyInAnyBuild)
{
	sg_map m;
	uint64_t v = 42;

	ASSERT_EQ(0, sg_map_init(&m, 16));
	EXPECT_EQ(-EINVAL, sg_map_put(&m, 0, 1));
	EXPECT_EQ(-EINVAL, sg_map_add(&m, 0, 1));
	EXPECT_EQ(0u, m.count);
	EXPECT_FALSE(sg_map_get(&m, 0, &v));
	EXPECT_EQ(42u, v);
	EXPECT_FALSE(sg_map_del(&m, 0));
	/* the table still works: no slot was taken by key 0 */
	for (uint32_t k = 1; k <= 16; k++)
		ASSERT_EQ(0, sg_map_put(&m, k, k));
	EXPECT_EQ(16u, m.count);
	for (uint32_t k = 1; k <= 16; k++)
		ASSERT_TRUE(sg_map_get(&m, k, &v) && v == k) << k;
	sg_map_free(&m);
}

TEST(SgMap, AddNeverReplaces)
{
	sg_map m;
	uint64_t v = 0;

	ASSERT_EQ(0, sg_map_init(&m, 16));
	ASSERT_EQ(0, sg_map_add(&m, 7, 1));
	EXPECT_EQ(-EEXIST, sg_map_add(&m, 7, 2));
	ASSERT_TRUE(sg_map_get(&m, 7, &v));
	EXPECT_EQ(1u, v);
	EXPECT_EQ(0, sg_map_put(&m, 7, 3)); /* put replaces */
	ASSERT_TRUE(sg_map_get(&m, 7, &v));
	EXPECT_EQ(3u, v);
	sg_map_free(&m);
}

/* A link without a port: own addresses given by hand, usrsctp up. */
class SgLinkHostile : public ::testing::Test {
      protected:
	sg_stats st{};
	sg_link lk;

	void SetUp() override
	{
		ASSERT_EQ(0, sg_stack_get());
		memset(&lk, 0, sizeof(lk));
		lk.max_peers = 1u << 20;
		lk.ms_div = 1; /* now_tsc is in ms */
		lk.st = &st;
		lk.nb_ports = 1;
		lk.own_ip_be[0] = be("10.1.0.1");
		lk.max_pending = 64;
		lk.pending_tsc = 1000;
		ASSERT_EQ(0, sg_map_init(&lk.peer_map,
					 lk.max_peers * SG_PATHS_MAX));
	}

	void TearDown() override
	{
		sg_link_release(&lk);
		sg_map_free(&lk.peer_map);
		for (uint32_t b = 0; b < lk.nb_blocks; b++)
			free(lk.blocks[b]);
		free(lk.blocks);
		sg_stack_put();
	}

	/* What sg_link_input does per packet from @ip in the current round. */
	sg_peer *rx(uint32_t ip) { return sg_link_peer_rx(&lk, ip); }
};

TEST_F(SgLinkHostile, SourcesNoPeerCanHaveNeverTouchTheTable)
{
	const char *bad[] = { "0.0.0.0", "0.1.2.3", "127.0.0.1",
			      "224.0.0.1", "239.255.255.250", "240.0.0.1",
			      "255.255.255.255", "10.1.0.1" /* our own */ };

	for (const char *a : bad) {
		EXPECT_TRUE(sg_link_src_invalid(&lk, be(a))) << a;
		EXPECT_EQ(nullptr, rx(be(a))) << a;
		EXPECT_EQ(nullptr, sg_link_peer(&lk, be(a))) << a;
	}
	EXPECT_EQ(0u, lk.nb_peers);
	EXPECT_EQ(0u, lk.peer_map.count);
	EXPECT_FALSE(sg_link_src_invalid(&lk, be("10.1.0.2")));
	EXPECT_NE(nullptr, rx(be("10.1.0.2")));
	EXPECT_EQ(1u, lk.peer_map.count);
}

/*
 * 100000 spoofed sources, 32 a round (one input burst), against a peer
 * this process connected to and one whose association came up: the
 * strangers never hold more than pending_peers slots (memory stays
 * bounded: slots and map keys), the two trusted peers keep theirs, and
 * once pending_ms passed every stranger is gone and its slot reused.
 */
TEST_F(SgLinkHostile, StrangersAreBoundedReclaimedAndNeverDisplaceTrusted)
{
	const uint32_t n = 100000;
	sg_peer *mine, *theirs;

	lk.now_tsc = 1;
	mine = sg_link_peer(&lk, be("10.1.0.2"));
	ASSERT_NE(nullptr, mine);
	theirs = rx(be("10.1.0.3"));
	ASSERT_NE(nullptr, theirs);
	EXPECT_FALSE(theirs->trusted);
	sg_link_peer_trust(&lk, theirs); /* its association came up */
	EXPECT_EQ(0u, lk.nb_pending);
	for (uint32_t i = 0; i < n; i++) {
		if (i % SG_BURST == 0)
			lk.rx_round++;
		ASSERT_NE(nullptr, rx(htonl(0x0b000001u + i))) << i;
		ASSERT_LE(lk.nb_pending, lk.max_pending);
	}
	EXPECT_EQ(lk.max_pending, lk.nb_pending);
	EXPECT_LE(lk.nb_peers, lk.max_pending + 2);
	EXPECT_LE(lk.peer_map.count, lk.max_pending + 2);
	EXPECT_EQ(n - lk.max_pending, st.peers_reclaimed);
	EXPECT_EQ(mine, sg_link_peer_find(&lk, be("10.1.0.2")));
	EXPECT_EQ(theirs, sg_link_peer_find(&lk, be("10.1.0.3")));
	EXPECT_EQ(SG_PEER_MAGIC, mine->magic);
	EXPECT_EQ(SG_PEER_MAGIC, theirs->magic);

	/* every stranger heard in this round: a new one cannot push out
	 * one that may be making an association now */
	lk.rx_round += 2;
	for (uint32_t i = 0; i < lk.max_pending; i++)
		ASSERT_NE(nullptr, rx(htonl(0x0c000001u + i))) << i;
	EXPECT_EQ(nullptr, rx(be("10.9.9.9")));
	EXPECT_EQ(1u, st.rx_pending_full);
	EXPECT_EQ(nullptr, sg_link_peer_find(&lk, be("10.9.9.9")));

	/* pending_ms of silence: all of them go, a batch per poll */
	uint32_t slots = lk.nb_peers;
	unsigned int polls = 0;

	lk.now_tsc += lk.pending_tsc;
	while (sg_link_reclaim(&lk, lk.now_tsc) != 0)
		ASSERT_LT(++polls, 100u);
	EXPECT_EQ(0u, lk.nb_pending);
	EXPECT_EQ(2u, lk.peer_map.count);
	EXPECT_EQ(mine, sg_link_peer_find(&lk, be("10.1.0.2")));
	EXPECT_EQ(theirs, sg_link_peer_find(&lk, be("10.1.0.3")));
	/* a new stranger reuses a slot */
	lk.rx_round++;
	ASSERT_NE(nullptr, rx(be("10.5.0.1")));
	EXPECT_EQ(slots, lk.nb_peers);
	/* a stranger that keeps talking is not reclaimed */
	lk.now_tsc += lk.pending_tsc - 1;
	ASSERT_NE(nullptr, rx(be("10.5.0.1")));
	lk.now_tsc += 2;
	EXPECT_EQ(0u, sg_link_reclaim(&lk, lk.now_tsc));
	EXPECT_NE(nullptr, sg_link_peer_find(&lk, be("10.5.0.1")));
}

/* A probe payload: {magic, sender's primary, path index}. */
std::vector<uint8_t> probe(uint32_t primary_be, uint32_t k)
{
	std::vector<uint8_t> p(SG_PROBE_BYTES, 0);
	uint32_t magic = htonl(SG_PROBE_MAGIC), kk = htonl(k);

	memcpy(p.data(), &magic, 4);
	memcpy(p.data() + 4, &primary_be, 4);
	memcpy(p.data() + 8, &kk, 4);
	return p;
}

/*
 * Path probes carry no proof of their sender.  One with peer B's source
 * naming A must not move B's traffic to A's peer; one naming an unknown
 * address must not create a peer; a known path address is never
 * changed by a probe; and a probe that fills in an unknown path address
 * of a peer with an association still works.
 */
TEST_F(SgLinkHostile, ProbesNeverRewriteAnAddressOrCreateAPeer)
{
	uint32_t a = be("10.1.0.2"), b = be("10.1.0.3");
	uint32_t a_path = be("10.2.0.2"), c = be("10.1.0.4");
	sg_peer *pa, *pb;
	std::vector<uint8_t> pl;

	lk.nb_ports = 2;
	lk.own_ip_be[1] = be("10.2.0.1");
	lk.now_tsc = 1;
	pa = sg_link_peer(&lk, a);
	pb = sg_link_peer(&lk, b);
	ASSERT_TRUE(pa != nullptr && pb != nullptr);

	/* B's address naming A, on path 1 and on path 0 */
	pl = probe(a, 1);
	sg_link_probe_in(&lk, 1, b, pl.data(), (uint32_t)pl.size(), 1);
	pl = probe(a, 0);
	sg_link_probe_in(&lk, 0, b, pl.data(), (uint32_t)pl.size(), 1);
	EXPECT_EQ(pb, sg_link_peer_find(&lk, b));
	EXPECT_EQ(0u, pa->path_ip_be[1]);
	EXPECT_EQ(1, pa->paths.nb);
	EXPECT_EQ(2u, st.rx_probe_refused);

	/* naming an address nobody knows: no peer */
	pl = probe(c, 1);
	sg_link_probe_in(&lk, 1, be("10.2.0.4"), pl.data(),
			 (uint32_t)pl.size(), 1);
	EXPECT_EQ(nullptr, sg_link_peer_find(&lk, c));
	EXPECT_EQ(nullptr, sg_link_peer_find(&lk, be("10.2.0.4")));
	EXPECT_EQ(2u, lk.peer_map.count);
	EXPECT_EQ(3u, st.rx_probe_refused);

	/* A's real path address: learnt */
	pl = probe(a, 1);
	sg_link_probe_in(&lk, 1, a_path, pl.data(), (uint32_t)pl.size(), 1);
	EXPECT_EQ(pa, sg_link_peer_find(&lk, a_path));
	EXPECT_EQ(a_path, pa->path_ip_be[1]);
	EXPECT_EQ(2, pa->paths.nb);
	EXPECT_EQ(3u, st.rx_probe_refused);

	/* another address claiming A's path 1: refused, path unchanged */
	sg_link_probe_in(&lk, 1, be("10.2.0.9"), pl.data(),
			 (uint32_t)pl.size(), 1);
	EXPECT_EQ(a_path, pa->path_ip_be[1]);
	EXPECT_EQ(nullptr, sg_link_peer_find(&lk, be("10.2.0.9")));
	/* A's path address naming B: stays A's */
	pl = probe(b, 1);
	sg_link_probe_in(&lk, 1, a_path, pl.data(), (uint32_t)pl.size(), 1);
	EXPECT_EQ(pa, sg_link_peer_find(&lk, a_path));
	EXPECT_EQ(0u, pb->path_ip_be[1]);
	EXPECT_EQ(5u, st.rx_probe_refused);
	/* the address exchange cannot take it either */
	EXPECT_EQ(-EEXIST, sg_link_peer_paths(&lk, pb, &a_path, 1));
	EXPECT_EQ(pa, sg_link_peer_find(&lk, a_path));

	/* a stranger (no association) cannot announce paths */
	lk.rx_round++;
	sg_peer *s = sg_link_peer_rx(&lk, c);
	ASSERT_NE(nullptr, s);
	pl = probe(c, 1);
	sg_link_probe_in(&lk, 1, be("10.2.0.4"), pl.data(),
			 (uint32_t)pl.size(), 1);
	EXPECT_EQ(0u, s->path_ip_be[1]);
	EXPECT_EQ(nullptr, sg_link_peer_find(&lk, be("10.2.0.4")));
	EXPECT_EQ(6u, st.rx_probe_refused);
}

/* ---------------------------------------------------------------------- */
/* notifications and the association table, two endpoints over memif      */

void *decline_cb(void *, sg_ep *, const sg_msg_desc *, uint32_t, size_t *)
{
	return nullptr;
}

void done_cb(void *, const sg_msg_desc *, uint32_t, size_t) {}

/*
 * The peer aborts with a 600-byte user-initiated-abort cause while this
 * end peeks 16 bytes of each read (a place function set, as the
 * transport's RX_DIRECT does): the COMM_LOST notification, ~640 bytes,
 * arrives in pieces.  It must be reported (SG_EV_LOST) and the
 * association forgotten.  Before, sg_notify_handle dropped the first
 * 16-byte piece as shorter than its sn_length and every later piece as
 * garbage: no event, the association stayed "up".
 */
TEST_F(SgTwoNodes, AbortWithALongCauseListIsReportedWhilePeeking)
{
	constexpr size_t kCause = 600;

	Child srv = spawn([&](Node &n) {
		sg_event ev;
		sg_stats st;

		n.up(true, "server", "");
		CHILD_CHECK(n.wait_event(SG_EV_UP, &ev, 30));
		CHILD_CHECK(sg_ep_set_place(n.ep, 16, decline_cb, done_cb,
					    nullptr) == 0);
		/* tell the client it may abort now */
		n.send(ev.assoc, 0, 0, PPID_DATA, "peek", 4);
		n.report("PEEKING");
		CHILD_CHECK(n.wait_event(SG_EV_LOST, nullptr, 10));
		CHILD_CHECK(!sg_assoc_up(n.ep, ev.assoc));
		sg_ep_stats(n.ep, &st);
		fprintf(stderr, "server: notify_cut %" PRIu64 " notify_bad %"
			PRIu64 "\n", st.notify_cut, st.notify_bad);
		CHILD_CHECK(st.notify_cut >= 1); /* longer than kept */
		CHILD_CHECK(st.notify_bad == 0);
		n.report("LOST");
		n.down();
	});
	adopt(&srv);
	ASSERT_TRUE(wait_server_socket(20));
	Child cli = spawn([&](Node &n) {
		sg_assoc_t a = 0;
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		std::vector<uint8_t> cause(kCause, 'x');
		sctp_sndinfo si{};

		n.up(false, "client", "");
		CHILD_CHECK(sg_connect(n.ep, ip_of(1), kSctpPort, &a) == 0);
		CHILD_CHECK(n.wait_event(SG_EV_UP, nullptr, 30));
		CHILD_CHECK(n.recv(b, meta, 10));
		/* SCTP_ABORT with data: a User-Initiated Abort cause holding
		 * them (RFC 9260 3.3.10.12) */
		si.snd_flags = SCTP_ABORT;
		si.snd_assoc_id = (sctp_assoc_t)a;
		n.ep->lk->now_tsc = dp_tsc();
		CHILD_CHECK(usrsctp_sendv(n.ep->so, cause.data(), cause.size(),
					  nullptr, 0, &si, sizeof(si),
					  SCTP_SENDV_SNDINFO, 0) >= 0);
		n.wait([] { return false; }, 0.5); /* the ABORT leaves */
		n.report("ABORTED");
		n.down();
	});
	adopt(&cli);
	EXPECT_TRUE(expect_line(srv, "PEEKING", 40));
	EXPECT_TRUE(expect_line(cli, "ABORTED", 40));
	EXPECT_TRUE(expect_line(srv, "LOST", 20));
	EXPECT_EQ(0, reap(cli, 20));
	EXPECT_EQ(0, reap(srv, 20));
}

/*
 * max_peers=1 on the server: its association table holds 4.  Five
 * associations from one client (its endpoint and four lanes, SCTP ports
 * 5001..5005): the fifth must not be left up and mute (before, the
 * table-full only logged, SG_EV_UP was reported, and sg_send refused the
 * association forever).  The server reports it as SG_EV_CANT_START with
 * ENOSPC and aborts it; every association it reported up can send; the
 * client sees four up and one lost.
 */
TEST_F(SgTwoNodes, AssociationTableFullFailsTheAssociation)
{
	constexpr int kEps = 5;

	Child srv = spawn([&](Node &n) {
		int ups = 0, refused = 0;
		sg_stats st;

		n.up(true, "server", "max_peers=1");
		CHILD_CHECK(n.wait(
			[&] {
				ups = refused = 0;
				for (auto &e : n.events) {
					ups += e.type == SG_EV_UP;
					refused += e.type == SG_EV_CANT_START &&
						   e.error == ENOSPC;
				}
				return ups + refused == kEps;
			},
			30));
		CHILD_CHECK(ups == kEps - 1 && refused == 1);
		for (auto &e : n.events)
			if (e.type == SG_EV_UP)
				CHILD_CHECK(sg_assoc_up(n.ep, e.assoc));
		sg_ep_stats(n.ep, &st);
		CHILD_CHECK(st.assoc_table_full == 1);
		n.report("REFUSED");
		/* the client's checks ran: it closes */
		n.wait([] { return false; }, 2);
		n.down();
	});
	adopt(&srv);
	ASSERT_TRUE(wait_server_socket(20));
	Child cli = spawn([&](Node &n) {
		sg_ep *eps[kEps] = { nullptr };
		sg_assoc_t as[kEps];
		int up = 0, lost = 0;
		double end;

		n.up(false, "client", "port=5001");
		eps[0] = n.ep;
		for (int i = 1; i < kEps; i++) {
			sg_config lc;
			char c[32];

			snprintf(c, sizeof(c), "port=%d", 5001 + i);
			CHILD_CHECK(sg_config_parse(c, &lc) == 0);
			CHILD_CHECK(sg_ep_open_lane(n.ep, &lc, &eps[i]) == 0);
		}
		for (int i = 0; i < kEps; i++)
			CHILD_CHECK(sg_connect(eps[i], ip_of(1), kSctpPort,
					       &as[i]) == 0);
		end = now_s() + 30;
		while (up + lost < kEps && now_s() < end) {
			for (int i = 0; i < kEps; i++) {
				sg_event ev;

				sg_poll(eps[i], dp_tsc());
				while (sg_next_event(eps[i], &ev) == 0) {
					up += ev.type == SG_EV_UP;
					lost += ev.type == SG_EV_LOST;
				}
			}
			usleep(100);
		}
		fprintf(stderr, "client: %d up, %d lost\n", up, lost);
		/* the fifth came up on this side, then the server's ABORT */
		end = now_s() + 10;
		while (lost < 1 && now_s() < end) {
			for (int i = 0; i < kEps; i++) {
				sg_event ev;

				sg_poll(eps[i], dp_tsc());
				while (sg_next_event(eps[i], &ev) == 0)
					lost += ev.type == SG_EV_LOST;
			}
			usleep(100);
		}
		CHILD_CHECK(lost == 1);
		n.report("DONE");
		for (int i = kEps - 1; i > 0; i--)
			sg_ep_close(eps[i]);
		n.down();
	});
	adopt(&cli);
	EXPECT_TRUE(expect_line(srv, "REFUSED", 40));
	EXPECT_TRUE(expect_line(cli, "DONE", 40));
	EXPECT_EQ(0, reap(cli, 20));
	EXPECT_EQ(0, reap(srv, 20));
}

/* ---------------------------------------------------------------------- */
/* a running exchange under a flood of spoofed and invalid sources          */

/* An SCTP INIT to @dst (SCTP port kSctpPort) from @src, framed for the
 * server's memif port (its MAC is 02:5d + its IPv4 address, dp_port.c),
 * with a valid CRC32c: it passes the dataplane and reaches the link. */
rte_mbuf *spoofed_init(dp_port *port, uint32_t src_be, uint32_t dst_be,
		       uint32_t tag)
{
	const uint16_t len = 12 + 20;
	uint16_t hlen = dp_frame_hdr_len(false);
	rte_ether_addr dmac;
	rte_mbuf *m = rte_pktmbuf_alloc(port->pool);
	uint8_t *f, *p;

	if (m == nullptr)
		return nullptr;
	f = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(hlen + len));
	if (f == nullptr) {
		rte_pktmbuf_free(m);
		return nullptr;
	}
	p = f + hlen;
	memset(p, 0, len);
	p[0] = 0x30; p[1] = 0x39;			/* source port 12345 */
	p[2] = kSctpPort >> 8; p[3] = kSctpPort & 0xff;
	p[12] = 1;					/* INIT */
	p[15] = 20;					/* chunk length */
	memcpy(p + 16, &tag, 4);			/* initiate tag */
	p[21] = 1;					/* a_rwnd 65536 */
	p[25] = 10; p[27] = 10;				/* streams */
	memcpy(p + 28, &tag, 4);			/* initial TSN */
	dp_sctp_crc_fill(DP_CRC_ISAL, p, len);
	dmac.addr_bytes[0] = 0x02;
	dmac.addr_bytes[1] = 0x5d;
	memcpy(dmac.addr_bytes + 2, &dst_be, 4);
	dp_frame_build(f, &port->fctx.mac, &dmac, src_be, dst_be,
		       DP_IPPROTO_SCTP, 0, 0, len, 1, false);
	return m;
}

/* Client side of an echo exchange: message @i (stream i % @streams,
 * 100 + i * @step bytes) sent, echoed back within @sec, intact and in
 * sequence. */
void echo_round(Node &n, sg_assoc_t a, uint32_t i, uint16_t streams,
		uint32_t step, double sec)
{
	std::vector<uint8_t> b;
	sg_msg_desc meta;
	MsgHdr h;
	auto msg = make_msg((uint16_t)(i % streams), i, 100 + i * step, false);

	n.send(a, (uint16_t)(i % streams), 0, PPID_DATA, msg.data(),
	       msg.size());
	CHILD_CHECK(n.recv(b, meta, sec));
	CHILD_CHECK(b == msg);
	CHILD_CHECK(check_msg(b, h) && h.seq == i);
}

/* End an echo exchange: END sent, the server's OK back, @what reported,
 * the association shut down, the node down. */
void end_echo(Node &n, sg_assoc_t a, const char *what)
{
	std::vector<uint8_t> b;
	sg_msg_desc meta;

	n.send(a, 0, 0, PPID_END, "end", 3);
	CHILD_CHECK(n.recv(b, meta, 30));
	CHILD_CHECK(meta.ppid == PPID_OK);
	n.report(what);
	sg_disconnect(n.ep, a);
	n.wait_event(SG_EV_SHUTDOWN, nullptr, 10);
	n.down();
}

/*
 * A two-rank exchange (messages of 100 B to 20 KB echoed, every byte
 * checked) while the client's port also sends the server, per message,
 * 64 INITs from new spoofed sources (off-subnet: the INIT ACKs are
 * refused by the dataplane, nothing resolves) and 5 from sources no peer
 * can have (0.0.0.0, 127.0.0.1, 224.0.0.1, 255.255.255.255 and the
 * server's own address).  The server (pending_peers=128, pending_ms=300)
 * never holds more than 128 strangers, counts every invalid source, ends
 * with exactly one live peer (the client) once pending_ms passed, and
 * the exchange's data arrive intact.  Before, every spoofed source kept
 * a peer for good (2561 peers at the end).
 */
TEST_F(SgTwoNodes, ExchangeSurvivesSpoofedAndInvalidSources)
{
	constexpr uint32_t kMsgs = 40, kSpoof = 64, kBad = 5;

	Child srv = spawn([&](Node &n) {
		sg_event ev;
		sg_stats st;
		uint32_t max_pending = 0, echoed = 0;
		std::vector<uint8_t> b;
		sg_msg_desc meta;

		n.up(true, "server", "pending_peers=128 pending_ms=300");
		CHILD_CHECK(n.wait_event(SG_EV_UP, &ev, 30));
		for (;;) {
			CHILD_CHECK(n.wait(
				[&] {
					max_pending = std::max(
						max_pending,
						n.ep->lk->nb_pending);
					return n.try_recv(b, meta);
				},
				30));
			if (meta.ppid == PPID_END)
				break;
			n.send(ev.assoc, meta.stream, 0, PPID_DATA, b.data(),
			       b.size());
			echoed++;
		}
		/* strangers silent for pending_ms are gone */
		n.wait([] { return false; }, 0.6);
		sg_ep_stats(n.ep, &st);
		fprintf(stderr, "server: echoed %u; peers live %u slots %u "
			"pending %u (at most %u); rx_bad_src %" PRIu64
			" peers_reclaimed %" PRIu64 " rx_pending_full %"
			PRIu64 " rx_no_peer %" PRIu64 "\n", echoed,
			n.ep->lk->nb_peers - n.ep->lk->nb_free,
			n.ep->lk->nb_peers, n.ep->lk->nb_pending, max_pending,
			st.rx_bad_src, st.peers_reclaimed, st.rx_pending_full,
			st.rx_no_peer);
		CHILD_CHECK(echoed == kMsgs);
		CHILD_CHECK(max_pending <= 128);
		CHILD_CHECK(st.rx_bad_src == kMsgs * kBad);
		CHILD_CHECK(st.peers_reclaimed == kMsgs * kSpoof);
		CHILD_CHECK(n.ep->lk->nb_pending == 0);
		CHILD_CHECK(n.ep->lk->nb_peers - n.ep->lk->nb_free == 1);
		CHILD_CHECK(n.ep->lk->nb_peers <= 128 + 1);
		CHILD_CHECK(sg_assoc_up(n.ep, ev.assoc));
		n.send(ev.assoc, 0, 0, PPID_OK, "ok", 2);
		n.report("COUNTED");
		n.wait_event(SG_EV_SHUTDOWN, nullptr, 10);
		n.down();
	});
	adopt(&srv);
	ASSERT_TRUE(wait_server_socket(20));
	Child cli = spawn([&](Node &n) {
		const uint32_t bad[kBad] = { 0, htonl(0x7f000001u),
					     htonl(0xe0000001u), 0xffffffffu,
					     ip_of(1) };
		sg_assoc_t a = 0;
		uint32_t spoofed = 0;

		n.up(false, "client", "");
		CHILD_CHECK(sg_connect(n.ep, ip_of(1), kSctpPort, &a) == 0);
		CHILD_CHECK(n.wait_event(SG_EV_UP, nullptr, 30));
		for (uint32_t i = 0; i < kMsgs; i++) {
			std::vector<rte_mbuf *> f;

			for (uint32_t k = 0; k < kSpoof; k++)
				f.push_back(spoofed_init(
					n.port, htonl(0x0ac80001u + spoofed++),
					ip_of(1), htonl(0x1000 + k)));
			for (uint32_t k = 0; k < kBad; k++)
				f.push_back(spoofed_init(n.port, bad[k],
							 ip_of(1), htonl(7)));
			for (rte_mbuf *m : f)
				CHILD_CHECK(m != nullptr);
			/* in bursts: the memif ring takes what it can */
			size_t sent = 0;
			double end = now_s() + 10;

			while (sent < f.size()) {
				CHILD_CHECK(now_s() < end);
				sent += rte_eth_tx_burst(
					n.port->port_id, 0, f.data() + sent,
					(uint16_t)(f.size() - sent));
				n.poll_once();
			}
			echo_round(n, a, i, 10, 500, 30);
		}
		end_echo(n, a, "INTACT");
	});
	adopt(&cli);
	EXPECT_TRUE(expect_line(cli, "INTACT", 120));
	EXPECT_TRUE(expect_line(srv, "COUNTED", 30));
	EXPECT_EQ(0, reap(cli, 20));
	EXPECT_EQ(0, reap(srv, 20));
}

/* A HEARTBEAT from @src_be (UDP source port @udp_sport, to the server's
 * 9899) carrying verification tag @vtag, CRC32c valid: what anyone who
 * can spoof a peer's address can send, without knowing its tag. */
rte_mbuf *forged_heartbeat_udp(dp_port *port, uint32_t src_be,
			       uint32_t dst_be, uint16_t udp_sport,
			       uint32_t vtag)
{
	const uint16_t len = 12 + 12;
	uint16_t hlen = dp_frame_hdr_len(true);
	rte_ether_addr dmac;
	rte_mbuf *m = rte_pktmbuf_alloc(port->pool);
	uint8_t *f, *p;

	if (m == nullptr)
		return nullptr;
	f = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(hlen + len));
	if (f == nullptr) {
		rte_pktmbuf_free(m);
		return nullptr;
	}
	p = f + hlen;
	memset(p, 0, len);
	p[0] = kSctpPort >> 8; p[1] = kSctpPort & 0xff;
	p[2] = kSctpPort >> 8; p[3] = kSctpPort & 0xff;
	memcpy(p + 4, &vtag, 4);
	p[12] = 4;					/* HEARTBEAT */
	p[15] = 12;					/* chunk length */
	p[17] = 1;					/* heartbeat info */
	p[19] = 8;
	dp_sctp_crc_fill(DP_CRC_ISAL, p, len);
	dmac.addr_bytes[0] = 0x02;
	dmac.addr_bytes[1] = 0x5d;
	memcpy(dmac.addr_bytes + 2, &dst_be, 4);
	dp_frame_build(f, &port->fctx.mac, &dmac, src_be, dst_be,
		       DP_IPPROTO_SCTP, udp_sport, 9899, len, 1, false);
	return m;
}

/*
 * RFC 6951 section 5.1: the remote encapsulation port is learned from
 * what each peer sends, per path.  The client listens on 9900 and sends
 * to the server's 9899 (udp_remote_port, what a NAT that rewrites the
 * source port looks like to the server): the server's replies must go to
 * 9900, the port the client's packets came from, or nothing the server
 * sends ever arrives and the association never comes up.
 */
TEST_F(SgTwoNodes, UdpEncapRepliesGoToThePeersSourcePort)
{
	constexpr uint32_t kMsgs = 20;

	Child srv = spawn([&](Node &n) {
		sg_event ev;
		std::vector<uint8_t> b;
		sg_msg_desc meta;

		n.up(true, "server", "", "udp=1 udp_port=9899");
		CHILD_CHECK(n.wait_event(SG_EV_UP, &ev, 30));
		for (;;) {
			CHILD_CHECK(n.recv(b, meta, 30));
			if (meta.ppid == PPID_END)
				break;
			n.send(ev.assoc, meta.stream, 0, PPID_DATA, b.data(),
			       b.size());
		}
		n.send(ev.assoc, 0, 0, PPID_OK, "ok", 2);
		n.wait_event(SG_EV_SHUTDOWN, nullptr, 10);
		n.down();
	});
	adopt(&srv);
	ASSERT_TRUE(wait_server_socket(20));
	Child cli = spawn([&](Node &n) {
		sg_assoc_t a = 0;

		n.up(false, "client", "",
		     "udp=1 udp_port=9900 udp_remote_port=9899");
		CHILD_CHECK(sg_connect(n.ep, ip_of(1), kSctpPort, &a) == 0);
		CHILD_CHECK(n.wait_event(SG_EV_UP, nullptr, 15));
		n.report("UP");
		for (uint32_t i = 0; i < kMsgs; i++) {
			echo_round(n, a, i, 4, 700, 30);
		}
		end_echo(n, a, "ECHOED");
	});
	adopt(&cli);
	EXPECT_TRUE(expect_line(cli, "UP", 30));
	EXPECT_TRUE(expect_line(cli, "ECHOED", 60));
	EXPECT_EQ(0, reap(cli, 20));
	EXPECT_EQ(0, reap(srv, 20));
}

/*
 * Packets whose verification tag is not the association's change no
 * peer or path state: a forged HEARTBEAT from the client's address with
 * another UDP source port and a wrong tag must not move where the server
 * sends (nor mark a path heard, nor feed a SACK).  usrsctp drops the
 * packet itself; what the sctp layer learns from it before usrsctp sees
 * it is the question.
 */
TEST_F(SgTwoNodes, WrongVtagPacketsChangeNoPeerState)
{
	constexpr uint32_t kMsgs = 20;

	Child srv = spawn([&](Node &n) {
		sg_event ev;
		std::vector<uint8_t> b;
		sg_msg_desc meta;

		uint16_t worst = 9899;

		n.up(true, "server", "", "udp=1");
		CHILD_CHECK(n.wait_event(SG_EV_UP, &ev, 30));
		for (;;) {
			/* between the client's packets, where the forged
			 * one would have left the path's port */
			CHILD_CHECK(n.wait(
				[&] {
					sg_peer *p = sg_link_peer_find(
						n.ep->lk, ip_of(2));
					if (p != nullptr &&
					    p->path_udp_port[0] != 9899)
						worst = p->path_udp_port[0];
					return n.try_recv(b, meta);
				},
				30));
			if (meta.ppid == PPID_END)
				break;
			n.send(ev.assoc, meta.stream, 0, PPID_DATA, b.data(),
			       b.size());
		}
		sg_stats st;

		sg_ep_stats(n.ep, &st);
		fprintf(stderr, "server: path port %u, rx_bad_vtag %" PRIu64
			"\n", worst, st.rx_bad_vtag);
		CHILD_CHECK(worst == 9899);
		CHILD_CHECK(st.rx_bad_vtag == kMsgs);
		n.send(ev.assoc, 0, 0, PPID_OK, "ok", 2);
		n.wait_event(SG_EV_SHUTDOWN, nullptr, 10);
		n.down();
	});
	adopt(&srv);
	ASSERT_TRUE(wait_server_socket(20));
	Child cli = spawn([&](Node &n) {
		sg_assoc_t a = 0;

		n.up(false, "client", "", "udp=1");
		CHILD_CHECK(sg_connect(n.ep, ip_of(1), kSctpPort, &a) == 0);
		CHILD_CHECK(n.wait_event(SG_EV_UP, nullptr, 15));
		for (uint32_t i = 0; i < kMsgs; i++) {
			rte_mbuf *f = forged_heartbeat_udp(
				n.port, ip_of(2), ip_of(1), 7777,
				htonl(0x5eed0000u + i));
			double end = now_s() + 10;

			CHILD_CHECK(f != nullptr);
			while (rte_eth_tx_burst(n.port->port_id, 0, &f, 1) !=
			       1) {
				CHILD_CHECK(now_s() < end);
				n.poll_once();
			}
			/* let the server poll while only the forgery is in */
			n.wait([] { return false; }, 0.05);
			echo_round(n, a, i, 4, 700, 10);
		}
		end_echo(n, a, "ECHOED");
	});
	adopt(&cli);
	EXPECT_TRUE(expect_line(cli, "ECHOED", 120));
	EXPECT_EQ(0, reap(cli, 20));
	EXPECT_EQ(0, reap(srv, 20));
}

/*
 * RFC 6951 section 5.4: the INIT ACK goes to the UDP source port of the
 * INIT.  The client is killed while its association is up (the server,
 * heartbeats off and peer_gone_ms long, never notices) and a new client
 * process comes up on the same address from another UDP port, twice
 * (ports 9900, 9901, 9902): each new INIT (tag 0, a restart for the
 * server's usrsctp) must be answered on its own port, although it
 * carries no tag we gave the peer and so changes no port state.  The
 * last association carries an echoed exchange, every byte checked, and
 * the server then sends to the last client's port.
 */
TEST_F(SgTwoNodes, RestartedPeerOnANewUdpPortGetsItsInitAck)
{
	constexpr uint32_t kMsgs = 20;
	constexpr uint16_t kLastPort = 9902;

	Child srv = spawn([&](Node &n) {
		std::vector<uint8_t> b;
		sg_msg_desc meta;

		n.up(true, "server", "hb_interval_ms=0 peer_gone_ms=600000",
		     "udp=1");
		CHILD_CHECK(n.wait_event(SG_EV_UP, nullptr, 30));
		for (;;) {
			CHILD_CHECK(n.recv(b, meta, 90));
			if (meta.ppid == PPID_END)
				break;
			n.send(meta.assoc, meta.stream, 0, PPID_DATA, b.data(),
			       b.size());
		}
		sg_peer *p = sg_link_peer_find(n.ep->lk, ip_of(2));
		size_t restarts = 0;

		for (auto &e : n.events)
			restarts += e.type == SG_EV_RESTART;
		fprintf(stderr, "server: path port %u, restarts %zu\n",
			p ? p->path_udp_port[0] : 0, restarts);
		CHILD_CHECK(p != nullptr && p->path_udp_port[0] == kLastPort);
		n.send(meta.assoc, 0, 0, PPID_OK, "ok", 2);
		n.wait_event(SG_EV_SHUTDOWN, nullptr, 10);
		n.down();
	});
	adopt(&srv);
	ASSERT_TRUE(wait_server_socket(20));
	auto client = [&](Node &n, const char *name, uint16_t udp_port) {
		char dp[96];
		sg_assoc_t a = 0;

		snprintf(dp, sizeof(dp), "udp=1 udp_port=%u udp_remote_port=9899",
			 udp_port);
		n.up(false, name, "hb_interval_ms=0", dp);
		CHILD_CHECK(sg_connect(n.ep, ip_of(1), kSctpPort, &a) == 0);
		CHILD_CHECK(n.wait_event(SG_EV_UP, nullptr, 15));
		n.report("UP");
		for (uint32_t i = 0; i < kMsgs; i++)
			echo_round(n, a, i, 4, 700, 30);
		if (udp_port == kLastPort) {
			end_echo(n, a, "ECHOED");
			return;
		}
		n.report("ECHOED");
		n.wait([] { return false; }, 60); /* until killed */
		_exit(4);
	};
	const char *names[] = {"client", "client2", "client3"};
	Child kids3[3];

	for (uint16_t c = 0; c < 3; c++) {
		uint16_t port = (uint16_t)(kLastPort - 2 + c);

		kids3[c] = spawn([&](Node &n) { client(n, names[c], port); });
		adopt(&kids3[c]);
		ASSERT_TRUE(expect_line(kids3[c], "UP", 30)) << names[c];
		ASSERT_TRUE(expect_line(kids3[c], "ECHOED", 60)) << names[c];
		if (port == kLastPort)
			break;
		kill(kids3[c].pid, SIGKILL);
		reap(kids3[c], 5);
		EXPECT_EQ(0, dp_eal_runtime_dir_remove(
				     ("sdp-" + g_job + "-" + names[c]).c_str()));
	}
	EXPECT_EQ(0, reap(kids3[2], 20));
	EXPECT_EQ(0, reap(srv, 20));
}

} // namespace
} // namespace sgtest
