/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_pace.cc - unit tests of pacing/ with a fake clock: now_tsc is a plain
 * number the test chooses, so every boundary is asserted exactly and nothing
 * sleeps.  Expected values are derived from the seed 001 numbers (1500-byte
 * IP packets at 500 Mbit/s on GbE) and from exact 128-bit rationals.
 */
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "pace_internal.h"

/* C sees pending_rate_bps as _Atomic: the layouts must agree (pace_queue.c
 * asserts the same numbers). */
static_assert(sizeof(pace_queue) == 256, "pace_queue layout");
static_assert(offsetof(pace_queue, stats) == 128, "pace_queue layout");
static_assert(offsetof(pace_queue, pending_rate_bps) == 192,
	      "pace_queue layout");

namespace {

constexpr uint64_t kGbps = 1000000000ULL;
constexpr uint64_t kMbps = 1000000ULL;
constexpr uint32_t kFrame1500 = 1514; /* 1500-byte IP packet, no FCS */
constexpr uint32_t kWire1500 = 1538;  /* + preamble 8, FCS 4, IFG 12 */

/* Captures SDP_LOG output so tests can count and read error lines. */
std::vector<std::string> g_log;

void capture_sink(enum sdp_log_level, enum sdp_log_comp comp, const char *msg)
{
	if (comp == SDP_COMP_PACE)
		g_log.push_back(msg);
}

class LogCapture
{
      public:
	LogCapture()
	{
		g_log.clear();
		sdp_log_set_sink(capture_sink);
	}
	~LogCapture()
	{
		sdp_log_set_sink(nullptr);
	}
};

pace_config make_config(uint64_t tsc_hz, uint64_t link_bps,
			uint64_t target_bps, enum pace_mode mode)
{
	pace_config cfg;

	pace_config_default(&cfg);
	cfg.tsc_hz = tsc_hz;
	cfg.link_rate_bps = link_bps;
	cfg.target_rate_bps = target_bps;
	cfg.mode = mode;
	return cfg;
}

/* A profile plus one queue, initialised at start_tsc. */
struct Paced {
	pace_profile profile;
	pace_queue q;

	Paced(const pace_config &cfg, uint64_t start_tsc)
	{
		EXPECT_EQ(0, pace_profile_init(&profile, &cfg));
		EXPECT_EQ(0, pace_queue_init(&q, &profile, start_tsc));
	}
	pace_stats stats() const
	{
		pace_stats s;

		pace_queue_stats_get(&q, &s);
		return s;
	}
};

/* floor(a * b / c) exactly. */
uint64_t muldiv(uint64_t a, uint64_t b, uint64_t c)
{
	return (uint64_t)((pace_u128)a * b / c);
}

/* Varied but deterministic frame sizes, 40 .. 1514 bytes. */
uint32_t frame_size(uint64_t i)
{
	return 40 + (uint32_t)((i * 7919) % 1475);
}

} /* namespace */

TEST(PaceWire, WireBytesIncludePaddingAndOverheads)
{
	EXPECT_EQ(kWire1500, pace_wire_bytes(kFrame1500));
	EXPECT_EQ(84u, pace_wire_bytes(60));
	EXPECT_EQ(84u, pace_wire_bytes(42)); /* padded to 60 + FCS = 64 */
	EXPECT_EQ(85u, pace_wire_bytes(61));
	EXPECT_EQ(84u, PACE_GAP_MIN_WIRE_BYTES);
}

/* Seed 001: 1500 B at 500 Mbit/s -> 1538 * 8 / 5e8 s = 24.608 us apart. */
TEST(PaceDeadline, Seed001SpacingExactAt2GHzAnd1GHz)
{
	const struct {
		uint64_t tsc_hz, interval_tsc;
	} cases[] = {{2 * kGbps, 49216}, {kGbps, 24608}};

	for (const auto &c : cases) {
		Paced p(make_config(c.tsc_hz, kGbps, 500 * kMbps,
				    PACE_MODE_DEADLINE),
			1000);
		uint64_t now = 1000;

		for (int i = 0; i < 10; i++) {
			ASSERT_TRUE(pace_may_send(&p.q, now));
			pace_frame_sent(&p.q, kFrame1500, now);
			EXPECT_EQ(now + c.interval_tsc,
				  pace_queue_next_tsc(&p.q));
			EXPECT_FALSE(pace_may_send(&p.q, now + c.interval_tsc -
								 1));
			now += c.interval_tsc;
		}
		EXPECT_EQ(1000 + 10 * c.interval_tsc, pace_queue_next_tsc(&p.q));
		pace_stats s = p.stats();
		EXPECT_EQ(10u, s.frames);
		EXPECT_EQ(10u * kWire1500, s.wire_bytes);
		EXPECT_EQ(0u, s.late_polls);
		EXPECT_EQ(0u, s.clamps);
	}
}

/* Half the link rate: one gap frame of the same size follows each frame. */
TEST(PaceGap, HalfRateOneEqualGapFrame)
{
	Paced p(make_config(kGbps, kGbps, 500 * kMbps, PACE_MODE_GAP), 0);
	uint16_t sizes[4];

	for (int i = 0; i < 3; i++) {
		ASSERT_TRUE(pace_may_send(&p.q, 0));
		pace_frame_sent(&p.q, kFrame1500, 0);
		EXPECT_EQ(kWire1500, p.q.gap_debt_bytes);
		EXPECT_FALSE(pace_may_send(&p.q, UINT64_MAX / 2));
		ASSERT_EQ(1, pace_gap_plan(&p.q, sizes, 4));
		EXPECT_EQ(kFrame1500, sizes[0]); /* 1518 with FCS */
		EXPECT_EQ(0u, p.q.gap_debt_bytes);
	}
	/* Frame + gap on the wire at 1 Gbit/s: 24.608 us = 24608 ns. */
	uint64_t spacing_ns = muldiv(2 * kWire1500, 8 * kGbps, kGbps);
	EXPECT_EQ(24608u, spacing_ns);
	pace_stats s = p.stats();
	EXPECT_EQ(3u, s.gap_frames);
	EXPECT_EQ(3u * kWire1500, s.gap_bytes);
}

TEST(PaceGap, SmallGapIsCarriedIntoNextGap)
{
	/* 97% of GbE: 1538 * 30 / 970 = 47.57 wire bytes, below 84. */
	Paced p(make_config(kGbps, kGbps, 970 * kMbps, PACE_MODE_GAP), 0);
	uint16_t sizes[4];

	pace_frame_sent(&p.q, kFrame1500, 0);
	EXPECT_EQ(0, pace_gap_plan(&p.q, sizes, 4));
	EXPECT_EQ(47u, p.q.gap_debt_bytes);
	EXPECT_TRUE(pace_may_send(&p.q, 0)); /* only a carried gap is owed */

	pace_frame_sent(&p.q, kFrame1500, 0);
	EXPECT_EQ(muldiv(2 * kWire1500, 30, 970), p.q.gap_debt_bytes); /* 95 */
	ASSERT_EQ(1, pace_gap_plan(&p.q, sizes, 4));
	EXPECT_EQ(95u - 24u, sizes[0]);
	EXPECT_EQ(0u, p.q.gap_debt_bytes);
}

