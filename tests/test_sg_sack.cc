/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sg_sack.cc - acknowledgements: the SACK hold (sack_hold_us), the
 * last packet of a message SACKed at once (the I bit), and NR-SACK.
 */
#include "sg_twonodes.h"

namespace sgtest {
namespace {

/*
 * SACK hold (sack_hold_us): a ping-pong of @rounds 8-byte messages, the
 * server echoing each at once, both ports batching TX to one burst per
 * poll as af_packet does (memif does not, and does not hold).  Reports the server's TX bursts over the
 * rounds (on af_packet each one is a sendto) and, on the client after the
 * last echo, whether sg_assoc_quiet saw the association quiet before and
 * after one more poll.
 */
void sack_hold_pingpong(SgTwoNodes &fx, const char *sg, uint32_t rounds,
			std::string *bursts, std::string *quiet)
{
	fx.pair_start(sg, sg, [&](Node &n, sg_assoc_t a) {
		dp_stats st0, st1;
		char line[96];
		std::vector<uint8_t> m;
		sg_msg_desc meta;
		/* round 0 warms up (the association's first SACKs) */
		CHILD_CHECK(n.recv(m, meta, 60));
		n.send(a, 0, 0, PPID_BULK, m.data(), m.size());
		dp_port_stats(n.port, &st0);
		for (uint32_t r = 0; r < rounds; r++) {
			CHILD_CHECK(n.recv(m, meta, 60));
			n.send(a, 0, 0, PPID_BULK, m.data(), m.size());
		}
		dp_port_stats(n.port, &st1);
		snprintf(line, sizeof(line), "BURSTS %" PRIu64 " HELD %" PRIu64,
			 st1.tx_bursts - st0.tx_bursts,
			 st1.tx_held - st0.tx_held);
		n.report(line);
	}, [&](Node &n, sg_assoc_t a) {
		char line[96];
		std::vector<uint8_t> m(8), b;
		sg_msg_desc meta;
		for (uint32_t r = 0; r <= rounds; r++) {
			memcpy(m.data(), &r, sizeof(r));
			n.send(a, 0, 0, PPID_BULK, m.data(), m.size());
			CHILD_CHECK(n.recv(b, meta, 60));
			CHILD_CHECK(b == m);
		}
		/* the echo's SACK came with it; ours for the echo is owed */
		bool q0 = sg_assoc_quiet(n.ep, a, dp_tsc());
		n.poll_once();
		bool q1 = sg_assoc_quiet(n.ep, a, dp_tsc());
		snprintf(line, sizeof(line), "QUIET %d %d", q0, q1);
		n.report(line);
	}, true /* af_packet's TX: a burst per poll */);
	EXPECT_TRUE(expect_line(fx.pair_srv, "BURSTS", 120, bursts));
	EXPECT_TRUE(expect_line(fx.pair_cli, "QUIET", 120, quiet));
	printf("%s: %u rounds: %s, %s\n", sg, rounds, bursts->c_str(),
	       quiet->c_str());
	fx.pair_end();
}

/* Without the hold: two bursts per echo (the SACK at the end of the poll
 * that read the message, then the echo), and no SACK owed once that poll
 * is over.  The control for the next test. */
TEST_F(SgTwoNodes, SackAtOnceCostsABurstOfItsOwn)
{
	const uint32_t kRounds = 200;
	std::string bursts, quiet;
	unsigned long long nb = 0, held = 0;

	sack_hold_pingpong(*this, "sack_delay_ms=0 sack_hold_us=0", kRounds,
			   &bursts, &quiet);
	ASSERT_EQ(2, sscanf(bursts.c_str(), "BURSTS %llu HELD %llu", &nb,
			    &held)) << bursts;
	EXPECT_GE(nb, 2ull * kRounds - 5) << bursts;
	EXPECT_EQ(0ull, held);
	EXPECT_EQ("QUIET 1 1", quiet);
}

/* With it: the SACK of the poll that read the message rides in the echo's
 * burst (one burst per echo: on af_packet one sendto per one-way message
 * instead of two), and a flush asking for it (sg_assoc_quiet) releases
 * it: not quiet, then quiet after one poll, not after the hold's 50 ms.
 * Fails without the hold: 2 bursts per echo, nothing held. */
TEST_F(SgTwoNodes, SackHoldRidesWithTheReply)
{
	const uint32_t kRounds = 200;
	std::string bursts, quiet;
	unsigned long long nb = 0, held = 0;

	sack_hold_pingpong(*this, "sack_delay_ms=0 sack_hold_us=50000",
			   kRounds, &bursts, &quiet);
	ASSERT_EQ(2, sscanf(bursts.c_str(), "BURSTS %llu HELD %llu", &nb,
			    &held)) << bursts;
	EXPECT_LE(nb, kRounds + kRounds / 10) << bursts;
	EXPECT_GE(held, kRounds - 5) << bursts;
	EXPECT_EQ("QUIET 0 1", quiet);
}

/* The same with the transport's SACK settings (every second packet, the
 * last of each message at once: sack_delay_ms=5 and the I bit): the echo's
 * SACK is still made in the poll that read the message, so it is held
 * and rides with the echo, and a flush still finds it owed at once (QUIET
 * 0 1; with a delayed SACK it would be 0 0). */
TEST_F(SgTwoNodes, SackHoldRidesWithTheReplyWhenSackingEverySecond)
{
	const uint32_t kRounds = 200;
	std::string bursts, quiet;
	unsigned long long nb = 0, held = 0;

	sack_hold_pingpong(*this, "sack_delay_ms=5 sack_hold_us=50000",
			   kRounds, &bursts, &quiet);
	ASSERT_EQ(2, sscanf(bursts.c_str(), "BURSTS %llu HELD %llu", &nb,
			    &held)) << bursts;
	EXPECT_LE(nb, kRounds + kRounds / 10) << bursts;
	EXPECT_GE(held, kRounds - 5) << bursts;
	EXPECT_EQ("QUIET 0 1", quiet);
}

/* With NR-SACK negotiated (nr_sack=1) every SACK is an NR-SACK chunk
 * (type 16): it is held the same way.  Fails when the hold recognises only
 * the SACK chunk (type 3): 2 bursts per echo, nothing held. */
TEST_F(SgTwoNodes, SackHoldRidesWithTheReplyWithNrSack)
{
	const uint32_t kRounds = 200;
	std::string bursts, quiet;
	unsigned long long nb = 0, held = 0;

	sack_hold_pingpong(*this,
			   "sack_delay_ms=0 sack_hold_us=50000 nr_sack=1",
			   kRounds, &bursts, &quiet);
	ASSERT_EQ(2, sscanf(bursts.c_str(), "BURSTS %llu HELD %llu", &nb,
			    &held)) << bursts;
	EXPECT_LE(nb, kRounds + kRounds / 10) << bursts;
	EXPECT_GE(held, kRounds - 5) << bursts;
	EXPECT_EQ("QUIET 0 1", quiet);
}

/*
 * The I bit (sack_immediate, RFC 7053): the receiver delays SACKs 200 ms
 * and SACKs every second packet.  The sender sends @rounds pairs of
 * messages of 1 and 3 packets (MTU 1500), each once the one before was
 * acknowledged, and reports the median time from sg_send until
 * sg_assoc_quiet (what a flush waits for: everything acknowledged), after
 * a warm-up message.  The
 * receiver reports after how many messages it was quiet right after the
 * poll that read the message (no SACK owed: the last packet's SACK left
 * at once).
 */
void sack_flush(SgTwoNodes &fx, const char *sg_tx, uint32_t rounds,
		double *med_ms, unsigned *rx_quiet)
{
	const uint32_t lens[2] = { 1000u, 4000u };

	fx.pair_start("sack_delay_ms=200 rto_min_ms=500", sg_tx,
		      [&](Node &n, sg_assoc_t a) {
		unsigned q = 0;
		char line[64];
		for (uint32_t k = 0; k <= 2 * rounds; k++) {
			std::vector<uint8_t> b;
			sg_msg_desc meta;
			bool quiet;

			CHILD_CHECK(n.recv(b, meta, 30));
			quiet = sg_assoc_quiet(n.ep, a, dp_tsc());
			if (k == 0) /* warm-up */
				continue;
			CHILD_CHECK(b.size() == lens[k % 2]);
			q += quiet;
		}
		snprintf(line, sizeof(line), "RXQUIET %u", q);
		n.report(line);
	}, [&](Node &n, sg_assoc_t a) {
		std::vector<double> t;
		std::vector<uint8_t> m(lens[1], 0x5a);
		char line[64];
		/* k = 0: warm-up (usrsctp SACKs the first DATA at once) */
		for (uint32_t k = 0; k <= 2 * rounds; k++) {
			iovec iov = { m.data(), k == 0 ? 100 : lens[k % 2] };
			double t0 = now_s();

			CHILD_CHECK(sg_send(n.ep, a, 0, 0, PPID_BULK, &iov,
					    1) == 0);
			CHILD_CHECK(n.wait(
				[&] {
					return sg_assoc_quiet(n.ep, a,
							      dp_tsc());
				},
				30));
			if (k != 0)
				t.push_back(now_s() - t0);
		}
		for (uint32_t k = 0; k < t.size(); k++)
			fprintf(stderr, "%s%.1f", k ? " " : "flush ms: ",
				1000 * t[k]);
		fprintf(stderr, "\n");
		std::sort(t.begin(), t.end());
		snprintf(line, sizeof(line), "MEDIAN %.3f",
			 1000 * (t[t.size() / 2 - 1] + t[t.size() / 2]) / 2);
		n.report(line);
	});
	std::string med, q;
	EXPECT_TRUE(expect_line(fx.pair_cli, "MEDIAN", 120, &med));
	EXPECT_TRUE(expect_line(fx.pair_srv, "RXQUIET", 120, &q));
	*med_ms = strtod(med.c_str() + 7, nullptr);
	*rx_quiet = (unsigned)strtoul(q.c_str() + 8, nullptr, 10);
	printf("%s: %u rounds: %s, %s\n", sg_tx, rounds, med.c_str(),
	       q.c_str());
	fx.pair_end();
}

/* With the I bit (the default): acknowledged well before the receiver's
 * 200 ms delayed SACK, and the receiver owes nothing after each read.
 * Fails without the I bit (see the next test). */
TEST_F(SgTwoNodes, LastPacketOfAMessageIsSackedAtOnce)
{
	const uint32_t kRounds = 8;
	double med = 0;
	unsigned q = 0;

	sack_flush(*this, "", kRounds, &med, &q);
	EXPECT_LT(med, 100.0);
	EXPECT_EQ(2 * kRounds, q);
}

/* The control: without it a flush waits out the delayed SACK (the
 * median message, 1 or 3 packets, has an odd last packet), and after a
 * 1-packet message the receiver owes its SACK. */
TEST_F(SgTwoNodes, WithoutTheIBitAFlushWaitsForTheDelayedSack)
{
	const uint32_t kRounds = 8;
	double med = 0;
	unsigned q = 0;

	sack_flush(*this, "sack_immediate=0", kRounds, &med, &q);
	EXPECT_GE(med, 150.0);
	EXPECT_LE(q, kRounds);
}

/*
 * NR-SACK (nr_sack).  Client -> server, 2% of every packet lost each way
 * (drop=tx:every:50): 400 messages of @len bytes on @streams streams,
 * round-robin; the server checks each message and the order per stream.
 * Then the client's counters: NR-SACK chunks from the server (negotiated
 * by both ends), and those with NR gap blocks (non-renegable data
 * reported above a hole, freed from the client's send buffer before the
 * cumulative ack).  1000 bytes is one packet at the memif MTU of 1500.
 */
struct NrSackRun {
	const char *sg_srv = "nr_sack=1";
	const char *sg_cli = "nr_sack=1";
	uint16_t streams = 10;
	uint32_t len = 1000;
	std::function<void(const sg_stats &)> check;
};

void nr_sack_run(SgTwoNodes *t, const NrSackRun &r)
{
	constexpr uint32_t kCount = 400;

	g_dp_extra = "drop=tx:every:50";
	t->pair_start(r.sg_srv, r.sg_cli, [&](Node &n, sg_assoc_t a) {
		std::vector<uint32_t> next(r.streams);
		std::vector<uint8_t> b;

		for (uint16_t s = 0; s < r.streams; s++)
			next[s] = s; /* the client's i of each stream */
		sg_msg_desc meta;

		for (uint32_t i = 0; i < kCount; i++) {
			MsgHdr h;

			CHILD_CHECK(n.recv(b, meta, 120));
			CHILD_CHECK(meta.ppid == PPID_DATA);
			CHILD_CHECK(check_msg(b, h));
			CHILD_CHECK(h.stream < r.streams &&
				    h.stream == meta.stream);
			CHILD_CHECK(h.seq == next[h.stream]);
			next[h.stream] += r.streams;
		}
		n.send(a, 0, 0, PPID_OK, "ok", 2);
		n.report("DONE");
	}, [&](Node &n, sg_assoc_t a) {
		for (uint32_t i = 0; i < kCount; i++) {
			uint16_t s = (uint16_t)(i % r.streams);
			auto m = make_msg(s, i, r.len, false);
			n.send(a, s, 0, PPID_DATA, m.data(), m.size());
		}
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 180));
		CHILD_CHECK(meta.ppid == PPID_OK);
		sg_stats st;
		sg_ep_stats(n.ep, &st);
		fprintf(stderr, "client: rx_nr_sacks %" PRIu64
			" rx_nr_sacks_nr_gaps %" PRIu64 " sacks_in %" PRIu64
			" retrans_chunks %" PRIu64 "\n", st.rx_nr_sacks,
			st.rx_nr_sacks_nr_gaps, stack_counter("sacks_in"),
			stack_counter("retrans_chunks"));
		/* the loss happened: holes to report */
		CHILD_CHECK(stack_counter("retrans_chunks") > 0);
		r.check(st);
	});
	EXPECT_TRUE(expect_line(t->pair_srv, "DONE", 240));
	t->pair_end();
}

