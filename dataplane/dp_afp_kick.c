/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_afp_kick.c - net_af_packet: frames left in the PMD's TX ring leave
 * without waiting for the next burst.
 *
 * DPDK's af_packet tx_burst copies frames into a TPACKET_V2 TX ring and
 * kicks the kernel with one sendto(MSG_DONTWAIT); a frame the kernel does
 * not take in that call stays in the ring (TP_STATUS_SEND_REQUEST) until
 * the next tx_burst kicks again.  The kernel stops early in two cases:
 *
 * - the socket's send buffer is full (sendto: EAGAIN).  A TX-ring skb
 *   stays charged to the socket until it is freed, and crossing a veth
 *   does not free it: frames queued in a bridge's qdisc (the testbed's
 *   tbf, up to 1000 jumbo frames) hold the whole default send buffer
 *   (net.core.wmem_default, 212992 bytes: ~23 frames of 9000 bytes).
 * - the carrier is down (sendto: ENOBUFS): each kick drops one frame.
 *
 * Either way nothing kicks again until SCTP sends something, which at
 * the end of a burst of data is a retransmission timeout: the frames
 * (data already queued, SACKs) wait an RTO, usrsctp counts a T3 timeout
 * and retransmits (cwnd one MTU, RTO doubled), and the retransmission
 * queues behind the stale frames.  Measured on the rails test (2 bridge
 * rails, tbf 200 Mbit/s each, MPICH 10 MB transfers): the first timed
 * transfer took 3.5-6 s instead of ~0.25 s with no rail event at all,
 * 29 T3 timeouts on the sender; after a rail outage the peer's GET
 * request arrived 6 times at once and the answer queued behind ~200
 * stale frames, each kick (a T3 timeout, up to rto_max apart) moving
 * ~23 of them.
 *
 * So a port on net_af_packet finds its TX sockets when it opens (its
 * fds: AF_PACKET, TPACKET_V2, bound to the port's interface index, not
 * claimed by another port) and, after every burst, kicks them again
 * itself every DP_AFP_KICK_US until a kick finds the ring empty (sendto
 * returns 0).  While frames flow the PMD's own bursts kick more often
 * than that and no extra call is made.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <linux/if_packet.h>
#include <unistd.h>

#include <rte_ethdev.h>

#include "dp_internal.h"

#define DP_AFP_KICK_US 50

/* Sockets claimed by open ports (a process has a few ports at most). */
static int claimed[DP_AFP_MAX_SOCKS * 8];
static unsigned int nb_claimed;

static bool is_claimed(int fd)
{
	unsigned int i;

	for (i = 0; i < nb_claimed; i++)
		if (claimed[i] == fd)
			return true;
	return false;
}

/* An AF_PACKET socket of the PMD: raw, TPACKET_V2, bound to if_index. */
static bool is_pmd_socket(int fd, int if_index)
{
	struct sockaddr_ll sll;
	socklen_t len = sizeof(sll);
	int v = 0;
	socklen_t vlen = sizeof(v);

	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &vlen) != 0 ||
	    v != AF_PACKET)
		return false;
	vlen = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &vlen) != 0 ||
	    v != SOCK_RAW)
		return false;
	vlen = sizeof(v);
	if (getsockopt(fd, SOL_PACKET, PACKET_VERSION, &v, &vlen) != 0 ||
	    v != TPACKET_V2)
		return false;
	memset(&sll, 0, sizeof(sll));
	if (getsockname(fd, (struct sockaddr *)&sll, &len) != 0)
		return false;
	return sll.sll_family == AF_PACKET && sll.sll_ifindex == if_index;
}

void dp_afp_kick_setup(struct dp_port *port, const char *driver,
		       unsigned int if_index)
{
	DIR *d;
	struct dirent *e;

	port->nb_afp_socks = 0;
	if (strcmp(driver, "net_af_packet") != 0 || if_index == 0)
		return;
	d = opendir("/proc/self/fd");
	if (d == NULL) {
		SDP_LOG(WARN, DP, "port %u: cannot list /proc/self/fd (%s): "
			"frames the kernel leaves in af_packet's TX ring wait "
			"for the next burst", port->port_id, strerror(errno));
		return;
	}
	while ((e = readdir(d)) != NULL &&
	       port->nb_afp_socks < DP_AFP_MAX_SOCKS) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);
		struct stat st;

		if (*end != '\0' || end == e->d_name || fd < 0 ||
		    fd == dirfd(d) || fstat((int)fd, &st) != 0 ||
		    !S_ISSOCK(st.st_mode) || is_claimed((int)fd) ||
		    !is_pmd_socket((int)fd, (int)if_index))
			continue;
		port->afp_socks[port->nb_afp_socks++] = (int)fd;
		if (nb_claimed < RTE_DIM(claimed))
			claimed[nb_claimed++] = (int)fd;
	}
	closedir(d);
	if (port->nb_afp_socks == 0)
		SDP_LOG(WARN, DP, "port %u (net_af_packet): no TX socket of "
			"interface index %u found among our fds: frames the "
			"kernel leaves in the TX ring wait for the next burst",
			port->port_id, if_index);
}

void dp_afp_kick_release(struct dp_port *port)
{
	unsigned int i, j, k;

	for (i = 0; i < port->nb_afp_socks; i++)
		for (j = 0; j < nb_claimed; j++)
			if (claimed[j] == port->afp_socks[i]) {
				for (k = j + 1; k < nb_claimed; k++)
					claimed[k - 1] = claimed[k];
				nb_claimed--;
				break;
			}
	port->nb_afp_socks = 0;
	port->afp_kick_tsc = 0;
}

void dp_afp_kick_arm(struct dp_port *port, uint64_t now_tsc)
{
	port->afp_kick_tsc = now_tsc + dp_ms_to_tsc(1) * DP_AFP_KICK_US / 1000;
	if (port->afp_kick_tsc == 0)
		port->afp_kick_tsc = 1;
}

void dp_afp_kick(struct dp_port *port, uint64_t now_tsc)
{
	bool pending = false;
	unsigned int i;

	for (i = 0; i < port->nb_afp_socks; i++) {
		ssize_t rc = sendto(port->afp_socks[i], NULL, 0, MSG_DONTWAIT,
				    NULL, 0);

		/* 0: nothing was waiting; > 0: frames left, more may wait
		 * (the send buffer filled); -1: EAGAIN (full) or ENOBUFS
		 * (a frame dropped, carrier down): more may wait */
		if (rc > 0) {
			pending = true;
			port->st.afp_kick_bytes += (uint64_t)rc;
		} else if (rc < 0 && (errno == EAGAIN || errno == ENOBUFS)) {
			pending = true;
		}
	}
	port->st.afp_kicks++;
	if (pending)
		dp_afp_kick_arm(port, now_tsc);
	else
		port->afp_kick_tsc = 0;
}
