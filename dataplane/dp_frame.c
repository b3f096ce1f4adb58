/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_frame.c - Ethernet/IPv4 framing of SCTP: classify received frames and
 * build headers for transmitted ones.
 *
 * Classification is a pure function of the frame bytes and our addresses so
 * it can be tested with a table of malformed frames.  Every frame ends in
 * exactly one verdict; a drop carries exactly one reason, the first check
 * that failed.  Nothing malformed reaches the layer above:
 *
 *   len >= 14 ? -> ethertype ARP -> DP_V_ARP
 *              -> ethertype 0x8808 (PAUSE) -> drop gap_frame
 *              -> ethertype != IPv4 -> drop ethertype
 *   dst MAC ours? -> IPv4: version 4, IHL >= 5 (options are allowed and
 *   skipped), total length within the frame (Ethernet padding allowed),
 *   header checksum, not a fragment, dst ours, protocol SCTP / EXP / UDP
 *   on the encapsulation port -> SCTP at least common header + one chunk
 *   header -> DP_V_DELIVER.
 */
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_udp.h>
#include <rte_sctp.h>

#include "dp_internal.h"

#define SCTP_MIN_LEN 16 /* common header + one chunk header */

static inline enum dp_verdict drop(struct dp_parsed *out, enum dp_drop why)
{
	out->drop = why;
	return DP_V_DROP;
}

/* One's-complement sum of the IPv4 header; 0xffff when it is correct. */
static uint16_t ip_hdr_sum(const uint8_t *p, unsigned int len)
{
	uint32_t sum = 0;
	unsigned int i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

enum dp_verdict dp_frame_classify(const struct dp_frame_ctx *ctx,
				  const uint8_t *frame, uint32_t len,
				  struct dp_parsed *out)
{
	const struct rte_ether_hdr *eth = (const struct rte_ether_hdr *)frame;
	const uint8_t *ip;
	uint16_t type, tot_len, frag;
	unsigned int ihl;
	uint32_t ip_avail;

	memset(out, 0, sizeof(*out));
	if (len < RTE_ETHER_HDR_LEN)
		return drop(out, DP_DROP_SHORT);
	type = rte_be_to_cpu_16(eth->ether_type);
	if (type == RTE_ETHER_TYPE_ARP)
		return DP_V_ARP;
	if (type == 0x8808)
		return drop(out, DP_DROP_GAP_FRAME);
	if (type != RTE_ETHER_TYPE_IPV4)
		return drop(out, DP_DROP_ETHERTYPE);
	if (!rte_is_same_ether_addr(&eth->dst_addr, &ctx->mac))
		return drop(out, DP_DROP_NOT_FOR_US);
	if (len < RTE_ETHER_HDR_LEN + 20)
		return drop(out, DP_DROP_SHORT);

	ip = frame + RTE_ETHER_HDR_LEN;
	ip_avail = len - RTE_ETHER_HDR_LEN;
	ihl = (unsigned int)(ip[0] & 0x0f) * 4;
	if ((ip[0] >> 4) != 4 || ihl < 20 || ihl > ip_avail)
		return drop(out, DP_DROP_IP_HDR);
	tot_len = (uint16_t)(ip[2] << 8 | ip[3]);
	/* Ethernet may pad short packets: the frame can be longer, not
	 * shorter, than the IPv4 total length. */
	if (tot_len < ihl || tot_len > ip_avail)
		return drop(out, DP_DROP_IP_LEN);
	if (!ctx->ip_cksum_checked && ip_hdr_sum(ip, ihl) != 0xffff)
		return drop(out, DP_DROP_IP_CKSUM);
	frag = (uint16_t)(ip[6] << 8 | ip[7]);
	if ((frag & (RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)) != 0)
		return drop(out, DP_DROP_IP_FRAG);
	memcpy(&out->src_ip_be, ip + 12, 4);
	memcpy(&out->dst_ip_be, ip + 16, 4);
	if (out->dst_ip_be != ctx->ip_be)
		return drop(out, DP_DROP_NOT_FOR_US);

	out->l3_off = RTE_ETHER_HDR_LEN;
	out->l4_off = (uint16_t)(RTE_ETHER_HDR_LEN + ihl);
	out->l4_len = (uint16_t)(tot_len - ihl);
	out->proto = ip[9];
	switch (out->proto) {
	case DP_IPPROTO_EXP:
		return DP_V_DELIVER;
	case DP_IPPROTO_SCTP:
		break;
	case DP_IPPROTO_UDP: {
		const uint8_t *udp = frame + out->l4_off;
		uint16_t ulen;

		if (ctx->udp_port == 0)
			return drop(out, DP_DROP_PROTO);
		if (out->l4_len < 8)
			return drop(out, DP_DROP_UDP);
		ulen = (uint16_t)(udp[4] << 8 | udp[5]);
		if ((uint16_t)(udp[2] << 8 | udp[3]) != ctx->udp_port ||
		    ulen < 8 || ulen > out->l4_len)
			return drop(out, DP_DROP_UDP);
		/* RFC 6951: the UDP checksum may be zero; SCTP's CRC32c
		 * protects the payload either way. */
		out->udp_encap = true;
		out->udp_sport = (uint16_t)(udp[0] << 8 | udp[1]);
		out->l4_off = (uint16_t)(out->l4_off + 8);
		out->l4_len = (uint16_t)(ulen - 8);
		out->proto = DP_IPPROTO_SCTP;
		break;
	}
	default:
		return drop(out, DP_DROP_PROTO);
	}
	if (out->l4_len < SCTP_MIN_LEN)
		return drop(out, DP_DROP_SCTP_LEN);
	return DP_V_DELIVER;
}

uint16_t dp_frame_hdr_len(bool udp)
{
	return (uint16_t)(RTE_ETHER_HDR_LEN + 20 + (udp ? 8 : 0));
}

void dp_frame_build(uint8_t *hdr, const struct rte_ether_addr *src_mac,
		    const struct rte_ether_addr *dst_mac, uint32_t src_ip_be,
		    uint32_t dst_ip_be, uint8_t proto, uint16_t udp_port,
		    uint16_t udp_dport, uint16_t l4_len, uint16_t ip_id,
		    bool ip_cksum_offload)
{
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)hdr;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	uint16_t ip_payload = l4_len;

	rte_ether_addr_copy(dst_mac, &eth->dst_addr);
	rte_ether_addr_copy(src_mac, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);

	if (udp_port != 0) {
		struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);

		ip_payload = (uint16_t)(l4_len + 8);
		udp->src_port = rte_cpu_to_be_16(udp_port);
		udp->dst_port = rte_cpu_to_be_16(udp_dport);
		udp->dgram_len = rte_cpu_to_be_16(ip_payload);
		udp->dgram_cksum = 0; /* allowed by RFC 6951 */
		proto = DP_IPPROTO_UDP;
	}
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->type_of_service = 0;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(20 + ip_payload));
	ip->packet_id = rte_cpu_to_be_16(ip_id);
	/* Never fragmented: SCTP sizes its packets to the path MTU. */
	ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = 64;
	ip->next_proto_id = proto;
	ip->src_addr = src_ip_be;
	ip->dst_addr = dst_ip_be;
	ip->hdr_checksum = 0;
	if (!ip_cksum_offload)
		ip->hdr_checksum = rte_ipv4_cksum(ip);
}
