/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sctp_dpdk_flush.c - ep and iface flush: an ep flush completes when the
 * peer holds every operation issued on that ep before it, not when
 * usrsctp has merely copied it.  usrsctp keeps a message in this process
 * until it is cumulatively acknowledged: a process that exits (or an ep
 * that is destroyed and its process torn down) after a flush that only
 * meant "copied" loses whatever the peer had not received yet.
 *
 * The association (one per peer process) is shared by every ep to it,
 * and usrsctp gives a message its TSN only when its scheduler moves it
 * from the stream queue into a packet, across streams in its own order:
 * no TSN at flush time marks "this ep's messages", and the association's
 * count of unacknowledged bytes (sg_assoc_unacked) never reaches 0 while
 * a sibling ep keeps sending.  So an ep proves its own part with a marker
 * on each stream it used, and needs the association only when it is idle:
 *
 *   drained   the association has nothing unacknowledged and we owe the
 *             peer no SACK (uct_sctp_dpdk_peer_drained): everything of
 *             this ep was delivered.  The common case; no message.
 *   markers   else, for each stream the ep sent AMs on since its last
 *             markers or drain (ep->am_dirty*, noted by every send), a
 *             FLUSH request on that stream (uct_sctp_dpdk_rma_flush_start,
 *             an RMA op).  An SCTP stream is delivered in order, so the
 *             target reads it after every earlier message of that stream
 *             and answers with an ACK; once every op of the ep is
 *             answered, the peer holds all the ep sent before.  With the
 *             stream map (STREAM_TAG_MASK) an ep remembers up to
 *             UCT_SCTP_DPDK_FLUSH_STREAMS streams, beyond that it marks
 *             every stream.
 *   answered  the ops the flush covers all answered: what is still
 *             unacknowledged belongs to later operations or other eps;
 *             the flush completes once no SACK is owed to the peer
 *             (sg_assoc_answered: a process may block outside the stack
 *             right after a flush).
 *
 * Watermark: an ep numbers its ops as it issues them (ep->rma_op_seq;
 * puts, gets, FLUSH requests and markers alike, all in ep->rma_ops in
 * that order).  A flush marks the ep once (ep_flush_mark: the RMA FLUSH,
 * the markers; retried while the send buffer refuses) and then waits only
 * for the ops numbered below the ep's count at that moment (req->below),
 * i.e. until the oldest op not yet answered is younger.  So neither other
 * eps nor the ep's own later operations hold an ep flush up.
 *
 *   ep_flush:    pending requests -> UCS_ERR_NO_RESOURCE (UCT contract: the
 *                caller adds a pending flush, so it cannot complete before
 *                requests queued ahead of it; called from that pending
 *                flush's own callback it goes on, the requests ahead of
 *                it having left); drained or answered -> UCS_OK; else
 *                UCS_INPROGRESS and @comp (if any) is completed from
 *                iface progress once one of them holds.
 *   iface_flush: pending eps or any ep not flushed as above ->
 *                UCS_INPROGRESS (+ @comp later); else UCS_OK.
 *   failure:     a flush waiting on an ep whose association failed
 *                completes with UCS_ERR_ENDPOINT_TIMEOUT.
 *   RMA:         an ep's puts and gets (sctp_dpdk_rma.c) count as
 *                outstanding until the target confirmed them; a put that
 *                completed at once is confirmed by a FLUSH on the ep's
 *                stream, which the flush sends even when drained (SCTP's
 *                SACK does not mean the target wrote it).
 * An iface flush keeps no watermark: each step is a fresh flush of every
 * ep, so operations issued after it can hold it up.
 * iface_flush never answers UCS_ERR_NO_RESOURCE: ucp_worker_flush takes
 * any error of an iface flush as a failure (Open MPI's osc ucx fence).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sctp_dpdk.h"

#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>

int uct_sctp_dpdk_peer_drained(uct_sctp_dpdk_ctx_t *ctx,
			       uct_sctp_dpdk_peer_t *peer)
{
	/* The association gone (shut down after its data, or lost: the eps
	 * see fail_gen) leaves nothing to wait for. */
	if (peer->state != UCT_SCTP_DPDK_PEER_UP) {
		peer->drained_msgs = peer->tx_msgs;
		return 1;
	}
	/* Everything acknowledged (sg_assoc_quiet asks sg_assoc_unacked);
	 * and no SACK still owed for the peer's last DATA.  A process may block outside the stack
	 * right after a flush: MPICH's MPI_Finalize closes its eps and waits
	 * in a PMI barrier without progress; a SACK it still owed then never
	 * left and the peer's own flush waited until its retransmissions
	 * declared the association lost (MPICH test/mpi sendrecv3,
	 * mpi_finalize_drain).  Every message's last packet asks for its
	 * SACK at once (the I bit, sack_immediate=1, sctp_dpdk_config.c),
	 * so this rarely waits. */
	if (!sg_assoc_quiet(peer->sg, peer->assoc, dp_tsc()))
		return 0;
	peer->drained_msgs = peer->tx_msgs;
	return 1;
}

void uct_sctp_dpdk_ep_flush_note_stream(uct_sctp_dpdk_ep_t *ep,
					uint16_t stream)
{
	unsigned i;

	for (i = 0; i < ep->am_dirty_n; i++) {
		if (ep->am_dirty_streams[i] == stream)
			return;
	}
	if (ep->am_dirty_n < UCT_SCTP_DPDK_FLUSH_STREAMS) {
		ep->am_dirty_streams[ep->am_dirty_n++] = stream;
		return;
	}
	/* Too many to remember: every stream (again from the first, should
	 * a sweep be under way: this one may lie behind it). */
	ep->am_dirty_n = 0;
	ep->am_dirty_all = 1;
}

/* A FLUSH marker behind the AMs of @ep on each stream it sent them on
 * since its last markers.  @return UCS_INPROGRESS (every marker sent or
 * queued), UCS_ERR_NO_RESOURCE (the rest waits for the next check), or
 * a failure.  Caller holds ctx->lock. */
static ucs_status_t uct_sctp_dpdk_ep_flush_markers(uct_sctp_dpdk_ep_t *ep)
{
	uct_sctp_dpdk_iface_t *iface =
		ucs_derived_of(ep->super.super.iface, uct_sctp_dpdk_iface_t);
	ucs_status_t status;
	uint16_t stream;

	while (ep->am_dirty_n > 0) {
		status = uct_sctp_dpdk_rma_flush_start(
			ep, ep->am_dirty_streams[ep->am_dirty_n - 1], NULL, 1);
		if (status != UCS_INPROGRESS)
			return status;
		ep->am_dirty_n--;
	}
	while (ep->am_dirty_all != 0) {
		stream = ep->am_dirty_all;
		status = uct_sctp_dpdk_rma_flush_start(ep, stream, NULL, 1);
		if (status != UCS_INPROGRESS)
			return status;
		ep->am_dirty_all = stream + 1 < iface->ctx->streams ?
					   stream + 1 : 0;
	}
	if (ep->am_dirty) /* cleared by the FLUSH on ep->stream */
		return uct_sctp_dpdk_rma_flush_start(ep, ep->stream, NULL, 1);
	return UCS_INPROGRESS;
}

/* Make sure the ops of @ep will show when the peer holds everything the
 * ep issued so far: a FLUSH behind puts that completed at once, and FLUSH
 * markers behind AMs unless the association is drained.  @return UCS_OK
 * (done), UCS_ERR_NO_RESOURCE (not all could go: again later), or a
 * failure.  Caller holds ctx->lock. */
static ucs_status_t uct_sctp_dpdk_ep_flush_mark(uct_sctp_dpdk_ctx_t *ctx,
						uct_sctp_dpdk_ep_t *ep)
{
	ucs_status_t status;

	/* RMA (sctp_dpdk_rma.c): puts written and gets answered at the
	 * target; sends a FLUSH behind puts that completed at once, even on
	 * a drained association (a SACK does not say the target wrote
	 * them).  UCS_INPROGRESS: ops outstanding, their answers come. */
	status = uct_sctp_dpdk_rma_ep_flush(ep, 0, NULL);
	if (status != UCS_OK && status != UCS_INPROGRESS)
		return status;
	if (!(ep->am_dirty || ep->am_dirty_n != 0 || ep->am_dirty_all != 0))
		return UCS_OK;
	/* The whole association acknowledged (the common case: no other
	 * ep's traffic): so is every AM of this ep; no marker needed. */
	if (uct_sctp_dpdk_peer_drained(ctx, ep->peer)) {
		ep->am_dirty = 0;
		ep->am_dirty_n = 0;
		ep->am_dirty_all = 0;
		return UCS_OK;
	}
	/* Something is unacknowledged, maybe only another ep's: a FLUSH
	 * marker behind this ep's AMs on each of their streams. */
	status = uct_sctp_dpdk_ep_flush_markers(ep);
	return status == UCS_INPROGRESS ? UCS_OK : status;
}

/*
 * Status of a flush of @ep now (ctx->lock held).  @below_p: the flush's
 * watermark, 0 for a flush not yet marked: once every op the ep issued
 * before it (and the markers) went, the ops numbered below *@below_p are
 * the ones it waits for; the ep's later operations do not hold it up.
 */
static ucs_status_t uct_sctp_dpdk_ep_flush_state(uct_sctp_dpdk_ctx_t *ctx,
						 uct_sctp_dpdk_ep_t *ep,
						 uint64_t *below_p)
{
	ucs_status_t status;

	if (ep->flags & UCT_SCTP_DPDK_EP_FLAG_LOCAL)
		return UCS_OK; /* copied into the receiver's queue */
	if (uct_sctp_dpdk_ep_is_failed(ep))
		return UCS_ERR_ENDPOINT_TIMEOUT;
	if (*below_p == 0) {
		if (!ucs_queue_is_empty(&ep->pending_q))
			return UCS_INPROGRESS;
		/* A FLUSH the send buffer refused (UCS_ERR_NO_RESOURCE)
		 * leaves the flush unmarked: in progress, marked again by its
		 * next step; never a flush's result (an iface flush would
		 * take it for done, a queued ep flush would complete with
		 * it). */
		status = uct_sctp_dpdk_ep_flush_mark(ctx, ep);
		if (status == UCS_ERR_NO_RESOURCE)
			return UCS_INPROGRESS;
		if (status != UCS_OK)
			return status;
		*below_p = ep->rma_op_seq + 1;
	}
	/* Every op up to the watermark answered: the peer holds every
	 * message of this ep the flush covers (what is unacknowledged
	 * belongs to later operations or other eps).  Still owe the peer
	 * no SACK (uct_sctp_dpdk_peer_drained says why). */
	if (uct_sctp_dpdk_rma_ep_oldest(ep, 0) < *below_p &&
	    /* A marker's SACK proves what its ACK would: the peer's stack
	     * holds the AMs before it.  Its ACK may never come: a peer that
	     * closed its UCT iface (MPI_Finalize) still acknowledges, but
	     * answers nothing. */
	    !(uct_sctp_dpdk_peer_drained(ctx, ep->peer) &&
	      uct_sctp_dpdk_rma_ep_oldest(ep, 1) >= *below_p))
		return UCS_INPROGRESS;
	if (ep->peer->state != UCT_SCTP_DPDK_PEER_UP)
		return UCS_OK;
	return sg_assoc_answered(ep->peer->sg, ep->peer->assoc, dp_tsc()) ?
		       UCS_OK : UCS_INPROGRESS;
}

/* Status of a flush of every ep of @iface now (ctx->lock held). */
static ucs_status_t
uct_sctp_dpdk_iface_flush_state(uct_sctp_dpdk_iface_t *iface)
{
	uct_sctp_dpdk_ep_t *ep;
	ucs_status_t status;
	uint64_t below;

	if (!ucs_list_is_empty(&iface->pending_eps))
		return UCS_INPROGRESS;
	/* Each step is a fresh ep flush of every ep (no watermark kept):
	 * operations issued after the iface flush can hold it up. */
	ucs_list_for_each(ep, &iface->eps, list) {
		below = 0;
		status = uct_sctp_dpdk_ep_flush_state(iface->ctx, ep, &below);
		/* A failed ep is reported through the error handler; it
		 * has nothing left to flush. */
		if (status == UCS_INPROGRESS)
			return UCS_INPROGRESS;
	}
	return UCS_OK;
}

static ucs_status_t
uct_sctp_dpdk_flush_add(uct_sctp_dpdk_iface_t *iface, uct_sctp_dpdk_ep_t *ep,
			uint64_t below, uct_completion_t *comp)
{
	uct_sctp_dpdk_flush_req_t *req;

	if (comp == NULL)
		return UCS_INPROGRESS; /* the caller polls */
	req = ucs_malloc(sizeof(*req), "sctp_dpdk flush");
	if (req == NULL) {
		ucs_error("sctp_dpdk: failed to allocate a flush request "
			  "(%zu bytes)", sizeof(*req));
		return UCS_ERR_NO_MEMORY;
	}
	req->comp = comp;
	req->ep = ep;
	req->below = below;
	ucs_queue_push(&iface->flush_q, &req->queue);
	return UCS_INPROGRESS;
}

ucs_status_t uct_sctp_dpdk_ep_flush(uct_ep_h tl_ep, unsigned flags,
				    uct_completion_t *comp)
{
	uct_sctp_dpdk_ep_t *ep = ucs_derived_of(tl_ep, uct_sctp_dpdk_ep_t);
	uct_sctp_dpdk_iface_t *iface =
		ucs_derived_of(tl_ep->iface, uct_sctp_dpdk_iface_t);
	uct_sctp_dpdk_ctx_t *ctx = iface->ctx;
	uint64_t below = 0;
	ucs_status_t status;

	if (flags & UCT_FLUSH_FLAG_CANCEL) {
		/* Pending requests are purged by the caller
		 * (uct_ep_pending_purge); what usrsctp holds cannot be
		 * taken back, so stop waiting for it. */
		uct_sctp_dpdk_ep_flush_cancel(ep, UCS_ERR_CANCELED);
		uct_sctp_dpdk_rma_ep_flush(ep, flags, NULL);
		return UCS_OK;
	}
	/* Requests queued before this flush must leave first.  While the
	 * ep's queue is being dispatched its head is the caller (UCP's
	 * pending flush calls uct_ep_flush again from its callback): the
	 * queue then holds only requests queued after the flush, and
	 * answering NO_RESOURCE would keep the flush pending forever. */
	if (!ucs_queue_is_empty(&ep->pending_q) &&
	    !(ep->flags & UCT_SCTP_DPDK_EP_FLAG_DISPATCH)) {
		UCT_TL_EP_STAT_FLUSH_WAIT(&ep->super);
		return UCS_ERR_NO_RESOURCE;
	}
	if (ep->flags & UCT_SCTP_DPDK_EP_FLAG_LOCAL) {
		UCT_TL_EP_STAT_FLUSH(&ep->super);
		return UCS_OK;
	}
	ucs_recursive_spin_lock(ctx->lock);
	status = uct_sctp_dpdk_ep_flush_state(ctx, ep, &below);
	ucs_recursive_spin_unlock(ctx->lock);
	if (status == UCS_INPROGRESS) {
		UCT_TL_EP_STAT_FLUSH_WAIT(&ep->super);
		return uct_sctp_dpdk_flush_add(iface, ep, below, comp);
	}
	if (status == UCS_OK)
		UCT_TL_EP_STAT_FLUSH(&ep->super);
	return status;
}

ucs_status_t uct_sctp_dpdk_iface_flush(uct_iface_h tl_iface, unsigned flags,
				       uct_completion_t *comp)
{
	uct_sctp_dpdk_iface_t *iface =
		ucs_derived_of(tl_iface, uct_sctp_dpdk_iface_t);
	ucs_status_t status;

	if (iface->ctx == NULL)
		return UCS_OK; /* no port: nothing was ever sent */
	ucs_recursive_spin_lock(iface->ctx->lock);
	status = uct_sctp_dpdk_iface_flush_state(iface);
	ucs_recursive_spin_unlock(iface->ctx->lock);
	if (status == UCS_INPROGRESS) {
		UCT_TL_IFACE_STAT_FLUSH_WAIT(&iface->super);
		return uct_sctp_dpdk_flush_add(iface, NULL, 0, comp);
	}
	UCT_TL_IFACE_STAT_FLUSH(&iface->super);
	return status;
}

unsigned uct_sctp_dpdk_iface_flush_progress(uct_sctp_dpdk_iface_t *iface)
{
	uct_sctp_dpdk_flush_req_t *reqs[UCT_SCTP_DPDK_RX_BURST];
	ucs_status_t statuses[UCT_SCTP_DPDK_RX_BURST];
	uct_sctp_dpdk_ctx_t *ctx = iface->ctx;
	uct_sctp_dpdk_flush_req_t *req;
	ucs_queue_iter_t iter;
	ucs_status_t status;
	unsigned n = 0, i;

	ucs_recursive_spin_lock(ctx->lock);
	ucs_queue_for_each_safe(req, iter, &iface->flush_q, queue) {
		if (n == UCT_SCTP_DPDK_RX_BURST)
			break;
		status = req->ep != NULL ?
				 uct_sctp_dpdk_ep_flush_state(ctx, req->ep,
							      &req->below) :
				 uct_sctp_dpdk_iface_flush_state(iface);
		if (status == UCS_INPROGRESS)
			continue;
		ucs_queue_del_iter(&iface->flush_q, iter);
		statuses[n] = status;
		reqs[n++] = req;
	}
	ucs_recursive_spin_unlock(ctx->lock);
	/* Completions call into UCX, which may send: lock released. */
	for (i = 0; i < n; i++) {
		uct_invoke_completion(reqs[i]->comp, statuses[i]);
		ucs_free(reqs[i]);
	}
	return n;
}

void uct_sctp_dpdk_ep_flush_cancel(uct_sctp_dpdk_ep_t *ep,
				   ucs_status_t status)
{
	uct_sctp_dpdk_iface_t *iface =
		ucs_derived_of(ep->super.super.iface, uct_sctp_dpdk_iface_t);
	uct_sctp_dpdk_flush_req_t *req;
	ucs_queue_iter_t iter;

	ucs_queue_for_each_safe(req, iter, &iface->flush_q, queue) {
		if (req->ep != ep)
			continue;
		ucs_queue_del_iter(&iface->flush_q, iter);
		uct_invoke_completion(req->comp, status);
		ucs_free(req);
	}
}
