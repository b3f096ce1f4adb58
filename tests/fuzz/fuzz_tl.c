/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_tl.c - libFuzzer harness: the transport's own wire format inside an
 * established association, through the real receive path of ucx-tl.
 *
 * One process, UCX_SCTP_DPDK_SELF_WIRE=y: the device is both ends of a
 * memif pair and two ifaces take the ends, so iface V (the victim, end A)
 * and iface H (the hostile sender, end B) talk over SCTP.  H's ep to V
 * gives an association; each record of an input is written on it below
 * the UCT API (sg_send with our 8-byte header and whatever follows), as a
 * peer with another implementation would, and V's progress takes it
 * through sg_recv -> uct_sctp_dpdk_lane_poll -> RMA request service
 * (PUT/GET_REQ/FLUSH headers, the registration check, the reply queue) or
 * uct_sctp_dpdk_ctx_rx_deliver (AM header: iface id, incarnation, AM id;
 * the stream map's RTS parser, STREAM_TAG_MASK on) -> the iface's RX queue
 * -> RMA reply handling or UCX's AM handler table.
 *
 * Input: records, each [len lo][len hi][mode][len bytes of message].
 *   mode bit 0: write V's iface id and incarnation into the header (else
 *               the bytes' own, which V must refuse unless they match)
 *   mode bit 1: RMA requests name V's registered region (key, address
 *               inside it): PUTs and GETs get past the access check
 *   mode bit 2: the AM id is the UCP rendezvous RTS (stream map parser)
 *   mode bits 4-7: SCTP stream
 *
 * Invariants (abort otherwise), after V and H have processed every record:
 *  - V read every message (rx_msgs) while the association stayed up;
 *  - an AM handler ran exactly for the records that are well-formed AMs to
 *    V (flags without the RMA bit, V's id and incarnation, id below
 *    UCT_AM_ID_MAX), with the record's id, length and bytes;
 *  - no byte of the guard zones around V's registered region changed
 *    (a PUT never writes outside the registration it names);
 *  - nothing is kept: V's RX queue is empty, no sg descriptor is held or
 *    lent, no queued copy is counted, no RMA reply waits;
 *  - a legitimate AM from H still reaches V's handler intact.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sctp_dpdk.h"
#include "sctp_dpdk_stream.h"

#include <ucs/async/async.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FT_MAX_RECORDS 32	 /* records per input */
#define FT_MAX_MSG 3000		 /* bytes per record (small and large AMs) */
#define FT_REGION 8192		 /* V's registered region */
#define FT_GUARD 4096		 /* guard bytes each side of it */
#define FT_GUARD_BYTE 0xa5
#define FT_LEGIT_ID 3		 /* AM id of the liveness AM */
#define FT_DEADLINE_S 5.0	 /* every wait */

typedef struct {
	const uint8_t *bytes;	 /* record's message */
	uint16_t len;
	uint8_t expect_am;	 /* a handler call is due */
	uint8_t seen;
} ft_record_t;

static ucs_async_context_t *ft_async;
static uct_worker_h ft_worker;
static uct_md_h ft_md;
static uct_iface_config_t *ft_config;
static uct_iface_h ft_v, ft_h;
static uct_ep_h ft_ep;
static uct_sctp_dpdk_rkey_t ft_rkey;
static uint8_t *ft_mem;		 /* guard | region | guard */
static uint8_t ft_copy[FT_MAX_RECORDS][FT_MAX_MSG];
static ft_record_t ft_recs[FT_MAX_RECORDS];
static unsigned ft_nrecs;
static unsigned ft_calls, ft_unexpected, ft_legit;
static uint64_t ft_legit_val;

static double ft_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void __attribute__((noreturn)) ft_fail(const char *what)
{
	fprintf(stderr, "fuzz_tl: invariant broken: %s\n", what);
	abort();
}

static ucs_status_t ft_am_cb(void *arg, void *data, size_t length,
			     unsigned flags)
{
	uint8_t id = (uint8_t)(uintptr_t)arg;
	unsigned i;

	(void)flags;
	if (id >= UCT_AM_ID_MAX)
		ft_fail("AM handler called for an id past the table");
	if (id == FT_LEGIT_ID && length == 8 &&
	    memcmp(data, &ft_legit_val, 8) == 0) {
		ft_legit++;
		return UCS_OK;
	}
	ft_calls++;
	for (i = 0; i < ft_nrecs; i++) {
		ft_record_t *r = &ft_recs[i];

		if (!r->expect_am || r->seen || r->bytes[0] != id ||
		    r->len - sizeof(uct_sctp_dpdk_am_hdr_t) != length ||
		    memcmp(r->bytes + sizeof(uct_sctp_dpdk_am_hdr_t), data,
			   length) != 0)
			continue;
		r->seen = 1;
		return UCS_OK;
	}
	ft_unexpected++;
	return UCS_OK;
}

