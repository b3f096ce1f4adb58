/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sctp_dpdk_stream.c - the stream map: UCP tag messages of independent MPI
 * messages on different SCTP streams, so a loss on one does not hold up
 * the others (no head-of-line blocking; seed 000's tag -> stream).
 *
 * Without a mask (the default) every AM of an ep goes on the ep's own
 * stream, in order: UCT's contract.  With UCX_SCTP_DPDK_STREAM_TAG_MASK
 * the transport relaxes that contract for UCP's tag-matched messages only:
 *
 *   AM (UCP 1.13.1 id)           stream
 *   EAGER_ONLY (2)               key(tag)           UCP header: tag
 *   EAGER_FIRST (3)              key(tag), tracked  tag, total_len, msg_id
 *   EAGER_SYNC_ONLY (6)          key(tag)           tag, ep_id, req_id
 *   EAGER_SYNC_FIRST (7)         key(tag), tracked  first hdr + ep/req id
 *   RNDV_RTS (9), opcode 0 (tag) key(tag)           tag, sreq, addr, size,
 *                                                   opcode at byte 40
 *   EAGER_MIDDLE (4)             its first's stream msg_id, offset
 *   everything else              the ep's stream    (wireup, sync ACK,
 *                                                   ATS/RTR/ATP, rndv data,
 *                                                   UCP AM, stream API, RMA)
 *
 * key(tag) = sum of the fields of (tag & mask), a field being a run of
 * contiguous set bits of the mask shifted down; stream = 1 + key mod
 * (streams - 1).  Two messages whose masked tags are equal always share a
 * stream, so they stay in order; messages may overtake each other only if
 * their masked tags differ.  That is legal by construction when the mask
 * covers only bits that no receive can wildcard: the communicator
 * (context id) bits, as no receive matches two communicators; and the tag
 * bits too only if the program never receives or probes with MPI_ANY_TAG
 * (the promise of MPI 4's mpi_assert_no_any_tag).  ANY_SOURCE is no
 * concern: different sources are different eps and associations anyway.
 *
 * Middle fragments: UCP 1.13.1 accepts a middle before its first (the
 * frag hash of ucp_eager_middle_handler), so any stream is correct for
 * them; they follow their first (tracked by msg_id while bytes remain) so
 * a message is not spread over streams.  If the first is not tracked (more
 * multi-fragment messages in flight on one ep than entries), the middle
 * takes the ep's stream and frag_misses counts it.
 *
 * What stays on the ep's stream and why it may: the sync ACK, ATS, RTR and
 * ATP answer a message the peer already received and name a request id,
 * not a position in a stream; rendezvous data and RMA are addressed by
 * request/rkey; wireup messages are UCP's, ordered among themselves on the
 * ep stream, and the tag messages that reach a peer before a wireup
 * message carry only ids the peer itself handed out (UCP uses the same
 * order-free protocol over transports with several lanes).  Flush counts
 * the whole association (every stream), so flush and close are unchanged.
 * Fence orders the ep's stream only: UCP 1.13.1 fences to order RMA and
 * atomics (ucp_worker_fence -> iface fence, rndv put -> ep fence before
 * ATP), and those keep the ep's stream.
 *
 * Rendezvous data (rts_note/rts_find): UCP's tag rendezvous moves its
 * data by a GET the receiver issues from the RTS's buffer address (at
 * once from the RTS handler when a receive matched, later from
 * ucp_tag_recv when the RTS was unexpected; in pieces at address +
 * offset).  The receive path notes each tag RTS (lane, association,
 * buffer, size, stream) in a ring; a GET of a range inside a noted buffer
 * of the same association goes on that stream and asks for its replies
 * there.  The request leaves the ep's order: it reads a send buffer that
 * nothing may change while the send is in flight (the RTS's sender
 * completes it only on the ATS, after the last reply), so reading it
 * before or after anything else of the ep gives the same bytes; a GET
 * request lost behind, or ahead of, another message no longer holds up
 * the other rendezvous of the ep (seed 000's farm).
 * A wrong match would need a user RMA GET of a range inside a buffer that
 * is being sent, whose content the program may not change meanwhile
 * either (sctp_dpdk_rma.c).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sctp_dpdk_stream.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#ifdef HAVE_CONFIG_H
/* Built against the UCX 1.13.1 tree: the wire facts above are checked. */
#include <ucp/core/ucp_types.h>
#include <ucp/tag/eager.h>
#include <ucp/rndv/rndv.h>

_Static_assert((int)UCP_AM_ID_EAGER_ONLY == (int) UCT_SCTP_DPDK_UCP_EAGER_ONLY, "id");
_Static_assert((int)UCP_AM_ID_EAGER_FIRST == (int) UCT_SCTP_DPDK_UCP_EAGER_FIRST, "id");
_Static_assert((int)UCP_AM_ID_EAGER_MIDDLE == (int) UCT_SCTP_DPDK_UCP_EAGER_MIDDLE,
	       "id");
_Static_assert((int)UCP_AM_ID_EAGER_SYNC_ONLY == (int) UCT_SCTP_DPDK_UCP_EAGER_SYNC_ONLY,
	       "id");
_Static_assert((int)UCP_AM_ID_EAGER_SYNC_FIRST == (int)
		       UCT_SCTP_DPDK_UCP_EAGER_SYNC_FIRST,
	       "id");
_Static_assert((int)UCP_AM_ID_RNDV_RTS == (int) UCT_SCTP_DPDK_UCP_RNDV_RTS, "id");
_Static_assert(offsetof(ucp_eager_hdr_t, super.tag) == 0, "tag first");
_Static_assert(sizeof(ucp_eager_first_hdr_t) ==
		       UCT_SCTP_DPDK_UCP_FIRST_HDR_BYTES,
	       "first hdr");
_Static_assert(offsetof(ucp_eager_first_hdr_t, msg_id) ==
		       UCT_SCTP_DPDK_UCP_FIRST_MSG_ID_OFFSET,
	       "msg_id");
_Static_assert(offsetof(ucp_eager_first_hdr_t, total_len) ==
		       UCT_SCTP_DPDK_UCP_FIRST_TOTAL_OFFSET,
	       "total_len");
_Static_assert(sizeof(ucp_eager_sync_first_hdr_t) ==
		       UCT_SCTP_DPDK_UCP_SYNC_FIRST_HDR_BYTES,
	       "sync first hdr");
_Static_assert(offsetof(ucp_eager_sync_first_hdr_t, super) == 0, "nested");
_Static_assert(sizeof(ucp_eager_middle_hdr_t) ==
		       UCT_SCTP_DPDK_UCP_MIDDLE_HDR_BYTES,
	       "middle hdr");
_Static_assert(offsetof(ucp_eager_middle_hdr_t, msg_id) == 0, "msg_id");
_Static_assert(offsetof(ucp_rndv_rts_hdr_t, hdr) == 0, "rts tag");
_Static_assert(offsetof(ucp_rndv_rts_hdr_t, opcode) ==
		       UCT_SCTP_DPDK_UCP_RTS_OPCODE_OFFSET,
	       "rts opcode");
_Static_assert(UCP_RNDV_RTS_TAG_OK == 0, "tag rts opcode");
_Static_assert(offsetof(ucp_rndv_rts_hdr_t, address) ==
		       UCT_SCTP_DPDK_UCP_RTS_ADDRESS_OFFSET,
	       "rts address");
_Static_assert(offsetof(ucp_rndv_rts_hdr_t, size) ==
		       UCT_SCTP_DPDK_UCP_RTS_SIZE_OFFSET,
	       "rts size");
#endif

static const struct {
	const char *name;
	uint64_t mask;
} uct_sctp_dpdk_stream_named[] = {
	{"off", 0},
	{"ompi-comm", UCT_SCTP_DPDK_STREAM_MASK_OMPI_COMM},
	{"ompi-tag", UCT_SCTP_DPDK_STREAM_MASK_OMPI_TAG},
	{"mpich-comm", UCT_SCTP_DPDK_STREAM_MASK_MPICH_COMM},
	{"mpich-tag", UCT_SCTP_DPDK_STREAM_MASK_MPICH_TAG},
};

int uct_sctp_dpdk_stream_mask_parse(const char *text, uint64_t *mask_p)
{
	unsigned long long v;
	size_t i;
	char *end;

	if (text == NULL || *text == '\0')
		return -EINVAL;
	for (i = 0; i < sizeof(uct_sctp_dpdk_stream_named) /
				sizeof(uct_sctp_dpdk_stream_named[0]);
	     i++) {
		if (strcasecmp(text, uct_sctp_dpdk_stream_named[i].name) == 0) {
			*mask_p = uct_sctp_dpdk_stream_named[i].mask;
			return 0;
		}
	}
	if (*text == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(text, &end, 0);
	if (errno != 0 || *end != '\0')
		return -EINVAL;
	*mask_p = v;
	return 0;
}

int uct_sctp_dpdk_stream_map_init(uct_sctp_dpdk_stream_map_t *map,
				  uint64_t mask, unsigned streams)
{
	unsigned bit = 0, start;

	memset(map, 0, sizeof(*map));
	if (streams < 2 || streams > 65535)
		return -EINVAL;
	map->tx_msgs = calloc(streams, sizeof(*map->tx_msgs));
	map->rep_msgs = calloc(streams, sizeof(*map->rep_msgs));
	map->req_msgs = calloc(streams, sizeof(*map->req_msgs));
	if (map->tx_msgs == NULL || map->rep_msgs == NULL ||
	    map->req_msgs == NULL) {
		free(map->tx_msgs);
		free(map->rep_msgs);
		free(map->req_msgs);
		map->tx_msgs = map->rep_msgs = map->req_msgs = NULL;
		return -ENOMEM;
	}
	map->mask = mask;
	map->streams = (uint16_t)streams;
	/* At most 32 runs in 64 bits. */
	while (bit < 64) {
		if (!(mask & (1ull << bit))) {
			bit++;
			continue;
		}
		start = bit;
		while (bit < 64 && (mask & (1ull << bit)))
			bit++;
		map->field_shift[map->nfields] = (uint8_t)start;
		map->field_bits[map->nfields] =
			(bit - start == 64) ? ~0ull : (1ull << (bit - start)) - 1;
		map->nfields++;
	}
	return 0;
}

void uct_sctp_dpdk_stream_map_cleanup(uct_sctp_dpdk_stream_map_t *map)
{
	if (map == NULL)
		return;
	free(map->tx_msgs);
	free(map->rep_msgs);
	free(map->req_msgs);
	map->tx_msgs = map->rep_msgs = map->req_msgs = NULL;
}

uint16_t uct_sctp_dpdk_stream_of_tag(const uct_sctp_dpdk_stream_map_t *map,
				     uint64_t tag)
{
	uint64_t key = 0;
	unsigned i;

	/* Sum of fields: consecutive communicator ids (or tags) of one field
	 * land on consecutive streams, whatever the field's position. */
	for (i = 0; i < map->nfields; i++)
		key += (tag >> map->field_shift[i]) & map->field_bits[i];
	return (uint16_t)(1 + key % (uint64_t)(map->streams - 1));
}

/* Copy the first @len bytes of the UCP part (after @skip bytes) of the
 * message into @out; returns the bytes copied. */
static size_t uct_sctp_dpdk_stream_peek(const struct iovec *iov, int iovcnt,
					size_t skip, void *out, size_t len)
{
	size_t done = 0, n;
	int i;

	for (i = 0; i < iovcnt && done < len; i++) {
		if (skip >= iov[i].iov_len) {
			skip -= iov[i].iov_len;
			continue;
		}
		n = iov[i].iov_len - skip;
		if (n > len - done)
			n = len - done;
		memcpy((uint8_t *)out + done, (const uint8_t *)iov[i].iov_base +
						      skip, n);
		done += n;
		skip = 0;
	}
	return done;
}

static uint64_t uct_sctp_dpdk_stream_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v)); /* UCP headers are host order, packed */
	return v;
}

