/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sctp_dpdk_ctx.c - the process-wide context of the `sctp_dpdk` transport:
 * one DPDK EAL, one dataplane port and one SCTP endpoint (sg_ep) shared by
 * every iface of the process (UCX opens one iface per worker), the peer
 * table (one SCTP association per remote process) and the shared poll loop.
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
 *
 * Receive: uct_sctp_dpdk_ctx_poll() takes whole messages from sg_recv and
 * queues each on the RX queue of the iface named in its header; the iface
 * runs the AM handler from its own progress, in its own thread.
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

#define UCT_SCTP_DPDK_EXIT_WAIT_MS 1000  /* graceful shutdown at exit */
#define UCT_SCTP_DPDK_MEMIF_WAIT_MS 3000 /* memif server: client leaves */
#define UCT_SCTP_DPDK_CONFIG_TEXT_MAX 4096

static pthread_mutex_t uct_sctp_dpdk_ctx_mutex = PTHREAD_MUTEX_INITIALIZER;
static uct_sctp_dpdk_ctx_t *uct_sctp_dpdk_ctx_global; /* under the mutex */
static int uct_sctp_dpdk_eal_held;    /* our EAL reference, kept to exit */
static int uct_sctp_dpdk_eal_failed;  /* rte_eal_init failed: no retry */
static int uct_sctp_dpdk_exit_registered;

ucs_status_t sdp_status_from_errno(int err)
{
	switch (err) {
	case 0:
		return UCS_OK;
	case -EAGAIN:
	case -ENOBUFS:
		return UCS_ERR_NO_RESOURCE;
	case -EINPROGRESS:
		return UCS_INPROGRESS;
	case -EINVAL:
		return UCS_ERR_INVALID_PARAM;
	case -ENOMEM:
		return UCS_ERR_NO_MEMORY;
	case -ENODEV:
		return UCS_ERR_NO_DEVICE;
	case -EHOSTUNREACH:
	case -ENOTCONN:
		return UCS_ERR_UNREACHABLE;
	case -ETIMEDOUT:
		return UCS_ERR_TIMED_OUT;
	case -EMSGSIZE:
		return UCS_ERR_EXCEEDS_LIMIT;
	case -EADDRINUSE:
		return UCS_ERR_BUSY;
	case -EALREADY:
		return UCS_ERR_ALREADY_EXISTS;
	case -ENOSPC:
		return UCS_ERR_EXCEEDS_LIMIT;
	default:
		return UCS_ERR_IO_ERROR;
	}
}

/* One configuration token and the variable it came from. */
typedef struct {
	const char *var;   /* name after UCX_SCTP_DPDK_ */
	char text[640];	   /* "key=value" tokens; "" = not given */
} uct_sctp_dpdk_token_t;

enum { UCT_SCTP_DPDK_DP_TOKENS = 9, UCT_SCTP_DPDK_SG_TOKENS = 7 };