/* Both ends offer it: every SACK is an NR-SACK, and messages complete on
 * other streams than the one with the hole are reported non-renegable. */
TEST_F(SgTwoNodes, NrSackFreesMessagesDeliveredOnOtherStreams)
{
	NrSackRun r;
	r.check = [](const sg_stats &st) {
		CHILD_CHECK(st.rx_nr_sacks > 0);
		CHILD_CHECK(st.rx_nr_sacks_nr_gaps > 0);
	};
	nr_sack_run(this, r);
}

/* One end only (and the default, off): plain SACKs. */
TEST_F(SgTwoNodes, NrSackNeedsBothEnds)
{
	NrSackRun r;
	r.sg_cli = "";
	r.check = [](const sg_stats &st) {
		CHILD_CHECK(st.rx_nr_sacks == 0);
		CHILD_CHECK(st.rx_nr_sacks_nr_gaps == 0);
	};
	nr_sack_run(this, r);
}

/* One ordered stream of one-packet messages: nothing above a hole is
 * delivered, so nr_sack=1 reports no NR gap; nr_sack=2 reports the data
 * held for reordering (below). */
TEST_F(SgTwoNodes, NrSackOneStreamReportsOnlyDeliveredData)
{
	NrSackRun r;
	r.streams = 1;
	r.check = [](const sg_stats &st) {
		CHILD_CHECK(st.rx_nr_sacks > 0);
		CHILD_CHECK(st.rx_nr_sacks_nr_gaps == 0);
	};
	nr_sack_run(this, r);
}

