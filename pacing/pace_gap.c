/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pace_gap.c - GAP mode's gap frames (after PSPacer): splitting the owed gap
 * into 802.3 MAC Control frames of legal size, writing them, and
 * recognising them on receive.
 *
 * A MAC Control frame with an opcode no MAC implements (PACE_GAP_OPCODE) is
 * discarded by the switch port that receives it; it only occupies wire
 * time.  (A PAUSE with pause time 0 would do the same but is an XON: it
 * ends any pause the port's own flow control asked for.)  A
 * gap frame of frame_bytes occupies frame_bytes + FCS + preamble + IFG =
 * frame_bytes + 24 wire bytes, from 84 (a 64-byte frame with FCS) up to the
 * profile's gap_wire_max_bytes.
 *
 * Split of an owed gap of G wire bytes (no division, largest first):
 *
 *   G <  84             nothing now; G stays owed and joins the next gap
 *   G <= max            one frame of G
 *   G >= max + 84       one frame of max, continue with G - max
 *   max < G < max + 84  one frame of G - 84, then one of 84; if G - 84 is
 *                       itself below 84 (only when max < 168) one frame of
 *                       max and the rest stays owed
 */
#include <errno.h>
#include <string.h>

#include "pace_internal.h"

static const uint8_t pause_dst_addr[6] = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x01};

static uint64_t gap_next_wire_bytes(uint64_t owed_bytes, uint64_t max_bytes)
{
	if (owed_bytes <= max_bytes)
		return owed_bytes;
	if (owed_bytes - max_bytes >= PACE_GAP_MIN_WIRE_BYTES)
		return max_bytes;
	if (owed_bytes - PACE_GAP_MIN_WIRE_BYTES >= PACE_GAP_MIN_WIRE_BYTES)
		return owed_bytes - PACE_GAP_MIN_WIRE_BYTES;
	return max_bytes;
}

uint16_t pace_gap_plan(struct pace_queue *q, uint16_t *frame_bytes,
		       uint16_t max_frames)
{
	uint64_t owed_bytes = q->gap_debt_bytes, wire_bytes;
	uint16_t n = 0;

	while (n < max_frames && owed_bytes >= PACE_GAP_MIN_WIRE_BYTES) {
		wire_bytes = gap_next_wire_bytes(owed_bytes,
						 q->gap_wire_max_bytes);
		frame_bytes[n++] =
			(uint16_t)(wire_bytes - PACE_WIRE_OVERHEAD_BYTES);
		owed_bytes -= wire_bytes;
		q->stats.gap_bytes += wire_bytes;
	}
	q->stats.gap_frames += n;
	q->gap_debt_bytes = owed_bytes;
	return n;
}

int pace_gap_frame_build(void *buf, uint32_t buf_bytes, uint32_t frame_bytes,
			 const uint8_t src_mac[6])
{
	struct pace_pause_hdr *hdr = buf;

	if (buf == NULL || src_mac == NULL ||
	    frame_bytes < PACE_FRAME_MIN_BYTES ||
	    frame_bytes > PACE_GAP_FRAME_MAX_BYTES - PACE_FCS_BYTES ||
	    buf_bytes < frame_bytes)
		return -EINVAL;
	memset(buf, 0, frame_bytes);
	memcpy(hdr->dst_addr, pause_dst_addr, sizeof(hdr->dst_addr));
	memcpy(hdr->src_addr, src_mac, sizeof(hdr->src_addr));
	/* Byte-wise big endian: no byte-order helpers in pure logic. */
	((uint8_t *)&hdr->ether_type_be)[0] = PACE_PAUSE_ETHER_TYPE >> 8;
	((uint8_t *)&hdr->ether_type_be)[1] = PACE_PAUSE_ETHER_TYPE & 0xff;
	((uint8_t *)&hdr->opcode_be)[0] = PACE_GAP_OPCODE >> 8;
	((uint8_t *)&hdr->opcode_be)[1] = PACE_GAP_OPCODE & 0xff;
	hdr->quanta_be = 0;
	return 0;
}

int pace_is_gap_frame(const void *buf, uint32_t len)
{
	const struct pace_pause_hdr *hdr = buf;
	const uint8_t *type, *opcode;

	if (buf == NULL || len < PACE_PAUSE_HDR_BYTES)
		return 0;
	type = (const uint8_t *)&hdr->ether_type_be;
	opcode = (const uint8_t *)&hdr->opcode_be;
	return memcmp(hdr->dst_addr, pause_dst_addr, sizeof(pause_dst_addr)) ==
		       0 &&
	       type[0] == (PACE_PAUSE_ETHER_TYPE >> 8) &&
	       type[1] == (PACE_PAUSE_ETHER_TYPE & 0xff) &&
	       opcode[0] == (PACE_GAP_OPCODE >> 8) &&
	       opcode[1] == (PACE_GAP_OPCODE & 0xff) && hdr->quanta_be == 0;
}