uint16_t uct_sctp_dpdk_stream_pick(const uct_sctp_dpdk_stream_map_t *map,
				   const uct_sctp_dpdk_stream_ep_t *st,
				   uint16_t ep_stream, uint8_t am_id,
				   const struct iovec *iov, int iovcnt,
				   size_t hdr_bytes,
				   uct_sctp_dpdk_stream_note_t *note)
{
	uint8_t h[UCT_SCTP_DPDK_UCP_PEEK_BYTES];
	size_t have, total = 0, hlen;
	uint64_t msg_id;
	int i;

	note->kind = UCT_SCTP_DPDK_STREAM_NOTE_NONE;
	note->stream = ep_stream;
	if (map->mask == 0)
		return ep_stream;
	switch (am_id) {
	case UCT_SCTP_DPDK_UCP_EAGER_ONLY:
	case UCT_SCTP_DPDK_UCP_EAGER_SYNC_ONLY:
	case UCT_SCTP_DPDK_UCP_EAGER_FIRST:
	case UCT_SCTP_DPDK_UCP_EAGER_SYNC_FIRST:
	case UCT_SCTP_DPDK_UCP_RNDV_RTS:
	case UCT_SCTP_DPDK_UCP_EAGER_MIDDLE:
		break;
	default:
		return ep_stream;
	}
	have = uct_sctp_dpdk_stream_peek(iov, iovcnt, hdr_bytes, h, sizeof(h));
	for (i = 0; i < iovcnt; i++)
		total += iov[i].iov_len;
	total -= hdr_bytes; /* UCP header + payload */

	if (am_id == UCT_SCTP_DPDK_UCP_EAGER_MIDDLE) {
		if (have < UCT_SCTP_DPDK_UCP_MIDDLE_HDR_BYTES)
			return ep_stream;
		msg_id = uct_sctp_dpdk_stream_u64(h);
		note->msg_id = msg_id;
		note->bytes = total - UCT_SCTP_DPDK_UCP_MIDDLE_HDR_BYTES;
		note->kind = UCT_SCTP_DPDK_STREAM_NOTE_MISS;
		for (i = 0; i < UCT_SCTP_DPDK_STREAM_FRAGS; i++) {
			if (st->frags[i].left_bytes != 0 &&
			    st->frags[i].msg_id == msg_id) {
				note->kind = UCT_SCTP_DPDK_STREAM_NOTE_MIDDLE;
				note->stream = st->frags[i].stream;
				break;
			}
		}
		return note->stream;
	}
	if (have < sizeof(uint64_t))
		return ep_stream;
	if (am_id == UCT_SCTP_DPDK_UCP_RNDV_RTS &&
	    (have <= UCT_SCTP_DPDK_UCP_RTS_OPCODE_OFFSET ||
	     h[UCT_SCTP_DPDK_UCP_RTS_OPCODE_OFFSET] != 0))
		return ep_stream; /* rendezvous of a UCP AM, not a tag */
	note->stream = uct_sctp_dpdk_stream_of_tag(map,
						   uct_sctp_dpdk_stream_u64(h));
	note->kind = UCT_SCTP_DPDK_STREAM_NOTE_TAG;
	if (am_id == UCT_SCTP_DPDK_UCP_EAGER_FIRST ||
	    am_id == UCT_SCTP_DPDK_UCP_EAGER_SYNC_FIRST) {
		hlen = am_id == UCT_SCTP_DPDK_UCP_EAGER_FIRST ?
			       UCT_SCTP_DPDK_UCP_FIRST_HDR_BYTES :
			       UCT_SCTP_DPDK_UCP_SYNC_FIRST_HDR_BYTES;
		if (have >= hlen && total >= hlen) {
			uint64_t len = uct_sctp_dpdk_stream_u64(
				h + UCT_SCTP_DPDK_UCP_FIRST_TOTAL_OFFSET);

			note->kind = UCT_SCTP_DPDK_STREAM_NOTE_FIRST;
			note->msg_id = uct_sctp_dpdk_stream_u64(
				h + UCT_SCTP_DPDK_UCP_FIRST_MSG_ID_OFFSET);
			note->bytes = len > total - hlen ? len - (total - hlen)
							 : 0;
		}
	}
	return note->stream;
}

