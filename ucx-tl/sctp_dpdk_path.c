/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sctp_dpdk_path.c - failover beneath one association
 * (UCX_SCTP_DPDK_FAILOVER): the ports of UCX_SCTP_DPDK_DEVARGS form ONE
 * UCT device, sdp0, whose SCTP endpoint reaches each peer over all of them
 * (port 0 the primary path, the others backups in order).  This is a
 * separate mode from the multi-rail devices (one device per port, striped
 * by UCX): there UCX spreads traffic and a dead port takes its
 * associations with it; here one association per peer survives the loss
 * of a path because the link below it (sctp/sg_path.c) moves its packets
 * to another port and SCTP retransmits what was lost.
 *
 * The device address carries every path's address: {primary IPv4, SCTP
 * port, backup IPv4 x (paths - 1)}; an ep tells the SCTP layer the peer's
 * backup addresses (sg_ep_peer_paths).  Every process must give the same
 * number of ports.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sctp_dpdk.h"

#include <ucs/debug/log.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

int uct_sctp_dpdk_config_failover(const uct_sctp_dpdk_iface_config_t *config)
{
	const char *f = config->failover;

	return f != NULL && f[0] != '\0' && strcmp(f, "n") != 0 &&
	       strcmp(f, "no") != 0 && strcmp(f, "0") != 0;
}

ucs_status_t
uct_sctp_dpdk_path_config_check(const uct_sctp_dpdk_iface_config_t *config)
{
	unsigned nports = uct_sctp_dpdk_config_num_ports(config);
	struct sg_path_config pcfg;

	if (sg_path_config_parse(config->failover, &pcfg) != 0) {
		ucs_error("sctp_dpdk: " UCT_SCTP_DPDK_ENV "FAILOVER='%s' is not "
			  "valid (see the message above): use n, y, or tokens "
			  "probe_ms=N dead_ms=N return_ms=N",
			  config->failover);
		return UCS_ERR_INVALID_PARAM;
	}
	if (!pcfg.on)
		return UCS_OK;
	if (nports < 2 || nports > SG_PATHS_MAX) {
		ucs_error("sctp_dpdk: " UCT_SCTP_DPDK_ENV "FAILOVER='%s' needs "
			  "2..%u ports in " UCT_SCTP_DPDK_ENV "DEVARGS (primary "
			  "first, then backups), which lists %u: give 2..%u "
			  "';'-separated ports or set " UCT_SCTP_DPDK_ENV
			  "FAILOVER=n", config->failover, SG_PATHS_MAX, nports,
			  SG_PATHS_MAX);
		return UCS_ERR_INVALID_PARAM;
	}
	return UCS_OK;
}

ucs_status_t uct_sctp_dpdk_path_open(uct_sctp_dpdk_ctx_t *ctx,
				     const uct_sctp_dpdk_iface_config_t *config,
				     const struct dp_config *dp_cfgs,
				     unsigned nports)
{
	struct sg_path_config pcfg;
	unsigned k;
	int rc;

	ctx->nb_paths = 1;
	ctx->path_ports[0] = ctx->port;
	ctx->path_ip_be[0] = ctx->ip_be;
	if (sg_path_config_parse(config->failover, &pcfg) != 0 || !pcfg.on)
		return UCS_OK; /* judged by uct_sctp_dpdk_path_config_check */
	for (k = 1; k < nports; k++) {
		rc = dp_port_open(&dp_cfgs[k], &ctx->path_ports[k]);
		if (rc != 0) {
			ucs_error("sctp_dpdk: cannot open backup path %u, "
				  UCT_SCTP_DPDK_ENV "DEVARGS entry %u '%s' (%s; "
				  "see the message above)", k, k,
				  dp_cfgs[k].devargs, strerror(-rc));
			goto err;
		}
		ctx->path_ip_be[k] = dp_port_ip(ctx->path_ports[k]);
		ctx->nb_paths = k + 1;
	}
	rc = sg_ep_paths(ctx->sg, &ctx->path_ports[1], nports - 1, &pcfg);
	if (rc != 0) {
		ucs_error("sctp_dpdk: " UCT_SCTP_DPDK_ENV "FAILOVER: the SCTP "
			  "endpoint refused %u backup paths (%s; see the "
			  "message above; " UCT_SCTP_DPDK_ENV "MTU must be the "
			  "same on every port)", nports - 1, strerror(-rc));
		goto err;
	}
	ucs_debug("sctp_dpdk: device " UCT_SCTP_DPDK_DEV_NAME ": failover "
		  "over %u ports", nports);
	return UCS_OK;

err:
	uct_sctp_dpdk_path_close(ctx);
	return sdp_status_from_errno(rc);
}

