/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sg_notify.c - association events: usrsctp notifications turned into
 * sg_event entries on a bounded FIFO read by sg_next_event().
 *
 *   SCTP_ASSOC_CHANGE  COMM_UP        -> SG_EV_UP        (peer recorded;
 *                                        the association table full:
 *                                        aborted, SG_EV_CANT_START with
 *                                        error ENOSPC, then SG_EV_LOST)
 *                      CANT_STR_ASSOC -> SG_EV_CANT_START (forgotten)
 *                      COMM_LOST      -> SG_EV_LOST      (forgotten)
 *                      RESTART        -> SG_EV_RESTART
 *                      SHUTDOWN_COMP  -> SG_EV_SHUTDOWN  (forgotten)
 *   SCTP_SHUTDOWN_EVENT (peer started shutdown): nothing; SHUTDOWN_COMP
 *   follows.
 *
 * The queue holds event_queue entries; when it is full further events are
 * counted (events_dropped) and discarded, never allocated.
 *
 * A notification may arrive in pieces: sg_msg_read reads at most the room
 * it has (peek_bytes while a place function peeks), before it knows that a
 * notification, not a message, comes next, and usrsctp hands the rest on
 * the next reads (MSG_NOTIFICATION on each piece, MSG_EOR on the last).
 * sg_notify_piece gathers the pieces: the first SG_NOTIFY_BYTES bytes are
 * kept, the rest (the tail of a long list of error causes, as an ABORT
 * carries) is read and counted (notify_cut), and the notification is
 * handled at its last piece from what was kept: the fixed part (state,
 * association) decides, never the cause list.  A notification too short
 * for its own fixed part is counted (notify_bad), never guessed at.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <usrsctp.h>

#include "sg_internal.h"

int sg_evq_init(struct sg_evq *q, uint32_t size)
{
	q->ev = calloc(size, sizeof(*q->ev));
	if (q->ev == NULL)
		return -ENOMEM;
	q->size = size;
	q->head = q->tail = 0;
	return 0;
}

void sg_evq_fini(struct sg_evq *q)
{
	free(q->ev);
	q->ev = NULL;
}

void sg_evq_push(struct sg_ep *ep, enum sg_event_type type,
		 sg_assoc_t assoc, uint16_t error)
{
	struct sg_evq *q = &ep->evq;
	struct sg_assoc_info ai = { 0 };
	struct sg_event *ev;
	uint64_t v;

	if (q->tail - q->head == q->size) {
		ep->st.events_dropped++;
		return;
	}
	if (sg_map_get(&ep->assocs, assoc, &v))
		sg_assoc_unpack(v, &ai);
	ev = &q->ev[q->tail % q->size];
	ev->type = type;
	ev->assoc = assoc;
	ev->peer_ip_be = ai.peer_ip_be;
	ev->peer_port = ai.peer_port;
	ev->error = error;
	q->tail++;
	SDP_LOG(DEBUG, SCTP, "assoc %u: %s (error %u)", assoc,
		sg_event_name(type), error);
}

int sg_next_event(struct sg_ep *ep, struct sg_event *ev)
{
	struct sg_evq *q = &ep->evq;

	if (q->head == q->tail)
		return -EAGAIN;
	*ev = q->ev[q->head % q->size];
	q->head++;
	return 0;
}

const char *sg_event_name(enum sg_event_type type)
{
	switch (type) {
	case SG_EV_UP:
		return "up";
	case SG_EV_CANT_START:
		return "cant_start";
	case SG_EV_LOST:
		return "lost";
	case SG_EV_RESTART:
		return "restart";
	case SG_EV_SHUTDOWN:
		return "shutdown";
	case SG_EV_SEND_DONE:
		return "send_done";
	case SG_EV_SEND_FAILED:
		return "send_failed";
	}
	return "?";
}

static void assoc_change(struct sg_ep *ep, const struct sctp_assoc_change *sac)
{
	sg_assoc_t id = (sg_assoc_t)sac->sac_assoc_id;

	switch (sac->sac_state) {
	case SCTP_COMM_UP:
		if (sg_ep_assoc_up(ep, id) == 0)
			sg_evq_push(ep, SG_EV_UP, id, sac->sac_error);
		else
			sg_evq_push(ep, SG_EV_CANT_START, id, ENOSPC);
		break;
	case SCTP_RESTART:
		if (sg_ep_assoc_up(ep, id) == 0)
			sg_evq_push(ep, SG_EV_RESTART, id, sac->sac_error);
		else
			sg_evq_push(ep, SG_EV_CANT_START, id, ENOSPC);
		break;
	case SCTP_COMM_LOST:
		sg_evq_push(ep, SG_EV_LOST, id, sac->sac_error);
		sg_ep_assoc_gone(ep, id);
		break;
	case SCTP_SHUTDOWN_COMP:
		sg_evq_push(ep, SG_EV_SHUTDOWN, id, sac->sac_error);
		sg_ep_assoc_gone(ep, id);
		break;
	case SCTP_CANT_STR_ASSOC:
		sg_evq_push(ep, SG_EV_CANT_START, id, sac->sac_error);
		sg_ep_assoc_gone(ep, id);
		break;
	default:
		break;
	}
}

void sg_notify_handle(struct sg_ep *ep, const void *buf, size_t len)
{
	const union sctp_notification *n = buf;

	if (len < sizeof(n->sn_header)) {
		ep->st.notify_bad++;
		return;
	}
	switch (n->sn_header.sn_type) {
	case SCTP_ASSOC_CHANGE:
		/* sac_info (the ABORT's causes) may be cut: not read */
		if (len >= sizeof(struct sctp_assoc_change) &&
		    n->sn_header.sn_length >= sizeof(struct sctp_assoc_change))
			assoc_change(ep, &n->sn_assoc_change);
		else
			ep->st.notify_bad++;
		break;
	default:
		break;
	}
}

void sg_notify_piece(struct sg_ep *ep, const void *buf, size_t len,
		     bool last)
{
	size_t keep = SG_NOTIFY_BYTES - ep->notif_len;

	if (keep > len)
		keep = len;
	memcpy(ep->notif + ep->notif_len, buf, keep);
	ep->notif_len += (uint32_t)keep;
	if (keep < len)
		ep->notif_cut = true;
	if (!last)
		return;
	if (ep->notif_cut)
		ep->st.notify_cut++;
	sg_notify_handle(ep, ep->notif, ep->notif_len);
	ep->notif_len = 0;
	ep->notif_cut = false;
}
