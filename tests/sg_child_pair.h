/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sg_child_pair.h - two forked children of a test, each with its own EAL,
 * connected through a socket the first one creates (a memif or vhost-user
 * server), and everything they leave behind removed.
 *
 * A process has one EAL, so a test of two dataplane ports that talk
 * through a vdev socket runs each end in a child:
 *
 *   SgChildPair pair;
 *   ASSERT_NO_FATAL_FAILURE(pair.setup("dma"));      job dma<pid>, root,
 *                                                    /run/sdp/<job>/
 *   pair.run(server_body, "vhost.sock", client_body, deadline_s);
 *   EXPECT_EQ(0, pair.rc_client); EXPECT_EQ(0, pair.rc_server);
 *
 * run() starts the server, waits until its socket exists (a client that
 * starts before gives up), starts the client, and reaps both, each
 * bounded: a child still running at its deadline is killed by its PID
 * (rc -1).  The destructor removes the socket directory and the children's
 * DPDK run directories (/var/run/dpdk/sdp-<job>-<role>, the prefix= each
 * child gives its EAL), whatever happened.
 *
 * In the children: SG_CHILD_CHECK(cond) ends the child with status 2 and
 * the failed condition on stderr (gtest assertions do not reach the
 * parent).
 */
#ifndef SG_CHILD_PAIR_H
#define SG_CHILD_PAIR_H

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SG_CHILD_CHECK(cond)                                                  \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "%s (pid %d): %s:%d: %s\n", __func__, \
				(int)getpid(), __FILE__, __LINE__, #cond);    \
			_exit(2);                                             \
		}                                                             \
	} while (0)

namespace sgpair {

inline double now_s()
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Fork a child running @body; it never returns into the test. */
inline pid_t spawn(const std::function<void()> &body)
{
	pid_t pid = fork();

	if (pid == 0) {
		body();
		_exit(3);
	}
	return pid;
}

/* @return the child's exit status (128 + signal when killed by one), or
 * -1 when it was still running at @until and was killed. */
inline int reap(pid_t pid, double until)
{
	int st = 0;

	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r < 0)
			return -1; /* not a child of ours (any more) */
		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st)
					     : 128 + WTERMSIG(st);
		if (now_s() > until) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		usleep(20000);
	}
}

struct SgChildPair {
	std::string job;	/* <prefix><pid> */
	std::string sockdir;	/* /run/sdp/<job> */
	/* DPDK run directories the children create, removed at the end:
	 * /var/run/dpdk/sdp-<job>-<role> */
	std::vector<std::string> roles;
	int rc_server = -1, rc_client = -1;

	/* Root (vdev sockets under /run/sdp), and the job's socket
	 * directory.  @roles: the children's EAL prefixes are
	 * sdp-<job>-<role>. */
	void setup(const std::string &prefix,
		   const std::vector<std::string> &child_roles)
	{
		if (geteuid() != 0)
			FAIL() << "needs root (vdev sockets under /run/sdp, "
				  "DPDK run directories): run the test as "
				  "root";
		job = prefix + std::to_string(getpid());
		sockdir = "/run/sdp/" + job;
		roles = child_roles;
		mkdir("/run/sdp", 0700);
		ASSERT_EQ(0, mkdir(sockdir.c_str(), 0700)) << sockdir;
	}

	/*
	 * Run @server until it created @sock in sockdir (or @sock itself,
	 * an absolute path), then @client;
	 * reap the client by @deadline_s from now, call @client_done (the
	 * server may wait for it), and give the server @server_grace_s more.
	 */
	void run(const std::function<void()> &server, const std::string &sock,
		 const std::function<void()> &client, double deadline_s,
		 const std::function<void()> &client_done = nullptr,
		 double server_grace_s = 20)
	{
		const std::string path =
			sock[0] == '/' ? sock : sockdir + "/" + sock;
		double until = now_s() + deadline_s;
		struct stat sb;
		pid_t srv = spawn(server);
		int st = 0;

		while (stat(path.c_str(), &sb) != 0 && now_s() < until) {
			if (waitpid(srv, &st, WNOHANG) == srv) {
				ADD_FAILURE() << "the server child ended "
					      << "(status " << st << ") before "
					      << "it created " << path;
				rc_server = WIFEXITED(st) ? WEXITSTATUS(st)
							  : 128 + WTERMSIG(st);
				srv = -1;
				break;
			}
			usleep(10000);
		}
		if (srv > 0 && stat(path.c_str(), &sb) == 0)
			rc_client = reap(spawn(client), until);
		else if (srv > 0)
			ADD_FAILURE() << "the server child did not create "
				      << path << " in " << deadline_s << " s";
		if (client_done)
			client_done();
		if (srv > 0)
			rc_server = reap(srv, now_s() + server_grace_s);
	}

	~SgChildPair()
	{
		std::string cmd;

		if (sockdir.empty())
			return;
		cmd = "rm -rf " + sockdir;
		for (const std::string &r : roles)
			cmd += " /var/run/dpdk/sdp-" + job + "-" + r;
		(void)!system(cmd.c_str());
	}
};

} /* namespace sgpair */

#endif /* SG_CHILD_PAIR_H */
