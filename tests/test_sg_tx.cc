/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sg_tx.cc - the sctp layer's send path (sg_msg.c, sg_conn.c, sg_zc.c):
 * packets written into mbufs or chained by reference (tx_chain_min), large
 * send clusters, a short leading piece sharing a packet, the first packet
 * of a message to an idle association sent early, burst limits and the
 * stream scheduler, and zero-copy sends.
 */
#include "sg_twonodes.h"

namespace sgtest {
namespace {

/* ---- chained TX (tx_chain_min, usrsctp-patches/0004) ---- */

struct ChainRun {
	const char *sg_cli = "";	/* client sctp config */
	const char *dp_cli = "";	/* client dataplane tokens */
	const char *dp_srv = "";	/* server dataplane tokens */
	uint32_t count = 800;		/* messages, client -> server */
	uint32_t min_len = 64u << 10, max_len = 64u << 10;
	/* the client's checks, after the server has everything intact */
	std::function<void(const sg_stats &)> check;
};

/*
 * Client -> server: @r.count messages whose bytes the server checks
 * (make_msg's CRC, sequence); then the client checks its counters, shuts
 * the association down, polls until the TX side drains, and checks that
 * every chain went back to usrsctp and every mbuf to its pool (the count
 * in use back to what it was before the first message).
 */
void chain_run(SgTwoNodes *t, const ChainRun &r)
{
	t->pair_srv = spawn([&](Node &n) {
		n.up(true, "server", "", r.dp_srv);
		sg_event ev;
		CHILD_CHECK(n.wait_event(SG_EV_UP, &ev, 30));
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		for (uint32_t i = 0; i < r.count; i++) {
			MsgHdr h;

			CHILD_CHECK(n.recv(b, meta, 120));
			CHILD_CHECK(meta.ppid == PPID_DATA);
			CHILD_CHECK(check_msg(b, h));
			CHILD_CHECK(h.seq == i);
		}
		n.send(ev.assoc, 0, 0, PPID_OK, "ok", 2);
		n.wait_event(SG_EV_SHUTDOWN, nullptr, 30);
		n.down();
	});
	t->adopt(&t->pair_srv);
	ASSERT_TRUE(wait_server_socket(20));
	t->pair_cli = spawn([&](Node &n) {
		n.up(false, "client", r.sg_cli, r.dp_cli);
		sg_assoc_t a = 0;
		CHILD_CHECK(sg_connect(n.ep, ip_of(1), kSctpPort, &a) == 0);
		CHILD_CHECK(n.wait_event(SG_EV_UP, nullptr, 30));
		unsigned int base = dp_port_mbufs_in_use(n.port);
		std::mt19937 rng(6);
		for (uint32_t i = 0; i < r.count; i++) {
			uint32_t len = r.min_len +
				       rng() % (r.max_len - r.min_len + 1);
			auto m = make_msg(1, i, len, false);
			n.send(a, 1, 0, PPID_DATA, m.data(), m.size());
		}
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 180));
		CHILD_CHECK(meta.ppid == PPID_OK);
		sg_stats st;
		sg_ep_stats(n.ep, &st);
		sg_stats_print(&st, stderr);
		fprintf(stderr, "retrans_chunks %" PRIu64 "\n",
			stack_counter("retrans_chunks"));
		r.check(st);
		sg_disconnect(n.ep, a);
		CHILD_CHECK(n.wait_event(SG_EV_SHUTDOWN, nullptr, 30));
		double t_end = now_s() + 0.3;
		n.wait([&] { return now_s() > t_end; }, 5);
		dp_port_flush(n.port, dp_tsc());
		unsigned int after = dp_port_mbufs_in_use(n.port);
		fprintf(stderr, "mbufs in use: %u before, %u after; chains "
			"held %" PRIu64 "\n", base, after,
			sg_tx_chains_held());
		CHILD_CHECK(sg_tx_chains_held() == 0);
		CHILD_CHECK(after == base);
		/* every large send buffer (tx_cluster, 0005) freed */
		sg_ep_stats(n.ep, &st);
		fprintf(stderr, "tx clusters held %" PRIu64 "\n",
			st.tx_clusters_held);
		CHILD_CHECK(st.tx_clusters_held == 0);
		/* the chains' records are reused: malloc'd up to the chains
		 * in flight at the peak, not once per chained packet (a
		 * malloc and free each before), and all freed at close */
		uint64_t refs_live, refs_mallocs;
		sg_tx_chain_refs(&refs_live, &refs_mallocs);
		fprintf(stderr, "chain records: %" PRIu64 " malloc'd for %"
			PRIu64 " chained packets, %" PRIu64 " live\n",
			refs_mallocs, st.tx_chain_pkts, refs_live);
		CHILD_CHECK(refs_mallocs * 4 <= st.tx_chain_pkts);
		n.report("DONE");
		n.down();
		sg_tx_chain_refs(&refs_live, &refs_mallocs);
		fprintf(stderr, "chain records after close: %" PRIu64
			" live\n", refs_live);
		CHILD_CHECK(refs_live == 0);
	});
	t->adopt(&t->pair_cli);
	EXPECT_TRUE(expect_line(t->pair_cli, "DONE", 300));
	EXPECT_EQ(0, reap(t->pair_cli, 30));
	EXPECT_EQ(0, reap(t->pair_srv, 30));
}

