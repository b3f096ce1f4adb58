/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sctp_dpdk_iface.c - the `sctp_dpdk` interface: its configuration table
 * (UCX_SCTP_DPDK_*, listed by `ucx_info -c -f`), open/close, query,
 * addresses, reachability, progress and AM delivery, and the constructor
 * that registers component and transport with libuct.
 *
 * An iface with UCX_SCTP_DPDK_DEVARGS empty opens without a port: it is
 * listed (ucx_info -d) but reaches nobody, so UCX_TLS=all keeps working in
 * processes that preload the library without configuring it.
 *
 * Progress, bounded work per call:
 *
 *   trylock(ctx) -> ctx_poll: sg_poll, events, sg_recv -> RX queues
 *   own RX queue -> AM handlers (UCT_CB_PARAM_FLAG_DESC, data in place)
 *   peer state changed? -> report failed eps (uct_iface_handle_ep_err)
 *   pending eps -> dispatch while their association can take data
 *   nothing done -> idle back-off (UCX_SCTP_DPDK_IDLE_SLEEP_US)
 *
 * Receive descriptors: an AM is handed to UCX in the sg receive buffer it
 * was read into (usrsctp's copy is the only one).  When the handler keeps
 * it (UCS_INPROGRESS) it comes back through uct_iface_release_desc ->
 * uct_sctp_dpdk_iface_release_desc -> sg_msg_release.  AMs between ifaces
 * of this process are copied once into a local descriptor from the
 * receiving iface's mpool and never touch the wire.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sctp_dpdk.h"
#include "sctp_dpdk_ucx_compat.h"
#include "sdp_trace.h"

#include <ucs/arch/atomic.h>
#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/sys/string.h>
#include <ucs/type/class.h>

#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

UCT_TL_DECL(sctp_dpdk)

#define UCT_SCTP_DPDK_SMALL_MP_GROW 128 /* small descriptors per chunk */
#define UCT_SCTP_DPDK_LARGE_MP_GROW 4	/* large descriptors per chunk */

static ucs_config_field_t uct_sctp_dpdk_iface_config_table[] = {
	{"", "", NULL, ucs_offsetof(uct_sctp_dpdk_iface_config_t, super),
	 UCS_CONFIG_TYPE_TABLE(uct_iface_config_table)},

	{"DEVARGS", "",
	 "DPDK device arguments of this process's port, as given to --vdev or\n"
	 "-a, e.g. net_memif0,role=client,id=0,socket=/run/sdp/job1/memif0.sock,"
	 "socket-abstract=no\n"
	 "or a PCI address such as 0000:3b:00.1. Empty: no port; the transport\n"
	 "is listed but reaches no peer. Several ports: a ';'-separated list,\n"
	 "one UCT device each (sdp0, sdp1, ...); IP, MTU, SCTP_PORT, RATE and\n"
	 "DP then take one value for every port or a ';' list, one per port.",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, devargs),
	 UCS_CONFIG_TYPE_STRING},

	{"IP", "",
	 "IPv4 address and on-link prefix of this process on the port,\n"
	 "A.B.C.D/N (required with DEVARGS). Peers in the same subnet are\n"
	 "reachable. Several ports: one address per port, ';'-separated.",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, ip), UCS_CONFIG_TYPE_STRING},

	{"MTU", "1500", "IP MTU of the port, 576..64000 bytes (per-port ';' list).",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, mtu),
	 UCS_CONFIG_TYPE_STRING},

	{"PREFIX", "",
	 "DPDK EAL --file-prefix; must differ between processes of a host.\n"
	 "Empty: sdp-<pid>. /var/run/dpdk/<prefix> is removed at exit.",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, prefix),
	 UCS_CONFIG_TYPE_STRING},

	{"LCORE", "-1",
	 "DPDK lcore id given to the EAL (-l); -1: the first CPU the process\n"
	 "may run on. The calling thread's CPU affinity is restored after EAL\n"
	 "start, so this does not pin the worker thread.",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, lcore), UCS_CONFIG_TYPE_INT},

	{"MEM", "512", "DPDK EAL memory, MB (-m), 64..65536.",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, mem_mb),
	 UCS_CONFIG_TYPE_UINT},

	{"IDLE_SLEEP_US", "auto",
	 "Idle back-off of whoever polls the port: after 256 empty polls, sleep\n"
	 "this long per empty poll (us, 0..100000; 0: busy poll). auto: busy\n"
	 "poll while every polling thread of the node has a CPU, else "
	 UCS_PP_MAKE_STRING(UCT_SCTP_DPDK_IDLE_SLEEP_AUTO_US) " us.",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, idle_sleep_us),
	 UCS_CONFIG_TYPE_ULUNITS},

	{"IDLE_BLOCK_US", "1000",
	 "Backing off (IDLE_SLEEP_US not 0), UCX progress on an af_packet port\n"
	 "blocks until a frame arrives, at most this long (microseconds,\n"
	 "0..100000), instead of waking every IDLE_SLEEP_US: a waiting rank\n"
	 "leaves its core to the rank computing beside it. SCTP timers run at\n"
	 "most this late. 0: sleep in IDLE_SLEEP_US slices. One port only.",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, idle_block_us),
	 UCS_CONFIG_TYPE_ULUNITS},

	{"PROGRESS", "inline",
	 "Who polls the port and the SCTP stack: 'inline' (default): UCX's\n"
	 "progress, on the worker's thread; 'thread': a dedicated polling\n"
	 "thread (pin it with POLL_LCORE), the worker threads only take\n"
	 "received messages from their queue and send.",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, progress),
	 UCS_CONFIG_TYPE_STRING},

	{"POLL_LCORE", "-1",
	 "CPU of the dedicated polling thread (PROGRESS=thread); -1: not\n"
	 "pinned.",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, poll_lcore),
	 UCS_CONFIG_TYPE_INT},

	{"RATE", "0",
	 "Pacing rate of the port's TX queue, bit/s with optional k/M/G suffix\n"
	 "(e.g. 500M); 0: unpaced. Changed at run time by\n"
	 "sdp_transport_set_rate_bps() (every port). Per-port ';' list.",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, rate),
	 UCS_CONFIG_TYPE_STRING},

	{"STREAMS", "10",
	 "SCTP streams each way, 2..65535. Stream 0 is reserved; each endpoint\n"
	 "uses one of the others, so AMs of one endpoint stay ordered and\n"
	 "endpoints do not block each other.",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, streams),
	 UCS_CONFIG_TYPE_UINT},

	{"SCTP_PORT", "5000",
	 "Local SCTP port of the process, 1..65535; part of the device\n"
	 "address, so peers may use different ports. Several ports: a ';'\n"
	 "list, one per port, or one value P: port K listens on P+K.",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, sctp_port),
	 UCS_CONFIG_TYPE_STRING},

	{"RX_DESCS", "1024",
	 "Receive descriptors of SEG_SIZE bytes each, 16..1048576. AMs held by\n"
	 "UCX (unexpected messages) keep theirs; when none is free the SCTP\n"
	 "receive window closes (back-pressure, nothing is dropped).",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, rx_descs),
	 UCS_CONFIG_TYPE_UINT},

	{"SEG_SIZE", "64k",
	 "Largest SCTP message: an AM plus the transport's 8-byte header,\n"
	 "1k..16m. Sets the AM bcopy/zcopy limits and the receive buffer size;\n"
	 "must be equal on all processes.",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, seg_size),
	 UCS_CONFIG_TYPE_MEMUNITS},

	{"DP", "",
	 "Extra dataplane key=value tokens, space separated (e.g. \"crc=sse42\n"
	 "arp_retries=10 huge=1\"); see dp_config_help() in dataplane/dp.h.\n"
	 "Several ports: one token string for every port or a ';' list.",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, dp_extra),
	 UCS_CONFIG_TYPE_STRING},

	{"SG", "",
	 "Extra SCTP key=value tokens, space separated (e.g. \"rto_min_ms=50\n"
	 "hb_interval_ms=1000 path_max_rxt=3 sndbuf=8M\"); see\n"
	 "sg_config_help() in sctp/sg.h.",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, sg_extra),
	 UCS_CONFIG_TYPE_STRING},

	{"STATS", "n",
	 "At process exit, print the port's and usrsctp's counters (packets,\n"
	 "drops by reason, retransmissions, T3 timeouts) as one JSON line on\n"
	 "stderr, prefixed \"sctp_dpdk stats: \".",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, stats),
	 UCS_CONFIG_TYPE_BOOL},

	{"SELF_WIRE", "n",
	 "For tests: y makes sdp0 both ends of a memif pair in this process,\n"
	 "taken by the ifaces in turn, so they talk over SCTP (DEVARGS empty).",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, self_wire),
	 UCS_CONFIG_TYPE_BOOL},

	{"FAILOVER", "n",
	 "y: the ports of DEVARGS form ONE device whose associations move to\n"
	 "the next live port when the active one fails (\"probe_ms=10 dead_ms=50\n"
	 "return_ms=1000\" = y with those values). n: one device per port.",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, failover),
	 UCS_CONFIG_TYPE_STRING},

	{"GUARD_MS", "10",
	 "Stall guard of inline progress: when no worker polled the port for\n"
	 "this many milliseconds (the application computes, or blocks outside\n"
	 "MPI as in MPICH's finalize barrier), a thread polls it so lost\n"
	 "packets are retransmitted and SACKs sent; received messages still\n"
	 "wait for the worker. 0: off. Not used with PROGRESS=thread.",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, guard_ms),
	 UCS_CONFIG_TYPE_UINT},

	{"EXIT_TIMEOUT", "5s",
	 "At exit, wait at most this long for peers to acknowledge what was\n"
	 "sent (0: no wait); raise it when the exit warning names it.",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, exit_timeout_s),
	 UCS_CONFIG_TYPE_TIME},

	{"STREAM_TAG_MASK", "off",
	 "UCP tag bits that pick a tag message's SCTP stream: off (one stream\n"
	 "per ep), a number, ompi-comm or mpich-comm (legal for any MPI program),\n"
	 "ompi-tag or mpich-tag (only for programs that never use MPI_ANY_TAG).",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, stream_tag_mask),
	 UCS_CONFIG_TYPE_STRING},

	{"LANES", "1",
	 "Associations per peer on one memif port, 1..8 (dev_num_paths): lane k\n"
	 "is its own SCTP endpoint on SCTP_PORT + k and queue pair k. Same value\n"
	 "on every process; one port only.",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, lanes),
	 UCS_CONFIG_TYPE_UINT},

	{"LINGER_US", "500",
	 "With PROGRESS=inline, a progress call whose sends still have bytes\n"
	 "in the SCTP stack (held back by the congestion or receive window)\n"
	 "keeps polling for them up to this long, microseconds (0..100000),\n"
	 "while the peer answers, so they are on the wire before the\n"
	 "application computes again: nothing else moves them meanwhile.\n"
	 "0: off.",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, linger_us),
	 UCS_CONFIG_TYPE_ULUNITS},

	{"SACK_HOLD_US", "0",
	 "af_packet: hold a poll's SACKs up to this long (us, 0..100000) so they\n"
	 "leave with the reply; a rank back in its computation keeps them until\n"
	 "its next MPI call. 0: off; auto: "
	 UCS_PP_MAKE_STRING(UCT_SCTP_DPDK_SACK_HOLD_AUTO_US) " us. Overrides SG's\n"
	 "sack_hold_us.",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, sack_hold_us),
	 UCS_CONFIG_TYPE_ULUNITS},

	{"RX_DIRECT", "y",
	 "Receive RMA data straight from usrsctp into the destination buffer\n"
	 "(one copy fewer). n: through a receive descriptor.",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, rx_direct),
	 UCS_CONFIG_TYPE_BOOL},

	{"TX_CHAIN_MIN", "auto",
	 "Packets with DATA of at least this many bytes send the payload by\n"
	 "reference, chained (0..65535; 0: off; auto: 1024). Overrides SG's\n"
	 "tx_chain_min.",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, tx_chain_min),
	 UCS_CONFIG_TYPE_MEMUNITS},

	{"RMA_WHOLE_PACKETS", "n",
	 "y: PUT and GET reply messages hold a whole number of full packets\n"
	 "instead of SEG_SIZE bytes (fewer small frames; no gain measured yet).",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, rma_whole_packets),
	 UCS_CONFIG_TYPE_BOOL},

	{"RMA_SACK_LAST", "n",
	 "y: only the last message of a PUT or GET reply asks for an immediate\n"
	 "SACK (fewer SACKs; no gain measured yet). n: every message asks.",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, rma_sack_last),
	 UCS_CONFIG_TYPE_BOOL},

	{"RX_EXT", "y",
	 "usrsctp keeps received packets in their DPDK mbufs until read (one\n"
	 "copy fewer, up to a quarter of the mbuf pool). n: it copies them.",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, rx_ext),
	 UCS_CONFIG_TYPE_BOOL},

	{"TX_ZCOPY_MIN", "16k",
	 "put_zcopy data and GET replies of at least this many bytes are sent\n"
	 "by reference, completing once nothing references them (0: copied).",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, tx_zcopy_min),
	 UCS_CONFIG_TYPE_MEMUNITS},

	{"DEREG_WAIT_MS", "2000",
	 "Deregistering or unmapping memory that GET replies still reference\n"
	 "copies what the associations reference, then waits up to this many\n"
	 "ms for the port's packets built from it; past that it aborts the\n"
	 "associations whose packets the port still holds.",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, dereg_wait_ms),
	 UCS_CONFIG_TYPE_UINT},

	{"RX_QUEUE_BYTES", "4m",
	 "Copies of received AMs (those up to 2 KiB, and larger ones copied\n"
	 "for am_alignment) that may wait for the worker's progress, in bytes\n"
	 "of descriptor memory. Beyond, AMs stay in their receive descriptor\n"
	 "(RX_DESCS); when those are used up the SCTP receive window closes and\n"
	 "the sender waits. inf: no cap (a peer may then grow the memory of a\n"
	 "worker that does not progress under PROGRESS=thread).",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, rx_queue_bytes),
	 UCS_CONFIG_TYPE_MEMUNITS},

	{NULL}};

