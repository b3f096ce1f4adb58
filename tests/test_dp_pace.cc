/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_dp_pace.cc - the pacer on a port (dp_pace.c): gap mode under
 * back-pressure, a full pacer queue, the gap pool at close, unpaced polls
 * skipping the pacer, per-destination rates on a virtual clock, and SCTP
 * control not held behind paced data.
 */
#include "dp_fixture.h"

namespace dptest {
namespace {

/* Gap mode with the NIC full: data frames wait with their gaps, and once
 * the NIC takes frames again each data frame is followed by its whole gap
 * (3x its wire time at a quarter of the link rate), never by the next
 * data frame. */
TEST_F(DpPortTest, GapModeUnderBackPressureSendsWholeUnits)
{
	const int kFrames = 12;
	const uint32_t kWire = 1000 + 34 + 24; /* payload+headers+overhead */
	std::vector<std::pair<char, uint32_t>> seq; /* 'd'/'g', wire bytes */
	unsigned int in_nic, fill_seen = 0;

	dp_arp_add_static(&port->arp, cfg.ip_be, &port->fctx.mac);
	repace(port, DP_PACE_GAP, 2500000000ull);
	in_nic = fill_nic(port);
	ASSERT_GT(in_nic, 0u);
	for (int i = 0; i < kFrames; i++) {
		rte_mbuf *m = dp_pkt_alloc(port);
		memset(rte_pktmbuf_append(m, 1000), 0x42, 1000);
		ASSERT_EQ(0, dp_port_send(port, cfg.ip_be, DP_IPPROTO_EXP, m,
					  dp_tsc()));
	}
	/* the NIC takes a few frames at a time */
	for (int it = 0, seen = 0; it < 100000 && (dp_port_tx_pending(port) ||
						   seen < kFrames);
	     it++) {
		rte_mbuf *pkts[4];
		uint16_t k;

		dp_port_flush(port, dp_tsc());
		k = rte_eth_rx_burst(port->port_id, 0, pkts, 4);
		for (uint16_t j = 0; j < k; j++) {
			auto *eth = rte_pktmbuf_mtod(pkts[j], rte_ether_hdr *);
			uint16_t type = rte_be_to_cpu_16(eth->ether_type);
			uint32_t wire = RTE_MAX(rte_pktmbuf_pkt_len(pkts[j]),
						60u) + 24;

			if (fill_seen < in_nic)
				fill_seen++;
			else if (type == RTE_ETHER_TYPE_IPV4)
				seq.emplace_back('d', wire), seen++;
			else if (type == 0x8808)
				seq.emplace_back('g', wire);
		}
		rte_pktmbuf_free_bulk(pkts, k);
	}
	drain_nic(port);
	dp_stats st;
	dp_port_stats(port, &st);
	repace(port, DP_PACE_DEADLINE, 0);

	int data = 0;
	uint64_t gap_bytes = 0;
	for (size_t i = 0; i < seq.size(); i++) {
		if (seq[i].first == 'g') {
			gap_bytes += seq[i].second;
			continue;
		}
		if (data > 0) {
			EXPECT_GE(gap_bytes, 3 * kWire - 84)
				<< "data frame " << data << " left early";
			EXPECT_LE(gap_bytes, 3 * kWire + 84);
		}
		data++;
		gap_bytes = 0;
	}
	EXPECT_EQ(kFrames, data);
	EXPECT_GT(st.gap_frames, 0u);
}

/* A full pacer queue drops, counts pace_drops and tells the sender. */
TEST_F(DpPortTest, PacerQueueFullReturnsEnobufsAndCounts)
{
	dp_stats before, after;
	int ok = 0, nobufs = 0;
	char json[2048];

	dp_arp_add_static(&port->arp, cfg.ip_be, &port->fctx.mac);
	repace(port, DP_PACE_DEADLINE, 10000000ull); /* 10 Mbit/s */
	dp_port_stats(port, &before);
	for (int i = 0; i < 64; i++) {
		rte_mbuf *m = dp_pkt_alloc(port);
		rte_pktmbuf_append(m, 1000);
		int rc = dp_port_send(port, cfg.ip_be, DP_IPPROTO_EXP, m,
				      dp_tsc());
		ok += rc == 0;
		nobufs += rc == -ENOBUFS;
	}
	dp_port_stats(port, &after);
	repace(port, DP_PACE_DEADLINE, 0);
	drain_nic(port);
	EXPECT_EQ(64, ok + nobufs);
	EXPECT_GT(nobufs, 0);
	EXPECT_EQ(before.pace_drops + (uint64_t)nobufs, after.pace_drops);
	EXPECT_EQ(before.drops[DP_DROP_HOLD_FULL],
		  after.drops[DP_DROP_HOLD_FULL]);
	ASSERT_LT(dp_stats_json(&after, json, sizeof(json)), (int)sizeof(json));
	EXPECT_NE(nullptr, strstr(json, ("\"pace_drops\": " +
					 std::to_string(after.pace_drops))
						.c_str()))
		<< json;
}

/* A gap-mode port closed while the NIC holds gap frames: the device is
 * closed (a real PMD frees the mbufs its TX ring holds then) before the
 * gap pool is freed.  The ethdev's DESTROY event marks the moment. */
struct GapCloseProbe {
	char pool_name[RTE_MEMPOOL_NAMESIZE];
	bool destroyed;
	bool pool_alive_at_destroy;
};

static int gap_close_cb(uint16_t, rte_eth_event_type, void *arg, void *)
{
	auto *pr = static_cast<GapCloseProbe *>(arg);

	pr->destroyed = true;
	pr->pool_alive_at_destroy = rte_mempool_lookup(pr->pool_name) != nullptr;
	return 0;
}

TEST_F(DpPortTest, GapPoolFreedAfterTheDeviceOnClose)
{
	auto c2_p = std::make_unique<dp_config>(); /* ~48 KB */
	dp_config &c2 = *c2_p;
	dp_port *p2 = nullptr;
	/* static: the DESTROY callback stays registered on the port id
	 * after the port is gone (DPDK 22.11 cannot unregister it from a
	 * released port), and fires again when a later port reuses the id
	 * (ZeroChecksumRefusedOffMemif's): it must not write into a stack
	 * frame that is no longer this test's */
	static GapCloseProbe pr;

	pr = GapCloseProbe{};

	ASSERT_EQ(0, rte_dev_probe("net_ring1"));
	ASSERT_EQ(0, dp_config_parse("dev=net_ring1 ip=10.0.1.1 "
				     "link_wait_ms=2000 rx_ring=256 pace=gap "
				     "link=10G rate=1G "
				     "arp=10.0.1.1@02:5d:0a:00:01:01", &c2));
	ASSERT_EQ(0, dp_port_open(&c2, &p2));
	snprintf(pr.pool_name, sizeof(pr.pool_name), "dp_gap_%u",
		 p2->port_id);
	ASSERT_EQ(0, rte_eth_dev_callback_register(p2->port_id,
						   RTE_ETH_EVENT_DESTROY,
						   gap_close_cb, &pr));
	for (int i = 0; i < 8; i++) {
		rte_mbuf *m = dp_pkt_alloc(p2);
		rte_pktmbuf_append(m, 1000);
		ASSERT_EQ(0, dp_port_send(p2, c2.ip_be, DP_IPPROTO_EXP, m,
					  dp_tsc()));
		dp_port_flush(p2, dp_tsc());
	}
	rte_mempool *gp = rte_mempool_lookup(pr.pool_name);
	ASSERT_NE(nullptr, gp);
	ASSERT_GT(rte_mempool_in_use_count(gp), 0u) << "no gap frame in the NIC";
	dp_port_close(p2);
	EXPECT_TRUE(pr.destroyed);
	EXPECT_TRUE(pr.pool_alive_at_destroy)
		<< "gap pool freed while the device still held gap frames";
	EXPECT_EQ(nullptr, rte_mempool_lookup(pr.pool_name));
}

/* An unpaced port with an empty pacer never runs the pacer on
 * a poll or a flush (pace_polls stays put); a rate published from another
 * thread (dp_port_set_rate) brings it back at the next poll, and once the
 * rate is 0 again and its queue is empty the polls skip it again. */
TEST_F(DpPortTest, UnpacedPollsSkipThePacer)
{
	dp_stats a, b;
	rte_mbuf *got[DP_BURST];
	unsigned int rx = 0;

	dp_arp_add_static(&port->arp, cfg.ip_be, &port->fctx.mac);
	repace(port, DP_PACE_DEADLINE, 0);
	dp_port_stats(port, &a);
	for (int i = 0; i < 1000; i++) {
		rte_mbuf *m = dp_pkt_alloc(port);

		ASSERT_NE(nullptr, m);
		rte_pktmbuf_append(m, 100);
		ASSERT_EQ(0, dp_port_send(port, cfg.ip_be, DP_IPPROTO_EXP, m,
					  dp_tsc()));
		dp_port_poll(port, dp_tsc());
		dp_port_flush(port, dp_tsc());
		while (unsigned int n = dp_port_recv(port, got, DP_BURST))
			rte_pktmbuf_free_bulk(got, n), rx += n;
	}
	for (int i = 0; i < 100 && rx < 1000; i++) {
		dp_port_poll(port, dp_tsc());
		while (unsigned int n = dp_port_recv(port, got, DP_BURST))
			rte_pktmbuf_free_bulk(got, n), rx += n;
	}
	dp_port_stats(port, &b);
	EXPECT_GE(rx, 1000u) << "frames lost on the unpaced path";
	EXPECT_EQ(a.pace_polls, b.pace_polls)
		<< "unpaced polls ran the pacer";

	/* another thread publishes a rate: the next poll runs the pacer */
	std::thread([] { ASSERT_EQ(0, dp_port_set_rate(port, 1000000000ull)); })
		.join();
	dp_port_poll(port, dp_tsc());
	dp_port_stats(port, &a);
	EXPECT_EQ(b.pace_polls + 1, a.pace_polls);
	EXPECT_EQ(1000000000ull, dp_port_rate(port));
	dp_port_poll(port, dp_tsc());
	dp_port_flush(port, dp_tsc());
	dp_port_stats(port, &b);
	EXPECT_EQ(a.pace_polls + 2, b.pace_polls) << "paced polls skipped it";

	/* back to unpaced: one poll applies the rate, later ones skip */
	ASSERT_EQ(0, dp_port_set_rate(port, 0));
	dp_port_poll(port, dp_tsc());
	dp_port_stats(port, &a);
	EXPECT_EQ(b.pace_polls + 1, a.pace_polls);
	EXPECT_EQ(0u, dp_port_rate(port));
	for (int i = 0; i < 100; i++)
		dp_port_poll(port, dp_tsc());
	dp_port_stats(port, &b);
	EXPECT_EQ(a.pace_polls, b.pace_polls);
	drain_nic(port);
	while (unsigned int n = dp_port_recv(port, got, DP_BURST))
		rte_pktmbuf_free_bulk(got, n);
}

constexpr uint32_t kDestWire = 1000 + 34 + 24;

struct DestRun {
	std::map<uint32_t, std::vector<uint64_t>> sent_us; /* by ip_be */
};

uint32_t test_ip(unsigned int host)
{
	return rte_cpu_to_be_32(0x0a000000u + host); /* 10.0.0.host */
}

/* Queue @n frames to each of @ips at t0, then poll every virtual
 * microsecond for @dur_us, recording each frame's departure. */
DestRun run_dests(dp_port *port, uint64_t t0, const std::vector<uint32_t> &ips,
		  int n, uint64_t dur_us)
{
	const uint64_t us = dp_tsc_hz() / 1000000;
	DestRun r;

	for (uint32_t ip : ips)
		for (int i = 0; i < n; i++) {
			rte_mbuf *m = dp_pkt_alloc(port);
			memset(rte_pktmbuf_append(m, 1000), 0x42, 1000);
			EXPECT_EQ(0, dp_port_send(port, ip, DP_IPPROTO_EXP, m,
						  t0));
		}
	for (uint64_t t = 0; t <= dur_us; t++) {
		rte_mbuf *pkts[DP_BURST];
		uint16_t k;

		dp_port_flush(port, t0 + t * us);
		while ((k = rte_eth_rx_burst(port->port_id, 0, pkts,
					     DP_BURST)) > 0) {
			for (uint16_t j = 0; j < k; j++) {
				auto *eth = rte_pktmbuf_mtod(pkts[j],
							     rte_ether_hdr *);
				auto *ip = (rte_ipv4_hdr *)(eth + 1);

				if (eth->ether_type ==
				    rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4))
					r.sent_us[ip->dst_addr].push_back(t);
			}
			rte_pktmbuf_free_bulk(pkts, k);
		}
	}
	return r;
}

TEST_F(DpPortTest, TwoDestinationsLeaveAtTheirOwnRates)
{
	const uint32_t a = test_ip(2), b = test_ip(3), c = test_ip(4);
	uint64_t t0 = dp_tsc();

	for (uint32_t ip : {a, b, c})
		dp_arp_add_static(&port->arp, ip, &port->fctx.mac);
	repace(port, DP_PACE_DEADLINE, 0); /* no total cap */
	drain_nic(port);
	EXPECT_FALSE(dp_pace_active(port)); /* may be bypassed */
	ASSERT_EQ(0, dp_port_set_dest_rate(port, a, 10000000ull));
	EXPECT_TRUE(dp_pace_active(port)); /* a request to apply */
	ASSERT_EQ(0, dp_port_set_dest_rate(port, b, 40000000ull));
	ASSERT_EQ(0, dp_port_set_dest_default_rate(port, 20000000ull));
	EXPECT_EQ(20000000ull, dp_port_dest_default_rate(port));
	dp_port_flush(port, t0); /* the owning thread applies them */

	/* 16 frames each (the per-destination queue's floor) */
	DestRun r = run_dests(port, t0, {a, b, c}, 16, 20000);
	const double gap_a = kDestWire * 8 / 10.0, /* us at 10 Mbit/s */
		gap_b = kDestWire * 8 / 40.0, gap_c = kDestWire * 8 / 20.0;

	ASSERT_EQ(16u, r.sent_us[a].size());
	ASSERT_EQ(16u, r.sent_us[b].size());
	ASSERT_EQ(16u, r.sent_us[c].size()); /* c: the default rate */
	/* the first frame of each leaves at once: none waits behind
	 * another destination's deadline */
	EXPECT_EQ(0u, r.sent_us[a][0]);
	EXPECT_EQ(0u, r.sent_us[b][0]);
	EXPECT_EQ(0u, r.sent_us[c][0]);
	/* 15 gaps at each rate, within one poll */
	EXPECT_NEAR(15 * gap_a, (double)r.sent_us[a][15], 1.5);
	EXPECT_NEAR(15 * gap_b, (double)r.sent_us[b][15], 1.5);
	EXPECT_NEAR(15 * gap_c, (double)r.sent_us[c][15], 1.5);
	for (size_t i = 1; i < 16; i++)
		EXPECT_GE((double)(r.sent_us[b][i] - r.sent_us[b][i - 1]),
			  gap_b - 1.0) << i;

	ASSERT_EQ(0, dp_port_set_dest_default_rate(port, 0));
	ASSERT_EQ(0, dp_port_set_dest_rate(port, a, DP_DEST_RATE_DEFAULT));
	ASSERT_EQ(0, dp_port_set_dest_rate(port, b, DP_DEST_RATE_DEFAULT));
	EXPECT_TRUE(dp_pace_active(port));
	dp_port_flush(port, dp_tsc());
	EXPECT_FALSE(dp_port_tx_pending(port));
	EXPECT_FALSE(dp_pace_active(port));
}

TEST_F(DpPortTest, DestinationRatesUnderTheTotalCap)
{
	const uint32_t a = test_ip(2), b = test_ip(3);
	uint64_t t0;

	for (uint32_t ip : {a, b})
		dp_arp_add_static(&port->arp, ip, &port->fctx.mac);
	repace(port, DP_PACE_DEADLINE, 20000000ull); /* total 20 Mbit/s */
	t0 = dp_tsc();
	drain_nic(port);
	ASSERT_EQ(0, dp_port_set_dest_rate(port, a, 40000000ull));
	ASSERT_EQ(0, dp_port_set_dest_rate(port, b, 40000000ull));
	dp_port_flush(port, t0);

	/* 8 each: the total's queue holds 16 frames at 20 Mbit/s */
	DestRun r = run_dests(port, t0, {a, b}, 8, 20000);
	ASSERT_EQ(8u, r.sent_us[a].size());
	ASSERT_EQ(8u, r.sent_us[b].size());
	/* 16 frames at 20 Mbit/s in all: the last leaves after 15 gaps of
	 * the total, not after 7 of a destination's 40 Mbit/s.  The first
	 * gap is shortened by up to half (pace_frame_sent's credit for the
	 * real time between setup and t0). */
	uint64_t last = std::max(r.sent_us[a][7], r.sent_us[b][7]);
	EXPECT_GE((double)last, 14.5 * kDestWire * 8 / 20.0 - 2.0);
	EXPECT_LE((double)last, 15 * kDestWire * 8 / 20.0 + 2.0);
	/* and they alternate: round robin under the cap */
	EXPECT_NEAR((double)r.sent_us[a][7], (double)r.sent_us[b][7],
		    kDestWire * 8 / 20.0 + 2.0);

	ASSERT_EQ(0, dp_port_set_dest_rate(port, a, DP_DEST_RATE_DEFAULT));
	ASSERT_EQ(0, dp_port_set_dest_rate(port, b, DP_DEST_RATE_DEFAULT));
	repace(port, DP_PACE_DEADLINE, 0);
}

TEST_F(DpPortTest, DestinationTableBoundAndBadRates)
{
	const uint32_t a = test_ip(2), b = test_ip(3), c = test_ip(4);
	uint64_t t0 = dp_tsc();
	dp_stats st;

	for (uint32_t ip : {a, b, c})
		dp_arp_add_static(&port->arp, ip, &port->fctx.mac);
	port->cfg.pace_dests = 2;
	port->cfg.pace_dest_rate_bps = 20000000ull; /* dest_rate=20M */
	repace(port, DP_PACE_DEADLINE, 0);
	drain_nic(port);
	EXPECT_EQ(20000000ull, dp_port_dest_default_rate(port));

	/* three destinations, two flows: the third shares the overflow
	 * flow, still paced at the default */
	DestRun r = run_dests(port, t0, {a, b, c}, 16, 10000);
	dp_port_stats(port, &st);
	EXPECT_EQ(16u, st.pace_dest_overflow);
	for (uint32_t ip : {a, b, c}) {
		ASSERT_EQ(16u, r.sent_us[ip].size());
		EXPECT_NEAR(15 * kDestWire * 8 / 20.0,
			    (double)r.sent_us[ip][15], 1.5);
	}
	/* above the link, and the reserved address: refused at once */
	EXPECT_EQ(-EINVAL, dp_port_set_dest_rate(port, a, 20000000000ull));
	EXPECT_EQ(-EINVAL, dp_port_set_dest_rate(port, 0, 1000000ull));
	EXPECT_EQ(-EINVAL, dp_port_set_dest_default_rate(port,
							 20000000000ull));

	port->cfg.pace_dests = 256;
	port->cfg.pace_dest_rate_bps = 0;
	repace(port, DP_PACE_DEADLINE, 0);
}

/* 4 SCTP DATA packets, then a SACK-only packet, to 10.0.0.2 at t0; then
 * poll every virtual microsecond.  @return (chunk type, departure us). */
static std::vector<std::pair<uint8_t, uint64_t>> data_then_sack(dp_port *port,
								uint64_t t0)
{
	const uint64_t us = dp_tsc_hz() / 1000000;
	std::vector<std::pair<uint8_t, uint64_t>> seen;

	for (int i = 0; i < 5; i++) {
		rte_mbuf *m = dp_pkt_alloc(port);
		uint32_t len = i < 4 ? 1000 : 28;
		auto *p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);

		memset(p, 0, len);
		p[12] = i < 4 ? 0 : 3; /* DATA, or SACK */
		p[14] = (uint8_t)((len - 12) >> 8);
		p[15] = (uint8_t)(len - 12);
		EXPECT_EQ(0, dp_port_send(port, test_ip(2), DP_IPPROTO_SCTP, m,
					  t0));
	}
	for (uint64_t t = 0; t <= 5000 && seen.size() < 5; t++) {
		rte_mbuf *pkts[DP_BURST];
		uint16_t k;

		dp_port_flush(port, t0 + t * us);
		while ((k = rte_eth_rx_burst(port->port_id, 0, pkts,
					     DP_BURST)) > 0) {
			for (uint16_t j = 0; j < k; j++) {
				const uint8_t *f =
					rte_pktmbuf_mtod(pkts[j], uint8_t *);

				if (rte_pktmbuf_pkt_len(pkts[j]) > 34 + 12)
					seen.emplace_back(f[34 + 12], t);
			}
			rte_pktmbuf_free_bulk(pkts, k);
		}
	}
	return seen;
}

