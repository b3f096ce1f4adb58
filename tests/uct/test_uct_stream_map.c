/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_uct_stream_map.c - the stream map of ucx-tl/sctp_dpdk_stream.c on
 * hand-built UCP 1.13.1 AMs (layouts from src/ucp/tag/eager.h and
 * rndv/rndv.h, which the map checks with static asserts when built):
 * which AMs move, that equal masked tags always share a stream, that the
 * MPI layouts spread consecutive communicators (and tags) over distinct
 * streams, that middle fragments follow their first, and the counters;
 * and the rendezvous notes: a GET of a buffer a tag RTS offered asks for
 * its replies on the RTS's stream (rts_note/rts_find).
 * Pure logic: no port, no UCX worker.  Prints "ok"/"FAIL" per check and
 * exits non-zero on any failure.
 */
#include "sctp_dpdk_stream.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                                      \
	do {                                                                  \
		if (!(cond)) {                                                \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);           \
			printf(__VA_ARGS__);                                  \
			printf("\n");                                         \
			failures++;                                           \
		}                                                             \
	} while (0)

#define HDR 8 /* the transport's own header in front of the UCP AM */
#define EP_STREAM 7

/* One message: [8-byte transport header][UCP header][payload bytes]. */
typedef struct {
	uint8_t buf[HDR + 64];
	size_t hlen;
	size_t payload;
	struct iovec iov[3];
	int iovcnt;
} msg_t;

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* iov[0] = headers, iov[1] = payload (zcopy's shape), or split the UCP
 * header over two entries when @split. */
static void msg_finish(msg_t *m, size_t hlen, size_t payload, int split)
{
	static uint8_t data[1 << 20];

	m->hlen = hlen;
	m->payload = payload;
	if (split) {
		m->iov[0].iov_base = m->buf;
		m->iov[0].iov_len = HDR + 3;
		m->iov[1].iov_base = m->buf + HDR + 3;
		m->iov[1].iov_len = hlen - 3;
		m->iov[2].iov_base = data;
		m->iov[2].iov_len = payload;
		m->iovcnt = 3;
	} else {
		m->iov[0].iov_base = m->buf;
		m->iov[0].iov_len = HDR + hlen;
		m->iov[1].iov_base = data;
		m->iov[1].iov_len = payload;
		m->iovcnt = 2;
	}
}

static void eager_only(msg_t *m, uint64_t tag, size_t payload)
{
	memset(m, 0, sizeof(*m));
	put64(m->buf + HDR, tag);
	msg_finish(m, 8, payload, 0);
}

static void eager_first(msg_t *m, uint64_t tag, uint64_t total,
			uint64_t msg_id, size_t payload, int sync)
{
	memset(m, 0, sizeof(*m));
	put64(m->buf + HDR, tag);
	put64(m->buf + HDR + 8, total);
	put64(m->buf + HDR + 16, msg_id);
	msg_finish(m, sync ? 40 : 24, payload, sync);
}

static void eager_middle(msg_t *m, uint64_t msg_id, uint64_t offset,
			 size_t payload)
{
	memset(m, 0, sizeof(*m));
	put64(m->buf + HDR, msg_id);
	put64(m->buf + HDR + 8, offset);
	msg_finish(m, 16, payload, 0);
}

static void rts(msg_t *m, uint64_t tag, uint8_t opcode)
{
	memset(m, 0, sizeof(*m));
	put64(m->buf + HDR, tag);
	m->buf[HDR + 40] = opcode;
	msg_finish(m, 41 + 20 /* packed rkey */, 0, 0);
}

/* pick + commit, as the ep send path does after a successful send. */
static uint16_t send_one(uct_sctp_dpdk_stream_map_t *map,
			 uct_sctp_dpdk_stream_ep_t *st, uint8_t am_id,
			 msg_t *m)
{
	uct_sctp_dpdk_stream_note_t note;
	uint16_t s;

	s = uct_sctp_dpdk_stream_pick(map, st, EP_STREAM, am_id, m->iov,
				      m->iovcnt, HDR, &note);
	uct_sctp_dpdk_stream_commit(map, st, &note, s);
	return s;
}

static unsigned distinct(const uint16_t *s, unsigned n)
{
	unsigned i, j, d = 0;

	for (i = 0; i < n; i++) {
		for (j = 0; j < i && s[j] != s[i]; j++)
			;
		d += (j == i);
	}
	return d;
}

static void test_parse(void)
{
	uint64_t m = 42;

	CHECK(uct_sctp_dpdk_stream_mask_parse("off", &m) == 0 && m == 0,
	      "off");
	CHECK(uct_sctp_dpdk_stream_mask_parse("ompi-comm", &m) == 0 &&
		      m == 0xffffull,
	      "ompi-comm");
	CHECK(uct_sctp_dpdk_stream_mask_parse("MPICH-TAG", &m) == 0 &&
		      m == 0x7ff00000ffffffffull,
	      "mpich-tag");
	CHECK(uct_sctp_dpdk_stream_mask_parse("0xff00", &m) == 0 &&
		      m == 0xff00,
	      "hex");
	CHECK(uct_sctp_dpdk_stream_mask_parse("255", &m) == 0 && m == 255,
	      "decimal");
	m = 42;
	CHECK(uct_sctp_dpdk_stream_mask_parse("0xzz", &m) == -EINVAL &&
		      m == 42,
	      "garbage refused");
	CHECK(uct_sctp_dpdk_stream_mask_parse("-1", &m) == -EINVAL, "neg");
	CHECK(uct_sctp_dpdk_stream_mask_parse("", &m) == -EINVAL, "empty");
	CHECK(uct_sctp_dpdk_stream_mask_parse("comm", &m) == -EINVAL,
	      "unknown name");
	printf("ok   parse\n");
}

/* Off: every AM on the ep's stream, nothing counted as mapped. */
static void test_off(void)
{
	uct_sctp_dpdk_stream_map_t map;
	uct_sctp_dpdk_stream_ep_t st;
	msg_t m;
	uint64_t c;

	memset(&st, 0, sizeof(st));
	CHECK(uct_sctp_dpdk_stream_map_init(&map, 0, 11) == 0, "init");
	for (c = 0; c < 10; c++) {
		eager_only(&m, c, 100);
		CHECK(send_one(&map, &st, 2, &m) == EP_STREAM, "off moved");
	}
	CHECK(map.mapped_msgs == 0 && map.tx_msgs[EP_STREAM] == 10,
	      "counters %lu %lu", (unsigned long)map.mapped_msgs,
	      (unsigned long)map.tx_msgs[EP_STREAM]);
	CHECK(uct_sctp_dpdk_stream_map_init(&map, 0xffff, 1) == -EINVAL,
	      "1 stream refused");
	uct_sctp_dpdk_stream_map_cleanup(&map);
	printf("ok   off\n");
}

/* Open MPI pml ucx (4.1: tag 24 | rank 20 | context 20; 4.0: 24|24|16):
 * ompi-comm spreads contexts 0..9 over 10 streams (STREAMS=11) whatever
 * the tag and rank; ompi-tag spreads tags 0..9 of one context. */
static void test_ompi(void)
{
	uct_sctp_dpdk_stream_map_t map;
	uint16_t s[10], t;
	uint64_t c, tag;

	CHECK(uct_sctp_dpdk_stream_map_init(
		      &map, UCT_SCTP_DPDK_STREAM_MASK_OMPI_COMM, 11) == 0,
	      "init");
	for (c = 0; c < 10; c++) {
		s[c] = uct_sctp_dpdk_stream_of_tag(&map, (3ull << 40) |
								 (1ull << 20) |
								 (c + 2));
		CHECK(s[c] >= 1 && s[c] <= 10, "stream %u out of range", s[c]);
		for (tag = 0; tag < 50; tag++) {
			t = uct_sctp_dpdk_stream_of_tag(
				&map, (tag << 40) | ((tag % 3) << 20) | (c + 2));
			CHECK(t == s[c], "context %lu tag %lu moved",
			      (unsigned long)c, (unsigned long)tag);
		}
	}
	CHECK(distinct(s, 10) == 10, "10 contexts on %u streams",
	      distinct(s, 10));
	uct_sctp_dpdk_stream_map_cleanup(&map);

	CHECK(uct_sctp_dpdk_stream_map_init(
		      &map, UCT_SCTP_DPDK_STREAM_MASK_OMPI_TAG, 11) == 0,
	      "init");
	for (tag = 0; tag < 10; tag++)
		s[tag] = uct_sctp_dpdk_stream_of_tag(&map, (tag << 40) |
							       (1ull << 20) | 0);
	CHECK(distinct(s, 10) == 10, "10 tags on %u streams", distinct(s, 10));
	uct_sctp_dpdk_stream_map_cleanup(&map);
	printf("ok   ompi layouts\n");
}

/* MPICH ch4:ucx: context 16 | rank 16 | tag 32; a context id is prefix
 * << 4 | local/subcomm/coll bits: mpich-comm keys on the prefix, so a
 * communicator's collective context shares its stream. */
static void test_mpich(void)
{
	uct_sctp_dpdk_stream_map_t map;
	uint16_t s[10];
	uint64_t p, cid, tag;

	CHECK(uct_sctp_dpdk_stream_map_init(
		      &map, UCT_SCTP_DPDK_STREAM_MASK_MPICH_COMM, 11) == 0,
	      "init");
	for (p = 0; p < 10; p++) {
		cid = (p + 1) << 4;
		s[p] = uct_sctp_dpdk_stream_of_tag(&map, cid << 48 |
								 5ull << 32 |
								 77);
		CHECK(uct_sctp_dpdk_stream_of_tag(&map, (cid | 1) << 48 | 99) ==
			      s[p],
		      "coll context of prefix %lu moved", (unsigned long)p);
	}
	CHECK(distinct(s, 10) == 10, "10 prefixes on %u streams",
	      distinct(s, 10));
	uct_sctp_dpdk_stream_map_cleanup(&map);

	CHECK(uct_sctp_dpdk_stream_map_init(
		      &map, UCT_SCTP_DPDK_STREAM_MASK_MPICH_TAG, 11) == 0,
	      "init");
	for (tag = 0; tag < 10; tag++)
		s[tag] = uct_sctp_dpdk_stream_of_tag(&map, (16ull << 48) |
								   (1ull << 32) |
								   tag);
	CHECK(distinct(s, 10) == 10, "10 tags on %u streams", distinct(s, 10));
	uct_sctp_dpdk_stream_map_cleanup(&map);
	printf("ok   mpich layouts\n");
}

/* Which UCP AMs move: tag-carrying ones; every other id, and a UCP AM
 * rendezvous (RTS opcode 1), keeps the ep's stream. */
static void test_which(void)
{
	static const uint8_t keep[] = {1, 8, 10, 11, 12, 14, 15, 16, 17, 18,
				       19, 22, 23, 24, 25, 26};
	uct_sctp_dpdk_stream_map_t map;
	uct_sctp_dpdk_stream_ep_t st;
	uint64_t tag = 5; /* context 5 */
	uint16_t want;
	msg_t m;
	size_t i;

	memset(&st, 0, sizeof(st));
	CHECK(uct_sctp_dpdk_stream_map_init(&map, 0xffff, 11) == 0, "init");
	want = uct_sctp_dpdk_stream_of_tag(&map, tag);
	CHECK(want != EP_STREAM, "test needs a different stream");
	eager_only(&m, tag, 100);
	CHECK(send_one(&map, &st, 2, &m) == want, "eager only");
	eager_only(&m, tag, 0);
	CHECK(send_one(&map, &st, 2, &m) == want, "eager only 0 B");
	eager_first(&m, tag, 100, 1, 100, 1); /* header split over iovs */
	m.iov[1].iov_len = 40 - 3;
	CHECK(send_one(&map, &st, 7, &m) == want, "sync first, split hdr");
	memset(&m, 0, sizeof(m));
	put64(m.buf + HDR, tag);
	msg_finish(&m, 24, 10, 0);
	CHECK(send_one(&map, &st, 6, &m) == want, "sync only");
	rts(&m, tag, 0);
	CHECK(send_one(&map, &st, 9, &m) == want, "tag rts");
	rts(&m, tag, 1);
	CHECK(send_one(&map, &st, 9, &m) == EP_STREAM, "am rts moved");
	for (i = 0; i < sizeof(keep); i++) {
		eager_only(&m, tag, 100);
		CHECK(send_one(&map, &st, keep[i], &m) == EP_STREAM,
		      "am id %u moved", keep[i]);
	}
	/* Too short to carry a tag: not guessed. */
	memset(&m, 0, sizeof(m));
	m.iov[0].iov_base = m.buf;
	m.iov[0].iov_len = HDR + 4;
	m.iovcnt = 1;
	CHECK(send_one(&map, &st, 2, &m) == EP_STREAM, "short hdr moved");
	uct_sctp_dpdk_stream_map_cleanup(&map);
	printf("ok   which AMs\n");
}

/* Middles follow their first until its bytes are sent; a middle whose
 * first is unknown keeps the ep's stream and is counted; a first refused
 * by the send (picked, never committed) leaves no trace. */
static void test_fragments(void)
{
	uct_sctp_dpdk_stream_map_t map;
	uct_sctp_dpdk_stream_ep_t st;
	uct_sctp_dpdk_stream_note_t note;
	uint16_t s1, s2, s;
	uint64_t off;
	msg_t m;
	int i;

	memset(&st, 0, sizeof(st));
	CHECK(uct_sctp_dpdk_stream_map_init(&map, 0xffff, 11) == 0, "init");
	s1 = uct_sctp_dpdk_stream_of_tag(&map, 3);
	s2 = uct_sctp_dpdk_stream_of_tag(&map, 4);
	CHECK(s1 != s2 && s1 != EP_STREAM && s2 != EP_STREAM, "streams");

	/* 300 KB in 64 KB segments: first + 4 middles. */
	eager_first(&m, 3, 300000, 0x111, 65000 - 24, 0);
	s = uct_sctp_dpdk_stream_pick(&map, &st, EP_STREAM, 3, m.iov,
				      m.iovcnt, HDR, &note);
	CHECK(s == s1, "first");
	/* refused by sg_send: nothing recorded, UCP sends it again */
	eager_middle(&m, 0x111, 0, 100);
	CHECK(uct_sctp_dpdk_stream_pick(&map, &st, EP_STREAM, 4, m.iov,
					m.iovcnt, HDR, &note) == EP_STREAM,
	      "middle before its first was sent");
	eager_first(&m, 3, 300000, 0x111, 65000 - 24, 0);
	CHECK(send_one(&map, &st, 3, &m) == s1, "first again");
	/* a second message (another lane) interleaves */
	eager_first(&m, 4, 100000, 0x222, 65000 - 24, 0);
	CHECK(send_one(&map, &st, 3, &m) == s2, "first 2");
	off = 65000 - 24;
	for (i = 0; i < 4; i++) {
		size_t n = 300000 - off < 65000 - 16 ? 300000 - off
						     : 65000 - 16;

		eager_middle(&m, 0x111, off, n);
		CHECK(send_one(&map, &st, 4, &m) == s1, "middle %d", i);
		off += n;
		if (i == 0) {
			eager_middle(&m, 0x222, 65000 - 24,
				     100000 - (65000 - 24));
			CHECK(send_one(&map, &st, 4, &m) == s2, "middle 2");
		}
	}
	CHECK(off == 300000, "sent %lu", (unsigned long)off);
	for (i = 0; i < UCT_SCTP_DPDK_STREAM_FRAGS; i++)
		CHECK(st.frags[i].left_bytes == 0, "entry %d still busy", i);
	/* its bytes are all sent: a stray middle now misses */
	eager_middle(&m, 0x111, 0, 10);
	CHECK(send_one(&map, &st, 4, &m) == EP_STREAM, "stale middle");
	CHECK(map.frag_misses == 1, "frag_misses %lu",
	      (unsigned long)map.frag_misses);
	/* more firsts in flight than entries: the oldest is evicted, the
	 * newest always tracked */
	for (i = 0; i < UCT_SCTP_DPDK_STREAM_FRAGS + 2; i++) {
		eager_first(&m, (uint64_t)i, 200000, 0x1000 + i, 1000, 0);
		send_one(&map, &st, 3, &m);
	}
	eager_middle(&m, 0x1000 + UCT_SCTP_DPDK_STREAM_FRAGS + 1, 1000, 10);
	CHECK(send_one(&map, &st, 4, &m) ==
		      uct_sctp_dpdk_stream_of_tag(
			      &map, UCT_SCTP_DPDK_STREAM_FRAGS + 1),
	      "newest first forgotten");
	uct_sctp_dpdk_stream_map_cleanup(&map);
	printf("ok   fragments\n");
}

static void test_stats(void)
{
	uct_sctp_dpdk_stream_map_t map;
	uct_sctp_dpdk_stream_ep_t st;
	char buf[512], want[64];
	msg_t m;

	memset(&st, 0, sizeof(st));
	CHECK(uct_sctp_dpdk_stream_map_init(&map, 0xffff, 11) == 0, "init");
	eager_only(&m, 3, 10);
	send_one(&map, &st, 2, &m);
	send_one(&map, &st, 2, &m);
	eager_only(&m, 3, 10);
	send_one(&map, &st, 1 /* wireup */, &m);
	uct_sctp_dpdk_stream_stats_json(&map, buf, sizeof(buf));
	snprintf(want, sizeof(want), "\"%u\": 2",
		 uct_sctp_dpdk_stream_of_tag(&map, 3));
	CHECK(strstr(buf, want) != NULL && strstr(buf, "\"7\": 1") != NULL &&
		      strstr(buf, "\"mapped_msgs\": 2") != NULL &&
		      strstr(buf, "\"mask\": \"0xffff\"") != NULL,
	      "stats %s", buf);
	uct_sctp_dpdk_stream_map_cleanup(&map);
	printf("ok   stats\n");
}

/* A tag RTS as received: UCP header at 0, buffer @addr of @size bytes. */
static void rts_at(msg_t *m, uint64_t tag, uint64_t addr, uint64_t size,
		   uint8_t opcode)
{
	rts(m, tag, opcode);
	put64(m->buf + HDR + 24, addr);
	put64(m->buf + HDR + 32, size);
}

static void test_rts(void)
{
	uct_sctp_dpdk_stream_map_t map, off;
	int lane_a, lane_b; /* two endpoints (their addresses) */
	char buf[1024], want[128];
	unsigned i;
	msg_t m;

	CHECK(uct_sctp_dpdk_stream_map_init(&map, 0xffff, 11) == 0, "init");
	CHECK(uct_sctp_dpdk_stream_map_init(&off, 0, 11) == 0, "init");
	/* 300 KB at 0x10000 from assoc 3 on stream 5 */
	rts_at(&m, 4, 0x10000, 300000, 0);
	uct_sctp_dpdk_stream_rts_note(&map, &lane_a, 3, 5, 9, m.buf + HDR,
				      m.hlen);
	uct_sctp_dpdk_stream_rts_note(&off, &lane_a, 3, 5, 9, m.buf + HDR,
				      m.hlen);
	CHECK(map.rts_noted == 1 && off.rts_noted == 0, "noted %lu / %lu",
	      (unsigned long)map.rts_noted, (unsigned long)off.rts_noted);
	CHECK(uct_sctp_dpdk_stream_rts_find(&off, &lane_a, 3, 0x10000,
					    300000) == 0, "map off: ep's");
	/* other association, other lane, outside, too long: not this RTS */
	CHECK(uct_sctp_dpdk_stream_rts_find(&map, &lane_a, 4, 0x10000, 10) ==
		      0, "other assoc");
	CHECK(uct_sctp_dpdk_stream_rts_find(&map, &lane_b, 3, 0x10000, 10) ==
		      0, "other lane");
	CHECK(uct_sctp_dpdk_stream_rts_find(&map, &lane_a, 3, 0xffff, 10) ==
		      0, "before");
	CHECK(uct_sctp_dpdk_stream_rts_find(&map, &lane_a, 3, 0x10000,
					    300001) == 0, "too long");
	CHECK(uct_sctp_dpdk_stream_rts_find(&map, &lane_a, 3,
					    0x10000 + 300000, 1) == 0,
	      "after");
	CHECK(map.gets_unmapped == 5, "unmapped %lu",
	      (unsigned long)map.gets_unmapped);
	/* UCP's GET in pieces (remote_address + offset): each on stream 5;
	 * the piece reaching the end frees the entry */
	CHECK(uct_sctp_dpdk_stream_rts_find(&map, &lane_a, 3, 0x10000,
					    100000) == 5, "first piece");
	CHECK(uct_sctp_dpdk_stream_rts_find(&map, &lane_a, 3,
					    0x10000 + 100000, 200000) == 5,
	      "last piece");
	CHECK(uct_sctp_dpdk_stream_rts_find(&map, &lane_a, 3, 0x10000,
					    100000) == 0, "freed");
	CHECK(map.gets_mapped == 2, "mapped %lu",
	      (unsigned long)map.gets_mapped);
	/* not noted: a UCP AM's RTS (opcode 1), an eager message, stream 0,
	 * no buffer (address 0: the data come by AM) */
	rts_at(&m, 4, 0x20000, 100, 1);
	uct_sctp_dpdk_stream_rts_note(&map, &lane_a, 3, 5, 9, m.buf + HDR,
				      m.hlen);
	rts_at(&m, 4, 0x20000, 100, 0);
	uct_sctp_dpdk_stream_rts_note(&map, &lane_a, 3, 5, 2, m.buf + HDR,
				      m.hlen);
	uct_sctp_dpdk_stream_rts_note(&map, &lane_a, 3, 0, 9, m.buf + HDR,
				      m.hlen);
	uct_sctp_dpdk_stream_rts_note(&map, &lane_a, 3, 5, 9, m.buf + HDR,
				      40);
	rts_at(&m, 4, 0, 100, 0);
	uct_sctp_dpdk_stream_rts_note(&map, &lane_a, 3, 5, 9, m.buf + HDR,
				      m.hlen);
	CHECK(map.rts_noted == 1, "noted %lu", (unsigned long)map.rts_noted);
	/* the same buffer offered again on another stream: the newest wins;
	 * the ring keeps the last UCT_SCTP_DPDK_STREAM_RTS */
	rts_at(&m, 4, 0x30000, 4096, 0);
	uct_sctp_dpdk_stream_rts_note(&map, &lane_a, 3, 2, 9, m.buf + HDR,
				      m.hlen);
	uct_sctp_dpdk_stream_rts_note(&map, &lane_a, 3, 8, 9, m.buf + HDR,
				      m.hlen);
	CHECK(uct_sctp_dpdk_stream_rts_find(&map, &lane_a, 3, 0x30000, 16) ==
		      8, "newest");
	for (i = 0; i < UCT_SCTP_DPDK_STREAM_RTS; i++) {
		rts_at(&m, 4, 0x100000 + 0x1000 * i, 4096, 0);
		uct_sctp_dpdk_stream_rts_note(&map, &lane_a, 3, 1 + i % 10, 9,
					      m.buf + HDR, m.hlen);
	}
	CHECK(uct_sctp_dpdk_stream_rts_find(&map, &lane_a, 3, 0x30000, 16) ==
		      0, "overwritten");
	CHECK(uct_sctp_dpdk_stream_rts_find(&map, &lane_a, 3,
					    0x100000 + 0x1000 * 13, 4096) ==
		      4, "ring entry 13");
	/* replies sent and requests received counted per stream in the
	 * STATS line */
	map.rep_msgs[5] = 34;
	map.req_msgs[5] = 7;
	uct_sctp_dpdk_stream_stats_json(&map, buf, sizeof(buf));
	snprintf(want, sizeof(want), "\"rndv\": {\"rts_noted\": %u, "
		 "\"gets_mapped\": 4, \"gets_unmapped\": 7, \"rep_msgs\": "
		 "{\"5\": 34}, \"req_msgs\": {\"5\": 7}}",
		 3 + UCT_SCTP_DPDK_STREAM_RTS);
	CHECK(strstr(buf, want) != NULL, "stats %s", buf);
	uct_sctp_dpdk_stream_map_cleanup(&map);
	uct_sctp_dpdk_stream_map_cleanup(&off);
	printf("ok   rts\n");
}

int main(void)
{
	test_parse();
	test_off();
	test_ompi();
	test_mpich();
	test_which();
	test_fragments();
	test_stats();
	test_rts();
	printf("%s\n", failures ? "FAILED" : "all passed");
	return failures != 0;
}