/* Messages of several packets, one stream: usrsctp marks a fragment
 * non-renegable once it joins its message's reassembly (the first
 * fragment and those after it without a gap), delivered or not, so
 * nr_sack=1 frees most of such data above a hole with one stream too. */
TEST_F(SgTwoNodes, NrSackOneStreamFreesFragmentsInReassembly)
{
	NrSackRun r;
	r.streams = 1;
	r.len = 8192;
	r.check = [](const sg_stats &st) {
		CHILD_CHECK(st.rx_nr_sacks > 0);
		CHILD_CHECK(st.rx_nr_sacks_nr_gaps > 0);
	};
	nr_sack_run(this, r);
}

TEST_F(SgTwoNodes, NrSackTwoReportsDataHeldForReordering)
{
	NrSackRun r;
	r.streams = 1;
	r.sg_srv = "nr_sack=2";
	r.sg_cli = "nr_sack=2";
	r.check = [](const sg_stats &st) {
		CHILD_CHECK(st.rx_nr_sacks > 0);
		CHILD_CHECK(st.rx_nr_sacks_nr_gaps > 0);
	};
	nr_sack_run(this, r);
}

/*
 * sg_assoc_answered is sg_assoc_quiet without our own data (what a flush
 * checks once the peer confirmed holding an ep's messages, sctp_dpdk's
 * FLUSH markers): right after sg_send the message is unacknowledged, so
 * the association is not quiet, but this side owes the peer nothing (its
 * echo's SACK left at once, and sg_send flushed the port).  Once the next
 * echo is in and its SACK has left, both hold.
 */
