/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_internal.h - types shared by the dataplane's own files and its unit
 * test.  Not for other components: they include dp.h only.
 */
#ifndef DP_INTERNAL_H
#define DP_INTERNAL_H

#include <stdatomic.h>
#include <string.h>

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_spinlock.h>

#include "dp.h"
#include "pace.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DP_BURST 32
#ifndef DP_ARP_SIZE_LOG2 /* the fuzz build shrinks it to reach eviction */
#define DP_ARP_SIZE_LOG2 13
#endif
#define DP_ARP_SIZE (1u << DP_ARP_SIZE_LOG2) /* initial cache slots */
/* Entries a cache holds by default before it evicts the least recently
 * used one: 3/4 of the initial slots (3/4 keeps linear probing short).
 * Above DP_MAX_STATIC_ARP.  dp_arp_table_set_max raises it (the table
 * grows) up to DP_ARP_MAX_LIMIT. */
#define DP_ARP_MAX_ENTRIES (DP_ARP_SIZE / 4 * 3)
#define DP_ARP_MAX_LIMIT (1u << 24)
#define DP_ARP_HOLD 64	     /* packets held while resolving */
#define DP_ARP_HOLD_DEST 16  /* of which for one destination */
/* Room in front of an L4 payload for Ethernet + IPv4 + UDP headers. */
#define DP_HDR_ROOM (RTE_ETHER_HDR_LEN + 20 + 8)

/* ---- framing (dp_frame.c): pure functions on frame bytes ---- */

enum dp_verdict {
	DP_V_DELIVER = 0, /* an IPv4 payload for the layer above */
	DP_V_ARP,	  /* an ARP frame for dp_arp_input() */
	DP_V_DROP,	  /* drop, reason in dp_parsed.drop */
};

struct dp_parsed {
	uint16_t l3_off;	 /* offset of the IPv4 header */
	uint16_t l4_off;	 /* offset of the delivered payload */
	uint16_t l4_len;	 /* bytes of delivered payload */
	uint8_t proto;		 /* DP_IPPROTO_SCTP or DP_IPPROTO_EXP */
	bool udp_encap;
	uint16_t udp_sport;	 /* host order */
	uint32_t src_ip_be, dst_ip_be;
	enum dp_drop drop;	 /* valid with DP_V_DROP */
};

struct dp_frame_ctx {
	struct rte_ether_addr mac; /* ours */
	uint32_t ip_be;		   /* ours */
	uint16_t udp_port;	   /* RFC 6951 port, host order; 0 = off */
	bool ip_cksum_checked;	   /* NIC validated the IPv4 checksum */
};

/*
 * Classify one frame of @len bytes.  Checks, in order: Ethernet length and
 * type, MAC destination, IPv4 version/IHL/length/checksum/fragmentation,
 * IPv4 destination, protocol, UDP encapsulation, SCTP minimum length.  The
 * CRC32c is checked by the caller (it depends on the port's offloads).
 */
enum dp_verdict dp_frame_classify(const struct dp_frame_ctx *ctx,
				  const uint8_t *frame, uint32_t len,
				  struct dp_parsed *out);

/*
 * Write Ethernet + IPv4 (+ UDP when @udp_port != 0) headers for an L4
 * payload of @l4_len bytes into @hdr, which must have dp_frame_hdr_len()
 * bytes.  UDP goes from our @udp_port to the peer's @udp_dport (host
 * order; RFC 6951: the peer's port is the one its packets come from).
 * The IPv4 checksum is computed unless @ip_cksum_offload.
 */
uint16_t dp_frame_hdr_len(bool udp);
void dp_frame_build(uint8_t *hdr, const struct rte_ether_addr *src_mac,
		    const struct rte_ether_addr *dst_mac, uint32_t src_ip_be,
		    uint32_t dst_ip_be, uint8_t proto, uint16_t udp_port,
		    uint16_t udp_dport, uint16_t l4_len, uint16_t ip_id,
		    bool ip_cksum_offload);

/* ---- ARP (dp_arp.c): neighbour cache, pure logic on time and bytes ---- */

enum dp_arp_state {
	DP_ARP_FREE = 0,
	DP_ARP_INCOMPLETE, /* request sent, waiting for a reply */
	DP_ARP_REACHABLE,  /* valid until expire_tsc */
	DP_ARP_STATIC,	   /* configured, never expires */
};

