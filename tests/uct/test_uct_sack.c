/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_uct_sack.c - how the transport acknowledges (meson tests
 * uct-sack-*): every second DATA packet is SACKed, and the last packet of
 * each message at once (the I bit, RFC 7053, sg's sack_immediate), so a
 * bulk transfer costs half the SACK packets and a flush never waits out
 * the peer's delayed SACK.
 *
 *   bulk          the transport's defaults: 120 one-way AMs of 60000
 *                 bytes (41 packets each at MTU 1500); the sender gets
 *                 back 0.4-0.65 packets per packet it sends (every
 *                 packet SACKed: ~1).
 *   bulk-every    the control: SG sack_delay_ms=0 SACKs every packet,
 *                 0.9 or more packets back per packet.
 *   flush         the receiver delays SACKs 200 ms (SG sack_delay_ms=200
 *                 rto_min_ms=500); after each of 12 messages of 1, 2 and
 *                 3 packets the association is acknowledged (what a flush
 *                 finds at once on an idle association, and what the exit
 *                 drain waits for) in well under that (median < 100 ms):
 *                 the message's last packet asked for its SACK.
 *   flush-no-ibit the control: the sender without the I bit (SG
 *                 sack_immediate=0); after a message of an odd number of
 *                 packets the acknowledgement waits out the delay (median
 *                 of those >= 150 ms).
 *
 * Both flush modes measure by progress alone, before the flush: a flush
 * of a busy association sends a FLUSH marker (sctp_dpdk_flush.c), a
 * packet that would itself prompt the receiver's SACK (every second
 * packet) and spoil the control.
 *
 * Fixture (UCT context, forked memif peer, cleanup): uct_fixture.h.
 */
#include "uct_fixture.h"

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define BULK_MSGS 120
#define BULK_LEN 60000
#define FLUSH_ROUNDS 12
#define SLOW_SG "sack_delay_ms=200 rto_min_ms=500"

static size_t msg_len; /* what msg_pack writes */

/* The payload fx_seq_peer_main checks (fx_seq_pack). */
static size_t msg_pack(void *dest, void *arg)
{
	return fx_seq_pack(dest, msg_len, *(uint32_t *)arg);
}

/* One AM of @len bytes, progressing through back-pressure. */
static void send_msg(env_t *e, uct_ep_h ep, uint32_t seq, size_t len)
{
	double deadline = fx_now_s() + DEADLINE_S;
	ssize_t n;

	msg_len = len;
	while ((n = uct_ep_am_bcopy(ep, SEQ_AM_ID, msg_pack, &seq, 0)) ==
		       UCS_ERR_NO_RESOURCE &&
	       fx_now_s() < deadline)
		uct_worker_progress(e->worker);
	CHECK(n == (ssize_t)len, "am_bcopy of %zu bytes returned %zd", len,
	      n);
}

/* Flush @ep, progressing.  @return seconds it took, or -1 at the
 * deadline. */
static double flush_s(env_t *e, uct_ep_h ep)
{
	double t0 = fx_now_s(), deadline = t0 + DEADLINE_S;
	ucs_status_t st;

	while ((st = uct_ep_flush(ep, 0, NULL)) != UCS_OK) {
		if (fx_now_s() > deadline ||
		    (st != UCS_INPROGRESS && st != UCS_ERR_NO_RESOURCE)) {
			CHECK(0, "flush: %s", ucs_status_string(st));
			return -1;
		}
		uct_worker_progress(e->worker);
	}
	return fx_now_s() - t0;
}

/* Progress until @ep's association has nothing unacknowledged, then
 * flush it (at once: nothing outstanding).  @return seconds until
 * acknowledged, or -1 at the deadline. */