/*
 * 50 MiB whose payload leaves from usrsctp's own buffers: every
 * full-sized DATA packet is a chain (header mbuf + usrsctp's clusters by
 * reference), only headers are copied; intact at the server.  Without
 * 0004 (or with tx_chain_min=0) tx_chain_ref_bytes is 0 and every byte
 * is in tx_direct_bytes, usrsctp's copy into our mbufs.
 */
TEST_F(SgTwoNodes, ChainedTxSendsThePayloadByReference)
{
	ChainRun r;
	r.check = [](const sg_stats &st) {
		CHILD_CHECK(st.bytes_out >= 800ull * (64u << 10));
		CHILD_CHECK(st.tx_chain_pkts > 0);
		CHILD_CHECK(st.tx_chain_ref_bytes >= st.bytes_out / 100 * 95);
		/* copied: the headers of each chain (common header, DATA
		 * chunk header, a bundled SACK at most) ... */
		CHILD_CHECK(st.tx_chain_copy_bytes <= 64 * st.tx_chain_pkts);
		/* ... and the packets below tx_chain_min (the tail of each
		 * 64 KiB message at MTU 1500, ~1.2%), usrsctp's copy (0002);
		 * without chains this is every byte */
		CHILD_CHECK(st.tx_direct_bytes + st.tx_copy_bytes <=
			    st.bytes_out / 50);
		CHILD_CHECK(st.tx_drops == 0);
		CHILD_CHECK(tx_direct(st));
	};
	chain_run(this, r);
}

/*
 * The threshold: messages of 24 B .. 3 KiB; packets below tx_chain_min
 * (1024 by default) keep the copy into one mbuf (0002), the others are
 * chains; all intact, in order.
 */
TEST_F(SgTwoNodes, ChainedTxSmallPacketsKeepTheCopyPath)
{
	ChainRun r;
	r.count = 5000;
	r.min_len = 24;
	r.max_len = 3000;
	r.check = [](const sg_stats &st) {
		CHILD_CHECK(st.tx_chain_pkts > 0);
		CHILD_CHECK(st.tx_direct_pkts > 0);
		CHILD_CHECK(st.tx_direct_bytes > 0);
		CHILD_CHECK(tx_direct(st));
	};
	chain_run(this, r);
}

/* tx_chain_min=0: the chain hook declines every packet: each one is
 * written into one mbuf, as before 0004. */
TEST_F(SgTwoNodes, ChainedTxOffWritesEachPacketIntoOneMbuf)
{
	ChainRun r;
	r.sg_cli = "tx_chain_min=0";
	r.count = 200;
	r.check = [](const sg_stats &st) {
		CHILD_CHECK(st.tx_chain_pkts == 0);
		CHILD_CHECK(st.tx_chain_ref_bytes == 0);
		CHILD_CHECK(st.tx_direct_bytes >= st.bytes_out);
		CHILD_CHECK(tx_direct(st));
	};
	chain_run(this, r);
}

/*
 * 2% of the client's DATA packets lost on the wire (drop=tx:every:50):
 * retransmissions send the same clusters again, by reference, while
 * earlier chains may still hold them; everything arrives intact and every
 * chain and mbuf is returned.
 */
TEST_F(SgTwoNodes, ChainedTxUnderLossDeliversIntactData)
{
	ChainRun r;
	r.dp_cli = "drop=tx:every:50";
	r.count = 400;
	r.check = [](const sg_stats &st) {
		CHILD_CHECK(st.tx_chain_pkts > 0);
		CHILD_CHECK(st.tx_chain_ref_bytes >= st.bytes_out / 100 * 95);
		CHILD_CHECK(stack_counter("retrans_chunks") > 0);
	};
	chain_run(this, r);
}

/* ---- large send clusters (tx_cluster, usrsctp-patches/0005) ---- */

/*
 * At MTU 9000 a full DATA packet carries 8952 bytes.  In 2048-byte
 * clusters (tx_cluster=0, usrsctp's own) that payload is 5 pieces, each a
 * chained segment memif copies on its own; in 64 KiB buffers (the default)
 * one, two where a chunk crosses a buffer's end (~14% of them).  Without
 * 0005 (or with tx_cluster=0) tx_chain_segs is ~5 per packet.
 */
TEST_F(SgTwoNodes, LargeSendClustersMakeOneSegmentPerChunk)
{
	ChainRun r;
	r.dp_cli = "mtu=9000";
	r.dp_srv = "mtu=9000";
	r.count = 400;
	r.check = [](const sg_stats &st) {
		fprintf(stderr, "segments per chained packet: %.3f\n",
			(double)st.tx_chain_segs /
				(double)(st.tx_chain_pkts ? st.tx_chain_pkts
							  : 1));
		CHILD_CHECK(st.tx_cluster_bytes == 64u << 10);
		CHILD_CHECK(st.tx_chain_pkts > 0);
		CHILD_CHECK(st.tx_chain_ref_bytes >= st.bytes_out / 100 * 95);
		CHILD_CHECK(st.tx_chain_segs >= st.tx_chain_pkts);
		CHILD_CHECK(st.tx_chain_segs * 10 <= st.tx_chain_pkts * 13);
		CHILD_CHECK(st.tx_drops == 0);
	};
	chain_run(this, r);
}

/* tx_cluster=0: usrsctp's 2048-byte clusters, as before 0005: a full
 * packet's payload is 5 pieces (the counter counts what it claims). */