struct dp_arp_entry {
	uint32_t ip_be;
	uint8_t state;		 /* enum dp_arp_state */
	uint8_t tries;		 /* requests sent so far */
	struct rte_ether_addr mac;
	uint32_t seq;		 /* its record in an eviction fifo (0:
				  * none, STATIC) */
	uint64_t deadline_tsc;	 /* expiry (REACHABLE) or next retry */
	uint64_t used_tsc;	 /* last lookup hit or learn: second chance */
};

/* Eviction order of one class of entries: records in creation order; a
 * record is live while its entry exists with the same seq. */
struct dp_arp_rec {
	uint32_t ip_be;
	uint32_t seq;
	uint64_t tsc;		 /* the entry's used_tsc when queued */
};

struct dp_arp_fifo {
	struct dp_arp_rec *r;	 /* mask + 1 records */
	uint32_t mask;
	uint32_t head, tail;	 /* tail - head records queued */
};

/* Entry classes, in the order eviction takes them. */
enum dp_arp_class {
	DP_ARP_UNCONFIRMED = 0,	 /* learned from a request we did not ask
				  * for, resolving, or a failed resolution */
	DP_ARP_CONFIRMED,	 /* answered a request of ours */
	DP_ARP_CLASSES,
};

struct dp_arp_table {
	struct dp_arp_entry *e;	 /* mask + 1 slots */
	uint32_t mask;		 /* slots - 1 (power of 2) */
	uint32_t size_log2;	 /* log2(slots), for the hash */
	uint32_t max_entries;	 /* evict the LRU entry at this many */
	uint64_t grows;		 /* doublings */
	uint64_t ttl_tsc;	 /* REACHABLE lifetime */
	uint64_t retry_tsc;	 /* between requests */
	uint32_t max_tries;	 /* requests before giving up */
	uint32_t nb_used;	 /* entries not FREE */
	uint64_t evictions;	 /* entries dropped for new ones */
	uint64_t evictions_confirmed; /* of which CONFIRMED */
	uint64_t learn_refused;	 /* unsolicited senders not learned: the
				  * table held only confirmed entries */
	uint32_t next_seq;	 /* for the next record (never 0) */
	struct dp_arp_fifo fifo[DP_ARP_CLASSES];
	bool incomplete_maybe;	 /* an INCOMPLETE entry may exist (set by
				  * dp_arp_lookup, cleared by a dp_arp_tick
				  * that found none): else tick skips its
				  * scan */
};

/* DP_ARP_SIZE slots, at most DP_ARP_MAX_ENTRIES entries.  @return 0 or
 * -ENOMEM. */
int dp_arp_table_init(struct dp_arp_table *t, uint64_t ttl_tsc,
		      uint64_t retry_tsc, uint32_t max_tries);
void dp_arp_table_fini(struct dp_arp_table *t);
/* Hold up to @max_entries neighbours (the table doubles as they come)
 * before evicting.  @return 0; -EINVAL below the entries held or above
 * DP_ARP_MAX_LIMIT. */
int dp_arp_table_set_max(struct dp_arp_table *t, uint32_t max_entries);
/*
 * A full table (max_entries) makes room by evicting, oldest first, an
 * UNCONFIRMED entry (learned from a request nobody asked for, resolving,
 * or failed), and only when there is none a CONFIRMED one; an entry used
 * since it was queued gets a second chance.  A sender learned from an
 * unsolicited request never evicts a CONFIRMED entry (it is not learned:
 * learn_refused).  STATIC entries are never evicted.  Each eviction is
 * O(1) amortised (records are queued once per use or class change).
 */
/* @return 0 added; -ENOSPC every entry is static. */
int dp_arp_add_static(struct dp_arp_table *t, uint32_t ip_be,
		      const struct rte_ether_addr *mac);
/*
 * Look @ip_be up at @now_tsc.
 * @return 0 and *mac_p resolved; -EAGAIN resolution under way (hold the
 *         packet); -ENOENT an entry was just created or re-armed: send the
 *         first request now (then hold); -ENOSPC every entry is
 *         static.
 */
int dp_arp_lookup(struct dp_arp_table *t, uint32_t ip_be, uint64_t now_tsc,
		  struct rte_ether_addr *mac_p);
