/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_gate.c - memif bursts never run while DPDK's interrupt thread does.
 *
 * DPDK's memif (22.11 and 24.11 alike: memif_disconnect and the burst
 * functions' check are the same in both) tears a connection down on the
 * EAL interrupt thread when the control channel hangs up (the peer
 * process died):
 * memif_intr_handler -> memif_disconnect clears ETH_MEMIF_FLAG_CONNECTED,
 * then memif_free_regions munmaps the shared regions and rte_frees their
 * descriptors.  eth_memif_rx/tx check that flag once, on entry, without
 * a lock or a barrier, then read the rings and copy into or out of the
 * regions: a burst that passed the check just before the peer died runs
 * on unmapped memory (a SIGSEGV of the surviving process in eth_memif_tx
 * under dp_txq_burst; test vanish-stress, docs/BENCHMARKS.md
 * "Robustness").  memif's own cc_lock does not cover the unmap, and memif
 * raises no link-state event to hook.
 *
 * With memif_gate=1 (or auto, the default: memif ports without a
 * configured pacing rate) the interrupt thread runs other callbacks only
 * while the gate is closed: a callback of ours on an eventfd keeps it
 * parked, the only time gated ports may burst.  The eventfd is readable
 * (counter 1) whenever the thread is not parked, so the EAL calls us back
 * as soon as the others' callbacks have run.  While parked the thread
 * empties the eventfd and polls the EAL's own wait set (its epoll fd,
 * found in /proc/self/fdinfo as the epoll instance watching our eventfd):
 * that turns readable only when another source has work -- memif's
 * control channel (a hang-up, a handshake message), an alarm, the
 * listener, a wait-set rebuild.  Only then does it close the gate: refuse
 * new bursts, wait for those in flight, rearm the eventfd and return, so
 * memif_disconnect (and every other callback on that thread) runs between
 * bursts.  A burst that finds the gate closed is skipped (no packets this
 * poll; TX frames stay buffered), as while the rings are off (dp_bye.c).
 *
 * Closed spells therefore happen only around the EAL's own work (port
 * start and close, memif handshakes and hang-ups) and once a second (a
 * backstop): none in 300 ms of traffic (dp test
 * MemifGateClosesOnlyWhenTheInterruptThreadHasWork).  The gate must not
 * close on a timer while traffic flows: on a loaded machine the
 * interrupt thread is preempted while the gate is closed, the closed
 * spell lasts a scheduling quantum, a sender fills its TX buffer
 * (ENOBUFS) and paced frames leave in bursts.  Paced ports stay ungated
 * under auto: a closed spell, rare as it is, still delays their frames.
 * Without /proc the wait set is not visible: the gate then falls back to
 * closing every 10 ms slice (logged).
 *
 *   dp_gate.word: DP_GATE_INTR (the interrupt thread runs) | bursts in
 *   flight.  Pollers: CAS count+1 unless DP_GATE_INTR; leave: count-1.
 *   Interrupt thread: word = 0 (open), wait for other work (or a slice),
 *   set DP_GATE_INTR, wait for the count to drain to 0.
 */
/* rte_intr_instance_alloc and its accessors are experimental in 22.11 */
#define ALLOW_EXPERIMENTAL_API 1

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include <rte_interrupts.h>
#include <rte_pause.h>

#include "dp_internal.h"

/* Fallback only (no /proc: the EAL's wait set cannot be found): each slice
 * costs the pollers one closed spell; the EAL's own work waits for the
 * end of one. */
#define GATE_SLICE_US 10000
/* The longest park: should the wait set found ever not be the EAL's (an
 * fd number matching ours by accident), its work still runs this often */
#define GATE_BACKSTOP_MS 1000
/* pauses before the drain wait sleeps between looks */
#define GATE_DRAIN_SPINS 4096
/* an epoll instance's fdinfo: one ~90-byte "tfd:" line per watched fd */
#define GATE_FDINFO_MAX 65536

/* closed until the interrupt thread first parks in gate_cb */
struct dp_gate_line dp_gate = { .word = DP_GATE_INTR };
/* closed spells so far (dp_gate_closings) */
static uint64_t gate_closings;		/* __atomic */

static uint32_t gate_installed;		/* __atomic */
/* kept reachable: the source stays registered until exit */
static struct rte_intr_handle *gate_ih;
static int gate_efd = -1;
/* interrupt thread only: the EAL's wait set (its epoll fd) as last found,
 * -1: not found (slices) */
static int gate_epfd = -1;

/* @return true: @fdinfo (an epoll fd's /proc fdinfo) watches @fd. */
static bool fdinfo_watches(const char *fdinfo, int fd)
{
	const char *p = fdinfo;

	while ((p = strstr(p, "tfd:")) != NULL) {
		p += 4;
		if (strtol(p, NULL, 10) == fd)
			return true;
	}
	return false;
}

/* @return true: @epfd is an epoll instance that watches gate_efd: the
 * EAL's (nobody else adds our eventfd). */
