/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sg.cc - tests of the SCTP layer (sctp/, prefix sg_).
 *
 * Configuration: every field has a negative test (copy a valid config,
 * break one field, expect -EINVAL).
 *
 * Two endpoints: usrsctp state is process-wide, so each endpoint runs in
 * its own forked child (fork happens before any EAL init; each child brings
 * up its own EAL with a unique --file-prefix) and the two talk over a memif
 * pair.  The gtest process only orchestrates: it waits for the children
 * with a deadline, reads their progress lines from a pipe, kills them by
 * PID on failure and removes the memif socket directory and the DPDK
 * runtime directories in every path.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dp_internal.h" /* dp_port.tx_batch (SACK hold tests) */
#include "sg_internal.h"

#include <usrsctp.h>

namespace {

/* ---------------------------------------------------------------------- */
/* configuration                                                           */

TEST(SgConfig, DefaultsAreValid)
{
	sg_config c;

	ASSERT_EQ(0, sg_config_parse(nullptr, &c));
	EXPECT_EQ(10, c.streams);
	EXPECT_EQ(4u, c.max_burst); /* usrsctp's */
	EXPECT_EQ(0, sg_config_check(&c));
	EXPECT_TRUE(c.sack_immediate);
	ASSERT_EQ(0, sg_config_parse("max_burst=0 sack_immediate=0", &c));
	EXPECT_EQ(0u, c.max_burst);
	EXPECT_FALSE(c.sack_immediate);
	ASSERT_EQ(0, sg_config_parse("streams=65535 port=7 rto_min_ms=10 sack_delay_ms=5 "
				     "rto_initial_ms=20 rto_max_ms=30 "
				     "sndbuf=1M rx_buf=4K rx_descs=1024 "
				     "max_msg=4M",
				     &c));
	EXPECT_EQ(65535, c.streams);
	EXPECT_EQ(7, c.port);
	EXPECT_EQ(1u << 20, c.sndbuf_bytes);
	EXPECT_EQ(4096u, c.rx_buf_bytes);
	EXPECT_NE(nullptr, strstr(sg_config_help(), "streams="));
	EXPECT_EQ(0u, c.nr_sack); /* off unless asked */
	ASSERT_EQ(0, sg_config_parse("nr_sack=2", &c));
	EXPECT_EQ(2u, c.nr_sack);
	EXPECT_NE(nullptr, strstr(sg_config_help(), "nr_sack="));
}

TEST(SgConfig, EachBadTokenIsRejected)
{
	const char *bad[] = {
		"streams=0", "streams=65536", "streams=x", "streams=10k",
		"port=0", "port=65536", "rto_initial_ms=0",
		"rto_min_ms=0", "rto_max_ms=600001", "hb_interval_ms=3600001",
		"path_max_rxt=0", "path_max_rxt=101", "nodelay=2",
		"sndbuf=1000", "rcvbuf=2G", "rx_descs=8", "rx_buf=512",
		"rx_headroom=4097", "max_msg=0", "max_peers=0",
		"event_queue=8", "bogus=1", "streams", "=5",
		"max_burst=1025", "max_burst=-1", "sack_immediate=2",
		"nr_sack=3", "nr_sack=-1",
		/* relations between fields */
		"rto_min_ms=500 rto_initial_ms=400",
		"rto_initial_ms=5000 rto_max_ms=4000",
		"rx_descs=16 rx_buf=1K max_msg=17K",
		"sack_delay_ms=501", "sack_delay_ms=100",
		"rto_min_ms=10 sack_delay_ms=20",
	};
	sg_config c;

	for (const char *b : bad)
		EXPECT_EQ(-EINVAL, sg_config_parse(b, &c)) << b;
}

TEST(SgConfig, CheckRejectsEachBadField)
{
	sg_config good;
	sg_config_defaults(&good);
	std::vector<std::function<void(sg_config &)>> breakers = {
		[](sg_config &c) { c.streams = 0; },
		[](sg_config &c) { c.port = 0; },
		[](sg_config &c) { c.rto_min_ms = 0; },
		[](sg_config &c) { c.rto_initial_ms = 0; },
		[](sg_config &c) { c.rto_max_ms = 700000; },
		[](sg_config &c) { c.hb_interval_ms = 4000000; },
		[](sg_config &c) { c.path_max_rxt = 0; },
		[](sg_config &c) { c.sndbuf_bytes = 1; },
		[](sg_config &c) { c.rcvbuf_bytes = 1; },
		[](sg_config &c) { c.rx_descs = 1; },
		[](sg_config &c) { c.rx_buf_bytes = 1; },
		[](sg_config &c) { c.rx_headroom_bytes = 5000; },
		[](sg_config &c) { c.max_msg_bytes = 0; },
		[](sg_config &c) { c.max_peers = 0; },
		[](sg_config &c) { c.event_queue = 1; },
		[](sg_config &c) { c.max_burst = 1025; },
		[](sg_config &c) { c.rto_min_ms = c.rto_initial_ms + 1; },
		[](sg_config &c) { c.rto_max_ms = c.rto_initial_ms - 1; },
		[](sg_config &c) { c.sack_delay_ms = c.rto_min_ms; },
		[](sg_config &c) { c.sack_hold_us = 100001; },
		[](sg_config &c) { c.sack_hold_us = c.rto_min_ms * 1000; },
		[](sg_config &c) {
			c.max_msg_bytes = c.rx_descs * c.rx_buf_bytes + 1;
		},
	};
	for (size_t i = 0; i < breakers.size(); i++) {
		sg_config c = good;

		breakers[i](c);
		EXPECT_EQ(-EINVAL, sg_config_check(&c)) << "breaker " << i;
	}
}

/* tx_cluster (usrsctp-patches/0005): 0 or 2048..16M; below usrsctp's
 * cluster it names the fix. */
TEST(SgConfig, TxClusterRange)
{
	sg_config c;

	ASSERT_EQ(0, sg_config_parse(nullptr, &c));
	EXPECT_EQ(64u << 10, c.tx_cluster_bytes);
	ASSERT_EQ(0, sg_config_parse("tx_cluster=0", &c));
	EXPECT_EQ(0u, c.tx_cluster_bytes);
	ASSERT_EQ(0, sg_config_parse("tx_cluster=256k", &c));
	EXPECT_EQ(256u << 10, c.tx_cluster_bytes);
	ASSERT_EQ(0, sg_config_parse("tx_cluster=2048", &c));
	EXPECT_EQ(-EINVAL, sg_config_parse("tx_cluster=2047", &c));
	EXPECT_EQ(-EINVAL, sg_config_parse("tx_cluster=1", &c));
	EXPECT_EQ(-EINVAL, sg_config_parse("tx_cluster=17M", &c));
	EXPECT_NE(nullptr, strstr(sg_config_help(), "tx_cluster="));
}

TEST(SgMap, PutGetDelWithCollisions)
{
	sg_map m;
	std::map<uint32_t, uint64_t> ref;
	std::mt19937 rng(7);

	ASSERT_EQ(0, sg_map_init(&m, 64));
	for (int round = 0; round < 20000; round++) {
		uint32_t k = 1 + rng() % 200;
		uint64_t v;

		if (rng() % 3 == 0) {
			EXPECT_EQ(ref.erase(k) == 1, sg_map_del(&m, k));
		} else if (ref.size() < 64 || ref.count(k)) {
			ASSERT_EQ(0, sg_map_put(&m, k, round));
			ref[k] = round;
		} else {
			EXPECT_EQ(-ENOSPC, sg_map_put(&m, k, round));
		}
		for (uint32_t q = 1; q <= 200; q += 13) {
			bool in = ref.count(q) != 0;
			ASSERT_EQ(in, sg_map_get(&m, q, &v)) << q;
			if (in) {
				ASSERT_EQ(ref[q], v);
			}
		}
	}
	sg_map_free(&m);
}

/* The table starts at SG_MAP_SLOTS_MIN slots and doubles as keys arrive:
 * 100000 keys (spread like IPv4 addresses of one /16 and beyond) all stay
 * reachable across every doubling and deletion, the table stays at most
 * half full, and the limit still holds. */
TEST(SgMap, GrowsFromSmallToManyKeys)
{
	const uint32_t n = 100000;
	sg_map m;
	uint64_t v;

	ASSERT_EQ(0, sg_map_init(&m, n));
	EXPECT_EQ(SG_MAP_SLOTS_MIN, m.mask + 1);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t k = 0x0a000001u + i * 257u;

		ASSERT_EQ(0, sg_map_put(&m, k, i)) << i;
		ASSERT_LE(2 * m.count, m.mask + 1);
	}
	EXPECT_EQ(n, m.count);
	EXPECT_EQ(-ENOSPC, sg_map_put(&m, 7, 1));
	for (uint32_t i = 0; i < n; i++) {
		ASSERT_TRUE(sg_map_get(&m, 0x0a000001u + i * 257u, &v)) << i;
		ASSERT_EQ(i, v);
	}
	for (uint32_t i = 0; i < n; i += 2)
		ASSERT_TRUE(sg_map_del(&m, 0x0a000001u + i * 257u));
	for (uint32_t i = 0; i < n; i++)
		ASSERT_EQ(i % 2 == 1,
			  sg_map_get(&m, 0x0a000001u + i * 257u, &v)) << i;
	ASSERT_EQ(0, sg_map_put(&m, 7, 1));
	EXPECT_EQ(-EINVAL, sg_map_init(&m, 0));
	sg_map_free(&m);
}

/* The peer table has no fixed size: 5000 peers (the old default was 256)
 * are created one by one, each at a stable address that usrsctp keeps,
 * each found again by its address, and max_peers still bounds them. */
TEST(SgLink, PeersGrowBeyondAnyInitialSizeAtStableAddresses)
{
	const uint32_t n = 5000;
	std::vector<sg_peer *> seen;
	sg_stats st{};
	sg_link lk;

	/* no port: sg_link_init only takes a hold on it; usrsctp is up
	 * (peers register their address with it) */
	ASSERT_EQ(0, sg_stack_get());
	memset(&lk, 0, sizeof(lk));
	lk.max_peers = n;
	lk.ms_div = 1;
	ASSERT_EQ(0, sg_map_init(&lk.peer_map, n * SG_PATHS_MAX));
	lk.st = &st;
	for (uint32_t i = 0; i < n; i++) {
		sg_peer *p = sg_link_peer(&lk, htonl(0x0a010000u + i + 1));

		ASSERT_NE(nullptr, p) << i;
		seen.push_back(p);
	}
	EXPECT_EQ(nullptr, sg_link_peer(&lk, htonl(0x0a020001u)));
	for (uint32_t i = 0; i < n; i++) {
		ASSERT_EQ(seen[i], sg_link_peer_find(&lk,
						     htonl(0x0a010000u + i + 1)));
		ASSERT_EQ(seen[i], sg_link_peer_at(&lk, i));
		ASSERT_EQ(htonl(0x0a010000u + i + 1), seen[i]->ip_be);
	}
	sg_link_release(&lk);
	sg_map_free(&lk.peer_map);
	for (uint32_t b = 0; b < lk.nb_blocks; b++)
		free(lk.blocks[b]);
	free(lk.blocks);
	sg_stack_put();
}

/* ---------------------------------------------------------------------- */
/* two endpoints in two processes over memif                              */

#define CHILD_CHECK(cond)                                                     \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "child %d: check failed at %s:%d: "   \
				"%s\n", (int)getpid(), __FILE__, __LINE__,    \
				#cond);                                       \
			_exit(2);                                             \
		}                                                             \
	} while (0)

constexpr uint16_t kSctpPort = 5000;
constexpr uint32_t kMagic = 0x53474d31; /* "SGM1" */
enum : uint32_t {
	PPID_DATA = 1,
	PPID_END = 2,
	PPID_OK = 3,
	PPID_BIG = 4,
	PPID_BULK = 5,
};

struct MsgHdr {
	uint32_t magic;
	uint16_t stream;
	uint16_t unordered;
	uint32_t seq;
	uint32_t len;
	uint32_t crc; /* dp_crc32c of the bytes after the header */
};

std::string g_job;	/* unique per test */
std::string g_sockdir;	/* /run/sdp/<job> */
/* Set by a test before it forks its children: dataplane tokens both
 * add, and whether each child's Node::down checks that every mbuf of its
 * pool came back once its endpoint is closed (rx_ext leaks). */
std::string g_dp_extra;
bool g_check_pool;

uint32_t ip_of(int host)
{
	uint32_t ip = 0;
	char buf[32];

	snprintf(buf, sizeof(buf), "10.77.1.%d", host);
	dp_parse_ip(buf, &ip);
	return ip;
}

double now_s()
{
	return std::chrono::duration<double>(
		       std::chrono::steady_clock::now().time_since_epoch())
		.count();
}

/* One endpoint inside a child process. */
struct Node {
	dp_port *port = nullptr;
	sg_ep *ep = nullptr;
	dp_idle idle{};
	std::vector<sg_event> events;
	int report_fd = -1;
	unsigned int pool_base = 0; /* mbufs in use once the port is up */

	void report(const char *line)
	{
		std::string s = std::string(line) + "\n";

		if (write(report_fd, s.data(), s.size()) < 0)
			_exit(3);
	}

	void up(bool server, const std::string &name, const char *sg_extra,
		const char *dp_extra = "")
	{
		char dpc[1024];
		/* On the heap: struct dp_config is ~48 KB. */
		auto dcfg_p = std::make_unique<dp_config>();
		dp_config &dcfg = *dcfg_p;
		sg_config scfg;

		snprintf(dpc, sizeof(dpc),
			 "dev=net_memif0,role=%s,id=0,socket=%s/memif0.sock,"
			 "socket-abstract=no ip=10.77.1.%d/24 "
			 "prefix=sdp-%s-%s mem=256 idle_sleep_us=20 "
			 "link_wait_ms=15000 %s %s",
			 server ? "server" : "client", g_sockdir.c_str(),
			 server ? 1 : 2, g_job.c_str(), name.c_str(), dp_extra,
			 g_dp_extra.c_str());
		CHILD_CHECK(dp_config_parse(dpc, &dcfg) == 0);
		CHILD_CHECK(dp_eal_init(&dcfg) == 0);
		CHILD_CHECK(dp_port_open(&dcfg, &port) == 0);
		pool_base = rte_mempool_in_use_count(port->pool);
		CHILD_CHECK(sg_config_parse(sg_extra, &scfg) == 0);
		CHILD_CHECK(sg_ep_open(port, &scfg, &ep) == 0);
		dp_idle_init(&idle, dcfg.idle_polls, dcfg.idle_sleep_us);
	}

	void down()
	{
		sg_ep_close(ep);
		if (g_check_pool) {
			/* usrsctp gave back every packet it kept (rx_ext) */
			unsigned int in_use =
				(unsigned int)rte_mempool_in_use_count(
					port->pool);

			fprintf(stderr, "child %d: after close: %u mbufs in "
				"use (%u at start), usrsctp holds %u\n",
				(int)getpid(), in_use, pool_base,
				sg_rx_ext_held_now());
			CHILD_CHECK(sg_rx_ext_held_now() == 0);
			CHILD_CHECK(in_use == pool_base);
		}
		dp_port_close(port);
		dp_eal_fini();
	}

	void poll_once()
	{
		sg_event ev;
		unsigned int w = sg_poll(ep, dp_tsc());

		while (sg_next_event(ep, &ev) == 0) {
			events.push_back(ev);
			w++;
		}
		dp_idle_update(&idle, w);
	}

	/* Poll until @cond holds or @sec pass. */
	bool wait(const std::function<bool()> &cond, double sec)
	{
		double end = now_s() + sec;

		while (!cond()) {
			if (now_s() > end)
				return false;
			poll_once();
		}
		return true;
	}

	/* Wait for an event of @type (consumed). */
	bool wait_event(sg_event_type type, sg_event *out, double sec)
	{
		return wait(
			[&] {
				for (size_t i = 0; i < events.size(); i++)
					if (events[i].type == type) {
						if (out != nullptr)
							*out = events[i];
						events.erase(events.begin() +
							     (long)i);
						return true;
					}
				return false;
			},
			sec);
	}

	/* Send one message, polling through back-pressure. */
	void send(sg_assoc_t a, uint16_t stream, uint32_t flags, uint32_t ppid,
		  const void *buf, size_t len)
	{
		iovec iov = { const_cast<void *>(buf), len };
		double end = now_s() + 60;
		int rc;

		while ((rc = sg_send(ep, a, stream, flags, ppid, &iov, 1)) ==
		       -EAGAIN) {
			CHILD_CHECK(now_s() < end);
			poll_once();
		}
		if (rc == -EINPROGRESS) {
			sg_event ev;

			CHILD_CHECK(wait_event(SG_EV_SEND_DONE, &ev, 120));
			CHILD_CHECK(ev.assoc == a);
			return;
		}
		if (rc != 0)
			fprintf(stderr, "sg_send: %d\n", rc);
		CHILD_CHECK(rc == 0);
	}

	/* Receive one message into @out (a test-side copy). */
	bool recv(std::vector<uint8_t> &out, sg_msg_desc &meta, double sec)
	{
		sg_msg_desc *m = nullptr;

		if (!wait([&] { return sg_recv(ep, &m, 1) == 1; }, sec))
			return false;
		meta = *m;
		out.clear();
		for (sg_msg_desc *s = m; s != nullptr; s = s->next)
			out.insert(out.end(), s->data, s->data + s->len);
		CHILD_CHECK(out.size() == m->msg_len);
		sg_msg_release(m);
		return true;
	}
};

