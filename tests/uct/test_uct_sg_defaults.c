/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_uct_sg_defaults.c - the transport's SCTP defaults (set before the
 * user's UCX_SCTP_DPDK_SG, ucx-tl/sctp_dpdk_config.c) reach the sctp
 * configuration, and a user's SG is judged against them, not against the
 * sctp layer's own defaults: SG "rto_min_ms=10" or "rto_min_ms=20" is
 * valid with the transport's sack_delay_ms (0 then, 5 now; both were
 * refused, checked alone against sg's 20 ms delayed SACK), while an SG
 * that contradicts itself or the defaults is still refused.  The
 * transport SACKs every second packet (sack_delay_ms=5, sack_freq 2) and
 * has each message's last packet SACKed at once (sack_immediate=1).
 *
 * No port is opened: uct_sctp_dpdk_config_build() only parses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "sctp_dpdk.h"
#include <ucs/sys/string.h>

static int failures;

#define CHECK(cond, ...)                                                      \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__,         \
				__LINE__, #cond);                             \
			fprintf(stderr, __VA_ARGS__);                         \
			fprintf(stderr, "\n");                                \
			failures++;                                           \
		}                                                             \
	} while (0)

static ucs_status_t build_mode(const char *sg_extra, unsigned long idle_us,
			       struct sg_config *sg)
{
	static char text[16384];
	uct_sctp_dpdk_iface_config_t c;
	struct dp_config dp;

	memset(&c, 0, sizeof(c));
	c.devargs = (char *)"net_null0";
	c.ip = (char *)"10.77.9.1/24";
	c.mtu = (char *)"1500";
	c.prefix = (char *)"sdp-sgdef";
	c.lcore = -1;
	c.mem_mb = 512;
	c.idle_sleep_us = idle_us;
	c.progress = (char *)"inline";
	c.poll_lcore = -1;
	c.rate = (char *)"0";
	c.streams = 10;
	c.sctp_port = (char *)"5000";
	c.rx_descs = 512;
	c.seg_size = 8192;
	c.dp_extra = (char *)"";
	c.sg_extra = (char *)sg_extra;
	c.exit_timeout_s = 1;
	c.sack_hold_us = UCS_ULUNITS_AUTO;
	return uct_sctp_dpdk_config_build(&c, &dp, sg, text, sizeof(text));
}

/* Busy polling (each polling thread has a CPU): the mode the checks below
 * take unless they say otherwise. */
static ucs_status_t build(const char *sg_extra, struct sg_config *sg)
{
	return build_mode(sg_extra, 0, sg);
}

int main(void)
{
	struct sg_config sg, plain;
	ucs_status_t st;

	/* the sctp layer's own defaults, for comparison */
	CHECK(sg_config_parse("", &plain) == 0, "sg defaults");

	/* busy polling: a peer acknowledges within a round trip, so a lost
	 * tail packet waits 20 ms, not the sctp layer's 100 */
	st = build("", &sg);
	CHECK(st == UCS_OK, "no SG: %s", ucs_status_string(st));
	CHECK(sg.sack_delay_ms == 5, "sack_delay_ms %u, want 5",
	      sg.sack_delay_ms);
	CHECK(sg.sack_immediate && plain.sack_immediate,
	      "sack_immediate %d (sctp layer: %d), want 1 and 1",
	      sg.sack_immediate, plain.sack_immediate);
	st = build("sack_immediate=0 sack_delay_ms=0", &sg);
	CHECK(st == UCS_OK && !sg.sack_immediate && sg.sack_delay_ms == 0,
	      "SG sack_immediate=0 sack_delay_ms=0: %s",
	      ucs_status_string(st));
	CHECK(sg.rto_min_ms == 20 && plain.rto_min_ms == 100,
	      "busy poll: rto_min_ms %u (sctp layer: %u), want 20",
	      sg.rto_min_ms, plain.rto_min_ms);
	CHECK(sg.path_max_rxt == 10 && sg.rto_max_ms == 1000,
	      "busy poll: path_max_rxt %u rto_max_ms %u, want 10 and 1000",
	      sg.path_max_rxt, sg.rto_max_ms);
	CHECK(plain.sack_delay_ms != 0, "the sctp layer delays SACKs");
	/* the SACK hold: the transport's, off in the sctp layer */
	CHECK(sg.sack_hold_us == UCT_SCTP_DPDK_SACK_HOLD_AUTO_US,
	      "sack_hold_us %u", sg.sack_hold_us);
	CHECK(plain.sack_hold_us == 0, "the sctp layer holds SACKs");
	st = build("sack_hold_us=0", &sg);
	CHECK(st == UCS_OK && sg.sack_hold_us == 0, "SG sack_hold_us=0: %s",
	      ucs_status_string(st));

	/* ranks share CPUs (IDLE_SLEEP_US back-off): a descheduled peer
	 * cannot acknowledge in 20 ms, the sctp layer's RTO bounds stay */
	st = build_mode("", 20, &sg);
	CHECK(st == UCS_OK, "back-off, no SG: %s", ucs_status_string(st));
	CHECK(sg.sack_delay_ms == 5, "back-off: sack_delay_ms %u",
	      sg.sack_delay_ms);
	CHECK(sg.rto_min_ms == plain.rto_min_ms &&
		      sg.path_max_rxt == plain.path_max_rxt &&
		      sg.rto_max_ms == plain.rto_max_ms,
	      "back-off: rto_min_ms %u path_max_rxt %u (sctp layer: %u %u)",
	      sg.rto_min_ms, sg.path_max_rxt, plain.rto_min_ms,
	      plain.path_max_rxt);

	/* the user's SG still has the last word */
	st = build("rto_min_ms=100 rto_max_ms=3000 path_max_rxt=5", &sg);
	CHECK(st == UCS_OK && sg.rto_min_ms == 100 && sg.path_max_rxt == 5 &&
		      sg.rto_max_ms == 3000,
	      "SG rto_min_ms=100 path_max_rxt=5 not applied: %s",
	      ucs_status_string(st));

	/* valid after the transport's sack_delay_ms=5 */
	st = build("rto_min_ms=10", &sg);
	CHECK(st == UCS_OK && sg.rto_min_ms == 10,
	      "SG rto_min_ms=10 refused: %s", ucs_status_string(st));

	/* bench/seeds.py's candidate for lossy links */
	st = build("rto_min_ms=20 path_max_rxt=7", &sg);
	CHECK(st == UCS_OK && sg.rto_min_ms == 20 && sg.path_max_rxt == 7,
	      "SG rto_min_ms=20 path_max_rxt=7 refused: %s",
	      ucs_status_string(st));

	/* still refused: contradictions within the result */
	st = build("rto_initial_ms=5", &sg);
	CHECK(st == UCS_ERR_INVALID_PARAM, "SG rto_initial_ms=5 below "
	      "rto_min_ms accepted: %s", ucs_status_string(st));
	st = build("rto_min_ms=10 sack_delay_ms=50", &sg);
	CHECK(st == UCS_ERR_INVALID_PARAM, "SG sack_delay_ms=50 above "
	      "rto_min_ms accepted: %s", ucs_status_string(st));

	printf("sg defaults: %s\n", failures ? "FAIL" : "ok");
	return failures ? 1 : 0;
}
