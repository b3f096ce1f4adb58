/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sg.h - public API of the sctp-dpdk SCTP layer: usrsctp hosted over one
 * dataplane port.
 *
 * One endpoint (sg_ep) per dataplane port: a one-to-many (SOCK_SEQPACKET)
 * usrsctp socket bound to the port's AF_CONN address and one SCTP port.
 * Associations to peers (IPv4 address + SCTP port) are set up on demand by
 * sg_connect() on the active side and accepted on the passive side; both
 * show up as events (sg_next_event).  Messages are whole: a message sent
 * with sg_send() arrives at the peer as one chain of descriptors from
 * sg_recv(), on the same stream, in order per stream (or unordered).
 *
 *   dp_port_poll -> dp_port_recv -> usrsctp_conninput -> socket
 *     -> usrsctp_recvv into free rx descriptors -> rx ring -> sg_recv
 *   sg_send -> usrsctp_sendv -> conn_output -> dp_port_send -> NIC
 *
 * Threading: usrsctp state is process-wide.  Every sg_* call except
 * sg_recv/sg_msg_release is made by one thread (the poll thread), for all
 * endpoints of the process.  sg_recv and sg_msg_release may run on one other
 * thread: the rx ring and the descriptor free ring are SPSC.
 *
 * Buffer ownership: a descriptor chain returned by sg_recv() belongs to the
 * caller until sg_msg_release(); while the consumer holds descriptors the
 * endpoint stops reading from usrsctp when it runs out of them, so the SCTP
 * receive window closes (back-pressure; nothing is dropped).
 */
#ifndef SG_H
#define SG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/uio.h>

#include "dp.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SG_STREAMS_MAX 65535
#define SG_IOV_MAX 16

/** Association handle: usrsctp's association id, never 0 when valid. */
typedef uint32_t sg_assoc_t;

/**
 * Validated configuration of one endpoint.  Parsed from "key=value" tokens
 * by sg_config_parse(); sg_config_help() lists keys, defaults and ranges.
 */
struct sg_config {
	uint16_t port;		   /* local SCTP port; default 5000 */
	uint16_t streams;	   /* in and out streams; default 10 */
	uint32_t rto_initial_ms;   /* default 1000 */
	uint32_t rto_min_ms;	   /* default 100 */
	uint32_t rto_max_ms;	   /* default 3000 */
	uint32_t hb_interval_ms;   /* heartbeat interval; 0 = off */
	uint32_t sack_delay_ms;	   /* delayed SACK; must stay below
				    * rto_min_ms (default 20; 0 = SACK every
				    * packet) */
	uint16_t path_max_rxt;	   /* retransmissions before the path (and
				    * with one path the association) fails */
	bool nodelay;		   /* SCTP_NODELAY (no Nagle); default 1 */
	uint32_t sndbuf_bytes;	   /* socket send buffer; default 4 MiB */
	uint32_t rcvbuf_bytes;	   /* socket receive buffer; default 4 MiB */
	uint32_t rx_descs;	   /* receive descriptors; default 512 */
	uint32_t rx_buf_bytes;	   /* data bytes per descriptor; 64 KiB */
	uint32_t rx_headroom_bytes; /* free bytes in front of the data */
	uint32_t max_msg_bytes;	   /* largest message; default 16 MiB */
	uint32_t max_peers;	   /* peer IPv4 addresses at most; the
				    * tables grow as peers arrive, nothing
				    * is allocated for this bound; default
				    * 1048576 */
	uint32_t pending_peers;	   /* peers without an association (made
				    * by packets from new sources) at most;
				    * a new one takes the slot of the least
				    * recently heard; default 1024 */
	uint32_t pending_ms;	   /* such a peer silent this long is
				    * reclaimed; default 5000 */
	uint32_t event_queue;	   /* event queue entries; default 1024 */
	uint32_t max_burst;	   /* SCTP_MAX_BURST: packets one output may
				    * send beyond those in flight (usrsctp
				    * cuts cwnd to flight + max_burst MTUs);
				    * 0 = no limit (the default) */
	uint32_t sack_hold_us;	   /* hold a SACK-only packet of a poll that
				    * delivered messages up to this long, to
				    * leave with the reply (ports that batch
				    * TX: dp_port_send_held); 0 = off
				    * (default; sg_link_hold_end) */
	uint32_t stream_sched;	   /* usrsctp stream scheduler
				    * (SCTP_PLUGGABLE_SS, SCTP_SS_*): 0 its
				    * default round-robin over streams
				    * (default), 5 first come first served:
				    * messages leave in the order they were
				    * sent, whatever their stream */
	bool sack_immediate;	   /* the last packet of each message asks
				    * the peer to SACK it at once (I bit,
				    * RFC 7053), so a sender waiting for
				    * its acknowledgment (flush) never waits
				    * out the peer's delayed SACK while the
				    * other packets are SACKed every second
				    * one; default 1 */
	uint32_t tx_chain_min_bytes; /* tx_chain_min: packets of at least
				    * this many bytes with DATA leave as
				    * usrsctp's mbuf chain, the payload by
				    * reference (no copy), on ports whose
				    * driver copies with the CPU
				    * (dp_port_tx_ext; elsewhere the buffers,
				    * without an IOVA, are copied); 0 = off,
				    * every packet is written into one mbuf */
	bool rx_ext;		   /* usrsctp keeps each received packet in
				    * its DPDK mbuf instead of copying it
				    * (usrsctp-patches/0003; sg_stats
				    * rx_ext_*); default 1 */
	uint32_t peer_gone_ms;	   /* every port memif and its link down
				    * this long (the peer process left):
				    * abort the endpoint's associations
				    * (SG_EV_LOST) instead of waiting for
				    * heartbeats; 0 = off; default 1000 */
	uint32_t nr_sack;	   /* non-renegable SACK (SCTP_NRSACK_SUPPORTED,
				    * both ends must offer it): the receiver
				    * reports data it will never take back,
				    * so the sender frees it from its send
				    * buffer before the cumulative ack.
				    * 0 off (default); 1 data delivered (a
				    * message complete and in order on its
				    * stream); 2 every chunk received, also
				    * those held for reordering (usrsctp's
				    * process-wide sctp_do_drain=0: it never
				    * reneges here anyway) */
	uint32_t tx_cluster_bytes; /* tx_cluster: a send copies the user's
				    * data into buffers of up to this many
				    * bytes instead of 2048-byte clusters
				    * (usrsctp-patches/0005), so a DATA
				    * chunk is one piece of a chained packet;
				    * 0 = usrsctp's clusters; process-wide
				    * (usrsctp's): the endpoint opened last
				    * sets it */
};

