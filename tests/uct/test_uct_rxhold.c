/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_uct_rxhold.c - UCX keeps thousands of received AMs; reading goes on
 * (meson test uct-rxhold).
 *
 *   rxhold  the AM handler keeps (UCS_INPROGRESS) thousands of AMs echoed
 *           by a forked peer; with 16 sg descriptors both iface pairs
 *           keep receiving (receive-descriptor policy).
 *
 * Fixture (UCT context, forked memif peer, cleanup): uct_fixture.h.
 */
#include "uct_fixture.h"

#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#define HOLD_SMALL 2000	 /* 64-byte AMs the handler keeps */
#define HOLD_LARGE 40	 /* 8000-byte AMs the handler keeps if it may */
#define HOLD_RX_DESCS 16 /* sg descriptors of the receiver */
#define HOLD_BATCH 200	 /* below the peer's echo queue */

typedef struct {
	void *desc[HOLD_SMALL + HOLD_LARGE];
	unsigned n_desc;	/* kept (UCT_CB_PARAM_FLAG_DESC) */
	unsigned n_copy;	/* delivered without the flag */
	unsigned rx, bad;
	size_t rx_headroom;
} hold_t;

static ucs_status_t hold_cb(void *arg, void *data, size_t length,
			    unsigned flags)
{
	hold_t *h = arg;

	if (!fx_verify(data, length))
		h->bad++;
	h->rx++;
	if (flags & UCT_CB_PARAM_FLAG_DESC) {
		h->desc[h->n_desc++] = (char *)data - h->rx_headroom;
		return UCS_INPROGRESS;
	}
	h->n_copy++;
	return UCS_OK;
}

static int hold_wait(env_t *e, hold_t *h, unsigned want)
{
	double deadline = fx_now_s() + DEADLINE_S;

	while (h->rx < want && fx_now_s() < deadline)
		uct_worker_progress(e->worker);
	return h->rx >= want;
}

/*
 * The receive-descriptor policy: a receiver whose AM handler keeps every
 * AM (UCS_INPROGRESS, as UCP does with unexpected messages) from one
 * iface pair must go on receiving, there and on a second iface pair, with
 * only HOLD_RX_DESCS sg descriptors.  Small AMs are copied out of the sg
 * segment at once; large ones are lent only while fewer than half the sg
 * descriptors are lent.  Before, the 17th kept AM stopped the reading of
 * every association.
 */
