/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdp_netns_late.c - LD_PRELOAD shim: enter a network namespace when UCP
 * starts, not at exec.
 *
 * The UCX tcp baseline needs each rank inside its own namespace (its veth
 * is there), but Open MPI's PMIx client reaches its server (mpirun) over
 * the host's loopback during MPI_Init, before the pml opens UCP.  sdp-rank
 * therefore starts an Open MPI tcp rank in the host's namespace, with the
 * rank namespace's /sys mounted (UCX tcp lists its devices from
 * /sys/class/net), and this shim moves the process into
 * SDP_RANK_NS_LATE on the first ucp_init: sockets opened before (PMIx's)
 * stay in the host's namespace, every socket UCX opens after is in the
 * rank's.  Threads created after the switch inherit it; threads that
 * already exist (PMIx's progress thread) keep the host's, which is what
 * their open connection needs.
 *
 * Any failure stops the process with the reason: a rank silently left in
 * the host's namespace would measure loopback, not the veths.
 */

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ucp_init_version's prototype without UCX's headers (ucp/api/ucp.h,
 * stable since UCX 1.0): the shim must not depend on a UCX build. */
typedef int (*ucp_init_version_fn)(unsigned api_major_version,
				   unsigned api_minor_version,
				   const void *params, const void *config,
				   void **context_p);

int ucp_init_version(unsigned api_major_version, unsigned api_minor_version,
		     const void *params, const void *config,
		     void **context_p);

static void
netns_late_enter(void)
{
	static int entered;
	const char *ns = getenv("SDP_RANK_NS_LATE");
	char path[PATH_MAX];
	int fd;

	if (entered || ns == NULL || ns[0] == '\0')
		return;
	if (snprintf(path, sizeof(path), "/run/netns/%s", ns) >=
	    (int)sizeof(path)) {
		fprintf(stderr, "sdp_netns_late: SDP_RANK_NS_LATE=%s is too "
			"long\n", ns);
		_exit(2);
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "sdp_netns_late: SDP_RANK_NS_LATE=%s: open "
			"%s: %s (is the testbed up?)\n", ns, path,
			strerror(errno));
		_exit(2);
	}
	if (setns(fd, CLONE_NEWNET) != 0) {
		fprintf(stderr, "sdp_netns_late: setns(%s): %s (needs "
			"CAP_SYS_ADMIN: run as root)\n", path, strerror(errno));
		_exit(2);
	}
	close(fd);
	entered = 1;
}

int
ucp_init_version(unsigned api_major_version, unsigned api_minor_version,
		 const void *params, const void *config, void **context_p)
{
	ucp_init_version_fn real;

	real = (ucp_init_version_fn)dlsym(RTLD_NEXT, "ucp_init_version");
	if (real == NULL) {
		/* libucp came with a component dlopen()ed without
		 * RTLD_GLOBAL (Open MPI's pml ucx): not in RTLD_NEXT's
		 * scope, but loaded */
		void *ucp = dlopen("libucp.so.0", RTLD_LAZY | RTLD_NOLOAD);

		if (ucp != NULL)
			real = (ucp_init_version_fn)dlsym(ucp,
							  "ucp_init_version");
	}
	if (real == NULL) {
		fprintf(stderr, "sdp_netns_late: ucp_init_version not found "
			"after the shim (%s): is libucp loaded?\n", dlerror());
		_exit(2);
	}
	netns_late_enter();
	return real(api_major_version, api_minor_version, params, config,
		    context_p);
}
