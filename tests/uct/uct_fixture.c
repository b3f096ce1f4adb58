/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * uct_fixture.c - the shared fixture of the UCT API tests: UCT context and
 * iface set-up, AM helpers, the forked memif peer and its two ready-made
 * roles (echo, sequence counter), the program's main and exit cleanup.
 * See uct_fixture.h.
 */
#include "uct_fixture.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int fx_failures;
int fx_iface_no_err_handler;
char fx_memif_dir[128];
char fx_job[64];
pid_t fx_peer_pid;
uint8_t fx_peer_dev_addr[64];
uint8_t fx_peer_iface_addr[64];
unsigned fx_err_calls;
ucs_status_t fx_err_seen;
int fx_seq_peer_client;

double fx_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int fx_count_fds(void)
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

void fx_env_open(env_t *e)
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

void fx_env_close(env_t *e)
{
	uct_config_release(e->config);
	uct_md_close(e->md);
	uct_worker_destroy(e->worker);
	ucs_async_context_destroy(e->async);
}

static void fx_comp_cb(uct_completion_t *self)
{
	fx_comp_t *c = ucs_container_of(self, fx_comp_t, super);

	c->calls++;
	c->status = self->status;
}

void fx_comp_init(fx_comp_t *c)
{
	c->super.func = fx_comp_cb;
	c->super.count = 1;
	c->super.status = UCS_OK;
	c->calls = 0;
	c->status = UCS_OK;
}

/* Payload: [u16 sender iface id][u16 seq][bytes: (seq + i) & 0xff]. */
void fx_fill(uint8_t *buf, size_t len, uint16_t from, uint16_t seq)
{
	size_t i;

	memcpy(buf, &from, 2);
	memcpy(buf + 2, &seq, 2);
	for (i = 4; i < len; i++)
		buf[i] = (uint8_t)(seq + i);
}

int fx_verify(const uint8_t *buf, size_t len)
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

