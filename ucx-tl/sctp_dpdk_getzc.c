/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sctp_dpdk_getzc.c - GET replies sent from the registered memory by
 * reference (sg_send_zc, usrsctp-patches/0006), and what keeps that memory
 * from going while usrsctp or the port still read it.
 *
 * The target (sctp_dpdk_rma.c, reply_send) sends each GET_REP message of a
 * reply of at least TX_ZCOPY_MIN bytes with sg_send_zc: usrsctp references
 * the registered bytes until the last DATA chunk is cumulatively
 * acknowledged and every chained TX packet freed.  The requester completes
 * when it has the data, so the target's application (UCP: after the ATS)
 * may deregister and unmap the buffer while those references last: a
 * retransmission (a lost SACK, a spurious T3) or a chained packet would
 * then read unmapped memory.  Every such message therefore holds a record
 * {key, addr, length} in a process-wide list until sg's done function
 * (which runs from sg_poll once nothing references the bytes), and
 *
 *   uct_md_mem_dereg   removes the key from the table (no new reply reads
 *                      it), then detaches and waits for the key's records
 *   munmap & co.       a ucm VM_UNMAPPED handler (runs BEFORE the pages
 *                      go) detaches and waits for the records
 *                      overlapping the range
 *
 * Detach (sg_assoc_zc_detach, usrsctp-patches/0009): at once, each
 * association holding such records copies the pieces its queues still
 * reference (queued, in flight, retransmittable) and the rest of a reply
 * not yet handed to usrsctp, and drops its references.  What is left are
 * the port's chained packets already built from the pages: they go when
 * the port has sent them, so the wait is bounded by the port, not by the
 * requester's SACK (a lost SACK, a stalled or slow peer costs a copy of
 * the unacknowledged bytes, not the association).
 *
 * The hook is needed besides dereg: UCP's registration cache (on by
 * default in 1.13.1, ucp_mm.c) deregisters lazily -- its own VM_UNMAPPED
 * handler only invalidates the region and puts it on a GC list
 * (ucs/memory/rcache.c, UCS_RCACHE_REGION_PUT_FLAG_ADD_TO_GC), so
 * uct_md_mem_dereg runs after the munmap.  Without the hook (ucm events
 * off: UCX_MEM_EVENTS=n, or not installable) GET replies are copied.
 *
 * Waiting: the records drop in sg_poll (ctx->lock held); polling runs no
 * user callback (AM handlers and completions run from the iface's
 * progress, outside the lock: sctp_dpdk_rx.c), so the wait may poll from
 * any context UCP deregisters in -- a UCP completion inside
 * uct_worker_progress, the rcache's GC, ucp_mem_unmap -- unless this
 * thread already holds ctx->lock (the hook fired from a free() inside the
 * poll loop itself: usrsctp or DPDK trimming the heap: neither detach nor
 * wait is possible, an error says so); with PROGRESS=thread it yields to
 * whoever polls.
 *
 * Order: a GET reads the memory when it is served, before any PUT sent
 * after it is written (sctp_dpdk_rma.c).  By reference the bytes are read
 * later -- when usrsctp builds the packets, when the port sends a chained
 * one, at every retransmission -- so a PUT overlapping bytes still
 * referenced waits (uct_sctp_dpdk_getzc_busy: in ctx->rma_replyq, with
 * everything behind it, and it is not placed by RX_DIRECT) until they are
 * released: its write can then change neither the first transmission nor
 * a retransmission.  Nothing else at the target writes a region while a
 * GET of it is outstanding (UCP: the rendezvous send buffer is the user's
 * until the ATS; MPI one-sided: a local store racing a remote get is
 * erroneous).
 *
 * Deadline DEREG_WAIT_MS: past it (a port still holding chained packets
 * of the pages: a stuck queue), or at once when a detach could not copy
 * (no memory), the associations concerned are ABORTED (sg_assoc_abort:
 * usrsctp drops their queues; their eps fail as on any association loss)
 * and a warning names the setting; other associations are untouched.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sctp_dpdk.h"

#include <ucm/api/ucm.h>
#include <ucs/sys/string.h>
#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>

#include <pthread.h>
#include <sched.h>
#include <string.h>