std::vector<uint8_t> make_msg(uint16_t stream, uint32_t seq, uint32_t len,
			      bool unordered)
{
	std::vector<uint8_t> b(std::max<uint32_t>(len, sizeof(MsgHdr)));
	MsgHdr h = { kMagic, stream, (uint16_t)unordered, seq,
		     (uint32_t)b.size(), 0 };

	for (size_t i = sizeof(h); i < b.size(); i++)
		b[i] = (uint8_t)(seq * 31 + stream * 7 + i);
	h.crc = dp_crc32c(DP_CRC_ISAL, b.data() + sizeof(h),
			  b.size() - sizeof(h));
	memcpy(b.data(), &h, sizeof(h));
	return b;
}

bool check_msg(const std::vector<uint8_t> &b, MsgHdr &h)
{
	if (b.size() < sizeof(h))
		return false;
	memcpy(&h, b.data(), sizeof(h));
	return h.magic == kMagic && h.len == b.size() &&
	       h.crc == dp_crc32c(DP_CRC_ISAL, b.data() + sizeof(h),
				  b.size() - sizeof(h));
}

/* ---- the parent side: children, deadlines, cleanup ---- */

struct Child {
	pid_t pid = -1;
	int fd = -1; /* read end of its report pipe */
	std::string buf;
};

Child spawn(const std::function<void(Node &)> &body)
{
	int p[2];
	Child c;

	if (pipe(p) != 0)
		return c;
	fflush(nullptr);
	c.pid = fork();
	if (c.pid == 0) {
		Node n;

		close(p[0]);
		n.report_fd = p[1];
		body(n);
		_exit(0);
	}
	close(p[1]);
	c.fd = p[0];
	fcntl(c.fd, F_SETFL, O_NONBLOCK);
	return c;
}

/* Wait for a line starting with @what from @c. */
bool expect_line(Child &c, const std::string &what, double sec,
		 std::string *line = nullptr)
{
	double end = now_s() + sec;

	for (;;) {
		size_t nl;

		while ((nl = c.buf.find('\n')) != std::string::npos) {
			std::string l = c.buf.substr(0, nl);

			c.buf.erase(0, nl + 1);
			if (l.rfind(what, 0) == 0) {
				if (line != nullptr)
					*line = l;
				return true;
			}
		}
		double left = end - now_s();
		if (left <= 0)
			return false;
		pollfd pfd = { c.fd, POLLIN, 0 };
		if (poll(&pfd, 1, (int)(left * 1000) + 1) > 0) {
			char tmp[256];
			ssize_t n = read(c.fd, tmp, sizeof(tmp));

			if (n > 0)
				c.buf.append(tmp, (size_t)n);
			else if (n == 0)
				return false; /* child exited */
		}
	}
}

/*
 * Wait until the memif server child has created its socket: a memif client
 * started first may not retry in time.
 */
bool wait_server_socket(double sec)
{
	std::string path = g_sockdir + "/memif0.sock";
	double end = now_s() + sec;
	struct stat st;

	while (stat(path.c_str(), &st) != 0) {
		if (now_s() > end)
			return false;
		usleep(10000);
	}
	return true;
}

/* Wait for the child's exit; kill it at the deadline. @return status. */
int reap(Child &c, double sec)
{
	double end = now_s() + sec;
	int st = 0;

	if (c.pid <= 0)
		return -1;
	for (;;) {
		pid_t r = waitpid(c.pid, &st, WNOHANG);

		if (r == c.pid)
			break;
		if (now_s() > end) {
			kill(c.pid, SIGKILL);
			waitpid(c.pid, &st, 0);
			st = -1;
			break;
		}
		usleep(10000);
	}
	c.pid = -1;
	if (c.fd >= 0)
		close(c.fd);
	c.fd = -1;
	return st == -1 ? -1
		       : (WIFEXITED(st) ? WEXITSTATUS(st)
					: 128 + WTERMSIG(st));
}

/* Every SCTP packet this endpoint sent left in the mbuf usrsctp wrote it
 * into (sg_conn_output_alloc) or as usrsctp's own chain
 * (sg_conn_output_chain): conn_output copied nothing. */
bool tx_direct(const sg_stats &st)
{
	if (st.tx_copy_bytes != 0 || st.pkts_out == 0 ||
	    st.tx_direct_pkts + st.tx_chain_pkts < st.pkts_out) {
		fprintf(stderr, "child %d: tx_copy_bytes %" PRIu64
			" tx_direct_pkts %" PRIu64 " tx_chain_pkts %" PRIu64
			" pkts_out %" PRIu64 "\n",
			(int)getpid(), st.tx_copy_bytes, st.tx_direct_pkts,
			st.tx_chain_pkts, st.pkts_out);
		return false;
	}
	return true;
}

class SgTwoNodes : public ::testing::Test {
      public:
	using Body = std::function<void(Node &, sg_assoc_t)>;

	/*
	 * The two-node set-up most tests share: a server child (memif
	 * server, 10.77.1.1) and a client child that connects to it, each
	 * with its own sctp configuration (and, with @tx_batch, a port that
	 * batches TX to one burst per poll as af_packet does).  Once the
	 * association is up on its side each runs its body (the client's
	 * @assoc is its handle, the server's the one SG_EV_UP named); then
	 * the client shuts the association down and both wait for the
	 * shutdown.  Bodies report lines the test reads with
	 * expect_line(pair_srv / pair_cli, ...); pair_end() reaps both
	 * (status 0: every CHILD_CHECK held).
	 */
	void pair_start(const char *sg_srv, const char *sg_cli,
			const Body &srv_body, const Body &cli_body,
			bool tx_batch = false);
	void pair_end();
	/* Kill @c at TearDown if it still runs (a test that failed). */
	void adopt(Child *c) { kids.push_back(c); }

	Child pair_srv, pair_cli;

      protected:
	std::vector<Child *> kids;

	void SetUp() override
	{
		static int counter;

		if (geteuid() != 0)
			FAIL() << "needs root (memif vdevs, /run/sdp): run "
				  "the test as root";
		g_job = "sg" + std::to_string(getpid()) + "-" +
			std::to_string(counter++);
		g_sockdir = "/run/sdp/" + g_job;
		mkdir("/run/sdp", 0700);
		ASSERT_EQ(0, mkdir(g_sockdir.c_str(), 0700)) << g_sockdir;
	}

	void TearDown() override
	{
		for (Child *c : kids)
			if (c->pid > 0) {
				kill(c->pid, SIGKILL);
				reap(*c, 5);
			}
		if (g_sockdir.empty())
			return;
		g_dp_extra.clear();
		g_check_pool = false;
		std::string cmd = "rm -rf '" + g_sockdir + "'";
		EXPECT_EQ(0, system(cmd.c_str()));
		/* the runtime dirs of the killed children */
		EXPECT_LE(0, dp_eal_runtime_dirs_remove(
				     ("sdp-" + g_job + "-").c_str()));
		g_sockdir.clear();
	}
};

void SgTwoNodes::pair_start(const char *sg_srv, const char *sg_cli,
			    const Body &srv_body, const Body &cli_body,
			    bool tx_batch)
{
	pair_srv = spawn([&](Node &n) {
		sg_event ev;

		n.up(true, "server", sg_srv);
		if (tx_batch)
			n.port->tx_batch = true;
		CHILD_CHECK(n.wait_event(SG_EV_UP, &ev, 30));
		srv_body(n, ev.assoc);
		n.wait_event(SG_EV_SHUTDOWN, nullptr, 10);
		n.down();
	});
	kids.push_back(&pair_srv);
	ASSERT_TRUE(wait_server_socket(20));
	pair_cli = spawn([&](Node &n) {
		sg_assoc_t a = 0;

		n.up(false, "client", sg_cli);
		if (tx_batch)
			n.port->tx_batch = true;
		CHILD_CHECK(sg_connect(n.ep, ip_of(1), kSctpPort, &a) == 0);
		CHILD_CHECK(n.wait_event(SG_EV_UP, nullptr, 30));
		cli_body(n, a);
		sg_disconnect(n.ep, a);
		n.wait_event(SG_EV_SHUTDOWN, nullptr, 10);
		n.down();
	});
	kids.push_back(&pair_cli);
}

void SgTwoNodes::pair_end()
{
	EXPECT_EQ(0, reap(pair_cli, 30));
	EXPECT_EQ(0, reap(pair_srv, 30));
}

const char *kFastFail = "rto_initial_ms=200 rto_min_ms=50 rto_max_ms=200 "
			"hb_interval_ms=100 path_max_rxt=3";

/*
 * Association setup, 10 streams of interleaved messages with per-stream
 * order, unordered messages, a 16 MiB message, back-pressure with a stalled
 * consumer, then a graceful shutdown seen on both sides.
 */
TEST_F(SgTwoNodes, StreamsOrderBigMessageAndShutdown)
{
	constexpr uint32_t kStreams = 10, kMsgs = 3000, kUnord = 300;
	constexpr uint32_t kBig = 16u << 20, kStall = 2000;

	Child srv = spawn([&](Node &n) {
		n.up(true, "server", "");
		sg_event ev;
		CHILD_CHECK(n.wait_event(SG_EV_UP, &ev, 30));
		CHILD_CHECK(ev.peer_ip_be == ip_of(2));
		CHILD_CHECK(ev.peer_port == kSctpPort);
		n.report("UP");
		sg_assoc_t a = ev.assoc;

		/* Phase 1: ordered per stream + unordered. */
		std::vector<uint32_t> next(kStreams, 0);
		uint32_t got = 0, unord = 0;
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		while (got < kMsgs + kUnord) {
			MsgHdr h;

			CHILD_CHECK(n.recv(b, meta, 60));
			CHILD_CHECK(meta.ppid == PPID_DATA);
			CHILD_CHECK(check_msg(b, h));
			CHILD_CHECK(h.stream == meta.stream);
			if (h.unordered) {
				CHILD_CHECK(meta.flags & SG_MSG_UNORDERED);
				unord++;
			} else {
				CHILD_CHECK(!(meta.flags & SG_MSG_UNORDERED));
				CHILD_CHECK(h.seq == next[h.stream]);
				next[h.stream]++;
			}
			got++;
		}
		CHILD_CHECK(unord == kUnord);
		n.send(a, 0, 0, PPID_OK, "ok1", 3);

		/* Phase 2: one 16 MiB message, CRC in the first 4 bytes. */
		CHILD_CHECK(n.recv(b, meta, 120));
		CHILD_CHECK(meta.ppid == PPID_BIG);
		CHILD_CHECK(b.size() == kBig);
		CHILD_CHECK(meta.nb_segs > 1);
		uint32_t crc;
		memcpy(&crc, b.data(), 4);
		CHILD_CHECK(crc == dp_crc32c(DP_CRC_ISAL, b.data() + 4,
					     b.size() - 4));
		n.send(a, 0, 0, PPID_OK, "ok2", 3);

		/* Phase 3: stop consuming; the sender must be held back,
		 * nothing may be lost. */
		double t_end = now_s() + 1.5;
		n.wait([&] { return now_s() > t_end; }, 5);
		sg_stats st;
		sg_ep_stats(n.ep, &st);
		CHILD_CHECK(st.rx_backpressure > 0);
		for (uint32_t i = 0; i < kStall; i++) {
			MsgHdr h;

			CHILD_CHECK(n.recv(b, meta, 60));
			CHILD_CHECK(check_msg(b, h));
			CHILD_CHECK(h.seq == i);
		}
		n.send(a, 0, 0, PPID_OK, "ok3", 3);

		CHILD_CHECK(n.wait_event(SG_EV_SHUTDOWN, &ev, 30));
		CHILD_CHECK(ev.assoc == a);
		sg_ep_stats(n.ep, &st);
		sg_stats_print(&st, stderr);
		/* every received message byte copied once, by usrsctp
		 * (recvv into a descriptor), out of the DPDK mbuf it kept
		 * the packet in (rx_ext: conninput copied no packet) */
		CHILD_CHECK(st.rx_copy_recv_bytes == st.bytes_in);
		CHILD_CHECK(st.rx_copy_input_bytes == 0);
		CHILD_CHECK(st.rx_ext_bytes >= st.bytes_in);
		CHILD_CHECK(st.rx_ext_pkts == st.pkts_in);
		CHILD_CHECK(st.rx_copies >= st.msgs_in);
		CHILD_CHECK(st.crc_drops == 0);
		/* Path MTU right: no packet refused by the dataplane. */
		CHILD_CHECK(st.tx_drops == 0);
		/* CRC32c left to the dataplane: usrsctp computed none. */
		struct sctpstat us;
		usrsctp_get_stat(&us);
		CHILD_CHECK(us.sctps_sendswcrc == 0 && us.sctps_recvswcrc == 0);
		CHILD_CHECK(us.sctps_sendhwcrc > 0);
		n.report("SHUTDOWN");
		n.down();
	});
	kids.push_back(&srv);
	ASSERT_TRUE(wait_server_socket(20));
	Child cli = spawn([&](Node &n) {
		n.up(false, "client", "");
		sg_assoc_t a = 0;
		CHILD_CHECK(sg_connect(n.ep, ip_of(1), kSctpPort, &a) == 0);
		sg_event ev;
		CHILD_CHECK(n.wait_event(SG_EV_UP, &ev, 30));
		CHILD_CHECK(ev.assoc == a);
		CHILD_CHECK(sg_assoc_up(n.ep, a));
		n.report("UP");

		/* Invalid sends. */
		iovec iov = { (void *)"x", 1 };
		CHILD_CHECK(sg_send(n.ep, a, 10, 0, 1, &iov, 1) == -EINVAL);
		CHILD_CHECK(sg_send(n.ep, a + 1000, 0, 0, 1, &iov, 1) ==
			    -ENOTCONN);
		iovec big = { (void *)"x", (16u << 20) + 1 };
		CHILD_CHECK(sg_send(n.ep, a, 0, 0, 1, &big, 1) == -EMSGSIZE);

		std::mt19937 rng(42);
		std::vector<uint32_t> seq(kStreams, 0);
		uint32_t unord_left = kUnord;
		for (uint32_t i = 0; i < kMsgs + kUnord; i++) {
			bool u = unord_left > 0 && rng() % 11 == 0;
			uint16_t s = (uint16_t)(rng() % kStreams);
			uint32_t len = 24 + rng() % 3000;

			if (i % 101 == 0)
				len = 100000 + rng() % 100000; /* > 1 desc */
			if (!u && kMsgs + kUnord - i == unord_left)
				u = true; /* finish the unordered quota */
			if (u)
				unord_left--;
			auto m = make_msg(s, u ? 0 : seq[s]++, len, u);
			n.send(a, s, u ? SG_SEND_UNORDERED : 0, PPID_DATA,
			       m.data(), m.size());
		}
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 60));
		CHILD_CHECK(meta.ppid == PPID_OK);

		std::vector<uint8_t> m(kBig);
		for (size_t i = 4; i < m.size(); i++)
			m[i] = (uint8_t)(i * 2654435761u >> 13);
		uint32_t crc = dp_crc32c(DP_CRC_ISAL, m.data() + 4,
					 m.size() - 4);
		memcpy(m.data(), &crc, 4);
		n.send(a, 2, 0, PPID_BIG, m.data(), m.size());
		CHILD_CHECK(n.recv(b, meta, 120));
		CHILD_CHECK(meta.ppid == PPID_OK);

		for (uint32_t i = 0; i < kStall; i++) {
			auto mm = make_msg(3, i, 8000, false);
			n.send(a, 3, 0, PPID_DATA, mm.data(), mm.size());
		}
		CHILD_CHECK(n.recv(b, meta, 60));
		CHILD_CHECK(meta.ppid == PPID_OK);
		sg_stats st;
		sg_ep_stats(n.ep, &st);
		CHILD_CHECK(st.tx_backpressure > 0);

		CHILD_CHECK(sg_disconnect(n.ep, a) == 0);
		CHILD_CHECK(n.wait_event(SG_EV_SHUTDOWN, &ev, 30));
		CHILD_CHECK(!sg_assoc_up(n.ep, a));
		n.report("SHUTDOWN");
		n.down();
	});
	kids.push_back(&cli);

	EXPECT_TRUE(expect_line(srv, "UP", 40));
	EXPECT_TRUE(expect_line(cli, "UP", 40));
	EXPECT_TRUE(expect_line(cli, "SHUTDOWN", 240));
	EXPECT_TRUE(expect_line(srv, "SHUTDOWN", 30));
	EXPECT_EQ(0, reap(cli, 30));
	EXPECT_EQ(0, reap(srv, 30));
}

/* 100 MiB in 64 KiB messages must take seconds, not minutes. */
TEST_F(SgTwoNodes, BulkTransferIsFast)
{
	constexpr uint32_t kMsg = 64u << 10, kCount = 1600;

	pair_start("", "", [&](Node &n, sg_assoc_t a) {
		uint64_t bytes = 0;
		for (uint32_t i = 0; i < kCount; i++) {
			sg_msg_desc *m = nullptr;

			CHILD_CHECK(n.wait(
				[&] { return sg_recv(n.ep, &m, 1) == 1; }, 60));
			CHILD_CHECK(m->msg_len == kMsg && m->ppid == PPID_BULK);
			bytes += m->msg_len;
			sg_msg_release(m);
		}
		n.send(a, 0, 0, PPID_OK, "ok", 2);
		sg_stats st;
		sg_ep_stats(n.ep, &st);
		/* 64 KiB messages: each byte copied out of usrsctp exactly
		 * once, never into it (rx_ext: kept in the DPDK mbufs) */
		CHILD_CHECK(st.bytes_in >= (uint64_t)kMsg * kCount);
		CHILD_CHECK(st.rx_copy_recv_bytes == st.bytes_in);
		CHILD_CHECK(st.rx_copy_input_bytes == 0);
		CHILD_CHECK(st.rx_ext_bytes >= st.bytes_in);
		CHILD_CHECK(st.rx_ext_pkts == st.pkts_in);
		/* its SACKs: written by usrsctp into our mbufs, not copied */
		CHILD_CHECK(tx_direct(st));
	}, [&](Node &n, sg_assoc_t a) {
		std::vector<uint8_t> m(kMsg, 0x5a);
		double t0 = now_s();
		for (uint32_t i = 0; i < kCount; i++)
			n.send(a, (uint16_t)(i % 10), 0, PPID_BULK, m.data(),
			       m.size());
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 120));
		double dt = now_s() - t0;
		sg_stats st;
		sg_ep_stats(n.ep, &st);
		sg_stats_print(&st, stderr);
		/* 100 MiB sent without a copy of ours: every packet left in
		 * the mbuf usrsctp wrote it into (usrsctp-patches/0002;
		 * without it tx_copy_bytes > 100 MiB) */
		CHILD_CHECK(st.bytes_out >= (uint64_t)kMsg * kCount);
		CHILD_CHECK(tx_direct(st));
		char line[128];
		snprintf(line, sizeof(line), "RATE %.2f Gbit/s in %.2f s",
			 (double)kMsg * kCount * 8 / dt / 1e9, dt);
		n.report(line);
	});

	std::string rate;
	EXPECT_TRUE(expect_line(pair_cli, "RATE", 120, &rate));
	fprintf(stderr, "100 MiB over memif: %s\n", rate.c_str());
	double secs = 1e9;
	sscanf(rate.c_str(), "RATE %*f Gbit/s in %lf s", &secs);
	EXPECT_LT(secs, 60.0) << rate;
	pair_end();
}

