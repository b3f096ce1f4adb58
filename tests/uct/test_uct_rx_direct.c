/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_uct_rx_direct.c - RMA data received straight into their destination
 * (UCX_SCTP_DPDK_RX_DIRECT, sctp_dpdk_rma.c "direct placement", sg.h
 * sg_ep_set_place; meson test uct-rx-direct).  With 2% of the DATA packets
 * each side receives dropped (dp drop hook, drop=rx:every:50):
 *
 *   gets     six get_zcopy in flight at once on three eps (three streams),
 *            sizes that are no multiple of the MTU or the segment, one to
 *            three iov entries each: every byte checked, and every reply
 *            byte went straight from usrsctp_recvv into the buffers: the
 *            UCT counters say get_direct_bytes == the bytes asked for and
 *            get_copy_bytes == 0, sg says rx_direct_bytes == that too
 *   puts     a put_zcopy of 1 MiB + 333 bytes: checked at the peer, whose
 *            counters say placed + copied == payload, placed > 0
 *   destroy  a 16 MiB get_zcopy whose ep is destroyed once part of it
 *            arrived: its completion runs once (UCS_ERR_CANCELED); the
 *            buffer, refilled right after the destroy, is never written
 *            again while the rest of the replies arrive and are discarded;
 *            a new ep then gets correctly
 *   vanish   the peer process is killed while a 16 MiB get's replies are
 *            placed: the bytes placed so far are right, the op ends once
 *            (ep destroy) and its buffer is never written after that
 *
 * Without the change (or with UCX_SCTP_DPDK_RX_DIRECT=n) the reply bytes go
 * through a receive descriptor and UCT's copy: get_direct_bytes is 0 and
 * get_copy_bytes is the payload, so "gets" fails.
 *
 * Fixture: uct_fixture.h, RMA peer: uct_rma_fixture.h.
 */
#include "uct_rma_fixture.h"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#define RXD_GETS 6
#define RXD_EPS 3
#define RXD_PUT_BYTES ((1u << 20) + 333)

/* bytes, iov entries (split evenly, the last takes the rest) */
static const struct {
	size_t len;
	unsigned iovcnt;
} rxd_gets[RXD_GETS] = {
	{(1u << 20) + 777, 1}, {3 * 65536 + 13, 2},  {100001, 3},
	{9000 * 7 + 1, 1},     {65480 - 56 + 1, 2},  {(2u << 20) - 5, 3},
};

static unsigned rxd_iov(uct_iov_t *iov, uint8_t *buf, size_t len,
			unsigned cnt)
{
	size_t part = len / cnt, off = 0;
	unsigned i;

	for (i = 0; i < cnt; i++) {
		iov[i].buffer = buf + off;
		iov[i].length = i == cnt - 1 ? len - off : part;
		iov[i].count = 1;
		iov[i].stride = 0;
		iov[i].memh = UCT_MEM_HANDLE_NULL;
		off += iov[i].length;
	}
	return cnt;
}

/* Issue until accepted; @return the status (UCS_INPROGRESS expected). */
static ucs_status_t rxd_get(env_t *e, uct_ep_h ep, uct_iov_t *iov,
			    unsigned cnt, uint64_t raddr, uct_rkey_t rkey,
			    fx_comp_t *c)
{
	double deadline = fx_now_s() + RMA_DEADLINE_S;
	ucs_status_t st;

	while ((st = uct_ep_get_zcopy(ep, iov, cnt, raddr, rkey,
				      &c->super)) == UCS_ERR_NO_RESOURCE &&
	       fx_now_s() < deadline)
		uct_worker_progress(e->worker);
	return st;
}

static void rxd_sg_stats(uct_sctp_dpdk_ctx_t *ctx, struct sg_stats *st)
{
	ucs_recursive_spin_lock(ctx->lock);
	sg_ep_stats(ctx->sg, st);
	ucs_recursive_spin_unlock(ctx->lock);
}

