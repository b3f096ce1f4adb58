/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * uct_rma_fixture.c - the RMA peer and the initiator's helpers of the UCT
 * RMA tests.  See uct_rma_fixture.h.
 */
#include "uct_rma_fixture.h"

#include <fcntl.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

uint8_t fx_rma_byte(uint32_t seed, uint64_t i)
{
	uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ull ^ seed;

	return (uint8_t)(x ^ (x >> 29) ^ (x >> 47));
}

void fx_rma_fill(uint8_t *p, uint64_t len, uint32_t seed)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		p[i] = fx_rma_byte(seed, i);
}

/* Index of the first wrong byte, or -1. */
int64_t fx_rma_check(const uint8_t *p, uint64_t len, uint32_t seed)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		if (p[i] != fx_rma_byte(seed, i))
			return (int64_t)i;
	return -1;
}

/* The ordering probe: an AM (FX_RMA_PROBE_AM_ID) names a range of region A
 * and the pattern a PUT sent before it on the same ep wrote there; the
 * handler counts the probes that ran before that data was in memory. */
static uint8_t *fx_rma_probe_mem;
static uint64_t fx_rma_probes, fx_rma_probes_early;

static ucs_status_t fx_rma_probe_cb(void *arg, void *data, size_t length,
				    unsigned flags)
{
	fx_rma_probe_t p;

	if (length < sizeof(p))
		return UCS_OK;
	memcpy(&p, data, sizeof(p));
	fx_rma_probes++;
	if (p.offset > RMA_BIG || p.length > RMA_BIG - p.offset ||
	    fx_rma_check(fx_rma_probe_mem + p.offset, p.length, p.seed) >= 0)
		fx_rma_probes_early++;
	return UCS_OK;
}

/* The peer's side of the test's control channel.  See the header. */
void fx_rma_peer_open(env_t *e, iface_t *t)
{
	fx_memif_env(1, "10.77.7.1/24", "r0");
	fx_env_open(e);
	fx_iface_open(e, t, 0);
}

void fx_rma_serve(env_t *e, int fd, double deadline, size_t cmd_len,
		  size_t reply_len, fx_rma_serve_fn serve, void *arg)
{
	uint64_t cmd[8], reply[16]; /* aligned; sizes checked below */
	ssize_t n;

	if (cmd_len > sizeof(cmd) || reply_len > sizeof(reply)) {
		fprintf(stderr, "FAIL: command %zu / reply %zu bytes: larger "
			"than fx_rma_serve's %zu / %zu: enlarge them\n",
			cmd_len, reply_len, sizeof(cmd), sizeof(reply));
		exit(1);
	}
	fcntl(fd, F_SETFL, O_NONBLOCK);
	while (fx_now_s() < deadline) {
		uct_worker_progress(e->worker);
		n = read(fd, cmd, cmd_len);
		if (n == 0)
			break; /* the test went */
		if (n != (ssize_t)cmd_len)
			continue;
		memset(reply, 0, reply_len);
		if (serve(cmd, reply, arg) != 0) {
			if (write(fd, reply, reply_len) != (ssize_t)reply_len)
				exit(1);
			break;
		}
		if (write(fd, reply, reply_len) != (ssize_t)reply_len)
			exit(1);
	}
}

/* The RMA peer's state, for its command handler. */
typedef struct {
	env_t *e;
	uint8_t *a_mem, *b_mem, *guard_lo, *guard_hi;
	uct_mem_h a_memh, b_memh;
} rma_peer_t;

static int fx_rma_peer_serve(const void *arg_cmd, void *arg_reply, void *arg)
{
	const rma_cmd_t *cmd = arg_cmd;
	uint64_t *reply = arg_reply;
	rma_peer_t *pr = arg;
	int i;

	switch (cmd->op) {
	case 'F':
		fx_rma_fill((cmd->region ? pr->b_mem : pr->a_mem) + cmd->offset,
			    cmd->length, cmd->seed);
		break;
	case 'V':
		/* 1 + first bad index, 0 all good; guards too. */
		*reply = (uint64_t)(fx_rma_check((cmd->region ? pr->b_mem :
						  pr->a_mem) + cmd->offset,
					     cmd->length, cmd->seed) + 1);
		for (i = 0; i < RMA_GUARD && *reply == 0; i++)
			if (pr->guard_lo[i] != 0xa5 || pr->guard_hi[i] != 0x5a)
				*reply = UINT64_MAX;
		break;
	case 'R':
		*reply = uct_sctp_dpdk_ctx_peek()->rma_refused;
		break;
	case 'D':
		CHECK_OK(uct_md_mem_dereg(pr->e->md, pr->b_memh), "dereg B");
		break;
	case 'C':
		/* PUT data bytes written: region 0 placed straight from
		 * usrsctp, 1 copied from a descriptor */
		*reply = cmd->region ?
				 uct_sctp_dpdk_ctx_peek()->rma_put_copy_bytes :
				 uct_sctp_dpdk_ctx_peek()->rma_put_direct_bytes;
		break;
	case 'P':
		/* probes seen << 32 | probes that came early */
		*reply = fx_rma_probes << 32 | fx_rma_probes_early;
		break;
	case 'Q':
		CHECK_OK(uct_md_mem_dereg(pr->e->md, pr->a_memh), "dereg A");
		return 1;
	case 'S': {
		/* GET reply messages sent on stream @offset */
		uct_sctp_dpdk_ctx_t *ctx = uct_sctp_dpdk_ctx_peek();

		*reply = cmd->offset < ctx->smap.streams ?
				 ctx->smap.rep_msgs[cmd->offset] :
				 UINT64_MAX;
		break;
	}
	case 'G': {
		/* GET requests received on stream @offset */
		uct_sctp_dpdk_ctx_t *ctx = uct_sctp_dpdk_ctx_peek();

		*reply = cmd->offset < ctx->smap.streams ?
				 ctx->smap.req_msgs[cmd->offset] :
				 UINT64_MAX;
		break;
	}
	}
	return 0;
}

