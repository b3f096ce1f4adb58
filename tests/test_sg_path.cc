/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sg_path.cc - the failover path state machine (sctp/sg_path.c) on a
 * virtual clock, and its configuration.  Pure logic: no DPDK, no usrsctp.
 */
#include <gtest/gtest.h>

#include "sg_internal.h"

namespace {

struct sg_path_config cfg_on(uint32_t probe, uint32_t dead, uint32_t ret)
{
	struct sg_path_config c;

	sg_path_config_defaults(&c);
	c.on = true;
	c.probe_ms = probe;
	c.dead_ms = dead;
	c.return_ms = ret;
	return c;
}

/* Both paths heard every @step ms from @from to @to (exclusive),
 * ticking each ms; @return the first switch seen (or -1). */
int run(struct sg_paths *ps, const struct sg_path_config *c, uint64_t from,
	uint64_t to, bool hear0, bool hear1, uint64_t step, uint64_t *at)
{
	int first = -1;

	for (uint64_t t = from; t < to; t++) {
		if (t % step == 0) {
			if (hear0)
				sg_paths_heard(ps, 0, t);
			if (hear1)
				sg_paths_heard(ps, 1, t);
		}
		int r = sg_paths_tick(ps, c, t);
		if (r >= 0 && first < 0) {
			first = r;
			if (at != NULL)
				*at = t;
		}
	}
	return first;
}

} // namespace

TEST(SgPathConfig, OffOnAndTokens)
{
	struct sg_path_config c;

	ASSERT_EQ(sg_path_config_parse("", &c), 0);
	EXPECT_FALSE(c.on);
	ASSERT_EQ(sg_path_config_parse("n", &c), 0);
	EXPECT_FALSE(c.on);
	ASSERT_EQ(sg_path_config_parse("y", &c), 0);
	EXPECT_TRUE(c.on);
	EXPECT_EQ(c.probe_ms, 10u);
	EXPECT_EQ(c.dead_ms, 50u);
	EXPECT_EQ(c.return_ms, 1000u);
	ASSERT_EQ(sg_path_config_parse("probe_ms=5 dead_ms=40 return_ms=0",
				       &c), 0);
	EXPECT_TRUE(c.on);
	EXPECT_EQ(c.probe_ms, 5u);
	EXPECT_EQ(c.dead_ms, 40u);
	EXPECT_EQ(c.return_ms, 0u);
}

TEST(SgPathConfig, BadValuesAreRefused)
{
	struct sg_path_config c;

	EXPECT_EQ(sg_path_config_parse("yes please", &c), -EINVAL);
	EXPECT_EQ(sg_path_config_parse("probe_ms=0", &c), -EINVAL);
	EXPECT_EQ(sg_path_config_parse("probe_ms=10001", &c), -EINVAL);
	EXPECT_EQ(sg_path_config_parse("dead_ms=1", &c), -EINVAL);
	EXPECT_EQ(sg_path_config_parse("dead_ms=abc", &c), -EINVAL);
	EXPECT_EQ(sg_path_config_parse("dead_ms=-5", &c), -EINVAL);
	EXPECT_EQ(sg_path_config_parse("return_ms=3600001", &c), -EINVAL);
	EXPECT_EQ(sg_path_config_parse("hb_ms=10", &c), -EINVAL);
	/* a live path would die between two probes */
	EXPECT_EQ(sg_path_config_parse("probe_ms=30 dead_ms=50", &c),
		  -EINVAL);
}

TEST(SgPath, OnePathNeverSwitches)
{
	struct sg_path_config c = cfg_on(10, 50, 1000);
	struct sg_paths ps;

	sg_paths_init(&ps, 1, 0);
	EXPECT_EQ(run(&ps, &c, 1, 1000, false, false, 10, nullptr), -1);
	EXPECT_EQ(ps.active, 0);
}

TEST(SgPath, HeardPathsStayPut)
{
	struct sg_path_config c = cfg_on(10, 50, 1000);
	struct sg_paths ps;

	sg_paths_init(&ps, 2, 0);
	/* heard every 40 ms: below dead_ms, never dead */
	EXPECT_EQ(run(&ps, &c, 1, 5000, true, true, 40, nullptr), -1);
	EXPECT_EQ(ps.active, 0);
	EXPECT_EQ(ps.failovers, 0u);
}

TEST(SgPath, SilentPrimaryFailsOverAfterDeadMs)
{
	struct sg_path_config c = cfg_on(10, 50, 1000);
	struct sg_paths ps;
	uint64_t at = 0;

	sg_paths_init(&ps, 2, 0);
	ASSERT_EQ(run(&ps, &c, 1, 100, true, true, 10, nullptr), -1);
	/* primary last heard at 90; the backup goes on being heard */
	ASSERT_EQ(run(&ps, &c, 100, 400, false, true, 10, &at), 1);
	EXPECT_EQ(at, 90u + 50u);
	EXPECT_EQ(ps.active, 1);
	EXPECT_EQ(ps.failovers, 1u);
	EXPECT_EQ(ps.switch_ms, 140u);
}

