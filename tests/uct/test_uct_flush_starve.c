/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_uct_flush_starve.c - an ep flush while another ep of the same
 * iface keeps the association to the same peer busy (meson test
 * uct-flush-starve).  Ep B streams 1.8 KiB AMs to the peer process without
 * pause; meanwhile ep A flushes four times, each flush with a completion
 * that must come while B streams:
 *
 *   idle   A has sent one AM (flushed, acknowledged): nothing outstanding,
 *          so no FLUSH marker goes (flush_markers unchanged).
 *   sent   A sends STARVE_A_AMS AMs, flushes, and goes on sending after
 *          the flush: the FLUSH marker behind A's AMs on A's stream (at
 *          least one sent) is answered, and A's later AMs are not the
 *          flush's to wait for.
 *   tags   with the stream map on (STREAM_TAG_MASK=0xff), A sends one tag
 *          AM on each of 3 streams other than its own, then flushes: a
 *          marker on each (at least 3).
 *   all    A sends one tag AM on each of the 8 other streams (more than
 *          the ep remembers), then flushes: a marker on every stream (at
 *          least STREAMS - 1).
 *
 * The association never has nothing unacknowledged while B streams, so a
 * flush that waits for the whole association starves until B stops: each
 * phase records whether it completed during the stream (required) or only
 * after (reported).  At the end the peer has received every AM.
 *
 * Fixture: uct_fixture.h (fx_seq_peer_main counts the AMs).
 */
#include "uct_fixture.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STARVE_S 8.0	   /* B streams at most this long */
#define STARVE_FLUSH_AT 0.2 /* A's first flush starts this far into it */
#define STARVE_A_AMS 4	   /* AMs A sends before its second flush */
/* fx_seq_send's payload has a 0 at the RTS opcode offset (byte 40 of the
 * UCP header = payload byte 32) for this seq: the stream map takes such an
 * AM (SEQ_AM_ID is UCP's RNDV_RTS id) for a tag RTS of its header */
#define STARVE_RTS_SEQ 104

enum { PH_IDLE, PH_SENT, PH_TAGS, PH_ALL, PH_N };

static const struct {
	const char *name;
	unsigned tag_streams; /* streams other than A's to send a tag AM on */
} starve_phases[PH_N] = {
	{"idle", 0}, {"sent", 0}, {"tags", 3}, {"all", 8},
};