/* Learn @ip_be -> @mac from a request or reply: confirms a resolving
 * entry (the answer to our request); a new sender stays unconfirmed and
 * may evict only unconfirmed entries.  @return true if new or newly
 * resolved; false refreshed, static, or not learned (learn_refused).
 * Whether a frame may teach us is dp_arp_port_input's decision. */
bool dp_arp_learn(struct dp_arp_table *t, uint32_t ip_be,
		  const struct rte_ether_addr *mac, uint64_t now_tsc);

/* What dp_arp_tick() found for one incomplete entry. */
enum dp_arp_event { DP_ARP_EV_RETRY, DP_ARP_EV_FAILED };
typedef void (*dp_arp_event_cb)(void *arg, uint32_t ip_be,
				enum dp_arp_event ev);
/* Retry or fail incomplete entries whose deadline passed; @return count. */
unsigned int dp_arp_tick(struct dp_arp_table *t, uint64_t now_tsc,
			 dp_arp_event_cb cb, void *arg);
struct dp_arp_entry *dp_arp_find(struct dp_arp_table *t, uint32_t ip_be);

/* ARP frame (Ethernet + ARP, 42 bytes): build a request or reply. */
#define DP_ARP_FRAME_LEN (RTE_ETHER_HDR_LEN + 28)
void dp_arp_build(uint8_t *frame, uint16_t op, const struct rte_ether_addr *sha,
		  uint32_t sip_be, const struct rte_ether_addr *tha,
		  uint32_t tip_be);
/*
 * Parse an ARP frame.  @return 0 and fills op/sender/target; -EINVAL
 * malformed (not Ethernet/IPv4 ARP, short).
 */
int dp_arp_parse(const uint8_t *frame, uint32_t len, uint16_t *op_p,
		 struct rte_ether_addr *sha_p, uint32_t *sip_be_p,
		 uint32_t *tip_be_p);

/* ---- the port (dp_port.c, dp_rx.c, dp_out.c, dp_txq.c) ---- */

struct dp_hold {
	struct rte_mbuf *m;	/* framed except for the destination MAC */
	uint32_t ip_be;
};

struct dp_drop_state {
	uint64_t seen;	/* DATA packets counted so far */
	uint32_t next;	/* next list entry to match */
};

/*
 * One TX queue of the port (dp_txq.c): the burst buffer in front of the
 * driver's TX queue @id, l2fwd's rte_eth_tx_buffer.  Every queue has one,
 * port->txq[k]; output (dp_out.c), ARP (dp_arp.c) and the pacer
 * (dp_pace.c) put framed frames into it, and only dp_txq.c hands them to
 * the PMD.  Queue 0's is touched by its owning thread only; queue k > 0's
 * takes frames from any thread under @lock (usrsctp sends a lane's SACKs
 * and retransmissions from whichever thread runs its timers).
 */
struct dp_txq {
	uint16_t id;			/* the ethdev TX queue */
	uint16_t nb_tx;			/* frames in buf */
	/* frames that ride at the tail of the next burst carrying anything
	 * else (dp_port_send_held, queue 0 only), or leave when the layer
	 * above releases them (dp_port_release_held) */
	uint16_t nb_held;
	uint64_t deadline_tsc;		/* drain buf by then */
	struct dp_stats *st;		/* the queue's counters */
	/* queue k > 0: its count of threads inside a burst (dp_bye.c waits
	 * for 0); NULL on queue 0, whose thread runs the handshake itself */
	uint32_t *in_burst;
	rte_spinlock_t lock;		/* queue k > 0: senders of any thread */
	struct rte_mbuf *buf[DP_BURST];
	struct rte_mbuf *held[DP_BURST];
} __rte_cache_aligned;

/* Queue k > 0 of a port with queues=N (dp_queue.c): its own RX burst,
 * rx ring and counters (its TX queue is port->txq[k]).  Polled by one
 * thread at a time. */
struct dp_queue {
	uint16_t id;
	struct rte_ring *rx_ring;	/* SPSC: poll -> recv */
	struct dp_stats st;
	/* threads inside a burst of this queue (dp_bye.c waits for 0
	 * before it lets a leaving memif peer go) */
	uint32_t in_burst;
} __rte_cache_aligned;

