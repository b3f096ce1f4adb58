/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_dp.cc - unit tests of the dataplane: framing and the malformed-frame
 * table, ARP cache, CRC32c back-ends, configuration validation, and (with a
 * real EAL on a net_ring loopback port, no NIC or hugepages) the zero-copy
 * ring hand-off and mempool accounting.
 */
#include <gtest/gtest.h>

#include <atomic>
#include <cinttypes>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include <rte_version.h>
#include <rte_alarm.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_mempool.h>

#include "dp_internal.h"

/* The bsize= dp_config adds to memif devargs that give none (dp_config.c):
 * DPDK 22.11, only where a frame does not fit the default 2048 bytes, in
 * 2 KiB steps; from 23.11, always, a frame in 64-byte steps kept below the
 * mbufs' data room (else the one-segment-per-slot TX path is taken). */
#if RTE_VERSION >= RTE_VERSION_NUM(23, 11, 0, 0)
#define MEMIF_BSIZE_1500 ",bsize=1536"
#define MEMIF_BSIZE_9000 ",bsize=9024"
#define MEMIF_BSIZE_64000 ",bsize=64064"
#define MEMIF_SEG_PER_SLOT_TX true
#else
#define MEMIF_BSIZE_1500 ""
#define MEMIF_BSIZE_9000 ",bsize=10240"
#define MEMIF_BSIZE_64000 ",bsize=65535"
#define MEMIF_SEG_PER_SLOT_TX false
#endif


namespace {

const rte_ether_addr kOurMac = { { 0x02, 0, 0, 0, 0, 0x01 } };
const rte_ether_addr kPeerMac = { { 0x02, 0, 0, 0, 0, 0x02 } };

uint32_t ipv4(const char *s)
{
	uint32_t v = 0;

	EXPECT_EQ(0, dp_parse_ip(s, &v));
	return v;
}

/* A valid Ethernet/IPv4/SCTP (or UDP-encapsulated) frame. */
std::vector<uint8_t> make_frame(uint8_t proto, uint16_t l4_len,
				uint16_t udp_port = 0)
{
	uint16_t hlen = dp_frame_hdr_len(udp_port != 0);
	std::vector<uint8_t> f(hlen + l4_len, 0xab);

	dp_frame_build(f.data(), &kPeerMac, &kOurMac, ipv4("10.0.0.2"),
		       ipv4("10.0.0.1"), proto, udp_port, l4_len, 7, false);
	return f;
}

void fix_ip_cksum(std::vector<uint8_t> &f)
{
	auto *h = reinterpret_cast<rte_ipv4_hdr *>(f.data() + 14);

	h->hdr_checksum = 0;
	h->hdr_checksum = rte_ipv4_cksum(h);
}

dp_frame_ctx ctx(uint16_t udp_port = 0)
{
	dp_frame_ctx c{};

	c.mac = kOurMac;
	c.ip_be = ipv4("10.0.0.1");
	c.udp_port = udp_port;
	return c;
}

} // namespace

/* ---- the SCTP chunk walk (dp_chunk.h) ---- */

/* An SCTP packet: the common header, then each chunk (type, length field,
 * value bytes) padded to 4 unless @pad is false for the last one. */
struct chunk_spec {
	uint8_t type;
	uint16_t len_field;
	size_t value_bytes;
};
static std::vector<uint8_t> sctp_pkt(const std::vector<chunk_spec> &chunks,
				     bool pad_last = true)
{
	std::vector<uint8_t> p(12, 0xab);

	for (size_t i = 0; i < chunks.size(); i++) {
		const chunk_spec &c = chunks[i];

		p.push_back(c.type);
		p.push_back(0);
		p.push_back((uint8_t)(c.len_field >> 8));
		p.push_back((uint8_t)c.len_field);
		p.insert(p.end(), c.value_bytes, (uint8_t)i);
		while ((pad_last || i + 1 < chunks.size()) && p.size() % 4)
			p.push_back(0);
	}
	return p;
}

struct walked {
	uint8_t type;
	uint16_t len;
	size_t off, avail;
};
static std::vector<walked> walk_all(const std::vector<uint8_t> &p, size_t len,
				    unsigned int max, bool *bad_p = nullptr,
				    size_t *end_p = nullptr)
{
	std::vector<walked> v;
	struct dp_chunk_walk w;
	struct dp_chunk c;

	dp_chunk_walk_init(&w, p.data(), len, max);
	DP_CHUNK_FOREACH(&w, &c) {
		EXPECT_EQ(p.data() + c.off, c.p);
		v.push_back({c.type, dp_chunk_len(&c), c.off, c.avail});
	}
	if (bad_p != nullptr)
		*bad_p = w.bad;
	if (end_p != nullptr)
		*end_p = w.off;
	return v;
}

/* Offsets step over the padding; the walk ends at the packet's end. */
TEST(DpChunk, WalksPaddedChunks)
{
	/* SACK (16), DATA with 5 payload bytes (21 -> 24), I-DATA (20) */
	auto p = sctp_pkt({{3, 16, 12}, {0, 21, 17}, {64, 20, 16}});
	bool bad;
	size_t end;
	auto v = walk_all(p, p.size(), DP_CHUNK_ALL, &bad, &end);

	ASSERT_EQ(3u, v.size());
	EXPECT_EQ(3, v[0].type);
	EXPECT_EQ(12u, v[0].off);
	EXPECT_EQ(16, v[0].len);
	EXPECT_EQ(p.size() - 12, v[0].avail);
	EXPECT_EQ(0, v[1].type);
	EXPECT_EQ(28u, v[1].off);
	EXPECT_EQ(21, v[1].len);
	EXPECT_EQ(64, v[2].type);
	EXPECT_EQ(52u, v[2].off);
	EXPECT_FALSE(bad);
	EXPECT_EQ(p.size(), end);
	/* the last chunk unpadded: the walk ends past len, still not bad */
	auto q = sctp_pkt({{3, 16, 12}, {0, 21, 17}}, false);
	v = walk_all(q, q.size(), DP_CHUNK_ALL, &bad, &end);
	ASSERT_EQ(2u, v.size());
	EXPECT_EQ(q.size() + 3, end);
	EXPECT_FALSE(bad);
}

/* A chunk is visited when its 4-byte header is inside the packet, even if
 * its value runs past the end (avail says what is there); a header cut by
 * the end is not visited; nothing before the first chunk either. */
TEST(DpChunk, BoundsAtThePacketEnd)
{
	auto p = sctp_pkt({{3, 16, 12}, {0, 1000, 20}});
	auto v = walk_all(p, p.size(), DP_CHUNK_ALL);

	ASSERT_EQ(2u, v.size());
	EXPECT_EQ(1000, v[1].len);
	EXPECT_EQ(24u, v[1].avail);
	v = walk_all(p, 28 + 4, DP_CHUNK_ALL); /* just the DATA header */
	ASSERT_EQ(2u, v.size());
	EXPECT_EQ(4u, v[1].avail);
	v = walk_all(p, 28 + 3, DP_CHUNK_ALL); /* its header cut */
	EXPECT_EQ(1u, v.size());
	EXPECT_EQ(0u, walk_all(p, 15, DP_CHUNK_ALL).size());
	EXPECT_EQ(0u, walk_all(p, 12, DP_CHUNK_ALL).size());
	EXPECT_EQ(0u, walk_all(p, 0, DP_CHUNK_ALL).size());
	/* a reader of the 4 bytes after the header asks for 8 of them */
	for (size_t len : {28 + 7, 28 + 8}) {
		struct dp_chunk_walk w;
		struct dp_chunk c;
		size_t n = 0;

		dp_chunk_walk_init(&w, p.data(), len, DP_CHUNK_ALL);
		dp_chunk_walk_need(&w, 8);
		DP_CHUNK_FOREACH(&w, &c)
			n++;
		EXPECT_EQ(len == 28 + 8 ? 2u : 1u, n) << len;
	}
}

/* A length below 4 cannot advance: that chunk is visited, then the walk
 * ends, bad. */
TEST(DpChunk, LengthBelowFourEndsTheWalk)
{
	for (uint16_t l = 0; l < 4; l++) {
		auto p = sctp_pkt({{3, 16, 12}, {6, l, 0}, {0, 16, 12}});
		bool bad;
		auto v = walk_all(p, p.size(), DP_CHUNK_ALL, &bad);

		ASSERT_EQ(2u, v.size()) << l;
		EXPECT_EQ(6, v[1].type);
		EXPECT_EQ(l, v[1].len);
		EXPECT_TRUE(bad);
		struct dp_chunk_walk w;
		struct dp_chunk c;

		dp_chunk_walk_init(&w, p.data(), p.size(), DP_CHUNK_ALL);
		EXPECT_FALSE(dp_chunk_find_data(&w, &c)) << l;
		EXPECT_TRUE(w.bad);
	}
}

/* max_chunks caps the walk; DP_CHUNK_ALL does not. */
TEST(DpChunk, CapOnChunks)
{
	std::vector<chunk_spec> many(100, chunk_spec{4, 4, 0});
	struct dp_chunk_walk w;
	struct dp_chunk c;

	many.push_back({0, 16, 12});
	auto p = sctp_pkt(many);
	EXPECT_EQ(64u, walk_all(p, p.size(), 64).size());
	EXPECT_EQ(101u, walk_all(p, p.size(), DP_CHUNK_ALL).size());
	dp_chunk_walk_init(&w, p.data(), p.size(), 64);
	EXPECT_FALSE(dp_chunk_find_data(&w, &c));
	EXPECT_FALSE(w.bad);
	dp_chunk_walk_init(&w, p.data(), p.size(), DP_CHUNK_ALL);
	ASSERT_TRUE(dp_chunk_find_data(&w, &c));
	EXPECT_EQ(12u + 400, c.off);
}

/* The walk without a buffer (the caller reads each header, as sg does over
 * usrsctp's pieces) visits the same offsets as the linear one, on random
 * and malformed packets. */
TEST(DpChunk, PiecesWalkMatchesLinear)
{
	std::mt19937 rng(7);

	for (int i = 0; i < 20000; i++) {
		std::vector<uint8_t> p(rng() % 200);
		struct dp_chunk_walk w;
		std::vector<size_t> offs;
		bool bad;

		for (auto &b : p)
			b = (uint8_t)(rng() % 4 == 0 ? rng() % 24 : rng());
		unsigned int max = rng() % 2 ? 64 : DP_CHUNK_ALL;
		auto v = walk_all(p, p.size(), max, &bad);
		dp_chunk_walk_init(&w, nullptr, p.size(), max);
		while (dp_chunk_walk_more(&w)) {
			offs.push_back(w.off);
			dp_chunk_walk_step(&w, (uint16_t)(p[w.off + 2] << 8 |
							  p[w.off + 3]));
		}
		ASSERT_EQ(v.size(), offs.size());
		for (size_t k = 0; k < v.size(); k++) {
			ASSERT_EQ(v[k].off, offs[k]);
			ASSERT_LE(v[k].off + 4, p.size());
			ASSERT_EQ(p.size() - v[k].off, v[k].avail);
		}
		ASSERT_EQ(bad, w.bad);
	}
}

TEST(DpFrame, ValidSctpIsDelivered)
{
	auto f = make_frame(DP_IPPROTO_SCTP, 64);
	dp_parsed p;
	dp_frame_ctx c = ctx();

	ASSERT_EQ(DP_V_DELIVER, dp_frame_classify(&c, f.data(), f.size(), &p));
	EXPECT_EQ(DP_IPPROTO_SCTP, p.proto);
	EXPECT_EQ(34, p.l4_off);
	EXPECT_EQ(64, p.l4_len);
	EXPECT_EQ(ipv4("10.0.0.2"), p.src_ip_be);
	EXPECT_FALSE(p.udp_encap);
}

TEST(DpFrame, UdpEncapsulatedSctpIsDelivered)
{
	auto f = make_frame(DP_IPPROTO_SCTP, 40, 9899);
	dp_parsed p;
	dp_frame_ctx c = ctx(9899);

	ASSERT_EQ(DP_V_DELIVER, dp_frame_classify(&c, f.data(), f.size(), &p));
	EXPECT_TRUE(p.udp_encap);
	EXPECT_EQ(DP_IPPROTO_SCTP, p.proto);
	EXPECT_EQ(42, p.l4_off);
	EXPECT_EQ(40, p.l4_len);
	EXPECT_EQ(9899, p.udp_sport);
}

TEST(DpFrame, EthernetPaddingIsTrimmedNotRejected)
{
	auto f = make_frame(DP_IPPROTO_EXP, 8);
	dp_parsed p;
	dp_frame_ctx c = ctx();

	f.resize(60, 0); /* minimum Ethernet frame */
	ASSERT_EQ(DP_V_DELIVER, dp_frame_classify(&c, f.data(), f.size(), &p));
	EXPECT_EQ(8, p.l4_len);
}

/* Every malformed or foreign frame is dropped under the right reason. */
struct Malformed {
	const char *name;
	enum dp_drop reason;
	void (*mutate)(std::vector<uint8_t> &f);
	uint16_t udp_port;
};

static const Malformed kMalformed[] = {
	{ "empty", DP_DROP_SHORT, [](std::vector<uint8_t> &f) { f.clear(); } },
	{ "13 bytes", DP_DROP_SHORT,
	  [](std::vector<uint8_t> &f) { f.resize(13); } },
	{ "eth only", DP_DROP_SHORT,
	  [](std::vector<uint8_t> &f) { f.resize(20); } },
	{ "ipv6", DP_DROP_ETHERTYPE,
	  [](std::vector<uint8_t> &f) { f[12] = 0x86; f[13] = 0xdd; } },
	{ "vlan", DP_DROP_ETHERTYPE,
	  [](std::vector<uint8_t> &f) { f[12] = 0x81; f[13] = 0x00; } },
	{ "pause gap frame", DP_DROP_GAP_FRAME,
	  [](std::vector<uint8_t> &f) { f[12] = 0x88; f[13] = 0x08; } },
	{ "other mac", DP_DROP_NOT_FOR_US,
	  [](std::vector<uint8_t> &f) { f[5] = 0x77; } },
	{ "ip version 6", DP_DROP_IP_HDR,
	  [](std::vector<uint8_t> &f) { f[14] = 0x65; fix_ip_cksum(f); } },
	{ "ihl 4", DP_DROP_IP_HDR,
	  [](std::vector<uint8_t> &f) { f[14] = 0x44; } },
	{ "ihl beyond frame", DP_DROP_IP_HDR,
	  [](std::vector<uint8_t> &f) { f[14] = 0x4f; f.resize(50); } },
	{ "total length > frame", DP_DROP_IP_LEN,
	  [](std::vector<uint8_t> &f) {
		  f[16] = 0x10; f[17] = 0x00; fix_ip_cksum(f);
	  } },
	{ "total length < ihl", DP_DROP_IP_LEN,
	  [](std::vector<uint8_t> &f) {
		  f[16] = 0; f[17] = 10; fix_ip_cksum(f);
	  } },
	{ "truncated", DP_DROP_IP_LEN,
	  [](std::vector<uint8_t> &f) { f.resize(f.size() - 1); } },
	{ "bad ip checksum", DP_DROP_IP_CKSUM,
	  [](std::vector<uint8_t> &f) { f[24] ^= 0x01; } },
	{ "more fragments", DP_DROP_IP_FRAG,
	  [](std::vector<uint8_t> &f) { f[20] = 0x20; fix_ip_cksum(f); } },
	{ "fragment offset", DP_DROP_IP_FRAG,
	  [](std::vector<uint8_t> &f) {
		  f[20] = 0; f[21] = 8; fix_ip_cksum(f);
	  } },
	{ "other ip", DP_DROP_NOT_FOR_US,
	  [](std::vector<uint8_t> &f) { f[33] = 9; fix_ip_cksum(f); } },
	{ "tcp", DP_DROP_PROTO,
	  [](std::vector<uint8_t> &f) { f[23] = 6; fix_ip_cksum(f); } },
	{ "udp without encapsulation", DP_DROP_PROTO,
	  [](std::vector<uint8_t> &f) { f[23] = 17; fix_ip_cksum(f); } },
	{ "sctp shorter than a chunk", DP_DROP_SCTP_LEN,
	  [](std::vector<uint8_t> &f) {
		  f.resize(34 + 15);
		  f[16] = 0; f[17] = 20 + 15; fix_ip_cksum(f);
	  } },
	{ "udp wrong port", DP_DROP_UDP,
	  [](std::vector<uint8_t> &f) { f[36] = 0; f[37] = 53; }, 9899 },
	{ "udp length > ip payload", DP_DROP_UDP,
	  [](std::vector<uint8_t> &f) { f[38] = 0x40; }, 9899 },
	{ "udp length < 8", DP_DROP_UDP,
	  [](std::vector<uint8_t> &f) { f[38] = 0; f[39] = 4; }, 9899 },
};

TEST(DpFrame, MalformedTable)
{
	for (const auto &t : kMalformed) {
		auto f = make_frame(DP_IPPROTO_SCTP, 64, t.udp_port);
		dp_frame_ctx c = ctx(t.udp_port);
		dp_parsed p;

		t.mutate(f);
		EXPECT_EQ(DP_V_DROP,
			  dp_frame_classify(&c, f.data(), f.size(), &p))
			<< t.name;
		EXPECT_EQ(t.reason, p.drop)
			<< t.name << ": got " << dp_drop_name(p.drop);
	}
}

TEST(DpFrame, ArpFramesGoToArp)
{
	uint8_t f[DP_ARP_FRAME_LEN];
	dp_parsed p;
	dp_frame_ctx c = ctx();

	dp_arp_build(f, 1, &kPeerMac, ipv4("10.0.0.2"), nullptr, ipv4("10.0.0.1"));
	EXPECT_EQ(DP_V_ARP, dp_frame_classify(&c, f, sizeof(f), &p));
}

