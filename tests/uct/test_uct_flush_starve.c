/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_uct_flush_starve.c - an ep flush while another ep of the same
 * iface keeps the association to the same peer busy (meson test
 * uct-flush-starve).
 *
 *   idle   ep A has sent one AM (flushed, acknowledged); ep B streams
 *          1.8 KiB AMs to the same peer process without pause.  A flush
 *          of A with a completion must complete while B streams (A has
 *          nothing outstanding), without a FLUSH marker (flush_markers
 *          unchanged).
 *   sent   then, B still streaming, A sends STARVE_A_AMS AMs and flushes
 *          again, and goes on sending after the flush: that flush must
 *          complete while both stream, by the FLUSH markers behind A's
 *          AMs on A's stream (at least one sent) whose ACKs say the peer
 *          holds them; A's later AMs are not the flush's to wait for.
 *
 * The association never has nothing unacknowledged while B streams, so
 * a flush that waits for the whole association starves until B stops:
 * each phase records whether it completed during the stream (required)
 * or only after (reported).  At the end the peer has received every AM.
 *
 * Fixture: uct_fixture.h (fx_seq_peer_main counts the AMs).
 */
#include "uct_fixture.h"

#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#define STARVE_S 5.0	   /* B streams at most this long */
#define STARVE_FLUSH_AT 0.2 /* A's first flush starts this far into it */
#define STARVE_A_AMS 4	   /* AMs A sends before its second flush */

typedef struct starve_flush {
	uct_completion_t comp;
	int issued;
	double issued_at;   /* fx_now_s() */
	double during;	    /* seconds to complete while B streamed; -1 */
	unsigned done;
	ucs_status_t status;
} starve_flush_t;

static void starve_flush_cb(uct_completion_t *self)
{
	starve_flush_t *f = ucs_container_of(self, starve_flush_t, comp);

	f->status = self->status;
	f->done++;
}

/* Issue a flush of @ep whose completion @f records. */
static void starve_flush_issue(uct_ep_h ep, starve_flush_t *f)
{
	ucs_status_t st;

	f->comp.func = starve_flush_cb;
	f->comp.count = 1;
	f->comp.status = UCS_OK;
	f->issued = 1;
	f->issued_at = fx_now_s();
	st = uct_ep_flush(ep, 0, &f->comp);
	if (st == UCS_OK) {
		f->status = UCS_OK;
		f->done = 1;
	} else if (st != UCS_INPROGRESS) {
		CHECK(0, "flush of A: %s", ucs_status_string(st));
	}
}

static void starve_flush_report(const char *phase, starve_flush_t *f,
				double stopped_at)
{
	printf("flush-starve: %s: A's flush %s", phase,
	       !f->issued ? "was not issued" :
	       f->during >= 0 ? "completed during the stream" :
	       f->done ? "completed only after B stopped" :
			 "never completed");
	if (f->during >= 0)
		printf(" (%.3f s after it started)", f->during);
	else if (f->done)
		printf(" (%.3f s after B stopped)", fx_now_s() - stopped_at);
	printf("\n");
	CHECK(f->during >= 0, "%s: ep A's flush did not complete within "
	      "%.1f s while ep B kept the association busy", phase,
	      STARVE_S - STARVE_FLUSH_AT);
	CHECK(!f->done || f->status == UCS_OK, "%s: flush completed with %s",
	      phase, ucs_status_string(f->status));
}

