/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_uct_get_unmap.c - GET replies go out from the target's registered
 * memory by reference (TX_ZCOPY_MIN, sctp_dpdk_getzc.c), and the target
 * may deregister and unmap that memory as soon as the requester has the
 * data (meson test uct-get-unmap).
 *
 * The peer (target) mmaps a fresh buffer each round, fills it with a
 * pattern and registers it; this process GETs it (get_zcopy 256 KiB /
 * 1 MiB / 2 MiB) and checks every byte, then at once tells the peer to
 * release it, alternately
 *
 *   dereg   uct_md_mem_dereg, then munmap (a UCT user, UCP without its
 *           registration cache)
 *   unmap   munmap first, dereg later (UCP's registration cache: its
 *           VM_UNMAPPED handler only invalidates, dereg runs after)
 *
 * Both sides lose 2% of their DATA packets (drop=tx:every:50: replies
 * are retransmitted).  The peer reports the zero-copy replies still
 * referenced just before and just after the first of the two calls:
 * after it, none may be left (the call waited).  Whether a round catches
 * references before it is a race (the requester's last SACK against the
 * release command on the socketpair: on a quiet machine the SACK won all
 * 90 rounds now and then), so the rounds only count them;
 * the release is proved by two paused rounds: the requester posts a 2 MiB
 * GET, stops progressing for GU_PAUSE_MS (the target has queued every
 * reply by reference and gets no SACK), tells the peer to release
 * (dereg first, then munmap first) and only then progresses again: the
 * call must find references and return with none, and the GET must
 * complete with every byte right.  Without the release's detach and wait
 * the peer reads unmapped memory on a retransmission (SIGSEGV) or keeps
 * references past the call.  The counters show the replies went by
 * reference.
 *
 * The withheld SACK: a 2 MiB GET on one ep whose requester stops
 * progressing for longer than DEREG_WAIT_MS (500 ms here) while the peer
 * deregisters and unmaps the memory.  The release must not wait for the
 * SACK: the association's references become copies at once
 * (sg_assoc_zc_detach), the call returns well within DEREG_WAIT_MS with
 * none left and aborts nothing, the GET completes with every byte right,
 * and a second ep to the same peer (the same association) then completes
 * a GET of its own.  Aborting instead fails both.
 *
 * Last, the stall: this process starts a 64 MiB GET and stops
 * progressing (no SACK leaves it); the peer's dereg must return within
 * DEREG_WAIT_MS with no reference left (the replies not yet served fail
 * with INVALID_ADDR: the key is gone).
 *
 * Fixture: uct_fixture.h, RMA helpers: uct_rma_fixture.h.
 */
#include "uct_rma_fixture.h"

#include <poll.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define GU_ROUNDS 90
#define GU_STALL_BYTES (64u << 20) /* the stalled GET */
#define GU_WAIT_MS 500		   /* DEREG_WAIT_MS of this test */
#define GU_PAUSE_MS 50		   /* the paused requester (below GU_WAIT_MS) */
#define GU_PAUSE_BYTES (2u << 20)  /* the paused GET: queued whole by reference */

typedef struct {
	char op;	/* M map, U release (mode), Z counters, Q quit */
	uint8_t mode;	/* U: 0 dereg first, 1 munmap first */
	uint32_t seed;
	uint64_t length;
} gu_cmd_t;

typedef struct {
	uint64_t a, b, c;
	uint8_t rkey[64];
} gu_reply_t;

/* The peer's buffer of the round, for its command handler. */
typedef struct {
	env_t *e;
	uint8_t *mem;
	size_t mem_len;
	uct_mem_h memh;
} gu_peer_t;

