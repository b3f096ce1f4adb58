/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_uct_rma_order.c - a PUT, a fence and an AM on one ep: the target's
 * AM handler runs after the PUT's data is in memory, also while the target
 * is busy sending a large GET reply (meson test uct-rma-order).
 *
 *   order   per round: get_zcopy of 8 MiB (its reply exceeds the target's
 *           4 MiB send buffer and waits there), put_short of 64 B
 *           outside the GET's range, uct_ep_fence, an AM naming the PUT's
 *           range and pattern.  The target's handler checks the memory
 *           when it runs: no AM may run before its PUT was written.
 *
 * UCT's fence: operations issued before it complete before any issued
 * after it; UCP relies on PUT -> fence -> AM (rndv_put.c sends the fenced
 * ATP right behind the data; osc ucx releases its accumulate lock with an
 * AMO, done over AMs when the transport has no atomics).  The target used
 * to hold RMA requests behind a waiting GET reply while the AMs after
 * them on the same stream went on to the AM handler: the AM ran first.
 *
 * Fixture: uct_fixture.h, RMA peer and probe: uct_rma_fixture.h.
 */
#include "uct_rma_fixture.h"

#include <string.h>

#define ORDER_ROUNDS 10
#define ORDER_GET_BYTES (8u << 20)
#define ORDER_PUT_BYTES 64

/* Call @call until it is not UCS_ERR_NO_RESOURCE (progressing). */
#define ORDER_RETRY(st, call)                                                 \
	do {                                                                  \
		double _deadline = fx_now_s() + RMA_DEADLINE_S;               \
		while (((st) = (call)) == UCS_ERR_NO_RESOURCE &&              \
		       fx_now_s() < _deadline)                                \
			uct_worker_progress(e.worker);                        \
	} while (0)

static ssize_t order_probe_send(uct_ep_h ep, fx_rma_probe_t *probe)
{
	pack_arg_t pa = {.buf = (uint8_t *)probe, .len = sizeof(*probe)};

	return uct_ep_am_bcopy(ep, FX_RMA_PROBE_AM_ID, fx_pack_cb, &pa, 0);
}

static int test_rma_order(void)
{
	uint8_t dev[64], ifa[64], put_buf[ORDER_PUT_BYTES];
	uint64_t counts = 0, seen = 0, early = 0;
	uct_rkey_bundle_t a_rk;
	fx_rma_probe_t probe;
	rma_info_t info;
	uint8_t *get_buf;
	rma_comp_t gc;
	uct_iov_t giov;
	ucs_status_t st, gst;
	double deadline;
	ssize_t sent;
	unsigned k;
	uct_ep_h ep;
	iface_t t;
	env_t e;

	if (fx_rma_start(&e, &t, dev, ifa, &info) != 0)
		return 1;
	CHECK_OK(uct_rkey_unpack(e.comp, info.a_rkey, &a_rk), "unpack A");
	get_buf = malloc(ORDER_GET_BYTES);
	if (get_buf == NULL)
		return 1;
	ep = fx_ep_to(&t, dev, ifa);
	giov = (uct_iov_t){.buffer = get_buf, .length = ORDER_GET_BYTES,
			   .count = 1, .memh = UCT_MEM_HANDLE_NULL};
	fx_rma_cmd('F', 0, 1, 0, ORDER_GET_BYTES);
	/* The association is up: a first GET. */
	st = fx_rma_op(ep, RMA_GET_ZCOPY, get_buf, 4096, info.a_addr,
		       a_rk.rkey);
	CHECK(st == UCS_OK, "first get: %s", ucs_status_string(st));
	for (k = 0; k < ORDER_ROUNDS && fx_failures == 0; k++) {
		probe.seed = 100 + k;
		probe.length = ORDER_PUT_BYTES;
		probe.offset = RMA_BIG - (uint64_t)ORDER_PUT_BYTES * (k + 1);
		fx_rma_fill(put_buf, sizeof(put_buf), probe.seed);
		fx_rma_comp_init(&gc);
		ORDER_RETRY(gst, uct_ep_get_zcopy(ep, &giov, 1, info.a_addr,
						  a_rk.rkey, &gc.super));
		CHECK(gst == UCS_INPROGRESS, "round %u: get 8 MiB: %s", k,
		      ucs_status_string(gst));
		ORDER_RETRY(st, uct_ep_put_short(ep, put_buf, sizeof(put_buf),
						 info.a_addr + probe.offset,
						 a_rk.rkey));
		CHECK(st == UCS_OK, "round %u: put_short: %s", k,
		      ucs_status_string(st));
		CHECK_OK(uct_ep_fence(ep, 0), "fence");
		deadline = fx_now_s() + RMA_DEADLINE_S;
		while ((sent = order_probe_send(ep, &probe)) ==
			       UCS_ERR_NO_RESOURCE &&
		       fx_now_s() < deadline)
			uct_worker_progress(e.worker);
		CHECK(sent == (ssize_t)sizeof(probe), "round %u: probe AM: "
		      "%zd", k, sent);
		st = fx_rma_wait(&gc, gst);
		CHECK(st == UCS_OK && fx_rma_check(get_buf, ORDER_GET_BYTES,
						   1) < 0,
		      "round %u: get 8 MiB: %s or wrong data", k,
		      ucs_status_string(st));
	}
	fx_rma_flush(ep);
	/* The last probes may still wait in the peer's RX queue. */
	deadline = fx_now_s() + DEADLINE_S;
	do {
		counts = fx_rma_cmd('P', 0, 0, 0, 0);
		seen = counts >> 32;
		early = counts & 0xffffffffu;
	} while (seen < k && fx_now_s() < deadline);
	CHECK(seen == k, "the peer saw %" PRIu64 " of %u probe AMs", seen, k);
	CHECK(early == 0, "%" PRIu64 " of %" PRIu64 " AMs ran before the "
	      "PUT sent (and fenced) ahead of them on the same ep was "
	      "written", early, seen);
	printf("rma-order: %u rounds of get 8 MiB, put, fence, AM: %" PRIu64
	       " AMs ran before their PUT was written: %s\n", k, early,
	       fx_failures ? "FAIL" : "ok");
	uct_ep_destroy(ep);
	uct_rkey_release(e.comp, &a_rk);
	fx_rma_stop(&e, &t);
	free(get_buf);
	return fx_failures ? 1 : 0;
}