void uct_sctp_dpdk_stream_commit(uct_sctp_dpdk_stream_map_t *map,
				 uct_sctp_dpdk_stream_ep_t *st,
				 const uct_sctp_dpdk_stream_note_t *note,
				 uint16_t stream)
{
	uct_sctp_dpdk_stream_frag_t *f;
	int i, slot = -1;

	if (stream < map->streams)
		map->tx_msgs[stream]++;
	switch (note->kind) {
	case UCT_SCTP_DPDK_STREAM_NOTE_NONE:
		return;
	case UCT_SCTP_DPDK_STREAM_NOTE_MISS:
		map->frag_misses++;
		return;
	case UCT_SCTP_DPDK_STREAM_NOTE_MIDDLE:
		map->mapped_msgs++;
		for (i = 0; i < UCT_SCTP_DPDK_STREAM_FRAGS; i++) {
			f = &st->frags[i];
			if (f->left_bytes != 0 && f->msg_id == note->msg_id) {
				f->left_bytes = note->bytes >= f->left_bytes ?
							0 :
							f->left_bytes -
								note->bytes;
				return;
			}
		}
		return;
	case UCT_SCTP_DPDK_STREAM_NOTE_TAG:
		map->mapped_msgs++;
		return;
	case UCT_SCTP_DPDK_STREAM_NOTE_FIRST:
		map->mapped_msgs++;
		if (note->bytes == 0)
			return;
		for (i = 0; i < UCT_SCTP_DPDK_STREAM_FRAGS; i++) {
			f = &st->frags[i];
			if (f->left_bytes != 0 && f->msg_id == note->msg_id) {
				slot = i; /* the same first sent again */
				break;
			}
			if (f->left_bytes == 0 && slot < 0)
				slot = i;
		}
		if (slot < 0) {
			slot = (int)(st->next_victim++ %
				     UCT_SCTP_DPDK_STREAM_FRAGS);
		}
		st->frags[slot].msg_id = note->msg_id;
		st->frags[slot].left_bytes = note->bytes;
		st->frags[slot].stream = note->stream;
		return;
	default:
		return;
	}
}