/* Frames to unresolved neighbours that queues k > 0 hand to queue 0. */
#define DP_HANDOFF_RING 1024

#define DP_AFP_MAX_SOCKS 4	/* af_packet TX sockets kicked per port */

struct dp_port {
	/* hot: used on every poll */
	uint16_t port_id;
	uint16_t queue_id;
	uint16_t mtu;
	bool udp_encap;
	uint16_t udp_dport;	/* RFC 6951: destination port of a frame
				 * whose sender named none (udp_remote_port
				 * or udp_port), host order */
	int udp_dport_off;	/* dynfield of dp_pkt_set_udp_dport */
	uint64_t udp_dport_flag; /* its dynflag in ol_flags; 0 without udp */
	bool ip_cksum_tx_offload;
	bool ip_cksum_rx_offload;
	bool crc_rx_offload;
	bool tx_batch;			/* TX once per poll (af_packet) */
	enum dp_crc_backend crc;	/* resolved, never AUTO */
	bool crc_zero_logged;		/* DP_DROP_SCTP_CRC_ZERO explained
					 * (once per port, any queue) */
	uint16_t ip_id;
	uint64_t tx_drain_tsc;		/* drain interval of every txq */
	/* nb_queues TX queues (dp_txq.c); txq[0] is queue 0's */
	struct dp_txq *txq;
	struct rte_ring *rx_ring;	/* SPSC: poll -> dp_port_recv */
	struct rte_mempool *pool;
	/* mbufs without data room, for external buffers
	 * (dp_pkt_ext_alloc); NULL when the port may not send them
	 * (tx_ext) or the pool could not be created */
	struct rte_mempool *ext_pool;
	/* Chained TX of buffers outside DPDK's memory (usrsctp's heap, a
	 * zero-copy sender's memory: no valid IOVA) is allowed: the driver
	 * reads transmitted bytes with the CPU (dp_port.c
	 * tx_copies_with_cpu) and takes multi-segment packets
	 * (RTE_ETH_TX_OFFLOAD_MULTI_SEGS, enabled then) */
	bool tx_ext;
	struct dp_frame_ctx fctx;
	uint32_t net_mask_be;

	/* pacing: frames wait in the pacer's fifo until their departure
	 * time; NULL only before setup and after release */
	void *pacer;			/* struct dp_pacer (dp_pace.c) */
	/* nonzero while the pacer has work: a rate is set, frames wait in
	 * it, or a rate was published from another thread.  Polls skip
	 * dp_pace_drain while it is 0 (the pacer costs an unpaced port's
	 * poll loop several percent otherwise).  Whoever publishes a rate sets it
	 * after publishing (release); only dp_pace_drain clears it.
	 * Accessed with __atomic builtins (the C++ unit test shares the
	 * struct). */
	uint32_t pace_busy;
	uint64_t link_bps;		/* link rate the pacer assumes */

	/* ARP */
	struct dp_arp_table arp;
	uint32_t nb_hold;
	struct dp_hold hold[DP_ARP_HOLD];
	uint64_t arp_tick_tsc;		/* 'now' during dp_arp_tick */
	uint64_t arp_next_tick_tsc;	/* when to run dp_arp_tick next */

	struct dp_stats st;
	struct dp_config cfg;
	bool probed;			/* hot-plugged by dp_port_open: removed
					 * again by dp_port_close */
	struct rte_device *dev;		/* the ethdev's device */

	/* drop= hook: DATA packets seen per direction (dp_drop.c) */
	struct dp_drop_state drop_rx_st, drop_tx_st;

	/* queues=N (dp_queue.c): xq[k - 1] is queue k; with N > 1 the ARP
	 * table is shared under arp_lock, and frames of queues k > 0 to an
	 * unresolved neighbour wait on handoff (MP/SC) for queue 0 */
	uint16_t nb_queues;
	bool arp_shared;
	rte_spinlock_t arp_lock;
	struct dp_queue *xq;
	struct rte_ring *handoff;

