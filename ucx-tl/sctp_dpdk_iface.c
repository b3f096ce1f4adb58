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

#include <ucs/arch/atomic.h>
#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/sys/string.h>
#include <ucs/type/class.h>

#include <string.h>

UCT_TL_DECL(sctp_dpdk)

#define UCT_SCTP_DPDK_LOCAL_MP_GROW 16 /* local descriptors per chunk */

static ucs_config_field_t uct_sctp_dpdk_iface_config_table[] = {
	{"", "", NULL, ucs_offsetof(uct_sctp_dpdk_iface_config_t, super),
	 UCS_CONFIG_TYPE_TABLE(uct_iface_config_table)},

	{"DEVARGS", "",
	 "DPDK device arguments of this process's port, as given to --vdev or\n"
	 "-a, e.g. net_memif0,role=client,id=0,socket=/run/sdp/job1/memif0.sock,"
	 "socket-abstract=no\n"
	 "or a PCI address such as 0000:3b:00.1. Empty: no port; the transport\n"
	 "is listed but reaches no peer.",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, devargs),
	 UCS_CONFIG_TYPE_STRING},

	{"IP", "",
	 "IPv4 address and on-link prefix of this process on the port,\n"
	 "A.B.C.D/N (required with DEVARGS). Peers in the same subnet are\n"
	 "reachable.",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, ip), UCS_CONFIG_TYPE_STRING},

	{"MTU", "1500", "IP MTU of the port, 576..9000 bytes.",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, mtu), UCS_CONFIG_TYPE_UINT},

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

	{"IDLE_SLEEP_US", "20",
	 "Idle back-off: after 256 empty progress calls, each further empty\n"
	 "call sleeps this long (microseconds, 0..100000). 0: busy polling,\n"
	 "which takes a whole core per process.",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, idle_sleep_us),
	 UCS_CONFIG_TYPE_UINT},

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
	 "sdp_transport_set_rate_bps().",
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
	 "address, so peers may use different ports.",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, sctp_port),
	 UCS_CONFIG_TYPE_UINT},

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
	 "arp_retries=10 huge=1\"); see dp_config_help() in dataplane/dp.h.",
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

	{NULL}};

static ucs_status_t uct_sctp_dpdk_iface_query(uct_iface_h tl_iface,
					      uct_iface_attr_t *attr)
{
	uct_sctp_dpdk_iface_t *iface =
		ucs_derived_of(tl_iface, uct_sctp_dpdk_iface_t);
	size_t seg = iface->ctx != NULL ? iface->ctx->seg_bytes : 65536;
	size_t max_payload = seg - sizeof(uct_sctp_dpdk_am_hdr_t);

	uct_base_iface_query(&iface->super, attr);

	attr->iface_addr_len = sizeof(uct_sctp_dpdk_iface_addr_t);
	attr->device_addr_len = sizeof(uct_sctp_dpdk_dev_addr_t);
	attr->ep_addr_len = 0;
	attr->cap.flags = UCT_IFACE_FLAG_CONNECT_TO_IFACE |
			  UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_BCOPY |
			  UCT_IFACE_FLAG_AM_ZCOPY | UCT_IFACE_FLAG_PENDING |
			  UCT_IFACE_FLAG_CB_SYNC |
			  UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE;
	attr->cap.event_flags = 0; /* no wakeup fd: polling only */
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

	attr->latency = ucs_linear_func_make(UCT_SCTP_DPDK_LATENCY_S, 0);
	attr->bandwidth.dedicated = 0;
	attr->bandwidth.shared = iface->ctx != NULL ?
					 iface->ctx->bandwidth_bps :
					 UCT_SCTP_DPDK_VDEV_BANDWIDTH_BPS;
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
	return UCS_OK;
}

static ucs_status_t uct_sctp_dpdk_iface_get_address(uct_iface_h tl_iface,
						    uct_iface_addr_t *addr)
{
	uct_sctp_dpdk_iface_t *iface =
		ucs_derived_of(tl_iface, uct_sctp_dpdk_iface_t);

	((uct_sctp_dpdk_iface_addr_t *)addr)->iface_id =
		rte_cpu_to_be_16(iface->id);
	return UCS_OK;
}

