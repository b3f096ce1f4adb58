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

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define UCT_SCTP_DPDK_MEMIF_WAIT_MS 3000 /* memif server: client leaves */

static pthread_mutex_t uct_sctp_dpdk_ctx_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t uct_sctp_dpdk_sg_open_mutex =
	PTHREAD_MUTEX_INITIALIZER;
/* Device contexts, set under the mutex before any iface uses them and
 * kept to exit; read without it by the poll loop. */
static uct_sctp_dpdk_ctx_t *uct_sctp_dpdk_devs[UCT_SCTP_DPDK_MAX_DEVS];
static unsigned uct_sctp_dpdk_ndevs;
#define uct_sctp_dpdk_ctx_global (uct_sctp_dpdk_devs[0])
static ucs_recursive_spinlock_t uct_sctp_dpdk_lock; /* every device's */
static int uct_sctp_dpdk_lock_ready;
/* SELF_WIRE: devs[0] and devs[1] are the two ends of sdp0, and ifaces
 * take them in turn (self_wire_next, under the mutex). */
static int uct_sctp_dpdk_self_wire;
static unsigned uct_sctp_dpdk_self_wire_next;
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

/*
 * Sends that left bytes in usrsctp, untransmitted, on any device's
 * endpoints (lane_sg[0] is the device's own): with @bytes, how many (one
 * getsockopt per tracked association); without, only whether any
 * association is tracked (no call into usrsctp: the per-progress check).
 */
static uint64_t uct_sctp_dpdk_devs_unsent(int bytes)
{
	uint64_t total = 0;
	struct sg_ep *ep;
	unsigned k, l;

	for (k = 0; k < uct_sctp_dpdk_ndevs; k++) {
		for (l = 0; l < uct_sctp_dpdk_devs[k]->nb_lanes; l++) {
			ep = uct_sctp_dpdk_devs[k]->lane_sg[l];
			if (ep == NULL)
				continue;
			if (bytes)
				total += sg_ep_unsent_bytes(ep);
			else if (sg_ep_unsent(ep) != 0)
				return 1;
		}
	}
	return total;
}

void uct_sctp_dpdk_ctx_linger_enter(uct_sctp_dpdk_ctx_t *ctx)
{
	uint64_t gap = dp_tsc() - ctx->unsent_left_tsc;
	uint64_t gap_us = (uint64_t)(gap * 1e6 / dp_tsc_hz());

	if (gap_us >= UCT_SCTP_DPDK_STALL_US) {
		ctx->unsent_stalls++;
		ctx->unsent_stall_us += gap_us;
	}
	ctx->unsent_left_tsc = 0;
}

void uct_sctp_dpdk_ctx_linger(uct_sctp_dpdk_ctx_t *ctx)
{
	uint64_t start, now, last_moved, idle_tsc, left, prev;

	if (!uct_sctp_dpdk_devs_unsent(0))
		return;
	now = dp_tsc();
	/* Off, busy elsewhere, or the last linger moved nothing (the peer
	 * is not reading: its receive window, not ours, holds the bytes):
	 * leave them for the next progress call. */
	if (ctx->linger_tsc == 0 || now < ctx->linger_quiet_tsc ||
	    !ucs_recursive_spin_trylock(ctx->lock)) {
		ctx->unsent_left++;
		ctx->unsent_left_tsc = now;
		return;
	}
	idle_tsc = (uint64_t)(dp_tsc_hz() / 1e6 * UCT_SCTP_DPDK_LINGER_IDLE_US);
	start = last_moved = now;
	prev = left = uct_sctp_dpdk_devs_unsent(1);
	ctx->linger_calls++;
	while (left != 0) {
		uct_sctp_dpdk_ctx_poll_all();
		now = dp_tsc();
		left = uct_sctp_dpdk_devs_unsent(1);
		if (left < prev)
			last_moved = now;
		prev = left;
		if (now - last_moved > idle_tsc ||
		    now - start > ctx->linger_tsc)
			break;
	}
	ctx->linger_cycles += now - start;
	if (left == 0)
		ctx->linger_done++;
	if (left != 0) {
		ctx->unsent_left++;
		ctx->unsent_left_tsc = now;
		if (last_moved == start) /* futile: back off */
			ctx->linger_quiet_tsc = now + idle_tsc *
				UCT_SCTP_DPDK_LINGER_BACKOFF;
	}
	ucs_recursive_spin_unlock(ctx->lock);
}

