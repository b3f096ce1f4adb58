/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pace_rate.c - rate text in bit/s with SI suffixes ("1G", "500M", "10m"),
 * as written in configuration strings and environment variables.
 *
 * Stricter than sdp_parse_u64 alone: digits and one optional suffix only,
 * so "0x10", "010" (octal to strtoull), " 1G", "+1G" and "1.5G" are errors
 * rather than surprising values.  Lower-case m means mega, not milli: rates
 * below 1 bit/s make no sense.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>

#include "pace_internal.h"

static int rate_text_well_formed(const char *text)
{
	const char *p = text;

	while (isdigit((unsigned char)*p))
		p++;
	if (p == text)
		return 0; /* no digits */
	if (text[0] == '0' && p - text > 1)
		return 0; /* leading zero */
	switch (*p) {
	case '\0':
		return 1;
	case 'k':
	case 'K':
	case 'm':
	case 'M':
	case 'g':
	case 'G':
		return p[1] == '\0';
	default:
		return 0;
	}
}

int pace_rate_parse(const char *text, uint64_t *rate_bps_p)
{
	uint64_t rate_bps;

	if (text == NULL || rate_bps_p == NULL) {
		SDP_LOG(ERR, PACE, "rate parse: text %p or rate_bps_p %p is NULL",
			(const void *)text, (void *)rate_bps_p);
		return -EINVAL;
	}
	if (!rate_text_well_formed(text) ||
	    sdp_parse_u64(text, 1, &rate_bps) != 0) {
		SDP_LOG(ERR, PACE,
			"rate '%s' is not a rate in bit/s; write digits with an "
			"optional SI suffix k, M or G (e.g. 500M, 1G, 2500M), "
			"or 0 for unpaced", text);
		return -EINVAL;
	}
	if (rate_bps > PACE_RATE_MAX_BPS) {
		SDP_LOG(ERR, PACE,
			"rate '%s' is %" PRIu64 " bit/s, above the limit %" PRIu64
			"; use a rate at most the link speed",
			text, rate_bps, PACE_RATE_MAX_BPS);
		return -EINVAL;
	}
	*rate_bps_p = rate_bps;
	return 0;
}
