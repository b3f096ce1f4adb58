/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_dp_drop.cc - the dataplane's drop= hook: parsing, which packets
 * count as DATA, and on a real EAL with a net_ring loopback port that
 * exactly the chosen packets are dropped, on send and on receive, and
 * counted as drops["hook"].
 */
#include <gtest/gtest.h>

#include <string.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "dp_internal.h"

namespace {

std::vector<uint8_t> sctp_packet(std::initializer_list<uint8_t> chunk_types)
{
	std::vector<uint8_t> p(12, 0);

	for (uint8_t t : chunk_types) {
		uint8_t chunk[16] = { t, 0, 0, 16 };

		p.insert(p.end(), chunk, chunk + sizeof(chunk));
	}
	return p;
}

} // namespace

TEST(DpDrop, ParseForms)
{
	dp_config c;

	ASSERT_EQ(0, dp_config_parse("dev=net_null0 ip=10.0.0.1 "
				     "drop=rx:3,17,40 drop=tx:every:100", &c));
	EXPECT_EQ(3u, c.drop_rx.nb);
	EXPECT_EQ(0u, c.drop_rx.every);
	EXPECT_EQ(3u, c.drop_rx.list[0]);
	EXPECT_EQ(17u, c.drop_rx.list[1]);
	EXPECT_EQ(40u, c.drop_rx.list[2]);
	EXPECT_EQ(100u, c.drop_tx.every);
	EXPECT_EQ(0u, c.drop_tx.nb);
	ASSERT_EQ(0, dp_config_parse("dev=net_null0 ip=10.0.0.1", &c));
	EXPECT_FALSE(dp_drop_active(&c.drop_rx));
	EXPECT_FALSE(dp_drop_active(&c.drop_tx));
}

TEST(DpDrop, ParseRejectsBadValues)
{
	static const char *const bad[] = {
		"drop=3,4",		/* no direction */
		"drop=up:3",		/* unknown direction */
		"drop=rx:",		/* empty list */
		"drop=rx:0",		/* indices are 1-based */
		"drop=rx:5,3",		/* not ascending */
		"drop=rx:3,3",		/* twice */
		"drop=rx:3,x",		/* not a number */
		"drop=tx:every:1",	/* would drop every DATA packet */
		"drop=tx:every:0",
		"drop=tx:every:",
		"drop=rx:1 drop=rx:2",	/* two tokens for one direction */
	};
	dp_config c;
	std::string many = "drop=rx:";

	for (const char *b : bad) {
		std::string s = std::string("dev=net_null0 ip=10.0.0.1 ") + b;
		EXPECT_NE(0, dp_config_parse(s.c_str(), &c)) << b;
	}
	for (int i = 1; i <= DP_DROP_LIST_MAX + 1; i++)
		many += std::to_string(i) + (i <= DP_DROP_LIST_MAX ? "," : "");
	EXPECT_NE(0, dp_config_parse(("dev=net_null0 ip=10.0.0.1 " + many)
					     .c_str(), &c));
	EXPECT_NE(nullptr, strstr(dp_config_help(), "drop=DIR:LIST"));
}

TEST(DpDrop, WhichPacketsCarryData)
{
	auto data = sctp_packet({ 0 });
	auto sack_data = sctp_packet({ 3, 0 }); /* SACK bundled with DATA */
	auto idata = sctp_packet({ 64 });
	auto sack = sctp_packet({ 3 });
	auto init = sctp_packet({ 1 });
	auto zero_len = sctp_packet({ 3 });

	EXPECT_TRUE(dp_sctp_has_data(data.data(), data.size()));
	EXPECT_TRUE(dp_sctp_has_data(sack_data.data(), sack_data.size()));
	EXPECT_TRUE(dp_sctp_has_data(idata.data(), idata.size()));
	EXPECT_FALSE(dp_sctp_has_data(sack.data(), sack.size()));
	EXPECT_FALSE(dp_sctp_has_data(init.data(), init.size()));
	/* a chunk length below 4 ends the walk (no endless loop) */
	zero_len[15] = 0;
	zero_len.push_back(0);
	EXPECT_FALSE(dp_sctp_has_data(zero_len.data(), zero_len.size()));
	/* shorter than a chunk header after the common header */
	EXPECT_FALSE(dp_sctp_has_data(data.data(), 14));
}

