/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sg_internal.h - types shared by the sctp/ files and their unit test.
 * Other components include sg.h only.
 */
#ifndef SG_INTERNAL_H
#define SG_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ring.h>
#include <rte_spinlock.h>

#include "sg.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SG_BURST 32
#define SG_READ_BUDGET 256 /* usrsctp_recvv calls per sg_poll */
#define SG_PEER_MAGIC 0x53475052u /* "SGPR" */
/* Room for the IPv4 header and a possible UDP encapsulation header. */
#define SG_L3_OVERHEAD (20 + 8)
#define SG_SCTP_HDR 12
/* sg_assoc_quiet: slack over sack_delay_ms for the 1 ms timer tick */
#define SG_QUIET_MARGIN_MS 5

/* ---- sg_map.c: open-addressing u32 -> u64 map, key 0 = empty ---- */

#define SG_MAP_SLOTS_MIN 16	    /* slots of a new map */
#define SG_MAP_LIMIT_MAX (1u << 30) /* entries; slots stay a u32 */
#define SG_MAP_SLOT_BYTES (sizeof(uint32_t) + sizeof(uint64_t))

struct sg_map {
	uint32_t *keys;
	uint64_t *vals;
	uint32_t mask;	 /* slots - 1 (power of 2); grows with count */
	uint32_t count;	 /* entries (<= half the slots) */
	uint32_t limit;	 /* max entries */
};

/* An empty map of SG_MAP_SLOTS_MIN slots that grows up to @limit
 * entries (1..SG_MAP_LIMIT_MAX). @return 0, -EINVAL, -ENOMEM. */
int sg_map_init(struct sg_map *map, uint32_t limit);
void sg_map_free(struct sg_map *map);
/* @return true and the value, or false. */
bool sg_map_get(const struct sg_map *map, uint32_t key, uint64_t *val_p);
/* Insert, doubling the table first if it would be more than half full.
 * @return 0; -EINVAL key 0 (the empty mark, never a key); -ENOSPC at
 * limit; -ENOMEM the table could not grow (the map is unchanged then).
 * Replaces an existing key's value. */
int sg_map_put(struct sg_map *map, uint32_t key, uint64_t val);
/* As sg_map_put, but an existing key keeps its value: -EEXIST. */
int sg_map_add(struct sg_map *map, uint32_t key, uint64_t val);
/* @return true when the key was there. */
bool sg_map_del(struct sg_map *map, uint32_t key);

/* ---- sg_stack.c: usrsctp, once per process ---- */

/* Take a reference; the first one initialises usrsctp. @return 0. */
int sg_stack_get(void);
/* Drop a reference; the last one shuts usrsctp down. */
void sg_stack_put(void);
/* Run usrsctp's timers for the ms elapsed since the last run.
 * @return 1 when they ran, else 0. */
unsigned int sg_stack_timers(uint64_t now_tsc);

/* ---- sg_path.c: per-peer path state machine (pure, time in ms) ---- */

/* DP_IPPROTO_EXP payload of a path probe: {magic, sender's primary IPv4,
 * path index, 0...}. */
#define SG_PROBE_MAGIC 0x53445046u /* "SDPF" */
#define SG_PROBE_BYTES 12

struct sg_path {
	uint64_t heard_ms;	 /* last packet from the peer on it */
	uint64_t alive_since_ms; /* start of the current alive spell */
	uint64_t tx_ms;		 /* our last packet on it */
	bool link_down;		 /* the port reports link down */
	bool alive;
};

struct sg_paths {
	uint8_t nb;		 /* paths of the peer (1: no failover) */
	uint8_t active;		 /* path the traffic goes on */
	bool await_tx;		 /* switched; first packet not sent yet */
	bool await_rx;		 /* switched; nothing received on it yet */
	uint64_t switch_ms;	 /* when active last changed */
	uint64_t failovers, failbacks;
	struct sg_path p[SG_PATHS_MAX];
};

