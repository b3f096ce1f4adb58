/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_uct_rma_flush.c - a flush after PUTs means the target has them,
 * also when the send buffer is full at the time of the flush (meson tests
 * uct-rma-flush-iface, uct-rma-flush-ep).
 *
 *   iface  put_short until the (256 KiB) send buffer refuses one, then
 *          uct_iface_flush with a completion: it must not say UCS_OK while
 *          usrsctp still holds unacknowledged bytes of the association,
 *          and its completion (if any) comes with UCS_OK once the target
 *          has every PUT.
 *   ep     put_short, uct_ep_flush with a completion (queued: the PUTs
 *          are not confirmed yet), put_short until the send buffer refuses
 *          one, then the iface's flush step before any SACK is read
 *          (as with PROGRESS=thread), then progress: the queued flush
 *          completes once, with UCS_OK (UCP takes any other status for a
 *          failure; the FLUSH message that could not be sent is retried
 *          from progress), once the target has the PUTs issued before it
 *          (not necessarily the later ones: sctp_dpdk_flush.c's
 *          watermark).
 *
 * "Has": region A verified by the peer right at the completion, before
 * this process polls again (so nothing more leaves it meanwhile).
 *
 *   pending  put_short until the send buffer refuses one, a PUT queued
 *          with uct_ep_pending_add, then uct_ep_flush: UCS_ERR_NO_RESOURCE
 *          (a request is queued ahead of it), so a pending flush is
 *          queued as UCP queues it, whose callback calls uct_ep_flush
 *          again; then a second PUT queued behind the flush (as UCP
 *          queues the reply to a peer's software atomic).  Once the PUT
 *          ahead has left, the flush's call must start the flush (UCS_OK
 *          or UCS_INPROGRESS): answering NO_RESOURCE because a request
 *          queued after it waits keeps both queued forever (Open MPI 5's
 *          MPI_Win_unlock after a 4 MiB MPI_Put hung so).
 *
 * All end by checking the bytes at the target (command V).
 *
 * Fixture: uct_fixture.h, RMA peer: uct_rma_fixture.h.
 */
#include "uct_rma_fixture.h"

#include <string.h>

#define FLUSH_PUT_BYTES 1024   /* bytes per put_short */
#define FLUSH_MAX_PUTS 100000  /* bound of the filling loop */

/* put_short FLUSH_PUT_BYTES at consecutive offsets of region A from
 * *@off_p until one is refused with UCS_ERR_NO_RESOURCE (without
 * progress) or @max were sent.  @return PUTs sent; a status other than
 * UCS_OK/NO_RESOURCE is counted as a failure. */
static unsigned flush_fill(uct_ep_h ep, const rma_info_t *info,
			   uct_rkey_t rkey, const uint8_t *pattern,
			   uint64_t *off_p, unsigned max)
{
	ucs_status_t st;
	unsigned n;

	for (n = 0; n < max && *off_p + FLUSH_PUT_BYTES <= RMA_BIG; n++) {
		st = uct_ep_put_short(ep, pattern + *off_p, FLUSH_PUT_BYTES,
				      info->a_addr + *off_p, rkey);
		if (st == UCS_ERR_NO_RESOURCE)
			break;
		CHECK(st == UCS_OK, "put_short: %s", ucs_status_string(st));
		if (st != UCS_OK)
			break;
		*off_p += FLUSH_PUT_BYTES;
	}
	return n;
}