static void test_gets(env_t *e, uct_ep_h *eps, const rma_info_t *info,
		      uct_rkey_t rkey)
{
	uct_sctp_dpdk_ctx_t *ctx = uct_sctp_dpdk_ctx_peek();
	uint64_t direct0 = ctx->rma_get_direct_bytes, copy0, total = 0;
	uint64_t offs[RXD_GETS], off = 0;
	uint8_t *bufs[RXD_GETS];
	fx_comp_t comps[RXD_GETS];
	struct sg_stats s0, s1;
	uct_iov_t iov[3];
	ucs_status_t st;
	double deadline;
	unsigned i, cnt, done;
	int64_t bad;

	copy0 = __atomic_load_n(&ctx->rma_get_copy_bytes, __ATOMIC_RELAXED);
	rxd_sg_stats(ctx, &s0);
	/* Region A holds pattern 31; each get reads its own range. */
	fx_rma_cmd('F', 0, 31, 0, RMA_BIG);
	for (i = 0; i < RXD_GETS; i++) {
		offs[i] = off;
		off += rxd_gets[i].len + 4096 + 3; /* odd offsets too */
		bufs[i] = malloc(rxd_gets[i].len);
		if (bufs[i] == NULL) {
			CHECK(0, "no memory");
			return;
		}
		memset(bufs[i], 0, rxd_gets[i].len);
		fx_comp_init(&comps[i]);
		cnt = rxd_iov(iov, bufs[i], rxd_gets[i].len,
			      rxd_gets[i].iovcnt);
		st = rxd_get(e, eps[i % RXD_EPS], iov, cnt,
			     info->a_addr + offs[i], rkey, &comps[i]);
		CHECK(st == UCS_INPROGRESS, "get %u (%zu bytes): %s", i,
		      rxd_gets[i].len, ucs_status_string(st));
		if (st != UCS_INPROGRESS)
			comps[i].calls = 1, comps[i].status = st;
		total += rxd_gets[i].len;
	}
	deadline = fx_now_s() + RMA_DEADLINE_S;
	do {
		uct_worker_progress(e->worker);
		for (i = 0, done = 0; i < RXD_GETS; i++)
			done += comps[i].calls != 0;
	} while (done < RXD_GETS && fx_now_s() < deadline);
	for (i = 0; i < RXD_GETS; i++) {
		CHECK(comps[i].calls == 1 && comps[i].status == UCS_OK,
		      "get %u: completion %u times, %s", i, comps[i].calls,
		      ucs_status_string(comps[i].status));
		/* fx_rma_byte(seed, i) is the byte at index i of region A */
		bad = -1;
		for (size_t k = 0; k < rxd_gets[i].len && bad < 0; k++)
			if (bufs[i][k] != fx_rma_byte(31, offs[i] + k))
				bad = (int64_t)k;
		CHECK(bad < 0, "get %u (%zu bytes, %u iov): byte %" PRId64
		      " wrong", i, rxd_gets[i].len, rxd_gets[i].iovcnt, bad);
		free(bufs[i]);
	}
	rxd_sg_stats(ctx, &s1);
	printf("rx-direct gets: %" PRIu64 " bytes in %u gets on %u eps: "
	       "placed %" PRIu64 ", copied %" PRIu64 "; sg rx_direct_bytes "
	       "%" PRIu64 " rx_copy_recv_bytes %" PRIu64 " rx_discard_bytes "
	       "%" PRIu64 "\n", total, RXD_GETS, RXD_EPS,
	       ctx->rma_get_direct_bytes - direct0,
	       __atomic_load_n(&ctx->rma_get_copy_bytes, __ATOMIC_RELAXED) -
		       copy0,
	       s1.rx_direct_bytes - s0.rx_direct_bytes,
	       s1.rx_copy_recv_bytes - s0.rx_copy_recv_bytes,
	       s1.rx_discard_bytes - s0.rx_discard_bytes);
	CHECK(ctx->rma_get_direct_bytes - direct0 == total,
	      "GET reply bytes placed straight into the buffers: %" PRIu64
	      " of %" PRIu64, ctx->rma_get_direct_bytes - direct0, total);
	CHECK(__atomic_load_n(&ctx->rma_get_copy_bytes, __ATOMIC_RELAXED) ==
		      copy0,
	      "GET reply bytes copied from descriptors: %" PRIu64 " (want 0)",
	      __atomic_load_n(&ctx->rma_get_copy_bytes, __ATOMIC_RELAXED) -
		      copy0);
	CHECK(s1.rx_direct_bytes - s0.rx_direct_bytes == total,
	      "sg rx_direct_bytes %" PRIu64 " (want %" PRIu64 ")",
	      s1.rx_direct_bytes - s0.rx_direct_bytes, total);
}

