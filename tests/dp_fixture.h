/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_fixture.h - what the dataplane's tests (test_dp*.cc) share: frame
 * builders, the DpPortTest fixture (a real EAL on a net_ring loopback
 * port, no NIC or hugepages, brought up once per test program), TX
 * back-pressure and pacer helpers, and a memif pair opened in this process.
 */
#ifndef SDP_TESTS_DP_FIXTURE_H
#define SDP_TESTS_DP_FIXTURE_H

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

#include <rte_alarm.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_mempool.h>

#include "dp_internal.h"

namespace dptest {

inline const rte_ether_addr kOurMac = { { 0x02, 0, 0, 0, 0, 0x01 } };

inline const rte_ether_addr kPeerMac = { { 0x02, 0, 0, 0, 0, 0x02 } };

inline uint32_t ipv4(const char *s)
{
	uint32_t v = 0;

	EXPECT_EQ(0, dp_parse_ip(s, &v));
	return v;
}

/* A valid Ethernet/IPv4/SCTP (or UDP-encapsulated) frame. */
inline std::vector<uint8_t> make_frame(uint8_t proto, uint16_t l4_len,
				uint16_t udp_port = 0)
{
	uint16_t hlen = dp_frame_hdr_len(udp_port != 0);
	std::vector<uint8_t> f(hlen + l4_len, 0xab);

	dp_frame_build(f.data(), &kPeerMac, &kOurMac, ipv4("10.0.0.2"),
		       ipv4("10.0.0.1"), proto, udp_port, udp_port, l4_len, 7, false);
	return f;
}

inline void fix_ip_cksum(std::vector<uint8_t> &f)
{
	auto *h = reinterpret_cast<rte_ipv4_hdr *>(f.data() + 14);

	h->hdr_checksum = 0;
	h->hdr_checksum = rte_ipv4_cksum(h);
}

inline dp_frame_ctx ctx(uint16_t udp_port = 0)
{
	dp_frame_ctx c{};

	c.mac = kOurMac;
	c.ip_be = ipv4("10.0.0.1");
	c.udp_port = udp_port;
	return c;
}

class DpPortTest : public ::testing::Test {
protected:
	static inline dp_port *port;
	static inline dp_config cfg;

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

/* Fill the NIC (net_ring's loopback ring) until it refuses a frame, then
 * fill queue 0's TX buffer: the port is under TX back-pressure.  @return frames the
 * ring holds (drained again by drain_nic). */
inline unsigned int fill_nic(dp_port *port)
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

inline unsigned int drain_nic(dp_port *port)
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

/* Replace the port's pacer by one in @mode at @rate_bps (10G link). */
inline void repace(dp_port *port, dp_pace_mode mode, uint64_t rate_bps)
{
	dp_pace_release(port);
	port->cfg.pace_mode = mode;
	port->cfg.pace_rate_bps = rate_bps;
	port->cfg.link_bps = 10000000000ull;
	ASSERT_EQ(0, dp_tx_pace_setup(port, 10000));
}

inline unsigned int poll_pair(dp_port *a, dp_port *b, dp_port *rx,
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

inline void send_burst(dp_port *from, uint32_t to_ip, uint8_t tag,
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

inline void check_burst(rte_mbuf **got, unsigned int n, uint32_t src_ip,
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

} /* namespace dptest */

#endif /* SDP_TESTS_DP_FIXTURE_H */