/**
 * Fill @cfg with defaults, then apply whitespace-separated "key=value"
 * tokens from @text (NULL or "" keeps the defaults).  Each bad token is
 * logged once, naming the key, the value, the limit and the fix; nothing is
 * clamped.
 * @return 0, or -EINVAL if any token is unknown, malformed or out of range,
 *         or the fields contradict each other (see sg_config_check).
 */
int sg_config_parse(const char *text, struct sg_config *cfg);

/** Apply defaults only; cannot fail. */
void sg_config_defaults(struct sg_config *cfg);

/**
 * Check a configuration built in code: every field in range and
 * rto_min_ms <= rto_initial_ms <= rto_max_ms, max_msg_bytes <=
 * rx_descs * rx_buf_bytes.  Logs each violation once.
 * @return 0 or -EINVAL.
 */
int sg_config_check(const struct sg_config *cfg);

/** Multi-line help: every key, its default and its range. */
const char *sg_config_help(void);

struct sg_ep;

/**
 * Open an endpoint on @port (opened by dp_port_open, owned by the caller,
 * which keeps it open until sg_ep_close).  Initialises usrsctp for the
 * process on first use (threadless, CRC32c left to the dataplane).  One
 * endpoint per dataplane port: the endpoint consumes everything
 * dp_port_recv returns.
 * @return 0; -EINVAL bad configuration (logged); -ENOMEM allocation;
 *         -EADDRINUSE SCTP port already bound in this process;
 *         -EIO usrsctp refused a socket option (logged with the option).
 */
int sg_ep_open(struct dp_port *port, const struct sg_config *cfg,
	       struct sg_ep **ep_p);

/**
 * Open a lane of @base: another socket of this process, bound to
 * @cfg->port (not @base's), on @base's port and peer table.  Its
 * associations are its own (own congestion window, own streams); packets
 * for it arrive through @base's sg_poll (usrsctp demultiplexes them by
 * SCTP port), so poll @base as well as the lane, under the same lock.
 * On a port with several queues (dp queues=N) the lane on @base's port
 * + q (q < N) sends on queue q and its sg_poll polls queue q (where the
 * peer's lane q sends); the calls still need the one lock.
 * Close every lane before @base.
 * @return 0; -EINVAL bad arguments or configuration (a lane of a lane);
 *         -EADDRINUSE @cfg->port is taken; -ENOMEM; -EIO.
 */
int sg_ep_open_lane(struct sg_ep *base, const struct sg_config *cfg,
		    struct sg_ep **ep_p);

/**
 * Abort every association, close the socket, free all descriptors (the
 * consumer must have released them) and the endpoint.  Accepts NULL.
 * The last endpoint of the process also shuts usrsctp down.
 */
void sg_ep_close(struct sg_ep *ep);

/**
 * One iteration of the endpoint's loop: poll the port, feed received SCTP
 * packets to usrsctp, run usrsctp's timers (at most once per ms), read
 * ready messages into the rx ring, continue a large send, flush TX.
 * @return work done (packets in + messages read + timer runs); 0 = idle,
 *         for dp_idle_update().
 */
unsigned int sg_poll(struct sg_ep *ep, uint64_t now_tsc);

