/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sg_msg.c - whole messages over the one-to-many socket.
 *
 * Send: the socket runs with SCTP_EXPLICIT_EOR, so a message may be handed
 * to usrsctp in several usrsctp_sendv calls (one per iovec piece, the last
 * with SCTP_EOR) without first copying it into one buffer.  A message that
 * fits the free send buffer (SCTP_GET_SNDBUF_USE) goes in at once; one that
 * can never fit (above the send buffer) is continued from sg_poll as the
 * buffer drains ("big send", one per endpoint) while the caller keeps its
 * buffers; one that does not fit now but could later gets -EAGAIN.
 *
 * Receive: usrsctp_recvv writes straight into a free descriptor's data
 * area.  A read without MSG_EOR is a piece of a longer message (the
 * descriptor was too small, or partial delivery started); pieces are
 * chained until MSG_EOR and the chain is published whole.  With
 * SCTP_FRAGMENT_INTERLEAVE 0 the next read after a piece always continues
 * the same message.  No descriptor free -> stop reading (back-pressure).
 * With a place function (sg_place.c) a new message's first read takes at
 * most peek_bytes; the rest goes to the consumer's buffer, or into the
 * same descriptor when the consumer has none.
 *
 *   readable -> get desc -(none)-> stall, rx_backpressure++
 *            -> recvv -(EWOULDBLOCK)-> readable = false
 *                     -(notification)-> sg_notify_handle, desc back
 *                     -(data)-> chain -(EOR)-> rx ring
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <usrsctp.h>

#include "sg_internal.h"
#include "sdp_trace.h"

/*
 * usrsctp 0.9.5 implements this socket option (netinet/sctp.h,
 * netinet/sctp_uio.h) but <usrsctp.h> does not export it.
 */
#ifndef SCTP_GET_SNDBUF_USE
#define SCTP_GET_SNDBUF_USE 0x00001101
struct sctp_sockstat {
	sctp_assoc_t ss_assoc_id;
	uint32_t ss_total_sndbuf;   /* bytes queued for sending */
	uint32_t ss_total_recv_buf; /* bytes being reassembled */
};
#endif

/* Hand @len bytes to usrsctp. @return bytes taken (0 = no room) or
 * -errno. */
static ssize_t push(struct sg_ep *ep, sg_assoc_t assoc, uint16_t stream,
		    uint32_t flags, uint32_t ppid, const void *buf,
		    size_t len, bool eor)
{
	struct sctp_sndinfo si;
	ssize_t n;

	memset(&si, 0, sizeof(si));
	si.snd_sid = stream;
	si.snd_ppid = ppid;
	si.snd_assoc_id = (sctp_assoc_t)assoc;
	si.snd_flags = (uint16_t)(((flags & SG_SEND_UNORDERED) != 0
					   ? SCTP_UNORDERED
					   : 0) |
				  (eor ? SCTP_EOR : 0));
	/* usrsctp sets the I bit on the message's last DATA chunk only (when
	 * the message is complete), whichever piece carried the flag */
	if (ep->cfg.sack_immediate && (flags & SG_SEND_MORE) == 0)
		si.snd_flags |= SCTP_SACK_IMMEDIATELY;
	n = usrsctp_sendv(ep->so, buf, len, NULL, 0, &si, sizeof(si),
			  SCTP_SENDV_SNDINFO, 0);
	SDP_TRACE(SENDV, n);
	if (n >= 0)
		return n;
	if (errno == EWOULDBLOCK || errno == EAGAIN)
		return 0;
	return -errno;
}

/* Free bytes in @assoc's share of the send buffer (an estimate that errs
 * low: usrsctp's own count leaves out chunk overhead). */
static size_t sndbuf_free(struct sg_ep *ep, sg_assoc_t assoc)
{
	struct sctp_sockstat ss;
	socklen_t len = sizeof(ss);

	memset(&ss, 0, sizeof(ss));
	ss.ss_assoc_id = (sctp_assoc_t)assoc;
	if (usrsctp_getsockopt(ep->so, IPPROTO_SCTP, SCTP_GET_SNDBUF_USE, &ss,
			       &len) != 0)
		return 0;
	if (ss.ss_total_sndbuf >= ep->cfg.sndbuf_bytes)
		return 0;
	return ep->cfg.sndbuf_bytes - ss.ss_total_sndbuf;
}

static size_t iov_left(const struct sg_bigsend *b)
{
	size_t left = 0;
	int i;

	for (i = b->cur; i < b->iovcnt; i++)
		left += b->iov[i].iov_len;
	return left - b->off;
}