void uct_sctp_dpdk_stream_rts_note(uct_sctp_dpdk_stream_map_t *map,
				   const void *lane, uint32_t assoc,
				   uint16_t stream, uint8_t am_id,
				   const void *ucp, size_t len)
{
	const uint8_t *h = ucp;
	uct_sctp_dpdk_stream_rts_t *e;
	uint64_t addr, size;

	if (map->mask == 0 || am_id != UCT_SCTP_DPDK_UCP_RNDV_RTS ||
	    len <= UCT_SCTP_DPDK_UCP_RTS_OPCODE_OFFSET ||
	    h[UCT_SCTP_DPDK_UCP_RTS_OPCODE_OFFSET] != 0 || stream == 0)
		return;
	addr = uct_sctp_dpdk_stream_u64(h + UCT_SCTP_DPDK_UCP_RTS_ADDRESS_OFFSET);
	size = uct_sctp_dpdk_stream_u64(h + UCT_SCTP_DPDK_UCP_RTS_SIZE_OFFSET);
	if (addr == 0 || size == 0 || addr + size < addr)
		return; /* no rkey (the data come by AM), or nonsense */
	e = &map->rts[map->rts_next++ % UCT_SCTP_DPDK_STREAM_RTS];
	e->lane = lane;
	e->assoc = assoc;
	e->stream = stream;
	e->addr = addr;
	e->end = addr + size;
	map->rts_noted++;
}