/**
 * Start an association to @peer_ip_be:@peer_port (non-blocking).  The
 * outcome arrives as SG_EV_UP or SG_EV_CANT_START with the same handle.
 * A peer off the port's subnet is refused by the dataplane on every send
 * (counted in tx_drops) and ends in SG_EV_CANT_START.
 * @return 0 and the handle in @assoc_p; -EALREADY an association to that
 *         peer exists or is starting (its handle is still stored);
 *         -EINVAL @peer_ip_be cannot be a peer (0.0.0.0/8, loopback,
 *         multicast, broadcast, the port's own address; logged);
 *         -ENOSPC max_peers reached, or the association table (4 x
 *         max_peers) is full (the association is aborted; logged);
 *         -ENOMEM the peer tables could not grow; -EIO usrsctp refused
 *         (logged).  An association that comes up while the table is
 *         full is aborted and reported as SG_EV_CANT_START with error
 *         ENOSPC (sg_stats.assoc_table_full).
 */
int sg_connect(struct sg_ep *ep, uint32_t peer_ip_be, uint16_t peer_port,
	       sg_assoc_t *assoc_p);

/**
 * Start a graceful shutdown of @assoc (SHUTDOWN chunk after queued data);
 * completes with SG_EV_SHUTDOWN.  An association whose peer started its
 * shutdown first is left to finish it (0).
 * @return 0; -ENOTCONN unknown association.
 */
int sg_disconnect(struct sg_ep *ep, sg_assoc_t assoc);

#define SG_SEND_UNORDERED 0x1 /* deliver without waiting for order */
/* more of one transfer follows at once: no I bit on this message's last
 * chunk (sack_immediate), the receiver SACKs every second packet as usual;
 * the transfer's last message goes without it and asks for its SACK */
#define SG_SEND_MORE 0x2

/**
 * Send one message of the bytes in @iov[0..@iovcnt) on @stream of @assoc.
 * Messages that fit into the free send buffer are taken whole (usrsctp
 * copies them) and the caller may reuse its buffers at once.  A message
 * larger than the send buffer is taken in pieces with explicit record
 * boundaries: it returns -EINPROGRESS, the caller keeps @iov's buffers
 * unchanged until SG_EV_SEND_DONE for @assoc, and sg_poll() sends the rest.
 * Only one such large message is in progress per endpoint.
 * @return 0 taken whole; -EINPROGRESS large message started;
 *         -EAGAIN no room now (back-pressure: poll and retry; counted);
 *         -ENOTCONN association unknown or not up;
 *         -EMSGSIZE length 0 or above max_msg_bytes;
 *         -EINVAL stream >= streams, iovcnt outside 1..SG_IOV_MAX or bad
 *         flags; -EIO usrsctp failed (logged).
 */
int sg_send(struct sg_ep *ep, sg_assoc_t assoc, uint16_t stream,
	    uint32_t flags, uint32_t ppid, const struct iovec *iov,
	    int iovcnt);

/** True while a large message started by sg_send is still being sent. */
bool sg_send_busy(const struct sg_ep *ep);

/**
 * Whether @assoc can do without this process polling: the peer
 * acknowledged every byte sent on it (nothing queued in usrsctp, in flight
 * or left of a large send), no frame waits in the port's TX buffer, and no
 * SACK is owed to the peer: a packet of ours left after its last DATA
 * (usrsctp bundles a pending SACK into it), or that DATA came more than
 * sack_delay_ms + SG_QUIET_MARGIN_MS ago (sg_poll ran the SACK timer).
 * A user-space stack that stops polling neither retransmits nor
 * acknowledges: a process checks this before it may block outside the
 * stack (e.g. in MPI_Finalize's out-of-band barrier).  An unknown or closed
 * association is quiet.
 */
bool sg_assoc_quiet(struct sg_ep *ep, sg_assoc_t assoc, uint64_t now_tsc);

/**
 * The half of sg_assoc_quiet about the peer's data: this side owes the
 * peer of @assoc nothing, i.e. no frame waits in the port's TX buffer and
 * no SACK for the peer's DATA is pending (a packet of ours left after it,
 * or its SACK delay has passed).  Our own data may still be unacknowledged:
 * a caller that knows by other means that the peer has what it needs
 * (sctp_dpdk's per-ep flush marker) checks only this before it may block
 * outside the stack.  An unknown or closed association is answered.
 */
bool sg_assoc_answered(struct sg_ep *ep, sg_assoc_t assoc, uint64_t now_tsc);

/**
 * Bytes sg_send accepted for @assoc that the peer has not acknowledged
 * yet: queued in usrsctp, in flight or awaiting a SACK (usrsctp frees a
 * chunk only when it is cumulatively acknowledged), plus the rest of a
 * large send still being handed over.  0 means everything sent on the
 * association was delivered to the peer's SCTP stack.
 * @return 0 and the count in @bytes_p; -ENOTCONN the association is
 *         unknown (never started, shut down, lost: nothing is pending in
 *         it any more).
 */
int sg_assoc_unacked(struct sg_ep *ep, sg_assoc_t assoc, uint64_t *bytes_p);

