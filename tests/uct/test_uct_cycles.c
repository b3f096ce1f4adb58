/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_uct_cycles.c - an iface opened and closed 50 times against an echoing
 * peer (meson test uct-cycles).
 *
 *   cycles  an iface is opened and closed 50 times; each cycle sends AMs
 *           over a memif pair to a forked peer process, which echoes them,
 *           and waits for the echoes.  Afterwards no mbuf (port mempool in
 *           use), receive descriptor or file descriptor has leaked.
 *           An echo is then awaited by sleeping on the iface's event fd.
 *
 * Fixture (UCT context, forked memif peer, cleanup): uct_fixture.h.
 */
#include "uct_fixture.h"

#include <poll.h>
#include <string.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>
#include <rte_mempool.h>

#define CYCLES 50
#define MSGS_PER_CYCLE 24

/*
 * A blocking wait the way ucp_worker_wait does it: arm the iface, sleep on
 * its event fd, progress when it fires.  In inline mode the port is polled
 * by nobody while the worker sleeps, so the fd must fire on its own (the
 * one-shot timer) or the echo is never read: a wait with only an eventfd
 * would block for ever.  Each sleep must end within 1 s.
 */
static void wait_by_event_fd(env_t *e, iface_t *t, uct_ep_h ep)
{
	double deadline = fx_now_s() + DEADLINE_S;
	unsigned want = t->rx_count + 1, sleeps = 0;
	struct pollfd pfd = {.events = POLLIN};
	ucs_status_t st;
	uint16_t id;
	int r;

	CHECK_OK(uct_iface_event_fd_get(t->iface, &pfd.fd), "event fd");
	memcpy(&id, t->iface_addr, 2);
	fx_send_am(e, ep, 0, rte_be_to_cpu_16(id), 0, 64);
	while (t->rx_count < want && fx_now_s() < deadline) {
		st = uct_iface_event_arm(t->iface, UCT_EVENT_RECV);
		if (st == UCS_ERR_BUSY) {
			uct_worker_progress(e->worker);
			continue;
		}
		CHECK(st == UCS_OK, "event_arm: %s", ucs_status_string(st));
		r = poll(&pfd, 1, 1000);
		CHECK(r == 1, "event fd did not fire within 1 s (poll %d) "
		      "after %u sleeps", r, sleeps);
		if (r != 1)
			break;
		sleeps++;
		uct_worker_progress(e->worker);
	}
	fx_release_kept(t);
	CHECK(t->rx_count >= want, "echo not received by a blocking wait");
	printf("event-fd: echo received after %u sleeps on the event fd: "
	       "%s\n", sleeps, fx_failures ? "FAIL" : "ok");
}

