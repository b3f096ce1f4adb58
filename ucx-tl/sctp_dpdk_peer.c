/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sctp_dpdk_peer.c - the peer table and its state machine (the transport's
 * connection manager, like UCX's tcp_cm.c): one SCTP association per remote
 * process, created on demand by the first ep and never freed before the
 * context (eps keep pointers).
 *
 *          ep create / send on IDLE            SG_EV_UP / RESTART
 *   IDLE ----------------------> CONNECTING ----------------------> UP
 *    ^  \______________________________________________________/   |
 *    |            SG_EV_UP of an association the peer started        |
 *    +---------- SG_EV_SHUTDOWN (graceful), LOST, CANT_START --------+
 *
 * LOST, CANT_START and RESTART move peer->fail_gen on: every ep created
 * before reports UCS_ERR_ENDPOINT_TIMEOUT.  A graceful SHUTDOWN is not a
 * failure; the next send reconnects.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sctp_dpdk.h"

#include <ucs/datastruct/khash.h>
#include <ucs/debug/log.h>

#include <errno.h>
#include <sched.h>

/*
 * Peer lookups are O(1): one hash table by remote address (IPv4 + SCTP
 * port), one by association (lane + id: association ids are per SCTP
 * socket, so a lane's ids may equal another lane's).  The association
 * table may hold a stale entry for an ended association: a lookup checks
 * the peer it finds still has that association.
 */
KHASH_MAP_INIT_INT64(uct_sctp_dpdk_peer_idx, uct_sctp_dpdk_peer_t *)

struct uct_sctp_dpdk_peer_index {
	khash_t(uct_sctp_dpdk_peer_idx) by_addr;
	khash_t(uct_sctp_dpdk_peer_idx) by_assoc;
};

static inline uint64_t uct_sctp_dpdk_peer_addr_key(uint32_t ip_be,
						   uint16_t sctp_port)
{
	return ((uint64_t)ip_be << 16) | sctp_port;
}

static inline uint64_t uct_sctp_dpdk_peer_assoc_key(unsigned lane,
						    sg_assoc_t assoc)
{
	return ((uint64_t)lane << 32) | (uint32_t)assoc;
}

void uct_sctp_dpdk_peer_index_free(uct_sctp_dpdk_ctx_t *ctx)
{
	if (ctx->peer_index == NULL)
		return;
	kh_destroy_inplace(uct_sctp_dpdk_peer_idx, &ctx->peer_index->by_addr);
	kh_destroy_inplace(uct_sctp_dpdk_peer_idx, &ctx->peer_index->by_assoc);
	ucs_free(ctx->peer_index);
	ctx->peer_index = NULL;
}

static uct_sctp_dpdk_peer_t *
uct_sctp_dpdk_peer_lookup(khash_t(uct_sctp_dpdk_peer_idx) *h, uint64_t key)
{
	khiter_t it = kh_get(uct_sctp_dpdk_peer_idx, h, key);

	return it == kh_end(h) ? NULL : kh_val(h, it);
}

/* @return 0 or -ENOMEM. */
static int uct_sctp_dpdk_peer_index_put(khash_t(uct_sctp_dpdk_peer_idx) *h,
					uint64_t key,
					uct_sctp_dpdk_peer_t *peer)
{
	int ret;
	khiter_t it = kh_put(uct_sctp_dpdk_peer_idx, h, key, &ret);

	if (ret == UCS_KH_PUT_FAILED)
		return -ENOMEM;
	kh_val(h, it) = peer;
	return 0;
}

static uct_sctp_dpdk_peer_t *
uct_sctp_dpdk_peer_by_addr(uct_sctp_dpdk_ctx_t *ctx, uint32_t ip_be,
			   uint16_t sctp_port)
{
	if (ctx->peer_index == NULL)
		return NULL;
	return uct_sctp_dpdk_peer_lookup(
		&ctx->peer_index->by_addr,
		uct_sctp_dpdk_peer_addr_key(ip_be, sctp_port));
}

uct_sctp_dpdk_peer_t *uct_sctp_dpdk_peer_by_assoc(uct_sctp_dpdk_ctx_t *ctx,
						  unsigned lane,
						  sg_assoc_t assoc)
{
	uct_sctp_dpdk_peer_t *peer;

	if (ctx->peer_index == NULL)
		return NULL;
	peer = uct_sctp_dpdk_peer_lookup(
		&ctx->peer_index->by_assoc,
		uct_sctp_dpdk_peer_assoc_key(lane, assoc));
	if (peer == NULL || peer->state == UCT_SCTP_DPDK_PEER_IDLE ||
	    peer->lane != lane || peer->assoc != assoc)
		return NULL;
	return peer;
}

/* @peer's association is now @assoc: index it, and forget the one it
 * replaces. */
static void uct_sctp_dpdk_peer_set_assoc(uct_sctp_dpdk_ctx_t *ctx,
					 uct_sctp_dpdk_peer_t *peer,
					 sg_assoc_t assoc)
{
	khash_t(uct_sctp_dpdk_peer_idx) *h = &ctx->peer_index->by_assoc;
	khiter_t it;

	if (peer->assoc != 0 && peer->assoc != assoc) {
		it = kh_get(uct_sctp_dpdk_peer_idx, h,
			    uct_sctp_dpdk_peer_assoc_key(peer->lane,
							 peer->assoc));
		if (it != kh_end(h) && kh_val(h, it) == peer)
			kh_del(uct_sctp_dpdk_peer_idx, h, it);
	}
	peer->assoc = assoc;
	if (uct_sctp_dpdk_peer_index_put(
		    h, uct_sctp_dpdk_peer_assoc_key(peer->lane, assoc),
		    peer) != 0) {
		/* events of this association then find the peer by its
		 * address (SG_EV_UP) or not at all (it is reported lost
		 * through fail_gen by the next failing send) */
		ucs_warn("sctp_dpdk: out of memory indexing association %u",
			 assoc);
	}
}

static uct_sctp_dpdk_peer_t *
uct_sctp_dpdk_peer_new(uct_sctp_dpdk_ctx_t *ctx, uint32_t ip_be,
		       uint16_t sctp_port, unsigned lane)
{
	uct_sctp_dpdk_peer_t *peer;

	if (ctx->peer_index == NULL) {
		ctx->peer_index = ucs_calloc(1, sizeof(*ctx->peer_index),
					     "sctp_dpdk peer index");
		if (ctx->peer_index == NULL)
			goto err_nomem;
		kh_init_inplace(uct_sctp_dpdk_peer_idx,
				&ctx->peer_index->by_addr);
		kh_init_inplace(uct_sctp_dpdk_peer_idx,
				&ctx->peer_index->by_assoc);
	}
	peer = ucs_calloc(1, sizeof(*peer), "sctp_dpdk peer");
	if (peer == NULL)
		goto err_nomem;
	if (uct_sctp_dpdk_peer_index_put(
		    &ctx->peer_index->by_addr,
		    uct_sctp_dpdk_peer_addr_key(ip_be, sctp_port), peer) != 0) {
		ucs_free(peer);
		goto err_nomem;
	}
	peer->ip_be = ip_be;
	peer->sctp_port = sctp_port;
	peer->lane = lane;
	peer->sg = ctx->lane_sg[lane];
	peer->state = UCT_SCTP_DPDK_PEER_IDLE;
	peer->blocked_poll = UINT64_MAX;
	ucs_list_add_tail(&ctx->peers, &peer->list);
	ctx->nb_peers++;
	return peer;

err_nomem:
	ucs_error("sctp_dpdk: failed to allocate peer %u (%zu bytes and its "
		  "index entries)", ctx->nb_peers + 1, sizeof(*peer));
	return NULL;
}

void uct_sctp_dpdk_ctx_peer_connect(uct_sctp_dpdk_ctx_t *ctx,
				    uct_sctp_dpdk_peer_t *peer)
{
	sg_assoc_t assoc = 0;
	int rc;

	if (peer->state != UCT_SCTP_DPDK_PEER_IDLE)
		return;
	/* An IDLE peer's old association ended after its data was
	 * acknowledged (SHUTDOWN) or failed (fail_gen): nothing to flush. */
	peer->drained_msgs = peer->tx_msgs;
	rc = sg_connect(peer->sg, peer->ip_be, peer->sctp_port, &assoc);
	if (rc == 0 || rc == -EALREADY) {
		uct_sctp_dpdk_peer_set_assoc(ctx, peer, assoc);
		peer->state = sg_assoc_up(peer->sg, assoc) ?
				      UCT_SCTP_DPDK_PEER_UP :
				      UCT_SCTP_DPDK_PEER_CONNECTING;
		return;
	}
	/* sg logged why; eps of this peer fail at their next progress. */
	peer->fail_gen++;
	ctx->ev_gen++;
}

int uct_sctp_dpdk_peer_compatible(uct_sctp_dpdk_ctx_t *ctx, uint32_t ip_be,
				  const uct_sctp_dpdk_iface_addr_t *addr)
{
	static int warned_seg, warned_streams, warned_mtu, warned_lanes;
	static int warned_paths;
	uint32_t seg = rte_be_to_cpu_32(addr->seg_bytes);
	uint16_t streams = rte_be_to_cpu_16(addr->streams);
	uint16_t mtu = rte_be_to_cpu_16(addr->mtu);
	char ip[16];

	dp_ip_str(ip_be, ip, sizeof(ip));
	if (seg != ctx->seg_bytes) {
		if (!warned_seg++)
			ucs_error("sctp_dpdk: peer %s has " UCT_SCTP_DPDK_ENV
				  "SEG_SIZE=%u, this process %u: set the same "
				  "value on every process", ip, seg,
				  ctx->seg_bytes);
		return 0;
	}
	if (streams != ctx->streams) {
		if (!warned_streams++)
			ucs_error("sctp_dpdk: peer %s has " UCT_SCTP_DPDK_ENV
				  "STREAMS=%u, this process %u: set the same "
				  "value on every process", ip, streams,
				  ctx->streams);
		return 0;
	}
	if (mtu != ctx->mtu) {
		if (!warned_mtu++)
			ucs_error("sctp_dpdk: peer %s has " UCT_SCTP_DPDK_ENV
				  "MTU=%u, this process %u: set the same "
				  "value on every process", ip, mtu, ctx->mtu);
		return 0;
	}
	if (addr->lanes != ctx->nb_lanes) {
		/* lane k reaches the peer's SCTP port + k: it must exist */
		if (!warned_lanes++)
			ucs_error("sctp_dpdk: peer %s has " UCT_SCTP_DPDK_ENV
				  "LANES=%u, this process %u: set the same "
				  "value on every process", ip, addr->lanes,
				  ctx->nb_lanes);
		return 0;
	}
	if (addr->paths != ctx->nb_paths) {
		/* the peer's device address holds paths - 1 backup addresses
		 * (uct_sctp_dpdk_path_peer reads ours - 1 of them), and the
		 * link pairs path k with the peer's path k */
		if (!warned_paths++)
			ucs_error("sctp_dpdk: peer %s has %u FAILOVER paths, "
				  "this process %u: set " UCT_SCTP_DPDK_ENV
				  "FAILOVER and the same number of ports in "
				  UCT_SCTP_DPDK_ENV "DEVARGS on every process",
				  ip, addr->paths, ctx->nb_paths);
		return 0;
	}
	return 1;
}

/*
 * SELF_WIRE (tests): wait, bounded, until the association is up, so that
 * an ep's first send finds it established, as a local ep's would; UCX's
 * gtests send once right after connecting and take NO_RESOURCE for a
 * failure (uct_p2p_am_alignment).  Never in normal operation: there an
 * ep create does not block.
 */
static void uct_sctp_dpdk_peer_wait_up(uct_sctp_dpdk_ctx_t *ctx,
				       uct_sctp_dpdk_peer_t *peer)
{
	uint64_t deadline = dp_tsc() + dp_tsc_hz() *
					       UCT_SCTP_DPDK_SELF_WIRE_WAIT_MS /
					       1000;

	while (peer->state != UCT_SCTP_DPDK_PEER_UP && dp_tsc() < deadline) {
		if (!ctx->thread_on && ucs_recursive_spin_trylock(ctx->lock)) {
			uct_sctp_dpdk_ctx_poll_all();
			ucs_recursive_spin_unlock(ctx->lock);
		} else {
			sched_yield();
		}
	}
}

ucs_status_t uct_sctp_dpdk_ctx_peer_get(uct_sctp_dpdk_ctx_t *ctx,
					uint32_t ip_be, uint16_t sctp_port,
					unsigned lane, uint32_t incarnation,
					uct_sctp_dpdk_peer_t **peer_p)
{
	uct_sctp_dpdk_peer_t *peer;
	ucs_status_t status = UCS_OK;
	uint32_t gen;
	char ip[16];

	ucs_recursive_spin_lock(ctx->lock);
	peer = uct_sctp_dpdk_peer_by_addr(ctx, ip_be, sctp_port);
	if (peer == NULL) {
		peer = uct_sctp_dpdk_peer_new(ctx, ip_be, sctp_port, lane);
		if (peer == NULL) {
			status = UCS_ERR_NO_MEMORY;
			goto out;
		}
	}
	if (peer->incarnation != 0 &&
	    (int32_t)(incarnation - peer->incarnation) < 0) {
		/* An address of a process that has been replaced at this
		 * IP and port: never deliver into its successor. */
		ucs_diag("sctp_dpdk: address of %s:%u is stale (incarnation "
			 "%08x, the process there now is %08x): refused",
			 dp_ip_str(ip_be, ip, sizeof(ip)), sctp_port,
			 incarnation, peer->incarnation);
		status = UCS_ERR_UNREACHABLE;
		goto out;
	}
	if (peer->incarnation != incarnation) {
		if (peer->incarnation != 0) {
			/* The process at this address restarted: eps to the
			 * old one must not deliver into the new one. */
			ucs_diag("sctp_dpdk: peer %s:%u restarted (incarnation "
				 "%08x -> %08x): its older eps fail",
				 dp_ip_str(ip_be, ip, sizeof(ip)), sctp_port,
				 peer->incarnation, incarnation);
			peer->fail_gen++;
			ctx->ev_gen++;
		}
		peer->incarnation = incarnation;
	}
	gen = peer->fail_gen;
	uct_sctp_dpdk_ctx_peer_connect(ctx, peer);
	if (peer->fail_gen != gen) {
		status = UCS_ERR_UNREACHABLE;
		goto out;
	}
	*peer_p = peer;
out:
	ucs_recursive_spin_unlock(ctx->lock);
	if (status == UCS_OK && ctx->self_wire)
		uct_sctp_dpdk_peer_wait_up(ctx, peer);
	return status;
}

void uct_sctp_dpdk_peer_event(uct_sctp_dpdk_ctx_t *ctx, unsigned lane,
			      const struct sg_event *ev)
{
	uct_sctp_dpdk_peer_t *peer = uct_sctp_dpdk_peer_by_assoc(ctx, lane,
								 ev->assoc);
	char ip[16];

	switch (ev->type) {
	case SG_EV_UP:
	case SG_EV_RESTART:
		if (peer == NULL && ev->peer_ip_be != 0)
			peer = uct_sctp_dpdk_peer_by_addr(ctx, ev->peer_ip_be,
							  ev->peer_port);
		if (peer == NULL && ev->peer_ip_be != 0)
			peer = uct_sctp_dpdk_peer_new(ctx, ev->peer_ip_be,
						      ev->peer_port, lane);
		if (peer == NULL)
			return;
		uct_sctp_dpdk_peer_set_assoc(ctx, peer, ev->assoc);
		peer->state = UCT_SCTP_DPDK_PEER_UP;
		if (ev->type == SG_EV_RESTART) {
			/* Messages of the old incarnation may be lost. */
			peer->fail_gen++;
		}
		break;
	case SG_EV_CANT_START:
	case SG_EV_LOST:
		if (peer == NULL)
			return;
		ucs_diag("sctp_dpdk: association %u to %s:%u %s", ev->assoc,
			 dp_ip_str(peer->ip_be, ip, sizeof(ip)),
			 peer->sctp_port,
			 ev->type == SG_EV_LOST ? "lost" : "could not start");
		peer->state = UCT_SCTP_DPDK_PEER_IDLE;
		peer->drained_msgs = peer->tx_msgs;
		peer->fail_gen++;
		break;
	case SG_EV_SHUTDOWN:
		/* Graceful: the peer closed after its data; not a failure.
		 * A later send reconnects. */
		if (peer == NULL)
			return;
		/* SHUTDOWN_COMP: every byte of ours was acknowledged. */
		peer->state = UCT_SCTP_DPDK_PEER_IDLE;
		peer->drained_msgs = peer->tx_msgs;
		break;
	default:
		/* SEND_DONE/FAILED: only for messages larger than the send
		 * buffer, which the transport's SEG_SIZE check excludes. */
		return;
	}
	ctx->ev_gen++;
}
