/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sctp_dpdk_stream.h - which SCTP stream an AM of an ep goes out on
 * (UCX_SCTP_DPDK_STREAM_TAG_MASK), see sctp_dpdk_stream.c.  Pure logic on
 * the bytes of the AM: no UCX, DPDK or usrsctp calls, so it is unit tested
 * alone (tests/uct/test_uct_stream_map.c).
 */
#ifndef UCT_SCTP_DPDK_STREAM_H
#define UCT_SCTP_DPDK_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* UCP 1.13.1 AM ids the map reads (src/ucp/core/ucp_types.h, checked
 * against it by static asserts in sctp_dpdk_stream.c). */
enum {
	UCT_SCTP_DPDK_UCP_EAGER_ONLY = 2,
	UCT_SCTP_DPDK_UCP_EAGER_FIRST = 3,
	UCT_SCTP_DPDK_UCP_EAGER_MIDDLE = 4,
	UCT_SCTP_DPDK_UCP_EAGER_SYNC_ONLY = 6,
	UCT_SCTP_DPDK_UCP_EAGER_SYNC_FIRST = 7,
	UCT_SCTP_DPDK_UCP_RNDV_RTS = 9,
};

/* UCP header sizes and offsets (src/ucp/tag/eager.h, rndv/rndv.h). */
#define UCT_SCTP_DPDK_UCP_FIRST_HDR_BYTES 24	  /* tag, total_len, msg_id */
#define UCT_SCTP_DPDK_UCP_SYNC_FIRST_HDR_BYTES 40 /* + ep_id, req_id */
#define UCT_SCTP_DPDK_UCP_MIDDLE_HDR_BYTES 16	  /* msg_id, offset */
#define UCT_SCTP_DPDK_UCP_FIRST_MSG_ID_OFFSET 16
#define UCT_SCTP_DPDK_UCP_FIRST_TOTAL_OFFSET 8
#define UCT_SCTP_DPDK_UCP_RTS_ADDRESS_OFFSET 24	  /* sender's buffer */
#define UCT_SCTP_DPDK_UCP_RTS_SIZE_OFFSET 32	  /* its bytes */
#define UCT_SCTP_DPDK_UCP_RTS_OPCODE_OFFSET 40	  /* 0 = tag, 1 = UCP AM */
#define UCT_SCTP_DPDK_UCP_PEEK_BYTES 41		  /* bytes the map reads */

/* Multi-fragment eager messages of one ep being sent: their middle
 * fragments follow the first's stream.  UCP sends the fragments of one
 * message back to back on an ep (a later send waits behind the ep's
 * pending queue), so one entry is in use at a time; a few allow for
 * several UCP lanes on one UCT ep. */
#define UCT_SCTP_DPDK_STREAM_FRAGS 4
#define UCT_SCTP_DPDK_STREAM_FIELDS_MAX 32

typedef struct uct_sctp_dpdk_stream_frag {
	uint64_t msg_id;	/* UCP's message id */
	uint64_t left_bytes;	/* payload still to send; 0 = entry free */
	uint16_t stream;	/* of the first fragment */
} uct_sctp_dpdk_stream_frag_t;

/* Per ep, its own thread only. */
typedef struct uct_sctp_dpdk_stream_ep {
	uct_sctp_dpdk_stream_frag_t frags[UCT_SCTP_DPDK_STREAM_FRAGS];
	unsigned next_victim;	/* round-robin when every entry is busy */
} uct_sctp_dpdk_stream_ep_t;

/* Rendezvous on the RTS's stream: the tag RTS recently received, so a
 * GET of the sender's buffer asks for its replies on the RTS's stream
 * (uct_sctp_dpdk_stream_rts_note/_find).  A ring; the newest entry that
 * holds a GET's range wins. */
#define UCT_SCTP_DPDK_STREAM_RTS 256

typedef struct uct_sctp_dpdk_stream_rts {
	const void *lane;	/* receiving endpoint (sg_ep), opaque */
	uint32_t assoc;		/* sender's association on it */
	uint16_t stream;	/* the RTS came on; 0 = entry free */
	uint64_t addr;		/* sender's buffer */
	uint64_t end;		/* addr + size */
} uct_sctp_dpdk_stream_rts_t;

/* Validated mapping (process-wide, read-only after init) and its
 * counters and RTS ring (under the context lock, beside sg_send). */
typedef struct uct_sctp_dpdk_stream_map {
	uint64_t mask;		/* UCP tag bits that pick the stream; 0 = off */
	unsigned nfields;	/* contiguous runs of set bits in mask */
	uint8_t field_shift[UCT_SCTP_DPDK_STREAM_FIELDS_MAX];
	uint64_t field_bits[UCT_SCTP_DPDK_STREAM_FIELDS_MAX]; /* after shift */
	uint16_t streams;	/* SCTP streams; 1..streams-1 are usable */
	uint64_t *tx_msgs;	/* [streams]: AMs sent per stream (not RMA) */
	uint64_t mapped_msgs;	/* tag AMs sent on their key's stream */
	uint64_t frag_misses;	/* middles whose first was not tracked */
	uct_sctp_dpdk_stream_rts_t rts[UCT_SCTP_DPDK_STREAM_RTS];
	unsigned rts_next;	/* next ring entry to write */
	uint64_t rts_noted;	/* tag RTS received and noted */
	uint64_t gets_mapped;	/* GETs whose replies go on an RTS's stream */
	uint64_t gets_unmapped;	/* GETs that found no RTS: the ep's stream */
	uint64_t *rep_msgs;	/* [streams]: GET reply messages sent */
	uint64_t *req_msgs;	/* [streams]: GET requests received */
} uct_sctp_dpdk_stream_map_t;