/* The client's stand-in for a pool that runs dry now and then: every
 * third buffer usrsctp asks for is refused, so usrsctp falls back to
 * malloc and sg_conn_output copies that packet. */
uint64_t g_refused_bytes, g_asked;

void *alloc_refusing_some(void *addr, size_t len)
{
	if (++g_asked % 3 == 0) {
		g_refused_bytes += len;
		return nullptr;
	}
	return sg_conn_output_alloc(addr, len);
}

/*
 * usrsctp_set_conn_output_alloc's fallback: a packet whose buffer the
 * application does not give is put in malloc'd memory by usrsctp and
 * copied by conn_output (exactly those bytes counted in tx_copy_bytes),
 * the others leave in their mbufs; mixed, every message arrives whole and
 * in order.
 */
TEST_F(SgTwoNodes, TxFallsBackToACopyWhenNoBufferIsGiven)
{
	constexpr uint32_t kCount = 3000;

	Child srv = spawn([&](Node &n) {
		n.up(true, "server", "");
		sg_event ev;
		CHILD_CHECK(n.wait_event(SG_EV_UP, &ev, 30));
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		for (uint32_t i = 0; i < kCount; i++) {
			MsgHdr h;

			CHILD_CHECK(n.recv(b, meta, 60));
			CHILD_CHECK(meta.ppid == PPID_DATA);
			CHILD_CHECK(check_msg(b, h));
			CHILD_CHECK(h.seq == i);
		}
		n.send(ev.assoc, 0, 0, PPID_OK, "ok", 2);
		sg_stats st;
		sg_ep_stats(n.ep, &st);
		CHILD_CHECK(tx_direct(st)); /* the hook is the client's */
		n.wait_event(SG_EV_SHUTDOWN, nullptr, 10);
		n.down();
	});
	kids.push_back(&srv);
	ASSERT_TRUE(wait_server_socket(20));
	Child cli = spawn([&](Node &n) {
		n.up(false, "client", "");
		usrsctp_set_conn_output_alloc(alloc_refusing_some,
					      sg_conn_output_free);
		sg_assoc_t a = 0;
		CHILD_CHECK(sg_connect(n.ep, ip_of(1), kSctpPort, &a) == 0);
		CHILD_CHECK(n.wait_event(SG_EV_UP, nullptr, 30));
		std::mt19937 rng(9);
		for (uint32_t i = 0; i < kCount; i++) {
			auto m = make_msg(1, i, 24 + rng() % 9000, false);
			n.send(a, 1, 0, PPID_DATA, m.data(), m.size());
		}
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 60));
		CHILD_CHECK(meta.ppid == PPID_OK);
		sg_stats st;
		sg_ep_stats(n.ep, &st);
		sg_stats_print(&st, stderr);
		fprintf(stderr, "refused %" PRIu64 " of %" PRIu64
			" buffers, %" PRIu64 " bytes\n", g_asked / 3, g_asked,
			g_refused_bytes);
		CHILD_CHECK(st.tx_drops == 0);
		CHILD_CHECK(g_refused_bytes > 0);
		CHILD_CHECK(st.tx_copy_bytes == g_refused_bytes);
		CHILD_CHECK(st.tx_direct_pkts > 0 &&
			    st.tx_direct_pkts < st.pkts_out);
		n.report("DONE");
		sg_disconnect(n.ep, a);
		n.wait_event(SG_EV_SHUTDOWN, nullptr, 10);
		n.down();
	});
	kids.push_back(&cli);

	EXPECT_TRUE(expect_line(cli, "DONE", 180));
	EXPECT_EQ(0, reap(cli, 30));
	EXPECT_EQ(0, reap(srv, 30));
}

/* ---- chained TX (tx_chain_min, usrsctp-patches/0004) ---- */

/* A usrsctp counter from sg_stack_stats_json ("name": N). */
uint64_t stack_counter(const char *name)
{
	char buf[2048], key[64];

	sg_stack_stats_json(buf, sizeof(buf));
	snprintf(key, sizeof(key), "\"%s\": ", name);
	const char *p = strstr(buf, key);
	return p != nullptr ? strtoull(p + strlen(key), nullptr, 10) : 0;
}

struct ChainRun {
	const char *sg_cli = "";	/* client sctp config */
	const char *dp_cli = "";	/* client dataplane tokens */
	const char *dp_srv = "";	/* server dataplane tokens */
	uint32_t count = 800;		/* messages, client -> server */
	uint32_t min_len = 64u << 10, max_len = 64u << 10;
	/* the client's checks, after the server has everything intact */
	std::function<void(const sg_stats &)> check;
};

/*
 * Client -> server: @r.count messages whose bytes the server checks
 * (make_msg's CRC, sequence); then the client checks its counters, shuts
 * the association down, polls until the TX side drains, and checks that
 * every chain went back to usrsctp and every mbuf to its pool (the count
 * in use back to what it was before the first message).
 */
void chain_run(SgTwoNodes *t, const ChainRun &r)
{
	t->pair_srv = spawn([&](Node &n) {
		n.up(true, "server", "", r.dp_srv);
		sg_event ev;
		CHILD_CHECK(n.wait_event(SG_EV_UP, &ev, 30));
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		for (uint32_t i = 0; i < r.count; i++) {
			MsgHdr h;

			CHILD_CHECK(n.recv(b, meta, 120));
			CHILD_CHECK(meta.ppid == PPID_DATA);
			CHILD_CHECK(check_msg(b, h));
			CHILD_CHECK(h.seq == i);
		}
		n.send(ev.assoc, 0, 0, PPID_OK, "ok", 2);
		n.wait_event(SG_EV_SHUTDOWN, nullptr, 30);
		n.down();
	});
	t->adopt(&t->pair_srv);
	ASSERT_TRUE(wait_server_socket(20));
	t->pair_cli = spawn([&](Node &n) {
		n.up(false, "client", r.sg_cli, r.dp_cli);
		sg_assoc_t a = 0;
		CHILD_CHECK(sg_connect(n.ep, ip_of(1), kSctpPort, &a) == 0);
		CHILD_CHECK(n.wait_event(SG_EV_UP, nullptr, 30));
		unsigned int base = dp_port_mbufs_in_use(n.port);
		std::mt19937 rng(6);
		for (uint32_t i = 0; i < r.count; i++) {
			uint32_t len = r.min_len +
				       rng() % (r.max_len - r.min_len + 1);
			auto m = make_msg(1, i, len, false);
			n.send(a, 1, 0, PPID_DATA, m.data(), m.size());
		}
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 180));
		CHILD_CHECK(meta.ppid == PPID_OK);
		sg_stats st;
		sg_ep_stats(n.ep, &st);
		sg_stats_print(&st, stderr);
		fprintf(stderr, "retrans_chunks %" PRIu64 "\n",
			stack_counter("retrans_chunks"));
		r.check(st);
		sg_disconnect(n.ep, a);
		CHILD_CHECK(n.wait_event(SG_EV_SHUTDOWN, nullptr, 30));
		double t_end = now_s() + 0.3;
		n.wait([&] { return now_s() > t_end; }, 5);
		dp_port_flush(n.port, dp_tsc());
		unsigned int after = dp_port_mbufs_in_use(n.port);
		fprintf(stderr, "mbufs in use: %u before, %u after; chains "
			"held %" PRIu64 "\n", base, after,
			sg_tx_chains_held());
		CHILD_CHECK(sg_tx_chains_held() == 0);
		CHILD_CHECK(after == base);
		/* every large send buffer (tx_cluster, 0005) freed */
		sg_ep_stats(n.ep, &st);
		fprintf(stderr, "tx clusters held %" PRIu64 "\n",
			st.tx_clusters_held);
		CHILD_CHECK(st.tx_clusters_held == 0);
		/* the chains' records are reused: malloc'd up to the chains
		 * in flight at the peak, not once per chained packet (a
		 * malloc and free each before), and all freed at close */
		uint64_t refs_live, refs_mallocs;
		sg_tx_chain_refs(&refs_live, &refs_mallocs);
		fprintf(stderr, "chain records: %" PRIu64 " malloc'd for %"
			PRIu64 " chained packets, %" PRIu64 " live\n",
			refs_mallocs, st.tx_chain_pkts, refs_live);
		CHILD_CHECK(refs_mallocs * 4 <= st.tx_chain_pkts);
		n.report("DONE");
		n.down();
		sg_tx_chain_refs(&refs_live, &refs_mallocs);
		fprintf(stderr, "chain records after close: %" PRIu64
			" live\n", refs_live);
		CHILD_CHECK(refs_live == 0);
	});
	t->adopt(&t->pair_cli);
	EXPECT_TRUE(expect_line(t->pair_cli, "DONE", 300));
	EXPECT_EQ(0, reap(t->pair_cli, 30));
	EXPECT_EQ(0, reap(t->pair_srv, 30));
}

/*
 * Issue 9: 50 MiB whose payload leaves from usrsctp's own buffers: every
 * full-sized DATA packet is a chain (header mbuf + usrsctp's clusters by
 * reference), only headers are copied; intact at the server.  Without
 * 0004 (or with tx_chain_min=0) tx_chain_ref_bytes is 0 and every byte
 * is in tx_direct_bytes, usrsctp's copy into our mbufs.
 */
TEST_F(SgTwoNodes, ChainedTxSendsThePayloadByReference)
{
	ChainRun r;
	r.check = [](const sg_stats &st) {
		CHILD_CHECK(st.bytes_out >= 800ull * (64u << 10));
		CHILD_CHECK(st.tx_chain_pkts > 0);
		CHILD_CHECK(st.tx_chain_ref_bytes >= st.bytes_out / 100 * 95);
		/* copied: the headers of each chain (common header, DATA
		 * chunk header, a bundled SACK at most) ... */
		CHILD_CHECK(st.tx_chain_copy_bytes <= 64 * st.tx_chain_pkts);
		/* ... and the packets below tx_chain_min (the tail of each
		 * 64 KiB message at MTU 1500, ~1.2%), usrsctp's copy (0002);
		 * without chains this is every byte */
		CHILD_CHECK(st.tx_direct_bytes + st.tx_copy_bytes <=
			    st.bytes_out / 50);
		CHILD_CHECK(st.tx_drops == 0);
		CHILD_CHECK(tx_direct(st));
	};
	chain_run(this, r);
}

/*
 * The threshold: messages of 24 B .. 3 KiB; packets below tx_chain_min
 * (1024 by default) keep the copy into one mbuf (0002), the others are
 * chains; all intact, in order.
 */
TEST_F(SgTwoNodes, ChainedTxSmallPacketsKeepTheCopyPath)
{
	ChainRun r;
	r.count = 5000;
	r.min_len = 24;
	r.max_len = 3000;
	r.check = [](const sg_stats &st) {
		CHILD_CHECK(st.tx_chain_pkts > 0);
		CHILD_CHECK(st.tx_direct_pkts > 0);
		CHILD_CHECK(st.tx_direct_bytes > 0);
		CHILD_CHECK(tx_direct(st));
	};
	chain_run(this, r);
}

/* tx_chain_min=0: the chain hook declines every packet: each one is
 * written into one mbuf, as before 0004. */
TEST_F(SgTwoNodes, ChainedTxOffWritesEachPacketIntoOneMbuf)
{
	ChainRun r;
	r.sg_cli = "tx_chain_min=0";
	r.count = 200;
	r.check = [](const sg_stats &st) {
		CHILD_CHECK(st.tx_chain_pkts == 0);
		CHILD_CHECK(st.tx_chain_ref_bytes == 0);
		CHILD_CHECK(st.tx_direct_bytes >= st.bytes_out);
		CHILD_CHECK(tx_direct(st));
	};
	chain_run(this, r);
}

/*
 * 2% of the client's DATA packets lost on the wire (drop=tx:every:50):
 * retransmissions send the same clusters again, by reference, while
 * earlier chains may still hold them; everything arrives intact and every
 * chain and mbuf is returned.
 */
TEST_F(SgTwoNodes, ChainedTxUnderLossDeliversIntactData)
{
	ChainRun r;
	r.dp_cli = "drop=tx:every:50";
	r.count = 400;
	r.check = [](const sg_stats &st) {
		CHILD_CHECK(st.tx_chain_pkts > 0);
		CHILD_CHECK(st.tx_chain_ref_bytes >= st.bytes_out / 100 * 95);
		CHILD_CHECK(stack_counter("retrans_chunks") > 0);
	};
	chain_run(this, r);
}

/* ---- large send clusters (tx_cluster, usrsctp-patches/0005) ---- */

/*
 * Issue 9: at MTU 9000 a full DATA packet carries 8952 bytes.  In 2048-byte
 * clusters (tx_cluster=0, usrsctp's own) that payload is 5 pieces, each a
 * chained segment memif copies on its own; in 64 KiB buffers (the default)
 * one, two where a chunk crosses a buffer's end (~14% of them).  Without
 * 0005 (or with tx_cluster=0) tx_chain_segs is ~5 per packet.
 */
TEST_F(SgTwoNodes, LargeSendClustersMakeOneSegmentPerChunk)
{
	ChainRun r;
	r.dp_cli = "mtu=9000";
	r.dp_srv = "mtu=9000";
	r.count = 400;
	r.check = [](const sg_stats &st) {
		fprintf(stderr, "segments per chained packet: %.3f\n",
			(double)st.tx_chain_segs /
				(double)(st.tx_chain_pkts ? st.tx_chain_pkts
							  : 1));
		CHILD_CHECK(st.tx_cluster_bytes == 64u << 10);
		CHILD_CHECK(st.tx_chain_pkts > 0);
		CHILD_CHECK(st.tx_chain_ref_bytes >= st.bytes_out / 100 * 95);
		CHILD_CHECK(st.tx_chain_segs >= st.tx_chain_pkts);
		CHILD_CHECK(st.tx_chain_segs * 10 <= st.tx_chain_pkts * 13);
		CHILD_CHECK(st.tx_drops == 0);
	};
	chain_run(this, r);
}

/* tx_cluster=0: usrsctp's 2048-byte clusters, as before 0005: a full
 * packet's payload is 5 pieces (the counter counts what it claims). */
TEST_F(SgTwoNodes, SmallSendClustersMakeFiveSegmentsPerJumboChunk)
{
	ChainRun r;
	r.sg_cli = "tx_cluster=0";
	r.dp_cli = "mtu=9000";
	r.dp_srv = "mtu=9000";
	r.count = 200;
	r.check = [](const sg_stats &st) {
		CHILD_CHECK(st.tx_cluster_bytes == 0);
		CHILD_CHECK(st.tx_chain_pkts > 0);
		CHILD_CHECK(st.tx_chain_segs >= 4 * st.tx_chain_pkts);
	};
	chain_run(this, r);
}

/*
 * 2% of the client's DATA packets lost at MTU 9000 with 256 KiB send
 * buffers: retransmissions reference the same large buffers while other
 * chunks' chains still hold them; everything arrives intact and every
 * buffer (tx_clusters_held), chain and mbuf is returned (chain_run).
 */
TEST_F(SgTwoNodes, LargeSendClustersUnderLossDeliverIntactData)
{
	ChainRun r;
	r.sg_cli = "tx_cluster=256k";
	r.dp_cli = "mtu=9000 drop=tx:every:50";
	r.dp_srv = "mtu=9000";
	r.count = 300;
	r.check = [](const sg_stats &st) {
		CHILD_CHECK(st.tx_cluster_bytes == 256u << 10);
		CHILD_CHECK(st.tx_chain_pkts > 0);
		CHILD_CHECK(st.tx_chain_segs * 10 <= st.tx_chain_pkts * 13);
		CHILD_CHECK(stack_counter("retrans_chunks") > 0);
	};
	chain_run(this, r);
}

/*
 * An empty pool: each packet usrsctp sends meanwhile is dropped once
 * (sg_conn_output_alloc finds no mbuf, conn_output does not try again:
 * one no_mbuf drop per tx_drop), and once mbufs are back the message gets
 * through, intact.
 */
