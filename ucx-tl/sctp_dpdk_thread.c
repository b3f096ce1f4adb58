/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sctp_dpdk_thread.c - the dedicated-core progress mode (UCX_SCTP_DPDK_PROGRESS=
 * thread): one thread, optionally pinned (POLL_LCORE), polls the port and
 * the SCTP endpoint under ctx->lock and fills the ifaces' RX queues; the
 * UCX workers only drain their queue, send and dispatch pending requests.
 *
 * With LANES=N (the port has N queue pairs, lane k on queue k) lane k > 0
 * gets a thread of its own that polls its queue and its socket, pinned to
 * the k-th CPU after POLL_LCORE in the process's affinity set (when
 * POLL_LCORE is given).  Every poll still takes ctx->lock, the one
 * process-wide lock (usrsctp's state, the peer list and the ifaces are
 * shared): the lane threads take turns, they do not run usrsctp at once
 * (docs/BENCHMARKS.md, "Lanes: several associations on one port").
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sctp_dpdk.h"

#include <ucs/debug/log.h>

#include <rte_pause.h>

#include <pthread.h>
#include <sched.h>

/* Pauses (~1.5 us on x86) between two polls of the dedicated thread. */
#define UCT_SCTP_DPDK_POLL_GAP_PAUSES 64
#include <string.h>

/* The CPU of lane @k's thread: the k-th allowed CPU after POLL_LCORE
 * (wrapping, so lanes share CPUs when there are fewer); -1 unpinned. */
static int uct_sctp_dpdk_lane_cpu(const uct_sctp_dpdk_ctx_t *ctx, unsigned k)
{
	cpu_set_t allowed;
	int cpu = ctx->poll_lcore, tries;

	if (cpu < 0 || k == 0)
		return cpu;
	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0 ||
	    CPU_COUNT(&allowed) == 0)
		return cpu;
	while (k-- > 0) {
		for (tries = 0; tries < CPU_SETSIZE; tries++) {
			cpu = (cpu + 1) % CPU_SETSIZE;
			if (CPU_ISSET(cpu, &allowed))
				break;
		}
	}
	return cpu;
}

