/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_idle.c - back-off of a polling loop on a shared core.
 *
 * A busy-polling thread owns its core.  Where ranks outnumber cores the
 * loop backs off: after idle_polls empty polls in a row each further
 * empty poll gives the core away.  Sleeping a fixed sleep_us wakes the
 * thread every sleep_us whether or not a frame came, and each wake-up
 * preempts whatever runs beside it (an MPI rank computing): on 2 cores
 * with 4 ranks that halved the computing ranks' speed.  A port the kernel
 * can signal is waited for instead: net_af_packet's PMD receives through
 * a TPACKET_V2 ring on a socket the kernel marks readable when it fills a
 * frame (packet_poll), so the loop blocks in ppoll() on those sockets
 * until a frame arrives or block_us passes.  block_us bounds how late
 * the SCTP stack's timers (driven from the loop, 1 ms granularity) run.
 *
 * Never block while a port still has work of its own for the loop: frames
 * in its TX buffer or held SACKs, a TX-ring kick due (dp_afp_kick.c), or
 * pacer queues; those take the plain sleep.  memif and PCI ports have no
 * such notification here (memif's interrupt eventfds belong to the EAL's
 * interrupt thread): a loop that includes one keeps sleeping.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>

#include "dp_internal.h"

void dp_idle_init(struct dp_idle *idle, uint32_t idle_polls,
		  uint32_t sleep_us)
{
	memset(idle, 0, sizeof(*idle));
	idle->idle_polls = idle_polls;
	idle->sleep_us = sleep_us;
	/* The default 50 us timer slack would stretch every short sleep. */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
}

int dp_idle_add_port(struct dp_idle *idle, struct dp_port *port,
		     uint32_t block_us)
{
	unsigned int i;

	for (i = 0; i < idle->nb_ports; i++)
		if (idle->ports[i] == port)
			return port->nb_afp_socks != 0;
	if (idle->nb_ports == DP_IDLE_MAX_PORTS)
		return -ENOSPC;
	idle->ports[idle->nb_ports++] = port;
	if (port->nb_afp_socks != 0 && block_us != 0)
		idle->block_us = block_us;
	return port->nb_afp_socks != 0;
}

/* Whether every port can wake us and none has work of its own due. */
static bool idle_can_block(const struct dp_idle *idle, struct pollfd *fds,
			   unsigned int *nfds)
{
	unsigned int i, k;

	*nfds = 0;
	if (idle->block_us == 0 || idle->nb_ports == 0)
		return false;
	for (i = 0; i < idle->nb_ports; i++) {
		const struct dp_port *p = idle->ports[i];

		if (p->nb_afp_socks == 0 || p->txq[0].nb_tx != 0 ||
		    p->txq[0].nb_held != 0 || p->afp_kick_tsc != 0 ||
		    __atomic_load_n(&p->pace_busy, __ATOMIC_RELAXED) != 0)
			return false;
		for (k = 0; k < p->nb_afp_socks; k++) {
			fds[*nfds].fd = p->afp_socks[k];
			fds[*nfds].events = POLLIN;
			fds[*nfds].revents = 0;
			(*nfds)++;
		}
	}
	return true;
}

void dp_idle_update(struct dp_idle *idle, unsigned int work)
{
	struct pollfd fds[DP_IDLE_MAX_PORTS * DP_AFP_MAX_SOCKS];
	struct timespec ts;
	unsigned int nfds;

	if (work != 0) {
		idle->empty = 0;
		return;
	}
	if (idle->sleep_us == 0 || ++idle->empty < idle->idle_polls)
		return;
	/* Off the hot path by definition: nothing to do. */
	idle->sleeps++;
	if (idle_can_block(idle, fds, &nfds)) {
		ts.tv_sec = idle->block_us / 1000000;
		ts.tv_nsec = (long)(idle->block_us % 1000000) * 1000;
		idle->blocks++;
		if (ppoll(fds, nfds, &ts, NULL) > 0)
			idle->block_wakes++;
		return;
	}
	ts.tv_sec = idle->sleep_us / 1000000;
	ts.tv_nsec = (long)(idle->sleep_us % 1000000) * 1000;
	nanosleep(&ts, NULL);
}
