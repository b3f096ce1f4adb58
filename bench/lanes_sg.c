/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lanes_sg.c - sdp-lanes-sg: does a lane per core scale?  The cleanest
 * experiment on a small machine: ONE process holds both ends of a
 * memif pair with --lanes queue pairs (dp queues=N); each end has an sg
 * endpoint with N lanes (SCTP ports 5000+k and 6000+k), lane k of the
 * client sends to lane k of the server, and thread k (pinned to CPU
 * --cpu0 + k) polls queue k of both ends and does lane k's sends and
 * receives.  Thread 0 also runs usrsctp's timers and ARP (the base
 * endpoints).
 *
 *   --lock global   every poll and send takes one process-wide mutex, as
 *                   the UCX transport's uct_sctp_dpdk_lock does (default)
 *   --lock none     no lock of ours: lanes meet only in usrsctp's own
 *                   locks (and the dataplane's ARP/TX spinlocks).  sg's
 *                   shared counters are then updated without atomics: an
 *                   experiment on what the transport's lock costs, not a
 *                   supported mode.
 *
 * Every message carries its lane, a sequence number and a pattern derived
 * from both; the receiver checks each byte and the order per lane.
 * Output: one JSON object: MB/s per lane and total over --seconds, polls and
 * lock waits (ns spent in pthread_mutex_lock) per thread.
 *
 *   sdp-lanes-sg --lanes 2 --lock global --seconds 5 --size 8192
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dp.h"
#include "sg.h"

#define MAX_LANES 8
#define SRV_PORT 5000
#define CLI_PORT 6000
#define HDR_BYTES 16

struct lane {
	unsigned k;
	pthread_t th;
	struct sg_ep *srv, *cli; /* lane k's endpoints (k = 0: the bases) */
	sg_assoc_t assoc;	 /* client lane k -> server lane k */
	uint64_t tx_seq, rx_seq, rx_bytes, polls;
	uint64_t lock_wait_ns;
	int cpu;
	int err;
};

static struct {
	unsigned lanes, size, seconds;
	int cpu0;
	bool lock;
	pthread_mutex_t mtx;
	struct dp_port *srv_port, *cli_port;
	struct lane lane[MAX_LANES];
	atomic_bool go, stop;
	uint8_t *msg[MAX_LANES];
} g = { .lanes = 2, .size = 8192, .seconds = 5, .cpu0 = 0, .lock = true };

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void lock(struct lane *l)
{
	uint64_t t0;

	if (!g.lock)
		return;
	t0 = now_ns();
	pthread_mutex_lock(&g.mtx);
	l->lock_wait_ns += now_ns() - t0;
}

static void unlock(void)
{
	if (g.lock)
		pthread_mutex_unlock(&g.mtx);
}

static uint8_t pattern(unsigned k, uint64_t seq, uint32_t i)
{
	return (uint8_t)(k * 31u + seq * 7u + i);
}

static void fill(uint8_t *buf, unsigned k, uint64_t seq)
{
	uint32_t i;

	memcpy(buf, &seq, 8);
	memcpy(buf + 8, &k, 4);
	for (i = HDR_BYTES; i < g.size; i++)
		buf[i] = pattern(k, seq, i);
}

/* Check one received message of lane @l; @return 0 or -1 (logged). */
static int check(struct lane *l, const struct sg_msg_desc *m)
{
	uint64_t seq;
	unsigned k;
	uint32_t i;

	if (m->nb_segs != 1 || m->msg_len != g.size) {
		fprintf(stderr, "lane %u: message of %u bytes in %u segments\n",
			l->k, m->msg_len, m->nb_segs);
		return -1;
	}
	memcpy(&seq, m->data, 8);
	memcpy(&k, m->data + 8, 4);
	if (k != l->k || seq != l->rx_seq) {
		fprintf(stderr, "lane %u: got lane %u seq %" PRIu64 ", want "
			"seq %" PRIu64 "\n", l->k, k, seq, l->rx_seq);
		return -1;
	}
	for (i = HDR_BYTES; i < g.size; i++) {
		if (m->data[i] != pattern(k, seq, i)) {
			fprintf(stderr, "lane %u seq %" PRIu64 ": byte %u "
				"wrong\n", l->k, seq, i);
			return -1;
		}
	}
	l->rx_seq++;
	return 0;
}

/* One round of lane @l: poll both ends, send until back-pressure, read. */
static unsigned round_of(struct lane *l, bool measure)
{
	struct sg_msg_desc *msgs[32];
	struct iovec iov;
	struct sg_event ev;
	unsigned n, i, work;
	uint64_t now = dp_tsc();
	int rc;

	lock(l);
	work = sg_poll(l->srv, now) + sg_poll(l->cli, now);
	while (sg_next_event(l->srv, &ev) == 0)
		;
	while (sg_next_event(l->cli, &ev) == 0)
		;
	for (i = 0; i < 64 && sg_assoc_up(l->cli, l->assoc); i++) {
		fill(g.msg[l->k], l->k, l->tx_seq);
		iov.iov_base = g.msg[l->k];
		iov.iov_len = g.size;
		rc = sg_send(l->cli, l->assoc, 1, 0, 0, &iov, 1);
		if (rc != 0)
			break;
		l->tx_seq++;
		work++;
	}
	n = sg_recv(l->srv, msgs, 32);
	unlock();
	for (i = 0; i < n; i++) {
		if (check(l, msgs[i]) != 0)
			l->err = 1;
		if (measure)
			l->rx_bytes += msgs[i]->msg_len;
		lock(l);
		sg_msg_release(msgs[i]);
		unlock();
	}
	l->polls++;
	return work + n;
}

static void *lane_thread(void *arg)
{
	struct lane *l = arg;
	uint64_t polls0 = 0, wait0 = 0;
	bool measuring = false;

	if (l->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(l->cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	while (!atomic_load(&g.stop) && !l->err) {
		if (!measuring && atomic_load(&g.go)) {
			measuring = true;
			polls0 = l->polls;
			wait0 = l->lock_wait_ns;
		}
		round_of(l, measuring);
	}
	l->polls -= polls0;
	l->lock_wait_ns -= wait0;
	return NULL;
}

struct open_arg {
	struct dp_config *cfg;
	struct dp_port **port;
	int rc;
};

static void *open_thread(void *arg)
{
	struct open_arg *a = arg;

	a->rc = dp_port_open(a->cfg, a->port);
	return NULL;
}

static int open_ports(const char *dir)
{
	static struct dp_config cs, cc; /* large: not on the stack */
	char s[512], c[512];
	struct open_arg a;
	pthread_t t;
	int rc;

	snprintf(s, sizeof(s), "dev=net_memif0,role=server,id=0,socket=%s/m."
		 "sock,socket-abstract=no ip=10.88.0.1/24 queues=%u "
		 "link_wait_ms=10000 mtu=1500 prefix=sdp-lanessg-%d "
		 "idle_sleep_us=0", dir, g.lanes, (int)getpid());
	snprintf(c, sizeof(c), "dev=net_memif1,role=client,id=0,socket=%s/m."
		 "sock,socket-abstract=no ip=10.88.0.2/24 queues=%u "
		 "link_wait_ms=10000 mtu=1500", dir, g.lanes);
	if (dp_config_parse(s, &cs) != 0 || dp_config_parse(c, &cc) != 0)
		return -EINVAL;
	rc = dp_eal_init(&cs);
	if (rc != 0)
		return rc;
	/* the server waits for its link: open the client meanwhile */
	a.cfg = &cs;
	a.port = &g.srv_port;
	a.rc = -1;
	if (pthread_create(&t, NULL, open_thread, &a) != 0)
		return -EIO;
	usleep(300 * 1000);
	rc = dp_port_open(&cc, &g.cli_port);
	pthread_join(t, NULL);
	if (rc != 0 || a.rc != 0) {
		fprintf(stderr, "cannot open the memif pair: %d %d\n", a.rc,
			rc);
		return rc != 0 ? rc : a.rc;
	}
	return 0;
}

static int open_lanes(void)
{
	struct sg_config cfg;
	uint64_t deadline;
	unsigned k;
	int rc;

	if (sg_config_parse("sndbuf=4194304 rcvbuf=4194304 max_msg=65536 "
			    "rx_buf=65536", &cfg) != 0)
		return -EINVAL;
	for (k = 0; k < g.lanes; k++) {
		struct lane *l = &g.lane[k];

		l->k = k;
		l->cpu = g.cpu0 < 0 ? -1 : (int)((unsigned)g.cpu0 + k) %
						   (int)sysconf(
							   _SC_NPROCESSORS_ONLN);
		cfg.port = (uint16_t)(SRV_PORT + k);
		rc = k == 0 ? sg_ep_open(g.srv_port, &cfg, &l->srv)
			    : sg_ep_open_lane(g.lane[0].srv, &cfg, &l->srv);
		if (rc != 0)
			return rc;
		cfg.port = (uint16_t)(CLI_PORT + k);
		rc = k == 0 ? sg_ep_open(g.cli_port, &cfg, &l->cli)
			    : sg_ep_open_lane(g.lane[0].cli, &cfg, &l->cli);
		if (rc != 0)
			return rc;
		g.msg[k] = malloc(g.size);
		if (g.msg[k] == NULL)
			return -ENOMEM;
	}
	for (k = 0; k < g.lanes; k++) {
		rc = sg_connect(g.lane[k].cli, dp_port_ip(g.srv_port),
				(uint16_t)(SRV_PORT + k), &g.lane[k].assoc);
		if (rc != 0)
			return rc;
	}
	deadline = dp_tsc() + 10 * dp_tsc_hz();
	for (;;) {
		unsigned up = 0;

		for (k = 0; k < g.lanes; k++) {
			struct sg_event ev;

			sg_poll(g.lane[k].srv, dp_tsc());
			sg_poll(g.lane[k].cli, dp_tsc());
			while (sg_next_event(g.lane[k].srv, &ev) == 0)
				;
			while (sg_next_event(g.lane[k].cli, &ev) == 0)
				;
			up += sg_assoc_up(g.lane[k].cli, g.lane[k].assoc);
		}
		if (up == g.lanes)
			return 0;
		if (dp_tsc() > deadline) {
			fprintf(stderr, "%u of %u lanes up after 10 s\n", up,
				g.lanes);
			return -ETIMEDOUT;
		}
	}
}

static void close_all(const char *dir)
{
	unsigned k;
	char path[300];

	for (k = g.lanes; k-- > 0;) {
		if (g.lane[k].cli != NULL)
			sg_ep_close(g.lane[k].cli);
		if (g.lane[k].srv != NULL)
			sg_ep_close(g.lane[k].srv);
		free(g.msg[k]);
	}
	if (g.cli_port != NULL)
		dp_port_close(g.cli_port);
	if (g.srv_port != NULL)
		dp_port_close(g.srv_port);
	dp_eal_fini();
	snprintf(path, sizeof(path), "%s/m.sock", dir);
	unlink(path);
	rmdir(dir);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "lanes", required_argument, NULL, 'l' },
		{ "lock", required_argument, NULL, 'k' },
		{ "seconds", required_argument, NULL, 't' },
		{ "size", required_argument, NULL, 's' },
		{ "cpu0", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	char dir[128];
	uint64_t t0, t1, total = 0;
	unsigned k;
	int o, rc, err = 0;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'l':
			g.lanes = (unsigned)atoi(optarg);
			break;
		case 'k':
			g.lock = strcmp(optarg, "none") != 0;
			break;
		case 't':
			g.seconds = (unsigned)atoi(optarg);
			break;
		case 's':
			g.size = (unsigned)atoi(optarg);
			break;
		case 'c':
			g.cpu0 = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [--lanes N] [--lock "
				"global|none] [--seconds S] [--size B] "
				"[--cpu0 C|-1]\n", argv[0]);
			return 2;
		}
	}
	if (g.lanes < 1 || g.lanes > MAX_LANES || g.size < HDR_BYTES ||
	    g.size > 65536 || g.seconds < 1) {
		fprintf(stderr, "--lanes 1..%d, --size %d..65536, --seconds "
			">= 1\n", MAX_LANES, HDR_BYTES);
		return 2;
	}
	pthread_mutex_init(&g.mtx, NULL);
	snprintf(dir, sizeof(dir), "/run/sdp/lanessg%d", (int)getpid());
	mkdir("/run/sdp", 0755);
	if (mkdir(dir, 0700) != 0) {
		perror(dir);
		return 1;
	}
	rc = open_ports(dir);
	if (rc == 0)
		rc = open_lanes();
	if (rc != 0) {
		fprintf(stderr, "setup failed: %s\n", strerror(-rc));
		close_all(dir);
		return 1;
	}
	for (k = 0; k < g.lanes; k++)
		pthread_create(&g.lane[k].th, NULL, lane_thread, &g.lane[k]);
	sleep(1); /* warm up: windows open */
	atomic_store(&g.go, true);
	t0 = now_ns();
	sleep(g.seconds);
	atomic_store(&g.stop, true);
	t1 = now_ns();
	for (k = 0; k < g.lanes; k++) {
		pthread_join(g.lane[k].th, NULL);
		total += g.lane[k].rx_bytes;
		err |= g.lane[k].err;
	}
	printf("{\"lanes\": %u, \"lock\": \"%s\", \"size\": %u, \"seconds\": "
	       "%.3f, \"mbs\": %.1f, \"verified\": %s, \"per_lane\": [",
	       g.lanes, g.lock ? "global" : "none", g.size,
	       (double)(t1 - t0) / 1e9,
	       (double)total / ((double)(t1 - t0) / 1e9) / 1e6,
	       err ? "false" : "true");
	for (k = 0; k < g.lanes; k++) {
		const struct lane *l = &g.lane[k];

		printf("%s{\"cpu\": %d, \"mbs\": %.1f, \"msgs\": %" PRIu64
		       ", \"polls\": %" PRIu64 ", \"lock_wait_share\": %.3f}",
		       k ? ", " : "", l->cpu,
		       (double)l->rx_bytes / ((double)(t1 - t0) / 1e9) / 1e6,
		       l->rx_seq, l->polls,
		       (double)l->lock_wait_ns / (double)(t1 - t0));
	}
	printf("]}\n");
	close_all(dir);
	return err ? 1 : 0;
}