TEST_F(SgTwoNodes, EmptyPoolDropsEachPacketOnceThenRecovers)
{
	pair_start("", "", [&](Node &n, sg_assoc_t a) {
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		MsgHdr h;
		CHILD_CHECK(n.recv(b, meta, 60));
		CHILD_CHECK(check_msg(b, h) && h.seq == 7);
		n.send(a, 0, 0, PPID_OK, "ok", 2);
	}, [&](Node &n, sg_assoc_t a) {
		std::vector<rte_mbuf *> held;
		rte_mbuf *m;
		while ((m = dp_pkt_alloc(n.port)) != nullptr)
			held.push_back(m);
		sg_stats s0, s1;
		dp_stats d0, d1;
		sg_ep_stats(n.ep, &s0);
		dp_port_stats(n.port, &d0);
		auto msg = make_msg(0, 7, 20000, false);
		n.send(a, 0, 0, PPID_DATA, msg.data(), msg.size());
		double t_end = now_s() + 0.3;
		n.wait([&] { return now_s() > t_end; }, 5);
		sg_ep_stats(n.ep, &s1);
		dp_port_stats(n.port, &d1);
		uint64_t drops = s1.tx_drops - s0.tx_drops;
		uint64_t no_mbuf = d1.drops[DP_DROP_NO_MBUF] -
				   d0.drops[DP_DROP_NO_MBUF];
		fprintf(stderr, "held %zu mbufs: tx_drops %" PRIu64
			", no_mbuf drops %" PRIu64 "\n", held.size(), drops,
			no_mbuf);
		CHILD_CHECK(drops > 0);
		CHILD_CHECK(no_mbuf == drops);
		CHILD_CHECK(s1.tx_copy_bytes == 0);
		for (rte_mbuf *x : held)
			dp_pkt_free(x);
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 60));
		CHILD_CHECK(meta.ppid == PPID_OK);
		n.report("DONE");
	});

	EXPECT_TRUE(expect_line(pair_cli, "DONE", 120));
	pair_end();
}

/*
 * SIGKILL the client: the server reports the association lost within its
 * configured timeout and keeps running; a restarted client reconnects.
 */
TEST_F(SgTwoNodes, PeerKilledIsLostThenReconnects)
{
	Child srv = spawn([&](Node &n) {
		n.up(true, "server", kFastFail);
		sg_event ev;
		CHILD_CHECK(n.wait_event(SG_EV_UP, &ev, 30));
		n.report("UP");
		double t0 = 0;
		/* Keep data flowing so the loss is noticed by T3 as well. */
		CHILD_CHECK(n.wait(
			[&] {
				if (n.events.size() && t0 == 0)
					t0 = now_s();
				for (auto &e : n.events)
					if (e.type == SG_EV_LOST)
						return true;
				return false;
			},
			30));
		char line[64];
		snprintf(line, sizeof(line), "LOST");
		n.report(line);
		n.events.clear();
		CHILD_CHECK(!sg_assoc_up(n.ep, ev.assoc));
		CHILD_CHECK(n.wait_event(SG_EV_UP, &ev, 40));
		CHILD_CHECK(ev.peer_ip_be == ip_of(2));
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 30));
		CHILD_CHECK(b.size() == 5 && memcmp(b.data(), "hello", 5) == 0);
		n.send(ev.assoc, 1, 0, PPID_OK, "ok", 2);
		n.report("UP2");
		n.wait_event(SG_EV_SHUTDOWN, nullptr, 10);
		n.down();
	});
	kids.push_back(&srv);
	auto client = [&](Node &n, bool second) {
		n.up(false, second ? "client2" : "client", kFastFail);
		sg_assoc_t a = 0;
		CHILD_CHECK(sg_connect(n.ep, ip_of(1), kSctpPort, &a) == 0);
		CHILD_CHECK(n.wait_event(SG_EV_UP, nullptr, 30));
		n.report("UP");
		if (!second) {
			/* Wait to be killed. */
			n.wait([] { return false; }, 60);
			_exit(4);
		}
		n.send(a, 1, 0, PPID_DATA, "hello", 5);
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 30));
		CHILD_CHECK(meta.ppid == PPID_OK);
		sg_disconnect(n.ep, a);
		n.wait_event(SG_EV_SHUTDOWN, nullptr, 10);
		n.down();
	};
	ASSERT_TRUE(wait_server_socket(20));
	Child cli = spawn([&](Node &n) { client(n, false); });
	kids.push_back(&cli);

	ASSERT_TRUE(expect_line(srv, "UP", 40));
	ASSERT_TRUE(expect_line(cli, "UP", 40));
	double t_kill = now_s();
	kill(cli.pid, SIGKILL);
	reap(cli, 5);
	EXPECT_EQ(0, dp_eal_runtime_dir_remove(
			     ("sdp-" + g_job + "-client").c_str()));
	/* hb 100 ms + (path_max_rxt + 1) * rto_max 200 ms, plus slack. */
	ASSERT_TRUE(expect_line(srv, "LOST", 10));
	double lost_s = now_s() - t_kill;
	fprintf(stderr, "association lost %.2f s after SIGKILL\n", lost_s);
	EXPECT_LT(lost_s, 5.0);

	Child cli2 = spawn([&](Node &n) { client(n, true); });
	kids.push_back(&cli2);
	EXPECT_TRUE(expect_line(cli2, "UP", 40));
	EXPECT_TRUE(expect_line(srv, "UP2", 40));
	EXPECT_EQ(0, reap(cli2, 30));
	EXPECT_EQ(0, reap(srv, 30));
}

/*
 * Two endpoints in ONE process (issue 10.1: one sg_ep per port), each on
 * its own port of a memif pair opened in this process (the second port
 * hot-plugged), on SCTP ports 5000 and 5001: usrsctp's AF_CONN registers
 * the two peer addresses on two links and keeps the associations apart.
 * Both endpoints are polled by one thread; messages go both ways on
 * several streams, every byte checked.  Runs in a child (process-wide
 * EAL and usrsctp).  Before several ports per process, the second port's
 * open found the first one ("the only port") and failed.
 */
TEST_F(SgTwoNodes, TwoEndpointsInOneProcessOverTwoPorts)
{
	Child c = spawn([&](Node &n) {
		char cfg[2][1024];
		dp_config dcfg[2];
		sg_config scfg[2];
		dp_port *port[2] = {nullptr, nullptr};
		sg_ep *ep[2] = {nullptr, nullptr};
		int rc_a = -1;

		for (int e = 0; e < 2; e++) {
			snprintf(cfg[e], sizeof(cfg[e]),
				 "dev=net_memif%d,role=%s,id=0,socket=%s/"
				 "memif0.sock,socket-abstract=no "
				 "ip=10.77.1.%d/24 prefix=sdp-%s-one mem=256 "
				 "link_wait_ms=15000", e,
				 e == 0 ? "server" : "client",
				 g_sockdir.c_str(), e + 1, g_job.c_str());
			CHILD_CHECK(dp_config_parse(cfg[e], &dcfg[e]) == 0);
			CHILD_CHECK(sg_config_parse(e == 0 ? "port=5000" :
							     "port=5001",
						    &scfg[e]) == 0);
		}
		CHILD_CHECK(dp_eal_init(&dcfg[0]) == 0);
		/* the server's open waits for its link: the client opens
		 * (hot-plugged) meanwhile */
		std::thread t([&] { rc_a = dp_port_open(&dcfg[0], &port[0]); });
		usleep(200 * 1000);
		int rc_b = dp_port_open(&dcfg[1], &port[1]);
		t.join();
		CHILD_CHECK(rc_a == 0 && rc_b == 0);
		CHILD_CHECK(dp_port_id(port[0]) != dp_port_id(port[1]));
		for (int e = 0; e < 2; e++)
			CHILD_CHECK(sg_ep_open(port[e], &scfg[e], &ep[e]) == 0);

		std::vector<sg_event> evs[2];
		auto poll_both = [&] {
			sg_event ev;

			for (int e = 0; e < 2; e++) {
				sg_poll(ep[e], dp_tsc());
				while (sg_next_event(ep[e], &ev) == 0)
					evs[e].push_back(ev);
			}
		};
		auto up = [&](int e, sg_assoc_t *a) {
			for (double end = now_s() + 20; now_s() < end;) {
				poll_both();
				for (auto &ev : evs[e])
					if (ev.type == SG_EV_UP) {
						*a = ev.assoc;
						return true;
					}
			}
			return false;
		};
		sg_assoc_t a0 = 0, a1 = 0;
		CHILD_CHECK(sg_connect(ep[0], dcfg[1].ip_be, 5001, &a0) == 0);
		CHILD_CHECK(up(0, &a0));
		CHILD_CHECK(up(1, &a1));

		constexpr uint32_t kMsgs = 400;
		for (int dir = 0; dir < 2; dir++) {
			int from = dir, to = 1 - dir;
			sg_assoc_t a = dir == 0 ? a0 : a1;
			uint32_t sent = 0, got = 0;
			uint32_t next[4] = {0, 0, 0, 0};

			for (double end = now_s() + 60;
			     got < kMsgs && now_s() < end;) {
				if (sent < kMsgs) {
					uint16_t st = (uint16_t)(1 + sent % 4);
					auto b = make_msg(st, sent / 4,
							  100 + sent * 37 % 3000,
							  false);
					iovec iov = {b.data(), b.size()};

					if (sg_send(ep[from], a, st, 0,
						    PPID_DATA, &iov, 1) == 0)
						sent++;
				}
				poll_both();
				sg_msg_desc *m = nullptr;
				while (sg_recv(ep[to], &m, 1) == 1) {
					std::vector<uint8_t> out;
					MsgHdr h;

					for (sg_msg_desc *x = m; x != nullptr;
					     x = x->next)
						out.insert(out.end(), x->data,
							   x->data + x->len);
					CHILD_CHECK(check_msg(out, h));
					CHILD_CHECK(h.stream == m->stream);
					CHILD_CHECK(h.seq ==
						    next[h.stream - 1]++);
					sg_msg_release(m);
					got++;
				}
			}
			CHILD_CHECK(got == kMsgs);
			n.report(dir == 0 ? "AB" : "BA");
		}
		sg_ep_close(ep[1]);
		sg_ep_close(ep[0]);
		/* The ports stay open: closing both ends of a memif pair in
		 * one process races in DPDK 22.11's memif (the last device
		 * of a socket frees the listener's interrupt handle while its
		 * callback is registered), and this child exits now; the
		 * fixture removes the runtime directory. */
		n.report("DONE");
	});
	kids.push_back(&c);
	EXPECT_TRUE(expect_line(c, "AB", 60));
	EXPECT_TRUE(expect_line(c, "BA", 60));
	EXPECT_TRUE(expect_line(c, "DONE", 30));
	EXPECT_EQ(0, reap(c, 30));
}

} // namespace

namespace {

/*
 * Issue 10.3: a lane (sg_ep_open_lane) is a second SCTP endpoint on the
 * same port, its own SCTP port and associations.  One process, a memif
 * pair: port 0 has base 5000 + lane 5100, port 1 base 5001 + lane 5101.
 * base0 -> 5001 and lane0 -> 5101 are two associations; messages sent on
 * each arrive at the matching endpoint of port 1 only (usrsctp
 * demultiplexes by SCTP port, polled through the base), in order; a lane
 * on the base's SCTP port is refused.
 */
TEST_F(SgTwoNodes, LanesAreAssociationsOfTheirOwnOnOnePort)
{
	Child c = spawn([&](Node &n) {
		char cfg[2][1024];
		dp_config dcfg[2];
		sg_config scfg[2], lcfg[2];
		dp_port *port[2] = {nullptr, nullptr};
		sg_ep *ep[2] = {nullptr, nullptr}, *lane[2] = {nullptr, nullptr};
		sg_ep *dup = nullptr;
		int rc_a = -1;

		for (int e = 0; e < 2; e++) {
			snprintf(cfg[e], sizeof(cfg[e]),
				 "dev=net_memif%d,role=%s,id=0,socket=%s/"
				 "memif0.sock,socket-abstract=no "
				 "ip=10.77.1.%d/24 prefix=sdp-%s-lane mem=256 "
				 "link_wait_ms=15000", e,
				 e == 0 ? "server" : "client",
				 g_sockdir.c_str(), e + 1, g_job.c_str());
			CHILD_CHECK(dp_config_parse(cfg[e], &dcfg[e]) == 0);
			CHILD_CHECK(sg_config_parse(e == 0 ? "port=5000" :
							     "port=5001",
						    &scfg[e]) == 0);
			CHILD_CHECK(sg_config_parse(e == 0 ? "port=5100" :
							     "port=5101",
						    &lcfg[e]) == 0);
		}
		CHILD_CHECK(dp_eal_init(&dcfg[0]) == 0);
		std::thread t([&] { rc_a = dp_port_open(&dcfg[0], &port[0]); });
		usleep(200 * 1000);
		int rc_b = dp_port_open(&dcfg[1], &port[1]);
		t.join();
		CHILD_CHECK(rc_a == 0 && rc_b == 0);
		for (int e = 0; e < 2; e++) {
			CHILD_CHECK(sg_ep_open(port[e], &scfg[e], &ep[e]) == 0);
			CHILD_CHECK(sg_ep_open_lane(ep[e], &lcfg[e],
						    &lane[e]) == 0);
		}
		CHILD_CHECK(sg_ep_open_lane(ep[0], &scfg[0], &dup) ==
			    -EADDRINUSE);
		CHILD_CHECK(sg_ep_open_lane(lane[0], &lcfg[1], &dup) ==
			    -EINVAL);

		sg_ep *all[4] = {ep[0], lane[0], ep[1], lane[1]};
		std::vector<sg_event> evs[4];
		auto poll_all = [&] {
			sg_event ev;

			for (int e = 0; e < 4; e++) {
				sg_poll(all[e], dp_tsc());
				while (sg_next_event(all[e], &ev) == 0)
					evs[e].push_back(ev);
			}
		};
		auto up = [&](int e, sg_assoc_t *a) {
			for (double end = now_s() + 20; now_s() < end;) {
				poll_all();
				for (auto &ev : evs[e])
					if (ev.type == SG_EV_UP) {
						*a = ev.assoc;
						return true;
					}
			}
			return false;
		};
		sg_assoc_t a[4] = {0, 0, 0, 0};
		CHILD_CHECK(sg_connect(ep[0], dcfg[1].ip_be, 5001, &a[0]) == 0);
		CHILD_CHECK(sg_connect(lane[0], dcfg[1].ip_be, 5101,
				       &a[1]) == 0);
		for (int e = 0; e < 4; e++)
			CHILD_CHECK(up(e, &a[e]));
		/* one association per endpoint: each sees exactly one UP */
		for (int e = 0; e < 4; e++)
			CHILD_CHECK(evs[e].size() == 1);

		constexpr uint32_t kMsgs = 300;
		uint32_t sent[2] = {0, 0}, got[2] = {0, 0};
		uint32_t next[2] = {0, 0};
		for (double end = now_s() + 60;
		     (got[0] < kMsgs || got[1] < kMsgs) && now_s() < end;) {
			for (int l = 0; l < 2; l++) {
				if (sent[l] >= kMsgs)
					continue;
				/* stream 1 + lane: tells the lanes apart */
				auto b = make_msg((uint16_t)(1 + l), sent[l],
						  100 + sent[l] * 37 % 3000,
						  false);
				iovec iov = {b.data(), b.size()};

				if (sg_send(all[l], a[l], (uint16_t)(1 + l), 0,
					    PPID_DATA, &iov, 1) == 0)
					sent[l]++;
			}
			poll_all();
			for (int l = 0; l < 2; l++) {
				sg_msg_desc *m = nullptr;

				while (sg_recv(all[2 + l], &m, 1) == 1) {
					std::vector<uint8_t> out;
					MsgHdr h;

					for (sg_msg_desc *x = m; x != nullptr;
					     x = x->next)
						out.insert(out.end(), x->data,
							   x->data + x->len);
					CHILD_CHECK(check_msg(out, h));
					CHILD_CHECK(m->assoc == a[2 + l]);
					CHILD_CHECK(h.stream == 1 + l);
					CHILD_CHECK(h.seq == next[l]++);
					sg_msg_release(m);
					got[l]++;
				}
			}
		}
		CHILD_CHECK(got[0] == kMsgs && got[1] == kMsgs);
		n.report("LANES");
		for (int e = 1; e >= 0; e--) {
			sg_ep_close(lane[e]);
			sg_ep_close(ep[e]);
		}
		n.report("DONE");
	});
	kids.push_back(&c);
	EXPECT_TRUE(expect_line(c, "LANES", 90));
	EXPECT_TRUE(expect_line(c, "DONE", 30));
	EXPECT_EQ(0, reap(c, 30));
}

/*
 * rx_ext close order with several endpoints: usrsctp keeps received packets
 * in the ports' mbufs, and endpoints close one by one while others keep
 * usrsctp up.  One process, a memif pair: port 0 has base 5000 + lane 5100,
 * port 1 base 5001 + lane 5101, an association between the bases and one
 * between the lanes.  Each of the four endpoints is sent 60 messages of
 * 64 KiB and reads none: 16 wait in its descriptors (rx_descs=16), the rest
 * in usrsctp, in mbufs of its port's pool.  Then the endpoints close in
 * @order (lanes before their base).  Once both endpoints of a port are
 * closed, at once (before any other poll runs usrsctp's timers: the caller
 * may close that port and free its pool now) every mbuf of that port's
 * pool is back; mbufs usrsctp still holds are always exactly the pools'
 * mbufs in use (none freed twice, none lost); at the end none is held.
 */
void rx_ext_close_order(std::vector<Child *> &kids, const char *name,
			const std::vector<int> &order)
{
	Child c = spawn([&](Node &n) {
		char cfg[2][1024];
		dp_config dcfg[2];
		sg_config scfg[2], lcfg[2];
		dp_port *port[2] = {nullptr, nullptr};
		sg_ep *all[4] = {nullptr, nullptr, nullptr, nullptr};
		bool open[4] = {false, false, false, false};
		unsigned int base_use[2] = {0, 0};
		int rc_a = -1;

		for (int e = 0; e < 2; e++) {
			snprintf(cfg[e], sizeof(cfg[e]),
				 "dev=net_memif%d,role=%s,id=0,socket=%s/"
				 "memif0.sock,socket-abstract=no "
				 "ip=10.77.1.%d/24 prefix=sdp-%s-%s mem=256 "
				 "link_wait_ms=15000", e,
				 e == 0 ? "server" : "client",
				 g_sockdir.c_str(), e + 1, g_job.c_str(), name);
			CHILD_CHECK(dp_config_parse(cfg[e], &dcfg[e]) == 0);
			CHILD_CHECK(sg_config_parse(
				e == 0 ? "port=5000 rx_descs=16 max_msg=1M"
				       : "port=5001 rx_descs=16 max_msg=1M", &scfg[e]) == 0);
			CHILD_CHECK(sg_config_parse(
				e == 0 ? "port=5100 rx_descs=16 max_msg=1M"
				       : "port=5101 rx_descs=16 max_msg=1M", &lcfg[e]) == 0);
		}
		CHILD_CHECK(dp_eal_init(&dcfg[0]) == 0);
		std::thread t([&] { rc_a = dp_port_open(&dcfg[0], &port[0]); });
		usleep(200 * 1000);
		int rc_b = dp_port_open(&dcfg[1], &port[1]);
		t.join();
		CHILD_CHECK(rc_a == 0 && rc_b == 0);
		for (int e = 0; e < 2; e++)
			base_use[e] = rte_mempool_in_use_count(port[e]->pool);
		/* all[]: 0 base 0, 1 lane 0, 2 base 1, 3 lane 1 */
		for (int e = 0; e < 2; e++) {
			CHILD_CHECK(sg_ep_open(port[e], &scfg[e],
					       &all[2 * e]) == 0);
			CHILD_CHECK(sg_ep_open_lane(all[2 * e], &lcfg[e],
						    &all[2 * e + 1]) == 0);
			open[2 * e] = open[2 * e + 1] = true;
		}
		auto in_use = [&](int p) {
			return (unsigned int)rte_mempool_in_use_count(
				       port[p]->pool) - base_use[p];
		};
		std::vector<sg_event> evs[4];
		auto poll_open = [&] {
			sg_event ev;

			for (int e = 0; e < 4; e++) {
				if (!open[e])
					continue;
				sg_poll(all[e], dp_tsc());
				while (sg_next_event(all[e], &ev) == 0)
					evs[e].push_back(ev);
			}
		};
		auto up = [&](int e, sg_assoc_t *a) {
			for (double end = now_s() + 20; now_s() < end;) {
				poll_open();
				for (auto &ev : evs[e])
					if (ev.type == SG_EV_UP) {
						*a = ev.assoc;
						return true;
					}
			}
			return false;
		};
		sg_assoc_t a[4] = {0, 0, 0, 0};
		CHILD_CHECK(sg_connect(all[0], dcfg[1].ip_be, 5001, &a[0]) == 0);
		CHILD_CHECK(sg_connect(all[1], dcfg[1].ip_be, 5101, &a[1]) == 0);
		for (int e = 0; e < 4; e++)
			CHILD_CHECK(up(e, &a[e]));

		/* every endpoint is sent kCount messages it never reads */
		constexpr uint32_t kCount = 60, kLen = 64u << 10;
		uint32_t sent[4] = {0, 0, 0, 0};
		const int peer_of[4] = {2, 3, 0, 1};
		for (double end = now_s() + 60; now_s() < end;) {
			bool all_sent = true;

			for (int e = 0; e < 4; e++) {
				if (sent[e] >= kCount)
					continue;
				all_sent = false;
				if (sg_send_busy(all[e]))
					continue;
				auto b = make_msg(1, sent[e], kLen, false);
				iovec iov = {b.data(), b.size()};
				int rc = sg_send(all[e], a[e], 1, 0, PPID_DATA,
						 &iov, 1);

				if (rc == 0 || rc == -EINPROGRESS)
					sent[e]++;
			}
			poll_open();
			if (all_sent)
				break;
		}
		for (int e = 0; e < 4; e++)
			CHILD_CHECK(sent[e] == kCount);
		/* let it all arrive: nothing is read, so it stops growing */
		uint32_t held = 0;
		for (double end = now_s() + 30, still = now_s() + 1;
		     now_s() < end && now_s() < still;) {
			poll_open();
			if (sg_rx_ext_held_now() != held) {
				held = sg_rx_ext_held_now();
				still = now_s() + 1;
			}
		}
		sg_stats st[4];
		for (int e = 0; e < 4; e++) {
			sg_ep_stats(all[e], &st[e]);
			fprintf(stderr, "%s: endpoint %d: %" PRIu64 " messages "
				"in descriptors, %" PRIu64 " packets kept\n",
				name, e, st[e].msgs_in, st[e].rx_ext_pkts);
			/* (a lane's packets are counted on its base: the
			 * link's) */
			CHILD_CHECK(e % 2 == 1 || st[e].rx_ext_pkts > 0);
			/* more than its descriptors hold: the rest waits in
			 * usrsctp */
			CHILD_CHECK(st[e].msgs_in < kCount);
		}
		fprintf(stderr, "%s: usrsctp holds %u mbufs (port 0 %u, port 1 "
			"%u in use)\n", name, sg_rx_ext_held_now(), in_use(0),
			in_use(1));
		CHILD_CHECK(sg_rx_ext_held_now() > 0);
		CHILD_CHECK(sg_rx_ext_held_now() == in_use(0) + in_use(1));
		(void)peer_of;

		for (int e : order) {
			int p = e / 2;

			sg_ep_close(all[e]);
			open[e] = false;
			fprintf(stderr, "%s: closed endpoint %d: usrsctp holds "
				"%u, port 0 %u, port 1 %u in use\n", name, e,
				sg_rx_ext_held_now(), in_use(0), in_use(1));
			/* the port's last endpoint: its pool may go now */
			if (!open[2 * p] && !open[2 * p + 1])
				CHILD_CHECK(in_use(p) == 0);
			CHILD_CHECK(sg_rx_ext_held_now() ==
				    in_use(0) + in_use(1));
			/* the others run usrsctp on (timers, the ABORTs
			 * of the closed endpoint's associations) */
			for (double end = now_s() + 0.5; now_s() < end;)
				poll_open();
			CHILD_CHECK(sg_rx_ext_held_now() ==
				    in_use(0) + in_use(1));
			if (!open[2 * p] && !open[2 * p + 1])
				CHILD_CHECK(in_use(p) == 0);
		}
		CHILD_CHECK(sg_rx_ext_held_now() == 0);
		CHILD_CHECK(in_use(0) == 0 && in_use(1) == 0);
		/* ports stay open: see TwoEndpointsInOneProcessOverTwoPorts */
		n.report("DONE");
	});
	kids.push_back(&c);
	EXPECT_TRUE(expect_line(c, "DONE", 180));
	EXPECT_EQ(0, reap(c, 30));
}

TEST_F(SgTwoNodes, RxExtCloseOneSideThenTheOther)
{
	rx_ext_close_order(kids, "close-a", {3, 2, 1, 0});
}

TEST_F(SgTwoNodes, RxExtCloseLanesFirstThenTheBases)
{
	rx_ext_close_order(kids, "close-b", {1, 3, 0, 2});
}

TEST_F(SgTwoNodes, RxExtCloseOneLaneThenTheOtherPort)
{
	rx_ext_close_order(kids, "close-c", {1, 3, 2, 0});
}

} // namespace