/**
 * Bytes of @assoc's queued messages that usrsctp has not transmitted yet:
 * held back by the congestion window or the peer's receive window, they
 * leave only as SACKs arrive, which this process handles only inside
 * sg_poll.  (usrsctp-patches/0008, SCTP_SDP_UNSENT.)
 * @return 0 and the count in @bytes_p; -ENOTCONN the association is unknown.
 */
int sg_assoc_unsent(struct sg_ep *ep, sg_assoc_t assoc, uint32_t *bytes_p);

/**
 * Associations of @ep whose sends left bytes untransmitted at the last
 * sg_send or sg_poll (0: everything accepted has been on the wire at
 * least once).  A caller about to stop polling (an MPI rank returning to
 * its computation) polls on while this is non-zero and the peer answers.
 */
unsigned int sg_ep_unsent(const struct sg_ep *ep);

/** Untransmitted bytes of the associations sg_ep_unsent counts. */
uint64_t sg_ep_unsent_bytes(struct sg_ep *ep);

/**
 * Whether the peer of @assoc has closed its side and this side answered:
 * the peer sent SHUTDOWN, which RFC 9260 (9.2) allows only once all its own
 * data was acknowledged, and usrsctp answered with SHUTDOWN ACK once all of
 * ours was (state SHUTDOWN-ACK-SENT).  Both directions are complete; only
 * the peer's SHUTDOWN COMPLETE is outstanding, so nothing is lost if this
 * process goes once its port has sent the SHUTDOWN ACK.  An unknown
 * association counts as closed.
 */
bool sg_assoc_peer_closed(struct sg_ep *ep, sg_assoc_t assoc);

/**
 * Whether this side has sent its SHUTDOWN on @assoc (SHUTDOWN-SENT or
 * SHUTDOWN-ACK-SENT): it sends no more data there.  With nothing of its
 * own unacknowledged and no SACK owed (sg_assoc_quiet) only the handshake
 * is left.  An unknown association counts as closing.
 */
bool sg_assoc_closing(struct sg_ep *ep, sg_assoc_t assoc);

/** @assoc's SCTP state ("established", "shutdown-sent", ...; "unknown"
 * when sg does not know it), for diagnostics. */
const char *sg_assoc_state_name(struct sg_ep *ep, sg_assoc_t assoc);

/**
 * DATA payload bytes one packet of @assoc carries (usrsctp's fragmentation
 * point: path MTU less the SCTP common and DATA chunk headers, rounded
 * down to 4).  A message of k times this many bytes leaves as k full
 * packets; one byte more costs a whole extra packet.
 * @return the bytes (> 0); -ENOTCONN the association is unknown.
 */
int sg_assoc_frag_bytes(struct sg_ep *ep, sg_assoc_t assoc);

#define SG_MSG_UNORDERED 0x1 /* was sent unordered */
#define SG_MSG_PARTIAL 0x2   /* longer than max_msg_bytes: more of the same
			      * message follows in the next chain */

/**
 * A received message: a chain of segments (@next), each a buffer with
 * rx_headroom_bytes free in front of @data (the consumer may write there,
 * e.g. a UCX descriptor header).  The head carries the message metadata.
 */
struct sg_msg_desc {
	uint8_t *data;		   /* segment bytes */
	uint32_t len;		   /* bytes at data */
	uint32_t msg_len;	   /* head: total bytes of the message */
	sg_assoc_t assoc;	   /* head: sender's association */
	uint32_t ppid;		   /* head: payload protocol id (host order) */
	uint16_t stream;	   /* head: stream id */
	uint16_t flags;		   /* head: SG_MSG_* */
	uint32_t nb_segs;	   /* head: segments in the chain */
	struct sg_msg_desc *next;  /* next segment or NULL */
};

/**
 * Take up to @n whole messages from the rx ring (zero copy).
 * @return number of chains stored in @msgs.
 */
unsigned int sg_recv(struct sg_ep *ep, struct sg_msg_desc **msgs,
		     unsigned int n);

/** Give a chain back to its endpoint's free ring.  Accepts NULL. */
void sg_msg_release(struct sg_msg_desc *msg);

/** Association and send events, in the order they happened. */
enum sg_event_type {
	SG_EV_UP = 1,	    /* association established (either side) */
	SG_EV_CANT_START,   /* sg_connect failed (INIT retries exhausted) */
	SG_EV_LOST,	    /* peer unreachable (retransmissions) or ABORT */
	SG_EV_RESTART,	    /* peer restarted; same handle, state reset */
	SG_EV_SHUTDOWN,	    /* graceful shutdown completed */
	SG_EV_SEND_DONE,    /* large sg_send fully handed to usrsctp */
	SG_EV_SEND_FAILED,  /* large sg_send aborted (association gone) */
};

struct sg_event {
	enum sg_event_type type;
	sg_assoc_t assoc;
	uint32_t peer_ip_be;	/* 0 when unknown */
	uint16_t peer_port;	/* host order; 0 when unknown */
	uint16_t error;		/* sac_error of the notification */
};