TEST_F(SgTwoNodes, SmallSendClustersMakeFiveSegmentsPerJumboChunk)
{
	ChainRun r;
	r.sg_cli = "tx_cluster=0";
	r.dp_cli = "mtu=9000";
	r.dp_srv = "mtu=9000";
	r.count = 200;
	r.check = [](const sg_stats &st) {
		CHILD_CHECK(st.tx_cluster_bytes == 0);
		CHILD_CHECK(st.tx_chain_pkts > 0);
		CHILD_CHECK(st.tx_chain_segs >= 4 * st.tx_chain_pkts);
	};
	chain_run(this, r);
}

/*
 * 2% of the client's DATA packets lost at MTU 9000 with 256 KiB send
 * buffers: retransmissions reference the same large buffers while other
 * chunks' chains still hold them; everything arrives intact and every
 * buffer (tx_clusters_held), chain and mbuf is returned (chain_run).
 */
TEST_F(SgTwoNodes, LargeSendClustersUnderLossDeliverIntactData)
{
	ChainRun r;
	r.sg_cli = "tx_cluster=256k";
	r.dp_cli = "mtu=9000 drop=tx:every:50";
	r.dp_srv = "mtu=9000";
	r.count = 300;
	r.check = [](const sg_stats &st) {
		CHILD_CHECK(st.tx_cluster_bytes == 256u << 10);
		CHILD_CHECK(st.tx_chain_pkts > 0);
		CHILD_CHECK(st.tx_chain_segs * 10 <= st.tx_chain_pkts * 13);
		CHILD_CHECK(stack_counter("retrans_chunks") > 0);
	};
	chain_run(this, r);
}

/*
 * A message given in pieces whose first piece is short (a
 * UCT/UCP header in front of zcopy data) leaves as full packets: at MTU
 * 1500, 16 + 1000 bytes is one packet (it was two: the 16 bytes alone,
 * then the rest, each SACKed), 16 + 2000 bytes is two (was three).  The
 * receiver gets the bytes in order.
 */
TEST_F(SgTwoNodes, ShortLeadingPieceSharesThePacket)
{
	pair_start("", "", [&](Node &n, sg_assoc_t a) {
		for (uint32_t len : { 1016u, 2016u }) {
			sg_msg_desc *m = nullptr;

			CHILD_CHECK(n.wait(
				[&] { return sg_recv(n.ep, &m, 1) == 1; }, 30));
			CHILD_CHECK(m->msg_len == len && m->nb_segs == 1);
			for (uint32_t i = 0; i < len; i++)
				CHILD_CHECK(m->data[i] == (uint8_t)(i * 7 + 1));
			sg_msg_release(m);
		}
		n.send(a, 0, 0, PPID_OK, "ok", 2);
	}, [&](Node &n, sg_assoc_t a) {
		std::vector<uint8_t> m(2016);
		for (size_t i = 0; i < m.size(); i++)
			m[i] = (uint8_t)(i * 7 + 1);
		for (uint32_t payload : { 1000u, 2000u }) {
			iovec iov[2] = { { m.data(), 16 },
					 { m.data() + 16, payload } };
			sg_stats before, after;

			sg_ep_stats(n.ep, &before);
			/* usrsctp emits the packets inside sg_send */
			CHILD_CHECK(sg_send(n.ep, a, 0, 0, PPID_BULK, iov, 2) ==
				    0);
			sg_ep_stats(n.ep, &after);
			char line[96];
			snprintf(line, sizeof(line), "PKTS %u %" PRIu64, payload,
				 after.pkts_out - before.pkts_out);
			n.report(line);
		}
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 60));
	});
	std::string l1, l2;
	EXPECT_TRUE(expect_line(pair_cli, "PKTS 1000", 60, &l1));
	EXPECT_TRUE(expect_line(pair_cli, "PKTS 2000", 60, &l2));
	EXPECT_EQ("PKTS 1000 1", l1);
	EXPECT_EQ("PKTS 2000 2", l2);
	pair_end();
}

/*
 * A message of several packets sent to an idle association
 * (nothing queued or unacknowledged: a request/response exchange) has its
 * first packet handed to usrsctp alone and flushed to the port before the
 * rest is copied, so the receiver works on it meanwhile (16 KiB one-way
 * over memif was both sides' copies of both packets in series).  A
 * message sent while data is in flight goes in one piece (usrsctp would
 * hold an incomplete piece for the SACK anyway), and so does one that fits
 * a packet.  Every byte arrives in order either way.  At MTU 1500:
 * 3000 bytes to an idle association -> 1 early first packet; another
 * 3000 right behind it -> 0; 1000 bytes once all is acknowledged -> 0.
 */