namespace {

/*
 * Issue 9.5: free receive descriptors are reused last in, first out.  With
 * the FIFO they replaced, a ping-pong wrote every message into the
 * descriptor released rx_descs messages earlier: cold cache lines, and a
 * page fault per page on the first round (16 KiB one-way latency over
 * memif went from ~10 to ~40 us, traced with bench/trace_stages.py).
 */
TEST_F(SgTwoNodes, FreeDescriptorsAreReusedLastInFirstOut)
{
	Child c = spawn([&](Node &) {
		dp_config dcfg;
		sg_config scfg;
		sg_rxpool pool;
		std::string dpc = "dev=net_null0 ip=10.77.9.1/24 mem=256 "
				  "prefix=sdp-" + g_job + "-pool";

		CHILD_CHECK(dp_config_parse(dpc.c_str(), &dcfg) == 0);
		CHILD_CHECK(dp_eal_init(&dcfg) == 0);
		CHILD_CHECK(sg_config_parse("rx_descs=16 rx_buf=4096 max_msg=65536",
					    &scfg) == 0);
		CHILD_CHECK(sg_rxpool_init(&pool, &scfg, &pool) == 0);
		sg_rxdesc *a = sg_rxpool_get(&pool);
		CHILD_CHECK(a != nullptr);
		for (int i = 0; i < 100; i++) { /* steady exchange */
			sg_rxpool_put_chain(&a->pub);
			sg_rxdesc *b = sg_rxpool_get(&pool);
			CHILD_CHECK(b == a);
		}
		sg_rxdesc *b = sg_rxpool_get(&pool);
		CHILD_CHECK(b != nullptr && b != a);
		sg_rxpool_put_chain(&a->pub);
		sg_rxpool_put_chain(&b->pub);
		CHILD_CHECK(sg_rxpool_get(&pool) == b);
		CHILD_CHECK(sg_rxpool_get(&pool) == a);
		/* all 16 come out, then none */
		std::vector<sg_rxdesc *> all{ a, b };
		while (sg_rxdesc *d = sg_rxpool_get(&pool))
			all.push_back(d);
		CHILD_CHECK(all.size() == 16);
		for (sg_rxdesc *d : all)
			sg_rxpool_put_chain(&d->pub);
		sg_rxpool_fini(&pool);
		dp_eal_fini();
	});
	kids.push_back(&c);
	EXPECT_EQ(0, reap(c, 60));
}

} /* namespace */

namespace {

/*
 * Issue 9.5: a message given in pieces whose first piece is short (a
 * UCT/UCP header in front of zcopy data) leaves as full packets: at MTU
 * 1500, 16 + 1000 bytes is one packet (it was two: the 16 bytes alone,
 * then the rest, each SACKed), 16 + 2000 bytes is two (was three).  The
 * receiver gets the bytes in order.
 */
TEST_F(SgTwoNodes, ShortLeadingPieceSharesThePacket)
{
	pair_start("", "", [&](Node &n, sg_assoc_t a) {
		for (uint32_t len : { 1016u, 2016u }) {
			sg_msg_desc *m = nullptr;

			CHILD_CHECK(n.wait(
				[&] { return sg_recv(n.ep, &m, 1) == 1; }, 30));
			CHILD_CHECK(m->msg_len == len && m->nb_segs == 1);
			for (uint32_t i = 0; i < len; i++)
				CHILD_CHECK(m->data[i] == (uint8_t)(i * 7 + 1));
			sg_msg_release(m);
		}
		n.send(a, 0, 0, PPID_OK, "ok", 2);
	}, [&](Node &n, sg_assoc_t a) {
		std::vector<uint8_t> m(2016);
		for (size_t i = 0; i < m.size(); i++)
			m[i] = (uint8_t)(i * 7 + 1);
		for (uint32_t payload : { 1000u, 2000u }) {
			iovec iov[2] = { { m.data(), 16 },
					 { m.data() + 16, payload } };
			sg_stats before, after;

			sg_ep_stats(n.ep, &before);
			/* usrsctp emits the packets inside sg_send */
			CHILD_CHECK(sg_send(n.ep, a, 0, 0, PPID_BULK, iov, 2) ==
				    0);
			sg_ep_stats(n.ep, &after);
			char line[96];
			snprintf(line, sizeof(line), "PKTS %u %" PRIu64, payload,
				 after.pkts_out - before.pkts_out);
			n.report(line);
		}
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 60));
	});
	std::string l1, l2;
	EXPECT_TRUE(expect_line(pair_cli, "PKTS 1000", 60, &l1));
	EXPECT_TRUE(expect_line(pair_cli, "PKTS 2000", 60, &l2));
	EXPECT_EQ("PKTS 1000 1", l1);
	EXPECT_EQ("PKTS 2000 2", l2);
	pair_end();
}

/*
 * SACK hold (sack_hold_us): a ping-pong of @rounds 8-byte messages, the
 * server echoing each at once, both ports batching TX to one burst per
 * poll as af_packet does (memif does not, and does not hold).  Reports the server's TX bursts over the
 * rounds (on af_packet each one is a sendto) and, on the client after the
 * last echo, whether sg_assoc_quiet saw the association quiet before and
 * after one more poll.
 */
void sack_hold_pingpong(SgTwoNodes &fx, const char *sg, uint32_t rounds,
			std::string *bursts, std::string *quiet)
{
	fx.pair_start(sg, sg, [&](Node &n, sg_assoc_t a) {
		dp_stats st0, st1;
		char line[96];
		std::vector<uint8_t> m;
		sg_msg_desc meta;
		/* round 0 warms up (the association's first SACKs) */
		CHILD_CHECK(n.recv(m, meta, 60));
		n.send(a, 0, 0, PPID_BULK, m.data(), m.size());
		dp_port_stats(n.port, &st0);
		for (uint32_t r = 0; r < rounds; r++) {
			CHILD_CHECK(n.recv(m, meta, 60));
			n.send(a, 0, 0, PPID_BULK, m.data(), m.size());
		}
		dp_port_stats(n.port, &st1);
		snprintf(line, sizeof(line), "BURSTS %" PRIu64 " HELD %" PRIu64,
			 st1.tx_bursts - st0.tx_bursts,
			 st1.tx_held - st0.tx_held);
		n.report(line);
	}, [&](Node &n, sg_assoc_t a) {
		char line[96];
		std::vector<uint8_t> m(8), b;
		sg_msg_desc meta;
		for (uint32_t r = 0; r <= rounds; r++) {
			memcpy(m.data(), &r, sizeof(r));
			n.send(a, 0, 0, PPID_BULK, m.data(), m.size());
			CHILD_CHECK(n.recv(b, meta, 60));
			CHILD_CHECK(b == m);
		}
		/* the echo's SACK came with it; ours for the echo is owed */
		bool q0 = sg_assoc_quiet(n.ep, a, dp_tsc());
		n.poll_once();
		bool q1 = sg_assoc_quiet(n.ep, a, dp_tsc());
		snprintf(line, sizeof(line), "QUIET %d %d", q0, q1);
		n.report(line);
	}, true /* af_packet's TX: a burst per poll */);
	EXPECT_TRUE(expect_line(fx.pair_srv, "BURSTS", 120, bursts));
	EXPECT_TRUE(expect_line(fx.pair_cli, "QUIET", 120, quiet));
	printf("%s: %u rounds: %s, %s\n", sg, rounds, bursts->c_str(),
	       quiet->c_str());
	fx.pair_end();
}

/* Without the hold: two bursts per echo (the SACK at the end of the poll
 * that read the message, then the echo), and no SACK owed once that poll
 * is over.  The control for the next test. */
TEST_F(SgTwoNodes, SackAtOnceCostsABurstOfItsOwn)
{
	const uint32_t kRounds = 200;
	std::string bursts, quiet;
	unsigned long long nb = 0, held = 0;

	sack_hold_pingpong(*this, "sack_delay_ms=0 sack_hold_us=0", kRounds,
			   &bursts, &quiet);
	ASSERT_EQ(2, sscanf(bursts.c_str(), "BURSTS %llu HELD %llu", &nb,
			    &held)) << bursts;
	EXPECT_GE(nb, 2ull * kRounds - 5) << bursts;
	EXPECT_EQ(0ull, held);
	EXPECT_EQ("QUIET 1 1", quiet);
}

/* With it: the SACK of the poll that read the message rides in the echo's
 * burst (one burst per echo: on af_packet one sendto per one-way message
 * instead of two), and a flush asking for it (sg_assoc_quiet) releases
 * it: not quiet, then quiet after one poll, not after the hold's 50 ms.
 * Fails without the hold: 2 bursts per echo, nothing held. */
TEST_F(SgTwoNodes, SackHoldRidesWithTheReply)
{
	const uint32_t kRounds = 200;
	std::string bursts, quiet;
	unsigned long long nb = 0, held = 0;

	sack_hold_pingpong(*this, "sack_delay_ms=0 sack_hold_us=50000",
			   kRounds, &bursts, &quiet);
	ASSERT_EQ(2, sscanf(bursts.c_str(), "BURSTS %llu HELD %llu", &nb,
			    &held)) << bursts;
	EXPECT_LE(nb, kRounds + kRounds / 10) << bursts;
	EXPECT_GE(held, kRounds - 5) << bursts;
	EXPECT_EQ("QUIET 0 1", quiet);
}

/* The same with the transport's SACK settings (every second packet, the
 * last of each message at once: sack_delay_ms=5 and the I bit): the echo's
 * SACK is still made in the poll that read the message, so it is held
 * and rides with the echo, and a flush still finds it owed at once (QUIET
 * 0 1; with a delayed SACK it would be 0 0). */
TEST_F(SgTwoNodes, SackHoldRidesWithTheReplyWhenSackingEverySecond)
{
	const uint32_t kRounds = 200;
	std::string bursts, quiet;
	unsigned long long nb = 0, held = 0;

	sack_hold_pingpong(*this, "sack_delay_ms=5 sack_hold_us=50000",
			   kRounds, &bursts, &quiet);
	ASSERT_EQ(2, sscanf(bursts.c_str(), "BURSTS %llu HELD %llu", &nb,
			    &held)) << bursts;
	EXPECT_LE(nb, kRounds + kRounds / 10) << bursts;
	EXPECT_GE(held, kRounds - 5) << bursts;
	EXPECT_EQ("QUIET 0 1", quiet);
}

/* With NR-SACK negotiated (nr_sack=1) every SACK is an NR-SACK chunk
 * (type 16): it is held the same way.  Fails when the hold recognises only
 * the SACK chunk (type 3): 2 bursts per echo, nothing held. */