/*
 * Zero-copy (sg_send_zc): hand usrsctp up to @max bytes of the big send
 * from its current position, all remaining pieces in one call (no small
 * leading piece alone in a packet), referenced but for the header
 * (zc_copy_first); advances cur/off.  @return bytes taken or -errno.
 */
static ssize_t push_zc(struct sg_ep *ep, size_t max)
{
	struct sg_bigsend *b = &ep->big;
	struct iovec v[SG_IOV_MAX];
	struct sctp_sndinfo si;
	size_t want = 0, copy = 0, left;
	ssize_t n;
	int i, cnt = 0;
	bool eor;

	for (i = b->cur; i < b->iovcnt && want < max; i++) {
		size_t skip = i == b->cur ? b->off : 0;
		size_t l = b->iov[i].iov_len - skip;

		if (l > max - want)
			l = max - want;
		v[cnt].iov_base = (uint8_t *)b->iov[i].iov_base + skip;
		v[cnt].iov_len = l;
		if (i == 0 && b->zc_copy_first)
			copy = l;
		want += l;
		cnt++;
	}
	eor = want == iov_left(b);
	memset(&si, 0, sizeof(si));
	si.snd_sid = b->stream;
	si.snd_ppid = b->ppid;
	si.snd_assoc_id = (sctp_assoc_t)b->assoc;
	si.snd_flags = (uint16_t)(((b->flags & SG_SEND_UNORDERED) != 0
					   ? SCTP_UNORDERED
					   : 0) |
				  (eor ? SCTP_EOR : 0));
	if (ep->cfg.sack_immediate && (b->flags & SG_SEND_MORE) == 0)
		si.snd_flags |= SCTP_SACK_IMMEDIATELY;
	sg_zc_get(b->zc); /* usrsctp calls sg_zc_release_cb once */
	n = usrsctp_sendv_ext(ep->so, v, cnt, copy, NULL, 0, &si, sizeof(si),
			      SCTP_SENDV_SNDINFO, 0, sg_zc_release_cb, b->zc);
	SDP_TRACE(SENDV, n);
	if (n < 0)
		return errno == EWOULDBLOCK || errno == EAGAIN ? 0 : -errno;
	ep->zc_st.bytes += (uint64_t)n;
	ep->zc_st.copy_bytes += (uint64_t)n < copy ? (uint64_t)n : copy;
	for (left = (size_t)n; left > 0;) {
		size_t l = b->iov[b->cur].iov_len - b->off;

		if (left < l) {
			b->off += left;
			break;
		}
		left -= l;
		b->cur++;
		b->off = 0;
	}
	while (b->cur < b->iovcnt && b->iov[b->cur].iov_len == b->off) {
		b->cur++; /* empty pieces */
		b->off = 0;
	}
	return n;
}

/* What usrsctp has output goes to the NIC now; a lane on a port with
 * queues sends on its own queue. */
static void flush_tx(struct sg_ep *ep)
{
	if (ep->queue != 0)
		dp_port_flush_queue(ep->lk->port, ep->queue, ep->lk->now_tsc);
	else
		dp_port_send_flush(ep->lk->port, ep->lk->now_tsc);
}

/*
 * Push as much of the big send as @budget allows.  @first_max < SIZE_MAX:
 * the first push takes at most that many bytes (one packet's worth) and
 * the port is flushed right after it, so that packet is on the wire while
 * usrsctp copies the rest (see sg_send).  @return -errno on a usrsctp
 * error, else bytes taken.
 */
static ssize_t big_push(struct sg_ep *ep, size_t budget, size_t first_max)
{
	struct sg_bigsend *b = &ep->big;
	ssize_t taken = 0;

	while (b->zc != NULL && b->cur < b->iovcnt && budget > 0) {
		size_t max = budget < first_max ? budget : first_max;
		ssize_t n = push_zc(ep, max);

		if (n <= 0)
			return n < 0 ? n : taken;
		taken += n;
		budget -= (size_t)n;
		if ((size_t)n < max)
			break;
		if (first_max != SIZE_MAX) {
			first_max = SIZE_MAX;
			if (b->cur < b->iovcnt) {
				flush_tx(ep);
				ep->st.tx_first_pkt_early++;
			}
		}
	}
	while (b->zc == NULL && b->cur < b->iovcnt && budget > 0) {
		const struct iovec *v = &b->iov[b->cur];
		size_t len = v->iov_len - b->off;
		bool last;
		ssize_t n;

		if (len > budget)
			len = budget;
		if (len > first_max)
			len = first_max;
		last = b->cur == b->iovcnt - 1 && b->off + len == v->iov_len;
		n = push(ep, b->assoc, b->stream, b->flags, b->ppid,
			 (const uint8_t *)v->iov_base + b->off, len, last);
		if (n < 0)
			return n;
		if (n == 0)
			break;
		taken += n;
		budget -= (size_t)n;
		b->off += (size_t)n;
		if (b->off == v->iov_len) {
			b->cur++;
			b->off = 0;
		}
		if ((size_t)n < len)
			break;
		if (first_max != SIZE_MAX) {
			first_max = SIZE_MAX;
			if (!last) {
				flush_tx(ep);
				ep->st.tx_first_pkt_early++;
			}
		}
	}
	return taken;
}