TEST_F(SgTwoNodes, FirstPacketLeavesEarlyOnlyWhenIdle)
{
	const uint32_t lens[] = { 3000u, 3000u, 1000u };

	pair_start("", "", [&](Node &n, sg_assoc_t a) {
		for (uint32_t k = 0; k < 3; k++) {
			std::vector<uint8_t> b;
			sg_msg_desc meta;

			CHILD_CHECK(n.recv(b, meta, 30));
			CHILD_CHECK(b.size() == lens[k]);
			for (uint32_t i = 0; i < lens[k]; i++)
				CHILD_CHECK(b[i] == (uint8_t)(i * 7 + k));
		}
		n.send(a, 0, 0, PPID_OK, "ok", 2);
	}, [&](Node &n, sg_assoc_t a) {
		std::vector<std::vector<uint8_t>> m(3);
		for (uint32_t k = 0; k < 3; k++) {
			m[k].resize(lens[k]);
			for (uint32_t i = 0; i < lens[k]; i++)
				m[k][i] = (uint8_t)(i * 7 + k);
		}
		for (uint32_t k = 0; k < 3; k++) {
			iovec iov = { m[k].data(), m[k].size() };
			sg_stats before, after;
			uint64_t unacked = 1;

			if (k == 2) /* all acknowledged: idle again */
				CHILD_CHECK(n.wait(
					[&] {
						return sg_assoc_unacked(
							       n.ep, a,
							       &unacked) == 0 &&
						       unacked == 0;
					},
					30));
			sg_ep_stats(n.ep, &before);
			/* k == 1 right behind k == 0: no poll, nothing
			 * acknowledged */
			CHILD_CHECK(sg_send(n.ep, a, 0, 0, PPID_BULK, &iov,
					    1) == 0);
			sg_ep_stats(n.ep, &after);
			char line[96];
			snprintf(line, sizeof(line), "EARLY %u %" PRIu64, k,
				 after.tx_first_pkt_early -
					 before.tx_first_pkt_early);
			n.report(line);
		}
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 60));
	});
	std::string l0, l1, l2;
	EXPECT_TRUE(expect_line(pair_cli, "EARLY 0", 60, &l0));
	EXPECT_TRUE(expect_line(pair_cli, "EARLY 1", 60, &l1));
	EXPECT_TRUE(expect_line(pair_cli, "EARLY 2", 60, &l2));
	EXPECT_EQ("EARLY 0 1", l0);
	EXPECT_EQ("EARLY 1 0", l1);
	EXPECT_EQ("EARLY 2 0", l2);
	pair_end();
}

/*
 * SG max_burst reaches usrsctp (SCTP_MAX_BURST): usrsctp starts a path's
 * congestion window at min(sctp_initial_cwnd = 3, max_burst) MTUs and
 * cuts it to flight + max_burst MTUs at every output.  So the first
 * message of a fresh association, ten packets long at MTU 1500, leaves
 * sg_send with 4 packets on the wire by default (usrsctp sends while the
 * flight is below the window, so one packet beyond 3 MTUs) and with 2
 * under max_burst=1 (4 if the key were parsed but not applied).  The
 * receiver still gets the whole message.
 */
class SgFirstFlight : public SgTwoNodes {
      protected:
	void first_flight(const char *sg_extra, uint64_t *pkts);
};

void SgFirstFlight::first_flight(const char *sg_extra, uint64_t *pkts)
{
	const uint32_t len = 14000;

	pair_start(sg_extra, sg_extra, [&](Node &n, sg_assoc_t a) {
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 30));
		CHILD_CHECK(b.size() == len);
		for (uint32_t i = 0; i < len; i++)
			CHILD_CHECK(b[i] == (uint8_t)(i * 13 + 5));
		n.send(a, 0, 0, PPID_OK, "ok", 2);
	}, [&](Node &n, sg_assoc_t a) {
		std::vector<uint8_t> m(len);
		for (uint32_t i = 0; i < len; i++)
			m[i] = (uint8_t)(i * 13 + 5);
		iovec iov = { m.data(), m.size() };
		sg_stats before, after;

		sg_ep_stats(n.ep, &before);
		CHILD_CHECK(sg_send(n.ep, a, 0, 0, PPID_BULK, &iov, 1) == 0);
		sg_ep_stats(n.ep, &after);
		char line[64];
		snprintf(line, sizeof(line), "PKTS %" PRIu64,
			 after.pkts_out - before.pkts_out);
		n.report(line);
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 60));
	});
	std::string l;
	EXPECT_TRUE(expect_line(pair_cli, "PKTS", 60, &l));
	*pkts = strtoull(l.c_str() + 5, nullptr, 10);
	pair_end();
}

TEST_F(SgFirstFlight, MaxBurstLimitsTheFirstFlight)
{
	uint64_t pkts = 0;

	first_flight("max_burst=1", &pkts);
	EXPECT_EQ(2u, pkts);
}

TEST_F(SgFirstFlight, DefaultFirstFlightIsFourPackets)
{
	uint64_t pkts = 0;

	first_flight("", &pkts);
	EXPECT_EQ(4u, pkts);
}

/*
 * A message sent after a pause leaves whole, before sg_send returns, once
 * the association's window has grown: nothing of it waits in usrsctp for
 * SACKs that only a later poll of the sender would process (an MPI rank
 * computing between exchanges does not poll).  The client warms the
 * window with 64000-byte messages, waits until all is acknowledged, stays
 * away 30 ms without polling, then sends one more: the packets that leave
 * inside that sg_send must be all of the message's.  Under usrsctp's
 * default burst limit (max_burst=4: cwnd cut to flight + 4 MTUs at every
 * output) 5 leave and the other 40 wait for the sender's next poll.
 */
class SgWarmFlight : public SgTwoNodes {
      protected:
	void warm_flight(const char *sg_extra, uint64_t *pkts, uint64_t *need);
};