static void
uct_sctp_dpdk_tokens(const uct_sctp_dpdk_iface_config_t *config,
		     uct_sctp_dpdk_token_t *dp, uct_sctp_dpdk_token_t *sg)
{
	memset(dp, 0, sizeof(*dp) * UCT_SCTP_DPDK_DP_TOKENS);
	memset(sg, 0, sizeof(*sg) * UCT_SCTP_DPDK_SG_TOKENS);
	dp[0].var = "DEVARGS";
	snprintf(dp[0].text, sizeof(dp[0].text), "dev=%s", config->devargs);
	dp[1].var = "IP";
	if (config->ip[0] != '\0')
		snprintf(dp[1].text, sizeof(dp[1].text), "ip=%s", config->ip);
	dp[2].var = "MTU";
	snprintf(dp[2].text, sizeof(dp[2].text), "mtu=%u", config->mtu);
	dp[3].var = "PREFIX";
	if (config->prefix[0] != '\0')
		snprintf(dp[3].text, sizeof(dp[3].text), "prefix=%s",
			 config->prefix);
	dp[4].var = "LCORE";
	if (config->lcore >= 0)
		snprintf(dp[4].text, sizeof(dp[4].text), "lcore=%d",
			 config->lcore);
	dp[5].var = "MEM";
	snprintf(dp[5].text, sizeof(dp[5].text), "mem=%u", config->mem_mb);
	dp[6].var = "IDLE_SLEEP_US";
	snprintf(dp[6].text, sizeof(dp[6].text), "idle_sleep_us=%u",
		 config->idle_sleep_us);
	dp[7].var = "RATE";
	snprintf(dp[7].text, sizeof(dp[7].text), "rate=%s", config->rate);
	dp[8].var = "DP";
	snprintf(dp[8].text, sizeof(dp[8].text), "%s", config->dp_extra);

	sg[0].var = "SCTP_PORT";
	snprintf(sg[0].text, sizeof(sg[0].text), "port=%u", config->sctp_port);
	sg[1].var = "STREAMS";
	snprintf(sg[1].text, sizeof(sg[1].text), "streams=%u",
		 config->streams);
	sg[2].var = "RX_DESCS";
	snprintf(sg[2].text, sizeof(sg[2].text), "rx_descs=%u",
		 config->rx_descs);
	sg[3].var = "SEG_SIZE";
	snprintf(sg[3].text, sizeof(sg[3].text), "rx_buf=%zu",
		 config->seg_size);
	/* Messages are AMs: never above one segment, so one descriptor. */
	sg[4].var = "SEG_SIZE";
	snprintf(sg[4].text, sizeof(sg[4].text), "max_msg=%zu",
		 config->seg_size);
	sg[5].var = "SG";
	snprintf(sg[5].text, sizeof(sg[5].text), "rx_headroom=%u",
		 UCT_SCTP_DPDK_SG_HEADROOM_BYTES);
	sg[6].var = "SG";
	snprintf(sg[6].text, sizeof(sg[6].text), "%s", config->sg_extra);
}

static void uct_sctp_dpdk_append(char *buf, size_t size, const char *token)
{
	size_t len = strlen(buf);

	snprintf(buf + len, size - len, "%s ", token);
}

/* Validate each token alone, so an error names its variable, then join. */
ucs_status_t uct_sctp_dpdk_config_build(
	const uct_sctp_dpdk_iface_config_t *config, struct dp_config *dp_cfg,
	struct sg_config *sg_cfg, char *text, size_t len)
{
	uct_sctp_dpdk_token_t dp[UCT_SCTP_DPDK_DP_TOKENS];
	uct_sctp_dpdk_token_t sg[UCT_SCTP_DPDK_SG_TOKENS];
	char dp_text[UCT_SCTP_DPDK_CONFIG_TEXT_MAX] = "";
	char sg_text[UCT_SCTP_DPDK_CONFIG_TEXT_MAX] = "";
	struct dp_config dp_scratch;
	struct sg_config sg_scratch;
	char one[sizeof(sg[0].text) + 16];
	ucs_status_t status = UCS_OK;
	int i;

	if (config->ip[0] == '\0') {
		ucs_error("sctp_dpdk: " UCT_SCTP_DPDK_ENV "IP is not set: "
			  "give this process's address on the port, e.g. "
			  UCT_SCTP_DPDK_ENV "IP=10.77.1.1/24");
		return UCS_ERR_INVALID_PARAM;
	}
	if (strcmp(config->progress, "inline") != 0 &&
	    strcmp(config->progress, "thread") != 0) {
		ucs_error("sctp_dpdk: " UCT_SCTP_DPDK_ENV "PROGRESS='%s' is "
			  "unknown: use inline or thread", config->progress);
		return UCS_ERR_INVALID_PARAM;
	}
	if (config->poll_lcore < -1 || config->poll_lcore >= CPU_SETSIZE) {
		ucs_error("sctp_dpdk: " UCT_SCTP_DPDK_ENV "POLL_LCORE=%d is out "
			  "of range: use -1 or a CPU number 0..%d",
			  config->poll_lcore, CPU_SETSIZE - 1);
		return UCS_ERR_INVALID_PARAM;
	}
	if (config->streams < 2) {
		ucs_error("sctp_dpdk: " UCT_SCTP_DPDK_ENV "STREAMS=%u is too "
			  "small: stream 0 is reserved, use 2..%u",
			  config->streams, SG_STREAMS_MAX);
		return UCS_ERR_INVALID_PARAM;
	}
	if (config->seg_size < 1024 || config->seg_size > (16u << 20)) {
		ucs_error("sctp_dpdk: " UCT_SCTP_DPDK_ENV "SEG_SIZE=%zu is out "
			  "of range: use 1k..16m", config->seg_size);
		return UCS_ERR_INVALID_PARAM;
	}

