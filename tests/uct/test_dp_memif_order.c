/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_dp_memif_order.c - a memif pair comes up when the client connects
 * between the server's EAL probe (socket created) and its port start
 * (the server answers "ID not found" and drops the client then).  This is
 * what two UCX processes opening their ifaces at the same moment do; the
 * dataplane must reconnect the client (dataplane/dp_port.c wait_link).
 *
 * Server child: dp_eal_init, sleep 1.5 s, dp_port_open.
 * Client child: dp_eal_init, dp_port_open (connects at once, is refused).
 * Both must see the link up within link_wait_ms.  Exit 0 pass, 1 fail
 * (also when not root: a test that cannot run fails with the reason).
 *
 * The client stays until the server's open returned (a pipe): a client
 * that closed as soon as its own link was up left the server's link up
 * for a few milliseconds only, and the server's wait_link, which samples
 * the link every 10 ms (much less often under load), could miss it and
 * time out (1 in ~7 runs under load: server 'link still down after
 * 6000 ms', its memif log 'Connected' then the client's close).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dp.h"

static char dir[96], job[48];
static int up_pipe[2]; /* the server writes a byte once its port is up */

static int child(int server)
{
	char text[512];
	/* static: ~48 KB (static ARP table); one call per process. */
	static struct dp_config cfg;
	struct dp_port *port;
	struct timespec ts = {1, 500 * 1000 * 1000};
	int rc;

	snprintf(text, sizeof(text),
		 "dev=net_memif0,role=%s,id=0,socket=%s/memif0.sock,"
		 "socket-abstract=no ip=10.77.7.%d/24 prefix=sdp-%s-r%d "
		 "link_wait_ms=6000",
		 server ? "server" : "client", dir, server ? 1 : 2, job,
		 server ? 0 : 1);
	if (dp_config_parse(text, &cfg) != 0 || dp_eal_init(&cfg) != 0)
		return 2;
	if (server)
		nanosleep(&ts, NULL); /* socket exists, port not started */
	rc = dp_port_open(&cfg, &port);
	if (rc != 0) {
		fprintf(stderr, "%s: dp_port_open: %s\n",
			server ? "server" : "client", strerror(-rc));
		dp_eal_fini();
		return 1;
	}
	if (server) {
		if (write(up_pipe[1], "u", 1) != 1)
			fprintf(stderr, "server: cannot tell the client\n");
	} else {
		struct pollfd pfd = { .fd = up_pipe[0], .events = POLLIN };

		/* the server's link wait is 6 s; then it fails on its own */
		if (poll(&pfd, 1, 10000) != 1)
			fprintf(stderr, "client: the server never came up\n");
	}
	/* Client leaves first (see ucx-tl/README.md on memif teardown); the
	 * server polls meanwhile, which answers the client's close handshake
	 * (dataplane/dp_bye.c). */
	if (server) {
		struct timespec w = {0, 1000 * 1000};
		int i;

		for (i = 0; i < 3000 && dp_port_link_up(port, NULL); i++) {
			dp_port_poll(port, dp_tsc());
			nanosleep(&w, NULL);
		}
	}
	dp_port_close(port);
	dp_eal_fini();
	return 0;
}

int main(void)
{
	pid_t pids[2];
	int st, fails = 0, i;
	char cmd[256];

	if (geteuid() != 0) {
		fprintf(stderr, "FAIL: needs root (memif vdevs): run the test "
			"as root\n");
		return 1;
	}
	snprintf(job, sizeof(job), "dpmo%d", (int)getpid());
	snprintf(dir, sizeof(dir), "/run/sdp/%s", job);
	mkdir("/run/sdp", 0755);
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return 1;
	if (pipe(up_pipe) != 0) {
		perror("FAIL: pipe");
		return 1;
	}
	for (i = 0; i < 2; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			alarm(30);
			_exit(child(i == 0));
		}
		if (i == 0)
			usleep(200 * 1000);
	}
	for (i = 0; i < 2; i++) {
		if (waitpid(pids[i], &st, 0) != pids[i] || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0) {
			fprintf(stderr, "FAIL: %s did not come up (status "
				"0x%x)\n", i == 0 ? "server" : "client", st);
			fails++;
		}
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cleanup failed\n");
	snprintf(cmd, sizeof(cmd), "sdp-%s-", job);
	dp_eal_runtime_dirs_remove(cmd);
	printf("memif start order (client refused before server start): "
	       "%s\n", fails ? "FAIL" : "ok");
	return fails ? 1 : 0;
}