TEST(PaceGap, SplitJustAboveMaxGivesTwoLegalFrames)
{
	Paced p(make_config(kGbps, kGbps, 500 * kMbps, PACE_MODE_GAP), 0);
	uint16_t sizes[4];

	p.q.gap_debt_bytes = 1538 + 50; /* max wire frame + less than 84 */
	ASSERT_EQ(2, pace_gap_plan(&p.q, sizes, 4));
	EXPECT_EQ(1588u - 84u - 24u, sizes[0]);
	EXPECT_EQ(60u, sizes[1]);
	EXPECT_EQ(0u, p.q.gap_debt_bytes);

	/* A capped plan leaves the rest owed, and blocks the next frame. */
	p.q.gap_debt_bytes = 10000;
	ASSERT_EQ(2, pace_gap_plan(&p.q, sizes, 2));
	EXPECT_EQ(1514u, sizes[0]);
	EXPECT_EQ(1514u, sizes[1]);
	EXPECT_EQ(10000u - 2 * 1538u, p.q.gap_debt_bytes);
	EXPECT_FALSE(pace_may_send(&p.q, 0));
}

/* Sizes legal, planned + owed == exact gap, for several limits and rates. */
TEST(PaceGap, PlansLegalAndSumToExactGap)
{
	const uint32_t max_frames[] = {64, 128, 200, 1518, 9018};
	const uint64_t rates[] = {1 * kMbps, 100 * kMbps, 333333333,
				  777 * kMbps, 999999999};

	for (uint32_t max_frame : max_frames) {
		for (uint64_t rate : rates) {
			pace_config cfg = make_config(kGbps, kGbps, rate,
						      PACE_MODE_GAP);
			cfg.gap_frame_max_bytes = max_frame;
			Paced p(cfg, 0);
			uint64_t sum_wire = 0, planned = 0;
			uint16_t sizes[8];

			for (uint64_t i = 0; i < 2000; i++) {
				uint32_t f = frame_size(i);

				pace_frame_sent(&p.q, f, 0);
				sum_wire += pace_wire_bytes(f);
				uint16_t n = pace_gap_plan(&p.q, sizes,
							   (uint16_t)(1 + i % 8));
				for (uint16_t k = 0; k < n; k++) {
					ASSERT_GE(sizes[k], 60u);
					ASSERT_LE(sizes[k], max_frame - 4u);
					planned += sizes[k] + 24u;
				}
			}
			uint64_t exact = muldiv(sum_wire, kGbps - rate, rate);
			uint64_t got = planned + p.q.gap_debt_bytes;
			EXPECT_LE(got, exact) << max_frame << " " << rate;
			EXPECT_LE(exact - got, 1u) << max_frame << " " << rate;
			EXPECT_EQ(planned, p.stats().gap_bytes);
			EXPECT_EQ(0u, p.stats().clamps);
		}
	}
}

TEST(PaceGap, PauseFrameBytesExact)
{
	const uint8_t mac[6] = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
	uint8_t expect[60] = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x01, /* dst */
			      0x02, 0x11, 0x22, 0x33, 0x44, 0x55, /* src */
			      0x88, 0x08,			  /* type */
			      0x00, 0x00,  /* reserved opcode, not PAUSE */
			      0x00, 0x00};
	uint8_t buf[1600];

	memset(buf, 0xaa, sizeof(buf));
	ASSERT_EQ(0, pace_gap_frame_build(buf, sizeof(buf), 60, mac));
	EXPECT_EQ(0, memcmp(expect, buf, 60));
	EXPECT_EQ(0xaa, buf[60]); /* nothing written past frame_bytes */

	memset(buf, 0xaa, sizeof(buf));
	ASSERT_EQ(0, pace_gap_frame_build(buf, sizeof(buf), 1514, mac));
	EXPECT_EQ(0, memcmp(expect, buf, 60));
	for (int i = 60; i < 1514; i++)
		ASSERT_EQ(0, buf[i]) << i;
	EXPECT_EQ(0xaa, buf[1514]);
	EXPECT_EQ(1, pace_is_gap_frame(buf, 1514));

	EXPECT_EQ(-EINVAL, pace_gap_frame_build(buf, sizeof(buf), 59, mac));
	EXPECT_EQ(-EINVAL, pace_gap_frame_build(buf, 9015, 9015, mac));
	EXPECT_EQ(-EINVAL, pace_gap_frame_build(buf, 100, 101, mac));
	EXPECT_EQ(-EINVAL, pace_gap_frame_build(nullptr, 100, 60, mac));
	EXPECT_EQ(-EINVAL, pace_gap_frame_build(buf, 100, 60, nullptr));
}

/* A gap frame is never a PAUSE frame: PAUSE with pause time 0 is an XON,
 * which would cancel the pause the port's own flow control asked for. */
TEST(PaceGap, GapFrameIsNeverAnXon)
{
	const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 1};
	uint8_t f[1514];

	for (uint32_t len : {60u, 64u, 1000u, 1514u}) {
		ASSERT_EQ(0, pace_gap_frame_build(f, sizeof(f), len, mac));
		ASSERT_EQ(0x88, f[12]);
		ASSERT_EQ(0x08, f[13]);
		uint16_t opcode = (uint16_t)(f[14] << 8 | f[15]);
		EXPECT_NE(PACE_PAUSE_OPCODE, opcode) << len;
		EXPECT_NE(0x0101, opcode) << len; /* PFC, also a pause */
		EXPECT_EQ(PACE_GAP_OPCODE, opcode) << len;
	}
}

TEST(PaceGap, RecogniserAcceptsOnlyGapFrames)
{
	const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 1};
	uint8_t good[60], bad[60];

	ASSERT_EQ(0, pace_gap_frame_build(good, sizeof(good), 60, mac));
	EXPECT_EQ(1, pace_is_gap_frame(good, 60));
	EXPECT_EQ(1, pace_is_gap_frame(good, 18));
	EXPECT_EQ(0, pace_is_gap_frame(good, 17));
	EXPECT_EQ(0, pace_is_gap_frame(nullptr, 60));

	const struct {
		int offset;
		uint8_t value;
	} breaks[] = {
		{0, 0x03},  /* dst */
		{5, 0x02},  /* dst: PFC/other reserved address */
		{12, 0x08}, /* ether type 0x0808 */
		{13, 0x00}, /* ether type 0x8800 */
		{14, 0x01}, /* opcode 0x0101 (PFC) */
		{15, 0x01}, /* opcode 0x0001 (PAUSE) */
		{15, 0x02}, /* opcode 0x0002 */
		{16, 0xff}, /* real pause time */
		{17, 0x01},
	};
	for (const auto &b : breaks) {
		memcpy(bad, good, sizeof(bad));
		bad[b.offset] = b.value;
		EXPECT_EQ(0, pace_is_gap_frame(bad, 60)) << b.offset;
	}
}

/* A million frames at awkward rates end within 1 cycle of the exact rational
 * schedule: fractions are carried, never lost. */