static ucs_status_t uct_sctp_dpdk_iface_query(uct_iface_h tl_iface,
					      uct_iface_attr_t *attr)
{
	uct_sctp_dpdk_iface_t *iface =
		ucs_derived_of(tl_iface, uct_sctp_dpdk_iface_t);
	size_t seg = iface->ctx != NULL ? iface->ctx->seg_bytes : 65536;
	size_t max_payload = seg - sizeof(uct_sctp_dpdk_am_hdr_t);

	uct_base_iface_query(&iface->super, attr);
	/* LANES: one UCP path per lane (sctp_dpdk_lanes.c) */
	attr->dev_num_paths = iface->ctx != NULL ? iface->ctx->nb_lanes : 1;

	attr->iface_addr_len = sizeof(uct_sctp_dpdk_iface_addr_t);
	attr->device_addr_len = uct_sctp_dpdk_path_dev_addr_len(iface->ctx);
	attr->ep_addr_len = 0;
	/*
	 * AM_ZCOPY is not zero-copy: usrsctp copies the iov into its own
	 * send buffers before sg_send returns (and the operation completes at
	 * once).  It is advertised because it still saves one copy over
	 * bcopy (user -> usrsctp instead of user -> bounce -> usrsctp) and
	 * UCP's pack step; the receive side is zero-copy for AMs above
	 * RX_COPY_BYTES (the data is handed to UCX in usrsctp's buffer).
	 * max_num_eps comes from uct_base_iface_query
	 * (UCX_SCTP_DPDK_MAX_NUM_EPS, unlimited by default): eps cost a
	 * stream each, associations one per peer process, so thousands of
	 * ranks are limited by memory (usrsctp buffers per association), not
	 * by a table here.
	 */
	attr->cap.flags = UCT_IFACE_FLAG_CONNECT_TO_IFACE |
			  UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_BCOPY |
			  UCT_IFACE_FLAG_AM_ZCOPY | UCT_IFACE_FLAG_PENDING |
			  UCT_IFACE_FLAG_CB_SYNC |
			  UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE;
	/* A wakeup fd (see uct_sctp_dpdk_iface_event_arm). */
	attr->cap.event_flags = iface->ctx == NULL ? 0 :
				UCT_IFACE_FLAG_EVENT_SEND_COMP |
				UCT_IFACE_FLAG_EVENT_RECV |
				UCT_IFACE_FLAG_EVENT_FD;
	attr->cap.am.max_short = ucs_min(UCT_SCTP_DPDK_AM_MAX_SHORT_BYTES,
					 max_payload);
	attr->cap.am.max_bcopy = max_payload;
	attr->cap.am.min_zcopy = 0;
	attr->cap.am.max_zcopy = max_payload;
	attr->cap.am.max_hdr = UCT_SCTP_DPDK_AM_MAX_HDR_BYTES;
	attr->cap.am.max_iov = UCT_SCTP_DPDK_AM_MAX_IOV;
	attr->cap.am.opt_zcopy_align = 1;
	attr->cap.am.align_mtu = 1;

	/* RMA (sctp_dpdk_rma.c): zcopy ops are split into messages, so
	 * unlimited like tcp's put_zcopy. */
	attr->cap.flags |= UCT_IFACE_FLAG_PUT_SHORT | UCT_IFACE_FLAG_PUT_BCOPY |
			   UCT_IFACE_FLAG_PUT_ZCOPY | UCT_IFACE_FLAG_GET_BCOPY |
			   UCT_IFACE_FLAG_GET_ZCOPY;
	attr->cap.put.max_short = UCT_SCTP_DPDK_AM_MAX_SHORT_BYTES -
				  UCT_SCTP_DPDK_RMA_HDRS_BYTES;
	attr->cap.put.max_bcopy = seg - UCT_SCTP_DPDK_RMA_HDRS_BYTES;
	attr->cap.put.min_zcopy = 0;
	attr->cap.put.max_zcopy = SIZE_MAX;
	attr->cap.put.opt_zcopy_align = 1;
	attr->cap.put.align_mtu = 1;
	attr->cap.put.max_iov = UCT_SCTP_DPDK_RMA_MAX_IOV;
	attr->cap.get.max_bcopy = seg - UCT_SCTP_DPDK_RMA_HDRS_BYTES;
	attr->cap.get.min_zcopy = 0;
	attr->cap.get.max_zcopy = SIZE_MAX;
	attr->cap.get.opt_zcopy_align = 1;
	attr->cap.get.align_mtu = 1;
	attr->cap.get.max_iov = UCT_SCTP_DPDK_RMA_MAX_IOV;

	/* Measured figures; sources next to the constants (sctp_dpdk.h).
	 * The bandwidth is the process's own (its port, its usrsctp), so
	 * dedicated, not shared among processes. */
	attr->latency = ucs_linear_func_make(UCT_SCTP_DPDK_LATENCY_S, 0);
	attr->bandwidth.dedicated = iface->ctx != NULL ?
					    iface->ctx->bandwidth_bps :
					    UCT_SCTP_DPDK_VDEV_BANDWIDTH_BPS;
	attr->bandwidth.shared = 0;
	attr->overhead = UCT_SCTP_DPDK_OVERHEAD_S;
	attr->priority = 0;
	return UCS_OK;
}