static void big_finish(struct sg_ep *ep, enum sg_event_type type)
{
	struct sg_bigsend *b = &ep->big;

	if (b->zc != NULL) { /* its done function tells the caller */
		if (type == SG_EV_SEND_DONE)
			ep->st.msgs_out++;
		else
			b->zc->status = -ECONNRESET;
		sg_zc_put(b->zc);
		b->zc = NULL;
		b->active = false;
		return;
	}
	if (type == SG_EV_SEND_DONE) {
		ep->st.msgs_out++;
		if (b->bounce == NULL) /* a bounce copy is internal */
			sg_evq_push(ep, SG_EV_SEND_DONE, b->assoc, 0);
	} else {
		sg_evq_push(ep, type, b->assoc, 0);
	}
	free(b->bounce);
	b->bounce = NULL;
	b->active = false;
}

/* A whole-fitting message came back partly taken (the estimate was
 * high): keep the rest in an owned copy and finish it from sg_poll. */
static int bounce_rest(struct sg_ep *ep)
{
	struct sg_bigsend *b = &ep->big;
	size_t left = iov_left(b), off = 0;
	int i;

	b->bounce = malloc(left);
	if (b->bounce == NULL) {
		SDP_LOG(ERR, SCTP, "assoc %u: no memory for %zu bytes of a "
			"partly sent message", b->assoc, left);
		return -ENOMEM;
	}
	for (i = b->cur; i < b->iovcnt; i++) {
		size_t skip = i == b->cur ? b->off : 0;

		memcpy(b->bounce + off,
		       (const uint8_t *)b->iov[i].iov_base + skip,
		       b->iov[i].iov_len - skip);
		off += b->iov[i].iov_len - skip;
	}
	b->iov[0].iov_base = b->bounce;
	b->iov[0].iov_len = left;
	b->iovcnt = 1;
	b->cur = 0;
	b->off = 0;
	return 0;
}

/*
 * The zero-copy big send of @assoc, if it has bytes in [lo, hi) not yet
 * handed to usrsctp (sg_assoc_zc_detach): its rest is copied (bounce_rest)
 * and continues as a copied send, and sg's hold on the record is dropped,
 * so the record's done runs once usrsctp lets go of what it already took.
 * @return bytes copied (0: nothing of it there), or -ENOMEM: the rest is
 * dropped, the send fails (done with -ECONNRESET) and the message is cut
 * short: the caller must abort the association.
 */
ssize_t sg_big_zc_detach(struct sg_ep *ep, sg_assoc_t assoc, uintptr_t lo,
			 uintptr_t hi)
{
	struct sg_bigsend *b = &ep->big;
	struct sg_zc *z = b->zc;
	size_t left;
	bool hit = false;
	int i;

	if (!b->active || z == NULL || b->assoc != assoc)
		return 0;
	for (i = b->cur; i < b->iovcnt && !hit; i++) {
		size_t skip = i == b->cur ? b->off : 0;
		uintptr_t p = (uintptr_t)b->iov[i].iov_base + skip;
		size_t l = b->iov[i].iov_len - skip;

		hit = l != 0 && p < hi && lo < p + l;
	}
	if (!hit)
		return 0;
	left = iov_left(b);
	if (bounce_rest(ep) != 0) {
		big_finish(ep, SG_EV_SEND_FAILED);
		return -ENOMEM;
	}
	/* the bounce is the copied path's from now on (big_finish frees it
	 * and reports nothing for it: the caller hears through done) */
	b->zc = NULL;
	b->zc_copy_first = false;
	sg_zc_put(z);
	return (ssize_t)left;
}

/*
 * A message in several pieces whose first piece is shorter than a packet:
 * gather its first head_cap bytes (the whole message when it is that
 * short) into b->head and make that the first piece, so the first packet
 * is full and a short message is one usrsctp_sendv and one packet.  The
 * copy costs less than the packet, SACK and sendv it saves (0.3 us for
 * 8 KiB here, against ~1.5 us traced).  b->iov/iovcnt are rewritten.
 */