void uct_sctp_dpdk_path_close(uct_sctp_dpdk_ctx_t *ctx)
{
	unsigned k;

	for (k = 1; k < ctx->nb_paths; k++) {
		dp_port_close(ctx->path_ports[k]);
		ctx->path_ports[k] = NULL;
	}
	ctx->nb_paths = 1;
}

size_t uct_sctp_dpdk_path_dev_addr_len(const uct_sctp_dpdk_ctx_t *ctx)
{
	unsigned n = ctx != NULL && ctx->nb_paths > 1 ? ctx->nb_paths : 1;

	return sizeof(uct_sctp_dpdk_dev_addr_t) + (n - 1) * sizeof(uint32_t);
}

void uct_sctp_dpdk_path_pack(const uct_sctp_dpdk_ctx_t *ctx, void *addr)
{
	uint8_t *p = (uint8_t *)addr + sizeof(uct_sctp_dpdk_dev_addr_t);
	unsigned k;

	for (k = 1; ctx != NULL && k < ctx->nb_paths; k++)
		memcpy(p + (k - 1) * sizeof(uint32_t), &ctx->path_ip_be[k],
		       sizeof(uint32_t));
}

/* @dev_addr holds nb_paths - 1 backup addresses: UCT passes no length,
 * so the ep checked the peer's path count (uct_sctp_dpdk_peer_compatible)
 * before this reads them. */
void uct_sctp_dpdk_path_peer(uct_sctp_dpdk_ctx_t *ctx, const void *dev_addr)
{
	const uct_sctp_dpdk_dev_addr_t *dev = dev_addr;
	uint32_t ips[SG_PATHS_MAX];
	char ip[16];
	int rc;

	if (ctx->nb_paths < 2)
		return;
	memcpy(ips, (const uint8_t *)dev_addr + sizeof(*dev),
	       (ctx->nb_paths - 1) * sizeof(uint32_t));
	ucs_recursive_spin_lock(ctx->lock);
	rc = sg_ep_peer_paths(ctx->sg, dev->ip, ips, ctx->nb_paths - 1);
	ucs_recursive_spin_unlock(ctx->lock);
	if (rc != 0)
		ucs_warn("sctp_dpdk: peer %s: its backup paths cannot be "
			 "used (%s): it fails over only if its probes teach "
			 "us its addresses", dp_ip_str(dev->ip, ip, sizeof(ip)),
			 strerror(-rc));
}

void uct_sctp_dpdk_path_json(uct_sctp_dpdk_ctx_t *ctx, char *buf, size_t len)
{
	struct sg_path_stats st;
	size_t off;
	unsigned k;

	buf[0] = '\0';
	if (ctx->nb_paths < 2)
		return;
	sg_ep_path_stats(ctx->sg, &st);
	off = (size_t)snprintf(buf, len, ", \"paths\": {\"n\": %u, "
			       "\"failovers\": %" PRIu64 ", \"failbacks\": %"
			       PRIu64 ", \"probes_out\": %" PRIu64 ", "
			       "\"probes_in\": %" PRIu64 ", "
			       "\"switch_to_tx_ms\": %" PRId64 ", "
			       "\"switch_to_rx_ms\": %" PRId64 ", "
			       "\"replayed\": %" PRIu64 ", "
			       "\"pkts_out\": [", st.nb_paths, st.failovers,
			       st.failbacks, st.probes_out, st.probes_in,
			       st.last_switch_to_tx_ms,
			       st.last_switch_to_rx_ms, st.replayed);
	for (k = 0; k < st.nb_paths && off < len; k++)
		off += (size_t)snprintf(buf + off, len - off, "%s%" PRIu64,
					k ? ", " : "", st.pkts_out[k]);
	if (off < len)
		off += (size_t)snprintf(buf + off, len - off, "], \"pkts_in\": [");
	for (k = 0; k < st.nb_paths && off < len; k++)
		off += (size_t)snprintf(buf + off, len - off, "%s%" PRIu64,
					k ? ", " : "", st.pkts_in[k]);
	if (off < len)
		snprintf(buf + off, len - off, "]}");
}
