/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_chunk.h - the walk over the chunks of an SCTP packet: the one place
 * that knows where a chunk starts and when the list ends.  Inline (it runs
 * per packet on RX and TX); included by dp.h, reached through it only.
 *
 * An SCTP packet is the 12-byte common header and then chunks: a 4-byte
 * header (type, flags, length of header + value) and the value, padded to
 * a multiple of 4 bytes (RFC 9260 3.2).  The walk's bounds, the same for
 * every reader:
 *
 *   header    a chunk is visited only when its 4-byte header lies inside
 *             the packet (its first N bytes after dp_chunk_walk_need(w,
 *             N)).  Its value may run past the end (a truncated chunk):
 *             dp_chunk.avail says how many bytes of it are there, and a
 *             reader checks it before it reads further.
 *   length    a length below 4 cannot advance: that chunk is still
 *             visited (its header is there), then the walk ends and
 *             marks itself bad.  Each reader decides what a bad packet
 *             means to it (the pacer paces it, the drop hook does not
 *             count it, sg's looks find nothing more).
 *   padding   the next chunk starts at the length rounded up to 4.
 *   count     at most @max_chunks chunks (DP_CHUNK_ALL: no cap).
 *
 * Two ways to walk:
 *
 *   linear    dp_chunk_walk_init(&w, pkt, len, max); then
 *             DP_CHUNK_FOREACH(&w, &c) { ... c.type, c.p, c.avail ... }
 *   pieces    the packet is not contiguous (sg's chained TX: usrsctp's
 *             mbuf pieces): init with pkt NULL, and per chunk
 *             while (dp_chunk_walk_more(&w)) { read the 4 header bytes at
 *             w.off yourself; ...; dp_chunk_walk_step(&w, length); }
 *
 * No memory is read outside [pkt, pkt + len).
 */
#ifndef DP_CHUNK_H
#define DP_CHUNK_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DP_SCTP_COMMON_HDR_LEN 12 /* ports, verification tag, CRC32c */
#define DP_SCTP_CHUNK_HDR_LEN 4	  /* type, flags, length */
#define DP_SCTP_CHUNK_DATA 0
#define DP_SCTP_CHUNK_SACK 3
#define DP_SCTP_CHUNK_NR_SACK 16 /* RFC draft NR-SACK: cum. TSN ack at +4 too */
#define DP_SCTP_CHUNK_IDATA 64
#define DP_CHUNK_ALL UINT_MAX /* max_chunks: walk the whole packet */

/** A walk over one packet's chunks. */
struct dp_chunk_walk {
	const uint8_t *pkt; /* the packet (common header first), or NULL */
	size_t len;	    /* packet bytes (0 once bad: the walk ends) */
	size_t off;	    /* the next chunk's offset (bytes) */
	size_t need;	    /* bytes of a chunk that must be there (>= 4) */
	unsigned int left;  /* chunks the cap still allows */
	bool capped;	    /* max_chunks was not DP_CHUNK_ALL */
	bool bad;	    /* a length below 4 ended the walk */
};

/** One chunk, as dp_chunk_get hands it out. */
struct dp_chunk {
	const uint8_t *p; /* its header, inside the packet */
	size_t off;	  /* its offset in the packet (bytes) */
	size_t avail;	  /* bytes from p to the packet's end, >= 4 */
	uint8_t type;	  /* DP_SCTP_CHUNK_* */
};

/** @return the chunk's length field: header + value, no padding (bytes;
 * read when asked: a walk that stops at a chunk's type never loads it). */
static inline uint16_t dp_chunk_len(const struct dp_chunk *c)
{
	return (uint16_t)(c->p[2] << 8 | c->p[3]);
}

/**
 * Start a walk over the packet @pkt of @len bytes (NULL: the caller reads
 * the chunk headers, dp_chunk_walk_more/dp_chunk_walk_step).  Visits at
 * most @max_chunks chunks (DP_CHUNK_ALL: every chunk).
 */
static inline void dp_chunk_walk_init(struct dp_chunk_walk *w,
				      const void *pkt, size_t len,
				      unsigned int max_chunks)
{
	w->pkt = (const uint8_t *)pkt;
	w->len = len;
	w->off = DP_SCTP_COMMON_HDR_LEN;
	w->need = DP_SCTP_CHUNK_HDR_LEN;
	w->left = max_chunks;
	w->capped = max_chunks != DP_CHUNK_ALL;
	w->bad = false;
}

/**
 * After dp_chunk_walk_init: visit only chunks whose first @bytes (>= 4)
 * lie inside the packet, for a reader of the fields after the header (a
 * DATA chunk's TSN, a SACK's cumulative TSN ack: 8).  The walk ends at the
 * first chunk with fewer: the packet's last.
 */
static inline void dp_chunk_walk_need(struct dp_chunk_walk *w, size_t bytes)
{
	w->need = bytes;
}

/** @return true when a chunk header (w->need bytes of it) lies at w->off
 * and the cap allows one more chunk. */
static inline bool dp_chunk_walk_more(const struct dp_chunk_walk *w)
{
	return (!w->capped || w->left != 0) && w->off + w->need <= w->len;
}

/** Past the chunk at w->off, whose length field is @chunk_len: to the next
 * one (padding included), or the end of the walk (bad) below 4. */
static inline void dp_chunk_walk_step(struct dp_chunk_walk *w,
				      uint16_t chunk_len)
{
	if (chunk_len < DP_SCTP_CHUNK_HDR_LEN) {
		w->bad = true;
		w->len = 0; /* no further chunk; off stays at this one */
		return;
	}
	if (w->capped) /* a constant where inlined: no count without cap */
		w->left--;
	w->off += ((size_t)chunk_len + 3) & ~(size_t)3;
}

/**
 * The chunk at w->off of a linear walk into @c, without moving on
 * (dp_chunk_walk_step(w, dp_chunk_len(c)) does, as DP_CHUNK_FOREACH after
 * each turn).  @return false when there is none.
 */
static inline bool dp_chunk_get(const struct dp_chunk_walk *w,
				struct dp_chunk *c)
{
	if (!dp_chunk_walk_more(w))
		return false;
	c->p = w->pkt + w->off;
	c->off = w->off;
	c->avail = w->len - w->off;
	c->type = c->p[0];
	return true;
}

/*
 * Each chunk of the linear walk @w (a struct dp_chunk_walk *, initialised)
 * in @c (a struct dp_chunk *): the loop's body sees a chunk before the
 * walk steps past it, so a break or return leaves w->off at that chunk;
 * continue moves on.  After the loop w->off is where a next chunk would
 * start (>= len for a packet that ends with a whole chunk), or the offset
 * of the chunk whose length below 4 ended the walk (w->bad).
 */
#define DP_CHUNK_FOREACH(w, c) \
	for (; dp_chunk_get((w), (c)); \
	     dp_chunk_walk_step((w), dp_chunk_len(c)))

/** @return true for a DATA or I-DATA chunk (user data). */
static inline bool dp_chunk_is_data(const struct dp_chunk *c)
{
	return c->type == DP_SCTP_CHUNK_DATA || c->type == DP_SCTP_CHUNK_IDATA;
}

/** @return true for a SACK or NR-SACK chunk (both carry the cumulative
 * TSN ack at +4). */
static inline bool dp_chunk_is_sack(const struct dp_chunk *c)
{
	return c->type == DP_SCTP_CHUNK_SACK || c->type == DP_SCTP_CHUNK_NR_SACK;
}

/**
 * Walk @w on to the first DATA or I-DATA chunk, into @c.
 * @return false when there is none; w->bad then tells whether a length
 * below 4 ended the walk.
 */
static inline bool dp_chunk_find_data(struct dp_chunk_walk *w,
				      struct dp_chunk *c)
{
	DP_CHUNK_FOREACH(w, c)
		if (dp_chunk_is_data(c))
			return true;
	return false;
}

#ifdef __cplusplus
}
#endif

#endif /* DP_CHUNK_H */