uint16_t uct_sctp_dpdk_stream_rts_find(uct_sctp_dpdk_stream_map_t *map,
				       const void *lane, uint32_t assoc,
				       uint64_t addr, uint64_t len)
{
	uct_sctp_dpdk_stream_rts_t *e;
	uint16_t stream;
	unsigned i;

	if (map->mask == 0)
		return 0;
	/* Newest first: a buffer sent again is noted again. */
	for (i = 1; i <= UCT_SCTP_DPDK_STREAM_RTS; i++) {
		e = &map->rts[(map->rts_next - i) % UCT_SCTP_DPDK_STREAM_RTS];
		if (e->stream == 0 || e->lane != lane || e->assoc != assoc ||
		    addr < e->addr || addr >= e->end || len > e->end - addr)
			continue;
		stream = e->stream;
		if (len == e->end - addr)
			e->stream = 0; /* the buffer's last GET */
		map->gets_mapped++;
		return stream;
	}
	map->gets_unmapped++;
	return 0;
}

/* `"name": {"<stream>": n, ...}<suffix>` of the non-zero entries of @v. */
static int uct_sctp_dpdk_stream_json_counts(char *buf, size_t len,
					    const char *name,
					    const uint64_t *v,
					    unsigned streams,
					    const char *suffix)
{
	size_t off;
	unsigned s;
	int n, first = 1;

	n = snprintf(buf, len, "\"%s\": {", name);
	if (n < 0 || (size_t)n >= len)
		return -1;
	off = (size_t)n;
	for (s = 0; v != NULL && s < streams; s++) {
		if (v[s] == 0)
			continue;
		n = snprintf(buf + off, len - off, "%s\"%u\": %" PRIu64,
			     first ? "" : ", ", s, v[s]);
		if (n < 0 || (size_t)n >= len - off)
			return -1;
		off += (size_t)n;
		first = 0;
	}
	n = snprintf(buf + off, len - off, "}%s", suffix);
	if (n < 0 || (size_t)n >= len - off)
		return -1;
	return (int)(off + (size_t)n);
}