/* What a pick learnt, applied by commit once the message was accepted
 * (a send refused with NO_RESOURCE is retried by UCP). */
typedef struct uct_sctp_dpdk_stream_note {
	int kind;		/* UCT_SCTP_DPDK_STREAM_NOTE_* */
	uint64_t msg_id;
	uint64_t bytes;		/* first: payload still to come; middle: sent */
	uint16_t stream;
} uct_sctp_dpdk_stream_note_t;

enum {
	UCT_SCTP_DPDK_STREAM_NOTE_NONE = 0,	/* ep's own stream */
	UCT_SCTP_DPDK_STREAM_NOTE_TAG,		/* single tag message */
	UCT_SCTP_DPDK_STREAM_NOTE_FIRST,	/* first of several */
	UCT_SCTP_DPDK_STREAM_NOTE_MIDDLE,	/* found its first */
	UCT_SCTP_DPDK_STREAM_NOTE_MISS,		/* middle, first unknown */
};

/* Named masks: the UCP tag layouts of the MPI libraries (README.md). */
#define UCT_SCTP_DPDK_STREAM_MASK_OMPI_COMM 0x000000000000ffffull
#define UCT_SCTP_DPDK_STREAM_MASK_OMPI_TAG 0xffffff000000ffffull
#define UCT_SCTP_DPDK_STREAM_MASK_MPICH_COMM 0x7ff0000000000000ull
#define UCT_SCTP_DPDK_STREAM_MASK_MPICH_TAG 0x7ff00000ffffffffull

/**
 * Parse UCX_SCTP_DPDK_STREAM_TAG_MASK: a number (0x... hex, decimal) or
 * one of off, ompi-comm, ompi-tag, mpich-comm, mpich-tag.
 * @return 0, or -EINVAL (nothing written to @mask_p).
 */
int uct_sctp_dpdk_stream_mask_parse(const char *text, uint64_t *mask_p);

/**
 * Set up @map for @mask and @streams (>= 2); allocates the counters.
 * @return 0, -EINVAL (streams < 2), -ENOMEM.
 */
int uct_sctp_dpdk_stream_map_init(uct_sctp_dpdk_stream_map_t *map,
				  uint64_t mask, unsigned streams);
void uct_sctp_dpdk_stream_map_cleanup(uct_sctp_dpdk_stream_map_t *map);

/** Stream 1..streams-1 of the tag bits @tag (map on). */
uint16_t uct_sctp_dpdk_stream_of_tag(const uct_sctp_dpdk_stream_map_t *map,
				     uint64_t tag);

/**
 * Stream of one AM of an ep whose own stream is @ep_stream: @iov holds
 * [@hdr_bytes of transport header][UCP AM header][payload].  Tag AMs
 * (eager only/first, sync only/first, tag RTS) get their key's stream,
 * middles their first's, everything else @ep_stream.  Reads only; call
 * uct_sctp_dpdk_stream_commit with @note once the message was sent.
 */
uint16_t uct_sctp_dpdk_stream_pick(const uct_sctp_dpdk_stream_map_t *map,
				   const uct_sctp_dpdk_stream_ep_t *st,
				   uint16_t ep_stream, uint8_t am_id,
				   const struct iovec *iov, int iovcnt,
				   size_t hdr_bytes,
				   uct_sctp_dpdk_stream_note_t *note);

/** Record a sent message: fragment tracking and the counters. */
void uct_sctp_dpdk_stream_commit(uct_sctp_dpdk_stream_map_t *map,
				 uct_sctp_dpdk_stream_ep_t *st,
				 const uct_sctp_dpdk_stream_note_t *note,
				 uint16_t stream);

/**
 * A message received on @stream of association @assoc of endpoint @lane:
 * if it is UCP's tag RTS (@am_id, @ucp = its UCP header, @len bytes) and
 * the map is on, note the sender's buffer and @stream.
 */
void uct_sctp_dpdk_stream_rts_note(uct_sctp_dpdk_stream_map_t *map,
				   const void *lane, uint32_t assoc,
				   uint16_t stream, uint8_t am_id,
				   const void *ucp, size_t len);

/**
 * The stream of the newest noted RTS from (@lane, @assoc) whose buffer
 * holds [@addr, @addr + @len), or 0 (none; the map off).  A GET that
 * reaches the end of the buffer frees the entry.  Counts gets_mapped or
 * gets_unmapped (map on).
 */
uint16_t uct_sctp_dpdk_stream_rts_find(uct_sctp_dpdk_stream_map_t *map,
				       const void *lane, uint32_t assoc,
				       uint64_t addr, uint64_t len);

/** `"streams": {"mask": "0x..", "mapped_msgs": n, "frag_misses": n,
 * "tx_msgs": {"<stream>": n, ...}, "rndv": {"rts_noted": n,
 * "gets_mapped": n, "gets_unmapped": n, "rep_msgs": {"<stream>": n},
 * "req_msgs": {"<stream>": n}}}`
 * (non-zero streams) into @buf. */
void uct_sctp_dpdk_stream_stats_json(const uct_sctp_dpdk_stream_map_t *map,
				     char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* UCT_SCTP_DPDK_STREAM_H */
