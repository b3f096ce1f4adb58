/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sctp_dpdk.h - internal header of the UCT transport `sctp_dpdk`: the
 * component, its memory domain, the process-wide context, the interface and
 * the endpoint, shared by the ucx-tl .c files and the unit tests (like UCX
 * src/uct/tcp/tcp.h).
 *
 * The component is not one of the modules libuct loads by name (Debian's
 * build has uct_MODULES ":ib:rdmacm:cma"); it registers itself from an ELF
 * constructor (UCT_SINGLE_TL_INIT(..., ctor, ...)) when this shared object
 * is in the process, through LD_PRELOAD or by being linked in.  libuct is a
 * DT_NEEDED dependency, so its lists are initialised before our constructor
 * appends to them.
 *
 * Structures below embed UCX base structures (uct_md_t, uct_base_iface_t)
 * whose layout depends on UCX's config.h (ENABLE_STATS, ...).  This file
 * must therefore be compiled against the UCX 1.13.1 source tree configured
 * with Debian's flags (scripts/setup-ucx-src.sh), with HAVE_CONFIG_H.
 *
 * Object model (see README.md, "Design"):
 *
 *   process:  one uct_sctp_dpdk_ctx_t = EAL + dp_port + sg_ep, refcounted by
 *             the ifaces, kept until exit (the EAL cannot come back)
 *   iface:    one per UCX worker, a 16-bit id unique in the process; its own
 *             RX queue, filled by whichever thread polls the sg_ep and
 *             drained by the iface's own progress (AM handlers run in the
 *             iface's thread)
 *   peer:     one SCTP association per remote process (IPv4 + SCTP port),
 *             shared by every ep of every iface to that process
 *   ep:       one SCTP stream (1..streams-1; 0 is reserved), so the AMs of
 *             one ep stay ordered and independent eps do not block each
 *             other
 */
#ifndef UCT_SCTP_DPDK_H
#define UCT_SCTP_DPDK_H

#include <uct/base/uct_iface.h>
#include <uct/base/uct_md.h>
#include <pthread.h>
#include <ucs/datastruct/list.h>
#include <ucs/datastruct/mpool.h>
#include <ucs/datastruct/queue.h>
#include <ucs/type/spinlock.h>

#include <rte_byteorder.h>

#include "sg.h"
#include "sctp_dpdk_stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Component, memory domain and transport name.  UCT_TL_NAME_MAX is 10, so
 * this 9-character name is the longest a transport can have. */
#define UCT_SCTP_DPDK_NAME "sctp_dpdk"

/* Environment prefix after "UCX_": UCX_SCTP_DPDK_DEVARGS, ... */
#define UCT_SCTP_DPDK_CONFIG_PREFIX "SCTP_DPDK_"
#define UCT_SCTP_DPDK_ENV "UCX_" UCT_SCTP_DPDK_CONFIG_PREFIX

/* Device K is port K of UCX_SCTP_DPDK_DEVARGS, a ';'-separated list
 * (';' never occurs in DPDK devargs); one entry = the device "sdp0". */
#define UCT_SCTP_DPDK_DEV_NAME "sdp0"
#define UCT_SCTP_DPDK_DEV_PREFIX "sdp"
#define UCT_SCTP_DPDK_MAX_DEVS 16
#define UCT_SCTP_DPDK_MAX_LANES 8 /* UCX_SCTP_DPDK_LANES upper bound */
#define UCT_SCTP_DPDK_LIST_SEP ';'
/* SELF_WIRE (tests): ep create waits this long for the association. */
#define UCT_SCTP_DPDK_SELF_WIRE_WAIT_MS 2000

/*
 * Performance model reported by iface_query: measured figures, 2-core KVM
 * guest, memif, MTU 1500, busy polling, Debian's usrsctp; today's figures
 * (docs/BENCHMARKS.md, "MPI") are better, so the model is conservative.
 *   latency:  8-byte one-way MPI over memif, 5.1 us (UCT am_lat p50
 *             5.5 us)
 *   overhead: sender CPU per AM, 5.9 us = 1 / 170k msg/s of UCT
 *             am_bw -D short -s 1024; usrsctp's
 *             per-message work, not the wire, limits the message rate
 *   bandwidth: per process (each has its own port and usrsctp, nothing is
 *             shared with other processes' ifaces), so `dedicated`; over a
 *             virtual device, whose reported link speed is made up (memif
 *             says 10G), the measured MPI goodput over memif, 500-522 MB/s
 *             from 64 KiB to 4 MiB; over a NIC the link speed.
 */
#define UCT_SCTP_DPDK_LATENCY_S 5.1e-6
#define UCT_SCTP_DPDK_OVERHEAD_S 5.9e-6
#define UCT_SCTP_DPDK_VDEV_BANDWIDTH_BPS 500e6

#define UCT_SCTP_DPDK_AM_MAX_SHORT_BYTES 2048 /* incl. the 8-byte header */
#define UCT_SCTP_DPDK_AM_MAX_HDR_BYTES 128    /* am_zcopy user header */
#define UCT_SCTP_DPDK_AM_MAX_IOV (SG_IOV_MAX - 1) /* one for our header */
#define UCT_SCTP_DPDK_MAX_IFACES 1024	      /* open at once per process */
#define UCT_SCTP_DPDK_RX_BURST 32	      /* messages per progress */
/* Bytes in front of every sg receive buffer: our rx descriptor, the
 * uct_recv_desc_t pointer and the worker's rx_headroom (ucp: ~72). */
#define UCT_SCTP_DPDK_SG_HEADROOM_BYTES 256

/*
 * Receive-descriptor policy (see sctp_dpdk_iface.c, "Receive descriptors"):
 * a received AM of at most RX_COPY_BYTES is copied out of its sg buffer
 * into a small descriptor at once, so an 8-byte message held by UCX pins
 * ~2 KiB, not a 64 KiB segment; larger AMs stay in place and are lent to
 * UCX (UCT_CB_PARAM_FLAG_DESC) only while fewer than half the sg
 * descriptors are lent, else delivered without the flag (UCX copies what
 * it keeps) and released at once.  So one peer's held messages never stop
 * the reading of every association.  Copies waiting in an iface's RX queue
 * for its worker are capped (RX_QUEUE_BYTES): beyond the cap an AM stays
 * in its sg buffer, so a worker that does not progress while the poll
 * thread reads (PROGRESS=thread) holds at most the cap plus the fixed sg
 * pool; with the pool used up nothing more is read from usrsctp, the SCTP
 * receive window closes and the sender is flow-controlled.
 */
#define UCT_SCTP_DPDK_RX_COPY_BYTES 2048
/* Local delivery (an ep to another iface of this process): at most this
 * many AMs wait in the receiving iface's RX queue, then the sender gets
 * UCS_ERR_NO_RESOURCE (and may add a pending request). */
#define UCT_SCTP_DPDK_LOCAL_QUEUE_MAX 128
/* Large (> RX_COPY_BYTES) local descriptors lent to UCX per iface; beyond,
 * delivered without UCT_CB_PARAM_FLAG_DESC. */
#define UCT_SCTP_DPDK_LOCAL_LEND_MAX 64
/* Largest am_alignment accepted (bigger pads every descriptor). */
#define UCT_SCTP_DPDK_AM_ALIGN_MAX 65536

extern uct_component_t uct_sctp_dpdk_component;

typedef struct uct_sctp_dpdk_md_config {
	uct_md_config_t super;
} uct_sctp_dpdk_md_config_t;

typedef struct uct_sctp_dpdk_md {
	uct_md_t super;
} uct_sctp_dpdk_md_t;

/*
 * Wire format.  Every SCTP message is one AM: this header, then the AM
 * payload (am_short: the 64-bit header then the payload).  Ids are the
 * 16-bit iface ids of sender and receiver; the receiver dispatches on
 * dst_iface_id.
 */
typedef struct __attribute__((packed)) uct_sctp_dpdk_am_hdr {
	uint8_t am_id;		  /* AM id; with FLAG_RMA the RMA kind */
	uint8_t flags;		  /* 0 for AMs; UCT_SCTP_DPDK_HDR_FLAG_* */
	rte_be16_t dst_iface_id;
	rte_be16_t src_iface_id;
	rte_be16_t dst_incarnation; /* low 16 bits of the receiver process's
				     * incarnation the sender addressed */
} uct_sctp_dpdk_am_hdr_t;

