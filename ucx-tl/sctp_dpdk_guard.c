/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sctp_dpdk_guard.c - the stall guard (UCX_SCTP_DPDK_GUARD_MS, inline
 * progress only).
 *
 * With inline progress the user-space stack runs only inside UCX's
 * progress: while the application computes, or blocks outside MPI (MPICH
 * 4.2's MPI_Finalize waits in a PMI barrier before it closes its eps),
 * nothing retransmits a lost packet, sends a SACK it owes or answers a
 * peer's retransmission.  A peer that waits for that data never reaches
 * the barrier, and the job hangs; the kernel's TCP would have retransmitted
 * from its timers.
 *
 * The guard is one thread per process that sleeps GUARD_MS at a time.  On
 * waking it compares the poll count (ctx->poll_count, bumped by every poll
 * of the port) with the one it saw last: when nobody polled during the
 * whole interval it takes the one lock with a trylock and polls every
 * device (uct_sctp_dpdk_ctx_poll_all) until there is no work left, at most
 * GUARD_POLLS times.  The poll only moves the stack and queues what
 * arrives (the ifaces' RX queues, RMA replies), exactly as the dedicated
 * thread of PROGRESS=thread does; AM handlers and completions still run
 * only from the worker's progress, as UCT requires.  While the worker
 * polls, the guard only wakes and compares: GUARD_MS = 10 costs 100
 * wake-ups a second, against the SCTP timers' granularity of rto_min
 * (20-100 ms).  GUARD_MS = 0 disables it.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sctp_dpdk.h"

#include <ucs/debug/log.h>

#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

/* Polls of one stalled interval, at most: each takes a burst of frames. */
#define UCT_SCTP_DPDK_GUARD_POLLS 64

static void *uct_sctp_dpdk_guard_thread(void *arg)
{
	uct_sctp_dpdk_ctx_t *ctx = arg;
	struct timespec ts = {
		.tv_sec = ctx->guard_ms / 1000,
		.tv_nsec = (long)(ctx->guard_ms % 1000) * 1000000L,
	};
	uint64_t seen = __atomic_load_n(&ctx->poll_count, __ATOMIC_RELAXED);
	uint64_t now;
	unsigned i;

	while (!__atomic_load_n(&ctx->guard_stop, __ATOMIC_ACQUIRE)) {
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
		ts.tv_sec = ctx->guard_ms / 1000;
		ts.tv_nsec = (long)(ctx->guard_ms % 1000) * 1000000L;
		now = __atomic_load_n(&ctx->poll_count, __ATOMIC_RELAXED);
		if (now != seen) {
			seen = now; /* the worker polls: nothing to do */
			continue;
		}
		if (!ucs_recursive_spin_trylock(ctx->lock))
			continue; /* someone is inside the stack */
		for (i = 0; i < UCT_SCTP_DPDK_GUARD_POLLS; i++) {
			ctx->guard_polls++;
			if (uct_sctp_dpdk_ctx_poll_all() == 0)
				break;
		}
		ctx->guard_rounds++;
		seen = ctx->poll_count;
		ucs_recursive_spin_unlock(ctx->lock);
	}
	return NULL;
}

ucs_status_t
uct_sctp_dpdk_guard_start(uct_sctp_dpdk_ctx_t *ctx,
			  const uct_sctp_dpdk_iface_config_t *config)
{
	ctx->guard_ms = config->guard_ms;
	if (ctx->thread_on || ctx->guard_ms == 0)
		return UCS_OK; /* PROGRESS=thread polls all the time */
	ctx->guard_stop = 0;
	if (pthread_create(&ctx->guard_thread, NULL,
			   uct_sctp_dpdk_guard_thread, ctx) != 0) {
		/* the stack works without it, as with GUARD_MS=0 */
		ucs_warn("sctp_dpdk: cannot start the stall guard thread (%m): "
			 "running without it, as with " UCT_SCTP_DPDK_ENV
			 "GUARD_MS=0");
		return UCS_OK;
	}
	ctx->guard_on = 1;
	ctx->guard_pid = getpid();
	return UCS_OK;
}

void uct_sctp_dpdk_guard_stop(uct_sctp_dpdk_ctx_t *ctx)
{
	if (!ctx->guard_on)
		return;
	/* A child forked after the start has no guard thread to join. */
	if (getpid() != ctx->guard_pid) {
		ctx->guard_on = 0;
		return;
	}
	__atomic_store_n(&ctx->guard_stop, 1, __ATOMIC_RELEASE);
	pthread_join(ctx->guard_thread, NULL);
	ctx->guard_on = 0;
}