/* Every path alive, heard at @now_ms, path 0 active. */
void sg_paths_init(struct sg_paths *ps, unsigned int nb, uint64_t now_ms);
/* Something came from the peer on path @k. */
void sg_paths_heard(struct sg_paths *ps, unsigned int k, uint64_t now_ms);
/* The port of path @k reports its link @up or down. */
void sg_paths_link(struct sg_paths *ps, unsigned int k, bool up);
/* Age the paths; @return the new active path when it changed, else -1. */
int sg_paths_tick(struct sg_paths *ps, const struct sg_path_config *cfg,
		  uint64_t now_ms);
/* Whether path @k carried nothing of ours for probe_ms. */
bool sg_paths_probe_due(const struct sg_paths *ps,
			const struct sg_path_config *cfg, unsigned int k,
			uint64_t now_ms);
/* We sent a packet on path @k. */
void sg_paths_sent(struct sg_paths *ps, unsigned int k, uint64_t now_ms);

/* Failover replay: the last SG_REPLAY_MAX DATA-bearing packets sent (their
 * mbufs kept by a reference).  At a failover, those sent on the dead path
 * since shortly before the peer was last heard there go out again on the
 * new path, so the peer's SACKs reopen the window at once instead of after
 * SCTP's T3 timer (an RTO, backed off, later); duplicates cost the peer
 * one dup TSN report each. */
#define SG_REPLAY_MAX 512

struct sg_replay {
	struct rte_mbuf *m;	/* our reference; NULL = empty */
	const uint8_t *pkt;	/* SCTP packet inside m */
	uint16_t len;
	uint8_t path;
	uint32_t tsn;		/* of its last DATA chunk */
	struct sg_peer *peer;
	uint64_t tx_ms;
};

/* ---- sg_conn.c: AF_CONN link objects ---- */

/*
 * A peer as usrsctp sees it: the AF_CONN address (sconn_addr) of every
 * association with that IPv4 address is a pointer to its sg_peer.  Packets
 * from the peer enter with usrsctp_conninput(peer, ...), so the packet's
 * source and destination address are both the peer object; the socket is
 * bound to all addresses and each peer object is registered with
 * usrsctp_register_address.  Peer objects live until the link is freed.
 */
struct sg_peer {
	uint32_t magic;		/* SG_PEER_MAGIC while valid */
	uint32_t ip_be;		/* peer IPv4 address */
	struct sg_link *link;
	uint64_t last_rx_tsc;	/* when its last packet came in */
	uint64_t last_rx_data_tsc; /* when its last DATA chunk came in */
	uint64_t rx_data_seq;	/* link->seq at that DATA packet */
	uint64_t tx_seq;	/* link->seq at our last packet to it */
	/* Failover: the peer's address on path k (0: ip_be) and its paths'
	 * state; paths.nb 1 until its path addresses are known. */
	uint32_t path_ip_be[SG_PATHS_MAX];
	/* RFC 6951: UDP source port of its latest packet on path k (host
	 * order), where our packets to that path go; 0 until heard (the
	 * port's udp_remote_port then) or without UDP encapsulation. */
	uint16_t path_udp_port[SG_PATHS_MAX];
	/* Verification tags this peer must put on its packets to us: the
	 * Initiate Tags of our latest two INIT / INIT ACK chunks to it (a
	 * retransmitted INIT gets a new INIT ACK tag; the peer may answer
	 * either), network order, 0 = none yet.  Only a packet carrying one
	 * of them changes its UDP ports or its paths' state (sg_conn.c,
	 * "What a packet may change"). */
	uint32_t rx_vtag[2];
	/* RFC 6951 5.4: UDP source port of the latest INIT on path k, where
	 * the INIT ACK answering it goes (0: none pending).  An INIT carries
	 * tag 0, so it moves no path_udp_port; a peer restarted from
	 * another port is answered here all the same. */
	uint16_t init_udp_port[SG_PATHS_MAX];
	struct sg_paths paths;
	uint32_t cum_ack;	/* its latest SACK's cumulative TSN ack */
	bool cum_ack_valid;
	/* Trust (sg_conn.c, "Peers a stranger can create"): a peer is
	 * trusted once an association with it exists (its COOKIE ACK left,
	 * or usrsctp reported the association up) or this process named it
	 * (connect, path addresses); trusted peers live until the link is
	 * freed.  An untrusted one sits on the link's pending list, least
	 * recently heard first, and is reclaimed after pending_ms without a
	 * packet or to make room for a newer stranger; a reclaimed slot
	 * waits on the free list (lru_next) for reuse. */
	bool trusted;
	struct sg_peer *lru_prev, *lru_next;
	uint64_t rx_round;	/* link->rx_round at its last packet */
};