/** Name of an event type ("up", "lost", ...). */
const char *sg_event_name(enum sg_event_type type);

/**
 * Take the oldest pending event.
 * @return 0 and the event in @ev; -EAGAIN none pending.
 */
int sg_next_event(struct sg_ep *ep, struct sg_event *ev);

/** Association state as the endpoint knows it. */
bool sg_assoc_up(const struct sg_ep *ep, sg_assoc_t assoc);

struct sg_stats {
	uint64_t msgs_out, bytes_out;	  /* messages fully taken by usrsctp */
	uint64_t msgs_in, bytes_in;	  /* messages put on the rx ring */
	uint64_t pkts_in, pkts_out;	  /* SCTP packets to/from usrsctp */
	/* Copies of received data, all made by usrsctp (the dataplane and
	 * this layer copy nothing on receive): usrsctp_conninput copies each
	 * SCTP packet into a fresh mbuf chain, usrsctp_recvv copies message
	 * bytes out of it into an rx descriptor.  So every message byte is
	 * copied out exactly once and in at least once (retransmitted and
	 * duplicated packets are copied again); notifications are not
	 * counted. */
	uint64_t rx_copies;		  /* copy operations (packets in +
					   * reads of message bytes) */
	uint64_t rx_copy_input_bytes;	  /* SCTP packet bytes copied in by
					   * usrsctp_conninput */
	uint64_t rx_copy_recv_bytes;	  /* message bytes copied out by
					   * usrsctp_recvv */
	uint64_t rx_backpressure;	  /* reads stopped: no descriptor */
	uint64_t tx_backpressure;	  /* sg_send returned -EAGAIN */
	uint64_t tx_drops;		  /* conn_output packets refused (size,
					   * off-link, no mbuf) */
	uint64_t tx_nobufs;		  /* conn_output packets the dataplane
					   * refused under back-pressure (TX
					   * buffer, pacer queue or ARP hold
					   * full, -ENOBUFS): counted there
					   * too; usrsctp keeps their chunks
					   * unsent and sends them later */
	uint64_t rx_not_sctp;		  /* non-SCTP packets discarded */
	uint64_t rx_no_peer;		  /* packets dropped: max_peers
					   * reached or out of memory */
	uint64_t rx_bad_src;		  /* packets dropped: a source no
					   * peer can have (0.0.0.0/8, 127/8,
					   * multicast, 240/4, broadcast, our
					   * own address) */
	uint64_t rx_bad_vtag;		  /* packets whose verification tag
					   * is none we gave the peer: they
					   * change no UDP port or path state
					   * (usrsctp drops them) */
	uint64_t rx_pending_full;	  /* packets from a new source
					   * dropped: pending_peers strangers
					   * all heard this input round (also
					   * in rx_no_peer) */
	uint64_t peers_reclaimed;	  /* strangers (peers without an
					   * association) dropped after
					   * pending_ms or for a newer one */
	uint64_t rx_probe_refused;	  /* path probes ignored: naming no
					   * peer with an association, or an
					   * address another peer owns, or a
					   * path address known otherwise */
	uint64_t events_dropped;	  /* event queue overflow */
	uint64_t notify_cut;		  /* notifications longer than
					   * SG_NOTIFY_BYTES (a long cause
					   * list): handled from their start */
	uint64_t notify_bad;		  /* notifications too short for
					   * their own fixed part: ignored */
	uint64_t assoc_table_full;	  /* associations aborted as they
					   * came up: the association table
					   * (4 x max_peers) was full */
	uint64_t timer_runs;		  /* usrsctp_handle_timers calls */
	uint64_t crc_drops;		  /* dataplane CRC32c drops */
	uint64_t rx_data_wrong_queue;	  /* lanes on a port with queues:
					   * DATA packets for lane j that
					   * arrived on another queue than j */
	uint64_t unsent_untracked;	  /* sends that left bytes in usrsctp
					   * while SG_UNSENT_TRACK associations
					   * were tracked already */
	uint64_t tx_first_pkt_early;	  /* messages of several packets to an
					   * idle association whose first
					   * packet left before usrsctp took
					   * the rest (sg_send) */
	/* Direct placement (sg_ep_set_place): of rx_copy_recv_bytes, the
	 * bytes usrsctp_recvv wrote straight into a consumer's buffers
	 * and those it wrote into the scratch buffer (the rest of a message
	 * whose destination went away); the others went into descriptors. */
	uint64_t rx_direct_bytes;
	uint64_t rx_direct_msgs;	  /* messages with bytes placed */
	uint64_t rx_discard_bytes;
	/* Transmit copies of this layer: none while usrsctp writes each
	 * packet into an mbuf of ours (usrsctp-patches/0002); a packet it
	 * put in malloc'd memory (its conn_output_alloc hook unset or
	 * refusing; an empty pool drops the packet instead) is copied. */
	uint64_t tx_direct_pkts;	  /* packets sent from the mbuf usrsctp
					   * wrote them into */
	uint64_t tx_copy_bytes;		  /* packet bytes copied by
					   * conn_output into an mbuf */
	/* Chained TX (tx_chain_min, usrsctp-patches/0004): packets that
	 * left as usrsctp's own mbuf chain (counted as pkts_out: not the
	 * tries back-pressure refused), the bytes sent from its buffers
	 * by reference, and those copied into the header segment (common
	 * header, control chunks, the first DATA chunk's header).  Bytes
	 * usrsctp wrote into our mbufs (0002, the other packets) are in
	 * tx_direct_bytes (as tx_direct_pkts: every try). */
	uint64_t tx_chain_pkts;
	uint64_t tx_chain_ref_bytes;
	uint64_t tx_chain_copy_bytes;
	uint64_t tx_direct_bytes;
	/* Receive without usrsctp's copy (rx_ext, usrsctp-patches/0003):
	 * usrsctp_conninput_ext keeps the packet in the DPDK mbuf it came
	 * in (its chunks' data stay there until read), so rx_copies and
	 * rx_copy_input_bytes count only the packets copied: rx_ext off, a
	 * shared or chained mbuf, or usrsctp holding a quarter of the mbuf
	 * pool already (rx_ext_pool_low). */
	uint64_t rx_ext_pkts;		  /* packets taken without a copy */
	uint64_t rx_ext_bytes;		  /* their bytes */
	uint64_t rx_ext_pool_low;	  /* packets copied: pool share used */
	uint64_t rx_ext_held;		  /* process-wide, at the snapshot:
					   * mbufs usrsctp holds now */
	uint64_t peer_gone_aborts;	  /* associations aborted because
					   * the memif peer left
					   * (peer_gone_ms) */
	/* NR-SACK (nr_sack): NR-SACK chunks from the peer (both ends
	 * negotiated it), and those that reported non-renegable data above
	 * a hole (NR gap blocks: the send buffer space this end freed early) */
	uint64_t rx_nr_sacks;
	uint64_t rx_nr_sacks_nr_gaps;
	/* Large send buffers (tx_cluster, usrsctp-patches/0005): the
	 * payload segments of the chained packets (tx_chain_pkts; about
	 * one per DATA chunk with them, one per 2048 bytes without), and
	 * the buffer size usrsctp uses now (process-wide). */
	uint64_t tx_chain_segs;
	uint64_t tx_cluster_bytes;
	uint64_t tx_clusters_held;	  /* process-wide, at the snapshot:
					   * those buffers not yet freed (0
					   * once all sent data are acked) */
};