TEST(PaceDeadline, NoDriftOverMillionFrames)
{
	const uint64_t tsc_hz = 2399999999ULL; /* awkward on purpose */
	const uint64_t rate = 333333333ULL;
	const uint64_t start = 12345;
	Paced p(make_config(tsc_hz, 10 * kGbps, rate, PACE_MODE_DEADLINE),
		start);
	uint64_t sum_wire = 0;

	for (uint64_t i = 0; i < 1000000; i++) {
		uint64_t now = pace_queue_next_tsc(&p.q);
		uint32_t f = frame_size(i);

		ASSERT_TRUE(pace_may_send(&p.q, now));
		pace_frame_sent(&p.q, f, now);
		sum_wire += pace_wire_bytes(f);
	}
	uint64_t exact = muldiv(sum_wire, 8 * tsc_hz, rate);
	uint64_t got = pace_queue_next_tsc(&p.q) - start;
	EXPECT_LE(got, exact);
	EXPECT_LE(exact - got, 1u);
	EXPECT_EQ(0u, p.stats().late_polls);
}

TEST(PaceGap, NoDriftOverMillionFrames)
{
	const uint64_t rate = 123456789ULL;
	Paced p(make_config(kGbps, kGbps, rate, PACE_MODE_GAP), 0);
	uint64_t sum_wire = 0, planned = 0;
	uint16_t sizes[16];

	for (uint64_t i = 0; i < 1000000; i++) {
		uint32_t f = frame_size(i);

		ASSERT_TRUE(pace_may_send(&p.q, 0));
		pace_frame_sent(&p.q, f, 0);
		sum_wire += pace_wire_bytes(f);
		uint16_t n = pace_gap_plan(&p.q, sizes, 16);
		for (uint16_t k = 0; k < n; k++)
			planned += sizes[k] + 24u;
	}
	uint64_t exact = muldiv(sum_wire, kGbps - rate, rate);
	uint64_t got = planned + p.q.gap_debt_bytes;
	EXPECT_LE(got, exact);
	EXPECT_LE(exact - got, 1u);
}

TEST(PaceRate, ChangeIsPublishedThenAppliedAtSync)
{
	Paced p(make_config(kGbps, kGbps, 500 * kMbps, PACE_MODE_DEADLINE), 0);
	uint64_t now = 0;

	EXPECT_EQ(0, pace_queue_sync(&p.q)); /* nothing pending */
	/* Publish from another thread, as the control thread does. */
	std::thread ctl([&p] {
		EXPECT_EQ(0, pace_queue_set_rate_bps(&p.q, 100 * kMbps));
		EXPECT_EQ(0, pace_queue_set_rate_bps(&p.q, 250 * kMbps));
	});
	ctl.join();

	pace_frame_sent(&p.q, kFrame1500, now); /* old rate until sync */
	EXPECT_EQ(24608u, pace_queue_next_tsc(&p.q));
	EXPECT_EQ(500 * kMbps, p.q.rate_bps);

	now = pace_queue_next_tsc(&p.q);
	EXPECT_EQ(1, pace_queue_sync(&p.q)); /* the later publish wins */
	EXPECT_EQ(250 * kMbps, p.q.rate_bps);
	pace_frame_sent(&p.q, kFrame1500, now);
	EXPECT_EQ(24608u + 49216u, pace_queue_next_tsc(&p.q));
	EXPECT_EQ(0, pace_queue_sync(&p.q));
	EXPECT_EQ(1u, p.stats().rate_changes);

	/* Rate 0: unpaced from the next sync on. */
	EXPECT_EQ(0, pace_queue_set_rate_bps(&p.q, 0));
	EXPECT_EQ(1, pace_queue_sync(&p.q));
	now = pace_queue_next_tsc(&p.q);
	pace_frame_sent(&p.q, kFrame1500, now);
	EXPECT_TRUE(pace_may_send(&p.q, now));
	EXPECT_EQ(2u, p.stats().rate_changes);
}

TEST(PaceRate, ChangeAboveLinkRejectedAndNothingPublished)
{
	Paced p(make_config(kGbps, kGbps, 500 * kMbps, PACE_MODE_GAP), 0);
	LogCapture log;

	EXPECT_EQ(-EINVAL, pace_queue_set_rate_bps(&p.q, kGbps + 1));
	ASSERT_EQ(1u, g_log.size());
	EXPECT_NE(std::string::npos, g_log[0].find("rate_bps 1000000001"));
	EXPECT_NE(std::string::npos, g_log[0].find("link_rate_bps 1000000000"));
	EXPECT_EQ(0, pace_queue_sync(&p.q));
	EXPECT_EQ(-EINVAL, pace_queue_set_rate_bps(nullptr, 1));

	/* GAP mode: a new rate changes the gap of the next frame only. */
	uint16_t sizes[4];
	EXPECT_EQ(0, pace_queue_set_rate_bps(&p.q, 250 * kMbps));
	pace_frame_sent(&p.q, kFrame1500, 0);
	EXPECT_EQ(kWire1500, p.q.gap_debt_bytes);
	ASSERT_EQ(1, pace_gap_plan(&p.q, sizes, 4));
	EXPECT_EQ(1, pace_queue_sync(&p.q));
	pace_frame_sent(&p.q, kFrame1500, 0);
	EXPECT_EQ(3u * kWire1500, p.q.gap_debt_bytes);
}

TEST(PaceDeadline, TscWrapAround)
{
	const uint64_t start = UINT64_MAX - 30000;
	Paced p(make_config(kGbps, kGbps, 500 * kMbps, PACE_MODE_DEADLINE),
		start);

	pace_frame_sent(&p.q, kFrame1500, start);
	uint64_t d1 = start + 24608; /* UINT64_MAX - 5392 */
	EXPECT_EQ(d1, pace_queue_next_tsc(&p.q));
	EXPECT_FALSE(pace_may_send(&p.q, d1 - 1));
	EXPECT_TRUE(pace_may_send(&p.q, d1));

	pace_frame_sent(&p.q, kFrame1500, d1);
	uint64_t d2 = d1 + 24608; /* wraps to 19215 */
	EXPECT_EQ(19215u, d2);
	EXPECT_EQ(d2, pace_queue_next_tsc(&p.q));
	EXPECT_FALSE(pace_may_send(&p.q, d1 + 1)); /* numerically > d2 */
	EXPECT_FALSE(pace_may_send(&p.q, UINT64_MAX));
	EXPECT_FALSE(pace_may_send(&p.q, d2 - 1));
	EXPECT_TRUE(pace_may_send(&p.q, d2));

	/* A late poll just after the wrap still gets bounded credit. */
	pace_frame_sent(&p.q, kFrame1500, d2 + 100);
	EXPECT_EQ(d2 + 24608, pace_queue_next_tsc(&p.q));
	EXPECT_EQ(0u, p.stats().late_polls);

	/* A late poll straddling the wrap: deadline before, now after. */
	Paced w(make_config(kGbps, kGbps, 500 * kMbps, PACE_MODE_DEADLINE),
		UINT64_MAX - 99);
	pace_frame_sent(&w.q, kFrame1500, 20000); /* 20100 late */
	EXPECT_EQ(20000u + 24608u - 12304u, pace_queue_next_tsc(&w.q));
	EXPECT_EQ(1u, w.stats().late_polls);
}

