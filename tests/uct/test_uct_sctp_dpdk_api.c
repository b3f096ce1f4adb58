/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_uct_sctp_dpdk_api.c - the `sctp_dpdk` transport through the UCT API
 * in one or two processes (the component is linked in, so no LD_PRELOAD).
 *
 *   local   two ifaces of one process exchange AMs (short, short_iov,
 *           bcopy, zcopy) with the payload checked; no frame leaves the
 *           port (dp tx_pkts unchanged).  Port: net_null, no peer needed.
 *   config  every bad UCX_SCTP_DPDK_* value (one at a time, the rest
 *           valid) fails the iface open with UCS_ERR_INVALID_PARAM.
 *   cycles  an iface is opened and closed 50 times; each cycle sends AMs
 *           over a memif pair to a forked peer process, which echoes them,
 *           and waits for the echoes.  Afterwards no mbuf (port mempool in
 *           use), receive descriptor or file descriptor has leaked.
 *   rma     put_short/bcopy/zcopy and get_bcopy/zcopy of 1 B..16 MiB to a
 *           forked peer process over a memif pair, every byte checked by
 *           the process that owns the memory; then accesses the peer must
 *           refuse (wrong key, before/after/across its registration, a
 *           deregistered key): each fails with UCS_ERR_INVALID_ADDR where
 *           it has a completion, the peer's memory (and its guard bytes)
 *           is unchanged and its refusal counter counts every one.
 *
 * Every wait has a deadline; the peer is killed by PID and the memif dir
 * and EAL runtime dirs are removed on every exit path.
 * Exit: 0 pass, 1 fail, 77 skip (not root).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sctp_dpdk.h"

#include <ucs/sys/math.h>
#include <ucs/async/async.h>

#include <rte_mempool.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define AM_ID 7
#define CYCLES 50
#define MSGS_PER_CYCLE 24
#define DEADLINE_S 20

static int failures;
static char memif_dir[128];
static char job[64];

#define CHECK(cond, ...)                                                      \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__,         \
				__LINE__, #cond);                             \
			fprintf(stderr, __VA_ARGS__);                         \
			fprintf(stderr, "\n");                                \
			failures++;                                           \
		}                                                             \
	} while (0)

#define CHECK_OK(st, what)                                                    \
	do {                                                                  \
		ucs_status_t _s = (st);                                       \
		if (_s != UCS_OK) {                                           \
			fprintf(stderr, "FAIL %s:%d: %s: %s\n", __FILE__,     \
				__LINE__, what, ucs_status_string(_s));       \
			exit(1);                                              \
		}                                                             \
	} while (0)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the DIR's own fd */
}

/* One UCT context: component, md, worker, and (opened later) ifaces. */
typedef struct {
	ucs_async_context_t *async;
	uct_worker_h worker;
	uct_component_h comp;
	uct_md_h md;
	uct_iface_config_t *config;
} env_t;

static void env_open(env_t *e)
{
	uct_component_h *comps;
	unsigned n, i;
	uct_md_config_t *md_config;
	uct_component_attr_t ca;

	CHECK_OK(ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK,
					  &e->async), "async");
	CHECK_OK(uct_worker_create(e->async, UCS_THREAD_MODE_SINGLE,
				   &e->worker), "worker");
	CHECK_OK(uct_query_components(&comps, &n), "components");
	e->comp = NULL;
	for (i = 0; i < n; i++) {
		ca.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
		uct_component_query(comps[i], &ca);
		if (strcmp(ca.name, UCT_SCTP_DPDK_NAME) == 0)
			e->comp = comps[i];
	}
	if (e->comp == NULL) {
		fprintf(stderr, "FAIL: component %s not registered\n",
			UCT_SCTP_DPDK_NAME);
		exit(1);
	}
	CHECK_OK(uct_md_config_read(e->comp, NULL, NULL, &md_config),
		 "md config");
	CHECK_OK(uct_md_open(e->comp, UCT_SCTP_DPDK_NAME, md_config, &e->md),
		 "md open");
	uct_config_release(md_config);
	uct_release_component_list(comps);
	/* Read after the test set UCX_SCTP_DPDK_* in the environment. */
	CHECK_OK(uct_md_iface_config_read(e->md, UCT_SCTP_DPDK_NAME, NULL,
					  NULL, &e->config),
		 "iface config");
}

