/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_uct_rma_cancel.c - an ep destroyed with RMA operations outstanding
 * completes each of them once with UCS_ERR_CANCELED, as UCX's tcp does
 * (uct_tcp_ep_purge from the ep cleanup), and frees their state (meson
 * test uct-rma-cancel).
 *
 *   cancel  a get_zcopy of 8 MiB, a put_zcopy of 16 MiB (more than the
 *           send buffer: the rest waits on the iface's RMA queue), a
 *           get_bcopy and a flush with a completion are outstanding when
 *           the ep is destroyed: every completion runs exactly once, with
 *           UCS_ERR_CANCELED, and never again while the late replies
 *           arrive; the iface's op table is empty; a new ep to the same
 *           peer puts and gets correctly.  The gets' and the flush's
 *           completions run before uct_ep_destroy returns; the
 *           put_zcopy's (its data sent by reference, TX_ZCOPY_MIN) only
 *           once usrsctp references none of its buffer (sg_zc_held() 0 in
 *           the callback), from progress: the caller may free the buffer
 *           in the callback.
 *
 * Before the fix the ep cleanup dropped the ops silently: UCP would wait
 * for ever for a request whose ep it had closed (e.g. ucp_ep_close with
 * UCP_EP_CLOSE_MODE_FORCE while a rendezvous GET was in flight).
 *
 * Fixture: uct_fixture.h, RMA peer: uct_rma_fixture.h.
 */
#include "uct_rma_fixture.h"

#include <string.h>

#define CANCEL_GET_BYTES (8u << 20)
#define CANCEL_BCOPY_BYTES 4000
#define CANCEL_OPS 4 /* get_zcopy, put_zcopy, get_bcopy, flush */

static void cancel_unpack_cb(void *arg, const void *data, size_t length)
{
	memcpy(arg, data, length);
}

/* Issue an op until it is accepted (UCS_INPROGRESS expected). */
#define CANCEL_ISSUE(st, call)                                                \
	do {                                                                  \
		double _deadline = fx_now_s() + RMA_DEADLINE_S;               \
		while (((st) = (call)) == UCS_ERR_NO_RESOURCE &&              \
		       fx_now_s() < _deadline)                                \
			uct_worker_progress(e.worker);                        \
	} while (0)

/* sg_zc_held() when the put_zcopy's completion ran. */
static uint64_t cancel_zc_held_at_comp = UINT64_MAX;

static void cancel_put_cb(uct_completion_t *self)
{
	fx_comp_t *c = ucs_container_of(self, fx_comp_t, super);

	c->calls++;
	c->status = self->status;
	cancel_zc_held_at_comp = sg_zc_held();
}

static int test_rma_cancel(void)
{
	static const char *names[CANCEL_OPS] = {"get_zcopy", "put_zcopy",
						"get_bcopy", "flush"};
	fx_comp_t comps[CANCEL_OPS];
	uct_sctp_dpdk_iface_t *siface;
	uint8_t dev[64], ifa[64];
	uct_rkey_bundle_t a_rk;
	uct_iov_t giov, piov;
	uint8_t *get_buf, *put_buf, bcopy_buf[CANCEL_BCOPY_BYTES];
	unsigned i, calls_at_destroy[CANCEL_OPS], live_ops = 0;
	rma_info_t info;
	ucs_status_t st;
	double t0;
	uct_ep_h ep;
	iface_t t;
	env_t e;

	if (fx_rma_start(&e, &t, dev, ifa, &info) != 0)
		return 1;
	CHECK_OK(uct_rkey_unpack(e.comp, info.a_rkey, &a_rk), "unpack A");
	get_buf = malloc(CANCEL_GET_BYTES);
	put_buf = malloc(RMA_BIG);
	if (get_buf == NULL || put_buf == NULL)
		return 1;
	memset(put_buf, 0x3c, RMA_BIG);
	siface = ucs_derived_of(t.iface, uct_sctp_dpdk_iface_t);

	/* The association is up and RMA works. */
	ep = fx_ep_to(&t, dev, ifa);
	fx_rma_fill(put_buf, 4096, 11);
	st = fx_rma_op(ep, RMA_PUT_ZCOPY, put_buf, 4096, info.a_addr,
		       a_rk.rkey);
	CHECK(st == UCS_OK, "first put: %s", ucs_status_string(st));
	if (fx_failures)
		goto out;

	/* Outstanding ops, then destroy without flushing. */
	for (i = 0; i < CANCEL_OPS; i++)
		fx_comp_init(&comps[i]);
	comps[1].super.func = cancel_put_cb;
	giov = (uct_iov_t){.buffer = get_buf, .length = CANCEL_GET_BYTES,
			   .count = 1, .memh = UCT_MEM_HANDLE_NULL};
	piov = (uct_iov_t){.buffer = put_buf, .length = RMA_BIG, .count = 1,
			   .memh = UCT_MEM_HANDLE_NULL};
	CANCEL_ISSUE(st, uct_ep_get_zcopy(ep, &giov, 1, info.a_addr,
					  a_rk.rkey, &comps[0].super));
	CHECK(st == UCS_INPROGRESS, "get_zcopy 8 MiB: %s",
	      ucs_status_string(st));
	CANCEL_ISSUE(st, uct_ep_put_zcopy(ep, &piov, 1, info.a_addr,
					  a_rk.rkey, &comps[1].super));
	CHECK(st == UCS_INPROGRESS, "put_zcopy 16 MiB: %s",
	      ucs_status_string(st));
	CANCEL_ISSUE(st, uct_ep_get_bcopy(ep, cancel_unpack_cb, bcopy_buf,
					  sizeof(bcopy_buf), info.a_addr,
					  a_rk.rkey, &comps[2].super));
	CHECK(st == UCS_INPROGRESS, "get_bcopy: %s", ucs_status_string(st));
	CANCEL_ISSUE(st, uct_ep_flush(ep, 0, &comps[3].super));
	CHECK(st == UCS_INPROGRESS, "flush behind them: %s",
	      ucs_status_string(st));
	if (fx_failures)
		goto out;
	uct_ep_destroy(ep);
	ep = NULL;
	/* The put_zcopy completes once usrsctp released its buffer. */
	t0 = fx_now_s();
	while (comps[1].calls == 0 && fx_now_s() < t0 + RMA_DEADLINE_S)
		uct_worker_progress(e.worker);
	CHECK(cancel_zc_held_at_comp == 0, "put_zcopy cancelled at ep "
	      "destroy: its completion ran while usrsctp still referenced "
	      "%" PRIu64 " sends of its buffer", cancel_zc_held_at_comp);
	for (i = 0; i < CANCEL_OPS; i++) {
		calls_at_destroy[i] = comps[i].calls;
		CHECK(comps[i].calls == 1 &&
			      comps[i].status == UCS_ERR_CANCELED,
		      "%s outstanding at ep destroy: completion called %u "
		      "times, last status %s (want once, %s)", names[i],
		      comps[i].calls, ucs_status_string(comps[i].status),
		      ucs_status_string(UCS_ERR_CANCELED));
	}
	/* The late replies (GET data, ACKs) find no op. */
	t0 = fx_now_s();
	while (fx_now_s() < t0 + 1.0)
		uct_worker_progress(e.worker);
	for (i = 0; i < CANCEL_OPS; i++)
		CHECK(comps[i].calls == calls_at_destroy[i],
		      "%s: completion called again after the ep was "
		      "destroyed (%u times)", names[i], comps[i].calls);
	for (i = 0; i < siface->rma_ops_size; i++)
		live_ops += siface->rma_ops[i] != NULL;
	CHECK(live_ops == 0 && ucs_queue_is_empty(&siface->rma_txq),
	      "after destroy: %u ops in the iface's table, RMA queue %s",
	      live_ops, ucs_queue_is_empty(&siface->rma_txq) ? "empty" :
							     "not empty");

	/* A new ep to the same peer: a put and a get, checked. */
	ep = fx_ep_to(&t, dev, ifa);
	fx_rma_fill(put_buf, 65536, 12);
	st = fx_rma_op(ep, RMA_PUT_ZCOPY, put_buf, 65536, info.a_addr,
		       a_rk.rkey);
	fx_rma_flush(ep);
	CHECK(st == UCS_OK && fx_rma_cmd('V', 0, 12, 0, 65536) == 0,
	      "put on a new ep after the cancel: %s", ucs_status_string(st));
	memset(get_buf, 0, 65536);
	st = fx_rma_op(ep, RMA_GET_ZCOPY, get_buf, 65536, info.a_addr,
		       a_rk.rkey);
	CHECK(st == UCS_OK && fx_rma_check(get_buf, 65536, 12) < 0,
	      "get on a new ep after the cancel: %s", ucs_status_string(st));
	printf("rma-cancel: 4 ops outstanding at ep destroy, each completed "
	       "once with %s; none later; new ep put/get ok: %s\n",
	       ucs_status_string(comps[0].status),
	       fx_failures ? "FAIL" : "ok");
out:
	if (ep != NULL)
		uct_ep_destroy(ep);
	uct_rkey_release(e.comp, &a_rk);
	fx_rma_stop(&e, &t);
	free(get_buf);
	free(put_buf);
	return fx_failures ? 1 : 0;
}

int main(void)
{
	return fx_run(test_rma_cancel);
}