TEST(DpDrop, DecideListAndEvery)
{
	dp_drop_spec every{}, list{};
	dp_drop_state s1{}, s2{};
	std::vector<int> got_every, got_list;

	every.every = 3;
	list.nb = 3;
	list.list[0] = 1;
	list.list[1] = 2;
	list.list[2] = 7;
	for (int i = 1; i <= 10; i++) {
		if (dp_drop_decide(&s1, &every))
			got_every.push_back(i);
		if (dp_drop_decide(&s2, &list))
			got_list.push_back(i);
	}
	EXPECT_EQ((std::vector<int>{ 3, 6, 9 }), got_every);
	EXPECT_EQ((std::vector<int>{ 1, 2, 7 }), got_list);
}

/* On a net_ring loopback port every sent frame comes back to the same
 * port: drop=tx acts on the sent DATA packets, drop=rx on those that came
 * back. */
TEST(DpDrop, LoopbackDropsExactlyTheChosenPackets)
{
	std::string s = "dev=net_ring0 ip=10.0.0.1 mem=256 link_wait_ms=2000 "
			"drop=tx:2,5,9 drop=rx:every:4 prefix=sdp-dropt-" +
			std::to_string(getpid());
	dp_config cfg;
	dp_port *port = nullptr;
	dp_stats st;
	std::vector<int> data_got, sack_got;
	int exp_got = 0, idx = 0;
	const int n_data = 20;

	ASSERT_EQ(0, dp_config_parse(s.c_str(), &cfg));
	ASSERT_EQ(0, dp_start(&cfg, &port));
	/* the loopback port sends to itself: its own address is a static
	 * neighbour (ARP never learns our own address from a sender) */
	ASSERT_EQ(0, dp_arp_add_static(&port->arp, cfg.ip_be,
				       &port->fctx.mac));
	/* 20 DATA packets (payload: their index), each followed by a
	 * SACK-only packet every other time, and 5 non-SCTP frames: only
	 * the DATA packets are counted by the hook */
	for (int i = 1; i <= n_data; i++) {
		for (int kind = 0; kind < 3; kind++) {
			bool sack = kind == 1, exp = kind == 2;
			rte_mbuf *m;

			if ((sack && i % 2) || (exp && i % 4))
				continue;
			m = dp_pkt_alloc(port);
			ASSERT_NE(nullptr, m);
			auto pkt = sctp_packet({ (uint8_t)(sack ? 3 : 0) });
			pkt[16 + 4] = (uint8_t)i;
			memcpy(rte_pktmbuf_append(m, (uint16_t)pkt.size()),
			       pkt.data(), pkt.size());
			ASSERT_EQ(0, dp_port_send(port, cfg.ip_be,
						  exp ? DP_IPPROTO_EXP
						      : DP_IPPROTO_SCTP,
						  m, dp_tsc()));
		}
		dp_port_flush(port, dp_tsc());
	}
	for (int spin = 0; spin < 200000 && idx < 50; spin++) {
		rte_mbuf *got[32];
		unsigned int n;

		dp_port_poll(port, dp_tsc());
		dp_port_flush(port, dp_tsc());
		n = dp_port_recv(port, got, 32);
		for (unsigned int k = 0; k < n; k++, idx++) {
			struct dp_pkt_info info;
			const uint8_t *p =
				rte_pktmbuf_mtod(got[k], const uint8_t *);

			dp_pkt_info(got[k], &info);
			if (info.proto == DP_IPPROTO_EXP)
				exp_got++;
			else if (p[12] == 0)
				data_got.push_back(p[16 + 4]);
			else
				sack_got.push_back(p[16 + 4]);
			dp_pkt_free(got[k]);
		}
	}
	dp_port_stats(port, &st);
	dp_stop(port);
	/* sent DATA 2, 5, 9 never left; of the 17 that came back, the 4th,
	 * 8th, 12th and 16th (DATA 6, 11, 15, 19) were dropped on receive */
	EXPECT_EQ((std::vector<int>{ 1, 3, 4, 7, 8, 10, 12, 13, 14, 16, 17, 18,
				     20 }),
		  data_got);
	EXPECT_EQ((std::vector<int>{ 2, 4, 6, 8, 10, 12, 14, 16, 18, 20 }),
		  sack_got);
	EXPECT_EQ(5, exp_got);
	EXPECT_EQ(7u, st.drops[DP_DROP_HOOK]);
	EXPECT_STREQ("hook", dp_drop_name(DP_DROP_HOOK));
}