TEST_F(SgTwoNodes, SackHoldRidesWithTheReplyWithNrSack)
{
	const uint32_t kRounds = 200;
	std::string bursts, quiet;
	unsigned long long nb = 0, held = 0;

	sack_hold_pingpong(*this,
			   "sack_delay_ms=0 sack_hold_us=50000 nr_sack=1",
			   kRounds, &bursts, &quiet);
	ASSERT_EQ(2, sscanf(bursts.c_str(), "BURSTS %llu HELD %llu", &nb,
			    &held)) << bursts;
	EXPECT_LE(nb, kRounds + kRounds / 10) << bursts;
	EXPECT_GE(held, kRounds - 5) << bursts;
	EXPECT_EQ("QUIET 0 1", quiet);
}

/*
 * The I bit (sack_immediate, RFC 7053): the receiver delays SACKs 200 ms
 * and SACKs every second packet.  The sender sends @rounds pairs of
 * messages of 1 and 3 packets (MTU 1500), each once the one before was
 * acknowledged, and reports the median time from sg_send until
 * sg_assoc_quiet (what a flush waits for: everything acknowledged), after
 * a warm-up message.  The
 * receiver reports after how many messages it was quiet right after the
 * poll that read the message (no SACK owed: the last packet's SACK left
 * at once).
 */
void sack_flush(SgTwoNodes &fx, const char *sg_tx, uint32_t rounds,
		double *med_ms, unsigned *rx_quiet)
{
	const uint32_t lens[2] = { 1000u, 4000u };

	fx.pair_start("sack_delay_ms=200 rto_min_ms=500", sg_tx,
		      [&](Node &n, sg_assoc_t a) {
		unsigned q = 0;
		char line[64];
		for (uint32_t k = 0; k <= 2 * rounds; k++) {
			std::vector<uint8_t> b;
			sg_msg_desc meta;
			bool quiet;

			CHILD_CHECK(n.recv(b, meta, 30));
			quiet = sg_assoc_quiet(n.ep, a, dp_tsc());
			if (k == 0) /* warm-up */
				continue;
			CHILD_CHECK(b.size() == lens[k % 2]);
			q += quiet;
		}
		snprintf(line, sizeof(line), "RXQUIET %u", q);
		n.report(line);
	}, [&](Node &n, sg_assoc_t a) {
		std::vector<double> t;
		std::vector<uint8_t> m(lens[1], 0x5a);
		char line[64];
		/* k = 0: warm-up (usrsctp SACKs the first DATA at once) */
		for (uint32_t k = 0; k <= 2 * rounds; k++) {
			iovec iov = { m.data(), k == 0 ? 100 : lens[k % 2] };
			double t0 = now_s();

			CHILD_CHECK(sg_send(n.ep, a, 0, 0, PPID_BULK, &iov,
					    1) == 0);
			CHILD_CHECK(n.wait(
				[&] {
					return sg_assoc_quiet(n.ep, a,
							      dp_tsc());
				},
				30));
			if (k != 0)
				t.push_back(now_s() - t0);
		}
		for (uint32_t k = 0; k < t.size(); k++)
			fprintf(stderr, "%s%.1f", k ? " " : "flush ms: ",
				1000 * t[k]);
		fprintf(stderr, "\n");
		std::sort(t.begin(), t.end());
		snprintf(line, sizeof(line), "MEDIAN %.3f",
			 1000 * (t[t.size() / 2 - 1] + t[t.size() / 2]) / 2);
		n.report(line);
	});
	std::string med, q;
	EXPECT_TRUE(expect_line(fx.pair_cli, "MEDIAN", 120, &med));
	EXPECT_TRUE(expect_line(fx.pair_srv, "RXQUIET", 120, &q));
	*med_ms = strtod(med.c_str() + 7, nullptr);
	*rx_quiet = (unsigned)strtoul(q.c_str() + 8, nullptr, 10);
	printf("%s: %u rounds: %s, %s\n", sg_tx, rounds, med.c_str(),
	       q.c_str());
	fx.pair_end();
}

/* With the I bit (the default): acknowledged well before the receiver's
 * 200 ms delayed SACK, and the receiver owes nothing after each read.
 * Fails without the I bit (see the next test). */
TEST_F(SgTwoNodes, LastPacketOfAMessageIsSackedAtOnce)
{
	const uint32_t kRounds = 8;
	double med = 0;
	unsigned q = 0;

	sack_flush(*this, "", kRounds, &med, &q);
	EXPECT_LT(med, 100.0);
	EXPECT_EQ(2 * kRounds, q);
}

/* The control: without it a flush waits out the delayed SACK (the
 * median message, 1 or 3 packets, has an odd last packet), and after a
 * 1-packet message the receiver owes its SACK. */
TEST_F(SgTwoNodes, WithoutTheIBitAFlushWaitsForTheDelayedSack)
{
	const uint32_t kRounds = 8;
	double med = 0;
	unsigned q = 0;

	sack_flush(*this, "sack_immediate=0", kRounds, &med, &q);
	EXPECT_GE(med, 150.0);
	EXPECT_LE(q, kRounds);
}

} /* namespace */

namespace {

/*
 * Issue 9.6: a message of several packets sent to an idle association
 * (nothing queued or unacknowledged: a request/response exchange) has its
 * first packet handed to usrsctp alone and flushed to the port before the
 * rest is copied, so the receiver works on it meanwhile (16 KiB one-way
 * over memif was both sides' copies of both packets in series).  A
 * message sent while data is in flight goes in one piece (usrsctp would
 * hold an incomplete piece for the SACK anyway), and so does one that fits
 * a packet.  Every byte arrives in order either way.  At MTU 1500:
 * 3000 bytes to an idle association -> 1 early first packet; another
 * 3000 right behind it -> 0; 1000 bytes once all is acknowledged -> 0.
 */
TEST_F(SgTwoNodes, FirstPacketLeavesEarlyOnlyWhenIdle)
{
	const uint32_t lens[] = { 3000u, 3000u, 1000u };

	pair_start("", "", [&](Node &n, sg_assoc_t a) {
		for (uint32_t k = 0; k < 3; k++) {
			std::vector<uint8_t> b;
			sg_msg_desc meta;

			CHILD_CHECK(n.recv(b, meta, 30));
			CHILD_CHECK(b.size() == lens[k]);
			for (uint32_t i = 0; i < lens[k]; i++)
				CHILD_CHECK(b[i] == (uint8_t)(i * 7 + k));
		}
		n.send(a, 0, 0, PPID_OK, "ok", 2);
	}, [&](Node &n, sg_assoc_t a) {
		std::vector<std::vector<uint8_t>> m(3);
		for (uint32_t k = 0; k < 3; k++) {
			m[k].resize(lens[k]);
			for (uint32_t i = 0; i < lens[k]; i++)
				m[k][i] = (uint8_t)(i * 7 + k);
		}
		for (uint32_t k = 0; k < 3; k++) {
			iovec iov = { m[k].data(), m[k].size() };
			sg_stats before, after;
			uint64_t unacked = 1;

			if (k == 2) /* all acknowledged: idle again */
				CHILD_CHECK(n.wait(
					[&] {
						return sg_assoc_unacked(
							       n.ep, a,
							       &unacked) == 0 &&
						       unacked == 0;
					},
					30));
			sg_ep_stats(n.ep, &before);
			/* k == 1 right behind k == 0: no poll, nothing
			 * acknowledged */
			CHILD_CHECK(sg_send(n.ep, a, 0, 0, PPID_BULK, &iov,
					    1) == 0);
			sg_ep_stats(n.ep, &after);
			char line[96];
			snprintf(line, sizeof(line), "EARLY %u %" PRIu64, k,
				 after.tx_first_pkt_early -
					 before.tx_first_pkt_early);
			n.report(line);
		}
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 60));
	});
	std::string l0, l1, l2;
	EXPECT_TRUE(expect_line(pair_cli, "EARLY 0", 60, &l0));
	EXPECT_TRUE(expect_line(pair_cli, "EARLY 1", 60, &l1));
	EXPECT_TRUE(expect_line(pair_cli, "EARLY 2", 60, &l2));
	EXPECT_EQ("EARLY 0 1", l0);
	EXPECT_EQ("EARLY 1 0", l1);
	EXPECT_EQ("EARLY 2 0", l2);
	pair_end();
}

} /* namespace */

namespace {

/*
 * SG max_burst reaches usrsctp (SCTP_MAX_BURST): usrsctp starts a path's
 * congestion window at min(sctp_initial_cwnd = 3, max_burst) MTUs and
 * cuts it to flight + max_burst MTUs at every output.  So the first
 * message of a fresh association, ten packets long at MTU 1500, leaves
 * sg_send with 4 packets on the wire by default (usrsctp sends while the
 * flight is below the window, so one packet beyond 3 MTUs) and with 2
 * under max_burst=1 (4 if the key were parsed but not applied).  The
 * receiver still gets the whole message.
 */
class SgFirstFlight : public SgTwoNodes {
      protected:
	void first_flight(const char *sg_extra, uint64_t *pkts);
};

void SgFirstFlight::first_flight(const char *sg_extra, uint64_t *pkts)
{
	const uint32_t len = 14000;

	pair_start(sg_extra, sg_extra, [&](Node &n, sg_assoc_t a) {
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 30));
		CHILD_CHECK(b.size() == len);
		for (uint32_t i = 0; i < len; i++)
			CHILD_CHECK(b[i] == (uint8_t)(i * 13 + 5));
		n.send(a, 0, 0, PPID_OK, "ok", 2);
	}, [&](Node &n, sg_assoc_t a) {
		std::vector<uint8_t> m(len);
		for (uint32_t i = 0; i < len; i++)
			m[i] = (uint8_t)(i * 13 + 5);
		iovec iov = { m.data(), m.size() };
		sg_stats before, after;

		sg_ep_stats(n.ep, &before);
		CHILD_CHECK(sg_send(n.ep, a, 0, 0, PPID_BULK, &iov, 1) == 0);
		sg_ep_stats(n.ep, &after);
		char line[64];
		snprintf(line, sizeof(line), "PKTS %" PRIu64,
			 after.pkts_out - before.pkts_out);
		n.report(line);
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 60));
	});
	std::string l;
	EXPECT_TRUE(expect_line(pair_cli, "PKTS", 60, &l));
	*pkts = strtoull(l.c_str() + 5, nullptr, 10);
	pair_end();
}

TEST_F(SgFirstFlight, MaxBurstLimitsTheFirstFlight)
{
	uint64_t pkts = 0;

	first_flight("max_burst=1", &pkts);
	EXPECT_EQ(2u, pkts);
}

TEST_F(SgFirstFlight, DefaultFirstFlightIsFourPackets)
{
	uint64_t pkts = 0;

	first_flight("", &pkts);
	EXPECT_EQ(4u, pkts);
}

/*
 * SG stream_sched reaches usrsctp (SCTP_PLUGGABLE_SS).  A fresh
 * association under max_burst=1 sends little at once, so five 14000-byte
 * messages sent back to back (0, 1, 2 on stream 1, then 3, 4 on stream 2)
 * wait in usrsctp's stream queues and its scheduler picks the order they
 * leave in: first come first served (5) keeps the send order; usrsctp's
 * default round-robin takes stream 2's first message before stream 1's
 * last (the farm's 10 streams finished every task late that way).
 */
class SgStreamSched : public SgTwoNodes {
      protected:
	void order(const char *sg_extra, std::string *got);
};

void SgStreamSched::order(const char *sg_extra, std::string *got)
{
	const uint32_t len = 14000, n_msgs = 5;
	static const uint16_t stream_of[] = { 1, 1, 1, 2, 2 };

	pair_start(sg_extra, sg_extra, [&](Node &n, sg_assoc_t a) {
		std::string line = "ORDER";
		for (uint32_t k = 0; k < n_msgs; k++) {
			std::vector<uint8_t> b;
			sg_msg_desc meta;
			CHILD_CHECK(n.recv(b, meta, 60));
			CHILD_CHECK(b.size() == len && b[0] < n_msgs &&
				    meta.stream == stream_of[b[0]]);
			line += " " + std::to_string(b[0]);
		}
		n.report(line.c_str());
		n.send(a, 0, 0, PPID_OK, "ok", 2);
	}, [&](Node &n, sg_assoc_t a) {
		std::vector<uint8_t> m(len);
		for (uint32_t k = 0; k < n_msgs; k++) {
			memset(m.data(), (int)k, len);
			n.send(a, stream_of[k], 0, PPID_BULK, m.data(), len);
		}
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 60));
	});
	EXPECT_TRUE(expect_line(pair_srv, "ORDER", 60, got));
	pair_end();
}

TEST_F(SgStreamSched, FirstComeFirstServedKeepsTheSendOrder)
{
	std::string got;

	order("max_burst=1 stream_sched=5", &got);
	EXPECT_EQ("ORDER 0 1 2 3 4", got);
}

TEST_F(SgStreamSched, DefaultRoundRobinTakesTheOtherStreamFirst)
{
	std::string got;

	order("max_burst=1", &got);
	/* stream 2's first message (3) before stream 1's last (2) */
	EXPECT_LT(got.find('3'), got.find('2')) << got;
}

} /* namespace */

namespace {

/*
 * Direct placement (sg_ep_set_place, sg_place.c): the receiver peeks 16
 * bytes of each message; the header names what its place function does
 * with the rest of a 100000-byte message (no multiple of the MTU):
 *   0  declines at once: the message comes whole in one descriptor
 *   1  hands out its buffer 1000 bytes per call: every byte lands there,
 *      the message is published as its 16 bytes with SG_MSG_PLACED
 *   2  hands out 3000 bytes, then NULL (its destination went away): the
 *      rest is discarded (SG_MSG_DISCARDED), the buffer past 3000 bytes
 *      is never written, and the next message is intact
 * and a 10-byte message ends within the peek.  rx_direct_bytes and
 * rx_discard_bytes count exactly those bytes; done runs after every read
 * into a buffer place gave (bytes summed == placed).
 */
struct PlaceState {
	std::vector<uint8_t> dst;
	uint32_t calls = 0, dones = 0;
	uint64_t done_bytes = 0;
};

void *place_cb(void *arg, sg_ep *, const sg_msg_desc *head, uint32_t off,
	       size_t *len_p)
{
	PlaceState *ps = static_cast<PlaceState *>(arg);
	uint32_t mode;
	size_t at;

	if (head->len < 16)
		return nullptr;
	memcpy(&mode, head->data, sizeof(mode));
	ps->calls++;
	at = off - 16;
	if (mode == 0 || at >= ps->dst.size() || (mode == 2 && at >= 3000))
		return nullptr;
	*len_p = std::min<size_t>(1000, ps->dst.size() - at);
	return ps->dst.data() + at;
}

void place_done_cb(void *arg, const sg_msg_desc *, uint32_t, size_t bytes)
{
	PlaceState *ps = static_cast<PlaceState *>(arg);

	ps->dones++;
	ps->done_bytes += bytes;
}

uint8_t place_byte(uint32_t mode, size_t i)
{
	return (uint8_t)(i * 13 + mode * 101 + 5);
}

TEST_F(SgTwoNodes, PlaceWritesTheRestStraightIntoTheConsumersBuffer)
{
	constexpr uint32_t kLen = 100000, kPeek = 16;

	Child srv = spawn([&](Node &n) {
		n.up(true, "server", "");
		PlaceState ps;
		sg_event ev;
		sg_stats s0, s1;
		CHILD_CHECK(n.wait_event(SG_EV_UP, &ev, 30));
		CHILD_CHECK(sg_ep_set_place(n.ep, 0, place_cb, place_done_cb,
					    &ps) == -EINVAL);
		CHILD_CHECK(sg_ep_set_place(n.ep, kPeek, place_cb,
					    place_done_cb, &ps) == 0);
		for (uint32_t mode = 0; mode < 4; mode++) {
			uint32_t len = mode == 3 ? 10 : kLen;
			sg_msg_desc *m = nullptr;

			ps.dst.assign(kLen - kPeek, 0xee);
			ps.calls = ps.dones = 0;
			ps.done_bytes = 0;
			sg_ep_stats(n.ep, &s0);
			CHILD_CHECK(n.wait(
				[&] { return sg_recv(n.ep, &m, 1) == 1; }, 60));
			sg_ep_stats(n.ep, &s1);
			if (m->msg_len != len)
				fprintf(stderr, "mode %u: msg_len %u flags %u "
					"len %u\n", mode, m->msg_len, m->flags,
					m->len);
			CHILD_CHECK(m->msg_len == len);
			uint64_t direct = s1.rx_direct_bytes -
					  s0.rx_direct_bytes;
			uint64_t discard = s1.rx_discard_bytes -
					   s0.rx_discard_bytes;
			char line[160];
			snprintf(line, sizeof(line),
				 "MODE %u flags %u len %u direct %" PRIu64
				 " discard %" PRIu64 " calls %u dones %u", mode,
				 m->flags, m->len, direct, discard, ps.calls,
				 ps.dones);
			n.report(line);
			CHILD_CHECK(ps.done_bytes == direct);
			if (mode == 0 || mode == 3) {
				/* whole, in descriptors (rx_buf 64 KiB: two
				 * for 100000 bytes, the first one full) */
				uint32_t i = 0;

				CHILD_CHECK(m->flags == 0 && direct == 0 &&
					    discard == 0);
				CHILD_CHECK(m->nb_segs == (mode == 0 ? 2u : 1u));
				for (sg_msg_desc *s = m; s != nullptr;
				     s = s->next)
					for (uint32_t k = 0; k < s->len; k++, i++)
						CHILD_CHECK(i < 4 ||
							    s->data[k] ==
								    place_byte(
									    mode,
									    i));
				CHILD_CHECK(i == len);
				CHILD_CHECK(ps.calls == (mode == 0 ? 1u : 0u));
			} else {
				size_t placed = mode == 1 ? kLen - kPeek : 3000;

				CHILD_CHECK(m->len == kPeek && m->nb_segs == 1);
				CHILD_CHECK(m->flags ==
					    (mode == 1 ? SG_MSG_PLACED :
							 SG_MSG_PLACED |
								 SG_MSG_DISCARDED));
				CHILD_CHECK(direct == placed &&
					    discard == kLen - kPeek - placed);
				CHILD_CHECK(ps.dones == ps.calls - (mode == 2));
				for (size_t i = 0; i < ps.dst.size(); i++)
					CHILD_CHECK(ps.dst[i] ==
						    (i < placed ?
							     place_byte(mode,
									i + kPeek) :
							     0xee));
			}
			sg_msg_release(m);
		}
		n.send(ev.assoc, 0, 0, PPID_OK, "ok", 2);
		n.wait_event(SG_EV_SHUTDOWN, nullptr, 10);
		n.down();
	});
	kids.push_back(&srv);
	ASSERT_TRUE(wait_server_socket(20));
	Child cli = spawn([&](Node &n) {
		n.up(false, "client", "");
		sg_assoc_t a = 0;
		CHILD_CHECK(sg_connect(n.ep, ip_of(1), kSctpPort, &a) == 0);
		CHILD_CHECK(n.wait_event(SG_EV_UP, nullptr, 30));
		usleep(200000); /* the server sets its place function */
		for (uint32_t mode = 0; mode < 4; mode++) {
			std::vector<uint8_t> m(mode == 3 ? 10 : kLen);

			for (size_t i = 0; i < m.size(); i++)
				m[i] = place_byte(mode, i);
			memcpy(m.data(), &mode, sizeof(mode));
			n.send(a, 0, 0, PPID_BULK, m.data(),
			       m.size());
		}
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 60));
		sg_disconnect(n.ep, a);
		n.wait_event(SG_EV_SHUTDOWN, nullptr, 10);
		n.down();
	});
	kids.push_back(&cli);
	for (int mode = 0; mode < 4; mode++) {
		std::string l;
		EXPECT_TRUE(expect_line(srv, "MODE " + std::to_string(mode), 90,
					&l));
		printf("%s\n", l.c_str());
	}
	EXPECT_EQ(0, reap(cli, 60));
	EXPECT_EQ(0, reap(srv, 60));
}