/*
 * RMA messages (sctp_dpdk_rma.c) share the header: flags carries
 * UCT_SCTP_DPDK_HDR_FLAG_RMA, am_id the RMA kind, and an
 * uct_sctp_dpdk_rma_hdr_t follows.  AMs have flags == 0, so the receive
 * fast path tests one bit.
 */
#define UCT_SCTP_DPDK_HDR_FLAG_RMA 0x80 /* an RMA message, not an AM */
#define UCT_SCTP_DPDK_HDR_FLAG_ACK 0x40 /* PUT: acknowledge after writing */

/* RMA kinds (am_id of an RMA message). */
enum {
	UCT_SCTP_DPDK_RMA_PUT = 1,     /* request: data to write */
	UCT_SCTP_DPDK_RMA_GET_REQ = 2, /* request: send me this range */
	UCT_SCTP_DPDK_RMA_FLUSH = 3,   /* request: ack once all before done */
	UCT_SCTP_DPDK_RMA_ACK = 4,     /* reply to PUT+ACK and FLUSH */
	UCT_SCTP_DPDK_RMA_GET_REP = 5, /* reply: data of a GET_REQ */
};

/* Follows the header in every RMA message (48 bytes). */
typedef struct __attribute__((packed)) uct_sctp_dpdk_rma_hdr {
	rte_be64_t key;		/* requests: registration key at the target */
	rte_be64_t addr;	/* target address of the whole operation */
	rte_be64_t length;	/* bytes of the whole operation */
	rte_be64_t offset;	/* of this message's data in the operation */
	rte_be32_t op_slot;	/* initiator's op table slot, echoed back */
	rte_be32_t op_cookie;	/* initiator's op cookie, echoed back */
	rte_be32_t status;	/* replies: 0 or -ucs_status_t (refused) */
	rte_be16_t reply_stream; /* GET_REQ: stream of its replies; 0 = the
				  * request's (sctp_dpdk_rma.c) */
	rte_be16_t reserved;	/* 0 */
} uct_sctp_dpdk_rma_hdr_t;

#define UCT_SCTP_DPDK_RMA_HDRS_BYTES                                         \
	(sizeof(uct_sctp_dpdk_am_hdr_t) + sizeof(uct_sctp_dpdk_rma_hdr_t))
#define UCT_SCTP_DPDK_RMA_MAX_IOV 8	/* put/get zcopy iov entries */
/* rx->am_id of an RMA reply queued to the initiator's iface: the flag
 * value itself, so the poll loop sets it without a branch. */
#define UCT_SCTP_DPDK_RX_RMA UCT_SCTP_DPDK_HDR_FLAG_RMA

/* Packed rkey (mkey_pack) and unpacked rkey: a registration at the target.
 * The target trusts only its own table (addr/length here are the
 * initiator's copy). */
typedef struct __attribute__((packed)) uct_sctp_dpdk_rkey {
	rte_be64_t addr;	/* start of the registered region */
	rte_be64_t length;	/* bytes */
	rte_be64_t key;		/* process salt << 32 | registration number */
} uct_sctp_dpdk_rkey_t;

/* UCT device address: where the process's SCTP endpoint listens. */
typedef struct __attribute__((packed)) uct_sctp_dpdk_dev_addr {
	rte_be32_t ip;
	rte_be16_t sctp_port;
} uct_sctp_dpdk_dev_addr_t;

/* UCT iface address: which iface of which incarnation of that process,
 * and the settings both ends must share (checked by is_reachable and
 * ep create; a mismatch is refused with the variable named). */
typedef struct __attribute__((packed)) uct_sctp_dpdk_iface_addr {
	rte_be16_t iface_id;
	rte_be32_t incarnation;	/* process start, ms (wall clock), never 0 */
	rte_be32_t seg_bytes;	/* UCX_SCTP_DPDK_SEG_SIZE */
	rte_be16_t streams;	/* UCX_SCTP_DPDK_STREAMS */
	rte_be16_t mtu;		/* UCX_SCTP_DPDK_MTU */
	uint8_t lanes;		/* UCX_SCTP_DPDK_LANES */
	uint8_t paths;		/* FAILOVER paths (ports), 1 without: the
				 * device address holds paths - 1 backup
				 * addresses after its primary */
} uct_sctp_dpdk_iface_addr_t;

/* Parsed from the environment by UCX; released after iface_open returns. */
typedef struct uct_sctp_dpdk_iface_config {
	uct_iface_config_t super;
	char *devargs;		/* DPDK device string; "" = no port */
	char *ip;		/* "A.B.C.D/N" */
	char *mtu;		/* IP MTU, bytes (per-port list) */
	char *prefix;		/* EAL file prefix; "" = sdp-<pid> */
	int lcore;		/* EAL lcore; -1 = first allowed CPU */
	unsigned mem_mb;	/* EAL memory */
	size_t idle_sleep_us;	/* idle back-off; UCS_ULUNITS_AUTO */
	size_t idle_block_us;	/* IDLE_BLOCK_US (dp_idle.c) */
	char *progress;		/* PROGRESS: "inline" or "thread" */
	int poll_lcore;		/* its CPU; -1 = not pinned */
	char *rate;		/* pacing rate, bit/s, k/M/G suffixes */
	unsigned streams;	/* SCTP streams each way */
	char *sctp_port;	/* local SCTP port (per-port list) */
	unsigned rx_descs;	/* sg receive descriptors */
	size_t seg_size;	/* largest SCTP message = AM + header */
	char *dp_extra;		/* extra dataplane key=value tokens */
	char *sg_extra;		/* extra sctp key=value tokens */
	int stats;		/* print counters at exit (JSON, stderr) */
	double exit_timeout_s;	/* bound of the exit drain, seconds */
	unsigned guard_ms;	/* GUARD_MS: stall guard interval, 0 = off */
	int self_wire;		/* SELF_WIRE: device = both ends of a
				 * memif pair in this process */
	char *stream_tag_mask;	/* STREAM_TAG_MASK (sctp_dpdk_stream.c) */
	char *failover;		/* FAILOVER: n, y or sg_path tokens */
	unsigned lanes;		/* LANES: associations per peer, one per
				 * UCP path (sctp_dpdk_lanes.c) */
	size_t sack_hold_us;	/* SACK_HOLD_US: sg sack_hold_us;
				 * UCS_ULUNITS_AUTO = the transport's */
	size_t linger_us;	/* LINGER_US: bound of a progress call's
				 * polling for untransmitted bytes */
	int rx_direct;		/* RX_DIRECT: RMA data straight from usrsctp
				 * into its destination (sctp_dpdk_rma.c) */
	size_t tx_chain_min;	/* TX_CHAIN_MIN: sg tx_chain_min;
				 * UCS_MEMUNITS_AUTO = sg's default */
	int rma_whole_packets;	/* RMA_WHOLE_PACKETS (sctp_dpdk_rma.c) */
	int rma_sack_last;	/* RMA_SACK_LAST (sctp_dpdk_rma.c) */
	int rx_ext;		/* RX_EXT: n = sg rx_ext=0 */
	size_t tx_zcopy_min;	/* TX_ZCOPY_MIN (sctp_dpdk_rma.c) */
	unsigned dereg_wait_ms;	/* DEREG_WAIT_MS (sctp_dpdk_getzc.c) */
	size_t rx_queue_bytes;	/* RX_QUEUE_BYTES: copies an iface's RX
				 * queue may hold; UCS_MEMUNITS_INF = no cap */
} uct_sctp_dpdk_iface_config_t;

/* Association state of a peer process. */
typedef enum uct_sctp_dpdk_peer_state {
	UCT_SCTP_DPDK_PEER_IDLE = 0,   /* no association (none yet, or shut) */
	UCT_SCTP_DPDK_PEER_CONNECTING, /* sg_connect issued, no event yet */
	UCT_SCTP_DPDK_PEER_UP,	       /* established */
} uct_sctp_dpdk_peer_state_t;

/*
 * A remote process.  Created on demand, never freed before the context
 * (eps keep pointers).  Written by the polling thread under ctx->lock;
 * read without it on the send fast path (a stale read only costs one
 * NO_RESOURCE or a late error report).
 */
