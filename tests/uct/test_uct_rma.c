/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_uct_rma.c - put/get against a peer process over memif (meson
 * test uct-rma).
 *
 *   rma     put_short/bcopy/zcopy and get_bcopy/zcopy of 1 B..16 MiB to a
 *           forked peer process over a memif pair, every byte checked by
 *           the process that owns the memory; then accesses the peer must
 *           refuse (wrong key, before/after/across its registration, a
 *           deregistered key): each fails with UCS_ERR_INVALID_ADDR where
 *           it has a completion, the peer's memory (and its guard bytes)
 *           is unchanged and its refusal counter counts every one.
 *
 * Fixture (UCT context, forked memif peer, cleanup): uct_fixture.h.
 */
#include "uct_fixture.h"

#include <fcntl.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define RMA_BIG (16u << 20)   /* region A, bytes */
#define RMA_GUARD 4096	      /* guard bytes around region A */
#define RMA_SMALL 65536	      /* region B (deregistered on request) */
#define RMA_DEADLINE_S 120

/* What the peer hands over: the two regions and their packed rkeys. */
typedef struct {
	uint64_t a_addr, b_addr;
	uint8_t a_rkey[64], b_rkey[64];
} rma_info_t;

/* Control commands from the test to the peer (socketpair). */
typedef struct {
	char op;	 /* F fill, V verify, R refused count, D dereg B, Q quit */
	uint8_t region;	 /* 0: A, 1: B */
	uint32_t seed;
	uint64_t offset, length;
} rma_cmd_t;

static uint8_t rma_byte(uint32_t seed, uint64_t i)
{
	uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ull ^ seed;

	return (uint8_t)(x ^ (x >> 29) ^ (x >> 47));
}

static void rma_fill(uint8_t *p, uint64_t len, uint32_t seed)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		p[i] = rma_byte(seed, i);
}

/* Index of the first wrong byte, or -1. */
static int64_t rma_check(const uint8_t *p, uint64_t len, uint32_t seed)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		if (p[i] != rma_byte(seed, i))
			return (int64_t)i;
	return -1;
}

static void rma_peer_main(int fd)
{
	uint8_t *a_mem, *b_mem, *guard_lo, *guard_hi;
	uct_mem_h a_memh, b_memh;
	uct_md_attr_t md_attr;
	rma_info_t info;
	rma_cmd_t cmd;
	iface_t t;
	env_t e;
	double deadline = fx_now_s() + 4 * RMA_DEADLINE_S;
	uint64_t reply;
	ssize_t n;

	fx_memif_env(1, "10.77.7.1/24", "r0");
	fx_env_open(&e);
	fx_iface_open(&e, &t, 0);
	CHECK_OK(uct_md_query(e.md, &md_attr), "md query");
	if (!(md_attr.cap.flags & UCT_MD_FLAG_REG) ||
	    !(md_attr.cap.flags & UCT_MD_FLAG_NEED_RKEY) ||
	    md_attr.rkey_packed_size > sizeof(info.a_rkey)) {
		fprintf(stderr, "FAIL: md flags 0x%" PRIx64 " rkey %zu\n",
			md_attr.cap.flags, md_attr.rkey_packed_size);
		exit(1);
	}
	guard_lo = malloc(RMA_BIG + 2 * RMA_GUARD);
	b_mem = malloc(RMA_SMALL);
	if (guard_lo == NULL || b_mem == NULL)
		exit(1);
	a_mem = guard_lo + RMA_GUARD;
	guard_hi = a_mem + RMA_BIG;
	memset(guard_lo, 0xa5, RMA_GUARD);
	memset(guard_hi, 0x5a, RMA_GUARD);
	rma_fill(b_mem, RMA_SMALL, 77);
	CHECK_OK(uct_md_mem_reg(e.md, a_mem, RMA_BIG, UCT_MD_MEM_ACCESS_ALL,
				&a_memh), "reg A");
	CHECK_OK(uct_md_mem_reg(e.md, b_mem, RMA_SMALL, UCT_MD_MEM_ACCESS_ALL,
				&b_memh), "reg B");
	memset(&info, 0, sizeof(info));
	info.a_addr = (uintptr_t)a_mem;
	info.b_addr = (uintptr_t)b_mem;
	CHECK_OK(uct_md_mkey_pack(e.md, a_memh, info.a_rkey), "pack A");
	CHECK_OK(uct_md_mkey_pack(e.md, b_memh, info.b_rkey), "pack B");
	if (fx_write_addr(fd, &t) != 0 ||
	    write(fd, &info, sizeof(info)) != sizeof(info))
		exit(1);
	fcntl(fd, F_SETFL, O_NONBLOCK);
	while (fx_now_s() < deadline) {
		uct_worker_progress(e.worker);
		n = read(fd, &cmd, sizeof(cmd));
		if (n == 0)
			break; /* the test went */
		if (n != (ssize_t)sizeof(cmd))
			continue;
		reply = 0;
		switch (cmd.op) {
		case 'F':
			rma_fill((cmd.region ? b_mem : a_mem) + cmd.offset,
				 cmd.length, cmd.seed);
			break;
		case 'V':
			/* 1 + first bad index, 0 all good; guards too. */
			reply = (uint64_t)(rma_check((cmd.region ? b_mem :
							 a_mem) + cmd.offset,
						     cmd.length, cmd.seed) + 1);
			for (n = 0; n < RMA_GUARD && reply == 0; n++)
				if (guard_lo[n] != 0xa5 || guard_hi[n] != 0x5a)
					reply = UINT64_MAX;
			break;
		case 'R':
			reply = uct_sctp_dpdk_ctx_peek()->rma_refused;
			break;
		case 'D':
			CHECK_OK(uct_md_mem_dereg(e.md, b_memh), "dereg B");
			break;
		case 'Q':
			CHECK_OK(uct_md_mem_dereg(e.md, a_memh), "dereg A");
			break;
		}
		if (write(fd, &reply, sizeof(reply)) != sizeof(reply))
			exit(1);
		if (cmd.op == 'Q')
			break;
	}
	exit(0);
}