typedef struct starve_flush {
	uct_completion_t comp;
	int issued;
	double issued_at;   /* fx_now_s() */
	double during;	    /* seconds to complete while B streamed; -1 */
	unsigned done;
	ucs_status_t status;
	uint64_t markers;   /* FLUSH markers sent while it ran */
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

/* fx_seq_send of STARVE_RTS_SEQ with @tag as UCP header: on the stream
 * the map gives @tag. */
static ucs_status_t starve_send_tag(uct_ep_h ep, uint64_t tag)
{
	uint32_t seq = STARVE_RTS_SEQ;
	uint8_t buf[SEQ_LEN];
	size_t i;

	for (i = 4; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(seq * 7 + i + 8);
	memcpy(buf, &seq, 4);
	return uct_ep_am_short(ep, SEQ_AM_ID, tag, buf, sizeof(buf));
}

static void starve_flush_report(unsigned ph, starve_flush_t *f,
				double stopped_at)
{
	const char *phase = starve_phases[ph].name;

	printf("flush-starve: %s: A's flush %s", phase,
	       !f->issued ? "was not issued" :
	       f->during >= 0 ? "completed during the stream" :
	       f->done ? "completed only after B stopped" :
			 "never completed");
	if (f->during >= 0)
		printf(" (%.3f s after it started, %" PRIu64 " FLUSH "
		       "markers)", f->during, f->markers);
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
	starve_flush_t f[PH_N];
	uct_sctp_dpdk_ctx_t *ctx;
	double t0, now, stopped_at;
	unsigned ph = PH_IDLE, a_sent = 0, a_after = 0, i;
	uint16_t others[16], n_others = 0, s;
	uint64_t markers_at = 0;
	ucs_status_t st;
	uct_ep_h ep_a, ep_b;
	uct_sctp_dpdk_ep_t *sep_a;
	iface_t a;
	env_t e;
	int fd;

	memset(f, 0, sizeof(f));
	for (i = 0; i < PH_N; i++)
		f[i].during = -1;
	fd = fx_fork_client(fx_seq_peer_main);
	if (fd < 0)
		return 1;
	/* tag AMs: stream 1 + (tag & 0xff) mod (STREAMS - 1) */
	setenv("UCX_SCTP_DPDK_STREAM_TAG_MASK", "0xff", 1);
	fx_env_open(&e);
	fx_iface_open(&e, &a, 0);
	ctx = uct_sctp_dpdk_ctx_peek();
	if (fx_seq_peer_addr(fd, dev, ifa, 0) != 0)
		return 1;
	ep_a = fx_ep_to(&a, dev, ifa);
	ep_b = fx_ep_to(&a, dev, ifa);
	sep_a = ucs_derived_of(ep_a, uct_sctp_dpdk_ep_t);
	for (s = 1; s < ctx->streams &&
		    n_others < ucs_static_array_size(others); s++)
		if (s != sep_a->stream)
			others[n_others++] = s;
	CHECK(n_others >= starve_phases[PH_ALL].tag_streams,
	      "%u streams besides A's, the test needs %u", n_others,
	      starve_phases[PH_ALL].tag_streams);
	fx_seq_send_one(&e, ep_a, seq++);
	t0 = fx_now_s();
	while ((st = uct_ep_flush(ep_a, 0, NULL)) != UCS_OK &&
	       fx_now_s() < t0 + DEADLINE_S)
		uct_worker_progress(e.worker);
	CHECK(st == UCS_OK, "first flush of A: %s", ucs_status_string(st));

	t0 = fx_now_s();
	while ((now = fx_now_s()) < t0 + STARVE_S && ph < PH_N) {
		st = fx_seq_send(ep_b, seq);
		if (st == UCS_OK)
			seq++;
		else
			uct_worker_progress(e.worker);
		if (now < t0 + STARVE_FLUSH_AT)
			continue;
		if (!f[ph].issued) {
			/* what A sends before this phase's flush */
			if (ph == PH_SENT && a_sent < STARVE_A_AMS) {
				if (fx_seq_send(ep_a, seq) == UCS_OK) {
					seq++;
					a_sent++;
				}
				continue;
			}
			if (a_sent < starve_phases[ph].tag_streams) {
				/* the map's key is tag & 0xff: stream
				 * 1 + key mod (STREAMS - 1) */
				if (starve_send_tag(ep_a,
						    others[a_sent] - 1) ==
				    UCS_OK) {
					seq++;
					a_sent++;
				}
				continue;
			}
			markers_at = ctx->flush_markers;
			starve_flush_issue(ep_a, &f[ph]);
		} else if (ph == PH_SENT && !f[ph].done &&
			   fx_seq_send(ep_a, seq) == UCS_OK) {
			/* A's own AMs after its flush */
			seq++;
			a_after++;
		}
		if (f[ph].done) {
			f[ph].during = fx_now_s() - f[ph].issued_at;
			f[ph].markers = ctx->flush_markers - markers_at;
			ph++;
			a_sent = 0;
		}
	}
	/* B stops: a starved flush completes once the association is
	 * quiet. */
	stopped_at = fx_now_s();
	while (ph < PH_N && f[ph].issued && !f[ph].done &&
	       fx_now_s() < stopped_at + DEADLINE_S)
		uct_worker_progress(e.worker);
	printf("flush-starve: B and A sent %u AMs (A %u after its flush in "
	       "phase sent); %u streams, A's is %u\n", seq, a_after,
	       ctx->streams, sep_a->stream);
	for (i = 0; i < PH_N; i++)
		starve_flush_report(i, &f[i], stopped_at);
	CHECK(f[PH_IDLE].during < 0 || f[PH_IDLE].markers == 0,
	      "idle: the flush of an ep with nothing outstanding sent %"
	      PRIu64 " FLUSH markers", f[PH_IDLE].markers);
	CHECK(f[PH_SENT].during < 0 || f[PH_SENT].markers >= 1,
	      "sent: A's flush after its AMs completed without a FLUSH "
	      "marker");
	CHECK(f[PH_TAGS].during < 0 ||
	      f[PH_TAGS].markers >= starve_phases[PH_TAGS].tag_streams,
	      "tags: %" PRIu64 " FLUSH markers after tag AMs on %u streams",
	      f[PH_TAGS].markers, starve_phases[PH_TAGS].tag_streams);
	CHECK(f[PH_ALL].during < 0 ||
	      f[PH_ALL].markers >= (uint64_t)ctx->streams - 1,
	      "all: %" PRIu64 " FLUSH markers after tag AMs on %u streams "
	      "(want one on each of the %u)", f[PH_ALL].markers,
	      starve_phases[PH_ALL].tag_streams, ctx->streams - 1);
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