#define SG_PEER_BLOCK 64 /* peers per allocation */

struct sg_link {
	struct dp_port *port;
	uint64_t now_tsc;	/* clock of the current poll / send */
	/* Peers in blocks of SG_PEER_BLOCK, allocated as peers arrive: a
	 * peer's address is stable (usrsctp holds it) and index i lives at
	 * blocks[i / SG_PEER_BLOCK][i % SG_PEER_BLOCK]. */
	struct sg_peer **blocks;
	uint32_t nb_blocks, cap_blocks; /* allocated / slots in blocks[] */
	uint32_t nb_peers, max_peers; /* slots used (live + free) / bound
				       * on live peers */
	struct sg_map peer_map; /* ip_be (primary or path) -> sg_peer * */
	/* Untrusted peers: pending list (least recently heard first), at
	 * most max_pending of them, each reclaimed pending_tsc after its
	 * last packet; reclaimed slots on free_peers. */
	struct sg_peer *pend_head, *pend_tail, *free_peers;
	uint32_t nb_pending, max_pending, nb_free;
	uint64_t pending_tsc;	/* pending_ms in TSC ticks */
	uint64_t rx_round;	/* +1 per sg_link_input / _queue call */
	struct sg_peer *last;	/* last RX lookup */
	struct sg_stats *st;
	uint64_t seq;		/* +1 per DATA packet in and packet out: orders
				 * them for sg_assoc_quiet */
	uint64_t timer_gen;	/* +1 per usrsctp timer run (for lanes) */
	/* Failover (sg_path.c): ports[0] == port; nb_ports 1 without. */
	struct dp_port *ports[SG_PATHS_MAX];
	uint32_t own_ip_be[SG_PATHS_MAX]; /* dp_port_ip of each port */
	unsigned int nb_ports;
	struct sg_path_config pcfg;
	uint64_t ms_div;	/* tsc ticks per ms */
	uint64_t tick_ms;	/* last path tick */
	struct sg_path_stats pst;
	struct sg_replay *replay; /* SG_REPLAY_MAX slots, with paths only */
	uint32_t replay_next;	/* slot written next */
	/* Queues (dp_port_nb_queues > 1, no failover paths): the lane on
	 * SCTP port queue_port0 + q sends on the port's queue q and polls
	 * it; nb_queues 1 = everything on queue 0. */
	uint16_t queue_port0;
	uint16_t nb_queues;
	/* SACK hold (sack_hold_us): while sg_link_input feeds usrsctp,
	 * SACK-only packets go to dp_port_send_held; sg_link_hold_end
	 * decides at the end of the poll */
	uint64_t hold_tsc;	/* sack_hold_us in TSC ticks; 0 = off */
	bool in_input;		/* inside sg_link_input */
	uint64_t held_until_tsc[SG_PATHS_MAX]; /* per port; 0 = not armed */
	/* tx_chain_min: packets from this size on leave as usrsctp's chain
	 * (sg_conn_output_chain); 0 = off */
	uint32_t chain_min_bytes;
	bool rx_ext;		/* cfg rx_ext: usrsctp_conninput_ext */
	struct sg_chain_ref *chain_spare; /* records to reuse (sg_conn.c) */
};