void SgWarmFlight::warm_flight(const char *sg_extra, uint64_t *pkts,
			       uint64_t *need)
{
	const uint32_t len = 64000, warm = 24;

	pair_start(sg_extra, sg_extra, [&](Node &n, sg_assoc_t a) {
		for (uint32_t k = 0; k <= warm; k++) {
			std::vector<uint8_t> b;
			sg_msg_desc meta;
			CHILD_CHECK(n.recv(b, meta, 30));
			CHILD_CHECK(b.size() == len);
			for (uint32_t i = 0; i < len; i++)
				CHILD_CHECK(b[i] == (uint8_t)(i * 11 + k));
		}
		n.send(a, 0, 0, PPID_OK, "ok", 2);
	}, [&](Node &n, sg_assoc_t a) {
		std::vector<uint8_t> m(len);
		uint64_t unacked = 1;
		int frag;

		for (uint32_t k = 0; k <= warm; k++) {
			for (uint32_t i = 0; i < len; i++)
				m[i] = (uint8_t)(i * 11 + k);
			iovec iov = { m.data(), m.size() };
			sg_stats before, after;

			/* all acknowledged, then a pause without polling */
			CHILD_CHECK(n.wait(
				[&] {
					return sg_assoc_unacked(n.ep, a,
								&unacked) == 0 &&
					       unacked == 0;
				},
				30));
			if (k == warm)
				usleep(30000);
			sg_ep_stats(n.ep, &before);
			CHILD_CHECK(sg_send(n.ep, a, 0, 0, PPID_BULK, &iov,
					    1) == 0);
			sg_ep_stats(n.ep, &after);
			if (k == warm) {
				char line[96];
				frag = sg_assoc_frag_bytes(n.ep, a);
				CHILD_CHECK(frag > 0);
				snprintf(line, sizeof(line),
					 "PKTS %" PRIu64 " NEED %u",
					 after.pkts_out - before.pkts_out,
					 (len + frag - 1) / (uint32_t)frag);
				n.report(line);
			}
		}
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 60));
	});
	std::string l;
	EXPECT_TRUE(expect_line(pair_cli, "PKTS", 60, &l));
	EXPECT_EQ(2, sscanf(l.c_str(), "PKTS %" SCNu64 " NEED %" SCNu64, pkts,
			    need));
	pair_end();
}

TEST_F(SgWarmFlight, MessageAfterAPauseLeavesWholeInsideTheSend)
{
	uint64_t pkts = 0, need = 0;

	warm_flight("", &pkts, &need);
	EXPECT_GT(need, 10u);
	EXPECT_EQ(need, pkts);
}

TEST_F(SgWarmFlight, UsrsctpsBurstLimitKeepsMostOfItBack)
{
	uint64_t pkts = 0, need = 0;

	warm_flight("max_burst=4", &pkts, &need);
	EXPECT_GT(need, 10u);
	EXPECT_LT(pkts, need / 2);
}

/*
 * SG stream_sched reaches usrsctp (SCTP_PLUGGABLE_SS).  A fresh
 * association under max_burst=1 sends little at once, so five 14000-byte
 * messages sent back to back (0, 1, 2 on stream 1, then 3, 4 on stream 2)
 * wait in usrsctp's stream queues and its scheduler picks the order they
 * leave in: first come first served (5) keeps the send order; usrsctp's
 * default round-robin takes stream 2's first message before stream 1's
 * last (the farm's 10 streams finished every task late that way).
 */
class SgStreamSched : public SgTwoNodes {
      protected:
	void order(const char *sg_extra, std::string *got);
};

void SgStreamSched::order(const char *sg_extra, std::string *got)
{
	const uint32_t len = 14000, n_msgs = 5;
	static const uint16_t stream_of[] = { 1, 1, 1, 2, 2 };

	pair_start(sg_extra, sg_extra, [&](Node &n, sg_assoc_t a) {
		std::string line = "ORDER";
		for (uint32_t k = 0; k < n_msgs; k++) {
			std::vector<uint8_t> b;
			sg_msg_desc meta;
			CHILD_CHECK(n.recv(b, meta, 60));
			CHILD_CHECK(b.size() == len && b[0] < n_msgs &&
				    meta.stream == stream_of[b[0]]);
			line += " " + std::to_string(b[0]);
		}
		n.report(line.c_str());
		n.send(a, 0, 0, PPID_OK, "ok", 2);
	}, [&](Node &n, sg_assoc_t a) {
		std::vector<uint8_t> m(len);
		for (uint32_t k = 0; k < n_msgs; k++) {
			memset(m.data(), (int)k, len);
			n.send(a, stream_of[k], 0, PPID_BULK, m.data(), len);
		}
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 60));
	});
	EXPECT_TRUE(expect_line(pair_srv, "ORDER", 60, got));
	pair_end();
}

TEST_F(SgStreamSched, FirstComeFirstServedKeepsTheSendOrder)
{
	std::string got;

	order("max_burst=1 stream_sched=5", &got);
	EXPECT_EQ("ORDER 0 1 2 3 4", got);
}

TEST_F(SgStreamSched, DefaultRoundRobinTakesTheOtherStreamFirst)
{
	std::string got;

	order("max_burst=1", &got);
	/* stream 2's first message (3) before stream 1's last (2) */
	EXPECT_LT(got.find('3'), got.find('2')) << got;
}

/* ---- zero-copy send (sg_send_zc, usrsctp-patches/0006) ---- */

/* One buffer of the client's ring.  Its done function checks that usrsctp
 * left the bytes alone (no chunk header or padding written into them) and
 * then overwrites them at once: a completion that came while usrsctp
 * could still send (or resend) them corrupts what the server gets. */
struct ZcSlot {
	std::vector<uint8_t> buf;
	bool busy = false;
	int status = 0;
	bool intact = true;
	uint32_t crc_sent = 0;
};

