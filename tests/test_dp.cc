/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_dp.cc - unit tests of the dataplane's framing (dp_frame.c, the
 * malformed-frame table, the SCTP chunk walk of dp_chunk.h), its
 * configuration (dp_config.c) and the idle back-off.  The other concepts
 * have their own files: test_dp_arp.cc, test_dp_crc.cc, test_dp_port.cc
 * (RX/TX through a port), test_dp_pace.cc (the pacer on a port),
 * test_dp_memif.cc (memif pairs, queue pairs, the gate); the shared
 * fixture is dp_fixture.h.
 */
#include "dp_fixture.h"

#include <rte_version.h>

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

namespace dptest {
namespace {

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

} /* namespace */
} /* namespace dptest */