TEST(PaceDeadline, LateCatchUpBoundedToHalfGap)
{
	Paced p(make_config(kGbps, kGbps, 500 * kMbps, PACE_MODE_DEADLINE), 0);

	pace_frame_sent(&p.q, kFrame1500, 0);
	EXPECT_EQ(24608u, pace_queue_next_tsc(&p.q));

	/* 1000 cycles late, within half a gap: the schedule is kept. */
	pace_frame_sent(&p.q, kFrame1500, 24608 + 1000);
	EXPECT_EQ(49216u, pace_queue_next_tsc(&p.q));
	EXPECT_EQ(0u, p.stats().late_polls);

	/* Exactly half a gap late: still full catch-up. */
	pace_frame_sent(&p.q, kFrame1500, 49216 + 12304);
	EXPECT_EQ(73824u, pace_queue_next_tsc(&p.q));
	EXPECT_EQ(0u, p.stats().late_polls);

	/* 20000 late: credit limited to 12304, counted. */
	pace_frame_sent(&p.q, kFrame1500, 73824 + 20000);
	EXPECT_EQ(73824u + 20000u + 24608u - 12304u, pace_queue_next_tsc(&p.q));
	EXPECT_EQ(1u, p.stats().late_polls);

	/* Sent early (caller ignored may_send): schedule kept, no credit. */
	uint64_t next = pace_queue_next_tsc(&p.q);
	pace_frame_sent(&p.q, kFrame1500, next - 500);
	EXPECT_EQ(next + 24608u, pace_queue_next_tsc(&p.q));
	EXPECT_EQ(1u, p.stats().late_polls);
}

TEST(PaceDeadline, BacklogDebtPaidBackByShorterGapsNotBursts)
{
	/* tsc_hz 1 GHz: 1538 wire bytes at 500 Mbit/s = 24608 cycles. */
	Paced p(make_config(kGbps, kGbps, 500 * kMbps, PACE_MODE_DEADLINE), 0);
	const uint64_t gap = 24608;

	pace_frame_sent(&p.q, kFrame1500, 0);
	/* backlogged, 100000 cycles late: credit gap/2, debt the rest */
	pace_frame_sent_backlogged(&p.q, kFrame1500, gap + 100000);
	uint64_t debt = 100000 - gap / 2;
	EXPECT_EQ(debt, p.q.debt_tsc);
	EXPECT_EQ(gap + 100000 + gap / 2, pace_queue_next_tsc(&p.q));

	/* on time from now on: each gap is 3/4, never shorter */
	uint64_t now = pace_queue_next_tsc(&p.q), paid = 0;
	for (int i = 0; i < 100 && p.q.debt_tsc > 0; i++) {
		uint64_t before = p.q.debt_tsc;

		pace_frame_sent_backlogged(&p.q, kFrame1500, now);
		uint64_t step = pace_queue_next_tsc(&p.q) - now;
		EXPECT_GE(step, gap - gap / 4) << i;
		paid += before - p.q.debt_tsc;
		now = pace_queue_next_tsc(&p.q);
	}
	EXPECT_EQ(debt, paid);
	EXPECT_EQ(0u, p.q.debt_tsc);
	EXPECT_GT(p.stats().catchups, 0u);
	/* debt paid: back to the exact gap */
	pace_frame_sent_backlogged(&p.q, kFrame1500, now);
	EXPECT_EQ(now + gap, pace_queue_next_tsc(&p.q));
}

TEST(PaceDeadline, IdleLatenessIsNeverOwed)
{
	Paced p(make_config(kGbps, kGbps, 500 * kMbps, PACE_MODE_DEADLINE), 0);

	pace_frame_sent(&p.q, kFrame1500, 0);
	pace_frame_sent_backlogged(&p.q, kFrame1500, 200000);
	EXPECT_GT(p.q.debt_tsc, 0u);
	/* the queue ran empty: a plain send voids the debt */
	pace_frame_sent(&p.q, kFrame1500, 10000000);
	EXPECT_EQ(0u, p.q.debt_tsc);
	/* a rate change voids it too */
	pace_frame_sent_backlogged(&p.q, kFrame1500, 20000000);
	EXPECT_GT(p.q.debt_tsc, 0u);
	ASSERT_EQ(0, pace_queue_set_rate_bps(&p.q, 250 * kMbps));
	ASSERT_EQ(1, pace_queue_sync(&p.q));
	EXPECT_EQ(0u, p.q.debt_tsc);
}

TEST(PaceDeadline, BacklogDebtCappedAtMaxGap)
{
	pace_config cfg = make_config(kGbps, kGbps, 500 * kMbps,
				      PACE_MODE_DEADLINE);
	cfg.max_gap_ns = 1000000; /* 1 ms = 1e6 cycles at 1 GHz */
	Paced p(cfg, 0);

	pace_frame_sent(&p.q, kFrame1500, 0);
	pace_frame_sent_backlogged(&p.q, kFrame1500, 5000000000ull);
	EXPECT_EQ(1000000u, p.q.debt_tsc);
}

TEST(PaceDeadline, GapAboveMaximumClampedAndCounted)
{
	pace_config cfg = make_config(kGbps, kGbps, 1000, PACE_MODE_DEADLINE);
	cfg.max_gap_ns = 1000000; /* 1 ms; 1538 B at 1 kbit/s is 12.3 s */
	Paced p(cfg, 0);

	pace_frame_sent(&p.q, kFrame1500, 0);
	EXPECT_EQ(1000000u, pace_queue_next_tsc(&p.q));
	EXPECT_EQ(1u, p.stats().clamps);
	pace_frame_sent(&p.q, 60, 1000000); /* 84 B: 0.672 s, clamped too */
	EXPECT_EQ(2000000u, pace_queue_next_tsc(&p.q));
	EXPECT_EQ(2u, p.stats().clamps);
}

TEST(PaceGap, GapAboveMaximumClampedAndCounted)
{
	pace_config cfg = make_config(kGbps, kGbps, kMbps, PACE_MODE_GAP);
	cfg.max_gap_ns = 1000; /* 125 wire bytes at 1 Gbit/s */
	Paced p(cfg, 0);

	pace_frame_sent(&p.q, kFrame1500, 0);
	EXPECT_EQ(125u, p.q.gap_debt_bytes);
	EXPECT_EQ(1u, p.stats().clamps);
}

TEST(PaceQueue, UnpacedAlwaysMaySendWithoutGaps)
{
	for (enum pace_mode mode : {PACE_MODE_DEADLINE, PACE_MODE_GAP}) {
		Paced p(make_config(kGbps, kGbps, 0, mode), 500);
		uint16_t sizes[4];

		for (uint64_t now = 500; now < 510; now++) {
			ASSERT_TRUE(pace_may_send(&p.q, now));
			pace_frame_sent(&p.q, kFrame1500, now);
			EXPECT_EQ(now, pace_queue_next_tsc(&p.q));
			EXPECT_EQ(0, pace_gap_plan(&p.q, sizes, 4));
		}
		EXPECT_EQ(10u, p.stats().frames);
		EXPECT_EQ(0u, p.stats().gap_frames);
	}
}

TEST(PaceQueue, InitRejectsMissingOrUnresolvedProfile)
{
	pace_config cfg = make_config(kGbps, kGbps, 0, PACE_MODE_DEADLINE);
	pace_profile profile;
	pace_queue q;
	LogCapture log;

	ASSERT_EQ(0, pace_profile_init(&profile, &cfg));
	EXPECT_EQ(-EINVAL, pace_queue_init(nullptr, &profile, 0));
	EXPECT_EQ(-EINVAL, pace_queue_init(&q, nullptr, 0));
	profile.mode = PACE_MODE_AUTO;
	EXPECT_EQ(-EINVAL, pace_queue_init(&q, &profile, 0));
	EXPECT_EQ(3u, g_log.size());
}