static uct_sctp_dpdk_iface_t *ft_tl(uct_iface_h i)
{
	return ucs_derived_of(i, uct_sctp_dpdk_iface_t);
}

static void ft_iface_open(uct_iface_h *ip)
{
	uct_iface_params_t p;

	memset(&p, 0, sizeof(p));
	p.field_mask = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
		       UCT_IFACE_PARAM_FIELD_DEVICE;
	p.open_mode = UCT_IFACE_OPEN_MODE_DEVICE;
	p.mode.device.tl_name = UCT_SCTP_DPDK_NAME;
	p.mode.device.dev_name = UCT_SCTP_DPDK_DEV_NAME;
	if (uct_iface_open(ft_md, ft_worker, &p, ft_config, ip) != UCS_OK)
		ft_fail("iface open (root? SELF_WIRE memif pair)");
	uct_iface_progress_enable(*ip, UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
}

/* Whether the association H -> V is up. */
static int ft_up(void)
{
	uct_sctp_dpdk_ep_t *ep = ucs_derived_of(ft_ep, uct_sctp_dpdk_ep_t);

	return ep->peer != NULL && ep->peer->state == UCT_SCTP_DPDK_PEER_UP &&
	       !uct_sctp_dpdk_ep_is_failed(ep);
}

/* A legitimate AM from H reaches V (and brings the association up). */
static void ft_legit_am(void)
{
	double deadline = ft_now_s() + FT_DEADLINE_S;
	unsigned want = ft_legit + 1;
	ucs_status_t st;

	ft_legit_val++;
	while ((st = uct_ep_am_short(ft_ep, FT_LEGIT_ID, ft_legit_val, NULL,
				     0)) == UCS_ERR_NO_RESOURCE &&
	       ft_now_s() < deadline)
		uct_worker_progress(ft_worker);
	if (st != UCS_OK)
		ft_fail("a legitimate AM could not be sent");
	while (ft_legit < want && ft_now_s() < deadline)
		uct_worker_progress(ft_worker);
	if (ft_legit < want)
		ft_fail("a legitimate AM did not arrive");
}

static void ft_close(void)
{
	if (ft_ep != NULL)
		uct_ep_destroy(ft_ep);
	if (ft_h != NULL)
		uct_iface_close(ft_h);
	if (ft_v != NULL)
		uct_iface_close(ft_v);
	ft_ep = NULL;
	ft_h = ft_v = NULL;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	uct_component_h *comps, comp = NULL;
	uct_md_config_t *md_config;
	uct_component_attr_t ca;
	uint8_t dev[256], ifa[256];
	uct_ep_params_t ep_p;
	char prefix[96];
	const char *job = getenv("SDP_FUZZ_JOB");
	unsigned n, i;

	(void)argc;
	(void)argv;
	snprintf(prefix, sizeof(prefix), "sdp-fuzz-%s%s%d", job ? job : "",
		 job ? "-" : "", (int)getpid());
	setenv("UCX_SCTP_DPDK_SELF_WIRE", "y", 1);
	setenv("UCX_SCTP_DPDK_DEVARGS", "", 1);
	setenv("UCX_SCTP_DPDK_IP", "10.77.11.1/24", 1);
	setenv("UCX_SCTP_DPDK_PREFIX", prefix, 1);
	setenv("UCX_SCTP_DPDK_PROGRESS", "inline", 1);
	setenv("UCX_SCTP_DPDK_IDLE_SLEEP_US", "0", 1);
	setenv("UCX_SCTP_DPDK_RX_DESCS", "64", 1);
	setenv("UCX_SCTP_DPDK_STREAM_TAG_MASK", "ompi-comm", 1);
	setenv("UCX_LOG_LEVEL", "error", 0);
	if (ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK,
				     &ft_async) != UCS_OK ||
	    uct_worker_create(ft_async, UCS_THREAD_MODE_SINGLE, &ft_worker) !=
		    UCS_OK ||
	    uct_query_components(&comps, &n) != UCS_OK)
		ft_fail("UCT context");
	for (i = 0; i < n; i++) {
		ca.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
		uct_component_query(comps[i], &ca);
		if (strcmp(ca.name, UCT_SCTP_DPDK_NAME) == 0)
			comp = comps[i];
	}
	if (comp == NULL)
		ft_fail("component sctp_dpdk not registered");
	if (uct_md_config_read(comp, NULL, NULL, &md_config) != UCS_OK ||
	    uct_md_open(comp, UCT_SCTP_DPDK_NAME, md_config, &ft_md) != UCS_OK)
		ft_fail("md open");
	uct_config_release(md_config);
	uct_release_component_list(comps);
	if (uct_md_iface_config_read(ft_md, UCT_SCTP_DPDK_NAME, NULL, NULL,
				     &ft_config) != UCS_OK)
		ft_fail("iface config");
	ft_iface_open(&ft_v);	/* end A */
	ft_iface_open(&ft_h);	/* end B */
	for (i = 0; i < UCT_AM_ID_MAX; i++)
		if (uct_iface_set_am_handler(ft_v, (uint8_t)i, ft_am_cb,
					     (void *)(uintptr_t)i, 0) != UCS_OK)
			ft_fail("am handler");
	if (uct_iface_get_device_address(ft_v, (uct_device_addr_t *)dev) !=
		    UCS_OK ||
	    uct_iface_get_address(ft_v, (uct_iface_addr_t *)ifa) != UCS_OK)
		ft_fail("address");
	memset(&ep_p, 0, sizeof(ep_p));
	ep_p.field_mask = UCT_EP_PARAM_FIELD_IFACE |
			  UCT_EP_PARAM_FIELD_DEV_ADDR |
			  UCT_EP_PARAM_FIELD_IFACE_ADDR;
	ep_p.iface = ft_h;
	ep_p.dev_addr = (const uct_device_addr_t *)dev;
	ep_p.iface_addr = (const uct_iface_addr_t *)ifa;
	if (uct_ep_create(&ep_p, &ft_ep) != UCS_OK)
		ft_fail("ep create");
	ft_mem = aligned_alloc(64, FT_GUARD * 2 + FT_REGION);
	if (ft_mem == NULL)
		ft_fail("region");
	memset(ft_mem, FT_GUARD_BYTE, FT_GUARD * 2 + FT_REGION);
	if (uct_sctp_dpdk_rma_reg_add(ft_mem + FT_GUARD, FT_REGION,
				      &ft_rkey) != UCS_OK)
		ft_fail("registration");
	ft_legit_am();
	atexit(ft_close);
	return 0;
}