TEST(DpFrame, RandomBytesNeverDeliverMalformed)
{
	std::mt19937 rng(42);
	dp_frame_ctx c = ctx(9899);

	for (int i = 0; i < 20000; i++) {
		auto f = make_frame(i % 2 ? DP_IPPROTO_SCTP : DP_IPPROTO_EXP,
				    (uint16_t)(16 + rng() % 200),
				    i % 3 == 0 ? 9899 : 0);
		dp_parsed p;

		/* flip 1-3 random bytes in the headers */
		for (unsigned int k = 0; k <= rng() % 3; k++)
			f[rng() % 42] ^= (uint8_t)(1 + rng() % 255);
		if (dp_frame_classify(&c, f.data(), f.size(), &p) !=
		    DP_V_DELIVER)
			continue;
		/* whatever got through is internally consistent */
		ASSERT_LE(p.l4_off + p.l4_len, f.size());
		ASSERT_EQ(c.ip_be, p.dst_ip_be);
		ASSERT_TRUE(p.proto == DP_IPPROTO_SCTP ||
			    p.proto == DP_IPPROTO_EXP);
	}
}

/* ---- ARP cache ---- */

TEST(DpArp, ResolveRetryFailAndExpire)
{
	dp_arp_table t;
	rte_ether_addr mac;
	uint32_t a = ipv4("10.0.0.5");
	std::vector<std::pair<uint32_t, int>> ev;
	auto cb = [](void *arg, uint32_t ip_be, dp_arp_event e) {
		static_cast<std::vector<std::pair<uint32_t, int>> *>(arg)
			->emplace_back(ip_be, e);
	};

	dp_arp_table_init(&t, /*ttl*/ 1000, /*retry*/ 100, /*tries*/ 3);
	EXPECT_EQ(-ENOENT, dp_arp_lookup(&t, a, 0, &mac));
	EXPECT_EQ(-EAGAIN, dp_arp_lookup(&t, a, 50, &mac));
	EXPECT_EQ(0u, dp_arp_tick(&t, 99, cb, &ev));
	EXPECT_EQ(1u, dp_arp_tick(&t, 100, cb, &ev)); /* 2nd request */
	EXPECT_EQ(1u, dp_arp_tick(&t, 200, cb, &ev)); /* 3rd request */
	EXPECT_EQ(1u, dp_arp_tick(&t, 300, cb, &ev)); /* give up */
	ASSERT_EQ(3u, ev.size());
	EXPECT_EQ(DP_ARP_EV_RETRY, ev[0].second);
	EXPECT_EQ(DP_ARP_EV_RETRY, ev[1].second);
	EXPECT_EQ(DP_ARP_EV_FAILED, ev[2].second);
	/* a later lookup starts over */
	EXPECT_EQ(-ENOENT, dp_arp_lookup(&t, a, 400, &mac));
	/* the reply arrives */
	EXPECT_TRUE(dp_arp_learn(&t, a, &kPeerMac, 450));
	ASSERT_EQ(0, dp_arp_lookup(&t, a, 451, &mac));
	EXPECT_TRUE(rte_is_same_ether_addr(&mac, &kPeerMac));
	/* valid until ttl, then re-resolved */
	EXPECT_EQ(0, dp_arp_lookup(&t, a, 450 + 999, &mac));
	EXPECT_EQ(-ENOENT, dp_arp_lookup(&t, a, 450 + 1000, &mac));
}

/*
 * dp_arp_tick skips its scan of every slot while no request can be
 * waiting (issue 9: the scan was ~3% of a bulk sender's instructions in
 * callgrind): a request made after an empty scan, or from inside a
 * tick's own callback, is still retried and given up on time.
 */
TEST(DpArp, TickSkipsItsScanOnlyWhileNoRequestWaits)
{
	static dp_arp_table t;
	static rte_ether_addr mac;
	static uint32_t a = ipv4("10.0.0.5"), b = ipv4("10.0.0.6");
	std::vector<std::pair<uint32_t, int>> ev;
	auto cb = [](void *arg, uint32_t ip_be, dp_arp_event e) {
		static_cast<std::vector<std::pair<uint32_t, int>> *>(arg)
			->emplace_back(ip_be, e);
		/* the give-up of a: b is asked for from the callback */
		if (e == DP_ARP_EV_FAILED && ip_be == a)
			dp_arp_lookup(&t, b, 300, &mac);
	};

	dp_arp_table_init(&t, /*ttl*/ 1000, /*retry*/ 100, /*tries*/ 2);
	EXPECT_EQ(0u, dp_arp_tick(&t, 10, cb, &ev)); /* nothing asked */
	EXPECT_EQ(-ENOENT, dp_arp_lookup(&t, a, 100, &mac));
	EXPECT_EQ(1u, dp_arp_tick(&t, 200, cb, &ev)); /* 2nd request */
	EXPECT_EQ(1u, dp_arp_tick(&t, 300, cb, &ev)); /* a fails, b asked */
	EXPECT_EQ(0u, dp_arp_tick(&t, 399, cb, &ev));
	EXPECT_EQ(1u, dp_arp_tick(&t, 400, cb, &ev)); /* b's 2nd request */
	EXPECT_EQ(1u, dp_arp_tick(&t, 500, cb, &ev)); /* b fails */
	EXPECT_EQ(0u, dp_arp_tick(&t, 600, cb, &ev));
	ASSERT_EQ(4u, ev.size());
	EXPECT_EQ(std::make_pair(a, (int)DP_ARP_EV_RETRY), ev[0]);
	EXPECT_EQ(std::make_pair(a, (int)DP_ARP_EV_FAILED), ev[1]);
	EXPECT_EQ(std::make_pair(b, (int)DP_ARP_EV_RETRY), ev[2]);
	EXPECT_EQ(std::make_pair(b, (int)DP_ARP_EV_FAILED), ev[3]);
	/* a learnt entry leaves nothing to scan for; a new request does */
	dp_arp_learn(&t, a, &kPeerMac, 700);
	EXPECT_EQ(0u, dp_arp_tick(&t, 800, cb, &ev));
	EXPECT_EQ(-ENOENT, dp_arp_lookup(&t, b, 900, &mac));
	EXPECT_EQ(1u, dp_arp_tick(&t, 1000, cb, &ev));
}

TEST(DpArp, StaticEntriesNeverExpireOrChange)
{
	dp_arp_table t;
	rte_ether_addr mac;
	uint32_t a = ipv4("10.0.0.9");

	dp_arp_table_init(&t, 10, 10, 1);
	ASSERT_EQ(0, dp_arp_add_static(&t, a, &kPeerMac));
	EXPECT_FALSE(dp_arp_learn(&t, a, &kOurMac, 5));
	ASSERT_EQ(0, dp_arp_lookup(&t, a, UINT64_MAX / 2, &mac));
	EXPECT_TRUE(rte_is_same_ether_addr(&mac, &kPeerMac));
}

/* Only entries that hold packets (resolving) or were configured fill
 * the table for good: then a new neighbour is refused. */
TEST(DpArp, TableOfResolvingEntriesIsFull)
{
	static dp_arp_table t;
	rte_ether_addr mac;

	dp_arp_table_init(&t, 10, 10, 1);
	for (uint32_t i = 0; i < DP_ARP_MAX_ENTRIES; i++)
		ASSERT_EQ(-ENOENT, dp_arp_lookup(&t, htonl(0x0a000000 + i + 1),
						 0, &mac));
	EXPECT_EQ(-ENOSPC, dp_arp_lookup(&t, htonl(0x0b000001), 0, &mac));
	/* existing entries are still found with a full table */
	EXPECT_EQ(-EAGAIN, dp_arp_lookup(&t, htonl(0x0a000001), 0, &mac));
}

static rte_ether_addr mac_of(uint32_t i)
{
	rte_ether_addr m = { { 0x02, 0x10, (uint8_t)(i >> 24),
			       (uint8_t)(i >> 16), (uint8_t)(i >> 8),
			       (uint8_t)i } };
	return m;
}

/* A job of 4096 ranks on one /16: every peer resolved at once. */
TEST(DpArp, FourThousandPeersOnOneSubnet)
{
	static dp_arp_table t;
	rte_ether_addr mac;
	const uint32_t n = 4096;

	dp_arp_table_init(&t, 1000000, 10, 3);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t ip = htonl(0x0a010000 + i + 2);

		ASSERT_EQ(-ENOENT, dp_arp_lookup(&t, ip, i, &mac)) << i;
		ASSERT_TRUE(dp_arp_learn(&t, ip, &(mac = mac_of(i)), i)) << i;
	}
	for (uint32_t i = 0; i < n; i++) {
		ASSERT_EQ(0, dp_arp_lookup(&t, htonl(0x0a010000 + i + 2), n,
					   &mac)) << i;
		rte_ether_addr want = mac_of(i);
		ASSERT_TRUE(rte_is_same_ether_addr(&want, &mac)) << i;
	}
	EXPECT_EQ(0u, t.evictions);
	/* and as many static entries as the configuration allows */
	static dp_arp_table st;
	dp_arp_table_init(&st, 10, 10, 1);
	for (uint32_t i = 0; i < DP_MAX_STATIC_ARP; i++)
		ASSERT_EQ(0, dp_arp_add_static(&st, htonl(0x0a020000 + i),
					       &(mac = mac_of(i)))) << i;
	EXPECT_EQ(0, dp_arp_lookup(&st, htonl(0x0a020000 + 4000), 5, &mac));
}

/* A full table evicts the least recently used resolved neighbour instead
 * of refusing the next one; used entries and static ones stay. */
TEST(DpArp, FullTableEvictsLeastRecentlyUsed)
{
	static dp_arp_table t;
	rte_ether_addr mac;
	const uint32_t n = DP_ARP_MAX_ENTRIES;
	uint64_t now = 10;

	dp_arp_table_init(&t, 1000000000, 10, 3);
	ASSERT_EQ(0, dp_arp_add_static(&t, htonl(0x0a0000fe),
				       &(mac = mac_of(999999))));
	for (uint32_t i = 0; i + 1 < n; i++)
		ASSERT_TRUE(dp_arp_learn(&t, htonl(0x0a100000 + i),
					 &(mac = mac_of(i)), now++));
	ASSERT_EQ(n, t.nb_used);
	/* peer 0 is used again: peer 1 is now the least recently used */
	ASSERT_EQ(0, dp_arp_lookup(&t, htonl(0x0a100000), now++, &mac));
	EXPECT_EQ(-ENOENT, dp_arp_lookup(&t, htonl(0x0a200000), now++, &mac));
	EXPECT_EQ(1u, t.evictions);
	EXPECT_EQ(nullptr, dp_arp_find(&t, htonl(0x0a100001)));
	EXPECT_NE(nullptr, dp_arp_find(&t, htonl(0x0a100000)));
	EXPECT_NE(nullptr, dp_arp_find(&t, htonl(0x0a0000fe)));
	EXPECT_EQ(n, t.nb_used);
}

/* Random learns and lookups over three times the capacity against a model
 * of an LRU cache: whatever the model holds, the table finds with the right
 * MAC (eviction keeps every probe run intact). */
TEST(DpArp, RandomChurnMatchesAnLruModel)
{
	static dp_arp_table t;
	std::mt19937 rng(11);
	const uint32_t universe = DP_ARP_MAX_ENTRIES * 3;
	std::vector<uint64_t> used(universe, 0); /* 0 = absent in model */
	uint64_t now = 1;
	uint32_t present = 0;
	rte_ether_addr mac;

	dp_arp_table_init(&t, UINT64_MAX / 4, 10, 3);
	for (int step = 0; step < 60000; step++, now++) {
		uint32_t i = rng() % universe, ip = htonl(0x0a400000 + i);

		if (used[i] != 0) {
			ASSERT_EQ(0, dp_arp_lookup(&t, ip, now, &mac)) << step;
			rte_ether_addr want = mac_of(i);
			ASSERT_TRUE(rte_is_same_ether_addr(&want, &mac));
			used[i] = now;
			continue;
		}
		if (present == DP_ARP_MAX_ENTRIES) {
			/* the model evicts its least recently used */
			uint32_t v = 0;
			for (uint32_t k = 0; k < universe; k++)
				if (used[k] != 0 &&
				    (used[v] == 0 || used[k] < used[v]))
					v = k;
			used[v] = 0;
			present--;
		}
		ASSERT_TRUE(dp_arp_learn(&t, ip, &(mac = mac_of(i)), now));
		used[i] = now;
		present++;
		ASSERT_EQ(present, t.nb_used);
	}
	for (uint32_t i = 0; i < universe; i++)
		ASSERT_EQ(used[i] != 0,
			  dp_arp_find(&t, htonl(0x0a400000 + i)) != nullptr)
			<< i;
	EXPECT_GT(t.evictions, 0u);
}

TEST(DpArp, ParseRejectsMalformed)
{
	uint8_t f[DP_ARP_FRAME_LEN];
	rte_ether_addr sha;
	uint32_t sip, tip;
	uint16_t op;

	dp_arp_build(f, 2, &kPeerMac, ipv4("10.0.0.2"), &kOurMac,
		     ipv4("10.0.0.1"));
	ASSERT_EQ(0, dp_arp_parse(f, sizeof(f), &op, &sha, &sip, &tip));
	EXPECT_EQ(2, op);
	EXPECT_EQ(ipv4("10.0.0.2"), sip);
	EXPECT_EQ(-EINVAL, dp_arp_parse(f, sizeof(f) - 1, &op, &sha, &sip,
					&tip));
	f[21] = 9; /* opcode 9 */
	EXPECT_EQ(-EINVAL, dp_arp_parse(f, sizeof(f), &op, &sha, &sip, &tip));
	f[21] = 2;
	f[22] = 0x01; /* multicast sender MAC */
	EXPECT_EQ(-EINVAL, dp_arp_parse(f, sizeof(f), &op, &sha, &sip, &tip));
}

/* ---- CRC32c ---- */

TEST(DpCrc, CheckValueEveryBackend)
{
	const char *s = "123456789";

	for (auto be : { DP_CRC_ISAL, DP_CRC_SSE42, DP_CRC_TABLE })
		EXPECT_EQ(0xE3069283u, dp_crc32c(be, s, 9)) << dp_crc_name(be);
}

TEST(DpCrc, BackendsAgreeOnEveryLength0To9000)
{
	std::mt19937 rng(7);
	std::vector<uint8_t> buf(9001);

	for (auto &b : buf)
		b = (uint8_t)rng();
	for (size_t len = 0; len <= 9000; len++) {
		const uint8_t *p = buf.data() + (len & 1); /* misaligned too */
		uint32_t ref = dp_crc32c(DP_CRC_TABLE, p, len);

		ASSERT_EQ(ref, dp_crc32c(DP_CRC_ISAL, p, len)) << len;
		ASSERT_EQ(ref, dp_crc32c(DP_CRC_SSE42, p, len)) << len;
	}
}

TEST(DpCrc, SctpFillAndVerify)
{
	std::vector<uint8_t> pkt(100);

	for (size_t i = 0; i < pkt.size(); i++)
		pkt[i] = (uint8_t)(i * 3);
	for (auto be : { DP_CRC_ISAL, DP_CRC_SSE42, DP_CRC_TABLE }) {
		dp_sctp_crc_fill(be, pkt.data(), pkt.size());
		for (auto be2 : { DP_CRC_ISAL, DP_CRC_SSE42, DP_CRC_TABLE })
			EXPECT_TRUE(dp_sctp_crc_ok(be2, pkt.data(), pkt.size()));
		pkt[50] ^= 0x10;
		EXPECT_FALSE(dp_sctp_crc_ok(be, pkt.data(), pkt.size()));
		pkt[50] ^= 0x10;
	}
	/* stored little-endian: field bytes = CRC of the zeroed packet */
	std::vector<uint8_t> z = pkt;
	z[8] = z[9] = z[10] = z[11] = 0;
	uint32_t c = dp_crc32c(DP_CRC_TABLE, z.data(), z.size());
	EXPECT_EQ((uint8_t)c, pkt[8]);
	EXPECT_EQ((uint8_t)(c >> 24), pkt[11]);
}

TEST(DpCrc, ParseNames)
{
	dp_crc_backend be;

	EXPECT_EQ(0, dp_crc_parse("sse42", &be));
	EXPECT_EQ(DP_CRC_SSE42, be);
	EXPECT_EQ(-EINVAL, dp_crc_parse("ipsec-mb", &be));
}

/* ---- configuration ---- */

TEST(DpConfig, DefaultsAndValidString)
{
	/* On the heap: struct dp_config is ~48 KB (static ARP table). */
	auto c_p = std::make_unique<dp_config>();
	dp_config &c = *c_p;

	ASSERT_EQ(0, dp_config_parse("dev=net_memif0,role=server,socket=/x "
				     "ip=10.1.2.3/16 mtu=9000 rate=500M "
				     "arp=10.1.0.9@02:00:00:00:00:09 crc=sse42",
				     &c));
	/* mtu=9000 on memif without bsize=: buffers that hold a frame */
	EXPECT_STREQ("net_memif0,role=server,socket=/x" MEMIF_BSIZE_9000,
		     c.devargs);
	EXPECT_FALSE(c.is_pci);
	EXPECT_EQ(ipv4("10.1.2.3"), c.ip_be);
	EXPECT_EQ(16, c.prefix_len);
	EXPECT_EQ(9000, c.mtu);
	EXPECT_EQ(500000000u, c.pace_rate_bps);
	EXPECT_EQ(1u, c.nb_static_arp);
	EXPECT_EQ(DP_CRC_SSE42, c.crc);
	EXPECT_EQ(512u, c.mem_mb);
	EXPECT_FALSE(c.own_mac);
	ASSERT_EQ(0, dp_config_parse("dev=0000:01:00.0 ip=10.0.0.1", &c));
	EXPECT_TRUE(c.is_pci);
	ASSERT_EQ(0, dp_config_parse("dev=net_af_packet0,iface=x ip=10.0.0.1 "
				     "own_mac=1", &c));
	EXPECT_TRUE(c.own_mac);
}