typedef struct uct_sctp_dpdk_peer {
	ucs_list_link_t list;	     /* in ctx->peers */
	uint32_t ip_be;		     /* network order */
	uint16_t sctp_port;	     /* host order */
	volatile int state;	     /* uct_sctp_dpdk_peer_state_t */
	sg_assoc_t assoc;	     /* valid unless IDLE */
	volatile uint32_t fail_gen;  /* +1 per lost/failed/restarted assoc */
	uint32_t incarnation;	     /* latest one eps were created to */
	uint64_t blocked_poll;	     /* ctx->poll_count at the last EAGAIN */
	/* Flush (under ctx->lock): messages sg_send accepted, and that
	 * count when the association was last seen drained (diagnostic:
	 * uct_sctp_dpdk_peer_drained always asks sg_assoc_quiet). */
	uint64_t tx_msgs;
	uint64_t drained_msgs;
	uint64_t exit_quiet_tsc;  /* exit drain: since when the association
				   * sat in SHUTDOWN-SENT, all acknowledged
				   * and quiet; 0: not so */
	uint64_t exit_pkts_in;	  /* ... and the endpoint's packets in then */
	/* LANES: the lane's endpoint (ctx->lane_sg[lane]) */
	struct sg_ep *sg;
	unsigned lane;
} uct_sctp_dpdk_peer_t;

struct uct_sctp_dpdk_iface;

/*
 * The process-wide context: one dataplane port and one SCTP endpoint for
 * every iface.  ctx->lock serialises every sg_ and dp_ call (usrsctp state
 * is process-wide), the iface table and the peer list.
 */
typedef struct uct_sctp_dpdk_ctx {
	/* One lock for every device of the process: usrsctp is
	 * process-wide (its timers send on any endpoint's port). */
	ucs_recursive_spinlock_t *lock;
	unsigned dev_index;	      /* K of sdpK */
	unsigned refs;		      /* open ifaces */
	char *config_text;	      /* dp + sg config, to compare */
	struct dp_config dp_cfg;
	struct sg_config sg_cfg;
	struct dp_port *port;
	struct sg_ep *sg;
	uint32_t ip_be, mask_be;      /* our address and on-link mask */
	uint16_t sctp_port;	      /* host order */
	uint16_t streams;
	uint16_t mtu;		      /* IP MTU of the port */
	uint32_t incarnation;	      /* this process start, ms; never 0 */
	int self_wire;		      /* one end of SELF_WIRE's memif pair */
	uint32_t seg_bytes;	      /* largest message incl. our header */
	double bandwidth_bps;	      /* bytes/s for iface_query */
	uint64_t poll_count;	      /* sg_poll calls */
	int stats_at_exit;	      /* UCX_SCTP_DPDK_STATS */
	double exit_timeout_s;	      /* UCX_SCTP_DPDK_EXIT_TIMEOUT */
	volatile uint32_t ev_gen;     /* +1 per peer state change */
	uint16_t next_iface_id;
	struct uct_sctp_dpdk_iface *ifaces[UCT_SCTP_DPDK_MAX_IFACES];
	ucs_list_link_t peers;	      /* every peer, for walks */
	struct uct_sctp_dpdk_peer_index *peer_index; /* lookups (peer.c) */
	unsigned nb_peers;
	/* Dedicated-core mode (PROGRESS=thread): a thread polls the port and
	 * the SCTP endpoint and fills the ifaces' RX queues; the UCX threads
	 * only drain their queue, send and dispatch pending. */
	int thread_on;		      /* poll thread running */
	volatile int thread_stop;
	pthread_t poll_thread;
	int poll_lcore;		      /* -1: not pinned */
	unsigned idle_sleep_us;
	/* Stall guard (inline progress, sctp_dpdk_guard.c): polls when no
	 * worker did for guard_ms. */
	unsigned guard_ms;	      /* 0: off */
	int guard_on;
	int guard_stop;		      /* atomic */
	pthread_t guard_thread;
	pid_t guard_pid;	      /* the process that started it */
	uint64_t guard_rounds;	      /* stalled intervals it polled in */
	uint64_t guard_polls;	      /* polls it made */
	/* Counters (under lock) */
	uint64_t rx_msgs;	      /* messages taken from sg_recv */
	uint64_t rx_drops;	      /* unknown iface, bad header, chains */
	uint64_t rx_stale;	      /* addressed to an earlier incarnation */
	uint64_t rx_closed;	      /* to an iface closed since */
	/* Linger (uct_sctp_dpdk_ctx_linger; device 0's ctx, under lock) */
	uint64_t linger_tsc;	      /* LINGER_US in TSC cycles; 0: off */
	uint64_t unsent_left_tsc;     /* progress returned with bytes
				       * untransmitted at this time; 0: none */
	uint64_t linger_quiet_tsc;    /* no linger before this time */
	uint64_t linger_calls;	      /* progress calls that lingered */
	uint64_t linger_done;	      /* ... until every byte had left */
	uint64_t linger_cycles;	      /* TSC cycles spent lingering */
	uint64_t unsent_left;	      /* progress calls that returned with
				       * bytes untransmitted */
	uint64_t unsent_stalls;	      /* ... and the next call came more
				       * than 1 ms later */
	uint64_t unsent_stall_us;     /* sum of those gaps */
	/* Back-off of closed ifaces' progress (dp_idle, STATS "idle") */
	uint64_t idle_sleeps;	      /* sleeps and blocks */
	uint64_t idle_blocks;	      /* blocks on the port's fds */
	uint64_t idle_block_wakes;    /* ... ended by a frame */
	uint64_t rx_bad_am;	      /* AM id >= UCT_AM_ID_MAX */
	volatile uint64_t rma_reply_foreign; /* RMA replies to an op of
					      * another association (atomic:
					      * counted by any iface) */
	int64_t sg_descs_held;	      /* sg descriptors not yet released */
	/* sg descriptors lent to UCX (handler returned UCS_INPROGRESS);
	 * atomic: released from any worker thread */
	volatile uint32_t sg_descs_lent;
	/* RMA target side (sctp_dpdk_rma.c), under lock */
	ucs_queue_head_t rma_replyq;  /* replies to send, in order */
	ucs_mpool_t rma_reply_mp;     /* their records */
	int rma_reply_mp_ready;
	uint64_t rma_put_msgs;	      /* PUT messages written */
	uint64_t rma_get_reqs;	      /* GET requests answered */
	uint64_t rma_refused;	      /* accesses refused (bad key/range) */
	uint64_t flush_markers;	      /* FLUSH requests this process sent
				       * (RMA, and AM flush markers) */
	/* zero-copy PUT records to reuse (sctp_dpdk_rma.c), under lock */
	ucs_queue_elem_t *rma_zc_spare;
	uint64_t rma_zc_mallocs;      /* records ever malloc'd */
	/* Tag AMs -> streams (sctp_dpdk_stream.c); counters under lock */
	uct_sctp_dpdk_stream_map_t smap;
	/* Failover (UCX_SCTP_DPDK_FAILOVER, sctp_dpdk_path.c): the device's
	 * paths are port (path 0) and path_ports[1..nb_paths-1]; 1 = none. */
	unsigned nb_paths;
	struct dp_port *path_ports[SG_PATHS_MAX];
	uint32_t path_ip_be[SG_PATHS_MAX];
	/* Lanes (UCX_SCTP_DPDK_LANES, sctp_dpdk_lanes.c): lane k is its own
	 * SCTP endpoint on the port, SCTP port sctp_port + k, lane_sg[0] ==
	 * sg; UCP's path k of this device.  Counters under lock. */
	unsigned nb_lanes;
	struct sg_ep *lane_sg[UCT_SCTP_DPDK_MAX_LANES];
	uint64_t lane_rx_msgs[UCT_SCTP_DPDK_MAX_LANES];
	struct sg_ep *rx_sg;	      /* lane whose messages are read now */
	/* PROGRESS=thread with lanes (sctp_dpdk_thread.c): lane k > 0 is
	 * polled by a thread of its own (its port queue k), lane 0 by the
	 * poll thread; lane_threads counts the running ones.  Polls under
	 * lock, per lane. */
	unsigned lane_threads;
	pthread_t lane_thread[UCT_SCTP_DPDK_MAX_LANES];
	uint64_t lane_thread_polls[UCT_SCTP_DPDK_MAX_LANES];
	/* trylocks a lane's thread lost (ctx->lock was held): contention */
	uint64_t lane_lock_misses[UCT_SCTP_DPDK_MAX_LANES];
	int lane_cpu[UCT_SCTP_DPDK_MAX_LANES]; /* -1: not pinned */
	/* RX_DIRECT (sctp_dpdk_rma.c, "Direct placement"): GET ops whose
	 * replies usrsctp_recvv writes into their buffers, under lock; and
	 * the receive-side RMA data bytes by path (get_copy: atomic, from
	 * the ifaces' threads; the rest under lock) */
	int rx_direct;
	void *rma_place;
	uint64_t rma_put_peek_until_tsc; /* a PUT came: peek until then */
	uint64_t rma_get_direct_bytes;
	uint64_t rma_get_copy_bytes;
	uint64_t rma_put_direct_bytes;
	uint64_t rma_put_copy_bytes;
	/* RMA_WHOLE_PACKETS: PUT and GET_REP messages fill whole packets */
	int rma_whole_packets;
	/* RMA_SACK_LAST: only an op's last message asks for its SACK at once */
	int rma_sack_last;
	/* GET replies from the registered memory by reference
	 * (sctp_dpdk_getzc.c): replies of at least get_zcopy_min bytes
	 * (TX_ZCOPY_MIN; 0: off, or no unmap hook); counters under lock */
	size_t get_zcopy_min;
	unsigned dereg_wait_ms;	      /* DEREG_WAIT_MS */
	uint64_t rma_rep_zc_msgs, rma_rep_zc_bytes; /* sent by reference */
	uint64_t rma_rep_copy_bytes;  /* GET reply bytes copied */
} uct_sctp_dpdk_ctx_t;