/* Send one record's message on H's association; @return 0, or -1 when the
 * association is gone or sg refused the message. */
static int ft_send(const uint8_t *msg, uint16_t len, uint16_t stream)
{
	uct_sctp_dpdk_ep_t *ep = ucs_derived_of(ft_ep, uct_sctp_dpdk_ep_t);
	uct_sctp_dpdk_ctx_t *ctx = ft_tl(ft_h)->ctx;
	double deadline = ft_now_s() + FT_DEADLINE_S;
	struct iovec iov = {(void *)msg, len};
	int rc;

	do {
		ucs_recursive_spin_lock(ctx->lock);
		rc = sg_send(ep->peer->sg, ep->peer->assoc, stream, 0, 0, &iov,
			     1);
		ucs_recursive_spin_unlock(ctx->lock);
		if (rc != -EAGAIN)
			break;
		uct_worker_progress(ft_worker);
	} while (ft_now_s() < deadline);
	return rc == 0 ? 0 : -1;
}

/* Make record @r's header what @mode asks; note whether an AM is due. */
static void ft_shape(ft_record_t *r, uint8_t *m, uint8_t mode,
		     const uct_sctp_dpdk_iface_t *v)
{
	uct_sctp_dpdk_am_hdr_t *hdr = (uct_sctp_dpdk_am_hdr_t *)m;
	uct_sctp_dpdk_rma_hdr_t *rh = (uct_sctp_dpdk_rma_hdr_t *)(hdr + 1);

	r->expect_am = 0;
	if (r->len < sizeof(*hdr))
		return;
	if (mode & 1) {
		hdr->dst_iface_id = rte_cpu_to_be_16(v->id);
		hdr->dst_incarnation =
			rte_cpu_to_be_16((uint16_t)v->ctx->incarnation);
	}
	if (mode & 4)
		hdr->am_id = UCT_SCTP_DPDK_UCP_RNDV_RTS;
	if ((mode & 2) && r->len >= UCT_SCTP_DPDK_RMA_HDRS_BYTES) {
		uint64_t off = rte_be_to_cpu_64(rh->addr) % FT_REGION;

		rh->key = ft_rkey.key;
		rh->addr = rte_cpu_to_be_64((uintptr_t)ft_mem + FT_GUARD + off);
		rh->length = rte_cpu_to_be_64(rte_be_to_cpu_64(rh->length) %
					      (FT_REGION + 64));
		rh->offset = rte_cpu_to_be_64(rte_be_to_cpu_64(rh->offset) %
					      (FT_REGION + 64));
	}
	r->expect_am = !(hdr->flags & UCT_SCTP_DPDK_HDR_FLAG_RMA) &&
		       hdr->am_id < UCT_AM_ID_MAX &&
		       rte_be_to_cpu_16(hdr->dst_iface_id) == v->id &&
		       rte_be_to_cpu_16(hdr->dst_incarnation) ==
			       (uint16_t)v->ctx->incarnation;
}

