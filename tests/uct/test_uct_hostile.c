/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_uct_hostile.c - what a broken or hostile peer sends inside an
 * established association must not crash, stall or mislead this process;
 * legitimate traffic on the same association still flows (meson test
 * uct-hostile).
 *
 *   am-id   the peer sends AMs whose id is >= UCT_AM_ID_MAX (100, 32, and
 *           0x85, which has the bit of an RMA reply but not its flag):
 *           each is dropped and counted (ctx->rx_bad_am), none reaches
 *           UCX's handler table; AMs before and after arrive intact.
 *
 *   test process (memif client 10.77.8.2)   peer (memif server 10.77.8.1)
 *   victim: iface with fx_am_cb on AM_ID    ep to the victim's iface
 *           counts, checks                  'A': HOSTILE_GOOD legit AMs
 *                                           'B': raw messages with bogus
 *                                                headers, sg_send directly
 *
 * The peer writes its messages below the UCT API (sg_send on the ep's
 * association and stream), as a peer with another implementation would:
 * the UCT entry points check the ids a caller passes.
 *
 * Fixture: uct_fixture.h.
 */
#include "uct_fixture.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#define HOSTILE_GOOD 16	     /* legitimate AMs per 'A' command */
#define HOSTILE_AM_LEN 64    /* bytes of each legitimate AM */

/* The bogus AM ids the peer sends (flags 0). */
static const uint8_t hostile_bad_ids[] = {100, UCT_AM_ID_MAX, 0x85};
#define HOSTILE_NB_BAD (sizeof(hostile_bad_ids) / sizeof(hostile_bad_ids[0]))

/* One raw message on @uep's association and stream: our header with
 * @am_id and @flags, then @len bytes of @payload.  @return 0, or -1 when
 * the send buffer stayed full past the deadline or sg_send failed. */
static int hostile_raw_send(env_t *e, uct_ep_h uep, uint8_t am_id,
			    uint8_t flags, const void *payload, size_t len)
{
	uct_sctp_dpdk_ep_t *ep = ucs_derived_of(uep, uct_sctp_dpdk_ep_t);
	uct_sctp_dpdk_iface_t *iface =
		ucs_derived_of(uep->iface, uct_sctp_dpdk_iface_t);
	uct_sctp_dpdk_ctx_t *ctx = iface->ctx;
	double deadline = fx_now_s() + DEADLINE_S;
	uct_sctp_dpdk_am_hdr_t hdr;
	struct iovec iov[2];
	int rc;

	hdr.am_id = am_id;
	hdr.flags = flags;
	hdr.dst_iface_id = rte_cpu_to_be_16(ep->dst_iface_id);
	hdr.src_iface_id = rte_cpu_to_be_16(iface->id);
	hdr.dst_incarnation = rte_cpu_to_be_16((uint16_t)ep->dst_incarnation);
	iov[0].iov_base = &hdr;
	iov[0].iov_len = sizeof(hdr);
	iov[1].iov_base = (void *)payload;
	iov[1].iov_len = len;
	do {
		ucs_recursive_spin_lock(ctx->lock);
		rc = sg_send(ep->peer->sg, ep->peer->assoc, ep->stream, 0, 0,
			     iov, len > 0 ? 2 : 1);
		ucs_recursive_spin_unlock(ctx->lock);
		if (rc != -EAGAIN)
			break;
		uct_worker_progress(e->worker);
	} while (fx_now_s() < deadline);
	if (rc != 0)
		fprintf(stderr, "hostile peer: sg_send: %s\n", strerror(-rc));
	return rc == 0 ? 0 : -1;
}

/* The peer: memif server, one ep to the test's iface, commands from
 * @fd while progressing; exits when the socket closes or after 60 s. */