static bool epfd_is_eal(int epfd)
{
	static char buf[GATE_FDINFO_MAX];
	char path[64];
	size_t len = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", epfd);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	while (len < sizeof(buf) - 1 &&
	       (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	buf[len] = '\0';
	return fdinfo_watches(buf, gate_efd);
}

/* The EAL's wait set: it rebuilds it (a new epoll fd) whenever a source
 * comes or goes, so the one found last is checked on every entry.
 * @return its fd, or -1 (not found: no /proc). */
static int find_eal_epfd(void)
{
	char path[300], link[64];
	struct dirent *d;
	DIR *dh;
	ssize_t n;
	int fd = -1;

	if (gate_epfd >= 0 && epfd_is_eal(gate_epfd))
		return gate_epfd;
	dh = opendir("/proc/self/fd");
	if (dh == NULL)
		return -1;
	while (fd < 0 && (d = readdir(dh)) != NULL) {
		snprintf(path, sizeof(path), "/proc/self/fd/%s", d->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (strcmp(link, "anon_inode:[eventpoll]") == 0 &&
		    epfd_is_eal(atoi(d->d_name)))
			fd = atoi(d->d_name);
	}
	closedir(dh);
	return fd;
}

/* Park the thread until another of the EAL's sources has work (its wait
 * set turns readable without our eventfd) or, without /proc, a slice. */
static void gate_wait(void)
{
	static bool slices_logged;
	struct timespec ts = { 0, GATE_SLICE_US * 1000L };
	uint64_t v = 1;
	struct pollfd pfd;
	int rc = -1;

	gate_epfd = find_eal_epfd();
	if (gate_epfd < 0 && !slices_logged) {
		SDP_LOG(INFO, DP, "memif: the EAL's wait set is not visible in "
			"/proc/self/fd and fdinfo: the burst gate closes "
			"every %u us instead of only when the interrupt "
			"thread has work (mount /proc)", GATE_SLICE_US);
		slices_logged = true;
	}
	/* counter to 0: the wait set then reports only the other sources */
	if (gate_epfd >= 0 && read(gate_efd, &v, sizeof(v)) == sizeof(v)) {
		pfd.fd = gate_epfd;
		pfd.events = POLLIN;
		do
			rc = poll(&pfd, 1, GATE_BACKSTOP_MS);
		while (rc < 0 && errno == EINTR);
	}
	if (rc < 0)
		nanosleep(&ts, NULL);
	/* readable again (on every path: an empty eventfd would never call
	 * us back, and the gate would stay closed): the EAL calls us back
	 * after the others' callbacks */
	v = 1;
	if (write(gate_efd, &v, sizeof(v)) != sizeof(v))
		SDP_LOG(WARN, DP, "memif: cannot rearm the burst gate's "
			"eventfd (%s): memif ports may stop bursting",
			strerror(errno));
}

static void gate_cb(void *arg)
{
	struct timespec nap = { 0, 20 * 1000L };
	unsigned int spins = 0;

	RTE_SET_USED(arg);
	/* open: memif ports may burst while this thread waits here */
	__atomic_store_n(&dp_gate.word, 0, __ATOMIC_RELEASE);
	gate_wait();
	/* close: refuse new bursts at once (a poller bursting back to back
	 * would otherwise never leave the count at 0), then wait for the
	 * ones in flight */
	__atomic_fetch_or(&dp_gate.word, DP_GATE_INTR, __ATOMIC_ACQ_REL);
	__atomic_add_fetch(&gate_closings, 1, __ATOMIC_RELAXED);
	while ((__atomic_load_n(&dp_gate.word, __ATOMIC_ACQUIRE) &
		~DP_GATE_INTR) != 0) {
		if (++spins > GATE_DRAIN_SPINS)
			nanosleep(&nap, NULL); /* a poller preempted mid-burst */
		else
			rte_pause();
	}
}

uint64_t dp_gate_closings(void)
{
	return __atomic_load_n(&gate_closings, __ATOMIC_RELAXED);
}

void dp_gate_install(void)
{
	struct rte_intr_handle *ih;
	int efd;

	if (__atomic_exchange_n(&gate_installed, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	ih = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE);
	/* counter 1: readable (level-triggered) but while gate_wait waits */
	efd = eventfd(1, EFD_NONBLOCK | EFD_CLOEXEC);
	gate_efd = efd;
	if (ih == NULL || efd < 0 || rte_intr_fd_set(ih, efd) != 0 ||
	    rte_intr_type_set(ih, RTE_INTR_HANDLE_EXT) != 0 ||
	    rte_intr_callback_register(ih, gate_cb, NULL) != 0) {
		SDP_LOG(WARN, DP, "memif: cannot install the burst gate on "
			"the EAL interrupt thread (%s): a memif peer that "
			"dies mid-burst may crash this process (DPDK's memif "
			"unmaps its regions under the burst)",
			strerror(errno));
		if (efd >= 0)
			close(efd);
		rte_intr_instance_free(ih);
		/* bursts go on ungated, as before the gate */
		__atomic_store_n(&dp_gate.word, 0, __ATOMIC_RELEASE);
		return;
	}
	gate_ih = ih;
	SDP_LOG(DEBUG, DP, "memif: bursts gated against the EAL interrupt "
		"thread");
}
