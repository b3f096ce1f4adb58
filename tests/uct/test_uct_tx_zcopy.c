/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_uct_tx_zcopy.c - put_zcopy sends its data from the caller's buffer
 * by reference (TX_ZCOPY_MIN, sg_send_zc, usrsctp-patches/0006) and
 * completes only when nothing references the buffer any more (meson test
 * uct-tx-zcopy).
 *
 *   zcopy   rounds of put_zcopy 64 KiB / 1 MiB / 4 MiB under 2% loss each
 *           way (dp drop hook, drop=tx:every:50: retransmissions read the
 *           buffer again).  The completion callback checks that no
 *           zero-copy send is referenced any more (sg_zc_held() == 0: one
 *           op in flight) and overwrites the buffer at once; the target's
 *           region must hold the original pattern, every byte.  The
 *           counters show the data went by reference (tx_zcopy msgs and
 *           bytes, all completed, none with an error) and that the
 *           messages' records (sg_zc's and the UCT one) were reused.
 *
 * Completing at the target's ACK alone (before this patch's wait for the
 * references) left zero-copy sends held at the completion.
 *
 * Fixture: uct_fixture.h, RMA peer: uct_rma_fixture.h.
 */
#include "uct_rma_fixture.h"

#include <string.h>

#define ZC_ROUNDS 24

typedef struct {
	uct_completion_t super;
	uint8_t *buf;
	size_t len;
	int done;
	uint64_t held_at_done;	 /* zero-copy sends still referenced */
} zc_comp_t;

static void zc_comp_cb(uct_completion_t *self)
{
	zc_comp_t *c = ucs_derived_of(self, zc_comp_t);

	c->held_at_done = sg_zc_held();
	/* the caller's buffer is free again: reuse it at once */
	memset(c->buf, 0xee, c->len);
	c->done = 1;
}

/* Sum of every lane's zero-copy counters of this process. */
static void zc_stats(struct sg_zc_stats *sum)
{
	uct_sctp_dpdk_ctx_t *ctx = uct_sctp_dpdk_ctx_peek();
	struct sg_zc_stats z;
	unsigned k;

	memset(sum, 0, sizeof(*sum));
	for (k = 0; ctx != NULL && k < ctx->nb_lanes; k++) {
		if (ctx->lane_sg[k] == NULL)
			continue;
		sg_ep_zc_stats(ctx->lane_sg[k], &z);
		sum->msgs += z.msgs;
		sum->bytes += z.bytes;
		sum->done += z.done;
		sum->done_err += z.done_err;
		sum->outstanding += z.outstanding;
		sum->records += z.records;
	}
}

static int test_tx_zcopy(void)
{
	static const size_t sizes[] = { 64u << 10, 1u << 20, 4u << 20 };
	uint8_t dev[64], ifa[64], *buf;
	struct sg_zc_stats zs;
	uint64_t total = 0, bad;
	uct_rkey_bundle_t a_rk;
	rma_info_t info;
	ucs_status_t st;
	double deadline;
	zc_comp_t c;
	uct_iov_t iov;
	uct_ep_h ep;
	iface_t t;
	env_t e;
	unsigned r;

	/* both sides lose 2% of their DATA packets */
	setenv("UCX_SCTP_DPDK_DP", "drop=tx:every:50", 1);
	setenv("UCX_SCTP_DPDK_TX_ZCOPY_MIN", "16k", 1);
	if (fx_rma_start(&e, &t, dev, ifa, &info) != 0)
		return 1;
	CHECK_OK(uct_rkey_unpack(e.comp, info.a_rkey, &a_rk), "unpack A");
	buf = malloc(4u << 20);
	if (buf == NULL)
		return 1;
	ep = fx_ep_to(&t, dev, ifa);
	for (r = 0; r < ZC_ROUNDS && fx_failures == 0; r++) {
		size_t len = sizes[r % 3];
		uint64_t off = (r * 4096u) % (RMA_BIG - len);
		uint32_t seed = 500 + r;

		fx_rma_fill(buf, len, seed);
		iov = (uct_iov_t){.buffer = buf, .length = len, .count = 1,
				  .memh = UCT_MEM_HANDLE_NULL};
		c.super.func = zc_comp_cb;
		c.super.count = 1;
		c.super.status = UCS_OK;
		c.buf = buf;
		c.len = len;
		c.done = 0;
		c.held_at_done = UINT64_MAX;
		deadline = fx_now_s() + RMA_DEADLINE_S;
		while ((st = uct_ep_put_zcopy(ep, &iov, 1, info.a_addr + off,
					      a_rk.rkey, &c.super)) ==
			       UCS_ERR_NO_RESOURCE &&
		       fx_now_s() < deadline)
			uct_worker_progress(e.worker);
		CHECK(st == UCS_INPROGRESS, "round %u: put_zcopy %zu B: %s", r,
		      len, ucs_status_string(st));
		while (!c.done && fx_now_s() < deadline)
			uct_worker_progress(e.worker);
		CHECK(c.done, "round %u: put_zcopy %zu B never completed", r,
		      len);
		CHECK(c.super.status == UCS_OK, "round %u: put_zcopy: %s", r,
		      ucs_status_string(c.super.status));
		CHECK(c.held_at_done == 0, "round %u: completed while %" PRIu64
		      " zero-copy sends were still referenced", r,
		      c.held_at_done);
		bad = fx_rma_cmd('V', 0, seed, off, len);
		CHECK(bad == 0, "round %u: the target's %zu bytes differ at %"
		      PRIu64 " (UINT64_MAX: a guard)", r, len, bad - 1);
		total += len;
	}
	zc_stats(&zs);
	printf("tx-zcopy: %u rounds, %" PRIu64 " bytes put: zero-copy msgs %"
	       PRIu64 " bytes %" PRIu64 " done %" PRIu64 " done_err %" PRIu64
	       " outstanding %" PRIu64 "\n", r, total, zs.msgs, zs.bytes,
	       zs.done, zs.done_err, zs.outstanding);
	CHECK(zs.msgs > 0 && zs.done == zs.msgs && zs.outstanding == 0 &&
	      zs.done_err == 0, "zero-copy counters do not add up");
	/* Their records (sg's and ours) are reused: malloc'd up to the
	 * messages of the one op in flight (4 MiB: 68), not one per
	 * message (a glibc malloc and free each before) */
	printf("tx-zcopy: records: sg %" PRIu64 ", uct %" PRIu64 " malloc'd "
	       "for %" PRIu64 " messages\n", zs.records,
	       uct_sctp_dpdk_ctx_peek()->rma_zc_mallocs, zs.msgs);
	CHECK(zs.records <= 128 &&
	      uct_sctp_dpdk_ctx_peek()->rma_zc_mallocs <= 128 &&
	      zs.msgs > 256, "zero-copy records are not reused");
	/* the PUT data went by reference (headers copied) */
	CHECK(zs.bytes >= total, "%" PRIu64 " of %" PRIu64 " bytes went by "
	      "reference", zs.bytes, total);
	uct_ep_destroy(ep);
	uct_rkey_release(e.comp, &a_rk);
	fx_rma_stop(&e, &t);
	free(buf);
	return fx_failures ? 1 : 0;
}

int main(void)
{
	return fx_run(test_tx_zcopy);
}