static void hostile_peer_main(int fd)
{
	uint8_t dev[64], ifa[64], payload[HOSTILE_AM_LEN];
	double deadline = fx_now_s() + 60;
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	uint16_t seq = 0;
	uint32_t done;
	unsigned i;
	uct_ep_h ep;
	iface_t t;
	env_t e;
	char op;

	fx_memif_env(1, "10.77.8.1/24", "r0");
	fx_env_open(&e);
	fx_iface_open(&e, &t, 0);
	if (fx_write_addr(fd, &t) != 0 || fx_read_addr(fd, dev, ifa) != 0)
		exit(1);
	ep = fx_ep_to(&t, dev, ifa);
	memset(payload, 0x5a, sizeof(payload));
	while (fx_now_s() < deadline) {
		uct_worker_progress(e.worker);
		fx_release_kept(&t);
		if (poll(&pfd, 1, 0) != 1)
			continue;
		if (read(fd, &op, 1) != 1)
			exit(0);
		done = 0;
		switch (op) {
		case 'A':
			for (i = 0; i < HOSTILE_GOOD; i++, done++)
				fx_send_am(&e, ep, 0, 0, seq++,
					   HOSTILE_AM_LEN);
			break;
		case 'B':
			for (i = 0; i < HOSTILE_NB_BAD; i++)
				if (hostile_raw_send(&e, ep,
						     hostile_bad_ids[i], 0,
						     payload,
						     sizeof(payload)) == 0)
					done++;
			break;
		default:
			exit(0);
		}
		if (write(fd, &done, sizeof(done)) != sizeof(done))
			exit(1);
	}
	exit(0);
}

/* One command to the peer, progressing @e (the association needs both
 * sides) until its reply or the deadline.  @return its count, or
 * UINT32_MAX. */
static uint32_t hostile_cmd(env_t *e, iface_t *t, int fd, char op)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	double deadline = fx_now_s() + DEADLINE_S;
	uint32_t done;

	if (write(fd, &op, 1) != 1)
		return UINT32_MAX;
	while (poll(&pfd, 1, 0) != 1) {
		if (fx_now_s() > deadline)
			return UINT32_MAX;
		uct_worker_progress(e->worker);
		fx_release_kept(t);
	}
	if (read(fd, &done, sizeof(done)) != sizeof(done))
		return UINT32_MAX;
	return done;
}

static int test_am_id(void)
{
	uct_sctp_dpdk_ctx_t *ctx;
	uint8_t dev[64], ifa[64];
	uint32_t sent;
	double deadline;
	iface_t t;
	env_t e;
	int fd;

	fd = fx_fork_client(hostile_peer_main);
	if (fd < 0)
		return 1;
	fx_env_open(&e);
	fx_iface_open(&e, &t, 0);
	if (fx_swap_addr(fd, &t, dev, ifa) != 0)
		return 1;
	ctx = uct_sctp_dpdk_ctx_peek();

	sent = hostile_cmd(&e, &t, fd, 'A');
	CHECK(sent == HOSTILE_GOOD, "peer sent %u of %u AMs", sent,
	      HOSTILE_GOOD);
	CHECK(fx_wait_count(&e, &t, HOSTILE_GOOD), "got %u of %u AMs before "
	      "the bogus ones", t.rx_count, HOSTILE_GOOD);

	sent = hostile_cmd(&e, &t, fd, 'B');
	CHECK(sent == HOSTILE_NB_BAD, "peer sent %u of %zu bogus AMs", sent,
	      HOSTILE_NB_BAD);
	deadline = fx_now_s() + DEADLINE_S;
	while (ctx->rx_bad_am < HOSTILE_NB_BAD && fx_now_s() < deadline)
		uct_worker_progress(e.worker);
	CHECK(ctx->rx_bad_am == HOSTILE_NB_BAD, "rx_bad_am %" PRIu64
	      ", want %zu: AMs with ids >= UCT_AM_ID_MAX were not refused",
	      ctx->rx_bad_am, HOSTILE_NB_BAD);

	sent = hostile_cmd(&e, &t, fd, 'A');
	CHECK(sent == HOSTILE_GOOD, "peer sent %u of %u AMs", sent,
	      HOSTILE_GOOD);
	CHECK(fx_wait_count(&e, &t, 2 * HOSTILE_GOOD), "got %u of %u AMs "
	      "after the bogus ones", t.rx_count, 2 * HOSTILE_GOOD);
	CHECK(t.rx_bad == 0, "%u AMs arrived corrupted", t.rx_bad);
	CHECK(t.rx_count == 2 * HOSTILE_GOOD, "%u AMs reached the AM_ID "
	      "handler, want %u", t.rx_count, 2 * HOSTILE_GOOD);
	printf("am-id: %zu bogus AM ids refused (rx_bad_am %" PRIu64 "), "
	       "%u legitimate AMs around them arrived: %s\n", HOSTILE_NB_BAD,
	       ctx->rx_bad_am, t.rx_count, fx_failures ? "FAIL" : "ok");
	close(fd);
	uct_iface_close(t.iface);
	fx_env_close(&e);
	return fx_failures ? 1 : 0;
}

int main(void)
{
	return fx_run(test_am_id);
}
