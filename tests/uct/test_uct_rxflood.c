/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_uct_rxflood.c - a peer floods a worker that does not progress:
 * the worker's memory stays bounded and the sender is flow-controlled;
 * once the worker progresses every message arrives, in order and intact
 * (meson test uct-rxflood).
 *
 *   test process (memif client 10.77.8.2)   peer (memif server 10.77.8.1)
 *   victim: PROGRESS=thread, RX_DESCS=64,   floods SEQ_AM_ID AMs (am_short,
 *           RX_QUEUE_BYTES=256k; its         1800 B + 8 B header: copied
 *           worker does not progress         on receive) until sends have
 *           while the poll thread reads;     failed with NO_RESOURCE for
 *           watches its RX queue             FLOOD_QUIET_S, reports how
 *                                            many were accepted
 *
 * Bound checked while the flood runs: the iface's RX queue holds at most
 * RX_QUEUE_BYTES of copies (each ~2.4 KiB of pool) plus the 64 messages
 * left in their sg buffers (plus one poll burst).  Without the cap the
 * poll thread copies every message into a pool capped at UINT_MAX and
 * releases its sg buffer at once, so the queue, and the process, grow
 * with whatever the peer sends and the peer is never flow-controlled.
 *
 * Fixture: uct_fixture.h.
 */
#include "uct_fixture.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define FLOOD_RX_DESCS 64	   /* victim's sg descriptors */
#define FLOOD_QUEUE_BYTES 262144   /* victim's RX_QUEUE_BYTES */
#define FLOOD_QUIET_S 1.0	   /* NO_RESOURCE this long: flow-controlled */
#define FLOOD_MAX 400000	   /* messages the peer sends at most */
#define FLOOD_RSS_MAX_MB 192	   /* victim's RSS growth allowed */
/* one small descriptor's pool bytes is more than RX_COPY_BYTES */
#define FLOOD_QUEUE_MAX                                                       \
	(FLOOD_QUEUE_BYTES / UCT_SCTP_DPDK_RX_COPY_BYTES + FLOOD_RX_DESCS +   \
	 UCT_SCTP_DPDK_RX_BURST)

typedef struct {
	uint32_t rx;	  /* messages received */
	uint32_t ooo;	  /* out of order */
	uint32_t bad;	  /* wrong length or content */
} flood_rx_t;

/* fx_seq_send's layout: 8-byte header 0x5e9, seq, (seq * 7 + i + 8). */
static ucs_status_t flood_cb(void *arg, void *data, size_t length,
			     unsigned flags)
{
	flood_rx_t *f = arg;
	const uint8_t *d = data;
	uint32_t seq;
	size_t i;

	(void)flags;
	if (length != 8 + SEQ_LEN) {
		f->bad++;
		return UCS_OK;
	}
	memcpy(&seq, d + 8, 4);
	if (seq != f->rx)
		f->ooo++;
	for (i = 4; i < SEQ_LEN; i++)
		if (d[8 + i] != (uint8_t)(seq * 7 + i + 8)) {
			f->bad++;
			break;
		}
	f->rx++;
	return UCS_OK;
}

/* The flooding peer: sends until flow-controlled, reports the count, then
 * progresses (its unacknowledged messages need it) until told to stop. */
static void flood_peer_main(int fd)
{
	double deadline = fx_now_s() + 120, quiet_since = 0, now;
	uint8_t dev[64], ifa[64];
	uint32_t sent = 0, stop;
	ucs_status_t st;
	uct_ep_h ep;
	iface_t t;
	env_t e;

	fx_memif_env(1, "10.77.8.1/24", "r0");
	fx_env_open(&e);
	fx_iface_open(&e, &t, 0);
	if (fx_write_addr(fd, &t) != 0 || fx_read_addr(fd, dev, ifa) != 0)
		exit(1);
	ep = fx_ep_to(&t, dev, ifa);
	while (sent < FLOOD_MAX && (now = fx_now_s()) < deadline) {
		st = fx_seq_send(ep, sent);
		if (st == UCS_OK) {
			sent++;
			quiet_since = 0;
			continue;
		}
		if (st != UCS_ERR_NO_RESOURCE) {
			fprintf(stderr, "flood peer: send %u: %s\n", sent,
				ucs_status_string(st));
			exit(1);
		}
		if (quiet_since == 0)
			quiet_since = now;
		else if (now - quiet_since >= FLOOD_QUIET_S)
			break;
		uct_worker_progress(e.worker);
	}
	if (write(fd, &sent, sizeof(sent)) != sizeof(sent))
		exit(1);
	while (fx_now_s() < deadline) {
		uct_worker_progress(e.worker);
		if (recv(fd, &stop, sizeof(stop), MSG_DONTWAIT) == 0 ||
		    (errno != EAGAIN && errno != EWOULDBLOCK))
			break;
	}
	uct_ep_destroy(ep);
	uct_iface_close(t.iface);
	fx_env_close(&e);
	exit(0);
}

