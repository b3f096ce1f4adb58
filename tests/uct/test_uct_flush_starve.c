/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_uct_flush_starve.c - an ep flush while another ep of the same
 * iface keeps the association to the same peer busy (meson test
 * uct-flush-starve).
 *
 *   starve  ep A has sent one AM (acknowledged); ep B streams 1.8 KiB AMs
 *           to the same peer process without pause.  A flush of A with a
 *           completion must complete while B streams (A has nothing
 *           unacknowledged), within STARVE_S seconds.  The flush's
 *           granularity is the association (sctp_dpdk_flush.c): it waits
 *           until the association has nothing unacknowledged at all, which
 *           a busy sibling ep never allows, so the flush starves until B
 *           stops.  The test records both: completed during the stream
 *           (required) and completed after it (reported).
 *
 * Fixture: uct_fixture.h (fx_seq_peer_main counts the AMs).
 */
#include "uct_fixture.h"

#include <string.h>
#include <unistd.h>

#define STARVE_S 5.0	   /* B streams at most this long */
#define STARVE_FLUSH_AT 0.2 /* A's flush starts this far into the stream */

static unsigned starve_done;
static ucs_status_t starve_status;

static void starve_flush_cb(uct_completion_t *self)
{
	starve_status = self->status;
	starve_done++;
}

static int test_flush_starve(void)
{
	uint8_t dev[64], ifa[64];
	uint32_t seq = 0, want = 0, report[4] = {0, 0, 0, 0};
	uct_completion_t comp;
	double t0, now, flushed_at = -1, during = -1;
	ucs_status_t st;
	uct_ep_h ep_a, ep_b;
	int fd, flush_issued = 0;
	iface_t a;
	env_t e;

	fd = fx_fork_client(fx_seq_peer_main);
	if (fd < 0)
		return 1;
	fx_env_open(&e);
	fx_iface_open(&e, &a, 0);
	if (fx_seq_peer_addr(fd, dev, ifa, want) != 0)
		return 1;
	ep_a = fx_ep_to(&a, dev, ifa);
	ep_b = fx_ep_to(&a, dev, ifa);
	fx_seq_send_one(&e, ep_a, seq++);
	t0 = fx_now_s();
	while ((st = uct_ep_flush(ep_a, 0, NULL)) != UCS_OK &&
	       fx_now_s() < t0 + DEADLINE_S)
		uct_worker_progress(e.worker);
	CHECK(st == UCS_OK, "first flush of A: %s", ucs_status_string(st));

	comp.func = starve_flush_cb;
	comp.count = 1;
	comp.status = UCS_OK;
	t0 = fx_now_s();
	while ((now = fx_now_s()) < t0 + STARVE_S && starve_done == 0) {
		st = fx_seq_send(ep_b, seq);
		if (st == UCS_OK)
			seq++;
		else
			uct_worker_progress(e.worker);
		if (!flush_issued && now >= t0 + STARVE_FLUSH_AT) {
			flush_issued = 1;
			st = uct_ep_flush(ep_a, 0, &comp);
			if (st == UCS_OK)
				starve_done = 1;
			else if (st != UCS_INPROGRESS)
				CHECK(0, "flush of A: %s",
				      ucs_status_string(st));
		}
	}
	if (starve_done)
		during = fx_now_s() - (t0 + STARVE_FLUSH_AT);
	/* B stops: the flush completes once the association is quiet. */
	t0 = fx_now_s();
	while (starve_done == 0 && fx_now_s() < t0 + DEADLINE_S)
		uct_worker_progress(e.worker);
	if (starve_done && during < 0)
		flushed_at = fx_now_s() - t0;
	printf("flush-starve: B sent %u AMs; A's flush %s (%.3f s after it "
	       "started while B streamed%s%.3f s after B stopped)\n", seq,
	       during >= 0 ? "completed during the stream" :
			     "did not complete during the stream",
	       during, flushed_at >= 0 ? "; completed " : "; ",
	       flushed_at);
	CHECK(during >= 0, "ep A's flush did not complete within %.1f s "
	      "while ep B kept the association busy (A had nothing "
	      "unacknowledged)", STARVE_S - STARVE_FLUSH_AT);
	CHECK(starve_done == 0 || starve_status == UCS_OK,
	      "flush completed with %s", ucs_status_string(starve_status));
	/* The peer's count of everything, in order. */
	while (uct_ep_flush(ep_b, 0, NULL) != UCS_OK &&
	       fx_now_s() < t0 + 2 * DEADLINE_S)
		uct_worker_progress(e.worker);
	want = seq;
	if (write(fd, &want, sizeof(want)) != sizeof(want) ||
	    read(fd, report, sizeof(report)) != sizeof(report))
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