static void gather_head(struct sg_bigsend *b, size_t total)
{
	struct iovec rest[SG_IOV_MAX];
	size_t want = total < b->head_cap ? total : b->head_cap, got = 0;
	int i = 0, n = 0;

	while (got < want) {
		size_t take = b->iov[i].iov_len;

		if (take > want - got)
			take = want - got;
		memcpy(b->head + got, b->iov[i].iov_base, take);
		got += take;
		if (take < b->iov[i].iov_len) { /* rest of this piece */
			rest[n].iov_base = (uint8_t *)b->iov[i].iov_base + take;
			rest[n].iov_len = b->iov[i].iov_len - take;
			n++;
		}
		i++;
	}
	for (; i < b->iovcnt; i++)
		rest[n++] = b->iov[i];
	b->iov[0].iov_base = b->head;
	b->iov[0].iov_len = got;
	memcpy(&b->iov[1], rest, (size_t)n * sizeof(rest[0]));
	b->iovcnt = n + 1;
}

/* What sg_send and sg_send_zc check before a message is taken: @iov's
 * total into @total_p, the free send buffer into @avail_p.  @return 0, or
 * sg_send's -EINVAL/-EMSGSIZE/-ENOTCONN/-EAGAIN (the last counted). */
static int send_admit(struct sg_ep *ep, sg_assoc_t assoc, uint16_t stream,
		      uint32_t flags, const struct iovec *iov, int iovcnt,
		      size_t *total_p, size_t *avail_p)
{
	size_t total = 0, avail;
	int i;

	if (iovcnt < 1 || iovcnt > SG_IOV_MAX || stream >= ep->cfg.streams ||
	    (flags & ~(uint32_t)(SG_SEND_UNORDERED | SG_SEND_MORE)) != 0)
		return -EINVAL;
	for (i = 0; i < iovcnt; i++)
		total += iov[i].iov_len;
	if (total == 0 || total > ep->cfg.max_msg_bytes)
		return -EMSGSIZE;
	if (!sg_assoc_up(ep, assoc))
		return -ENOTCONN;
	if (ep->big.active) {
		ep->st.tx_backpressure++;
		return -EAGAIN;
	}
	avail = sndbuf_free(ep, assoc);
	if (total > avail && total <= ep->cfg.sndbuf_bytes) {
		ep->st.tx_backpressure++;
		return -EAGAIN;
	}
	*total_p = total;
	*avail_p = avail;
	return 0;
}

/* The message @iov becomes ep->big, the one being handed to usrsctp. */
static void send_start(struct sg_ep *ep, sg_assoc_t assoc, uint16_t stream,
		       uint32_t flags, uint32_t ppid, const struct iovec *iov,
		       int iovcnt)
{
	struct sg_bigsend *b = &ep->big;

	b->assoc = assoc;
	b->stream = stream;
	b->flags = flags;
	b->ppid = ppid;
	memcpy(b->iov, iov, (size_t)iovcnt * sizeof(*iov));
	b->iovcnt = iovcnt;
	b->cur = 0;
	b->off = 0;
	b->bounce = NULL;
}

int sg_send(struct sg_ep *ep, sg_assoc_t assoc, uint16_t stream,
	    uint32_t flags, uint32_t ppid, const struct iovec *iov,
	    int iovcnt)
{
	struct sg_bigsend *b = &ep->big;
	size_t total, avail;
	bool idle;
	ssize_t n;
	int rc;

	rc = send_admit(ep, assoc, stream, flags, iov, iovcnt, &total, &avail);
	if (rc != 0)
		return rc;
	/* Nothing queued or unacknowledged: a request/response exchange,
	 * where the message's latency is what counts (see first_max). */
	idle = avail == ep->cfg.sndbuf_bytes;
	send_start(ep, assoc, stream, flags, ppid, iov, iovcnt);
	if (iovcnt > 1 && iov[0].iov_len < b->head_cap)
		gather_head(b, total);
	ep->lk->now_tsc = dp_tsc();
	/* A message of several packets to an idle association: its first
	 * packet goes to usrsctp alone and leaves at once (with nothing in
	 * flight usrsctp sends an incomplete EOR message's full packet), so
	 * the receiver copies it in while usrsctp here copies the rest; the
	 * rest follows in one piece.  Not while data is in flight: usrsctp
	 * would hold the piece for the SACK, and bulk transfers keep their
	 * one usrsctp_sendv per message.  Without it a 16 KiB one-way time
	 * is the sum of both sides' copies of both packets. */
	n = big_push(ep, avail, idle && total > b->head_cap ? b->head_cap :
							      SIZE_MAX);
	if (n < 0) {
		if (n == -ENOTCONN || n == -ENOENT || n == -ECONNRESET)
			return -ENOTCONN;
		SDP_LOG(ERR, SCTP, "assoc %u: usrsctp_sendv failed: %s", assoc,
			strerror((int)-n));
		return -EIO;
	}
	ep->st.bytes_out += (uint64_t)n;
	/* to the NIC now, not at the caller's next poll: a request leaves
	 * before the caller goes on to wait for its answer */
	flush_tx(ep);
	sg_unsent_note(ep, assoc);
	if (b->cur == b->iovcnt) {
		ep->st.msgs_out++;
		return 0;
	}
	b->active = true;
	if (total <= ep->cfg.sndbuf_bytes) {
		/* Promised whole: copy the rest, the caller's buffers are
		 * free on return. */
		if (bounce_rest(ep) != 0) {
			/* Cannot happen often; the message is cut short
			 * and the association must go. */
			b->active = false;
			return -EIO;
		}
		return 0;
	}
	return -EINPROGRESS;
}