/* ucm dispatches VM_UNMAPPED before it calls the real munmap (ucm_munmap,
 * whatever the priority; UCP's registration cache uses 500, UCT's 1000):
 * the order among the handlers does not matter to the wait */
#define UCT_SCTP_DPDK_GETZC_HOOK_PRIO 1100
/* after an abort: for the done functions (and a port's chained packets) */
#define UCT_SCTP_DPDK_GETZC_ABORT_WAIT_MS 1000
#define UCT_SCTP_DPDK_GETZC_MAX_ABORTS 16
/* between detach passes: one pass takes at most MAX_ABORTS associations,
 * and a munmap's range may still be served by new GETs meanwhile */
#define UCT_SCTP_DPDK_GETZC_DETACH_EVERY_MS 10

typedef struct uct_sctp_dpdk_getzc_ref {
	ucs_list_link_t list;
	uct_sctp_dpdk_ctx_t *ctx;
	struct sg_ep *sg;
	sg_assoc_t assoc;
	uint64_t key, addr, length; /* bytes referenced */
} uct_sctp_dpdk_getzc_ref_t;

static struct {
	pthread_mutex_t lock;  /* leaf: never held across a poll or free */
	ucs_list_link_t refs;  /* live references */
	uint64_t live;	       /* their number (read unlocked) */
	uint64_t waits;	       /* dereg/unmap calls that found some */
	uint64_t wait_tsc;     /* time they waited */
	pthread_once_t once;
	int hook;	       /* 1: VM_UNMAPPED handler installed */
} uct_sctp_dpdk_getzc = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.refs = UCS_LIST_INITIALIZER(&uct_sctp_dpdk_getzc.refs,
				     &uct_sctp_dpdk_getzc.refs),
	.once = PTHREAD_ONCE_INIT,
};

typedef struct {
	uint64_t key;	     /* != 0: records of this key */
	uint64_t start, end; /* else: records overlapping [start, end) */
} uct_sctp_dpdk_getzc_match_t;

static int uct_sctp_dpdk_getzc_matches(const uct_sctp_dpdk_getzc_ref_t *ref,
				       const uct_sctp_dpdk_getzc_match_t *m)
{
	if (m->key != 0)
		return ref->key == m->key;
	return ref->addr < m->end && m->start < ref->addr + ref->length;
}

uint64_t uct_sctp_dpdk_getzc_held(void)
{
	return __atomic_load_n(&uct_sctp_dpdk_getzc.live, __ATOMIC_ACQUIRE);
}

/* The associations holding records that match @m (at most
 * UCT_SCTP_DPDK_GETZC_MAX_ABORTS of them), each with the smallest range
 * covering its records' bytes. */
typedef struct {
	unsigned n;
	struct sg_ep *sgs[UCT_SCTP_DPDK_GETZC_MAX_ABORTS];
	sg_assoc_t assocs[UCT_SCTP_DPDK_GETZC_MAX_ABORTS];
	uint64_t start[UCT_SCTP_DPDK_GETZC_MAX_ABORTS];
	uint64_t end[UCT_SCTP_DPDK_GETZC_MAX_ABORTS];
} uct_sctp_dpdk_getzc_holders_t;

/* Records matching @m; the first one's ctx in @ctx_p.  With @h, the
 * associations holding them go there. */
static unsigned uct_sctp_dpdk_getzc_count(const uct_sctp_dpdk_getzc_match_t *m,
					  uct_sctp_dpdk_ctx_t **ctx_p,
					  uct_sctp_dpdk_getzc_holders_t *h)
{
	uct_sctp_dpdk_getzc_ref_t *ref;
	unsigned count = 0, k;

	if (uct_sctp_dpdk_getzc_held() == 0)
		return 0;
	pthread_mutex_lock(&uct_sctp_dpdk_getzc.lock);
	ucs_list_for_each(ref, &uct_sctp_dpdk_getzc.refs, list) {
		if (!uct_sctp_dpdk_getzc_matches(ref, m))
			continue;
		if (count++ == 0)
			*ctx_p = ref->ctx;
		if (h == NULL)
			continue;
		for (k = 0; k < h->n; k++)
			if (h->sgs[k] == ref->sg && h->assocs[k] == ref->assoc)
				break;
		if (k == h->n) {
			if (h->n == UCT_SCTP_DPDK_GETZC_MAX_ABORTS)
				continue;
			h->sgs[k] = ref->sg;
			h->assocs[k] = ref->assoc;
			h->start[k] = ref->addr;
			h->end[k] = ref->addr + ref->length;
			h->n++;
			continue;
		}
		h->start[k] = ucs_min(h->start[k], ref->addr);
		h->end[k] = ucs_max(h->end[k], ref->addr + ref->length);
	}
	pthread_mutex_unlock(&uct_sctp_dpdk_getzc.lock);
	return count;
}

