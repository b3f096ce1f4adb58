/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_uct_guard.c - the stall guard (UCX_SCTP_DPDK_GUARD_MS, inline
 * progress): a process that stops progressing right after sends of which
 * a packet was lost still gets them to its peer (meson tests uct-guard,
 * uct-guard-off).
 *
 * The sender's second DATA packet is dropped (dp drop=tx:2); it sends
 * MSGS AMs (one packet each) to the forked peer (fx_seq_peer_main, which
 * counts them in order while it progresses), then blocks outside the
 * stack, as MPICH's MPI_Finalize blocks in its PMI barrier: it only waits
 * on the pipe for the peer's count, for at most STALL_S.
 *
 *   on    (GUARD_MS default): the guard polls the stalled stack, the T3
 *         timer retransmits the lost packet, the peer reports every AM
 *         within STALL_S, and the guard's counter shows it polled.
 *   off   (GUARD_MS=0): nothing runs the stack; the peer still misses the
 *         lost AM (and what follows it) at STALL_S.  The control: it shows
 *         the loss is real and that only the guard repaired it.
 *
 * Fixture: uct_fixture.h.
 */
#include "uct_fixture.h"

#include <string.h>
#include <unistd.h>

#define MSGS 4
#define STALL_S 8	/* > rto_initial (1 s) + a retransmission round */

static const char *guard_mode;

static int test_guard(void)
{
	uint32_t want = 0, report[4] = {0, 0, 0, 0};
	int on = strcmp(guard_mode, "on") == 0;
	uct_sctp_dpdk_ctx_t *ctx;
	uint8_t dev[64], ifa[64];
	struct dp_stats ds;
	uint32_t seq;
	double t0;
	uct_ep_h ep;
	iface_t a;
	env_t e;
	int fd, got;

	fd = fx_fork_client(fx_seq_peer_main);
	if (fd < 0)
		return 1;
	setenv("UCX_SCTP_DPDK_DP", "drop=tx:2", 1);
	if (!on)
		setenv("UCX_SCTP_DPDK_GUARD_MS", "0", 1);
	fx_env_open(&e);
	fx_iface_open(&e, &a, 0);
	/* fx_seq_peer_main writes its address and reads counts only */
	if (fx_seq_peer_addr(fd, dev, ifa, want) != 0)
		return 1;
	ep = fx_ep_to(&a, dev, ifa);
	for (seq = 0; seq < MSGS; seq++)
		fx_seq_send_one(&e, ep, seq);
	ctx = uct_sctp_dpdk_ctx_peek();
	CHECK(ctx != NULL && ctx->guard_on == on,
	      "guard thread %s, expected %s", ctx && ctx->guard_on ? "on" :
	      "off", on ? "on" : "off");

	/* From here on this thread never enters the stack until the peer
	 * answered or STALL_S passed. */
	t0 = fx_now_s();
	got = fx_seq_peer_report(fd, MSGS, report, STALL_S * 1000);
	if (got == -1)
		return 1;
	got = got == 0;
	printf("guard %s: peer %s %u of %u AMs after %.2f s without "
	       "progress; guard rounds %" PRIu64 ", polls %" PRIu64 "\n",
	       guard_mode, got == 1 ? "reported" : "had not reported",
	       report[0], MSGS, fx_now_s() - t0, ctx ? ctx->guard_rounds : 0,
	       ctx ? ctx->guard_polls : 0);
	dp_port_stats(ctx->port, &ds);
	CHECK(ds.drops[DP_DROP_HOOK] == 1,
	      "the drop hook dropped %" PRIu64 " packets, expected 1",
	      ds.drops[DP_DROP_HOOK]);
	if (on) {
		CHECK(got == 1 && report[0] == MSGS,
		      "the peer got %u of %u AMs while this process did not "
		      "progress (the guard must retransmit the lost one)",
		      report[0], MSGS);
		CHECK(report[1] == 0 && report[3] == 0,
		      "out of order %u, bad %u", report[1], report[3]);
		CHECK(ctx->guard_rounds > 0,
		      "the guard never polled the stalled stack");
	} else {
		CHECK(got == 0, "the peer reported %u AMs without the guard: "
		      "something else retransmitted, the control is void",
		      report[0]);
		CHECK(ctx->guard_rounds == 0, "GUARD_MS=0 and the guard ran");
		/* progress 1 s so the lost AM is retransmitted before the
		 * ep is destroyed */
		t0 = fx_now_s();
		while (fx_now_s() < t0 + 1)
			uct_worker_progress(e.worker);
	}
	uct_ep_destroy(ep);
	uct_iface_close(a.iface);
	close(fd);
	fx_env_close(&e);
	return fx_failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	guard_mode = argc > 1 ? argv[1] : "on";
	if (strcmp(guard_mode, "on") && strcmp(guard_mode, "off")) {
		fprintf(stderr, "usage: %s on|off\n", argv[0]);
		return 2;
	}
	return fx_run(test_guard);
}
