/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_uct_local.c - two ifaces of one process exchange AMs without the wire
 * (meson test uct-local).
 *
 *   local   two ifaces of one process exchange AMs (short, short_iov,
 *           bcopy, zcopy) with the payload checked; no frame leaves the
 *           port (dp tx_pkts unchanged).  Port: net_null, no peer needed.
 *
 * Fixture (UCT context, forked memif peer, cleanup): uct_fixture.h.
 */
#include "uct_fixture.h"

#include <string.h>


typedef struct {
	uct_pending_req_t uct;
	uct_ep_h ep;
	unsigned done;
} pend_t;

static ucs_status_t pend_cb(uct_pending_req_t *self)
{
	pend_t *p = ucs_container_of(self, pend_t, uct);
	static uint8_t buf[64];
	uint64_t hdr;

	fx_fill(buf, sizeof(buf), 1, 0xffff);
	memcpy(&hdr, buf, 8);
	if (uct_ep_am_short(p->ep, AM_ID, hdr, buf + 8, sizeof(buf) - 8) !=
	    UCS_OK)
		return UCS_ERR_NO_RESOURCE;
	p->done++;
	return UCS_OK;
}

/*
 * Local delivery is bounded: while the receiver does not progress, sends
 * stop with UCS_ERR_NO_RESOURCE after LOCAL_QUEUE_MAX AMs (they grew an
 * mpool without limit before: UCX's test_uct_pending took the process
 * past 20 GB); a pending request is accepted and dispatched once the
 * receiver drains.
 */
static void test_local_bound(env_t *e, iface_t *a, iface_t *b, uct_ep_h ep)
{
	static uint8_t buf[64];
	unsigned sent = 0, base = b->rx_count;
	double deadline = fx_now_s() + DEADLINE_S;
	ucs_status_t st = UCS_OK;
	pend_t p = {.ep = ep};
	uint64_t hdr;

	fx_fill(buf, sizeof(buf), 1, 0);
	memcpy(&hdr, buf, 8);
	/* No progress: b's queue fills. */
	while (sent < 100 * UCT_SCTP_DPDK_LOCAL_QUEUE_MAX) {
		st = uct_ep_am_short(ep, AM_ID, hdr, buf + 8,
				     sizeof(buf) - 8);
		if (st != UCS_OK)
			break;
		sent++;
	}
	CHECK(st == UCS_ERR_NO_RESOURCE && sent == UCT_SCTP_DPDK_LOCAL_QUEUE_MAX,
	      "local sends without receiver progress: %u accepted, then %s "
	      "(want %u, then NO_RESOURCE)", sent, ucs_status_string(st),
	      UCT_SCTP_DPDK_LOCAL_QUEUE_MAX);
	p.uct.func = pend_cb;
	st = uct_ep_pending_add(ep, &p.uct, 0);
	CHECK(st == UCS_OK, "pending_add on a full local queue: %s",
	      ucs_status_string(st));
	/* A send must not overtake the queued request. */
	st = uct_ep_am_short(ep, AM_ID, hdr, buf + 8, sizeof(buf) - 8);
	CHECK(st == UCS_ERR_NO_RESOURCE, "send past a pending request: %s",
	      ucs_status_string(st));
	while ((p.done == 0 || b->rx_count < base + sent + 1) &&
	       fx_now_s() < deadline) {
		uct_worker_progress(e->worker);
		fx_release_kept(b);
	}
	fx_release_kept(b);
	CHECK(p.done == 1 && b->rx_count == base + sent + 1,
	      "after draining: pending done %u, b got %u of %u", p.done,
	      b->rx_count - base, sent + 1);
	CHECK(uct_ep_flush(ep, 0, NULL) == UCS_OK, "flush after pending");
	printf("local-bound: %u AMs queued, then NO_RESOURCE; pending "
	       "dispatched after the receiver drained: %s\n", sent,
	       fx_failures ? "FAIL" : "ok");
}

static int test_local(void)
{
	static const size_t sizes[] = {8, 100, 2040};
	uct_sctp_dpdk_ctx_t *ctx;
	struct dp_stats before, after;
	iface_t a, b;
	env_t e;
	uct_ep_h ep;
	unsigned sent = 0;
	size_t i;
	int m;
	char prefix[96];

	snprintf(prefix, sizeof(prefix), "sdp-%s-local", fx_job);
	fx_set_common_env("net_null0", "10.77.9.1/24", prefix);
	fx_env_open(&e);
	fx_iface_open(&e, &a, 0);
	fx_iface_open(&e, &b, 72); /* a ucp-like headroom on one side */
	ctx = uct_sctp_dpdk_ctx_peek();
	CHECK(ctx != NULL, "no context");
	dp_port_stats(ctx->port, &before);
	ep = fx_ep_to(&a, b.dev_addr, b.iface_addr);
	for (m = 0; m < 4; m++) {
		for (i = 0; i < SDP_ARRAY_SIZE(sizes); i++) {
			size_t len = m >= 2 ? sizes[i] * 20 : sizes[i];

			fx_send_am(&e, ep, m, 1, (uint16_t)sent, len);
			sent++;
		}
	}
	CHECK(fx_wait_count(&e, &b, sent), "b got %u of %u AMs", b.rx_count,
	      sent);
	CHECK(b.rx_bad == 0, "%u AMs corrupted", b.rx_bad);
	CHECK(a.rx_count == 0, "a got %u AMs meant for b", a.rx_count);
	CHECK(uct_ep_flush(ep, 0, NULL) == UCS_OK, "flush");
	dp_port_stats(ctx->port, &after);
	CHECK(after.tx_pkts == before.tx_pkts,
	      "local AMs left the port: tx_pkts %" PRIu64 " -> %" PRIu64,
	      before.tx_pkts, after.tx_pkts);
	test_local_bound(&e, &a, &b, ep);
	uct_ep_destroy(ep);
	uct_iface_close(a.iface);
	uct_iface_close(b.iface);
	fx_env_close(&e);
	printf("local: %u AMs between two ifaces, tx_pkts %" PRIu64
	       " unchanged: %s\n", sent, after.tx_pkts,
	       fx_failures ? "FAIL" : "ok");
	return fx_failures ? 1 : 0;
}

int main(void)
{
	return fx_run(test_local);
}