/* One step of waiting: poll the stack, or let the poller run.  Not with
 * ctx->lock held by this thread (the caller checks). */
static void uct_sctp_dpdk_getzc_progress(uct_sctp_dpdk_ctx_t *ctx)
{
	if (!ctx->thread_on && ucs_recursive_spin_trylock(ctx->lock)) {
		uct_sctp_dpdk_ctx_poll_all();
		ucs_recursive_spin_unlock(ctx->lock);
		return;
	}
	sched_yield();
}

/* Detach the associations in @h from their records' bytes (the file
 * comment); those whose copy failed are aborted at once.  ctx->lock held. */
static void uct_sctp_dpdk_getzc_detach(uct_sctp_dpdk_getzc_holders_t *h,
				       const char *what)
{
	unsigned k;
	ssize_t n;
	int rc;

	for (k = 0; k < h->n; k++) {
		n = sg_assoc_zc_detach(h->sgs[k], h->assocs[k],
				       (const void *)(uintptr_t)h->start[k],
				       h->end[k] - h->start[k]);
		if (n >= 0) {
			ucs_debug("sctp_dpdk: %s: assoc %u: %zd referenced "
				  "bytes copied", what, h->assocs[k], n);
			continue;
		}
		ucs_warn("sctp_dpdk: %s: assoc %u: copying the zero-copy GET "
			 "replies it still references failed (%s): aborting "
			 "it so that nothing reads the memory after it is "
			 "released", what, h->assocs[k], strerror((int)-n));
		rc = sg_assoc_abort(h->sgs[k], h->assocs[k]);
		if (rc != 0)
			ucs_debug("sctp_dpdk: abort of assoc %u: %s",
				  h->assocs[k], strerror(-rc));
	}
}

/* Wait until no record matches @m (see the file comment).  @what names
 * the caller in messages. */