static double ack_s(env_t *e, uct_ep_h ep)
{
	double t0 = fx_now_s(), t;

	while (fx_ep_unacked(ep) != 0) {
		if (fx_now_s() > t0 + DEADLINE_S) {
			CHECK(0, "association not acknowledged after %.0f s",
			      (double)DEADLINE_S);
			return -1;
		}
		uct_worker_progress(e->worker);
	}
	t = fx_now_s() - t0;
	flush_s(e, ep);
	return t;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static const char *mode;

static int test_sack(void)
{
	int bulk = strncmp(mode, "bulk", 4) == 0;
	uint8_t dev[64], ifa[64];
	uint32_t want, report[4] = {0, 0, 0, 0}, seq = 0;
	struct sg_stats s0, s1;
	double t[3], odd[2 * FLUSH_ROUNDS], ratio = 0, med = 0;
	int i, nodd = 0;
	uct_sctp_dpdk_ctx_t *ctx;
	iface_t a;
	uct_ep_h ep;
	env_t e;
	int fd;

	/* the receiver's SACK settings: the peer reads them at its start */
	if (!strcmp(mode, "bulk-every"))
		setenv("UCX_SCTP_DPDK_SG", "sack_delay_ms=0", 1);
	else if (!bulk)
		setenv("UCX_SCTP_DPDK_SG", SLOW_SG, 1);
	fd = fx_fork_peer(fx_seq_peer_main);
	if (fd < 0)
		return 1;
	{
		struct timeval tv = {90, 0}; /* the peer reports by then */

		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	}
	/* the sender's */
	if (!strcmp(mode, "flush-no-ibit"))
		setenv("UCX_SCTP_DPDK_SG", SLOW_SG " sack_immediate=0", 1);
	fx_memif_env(0, "10.77.8.2/24", "s1");
	fx_env_open(&e);
	fx_iface_open(&e, &a, 0);
	ctx = uct_sctp_dpdk_ctx_peek();
	if (ctx == NULL || ctx->sg == NULL) {
		fprintf(stderr, "FAIL: no transport context after the iface "
			"opened\n");
		return 1;
	}
	want = bulk ? BULK_MSGS + 1 : 3 * FLUSH_ROUNDS + 1;
	if (fx_read_addr(fd, dev, ifa) != 0 ||
	    write(fd, &want, sizeof(want)) != sizeof(want)) {
		fprintf(stderr, "FAIL: peer did not start\n");
		return 1;
	}
	ep = fx_ep_to(&a, dev, ifa);
	/* warm-up: the association comes up, its first SACKs go */
	send_msg(&e, ep, seq++, 100);
	flush_s(&e, ep);
	if (bulk) {
		sg_ep_stats(ctx->sg, &s0);
		for (i = 0; i < BULK_MSGS; i++)
			send_msg(&e, ep, seq++, BULK_LEN);
		flush_s(&e, ep);
		sg_ep_stats(ctx->sg, &s1);
		ratio = (double)(s1.pkts_in - s0.pkts_in) /
			(double)(s1.pkts_out - s0.pkts_out);
		printf("%s: %u AMs of %u bytes: %" PRIu64 " packets out, %"
		       PRIu64 " in (%.3f per packet out)\n", mode, BULK_MSGS,
		       BULK_LEN, s1.pkts_out - s0.pkts_out,
		       s1.pkts_in - s0.pkts_in, ratio);
		if (!strcmp(mode, "bulk"))
			CHECK(ratio >= 0.4 && ratio <= 0.65,
			      "%.3f packets back per packet sent, want about "
			      "half (every second packet SACKed)", ratio);
		else
			/* every packet SACKed, but SACKs for packets
			 * that one poll took in may leave as one: 0.84-1.0
			 * seen; well apart from bulk's band above */
			CHECK(ratio >= 0.75, "%.3f packets back per packet "
			      "sent, want >= 0.75 (every packet SACKed)",
			      ratio);
	} else {
		/* 1, 2 and 3 packets at MTU 1500 */
		static const size_t lens[3] = {1000, 2500, 4000};

		for (i = 0; i < 3 * FLUSH_ROUNDS; i++) {
			send_msg(&e, ep, seq++, lens[i % 3]);
			t[i % 3] = ack_s(&e, ep);
			if (i % 3 != 1)
				odd[nodd++] = t[i % 3];
			if (i % 3 == 2)
				printf("%s: acknowledged after %zu/%zu/%zu "
				       "bytes: %.1f/%.1f/%.1f ms\n", mode, lens[0],
				       lens[1], lens[2], 1000 * t[0],
				       1000 * t[1], 1000 * t[2]);
		}
		med = median(odd, nodd);
		printf("%s: median acknowledgement after a message of 1 or 3 "
		       "packets: %.1f ms (receiver's delayed SACK: 200 ms)\n",
		       mode, 1000 * med);
		if (!strcmp(mode, "flush"))
			CHECK(med < 0.1, "median acknowledgement %.1f ms: the "
			      "message's last packet did not ask for its SACK "
			      "at once", 1000 * med);
		else
			CHECK(med >= 0.15, "median acknowledgement %.1f ms "
			      "without the I bit: the delayed SACK was not "
			      "delayed", 1000 * med);
	}
	if (fx_seq_peer_report(fd, want, report, 90 * 1000) != 0)
		CHECK(0, "no report from the peer");
	CHECK(report[0] == want && report[1] == 0 && report[3] == 0,
	      "peer got %u of %u AMs, %u out of order, %u corrupted",
	      report[0], want, report[1], report[3]);
	printf("%s: %s\n", mode, fx_failures ? "FAIL" : "ok");
	uct_ep_destroy(ep);
	uct_iface_close(a.iface);
	fx_env_close(&e);
	close(fd);
	return fx_failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc != 2 || (strcmp(argv[1], "bulk") && strcmp(argv[1], "flush") &&
			  strcmp(argv[1], "bulk-every") &&
			  strcmp(argv[1], "flush-no-ibit"))) {
		fprintf(stderr, "usage: %s bulk|bulk-every|flush|"
			"flush-no-ibit\n", argv[0]);
		return 1;
	}
	mode = argv[1];
	return fx_run(test_sack);
}
