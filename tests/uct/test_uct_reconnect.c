/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_uct_reconnect.c - pending requests go out after a graceful shutdown
 * (meson test uct-reconnect).
 *
 *   reconnect  the association to an echoing peer process is shut down
 *           gracefully (peer IDLE, not failed) and requests are queued on
 *           the ep with no send call after: iface progress alone must
 *           start a new association (another assoc id) and dispatch them,
 *           and every echo must come back.
 *
 * Fixture (UCT context, forked memif peer, cleanup): uct_fixture.h.
 */
#include "uct_fixture.h"

#include <string.h>
#include <unistd.h>

#define RECONNECT_FIRST 8	/* AMs before the shutdown */
#define RECONNECT_PENDING 16	/* requests queued while the peer is IDLE */

typedef struct {
	uct_pending_req_t super;
	uct_ep_h ep;
	uint16_t from, seq;
	int done;
} reconnect_req_t;

static ucs_status_t reconnect_pending_cb(uct_pending_req_t *self)
{
	reconnect_req_t *r = ucs_container_of(self, reconnect_req_t, super);
	uint8_t buf[64];
	uint64_t hdr;
	ucs_status_t st;

	fx_fill(buf, sizeof(buf), r->from, r->seq);
	memcpy(&hdr, buf, 8);
	st = uct_ep_am_short(r->ep, AM_ID, hdr, buf + 8, sizeof(buf) - 8);
	if (st == UCS_OK)
		r->done = 1;
	return st;
}

static void reconnect_purge_cb(uct_pending_req_t *self, void *arg)
{
}

/*
 * An ep whose association the peer shut down gracefully while only
 * pending requests wait on it (nothing calls a send that would reconnect):
 * iface progress must start a new association and dispatch them.  The
 * shutdown is started here with sg_disconnect; SHUTDOWN_COMP leaves the
 * peer IDLE exactly as the peer's own close would.
 */
