/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_uct_rndv_stream.c - rendezvous data on the RTS's stream (meson test
 * uct-rndv-stream).  With STREAM_TAG_MASK on, a GET of a buffer that a
 * tag RTS offered asks for its replies on the stream that RTS came on
 * (ucx-tl/README.md, "Stream map"): the bulk data of independent MPI
 * messages then do not queue behind each other's losses on the ep's one
 * stream.
 *
 *   1. a GET with no RTS noted: it and its replies come on the ep's
 *      stream
 *   2. an RTS noted (as the receive path notes one: sender's buffer,
 *      size, stream S != the ep's) then UCP's GET of it in two pieces
 *      (remote_address + offset) and a flush right behind: both GET
 *      requests and every reply message on S (counted by the target),
 *      none on the ep's stream, data intact, the flush completes after
 *      both GETs, the initiator counts 2 GETs mapped
 *   3. the same range again: the last piece freed the note, so the ep's
 *      stream again
 *
 * Fixture: uct_fixture.h, RMA peer: uct_rma_fixture.h (command S reads
 * the peer's GET replies per stream).
 */
#include "uct_rma_fixture.h"

#include <string.h>

#define RS_GET_BYTES (8u << 20)
#define RS_SEED 3

typedef struct {
	uct_completion_t super;
	int done;
	int gets_done_before; /* flush: GETs complete when it ran */
	const int *gets_done;
} rs_comp_t;

static int rs_gets_done;

static void rs_get_cb(uct_completion_t *self)
{
	rs_comp_t *c = ucs_container_of(self, rs_comp_t, super);

	c->done = 1;
	rs_gets_done++;
}

static void rs_flush_cb(uct_completion_t *self)
{
	rs_comp_t *c = ucs_container_of(self, rs_comp_t, super);

	c->done = 1;
	c->gets_done_before = rs_gets_done;
}

static void rs_comp_init(rs_comp_t *c, uct_completion_callback_t cb)
{
	memset(c, 0, sizeof(*c));
	c->super.func = cb;
	c->super.count = 1;
	c->super.status = UCS_OK;
}

/* get_zcopy of [off, off + len) of region A into @buf + off. */
static ucs_status_t rs_get(env_t *e, uct_ep_h ep, uint8_t *buf, uint64_t off,
			   uint64_t len, uint64_t a_addr, uct_rkey_t rkey,
			   rs_comp_t *c)
{
	uct_iov_t iov = {.buffer = buf + off, .length = len, .count = 1,
			 .memh = UCT_MEM_HANDLE_NULL};
	double deadline = fx_now_s() + RMA_DEADLINE_S;
	ucs_status_t st;

	rs_comp_init(c, rs_get_cb);
	while ((st = uct_ep_get_zcopy(ep, &iov, 1, a_addr + off, rkey,
				      &c->super)) == UCS_ERR_NO_RESOURCE &&
	       fx_now_s() < deadline)
		uct_worker_progress(e->worker);
	if (st == UCS_OK)
		rs_get_cb(&c->super);
	return st;
}

static int rs_wait(env_t *e, rs_comp_t *const *c, int n)
{
	double deadline = fx_now_s() + RMA_DEADLINE_S;
	int i, all;

	do {
		uct_worker_progress(e->worker);
		for (all = 1, i = 0; i < n; i++)
			all &= c[i]->done;
	} while (!all && fx_now_s() < deadline);
	return all;
}

/* Reply messages of a GET of @len bytes. */
static uint64_t rs_msgs(const uct_sctp_dpdk_ctx_t *ctx, uint64_t len)
{
	uint64_t chunk = ctx->seg_bytes - UCT_SCTP_DPDK_RMA_HDRS_BYTES;

	return (len + chunk - 1) / chunk;
}

static int test_rndv_stream(void)
{
	uint8_t dev[64], ifa[64], rts[48];
	uint64_t ep_before, s_before, ep_after, s_after, mapped, unmapped;
	uint64_t req_ep_before, req_s_before, req_ep_after, req_s_after;
	uct_sctp_dpdk_ctx_t *ctx;
	uct_sctp_dpdk_ep_t *sep;
	uct_rkey_bundle_t a_rk;
	rs_comp_t g1, g2, fc;
	rs_comp_t *const all[3] = {&g1, &g2, &fc};
	ucs_status_t st;
	rma_info_t info;
	uint16_t s;
	uint8_t *buf;
	uct_ep_h ep;
	iface_t t;
	env_t e;

	/* Both processes (the peer is forked with this environment). */
	setenv("UCX_SCTP_DPDK_STREAM_TAG_MASK", "0xffff", 1);
	setenv("UCX_SCTP_DPDK_STREAMS", "11", 1);
	if (fx_rma_start(&e, &t, dev, ifa, &info) != 0)
		return 1;
	CHECK_OK(uct_rkey_unpack(e.comp, info.a_rkey, &a_rk), "unpack A");
	buf = malloc(RS_GET_BYTES);
	if (buf == NULL)
		return 1;
	ctx = uct_sctp_dpdk_ctx_peek();
	ep = fx_ep_to(&t, dev, ifa);
	sep = ucs_derived_of(ep, uct_sctp_dpdk_ep_t);
	fx_rma_cmd('F', 0, RS_SEED, 0, RS_GET_BYTES);

	/* 1. no RTS: the ep's stream (also brings the association up) */
	memset(buf, 0, RS_GET_BYTES);
	st = rs_get(&e, ep, buf, 0, 4096, info.a_addr, a_rk.rkey, &g1);
	CHECK(st == UCS_INPROGRESS || st == UCS_OK, "get 4 KiB: %s",
	      ucs_status_string(st));
	CHECK(rs_wait(&e, all, 1) && g1.super.status == UCS_OK &&
		      fx_rma_check(buf, 4096, RS_SEED) < 0,
	      "get 4 KiB: %s or wrong data",
	      ucs_status_string(g1.super.status));
	s = (uint16_t)(sep->stream % 10 + 1); /* 1..10, not the ep's */
	ep_before = fx_rma_cmd('S', 0, 0, sep->stream, 0);
	s_before = fx_rma_cmd('S', 0, 0, s, 0);
	CHECK(ep_before == rs_msgs(ctx, 4096) && s_before == 0,
	      "no RTS: replies on the ep's stream %u: %" PRIu64 ", on %u: %"
	      PRIu64, sep->stream, ep_before, s, s_before);
	req_ep_before = fx_rma_cmd('G', 0, 0, sep->stream, 0);
	req_s_before = fx_rma_cmd('G', 0, 0, s, 0);
	CHECK(req_ep_before == 1 && req_s_before == 0,
	      "no RTS: GET requests on the ep's stream %u: %" PRIu64
	      " (want 1), on %u: %" PRIu64, sep->stream, req_ep_before, s,
	      req_s_before);

	/* 2. an RTS for 8 MiB of A came on stream s; UCP GETs it in two
	 * pieces and flushes */
	memset(rts, 0, sizeof(rts));
	memcpy(rts + 24, &info.a_addr, 8);
	memcpy(rts + 32, &(uint64_t){RS_GET_BYTES}, 8);
	ucs_recursive_spin_lock(ctx->lock);
	uct_sctp_dpdk_stream_rts_note(&ctx->smap, sep->peer->sg,
				      sep->peer->assoc, s,
				      UCT_SCTP_DPDK_UCP_RNDV_RTS, rts,
				      sizeof(rts));
	mapped = ctx->smap.gets_mapped;
	unmapped = ctx->smap.gets_unmapped;
	ucs_recursive_spin_unlock(ctx->lock);
	memset(buf, 0, RS_GET_BYTES);
	rs_gets_done = 0;
	st = rs_get(&e, ep, buf, 0, RS_GET_BYTES / 2, info.a_addr, a_rk.rkey,
		    &g1);
	CHECK(st == UCS_INPROGRESS, "get first half: %s",
	      ucs_status_string(st));
	st = rs_get(&e, ep, buf, RS_GET_BYTES / 2, RS_GET_BYTES / 2,
		    info.a_addr, a_rk.rkey, &g2);
	CHECK(st == UCS_INPROGRESS, "get second half: %s",
	      ucs_status_string(st));
	rs_comp_init(&fc, rs_flush_cb);
	while ((st = uct_ep_flush(ep, 0, &fc.super)) == UCS_ERR_NO_RESOURCE)
		uct_worker_progress(e.worker);
	if (st == UCS_OK)
		rs_flush_cb(&fc.super);
	CHECK(st == UCS_OK || st == UCS_INPROGRESS, "flush: %s",
	      ucs_status_string(st));
	CHECK(rs_wait(&e, all, 3), "GETs %d %d, flush %d not done in %d s",
	      g1.done, g2.done, fc.done, RMA_DEADLINE_S);
	CHECK(g1.super.status == UCS_OK && g2.super.status == UCS_OK &&
		      fx_rma_check(buf, RS_GET_BYTES, RS_SEED) < 0,
	      "get 8 MiB on stream %u: %s %s or wrong data", s,
	      ucs_status_string(g1.super.status),
	      ucs_status_string(g2.super.status));
	CHECK(fc.gets_done_before == 2, "the flush completed with %d of 2 "
	      "GETs done", fc.gets_done_before);
	ep_after = fx_rma_cmd('S', 0, 0, sep->stream, 0);
	s_after = fx_rma_cmd('S', 0, 0, s, 0);
	req_ep_after = fx_rma_cmd('G', 0, 0, sep->stream, 0);
	req_s_after = fx_rma_cmd('G', 0, 0, s, 0);
	/* the requests too: a lost packet on the ep's stream must not hold
	 * up the GET of another rendezvous */
	CHECK(req_s_after - req_s_before == 2 &&
		      req_ep_after == req_ep_before,
	      "RTS on stream %u: %" PRIu64 " GET requests came there (want "
	      "2), %" PRIu64 " on the ep's stream %u", s,
	      req_s_after - req_s_before, req_ep_after - req_ep_before,
	      sep->stream);
	CHECK(s_after - s_before == 2 * rs_msgs(ctx, RS_GET_BYTES / 2) &&
		      ep_after == ep_before,
	      "RTS on stream %u: %" PRIu64 " reply messages there (want %"
	      PRIu64 "), %" PRIu64 " more on the ep's stream %u", s,
	      s_after - s_before, 2 * rs_msgs(ctx, RS_GET_BYTES / 2),
	      ep_after - ep_before, sep->stream);
	ucs_recursive_spin_lock(ctx->lock);
	CHECK(ctx->smap.gets_mapped - mapped == 2 &&
		      ctx->smap.gets_unmapped == unmapped,
	      "initiator: %" PRIu64 " GETs mapped, %" PRIu64 " not",
	      ctx->smap.gets_mapped - mapped,
	      ctx->smap.gets_unmapped - unmapped);
	ucs_recursive_spin_unlock(ctx->lock);
	printf("rndv-stream: 8 MiB GET of an RTS from stream %u: %" PRIu64
	       " requests and %" PRIu64 " reply messages on it, %" PRIu64
	       " on the ep's stream %u; flush after both GETs: %s\n", s,
	       req_s_after - req_s_before, s_after - s_before,
	       ep_after - ep_before, sep->stream,
	       fc.gets_done_before == 2 ? "yes" : "NO");

	/* 3. consumed: the ep's stream again */
	memset(buf, 0, RS_GET_BYTES);
	st = rs_get(&e, ep, buf, 0, RS_GET_BYTES / 2, info.a_addr, a_rk.rkey,
		    &g1);
	CHECK(rs_wait(&e, all, 1) && g1.super.status == UCS_OK &&
		      fx_rma_check(buf, RS_GET_BYTES / 2, RS_SEED) < 0,
	      "get after the note was used: %s or wrong data",
	      ucs_status_string(g1.super.status));
	CHECK(fx_rma_cmd('S', 0, 0, sep->stream, 0) - ep_after ==
		      rs_msgs(ctx, RS_GET_BYTES / 2) &&
		      fx_rma_cmd('S', 0, 0, s, 0) == s_after,
	      "a GET after the note was used is not on the ep's stream");
	CHECK(fx_rma_cmd('G', 0, 0, sep->stream, 0) - req_ep_after == 1 &&
		      fx_rma_cmd('G', 0, 0, s, 0) == req_s_after,
	      "a GET request after the note was used is not on the ep's "
	      "stream");
	fx_rma_flush(ep);
	uct_ep_destroy(ep);
	uct_rkey_release(e.comp, &a_rk);
	fx_rma_stop(&e, &t);
	free(buf);
	return fx_failures ? 1 : 0;
}

int main(void)
{
	return fx_run(test_rndv_stream);
}