typedef struct uct_sctp_dpdk_iface {
	uct_base_iface_t super;
	uct_sctp_dpdk_ctx_t *ctx;	 /* NULL: no port configured */
	uint16_t id;			 /* unique in the process */
	uint32_t ev_gen;		 /* ctx->ev_gen last handled */
	uint32_t ep_seq;		 /* eps created, picks streams */
	unsigned rx_headroom;		 /* bytes the user wants in front */
	uct_recv_desc_t release_desc;	 /* our uct_iface_release_desc cb */
	/* RX queue: filled by the polling thread (ctx->lock held) or a local
	 * sender, drained by this iface's progress. */
	ucs_spinlock_t rx_lock;
	ucs_queue_head_t rx_q;		 /* uct_sctp_dpdk_rx_desc_t */
	volatile unsigned rx_count;	 /* entries in rx_q */
	/* Descriptors not in an sg buffer: copies of received AMs of at most
	 * RX_COPY_BYTES, local AMs, AMs copied for am_alignment.  Laid out
	 * for rx_headroom and the alignment; get/put under rx_lock. */
	ucs_mpool_t small_mp;		 /* RX_COPY_BYTES of data */
	ucs_mpool_t large_mp;		 /* seg_bytes of data */
	size_t am_align;		 /* data + am_align_offset is aligned */
	size_t am_align_offset;
	unsigned local_queued;		 /* local AMs in rx_q (rx_lock) */
	/* Received AMs copied into small_mp/large_mp and waiting in rx_q
	 * (rx_lock): pool bytes they occupy, and the cap (RX_QUEUE_BYTES)
	 * beyond which a received AM stays in its sg buffer instead */
	size_t rx_copy_bytes;
	size_t rx_copy_max_bytes;	 /* SIZE_MAX: no cap */
	uint64_t rx_copy_capped;	 /* AMs left in their sg buffer
					  * by the cap (rx_lock) */
	volatile uint32_t large_lent;	 /* large_mp descs lent to UCX */
	ucs_list_link_t eps;		 /* all eps of this iface */
	ucs_list_link_t pending_eps;	 /* eps with pending requests */
	ucs_queue_head_t flush_q;	 /* uct_sctp_dpdk_flush_req_t */
	struct dp_idle idle;		 /* back-off of this worker's thread */
	/* Wakeup (iface_event_fd/arm): wake_fd, an eventfd, is written when
	 * an AM is queued to an armed iface (by the poll thread or a local
	 * sender).  In inline mode nobody polls the port while the worker
	 * sleeps, so event_fd is an epoll set of wake_fd and a one-shot
	 * timer (UCT_SCTP_DPDK_INLINE_WAKE_US) that wakes the worker to poll;
	 * in thread mode event_fd is wake_fd itself. */
	int event_fd;
	int wake_fd;
	int timer_fd;			 /* -1 in thread mode */
	volatile uint32_t armed;	 /* set by arm, cleared by a signal */
	void *bounce;			 /* am_bcopy pack buffer, seg_bytes */
	struct {
		unsigned idle_sleep_us;	 /* resolved; 0 = busy poll */
	} config;
	/* RMA initiator side (sctp_dpdk_rma.c), this iface's thread only */
	struct uct_sctp_dpdk_rma_op **rma_ops; /* slot -> op or NULL */
	uint32_t rma_ops_size;		 /* slots */
	uint32_t rma_free_slot;		 /* lowest possibly free slot */
	uint32_t rma_cookie;		 /* next op cookie */
	ucs_queue_head_t rma_txq;	 /* ops with data still to send */
	ucs_mpool_t rma_op_mp;		 /* op records */
	int rma_ready;			 /* table and mpool set up */
	/* Zero-copy PUT data (sg_send_zc, TX_ZCOPY_MIN; sctp_dpdk_rma.c):
	 * completions queued by the poll loop (ctx->lock), taken by this
	 * iface's progress */
	size_t tx_zcopy_min;		 /* 0: off */
	ucs_queue_head_t rma_zcq;
	uint64_t tx_zcopy_msgs, tx_zcopy_bytes;
} uct_sctp_dpdk_iface_t;

/* Inline mode: how long UCP's blocking wait (ucp_worker_wait) sleeps
 * before the worker polls the port again -- a polling PMD raises no
 * kernel event.  Costs at most this much latency while waiting. */
#define UCT_SCTP_DPDK_INLINE_WAKE_US 200
/* IDLE_SLEEP_US=auto when ranks outnumber the CPUs they may run on. */
#define UCT_SCTP_DPDK_IDLE_SLEEP_AUTO_US 20
/* Backing off, a rank blocks on an af_packet port (dp_idle.c) at most
 * this long: the SCTP timers it drives run at most this late. */
#define UCT_SCTP_DPDK_IDLE_BLOCK_US 1000
#define UCT_SCTP_DPDK_IDLE_BLOCK_MAX_US 100000
/* SACK_HOLD_US=auto (sctp_dpdk_config.c) */
#define UCT_SCTP_DPDK_SACK_HOLD_AUTO_US 20
/* A linger ends when no untransmitted byte left for this long (the peer
 * is not answering: computing, descheduled, or its window is shut),
 * microseconds. */
#define UCT_SCTP_DPDK_LINGER_IDLE_US 50
/* After a linger that moved nothing, none for this many idle periods
 * (the peer's receive window holds the bytes: only its reader opens it) */
#define UCT_SCTP_DPDK_LINGER_BACKOFF 20
/* LINGER_US=auto, and its largest value, microseconds */
#define UCT_SCTP_DPDK_LINGER_AUTO_US 500
#define UCT_SCTP_DPDK_LINGER_MAX_US 100000
/* A return with bytes untransmitted counts as a stall when the next
 * progress call comes this much later, microseconds. */
#define UCT_SCTP_DPDK_STALL_US 1000
/* Exit drain: an association left in SHUTDOWN-SENT with everything
 * acknowledged and nothing arriving for this long is let go (a peer with
 * data left would have sent or retransmitted it by then), ms. */
#define UCT_SCTP_DPDK_EXIT_QUIET_MS 1000

#define UCT_SCTP_DPDK_EP_FLAG_LOCAL 0x1	   /* peer is this process */
#define UCT_SCTP_DPDK_EP_FLAG_REPORTED 0x2 /* failure handed to UCX */
#define UCT_SCTP_DPDK_EP_FLAG_PENDING 0x4  /* on iface->pending_eps */
#define UCT_SCTP_DPDK_EP_FLAG_DISPATCH 0x8 /* its pending queue's head is
					    * being dispatched: may send */

/* Streams besides its own an ep remembers AMs on for its next flush
 * (STREAM_TAG_MASK); more than this many mark every stream. */
#define UCT_SCTP_DPDK_FLUSH_STREAMS 6