int sg_send_zc(struct sg_ep *ep, sg_assoc_t assoc, uint16_t stream,
	       uint32_t flags, uint32_t ppid, const struct iovec *iov,
	       int iovcnt, size_t copy_bytes, sg_send_done_fn done, void *arg)
{
	struct sg_bigsend *b = &ep->big;
	size_t total, avail;
	bool idle;
	ssize_t n;
	int rc;

	if (done == NULL || iovcnt < 1 ||
	    (copy_bytes != 0 && (copy_bytes != iov[0].iov_len ||
				 copy_bytes > b->head_cap)))
		return -EINVAL;
	rc = send_admit(ep, assoc, stream, flags, iov, iovcnt, &total, &avail);
	if (rc != 0)
		return rc;
	idle = avail == ep->cfg.sndbuf_bytes;
	b->zc = sg_zc_new(ep, assoc, done, arg);
	if (b->zc == NULL) {
		SDP_LOG(ERR, SCTP, "assoc %u: no memory for a zero-copy send",
			assoc);
		return -EIO;
	}
	send_start(ep, assoc, stream, flags, ppid, iov, iovcnt);
	b->zc_copy_first = copy_bytes != 0;
	ep->zc_st.msgs++;
	ep->lk->now_tsc = dp_tsc();
	/* as sg_send: an idle association's first packet leaves alone */
	n = big_push(ep, avail, idle && total > b->head_cap ? b->head_cap :
							      SIZE_MAX);
	if (n < 0) {
		/* only sg's hold left: usrsctp references nothing */
		bool none = __atomic_load_n(&b->zc->refs, __ATOMIC_ACQUIRE) ==
			    1;

		b->zc->status = -ECONNRESET;
		/* Nothing referenced: the caller hears the error now, as
		 * from sg_send, and done never runs.  Else done reports it
		 * once usrsctp let go of the bytes it still holds. */
		b->zc->silent = none;
		sg_zc_put(b->zc);
		b->zc = NULL;
		if (none && (n == -ENOTCONN || n == -ENOENT ||
			     n == -ECONNRESET))
			return -ENOTCONN;
		SDP_LOG(ERR, SCTP, "assoc %u: usrsctp_sendv_ext failed: %s",
			assoc, strerror((int)-n));
		return none ? -EIO : 0;
	}
	ep->st.bytes_out += (uint64_t)n;
	flush_tx(ep);
	sg_unsent_note(ep, assoc);
	if (b->cur == b->iovcnt) {
		ep->st.msgs_out++;
		sg_zc_put(b->zc);
		b->zc = NULL;
		return 0;
	}
	/* The rest from sg_poll.  A header not yet taken is ours to keep. */
	if (b->zc_copy_first && b->cur == 0) {
		memmove(b->head, (uint8_t *)b->iov[0].iov_base + b->off,
			b->iov[0].iov_len - b->off);
		b->iov[0].iov_base = b->head;
		b->iov[0].iov_len -= b->off;
		b->off = 0;
	}
	b->active = true;
	return 0;
}

bool sg_send_busy(const struct sg_ep *ep)
{
	return ep->big.active;
}