/* memif bsize=: chosen where the devargs did not choose (above); one the
 * devargs choose below a frame is refused; from DPDK 23.11 one at or above
 * the mbufs' data room turns chained TX off (dp_config.c). */
TEST(DpConfig, MemifBufferHoldsAFrame)
{
	auto c_p = std::make_unique<dp_config>();
	dp_config &c = *c_p;

	ASSERT_EQ(0, dp_config_parse("dev=net_memif0,role=client "
				     "ip=10.0.0.1/24 mtu=1500", &c));
	EXPECT_STREQ("net_memif0,role=client" MEMIF_BSIZE_1500, c.devargs);
	EXPECT_TRUE(dp_memif_chained_tx_ok(&c));
	ASSERT_EQ(0, dp_config_parse("dev=net_memif0,role=client "
				     "ip=10.0.0.1/24 mtu=9000", &c));
	EXPECT_STREQ("net_memif0,role=client" MEMIF_BSIZE_9000, c.devargs);
	EXPECT_TRUE(dp_memif_chained_tx_ok(&c));
	ASSERT_EQ(0, dp_config_parse("dev=net_memif0,role=client,bsize=16384 "
				     "ip=10.0.0.1/24 mtu=9000", &c));
	EXPECT_STREQ("net_memif0,role=client,bsize=16384", c.devargs);
	/* 16384 >= the 9216-byte data room at mtu=9000 */
	EXPECT_EQ(!MEMIF_SEG_PER_SLOT_TX, dp_memif_chained_tx_ok(&c));
	ASSERT_EQ(0, dp_config_parse("dev=net_memif0,role=client,bsize=9215 "
				     "ip=10.0.0.1/24 mtu=9000", &c));
	EXPECT_TRUE(dp_memif_chained_tx_ok(&c));
	ASSERT_EQ(0, dp_config_parse("dev=net_memif0,role=client,bsize=9216 "
				     "ip=10.0.0.1/24 mtu=9000", &c));
	EXPECT_EQ(!MEMIF_SEG_PER_SLOT_TX, dp_memif_chained_tx_ok(&c));
	/* below a frame: DPDK's memif corrupts chained frames */
	EXPECT_EQ(-EINVAL, dp_config_parse("dev=net_memif0,role=client,"
					   "bsize=4096 ip=10.0.0.1/24 "
					   "mtu=9000", &c));
	EXPECT_EQ(-EINVAL, dp_config_parse("dev=net_memif0,bsize=2048,id=0 "
					   "ip=10.0.0.1/24 mtu=2100", &c));
	ASSERT_EQ(0, dp_config_parse("dev=net_memif0,bsize=2048 "
				     "ip=10.0.0.1/24 mtu=1500", &c));
	EXPECT_STREQ("net_memif0,bsize=2048", c.devargs);
	ASSERT_EQ(0, dp_config_parse("dev=net_memif0 ip=10.0.0.1/24 "
				     "mtu=64000", &c));
	EXPECT_STREQ("net_memif0" MEMIF_BSIZE_64000, c.devargs);
	ASSERT_EQ(0, dp_config_parse("dev=net_af_packet0,iface=x "
				     "ip=10.0.0.1/24 mtu=9000", &c));
	EXPECT_STREQ("net_af_packet0,iface=x", c.devargs);
}

/* memif zero-copy=yes (DPDK's zero-copy client): recognised as a devargs
 * key of a memif vdev only, refused with hugepages (DPDK 22.11 names the
 * first memory region for every buffer), and its ring size read from
 * rsize= for the pool (dp_config.c). */
TEST(DpConfig, MemifZeroCopyClient)
{
	auto c_p = std::make_unique<dp_config>();
	dp_config &c = *c_p;

	EXPECT_TRUE(dp_devargs_memif_zc("net_memif0,role=client,zero-copy=yes"));
	EXPECT_TRUE(dp_devargs_memif_zc("net_memif0,zero-copy=yes,id=0"));
	EXPECT_FALSE(dp_devargs_memif_zc("net_memif0,role=client,zero-copy=no"));
	EXPECT_FALSE(dp_devargs_memif_zc("net_memif0,role=client"));
	EXPECT_FALSE(dp_devargs_memif_zc("net_memif0,xzero-copy=yes"));
	EXPECT_FALSE(dp_devargs_memif_zc("net_af_packet0,zero-copy=yes"));
	EXPECT_EQ(1024u, dp_devargs_memif_ring("net_memif0,role=client"));
	EXPECT_EQ(4096u, dp_devargs_memif_ring("net_memif0,rsize=12,id=0"));
	ASSERT_EQ(0, dp_config_parse("dev=net_memif0,role=client,zero-copy=yes"
				     " ip=10.0.0.1/24 mtu=9000", &c));
	EXPECT_STREQ("net_memif0,role=client,zero-copy=yes" MEMIF_BSIZE_9000,
		     c.devargs);
	EXPECT_EQ(-EINVAL, dp_config_parse("dev=net_memif0,role=client,"
					   "zero-copy=yes ip=10.0.0.1/24 "
					   "huge=1", &c));
	ASSERT_EQ(0, dp_config_parse("dev=net_memif0,role=client,zero-copy=no"
				     " ip=10.0.0.1/24 huge=1", &c));
}
/* The memif role is the devargs key role=, read as dp_config.c reads every
 * devargs key: a socket path that contains "role=client" does not make a
 * server a client (it did with strstr; the client would restart the port
 * while waiting for its link and never answer a BYE as the server). */
TEST(DpConfig, MemifClientRoleIsAKey)
{
	auto port_p = std::make_unique<dp_port>();
	dp_port &port = *port_p;
	const struct {
		const char *devargs;
		bool client;
	} cases[] = {
		{"net_memif0,role=client", true},
		{"net_memif0,id=1,role=client,socket=/tmp/m.sock", true},
		{"net_memif0,role=server", false},
		{"net_memif0", false},
		{"net_memif0,socket=/tmp/role=client.sock", false},
		{"net_memif0,socket-abstract=no,socket=/x/role=client", false},
		{"net_memif0,xrole=client", false},
		{"net_memif0,role=clients", false},
	};

	port.memif = true;
	for (const auto &t : cases) {
		snprintf(port.cfg.devargs, sizeof(port.cfg.devargs), "%s",
			 t.devargs);
		EXPECT_EQ(t.client, dp_port_is_memif_client(&port)) << t.devargs;
	}
	port.memif = false; /* not a memif port at all */
	snprintf(port.cfg.devargs, sizeof(port.cfg.devargs), "%s",
		 "net_memif0,role=client");
	EXPECT_FALSE(dp_port_is_memif_client(&port));
}

TEST(DpConfig, ThousandsOfStaticArpEntries)
{
	static dp_config c;
	std::string s = "dev=net_null0 ip=10.1.0.1/16";
	char tok[64];

	for (int i = 0; i < DP_MAX_STATIC_ARP; i++) {
		snprintf(tok, sizeof(tok), " arp=10.1.%d.%d@02:00:00:00:%02x:%02x",
			 i / 250, i % 250 + 2, i >> 8, i & 0xff);
		s += tok;
	}
	ASSERT_EQ(0, dp_config_parse(s.c_str(), &c));
	EXPECT_EQ((uint32_t)DP_MAX_STATIC_ARP, c.nb_static_arp);
	EXPECT_GT(DP_MAX_STATIC_ARP, 16);
	s += " arp=10.1.200.1@02:00:00:00:00:01";
	EXPECT_EQ(-EINVAL, dp_config_parse(s.c_str(), &c));
}

TEST(DpConfig, EveryBadFieldIsRejected)
{
	const char *bad[] = {
		"mtu=64001",	   "mtu=100",	    "mtu=abc",
		"mem=1",	   "rxd=1",	    "txd=99999",
		"rx_ring=1000",	   "tx_hold=3",	    "tx_drain_us=0",
		"udp=maybe",	   "udp_port=0",    "crc=ipsecmb",
		"arp=10.0.0.1",	   "arp=1.2.3.4@zz:00:00:00:00:00",
		"arp_retries=0",   "arp_retry_ms=0", "arp_ttl_ms=1",
		"idle_sleep_us=1000001", "link_wait_ms=9999999",
		"rate=fast",	   "link=1T",	    "pace=tbf",
		"ip=10.0.0",	   "ip=10.0.0.1/33", "prefix=a/b",
		"huge=2",	   "nokey",	    "=1",
		"bogus=1",	   "rate=2G link=1G", "lcore=-1",
		"mbufs=99999999", "netns=a/b", "pace_queue_us=10",
		"pace_dests=0",   "pace_dests=65537", "dest_rate=2G link=1G",
		"dest_rate=fast", "own_mac=2",
	};

	for (const char *b : bad) {
		auto c_p = std::make_unique<dp_config>();
		dp_config &c = *c_p;
		std::string s = std::string("dev=net_null0 ip=10.0.0.1 ") + b;

		EXPECT_EQ(-EINVAL, dp_config_parse(s.c_str(), &c)) << b;
	}
}

static std::string g_mtu_log;

static void mtu_log_sink(enum sdp_log_level, enum sdp_log_comp,
			 const char *msg)
{
	g_mtu_log += msg;
}

/* MTUs above 9000 up to the mbuf's limit; above it the error names the
 * limit and why. */
TEST(DpConfig, MtuUpTo64000AndTheLimitNamed)
{
	auto c_p = std::make_unique<dp_config>();
	dp_config &c = *c_p;

	for (unsigned mtu : { 9001u, 16000u, 32000u, 64000u }) {
		std::string s = "dev=net_null0 ip=10.0.0.1 mtu=" +
				std::to_string(mtu);

		ASSERT_EQ(0, dp_config_parse(s.c_str(), &c)) << mtu;
		EXPECT_EQ(mtu, c.mtu);
	}
	EXPECT_EQ(64000, DP_MTU_MAX);
	g_mtu_log.clear();
	sdp_log_set_sink(mtu_log_sink);
	int rc = dp_config_parse("dev=net_null0 ip=10.0.0.1 mtu=65000", &c);
	sdp_log_set_sink(nullptr);
	EXPECT_EQ(-EINVAL, rc);
	EXPECT_NE(std::string::npos, g_mtu_log.find("mtu=65000 is above 64000"))
		<< g_mtu_log;
	EXPECT_NE(std::string::npos, g_mtu_log.find("mbuf")) << g_mtu_log;
	EXPECT_NE(std::string::npos, g_mtu_log.find("use mtu=576..64000"))
		<< g_mtu_log;
}

/* ---- idle back-off ---- */

TEST(DpIdle, SleepsOnlyAfterThreshold)
{
	dp_idle idle;

	dp_idle_init(&idle, 3, 1);
	dp_idle_update(&idle, 0);
	dp_idle_update(&idle, 0);
	EXPECT_EQ(0u, idle.sleeps);
	dp_idle_update(&idle, 0);
	EXPECT_EQ(1u, idle.sleeps);
	dp_idle_update(&idle, 5); /* work resets */
	dp_idle_update(&idle, 0);
	EXPECT_EQ(1u, idle.sleeps);
}

/* ---- with a real EAL: net_ring loopback port ---- */

class DpPortTest : public ::testing::Test {
protected:
	static dp_port *port;
	static dp_config cfg;

	static void SetUpTestSuite()
	{
		std::string s = "dev=net_ring0 ip=10.0.0.1 mem=256 "
				"link_wait_ms=2000 rx_ring=256 prefix=sdp-test-" +
				std::to_string(getpid());

		ASSERT_EQ(0, dp_config_parse(s.c_str(), &cfg));
		ASSERT_EQ(0, dp_eal_init(&cfg));
		ASSERT_EQ(0, dp_port_open(&cfg, &port));
	}
	static void TearDownTestSuite()
	{
		std::string dir = std::string("/var/run/dpdk/") +
				  cfg.file_prefix;

		dp_port_close(port);
		dp_eal_fini();
		EXPECT_NE(0, access(dir.c_str(), F_OK))
			<< "runtime dir left behind";
	}
	/* Poll until @want packets are delivered or ~1 s passes. */
	unsigned int poll_recv(rte_mbuf **out, unsigned int want)
	{
		unsigned int got = 0;

		for (int i = 0; i < 100000 && got < want; i++) {
			dp_port_poll(port, dp_tsc());
			got += dp_port_recv(port, out + got, want - got);
		}
		return got;
	}
};

dp_port *DpPortTest::port;
dp_config DpPortTest::cfg;

static unsigned int g_ext_frees;

static void ext_free_cb(void *addr, void *opaque)
{
	(void)addr;
	(void)opaque;
	g_ext_frees++;
}

/*
 * A chained SCTP packet as sg sends usrsctp's chains (a header segment of
 * ours, then external buffers that must not be written): the CRC32c over
 * the segments is the CRC of the packet laid out linearly, for every
 * software back-end; freeing the chain calls the external buffers' free
 * callback once and returns every mbuf of both pools.
 */
TEST_F(DpPortTest, ChainedSctpCrcOverSegments)
{
	static uint8_t payload[3000];
	rte_mbuf_ext_shared_info shinfo{};
	unsigned int base = dp_port_mbufs_in_use(port);
	const uint16_t cuts[] = { 0, 1800, 3000 };

	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + 1);
	for (auto be : { DP_CRC_ISAL, DP_CRC_SSE42, DP_CRC_TABLE }) {
		rte_mbuf *h = dp_pkt_alloc(port);
		ASSERT_NE(nullptr, h);
		auto *p = (uint8_t *)rte_pktmbuf_append(h, 28);
		ASSERT_NE(nullptr, p);
		for (int k = 0; k < 28; k++)
			p[k] = (uint8_t)(k + 5);
		shinfo.free_cb = ext_free_cb;
		rte_mbuf_ext_refcnt_set(&shinfo, 2);
		rte_mbuf *prev = h;
		for (int s = 0; s < 2; s++) {
			rte_mbuf *e = dp_pkt_ext_alloc(port);
			ASSERT_NE(nullptr, e);
			uint16_t l = (uint16_t)(cuts[s + 1] - cuts[s]);
			rte_pktmbuf_attach_extbuf(e, payload + cuts[s],
						  RTE_BAD_IOVA, l, &shinfo);
			e->data_len = l;
			prev->next = e;
			prev = e;
			h->nb_segs++;
			h->pkt_len += l;
		}
		std::vector<uint8_t> lin(rte_pktmbuf_pkt_len(h));
		dp_sctp_crc_fill_segs(be, h);
		/* a chain: rte_pktmbuf_read gathers into lin */
		ASSERT_EQ((const void *)lin.data(),
			  rte_pktmbuf_read(h, 0, (uint32_t)lin.size(),
					   lin.data()));
		for (auto be2 : { DP_CRC_ISAL, DP_CRC_SSE42, DP_CRC_TABLE })
			EXPECT_TRUE(dp_sctp_crc_ok(be2, lin.data(),
						   lin.size()))
				<< dp_crc_name(be) << " " << dp_crc_name(be2);
		for (size_t i = 0; i < sizeof(payload); i++)
			ASSERT_EQ((uint8_t)(i * 7 + 1), payload[i]);
		unsigned int frees = g_ext_frees;
		dp_pkt_free(h);
		EXPECT_EQ(frees + 1, g_ext_frees);
	}
	EXPECT_EQ(base, dp_port_mbufs_in_use(port));
}

TEST_F(DpPortTest, LoopbackZeroCopyAndNoLeak)
{
	rte_mempool *mp = port->pool;
	unsigned int base, i;
	std::vector<rte_mbuf *> got(64);
	std::vector<const uint8_t *> written; /* payload addresses sent */
	dp_stats st;

	/* first packet resolves our own address through the loopback */
	base = rte_mempool_in_use_count(mp);
	for (i = 0; i < 40; i++) {
		rte_mbuf *m = dp_pkt_alloc(port);
		ASSERT_NE(nullptr, m);
		auto *p = (uint8_t *)rte_pktmbuf_append(m, 100);
		for (int k = 0; k < 100; k++)
			p[k] = (uint8_t)(i + k);
		written.push_back(p);
		ASSERT_EQ(0, dp_port_send(port, cfg.ip_be, DP_IPPROTO_EXP, m,
					  dp_tsc()));
	}
	dp_port_flush(port, dp_tsc());
	ASSERT_EQ(40u, poll_recv(got.data(), 40));
	for (i = 0; i < 40; i++) {
		struct dp_pkt_info info;
		const uint8_t *p = rte_pktmbuf_mtod(got[i], const uint8_t *);

		dp_pkt_info(got[i], &info);
		EXPECT_EQ(DP_IPPROTO_EXP, info.proto);
		EXPECT_EQ(cfg.ip_be, info.src_ip_be);
		ASSERT_EQ(100u, rte_pktmbuf_data_len(got[i]));
		/* zero copy: the payload is where the frame was written, in
		 * the buffer the NIC handed us, headers right in front */
		EXPECT_EQ(0x45, p[-20]);
		EXPECT_EQ(written[i], p);
		for (int k = 0; k < 100; k++)
			ASSERT_EQ((uint8_t)(i + k), p[k]);
	}
	/* the consumer owns them until it frees them */
	EXPECT_EQ(base + 40, rte_mempool_in_use_count(mp));
	for (i = 0; i < 40; i++)
		dp_pkt_free(got[i]);
	EXPECT_EQ(base, rte_mempool_in_use_count(mp));
	dp_port_stats(port, &st);
	EXPECT_GE(st.arp_tx, 2u); /* request + reply to ourselves */
}

/* On net_ring crc=auto is isal: a CRC is computed, so corruption is
 * caught.  (On memif crc=auto is crc=none, whose zero-checksum packets
 * are not verified by design, as over Linux's lo; see
 * MemifZeroChecksumByDefaultNonzeroStillVerified.) */