typedef struct uct_sctp_dpdk_ep {
	uct_base_ep_t super;
	uct_sctp_dpdk_peer_t *peer;	 /* NULL for local eps */
	uint32_t fail_gen;		 /* peer->fail_gen at creation */
	uint16_t dst_iface_id;
	uint32_t dst_incarnation;	 /* of the peer process addressed */
	uct_sctp_dpdk_dev_addr_t dst_dev; /* the device address it was made for */
	uint16_t stream;		 /* 1..streams-1 */
	unsigned flags;			 /* UCT_SCTP_DPDK_EP_FLAG_* */
	ucs_queue_head_t pending_q;
	ucs_list_link_t list;		 /* in iface->eps */
	ucs_list_link_t pending_list;	 /* in iface->pending_eps */
	/* RMA (sctp_dpdk_rma.c) */
	ucs_list_link_t rma_ops;	 /* outstanding ops of this ep */
	unsigned rma_txq_len;		 /* of them, on iface->rma_txq */
	unsigned rma_dirty;		 /* put short/bcopy since last FLUSH */
	uint64_t rma_op_seq;		 /* number of the ep's last op */
	uct_sctp_dpdk_stream_ep_t smap;	 /* fragments being sent (stream map) */
	/* Flush (sctp_dpdk_flush.c): streams this ep sent AMs on since a
	 * FLUSH marker last went behind them on that stream or its
	 * association was last seen drained (its own thread only) */
	uint8_t am_dirty;		 /* ep->stream */
	uint8_t am_dirty_n;		 /* in am_dirty_streams[] */
	uint16_t am_dirty_streams[UCT_SCTP_DPDK_FLUSH_STREAMS]; /* others */
	uint16_t am_dirty_all;		 /* the list overflowed: every stream
					  * from this one to streams - 1;
					  * 0 = none */
} uct_sctp_dpdk_ep_t;

/*
 * A received AM waiting in an iface's RX queue.  Lives in the bytes in
 * front of the data: an sg receive buffer's headroom, or a local
 * descriptor.  Layout, growing addresses:
 *
 *   [rx_desc, 8-aligned][pad][uct_recv_desc_t *][rx_headroom][am hdr][data]
 *                                               ^ desc given to UCX
 *                                                                    ^ data
 * For a local descriptor the am hdr slot is unused.
 */
typedef struct uct_sctp_dpdk_rx_desc {
	ucs_queue_elem_t queue;	   /* in iface->rx_q */
	struct sg_msg_desc *msg;   /* NULL: from iface->small_mp/large_mp */
	void *mp_elem;		   /* then: the mpool element */
	void *data;		   /* AM payload */
	uint32_t length;	   /* AM payload bytes */
	uint8_t am_id;
	uint8_t flags;		   /* UCT_SCTP_DPDK_RX_FLAG_* */
	/* RMA replies: where the message came from (an op accepts replies
	 * only from its ep's association) and, with FLAG_PLACED, the data
	 * bytes the poll loop wrote into the op's buffer */
	sg_assoc_t src_assoc;	   /* the sender's association */
	const struct sg_ep *src_sg; /* the lane it came on; NULL: local */
	uint32_t placed_bytes;	   /* FLAG_PLACED: bytes written */
} uct_sctp_dpdk_rx_desc_t;

#define UCT_SCTP_DPDK_RX_FLAG_LOCAL 0x1 /* counts in iface->local_queued */
#define UCT_SCTP_DPDK_RX_FLAG_LARGE 0x2 /* from iface->large_mp */
/* a received AM's copy, counted in iface->rx_copy_bytes while queued */
#define UCT_SCTP_DPDK_RX_FLAG_COPY 0x10
/* An RMA GET reply whose data the poll loop placed (RX_DIRECT): the
 * descriptor holds its headers only */
#define UCT_SCTP_DPDK_RX_FLAG_PLACED 0x4
/* ... and the rest of the message was discarded (no buffer to place it) */
#define UCT_SCTP_DPDK_RX_FLAG_DISCARDED 0x8

/* Bytes needed in front of an AM payload for @rx_headroom, a multiple of
 * 8: a pool element is laid out so its data is aligned, and the mpool's
 * own element header in front of the element must be 8-aligned too. */
#define UCT_SCTP_DPDK_RX_OVERHEAD(_rx_headroom)                              \
	(((_rx_headroom) + sizeof(uct_recv_desc_t *) +                        \
	  sizeof(uct_sctp_dpdk_rx_desc_t) + 7 + 7) & ~(size_t)7)

static inline uct_sctp_dpdk_rx_desc_t *
uct_sctp_dpdk_rx_desc_of(void *ucx_desc)
{
	uintptr_t p = (uintptr_t)ucx_desc - sizeof(uct_recv_desc_t *) -
		      sizeof(uct_sctp_dpdk_rx_desc_t);

	return (uct_sctp_dpdk_rx_desc_t *)(p & ~(uintptr_t)7);
}

/*
 * Release-neutral forms of the operations whose UCX function types differ
 * between UCX releases; sctp_dpdk_ucx_compat.h adapts them.
 */
typedef struct uct_sctp_dpdk_md_caps {
	uint64_t flags;			/* UCT_MD_FLAG_* */
	size_t max_reg;
	uint64_t mem_types;		/* registered and accessed */
	size_t rkey_packed_size;
	ucs_linear_func_t reg_cost;
} uct_sctp_dpdk_md_caps_t;

void uct_sctp_dpdk_md_caps(uct_md_h md, uct_sctp_dpdk_md_caps_t *caps);
ucs_status_t uct_sctp_dpdk_md_reg(uct_md_h md, void *address, size_t length,
				  uct_mem_h *memh_p);
ucs_status_t uct_sctp_dpdk_md_pack(uct_mem_h memh, void *buffer);
/* <0, 0, >0 as rkey a's {addr, length, key} orders before, equal to,
 * after b's */
int uct_sctp_dpdk_rkey_cmp(uct_rkey_t a, uct_rkey_t b);
/* The peer at dev_addr/iface_addr (iface_addr may be NULL) is on the
 * port's subnet and shares the settings both ends must agree on. */
int uct_sctp_dpdk_iface_reachable(const uct_iface_h tl_iface,
				  const uct_device_addr_t *dev_addr,
				  const uct_iface_addr_t *iface_addr);
/* The ep was created for exactly that remote iface (same process
 * incarnation too). */
int uct_sctp_dpdk_ep_connected_to(const uct_ep_h tl_ep,
				  const uct_device_addr_t *dev_addr,
				  const uct_iface_addr_t *iface_addr);
/* Fails the ep as a transport error would (UCX's ep_invalidate, which its
 * peer-failure tests take to emulate one). */
ucs_status_t uct_sctp_dpdk_ep_invalidate(uct_ep_h tl_ep);
/* A private copy of the packed rkey at rkey_buffer: *rkey_p and *handle_p
 * are its address (released by rkey_release). */
ucs_status_t uct_sctp_dpdk_rkey_unpack(const void *rkey_buffer,
				       uct_rkey_t *rkey_p, void **handle_p);

ucs_status_t uct_sctp_dpdk_query_devices(uct_md_h md,
					 uct_tl_device_resource_t **devices_p,
					 unsigned *num_devices_p);

/* ---- sctp_dpdk_status.c ---- */

/* Convert a negative errno of dp_/sg_ into a status (the only place). */
ucs_status_t sdp_status_from_errno(int err);

/* ---- sctp_dpdk_config.c ---- */

/* Longest joined dp or sg configuration text. */
#define UCT_SCTP_DPDK_CONFIG_TEXT_MAX 4096

/* Turn the UCX config into validated dp and sg configs (and their joined
 * text in @text); logs errors naming the UCX_SCTP_DPDK_ variable. */
ucs_status_t uct_sctp_dpdk_config_build(
	const uct_sctp_dpdk_iface_config_t *config, struct dp_config *dp_cfg,
	struct sg_config *sg_cfg, char *text, size_t len);
/* The same for device @dev (entry @dev of the per-port lists). */
ucs_status_t uct_sctp_dpdk_config_build_dev(
	const uct_sctp_dpdk_iface_config_t *config, unsigned dev,
	struct dp_config *dp_cfg, struct sg_config *sg_cfg, char *text,
	size_t len);
/* Entries of a ';' list ("" is one empty entry). */
unsigned uct_sctp_dpdk_config_list_count(const char *list);
/* Entry @index of a ';' list into @buf; a one-entry list gives its entry
 * for every index. */
void uct_sctp_dpdk_config_list_entry(const char *list, unsigned index,
				     char *buf, size_t len);
/* Devices configured: entries of UCX_SCTP_DPDK_DEVARGS (at least 1). */
unsigned
uct_sctp_dpdk_config_num_devs(const uct_sctp_dpdk_iface_config_t *config);

/* IDLE_SLEEP_US resolved: the number given, or for 'auto' 0 (busy poll)
 * when every rank on the node has a CPU of its own (polling threads
 * counted), else UCT_SCTP_DPDK_IDLE_SLEEP_AUTO_US.  Ranks on the node
 * from OMPI_COMM_WORLD_LOCAL_SIZE, MPI_LOCALNRANKS (MPICH),
 * PMIX_LOCAL_SIZE or PMI_LOCAL_SIZE; CPUs from the affinity mask.  The
 * choice is logged once (ucs_diag). */