static void test_puts(uct_ep_h ep, const rma_info_t *info, uct_rkey_t rkey)
{
	uint64_t placed0 = fx_rma_cmd('C', 0, 0, 0, 0);
	uint64_t copied0 = fx_rma_cmd('C', 1, 0, 0, 0), placed, copied;
	uint8_t *buf = malloc(RXD_PUT_BYTES);
	ucs_status_t st;

	if (buf == NULL) {
		CHECK(0, "no memory");
		return;
	}
	fx_rma_fill(buf, RXD_PUT_BYTES, 41);
	st = fx_rma_op(ep, RMA_PUT_ZCOPY, buf, RXD_PUT_BYTES,
		       info->a_addr + 4097, rkey);
	fx_rma_flush(ep);
	CHECK(st == UCS_OK, "put %u bytes: %s", RXD_PUT_BYTES,
	      ucs_status_string(st));
	CHECK(fx_rma_cmd('V', 0, 41, 4097, RXD_PUT_BYTES) == 0,
	      "put data wrong at the peer");
	placed = fx_rma_cmd('C', 0, 0, 0, 0) - placed0;
	copied = fx_rma_cmd('C', 1, 0, 0, 0) - copied0;
	printf("rx-direct put: %u bytes: the target placed %" PRIu64
	       ", copied %" PRIu64 "\n", RXD_PUT_BYTES, placed, copied);
	CHECK(placed + copied == RXD_PUT_BYTES && placed > 0,
	      "PUT bytes at the target: placed %" PRIu64 " + copied %" PRIu64
	      " (want %u, placed > 0)", placed, copied, RXD_PUT_BYTES);
	free(buf);
}

static void test_destroy(env_t *e, iface_t *t, const uint8_t *dev,
			 const uint8_t *ifa, const rma_info_t *info,
			 uct_rkey_t rkey)
{
	uct_sctp_dpdk_ctx_t *ctx = uct_sctp_dpdk_ctx_peek();
	uint64_t direct0 = ctx->rma_get_direct_bytes, got = 0;
	uint8_t *buf = malloc(RMA_BIG);
	struct sg_stats s0, s1;
	fx_comp_t c;
	uct_iov_t iov[2];
	ucs_status_t st;
	double t0;
	uct_ep_h ep;
	size_t k, changed = 0;

	if (buf == NULL) {
		CHECK(0, "no memory");
		return;
	}
	fx_rma_cmd('F', 0, 32, 0, RMA_BIG);
	ep = fx_ep_to(t, dev, ifa);
	fx_comp_init(&c);
	rxd_iov(iov, buf, RMA_BIG, 2);
	rxd_sg_stats(ctx, &s0);
	st = rxd_get(e, ep, iov, 2, info->a_addr, rkey, &c);
	CHECK(st == UCS_INPROGRESS, "get 16 MiB: %s", ucs_status_string(st));
	/* Destroy once part of it is in (not all: 16 MiB take a while). */
	t0 = fx_now_s();
	while (c.calls == 0 && fx_now_s() < t0 + RMA_DEADLINE_S &&
	       (got = ctx->rma_get_direct_bytes - direct0) < (1u << 20))
		uct_worker_progress(e->worker);
	CHECK(c.calls == 0, "the 16 MiB get completed before the destroy "
	      "(%u, %s): the test needs it in flight", c.calls,
	      ucs_status_string(c.status));
	uct_ep_destroy(ep);
	CHECK(c.calls == 1 && c.status == UCS_ERR_CANCELED,
	      "get at ep destroy: completion %u times, %s (want once, %s)",
	      c.calls, ucs_status_string(c.status),
	      ucs_status_string(UCS_ERR_CANCELED));
	/* The destination is the user's again: nothing may write it. */
	memset(buf, 0xee, RMA_BIG);
	t0 = fx_now_s();
	while (fx_now_s() < t0 + 2.0)
		uct_worker_progress(e->worker);
	for (k = 0; k < RMA_BIG; k++)
		changed += buf[k] != 0xee;
	rxd_sg_stats(ctx, &s1);
	printf("rx-direct destroy: ep destroyed after %" PRIu64 " of %u bytes"
	       " placed; completion %s; bytes written after: %zu; sg "
	       "discarded %" PRIu64 ", placed in all %" PRIu64 "\n", got,
	       RMA_BIG, ucs_status_string(c.status), changed,
	       s1.rx_discard_bytes - s0.rx_discard_bytes,
	       s1.rx_direct_bytes - s0.rx_direct_bytes);
	CHECK(changed == 0 && c.calls == 1,
	      "%zu bytes of the buffer written after its get was canceled "
	      "(completion called %u times)", changed, c.calls);
	/* A new ep gets correctly. */
	ep = fx_ep_to(t, dev, ifa);
	memset(buf, 0, 300000);
	st = fx_rma_op(ep, RMA_GET_ZCOPY, buf, 300000, info->a_addr + 5, rkey);
	for (k = 0, changed = 0; k < 300000; k++)
		changed += buf[k] != fx_rma_byte(32, 5 + k);
	CHECK(st == UCS_OK && changed == 0,
	      "get on a new ep after the destroy: %s, %zu bytes wrong",
	      ucs_status_string(st), changed);
	uct_ep_destroy(ep);
	free(buf);
}

/* The peer process dies (SIGKILL) while the replies of a 16 MiB get are
 * being placed: what was placed is right, the op ends exactly once (ep
 * destroy), and its buffer is never written after that. */