	uct_sctp_dpdk_tokens(config, dp, sg);
	for (i = 0; i < UCT_SCTP_DPDK_DP_TOKENS; i++) {
		if (dp[i].text[0] == '\0')
			continue;
		if (dp_config_parse(dp[i].text, &dp_scratch) != 0) {
			ucs_error("sctp_dpdk: invalid " UCT_SCTP_DPDK_ENV
				  "%s ('%s'; see the dataplane message above)",
				  dp[i].var, dp[i].text);
			status = UCS_ERR_INVALID_PARAM;
		}
		uct_sctp_dpdk_append(dp_text, sizeof(dp_text), dp[i].text);
	}
	for (i = 0; i < UCT_SCTP_DPDK_SG_TOKENS; i++) {
		if (sg[i].text[0] == '\0')
			continue;
		/* Alone, with a max_msg every buffer size satisfies, so only
		 * this variable's own values are judged here. */
		snprintf(one, sizeof(one), "max_msg=1 %s", sg[i].text);
		if (sg_config_parse(one, &sg_scratch) != 0) {
			ucs_error("sctp_dpdk: invalid " UCT_SCTP_DPDK_ENV
				  "%s ('%s'; see the sctp message above)",
				  sg[i].var, sg[i].text);
			status = UCS_ERR_INVALID_PARAM;
		}
		uct_sctp_dpdk_append(sg_text, sizeof(sg_text), sg[i].text);
	}
	if (status != UCS_OK)
		return status;
	if (dp_config_parse(dp_text, dp_cfg) != 0) {
		ucs_error("sctp_dpdk: the dataplane settings contradict each "
			  "other (see the message above): check "
			  UCT_SCTP_DPDK_ENV "RATE and " UCT_SCTP_DPDK_ENV "DP");
		return UCS_ERR_INVALID_PARAM;
	}
	if (sg_config_parse(sg_text, sg_cfg) != 0) {
		ucs_error("sctp_dpdk: the sctp settings contradict each other "
			  "(see the message above): check " UCT_SCTP_DPDK_ENV
			  "RX_DESCS, " UCT_SCTP_DPDK_ENV "SEG_SIZE and "
			  UCT_SCTP_DPDK_ENV "SG");
		return UCS_ERR_INVALID_PARAM;
	}
	if (sg_cfg->streams < 2 || sg_cfg->max_msg_bytes > sg_cfg->rx_buf_bytes ||
	    sg_cfg->rx_headroom_bytes < UCT_SCTP_DPDK_SG_HEADROOM_BYTES) {
		ucs_error("sctp_dpdk: " UCT_SCTP_DPDK_ENV "SG overrides "
			  "streams, max_msg or rx_headroom: the transport needs "
			  "streams >= 2, max_msg <= rx_buf and rx_headroom >= "
			  "%u; set " UCT_SCTP_DPDK_ENV "STREAMS/SEG_SIZE "
			  "instead", UCT_SCTP_DPDK_SG_HEADROOM_BYTES);
		return UCS_ERR_INVALID_PARAM;
	}
	snprintf(text, len, "%s| %s", dp_text, sg_text);
	return UCS_OK;
}

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