static void uct_sctp_dpdk_thread_pin(uct_sctp_dpdk_ctx_t *ctx, unsigned k)
{
	cpu_set_t set;

	ctx->lane_cpu[k] = uct_sctp_dpdk_lane_cpu(ctx, k);
	if (ctx->lane_cpu[k] < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(ctx->lane_cpu[k], &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
		ucs_warn("sctp_dpdk: cannot pin the polling thread of lane %u "
			 "to cpu %d (" UCT_SCTP_DPDK_ENV "POLL_LCORE=%d)", k,
			 ctx->lane_cpu[k], ctx->poll_lcore);
}

typedef struct {
	uct_sctp_dpdk_ctx_t *ctx;
	unsigned lane;
} uct_sctp_dpdk_lane_arg_t;

static uct_sctp_dpdk_lane_arg_t
	uct_sctp_dpdk_lane_args[UCT_SCTP_DPDK_MAX_LANES];

/* Lane k > 0: its queue, its socket, under the one lock. */
static void *uct_sctp_dpdk_lane_thread(void *arg)
{
	uct_sctp_dpdk_lane_arg_t *la = arg;
	uct_sctp_dpdk_ctx_t *ctx = la->ctx;
	struct dp_idle idle;
	unsigned work, i;

	uct_sctp_dpdk_thread_pin(ctx, la->lane);
	dp_idle_init(&idle, 256, ctx->idle_sleep_us);
	while (!ctx->thread_stop) {
		work = 0;
		if (ucs_recursive_spin_trylock(ctx->lock)) {
			work = uct_sctp_dpdk_ctx_poll_lane(ctx, la->lane);
			ctx->lane_thread_polls[la->lane]++;
			ucs_recursive_spin_unlock(ctx->lock);
			for (i = 0; i < UCT_SCTP_DPDK_POLL_GAP_PAUSES; i++)
				rte_pause();
		} else {
			ctx->lane_lock_misses[la->lane]++; /* its own counter */
		}
		dp_idle_update(&idle, work);
	}
	return NULL;
}

static void *uct_sctp_dpdk_poll_thread(void *arg)
{
	uct_sctp_dpdk_ctx_t *ctx = arg, *dev;
	uint32_t ev_gen[UCT_SCTP_DPDK_MAX_DEVS];
	struct dp_idle idle;
	unsigned work, i, k;

	/* Every device was opened before the thread started. */
	for (k = 0; k < UCT_SCTP_DPDK_MAX_DEVS; k++) {
		dev = uct_sctp_dpdk_ctx_peek_dev(k);
		ev_gen[k] = dev != NULL ? dev->ev_gen : 0;
	}

	uct_sctp_dpdk_thread_pin(ctx, 0);
	dp_idle_init(&idle, 256, ctx->idle_sleep_us);
	while (!ctx->thread_stop) {
		work = 0;
		if (ucs_recursive_spin_trylock(ctx->lock)) {
			/* every device: one poll loop (lane 0's only when
			 * the lanes have threads) */
			work = uct_sctp_dpdk_ctx_poll_all();
			ctx->lane_thread_polls[0]++;
			/* A peer failed: wake sleeping workers, their eps'
			 * errors are reported from progress. */
			for (k = 0; k < UCT_SCTP_DPDK_MAX_DEVS; k++) {
				dev = uct_sctp_dpdk_ctx_peek_dev(k);
				if (dev == NULL)
					break;
				if (ucs_unlikely(dev->ev_gen != ev_gen[k])) {
					ev_gen[k] = dev->ev_gen;
					uct_sctp_dpdk_ctx_wake_armed(dev);
				}
			}
			ucs_recursive_spin_unlock(ctx->lock);
			/* Leave the lock a window: spinning senders (and local
			 * deliveries) never won it against an immediate
			 * re-trylock, and crawled at one send per tens of us
			 * (gtest test_uct_event with PROGRESS=thread). */
			for (i = 0; i < UCT_SCTP_DPDK_POLL_GAP_PAUSES; i++)
				rte_pause();
		} else {
			ctx->lane_lock_misses[0]++; /* its own counter */
		}
		dp_idle_update(&idle, work);
	}
	return NULL;
}

ucs_status_t
uct_sctp_dpdk_poll_thread_start(uct_sctp_dpdk_ctx_t *ctx,
				const uct_sctp_dpdk_iface_config_t *config)
{
	unsigned k;

	/* PROGRESS and POLL_LCORE were checked by config_build */
	if (strcmp(config->progress, "thread") != 0)
		return UCS_OK;
	ctx->poll_lcore = config->poll_lcore;
	ctx->idle_sleep_us = uct_sctp_dpdk_config_idle_sleep_us(config);
	ctx->thread_stop = 0;
	ctx->lane_threads = 0;
	if (pthread_create(&ctx->poll_thread, NULL, uct_sctp_dpdk_poll_thread,
			   ctx) != 0) {
		ucs_error("sctp_dpdk: cannot start the polling thread "
			  "(PROGRESS=thread): %m");
		return UCS_ERR_IO_ERROR;
	}
	ctx->thread_on = 1;
	ucs_debug("sctp_dpdk: dedicated polling thread on cpu %d",
		  ctx->poll_lcore);
	/* Lanes: a thread per lane k > 0.  Lane 0's thread skips them as
	 * soon as lane_threads is set (under the lock). */
	ucs_recursive_spin_lock(ctx->lock);
	for (k = 1; k < ctx->nb_lanes; k++) {
		uct_sctp_dpdk_lane_args[k].ctx = ctx;
		uct_sctp_dpdk_lane_args[k].lane = k;
		if (pthread_create(&ctx->lane_thread[k], NULL,
				   uct_sctp_dpdk_lane_thread,
				   &uct_sctp_dpdk_lane_args[k]) != 0) {
			ucs_recursive_spin_unlock(ctx->lock);
			ucs_error("sctp_dpdk: cannot start the polling thread of "
				  "lane %u (PROGRESS=thread, LANES=%u): %m", k,
				  ctx->nb_lanes);
			uct_sctp_dpdk_poll_thread_stop(ctx);
			return UCS_ERR_IO_ERROR;
		}
		ctx->lane_threads = k;
	}
	ucs_recursive_spin_unlock(ctx->lock);
	return UCS_OK;
}

void uct_sctp_dpdk_poll_thread_stop(uct_sctp_dpdk_ctx_t *ctx)
{
	if (!ctx->thread_on)
		return;
	ctx->thread_stop = 1;
	while (ctx->lane_threads != 0)
		pthread_join(ctx->lane_thread[ctx->lane_threads--], NULL);
	pthread_join(ctx->poll_thread, NULL);
	ctx->thread_on = 0;
}
