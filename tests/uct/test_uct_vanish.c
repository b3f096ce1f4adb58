/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_uct_vanish.c - the memif peer process is killed (SIGKILL) while
 * zero-copy operations to it are outstanding (meson test uct-vanish).
 *
 * On one ep: VANISH_OPS put_zcopy and VANISH_OPS get_zcopy of 2 MiB each
 * to and from the peer's region A, plus am_zcopy messages, all issued at once;
 * once some of it moved, the peer dies.  The survivor must hear of it
 * within VANISH_ERR_S (iface error handler, UCS_ERR_ENDPOINT_TIMEOUT; sg
 * peer_gone_ms, the memif link down: without it only SCTP's heartbeats
 * told, ~40 s), every completion runs exactly once (an error unless it
 * finished before), a send on the failed ep fails at once, and ep destroy,
 * iface and context close all return.
 *
 * Fixture: uct_fixture.h, RMA peer: uct_rma_fixture.h.
 */
#include "uct_rma_fixture.h"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#define VANISH_OPS 4
#define VANISH_AMS 8
#define VANISH_LEN (2u << 20)
#define VANISH_AM_LEN 8000
#define VANISH_ERR_S 10.0

/* Issue one op, retrying back-pressure up to a deadline; an op that
 * finished at once counts as completed. */
static void vn_issue(env_t *e, uct_ep_h ep, int kind, uint8_t *buf,
		     size_t len, uint64_t raddr, uct_rkey_t rkey, uct_mem_h memh,
		     fx_comp_t *c)
{
	double deadline = fx_now_s() + RMA_DEADLINE_S;
	uct_iov_t iov = { .buffer = buf, .length = len, .memh = memh,
			  .stride = 0, .count = 1 };
	ucs_status_t st;

	fx_comp_init(c);
	for (;;) {
		if (kind == RMA_PUT_ZCOPY)
			st = uct_ep_put_zcopy(ep, &iov, 1, raddr, rkey,
					      &c->super);
		else if (kind == RMA_GET_ZCOPY)
			st = uct_ep_get_zcopy(ep, &iov, 1, raddr, rkey,
					      &c->super);
		else
			st = uct_ep_am_zcopy(ep, AM_ID, NULL, 0, &iov, 1, 0,
					     &c->super);
		if (st != UCS_ERR_NO_RESOURCE || fx_now_s() > deadline)
			break;
		uct_worker_progress(e->worker);
	}
	CHECK(st == UCS_INPROGRESS || st == UCS_OK, "op %d of %zu bytes: %s",
	      kind, len, ucs_status_string(st));
	if (st != UCS_INPROGRESS) {
		c->calls = 1;
		c->status = st;
	}
}

