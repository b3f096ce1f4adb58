/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_dp_crc.cc - SCTP CRC32c (dp_crc.c): every back-end against the RFC
 * value and each other, over chained segments, bad CRCs dropped on a port,
 * and the zero checksum over memif (crc=none, RFC 9653).
 */
#include "dp_fixture.h"

namespace dptest {
namespace {

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

/* XINUSE (XGETBV with ECX=1): which XSAVE state components are not in
 * their initial state; 0 when the CPU cannot report it. */
static uint64_t xinuse(bool *ok)
{
	uint32_t a, b, c, d;

	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d)
			 : "a"(0xd), "c"(1));
	*ok = (a >> 2) & 1;
	if (!*ok)
		return 0;
	__asm__ volatile("xgetbv" : "=a"(a), "=d"(d) : "c"(1));
	return ((uint64_t)d << 32) | a;
}

/*
 * The CRC leaves the upper halves of the vector registers clean (AVX state,
 * XSAVE component 2, and ZMM_Hi256, component 6, in their initial state):
 * dirty upper state makes the application's legacy-SSE code that runs next
 * carry a false dependency on every register it writes (LAMMPS' pair loop
 * 2-3x slower over af_packet).  ISA-L's AVX-512 CRC leaves it dirty; the
 * back-end clears it.
 */
TEST(DpCrc, LeavesVectorUpperStateClean)
{
	std::vector<uint8_t> pkt(9000, 0x5a);
	const uint64_t upper = (1u << 2) | (1u << 6);
	bool ok;

	if (!__builtin_cpu_supports("avx")) {
		SUCCEED() << "no AVX: no upper vector state to leave dirty";
		return;
	}
	xinuse(&ok);
	if (!ok)
		GTEST_SKIP() << "CPU cannot report XINUSE (XGETBV ECX=1): "
				"the upper vector state cannot be observed";
	for (auto be : { DP_CRC_ISAL, DP_CRC_SSE42, DP_CRC_TABLE }) {
		volatile uint32_t c = dp_crc32c(be, pkt.data(), pkt.size());
		uint64_t in_use = xinuse(&ok);

		(void)c;
		EXPECT_EQ(0u, in_use & upper)
			<< dp_crc_name(be) << ": XINUSE 0x" << std::hex
			<< in_use;
		dp_sctp_crc_fill(be, pkt.data(), pkt.size());
		in_use = xinuse(&ok);
		EXPECT_EQ(0u, in_use & upper)
			<< dp_crc_name(be) << " (packet): XINUSE 0x"
			<< std::hex << in_use;
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
			const dp_txq *txq = &port->txq[0];
			rte_mbuf *tx = txq->buf[txq->nb_tx - 1];
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
	    from->txq[0].nb_tx == 0)
		return nullptr;
	return rte_pktmbuf_mtod(from->txq[0].buf[from->txq[0].nb_tx - 1],
				uint8_t *) +
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

} /* namespace */
} /* namespace dptest */