static void env_close(env_t *e)
{
	uct_config_release(e->config);
	uct_md_close(e->md);
	uct_worker_destroy(e->worker);
	ucs_async_context_destroy(e->async);
}

#define KEEP_MAX 64
#define ECHO_MAX 512

typedef struct {
	uint16_t from;
	uint16_t len;
	uint8_t data[1024];
} echo_t;

typedef struct {
	uct_iface_h iface;
	uint8_t dev_addr[64];
	uint8_t iface_addr[64];
	unsigned rx_count;
	size_t rx_bytes;
	unsigned rx_bad;
	env_t *env;
	/* Descriptors kept by the handler (UCS_INPROGRESS), released later
	 * through uct_iface_release_desc. */
	void *kept[KEEP_MAX];
	unsigned nkept;
	size_t rx_headroom;
	/* Peer mode: AMs to send back, from the main loop. */
	int echo;
	echo_t *echo_q;
	unsigned echo_head, echo_tail;
	uct_ep_h echo_eps[UCT_SCTP_DPDK_MAX_IFACES];
} iface_t;

static uint8_t peer_dev_addr[64]; /* the other process (peer mode) */

/* Payload: [u16 sender iface id][u16 seq][bytes: (seq + i) & 0xff]. */
static void fill(uint8_t *buf, size_t len, uint16_t from, uint16_t seq)
{
	size_t i;

	memcpy(buf, &from, 2);
	memcpy(buf + 2, &seq, 2);
	for (i = 4; i < len; i++)
		buf[i] = (uint8_t)(seq + i);
}

static int verify(const uint8_t *buf, size_t len)
{
	uint16_t seq;
	size_t i;

	if (len < 4)
		return 0;
	memcpy(&seq, buf + 2, 2);
	for (i = 4; i < len; i++)
		if (buf[i] != (uint8_t)(seq + i))
			return 0;
	return 1;
}

static ucs_status_t am_cb(void *arg, void *data, size_t length,
			  unsigned flags)
{
	iface_t *t = arg;

	if (!verify(data, length))
		t->rx_bad++;
	t->rx_count++;
	t->rx_bytes += length;
	if (t->echo && length >= 4 && t->echo_tail - t->echo_head < ECHO_MAX) {
		echo_t *q = &t->echo_q[t->echo_tail++ % ECHO_MAX];

		memcpy(&q->from, data, 2);
		q->len = (uint16_t)ucs_min(length, sizeof(q->data));
		memcpy(q->data, data, q->len);
	}
	/* Keep every other descriptor, to exercise release_desc. */
	if ((flags & UCT_CB_PARAM_FLAG_DESC) && (t->rx_count % 2) == 0 &&
	    t->nkept < KEEP_MAX) {
		/* UCT convention: the descriptor starts rx_headroom bytes
		 * before the data. */
		t->kept[t->nkept++] = (char *)data - t->rx_headroom;
		return UCS_INPROGRESS;
	}
	return UCS_OK;
}

static void release_kept(iface_t *t)
{
	while (t->nkept > 0)
		uct_iface_release_desc(t->kept[--t->nkept]);
}

/* Peer mode: send queued echoes back (AMs cannot be sent from inside a
 * handler that would have to progress on back-pressure). */
static void echo_drain(iface_t *t)
{
	while (t->echo_head != t->echo_tail) {
		echo_t *q = &t->echo_q[t->echo_head % ECHO_MAX];
		uct_ep_h *ep = &t->echo_eps[q->from % UCT_SCTP_DPDK_MAX_IFACES];
		uint16_t id_be = rte_cpu_to_be_16(q->from);
		uint64_t hdr;

		if (*ep == NULL) {
			uct_ep_params_t p = {0};

			p.field_mask = UCT_EP_PARAM_FIELD_IFACE |
				       UCT_EP_PARAM_FIELD_DEV_ADDR |
				       UCT_EP_PARAM_FIELD_IFACE_ADDR;
			p.iface = t->iface;
			p.dev_addr = (uct_device_addr_t *)peer_dev_addr;
			p.iface_addr = (uct_iface_addr_t *)&id_be;
			if (uct_ep_create(&p, ep) != UCS_OK)
				exit(3);
		}
		memcpy(&hdr, q->data, 8);
		if (uct_ep_am_short(*ep, AM_ID, hdr, q->data + 8,
				    q->len - 8) != UCS_OK)
			return;
		t->echo_head++;
	}
}