static int test_vanish(void)
{
	uct_sctp_dpdk_ctx_t *ctx;
	fx_comp_t puts[VANISH_OPS], gets[VANISH_OPS], ams[VANISH_AMS];
	uint8_t dev[64], ifa[64], *buf;
	uct_rkey_bundle_t a_rk;
	uint64_t moved0, moved = 0;
	unsigned k, failed = 0, done_ok = 0, wrong = 0;
	rma_info_t info;
	ucs_status_t st;
	double t0, t_kill, t_err = -1;
	uct_ep_h ep;
	iface_t t;
	env_t e;

	if (fx_rma_start(&e, &t, dev, ifa, &info) != 0)
		return 1;
	ctx = uct_sctp_dpdk_ctx_peek();
	CHECK_OK(uct_rkey_unpack(e.comp, info.a_rkey, &a_rk), "unpack A");
	buf = malloc((size_t)2 * VANISH_OPS * VANISH_LEN);
	if (buf == NULL) {
		CHECK(0, "no memory");
		return 1;
	}
	memset(buf, 0x5a, (size_t)2 * VANISH_OPS * VANISH_LEN);
	ep = fx_ep_to(&t, dev, ifa);
	fx_err_calls = 0;
	moved0 = ctx->rma_get_direct_bytes + ctx->rma_get_copy_bytes;
	for (k = 0; k < VANISH_OPS; k++) {
		/* puts to the first half of A, gets from the second */
		vn_issue(&e, ep, RMA_PUT_ZCOPY, buf + (size_t)k * VANISH_LEN,
			 VANISH_LEN, info.a_addr + (uint64_t)k * VANISH_LEN,
			 a_rk.rkey, UCT_MEM_HANDLE_NULL, &puts[k]);
		vn_issue(&e, ep, RMA_GET_ZCOPY,
			 buf + (size_t)(VANISH_OPS + k) * VANISH_LEN,
			 VANISH_LEN, info.a_addr + RMA_BIG / 2 +
				     (uint64_t)k * VANISH_LEN,
			 a_rk.rkey, UCT_MEM_HANDLE_NULL, &gets[k]);
	}
	for (k = 0; k < VANISH_AMS; k++)
		vn_issue(&e, ep, -1, buf + (size_t)k * VANISH_AM_LEN,
			 VANISH_AM_LEN, 0, 0, UCT_MEM_HANDLE_NULL, &ams[k]);
	/* some of the gets' replies have arrived: mid-transfer */
	t0 = fx_now_s();
	while (fx_now_s() < t0 + RMA_DEADLINE_S &&
	       (moved = ctx->rma_get_direct_bytes + ctx->rma_get_copy_bytes -
			moved0) < VANISH_LEN / 2)
		uct_worker_progress(e.worker);
	CHECK(moved > 0, "no get reply arrived before the kill");
	kill(fx_peer_pid, SIGKILL);
	waitpid(fx_peer_pid, NULL, 0);
	fx_peer_pid = 0;
	t_kill = fx_now_s();
	while (fx_now_s() < t_kill + VANISH_ERR_S + 30) {
		uct_worker_progress(e.worker);
		if (fx_err_calls != 0 && t_err < 0)
			t_err = fx_now_s() - t_kill;
		if (t_err >= 0)
			break;
	}
	CHECK(t_err >= 0 && t_err < VANISH_ERR_S && fx_err_seen ==
	      UCS_ERR_ENDPOINT_TIMEOUT, "peer killed: error handler %u "
	      "calls after %.1f s (%s), want one within %.0f s",
	      fx_err_calls, t_err, ucs_status_string(fx_err_seen),
	      VANISH_ERR_S);
	/* a send on the failed ep fails at once */
	st = uct_ep_am_short(ep, AM_ID, 0, buf, 8);
	CHECK(st != UCS_OK && st != UCS_ERR_NO_RESOURCE,
	      "am_short on the failed ep: %s", ucs_status_string(st));
	uct_ep_destroy(ep);
	/* every op's completion ran exactly once; let late ones come */
	t0 = fx_now_s();
	while (fx_now_s() < t0 + 1.0)
		uct_worker_progress(e.worker);
	for (k = 0; k < VANISH_OPS + VANISH_OPS + VANISH_AMS; k++) {
		fx_comp_t *c = k < VANISH_OPS ? &puts[k]
			     : k < 2 * VANISH_OPS ? &gets[k - VANISH_OPS]
						  : &ams[k - 2 * VANISH_OPS];

		if (c->calls != 1)
			wrong++;
		else if (c->status == UCS_OK)
			done_ok++;
		else
			failed++;
	}
	printf("vanish: peer killed after %" PRIu64 " get bytes; error "
	       "handler after %.2f s (%s); of %u ops %u completed before, "
	       "%u failed, %u not completed exactly once\n", moved, t_err,
	       ucs_status_string(fx_err_seen),
	       2 * VANISH_OPS + VANISH_AMS, done_ok, failed, wrong);
	CHECK(wrong == 0, "%u completions not called exactly once", wrong);
	CHECK(failed > 0, "no op failed although the peer died mid-get");
	uct_rkey_release(e.comp, &a_rk);
	t0 = fx_now_s();
	uct_iface_close(t.iface);
	fx_env_close(&e);
	printf("vanish: iface and context closed in %.2f s: %s\n",
	       fx_now_s() - t0, fx_failures ? "FAIL" : "ok");
	free(buf);
	return fx_failures ? 1 : 0;
}

int main(void)
{
	return fx_run(test_vanish);
}