void fx_rma_peer_main(int fd)
{
	double deadline = fx_now_s() + 4 * RMA_DEADLINE_S;
	uct_md_attr_t md_attr;
	rma_peer_t pr;
	rma_info_t info;
	iface_t t;
	env_t e;

	fx_rma_peer_open(&e, &t);
	CHECK_OK(uct_iface_set_am_handler(t.iface, FX_RMA_PROBE_AM_ID,
					  fx_rma_probe_cb, NULL, 0),
		 "probe handler");
	CHECK_OK(uct_md_query(e.md, &md_attr), "md query");
	if (!(md_attr.cap.flags & UCT_MD_FLAG_REG) ||
	    !(md_attr.cap.flags & UCT_MD_FLAG_NEED_RKEY) ||
	    md_attr.rkey_packed_size > sizeof(info.a_rkey)) {
		fprintf(stderr, "FAIL: md flags 0x%" PRIx64 " rkey %zu\n",
			md_attr.cap.flags, md_attr.rkey_packed_size);
		exit(1);
	}
	pr.e = &e;
	pr.guard_lo = malloc(RMA_BIG + 2 * RMA_GUARD);
	pr.b_mem = malloc(RMA_SMALL);
	if (pr.guard_lo == NULL || pr.b_mem == NULL)
		exit(1);
	pr.a_mem = pr.guard_lo + RMA_GUARD;
	fx_rma_probe_mem = pr.a_mem;
	pr.guard_hi = pr.a_mem + RMA_BIG;
	memset(pr.guard_lo, 0xa5, RMA_GUARD);
	memset(pr.guard_hi, 0x5a, RMA_GUARD);
	fx_rma_fill(pr.b_mem, RMA_SMALL, 77);
	CHECK_OK(uct_md_mem_reg(e.md, pr.a_mem, RMA_BIG, UCT_MD_MEM_ACCESS_ALL,
				&pr.a_memh), "reg A");
	CHECK_OK(uct_md_mem_reg(e.md, pr.b_mem, RMA_SMALL,
				UCT_MD_MEM_ACCESS_ALL, &pr.b_memh), "reg B");
	memset(&info, 0, sizeof(info));
	info.a_addr = (uintptr_t)pr.a_mem;
	info.b_addr = (uintptr_t)pr.b_mem;
	CHECK_OK(uct_md_mkey_pack(e.md, pr.a_memh, info.a_rkey), "pack A");
	CHECK_OK(uct_md_mkey_pack(e.md, pr.b_memh, info.b_rkey), "pack B");
	if (fx_write_addr(fd, &t) != 0 ||
	    write(fd, &info, sizeof(info)) != sizeof(info))
		exit(1);
	fx_rma_serve(&e, fd, deadline, sizeof(rma_cmd_t), sizeof(uint64_t),
		     fx_rma_peer_serve, &pr);
	exit(0);
}

int fx_rma_fd;
env_t *fx_rma_env;