void zc_slot_done(void *arg, int status)
{
	ZcSlot *s = static_cast<ZcSlot *>(arg);

	s->status = status;
	s->intact = dp_crc32c(DP_CRC_ISAL, s->buf.data(), s->buf.size()) ==
		    s->crc_sent;
	memset(s->buf.data(), 0xee, s->buf.size());
	s->busy = false;
}

/* Send message @seq of @len bytes from @s: the header (MsgHdr, on the
 * stack here) copied, the rest by reference; polls through -EAGAIN. */
void zc_send(Node &n, sg_assoc_t a, ZcSlot &s, uint32_t seq, uint32_t len)
{
	auto m = make_msg(1, seq, len, false);
	uint8_t hdr[sizeof(MsgHdr)];
	double end = now_s() + 60;
	int rc;

	memcpy(hdr, m.data(), sizeof(hdr));
	s.buf.assign(m.begin() + sizeof(hdr), m.end());
	s.crc_sent = dp_crc32c(DP_CRC_ISAL, s.buf.data(), s.buf.size());
	s.busy = true;
	iovec iov[2] = { { hdr, sizeof(hdr) }, { s.buf.data(), s.buf.size() } };
	while ((rc = sg_send_zc(n.ep, a, 1, 0, PPID_DATA, iov, 2, sizeof(hdr),
				zc_slot_done, &s)) == -EAGAIN) {
		CHILD_CHECK(now_s() < end);
		n.poll_once();
	}
	if (rc != 0)
		fprintf(stderr, "sg_send_zc: %d\n", rc);
	CHILD_CHECK(rc == 0);
}

/*
 * Client -> server: @count messages of @len bytes sent with sg_send_zc
 * from a ring of 8 buffers (a buffer is reused as soon as its send
 * completed; its done function overwrote it), under @dp_cli's loss; the
 * server checks every byte (make_msg's CRC, sequence).  Every completion
 * is a success with the sender's bytes untouched; the counters add up;
 * after the shutdown usrsctp references no zero-copy byte and every chain
 * and mbuf is back.
 */
void zc_run(SgTwoNodes *t, const char *dp_cli, uint32_t count, uint32_t len)
{
	t->pair_srv = spawn([&](Node &n) {
		n.up(true, "server", "");
		sg_event ev;
		CHILD_CHECK(n.wait_event(SG_EV_UP, &ev, 30));
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		for (uint32_t i = 0; i < count; i++) {
			MsgHdr h;

			CHILD_CHECK(n.recv(b, meta, 120));
			CHILD_CHECK(meta.ppid == PPID_DATA);
			CHILD_CHECK(check_msg(b, h));
			CHILD_CHECK(h.seq == i);
		}
		n.send(ev.assoc, 0, 0, PPID_OK, "ok", 2);
		n.wait_event(SG_EV_SHUTDOWN, nullptr, 30);
		n.down();
	});
	t->adopt(&t->pair_srv);
	ASSERT_TRUE(wait_server_socket(20));
	t->pair_cli = spawn([&](Node &n) {
		n.up(false, "client", "", dp_cli);
		sg_assoc_t a = 0;
		CHILD_CHECK(sg_connect(n.ep, ip_of(1), kSctpPort, &a) == 0);
		CHILD_CHECK(n.wait_event(SG_EV_UP, nullptr, 30));
		unsigned int base = dp_port_mbufs_in_use(n.port);
		std::vector<ZcSlot> slots(8);
		for (uint32_t i = 0; i < count; i++) {
			ZcSlot &s = slots[i % slots.size()];

			CHILD_CHECK(n.wait([&] { return !s.busy; }, 60));
			CHILD_CHECK(s.status == 0 && s.intact);
			zc_send(n, a, s, i, len);
		}
		CHILD_CHECK(n.wait(
			[&] {
				for (auto &s : slots)
					if (s.busy)
						return false;
				return true;
			},
			60));
		for (auto &s : slots)
			CHILD_CHECK(s.status == 0 && s.intact);
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 180));
		CHILD_CHECK(meta.ppid == PPID_OK);
		sg_stats st;
		sg_zc_stats zs;
		sg_ep_stats(n.ep, &st);
		sg_ep_zc_stats(n.ep, &zs);
		fprintf(stderr, "zc: msgs %" PRIu64 " bytes %" PRIu64
			" copy_bytes %" PRIu64 " done %" PRIu64
			" done_err %" PRIu64 " outstanding %" PRIu64
			"; tx_chain_ref_bytes %" PRIu64 " retrans_chunks %"
			PRIu64 "\n", zs.msgs, zs.bytes, zs.copy_bytes,
			zs.done, zs.done_err, zs.outstanding,
			st.tx_chain_ref_bytes,
			stack_counter("retrans_chunks"));
		CHILD_CHECK(zs.msgs == count && zs.done == count);
		CHILD_CHECK(zs.done_err == 0 && zs.outstanding == 0);
		/* records reused after their done: no more than the
		 * messages in flight (one per slot), not one per message */
		fprintf(stderr, "zc: %" PRIu64 " records for %" PRIu64
			" messages\n", zs.records, zs.msgs);
		CHILD_CHECK(zs.records <= slots.size());
		CHILD_CHECK(zs.copy_bytes == count * sizeof(MsgHdr));
		CHILD_CHECK(zs.bytes == (uint64_t)count * len);
		CHILD_CHECK(st.tx_chain_ref_bytes >= st.bytes_out / 100 * 90);
		if (dp_cli[0] != '\0')
			CHILD_CHECK(stack_counter("retrans_chunks") > 0);
		sg_disconnect(n.ep, a);
		CHILD_CHECK(n.wait_event(SG_EV_SHUTDOWN, nullptr, 30));
		double t_end = now_s() + 0.3;
		n.wait([&] { return now_s() > t_end; }, 5);
		dp_port_flush(n.port, dp_tsc());
		unsigned int after = dp_port_mbufs_in_use(n.port);
		fprintf(stderr, "mbufs in use: %u before, %u after; chains "
			"held %" PRIu64 ", zero-copy sends held %" PRIu64 "\n",
			base, after, sg_tx_chains_held(), sg_zc_held());
		CHILD_CHECK(sg_zc_held() == 0);
		CHILD_CHECK(sg_tx_chains_held() == 0);
		CHILD_CHECK(after == base);
		n.report("DONE");
		n.down();
	});
	t->adopt(&t->pair_cli);
	EXPECT_TRUE(expect_line(t->pair_cli, "DONE", 300));
	EXPECT_EQ(0, reap(t->pair_cli, 30));
	EXPECT_EQ(0, reap(t->pair_srv, 30));
}