int sg_assoc_unacked(struct sg_ep *ep, sg_assoc_t assoc, uint64_t *bytes_p)
{
	struct sctp_sockstat ss;
	socklen_t len = sizeof(ss);
	uint64_t bytes = 0;

	if (!sg_map_get(&ep->assocs, assoc, &(uint64_t){ 0 }))
		return -ENOTCONN;
	memset(&ss, 0, sizeof(ss));
	ss.ss_assoc_id = (sctp_assoc_t)assoc;
	/* total_output_queue_size: stream queues + send queue + sent but
	 * not cumulatively acknowledged. */
	if (usrsctp_getsockopt(ep->so, IPPROTO_SCTP, SCTP_GET_SNDBUF_USE, &ss,
			       &len) != 0)
		return -ENOTCONN;
	bytes = ss.ss_total_sndbuf;
	if (ep->big.active && ep->big.assoc == assoc)
		bytes += iov_left(&ep->big);
	*bytes_p = bytes;
	return 0;
}

#ifndef SCTP_SDP_UNSENT
#define SCTP_SDP_UNSENT 0x0000f101 /* usrsctp-patches/0008 */
#endif

int sg_assoc_unsent(struct sg_ep *ep, sg_assoc_t assoc, uint32_t *bytes_p)
{
	struct sctp_assoc_value av;
	socklen_t len = sizeof(av);

	memset(&av, 0, sizeof(av));
	av.assoc_id = (sctp_assoc_t)assoc;
	if (usrsctp_getsockopt(ep->so, IPPROTO_SCTP, SCTP_SDP_UNSENT, &av,
			       &len) != 0)
		return -ENOTCONN;
	*bytes_p = av.assoc_value;
	return 0;
}

unsigned int sg_ep_unsent(const struct sg_ep *ep)
{
	return ep->nb_unsent;
}

uint64_t sg_ep_unsent_bytes(struct sg_ep *ep)
{
	uint64_t total = 0;
	uint32_t bytes;
	unsigned int i;

	for (i = 0; i < ep->nb_unsent; i++)
		if (sg_assoc_unsent(ep, ep->unsent[i], &bytes) == 0)
			total += bytes;
	return total;
}

void sg_unsent_note(struct sg_ep *ep, sg_assoc_t assoc)
{
	uint32_t bytes = 0;
	unsigned int i;

	if (sg_assoc_unsent(ep, assoc, &bytes) != 0 || bytes == 0)
		return;
	for (i = 0; i < ep->nb_unsent; i++)
		if (ep->unsent[i] == assoc)
			return;
	if (ep->nb_unsent == SG_UNSENT_TRACK) {
		ep->st.unsent_untracked++;
		return;
	}
	ep->unsent[ep->nb_unsent++] = assoc;
}

void sg_unsent_update(struct sg_ep *ep)
{
	uint32_t bytes;
	unsigned int i = 0;

	while (i < ep->nb_unsent) {
		bytes = 0;
		if (sg_assoc_unsent(ep, ep->unsent[i], &bytes) == 0 &&
		    bytes != 0) {
			i++;
			continue;
		}
		ep->unsent[i] = ep->unsent[--ep->nb_unsent];
	}
}

/* usrsctp's state of @assoc (SCTP_ESTABLISHED, ...); -ENOTCONN when sg
 * or usrsctp no longer knows it. */
static int assoc_state(struct sg_ep *ep, sg_assoc_t assoc)
{
	struct sctp_status st;
	socklen_t len = sizeof(st);

	if (!sg_map_get(&ep->assocs, assoc, &(uint64_t){ 0 }))
		return -ENOTCONN;
	memset(&st, 0, sizeof(st));
	st.sstat_assoc_id = (sctp_assoc_t)assoc;
	if (usrsctp_getsockopt(ep->so, IPPROTO_SCTP, SCTP_STATUS, &st,
			       &len) != 0)
		return -ENOTCONN;
	return st.sstat_state;
}

const char *sg_assoc_state_name(struct sg_ep *ep, sg_assoc_t assoc)
{
	switch (assoc_state(ep, assoc)) {
	case -ENOTCONN: return "unknown";
	case SCTP_CLOSED: return "closed";
	case SCTP_BOUND: return "bound";
	case SCTP_LISTEN: return "listen";
	case SCTP_COOKIE_WAIT: return "cookie-wait";
	case SCTP_COOKIE_ECHOED: return "cookie-echoed";
	case SCTP_ESTABLISHED: return "established";
	case SCTP_SHUTDOWN_SENT: return "shutdown-sent";
	case SCTP_SHUTDOWN_RECEIVED: return "shutdown-received";
	case SCTP_SHUTDOWN_ACK_SENT: return "shutdown-ack-sent";
	case SCTP_SHUTDOWN_PENDING: return "shutdown-pending";
	default: return "?";
	}
}