static void uct_sctp_dpdk_getzc_wait(const uct_sctp_dpdk_getzc_match_t *m,
				     const char *what)
{
	uct_sctp_dpdk_getzc_holders_t h;
	uct_sctp_dpdk_ctx_t *ctx = NULL;
	uint64_t deadline = 0, next_detach = 0, hz = dp_tsc_hz();
	unsigned count, k, aborted = 0;
	uint64_t start = 0;
	int rc;

	while ((count = uct_sctp_dpdk_getzc_count(m, &ctx, NULL)) != 0) {
		if (ucs_recursive_spin_is_owner(ctx->lock, pthread_self())) {
			ucs_error("sctp_dpdk: %s of 0x%" PRIx64 "..0x%" PRIx64
				  " from inside the stack's poll loop while "
				  "%u zero-copy GET replies still reference "
				  "it: cannot wait; a retransmission may read "
				  "unmapped memory (" UCT_SCTP_DPDK_ENV
				  "TX_ZCOPY_MIN=0 copies GET replies)", what,
				  m->start, m->end, count);
			return;
		}
		if (deadline == 0) {
			start = dp_tsc();
			deadline = start + hz * ctx->dereg_wait_ms / 1000;
		}
		if (!aborted && dp_tsc() >= next_detach) {
			/* at once: copies replace usrsctp's references, so
			 * only the port's chained packets are left to wait
			 * for, not the peer's SACK */
			next_detach = dp_tsc() +
				      hz * UCT_SCTP_DPDK_GETZC_DETACH_EVERY_MS /
					      1000;
			h.n = 0;
			uct_sctp_dpdk_getzc_count(m, &ctx, &h);
			ucs_recursive_spin_lock(ctx->lock);
			uct_sctp_dpdk_getzc_detach(&h, what);
			ucs_recursive_spin_unlock(ctx->lock);
			continue;
		}
		uct_sctp_dpdk_getzc_progress(ctx);
		if (dp_tsc() < deadline)
			continue;
		if (aborted) {
			ucs_error("sctp_dpdk: %s: %u zero-copy GET replies "
				  "still referenced %u ms after their "
				  "associations were aborted (the port holds "
				  "them); their memory may be read after it "
				  "is gone", what, count,
				  UCT_SCTP_DPDK_GETZC_ABORT_WAIT_MS);
			return;
		}
		h.n = 0;
		uct_sctp_dpdk_getzc_count(m, &ctx, &h);
		ucs_warn("sctp_dpdk: %s: %u zero-copy GET replies from this "
			 "memory still referenced " UCT_SCTP_DPDK_ENV
			 "DEREG_WAIT_MS=%u after their associations copied "
			 "them (a port holds their packets): aborting %u "
			 "association(s) so that nothing reads the memory "
			 "after it is released (raise " UCT_SCTP_DPDK_ENV
			 "DEREG_WAIT_MS, or " UCT_SCTP_DPDK_ENV
			 "TX_ZCOPY_MIN=0 to copy GET replies)", what, count,
			 ctx->dereg_wait_ms, h.n);
		ucs_recursive_spin_lock(ctx->lock);
		for (k = 0; k < h.n; k++) {
			rc = sg_assoc_abort(h.sgs[k], h.assocs[k]);
			if (rc != 0)
				ucs_debug("sctp_dpdk: abort of assoc %u: %s",
					  h.assocs[k], strerror(-rc));
		}
		ucs_recursive_spin_unlock(ctx->lock);
		aborted = 1;
		deadline = dp_tsc() + hz * UCT_SCTP_DPDK_GETZC_ABORT_WAIT_MS /
					      1000;
	}
	if (start != 0) {
		__atomic_add_fetch(&uct_sctp_dpdk_getzc.waits, 1,
				   __ATOMIC_RELAXED);
		__atomic_add_fetch(&uct_sctp_dpdk_getzc.wait_tsc,
				   dp_tsc() - start, __ATOMIC_RELAXED);
	}
}

void uct_sctp_dpdk_getzc_wait_stats(uint64_t *waits_p, uint64_t *wait_us_p)
{
	*waits_p = __atomic_load_n(&uct_sctp_dpdk_getzc.waits,
				   __ATOMIC_RELAXED);
	*wait_us_p = __atomic_load_n(&uct_sctp_dpdk_getzc.wait_tsc,
				     __ATOMIC_RELAXED) *
		     1000000 / dp_tsc_hz();
}

int uct_sctp_dpdk_getzc_busy(uint64_t addr, uint64_t length)
{
	uct_sctp_dpdk_getzc_match_t m = {.key = 0, .start = addr,
					 .end = addr + length};
	uct_sctp_dpdk_ctx_t *ctx;

	return length != 0 && uct_sctp_dpdk_getzc_count(&m, &ctx, NULL) != 0;
}

void uct_sctp_dpdk_getzc_dereg_wait(uint64_t key)
{
	uct_sctp_dpdk_getzc_match_t m = {.key = key};

	uct_sctp_dpdk_getzc_wait(&m, "deregistration");
}

/* ucm VM_UNMAPPED: runs before munmap/mremap/shmdt/brk/madvise release
 * the range. */
static void uct_sctp_dpdk_getzc_unmapped(ucm_event_type_t event_type,
					 ucm_event_t *event, void *arg)
{
	uct_sctp_dpdk_getzc_match_t m;

	if (event_type != UCM_EVENT_VM_UNMAPPED ||
	    uct_sctp_dpdk_getzc_held() == 0)
		return;
	m.key = 0;
	m.start = (uintptr_t)event->vm_unmapped.address;
	m.end = m.start + event->vm_unmapped.size;
	uct_sctp_dpdk_getzc_wait(&m, "unmap");
}