static inline struct sg_peer *sg_link_peer_at(const struct sg_link *link,
					      uint32_t i)
{
	return &link->blocks[i / SG_PEER_BLOCK][i % SG_PEER_BLOCK];
}

/* The peer known under @ip_be (primary or path address), or NULL.  O(1):
 * one hash probe run. */
static inline struct sg_peer *sg_link_peer_find(const struct sg_link *link,
						uint32_t ip_be)
{
	uint64_t v;

	return sg_map_get(&link->peer_map, ip_be, &v) ?
		       (struct sg_peer *)(uintptr_t)v : NULL;
}

/* A link for at most @max_peers peers; the tables start small and grow
 * as peers arrive.  @return 0, -EINVAL, -ENOMEM. */
int sg_link_init(struct sg_link *link, struct dp_port *port,
		 uint32_t max_peers, struct sg_stats *st);
/* Deregister every peer address from usrsctp (while usrsctp is up);
 * conn_output drops packets to released peers from then on. */
void sg_link_release(struct sg_link *link);
/* Free the peer objects (after usrsctp is down or no longer uses them). */
void sg_link_fini(struct sg_link *link);
/* Find or create the peer for @ip_be, trusted: this process names it
 * (connect, path addresses).  @return NULL for an address no peer can
 * have (sg_link_src_invalid), at max_peers or when memory runs out. */
struct sg_peer *sg_link_peer(struct sg_link *link, uint32_t ip_be);
/* Find, or create untrusted, the peer a packet from @ip_be came from: a
 * stranger takes a pending slot, the least recently heard stranger's
 * when max_pending are pending (not one heard in this or the previous
 * input round: its packet may be making an association right now).
 * @return NULL (counted by the caller) when none can be had. */
struct sg_peer *sg_link_peer_rx(struct sg_link *link, uint32_t ip_be);
/* An association with @peer exists: never reclaim it. */
void sg_link_peer_trust(struct sg_link *link, struct sg_peer *peer);
/* Reclaim the strangers not heard for pending_ms (a bounded number per
 * call). @return how many. */
unsigned int sg_link_reclaim(struct sg_link *link, uint64_t now_tsc);
/* Whether no peer can send from @ip_be (network order): 0.0.0.0/8,
 * 127.0.0.0/8, multicast, 240.0.0.0/4 and broadcast, or an address of
 * one of the link's own ports. */
bool sg_link_src_invalid(const struct sg_link *link, uint32_t ip_be);
/* A path probe (DP_IPPROTO_EXP payload @pl of @len bytes) from
 * @src_ip_be on path @k: marks the path heard, or learns a path address
 * not known yet, within the rules in sg_conn.c; anything else is counted
 * (rx_probe_refused, or rx_not_sctp when it is no probe). */
void sg_link_probe_in(struct sg_link *link, unsigned int k,
		      uint32_t src_ip_be, const uint8_t *pl, uint32_t len,
		      uint64_t now_ms);
/* Poll the port and feed received SCTP packets to usrsctp.
 * @return packets fed. */
unsigned int sg_link_input(struct sg_link *link, uint64_t now_tsc);
/* Feed what queue @q of the link's port received to usrsctp (a lane's
 * own queue). @return packets fed. */
unsigned int sg_link_input_queue(struct sg_link *link, uint16_t q,
				 uint64_t now_tsc);
/* End of a poll: release the SACKs held on each port unless the poll
 * @delivered messages (then they wait up to hold_tsc for a reply to ride
 * on).  Before the poll's flush. */
void sg_link_hold_end(struct sg_link *link, unsigned int delivered,
		      uint64_t now_tsc);
/* Move every held SACK to the TX buffers (someone waits for them). */
void sg_link_hold_release(struct sg_link *link, uint64_t now_tsc);
/* Age every peer's paths, switch, probe (once per ms). @return work. */
unsigned int sg_link_paths_tick(struct sg_link *link, uint64_t now_tsc);
/* Record that @peer is reachable at @ips[k] over path k+1 (0: no
 * change).  @return 0; -EINVAL an address no peer can have; -EEXIST an
 * address already belongs to another peer; -ENOSPC, -ENOMEM the table
 * is full. */
