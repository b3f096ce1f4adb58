/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sctp_dpdk_ctx.c - the process-wide context of the `sctp_dpdk` transport:
 * one DPDK EAL, one dataplane port and one SCTP endpoint (sg_ep) shared by
 * every iface of the process (UCX opens one iface per worker), its
 * lifetime, the iface table and the exit teardown.  The peer table lives
 * in sctp_dpdk_peer.c, the shared poll loop in sctp_dpdk_rx.c, the
 * dedicated polling thread in sctp_dpdk_thread.c.
 *
 * Lifetime: created by the first iface from its config, refcounted by the
 * ifaces, but kept up until process exit even when the last iface closes:
 * the EAL cannot be initialised twice in a process, and tearing down and
 * re-opening a memif port and usrsctp per iface would make every
 * open/close cycle pay link bring-up (~1.5 s) and association set-up.  At
 * exit (atexit) the associations are shut down gracefully (bounded wait) so
 * peers see SHUTDOWN rather than ABORT, then endpoint, port and EAL go.
 *
 * Locking: ctx->lock (recursive spinlock) serialises every sg_ and dp_ call
 * (usrsctp state is process-wide), the iface table and the peer list.  Iface
 * progress only trylocks it to poll, so one thread polls for all; sends
 * take it.  It is never held while calling back into UCX.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sctp_dpdk.h"

#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/sys/string.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define UCT_SCTP_DPDK_MEMIF_WAIT_MS 3000 /* memif server: client leaves */

static pthread_mutex_t uct_sctp_dpdk_ctx_mutex = PTHREAD_MUTEX_INITIALIZER;
static uct_sctp_dpdk_ctx_t *uct_sctp_dpdk_ctx_global; /* under the mutex */
static int uct_sctp_dpdk_eal_held;    /* our EAL reference, kept to exit */
static int uct_sctp_dpdk_eal_failed;  /* rte_eal_init failed: no retry */
static int uct_sctp_dpdk_exit_registered;

/*
 * rte_eal_init pins the calling thread (a UCX worker's) to its lcore; with
 * one rank per core chosen by the MPI launcher that is the wrong CPU more
 * often than not, so the caller's affinity is put back.  The lcore id stays
 * registered for mempool caches.
 */
static int uct_sctp_dpdk_eal_init(const struct dp_config *dp_cfg)
{
	cpu_set_t saved;
	int have = pthread_getaffinity_np(pthread_self(), sizeof(saved),
					  &saved) == 0;
	int rc;

	rc = dp_eal_init(dp_cfg);
	if (have)
		pthread_setaffinity_np(pthread_self(), sizeof(saved), &saved);
	return rc;
}

static void uct_sctp_dpdk_ctx_teardown(uct_sctp_dpdk_ctx_t *ctx);

/* Process start time in ms (wall clock, so a later process at the same
 * address has a later incarnation; compared in serial arithmetic, so the
 * 49-day wrap is harmless); never 0. */