TEST(SgPath, PeerSilentEverywhereIsNoPathFailure)
{
	struct sg_path_config c = cfg_on(10, 50, 1000);
	struct sg_paths ps;

	sg_paths_init(&ps, 2, 0);
	ASSERT_EQ(run(&ps, &c, 1, 100, true, true, 10, nullptr), -1);
	/* the backup's last probe came 5 ms after the primary's last
	 * packet, then the peer stopped polling for 200 ms */
	sg_paths_heard(&ps, 1, 95);
	EXPECT_EQ(run(&ps, &c, 100, 300, false, false, 10, nullptr), -1);
	EXPECT_EQ(ps.active, 0);
	/* it polls again: both paths heard, no switch */
	EXPECT_EQ(run(&ps, &c, 300, 400, true, true, 10, nullptr), -1);
	EXPECT_EQ(ps.failovers, 0u);
}

TEST(SgPath, LinkDownFailsOverAtOnce)
{
	struct sg_path_config c = cfg_on(10, 50, 1000);
	struct sg_paths ps;

	sg_paths_init(&ps, 2, 0);
	ASSERT_EQ(run(&ps, &c, 1, 100, true, true, 10, nullptr), -1);
	sg_paths_link(&ps, 0, false);
	EXPECT_EQ(sg_paths_tick(&ps, &c, 100), 1);
	/* heard while the link is down does not revive it */
	sg_paths_heard(&ps, 0, 101);
	EXPECT_FALSE(ps.p[0].alive);
}

TEST(SgPath, FailbackAfterReturnMs)
{
	struct sg_path_config c = cfg_on(10, 50, 1000);
	struct sg_paths ps;
	uint64_t at = 0;

	sg_paths_init(&ps, 2, 0);
	ASSERT_EQ(run(&ps, &c, 1, 300, false, true, 10, &at), 1);
	/* the primary is heard again from 300 on: back 1000 ms later */
	ASSERT_EQ(run(&ps, &c, 300, 2000, true, true, 10, &at), 0);
	EXPECT_EQ(at, 1300u);
	EXPECT_EQ(ps.active, 0);
	EXPECT_EQ(ps.failbacks, 1u);
}

TEST(SgPath, ReturnMsZeroStaysOnBackup)
{
	struct sg_path_config c = cfg_on(10, 50, 0);
	struct sg_paths ps;

	sg_paths_init(&ps, 2, 0);
	ASSERT_EQ(run(&ps, &c, 1, 300, false, true, 10, nullptr), 1);
	EXPECT_EQ(run(&ps, &c, 300, 5000, true, true, 10, nullptr), -1);
	EXPECT_EQ(ps.active, 1);
}

TEST(SgPath, FlappingPrimaryRestartsItsAliveSpell)
{
	struct sg_path_config c = cfg_on(10, 50, 1000);
	struct sg_paths ps;
	uint64_t at = 0;

	sg_paths_init(&ps, 2, 0);
	ASSERT_EQ(run(&ps, &c, 1, 300, false, true, 10, nullptr), 1);
	/* back for 800 ms, silent again, back from 1400 */
	ASSERT_EQ(run(&ps, &c, 300, 1100, true, true, 10, nullptr), -1);
	ASSERT_EQ(run(&ps, &c, 1100, 1400, false, true, 10, nullptr), -1);
	ASSERT_EQ(run(&ps, &c, 1400, 3000, true, true, 10, &at), 0);
	EXPECT_EQ(at, 2400u);
}

TEST(SgPath, AllDeadStaysThenTakesTheFirstRevived)
{
	struct sg_path_config c = cfg_on(10, 50, 1000);
	struct sg_paths ps;
	uint64_t at = 0;

	sg_paths_init(&ps, 3, 0);
	EXPECT_EQ(run(&ps, &c, 1, 500, false, false, 10, nullptr), -1);
	EXPECT_EQ(ps.active, 0);
	sg_paths_heard(&ps, 2, 500);
	EXPECT_EQ(sg_paths_tick(&ps, &c, 500), 2);
	/* path 1 revives too; the active path 2 lives: no move to 1 */
	sg_paths_heard(&ps, 1, 501);
	EXPECT_EQ(sg_paths_tick(&ps, &c, 501), -1);
	(void)at;
}

TEST(SgPath, BackupsInOrder)
{
	struct sg_path_config c = cfg_on(10, 50, 1000);
	struct sg_paths ps;

	sg_paths_init(&ps, 3, 0);
	sg_paths_link(&ps, 0, false);
	EXPECT_EQ(sg_paths_tick(&ps, &c, 1), 1);
	sg_paths_link(&ps, 1, false);
	EXPECT_EQ(sg_paths_tick(&ps, &c, 2), 2);
	EXPECT_EQ(ps.failovers, 2u);
}

TEST(SgPath, ProbeDueAfterProbeMsOfSilence)
{
	struct sg_path_config c = cfg_on(10, 50, 1000);
	struct sg_paths ps;

	sg_paths_init(&ps, 2, 0);
	sg_paths_sent(&ps, 1, 100);
	EXPECT_FALSE(sg_paths_probe_due(&ps, &c, 1, 109));
	EXPECT_TRUE(sg_paths_probe_due(&ps, &c, 1, 110));
	EXPECT_FALSE(sg_paths_probe_due(&ps, &c, 2, 1000)); /* no path 2 */
}
