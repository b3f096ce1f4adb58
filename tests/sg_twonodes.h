/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sg_twonodes.h - the two-endpoint fixture of the sctp layer's tests
 * (test_sg*.cc): usrsctp state is process-wide, so each endpoint runs in
 * its own forked child (fork happens before any EAL init; each child brings
 * up its own EAL with a unique --file-prefix) and the two talk over a memif
 * pair.  The gtest process only orchestrates: it waits for the children
 * with a deadline, reads their progress lines from a pipe, kills them by
 * PID on failure and removes the memif socket directory and the DPDK
 * runtime directories in every path.
 */
#ifndef SDP_TESTS_SG_TWONODES_H
#define SDP_TESTS_SG_TWONODES_H

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

namespace sgtest {

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

inline std::string g_job;	/* unique per test */
inline std::string g_sockdir;	/* /run/sdp/<job> */
/* Set by a test before it forks its children: dataplane tokens both
 * add, and whether each child's Node::down checks that every mbuf of its
 * pool came back once its endpoint is closed (rx_ext leaks). */
inline std::string g_dp_extra;
inline bool g_check_pool;

inline uint32_t ip_of(int host)
{
	uint32_t ip = 0;
	char buf[32];

	snprintf(buf, sizeof(buf), "10.77.1.%d", host);
	dp_parse_ip(buf, &ip);
	return ip;
}

inline double now_s()
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

	/* Take one message, if one is there, into @out (a test-side copy),
	 * without polling: for wait() conditions that watch more. */
	bool try_recv(std::vector<uint8_t> &out, sg_msg_desc &meta)
	{
		sg_msg_desc *m = nullptr;

		if (sg_recv(ep, &m, 1) != 1)
			return false;
		meta = *m;
		out.clear();
		for (sg_msg_desc *s = m; s != nullptr; s = s->next)
			out.insert(out.end(), s->data, s->data + s->len);
		CHILD_CHECK(out.size() == m->msg_len);
		sg_msg_release(m);
		return true;
	}

	/* Receive one message into @out, polling up to @sec. */
	bool recv(std::vector<uint8_t> &out, sg_msg_desc &meta, double sec)
	{
		return wait([&] { return try_recv(out, meta); }, sec);
	}
};

inline std::vector<uint8_t> make_msg(uint16_t stream, uint32_t seq, uint32_t len,
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

inline bool check_msg(const std::vector<uint8_t> &b, MsgHdr &h)
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

inline Child spawn(const std::function<void(Node &)> &body)
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
inline bool expect_line(Child &c, const std::string &what, double sec,
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
inline bool wait_server_socket(double sec)
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
inline int reap(Child &c, double sec)
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
inline bool tx_direct(const sg_stats &st)
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

inline void SgTwoNodes::pair_start(const char *sg_srv, const char *sg_cli,
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

inline void SgTwoNodes::pair_end()
{
	EXPECT_EQ(0, reap(pair_cli, 30));
	EXPECT_EQ(0, reap(pair_srv, 30));
}

inline const char *kFastFail = "rto_initial_ms=200 rto_min_ms=50 rto_max_ms=200 "
			"hb_interval_ms=100 path_max_rxt=3";

/* A usrsctp counter from sg_stack_stats_json ("name": N). */
inline uint64_t stack_counter(const char *name)
{
	char buf[2048], key[64];

	sg_stack_stats_json(buf, sizeof(buf));
	snprintf(key, sizeof(key), "\"%s\": ", name);
	const char *p = strstr(buf, key);
	return p != nullptr ? strtoull(p + strlen(key), nullptr, 10) : 0;
}

} /* namespace sgtest */

#endif /* SDP_TESTS_SG_TWONODES_H */