TEST_F(SgTwoNodes, AnsweredWhileOwnDataIsUnacknowledged)
{
	std::string state;

	pair_start("", "", [&](Node &n, sg_assoc_t a) {
		std::vector<uint8_t> m;
		sg_msg_desc meta;
		for (int r = 0; r < 2; r++) {
			CHILD_CHECK(n.recv(m, meta, 60));
			n.send(a, 0, 0, PPID_BULK, m.data(), m.size());
		}
	}, [&](Node &n, sg_assoc_t a) {
		std::vector<uint8_t> m(8, 0x5a), b;
		sg_msg_desc meta;
		char line[64];
		bool q0, a0;
		/* round 0: the association's first SACKs */
		n.send(a, 0, 0, PPID_BULK, m.data(), m.size());
		CHILD_CHECK(n.recv(b, meta, 60));
		n.send(a, 0, 0, PPID_BULK, m.data(), m.size());
		q0 = sg_assoc_quiet(n.ep, a, dp_tsc());
		a0 = sg_assoc_answered(n.ep, a, dp_tsc());
		CHILD_CHECK(n.recv(b, meta, 60));
		CHILD_CHECK(n.wait([&] {
			return sg_assoc_quiet(n.ep, a, dp_tsc());
		}, 30));
		snprintf(line, sizeof(line), "STATE %d %d %d", q0, a0,
			 sg_assoc_answered(n.ep, a, dp_tsc()));
		n.report(line);
	});
	EXPECT_TRUE(expect_line(pair_cli, "STATE", 120, &state));
	EXPECT_EQ("STATE 0 1 1", state);
	pair_end();
}

} /* namespace */
} /* namespace sgtest */