unsigned
uct_sctp_dpdk_config_idle_sleep_us(const uct_sctp_dpdk_iface_config_t *config);

/* ---- sctp_dpdk_ctx.c: the process-wide context ---- */

/* Take a reference to device @dev's context, creating every device's from
 * @config on first use (all ports open in order).  Logs errors naming the
 * UCX_SCTP_DPDK_ variable. */
ucs_status_t uct_sctp_dpdk_ctx_get(const uct_sctp_dpdk_iface_config_t *config,
				   unsigned dev, uct_sctp_dpdk_ctx_t **ctx_p);
/* Device 0's context or NULL (for tests and tools). */
uct_sctp_dpdk_ctx_t *uct_sctp_dpdk_ctx_peek(void);
/* Device @dev's context or NULL (no mutex: see sctp_dpdk_ctx.c). */
uct_sctp_dpdk_ctx_t *uct_sctp_dpdk_ctx_peek_dev(unsigned dev);
/* One round of the poll loop over every device (caller holds the lock).
 * @return work done. */
unsigned uct_sctp_dpdk_ctx_poll_all(void);
/*
 * End of a progress call on @ctx's thread (inline progress): while a send
 * still has bytes in the SCTP stack that a window held back, keep polling
 * every device (at most LINGER_US, and only while packets keep arriving)
 * so they are on the wire before the application computes again; stop as
 * soon as a message arrives for UCP.  Counts what it could not push out.
 */
void uct_sctp_dpdk_ctx_linger(uct_sctp_dpdk_ctx_t *ctx);
/* Start of a progress call: account a stall of bytes left untransmitted
 * while the application was away (STATS "linger"). */
void uct_sctp_dpdk_ctx_linger_enter(uct_sctp_dpdk_ctx_t *ctx);

/* Drop a reference; the context itself stays up until process exit. */
void uct_sctp_dpdk_ctx_put(uct_sctp_dpdk_ctx_t *ctx);
/* The process's context (or NULL) with the global context mutex held, so
 * it cannot be torn down until uct_sctp_dpdk_ctx_unlock_global(). */
uct_sctp_dpdk_ctx_t *uct_sctp_dpdk_ctx_lock_global(void);
void uct_sctp_dpdk_ctx_unlock_global(void);
/* Give @iface an id and enter it in the table (lock taken inside). */
ucs_status_t uct_sctp_dpdk_ctx_add_iface(uct_sctp_dpdk_ctx_t *ctx,
					 uct_sctp_dpdk_iface_t *iface);
void uct_sctp_dpdk_ctx_remove_iface(uct_sctp_dpdk_ctx_t *ctx,
				    uct_sctp_dpdk_iface_t *iface);

/* ---- sctp_dpdk_path.c: failover over several ports of one device ---- */

/* Whether UCX_SCTP_DPDK_FAILOVER asks for failover (not n/no/0/""). */
int uct_sctp_dpdk_config_failover(const uct_sctp_dpdk_iface_config_t *config);
/* Ports in UCX_SCTP_DPDK_DEVARGS (devices = 1 with failover, else this). */
unsigned
uct_sctp_dpdk_config_num_ports(const uct_sctp_dpdk_iface_config_t *config);
/* Check FAILOVER against the port count; errors name the variable. */
ucs_status_t
uct_sctp_dpdk_path_config_check(const uct_sctp_dpdk_iface_config_t *config);
/* Open ports 1..@nports-1 (@dp_cfgs[k], port k's) as backup paths of
 * device 0's context (caller holds the global mutex). */
ucs_status_t uct_sctp_dpdk_path_open(uct_sctp_dpdk_ctx_t *ctx,
				     const uct_sctp_dpdk_iface_config_t *config,
				     const struct dp_config *dp_cfgs,
				     unsigned nports);
/* Close the backup ports (after sg_ep_close). */
void uct_sctp_dpdk_path_close(uct_sctp_dpdk_ctx_t *ctx);
/* Bytes of the device address (the backup addresses follow the primary). */
size_t uct_sctp_dpdk_path_dev_addr_len(const uct_sctp_dpdk_ctx_t *ctx);
/* Write the backup addresses after the device address at @addr. */
void uct_sctp_dpdk_path_pack(const uct_sctp_dpdk_ctx_t *ctx, void *addr);
/* Tell the SCTP layer the peer's backup addresses from its device
 * address (takes ctx->lock). */
void uct_sctp_dpdk_path_peer(uct_sctp_dpdk_ctx_t *ctx, const void *dev_addr);
/* JSON members of the failover counters (no braces); "" without paths.
 * Caller holds ctx->lock. */
void uct_sctp_dpdk_path_json(uct_sctp_dpdk_ctx_t *ctx, char *buf, size_t len);

/* ---- sctp_dpdk_thread.c: dedicated-core progress ---- */

/* Start the polling thread when config->progress is "thread". */
ucs_status_t
uct_sctp_dpdk_poll_thread_start(uct_sctp_dpdk_ctx_t *ctx,
				const uct_sctp_dpdk_iface_config_t *config);
/* Stop and join it (no-op when not running). */
void uct_sctp_dpdk_poll_thread_stop(uct_sctp_dpdk_ctx_t *ctx);

/* ---- sctp_dpdk_guard.c: the stall guard (inline progress) ---- */

/* Start the guard thread unless PROGRESS=thread or GUARD_MS=0. */
ucs_status_t
uct_sctp_dpdk_guard_start(uct_sctp_dpdk_ctx_t *ctx,
			  const uct_sctp_dpdk_iface_config_t *config);
/* Stop and join it (no-op when not running). */
void uct_sctp_dpdk_guard_stop(uct_sctp_dpdk_ctx_t *ctx);

/* ---- sctp_dpdk_peer.c: peers and their associations ---- */

/* Find or create the peer for ip:port and start its association if it has
 * none (lock taken inside).  @return UCS_ERR_UNREACHABLE when sg refuses. */
ucs_status_t uct_sctp_dpdk_ctx_peer_get(uct_sctp_dpdk_ctx_t *ctx,
					uint32_t ip_be, uint16_t sctp_port,
					unsigned lane, uint32_t incarnation,
					uct_sctp_dpdk_peer_t **peer_p);
/* Whether a peer's iface address carries the settings that must match
 * ours; logs the first mismatch per variable, naming it and both values.
 * @return 1 compatible. */
int uct_sctp_dpdk_peer_compatible(uct_sctp_dpdk_ctx_t *ctx, uint32_t ip_be,
				  const uct_sctp_dpdk_iface_addr_t *addr);
/* The peer whose association on @lane is @assoc (not IDLE), or NULL.
 * O(1).  Caller holds ctx->lock. */
uct_sctp_dpdk_peer_t *uct_sctp_dpdk_peer_by_assoc(uct_sctp_dpdk_ctx_t *ctx,
						  unsigned lane,
						  sg_assoc_t assoc);
/* Free the lookup tables (the peers are freed by the caller). */
void uct_sctp_dpdk_peer_index_free(uct_sctp_dpdk_ctx_t *ctx);
/* Restart the association of an IDLE peer (lock held by caller). */
void uct_sctp_dpdk_ctx_peer_connect(uct_sctp_dpdk_ctx_t *ctx,
				    uct_sctp_dpdk_peer_t *peer);
/* Apply an association event to its peer (caller holds ctx->lock). */
void uct_sctp_dpdk_peer_event(uct_sctp_dpdk_ctx_t *ctx, unsigned lane,
			      const struct sg_event *ev);

/* ---- sctp_dpdk_lanes.c: several associations per peer (LANES) ---- */

/* Refuse LANES outside 1..MAX_LANES or combined with several ports,
 * FAILOVER or SELF_WIRE, naming the variables.  @return UCS_OK. */
ucs_status_t
uct_sctp_dpdk_lanes_check(const uct_sctp_dpdk_iface_config_t *config);
/* Open lanes 1..config->lanes-1 of @ctx (lane 0 is ctx->sg). */
ucs_status_t
uct_sctp_dpdk_lanes_open(uct_sctp_dpdk_ctx_t *ctx,
			 const uct_sctp_dpdk_iface_config_t *config);
/* Close lanes 1.. (before ctx->sg). */
void uct_sctp_dpdk_lanes_close(uct_sctp_dpdk_ctx_t *ctx);
/* The lane of UCP's path @path_index. */
unsigned uct_sctp_dpdk_lane_of_path(const uct_sctp_dpdk_ctx_t *ctx,
				    unsigned path_index);
/* JSON member "lanes": {...} with a trailing ", " ("" with one lane).
 * Caller holds ctx->lock. */
