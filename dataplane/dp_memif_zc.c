/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_memif_zc.c - keeping the EAL's memory file open for DPDK's zero-copy
 * memif client.
 *
 * A zero-copy memif client (devargs zero-copy=yes) shows its peer the
 * process's DPDK memory: the region it sends is the EAL's own memseg list
 * file (rte_memseg_get_fd: with --no-huge, the one memfd behind all of
 * mem=).  DPDK 22.11's memif_free_regions, run on every disconnect and
 * close, then close()s that descriptor as if it were its own
 * (rte_eth_memif.c: "if (i > 0 && ZERO_COPY) ... close(r->fd)").  The EAL
 * keeps the number and hands it out again, so the next connection of a
 * zero-copy client in this process sends the peer whatever file took the
 * number since (the server's mmap of it fails, "mmap failed: No such
 * device", and the link never comes up).  That happens to the client that
 * a server refused at start (dp_port.c wait_link reconnects it: "ID not
 * found" was a disconnect) and to a second zero-copy port opened after the
 * first one closed.
 *
 * So while a zero-copy client is open we hold a duplicate of the memory
 * file and, after each stop or close of a memif port (the operations that
 * disconnect; dp_port.c runs them on the interrupt thread, where memif
 * runs its own disconnects too), put it back at the EAL's number if memif
 * closed it: fcntl(F_DUPFD) from that number gives exactly it when it is
 * free and never takes a file someone else opened there.  A disconnect
 * memif makes on its own (the peer left) is repaired at the next stop or
 * close; a file opened by another thread in between takes the number, and
 * a later zero-copy connection in this process is then refused with the
 * reason (dp_memif_zc_hold).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <rte_memory.h>

#include "dp_internal.h"

/* Process-wide: one EAL, one memory file. */
static int zc_fd = -1;		/* the EAL's number for the memseg file */
static int zc_keep = -1;	/* our duplicate of it */
static unsigned int zc_users;	/* zero-copy ports open */

static int first_seg_fd(const struct rte_memseg_list *msl,
			const struct rte_memseg *ms, void *arg)
{
	int *fd = arg;

	if (msl->external)
		return 0;
	*fd = rte_memseg_get_fd_thread_unsafe(ms);
	return 1;
}

static bool same_file(int a, int b)
{
	struct stat sa, sb;

	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 &&
	       sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int dp_memif_zc_hold(const char *devargs)
{
	int fd = -1;

	if (zc_users > 0) {
		dp_memif_zc_restore();
		if (!same_file(zc_fd, zc_keep)) {
			SDP_LOG(ERR, DP, "config: dev=%s: zero-copy=yes: the "
				"EAL's memory file (fd %d) was closed by DPDK's "
				"memif on a disconnect and another file took "
				"its number: zero-copy cannot connect again in "
				"this process; drop zero-copy=yes", devargs,
				zc_fd);
			return -EBADF;
		}
		zc_users++;
		return 0;
	}
	if (rte_memseg_walk(first_seg_fd, &fd) < 0 || fd < 0) {
		SDP_LOG(ERR, DP, "config: dev=%s: zero-copy=yes needs DPDK "
			"memory backed by a file (huge=0 gives a memfd): "
			"rte_memseg_get_fd found none (%d); drop zero-copy=yes",
			devargs, fd);
		return -ENODEV;
	}
	zc_keep = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (zc_keep < 0) {
		int err = errno;

		SDP_LOG(ERR, DP, "config: dev=%s: zero-copy=yes: cannot "
			"duplicate the EAL's memory file (fd %d): %s: %s",
			devargs, fd, strerror(err),
			err == EMFILE ? "raise the open-file limit (ulimit -n)"
				      : "drop zero-copy=yes");
		return -err;
	}
	zc_fd = fd;
	zc_users = 1;
	return 0;
}

void dp_memif_zc_restore(void)
{
	int fd;

	if (zc_keep < 0 || fcntl(zc_fd, F_GETFD) >= 0 || errno != EBADF)
		return;
	fd = fcntl(zc_keep, F_DUPFD_CLOEXEC, zc_fd);
	if (fd == zc_fd)
		return;
	if (fd >= 0)
		close(fd);
	SDP_LOG(WARN, DP, "memif zero-copy: could not put the EAL's memory "
		"file back at fd %d (%s): a later zero-copy connection in this "
		"process will be refused", zc_fd,
		fd >= 0 ? "taken meanwhile" : strerror(errno));
}

void dp_memif_zc_release(void)
{
	if (zc_users == 0)
		return;
	dp_memif_zc_restore();
	if (--zc_users > 0)
		return;
	close(zc_keep);
	zc_keep = -1;
	zc_fd = -1;
}
