/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sctp_dpdk_ctx.c - the device contexts of the `sctp_dpdk` transport: one
 * DPDK EAL per process and, per UCT device (sdp0, sdp1, ... = entries of
 * UCX_SCTP_DPDK_DEVARGS), one dataplane port, one SCTP endpoint (sg_ep),
 * one peer table and one iface table, shared by every iface opened on that
 * device (UCX opens one iface per worker and device); their lifetime, the
 * poll loop over all devices and the exit teardown.  The peer table lives
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
 * (usrsctp state is process-wide), the iface table and the peer list.  It
 * is one lock for all devices: usrsctp's timers and its stack are
 * process-wide, and a timer run from one endpoint's poll sends on another
 * endpoint's port.  Iface progress only trylocks it to poll, so one
 * thread polls every device for all; sends take it.  It is never held
 * while calling back into UCX.
 *
 * Devices: all ports open together, in order, when the first iface opens
 * (port 0's devargs go to the EAL, the others are hot-plugged); an iface
 * on sdpK takes device K's context.
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
/* Device contexts, set under the mutex before any iface uses them and
 * kept to exit; read without it by the poll loop. */
static uct_sctp_dpdk_ctx_t *uct_sctp_dpdk_devs[UCT_SCTP_DPDK_MAX_DEVS];
static unsigned uct_sctp_dpdk_ndevs;
#define uct_sctp_dpdk_ctx_global (uct_sctp_dpdk_devs[0])
static ucs_recursive_spinlock_t uct_sctp_dpdk_lock; /* every device's */
static int uct_sctp_dpdk_lock_ready;
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

static void uct_sctp_dpdk_ctx_teardown_all(void);

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
	char dp_json[2048], us_json[512], buf[3584], ip[16], paths[400];
	struct dp_stats dp;

	dp_port_stats(ctx->port, &dp);
	dp_stats_json(&dp, dp_json, sizeof(dp_json));
	sg_stack_stats_json(us_json, sizeof(us_json));
	uct_sctp_dpdk_path_json(ctx, paths, sizeof(paths));
	/* One write: the ranks of a job share stderr, and several writes
	 * from different processes interleave mid-line. */
	snprintf(buf, sizeof(buf), "sctp_dpdk stats: {\"dev\": \""
		 UCT_SCTP_DPDK_DEV_PREFIX "%u\", \"ip\": \"%s\", "
		 "\"rx_msgs\": %" PRIu64 ", \"rx_drops\": %" PRIu64 ", "
		 "\"rx_stale\": %" PRIu64 ", "
		 "\"dp\": {%s}, \"usrsctp\": {%s}, \"rma\": {\"put_msgs\": "
		 "%" PRIu64 ", \"get_reqs\": %" PRIu64 ", \"refused\": %"
		 PRIu64 "}%s}\n",
		 ctx->dev_index, dp_ip_str(ctx->ip_be, ip, sizeof(ip)),
		 ctx->rx_msgs,
		 ctx->rx_drops, ctx->rx_stale, dp_json, us_json,
		 ctx->rma_put_msgs, ctx->rma_get_reqs, ctx->rma_refused,
		 paths);
	fputs(buf, stderr);
}

static void uct_sctp_dpdk_atexit(void)
{
	pthread_mutex_lock(&uct_sctp_dpdk_ctx_mutex);
	if (uct_sctp_dpdk_ndevs != 0) {
		uct_sctp_dpdk_ctx_teardown_all();
		memset(uct_sctp_dpdk_devs, 0, sizeof(uct_sctp_dpdk_devs));
		uct_sctp_dpdk_ndevs = 0;
	}
	if (uct_sctp_dpdk_eal_held) {
		dp_eal_fini(); /* removes /var/run/dpdk/<prefix> */
		uct_sctp_dpdk_eal_held = 0;
	}
	pthread_mutex_unlock(&uct_sctp_dpdk_ctx_mutex);
}