/*
 * Receive without usrsctp's copy (rx_ext, usrsctp-patches/0003): every
 * packet stays in the DPDK mbuf it arrived in, usrsctp_recvv copies the
 * messages out of it intact (sizes from a header to several packets and
 * descriptors), and once the endpoints are closed every mbuf is back in
 * its pool.  Without rx_ext usrsctp_conninput copies each packet
 * (rx_copy_input_bytes > 0, rx_ext_pkts 0).
 */
TEST_F(SgTwoNodes, RxKeepsPacketsInTheirMbufsAndGivesThemBack)
{
	constexpr uint32_t kCount = 400;

	g_check_pool = true;
	pair_start("", "", [&](Node &n, sg_assoc_t a) {
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		for (uint32_t i = 0; i < kCount; i++) {
			MsgHdr h;

			CHILD_CHECK(n.recv(b, meta, 60));
			CHILD_CHECK(meta.ppid == PPID_DATA);
			CHILD_CHECK(check_msg(b, h));
			CHILD_CHECK(h.seq == i);
		}
		sg_stats st;
		sg_ep_stats(n.ep, &st);
		sg_stats_print(&st, stderr);
		CHILD_CHECK(st.rx_copy_input_bytes == 0);
		CHILD_CHECK(st.rx_ext_pkts == st.pkts_in && st.pkts_in > 0);
		CHILD_CHECK(st.rx_ext_bytes >= st.bytes_in);
		CHILD_CHECK(st.rx_ext_pool_low == 0);
		CHILD_CHECK(st.rx_copy_recv_bytes == st.bytes_in);
		n.send(a, 0, 0, PPID_OK, "ok", 2);
		n.report("DONE");
	}, [&](Node &n, sg_assoc_t a) {
		std::mt19937 rng(11);
		for (uint32_t i = 0; i < kCount; i++) {
			uint32_t len = i % 4 == 0 ? 24 + rng() % 200 :
				       24 + rng() % 140000;
			auto m = make_msg(0, i, len, false);
			n.send(a, 0, 0, PPID_DATA, m.data(), m.size());
		}
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 120));
		CHILD_CHECK(meta.ppid == PPID_OK);
		sg_stats st;
		sg_ep_stats(n.ep, &st);
		/* the client's SACKs and the reply came in the same way */
		CHILD_CHECK(st.rx_copy_input_bytes == 0);
		CHILD_CHECK(st.rx_ext_pkts == st.pkts_in && st.pkts_in > 0);
	});
	EXPECT_TRUE(expect_line(pair_srv, "DONE", 240));
	pair_end();
}

/*
 * The application closes the port before the endpoint (trust gap 1, session
 * 8): the receiver has left unread messages in usrsctp, whose packets sit
 * in the port's mbufs (rx_ext).  dp_port_close then must not free the pool
 * (usrsctp frees those mbufs when the endpoint closes: they would go back
 * into freed memory) nor the port (sg_ep_close flushes it): the close is
 * deferred, logged, to sg_ep_close, which then closes the port and frees
 * the pool.  Before the fix the pool was gone right after dp_port_close
 * (rte_mempool_lookup found nothing while usrsctp held its mbufs).
 */
TEST_F(SgTwoNodes, PortClosedBeforeItsEndpointWaitsForIt)
{
	constexpr uint32_t kLen = 64u << 10;

	pair_start("rx_descs=16 max_msg=1M", "", [&](Node &n, sg_assoc_t a) {
		(void)a;
		/* nothing is read: usrsctp keeps what the descriptors
		 * cannot take until it stops growing */
		uint32_t held = 0;
		for (double end = now_s() + 60, still = now_s() + 2;
		     now_s() < end && now_s() < still;) {
			n.poll_once();
			if (sg_rx_ext_held_now() != held) {
				held = sg_rx_ext_held_now();
				still = now_s() + 2;
			}
		}
		fprintf(stderr, "usrsctp holds %u received mbufs\n", held);
		CHILD_CHECK(held > 0);
		std::string pool = n.port->pool->name;
		dp_port_close(n.port);	/* the wrong order */
		CHILD_CHECK(sg_rx_ext_held_now() == held);
		/* the pool they belong to is still there */
		CHILD_CHECK(rte_mempool_lookup(pool.c_str()) != nullptr);
		sg_ep_close(n.ep);
		CHILD_CHECK(sg_rx_ext_held_now() == 0);
		/* the deferred close ran: pool freed, EAL still ours */
		CHILD_CHECK(rte_mempool_lookup(pool.c_str()) == nullptr);
		dp_eal_fini();
		n.report("DONE");
		_exit(0);
	}, [&](Node &n, sg_assoc_t a) {
		std::vector<uint8_t> m = make_msg(0, 0, kLen, false);
		iovec iov = {m.data(), m.size()};
		sg_event ev;
		uint32_t sent = 0;

		/* until the receiver's window closes, then its ABORT */
		for (double end = now_s() + 120; now_s() < end;) {
			if (!sg_send_busy(n.ep) &&
			    sg_send(n.ep, a, 0, 0, PPID_DATA, &iov, 1) != -EAGAIN)
				sent++;
			n.poll_once();
			bool lost = false;
			for (auto &e : n.events)
				lost = lost || e.type == SG_EV_LOST;
			if (lost)
				break;
		}
		(void)ev;
		fprintf(stderr, "client: %u messages sent\n", sent);
		CHILD_CHECK(sent > 0);
	});
	EXPECT_TRUE(expect_line(pair_srv, "DONE", 240));
	pair_end();
}

/* rx_ext=0: usrsctp_conninput copies every packet again (the control of
 * the test above; also what UCX_SCTP_DPDK_RX_EXT=n sets). */
TEST_F(SgTwoNodes, RxExtOffCopiesEveryPacket)
{
	constexpr uint32_t kCount = 100;

	g_check_pool = true;
	pair_start("rx_ext=0", "", [&](Node &n, sg_assoc_t a) {
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		for (uint32_t i = 0; i < kCount; i++) {
			MsgHdr h;

			CHILD_CHECK(n.recv(b, meta, 60));
			CHILD_CHECK(check_msg(b, h) && h.seq == i);
		}
		sg_stats st;
		sg_ep_stats(n.ep, &st);
		CHILD_CHECK(st.rx_ext_pkts == 0 && st.rx_ext_bytes == 0);
		CHILD_CHECK(st.rx_copy_input_bytes >= st.bytes_in);
		CHILD_CHECK(st.rx_copies >= st.pkts_in + st.msgs_in);
		n.send(a, 0, 0, PPID_OK, "ok", 2);
		n.report("DONE");
	}, [&](Node &n, sg_assoc_t a) {
		for (uint32_t i = 0; i < kCount; i++) {
			auto m = make_msg(0, i, 100 + i * 300, false);
			n.send(a, 0, 0, PPID_DATA, m.data(), m.size());
		}
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 120));
	});
	EXPECT_TRUE(expect_line(pair_srv, "DONE", 180));
	pair_end();
}

/*
 * usrsctp may keep packets only while it holds fewer than a quarter of
 * the pool (SG_RX_EXT_POOL_DIV): a small pool (mbufs=1023) and a consumer
 * that reads nothing while 60 messages of 64 KiB arrive (16 descriptors,
 * the rest waits in usrsctp's 4 MiB receive buffer, ~1900 packets).
 * Without the bound usrsctp would hold more than the pool can spare (the
 * NIC could not refill its ring); with it the rest is copied, and every
 * message still arrives intact.
 */
TEST_F(SgTwoNodes, RxFallsBackToACopyWhenUsrsctpHoldsAQuarterOfThePool)
{
	constexpr uint32_t kCount = 60, kLen = 64u << 10, kPool = 1023;

	g_dp_extra = "mbufs=" + std::to_string(kPool);
	g_check_pool = true;
	pair_start("rx_descs=16 max_msg=1M", "", [&](Node &n, sg_assoc_t a) {
		sg_stats st;
		uint32_t most = 0;
		CHILD_CHECK(n.wait([&] {
			sg_ep_stats(n.ep, &st);
			most = std::max(most, sg_rx_ext_held_now());
			return st.rx_ext_pool_low > 0;
		}, 90));
		/* let more arrive while nothing is read */
		double t_end = now_s() + 0.5;
		n.wait([&] {
			most = std::max(most, sg_rx_ext_held_now());
			return now_s() > t_end;
		}, 5);
		fprintf(stderr, "usrsctp held at most %u mbufs of %u\n", most,
			kPool);
		CHILD_CHECK(most <= kPool / SG_RX_EXT_POOL_DIV);
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		for (uint32_t i = 0; i < kCount; i++) {
			MsgHdr h;

			CHILD_CHECK(n.recv(b, meta, 60));
			CHILD_CHECK(check_msg(b, h) && h.seq == i);
		}
		sg_ep_stats(n.ep, &st);
		sg_stats_print(&st, stderr);
		CHILD_CHECK(st.rx_ext_pkts > 0 && st.rx_ext_pool_low > 0);
		CHILD_CHECK(st.rx_copy_input_bytes > 0);
		CHILD_CHECK(st.rx_copy_recv_bytes == st.bytes_in);
		n.send(a, 0, 0, PPID_OK, "ok", 2);
		n.report("DONE");
	}, [&](Node &n, sg_assoc_t a) {
		for (uint32_t i = 0; i < kCount; i++) {
			auto m = make_msg(0, i, kLen, false);
			n.send(a, 0, 0, PPID_DATA, m.data(), m.size());
		}
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 180));
	});
	EXPECT_TRUE(expect_line(pair_srv, "DONE", 300));
	pair_end();
}

/* Send @len bytes of @pkt as an SCTP packet (the dataplane fills the
 * CRC32c, so usrsctp sees it). */
void send_raw_sctp(Node &n, const uint8_t *pkt, uint16_t len)
{
	rte_mbuf *m = dp_pkt_alloc(n.port);
	CHILD_CHECK(m != nullptr);
	uint8_t *p = (uint8_t *)rte_pktmbuf_append(m, len);
	CHILD_CHECK(p != nullptr);
	memcpy(p, pkt, len);
	CHILD_CHECK(dp_port_send(n.port, ip_of(1), DP_IPPROTO_SCTP, m,
				 dp_tsc()) == 0);
	dp_port_flush(n.port, dp_tsc());
}

/*
 * Malformed packets taken without a copy are still refused and given
 * back: a DATA chunk with a wrong verification tag, one whose chunk
 * length is impossible, one for a port nobody listens on (usrsctp drops
 * them; shorter than a chunk header the dataplane drops before, as
 * sctp_len).  The association carries on and, after close, every mbuf is
 * in the pool.
 */
TEST_F(SgTwoNodes, RxMalformedPacketsAreRefusedAndGivenBack)
{
	g_check_pool = true;
	pair_start("", "", [&](Node &n, sg_assoc_t a) {
		sg_stats s0, s1;
		dp_stats d0, d1;
		struct sctpstat u0, u1;
		sg_ep_stats(n.ep, &s0);
		dp_port_stats(n.port, &d0);
		usrsctp_get_stat(&u0);
		n.report("READY");
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		MsgHdr h;
		CHILD_CHECK(n.recv(b, meta, 60));
		CHILD_CHECK(check_msg(b, h) && h.seq == 77);
		/* every packet usrsctp kept is back once dropped or read */
		CHILD_CHECK(n.wait([] { return sg_rx_ext_held_now() == 0; },
				   10));
		sg_ep_stats(n.ep, &s1);
		dp_port_stats(n.port, &d1);
		usrsctp_get_stat(&u1);
		fprintf(stderr, "pkts_in +%" PRIu64 ", rx_ext_pkts +%" PRIu64
			", badvtag +%u, noport +%u, sctp_len drops +%" PRIu64
			"\n", s1.pkts_in - s0.pkts_in,
			s1.rx_ext_pkts - s0.rx_ext_pkts,
			u1.sctps_badvtag - u0.sctps_badvtag,
			u1.sctps_noport - u0.sctps_noport,
			d1.drops[DP_DROP_SCTP_LEN] - d0.drops[DP_DROP_SCTP_LEN]);
		CHILD_CHECK(s1.pkts_in - s0.pkts_in >= 4);
		CHILD_CHECK(s1.rx_ext_pkts - s0.rx_ext_pkts ==
			    s1.pkts_in - s0.pkts_in);
		CHILD_CHECK(s1.rx_copy_input_bytes == s0.rx_copy_input_bytes);
		CHILD_CHECK(u1.sctps_badvtag - u0.sctps_badvtag >= 2);
		CHILD_CHECK(u1.sctps_noport - u0.sctps_noport >= 1);
		CHILD_CHECK(d1.drops[DP_DROP_SCTP_LEN] -
				    d0.drops[DP_DROP_SCTP_LEN] == 2);
		CHILD_CHECK(sg_assoc_up(n.ep, a));
		n.send(a, 0, 0, PPID_OK, "ok", 2);
	}, [&](Node &n, sg_assoc_t a) {
		uint8_t pkt[12 + 16 + 8] = {
			0x13, 0x88, 0x13, 0x88,	/* ports 5000 -> 5000 */
			0xde, 0xad, 0xbe, 0xef,	/* not the association's tag */
			0, 0, 0, 0,		/* CRC32c: the dataplane's */
			0, 3, 0, 24,		/* DATA, B+E, 24 bytes */
			0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1,
			1, 2, 3, 4, 5, 6, 7, 8,
		};
		usleep(300000); /* the server takes its counters */
		send_raw_sctp(n, pkt, 12);	/* a common header alone */
		send_raw_sctp(n, pkt, 14);	/* half a chunk header */
		send_raw_sctp(n, pkt, sizeof(pkt)); /* wrong tag */
		pkt[2] = 0x17;			/* to port 6000 */
		pkt[3] = 0x70;
		send_raw_sctp(n, pkt, sizeof(pkt));
		pkt[2] = 0x13;
		pkt[3] = 0x88;
		pkt[13] = 0;			/* no flags, length 3 */
		pkt[15] = 3;
		send_raw_sctp(n, pkt, sizeof(pkt));
		pkt[14] = 0x40;			/* length past the packet */
		send_raw_sctp(n, pkt, sizeof(pkt));
		auto m = make_msg(0, 77, 5000, false);
		n.send(a, 0, 0, PPID_DATA, m.data(), m.size());
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 60));
		CHILD_CHECK(meta.ppid == PPID_OK);
	});
	EXPECT_TRUE(expect_line(pair_srv, "READY", 60));
	pair_end();
}

} /* namespace */


/* ---- zero-copy send (sg_send_zc, usrsctp-patches/0006) ---- */

/* One buffer of the client's ring.  Its done function checks that usrsctp
 * left the bytes alone (no chunk header or padding written into them) and
 * then overwrites them at once: a completion that came while usrsctp
 * could still send (or resend) them corrupts what the server gets. */
struct ZcSlot {
	std::vector<uint8_t> buf;
	bool busy = false;
	int status = 0;
	bool intact = true;
	uint32_t crc_sent = 0;
};

void zc_slot_done(void *arg, int status)
{
	ZcSlot *s = static_cast<ZcSlot *>(arg);

	s->status = status;
	s->intact = dp_crc32c(DP_CRC_ISAL, s->buf.data(), s->buf.size()) ==
		    s->crc_sent;
	memset(s->buf.data(), 0xee, s->buf.size());
	s->busy = false;
}

/* Send message @seq of @len bytes from @s: the header (MsgHdr, on the
 * stack here) copied, the rest by reference; polls through -EAGAIN. */