void uct_sctp_dpdk_lanes_json(uct_sctp_dpdk_ctx_t *ctx, char *buf,
			      size_t len);

/* ---- sctp_dpdk_rx.c: the shared poll loop ---- */

/* One round of the shared poll loop: sg_poll, events, sg_recv -> iface
 * RX queues.  Caller holds ctx->lock.  @return work done. */
unsigned uct_sctp_dpdk_ctx_poll(uct_sctp_dpdk_ctx_t *ctx);
/* Lane @lane's share of uct_sctp_dpdk_ctx_poll (a lane thread's loop;
 * ctx->lock held). */
unsigned uct_sctp_dpdk_ctx_poll_lane(uct_sctp_dpdk_ctx_t *ctx, unsigned lane);
/* Hand a received message that is not an RMA request to the iface its
 * header names (dropped if closed or stale).  Caller holds ctx->lock. */
void uct_sctp_dpdk_ctx_rx_deliver(uct_sctp_dpdk_ctx_t *ctx,
				  struct sg_msg_desc *msg);
/* Return an sg descriptor (lock taken inside). */
void uct_sctp_dpdk_ctx_msg_release(uct_sctp_dpdk_ctx_t *ctx,
				   struct sg_msg_desc *msg);

/* ---- sctp_dpdk_iface.c ---- */

/* Queue a received message (our header at msg->data) on @iface: copied
 * into a small or aligned descriptor and released at once, or queued in
 * place.  Caller holds ctx->lock. */
void uct_sctp_dpdk_iface_rx_msg(uct_sctp_dpdk_iface_t *iface,
				struct sg_msg_desc *msg, uint8_t am_id);
/* Signal the event fd of every armed iface (peer state changed).  Caller
 * holds ctx->lock. */
void uct_sctp_dpdk_ctx_wake_armed(uct_sctp_dpdk_ctx_t *ctx);
/* Copy an AM to another iface of this process.  @return UCS_OK,
 * UCS_ERR_NO_RESOURCE (its RX queue holds LOCAL_QUEUE_MAX AMs),
 * UCS_ERR_UNREACHABLE (iface gone) or UCS_ERR_NO_MEMORY. */
ucs_status_t uct_sctp_dpdk_iface_local_deliver(uct_sctp_dpdk_ctx_t *ctx,
					       uint16_t dst_iface_id,
					       uint8_t am_id,
					       const struct iovec *iov,
					       int iovcnt);
/* Whether iface @dst_iface_id of this process exists (@alive) and has room
 * for one more local AM (@return). */
int uct_sctp_dpdk_iface_local_room(uct_sctp_dpdk_ctx_t *ctx,
				   uint16_t dst_iface_id, int *alive);
/* Wake a worker that armed @iface and sleeps on its event fd (no-op when
 * not armed).  Caller holds iface->rx_lock. */
void uct_sctp_dpdk_iface_wake(uct_sctp_dpdk_iface_t *iface);

/* Whether @ep's association can take a message now: up, not failed since
 * the ep was made, and not refused by sg_send earlier in this poll.  An
 * RMA op already in iface->rma_txq continues when this holds. */
static UCS_F_ALWAYS_INLINE int
uct_sctp_dpdk_ep_assoc_ready(const uct_sctp_dpdk_iface_t *iface,
			     const uct_sctp_dpdk_ep_t *ep)
{
	const uct_sctp_dpdk_peer_t *peer = ep->peer;

	return (peer->state == UCT_SCTP_DPDK_PEER_UP) &&
	       (peer->fail_gen == ep->fail_gen) &&
	       (peer->blocked_poll != iface->ctx->poll_count);
}

/*
 * Whether a new operation of @ep (AM, PUT) may be sent now: the
 * association (local: the receiving iface's RX queue) can take it and
 * nothing issued earlier on the ep waits, neither its pending requests
 * (UCT contract, UCX test_pending.cc send_ooo_with_pending; while one is
 * being dispatched it may send) nor the unsent rest of an RMA op in
 * iface->rma_txq (a later AM must not reach the target first: UCP's
 * put, fence, ATP).  A poll elsewhere (another iface, the poll thread, an
 * AM handler's progress) re-opens the association but not an ep with a
 * queue.
 */
static UCS_F_ALWAYS_INLINE int
uct_sctp_dpdk_ep_can_send(const uct_sctp_dpdk_iface_t *iface,
			  const uct_sctp_dpdk_ep_t *ep)
{
	int alive;

	if (ucs_unlikely(ep->flags & UCT_SCTP_DPDK_EP_FLAG_LOCAL))
		return uct_sctp_dpdk_iface_local_room(iface->ctx,
						      ep->dst_iface_id, &alive);
	return uct_sctp_dpdk_ep_assoc_ready(iface, ep) &&
	       (ep->rma_txq_len == 0) &&
	       (ucs_queue_is_empty(&ep->pending_q) ||
		(ep->flags & UCT_SCTP_DPDK_EP_FLAG_DISPATCH));
}

/* An AM of @ep went on @stream, another than its own (the stream map):
 * remember it for the ep's next flush. */
void uct_sctp_dpdk_ep_flush_note_stream(uct_sctp_dpdk_ep_t *ep,
					uint16_t stream);

/* An AM of @ep was accepted on @stream: its next flush makes sure the
 * peer holds it (sctp_dpdk_flush.c). */
static UCS_F_ALWAYS_INLINE void
uct_sctp_dpdk_ep_flush_note(uct_sctp_dpdk_ep_t *ep, uint16_t stream)
{
	if (ucs_likely(stream == ep->stream))
		ep->am_dirty = 1;
	else
		uct_sctp_dpdk_ep_flush_note_stream(ep, stream);
}

/* ---- sctp_dpdk_flush.c: flush = delivered to the peer ---- */

/* A flush with a completion, waiting on its iface's flush_q. */
typedef struct uct_sctp_dpdk_flush_req {
	ucs_queue_elem_t queue;
	uct_completion_t *comp;
	struct uct_sctp_dpdk_ep *ep;	 /* NULL: iface flush */
	uint64_t below;			 /* ep flush: ops of the ep numbered
					  * below this are the flush's (its
					  * markers included); 0 = markers not
					  * all sent yet */
} uct_sctp_dpdk_flush_req_t;

/* Whether every message sg_send accepted for @peer was acknowledged
 * (caller holds ctx->lock). */
int uct_sctp_dpdk_peer_drained(uct_sctp_dpdk_ctx_t *ctx,
			       uct_sctp_dpdk_peer_t *peer);
/* Complete the flushes of @iface whose data is acknowledged now.
 * @return flushes completed. */
unsigned uct_sctp_dpdk_iface_flush_progress(struct uct_sctp_dpdk_iface *iface);
/* Complete @ep's waiting flushes with @status (ep going away). */
void uct_sctp_dpdk_ep_flush_cancel(struct uct_sctp_dpdk_ep *ep,
				   ucs_status_t status);
ucs_status_t uct_sctp_dpdk_iface_flush(uct_iface_h tl_iface, unsigned flags,
				       uct_completion_t *comp);

/* ---- sctp_dpdk_ep.c ---- */

UCS_CLASS_DECLARE_NEW_FUNC(uct_sctp_dpdk_ep_t, uct_ep_t, const uct_ep_params_t *);
UCS_CLASS_DECLARE_DELETE_FUNC(uct_sctp_dpdk_ep_t, uct_ep_t);

ucs_status_t uct_sctp_dpdk_ep_am_short(uct_ep_h tl_ep, uint8_t id,
				       uint64_t header, const void *payload,
				       unsigned length);
ucs_status_t uct_sctp_dpdk_ep_am_short_iov(uct_ep_h tl_ep, uint8_t id,
					   const uct_iov_t *iov,
					   size_t iovcnt);
ssize_t uct_sctp_dpdk_ep_am_bcopy(uct_ep_h tl_ep, uint8_t id,
				  uct_pack_callback_t pack_cb, void *arg,
				  unsigned flags);
ucs_status_t uct_sctp_dpdk_ep_am_zcopy(uct_ep_h tl_ep, uint8_t id,
				       const void *header,
				       unsigned header_length,
				       const uct_iov_t *iov, size_t iovcnt,
				       unsigned flags,
				       uct_completion_t *comp);
ucs_status_t uct_sctp_dpdk_ep_pending_add(uct_ep_h tl_ep,
					  uct_pending_req_t *req,
					  unsigned flags);
void uct_sctp_dpdk_ep_pending_purge(uct_ep_h tl_ep,
				    uct_pending_purge_callback_t cb,
				    void *arg);
