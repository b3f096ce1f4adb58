/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_uct_order.c - no AM overtakes the ep's pending requests; flush means
 * acknowledged (meson test uct-order).
 *
 *   order   fills the send buffer to a peer process, queues pending
 *           requests (their sequence number fixed when queued) and keeps
 *           sending while a second iface's progress polls the port: the
 *           peer must see every sequence number in order (no AM overtakes
 *           the ep's pending requests).
 *
 * Fixture (UCT context, forked memif peer, cleanup): uct_fixture.h.
 */
#include "uct_fixture.h"

#include <string.h>
#include <unistd.h>

#define ORDER_MSGS 20000
#define ORDER_REQS 64

typedef struct {
	uct_pending_req_t super;
	uct_ep_h ep;
	uint32_t seq;	/* fixed when queued, like a UCP request's data */
	int busy;
} order_req_t;

static unsigned order_dispatched, order_flushed;

static void order_flush_done(uct_completion_t *self)
{
	CHECK(self->status == UCS_OK, "flush completed with %s",
	      ucs_status_string(self->status));
	order_flushed++;
}

static ucs_status_t order_pending_cb(uct_pending_req_t *self)
{
	order_req_t *r = ucs_container_of(self, order_req_t, super);
	ucs_status_t st = fx_seq_send(r->ep, r->seq);

	if (st == UCS_OK) {
		r->busy = 0;
		order_dispatched++;
	}
	return st;
}

static int test_order(void)
{
	static order_req_t reqs[ORDER_REQS];
	uint8_t dev[64], ifa[64];
	uint32_t seq = 0, want = ORDER_MSGS, report[4] = {0, 0, 0, 0};
	unsigned pend_adds = 0, i, busy;
	double deadline;
	iface_t a, b;
	int fd;
	uct_ep_h ep;
	env_t e;

	fd = fx_fork_client(fx_seq_peer_main);
	if (fd < 0)
		return 1;
	/* A small send buffer fills quickly. */
	setenv("UCX_SCTP_DPDK_SG", "sndbuf=256k", 1);
	fx_env_open(&e);
	/* Two ifaces on one worker: b's progress polls the shared port,
	 * which used to re-open a's ep while its pending queue waited. */
	fx_iface_open(&e, &a, 0);
	fx_iface_open(&e, &b, 0);
	if (fx_seq_peer_addr(fd, dev, ifa, want) != 0)
		return 1;
	ep = fx_ep_to(&a, dev, ifa);
	deadline = fx_now_s() + 60;
	while (seq < ORDER_MSGS && fx_now_s() < deadline) {
		ucs_status_t st;

		uct_worker_progress(e.worker);
		st = fx_seq_send(ep, seq);
		if (st == UCS_OK) {
			seq++;
			continue;
		}
		CHECK(st == UCS_ERR_NO_RESOURCE, "am_short: %s",
		      ucs_status_string(st));
		if (st != UCS_ERR_NO_RESOURCE)
			break;
		for (i = 0; i < ORDER_REQS && reqs[i].busy; i++)
			;
		if (i == ORDER_REQS)
			continue;
		reqs[i].super.func = order_pending_cb;
		reqs[i].ep = ep;
		reqs[i].seq = seq;
		st = uct_ep_pending_add(ep, &reqs[i].super, 0);
		if (st == UCS_OK) {
			reqs[i].busy = 1;
			pend_adds++;
			seq++;
		} else {
			CHECK(st == UCS_ERR_BUSY, "pending_add: %s",
			      ucs_status_string(st));
		}
	}
	do {
		uct_worker_progress(e.worker);
		for (busy = 0, i = 0; i < ORDER_REQS; i++)
			busy += reqs[i].busy;
	} while (busy != 0 && fx_now_s() < deadline);
	CHECK(seq == ORDER_MSGS && busy == 0, "sent %u of %u, %u pending "
	      "left", seq, ORDER_MSGS, busy);
	CHECK(pend_adds > 0, "the send buffer never filled: no pending "
	      "request was queued, nothing tested");
	/* Flush means acknowledged: an iface flush with a completion is in
	 * progress while data is unacknowledged and completes from
	 * progress; when ep flush says UCS_OK nothing is unacknowledged. */
	{
		uct_sctp_dpdk_ep_t *sep = ucs_derived_of(ep, uct_sctp_dpdk_ep_t);
		uct_sctp_dpdk_ctx_t *ctx = uct_sctp_dpdk_ctx_peek();
		uct_completion_t comp = {order_flush_done, 1, UCS_OK};
		uint64_t unacked = 1;
		ucs_status_t st;

		for (i = 0; i < 2000; i++)
			if (fx_seq_send(ep, seq + i) != UCS_OK)
				break;
		seq += i;
		want = seq;
		st = uct_iface_flush(a.iface, 0, &comp);
		CHECK(st == UCS_INPROGRESS, "iface flush right after a burst: "
		      "%s", ucs_status_string(st));
		while (order_flushed == 0 && st == UCS_INPROGRESS &&
		       fx_now_s() < deadline)
			uct_worker_progress(e.worker);
		CHECK(st != UCS_INPROGRESS || order_flushed == 1,
		      "iface flush completion called %u times", order_flushed);
		while ((st = uct_ep_flush(ep, 0, NULL)) == UCS_INPROGRESS &&
		       fx_now_s() < deadline)
			uct_worker_progress(e.worker);
		CHECK(st == UCS_OK, "ep flush: %s", ucs_status_string(st));
		ucs_recursive_spin_lock(ctx->lock);
		sg_assoc_unacked(ctx->sg, sep->peer->assoc, &unacked);
		ucs_recursive_spin_unlock(ctx->lock);
		CHECK(unacked == 0, "ep flush said UCS_OK with %" PRIu64
		      " bytes unacknowledged", unacked);
	}
	if (fx_seq_peer_report(fd, want, report, -1) != 0)
		CHECK(0, "no report from the peer");
	CHECK(report[0] == seq, "peer got %u of %u AMs", report[0], seq);
	CHECK(report[1] == 0, "%u AMs out of order (first: seq %u): an AM "
	      "overtook a pending request", report[1], report[2]);
	CHECK(report[3] == 0, "%u AMs corrupted", report[3]);
	printf("order: %u AMs, %u via pending (%u dispatched), peer got %u, "
	       "%u out of order: %s\n", seq, pend_adds, order_dispatched,
	       report[0], report[1], fx_failures ? "FAIL" : "ok");
	uct_ep_destroy(ep);
	uct_iface_close(a.iface);
	uct_iface_close(b.iface);
	fx_env_close(&e);
	close(fd);
	return fx_failures ? 1 : 0;
}

int main(void)
{
	return fx_run(test_order);
}
