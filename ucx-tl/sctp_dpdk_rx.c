/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sctp_dpdk_rx.c - receive dispatch: one round of the shared poll loop (sg_poll,
 * association events, whole messages from sg_recv) puts each message on
 * the RX queue of the iface named in its header; the iface runs the AM
 * handler from its own progress, in its own thread.  The message stays in
 * the sg receive buffer it was read into until UCX releases it.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sctp_dpdk.h"

#include <ucs/debug/log.h>

#include <ucs/debug/assert.h>

static void uct_sctp_dpdk_ctx_drop(uct_sctp_dpdk_ctx_t *ctx,
				   struct sg_msg_desc *msg, const char *why)
{
	if (ctx->rx_drops++ == 0)
		ucs_error("sctp_dpdk: dropped a %u-byte message in %u "
			  "segments: %s (further drops are counted)",
			  msg->msg_len, msg->nb_segs, why);
	sg_msg_release(msg);
}

void uct_sctp_dpdk_ctx_rx_deliver(uct_sctp_dpdk_ctx_t *ctx,
				  struct sg_msg_desc *msg)
{
	const uct_sctp_dpdk_am_hdr_t *hdr =
		(const uct_sctp_dpdk_am_hdr_t *)msg->data;
	uct_sctp_dpdk_iface_t *iface;
	uint16_t id;
	uint8_t am_id;

	id = rte_be_to_cpu_16(hdr->dst_iface_id);
	iface = ctx->ifaces[id % UCT_SCTP_DPDK_MAX_IFACES];
	if (ucs_unlikely(iface == NULL || iface->id != id)) {
		/* Normal after a close: messages already in flight to it
		 * (ids are not reused soon, see add_iface). */
		if (ctx->rx_closed++ == 0)
			ucs_diag("sctp_dpdk: dropped a message to a closed "
				 "iface (further ones are counted: rx_closed)");
		sg_msg_release(msg);
		return;
	}
	if (ucs_unlikely(rte_be_to_cpu_16(hdr->dst_incarnation) !=
			 (uint16_t)ctx->incarnation) &&
	    !(hdr->flags & UCT_SCTP_DPDK_HDR_FLAG_RMA)) {
		/* An ep to the process that had this address before us (its
		 * sender fails the ep once it sees our incarnation). */
		if (ctx->rx_stale++ == 0)
			ucs_diag("sctp_dpdk: dropped a message addressed to an "
				 "earlier process at this address (further "
				 "ones are counted)");
		sg_msg_release(msg);
		return;
	}
	/* A peer's AM id indexes UCX's handler table (UCT_AM_ID_MAX
	 * entries, unchecked in uct_iface_invoke_am); an id with the RMA
	 * bit would pass for an RMA reply.  Senders check ids, so only a
	 * broken or hostile peer gets here. */
	if (ucs_unlikely(!(hdr->flags & UCT_SCTP_DPDK_HDR_FLAG_RMA) &&
			 hdr->am_id >= UCT_AM_ID_MAX)) {
		if (ctx->rx_bad_am++ == 0)
			ucs_warn("sctp_dpdk: dropped a message with AM id %u "
				 "(ids are < %u) from assoc %u (further ones "
				 "are counted: rx_bad_am)", hdr->am_id,
				 (unsigned)UCT_AM_ID_MAX, msg->assoc);
		sg_msg_release(msg);
		return;
	}
	/* A descriptor written in front of the data overlays the header
	 * when rx_headroom < 8: read it first. */
	am_id = hdr->am_id | (hdr->flags & UCT_SCTP_DPDK_RX_RMA);
	/* Stream map: a tag RTS names the buffer our GET will read; its
	 * replies are asked for on the stream the RTS came on. */
	if (ucs_unlikely(ctx->smap.mask != 0) &&
	    am_id == UCT_SCTP_DPDK_UCP_RNDV_RTS)
		uct_sctp_dpdk_stream_rts_note(&ctx->smap, ctx->rx_sg,
					      msg->assoc, msg->stream, am_id,
					      hdr + 1, msg->len - sizeof(*hdr));
	uct_sctp_dpdk_iface_rx_msg(iface, msg, am_id);
}

