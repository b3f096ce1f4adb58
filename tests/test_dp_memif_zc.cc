/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_dp_memif_zc.cc - a memif pair whose client runs DPDK 22.11's
 * zero-copy mode (devargs zero-copy=yes): the client's RX ring is stocked
 * with mbufs of its own pool, which the server writes into, and the
 * client's TX descriptors point at the mbufs it sends, which the server
 * reads; only the server copies.
 *
 * Two processes, as two ranks: a forked server (its own EAL) echoes every
 * frame back; this process's EAL is brought up by the zero-copy client's
 * own config.  DPDK refuses such a port ("Zero-copy doesn't support
 * multi-file segments") unless the EAL was given --single-file-segments,
 * which dp_eal_init adds for such devargs.
 *
 * The server's port starts 1.5 s after its EAL probed it, so the client
 * connects first and is refused: a disconnect, after which DPDK's memif
 * has closed the EAL's memory file and the reconnect needs it back
 * (dp_memif_zc.c).
 *
 * Checked: frames of every size up to the MTU (9000) go out and come back
 * intact, every byte, in order; the client's stats say zero-copy and its
 * pool lends the RX ring a stock of mbufs (a copying memif client keeps
 * none: it allocates one per frame received and frees each sent one at
 * once); the client's close handshake still works (the server answers its
 * BYE) and a new zero-copy client on the same socket moves frames again.
 */
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_mbuf.h>

#include "dp.h"