static ucs_status_t
uct_sctp_dpdk_iface_get_device_address(uct_iface_h tl_iface,
				       uct_device_addr_t *addr)
{
	uct_sctp_dpdk_iface_t *iface =
		ucs_derived_of(tl_iface, uct_sctp_dpdk_iface_t);
	uct_sctp_dpdk_dev_addr_t *dev = (uct_sctp_dpdk_dev_addr_t *)addr;

	/* No port: 0.0.0.0, which nobody considers reachable. */
	dev->ip = iface->ctx != NULL ? iface->ctx->ip_be : 0;
	dev->sctp_port = rte_cpu_to_be_16(
		iface->ctx != NULL ? iface->ctx->sctp_port : 0);
	uct_sctp_dpdk_path_pack(iface->ctx, addr); /* backup addresses */
	return UCS_OK;
}

static ucs_status_t uct_sctp_dpdk_iface_get_address(uct_iface_h tl_iface,
						    uct_iface_addr_t *addr)
{
	uct_sctp_dpdk_iface_t *iface =
		ucs_derived_of(tl_iface, uct_sctp_dpdk_iface_t);

	uct_sctp_dpdk_iface_addr_t *a = (uct_sctp_dpdk_iface_addr_t *)addr;
	uct_sctp_dpdk_ctx_t *ctx = iface->ctx;

	memset(a, 0, sizeof(*a));
	a->iface_id = rte_cpu_to_be_16(iface->id);
	if (ctx != NULL) {
		a->incarnation = rte_cpu_to_be_32(ctx->incarnation);
		a->seg_bytes = rte_cpu_to_be_32(ctx->seg_bytes);
		a->streams = rte_cpu_to_be_16(ctx->streams);
		a->mtu = rte_cpu_to_be_16(ctx->mtu);
		a->lanes = (uint8_t)ctx->nb_lanes;
		a->paths = (uint8_t)ctx->nb_paths;
	}
	return UCS_OK;
}

int uct_sctp_dpdk_iface_reachable(const uct_iface_h tl_iface,
				  const uct_device_addr_t *dev_addr,
				  const uct_iface_addr_t *iface_addr)
{
	uct_sctp_dpdk_iface_t *iface =
		ucs_derived_of(tl_iface, uct_sctp_dpdk_iface_t);
	const uct_sctp_dpdk_dev_addr_t *dev =
		(const uct_sctp_dpdk_dev_addr_t *)dev_addr;
	uct_sctp_dpdk_ctx_t *ctx = iface->ctx;

	if (ctx == NULL || dev == NULL || dev->ip == 0)
		return 0;
	/* Our own address (another worker of this process) is delivered
	 * locally; anything else must be on the port's subnet. */
	if ((dev->ip & ctx->mask_be) != (ctx->ip_be & ctx->mask_be))
		return 0;
	/* ... and agree on the settings both ends must share. */
	return iface_addr == NULL ||
	       uct_sctp_dpdk_peer_compatible(
		       ctx, dev->ip,
		       (const uct_sctp_dpdk_iface_addr_t *)iface_addr);
}

/* Place an rx descriptor in front of @data for @iface's rx_headroom. */
static uct_sctp_dpdk_rx_desc_t *
uct_sctp_dpdk_iface_rx_desc_init(uct_sctp_dpdk_iface_t *iface, void *data)
{
	void *ucx_desc = UCS_PTR_BYTE_OFFSET(data, -(ptrdiff_t)iface->rx_headroom);
	uct_sctp_dpdk_rx_desc_t *rx = uct_sctp_dpdk_rx_desc_of(ucx_desc);

	uct_recv_desc(ucx_desc) = &iface->release_desc;
	rx->data = data;
	return rx;
}

/* Wake a worker that armed the iface and sleeps on event_fd.  Caller
 * holds iface->rx_lock. */
