/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sg_zc.c - completions of zero-copy sends (sg_send_zc,
 * usrsctp-patches/0006).
 *
 * usrsctp_sendv_ext references the caller's bytes and calls its free
 * function once none of them is referenced any more: the chunks
 * cumulatively acknowledged (or the association gone) and every chained
 * TX packet that pointed at them freed by the dataplane.  A message may
 * take several calls (a big send continued from sg_poll), so each message
 * has one record counting sg's own hold (dropped when the last byte is
 * handed over, or the send fails) plus one per call.  The last drop may
 * happen deep inside usrsctp (a SACK's input, a timer, usrsctp_close) or
 * in a PMD's free of a chained segment; the record then only goes on a
 * lock-free list, and sg_poll runs the caller's done function after
 * reading notifications, so a lost association is known by then
 * (-ECONNRESET) and the caller may send again from it.
 *
 *   sg_send_zc -> new (refs 1) -> +1 per usrsctp_sendv_ext
 *     usrsctp free_fn -1 ... hand-over done -1 -> 0: zc_released
 *     sg_poll -> sg_zc_deliver -> done(arg, status), kept for reuse
 *
 * sg_assoc_zc_detach (a deregistration that cannot wait for the peer)
 * turns an association's references into copies at once (usrsctp patch
 * 0009) and the rest of a big send into a copied send; the usrsctp free
 * functions then run as the copies replace the references, and the port's
 * chained packets drop theirs when sent.
 *
 * Delivered records go on the endpoint's spare list (poll thread, under
 * its lock) and the next sg_send_zc takes one from there instead of
 * calloc: no glibc malloc/free per message for a bulk sender.  They
 * number at most the messages in flight at the peak; sg_zc_close frees
 * them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <usrsctp.h>

#include "sg_internal.h"

static uint64_t sg_zc_calls_held;

uint64_t sg_zc_held(void)
{
	return __atomic_load_n(&sg_zc_calls_held, __ATOMIC_RELAXED);
}

struct sg_zc *sg_zc_new(struct sg_ep *ep, sg_assoc_t assoc,
			sg_send_done_fn done, void *arg)
{
	struct sg_zc *z = ep->zc_spare;

	if (z != NULL) {
		ep->zc_spare = z->next;
		memset(z, 0, sizeof(*z));
	} else {
		z = calloc(1, sizeof(*z));
		if (z == NULL)
			return NULL;
		ep->zc_st.records++;
	}
	z->ep = ep;
	z->done = done;
	z->arg = arg;
	z->refs = 1;
	z->assoc = assoc;
	z->lnext = ep->zc_live;
	if (ep->zc_live != NULL)
		ep->zc_live->lprev = z;
	ep->zc_live = z;
	ep->zc_st.outstanding++;
	return z;
}

void sg_zc_get(struct sg_zc *z)
{
	__atomic_add_fetch(&z->refs, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&sg_zc_calls_held, 1, __ATOMIC_RELAXED);
}

void sg_zc_put(struct sg_zc *z)
{
	struct sg_ep *ep;

	if (__atomic_sub_fetch(&z->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	ep = __atomic_load_n(&z->ep, __ATOMIC_ACQUIRE);
	if (ep == NULL) { /* its endpoint is closed: nobody to tell */
		free(z);
		return;
	}
	z->next = __atomic_load_n(&ep->zc_released, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&ep->zc_released, &z->next, z,
					    true, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED))
		;
}

void sg_zc_release_cb(void *arg)
{
	__atomic_sub_fetch(&sg_zc_calls_held, 1, __ATOMIC_RELAXED);
	sg_zc_put(arg);
}

static void live_del(struct sg_ep *ep, struct sg_zc *z)
{
	if (z->lprev != NULL)
		z->lprev->lnext = z->lnext;
	else
		ep->zc_live = z->lnext;
	if (z->lnext != NULL)
		z->lnext->lprev = z->lprev;
	ep->zc_st.outstanding--;
}

static unsigned int deliver(struct sg_ep *ep, bool closing)
{
	struct sg_zc *z, *fifo = NULL, *next;
	unsigned int n = 0;

	if (__atomic_load_n(&ep->zc_released, __ATOMIC_RELAXED) == NULL)
		return 0;
	z = __atomic_exchange_n(&ep->zc_released, NULL, __ATOMIC_ACQUIRE);
	for (; z != NULL; z = next) { /* LIFO -> release order */
		next = z->next;
		z->next = fifo;
		fifo = z;
	}
	for (z = fifo; z != NULL; z = next) {
		int status = z->status;

		next = z->next;
		if (status == 0 && (closing || !sg_assoc_up(ep, z->assoc)))
			status = -ECONNRESET;
		live_del(ep, z);
		if (!z->silent) {
			ep->zc_st.done++;
			if (status != 0)
				ep->zc_st.done_err++;
			z->done(z->arg, status);
			n++;
		} else {
			ep->zc_st.msgs--; /* refused, not sent */
		}
		z->next = ep->zc_spare;
		ep->zc_spare = z;
	}
	return n;
}

unsigned int sg_zc_deliver(struct sg_ep *ep)
{
	return deliver(ep, false);
}

void sg_zc_close(struct sg_ep *ep)
{
	struct sg_zc *z, *next;
	unsigned int orphans = 0;

	deliver(ep, true);
	for (z = ep->zc_spare; z != NULL; z = next) {
		next = z->next;
		free(z);
		ep->zc_st.records--;
	}
	ep->zc_spare = NULL;
	for (z = ep->zc_live; z != NULL; z = next) {
		next = z->lnext;
		/* a chained packet still holds its bytes (a PMD has not
		 * freed it yet): it frees the record when it lets go */
		__atomic_store_n(&z->ep, NULL, __ATOMIC_RELEASE);
		orphans++;
	}
	ep->zc_live = NULL;
	if (orphans != 0)
		SDP_LOG(WARN, SCTP, "port %u: %u zero-copy sends still "
			"referenced at close: their completions never run "
			"(keep their buffers until the port is closed)",
			ep->cfg.port, orphans);
}

ssize_t sg_assoc_zc_detach(struct sg_ep *ep, sg_assoc_t assoc,
			   const void *addr, size_t len)
{
	uintptr_t lo = (uintptr_t)addr, hi = lo + len;
	ssize_t n, big;

	if (len == 0)
		return 0;
	if (ep->so == NULL)
		return -EBADF;
	/* the rest of a big send first: nothing is handed over from the
	 * region after usrsctp has let go of it */
	big = sg_big_zc_detach(ep, assoc, lo, hi);
	n = usrsctp_zcopy_detach(ep->so, (sctp_assoc_t)assoc, addr, len);
	if (n < 0) {
		int err = errno;

		SDP_LOG(ERR, SCTP, "assoc %u: usrsctp_zcopy_detach of %zu "
			"bytes: %s", assoc, len, strerror(err));
		return err == ENOMEM ? -ENOMEM : -EBADF;
	}
	if (big < 0)
		return big;
	ep->zc_st.detached_bytes += (uint64_t)(n + big);
	return n + big;
}

void sg_ep_zc_stats(const struct sg_ep *ep, struct sg_zc_stats *st)
{
	*st = ep->zc_st;
}
