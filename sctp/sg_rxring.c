/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sg_rxring.c - receive descriptors and the zero-copy rx ring.
 *
 * A descriptor is one slice of a single allocation made at init:
 *
 *   | struct sg_rxdesc | headroom (rx_headroom) | data (rx_buf bytes) |
 *
 * The poll thread takes free descriptors, lets usrsctp_recvv write message
 * bytes straight into the data area (usrsctp's only copy on receive while
 * it keeps packets in their DPDK mbufs, rx_ext; else its second, after
 * usrsctp_conninput's copy of the packet), chains the segments of a
 * message and publishes the head on the
 * ready ring when the message is complete (MSG_EOR).  The consumer takes
 * heads with sg_recv and gives chains back with sg_msg_release; the free
 * stack carries them back, last in first out (the most recently used,
 * cache-hot descriptor is reused first).  The ready ring is SPSC; ring and
 * stack are large enough for every descriptor, so adding never fails.
 *
 * Back-pressure: the pool never grows.  When no descriptor is free the
 * endpoint stops calling usrsctp_recvv; usrsctp keeps the data, its receive
 * window closes and the peer stops sending.  Nothing is dropped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_lcore.h>

#include "sg_internal.h"

#define DESC_ALIGN 64

static struct rte_ring *ring_new(const char *what, const void *owner,
				 uint32_t count)
{
	char name[RTE_RING_NAMESIZE];

	snprintf(name, sizeof(name), "sg_%s_%lx", what,
		 (unsigned long)(uintptr_t)owner & 0xffffffffffUL);
	return rte_ring_create(name, count, (int)rte_socket_id(),
			       RING_F_SP_ENQ | RING_F_SC_DEQ |
				       RING_F_EXACT_SZ);
}

int sg_rxpool_init(struct sg_rxpool *pool, const struct sg_config *cfg,
		   const void *owner)
{
	size_t hdr = RTE_ALIGN_CEIL(sizeof(struct sg_rxdesc), DESC_ALIGN);
	uint32_t i;

	memset(pool, 0, sizeof(*pool));
	pool->nb = cfg->rx_descs;
	pool->cap = cfg->rx_buf_bytes;
	pool->headroom = RTE_ALIGN_CEIL(cfg->rx_headroom_bytes, 8);
	pool->stride = (uint32_t)RTE_ALIGN_CEIL(hdr + pool->headroom +
						pool->cap, DESC_ALIGN);
	if (posix_memalign((void **)&pool->mem, 4096,
			   (size_t)pool->stride * pool->nb) != 0) {
		SDP_LOG(ERR, SCTP, "rx: cannot allocate %u descriptors of %u "
			"bytes: lower rx_descs or rx_buf", pool->nb,
			pool->stride);
		pool->mem = NULL;
		return -ENOMEM;
	}
	pool->free = calloc(pool->nb, sizeof(*pool->free));
	rte_spinlock_init(&pool->free_lock);
	pool->ready = ring_new("rdy", owner, pool->nb);
	if (pool->free == NULL || pool->ready == NULL) {
		SDP_LOG(ERR, SCTP, "rx: cannot create rings of %u entries: "
			"raise the dataplane's mem or lower rx_descs",
			pool->nb);
		sg_rxpool_fini(pool);
		return -ENOMEM;
	}
	for (i = pool->nb; i-- > 0;) { /* descriptor 0 on top */
		struct sg_rxdesc *d =
			(struct sg_rxdesc *)(pool->mem +
					     (size_t)i * pool->stride);

		memset(d, 0, sizeof(*d));
		d->pool = pool;
		d->cap = pool->cap;
		d->pub.data = (uint8_t *)d + hdr + pool->headroom;
		pool->free[pool->free_top++] = d;
	}
	return 0;
}

void sg_rxpool_fini(struct sg_rxpool *pool)
{
	if (pool->free != NULL && pool->mem != NULL &&
	    pool->free_top != pool->nb)
		SDP_LOG(WARN, SCTP, "rx: %u of %u descriptors not released "
			"at close", pool->nb - pool->free_top, pool->nb);
	free(pool->free);
	rte_ring_free(pool->ready);
	free(pool->mem);
	memset(pool, 0, sizeof(*pool));
}

struct sg_rxdesc *sg_rxpool_get(struct sg_rxpool *pool)
{
	void *d = NULL;

	rte_spinlock_lock(&pool->free_lock);
	if (pool->free_top != 0)
		d = pool->free[--pool->free_top];
	rte_spinlock_unlock(&pool->free_lock);
	return d;
}

void sg_rxpool_put_chain(struct sg_msg_desc *head)
{
	while (head != NULL) {
		struct sg_rxdesc *d = (struct sg_rxdesc *)head;

		head = head->next;
		d->pub.next = NULL;
		rte_spinlock_lock(&d->pool->free_lock);
		d->pool->free[d->pool->free_top++] = d;
		rte_spinlock_unlock(&d->pool->free_lock);
	}
}

void sg_rxpool_publish(struct sg_rxpool *pool, struct sg_msg_desc *head)
{
	/* Cannot fail: the ring has room for every descriptor. */
	rte_ring_sp_enqueue(pool->ready, head);
}

unsigned int sg_recv(struct sg_ep *ep, struct sg_msg_desc **msgs,
		     unsigned int n)
{
	return rte_ring_sc_dequeue_burst(ep->rx.ready, (void **)msgs, n,
					 NULL);
}

void sg_msg_release(struct sg_msg_desc *msg)
{
	sg_rxpool_put_chain(msg);
}