static int rma_fd;
static env_t *rma_env;

/* One control command; the peer progresses while serving it. */
static uint64_t rma_cmd(char op, uint8_t region, uint32_t seed,
			uint64_t offset, uint64_t length)
{
	rma_cmd_t c = {.op = op, .region = region, .seed = seed,
		       .offset = offset, .length = length};
	uint64_t reply = UINT64_MAX;

	if (write(rma_fd, &c, sizeof(c)) != sizeof(c) ||
	    read(rma_fd, &reply, sizeof(reply)) != sizeof(reply)) {
		int wst = 0;

		fprintf(stderr, "FAIL: peer control channel (command %c): "
			"%m\n", op);
		if (fx_peer_pid > 0 && waitpid(fx_peer_pid, &wst, 0) == fx_peer_pid) {
			fprintf(stderr, "peer: %s %d\n",
				WIFSIGNALED(wst) ? "killed by signal" :
						   "exit",
				WIFSIGNALED(wst) ? WTERMSIG(wst) :
						   WEXITSTATUS(wst));
			fx_peer_pid = 0;
		}
		exit(1);
	}
	return reply;
}

typedef struct {
	uct_completion_t super;
	int done;
} rma_comp_t;

static void rma_comp_cb(uct_completion_t *self)
{
	ucs_container_of(self, rma_comp_t, super)->done = 1;
}

static void rma_comp_init(rma_comp_t *c)
{
	c->super.func = rma_comp_cb;
	c->super.count = 1;
	c->super.status = UCS_OK;
	c->done = 0;
}

/* Wait for @c after an op returned @st.  @return the op's status. */
static ucs_status_t rma_wait(rma_comp_t *c, ucs_status_t st)
{
	double deadline = fx_now_s() + RMA_DEADLINE_S;

	if (st != UCS_INPROGRESS)
		return st;
	while (!c->done && fx_now_s() < deadline)
		uct_worker_progress(rma_env->worker);
	if (!c->done)
		return UCS_ERR_TIMED_OUT;
	return c->super.status;
}

static void rma_flush(uct_ep_h ep)
{
	double deadline = fx_now_s() + RMA_DEADLINE_S;
	ucs_status_t st;
	rma_comp_t c;

	for (;;) {
		rma_comp_init(&c);
		st = uct_ep_flush(ep, 0, &c.super);
		if (st == UCS_OK)
			return;
		if (st == UCS_INPROGRESS) {
			st = rma_wait(&c, st);
			CHECK(st == UCS_OK, "flush: %s", ucs_status_string(st));
			return;
		}
		if (st != UCS_ERR_NO_RESOURCE || fx_now_s() > deadline) {
			CHECK(0, "flush: %s", ucs_status_string(st));
			return;
		}
		uct_worker_progress(rma_env->worker);
	}
}