static int uct_sctp_dpdk_iface_is_reachable(const uct_iface_h tl_iface,
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
	return (dev->ip & ctx->mask_be) == (ctx->ip_be & ctx->mask_be);
}

uct_sctp_dpdk_rx_desc_t *
uct_sctp_dpdk_iface_rx_desc_init(uct_sctp_dpdk_iface_t *iface, void *data)
{
	void *ucx_desc = UCS_PTR_BYTE_OFFSET(data, -(ptrdiff_t)iface->rx_headroom);
	uct_sctp_dpdk_rx_desc_t *rx = uct_sctp_dpdk_rx_desc_of(ucx_desc);

	uct_recv_desc(ucx_desc) = &iface->release_desc;
	rx->data = data;
	return rx;
}

void uct_sctp_dpdk_iface_rx_enqueue(uct_sctp_dpdk_iface_t *iface,
				    uct_sctp_dpdk_rx_desc_t *rx)
{
	ucs_spin_lock(&iface->rx_lock);
	ucs_queue_push(&iface->rx_q, &rx->queue);
	iface->rx_count++;
	ucs_spin_unlock(&iface->rx_lock);
}

/* Return a descriptor: sg buffer to its endpoint, local one to the mpool. */
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

static void uct_sctp_dpdk_iface_release_desc(uct_recv_desc_t *self,
					     void *desc)
{
	uct_sctp_dpdk_iface_t *iface =
		ucs_container_of(self, uct_sctp_dpdk_iface_t, release_desc);

	uct_sctp_dpdk_iface_rx_free(iface, uct_sctp_dpdk_rx_desc_of(desc));
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
	size_t off = 0;
	void *elem, *data;
	int i;

	ucs_recursive_spin_lock(&ctx->lock);
	dst = ctx->ifaces[dst_iface_id % UCT_SCTP_DPDK_MAX_IFACES];
	if (ucs_unlikely(dst == NULL || dst->id != dst_iface_id)) {
		status = UCS_ERR_UNREACHABLE;
		goto out;
	}
	ucs_spin_lock(&dst->rx_lock);
	elem = ucs_mpool_get_inline(&dst->local_mp);
	if (ucs_unlikely(elem == NULL)) {
		ucs_spin_unlock(&dst->rx_lock);
		status = UCS_ERR_NO_MEMORY;
		goto out;
	}
	data = UCS_PTR_BYTE_OFFSET(elem,
				   UCT_SCTP_DPDK_RX_OVERHEAD(dst->rx_headroom));
	for (i = 0; i < iovcnt; i++) {
		memcpy(UCS_PTR_BYTE_OFFSET(data, off), iov[i].iov_base,
		       iov[i].iov_len);
		off += iov[i].iov_len;
	}
	rx = uct_sctp_dpdk_iface_rx_desc_init(dst, data);
	rx->msg = NULL;
	rx->mp_elem = elem;
	rx->length = (uint32_t)off;
	rx->am_id = am_id;
	ucs_queue_push(&dst->rx_q, &rx->queue);
	dst->rx_count++;
	ucs_spin_unlock(&dst->rx_lock);
out:
	ucs_recursive_spin_unlock(&ctx->lock);
	return status;
}

