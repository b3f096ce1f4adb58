/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_uct_exit.c - a process exiting right after sending loses nothing (meson
 * test uct-exit).
 *
 *   exit    a sender process exits right after sending while the
 *           receiver does not poll for 2 s: the exit drain keeps the data
 *           until it is acknowledged (UCX_SCTP_DPDK_EXIT_TIMEOUT).
 *
 * Fixture (UCT context, forked memif peer, cleanup): uct_fixture.h.
 */
#include "uct_fixture.h"

#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXIT_MSGS 125
#define EXIT_LEN 8000
#define EXIT_SLEEP_S 2.0

/* Sender (child): one AM to bring the association up, wait for "go",
 * send EXIT_MSGS AMs (taken whole by usrsctp, the receiver is not polling
 * so nothing is acknowledged) and exit at once: the exit drain must keep
 * the data until the receiver acknowledged it. */
static void exit_sender_main(int fd)
{
	uint8_t rdev[64], rifa[64];
	char go;
	iface_t t;
	env_t e;
	uct_ep_h ep;
	unsigned k;

	fx_memif_env(0, "10.77.8.2/24", "r1");
	fx_env_open(&e);
	fx_iface_open(&e, &t, 0);
	if (fx_read_addr(fd, rdev, rifa) != 0)
		_exit(1);
	ep = fx_ep_to(&t, rdev, rifa);
	fx_send_am(&e, ep, 2, 1, 0, 100);
	if (write(fd, "u", 1) != 1)
		_exit(1);
	/* Keep polling: the AM leaves the port's TX queue from the poll. */
	while (recv(fd, &go, 1, MSG_DONTWAIT) != 1)
		uct_worker_progress(e.worker);
	for (k = 1; k <= EXIT_MSGS; k++)
		fx_send_am(&e, ep, 2, 1, (uint16_t)k, EXIT_LEN);
	exit(fx_failures ? 1 : 0); /* atexit: the transport's exit drain */
}

static int test_exit(void)
{
	char c;
	double t0, deadline;
	int fd, st = 0;
	iface_t t;
	env_t e;

	fd = fx_fork_peer(exit_sender_main);
	if (fd < 0)
		return 1;
	fx_memif_env(1, "10.77.8.1/24", "r0");
	fx_env_open(&e);
	fx_iface_open(&e, &t, 0);
	if (fx_write_addr(fd, &t) != 0)
		return 1;
	/* Poll until the first AM arrived and the sender said so. */
	deadline = fx_now_s() + DEADLINE_S;
	while ((t.rx_count < 1 || recv(fd, &c, 1, MSG_DONTWAIT) != 1) &&
	       fx_now_s() < deadline) {
		uct_worker_progress(e.worker);
		fx_release_kept(&t);
	}
	CHECK(t.rx_count == 1, "association did not come up (%u AMs)",
	      t.rx_count);
	/* Stop polling: nothing the sender sends now is acknowledged until
	 * we come back, after the sender has begun to exit. */
	if (write(fd, "g", 1) != 1)
		return 1;
	t0 = fx_now_s();
	while (fx_now_s() < t0 + EXIT_SLEEP_S)
		usleep(10000);
	deadline = fx_now_s() + DEADLINE_S;
	while (t.rx_count < EXIT_MSGS + 1 && fx_now_s() < deadline) {
		uct_worker_progress(e.worker);
		fx_release_kept(&t);
	}
	waitpid(fx_peer_pid, &st, 0);
	fx_peer_pid = 0;
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "sender status 0x%x",
	      st);
	CHECK(t.rx_count == EXIT_MSGS + 1, "received %u of %u AMs the sender "
	      "sent before exiting", t.rx_count - 1, EXIT_MSGS);
	CHECK(t.rx_bad == 0, "%u AMs corrupted", t.rx_bad);
	printf("exit: sender exited right after %u AMs while the receiver "
	       "slept %.1f s; received %u: %s\n", EXIT_MSGS, EXIT_SLEEP_S,
	       t.rx_count - 1, fx_failures ? "FAIL" : "ok");
	uct_iface_close(t.iface);
	fx_env_close(&e);
	close(fd);
	return fx_failures ? 1 : 0;
}

int main(void)
{
	return fx_run(test_exit);
}