/* Resident set of this process, MiB (VmRSS). */
static long flood_rss_mb(void)
{
	char line[128];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb < 0 ? -1 : kb / 1024;
}

static int test_rxflood(void)
{
	static flood_rx_t f;
	uct_sctp_dpdk_iface_t *vi;
	unsigned max_queued = 0, q;
	long rss0, rss, rss_max = 0;
	uint8_t dev[64], ifa[64];
	struct pollfd pfd;
	uint32_t sent = 0;
	double deadline;
	iface_t a;
	env_t e;
	int fd;

	fd = fx_fork_client(flood_peer_main);
	if (fd < 0)
		return 1;
	setenv("UCX_SCTP_DPDK_PROGRESS", "thread", 1);
	setenv("UCX_SCTP_DPDK_RX_DESCS", "64", 1);
	/* not overwritten: RX_QUEUE_BYTES=inf shows the uncapped queue */
	setenv("UCX_SCTP_DPDK_RX_QUEUE_BYTES", "256k", 0);
	fx_env_open(&e);
	fx_iface_open(&e, &a, 0);
	CHECK_OK(uct_iface_set_am_handler(a.iface, SEQ_AM_ID, flood_cb, &f, 0),
		 "flood handler");
	vi = ucs_derived_of(a.iface, uct_sctp_dpdk_iface_t);
	if (fx_swap_addr(fd, &a, dev, ifa) != 0)
		return 1;
	rss0 = flood_rss_mb();
	/* The worker does not progress: only the poll thread reads. */
	pfd.fd = fd;
	pfd.events = POLLIN;
	deadline = fx_now_s() + 120;
	for (;;) {
		ucs_spin_lock(&vi->rx_lock);
		q = vi->rx_count;
		ucs_spin_unlock(&vi->rx_lock);
		max_queued = ucs_max(max_queued, q);
		rss = flood_rss_mb();
		rss_max = ucs_max(rss_max, rss);
		if (q > FLOOD_QUEUE_MAX ||
		    rss - rss0 > FLOOD_RSS_MAX_MB) {
			CHECK(0, "a worker that does not progress holds %u "
			      "messages (bound %u) and grew %ld MiB (bound %d)",
			      q, (unsigned)FLOOD_QUEUE_MAX, rss - rss0,
			      FLOOD_RSS_MAX_MB);
			kill(fx_peer_pid, SIGKILL);
			return 1;
		}
		if (poll(&pfd, 1, 5) == 1)
			break;
		if (fx_now_s() > deadline) {
			CHECK(0, "the peer was not flow-controlled within 120 s");
			return 1;
		}
	}
	if (read(fd, &sent, sizeof(sent)) != sizeof(sent)) {
		CHECK(0, "no count from the flooding peer");
		return 1;
	}
	CHECK(sent < FLOOD_MAX, "the peer sent all %u messages without "
	      "being flow-controlled", sent);
	printf("rxflood: peer flow-controlled after %u messages; worker held "
	       "at most %u queued (bound %u), %" PRIu64 " left in sg buffers "
	       "by the cap; RSS +%ld MiB\n", sent, max_queued,
	       (unsigned)FLOOD_QUEUE_MAX, vi->rx_copy_capped,
	       rss_max - rss0);
	CHECK(vi->rx_copy_capped > 0, "the cap never applied");
	/* The worker progresses: everything arrives, in order. */
	deadline = fx_now_s() + 60;
	while (f.rx < sent && fx_now_s() < deadline)
		uct_worker_progress(e.worker);
	CHECK(f.rx == sent && f.ooo == 0 && f.bad == 0,
	      "received %u of %u (out of order %u, bad %u)", f.rx, sent,
	      f.ooo, f.bad);
	CHECK(vi->rx_copy_bytes == 0, "%zu bytes of copies still counted "
	      "after the drain", vi->rx_copy_bytes);
	printf("rxflood: after progress received %u of %u, out of order %u, "
	       "bad %u: %s\n", f.rx, sent, f.ooo, f.bad,
	       fx_failures ? "FAIL" : "ok");
	close(fd); /* the peer stops */
	waitpid(fx_peer_pid, NULL, 0);
	fx_peer_pid = 0;
	uct_iface_close(a.iface);
	fx_env_close(&e);
	return fx_failures ? 1 : 0;
}

int main(void)
{
	return fx_run(test_rxflood);
}
