/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pace_port.c - the earliest deadline among a port's queues, cached like
 * sch_fq's time_next_delayed_flow: the TX loop asks "is anything due?" with
 * one comparison and idles until earliest_tsc otherwise.
 *
 * Invariant: after pace_port_refresh(), earliest_tsc is the minimum of the
 * queues' next_tsc in wrap-safe (signed difference) order.  Sending only
 * moves deadlines later, so a stale cache errs towards "due" and never
 * delays a queue; refresh after each TX pass to keep idling accurate.
 */
#include <errno.h>

#include "pace_internal.h"

void pace_port_refresh(struct pace_port *port)
{
	uint64_t earliest_tsc = port->queues[0]->next_tsc;
	uint16_t i;

	for (i = 1; i < port->nb_queues; i++) {
		uint64_t next_tsc = port->queues[i]->next_tsc;

		if ((int64_t)(next_tsc - earliest_tsc) < 0)
			earliest_tsc = next_tsc;
	}
	port->earliest_tsc = earliest_tsc;
}

int pace_port_init(struct pace_port *port, struct pace_queue **queues,
		   uint16_t nb_queues)
{
	uint16_t i;

	if (port == NULL || queues == NULL || nb_queues == 0) {
		SDP_LOG(ERR, PACE,
			"port init: port %p, queues %p or nb_queues %u is "
			"empty; pass at least one initialised queue",
			(void *)port, (void *)queues, nb_queues);
		return -EINVAL;
	}
	for (i = 0; i < nb_queues; i++) {
		if (queues[i] == NULL) {
			SDP_LOG(ERR, PACE,
				"port init: queue %u of %u is NULL; "
				"initialise every queue first", i, nb_queues);
			return -EINVAL;
		}
	}
	port->queues = queues;
	port->nb_queues = nb_queues;
	pace_port_refresh(port);
	return 0;
}