static int test_flush_starve(void)
{
	uint8_t dev[64], ifa[64];
	uint32_t seq = 0, report[4] = {0, 0, 0, 0};
	uint64_t markers0, markers1 = 0, markers2 = 0;
	starve_flush_t idle = {.during = -1}, sent = {.during = -1};
	uct_sctp_dpdk_ctx_t *ctx;
	double t0, now, stopped_at;
	unsigned a_sent = 0, a_after = 0;
	ucs_status_t st;
	uct_ep_h ep_a, ep_b;
	iface_t a;
	env_t e;
	int fd;

	fd = fx_fork_client(fx_seq_peer_main);
	if (fd < 0)
		return 1;
	fx_env_open(&e);
	fx_iface_open(&e, &a, 0);
	ctx = uct_sctp_dpdk_ctx_peek();
	if (fx_seq_peer_addr(fd, dev, ifa, 0) != 0)
		return 1;
	ep_a = fx_ep_to(&a, dev, ifa);
	ep_b = fx_ep_to(&a, dev, ifa);
	fx_seq_send_one(&e, ep_a, seq++);
	t0 = fx_now_s();
	while ((st = uct_ep_flush(ep_a, 0, NULL)) != UCS_OK &&
	       fx_now_s() < t0 + DEADLINE_S)
		uct_worker_progress(e.worker);
	CHECK(st == UCS_OK, "first flush of A: %s", ucs_status_string(st));

	t0 = fx_now_s();
	markers0 = ctx->flush_markers;
	while ((now = fx_now_s()) < t0 + STARVE_S && sent.done == 0) {
		st = fx_seq_send(ep_b, seq);
		if (st == UCS_OK)
			seq++;
		else
			uct_worker_progress(e.worker);
		if (!idle.issued && now >= t0 + STARVE_FLUSH_AT)
			starve_flush_issue(ep_a, &idle);
		if (idle.done && idle.during < 0) {
			idle.during = now - idle.issued_at;
			markers1 = ctx->flush_markers;
		}
		/* the idle flush done: A sends, then flushes again */
		if (idle.done && a_sent < STARVE_A_AMS &&
		    fx_seq_send(ep_a, seq) == UCS_OK) {
			seq++;
			a_sent++;
		}
		if (a_sent == STARVE_A_AMS && !sent.issued)
			starve_flush_issue(ep_a, &sent);
		else if (sent.issued && !sent.done &&
			 fx_seq_send(ep_a, seq) == UCS_OK) {
			seq++;
			a_after++;
		}
		if (sent.done && sent.during < 0)
			sent.during = fx_now_s() - sent.issued_at;
	}
	markers2 = ctx->flush_markers;
	/* B stops: a starved flush completes once the association is
	 * quiet. */
	stopped_at = fx_now_s();
	while ((idle.done == 0 || (sent.issued && sent.done == 0)) &&
	       fx_now_s() < stopped_at + DEADLINE_S)
		uct_worker_progress(e.worker);
	printf("flush-starve: B and A sent %u AMs (A %u after its second "
	       "flush); FLUSH markers: %" PRIu64 " for the idle flush, %"
	       PRIu64 " for the one after A sent\n", seq, a_after,
	       markers1 - markers0, markers2 - markers1);
	starve_flush_report("idle", &idle, stopped_at);
	starve_flush_report("sent", &sent, stopped_at);
	CHECK(idle.during < 0 || markers1 == markers0,
	      "the flush of an ep with nothing outstanding sent %" PRIu64
	      " FLUSH markers", markers1 - markers0);
	CHECK(sent.during < 0 || markers2 > markers1,
	      "A's flush after its AMs completed without a FLUSH marker");
	/* The peer's count of everything. */
	while (uct_ep_flush(ep_b, 0, NULL) != UCS_OK &&
	       fx_now_s() < stopped_at + 2 * DEADLINE_S)
		uct_worker_progress(e.worker);
	if (fx_seq_peer_report(fd, seq, report, -1) != 0)
		CHECK(0, "no report from the peer");
	CHECK(report[0] == seq, "peer received %u of %u AMs", report[0], seq);
	uct_ep_destroy(ep_a);
	uct_ep_destroy(ep_b);
	uct_iface_close(a.iface);
	close(fd);
	fx_env_close(&e);
	return fx_failures ? 1 : 0;
}

int main(void)
{
	return fx_run(test_flush_starve);
}