int sg_link_peer_paths(struct sg_link *link, struct sg_peer *peer,
		       const uint32_t *ips, unsigned int n);
/* usrsctp's conn_output callback (any link: addr is the peer). */
int sg_conn_output(void *addr, void *buf, size_t len, uint8_t tos,
		   uint8_t set_df);
/* usrsctp's conn_output buffer hooks (usrsctp_set_conn_output_alloc,
 * scripts/usrsctp-patches/0002): the packet is written into the data area
 * of an mbuf conn_output then sends without a copy. */
void *sg_conn_output_alloc(void *addr, size_t len);
void sg_conn_output_free(void *addr, void *buf);
/* usrsctp's chain hook (usrsctp_set_conn_output_chain, usrsctp-patches/
 * 0004): a packet of at least tx_chain_min bytes leaves as a chain of
 * mbufs whose payload segments are usrsctp's own buffers. */
struct usrsctp_conn_seg;
int sg_conn_output_chain(void *addr, const struct usrsctp_conn_seg *segs,
			 int nsegs, size_t len, uint8_t tos, uint8_t set_df,
			 void *chain);
/* Receive without usrsctp's copy (rx_ext, usrsctp-patches/0003): the
 * mbufs usrsctp holds now, process-wide; it takes a packet without a copy
 * only while that is below its pool's size / SG_RX_EXT_POOL_DIV (the rest
 * of the pool feeds the NIC's RX ring, the TX path and the rx ring). */
#define SG_RX_EXT_POOL_DIV 4
uint32_t sg_rx_ext_held_now(void);

/* ---- sg_rxring.c: receive descriptors and the zero-copy rx ring ---- */

struct sg_rxpool;

struct sg_rxdesc {
	struct sg_msg_desc pub;	  /* first: sg_msg_desc * == sg_rxdesc * */
	struct sg_rxpool *pool;
	uint32_t cap;		  /* data capacity in bytes */
};

struct sg_rxpool {
	/* LIFO: the descriptor released last is taken first, so a steady
	 * exchange reuses one cache-hot descriptor instead of rotating
	 * through all of them (a FIFO wrote every message into memory
	 * untouched for rx_descs messages: cache misses, and page faults on
	 * the first round).  Pushed by the consumer, popped by
	 * the poll thread, under free_lock (uncontended: one pair of
	 * atomic operations per message). */
	void **free;		  /* nb entries; free[0..free_top) are free */
	uint32_t free_top;
	rte_spinlock_t free_lock;
	struct rte_ring *ready;	  /* SP (poll thread) / SC (consumer) */
	uint8_t *mem;
	uint32_t nb, stride, cap, headroom;
};

int sg_rxpool_init(struct sg_rxpool *pool, const struct sg_config *cfg,
		   const void *owner);
void sg_rxpool_fini(struct sg_rxpool *pool);
/* A free descriptor (poll thread) or NULL. */
struct sg_rxdesc *sg_rxpool_get(struct sg_rxpool *pool);
void sg_rxpool_put_chain(struct sg_msg_desc *head);
/* Publish a complete message; never fails (ring holds every desc). */
void sg_rxpool_publish(struct sg_rxpool *pool, struct sg_msg_desc *head);

/* ---- sg_notify.c: association events ---- */

struct sg_evq {
	struct sg_event *ev;
	uint32_t size, head, tail; /* head: next read; tail: next write */
};

int sg_evq_init(struct sg_evq *q, uint32_t size);
void sg_evq_fini(struct sg_evq *q);
void sg_evq_push(struct sg_ep *ep, enum sg_event_type type,
		 sg_assoc_t assoc, uint16_t error);
/* Handle one usrsctp notification, of which @len bytes were kept. */
void sg_notify_handle(struct sg_ep *ep, const void *buf, size_t len);
/* A piece of a notification as usrsctp_recvv returned it; @last: it
 * came with MSG_EOR (the notification is handled then). */