void uct_sctp_dpdk_iface_wake(uct_sctp_dpdk_iface_t *iface)
{
	uint64_t one = 1;

	if (ucs_likely(!iface->armed))
		return;
	iface->armed = 0;
	if (write(iface->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		ucs_warn("sctp_dpdk: iface %u: wakeup write: %m", iface->id);
}

void uct_sctp_dpdk_ctx_wake_armed(uct_sctp_dpdk_ctx_t *ctx)
{
	uct_sctp_dpdk_iface_t *iface;
	unsigned i;

	for (i = 0; i < UCT_SCTP_DPDK_MAX_IFACES; i++) {
		iface = ctx->ifaces[i];
		if (iface == NULL || !iface->armed)
			continue;
		ucs_spin_lock(&iface->rx_lock);
		uct_sctp_dpdk_iface_wake(iface);
		ucs_spin_unlock(&iface->rx_lock);
	}
}

/* Caller holds iface->rx_lock. */
static void uct_sctp_dpdk_iface_rx_push(uct_sctp_dpdk_iface_t *iface,
					uct_sctp_dpdk_rx_desc_t *rx)
{
	ucs_queue_push(&iface->rx_q, &rx->queue);
	iface->rx_count++;
	if (rx->flags & UCT_SCTP_DPDK_RX_FLAG_LOCAL)
		iface->local_queued++;
	uct_sctp_dpdk_iface_wake(iface);
}

/* Whether AM data at @data meets the iface's am_alignment. */
static UCS_F_ALWAYS_INLINE int
uct_sctp_dpdk_iface_is_aligned(const uct_sctp_dpdk_iface_t *iface,
			       const void *data)
{
	return (((uintptr_t)data + iface->am_align_offset) &
		(iface->am_align - 1)) == 0;
}

/*
 * A descriptor for @length bytes of AM data from the small or the large
 * pool; its data meets rx_headroom and am_alignment (the pools are laid out
 * so).  Caller holds iface->rx_lock.  @return NULL when out of memory.
 */
static uct_sctp_dpdk_rx_desc_t *
uct_sctp_dpdk_iface_desc_get(uct_sctp_dpdk_iface_t *iface, size_t length)
{
	int large = length > UCT_SCTP_DPDK_RX_COPY_BYTES;
	uct_sctp_dpdk_rx_desc_t *rx;
	void *elem;

	elem = ucs_mpool_get_inline(large ? &iface->large_mp :
					    &iface->small_mp);
	if (ucs_unlikely(elem == NULL))
		return NULL;
	rx = uct_sctp_dpdk_iface_rx_desc_init(
		iface, UCS_PTR_BYTE_OFFSET(
			       elem,
			       UCT_SCTP_DPDK_RX_OVERHEAD(iface->rx_headroom)));
	rx->msg = NULL;
	rx->mp_elem = elem;
	rx->length = (uint32_t)length;
	rx->flags = large ? UCT_SCTP_DPDK_RX_FLAG_LARGE : 0;
	rx->src_sg = NULL;
	return rx;
}

/* Pool bytes a copied descriptor occupies (what RX_QUEUE_BYTES counts). */
static UCS_F_ALWAYS_INLINE size_t
uct_sctp_dpdk_iface_copy_bytes(const uct_sctp_dpdk_iface_t *iface,
			       const uct_sctp_dpdk_rx_desc_t *rx)
{
	return UCT_SCTP_DPDK_RX_OVERHEAD(iface->rx_headroom) +
	       ((rx->flags & UCT_SCTP_DPDK_RX_FLAG_LARGE) ?
			iface->ctx->seg_bytes :
			UCT_SCTP_DPDK_RX_COPY_BYTES);
}

/* Return a descriptor: sg buffer to its endpoint, a copy to its mpool. */
static void uct_sctp_dpdk_iface_rx_free(uct_sctp_dpdk_iface_t *iface,
					uct_sctp_dpdk_rx_desc_t *rx)
{
	if (rx->msg != NULL) {
		uct_sctp_dpdk_ctx_msg_release(iface->ctx, rx->msg);
		return;
	}
	ucs_spin_lock(&iface->rx_lock);
	ucs_mpool_put_inline(rx->mp_elem);
	ucs_spin_unlock(&iface->rx_lock);
}

/* uct_iface_release_desc of a descriptor a handler kept. */
static void uct_sctp_dpdk_iface_release_desc(uct_recv_desc_t *self,
					     void *desc)
{
	uct_sctp_dpdk_iface_t *iface =
		ucs_container_of(self, uct_sctp_dpdk_iface_t, release_desc);
	uct_sctp_dpdk_rx_desc_t *rx = uct_sctp_dpdk_rx_desc_of(desc);

	if (rx->msg != NULL)
		ucs_atomic_sub32(&iface->ctx->sg_descs_lent, 1);
	else if (rx->flags & UCT_SCTP_DPDK_RX_FLAG_LARGE)
		ucs_atomic_sub32(&iface->large_lent, 1);
	uct_sctp_dpdk_iface_rx_free(iface, rx);
}

/* What an RMA reply's descriptor must know of its message: where it came
 * from and whether the poll loop placed its data. */
static UCS_F_ALWAYS_INLINE void
uct_sctp_dpdk_iface_rx_src(uct_sctp_dpdk_ctx_t *ctx,
			   uct_sctp_dpdk_rx_desc_t *rx,
			   const struct sg_msg_desc *msg)
{
	rx->src_assoc = msg->assoc;
	rx->src_sg = ctx->rx_sg;
	if (ucs_unlikely(msg->flags & SG_MSG_PLACED)) {
		rx->flags |= UCT_SCTP_DPDK_RX_FLAG_PLACED;
		if (msg->flags & SG_MSG_DISCARDED)
			rx->flags |= UCT_SCTP_DPDK_RX_FLAG_DISCARDED;
		rx->placed_bytes = msg->msg_len - msg->len;
	}
}

void uct_sctp_dpdk_iface_rx_msg(uct_sctp_dpdk_iface_t *iface,
				struct sg_msg_desc *msg, uint8_t am_id)
{
	uct_sctp_dpdk_ctx_t *ctx = iface->ctx;
	void *data = msg->data + sizeof(uct_sctp_dpdk_am_hdr_t);
	uint32_t length = msg->len - sizeof(uct_sctp_dpdk_am_hdr_t);
	uct_sctp_dpdk_rx_desc_t *rx;

	if (length <= UCT_SCTP_DPDK_RX_COPY_BYTES ||
	    !uct_sctp_dpdk_iface_is_aligned(iface, data)) {
		/* Small: copy and give the segment back at once, so a
		 * message UCX keeps pins ~2 KiB, not SEG_SIZE.  Misaligned
		 * for am_alignment: copy to an aligned descriptor.  Only up
		 * to RX_QUEUE_BYTES of copies wait for the worker: beyond,
		 * the message keeps its segment (the drain copies it if it
		 * is misaligned), the fixed sg pool runs out and usrsctp
		 * closes the receive window. */
		ucs_spin_lock(&iface->rx_lock);
		if (ucs_likely(iface->rx_copy_bytes <
			       iface->rx_copy_max_bytes) &&
		    (rx = uct_sctp_dpdk_iface_desc_get(iface, length)) != NULL) {
			memcpy(rx->data, data, length);
			rx->am_id = am_id;
			rx->flags |= UCT_SCTP_DPDK_RX_FLAG_COPY;
			iface->rx_copy_bytes +=
				uct_sctp_dpdk_iface_copy_bytes(iface, rx);
			uct_sctp_dpdk_iface_rx_src(ctx, rx, msg);
			uct_sctp_dpdk_iface_rx_push(iface, rx);
			ucs_spin_unlock(&iface->rx_lock);
			sg_msg_release(msg);
			return;
		}
		if (iface->rx_copy_bytes >= iface->rx_copy_max_bytes)
			iface->rx_copy_capped++;
		ucs_spin_unlock(&iface->rx_lock);
		/* Over the cap or out of memory for a copy: deliver from
		 * the segment. */
	}
	rx = uct_sctp_dpdk_iface_rx_desc_init(iface, data);
	rx->msg = msg;
	rx->mp_elem = NULL;
	rx->length = length;
	rx->am_id = am_id;
	rx->flags = 0;
	uct_sctp_dpdk_iface_rx_src(ctx, rx, msg);
	ctx->sg_descs_held++;
	ucs_spin_lock(&iface->rx_lock);
	uct_sctp_dpdk_iface_rx_push(iface, rx);
	ucs_spin_unlock(&iface->rx_lock);
}

int uct_sctp_dpdk_iface_local_room(uct_sctp_dpdk_ctx_t *ctx,
				   uint16_t dst_iface_id, int *alive)
{
	uct_sctp_dpdk_iface_t *dst;
	int room = 0;

	ucs_recursive_spin_lock(ctx->lock);
	dst = ctx->ifaces[dst_iface_id % UCT_SCTP_DPDK_MAX_IFACES];
	*alive = dst != NULL && dst->id == dst_iface_id;
	if (*alive)
		room = dst->local_queued < UCT_SCTP_DPDK_LOCAL_QUEUE_MAX;
	ucs_recursive_spin_unlock(ctx->lock);
	return room;
}

ucs_status_t uct_sctp_dpdk_iface_local_deliver(uct_sctp_dpdk_ctx_t *ctx,
					       uint16_t dst_iface_id,
					       uint8_t am_id,
					       const struct iovec *iov,
					       int iovcnt)
{
	uct_sctp_dpdk_iface_t *dst;
	uct_sctp_dpdk_rx_desc_t *rx;
	ucs_status_t status = UCS_OK;
	size_t off = 0, length = 0;
	int i;

	for (i = 0; i < iovcnt; i++)
		length += iov[i].iov_len;
	ucs_recursive_spin_lock(ctx->lock);
	dst = ctx->ifaces[dst_iface_id % UCT_SCTP_DPDK_MAX_IFACES];
	if (ucs_unlikely(dst == NULL || dst->id != dst_iface_id)) {
		status = UCS_ERR_UNREACHABLE;
		goto out;
	}
	ucs_spin_lock(&dst->rx_lock);
	/* The bound of this send path: a receiver that does not progress
	 * back-pressures its local senders like a closed SCTP window. */
	if (dst->local_queued >= UCT_SCTP_DPDK_LOCAL_QUEUE_MAX) {
		ucs_spin_unlock(&dst->rx_lock);
		status = UCS_ERR_NO_RESOURCE;
		goto out;
	}
	rx = uct_sctp_dpdk_iface_desc_get(dst, length);
	if (ucs_unlikely(rx == NULL)) {
		ucs_spin_unlock(&dst->rx_lock);
		status = UCS_ERR_NO_MEMORY;
		goto out;
	}
	for (i = 0; i < iovcnt; i++) {
		memcpy(UCS_PTR_BYTE_OFFSET(rx->data, off), iov[i].iov_base,
		       iov[i].iov_len);
		off += iov[i].iov_len;
	}
	rx->am_id = am_id;
	rx->flags |= UCT_SCTP_DPDK_RX_FLAG_LOCAL;
	uct_sctp_dpdk_iface_rx_push(dst, rx);
	ucs_spin_unlock(&dst->rx_lock);
out:
	ucs_recursive_spin_unlock(ctx->lock);
	return status;
}

/* Whether @rx may be lent to UCX (UCT_CB_PARAM_FLAG_DESC): large buffers
 * only while few are lent, so held messages never exhaust the sg pool
 * (and with it the reading of every association) or grow large_mp. */
static UCS_F_ALWAYS_INLINE unsigned
uct_sctp_dpdk_iface_rx_cb_flags(uct_sctp_dpdk_iface_t *iface,
				const uct_sctp_dpdk_rx_desc_t *rx)
{
	if (rx->msg != NULL)
		return (iface->ctx->sg_descs_lent <
			iface->ctx->sg_cfg.rx_descs / 2) ?
			       UCT_CB_PARAM_FLAG_DESC :
			       0;
	if (rx->flags & UCT_SCTP_DPDK_RX_FLAG_LARGE)
		return (iface->large_lent < UCT_SCTP_DPDK_LOCAL_LEND_MAX) ?
			       UCT_CB_PARAM_FLAG_DESC :
			       0;
	return UCT_CB_PARAM_FLAG_DESC;
}

/*
 * An AM left in its sg buffer by the RX_QUEUE_BYTES cap whose data misses
 * am_alignment: copied now, by the worker about to run its handler, and
 * the buffer given back.  @return the descriptor to deliver (@rx itself
 * when no descriptor is free: the data is then delivered unaligned).
 */
static uct_sctp_dpdk_rx_desc_t *
uct_sctp_dpdk_iface_rx_realign(uct_sctp_dpdk_iface_t *iface,
			       uct_sctp_dpdk_rx_desc_t *rx)
{
	uct_sctp_dpdk_rx_desc_t *copy;

	ucs_spin_lock(&iface->rx_lock);
	copy = uct_sctp_dpdk_iface_desc_get(iface, rx->length);
	ucs_spin_unlock(&iface->rx_lock);
	if (copy == NULL)
		return rx;
	memcpy(copy->data, rx->data, rx->length);
	copy->am_id = rx->am_id;
	copy->src_assoc = rx->src_assoc;
	copy->src_sg = rx->src_sg;
	uct_sctp_dpdk_ctx_msg_release(iface->ctx, rx->msg);
	return copy;
}

/* Run the AM handlers of up to one burst of queued messages. */
static unsigned uct_sctp_dpdk_iface_rx_drain(uct_sctp_dpdk_iface_t *iface)
{
	uct_sctp_dpdk_rx_desc_t *rxs[UCT_SCTP_DPDK_RX_BURST];
	unsigned n = 0, i, cb_flags;
	ucs_status_t status;

	if (iface->rx_count == 0)
		return 0;
	ucs_spin_lock(&iface->rx_lock);
	while (n < UCT_SCTP_DPDK_RX_BURST && !ucs_queue_is_empty(&iface->rx_q)) {
		rxs[n] = ucs_queue_pull_elem_non_empty(
			&iface->rx_q, uct_sctp_dpdk_rx_desc_t, queue);
		if (rxs[n]->flags & UCT_SCTP_DPDK_RX_FLAG_LOCAL)
			iface->local_queued--;
		if (rxs[n]->flags & UCT_SCTP_DPDK_RX_FLAG_COPY)
			iface->rx_copy_bytes -=
				uct_sctp_dpdk_iface_copy_bytes(iface, rxs[n]);
		n++;
	}
	iface->rx_count -= n;
	ucs_spin_unlock(&iface->rx_lock);

	for (i = 0; i < n; i++) {
		uct_sctp_dpdk_rx_desc_t *rx = rxs[i];

		if (ucs_unlikely(rx->am_id & UCT_SCTP_DPDK_RX_RMA)) {
			uct_sctp_dpdk_rma_rx_reply(iface, rx);
			uct_sctp_dpdk_iface_rx_free(iface, rx);
			continue;
		}
		if (ucs_unlikely(rx->msg != NULL &&
				 !uct_sctp_dpdk_iface_is_aligned(iface,
								 rx->data)))
			rx = uct_sctp_dpdk_iface_rx_realign(iface, rx);
		cb_flags = uct_sctp_dpdk_iface_rx_cb_flags(iface, rx);
		uct_iface_trace_am(&iface->super, UCT_AM_TRACE_TYPE_RECV,
				   rx->am_id, rx->data, rx->length, "RX");
		SDP_TRACE(AM_HANDLER, rx->length);
		status = uct_iface_invoke_am(&iface->super, rx->am_id, rx->data,
					     rx->length, cb_flags);
		if (status == UCS_INPROGRESS &&
		    (cb_flags & UCT_CB_PARAM_FLAG_DESC)) {
			if (rx->msg != NULL)
				ucs_atomic_add32(&iface->ctx->sg_descs_lent, 1);
			else if (rx->flags & UCT_SCTP_DPDK_RX_FLAG_LARGE)
				ucs_atomic_add32(&iface->large_lent, 1);
			continue;
		}
		uct_sctp_dpdk_iface_rx_free(iface, rx);
	}
	return n;
}

/* Hand failures of associations to UCX, one ep at a time: the error
 * handler may destroy eps of this iface, so rescan after each. */
static unsigned uct_sctp_dpdk_iface_handle_events(uct_sctp_dpdk_iface_t *iface)
{
	uct_sctp_dpdk_ep_t *ep;
	unsigned count = 0;
	int found;

	iface->ev_gen = iface->ctx->ev_gen;
	do {
		found = 0;
		ucs_list_for_each(ep, &iface->eps, list) {
			if ((ep->flags & UCT_SCTP_DPDK_EP_FLAG_REPORTED) ||
			    !uct_sctp_dpdk_ep_is_failed(ep))
				continue;
			ep->flags |= UCT_SCTP_DPDK_EP_FLAG_REPORTED;
			ucs_debug("sctp_dpdk: iface %u ep %p: peer failed",
				  iface->id, ep);
			/* UCX only logs an unhandled error at debug level:
			 * an application without a handler (ucx_perftest)
			 * would wait for the dead peer without a word */
			if (iface->super.err_handler == NULL)
				ucs_warn("sctp_dpdk: iface %u: the peer of ep "
					 "%p is gone (association lost or "
					 "aborted) and the iface has no error "
					 "handler: the ep's operations fail "
					 "with %s and nothing more comes from "
					 "it; set UCT_IFACE_PARAM_FIELD_ERR_"
					 "HANDLER (UCP: UCP_ERR_HANDLING_MODE_"
					 "PEER) to be told", iface->id, ep,
					 ucs_status_string(
						 UCS_ERR_ENDPOINT_TIMEOUT));
			uct_iface_handle_ep_err(&iface->super.super,
						&ep->super.super,
						UCS_ERR_ENDPOINT_TIMEOUT);
			found = 1;
			count++;
			break;
		}
	} while (found);
	return count;
}

/*
 * Returns the events seen by the user (AMs delivered, failures reported,
 * pending requests completed), as UCT asks; the poll loop's own work
 * (usrsctp timers, frames, SACKs) only keeps the idle back-off away.
 * Counting it too made progress never return 0 while an association was
 * busy, and callers that progress until idle before arming an event
 * (test_uct_event's arm loop) spun for ever.
 */
static unsigned uct_sctp_dpdk_iface_progress(uct_iface_h tl_iface)
{
	uct_sctp_dpdk_iface_t *iface =
		ucs_derived_of(tl_iface, uct_sctp_dpdk_iface_t);
	uct_sctp_dpdk_ctx_t *ctx = iface->ctx;
	unsigned count = 0, poll_work = 0;

	if (ucs_unlikely(ctx == NULL))
		return 0;
	if (ucs_unlikely(ctx->unsent_left_tsc != 0))
		uct_sctp_dpdk_ctx_linger_enter(ctx);
	if (!ctx->thread_on && ucs_recursive_spin_trylock(ctx->lock)) {
		/* every device: a peer on another device needs its port
		 * polled too, whichever of this worker's ifaces progresses */
		poll_work = uct_sctp_dpdk_ctx_poll_all();
		ucs_recursive_spin_unlock(ctx->lock);
	}
	count += uct_sctp_dpdk_iface_rx_drain(iface);
	if (ucs_unlikely(iface->ev_gen != ctx->ev_gen))
		count += uct_sctp_dpdk_iface_handle_events(iface);
	if (!ucs_list_is_empty(&iface->pending_eps))
		count += uct_sctp_dpdk_iface_dispatch_pending(iface);
	if (ucs_unlikely(!ucs_queue_is_empty(&iface->rma_zcq)))
		count += uct_sctp_dpdk_rma_zc_progress(iface);
	if (ucs_unlikely(!ucs_queue_is_empty(&iface->rma_txq)))
		count += uct_sctp_dpdk_rma_progress(iface);
	if (ucs_unlikely(!ucs_queue_is_empty(&iface->flush_q)))
		count += uct_sctp_dpdk_iface_flush_progress(iface);
	/* Back off only where this thread is the poller (inline) and
	 * IDLE_SLEEP_US asks for it (explicitly, or auto with more polling
	 * threads than CPUs); with PROGRESS=thread the thread backs off. */
	if (!ctx->thread_on) {
		uct_sctp_dpdk_ctx_linger(ctx);
		dp_idle_update(&iface->idle, count + poll_work);
	}
	return count;
}

static ucs_status_t uct_sctp_dpdk_iface_event_fd_get(uct_iface_h tl_iface,
						     int *fd_p)
{
	uct_sctp_dpdk_iface_t *iface =
		ucs_derived_of(tl_iface, uct_sctp_dpdk_iface_t);

	if (iface->event_fd < 0) {
		ucs_error("sctp_dpdk: no event fd: this iface has no port ("
			  UCT_SCTP_DPDK_ENV "DEVARGS is empty)");
		return UCS_ERR_UNSUPPORTED;
	}
	*fd_p = iface->event_fd;
	return UCS_OK;
}

/* Empty a nonblocking eventfd/timerfd. */
static void uct_sctp_dpdk_fd_drain(int fd)
{
	uint64_t v;

	while (read(fd, &v, sizeof(v)) == sizeof(v))
		;
}

/*
 * Arm: event_fd becomes readable when a message is queued for this iface
 * (an AM: EVENT_RECV; an RMA reply: EVENT_SEND_COMP) or a zero-copy send
 * of its RMA ops was released (EVENT_SEND_COMP) -- or, in inline mode,
 * after UCT_SCTP_DPDK_INLINE_WAKE_US at the latest, because then the port
 * is polled by nobody but this worker.  AM sends complete at once
 * (usrsctp copies).  UCS_ERR_BUSY while work is queued.
 */
static ucs_status_t uct_sctp_dpdk_iface_event_arm(uct_iface_h tl_iface,
						  unsigned events)
{
	uct_sctp_dpdk_iface_t *iface =
		ucs_derived_of(tl_iface, uct_sctp_dpdk_iface_t);
	struct itimerspec its = {{0, 0},
				 {0, UCT_SCTP_DPDK_INLINE_WAKE_US * 1000}};

	if (iface->event_fd < 0)
		return UCS_ERR_UNSUPPORTED;
	uct_sctp_dpdk_fd_drain(iface->wake_fd);
	if (iface->timer_fd >= 0)
		uct_sctp_dpdk_fd_drain(iface->timer_fd);
	if (!(events & (UCT_EVENT_RECV | UCT_EVENT_RECV_SIG |
			UCT_EVENT_SEND_COMP)))
		return UCS_OK;
	/* Send completions: an RMA op completes from a reply in the RX
	 * queue (which wakes), from a zero-copy release in rma_zcq (zc_done
	 * wakes), or after its unsent rest in rma_txq found send buffer
	 * (nothing wakes: busy). */
	if (iface->rx_count != 0 || iface->ev_gen != iface->ctx->ev_gen ||
	    !ucs_list_is_empty(&iface->pending_eps) ||
	    !ucs_queue_is_empty(&iface->flush_q) ||
	    !ucs_queue_is_empty(&iface->rma_txq) ||
	    uct_sctp_dpdk_rma_zc_queued(iface))
		return UCS_ERR_BUSY;
	ucs_spin_lock(&iface->rx_lock);
	iface->armed = 1;
	ucs_spin_unlock(&iface->rx_lock);
	/* A message or release queued between the check and the arming. */
	if (iface->rx_count != 0 || uct_sctp_dpdk_rma_zc_queued(iface)) {
		iface->armed = 0;
		return UCS_ERR_BUSY;
	}
	if (iface->timer_fd >= 0 &&
	    timerfd_settime(iface->timer_fd, 0, &its, NULL) != 0) {
		ucs_error("sctp_dpdk: iface %u: timerfd_settime: %m",
			  iface->id);
		return UCS_ERR_IO_ERROR;
	}
	return UCS_OK;
}

static UCS_CLASS_DECLARE_DELETE_FUNC(uct_sctp_dpdk_iface_t, uct_iface_t);

static uct_iface_ops_t uct_sctp_dpdk_iface_ops = {
	.ep_am_short = uct_sctp_dpdk_ep_am_short,
	.ep_am_short_iov = uct_sctp_dpdk_ep_am_short_iov,
	.ep_am_bcopy = uct_sctp_dpdk_ep_am_bcopy,
	.ep_am_zcopy = uct_sctp_dpdk_ep_am_zcopy,
	.ep_put_short = uct_sctp_dpdk_ep_put_short,
	.ep_put_bcopy = uct_sctp_dpdk_ep_put_bcopy,
	.ep_put_zcopy = uct_sctp_dpdk_ep_put_zcopy,
	.ep_get_bcopy = uct_sctp_dpdk_ep_get_bcopy,
	.ep_get_zcopy = uct_sctp_dpdk_ep_get_zcopy,
	.ep_pending_add = uct_sctp_dpdk_ep_pending_add,
	.ep_pending_purge = uct_sctp_dpdk_ep_pending_purge,
	.ep_flush = uct_sctp_dpdk_ep_flush,
	.ep_fence = uct_sctp_dpdk_ep_fence,
	.ep_create = UCS_CLASS_NEW_FUNC_NAME(uct_sctp_dpdk_ep_t),
	.ep_destroy = UCS_CLASS_DELETE_FUNC_NAME(uct_sctp_dpdk_ep_t),
	.iface_flush = uct_sctp_dpdk_iface_flush,
	.iface_fence = uct_base_iface_fence,
	.iface_progress_enable = uct_base_iface_progress_enable,
	.iface_progress_disable = uct_base_iface_progress_disable,
	.iface_progress = uct_sctp_dpdk_iface_progress,
	.iface_event_fd_get = uct_sctp_dpdk_iface_event_fd_get,
	.iface_event_arm = uct_sctp_dpdk_iface_event_arm,
	.iface_close = UCS_CLASS_DELETE_FUNC_NAME(uct_sctp_dpdk_iface_t),
	.iface_query = uct_sctp_dpdk_iface_query,
	.iface_get_address = uct_sctp_dpdk_iface_get_address,
	.iface_get_device_address = uct_sctp_dpdk_iface_get_device_address,
	.iface_is_reachable = UCT_SCTP_DPDK_COMPAT_IFACE_IS_REACHABLE,
};

/*
 * am_alignment/am_align_offset (UCT_IFACE_PARAM_FIELD_AM_ALIGNMENT, _OFFSET):
 * received AM data is placed so that data + offset is aligned -- our own
 * descriptors are laid out so, and an AM that lands misaligned in an sg
 * buffer is copied to one (a copy only when alignment was asked for).
 * Refused like UCX's transports refuse them (uct_iface_param_am_alignment,
 * ucs_mpool_init): an offset without an alignment, an alignment that is 0
 * or not a power of 2; an offset not below the largest AM is ignored with
 * a diag, as UCX does.
 */
static ucs_status_t
uct_sctp_dpdk_iface_am_alignment(uct_sctp_dpdk_iface_t *iface,
				 const uct_iface_params_t *params,
				 const uct_sctp_dpdk_iface_config_t *config)
{
	size_t max_am = config->seg_size - sizeof(uct_sctp_dpdk_am_hdr_t);
	size_t align, offset;
	ucs_status_t status;

	iface->am_align = 1;
	iface->am_align_offset = 0;
	/* Refuses an offset without an alignment, with an error. */
	status = uct_iface_param_am_alignment(params, max_am, 0, 0, &align,
					      &offset);
	if (status != UCS_OK)
		return status;
	if (!(params->field_mask & UCT_IFACE_PARAM_FIELD_AM_ALIGNMENT))
		return UCS_OK;
	if (align == 0 || !ucs_is_pow2(align) ||
	    align > UCT_SCTP_DPDK_AM_ALIGN_MAX) {
		ucs_error("sctp_dpdk: am_alignment %zu is invalid: it must be a "
			  "power of 2 from 1 to %u (uct_iface_params_t::"
			  "am_alignment)", align, UCT_SCTP_DPDK_AM_ALIGN_MAX);
		return UCS_ERR_INVALID_PARAM;
	}
	iface->am_align = align;
	iface->am_align_offset = offset;
	return UCS_OK;
}

static void uct_sctp_dpdk_iface_event_cleanup(uct_sctp_dpdk_iface_t *iface)
{
	if (iface->event_fd >= 0 && iface->event_fd != iface->wake_fd)
		close(iface->event_fd);
	if (iface->timer_fd >= 0)
		close(iface->timer_fd);
	if (iface->wake_fd >= 0)
		close(iface->wake_fd);
	iface->event_fd = iface->wake_fd = iface->timer_fd = -1;
}

/* The wakeup fds (see the struct): an eventfd, and in inline mode an
 * epoll set of it and a one-shot timerfd. */
static ucs_status_t uct_sctp_dpdk_iface_event_init(uct_sctp_dpdk_iface_t *iface)
{
	struct epoll_event ev = {.events = EPOLLIN};

	iface->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (iface->wake_fd < 0)
		goto err;
	if (iface->ctx->thread_on) {
		iface->event_fd = iface->wake_fd;
		return UCS_OK;
	}
	iface->timer_fd = timerfd_create(CLOCK_MONOTONIC,
					 TFD_NONBLOCK | TFD_CLOEXEC);
	iface->event_fd = epoll_create1(EPOLL_CLOEXEC);
	if (iface->timer_fd < 0 || iface->event_fd < 0)
		goto err;
	ev.data.fd = iface->wake_fd;
	if (epoll_ctl(iface->event_fd, EPOLL_CTL_ADD, iface->wake_fd, &ev))
		goto err;
	ev.data.fd = iface->timer_fd;
	if (epoll_ctl(iface->event_fd, EPOLL_CTL_ADD, iface->timer_fd, &ev))
		goto err;
	return UCS_OK;
err:
	ucs_error("sctp_dpdk: cannot create the iface's wakeup fds: %m "
		  "(raise the open-files limit, ulimit -n)");
	uct_sctp_dpdk_iface_event_cleanup(iface);
	return UCS_ERR_IO_ERROR;
}

static ucs_mpool_ops_t uct_sctp_dpdk_rx_mp_ops = {
	.chunk_alloc = ucs_mpool_chunk_malloc,
	.chunk_release = ucs_mpool_chunk_free,
	.obj_init = NULL,
	.obj_cleanup = NULL,
	.obj_str = NULL,
};

/* "sdpK" -> K, for K below the number of configured ports. */
/*
 * Invalidate an ep to emulate a transport error (UCX's test_uct_peer_failure
 * takes this before closing the receiver): the ep counts as failed from
 * now on (its fail_gen no longer matches its peer's), sends return
 * UCS_ERR_ENDPOINT_TIMEOUT, and the error handler runs once from progress.
 * A local ep's peer is an iface of this process: UNSUPPORTED, so the
 * caller closes that iface, which fails the ep the same way.  Needed in
 * SELF_WIRE mode, where closing the receiving iface leaves the
 * association (of the whole process) up.
 */
ucs_status_t uct_sctp_dpdk_ep_invalidate(uct_ep_h tl_ep)
{
	uct_sctp_dpdk_ep_t *ep = ucs_derived_of(tl_ep, uct_sctp_dpdk_ep_t);
	uct_sctp_dpdk_iface_t *iface =
		ucs_derived_of(tl_ep->iface, uct_sctp_dpdk_iface_t);
	uct_sctp_dpdk_ctx_t *ctx = iface->ctx;

	if (ep->flags & UCT_SCTP_DPDK_EP_FLAG_LOCAL)
		return UCS_ERR_UNSUPPORTED;
	ucs_recursive_spin_lock(ctx->lock);
	ep->fail_gen = ep->peer->fail_gen - 1;
	ctx->ev_gen++;
	ucs_recursive_spin_unlock(ctx->lock);
	return UCS_OK;
}

static uct_iface_internal_ops_t uct_sctp_dpdk_iface_internal_ops = {
	.iface_estimate_perf = uct_base_iface_estimate_perf,
	.iface_vfs_refresh = (uct_iface_vfs_refresh_func_t)ucs_empty_function,
	.ep_query = UCT_SCTP_DPDK_UNSUPPORTED(uct_ep_query_func_t),
	UCT_SCTP_DPDK_COMPAT_INTERNAL_OPS
};

static ucs_status_t
uct_sctp_dpdk_iface_dev_index(const char *dev_name,
			      const uct_sctp_dpdk_iface_config_t *config,
			      unsigned *dev_p)
{
	unsigned ndevs = uct_sctp_dpdk_config_num_devs(config);
	const char *num = dev_name + strlen(UCT_SCTP_DPDK_DEV_PREFIX);
	unsigned long k;
	char *end;

	if (strncmp(dev_name, UCT_SCTP_DPDK_DEV_PREFIX,
		    strlen(UCT_SCTP_DPDK_DEV_PREFIX)) != 0 ||
	    !isdigit((unsigned char)num[0]) || (num[0] == '0' && num[1]) ||
	    (k = strtoul(num, &end, 10), *end != '\0') || k >= ndevs) {
		ucs_error("sctp_dpdk: no device '%s': " UCT_SCTP_DPDK_ENV
			  "DEVARGS lists %u port(s), devices "
			  UCT_SCTP_DPDK_DEV_PREFIX "0.."
			  UCT_SCTP_DPDK_DEV_PREFIX "%u", dev_name, ndevs,
			  ndevs - 1);
		return UCS_ERR_NO_DEVICE;
	}
	*dev_p = (unsigned)k;
	return UCS_OK;
}

static UCS_CLASS_INIT_FUNC(uct_sctp_dpdk_iface_t, uct_md_h md,
			   uct_worker_h worker,
			   const uct_iface_params_t *params,
			   const uct_iface_config_t *tl_config)
{
	const uct_sctp_dpdk_iface_config_t *config =
		ucs_derived_of(tl_config, uct_sctp_dpdk_iface_config_t);
	size_t overhead, align, align_offset;
	ucs_status_t status;
	unsigned dev, k;

	UCT_CHECK_PARAM(params->field_mask & UCT_IFACE_PARAM_FIELD_OPEN_MODE,
			"UCT_IFACE_PARAM_FIELD_OPEN_MODE is not defined");
	if (!(params->open_mode & UCT_IFACE_OPEN_MODE_DEVICE)) {
		ucs_error("sctp_dpdk: open mode 0x%" PRIx64
			  " unsupported, only UCT_IFACE_OPEN_MODE_DEVICE",
			  (uint64_t)params->open_mode);
		return UCS_ERR_UNSUPPORTED;
	}
	status = uct_sctp_dpdk_iface_dev_index(params->mode.device.dev_name,
					       config, &dev);
	if (status != UCS_OK)
		return status;

	UCS_CLASS_CALL_SUPER_INIT(
		uct_base_iface_t, &uct_sctp_dpdk_iface_ops,
		&uct_sctp_dpdk_iface_internal_ops, md, worker, params,
		tl_config UCS_STATS_ARG(
			(params->field_mask & UCT_IFACE_PARAM_FIELD_STATS_ROOT) ?
				params->stats_root :
				NULL) UCS_STATS_ARG(params->mode.device.dev_name));

	self->rx_headroom = (params->field_mask &
			     UCT_IFACE_PARAM_FIELD_RX_HEADROOM) ?
				    params->rx_headroom :
				    0;
	self->release_desc.cb = uct_sctp_dpdk_iface_release_desc;
	self->local_queued = 0;
	self->rx_copy_bytes = 0;
	self->rx_copy_capped = 0;
	if (config->rx_queue_bytes == UCS_MEMUNITS_AUTO) {
		ucs_error("sctp_dpdk: " UCT_SCTP_DPDK_ENV "RX_QUEUE_BYTES=auto "
			  "is not a size: give bytes (k/m/g suffixes, default "
			  "4m) or inf for no cap");
		return UCS_ERR_INVALID_PARAM;
	}
	self->rx_copy_max_bytes = config->rx_queue_bytes == UCS_MEMUNITS_INF ?
					  SIZE_MAX :
					  config->rx_queue_bytes;
	self->large_lent = 0;
	self->rx_count = 0;
	self->ep_seq = 0;
	self->event_fd = self->wake_fd = self->timer_fd = -1;
	self->armed = 0;
	ucs_queue_head_init(&self->rx_q);
	self->rx_count = 0;
	ucs_queue_head_init(&self->flush_q);
	ucs_list_head_init(&self->eps);
	ucs_list_head_init(&self->pending_eps);
	self->config.idle_sleep_us = uct_sctp_dpdk_config_idle_sleep_us(config);
	/* TX_ZCOPY_MIN: inf or auto mean off as well (never that large) */
	self->tx_zcopy_min = (config->tx_zcopy_min == UCS_MEMUNITS_INF ||
			      config->tx_zcopy_min == UCS_MEMUNITS_AUTO) ?
				     0 :
				     config->tx_zcopy_min;
	dp_idle_init(&self->idle, 256, self->config.idle_sleep_us);

	status = uct_sctp_dpdk_iface_am_alignment(self, params, config);
	if (status != UCS_OK)
		return status;
	ucs_queue_head_init(&self->rma_txq);

	if (config->devargs[0] == '\0' && !config->self_wire) {
		ucs_debug("sctp_dpdk: iface %p without a port ("
			  UCT_SCTP_DPDK_ENV "DEVARGS is empty): reaches no "
			  "peer", self);
		self->ctx = NULL;
		return UCS_OK;
	}

	/* The AM payload sits behind our header in the sg buffer, and the
	 * rx descriptor plus the user's headroom in front of it. */
	if (UCT_SCTP_DPDK_RX_OVERHEAD(self->rx_headroom) >
	    UCT_SCTP_DPDK_SG_HEADROOM_BYTES + sizeof(uct_sctp_dpdk_am_hdr_t)) {
		ucs_error("sctp_dpdk: rx_headroom %u too large: at most %zu "
			  "bytes fit in front of received data",
			  self->rx_headroom,
			  UCT_SCTP_DPDK_SG_HEADROOM_BYTES +
				  sizeof(uct_sctp_dpdk_am_hdr_t) -
				  UCT_SCTP_DPDK_RX_OVERHEAD(0));
		return UCS_ERR_INVALID_PARAM;
	}
	status = ucs_spinlock_init(&self->rx_lock, 0);
	if (status != UCS_OK)
		return status;
	status = uct_sctp_dpdk_ctx_get(config, dev, &self->ctx);
	if (status != UCS_OK)
		goto err_lock;
	/* Backing off on a shared core: block until a frame arrives on a
	 * port that can wake us (af_packet) instead of sleeping in slices.
	 * One device only: the poll loop also serves the others. */
	if (config->idle_block_us == UCS_ULUNITS_INF ||
	    (config->idle_block_us != UCS_ULUNITS_AUTO &&
	     config->idle_block_us > UCT_SCTP_DPDK_IDLE_BLOCK_MAX_US)) {
		ucs_error("sctp_dpdk: " UCT_SCTP_DPDK_ENV "IDLE_BLOCK_US is "
			  "above %u: give 0..%u microseconds (0: sleep in "
			  "IDLE_SLEEP_US slices)", UCT_SCTP_DPDK_IDLE_BLOCK_MAX_US,
			  UCT_SCTP_DPDK_IDLE_BLOCK_MAX_US);
		status = UCS_ERR_INVALID_PARAM;
		goto err_ctx;
	}
	if (uct_sctp_dpdk_config_list_count(config->devargs) == 1) {
		unsigned block_us = config->idle_block_us == UCS_ULUNITS_AUTO ?
					    UCT_SCTP_DPDK_IDLE_BLOCK_US :
					    (unsigned)config->idle_block_us;

		dp_idle_add_port(&self->idle, self->ctx->port, block_us);
		for (k = 1; k < self->ctx->nb_paths; k++)
			dp_idle_add_port(&self->idle,
					 self->ctx->path_ports[k], block_us);
	}
	self->bounce = ucs_malloc(self->ctx->seg_bytes, "sctp_dpdk bounce");
	if (self->bounce == NULL) {
		ucs_error("sctp_dpdk: failed to allocate a %u-byte bcopy "
			  "buffer", self->ctx->seg_bytes);
		status = UCS_ERR_NO_MEMORY;
		goto err_ctx;
	}
	/* Descriptors of our own (copies, local AMs): rx descriptor and
	 * headroom in front of the data, data + am_align_offset aligned
	 * (8-aligned data when no alignment was asked for). */
	overhead = UCT_SCTP_DPDK_RX_OVERHEAD(self->rx_headroom);
	align = ucs_max(self->am_align, 8);
	align_offset = overhead + (self->am_align > 1 ? self->am_align_offset :
							0);
	status = uct_sctp_dpdk_compat_mpool_init(&self->small_mp,
				overhead + UCT_SCTP_DPDK_RX_COPY_BYTES,
				align_offset, align,
				UCT_SCTP_DPDK_SMALL_MP_GROW, UINT_MAX,
				&uct_sctp_dpdk_rx_mp_ops, "sctp_dpdk small rx");
	if (status != UCS_OK)
		goto err_bounce;
	status = uct_sctp_dpdk_compat_mpool_init(&self->large_mp,
				overhead + self->ctx->seg_bytes, align_offset,
				align, UCT_SCTP_DPDK_LARGE_MP_GROW, UINT_MAX,
				&uct_sctp_dpdk_rx_mp_ops, "sctp_dpdk large rx");
	if (status != UCS_OK)
		goto err_small_mp;
	status = uct_sctp_dpdk_iface_event_init(self);
	if (status != UCS_OK)
		goto err_large_mp;
	status = uct_sctp_dpdk_rma_iface_init(self);
	if (status != UCS_OK)
		goto err_event;
	status = uct_sctp_dpdk_ctx_add_iface(self->ctx, self);
	if (status != UCS_OK)
		goto err_rma;

	ucs_debug("sctp_dpdk: iface %p id %u opened on %s, rx_headroom %u, "
		  "am_alignment %zu offset %zu", self, self->id,
		  params->mode.device.dev_name, self->rx_headroom,
		  self->am_align, self->am_align_offset);
	return UCS_OK;

err_rma:
	uct_sctp_dpdk_rma_iface_cleanup(self);
err_event:
	uct_sctp_dpdk_iface_event_cleanup(self);
err_large_mp:
	ucs_mpool_cleanup(&self->large_mp, 1);
err_small_mp:
	ucs_mpool_cleanup(&self->small_mp, 1);
err_bounce:
	ucs_free(self->bounce);
err_ctx:
	uct_sctp_dpdk_ctx_put(self->ctx);
err_lock:
	ucs_spinlock_destroy(&self->rx_lock);
	return status;
}

static UCS_CLASS_CLEANUP_FUNC(uct_sctp_dpdk_iface_t)
{
	uct_sctp_dpdk_rx_desc_t *rx;

	/* ucp enables progress on every iface it opens; leaving the callback
	 * in the worker's queue after close is a use-after-free. */
	uct_base_iface_progress_disable(&self->super.super,
					UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
	if (self->ctx == NULL)
		return;
	if (!ucs_queue_is_empty(&self->flush_q))
		ucs_warn("sctp_dpdk: iface %u closed with %zu flushes waiting",
			 self->id, ucs_queue_length(&self->flush_q));
	if (!ucs_list_is_empty(&self->eps))
		ucs_warn("sctp_dpdk: iface %u closed with %zu endpoints",
			 self->id, ucs_list_length(&self->eps));
	/* PUT data of cancelled put_zcopy still referenced: released (the
	 * iface must still be in the table for their zero-copy releases) */
	uct_sctp_dpdk_rma_iface_release_orphans(self);
	/* Out of the table first: nothing is queued to us after this.  Local
	 * eps of other ifaces that point here now fail (their ifaces rescan
	 * on the ev_gen change). */
	uct_sctp_dpdk_ctx_remove_iface(self->ctx, self);
	ucs_recursive_spin_lock(self->ctx->lock);
	self->ctx->ev_gen++;
	self->ctx->idle_sleeps += self->idle.sleeps;
	self->ctx->idle_blocks += self->idle.blocks;
	self->ctx->idle_block_wakes += self->idle.block_wakes;
	ucs_recursive_spin_unlock(self->ctx->lock);
	while (!ucs_queue_is_empty(&self->rx_q)) {
		rx = ucs_queue_pull_elem_non_empty(&self->rx_q,
						   uct_sctp_dpdk_rx_desc_t,
						   queue);
		uct_sctp_dpdk_iface_rx_free(self, rx);
	}
	self->rx_count = 0;
	uct_sctp_dpdk_rma_iface_cleanup(self);
	ucs_mpool_cleanup(&self->large_mp, 1);
	ucs_mpool_cleanup(&self->small_mp, 1);
	uct_sctp_dpdk_iface_event_cleanup(self);
	ucs_free(self->bounce);
	uct_sctp_dpdk_ctx_put(self->ctx);
	ucs_spinlock_destroy(&self->rx_lock);
}

UCS_CLASS_DEFINE(uct_sctp_dpdk_iface_t, uct_base_iface_t);

static UCS_CLASS_DEFINE_NEW_FUNC(uct_sctp_dpdk_iface_t, uct_iface_t, uct_md_h,
				 uct_worker_h, const uct_iface_params_t *,
				 const uct_iface_config_t *);
static UCS_CLASS_DEFINE_DELETE_FUNC(uct_sctp_dpdk_iface_t, uct_iface_t);

UCT_TL_DEFINE_ENTRY(&uct_sctp_dpdk_component, sctp_dpdk,
		    uct_sctp_dpdk_query_devices, uct_sctp_dpdk_iface_t,
		    UCT_SCTP_DPDK_CONFIG_PREFIX,
		    uct_sctp_dpdk_iface_config_table,
		    uct_sctp_dpdk_iface_config_t);

/* ELF constructor/destructor: uct_sctp_dpdk_init() adds the transport to the
 * component and the component to uct_components_list and, with both, the
 * config tables to ucs_config_global_list. */
UCT_SINGLE_TL_INIT(&uct_sctp_dpdk_component, sctp_dpdk, ctor, , )