bool sg_assoc_peer_closed(struct sg_ep *ep, sg_assoc_t assoc)
{
	int st = assoc_state(ep, assoc);

	/* SHUTDOWN_RECEIVED: ours still being acknowledged; ACK_SENT: done */
	return st == -ENOTCONN || st == SCTP_SHUTDOWN_ACK_SENT ||
	       st == SCTP_CLOSED;
}

bool sg_assoc_closing(struct sg_ep *ep, sg_assoc_t assoc)
{
	int st = assoc_state(ep, assoc);

	return st == -ENOTCONN || st == SCTP_SHUTDOWN_SENT ||
	       st == SCTP_SHUTDOWN_ACK_SENT || st == SCTP_CLOSED;
}

int sg_assoc_frag_bytes(struct sg_ep *ep, sg_assoc_t assoc)
{
	struct sctp_assoc_value av;
	socklen_t len = sizeof(av);

	if (!sg_map_get(&ep->assocs, assoc, &(uint64_t){ 0 }))
		return -ENOTCONN;
	memset(&av, 0, sizeof(av));
	av.assoc_id = (sctp_assoc_t)assoc;
	/* usrsctp answers sctp_get_frag_point() for an existing association */
	if (usrsctp_getsockopt(ep->so, IPPROTO_SCTP, SCTP_MAXSEG, &av,
			       &len) != 0 || av.assoc_value == 0)
		return -ENOTCONN;
	return (int)av.assoc_value;
}

bool sg_assoc_answered(struct sg_ep *ep, sg_assoc_t assoc, uint64_t now_tsc)
{
	struct sg_assoc_info ai;
	uint64_t v, quiet_tsc;
	const struct sg_peer *p;

	if (!sg_map_get(&ep->assocs, assoc, &v))
		return true;
	/* Frames still in the port's TX buffer or pacer leave only while
	 * someone polls; held SACKs: someone waits for them now, so they go
	 * at the next poll's flush, not at the end of the hold. */
	if (dp_port_tx_pending(ep->lk->port) ||
	    (ep->queue != 0 &&
	     dp_port_tx_queued_queue(ep->lk->port, ep->queue) != 0)) {
		if (dp_port_held(ep->lk->port) != 0)
			sg_link_hold_release(ep->lk, now_tsc);
		return false;
	}
	sg_assoc_unpack(v, &ai);
	p = sg_link_peer_find(ep->lk, ai.peer_ip_be);
	if (p == NULL)
		return true;
	/* A packet of ours left after the peer's last DATA: usrsctp bundles
	 * a pending delayed SACK into every packet it sends, so none is owed
	 * (this keeps flushes, e.g. every MPI_Win_fence, from waiting out
	 * the SACK delay).  A peer's message ends in a packet with the I bit
	 * (sack_immediate), SACKed at once: this holds right after the poll
	 * that took it.  Else wait until the delayed SACK has gone. */
	if (p->tx_seq > p->rx_data_seq)
		return true;
	quiet_tsc = dp_tsc_hz() *
		    (ep->cfg.sack_delay_ms + SG_QUIET_MARGIN_MS) / 1000;
	return now_tsc - p->last_rx_data_tsc >= quiet_tsc;
}

bool sg_assoc_quiet(struct sg_ep *ep, sg_assoc_t assoc, uint64_t now_tsc)
{
	uint64_t v, unacked;

	if (!sg_map_get(&ep->assocs, assoc, &v))
		return true;
	if (ep->big.active && ep->big.assoc == assoc)
		return false;
	/* Something sg_send accepted is not acknowledged yet. */
	if (sg_assoc_unacked(ep, assoc, &unacked) == 0 && unacked != 0)
		return false;
	return sg_assoc_answered(ep, assoc, now_tsc);
}

unsigned int sg_msg_send_more(struct sg_ep *ep)
{
	struct sg_bigsend *b = &ep->big;
	size_t avail = sndbuf_free(ep, b->assoc), left = iov_left(b);
	ssize_t n;

	/* Wait for a useful amount of room: small pieces cost a sendv each. */
	if (avail < left && avail < ep->cfg.sndbuf_bytes / 4)
		return 0;
	n = big_push(ep, avail, SIZE_MAX);
	if (n < 0) {
		big_finish(ep, SG_EV_SEND_FAILED);
		return 1;
	}
	ep->st.bytes_out += (uint64_t)n;
	if (b->cur == b->iovcnt)
		big_finish(ep, SG_EV_SEND_DONE);
	return n > 0;
}

void sg_msg_send_abort(struct sg_ep *ep, sg_assoc_t assoc)
{
	if (ep->big.active && ep->big.assoc == assoc)
		big_finish(ep, SG_EV_SEND_FAILED);
}

