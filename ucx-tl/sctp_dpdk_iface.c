/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sctp_dpdk_iface.c - the `sctp_dpdk` transport: its configuration table
 * (UCX_SCTP_DPDK_*, listed by `ucx_info -c`), the interface object, and the
 * constructor that registers component and transport with libuct.
 *
 * Interface lifetime: iface_open (UCS class "new") copies what it needs out
 * of the config, which UCX releases right after; iface_close frees it.
 *
 * TODO(#1): data path.  Endpoints cannot be created yet (ep_create returns
 * UCS_ERR_UNSUPPORTED) and no peer is reachable, so ucp never selects this
 * transport for a lane; only discovery, open, query and close work.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sctp_dpdk.h"

#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/sys/string.h>
#include <ucs/type/class.h>

#include <string.h>

UCT_TL_DECL(sctp_dpdk)

static ucs_config_field_t uct_sctp_dpdk_iface_config_table[] = {
	{"", "", NULL, ucs_offsetof(uct_sctp_dpdk_iface_config_t, super),
	 UCS_CONFIG_TYPE_TABLE(uct_iface_config_table)},

	{"DEVARGS", "",
	 "DPDK device arguments of the port this interface drives, as given to\n"
	 "rte_dev_probe(), e.g.\n"
	 "net_memif0,role=client,socket=/run/sdp/job1.sock,socket-abstract=no\n"
	 "or a PCI address such as 0000:3b:00.1. Empty means no port is opened.",
	 ucs_offsetof(uct_sctp_dpdk_iface_config_t, devargs),
	 UCS_CONFIG_TYPE_STRING},

	{NULL}};

static ucs_status_t uct_sctp_dpdk_iface_query(uct_iface_h tl_iface,
					      uct_iface_attr_t *attr)
{
	uct_sctp_dpdk_iface_t *iface =
		ucs_derived_of(tl_iface, uct_sctp_dpdk_iface_t);

	uct_base_iface_query(&iface->super, attr);

	attr->iface_addr_len = 0;
	attr->device_addr_len = 0;
	attr->ep_addr_len = 0;
	attr->cap.flags = UCT_IFACE_FLAG_CONNECT_TO_IFACE |
			  UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_BCOPY |
			  UCT_IFACE_FLAG_PENDING | UCT_IFACE_FLAG_CB_SYNC;
	attr->cap.event_flags = 0;
	attr->cap.am.max_short = UCT_SCTP_DPDK_AM_MAX_SHORT_BYTES;
	attr->cap.am.max_bcopy = UCT_SCTP_DPDK_AM_MAX_BCOPY_BYTES;
	attr->cap.am.align_mtu = 1;
	attr->cap.am.opt_zcopy_align = 1;

	attr->latency = ucs_linear_func_make(UCT_SCTP_DPDK_LATENCY_S, 0);
	attr->bandwidth.dedicated = 0;
	attr->bandwidth.shared = UCT_SCTP_DPDK_BANDWIDTH_BPS;
	attr->overhead = UCT_SCTP_DPDK_OVERHEAD_S;
	attr->priority = 0;
	return UCS_OK;
}

/* No endpoint exists yet (ep_create fails), so these are never reached. */
static ucs_status_t uct_sctp_dpdk_ep_am_short(uct_ep_h ep, uint8_t id,
					      uint64_t header,
					      const void *payload,
					      unsigned length)
{
	return UCS_ERR_UNSUPPORTED;
}

static ssize_t uct_sctp_dpdk_ep_am_bcopy(uct_ep_h ep, uint8_t id,
					 uct_pack_callback_t pack_cb,
					 void *arg, unsigned flags)
{
	return UCS_ERR_UNSUPPORTED;
}

static UCS_CLASS_DECLARE_DELETE_FUNC(uct_sctp_dpdk_iface_t, uct_iface_t);

static uct_iface_ops_t uct_sctp_dpdk_iface_ops = {
	.ep_am_short = uct_sctp_dpdk_ep_am_short,
	.ep_am_bcopy = uct_sctp_dpdk_ep_am_bcopy,
	.ep_pending_add = (uct_ep_pending_add_func_t)
		ucs_empty_function_return_unsupported,
	.ep_pending_purge = (uct_ep_pending_purge_func_t)ucs_empty_function,
	.ep_flush = uct_base_ep_flush,
	.ep_fence = uct_base_ep_fence,
	.ep_create =
		(uct_ep_create_func_t)ucs_empty_function_return_unsupported,
	.ep_destroy = (uct_ep_destroy_func_t)ucs_empty_function,
	.iface_flush = uct_base_iface_flush,
	.iface_fence = uct_base_iface_fence,
	.iface_progress_enable = uct_base_iface_progress_enable,
	.iface_progress_disable = uct_base_iface_progress_disable,
	.iface_progress =
		(uct_iface_progress_func_t)ucs_empty_function_return_zero,
	.iface_close = UCS_CLASS_DELETE_FUNC_NAME(uct_sctp_dpdk_iface_t),
	.iface_query = uct_sctp_dpdk_iface_query,
	.iface_get_address = (uct_iface_get_address_func_t)
		ucs_empty_function_return_success,
	.iface_get_device_address = (uct_iface_get_device_address_func_t)
		ucs_empty_function_return_success,
	.iface_is_reachable = (uct_iface_is_reachable_func_t)
		ucs_empty_function_return_zero_int,
};

static UCS_CLASS_INIT_FUNC(uct_sctp_dpdk_iface_t, uct_md_h md,
			   uct_worker_h worker,
			   const uct_iface_params_t *params,
			   const uct_iface_config_t *tl_config)
{
	const uct_sctp_dpdk_iface_config_t *config =
		ucs_derived_of(tl_config, uct_sctp_dpdk_iface_config_t);

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

	self->config.devargs = ucs_strdup(config->devargs, "sctp_dpdk devargs");
	if (self->config.devargs == NULL) {
		ucs_error("sctp_dpdk: failed to copy UCX_SCTP_DPDK_DEVARGS "
			  "(%zu bytes)",
			  strlen(config->devargs) + 1);
		return UCS_ERR_NO_MEMORY;
	}

	ucs_debug("sctp_dpdk: iface %p opened on %s, devargs '%s'", self,
		  params->mode.device.dev_name, self->config.devargs);
	return UCS_OK;
}

static UCS_CLASS_CLEANUP_FUNC(uct_sctp_dpdk_iface_t)
{
	/* ucp enables progress on every iface it opens; leaving the callback
	 * in the worker's queue after close is a use-after-free. */
	uct_base_iface_progress_disable(&self->super.super,
					UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
	ucs_free(self->config.devargs);
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