/* Run the AM handlers of up to one burst of queued messages. */
static unsigned uct_sctp_dpdk_iface_rx_drain(uct_sctp_dpdk_iface_t *iface)
{
	uct_sctp_dpdk_rx_desc_t *rxs[UCT_SCTP_DPDK_RX_BURST];
	unsigned n = 0, i;
	ucs_status_t status;

	if (iface->rx_count == 0)
		return 0;
	ucs_spin_lock(&iface->rx_lock);
	while (n < UCT_SCTP_DPDK_RX_BURST && !ucs_queue_is_empty(&iface->rx_q)) {
		rxs[n++] = ucs_queue_pull_elem_non_empty(
			&iface->rx_q, uct_sctp_dpdk_rx_desc_t, queue);
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
		uct_iface_trace_am(&iface->super, UCT_AM_TRACE_TYPE_RECV,
				   rx->am_id, rx->data, rx->length, "RX");
		status = uct_iface_invoke_am(&iface->super, rx->am_id, rx->data,
					     rx->length,
					     UCT_CB_PARAM_FLAG_DESC);
		if (status != UCS_INPROGRESS)
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

static unsigned uct_sctp_dpdk_iface_progress(uct_iface_h tl_iface)
{
	uct_sctp_dpdk_iface_t *iface =
		ucs_derived_of(tl_iface, uct_sctp_dpdk_iface_t);
	uct_sctp_dpdk_ctx_t *ctx = iface->ctx;
	unsigned count = 0;

	if (ucs_unlikely(ctx == NULL))
		return 0;
	if (!ctx->thread_on && ucs_recursive_spin_trylock(&ctx->lock)) {
		count += uct_sctp_dpdk_ctx_poll(ctx);
		ucs_recursive_spin_unlock(&ctx->lock);
	}
	count += uct_sctp_dpdk_iface_rx_drain(iface);
	if (ucs_unlikely(iface->ev_gen != ctx->ev_gen))
		count += uct_sctp_dpdk_iface_handle_events(iface);
	if (!ucs_list_is_empty(&iface->pending_eps))
		count += uct_sctp_dpdk_iface_dispatch_pending(iface);
	if (ucs_unlikely(!ucs_queue_is_empty(&iface->rma_txq)))
		count += uct_sctp_dpdk_rma_progress(iface);
	dp_idle_update(&iface->idle, count);
	return count;
}

static ucs_status_t uct_sctp_dpdk_iface_flush(uct_iface_h tl_iface,
					      unsigned flags,
					      uct_completion_t *comp)
{
	uct_sctp_dpdk_iface_t *iface =
		ucs_derived_of(tl_iface, uct_sctp_dpdk_iface_t);

	if (comp != NULL)
		return UCS_ERR_UNSUPPORTED;
	/* Every AM sent was taken whole by usrsctp, which owns delivery
	 * from then on; only pending requests are outstanding here. */
	if (!ucs_list_is_empty(&iface->pending_eps)) {
		/* UCS_INPROGRESS, not NO_RESOURCE: ucp_worker_flush_check
		 * (ucp/rma/flush.c) takes any error status of an iface flush
		 * as a failure ("flush failed: No resources ..."), which broke
		 * Open MPI's osc ucx fence while AMs were pending. */
		UCT_TL_IFACE_STAT_FLUSH_WAIT(&iface->super);
		return UCS_INPROGRESS;
	}
	/* RMA: puts written and gets answered at the targets. */
	if (uct_sctp_dpdk_rma_iface_flush(iface) != UCS_OK) {
		UCT_TL_IFACE_STAT_FLUSH_WAIT(&iface->super);
		return UCS_INPROGRESS;
	}
	UCT_TL_IFACE_STAT_FLUSH(&iface->super);
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
	.iface_close = UCS_CLASS_DELETE_FUNC_NAME(uct_sctp_dpdk_iface_t),
	.iface_query = uct_sctp_dpdk_iface_query,
	.iface_get_address = uct_sctp_dpdk_iface_get_address,
	.iface_get_device_address = uct_sctp_dpdk_iface_get_device_address,
	.iface_is_reachable = uct_sctp_dpdk_iface_is_reachable,
};

static ucs_mpool_ops_t uct_sctp_dpdk_local_mp_ops = {
	.chunk_alloc = ucs_mpool_chunk_malloc,
	.chunk_release = ucs_mpool_chunk_free,
	.obj_init = NULL,
	.obj_cleanup = NULL,
	.obj_str = NULL,
};

static UCS_CLASS_INIT_FUNC(uct_sctp_dpdk_iface_t, uct_md_h md,
			   uct_worker_h worker,
			   const uct_iface_params_t *params,
			   const uct_iface_config_t *tl_config)
{
	const uct_sctp_dpdk_iface_config_t *config =
		ucs_derived_of(tl_config, uct_sctp_dpdk_iface_config_t);
	size_t elem_size;
	ucs_status_t status;

	UCT_CHECK_PARAM(params->field_mask & UCT_IFACE_PARAM_FIELD_OPEN_MODE,
			"UCT_IFACE_PARAM_FIELD_OPEN_MODE is not defined");
	if (!(params->open_mode & UCT_IFACE_OPEN_MODE_DEVICE)) {
		ucs_error("sctp_dpdk: open mode 0x%" PRIx64
			  " unsupported, only UCT_IFACE_OPEN_MODE_DEVICE",
			  (uint64_t)params->open_mode);
		return UCS_ERR_UNSUPPORTED;
	}
	if (strcmp(params->mode.device.dev_name, UCT_SCTP_DPDK_DEV_NAME)) {
		ucs_error("sctp_dpdk: no device '%s', the only device is '%s'",
			  params->mode.device.dev_name,
			  UCT_SCTP_DPDK_DEV_NAME);
		return UCS_ERR_NO_DEVICE;
	}

	UCS_CLASS_CALL_SUPER_INIT(
		uct_base_iface_t, &uct_sctp_dpdk_iface_ops,
		&uct_base_iface_internal_ops, md, worker, params,
		tl_config UCS_STATS_ARG(
			(params->field_mask & UCT_IFACE_PARAM_FIELD_STATS_ROOT) ?
				params->stats_root :
				NULL) UCS_STATS_ARG(params->mode.device.dev_name));

	self->rx_headroom = (params->field_mask &
			     UCT_IFACE_PARAM_FIELD_RX_HEADROOM) ?
				    params->rx_headroom :
				    0;
	self->release_desc.cb = uct_sctp_dpdk_iface_release_desc;
	self->config.idle_sleep_us = config->idle_sleep_us;
	ucs_queue_head_init(&self->rx_q);
	ucs_list_head_init(&self->eps);
	ucs_list_head_init(&self->pending_eps);
	ucs_queue_head_init(&self->rma_txq);
	dp_idle_init(&self->idle, 256, config->idle_sleep_us);

	if (config->devargs[0] == '\0') {
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
	status = uct_sctp_dpdk_ctx_get(config, &self->ctx);
	if (status != UCS_OK)
		goto err_lock;
	self->bounce = ucs_malloc(self->ctx->seg_bytes, "sctp_dpdk bounce");
	if (self->bounce == NULL) {
		ucs_error("sctp_dpdk: failed to allocate a %u-byte bcopy "
			  "buffer", self->ctx->seg_bytes);
		status = UCS_ERR_NO_MEMORY;
		goto err_ctx;
	}
	elem_size = UCT_SCTP_DPDK_RX_OVERHEAD(self->rx_headroom) +
		    self->ctx->seg_bytes;
	status = ucs_mpool_init(&self->local_mp, 0, elem_size, 0, 8,
				UCT_SCTP_DPDK_LOCAL_MP_GROW, UINT_MAX,
				&uct_sctp_dpdk_local_mp_ops,
				"sctp_dpdk local rx");
	if (status != UCS_OK)
		goto err_bounce;
	status = uct_sctp_dpdk_rma_iface_init(self);
	if (status != UCS_OK)
		goto err_mp;
	status = uct_sctp_dpdk_ctx_add_iface(self->ctx, self);
	if (status != UCS_OK)
		goto err_rma;

	ucs_debug("sctp_dpdk: iface %p id %u opened on %s, rx_headroom %u",
		  self, self->id, params->mode.device.dev_name,
		  self->rx_headroom);
	return UCS_OK;

err_rma:
	uct_sctp_dpdk_rma_iface_cleanup(self);
err_mp:
	ucs_mpool_cleanup(&self->local_mp, 1);
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
	if (!ucs_list_is_empty(&self->eps))
		ucs_warn("sctp_dpdk: iface %u closed with %zu endpoints",
			 self->id, ucs_list_length(&self->eps));
	/* Out of the table first: nothing is queued to us after this. */
	uct_sctp_dpdk_ctx_remove_iface(self->ctx, self);
	while (!ucs_queue_is_empty(&self->rx_q)) {
		rx = ucs_queue_pull_elem_non_empty(&self->rx_q,
						   uct_sctp_dpdk_rx_desc_t,
						   queue);
		uct_sctp_dpdk_iface_rx_free(self, rx);
	}
	self->rx_count = 0;
	uct_sctp_dpdk_rma_iface_cleanup(self);
	ucs_mpool_cleanup(&self->local_mp, 1);
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