static int test_flush(int queued_ep)
{
	uint8_t *pattern;
	uint64_t off = 0, covered, unacked, bad;
	unsigned puts = 0, more;
	uct_rkey_bundle_t rk;
	rma_info_t info;
	double deadline;
	ucs_status_t st;
	fx_comp_t comp;
	uct_ep_h ep;
	iface_t t;
	env_t e;

	pattern = malloc(RMA_BIG);
	if (pattern == NULL)
		return 1;
	fx_rma_fill(pattern, RMA_BIG, 5);
	ep = fx_rma_connect(&e, &t, &info, &rk, "sndbuf=256k", pattern,
			    FLUSH_PUT_BYTES);
	if (ep == NULL)
		return 1;
	off = FLUSH_PUT_BYTES;
	fx_comp_init(&comp);
	if (queued_ep) {
		puts = flush_fill(ep, &info, rk.rkey, pattern, &off, 16);
		covered = off;
		st = uct_ep_flush(ep, 0, &comp.super);
		CHECK(st == UCS_INPROGRESS, "ep flush right after %u PUTs: %s",
		      puts, ucs_status_string(st));
	}
	more = flush_fill(ep, &info, rk.rkey, pattern, &off, FLUSH_MAX_PUTS);
	puts += more;
	CHECK(off + FLUSH_PUT_BYTES <= RMA_BIG && more < FLUSH_MAX_PUTS,
	      "the send buffer never refused a PUT (%u sent): nothing "
	      "tested", more);
	if (queued_ep) {
		/* The iface's flush step while the buffer is still full, as
		 * when the poll thread (PROGRESS=thread) has not read the
		 * peer's SACKs yet: the queued flush must stay queued. */
		uct_sctp_dpdk_iface_flush_progress(
			ucs_derived_of(t.iface, uct_sctp_dpdk_iface_t));
		CHECK(comp.calls == 0 || comp.status == UCS_OK, "the queued ep "
		      "flush completed with %s while the send buffer was full",
		      ucs_status_string(comp.status));
	} else {
		covered = off;
		st = uct_iface_flush(t.iface, 0, &comp.super);
		unacked = fx_ep_unacked(ep);
		CHECK(st != UCS_OK || unacked == 0, "iface flush said UCS_OK "
		      "with %" PRIu64 " bytes unacknowledged (send buffer "
		      "full)", unacked);
		CHECK(st == UCS_OK || st == UCS_INPROGRESS, "iface flush: %s",
		      ucs_status_string(st));
		if (st != UCS_INPROGRESS)
			comp.calls = 1;
	}
	deadline = fx_now_s() + RMA_DEADLINE_S;
	while (comp.calls == 0 && fx_now_s() < deadline)
		uct_worker_progress(e.worker);
	bad = fx_rma_cmd('V', 0, 5, 0, covered);
	CHECK(comp.calls == 1, "the flush completed %u times", comp.calls);
	CHECK(comp.status == UCS_OK, "the flush completed with %s",
	      ucs_status_string(comp.status));
	CHECK(bad == 0, "at the flush's completion region A's first %" PRIu64
	      " bytes (the PUTs before the flush): %" PRIu64 " (1 + first "
	      "bad byte)", covered, bad);
	fx_rma_flush(ep);
	bad = fx_rma_cmd('V', 0, 5, 0, off);
	CHECK(bad == 0, "region A after %u PUTs: %" PRIu64 " (1 + first "
	      "bad byte)", puts + 1, bad);
	printf("rma-flush-%s: %u put_short of %u B, send buffer full, flush: "
	       "%s\n", queued_ep ? "ep" : "iface", puts + 1, FLUSH_PUT_BYTES,
	       fx_failures ? "FAIL" : "ok");
	uct_ep_destroy(ep);
	uct_rkey_release(e.comp, &rk);
	fx_rma_stop(&e, &t);
	free(pattern);
	return fx_failures ? 1 : 0;
}

/* A pending PUT (what UCP queues when the send buffer is full). */
typedef struct {
	uct_pending_req_t super;
	uct_ep_h ep;
	const uint8_t *data;
	uint64_t remote;
	uct_rkey_t rkey;
	unsigned calls;
	int sent;
} pend_put_t;

static ucs_status_t pend_put_cb(uct_pending_req_t *self)
{
	pend_put_t *p = ucs_container_of(self, pend_put_t, super);
	ucs_status_t st;

	p->calls++;
	st = uct_ep_put_short(p->ep, p->data, FLUSH_PUT_BYTES, p->remote,
			      p->rkey);
	if (st == UCS_OK)
		p->sent = 1;
	return st;
}

/* A pending flush, as UCP's ucp_ep_flush_progress_pending: calls
 * uct_ep_flush again; UCS_ERR_NO_RESOURCE keeps it queued. */
typedef struct {
	uct_pending_req_t super;
	uct_ep_h ep;
	fx_comp_t *comp;
	unsigned calls;
	unsigned refused;	/* calls answered NO_RESOURCE */
	ucs_status_t status;	/* of the call that started the flush */
	int started;
} pend_flush_t;

static ucs_status_t pend_flush_cb(uct_pending_req_t *self)
{
	pend_flush_t *f = ucs_container_of(self, pend_flush_t, super);
	ucs_status_t st;

	f->calls++;
	st = uct_ep_flush(f->ep, 0, &f->comp->super);
	if (st == UCS_ERR_NO_RESOURCE) {
		f->refused++;
		return st;
	}
	f->status = st;
	f->started = 1;
	return UCS_OK;
}

static void pend_purge_cb(uct_pending_req_t *self, void *arg)
{
	(void)self;
	(void)arg;
}