static int test_reconnect(void)
{
	static reconnect_req_t reqs[RECONNECT_PENDING];
	uint8_t dev[64], ifa[64];
	uct_sctp_dpdk_peer_t *peer;
	uct_sctp_dpdk_ctx_t *ctx;
	sg_assoc_t assoc_old;
	unsigned k, done;
	double t0, deadline;
	uint16_t id;
	ucs_status_t st;
	iface_t t;
	int fd, rc;
	uct_ep_h ep;
	env_t e;

	fd = fx_fork_client(fx_echo_peer_main);
	if (fd < 0)
		return 1;
	fx_env_open(&e);
	fx_iface_open(&e, &t, 0);
	if (fx_swap_addr(fd, &t, dev, ifa) != 0)
		return 1;
	ep = fx_ep_to(&t, dev, ifa);
	memcpy(&id, t.iface_addr, 2);
	id = rte_be_to_cpu_16(id);
	ctx = uct_sctp_dpdk_ctx_peek();
	peer = ucs_derived_of(ep, uct_sctp_dpdk_ep_t)->peer;

	/* 1. The association works: echoes come back. */
	for (k = 0; k < RECONNECT_FIRST; k++)
		fx_send_am(&e, ep, 0, id, (uint16_t)k, 64);
	CHECK(fx_wait_count(&e, &t, RECONNECT_FIRST), "%u of %u echoes before "
	      "the shutdown", t.rx_count, RECONNECT_FIRST);
	CHECK(peer->state == UCT_SCTP_DPDK_PEER_UP, "association not UP "
	      "after the first echoes (state %d)", (int)peer->state);
	if (fx_failures)
		goto out;
	assoc_old = peer->assoc;

	/* 2. Graceful shutdown: the peer must go IDLE, not failed. */
	ucs_recursive_spin_lock(ctx->lock);
	rc = sg_disconnect(ctx->sg, peer->assoc);
	ucs_recursive_spin_unlock(ctx->lock);
	CHECK(rc == 0, "sg_disconnect: %d", rc);
	deadline = fx_now_s() + DEADLINE_S;
	while (peer->state != UCT_SCTP_DPDK_PEER_IDLE && fx_now_s() < deadline)
		uct_worker_progress(e.worker);
	CHECK(peer->state == UCT_SCTP_DPDK_PEER_IDLE, "association %u not "
	      "IDLE %d s after sg_disconnect (state %d)", assoc_old,
	      DEADLINE_S, (int)peer->state);
	CHECK(!uct_sctp_dpdk_ep_is_failed(
		      ucs_derived_of(ep, uct_sctp_dpdk_ep_t)),
	      "a graceful shutdown failed the ep");
	if (fx_failures)
		goto out;

	/* 3. Only pending requests: no send call reconnects for them. */
	for (k = 0; k < RECONNECT_PENDING; k++) {
		reqs[k].super.func = reconnect_pending_cb;
		reqs[k].ep = ep;
		reqs[k].from = id;
		reqs[k].seq = (uint16_t)(RECONNECT_FIRST + k);
		st = uct_ep_pending_add(ep, &reqs[k].super, 0);
		CHECK(st == UCS_OK, "pending_add %u on an IDLE peer: %s", k,
		      ucs_status_string(st));
	}
	CHECK(peer->state == UCT_SCTP_DPDK_PEER_IDLE, "pending_add changed "
	      "the peer state to %d (nothing left to test)",
	      (int)peer->state);
	if (fx_failures)
		goto out;

	/* 4. Progress alone dispatches them over a new association. */
	t0 = fx_now_s();
	deadline = t0 + DEADLINE_S;
	do {
		uct_worker_progress(e.worker);
		fx_release_kept(&t);
		for (done = 0, k = 0; k < RECONNECT_PENDING; k++)
			done += reqs[k].done;
	} while ((done < RECONNECT_PENDING ||
		  t.rx_count < RECONNECT_FIRST + RECONNECT_PENDING) &&
		 fx_now_s() < deadline);
	fx_release_kept(&t);
	CHECK(done == RECONNECT_PENDING, "%u of %u pending requests "
	      "dispatched within %d s after the graceful shutdown (peer state "
	      "%d, %d = IDLE): nothing reconnected the ep", done,
	      RECONNECT_PENDING, DEADLINE_S, (int)peer->state,
	      (int)UCT_SCTP_DPDK_PEER_IDLE);
	CHECK(t.rx_count == RECONNECT_FIRST + RECONNECT_PENDING,
	      "%u of %u echoes", t.rx_count,
	      RECONNECT_FIRST + RECONNECT_PENDING);
	CHECK(t.rx_bad == 0, "%u bad echoes", t.rx_bad);
	CHECK(peer->state == UCT_SCTP_DPDK_PEER_UP, "peer state %d after "
	      "the echoes, want UP", (int)peer->state);
	CHECK(peer->state != UCT_SCTP_DPDK_PEER_UP ||
	      peer->assoc != assoc_old, "the echoes came over the old "
	      "association %u: it was never shut down", assoc_old);
	CHECK(fx_err_calls == 0, "error handler called %u times (%s)",
	      fx_err_calls, ucs_status_string(fx_err_seen));
	printf("reconnect: association %u shut down gracefully, %u of %u "
	       "pending requests dispatched, now association %u state %d, "
	       "%u echoes in %.2f s: %s\n", assoc_old, done,
	       RECONNECT_PENDING, peer->assoc, (int)peer->state, t.rx_count,
	       fx_now_s() - t0, fx_failures ? "FAIL" : "ok");
out:
	uct_ep_pending_purge(ep, reconnect_purge_cb, NULL);
	uct_ep_destroy(ep);
	uct_iface_close(t.iface);
	fx_env_close(&e);
	close(fd);
	return fx_failures ? 1 : 0;
}

int main(void)
{
	return fx_run(test_reconnect);
}
