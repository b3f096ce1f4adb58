/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_gate.c - memif bursts never run while DPDK's interrupt thread does.
 *
 * DPDK 22.11's memif tears a connection down on the EAL interrupt thread
 * when the control channel hangs up (the peer process died):
 * memif_intr_handler -> memif_disconnect clears ETH_MEMIF_FLAG_CONNECTED,
 * then memif_free_regions munmaps the shared regions and rte_frees their
 * descriptors.  eth_memif_rx/tx check that flag once, on entry, without
 * a lock or a barrier, then read the rings and copy into or out of the
 * regions: a burst that passed the check just before the peer died runs
 * on unmapped memory.  Seen as a SIGSEGV of the surviving sdp-perf-ep in
 * eth_memif_tx under dp_tx_burst_now (vanish-stress: 1 crash in the first
 * 160 kills, session 8).  memif's own cc_lock does not cover the unmap,
 * and memif raises no link-state event to hook.
 *
 * With memif_gate=1 (or auto: memif ports without a configured pacing
 * rate; opt-in, default 0) the interrupt thread runs only
 * between the bursts of gated ports: a callback of
 * ours on an eventfd that is always readable keeps it parked for
 * GATE_SLICE_US at a time, the only time memif ports may burst; before
 * returning (to run everything else that is ready: memif's control
 * channels, alarms, listeners) it closes the gate, waiting for the bursts
 * in flight to end.  Every other callback on that thread therefore runs
 * with the gate closed, and a burst that finds it closed is skipped (no
 * packets this poll; TX frames stay buffered), as while the rings are off
 * (dp_bye.c).  The EAL's other work waits at most one slice.
 *
 * Why opt-in: a closed spell lasts as long as
 * this thread takes to get back here, and on a loaded machine it is
 * preempted in between: paced frames then leave in bursts (meson test pace
 * over memif: a burst of 9 where 4 is the limit, at load ~11, gate on).
 * Unpaced (MPI's case) it cost nothing measurable on a quiet machine:
 * MPICH 1 MiB over memif 2387 vs 2531 MB/s, 8 B latency 4.40 vs 4.73 us,
 * medians of 8 interleaved runs, within their spread; but made the
 * default for unpaced ports, dp's QueuePairQueueKReachesThePeersQueueK
 * failed in 1 of 3 runs: its sender's TX buffer filled while the gate
 * was closed (ENOBUFS), see docs/BENCHMARKS.md, "Issue 9's targets after
 * session 8's merges".
 *
 *   dp_gate_word: DP_GATE_INTR (the interrupt thread runs) | bursts in
 *   flight.  Pollers: CAS count+1 unless DP_GATE_INTR; leave: count-1.
 *   Interrupt thread: word = 0 (open), sleep a slice, set DP_GATE_INTR,
 *   wait for the count to drain to 0.
 */
/* rte_intr_instance_alloc and its accessors are experimental in 22.11 */
#define ALLOW_EXPERIMENTAL_API 1

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include <rte_interrupts.h>
#include <rte_pause.h>

#include "dp_internal.h"

/* Each slice costs the pollers one closed spell (a few us when this thread
 * is not preempted); the EAL's own work (memif's connection handshake,
 * alarms: dp_port.c's stops and closes) waits for the end of one. */
#define GATE_SLICE_US 10000
/* pauses before the drain wait sleeps between looks */
#define GATE_DRAIN_SPINS 4096

/* closed until the interrupt thread first parks in gate_cb */
uint32_t dp_gate_word = DP_GATE_INTR;

static uint32_t gate_installed;		/* __atomic */
/* kept reachable: the source stays registered until exit */
static struct rte_intr_handle *gate_ih;

static void gate_cb(void *arg)
{
	struct timespec ts = { 0, GATE_SLICE_US * 1000L };
	struct timespec nap = { 0, 20 * 1000L };
	unsigned int spins = 0;

	RTE_SET_USED(arg);
	/* open: memif ports may burst while this thread sleeps here */
	__atomic_store_n(&dp_gate_word, 0, __ATOMIC_RELEASE);
	nanosleep(&ts, NULL);
	/* close: refuse new bursts at once (a poller bursting back to back
	 * would otherwise never leave the count at 0), then wait for the
	 * ones in flight */
	__atomic_fetch_or(&dp_gate_word, DP_GATE_INTR, __ATOMIC_ACQ_REL);
	while ((__atomic_load_n(&dp_gate_word, __ATOMIC_ACQUIRE) &
		~DP_GATE_INTR) != 0) {
		if (++spins > GATE_DRAIN_SPINS)
			nanosleep(&nap, NULL); /* a poller preempted mid-burst */
		else
			rte_pause();
	}
}

void dp_gate_install(void)
{
	struct rte_intr_handle *ih;
	int efd;

	if (__atomic_exchange_n(&gate_installed, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	ih = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE);
	/* counter 1, never read: readable for good (level-triggered) */
	efd = eventfd(1, EFD_NONBLOCK | EFD_CLOEXEC);
	if (ih == NULL || efd < 0 || rte_intr_fd_set(ih, efd) != 0 ||
	    rte_intr_type_set(ih, RTE_INTR_HANDLE_EXT) != 0 ||
	    rte_intr_callback_register(ih, gate_cb, NULL) != 0) {
		SDP_LOG(WARN, DP, "memif: cannot install the burst gate on "
			"the EAL interrupt thread (%s): a memif peer that "
			"dies mid-burst may crash this process (DPDK 22.11 "
			"unmaps its regions under the burst)",
			strerror(errno));
		if (efd >= 0)
			close(efd);
		rte_intr_instance_free(ih);
		/* bursts go on ungated, as before the gate */
		__atomic_store_n(&dp_gate_word, 0, __ATOMIC_RELEASE);
		return;
	}
	gate_ih = ih;
	SDP_LOG(DEBUG, DP, "memif: bursts gated against the EAL interrupt "
		"thread (slices of %u us)", GATE_SLICE_US);
}