/** usrsctp chains handed to the dataplane and not yet released (all
 * endpoints of the process): 0 once every chained packet left or was
 * dropped. */
uint64_t sg_tx_chains_held(void);

/** The chained packets' records (all endpoints of the process): @live
 * malloc'd and not freed (in flight or kept for reuse; 0 once every
 * chain is released and its link finished), @mallocs ever malloc'd
 * (bounded by the chains in flight at the peak, not one per packet). */
void sg_tx_chain_refs(uint64_t *live, uint64_t *mallocs);

/** Snapshot of the endpoint's counters (poll thread). */
void sg_ep_stats(const struct sg_ep *ep, struct sg_stats *stats);

/** Print counters, one "name value" per line. */
void sg_stats_print(const struct sg_stats *stats, FILE *f);

/**
 * usrsctp's process-wide counters that matter for loss analysis, as JSON
 * object members (no braces): data_chunks_out/in, retrans_chunks,
 * fast_retrans_chunks, t3_timeouts, dup_chunks_in, sacks_out/in,
 * t3_window_probes (T3 expiries that were zero-window probes, also in
 * t3_timeouts).
 * Formats like snprintf into @buf of @len bytes; valid before and after
 * any endpoint exists (all zero before).
 * @return the length the whole text needs.
 */
int sg_stack_stats_json(char *buf, size_t len);

/*
 * Failover beneath one association (sg_path.c): the endpoint reaches a peer
 * over several dataplane ports ("paths": 0 the primary, then backups).
 * usrsctp sees one address per peer; the link sends on the active path and
 * moves to the next alive one when the active path's port reports link
 * down or nothing was heard from the peer on it for dead_ms (both ends
 * probe every path that carried nothing for probe_ms); it returns to the
 * primary once that was alive for return_ms (0: stay).
 */
#define SG_PATHS_MAX 4

struct sg_path_config {
	bool on;		/* failover enabled */
	uint32_t probe_ms;	/* probe an idle path this often; default 10 */
	uint32_t dead_ms;	/* silent this long = dead; default 50 */
	uint32_t return_ms;	/* primary alive this long = go back; 0 = stay;
				 * default 1000 */
};

/** Defaults, failover off. */
void sg_path_config_defaults(struct sg_path_config *cfg);