	/* memif close handshake (dp_bye.c): while rings_off is set no
	 * queue bursts (the peer is leaving or we are) */
	bool memif;			/* driver net_memif */
	bool intr_ctl;			/* driver handles its connection on the
					 * EAL interrupt thread: memif,
					 * virtio_user (vhost-user) */
	uint32_t rings_off;		/* __atomic: bursts skipped */
	bool peer_left;			/* we answered the peer's BYE */
	bool bye_down_seen;		/* link seen down since rings_off */
	bool closing;			/* dp_port_close under way */
	bool memif_zc;			/* memif client, zero-copy=yes */
	/* dp_port_hold: users (sg endpoints); a dp_port_close while any
	 * remain is deferred to the last dp_port_unhold */
	uint32_t users;
	bool close_deferred;
	bool gated;			/* memif_gate=1 (dp_gate.c) */
	/* net_af_packet (dp_afp_kick.c): the PMD's TX sockets, kicked
	 * again at afp_kick_tsc (0: no kick due) until its ring is empty */
	unsigned int nb_afp_socks;
	int afp_socks[DP_AFP_MAX_SOCKS];
	uint64_t afp_kick_tsc;
};

/* dp_afp_kick.c: see there */
void dp_afp_kick_setup(struct dp_port *port, const char *driver,
		       unsigned int if_index);
void dp_afp_kick_release(struct dp_port *port);
void dp_afp_kick_arm(struct dp_port *port, uint64_t now_tsc);
void dp_afp_kick(struct dp_port *port, uint64_t now_tsc);

/* dp_eal.c: one more reference to the EAL (dp_eal_fini drops it). */
void dp_eal_hold(void);

/* dp_gate.c: memif bursts only while DPDK's interrupt thread is parked
 * (its memif_disconnect unmaps the regions under a burst otherwise) */
#define DP_GATE_INTR 0x80000000u
/* dp_gate.word: a cache line of its own, written by every gated burst */
struct dp_gate_line {
	uint32_t word;
} __rte_cache_aligned;
extern struct dp_gate_line dp_gate;
void dp_gate_install(void);
/* closed spells so far: how often the interrupt thread ran with the gate
 * closed (tests) */
uint64_t dp_gate_closings(void);

/* @return false: skip this burst (the interrupt thread runs). */
static inline bool dp_gate_enter(const struct dp_port *port)
{
	uint32_t v;

	if (!port->gated)
		return true;
	v = __atomic_load_n(&dp_gate.word, __ATOMIC_RELAXED);
	do {
		if (v & DP_GATE_INTR)
			return false;
	} while (!__atomic_compare_exchange_n(&dp_gate.word, &v, v + 1, true,
					      __ATOMIC_ACQUIRE,
					      __ATOMIC_RELAXED));
	return true;
}

static inline void dp_gate_leave(const struct dp_port *port)
{
	if (port->gated)
		__atomic_sub_fetch(&dp_gate.word, 1, __ATOMIC_RELEASE);
}

/* dp_bye.c: the memif close handshake */
#define DP_BYE_ETHERTYPE 0x88b5	/* IEEE 802 local experimental 1 */
/* dp_config.c: @devargs name a memif vdev (net_memif...). */
bool dp_devargs_is_memif(const char *devargs);

/* @devargs name a memif vdev with zero-copy=yes (DPDK's zero-copy
 * client: its RX and TX rings carry our own mbufs; dp_config.c). */
bool dp_devargs_memif_zc(const char *devargs);
/* @return the memif ring size the devargs give (rsize=, log2; DPDK's
 * default 10: 1024 slots). */
uint32_t dp_devargs_memif_ring(const char *devargs);
/* @return true when the devargs' role= key is client (a memif client; the
 * device name is not checked: see dp_port_is_memif_client). */
bool dp_devargs_memif_client(const char *devargs);

/* dp_memif_zc.c: the EAL's memory file, which DPDK's zero-copy memif
 * client closes on each disconnect, kept and put back.  Hold when a
 * zero-copy client opens (@return 0, or -errno with the reason logged),
 * restore after each stop or close of a memif port, release when it
 * closed. */
int dp_memif_zc_hold(const char *devargs);
void dp_memif_zc_restore(void);
void dp_memif_zc_release(void);

/* A memif port in the client role (its devargs key role= says client;
 * DPDK's default is server). */
static inline bool dp_port_is_memif_client(const struct dp_port *port)
{
	return port->memif && dp_devargs_memif_client(port->cfg.devargs);
}
/* A frame queue 0 did not classify: consume it when it is a handshake
 * frame (answering a BYE).  @return true when consumed. */