namespace {

const unsigned int MTU = 9000;
const unsigned int RING = 1024;	/* memif's default rsize=10 */
const uint32_t SRV_IP_BE = RTE_BE32(0x0a090701); /* 10.9.7.1 */

std::string dir_, sock_;
pid_t srv_pid_ = -1;
dp_port *cli_;

std::string cli_text(const char *name)
{
	return std::string("dev=") + name + ",role=client,id=0,socket=" +
	       sock_ + ",socket-abstract=no,zero-copy=yes ip=10.9.7.2/24 mtu=" +
	       std::to_string(MTU) + " link_wait_ms=30000 rx_ring=1024 "
	       "bye_wait_ms=10000 prefix=sdp-zcc-" + std::to_string(getpid());
}

/* The forked server: echo every frame to its sender until two clients
 * have said BYE (or 240 s).  Exit 0 when it saw both, copied (it is no
 * zero-copy port) and dropped nothing. */
int server_main(void)
{
	std::string text = "dev=net_memif0,role=server,id=0,socket=" + sock_ +
			   ",socket-abstract=no ip=10.9.7.1/24 mtu=" +
			   std::to_string(MTU) +
			   " link_wait_ms=30000 rx_ring=1024 prefix=sdp-zcs-" +
			   std::to_string(getpid());
	static dp_config cs;
	dp_port *srv = nullptr;
	rte_mbuf *m[32];
	dp_stats st;
	uint64_t end = 0;

	if (dp_config_parse(text.c_str(), &cs) != 0 || dp_eal_init(&cs) != 0) {
		fprintf(stderr, "server: no EAL for %s\n", text.c_str());
		return 2;
	}
	/* the EAL probed the server (its socket exists); until its port
	 * starts it refuses the client ("ID not found"), which disconnects
	 * the client after it set up its regions (dp_memif_zc.c) */
	usleep(1500 * 1000);
	if (dp_port_open(&cs, &srv) != 0) {
		fprintf(stderr, "server: cannot open %s\n", text.c_str());
		return 2;
	}
	end = dp_tsc() + 240 * dp_tsc_hz();
	for (;;) {
		dp_port_poll(srv, dp_tsc());
		unsigned int r = dp_port_recv(srv, m, 32);

		for (unsigned int i = 0; i < r; i++) {
			struct dp_pkt_info info;
			rte_mbuf *e = dp_pkt_alloc(srv);
			uint32_t len = rte_pktmbuf_pkt_len(m[i]);

			dp_pkt_info(m[i], &info);
			if (e != nullptr) {
				memcpy(rte_pktmbuf_append(e, (uint16_t)len),
				       rte_pktmbuf_mtod(m[i], void *), len);
				dp_port_send(srv, info.src_ip_be,
					     DP_IPPROTO_EXP, e, dp_tsc());
			}
			dp_pkt_free(m[i]);
		}
		dp_port_flush(srv, dp_tsc());
		dp_port_stats(srv, &st);
		if (st.bye_rx >= 2 || dp_tsc() > end)
			break;
		if (r == 0)
			usleep(20);
	}
	dp_port_stats(srv, &st);
	uint64_t drops = 0;
	for (unsigned int d = 0; d < DP_DROP_MAX; d++)
		drops += st.drops[d];
	fprintf(stderr, "server: bye_rx %lu memif_zc %lu drops %lu rx %lu\n",
		(unsigned long)st.bye_rx, (unsigned long)st.memif_zc,
		(unsigned long)drops, (unsigned long)st.rx_pkts);
	dp_port_close(srv);
	dp_eal_fini();
	return st.bye_rx == 2 && st.memif_zc == 0 && drops == 0 ? 0 : 1;
}

class MemifZc : public ::testing::Test {
protected:
	static void SetUpTestSuite()
	{
		static dp_config cc;

		dir_ = "/tmp/sdp-zc-" + std::to_string(getpid());
		sock_ = dir_ + "/memif.sock";
		ASSERT_EQ(0, mkdir(dir_.c_str(), 0700));
		fflush(nullptr);
		srv_pid_ = fork();
		ASSERT_GE(srv_pid_, 0);
		if (srv_pid_ == 0)
			_exit(server_main());
		/* the EAL comes up for the zero-copy client, as in a rank */
		std::string text = cli_text("net_memif1");
		ASSERT_EQ(0, dp_config_parse(text.c_str(), &cc));
		ASSERT_EQ(0, dp_eal_init(&cc))
			<< "the EAL would not come up for " << text;
		ASSERT_EQ(0, dp_port_open(&cc, &cli_)) << text;
	}
	static void TearDownTestSuite()
	{
		if (cli_ != nullptr)
			dp_port_close(cli_);
		if (srv_pid_ > 0) {
			int st = 0;

			for (int i = 0; i < 300 && waitpid(srv_pid_, &st,
							   WNOHANG) == 0;
			     i++)
				usleep(100 * 1000);
			if (waitpid(srv_pid_, &st, WNOHANG) == 0) {
				kill(srv_pid_, SIGKILL);
				waitpid(srv_pid_, &st, 0);
				ADD_FAILURE() << "the server never finished";
				/* its EAL never cleaned up after itself */
				EXPECT_EQ(0, dp_eal_runtime_dir_remove(
						     ("sdp-zcs-" +
						      std::to_string(srv_pid_))
							     .c_str()));
			} else {
				EXPECT_TRUE(WIFEXITED(st) &&
					    WEXITSTATUS(st) == 0)
					<< "server failed (status " << st
					<< ", its stderr above)";
			}
		}
		dp_eal_fini();
		unlink(sock_.c_str());
		rmdir(dir_.c_str());
	}
};

uint8_t pat(uint32_t seq, uint32_t k)
{
	return (uint8_t)(seq * 131u + k * 7u + (k >> 8));
}

/* Payload bytes of frame @seq: 64..MTU-20 (the dataplane adds 20 bytes of
 * IP header to a DP_IPPROTO_EXP payload). */
uint32_t len_of(uint32_t seq)
{
	return 64u + (seq * 2654435761u) % (MTU - 20u - 64u + 1u);
}

/* Send @n frames to the echo server, at most 256 in flight; check every
 * byte of every echo, in order.  @return echoes that came back intact. */
unsigned int echo(dp_port *cli, uint32_t first, unsigned int n,
		  uint64_t *bytes)
{
	std::vector<rte_mbuf *> got(64);
	uint32_t next_rx = first, seq = first;
	unsigned int ok = 0;
	uint64_t end = dp_tsc() + 120 * dp_tsc_hz();

	while (next_rx < first + n && dp_tsc() < end) {
		/* one frame until the first echo (ARP resolved both ways:
		 * frames sent before wait in a hold queue of 64) */
		while (seq < first + n &&
		       seq - next_rx < (next_rx == first ? 1u : 256u)) {
			rte_mbuf *m = dp_pkt_alloc(cli);

			if (m == nullptr)
				break;
			uint32_t len = len_of(seq);
			auto *d = (uint8_t *)rte_pktmbuf_append(m,
							       (uint16_t)len);
			if (d == nullptr) {
				ADD_FAILURE() << "frame " << seq << " of "
					      << len << " B: no room";
				dp_pkt_free(m);
				return ok;
			}
			memcpy(d, &seq, 4);
			for (uint32_t k = 4; k < len; k++)
				d[k] = pat(seq, k);
			if (dp_port_send(cli, SRV_IP_BE, DP_IPPROTO_EXP, m,
					 dp_tsc()) != 0)
				break;
			seq++;
		}
		dp_port_flush(cli, dp_tsc());
		dp_port_poll(cli, dp_tsc());
		unsigned int r = dp_port_recv(cli, got.data(), 64);

		for (unsigned int i = 0; i < r; i++) {
			rte_mbuf *m = got[i];
			uint32_t s, len = rte_pktmbuf_pkt_len(m);
			const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);

			EXPECT_EQ(1u, m->nb_segs) << "frame chained";
			memcpy(&s, d, 4);
			bool good = s == next_rx && len == len_of(s);

			for (uint32_t k = 4; good && k < len; k++)
				good = d[k] == pat(s, k);
			EXPECT_TRUE(good) << "frame " << s << " (expected "
					  << next_rx << ") of " << len
					  << " B damaged or out of order";
			ok += good;
			*bytes += good ? len : 0;
			next_rx = s + 1;
			dp_pkt_free(m);
		}
	}
	return ok;
}

