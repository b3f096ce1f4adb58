/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sctp_dpdk_ep.c - the `sctp_dpdk` endpoint: one UCT ep to one iface of a
 * peer process, sending active messages on one SCTP stream of the
 * association to that process.
 *
 * Stream: each ep takes stream 1 + hash(src iface, dst iface, ep number)
 * mod (streams - 1); stream 0 is reserved.  SCTP keeps the messages of one
 * stream in order, so the AMs of an ep arrive in the order sent, and a
 * message lost on one stream does not hold up other eps' streams.  With
 * UCX_SCTP_DPDK_STREAM_TAG_MASK, UCP's tag messages go on the stream of
 * their masked tag instead (sctp_dpdk_stream.c says which AMs, and why
 * that order is all MPI needs); every other AM keeps the ep's stream.
 *
 * Send: every AM is one SCTP message, [uct_sctp_dpdk_am_hdr_t][payload],
 * handed to sg_send, which usrsctp copies (short, bcopy and zcopy all
 * complete at once; zcopy returns UCS_OK because the caller's buffers are
 * free again).  Back-pressure (sg_send -EAGAIN), an association not up
 * yet, and pending requests queued on the ep are UCS_ERR_NO_RESOURCE: no
 * AM overtakes the ep's pending requests, which are dispatched in order
 * from iface progress once the association is up and the poll loop has
 * run (freeing send buffer).
 *
 * Flush (sctp_dpdk_flush.c): what sg_send accepted stays in this process
 * until the peer's SCTP acknowledges it, and usrsctp only transmits,
 * retransmits and acknowledges while this process polls; MPICH's
 * MPI_Finalize closes every ep and then blocks in an out-of-band barrier
 * without progress.  So a flush completes only once the peer holds every
 * AM of the ep (its association acknowledged everything, or FLUSH markers
 * behind the ep's AMs on the streams it noted were answered) and no SACK
 * is owed to it (UCS_INPROGRESS + completion meanwhile; SACKs are
 * immediate by default, so that is quick); UCS_ERR_NO_RESOURCE while
 * pending requests wait, as the UCT contract asks.  Fence: UCS_OK;
 * per-stream order already gives fence semantics for an ep's AMs.
 *
 * Failure: when the association is lost (retransmissions exhausted, ABORT)
 * or cannot start, peer->fail_gen moves on and every ep created before
 * reports UCS_ERR_ENDPOINT_TIMEOUT through uct_iface_handle_ep_err from
 * its iface's progress; sends on it fail with that status.
 *
 * Local: an ep to this process's own address copies the AM straight into
 * the destination iface's RX queue (no wire, no association).  At most
 * UCT_SCTP_DPDK_LOCAL_QUEUE_MAX AMs wait there; beyond, sends return
 * UCS_ERR_NO_RESOURCE and pending requests are dispatched as the receiver
 * drains.  When the receiving iface closes, the ep fails like one whose
 * association was lost.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sctp_dpdk.h"
#include "sdp_trace.h"

#include <uct/base/uct_iov.inl>

#include <ucs/debug/log.h>
#include <ucs/type/class.h>

#include <string.h>

int uct_sctp_dpdk_ep_is_failed(const uct_sctp_dpdk_ep_t *ep)
{
	uct_sctp_dpdk_iface_t *iface;
	int alive;

	if (ep->flags & UCT_SCTP_DPDK_EP_FLAG_LOCAL) {
		/* The receiving iface of this process was closed. */
		iface = ucs_derived_of(ep->super.super.iface,
				       uct_sctp_dpdk_iface_t);
		uct_sctp_dpdk_iface_local_room(iface->ctx, ep->dst_iface_id,
					       &alive);
		return !alive;
	}
	return ep->peer->fail_gen != ep->fail_gen;
}

/* Slow path of a send that cannot go now. */
static ucs_status_t uct_sctp_dpdk_ep_not_ready(uct_sctp_dpdk_iface_t *iface,
					       uct_sctp_dpdk_ep_t *ep)
{
	uct_sctp_dpdk_ctx_t *ctx = iface->ctx;

	if (uct_sctp_dpdk_ep_is_failed(ep))
		return UCS_ERR_ENDPOINT_TIMEOUT;
	if (ep->flags & UCT_SCTP_DPDK_EP_FLAG_LOCAL) {
		/* The receiving iface's RX queue is full. */
	} else if (ep->peer->state == UCT_SCTP_DPDK_PEER_IDLE) {
		/* Shut down gracefully by the peer earlier: try again. */
		ucs_recursive_spin_lock(ctx->lock);
		uct_sctp_dpdk_ctx_peer_connect(ctx, ep->peer);
		ucs_recursive_spin_unlock(ctx->lock);
	}
	UCT_TL_IFACE_STAT_TX_NO_DESC(&iface->super);
	return UCS_ERR_NO_RESOURCE;
}

/* Send one AM made of @iov (iov[0] holds our header). */
static UCS_F_ALWAYS_INLINE ucs_status_t
uct_sctp_dpdk_ep_send(uct_sctp_dpdk_ep_t *ep, uint8_t am_id,
		      struct iovec *iov, int iovcnt)
{
	uct_sctp_dpdk_iface_t *iface =
		ucs_derived_of(ep->super.super.iface, uct_sctp_dpdk_iface_t);
	uct_sctp_dpdk_ctx_t *ctx = iface->ctx;
	uct_sctp_dpdk_am_hdr_t *hdr = iov[0].iov_base;
	uct_sctp_dpdk_stream_note_t note;
	ucs_status_t status;
	uint16_t stream;
	int rc;

	SDP_TRACE(UCT_SEND, iov[0].iov_len + (iovcnt > 1 ? iov[1].iov_len : 0));
	hdr->am_id = am_id;
	hdr->flags = 0;
	hdr->dst_iface_id = rte_cpu_to_be_16(ep->dst_iface_id);
	hdr->src_iface_id = rte_cpu_to_be_16(iface->id);
	hdr->dst_incarnation = rte_cpu_to_be_16((uint16_t)ep->dst_incarnation);

	if (ucs_unlikely(ep->flags & UCT_SCTP_DPDK_EP_FLAG_LOCAL)) {
		/* Not past requests waiting in the pending queue (unless
		 * they are being dispatched). */
		if (!ucs_queue_is_empty(&ep->pending_q) &&
		    !(ep->flags & UCT_SCTP_DPDK_EP_FLAG_DISPATCH)) {
			UCT_TL_IFACE_STAT_TX_NO_DESC(&iface->super);
			return UCS_ERR_NO_RESOURCE;
		}
		/* Our header stays behind: the receiver gets the payload. */
		iov[0].iov_base = hdr + 1;
		iov[0].iov_len -= sizeof(*hdr);
		status = uct_sctp_dpdk_iface_local_deliver(
			ctx, ep->dst_iface_id, am_id, iov, iovcnt);
		if (status == UCS_ERR_NO_RESOURCE)
			UCT_TL_IFACE_STAT_TX_NO_DESC(&iface->super);
		/* The receiving iface was closed: the ep has failed (its
		 * error is reported from progress). */
		return status == UCS_ERR_UNREACHABLE ?
			       UCS_ERR_ENDPOINT_TIMEOUT : status;
	}
	if (ucs_unlikely(!uct_sctp_dpdk_ep_can_send(iface, ep)))
		return uct_sctp_dpdk_ep_not_ready(iface, ep);

	/* The ep's stream, or with STREAM_TAG_MASK a tag message's own
	 * (sctp_dpdk_stream.c: which AMs may leave UCT's per-ep order). */
	stream = uct_sctp_dpdk_stream_pick(&ctx->smap, &ep->smap, ep->stream,
					   am_id, iov, iovcnt, sizeof(*hdr),
					   &note);
	ucs_recursive_spin_lock(ctx->lock);
	rc = sg_send(ep->peer->sg, ep->peer->assoc, stream, 0, 0, iov, iovcnt);
	if (ucs_likely(rc == 0)) {
		ep->peer->tx_msgs++; /* outstanding until acknowledged */
		uct_sctp_dpdk_stream_commit(&ctx->smap, &ep->smap, &note,
					    stream);
	} else if (rc == -EAGAIN)
		ep->peer->blocked_poll = ctx->poll_count;
	ucs_recursive_spin_unlock(ctx->lock);
	if (ucs_likely(rc == 0)) {
		uct_sctp_dpdk_ep_flush_note(ep, stream);
		return UCS_OK;
	}
	if (rc == -EAGAIN || rc == -ENOTCONN) {
		/* Send buffer full, or the association just went (its event
		 * follows from the poll loop). */
		UCT_TL_IFACE_STAT_TX_NO_DESC(&iface->super);
		return UCS_ERR_NO_RESOURCE;
	}
	ucs_error("sctp_dpdk: sg_send on assoc %u stream %u failed: %s",
		  ep->peer->assoc, stream, strerror(-rc));
	return sdp_status_from_errno(rc);
}

ucs_status_t uct_sctp_dpdk_ep_am_short(uct_ep_h tl_ep, uint8_t id,
				       uint64_t header, const void *payload,
				       unsigned length)
{
	uct_sctp_dpdk_ep_t *ep = ucs_derived_of(tl_ep, uct_sctp_dpdk_ep_t);
	uint8_t msg[sizeof(uct_sctp_dpdk_am_hdr_t) +
		    UCT_SCTP_DPDK_AM_MAX_SHORT_BYTES];
	struct iovec iov;
	ucs_status_t status;

	UCT_CHECK_AM_ID(id);
	UCT_CHECK_LENGTH(length + sizeof(header), 0,
			 UCT_SCTP_DPDK_AM_MAX_SHORT_BYTES, "am_short");
	/* One contiguous message: each extra piece costs a usrsctp_sendv. */
	memcpy(msg + sizeof(uct_sctp_dpdk_am_hdr_t), &header, sizeof(header));
	/* UCT allows payload NULL with length 0 (memcpy's may not be NULL) */
	if (length > 0)
		memcpy(msg + sizeof(uct_sctp_dpdk_am_hdr_t) + sizeof(header),
		       payload, length);
	iov.iov_base = msg;
	iov.iov_len = sizeof(uct_sctp_dpdk_am_hdr_t) + sizeof(header) + length;
	status = uct_sctp_dpdk_ep_send(ep, id, &iov, 1);
	if (status == UCS_OK) {
		UCT_TL_EP_STAT_OP(&ep->super, AM, SHORT,
				  sizeof(header) + length);
		uct_iface_trace_am(ucs_derived_of(tl_ep->iface,
						  uct_base_iface_t),
				   UCT_AM_TRACE_TYPE_SEND, id,
				   msg + sizeof(uct_sctp_dpdk_am_hdr_t),
				   sizeof(header) + length, "TX: AM_SHORT");
	}
	return status;
}

ucs_status_t uct_sctp_dpdk_ep_am_short_iov(uct_ep_h tl_ep, uint8_t id,
					   const uct_iov_t *uiov,
					   size_t iovcnt)
{
	uct_sctp_dpdk_ep_t *ep = ucs_derived_of(tl_ep, uct_sctp_dpdk_ep_t);
	uint8_t msg[sizeof(uct_sctp_dpdk_am_hdr_t) +
		    UCT_SCTP_DPDK_AM_MAX_SHORT_BYTES];
	size_t len = sizeof(uct_sctp_dpdk_am_hdr_t), i, n;
	struct iovec iov;
	ucs_status_t status;

	UCT_CHECK_AM_ID(id);
	for (i = 0; i < iovcnt; i++) {
		n = uct_iov_get_length(&uiov[i]);
		UCT_CHECK_LENGTH(len + n - sizeof(uct_sctp_dpdk_am_hdr_t), 0,
				 UCT_SCTP_DPDK_AM_MAX_SHORT_BYTES,
				 "am_short_iov");
		memcpy(msg + len, uiov[i].buffer, n);
		len += n;
	}
	iov.iov_base = msg;
	iov.iov_len = len;
	status = uct_sctp_dpdk_ep_send(ep, id, &iov, 1);
	if (status == UCS_OK) {
		UCT_TL_EP_STAT_OP(&ep->super, AM, SHORT,
				  len - sizeof(uct_sctp_dpdk_am_hdr_t));
		uct_iface_trace_am(ucs_derived_of(tl_ep->iface,
						  uct_base_iface_t),
				   UCT_AM_TRACE_TYPE_SEND, id,
				   msg + sizeof(uct_sctp_dpdk_am_hdr_t),
				   len - sizeof(uct_sctp_dpdk_am_hdr_t),
				   "TX: AM_SHORT_IOV");
	}
	return status;
}

ssize_t uct_sctp_dpdk_ep_am_bcopy(uct_ep_h tl_ep, uint8_t id,
				  uct_pack_callback_t pack_cb, void *arg,
				  unsigned flags)
{
	uct_sctp_dpdk_ep_t *ep = ucs_derived_of(tl_ep, uct_sctp_dpdk_ep_t);
	uct_sctp_dpdk_iface_t *iface =
		ucs_derived_of(tl_ep->iface, uct_sctp_dpdk_iface_t);
	struct iovec iov;
	ucs_status_t status;
	size_t length;

	UCT_CHECK_AM_ID(id);
	/* Fail before packing: pack_cb may have side effects. */
	if (ucs_unlikely(!uct_sctp_dpdk_ep_can_send(iface, ep)))
		return uct_sctp_dpdk_ep_not_ready(iface, ep);
	length = pack_cb(UCS_PTR_BYTE_OFFSET(iface->bounce,
					     sizeof(uct_sctp_dpdk_am_hdr_t)),
			 arg);
	UCT_CHECK_LENGTH(length, 0,
			 iface->ctx->seg_bytes - sizeof(uct_sctp_dpdk_am_hdr_t),
			 "am_bcopy");
	iov.iov_base = iface->bounce;
	iov.iov_len = sizeof(uct_sctp_dpdk_am_hdr_t) + length;
	status = uct_sctp_dpdk_ep_send(ep, id, &iov, 1);
	if (ucs_unlikely(status != UCS_OK)) {
		/* NO_RESOURCE after packing (the send buffer filled): the
		 * caller packs again on retry, as with any bcopy. */
		return status;
	}
	UCT_TL_EP_STAT_OP(&ep->super, AM, BCOPY, length);
	uct_iface_trace_am(&iface->super, UCT_AM_TRACE_TYPE_SEND, id,
			   UCS_PTR_BYTE_OFFSET(iface->bounce,
					       sizeof(uct_sctp_dpdk_am_hdr_t)),
			   length, "TX: AM_BCOPY");
	return length;
}

ucs_status_t uct_sctp_dpdk_ep_am_zcopy(uct_ep_h tl_ep, uint8_t id,
				       const void *header,
				       unsigned header_length,
				       const uct_iov_t *uiov, size_t iovcnt,
				       unsigned flags, uct_completion_t *comp)
{
	uct_sctp_dpdk_ep_t *ep = ucs_derived_of(tl_ep, uct_sctp_dpdk_ep_t);
	uct_sctp_dpdk_iface_t *iface =
		ucs_derived_of(tl_ep->iface, uct_sctp_dpdk_iface_t);
	uint8_t buf[sizeof(uct_sctp_dpdk_am_hdr_t) +
		    UCT_SCTP_DPDK_AM_MAX_HDR_BYTES];
	struct iovec iov[SG_IOV_MAX];
	size_t i, total = header_length;
	int n = 1;
	ucs_status_t status;

	UCT_CHECK_AM_ID(id);
	UCT_CHECK_LENGTH(header_length, 0, UCT_SCTP_DPDK_AM_MAX_HDR_BYTES,
			 "am_zcopy header");
	UCT_CHECK_IOV_SIZE(iovcnt, (size_t)UCT_SCTP_DPDK_AM_MAX_IOV,
			   "uct_sctp_dpdk_ep_am_zcopy");
	memcpy(buf + sizeof(uct_sctp_dpdk_am_hdr_t), header, header_length);
	iov[0].iov_base = buf;
	iov[0].iov_len = sizeof(uct_sctp_dpdk_am_hdr_t) + header_length;
	for (i = 0; i < iovcnt; i++) {
		size_t len = uct_iov_get_length(&uiov[i]);

		if (len == 0)
			continue;
		iov[n].iov_base = uiov[i].buffer;
		iov[n].iov_len = len;
		total += len;
		n++;
	}
	UCT_CHECK_LENGTH(total, 0,
			 iface->ctx->seg_bytes - sizeof(uct_sctp_dpdk_am_hdr_t),
			 "am_zcopy");
	/* usrsctp copies the iov before sg_send returns: complete now. */
	status = uct_sctp_dpdk_ep_send(ep, id, iov, n);
	if (status == UCS_OK) {
		UCT_TL_EP_STAT_OP(&ep->super, AM, ZCOPY, total);
		/* The header only, as UCX's tcp traces a zcopy AM. */
		uct_iface_trace_am(&iface->super, UCT_AM_TRACE_TYPE_SEND, id,
				   header, header_length, "TX: AM_ZCOPY");
	}
	return status;
}

ucs_status_t uct_sctp_dpdk_ep_pending_add(uct_ep_h tl_ep,
					  uct_pending_req_t *req,
					  unsigned flags)
{
	uct_sctp_dpdk_ep_t *ep = ucs_derived_of(tl_ep, uct_sctp_dpdk_ep_t);
	uct_sctp_dpdk_iface_t *iface =
		ucs_derived_of(tl_ep->iface, uct_sctp_dpdk_iface_t);

	/* ep_flush answers NO_RESOURCE only while the queue is not empty, so
	 * its pending flush is always accepted here. */
	if (ucs_queue_is_empty(&ep->pending_q) &&
	    uct_sctp_dpdk_ep_can_send(iface, ep))
		return UCS_ERR_BUSY;
	uct_pending_req_queue_push(&ep->pending_q, req);
	if (!(ep->flags & UCT_SCTP_DPDK_EP_FLAG_PENDING)) {
		ep->flags |= UCT_SCTP_DPDK_EP_FLAG_PENDING;
		ucs_list_add_tail(&iface->pending_eps, &ep->pending_list);
	}
	UCT_TL_EP_STAT_PEND(&ep->super);
	return UCS_OK;
}

static void uct_sctp_dpdk_ep_pending_unlink(uct_sctp_dpdk_ep_t *ep)
{
	if (ep->flags & UCT_SCTP_DPDK_EP_FLAG_PENDING) {
		ucs_list_del(&ep->pending_list);
		ep->flags &= ~UCT_SCTP_DPDK_EP_FLAG_PENDING;
	}
}

void uct_sctp_dpdk_ep_pending_purge(uct_ep_h tl_ep,
				    uct_pending_purge_callback_t cb,
				    void *arg)
{
	uct_sctp_dpdk_ep_t *ep = ucs_derived_of(tl_ep, uct_sctp_dpdk_ep_t);
	uct_pending_req_priv_queue_t UCS_V_UNUSED *priv;

	uct_pending_queue_purge(priv, &ep->pending_q, 1, cb, arg);
	uct_sctp_dpdk_ep_pending_unlink(ep);
}

unsigned uct_sctp_dpdk_iface_dispatch_pending(uct_sctp_dpdk_iface_t *iface)
{
	uct_sctp_dpdk_ep_t *ep, *tmp;
	uct_pending_req_priv_queue_t *priv;
	unsigned count = 0;

	ucs_list_for_each_safe(ep, tmp, &iface->pending_eps, pending_list) {
		if (!(ep->flags & UCT_SCTP_DPDK_EP_FLAG_LOCAL) &&
		    ucs_unlikely(ep->peer->state == UCT_SCTP_DPDK_PEER_IDLE) &&
		    !uct_sctp_dpdk_ep_is_failed(ep)) {
			/* The peer shut down gracefully while requests
			 * waited: nothing else would send on this ep, so
			 * reconnect from here. */
			ucs_recursive_spin_lock(iface->ctx->lock);
			uct_sctp_dpdk_ctx_peer_connect(iface->ctx, ep->peer);
			ucs_recursive_spin_unlock(iface->ctx->lock);
		}
		ep->flags |= UCT_SCTP_DPDK_EP_FLAG_DISPATCH;
		uct_pending_queue_dispatch(priv, &ep->pending_q,
					   uct_sctp_dpdk_ep_can_send(iface, ep));
		ep->flags &= ~UCT_SCTP_DPDK_EP_FLAG_DISPATCH;
		if (ucs_queue_is_empty(&ep->pending_q)) {
			uct_sctp_dpdk_ep_pending_unlink(ep);
			count++;
		}
	}
	return count;
}

ucs_status_t uct_sctp_dpdk_ep_fence(uct_ep_h tl_ep, unsigned flags)
{
	/* One ordered SCTP stream per ep: later AMs never overtake, and no
	 * new operation leaves before the unsent rest of an RMA op
	 * (uct_sctp_dpdk_ep_can_send).  Tag messages moved by
	 * STREAM_TAG_MASK are not fenced: UCP 1.13.1 fences to order RMA
	 * and atomics, which keep the ep's stream. */
	UCT_TL_EP_STAT_FENCE(ucs_derived_of(tl_ep, uct_base_ep_t));
	return UCS_OK;
}

int uct_sctp_dpdk_ep_connected_to(const uct_ep_h tl_ep,
				  const uct_device_addr_t *dev_addr,
				  const uct_iface_addr_t *iface_addr)
{
	const uct_sctp_dpdk_ep_t *ep =
		ucs_derived_of(tl_ep, uct_sctp_dpdk_ep_t);
	const uct_sctp_dpdk_dev_addr_t *dev =
		(const uct_sctp_dpdk_dev_addr_t *)dev_addr;
	const uct_sctp_dpdk_iface_addr_t *addr =
		(const uct_sctp_dpdk_iface_addr_t *)iface_addr;

	return dev != NULL && addr != NULL && dev->ip == ep->dst_dev.ip &&
	       dev->sctp_port == ep->dst_dev.sctp_port &&
	       rte_be_to_cpu_16(addr->iface_id) == ep->dst_iface_id &&
	       rte_be_to_cpu_32(addr->incarnation) == ep->dst_incarnation;
}

static UCS_CLASS_INIT_FUNC(uct_sctp_dpdk_ep_t, const uct_ep_params_t *params)
{
	uct_sctp_dpdk_iface_t *iface =
		ucs_derived_of(params->iface, uct_sctp_dpdk_iface_t);
	const uct_sctp_dpdk_dev_addr_t *dev;
	const uct_sctp_dpdk_iface_addr_t *addr;
	uct_sctp_dpdk_ctx_t *ctx = iface->ctx;
	uint32_t hash;
	unsigned lane;
	ucs_status_t status;

	UCS_CLASS_CALL_SUPER_INIT(uct_base_ep_t, &iface->super);

	UCT_EP_PARAMS_CHECK_DEV_IFACE_ADDRS(params);
	if (ctx == NULL) {
		ucs_error("sctp_dpdk: cannot create an ep: this process has no "
			  "port (" UCT_SCTP_DPDK_ENV "DEVARGS is empty)");
		return UCS_ERR_UNREACHABLE;
	}
	dev = (const uct_sctp_dpdk_dev_addr_t *)params->dev_addr;
	addr = (const uct_sctp_dpdk_iface_addr_t *)params->iface_addr;
	self->dst_iface_id = rte_be_to_cpu_16(addr->iface_id);
	self->dst_incarnation = rte_be_to_cpu_32(addr->incarnation);
	self->dst_dev = *dev;
	if (!uct_sctp_dpdk_peer_compatible(ctx, dev->ip, addr))
		return UCS_ERR_UNREACHABLE; /* logged, naming the variable */
	self->flags = 0;
	self->peer = NULL;
	self->fail_gen = 0;
	ucs_queue_head_init(&self->pending_q);
	memset(&self->smap, 0, sizeof(self->smap));
	self->am_dirty = 0;
	self->am_dirty_n = 0;
	self->am_dirty_all = 0;
	uct_sctp_dpdk_rma_ep_init(self);
	/* Spread eps over streams 1..streams-1; stream 0 is reserved. */
	hash = ((uint32_t)iface->id * 2654435761u) ^
	       ((uint32_t)self->dst_iface_id * 40503u) ^ iface->ep_seq++;
	self->stream = (uint16_t)(1 + hash % (ctx->streams - 1));

	if (dev->ip == ctx->ip_be &&
	    rte_be_to_cpu_16(dev->sctp_port) == ctx->sctp_port) {
		self->flags |= UCT_SCTP_DPDK_EP_FLAG_LOCAL;
	} else {
		/* LANES: path k goes to the peer's lane k, SCTP port + k */
		lane = (params->field_mask & UCT_EP_PARAM_FIELD_PATH_INDEX) ?
			       uct_sctp_dpdk_lane_of_path(ctx,
							  params->path_index) :
			       0;
		status = uct_sctp_dpdk_ctx_peer_get(
			ctx, dev->ip, rte_be_to_cpu_16(dev->sctp_port) + lane,
			lane, self->dst_incarnation, &self->peer);
		if (status != UCS_OK)
			return status;
		self->fail_gen = self->peer->fail_gen;
		uct_sctp_dpdk_path_peer(ctx, params->dev_addr);
	}
	ucs_list_add_tail(&iface->eps, &self->list);
	ucs_debug("sctp_dpdk: ep %p iface %u -> iface %u%s stream %u", self,
		  iface->id, self->dst_iface_id,
		  (self->flags & UCT_SCTP_DPDK_EP_FLAG_LOCAL) ? " (local)" : "",
		  self->stream);
	return UCS_OK;
}

static UCS_CLASS_CLEANUP_FUNC(uct_sctp_dpdk_ep_t)
{
	uct_sctp_dpdk_ep_flush_cancel(self, UCS_ERR_CANCELED);
	if (!ucs_queue_is_empty(&self->pending_q))
		ucs_warn("sctp_dpdk: ep %p destroyed with pending requests",
			 self);
	uct_sctp_dpdk_rma_ep_cleanup(self);
	uct_sctp_dpdk_ep_pending_unlink(self);
	ucs_list_del(&self->list);
}

UCS_CLASS_DEFINE(uct_sctp_dpdk_ep_t, uct_base_ep_t);
UCS_CLASS_DEFINE_NEW_FUNC(uct_sctp_dpdk_ep_t, uct_ep_t,
			  const uct_ep_params_t *);
UCS_CLASS_DEFINE_DELETE_FUNC(uct_sctp_dpdk_ep_t, uct_ep_t);