TEST_F(DpPortTest, SctpCrcCheckedAndBadCrcDropped)
{
	rte_mbuf *got[4];
	dp_stats before, after;

	dp_port_stats(port, &before);
	for (int bad = 0; bad < 2; bad++) {
		rte_mbuf *m = dp_pkt_alloc(port);
		auto *p = (uint8_t *)rte_pktmbuf_append(m, 48);

		memset(p, 0x5a, 48);
		p[12] = 0; /* a DATA chunk type; content irrelevant here */
		ASSERT_EQ(0, dp_port_send(port, cfg.ip_be, DP_IPPROTO_SCTP, m,
					  dp_tsc()));
		if (bad) {
			/* corrupt one payload byte after the CRC was filled:
			 * the frame is in the TX buffer until flushed */
			rte_mbuf *tx = port->tx_buf[port->nb_tx - 1];
			rte_pktmbuf_mtod(tx, uint8_t *)[34 + 30] ^= 1;
		}
		dp_port_flush(port, dp_tsc());
	}
	EXPECT_EQ(1u, poll_recv(got, 2));
	dp_pkt_free(got[0]);
	dp_port_stats(port, &after);
	EXPECT_EQ(before.drops[DP_DROP_SCTP_CRC] + 1,
		  after.drops[DP_DROP_SCTP_CRC]);
}

TEST_F(DpPortTest, RingFullDropsAndCounts)
{
	std::vector<rte_mbuf *> got(512);
	unsigned int base = rte_mempool_in_use_count(port->pool);
	dp_stats before, after;
	unsigned int n = 0;

	dp_port_stats(port, &before);
	/* 300 frames into a 256-entry ring without consuming */
	for (int i = 0; i < 300; i++) {
		rte_mbuf *m = dp_pkt_alloc(port);
		rte_pktmbuf_append(m, 32);
		ASSERT_EQ(0, dp_port_send(port, cfg.ip_be, DP_IPPROTO_EXP, m,
					  dp_tsc()));
		if (i % 16 == 15) {
			dp_port_flush(port, dp_tsc());
			dp_port_poll(port, dp_tsc());
		}
	}
	dp_port_flush(port, dp_tsc());
	for (int i = 0; i < 100; i++)
		dp_port_poll(port, dp_tsc());
	dp_port_stats(port, &after);
	while (unsigned int k = dp_port_recv(port, got.data() + n, 64))
		n += k;
	EXPECT_EQ(256u, n);
	EXPECT_EQ(before.drops[DP_DROP_RX_RING_FULL] + 44,
		  after.drops[DP_DROP_RX_RING_FULL]);
	for (unsigned int i = 0; i < n; i++)
		dp_pkt_free(got[i]);
	EXPECT_EQ(base, rte_mempool_in_use_count(port->pool));
}

/* A frame whose Ethernet source was corrupted must not redirect our
 * traffic: neighbours are learned from ARP only. */
TEST_F(DpPortTest, IpTrafficDoesNotTeachNeighbourMacs)
{
	const rte_ether_addr bogus = { { 0x02, 0xba, 0xd0, 0, 0, 0x07 } };
	uint32_t sender = ipv4("10.0.0.7");
	rte_mbuf *m = dp_pkt_alloc(port), *got = nullptr;
	uint16_t hlen = dp_frame_hdr_len(false);
	auto *f = (uint8_t *)rte_pktmbuf_append(m, hlen + 32);

	memset(f + hlen, 0x11, 32);
	dp_frame_build(f, &bogus, &port->fctx.mac, sender, cfg.ip_be,
		       DP_IPPROTO_EXP, 0, 32, 1, false);
	ASSERT_EQ(1, rte_eth_tx_burst(port->port_id, 0, &m, 1));
	ASSERT_EQ(1u, poll_recv(&got, 1));
	dp_pkt_free(got);
	EXPECT_EQ(nullptr, dp_arp_find(&port->arp, sender));
}

TEST_F(DpPortTest, SendErrors)
{
	rte_mbuf *m = dp_pkt_alloc(port);
	rte_pktmbuf_append(m, 32);
	EXPECT_EQ(-EHOSTUNREACH, dp_port_send(port, ipv4("192.168.77.1"),
					      DP_IPPROTO_EXP, m, dp_tsc()));
	m = dp_pkt_alloc(port);
	ASSERT_NE(nullptr, rte_pktmbuf_append(m, 1600));
	EXPECT_EQ(-EMSGSIZE,
		  dp_port_send(port, cfg.ip_be, DP_IPPROTO_EXP, m, dp_tsc()));
}

/* Fill the NIC (net_ring's loopback ring) until it refuses a frame, then
 * fill tx_buf: the port is under TX back-pressure.  @return frames the
 * ring holds (drained again by drain_nic). */
static unsigned int fill_nic(dp_port *port)
{
	unsigned int n = 0;

	for (;;) {
		rte_mbuf *m = rte_pktmbuf_alloc(port->pool);

		if (m == nullptr)
			break;
		rte_pktmbuf_append(m, 60);
		if (rte_eth_tx_burst(port->port_id, 0, &m, 1) != 1) {
			rte_pktmbuf_free(m);
			break;
		}
		n++;
	}
	return n;
}

static unsigned int drain_nic(dp_port *port)
{
	rte_mbuf *pkts[DP_BURST];
	unsigned int n = 0;
	uint16_t k;

	while ((k = rte_eth_rx_burst(port->port_id, 0, pkts, DP_BURST)) > 0) {
		rte_pktmbuf_free_bulk(pkts, k);
		n += k;
	}
	return n;
}

static rte_mbuf *arp_mbuf(dp_port *port, uint16_t op,
			  const rte_ether_addr *eth_src,
			  const rte_ether_addr *sha, uint32_t sip,
			  uint32_t tip)
{
	rte_mbuf *m = rte_pktmbuf_alloc(port->pool);
	auto *f = (uint8_t *)rte_pktmbuf_append(m, DP_ARP_FRAME_LEN);

	dp_arp_build(f, op, sha, sip, &port->fctx.mac, tip);
	reinterpret_cast<rte_ether_hdr *>(f)->src_addr = *eth_src;
	reinterpret_cast<rte_ether_hdr *>(f)->dst_addr = port->fctx.mac;
	return m;
}

/* ARP requests, replies and retries while tx_buf is held full by a NIC
 * that takes nothing: each ARP frame is dropped and counted, never written
 * past tx_buf (into rx_ring and pool, the fields behind it). */
TEST_F(DpPortTest, ArpUnderTxBackPressureIsDroppedNotOverflowed)
{
	rte_ring *ring = port->rx_ring;
	rte_mempool *pool = port->pool;
	uint32_t asker = ipv4("10.0.0.60"), unresolved = ipv4("10.0.0.61");
	rte_ether_addr asker_mac = { { 0x02, 0, 0, 0, 0, 0x60 } };
	dp_stats before, after;
	uint64_t now = dp_tsc();
	unsigned int in_nic;

	/* our own address resolved (static: independent of test order) */
	dp_arp_add_static(&port->arp, cfg.ip_be, &port->fctx.mac);
	in_nic = fill_nic(port);
	ASSERT_GT(in_nic, 0u);
	for (int i = 0; i < DP_BURST; i++) {
		rte_mbuf *m = dp_pkt_alloc(port);
		rte_pktmbuf_append(m, 32);
		ASSERT_EQ(0, dp_port_send(port, cfg.ip_be, DP_IPPROTO_EXP, m,
					  now));
	}
	ASSERT_EQ(DP_BURST, port->nb_tx);
	/* a packet has no room either: dropped, counted, and the sender
	 * told (SCTP counts it as tx_nobufs) */
	rte_mbuf *extra = dp_pkt_alloc(port);
	rte_pktmbuf_append(extra, 32);
	EXPECT_EQ(-ENOBUFS, dp_port_send(port, cfg.ip_be, DP_IPPROTO_EXP,
					 extra, now));
	dp_port_stats(port, &before);
	/* a request for us: the reply has no room */
	dp_arp_port_input(port, arp_mbuf(port, 1, &asker_mac, &asker_mac,
					 asker, cfg.ip_be), now);
	/* a packet to an unknown neighbour: the request has no room */
	rte_mbuf *m = dp_pkt_alloc(port);
	rte_pktmbuf_append(m, 32);
	EXPECT_EQ(0, dp_port_send(port, unresolved, DP_IPPROTO_EXP, m, now));
	/* the retry has no room either */
	dp_arp_port_tick(port, now + port->arp.retry_tsc + 1);
	dp_port_stats(port, &after);
	/* the fields behind tx_buf are intact (restore them first, so a
	 * failure here does not take the rest of the suite down with it) */
	bool ring_ok = port->rx_ring == ring, pool_ok = port->pool == pool;
	port->rx_ring = ring;
	port->pool = pool;
	port->nb_tx = RTE_MIN(port->nb_tx, (uint16_t)DP_BURST);
	EXPECT_TRUE(ring_ok) << "tx_buf overflowed into rx_ring";
	EXPECT_TRUE(pool_ok) << "tx_buf overflowed into pool";
	EXPECT_EQ(DP_BURST, port->nb_tx);
	EXPECT_EQ(before.drops[DP_DROP_TX_FULL] + 3,
		  after.drops[DP_DROP_TX_FULL]);
	EXPECT_EQ(before.arp_tx, after.arp_tx);
	/* release: the NIC takes the buffer again, the held packet fails */
	EXPECT_EQ(in_nic, drain_nic(port));
	dp_port_flush(port, dp_tsc());
	EXPECT_EQ(0, port->nb_tx);
	for (uint32_t i = 0; i <= cfg.arp_retries; i++)
		dp_arp_port_tick(port, now + (i + 2) * port->arp.retry_tsc + 1);
	EXPECT_EQ(0u, port->nb_hold);
	drain_nic(port);
}

/* Replace the port's pacer by one in @mode at @rate_bps (10G link). */
static void repace(dp_port *port, dp_pace_mode mode, uint64_t rate_bps)
{
	dp_pace_release(port);
	port->cfg.pace_mode = mode;
	port->cfg.pace_rate_bps = rate_bps;
	port->cfg.link_bps = 10000000000ull;
	ASSERT_EQ(0, dp_tx_pace_setup(port, 10000));
}

/* Gap mode with the NIC full: data frames wait with their gaps, and once
 * the NIC takes frames again each data frame is followed by its whole gap
 * (3x its wire time at a quarter of the link rate), never by the next
 * data frame. */
TEST_F(DpPortTest, GapModeUnderBackPressureSendsWholeUnits)
{
	const int kFrames = 12;
	const uint32_t kWire = 1000 + 34 + 24; /* payload+headers+overhead */
	std::vector<std::pair<char, uint32_t>> seq; /* 'd'/'g', wire bytes */
	unsigned int in_nic, fill_seen = 0;

	dp_arp_add_static(&port->arp, cfg.ip_be, &port->fctx.mac);
	repace(port, DP_PACE_GAP, 2500000000ull);
	in_nic = fill_nic(port);
	ASSERT_GT(in_nic, 0u);
	for (int i = 0; i < kFrames; i++) {
		rte_mbuf *m = dp_pkt_alloc(port);
		memset(rte_pktmbuf_append(m, 1000), 0x42, 1000);
		ASSERT_EQ(0, dp_port_send(port, cfg.ip_be, DP_IPPROTO_EXP, m,
					  dp_tsc()));
	}
	/* the NIC takes a few frames at a time */
	for (int it = 0, seen = 0; it < 100000 && (dp_port_tx_pending(port) ||
						   seen < kFrames);
	     it++) {
		rte_mbuf *pkts[4];
		uint16_t k;

		dp_port_flush(port, dp_tsc());
		k = rte_eth_rx_burst(port->port_id, 0, pkts, 4);
		for (uint16_t j = 0; j < k; j++) {
			auto *eth = rte_pktmbuf_mtod(pkts[j], rte_ether_hdr *);
			uint16_t type = rte_be_to_cpu_16(eth->ether_type);
			uint32_t wire = RTE_MAX(rte_pktmbuf_pkt_len(pkts[j]),
						60u) + 24;

			if (fill_seen < in_nic)
				fill_seen++;
			else if (type == RTE_ETHER_TYPE_IPV4)
				seq.emplace_back('d', wire), seen++;
			else if (type == 0x8808)
				seq.emplace_back('g', wire);
		}
		rte_pktmbuf_free_bulk(pkts, k);
	}
	drain_nic(port);
	dp_stats st;
	dp_port_stats(port, &st);
	repace(port, DP_PACE_DEADLINE, 0);

	int data = 0;
	uint64_t gap_bytes = 0;
	for (size_t i = 0; i < seq.size(); i++) {
		if (seq[i].first == 'g') {
			gap_bytes += seq[i].second;
			continue;
		}
		if (data > 0) {
			EXPECT_GE(gap_bytes, 3 * kWire - 84)
				<< "data frame " << data << " left early";
			EXPECT_LE(gap_bytes, 3 * kWire + 84);
		}
		data++;
		gap_bytes = 0;
	}
	EXPECT_EQ(kFrames, data);
	EXPECT_GT(st.gap_frames, 0u);
}

/* A full pacer queue drops, counts pace_drops and tells the sender. */
TEST_F(DpPortTest, PacerQueueFullReturnsEnobufsAndCounts)
{
	dp_stats before, after;
	int ok = 0, nobufs = 0;
	char json[2048];

	dp_arp_add_static(&port->arp, cfg.ip_be, &port->fctx.mac);
	repace(port, DP_PACE_DEADLINE, 10000000ull); /* 10 Mbit/s */
	dp_port_stats(port, &before);
	for (int i = 0; i < 64; i++) {
		rte_mbuf *m = dp_pkt_alloc(port);
		rte_pktmbuf_append(m, 1000);
		int rc = dp_port_send(port, cfg.ip_be, DP_IPPROTO_EXP, m,
				      dp_tsc());
		ok += rc == 0;
		nobufs += rc == -ENOBUFS;
	}
	dp_port_stats(port, &after);
	repace(port, DP_PACE_DEADLINE, 0);
	drain_nic(port);
	EXPECT_EQ(64, ok + nobufs);
	EXPECT_GT(nobufs, 0);
	EXPECT_EQ(before.pace_drops + (uint64_t)nobufs, after.pace_drops);
	EXPECT_EQ(before.drops[DP_DROP_HOLD_FULL],
		  after.drops[DP_DROP_HOLD_FULL]);
	ASSERT_LT(dp_stats_json(&after, json, sizeof(json)), (int)sizeof(json));
	EXPECT_NE(nullptr, strstr(json, ("\"pace_drops\": " +
					 std::to_string(after.pace_drops))
						.c_str()))
		<< json;
}

/* A gap-mode port closed while the NIC holds gap frames: the device is
 * closed (a real PMD frees the mbufs its TX ring holds then) before the
 * gap pool is freed.  The ethdev's DESTROY event marks the moment. */
struct GapCloseProbe {
	char pool_name[RTE_MEMPOOL_NAMESIZE];
	bool destroyed;
	bool pool_alive_at_destroy;
};

static int gap_close_cb(uint16_t, rte_eth_event_type, void *arg, void *)
{
	auto *pr = static_cast<GapCloseProbe *>(arg);

	pr->destroyed = true;
	pr->pool_alive_at_destroy = rte_mempool_lookup(pr->pool_name) != nullptr;
	return 0;
}

TEST_F(DpPortTest, GapPoolFreedAfterTheDeviceOnClose)
{
	auto c2_p = std::make_unique<dp_config>(); /* ~48 KB */
	dp_config &c2 = *c2_p;
	dp_port *p2 = nullptr;
	/* static: the DESTROY callback stays registered on the port id
	 * after the port is gone (DPDK 22.11 cannot unregister it from a
	 * released port), and fires again when a later port reuses the id
	 * (ZeroChecksumRefusedOffMemif's): it must not write into a stack
	 * frame that is no longer this test's */
	static GapCloseProbe pr;

	pr = GapCloseProbe{};

	ASSERT_EQ(0, rte_dev_probe("net_ring1"));
	ASSERT_EQ(0, dp_config_parse("dev=net_ring1 ip=10.0.1.1 "
				     "link_wait_ms=2000 rx_ring=256 pace=gap "
				     "link=10G rate=1G "
				     "arp=10.0.1.1@02:5d:0a:00:01:01", &c2));
	ASSERT_EQ(0, dp_port_open(&c2, &p2));
	snprintf(pr.pool_name, sizeof(pr.pool_name), "dp_gap_%u",
		 p2->port_id);
	ASSERT_EQ(0, rte_eth_dev_callback_register(p2->port_id,
						   RTE_ETH_EVENT_DESTROY,
						   gap_close_cb, &pr));
	for (int i = 0; i < 8; i++) {
		rte_mbuf *m = dp_pkt_alloc(p2);
		rte_pktmbuf_append(m, 1000);
		ASSERT_EQ(0, dp_port_send(p2, c2.ip_be, DP_IPPROTO_EXP, m,
					  dp_tsc()));
		dp_port_flush(p2, dp_tsc());
	}
	rte_mempool *gp = rte_mempool_lookup(pr.pool_name);
	ASSERT_NE(nullptr, gp);
	ASSERT_GT(rte_mempool_in_use_count(gp), 0u) << "no gap frame in the NIC";
	dp_port_close(p2);
	EXPECT_TRUE(pr.destroyed);
	EXPECT_TRUE(pr.pool_alive_at_destroy)
		<< "gap pool freed while the device still held gap frames";
	EXPECT_EQ(nullptr, rte_mempool_lookup(pr.pool_name));
}

/* Learning from ARP: a frame whose sender MAC is its Ethernet source, or a
 * reply to a request of ours; anything else is neither learned nor
 * answered, and counted. */
