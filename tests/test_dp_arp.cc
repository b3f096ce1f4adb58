/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_dp_arp.cc - the neighbour cache (dp_arp.c): resolution, retries,
 * expiry, static entries, eviction (unconfirmed first, O(1) amortised),
 * and on a port: ARP under TX back-pressure, learning only from trusted
 * frames and possible senders, the per-destination hold bound.
 */
#include <chrono>
#include <deque>

#include "dp_fixture.h"

namespace dptest {
namespace {

TEST(DpArp, ResolveRetryFailAndExpire)
{
	dp_arp_table t;
	rte_ether_addr mac;
	uint32_t a = ipv4("10.0.0.5");
	std::vector<std::pair<uint32_t, int>> ev;
	auto cb = [](void *arg, uint32_t ip_be, dp_arp_event e) {
		static_cast<std::vector<std::pair<uint32_t, int>> *>(arg)
			->emplace_back(ip_be, e);
	};

	dp_arp_table_init(&t, /*ttl*/ 1000, /*retry*/ 100, /*tries*/ 3);
	EXPECT_EQ(-ENOENT, dp_arp_lookup(&t, a, 0, &mac));
	EXPECT_EQ(-EAGAIN, dp_arp_lookup(&t, a, 50, &mac));
	EXPECT_EQ(0u, dp_arp_tick(&t, 99, cb, &ev));
	EXPECT_EQ(1u, dp_arp_tick(&t, 100, cb, &ev)); /* 2nd request */
	EXPECT_EQ(1u, dp_arp_tick(&t, 200, cb, &ev)); /* 3rd request */
	EXPECT_EQ(1u, dp_arp_tick(&t, 300, cb, &ev)); /* give up */
	ASSERT_EQ(3u, ev.size());
	EXPECT_EQ(DP_ARP_EV_RETRY, ev[0].second);
	EXPECT_EQ(DP_ARP_EV_RETRY, ev[1].second);
	EXPECT_EQ(DP_ARP_EV_FAILED, ev[2].second);
	/* a later lookup starts over */
	EXPECT_EQ(-ENOENT, dp_arp_lookup(&t, a, 400, &mac));
	/* the reply arrives */
	EXPECT_TRUE(dp_arp_learn(&t, a, &kPeerMac, 450));
	ASSERT_EQ(0, dp_arp_lookup(&t, a, 451, &mac));
	EXPECT_TRUE(rte_is_same_ether_addr(&mac, &kPeerMac));
	/* valid until ttl, then re-resolved */
	EXPECT_EQ(0, dp_arp_lookup(&t, a, 450 + 999, &mac));
	EXPECT_EQ(-ENOENT, dp_arp_lookup(&t, a, 450 + 1000, &mac));
}

/*
 * dp_arp_tick skips its scan of every slot while no request can be
 * waiting (the scan was ~3% of a bulk sender's instructions in
 * callgrind): a request made after an empty scan, or from inside a
 * tick's own callback, is still retried and given up on time.
 */
TEST(DpArp, TickSkipsItsScanOnlyWhileNoRequestWaits)
{
	static dp_arp_table t;
	static rte_ether_addr mac;
	static uint32_t a = ipv4("10.0.0.5"), b = ipv4("10.0.0.6");
	std::vector<std::pair<uint32_t, int>> ev;
	auto cb = [](void *arg, uint32_t ip_be, dp_arp_event e) {
		static_cast<std::vector<std::pair<uint32_t, int>> *>(arg)
			->emplace_back(ip_be, e);
		/* the give-up of a: b is asked for from the callback */
		if (e == DP_ARP_EV_FAILED && ip_be == a)
			dp_arp_lookup(&t, b, 300, &mac);
	};

	dp_arp_table_init(&t, /*ttl*/ 1000, /*retry*/ 100, /*tries*/ 2);
	EXPECT_EQ(0u, dp_arp_tick(&t, 10, cb, &ev)); /* nothing asked */
	EXPECT_EQ(-ENOENT, dp_arp_lookup(&t, a, 100, &mac));
	EXPECT_EQ(1u, dp_arp_tick(&t, 200, cb, &ev)); /* 2nd request */
	EXPECT_EQ(1u, dp_arp_tick(&t, 300, cb, &ev)); /* a fails, b asked */
	EXPECT_EQ(0u, dp_arp_tick(&t, 399, cb, &ev));
	EXPECT_EQ(1u, dp_arp_tick(&t, 400, cb, &ev)); /* b's 2nd request */
	EXPECT_EQ(1u, dp_arp_tick(&t, 500, cb, &ev)); /* b fails */
	EXPECT_EQ(0u, dp_arp_tick(&t, 600, cb, &ev));
	ASSERT_EQ(4u, ev.size());
	EXPECT_EQ(std::make_pair(a, (int)DP_ARP_EV_RETRY), ev[0]);
	EXPECT_EQ(std::make_pair(a, (int)DP_ARP_EV_FAILED), ev[1]);
	EXPECT_EQ(std::make_pair(b, (int)DP_ARP_EV_RETRY), ev[2]);
	EXPECT_EQ(std::make_pair(b, (int)DP_ARP_EV_FAILED), ev[3]);
	/* a learnt entry leaves nothing to scan for; a new request does */
	dp_arp_learn(&t, a, &kPeerMac, 700);
	EXPECT_EQ(0u, dp_arp_tick(&t, 800, cb, &ev));
	EXPECT_EQ(-ENOENT, dp_arp_lookup(&t, b, 900, &mac));
	EXPECT_EQ(1u, dp_arp_tick(&t, 1000, cb, &ev));
}

TEST(DpArp, StaticEntriesNeverExpireOrChange)
{
	dp_arp_table t;
	rte_ether_addr mac;
	uint32_t a = ipv4("10.0.0.9");

	dp_arp_table_init(&t, 10, 10, 1);
	ASSERT_EQ(0, dp_arp_add_static(&t, a, &kPeerMac));
	EXPECT_FALSE(dp_arp_learn(&t, a, &kOurMac, 5));
	ASSERT_EQ(0, dp_arp_lookup(&t, a, UINT64_MAX / 2, &mac));
	EXPECT_TRUE(rte_is_same_ether_addr(&mac, &kPeerMac));
}

/* Resolving entries are evictable (oldest first; a spoofed INIT per
 * invented source address would otherwise fill the table with them for
 * good); only configured entries fill it for good: then a new neighbour is
 * refused. */
TEST(DpArp, TableOfResolvingEntriesEvictsTheOldest)
{
	static dp_arp_table t;
	rte_ether_addr mac;

	dp_arp_table_init(&t, 10, 10, 1);
	for (uint32_t i = 0; i < DP_ARP_MAX_ENTRIES; i++)
		ASSERT_EQ(-ENOENT, dp_arp_lookup(&t, htonl(0x0a000000 + i + 1),
						 0, &mac));
	EXPECT_EQ(-ENOENT, dp_arp_lookup(&t, htonl(0x0b000001), 0, &mac));
	EXPECT_EQ(1u, t.evictions);
	EXPECT_EQ(nullptr, dp_arp_find(&t, htonl(0x0a000001)));
	/* existing entries are still found with a full table */
	EXPECT_EQ(-EAGAIN, dp_arp_lookup(&t, htonl(0x0a000002), 0, &mac));
	dp_arp_table_fini(&t);

	static dp_arp_table st;
	dp_arp_table_init(&st, 10, 10, 1);
	ASSERT_EQ(0, dp_arp_table_set_max(&st, 4));
	for (uint32_t i = 0; i < 4; i++)
		ASSERT_EQ(0, dp_arp_add_static(&st, htonl(0x0a000000 + i + 1),
					       &kPeerMac));
	EXPECT_EQ(-ENOSPC, dp_arp_lookup(&st, htonl(0x0b000001), 0, &mac));
	EXPECT_FALSE(dp_arp_learn(&st, htonl(0x0b000002), &kPeerMac, 0));
	dp_arp_table_fini(&st);
}

static rte_ether_addr mac_of(uint32_t i)
{
	rte_ether_addr m = { { 0x02, 0x10, (uint8_t)(i >> 24),
			       (uint8_t)(i >> 16), (uint8_t)(i >> 8),
			       (uint8_t)i } };
	return m;
}

/* A job of 4096 ranks on one /16: every peer resolved at once. */
TEST(DpArp, FourThousandPeersOnOneSubnet)
{
	static dp_arp_table t;
	rte_ether_addr mac;
	const uint32_t n = 4096;

	dp_arp_table_init(&t, 1000000, 10, 3);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t ip = htonl(0x0a010000 + i + 2);

		ASSERT_EQ(-ENOENT, dp_arp_lookup(&t, ip, i, &mac)) << i;
		ASSERT_TRUE(dp_arp_learn(&t, ip, &(mac = mac_of(i)), i)) << i;
	}
	for (uint32_t i = 0; i < n; i++) {
		ASSERT_EQ(0, dp_arp_lookup(&t, htonl(0x0a010000 + i + 2), n,
					   &mac)) << i;
		rte_ether_addr want = mac_of(i);
		ASSERT_TRUE(rte_is_same_ether_addr(&want, &mac)) << i;
	}
	EXPECT_EQ(0u, t.evictions);
	/* and as many static entries as the configuration allows */
	static dp_arp_table st;
	dp_arp_table_init(&st, 10, 10, 1);
	for (uint32_t i = 0; i < DP_MAX_STATIC_ARP; i++)
		ASSERT_EQ(0, dp_arp_add_static(&st, htonl(0x0a020000 + i),
					       &(mac = mac_of(i)))) << i;
	EXPECT_EQ(0, dp_arp_lookup(&st, htonl(0x0a020000 + 4000), 5, &mac));
}

/* A full table evicts the least recently used resolved neighbour instead
 * of refusing the next one; used entries and static ones stay. */
TEST(DpArp, FullTableEvictsLeastRecentlyUsed)
{
	static dp_arp_table t;
	rte_ether_addr mac;
	const uint32_t n = DP_ARP_MAX_ENTRIES;
	uint64_t now = 10;

	dp_arp_table_init(&t, 1000000000, 10, 3);
	ASSERT_EQ(0, dp_arp_add_static(&t, htonl(0x0a0000fe),
				       &(mac = mac_of(999999))));
	for (uint32_t i = 0; i + 1 < n; i++)
		ASSERT_TRUE(dp_arp_learn(&t, htonl(0x0a100000 + i),
					 &(mac = mac_of(i)), now++));
	ASSERT_EQ(n, t.nb_used);
	/* peer 0 is used again: peer 1 is now the least recently used */
	ASSERT_EQ(0, dp_arp_lookup(&t, htonl(0x0a100000), now++, &mac));
	EXPECT_EQ(-ENOENT, dp_arp_lookup(&t, htonl(0x0a200000), now++, &mac));
	EXPECT_EQ(1u, t.evictions);
	EXPECT_EQ(nullptr, dp_arp_find(&t, htonl(0x0a100001)));
	EXPECT_NE(nullptr, dp_arp_find(&t, htonl(0x0a100000)));
	EXPECT_NE(nullptr, dp_arp_find(&t, htonl(0x0a0000fe)));
	EXPECT_EQ(n, t.nb_used);
}

/* Random learns and lookups over three times the capacity against a model
 * of the documented eviction order (oldest first, an entry used since it
 * was queued goes to the tail once): whatever the model holds, the table
 * finds with the right MAC (eviction keeps every probe run intact). */
TEST(DpArp, RandomChurnMatchesTheEvictionModel)
{
	static dp_arp_table t;
	std::mt19937 rng(11);
	const uint32_t universe = DP_ARP_MAX_ENTRIES * 3;
	std::vector<uint64_t> used(universe, 0); /* 0 = absent in model */
	std::vector<uint64_t> seq(universe, 0);
	struct rec {
		uint32_t i;
		uint64_t seq, tsc;
	};
	std::deque<rec> fifo;
	uint64_t now = 1, next_seq = 1;
	uint32_t present = 0;
	rte_ether_addr mac;

	dp_arp_table_init(&t, UINT64_MAX / 4, 10, 3);
	for (int step = 0; step < 60000; step++, now++) {
		uint32_t i = rng() % universe, ip = htonl(0x0a400000 + i);

		if (used[i] != 0) {
			ASSERT_EQ(0, dp_arp_lookup(&t, ip, now, &mac)) << step;
			rte_ether_addr want = mac_of(i);
			ASSERT_TRUE(rte_is_same_ether_addr(&want, &mac));
			used[i] = now;
			continue;
		}
		while (present == DP_ARP_MAX_ENTRIES) {
			rec r = fifo.front();

			fifo.pop_front();
			if (used[r.i] == 0 || seq[r.i] != r.seq)
				continue;
			if (used[r.i] != r.tsc) {
				fifo.push_back({ r.i, r.seq, used[r.i] });
				continue;
			}
			used[r.i] = 0;
			present--;
		}
		ASSERT_TRUE(dp_arp_learn(&t, ip, &(mac = mac_of(i)), now));
		used[i] = now;
		seq[i] = next_seq++;
		fifo.push_back({ i, seq[i], now });
		present++;
		ASSERT_EQ(present, t.nb_used);
	}
	for (uint32_t i = 0; i < universe; i++)
		ASSERT_EQ(used[i] != 0,
			  dp_arp_find(&t, htonl(0x0a400000 + i)) != nullptr)
			<< i;
	EXPECT_GT(t.evictions, 0u);
	EXPECT_EQ(0u, t.evictions_confirmed);
	dp_arp_table_fini(&t);
}

/* Neighbours that answered our requests (confirmed) survive a flood of
 * unsolicited senders at a full table: the flood is not learned and
 * counted, then, with unconfirmed entries present, it displaces only
 * those. */
TEST(DpArp, UnsolicitedFloodKeepsConfirmedNeighbours)
{
	static dp_arp_table t;
	rte_ether_addr mac;
	const uint32_t n = DP_ARP_MAX_ENTRIES;
	uint64_t now = 10;

	ASSERT_EQ(0, dp_arp_table_init(&t, 1000000000, 10, 3));
	for (uint32_t i = 0; i < n; i++) {
		uint32_t ip = htonl(0x0a100000 + i);

		ASSERT_EQ(-ENOENT, dp_arp_lookup(&t, ip, now++, &mac));
		ASSERT_TRUE(dp_arp_learn(&t, ip, &(mac = mac_of(i)), now++));
	}
	ASSERT_EQ(n, t.nb_used);
	/* a full table of confirmed neighbours: nothing is learned */
	for (uint32_t i = 0; i < 1000; i++)
		EXPECT_FALSE(dp_arp_learn(&t, htonl(0x0a200000 + i),
					  &(mac = mac_of(i)), now++));
	EXPECT_EQ(1000u, t.learn_refused);
	EXPECT_EQ(0u, t.evictions);
	/* our own traffic to a new neighbour still gets room (the oldest
	 * confirmed one goes), and that entry is unconfirmed until it
	 * answers: the next flood displaces only it */
	EXPECT_EQ(-ENOENT, dp_arp_lookup(&t, htonl(0x0a300000), now++, &mac));
	EXPECT_EQ(1u, t.evictions_confirmed);
	EXPECT_TRUE(dp_arp_learn(&t, htonl(0x0a200000), &(mac = mac_of(7)),
				 now++));
	EXPECT_EQ(nullptr, dp_arp_find(&t, htonl(0x0a300000)));
	for (uint32_t i = 1; i < 1000; i++)
		EXPECT_TRUE(dp_arp_learn(&t, htonl(0x0a200000 + i),
					 &(mac = mac_of(i)), now++)) << i;
	EXPECT_EQ(1u, t.evictions_confirmed);
	for (uint32_t i = 1; i < n; i++)
		ASSERT_NE(nullptr, dp_arp_find(&t, htonl(0x0a100000 + i))) << i;
	dp_arp_table_fini(&t);
}

/* Eviction does not scan the slots: 20000 evictions from a table of 2^18
 * neighbours take well under a second (a scan per eviction visits 2^19
 * slots each: ten billion visits). */
TEST(DpArp, EvictionIsNotAScan)
{
	static dp_arp_table t;
	rte_ether_addr mac;
	const uint32_t n = 1u << 18;
	uint64_t now = 10;

	ASSERT_EQ(0, dp_arp_table_init(&t, 1000000000, 10, 3));
	ASSERT_EQ(0, dp_arp_table_set_max(&t, n));
	for (uint32_t i = 0; i < n; i++)
		ASSERT_TRUE(dp_arp_learn(&t, htonl(0x0a000000 + i),
					 &(mac = mac_of(i)), now++));
	auto t0 = std::chrono::steady_clock::now();
	for (uint32_t i = 0; i < 20000; i++)
		ASSERT_TRUE(dp_arp_learn(&t, htonl(0x0b000000 + i),
					 &(mac = mac_of(i)), now++));
	double s = std::chrono::duration<double>(
			   std::chrono::steady_clock::now() - t0).count();
	EXPECT_EQ(20000u, t.evictions);
	EXPECT_LT(s, 1.5) << "20000 evictions took " << s << " s";
	dp_arp_table_fini(&t);
}

TEST(DpArp, ParseRejectsMalformed)
{
	uint8_t f[DP_ARP_FRAME_LEN];
	rte_ether_addr sha;
	uint32_t sip, tip;
	uint16_t op;

	dp_arp_build(f, 2, &kPeerMac, ipv4("10.0.0.2"), &kOurMac,
		     ipv4("10.0.0.1"));
	ASSERT_EQ(0, dp_arp_parse(f, sizeof(f), &op, &sha, &sip, &tip));
	EXPECT_EQ(2, op);
	EXPECT_EQ(ipv4("10.0.0.2"), sip);
	EXPECT_EQ(-EINVAL, dp_arp_parse(f, sizeof(f) - 1, &op, &sha, &sip,
					&tip));
	f[21] = 9; /* opcode 9 */
	EXPECT_EQ(-EINVAL, dp_arp_parse(f, sizeof(f), &op, &sha, &sip, &tip));
	f[21] = 2;
	f[22] = 0x01; /* multicast sender MAC */
	EXPECT_EQ(-EINVAL, dp_arp_parse(f, sizeof(f), &op, &sha, &sip, &tip));
}

/* A frame whose Ethernet source was corrupted must not redirect our
 * traffic: neighbours are learned from ARP only. */
TEST_F(DpPortTest, IpTrafficDoesNotTeachNeighbourMacs)
{
	const rte_ether_addr bogus = { { 0x02, 0xba, 0xd0, 0, 0, 0x07 } };
	uint32_t sender = ipv4("10.0.0.7");
	rte_mbuf *m = dp_pkt_alloc(port), *got = nullptr;
	uint16_t hlen = dp_frame_hdr_len(false);
	auto *f = (uint8_t *)rte_pktmbuf_append(m, hlen + 32);

	memset(f + hlen, 0x11, 32);
	dp_frame_build(f, &bogus, &port->fctx.mac, sender, cfg.ip_be,
		       DP_IPPROTO_EXP, 0, 0, 32, 1, false);
	ASSERT_EQ(1, rte_eth_tx_burst(port->port_id, 0, &m, 1));
	ASSERT_EQ(1u, poll_recv(&got, 1));
	dp_pkt_free(got);
	EXPECT_EQ(nullptr, dp_arp_find(&port->arp, sender));
}

static rte_mbuf *arp_mbuf(dp_port *port, uint16_t op,
			  const rte_ether_addr *eth_src,
			  const rte_ether_addr *sha, uint32_t sip,
			  uint32_t tip)
{
	rte_mbuf *m = rte_pktmbuf_alloc(port->pool);
	auto *f = (uint8_t *)rte_pktmbuf_append(m, DP_ARP_FRAME_LEN);

	dp_arp_build(f, op, sha, sip, &port->fctx.mac, tip);
	reinterpret_cast<rte_ether_hdr *>(f)->src_addr = *eth_src;
	reinterpret_cast<rte_ether_hdr *>(f)->dst_addr = port->fctx.mac;
	return m;
}

/* ARP requests, replies and retries while queue 0's TX buffer is held
 * full by a NIC that takes nothing: each ARP frame is dropped and counted,
 * never written past the buffer (into held[], the field behind it, whose
 * contents are checked; nb_held stays 0). */
TEST_F(DpPortTest, ArpUnderTxBackPressureIsDroppedNotOverflowed)
{
	dp_txq *txq = &port->txq[0];
	uint32_t asker = ipv4("10.0.0.60"), unresolved = ipv4("10.0.0.61");
	rte_ether_addr asker_mac = { { 0x02, 0, 0, 0, 0, 0x60 } };
	dp_stats before, after;
	uint64_t now = dp_tsc();
	unsigned int in_nic;

	/* our own address resolved (static: independent of test order) */
	dp_arp_add_static(&port->arp, cfg.ip_be, &port->fctx.mac);
	in_nic = fill_nic(port);
	ASSERT_GT(in_nic, 0u);
	for (int i = 0; i < DP_BURST; i++) {
		rte_mbuf *m = dp_pkt_alloc(port);
		rte_pktmbuf_append(m, 32);
		ASSERT_EQ(0, dp_port_send(port, cfg.ip_be, DP_IPPROTO_EXP, m,
					  now));
	}
	ASSERT_EQ(DP_BURST, txq->nb_tx);
	ASSERT_EQ(0, txq->nb_held);
	for (rte_mbuf *&h : txq->held)
		h = nullptr;
	/* a packet has no room either: dropped, counted, and the sender
	 * told (SCTP counts it as tx_nobufs) */
	rte_mbuf *extra = dp_pkt_alloc(port);
	rte_pktmbuf_append(extra, 32);
	EXPECT_EQ(-ENOBUFS, dp_port_send(port, cfg.ip_be, DP_IPPROTO_EXP,
					 extra, now));
	dp_port_stats(port, &before);
	/* a request for us: the reply has no room */
	dp_arp_port_input(port, arp_mbuf(port, 1, &asker_mac, &asker_mac,
					 asker, cfg.ip_be), now);
	/* a packet to an unknown neighbour: the request has no room */
	rte_mbuf *m = dp_pkt_alloc(port);
	rte_pktmbuf_append(m, 32);
	EXPECT_EQ(0, dp_port_send(port, unresolved, DP_IPPROTO_EXP, m, now));
	/* the retry has no room either */
	dp_arp_port_tick(port, now + port->arp.retry_tsc + 1);
	dp_port_stats(port, &after);
	/* the field behind the buffer is intact (restore it first, so a
	 * failure here does not take the rest of the suite down with it) */
	bool held_ok = true;
	for (rte_mbuf *&h : txq->held) {
		held_ok = held_ok && h == nullptr;
		h = nullptr;
	}
	txq->nb_tx = RTE_MIN(txq->nb_tx, (uint16_t)DP_BURST);
	EXPECT_TRUE(held_ok) << "the TX buffer overflowed into held[]";
	EXPECT_EQ(DP_BURST, txq->nb_tx);
	EXPECT_EQ(before.drops[DP_DROP_TX_FULL] + 3,
		  after.drops[DP_DROP_TX_FULL]);
	EXPECT_EQ(before.arp_tx, after.arp_tx);
	/* release: the NIC takes the buffer again, the held packet fails */
	EXPECT_EQ(in_nic, drain_nic(port));
	dp_port_flush(port, dp_tsc());
	EXPECT_EQ(0, txq->nb_tx);
	for (uint32_t i = 0; i <= cfg.arp_retries; i++)
		dp_arp_port_tick(port, now + (i + 2) * port->arp.retry_tsc + 1);
	EXPECT_EQ(0u, port->nb_hold);
	drain_nic(port);
}

/* Learning from ARP: a frame whose sender MAC is its Ethernet source, or a
 * reply to a request of ours; anything else is neither learned nor
 * answered, and counted. */
TEST_F(DpPortTest, ArpLearnsOnlyFromTrustedFrames)
{
	const rte_ether_addr real = { { 0x02, 0, 0, 0, 0x70, 0x01 } };
	const rte_ether_addr other = { { 0x02, 0, 0, 0, 0x70, 0x99 } };
	uint32_t a = ipv4("10.0.0.71"), b = ipv4("10.0.0.72"),
		 c = ipv4("10.0.0.73"), d = ipv4("10.0.0.74");
	uint64_t now = dp_tsc();
	dp_stats before, after;

	dp_port_stats(port, &before);
	/* a request for us whose sender MAC is not its Ethernet source */
	dp_arp_port_input(port, arp_mbuf(port, 1, &real, &other, a, cfg.ip_be),
			  now);
	EXPECT_EQ(nullptr, dp_arp_find(&port->arp, a));
	/* an unsolicited reply, same mismatch */
	dp_arp_port_input(port, arp_mbuf(port, 2, &real, &other, b, cfg.ip_be),
			  now);
	EXPECT_EQ(nullptr, dp_arp_find(&port->arp, b));
	dp_port_stats(port, &after);
	EXPECT_EQ(before.drops[DP_DROP_ARP_UNTRUSTED] + 2,
		  after.drops[DP_DROP_ARP_UNTRUSTED]);
	EXPECT_EQ(before.arp_tx, after.arp_tx) << "answered an untrusted request";
	/* a consistent request is learned and answered */
	dp_arp_port_input(port, arp_mbuf(port, 1, &real, &real, c, cfg.ip_be),
			  now);
	ASSERT_NE(nullptr, dp_arp_find(&port->arp, c));
	EXPECT_TRUE(rte_is_same_ether_addr(&real,
					   &dp_arp_find(&port->arp, c)->mac));
	/* a reply to our own request is learned even from a proxy */
	rte_ether_addr mac;
	ASSERT_EQ(-ENOENT, dp_arp_lookup(&port->arp, d, now, &mac));
	dp_arp_port_input(port, arp_mbuf(port, 2, &real, &other, d, cfg.ip_be),
			  now);
	ASSERT_EQ(0, dp_arp_lookup(&port->arp, d, now + 1, &mac));
	EXPECT_TRUE(rte_is_same_ether_addr(&other, &mac));
	dp_port_flush(port, dp_tsc());
	drain_nic(port);
}

/* A request for us from a sender that cannot be a neighbour (0.0.0.0,
 * our own address, outside our subnet), even with its sender MAC equal to
 * its Ethernet source: neither learned nor answered, and counted. */
TEST_F(DpPortTest, ArpRefusesImpossibleSenders)
{
	const rte_ether_addr mac = { { 0x02, 0, 0, 0, 0x71, 0x01 } };
	const uint32_t senders[] = { 0, cfg.ip_be, ipv4("10.9.0.5") };
	uint64_t now = dp_tsc();
	dp_stats before, after;

	dp_port_stats(port, &before);
	for (uint32_t sip : senders) {
		dp_arp_port_input(port, arp_mbuf(port, 1, &mac, &mac, sip,
						 cfg.ip_be), now);
		const dp_arp_entry *e = dp_arp_find(&port->arp, sip);

		/* ours may be there as a static entry (other tests) */
		EXPECT_TRUE(e == nullptr ||
			    (sip == cfg.ip_be && e->state == DP_ARP_STATIC))
			<< sip;
	}
	dp_port_stats(port, &after);
	EXPECT_EQ(before.drops[DP_DROP_ARP_SENDER] + 3,
		  after.drops[DP_DROP_ARP_SENDER]);
	EXPECT_EQ(before.arp_tx, after.arp_tx) << "answered such a sender";
	dp_port_flush(port, dp_tsc());
	drain_nic(port);
}

/* One unresolved destination holds at most DP_ARP_HOLD_DEST frames: the
 * rest are dropped and counted, and another destination still finds room
 * in the hold queue. */
TEST_F(DpPortTest, HoldQueueIsBoundedPerDestination)
{
	uint32_t a = ipv4("10.0.0.81"), b = ipv4("10.0.0.82");
	uint64_t now = dp_tsc();
	dp_stats before, after;
	uint32_t held0 = port->nb_hold;

	dp_port_stats(port, &before);
	for (unsigned int i = 0; i < DP_ARP_HOLD; i++) {
		rte_mbuf *m = dp_pkt_alloc(port);
		rte_pktmbuf_append(m, 32);
		dp_port_send(port, a, DP_IPPROTO_EXP, m, now);
	}
	EXPECT_EQ(held0 + DP_ARP_HOLD_DEST, port->nb_hold);
	rte_mbuf *m = dp_pkt_alloc(port);
	rte_pktmbuf_append(m, 32);
	EXPECT_EQ(0, dp_port_send(port, b, DP_IPPROTO_EXP, m, now))
		<< "one destination took the whole hold queue";
	dp_port_stats(port, &after);
	EXPECT_EQ(before.drops[DP_DROP_HOLD_DEST_FULL] + DP_ARP_HOLD -
			  DP_ARP_HOLD_DEST,
		  after.drops[DP_DROP_HOLD_DEST_FULL]);
	/* neither answers: every held frame goes, counted */
	for (uint32_t i = 0; i <= cfg.arp_retries + 1; i++)
		dp_arp_port_tick(port, now + (i + 1) * port->arp.retry_tsc + 1);
	EXPECT_EQ(held0, port->nb_hold);
	dp_port_flush(port, dp_tsc());
	drain_nic(port);
}

/* Raised above its initial size, the cache grows instead of evicting:
 * 20000 neighbours (more than DP_ARP_SIZE slots) all stay, each with its
 * MAC, and eviction starts only at the new maximum. */
TEST(DpArp, RaisedMaximumGrowsTheTableInsteadOfEvicting)
{
	static dp_arp_table t;
	rte_ether_addr mac;
	const uint32_t n = 20000;
	uint64_t now = 10;

	ASSERT_EQ(0, dp_arp_table_init(&t, 1000000000, 10, 3));
	EXPECT_EQ(-EINVAL, dp_arp_table_set_max(&t, DP_ARP_MAX_LIMIT + 1));
	ASSERT_EQ(0, dp_arp_table_set_max(&t, n));
	for (uint32_t i = 0; i < n; i++)
		ASSERT_TRUE(dp_arp_learn(&t, htonl(0x0a100000 + i),
					 &(mac = mac_of(i)), now++)) << i;
	EXPECT_EQ(0u, t.evictions);
	EXPECT_EQ(n, t.nb_used);
	EXPECT_GE(t.mask + 1, n * 4 / 3);
	EXPECT_LE(t.nb_used, (t.mask + 1) / 4 * 3);
	EXPECT_GE(t.grows, 2u);
	for (uint32_t i = 0; i < n; i++) {
		ASSERT_EQ(0, dp_arp_lookup(&t, htonl(0x0a100000 + i), now++,
					   &mac)) << i;
		rte_ether_addr want = mac_of(i);
		ASSERT_TRUE(rte_is_same_ether_addr(&want, &mac)) << i;
	}
	/* at the maximum: the least recently used goes */
	EXPECT_EQ(-ENOENT, dp_arp_lookup(&t, htonl(0x0a200000), now++, &mac));
	EXPECT_EQ(1u, t.evictions);
	EXPECT_EQ(nullptr, dp_arp_find(&t, htonl(0x0a100000)));
	dp_arp_table_fini(&t);
}


} /* namespace */
} /* namespace dptest */
