/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sctp_dpdk_thread.c - the dedicated-core progress mode (UCX_SCTP_DPDK_PROGRESS=
 * thread): one thread, optionally pinned (POLL_LCORE), polls the port and
 * the SCTP endpoint under ctx->lock and fills the ifaces' RX queues; the
 * UCX workers only drain their queue, send and dispatch pending requests.
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

	if (ctx->poll_lcore >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(ctx->poll_lcore, &set);
		if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
			ucs_warn("sctp_dpdk: cannot pin the polling thread to "
				 UCT_SCTP_DPDK_ENV "POLL_LCORE=%d",
				 ctx->poll_lcore);
	}
	dp_idle_init(&idle, 256, ctx->idle_sleep_us);
	while (!ctx->thread_stop) {
		work = 0;
		if (ucs_recursive_spin_trylock(ctx->lock)) {
			/* every device: one poll loop */
			work = uct_sctp_dpdk_ctx_poll_all();
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
		}
		dp_idle_update(&idle, work);
	}
	return NULL;
}

ucs_status_t
uct_sctp_dpdk_poll_thread_start(uct_sctp_dpdk_ctx_t *ctx,
				const uct_sctp_dpdk_iface_config_t *config)
{
	/* PROGRESS and POLL_LCORE were checked by config_build */
	if (strcmp(config->progress, "thread") != 0)
		return UCS_OK;
	ctx->poll_lcore = config->poll_lcore;
	ctx->idle_sleep_us = uct_sctp_dpdk_config_idle_sleep_us(config);
	ctx->thread_stop = 0;
	if (pthread_create(&ctx->poll_thread, NULL, uct_sctp_dpdk_poll_thread,
			   ctx) != 0) {
		ucs_error("sctp_dpdk: cannot start the polling thread "
			  "(PROGRESS=thread): %m");
		return UCS_ERR_IO_ERROR;
	}
	ctx->thread_on = 1;
	ucs_debug("sctp_dpdk: dedicated polling thread on cpu %d",
		  ctx->poll_lcore);
	return UCS_OK;
}

void uct_sctp_dpdk_poll_thread_stop(uct_sctp_dpdk_ctx_t *ctx)
{
	if (!ctx->thread_on)
		return;
	ctx->thread_stop = 1;
	pthread_join(ctx->poll_thread, NULL);
	ctx->thread_on = 0;
}