TEST_F(DpPortTest, ArpLearnsOnlyFromTrustedFrames)
{
	const rte_ether_addr real = { { 0x02, 0, 0, 0, 0x70, 0x01 } };
	const rte_ether_addr other = { { 0x02, 0, 0, 0, 0x70, 0x99 } };
	uint32_t a = ipv4("10.0.0.71"), b = ipv4("10.0.0.72"),
		 c = ipv4("10.0.0.73"), d = ipv4("10.0.0.74");
	uint64_t now = dp_tsc();
	dp_stats before, after;

	dp_port_stats(port, &before);
	/* a request for us whose sender MAC is not its Ethernet source */
	dp_arp_port_input(port, arp_mbuf(port, 1, &real, &other, a, cfg.ip_be),
			  now);
	EXPECT_EQ(nullptr, dp_arp_find(&port->arp, a));
	/* an unsolicited reply, same mismatch */
	dp_arp_port_input(port, arp_mbuf(port, 2, &real, &other, b, cfg.ip_be),
			  now);
	EXPECT_EQ(nullptr, dp_arp_find(&port->arp, b));
	dp_port_stats(port, &after);
	EXPECT_EQ(before.drops[DP_DROP_ARP_UNTRUSTED] + 2,
		  after.drops[DP_DROP_ARP_UNTRUSTED]);
	EXPECT_EQ(before.arp_tx, after.arp_tx) << "answered an untrusted request";
	/* a consistent request is learned and answered */
	dp_arp_port_input(port, arp_mbuf(port, 1, &real, &real, c, cfg.ip_be),
			  now);
	ASSERT_NE(nullptr, dp_arp_find(&port->arp, c));
	EXPECT_TRUE(rte_is_same_ether_addr(&real,
					   &dp_arp_find(&port->arp, c)->mac));
	/* a reply to our own request is learned even from a proxy */
	rte_ether_addr mac;
	ASSERT_EQ(-ENOENT, dp_arp_lookup(&port->arp, d, now, &mac));
	dp_arp_port_input(port, arp_mbuf(port, 2, &real, &other, d, cfg.ip_be),
			  now);
	ASSERT_EQ(0, dp_arp_lookup(&port->arp, d, now + 1, &mac));
	EXPECT_TRUE(rte_is_same_ether_addr(&other, &mac));
	dp_port_flush(port, dp_tsc());
	drain_nic(port);
}

/*
 * Several ports in one process (issue 10.1): a memif server and its client
 * opened by dp_port_open in this process, neither named to the EAL (which
 * probed only net_ring0), so both are hot-plugged and each must be found
 * by its own name -- before, the lookup fell back to "the only port" and
 * the server opened net_ring0 a second time.  Frames go both ways, each
 * port with its own address, pool and ARP cache; closing removes the
 * devices, so the same devargs open again.
 */
static unsigned int poll_pair(dp_port *a, dp_port *b, dp_port *rx,
			      rte_mbuf **out, unsigned int want)
{
	unsigned int got = 0;

	for (int i = 0; i < 200000 && got < want; i++) {
		dp_port_poll(a, dp_tsc());
		dp_port_poll(b, dp_tsc());
		got += dp_port_recv(rx, out + got, want - got);
	}
	return got;
}

static void send_burst(dp_port *from, uint32_t to_ip, uint8_t tag,
		       unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		rte_mbuf *m = dp_pkt_alloc(from);
		ASSERT_NE(nullptr, m);
		auto *p = (uint8_t *)rte_pktmbuf_append(m, 200);
		for (int k = 0; k < 200; k++)
			p[k] = (uint8_t)(tag + i + k);
		ASSERT_EQ(0, dp_port_send(from, to_ip, DP_IPPROTO_EXP, m,
					  dp_tsc()));
	}
	dp_port_flush(from, dp_tsc());
}

static void check_burst(rte_mbuf **got, unsigned int n, uint32_t src_ip,
			uint8_t tag)
{
	for (unsigned int i = 0; i < n; i++) {
		struct dp_pkt_info info;
		const uint8_t *p = rte_pktmbuf_mtod(got[i], const uint8_t *);

		dp_pkt_info(got[i], &info);
		EXPECT_EQ(src_ip, info.src_ip_be);
		ASSERT_EQ(200u, rte_pktmbuf_data_len(got[i]));
		for (int k = 0; k < 200; k++)
			ASSERT_EQ((uint8_t)(tag + i + k), p[k]) << i;
		dp_pkt_free(got[i]);
	}
}

/*
 * A memif server and its client, both opened by dp_port_open in this
 * process (hot-plugged, each found by its own name).  The server waits for
 * its link on a thread while the client opens (the server's socket exists
 * once it is probed; the client reconnects until the server accepts).
 */
struct MemifPair {
	std::string dir, sock;
	dp_config cs, cc;
	dp_port *srv = nullptr, *cli = nullptr;

	/* @srv_dev/@cli_dev: net_memifN names; @net: "10.9.K" (.1 server,
	 * .2 client); @extra_*: more keys for each end */
	void config(const char *tag, const char *srv_dev, const char *cli_dev,
		    const char *net, const std::string &extra_srv,
		    const std::string &extra_cli)
	{
		dir = std::string("/tmp/sdp-") + tag + "-" +
		      std::to_string(getpid());
		sock = dir + "/memif.sock";
		std::string memif = ",id=0,socket=" + sock +
				    ",socket-abstract=no";
		ASSERT_EQ(0, mkdir(dir.c_str(), 0700));
		ASSERT_EQ(0, dp_config_parse((std::string("dev=") + srv_dev +
					      ",role=server" + memif + " ip=" +
					      net + ".1/24 link_wait_ms=10000 " +
					      extra_srv).c_str(), &cs));
		ASSERT_EQ(0, dp_config_parse((std::string("dev=") + cli_dev +
					      ",role=client" + memif + " ip=" +
					      net + ".2/24 link_wait_ms=10000 " +
					      extra_cli).c_str(), &cc));
	}
	/* @between runs once the server is opening, before the client */
	void open(const std::function<void()> &between = nullptr)
	{
		int srv_rc = -1;
		std::thread t([&] { srv_rc = dp_port_open(&cs, &srv); });
		usleep(300 * 1000);
		if (between)
			between();
		int cli_rc = dp_port_open(&cc, &cli);
		t.join();
		ASSERT_EQ(0, srv_rc);
		ASSERT_EQ(0, cli_rc);
	}
	/* Server first, the client once its link went down (DPDK 22.11's
	 * memif frees the listener's interrupt handle, its callback still
	 * registered, when a server is the last device on the socket); the
	 * server's close handshake times out: nobody polls the client. */
	void close()
	{
		dp_port_close(srv);
		for (int i = 0; i < 200 && dp_port_link_up(cli, nullptr); i++)
			usleep(10 * 1000);
		dp_port_close(cli);
		srv = cli = nullptr;
	}
	void cleanup()
	{
		unlink(sock.c_str());
		rmdir(dir.c_str());
	}
};

TEST_F(DpPortTest, TwoHotPluggedPortsExchangeFramesBothWays)
{
	MemifPair mp;
	std::vector<rte_mbuf *> got(64);

	ASSERT_NO_FATAL_FAILURE(mp.config("dptest", "net_memif0", "net_memif1",
					  "10.9.0", "rx_ring=256",
					  "rx_ring=256"));
	dp_config &cs = mp.cs, &cc = mp.cc;
	for (int round = 0; round < 2; round++) {
		ASSERT_NO_FATAL_FAILURE(mp.open());
		dp_port *srv = mp.srv, *cli = mp.cli;
		char sn[RTE_ETH_NAME_MAX_LEN], cn[RTE_ETH_NAME_MAX_LEN];
		ASSERT_EQ(0, rte_eth_dev_get_name_by_port(dp_port_id(srv), sn));
		ASSERT_EQ(0, rte_eth_dev_get_name_by_port(dp_port_id(cli), cn));
		EXPECT_STREQ("net_memif0", sn);
		EXPECT_STREQ("net_memif1", cn);
		EXPECT_NE(dp_port_id(port), dp_port_id(srv));
		EXPECT_NE(srv->pool, cli->pool);
		EXPECT_NE(port->pool, srv->pool);

		send_burst(srv, cc.ip_be, 1, 40);
		ASSERT_EQ(40u, poll_pair(srv, cli, cli, got.data(), 40));
		check_burst(got.data(), 40, cs.ip_be, 1);
		send_burst(cli, cs.ip_be, 7, 40);
		ASSERT_EQ(40u, poll_pair(srv, cli, srv, got.data(), 40));
		check_burst(got.data(), 40, cc.ip_be, 7);
		/* nothing reached the EAL's own port */
		EXPECT_EQ(0u, poll_recv(got.data(), 1));

		dp_stats ss, sc;
		dp_port_stats(srv, &ss);
		dp_port_stats(cli, &sc);
		EXPECT_GE(ss.tx_pkts, 40u);
		EXPECT_GE(sc.tx_pkts, 40u);
		EXPECT_EQ(40u, ss.delivered);
		EXPECT_EQ(40u, sc.delivered);
		/* each port learned the other's MAC in its own cache */
		EXPECT_NE(nullptr, dp_arp_find(&srv->arp, cc.ip_be));
		EXPECT_NE(nullptr, dp_arp_find(&cli->arp, cs.ip_be));
		EXPECT_EQ(nullptr, dp_arp_find(&port->arp, cc.ip_be));
		mp.close();
		uint16_t pid;
		EXPECT_NE(0, rte_eth_dev_get_port_by_name("net_memif0", &pid))
			<< "server device left behind at close";
	}
	mp.cleanup();
}

/*
 * A memif peer leaves while this end is inside an RX burst.  DPDK 22.11's
 * memif unmaps the shared regions from its interrupt thread when the peer
 * closes, with nothing against a burst under way on the polling thread:
 * sdp-ping's server died by SIGSEGV in eth_memif_rx (its client closed
 * while it polled, under load).  Here the race is made certain: the
 * server's mbuf pool holds the polling thread inside eth_memif_rx (the
 * PMD allocates an mbuf between reading the ring's head and its
 * descriptors) while the client closes.  With the close handshake
 * (dp_bye.c) the client's close waits until the server has answered its
 * BYE, which the server can only do after the burst: the link stays up
 * while the burst is held, every frame arrives, and the link goes down
 * once the server stopped polling.  Without it the server's link went
 * down under the held burst and the burst then read unmapped memory.
 */
static rte_mempool_ops gate_ops;
static const rte_mempool_ops *gate_inner;
static std::atomic<rte_mempool *> gate_pool{nullptr};
/* 0 idle, 1 armed, 2 a thread is held, 3 released */
static std::atomic<int> gate_state{0};

static int gate_dequeue(rte_mempool *mp, void **objs, unsigned int n)
{
	int armed = 1;

	if (mp == gate_pool.load() &&
	    gate_state.compare_exchange_strong(armed, 2))
		for (int i = 0; i < 20000 && gate_state.load() == 2; i++)
			usleep(1000);
	return gate_inner->dequeue(mp, objs, n);
}

/* mempool ops "sdp_test_gate": ring_mp_mc's, with a dequeue that can hold
 * its caller. */
static void gate_register(void)
{
	if (gate_inner != nullptr)
		return;
	for (unsigned int i = 0; i < rte_mempool_ops_table.num_ops; i++)
		if (strcmp(rte_mempool_ops_table.ops[i].name, "ring_mp_mc") ==
		    0)
			gate_inner = &rte_mempool_ops_table.ops[i];
	ASSERT_NE(nullptr, gate_inner) << "no ring_mp_mc mempool ops";
	gate_ops = *gate_inner;
	snprintf(gate_ops.name, sizeof(gate_ops.name), "sdp_test_gate");
	gate_ops.dequeue = gate_dequeue;
	ASSERT_GE(rte_mempool_register_ops(&gate_ops), 0);
}

TEST_F(DpPortTest, MemifPeerLeavingDuringABurstWaitsForIt)
{
	MemifPair mp;
	std::vector<rte_mbuf *> got(64);

	gate_register();
	ASSERT_NO_FATAL_FAILURE(mp.config("dpbye", "net_memif4", "net_memif5",
					  "10.9.2", "rx_ring=256",
					  "rx_ring=256 bye_wait_ms=5000"));
	/* the server's pools get the gate ops, the client's the default */
	ASSERT_EQ(0, rte_mbuf_set_user_mempool_ops("sdp_test_gate"));
	ASSERT_NO_FATAL_FAILURE(mp.open(
		[] { rte_mbuf_set_user_mempool_ops("ring_mp_mc"); }));
	dp_port *srv = mp.srv, *cli = mp.cli;
	dp_config &cs = mp.cs, &cc = mp.cc;
	ASSERT_STREQ("sdp_test_gate", rte_mempool_get_ops(srv->pool->ops_index)
					      ->name);
	/* neighbours resolved both ways */
	send_burst(srv, cc.ip_be, 1, 4);
	ASSERT_EQ(4u, poll_pair(srv, cli, cli, got.data(), 4));
	check_burst(got.data(), 4, cs.ip_be, 1);
	send_burst(cli, cs.ip_be, 2, 4);
	ASSERT_EQ(4u, poll_pair(srv, cli, srv, got.data(), 4));
	check_burst(got.data(), 4, cc.ip_be, 2);

	/* 8 frames wait in the server's RX ring; its next burst is held */
	send_burst(cli, cs.ip_be, 9, 8);
	gate_pool = srv->pool;
	gate_state = 1;
	std::atomic<bool> stop{false};
	std::vector<rte_mbuf *> srv_got;
	std::thread poller([&] {
		rte_mbuf *pkts[32];

		while (!stop.load()) {
			dp_port_poll(srv, dp_tsc());
			unsigned int n = dp_port_recv(srv, pkts, 32);
			srv_got.insert(srv_got.end(), pkts, pkts + n);
		}
	});
	for (int i = 0; i < 5000 && gate_state.load() != 2; i++)
		usleep(1000);
	ASSERT_EQ(2, gate_state.load()) << "the server never polled";

	/* the client leaves while the server is inside eth_memif_rx */
	std::thread closer([&] { dp_port_close(cli); });
	bool down_while_held = false;
	for (int i = 0; i < 50 && !down_while_held; i++) {
		usleep(10 * 1000);
		down_while_held = !dp_port_link_up(srv, nullptr);
	}
	if (down_while_held)
		usleep(100 * 1000); /* the teardown has unmapped by now */
	gate_state = 3;
	closer.join();
	for (int i = 0; i < 500 && dp_port_link_up(srv, nullptr); i++)
		usleep(10 * 1000);
	stop = true;
	poller.join();
	gate_pool = nullptr;

	EXPECT_FALSE(down_while_held)
		<< "the client closed while the server was inside a burst";
	EXPECT_FALSE(dp_port_link_up(srv, nullptr))
		<< "the client never left";
	ASSERT_EQ(8u, srv_got.size());
	check_burst(srv_got.data(), 8, cc.ip_be, 9);
	dp_stats ss;
	dp_port_stats(srv, &ss);
	EXPECT_EQ(1u, ss.bye_rx) << "the client's BYE";
	dp_port_close(srv);
	mp.cleanup();
}

/*
 * Issue 9 (session 6): frames of 8 KB and of 100 B mixed, at mtu 9000 over
 * a memif pair whose devargs give no bsize=, each arrive exactly once and
 * whole.  With DPDK's 2048-byte default the big ones were chained over
 * 4 buffers and DPDK 22.11's memif TX mangled the ring (dp_config.c
 * memif_bsize_fill): 3200 frames sent arrived as 274,377, small ones
 * merged into the next frame, old buffers replayed, 776 dropped as bad
 * ethertype.  The dataplane now gives buffers that hold a frame.
 */
TEST_F(DpPortTest, MemifMixedFramesAtMtu9000ArriveOnceEach)
{
	MemifPair mp;
	std::vector<rte_mbuf *> got(64);
	unsigned int sent = 0, ok = 0, bad = 0, gaps = 0;
	uint32_t next = 0;

	ASSERT_NO_FATAL_FAILURE(mp.config("dpmix", "net_memif8", "net_memif9",
					  "10.9.8", "rx_ring=1024 mtu=9000",
					  "rx_ring=1024 mtu=9000"));
	ASSERT_NO_FATAL_FAILURE(mp.open());
	dp_port *srv = mp.srv, *cli = mp.cli;
	/* neighbours resolved both ways */
	send_burst(cli, mp.cs.ip_be, 1, 1);
	ASSERT_EQ(1u, poll_pair(srv, cli, srv, got.data(), 1));
	dp_pkt_free(got[0]);
	send_burst(srv, mp.cc.ip_be, 1, 1);
	ASSERT_EQ(1u, poll_pair(srv, cli, cli, got.data(), 1));
	dp_pkt_free(got[0]);
	for (int round = 0; round < 200; round++) {
		for (int i = 0; i < 16; i++) {
			rte_mbuf *m = dp_pkt_alloc(cli);

			ASSERT_NE(nullptr, m);
			uint32_t len = sent % 3 == 2 ? 100 : 8000;
			auto *d = (uint8_t *)rte_pktmbuf_append(m,
							       (uint16_t)len);
			memcpy(d, &sent, 4);
			for (uint32_t k = 4; k < len; k++)
				d[k] = (uint8_t)(sent + k);
			ASSERT_EQ(0, dp_port_send(cli, mp.cs.ip_be,
						  DP_IPPROTO_EXP, m,
						  dp_tsc()));
			sent++;
		}
		dp_port_flush(cli, dp_tsc());
		for (int j = 0; j < 50; j++) {
			dp_port_poll(cli, dp_tsc());
			dp_port_poll(srv, dp_tsc());
			unsigned int r = dp_port_recv(srv, got.data(), 64);

			for (unsigned int i = 0; i < r; i++) {
				const uint8_t *d = rte_pktmbuf_mtod(
					got[i], const uint8_t *);
				uint32_t s, len = rte_pktmbuf_pkt_len(got[i]);

				memcpy(&s, d, 4);
				bool g = len == (s % 3 == 2 ? 100u : 8000u);
				for (uint32_t k = 4; g && k < len; k++)
					g = d[k] == (uint8_t)(s + k);
				ok += g;
				bad += !g;
				gaps += s != next;
				next = s + 1;
				dp_pkt_free(got[i]);
			}
		}
	}
	for (int i = 0; i < 5 && ok + bad < sent; i++) {
		unsigned int r = poll_pair(srv, cli, srv, got.data(), 64);

		for (unsigned int k = 0; k < r; k++)
			dp_pkt_free(got[k]), bad++;
	}
	dp_stats ss;
	dp_port_stats(srv, &ss);
	EXPECT_EQ(sent, ok) << "frames arrived whole (of " << sent << ")";
	EXPECT_EQ(0u, bad) << "frames late, damaged or replayed";
	EXPECT_EQ(0u, gaps) << "frames lost or out of order";
	EXPECT_EQ(0u, ss.drops[DP_DROP_ETHERTYPE]);
	EXPECT_EQ(0u, ss.drops[DP_DROP_IP_LEN]);
	mp.close();
	mp.cleanup();
}