TEST_F(MemifZc, FramesIntactThroughTheClientsOwnBuffers)
{
	const unsigned int n = 8192; /* ~37 MB each way */
	uint64_t bytes = 0;
	dp_stats sc;

	ASSERT_NE(nullptr, cli_);
	EXPECT_EQ(n, echo(cli_, 0, n, &bytes));
	EXPECT_GT(bytes, 30ull << 20);
	for (int i = 0; i < 1000; i++) {
		dp_port_poll(cli_, dp_tsc());
		usleep(100);
	}
	dp_port_stats(cli_, &sc);
	EXPECT_EQ(1u, sc.memif_zc) << "the client is not in zero-copy mode";
	/* the zero-copy client's RX ring holds a stock of our mbufs (it
	 * restocks in bulks of 32 or more); a copying client holds none */
	EXPECT_GE(sc.pool_in_use, RING - 32)
		<< "the client's ring holds no mbufs of ours: not zero-copy";
	for (unsigned int d = 0; d < DP_DROP_MAX; d++)
		EXPECT_EQ(0u, sc.drops[d]) << dp_drop_name((dp_drop)d);
}

TEST_F(MemifZc, ClientClosesWithTheHandshakeAndANewOneMovesFrames)
{
	static dp_config cc2;
	uint64_t bytes = 0;
	dp_stats sc;

	ASSERT_NE(nullptr, cli_);
	dp_port_stats(cli_, &sc);
	uint64_t tx_bursts = sc.tx_bursts;
	dp_port_close(cli_); /* BYE: the server answers, we go */
	cli_ = nullptr;
	EXPECT_NE(0u, tx_bursts);
	/* a new zero-copy client on the same socket, hot-plugged under a new
	 * name (the EAL probed the first one at init) */
	std::string text = cli_text("net_memif2");
	ASSERT_EQ(0, dp_config_parse(text.c_str(), &cc2));
	ASSERT_EQ(0, dp_port_open(&cc2, &cli_)) << text;
	EXPECT_EQ(1024u, echo(cli_, 100000, 1024, &bytes));
	dp_port_stats(cli_, &sc);
	EXPECT_EQ(1u, sc.memif_zc);
	/* the second BYE (TearDownTestSuite's close) ends the server, which
	 * checks it saw both */
}

} // namespace