static void test_vanish(env_t *e, iface_t *t, const uint8_t *dev,
			const uint8_t *ifa, const rma_info_t *info,
			uct_rkey_t rkey)
{
	uct_sctp_dpdk_ctx_t *ctx = uct_sctp_dpdk_ctx_peek();
	uint64_t direct0 = ctx->rma_get_direct_bytes, got = 0;
	uint8_t *buf = malloc(RMA_BIG);
	size_t k, bad = 0, changed = 0;
	uct_iov_t iov[1];
	fx_comp_t c;
	ucs_status_t st;
	double t0;
	uct_ep_h ep;

	if (buf == NULL) {
		CHECK(0, "no memory");
		return;
	}
	fx_rma_cmd('F', 0, 33, 0, RMA_BIG);
	ep = fx_ep_to(t, dev, ifa);
	fx_comp_init(&c);
	rxd_iov(iov, buf, RMA_BIG, 1);
	st = rxd_get(e, ep, iov, 1, info->a_addr, rkey, &c);
	CHECK(st == UCS_INPROGRESS, "get 16 MiB: %s", ucs_status_string(st));
	t0 = fx_now_s();
	while (c.calls == 0 && fx_now_s() < t0 + RMA_DEADLINE_S &&
	       (got = ctx->rma_get_direct_bytes - direct0) < (1u << 20))
		uct_worker_progress(e->worker);
	kill(fx_peer_pid, SIGKILL);
	waitpid(fx_peer_pid, NULL, 0);
	fx_peer_pid = 0;
	CHECK(c.calls == 0, "the get completed before the peer died (%s)",
	      ucs_status_string(c.status));
	/* one stream, in order: the first @got bytes are complete */
	for (k = 0; k < got; k++)
		bad += buf[k] != fx_rma_byte(33, k);
	t0 = fx_now_s();
	while (fx_now_s() < t0 + 2.0)
		uct_worker_progress(e->worker);
	uct_ep_destroy(ep);
	CHECK(c.calls == 1 && c.status != UCS_OK,
	      "get whose peer died: completion %u times, %s (want once, an "
	      "error)", c.calls, ucs_status_string(c.status));
	memset(buf, 0xee, RMA_BIG);
	t0 = fx_now_s();
	while (fx_now_s() < t0 + 1.0)
		uct_worker_progress(e->worker);
	for (k = 0; k < RMA_BIG; k++)
		changed += buf[k] != 0xee;
	printf("rx-direct vanish: peer killed after %" PRIu64 " bytes placed "
	       "(%zu wrong); completion %s; bytes written after: %zu\n", got,
	       bad, ucs_status_string(c.status), changed);
	CHECK(bad == 0 && changed == 0 && c.calls == 1,
	      "peer died mid-get: %zu placed bytes wrong, %zu written after "
	      "the op ended", bad, changed);
	free(buf);
}

static int test_rx_direct(void)
{
	uct_ep_h eps[RXD_EPS];
	uint8_t dev[64], ifa[64];
	uct_rkey_bundle_t a_rk;
	rma_info_t info;
	iface_t t;
	env_t e;
	unsigned i;

	/* 2% of the DATA packets each side receives are dropped. */
	setenv("UCX_SCTP_DPDK_DP", "drop=rx:every:50", 1);
	if (fx_rma_start(&e, &t, dev, ifa, &info) != 0)
		return 1;
	CHECK(uct_sctp_dpdk_ctx_peek()->rx_direct,
	      "UCX_SCTP_DPDK_RX_DIRECT is off (%s)",
	      getenv("UCX_SCTP_DPDK_RX_DIRECT") ?: "unset");
	CHECK_OK(uct_rkey_unpack(e.comp, info.a_rkey, &a_rk), "unpack A");
	for (i = 0; i < RXD_EPS; i++)
		eps[i] = fx_ep_to(&t, dev, ifa);
	test_gets(&e, eps, &info, a_rk.rkey);
	test_puts(eps[0], &info, a_rk.rkey);
	for (i = 0; i < RXD_EPS; i++) {
		fx_rma_flush(eps[i]);
		uct_ep_destroy(eps[i]);
	}
	test_destroy(&e, &t, dev, ifa, &info, a_rk.rkey);
	/* last: the peer does not survive it */
	test_vanish(&e, &t, dev, ifa, &info, a_rk.rkey);
	printf("rx-direct: %s\n", fx_failures ? "FAIL" : "ok");
	uct_rkey_release(e.comp, &a_rk);
	uct_iface_close(t.iface);
	fx_env_close(&e);
	return fx_failures ? 1 : 0;
}

int main(void)
{
	return fx_run(test_rx_direct);
}
