/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pace_matb.c - MATB, the maximum allowed transfer bandwidth of seed 001
 * (Takano et al., Table I): the inter-cluster bandwidth B divided by the
 * number of nodes that may send across the link at once, for N nodes per
 * cluster:
 *
 *   B/N            all-to-all; NPB LU, MG, FT, IS
 *   B/(N/2)        NPB CG (= 2B/N)
 *   B/(2*sqrt(2N)) NPB BT, SP (= B/sqrt(8N))
 *   B/2N           below the others, avoids incast at the receiver switch
 *
 * All integer: results are rounded down, so a queue is never paced above
 * the exact MATB.  The square root is exact: floor(B/sqrt(8N)) equals
 * isqrt(floor(B^2/(8N))), computed on 128-bit values.
 */
#include <errno.h>
#include <inttypes.h>

#include "pace_internal.h"

/* floor(sqrt(x)), digit by digit; x < 2^128 so the result fits 64 bits. */
static uint64_t isqrt_u128(pace_u128 x)
{
	pace_u128 root = 0, bit = (pace_u128)1 << 126;

	while (bit > x)
		bit >>= 2;
	while (bit != 0) {
		if (x >= root + bit) {
			x -= root + bit;
			root = (root >> 1) + bit;
		} else {
			root >>= 1;
		}
		bit >>= 2;
	}
	return (uint64_t)root;
}

static int matb_compute(enum pace_matb_pattern pattern, uint64_t b_bps,
			uint32_t nodes, uint64_t *rate_bps_p)
{
	switch (pattern) {
	case PACE_MATB_B_N:
		*rate_bps_p = b_bps / nodes;
		return 0;
	case PACE_MATB_B_HALF_N:
		*rate_bps_p = 2 * b_bps / nodes;
		return 0;
	case PACE_MATB_B_2SQRT_2N:
		*rate_bps_p = isqrt_u128((pace_u128)b_bps * b_bps /
					 (8 * (pace_u128)nodes));
		return 0;
	case PACE_MATB_B_2N:
		*rate_bps_p = b_bps / (2 * (uint64_t)nodes);
		return 0;
	}
	SDP_LOG(ERR, PACE,
		"matb pattern %d is unknown; use B/N, B/(N/2), B/(2*sqrt(2N)) "
		"or B/2N (enum pace_matb_pattern)", (int)pattern);
	return -EINVAL;
}

int pace_matb_rate_bps(enum pace_matb_pattern pattern, uint64_t link_rate_bps,
		       uint32_t nodes, uint64_t *rate_bps_p)
{
	uint64_t rate_bps;
	int ret;

	if (rate_bps_p == NULL) {
		SDP_LOG(ERR, PACE, "matb: rate_bps_p is NULL");
		return -EINVAL;
	}
	if (nodes == 0) {
		SDP_LOG(ERR, PACE,
			"matb nodes 0 is invalid: need at least 1 node per "
			"cluster; pass the number of nodes sending across the link");
		return -EINVAL;
	}
	if (link_rate_bps == 0 || link_rate_bps > PACE_RATE_MAX_BPS) {
		SDP_LOG(ERR, PACE,
			"matb link_rate_bps %" PRIu64 " is outside 1..%" PRIu64
			"; pass the inter-cluster bandwidth in bit/s",
			link_rate_bps, PACE_RATE_MAX_BPS);
		return -EINVAL;
	}
	ret = matb_compute(pattern, link_rate_bps, nodes, &rate_bps);
	if (ret != 0)
		return ret;
	if (rate_bps == 0 || rate_bps > link_rate_bps) {
		SDP_LOG(ERR, PACE,
			"matb of %" PRIu64 " bit/s over %u nodes is %" PRIu64
			" bit/s, outside 1..%" PRIu64 "; B/(N/2) needs N >= 2, "
			"and B must be at least the divisor",
			link_rate_bps, nodes, rate_bps, link_rate_bps);
		return -ERANGE;
	}
	*rate_bps_p = rate_bps;
	return 0;
}