TEST(PaceProfile, ValidConfigAcceptedSilentlyAtLimits)
{
	LogCapture log;
	pace_profile profile;
	pace_config cfg = make_config(PACE_TSC_HZ_MAX, PACE_RATE_MAX_BPS,
				      PACE_RATE_MAX_BPS, PACE_MODE_GAP);

	cfg.max_gap_ns = PACE_MAX_GAP_MAX_NS;
	cfg.gap_frame_max_bytes = PACE_GAP_FRAME_MAX_BYTES;
	EXPECT_EQ(0, pace_profile_init(&profile, &cfg));
	cfg = make_config(1, 1, 1, PACE_MODE_DEADLINE);
	cfg.max_gap_ns = PACE_MAX_GAP_MIN_NS;
	cfg.gap_frame_max_bytes = PACE_GAP_FRAME_MIN_BYTES;
	EXPECT_EQ(0, pace_profile_init(&profile, &cfg));
	EXPECT_TRUE(g_log.empty());

	/* Precomputed values for the seed 001 case at 2 GHz. */
	cfg = make_config(2 * kGbps, kGbps, 500 * kMbps, PACE_MODE_DEADLINE);
	ASSERT_EQ(0, pace_profile_init(&profile, &cfg));
	EXPECT_EQ(32u, profile.initial.tsc_per_byte); /* 16e9 / 5e8 */
	EXPECT_EQ(0u, profile.initial.tsc_per_byte_frac);
	EXPECT_EQ(1u, profile.initial.gap_per_byte); /* link/target - 1 */
	EXPECT_EQ(0u, profile.initial.gap_per_byte_frac);
	EXPECT_EQ(2 * kGbps, profile.max_gap_tsc);   /* 1 s */
	EXPECT_EQ(125000000u, profile.max_gap_bytes); /* 1 s at 1 Gbit/s */
	EXPECT_EQ(1538u, profile.gap_wire_max_bytes);
}

/* Copy a valid config, break one field: -EINVAL and one message naming it. */
TEST(PaceProfile, EveryInvalidFieldRejectedWithOneMessage)
{
	const pace_config valid =
		make_config(2 * kGbps, kGbps, 500 * kMbps, PACE_MODE_GAP);
	const struct {
		const char *field;
		std::string value;
		void (*breaker)(pace_config *);
	} cases[] = {
		{"tsc_hz", "0", [](pace_config *c) { c->tsc_hz = 0; }},
		{"tsc_hz", "100000000001",
		 [](pace_config *c) { c->tsc_hz = PACE_TSC_HZ_MAX + 1; }},
		{"link_rate_bps", "0",
		 [](pace_config *c) { c->link_rate_bps = 0; }},
		{"link_rate_bps", "10000000000001",
		 [](pace_config *c) {
			 c->link_rate_bps = PACE_RATE_MAX_BPS + 1;
			 c->target_rate_bps = 0;
		 }},
		{"target_rate_bps", "1000000001",
		 [](pace_config *c) { c->target_rate_bps = kGbps + 1; }},
		{"max_gap_ns", "0", [](pace_config *c) { c->max_gap_ns = 0; }},
		{"max_gap_ns", "999",
		 [](pace_config *c) { c->max_gap_ns = 999; }},
		{"max_gap_ns", "10000000001",
		 [](pace_config *c) {
			 c->max_gap_ns = PACE_MAX_GAP_MAX_NS + 1;
		 }},
		{"gap_frame_max_bytes", "63",
		 [](pace_config *c) { c->gap_frame_max_bytes = 63; }},
		{"gap_frame_max_bytes", "9019",
		 [](pace_config *c) { c->gap_frame_max_bytes = 9019; }},
		{"mode", "auto",
		 [](pace_config *c) { c->mode = PACE_MODE_AUTO; }},
		{"mode", "(7)",
		 [](pace_config *c) { c->mode = (enum pace_mode)7; }},
	};

	for (const auto &c : cases) {
		pace_config cfg = valid;
		pace_profile profile;
		LogCapture log;

		c.breaker(&cfg);
		EXPECT_EQ(-EINVAL, pace_profile_init(&profile, &cfg)) << c.field;
		ASSERT_EQ(1u, g_log.size()) << c.field;
		EXPECT_NE(std::string::npos,
			  g_log[0].find(std::string(c.field) + " "))
			<< g_log[0];
		EXPECT_NE(std::string::npos, g_log[0].find(c.value)) << g_log[0];
	}

	/* Two bad fields: two messages, still -EINVAL. */
	pace_config cfg = valid;
	pace_profile profile;
	LogCapture log;
	cfg.tsc_hz = 0;
	cfg.mode = PACE_MODE_AUTO;
	EXPECT_EQ(-EINVAL, pace_profile_init(&profile, &cfg));
	EXPECT_EQ(2u, g_log.size());
	EXPECT_EQ(-EINVAL, pace_profile_init(nullptr, &cfg));
	EXPECT_EQ(-EINVAL, pace_profile_init(&profile, nullptr));
}

TEST(PaceProfile, ModeNamesAndParse)
{
	enum pace_mode mode = PACE_MODE_AUTO;
	LogCapture log;

	EXPECT_STREQ("deadline", pace_mode_name(PACE_MODE_DEADLINE));
	EXPECT_STREQ("gap", pace_mode_name(PACE_MODE_GAP));
	EXPECT_STREQ("auto", pace_mode_name(PACE_MODE_AUTO));
	EXPECT_STREQ("?", pace_mode_name((enum pace_mode)9));
	EXPECT_EQ(0, pace_mode_parse("gap", &mode));
	EXPECT_EQ(PACE_MODE_GAP, mode);
	EXPECT_EQ(0, pace_mode_parse("deadline", &mode));
	EXPECT_EQ(PACE_MODE_DEADLINE, mode);
	EXPECT_EQ(-EINVAL, pace_mode_parse("tbf", &mode));
	EXPECT_EQ(PACE_MODE_DEADLINE, mode);
	EXPECT_EQ(1u, g_log.size());
}

TEST(PaceMatb, Seed001TableI)
{
	uint64_t r = 0;

	/* CG, N = 32, B = 10 Gbit/s: 625 Mbit/s (seed 001's example). */
	EXPECT_EQ(0, pace_matb_rate_bps(PACE_MATB_B_HALF_N, 10 * kGbps, 32, &r));
	EXPECT_EQ(625 * kMbps, r);
	EXPECT_EQ(0, pace_matb_rate_bps(PACE_MATB_B_N, 10 * kGbps, 32, &r));
	EXPECT_EQ(312500000u, r);
	EXPECT_EQ(0, pace_matb_rate_bps(PACE_MATB_B_2N, 10 * kGbps, 32, &r));
	EXPECT_EQ(156250000u, r);
	/* BT/SP: 2 * sqrt(2 * 8) = 8, 2 * sqrt(2 * 32) = 16. */
	EXPECT_EQ(0, pace_matb_rate_bps(PACE_MATB_B_2SQRT_2N, 10 * kGbps, 8, &r));
	EXPECT_EQ(1250 * kMbps, r);
	EXPECT_EQ(0, pace_matb_rate_bps(PACE_MATB_B_2SQRT_2N, 10 * kGbps, 32, &r));
	EXPECT_EQ(625 * kMbps, r);
	/* N = 1: 1e9 / 2.8284271247... = 353553390.59 -> rounded down. */
	EXPECT_EQ(0, pace_matb_rate_bps(PACE_MATB_B_2SQRT_2N, kGbps, 1, &r));
	EXPECT_EQ(353553390u, r);
	/* CG with odd N: 2B/N. */
	EXPECT_EQ(0, pace_matb_rate_bps(PACE_MATB_B_HALF_N, kGbps, 3, &r));
	EXPECT_EQ(666666666u, r);
}