ucs_status_t fx_am_cb(void *arg, void *data, size_t length,
			  unsigned flags)
{
	iface_t *t = arg;

	if (!fx_verify(data, length))
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

void fx_release_kept(iface_t *t)
{
	while (t->nkept > 0)
		uct_iface_release_desc(t->kept[--t->nkept]);
}

size_t fx_pack_cb(void *dest, void *arg)
{
	pack_arg_t *a = arg;

	memcpy(dest, a->buf, a->len);
	return a->len;
}

/* Peer mode: send queued echoes back (AMs cannot be sent from inside a
 * handler that would have to progress on back-pressure). */
void fx_echo_drain(iface_t *t)
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
			memcpy(&addr, fx_peer_iface_addr, sizeof(addr));
			addr.iface_id = rte_cpu_to_be_16(q->from);
			p.dev_addr = (uct_device_addr_t *)fx_peer_dev_addr;
			p.iface_addr = (uct_iface_addr_t *)&addr;
			if (uct_ep_create(&p, ep) != UCS_OK)
				exit(3);
		}
		if (q->len > 2048) {
			pack_arg_t pa = {q->data, q->len};

			if (uct_ep_am_bcopy(*ep, AM_ID, fx_pack_cb, &pa, 0) !=
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

ucs_status_t fx_err_handler(void *arg, uct_ep_h ep, ucs_status_t status)
{
	fx_err_calls++;
	fx_err_seen = status;
	return UCS_OK;
}

void fx_iface_open(env_t *e, iface_t *t, size_t rx_headroom)
{
	uct_iface_params_t p = {0};
	uct_iface_attr_t attr;

	memset(t, 0, sizeof(*t));
	t->env = e;
	t->rx_headroom = rx_headroom;
	p.field_mask = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
		       UCT_IFACE_PARAM_FIELD_DEVICE |
		       UCT_IFACE_PARAM_FIELD_RX_HEADROOM;
	if (!fx_iface_no_err_handler)
		p.field_mask |= UCT_IFACE_PARAM_FIELD_ERR_HANDLER;
	p.err_handler = fx_err_handler;
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
	CHECK_OK(uct_iface_set_am_handler(t->iface, AM_ID, fx_am_cb, t, 0),
		 "am handler");
	uct_iface_progress_enable(t->iface,
				  UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
}

uct_ep_h fx_ep_to(iface_t *from, const uint8_t *dev_addr,
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
void fx_send_am(env_t *e, uct_ep_h ep, int m, uint16_t from,
		    uint16_t seq, size_t len)
{
	static uint8_t buf[65536];
	double deadline = fx_now_s() + DEADLINE_S;
	ucs_status_t st;
	uct_iov_t iov[3];
	pack_arg_t pa;
	uint64_t hdr;

	fx_fill(buf, len, from, seq);
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
			st = uct_ep_am_bcopy(ep, AM_ID, fx_pack_cb, &pa, 0) ==
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
		if (st != UCS_ERR_NO_RESOURCE || fx_now_s() > deadline) {
			fprintf(stderr, "FAIL: send method %d len %zu: %s\n",
				m, len, ucs_status_string(st));
			fx_failures++;
			return;
		}
		uct_worker_progress(e->worker);
	}
}

int fx_wait_count(env_t *e, iface_t *t, unsigned want)
{
	double deadline = fx_now_s() + DEADLINE_S;

	while (t->rx_count < want && fx_now_s() < deadline) {
		uct_worker_progress(e->worker);
		fx_release_kept(t);
	}
	fx_release_kept(t);
	return t->rx_count >= want;
}

void fx_set_common_env(const char *devargs, const char *ip,
			   const char *prefix)
{
	setenv("UCX_SCTP_DPDK_DEVARGS", devargs, 1);
	setenv("UCX_SCTP_DPDK_IP", ip, 1);
	setenv("UCX_SCTP_DPDK_PREFIX", prefix, 1);
	setenv("UCX_SCTP_DPDK_IDLE_SLEEP_US", "20", 1);
}

void fx_memif_env(int server, const char *ip, const char *name)
{
	char prefix[96], devargs[256];

	snprintf(prefix, sizeof(prefix), "sdp-%s-%s", fx_job, name);
	snprintf(devargs, sizeof(devargs), "net_memif0,role=%s,id=0,"
		 "socket=%s/memif0.sock,socket-abstract=no",
		 server ? "server" : "client", fx_memif_dir);
	fx_set_common_env(devargs, ip, prefix);
}

int fx_memif_dir_create(void)
{
	snprintf(fx_memif_dir, sizeof(fx_memif_dir), "/run/sdp/%s", fx_job);
	mkdir("/run/sdp", 0755);
	if (mkdir(fx_memif_dir, 0700) != 0 && errno != EEXIST) {
		fprintf(stderr, "FAIL: mkdir %s: %m\n", fx_memif_dir);
		return -1;
	}
	return 0;
}

int fx_fork_peer(void (*peer_main)(int fd))
{
	int sv[2];

	if (fx_memif_dir_create() != 0)
		return -1;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
		fprintf(stderr, "FAIL: socketpair: %m\n");
		return -1;
	}
	fx_peer_pid = fork();
	if (fx_peer_pid < 0) {
		fprintf(stderr, "FAIL: fork: %m\n");
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (fx_peer_pid == 0) {
		close(sv[0]);
		/* dies with the test (its reaper then cleans up) */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == 1)
			_exit(1);
		peer_main(sv[1]);
		_exit(1); /* peer_main must exit */
	}
	close(sv[1]);
	return sv[0];
}

int fx_fork_client(void (*peer_main)(int fd))
{
	int fd = fx_fork_peer(peer_main);

	if (fd >= 0)
		fx_memif_env(0, "10.77.8.2/24", "r1");
	return fd;
}

int fx_swap_addr(int fd, const iface_t *t, uint8_t *dev, uint8_t *ifa)
{
	if (fx_read_addr(fd, dev, ifa) != 0 || fx_write_addr(fd, t) != 0) {
		fprintf(stderr, "FAIL: peer did not start\n");
		return -1;
	}
	return 0;
}

int fx_seq_peer_addr(int fd, uint8_t *dev, uint8_t *ifa, uint32_t count)
{
	if (fx_read_addr(fd, dev, ifa) != 0 ||
	    write(fd, &count, sizeof(count)) != sizeof(count)) {
		fprintf(stderr, "FAIL: peer did not start\n");
		return -1;
	}
	return 0;
}

int fx_seq_peer_report(int fd, uint32_t count, uint32_t report[4],
		       int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	if (write(fd, &count, sizeof(count)) != sizeof(count))
		return -1;
	if (poll(&pfd, 1, timeout_ms) != 1 ||
	    read(fd, report, 4 * sizeof(*report)) !=
		    (ssize_t)(4 * sizeof(*report)))
		return -2;
	return 0;
}

int fx_read_addr(int fd, uint8_t *dev, uint8_t *ifa)
{
	if (read(fd, dev, 64) != 64 || read(fd, ifa, 64) != 64)
		return -1;
	return 0;
}

int fx_write_addr(int fd, const iface_t *t)
{
	if (write(fd, t->dev_addr, sizeof(t->dev_addr)) !=
		    (ssize_t)sizeof(t->dev_addr) ||
	    write(fd, t->iface_addr, sizeof(t->iface_addr)) !=
		    (ssize_t)sizeof(t->iface_addr))
		return -1;
	return 0;
}

void fx_echo_peer_main(int fd)
{
	iface_t t;
	env_t e;
	double deadline = fx_now_s() + 120;

	fx_memif_env(1, "10.77.8.1/24", "r0");
	fx_env_open(&e);
	fx_iface_open(&e, &t, 0);
	t.echo = 1;
	t.echo_q = calloc(ECHO_MAX, sizeof(*t.echo_q));
	if (t.echo_q == NULL || fx_write_addr(fd, &t) != 0 ||
	    fx_read_addr(fd, fx_peer_dev_addr, fx_peer_iface_addr) != 0)
		exit(1);
	while (fx_now_s() < deadline) {
		uct_worker_progress(e.worker);
		fx_release_kept(&t);
		fx_echo_drain(&t);
	}
	exit(0);
}

static void fx_cleanup(void)
{
	char cmd[512];

	if (fx_peer_pid > 0) {
		kill(fx_peer_pid, SIGKILL);
		waitpid(fx_peer_pid, NULL, 0);
		fx_peer_pid = 0;
	}
	if (fx_memif_dir[0] != '\0') {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx_memif_dir);
		if (system(cmd) != 0)
			fprintf(stderr, "cleanup: %s failed\n", cmd);
		/* the runtime dirs a killed or crashed peer left */
		snprintf(cmd, sizeof(cmd), "sdp-%s-", fx_job);
		dp_eal_runtime_dirs_remove(cmd);
	}
}

static uint32_t seq_expect, seq_rx, seq_ooo, seq_first_bad = UINT32_MAX;
static uint32_t seq_bad;

static ucs_status_t seq_cb(void *arg, void *data, size_t length,
			     unsigned flags)
{
	uint32_t seq;
	size_t i;

	memcpy(&seq, (char *)data + 8, 4);
	for (i = 12; i < length; i++)
		if (((uint8_t *)data)[i] != (uint8_t)(seq * 7 + i)) {
			seq_bad++;
			break;
		}
	if (seq != seq_expect) {
		if (seq_ooo++ == 0)
			seq_first_bad = seq;
	}
	seq_expect = seq + 1;
	seq_rx++;
	return UCS_OK;
}

/* Peer: count AMs and check their sequence; report on request. */
void fx_seq_peer_main(int fd)
{
	uint32_t report[4];
	double deadline = fx_now_s() + 60;
	uint32_t want = 0;
	char name[16];
	iface_t t;
	env_t e;

	if (fx_seq_peer_client) {
		/* restart: the parent is the memif server */
		snprintf(name, sizeof(name), "c%d", fx_seq_peer_client);
		fx_memif_env(0, "10.77.8.1/24", name);
	} else {
		fx_memif_env(1, "10.77.8.1/24", "r0");
	}
	fx_env_open(&e);
	fx_iface_open(&e, &t, 0);
	CHECK_OK(uct_iface_set_am_handler(t.iface, SEQ_AM_ID, seq_cb, &t,
					  0), "order handler");
	if (fx_write_addr(fd, &t) != 0)
		exit(1);
	if (read(fd, &want, sizeof(want)) != sizeof(want))
		exit(1);
	/* The final count comes after the parent's flush. */
	while (fx_now_s() < deadline) {
		uct_worker_progress(e.worker);
		if (recv(fd, &want, sizeof(want), MSG_DONTWAIT) ==
		    sizeof(want))
			break;
	}
	while (seq_rx < want && fx_now_s() < deadline)
		uct_worker_progress(e.worker);
	report[0] = seq_rx;
	report[1] = seq_ooo;
	report[2] = seq_first_bad;
	report[3] = seq_bad;
	if (write(fd, report, sizeof(report)) < 0)
		exit(1);
	/* Stay until the parent is done with the association. */
	while (read(fd, &want, sizeof(want)) > 0)
		;
	exit(0);
}

ucs_status_t fx_seq_send(uct_ep_h ep, uint32_t seq)
{
	uint8_t buf[SEQ_LEN];
	uint64_t hdr = 0x5e9;

	size_t i;

	for (i = 4; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(seq * 7 + i + 8);
	memcpy(buf, &seq, 4);
	return uct_ep_am_short(ep, SEQ_AM_ID, hdr, buf, sizeof(buf));
}

size_t fx_seq_pack(void *dest, size_t len, uint32_t seq)
{
	uint8_t *d = dest;
	size_t i;

	memset(d, 0, 8);
	memcpy(d + 8, &seq, 4);
	for (i = 12; i < len; i++)
		d[i] = (uint8_t)(seq * 7 + i);
	return len;
}

/* Send one order AM, progressing on back-pressure (20 s deadline). */
void fx_seq_send_one(env_t *e, uct_ep_h ep, uint32_t seq)
{
	double deadline = fx_now_s() + DEADLINE_S;
	ucs_status_t st;

	while ((st = fx_seq_send(ep, seq)) == UCS_ERR_NO_RESOURCE &&
	       fx_now_s() < deadline)
		uct_worker_progress(e->worker);
	CHECK(st == UCS_OK, "send seq %u: %s", seq, ucs_status_string(st));
}

/*
 * The job's reaper: a process in a session of its own (outside the group
 * a test runner kills) that waits until the test and its peers are all
 * gone -- they hold the write end of its pipe; a peer dies with the test
 * (PR_SET_PDEATHSIG) -- and then removes what a test that died without
 * its exit cleanup (killed, crashed, aborted) leaves: /run/sdp/<job> and
 * /var/run/dpdk/sdp-<job>-* of EALs that no longer run.  After a clean
 * exit it finds nothing.
 */
#define FX_REAPER_MAX_S 3600 /* a leaked pipe end: give up waiting */

static void fx_reaper_main(int rd)
{
	struct pollfd pfd = { .fd = 3, .events = POLLIN };
	char cmd[256], c;
	int null_fd;

	null_fd = open("/dev/null", O_RDWR);
	if (null_fd < 0 || dup2(rd, 3) != 3 || dup2(null_fd, 0) != 0 ||
	    dup2(null_fd, 1) != 1 || dup2(null_fd, 2) != 2)
		_exit(1);
	/* nothing of the test's: a runner waits for its output pipes */
	closefrom(4);
	while (poll(&pfd, 1, FX_REAPER_MAX_S * 1000) == 1 &&
	       read(3, &c, 1) == 1)
		; /* nobody writes: only EOF ends the wait */
	snprintf(cmd, sizeof(cmd), "rm -rf '/run/sdp/%s'", fx_job);
	if (system(cmd) != 0)
		_exit(1);
	snprintf(cmd, sizeof(cmd), "sdp-%s-", fx_job);
	dp_eal_runtime_dirs_remove(cmd);
	_exit(0);
}

static void fx_reaper_start(void)
{
	int p[2], st;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) != 0) {
		fprintf(stderr, "warning: no cleanup after a killed test: "
			"pipe: %m\n");
		return;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(p[1]);
		setsid();
		if (fork() != 0)
			_exit(0); /* the reaper is reparented, never ours */
		fx_reaper_main(p[0]);
	}
	close(p[0]);
	if (pid < 0) {
		fprintf(stderr, "warning: no cleanup after a killed test: "
			"fork: %m\n");
		close(p[1]);
		return;
	}
	waitpid(pid, &st, 0);
	/* p[1] stays open until this process and its peers are gone */
}

