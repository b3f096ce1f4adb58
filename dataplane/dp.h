/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp.h - public API of the sctp-dpdk dataplane.
 *
 * One dataplane port per process (an MPI rank): a DPDK ethdev (PCI/VF,
 * memif, af_packet, af_xdp, virtio-user, ...) with one RX and one TX queue
 * owned by one polling thread (queues=N on memif: N queue pairs, see
 * "Several queue pairs" at the end).  The port speaks Ethernet + ARP + IPv4 and
 * hands IPv4 payloads of the protocols it carries (SCTP, SCTP over UDP per
 * RFC 6951, and the experimental protocol used by sdp-ping) to the layer
 * above through a zero-copy ring of mbuf references:
 *
 *   NIC -> rx_burst -> classify -+-> ARP: answered / cache updated, freed
 *                                +-> malformed/foreign: counted, freed
 *                                +-> CRC32c (SCTP) -> rx ring -> dp_port_recv
 *
 *   dp_port_send -> framing (+CRC32c) -> [ARP hold] -> pacer -> TX buffer
 *                -> tx_burst (when full, on flush, or on the drain deadline)
 *
 * Threading: every dp_port_* call on a port is made by the port's owning
 * thread, except dp_port_recv/dp_port_set_rate which may run on one other
 * thread (the rx ring is SPSC; the rate is published atomically).
 *
 * Buffer ownership: an mbuf returned by dp_port_recv belongs to the caller,
 * who returns it with dp_pkt_free() (it may keep it as long as it likes; the
 * port's pool is sized for that by rx_ring).  An mbuf passed to
 * dp_port_send belongs to the dataplane from then on, also on error.
 */
#ifndef DP_H
#define DP_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include <rte_mbuf.h>

#include "sdp.h"
#include "dp_chunk.h" /* the SCTP chunk walk (inline) */

#ifdef __cplusplus
extern "C" {
#endif

#define DP_IPPROTO_SCTP 132
#define DP_IPPROTO_UDP 17
#define DP_IPPROTO_EXP 253 /* RFC 3692 experimental: sdp-ping frames */
#define DP_SCTP_UDP_PORT 9899 /* RFC 6951 */
#define DP_MAX_STATIC_ARP 4096 /* arp= entries (< DP_ARP_MAX_ENTRIES) */
#define DP_MTU_MIN 576
/* The largest IP MTU: a frame fills one mbuf, whose buf_len is 16-bit
 * (data room <= 65535 with the 128-byte headroom), and net_af_packet's
 * TPACKET frame (MTU + 84 rounded up to 1 KiB, 64512 here) must fit it. */
#define DP_MTU_MAX 64000
#define DP_ETH_OVERHEAD 18 /* Ethernet header + FCS */

/* dp_config.memif_gate=auto: gate memif ports that are not paced by
 * configuration (rate=, dest_rate=), see dataplane/dp_gate.c */
#define DP_MEMIF_GATE_AUTO 2

/** CRC32c back-ends for SCTP (RFC 3309/4960). */
enum dp_crc_backend {
	DP_CRC_AUTO = 0, /**< memif: NONE; else NIC offload if advertised,
			  * else ISA-L */
	DP_CRC_OFFLOAD,	 /**< the port's SCTP checksum offload */
	DP_CRC_ISAL,	 /**< ISA-L crc32_iscsi (default software path) */
	DP_CRC_SSE42,	 /**< SSE4.2 crc32 instruction (rte_hash_crc) */
	DP_CRC_TABLE,	 /**< portable byte-wise table (reference) */
	DP_CRC_NONE,	 /**< zero checksum (RFC 9653), memif only: TX
			  * writes 0, RX accepts 0 unverified and
			  * verifies (ISA-L) any other value */
	DP_CRC_MAX,
};

/** Pacing mode of the port's TX queue (see pacing/pace.h). */
enum dp_pace_mode {
	DP_PACE_AUTO = 0, /**< gap mode on PCI ports, deadline on vdevs */
	DP_PACE_DEADLINE,
	DP_PACE_GAP,
};

#define DP_DROP_LIST_MAX 64 /* indices in one drop= list */

/**
 * The drop= hook of one direction (seed 004 dropped inside its receive
 * function): which packets carrying an SCTP DATA chunk to drop, by their
 * 1-based index among that direction's DATA packets.  Deterministic.
 */
struct dp_drop_spec {
	uint32_t every;			 /* every Nth; 0 = use list */
	uint32_t nb;			 /* entries in list */
	uint64_t list[DP_DROP_LIST_MAX]; /* ascending indices */
};

struct dp_arp_static {
	uint32_t ip_be;	    /* IPv4 address, network order */
	uint8_t mac[6];
};

/**
 * Validated configuration of one process's dataplane: the EAL and one port.
 * Parsed from a single string by dp_config_parse(); every field has a safe
 * default so "dev=net_memif0,... ip=10.0.0.1" is enough.
 */
struct dp_config {
	/* EAL */
	char file_prefix[64];	/* --file-prefix; default sdp-<pid> */
	char eal_extra[256];	/* extra EAL arguments, space separated */
	uint32_t mem_mb;	/* -m; default 512 */
	bool huge;		/* use hugepages; default false (--no-huge) */
	int lcore;		/* -l; default: first CPU of our affinity */
	/* Port */
	char devargs[512];	/* vdev devargs or PCI address */
	char netns[64];		/* network namespace of the port's kernel
				 * interface (af_packet/af_xdp), "" = ours */
	bool is_pci;		/* devargs name a PCI device */
	uint32_t ip_be;		/* our IPv4 address, network order */
	uint8_t prefix_len;	/* on-link prefix; default 24 */
	uint16_t mtu;		/* IP MTU; default 1500 */
	uint16_t nb_rxd;	/* RX descriptors; default 1024 */
	uint16_t nb_txd;	/* TX descriptors; default 1024 */
	uint32_t nb_mbufs;	/* pool size; 0 = computed from the rest */
	uint32_t rx_ring;	/* zero-copy ring entries (power of 2) */
	uint32_t tx_hold;	/* frames held for pacing/ARP (power of 2) */
	uint32_t tx_drain_us;	/* buffered TX drain deadline; default 100 */
	bool udp_encap;		/* SCTP over UDP (RFC 6951) */
	uint16_t udp_port;	/* encapsulation port; default 9899 */
	uint16_t udp_remote_port; /* destination port towards a peer whose
				   * source port is not known; 0 (default)
				   * = udp_port */
	enum dp_crc_backend crc; /* CRC32c back-end; default AUTO */
	/* ARP */
	uint32_t arp_retries;	/* requests before giving up; default 5 */
	uint32_t arp_retry_ms;	/* between requests; default 200 */
	uint32_t arp_ttl_ms;	/* neighbour cache lifetime; default 60000 */
	uint32_t arp_max;	/* neighbours cached before LRU eviction; the
				 * cache grows up to it; default 1048576 */
	uint32_t nb_static_arp;
	struct dp_arp_static static_arp[DP_MAX_STATIC_ARP];
	/* Polling */
	uint32_t idle_polls;	/* empty polls before sleeping; default 256 */
	uint32_t idle_sleep_us; /* sleep when idle; 0 = pure busy poll */
	uint32_t link_wait_ms;	/* wait for link up at start; default 5000 */
	/* Pacing */
	uint64_t pace_rate_bps; /* 0 = unpaced */
	uint64_t link_bps;	/* 0 = from the link speed (or 10G for vdevs) */
	uint32_t pace_queue_us;	/* paced: most queueing delay the pacer
				 * holds before dropping (a short queue, so
				 * SCTP sees a bottleneck, not a 250 ms
				 * hidden delay); default 10000 */
	enum dp_pace_mode pace_mode;
	uint64_t pace_dest_rate_bps; /* per-destination default; 0 = none */
	uint32_t pace_dests;	/* destinations with own pacing state;
				 * default 256 */
	/* drop= hook: SCTP DATA packets dropped on receive / on send */
	struct dp_drop_spec drop_rx, drop_tx;
	/* queues=N: queue pairs of the port (dp_port_*_queue); default 1 */
	uint16_t nb_queues;
	bool own_mac;		/* use 02:5d:<ip> as our MAC; an af_packet
				 * interface keeps its own (own_mac=) */
	uint32_t bye_wait_ms;	/* memif close handshake: wait this long
				 * for the peer's answer; 0 = none;
				 * default 1000 */
	uint32_t memif_gate;	/* 1: memif bursts only while DPDK's
				 * interrupt thread is parked (dp_gate.c);
				 * DP_MEMIF_GATE_AUTO (default): unpaced
				 * memif ports */
};

/**
 * Fill @cfg with defaults, then apply "key=value" tokens separated by
 * whitespace from @text (NULL or "" keeps the defaults).  Keys are listed by
 * dp_config_help().  Each bad token is logged once, naming the key, the
 * value, the limit and the fix.
 * @return 0, or -EINVAL if any token is unknown or out of range.
 */
int dp_config_parse(const char *text, struct dp_config *cfg);

/** Apply defaults only; cannot fail. */
void dp_config_defaults(struct dp_config *cfg);

/** Multi-line help: every key, its default and its range. */
const char *dp_config_help(void);

/**
 * Bring up the EAL for this process (once; later calls only take a
 * reference).  Installs the rte_log sink for SDP_LOG.
 * @return 0; -EINVAL for bad EAL arguments (logged with the fix);
 *         -EALREADY if the EAL was initialised by someone else with other
 *         arguments; -EIO if rte_eal_init failed for another reason.
 */
int dp_eal_init(const struct dp_config *cfg);

/** Drop a reference; the last one cleans the EAL and its runtime dir. */
void dp_eal_fini(void);

/**
 * Remove the runtime dir (/var/run/dpdk/@prefix for root) that the EAL of
 * a process with --file-prefix @prefix left when it was killed or died by
 * a signal (one that ends through dp_eal_fini removes its own): for
 * whoever started that process, once it is reaped.  Only that exact name;
 * never a dir whose EAL still runs (this process's own, or another
 * primary that holds its lock on 'config').
 * @return 0 when the dir is gone or never was; -EBUSY when a live EAL owns
 *         it; -EINVAL when @prefix is not one file name; -EIO.
 */
int dp_eal_runtime_dir_remove(const char *prefix);

/**
 * dp_eal_runtime_dir_remove() for every prefix that begins with @stem, a
 * job's own unique start such as "sdp-<job>-" (its ranks' prefixes).
 * @return how many were removed, or the last error when none was.
 */
int dp_eal_runtime_dirs_remove(const char *stem);

struct dp_port;

/**
 * Probe, configure and start the port described by @cfg, wait for its link
 * (up to cfg->link_wait_ms), detect offloads and log one line per decision.
 * dp_eal_init() must have succeeded.  A process may open several ports:
 * the port is the ethdev named like the devargs' device (the text before
 * the first comma; a PCI address compared as an address), hot-plugged
 * with rte_dev_probe() when the EAL has not probed it (and removed again
 * by dp_port_close()).  Each port has its own pool, rings, ARP cache,
 * pacer and address; cfg's EAL fields are ignored here.
 * @return 0; -EINVAL bad devargs or MTU the PMD refuses (logged with the
 *         fix); -ENOMEM pool or ring allocation; -ENODEV probe failed;
 *         -ETIMEDOUT link did not come up (port is closed again).
 */
int dp_port_open(const struct dp_config *cfg, struct dp_port **port_p);

/**
 * Stop and close the port; frees every mbuf it holds.  Accepts NULL.
 * While a user holds the port (dp_port_hold: an sg endpoint until
 * sg_ep_close) the close is deferred, logged as an error, to the last
 * dp_port_unhold, and the port keeps a reference to the EAL until then
 * (so dp_stop's dp_eal_fini cannot clean the EAL up under it).  mbufs
 * still in use after the device closed (someone kept them) keep the
 * pool allocated until the process exits, logged: their late frees stay
 * safe.
 */
void dp_port_close(struct dp_port *port);

/**
 * A user that keeps references into @port (its mbufs, its rings) holds it
 * from its open to its close: dp_port_close waits for the last
 * dp_port_unhold.  Poll thread only.
 */
void dp_port_hold(struct dp_port *port);
void dp_port_unhold(struct dp_port *port);

/**
 * For a process with one port: dp_eal_init() then dp_port_open(),
 * undoing the first if the second fails.
 * @return 0, or what dp_eal_init()/dp_port_open() returned (logged).
 */
int dp_start(const struct dp_config *cfg, struct dp_port **port_p);

/** dp_port_close() then dp_eal_fini(): the reverse of dp_start(). */
void dp_stop(struct dp_port *port);

/**
 * One iteration of the port's loop: drain TX if its deadline passed or the
 * pacer allows, receive one burst, classify it, answer ARP, retry ARP,
 * and enqueue deliverable packets on the rx ring.
 * @return number of frames received (0 when idle).
 */
unsigned int dp_port_poll(struct dp_port *port, uint64_t now_tsc);

/**
 * Take up to @n delivered packets.  Each mbuf's data starts at the L4
 * payload of the IPv4 packet: the SCTP common header (after the UDP header
 * when encapsulated), or the sdp-ping payload.  Use dp_pkt_info() for the
 * sender and protocol.
 * @return number of mbufs stored in @pkts.
 */
unsigned int dp_port_recv(struct dp_port *port, struct rte_mbuf **pkts,
			  unsigned int n);

/** Where a delivered packet came from. */
struct dp_pkt_info {
	uint32_t src_ip_be;
	uint32_t dst_ip_be;
	uint8_t proto;	    /* DP_IPPROTO_SCTP (also when UDP-encapsulated) */
	bool udp_encap;
	uint16_t udp_sport; /* host order, when udp_encap */
};

/** Decode the metadata of a packet returned by dp_port_recv(). */
void dp_pkt_info(const struct rte_mbuf *m, struct dp_pkt_info *info);

/**
 * RFC 6951: send SCTP packet @m, about to go to dp_port_send*(@port), to
 * UDP port @dport (host order), the source port of the peer's packets
 * (dp_pkt_info.udp_sport), instead of udp_remote_port.  No effect when
 * @dport is 0 or the port does not encapsulate.  Set it on every send: it
 * is consumed by the send.
 */
void dp_pkt_set_udp_dport(const struct dp_port *port, struct rte_mbuf *m,
			  uint16_t dport);

/**
 * Allocate an empty TX mbuf from the port's pool with headroom for every
 * header the port prepends.  @return NULL when the pool is exhausted.
 */
struct rte_mbuf *dp_pkt_alloc(struct dp_port *port);

/** Return a packet to its pool.  Accepts NULL. */
void dp_pkt_free(struct rte_mbuf *m);

/**
 * An mbuf without data room from the port's second pool, to attach an
 * external buffer to (rte_pktmbuf_attach_extbuf) and chain behind a
 * dp_pkt_alloc() mbuf: dp_port_send takes multi-segment packets whose
 * first segment holds at least the SCTP common header.
 * @return NULL when that pool is exhausted (or could not be created);
 *         not counted as a drop (the caller copies instead).
 */
struct rte_mbuf *dp_pkt_ext_alloc(struct dp_port *port);

/**
 * Whether packets on @port may carry external buffers (memory outside
 * DPDK's, without an IOVA): only when its driver copies transmitted bytes
 * with the CPU and takes multi-segment packets.  False: dp_pkt_ext_alloc
 * always returns NULL, and a layer above writes each packet into one mbuf.
 */
bool dp_port_tx_ext(const struct dp_port *port);

/** mbufs of the port's two pools (dp_pkt_alloc, dp_pkt_ext_alloc) in use:
 * in the rings, queues, the NIC and the layers above. */
unsigned int dp_port_mbufs_in_use(const struct dp_port *port);

/**
 * Frame the L4 payload in @m (SCTP packet or sdp-ping payload) as IPv4
 * @proto to @dst_ip_be, fill the SCTP CRC32c when @proto is SCTP (software
 * or offload), and queue it for transmission.  An unresolved neighbour is
 * resolved by ARP first; the packet is held meanwhile.
 * The mbuf is consumed in every case.
 * @return 0 queued; -EMSGSIZE payload above the MTU; -EHOSTUNREACH
 *         destination off-link; -ENOBUFS dropped and counted: ARP hold
 *         queue full (drop_hold_full), pacer queue full (pace_drops) or
 *         TX buffer held full by the NIC (drop_tx_full; frames already
 *         in the buffer are kept, this one is refused: the caller may
 *         send it again, as usrsctp does with chunks of a packet whose
 *         output failed with ENOBUFS).  A packet the
 *         drop= hook chooses is freed, counted (drop "hook") and 0 returned,
 *         as a lossy wire would.
 */
int dp_port_send(struct dp_port *port, uint32_t dst_ip_be, uint8_t proto,
		 struct rte_mbuf *m, uint64_t now_tsc);

/**
 * @return true while frames wait in the port (pacer or TX buffer): a
 * polling loop must not sleep then, or paced frames leave late.
 */
bool dp_port_tx_pending(const struct dp_port *port);

/** Frames waiting in the port (pacer fifo + TX buffer). */
unsigned int dp_port_tx_queued(const struct dp_port *port);

/** Push buffered frames to the NIC now (the pacer still applies). */
void dp_port_flush(struct dp_port *port, uint64_t now_tsc);

/**
 * An application send (outside the poll loop) has framed its packets:
 * push them to the NIC now, so they do not wait for the caller's next
 * poll (0.5-1.7 us of UCP/MPI work in a ping-pong, traced), unless the
 * port batches its TX to one burst per poll: net_af_packet, where every
 * burst is a sendto() system call.
 */
void dp_port_send_flush(struct dp_port *port, uint64_t now_tsc);

/**
 * Change the pacing rate of the port's TX queue; 0 = unpaced.  Safe from
 * any thread; applied by the owning thread at its next poll.
 * @return 0, or -EINVAL when above the link rate (logged with the fix).
 */
int dp_port_set_rate(struct dp_port *port, uint64_t rate_bps);

/** Current pacing rate of the port's TX queue (0 = unpaced). */
uint64_t dp_port_rate(const struct dp_port *port);

/*
 * Per-destination pacing (seed 001 all-to-all: every receiver has its own
 * bottleneck): frames to each IPv4 destination leave at that destination's
 * own rate, under the queue's total rate (dp_port_set_rate).  Destinations
 * without a rate of their own use the default (dest_rate=, 0 = not paced
 * per destination); at most pace_dests destinations keep their own state
 * (see pacing/pace.h, pace_fq).  Both calls are safe from any thread: the
 * request is queued and applied by the owning thread at its next poll.
 */

/**
 * Pace frames to @ip_be (network order) at @rate_bps; 0 = not paced per
 * destination; DP_DEST_RATE_DEFAULT = follow the default again.
 * @return 0, -EINVAL (above the link rate, logged), -EBUSY (too many
 *   requests not yet applied: the port is not being polled; logged).  A
 *   table that has no room (pace_dests) is logged when applied.
 */
#define DP_DEST_RATE_DEFAULT UINT64_MAX
int dp_port_set_dest_rate(struct dp_port *port, uint32_t ip_be,
			  uint64_t rate_bps);

/** Set the default per-destination rate; same returns as above. */
int dp_port_set_dest_default_rate(struct dp_port *port, uint64_t rate_bps);

/** The default per-destination rate last requested (any thread). */
uint64_t dp_port_dest_default_rate(const struct dp_port *port);

/** Frame drop reasons, each with its own counter. */
enum dp_drop {
	DP_DROP_SHORT = 0,	/* shorter than Ethernet + IPv4 header */
	DP_DROP_ETHERTYPE,	/* neither IPv4 nor ARP (incl. VLAN) */
	DP_DROP_GAP_FRAME,	/* 802.3x PAUSE frames from a gap pacer */
	DP_DROP_IP_HDR,		/* version, IHL or options invalid */
	DP_DROP_IP_LEN,		/* total length inconsistent with frame */
	DP_DROP_IP_CKSUM,	/* IPv4 header checksum wrong */
	DP_DROP_IP_FRAG,	/* fragments are not reassembled */
	DP_DROP_NOT_FOR_US,	/* other MAC or IPv4 destination */
	DP_DROP_PROTO,		/* IPv4 protocol we do not carry */
	DP_DROP_UDP,		/* bad UDP header or port for encapsulation */
	DP_DROP_SCTP_LEN,	/* SCTP packet shorter than its headers */
	DP_DROP_SCTP_CRC,	/* CRC32c mismatch */
	DP_DROP_ARP,		/* malformed ARP */
	DP_DROP_ARP_UNTRUSTED,	/* ARP sender MAC is not the Ethernet
				 * source, and not a reply we asked for */
	DP_DROP_RX_RING_FULL,	/* consumer fell behind */
	DP_DROP_TX_FULL,	/* NIC refused frames */
	DP_DROP_HOLD_FULL,	/* ARP hold queue full */
	DP_DROP_ARP_TIMEOUT,	/* neighbour never answered */
	DP_DROP_NO_MBUF,	/* pool exhausted */
	DP_DROP_HOOK,		/* chosen by the drop= hook (tests, seed 004) */
	DP_DROP_SCTP_CRC_ZERO,	/* checksum 0 on a port that verifies
				 * every CRC: the peer runs crc=none
				 * (logged once) */
	DP_DROP_ARP_SENDER,	/* ARP sender 0.0.0.0, our own address, or
				 * outside our subnet: never learned */
	DP_DROP_HOLD_DEST_FULL,	/* ARP hold queue: DP_ARP_HOLD_DEST frames
				 * already wait for this destination */
	DP_DROP_MAX,
};

/** Short name of a drop reason ("short", "ip_cksum", ...). */
const char *dp_drop_name(enum dp_drop reason);

struct dp_stats {
	uint64_t rx_pkts, rx_bytes;	/* frames received from the NIC */
	uint64_t tx_pkts, tx_bytes;	/* frames handed to the NIC */
	uint64_t delivered;		/* packets enqueued on the rx ring */
	uint64_t arp_rx, arp_tx;	/* ARP frames in/out */
	/* neighbour cache (port-wide, queue 0): entries evicted for new
	 * ones, of which confirmed (answered our request); senders of
	 * unsolicited requests not learned because only confirmed entries
	 * could have made room */
	uint64_t arp_evictions, arp_evict_confirmed, arp_learn_refused;
	uint64_t gap_frames;		/* pacer gap frames the NIC took */
	uint64_t pace_drops;		/* frames dropped: pacer queue full
					 * (pace_queue_us) */
	uint64_t pace_clamps;		/* pacer gaps clamped */
	uint64_t pace_late;		/* late polls, catch-up limited */
	uint64_t pace_rate_changes;	/* rates applied */
	uint64_t crc_sw, crc_hw;	/* SCTP CRCs checked/filled in sw/hw */
	uint64_t drops[DP_DROP_MAX];	/* by reason */
	uint64_t pace_polls;		/* polls that ran the pacer (an
					 * unpaced, empty pacer is skipped) */
	uint64_t pace_dest_drops;	/* of pace_drops: a destination's
					 * queue was full (its own rate) */
	uint64_t pace_dest_overflow;	/* frames on the shared flow: more
					 * destinations than pace_dests */
	uint64_t tx_bursts;		/* rte_eth_tx_burst calls (af_packet:
					 * one sendto each) */
	uint64_t tx_held;		/* frames held by dp_port_send_held */
	uint64_t bye_rx;		/* memif close handshake frames */
	uint64_t memif_zc;		/* 1: a memif client in zero-copy
					 * mode (its rings hold our mbufs) */
	uint64_t pool_in_use;		/* mbufs of the port's pool out
					 * (at the snapshot) */
	uint64_t crc_zero_tx;		/* SCTP packets sent with checksum
					 * 0 (crc=none: no CRC computed) */
	uint64_t crc_zero_rx;		/* SCTP packets accepted unverified
					 * for their checksum 0 (crc=none) */
	uint64_t memif_gated;		/* 1: a memif port whose bursts
					 * wait for DPDK's interrupt thread
					 * (memif_gate, dp_gate.c) */
	uint64_t afp_kicks;		/* af_packet: our own sendto kicks of
					 * the PMD's TX ring (dp_afp_kick.c) */
	uint64_t afp_kick_bytes;	/* bytes those kicks sent */
};

/** Snapshot of the port's counters (owning thread). */
void dp_port_stats(const struct dp_port *port, struct dp_stats *stats);

/** Print counters, one "name value" per line, zero drops omitted. */
void dp_stats_print(const struct dp_stats *stats, FILE *f);

/**
 * Write every counter as JSON object members (no braces, so a caller can
 * add its own keys): "rx_pkts": N, ..., "drops": {"reason": N, ...} with
 * zero drops omitted.  Formats like snprintf into @buf of @len bytes.
 * @return the length the whole text needs (truncated if >= @len).
 */
int dp_stats_json(const struct dp_stats *stats, char *buf, size_t len);

/** Link state: true when up; @speed_mbps_p (may be NULL) gets the speed
 * in Mbit/s, 0 when the driver does not know it. */
bool dp_port_link_up(struct dp_port *port, uint32_t *speed_mbps_p);

/** A memif port in the server role: at exit it waits for its client to
 * leave first (DPDK 22.11's memif tears the pair down from its interrupt
 * thread when the client goes). */
bool dp_port_is_memif_server(const struct dp_port *port);

/** A memif port, either role: its link goes down only when the peer
 * process closed its port or exited (sg peer_gone_ms). */
bool dp_port_is_memif(const struct dp_port *port);

/** Our address and the port's MAC. */
uint32_t dp_port_ip(const struct dp_port *port);
void dp_port_mac(const struct dp_port *port, uint8_t mac[6]);
uint16_t dp_port_mtu(const struct dp_port *port);
/** CRC back-end chosen for this port (never DP_CRC_AUTO). */
enum dp_crc_backend dp_port_crc(const struct dp_port *port);
/** DPDK port id, for tools that need ethdev calls. */
uint16_t dp_port_id(const struct dp_port *port);

/*
 * CRC32c (Castagnoli, reflected polynomial 0x82F63B78, init and final xor
 * 0xFFFFFFFF): the check value of "123456789" is 0xE3069283.
 */
const char *dp_crc_name(enum dp_crc_backend be);
/** @return 0 and the back-end, or -EINVAL for an unknown name. */
int dp_crc_parse(const char *name, enum dp_crc_backend *be_p);
/** CRC32c of @len bytes with a software back-end (not OFFLOAD/AUTO;
 * NONE computes with ISA-L). */
uint32_t dp_crc32c(enum dp_crc_backend be, const void *buf, size_t len);
/**
 * Compute and store the CRC32c of the SCTP packet at @sctp (common header
 * first, @len bytes) in its checksum field (in the byte order RFC 4960
 * requires); NONE stores 0 and computes nothing (RFC 9653).
 */
void dp_sctp_crc_fill(enum dp_crc_backend be, void *sctp, size_t len);
/** @return true when the stored CRC32c of the SCTP packet is right;
 * NONE: also when it is 0 (RFC 9653's receiver, nothing computed). */
bool dp_sctp_crc_ok(enum dp_crc_backend be, const void *sctp, size_t len);

/**
 * Idle back-off for polling loops on shared cores (dp_idle.c): after
 * @idle_polls consecutive empty polls, each further empty poll sleeps
 * @sleep_us -- or, where the ports can wake the thread (af_packet: the
 * kernel marks the PMD's socket readable when a frame arrives; see
 * dp_idle_add_port), blocks until a frame arrives, at most block_us, so
 * a rank waiting for a peer leaves its core to the rank computing beside
 * it instead of waking every @sleep_us.
 */
#define DP_IDLE_MAX_PORTS 8
struct dp_idle {
	uint32_t empty;	       /* consecutive empty polls */
	uint32_t idle_polls;   /* threshold */
	uint32_t sleep_us;     /* 0 disables sleeping */
	uint32_t block_us;     /* longest block on the ports' fds */
	uint64_t sleeps;       /* count of sleeps and blocks */
	uint64_t blocks;       /* of which blocked on the ports' fds */
	uint64_t block_wakes;  /* ... and ended by a frame */
	unsigned int nb_ports;
	struct dp_port *ports[DP_IDLE_MAX_PORTS];
};

void dp_idle_init(struct dp_idle *idle, uint32_t idle_polls,
		  uint32_t sleep_us);
/**
 * Let the back-off block on @port's receive notifications (at most
 * @block_us per block; 0 keeps sleeping).  Ports that cannot wake a thread
 * (memif, PCI: nothing but polling sees their frames) are ignored.  The
 * block is skipped while the port has frames to send or a TX kick due.
 * @return 1 if @port can wake the thread, 0 if not, -ENOSPC (table full).
 */
int dp_idle_add_port(struct dp_idle *idle, struct dp_port *port,
		     uint32_t block_us);
/**
 * Call once per loop iteration with the work done (count pending TX as
 * work, see dp_port_tx_pending); may sleep or block.
 */
void dp_idle_update(struct dp_idle *idle, unsigned int work);

/** TSC frequency (Hz) and current TSC, for callers that pass now_tsc. */
uint64_t dp_tsc_hz(void);
uint64_t dp_tsc(void);

/** "10.0.0.1" -> network-order address. @return 0 or -EINVAL. */
int dp_parse_ip(const char *text, uint32_t *ip_be_p);
/** Network-order address -> dotted quad in @buf (>= 16 bytes). */
const char *dp_ip_str(uint32_t ip_be, char *buf, size_t len);

/*
 * Several queue pairs on one port (queues=N: one lane per core).  Queue 0 is the port as above (every dp_port_* call without
 * _queue, ARP, the pacer, the drop= hook); queue k > 0 has its own RX
 * burst, rx ring, TX buffer and counters, so each queue may be polled by
 * its own thread: dp_port_poll_queue/dp_port_recv_queue of queue k run on
 * one thread at a time (queue k's), dp_port_send_queue/flush_queue of
 * queue k > 0 from any thread (a spinlock per queue), calls naming
 * different queues at once.
 * Only a port whose queue k reaches the peer's queue k can carry them:
 * memif (the client's TX ring k is the server's RX ring k, when both ends
 * configure the same queue count).  af_packet spreads frames over queues
 * by kernel fanout and a NIC would need RSS or flow rules by SCTP port
 * (not done): queues > 1 is refused there, naming queues= and the fix.
 * ARP stays on queue 0 (a frame to an unresolved neighbour sent on queue k
 * is handed to queue 0, which holds it and sends it there once resolved);
 * the neighbour table is shared under a spinlock.  Queues k > 0 are not
 * paced.  Both ends must configure the same N: DPDK 22.11's memif maps
 * only the queue count both ends have, and an RX queue beyond it reads
 * ring 0 (the UCX transport refuses unequal LANES, but only once it sees
 * the peer's address).
 */
#define DP_MAX_QUEUES 8

/** Queue pairs of the port (queues=). */
unsigned int dp_port_nb_queues(const struct dp_port *port);

/** dp_port_poll for queue @q (q = 0 is dp_port_poll). */
unsigned int dp_port_poll_queue(struct dp_port *port, uint16_t q,
				uint64_t now_tsc);

/** dp_port_recv for queue @q. */
unsigned int dp_port_recv_queue(struct dp_port *port, uint16_t q,
				struct rte_mbuf **pkts, unsigned int n);

/** dp_port_send on queue @q's TX queue; same returns. */
int dp_port_send_queue(struct dp_port *port, uint16_t q, uint32_t dst_ip_be,
		       uint8_t proto, struct rte_mbuf *m, uint64_t now_tsc);

/** dp_port_flush for queue @q. */
void dp_port_flush_queue(struct dp_port *port, uint16_t q, uint64_t now_tsc);

/** Frames waiting in queue @q's TX buffer (and pacer, q = 0). */
unsigned int dp_port_tx_queued_queue(const struct dp_port *port, uint16_t q);

/**
 * Counters of queue @q alone: frames received and sent on it, delivered,
 * CRCs and drops counted by its thread (ARP and the pacer count on queue
 * 0).  dp_port_stats() sums every queue.
 */
void dp_port_queue_stats(const struct dp_port *port, uint16_t q,
			 struct dp_stats *stats);

/**
 * Like dp_port_send, but the frame is held in the port: it leaves at the
 * tail of the next TX burst that carries any other frame (in the same
 * sendto on af_packet, after them), or when dp_port_release_held moves it
 * to the TX buffer.  For frames whose only urgency is "soon" (SCTP's
 * SACK-only packets, sg's sack_hold_us): they then cost no burst of their
 * own and never leave before a reply queued after them.  Only a port that
 * batches TX (af_packet, where a burst is a system call) holds: any other
 * port, a paced one, or DP_BURST frames already held, sends it like
 * dp_port_send.  Held frames
 * count as dp_port_tx_pending; dp_port_close frees them.
 * @return as dp_port_send.
 */
int dp_port_send_held(struct dp_port *port, uint32_t dst_ip_be,
		      uint8_t proto, struct rte_mbuf *m, uint64_t now_tsc);

/** Frames held by dp_port_send_held and not yet in the TX buffer. */
unsigned int dp_port_held(const struct dp_port *port);

/** Move held frames to the TX buffer: they leave at the next flush. */
void dp_port_release_held(struct dp_port *port, uint64_t now_tsc);

#ifdef __cplusplus
}
#endif

#endif /* DP_H */
