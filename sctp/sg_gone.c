/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sg_gone.c - a memif peer that left: its associations end at once.
 *
 * A memif link goes down only when the peer process closed its port or
 * died (SIGKILL, crash: the kernel closes its control socket and DPDK's
 * memif marks our link down).  SCTP alone notices much later: a receiver
 * sends nothing, so only its heartbeats fail (hb_interval_ms plus
 * path_max_rxt retransmissions of up to rto_max_ms: ~40 s with the
 * defaults, sdp-perf's server measured 39.7 s), and a sender's
 * retransmissions back off the same way.  Meanwhile an MPI rank or a UCT
 * user waits with nothing to tell it why.
 *
 * So once every port of the endpoint's link is a memif port whose link has
 * been down for peer_gone_ms, each association of the endpoint is aborted
 * (SCTP_ABORT: usrsctp reports COMM_LOST, SG_EV_LOST, as for a peer's
 * ABORT; UCT reports UCS_ERR_ENDPOINT_TIMEOUT on its eps) with one log line
 * naming the cause and the setting, GONE_BATCH associations per pass (one
 * pass per ms) until none is left.  A peer back within peer_gone_ms keeps
 * its associations (SCTP restarts them if it is a new process).  Links of
 * other drivers (af_packet, af_xdp: a cable or a veth) are left to SCTP and
 * failover; a link with a memif port still up is failover's too.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <usrsctp.h>

#include "sg_internal.h"

#define GONE_CHECK_MS 1	/* link state is a memory read: check each ms */
#define GONE_BATCH 64	/* associations collected per pass */

/* Every port of the link is memif and down. */
static bool link_gone(struct sg_link *lk)
{
	unsigned int k;

	for (k = 0; k < lk->nb_ports; k++)
		if (!dp_port_is_memif(lk->ports[k]) ||
		    dp_port_link_up(lk->ports[k], NULL))
			return false;
	return lk->nb_ports > 0;
}

static int abort_assoc(struct sg_ep *ep, sg_assoc_t assoc)
{
	struct sctp_sndinfo si = { 0 };

	si.snd_flags = SCTP_ABORT;
	si.snd_assoc_id = (sctp_assoc_t)assoc;
	/* usrsctp_sendv insists on a data pointer even for 0 bytes. */
	if (usrsctp_sendv(ep->so, &si, 0, NULL, 0, &si, sizeof(si),
			  SCTP_SENDV_SNDINFO, 0) < 0 && errno != EINPROGRESS)
		return -errno;
	return 0;
}

/* One pass: abort up to GONE_BATCH associations.  *@more_p: a full batch
 * was aborted, others may be left for the next pass (an aborted one leaves
 * the map when its COMM_LOST is read). */
static unsigned int abort_all(struct sg_ep *ep, uint64_t down_ms,
			      bool *more_p)
{
	uint32_t ids[GONE_BATCH];
	unsigned int n = 0, i, done = 0;
	uint32_t slot;
	char ip[16];

	/* collect first: the abort's notification may edit the map */
	for (slot = 0; slot <= ep->assocs.mask && n < GONE_BATCH; slot++)
		if (ep->assocs.keys[slot] != 0)
			ids[n++] = ep->assocs.keys[slot];
	if (n != 0 && ep->st.peer_gone_aborts == ep->gone_aborts_before)
		SDP_LOG(WARN, SCTP, "port %u (memif): link down for %" PRIu64
			" ms, the peer process left: aborting the endpoint's "
			"%u associations (sg peer_gone_ms=%u; 0 waits for "
			"SCTP's heartbeats instead)",
			dp_port_id(ep->lk->port), down_ms, ep->assocs.count,
			ep->cfg.peer_gone_ms);
	ep->lk->now_tsc = dp_tsc();
	for (i = 0; i < n; i++) {
		struct sg_assoc_info ai = { 0 };
		uint64_t v;
		int rc;

		if (sg_map_get(&ep->assocs, ids[i], &v))
			sg_assoc_unpack(v, &ai);
		rc = abort_assoc(ep, ids[i]);
		SDP_LOG(DEBUG, SCTP, "association %u to %s aborted%s%s: the "
			"memif peer left", ids[i],
			dp_ip_str(ai.peer_ip_be, ip, sizeof(ip)),
			rc != 0 ? ": " : "", rc != 0 ? strerror(-rc) : "");
		if (rc == 0) {
			ep->st.peer_gone_aborts++;
			done++;
		}
	}
	/* COMM_LOST waits in the socket: read it in this poll */
	if (n != 0)
		ep->readable = true;
	*more_p = n == GONE_BATCH && done != 0;
	return done;
}

int sg_assoc_abort(struct sg_ep *ep, sg_assoc_t assoc)
{
	int rc = abort_assoc(ep, assoc);

	if (rc == 0)
		ep->readable = true; /* COMM_LOST waits in the socket */
	return rc;
}

unsigned int sg_gone_tick(struct sg_ep *ep, uint64_t now_tsc)
{
	uint64_t hz = dp_tsc_hz();
	unsigned int n;
	bool more;

	if (ep->cfg.peer_gone_ms == 0 || now_tsc < ep->gone_check_tsc)
		return 0;
	ep->gone_check_tsc = now_tsc + hz / 1000 * GONE_CHECK_MS;
	if (!link_gone(ep->lk)) {
		ep->gone_down_tsc = 0;
		ep->gone_done = false;
		return 0;
	}
	if (ep->gone_down_tsc == 0) {
		ep->gone_down_tsc = now_tsc;
		ep->gone_aborts_before = ep->st.peer_gone_aborts;
	}
	if (ep->gone_done || now_tsc - ep->gone_down_tsc <
				     hz / 1000 * ep->cfg.peer_gone_ms)
		return 0;
	/* a batch per pass (each ms) until every association is aborted */
	n = abort_all(ep, (now_tsc - ep->gone_down_tsc) / (hz / 1000), &more);
	ep->gone_done = !more;
	return n;
}
