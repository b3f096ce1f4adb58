/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pace_internal.h - shared by pacing's .c files and its unit test only:
 * 64.64 fixed-point arithmetic, the rate mailbox sentinel, the PAUSE frame
 * layout and the rate precomputation.
 */
#ifndef PACE_INTERNAL_H
#define PACE_INTERNAL_H

#include <stdint.h>

#include "pace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* GCC/Clang 128-bit integers: config-time division, per-frame 64x64 mul. */
__extension__ typedef unsigned __int128 pace_u128;

/* pending_rate_bps when no rate is waiting; above any valid rate. */
#define PACE_RATE_NONE UINT64_MAX

/*
 * 802.3x PAUSE frame as written on the wire (no FCS).  Big-endian fields;
 * the padding up to 60 bytes follows.
 */
struct pace_pause_hdr {
	uint8_t dst_addr[6];	/* 01:80:C2:00:00:01 */
	uint8_t src_addr[6];	/* sending port's MAC */
	uint16_t ether_type_be; /* 0x8808, MAC control */
	uint16_t opcode_be;	/* 0x0001, PAUSE */
	uint16_t quanta_be;	/* pause time, 512-bit times; 0 = no pause */
} __attribute__((packed));

/*
 * n * (whole + frac / 2^64) + *residual / 2^64, returning the integer part
 * and keeping the fraction in *residual, so that the sum over any sequence
 * of calls is floor(sum n * factor): nothing is lost between calls.
 * n < 2^17 and whole < 2^44 (the configuration limits) keep this in 64 bits.
 */
static inline uint64_t pace_fp_mul(uint64_t n, uint64_t whole, uint64_t frac,
				   uint64_t *residual)
{
	pace_u128 f = (pace_u128)n * frac + *residual;

	*residual = (uint64_t)f;
	return n * whole + (uint64_t)(f >> 64);
}

/* num / den as 64.64 fixed point, rounded down; den != 0. */
static inline void pace_fp_div(uint64_t num, uint64_t den, uint64_t *whole_p,
			       uint64_t *frac_p)
{
	*whole_p = num / den;
	*frac_p = (uint64_t)(((pace_u128)(num % den) << 64) / den);
}

/*
 * Precompute the per-wire-byte factors of rate_bps on profile's link:
 * TSC cycles per byte (8 * tsc_hz / rate) and gap bytes per byte
 * ((link - rate) / rate).  rate_bps 0 gives all zero (unpaced).  rate_bps
 * must already be validated (<= link rate).
 */
void pace_rate_precompute(const struct pace_profile *profile,
			  uint64_t rate_bps, struct pace_rate_fp *rate_p);

#ifdef __cplusplus
}
#endif

#endif /* PACE_INTERNAL_H */