/* Issue 9.5: an unpaced port with an empty pacer never runs the pacer on
 * a poll or a flush (pace_polls stays put); a rate published from another
 * thread (dp_port_set_rate) brings it back at the next poll, and once the
 * rate is 0 again and its queue is empty the polls skip it again. */
TEST_F(DpPortTest, UnpacedPollsSkipThePacer)
{
	dp_stats a, b;
	rte_mbuf *got[DP_BURST];
	unsigned int rx = 0;

	dp_arp_add_static(&port->arp, cfg.ip_be, &port->fctx.mac);
	repace(port, DP_PACE_DEADLINE, 0);
	dp_port_stats(port, &a);
	for (int i = 0; i < 1000; i++) {
		rte_mbuf *m = dp_pkt_alloc(port);

		ASSERT_NE(nullptr, m);
		rte_pktmbuf_append(m, 100);
		ASSERT_EQ(0, dp_port_send(port, cfg.ip_be, DP_IPPROTO_EXP, m,
					  dp_tsc()));
		dp_port_poll(port, dp_tsc());
		dp_port_flush(port, dp_tsc());
		while (unsigned int n = dp_port_recv(port, got, DP_BURST))
			rte_pktmbuf_free_bulk(got, n), rx += n;
	}
	for (int i = 0; i < 100 && rx < 1000; i++) {
		dp_port_poll(port, dp_tsc());
		while (unsigned int n = dp_port_recv(port, got, DP_BURST))
			rte_pktmbuf_free_bulk(got, n), rx += n;
	}
	dp_port_stats(port, &b);
	EXPECT_GE(rx, 1000u) << "frames lost on the unpaced path";
	EXPECT_EQ(a.pace_polls, b.pace_polls)
		<< "unpaced polls ran the pacer";

	/* another thread publishes a rate: the next poll runs the pacer */
	std::thread([] { ASSERT_EQ(0, dp_port_set_rate(port, 1000000000ull)); })
		.join();
	dp_port_poll(port, dp_tsc());
	dp_port_stats(port, &a);
	EXPECT_EQ(b.pace_polls + 1, a.pace_polls);
	EXPECT_EQ(1000000000ull, dp_port_rate(port));
	dp_port_poll(port, dp_tsc());
	dp_port_flush(port, dp_tsc());
	dp_port_stats(port, &b);
	EXPECT_EQ(a.pace_polls + 2, b.pace_polls) << "paced polls skipped it";

	/* back to unpaced: one poll applies the rate, later ones skip */
	ASSERT_EQ(0, dp_port_set_rate(port, 0));
	dp_port_poll(port, dp_tsc());
	dp_port_stats(port, &a);
	EXPECT_EQ(b.pace_polls + 1, a.pace_polls);
	EXPECT_EQ(0u, dp_port_rate(port));
	for (int i = 0; i < 100; i++)
		dp_port_poll(port, dp_tsc());
	dp_port_stats(port, &b);
	EXPECT_EQ(a.pace_polls, b.pace_polls);
	drain_nic(port);
	while (unsigned int n = dp_port_recv(port, got, DP_BURST))
		rte_pktmbuf_free_bulk(got, n);
}

/* Issue 9.5: an application send reaches the NIC at once
 * (dp_port_send_flush), unless the port batches TX to one burst per poll
 * (af_packet: a sendto per burst), where it waits for the poll. */
TEST_F(DpPortTest, SendFlushUnlessThePortBatches)
{
	dp_stats a, b;
	rte_mbuf *got[DP_BURST];

	dp_arp_add_static(&port->arp, cfg.ip_be, &port->fctx.mac);
	repace(port, DP_PACE_DEADLINE, 0);
	EXPECT_FALSE(port->tx_batch) << "net_ring does not batch";
	for (bool batch : { false, true }) {
		port->tx_batch = batch;
		dp_port_stats(port, &a);
		rte_mbuf *m = dp_pkt_alloc(port);
		ASSERT_NE(nullptr, m);
		rte_pktmbuf_append(m, 100);
		ASSERT_EQ(0, dp_port_send(port, cfg.ip_be, DP_IPPROTO_EXP, m,
					  dp_tsc()));
		dp_port_send_flush(port, dp_tsc());
		dp_port_stats(port, &b);
		EXPECT_EQ(a.tx_pkts + (batch ? 0 : 1), b.tx_pkts) << batch;
		EXPECT_EQ(batch ? 1 : 0, port->nb_tx) << batch;
		dp_port_flush(port, dp_tsc()); /* the poll's flush */
		EXPECT_EQ(0, port->nb_tx);
		for (int i = 0; i < 1000; i++) {
			dp_port_poll(port, dp_tsc());
			if (unsigned int n = dp_port_recv(port, got, DP_BURST)) {
				rte_pktmbuf_free_bulk(got, n);
				break;
			}
		}
	}
	port->tx_batch = false;
}

/* SACK hold: on a port that batches TX a held frame takes no burst of
 * its own: it rides at the tail of the next burst carrying another frame
 * (after it: the reply first), and leaves alone only when released; other
 * ports send it at once.  Frames are told apart by their first payload
 * byte; net_ring0 loops them back in wire order. */
TEST_F(DpPortTest, HeldFrameRidesAfterTheNextFrame)
{
	dp_stats a, b;
	rte_mbuf *got[DP_BURST];

	dp_arp_add_static(&port->arp, cfg.ip_be, &port->fctx.mac);
	repace(port, DP_PACE_DEADLINE, 0);
	auto frame = [&](uint8_t tag) {
		rte_mbuf *m = dp_pkt_alloc(port);

		EXPECT_NE(nullptr, m);
		memset(rte_pktmbuf_append(m, 64), tag, 64);
		return m;
	};
	/* a port that does not batch TX (net_ring, memif) does not hold */
	ASSERT_FALSE(port->tx_batch);
	dp_port_stats(port, &a);
	ASSERT_EQ(0, dp_port_send_held(port, cfg.ip_be, DP_IPPROTO_EXP,
				       frame('S'), dp_tsc()));
	EXPECT_EQ(0u, dp_port_held(port));
	dp_port_flush(port, dp_tsc());
	ASSERT_EQ(1u, poll_recv(got, 1));
	rte_pktmbuf_free(got[0]);
	dp_port_stats(port, &b);
	EXPECT_EQ(a.tx_held, b.tx_held);

	port->tx_batch = true; /* af_packet's */
	dp_port_stats(port, &a);
	ASSERT_EQ(0, dp_port_send_held(port, cfg.ip_be, DP_IPPROTO_EXP,
				       frame('S'), dp_tsc()));
	EXPECT_EQ(1u, dp_port_held(port));
	EXPECT_TRUE(dp_port_tx_pending(port)) << "held counts as pending";
	for (int i = 0; i < 100; i++) /* polls and flushes leave it */
		dp_port_poll(port, dp_tsc());
	dp_port_flush(port, dp_tsc());
	dp_port_stats(port, &b);
	EXPECT_EQ(a.tx_pkts, b.tx_pkts) << "a held frame left alone";
	EXPECT_EQ(a.tx_bursts, b.tx_bursts);
	EXPECT_EQ(a.tx_held + 1, b.tx_held);

	/* the next frame's burst carries it, after that frame */
	ASSERT_EQ(0, dp_port_send(port, cfg.ip_be, DP_IPPROTO_EXP, frame('D'),
				  dp_tsc()));
	dp_port_flush(port, dp_tsc());
	dp_port_stats(port, &a);
	EXPECT_EQ(b.tx_pkts + 2, a.tx_pkts);
	EXPECT_EQ(b.tx_bursts + 1, a.tx_bursts) << "one burst for both";
	EXPECT_EQ(0u, dp_port_held(port));
	ASSERT_EQ(2u, poll_recv(got, 2));
	EXPECT_EQ('D', *rte_pktmbuf_mtod(got[0], uint8_t *)) << "reply first";
	EXPECT_EQ('S', *rte_pktmbuf_mtod(got[1], uint8_t *));
	rte_pktmbuf_free_bulk(got, 2);

	/* released: it leaves at the next flush, alone */
	ASSERT_EQ(0, dp_port_send_held(port, cfg.ip_be, DP_IPPROTO_EXP,
				       frame('S'), dp_tsc()));
	dp_port_release_held(port, dp_tsc());
	EXPECT_EQ(0u, dp_port_held(port));
	dp_port_flush(port, dp_tsc());
	dp_port_stats(port, &b);
	EXPECT_EQ(a.tx_bursts + 1, b.tx_bursts);
	ASSERT_EQ(1u, poll_recv(got, 1));
	EXPECT_EQ('S', *rte_pktmbuf_mtod(got[0], uint8_t *));
	rte_pktmbuf_free(got[0]);
	EXPECT_FALSE(dp_port_tx_pending(port));
	port->tx_batch = false;
}

/*
 * Per-destination pacing through the dataplane, on a virtual clock: the
 * pacer only knows the now_tsc it is given, so each poll is exactly 1 us
 * after the previous one and departures are read back from net_ring0's
 * loop.  Frames: 1000-byte payload, 1034-byte frames, 1058 wire bytes.
 */
namespace {

constexpr uint32_t kDestWire = 1000 + 34 + 24;

struct DestRun {
	std::map<uint32_t, std::vector<uint64_t>> sent_us; /* by ip_be */
};

uint32_t test_ip(unsigned int host)
{
	return rte_cpu_to_be_32(0x0a000000u + host); /* 10.0.0.host */
}

/* Queue @n frames to each of @ips at t0, then poll every virtual
 * microsecond for @dur_us, recording each frame's departure. */
DestRun run_dests(dp_port *port, uint64_t t0, const std::vector<uint32_t> &ips,
		  int n, uint64_t dur_us)
{
	const uint64_t us = dp_tsc_hz() / 1000000;
	DestRun r;

	for (uint32_t ip : ips)
		for (int i = 0; i < n; i++) {
			rte_mbuf *m = dp_pkt_alloc(port);
			memset(rte_pktmbuf_append(m, 1000), 0x42, 1000);
			EXPECT_EQ(0, dp_port_send(port, ip, DP_IPPROTO_EXP, m,
						  t0));
		}
	for (uint64_t t = 0; t <= dur_us; t++) {
		rte_mbuf *pkts[DP_BURST];
		uint16_t k;

		dp_port_flush(port, t0 + t * us);
		while ((k = rte_eth_rx_burst(port->port_id, 0, pkts,
					     DP_BURST)) > 0) {
			for (uint16_t j = 0; j < k; j++) {
				auto *eth = rte_pktmbuf_mtod(pkts[j],
							     rte_ether_hdr *);
				auto *ip = (rte_ipv4_hdr *)(eth + 1);

				if (eth->ether_type ==
				    rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4))
					r.sent_us[ip->dst_addr].push_back(t);
			}
			rte_pktmbuf_free_bulk(pkts, k);
		}
	}
	return r;
}

} /* namespace */

TEST_F(DpPortTest, TwoDestinationsLeaveAtTheirOwnRates)
{
	const uint32_t a = test_ip(2), b = test_ip(3), c = test_ip(4);
	uint64_t t0 = dp_tsc();

	for (uint32_t ip : {a, b, c})
		dp_arp_add_static(&port->arp, ip, &port->fctx.mac);
	repace(port, DP_PACE_DEADLINE, 0); /* no total cap */
	drain_nic(port);
	EXPECT_FALSE(dp_pace_active(port)); /* may be bypassed */
	ASSERT_EQ(0, dp_port_set_dest_rate(port, a, 10000000ull));
	EXPECT_TRUE(dp_pace_active(port)); /* a request to apply */
	ASSERT_EQ(0, dp_port_set_dest_rate(port, b, 40000000ull));
	ASSERT_EQ(0, dp_port_set_dest_default_rate(port, 20000000ull));
	EXPECT_EQ(20000000ull, dp_port_dest_default_rate(port));
	dp_port_flush(port, t0); /* the owning thread applies them */

	/* 16 frames each (the per-destination queue's floor) */
	DestRun r = run_dests(port, t0, {a, b, c}, 16, 20000);
	const double gap_a = kDestWire * 8 / 10.0, /* us at 10 Mbit/s */
		gap_b = kDestWire * 8 / 40.0, gap_c = kDestWire * 8 / 20.0;

	ASSERT_EQ(16u, r.sent_us[a].size());
	ASSERT_EQ(16u, r.sent_us[b].size());
	ASSERT_EQ(16u, r.sent_us[c].size()); /* c: the default rate */
	/* the first frame of each leaves at once: none waits behind
	 * another destination's deadline */
	EXPECT_EQ(0u, r.sent_us[a][0]);
	EXPECT_EQ(0u, r.sent_us[b][0]);
	EXPECT_EQ(0u, r.sent_us[c][0]);
	/* 15 gaps at each rate, within one poll */
	EXPECT_NEAR(15 * gap_a, (double)r.sent_us[a][15], 1.5);
	EXPECT_NEAR(15 * gap_b, (double)r.sent_us[b][15], 1.5);
	EXPECT_NEAR(15 * gap_c, (double)r.sent_us[c][15], 1.5);
	for (size_t i = 1; i < 16; i++)
		EXPECT_GE((double)(r.sent_us[b][i] - r.sent_us[b][i - 1]),
			  gap_b - 1.0) << i;

	ASSERT_EQ(0, dp_port_set_dest_default_rate(port, 0));
	ASSERT_EQ(0, dp_port_set_dest_rate(port, a, DP_DEST_RATE_DEFAULT));
	ASSERT_EQ(0, dp_port_set_dest_rate(port, b, DP_DEST_RATE_DEFAULT));
	EXPECT_TRUE(dp_pace_active(port));
	dp_port_flush(port, dp_tsc());
	EXPECT_FALSE(dp_port_tx_pending(port));
	EXPECT_FALSE(dp_pace_active(port));
}

TEST_F(DpPortTest, DestinationRatesUnderTheTotalCap)
{
	const uint32_t a = test_ip(2), b = test_ip(3);
	uint64_t t0;

	for (uint32_t ip : {a, b})
		dp_arp_add_static(&port->arp, ip, &port->fctx.mac);
	repace(port, DP_PACE_DEADLINE, 20000000ull); /* total 20 Mbit/s */
	t0 = dp_tsc();
	drain_nic(port);
	ASSERT_EQ(0, dp_port_set_dest_rate(port, a, 40000000ull));
	ASSERT_EQ(0, dp_port_set_dest_rate(port, b, 40000000ull));
	dp_port_flush(port, t0);

	/* 8 each: the total's queue holds 16 frames at 20 Mbit/s */
	DestRun r = run_dests(port, t0, {a, b}, 8, 20000);
	ASSERT_EQ(8u, r.sent_us[a].size());
	ASSERT_EQ(8u, r.sent_us[b].size());
	/* 16 frames at 20 Mbit/s in all: the last leaves after 15 gaps of
	 * the total, not after 7 of a destination's 40 Mbit/s.  The first
	 * gap is shortened by up to half (pace_frame_sent's credit for the
	 * real time between setup and t0). */
	uint64_t last = std::max(r.sent_us[a][7], r.sent_us[b][7]);
	EXPECT_GE((double)last, 14.5 * kDestWire * 8 / 20.0 - 2.0);
	EXPECT_LE((double)last, 15 * kDestWire * 8 / 20.0 + 2.0);
	/* and they alternate: round robin under the cap */
	EXPECT_NEAR((double)r.sent_us[a][7], (double)r.sent_us[b][7],
		    kDestWire * 8 / 20.0 + 2.0);

	ASSERT_EQ(0, dp_port_set_dest_rate(port, a, DP_DEST_RATE_DEFAULT));
	ASSERT_EQ(0, dp_port_set_dest_rate(port, b, DP_DEST_RATE_DEFAULT));
	repace(port, DP_PACE_DEADLINE, 0);
}

TEST_F(DpPortTest, DestinationTableBoundAndBadRates)
{
	const uint32_t a = test_ip(2), b = test_ip(3), c = test_ip(4);
	uint64_t t0 = dp_tsc();
	dp_stats st;

	for (uint32_t ip : {a, b, c})
		dp_arp_add_static(&port->arp, ip, &port->fctx.mac);
	port->cfg.pace_dests = 2;
	port->cfg.pace_dest_rate_bps = 20000000ull; /* dest_rate=20M */
	repace(port, DP_PACE_DEADLINE, 0);
	drain_nic(port);
	EXPECT_EQ(20000000ull, dp_port_dest_default_rate(port));

	/* three destinations, two flows: the third shares the overflow
	 * flow, still paced at the default */
	DestRun r = run_dests(port, t0, {a, b, c}, 16, 10000);
	dp_port_stats(port, &st);
	EXPECT_EQ(16u, st.pace_dest_overflow);
	for (uint32_t ip : {a, b, c}) {
		ASSERT_EQ(16u, r.sent_us[ip].size());
		EXPECT_NEAR(15 * kDestWire * 8 / 20.0,
			    (double)r.sent_us[ip][15], 1.5);
	}
	/* above the link, and the reserved address: refused at once */
	EXPECT_EQ(-EINVAL, dp_port_set_dest_rate(port, a, 20000000000ull));
	EXPECT_EQ(-EINVAL, dp_port_set_dest_rate(port, 0, 1000000ull));
	EXPECT_EQ(-EINVAL, dp_port_set_dest_default_rate(port,
							 20000000000ull));

	port->cfg.pace_dests = 256;
	port->cfg.pace_dest_rate_bps = 0;
	repace(port, DP_PACE_DEADLINE, 0);
}