TEST(PaceMatb, SqrtExactForManyN)
{
	const uint64_t bs[] = {kGbps, 10 * kGbps, 40 * kGbps + 7,
			       PACE_RATE_MAX_BPS};

	for (uint64_t b : bs) {
		for (uint32_t n = 1; n < 5000; n += 37) {
			uint64_t r = 0;

			ASSERT_EQ(0, pace_matb_rate_bps(PACE_MATB_B_2SQRT_2N, b,
							n, &r));
			/* r = floor(B / sqrt(8N)) <=> r^2 8N <= B^2 < (r+1)^2 8N */
			pace_u128 b2 = (pace_u128)b * b, n8 = 8 * (pace_u128)n;
			ASSERT_TRUE((pace_u128)r * r * n8 <= b2) << b << " " << n;
			ASSERT_TRUE((pace_u128)(r + 1) * (r + 1) * n8 > b2)
				<< b << " " << n;
		}
	}
}

TEST(PaceMatb, InvalidInputsRejected)
{
	uint64_t r = 77;
	LogCapture log;

	EXPECT_EQ(-EINVAL, pace_matb_rate_bps(PACE_MATB_B_N, kGbps, 0, &r));
	EXPECT_EQ(-EINVAL, pace_matb_rate_bps(PACE_MATB_B_2SQRT_2N, kGbps, 0, &r));
	EXPECT_EQ(-EINVAL, pace_matb_rate_bps(PACE_MATB_B_N, 0, 4, &r));
	EXPECT_EQ(-EINVAL, pace_matb_rate_bps((enum pace_matb_pattern)9,
					      kGbps, 4, &r));
	EXPECT_EQ(-EINVAL, pace_matb_rate_bps(PACE_MATB_B_N, kGbps, 4, nullptr));
	EXPECT_EQ(-ERANGE, pace_matb_rate_bps(PACE_MATB_B_HALF_N, kGbps, 1, &r));
	EXPECT_EQ(-ERANGE, pace_matb_rate_bps(PACE_MATB_B_N, 10, 11, &r));
	EXPECT_EQ(77u, r); /* untouched on error */
	EXPECT_EQ(7u, g_log.size());
	EXPECT_NE(std::string::npos, g_log[0].find("nodes 0"));
}

TEST(PaceRate, ParseSiSuffixes)
{
	const struct {
		const char *text;
		uint64_t bps;
	} good[] = {
		{"1G", kGbps},	    {"500M", 500 * kMbps}, {"10m", 10 * kMbps},
		{"100k", 100000},   {"2500M", 2500 * kMbps},
		{"10g", 10 * kGbps}, {"0", 0},		   {"1000", 1000},
		{"10000G", PACE_RATE_MAX_BPS},
	};
	for (const auto &g : good) {
		uint64_t r = 1;
		EXPECT_EQ(0, pace_rate_parse(g.text, &r)) << g.text;
		EXPECT_EQ(g.bps, r) << g.text;
	}

	const char *bad[] = {"",     "G",	  "abc",  "1.5G",
			     "-1",   "+1G",	  "1T",	  "10 M",
			     " 1G",  "1G ",	  "0x10", "010",
			     "1GG",  "10001G", "99999999999999999999"};
	for (const char *text : bad) {
		uint64_t r = 42;
		LogCapture log;

		EXPECT_EQ(-EINVAL, pace_rate_parse(text, &r)) << text;
		EXPECT_EQ(42u, r) << text;
		ASSERT_EQ(1u, g_log.size()) << text;
		EXPECT_NE(std::string::npos,
			  g_log[0].find(std::string("'") + text + "'"))
			<< g_log[0];
	}
	uint64_t r;
	LogCapture log;
	EXPECT_EQ(-EINVAL, pace_rate_parse(nullptr, &r));
	EXPECT_EQ(-EINVAL, pace_rate_parse("1G", nullptr));
}

TEST(PacePort, EarliestDeadlineCachedAndWrapSafe)
{
	pace_config cfg = make_config(kGbps, kGbps, 500 * kMbps,
				      PACE_MODE_DEADLINE);
	pace_profile profile;
	pace_queue q[3];
	pace_queue *qs[3] = {&q[0], &q[1], &q[2]};
	pace_port port;

	ASSERT_EQ(0, pace_profile_init(&profile, &cfg));
	for (auto &one : q)
		ASSERT_EQ(0, pace_queue_init(&one, &profile, 1000));
	ASSERT_EQ(0, pace_port_init(&port, qs, 3));
	EXPECT_TRUE(pace_port_any_due(&port, 1000));
	EXPECT_FALSE(pace_port_any_due(&port, 999));

	pace_frame_sent(&q[0], kFrame1500, 1000); /* 25608 */
	pace_frame_sent(&q[1], 500, 1000);	  /* 524 B: 1000 + 8384 */
	pace_frame_sent(&q[2], 1000, 1000);	  /* 1024 B: 1000 + 16384 */
	pace_port_refresh(&port);
	EXPECT_EQ(9384u, port.earliest_tsc);
	EXPECT_FALSE(pace_port_any_due(&port, 9383));
	EXPECT_TRUE(pace_port_any_due(&port, 9384));

	pace_frame_sent(&q[1], kFrame1500, 9384); /* 33992 */
	pace_port_refresh(&port);
	EXPECT_EQ(17384u, port.earliest_tsc);

	/* Deadlines on both sides of the TSC wrap: the earlier one wins. */
	q[0].next_tsc = UINT64_MAX - 5;
	q[1].next_tsc = 10;
	q[2].next_tsc = 20;
	pace_port_refresh(&port);
	EXPECT_EQ(UINT64_MAX - 5, port.earliest_tsc);
	EXPECT_FALSE(pace_port_any_due(&port, UINT64_MAX - 6));
	EXPECT_TRUE(pace_port_any_due(&port, 3)); /* after the wrap */

	LogCapture log;
	qs[2] = nullptr;
	EXPECT_EQ(-EINVAL, pace_port_init(&port, qs, 3));
	EXPECT_EQ(-EINVAL, pace_port_init(&port, qs, 0));
	EXPECT_EQ(-EINVAL, pace_port_init(nullptr, qs, 2));
	EXPECT_EQ(3u, g_log.size());
}

/*
 * Per-destination pacing (pace_fq.c) on the fake clock: a sender keeps
 * every destination backlogged and polls every microsecond, draining as
 * dp_pace_drain does (the queue's total rate first, then the due flow).
 */
namespace {

struct FqSim {
	pace_profile profile;
	pace_queue q;
	pace_fq *fq = nullptr;
	uint64_t now = 0;
	std::vector<uint64_t> wire_bytes; /* per destination index */

