/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pace_profile.c - validated configuration -> precomputed profile.
 *
 * A profile is immutable once initialised and shared by a port's queues.
 * Every field of the raw configuration is range-checked and each bad field
 * gets its own error line (value, limit, fix), as rte_sched's
 * pipe_profile_check does; nothing is clamped.  All divisions happen here
 * (and at run-time rate changes), never per frame: rates become 64.64
 * fixed-point factors per wire byte.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "pace_internal.h"

#define NS_PER_S UINT64_C(1000000000)

void pace_config_default(struct pace_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->max_gap_ns = PACE_MAX_GAP_DEFAULT_NS;
	cfg->gap_frame_max_bytes = PACE_GAP_FRAME_DEFAULT_BYTES;
	cfg->mode = PACE_MODE_AUTO;
}

void pace_rate_precompute(const struct pace_profile *profile,
			  uint64_t rate_bps, struct pace_rate_fp *rate_p)
{
	memset(rate_p, 0, sizeof(*rate_p));
	rate_p->rate_bps = rate_bps;
	if (rate_bps == 0)
		return;
	/* 8 * tsc_hz <= 8e11 and rates <= 1e13: no overflow (pace.h limits). */
	pace_fp_div(8 * profile->tsc_hz, rate_bps, &rate_p->tsc_per_byte,
		    &rate_p->tsc_per_byte_frac);
	pace_fp_div(profile->link_rate_bps - rate_bps, rate_bps,
		    &rate_p->gap_per_byte, &rate_p->gap_per_byte_frac);
}

static int check_clock_and_link(const struct pace_config *cfg)
{
	int ret = 0;

	if (cfg->tsc_hz == 0 || cfg->tsc_hz > PACE_TSC_HZ_MAX) {
		SDP_LOG(ERR, PACE,
			"config tsc_hz %" PRIu64 " is outside 1..%" PRIu64
			"; pass the measured tsc frequency (rte_get_tsc_hz())",
			cfg->tsc_hz, PACE_TSC_HZ_MAX);
		ret = -EINVAL;
	}
	if (cfg->link_rate_bps == 0 || cfg->link_rate_bps > PACE_RATE_MAX_BPS) {
		SDP_LOG(ERR, PACE,
			"config link_rate_bps %" PRIu64 " is outside 1..%" PRIu64
			"; set the port's link speed in bit/s (e.g. 10G)",
			cfg->link_rate_bps, PACE_RATE_MAX_BPS);
		ret = -EINVAL;
	}
	return ret;
}

static int check_target_rate(const struct pace_config *cfg)
{
	uint64_t limit_bps = cfg->link_rate_bps;

	if (limit_bps == 0 || limit_bps > PACE_RATE_MAX_BPS)
		limit_bps = PACE_RATE_MAX_BPS; /* link already reported */
	if (cfg->target_rate_bps <= limit_bps)
		return 0;
	SDP_LOG(ERR, PACE,
		"config target_rate_bps %" PRIu64 " is above link_rate_bps %" PRIu64
		"; lower the pacing rate, or use 0 for an unpaced queue",
		cfg->target_rate_bps, limit_bps);
	return -EINVAL;
}

static int check_gaps_and_mode(const struct pace_config *cfg)
{
	int ret = 0;

	if (cfg->max_gap_ns < PACE_MAX_GAP_MIN_NS ||
	    cfg->max_gap_ns > PACE_MAX_GAP_MAX_NS) {
		SDP_LOG(ERR, PACE,
			"config max_gap_ns %" PRIu64 " is outside %" PRIu64
			"..%" PRIu64 "; use %" PRIu64 " (1 s, as sch_fq)",
			cfg->max_gap_ns, PACE_MAX_GAP_MIN_NS,
			PACE_MAX_GAP_MAX_NS, PACE_MAX_GAP_DEFAULT_NS);
		ret = -EINVAL;
	}
	if (cfg->gap_frame_max_bytes < PACE_GAP_FRAME_MIN_BYTES ||
	    cfg->gap_frame_max_bytes > PACE_GAP_FRAME_MAX_BYTES) {
		SDP_LOG(ERR, PACE,
			"config gap_frame_max_bytes %u is outside %u..%u "
			"(frame with fcs); use %u, or the link's max frame",
			cfg->gap_frame_max_bytes, PACE_GAP_FRAME_MIN_BYTES,
			PACE_GAP_FRAME_MAX_BYTES, PACE_GAP_FRAME_DEFAULT_BYTES);
		ret = -EINVAL;
	}
	if (cfg->mode != PACE_MODE_DEADLINE && cfg->mode != PACE_MODE_GAP) {
		SDP_LOG(ERR, PACE,
			"config mode %s (%d) is not deadline or gap; resolve "
			"auto before configuring: gap for physical nics, "
			"deadline for virtual links",
			pace_mode_name(cfg->mode), (int)cfg->mode);
		ret = -EINVAL;
	}
	return ret;
}

int pace_profile_init(struct pace_profile *profile,
		      const struct pace_config *cfg)
{
	int ret = 0;

	if (profile == NULL || cfg == NULL) {
		SDP_LOG(ERR, PACE, "profile init: profile %p or config %p is "
			"NULL; pass both", (void *)profile, (const void *)cfg);
		return -EINVAL;
	}
	/* Run every check so that each bad field is reported once. */
	if (check_clock_and_link(cfg) != 0)
		ret = -EINVAL;
	if (check_target_rate(cfg) != 0)
		ret = -EINVAL;
	if (check_gaps_and_mode(cfg) != 0)
		ret = -EINVAL;
	if (ret != 0)
		return ret;

	memset(profile, 0, sizeof(*profile));
	profile->tsc_hz = cfg->tsc_hz;
	profile->link_rate_bps = cfg->link_rate_bps;
	profile->max_gap_tsc =
		(uint64_t)((pace_u128)cfg->max_gap_ns * cfg->tsc_hz / NS_PER_S);
	profile->max_gap_bytes = (uint64_t)((pace_u128)cfg->max_gap_ns *
					    cfg->link_rate_bps / (8 * NS_PER_S));
	profile->gap_wire_max_bytes =
		cfg->gap_frame_max_bytes + PACE_PREAMBLE_BYTES + PACE_IFG_BYTES;
	profile->mode = cfg->mode;
	pace_rate_precompute(profile, cfg->target_rate_bps, &profile->initial);
	return 0;
}

static const char *const mode_names[] = {
	[PACE_MODE_AUTO] = "auto",
	[PACE_MODE_DEADLINE] = "deadline",
	[PACE_MODE_GAP] = "gap",
};

const char *pace_mode_name(enum pace_mode mode)
{
	if ((unsigned int)mode >= SDP_ARRAY_SIZE(mode_names))
		return "?";
	return mode_names[mode];
}

int pace_mode_parse(const char *text, enum pace_mode *mode_p)
{
	unsigned int i;

	if (text == NULL || mode_p == NULL) {
		SDP_LOG(ERR, PACE, "mode parse: text %p or mode_p %p is NULL",
			(const void *)text, (void *)mode_p);
		return -EINVAL;
	}
	for (i = 0; i < SDP_ARRAY_SIZE(mode_names); i++) {
		if (strcmp(text, mode_names[i]) == 0) {
			*mode_p = (enum pace_mode)i;
			return 0;
		}
	}
	SDP_LOG(ERR, PACE,
		"pacing mode '%s' is unknown; use auto, deadline or gap", text);
	return -EINVAL;
}
