/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sctp_dpdk_md.c - the `sctp_dpdk` UCT component and its memory domain.
 *
 * Registration enters the range into the process's registration table
 * (sctp_dpdk_rma.c), which every remote put/get is checked against; the
 * memh is the region's rkey {addr, length, key}, packed as is (24 bytes).
 * Nothing is pinned: the target copies from/to the memory itself.  The
 * component exposes exactly one md, named like the component, and one
 * device.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sctp_dpdk.h"
#include "sctp_dpdk_ucx_compat.h"

#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/sys/string.h>
#include <ucs/type/class.h>

#include <limits.h>
#include <string.h>

static ucs_config_field_t uct_sctp_dpdk_md_config_table[] = {
	{"", "", NULL, ucs_offsetof(uct_sctp_dpdk_md_config_t, super),
	 UCS_CONFIG_TYPE_TABLE(uct_md_config_table)},

	{NULL}};

void uct_sctp_dpdk_md_caps(uct_md_h md, uct_sctp_dpdk_md_caps_t *caps)
{
	caps->flags = UCT_MD_FLAG_REG | UCT_MD_FLAG_NEED_RKEY;
	caps->max_reg = ULONG_MAX;
	caps->mem_types = UCS_BIT(UCS_MEMORY_TYPE_HOST);
	caps->rkey_packed_size = sizeof(uct_sctp_dpdk_rkey_t);
	caps->reg_cost = ucs_linear_func_make(0, 0);
}

ucs_status_t uct_sctp_dpdk_md_reg(uct_md_h md, void *address, size_t length,
				  uct_mem_h *memh_p)
{
	uct_sctp_dpdk_rkey_t *memh;
	ucs_status_t status;

	memh = ucs_malloc(sizeof(*memh), "sctp_dpdk memh");
	if (memh == NULL) {
		ucs_error("sctp_dpdk: failed to allocate a memory handle");
		return UCS_ERR_NO_MEMORY;
	}
	status = uct_sctp_dpdk_rma_reg_add(address, length, memh);
	if (status != UCS_OK) {
		ucs_free(memh);
		return status;
	}
	*memh_p = memh;
	return UCS_OK;
}

static ucs_status_t
uct_sctp_dpdk_md_mem_dereg(uct_md_h md, const uct_md_mem_dereg_params_t *params)
{
	UCT_MD_MEM_DEREG_CHECK_PARAMS(params, 0);
	/* After this no remote access reaches the region (the table's write
	 * lock waits for copies in progress); then wait for GET replies
	 * usrsctp still reads from it by reference (sctp_dpdk_getzc.c). */
	uct_sctp_dpdk_rma_reg_remove(params->memh);
	uct_sctp_dpdk_getzc_dereg_wait(rte_be_to_cpu_64(
		((const uct_sctp_dpdk_rkey_t *)params->memh)->key));
	ucs_free(params->memh);
	return UCS_OK;
}

ucs_status_t uct_sctp_dpdk_md_pack(uct_mem_h memh, void *buffer)
{
	memcpy(buffer, memh, sizeof(uct_sctp_dpdk_rkey_t));
	return UCS_OK;
}

int uct_sctp_dpdk_rkey_cmp(uct_rkey_t a, uct_rkey_t b)
{
	const uct_sctp_dpdk_rkey_t *ka = (const uct_sctp_dpdk_rkey_t *)a;
	const uct_sctp_dpdk_rkey_t *kb = (const uct_sctp_dpdk_rkey_t *)b;

	return memcmp(ka, kb, sizeof(*ka));
}

static void uct_sctp_dpdk_md_close(uct_md_h md)
{
	ucs_free(ucs_derived_of(md, uct_sctp_dpdk_md_t));
}

static uct_md_ops_t uct_sctp_dpdk_md_ops = {
	.close = uct_sctp_dpdk_md_close,
	.mem_alloc = UCT_SCTP_DPDK_UNSUPPORTED(uct_md_mem_alloc_func_t),
	.mem_free = UCT_SCTP_DPDK_UNSUPPORTED(uct_md_mem_free_func_t),
	.mem_dereg = uct_sctp_dpdk_md_mem_dereg,
	UCT_SCTP_DPDK_COMPAT_MD_OPS,
	.detect_memory_type =
		UCT_SCTP_DPDK_UNSUPPORTED(uct_md_detect_memory_type_func_t),
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

ucs_status_t uct_sctp_dpdk_rkey_unpack(const void *rkey_buffer,
				       uct_rkey_t *rkey_p, void **handle_p)
{
	uct_sctp_dpdk_rkey_t *rkey;

	rkey = ucs_malloc(sizeof(*rkey), "sctp_dpdk rkey");
	if (rkey == NULL) {
		ucs_error("sctp_dpdk: failed to allocate an rkey");
		return UCS_ERR_NO_MEMORY;
	}
	memcpy(rkey, rkey_buffer, sizeof(*rkey));
	*rkey_p = (uintptr_t)rkey;
	*handle_p = rkey;
	return UCS_OK;
}

static ucs_status_t uct_sctp_dpdk_rkey_release(uct_component_t *component,
					       uct_rkey_t rkey, void *handle)
{
	ucs_free(handle);
	return UCS_OK;
}

/* One device per entry of UCX_SCTP_DPDK_DEVARGS (sdp0 when it is empty or
 * cannot be read: the iface open then says what is wrong). */
ucs_status_t uct_sctp_dpdk_query_devices(uct_md_h md,
					 uct_tl_device_resource_t **devices_p,
					 unsigned *num_devices_p)
{
	uct_tl_device_resource_t *devices;
	uct_iface_config_t *config;
	unsigned ndevs = 1, k;

	if (uct_md_iface_config_read(md, UCT_SCTP_DPDK_NAME, NULL, NULL,
				     &config) == UCS_OK) {
		ndevs = uct_sctp_dpdk_config_num_devs(ucs_derived_of(
			config, uct_sctp_dpdk_iface_config_t));
		uct_config_release(config);
	}
	if (ndevs > UCT_SCTP_DPDK_MAX_DEVS)
		ndevs = 1; /* refused with the reason at iface open */
	devices = ucs_calloc(ndevs, sizeof(*devices), "sctp_dpdk devices");
	if (devices == NULL) {
		ucs_error("sctp_dpdk: failed to allocate %u device resources",
			  ndevs);
		return UCS_ERR_NO_MEMORY;
	}
	for (k = 0; k < ndevs; k++) {
		ucs_snprintf_zero(devices[k].name, sizeof(devices[k].name),
				  UCT_SCTP_DPDK_DEV_PREFIX "%u", k);
		devices[k].type = UCT_DEVICE_TYPE_NET;
		devices[k].sys_device = UCS_SYS_DEVICE_ID_UNKNOWN;
	}
	*devices_p = devices;
	*num_devices_p = ndevs;
	return UCS_OK;
}

uct_component_t uct_sctp_dpdk_component = {
	.query_md_resources = uct_md_query_single_md_resource,
	.md_open = uct_sctp_dpdk_md_open,
	.cm_open = UCT_SCTP_DPDK_UNSUPPORTED(uct_component_cm_open_func_t),
	.rkey_ptr = UCT_SCTP_DPDK_UNSUPPORTED(uct_component_rkey_ptr_func_t),
	.rkey_release = uct_sctp_dpdk_rkey_release,
	UCT_SCTP_DPDK_COMPAT_COMPONENT_OPS
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