static ucs_status_t
uct_sctp_dpdk_ctx_create(const uct_sctp_dpdk_iface_config_t *config,
			 unsigned dev, const char *text,
			 const struct dp_config *dp_cfg,
			 const struct sg_config *sg_cfg,
			 uct_sctp_dpdk_ctx_t **ctx_p)
{
	char devargs[UCT_SCTP_DPDK_CONFIG_TEXT_MAX];

	uct_sctp_dpdk_ctx_t *ctx;
	uint32_t speed_mbps = 0;
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
	ctx->dp_cfg = *dp_cfg;
	ctx->sg_cfg = *sg_cfg;
	ctx->dev_index = dev;
	ctx->stats_at_exit = config->stats;
	ctx->exit_timeout_s = config->exit_timeout_s;
	ucs_list_head_init(&ctx->peers);
	uct_sctp_dpdk_config_list_entry(config->devargs, dev, devargs,
					sizeof(devargs));
	if (!uct_sctp_dpdk_lock_ready) {
		status = ucs_recursive_spinlock_init(&uct_sctp_dpdk_lock, 0);
		if (status != UCS_OK)
			goto err_free;
		uct_sctp_dpdk_lock_ready = 1;
	}
	ctx->lock = &uct_sctp_dpdk_lock;
	ctx->config_text = ucs_strdup(text, "sctp_dpdk config");
	if (ctx->config_text == NULL) {
		status = UCS_ERR_NO_MEMORY;
		goto err_free;
	}
	if (!uct_sctp_dpdk_eal_held) {
		rc = uct_sctp_dpdk_eal_init(dp_cfg);
		if (rc != 0) {
			/* dp_eal_init logged the EAL's reason. */
			ucs_error("sctp_dpdk: DPDK EAL start failed (%s): check "
				  UCT_SCTP_DPDK_ENV "DEVARGS='%s' and "
				  UCT_SCTP_DPDK_ENV "PREFIX='%s'", strerror(-rc),
				  devargs, dp_cfg->file_prefix);
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
		ucs_error("sctp_dpdk: cannot open the port of device "
			  UCT_SCTP_DPDK_DEV_PREFIX "%u, " UCT_SCTP_DPDK_ENV
			  "DEVARGS entry %u '%s' (%s; see the message above)",
			  dev, dev, devargs, strerror(-rc));
		status = sdp_status_from_errno(rc);
		goto err_text;
	}
	rc = sg_ep_open(ctx->port, sg_cfg, &ctx->sg);
	if (rc != 0) {
		ucs_error("sctp_dpdk: cannot open the SCTP endpoint of device "
			  UCT_SCTP_DPDK_DEV_PREFIX "%u on SCTP port %u ("
			  UCT_SCTP_DPDK_ENV "SCTP_PORT='%s') (%s; see the "
			  "message above)", dev, sg_cfg->port,
			  config->sctp_port, strerror(-rc));
		status = sdp_status_from_errno(rc);
		goto err_port;
	}
	ctx->ip_be = dp_port_ip(ctx->port);
	ctx->mask_be = htonl(~((1u << (32 - dp_cfg->prefix_len)) - 1));
	ctx->sctp_port = sg_cfg->port;
	ctx->streams = sg_cfg->streams;
	ctx->seg_bytes = sg_cfg->rx_buf_bytes;
	ctx->mtu = dp_port_mtu(ctx->port);
	/* A new process at the same address is a new incarnation: eps to
	 * the old one must never deliver into it.  One per process. */
	ctx->incarnation = dev == 0 ? uct_sctp_dpdk_incarnation_now() :
				      uct_sctp_dpdk_devs[0]->incarnation;
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
	ucs_debug("sctp_dpdk: device " UCT_SCTP_DPDK_DEV_PREFIX "%u up: "
		  "%s/%u sctp port %u, %u streams, segment %u bytes, %u "
		  "Mbit/s link", dev, dp_ip_str(ctx->ip_be, ip, sizeof(ip)),
		  dp_cfg->prefix_len, ctx->sctp_port, ctx->streams,
		  ctx->seg_bytes, speed_mbps);
	*ctx_p = ctx;
	return UCS_OK;

err_port:
	dp_port_close(ctx->port);
err_text:
	ucs_free(ctx->config_text);
err_free:
	ucs_free(ctx);
	return status;
}

/* Undo uct_sctp_dpdk_ctx_create of a device no iface used yet. */
static void uct_sctp_dpdk_ctx_destroy_unused(uct_sctp_dpdk_ctx_t *ctx)
{
	sg_ep_close(ctx->sg);
	uct_sctp_dpdk_path_close(ctx);
	dp_port_close(ctx->port);
	ucs_free(ctx->config_text);
	ucs_free(ctx);
}

/* Open every device of @config, in order (caller holds the mutex). */
static ucs_status_t
uct_sctp_dpdk_devs_create(const uct_sctp_dpdk_iface_config_t *config)
{
	static char text[2 * UCT_SCTP_DPDK_CONFIG_TEXT_MAX + 4];
	static struct dp_config dp_cfgs[UCT_SCTP_DPDK_MAX_DEVS];
	static struct sg_config sg_cfgs[UCT_SCTP_DPDK_MAX_DEVS];
	unsigned ndevs = uct_sctp_dpdk_config_num_devs(config), k;
	unsigned nports = uct_sctp_dpdk_config_num_ports(config);
	uct_sctp_dpdk_ctx_t *ctx = NULL;
	ucs_status_t status;

	/* Every port's settings are judged before anything starts. */
	for (k = 0; k < nports; k++) {
		status = uct_sctp_dpdk_config_build_dev(config, k, &dp_cfgs[k],
							&sg_cfgs[k], text,
							sizeof(text));
		if (status != UCS_OK)
			return status;
	}
	for (k = 0; k < ndevs; k++) {
		uct_sctp_dpdk_config_build_dev(config, k, &dp_cfgs[k],
					       &sg_cfgs[k], text,
					       sizeof(text));
		status = uct_sctp_dpdk_ctx_create(config, k, text, &dp_cfgs[k],
						  &sg_cfgs[k], &ctx);
		if (status != UCS_OK)
			goto err;
		uct_sctp_dpdk_devs[k] = ctx;
		ctx->nb_paths = 1;
	}
	/* FAILOVER: one device, the other ports its backup paths. */
	if (ndevs == 1 && nports > 1) {
		for (k = 1; k < nports; k++)
			uct_sctp_dpdk_config_build_dev(config, k, &dp_cfgs[k],
						       &sg_cfgs[k], text,
						       sizeof(text));
		status = uct_sctp_dpdk_path_open(uct_sctp_dpdk_devs[0], config,
						 dp_cfgs, nports);
		if (status != UCS_OK) {
			k = 1;
			goto err;
		}
	}
	uct_sctp_dpdk_ndevs = ndevs;
	status = uct_sctp_dpdk_poll_thread_start(uct_sctp_dpdk_devs[0],
						 config);
	if (status != UCS_OK)
		goto err;
	for (k = 1; k < ndevs; k++)
		uct_sctp_dpdk_devs[k]->thread_on =
			uct_sctp_dpdk_devs[0]->thread_on;
	return UCS_OK;

err:
	while (k-- > 0) {
		uct_sctp_dpdk_ctx_destroy_unused(uct_sctp_dpdk_devs[k]);
		uct_sctp_dpdk_devs[k] = NULL;
	}
	uct_sctp_dpdk_ndevs = 0;
	return status;
}

/* Without the mutex: the devices are set before the first iface (and
 * the poll thread) uses them and cleared only at exit, after the poll
 * thread stopped; callers may hold the mutex (rate.c). */
uct_sctp_dpdk_ctx_t *uct_sctp_dpdk_ctx_peek_dev(unsigned dev)
{
	if (dev >= uct_sctp_dpdk_ndevs)
		return NULL;
	return uct_sctp_dpdk_devs[dev];
}

unsigned uct_sctp_dpdk_ctx_poll_all(void)
{
	unsigned work = 0, k;

	for (k = 0; k < uct_sctp_dpdk_ndevs; k++)
		work += uct_sctp_dpdk_ctx_poll(uct_sctp_dpdk_devs[k]);
	return work;
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
				   unsigned dev, uct_sctp_dpdk_ctx_t **ctx_p)
{
	static int warned;
	char text[2 * UCT_SCTP_DPDK_CONFIG_TEXT_MAX + 4];
	struct dp_config dp_cfg;
	struct sg_config sg_cfg;
	uct_sctp_dpdk_ctx_t *ctx;
	ucs_status_t status;

	status = uct_sctp_dpdk_config_build_dev(config, dev, &dp_cfg, &sg_cfg,
						text, sizeof(text));
	if (status != UCS_OK)
		return status;
	if (dev >= uct_sctp_dpdk_config_num_devs(config)) {
		ucs_error("sctp_dpdk: no device " UCT_SCTP_DPDK_DEV_PREFIX "%u: "
			  UCT_SCTP_DPDK_ENV "DEVARGS lists %u port(s)", dev,
			  uct_sctp_dpdk_config_num_devs(config));
		return UCS_ERR_NO_DEVICE;
	}

	pthread_mutex_lock(&uct_sctp_dpdk_ctx_mutex);
	if (uct_sctp_dpdk_ndevs == 0) {
		status = uct_sctp_dpdk_devs_create(config);
		if (status != UCS_OK)
			goto out;
	}
	if (dev >= uct_sctp_dpdk_ndevs) {
		ucs_error("sctp_dpdk: no device " UCT_SCTP_DPDK_DEV_PREFIX "%u: "
			  "this process opened %u port(s) with the first "
			  "iface's " UCT_SCTP_DPDK_ENV "DEVARGS", dev,
			  uct_sctp_dpdk_ndevs);
		status = UCS_ERR_NO_DEVICE;
		goto out;
	}
	ctx = uct_sctp_dpdk_devs[dev];
	if (strcmp(ctx->config_text, text) != 0 && !warned) {
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

/* Whether a device still has an association to close and a link that
 * could carry its end (caller holds the lock). */
static int uct_sctp_dpdk_ctx_busy(uct_sctp_dpdk_ctx_t *ctx)
{
	uct_sctp_dpdk_peer_t *peer;

	unsigned k;

	ucs_list_for_each(peer, &ctx->peers, list) {
		if (peer->state == UCT_SCTP_DPDK_PEER_IDLE)
			continue;
		/* A link that is down (a memif peer that left) delivers
		 * nothing; with failover any path may carry the end. */
		if (dp_port_link_up(ctx->port, NULL))
			return 1;
		for (k = 1; k < ctx->nb_paths; k++)
			if (dp_port_link_up(ctx->path_ports[k], NULL))
				return 1;
		return 0;
	}
	return 0;
}

static int uct_sctp_dpdk_devs_busy(void)
{
	unsigned k;

	for (k = 0; k < uct_sctp_dpdk_ndevs; k++)
		if (uct_sctp_dpdk_ctx_busy(uct_sctp_dpdk_devs[k]))
			return 1;
	return 0;
}

/*
 * Exit drain: every association of every device is shut down gracefully
 * (SCTP sends SHUTDOWN only after all queued data is acknowledged;
 * SHUTDOWN_COMP ends it), all devices polled together until none is left
 * or UCX_SCTP_DPDK_EXIT_TIMEOUT passed.  The process holds the only copy
 * of unacknowledged messages (usrsctp lives in it), so stopping earlier
 * loses them: the peer would wait for them forever.  Caller holds the
 * lock.
 */
static void uct_sctp_dpdk_devs_drain(void)
{
	struct timespec ts = {0, 50 * 1000};
	uct_sctp_dpdk_peer_t *peer;
	uct_sctp_dpdk_ctx_t *ctx;
	uint64_t deadline, bytes;
	char ip[16];
	unsigned k;

	/* Learn about associations the peers closed already. */
	uct_sctp_dpdk_ctx_poll_all();
	for (k = 0; k < uct_sctp_dpdk_ndevs; k++) {
		ctx = uct_sctp_dpdk_devs[k];
		ucs_list_for_each(peer, &ctx->peers, list) {
			if (peer->state != UCT_SCTP_DPDK_PEER_IDLE &&
			    sg_disconnect(ctx->sg, peer->assoc) != 0)
				peer->state = UCT_SCTP_DPDK_PEER_IDLE;
		}
	}
	ctx = uct_sctp_dpdk_devs[0];
	deadline = dp_tsc() + (uint64_t)(dp_tsc_hz() * ctx->exit_timeout_s);
	while (uct_sctp_dpdk_devs_busy() && dp_tsc() < deadline) {
		uct_sctp_dpdk_ctx_poll_all();
		nanosleep(&ts, NULL);
	}
	for (k = 0; k < uct_sctp_dpdk_ndevs; k++) {
		ctx = uct_sctp_dpdk_devs[k];
		ucs_list_for_each(peer, &ctx->peers, list) {
			if (peer->state == UCT_SCTP_DPDK_PEER_IDLE)
				continue;
			bytes = 0;
			sg_assoc_unacked(ctx->sg, peer->assoc, &bytes);
			if (bytes == 0)
				continue; /* only the SHUTDOWN handshake was
					   * cut */
			ucs_warn("sctp_dpdk: exit: %" PRIu64 " bytes to %s:%u "
				 "(device " UCT_SCTP_DPDK_DEV_PREFIX "%u) still "
				 "unacknowledged after " UCT_SCTP_DPDK_ENV
				 "EXIT_TIMEOUT=%gs: they are lost with this "
				 "process; raise " UCT_SCTP_DPDK_ENV
				 "EXIT_TIMEOUT (peer slow, gone or the link "
				 "lossy)", bytes,
				 dp_ip_str(peer->ip_be, ip, sizeof(ip)),
				 peer->sctp_port, k, ctx->exit_timeout_s);
		}
	}
}

static int uct_sctp_dpdk_is_memif_server(const char *devargs)
{
	return strncmp(devargs, "net_memif", 9) == 0 &&
	       strstr(devargs, "role=client") == NULL;
}

/* Caller holds the global mutex; nobody else uses the devices any more. */
static void uct_sctp_dpdk_ctx_teardown_all(void)
{
	uct_sctp_dpdk_peer_t *peer, *tmp;
	struct timespec ts = {0, 100 * 1000};
	uct_sctp_dpdk_ctx_t *ctx;
	uint64_t deadline;
	unsigned k;

	uct_sctp_dpdk_poll_thread_stop(uct_sctp_dpdk_devs[0]);
	ucs_recursive_spin_lock(&uct_sctp_dpdk_lock);
	uct_sctp_dpdk_devs_drain();
	for (k = 0; k < uct_sctp_dpdk_ndevs; k++) {
		ctx = uct_sctp_dpdk_devs[k];
		if (ctx->sg_descs_held != 0)
			ucs_warn("sctp_dpdk: %" PRId64 " receive descriptors "
				 "of device " UCT_SCTP_DPDK_DEV_PREFIX "%u not "
				 "released at exit", ctx->sg_descs_held, k);
		if (ctx->stats_at_exit)
			uct_sctp_dpdk_ctx_stats_print(ctx);
		uct_sctp_dpdk_rma_ctx_cleanup(ctx);
	}
	ucs_recursive_spin_unlock(&uct_sctp_dpdk_lock);
	/* Every endpoint first, while every link still exists. */
	for (k = 0; k < uct_sctp_dpdk_ndevs; k++)
		sg_ep_close(uct_sctp_dpdk_devs[k]->sg);
	for (k = 0; k < uct_sctp_dpdk_ndevs; k++) {
		ctx = uct_sctp_dpdk_devs[k];
		if (uct_sctp_dpdk_is_memif_server(ctx->dp_cfg.devargs)) {
			/* DPDK 22.11's memif tears a connection down from its
			 * interrupt thread when the client leaves, without a
			 * lock against dev_close on the main thread: closing
			 * while the client closes frees twice (seen as "EAL:
			 * Error: Invalid memory" and a crash at exit).  Let
			 * the client go first. */
			deadline = dp_tsc() + dp_tsc_hz() *
					UCT_SCTP_DPDK_MEMIF_WAIT_MS / 1000;
			while (dp_port_link_up(ctx->port, NULL) &&
			       dp_tsc() < deadline)
				nanosleep(&ts, NULL);
			nanosleep(&ts, NULL);
		}
		dp_port_close(ctx->port);
		uct_sctp_dpdk_path_close(ctx);
		ucs_list_for_each_safe(peer, tmp, &ctx->peers, list) {
			ucs_list_del(&peer->list);
			ucs_free(peer);
		}
		ucs_free(ctx->config_text);
		ucs_free(ctx);
	}
	ucs_recursive_spinlock_destroy(&uct_sctp_dpdk_lock);
	uct_sctp_dpdk_lock_ready = 0;
}

ucs_status_t uct_sctp_dpdk_ctx_add_iface(uct_sctp_dpdk_ctx_t *ctx,
					 uct_sctp_dpdk_iface_t *iface)
{
	ucs_status_t status = UCS_ERR_EXCEEDS_LIMIT;
	unsigned tries;
	uint16_t id;

	ucs_recursive_spin_lock(ctx->lock);
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
	ucs_recursive_spin_unlock(ctx->lock);
	if (status != UCS_OK)
		ucs_error("sctp_dpdk: %u ifaces already open in this process "
			  "(limit %u): close some workers",
			  UCT_SCTP_DPDK_MAX_IFACES, UCT_SCTP_DPDK_MAX_IFACES);
	return status;
}

void uct_sctp_dpdk_ctx_remove_iface(uct_sctp_dpdk_ctx_t *ctx,
				    uct_sctp_dpdk_iface_t *iface)
{
	ucs_recursive_spin_lock(ctx->lock);
	ucs_assert(ctx->ifaces[iface->id % UCT_SCTP_DPDK_MAX_IFACES] == iface);
	ctx->ifaces[iface->id % UCT_SCTP_DPDK_MAX_IFACES] = NULL;
	ucs_recursive_spin_unlock(ctx->lock);
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