bool dp_bye_input(struct dp_port *port, struct rte_mbuf *m);
/* Rings are off: @return true (and rings on) once the link went down and
 * came up again (a new peer). */
bool dp_bye_rings_back(struct dp_port *port);
/* Closing: tell a memif peer and wait until it stopped touching the
 * rings (bye_wait_ms at most). */
void dp_bye_leave(struct dp_port *port);

static inline bool dp_rings_off(const struct dp_port *port)
{
	return __atomic_load_n(&port->rings_off, __ATOMIC_RELAXED) != 0;
}

/*
 * A burst of a queue only while the rings are on.  Queue 0 (@in_burst
 * NULL) runs the close handshake on its own thread and only checks; a
 * thread bursting on queue k > 0 counts itself in, then checks; dp_bye.c
 * sets rings_off, then waits for every count to reach 0 before it lets a
 * leaving memif peer go (both sequentially consistent: one of the two
 * sees the other).  @return false: skip the burst.
 */
static inline bool dp_rings_enter(const struct dp_port *port,
				  uint32_t *in_burst)
{
	if (in_burst == NULL)
		return !dp_rings_off(port);
	__atomic_add_fetch(in_burst, 1, __ATOMIC_SEQ_CST);
	if (likely(__atomic_load_n(&port->rings_off, __ATOMIC_SEQ_CST) == 0))
		return true;
	__atomic_sub_fetch(in_burst, 1, __ATOMIC_RELEASE);
	return false;
}

static inline void dp_rings_leave(uint32_t *in_burst)
{
	if (in_burst != NULL)
		__atomic_sub_fetch(in_burst, 1, __ATOMIC_RELEASE);
}

static inline void dp_arp_lock(struct dp_port *port)
{
	if (port->arp_shared)
		rte_spinlock_lock(&port->arp_lock);
}

static inline void dp_arp_unlock(struct dp_port *port)
{
	if (port->arp_shared)
		rte_spinlock_unlock(&port->arp_lock);
}

/* dp_drop.c: the drop= hook */
/* Parse the value of a drop= token into @rx or @tx; logs the fix. */
int dp_drop_parse(const char *val, struct dp_drop_spec *rx,
		  struct dp_drop_spec *tx);
/* @return true when the SCTP packet (common header first) carries a DATA
 * or I-DATA chunk. */
bool dp_sctp_has_data(const uint8_t *sctp, size_t len);
/* dp_crc.c: dp_sctp_crc_fill over an SCTP packet in a chain of segments
 * (@m's data starts with the common header, all of it in the first). */
void dp_sctp_crc_fill_segs(enum dp_crc_backend be, struct rte_mbuf *m);

/* dp_crc.c: the receive check of an SCTP packet in software, in order
 * (dp_sctp_crc_ok is true up to DP_CRC_RX_ZERO) */
enum dp_crc_rx {
	DP_CRC_RX_OK,	    /* the CRC32c is right */
	DP_CRC_RX_ZERO,	    /* be NONE: checksum 0, accepted
			     * unverified */
	DP_CRC_RX_BAD,	    /* wrong */
	DP_CRC_RX_BAD_ZERO, /* wrong and 0: a crc=none peer, this port
			     * verifies every CRC */
};
enum dp_crc_rx dp_sctp_crc_check(enum dp_crc_backend be, const void *sctp,
				 size_t len);
/* Count one DATA packet of a direction; @return true to drop it. */
bool dp_drop_decide(struct dp_drop_state *st, const struct dp_drop_spec *sp);

static inline bool dp_drop_active(const struct dp_drop_spec *sp)
{
	return sp->every != 0 || sp->nb != 0;
}

/*
 * Transmit path, top to bottom; each file calls only the ones below it:
 *
 *   dp_out.c   IPv4 output: framing, CRC, neighbour lookup, queue choice
 *   dp_arp.c   neighbour resolution, hold queue, ARP frames
 *   dp_pace.c  the pacer (queue 0): dp_pace_xmit is its entry
 *   dp_txq.c   per-queue burst buffer -> rte_eth_tx_burst
 */

