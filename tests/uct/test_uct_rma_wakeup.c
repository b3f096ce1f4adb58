/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_uct_rma_wakeup.c - a worker that sleeps on the iface's event fd
 * while an RMA op is outstanding is woken for its completion (meson test
 * uct-rma-wakeup).
 *
 *   wakeup  PROGRESS=thread (the poll thread reads the wire while the
 *           worker sleeps), a 256 KiB send buffer.  A get_zcopy of 1 MiB,
 *           then a put_zcopy of 8 MiB (its rest waits for send buffer;
 *           its data goes by reference, so it completes at the last
 *           release), each waited for as ucp_worker_wait does for a worker
 *           with only RMA wakeup features: progress, then
 *           uct_iface_event_arm(UCT_EVENT_SEND_COMP) and, when it says
 *           UCS_OK, poll() on the event fd.  Both ops take milliseconds:
 *           a poll that sleeps its full WAKEUP_SLEEP_MS is a missed
 *           wakeup.
 *
 * Fixture: uct_fixture.h, RMA peer: uct_rma_fixture.h.
 */
#include "uct_rma_fixture.h"

#include <poll.h>
#include <string.h>

#define WAKEUP_SLEEP_MS 1000
#define WAKEUP_GET_BYTES (1u << 20)
#define WAKEUP_PUT_BYTES (8u << 20)

/* Wait for @c as an event-driven worker does.  @return the polls that
 * slept WAKEUP_SLEEP_MS without a wakeup. */
static unsigned wakeup_wait(env_t *e, iface_t *t, int fd, rma_comp_t *c,
			    unsigned *sleeps_p)
{
	double deadline = fx_now_s() + RMA_DEADLINE_S;
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	unsigned missed = 0;
	ucs_status_t st;

	while (!c->done && fx_now_s() < deadline) {
		if (uct_worker_progress(e->worker) != 0 || c->done)
			continue;
		st = uct_iface_event_arm(t->iface, UCT_EVENT_SEND_COMP);
		if (st == UCS_ERR_BUSY)
			continue;
		CHECK(st == UCS_OK, "event_arm: %s", ucs_status_string(st));
		if (st != UCS_OK)
			break;
		(*sleeps_p)++;
		if (poll(&pfd, 1, WAKEUP_SLEEP_MS) == 0)
			missed++;
	}
	return missed;
}

static int test_rma_wakeup(void)
{
	uint8_t dev[64], ifa[64], *buf;
	unsigned missed_get, missed_put, sleeps_get = 0, sleeps_put = 0;
	uct_rkey_bundle_t a_rk;
	rma_info_t info;
	ucs_status_t st;
	rma_comp_t c;
	uct_iov_t iov;
	uct_ep_h ep;
	iface_t t;
	env_t e;
	int fd;

	setenv("UCX_SCTP_DPDK_PROGRESS", "thread", 1);
	setenv("UCX_SCTP_DPDK_SG", "sndbuf=256k", 1);
	if (fx_rma_start(&e, &t, dev, ifa, &info) != 0)
		return 1;
	CHECK_OK(uct_rkey_unpack(e.comp, info.a_rkey, &a_rk), "unpack A");
	CHECK_OK(uct_iface_event_fd_get(t.iface, &fd), "event fd");
	buf = malloc(WAKEUP_PUT_BYTES);
	if (buf == NULL)
		return 1;
	ep = fx_ep_to(&t, dev, ifa);
	st = fx_rma_op(ep, RMA_PUT_SHORT, buf, 8, info.a_addr, a_rk.rkey);
	CHECK(st == UCS_OK, "first put: %s", ucs_status_string(st));
	fx_rma_flush(ep); /* written before the fill below */

	fx_rma_cmd('F', 0, 21, 0, WAKEUP_GET_BYTES);
	iov = (uct_iov_t){.buffer = buf, .length = WAKEUP_GET_BYTES,
			  .count = 1, .memh = UCT_MEM_HANDLE_NULL};
	fx_rma_comp_init(&c);
	while ((st = uct_ep_get_zcopy(ep, &iov, 1, info.a_addr, a_rk.rkey,
				      &c.super)) == UCS_ERR_NO_RESOURCE)
		uct_worker_progress(e.worker);
	CHECK(st == UCS_INPROGRESS, "get_zcopy: %s", ucs_status_string(st));
	missed_get = wakeup_wait(&e, &t, fd, &c, &sleeps_get);
	CHECK(c.done && fx_rma_check(buf, WAKEUP_GET_BYTES, 21) < 0,
	      "get_zcopy did not complete or wrong data");
	CHECK(missed_get == 0, "get_zcopy: %u of %u sleeps on the event fd "
	      "lasted %d ms: its reply woke nobody", missed_get, sleeps_get,
	      WAKEUP_SLEEP_MS);

	fx_rma_fill(buf, WAKEUP_PUT_BYTES, 22);
	iov.length = WAKEUP_PUT_BYTES;
	fx_rma_comp_init(&c);
	while ((st = uct_ep_put_zcopy(ep, &iov, 1, info.a_addr, a_rk.rkey,
				      &c.super)) == UCS_ERR_NO_RESOURCE)
		uct_worker_progress(e.worker);
	CHECK(st == UCS_INPROGRESS, "put_zcopy: %s", ucs_status_string(st));
	missed_put = wakeup_wait(&e, &t, fd, &c, &sleeps_put);
	CHECK(c.done, "put_zcopy did not complete");
	CHECK(missed_put == 0, "put_zcopy: %u of %u sleeps on the event fd "
	      "lasted %d ms: its progress or completion woke nobody",
	      missed_put, sleeps_put, WAKEUP_SLEEP_MS);
	CHECK(fx_rma_cmd('V', 0, 22, 0, WAKEUP_PUT_BYTES) == 0,
	      "region A after the put_zcopy");
	printf("rma-wakeup: get_zcopy 1 MiB: %u sleeps, %u missed wakeups; "
	       "put_zcopy 8 MiB: %u sleeps, %u missed: %s\n", sleeps_get,
	       missed_get, sleeps_put, missed_put,
	       fx_failures ? "FAIL" : "ok");
	uct_ep_destroy(ep);
	uct_rkey_release(e.comp, &a_rk);
	fx_rma_stop(&e, &t);
	free(buf);
	return fx_failures ? 1 : 0;
}

int main(void)
{
	return fx_run(test_rma_wakeup);
}