/* UCX_SCTP_DPDK_STATS=y: one JSON line on stderr at exit, after the
 * graceful shutdown, so benchmarks can count losses and retransmissions
 * per process.  usrsctp's counters are process-wide, as is the ctx. */
static void uct_sctp_dpdk_ctx_stats_print(uct_sctp_dpdk_ctx_t *ctx)
{
	char dp_json[2048], us_json[512], buf[3072], ip[16];
	struct dp_stats dp;

	dp_port_stats(ctx->port, &dp);
	dp_stats_json(&dp, dp_json, sizeof(dp_json));
	sg_stack_stats_json(us_json, sizeof(us_json));
	/* One write: the ranks of a job share stderr, and several writes
	 * from different processes interleave mid-line. */
	snprintf(buf, sizeof(buf), "sctp_dpdk stats: {\"ip\": \"%s\", "
		 "\"dp\": {%s}, \"usrsctp\": {%s}}\n",
		 dp_ip_str(ctx->ip_be, ip, sizeof(ip)), dp_json, us_json);
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

/*
 * Dedicated-core mode: this thread owns the polling of the port and the
 * SCTP endpoint (under ctx->lock, like every sg_/dp_ call) and fills the
 * ifaces' RX queues; the UCX workers only drain their queue and send.
 */
static void *uct_sctp_dpdk_poll_thread(void *arg)
{
	uct_sctp_dpdk_ctx_t *ctx = arg;
	struct dp_idle idle;
	unsigned work;

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
		if (ucs_recursive_spin_trylock(&ctx->lock)) {
			work = uct_sctp_dpdk_ctx_poll(ctx);
			work += dp_port_tx_pending(ctx->port);
			ucs_recursive_spin_unlock(&ctx->lock);
		}
		dp_idle_update(&idle, work);
	}
	return NULL;
}

