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
 *   order   fills the send buffer to a peer process, queues pending
 *           requests (their sequence number fixed when queued) and keeps
 *           sending while a second iface's progress polls the port: the
 *           peer must see every sequence number in order (no AM overtakes
 *           the ep's pending requests).
 *   restart a process at the same IP, port and iface id replaces one that
 *           died: an ep from the dead one's address is refused and
 *           nothing meant for it is delivered into the new one.
 *   reconnect  the association to an echoing peer process is shut down
 *           gracefully (peer IDLE, not failed) and requests are queued on
 *           the ep with no send call after: iface progress alone must
 *           start a new association (another assoc id) and dispatch them,
 *           and every echo must come back.
 *   mismatch  a peer process with another SEG_SIZE is not reachable
 *           and ep create refuses it (the error names the variable).
 *   bigseg  SEG_SIZE=256k: 200 KiB bcopy AMs arrive whole and intact.
 *   exit    a sender process exits right after sending while the
 *           receiver does not poll for 2 s: the exit drain keeps the data
 *           until it is acknowledged (UCX_SCTP_DPDK_EXIT_TIMEOUT).
 *   cycles  an iface is opened and closed 50 times; each cycle sends AMs
 *           over a memif pair to a forked peer process, which echoes them,
 *           and waits for the echoes.  Afterwards no mbuf (port mempool in
 *           use), receive descriptor or file descriptor has leaked.
 *           An echo is then awaited by sleeping on the iface's event fd.
 *   rxhold  the AM handler keeps (UCS_INPROGRESS) thousands of AMs echoed
 *           by a forked peer; with 16 sg descriptors both iface pairs
 *           keep receiving (receive-descriptor policy).
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
 * Exit: 0 pass, 1 fail (also when not root: a test that cannot run fails
 * with the reason).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sctp_dpdk.h"

#include <ucs/sys/math.h>
#include <ucs/async/async.h>

#include <rte_mempool.h>

#include <dirent.h>
#include <poll.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
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
	uint8_t data[9000];
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
static uint8_t peer_iface_addr[64]; /* one of its ifaces */

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

/* Peer mode: send queued echoes back (AMs cannot be sent from inside a
 * handler that would have to progress on back-pressure). */
static void echo_drain(iface_t *t)
{
	while (t->echo_head != t->echo_tail) {
		echo_t *q = &t->echo_q[t->echo_head % ECHO_MAX];
		uct_ep_h *ep = &t->echo_eps[q->from % UCT_SCTP_DPDK_MAX_IFACES];
		uct_sctp_dpdk_iface_addr_t addr;
		uint64_t hdr;

		if (*ep == NULL) {
			uct_ep_params_t p = {0};

			p.field_mask = UCT_EP_PARAM_FIELD_IFACE |
				       UCT_EP_PARAM_FIELD_DEV_ADDR |
				       UCT_EP_PARAM_FIELD_IFACE_ADDR;
			p.iface = t->iface;
			/* The sender's process (incarnation, settings) with
			 * the iface id the AM carries. */
			memcpy(&addr, peer_iface_addr, sizeof(addr));
			addr.iface_id = rte_cpu_to_be_16(q->from);
			p.dev_addr = (uct_device_addr_t *)peer_dev_addr;
			p.iface_addr = (uct_iface_addr_t *)&addr;
			if (uct_ep_create(&p, ep) != UCS_OK)
				exit(3);
		}
		if (q->len > 2048) {
			pack_arg_t pa = {q->data, q->len};

			if (uct_ep_am_bcopy(*ep, AM_ID, pack_cb, &pa, 0) !=
			    (ssize_t)q->len)
				return;
			t->echo_head++;
			continue;
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

typedef struct {
	uct_pending_req_t uct;
	uct_ep_h ep;
	unsigned done;
} pend_t;

static ucs_status_t pend_cb(uct_pending_req_t *self)
{
	pend_t *p = ucs_container_of(self, pend_t, uct);
	static uint8_t buf[64];
	uint64_t hdr;

	fill(buf, sizeof(buf), 1, 0xffff);
	memcpy(&hdr, buf, 8);
	if (uct_ep_am_short(p->ep, AM_ID, hdr, buf + 8, sizeof(buf) - 8) !=
	    UCS_OK)
		return UCS_ERR_NO_RESOURCE;
	p->done++;
	return UCS_OK;
}

/*
 * Local delivery is bounded: while the receiver does not progress, sends
 * stop with UCS_ERR_NO_RESOURCE after LOCAL_QUEUE_MAX AMs (they grew an
 * mpool without limit before: UCX's test_uct_pending took the process
 * past 20 GB); a pending request is accepted and dispatched once the
 * receiver drains.
 */
static void test_local_bound(env_t *e, iface_t *a, iface_t *b, uct_ep_h ep)
{
	static uint8_t buf[64];
	unsigned sent = 0, base = b->rx_count;
	double deadline = now_s() + DEADLINE_S;
	ucs_status_t st = UCS_OK;
	pend_t p = {.ep = ep};
	uint64_t hdr;

	fill(buf, sizeof(buf), 1, 0);
	memcpy(&hdr, buf, 8);
	/* No progress: b's queue fills. */
	while (sent < 100 * UCT_SCTP_DPDK_LOCAL_QUEUE_MAX) {
		st = uct_ep_am_short(ep, AM_ID, hdr, buf + 8,
				     sizeof(buf) - 8);
		if (st != UCS_OK)
			break;
		sent++;
	}
	CHECK(st == UCS_ERR_NO_RESOURCE && sent == UCT_SCTP_DPDK_LOCAL_QUEUE_MAX,
	      "local sends without receiver progress: %u accepted, then %s "
	      "(want %u, then NO_RESOURCE)", sent, ucs_status_string(st),
	      UCT_SCTP_DPDK_LOCAL_QUEUE_MAX);
	p.uct.func = pend_cb;
	st = uct_ep_pending_add(ep, &p.uct, 0);
	CHECK(st == UCS_OK, "pending_add on a full local queue: %s",
	      ucs_status_string(st));
	/* A send must not overtake the queued request. */
	st = uct_ep_am_short(ep, AM_ID, hdr, buf + 8, sizeof(buf) - 8);
	CHECK(st == UCS_ERR_NO_RESOURCE, "send past a pending request: %s",
	      ucs_status_string(st));
	while ((p.done == 0 || b->rx_count < base + sent + 1) &&
	       now_s() < deadline) {
		uct_worker_progress(e->worker);
		release_kept(b);
	}
	release_kept(b);
	CHECK(p.done == 1 && b->rx_count == base + sent + 1,
	      "after draining: pending done %u, b got %u of %u", p.done,
	      b->rx_count - base, sent + 1);
	CHECK(uct_ep_flush(ep, 0, NULL) == UCS_OK, "flush after pending");
	printf("local-bound: %u AMs queued, then NO_RESOURCE; pending "
	       "dispatched after the receiver drained: %s\n", sent,
	       failures ? "FAIL" : "ok");
}

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
	test_local_bound(&e, &a, &b, ep);
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
		    (ssize_t)sizeof(peer_dev_addr) ||
	    read(addr_fd, peer_iface_addr, sizeof(peer_iface_addr)) !=
		    (ssize_t)sizeof(peer_iface_addr))
		exit(1);
	while (now_s() < deadline) {
		uct_worker_progress(e.worker);
		release_kept(&t);
		echo_drain(&t);
	}
	exit(0);
}

static pid_t peer_pid;

/*
 * A blocking wait the way ucp_worker_wait does it: arm the iface, sleep on
 * its event fd, progress when it fires.  In inline mode the port is polled
 * by nobody while the worker sleeps, so the fd must fire on its own (the
 * one-shot timer) or the echo is never read: a wait with only an eventfd
 * would block for ever.  Each sleep must end within 1 s.
 */
static void wait_by_event_fd(env_t *e, iface_t *t, uct_ep_h ep)
{
	double deadline = now_s() + DEADLINE_S;
	unsigned want = t->rx_count + 1, sleeps = 0;
	struct pollfd pfd = {.events = POLLIN};
	ucs_status_t st;
	uint16_t id;
	int r;

	CHECK_OK(uct_iface_event_fd_get(t->iface, &pfd.fd), "event fd");
	memcpy(&id, t->iface_addr, 2);
	send_am(e, ep, 0, rte_be_to_cpu_16(id), 0, 64);
	while (t->rx_count < want && now_s() < deadline) {
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
	release_kept(t);
	CHECK(t->rx_count >= want, "echo not received by a blocking wait");
	printf("event-fd: echo received after %u sleeps on the event fd: "
	       "%s\n", sleeps, failures ? "FAIL" : "ok");
}

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
				    sizeof(t.dev_addr) ||
			    write(sv[0], t.iface_addr, sizeof(t.iface_addr)) !=
				    sizeof(t.iface_addr)) {
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

	if (failures == 0) {
		iface_t t;
		uct_ep_h ep;

		iface_open(&e, &t, 0);
		ep = ep_to(&t, dev, ifa);
		wait_by_event_fd(&e, &t, ep);
		while (uct_ep_flush(ep, 0, NULL) != UCS_OK)
			uct_worker_progress(e.worker);
		uct_ep_destroy(ep);
		uct_iface_close(t.iface);
	}

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

/* ---- order: no AM overtakes the ep's pending requests ---- */

#define ORDER_AM_ID 9
#define ORDER_MSGS 20000
#define ORDER_LEN 1800	/* am_short payload: 4-byte seq + filler */
#define ORDER_REQS 64

static uint32_t order_expect, order_rx, order_ooo, order_first_bad = UINT32_MAX;
static uint32_t order_bad;

static ucs_status_t order_cb(void *arg, void *data, size_t length,
			     unsigned flags)
{
	uint32_t seq;
	size_t i;

	memcpy(&seq, (char *)data + 8, 4);
	for (i = 12; i < length; i++)
		if (((uint8_t *)data)[i] != (uint8_t)(seq * 7 + i)) {
			order_bad++;
			break;
		}
	if (seq != order_expect) {
		if (order_ooo++ == 0)
			order_first_bad = seq;
	}
	order_expect = seq + 1;
	order_rx++;
	return UCS_OK;
}

static int order_peer_client; /* restart: n-th client incarnation */

/* Peer: count AMs and check their sequence; report on request. */
static void order_peer_main(int fd)
{
	char prefix[96], dev[256];
	uint32_t report[4];
	double deadline = now_s() + 60;
	uint32_t want = 0;
	iface_t t;
	env_t e;

	if (order_peer_client) {
		/* restart: the parent is the memif server */
		snprintf(prefix, sizeof(prefix), "sdp-%s-c%d", job,
			 order_peer_client);
		snprintf(dev, sizeof(dev), "net_memif0,role=client,id=0,"
			 "socket=%s/memif0.sock,socket-abstract=no",
			 memif_dir);
		set_common_env(dev, "10.77.8.1/24", prefix);
	} else {
		snprintf(prefix, sizeof(prefix), "sdp-%s-r0", job);
		snprintf(dev, sizeof(dev), "net_memif0,role=server,id=0,"
			 "socket=%s/memif0.sock,socket-abstract=no",
			 memif_dir);
		set_common_env(dev, "10.77.8.1/24", prefix);
	}
	env_open(&e);
	iface_open(&e, &t, 0);
	CHECK_OK(uct_iface_set_am_handler(t.iface, ORDER_AM_ID, order_cb, &t,
					  0), "order handler");
	if (write(fd, t.dev_addr, sizeof(t.dev_addr)) < 0 ||
	    write(fd, t.iface_addr, sizeof(t.iface_addr)) < 0)
		exit(1);
	if (read(fd, &want, sizeof(want)) != sizeof(want))
		exit(1);
	/* The final count comes after the parent's flush. */
	while (now_s() < deadline) {
		uct_worker_progress(e.worker);
		if (recv(fd, &want, sizeof(want), MSG_DONTWAIT) ==
		    sizeof(want))
			break;
	}
	while (order_rx < want && now_s() < deadline)
		uct_worker_progress(e.worker);
	report[0] = order_rx;
	report[1] = order_ooo;
	report[2] = order_first_bad;
	report[3] = order_bad;
	if (write(fd, report, sizeof(report)) < 0)
		exit(1);
	/* Stay until the parent is done with the association. */
	while (read(fd, &want, sizeof(want)) > 0)
		;
	exit(0);
}

typedef struct {
	uct_pending_req_t super;
	uct_ep_h ep;
	uint32_t seq;	/* fixed when queued, like a UCP request's data */
	int busy;
} order_req_t;

static unsigned order_dispatched, order_flushed;

static void order_flush_done(uct_completion_t *self)
{
	CHECK(self->status == UCS_OK, "flush completed with %s",
	      ucs_status_string(self->status));
	order_flushed++;
}

static ucs_status_t order_send(uct_ep_h ep, uint32_t seq)
{
	uint8_t buf[ORDER_LEN];
	uint64_t hdr = 0x5e9;

	size_t i;

	for (i = 4; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(seq * 7 + i + 8);
	memcpy(buf, &seq, 4);
	return uct_ep_am_short(ep, ORDER_AM_ID, hdr, buf, sizeof(buf));
}

/* Send one order AM, progressing on back-pressure (20 s deadline). */
static void send_order_one(env_t *e, uct_ep_h ep, uint32_t seq)
{
	double deadline = now_s() + DEADLINE_S;
	ucs_status_t st;

	while ((st = order_send(ep, seq)) == UCS_ERR_NO_RESOURCE &&
	       now_s() < deadline)
		uct_worker_progress(e->worker);
	CHECK(st == UCS_OK, "send seq %u: %s", seq, ucs_status_string(st));
}

static ucs_status_t order_pending_cb(uct_pending_req_t *self)
{
	order_req_t *r = ucs_container_of(self, order_req_t, super);
	ucs_status_t st = order_send(r->ep, r->seq);

	if (st == UCS_OK) {
		r->busy = 0;
		order_dispatched++;
	}
	return st;
}

static int test_order(void)
{
	static order_req_t reqs[ORDER_REQS];
	uint8_t dev[64], ifa[64];
	uint32_t seq = 0, want = ORDER_MSGS, report[4] = {0, 0, 0, 0};
	unsigned pend_adds = 0, i, busy;
	char prefix[96], devargs[256];
	double deadline;
	iface_t a, b;
	int sv[2];
	uct_ep_h ep;
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
		order_peer_main(sv[1]);
	}
	close(sv[1]);
	snprintf(prefix, sizeof(prefix), "sdp-%s-r1", job);
	snprintf(devargs, sizeof(devargs), "net_memif0,role=client,id=0,"
		 "socket=%s/memif0.sock,socket-abstract=no", memif_dir);
	set_common_env(devargs, "10.77.8.2/24", prefix);
	/* A small send buffer fills quickly. */
	setenv("UCX_SCTP_DPDK_SG", "sndbuf=256k", 1);
	env_open(&e);
	/* Two ifaces on one worker: b's progress polls the shared port,
	 * which used to re-open a's ep while its pending queue waited. */
	iface_open(&e, &a, 0);
	iface_open(&e, &b, 0);
	if (read(sv[0], dev, sizeof(dev)) != sizeof(dev) ||
	    read(sv[0], ifa, sizeof(ifa)) != sizeof(ifa) ||
	    write(sv[0], &want, sizeof(want)) != sizeof(want)) {
		fprintf(stderr, "FAIL: peer did not start\n");
		return 1;
	}
	ep = ep_to(&a, dev, ifa);
	deadline = now_s() + 60;
	while (seq < ORDER_MSGS && now_s() < deadline) {
		ucs_status_t st;

		uct_worker_progress(e.worker);
		st = order_send(ep, seq);
		if (st == UCS_OK) {
			seq++;
			continue;
		}
		CHECK(st == UCS_ERR_NO_RESOURCE, "am_short: %s",
		      ucs_status_string(st));
		if (st != UCS_ERR_NO_RESOURCE)
			break;
		for (i = 0; i < ORDER_REQS && reqs[i].busy; i++)
			;
		if (i == ORDER_REQS)
			continue;
		reqs[i].super.func = order_pending_cb;
		reqs[i].ep = ep;
		reqs[i].seq = seq;
		st = uct_ep_pending_add(ep, &reqs[i].super, 0);
		if (st == UCS_OK) {
			reqs[i].busy = 1;
			pend_adds++;
			seq++;
		} else {
			CHECK(st == UCS_ERR_BUSY, "pending_add: %s",
			      ucs_status_string(st));
		}
	}
	do {
		uct_worker_progress(e.worker);
		for (busy = 0, i = 0; i < ORDER_REQS; i++)
			busy += reqs[i].busy;
	} while (busy != 0 && now_s() < deadline);
	CHECK(seq == ORDER_MSGS && busy == 0, "sent %u of %u, %u pending "
	      "left", seq, ORDER_MSGS, busy);
	CHECK(pend_adds > 0, "the send buffer never filled: no pending "
	      "request was queued, nothing tested");
	/* Flush means acknowledged: an iface flush with a completion is in
	 * progress while data is unacknowledged and completes from
	 * progress; when ep flush says UCS_OK nothing is unacknowledged. */
	{
		uct_sctp_dpdk_ep_t *sep = ucs_derived_of(ep, uct_sctp_dpdk_ep_t);
		uct_sctp_dpdk_ctx_t *ctx = uct_sctp_dpdk_ctx_peek();
		uct_completion_t comp = {order_flush_done, 1, UCS_OK};
		uint64_t unacked = 1;
		ucs_status_t st;

		for (i = 0; i < 2000; i++)
			if (order_send(ep, seq + i) != UCS_OK)
				break;
		seq += i;
		want = seq;
		st = uct_iface_flush(a.iface, 0, &comp);
		CHECK(st == UCS_INPROGRESS, "iface flush right after a burst: "
		      "%s", ucs_status_string(st));
		while (order_flushed == 0 && st == UCS_INPROGRESS &&
		       now_s() < deadline)
			uct_worker_progress(e.worker);
		CHECK(st != UCS_INPROGRESS || order_flushed == 1,
		      "iface flush completion called %u times", order_flushed);
		while ((st = uct_ep_flush(ep, 0, NULL)) == UCS_INPROGRESS &&
		       now_s() < deadline)
			uct_worker_progress(e.worker);
		CHECK(st == UCS_OK, "ep flush: %s", ucs_status_string(st));
		ucs_recursive_spin_lock(ctx->lock);
		sg_assoc_unacked(ctx->sg, sep->peer->assoc, &unacked);
		ucs_recursive_spin_unlock(ctx->lock);
		CHECK(unacked == 0, "ep flush said UCS_OK with %" PRIu64
		      " bytes unacknowledged", unacked);
	}
	if (write(sv[0], &want, sizeof(want)) != sizeof(want))
		CHECK(0, "peer gone");
	if (read(sv[0], report, sizeof(report)) != sizeof(report))
		CHECK(0, "no report from the peer");
	CHECK(report[0] == seq, "peer got %u of %u AMs", report[0], seq);
	CHECK(report[1] == 0, "%u AMs out of order (first: seq %u): an AM "
	      "overtook a pending request", report[1], report[2]);
	CHECK(report[3] == 0, "%u AMs corrupted", report[3]);
	printf("order: %u AMs, %u via pending (%u dispatched), peer got %u, "
	       "%u out of order: %s\n", seq, pend_adds, order_dispatched,
	       report[0], report[1], failures ? "FAIL" : "ok");
	uct_ep_destroy(ep);
	uct_iface_close(a.iface);
	uct_iface_close(b.iface);
	env_close(&e);
	close(sv[0]);
	return failures ? 1 : 0;
}

/* ---- bigseg: SEG_SIZE above 64 KiB carries whole AMs ---- */

#define BIG_MSGS 60
#define BIG_LEN (200 << 10)

static size_t big_pack(void *dest, void *arg)
{
	uint32_t seq = *(uint32_t *)arg;
	uint8_t *d = dest;
	size_t i;

	memset(d, 0, 8);
	memcpy(d + 8, &seq, 4);
	for (i = 12; i < BIG_LEN; i++)
		d[i] = (uint8_t)(seq * 7 + i);
	return BIG_LEN;
}

static int test_bigseg(void)
{
	uint8_t dev[64], ifa[64];
	uint32_t want = BIG_MSGS, report[4] = {0, 0, 0, 0}, seq;
	char prefix[96], devargs[256];
	double deadline;
	ssize_t n;
	iface_t a;
	int sv[2];
	uct_ep_h ep;
	uct_iface_attr_t attr;
	env_t e;

	setenv("UCX_SCTP_DPDK_SEG_SIZE", "256k", 1);
	setenv("UCX_SCTP_DPDK_RX_DESCS", "64", 1);
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
		order_peer_main(sv[1]);
	}
	close(sv[1]);
	{
		struct timeval tv = {90, 0}; /* the peer reports by then */

		setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	}
	snprintf(prefix, sizeof(prefix), "sdp-%s-r1", job);
	snprintf(devargs, sizeof(devargs), "net_memif0,role=client,id=0,"
		 "socket=%s/memif0.sock,socket-abstract=no", memif_dir);
	set_common_env(devargs, "10.77.8.2/24", prefix);
	env_open(&e);
	iface_open(&e, &a, 0);
	CHECK_OK(uct_iface_query(a.iface, &attr), "query");
	CHECK(attr.cap.am.max_bcopy >= BIG_LEN, "max_bcopy %zu",
	      attr.cap.am.max_bcopy);
	if (read(sv[0], dev, sizeof(dev)) != sizeof(dev) ||
	    read(sv[0], ifa, sizeof(ifa)) != sizeof(ifa) ||
	    write(sv[0], &want, sizeof(want)) != sizeof(want)) {
		fprintf(stderr, "FAIL: peer did not start\n");
		return 1;
	}
	ep = ep_to(&a, dev, ifa);
	deadline = now_s() + 60;
	for (seq = 0; seq < BIG_MSGS && now_s() < deadline;) {
		n = uct_ep_am_bcopy(ep, ORDER_AM_ID, big_pack, &seq, 0);
		if (n == BIG_LEN) {
			seq++;
			continue;
		}
		CHECK(n == UCS_ERR_NO_RESOURCE, "am_bcopy returned %zd", n);
		if (n != UCS_ERR_NO_RESOURCE)
			break;
		uct_worker_progress(e.worker);
	}
	while (uct_ep_flush(ep, 0, NULL) == UCS_INPROGRESS &&
	       now_s() < deadline)
		uct_worker_progress(e.worker);
	if (write(sv[0], &want, sizeof(want)) != sizeof(want) ||
	    read(sv[0], report, sizeof(report)) != sizeof(report))
		CHECK(0, "no report from the peer");
	CHECK(report[0] == BIG_MSGS && report[1] == 0 && report[3] == 0,
	      "peer got %u of %u 200 KiB AMs, %u out of order, %u corrupted",
	      report[0], BIG_MSGS, report[1], report[3]);
	printf("bigseg: SEG_SIZE=256k, %u AMs of %u bytes sent, peer got %u "
	       "(%u corrupted): %s\n", seq, BIG_LEN, report[0], report[3],
	       failures ? "FAIL" : "ok");
	uct_ep_destroy(ep);
	uct_iface_close(a.iface);
	env_close(&e);
	close(sv[0]);
	return failures ? 1 : 0;
}

/* ---- mismatch: peers with different SEG_SIZE refuse each other ---- */

static int test_mismatch(void)
{
	uint8_t dev[64], ifa[64];
	char prefix[96], devargs[256];
	uct_ep_params_t p = {0};
	ucs_status_t st;
	uct_ep_h ep;
	iface_t a;
	int sv[2];
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
		setenv("UCX_SCTP_DPDK_SEG_SIZE", "128k", 1);
		order_peer_main(sv[1]);
	}
	close(sv[1]);
	snprintf(prefix, sizeof(prefix), "sdp-%s-r1", job);
	snprintf(devargs, sizeof(devargs), "net_memif0,role=client,id=0,"
		 "socket=%s/memif0.sock,socket-abstract=no", memif_dir);
	set_common_env(devargs, "10.77.8.2/24", prefix);
	env_open(&e);
	iface_open(&e, &a, 0);
	if (read(sv[0], dev, sizeof(dev)) != sizeof(dev) ||
	    read(sv[0], ifa, sizeof(ifa)) != sizeof(ifa)) {
		fprintf(stderr, "FAIL: peer did not start\n");
		return 1;
	}
	CHECK(!uct_iface_is_reachable(a.iface, (uct_device_addr_t *)dev,
				      (uct_iface_addr_t *)ifa),
	      "a peer with SEG_SIZE=128k is reachable from 64k");
	p.field_mask = UCT_EP_PARAM_FIELD_IFACE | UCT_EP_PARAM_FIELD_DEV_ADDR |
		       UCT_EP_PARAM_FIELD_IFACE_ADDR;
	p.iface = a.iface;
	p.dev_addr = (const uct_device_addr_t *)dev;
	p.iface_addr = (const uct_iface_addr_t *)ifa;
	st = uct_ep_create(&p, &ep);
	CHECK(st == UCS_ERR_UNREACHABLE, "ep create to a peer with another "
	      "SEG_SIZE: %s", ucs_status_string(st));
	if (st == UCS_OK)
		uct_ep_destroy(ep);
	printf("mismatch: peer SEG_SIZE=128k vs 64k refused (is_reachable 0, "
	       "ep create %s): %s\n", ucs_status_string(st),
	       failures ? "FAIL" : "ok");
	uct_iface_close(a.iface);
	env_close(&e);
	close(sv[0]);
	return failures ? 1 : 0;
}

/* ---- restart: an ep to a replaced process never delivers into the new
 * one at the same address ---- */

static pid_t restart_spawn(int n, int *fd_p)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		exit(1);
	pid = fork();
	if (pid == 0) {
		/* A fresh process image: the parent's EAL and port must not
		 * be inherited. */
		char ns[16], fds[16];

		close(sv[0]);
		snprintf(ns, sizeof(ns), "%d", n);
		snprintf(fds, sizeof(fds), "%d", sv[1]);
		execl("/proc/self/exe", "test_uct_sctp_dpdk_api",
		      "restart-peer", ns, fds, job, (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	*fd_p = sv[0];
	return pid;
}

static void restart_addr(int n, int fd, uint8_t *dev, uint8_t *ifa)
{
	if (read(fd, dev, 64) != 64 || read(fd, ifa, 64) != 64) {
		fprintf(stderr, "FAIL: peer %d did not start\n", n);
		exit(1);
	}
}

static int test_restart(void)
{
	uint8_t dev1[64], ifa1[64], dev2[64], ifa2[64];
	uint32_t want = 1, report[4] = {0, 0, 0, 0};
	char prefix[96], devargs[256];
	uct_ep_params_t p = {0};
	uct_ep_h ep2, ep_old = NULL;
	ucs_status_t st = UCS_OK;
	double t0;
	iface_t a;
	int fd1, fd2;
	pid_t pid1;
	env_t e;

	snprintf(memif_dir, sizeof(memif_dir), "/run/sdp/%s", job);
	mkdir("/run/sdp", 0755);
	if (mkdir(memif_dir, 0700) != 0 && errno != EEXIST) {
		perror(memif_dir);
		return 1;
	}
	snprintf(prefix, sizeof(prefix), "sdp-%s-r0", job);
	snprintf(devargs, sizeof(devargs), "net_memif0,role=server,id=0,"
		 "socket=%s/memif0.sock,socket-abstract=no", memif_dir);
	set_common_env(devargs, "10.77.8.2/24", prefix);
	/* The first process at 10.77.8.1 publishes its address and dies. */
	pid1 = restart_spawn(1, &fd1);
	peer_pid = pid1;
	env_open(&e);
	iface_open(&e, &a, 0);
	restart_addr(1, fd1, dev1, ifa1);
	kill(pid1, SIGKILL);
	waitpid(pid1, NULL, 0);
	close(fd1);
	usleep(20000); /* a later start: a later incarnation */
	/* Its successor at the same IP, port and iface id. */
	peer_pid = restart_spawn(2, &fd2);
	restart_addr(2, fd2, dev2, ifa2);
	/* It polls from here until the final count arrives. */
	if (write(fd2, &want, sizeof(want)) != sizeof(want))
		CHECK(0, "new process gone");
	CHECK(memcmp(dev1, dev2, sizeof(uct_sctp_dpdk_dev_addr_t)) == 0,
	      "the new process has another device address");
	CHECK(memcmp(ifa1, ifa2, 2) == 0, "the new process has another "
	      "iface id");
	ep2 = ep_to(&a, dev2, ifa2);
	send_order_one(&e, ep2, 0);
	/* An ep from the dead process's address (a cached worker address):
	 * refused, or at least never delivered. */
	p.field_mask = UCT_EP_PARAM_FIELD_IFACE | UCT_EP_PARAM_FIELD_DEV_ADDR |
		       UCT_EP_PARAM_FIELD_IFACE_ADDR;
	p.iface = a.iface;
	p.dev_addr = (const uct_device_addr_t *)dev1;
	p.iface_addr = (const uct_iface_addr_t *)ifa1;
	st = uct_ep_create(&p, &ep_old);
	if (st == UCS_OK)
		send_order_one(&e, ep_old, 1);
	while (uct_ep_flush(ep2, 0, NULL) == UCS_INPROGRESS)
		uct_worker_progress(e.worker);
	t0 = now_s();
	while (now_s() < t0 + 0.5)
		uct_worker_progress(e.worker);
	if (write(fd2, &want, sizeof(want)) != sizeof(want) ||
	    read(fd2, report, sizeof(report)) != sizeof(report))
		CHECK(0, "no report from the new process");
	CHECK(st == UCS_ERR_UNREACHABLE, "ep create from the replaced "
	      "process's address: %s", ucs_status_string(st));
	CHECK(report[0] == 1, "the new process got %u AMs, expected 1 (one "
	      "was meant for the process it replaced)", report[0]);
	printf("restart: ep from the old address %s, new process got %u "
	       "AM(s): %s\n", ucs_status_string(st), report[0],
	       failures ? "FAIL" : "ok");
	if (ep_old != NULL && st == UCS_OK)
		uct_ep_destroy(ep_old);
	uct_ep_destroy(ep2);
	uct_iface_close(a.iface);
	env_close(&e);
	close(fd2);
	return failures ? 1 : 0;
}

/* ---- exit: a process that exits right after sending loses nothing ---- */

#define EXIT_MSGS 125
#define EXIT_LEN 8000
#define EXIT_SLEEP_S 2.0

/* Sender (child): one AM to bring the association up, wait for "go",
 * send EXIT_MSGS AMs (taken whole by usrsctp, the receiver is not polling
 * so nothing is acknowledged) and exit at once: the exit drain must keep
 * the data until the receiver acknowledged it. */
static void exit_sender_main(int fd)
{
	char prefix[96], dev[256];
	uint8_t rdev[64], rifa[64];
	char go;
	iface_t t;
	env_t e;
	uct_ep_h ep;
	unsigned k;

	snprintf(prefix, sizeof(prefix), "sdp-%s-r1", job);
	snprintf(dev, sizeof(dev), "net_memif0,role=client,id=0,socket=%s/"
		 "memif0.sock,socket-abstract=no", memif_dir);
	set_common_env(dev, "10.77.8.2/24", prefix);
	env_open(&e);
	iface_open(&e, &t, 0);
	if (read(fd, rdev, sizeof(rdev)) != sizeof(rdev) ||
	    read(fd, rifa, sizeof(rifa)) != sizeof(rifa))
		_exit(1);
	ep = ep_to(&t, rdev, rifa);
	send_am(&e, ep, 2, 1, 0, 100);
	if (write(fd, "u", 1) != 1)
		_exit(1);
	/* Keep polling: the AM leaves the port's TX queue from the poll. */
	while (recv(fd, &go, 1, MSG_DONTWAIT) != 1)
		uct_worker_progress(e.worker);
	for (k = 1; k <= EXIT_MSGS; k++)
		send_am(&e, ep, 2, 1, (uint16_t)k, EXIT_LEN);
	exit(failures ? 1 : 0); /* atexit: the transport's exit drain */
}

static int test_exit(void)
{
	char prefix[96], devargs[256], c;
	double t0, deadline;
	int sv[2], st = 0;
	iface_t t;
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
		exit_sender_main(sv[1]);
	}
	close(sv[1]);
	snprintf(prefix, sizeof(prefix), "sdp-%s-r0", job);
	snprintf(devargs, sizeof(devargs), "net_memif0,role=server,id=0,"
		 "socket=%s/memif0.sock,socket-abstract=no", memif_dir);
	set_common_env(devargs, "10.77.8.1/24", prefix);
	env_open(&e);
	iface_open(&e, &t, 0);
	if (write(sv[0], t.dev_addr, sizeof(t.dev_addr)) < 0 ||
	    write(sv[0], t.iface_addr, sizeof(t.iface_addr)) < 0)
		return 1;
	/* Poll until the first AM arrived and the sender said so. */
	deadline = now_s() + DEADLINE_S;
	while ((t.rx_count < 1 || recv(sv[0], &c, 1, MSG_DONTWAIT) != 1) &&
	       now_s() < deadline) {
		uct_worker_progress(e.worker);
		release_kept(&t);
	}
	CHECK(t.rx_count == 1, "association did not come up (%u AMs)",
	      t.rx_count);
	/* Stop polling: nothing the sender sends now is acknowledged until
	 * we come back, after the sender has begun to exit. */
	if (write(sv[0], "g", 1) != 1)
		return 1;
	t0 = now_s();
	while (now_s() < t0 + EXIT_SLEEP_S)
		usleep(10000);
	deadline = now_s() + DEADLINE_S;
	while (t.rx_count < EXIT_MSGS + 1 && now_s() < deadline) {
		uct_worker_progress(e.worker);
		release_kept(&t);
	}
	waitpid(peer_pid, &st, 0);
	peer_pid = 0;
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "sender status 0x%x",
	      st);
	CHECK(t.rx_count == EXIT_MSGS + 1, "received %u of %u AMs the sender "
	      "sent before exiting", t.rx_count - 1, EXIT_MSGS);
	CHECK(t.rx_bad == 0, "%u AMs corrupted", t.rx_bad);
	printf("exit: sender exited right after %u AMs while the receiver "
	       "slept %.1f s; received %u: %s\n", EXIT_MSGS, EXIT_SLEEP_S,
	       t.rx_count - 1, failures ? "FAIL" : "ok");
	uct_iface_close(t.iface);
	env_close(&e);
	close(sv[0]);
	return failures ? 1 : 0;
}

/* ---- rxhold: UCX keeps thousands of received AMs; reading goes on ---- */

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

	if (!verify(data, length))
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
	double deadline = now_s() + DEADLINE_S;

	while (h->rx < want && now_s() < deadline)
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
	char prefix[96], devargs[256];
	uct_sctp_dpdk_ctx_t *ctx;
	unsigned i, lent, held;
	iface_t a, b;
	uct_ep_h ep_a, ep_b;
	int sv[2];
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
	setenv("UCX_SCTP_DPDK_RX_DESCS", "16", 1);
	/* The dedicated polling thread copies and queues; fast failure
	 * detection for the wakeup check at the end. */
	setenv("UCX_SCTP_DPDK_PROGRESS", "thread", 1);
	setenv("UCX_SCTP_DPDK_SG", "rto_min_ms=50 rto_initial_ms=100 "
	       "rto_max_ms=200 path_max_rxt=3 hb_interval_ms=100", 1);
	env_open(&e);
	iface_open(&e, &a, 72);
	iface_open(&e, &b, 0);
	h.rx_headroom = 72;
	CHECK_OK(uct_iface_set_am_handler(a.iface, AM_ID, hold_cb, &h, 0),
		 "hold handler");
	if (read(sv[0], dev, sizeof(dev)) != sizeof(dev) ||
	    read(sv[0], ifa, sizeof(ifa)) != sizeof(ifa) ||
	    write(sv[0], a.dev_addr, sizeof(a.dev_addr)) != sizeof(a.dev_addr) ||
	    write(sv[0], a.iface_addr, sizeof(a.iface_addr)) !=
		    sizeof(a.iface_addr)) {
		fprintf(stderr, "FAIL: peer did not start\n");
		return 1;
	}
	ep_a = ep_to(&a, dev, ifa);
	ep_b = ep_to(&b, dev, ifa);
	ctx = uct_sctp_dpdk_ctx_peek();
	for (i = 0; i < HOLD_SMALL && failures == 0; i++) {
		uint16_t id;

		memcpy(&id, a.iface_addr, 2);
		send_am(&e, ep_a, 0, rte_be_to_cpu_16(id), (uint16_t)i, 64);
		if ((i + 1) % HOLD_BATCH == 0)
			CHECK(hold_wait(&e, &h, i + 1),
			      "iface a got %u of %u echoes (kept %u)", h.rx,
			      i + 1, h.n_desc);
	}
	for (i = 0; i < HOLD_LARGE && failures == 0; i++) {
		uint16_t id;

		memcpy(&id, a.iface_addr, 2);
		send_am(&e, ep_a, 2, rte_be_to_cpu_16(id), (uint16_t)i, 8000);
	}
	CHECK(hold_wait(&e, &h, HOLD_SMALL + HOLD_LARGE),
	      "iface a got %u of %u echoes (kept %u)", h.rx,
	      HOLD_SMALL + HOLD_LARGE, h.n_desc);
	/* The second pair still receives. */
	for (i = 0; i < 10 && failures == 0; i++) {
		uint16_t id;

		memcpy(&id, b.iface_addr, 2);
		send_am(&e, ep_b, i % 4, rte_be_to_cpu_16(id), (uint16_t)i,
			i % 4 >= 2 ? 5000 : 100);
	}
	CHECK(wait_count(&e, &b, 10), "iface b got %u of 10 echoes while a "
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
	       failures ? "FAIL" : "ok");
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
		double deadline = now_s() + DEADLINE_S;
		ucs_status_t st;

		CHECK_OK(uct_iface_event_fd_get(a.iface, &pfd.fd), "event fd");
		kill(peer_pid, SIGKILL);
		waitpid(peer_pid, NULL, 0);
		peer_pid = 0;
		while (err_calls == 0 && now_s() < deadline) {
			st = uct_iface_event_arm(a.iface, UCT_EVENT_RECV);
			if (st == UCS_OK &&
			    poll(&pfd, 1, (int)(DEADLINE_S * 1000)) != 1)
				break;
			uct_worker_progress(e.worker);
		}
		CHECK(err_calls >= 1, "no error reported to a worker waiting "
		      "on the event fd after the peer died");
		printf("rxhold: peer killed; the worker asleep on its event fd "
		       "woke and got the error: %s\n",
		       failures ? "FAIL" : "ok");
	}
	uct_ep_destroy(ep_a);
	uct_ep_destroy(ep_b);
	uct_iface_close(a.iface);
	uct_iface_close(b.iface);
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
		/* above the default 4 MiB send buffer */
		{"UCX_SCTP_DPDK_SEG_SIZE", "8m"},
		{"UCX_SCTP_DPDK_EXIT_TIMEOUT", "-1s"},
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
		unsetenv("UCX_SCTP_DPDK_EXIT_TIMEOUT");
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
	unsetenv("UCX_SCTP_DPDK_EXIT_TIMEOUT");
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