/*
 * zcopy: per round a put_zcopy of ORDER_ZC_BYTES (16 times the 256 KiB
 * send buffer: most of it is still unsent when the call returns), fence,
 * an AM naming the PUT's range.  The AM must not leave before the rest of
 * the PUT: its handler at the target finds every byte written.  Run with
 * PROGRESS=thread (meson): inline, the RMA queue's progress happens to
 * refill the send buffer before every retry of the AM.
 */
#define ORDER_ZC_BYTES (4u << 20)
#define ORDER_ZC_ROUNDS 4

static int test_rma_order_zcopy(void)
{
	uint64_t counts = 0, seen = 0, early = 0;
	uint8_t *put_buf;
	uct_rkey_bundle_t a_rk;
	fx_rma_probe_t probe;
	rma_info_t info;
	rma_comp_t pc;
	uct_iov_t piov;
	ucs_status_t st;
	double deadline;
	ssize_t sent;
	unsigned k;
	uct_ep_h ep;
	iface_t t;
	env_t e;

	put_buf = calloc(1, ORDER_ZC_BYTES);
	if (put_buf == NULL)
		return 1;
	ep = fx_rma_connect(&e, &t, &info, &a_rk, "sndbuf=256k", put_buf, 8);
	if (ep == NULL)
		return 1;
	for (k = 0; k < ORDER_ZC_ROUNDS && fx_failures == 0; k++) {
		probe.seed = 200 + k;
		probe.length = ORDER_ZC_BYTES;
		probe.offset = (uint64_t)ORDER_ZC_BYTES * (k % 4);
		fx_rma_fill(put_buf, ORDER_ZC_BYTES, probe.seed);
		piov = (uct_iov_t){.buffer = put_buf,
				   .length = ORDER_ZC_BYTES, .count = 1,
				   .memh = UCT_MEM_HANDLE_NULL};
		fx_rma_comp_init(&pc);
		ORDER_RETRY(st, uct_ep_put_zcopy(ep, &piov, 1,
						 info.a_addr + probe.offset,
						 a_rk.rkey, &pc.super));
		CHECK(st == UCS_INPROGRESS || st == UCS_OK, "round %u: "
		      "put_zcopy: %s", k, ucs_status_string(st));
		CHECK_OK(uct_ep_fence(ep, 0), "fence");
		deadline = fx_now_s() + RMA_DEADLINE_S;
		while ((sent = order_probe_send(ep, &probe)) ==
			       UCS_ERR_NO_RESOURCE &&
		       fx_now_s() < deadline)
			uct_worker_progress(e.worker);
		CHECK(sent == (ssize_t)sizeof(probe), "round %u: probe AM: "
		      "%zd", k, sent);
		st = fx_rma_wait(&pc, st);
		CHECK(st == UCS_OK, "round %u: put_zcopy: %s", k,
		      ucs_status_string(st));
	}
	fx_rma_flush(ep);
	deadline = fx_now_s() + DEADLINE_S;
	do {
		counts = fx_rma_cmd('P', 0, 0, 0, 0);
		seen = counts >> 32;
		early = counts & 0xffffffffu;
	} while (seen < k && fx_now_s() < deadline);
	CHECK(seen == k, "the peer saw %" PRIu64 " of %u probe AMs", seen, k);
	CHECK(early == 0, "%" PRIu64 " of %" PRIu64 " AMs ran before the "
	      "put_zcopy sent (and fenced) ahead of them on the same ep was "
	      "written", early, seen);
	printf("rma-order-zcopy: %u rounds of put_zcopy 4 MiB, fence, AM: %"
	       PRIu64 " AMs ran before their PUT was written: %s\n", k,
	       early, fx_failures ? "FAIL" : "ok");
	uct_ep_destroy(ep);
	uct_rkey_release(e.comp, &a_rk);
	fx_rma_stop(&e, &t);
	free(put_buf);
	return fx_failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "zcopy") == 0)
		return fx_run(test_rma_order_zcopy);
	return fx_run(test_rma_order);
}