static unsigned err_calls;
static ucs_status_t err_seen;

static ucs_status_t err_handler(void *arg, uct_ep_h ep, ucs_status_t status)
{
	err_calls++;
	err_seen = status;
	return UCS_OK;
}

static void iface_open(env_t *e, iface_t *t, size_t rx_headroom)
{
	uct_iface_params_t p = {0};
	uct_iface_attr_t attr;

	memset(t, 0, sizeof(*t));
	t->env = e;
	t->rx_headroom = rx_headroom;
	p.field_mask = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
		       UCT_IFACE_PARAM_FIELD_DEVICE |
		       UCT_IFACE_PARAM_FIELD_RX_HEADROOM |
		       UCT_IFACE_PARAM_FIELD_ERR_HANDLER;
	p.err_handler = err_handler;
	p.err_handler_arg = t;
	p.open_mode = UCT_IFACE_OPEN_MODE_DEVICE;
	p.mode.device.tl_name = UCT_SCTP_DPDK_NAME;
	p.mode.device.dev_name = UCT_SCTP_DPDK_DEV_NAME;
	p.rx_headroom = rx_headroom;
	CHECK_OK(uct_iface_open(e->md, e->worker, &p, e->config, &t->iface),
		 "iface open");
	CHECK_OK(uct_iface_query(t->iface, &attr), "query");
	CHECK(attr.cap.flags & UCT_IFACE_FLAG_AM_ZCOPY, "no zcopy cap");
	CHECK_OK(uct_iface_get_device_address(t->iface,
					      (uct_device_addr_t *)t->dev_addr),
		 "dev addr");
	CHECK_OK(uct_iface_get_address(t->iface,
				       (uct_iface_addr_t *)t->iface_addr),
		 "iface addr");
	CHECK_OK(uct_iface_set_am_handler(t->iface, AM_ID, am_cb, t, 0),
		 "am handler");
	uct_iface_progress_enable(t->iface,
				  UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
}

static uct_ep_h ep_to(iface_t *from, const uint8_t *dev_addr,
		      const uint8_t *iface_addr)
{
	uct_ep_params_t p = {0};
	uct_ep_h ep;

	p.field_mask = UCT_EP_PARAM_FIELD_IFACE | UCT_EP_PARAM_FIELD_DEV_ADDR |
		       UCT_EP_PARAM_FIELD_IFACE_ADDR;
	p.iface = from->iface;
	p.dev_addr = (const uct_device_addr_t *)dev_addr;
	p.iface_addr = (const uct_iface_addr_t *)iface_addr;
	CHECK(uct_iface_is_reachable(from->iface, p.dev_addr, p.iface_addr),
	      "peer not reachable");
	CHECK_OK(uct_ep_create(&p, &ep), "ep create");
	return ep;
}

typedef struct {
	uint8_t *buf;
	size_t len;
} pack_arg_t;

static size_t pack_cb(void *dest, void *arg)
{
	pack_arg_t *a = arg;

	memcpy(dest, a->buf, a->len);
	return a->len;
}

/* Send one AM of @len bytes with method @m (0 short, 1 short_iov,
 * 2 bcopy, 3 zcopy), progressing on back-pressure until the deadline. */
static void send_am(env_t *e, uct_ep_h ep, int m, uint16_t from,
		    uint16_t seq, size_t len)
{
	static uint8_t buf[65536];
	double deadline = now_s() + DEADLINE_S;
	ucs_status_t st;
	uct_iov_t iov[3];
	pack_arg_t pa;
	uint64_t hdr;

	fill(buf, len, from, seq);
	for (;;) {
		switch (m) {
		case 0:
			memcpy(&hdr, buf, 8);
			st = uct_ep_am_short(ep, AM_ID, hdr, buf + 8,
					     (unsigned)(len - 8));
			break;
		case 1:
			iov[0].buffer = buf;
			iov[0].length = 5;
			iov[1].buffer = buf + 5;
			iov[1].length = len - 5;
			iov[0].count = iov[1].count = 1;
			st = uct_ep_am_short_iov(ep, AM_ID, iov, 2);
			break;
		case 2:
			pa.buf = buf;
			pa.len = len;
			st = uct_ep_am_bcopy(ep, AM_ID, pack_cb, &pa, 0) ==
					     (ssize_t)len ?
				     UCS_OK :
				     UCS_ERR_NO_RESOURCE;
			break;
		default:
			iov[0].buffer = buf + 16;
			iov[0].length = len / 2 - 16;
			iov[1].buffer = buf + len / 2;
			iov[1].length = len - len / 2;
			iov[0].count = iov[1].count = 1;
			iov[0].memh = iov[1].memh = UCT_MEM_HANDLE_NULL;
			iov[0].stride = iov[1].stride = 0;
			st = uct_ep_am_zcopy(ep, AM_ID, buf, 16, iov, 2, 0,
					     NULL);
			break;
		}
		if (st == UCS_OK)
			return;
		if (st != UCS_ERR_NO_RESOURCE || now_s() > deadline) {
			fprintf(stderr, "FAIL: send method %d len %zu: %s\n",
				m, len, ucs_status_string(st));
			failures++;
			return;
		}
		uct_worker_progress(e->worker);
	}
}

static int wait_count(env_t *e, iface_t *t, unsigned want)
{
	double deadline = now_s() + DEADLINE_S;

	while (t->rx_count < want && now_s() < deadline) {
		uct_worker_progress(e->worker);
		release_kept(t);
	}
	release_kept(t);
	return t->rx_count >= want;
}

static void set_common_env(const char *devargs, const char *ip,
			   const char *prefix)
{
	setenv("UCX_SCTP_DPDK_DEVARGS", devargs, 1);
	setenv("UCX_SCTP_DPDK_IP", ip, 1);
	setenv("UCX_SCTP_DPDK_PREFIX", prefix, 1);
	setenv("UCX_SCTP_DPDK_IDLE_SLEEP_US", "20", 1);
}

/* ---- local: two ifaces of one process ---- */

static int test_local(void)
{
	static const size_t sizes[] = {8, 100, 2040};
	uct_sctp_dpdk_ctx_t *ctx;
	struct dp_stats before, after;
	iface_t a, b;
	env_t e;
	uct_ep_h ep;
	unsigned sent = 0;
	size_t i;
	int m;
	char prefix[96];

	snprintf(prefix, sizeof(prefix), "sdp-%s-local", job);
	set_common_env("net_null0", "10.77.9.1/24", prefix);
	env_open(&e);
	iface_open(&e, &a, 0);
	iface_open(&e, &b, 72); /* a ucp-like headroom on one side */
	ctx = uct_sctp_dpdk_ctx_peek();
	CHECK(ctx != NULL, "no context");
	dp_port_stats(ctx->port, &before);
	ep = ep_to(&a, b.dev_addr, b.iface_addr);
	for (m = 0; m < 4; m++) {
		for (i = 0; i < SDP_ARRAY_SIZE(sizes); i++) {
			size_t len = m >= 2 ? sizes[i] * 20 : sizes[i];

			send_am(&e, ep, m, 1, (uint16_t)sent, len);
			sent++;
		}
	}
	CHECK(wait_count(&e, &b, sent), "b got %u of %u AMs", b.rx_count,
	      sent);
	CHECK(b.rx_bad == 0, "%u AMs corrupted", b.rx_bad);
	CHECK(a.rx_count == 0, "a got %u AMs meant for b", a.rx_count);
	CHECK(uct_ep_flush(ep, 0, NULL) == UCS_OK, "flush");
	dp_port_stats(ctx->port, &after);
	CHECK(after.tx_pkts == before.tx_pkts,
	      "local AMs left the port: tx_pkts %" PRIu64 " -> %" PRIu64,
	      before.tx_pkts, after.tx_pkts);
	uct_ep_destroy(ep);
	uct_iface_close(a.iface);
	uct_iface_close(b.iface);
	env_close(&e);
	printf("local: %u AMs between two ifaces, tx_pkts %" PRIu64
	       " unchanged: %s\n", sent, after.tx_pkts,
	       failures ? "FAIL" : "ok");
	return failures ? 1 : 0;
}

/* ---- cycles: open/close 50 times against an echoing peer ---- */

static void peer_main(int addr_fd)
{
	char prefix[96], dev[256];
	iface_t t;
	env_t e;
	double deadline = now_s() + 120;

	snprintf(prefix, sizeof(prefix), "sdp-%s-r0", job);
	snprintf(dev, sizeof(dev), "net_memif0,role=server,id=0,socket=%s/"
		 "memif0.sock,socket-abstract=no", memif_dir);
	set_common_env(dev, "10.77.8.1/24", prefix);
	env_open(&e);
	iface_open(&e, &t, 0);
	t.echo = 1;
	t.echo_q = calloc(ECHO_MAX, sizeof(*t.echo_q));
	if (write(addr_fd, t.dev_addr, sizeof(t.dev_addr)) < 0 ||
	    write(addr_fd, t.iface_addr, sizeof(t.iface_addr)) < 0)
		exit(1);
	if (read(addr_fd, peer_dev_addr, sizeof(peer_dev_addr)) !=
	    (ssize_t)sizeof(peer_dev_addr))
		exit(1);
	while (now_s() < deadline) {
		uct_worker_progress(e.worker);
		release_kept(&t);
		echo_drain(&t);
	}
	exit(0);
}

static pid_t peer_pid;

static void cleanup(void)
{
	char cmd[512];

	if (peer_pid > 0) {
		kill(peer_pid, SIGKILL);
		waitpid(peer_pid, NULL, 0);
		peer_pid = 0;
	}
	if (memif_dir[0] != '\0') {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s' /var/run/dpdk/sdp-%s-*",
			 memif_dir, job);
		if (system(cmd) != 0)
			fprintf(stderr, "cleanup: %s failed\n", cmd);
	}
}