static int test_cycles(void)
{
	uint8_t dev[64], ifa[64];
	int fd, fds_before = -1, fds_after;
	unsigned in_use_before = 0, in_use_after, c, k, sent_total = 0;
	int64_t held;
	char pool[32];
	struct rte_mempool *mp = NULL;
	uct_sctp_dpdk_ctx_t *ctx;
	env_t e;

	fd = fx_fork_client(fx_echo_peer_main);
	if (fd < 0)
		return 1;

	/* Fast failure detection for the peer-failure part. */
	setenv("UCX_SCTP_DPDK_SG", "rto_min_ms=50 rto_initial_ms=100 "
	       "rto_max_ms=200 path_max_rxt=3 hb_interval_ms=100", 1);
	fx_env_open(&e);
	for (c = 0; c < CYCLES; c++) {
		iface_t t;
		uct_ep_h ep;

		fx_iface_open(&e, &t, c % 2 ? 72 : 0);
		if (c == 0 && fx_swap_addr(fd, &t, dev, ifa) != 0)
			return 1;
		ep = fx_ep_to(&t, dev, ifa);
		for (k = 0; k < MSGS_PER_CYCLE; k++) {
			uint16_t id;

			memcpy(&id, t.iface_addr, 2);
			fx_send_am(&e, ep, k % 4, rte_be_to_cpu_16(id),
				(uint16_t)k,
				k % 4 >= 2 ? 4000 + 997 * k : 16 + 40 * k);
		}
		sent_total += MSGS_PER_CYCLE;
		CHECK(fx_wait_count(&e, &t, MSGS_PER_CYCLE),
		      "cycle %u: %u of %u echoes", c, t.rx_count,
		      MSGS_PER_CYCLE);
		CHECK(t.rx_bad == 0, "cycle %u: %u bad echoes", c, t.rx_bad);
		while (uct_ep_flush(ep, 0, NULL) != UCS_OK)
			uct_worker_progress(e.worker);
		uct_ep_destroy(ep);
		uct_iface_close(t.iface);
		if (fx_failures)
			break;
		if (c == 0) {
			/* Baseline after the first cycle: port, EAL and
			 * association exist from here on. */
			ctx = uct_sctp_dpdk_ctx_peek();
			snprintf(pool, sizeof(pool), "dp_pool_%u",
				 dp_port_id(ctx->port));
			mp = rte_mempool_lookup(pool);
			CHECK(mp != NULL, "no mempool %s", pool);
			fds_before = fx_count_fds();
			in_use_before = mp ? rte_mempool_in_use_count(mp) : 0;
		}
	}
	ctx = uct_sctp_dpdk_ctx_peek();
	fds_after = fx_count_fds();
	in_use_after = mp ? rte_mempool_in_use_count(mp) : 0;
	held = ctx->sg_descs_held;

	if (fx_failures == 0) {
		iface_t t;
		uct_ep_h ep;

		fx_iface_open(&e, &t, 0);
		ep = fx_ep_to(&t, dev, ifa);
		wait_by_event_fd(&e, &t, ep);
		while (uct_ep_flush(ep, 0, NULL) != UCS_OK)
			uct_worker_progress(e.worker);
		uct_ep_destroy(ep);
		uct_iface_close(t.iface);
	}

	/* Peer failure: kill the peer; the ep's error handler must run
	 * (UCS_ERR_ENDPOINT_TIMEOUT) and sends fail, within the deadline. */
	if (fx_failures == 0) {
		iface_t t;
		uct_ep_h ep;
		double t0, deadline;
		ucs_status_t st = UCS_OK;
		uint64_t hdr = 0;

		fx_iface_open(&e, &t, 0);
		ep = fx_ep_to(&t, dev, ifa);
		fx_send_am(&e, ep, 0, 0, 0, 64);
		kill(fx_peer_pid, SIGKILL);
		waitpid(fx_peer_pid, NULL, 0);
		fx_peer_pid = 0;
		t0 = fx_now_s();
		deadline = t0 + DEADLINE_S;
		while (fx_err_calls == 0 && fx_now_s() < deadline) {
			st = uct_ep_am_short(ep, AM_ID, hdr, &hdr, 8);
			uct_worker_progress(e.worker);
		}
		CHECK(fx_err_calls == 1, "error handler called %u times",
		      fx_err_calls);
		CHECK(fx_err_seen == UCS_ERR_ENDPOINT_TIMEOUT, "error %s",
		      ucs_status_string(fx_err_seen));
		st = uct_ep_am_short(ep, AM_ID, hdr, &hdr, 8);
		CHECK(st == UCS_ERR_ENDPOINT_TIMEOUT, "send after failure: %s",
		      ucs_status_string(st));
		printf("peer-failure: error handler after %.1f s (%s), send "
		       "returns %s: %s\n", fx_now_s() - t0,
		       ucs_status_string(fx_err_seen), ucs_status_string(st),
		       fx_failures ? "FAIL" : "ok");
		uct_ep_destroy(ep);
		uct_iface_close(t.iface);
	}
	CHECK(fds_after == fds_before, "fds %d -> %d", fds_before, fds_after);
	CHECK(in_use_after == in_use_before,
	      "mbufs in use %u -> %u", in_use_before, in_use_after);
	CHECK(held == 0, "%" PRId64 " receive descriptors not released", held);
	CHECK(ctx->refs == 0, "ctx refs %u", ctx->refs);
	printf("cycles: %u open/close cycles, %u AMs echoed; fds %d -> %d, "
	       "mbufs in use %u -> %u, descriptors held %" PRId64 ": %s\n",
	       c, sent_total, fds_before, fds_after, in_use_before,
	       in_use_after, held, fx_failures ? "FAIL" : "ok");
	fx_env_close(&e);
	return fx_failures ? 1 : 0;
}

int main(void)
{
	return fx_run(test_cycles);
}