static int test_flush_pending(void)
{
	uint8_t *pattern;
	uint64_t off = 0, bad;
	uct_rkey_bundle_t rk;
	unsigned puts;
	pend_flush_t pf;
	pend_put_t pp, pb;
	rma_info_t info;
	double deadline;
	ucs_status_t st;
	fx_comp_t comp;
	uct_ep_h ep;
	iface_t t;
	env_t e;

	pattern = malloc(RMA_BIG);
	if (pattern == NULL)
		return 1;
	fx_rma_fill(pattern, RMA_BIG, 6);
	ep = fx_rma_connect(&e, &t, &info, &rk, "sndbuf=256k", pattern,
			    FLUSH_PUT_BYTES);
	if (ep == NULL)
		return 1;
	off = FLUSH_PUT_BYTES;
	puts = flush_fill(ep, &info, rk.rkey, pattern, &off, FLUSH_MAX_PUTS);
	CHECK(off + 3 * FLUSH_PUT_BYTES <= RMA_BIG && puts < FLUSH_MAX_PUTS,
	      "the send buffer never refused a PUT (%u sent): nothing "
	      "tested", puts);
	memset(&pp, 0, sizeof(pp));
	pp.super.func = pend_put_cb;
	pp.ep = ep;
	pp.data = pattern + off;
	pp.remote = info.a_addr + off;
	pp.rkey = rk.rkey;
	st = uct_ep_pending_add(ep, &pp.super, 0);
	CHECK(st == UCS_OK, "pending PUT with the send buffer full: %s",
	      ucs_status_string(st));
	fx_comp_init(&comp);
	memset(&pf, 0, sizeof(pf));
	pf.super.func = pend_flush_cb;
	pf.ep = ep;
	pf.comp = &comp;
	st = uct_ep_flush(ep, 0, &comp.super);
	CHECK(st == UCS_ERR_NO_RESOURCE, "ep flush behind a pending PUT: %s "
	      "(expected UCS_ERR_NO_RESOURCE: nothing tested)",
	      ucs_status_string(st));
	st = uct_ep_pending_add(ep, &pf.super, 0);
	CHECK(st == UCS_OK, "pending flush: %s", ucs_status_string(st));
	pb = pp;
	pb.data = pattern + off + FLUSH_PUT_BYTES;
	pb.remote = info.a_addr + off + FLUSH_PUT_BYTES;
	st = uct_ep_pending_add(ep, &pb.super, 0);
	CHECK(st == UCS_OK, "pending PUT behind the flush: %s",
	      ucs_status_string(st));
	deadline = fx_now_s() + 30;
	while ((!pf.started || comp.calls == 0 || !pb.sent) &&
	       fx_now_s() < deadline) {
		uct_worker_progress(e.worker);
		if (pf.started && pf.status == UCS_OK && comp.calls == 0) {
			comp.calls = 1; /* done at once: no completion */
			comp.status = UCS_OK;
		}
	}
	CHECK(pp.sent, "the pending PUT was never sent (%u calls)", pp.calls);
	CHECK(pb.sent, "the PUT queued behind the flush was never sent (%u "
	      "calls)", pb.calls);
	CHECK(pf.started, "the pending flush never started: its callback ran "
	      "%u times, uct_ep_flush answered UCS_ERR_NO_RESOURCE %u times "
	      "with nothing queued ahead of it", pf.calls, pf.refused);
	CHECK(!pf.started || pf.status == UCS_OK ||
	      pf.status == UCS_INPROGRESS, "the pending flush's uct_ep_flush: "
	      "%s", ucs_status_string(pf.status));
	CHECK(comp.calls == 1 && comp.status == UCS_OK, "the flush completed "
	      "%u times, with %s", comp.calls, ucs_status_string(comp.status));
	if (pp.sent && pb.sent)
		off += 2 * FLUSH_PUT_BYTES;
	uct_ep_pending_purge(ep, pend_purge_cb, NULL);
	fx_rma_flush(ep);
	bad = fx_rma_cmd('V', 0, 6, 0, off);
	CHECK(bad == 0, "region A after %u PUTs: %" PRIu64 " (1 + first "
	      "bad byte)", puts + 3, bad);
	printf("rma-flush-pending: %u put_short of %u B, a pending PUT, a "
	       "pending flush (callback ran %u times, refused %u), a pending "
	       "PUT: %s\n", puts + 3, FLUSH_PUT_BYTES, pf.calls, pf.refused,
	       fx_failures ? "FAIL" : "ok");
	uct_ep_destroy(ep);
	uct_rkey_release(e.comp, &rk);
	fx_rma_stop(&e, &t);
	free(pattern);
	return fx_failures ? 1 : 0;
}

static int test_flush_iface(void)
{
	return test_flush(0);
}

static int test_flush_ep(void)
{
	return test_flush(1);
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "iface") == 0)
		return fx_run(test_flush_iface);
	if (argc == 2 && strcmp(argv[1], "ep") == 0)
		return fx_run(test_flush_ep);
	if (argc == 2 && strcmp(argv[1], "pending") == 0)
		return fx_run(test_flush_pending);
	fprintf(stderr, "usage: %s iface|ep|pending\n", argv[0]);
	return 1;
}
