/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sctp_dpdk_lanes.c - several associations per peer on one port
 * (UCX_SCTP_DPDK_LANES=N): the device reports dev_num_paths = N, so UCP
 * opens up to N lanes to a peer on it (UCX_MAX_EAGER_RAILS,
 * UCX_MAX_RNDV_RAILS), each ep created with a path index.  Lane k is an
 * SCTP endpoint of its own (sg_ep_open_lane: its own socket, bound to
 * SCTP_PORT + k on the device's port and address) and reaches the peer's
 * lane k at the peer's SCTP port + k: its own association, congestion
 * window and send buffer.  The port gets LANES queue pairs (dp queues=):
 * lane k sends on queue k and polls queue k, where the peer's lane k sends
 * (memif: the client's TX ring k is the server's RX ring k), so with
 * PROGRESS=thread each lane is polled by a thread of its own
 * (sctp_dpdk_thread.c).  Every lane still shares usrsctp and the
 * process-wide lock; lane 0 runs usrsctp's timers and ARP.  Only memif
 * maps queues that way: af_packet (kernel fanout) and PCI NICs (RSS or
 * flow rules by SCTP port would be needed, not done) are refused.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sctp_dpdk.h"

#include <ucs/debug/log.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

ucs_status_t
uct_sctp_dpdk_lanes_check(const uct_sctp_dpdk_iface_config_t *config)
{
	int af_packet;

	if (config->lanes < 1 || config->lanes > UCT_SCTP_DPDK_MAX_LANES) {
		ucs_error("sctp_dpdk: " UCT_SCTP_DPDK_ENV "LANES=%u is out of "
			  "range: give 1..%u (associations per peer on one "
			  "port)", config->lanes, UCT_SCTP_DPDK_MAX_LANES);
		return UCS_ERR_INVALID_PARAM;
	}
	if (config->lanes == 1)
		return UCS_OK;
	if (uct_sctp_dpdk_config_num_ports(config) != 1) {
		ucs_error("sctp_dpdk: " UCT_SCTP_DPDK_ENV "LANES=%u needs one "
			  "port, " UCT_SCTP_DPDK_ENV "DEVARGS lists %u: lanes "
			  "take SCTP_PORT + k, which several ports use too; "
			  "use LANES=1 with several ports (multi-rail)",
			  config->lanes,
			  uct_sctp_dpdk_config_num_ports(config));
		return UCS_ERR_INVALID_PARAM;
	}
	/* a PCI address ([dddd:]bb:dd.f) or af_packet */
	af_packet = strncmp(config->devargs, "net_af_packet", 13) == 0;
	if (af_packet || (strncmp(config->devargs, "net_", 4) != 0 &&
			  strchr(config->devargs, ':') != NULL)) {
		ucs_error("sctp_dpdk: " UCT_SCTP_DPDK_ENV "LANES=%u puts lane k "
			  "on queue k of the port, and %s cannot steer the "
			  "peer's lane k to our queue k (%s): use a memif port ("
			  UCT_SCTP_DPDK_ENV "DEVARGS=net_memif...) or LANES=1",
			  config->lanes, config->devargs,
			  af_packet ? "af_packet spreads frames over its queues "
				      "by kernel fanout"
				    : "a NIC would need RSS or flow rules by "
				      "SCTP port, not done");
		return UCS_ERR_INVALID_PARAM;
	}
	if (config->self_wire) {
		ucs_error("sctp_dpdk: " UCT_SCTP_DPDK_ENV "LANES=%u cannot be "
			  "combined with " UCT_SCTP_DPDK_ENV "SELF_WIRE=y: set "
			  "LANES=1", config->lanes);
		return UCS_ERR_INVALID_PARAM;
	}
	if (config->failover != NULL && config->failover[0] != '\0' &&
	    strcmp(config->failover, "n") != 0 &&
	    strcmp(config->failover, "no") != 0) {
		ucs_error("sctp_dpdk: " UCT_SCTP_DPDK_ENV "LANES=%u cannot be "
			  "combined with " UCT_SCTP_DPDK_ENV "FAILOVER='%s': "
			  "set one of them to its default", config->lanes,
			  config->failover);
		return UCS_ERR_INVALID_PARAM;
	}
	return UCS_OK;
}

ucs_status_t
uct_sctp_dpdk_lanes_open(uct_sctp_dpdk_ctx_t *ctx,
			 const uct_sctp_dpdk_iface_config_t *config)
{
	struct sg_config cfg = ctx->sg_cfg;
	unsigned k;
	int rc;

	for (k = 1; k < config->lanes; k++) {
		if ((unsigned)ctx->sctp_port + k > 65535) {
			ucs_error("sctp_dpdk: lane %u would need SCTP port %u: "
				  "lower " UCT_SCTP_DPDK_ENV "SCTP_PORT (%u) "
				  "or " UCT_SCTP_DPDK_ENV "LANES (%u)", k,
				  ctx->sctp_port + k, ctx->sctp_port,
				  config->lanes);
			goto err;
		}
		cfg.port = (uint16_t)(ctx->sctp_port + k);
		rc = sg_ep_open_lane(ctx->sg, &cfg, &ctx->lane_sg[k]);
		if (rc != 0) {
			ucs_error("sctp_dpdk: cannot open lane %u of device "
				  UCT_SCTP_DPDK_DEV_PREFIX "%u on SCTP port %u "
				  "(" UCT_SCTP_DPDK_ENV "LANES=%u, "
				  UCT_SCTP_DPDK_ENV "SCTP_PORT + %u): %s",
				  k, ctx->dev_index, cfg.port, config->lanes,
				  k, strerror(-rc));
			goto err;
		}
		ctx->nb_lanes = k + 1;
	}
	if (ctx->nb_lanes > 1)
		ucs_debug("sctp_dpdk: device " UCT_SCTP_DPDK_DEV_PREFIX "%u: "
			  "%u lanes on SCTP ports %u..%u", ctx->dev_index,
			  ctx->nb_lanes, ctx->sctp_port,
			  ctx->sctp_port + ctx->nb_lanes - 1);
	return UCS_OK;

err:
	uct_sctp_dpdk_lanes_close(ctx);
	return UCS_ERR_INVALID_PARAM;
}

void uct_sctp_dpdk_lanes_close(uct_sctp_dpdk_ctx_t *ctx)
{
	while (ctx->nb_lanes > 1) {
		ctx->nb_lanes--;
		sg_ep_close(ctx->lane_sg[ctx->nb_lanes]);
		ctx->lane_sg[ctx->nb_lanes] = NULL;
	}
}

unsigned uct_sctp_dpdk_lane_of_path(const uct_sctp_dpdk_ctx_t *ctx,
				    unsigned path_index)
{
	return path_index % ctx->nb_lanes;
}

/* Append "name": [v0, v1, ...] and @sep to @buf at *@off_p. */
static void uct_sctp_dpdk_lanes_array(char *buf, size_t len, size_t *off_p,
				      const char *name, const uint64_t *vals,
				      unsigned n, const char *sep)
{
	size_t off = *off_p;
	unsigned k;

	if (off < len)
		off += (size_t)snprintf(buf + off, len - off, "\"%s\": [",
					name);
	for (k = 0; k < n && off < len; k++)
		off += (size_t)snprintf(buf + off, len - off, "%s%" PRIu64,
					k ? ", " : "", vals[k]);
	if (off < len)
		off += (size_t)snprintf(buf + off, len - off, "]%s", sep);
	*off_p = off;
}

void uct_sctp_dpdk_lanes_json(uct_sctp_dpdk_ctx_t *ctx, char *buf,
			      size_t len)
{
	uint64_t tx[UCT_SCTP_DPDK_MAX_LANES] = { 0 };
	uint64_t up[UCT_SCTP_DPDK_MAX_LANES] = { 0 };
	uint64_t ports[UCT_SCTP_DPDK_MAX_LANES];
	uint64_t rxq[UCT_SCTP_DPDK_MAX_LANES] = { 0 };
	uct_sctp_dpdk_peer_t *peer;
	struct dp_stats ds;
	struct sg_stats ss;
	size_t off;
	unsigned k;

	buf[0] = '\0';
	if (ctx->nb_lanes <= 1)
		return;
	ucs_list_for_each(peer, &ctx->peers, list) {
		tx[peer->lane] += peer->tx_msgs;
		/* associations established on the lane over the run */
		if (peer->incarnation != 0 ||
		    peer->state != UCT_SCTP_DPDK_PEER_IDLE)
			up[peer->lane]++;
	}
	for (k = 0; k < ctx->nb_lanes; k++)
		ports[k] = ctx->sctp_port + k;
	off = (size_t)snprintf(buf, len, "\"lanes\": {\"n\": %u, ",
			       ctx->nb_lanes);
	uct_sctp_dpdk_lanes_array(buf, len, &off, "sctp_ports", ports,
				  ctx->nb_lanes, ", ");
	uct_sctp_dpdk_lanes_array(buf, len, &off, "peers", up,
				  ctx->nb_lanes, ", ");
	uct_sctp_dpdk_lanes_array(buf, len, &off, "tx_msgs", tx,
				  ctx->nb_lanes, ", ");
	uct_sctp_dpdk_lanes_array(buf, len, &off, "rx_msgs",
				  ctx->lane_rx_msgs, ctx->nb_lanes, ", ");
	/* queue k: lane k's frames received; each lane's polls by its own
	 * thread (PROGRESS=thread; zero inline) */
	for (k = 0; k < ctx->nb_lanes && k < dp_port_nb_queues(ctx->port);
	     k++) {
		dp_port_queue_stats(ctx->port, (uint16_t)k, &ds);
		rxq[k] = ds.rx_pkts;
	}
	uct_sctp_dpdk_lanes_array(buf, len, &off, "rxq_pkts", rxq,
				  ctx->nb_lanes, ", ");
	uct_sctp_dpdk_lanes_array(buf, len, &off, "thread_polls",
				  ctx->lane_thread_polls, ctx->nb_lanes, ", ");
	uct_sctp_dpdk_lanes_array(buf, len, &off, "lock_misses",
				  ctx->lane_lock_misses, ctx->nb_lanes, ", ");
	sg_ep_stats(ctx->sg, &ss);
	if (off < len)
		off += (size_t)snprintf(buf + off, len - off,
					"\"rx_data_wrong_queue\": %" PRIu64
					", \"queues\": %u}, ",
					ss.rx_data_wrong_queue,
					dp_port_nb_queues(ctx->port));
}
