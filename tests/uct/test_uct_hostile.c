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
 *   rma-foreign  LANES=2 (two associations between the processes): a
 *           get_zcopy goes out on lane 0's association while the target
 *           does not progress; a GET reply naming the op's slot and cookie
 *           comes on lane 1's association, full of 0xee.  It must neither
 *           write the buffer nor complete the op (counted:
 *           rma_reply_foreign); once the target progresses the real
 *           reply completes the GET with the registered bytes.
 *
 *   path-count  (no wire) FAILOVER with 3 paths here, an ep to a peer
 *           whose addresses say 1 path: its 6-byte device address ends at
 *           a page followed by an inaccessible one.  The ep's checks
 *           (uct_sctp_dpdk_peer_compatible, then uct_sctp_dpdk_path_peer)
 *           must refuse the peer, never read past its device address; a
 *           3-path peer is accepted.
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
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define HOSTILE_GOOD 16	     /* legitimate AMs per 'A' command */
#define HOSTILE_AM_LEN 64    /* bytes of each legitimate AM */
#define HOSTILE_GET_LEN 4096 /* bytes of the GET rma-foreign forges */
#define HOSTILE_FORGED 0xee  /* the forged reply's data bytes */

/* rma-foreign: the target's region and the op a forged reply names. */
typedef struct {
	uint64_t addr;
	uint8_t rkey[64];
} hostile_region_t;

typedef struct {
	uint32_t slot, cookie;
	uint64_t length;
} hostile_forge_t;

/* Byte @i of the target's region. */
static uint8_t hostile_byte(size_t i)
{
	return (uint8_t)(i * 7 + 1);
}

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

/* A GET reply for @f's op, its data all HOSTILE_FORGED, on @uep's
 * association.  @return 0 or -1. */
static int hostile_forge_reply(env_t *e, uct_ep_h uep,
			       const hostile_forge_t *f)
{
	static uint8_t msg[sizeof(uct_sctp_dpdk_rma_hdr_t) + HOSTILE_GET_LEN];
	uct_sctp_dpdk_rma_hdr_t *rh = (uct_sctp_dpdk_rma_hdr_t *)msg;

	if (f->length > HOSTILE_GET_LEN)
		return -1;
	memset(msg, 0, sizeof(msg));
	rh->length = rte_cpu_to_be_64(f->length);
	rh->op_slot = rte_cpu_to_be_32(f->slot);
	rh->op_cookie = rte_cpu_to_be_32(f->cookie);
	memset(rh + 1, HOSTILE_FORGED, f->length);
	return hostile_raw_send(e, uep, UCT_SCTP_DPDK_RMA_GET_REP,
				UCT_SCTP_DPDK_HDR_FLAG_RMA, msg,
				sizeof(*rh) + f->length);
}

/* An ep from @from to the given addresses on path (lane) @path. */
static uct_ep_h hostile_ep_path(iface_t *from, const uint8_t *dev,
				const uint8_t *ifa, unsigned path)
{
	uct_ep_params_t p = {0};
	uct_ep_h ep;

	p.field_mask = UCT_EP_PARAM_FIELD_IFACE | UCT_EP_PARAM_FIELD_DEV_ADDR |
		       UCT_EP_PARAM_FIELD_IFACE_ADDR |
		       UCT_EP_PARAM_FIELD_PATH_INDEX;
	p.iface = from->iface;
	p.dev_addr = (const uct_device_addr_t *)dev;
	p.iface_addr = (const uct_iface_addr_t *)ifa;
	p.path_index = path;
	CHECK_OK(uct_ep_create(&p, &ep), "ep create");
	return ep;
}

/*
 * The peer: memif server with a registered region (its address and rkey
 * follow the iface addresses), eps to the test's iface on lanes 0 and (if
 * LANES=2) 1, commands from @fd:
 *   A  HOSTILE_GOOD legitimate AMs on each ep
 *   B  the bogus AM ids on lane 0
 *   H  stop progressing until R (requests to it wait unread)
 *   F  a forged GET reply (hostile_forge_t follows) on lane 1
 *   R  progress again
 * Each command is answered with a u32 count.  Exits when the socket
 * closes or after 60 s.
 */