void sg_notify_piece(struct sg_ep *ep, const void *buf, size_t len,
		     bool last);
/* Bytes of a notification kept: its fixed part and the start of any
 * cause list (sg_notify.c). */
#define SG_NOTIFY_BYTES 256

/* ---- sg_ep.c / sg_msg.c ---- */

struct sg_assoc_info {
	uint32_t peer_ip_be;
	uint16_t peer_port;	/* host order */
	bool up;
};

/* A large message being handed to usrsctp in pieces (SCTP_EXPLICIT_EOR). */
struct sg_bigsend {
	bool active;
	sg_assoc_t assoc;
	uint16_t stream;
	uint32_t flags;
	uint32_t ppid;
	struct iovec iov[SG_IOV_MAX];
	int iovcnt;
	int cur;		/* current iov */
	size_t off;		/* offset in iov[cur] */
	uint8_t *bounce;	/* owned copy of the rest, or NULL */
	/* The first packet's worth of a message given in several pieces,
	 * gathered (head_cap bytes, allocated at open): usrsctp sends each
	 * piece handed to it without EOR at once (SCTP_NODELAY), so a small
	 * leading piece (a UCT/UCP header in front of zcopy data) became a
	 * packet of its own, with its own SACK. */
	uint8_t *head;
	size_t head_cap;
	/* sg_send_zc (sg_zc.c): the message's completion; iov[0] is a
	 * header to copy (zc_copy_first) */
	struct sg_zc *zc;
	bool zc_copy_first;
};

/* Associations with untransmitted bytes one endpoint tracks; beyond it a
 * send's rest still leaves, only unseen by sg_ep_unsent (counted). */
#define SG_UNSENT_TRACK 64

struct sg_ep {
	struct sg_config cfg;
	struct socket *so;
	struct sg_link link;	 /* own link (unused by a lane) */
	struct sg_link *lk;	 /* &link, or a lane's base's link */
	struct sg_ep *base;	 /* lane: the endpoint owning the port */
	unsigned int nb_lanes;	 /* base: lanes open on it */
	uint64_t timer_gen_seen; /* lane: link->timer_gen last checked */
	uint16_t queue;		 /* port queue this endpoint polls (lanes
				  * on a port with queues; else 0) */
	struct sg_rxpool rx;
	struct sg_msg_desc *rx_head, *rx_tail; /* message being read */
	bool readable;		 /* upcall said data/notification ready */
	bool rx_stalled;	 /* no free descriptor at the last read */
	struct sg_bigsend big;
	struct sg_evq evq;
	uint8_t notif[SG_NOTIFY_BYTES]; /* notification being read */
	uint32_t notif_len;	 /* bytes of it kept so far */
	bool notif_cut;		 /* it was longer than SG_NOTIFY_BYTES */
	struct sg_map assocs;	 /* assoc id -> packed sg_assoc_info */
	struct sg_stats st;
	/* Direct placement (sg_place.c) */
	sg_place_fn place;
	sg_place_done_fn place_done;
	void *place_arg;
	uint32_t peek_bytes;	 /* first piece of a message */
	bool peek_on;		 /* peek new messages (sg_ep_place_peek) */
	bool rx_placing;	 /* rx_head's rest goes to place() buffers */
	bool rx_discarding;	 /* ... into scratch: destination gone */
	uint8_t *scratch;
	size_t scratch_bytes;
	/* A memif peer that left (sg_gone.c) */
	uint64_t gone_check_tsc; /* next link check */
	uint64_t gone_down_tsc;	 /* every port first seen down; 0: up */
	bool gone_done;		 /* aborted for this time down */
	uint64_t gone_aborts_before; /* st.peer_gone_aborts when it went
				      * down (the first pass logs) */
	/* Zero-copy send (sg_zc.c) */
	struct sg_zc *zc_released;	/* LIFO of released, not delivered */
	struct sg_zc *zc_live;		/* every undelivered one */
	struct sg_zc *zc_spare;		/* delivered, to reuse */
	struct sg_zc_stats zc_st;
	/* Associations whose last send left bytes queued in usrsctp, not
	 * yet transmitted (sg_assoc_unsent): re-checked at every poll. */
	sg_assoc_t unsent[SG_UNSENT_TRACK];
	unsigned int nb_unsent;
};