void sg_msg_publish(struct sg_ep *ep, uint16_t flags)
{
	struct sg_msg_desc *head = ep->rx_head;

	head->flags |= flags;
	ep->st.msgs_in++;
	ep->st.bytes_in += head->msg_len;
	sg_rxpool_publish(&ep->rx, head);
	ep->rx_head = ep->rx_tail = NULL;
}

unsigned int sg_msg_read(struct sg_ep *ep)
{
	unsigned int budget = SG_READ_BUDGET, done = 0;

	while (ep->readable && budget-- > 0) {
		struct sg_rxdesc *d;
		struct sctp_rcvinfo ri;
		struct sockaddr_conn from;
		socklen_t ilen = sizeof(ri), flen = sizeof(from);
		unsigned int itype = 0;
		int mflags = 0;
		bool more = false; /* continues the tail descriptor */
		bool peeked = false;
		uint8_t *dst;
		size_t room;
		ssize_t n;

		if (ep->rx_placing) {
			int rc = sg_place_read(ep, &done);

			if (rc == 0)
				break;
			if (rc > 0)
				continue;
			/* declined: into descriptors, below */
		}
		if (ep->place != NULL && ep->rx_tail != NULL &&
		    ep->rx_tail->len < ((struct sg_rxdesc *)ep->rx_tail)->cap) {
			/* The rest of a message whose first piece was
			 * peeked: into the same descriptor. */
			d = (struct sg_rxdesc *)ep->rx_tail;
			more = true;
		} else {
			d = sg_rxpool_get(&ep->rx);
		}
		if (d == NULL) {
			if (!ep->rx_stalled)
				ep->st.rx_backpressure++;
			ep->rx_stalled = true;
			break;
		}
		ep->rx_stalled = false;
		dst = d->pub.data;
		room = d->cap;
		if (more) {
			dst += d->pub.len;
			room -= d->pub.len;
		} else if (ep->place != NULL && ep->peek_on &&
			   ep->rx_head == NULL && ep->peek_bytes < room) {
			room = ep->peek_bytes;
			peeked = true;
		}
		memset(&ri, 0, sizeof(ri));
		n = usrsctp_recvv(ep->so, dst, room, (struct sockaddr *)&from,
				  &flen, &ri, &ilen, &itype, &mflags);
		if (n <= 0) {
			if (!more)
				sg_rxpool_put_chain(&d->pub);
			if (n < 0 && errno != EWOULDBLOCK && errno != EAGAIN)
				SDP_LOG(DEBUG, SCTP, "usrsctp_recvv: %m");
			ep->readable = false;
			break;
		}
		SDP_TRACE(RECV, n);
		if (mflags & MSG_NOTIFICATION) {
			/* possibly a piece (room was peek_bytes) */
			sg_notify_piece(ep, dst, (size_t)n,
					(mflags & MSG_EOR) != 0);
			if (!more)
				sg_rxpool_put_chain(&d->pub);
			continue;
		}
		/* the second receive copy: out of usrsctp's chain */
		ep->st.rx_copies++;
		ep->st.rx_copy_recv_bytes += (uint64_t)n;
		if (more) {
			d->pub.len += (uint32_t)n;
		} else {
			d->pub.len = (uint32_t)n;
			d->pub.next = NULL;
			if (ep->rx_head == NULL) {
				struct sg_msg_desc *h = &d->pub;

				h->msg_len = 0;
				h->nb_segs = 0;
				h->assoc = (sg_assoc_t)ri.rcv_assoc_id;
				h->stream = ri.rcv_sid;
				h->ppid = ri.rcv_ppid;
				h->flags = (ri.rcv_flags & SCTP_UNORDERED) != 0
						   ? SG_MSG_UNORDERED
						   : 0;
				ep->rx_head = h;
				/* A longer message: its rest may have
				 * a place of its own (sg_place.c). */
				ep->rx_placing = peeked &&
						 (mflags & MSG_EOR) == 0;
			} else {
				ep->rx_tail->next = &d->pub;
			}
			ep->rx_tail = &d->pub;
			ep->rx_head->nb_segs++;
		}
		ep->rx_head->msg_len += (uint32_t)n;
		if (mflags & MSG_EOR) {
			ep->rx_placing = false;
			sg_msg_publish(ep, 0);
			done++;
		} else if (ep->rx_head->msg_len >= ep->cfg.max_msg_bytes) {
			/* Above max_msg: hand over what we have rather than
			 * hold every descriptor forever. */
			ep->rx_placing = false;
			sg_msg_publish(ep, SG_MSG_PARTIAL);
			done++;
		}
	}
	return done;
}