/* 4 SCTP DATA packets, then a SACK-only packet, to 10.0.0.2 at t0; then
 * poll every virtual microsecond.  @return (chunk type, departure us). */
static std::vector<std::pair<uint8_t, uint64_t>> data_then_sack(dp_port *port,
								uint64_t t0)
{
	const uint64_t us = dp_tsc_hz() / 1000000;
	std::vector<std::pair<uint8_t, uint64_t>> seen;

	for (int i = 0; i < 5; i++) {
		rte_mbuf *m = dp_pkt_alloc(port);
		uint32_t len = i < 4 ? 1000 : 28;
		auto *p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);

		memset(p, 0, len);
		p[12] = i < 4 ? 0 : 3; /* DATA, or SACK */
		p[14] = (uint8_t)((len - 12) >> 8);
		p[15] = (uint8_t)(len - 12);
		EXPECT_EQ(0, dp_port_send(port, test_ip(2), DP_IPPROTO_SCTP, m,
					  t0));
	}
	for (uint64_t t = 0; t <= 5000 && seen.size() < 5; t++) {
		rte_mbuf *pkts[DP_BURST];
		uint16_t k;

		dp_port_flush(port, t0 + t * us);
		while ((k = rte_eth_rx_burst(port->port_id, 0, pkts,
					     DP_BURST)) > 0) {
			for (uint16_t j = 0; j < k; j++) {
				const uint8_t *f =
					rte_pktmbuf_mtod(pkts[j], uint8_t *);

				if (rte_pktmbuf_pkt_len(pkts[j]) > 34 + 12)
					seen.emplace_back(f[34 + 12], t);
			}
			rte_pktmbuf_free_bulk(pkts, k);
		}
	}
	return seen;
}

/* An SCTP packet without DATA (a SACK) leaves at once, not queued behind
 * paced data: per destination, and under a total rate (deadline mode). */
TEST_F(DpPortTest, SctpControlNotHeldBehindPacedData)
{
	for (int total = 0; total < 2; total++) {
		dp_arp_add_static(&port->arp, test_ip(2), &port->fctx.mac);
		repace(port, DP_PACE_DEADLINE, total ? 10000000ull : 0);
		drain_nic(port);
		if (!total) {
			ASSERT_EQ(0, dp_port_set_dest_rate(port, test_ip(2),
							   10000000ull));
		}
		uint64_t t0 = dp_tsc();

		dp_port_flush(port, t0);
		auto seen = data_then_sack(port, t0);

		ASSERT_EQ(5u, seen.size()) << "total " << total;
		/* the first DATA and the SACK at once; the other DATA
		 * about 846.4 us apart (1058 wire bytes at 10 Mbit/s) */
		size_t sack = 5;
		for (size_t i = 0; i < seen.size(); i++)
			if (seen[i].first == 3)
				sack = i;
		ASSERT_LT(sack, 5u) << "total " << total;
		EXPECT_EQ(0u, seen[sack].second) << "total " << total;
		EXPECT_GE(seen.back().second, 2 * 846u) << "total " << total;
		if (!total) {
			ASSERT_EQ(0, dp_port_set_dest_rate(
					     port, test_ip(2),
					     DP_DEST_RATE_DEFAULT));
		}
	}
	repace(port, DP_PACE_DEADLINE, 0);
}

/*
 * Queue pairs (issue 10.3, queues=N): over a memif pair with 2 queues,
 * what the client sends on its queue k arrives on the server's queue k
 * and nowhere else, while each queue pair is driven by its own thread
 * (queue 1 of both ports on one thread, queue 0 of both on this one,
 * sending both ways at once).  A frame sent on queue 1 before the
 * neighbour is resolved is handed to queue 0, which resolves it by ARP and
 * sends it there.  Per-queue counters count what each queue did; the
 * port's counters are their sum.  queues= out of range and a driver whose
 * queues do not map (net_ring) are refused.
 */
static void send_queue(dp_port *from, uint16_t q, uint32_t to_ip, uint8_t tag,
		       unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		rte_mbuf *m = dp_pkt_alloc(from);
		ASSERT_NE(nullptr, m);
		auto *p = (uint8_t *)rte_pktmbuf_append(m, 200);
		for (int k = 0; k < 200; k++)
			p[k] = (uint8_t)(tag + i + k);
		ASSERT_EQ(0, dp_port_send_queue(from, q, to_ip, DP_IPPROTO_EXP,
						m, dp_tsc()));
		/* the peer's ring holds what we burst: pace the sends a bit */
		if (i % 16 == 15)
			dp_port_flush_queue(from, q, dp_tsc());
	}
	dp_port_flush_queue(from, q, dp_tsc());
}

/* Poll queue @q of both ports; collect what @rx's queue @q delivers. */
static void collect_queue(dp_port *a, dp_port *b, dp_port *rx, uint16_t q,
			  std::vector<rte_mbuf *> *got, unsigned int want,
			  unsigned int max_polls)
{
	rte_mbuf *pkts[32];

	for (unsigned int i = 0; i < max_polls && got->size() < want; i++) {
		dp_port_poll_queue(a, q, dp_tsc());
		dp_port_poll_queue(b, q, dp_tsc());
		unsigned int n = dp_port_recv_queue(rx, q, pkts, 32);
		got->insert(got->end(), pkts, pkts + n);
	}
}

TEST_F(DpPortTest, QueuePairQueueKReachesThePeersQueueK)
{
	MemifPair mp;
	dp_config bad;
	dp_port *none = nullptr;

	EXPECT_NE(0, dp_config_parse("dev=net_memif9 ip=10.9.1.1 queues=9",
				     &bad));
	EXPECT_NE(0, dp_config_parse("dev=net_memif9 ip=10.9.1.1 queues=0",
				     &bad));
	ASSERT_EQ(0, dp_config_parse("dev=net_ring7 ip=10.9.1.1 queues=2 "
				     "link_wait_ms=100", &bad));
	EXPECT_EQ(-EINVAL, dp_port_open(&bad, &none));

	ASSERT_NO_FATAL_FAILURE(mp.config("dpq", "net_memif2", "net_memif3",
					  "10.9.1", "rx_ring=1024 queues=2",
					  "rx_ring=1024 queues=2"));
	ASSERT_NO_FATAL_FAILURE(mp.open());
	dp_port *srv = mp.srv, *cli = mp.cli;
	dp_config &cs = mp.cs, &cc = mp.cc;
	EXPECT_EQ(2u, dp_port_nb_queues(srv));
	EXPECT_EQ(2u, dp_port_nb_queues(cli));
	EXPECT_EQ(1u, dp_port_nb_queues(port));

	/* unresolved: queue 1 hands the frame to queue 0 (ARP is there) */
	std::vector<rte_mbuf *> got0, got1;
	send_queue(cli, 1, cs.ip_be, 3, 1);
	for (int i = 0; i < 400000 && got0.size() + got1.size() < 1; i++) {
		collect_queue(srv, cli, srv, 0, &got0, 1, 1);
		collect_queue(srv, cli, srv, 1, &got1, 1, 1);
	}
	ASSERT_EQ(1u, got0.size()) << "the unresolved frame goes via queue 0";
	ASSERT_EQ(0u, got1.size());
	check_burst(got0.data(), 1, cc.ip_be, 3);
	got0.clear();

	/* resolved: each queue pair on its own thread, both directions */
	const unsigned int n = 300;
	std::vector<rte_mbuf *> srv_q1, cli_q0, stray_srv0, stray_cli1;
	std::thread q1([&] {
		send_queue(cli, 1, cs.ip_be, 11, n);
		collect_queue(srv, cli, srv, 1, &srv_q1, n, 2000000);
	});
	send_queue(srv, 0, cc.ip_be, 77, n);
	collect_queue(srv, cli, cli, 0, &cli_q0, n, 2000000);
	q1.join();
	/* nothing crossed to the other queue */
	collect_queue(srv, cli, srv, 0, &stray_srv0, 1, 20000);
	collect_queue(srv, cli, cli, 1, &stray_cli1, 1, 20000);
	ASSERT_EQ(n, srv_q1.size());
	ASSERT_EQ(n, cli_q0.size());
	EXPECT_EQ(0u, stray_srv0.size()) << "queue 1's frames on queue 0";
	EXPECT_EQ(0u, stray_cli1.size()) << "queue 0's frames on queue 1";
	check_burst(srv_q1.data(), n, cc.ip_be, 11);
	check_burst(cli_q0.data(), n, cs.ip_be, 77);
	for (rte_mbuf *m : stray_srv0)
		dp_pkt_free(m);
	for (rte_mbuf *m : stray_cli1)
		dp_pkt_free(m);

	dp_stats s0, s1, c0, c1, all;
	dp_port_queue_stats(srv, 0, &s0);
	dp_port_queue_stats(srv, 1, &s1);
	dp_port_queue_stats(cli, 0, &c0);
	dp_port_queue_stats(cli, 1, &c1);
	EXPECT_EQ(n, s1.delivered);
	EXPECT_EQ(n, s1.rx_pkts);
	EXPECT_EQ(1u, s0.delivered); /* the frame sent before ARP */
	EXPECT_EQ(n, c1.tx_pkts);    /* queue 1 sent its own frames */
	EXPECT_EQ(0u, c1.rx_pkts);
	EXPECT_EQ(n, c0.delivered);
	EXPECT_EQ(0u, s1.tx_pkts);
	dp_port_stats(srv, &all);
	EXPECT_EQ(s0.rx_pkts + s1.rx_pkts, all.rx_pkts);
	EXPECT_EQ(n + 1, all.delivered);

	mp.close();
	mp.cleanup();
}

/* ---- zero checksum over memif (crc=none, RFC 9653) ---- */

TEST(DpCrc, ZeroChecksumFillAndReceiverRule)
{
	std::vector<uint8_t> pkt(100);
	dp_crc_backend be;

	ASSERT_EQ(0, dp_crc_parse("none", &be));
	EXPECT_EQ(DP_CRC_NONE, be);
	EXPECT_STREQ("none", dp_crc_name(DP_CRC_NONE));
	for (size_t i = 0; i < pkt.size(); i++)
		pkt[i] = (uint8_t)(i * 7 + 1);
	/* the sender stores 0, whatever the field held */
	dp_sctp_crc_fill(DP_CRC_NONE, pkt.data(), pkt.size());
	EXPECT_EQ(0, pkt[8] | pkt[9] | pkt[10] | pkt[11]);
	/* the receiver in zero mode accepts 0 unverified ... */
	EXPECT_EQ(DP_CRC_RX_ZERO,
		  dp_sctp_crc_check(DP_CRC_NONE, pkt.data(), pkt.size()));
	EXPECT_TRUE(dp_sctp_crc_ok(DP_CRC_NONE, pkt.data(), pkt.size()));
	/* ... and one that verifies every CRC refuses it, named */
	EXPECT_EQ(DP_CRC_RX_BAD_ZERO,
		  dp_sctp_crc_check(DP_CRC_ISAL, pkt.data(), pkt.size()));
	EXPECT_FALSE(dp_sctp_crc_ok(DP_CRC_ISAL, pkt.data(), pkt.size()));
	/* a nonzero checksum is verified in zero mode too */
	dp_sctp_crc_fill(DP_CRC_ISAL, pkt.data(), pkt.size());
	EXPECT_EQ(DP_CRC_RX_OK,
		  dp_sctp_crc_check(DP_CRC_NONE, pkt.data(), pkt.size()));
	pkt[60] ^= 0x04;
	EXPECT_EQ(DP_CRC_RX_BAD,
		  dp_sctp_crc_check(DP_CRC_NONE, pkt.data(), pkt.size()));
	EXPECT_FALSE(dp_sctp_crc_ok(DP_CRC_NONE, pkt.data(), pkt.size()));
	EXPECT_EQ(DP_CRC_RX_BAD,
		  dp_sctp_crc_check(DP_CRC_ISAL, pkt.data(), pkt.size()));
}

static std::string g_crc_log;

static void crc_log_sink(enum sdp_log_level, enum sdp_log_comp,
			 const char *msg)
{
	g_crc_log += msg;
	g_crc_log += "\n";
}

static size_t count_of(const std::string &s, const std::string &what)
{
	size_t n = 0;

	for (size_t at = s.find(what); at != std::string::npos;
	     at = s.find(what, at + 1))
		n++;
	return n;
}

/* An SCTP packet (common header + a DATA chunk's type, 0x5a elsewhere,
 * byte 20 + @tag ...) of @len bytes from @from to @to_ip; the frame stays
 * in the TX buffer (the neighbour is resolved) until flushed.  @return
 * its SCTP header in the frame, or nullptr. */
static uint8_t *send_sctp(dp_port *from, uint32_t to_ip, uint8_t tag,
			  unsigned int len)
{
	rte_mbuf *m = dp_pkt_alloc(from);

	if (m == nullptr)
		return nullptr;
	auto *p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
	memset(p, 0x5a, len);
	p[12] = 0; /* DATA */
	for (unsigned int k = 20; k < len; k++)
		p[k] = (uint8_t)(tag + k);
	if (dp_port_send(from, to_ip, DP_IPPROTO_SCTP, m, dp_tsc()) != 0 ||
	    from->nb_tx == 0)
		return nullptr;
	return rte_pktmbuf_mtod(from->tx_buf[from->nb_tx - 1], uint8_t *) +
	       RTE_ETHER_HDR_LEN + 20;
}

static void check_sctp(rte_mbuf **got, unsigned int n, uint8_t tag,
		       unsigned int len, bool zero_cksum)
{
	for (unsigned int i = 0; i < n; i++) {
		const uint8_t *p = rte_pktmbuf_mtod(got[i], const uint8_t *);
		uint32_t ck;

		ASSERT_EQ(len, rte_pktmbuf_data_len(got[i]));
		memcpy(&ck, p + 8, 4);
		EXPECT_EQ(zero_cksum, ck == 0) << i;
		for (unsigned int k = 20; k < len; k++)
			ASSERT_EQ((uint8_t)(tag + k), p[k]) << i << " " << k;
		dp_pkt_free(got[i]);
	}
}

/*
 * A memif pair with crc=auto runs the zero checksum (both ends are our
 * dataplanes): SCTP frames leave with checksum 0, no CRC is computed on
 * either end (crc_sw stays 0) and every byte arrives.  A zero-mode
 * receiver still verifies a nonzero checksum: a right one is delivered, a
 * wrong one dropped as sctp_crc (RFC 9653's receiver rule).  crc=isal
 * forces the software CRC back on memif.
 */
TEST_F(DpPortTest, MemifZeroChecksumByDefaultNonzeroStillVerified)
{
	const unsigned int N = 20, LEN = 1200;
	std::vector<rte_mbuf *> got(64);

	for (const char *mode : { "", "crc=isal" }) {
		MemifPair mp;
		bool zero = mode[0] == '\0';

		ASSERT_NO_FATAL_FAILURE(mp.config("dpcrc", "net_memif10",
						  "net_memif11", "10.9.20",
						  mode, mode));
		ASSERT_NO_FATAL_FAILURE(mp.open());
		dp_port *srv = mp.srv, *cli = mp.cli;
		EXPECT_EQ(zero ? DP_CRC_NONE : DP_CRC_ISAL, dp_port_crc(srv));
		EXPECT_EQ(zero ? DP_CRC_NONE : DP_CRC_ISAL, dp_port_crc(cli));
		/* resolve the neighbours both ways first */
		send_burst(srv, mp.cc.ip_be, 1, 1);
		ASSERT_EQ(1u, poll_pair(srv, cli, cli, got.data(), 1));
		check_burst(got.data(), 1, mp.cs.ip_be, 1);
		dp_stats s0, c0, s1, c1;
		dp_port_stats(srv, &s0);
		dp_port_stats(cli, &c0);
		for (unsigned int i = 0; i < N; i++) {
			uint8_t *h = send_sctp(srv, mp.cc.ip_be, 3, LEN);
			ASSERT_NE(nullptr, h);
			uint32_t ck;
			memcpy(&ck, h + 8, 4);
			EXPECT_EQ(zero, ck == 0) << "frame " << i << " mode "
						 << mode;
		}
		dp_port_flush(srv, dp_tsc());
		ASSERT_EQ(N, poll_pair(srv, cli, cli, got.data(), N)) << mode;
		ASSERT_NO_FATAL_FAILURE(
			check_sctp(got.data(), N, 3, LEN, zero));
		dp_port_stats(srv, &s1);
		dp_port_stats(cli, &c1);
		if (zero) {
			EXPECT_EQ(0u, s1.crc_sw) << "the sender computed CRCs";
			EXPECT_EQ(0u, c1.crc_sw) << "the receiver computed CRCs";
			EXPECT_EQ(s0.crc_zero_tx + N, s1.crc_zero_tx);
			EXPECT_EQ(c0.crc_zero_rx + N, c1.crc_zero_rx);
		} else {
			EXPECT_EQ(s0.crc_sw + N, s1.crc_sw);
			EXPECT_EQ(c0.crc_sw + N, c1.crc_sw);
			EXPECT_EQ(0u, s1.crc_zero_tx + c1.crc_zero_rx);
		}
		EXPECT_EQ(0u, c1.drops[DP_DROP_SCTP_CRC] +
				      c1.drops[DP_DROP_SCTP_CRC_ZERO]);

		/* a nonzero checksum: right is delivered, wrong dropped */
		uint8_t *h = send_sctp(srv, mp.cc.ip_be, 5, LEN);
		ASSERT_NE(nullptr, h);
		dp_sctp_crc_fill(DP_CRC_ISAL, h, LEN);
		h = send_sctp(srv, mp.cc.ip_be, 6, LEN);
		ASSERT_NE(nullptr, h);
		dp_sctp_crc_fill(DP_CRC_ISAL, h, LEN);
		h[LEN - 9] ^= 0x20; /* a bit error after the CRC */
		dp_port_flush(srv, dp_tsc());
		ASSERT_EQ(1u, poll_pair(srv, cli, cli, got.data(), 2)) << mode;
		ASSERT_NO_FATAL_FAILURE(check_sctp(got.data(), 1, 5, LEN,
						   false));
		dp_stats c2;
		dp_port_stats(cli, &c2);
		EXPECT_EQ(c1.drops[DP_DROP_SCTP_CRC] + 1,
			  c2.drops[DP_DROP_SCTP_CRC]) << mode;
		EXPECT_EQ(c1.crc_sw + 2, c2.crc_sw) << mode;
		EXPECT_EQ(c1.crc_zero_rx, c2.crc_zero_rx) << mode;
		mp.close();
		mp.cleanup();
	}
}