/* ---- reconnect: pending requests go out after a graceful shutdown ---- */

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

	fill(buf, sizeof(buf), r->from, r->seq);
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
	char prefix[96], devargs[256];
	uct_sctp_dpdk_peer_t *peer;
	uct_sctp_dpdk_ctx_t *ctx;
	sg_assoc_t assoc_old;
	unsigned k, done;
	double t0, deadline;
	uint16_t id;
	ucs_status_t st;
	iface_t t;
	int sv[2], rc;
	uct_ep_h ep;
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
	env_open(&e);
	iface_open(&e, &t, 0);
	if (read(sv[0], dev, sizeof(dev)) != sizeof(dev) ||
	    read(sv[0], ifa, sizeof(ifa)) != sizeof(ifa) ||
	    write(sv[0], t.dev_addr, sizeof(t.dev_addr)) !=
		    sizeof(t.dev_addr) ||
	    write(sv[0], t.iface_addr, sizeof(t.iface_addr)) !=
		    sizeof(t.iface_addr)) {
		fprintf(stderr, "FAIL: peer did not start\n");
		return 1;
	}
	ep = ep_to(&t, dev, ifa);
	memcpy(&id, t.iface_addr, 2);
	id = rte_be_to_cpu_16(id);
	ctx = uct_sctp_dpdk_ctx_peek();
	peer = ucs_derived_of(ep, uct_sctp_dpdk_ep_t)->peer;

	/* 1. The association works: echoes come back. */
	for (k = 0; k < RECONNECT_FIRST; k++)
		send_am(&e, ep, 0, id, (uint16_t)k, 64);
	CHECK(wait_count(&e, &t, RECONNECT_FIRST), "%u of %u echoes before "
	      "the shutdown", t.rx_count, RECONNECT_FIRST);
	CHECK(peer->state == UCT_SCTP_DPDK_PEER_UP, "association not UP "
	      "after the first echoes (state %d)", (int)peer->state);
	if (failures)
		goto out;
	assoc_old = peer->assoc;

	/* 2. Graceful shutdown: the peer must go IDLE, not failed. */
	ucs_recursive_spin_lock(ctx->lock);
	rc = sg_disconnect(ctx->sg, peer->assoc);
	ucs_recursive_spin_unlock(ctx->lock);
	CHECK(rc == 0, "sg_disconnect: %d", rc);
	deadline = now_s() + DEADLINE_S;
	while (peer->state != UCT_SCTP_DPDK_PEER_IDLE && now_s() < deadline)
		uct_worker_progress(e.worker);
	CHECK(peer->state == UCT_SCTP_DPDK_PEER_IDLE, "association %u not "
	      "IDLE %d s after sg_disconnect (state %d)", assoc_old,
	      DEADLINE_S, (int)peer->state);
	CHECK(!uct_sctp_dpdk_ep_is_failed(
		      ucs_derived_of(ep, uct_sctp_dpdk_ep_t)),
	      "a graceful shutdown failed the ep");
	if (failures)
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
	if (failures)
		goto out;

	/* 4. Progress alone dispatches them over a new association. */
	t0 = now_s();
	deadline = t0 + DEADLINE_S;
	do {
		uct_worker_progress(e.worker);
		release_kept(&t);
		for (done = 0, k = 0; k < RECONNECT_PENDING; k++)
			done += reqs[k].done;
	} while ((done < RECONNECT_PENDING ||
		  t.rx_count < RECONNECT_FIRST + RECONNECT_PENDING) &&
		 now_s() < deadline);
	release_kept(&t);
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
	CHECK(err_calls == 0, "error handler called %u times (%s)",
	      err_calls, ucs_status_string(err_seen));
	printf("reconnect: association %u shut down gracefully, %u of %u "
	       "pending requests dispatched, now association %u state %d, "
	       "%u echoes in %.2f s: %s\n", assoc_old, done,
	       RECONNECT_PENDING, peer->assoc, (int)peer->state, t.rx_count,
	       now_s() - t0, failures ? "FAIL" : "ok");