static void uct_sctp_dpdk_getzc_hook_install(void)
{
	ucs_status_t status;

	status = ucm_set_event_handler(UCM_EVENT_VM_UNMAPPED,
				       UCT_SCTP_DPDK_GETZC_HOOK_PRIO,
				       uct_sctp_dpdk_getzc_unmapped, NULL);
	if (status == UCS_OK) {
		uct_sctp_dpdk_getzc.hook = 1;
		return;
	}
	ucs_diag("sctp_dpdk: no memory unmap events (%s; UCX_MEM_EVENTS?): "
		 "GET replies are copied, not sent from the registered memory "
		 "(" UCT_SCTP_DPDK_ENV "TX_ZCOPY_MIN)",
		 ucs_status_string(status));
}

void uct_sctp_dpdk_getzc_init(uct_sctp_dpdk_ctx_t *ctx,
			      const uct_sctp_dpdk_iface_config_t *config)
{
	size_t min = (config->tx_zcopy_min == UCS_MEMUNITS_INF ||
		      config->tx_zcopy_min == UCS_MEMUNITS_AUTO) ?
			     0 :
			     config->tx_zcopy_min;

	ctx->dereg_wait_ms = config->dereg_wait_ms;
	ctx->get_zcopy_min = 0;
	if (min == 0)
		return;
	pthread_once(&uct_sctp_dpdk_getzc.once,
		     uct_sctp_dpdk_getzc_hook_install);
	if (uct_sctp_dpdk_getzc.hook)
		ctx->get_zcopy_min = min;
}

static void uct_sctp_dpdk_getzc_done(void *arg, int status)
{
	uct_sctp_dpdk_getzc_ref_t *ref = arg;

	pthread_mutex_lock(&uct_sctp_dpdk_getzc.lock);
	ucs_list_del(&ref->list);
	__atomic_sub_fetch(&uct_sctp_dpdk_getzc.live, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&uct_sctp_dpdk_getzc.lock);
	ucs_free(ref);
}

void uct_sctp_dpdk_getzc_forget(uct_sctp_dpdk_ctx_t *ctx)
{
	uct_sctp_dpdk_getzc_ref_t *ref, *tmp;
	ucs_list_link_t gone;

	ucs_list_head_init(&gone);
	pthread_mutex_lock(&uct_sctp_dpdk_getzc.lock);
	ucs_list_for_each_safe(ref, tmp, &uct_sctp_dpdk_getzc.refs, list) {
		if (ref->ctx != ctx)
			continue;
		ucs_list_del(&ref->list);
		ucs_list_add_tail(&gone, &ref->list);
		__atomic_sub_fetch(&uct_sctp_dpdk_getzc.live, 1,
				   __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&uct_sctp_dpdk_getzc.lock);
	ucs_list_for_each_safe(ref, tmp, &gone, list)
		ucs_free(ref); /* outside the lock: free may unmap */
}

int uct_sctp_dpdk_getzc_send(uct_sctp_dpdk_ctx_t *ctx, struct sg_ep *sg,
			     sg_assoc_t assoc, uint16_t stream, uint32_t flags,
			     uint64_t key, const struct iovec *iov)
{
	uct_sctp_dpdk_getzc_ref_t *ref;
	int rc;

	ref = ucs_malloc(sizeof(*ref), "sctp_dpdk zcopy get reply");
	if (ref == NULL) /* copied instead */
		return sg_send(sg, assoc, stream, flags, 0, iov, 2);
	ref->ctx = ctx;
	ref->sg = sg;
	ref->assoc = assoc;
	ref->key = key;
	ref->addr = (uintptr_t)iov[1].iov_base;
	ref->length = iov[1].iov_len;
	/* listed before the table's read lock is dropped: a dereg waiting
	 * for that lock finds it */
	pthread_mutex_lock(&uct_sctp_dpdk_getzc.lock);
	ucs_list_add_tail(&uct_sctp_dpdk_getzc.refs, &ref->list);
	__atomic_add_fetch(&uct_sctp_dpdk_getzc.live, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&uct_sctp_dpdk_getzc.lock);
	rc = sg_send_zc(sg, assoc, stream, flags, 0, iov, 2,
			UCT_SCTP_DPDK_RMA_HDRS_BYTES, uct_sctp_dpdk_getzc_done,
			ref);
	if (rc != 0) { /* done never runs */
		uct_sctp_dpdk_getzc_done(ref, rc);
		return rc;
	}
	ctx->rma_rep_zc_msgs++;
	ctx->rma_rep_zc_bytes += iov[1].iov_len;
	return 0;
}