	FqSim(uint64_t total_bps, const pace_fq_config &fc)
	{
		pace_config cfg = make_config(kGbps, 10 * kGbps, total_bps,
					      PACE_MODE_DEADLINE);

		EXPECT_EQ(0, pace_profile_init(&profile, &cfg));
		EXPECT_EQ(0, pace_queue_init(&q, &profile, 0));
		EXPECT_EQ(0, pace_fq_create(&profile, &fc, &fq));
	}
	~FqSim()
	{
		while (pace_fq_purge_one(fq) != nullptr)
			;
		pace_fq_destroy(fq);
	}
	/* Destination i is 10.0.0.(i+1); frames carry i + 1. */
	static uint32_t dest(size_t i)
	{
		return 0x0a000001u + (uint32_t)i;
	}
	/* Run for duration_tsc keeping nb_dests destinations at >= 4
	 * queued frames of frame_bytes. */
	void run(size_t nb_dests, uint64_t duration_tsc,
		 uint32_t frame_bytes = kFrame1500)
	{
		std::vector<uint32_t> queued(nb_dests, 0);
		uint64_t end = now + duration_tsc;

		wire_bytes.assign(nb_dests, 0);
		for (; now < end; now += 1000) {
			for (size_t i = 0; i < nb_dests; i++)
				while (queued[i] < 4 &&
				       pace_fq_enqueue(fq, dest(i),
						       (void *)(uintptr_t)(i + 1),
						       frame_bytes, now) == 0)
					queued[i]++;
			for (;;) {
				uint32_t len;
				void *f;

				if (q.rate_bps != 0 && !pace_may_send(&q, now))
					break;
				f = pace_fq_dequeue(fq, now, &len);
				if (f == nullptr)
					break;
				if (q.rate_bps != 0)
					pace_frame_sent(&q, len, now);
				size_t i = (uintptr_t)f - 1;
				queued[i]--;
				wire_bytes[i] += pace_wire_bytes(len);
			}
		}
	}
	double rate_bps(size_t i, uint64_t duration_tsc) const
	{
		return (double)wire_bytes[i] * 8 * kGbps / duration_tsc;
	}
	pace_fq_stats stats() const
	{
		pace_fq_stats s;

		pace_fq_stats_get(fq, &s);
		return s;
	}
};

pace_fq_config make_fq_config(uint32_t max_flows, uint64_t default_bps)
{
	pace_fq_config c;

	memset(&c, 0, sizeof(c));
	c.max_flows = max_flows;
	c.max_frames = 1024;
	c.default_rate_bps = default_bps;
	c.flow_queue_ns = 0;
	c.full_frame_bytes = kFrame1500;
	return c;
}

} /* namespace */

TEST(PaceFq, TwoDestinationsGetTheirOwnRates)
{
	FqSim s(0, make_fq_config(16, 0)); /* no total cap */
	const uint64_t dur = 200000000;	    /* 200 ms at 1 GHz */

	ASSERT_EQ(0, pace_fq_set_dest_rate_bps(s.fq, FqSim::dest(0),
					       100 * kMbps));
	ASSERT_EQ(0, pace_fq_set_dest_rate_bps(s.fq, FqSim::dest(1),
					       300 * kMbps));
	EXPECT_EQ(100 * kMbps, pace_fq_dest_rate_bps(s.fq, FqSim::dest(0)));
	EXPECT_EQ(300 * kMbps, pace_fq_dest_rate_bps(s.fq, FqSim::dest(1)));
	s.run(2, dur);
	/* one frame of slack at each end of the window */
	EXPECT_NEAR(100e6, s.rate_bps(0, dur), 100e6 * 0.002);
	EXPECT_NEAR(300e6, s.rate_bps(1, dur), 300e6 * 0.002);
	/* a throttled destination never held the other one back, and no
	 * frame left early: neither sees more than its rate */
	EXPECT_LE(s.rate_bps(0, dur), 100e6 + kWire1500 * 8 * 5.0);
	EXPECT_LE(s.rate_bps(1, dur), 300e6 + kWire1500 * 8 * 5.0);
	EXPECT_GT(s.stats().throttled, 0u);
}

TEST(PaceFq, ExactSpacingPerDestination)
{
	FqSim s(0, make_fq_config(16, 0));
	std::vector<uint64_t> sent_at;

	/* 500 Mbit/s: seed 001's 24.608 us per 1500-byte packet */
	ASSERT_EQ(0, pace_fq_set_dest_rate_bps(s.fq, FqSim::dest(0),
					       500 * kMbps));
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(0, pace_fq_enqueue(s.fq, FqSim::dest(0),
					     (void *)(uintptr_t)1, kFrame1500,
					     0));
	ASSERT_EQ(0, pace_fq_enqueue(s.fq, FqSim::dest(1), (void *)(uintptr_t)2,
				     kFrame1500, 0)); /* unpaced neighbour */
	for (uint64_t now = 0; now <= 80000; now++) {
		uint32_t len;
		void *f;

		while ((f = pace_fq_dequeue(s.fq, now, &len)) != nullptr) {
			if ((uintptr_t)f == 1)
				sent_at.push_back(now);
			else
				EXPECT_EQ(0u, now); /* not behind dest 0 */
		}
	}
	ASSERT_EQ(4u, sent_at.size());
	EXPECT_EQ(0u, sent_at[0]);
	EXPECT_EQ(24608u, sent_at[1]);
	EXPECT_EQ(49216u, sent_at[2]);
	EXPECT_EQ(73824u, sent_at[3]);
}

TEST(PaceFq, TotalCapHoldsOverDestinations)
{
	FqSim s(500 * kMbps, make_fq_config(16, 0));
	const uint64_t dur = 200000000;

	ASSERT_EQ(0, pace_fq_set_dest_rate_bps(s.fq, FqSim::dest(0),
					       400 * kMbps));
	ASSERT_EQ(0, pace_fq_set_dest_rate_bps(s.fq, FqSim::dest(1),
					       400 * kMbps));
	s.run(2, dur);
	double total = s.rate_bps(0, dur) + s.rate_bps(1, dur);

	EXPECT_NEAR(500e6, total, 500e6 * 0.002);
	/* round robin splits the total evenly */
	EXPECT_NEAR(250e6, s.rate_bps(0, dur), 250e6 * 0.01);
	EXPECT_NEAR(250e6, s.rate_bps(1, dur), 250e6 * 0.01);
}

TEST(PaceFq, DefaultAppliesToUnknownDestinations)
{
	FqSim s(0, make_fq_config(16, 50 * kMbps));
	const uint64_t dur = 200000000;

	ASSERT_EQ(0, pace_fq_set_dest_rate_bps(s.fq, FqSim::dest(3),
					       200 * kMbps));
	EXPECT_EQ(50 * kMbps, pace_fq_dest_rate_bps(s.fq, FqSim::dest(0)));
	EXPECT_TRUE(pace_fq_paced(s.fq));
	s.run(4, dur);
	for (size_t i = 0; i < 3; i++)
		EXPECT_NEAR(50e6, s.rate_bps(i, dur), 50e6 * 0.002) << i;
	EXPECT_NEAR(200e6, s.rate_bps(3, dur), 200e6 * 0.002);

	/* the default changes at run time for every flow that follows it */
	ASSERT_EQ(0, pace_fq_set_default_rate_bps(s.fq, 100 * kMbps));
	s.run(4, dur);
	for (size_t i = 0; i < 3; i++)
		EXPECT_NEAR(100e6, s.rate_bps(i, dur), 100e6 * 0.002) << i;
	EXPECT_NEAR(200e6, s.rate_bps(3, dur), 200e6 * 0.002);

	/* back to the default, then no per-destination pacing at all */
	ASSERT_EQ(0, pace_fq_set_dest_rate_bps(s.fq, FqSim::dest(3),
					       PACE_FQ_RATE_DEFAULT));
	EXPECT_EQ(100 * kMbps, pace_fq_dest_rate_bps(s.fq, FqSim::dest(3)));
	ASSERT_EQ(0, pace_fq_set_default_rate_bps(s.fq, 0));
	EXPECT_FALSE(pace_fq_paced(s.fq));
}