/* ---- sg_zc.c: one sg_send_zc message ---- */
struct sg_zc {
	struct sg_ep *ep;		/* NULL: orphaned by sg_ep_close */
	sg_send_done_fn done;
	void *arg;
	uint32_t refs;			/* sg's hold + usrsctp calls */
	int status;			/* < 0: failed while handed over */
	bool silent;			/* refused by sg_send_zc: no done */
	sg_assoc_t assoc;
	struct sg_zc *next;		/* ep->zc_released */
	struct sg_zc *lprev, *lnext;	/* ep->zc_live */
};

struct sg_zc *sg_zc_new(struct sg_ep *ep, sg_assoc_t assoc,
			sg_send_done_fn done, void *arg);
/* One reference more (before each usrsctp_sendv_ext); its free_fn. */
void sg_zc_get(struct sg_zc *z);
void sg_zc_release_cb(void *arg);
/* sg_msg.c: the big send's part of sg_assoc_zc_detach. */
ssize_t sg_big_zc_detach(struct sg_ep *ep, sg_assoc_t assoc, uintptr_t lo,
			 uintptr_t hi);
/* Drop a reference; the last makes it deliverable. */
void sg_zc_put(struct sg_zc *z);
/* Run the done functions of the released ones. @return how many. */
unsigned int sg_zc_deliver(struct sg_ep *ep);
/* At close, after usrsctp_close: deliver the released (-ECONNRESET),
 * orphan the rest (their done never runs). */
void sg_zc_close(struct sg_ep *ep);

uint64_t sg_assoc_pack(const struct sg_assoc_info *ai);

/* A memif peer that left: abort the associations once every port of the
 * link was down peer_gone_ms (sg_gone.c).  @return associations aborted. */
unsigned int sg_gone_tick(struct sg_ep *ep, uint64_t now_tsc);
void sg_assoc_unpack(uint64_t v, struct sg_assoc_info *ai);
/* Learn (or refresh) the peer of @assoc from usrsctp; marks it up and
 * trusts its peer.  @return 0; -ENOSPC, -ENOMEM the association table
 * could not take it: the association is aborted (logged, counted). */
int sg_ep_assoc_up(struct sg_ep *ep, sg_assoc_t assoc);
void sg_ep_assoc_gone(struct sg_ep *ep, sg_assoc_t assoc);

/* Read ready messages and notifications. @return messages completed. */
unsigned int sg_msg_read(struct sg_ep *ep);
/* Publish rx_head (complete) with @flags added. */
void sg_msg_publish(struct sg_ep *ep, uint16_t flags);
/* Read the rest of rx_head into place() buffers (rx_placing set): one
 * read.  @return 1 bytes read (*done + 1 when the message completed);
 * 0 nothing to read now; -1 the first place() declined (rx_placing is
 * cleared: read the message into descriptors). */
int sg_place_read(struct sg_ep *ep, unsigned int *done);
/* Forget a partly placed message (its association went). */
void sg_place_reset(struct sg_ep *ep);

/* After a send on @assoc: track it if usrsctp kept bytes back. */
void sg_unsent_note(struct sg_ep *ep, sg_assoc_t assoc);
/* Forget the tracked associations whose bytes have all left. */
void sg_unsent_update(struct sg_ep *ep);

/* Continue a large send. @return 1 when bytes were taken. */
unsigned int sg_msg_send_more(struct sg_ep *ep);
/* Drop a large send to a vanished association. */
void sg_msg_send_abort(struct sg_ep *ep, sg_assoc_t assoc);

#ifdef __cplusplus
}
#endif

#endif /* SG_INTERNAL_H */