static uint32_t uct_sctp_dpdk_incarnation_now(void)
{
	struct timespec ts;
	uint32_t ms;

	clock_gettime(CLOCK_REALTIME, &ts);
	ms = (uint32_t)((uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
	return ms != 0 ? ms : 1;
}

/* UCX_SCTP_DPDK_STATS=y: one JSON line on stderr at exit, after the
 * graceful shutdown, so benchmarks can count losses and retransmissions
 * per process.  usrsctp's counters are process-wide, as is the ctx. */
static void uct_sctp_dpdk_ctx_stats_print(uct_sctp_dpdk_ctx_t *ctx)
{
	char dp_json[2048], us_json[512], st_json[1024], buf[4096], ip[16];
	struct dp_stats dp;

	dp_port_stats(ctx->port, &dp);
	dp_stats_json(&dp, dp_json, sizeof(dp_json));
	sg_stack_stats_json(us_json, sizeof(us_json));
	uct_sctp_dpdk_stream_stats_json(&ctx->smap, st_json, sizeof(st_json));
	/* One write: the ranks of a job share stderr, and several writes
	 * from different processes interleave mid-line. */
	snprintf(buf, sizeof(buf), "sctp_dpdk stats: {\"ip\": \"%s\", "
		 "\"rx_msgs\": %" PRIu64 ", \"rx_drops\": %" PRIu64 ", "
		 "\"rx_stale\": %" PRIu64 ", "
		 "\"dp\": {%s}, \"usrsctp\": {%s}, \"rma\": {\"put_msgs\": "
		 "%" PRIu64 ", \"get_reqs\": %" PRIu64 ", \"refused\": %"
		 PRIu64 "}, %s}\n",
		 dp_ip_str(ctx->ip_be, ip, sizeof(ip)), ctx->rx_msgs,
		 ctx->rx_drops, ctx->rx_stale, dp_json, us_json,
		 ctx->rma_put_msgs, ctx->rma_get_reqs, ctx->rma_refused,
		 st_json);
	fputs(buf, stderr);
}

static void uct_sctp_dpdk_atexit(void)
{
	pthread_mutex_lock(&uct_sctp_dpdk_ctx_mutex);
	if (uct_sctp_dpdk_ctx_global != NULL) {
		uct_sctp_dpdk_ctx_teardown(uct_sctp_dpdk_ctx_global);
		uct_sctp_dpdk_ctx_global = NULL;
	}
	if (uct_sctp_dpdk_eal_held) {
		dp_eal_fini(); /* removes /var/run/dpdk/<prefix> */
		uct_sctp_dpdk_eal_held = 0;
	}
	pthread_mutex_unlock(&uct_sctp_dpdk_ctx_mutex);
}

static ucs_status_t
uct_sctp_dpdk_ctx_create(const uct_sctp_dpdk_iface_config_t *config,
			 const char *text, const struct dp_config *dp_cfg,
			 const struct sg_config *sg_cfg,
			 uct_sctp_dpdk_ctx_t **ctx_p)
{
	uct_sctp_dpdk_ctx_t *ctx;
	uint32_t speed_mbps = 0;
	uint64_t stream_mask;
	ucs_status_t status;
	char ip[16];
	int rc;

	if (uct_sctp_dpdk_eal_failed) {
		ucs_error("sctp_dpdk: the DPDK EAL failed to start earlier in "
			  "this process and cannot be started again; fix "
			  UCT_SCTP_DPDK_ENV "DEVARGS/PREFIX/LCORE/MEM/DP and "
			  "restart");
		return UCS_ERR_NO_DEVICE;
	}
	ctx = ucs_calloc(1, sizeof(*ctx), "sctp_dpdk ctx");
	if (ctx == NULL) {
		ucs_error("sctp_dpdk: failed to allocate the context (%zu "
			  "bytes)", sizeof(*ctx));
		return UCS_ERR_NO_MEMORY;
	}
	if (uct_sctp_dpdk_stream_mask_parse(config->stream_tag_mask,
					    &stream_mask) != 0) {
		ucs_error("sctp_dpdk: " UCT_SCTP_DPDK_ENV "STREAM_TAG_MASK='%s' "
			  "is not a number (0xffff) nor off, ompi-comm, "
			  "ompi-tag, mpich-comm or mpich-tag: fix it",
			  config->stream_tag_mask);
		status = UCS_ERR_INVALID_PARAM;
		goto err_free;
	}
	ctx->dp_cfg = *dp_cfg;
	ctx->sg_cfg = *sg_cfg;
	ctx->stats_at_exit = config->stats;
	ctx->exit_timeout_s = config->exit_timeout_s;
	ucs_list_head_init(&ctx->peers);
	status = ucs_recursive_spinlock_init(&ctx->lock, 0);
	if (status != UCS_OK)
		goto err_free;
	ctx->config_text = ucs_strdup(text, "sctp_dpdk config");
	if (ctx->config_text == NULL) {
		status = UCS_ERR_NO_MEMORY;
		goto err_lock;
	}
	if (!uct_sctp_dpdk_eal_held) {
		rc = uct_sctp_dpdk_eal_init(dp_cfg);
		if (rc != 0) {
			/* dp_eal_init logged the EAL's reason. */
			ucs_error("sctp_dpdk: DPDK EAL start failed (%s): check "
				  UCT_SCTP_DPDK_ENV "DEVARGS='%s' and "
				  UCT_SCTP_DPDK_ENV "PREFIX='%s'", strerror(-rc),
				  config->devargs, dp_cfg->file_prefix);
			uct_sctp_dpdk_eal_failed = 1;
			status = sdp_status_from_errno(rc);
			goto err_text;
		}
		uct_sctp_dpdk_eal_held = 1;
	}
	if (!uct_sctp_dpdk_exit_registered) {
		atexit(uct_sctp_dpdk_atexit);
		uct_sctp_dpdk_exit_registered = 1;
	}
	rc = dp_port_open(dp_cfg, &ctx->port);
	if (rc != 0) {
		/* The EAL reference is kept: a later iface may retry. */
		ucs_error("sctp_dpdk: cannot open the port of "
			  UCT_SCTP_DPDK_ENV "DEVARGS='%s' (%s; see the message "
			  "above)", config->devargs, strerror(-rc));
		status = sdp_status_from_errno(rc);
		goto err_text;
	}
	rc = sg_ep_open(ctx->port, sg_cfg, &ctx->sg);
	if (rc != 0) {
		ucs_error("sctp_dpdk: cannot open the SCTP endpoint on "
			  UCT_SCTP_DPDK_ENV "SCTP_PORT=%u (%s; see the "
			  "message above)", config->sctp_port, strerror(-rc));
		status = sdp_status_from_errno(rc);
		goto err_port;
	}
	ctx->ip_be = dp_port_ip(ctx->port);
	ctx->mask_be = htonl(~((1u << (32 - dp_cfg->prefix_len)) - 1));
	ctx->sctp_port = sg_cfg->port;
	ctx->streams = sg_cfg->streams;
	rc = uct_sctp_dpdk_stream_map_init(&ctx->smap, stream_mask,
					   ctx->streams);
	if (rc != 0) {
		ucs_error("sctp_dpdk: stream map for %u streams: %s",
			  ctx->streams, strerror(-rc));
		status = sdp_status_from_errno(rc);
		goto err_sg;
	}
	ctx->seg_bytes = sg_cfg->rx_buf_bytes;
	ctx->mtu = dp_port_mtu(ctx->port);
	/* A new process at the same address is a new incarnation: eps to
	 * the old one must never deliver into it. */
	ctx->incarnation = uct_sctp_dpdk_incarnation_now();
	dp_port_link_up(ctx->port, &speed_mbps);
	/* A NIC's link speed is the bandwidth; a vdev's reported speed is a
	 * made-up number (memif: 10G), so use usrsctp's measured goodput. */
	if (dp_cfg->is_pci && speed_mbps != 0)
		ctx->bandwidth_bps = speed_mbps * 1e6 / 8;
	else
		ctx->bandwidth_bps =
			(speed_mbps != 0 &&
			 speed_mbps * 1e6 / 8 < UCT_SCTP_DPDK_VDEV_BANDWIDTH_BPS)
				? speed_mbps * 1e6 / 8
				: UCT_SCTP_DPDK_VDEV_BANDWIDTH_BPS;
	ucs_debug("sctp_dpdk: port up: %s/%u sctp port %u, %u streams, "
		  "segment %u bytes, %u Mbit/s link",
		  dp_ip_str(ctx->ip_be, ip, sizeof(ip)), dp_cfg->prefix_len,
		  ctx->sctp_port, ctx->streams, ctx->seg_bytes, speed_mbps);
	if (stream_mask != 0)
		ucs_debug("sctp_dpdk: tag messages on streams by tag mask "
			  "0x%" PRIx64, stream_mask);
	status = uct_sctp_dpdk_poll_thread_start(ctx, config);
	if (status != UCS_OK)
		goto err_smap;
	*ctx_p = ctx;
	return UCS_OK;

err_smap:
	uct_sctp_dpdk_stream_map_cleanup(&ctx->smap);
err_sg:
	sg_ep_close(ctx->sg);
err_port:
	dp_port_close(ctx->port);
err_text:
	ucs_free(ctx->config_text);
err_lock:
	ucs_recursive_spinlock_destroy(&ctx->lock);
err_free:
	ucs_free(ctx);
	return status;
}

uct_sctp_dpdk_ctx_t *uct_sctp_dpdk_ctx_peek(void)
{
	uct_sctp_dpdk_ctx_t *ctx;

	pthread_mutex_lock(&uct_sctp_dpdk_ctx_mutex);
	ctx = uct_sctp_dpdk_ctx_global;
	pthread_mutex_unlock(&uct_sctp_dpdk_ctx_mutex);
	return ctx;
}

ucs_status_t uct_sctp_dpdk_ctx_get(const uct_sctp_dpdk_iface_config_t *config,
				   uct_sctp_dpdk_ctx_t **ctx_p)
{
	static int warned;
	char text[2 * UCT_SCTP_DPDK_CONFIG_TEXT_MAX + 4];
	struct dp_config dp_cfg;
	struct sg_config sg_cfg;
	uct_sctp_dpdk_ctx_t *ctx;
	ucs_status_t status;

	status = uct_sctp_dpdk_config_build(config, &dp_cfg, &sg_cfg, text,
					    sizeof(text));
	if (status != UCS_OK)
		return status;

	pthread_mutex_lock(&uct_sctp_dpdk_ctx_mutex);
	ctx = uct_sctp_dpdk_ctx_global;
	if (ctx == NULL) {
		status = uct_sctp_dpdk_ctx_create(config, text, &dp_cfg,
						  &sg_cfg, &ctx);
		if (status != UCS_OK)
			goto out;
		uct_sctp_dpdk_ctx_global = ctx;
	} else if (strcmp(ctx->config_text, text) != 0 && !warned) {
		/* DPDK allows one such port per process. */
		ucs_warn("sctp_dpdk: this iface's " UCT_SCTP_DPDK_ENV "* "
			 "settings differ from those the process's port was "
			 "opened with; the port's ('%s') apply",
			 ctx->config_text);
		warned = 1;
	}
	ctx->refs++;
	*ctx_p = ctx;
out:
	pthread_mutex_unlock(&uct_sctp_dpdk_ctx_mutex);
	return status;
}

void uct_sctp_dpdk_ctx_put(uct_sctp_dpdk_ctx_t *ctx)
{
	if (ctx == NULL) {
		ucs_warn("sctp_dpdk: ctx_put(NULL)");
		return;
	}
	pthread_mutex_lock(&uct_sctp_dpdk_ctx_mutex);
	ucs_assert(ctx->refs > 0);
	/* Port and endpoint stay up for the next iface (see the header). */
	ctx->refs--;
	pthread_mutex_unlock(&uct_sctp_dpdk_ctx_mutex);
}

/* Peers whose association is not closed yet (caller holds ctx->lock). */
static int uct_sctp_dpdk_ctx_busy(uct_sctp_dpdk_ctx_t *ctx)
{
	uct_sctp_dpdk_peer_t *peer;

	ucs_list_for_each(peer, &ctx->peers, list) {
		if (peer->state != UCT_SCTP_DPDK_PEER_IDLE)
			return 1;
	}
	return 0;
}

/*
 * Exit drain: every association is shut down gracefully (SCTP sends
 * SHUTDOWN only after all queued data is acknowledged; SHUTDOWN_COMP ends
 * it), polled until none is left or UCX_SCTP_DPDK_EXIT_TIMEOUT passed.
 * The process holds the only copy of unacknowledged messages (usrsctp
 * lives in it), so stopping earlier loses them: the peer would wait for
 * them forever.  Caller holds ctx->lock.
 */
static void uct_sctp_dpdk_ctx_drain(uct_sctp_dpdk_ctx_t *ctx)
{
	struct timespec ts = {0, 50 * 1000};
	uct_sctp_dpdk_peer_t *peer;
	uint64_t deadline, bytes;
	char ip[16];

	/* Learn about associations the peers closed already. */
	uct_sctp_dpdk_ctx_poll(ctx);
	ucs_list_for_each(peer, &ctx->peers, list) {
		if (peer->state != UCT_SCTP_DPDK_PEER_IDLE &&
		    sg_disconnect(ctx->sg, peer->assoc) != 0)
			peer->state = UCT_SCTP_DPDK_PEER_IDLE;
	}
	deadline = dp_tsc() + (uint64_t)(dp_tsc_hz() * ctx->exit_timeout_s);
	/* A link that is down (a memif peer that left) delivers nothing. */
	while (uct_sctp_dpdk_ctx_busy(ctx) && dp_tsc() < deadline &&
	       dp_port_link_up(ctx->port, NULL)) {
		uct_sctp_dpdk_ctx_poll(ctx);
		nanosleep(&ts, NULL);
	}
	ucs_list_for_each(peer, &ctx->peers, list) {
		if (peer->state == UCT_SCTP_DPDK_PEER_IDLE)
			continue;
		bytes = 0;
		sg_assoc_unacked(ctx->sg, peer->assoc, &bytes);
		if (bytes == 0)
			continue; /* only the SHUTDOWN handshake was cut */
		ucs_warn("sctp_dpdk: exit: %" PRIu64 " bytes to %s:%u still "
			 "unacknowledged after " UCT_SCTP_DPDK_ENV
			 "EXIT_TIMEOUT=%gs: they are lost with this process; "
			 "raise " UCT_SCTP_DPDK_ENV "EXIT_TIMEOUT (peer slow, "
			 "gone or the link lossy)", bytes,
			 dp_ip_str(peer->ip_be, ip, sizeof(ip)),
			 peer->sctp_port, ctx->exit_timeout_s);
	}
}

static int uct_sctp_dpdk_is_memif_server(const char *devargs)
{
	return strncmp(devargs, "net_memif", 9) == 0 &&
	       strstr(devargs, "role=client") == NULL;
}

/* Caller holds the global mutex; nobody else uses the ctx any more. */
static void uct_sctp_dpdk_ctx_teardown(uct_sctp_dpdk_ctx_t *ctx)
{
	uct_sctp_dpdk_peer_t *peer, *tmp;
	struct timespec ts = {0, 100 * 1000};
	uint64_t deadline;

	uct_sctp_dpdk_poll_thread_stop(ctx);
	ucs_recursive_spin_lock(&ctx->lock);
	uct_sctp_dpdk_ctx_drain(ctx);
	if (ctx->sg_descs_held != 0)
		ucs_warn("sctp_dpdk: %" PRId64 " receive descriptors not "
			 "released at exit", ctx->sg_descs_held);
	if (ctx->stats_at_exit)
		uct_sctp_dpdk_ctx_stats_print(ctx);
	uct_sctp_dpdk_rma_ctx_cleanup(ctx);
	ucs_recursive_spin_unlock(&ctx->lock);
	sg_ep_close(ctx->sg);
	if (uct_sctp_dpdk_is_memif_server(ctx->dp_cfg.devargs)) {
		/* DPDK 22.11's memif tears a connection down from its
		 * interrupt thread when the client leaves, without a lock
		 * against dev_close on the main thread: closing while the
		 * client closes frees twice (seen as "EAL: Error: Invalid
		 * memory" and a crash at exit).  Let the client go first. */
		deadline = dp_tsc() + dp_tsc_hz() *
					      UCT_SCTP_DPDK_MEMIF_WAIT_MS / 1000;
		while (dp_port_link_up(ctx->port, NULL) && dp_tsc() < deadline)
			nanosleep(&ts, NULL);
		nanosleep(&ts, NULL);
	}
	dp_port_close(ctx->port);
	ucs_list_for_each_safe(peer, tmp, &ctx->peers, list) {
		ucs_list_del(&peer->list);
		ucs_free(peer);
	}
	uct_sctp_dpdk_stream_map_cleanup(&ctx->smap);
	ucs_recursive_spinlock_destroy(&ctx->lock);
	ucs_free(ctx->config_text);
	ucs_free(ctx);
}

ucs_status_t uct_sctp_dpdk_ctx_add_iface(uct_sctp_dpdk_ctx_t *ctx,
					 uct_sctp_dpdk_iface_t *iface)
{
	ucs_status_t status = UCS_ERR_EXCEEDS_LIMIT;
	unsigned tries;
	uint16_t id;

	ucs_recursive_spin_lock(&ctx->lock);
	/* Ids go round-robin so a closed iface's id is reused late: a
	 * message still in flight to it is dropped, not misdelivered. */
	for (tries = 0; tries < 65536; tries++) {
		id = ++ctx->next_iface_id;
		if (id == 0)
			continue;
		if (ctx->ifaces[id % UCT_SCTP_DPDK_MAX_IFACES] == NULL) {
			ctx->ifaces[id % UCT_SCTP_DPDK_MAX_IFACES] = iface;
			iface->id = id;
			iface->ev_gen = ctx->ev_gen;
			status = UCS_OK;
			break;
		}
	}
	ucs_recursive_spin_unlock(&ctx->lock);
	if (status != UCS_OK)
		ucs_error("sctp_dpdk: %u ifaces already open in this process "
			  "(limit %u): close some workers",
			  UCT_SCTP_DPDK_MAX_IFACES, UCT_SCTP_DPDK_MAX_IFACES);
	return status;
}

void uct_sctp_dpdk_ctx_remove_iface(uct_sctp_dpdk_ctx_t *ctx,
				    uct_sctp_dpdk_iface_t *iface)
{
	ucs_recursive_spin_lock(&ctx->lock);
	ucs_assert(ctx->ifaces[iface->id % UCT_SCTP_DPDK_MAX_IFACES] == iface);
	ctx->ifaces[iface->id % UCT_SCTP_DPDK_MAX_IFACES] = NULL;
	ucs_recursive_spin_unlock(&ctx->lock);
}

uct_sctp_dpdk_ctx_t *uct_sctp_dpdk_ctx_lock_global(void)
{
	pthread_mutex_lock(&uct_sctp_dpdk_ctx_mutex);
	return uct_sctp_dpdk_ctx_global;
}

void uct_sctp_dpdk_ctx_unlock_global(void)
{
	pthread_mutex_unlock(&uct_sctp_dpdk_ctx_mutex);
}
