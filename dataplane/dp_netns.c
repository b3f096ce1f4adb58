/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_netns.c - open a port inside another network namespace.
 *
 * af_packet and af_xdp ports bind a kernel interface.  When that interface
 * lives in another network namespace (an MPI rank whose port is a veth in
 * its own namespace, while the MPI runtime's out-of-band traffic must stay
 * on the host's loopback), the calling thread enters the namespace for
 * every ethdev control operation: probing (inside rte_eal_init), configure,
 * start, link queries, stop and close.  The PMD's sockets keep the
 * namespace they were created in, so the data path needs nothing.  Only
 * the calling thread switches (setns), and it always switches back.
 *
 * A PMD that opens a fresh socket for an ioctl by interface name would hit
 * a same-named interface in the caller's namespace if it ran outside these
 * brackets; the testbed names its interfaces sdpnet0 so that can never be a
 * host interface.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

#include "dp_internal.h"

int dp_netns_enter(const char *name, int *saved_fd_p)
{
	char path[128];
	int target, saved;

	*saved_fd_p = -1;
	if (name == NULL || name[0] == '\0')
		return 0;
	snprintf(path, sizeof(path), "/var/run/netns/%s", name);
	target = open(path, O_RDONLY | O_CLOEXEC);
	if (target < 0) {
		SDP_LOG(ERR, DP, "config: netns=%s: cannot open %s: %m: "
			"create it (ip netns add) or drop netns=", name, path);
		return -ENOENT;
	}
	saved = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (saved < 0) {
		SDP_LOG(ERR, DP, "cannot open our own network namespace: %m");
		close(target);
		return -EIO;
	}
	if (setns(target, CLONE_NEWNET) != 0) {
		SDP_LOG(ERR, DP, "config: netns=%s: setns failed: %m (needs "
			"CAP_SYS_ADMIN)", name);
		close(target);
		close(saved);
		return -EPERM;
	}
	close(target);
	*saved_fd_p = saved;
	return 0;
}

void dp_netns_leave(int saved_fd)
{
	if (saved_fd < 0)
		return;
	if (setns(saved_fd, CLONE_NEWNET) != 0)
		SDP_LOG(ERR, DP, "cannot return to our network namespace: %m");
	close(saved_fd);
}
