/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sctp_dpdk_rma.c - put and get emulated over SCTP messages, and the
 * registration table every remote access is checked against.
 *
 * Initiator (an ep, in its iface's thread):
 *
 *   put_short/bcopy  one PUT message; complete at once (data copied by
 *                    usrsctp).  They make the ep "dirty": a later flush
 *                    sends a FLUSH request and waits for its ACK.
 *   put_zcopy        PUT messages of at most SEG_SIZE - 56 bytes of data on
 *                    the ep's (ordered) stream; the last asks for an ACK,
 *                    which the target sends after writing it, so the
 *                    completion means "written at the target" (an explicit
 *                    ack rather than SCTP's SACK: simpler, and stronger).
 *   get_bcopy/zcopy  one GET_REQ; the target answers with GET_REP messages
 *                    on the same stream, or on the one the request names
 *                    (reply_stream: with the stream map on, the stream a
 *                    rendezvous RTS offering that buffer came on, so the
 *                    bulk data of independent messages do not queue
 *                    behind each other's losses; such a request goes on
 *                    that stream too, not the ep's); the reply data is
 *                    copied (zcopy) or unpacked (bcopy) into the caller's
 *                    buffer from this iface's RX queue, then the
 *                    completion runs.  Each reply names its op and
 *                    offset, so replies on any stream are placed right.
 *   flush            UCS_OK when the ep has no op outstanding and no put
 *                    unacknowledged; otherwise a FLUSH request (after all
 *                    earlier messages on the stream) whose ACK completes
 *                    it.  The ep's flush waits until no op issued before
 *                    it is left (every GET's last reply in; ops are
 *                    numbered, sctp_dpdk_flush.c), so a FLUSH ACK that
 *                    overtakes GET replies on another stream completes
 *                    nothing early.  AM flush markers are FLUSH requests
 *                    too, on any stream the ep's AMs used.
 *
 *   op record: table slot + cookie travel in the request and come back in
 *   every reply, so a stale or forged reply never reaches a freed op.
 *   Ops whose messages do not all fit into the send buffer (16 MiB puts,
 *   sg_send -EAGAIN) wait on iface->rma_txq, in order, and continue from
 *   iface progress; later RMA ops of that ep queue behind them.
 *
 * Target (the shared poll loop, ctx->lock held; no AM handler runs):
 *
 *   PUT      check, then memcpy straight from the receive buffer into the
 *            registered memory; ACK if asked
 *   GET_REQ  check, then GET_REP messages read from the registered memory
 *            (by reference from TX_ZCOPY_MIN bytes on: sctp_dpdk_getzc.c
 *            keeps the memory from going while usrsctp reads it, and a
 *            PUT over bytes still referenced waits, see "Order" there)
 *   FLUSH    ACK
 *
 *   Requests are served in arrival order and their replies sent at once,
 *   so a GET reads the memory before any PUT sent after it is written.
 *   A reply that does not fit into the send buffer waits in
 *   ctx->rma_replyq, and every request arriving meanwhile waits behind it
 *   (in its receive buffer), served from the poll loop as the buffer
 *   drains; so a FLUSH ACK never overtakes the GET_REP data before it.
 *   Any other message (AM, reply) of an association with a waiting entry
 *   waits there too and goes on to its iface in order: an AM never
 *   reaches its handler before a PUT sent ahead of it is written.
 *   Requests served at once do run ahead of AMs that the poll loop has
 *   already queued for an iface but its worker has not yet handled: UCT
 *   orders delivery, not handler execution (ucx-tl/README.md, "RMA
 *   ordering").
 *
 * Access check: every PUT and GET_REP message is checked against the
 * process's registration table: the key names a live registration and the
 * WHOLE operation [addr, addr + length) lies inside it.  Anything else is
 * refused without touching memory, counted (ctx->rma_refused, in the STATS
 * JSON as "rma") and logged once with the peer's address; requests that
 * expect a reply get one with status UCS_ERR_INVALID_ADDR.  The table's
 * read lock is held across the copy, so a concurrent deregistration waits.
 * Keys are salt << 32 | a number never reused, so a deregistered key (or
 * one of an earlier process) never matches again.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sctp_dpdk.h"
#include "sctp_dpdk_ucx_compat.h"

#include <uct/base/uct_iov.inl>

#include <ucs/datastruct/khash.h>
#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>

#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define UCT_SCTP_DPDK_RMA_OPS_INIT 256 /* initial op table slots */
#define UCT_SCTP_DPDK_RMA_MP_GROW 64   /* op/reply records per chunk */
/* RX_DIRECT peeks while GETs wait for replies, and for this long after a
 * PUT of at least UCT_SCTP_DPDK_RMA_PEEK_PUT_BYTES came (a PUT target
 * cannot know one is coming) */
#define UCT_SCTP_DPDK_RMA_PEEK_PUT_MS 10
#define UCT_SCTP_DPDK_RMA_PEEK_PUT_BYTES 4096

typedef struct uct_sctp_dpdk_rma_op uct_sctp_dpdk_rma_op_t;

/* RX_DIRECT: (iface id << 32 | op slot) -> GET op, in ctx->rma_place */
KHASH_MAP_INIT_INT64(uct_sctp_dpdk_rma_place, uct_sctp_dpdk_rma_op_t *)

/* ---- registration table (process-wide) ---- */

typedef struct uct_sctp_dpdk_rma_region {
	uint64_t addr;	 /* start */
	uint64_t length; /* bytes */
} uct_sctp_dpdk_rma_region_t;

KHASH_MAP_INIT_INT64(uct_sctp_dpdk_rma_reg, uct_sctp_dpdk_rma_region_t)

static struct {
	pthread_rwlock_t lock;			 /* table; read: accesses */
	khash_t(uct_sctp_dpdk_rma_reg) regions; /* key -> region */
	uint32_t salt;				 /* per process, nonzero */
	uint32_t next;				 /* last number given */
} uct_sctp_dpdk_rma_reg = {.lock = PTHREAD_RWLOCK_INITIALIZER};

ucs_status_t uct_sctp_dpdk_rma_reg_add(void *address, size_t length,
				       uct_sctp_dpdk_rkey_t *rkey)
{
	struct timespec ts;
	uint64_t key;
	khiter_t it;
	int ret;

	pthread_rwlock_wrlock(&uct_sctp_dpdk_rma_reg.lock);
	if (uct_sctp_dpdk_rma_reg.salt == 0) {
		clock_gettime(CLOCK_REALTIME, &ts);
		uct_sctp_dpdk_rma_reg.salt =
			((uint32_t)getpid() * 2654435761u) ^
			(uint32_t)ts.tv_nsec ^ (uint32_t)ts.tv_sec;
		if (uct_sctp_dpdk_rma_reg.salt == 0)
			uct_sctp_dpdk_rma_reg.salt = 1;
	}
	if (uct_sctp_dpdk_rma_reg.next == UINT32_MAX) {
		pthread_rwlock_unlock(&uct_sctp_dpdk_rma_reg.lock);
		ucs_error("sctp_dpdk: %u memory registrations made in this "
			  "process: keys exhausted", UINT32_MAX);
		return UCS_ERR_EXCEEDS_LIMIT;
	}
	key = ((uint64_t)uct_sctp_dpdk_rma_reg.salt << 32) |
	      ++uct_sctp_dpdk_rma_reg.next;
	it = kh_put(uct_sctp_dpdk_rma_reg, &uct_sctp_dpdk_rma_reg.regions, key,
		    &ret);
	if (ret < 0) {
		pthread_rwlock_unlock(&uct_sctp_dpdk_rma_reg.lock);
		ucs_error("sctp_dpdk: no memory for the registration table");
		return UCS_ERR_NO_MEMORY;
	}
	kh_val(&uct_sctp_dpdk_rma_reg.regions, it).addr = (uintptr_t)address;
	kh_val(&uct_sctp_dpdk_rma_reg.regions, it).length = length;
	pthread_rwlock_unlock(&uct_sctp_dpdk_rma_reg.lock);
	rkey->addr = rte_cpu_to_be_64((uintptr_t)address);
	rkey->length = rte_cpu_to_be_64(length);
	rkey->key = rte_cpu_to_be_64(key);
	return UCS_OK;
}

void uct_sctp_dpdk_rma_reg_remove(const uct_sctp_dpdk_rkey_t *rkey)
{
	khiter_t it;

	/* The write lock waits for accesses copying from/to the region. */
	pthread_rwlock_wrlock(&uct_sctp_dpdk_rma_reg.lock);
	it = kh_get(uct_sctp_dpdk_rma_reg, &uct_sctp_dpdk_rma_reg.regions,
		    rte_be_to_cpu_64(rkey->key));
	if (it != kh_end(&uct_sctp_dpdk_rma_reg.regions))
		kh_del(uct_sctp_dpdk_rma_reg, &uct_sctp_dpdk_rma_reg.regions,
		       it);
	else
		ucs_warn("sctp_dpdk: deregistering unknown key 0x%" PRIx64,
			 rte_be_to_cpu_64(rkey->key));
	pthread_rwlock_unlock(&uct_sctp_dpdk_rma_reg.lock);
}

/* Whether [addr, addr + length) lies inside the live registration @key;
 * on success the table stays read-locked until access_end(). */
static int uct_sctp_dpdk_rma_access_begin(uint64_t key, uint64_t addr,
					  uint64_t length)
{
	const uct_sctp_dpdk_rma_region_t *r;
	khiter_t it;

	pthread_rwlock_rdlock(&uct_sctp_dpdk_rma_reg.lock);
	it = kh_get(uct_sctp_dpdk_rma_reg, &uct_sctp_dpdk_rma_reg.regions,
		    key);
	if (it != kh_end(&uct_sctp_dpdk_rma_reg.regions)) {
		r = &kh_val(&uct_sctp_dpdk_rma_reg.regions, it);
		/* No overflow: each step subtracts only what is checked. */
		if (addr >= r->addr && length <= r->length &&
		    addr - r->addr <= r->length - length)
			return 1;
	}
	pthread_rwlock_unlock(&uct_sctp_dpdk_rma_reg.lock);
	return 0;
}

static void uct_sctp_dpdk_rma_access_end(void)
{
	pthread_rwlock_unlock(&uct_sctp_dpdk_rma_reg.lock);
}

/* Count a refused access (ctx->lock held); log the first one. */
static void uct_sctp_dpdk_rma_refuse(uct_sctp_dpdk_ctx_t *ctx,
				     sg_assoc_t assoc, const char *what,
				     uint64_t key, uint64_t addr,
				     uint64_t length)
{
	uct_sctp_dpdk_peer_t *peer;
	char ip[24] = "this process";
	uint16_t port = ctx->sctp_port;

	if (ctx->rma_refused++ != 0)
		return;
	if (assoc != 0) {
		snprintf(ip, sizeof(ip), "assoc %u", assoc);
		port = 0;
		ucs_list_for_each(peer, &ctx->peers, list) {
			if (peer->state != UCT_SCTP_DPDK_PEER_IDLE &&
			    peer->assoc == assoc && peer->sg == ctx->rx_sg) {
				dp_ip_str(peer->ip_be, ip, sizeof(ip));
				port = peer->sctp_port;
				break;
			}
		}
	}
	ucs_warn("sctp_dpdk: refused a remote %s from %s:%u: key 0x%" PRIx64
		 " address 0x%" PRIx64 " length %" PRIu64 " is not inside a "
		 "live registration of this process (further refusals are "
		 "counted: " UCT_SCTP_DPDK_ENV "STATS=y)", what, ip, port, key,
		 addr, length);
}

/* ---- target: requests from the poll loop, replies in order ---- */

typedef struct uct_sctp_dpdk_rma_reply {
	ucs_queue_elem_t queue;	 /* in ctx->rma_replyq */
	struct sg_msg_desc *deferred; /* non-NULL: a request to serve */
	sg_assoc_t assoc;	 /* requester's association */
	struct sg_ep *sg;	 /* ... on this lane's endpoint */
	uint16_t stream;	 /* the request's stream */
	uint16_t dst_iface_id;	 /* requester's iface */
	uint16_t src_iface_id;	 /* the iface the request named */
	uint8_t kind;		 /* ACK or GET_REP */
	int32_t status;		 /* UCS_OK or the refusal */
	uint64_t key, addr, length; /* GET: the range to send */
	uint64_t offset;	 /* GET: bytes sent so far */
	uint32_t op_slot, op_cookie;
	uint64_t chunk;		 /* GET: data bytes per message; 0 = not
				  * yet known (rma_chunk_bytes) */
} uct_sctp_dpdk_rma_reply_t;

static ucs_mpool_ops_t uct_sctp_dpdk_rma_mp_ops = {
	.chunk_alloc = ucs_mpool_chunk_malloc,
	.chunk_release = ucs_mpool_chunk_free,
	.obj_init = NULL,
	.obj_cleanup = NULL,
	.obj_str = NULL,
};

static void uct_sctp_dpdk_rma_hdrs_fill(uint8_t *buf, uint8_t kind,
					uint8_t flags, uint16_t dst_iface_id,
					uint16_t src_iface_id, uint64_t key,
					uint64_t addr, uint64_t length,
					uint64_t offset, uint32_t slot,
					uint32_t cookie, int32_t status)
{
	uct_sctp_dpdk_am_hdr_t *hdr = (uct_sctp_dpdk_am_hdr_t *)buf;
	uct_sctp_dpdk_rma_hdr_t *rh = (uct_sctp_dpdk_rma_hdr_t *)(hdr + 1);

	hdr->am_id = kind;
	hdr->flags = UCT_SCTP_DPDK_HDR_FLAG_RMA | flags;
	hdr->dst_iface_id = rte_cpu_to_be_16(dst_iface_id);
	hdr->src_iface_id = rte_cpu_to_be_16(src_iface_id);
	/* RMA replies are matched to their op by slot and cookie, which a
	 * later incarnation at the same address never issued: the receiver's
	 * incarnation check applies to AMs only. */
	hdr->dst_incarnation = 0;
	rh->key = rte_cpu_to_be_64(key);
	rh->addr = rte_cpu_to_be_64(addr);
	rh->length = rte_cpu_to_be_64(length);
	rh->offset = rte_cpu_to_be_64(offset);
	rh->op_slot = rte_cpu_to_be_32(slot);
	rh->op_cookie = rte_cpu_to_be_32(cookie);
	rh->status = rte_cpu_to_be_32((uint32_t)-status);
	rh->reply_stream = 0;
	rh->reserved = 0;
}

static ucs_status_t uct_sctp_dpdk_rma_ctx_init(uct_sctp_dpdk_ctx_t *ctx)
{
	ucs_status_t status;

	ucs_queue_head_init(&ctx->rma_replyq);
	status = uct_sctp_dpdk_compat_mpool_init(&ctx->rma_reply_mp,
				sizeof(uct_sctp_dpdk_rma_reply_t), 0, 8,
				UCT_SCTP_DPDK_RMA_MP_GROW, UINT_MAX,
				&uct_sctp_dpdk_rma_mp_ops, "sctp_dpdk rma reply");
	if (status != UCS_OK)
		return status;
	ctx->rma_reply_mp_ready = 1;
	return UCS_OK;
}

/*
 * Zero-copy PUT data (sg_send_zc).  The done function runs in the poll
 * loop (sg_poll, ctx->lock held) and may outlive the op (ep destroyed,
 * cancelled) and the iface: it carries slot, cookie and iface id, and
 * goes on the iface's rma_zcq only while that iface is in ctx->ifaces
 * (removed under ctx->lock before its queue is emptied at close).
 */
typedef struct uct_sctp_dpdk_rma_zc {
	ucs_queue_elem_t elem;
	uct_sctp_dpdk_ctx_t *ctx;
	uint16_t iface_id;
	uint32_t slot, cookie;
	int status;
} uct_sctp_dpdk_rma_zc_t;
/* A record of the device's spares (reused after its completion, not a
 * malloc and free per message for a bulk sender), else malloc'd;
 * NULL without memory.  They number at most the messages in flight at
 * the peak.  Caller holds ctx->lock. */
static uct_sctp_dpdk_rma_zc_t *uct_sctp_dpdk_rma_zc_get(uct_sctp_dpdk_ctx_t *ctx)
{
	ucs_queue_elem_t *e = ctx->rma_zc_spare;
	uct_sctp_dpdk_rma_zc_t *zc;

	if (e != NULL) {
		ctx->rma_zc_spare = e->next;
		return ucs_container_of(e, uct_sctp_dpdk_rma_zc_t, elem);
	}
	zc = ucs_malloc(sizeof(*zc), "sctp_dpdk zcopy put");
	if (zc != NULL)
		ctx->rma_zc_mallocs++;
	return zc;
}

/* Back to the spares.  Caller holds ctx->lock. */
static void uct_sctp_dpdk_rma_zc_put(uct_sctp_dpdk_ctx_t *ctx,
				     uct_sctp_dpdk_rma_zc_t *zc)
{
	zc->elem.next = ctx->rma_zc_spare;
	ctx->rma_zc_spare = &zc->elem;
}

/* Freed, not kept (the iface went, or the device is cleaned up). */
static void uct_sctp_dpdk_rma_zc_free(uct_sctp_dpdk_ctx_t *ctx,
				      uct_sctp_dpdk_rma_zc_t *zc)
{
	(void)ctx;
	ucs_free(zc);
}

static void uct_sctp_dpdk_rma_zc_spare_free(uct_sctp_dpdk_ctx_t *ctx)
{
	ucs_queue_elem_t *e;

	while ((e = ctx->rma_zc_spare) != NULL) {
		ctx->rma_zc_spare = e->next;
		uct_sctp_dpdk_rma_zc_free(
			ctx, ucs_container_of(e, uct_sctp_dpdk_rma_zc_t, elem));
	}
}

void uct_sctp_dpdk_rma_ctx_cleanup(uct_sctp_dpdk_ctx_t *ctx)
{
	uct_sctp_dpdk_rma_reply_t *r;

	if (ctx->rma_place != NULL) {
		kh_destroy(uct_sctp_dpdk_rma_place,
			   (khash_t(uct_sctp_dpdk_rma_place) *)ctx->rma_place);
		ctx->rma_place = NULL;
	}
	uct_sctp_dpdk_rma_zc_spare_free(ctx);
	if (!ctx->rma_reply_mp_ready)
		return;
	while (!ucs_queue_is_empty(&ctx->rma_replyq)) {
		r = ucs_queue_pull_elem_non_empty(
			&ctx->rma_replyq, uct_sctp_dpdk_rma_reply_t, queue);
		if (r->deferred != NULL)
			sg_msg_release(r->deferred);
		ucs_mpool_put(r);
	}
	ucs_mpool_cleanup(&ctx->rma_reply_mp, 1);
	ctx->rma_reply_mp_ready = 0;
}

static uct_sctp_dpdk_rma_reply_t *
uct_sctp_dpdk_rma_reply_get(uct_sctp_dpdk_ctx_t *ctx)
{
	uct_sctp_dpdk_rma_reply_t *r;

	if (!ctx->rma_reply_mp_ready && uct_sctp_dpdk_rma_ctx_init(ctx) != UCS_OK)
		goto err;
	r = ucs_mpool_get(&ctx->rma_reply_mp);
	if (r == NULL)
		goto err;
	r->deferred = NULL;
	return r;
err:
	/* The requester's op stays outstanding; its flush reports it. */
	ucs_error("sctp_dpdk: no memory for an RMA reply: dropped");
	return NULL;
}

/* Data bytes per PUT or GET_REP message on @assoc: the largest whole
 * number of full packets (sg_assoc_frag_bytes) that SEG_SIZE holds, less
 * the headers.  A SEG_SIZE message of 65536 bytes left as 2 packets of
 * 63944 and 1592 bytes at MTU 64000 (3 of 31944, 31944, 1648 at 32000):
 * the small one costs as much in the port (one kernel trip per af_packet
 * frame) and in SACKs as a full one.  RMA_WHOLE_PACKETS=n: SEG_SIZE
 * messages (for comparison).  RMA_SACK_LAST (the callers): only an op's
 * last message asks for its SACK at once (SG_SEND_MORE before it), so
 * 1-packet messages are SACKed every second packet too.  Caller holds
 * ctx->lock. */
static uint64_t uct_sctp_dpdk_rma_chunk_bytes(const uct_sctp_dpdk_ctx_t *ctx,
					      struct sg_ep *sg,
					      sg_assoc_t assoc)
{
	uint64_t msg = ctx->seg_bytes;
	int frag = ctx->rma_whole_packets ? sg_assoc_frag_bytes(sg, assoc) : 0;

	if (frag > 0 && msg / (uint64_t)frag * (uint64_t)frag >
				2 * UCT_SCTP_DPDK_RMA_HDRS_BYTES)
		msg = msg / (uint64_t)frag * (uint64_t)frag;
	return msg - UCT_SCTP_DPDK_RMA_HDRS_BYTES;
}

/* Send (the rest of) one reply.  @return 0 done, -EAGAIN come back. */
static int uct_sctp_dpdk_rma_reply_send(uct_sctp_dpdk_ctx_t *ctx,
					uct_sctp_dpdk_rma_reply_t *r)
{
	uint8_t hdrs[UCT_SCTP_DPDK_RMA_HDRS_BYTES];
	struct iovec iov[2];
	uint32_t flags;
	uint64_t n;
	int rc;

	/* once per reply, not per retry under back-pressure */
	if (r->chunk == 0)
		r->chunk = uct_sctp_dpdk_rma_chunk_bytes(ctx, r->sg, r->assoc);
	do {
		n = 0;
		iov[0].iov_base = hdrs;
		iov[0].iov_len = sizeof(hdrs);
		if (r->status == UCS_OK && r->kind == UCT_SCTP_DPDK_RMA_GET_REP) {
			if (!uct_sctp_dpdk_rma_access_begin(r->key, r->addr,
							    r->length)) {
				/* Deregistered while being read. */
				uct_sctp_dpdk_rma_refuse(ctx, r->assoc, "get",
							 r->key, r->addr,
							 r->length);
				r->status = UCS_ERR_INVALID_ADDR;
			} else {
				/* a GET that one SEG_SIZE message holds gets
				 * one reply (get_bcopy unpacks exactly one) */
				n = r->length <= ctx->seg_bytes -
						UCT_SCTP_DPDK_RMA_HDRS_BYTES ?
					    r->length :
					    ucs_min(r->chunk,
						    r->length - r->offset);
			}
		}
		uct_sctp_dpdk_rma_hdrs_fill(hdrs, r->kind, 0, r->dst_iface_id,
					    r->src_iface_id, 0, r->addr,
					    r->length, r->offset, r->op_slot,
					    r->op_cookie, r->status);
		iov[1].iov_base = (void *)(uintptr_t)(r->addr + r->offset);
		iov[1].iov_len = n;
		/* only the reply's last message asks for its SACK at once */
		flags = ctx->rma_sack_last && n > 0 &&
				r->offset + n < r->length ?
			SG_SEND_MORE : 0;
		/* TX_ZCOPY_MIN: by reference, the region held until usrsctp
		 * lets go (sctp_dpdk_getzc.c); else copied by usrsctp */
		if (n > 0 && ctx->get_zcopy_min != 0 &&
		    r->length >= ctx->get_zcopy_min) {
			rc = uct_sctp_dpdk_getzc_send(ctx, r->sg, r->assoc,
						      r->stream, flags, r->key,
						      iov);
		} else {
			rc = sg_send(r->sg, r->assoc, r->stream, flags, 0, iov,
				     n > 0 ? 2 : 1);
			if (rc == 0)
				ctx->rma_rep_copy_bytes += n;
		}
		if (n > 0)
			uct_sctp_dpdk_rma_access_end();
		if (rc == -EAGAIN)
			return -EAGAIN;
		if (rc != 0) {
			/* The association went: the requester's ep fails. */
			ucs_debug("sctp_dpdk: rma reply on assoc %u dropped: "
				  "%s", r->assoc, strerror(-rc));
			return 0;
		}
		if (r->kind == UCT_SCTP_DPDK_RMA_GET_REP &&
		    r->stream < ctx->smap.streams)
			ctx->smap.rep_msgs[r->stream]++;
		r->offset += n;
	} while (r->kind == UCT_SCTP_DPDK_RMA_GET_REP &&
		 r->status == UCS_OK && r->offset < r->length);
	return 0;
}

/* The stream of @msg's replies of @kind: a GET_REQ may name one (its
 * rendezvous' RTS came on it, sctp_dpdk_stream.c); anything else, and a
 * stream this association does not have, answers on the request's stream.
 * Legal for any stream: the request is served (its memory read) in the
 * order it arrived on its own stream (the ep's, or for a rendezvous GET
 * its RTS's: uct_sctp_dpdk_rma_get_stream says why that may); only the
 * delivery of its data may overtake later replies; the initiator matches
 * each reply to its op by slot and offset, and its flush waits for every
 * op (uct_sctp_dpdk_rma_ep_flush). */
static uint16_t uct_sctp_dpdk_rma_reply_stream(const uct_sctp_dpdk_ctx_t *ctx,
					       const struct sg_msg_desc *msg,
					       const uct_sctp_dpdk_rma_hdr_t *rh,
					       uint8_t kind)
{
	uint16_t s = rte_be_to_cpu_16(rh->reply_stream);

	if (kind == UCT_SCTP_DPDK_RMA_GET_REP && s != 0 && s < ctx->streams)
		return s;
	return msg->stream;
}

/* Answer @msg's request now; what does not fit into the send buffer waits
 * at the HEAD of the queue, so nothing behind it overtakes it.
 * @return 0, or -EAGAIN when a reply had to wait. */
static int uct_sctp_dpdk_rma_reply(uct_sctp_dpdk_ctx_t *ctx,
				   const struct sg_msg_desc *msg,
				   const uct_sctp_dpdk_am_hdr_t *hdr,
				   const uct_sctp_dpdk_rma_hdr_t *rh,
				   uint8_t kind, ucs_status_t status)
{
	uct_sctp_dpdk_rma_reply_t *r = uct_sctp_dpdk_rma_reply_get(ctx);

	if (r == NULL)
		return 0;
	r->assoc = msg->assoc;
	r->sg = ctx->rx_sg;
	r->stream = uct_sctp_dpdk_rma_reply_stream(ctx, msg, rh, kind);
	r->dst_iface_id = rte_be_to_cpu_16(hdr->src_iface_id);
	r->src_iface_id = rte_be_to_cpu_16(hdr->dst_iface_id);
	r->kind = kind;
	r->status = status;
	r->key = rte_be_to_cpu_64(rh->key);
	r->addr = rte_be_to_cpu_64(rh->addr);
	r->length = rte_be_to_cpu_64(rh->length);
	r->offset = 0;
	r->chunk = 0;
	r->op_slot = rte_be_to_cpu_32(rh->op_slot);
	r->op_cookie = rte_be_to_cpu_32(rh->op_cookie);
	if (uct_sctp_dpdk_rma_reply_send(ctx, r) == 0) {
		ucs_mpool_put(r);
		return 0;
	}
	ucs_queue_push_head(&ctx->rma_replyq, &r->queue);
	return -EAGAIN;
}

/* Serve one request in arrival order: a GET reads the memory when it is
 * served, so a PUT sent after it (osc's get-then-put of
 * MPI_Get_accumulate(REPLACE)) never shows in its reply.  The message is
 * released.  @return 0, or -EAGAIN when its reply waits. */
static int uct_sctp_dpdk_rma_serve(uct_sctp_dpdk_ctx_t *ctx,
				   struct sg_msg_desc *msg)
{
	const uct_sctp_dpdk_am_hdr_t *hdr =
		(const uct_sctp_dpdk_am_hdr_t *)msg->data;
	const uct_sctp_dpdk_rma_hdr_t *rh =
		(const uct_sctp_dpdk_rma_hdr_t *)(hdr + 1);
	uint64_t key, addr, length, offset, data_len;
	ucs_status_t status = UCS_OK;
	int rc = 0;

	if (ucs_unlikely(msg->len < UCT_SCTP_DPDK_RMA_HDRS_BYTES)) {
		uct_sctp_dpdk_rma_refuse(ctx, msg->assoc, "request (short)",
					 0, 0, msg->len);
		goto out;
	}
	key = rte_be_to_cpu_64(rh->key);
	addr = rte_be_to_cpu_64(rh->addr);
	length = rte_be_to_cpu_64(rh->length);
	offset = rte_be_to_cpu_64(rh->offset);
	/* Placed: the data were written when they were read (the access
	 * checked first, uct_sctp_dpdk_rma_place); msg holds the headers. */
	data_len = ((msg->flags & SG_MSG_PLACED) ? msg->msg_len : msg->len) -
		   UCT_SCTP_DPDK_RMA_HDRS_BYTES;
	switch (hdr->am_id) {
	case UCT_SCTP_DPDK_RMA_PUT:
		if (ctx->rx_direct &&
		    data_len >= UCT_SCTP_DPDK_RMA_PEEK_PUT_BYTES)
			ctx->rma_put_peek_until_tsc =
				dp_tsc() + dp_tsc_hz() *
						   UCT_SCTP_DPDK_RMA_PEEK_PUT_MS /
						   1000;
		if (msg->flags & SG_MSG_PLACED) {
			if (!(msg->flags & SG_MSG_DISCARDED) &&
			    offset <= length && data_len <= length - offset) {
				ctx->rma_put_msgs++;
			} else {
				uct_sctp_dpdk_rma_refuse(ctx, msg->assoc,
							 "put", key, addr,
							 length);
				status = UCS_ERR_INVALID_ADDR;
			}
		} else if (offset <= length && data_len <= length - offset &&
		    uct_sctp_dpdk_rma_access_begin(key, addr, length)) {
			memcpy((void *)(uintptr_t)(addr + offset), rh + 1,
			       data_len);
			uct_sctp_dpdk_rma_access_end();
			ctx->rma_put_msgs++;
			ctx->rma_put_copy_bytes += data_len;
		} else {
			uct_sctp_dpdk_rma_refuse(ctx, msg->assoc, "put", key,
						 addr, length);
			status = UCS_ERR_INVALID_ADDR;
		}
		if (hdr->flags & UCT_SCTP_DPDK_HDR_FLAG_ACK)
			rc = uct_sctp_dpdk_rma_reply(ctx, msg, hdr, rh,
						     UCT_SCTP_DPDK_RMA_ACK,
						     status);
		break;
	case UCT_SCTP_DPDK_RMA_GET_REQ:
		/* Checked here and again for every reply message (the
		 * region may go before the last one is sent). */
		if (msg->stream < ctx->smap.streams &&
		    ctx->smap.req_msgs != NULL)
			ctx->smap.req_msgs[msg->stream]++;
		if (uct_sctp_dpdk_rma_access_begin(key, addr, length)) {
			uct_sctp_dpdk_rma_access_end();
			ctx->rma_get_reqs++;
		} else {
			uct_sctp_dpdk_rma_refuse(ctx, msg->assoc, "get", key,
						 addr, length);
			status = UCS_ERR_INVALID_ADDR;
		}
		rc = uct_sctp_dpdk_rma_reply(ctx, msg, hdr, rh,
					     UCT_SCTP_DPDK_RMA_GET_REP, status);
		break;
	case UCT_SCTP_DPDK_RMA_FLUSH:
		rc = uct_sctp_dpdk_rma_reply(ctx, msg, hdr, rh,
					     UCT_SCTP_DPDK_RMA_ACK, UCS_OK);
		break;
	default:
		uct_sctp_dpdk_rma_refuse(ctx, msg->assoc, "request (kind)",
					 key, addr, length);
		break;
	}
out:
	sg_msg_release(msg);
	return rc;
}

/* Whether @msg is a request (served by this process as the target). */
static UCS_F_ALWAYS_INLINE int
uct_sctp_dpdk_rma_is_request(const struct sg_msg_desc *msg)
{
	const uct_sctp_dpdk_am_hdr_t *hdr =
		(const uct_sctp_dpdk_am_hdr_t *)msg->data;

	return (hdr->flags & UCT_SCTP_DPDK_HDR_FLAG_RMA) &&
	       hdr->am_id < UCT_SCTP_DPDK_RMA_ACK;
}

/* Whether a reply to, or a request from, @assoc waits in ctx->rma_replyq
 * (not empty; a slow path).  Per association, not per stream: an iface
 * fence orders the ops of every ep of the iface, and two eps to one peer
 * process use two streams of its association. */
static int uct_sctp_dpdk_rma_assoc_waits(uct_sctp_dpdk_ctx_t *ctx,
					 sg_assoc_t assoc)
{
	uct_sctp_dpdk_rma_reply_t *r;

	ucs_queue_for_each(r, &ctx->rma_replyq, queue) {
		if (r->assoc == assoc && r->sg == ctx->rx_sg)
			return 1;
	}
	return 0;
}

/* Whether @msg, a request, is a PUT whose data would overwrite bytes a
 * zero-copy GET reply still references (sctp_dpdk_getzc.c, "Order"): it
 * then waits in ctx->rma_replyq. */
static int uct_sctp_dpdk_rma_put_blocked(const struct sg_msg_desc *msg)
{
	const uct_sctp_dpdk_am_hdr_t *hdr =
		(const uct_sctp_dpdk_am_hdr_t *)msg->data;
	const uct_sctp_dpdk_rma_hdr_t *rh =
		(const uct_sctp_dpdk_rma_hdr_t *)(hdr + 1);
	uint64_t addr;

	if (ucs_likely(uct_sctp_dpdk_getzc_held() == 0) ||
	    hdr->am_id != UCT_SCTP_DPDK_RMA_PUT ||
	    (msg->flags & SG_MSG_PLACED) ||
	    msg->len < UCT_SCTP_DPDK_RMA_HDRS_BYTES)
		return 0;
	addr = rte_be_to_cpu_64(rh->addr) + rte_be_to_cpu_64(rh->offset);
	return uct_sctp_dpdk_getzc_busy(addr, msg->len -
						      UCT_SCTP_DPDK_RMA_HDRS_BYTES);
}

int uct_sctp_dpdk_rma_rx_request(uct_sctp_dpdk_ctx_t *ctx,
				 struct sg_msg_desc *msg)
{
	uct_sctp_dpdk_rma_reply_t *r;
	int is_request = uct_sctp_dpdk_rma_is_request(msg);

	if (ucs_likely(!ctx->rma_reply_mp_ready ||
		       ucs_queue_is_empty(&ctx->rma_replyq))) {
		if (!is_request)
			return 0; /* a reply: to the initiator's iface */
		if (ucs_unlikely(uct_sctp_dpdk_rma_put_blocked(msg)))
			goto wait;
		uct_sctp_dpdk_rma_serve(ctx, msg);
		return 1;
	}
	/* A reply waits for send buffer: requests behind it wait too (in
	 * their receive buffer), or a PUT could overtake an earlier GET; and
	 * so does every later message of an association with a request or
	 * reply waiting, AMs and replies included: a PUT, fence, AM must not
	 * reach the AM handler before the PUT is written (UCT fence; UCP's
	 * fenced rndv ATP), nor an AM after a GET before the GET's data is
	 * read. */
	if (!is_request && !uct_sctp_dpdk_rma_assoc_waits(ctx, msg->assoc))
		return 0;
wait:
	r = uct_sctp_dpdk_rma_reply_get(ctx);
	if (r == NULL) {
		sg_msg_release(msg);
		return 1;
	}
	r->deferred = msg;
	r->assoc = msg->assoc;
	r->sg = ctx->rx_sg;
	r->stream = msg->stream;
	ucs_queue_push(&ctx->rma_replyq, &r->queue);
	return 1;
}

unsigned uct_sctp_dpdk_rma_reply_progress(uct_sctp_dpdk_ctx_t *ctx)
{
	uct_sctp_dpdk_rma_reply_t *r;
	struct sg_msg_desc *msg;
	unsigned count = 0;

	while (!ucs_queue_is_empty(&ctx->rma_replyq)) {
		r = ucs_queue_head_elem_non_empty(&ctx->rma_replyq,
						  uct_sctp_dpdk_rma_reply_t,
						  queue);
		if (r->deferred != NULL) {
			msg = r->deferred;
			if (uct_sctp_dpdk_rma_is_request(msg) &&
			    uct_sctp_dpdk_rma_put_blocked(msg))
				break; /* zero-copy GET replies read it */
			ctx->rx_sg = r->sg; /* the lane it came on */
			ucs_queue_pull_non_empty(&ctx->rma_replyq);
			ucs_mpool_put(r);
			count++;
			if (!uct_sctp_dpdk_rma_is_request(msg)) {
				/* an AM or a reply held in stream order */
				uct_sctp_dpdk_ctx_rx_deliver(ctx, msg);
				continue;
			}
			if (uct_sctp_dpdk_rma_serve(ctx, msg) != 0)
				break; /* its reply waits at the head */
			continue;
		}
		if (uct_sctp_dpdk_rma_reply_send(ctx, r) == -EAGAIN)
			break;
		ucs_queue_pull_non_empty(&ctx->rma_replyq);
		ucs_mpool_put(r);
		count++;
	}
	return count;
}

/* ---- initiator: op records ---- */

struct uct_sctp_dpdk_rma_op {
	ucs_queue_elem_t tx_elem;	/* in iface->rma_txq while queued */
	ucs_list_link_t ep_elem;	/* in ep->rma_ops */
	uct_sctp_dpdk_ep_t *ep;
	uct_completion_t *comp;		/* NULL: nobody waits (flush) */
	uint8_t kind;			/* PUT (zcopy), GET_REQ or FLUSH */
	uint8_t on_txq;
	uint8_t placed;			/* GET zcopy: in ctx->rma_place */
	uint8_t marker;			/* FLUSH behind AMs only (ep flush's
					 * marker): a SACK of it proves as
					 * much as its ACK */
	uint16_t reply_stream;		/* GET: for its replies; FLUSH: the
					 * stream it goes on; 0 = ep's */
	uint32_t slot, cookie;		/* echoed by the target */
	uint64_t seq;			/* ep->rma_op_seq when issued */
	uint64_t key, remote_addr, length;
	uint64_t tx_offset;		/* PUT: bytes sent; else 1 = sent */
	uint64_t chunk;			/* PUT: data bytes per message; 0 =
					 * not yet known (rma_chunk_bytes) */
	uint64_t rx_bytes;		/* GET: bytes received */
	uct_unpack_callback_t unpack_cb; /* get_bcopy */
	void *unpack_arg;
	/* PUT data sent by reference (TX_ZCOPY_MIN): messages whose bytes
	 * usrsctp or the port may still read; the op completes once the
	 * ACK came (zc_acked, with zc_status) and none is left */
	uint32_t zc_pending;
	uint8_t zc_acked;
	ucs_status_t zc_status;
	uct_sctp_dpdk_peer_t *orphan_peer; /* orphaned: its ep's peer */
	unsigned iovcnt;
	struct iovec iov[UCT_SCTP_DPDK_RMA_MAX_IOV]; /* local buffers */
};


/* Whether a reply that came on @sg's association @assoc may answer @op:
 * only the association its ep sends on (another peer, or another lane of
 * the same one, could otherwise write into or complete the op by
 * guessing its slot and cookie). */
static UCS_F_ALWAYS_INLINE int
uct_sctp_dpdk_rma_reply_from_peer(const uct_sctp_dpdk_rma_op_t *op,
				  const struct sg_ep *sg, sg_assoc_t assoc)
{
	const uct_sctp_dpdk_peer_t *peer = op->ep->peer;

	return peer != NULL && peer->sg == sg && peer->assoc == assoc;
}

/* ---- direct placement (RX_DIRECT) ----
 *
 * The poll loop reads the headers of every longer message first
 * (sg_ep_set_place, peek = UCT_SCTP_DPDK_RMA_HDRS_BYTES) and asks here
 * where the rest goes, before every read of it:
 *
 *   GET_REP  the op's buffer at the reply's offset, if the op is in
 *            ctx->rma_place (GET zcopy, added before its request leaves,
 *            removed under ctx->lock before it completes or is freed:
 *            ep destroy, cancel, iface close), so a vanished op is never
 *            written: sg discards the rest of its message
 *   PUT      the registered memory, after the same access check as
 *            serve(), read lock held until the read is done; only when
 *            no earlier message of this lane waits unserved (rx ring and
 *            reply queue empty), so a GET_REQ before it still reads the
 *            memory first
 *
 * The message then goes on as its headers alone (SG_MSG_PLACED):
 * serve() acknowledges the PUT, the iface counts the GET's bytes.
 * Peeking costs a second usrsctp_recvv for every message longer than the
 * headers, so a lane peeks only while GETs wait for replies or a large
 * PUT came in the last UCT_SCTP_DPDK_RMA_PEEK_PUT_MS
 * (uct_sctp_dpdk_rma_place_peek); the PUTs read before that are copied.
 */
static void *uct_sctp_dpdk_rma_place(void *arg, struct sg_ep *sg,
				     const struct sg_msg_desc *head,
				     uint32_t off, size_t *len_p)
{
	uct_sctp_dpdk_ctx_t *ctx = arg;
	const uct_sctp_dpdk_am_hdr_t *hdr =
		(const uct_sctp_dpdk_am_hdr_t *)head->data;
	const uct_sctp_dpdk_rma_hdr_t *rh =
		(const uct_sctp_dpdk_rma_hdr_t *)(hdr + 1);
	khash_t(uct_sctp_dpdk_rma_place) *map = ctx->rma_place;
	uct_sctp_dpdk_rma_op_t *op;
	uint64_t key, addr, length, doff;
	khiter_t it;
	unsigned i;
	int first;

	if (head->len != UCT_SCTP_DPDK_RMA_HDRS_BYTES ||
	    !(hdr->flags & UCT_SCTP_DPDK_HDR_FLAG_RMA) ||
	    off < UCT_SCTP_DPDK_RMA_HDRS_BYTES)
		return NULL;
	doff = rte_be_to_cpu_64(rh->offset);
	if (doff > UINT64_MAX - off)
		return NULL;
	doff += off - UCT_SCTP_DPDK_RMA_HDRS_BYTES; /* of the operation */
	first = off == head->len && !(head->flags & SG_MSG_PLACED);
	switch (hdr->am_id) {
	case UCT_SCTP_DPDK_RMA_GET_REP:
		if (map == NULL || rh->status != 0)
			return NULL;
		key = (uint64_t)rte_be_to_cpu_16(hdr->dst_iface_id) << 32 |
		      rte_be_to_cpu_32(rh->op_slot);
		it = kh_get(uct_sctp_dpdk_rma_place, map, key);
		if (it == kh_end(map))
			return NULL;
		op = kh_val(map, it);
		if (op->cookie != rte_be_to_cpu_32(rh->op_cookie) ||
		    doff >= op->length)
			return NULL;
		/* Only the association the request went on answers it:
		 * slot and cookie are guessable. */
		if (ucs_unlikely(!uct_sctp_dpdk_rma_reply_from_peer(
			    op, sg, head->assoc)))
			return NULL;
		for (i = 0; i < op->iovcnt; i++) {
			if (doff < op->iov[i].iov_len) {
				*len_p = op->iov[i].iov_len - doff;
				return UCS_PTR_BYTE_OFFSET(op->iov[i].iov_base,
							   doff);
			}
			doff -= op->iov[i].iov_len;
		}
		return NULL;
	case UCT_SCTP_DPDK_RMA_PUT:
		if (first && ((ctx->rma_reply_mp_ready &&
			       !ucs_queue_is_empty(&ctx->rma_replyq)) ||
			      sg_rx_pending(sg) != 0 ||
			      (uct_sctp_dpdk_getzc_held() != 0 &&
			       uct_sctp_dpdk_getzc_busy(
				       rte_be_to_cpu_64(rh->addr),
				       rte_be_to_cpu_64(rh->length)))))
			return NULL; /* serve() in order, from the copy */
		key = rte_be_to_cpu_64(rh->key);
		addr = rte_be_to_cpu_64(rh->addr);
		length = rte_be_to_cpu_64(rh->length);
		if (doff >= length ||
		    !uct_sctp_dpdk_rma_access_begin(key, addr, length))
			return NULL; /* serve() refuses it */
		*len_p = length - doff;
		return (void *)(uintptr_t)(addr + doff);
	default:
		return NULL;
	}
}

static void uct_sctp_dpdk_rma_place_done(void *arg,
					 const struct sg_msg_desc *head,
					 uint32_t off, size_t bytes)
{
	uct_sctp_dpdk_ctx_t *ctx = arg;
	const uct_sctp_dpdk_am_hdr_t *hdr =
		(const uct_sctp_dpdk_am_hdr_t *)head->data;

	(void)off;
	if (hdr->am_id == UCT_SCTP_DPDK_RMA_PUT) {
		uct_sctp_dpdk_rma_access_end();
		ctx->rma_put_direct_bytes += bytes;
	} else {
		ctx->rma_get_direct_bytes += bytes;
	}
}

ucs_status_t uct_sctp_dpdk_rma_place_enable(uct_sctp_dpdk_ctx_t *ctx)
{
	unsigned k;
	int rc;

	ctx->rma_place = kh_init(uct_sctp_dpdk_rma_place);
	if (ctx->rma_place == NULL) {
		ucs_error("sctp_dpdk: no memory for the RX_DIRECT table");
		return UCS_ERR_NO_MEMORY;
	}
	for (k = 0; k < ctx->nb_lanes; k++) {
		rc = sg_ep_set_place(ctx->lane_sg[k],
				     UCT_SCTP_DPDK_RMA_HDRS_BYTES,
				     uct_sctp_dpdk_rma_place,
				     uct_sctp_dpdk_rma_place_done, ctx);
		if (rc != 0) {
			ucs_error("sctp_dpdk: lane %u: cannot receive RMA data "
				  "directly (%s); " UCT_SCTP_DPDK_ENV
				  "RX_DIRECT=n turns it off", k,
				  strerror(-rc));
			return sdp_status_from_errno(rc);
		}
	}
	return UCS_OK;
}

/* Peeking costs a second usrsctp_recvv per message longer than the
 * headers (AMs too): only while something may be placed. */
void uct_sctp_dpdk_rma_place_peek(uct_sctp_dpdk_ctx_t *ctx, struct sg_ep *sg,
				  uint64_t now_tsc)
{
	khash_t(uct_sctp_dpdk_rma_place) *map = ctx->rma_place;

	sg_ep_place_peek(sg, map != NULL &&
				     (kh_size(map) != 0 ||
				      now_tsc < ctx->rma_put_peek_until_tsc));
}

/* A GET zcopy whose replies may be placed: before its request leaves. */
static void uct_sctp_dpdk_rma_place_add(uct_sctp_dpdk_iface_t *iface,
					uct_sctp_dpdk_rma_op_t *op)
{
	uct_sctp_dpdk_ctx_t *ctx = iface->ctx;
	khiter_t it;
	int ret;

	if (ctx->rma_place == NULL)
		return;
	ucs_recursive_spin_lock(ctx->lock);
	it = kh_put(uct_sctp_dpdk_rma_place, ctx->rma_place,
		    (uint64_t)iface->id << 32 | op->slot, &ret);
	if (ret >= 0) { /* else no memory: through descriptors */
		kh_val((khash_t(uct_sctp_dpdk_rma_place) *)ctx->rma_place,
		       it) = op;
		op->placed = 1;
	}
	ucs_recursive_spin_unlock(ctx->lock);
}

/* Under ctx->lock, so the poll loop is not writing into the op's buffer
 * now and never will again. */
static void uct_sctp_dpdk_rma_place_del(uct_sctp_dpdk_iface_t *iface,
					uct_sctp_dpdk_rma_op_t *op)
{
	uct_sctp_dpdk_ctx_t *ctx = iface->ctx;
	khiter_t it;

	ucs_recursive_spin_lock(ctx->lock);
	if (ctx->rma_place != NULL) {
		it = kh_get(uct_sctp_dpdk_rma_place, ctx->rma_place,
			    (uint64_t)iface->id << 32 | op->slot);
		if (it != kh_end((khash_t(uct_sctp_dpdk_rma_place) *)
					 ctx->rma_place))
			kh_del(uct_sctp_dpdk_rma_place, ctx->rma_place, it);
	}
	op->placed = 0;
	ucs_recursive_spin_unlock(ctx->lock);
}

static void uct_sctp_dpdk_rma_zc_purge(uct_sctp_dpdk_iface_t *iface);

ucs_status_t uct_sctp_dpdk_rma_iface_init(uct_sctp_dpdk_iface_t *iface)
{
	ucs_status_t status;

	ucs_queue_head_init(&iface->rma_txq);
	ucs_queue_head_init(&iface->rma_zcq);
	iface->rma_ops = ucs_calloc(UCT_SCTP_DPDK_RMA_OPS_INIT,
				    sizeof(*iface->rma_ops), "sctp_dpdk rma ops");
	if (iface->rma_ops == NULL) {
		ucs_error("sctp_dpdk: failed to allocate the RMA op table");
		return UCS_ERR_NO_MEMORY;
	}
	iface->rma_ops_size = UCT_SCTP_DPDK_RMA_OPS_INIT;
	iface->rma_free_slot = 0;
	status = uct_sctp_dpdk_compat_mpool_init(&iface->rma_op_mp,
				sizeof(uct_sctp_dpdk_rma_op_t), 0, 8,
				UCT_SCTP_DPDK_RMA_MP_GROW, UINT_MAX,
				&uct_sctp_dpdk_rma_mp_ops, "sctp_dpdk rma op");
	if (status != UCS_OK) {
		ucs_free(iface->rma_ops);
		return status;
	}
	iface->rma_ready = 1;
	return UCS_OK;
}

/* Orphaned ops of @iface (their ep destroyed while usrsctp still
 * references PUT data in the caller's buffer) whose references are not
 * all released; with @peers non-NULL, also their peers (up to @max). */
static unsigned uct_sctp_dpdk_rma_orphans(uct_sctp_dpdk_iface_t *iface,
					  uct_sctp_dpdk_peer_t **peers,
					  unsigned max, unsigned *n_p)
{
	uct_sctp_dpdk_rma_op_t *op;
	unsigned count = 0, k;
	uint32_t slot;

	for (slot = 0; slot < iface->rma_ops_size; slot++) {
		op = iface->rma_ops[slot];
		if (op == NULL || op->ep != NULL || op->zc_pending == 0)
			continue;
		count++;
		if (peers == NULL)
			continue;
		for (k = 0; k < *n_p && peers[k] != op->orphan_peer; k++)
			;
		if (k == *n_p && *n_p < max)
			peers[(*n_p)++] = op->orphan_peer;
	}
	return count;
}

/*
 * Before an iface goes: wait until usrsctp and the port release the PUT
 * data of its orphaned ops, and complete them (their completion reports
 * the buffer free, ep destroy's contract).  The associations live on in
 * the device context after the iface, so without the wait a
 * retransmission would read a buffer the caller frees after
 * uct_iface_close.  Bounded by DEREG_WAIT_MS; past it the associations
 * holding the data are aborted (memory a GET reply references is copied
 * instead, sctp_dpdk_getzc.c; these ops' data are not): a peer that has
 * not acknowledged for that long is lost rather than memory read after
 * it is gone.
 */
void uct_sctp_dpdk_rma_iface_release_orphans(uct_sctp_dpdk_iface_t *iface)
{
	uct_sctp_dpdk_peer_t *peers[UCT_SCTP_DPDK_RMA_ORPHAN_ABORTS];
	uct_sctp_dpdk_ctx_t *ctx = iface->ctx;
	uint64_t hz = dp_tsc_hz(), deadline;
	unsigned n = 0, k, count;
	int aborted = 0;

	if (ctx == NULL || !iface->rma_ready ||
	    uct_sctp_dpdk_rma_orphans(iface, NULL, 0, NULL) == 0)
		return;
	deadline = dp_tsc() + hz * ctx->dereg_wait_ms / 1000;
	for (;;) {
		uct_sctp_dpdk_rma_zc_progress(iface);
		count = uct_sctp_dpdk_rma_orphans(iface, NULL, 0, NULL);
		if (count == 0)
			return;
		if (!ctx->thread_on &&
		    !ucs_recursive_spin_is_owner(ctx->lock, pthread_self()) &&
		    ucs_recursive_spin_trylock(ctx->lock)) {
			uct_sctp_dpdk_ctx_poll_all();
			ucs_recursive_spin_unlock(ctx->lock);
		} else {
			sched_yield();
		}
		if (dp_tsc() < deadline)
			continue;
		if (aborted) {
			ucs_error("sctp_dpdk: iface %u closed while %u "
				  "cancelled put_zcopy still reference their "
				  "buffers after their associations were "
				  "aborted; the buffers may be read after they "
				  "are freed", iface->id, count);
			return;
		}
		n = 0;
		uct_sctp_dpdk_rma_orphans(iface, peers,
					  UCT_SCTP_DPDK_RMA_ORPHAN_ABORTS, &n);
		ucs_warn("sctp_dpdk: iface %u closing: %u cancelled "
			 "put_zcopy not acknowledged within "
			 UCT_SCTP_DPDK_ENV "DEREG_WAIT_MS=%u: aborting %u "
			 "association(s) so that nothing reads their buffers "
			 "after the close (raise " UCT_SCTP_DPDK_ENV
			 "DEREG_WAIT_MS, flush before closing, or "
			 UCT_SCTP_DPDK_ENV "TX_ZCOPY_MIN=0 to copy PUT data)",
			 iface->id, count, ctx->dereg_wait_ms, n);
		ucs_recursive_spin_lock(ctx->lock);
		for (k = 0; k < n; k++)
			if (peers[k]->state != UCT_SCTP_DPDK_PEER_IDLE)
				(void)sg_assoc_abort(peers[k]->sg,
						     peers[k]->assoc);
		ucs_recursive_spin_unlock(ctx->lock);
		aborted = 1;
		deadline = dp_tsc() + hz; /* the port's chained packets */
	}
}

void uct_sctp_dpdk_rma_iface_cleanup(uct_sctp_dpdk_iface_t *iface)
{
	uint32_t slot;

	if (!iface->rma_ready)
		return;
	uct_sctp_dpdk_rma_zc_purge(iface);
	/* Ops still live (eps not destroyed): out of the poll loop's reach
	 * before their memory goes. */
	for (slot = 0; slot < iface->rma_ops_size; slot++) {
		if (iface->rma_ops[slot] != NULL &&
		    iface->rma_ops[slot]->placed)
			uct_sctp_dpdk_rma_place_del(iface,
						    iface->rma_ops[slot]);
	}
	ucs_mpool_cleanup(&iface->rma_op_mp, 1);
	ucs_free(iface->rma_ops);
	iface->rma_ready = 0;
}

static uct_sctp_dpdk_rma_op_t *
uct_sctp_dpdk_rma_op_get(uct_sctp_dpdk_iface_t *iface, uct_sctp_dpdk_ep_t *ep,
			 uint8_t kind, uct_completion_t *comp)
{
	uct_sctp_dpdk_rma_op_t *op, **ops;
	uint32_t slot = iface->rma_free_slot;

	while (slot < iface->rma_ops_size && iface->rma_ops[slot] != NULL)
		slot++;
	if (ucs_unlikely(slot == iface->rma_ops_size)) {
		ops = ucs_realloc(iface->rma_ops,
				  2 * iface->rma_ops_size * sizeof(*ops),
				  "sctp_dpdk rma ops");
		if (ops == NULL)
			return NULL;
		memset(ops + iface->rma_ops_size, 0,
		       iface->rma_ops_size * sizeof(*ops));
		iface->rma_ops = ops;
		iface->rma_ops_size *= 2;
	}
	op = ucs_mpool_get_inline(&iface->rma_op_mp);
	if (ucs_unlikely(op == NULL))
		return NULL;
	iface->rma_ops[slot] = op;
	iface->rma_free_slot = slot + 1;
	op->slot = slot;
	op->cookie = ++iface->rma_cookie;
	op->seq = ++ep->rma_op_seq;
	op->ep = ep;
	op->comp = comp;
	op->kind = kind;
	op->on_txq = 0;
	op->placed = 0;
	op->marker = 0;
	op->reply_stream = 0;
	op->tx_offset = 0;
	op->chunk = 0;
	op->rx_bytes = 0;
	op->unpack_cb = NULL;
	op->zc_pending = 0;
	op->zc_acked = 0;
	op->zc_status = UCS_OK;
	op->iovcnt = 0;
	ucs_list_add_tail(&ep->rma_ops, &op->ep_elem);
	return op;
}

static void uct_sctp_dpdk_rma_op_put(uct_sctp_dpdk_iface_t *iface,
				     uct_sctp_dpdk_rma_op_t *op)
{
	if (op->placed)
		uct_sctp_dpdk_rma_place_del(iface, op);
	if (op->on_txq) {
		ucs_queue_remove(&iface->rma_txq, &op->tx_elem);
		op->ep->rma_txq_len--;
	}
	iface->rma_ops[op->slot] = NULL;
	if (op->slot < iface->rma_free_slot)
		iface->rma_free_slot = op->slot;
	ucs_list_del(&op->ep_elem);
	ucs_mpool_put_inline(op);
}

static void uct_sctp_dpdk_rma_op_complete(uct_sctp_dpdk_iface_t *iface,
					  uct_sctp_dpdk_rma_op_t *op,
					  ucs_status_t status)
{
	uct_completion_t *comp = op->comp;

	uct_sctp_dpdk_rma_op_put(iface, op);
	if (comp != NULL)
		uct_invoke_completion(comp, status);
}

/* The target answered @op (its ACK, or an error): complete it, unless
 * usrsctp or the port still reference PUT data sent from its buffers:
 * then the last zero-copy completion does (uct_sctp_dpdk_rma_zc_progress),
 * so the caller never reuses a buffer a retransmission may still read. */
static void uct_sctp_dpdk_rma_op_answered(uct_sctp_dpdk_iface_t *iface,
					  uct_sctp_dpdk_rma_op_t *op,
					  ucs_status_t status)
{
	if (op->zc_pending != 0) {
		op->zc_acked = 1;
		op->zc_status = status;
		return;
	}
	uct_sctp_dpdk_rma_op_complete(iface, op, status);
}


static void uct_sctp_dpdk_rma_zc_done(void *arg, int status)
{
	uct_sctp_dpdk_rma_zc_t *zc = arg;
	uct_sctp_dpdk_ctx_t *ctx = zc->ctx;
	uct_sctp_dpdk_iface_t *iface;

	ucs_recursive_spin_lock(ctx->lock);
	iface = ctx->ifaces[zc->iface_id % UCT_SCTP_DPDK_MAX_IFACES];
	if (iface != NULL && iface->id == zc->iface_id) {
		zc->status = status;
		ucs_queue_push(&iface->rma_zcq, &zc->elem);
		zc = NULL;
		/* its op may complete now: a worker asleep on the event fd
		 * must run uct_sctp_dpdk_rma_zc_progress */
		ucs_spin_lock(&iface->rx_lock);
		uct_sctp_dpdk_iface_wake(iface);
		ucs_spin_unlock(&iface->rx_lock);
	}
	uct_sctp_dpdk_rma_zc_free(ctx, zc);
	ucs_recursive_spin_unlock(ctx->lock);
}

unsigned uct_sctp_dpdk_rma_zc_progress(uct_sctp_dpdk_iface_t *iface)
{
	ucs_queue_elem_t *spare = NULL, **spare_tail = &spare;
	uct_sctp_dpdk_ctx_t *ctx = iface->ctx;
	uct_sctp_dpdk_rma_zc_t *zc;
	uct_sctp_dpdk_rma_op_t *op;
	ucs_queue_head_t done;
	unsigned count = 0;

	ucs_queue_head_init(&done);
	ucs_recursive_spin_lock(ctx->lock);
	ucs_queue_splice(&done, &iface->rma_zcq);
	ucs_recursive_spin_unlock(ctx->lock);
	while (!ucs_queue_is_empty(&done)) {
		zc = ucs_queue_pull_elem_non_empty(&done,
						   uct_sctp_dpdk_rma_zc_t,
						   elem);
		op = zc->slot < iface->rma_ops_size ?
			     iface->rma_ops[zc->slot] :
			     NULL;
		if (op != NULL && op->cookie == zc->cookie &&
		    op->zc_pending != 0) {
			op->zc_pending--;
			if (zc->status != 0 && op->zc_status == UCS_OK)
				op->zc_status = UCS_ERR_ENDPOINT_TIMEOUT;
			if (op->zc_pending == 0 && op->zc_acked) {
				uct_sctp_dpdk_rma_op_complete(iface, op,
							      op->zc_status);
				count++;
			}
		}
		/* kept for reuse: back to the spares in one go below */
		zc->elem.next = NULL;
		*spare_tail = &zc->elem;
		spare_tail = &zc->elem.next;
	}
	if (spare != NULL) {
		ucs_recursive_spin_lock(ctx->lock);
		*spare_tail = ctx->rma_zc_spare;
		ctx->rma_zc_spare = spare;
		ucs_recursive_spin_unlock(ctx->lock);
	}
	return count;
}

int uct_sctp_dpdk_rma_zc_queued(uct_sctp_dpdk_iface_t *iface)
{
	int queued;

	if (iface->ctx == NULL || !iface->rma_ready)
		return 0;
	ucs_recursive_spin_lock(iface->ctx->lock);
	queued = !ucs_queue_is_empty(&iface->rma_zcq);
	ucs_recursive_spin_unlock(iface->ctx->lock);
	return queued;
}

/* Completions the poll loop queued for a closing iface: nothing to run. */
static void uct_sctp_dpdk_rma_zc_purge(uct_sctp_dpdk_iface_t *iface)
{
	uct_sctp_dpdk_rma_zc_t *zc;

	if (iface->ctx == NULL)
		return;
	ucs_recursive_spin_lock(iface->ctx->lock);
	while (!ucs_queue_is_empty(&iface->rma_zcq)) {
		zc = ucs_queue_pull_elem_non_empty(&iface->rma_zcq,
						   uct_sctp_dpdk_rma_zc_t,
						   elem);
		uct_sctp_dpdk_rma_zc_free(iface->ctx, zc);
	}
	ucs_recursive_spin_unlock(iface->ctx->lock);
}

static ucs_status_t uct_sctp_dpdk_rma_not_ready(uct_sctp_dpdk_iface_t *iface,
						uct_sctp_dpdk_ep_t *ep)
{
	uct_sctp_dpdk_ctx_t *ctx = iface->ctx;

	if (uct_sctp_dpdk_ep_is_failed(ep))
		return UCS_ERR_ENDPOINT_TIMEOUT;
	if (ep->peer->state == UCT_SCTP_DPDK_PEER_IDLE) {
		ucs_recursive_spin_lock(ctx->lock);
		uct_sctp_dpdk_ctx_peer_connect(ctx, ep->peer);
		ucs_recursive_spin_unlock(ctx->lock);
	}
	return UCS_ERR_NO_RESOURCE;
}

/* One message to the ep's peer on @stream: our headers @hdrs (into
 * iov[0]), then iov[1..iovcnt-1]; @flags: sg_send's (SG_SEND_MORE or 0).
 * @return 0, -EAGAIN (peer marked blocked), or another negative errno. */
static int uct_sctp_dpdk_rma_send(uct_sctp_dpdk_iface_t *iface,
				  uct_sctp_dpdk_ep_t *ep, uint16_t stream,
				  uint32_t flags, uint8_t *hdrs,
				  struct iovec *iov, int iovcnt)
{
	uct_sctp_dpdk_ctx_t *ctx = iface->ctx;
	int rc;

	iov[0].iov_base = hdrs;
	iov[0].iov_len = UCT_SCTP_DPDK_RMA_HDRS_BYTES;
	ucs_recursive_spin_lock(ctx->lock);
	rc = sg_send(ep->peer->sg, ep->peer->assoc, stream, flags, 0, iov,
		     iovcnt);
	if (ucs_unlikely(rc == -EAGAIN))
		ep->peer->blocked_poll = ctx->poll_count;
	ucs_recursive_spin_unlock(ctx->lock);
	return rc;
}

/* One PUT message of @op: by reference (sg_send_zc, the headers copied)
 * when the op is at least TX_ZCOPY_MIN, else copied.  @return as
 * uct_sctp_dpdk_rma_send. */
static int uct_sctp_dpdk_rma_send_put(uct_sctp_dpdk_iface_t *iface,
				      uct_sctp_dpdk_rma_op_t *op,
				      uint32_t flags, uint8_t *hdrs,
				      struct iovec *iov, int iovcnt)
{
	uct_sctp_dpdk_ctx_t *ctx = iface->ctx;
	uct_sctp_dpdk_ep_t *ep = op->ep;
	uct_sctp_dpdk_rma_zc_t *zc;
	size_t bytes = 0;
	int rc, i;

	ucs_recursive_spin_lock(ctx->lock);
	zc = iface->tx_zcopy_min != 0 && op->length >= iface->tx_zcopy_min ?
		     uct_sctp_dpdk_rma_zc_get(ctx) :
		     NULL;
	if (zc == NULL) { /* below TX_ZCOPY_MIN (or no memory): copied */
		ucs_recursive_spin_unlock(ctx->lock);
		return uct_sctp_dpdk_rma_send(iface, ep, ep->stream, flags,
					      hdrs, iov, iovcnt);
	}
	zc->ctx = ctx;
	zc->iface_id = iface->id;
	zc->slot = op->slot;
	zc->cookie = op->cookie;
	zc->status = 0;
	iov[0].iov_base = hdrs;
	iov[0].iov_len = UCT_SCTP_DPDK_RMA_HDRS_BYTES;
	rc = sg_send_zc(ep->peer->sg, ep->peer->assoc, ep->stream, flags, 0,
			iov, iovcnt, UCT_SCTP_DPDK_RMA_HDRS_BYTES,
			uct_sctp_dpdk_rma_zc_done, zc);
	if (ucs_unlikely(rc == -EAGAIN))
		ep->peer->blocked_poll = ctx->poll_count;
	if (rc != 0)
		uct_sctp_dpdk_rma_zc_put(ctx, zc); /* its done never runs */
	ucs_recursive_spin_unlock(ctx->lock);
	if (rc != 0)
		return rc;
	/* done runs from a later poll, never inside sg_send_zc, and its
	 * record reaches this iface's progress only: counted in time */
	op->zc_pending++;
	for (i = 1; i < iovcnt; i++)
		bytes += iov[i].iov_len;
	iface->tx_zcopy_msgs++;
	iface->tx_zcopy_bytes += bytes;
	return 0;
}

static ucs_status_t uct_sctp_dpdk_rma_send_status(uct_sctp_dpdk_ep_t *ep,
						  int rc)
{
	if (rc == -EAGAIN || rc == -ENOTCONN)
		return UCS_ERR_NO_RESOURCE;
	ucs_error("sctp_dpdk: sg_send of an RMA message on assoc %u stream %u "
		  "failed: %s", ep->peer->assoc, ep->stream, strerror(-rc));
	return sdp_status_from_errno(rc);
}

/* iov entries covering [offset, offset + n) of the op's buffers. */
static int uct_sctp_dpdk_rma_iov_slice(const uct_sctp_dpdk_rma_op_t *op,
				       uint64_t offset, uint64_t n,
				       struct iovec *out)
{
	unsigned i;
	int cnt = 0;

	for (i = 0; i < op->iovcnt && n > 0; i++) {
		if (offset >= op->iov[i].iov_len) {
			offset -= op->iov[i].iov_len;
			continue;
		}
		out[cnt].iov_base = UCS_PTR_BYTE_OFFSET(op->iov[i].iov_base,
							offset);
		out[cnt].iov_len = ucs_min(n, op->iov[i].iov_len - offset);
		n -= out[cnt].iov_len;
		offset = 0;
		cnt++;
	}
	return cnt;
}

/* Send what is left of @op.  @return UCS_OK all sent, UCS_ERR_NO_RESOURCE
 * blocked (come back), or a failure. */
static ucs_status_t uct_sctp_dpdk_rma_op_tx(uct_sctp_dpdk_iface_t *iface,
					    uct_sctp_dpdk_rma_op_t *op)
{
	uct_sctp_dpdk_ep_t *ep = op->ep;
	uint8_t hdrs[UCT_SCTP_DPDK_RMA_HDRS_BYTES];
	struct iovec iov[1 + UCT_SCTP_DPDK_RMA_MAX_IOV];
	uint64_t n;
	int rc, cnt;

	if (ucs_unlikely(!uct_sctp_dpdk_ep_assoc_ready(iface, ep)))
		return uct_sctp_dpdk_rma_not_ready(iface, ep);
	if (op->kind != UCT_SCTP_DPDK_RMA_PUT) {
		if (op->tx_offset != 0)
			return UCS_OK;
		uct_sctp_dpdk_rma_hdrs_fill(hdrs, op->kind, 0, ep->dst_iface_id,
					    iface->id, op->key,
					    op->remote_addr, op->length, 0,
					    op->slot, op->cookie, UCS_OK);
		((uct_sctp_dpdk_rma_hdr_t *)(hdrs +
			sizeof(uct_sctp_dpdk_am_hdr_t)))->reply_stream =
			rte_cpu_to_be_16(op->reply_stream);
		/* A rendezvous GET (reply_stream != 0) goes on its RTS's
		 * stream too: uct_sctp_dpdk_rma_get_stream; a FLUSH on the
		 * stream it flushes (uct_sctp_dpdk_rma_flush_start). */
		rc = uct_sctp_dpdk_rma_send(iface, ep,
					    op->reply_stream != 0 ?
						    op->reply_stream :
						    ep->stream,
					    0, hdrs, iov, 1);
		if (rc != 0)
			return uct_sctp_dpdk_rma_send_status(ep, rc);
		op->tx_offset = 1;
		return UCS_OK;
	}
	if (op->chunk == 0) { /* once per op, not per retry */
		ucs_recursive_spin_lock(iface->ctx->lock);
		op->chunk = uct_sctp_dpdk_rma_chunk_bytes(iface->ctx,
							  ep->peer->sg,
							  ep->peer->assoc);
		ucs_recursive_spin_unlock(iface->ctx->lock);
	}
	while (op->tx_offset < op->length) {
		n = ucs_min(op->chunk, op->length - op->tx_offset);
		cnt = uct_sctp_dpdk_rma_iov_slice(op, op->tx_offset, n,
						  iov + 1);
		uct_sctp_dpdk_rma_hdrs_fill(
			hdrs, UCT_SCTP_DPDK_RMA_PUT,
			op->tx_offset + n == op->length ?
				UCT_SCTP_DPDK_HDR_FLAG_ACK : 0,
			ep->dst_iface_id, iface->id, op->key, op->remote_addr,
			op->length, op->tx_offset, op->slot, op->cookie,
			UCS_OK);
		/* only the op's last message asks for its SACK at once */
		rc = uct_sctp_dpdk_rma_send_put(
			iface, op,
			iface->ctx->rma_sack_last &&
					op->tx_offset + n < op->length ?
				SG_SEND_MORE : 0,
			hdrs, iov, 1 + cnt);
		if (rc != 0)
			return uct_sctp_dpdk_rma_send_status(ep, rc);
		op->tx_offset += n;
	}
	return UCS_OK;
}

static void uct_sctp_dpdk_rma_txq_push(uct_sctp_dpdk_iface_t *iface,
				       uct_sctp_dpdk_rma_op_t *op)
{
	ucs_queue_push(&iface->rma_txq, &op->tx_elem);
	op->on_txq = 1;
	op->ep->rma_txq_len++;
}

/* Start @op: send it, or queue it behind the ep's queued ops or when only
 * part of it went.  Nothing sent and blocked: UCS_ERR_NO_RESOURCE (the op
 * is freed; the caller uses pending).  @return UCS_INPROGRESS or error. */
static ucs_status_t uct_sctp_dpdk_rma_op_start(uct_sctp_dpdk_iface_t *iface,
					       uct_sctp_dpdk_rma_op_t *op)
{
	ucs_status_t status;

	if (op->ep->rma_txq_len != 0) {
		uct_sctp_dpdk_rma_txq_push(iface, op);
		return UCS_INPROGRESS;
	}
	status = uct_sctp_dpdk_rma_op_tx(iface, op);
	if (ucs_likely(status == UCS_OK))
		return UCS_INPROGRESS;
	if (status == UCS_ERR_NO_RESOURCE && op->tx_offset != 0) {
		uct_sctp_dpdk_rma_txq_push(iface, op);
		return UCS_INPROGRESS;
	}
	uct_sctp_dpdk_rma_op_put(iface, op);
	return status;
}

unsigned uct_sctp_dpdk_rma_progress(uct_sctp_dpdk_iface_t *iface)
{
	uct_sctp_dpdk_rma_op_t *op;
	ucs_status_t status;
	unsigned count = 0;

	while (!ucs_queue_is_empty(&iface->rma_txq)) {
		op = ucs_queue_head_elem_non_empty(&iface->rma_txq,
						   uct_sctp_dpdk_rma_op_t,
						   tx_elem);
		status = uct_sctp_dpdk_rma_op_tx(iface, op);
		if (status == UCS_ERR_NO_RESOURCE)
			break;
		ucs_queue_pull_non_empty(&iface->rma_txq);
		op->on_txq = 0;
		op->ep->rma_txq_len--;
		if (status != UCS_OK)
			uct_sctp_dpdk_rma_op_complete(iface, op, status);
		count++;
	}
	return count;
}

/* ---- initiator: replies from the iface's RX queue ---- */

static void uct_sctp_dpdk_rma_copy_in(const uct_sctp_dpdk_rma_op_t *op,
				      uint64_t offset, const void *data,
				      uint64_t n)
{
	struct iovec iov[UCT_SCTP_DPDK_RMA_MAX_IOV];
	int cnt, i;

	cnt = uct_sctp_dpdk_rma_iov_slice(op, offset, n, iov);
	for (i = 0; i < cnt; i++) {
		memcpy(iov[i].iov_base, data, iov[i].iov_len);
		data = UCS_PTR_BYTE_OFFSET(data, iov[i].iov_len);
	}
}

void uct_sctp_dpdk_rma_rx_reply(uct_sctp_dpdk_iface_t *iface,
				uct_sctp_dpdk_rx_desc_t *rx)
{
	const uct_sctp_dpdk_rma_hdr_t *rh = rx->data;
	uct_sctp_dpdk_rma_op_t *op;
	uint32_t slot, cookie;
	uint64_t offset, n;
	uint16_t placed;
	int32_t status;

	if (ucs_unlikely(rx->length < sizeof(*rh) || !iface->rma_ready))
		return;
	slot = rte_be_to_cpu_32(rh->op_slot);
	cookie = rte_be_to_cpu_32(rh->op_cookie);
	if (slot >= iface->rma_ops_size)
		return;
	op = iface->rma_ops[slot];
	if (op == NULL || op->cookie != cookie || op->on_txq ||
	    op->ep == NULL)
		return; /* its ep was destroyed (an op waiting only for
			 * usrsctp to release its buffer), or not ours */
	if (ucs_unlikely(!uct_sctp_dpdk_rma_reply_from_peer(op, rx->src_sg,
							     rx->src_assoc))) {
		if (__atomic_fetch_add(&iface->ctx->rma_reply_foreign, 1,
				       __ATOMIC_RELAXED) == 0)
			ucs_warn("sctp_dpdk: iface %u: dropped an RMA reply "
				 "to op %u from assoc %u, not the association "
				 "the op went on (further ones are counted: "
				 "rma.reply_foreign)", iface->id, slot,
				 rx->src_assoc);
		return;
	}
	status = -(int32_t)rte_be_to_cpu_32(rh->status);
	if (status != UCS_OK) {
		uct_sctp_dpdk_rma_op_answered(iface, op, (ucs_status_t)status);
		return;
	}
	if ((rx->am_id & ~UCT_SCTP_DPDK_RX_RMA) == UCT_SCTP_DPDK_RMA_ACK) {
		if (op->kind != UCT_SCTP_DPDK_RMA_GET_REQ)
			uct_sctp_dpdk_rma_op_answered(iface, op, UCS_OK);
		return;
	}
	/* GET_REP */
	if (op->kind != UCT_SCTP_DPDK_RMA_GET_REQ)
		return;
	offset = rte_be_to_cpu_64(rh->offset);
	placed = rx->flags & UCT_SCTP_DPDK_RX_FLAG_PLACED;
	n = placed ? rx->placed_bytes : rx->length - sizeof(*rh);
	if (offset > op->length || n > op->length - offset ||
	    (op->unpack_cb != NULL && (n != op->length || placed)) ||
	    (rx->flags & UCT_SCTP_DPDK_RX_FLAG_DISCARDED)) {
		uct_sctp_dpdk_rma_op_complete(iface, op, UCS_ERR_IO_ERROR);
		return;
	}
	if (placed) {
		/* written by the poll loop (uct_sctp_dpdk_rma_place) */
	} else {
		if (op->unpack_cb != NULL)
			op->unpack_cb(op->unpack_arg, rh + 1, n);
		else
			uct_sctp_dpdk_rma_copy_in(op, offset, rh + 1, n);
		__atomic_fetch_add(&iface->ctx->rma_get_copy_bytes, n,
				   __ATOMIC_RELAXED);
	}
	op->rx_bytes += n;
	if (op->rx_bytes >= op->length)
		uct_sctp_dpdk_rma_op_complete(iface, op, UCS_OK);
}

/* ---- initiator: local eps (another iface of this process) ---- */

/* Check and copy at once; no message. */
static ucs_status_t uct_sctp_dpdk_rma_local(uct_sctp_dpdk_iface_t *iface,
					    int is_put, uint64_t key,
					    uint64_t addr, uint64_t length,
					    const struct iovec *iov,
					    unsigned iovcnt,
					    uct_unpack_callback_t unpack_cb,
					    void *arg)
{
	uct_sctp_dpdk_ctx_t *ctx = iface->ctx;
	void *remote = (void *)(uintptr_t)addr;
	unsigned i;

	if (!uct_sctp_dpdk_rma_access_begin(key, addr, length)) {
		ucs_recursive_spin_lock(ctx->lock);
		uct_sctp_dpdk_rma_refuse(ctx, 0, is_put ? "put" : "get", key,
					 addr, length);
		ucs_recursive_spin_unlock(ctx->lock);
		return UCS_ERR_INVALID_ADDR;
	}
	if (unpack_cb != NULL) {
		unpack_cb(arg, remote, length);
	} else {
		for (i = 0; i < iovcnt; i++) {
			if (is_put)
				memcpy(remote, iov[i].iov_base,
				       iov[i].iov_len);
			else
				memcpy(iov[i].iov_base, remote,
				       iov[i].iov_len);
			remote = UCS_PTR_BYTE_OFFSET(remote, iov[i].iov_len);
		}
	}
	uct_sctp_dpdk_rma_access_end();
	ucs_recursive_spin_lock(ctx->lock);
	if (is_put)
		ctx->rma_put_msgs++;
	else
		ctx->rma_get_reqs++;
	ucs_recursive_spin_unlock(ctx->lock);
	return UCS_OK;
}

/* ---- UCT operations ---- */

/* Key 0 is never registered: a caller's 0 or UCT_INVALID_RKEY (UCX's own
 * gtest passes 0 for zero-length puts, test_uct_peer_failure) reaches the
 * target as an access it refuses, never as a NULL dereference here. */
static UCS_F_ALWAYS_INLINE uint64_t uct_sctp_dpdk_rma_key(uct_rkey_t rkey)
{
	if (ucs_unlikely(rkey == 0 || rkey == UCT_INVALID_RKEY))
		return 0;
	return rte_be_to_cpu_64(((const uct_sctp_dpdk_rkey_t *)rkey)->key);
}

/* A GET of [@addr, @addr + @len) at @ep's peer: the stream of the
 * rendezvous RTS that offered that buffer, if one came (stream map on),
 * so the request and its data follow their message's stream instead of
 * queueing on the ep's behind other messages' losses; 0 = the ep's
 * stream.  The request may leave the ep's order: it reads a tag send's
 * buffer, which MPI (and UCP, until the ATS that follows the last reply)
 * does not let change while the send is in flight, so no PUT, AMO or
 * message of this ep ordered before or after it can change what it
 * reads. */
static uint16_t uct_sctp_dpdk_rma_get_stream(uct_sctp_dpdk_iface_t *iface,
					     const uct_sctp_dpdk_ep_t *ep,
					     uint64_t addr, uint64_t len)
{
	uct_sctp_dpdk_ctx_t *ctx = iface->ctx;
	uint16_t stream;

	if (ucs_likely(ctx->smap.mask == 0))
		return 0;
	ucs_recursive_spin_lock(ctx->lock);
	stream = uct_sctp_dpdk_stream_rts_find(&ctx->smap, ep->peer->sg,
					       ep->peer->assoc, addr, len);
	ucs_recursive_spin_unlock(ctx->lock);
	return stream;
}

/* put_short/bcopy: one message made of @hdrs + @iov[1..); no op record. */
static ucs_status_t uct_sctp_dpdk_rma_put_now(uct_sctp_dpdk_iface_t *iface,
					      uct_sctp_dpdk_ep_t *ep,
					      uint8_t *hdrs, struct iovec *iov,
					      int iovcnt, uint64_t key,
					      uint64_t remote_addr,
					      uint64_t length)
{
	int rc;

	if (ep->flags & UCT_SCTP_DPDK_EP_FLAG_LOCAL)
		return uct_sctp_dpdk_rma_local(iface, 1, key, remote_addr,
					       length, iov + 1, iovcnt - 1,
					       NULL, NULL);
	/* Behind a large op still sending, or pending requests: keep the
	 * order. */
	if (ucs_unlikely(!uct_sctp_dpdk_ep_can_send(iface, ep)))
		return uct_sctp_dpdk_rma_not_ready(iface, ep);
	uct_sctp_dpdk_rma_hdrs_fill(hdrs, UCT_SCTP_DPDK_RMA_PUT, 0,
				    ep->dst_iface_id, iface->id, key,
				    remote_addr, length, 0, 0, 0, UCS_OK);
	rc = uct_sctp_dpdk_rma_send(iface, ep, ep->stream, 0, hdrs, iov,
				    iovcnt);
	if (ucs_unlikely(rc != 0))
		return uct_sctp_dpdk_rma_send_status(ep, rc);
	ep->rma_dirty++;
	return UCS_OK;
}

ucs_status_t uct_sctp_dpdk_ep_put_short(uct_ep_h tl_ep, const void *buffer,
					unsigned length, uint64_t remote_addr,
					uct_rkey_t rkey)
{
	uct_sctp_dpdk_ep_t *ep = ucs_derived_of(tl_ep, uct_sctp_dpdk_ep_t);
	uct_sctp_dpdk_iface_t *iface =
		ucs_derived_of(tl_ep->iface, uct_sctp_dpdk_iface_t);
	uint8_t hdrs[UCT_SCTP_DPDK_RMA_HDRS_BYTES];
	struct iovec iov[2];
	ucs_status_t status;

	UCT_CHECK_LENGTH(length, 0, UCT_SCTP_DPDK_AM_MAX_SHORT_BYTES -
				    UCT_SCTP_DPDK_RMA_HDRS_BYTES, "put_short");
	if (ucs_unlikely(length == 0)) {
		/* Touches no memory, so no registration is involved (UCX's
		 * test_uct_peer_failure puts 0 bytes with rkey 0): done.  A
		 * failure of the ep is reported by its error handler. */
		return UCS_OK;
	}
	iov[1].iov_base = (void *)buffer;
	iov[1].iov_len = length;
	status = uct_sctp_dpdk_rma_put_now(iface, ep, hdrs, iov, 2,
					   uct_sctp_dpdk_rma_key(rkey),
					   remote_addr, length);
	if (status == UCS_OK)
		UCT_TL_EP_STAT_OP(&ep->super, PUT, SHORT, length);
	return status;
}

ssize_t uct_sctp_dpdk_ep_put_bcopy(uct_ep_h tl_ep, uct_pack_callback_t pack_cb,
				   void *arg, uint64_t remote_addr,
				   uct_rkey_t rkey)
{
	uct_sctp_dpdk_ep_t *ep = ucs_derived_of(tl_ep, uct_sctp_dpdk_ep_t);
	uct_sctp_dpdk_iface_t *iface =
		ucs_derived_of(tl_ep->iface, uct_sctp_dpdk_iface_t);
	struct iovec iov[2];
	ucs_status_t status;
	size_t length;

	/* Fail before packing: pack_cb may have side effects. */
	if (!(ep->flags & UCT_SCTP_DPDK_EP_FLAG_LOCAL) &&
	    ucs_unlikely(!uct_sctp_dpdk_ep_can_send(iface, ep)))
		return uct_sctp_dpdk_rma_not_ready(iface, ep);
	length = pack_cb(UCS_PTR_BYTE_OFFSET(iface->bounce,
					     UCT_SCTP_DPDK_RMA_HDRS_BYTES),
			 arg);
	UCT_CHECK_LENGTH(length, 0,
			 iface->ctx->seg_bytes - UCT_SCTP_DPDK_RMA_HDRS_BYTES,
			 "put_bcopy");
	iov[1].iov_base = UCS_PTR_BYTE_OFFSET(iface->bounce,
					      UCT_SCTP_DPDK_RMA_HDRS_BYTES);
	iov[1].iov_len = length;
	status = uct_sctp_dpdk_rma_put_now(iface, ep, iface->bounce, iov, 2,
					   uct_sctp_dpdk_rma_key(rkey),
					   remote_addr, length);
	if (status != UCS_OK)
		return status;
	UCT_TL_EP_STAT_OP(&ep->super, PUT, BCOPY, length);
	return length;
}

/* Copy a uct_iov_t array into @op (contiguous entries). */
static uint64_t uct_sctp_dpdk_rma_op_iov(uct_sctp_dpdk_rma_op_t *op,
					 const uct_iov_t *uiov, size_t iovcnt)
{
	uint64_t total = 0;
	size_t i;

	op->iovcnt = 0;
	for (i = 0; i < iovcnt; i++) {
		size_t len = uct_iov_get_length(&uiov[i]);

		if (len == 0)
			continue;
		op->iov[op->iovcnt].iov_base = uiov[i].buffer;
		op->iov[op->iovcnt].iov_len = len;
		op->iovcnt++;
		total += len;
	}
	return total;
}

static ucs_status_t uct_sctp_dpdk_rma_zcopy(uct_ep_h tl_ep, uint8_t kind,
					    const uct_iov_t *uiov,
					    size_t iovcnt,
					    uint64_t remote_addr,
					    uct_rkey_t rkey,
					    uct_completion_t *comp)
{
	uct_sctp_dpdk_ep_t *ep = ucs_derived_of(tl_ep, uct_sctp_dpdk_ep_t);
	uct_sctp_dpdk_iface_t *iface =
		ucs_derived_of(tl_ep->iface, uct_sctp_dpdk_iface_t);
	uct_sctp_dpdk_rma_op_t *op;
	ucs_status_t status;

	UCT_CHECK_IOV_SIZE(iovcnt, (size_t)UCT_SCTP_DPDK_RMA_MAX_IOV,
			   kind == UCT_SCTP_DPDK_RMA_PUT ?
				   "uct_sctp_dpdk_ep_put_zcopy" :
				   "uct_sctp_dpdk_ep_get_zcopy");
	if (ucs_unlikely(!(ep->flags & UCT_SCTP_DPDK_EP_FLAG_LOCAL) &&
			 ep->rma_txq_len == 0 &&
			 !uct_sctp_dpdk_ep_assoc_ready(iface, ep)))
		return uct_sctp_dpdk_rma_not_ready(iface, ep);
	op = uct_sctp_dpdk_rma_op_get(iface, ep, kind, comp);
	if (ucs_unlikely(op == NULL))
		return UCS_ERR_NO_RESOURCE;
	op->key = uct_sctp_dpdk_rma_key(rkey);
	op->remote_addr = remote_addr;
	op->length = uct_sctp_dpdk_rma_op_iov(op, uiov, iovcnt);
	if (ep->flags & UCT_SCTP_DPDK_EP_FLAG_LOCAL) {
		status = uct_sctp_dpdk_rma_local(
			iface, kind == UCT_SCTP_DPDK_RMA_PUT, op->key,
			remote_addr, op->length, op->iov, op->iovcnt, NULL,
			NULL);
		uct_sctp_dpdk_rma_op_put(iface, op);
		return status;
	}
	if (op->length == 0) {
		uct_sctp_dpdk_rma_op_put(iface, op);
		return UCS_OK;
	}
	if (kind == UCT_SCTP_DPDK_RMA_GET_REQ) {
		op->reply_stream = uct_sctp_dpdk_rma_get_stream(
			iface, ep, remote_addr, op->length);
		uct_sctp_dpdk_rma_place_add(iface, op);
	}
	return uct_sctp_dpdk_rma_op_start(iface, op);
}

ucs_status_t uct_sctp_dpdk_ep_put_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
					size_t iovcnt, uint64_t remote_addr,
					uct_rkey_t rkey,
					uct_completion_t *comp)
{
	ucs_status_t status;

	status = uct_sctp_dpdk_rma_zcopy(tl_ep, UCT_SCTP_DPDK_RMA_PUT, iov,
					 iovcnt, remote_addr, rkey, comp);
	if (!UCS_STATUS_IS_ERR(status))
		UCT_TL_EP_STAT_OP(ucs_derived_of(tl_ep, uct_base_ep_t), PUT,
				  ZCOPY, uct_iov_total_length(iov, iovcnt));
	return status;
}

ucs_status_t uct_sctp_dpdk_ep_get_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
					size_t iovcnt, uint64_t remote_addr,
					uct_rkey_t rkey,
					uct_completion_t *comp)
{
	ucs_status_t status;

	status = uct_sctp_dpdk_rma_zcopy(tl_ep, UCT_SCTP_DPDK_RMA_GET_REQ, iov,
					 iovcnt, remote_addr, rkey, comp);
	if (!UCS_STATUS_IS_ERR(status))
		UCT_TL_EP_STAT_OP(ucs_derived_of(tl_ep, uct_base_ep_t), GET,
				  ZCOPY, uct_iov_total_length(iov, iovcnt));
	return status;
}

ucs_status_t uct_sctp_dpdk_ep_get_bcopy(uct_ep_h tl_ep,
					uct_unpack_callback_t unpack_cb,
					void *arg, size_t length,
					uint64_t remote_addr, uct_rkey_t rkey,
					uct_completion_t *comp)
{
	uct_sctp_dpdk_ep_t *ep = ucs_derived_of(tl_ep, uct_sctp_dpdk_ep_t);
	uct_sctp_dpdk_iface_t *iface =
		ucs_derived_of(tl_ep->iface, uct_sctp_dpdk_iface_t);
	uct_sctp_dpdk_rma_op_t *op;
	ucs_status_t status;

	UCT_CHECK_LENGTH(length, 0,
			 iface->ctx->seg_bytes - UCT_SCTP_DPDK_RMA_HDRS_BYTES,
			 "get_bcopy");
	if (ep->flags & UCT_SCTP_DPDK_EP_FLAG_LOCAL)
		return uct_sctp_dpdk_rma_local(iface, 0,
					       uct_sctp_dpdk_rma_key(rkey),
					       remote_addr, length, NULL, 0,
					       unpack_cb, arg);
	if (ucs_unlikely(ep->rma_txq_len == 0 &&
			 !uct_sctp_dpdk_ep_assoc_ready(iface, ep)))
		return uct_sctp_dpdk_rma_not_ready(iface, ep);
	op = uct_sctp_dpdk_rma_op_get(iface, ep, UCT_SCTP_DPDK_RMA_GET_REQ,
				      comp);
	if (ucs_unlikely(op == NULL))
		return UCS_ERR_NO_RESOURCE;
	op->key = uct_sctp_dpdk_rma_key(rkey);
	op->remote_addr = remote_addr;
	op->length = length;
	op->unpack_cb = unpack_cb;
	op->unpack_arg = arg;
	op->reply_stream = uct_sctp_dpdk_rma_get_stream(iface, ep, remote_addr,
							length);
	status = uct_sctp_dpdk_rma_op_start(iface, op);
	if (!UCS_STATUS_IS_ERR(status))
		UCT_TL_EP_STAT_OP(&ep->super, GET, BCOPY, length);
	return status;
}

/* ---- flush and ep lifetime ---- */

void uct_sctp_dpdk_rma_ep_init(uct_sctp_dpdk_ep_t *ep)
{
	ucs_list_head_init(&ep->rma_ops);
	ep->rma_txq_len = 0;
	ep->rma_dirty = 0;
	ep->rma_op_seq = 0;
}

/* Complete every op of @ep with @status (NULL-safe for comps). */
/* @op ends with @status, but usrsctp or the port still reference PUT
 * data sent from its buffer (zc_pending): its completion must wait for
 * the last zero-copy release (uct_sctp_dpdk_rma_zc_progress), or the
 * caller could free a buffer a retransmission still reads.  Its ep may go
 * meanwhile: the op leaves the ep's list and the RMA queue (nothing more
 * is sent), keeps its slot, and ignores replies. */
static void uct_sctp_dpdk_rma_op_orphan(uct_sctp_dpdk_iface_t *iface,
				       uct_sctp_dpdk_rma_op_t *op,
				       ucs_status_t status)
{
	if (op->placed)
		uct_sctp_dpdk_rma_place_del(iface, op);
	if (op->on_txq) {
		ucs_queue_remove(&iface->rma_txq, &op->tx_elem);
		op->ep->rma_txq_len--;
		op->on_txq = 0;
	}
	ucs_list_del(&op->ep_elem);
	ucs_list_head_init(&op->ep_elem); /* op_put's ucs_list_del: no-op */
	op->orphan_peer = op->ep->peer;
	op->ep = NULL;
	op->zc_acked = 1;
	op->zc_status = status;
}

static void uct_sctp_dpdk_rma_ep_fail(uct_sctp_dpdk_iface_t *iface,
				      uct_sctp_dpdk_ep_t *ep,
				      ucs_status_t status)
{
	uct_sctp_dpdk_rma_op_t *op;

	while (!ucs_list_is_empty(&ep->rma_ops)) {
		op = ucs_list_head(&ep->rma_ops, uct_sctp_dpdk_rma_op_t,
				   ep_elem);
		if (op->zc_pending != 0)
			uct_sctp_dpdk_rma_op_orphan(iface, op, status);
		else
			uct_sctp_dpdk_rma_op_complete(iface, op, status);
	}
	ep->rma_dirty = 0;
}

void uct_sctp_dpdk_rma_ep_cleanup(uct_sctp_dpdk_ep_t *ep)
{
	uct_sctp_dpdk_iface_t *iface =
		ucs_derived_of(ep->super.super.iface, uct_sctp_dpdk_iface_t);

	/* The user destroys an ep without flushing: every op still
	 * outstanding completes once with UCS_ERR_CANCELED and is freed, as
	 * UCX's tcp purges its ep (uct_tcp_ep_purge); a caller waiting on a
	 * completion would wait for ever otherwise.  Late replies find no op
	 * (slot freed, cookie never reused). */
	uct_sctp_dpdk_rma_ep_fail(iface, ep, UCS_ERR_CANCELED);
}

ucs_status_t uct_sctp_dpdk_rma_ep_flush(uct_sctp_dpdk_ep_t *ep,
					unsigned flags,
					uct_completion_t *comp)
{
	uct_sctp_dpdk_iface_t *iface =
		ucs_derived_of(ep->super.super.iface, uct_sctp_dpdk_iface_t);
	ucs_status_t status;

	if (ucs_likely(ucs_list_is_empty(&ep->rma_ops) && ep->rma_dirty == 0))
		return UCS_OK;
	if (flags & UCT_FLUSH_FLAG_CANCEL) {
		uct_sctp_dpdk_rma_ep_fail(iface, ep, UCS_ERR_CANCELED);
		return UCS_OK;
	}
	if (uct_sctp_dpdk_ep_is_failed(ep)) {
		uct_sctp_dpdk_rma_ep_fail(iface, ep, UCS_ERR_ENDPOINT_TIMEOUT);
		return UCS_ERR_ENDPOINT_TIMEOUT;
	}
	if (ep->rma_dirty == 0 && comp == NULL)
		return UCS_INPROGRESS; /* the ops' replies will come */
	/* A FLUSH behind everything sent so far on the stream: its ACK comes
	 * after the target wrote every put and answered every get. */
	status = uct_sctp_dpdk_rma_flush_start(ep, ep->stream, comp, 0);
	if (status == UCS_INPROGRESS)
		ep->rma_dirty = 0;
	return status;
}

uint64_t uct_sctp_dpdk_rma_ep_oldest(uct_sctp_dpdk_ep_t *ep, int sacked)
{
	uct_sctp_dpdk_rma_op_t *op;

	/* ep->rma_ops is in issue order (ops join at the tail, leave from
	 * anywhere): its head is the oldest. */
	ucs_list_for_each(op, &ep->rma_ops, ep_elem) {
		if (!(sacked && op->marker))
			return op->seq;
	}
	return UINT64_MAX;
}

ucs_status_t uct_sctp_dpdk_rma_flush_start(uct_sctp_dpdk_ep_t *ep,
					   uint16_t stream,
					   uct_completion_t *comp, int marker)
{
	uct_sctp_dpdk_iface_t *iface =
		ucs_derived_of(ep->super.super.iface, uct_sctp_dpdk_iface_t);
	uct_sctp_dpdk_rma_op_t *op;
	ucs_status_t status;

	op = uct_sctp_dpdk_rma_op_get(iface, ep, UCT_SCTP_DPDK_RMA_FLUSH, comp);
	if (op == NULL)
		return UCS_ERR_NO_RESOURCE;
	op->key = 0;
	op->remote_addr = 0;
	op->length = 0;
	op->marker = marker;
	op->reply_stream = stream == ep->stream ? 0 : stream;
	status = uct_sctp_dpdk_rma_op_start(iface, op);
	/* Sent or queued behind the ep's earlier ops: the target sees it
	 * after every earlier message of the stream, AMs included. */
	if (status == UCS_INPROGRESS && stream == ep->stream)
		ep->am_dirty = 0;
	iface->ctx->flush_markers += (marker && status == UCS_INPROGRESS);
	return status;
}

ucs_status_t uct_sctp_dpdk_rma_iface_flush(uct_sctp_dpdk_iface_t *iface)
{
	uct_sctp_dpdk_ep_t *ep;
	ucs_status_t status = UCS_OK;

	ucs_list_for_each(ep, &iface->eps, list) {
		if (uct_sctp_dpdk_rma_ep_flush(ep, 0, NULL) != UCS_OK)
			status = UCS_INPROGRESS;
	}
	return status;
}