TEST(PaceFq, TableBoundOverflowAndReclaim)
{
	LogCapture log;
	FqSim s(0, make_fq_config(2, 20 * kMbps));
	const uint64_t dur = 200000000;

	/* three destinations on a two-flow table: the third shares the
	 * overflow flow, still at the default rate */
	s.run(3, dur);
	EXPECT_EQ(2u, s.stats().flows_created);
	EXPECT_GT(s.stats().overflow_frames, 0u);
	for (size_t i = 0; i < 3; i++)
		EXPECT_NEAR(20e6, s.rate_bps(i, dur), 20e6 * 0.01) << i;

	/* both table flows hold frames: no room for a fourth's rate */
	EXPECT_EQ(-ENOSPC, pace_fq_set_dest_rate_bps(s.fq, FqSim::dest(3),
						     kGbps));
	ASSERT_EQ(1u, g_log.size());
	EXPECT_NE(std::string::npos, g_log[0].find("raise pace_dests"));

	/* drain everything and let the deadlines pass: idle flows are
	 * reclaimed for new destinations */
	for (uint64_t end = s.now + dur; s.now < end; s.now += 1000) {
		uint32_t len;

		while (pace_fq_dequeue(s.fq, s.now, &len) != nullptr)
			;
	}
	EXPECT_EQ(0u, pace_fq_frames(s.fq));
	EXPECT_EQ(0, pace_fq_set_dest_rate_bps(s.fq, FqSim::dest(3), kGbps));
	EXPECT_EQ(1u, s.stats().flows_reclaimed);
	EXPECT_EQ(kGbps, pace_fq_dest_rate_bps(s.fq, FqSim::dest(3)));
}

TEST(PaceFq, FlowQueueBoundDropsAndCounts)
{
	pace_fq_config c = make_fq_config(16, 0);

	c.flow_queue_ns = 10000000; /* 10 ms */
	FqSim s(0, c);
	/* 20 Mbit/s x 10 ms = 16.25 full frames: 16 */
	ASSERT_EQ(0, pace_fq_set_dest_rate_bps(s.fq, FqSim::dest(0),
					       20 * kMbps));
	int ok = 0;

	for (int i = 0; i < 40; i++)
		ok += pace_fq_enqueue(s.fq, FqSim::dest(0),
				      (void *)(uintptr_t)1, kFrame1500, 0) == 0;
	EXPECT_EQ(16, ok);
	EXPECT_EQ(24u, s.stats().flow_drops);
	/* another destination is not affected */
	EXPECT_EQ(0, pace_fq_enqueue(s.fq, FqSim::dest(1),
				     (void *)(uintptr_t)2, kFrame1500, 0));
}

TEST(PaceFq, EveryInvalidFieldRejectedWithOneMessage)
{
	pace_config cfg = make_config(kGbps, kGbps, 0, PACE_MODE_DEADLINE);
	pace_profile profile;
	pace_fq *fq = nullptr;

	ASSERT_EQ(0, pace_profile_init(&profile, &cfg));
	const pace_fq_config good = make_fq_config(16, 0);
	ASSERT_EQ(0, pace_fq_create(&profile, &good, &fq));
	pace_fq_destroy(fq);

	struct Case {
		const char *field;
		void (*breaker)(pace_fq_config *);
	} cases[] = {
		{"max_flows", [](pace_fq_config *c) { c->max_flows = 0; }},
		{"max_flows",
		 [](pace_fq_config *c) { c->max_flows = PACE_FQ_FLOWS_MAX + 1; }},
		{"max_frames", [](pace_fq_config *c) { c->max_frames = 0; }},
		{"default_rate_bps",
		 [](pace_fq_config *c) { c->default_rate_bps = kGbps + 1; }},
		{"flow_queue_ns",
		 [](pace_fq_config *c) {
			 c->flow_queue_ns = PACE_MAX_GAP_MAX_NS + 1;
		 }},
		{"full_frame_bytes",
		 [](pace_fq_config *c) { c->full_frame_bytes = 59; }},
	};
	for (const Case &k : cases) {
		LogCapture log;
		pace_fq_config bad = good;

		k.breaker(&bad);
		fq = nullptr;
		EXPECT_EQ(-EINVAL, pace_fq_create(&profile, &bad, &fq)) << k.field;
		EXPECT_EQ(nullptr, fq);
		ASSERT_EQ(1u, g_log.size()) << k.field;
		EXPECT_NE(std::string::npos, g_log[0].find(k.field)) << g_log[0];
	}
	ASSERT_EQ(0, pace_fq_create(&profile, &good, &fq));
	{
		LogCapture log;

		EXPECT_EQ(-EINVAL, pace_fq_set_dest_rate_bps(fq, 0x0a000001u,
							     kGbps + 1));
		EXPECT_EQ(-EINVAL, pace_fq_set_dest_rate_bps(
					   fq, PACE_FQ_DEST_NONE, kMbps));
		EXPECT_EQ(-EINVAL, pace_fq_set_default_rate_bps(fq, kGbps + 1));
		EXPECT_EQ(3u, g_log.size());
	}
	pace_fq_destroy(fq);
}

TEST(PaceFq, FramesWithoutDestinationGoFirst)
{
	FqSim s(0, make_fq_config(16, 0));
	uint32_t len;

	ASSERT_EQ(0, pace_fq_set_dest_rate_bps(s.fq, FqSim::dest(0),
					       500 * kMbps));
	/* two data frames to a paced destination, then a control frame */
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(0, pace_fq_enqueue(s.fq, FqSim::dest(0),
					     (void *)(uintptr_t)1, kFrame1500,
					     0));
	ASSERT_EQ(0, pace_fq_enqueue(s.fq, PACE_FQ_DEST_NONE,
				     (void *)(uintptr_t)2, 60, 0));
	/* all due at 0: the control frame leaves first, then data */
	EXPECT_EQ((void *)(uintptr_t)2, pace_fq_dequeue(s.fq, 0, &len));
	EXPECT_EQ(60u, len);
	EXPECT_EQ((void *)(uintptr_t)1, pace_fq_dequeue(s.fq, 0, &len));
	EXPECT_EQ(nullptr, pace_fq_dequeue(s.fq, 0, &len));
	/* while the destination waits, control frames are not held */
	ASSERT_EQ(0, pace_fq_enqueue(s.fq, PACE_FQ_DEST_NONE,
				     (void *)(uintptr_t)3, 60, 100));
	EXPECT_EQ((void *)(uintptr_t)3, pace_fq_dequeue(s.fq, 100, &len));
	EXPECT_EQ(nullptr, pace_fq_dequeue(s.fq, 100, &len));
	EXPECT_EQ((void *)(uintptr_t)1, pace_fq_dequeue(s.fq, 24608, &len));
}
