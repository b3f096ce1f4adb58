/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sg_lanes.cc - lanes (sg_ep_open_lane): a second SCTP endpoint on the
 * same port with associations of its own, and the order endpoints and
 * ports may close in while usrsctp keeps received packets.
 */
#include "sg_twonodes.h"

namespace sgtest {
namespace {

/*
 * A lane (sg_ep_open_lane) is a second SCTP endpoint on the
 * same port, its own SCTP port and associations.  One process, a memif
 * pair: port 0 has base 5000 + lane 5100, port 1 base 5001 + lane 5101.
 * base0 -> 5001 and lane0 -> 5101 are two associations; messages sent on
 * each arrive at the matching endpoint of port 1 only (usrsctp
 * demultiplexes by SCTP port, polled through the base), in order; a lane
 * on the base's SCTP port is refused.
 */
TEST_F(SgTwoNodes, LanesAreAssociationsOfTheirOwnOnOnePort)
{
	Child c = spawn([&](Node &n) {
		char cfg[2][1024];
		dp_config dcfg[2];
		sg_config scfg[2], lcfg[2];
		dp_port *port[2] = {nullptr, nullptr};
		sg_ep *ep[2] = {nullptr, nullptr}, *lane[2] = {nullptr, nullptr};
		sg_ep *dup = nullptr;
		int rc_a = -1;

		for (int e = 0; e < 2; e++) {
			snprintf(cfg[e], sizeof(cfg[e]),
				 "dev=net_memif%d,role=%s,id=0,socket=%s/"
				 "memif0.sock,socket-abstract=no "
				 "ip=10.77.1.%d/24 prefix=sdp-%s-lane mem=256 "
				 "link_wait_ms=15000", e,
				 e == 0 ? "server" : "client",
				 g_sockdir.c_str(), e + 1, g_job.c_str());
			CHILD_CHECK(dp_config_parse(cfg[e], &dcfg[e]) == 0);
			CHILD_CHECK(sg_config_parse(e == 0 ? "port=5000" :
							     "port=5001",
						    &scfg[e]) == 0);
			CHILD_CHECK(sg_config_parse(e == 0 ? "port=5100" :
							     "port=5101",
						    &lcfg[e]) == 0);
		}
		CHILD_CHECK(dp_eal_init(&dcfg[0]) == 0);
		std::thread t([&] { rc_a = dp_port_open(&dcfg[0], &port[0]); });
		usleep(200 * 1000);
		int rc_b = dp_port_open(&dcfg[1], &port[1]);
		t.join();
		CHILD_CHECK(rc_a == 0 && rc_b == 0);
		for (int e = 0; e < 2; e++) {
			CHILD_CHECK(sg_ep_open(port[e], &scfg[e], &ep[e]) == 0);
			CHILD_CHECK(sg_ep_open_lane(ep[e], &lcfg[e],
						    &lane[e]) == 0);
		}
		CHILD_CHECK(sg_ep_open_lane(ep[0], &scfg[0], &dup) ==
			    -EADDRINUSE);
		CHILD_CHECK(sg_ep_open_lane(lane[0], &lcfg[1], &dup) ==
			    -EINVAL);

		sg_ep *all[4] = {ep[0], lane[0], ep[1], lane[1]};
		std::vector<sg_event> evs[4];
		auto poll_all = [&] {
			sg_event ev;

			for (int e = 0; e < 4; e++) {
				sg_poll(all[e], dp_tsc());
				while (sg_next_event(all[e], &ev) == 0)
					evs[e].push_back(ev);
			}
		};
		auto up = [&](int e, sg_assoc_t *a) {
			for (double end = now_s() + 20; now_s() < end;) {
				poll_all();
				for (auto &ev : evs[e])
					if (ev.type == SG_EV_UP) {
						*a = ev.assoc;
						return true;
					}
			}
			return false;
		};
		sg_assoc_t a[4] = {0, 0, 0, 0};
		CHILD_CHECK(sg_connect(ep[0], dcfg[1].ip_be, 5001, &a[0]) == 0);
		CHILD_CHECK(sg_connect(lane[0], dcfg[1].ip_be, 5101,
				       &a[1]) == 0);
		for (int e = 0; e < 4; e++)
			CHILD_CHECK(up(e, &a[e]));
		/* one association per endpoint: each sees exactly one UP */
		for (int e = 0; e < 4; e++)
			CHILD_CHECK(evs[e].size() == 1);

		constexpr uint32_t kMsgs = 300;
		uint32_t sent[2] = {0, 0}, got[2] = {0, 0};
		uint32_t next[2] = {0, 0};
		for (double end = now_s() + 60;
		     (got[0] < kMsgs || got[1] < kMsgs) && now_s() < end;) {
			for (int l = 0; l < 2; l++) {
				if (sent[l] >= kMsgs)
					continue;
				/* stream 1 + lane: tells the lanes apart */
				auto b = make_msg((uint16_t)(1 + l), sent[l],
						  100 + sent[l] * 37 % 3000,
						  false);
				iovec iov = {b.data(), b.size()};

				if (sg_send(all[l], a[l], (uint16_t)(1 + l), 0,
					    PPID_DATA, &iov, 1) == 0)
					sent[l]++;
			}
			poll_all();
			for (int l = 0; l < 2; l++) {
				sg_msg_desc *m = nullptr;

				while (sg_recv(all[2 + l], &m, 1) == 1) {
					std::vector<uint8_t> out;
					MsgHdr h;

					for (sg_msg_desc *x = m; x != nullptr;
					     x = x->next)
						out.insert(out.end(), x->data,
							   x->data + x->len);
					CHILD_CHECK(check_msg(out, h));
					CHILD_CHECK(m->assoc == a[2 + l]);
					CHILD_CHECK(h.stream == 1 + l);
					CHILD_CHECK(h.seq == next[l]++);
					sg_msg_release(m);
					got[l]++;
				}
			}
		}
		CHILD_CHECK(got[0] == kMsgs && got[1] == kMsgs);
		n.report("LANES");
		for (int e = 1; e >= 0; e--) {
			sg_ep_close(lane[e]);
			sg_ep_close(ep[e]);
		}
		n.report("DONE");
	});
	kids.push_back(&c);
	EXPECT_TRUE(expect_line(c, "LANES", 90));
	EXPECT_TRUE(expect_line(c, "DONE", 30));
	EXPECT_EQ(0, reap(c, 30));
}

/*
 * rx_ext close order with several endpoints: usrsctp keeps received packets
 * in the ports' mbufs, and endpoints close one by one while others keep
 * usrsctp up.  One process, a memif pair: port 0 has base 5000 + lane 5100,
 * port 1 base 5001 + lane 5101, an association between the bases and one
 * between the lanes.  Each of the four endpoints is sent 60 messages of
 * 64 KiB and reads none: 16 wait in its descriptors (rx_descs=16), the rest
 * in usrsctp, in mbufs of its port's pool.  Then the endpoints close in
 * @order (lanes before their base).  Once both endpoints of a port are
 * closed, at once (before any other poll runs usrsctp's timers: the caller
 * may close that port and free its pool now) every mbuf of that port's
 * pool is back; mbufs usrsctp still holds are always exactly the pools'
 * mbufs in use (none freed twice, none lost); at the end none is held.
 */
void rx_ext_close_order(std::vector<Child *> &kids, const char *name,
			const std::vector<int> &order)
{
	Child c = spawn([&](Node &n) {
		char cfg[2][1024];
		dp_config dcfg[2];
		sg_config scfg[2], lcfg[2];
		dp_port *port[2] = {nullptr, nullptr};
		sg_ep *all[4] = {nullptr, nullptr, nullptr, nullptr};
		bool open[4] = {false, false, false, false};
		unsigned int base_use[2] = {0, 0};
		int rc_a = -1;

		for (int e = 0; e < 2; e++) {
			snprintf(cfg[e], sizeof(cfg[e]),
				 "dev=net_memif%d,role=%s,id=0,socket=%s/"
				 "memif0.sock,socket-abstract=no "
				 "ip=10.77.1.%d/24 prefix=sdp-%s-%s mem=256 "
				 "link_wait_ms=15000", e,
				 e == 0 ? "server" : "client",
				 g_sockdir.c_str(), e + 1, g_job.c_str(), name);
			CHILD_CHECK(dp_config_parse(cfg[e], &dcfg[e]) == 0);
			CHILD_CHECK(sg_config_parse(
				e == 0 ? "port=5000 rx_descs=16 max_msg=1M"
				       : "port=5001 rx_descs=16 max_msg=1M", &scfg[e]) == 0);
			CHILD_CHECK(sg_config_parse(
				e == 0 ? "port=5100 rx_descs=16 max_msg=1M"
				       : "port=5101 rx_descs=16 max_msg=1M", &lcfg[e]) == 0);
		}
		CHILD_CHECK(dp_eal_init(&dcfg[0]) == 0);
		std::thread t([&] { rc_a = dp_port_open(&dcfg[0], &port[0]); });
		usleep(200 * 1000);
		int rc_b = dp_port_open(&dcfg[1], &port[1]);
		t.join();
		CHILD_CHECK(rc_a == 0 && rc_b == 0);
		for (int e = 0; e < 2; e++)
			base_use[e] = rte_mempool_in_use_count(port[e]->pool);
		/* all[]: 0 base 0, 1 lane 0, 2 base 1, 3 lane 1 */
		for (int e = 0; e < 2; e++) {
			CHILD_CHECK(sg_ep_open(port[e], &scfg[e],
					       &all[2 * e]) == 0);
			CHILD_CHECK(sg_ep_open_lane(all[2 * e], &lcfg[e],
						    &all[2 * e + 1]) == 0);
			open[2 * e] = open[2 * e + 1] = true;
		}
		auto in_use = [&](int p) {
			return (unsigned int)rte_mempool_in_use_count(
				       port[p]->pool) - base_use[p];
		};
		std::vector<sg_event> evs[4];
		auto poll_open = [&] {
			sg_event ev;

			for (int e = 0; e < 4; e++) {
				if (!open[e])
					continue;
				sg_poll(all[e], dp_tsc());
				while (sg_next_event(all[e], &ev) == 0)
					evs[e].push_back(ev);
			}
		};
		auto up = [&](int e, sg_assoc_t *a) {
			for (double end = now_s() + 20; now_s() < end;) {
				poll_open();
				for (auto &ev : evs[e])
					if (ev.type == SG_EV_UP) {
						*a = ev.assoc;
						return true;
					}
			}
			return false;
		};
		sg_assoc_t a[4] = {0, 0, 0, 0};
		CHILD_CHECK(sg_connect(all[0], dcfg[1].ip_be, 5001, &a[0]) == 0);
		CHILD_CHECK(sg_connect(all[1], dcfg[1].ip_be, 5101, &a[1]) == 0);
		for (int e = 0; e < 4; e++)
			CHILD_CHECK(up(e, &a[e]));

		/* every endpoint is sent kCount messages it never reads */
		constexpr uint32_t kCount = 60, kLen = 64u << 10;
		uint32_t sent[4] = {0, 0, 0, 0};
		const int peer_of[4] = {2, 3, 0, 1};
		for (double end = now_s() + 60; now_s() < end;) {
			bool all_sent = true;

			for (int e = 0; e < 4; e++) {
				if (sent[e] >= kCount)
					continue;
				all_sent = false;
				if (sg_send_busy(all[e]))
					continue;
				auto b = make_msg(1, sent[e], kLen, false);
				iovec iov = {b.data(), b.size()};
				int rc = sg_send(all[e], a[e], 1, 0, PPID_DATA,
						 &iov, 1);

				if (rc == 0 || rc == -EINPROGRESS)
					sent[e]++;
			}
			poll_open();
			if (all_sent)
				break;
		}
		for (int e = 0; e < 4; e++)
			CHILD_CHECK(sent[e] == kCount);
		/* let it all arrive: nothing is read, so it stops growing */
		uint32_t held = 0;
		for (double end = now_s() + 30, still = now_s() + 1;
		     now_s() < end && now_s() < still;) {
			poll_open();
			if (sg_rx_ext_held_now() != held) {
				held = sg_rx_ext_held_now();
				still = now_s() + 1;
			}
		}
		sg_stats st[4];
		for (int e = 0; e < 4; e++) {
			sg_ep_stats(all[e], &st[e]);
			fprintf(stderr, "%s: endpoint %d: %" PRIu64 " messages "
				"in descriptors, %" PRIu64 " packets kept\n",
				name, e, st[e].msgs_in, st[e].rx_ext_pkts);
			/* (a lane's packets are counted on its base: the
			 * link's) */
			CHILD_CHECK(e % 2 == 1 || st[e].rx_ext_pkts > 0);
			/* more than its descriptors hold: the rest waits in
			 * usrsctp */
			CHILD_CHECK(st[e].msgs_in < kCount);
		}
		fprintf(stderr, "%s: usrsctp holds %u mbufs (port 0 %u, port 1 "
			"%u in use)\n", name, sg_rx_ext_held_now(), in_use(0),
			in_use(1));
		CHILD_CHECK(sg_rx_ext_held_now() > 0);
		CHILD_CHECK(sg_rx_ext_held_now() == in_use(0) + in_use(1));
		(void)peer_of;

		for (int e : order) {
			int p = e / 2;

			sg_ep_close(all[e]);
			open[e] = false;
			fprintf(stderr, "%s: closed endpoint %d: usrsctp holds "
				"%u, port 0 %u, port 1 %u in use\n", name, e,
				sg_rx_ext_held_now(), in_use(0), in_use(1));
			/* the port's last endpoint: its pool may go now */
			if (!open[2 * p] && !open[2 * p + 1])
				CHILD_CHECK(in_use(p) == 0);
			CHILD_CHECK(sg_rx_ext_held_now() ==
				    in_use(0) + in_use(1));
			/* the others run usrsctp on (timers, the ABORTs
			 * of the closed endpoint's associations) */
			for (double end = now_s() + 0.5; now_s() < end;)
				poll_open();
			CHILD_CHECK(sg_rx_ext_held_now() ==
				    in_use(0) + in_use(1));
			if (!open[2 * p] && !open[2 * p + 1])
				CHILD_CHECK(in_use(p) == 0);
		}
		CHILD_CHECK(sg_rx_ext_held_now() == 0);
		CHILD_CHECK(in_use(0) == 0 && in_use(1) == 0);
		/* ports stay open: see TwoEndpointsInOneProcessOverTwoPorts */
		n.report("DONE");
	});
	kids.push_back(&c);
	EXPECT_TRUE(expect_line(c, "DONE", 180));
	EXPECT_EQ(0, reap(c, 30));
}

TEST_F(SgTwoNodes, RxExtCloseOneSideThenTheOther)
{
	rx_ext_close_order(kids, "close-a", {3, 2, 1, 0});
}

TEST_F(SgTwoNodes, RxExtCloseLanesFirstThenTheBases)
{
	rx_ext_close_order(kids, "close-b", {1, 3, 0, 2});
}

TEST_F(SgTwoNodes, RxExtCloseOneLaneThenTheOtherPort)
{
	rx_ext_close_order(kids, "close-c", {1, 3, 2, 0});
}

} /* namespace */
} /* namespace sgtest */