/* One control command; the peer progresses while serving it. */
uint64_t fx_rma_cmd(char op, uint8_t region, uint32_t seed,
		    uint64_t offset, uint64_t length)
{
	rma_cmd_t c = {.op = op, .region = region, .seed = seed,
		       .offset = offset, .length = length};
	uint64_t reply = UINT64_MAX;

	if (write(fx_rma_fd, &c, sizeof(c)) != sizeof(c) ||
	    read(fx_rma_fd, &reply, sizeof(reply)) != sizeof(reply)) {
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


static void fx_rma_comp_cb(uct_completion_t *self)
{
	ucs_container_of(self, rma_comp_t, super)->done = 1;
}

void fx_rma_comp_init(rma_comp_t *c)
{
	c->super.func = fx_rma_comp_cb;
	c->super.count = 1;
	c->super.status = UCS_OK;
	c->done = 0;
}

/* Wait for @c after an op returned @st.  @return the op's status. */
ucs_status_t fx_rma_wait(rma_comp_t *c, ucs_status_t st)
{
	double deadline = fx_now_s() + RMA_DEADLINE_S;

	if (st != UCS_INPROGRESS)
		return st;
	while (!c->done && fx_now_s() < deadline)
		uct_worker_progress(fx_rma_env->worker);
	if (!c->done)
		return UCS_ERR_TIMED_OUT;
	return c->super.status;
}

void fx_rma_flush(uct_ep_h ep)
{
	double deadline = fx_now_s() + RMA_DEADLINE_S;
	ucs_status_t st;
	rma_comp_t c;

	for (;;) {
		fx_rma_comp_init(&c);
		st = uct_ep_flush(ep, 0, &c.super);
		if (st == UCS_OK)
			return;
		if (st == UCS_INPROGRESS) {
			st = fx_rma_wait(&c, st);
			CHECK(st == UCS_OK, "flush: %s", ucs_status_string(st));
			return;
		}
		if (st != UCS_ERR_NO_RESOURCE || fx_now_s() > deadline) {
			CHECK(0, "flush: %s", ucs_status_string(st));
			return;
		}
		uct_worker_progress(fx_rma_env->worker);
	}
}

static size_t fx_rma_pack_cb(void *dest, void *arg)
{
	rma_pack_t *p = arg;

	memcpy(dest, p->src, p->len);
	return p->len;
}

static void fx_rma_unpack_cb(void *arg, const void *data, size_t length)
{
	rma_pack_t *p = arg;

	CHECK(length == p->len, "get_bcopy unpacked %zu of %zu bytes",
	      length, p->len);
	memcpy(p->dst, data, ucs_min(length, p->len));
}

const char *const fx_rma_names[] = {"put_short", "put_bcopy",
				    "put_zcopy", "get_bcopy",
				    "get_zcopy"};

/* Issue one op, retrying on back-pressure; wait for its completion. */
ucs_status_t fx_rma_op(uct_ep_h ep, int kind, uint8_t *local, size_t len,
		       uint64_t raddr, uct_rkey_t rkey)
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
		fx_rma_comp_init(&c);
		switch (kind) {
		case RMA_PUT_SHORT:
			st = uct_ep_put_short(ep, local, (unsigned)len, raddr,
					      rkey);
			break;
		case RMA_PUT_BCOPY:
			r = uct_ep_put_bcopy(ep, fx_rma_pack_cb, &pa, raddr, rkey);
			st = r >= 0 ? (r == (ssize_t)len ? UCS_OK :
				       UCS_ERR_IO_ERROR) : (ucs_status_t)r;
			break;
		case RMA_PUT_ZCOPY:
			st = uct_ep_put_zcopy(ep, iov, 2, raddr, rkey,
					      &c.super);
			break;
		case RMA_GET_BCOPY:
			st = uct_ep_get_bcopy(ep, fx_rma_unpack_cb, &pa, len,
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
		uct_worker_progress(fx_rma_env->worker);
	}
	return fx_rma_wait(&c, st);
}

int fx_rma_start(env_t *e, iface_t *t, uint8_t *dev, uint8_t *ifa,
		 rma_info_t *info)
{
	fx_rma_fd = fx_fork_peer(fx_rma_peer_main);
	if (fx_rma_fd < 0)
		return -1;
	fx_memif_env(0, "10.77.7.2/24", "r1");
	fx_env_open(e);
	fx_rma_env = e;
	fx_iface_open(e, t, 0);
	if (fx_read_addr(fx_rma_fd, dev, ifa) != 0 ||
	    read(fx_rma_fd, info, sizeof(*info)) != sizeof(*info)) {
		fprintf(stderr, "FAIL: peer did not start\n");
		return -1;
	}
	return 0;
}

uct_ep_h fx_rma_connect(env_t *e, iface_t *t, rma_info_t *info,
			uct_rkey_bundle_t *a_rk, const char *sg,
			const uint8_t *first, size_t first_len)
{
	uint8_t dev[64], ifa[64];
	ucs_status_t st;
	uct_ep_h ep;

	if (sg != NULL)
		setenv("UCX_SCTP_DPDK_SG", sg, 1);
	if (fx_rma_start(e, t, dev, ifa, info) != 0)
		return NULL;
	st = uct_rkey_unpack(e->comp, info->a_rkey, a_rk);
	CHECK_OK(st, "unpack A");
	if (st != UCS_OK)
		return NULL;
	ep = fx_ep_to(t, dev, ifa);
	/* The association is up once a PUT has completed. */
	st = fx_rma_op(ep, RMA_PUT_SHORT, (uint8_t *)first, first_len,
		       info->a_addr, a_rk->rkey);
	CHECK(st == UCS_OK, "first put: %s", ucs_status_string(st));
	return ep;
}

void fx_rma_stop(env_t *e, iface_t *t)
{
	uct_iface_close(t->iface);
	if (fx_failures == 0) {
		fx_rma_cmd('Q', 0, 0, 0, 0);
		waitpid(fx_peer_pid, NULL, 0);
		fx_peer_pid = 0;
	}
	fx_env_close(e);
}
