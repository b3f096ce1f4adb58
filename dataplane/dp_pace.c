/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_pace.c - the port's pacer glue (placeholder until pacing/ lands:
 * every port is unpaced).
 */
#include <errno.h>

#include "dp_internal.h"

int dp_tx_pace_setup(struct dp_port *port, uint32_t speed_mbps)
{
	port->paced = false;
	if (port->cfg.pace_rate_bps != 0) {
		SDP_LOG(ERR, DP, "config: rate= is not supported yet");
		return -ENOTSUP;
	}
	return 0;
}

int dp_pace_enqueue(struct dp_port *port, struct rte_mbuf *m,
		    uint64_t now_tsc)
{
	dp_tx_push(port, m, now_tsc);
	return 0;
}

void dp_pace_drain(struct dp_port *port, uint64_t now_tsc)
{
}

void dp_pace_release(struct dp_port *port)
{
}

int dp_port_set_rate(struct dp_port *port, uint64_t rate_bps)
{
	return -ENOTSUP;
}