/* Whether RMA replies (or requests behind one) wait in V's reply queue
 * (initialised with its pool, on the first RMA request). */
static int ft_replies_wait(const uct_sctp_dpdk_ctx_t *ctx)
{
	return ctx->rma_reply_mp_ready && !ucs_queue_is_empty(&ctx->rma_replyq);
}

static void ft_check_quiet(uct_sctp_dpdk_iface_t *v)
{
	uct_sctp_dpdk_ctx_t *ctx = v->ctx;
	size_t i;

	for (i = 0; i < FT_GUARD; i++)
		if (ft_mem[i] != FT_GUARD_BYTE ||
		    ft_mem[FT_GUARD + FT_REGION + i] != FT_GUARD_BYTE)
			ft_fail("a guard byte around the registered region "
				"changed");
	if (v->rx_count != 0 || ctx->sg_descs_held != 0 ||
	    ctx->sg_descs_lent != 0 || v->rx_copy_bytes != 0 ||
	    ft_replies_wait(ctx)) {
		fprintf(stderr, "rx_count %u held %" PRId64 " lent %u "
			"copy_bytes %zu replyq %d\n", v->rx_count,
			ctx->sg_descs_held, ctx->sg_descs_lent,
			v->rx_copy_bytes, ft_replies_wait(ctx));
		ft_fail("victim keeps something after the input");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uct_sctp_dpdk_iface_t *v = ft_tl(ft_v);
	uct_sctp_dpdk_ctx_t *vctx = v->ctx;
	uint64_t rx0 = vctx->rx_msgs;
	unsigned sent = 0, expected = 0, i;
	double deadline;

	ft_nrecs = 0;
	ft_calls = ft_unexpected = 0;
	while (size >= 3 && ft_nrecs < FT_MAX_RECORDS) {
		uint16_t len = (uint16_t)(data[0] | data[1] << 8) % FT_MAX_MSG;
		uint8_t mode = data[2];
		ft_record_t *r = &ft_recs[ft_nrecs];

		data += 3;
		size -= 3;
		if (len > size)
			len = (uint16_t)size;
		if (len == 0)
			break;
		memcpy(ft_copy[ft_nrecs], data, len);
		data += len;
		size -= len;
		r->bytes = ft_copy[ft_nrecs];
		r->len = len;
		r->seen = 0;
		ft_shape(r, ft_copy[ft_nrecs], mode, v);
		ft_nrecs++;
		if (!ft_up() || ft_send(r->bytes, len, mode >> 4) != 0)
			break;
		sent++;
		expected += r->expect_am;
	}
	/* V reads every message; AMs behind an RMA reply wait for it. */
	deadline = ft_now_s() + FT_DEADLINE_S;
	while ((vctx->rx_msgs - rx0 < sent || v->rx_count != 0 ||
		ft_replies_wait(vctx)) &&
	       ft_now_s() < deadline)
		uct_worker_progress(ft_worker);
	if (!ft_up()) {
		/* A peer may break its own association; not V's fault, but V
		 * must still come clean.  Start again with a new one. */
		ft_fail("the association went down under the input");
	}
	if (vctx->rx_msgs - rx0 < sent) {
		fprintf(stderr, "fuzz_tl: V read %" PRIu64 " of %u messages\n",
			vctx->rx_msgs - rx0, sent);
		ft_fail("a message was lost");
	}
	if (ft_calls != expected || ft_unexpected != 0) {
		fprintf(stderr, "fuzz_tl: %u handler calls, %u expected, %u "
			"unexpected\n", ft_calls, expected, ft_unexpected);
		ft_fail("AM handler calls do not match the well-formed AMs");
	}
	for (i = 0; i < ft_nrecs && i < sent; i++)
		if (ft_recs[i].expect_am && !ft_recs[i].seen)
			ft_fail("a well-formed AM did not reach its handler");
	ft_legit_am();
	ft_check_quiet(v);
	/* the region back to its pattern for the next input */
	memset(ft_mem + FT_GUARD, FT_GUARD_BYTE, FT_REGION);
	return 0;
}
