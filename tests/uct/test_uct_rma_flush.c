/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_uct_rma_flush.c - a flush after PUTs means the target has them,
 * also when the send buffer is full at the time of the flush (meson tests
 * uct-rma-flush-iface, uct-rma-flush-ep).
 *
 *   iface  put_short until the (256 KiB) send buffer refuses one, then
 *          uct_iface_flush with a completion: it must not say UCS_OK while
 *          usrsctp still holds unacknowledged bytes of the association,
 *          and its completion (if any) comes with UCS_OK once none are.
 *   ep     put_short, uct_ep_flush with a completion (queued: the PUTs
 *          are not confirmed yet), put_short until the send buffer refuses
 *          one, then the iface's flush step before any SACK is read
 *          (as with PROGRESS=thread), then progress: the queued flush
 *          completes once, with UCS_OK (UCP takes any other status for a failure; the FLUSH
 *          message that could not be sent is retried from progress).
 *
 * Both end by checking the bytes at the target (command V).
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

/* Bytes of @ep's association not yet acknowledged by the peer. */
static uint64_t flush_unacked(uct_ep_h ep)
{
	uct_sctp_dpdk_ep_t *sep = ucs_derived_of(ep, uct_sctp_dpdk_ep_t);
	uct_sctp_dpdk_ctx_t *ctx = uct_sctp_dpdk_ctx_peek();
	uint64_t unacked = UINT64_MAX;

	ucs_recursive_spin_lock(ctx->lock);
	sg_assoc_unacked(sep->peer->sg, sep->peer->assoc, &unacked);
	ucs_recursive_spin_unlock(ctx->lock);
	return unacked;
}

static int test_flush(int queued_ep)
{
	uint8_t dev[64], ifa[64], *pattern;
	uint64_t off = 0, unacked, at_completion = 0, bad;
	unsigned puts = 0, more;
	uct_rkey_bundle_t rk;
	rma_info_t info;
	double deadline;
	ucs_status_t st;
	fx_comp_t comp;
	uct_ep_h ep;
	iface_t t;
	env_t e;

	setenv("UCX_SCTP_DPDK_SG", "sndbuf=256k", 1);
	if (fx_rma_start(&e, &t, dev, ifa, &info) != 0)
		return 1;
	CHECK_OK(uct_rkey_unpack(e.comp, info.a_rkey, &rk), "unpack A");
	pattern = malloc(RMA_BIG);
	if (pattern == NULL)
		return 1;
	fx_rma_fill(pattern, RMA_BIG, 5);
	ep = fx_ep_to(&t, dev, ifa);
	/* The association is up. */
	st = fx_rma_op(ep, RMA_PUT_SHORT, pattern, FLUSH_PUT_BYTES,
		       info.a_addr, rk.rkey);
	CHECK(st == UCS_OK, "first put: %s", ucs_status_string(st));
	off = FLUSH_PUT_BYTES;
	fx_comp_init(&comp);
	if (queued_ep) {
		puts = flush_fill(ep, &info, rk.rkey, pattern, &off, 16);
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
		st = uct_iface_flush(t.iface, 0, &comp.super);
		unacked = flush_unacked(ep);
		CHECK(st != UCS_OK || unacked == 0, "iface flush said UCS_OK "
		      "with %" PRIu64 " bytes unacknowledged (send buffer "
		      "full)", unacked);
		CHECK(st == UCS_OK || st == UCS_INPROGRESS, "iface flush: %s",
		      ucs_status_string(st));
		if (st != UCS_INPROGRESS)
			comp.calls = 1;
	}
	deadline = fx_now_s() + RMA_DEADLINE_S;
	while (comp.calls == 0 && fx_now_s() < deadline) {
		uct_worker_progress(e.worker);
		if (comp.calls != 0)
			at_completion = flush_unacked(ep);
	}
	CHECK(comp.calls == 1, "the flush completed %u times", comp.calls);
	CHECK(comp.status == UCS_OK, "the flush completed with %s",
	      ucs_status_string(comp.status));
	CHECK(at_completion == 0, "the flush completed with %" PRIu64
	      " bytes unacknowledged", at_completion);
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
	fprintf(stderr, "usage: %s iface|ep\n", argv[0]);
	return 1;
}