ucs_status_t uct_sctp_dpdk_ep_flush(uct_ep_h tl_ep, unsigned flags,
				    uct_completion_t *comp);
ucs_status_t uct_sctp_dpdk_ep_fence(uct_ep_h tl_ep, unsigned flags);
/* True when the ep's association failed after the ep was created. */
int uct_sctp_dpdk_ep_is_failed(const uct_sctp_dpdk_ep_t *ep);
/* Dispatch pending requests of every ep of @iface that can send now.
 * @return requests completed. */
unsigned uct_sctp_dpdk_iface_dispatch_pending(uct_sctp_dpdk_iface_t *iface);

/* ---- sctp_dpdk_rma.c: put/get emulated over SCTP messages ---- */

/* Registration table (process-wide; the md's mem_reg/dereg). */
ucs_status_t uct_sctp_dpdk_rma_reg_add(void *address, size_t length,
				       uct_sctp_dpdk_rkey_t *rkey);
void uct_sctp_dpdk_rma_reg_remove(const uct_sctp_dpdk_rkey_t *rkey);
/* Target: handle an RMA request from the poll loop (ctx->lock held); the
 * message is consumed.  Any other message is consumed (deferred) only
 * while an RMA reply or request of its association waits.
 * @return 1 consumed, 0 for uct_sctp_dpdk_ctx_rx_deliver. */
int uct_sctp_dpdk_rma_rx_request(uct_sctp_dpdk_ctx_t *ctx,
				 struct sg_msg_desc *msg);
/* Target: send queued replies (ctx->lock held).  @return work done. */
unsigned uct_sctp_dpdk_rma_reply_progress(uct_sctp_dpdk_ctx_t *ctx);
unsigned uct_sctp_dpdk_rma_zc_progress(uct_sctp_dpdk_iface_t *iface);
/* Whether zero-copy releases wait in @iface's rma_zcq for
 * uct_sctp_dpdk_rma_zc_progress (takes ctx->lock). */
int uct_sctp_dpdk_rma_zc_queued(uct_sctp_dpdk_iface_t *iface);
void uct_sctp_dpdk_rma_ctx_cleanup(uct_sctp_dpdk_ctx_t *ctx);
/* RX_DIRECT: set the place function on every lane's endpoint. */
ucs_status_t uct_sctp_dpdk_rma_place_enable(uct_sctp_dpdk_ctx_t *ctx);
/* RX_DIRECT: whether @sg peeks the messages of this poll (lock held). */
void uct_sctp_dpdk_rma_place_peek(uct_sctp_dpdk_ctx_t *ctx, struct sg_ep *sg,
				  uint64_t now_tsc);
/* Initiator: a reply taken from the iface's RX queue (its thread). */
void uct_sctp_dpdk_rma_rx_reply(uct_sctp_dpdk_iface_t *iface,
				uct_sctp_dpdk_rx_desc_t *rx);
/* Initiator: continue ops whose data is not all sent.  @return work. */
unsigned uct_sctp_dpdk_rma_progress(uct_sctp_dpdk_iface_t *iface);
ucs_status_t uct_sctp_dpdk_rma_iface_init(uct_sctp_dpdk_iface_t *iface);
/* Iface close, first: wait (DEREG_WAIT_MS, then abort their associations)
 * until usrsctp released the PUT data of put_zcopy cancelled by ep
 * destroy, and complete them. */
#define UCT_SCTP_DPDK_RMA_ORPHAN_ABORTS 64 /* peers aborted at most */
void uct_sctp_dpdk_rma_iface_release_orphans(uct_sctp_dpdk_iface_t *iface);
void uct_sctp_dpdk_rma_iface_cleanup(uct_sctp_dpdk_iface_t *iface);
void uct_sctp_dpdk_rma_ep_init(uct_sctp_dpdk_ep_t *ep);
void uct_sctp_dpdk_rma_ep_cleanup(uct_sctp_dpdk_ep_t *ep);
/* Flush the ep's RMA: UCS_OK when nothing is outstanding, UCS_INPROGRESS
 * (@comp, if any, completes later), or an error status. */
ucs_status_t uct_sctp_dpdk_rma_ep_flush(uct_sctp_dpdk_ep_t *ep,
					unsigned flags,
					uct_completion_t *comp);
/* A FLUSH request on @stream of @ep, after every message sent on that
 * stream before it: an op whose ACK (the target holds those messages,
 * PUTs written) completes @comp (NULL: nobody waits; the ep's flush waits
 * for every op).  @marker: it only proves that the stream's earlier AMs
 * arrived (an ep flush's marker), which a SACK of it proves as well.
 * @return UCS_INPROGRESS, UCS_ERR_NO_RESOURCE (nothing sent: try again),
 * or an error status. */
ucs_status_t uct_sctp_dpdk_rma_flush_start(uct_sctp_dpdk_ep_t *ep,
					   uint16_t stream,
					   uct_completion_t *comp, int marker);
/* Number (rma_op_seq) of the oldest op of @ep not yet answered, markers
 * left out when @sacked (the association acknowledged everything sent);
 * UINT64_MAX when none is.  Ops are numbered as issued. */
uint64_t uct_sctp_dpdk_rma_ep_oldest(uct_sctp_dpdk_ep_t *ep, int sacked);
/* UCS_OK when no ep of @iface has RMA outstanding (sends FLUSH requests
 * where puts are unacknowledged), else UCS_INPROGRESS. */
ucs_status_t uct_sctp_dpdk_rma_iface_flush(uct_sctp_dpdk_iface_t *iface);

ucs_status_t uct_sctp_dpdk_ep_put_short(uct_ep_h tl_ep, const void *buffer,
					unsigned length, uint64_t remote_addr,
					uct_rkey_t rkey);
ssize_t uct_sctp_dpdk_ep_put_bcopy(uct_ep_h tl_ep, uct_pack_callback_t pack_cb,
				   void *arg, uint64_t remote_addr,
				   uct_rkey_t rkey);
ucs_status_t uct_sctp_dpdk_ep_put_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
					size_t iovcnt, uint64_t remote_addr,
					uct_rkey_t rkey,
					uct_completion_t *comp);
ucs_status_t uct_sctp_dpdk_ep_get_bcopy(uct_ep_h tl_ep,
					uct_unpack_callback_t unpack_cb,
					void *arg, size_t length,
					uint64_t remote_addr, uct_rkey_t rkey,
					uct_completion_t *comp);
ucs_status_t uct_sctp_dpdk_ep_get_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
					size_t iovcnt, uint64_t remote_addr,
					uct_rkey_t rkey,
					uct_completion_t *comp);

/* ---- sctp_dpdk_getzc.c: GET replies by reference ---- */

/* Install the unmap hook once and set ctx->get_zcopy_min and
 * ctx->dereg_wait_ms from @config (caller: ctx creation). */
void uct_sctp_dpdk_getzc_init(uct_sctp_dpdk_ctx_t *ctx,
			      const uct_sctp_dpdk_iface_config_t *config);
/* Send one GET reply message (@iov[0] our headers, @iov[1] the bytes of
 * registration @key) by reference, holding the region until usrsctp and
 * the port let go.  Caller holds ctx->lock and the registration table's
 * read lock.  @return as sg_send_zc. */
int uct_sctp_dpdk_getzc_send(uct_sctp_dpdk_ctx_t *ctx, struct sg_ep *sg,
			     sg_assoc_t assoc, uint16_t stream, uint32_t flags,
			     uint64_t key, const struct iovec *iov);
/* After registration @key left the table: wait until nothing references
 * its bytes (md dereg). */
void uct_sctp_dpdk_getzc_dereg_wait(uint64_t key);
/* Whether [@addr, @addr + @length) overlaps bytes a zero-copy GET reply
 * still references (a PUT there must wait). */
int uct_sctp_dpdk_getzc_busy(uint64_t addr, uint64_t length);
/* After @ctx's endpoints closed: drop its records (their done never
 * runs), so that no unmap waits for them. */
void uct_sctp_dpdk_getzc_forget(uct_sctp_dpdk_ctx_t *ctx);
/* Dereg/unmap calls that waited for references, and how long (µs). */
void uct_sctp_dpdk_getzc_wait_stats(uint64_t *waits_p, uint64_t *wait_us_p);
/* Zero-copy GET reply messages still referenced (tests). */
uint64_t uct_sctp_dpdk_getzc_held(void);

#ifdef __cplusplus
}
#endif

#endif /* UCT_SCTP_DPDK_H */
