/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_link.c - libFuzzer harness: the path from a received frame to
 * usrsctp_conninput.  Frames enter a real port (net_ring loopback) and go
 * through dp_port_poll (classification, length and CRC32c checks, zero-copy
 * ring) and sg_poll (dp_pkt_info, peer lookup, usrsctp_conninput, reads).
 *
 * Input: one flag byte, then bytes.
 *   bit 0: raw mode: the bytes are the whole Ethernet frame
 *   else:  the bytes are an SCTP packet framed by valid Ethernet/IPv4
 *          headers from 10.0.0.<2 + bits 3-5>; bit 1 UDP encapsulation
 *          (RFC 6951); bit 2 fill in the right CRC32c so the packet gets
 *          past the dataplane into usrsctp.
 *
 * Invariant (abort otherwise): the port's receive accounting adds up,
 * every frame received is delivered, answered as ARP or dropped under
 * exactly one receive-side reason (rx_pkts = delivered + arp_rx + drops);
 * and every delivered packet reached the SCTP layer or still waits on the
 * rx ring (pkts_in + rx_not_sctp + rx_no_peer + rx_bad_src + ring =
 * delivered).
 */
#include <string.h>

#include "fuzz_port.h"
#include "sg.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct sg_ep *ep;

/* atexit, before fuzz_port_close (registered earlier, so run later): the
 * endpoint holds its port (dp_port_hold), whose close would otherwise wait
 * for it past exit, and LeakSanitizer reports the port as leaked */
static void fuzz_ep_close(void)
{
	sg_ep_close(ep);
	ep = NULL;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct sg_config scfg;

	(void)argc;
	(void)argv;
	fuzz_port_open("udp=1");
	if (sg_config_parse("", &scfg) != 0 || sg_ep_open(fuzz_port, &scfg, &ep) != 0) {
		fprintf(stderr, "fuzz: sg_ep_open failed\n");
		exit(1);
	}
	atexit(fuzz_ep_close);
	return 0;
}

static void check_accounting(void)
{
	struct dp_stats d;
	struct sg_stats s;
	uint64_t drops = 0;
	unsigned int i;

	dp_port_stats(fuzz_port, &d);
	sg_ep_stats(ep, &s);
	/* receive-side reasons only: the rest are TX drops (hold_full,
	 * tx_full, arp_timeout, no_mbuf) and the drop= hook (off here);
	 * sctp_crc_zero is a CRC drop too: checksum 0 on this net_ring port,
	 * which verifies every CRC (crc=auto is isal off memif); arp_sender
	 * is an ARP frame refused on receive (hold_dest_full is a TX drop) */
	for (i = 0; i <= DP_DROP_RX_RING_FULL; i++)
		drops += d.drops[i];
	drops += d.drops[DP_DROP_SCTP_CRC_ZERO];
	drops += d.drops[DP_DROP_ARP_SENDER];
	if (d.rx_pkts != d.delivered + d.arp_rx + drops ||
	    s.pkts_in + s.rx_not_sctp + s.rx_no_peer + s.rx_bad_src +
			    rte_ring_count(fuzz_port->rx_ring) !=
		    d.delivered) {
		dp_stats_print(&d, stderr);
		sg_stats_print(&s, stderr);
		abort();
	}
	/* every packet went to usrsctp, copied or kept (rx_ext) */
	if (s.rx_copy_input_bytes + s.rx_ext_bytes < s.pkts_in * 12)
		abort(); /* SCTP common header */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dp_port *port = fuzz_port;
	struct rte_mbuf *m;
	struct sg_msg_desc *msgs[16];
	struct sg_event ev;
	unsigned int n, k;
	uint8_t flags;

	if (size < 1 || size > 9000)
		return 0;
	flags = data[0];
	data++;
	size--;
	if (flags & 1) {
		m = fuzz_mbuf(data, size);
	} else {
		bool udp = flags & 2;
		uint16_t hlen = dp_frame_hdr_len(udp);
		uint8_t *f;

		m = rte_pktmbuf_alloc(port->pool);
		if (m == NULL)
			abort();
		f = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(hlen + size));
		if (f == NULL) {
			rte_pktmbuf_free(m);
			return 0;
		}
		memcpy(f + hlen, data, size);
		if ((flags & 4) && size >= 12)
			dp_sctp_crc_fill(DP_CRC_ISAL, f + hlen, size);
		dp_frame_build(f, &port->fctx.mac, &port->fctx.mac,
			       rte_cpu_to_be_32(0x0a000002u + ((flags >> 3) & 7)),
			       FUZZ_IP_BE, DP_IPPROTO_SCTP,
			       udp ? DP_SCTP_UDP_PORT : 0, udp ? DP_SCTP_UDP_PORT : 0,
			       (uint16_t)size, 1,
			       false);
	}
	if (m == NULL)
		return 0;
	if (rte_eth_tx_burst(port->port_id, 0, &m, 1) != 1) {
		rte_pktmbuf_free(m);
		abort();
	}
	/* the frame, and whatever usrsctp answers (it loops back too) */
	for (k = 0; k < 4; k++) {
		sg_poll(ep, dp_tsc());
		while ((n = sg_recv(ep, msgs, 16)) > 0)
			while (n > 0)
				sg_msg_release(msgs[--n]);
		while (sg_next_event(ep, &ev) == 0)
			;
	}
	check_accounting();
	return 0;
}