/* How the exit drain ended for the associations still open when it
 * started (process-wide; in the STATS line as "exit"): ended because the
 * peer had closed its side with everything acknowledged, or left open
 * when EXIT_TIMEOUT passed. */
static struct {
	uint64_t acked_unfinished;
	uint64_t timed_out;
} uct_sctp_dpdk_exit_stats;

/* UCX_SCTP_DPDK_STATS=y: one JSON line on stderr at exit, after the
 * graceful shutdown, so benchmarks can count losses and retransmissions
 * per process.  usrsctp's counters are process-wide, as is the ctx. */
static void uct_sctp_dpdk_ctx_stats_print(uct_sctp_dpdk_ctx_t *ctx)
{
	char dp_json[2048], us_json[512], st_json[2048], buf[10240], ip[16];
	char paths[400], lanes[1200], peers[320];
	struct dp_stats dp;
	struct sg_stats sgs;
	struct sg_zc_stats zcs = { 0 }, z;
	uint64_t waits, wait_us;
	unsigned k;

	uct_sctp_dpdk_getzc_wait_stats(&waits, &wait_us);

	/* zero-copy PUT data (TX_ZCOPY_MIN), every lane */
	for (k = 0; k < ctx->nb_lanes; k++) {
		if (ctx->lane_sg[k] == NULL)
			continue;
		sg_ep_zc_stats(ctx->lane_sg[k], &z);
		zcs.msgs += z.msgs;
		zcs.bytes += z.bytes;
		zcs.copy_bytes += z.copy_bytes;
		zcs.done += z.done;
		zcs.done_err += z.done_err;
		zcs.outstanding += z.outstanding;
	}
	dp_port_stats(ctx->port, &dp);
	memset(&sgs, 0, sizeof(sgs));
	if (ctx->sg != NULL)
		sg_ep_stats(ctx->sg, &sgs); /* the base lane's link: every
					     * lane's packets */
	dp_stats_json(&dp, dp_json, sizeof(dp_json));
	sg_stack_stats_json(us_json, sizeof(us_json));
	uct_sctp_dpdk_stream_stats_json(&ctx->smap, st_json, sizeof(st_json));
	uct_sctp_dpdk_path_json(ctx, paths, sizeof(paths));
	/* what sg refused of a hostile or broken peer (docs/ROBUSTNESS.md) */
	snprintf(peers, sizeof(peers), ", \"refused\": {\"no_peer\": %"
		 PRIu64 ", \"bad_src\": %" PRIu64 ", \"pending_full\": %"
		 PRIu64 ", \"strangers_reclaimed\": %" PRIu64
		 ", \"probes\": %" PRIu64 ", \"notify_cut\": %" PRIu64
		 ", \"notify_bad\": %" PRIu64 ", \"assoc_table_full\": %"
		 PRIu64 "}", sgs.rx_no_peer, sgs.rx_bad_src,
		 sgs.rx_pending_full, sgs.peers_reclaimed,
		 sgs.rx_probe_refused, sgs.notify_cut, sgs.notify_bad,
		 sgs.assoc_table_full);
	uct_sctp_dpdk_lanes_json(ctx, lanes, sizeof(lanes));
	/* One write: the ranks of a job share stderr, and several writes
	 * from different processes interleave mid-line. */
	snprintf(buf, sizeof(buf), "sctp_dpdk stats: {\"dev\": \""
		 UCT_SCTP_DPDK_DEV_PREFIX "%u\", \"ip\": \"%s\", "
		 "\"rx_msgs\": %" PRIu64 ", \"rx_drops\": %" PRIu64 ", "
		 "\"rx_stale\": %" PRIu64 ", \"rx_closed\": %" PRIu64 ", "
		 "\"rx_bad_am\": %" PRIu64 ", "
		 "\"dp\": {%s}, \"usrsctp\": {%s}, \"rma\": {\"put_msgs\": "
		 "%" PRIu64 ", \"get_reqs\": %" PRIu64 ", \"refused\": %"
		 PRIu64 ", \"reply_foreign\": %" PRIu64 ", \"flush_markers\": %" PRIu64 "}, \"rma_rep\": {\"zc_msgs\": %" PRIu64 ", \"zc_bytes\": %"
		 PRIu64 ", \"copy_bytes\": %" PRIu64 ", \"waits\": %"
		 PRIu64 ", \"wait_us\": %" PRIu64 "}, \"rx_direct\": {\"get_direct_bytes\": %" PRIu64
		 ", \"get_copy_bytes\": %" PRIu64 ", \"put_direct_bytes\": %"
		 PRIu64 ", \"put_copy_bytes\": %" PRIu64 "}, \"rx_ext\": "
		 "{\"pkts\": %" PRIu64 ", \"bytes\": %" PRIu64 ", "
		 "\"pool_low\": %" PRIu64 ", \"copy_input_bytes\": %" PRIu64
		 "}, \"tx_zcopy\": {\"msgs\": %" PRIu64 ", \"bytes\": %"
		 PRIu64 ", \"copy_bytes\": %" PRIu64 ", \"done\": %" PRIu64
		 ", \"done_err\": %" PRIu64 ", \"outstanding\": %" PRIu64
		 "}, \"nr_sack\": {\"in\": %" PRIu64 ", \"nr_gaps\": %"
		 PRIu64 "}, \"tx_chain\": {\"pkts\": %" PRIu64 ", \"segs\": %" PRIu64
		 ", \"cluster_bytes\": %" PRIu64 "}, \"exit\": {\"acked_unfinished\": %"
		 PRIu64 ", \"timed_out\": %" PRIu64 "}, \"linger\": {\"calls\": %"
		 PRIu64 ", \"done\": %" PRIu64 ", \"us\": %" PRIu64
		 ", \"unsent_left\": %" PRIu64
		 ", \"unsent_stalls\": %" PRIu64 ", \"unsent_stall_us\": %"
		 PRIu64 "}, \"idle\": {\"sleeps\": %" PRIu64 ", \"blocks\": %"
		 PRIu64 ", \"block_wakes\": %" PRIu64 "}, \"guard\": {\"rounds\": %"
		 PRIu64 ", \"polls\": %" PRIu64 "}, %s%s%s%s}\n",
		 ctx->dev_index, dp_ip_str(ctx->ip_be, ip, sizeof(ip)),
		 ctx->rx_msgs,
		 ctx->rx_drops, ctx->rx_stale, ctx->rx_closed, ctx->rx_bad_am,
		 dp_json,
		 us_json,
		 ctx->rma_put_msgs, ctx->rma_get_reqs, ctx->rma_refused,
		 __atomic_load_n(&ctx->rma_reply_foreign, __ATOMIC_RELAXED),
		 ctx->flush_markers, ctx->rma_rep_zc_msgs, ctx->rma_rep_zc_bytes,
		 ctx->rma_rep_copy_bytes, waits, wait_us,
		 ctx->rma_get_direct_bytes,
		 __atomic_load_n(&ctx->rma_get_copy_bytes, __ATOMIC_RELAXED),
		 ctx->rma_put_direct_bytes, ctx->rma_put_copy_bytes,
		 sgs.rx_ext_pkts, sgs.rx_ext_bytes, sgs.rx_ext_pool_low,
		 sgs.rx_copy_input_bytes, zcs.msgs, zcs.bytes,
		 zcs.copy_bytes, zcs.done, zcs.done_err, zcs.outstanding,
		 sgs.rx_nr_sacks, sgs.rx_nr_sacks_nr_gaps,
		 sgs.tx_chain_pkts, sgs.tx_chain_segs, sgs.tx_cluster_bytes,
		 uct_sctp_dpdk_exit_stats.acked_unfinished,
		 uct_sctp_dpdk_exit_stats.timed_out, ctx->linger_calls,
		 ctx->linger_done,
		 (uint64_t)(ctx->linger_cycles * 1e6 / dp_tsc_hz()),
		 ctx->unsent_left, ctx->unsent_stalls, ctx->unsent_stall_us,
		 ctx->idle_sleeps, ctx->idle_blocks, ctx->idle_block_wakes,
		 uct_sctp_dpdk_devs[0]->guard_rounds,
		 uct_sctp_dpdk_devs[0]->guard_polls, lanes, st_json, paths, peers);
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

/* The EAL (started by the first device, with its devargs), the lock and
 * the exit handler, once per process.  Caller holds the mutex. */
static ucs_status_t uct_sctp_dpdk_eal_hold(const struct dp_config *dp_cfg,
					   const char *devargs)
{
	ucs_status_t status;
	int rc;

	if (!uct_sctp_dpdk_lock_ready) {
		status = ucs_recursive_spinlock_init(&uct_sctp_dpdk_lock, 0);
		if (status != UCS_OK)
			return status;
		uct_sctp_dpdk_lock_ready = 1;
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
			return sdp_status_from_errno(rc);
		}
		uct_sctp_dpdk_eal_held = 1;
	}
	if (!uct_sctp_dpdk_exit_registered) {
		atexit(uct_sctp_dpdk_atexit);
		uct_sctp_dpdk_exit_registered = 1;
	}
	return UCS_OK;
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
	ctx->dev_index = dev;
	ctx->stats_at_exit = config->stats;
	ctx->exit_timeout_s = config->exit_timeout_s;
	ucs_list_head_init(&ctx->peers);
	uct_sctp_dpdk_config_list_entry(config->devargs, dev, devargs,
					sizeof(devargs));
	ctx->lock = &uct_sctp_dpdk_lock;
	ctx->config_text = ucs_strdup(text, "sctp_dpdk config");
	if (ctx->config_text == NULL) {
		status = UCS_ERR_NO_MEMORY;
		goto err_free;
	}
	status = uct_sctp_dpdk_eal_hold(dp_cfg, devargs);
	if (status != UCS_OK)
		goto err_text;
	if (config->linger_us != UCS_ULUNITS_AUTO &&
	    config->linger_us > UCT_SCTP_DPDK_LINGER_MAX_US) {
		ucs_error("sctp_dpdk: " UCT_SCTP_DPDK_ENV "LINGER_US=%zu is "
			  "above %u us: give 0..%u (0 turns lingering off)",
			  config->linger_us, UCT_SCTP_DPDK_LINGER_MAX_US,
			  UCT_SCTP_DPDK_LINGER_MAX_US);
		status = UCS_ERR_INVALID_PARAM;
		goto err_text;
	}
	ctx->linger_tsc = (uint64_t)(dp_tsc_hz() / 1e6 *
				     (config->linger_us == UCS_ULUNITS_AUTO ?
					      UCT_SCTP_DPDK_LINGER_AUTO_US :
					      config->linger_us));
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
	/* SELF_WIRE opens its two ends from two threads: usrsctp's
	 * set-up is process-wide and not thread-safe. */
	pthread_mutex_lock(&uct_sctp_dpdk_sg_open_mutex);
	rc = sg_ep_open(ctx->port, sg_cfg, &ctx->sg);
	pthread_mutex_unlock(&uct_sctp_dpdk_sg_open_mutex);
	if (rc != 0) {
		ucs_error("sctp_dpdk: cannot open the SCTP endpoint of device "
			  UCT_SCTP_DPDK_DEV_PREFIX "%u on SCTP port %u ("
			  UCT_SCTP_DPDK_ENV "SCTP_PORT='%s') (%s; see the "
			  "message above)", dev, sg_cfg->port,
			  config->sctp_port, strerror(-rc));
		status = sdp_status_from_errno(rc);
		goto err_port;
	}
	ctx->nb_lanes = 1;
	ctx->lane_sg[0] = ctx->rx_sg = ctx->sg;
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
	status = uct_sctp_dpdk_lanes_open(ctx, config);
	if (status != UCS_OK)
		goto err_smap;
	ctx->rx_direct = config->rx_direct;
	if (ctx->rx_direct) {
		status = uct_sctp_dpdk_rma_place_enable(ctx);
		if (status != UCS_OK)
			goto err_lanes;
	}
	ctx->seg_bytes = sg_cfg->rx_buf_bytes;
	ctx->rma_whole_packets = config->rma_whole_packets;
	ctx->rma_sack_last = config->rma_sack_last;
	uct_sctp_dpdk_getzc_init(ctx, config);
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
	if (stream_mask != 0)
		ucs_debug("sctp_dpdk: tag messages on streams by tag mask "
			  "0x%" PRIx64, stream_mask);
	*ctx_p = ctx;
	return UCS_OK;

err_lanes:
	uct_sctp_dpdk_lanes_close(ctx);
err_smap:
	uct_sctp_dpdk_stream_map_cleanup(&ctx->smap);
err_sg:
	sg_ep_close(ctx->sg);
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
	uct_sctp_dpdk_stream_map_cleanup(&ctx->smap);
	uct_sctp_dpdk_lanes_close(ctx);
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
	return uct_sctp_dpdk_guard_start(uct_sctp_dpdk_devs[0], config);

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
/*
 * SELF_WIRE: device sdp0 is a memif pair inside this process, end A the
 * server (IP, SCTP_PORT), end B the client (the next address, SCTP_PORT
 * + 1), on an abstract socket named after the pid, so ifaces of one
 * process (UCX's UCT gtests open sender and receiver in one process) reach
 * each other over SCTP and the wire instead of local delivery.  A memif
 * server's open waits for its link, i.e. for the client: end A opens in a
 * thread while this one opens end B.
 */
typedef struct {
	const uct_sctp_dpdk_iface_config_t *config;
	const char *text;
	const struct dp_config *dp_cfg;
	const struct sg_config *sg_cfg;
	uct_sctp_dpdk_ctx_t *ctx;
	ucs_status_t status;
} uct_sctp_dpdk_open_arg_t;

static void *uct_sctp_dpdk_open_thread(void *arg)
{
	uct_sctp_dpdk_open_arg_t *a = arg;

	a->status = uct_sctp_dpdk_ctx_create(a->config, 0, a->text, a->dp_cfg,
					     a->sg_cfg, &a->ctx);
	return NULL;
}

static ucs_status_t
uct_sctp_dpdk_self_wire_create(const uct_sctp_dpdk_iface_config_t *config)
{
	static char text[2][2 * UCT_SCTP_DPDK_CONFIG_TEXT_MAX + 4];
	static struct dp_config dp_cfgs[2];
	static struct sg_config sg_cfgs[2];
	uct_sctp_dpdk_iface_config_t ends[2];
	char devargs[2][160], ip[2][64], port[2][16], addr[16], *slash;
	unsigned long sctp_port, prefix_len;
	uct_sctp_dpdk_open_arg_t arg_a;
	uint32_t ip_be, mask;
	ucs_status_t status;
	pthread_t thread;
	int e;

	if (config->devargs[0] != '\0') {
		ucs_error("sctp_dpdk: " UCT_SCTP_DPDK_ENV "SELF_WIRE=y opens its "
			  "own memif pair: leave " UCT_SCTP_DPDK_ENV "DEVARGS "
			  "empty (it is '%s')", config->devargs);
		return UCS_ERR_INVALID_PARAM;
	}
	snprintf(addr, sizeof(addr), "%.15s", config->ip);
	slash = strchr(config->ip, '/');
	prefix_len = slash != NULL ? strtoul(slash + 1, NULL, 10) : 24;
	if (strchr(addr, '/') != NULL)
		*strchr(addr, '/') = '\0';
	if (dp_parse_ip(addr, &ip_be) != 0 || prefix_len < 1 ||
	    prefix_len > 30) {
		ucs_error("sctp_dpdk: " UCT_SCTP_DPDK_ENV "SELF_WIRE=y needs "
			  UCT_SCTP_DPDK_ENV "IP=A.B.C.D/N with N 1..30 for end "
			  "A (end B takes the next address); it is '%s'",
			  config->ip);
		return UCS_ERR_INVALID_PARAM;
	}
	mask = ~((1u << (32 - prefix_len)) - 1);
	if (((ntohl(ip_be) + 1) & mask) != (ntohl(ip_be) & mask)) {
		ucs_error("sctp_dpdk: " UCT_SCTP_DPDK_ENV "SELF_WIRE=y: the "
			  "address after " UCT_SCTP_DPDK_ENV "IP='%s' (end B) "
			  "leaves its subnet: give a lower address", config->ip);
		return UCS_ERR_INVALID_PARAM;
	}
	sctp_port = strtoul(config->sctp_port, NULL, 10);
	for (e = 0; e < 2; e++) {
		ends[e] = *config;
		ends[e].self_wire = 0;
		snprintf(devargs[e], sizeof(devargs[e]),
			 "net_memif_sdpsw%c,role=%s,id=0,socket=/sdp-selfwire-"
			 "%d,socket-abstract=yes", 'a' + e,
			 e == 0 ? "server" : "client", (int)getpid());
		ends[e].devargs = devargs[e];
		snprintf(ip[e], sizeof(ip[e]), "%s/%lu",
			 dp_ip_str(htonl(ntohl(ip_be) + e), addr, sizeof(addr)),
			 prefix_len);
		ends[e].ip = ip[e];
		snprintf(port[e], sizeof(port[e]), "%lu", sctp_port + e);
		ends[e].sctp_port = port[e];
		status = uct_sctp_dpdk_config_build_dev(&ends[e], 0, &dp_cfgs[e],
							&sg_cfgs[e], text[e],
							sizeof(text[e]));
		if (status != UCS_OK)
			return status;
	}
	/* the EAL probes end A (the server: its socket exists early) */
	status = uct_sctp_dpdk_eal_hold(&dp_cfgs[0], devargs[0]);
	if (status != UCS_OK)
		return status;
	arg_a = (uct_sctp_dpdk_open_arg_t){&ends[0], text[0], &dp_cfgs[0],
					   &sg_cfgs[0], NULL, UCS_ERR_IO_ERROR};
	if (pthread_create(&thread, NULL, uct_sctp_dpdk_open_thread,
			   &arg_a) != 0) {
		ucs_error("sctp_dpdk: SELF_WIRE: cannot start a thread: %m");
		return UCS_ERR_IO_ERROR;
	}
	usleep(100 * 1000); /* end A starts first; B reconnects anyway */
	status = uct_sctp_dpdk_ctx_create(&ends[1], 0, text[1], &dp_cfgs[1],
					  &sg_cfgs[1],
					  &uct_sctp_dpdk_devs[1]);
	pthread_join(thread, NULL);
	if (status != UCS_OK || arg_a.status != UCS_OK) {
		if (status == UCS_OK)
			uct_sctp_dpdk_ctx_destroy_unused(uct_sctp_dpdk_devs[1]);
		if (arg_a.status == UCS_OK)
			uct_sctp_dpdk_ctx_destroy_unused(arg_a.ctx);
		uct_sctp_dpdk_devs[1] = NULL;
		return status != UCS_OK ? status : arg_a.status;
	}
	uct_sctp_dpdk_devs[0] = arg_a.ctx;
	uct_sctp_dpdk_devs[1]->dev_index = 0; /* both are sdp0 */
	uct_sctp_dpdk_ndevs = 2;
	uct_sctp_dpdk_self_wire = 1;
	uct_sctp_dpdk_devs[0]->self_wire = uct_sctp_dpdk_devs[1]->self_wire = 1;
	status = uct_sctp_dpdk_poll_thread_start(uct_sctp_dpdk_devs[0],
						 config);
	if (status != UCS_OK)
		return status; /* the ports stay until exit */
	uct_sctp_dpdk_devs[1]->thread_on = uct_sctp_dpdk_devs[0]->thread_on;
	ucs_debug("sctp_dpdk: SELF_WIRE: sdp0 = %s (server) and %s (client)",
		  ip[0], ip[1]);
	return uct_sctp_dpdk_guard_start(uct_sctp_dpdk_devs[0], config);
}

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
	struct dp_config *dp_cfg;
	struct sg_config sg_cfg;
	uct_sctp_dpdk_ctx_t *ctx;
	ucs_status_t status;

	/* ~48 KB (the static ARP table): not on the caller's stack, which
	 * may be a small thread stack of the application's.  Only checked
	 * here: the devices are opened from their own parsed copies. */
	dp_cfg = ucs_malloc(sizeof(*dp_cfg), "sctp_dpdk dp config");
	if (dp_cfg == NULL) {
		ucs_error("sctp_dpdk: no memory for the dataplane configuration "
			  "(%zu bytes)", sizeof(*dp_cfg));
		return UCS_ERR_NO_MEMORY;
	}
	/* SELF_WIRE: its ends' settings are judged when it opens them */
	status = config->self_wire ? UCS_OK :
		uct_sctp_dpdk_config_build_dev(config, dev, dp_cfg, &sg_cfg,
					       text, sizeof(text));
	ucs_free(dp_cfg);
	if (status == UCS_OK)
		status = uct_sctp_dpdk_lanes_check(config);
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
		status = config->self_wire ?
				 uct_sctp_dpdk_self_wire_create(config) :
				 uct_sctp_dpdk_devs_create(config);
		if (status != UCS_OK)
			goto out;
	}
	if (uct_sctp_dpdk_self_wire) {
		/* ends in turn: consecutive ifaces sit on different ports */
		ctx = uct_sctp_dpdk_devs[uct_sctp_dpdk_self_wire_next++ % 2];
		ctx->refs++;
		*ctx_p = ctx;
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
/*
 * An association the exit drain need not wait for, with nothing of ours
 * unacknowledged: the peer closed its side too (we sent the SHUTDOWN ACK
 * to its SHUTDOWN: both directions acknowledged), or we sent our SHUTDOWN,
 * owe the peer no SACK, and nothing came from it for EXIT_QUIET_MS.  The
 * second is for a peer that never answers the SHUTDOWN although it is
 * alive (MPICH's coll/opminloc, 4 ranks on the bridge, left both ends of
 * an association in SHUTDOWN-SENT, each waiting EXIT_TIMEOUT for the
 * other's SHUTDOWN ACK); the quiet time is what keeps the data a live
 * peer still sends us in SHUTDOWN-SENT from being cut off.
 */
static int uct_sctp_dpdk_peer_done(uct_sctp_dpdk_peer_t *peer)
{
	uint64_t bytes = 1, now;
	struct sg_stats st;

	if (sg_assoc_unacked(peer->sg, peer->assoc, &bytes) != 0)
		return 1;
	if (bytes != 0) {
		peer->exit_quiet_tsc = 0;
		return 0;
	}
	if (sg_assoc_peer_closed(peer->sg, peer->assoc))
		return 1;
	now = dp_tsc();
	if (!sg_assoc_closing(peer->sg, peer->assoc) ||
	    !sg_assoc_quiet(peer->sg, peer->assoc, now)) {
		peer->exit_quiet_tsc = 0;
		return 0;
	}
	/* anything that arrived on the endpoint starts the wait again */
	sg_ep_stats(peer->sg, &st);
	if (peer->exit_quiet_tsc == 0 || st.pkts_in != peer->exit_pkts_in) {
		peer->exit_quiet_tsc = now;
		peer->exit_pkts_in = st.pkts_in;
		return 0;
	}
	return now - peer->exit_quiet_tsc >=
	       dp_tsc_hz() / 1000 * UCT_SCTP_DPDK_EXIT_QUIET_MS;
}

static int uct_sctp_dpdk_ctx_busy(uct_sctp_dpdk_ctx_t *ctx)
{
	uct_sctp_dpdk_peer_t *peer;

	unsigned k;

	ucs_list_for_each(peer, &ctx->peers, list) {
		if (peer->state == UCT_SCTP_DPDK_PEER_IDLE)
			continue;
		/* The peer sent SHUTDOWN and has everything of ours: only its
		 * SHUTDOWN COMPLETE is outstanding, which a peer that exits
		 * at once never sends (its last frames may leave with it). */
		if (uct_sctp_dpdk_peer_done(peer))
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
			    sg_disconnect(peer->sg, peer->assoc) != 0)
				peer->state = UCT_SCTP_DPDK_PEER_IDLE;
		}
	}
	ctx = uct_sctp_dpdk_devs[0];
	deadline = dp_tsc() + (uint64_t)(dp_tsc_hz() * ctx->exit_timeout_s);
	while (uct_sctp_dpdk_devs_busy() && dp_tsc() < deadline) {
		uct_sctp_dpdk_ctx_poll_all();
		nanosleep(&ts, NULL);
	}
	/* a SHUTDOWN ACK the last sg_disconnect or poll queued leaves now */
	uct_sctp_dpdk_ctx_poll_all();
	for (k = 0; k < uct_sctp_dpdk_ndevs; k++) {
		ctx = uct_sctp_dpdk_devs[k];
		ucs_list_for_each(peer, &ctx->peers, list) {
			if (peer->state == UCT_SCTP_DPDK_PEER_IDLE)
				continue;
			if (uct_sctp_dpdk_peer_done(peer)) {
				uct_sctp_dpdk_exit_stats.acked_unfinished++;
				continue;
			}
			uct_sctp_dpdk_exit_stats.timed_out++;
			bytes = 0;
			sg_assoc_unacked(peer->sg, peer->assoc, &bytes);
			if (bytes == 0) {
				/* only the SHUTDOWN handshake was cut */
				ucs_diag("sctp_dpdk: exit: association to %s:%u "
					 "still %s after " UCT_SCTP_DPDK_ENV
					 "EXIT_TIMEOUT=%gs, nothing of ours "
					 "unacknowledged",
					 dp_ip_str(peer->ip_be, ip, sizeof(ip)),
					 peer->sctp_port,
					 sg_assoc_state_name(peer->sg,
							     peer->assoc),
					 ctx->exit_timeout_s);
				continue;
			}
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

/* Caller holds the global mutex; nobody else uses the devices any more. */
static void uct_sctp_dpdk_ctx_teardown_all(void)
{
	uct_sctp_dpdk_peer_t *peer, *tmp;
	struct timespec ts = {0, 100 * 1000};
	uct_sctp_dpdk_ctx_t *ctx;
	uint64_t deadline;
	unsigned k;

	uct_sctp_dpdk_guard_stop(uct_sctp_dpdk_devs[0]);
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
	/* Every endpoint first, while every link still exists; then the
	 * ports last first (SELF_WIRE: the memif client before its server,
	 * which waits for it to leave). */
	for (k = 0; k < uct_sctp_dpdk_ndevs; k++) {
		uct_sctp_dpdk_lanes_close(uct_sctp_dpdk_devs[k]);
		sg_ep_close(uct_sctp_dpdk_devs[k]->sg);
		/* zero-copy GET replies still referenced: their done never
		 * runs now; nothing may wait for them */
		uct_sctp_dpdk_getzc_forget(uct_sctp_dpdk_devs[k]);
	}
	for (k = uct_sctp_dpdk_ndevs; k-- > 0;) {
		ctx = uct_sctp_dpdk_devs[k];
		if (uct_sctp_dpdk_self_wire) {
			/* Both ends of the memif pair live in this process:
			 * closing (or stopping) one makes DPDK 22.11's memif
			 * tear the other down from its interrupt thread
			 * while this thread closes it, and some exits
			 * crashed there (UCX gtest test_uct_ep, test_uct_event
			 * in SELF_WIRE mode).  The process is exiting: the
			 * ports stay open (pools and shared memory go with
			 * the process; the socket is abstract). */
			goto free_ctx;
		}
		if (dp_port_is_memif_server(ctx->port)) {
			/* DPDK 22.11's memif tears a connection down from its
			 * interrupt thread when the client leaves, without a
			 * lock against dev_close on the main thread: closing
			 * while the client closes frees twice (seen as "EAL:
			 * Error: Invalid memory" and a crash at exit).  Let
			 * the client go first. */
			deadline = dp_tsc() + dp_tsc_hz() *
					UCT_SCTP_DPDK_MEMIF_WAIT_MS / 1000;
			while (dp_port_link_up(ctx->port, NULL) &&
			       dp_tsc() < deadline) {
				/* polled: the client's close handshake
				 * (dataplane dp_bye.c) is answered here */
				dp_port_poll(ctx->port, dp_tsc());
				nanosleep(&ts, NULL);
			}
			/* dp_port_close closes on the interrupt thread, after
			 * its teardown of the connection. */
		}
		dp_port_close(ctx->port);
		uct_sctp_dpdk_path_close(ctx);
free_ctx:
		ucs_list_for_each_safe(peer, tmp, &ctx->peers, list) {
			ucs_list_del(&peer->list);
			ucs_free(peer);
		}
		uct_sctp_dpdk_peer_index_free(ctx);
		uct_sctp_dpdk_stream_map_cleanup(&ctx->smap);
		ucs_free(ctx->config_text);
		ucs_free(ctx);
	}
	ucs_recursive_spinlock_destroy(&uct_sctp_dpdk_lock);
	uct_sctp_dpdk_lock_ready = 0;
	uct_sctp_dpdk_self_wire = 0;
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