/* One lane's share of the poll loop: its endpoint's loop, events and
 * messages.  Lane 0 (ctx->sg) polls the port and runs usrsctp, which
 * hands every lane's packets to that lane's socket. */
static unsigned uct_sctp_dpdk_lane_poll(uct_sctp_dpdk_ctx_t *ctx,
					unsigned lane, uint64_t now_tsc)
{
	struct sg_msg_desc *msgs[UCT_SCTP_DPDK_RX_BURST];
	const uct_sctp_dpdk_am_hdr_t *hdr;
	struct sg_event ev;
	unsigned work, n, i;

	ctx->rx_sg = ctx->lane_sg[lane];
	if (ctx->rx_direct)
		uct_sctp_dpdk_rma_place_peek(ctx, ctx->rx_sg, now_tsc);
	work = sg_poll(ctx->rx_sg, now_tsc);
	while (sg_next_event(ctx->rx_sg, &ev) == 0) {
		uct_sctp_dpdk_peer_event(ctx, lane, &ev);
		work++;
	}
	n = sg_recv(ctx->rx_sg, msgs, UCT_SCTP_DPDK_RX_BURST);
	ctx->lane_rx_msgs[lane] += n;
	for (i = 0; i < n; i++) {
		struct sg_msg_desc *msg = msgs[i];

		ctx->rx_msgs++;
		if (ucs_unlikely(msg->nb_segs != 1 ||
				 (msg->flags & SG_MSG_PARTIAL) ||
				 msg->len < sizeof(*hdr))) {
			/* Cannot happen: max_msg == rx_buf (SEG_SIZE). */
			uct_sctp_dpdk_ctx_drop(ctx, msg,
					       "not one segment with a header; "
					       "both sides need the same "
					       UCT_SCTP_DPDK_ENV "SEG_SIZE");
			continue;
		}
		hdr = (const uct_sctp_dpdk_am_hdr_t *)msg->data;
		/* RMA requests are served here (sctp_dpdk_rma.c); RMA
		 * replies go to the initiator's iface like AMs.  While an
		 * RMA reply waits for send buffer, later messages of its
		 * association wait behind it there too. */
		if (ucs_unlikely((hdr->flags & UCT_SCTP_DPDK_HDR_FLAG_RMA) ||
				 (ctx->rma_reply_mp_ready &&
				  !ucs_queue_is_empty(&ctx->rma_replyq))) &&
		    uct_sctp_dpdk_rma_rx_request(ctx, msg))
			continue;
		uct_sctp_dpdk_ctx_rx_deliver(ctx, msg);
	}
	if (ucs_unlikely(ctx->rma_reply_mp_ready &&
			 !ucs_queue_is_empty(&ctx->rma_replyq)))
		work += uct_sctp_dpdk_rma_reply_progress(ctx);
	return work + n;
}

unsigned uct_sctp_dpdk_ctx_poll(uct_sctp_dpdk_ctx_t *ctx)
{
	uint64_t now_tsc = dp_tsc();
	unsigned work = 0, lane;

	ctx->poll_count++;
	/* lanes with threads of their own are theirs to poll */
	for (lane = 0; lane < (ctx->lane_threads != 0 ? 1u : ctx->nb_lanes);
	     lane++)
		work += uct_sctp_dpdk_lane_poll(ctx, lane, now_tsc);
	ctx->rx_sg = ctx->sg;
	if (dp_port_tx_pending(ctx->port))
		work++;
	return work;
}

unsigned uct_sctp_dpdk_ctx_poll_lane(uct_sctp_dpdk_ctx_t *ctx, unsigned lane)
{
	unsigned work = uct_sctp_dpdk_lane_poll(ctx, lane, dp_tsc());

	ctx->rx_sg = ctx->sg;
	return work;
}

void uct_sctp_dpdk_ctx_msg_release(uct_sctp_dpdk_ctx_t *ctx,
				   struct sg_msg_desc *msg)
{
	ucs_recursive_spin_lock(ctx->lock);
	ctx->sg_descs_held--;
	sg_msg_release(msg);
	ucs_recursive_spin_unlock(ctx->lock);
}