static ucs_status_t
uct_sctp_dpdk_poll_thread_start(uct_sctp_dpdk_ctx_t *ctx,
				const uct_sctp_dpdk_iface_config_t *config)
{
	/* PROGRESS and POLL_LCORE were checked by config_build */
	if (strcmp(config->progress, "thread") != 0)
		return UCS_OK;
	ctx->poll_lcore = config->poll_lcore;
	ctx->idle_sleep_us = config->idle_sleep_us;
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

static void uct_sctp_dpdk_poll_thread_stop(uct_sctp_dpdk_ctx_t *ctx)
{
	if (!ctx->thread_on)
		return;
	ctx->thread_stop = 1;
	pthread_join(ctx->poll_thread, NULL);
	ctx->thread_on = 0;
}

static ucs_status_t
uct_sctp_dpdk_ctx_create(const uct_sctp_dpdk_iface_config_t *config,
			 const char *text, const struct dp_config *dp_cfg,
			 const struct sg_config *sg_cfg,
			 uct_sctp_dpdk_ctx_t **ctx_p)
{
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
	ctx->stats_at_exit = config->stats;
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
	ctx->seg_bytes = sg_cfg->rx_buf_bytes;
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
	status = uct_sctp_dpdk_poll_thread_start(ctx, config);
	if (status != UCS_OK)
		goto err_sg;
	*ctx_p = ctx;
	return UCS_OK;

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

static int uct_sctp_dpdk_ctx_busy(uct_sctp_dpdk_ctx_t *ctx)
{
	uct_sctp_dpdk_peer_t *peer;

	ucs_list_for_each(peer, &ctx->peers, list) {
		if (peer->state != UCT_SCTP_DPDK_PEER_IDLE)
			return 1;
	}
	return 0;
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
	/* Learn about associations the peers closed already. */
	uct_sctp_dpdk_ctx_poll(ctx);
	/* SHUTDOWN after the queued data, so peers neither lose the last
	 * messages nor see a failure. */
	ucs_list_for_each(peer, &ctx->peers, list) {
		if (peer->state != UCT_SCTP_DPDK_PEER_IDLE &&
		    sg_disconnect(ctx->sg, peer->assoc) != 0)
			peer->state = UCT_SCTP_DPDK_PEER_IDLE;
	}
	deadline = dp_tsc() + dp_tsc_hz() * UCT_SCTP_DPDK_EXIT_WAIT_MS / 1000;
	while (uct_sctp_dpdk_ctx_busy(ctx) && dp_tsc() < deadline &&
	       dp_port_link_up(ctx->port, NULL)) {
		uct_sctp_dpdk_ctx_poll(ctx);
		nanosleep(&ts, NULL);
	}
	if (ctx->sg_descs_held != 0)
		ucs_warn("sctp_dpdk: %" PRId64 " receive descriptors not "
			 "released at exit", ctx->sg_descs_held);
	if (ctx->stats_at_exit)
		uct_sctp_dpdk_ctx_stats_print(ctx);
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

static uct_sctp_dpdk_peer_t *
uct_sctp_dpdk_peer_by_addr(uct_sctp_dpdk_ctx_t *ctx, uint32_t ip_be,
			   uint16_t sctp_port)
{
	uct_sctp_dpdk_peer_t *peer;

	ucs_list_for_each(peer, &ctx->peers, list) {
		if (peer->ip_be == ip_be && peer->sctp_port == sctp_port)
			return peer;
	}
	return NULL;
}

static uct_sctp_dpdk_peer_t *
uct_sctp_dpdk_peer_by_assoc(uct_sctp_dpdk_ctx_t *ctx, sg_assoc_t assoc)
{
	uct_sctp_dpdk_peer_t *peer;

	ucs_list_for_each(peer, &ctx->peers, list) {
		if (peer->state != UCT_SCTP_DPDK_PEER_IDLE &&
		    peer->assoc == assoc)
			return peer;
	}
	return NULL;
}

static uct_sctp_dpdk_peer_t *
uct_sctp_dpdk_peer_new(uct_sctp_dpdk_ctx_t *ctx, uint32_t ip_be,
		       uint16_t sctp_port)
{
	uct_sctp_dpdk_peer_t *peer;

	peer = ucs_calloc(1, sizeof(*peer), "sctp_dpdk peer");
	if (peer == NULL) {
		ucs_error("sctp_dpdk: failed to allocate a peer (%zu bytes)",
			  sizeof(*peer));
		return NULL;
	}
	peer->ip_be = ip_be;
	peer->sctp_port = sctp_port;
	peer->state = UCT_SCTP_DPDK_PEER_IDLE;
	peer->blocked_poll = UINT64_MAX;
	ucs_list_add_tail(&ctx->peers, &peer->list);
	return peer;
}

void uct_sctp_dpdk_ctx_peer_connect(uct_sctp_dpdk_ctx_t *ctx,
				    uct_sctp_dpdk_peer_t *peer)
{
	sg_assoc_t assoc = 0;
	int rc;

	if (peer->state != UCT_SCTP_DPDK_PEER_IDLE)
		return;
	rc = sg_connect(ctx->sg, peer->ip_be, peer->sctp_port, &assoc);
	if (rc == 0 || rc == -EALREADY) {
		peer->assoc = assoc;
		peer->state = sg_assoc_up(ctx->sg, assoc) ?
				      UCT_SCTP_DPDK_PEER_UP :
				      UCT_SCTP_DPDK_PEER_CONNECTING;
		return;
	}
	/* sg logged why; eps of this peer fail at their next progress. */
	peer->fail_gen++;
	ctx->ev_gen++;
}

ucs_status_t uct_sctp_dpdk_ctx_peer_get(uct_sctp_dpdk_ctx_t *ctx,
					uint32_t ip_be, uint16_t sctp_port,
					uct_sctp_dpdk_peer_t **peer_p)
{
	uct_sctp_dpdk_peer_t *peer;
	ucs_status_t status = UCS_OK;
	uint32_t gen;

	ucs_recursive_spin_lock(&ctx->lock);
	peer = uct_sctp_dpdk_peer_by_addr(ctx, ip_be, sctp_port);
	if (peer == NULL) {
		peer = uct_sctp_dpdk_peer_new(ctx, ip_be, sctp_port);
		if (peer == NULL) {
			status = UCS_ERR_NO_MEMORY;
			goto out;
		}
	}
	gen = peer->fail_gen;
	uct_sctp_dpdk_ctx_peer_connect(ctx, peer);
	if (peer->fail_gen != gen) {
		status = UCS_ERR_UNREACHABLE;
		goto out;
	}
	*peer_p = peer;
out:
	ucs_recursive_spin_unlock(&ctx->lock);
	return status;
}

static void uct_sctp_dpdk_ctx_event(uct_sctp_dpdk_ctx_t *ctx,
				    const struct sg_event *ev)
{
	uct_sctp_dpdk_peer_t *peer = uct_sctp_dpdk_peer_by_assoc(ctx, ev->assoc);
	char ip[16];

	switch (ev->type) {
	case SG_EV_UP:
	case SG_EV_RESTART:
		if (peer == NULL && ev->peer_ip_be != 0)
			peer = uct_sctp_dpdk_peer_by_addr(ctx, ev->peer_ip_be,
							  ev->peer_port);
		if (peer == NULL && ev->peer_ip_be != 0)
			peer = uct_sctp_dpdk_peer_new(ctx, ev->peer_ip_be,
						      ev->peer_port);
		if (peer == NULL)
			return;
		peer->assoc = ev->assoc;
		peer->state = UCT_SCTP_DPDK_PEER_UP;
		if (ev->type == SG_EV_RESTART) {
			/* Messages of the old incarnation may be lost. */
			peer->fail_gen++;
		}
		break;
	case SG_EV_CANT_START:
	case SG_EV_LOST:
		if (peer == NULL)
			return;
		ucs_diag("sctp_dpdk: association %u to %s:%u %s", ev->assoc,
			 dp_ip_str(peer->ip_be, ip, sizeof(ip)),
			 peer->sctp_port,
			 ev->type == SG_EV_LOST ? "lost" : "could not start");
		peer->state = UCT_SCTP_DPDK_PEER_IDLE;
		peer->fail_gen++;
		break;
	case SG_EV_SHUTDOWN:
		/* Graceful: the peer closed after its data; not a failure.
		 * A later send reconnects. */
		if (peer == NULL)
			return;
		peer->state = UCT_SCTP_DPDK_PEER_IDLE;
		break;
	default:
		/* SEND_DONE/FAILED: AMs never exceed the send buffer. */
		return;
	}
	ctx->ev_gen++;
}

static void uct_sctp_dpdk_ctx_drop(uct_sctp_dpdk_ctx_t *ctx,
				   struct sg_msg_desc *msg, const char *why)
{
	if (ctx->rx_drops++ == 0)
		ucs_error("sctp_dpdk: dropped a %u-byte message in %u "
			  "segments: %s (further drops are counted)",
			  msg->msg_len, msg->nb_segs, why);
	sg_msg_release(msg);
}

unsigned uct_sctp_dpdk_ctx_poll(uct_sctp_dpdk_ctx_t *ctx)
{
	struct sg_msg_desc *msgs[UCT_SCTP_DPDK_RX_BURST];
	const uct_sctp_dpdk_am_hdr_t *hdr;
	uct_sctp_dpdk_iface_t *iface;
	uct_sctp_dpdk_rx_desc_t *rx;
	struct sg_event ev;
	unsigned work, n, i;
	uint16_t id;
	uint8_t am_id;

	work = sg_poll(ctx->sg, dp_tsc());
	ctx->poll_count++;
	while (sg_next_event(ctx->sg, &ev) == 0) {
		uct_sctp_dpdk_ctx_event(ctx, &ev);
		work++;
	}
	n = sg_recv(ctx->sg, msgs, UCT_SCTP_DPDK_RX_BURST);
	for (i = 0; i < n; i++) {
		struct sg_msg_desc *msg = msgs[i];

		ctx->rx_msgs++;
		if (ucs_unlikely(msg->nb_segs != 1 ||
				 (msg->flags & SG_MSG_PARTIAL) ||
				 msg->len < sizeof(*hdr))) {
			/* Cannot happen: max_msg == rx_buf (SEG_SIZE). */
			uct_sctp_dpdk_ctx_drop(ctx, msg,
					       "not one segment with a header; "
					       "both sides need the same "
					       UCT_SCTP_DPDK_ENV "SEG_SIZE");
			continue;
		}
		hdr = (const uct_sctp_dpdk_am_hdr_t *)msg->data;
		id = rte_be_to_cpu_16(hdr->dst_iface_id);
		iface = ctx->ifaces[id % UCT_SCTP_DPDK_MAX_IFACES];
		if (ucs_unlikely(iface == NULL || iface->id != id)) {
			uct_sctp_dpdk_ctx_drop(ctx, msg,
					       "destination iface is closed");
			continue;
		}
		/* The descriptor overlays the header when rx_headroom < 8:
		 * read it first. */
		am_id = hdr->am_id;
		rx = uct_sctp_dpdk_iface_rx_desc_init(iface,
						      msg->data + sizeof(*hdr));
		rx->msg = msg;
		rx->mp_elem = NULL;
		rx->length = msg->len - sizeof(*hdr);
		rx->am_id = am_id;
		ctx->sg_descs_held++;
		uct_sctp_dpdk_iface_rx_enqueue(iface, rx);
	}
	if (dp_port_tx_pending(ctx->port))
		work++;
	return work + n;
}

void uct_sctp_dpdk_ctx_msg_release(uct_sctp_dpdk_ctx_t *ctx,
				   struct sg_msg_desc *msg)
{
	ucs_recursive_spin_lock(&ctx->lock);
	ctx->sg_descs_held--;
	sg_msg_release(msg);
	ucs_recursive_spin_unlock(&ctx->lock);
}

/*
 * The rate-control contract used by mpi-pace/ (sdp_pace_mpi.h): visible C
 * symbols found with dlsym(RTLD_DEFAULT).  Callable from any thread.
 */
__attribute__((visibility("default"))) int
sdp_transport_set_rate_bps(uint64_t rate_bps);
__attribute__((visibility("default"))) uint64_t
sdp_transport_get_rate_bps(void);

int sdp_transport_set_rate_bps(uint64_t rate_bps)
{
	int rc;

	pthread_mutex_lock(&uct_sctp_dpdk_ctx_mutex);
	if (uct_sctp_dpdk_ctx_global == NULL) {
		ucs_error("sctp_dpdk: cannot set rate %" PRIu64 " bit/s: no "
			  "port is open in this process yet (open a UCX "
			  "worker with " UCT_SCTP_DPDK_ENV "DEVARGS set, or "
			  "set " UCT_SCTP_DPDK_ENV "RATE)", rate_bps);
		rc = -ENODEV;
	} else {
		/* dp_port_set_rate logs a rate above the link itself. */
		rc = dp_port_set_rate(uct_sctp_dpdk_ctx_global->port, rate_bps);
	}
	pthread_mutex_unlock(&uct_sctp_dpdk_ctx_mutex);
	return rc;
}

uint64_t sdp_transport_get_rate_bps(void)
{
	uint64_t rate_bps = 0;

	pthread_mutex_lock(&uct_sctp_dpdk_ctx_mutex);
	if (uct_sctp_dpdk_ctx_global != NULL)
		rate_bps = dp_port_rate(uct_sctp_dpdk_ctx_global->port);
	pthread_mutex_unlock(&uct_sctp_dpdk_ctx_mutex);
	return rate_bps;
}