out:
	uct_ep_pending_purge(ep, reconnect_purge_cb, NULL);
	uct_ep_destroy(ep);
	uct_iface_close(t.iface);
	env_close(&e);
	close(sv[0]);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	int rc;

	if (geteuid() != 0) {
		fprintf(stderr, "FAIL: needs root (DPDK vdevs): run the test "
			"as root\n");
		return 1;
	}
	if (argc == 5 && strcmp(argv[1], "restart-peer") == 0) {
		/* exec'd by test_restart: n, socket fd, the parent's job */
		snprintf(job, sizeof(job), "%s", argv[4]);
		snprintf(memif_dir, sizeof(memif_dir), "/run/sdp/%s", job);
		order_peer_client = atoi(argv[2]);
		order_peer_main(atoi(argv[3]));
	}
	snprintf(job, sizeof(job), "uctt%d", (int)getpid());
	atexit(cleanup);
	if (argc > 1 && strcmp(argv[1], "local") == 0)
		rc = test_local();
	else if (argc > 1 && strcmp(argv[1], "config") == 0)
		rc = test_config();
	else if (argc > 1 && strcmp(argv[1], "cycles") == 0)
		rc = test_cycles();
	else if (argc > 1 && strcmp(argv[1], "order") == 0)
		rc = test_order();
	else if (argc > 1 && strcmp(argv[1], "exit") == 0)
		rc = test_exit();
	else if (argc > 1 && strcmp(argv[1], "bigseg") == 0)
		rc = test_bigseg();
	else if (argc > 1 && strcmp(argv[1], "mismatch") == 0)
		rc = test_mismatch();
	else if (argc > 1 && strcmp(argv[1], "restart") == 0)
		rc = test_restart();
	else if (argc > 1 && strcmp(argv[1], "reconnect") == 0)
		rc = test_reconnect();
	else if (argc > 1 && strcmp(argv[1], "rxhold") == 0)
		rc = test_rxhold();
	else if (argc > 1 && strcmp(argv[1], "rma") == 0)
		rc = test_rma();
	else {
		fprintf(stderr, "usage: %s local|cycles|order|exit|bigseg|"
			"mismatch|restart|reconnect|rxhold|rma|config\n", argv[0]);
		return 2;
	}
	return rc;
}
