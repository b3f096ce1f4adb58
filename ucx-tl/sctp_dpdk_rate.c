/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sctp_dpdk_rate.c - the rate-control contract used by mpi-pace/ (sdp_pace_mpi.h):
 * visible C symbols found with dlsym(RTLD_DEFAULT), callable from any
 * thread, that set and read the pacing rate of the process's port: its
 * total, and per destination (the default for every peer, or one peer's
 * own by IPv4 address; dp_port_set_dest_rate).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sctp_dpdk.h"

#include <ucs/debug/log.h>

#include <errno.h>
#include <inttypes.h>

__attribute__((visibility("default"))) int
sdp_transport_set_rate_bps(uint64_t rate_bps);
__attribute__((visibility("default"))) uint64_t
sdp_transport_get_rate_bps(void);
__attribute__((visibility("default"))) int
sdp_transport_set_dest_default_rate_bps(uint64_t rate_bps);
__attribute__((visibility("default"))) uint64_t
sdp_transport_get_dest_default_rate_bps(void);
__attribute__((visibility("default"))) int
sdp_transport_set_dest_rate_bps(uint32_t ipv4_be, uint64_t rate_bps);

int sdp_transport_set_rate_bps(uint64_t rate_bps)
{
	uct_sctp_dpdk_ctx_t *ctx = uct_sctp_dpdk_ctx_lock_global();
	int rc;

	if (ctx == NULL) {
		ucs_error("sctp_dpdk: cannot set rate %" PRIu64 " bit/s: no "
			  "port is open in this process yet (open a UCX "
			  "worker with " UCT_SCTP_DPDK_ENV "DEVARGS set, or "
			  "set " UCT_SCTP_DPDK_ENV "RATE)", rate_bps);
		rc = -ENODEV;
	} else {
		unsigned k;

		/* Every device's port (the limit is per port).
		 * dp_port_set_rate logs a rate above the link itself. */
		rc = 0;
		for (k = 0; k < UCT_SCTP_DPDK_MAX_DEVS && rc == 0; k++) {
			uct_sctp_dpdk_ctx_t *dev = uct_sctp_dpdk_ctx_peek_dev(k);

			if (dev == NULL)
				break;
			rc = dp_port_set_rate(dev->port, rate_bps);
		}
	}
	uct_sctp_dpdk_ctx_unlock_global();
	return rc;
}

uint64_t sdp_transport_get_rate_bps(void)
{
	uct_sctp_dpdk_ctx_t *ctx = uct_sctp_dpdk_ctx_lock_global();
	uint64_t rate_bps = 0;

	if (ctx != NULL)
		rate_bps = dp_port_rate(ctx->port);
	uct_sctp_dpdk_ctx_unlock_global();
	return rate_bps;
}

static int no_port(const char *what, uint64_t rate_bps)
{
	ucs_error("sctp_dpdk: cannot set %s %" PRIu64 " bit/s: no port is "
		  "open in this process yet (open a UCX worker with "
		  UCT_SCTP_DPDK_ENV "DEVARGS set, or set dest_rate= in "
		  UCT_SCTP_DPDK_ENV "DP)", what, rate_bps);
	return -ENODEV;
}

/*
 * Per-destination rates go to every device's port, as the total does: a
 * destination's flow exists only on the port that reaches it, and the
 * default applies to each port's own destinations.
 */
int sdp_transport_set_dest_default_rate_bps(uint64_t rate_bps)
{
	uct_sctp_dpdk_ctx_t *ctx = uct_sctp_dpdk_ctx_lock_global();
	unsigned k;
	int rc = 0;

	if (ctx == NULL)
		rc = no_port("the destination rate", rate_bps);
	for (k = 0; ctx != NULL && k < UCT_SCTP_DPDK_MAX_DEVS && rc == 0;
	     k++) {
		uct_sctp_dpdk_ctx_t *dev = uct_sctp_dpdk_ctx_peek_dev(k);

		if (dev == NULL)
			break;
		/* logs its own rejections */
		rc = dp_port_set_dest_default_rate(dev->port, rate_bps);
	}
	uct_sctp_dpdk_ctx_unlock_global();
	return rc;
}

uint64_t sdp_transport_get_dest_default_rate_bps(void)
{
	uct_sctp_dpdk_ctx_t *ctx = uct_sctp_dpdk_ctx_lock_global();
	uint64_t rate_bps = 0;

	if (ctx != NULL)
		rate_bps = dp_port_dest_default_rate(ctx->port);
	uct_sctp_dpdk_ctx_unlock_global();
	return rate_bps;
}

int sdp_transport_set_dest_rate_bps(uint32_t ipv4_be, uint64_t rate_bps)
{
	uct_sctp_dpdk_ctx_t *ctx = uct_sctp_dpdk_ctx_lock_global();
	unsigned k;
	int rc = 0;

	if (ctx == NULL)
		rc = no_port("a destination's rate", rate_bps);
	for (k = 0; ctx != NULL && k < UCT_SCTP_DPDK_MAX_DEVS && rc == 0;
	     k++) {
		uct_sctp_dpdk_ctx_t *dev = uct_sctp_dpdk_ctx_peek_dev(k);

		if (dev == NULL)
			break;
		rc = dp_port_set_dest_rate(dev->port, ipv4_be, rate_bps);
	}
	uct_sctp_dpdk_ctx_unlock_global();
	return rc;
}
