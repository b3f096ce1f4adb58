/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_frame.c - libFuzzer harness: dp_frame_classify() on arbitrary
 * frames, then what the receive path does next with a verdict: the
 * CRC32c check of a delivered SCTP packet (every back-end) and
 * dp_arp_parse() of an ARP frame.
 *
 * Input: one flag byte, then the frame.  Flag bit 0: SCTP over UDP on
 * (port 9899); bit 1: the NIC validated the IPv4 checksum (so mutated
 * headers get past it).  The frame is copied into a buffer of exactly its
 * length, so any read past it is an ASan report.
 *
 * Invariants (abort otherwise): a delivered payload lies inside the frame,
 * is addressed to us and is SCTP or the experimental protocol; a drop
 * names a valid reason; the CRC back-ends agree.
 */
#include <stdlib.h>
#include <string.h>

#include "dp_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dp_frame_ctx c = {
		.mac = { { 0x02, 0, 0, 0, 0, 0x01 } },
		.ip_be = RTE_BE32(0x0a000001),
	};
	struct dp_parsed p;
	enum dp_verdict v;
	uint8_t *f;

	if (size < 1 || size > 10000)
		return 0;
	c.udp_port = (data[0] & 1) ? DP_SCTP_UDP_PORT : 0;
	c.ip_cksum_checked = (data[0] & 2) != 0;
	size--;
	f = malloc(size + 1);
	if (f == NULL)
		abort();
	memcpy(f, data + 1, size);
	memset(&p, 0, sizeof(p));
	v = dp_frame_classify(&c, f, (uint32_t)size, &p);
	switch (v) {
	case DP_V_DELIVER:
		if ((size_t)p.l4_off + p.l4_len > size ||
		    p.dst_ip_be != c.ip_be ||
		    (p.proto != DP_IPPROTO_SCTP && p.proto != DP_IPPROTO_EXP) ||
		    (p.udp_encap && c.udp_port == 0))
			abort();
		if (p.proto == DP_IPPROTO_SCTP) {
			const uint8_t *l4 = f + p.l4_off;
			bool ok = dp_sctp_crc_ok(DP_CRC_ISAL, l4, p.l4_len);

			if (ok != dp_sctp_crc_ok(DP_CRC_SSE42, l4, p.l4_len) ||
			    ok != dp_sctp_crc_ok(DP_CRC_TABLE, l4, p.l4_len))
				abort();
		}
		break;
	case DP_V_ARP: {
		struct rte_ether_addr sha;
		uint32_t sip, tip;
		uint16_t op;

		if (dp_arp_parse(f, (uint32_t)size, &op, &sha, &sip, &tip) ==
			    0 &&
		    op != 1 && op != 2)
			abort();
		break;
	}
	case DP_V_DROP:
		if ((unsigned int)p.drop >= DP_DROP_MAX)
			abort();
		break;
	default:
		abort();
	}
	free(f);
	return 0;
}