static int gu_peer_serve(const void *arg_cmd, void *arg_reply, void *arg)
{
	const gu_cmd_t *cmd = arg_cmd;
	gu_reply_t *reply = arg_reply;
	gu_peer_t *pr = arg;

	switch (cmd->op) {
	case 'M':
		pr->mem_len = cmd->length;
		pr->mem = mmap(NULL, pr->mem_len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (pr->mem == MAP_FAILED)
			exit(1);
		fx_rma_fill(pr->mem, pr->mem_len, cmd->seed);
		CHECK_OK(uct_md_mem_reg(pr->e->md, pr->mem, pr->mem_len,
					UCT_MD_MEM_ACCESS_ALL, &pr->memh),
			 "reg");
		CHECK_OK(uct_md_mkey_pack(pr->e->md, pr->memh, reply->rkey),
			 "pack");
		reply->a = (uintptr_t)pr->mem;
		break;
	case 'U':
		reply->a = uct_sctp_dpdk_getzc_held();
		if (cmd->mode == 0) {
			CHECK_OK(uct_md_mem_dereg(pr->e->md, pr->memh),
				 "dereg");
			reply->b = uct_sctp_dpdk_getzc_held();
			munmap(pr->mem, pr->mem_len);
		} else {
			munmap(pr->mem, pr->mem_len);
			reply->b = uct_sctp_dpdk_getzc_held();
			CHECK_OK(uct_md_mem_dereg(pr->e->md, pr->memh),
				 "dereg");
		}
		pr->mem = NULL;
		break;
	case 'T': {
		/* dereg while the requester is stalled */
		double t0 = fx_now_s();

		reply->a = uct_sctp_dpdk_getzc_held();
		CHECK_OK(uct_md_mem_dereg(pr->e->md, pr->memh), "dereg");
		reply->b = uct_sctp_dpdk_getzc_held();
		reply->c = (uint64_t)((fx_now_s() - t0) * 1000);
		munmap(pr->mem, pr->mem_len);
		pr->mem = NULL;
		break;
	}
	case 'Z': {
		uct_sctp_dpdk_ctx_t *ctx = uct_sctp_dpdk_ctx_peek();

		reply->a = ctx->rma_rep_zc_msgs;
		reply->b = ctx->rma_rep_zc_bytes;
		reply->c = ctx->rma_rep_copy_bytes;
		break;
	}
	case 'Q':
		return 1;
	}
	return 0;
}

static void gu_peer_main(int fd)
{
	double deadline = fx_now_s() + 4 * RMA_DEADLINE_S;
	gu_peer_t pr = { 0 };
	iface_t t;
	env_t e;

	fx_rma_peer_open(&e, &t);
	if (fx_write_addr(fd, &t) != 0)
		exit(1);
	pr.e = &e;
	fx_rma_serve(&e, fd, deadline, sizeof(gu_cmd_t), sizeof(gu_reply_t),
		     gu_peer_serve, &pr);
	exit(fx_failures ? 1 : 0);
}

static gu_reply_t gu_cmd(int fd, char op, uint8_t mode, uint32_t seed,
			 uint64_t length)
{
	gu_cmd_t c = {.op = op, .mode = mode, .seed = seed,
		      .length = length};
	gu_reply_t r;

	if (write(fd, &c, sizeof(c)) != sizeof(c) ||
	    read(fd, &r, sizeof(r)) != sizeof(r)) {
		fprintf(stderr, "FAIL: the peer is gone (command %c; a "
			"SIGSEGV there: memory read after it was released)\n",
			op);
		exit(1);
	}
	return r;
}

/* Has the peer map and register @len bytes (pattern @seed) and starts a
 * get_zcopy of them into @buf (@what names the caller in failures).
 * @return the peer's reply (its address in .a). */
static gu_reply_t gu_start_get(env_t *e, uct_ep_h ep, int fd, uint8_t *buf,
			       size_t len, uint32_t seed,
			       uct_rkey_bundle_t *rk, rma_comp_t *c,
			       const char *what)
{
	gu_reply_t rep = gu_cmd(fd, 'M', 0, seed, len);
	uct_iov_t iov = {.buffer = buf, .length = len, .count = 1,
			 .memh = UCT_MEM_HANDLE_NULL};
	double until = fx_now_s() + RMA_DEADLINE_S;
	ucs_status_t st;

	CHECK_OK(uct_rkey_unpack(e->comp, rep.rkey, rk), "unpack");
	fx_rma_comp_init(c);
	while ((st = uct_ep_get_zcopy(ep, &iov, 1, rep.a, rk->rkey,
				      &c->super)) == UCS_ERR_NO_RESOURCE &&
	       fx_now_s() < until)
		uct_worker_progress(e->worker);
	CHECK(st == UCS_INPROGRESS, "%s: get_zcopy: %s", what,
	      ucs_status_string(st));
	return rep;
}

/* A GET whose replies the target has queued by reference and whose
 * requester progresses again only after telling the target to release
 * the memory (mode 0: dereg first, 1: munmap first): the release must
 * find references and return with none left, without aborting, and the
 * GET completes intact. */
static void test_pause(env_t *e, uct_ep_h ep, int fd, uint8_t mode)
{
	gu_cmd_t cmd = {.op = 'U', .mode = mode};
	const char *call = mode ? "munmap" : "dereg";
	uint32_t seed = 7000 + mode;
	uint8_t *buf = malloc(GU_PAUSE_BYTES);
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	uct_rkey_bundle_t rk;
	gu_reply_t rep;
	rma_comp_t c;
	double until;
	int64_t bad;
	int got = 0;

	if (buf == NULL)
		return;
	memset(buf, 0, GU_PAUSE_BYTES);
	gu_start_get(e, ep, fd, buf, GU_PAUSE_BYTES, seed, &rk, &c, "pause");
	uct_worker_progress(e->worker); /* the request leaves */
	usleep(GU_PAUSE_MS * 1000);
	if (write(fd, &cmd, sizeof(cmd)) != sizeof(cmd)) {
		fprintf(stderr, "FAIL: the peer is gone (pause, %s)\n", call);
		exit(1);
	}
	until = fx_now_s() + RMA_DEADLINE_S;
	while ((!c.done || !got) && fx_now_s() < until) {
		uct_worker_progress(e->worker);
		if (!got && poll(&pfd, 1, 0) == 1) {
			if (read(fd, &rep, sizeof(rep)) != sizeof(rep)) {
				fprintf(stderr, "FAIL: the peer is gone (pause, "
					"%s: a SIGSEGV there: memory read after "
					"it was released)\n", call);
				exit(1);
			}
			got = 1;
		}
	}
	CHECK(got && c.done, "pause, %s: %s within %d s", call,
	      got ? "the GET did not complete" : "no reply from the peer",
	      RMA_DEADLINE_S);
	if (got && c.done) {
		printf("get-unmap: paused requester, %s first: %" PRIu64
		       " references at the call, %" PRIu64 " after\n", call,
		       rep.a, rep.b);
		CHECK(rep.a > 0, "pause, %s: no reference held after %u ms "
		      "without a SACK: the replies did not go by reference",
		      call, GU_PAUSE_MS);
		CHECK(rep.b == 0, "pause, %s: returned while %" PRIu64 " "
		      "zero-copy GET replies still referenced the memory",
		      call, rep.b);
		CHECK(c.super.status == UCS_OK, "pause, %s: GET completed with %s "
		      "(the release aborted it)", call,
		      ucs_status_string(c.super.status));
		bad = fx_rma_check(buf, GU_PAUSE_BYTES, seed);
		CHECK(bad < 0, "pause, %s: byte %" PRId64 " differs", call,
		      bad);
	}
	uct_rkey_release(e->comp, &rk);
	free(buf);
}

/* A GET whose target releases its memory while the requester withholds
 * every SACK for longer than DEREG_WAIT_MS: the release copies what the
 * association references instead of aborting it, so the GET and a GET on
 * @ep2 (the same association) afterwards complete intact. */
static void test_detach(env_t *e, uct_ep_h ep, uct_ep_h ep2, int fd)
{
	uint8_t *buf = malloc(GU_PAUSE_BYTES);
	uct_rkey_bundle_t rk;
	gu_reply_t rep;
	rma_comp_t c;
	double until;
	int64_t bad;

	if (buf == NULL)
		return;
	memset(buf, 0, GU_PAUSE_BYTES);
	gu_start_get(e, ep, fd, buf, GU_PAUSE_BYTES, 7100, &rk, &c, "detach");
	uct_worker_progress(e->worker); /* the request leaves */
	usleep(GU_PAUSE_MS * 1000);	/* the replies are queued */
	/* no SACK leaves this process for 1.5 DEREG_WAIT_MS: the peer's
	 * dereg ('T', then munmap) runs meanwhile */
	rep = gu_cmd(fd, 'T', 0, 0, 0);
	usleep(GU_WAIT_MS * 1500);
	until = fx_now_s() + RMA_DEADLINE_S;
	while (!c.done && fx_now_s() < until)
		uct_worker_progress(e->worker);
	printf("get-unmap: withheld SACK: %" PRIu64 " references at dereg, "
	       "%" PRIu64 " after, dereg took %" PRIu64 " ms; GET %s\n",
	       rep.a, rep.b, rep.c,
	       c.done ? ucs_status_string(c.super.status) : "not done");
	CHECK(rep.a > 0, "detach: no reference held at dereg: the replies did "
	      "not go by reference");
	CHECK(rep.b == 0, "detach: dereg returned with %" PRIu64 " references",
	      rep.b);
	CHECK(rep.c < GU_WAIT_MS, "detach: dereg took %" PRIu64 " ms: it "
	      "waited for the SACK (DEREG_WAIT_MS=%u)", rep.c, GU_WAIT_MS);
	CHECK(c.done && c.super.status == UCS_OK, "detach: the GET %s%s "
	      "(the release aborted the association)",
	      c.done ? "completed with " : "did not complete",
	      c.done ? ucs_status_string(c.super.status) : "");
	if (c.done && c.super.status == UCS_OK) {
		bad = fx_rma_check(buf, GU_PAUSE_BYTES, 7100);
		CHECK(bad < 0, "detach: byte %" PRId64 " differs", bad);
	}
	uct_rkey_release(e->comp, &rk);
	if (fx_failures != 0) {
		free(buf);
		return;
	}
	/* the association carries on: a GET on the second ep */
	memset(buf, 0, 1u << 20);
	gu_start_get(e, ep2, fd, buf, 1u << 20, 7101, &rk, &c, "detach, ep2");
	until = fx_now_s() + RMA_DEADLINE_S;
	while (!c.done && fx_now_s() < until)
		uct_worker_progress(e->worker);
	CHECK(c.done && c.super.status == UCS_OK, "detach: the second ep's "
	      "GET %s%s", c.done ? "completed with " : "did not complete",
	      c.done ? ucs_status_string(c.super.status) : "");
	if (c.done && c.super.status == UCS_OK) {
		bad = fx_rma_check(buf, 1u << 20, 7101);
		CHECK(bad < 0, "detach: second ep: byte %" PRId64 " differs",
		      bad);
	}
	rep = gu_cmd(fd, 'U', 0, 0, 0);
	CHECK(rep.b == 0, "detach: second ep: dereg returned with %" PRIu64
	      " references", rep.b);
	uct_rkey_release(e->comp, &rk);
	free(buf);
}

/* A GET the requester stops progressing in the middle of: the peer's
 * dereg copies what the association references and returns without
 * waiting for the SACK. */
static void test_stall(env_t *e, uct_ep_h ep, int fd)
{
	uct_rkey_bundle_t rk;
	uint8_t *big = malloc(GU_STALL_BYTES);
	rma_comp_t c;
	gu_reply_t rep;
	double until;

	if (big == NULL)
		return;
	gu_start_get(e, ep, fd, big, GU_STALL_BYTES, 4242, &rk, &c, "stall");
	/* let the replies start, then stop: no SACK leaves this process */
	until = fx_now_s() + 0.005;
	while (fx_now_s() < until && !c.done)
		uct_worker_progress(e->worker);
	CHECK(!c.done, "stall: the 64 MiB GET completed within 5 ms");
	rep = gu_cmd(fd, 'T', 0, 0, 0);
	printf("get-unmap: stalled requester: %" PRIu64 " references at "
	       "dereg, %" PRIu64 " after, dereg took %" PRIu64 " ms\n", rep.a,
	       rep.b, rep.c);
	CHECK(rep.a > 0, "stall: no reference held at dereg");
	CHECK(rep.b == 0, "stall: dereg returned with %" PRIu64 " references",
	      rep.b);
	CHECK(rep.c < GU_WAIT_MS, "stall: dereg took %" PRIu64 " ms: it "
	      "waited for the SACK (DEREG_WAIT_MS=%u)", rep.c, GU_WAIT_MS);
	/* the replies not yet served fail (the key is gone); the ep's
	 * destroy completes the GET whatever is still outstanding */
	uct_ep_destroy(ep);
	CHECK(c.done, "stall: the GET did not complete at ep destroy");
	uct_rkey_release(e->comp, &rk);
	free(big);
}

static int test_get_unmap(void)
{
	static const size_t sizes[] = { 256u << 10, 1u << 20, 2u << 20 };
	uint8_t dev[64], ifa[64], *buf;
	unsigned r, caught[2] = { 0, 0 };
	uint64_t total = 0;
	uct_rkey_bundle_t rk;
	ucs_status_t st;
	gu_reply_t rep;
	int64_t bad;
	uct_ep_h ep, ep2;
	iface_t t;
	env_t e;
	int fd;

	/* both sides lose 2% of their packets: SACKs too */
	setenv("UCX_SCTP_DPDK_DP", "drop=tx:every:50", 1);
	setenv("UCX_SCTP_DPDK_TX_ZCOPY_MIN", "16k", 1);
	setenv("UCX_SCTP_DPDK_DEREG_WAIT_MS", UCS_PP_MAKE_STRING(GU_WAIT_MS),
	       1);
	fd = fx_fork_peer(gu_peer_main);
	if (fd < 0)
		return 1;
	fx_rma_fd = fd;
	fx_memif_env(0, "10.77.7.2/24", "r1");
	fx_env_open(&e);
	fx_rma_env = &e;
	fx_iface_open(&e, &t, 0);
	if (fx_read_addr(fd, dev, ifa) != 0) {
		fprintf(stderr, "FAIL: peer did not start\n");
		return 1;
	}
	buf = malloc(2u << 20);
	if (buf == NULL)
		return 1;
	ep = fx_ep_to(&t, dev, ifa);
	ep2 = fx_ep_to(&t, dev, ifa); /* same peer: same association */
	for (r = 0; r < GU_ROUNDS && fx_failures == 0; r++) {
		size_t len = sizes[r % 3];
		uint32_t seed = 900 + r;
		uint8_t mode = (r / 3) % 2;

		rep = gu_cmd(fd, 'M', 0, seed, len);
		CHECK_OK(uct_rkey_unpack(e.comp, rep.rkey, &rk), "unpack");
		memset(buf, 0, len);
		st = fx_rma_op(ep, RMA_GET_ZCOPY, buf, len, rep.a, rk.rkey);
		CHECK(st == UCS_OK, "round %u: get_zcopy %zu B: %s", r, len,
		      ucs_status_string(st));
		bad = fx_rma_check(buf, len, seed);
		CHECK(bad < 0, "round %u: byte %" PRId64 " of %zu differs", r,
		      bad, len);
		/* the requester has the data: release at once */
		rep = gu_cmd(fd, 'U', mode, 0, 0);
		CHECK(rep.b == 0, "round %u: %s returned while %" PRIu64
		      " zero-copy GET replies still referenced the memory "
		      "(%" PRIu64 " before)", r, mode ? "munmap" : "dereg",
		      rep.b, rep.a);
		if (rep.a != 0)
			caught[mode]++;
		uct_rkey_release(e.comp, &rk);
		total += len;
	}
	rep = gu_cmd(fd, 'Z', 0, 0, 0);
	printf("get-unmap: %u rounds, %" PRIu64 " bytes: references held at "
	       "release in %u dereg / %u unmap rounds; replies by reference "
	       "%" PRIu64 " msgs %" PRIu64 " bytes, copied %" PRIu64
	       " bytes\n", r, total, caught[0], caught[1], rep.a, rep.b,
	       rep.c);
	CHECK(rep.b >= total, "only %" PRIu64 " of %" PRIu64 " GET reply "
	      "bytes went by reference", rep.b, total);
	if (fx_failures == 0)
		test_pause(&e, ep, fd, 0);
	if (fx_failures == 0)
		test_pause(&e, ep, fd, 1);
	if (fx_failures == 0)
		test_detach(&e, ep, ep2, fd);
	uct_ep_destroy(ep2);
	if (fx_failures == 0)
		test_stall(&e, ep, fd); /* destroys ep */
	else
		uct_ep_destroy(ep);
	uct_iface_close(t.iface);
	if (fx_failures == 0) {
		gu_cmd(fd, 'Q', 0, 0, 0);
		waitpid(fx_peer_pid, NULL, 0);
		fx_peer_pid = 0;
	}
	fx_env_close(&e);
	free(buf);
	return fx_failures ? 1 : 0;
}

int main(void)
{
	return fx_run(test_get_unmap);
}