/* 64 KiB messages sent from the caller's memory (zero-copy send). */
TEST_F(SgTwoNodes, ZeroCopySendCompletesOnlyWhenReleased)
{
	zc_run(this, "", 800, 64u << 10);
}

/* 2% of the client's DATA packets lost: retransmissions read the
 * caller's buffers again, so completions wait for the SACKs that cover
 * them; 1 MiB messages (big sends continued from sg_poll). */
TEST_F(SgTwoNodes, ZeroCopySendUnderLossDeliversIntactData)
{
	zc_run(this, "drop=tx:every:50", 60, 1u << 20);
}

/*
 * The bytes really are referenced, not copied: 1 MiB to an idle
 * association, whose first window leaves inside sg_send_zc; the client
 * then changes the buffer's last byte (the contract forbids it; a probe
 * here) before the first poll, and the server receives the changed byte.
 * With usrsctp's copy (sg_send) it would receive the original.
 */
TEST_F(SgTwoNodes, ZeroCopySendReferencesTheCallersBytes)
{
	pair_start(
		"", "",
		[&](Node &n, sg_assoc_t) {
			std::vector<uint8_t> b;
			sg_msg_desc meta;
			CHILD_CHECK(n.recv(b, meta, 60));
			CHILD_CHECK(b.size() == 1u << 20);
			fprintf(stderr, "last byte %#x\n", b.back());
			CHILD_CHECK(b.back() == 0x5a);
			CHILD_CHECK(b.front() == 0x11);
		},
		[&](Node &n, sg_assoc_t a) {
			std::vector<uint8_t> buf(1u << 20, 0x11);
			bool done = false;
			int status = 1;
			iovec iov = { buf.data(), buf.size() };
			auto fn = [](void *arg, int st) {
				*static_cast<int *>(arg) = st;
			};
			CHILD_CHECK(sg_send_zc(n.ep, a, 1, 0, PPID_DATA, &iov,
					       1, 0, fn, &status) == 0);
			buf.back() = 0x5a;
			CHILD_CHECK(n.wait([&] { return status != 1; }, 60));
			done = status == 0;
			CHILD_CHECK(done);
		});
	pair_end();
}

/*
 * sg_assoc_zc_detach: a 2 MiB zero-copy message (four times the client's
 * 512 KiB send buffer: the rest is continued from sg_poll) is detached right after
 * sg_send_zc, before any SACK: usrsctp's queued references become copies
 * and the rest not yet handed over is copied.  Once the port has let go
 * of the packets it already built (chains held 0) the caller overwrites
 * the whole buffer; the server must still receive the original bytes
 * (retransmissions and the rest come from the copies), and done reports
 * success (possibly before the copied rest is handed over: done tells
 * that the buffer is free, sg_send_busy that the message is still
 * going).  Without the detach the rest would carry the overwritten
 * bytes.
 */
TEST_F(SgTwoNodes, ZeroCopyDetachLetsTheCallerReuseTheBufferAtOnce)
{
	const size_t len = 2u << 20;

	pair_start(
		"", "sndbuf=512K",
		[&](Node &n, sg_assoc_t) {
			std::vector<uint8_t> b;
			sg_msg_desc meta;
			CHILD_CHECK(n.recv(b, meta, 60));
			CHILD_CHECK(b.size() == len);
			size_t bad = 0;
			for (size_t i = 0; i < b.size(); i++)
				if (b[i] != (uint8_t)(i * 7 + 1))
					bad++;
			fprintf(stderr, "detach: %zu of %zu bytes differ\n",
				bad, b.size());
			CHILD_CHECK(bad == 0);
		},
		[&](Node &n, sg_assoc_t a) {
			std::vector<uint8_t> buf(len);
			int status = 1;
			for (size_t i = 0; i < len; i++)
				buf[i] = (uint8_t)(i * 7 + 1);
			iovec iov = { buf.data(), buf.size() };
			auto fn = [](void *arg, int st) {
				*static_cast<int *>(arg) = st;
			};
			CHILD_CHECK(sg_send_zc(n.ep, a, 1, 0, PPID_DATA, &iov,
					       1, 0, fn, &status) == 0);
			CHILD_CHECK(sg_send_busy(n.ep));
			ssize_t copied = sg_assoc_zc_detach(n.ep, a,
							    buf.data(), len);
			fprintf(stderr, "detach: %zd bytes copied\n", copied);
			CHILD_CHECK(copied > 0);
			/* the packets the port already holds: no sg_poll
			 * (no SACK is read) while they go */
			double end = now_s() + 5;
			while (sg_tx_chains_held() != 0 && now_s() < end)
				dp_port_flush(n.port, dp_tsc());
			CHILD_CHECK(sg_tx_chains_held() == 0);
			memset(buf.data(), 0xee, len);
			/* done may come before the copied rest is handed
			 * over: the message is sg's until sg_send_busy ends */
			CHILD_CHECK(n.wait(
				[&] {
					return status != 1 &&
					       !sg_send_busy(n.ep);
				},
				60));
			CHILD_CHECK(status == 0);
			sg_zc_stats zs;
			sg_ep_zc_stats(n.ep, &zs);
			CHILD_CHECK(zs.detached_bytes == (uint64_t)copied);
			CHILD_CHECK(zs.done == 1 && zs.done_err == 0);
		});
	pair_end();
}

