/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_uct_rma_packets.c - bulk RMA in whole packets (meson tests
 * uct-rma-packets-*; UCX_SCTP_DPDK_RMA_WHOLE_PACKETS, sctp_dpdk_rma.c
 * uct_sctp_dpdk_rma_chunk_bytes; sg.h SG_SEND_MORE).  At MTU 64000 over
 * memif, one 4 MiB op, every byte checked:
 *
 *   get   get_zcopy: the reply data arrive in about one packet per
 *         fragmentation point's worth of bytes (at most 1.1x the minimum
 *         + 4), and the initiator SACKs about every second of them (at
 *         most 0.65 packets out per packet in).  With SEG_SIZE messages
 *         (65536 bytes: 63944 + 1592) it was 2 packets per message, ~2x
 *         the minimum; with the I bit on every reply message (each one
 *         packet once they are whole) it was one SACK per packet.
 *   put   put_zcopy, the same from the sending side: packets out at most
 *         1.1x the minimum + 4, SACKs back at most 0.65 per packet out.
 *   seg   the control: RMA_WHOLE_PACKETS=n RMA_SACK_LAST=n (SEG_SIZE
 *         messages, each with the I bit: the behaviour before), a get
 *         takes 1.5x the minimum packets or more (a small packet after
 *         each message).
 *
 * Fixture: uct_fixture.h, RMA peer (region A of 16 MiB): uct_rma_fixture.h.
 */
#include "uct_rma_fixture.h"

#include <string.h>

#define RP_MTU "64000"
#define RP_BYTES (4u << 20)
#define RP_OFFSET 4099 /* no alignment anywhere */
#define RP_SEED 93

static const char *mode;

static int test_rma_packets(void)
{
	int put = !strcmp(mode, "put"), seg = !strcmp(mode, "seg");
	uint8_t dev[64], ifa[64], small[100], *buf;
	uct_sctp_dpdk_ctx_t *ctx;
	uct_sctp_dpdk_ep_t *uep;
	uct_rkey_bundle_t a_rk;
	struct sg_stats s0, s1;
	uint64_t in, out, data, acks, full;
	rma_info_t info;
	ucs_status_t st;
	uct_ep_h ep;
	iface_t t;
	env_t e;
	int frag;

	/* both processes: the peer reads them at its start */
	setenv("UCX_SCTP_DPDK_MTU", RP_MTU, 1);
	setenv("UCX_SCTP_DPDK_RMA_WHOLE_PACKETS", seg ? "n" : "y", 1);
	setenv("UCX_SCTP_DPDK_RMA_SACK_LAST", seg ? "n" : "y", 1);
	buf = malloc(RP_BYTES);
	if (buf == NULL) {
		fprintf(stderr, "FAIL: no memory\n");
		return 1;
	}
	if (fx_rma_start(&e, &t, dev, ifa, &info) != 0)
		return 1;
	ctx = uct_sctp_dpdk_ctx_peek();
	if (ctx == NULL || ctx->sg == NULL) {
		fprintf(stderr, "FAIL: no transport context after the iface "
			"opened\n");
		return 1;
	}
	CHECK_OK(uct_rkey_unpack(e.comp, info.a_rkey, &a_rk), "unpack A");
	ep = fx_ep_to(&t, dev, ifa);
	/* warm-up: the association comes up, its first SACKs go */
	st = fx_rma_op(ep, RMA_GET_ZCOPY, small, sizeof(small), info.a_addr,
		       a_rk.rkey);
	CHECK(st == UCS_OK, "warm-up get: %s", ucs_status_string(st));
	uep = ucs_derived_of(ep, uct_sctp_dpdk_ep_t);
	frag = sg_assoc_frag_bytes(uep->peer->sg, uep->peer->assoc);
	CHECK(frag > 60000, "fragmentation point %d at MTU " RP_MTU, frag);
	if (frag <= 0)
		frag = 1;
	full = (RP_BYTES + (uint64_t)frag - 1) / (uint64_t)frag;
	if (put) {
		fx_rma_fill(buf, RP_BYTES, RP_SEED);
		sg_ep_stats(ctx->sg, &s0);
		st = fx_rma_op(ep, RMA_PUT_ZCOPY, buf, RP_BYTES,
			       info.a_addr + RP_OFFSET, a_rk.rkey);
		fx_rma_flush(ep);
		sg_ep_stats(ctx->sg, &s1);
		CHECK(fx_rma_cmd('V', 0, RP_SEED, RP_OFFSET, RP_BYTES) == 0,
		      "put data wrong at the peer");
	} else {
		fx_rma_cmd('F', 0, RP_SEED, RP_OFFSET, RP_BYTES);
		memset(buf, 0, RP_BYTES);
		sg_ep_stats(ctx->sg, &s0);
		st = fx_rma_op(ep, RMA_GET_ZCOPY, buf, RP_BYTES,
			       info.a_addr + RP_OFFSET, a_rk.rkey);
		fx_rma_flush(ep);
		sg_ep_stats(ctx->sg, &s1);
		CHECK(fx_rma_check(buf, RP_BYTES, RP_SEED) < 0,
		      "get data wrong at byte %" PRId64,
		      fx_rma_check(buf, RP_BYTES, RP_SEED));
	}
	CHECK(st == UCS_OK, "%s of %u bytes: %s", put ? "put" : "get",
	      RP_BYTES, ucs_status_string(st));
	in = s1.pkts_in - s0.pkts_in;
	out = s1.pkts_out - s0.pkts_out;
	data = put ? out : in;
	acks = put ? in : out;
	printf("%s: %u bytes at MTU " RP_MTU " (fragmentation point %d, "
	       "%" PRIu64 " packets at least): %" PRIu64 " data packets, %"
	       PRIu64 " back (%.2f per data packet)\n", mode, RP_BYTES, frag,
	       full, data, acks, data ? (double)acks / (double)data : 0.0);
	if (seg) {
		CHECK(data * 2 >= full * 3, "%" PRIu64 " packets with "
		      "SEG_SIZE messages: want >= 1.5x %" PRIu64 " (a small "
		      "packet after each message's full ones)", data, full);
	} else {
		CHECK(data * 10 <= full * 11 + 40, "%" PRIu64 " data packets: "
		      "want <= 1.1x %" PRIu64 " + 4 (messages of whole "
		      "packets, UCX_SCTP_DPDK_RMA_WHOLE_PACKETS)", data, full);
		CHECK(acks * 100 <= data * 65, "%" PRIu64 " packets back for "
		      "%" PRIu64 ": want <= 0.65 per packet (SACK every "
		      "second; only the op's last message asks for one at "
		      "once)", acks, data);
	}
	printf("%s: %s\n", mode, fx_failures ? "FAIL" : "ok");
	uct_ep_destroy(ep);
	uct_rkey_release(e.comp, &a_rk);
	fx_rma_stop(&e, &t);
	free(buf);
	return fx_failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc != 2 || (strcmp(argv[1], "get") && strcmp(argv[1], "put") &&
			  strcmp(argv[1], "seg"))) {
		fprintf(stderr, "usage: %s get|put|seg\n", argv[0]);
		return 1;
	}
	mode = argv[1];
	return fx_run(test_rma_packets);
}