void uct_sctp_dpdk_stream_stats_json(const uct_sctp_dpdk_stream_map_t *map,
				     char *buf, size_t len)
{
	size_t off;
	int n;

	n = snprintf(buf, len, "\"streams\": {\"mask\": \"0x%" PRIx64 "\", "
		     "\"mapped_msgs\": %" PRIu64 ", \"frag_misses\": %" PRIu64
		     ", ", map->mask, map->mapped_msgs, map->frag_misses);
	if (n < 0 || (size_t)n >= len)
		goto out;
	off = (size_t)n;
	n = uct_sctp_dpdk_stream_json_counts(buf + off, len - off, "tx_msgs",
					     map->tx_msgs, map->streams, "");
	if (n < 0)
		goto out;
	off += (size_t)n;
	n = snprintf(buf + off, len - off, ", \"rndv\": {\"rts_noted\": %"
		     PRIu64 ", \"gets_mapped\": %" PRIu64 ", "
		     "\"gets_unmapped\": %" PRIu64 ", ", map->rts_noted,
		     map->gets_mapped, map->gets_unmapped);
	if (n < 0 || (size_t)n >= len - off)
		goto out;
	off += (size_t)n;
	n = uct_sctp_dpdk_stream_json_counts(buf + off, len - off, "rep_msgs",
					     map->rep_msgs, map->streams, ", ");
	if (n < 0)
		goto out;
	off += (size_t)n;
	n = uct_sctp_dpdk_stream_json_counts(buf + off, len - off, "req_msgs",
					     map->req_msgs, map->streams,
					     "}}");
	if (n < 0)
		goto out;
	return;
out:
	snprintf(buf, len, "\"streams\": {\"truncated\": true}");
}