/*
 * A port that verifies every CRC (crc=isal) facing a zero-mode peer
 * (crc=none, memif's default): every zero-checksum packet is dropped and
 * counted as sctp_crc_zero, and the cause and the fix are logged once.
 * The other way the zero-mode port verifies the CRCs it gets and delivers.
 */
TEST_F(DpPortTest, MemifCrcMismatchCountedAndNamedOnce)
{
	const unsigned int N = 5, LEN = 300;
	std::vector<rte_mbuf *> got(64);
	MemifPair mp;

	ASSERT_NO_FATAL_FAILURE(mp.config("dpcrcm", "net_memif12",
					  "net_memif13", "10.9.21", "crc=auto",
					  "crc=isal"));
	ASSERT_NO_FATAL_FAILURE(mp.open());
	dp_port *srv = mp.srv, *cli = mp.cli;
	ASSERT_EQ(DP_CRC_NONE, dp_port_crc(srv));
	ASSERT_EQ(DP_CRC_ISAL, dp_port_crc(cli));
	send_burst(srv, mp.cc.ip_be, 1, 1);
	ASSERT_EQ(1u, poll_pair(srv, cli, cli, got.data(), 1));
	check_burst(got.data(), 1, mp.cs.ip_be, 1);

	dp_stats c0, c1, s0, s1;
	dp_port_stats(cli, &c0);
	g_crc_log.clear();
	sdp_log_set_sink(crc_log_sink);
	for (unsigned int i = 0; i < N; i++)
		ASSERT_NE(nullptr, send_sctp(srv, mp.cc.ip_be, 2, LEN));
	dp_port_flush(srv, dp_tsc());
	unsigned int n = poll_pair(srv, cli, cli, got.data(), 1);
	for (int i = 0; i < 1000; i++) { /* let every frame arrive */
		dp_port_poll(srv, dp_tsc());
		dp_port_poll(cli, dp_tsc());
	}
	sdp_log_set_sink(nullptr);
	EXPECT_EQ(0u, n) << "a zero-checksum packet passed crc=isal";
	dp_port_stats(cli, &c1);
	EXPECT_EQ(c0.drops[DP_DROP_SCTP_CRC_ZERO] + N,
		  c1.drops[DP_DROP_SCTP_CRC_ZERO]);
	EXPECT_EQ(c0.drops[DP_DROP_SCTP_CRC], c1.drops[DP_DROP_SCTP_CRC]);
	EXPECT_STREQ("sctp_crc_zero", dp_drop_name(DP_DROP_SCTP_CRC_ZERO));
	EXPECT_EQ(1u, count_of(g_crc_log, "with checksum 0")) << g_crc_log;
	EXPECT_NE(std::string::npos, g_crc_log.find("from 10.9.21.1"))
		<< g_crc_log;
	EXPECT_NE(std::string::npos, g_crc_log.find("crc=none")) << g_crc_log;
	EXPECT_NE(std::string::npos,
		  g_crc_log.find("set crc=isal on the peer")) << g_crc_log;

	/* the zero-mode end verifies the CRCs the other sends */
	dp_port_stats(srv, &s0);
	for (unsigned int i = 0; i < N; i++)
		ASSERT_NE(nullptr, send_sctp(cli, mp.cs.ip_be, 4, LEN));
	dp_port_flush(cli, dp_tsc());
	ASSERT_EQ(N, poll_pair(srv, cli, srv, got.data(), N));
	ASSERT_NO_FATAL_FAILURE(check_sctp(got.data(), N, 4, LEN, false));
	dp_port_stats(srv, &s1);
	EXPECT_EQ(s0.crc_sw + N, s1.crc_sw);
	EXPECT_EQ(s0.crc_zero_rx, s1.crc_zero_rx);
	mp.close();
	mp.cleanup();
}

/* crc=none where there is a wire (af_packet, here on lo; any port but
 * memif) is refused, naming the setting and the fix. */
TEST_F(DpPortTest, ZeroChecksumRefusedOffMemif)
{
	auto c_p = std::make_unique<dp_config>();
	dp_config &c = *c_p;
	dp_port *p = nullptr;

	ASSERT_EQ(0, dp_config_parse("dev=net_af_packet7,iface=lo "
				     "ip=10.9.22.1/24 crc=none "
				     "link_wait_ms=100", &c));
	EXPECT_EQ(DP_CRC_NONE, c.crc);
	g_crc_log.clear();
	sdp_log_set_sink(crc_log_sink);
	int rc = dp_port_open(&c, &p);
	sdp_log_set_sink(nullptr);
	EXPECT_EQ(-EINVAL, rc) << g_crc_log;
	EXPECT_EQ(nullptr, p);
	EXPECT_NE(std::string::npos, g_crc_log.find("crc=none")) << g_crc_log;
	EXPECT_NE(std::string::npos, g_crc_log.find("net_af_packet"))
		<< g_crc_log;
	EXPECT_NE(std::string::npos,
		  g_crc_log.find("use crc=auto or crc=isal")) << g_crc_log;
	uint16_t pid;
	EXPECT_NE(0, rte_eth_dev_get_port_by_name("net_af_packet7", &pid))
		<< "refused port left behind";
}

/*
 * Closing a port while mbufs of its pools are still referenced (trust gap
 * 1, session 8: usrsctp keeps received packets, rx_ext, and chained
 * packets' external buffers; an application may keep its own): the pools
 * stay allocated so those late frees do not write into freed memory (before
 * the fix both pools were freed, rte_mempool_lookup found neither).  A
 * held port (dp_port_hold: an sg endpoint) closes only at its last
 * dp_port_unhold, then frees a pool with nothing in use.
 */
TEST_F(DpPortTest, CloseKeepsPoolsWhoseMbufsAreStillReferenced)
{
	dp_config c2;
	dp_port *p2 = nullptr;

	ASSERT_EQ(0, dp_config_parse("dev=net_ring5 ip=10.0.5.1 mem=256 "
				     "link_wait_ms=2000 rx_ring=256", &c2));
	ASSERT_EQ(0, dp_port_open(&c2, &p2));
	std::string pool = p2->pool->name;
	ASSERT_NE(nullptr, p2->ext_pool);
	std::string ext = p2->ext_pool->name;
	rte_mbuf *m = dp_pkt_alloc(p2);
	rte_mbuf *e = dp_pkt_ext_alloc(p2);
	ASSERT_NE(nullptr, m);
	ASSERT_NE(nullptr, e);
	dp_port_close(p2);
	EXPECT_NE(nullptr, rte_mempool_lookup(pool.c_str()));
	EXPECT_NE(nullptr, rte_mempool_lookup(ext.c_str()));
	/* the late frees go back into pools that still exist */
	rte_pktmbuf_free(m);
	rte_pktmbuf_free(e);
	rte_mempool *mp = rte_mempool_lookup(pool.c_str());
	if (mp != nullptr) {
		EXPECT_EQ(0u, rte_mempool_in_use_count(mp));
	}

	/* held: the close waits for the last user */
	ASSERT_EQ(0, dp_config_parse("dev=net_ring6 ip=10.0.6.1 mem=256 "
				     "link_wait_ms=2000 rx_ring=256", &c2));
	ASSERT_EQ(0, dp_port_open(&c2, &p2));
	pool = p2->pool->name;
	dp_port_hold(p2);
	dp_port_hold(p2);
	dp_port_close(p2);
	dp_port_close(p2); /* twice: still one deferred close */
	EXPECT_NE(nullptr, rte_mempool_lookup(pool.c_str()));
	dp_port_poll(p2, dp_tsc()); /* still a port */
	dp_port_unhold(p2);
	EXPECT_NE(nullptr, rte_mempool_lookup(pool.c_str()));
	dp_port_unhold(p2);
	EXPECT_EQ(nullptr, rte_mempool_lookup(pool.c_str()));
}

/*
 * Trust gap 2 (session 8): DPDK 22.11's memif_disconnect, run on the EAL
 * interrupt thread when a peer dies, unmaps the regions an rx/tx burst
 * on the polling thread may be reading (vanish-stress: the survivor's
 * SIGSEGV in eth_memif_tx).  dp_gate.c lets that thread run callbacks
 * only between memif bursts.  Here an RX callback (it runs inside
 * rte_eth_rx_burst) stretches every burst to 100 us and flags it, and an
 * alarm (run on the interrupt thread, as memif's control channel is)
 * samples the flag 300 times: never inside a burst.  Without the gate
 * most samples land inside one.
 */
static volatile int g_gate_in_burst;
static std::atomic<unsigned> g_gate_probes, g_gate_overlaps;
static uint64_t g_gate_bursts;

static uint16_t gate_rx_cb(uint16_t port_id, uint16_t queue,
			   rte_mbuf **pkts, uint16_t nb_pkts,
			   uint16_t max_pkts, void *arg)
{
	(void)port_id;
	(void)queue;
	(void)pkts;
	(void)max_pkts;
	(void)arg;
	g_gate_in_burst = 1;
	g_gate_bursts++;
	rte_delay_us_block(100);
	g_gate_in_burst = 0;
	return nb_pkts;
}

static void gate_probe(void *arg)
{
	(void)arg;
	if (g_gate_in_burst)
		g_gate_overlaps++;
	if (++g_gate_probes < 300)
		rte_eal_alarm_set(50, gate_probe, nullptr);
}

TEST_F(DpPortTest, MemifBurstsNeverOverlapTheInterruptThread)
{
	MemifPair mp;

	ASSERT_NO_FATAL_FAILURE(mp.config("dpgate", "net_memif12",
					  "net_memif13", "10.9.12",
					  "rx_ring=256 memif_gate=1",
					  "rx_ring=256 memif_gate=1"));
	ASSERT_NO_FATAL_FAILURE(mp.open());
	const rte_eth_rxtx_callback *cb = rte_eth_add_rx_callback(
		dp_port_id(mp.cli), 0, gate_rx_cb, nullptr);
	ASSERT_NE(nullptr, cb);
	g_gate_probes = 0;
	g_gate_overlaps = 0;
	ASSERT_EQ(0, rte_eal_alarm_set(50, gate_probe, nullptr));
	uint64_t polls = 0, t0 = dp_tsc();
	uint64_t end = dp_tsc() + dp_ms_to_tsc(30000);
	g_gate_bursts = 0;
	for (; g_gate_probes < 300 && dp_tsc() < end; polls++)
		dp_port_poll(mp.cli, dp_tsc());
	unsigned probes = g_gate_probes, overlaps = g_gate_overlaps;
	rte_eal_alarm_cancel(gate_probe, (void *)-1);
	rte_eth_remove_rx_callback(dp_port_id(mp.cli), 0, cb);
	fprintf(stderr, "gate: %u probes on the interrupt thread over %"
		PRIu64 " polls (%" PRIu64 " bursts of 100 us in %.2f s), %u "
		"inside a burst\n", probes, polls, g_gate_bursts,
		(double)(dp_tsc() - t0) / (double)dp_tsc_hz(), overlaps);
	EXPECT_EQ(300u, probes);
	EXPECT_EQ(0u, overlaps);
	mp.close();
	mp.cleanup();
}

/*
 * memif_gate=auto: a memif port is gated unless its configuration paces
 * it (rate=, dest_rate=: the gate's closed spells would cost pacing
 * precision under load); auto is the default; 0 and 1 as given.
 */
/* Opens a memif pair with @srv_extra / @cli_extra and checks each port's
 * memif_gated against @srv_gated / @cli_gated (@why names the case). */
static void check_memif_gated(const char *tag, const char *srv_dev,
			      const char *cli_dev, const char *net,
			      const std::string &srv_extra,
			      const std::string &cli_extra, uint64_t srv_gated,
			      uint64_t cli_gated, const char *why)
{
	struct dp_stats s;
	MemifPair mp;

	ASSERT_NO_FATAL_FAILURE(mp.config(tag, srv_dev, cli_dev, net,
					  srv_extra, cli_extra));
	ASSERT_NO_FATAL_FAILURE(mp.open());
	dp_port_stats(mp.srv, &s);
	EXPECT_EQ(srv_gated, s.memif_gated) << why << ": server";
	dp_port_stats(mp.cli, &s);
	EXPECT_EQ(cli_gated, s.memif_gated) << why << ": client";
	mp.close();
	mp.cleanup();
}

TEST_F(DpPortTest, MemifGateAutoGatesUnpacedPortsOnly)
{
	check_memif_gated("dpgateauto", "net_memif14", "net_memif15",
			  "10.9.14", "rx_ring=256 memif_gate=auto",
			  "rx_ring=256 rate=500M memif_gate=auto", 1, 0,
			  "auto: unpaced server gated, paced client not");
	check_memif_gated("dpgateoff", "net_memif16", "net_memif17",
			  "10.9.16", "rx_ring=256 memif_gate=0",
			  "rx_ring=256 rate=500M memif_gate=1", 0, 1,
			  "memif_gate=0 server, memif_gate=1 on a paced "
			  "client");
	check_memif_gated("dpgatedef", "net_memif18", "net_memif19",
			  "10.9.18", "rx_ring=256", "rx_ring=256 rate=500M",
			  1, 0,
			  "default (auto): unpaced server gated, paced client "
			  "not");
}

static void gate_note(void *arg)
{
	__atomic_store_n((int *)arg, 1, __ATOMIC_RELEASE);
}

/*
 * The gate closes only when the EAL interrupt thread has work (one of its
 * other sources is readable): a closed spell refuses bursts, and on a
 * loaded machine it lasts until that thread is scheduled again (the
 * sender's TX buffer then filled: ENOBUFS in QueuePairQueueKReachesThe-
 * PeersQueueK, 1 run in 3 with 10 ms slices).  So 300 ms of traffic over a
 * gated pair see no closed spell (slices: ~30), and an alarm, work for
 * that thread, closes it at least once and runs with it closed.
 */
static int g_gate_seen_closed;

static void gate_alarm_check(void *arg)
{
	g_gate_seen_closed =
		(__atomic_load_n(&dp_gate.word, __ATOMIC_ACQUIRE) &
		 DP_GATE_INTR) != 0;
	gate_note(arg);
}

TEST_F(DpPortTest, MemifGateClosesOnlyWhenTheInterruptThreadHasWork)
{
	MemifPair mp;

	ASSERT_NO_FATAL_FAILURE(mp.config("dpgateidle", "net_memif20",
					  "net_memif21", "10.9.20",
					  "rx_ring=1024", "rx_ring=1024"));
	ASSERT_NO_FATAL_FAILURE(mp.open());
	dp_stats s;
	dp_port_stats(mp.cli, &s);
	ASSERT_EQ(1u, s.memif_gated) << "the default gates unpaced memif";
	/* settle: the handshake's last control messages */
	uint64_t end = dp_tsc() + dp_ms_to_tsc(200);
	while (dp_tsc() < end) {
		dp_port_poll(mp.srv, dp_tsc());
		dp_port_poll(mp.cli, dp_tsc());
	}
	uint64_t before = dp_gate_closings(), frames = 0;
	std::vector<rte_mbuf *> got;
	end = dp_tsc() + dp_ms_to_tsc(300);
	while (dp_tsc() < end) {
		send_queue(mp.cli, 0, mp.cs.ip_be, 5, 16);
		collect_queue(mp.srv, mp.cli, mp.srv, 0, &got, 16, 100000);
		frames += got.size();
		for (rte_mbuf *m : got)
			dp_pkt_free(m);
		got.clear();
	}
	uint64_t closings = dp_gate_closings() - before;
	fprintf(stderr, "gate: %" PRIu64 " closed spells over 300 ms, %"
		PRIu64 " frames\n", closings, frames);
	EXPECT_GT(frames, 0u);
	/* unrelated EAL work may close it once or twice; slices: ~30 */
	EXPECT_LE(closings, 2u);

	int done = 0;
	before = dp_gate_closings();
	ASSERT_EQ(0, rte_eal_alarm_set(1000, gate_alarm_check, &done));
	end = dp_tsc() + dp_ms_to_tsc(10000);
	while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE) && dp_tsc() < end)
		dp_port_poll(mp.cli, dp_tsc());
	ASSERT_EQ(1, __atomic_load_n(&done, __ATOMIC_ACQUIRE));
	EXPECT_EQ(1, g_gate_seen_closed) << "the alarm ran with the gate open";
	EXPECT_GE(dp_gate_closings() - before, 1u);
	mp.close();
	mp.cleanup();
}