/* An SCTP packet without DATA (a SACK) leaves at once, not queued behind
 * paced data: per destination, and under a total rate (deadline mode). */
TEST_F(DpPortTest, SctpControlNotHeldBehindPacedData)
{
	for (int total = 0; total < 2; total++) {
		dp_arp_add_static(&port->arp, test_ip(2), &port->fctx.mac);
		repace(port, DP_PACE_DEADLINE, total ? 10000000ull : 0);
		drain_nic(port);
		if (!total) {
			ASSERT_EQ(0, dp_port_set_dest_rate(port, test_ip(2),
							   10000000ull));
		}
		uint64_t t0 = dp_tsc();

		dp_port_flush(port, t0);
		auto seen = data_then_sack(port, t0);

		ASSERT_EQ(5u, seen.size()) << "total " << total;
		/* the first DATA and the SACK at once; the other DATA
		 * about 846.4 us apart (1058 wire bytes at 10 Mbit/s) */
		size_t sack = 5;
		for (size_t i = 0; i < seen.size(); i++)
			if (seen[i].first == 3)
				sack = i;
		ASSERT_LT(sack, 5u) << "total " << total;
		EXPECT_EQ(0u, seen[sack].second) << "total " << total;
		EXPECT_GE(seen.back().second, 2 * 846u) << "total " << total;
		if (!total) {
			ASSERT_EQ(0, dp_port_set_dest_rate(
					     port, test_ip(2),
					     DP_DEST_RATE_DEFAULT));
		}
	}
	repace(port, DP_PACE_DEADLINE, 0);
}