/* ---- dp_txq.c: one TX queue (struct dp_txq) ---- */
void dp_txq_init(struct dp_txq *txq, uint16_t id, struct dp_stats *st,
		 uint32_t *in_burst);
/* Free every buffered and held frame (the queue stays usable). */
void dp_txq_free(struct dp_txq *txq);
/* Hand the buffer to the NIC; what it does not take stays, in order. */
void dp_txq_burst(struct dp_port *port, struct dp_txq *txq);
/* Room for @n more frames in the buffer (after trying the NIC). */
bool dp_txq_room(struct dp_port *port, struct dp_txq *txq, uint16_t n);
/* Put a framed frame into the buffer, bypassing any pacer (the caller
 * holds txq->lock on queues k > 0).  @return 0, or -ENOBUFS dropped and
 * counted as DP_DROP_TX_FULL (the NIC has taken nothing for a whole
 * burst). */
int dp_txq_push(struct dp_port *port, struct dp_txq *txq, struct rte_mbuf *m,
		uint64_t now_tsc);
/* Move the held frames into the buffer, in order. */
void dp_txq_release_held(struct dp_port *port, struct dp_txq *txq,
			 uint64_t now_tsc);

/* Keep a framed @m for the tail of the next burst (nb_held < DP_BURST). */
static inline void dp_txq_hold(struct dp_txq *txq, struct rte_mbuf *m)
{
	txq->held[txq->nb_held++] = m;
	txq->st->tx_held++;
}

/* Burst when the buffer's drain deadline has passed. */
static inline void dp_txq_drain(struct dp_port *port, struct dp_txq *txq,
				uint64_t now_tsc)
{
	if (txq->nb_tx != 0 && (int64_t)(now_tsc - txq->deadline_tsc) >= 0)
		dp_txq_burst(port, txq);
}

/* ---- dp_pace.c: the port's pacer (frames wait in its flows) ---- */
/* Queue 0's transmit entry: through the pacer (when it has work) into
 * txq[0].  @return 0, or -ENOBUFS dropped and counted (pace_drops, or
 * drop_tx_full unpaced). */
int dp_pace_xmit(struct dp_port *port, struct rte_mbuf *m, uint64_t now_tsc);
void dp_pace_drain(struct dp_port *port, uint64_t now_tsc);
/* Has the pacer work: a total or per-destination rate, frames queued, or
 * rate requests not yet applied?  false: a caller may bypass it entirely
 * (no dp_pace_drain) until it turns true. */
bool dp_pace_active(const struct dp_port *port);
void dp_pace_release(struct dp_port *port);
/* Link rate assumed when neither link= nor the driver gives one (deadline
 * mode only: its rate matters for per-destination shares, not spacing). */
#define DP_PACE_LINK_UNKNOWN_BPS UINT64_C(10000000000)
/* The pacer's mode and link rate for @cfg on a link of @speed_mbps (0:
 * the driver does not know).  Gap mode needs a known speed: pace=gap
 * without one is refused; pace=auto on a PCI port without one falls back
 * to deadline mode (*why_p says why, for the log).
 * @return 0; -EINVAL pace=gap with no link= and an unknown speed. */
int dp_pace_choose(const struct dp_config *cfg, uint32_t speed_mbps,
		   bool *gap_p, uint64_t *link_bps_p, const char **why_p);
/* Why gap frames cannot pace @driver's port, or NULL: a driver known to
 * drop transmitted MAC Control frames, no TX counters (@counters false),
 * or a probe of @probe_sent gap frames of which the counters saw only
 * @probe_left leave. */
const char *dp_pace_gap_blocked(const char *driver, uint32_t probe_sent,
				uint64_t probe_left, bool counters);
void dp_pace_stats(const struct dp_port *port, struct dp_stats *st);
int dp_tx_pace_setup(struct dp_port *port, uint32_t speed_mbps);

/* ---- dp_arp.c: port-level ARP (requests, replies, held packets) ---- */
void dp_arp_port_input(struct dp_port *port, struct rte_mbuf *m,
		       uint64_t now_tsc);
void dp_arp_port_tick(struct dp_port *port, uint64_t now_tsc);
void dp_arp_port_request(struct dp_port *port, uint32_t ip_be,
			 uint64_t now_tsc);