static int test_rxhold(void)
{
	static hold_t h;
	uint8_t dev[64], ifa[64];
	uct_sctp_dpdk_ctx_t *ctx;
	unsigned i, lent, held;
	iface_t a, b;
	uct_ep_h ep_a, ep_b;
	int fd;
	env_t e;

	fd = fx_fork_client(fx_echo_peer_main);
	if (fd < 0)
		return 1;
	setenv("UCX_SCTP_DPDK_RX_DESCS", "16", 1);
	/* The dedicated polling thread copies and queues; fast failure
	 * detection for the wakeup check at the end. */
	setenv("UCX_SCTP_DPDK_PROGRESS", "thread", 1);
	setenv("UCX_SCTP_DPDK_SG", "rto_min_ms=50 rto_initial_ms=100 "
	       "rto_max_ms=200 path_max_rxt=3 hb_interval_ms=100", 1);
	fx_env_open(&e);
	fx_iface_open(&e, &a, 72);
	fx_iface_open(&e, &b, 0);
	h.rx_headroom = 72;
	CHECK_OK(uct_iface_set_am_handler(a.iface, AM_ID, hold_cb, &h, 0),
		 "hold handler");
	if (fx_swap_addr(fd, &a, dev, ifa) != 0)
		return 1;
	ep_a = fx_ep_to(&a, dev, ifa);
	ep_b = fx_ep_to(&b, dev, ifa);
	ctx = uct_sctp_dpdk_ctx_peek();
	for (i = 0; i < HOLD_SMALL && fx_failures == 0; i++) {
		uint16_t id;

		memcpy(&id, a.iface_addr, 2);
		fx_send_am(&e, ep_a, 0, rte_be_to_cpu_16(id), (uint16_t)i, 64);
		if ((i + 1) % HOLD_BATCH == 0)
			CHECK(hold_wait(&e, &h, i + 1),
			      "iface a got %u of %u echoes (kept %u)", h.rx,
			      i + 1, h.n_desc);
	}
	for (i = 0; i < HOLD_LARGE && fx_failures == 0; i++) {
		uint16_t id;

		memcpy(&id, a.iface_addr, 2);
		fx_send_am(&e, ep_a, 2, rte_be_to_cpu_16(id), (uint16_t)i, 8000);
	}
	CHECK(hold_wait(&e, &h, HOLD_SMALL + HOLD_LARGE),
	      "iface a got %u of %u echoes (kept %u)", h.rx,
	      HOLD_SMALL + HOLD_LARGE, h.n_desc);
	/* The second pair still receives. */
	for (i = 0; i < 10 && fx_failures == 0; i++) {
		uint16_t id;

		memcpy(&id, b.iface_addr, 2);
		fx_send_am(&e, ep_b, i % 4, rte_be_to_cpu_16(id), (uint16_t)i,
			i % 4 >= 2 ? 5000 : 100);
	}
	CHECK(fx_wait_count(&e, &b, 10), "iface b got %u of 10 echoes while a "
	      "kept %u", b.rx_count, h.n_desc);
	lent = ctx->sg_descs_lent;
	held = (unsigned)ctx->sg_descs_held;
	CHECK(h.bad == 0 && b.rx_bad == 0, "corrupted: %u + %u", h.bad,
	      b.rx_bad);
	CHECK(h.n_desc >= HOLD_SMALL, "only %u of %u small AMs were lent "
	      "(FLAG_DESC)", h.n_desc, HOLD_SMALL);
	CHECK(lent <= HOLD_RX_DESCS / 2 && held <= HOLD_RX_DESCS / 2,
	      "sg descriptors lent %u, held %u: more than half of %u",
	      lent, held, HOLD_RX_DESCS);
	printf("rxhold: kept %u AMs (%u delivered without FLAG_DESC), sg "
	       "descriptors lent %u of %u; second pair got %u: %s\n",
	       h.n_desc, h.n_copy, lent, HOLD_RX_DESCS, b.rx_count,
	       fx_failures ? "FAIL" : "ok");
	for (i = 0; i < h.n_desc; i++)
		uct_iface_release_desc(h.desc[i]);
	CHECK(ctx->sg_descs_lent == 0 && ctx->sg_descs_held == 0,
	      "after release: sg descriptors lent %u held %" PRId64,
	      ctx->sg_descs_lent, ctx->sg_descs_held);
	while (uct_ep_flush(ep_a, 0, NULL) != UCS_OK ||
	       uct_ep_flush(ep_b, 0, NULL) != UCS_OK)
		uct_worker_progress(e.worker);
	/* A worker asleep on its event fd learns of a peer failure: the
	 * polling thread signals armed ifaces when a peer's state changes
	 * (no AM would ever wake it). */
	{
		struct pollfd pfd = {.events = POLLIN};
		double deadline = fx_now_s() + DEADLINE_S;
		ucs_status_t st;

		CHECK_OK(uct_iface_event_fd_get(a.iface, &pfd.fd), "event fd");
		kill(fx_peer_pid, SIGKILL);
		waitpid(fx_peer_pid, NULL, 0);
		fx_peer_pid = 0;
		while (fx_err_calls == 0 && fx_now_s() < deadline) {
			st = uct_iface_event_arm(a.iface, UCT_EVENT_RECV);
			if (st == UCS_OK &&
			    poll(&pfd, 1, (int)(DEADLINE_S * 1000)) != 1)
				break;
			uct_worker_progress(e.worker);
		}
		CHECK(fx_err_calls >= 1, "no error reported to a worker waiting "
		      "on the event fd after the peer died");
		printf("rxhold: peer killed; the worker asleep on its event fd "
		       "woke and got the error: %s\n",
		       fx_failures ? "FAIL" : "ok");
	}
	uct_ep_destroy(ep_a);
	uct_ep_destroy(ep_b);
	uct_iface_close(a.iface);
	uct_iface_close(b.iface);
	fx_env_close(&e);
	return fx_failures ? 1 : 0;
}

int main(void)
{
	return fx_run(test_rxhold);
}