static int test_cycles(void)
{
	uint8_t dev[64], ifa[64];
	int sv[2], fds_before = -1, fds_after;
	unsigned in_use_before = 0, in_use_after, c, k, sent_total = 0;
	int64_t held;
	char prefix[96], devargs[256], pool[32];
	struct rte_mempool *mp = NULL;
	uct_sctp_dpdk_ctx_t *ctx;
	env_t e;

	snprintf(memif_dir, sizeof(memif_dir), "/run/sdp/%s", job);
	mkdir("/run/sdp", 0755);
	if (mkdir(memif_dir, 0700) != 0 && errno != EEXIST) {
		perror(memif_dir);
		return 1;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return 1;
	peer_pid = fork();
	if (peer_pid == 0) {
		close(sv[0]);
		peer_main(sv[1]);
	}
	close(sv[1]);

	snprintf(prefix, sizeof(prefix), "sdp-%s-r1", job);
	snprintf(devargs, sizeof(devargs), "net_memif0,role=client,id=0,"
		 "socket=%s/memif0.sock,socket-abstract=no", memif_dir);
	set_common_env(devargs, "10.77.8.2/24", prefix);
	/* Fast failure detection for the peer-failure part. */
	setenv("UCX_SCTP_DPDK_SG", "rto_min_ms=50 rto_initial_ms=100 "
	       "rto_max_ms=200 path_max_rxt=3 hb_interval_ms=100", 1);
	env_open(&e);
	for (c = 0; c < CYCLES; c++) {
		iface_t t;
		uct_ep_h ep;

		iface_open(&e, &t, c % 2 ? 72 : 0);
		if (c == 0) {
			if (read(sv[0], dev, sizeof(dev)) != sizeof(dev) ||
			    read(sv[0], ifa, sizeof(ifa)) != sizeof(ifa) ||
			    write(sv[0], t.dev_addr, sizeof(t.dev_addr)) !=
				    sizeof(t.dev_addr)) {
				fprintf(stderr, "FAIL: peer did not start\n");
				return 1;
			}
		}
		ep = ep_to(&t, dev, ifa);
		for (k = 0; k < MSGS_PER_CYCLE; k++) {
			uint16_t id;

			memcpy(&id, t.iface_addr, 2);
			send_am(&e, ep, k % 4, rte_be_to_cpu_16(id),
				(uint16_t)k,
				k % 4 >= 2 ? 4000 + 997 * k : 16 + 40 * k);
		}
		sent_total += MSGS_PER_CYCLE;
		CHECK(wait_count(&e, &t, MSGS_PER_CYCLE),
		      "cycle %u: %u of %u echoes", c, t.rx_count,
		      MSGS_PER_CYCLE);
		CHECK(t.rx_bad == 0, "cycle %u: %u bad echoes", c, t.rx_bad);
		while (uct_ep_flush(ep, 0, NULL) != UCS_OK)
			uct_worker_progress(e.worker);
		uct_ep_destroy(ep);
		uct_iface_close(t.iface);
		if (failures)
			break;
		if (c == 0) {
			/* Baseline after the first cycle: port, EAL and
			 * association exist from here on. */
			ctx = uct_sctp_dpdk_ctx_peek();
			snprintf(pool, sizeof(pool), "dp_pool_%u",
				 dp_port_id(ctx->port));
			mp = rte_mempool_lookup(pool);
			CHECK(mp != NULL, "no mempool %s", pool);
			fds_before = count_fds();
			in_use_before = mp ? rte_mempool_in_use_count(mp) : 0;
		}
	}
	ctx = uct_sctp_dpdk_ctx_peek();
	fds_after = count_fds();
	in_use_after = mp ? rte_mempool_in_use_count(mp) : 0;
	held = ctx->sg_descs_held;

	/* Peer failure: kill the peer; the ep's error handler must run
	 * (UCS_ERR_ENDPOINT_TIMEOUT) and sends fail, within the deadline. */
	if (failures == 0) {
		iface_t t;
		uct_ep_h ep;
		double t0, deadline;
		ucs_status_t st = UCS_OK;
		uint64_t hdr = 0;

		iface_open(&e, &t, 0);
		ep = ep_to(&t, dev, ifa);
		send_am(&e, ep, 0, 0, 0, 64);
		kill(peer_pid, SIGKILL);
		waitpid(peer_pid, NULL, 0);
		peer_pid = 0;
		t0 = now_s();
		deadline = t0 + DEADLINE_S;
		while (err_calls == 0 && now_s() < deadline) {
			st = uct_ep_am_short(ep, AM_ID, hdr, &hdr, 8);
			uct_worker_progress(e.worker);
		}
		CHECK(err_calls == 1, "error handler called %u times",
		      err_calls);
		CHECK(err_seen == UCS_ERR_ENDPOINT_TIMEOUT, "error %s",
		      ucs_status_string(err_seen));
		st = uct_ep_am_short(ep, AM_ID, hdr, &hdr, 8);
		CHECK(st == UCS_ERR_ENDPOINT_TIMEOUT, "send after failure: %s",
		      ucs_status_string(st));
		printf("peer-failure: error handler after %.1f s (%s), send "
		       "returns %s: %s\n", now_s() - t0,
		       ucs_status_string(err_seen), ucs_status_string(st),
		       failures ? "FAIL" : "ok");
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
	       in_use_after, held, failures ? "FAIL" : "ok");
	env_close(&e);
	return failures ? 1 : 0;
}

/* ---- config: each bad UCX_SCTP_DPDK_* value fails the iface open ---- */

static int test_config(void)
{
	static const struct {
		const char *var, *value;
	} bad[] = {
		{"UCX_SCTP_DPDK_IP", ""},
		{"UCX_SCTP_DPDK_IP", "10.77.9.300/24"},
		{"UCX_SCTP_DPDK_MTU", "99999"},
		{"UCX_SCTP_DPDK_STREAMS", "1"},
		{"UCX_SCTP_DPDK_SEG_SIZE", "512"},
		{"UCX_SCTP_DPDK_RX_DESCS", "3"},
		{"UCX_SCTP_DPDK_RATE", "fast"},
		{"UCX_SCTP_DPDK_DP", "bogus=1"},
		{"UCX_SCTP_DPDK_SG", "rto_min_ms=0"},
		{"UCX_SCTP_DPDK_SG", "streams=1"},
		{"UCX_SCTP_DPDK_IDLE_SLEEP_US", "200000"},
		{"UCX_SCTP_DPDK_PROGRESS", "background"},
		{"UCX_SCTP_DPDK_POLL_LCORE", "-5"},
	};
	char prefix[96];
	size_t i;

	snprintf(prefix, sizeof(prefix), "sdp-%s-cfg", job);
	for (i = 0; i < SDP_ARRAY_SIZE(bad); i++) {
		uct_iface_params_t p = {0};
		uct_iface_h iface;
		ucs_status_t st;
		env_t e;

		/* A valid configuration with one field broken. */
		set_common_env("net_null0", "10.77.9.1/24", prefix);
		unsetenv("UCX_SCTP_DPDK_MTU");
		unsetenv("UCX_SCTP_DPDK_STREAMS");
		unsetenv("UCX_SCTP_DPDK_SEG_SIZE");
		unsetenv("UCX_SCTP_DPDK_RX_DESCS");
		unsetenv("UCX_SCTP_DPDK_RATE");
		unsetenv("UCX_SCTP_DPDK_DP");
		unsetenv("UCX_SCTP_DPDK_SG");
		unsetenv("UCX_SCTP_DPDK_PROGRESS");
		unsetenv("UCX_SCTP_DPDK_POLL_LCORE");
		setenv(bad[i].var, bad[i].value, 1);
		env_open(&e);
		p.field_mask = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
			       UCT_IFACE_PARAM_FIELD_DEVICE;
		p.open_mode = UCT_IFACE_OPEN_MODE_DEVICE;
		p.mode.device.tl_name = UCT_SCTP_DPDK_NAME;
		p.mode.device.dev_name = UCT_SCTP_DPDK_DEV_NAME;
		st = uct_iface_open(e.md, e.worker, &p, e.config, &iface);
		CHECK(st == UCS_ERR_INVALID_PARAM, "%s=%s: iface open %s",
		      bad[i].var, bad[i].value, ucs_status_string(st));
		if (st == UCS_OK)
			uct_iface_close(iface);
		env_close(&e);
	}
	unsetenv("UCX_SCTP_DPDK_PROGRESS");
	unsetenv("UCX_SCTP_DPDK_POLL_LCORE");
	/* Valid values alone must not trip the cross-field checks. */
	{
		static char text[16384];
		struct dp_config dp;
		struct sg_config sg;
		ucs_status_t st;
		env_t e;

		set_common_env("net_null0", "10.77.9.1/24", prefix);
		setenv("UCX_SCTP_DPDK_SEG_SIZE", "1k", 1);
		setenv("UCX_SCTP_DPDK_RX_DESCS", "16", 1);
		setenv("UCX_SCTP_DPDK_SG", "rto_min_ms=2000 rto_initial_ms=3000 "
		       "rto_max_ms=4000", 1);
		env_open(&e);
		st = uct_sctp_dpdk_config_build(
			ucs_derived_of(e.config, uct_sctp_dpdk_iface_config_t),
			&dp, &sg, text, sizeof(text));
		CHECK(st == UCS_OK && sg.rx_buf_bytes == 1024 &&
			      sg.rx_descs == 16 && sg.rto_min_ms == 2000,
		      "valid config rejected: %s", ucs_status_string(st));
		env_close(&e);
	}
	/* The EAL was never started by a rejected config. */
	CHECK(uct_sctp_dpdk_ctx_peek() == NULL, "a context was created");
	printf("config: %zu bad values rejected: %s\n", SDP_ARRAY_SIZE(bad),
	       failures ? "FAIL" : "ok");
	return failures ? 1 : 0;
}

/* ---- rma: put/get against a peer process over memif ---- */

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
	char prefix[96], dev[256];
	uct_mem_h a_memh, b_memh;
	uct_md_attr_t md_attr;
	rma_info_t info;
	rma_cmd_t cmd;
	iface_t t;
	env_t e;
	double deadline = now_s() + 4 * RMA_DEADLINE_S;
	uint64_t reply;
	ssize_t n;

	snprintf(prefix, sizeof(prefix), "sdp-%s-r0", job);
	snprintf(dev, sizeof(dev), "net_memif0,role=server,id=0,socket=%s/"
		 "memif0.sock,socket-abstract=no", memif_dir);
	set_common_env(dev, "10.77.7.1/24", prefix);
	env_open(&e);
	iface_open(&e, &t, 0);
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
	if (write(fd, t.dev_addr, sizeof(t.dev_addr)) < 0 ||
	    write(fd, t.iface_addr, sizeof(t.iface_addr)) < 0 ||
	    write(fd, &info, sizeof(info)) < 0)
		exit(1);
	fcntl(fd, F_SETFL, O_NONBLOCK);
	while (now_s() < deadline) {
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
		if (peer_pid > 0 && waitpid(peer_pid, &wst, 0) == peer_pid) {
			fprintf(stderr, "peer: %s %d\n",
				WIFSIGNALED(wst) ? "killed by signal" :
						   "exit",
				WIFSIGNALED(wst) ? WTERMSIG(wst) :
						   WEXITSTATUS(wst));
			peer_pid = 0;
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
	double deadline = now_s() + RMA_DEADLINE_S;

	if (st != UCS_INPROGRESS)
		return st;
	while (!c->done && now_s() < deadline)
		uct_worker_progress(rma_env->worker);
	if (!c->done)
		return UCS_ERR_TIMED_OUT;
	return c->super.status;
}

static void rma_flush(uct_ep_h ep)
{
	double deadline = now_s() + RMA_DEADLINE_S;
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
		if (st != UCS_ERR_NO_RESOURCE || now_s() > deadline) {
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
	double deadline = now_s() + RMA_DEADLINE_S;
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
		if (now_s() > deadline)
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
	int sv[2], kind, ops = 0;
	char prefix[96], devargs[256];
	ucs_status_t st;
	uct_ep_h ep;
	iface_t t;
	env_t e;
	size_t i, len, max_kind_len[5];

	snprintf(memif_dir, sizeof(memif_dir), "/run/sdp/%s", job);
	mkdir("/run/sdp", 0755);
	if (mkdir(memif_dir, 0700) != 0 && errno != EEXIST) {
		perror(memif_dir);
		return 1;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return 1;
	peer_pid = fork();
	if (peer_pid == 0) {
		close(sv[0]);
		rma_peer_main(sv[1]);
	}
	close(sv[1]);
	rma_fd = sv[0];

	snprintf(prefix, sizeof(prefix), "sdp-%s-r1", job);
	snprintf(devargs, sizeof(devargs), "net_memif0,role=client,id=0,"
		 "socket=%s/memif0.sock,socket-abstract=no", memif_dir);
	set_common_env(devargs, "10.77.7.2/24", prefix);
	env_open(&e);
	rma_env = &e;
	iface_open(&e, &t, 0);
	if (read(rma_fd, dev, sizeof(dev)) != sizeof(dev) ||
	    read(rma_fd, ifa, sizeof(ifa)) != sizeof(ifa) ||
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
	ep = ep_to(&t, dev, ifa);
	/* The association is still starting: an AM goes pending, and an
	 * iface flush now must say "in progress", not fail (UCP's worker
	 * flush, used by Open MPI's osc ucx fence, aborts on any error). */
	{
		uct_pending_req_t req = {.func = rma_pending_cb};
		double deadline = now_s() + RMA_DEADLINE_S;
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
			while (!rma_pending_done && now_s() < deadline)
				uct_worker_progress(e.worker);
			CHECK(rma_pending_done, "pending AM never sent");
			while (uct_iface_flush(t.iface, 0, NULL) != UCS_OK &&
			       now_s() < deadline)
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
			if (failures)
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
		       "the old data: %s\n", failures ? "FAIL" : "ok");
		if (failures)
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
	       failures ? "FAIL" : "ok");
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
	if (failures == 0) {
		rma_cmd('Q', 0, 0, 0, 0);
		waitpid(peer_pid, NULL, 0);
		peer_pid = 0;
	}
	env_close(&e);
	printf("rma: %s\n", failures ? "FAIL" : "ok");
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	int rc;

	if (geteuid() != 0) {
		fprintf(stderr, "SKIP: needs root (DPDK vdevs)\n");
		return 77;
	}
	snprintf(job, sizeof(job), "uctt%d", (int)getpid());
	atexit(cleanup);
	if (argc > 1 && strcmp(argv[1], "local") == 0)
		rc = test_local();
	else if (argc > 1 && strcmp(argv[1], "config") == 0)
		rc = test_config();
	else if (argc > 1 && strcmp(argv[1], "cycles") == 0)
		rc = test_cycles();
	else if (argc > 1 && strcmp(argv[1], "rma") == 0)
		rc = test_rma();
	else {
		fprintf(stderr, "usage: %s local|cycles|config|rma\n",
			argv[0]);
		return 2;
	}
	return rc;
}