typedef struct {
	const uint8_t *src;
	uint8_t *dst;
	size_t len;
} rma_pack_t;

static size_t rma_pack_cb(void *dest, void *arg)
{
	rma_pack_t *p = arg;

	memcpy(dest, p->src, p->len);
	return p->len;
}

static void rma_unpack_cb(void *arg, const void *data, size_t length)
{
	rma_pack_t *p = arg;

	CHECK(length == p->len, "get_bcopy unpacked %zu of %zu bytes",
	      length, p->len);
	memcpy(p->dst, data, ucs_min(length, p->len));
}

enum { RMA_PUT_SHORT, RMA_PUT_BCOPY, RMA_PUT_ZCOPY, RMA_GET_BCOPY,
       RMA_GET_ZCOPY };
static const char *rma_names[] = {"put_short", "put_bcopy", "put_zcopy",
				  "get_bcopy", "get_zcopy"};

/* Issue one op, retrying on back-pressure; wait for its completion. */
static ucs_status_t rma_op(uct_ep_h ep, int kind, uint8_t *local,
			   size_t len, uint64_t raddr, uct_rkey_t rkey)
{
	double deadline = fx_now_s() + RMA_DEADLINE_S;
	rma_pack_t pa = {.src = local, .dst = local, .len = len};
	uct_iov_t iov[2];
	ucs_status_t st;
	rma_comp_t c;
	ssize_t r;

	/* Two iov entries for zcopy, to cover the split. */
	iov[0].buffer = local;
	iov[0].length = len / 3;
	iov[1].buffer = local + len / 3;
	iov[1].length = len - len / 3;
	iov[0].count = iov[1].count = 1;
	iov[0].stride = iov[1].stride = 0;
	iov[0].memh = iov[1].memh = UCT_MEM_HANDLE_NULL;
	for (;;) {
		rma_comp_init(&c);
		switch (kind) {
		case RMA_PUT_SHORT:
			st = uct_ep_put_short(ep, local, (unsigned)len, raddr,
					      rkey);
			break;
		case RMA_PUT_BCOPY:
			r = uct_ep_put_bcopy(ep, rma_pack_cb, &pa, raddr, rkey);
			st = r >= 0 ? (r == (ssize_t)len ? UCS_OK :
				       UCS_ERR_IO_ERROR) : (ucs_status_t)r;
			break;
		case RMA_PUT_ZCOPY:
			st = uct_ep_put_zcopy(ep, iov, 2, raddr, rkey,
					      &c.super);
			break;
		case RMA_GET_BCOPY:
			st = uct_ep_get_bcopy(ep, rma_unpack_cb, &pa, len,
					      raddr, rkey, &c.super);
			break;
		default:
			st = uct_ep_get_zcopy(ep, iov, 2, raddr, rkey,
					      &c.super);
			break;
		}
		if (st != UCS_ERR_NO_RESOURCE)
			break;
		if (fx_now_s() > deadline)
			return UCS_ERR_TIMED_OUT;
		uct_worker_progress(rma_env->worker);
	}
	return rma_wait(&c, st);
}

static uct_ep_h rma_pending_ep;
static int rma_pending_done;

static ucs_status_t rma_pending_cb(uct_pending_req_t *self)
{
	uint64_t hdr = 0;
	ucs_status_t st;

	st = uct_ep_am_short(rma_pending_ep, AM_ID, hdr, &hdr, 8);
	if (st == UCS_OK)
		rma_pending_done = 1;
	return st;
}

