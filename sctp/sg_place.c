/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sg_place.c - direct placement: the rest of a received message goes
 * straight from usrsctp_recvv into a buffer the consumer names after
 * seeing the message's first piece (sg.h, sg_ep_set_place).
 *
 * Receive copies per message byte without and with it:
 *
 *   usrsctp_recvv -> descriptor -> consumer's memcpy -> destination
 *   usrsctp_recvv ---------------------------------> destination
 *
 * sg_msg_read reads the first piece (peek_bytes) of a new message into a
 * descriptor; when the message continues, rx_placing is set and every
 * further read of it comes here:
 *
 *   place(off) -(buffer)-> recvv into it -> done(off, n) -(EOR)-> publish
 *              -(NULL, first call)-> back to descriptors (-1)
 *              -(NULL, later)-> discarding: recvv into scratch -(EOR)->
 *                                publish with SG_MSG_DISCARDED
 *
 * The consumer is asked again before every read, so a destination it
 * withdrew between two polls (the message arrives in pieces: partial
 * delivery, or the read budget ran out) is never written.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <usrsctp.h>

#include "sg_internal.h"
#include "sdp_trace.h"

#define SG_SCRATCH_BYTES 16384 /* discard reads, bytes per recvv */

int sg_ep_set_place(struct sg_ep *ep, uint32_t peek_bytes, sg_place_fn place,
		    sg_place_done_fn done, void *arg)
{
	if (ep == NULL)
		return -EINVAL;
	if (ep->rx_placing || (ep->place != NULL && ep->rx_head != NULL))
		return -EBUSY;
	if (place == NULL) {
		ep->place = NULL;
		ep->place_done = NULL;
		ep->place_arg = NULL;
		return 0;
	}
	if (done == NULL || peek_bytes == 0 ||
	    peek_bytes > ep->cfg.rx_buf_bytes) {
		SDP_LOG(ERR, SCTP, "sg_ep_set_place: peek of %u bytes: give "
			"1..rx_buf (%u) and a done function", peek_bytes,
			ep->cfg.rx_buf_bytes);
		return -EINVAL;
	}
	if (ep->scratch == NULL) {
		ep->scratch = malloc(SG_SCRATCH_BYTES);
		if (ep->scratch == NULL)
			return -ENOMEM;
		ep->scratch_bytes = SG_SCRATCH_BYTES;
	}
	ep->peek_bytes = peek_bytes;
	ep->peek_on = true;
	ep->place = place;
	ep->place_done = done;
	ep->place_arg = arg;
	return 0;
}

void sg_ep_place_peek(struct sg_ep *ep, bool on)
{
	ep->peek_on = on;
}

unsigned int sg_rx_pending(const struct sg_ep *ep)
{
	return rte_ring_count(ep->rx.ready);
}

void sg_place_reset(struct sg_ep *ep)
{
	ep->rx_placing = false;
	ep->rx_discarding = false;
}

int sg_place_read(struct sg_ep *ep, unsigned int *done)
{
	struct sg_msg_desc *h = ep->rx_head;
	struct sctp_rcvinfo ri;
	struct sockaddr_conn from;
	socklen_t ilen = sizeof(ri), flen = sizeof(from);
	unsigned int itype = 0;
	int mflags = 0;
	uint32_t off = h->msg_len;
	uint8_t *buf = NULL;
	size_t len = 0;
	ssize_t n;

	if (!ep->rx_discarding) {
		buf = ep->place(ep->place_arg, ep, h, off, &len);
		if (buf != NULL && len == 0) {
			ep->place_done(ep->place_arg, h, off, 0);
			buf = NULL;
		}
		if (buf == NULL) {
			if (off == h->len && (h->flags & SG_MSG_PLACED) == 0) {
				/* declined at once: descriptors */
				ep->rx_placing = false;
				return -1;
			}
			ep->rx_discarding = true;
			h->flags |= SG_MSG_PLACED | SG_MSG_DISCARDED;
		}
	}
	if (ep->rx_discarding) {
		buf = ep->scratch;
		len = ep->scratch_bytes;
	}
	memset(&ri, 0, sizeof(ri));
	n = usrsctp_recvv(ep->so, buf, len, (struct sockaddr *)&from, &flen,
			  &ri, &ilen, &itype, &mflags);
	if (n > 0 && (mflags & MSG_NOTIFICATION)) {
		/* Not expected (fragment interleave 0 finishes a message
		 * first): copied out before the buffer is given back. */
		uint8_t note[512];
		size_t nlen = (size_t)n < sizeof(note) ? (size_t)n :
							 sizeof(note);

		memcpy(note, buf, nlen);
		if (!ep->rx_discarding)
			ep->place_done(ep->place_arg, h, off, 0);
		sg_notify_handle(ep, note, nlen);
		return 1;
	}
	if (!ep->rx_discarding)
		ep->place_done(ep->place_arg, h, off, n > 0 ? (size_t)n : 0);
	if (n <= 0) {
		if (n < 0 && errno != EWOULDBLOCK && errno != EAGAIN)
			SDP_LOG(DEBUG, SCTP, "usrsctp_recvv: %m");
		ep->readable = false;
		return 0;
	}
	SDP_TRACE(RECV, n);
	ep->st.rx_copies++;
	ep->st.rx_copy_recv_bytes += (uint64_t)n;
	if (ep->rx_discarding) {
		ep->st.rx_discard_bytes += (uint64_t)n;
	} else {
		if ((h->flags & SG_MSG_PLACED) == 0)
			ep->st.rx_direct_msgs++;
		ep->st.rx_direct_bytes += (uint64_t)n;
	}
	h->flags |= SG_MSG_PLACED;
	h->msg_len += (uint32_t)n;
	if (mflags & MSG_EOR) {
		sg_place_reset(ep);
		sg_msg_publish(ep, 0);
		(*done)++;
	}
	return 1;
}