/**
 * Parse "n" / "" (off), "y" (on, defaults) or "probe_ms=N dead_ms=N
 * return_ms=N" (on).  Each bad token is logged naming the key, the value
 * and the range.  @return 0 or -EINVAL.
 */
int sg_path_config_parse(const char *text, struct sg_path_config *cfg);

/** Multi-line help of the failover keys. */
const char *sg_path_config_help(void);

/**
 * Give @ep backup paths: @ports[0..@n) (open, same MTU as the endpoint's
 * port, owned by the caller until sg_ep_close) become paths 1..@n.  Call
 * once, before any association.
 * @return 0; -EINVAL @n outside 1..SG_PATHS_MAX-1, a port's MTU differs,
 *         @cfg off or already called (logged).
 */
int sg_ep_paths(struct sg_ep *ep, struct dp_port *const *ports, unsigned int n,
		const struct sg_path_config *cfg);

/**
 * The peer whose primary address is @peer_ip_be is reachable at
 * @path_ips_be[k] over path k+1 (k < @n).  Packets from those addresses
 * belong to its association.  Peers also learn each other's paths from
 * the probes, which may fill in a path address not known yet but never
 * change one.  @return 0; -EINVAL no paths, @n too large, or an address
 * no peer can have; -EEXIST an address belongs to another peer already;
 * -ENOSPC max_peers reached.
 */
int sg_ep_peer_paths(struct sg_ep *ep, uint32_t peer_ip_be,
		     const uint32_t *path_ips_be, unsigned int n);

/** Failover counters of an endpoint (all zero without paths). */
struct sg_path_stats {
	unsigned int nb_paths;		  /* ports of the endpoint */
	uint64_t failovers;		  /* active path died, moved on */
	uint64_t failbacks;		  /* back to the primary */
	uint64_t probes_out, probes_in;
	uint64_t pkts_out[SG_PATHS_MAX];  /* SCTP packets sent per path */
	uint64_t pkts_in[SG_PATHS_MAX];	  /* SCTP packets received per path */
	int64_t last_switch_to_tx_ms;	  /* last switch -> first SCTP packet
					   * on the new path; -1 none yet */
	int64_t last_switch_to_rx_ms;	  /* last switch -> first SCTP packet
					   * from the peer on the new path */
	uint64_t replayed;		  /* packets sent again at failovers */
};

void sg_ep_path_stats(const struct sg_ep *ep, struct sg_path_stats *st);

/*
 * Direct placement of received messages (sg_place.c): a consumer that can
 * tell from the first bytes of a message where the rest belongs (an RMA
 * reply names its destination buffer) lets usrsctp_recvv write the rest
 * there, instead of into descriptors it would copy from later.
 *
 * With a place function set, the endpoint reads at most @peek_bytes of
 * each new message into a descriptor.  A message that ends there is
 * published as usual.  For a longer one it calls @place(arg, ep, head,
 * off, &len) before every read of the rest: head holds the first piece
 * (data, len) and the metadata; off is the message offset of the next
 * byte.  @place returns a buffer of len bytes for the bytes from off on,
 * or NULL.  NULL at the first call: the message goes into descriptors as
 * usual.  NULL later (its destination went away, or the message is
 * longer than the buffer): the rest is read into a scratch buffer and
 * dropped (SG_MSG_DISCARDED).  After each read into a buffer @place gave,
 * @done(arg, head, off, bytes) runs (bytes may be 0), so @place may take
 * a lock that @done releases.  Both run inside sg_poll, so a buffer the
 * consumer withdraws under the lock it holds around sg_poll is never
 * written after the withdrawal, even when the message is partly read
 * (partial delivery) across polls.
 *
 * The message is then published as one descriptor holding only the first
 * piece (len), with SG_MSG_PLACED and msg_len counting every byte.  The
 * socket runs with SCTP_FRAGMENT_INTERLEAVE 0: until a partly read message
 * is finished, every read continues it (no other message, no
 * notification); an association that goes mid-message drops it.
 */
#define SG_MSG_PLACED 0x4    /* bytes after the first piece went to the
			      * consumer's buffers (or were discarded) */
#define SG_MSG_DISCARDED 0x8 /* PLACED: some were discarded */

typedef void *(*sg_place_fn)(void *arg, struct sg_ep *ep,
			     const struct sg_msg_desc *head, uint32_t off,
			     size_t *len_p);
typedef void (*sg_place_done_fn)(void *arg, const struct sg_msg_desc *head,
				 uint32_t off, size_t bytes);

/**
 * Set (or with @place NULL clear) @ep's place function; @peek_bytes is
 * the first piece, 1..rx_buf_bytes.  Call between polls with no message
 * partly read (e.g. right after sg_ep_open).
 * @return 0; -EINVAL bad @peek_bytes or no @done; -EBUSY a message is
 *         partly read; -ENOMEM no scratch buffer.
 */
int sg_ep_set_place(struct sg_ep *ep, uint32_t peek_bytes, sg_place_fn place,
		    sg_place_done_fn done, void *arg);