/*
 * The peer dies with zero-copy sends outstanding: once the association
 * is lost every send usrsctp let go of completes with -ECONNRESET (none
 * completes twice).  Chained packets that the memif port keeps for a
 * peer that may come back (dp_rings_off: frames stay) still reference
 * their bytes: those sends stay outstanding, never completed early, and
 * are released when the port closes (no zero-copy byte held after it).
 */
TEST_F(SgTwoNodes, ZeroCopySendsCompleteWithAnErrorWhenThePeerIsLost)
{
	Child srv = spawn([&](Node &n) {
		n.up(true, "server", kFastFail);
		sg_event ev;
		CHILD_CHECK(n.wait_event(SG_EV_UP, &ev, 30));
		n.report("UP");
		n.wait([] { return false; }, 60); /* until killed */
		_exit(4);
	});
	kids.push_back(&srv);
	ASSERT_TRUE(wait_server_socket(20));
	Child cli = spawn([&](Node &n) {
		n.up(false, "client", kFastFail);
		sg_assoc_t a = 0;
		CHILD_CHECK(sg_connect(n.ep, ip_of(1), kSctpPort, &a) == 0);
		CHILD_CHECK(n.wait_event(SG_EV_UP, nullptr, 30));
		std::vector<ZcSlot> slots(4);
		uint32_t seq = 0;
		bool reported = false, lost = false;
		/* keep every buffer busy until the association is gone */
		CHILD_CHECK(n.wait(
			[&] {
				for (auto &e : n.events)
					if (e.type == SG_EV_LOST)
						lost = true;
				if (lost)
					return true;
				for (auto &s : slots) {
					if (s.busy)
						continue;
					if (!sg_assoc_up(n.ep, a))
						return false;
					CHILD_CHECK(s.status == 0);
					zc_send(n, a, s, seq++, 256u << 10);
				}
				if (!reported) {
					n.report("SENDING");
					reported = true;
				}
				return false;
			},
			60));
		/* until nothing changes for 2 s */
		uint64_t last = UINT64_MAX;
		double quiet_end = now_s() + 2;
		n.wait(
			[&] {
				sg_zc_stats z;
				sg_ep_zc_stats(n.ep, &z);
				if (z.outstanding != last) {
					last = z.outstanding;
					quiet_end = now_s() + 2;
				}
				return now_s() > quiet_end;
			},
			30);
		sg_zc_stats zs;
		sg_ep_zc_stats(n.ep, &zs);
		dp_port_flush(n.port, dp_tsc());
		uint64_t chains = sg_tx_chains_held();
		fprintf(stderr, "zc: msgs %" PRIu64 " done %" PRIu64
			" done_err %" PRIu64 " outstanding %" PRIu64
			", held %" PRIu64 ", chains held %" PRIu64 "\n",
			zs.msgs, zs.done, zs.done_err, zs.outstanding,
			sg_zc_held(), chains);
		CHILD_CHECK(zs.done + zs.outstanding == zs.msgs);
		CHILD_CHECK(zs.done_err >= 1);
		/* what is still outstanding is held by a chained packet */
		CHILD_CHECK(zs.outstanding == 0 || chains != 0);
		int errs = 0, busy = 0;
		for (auto &s : slots) {
			errs += !s.busy && s.status == -ECONNRESET;
			busy += s.busy;
		}
		CHILD_CHECK(errs >= 1);
		CHILD_CHECK((uint64_t)busy == zs.outstanding);
		n.down();
		fprintf(stderr, "after close: zero-copy sends held %" PRIu64
			", chains held %" PRIu64 "\n", sg_zc_held(),
			sg_tx_chains_held());
		CHILD_CHECK(sg_zc_held() == 0);
		CHILD_CHECK(sg_tx_chains_held() == 0);
		/* their done never ran: the buffers stayed valid */
		for (auto &s : slots)
			CHILD_CHECK(!s.busy || s.status == 0);
		n.report("DONE");
	});
	kids.push_back(&cli);
	ASSERT_TRUE(expect_line(srv, "UP", 40));
	ASSERT_TRUE(expect_line(cli, "SENDING", 40));
	usleep(50000);
	kill(srv.pid, SIGKILL);
	reap(srv, 5);
	EXPECT_TRUE(expect_line(cli, "DONE", 60));
	EXPECT_EQ(0, reap(cli, 30));
}

} /* namespace */
} /* namespace sgtest */