void dp_arp_port_release(struct dp_port *port);
/* Hold a framed @m until @dst_ip_be resolves (queue 0, arp_lock held);
 * @arp_rc is dp_arp_lookup's.  @return 0 or -ENOBUFS (dropped, counted
 * as DP_DROP_HOLD_FULL). */
int dp_arp_port_hold(struct dp_port *port, struct rte_mbuf *m,
		     uint32_t dst_ip_be, int arp_rc, uint64_t now_tsc);
/* Queue 0's poll: send or hold what queues k > 0 handed over. */
void dp_arp_port_handoff(struct dp_port *port, uint64_t now_tsc);

/* ---- dp_out.c: IPv4 output ---- */
/* Frame @m for @dst_ip_be (CRC, headers, destination MAC when known).
 * @return 0 framed, *arp_rc_p the ARP lookup's result; 1 the drop= hook
 * took it (return 0 to the caller); < 0 error, freed. */
int dp_out_frame(struct dp_port *port, struct dp_stats *st, bool q0,
		 uint32_t dst_ip_be, uint8_t proto, struct rte_mbuf *m,
		 uint64_t now_tsc, int *arp_rc_p);
/* The transmit work of queue 0's poll: pacer releases, the drain
 * deadline, af_packet kicks. */
void dp_out_drain(struct dp_port *port, uint64_t now_tsc);
/* Queue k > 0's poll: its drain deadline. */
void dp_out_drain_queue(struct dp_port *port, uint16_t qid, uint64_t now_tsc);
/* Free every frame waiting to be sent, and the pacer. */
void dp_out_release(struct dp_port *port);

/* dp_rx.c: classify one received frame of queue @q (stats @st, ring
 * @ring); queue 0 also handles ARP and the drop= hook. */
void dp_rx_one(struct dp_port *port, struct dp_stats *st,
	       struct rte_ring *ring, bool q0, struct rte_mbuf *m,
	       uint64_t now_tsc);
/* dp_queue.c: queue setup/teardown within dp_port_open/close */
int dp_queues_check(const struct dp_port *port, const struct dp_config *cfg,
		    const char *driver, uint16_t max_rxq, uint16_t max_txq);
int dp_queues_create(struct dp_port *port, int socket);
int dp_queues_setup(struct dp_port *port, uint16_t nb_rxd, uint16_t nb_txd,
		    int socket);
void dp_queues_free(struct dp_port *port);

/* dp_netns.c: enter the port's namespace around control operations */
int dp_netns_enter(const char *name, int *saved_fd_p);
void dp_netns_leave(int saved_fd);
/* dp_eal.c */
uint64_t dp_ms_to_tsc(uint64_t ms);

/* Chained (multi-segment) TX is safe on the port: false for a memif whose
 * bsize= DPDK's one-segment-per-slot copy path would take (dp_config.c). */
bool dp_memif_chained_tx_ok(const struct dp_config *cfg);

#ifdef __cplusplus
}
#endif

/*
 * One frame per mbuf: room for MTU + 84 bytes rounded up to 1 KiB, which is
 * net_af_packet's TPACKET frame (framesz=, 66 bytes of header before the
 * Ethernet frame; the PMD wants data room >= framesz - 32) as sdp-testbed
 * sizes it; MTU + 18 alone fell short of it for MTUs such as 8150.
 * The pools' data room, headroom included (rte_pktmbuf_pool_create).
 */
#define DP_AFP_FRAME_OVERHEAD 84u

#ifdef __cplusplus
static_assert
#else
_Static_assert
#endif
	(((DP_MTU_MAX + DP_AFP_FRAME_OVERHEAD + 1023) & ~1023u) +
			 RTE_PKTMBUF_HEADROOM <= UINT16_MAX,
	 "DP_MTU_MAX: its frame must fit one mbuf (16-bit buf_len)");

static inline uint16_t dp_mbuf_data_room(uint16_t mtu)
{
	uint32_t need = (uint32_t)mtu + DP_AFP_FRAME_OVERHEAD;

	if (need < RTE_MBUF_DEFAULT_DATAROOM)
		need = RTE_MBUF_DEFAULT_DATAROOM;
	need = (need + 1023) & ~1023u;
	return (uint16_t)(need + RTE_PKTMBUF_HEADROOM);
}

#endif /* DP_INTERNAL_H */