static int test_rma(void)
{
	static const size_t sizes[] = {1, 7, 100, 1992, 4096, 65000, 65480,
				       65536 + 13, 300000, 1u << 20, RMA_BIG};
	uint8_t dev[64], ifa[64];
	uct_rkey_bundle_t a_rk, b_rk, bad_rk;
	uct_sctp_dpdk_rkey_t crafted;
	uct_iface_attr_t attr;
	rma_info_t info;
	uint64_t refused0, refused, want_refused = 0, bad;
	uint8_t *local;
	uint32_t seed = 1000;
	int fd, kind, ops = 0;
	ucs_status_t st;
	uct_ep_h ep;
	iface_t t;
	env_t e;
	size_t i, len, max_kind_len[5];

	fd = fx_fork_peer(rma_peer_main);
	if (fd < 0)
		return 1;
	rma_fd = fd;

	fx_memif_env(0, "10.77.7.2/24", "r1");
	fx_env_open(&e);
	rma_env = &e;
	fx_iface_open(&e, &t, 0);
	if (fx_read_addr(rma_fd, dev, ifa) != 0 ||
	    read(rma_fd, &info, sizeof(info)) != sizeof(info)) {
		fprintf(stderr, "FAIL: peer did not start\n");
		return 1;
	}
	CHECK_OK(uct_iface_query(t.iface, &attr), "query");
	CHECK((attr.cap.flags & (UCT_IFACE_FLAG_PUT_SHORT |
				 UCT_IFACE_FLAG_PUT_BCOPY |
				 UCT_IFACE_FLAG_PUT_ZCOPY |
				 UCT_IFACE_FLAG_GET_BCOPY |
				 UCT_IFACE_FLAG_GET_ZCOPY)) ==
		      (UCT_IFACE_FLAG_PUT_SHORT | UCT_IFACE_FLAG_PUT_BCOPY |
		       UCT_IFACE_FLAG_PUT_ZCOPY | UCT_IFACE_FLAG_GET_BCOPY |
		       UCT_IFACE_FLAG_GET_ZCOPY),
	      "put/get caps missing: 0x%" PRIx64, attr.cap.flags);
	CHECK(attr.cap.put.max_zcopy >= RMA_BIG &&
	      attr.cap.get.max_zcopy >= RMA_BIG,
	      "zcopy limits %zu/%zu below 16 MiB", attr.cap.put.max_zcopy,
	      attr.cap.get.max_zcopy);
	max_kind_len[RMA_PUT_SHORT] = attr.cap.put.max_short;
	max_kind_len[RMA_PUT_BCOPY] = attr.cap.put.max_bcopy;
	max_kind_len[RMA_PUT_ZCOPY] = attr.cap.put.max_zcopy;
	max_kind_len[RMA_GET_BCOPY] = attr.cap.get.max_bcopy;
	max_kind_len[RMA_GET_ZCOPY] = attr.cap.get.max_zcopy;
	CHECK_OK(uct_rkey_unpack(e.comp, info.a_rkey, &a_rk), "unpack A");
	CHECK_OK(uct_rkey_unpack(e.comp, info.b_rkey, &b_rk), "unpack B");
	ep = fx_ep_to(&t, dev, ifa);
	/* The association is still starting: an AM goes pending, and an
	 * iface flush now must say "in progress", not fail (UCP's worker
	 * flush, used by Open MPI's osc ucx fence, aborts on any error). */
	{
		uct_pending_req_t req = {.func = rma_pending_cb};
		double deadline = fx_now_s() + RMA_DEADLINE_S;
		uint64_t hdr = 0;

		rma_pending_ep = ep;
		st = uct_ep_am_short(ep, AM_ID, hdr, &hdr, 8);
		CHECK(st == UCS_ERR_NO_RESOURCE, "AM before the association "
		      "is up: %s", ucs_status_string(st));
		if (st == UCS_ERR_NO_RESOURCE) {
			CHECK_OK(uct_ep_pending_add(ep, &req, 0),
				 "pending add");
			st = uct_iface_flush(t.iface, 0, NULL);
			CHECK(st == UCS_INPROGRESS, "iface flush with a "
			      "pending AM: %s, expected in progress",
			      ucs_status_string(st));
			while (!rma_pending_done && fx_now_s() < deadline)
				uct_worker_progress(e.worker);
			CHECK(rma_pending_done, "pending AM never sent");
			while (uct_iface_flush(t.iface, 0, NULL) != UCS_OK &&
			       fx_now_s() < deadline)
				uct_worker_progress(e.worker);
		}
	}
	local = malloc(RMA_BIG);
	if (local == NULL)
		return 1;

	/* Every size each method supports; the offset in the region moves
	 * so that the ops do not all start aligned. */
	for (kind = 0; kind < 5; kind++) {
		for (i = 0; i < SDP_ARRAY_SIZE(sizes); i++) {
			uint64_t off;
			int64_t badi;

			len = sizes[i];
			if (len > max_kind_len[kind])
				continue;
			off = len == RMA_BIG ? 0 : (i * 4099) % (RMA_BIG - len);
			seed++;
			if (kind <= RMA_PUT_ZCOPY) {
				rma_fill(local, len, seed);
				st = rma_op(ep, kind, local, len,
					    info.a_addr + off, a_rk.rkey);
				CHECK(st == UCS_OK, "%s %zu: %s",
				      rma_names[kind], len,
				      ucs_status_string(st));
				rma_flush(ep);
				bad = rma_cmd('V', 0, seed, off, len);
				CHECK(bad == 0, "%s %zu B: peer memory wrong "
				      "at byte %" PRId64, rma_names[kind], len,
				      (int64_t)bad - 1);
			} else {
				rma_cmd('F', 0, seed, off, len);
				memset(local, 0, len);
				st = rma_op(ep, kind, local, len,
					    info.a_addr + off, a_rk.rkey);
				CHECK(st == UCS_OK, "%s %zu: %s",
				      rma_names[kind], len,
				      ucs_status_string(st));
				badi = rma_check(local, len, seed);
				CHECK(badi < 0, "%s %zu B: local memory wrong "
				      "at byte %" PRId64, rma_names[kind], len,
				      badi);
			}
			ops++;
			if (fx_failures)
				goto out;
		}
	}
	printf("rma: %d put/get ops of 1 B..16 MiB verified byte by byte\n",
	       ops);

	/* Order: a GET, then (fence) a PUT into the range it reads.  The GET
	 * must not see the PUT, even though its 8 MiB reply exceeds the
	 * target's send buffer and waits (MPI_Get_accumulate(REPLACE) in
	 * Open MPI's osc ucx is a get then a put). */
	{
		size_t glen = 8u << 20;
		uint8_t newer[64];
		uct_iov_t giov = {.buffer = local, .length = glen, .count = 1};
		rma_comp_t gc;
		int64_t badi;

		seed++;
		rma_cmd('F', 0, seed, 0, glen);
		memset(local, 0, glen);
		memset(newer, 0xee, sizeof(newer));
		rma_comp_init(&gc);
		do {
			st = uct_ep_get_zcopy(ep, &giov, 1, info.a_addr,
					      a_rk.rkey, &gc.super);
			if (st == UCS_ERR_NO_RESOURCE)
				uct_worker_progress(e.worker);
		} while (st == UCS_ERR_NO_RESOURCE);
		CHECK(st == UCS_INPROGRESS, "get 8 MiB: %s",
		      ucs_status_string(st));
		CHECK_OK(uct_ep_fence(ep, 0), "fence");
		st = rma_op(ep, RMA_PUT_SHORT, newer, sizeof(newer),
			    info.a_addr + glen - sizeof(newer), a_rk.rkey);
		CHECK(st == UCS_OK, "put after get: %s", ucs_status_string(st));
		st = rma_wait(&gc, st == UCS_OK ? UCS_INPROGRESS : st);
		CHECK(st == UCS_OK, "get 8 MiB completion: %s",
		      ucs_status_string(st));
		badi = rma_check(local, glen, seed);
		CHECK(badi < 0, "get overtaken by a later put: byte %" PRId64
		      " of 8 MiB is new data", badi);
		rma_flush(ep);
		printf("rma: get 8 MiB then put into its range: the get saw "
		       "the old data: %s\n", fx_failures ? "FAIL" : "ok");
		if (fx_failures)
			goto out;
	}

	/* Accesses the peer must refuse.  Region A holds a known pattern
	 * throughout; every one of them must leave it as it is. */
	refused0 = rma_cmd('R', 0, 0, 0, 0);
	seed = 4242;
	rma_cmd('F', 0, seed, 0, RMA_BIG);
	rma_fill(local, 4096, 99);
	{
		struct {
			const char *what;
			int kind;
			int bad_key;	/* use a crafted rkey */
			uint64_t addr;
			size_t len;
		} cases[] = {
			{"wrong key", RMA_PUT_ZCOPY, 1, info.a_addr, 4096},
			{"wrong key", RMA_PUT_SHORT, 1, info.a_addr, 64},
			{"wrong key", RMA_PUT_BCOPY, 1, info.a_addr, 4096},
			{"wrong key", RMA_GET_ZCOPY, 1, info.a_addr, 4096},
			{"before region", RMA_PUT_ZCOPY, 0, info.a_addr - 64,
			 64},
			{"across start", RMA_PUT_ZCOPY, 0, info.a_addr - 8,
			 64},
			{"across end", RMA_PUT_ZCOPY, 0,
			 info.a_addr + RMA_BIG - 100, 4096},
			{"after region", RMA_PUT_SHORT, 0,
			 info.a_addr + RMA_BIG, 16},
			{"length wraps", RMA_PUT_ZCOPY, 0, UINT64_MAX - 63, 64},
			{"across end", RMA_GET_BCOPY, 0,
			 info.a_addr + RMA_BIG - 10, 64},
			{"after region", RMA_GET_ZCOPY, 0,
			 info.a_addr + RMA_BIG + 4096, 64},
		};

		/* A crafted rkey: A's address and length, a key one off. */
		memcpy(&crafted, info.a_rkey, sizeof(crafted));
		crafted.key = rte_cpu_to_be_64(rte_be_to_cpu_64(crafted.key) ^
					       1);
		CHECK_OK(uct_rkey_unpack(e.comp, &crafted, &bad_rk),
			 "unpack crafted");
		for (i = 0; i < SDP_ARRAY_SIZE(cases); i++) {
			kind = cases[i].kind;
			st = rma_op(ep, kind, local, cases[i].len,
				    cases[i].addr,
				    cases[i].bad_key ? bad_rk.rkey :
						       a_rk.rkey);
			/* put_short/bcopy complete locally; the refusal is
			 * counted at the target. */
			if (kind == RMA_PUT_SHORT || kind == RMA_PUT_BCOPY)
				CHECK(st == UCS_OK, "%s %s: %s",
				      cases[i].what, rma_names[kind],
				      ucs_status_string(st));
			else
				CHECK(st == UCS_ERR_INVALID_ADDR,
				      "%s %s: %s, expected refusal",
				      cases[i].what, rma_names[kind],
				      ucs_status_string(st));
			rma_flush(ep);
			want_refused++;
		}
		uct_rkey_release(e.comp, &bad_rk);
	}
	/* A deregistered region: its key must not work any more. */
	rma_cmd('D', 1, 0, 0, 0);
	st = rma_op(ep, RMA_PUT_ZCOPY, local, 4096, info.b_addr, b_rk.rkey);
	CHECK(st == UCS_ERR_INVALID_ADDR, "put to deregistered region: %s",
	      ucs_status_string(st));
	st = rma_op(ep, RMA_GET_ZCOPY, local, 4096, info.b_addr, b_rk.rkey);
	CHECK(st == UCS_ERR_INVALID_ADDR, "get from deregistered region: %s",
	      ucs_status_string(st));
	want_refused += 2;
	rma_flush(ep);
	bad = rma_cmd('V', 0, seed, 0, RMA_BIG);
	CHECK(bad == 0, "refused accesses changed region A or its guards "
	      "(first bad byte %" PRId64 ")", (int64_t)bad - 1);
	bad = rma_cmd('V', 1, 77, 0, RMA_SMALL);
	CHECK(bad == 0, "put to the deregistered region B wrote byte %"
	      PRId64, (int64_t)bad - 1);
	refused = rma_cmd('R', 0, 0, 0, 0) - refused0;
	CHECK(refused == want_refused, "peer counted %" PRIu64 " refusals, "
	      "expected %" PRIu64, refused, want_refused);
	printf("rma: %" PRIu64 " bad accesses refused (wrong key, out of "
	       "range, deregistered), peer memory untouched: %s\n", refused,
	       fx_failures ? "FAIL" : "ok");
	/* The association still works after the refusals. */
	rma_fill(local, 4096, 5);
	st = rma_op(ep, RMA_PUT_ZCOPY, local, 4096, info.a_addr, a_rk.rkey);
	rma_flush(ep);
	CHECK(st == UCS_OK && rma_cmd('V', 0, 5, 0, 4096) == 0,
	      "put after refusals: %s", ucs_status_string(st));
out:
	uct_rkey_release(e.comp, &a_rk);
	uct_rkey_release(e.comp, &b_rk);
	uct_ep_destroy(ep);
	uct_iface_close(t.iface);
	free(local);
	if (fx_failures == 0) {
		rma_cmd('Q', 0, 0, 0, 0);
		waitpid(fx_peer_pid, NULL, 0);
		fx_peer_pid = 0;
	}
	fx_env_close(&e);
	printf("rma: %s\n", fx_failures ? "FAIL" : "ok");
	return fx_failures ? 1 : 0;
}

int main(void)
{
	return fx_run(test_rma);
}
