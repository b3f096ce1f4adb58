/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_uct_restart.c - an ep to a replaced process never delivers into the new
 * one (meson test uct-restart).
 *
 *   restart a process at the same IP, port and iface id replaces one that
 *           died: an ep from the dead one's address is refused and
 *           nothing meant for it is delivered into the new one.
 *
 * Fixture (UCT context, forked memif peer, cleanup): uct_fixture.h.
 */
#include "uct_fixture.h"

#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t restart_spawn(int n, int *fd_p)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		exit(1);
	pid = fork();
	if (pid == 0) {
		/* A fresh process image: the parent's EAL and port must not
		 * be inherited. */
		char ns[16], fds[16];

		close(sv[0]);
		snprintf(ns, sizeof(ns), "%d", n);
		snprintf(fds, sizeof(fds), "%d", sv[1]);
		execl("/proc/self/exe", "test_uct_restart",
		      "restart-peer", ns, fds, fx_job, (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	*fd_p = sv[0];
	return pid;
}

static void restart_addr(int n, int fd, uint8_t *dev, uint8_t *ifa)
{
	if (fx_read_addr(fd, dev, ifa) != 0) {
		fprintf(stderr, "FAIL: peer %d did not start\n", n);
		exit(1);
	}
}

static int test_restart(void)
{
	uint8_t dev1[64], ifa1[64], dev2[64], ifa2[64];
	uint32_t want = 1, report[4] = {0, 0, 0, 0};
	uct_ep_params_t p = {0};
	uct_ep_h ep2, ep_old = NULL;
	ucs_status_t st = UCS_OK;
	double t0;
	iface_t a;
	int fd1, fd2;
	pid_t pid1;
	env_t e;

	if (fx_memif_dir_create() != 0)
		return 1;
	fx_memif_env(1, "10.77.8.2/24", "r0");
	/* The first process at 10.77.8.1 publishes its address and dies. */
	pid1 = restart_spawn(1, &fd1);
	fx_peer_pid = pid1;
	fx_env_open(&e);
	fx_iface_open(&e, &a, 0);
	restart_addr(1, fd1, dev1, ifa1);
	kill(pid1, SIGKILL);
	waitpid(pid1, NULL, 0);
	close(fd1);
	usleep(20000); /* a later start: a later incarnation */
	/* Its successor at the same IP, port and iface id. */
	fx_peer_pid = restart_spawn(2, &fd2);
	restart_addr(2, fd2, dev2, ifa2);
	/* It polls from here until the final count arrives. */
	if (write(fd2, &want, sizeof(want)) != sizeof(want))
		CHECK(0, "new process gone");
	CHECK(memcmp(dev1, dev2, sizeof(uct_sctp_dpdk_dev_addr_t)) == 0,
	      "the new process has another device address");
	CHECK(memcmp(ifa1, ifa2, 2) == 0, "the new process has another "
	      "iface id");
	ep2 = fx_ep_to(&a, dev2, ifa2);
	fx_seq_send_one(&e, ep2, 0);
	/* An ep from the dead process's address (a cached worker address):
	 * refused, or at least never delivered. */
	p.field_mask = UCT_EP_PARAM_FIELD_IFACE | UCT_EP_PARAM_FIELD_DEV_ADDR |
		       UCT_EP_PARAM_FIELD_IFACE_ADDR;
	p.iface = a.iface;
	p.dev_addr = (const uct_device_addr_t *)dev1;
	p.iface_addr = (const uct_iface_addr_t *)ifa1;
	st = uct_ep_create(&p, &ep_old);
	if (st == UCS_OK)
		fx_seq_send_one(&e, ep_old, 1);
	while (uct_ep_flush(ep2, 0, NULL) == UCS_INPROGRESS)
		uct_worker_progress(e.worker);
	t0 = fx_now_s();
	while (fx_now_s() < t0 + 0.5)
		uct_worker_progress(e.worker);
	if (write(fd2, &want, sizeof(want)) != sizeof(want) ||
	    read(fd2, report, sizeof(report)) != sizeof(report))
		CHECK(0, "no report from the new process");
	CHECK(st == UCS_ERR_UNREACHABLE, "ep create from the replaced "
	      "process's address: %s", ucs_status_string(st));
	CHECK(report[0] == 1, "the new process got %u AMs, expected 1 (one "
	      "was meant for the process it replaced)", report[0]);
	printf("restart: ep from the old address %s, new process got %u "
	       "AM(s): %s\n", ucs_status_string(st), report[0],
	       fx_failures ? "FAIL" : "ok");
	if (ep_old != NULL && st == UCS_OK)
		uct_ep_destroy(ep_old);
	uct_ep_destroy(ep2);
	uct_iface_close(a.iface);
	fx_env_close(&e);
	close(fd2);
	return fx_failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "restart-peer") == 0) {
		/* exec'd by restart_spawn: n, socket fd, the parent's job */
		snprintf(fx_job, sizeof(fx_job), "%s", argv[4]);
		snprintf(fx_memif_dir, sizeof(fx_memif_dir), "/run/sdp/%s",
			 fx_job);
		fx_seq_peer_client = atoi(argv[2]);
		fx_seq_peer_main(atoi(argv[3]));
	}
	return fx_run(test_restart);
}