/* Gap mode computes gaps from the link speed: with neither link= nor a
 * speed from the driver, pace=gap is refused (not taken as 10G), and
 * pace=auto on a PCI port falls back to deadline mode and says why. */
TEST(DpPace, GapModeNeedsAKnownLinkSpeed)
{
	auto cfg_p = std::make_unique<dp_config>();
	dp_config &c = *cfg_p;
	const char *why;
	uint64_t link;
	bool gap;

	ASSERT_EQ(0, dp_config_parse("dev=net_ring0 ip=10.0.0.1 pace=gap",
				     &c));
	EXPECT_EQ(-EINVAL, dp_pace_choose(&c, 0, &gap, &link, &why));
	ASSERT_EQ(0, dp_pace_choose(&c, 25000, &gap, &link, &why));
	EXPECT_TRUE(gap);
	EXPECT_EQ(25000000000ull, link);
	ASSERT_EQ(0, dp_config_parse("dev=net_ring0 ip=10.0.0.1 pace=gap "
				     "link=40G", &c));
	ASSERT_EQ(0, dp_pace_choose(&c, 0, &gap, &link, &why));
	EXPECT_TRUE(gap);
	EXPECT_EQ(40000000000ull, link);
	/* auto: gap on PCI with a known speed, deadline without */
	ASSERT_EQ(0, dp_config_parse("dev=net_ring0 ip=10.0.0.1", &c));
	c.is_pci = true;
	ASSERT_EQ(0, dp_pace_choose(&c, 10000, &gap, &link, &why));
	EXPECT_TRUE(gap);
	EXPECT_EQ(nullptr, why);
	ASSERT_EQ(0, dp_pace_choose(&c, 0, &gap, &link, &why));
	EXPECT_FALSE(gap);
	ASSERT_NE(nullptr, why);
	EXPECT_NE(nullptr, strstr(why, "link="));
	c.is_pci = false;
	ASSERT_EQ(0, dp_pace_choose(&c, 0, &gap, &link, &why));
	EXPECT_FALSE(gap);
	EXPECT_EQ(nullptr, why);
}

/* Gap frames that do not leave the port mean no pacing at all: a driver
 * known to filter them, no TX counters, or a probe the counters do not
 * see leaving each block gap mode; a probe counted in full does not. */
TEST(DpPace, GapFramesMustBeSeenLeaving)
{
	EXPECT_NE(nullptr, dp_pace_gap_blocked("net_i40e", 32, 32, true));
	EXPECT_NE(nullptr, dp_pace_gap_blocked("net_ice", 32, 0, true));
	EXPECT_NE(nullptr, dp_pace_gap_blocked("net_ice", 32, 31, true));
	EXPECT_NE(nullptr, dp_pace_gap_blocked("net_ice", 0, 0, true));
	EXPECT_NE(nullptr, dp_pace_gap_blocked("net_ice", 32, 32, false));
	EXPECT_EQ(nullptr, dp_pace_gap_blocked("net_ice", 32, 32, true));
	EXPECT_EQ(nullptr, dp_pace_gap_blocked("net_mlx5", 32, 40, true));
}


} /* namespace */
} /* namespace dptest */