/**
 * Peek new messages (@on, the default after sg_ep_set_place) or read them
 * whole as without a place function (no place call; saves the second
 * usrsctp_recvv of every message longer than the peek while the consumer
 * expects nothing to place).  Takes effect from the next new message; a
 * message being placed is finished.
 */
void sg_ep_place_peek(struct sg_ep *ep, bool on);

/** Messages published on @ep's rx ring and not yet taken by sg_recv. */
unsigned int sg_rx_pending(const struct sg_ep *ep);

/** The dataplane port the endpoint runs on. */
struct dp_port *sg_ep_port(const struct sg_ep *ep);

/* ---- Zero-copy send (sg_zc.c, usrsctp-patches/0006) ---- */

/** Runs once per sg_send_zc that returned 0, from a later sg_poll (or
 * sg_ep_close) of the endpoint, never inside sg_send_zc: @status 0 when
 * the association was still up, -ECONNRESET when it went (the bytes may
 * not have arrived).  From then on the buffers are the caller's again. */
typedef void (*sg_send_done_fn)(void *arg, int status);

/**
 * sg_send without the copy: usrsctp references the bytes of @iov in place
 * (send queue, retransmissions, chained TX segments) instead of copying
 * them into its clusters.  @copy_bytes: 0, or iov[0].iov_len when iov[0]
 * is a header (at most one packet) whose buffer is gone on return: those
 * are copied.  The caller keeps every other buffer mapped and unchanged
 * until @done(@arg, status) runs, which is when no reference to them is
 * left (the last DATA chunk cumulatively acknowledged and every chained
 * packet sent, or the association gone).  A message that does not fit
 * into the free send buffer now is continued from sg_poll (sg_send_busy);
 * no SG_EV_SEND_DONE/FAILED events for it: @done says how it ended.
 * @return 0 taken (@done will run once; a usrsctp failure after part of
 *         the message was taken is reported through it); else as sg_send
 *         (-EAGAIN, -ENOTCONN, -EMSGSIZE, -EINVAL also for a bad
 *         @copy_bytes or no @done, -EIO): @done never runs.
 */
int sg_send_zc(struct sg_ep *ep, sg_assoc_t assoc, uint16_t stream,
	       uint32_t flags, uint32_t ppid, const struct iovec *iov,
	       int iovcnt, size_t copy_bytes, sg_send_done_fn done, void *arg);

struct sg_zc_stats {
	uint64_t msgs, bytes;	     /* sg_send_zc messages, their bytes */
	uint64_t copy_bytes;	     /* of bytes: copied (headers) */
	uint64_t done, done_err;     /* completions; with -ECONNRESET */
	uint64_t outstanding;	     /* messages whose done has not run */
	uint64_t records;	     /* malloc'd: reused once delivered, so
				      * at most the peak in flight */
	uint64_t detached_bytes;     /* copied by sg_assoc_zc_detach */
};

/** Zero-copy send counters of @ep (poll thread). */
void sg_ep_zc_stats(const struct sg_ep *ep, struct sg_zc_stats *st);

/** Process-wide: usrsctp_sendv_ext calls whose bytes usrsctp still
 * references (0 once every zero-copy byte is released). */
uint64_t sg_zc_held(void);

/**
 * Stop @assoc referencing the zero-copy bytes in [@addr, @addr + @len) now,
 * instead of when the peer acknowledges them: every piece of an
 * sg_send_zc still queued, in flight or retransmittable is copied into
 * memory usrsctp owns (usrsctp-patches/0009), and the rest of a message
 * not yet handed to usrsctp is copied and sent as a copied message.  What
 * is left referencing the bytes afterwards are the port's chained packets
 * (released when the port has sent them, not when the peer acknowledges):
 * the sends' @done runs once those are freed (status as usual: 0 while the
 * association is up), for a big send possibly before its copied rest is
 * handed over (sg_send_busy still true; its failure is then reported as
 * SG_EV_SEND_FAILED, the association's loss as SG_EV_DOWN).  Poll
 * thread, endpoint's lock held.
 * @return bytes copied (0: none referenced, or no such association);
 *         -ENOMEM: some could not be copied (some still referenced, or a
 *         message cut short): the caller must abort @assoc;
 *         -EBADF: the endpoint has no socket.
 */
ssize_t sg_assoc_zc_detach(struct sg_ep *ep, sg_assoc_t assoc,
			   const void *addr, size_t len);

/** Abort @assoc now (ABORT chunk; its queued and unacknowledged data are
 * dropped, so the zero-copy sends on it are released: their @done runs
 * from a later sg_poll with -ECONNRESET).  The association's loss is
 * reported as usual (SG_EV_DOWN).  For a caller that must stop usrsctp
 * reading its memory (ucx-tl: a deregistration that timed out).
 * @return 0; a negative errno (-ENOTCONN unknown association). */
int sg_assoc_abort(struct sg_ep *ep, sg_assoc_t assoc);

#ifdef __cplusplus
}
#endif

#endif /* SG_H */
