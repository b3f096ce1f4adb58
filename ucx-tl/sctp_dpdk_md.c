/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sctp_dpdk_md.c - the `sctp_dpdk` UCT component and its memory domain.
 *
 * Memory is sent by copy (AM short/bcopy) for now, so registration is
 * emulated as in UCX's tcp md: a dummy handle, no rkey.  The component
 * exposes exactly one md, named like the component, and one device.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sctp_dpdk.h"

#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/type/class.h>

#include <limits.h>
#include <string.h>

/* Any non-NULL value: UCT_MEM_HANDLE_NULL means "registration failed". */
#define UCT_SCTP_DPDK_DUMMY_MEMH ((uct_mem_h)0xdeadbeef)

static ucs_config_field_t uct_sctp_dpdk_md_config_table[] = {
	{"", "", NULL, ucs_offsetof(uct_sctp_dpdk_md_config_t, super),
	 UCS_CONFIG_TYPE_TABLE(uct_md_config_table)},

	{NULL}};

static ucs_status_t uct_sctp_dpdk_md_query(uct_md_h md, uct_md_attr_t *attr)
{
	attr->cap.flags = UCT_MD_FLAG_REG;
	attr->cap.max_alloc = 0;
	attr->cap.max_reg = ULONG_MAX;
	attr->cap.reg_mem_types = UCS_BIT(UCS_MEMORY_TYPE_HOST);
	attr->cap.alloc_mem_types = 0;
	attr->cap.access_mem_types = UCS_BIT(UCS_MEMORY_TYPE_HOST);
	attr->cap.detect_mem_types = 0;
	attr->rkey_packed_size = 0;
	attr->reg_cost = ucs_linear_func_make(0, 0);
	memset(&attr->local_cpus, 0xff, sizeof(attr->local_cpus));
	return UCS_OK;
}

static ucs_status_t uct_sctp_dpdk_md_mem_reg(uct_md_h md, void *address,
					     size_t length, unsigned flags,
					     uct_mem_h *memh_p)
{
	*memh_p = UCT_SCTP_DPDK_DUMMY_MEMH;
	return UCS_OK;
}

static ucs_status_t
uct_sctp_dpdk_md_mem_dereg(uct_md_h md, const uct_md_mem_dereg_params_t *params)
{
	UCT_MD_MEM_DEREG_CHECK_PARAMS(params, 0);
	ucs_assert(params->memh == UCT_SCTP_DPDK_DUMMY_MEMH);
	return UCS_OK;
}

static void uct_sctp_dpdk_md_close(uct_md_h md)
{
	ucs_free(ucs_derived_of(md, uct_sctp_dpdk_md_t));
}

static uct_md_ops_t uct_sctp_dpdk_md_ops = {
	.close = uct_sctp_dpdk_md_close,
	.query = uct_sctp_dpdk_md_query,
	.mem_alloc = (uct_md_mem_alloc_func_t)ucs_empty_function_return_unsupported,
	.mem_free = (uct_md_mem_free_func_t)ucs_empty_function_return_unsupported,
	.mem_reg = uct_sctp_dpdk_md_mem_reg,
	.mem_dereg = uct_sctp_dpdk_md_mem_dereg,
	.mkey_pack = (uct_md_mkey_pack_func_t)ucs_empty_function_return_success,
	.is_sockaddr_accessible = (uct_md_is_sockaddr_accessible_func_t)
		ucs_empty_function_return_zero_int,
	.detect_memory_type = (uct_md_detect_memory_type_func_t)
		ucs_empty_function_return_unsupported,
};

static ucs_status_t uct_sctp_dpdk_md_open(uct_component_t *component,
					  const char *md_name,
					  const uct_md_config_t *md_config,
					  uct_md_h *md_p)
{
	uct_sctp_dpdk_md_t *md;

	md = ucs_malloc(sizeof(*md), "uct_sctp_dpdk_md_t");
	if (md == NULL) {
		ucs_error("sctp_dpdk: failed to allocate md (%zu bytes)",
			  sizeof(*md));
		return UCS_ERR_NO_MEMORY;
	}

	md->super.ops = &uct_sctp_dpdk_md_ops;
	md->super.component = &uct_sctp_dpdk_component;
	*md_p = &md->super;
	return UCS_OK;
}

static ucs_status_t uct_sctp_dpdk_rkey_unpack(uct_component_t *component,
					      const void *rkey_buffer,
					      uct_rkey_t *rkey_p,
					      void **handle_p)
{
	/* No remote access yet: every rkey is the null key. */
	*rkey_p = 0;
	*handle_p = NULL;
	return UCS_OK;
}

ucs_status_t uct_sctp_dpdk_query_devices(uct_md_h md,
					 uct_tl_device_resource_t **devices_p,
					 unsigned *num_devices_p)
{
	return uct_single_device_resource(md, UCT_SCTP_DPDK_DEV_NAME,
					  UCT_DEVICE_TYPE_NET,
					  UCS_SYS_DEVICE_ID_UNKNOWN, devices_p,
					  num_devices_p);
}

uct_component_t uct_sctp_dpdk_component = {
	.query_md_resources = uct_md_query_single_md_resource,
	.md_open = uct_sctp_dpdk_md_open,
	.cm_open = (uct_component_cm_open_func_t)
		ucs_empty_function_return_unsupported,
	.rkey_unpack = uct_sctp_dpdk_rkey_unpack,
	.rkey_ptr = (uct_component_rkey_ptr_func_t)
		ucs_empty_function_return_unsupported,
	.rkey_release = (uct_component_rkey_release_func_t)
		ucs_empty_function_return_success,
	.name = UCT_SCTP_DPDK_NAME,
	.md_config =
		{
			.name = "SCTP over DPDK memory domain",
			.prefix = UCT_SCTP_DPDK_CONFIG_PREFIX,
			.table = uct_sctp_dpdk_md_config_table,
			.size = sizeof(uct_sctp_dpdk_md_config_t),
		},
	.cm_config = UCS_CONFIG_EMPTY_GLOBAL_LIST_ENTRY,
	.tl_list = UCT_COMPONENT_TL_LIST_INITIALIZER(&uct_sctp_dpdk_component),
	.flags = 0,
	.md_vfs_init =
		(uct_component_md_vfs_init_func_t)ucs_empty_function,
};