void zc_send(Node &n, sg_assoc_t a, ZcSlot &s, uint32_t seq, uint32_t len)
{
	auto m = make_msg(1, seq, len, false);
	uint8_t hdr[sizeof(MsgHdr)];
	double end = now_s() + 60;
	int rc;

	memcpy(hdr, m.data(), sizeof(hdr));
	s.buf.assign(m.begin() + sizeof(hdr), m.end());
	s.crc_sent = dp_crc32c(DP_CRC_ISAL, s.buf.data(), s.buf.size());
	s.busy = true;
	iovec iov[2] = { { hdr, sizeof(hdr) }, { s.buf.data(), s.buf.size() } };
	while ((rc = sg_send_zc(n.ep, a, 1, 0, PPID_DATA, iov, 2, sizeof(hdr),
				zc_slot_done, &s)) == -EAGAIN) {
		CHILD_CHECK(now_s() < end);
		n.poll_once();
	}
	if (rc != 0)
		fprintf(stderr, "sg_send_zc: %d\n", rc);
	CHILD_CHECK(rc == 0);
}

/*
 * Client -> server: @count messages of @len bytes sent with sg_send_zc
 * from a ring of 8 buffers (a buffer is reused as soon as its send
 * completed; its done function overwrote it), under @dp_cli's loss; the
 * server checks every byte (make_msg's CRC, sequence).  Every completion
 * is a success with the sender's bytes untouched; the counters add up;
 * after the shutdown usrsctp references no zero-copy byte and every chain
 * and mbuf is back.
 */
void zc_run(SgTwoNodes *t, const char *dp_cli, uint32_t count, uint32_t len)
{
	t->pair_srv = spawn([&](Node &n) {
		n.up(true, "server", "");
		sg_event ev;
		CHILD_CHECK(n.wait_event(SG_EV_UP, &ev, 30));
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		for (uint32_t i = 0; i < count; i++) {
			MsgHdr h;

			CHILD_CHECK(n.recv(b, meta, 120));
			CHILD_CHECK(meta.ppid == PPID_DATA);
			CHILD_CHECK(check_msg(b, h));
			CHILD_CHECK(h.seq == i);
		}
		n.send(ev.assoc, 0, 0, PPID_OK, "ok", 2);
		n.wait_event(SG_EV_SHUTDOWN, nullptr, 30);
		n.down();
	});
	t->adopt(&t->pair_srv);
	ASSERT_TRUE(wait_server_socket(20));
	t->pair_cli = spawn([&](Node &n) {
		n.up(false, "client", "", dp_cli);
		sg_assoc_t a = 0;
		CHILD_CHECK(sg_connect(n.ep, ip_of(1), kSctpPort, &a) == 0);
		CHILD_CHECK(n.wait_event(SG_EV_UP, nullptr, 30));
		unsigned int base = dp_port_mbufs_in_use(n.port);
		std::vector<ZcSlot> slots(8);
		for (uint32_t i = 0; i < count; i++) {
			ZcSlot &s = slots[i % slots.size()];

			CHILD_CHECK(n.wait([&] { return !s.busy; }, 60));
			CHILD_CHECK(s.status == 0 && s.intact);
			zc_send(n, a, s, i, len);
		}
		CHILD_CHECK(n.wait(
			[&] {
				for (auto &s : slots)
					if (s.busy)
						return false;
				return true;
			},
			60));
		for (auto &s : slots)
			CHILD_CHECK(s.status == 0 && s.intact);
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 180));
		CHILD_CHECK(meta.ppid == PPID_OK);
		sg_stats st;
		sg_zc_stats zs;
		sg_ep_stats(n.ep, &st);
		sg_ep_zc_stats(n.ep, &zs);
		fprintf(stderr, "zc: msgs %" PRIu64 " bytes %" PRIu64
			" copy_bytes %" PRIu64 " done %" PRIu64
			" done_err %" PRIu64 " outstanding %" PRIu64
			"; tx_chain_ref_bytes %" PRIu64 " retrans_chunks %"
			PRIu64 "\n", zs.msgs, zs.bytes, zs.copy_bytes,
			zs.done, zs.done_err, zs.outstanding,
			st.tx_chain_ref_bytes,
			stack_counter("retrans_chunks"));
		CHILD_CHECK(zs.msgs == count && zs.done == count);
		CHILD_CHECK(zs.done_err == 0 && zs.outstanding == 0);
		/* records reused after their done: no more than the
		 * messages in flight (one per slot), not one per message */
		fprintf(stderr, "zc: %" PRIu64 " records for %" PRIu64
			" messages\n", zs.records, zs.msgs);
		CHILD_CHECK(zs.records <= slots.size());
		CHILD_CHECK(zs.copy_bytes == count * sizeof(MsgHdr));
		CHILD_CHECK(zs.bytes == (uint64_t)count * len);
		CHILD_CHECK(st.tx_chain_ref_bytes >= st.bytes_out / 100 * 90);
		if (dp_cli[0] != '\0')
			CHILD_CHECK(stack_counter("retrans_chunks") > 0);
		sg_disconnect(n.ep, a);
		CHILD_CHECK(n.wait_event(SG_EV_SHUTDOWN, nullptr, 30));
		double t_end = now_s() + 0.3;
		n.wait([&] { return now_s() > t_end; }, 5);
		dp_port_flush(n.port, dp_tsc());
		unsigned int after = dp_port_mbufs_in_use(n.port);
		fprintf(stderr, "mbufs in use: %u before, %u after; chains "
			"held %" PRIu64 ", zero-copy sends held %" PRIu64 "\n",
			base, after, sg_tx_chains_held(), sg_zc_held());
		CHILD_CHECK(sg_zc_held() == 0);
		CHILD_CHECK(sg_tx_chains_held() == 0);
		CHILD_CHECK(after == base);
		n.report("DONE");
		n.down();
	});
	t->adopt(&t->pair_cli);
	EXPECT_TRUE(expect_line(t->pair_cli, "DONE", 300));
	EXPECT_EQ(0, reap(t->pair_cli, 30));
	EXPECT_EQ(0, reap(t->pair_srv, 30));
}

/* Issue 9 (MPI bandwidth): 64 KiB messages from the caller's memory. */
TEST_F(SgTwoNodes, ZeroCopySendCompletesOnlyWhenReleased)
{
	zc_run(this, "", 800, 64u << 10);
}

/* 2% of the client's DATA packets lost: retransmissions read the
 * caller's buffers again, so completions wait for the SACKs that cover
 * them; 1 MiB messages (big sends continued from sg_poll). */
TEST_F(SgTwoNodes, ZeroCopySendUnderLossDeliversIntactData)
{
	zc_run(this, "drop=tx:every:50", 60, 1u << 20);
}

/*
 * The bytes really are referenced, not copied: 1 MiB to an idle
 * association, whose first window leaves inside sg_send_zc; the client
 * then changes the buffer's last byte (the contract forbids it; a probe
 * here) before the first poll, and the server receives the changed byte.
 * With usrsctp's copy (sg_send) it would receive the original.
 */
TEST_F(SgTwoNodes, ZeroCopySendReferencesTheCallersBytes)
{
	pair_start(
		"", "",
		[&](Node &n, sg_assoc_t) {
			std::vector<uint8_t> b;
			sg_msg_desc meta;
			CHILD_CHECK(n.recv(b, meta, 60));
			CHILD_CHECK(b.size() == 1u << 20);
			fprintf(stderr, "last byte %#x\n", b.back());
			CHILD_CHECK(b.back() == 0x5a);
			CHILD_CHECK(b.front() == 0x11);
		},
		[&](Node &n, sg_assoc_t a) {
			std::vector<uint8_t> buf(1u << 20, 0x11);
			bool done = false;
			int status = 1;
			iovec iov = { buf.data(), buf.size() };
			auto fn = [](void *arg, int st) {
				*static_cast<int *>(arg) = st;
			};
			CHILD_CHECK(sg_send_zc(n.ep, a, 1, 0, PPID_DATA, &iov,
					       1, 0, fn, &status) == 0);
			buf.back() = 0x5a;
			CHILD_CHECK(n.wait([&] { return status != 1; }, 60));
			done = status == 0;
			CHILD_CHECK(done);
		});
	pair_end();
}

/*
 * The peer dies with zero-copy sends outstanding: once the association
 * is lost every send usrsctp let go of completes with -ECONNRESET (none
 * completes twice).  Chained packets that the memif port keeps for a
 * peer that may come back (dp_rings_off: frames stay) still reference
 * their bytes: those sends stay outstanding, never completed early, and
 * are released when the port closes (no zero-copy byte held after it).
 */
TEST_F(SgTwoNodes, ZeroCopySendsCompleteWithAnErrorWhenThePeerIsLost)
{
	Child srv = spawn([&](Node &n) {
		n.up(true, "server", kFastFail);
		sg_event ev;
		CHILD_CHECK(n.wait_event(SG_EV_UP, &ev, 30));
		n.report("UP");
		n.wait([] { return false; }, 60); /* until killed */
		_exit(4);
	});
	kids.push_back(&srv);
	ASSERT_TRUE(wait_server_socket(20));
	Child cli = spawn([&](Node &n) {
		n.up(false, "client", kFastFail);
		sg_assoc_t a = 0;
		CHILD_CHECK(sg_connect(n.ep, ip_of(1), kSctpPort, &a) == 0);
		CHILD_CHECK(n.wait_event(SG_EV_UP, nullptr, 30));
		std::vector<ZcSlot> slots(4);
		uint32_t seq = 0;
		bool reported = false, lost = false;
		/* keep every buffer busy until the association is gone */
		CHILD_CHECK(n.wait(
			[&] {
				for (auto &e : n.events)
					if (e.type == SG_EV_LOST)
						lost = true;
				if (lost)
					return true;
				for (auto &s : slots) {
					if (s.busy)
						continue;
					if (!sg_assoc_up(n.ep, a))
						return false;
					CHILD_CHECK(s.status == 0);
					zc_send(n, a, s, seq++, 256u << 10);
				}
				if (!reported) {
					n.report("SENDING");
					reported = true;
				}
				return false;
			},
			60));
		/* until nothing changes for 2 s */
		uint64_t last = UINT64_MAX;
		double quiet_end = now_s() + 2;
		n.wait(
			[&] {
				sg_zc_stats z;
				sg_ep_zc_stats(n.ep, &z);
				if (z.outstanding != last) {
					last = z.outstanding;
					quiet_end = now_s() + 2;
				}
				return now_s() > quiet_end;
			},
			30);
		sg_zc_stats zs;
		sg_ep_zc_stats(n.ep, &zs);
		dp_port_flush(n.port, dp_tsc());
		uint64_t chains = sg_tx_chains_held();
		fprintf(stderr, "zc: msgs %" PRIu64 " done %" PRIu64
			" done_err %" PRIu64 " outstanding %" PRIu64
			", held %" PRIu64 ", chains held %" PRIu64 "\n",
			zs.msgs, zs.done, zs.done_err, zs.outstanding,
			sg_zc_held(), chains);
		CHILD_CHECK(zs.done + zs.outstanding == zs.msgs);
		CHILD_CHECK(zs.done_err >= 1);
		/* what is still outstanding is held by a chained packet */
		CHILD_CHECK(zs.outstanding == 0 || chains != 0);
		int errs = 0, busy = 0;
		for (auto &s : slots) {
			errs += !s.busy && s.status == -ECONNRESET;
			busy += s.busy;
		}
		CHILD_CHECK(errs >= 1);
		CHILD_CHECK((uint64_t)busy == zs.outstanding);
		n.down();
		fprintf(stderr, "after close: zero-copy sends held %" PRIu64
			", chains held %" PRIu64 "\n", sg_zc_held(),
			sg_tx_chains_held());
		CHILD_CHECK(sg_zc_held() == 0);
		CHILD_CHECK(sg_tx_chains_held() == 0);
		/* their done never ran: the buffers stayed valid */
		for (auto &s : slots)
			CHILD_CHECK(!s.busy || s.status == 0);
		n.report("DONE");
	});
	kids.push_back(&cli);
	ASSERT_TRUE(expect_line(srv, "UP", 40));
	ASSERT_TRUE(expect_line(cli, "SENDING", 40));
	usleep(50000);
	kill(srv.pid, SIGKILL);
	reap(srv, 5);
	EXPECT_TRUE(expect_line(cli, "DONE", 60));
	EXPECT_EQ(0, reap(cli, 30));
}

namespace {

/*
 * NR-SACK (nr_sack).  Client -> server, 2% of every packet lost each way
 * (drop=tx:every:50): 400 messages of @len bytes on @streams streams,
 * round-robin; the server checks each message and the order per stream.
 * Then the client's counters: NR-SACK chunks from the server (negotiated
 * by both ends), and those with NR gap blocks (non-renegable data
 * reported above a hole, freed from the client's send buffer before the
 * cumulative ack).  1000 bytes is one packet at the memif MTU of 1500.
 */
struct NrSackRun {
	const char *sg_srv = "nr_sack=1";
	const char *sg_cli = "nr_sack=1";
	uint16_t streams = 10;
	uint32_t len = 1000;
	std::function<void(const sg_stats &)> check;
};

void nr_sack_run(SgTwoNodes *t, const NrSackRun &r)
{
	constexpr uint32_t kCount = 400;

	g_dp_extra = "drop=tx:every:50";
	t->pair_start(r.sg_srv, r.sg_cli, [&](Node &n, sg_assoc_t a) {
		std::vector<uint32_t> next(r.streams);
		std::vector<uint8_t> b;

		for (uint16_t s = 0; s < r.streams; s++)
			next[s] = s; /* the client's i of each stream */
		sg_msg_desc meta;

		for (uint32_t i = 0; i < kCount; i++) {
			MsgHdr h;

			CHILD_CHECK(n.recv(b, meta, 120));
			CHILD_CHECK(meta.ppid == PPID_DATA);
			CHILD_CHECK(check_msg(b, h));
			CHILD_CHECK(h.stream < r.streams &&
				    h.stream == meta.stream);
			CHILD_CHECK(h.seq == next[h.stream]);
			next[h.stream] += r.streams;
		}
		n.send(a, 0, 0, PPID_OK, "ok", 2);
		n.report("DONE");
	}, [&](Node &n, sg_assoc_t a) {
		for (uint32_t i = 0; i < kCount; i++) {
			uint16_t s = (uint16_t)(i % r.streams);
			auto m = make_msg(s, i, r.len, false);
			n.send(a, s, 0, PPID_DATA, m.data(), m.size());
		}
		std::vector<uint8_t> b;
		sg_msg_desc meta;
		CHILD_CHECK(n.recv(b, meta, 180));
		CHILD_CHECK(meta.ppid == PPID_OK);
		sg_stats st;
		sg_ep_stats(n.ep, &st);
		fprintf(stderr, "client: rx_nr_sacks %" PRIu64
			" rx_nr_sacks_nr_gaps %" PRIu64 " sacks_in %" PRIu64
			" retrans_chunks %" PRIu64 "\n", st.rx_nr_sacks,
			st.rx_nr_sacks_nr_gaps, stack_counter("sacks_in"),
			stack_counter("retrans_chunks"));
		/* the loss happened: holes to report */
		CHILD_CHECK(stack_counter("retrans_chunks") > 0);
		r.check(st);
	});
	EXPECT_TRUE(expect_line(t->pair_srv, "DONE", 240));
	t->pair_end();
}

/* Both ends offer it: every SACK is an NR-SACK, and messages complete on
 * other streams than the one with the hole are reported non-renegable. */
TEST_F(SgTwoNodes, NrSackFreesMessagesDeliveredOnOtherStreams)
{
	NrSackRun r;
	r.check = [](const sg_stats &st) {
		CHILD_CHECK(st.rx_nr_sacks > 0);
		CHILD_CHECK(st.rx_nr_sacks_nr_gaps > 0);
	};
	nr_sack_run(this, r);
}

/* One end only (and the default, off): plain SACKs. */
TEST_F(SgTwoNodes, NrSackNeedsBothEnds)
{
	NrSackRun r;
	r.sg_cli = "";
	r.check = [](const sg_stats &st) {
		CHILD_CHECK(st.rx_nr_sacks == 0);
		CHILD_CHECK(st.rx_nr_sacks_nr_gaps == 0);
	};
	nr_sack_run(this, r);
}

/* One ordered stream of one-packet messages: nothing above a hole is
 * delivered, so nr_sack=1 reports no NR gap; nr_sack=2 reports the data
 * held for reordering (below). */
TEST_F(SgTwoNodes, NrSackOneStreamReportsOnlyDeliveredData)
{
	NrSackRun r;
	r.streams = 1;
	r.check = [](const sg_stats &st) {
		CHILD_CHECK(st.rx_nr_sacks > 0);
		CHILD_CHECK(st.rx_nr_sacks_nr_gaps == 0);
	};
	nr_sack_run(this, r);
}

/* Messages of several packets, one stream: usrsctp marks a fragment
 * non-renegable once it joins its message's reassembly (the first
 * fragment and those after it without a gap), delivered or not, so
 * nr_sack=1 frees most of such data above a hole with one stream too. */
TEST_F(SgTwoNodes, NrSackOneStreamFreesFragmentsInReassembly)
{
	NrSackRun r;
	r.streams = 1;
	r.len = 8192;
	r.check = [](const sg_stats &st) {
		CHILD_CHECK(st.rx_nr_sacks > 0);
		CHILD_CHECK(st.rx_nr_sacks_nr_gaps > 0);
	};
	nr_sack_run(this, r);
}

TEST_F(SgTwoNodes, NrSackTwoReportsDataHeldForReordering)
{
	NrSackRun r;
	r.streams = 1;
	r.sg_srv = "nr_sack=2";
	r.sg_cli = "nr_sack=2";
	r.check = [](const sg_stats &st) {
		CHILD_CHECK(st.rx_nr_sacks > 0);
		CHILD_CHECK(st.rx_nr_sacks_nr_gaps > 0);
	};
	nr_sack_run(this, r);
}

} /* namespace */