static void hostile_peer_main(int fd)
{
	uint8_t dev[64], ifa[64], payload[HOSTILE_AM_LEN];
	double deadline = fx_now_s() + 60;
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	const char *lanes = getenv("UCX_SCTP_DPDK_LANES");
	unsigned i, k, nb_eps = lanes != NULL && atoi(lanes) > 1 ? 2 : 1;
	hostile_region_t region;
	hostile_forge_t forge;
	uct_ep_h eps[2];
	uct_mem_h memh;
	uint16_t seq = 0;
	uint8_t *mem;
	uint32_t done;
	int hold = 0;
	iface_t t;
	env_t e;
	char op;

	fx_memif_env(1, "10.77.8.1/24", "r0");
	fx_env_open(&e);
	fx_iface_open(&e, &t, 0);
	mem = malloc(HOSTILE_GET_LEN);
	if (mem == NULL)
		exit(1);
	for (i = 0; i < HOSTILE_GET_LEN; i++)
		mem[i] = hostile_byte(i);
	CHECK_OK(uct_md_mem_reg(e.md, mem, HOSTILE_GET_LEN,
				UCT_MD_MEM_ACCESS_ALL, &memh), "mem reg");
	memset(&region, 0, sizeof(region));
	region.addr = (uintptr_t)mem;
	CHECK_OK(uct_md_mkey_pack(e.md, memh, region.rkey), "mkey pack");
	if (fx_write_addr(fd, &t) != 0 || fx_read_addr(fd, dev, ifa) != 0 ||
	    write(fd, &region, sizeof(region)) != sizeof(region))
		exit(1);
	for (k = 0; k < nb_eps; k++)
		eps[k] = hostile_ep_path(&t, dev, ifa, k);
	memset(payload, 0x5a, sizeof(payload));
	while (fx_now_s() < deadline) {
		if (!hold) {
			uct_worker_progress(e.worker);
			fx_release_kept(&t);
		}
		if (poll(&pfd, 1, 0) != 1)
			continue;
		if (read(fd, &op, 1) != 1)
			exit(0);
		done = 0;
		switch (op) {
		case 'A':
			for (k = 0; k < nb_eps; k++)
				for (i = 0; i < HOSTILE_GOOD; i++, done++)
					fx_send_am(&e, eps[k], 0, 0, seq++,
						   HOSTILE_AM_LEN);
			break;
		case 'B':
			for (i = 0; i < HOSTILE_NB_BAD; i++)
				if (hostile_raw_send(&e, eps[0],
						     hostile_bad_ids[i], 0,
						     payload,
						     sizeof(payload)) == 0)
					done++;
			break;
		case 'H':
			hold = 1;
			break;
		case 'R':
			hold = 0;
			break;
		case 'F':
			if (read(fd, &forge, sizeof(forge)) != sizeof(forge))
				exit(1);
			done = nb_eps > 1 &&
			       hostile_forge_reply(&e, eps[1], &forge) == 0;
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
static uint32_t hostile_cmd_arg(env_t *e, iface_t *t, int fd, char op,
				const void *arg, size_t arg_len)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	double deadline = fx_now_s() + DEADLINE_S;
	uint32_t done;

	if (write(fd, &op, 1) != 1 ||
	    (arg_len > 0 && write(fd, arg, arg_len) != (ssize_t)arg_len))
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

static uint32_t hostile_cmd(env_t *e, iface_t *t, int fd, char op)
{
	return hostile_cmd_arg(e, t, fd, op, NULL, 0);
}

/* Fork the peer, open this side, swap addresses, read the peer's region.
 * @return the control socket, or -1. */
static int hostile_start(env_t *e, iface_t *t, uint8_t *dev, uint8_t *ifa,
			 hostile_region_t *region)
{
	int fd = fx_fork_client(hostile_peer_main);

	if (fd < 0)
		return -1;
	fx_env_open(e);
	fx_iface_open(e, t, 0);
	if (fx_swap_addr(fd, t, dev, ifa) != 0 ||
	    read(fd, region, sizeof(*region)) != sizeof(*region))
		return -1;
	return fd;
}

static int test_am_id(void)
{
	uct_sctp_dpdk_ctx_t *ctx;
	uint8_t dev[64], ifa[64];
	hostile_region_t region;
	uint32_t sent;
	double deadline;
	iface_t t;
	env_t e;
	int fd;

	fd = hostile_start(&e, &t, dev, ifa, &region);
	if (fd < 0)
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

static int test_rma_foreign(void)
{
	static uint8_t buf[HOSTILE_GET_LEN];
	uct_sctp_dpdk_iface_t *siface;
	uct_sctp_dpdk_ctx_t *ctx;
	uint8_t dev[64], ifa[64];
	hostile_region_t region;
	hostile_forge_t forge;
	uct_rkey_bundle_t rk;
	unsigned forged = 0, wrong = 0;
	uint32_t sent, i;
	double deadline;
	ucs_status_t st;
	fx_comp_t comp;
	uct_iov_t iov;
	uct_ep_h ep;
	iface_t t;
	env_t e;
	int fd;

	setenv("UCX_SCTP_DPDK_LANES", "2", 1); /* the peer inherits it */
	/* The peer holds the real reply by not progressing ('H'); its stall
	 * guard would serve the GET meanwhile. */
	setenv("UCX_SCTP_DPDK_GUARD_MS", "0", 1);
	fd = hostile_start(&e, &t, dev, ifa, &region);
	if (fd < 0)
		return 1;
	ctx = uct_sctp_dpdk_ctx_peek();
	siface = ucs_derived_of(t.iface, uct_sctp_dpdk_iface_t);
	CHECK_OK(uct_rkey_unpack(e.comp, region.rkey, &rk), "rkey unpack");
	ep = hostile_ep_path(&t, dev, ifa, 0);
	/* Both associations up. */
	sent = hostile_cmd(&e, &t, fd, 'A');
	CHECK(sent == 2 * HOSTILE_GOOD, "peer sent %u of %u AMs", sent,
	      2 * HOSTILE_GOOD);
	CHECK(fx_wait_count(&e, &t, 2 * HOSTILE_GOOD), "got %u of %u AMs",
	      t.rx_count, 2 * HOSTILE_GOOD);

	CHECK(hostile_cmd(&e, &t, fd, 'H') == 0, "peer did not hold");
	fx_comp_init(&comp);
	iov = (uct_iov_t){.buffer = buf, .length = sizeof(buf), .count = 1,
			  .memh = UCT_MEM_HANDLE_NULL};
	deadline = fx_now_s() + DEADLINE_S;
	while ((st = uct_ep_get_zcopy(ep, &iov, 1, region.addr, rk.rkey,
				      &comp.super)) == UCS_ERR_NO_RESOURCE &&
	       fx_now_s() < deadline)
		uct_worker_progress(e.worker);
	CHECK(st == UCS_INPROGRESS, "get_zcopy: %s", ucs_status_string(st));
	/* The op's slot and cookie, as a peer would guess them. */
	memset(&forge, 0, sizeof(forge));
	forge.slot = UINT32_MAX;
	for (i = 0; i < siface->rma_ops_size; i++)
		if (siface->rma_ops[i] != NULL)
			forge.slot = i;
	forge.cookie = siface->rma_cookie;
	forge.length = sizeof(buf);
	CHECK(forge.slot != UINT32_MAX, "no op in the table");
	sent = hostile_cmd_arg(&e, &t, fd, 'F', &forge, sizeof(forge));
	CHECK(sent == 1, "peer could not send the forged reply");
	deadline = fx_now_s() + 1.0;
	while (fx_now_s() < deadline && comp.calls == 0)
		uct_worker_progress(e.worker);
	/* Let a dropped reply be counted, too. */
	deadline = fx_now_s() + 0.2;
	while (fx_now_s() < deadline)
		uct_worker_progress(e.worker);
	for (i = 0; i < sizeof(buf); i++)
		forged += buf[i] == HOSTILE_FORGED;
	CHECK(comp.calls == 0, "a reply from another association completed "
	      "the GET (%s, %u of %zu bytes forged)",
	      ucs_status_string(comp.status), forged, sizeof(buf));
	CHECK(forged == 0, "a reply from another association wrote %u "
	      "bytes into the GET's buffer", forged);
	CHECK(ctx->rma_reply_foreign == 1, "rma_reply_foreign %" PRIu64
	      ", want 1", ctx->rma_reply_foreign);

	CHECK(hostile_cmd(&e, &t, fd, 'R') == 0, "peer did not resume");
	deadline = fx_now_s() + DEADLINE_S;
	while (comp.calls == 0 && fx_now_s() < deadline)
		uct_worker_progress(e.worker);
	CHECK(comp.calls == 1 && comp.status == UCS_OK, "the GET completed "
	      "%u times, last %s", comp.calls, ucs_status_string(comp.status));
	for (i = 0; i < sizeof(buf); i++)
		wrong += buf[i] != hostile_byte(i);
	CHECK(comp.calls != 1 || wrong == 0, "%u of %zu bytes of the GET "
	      "are not the target's", wrong, sizeof(buf));
	printf("rma-foreign: a GET reply on another association: %s; "
	       "rma_reply_foreign %" PRIu64 "; the real reply: %u wrong "
	       "bytes: %s\n", comp.calls == 1 && forged == 0 ?
	       "dropped" : "accepted", ctx->rma_reply_foreign, wrong,
	       fx_failures ? "FAIL" : "ok");
	uct_ep_destroy(ep);
	uct_rkey_release(e.comp, &rk);
	close(fd);
	uct_iface_close(t.iface);
	fx_env_close(&e);
	return fx_failures ? 1 : 0;
}

/* An iface address with the settings of @ctx but @paths paths. */
static void hostile_iface_addr(const uct_sctp_dpdk_ctx_t *ctx,
			       uint8_t paths, uct_sctp_dpdk_iface_addr_t *a)
{
	memset(a, 0, sizeof(*a));
	a->iface_id = rte_cpu_to_be_16(1);
	a->incarnation = rte_cpu_to_be_32(1);
	a->seg_bytes = rte_cpu_to_be_32(ctx->seg_bytes);
	a->streams = rte_cpu_to_be_16(ctx->streams);
	a->mtu = rte_cpu_to_be_16(ctx->mtu);
	a->lanes = (uint8_t)ctx->nb_lanes;
	a->paths = paths;
}

static int test_path_count(void)
{
	long page = sysconf(_SC_PAGESIZE);
	uct_sctp_dpdk_iface_addr_t addr;
	uct_sctp_dpdk_dev_addr_t *dev;
	uct_sctp_dpdk_ctx_t *ctx;
	uint8_t *pages;
	pid_t pid;
	int ws;

	ctx = calloc(1, sizeof(*ctx));
	pages = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ctx == NULL || pages == MAP_FAILED ||
	    mprotect(pages + page, page, PROT_NONE) != 0) {
		fprintf(stderr, "FAIL: no memory for the test\n");
		return 1;
	}
	ctx->seg_bytes = 65536;
	ctx->streams = 10;
	ctx->mtu = 1500;
	ctx->nb_lanes = 1;
	ctx->nb_paths = 3;
	ctx->ip_be = rte_cpu_to_be_32(0x0a4d0802);
	ctx->mask_be = rte_cpu_to_be_32(0xffffff00);
	/* a 1-path peer's device address, the last bytes of the page */
	dev = (uct_sctp_dpdk_dev_addr_t *)(pages + page - sizeof(*dev));
	dev->ip = rte_cpu_to_be_32(0x0a4d0801);
	dev->sctp_port = rte_cpu_to_be_16(5000);

	hostile_iface_addr(ctx, 3, &addr);
	CHECK(uct_sctp_dpdk_peer_compatible(ctx, dev->ip, &addr) == 1,
	      "a peer with as many paths was refused");
	hostile_iface_addr(ctx, 1, &addr);
	/* What ep create does, in a child: a read past the device address
	 * faults there. */
	pid = fork();
	if (pid == 0) {
		if (!uct_sctp_dpdk_peer_compatible(ctx, dev->ip, &addr))
			_exit(0);
		uct_sctp_dpdk_path_peer(ctx, dev);
		_exit(2);
	}
	CHECK(pid > 0 && waitpid(pid, &ws, 0) == pid, "fork/wait: %m");
	CHECK(pid > 0 && WIFEXITED(ws) && WEXITSTATUS(ws) == 0,
	      "an ep to a 1-path peer with 3 paths here %s",
	      WIFSIGNALED(ws) ? "read past its device address (signal)" :
				"was accepted");
	printf("path-count: a 1-path peer with 3 FAILOVER paths here: %s\n",
	       fx_failures ? "FAIL" : "refused, nothing read past its "
				      "device address");
	munmap(pages, 2 * page);
	free(ctx);
	return fx_failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "path-count") == 0)
		return fx_run(test_path_count);
	if (argc == 2 && strcmp(argv[1], "am-id") == 0)
		return fx_run(test_am_id);
	if (argc == 2 && strcmp(argv[1], "rma-foreign") == 0)
		return fx_run(test_rma_foreign);
	fprintf(stderr, "usage: %s am-id|rma-foreign|path-count\n", argv[0]);
	return 1;
}