int fx_run(int (*test)(void))
{
	if (geteuid() != 0) {
		fprintf(stderr, "FAIL: needs root (DPDK vdevs): run the test "
			"as root\n");
		return 1;
	}
	/* Also keeps libuct_sctp_dpdk.so linked: the component registers from
	 * its ELF constructor, and --as-needed drops a library none of whose
	 * symbols the program uses. */
	if (uct_sctp_dpdk_ctx_peek() != NULL) {
		fprintf(stderr, "FAIL: a transport context exists before the "
			"test opened anything\n");
		return 1;
	}
	snprintf(fx_job, sizeof(fx_job), "uctt%d", (int)getpid());
	fx_reaper_start();
	atexit(fx_cleanup);
	return test();
}

uint64_t fx_ep_unacked(uct_ep_h ep)
{
	uct_sctp_dpdk_ep_t *sep = ucs_derived_of(ep, uct_sctp_dpdk_ep_t);
	uct_sctp_dpdk_ctx_t *ctx = uct_sctp_dpdk_ctx_peek();
	uint64_t unacked = UINT64_MAX;

	ucs_recursive_spin_lock(ctx->lock);
	sg_assoc_unacked(sep->peer->sg, sep->peer->assoc, &unacked);
	ucs_recursive_spin_unlock(ctx->lock);
	return unacked;
}
