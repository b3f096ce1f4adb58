/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sctp_dpdk_ucx_compat.h - the differences of UCX's internal UCT API
 * between the releases the transport is built with (UCX 1.13 to 1.18 and
 * 1.23, checked by ucx-tl/meson.build), in one place.  The transport implements
 * each operation once, in a release-neutral form (declared at the end of
 * sctp_dpdk.h); this header adapts it to the release's function types and
 * supplies the designated initializers of the ops tables that differ.
 * Nothing else in ucx-tl/ tests the UCX version.
 *
 * UCT_SCTP_DPDK_UCX_VERSION is major * 100 + minor of the UCX meson found
 * (pkg-config ucx-uct), passed by ucx-tl/meson.build.  The releases built
 * and tested are 1.13 to 1.18 and 1.23; 1.19 to 1.22 are refused (by
 * meson and below): their changes are known from their sources and
 * written down here, but nothing was compiled or run against them.
 *
 * What changed, from the sources of each release (src/uct/base/uct_md.h,
 * uct_iface.h, uct_component.h, api/v2/uct_v2.h):
 *
 *   1.14  ucs_mpool_init takes a ucs_mpool_params_t; md query fills
 *         uct_md_attr_v2_t (flat, no .cap) instead of uct_md_attr_t,
 *         with cache_mem_types (UCP caches our registrations, as 1.13's
 *         UCP did; left 0, UCP 1.18's rendezvous aborts on its
 *         cache_md_map assertion); mem_reg takes uct_md_mem_reg_params_t instead of
 *         flags; uct_md_ops_t gains mem_attach; internal ops gain
 *         ep_connect_to_ep_v2.
 *   1.15  internal ops gain iface_is_reachable_v2, which the public
 *         uct_iface_is_reachable_v2 calls: mandatory (UCX's
 *         uct_base_iface_is_reachable_v2 wraps the v1 op there).
 *   1.16  ...and the v1 op becomes UCX's uct_base_iface_is_reachable,
 *         a wrapper of the v2 op, which is the transport's own.
 *         Internal ops gain ep_is_connected (UCP's wireup asks whether a
 *         lane's ep already reaches an address); the component gains
 *         rkey_compare; mkey_pack gets the region's address and length;
 *         uct_md_ops_t loses is_sockaddr_accessible; uct_md_attr_v2_t
 *         gains reg_alignment (must not stay 0: UCP aligns registrations
 *         down to it).
 *   1.17  uct_md_base_md_query() fills the md attributes' defaults.
 *   1.18  nothing the transport uses.
 *   1.19  the component's rkey_unpack takes a uct_rkey_unpack_params_t
 *         (the system device to unpack on; ours ignores it); md mem_alloc
 *         takes a sys_dev (ours is the "unsupported" stub, cast);
 *         ucs/sys/stubs.h's stubs get a (void) prototype
 *         (UCT_SCTP_DPDK_UNSUPPORTED below).
 *   1.20  internal ops gain ep_get_device_ep (UCP's device API, only for
 *         ifaces with UCT_IFACE_FLAG_DEVICE_EP: "unsupported" here), and
 *         iface_query_v2 and iface_mem_element_pack, both gone in 1.21.
 *   1.21  internal op ep_invalidate takes a uct_ep_invalidate_params_t
 *         instead of flags (no field is defined yet); uct_md_ops_t gains
 *         mem_elem_pack/mem_elem_release (device API: "unsupported").
 *   1.22  internal ops regain iface_query_v2, which uct_iface_query_v2()
 *         calls unconditionally (UCP's protocol selection asks every
 *         lane): UCX's uct_iface_base_query_v2 (no SGL, no tokens), as
 *         UCX's tcp; and ep_put_sgl_zcopy (used only when
 *         max_put_sgl_zcopy_count, 0 from that query, says so).  md
 *         mem_query fills a uct_md_mem_attr_v2_t (ours stays unset, as
 *         before: UCP queries only memory-type-detecting and dmabuf mds).
 *         The module loader opens UCX_PLUGIN_PATH (ucx-tl/meson.build).
 *   1.23  internal ops gain ep_get_sgl_zcopy and ep_outstanding_purge
 *         (uct_base_iface_t's constructor asserts the latter is set;
 *         "unsupported", as UCX's tcp, mm and self).  uct_iface_attr_t
 *         gains ctl_device (uct_base_iface_query clears it: no device).
 */
#ifndef UCT_SCTP_DPDK_UCX_COMPAT_H
#define UCT_SCTP_DPDK_UCX_COMPAT_H

#include "sctp_dpdk.h"

#include <ucs/datastruct/mpool.h>
#include <ucs/type/status.h>
#include <uct/base/uct_component.h>
#include <uct/base/uct_iface.h>
#include <uct/base/uct_md.h>

#include <stdio.h>
#include <string.h>

#ifndef UCT_SCTP_DPDK_UCX_VERSION
#error "UCT_SCTP_DPDK_UCX_VERSION is not defined: build ucx-tl/ with meson (ucx-tl/meson.build passes it)"
#endif

#define UCT_SCTP_DPDK_UCX_AT_LEAST(_major, _minor)                             \
	(UCT_SCTP_DPDK_UCX_VERSION >= (_major) * 100 + (_minor))

/* UCX's "unsupported" stub as an op of type _type.  From 1.19 ucs/sys/stubs.h
 * declares the stubs with a (void) prototype, and GCC's -Wcast-function-type
 * (-Wextra) rejects a cast between two prototyped function types unless it
 * goes through void (*)(void), which GCC takes as matching any function.
 * UCX's own transports call the stubs through such casts. */
#define UCT_SCTP_DPDK_UNSUPPORTED(_type)                                       \
	((_type)(void (*)(void))ucs_empty_function_return_unsupported)

#if !UCT_SCTP_DPDK_UCX_AT_LEAST(1, 13) || UCT_SCTP_DPDK_UCX_AT_LEAST(1, 24) || \
	(UCT_SCTP_DPDK_UCX_AT_LEAST(1, 19) && !UCT_SCTP_DPDK_UCX_AT_LEAST(1, 23))
#error "sctp_dpdk_ucx_compat.h is tested with UCX 1.13 to 1.18 and 1.23 only"
#endif

/* ---- memory pools ----------------------------------------------------- */

/* A pool of max_elems elements of elem_size bytes, element + align_offset
 * aligned to alignment, grown elems_per_chunk at a time; no private area. */
static inline ucs_status_t
uct_sctp_dpdk_compat_mpool_init(ucs_mpool_t *mp, size_t elem_size,
				size_t align_offset, size_t alignment,
				unsigned elems_per_chunk, unsigned max_elems,
				ucs_mpool_ops_t *ops, const char *name)
{
#if UCT_SCTP_DPDK_UCX_AT_LEAST(1, 14)
	ucs_mpool_params_t params;

	ucs_mpool_params_reset(&params);
	params.elem_size = elem_size;
	params.align_offset = align_offset;
	params.alignment = alignment;
	params.elems_per_chunk = elems_per_chunk;
	params.max_elems = max_elems;
	params.ops = ops;
	params.name = name;
	return ucs_mpool_init(&params, mp);
#else
	return ucs_mpool_init(mp, 0, elem_size, align_offset, alignment,
			      elems_per_chunk, max_elems, ops, name);
#endif
}

/* ---- memory domain ---------------------------------------------------- */

#if UCT_SCTP_DPDK_UCX_AT_LEAST(1, 14)
typedef uct_md_attr_v2_t uct_sctp_dpdk_md_attr_t;
#define UCT_SCTP_DPDK_MD_CAP(_attr) (*(_attr))
#else
typedef uct_md_attr_t uct_sctp_dpdk_md_attr_t;
#define UCT_SCTP_DPDK_MD_CAP(_attr) ((_attr)->cap)
#endif

static inline ucs_status_t
uct_sctp_dpdk_compat_md_query(uct_md_h md, uct_sctp_dpdk_md_attr_t *attr)
{
	uct_sctp_dpdk_md_caps_t caps;

#if UCT_SCTP_DPDK_UCX_AT_LEAST(1, 17)
	uct_md_base_md_query(attr);
#endif
	uct_sctp_dpdk_md_caps(md, &caps);
	UCT_SCTP_DPDK_MD_CAP(attr).flags = caps.flags;
	UCT_SCTP_DPDK_MD_CAP(attr).max_alloc = 0;
	UCT_SCTP_DPDK_MD_CAP(attr).max_reg = caps.max_reg;
	UCT_SCTP_DPDK_MD_CAP(attr).reg_mem_types = caps.mem_types;
	UCT_SCTP_DPDK_MD_CAP(attr).alloc_mem_types = 0;
	UCT_SCTP_DPDK_MD_CAP(attr).access_mem_types = caps.mem_types;
	UCT_SCTP_DPDK_MD_CAP(attr).detect_mem_types = 0;
	attr->rkey_packed_size = caps.rkey_packed_size;
	attr->reg_cost = caps.reg_cost;
	memset(&attr->local_cpus, 0xff, sizeof(attr->local_cpus));
#if UCT_SCTP_DPDK_UCX_AT_LEAST(1, 14)
	/* UCP caches our registrations (its rcache, as 1.13's UCP always
	 * did); 1.18's datatype iterator asserts that every md it registers
	 * with says so (cache_md_map, datatype_iter.inl). */
	attr->cache_mem_types = caps.mem_types;
#endif
#if UCT_SCTP_DPDK_UCX_AT_LEAST(1, 16)
	attr->reg_alignment = 1;
#endif
	return UCS_OK;
}

#if UCT_SCTP_DPDK_UCX_AT_LEAST(1, 14)
static inline ucs_status_t
uct_sctp_dpdk_compat_mem_reg(uct_md_h md, void *address, size_t length,
			     const uct_md_mem_reg_params_t *params,
			     uct_mem_h *memh_p)
{
	return uct_sctp_dpdk_md_reg(md, address, length, memh_p);
}
#else
static inline ucs_status_t
uct_sctp_dpdk_compat_mem_reg(uct_md_h md, void *address, size_t length,
			     unsigned flags, uct_mem_h *memh_p)
{
	return uct_sctp_dpdk_md_reg(md, address, length, memh_p);
}
#endif

#if UCT_SCTP_DPDK_UCX_AT_LEAST(1, 16)
static inline ucs_status_t
uct_sctp_dpdk_compat_mkey_pack(uct_md_h md, uct_mem_h memh, void *address,
			       size_t length,
			       const uct_md_mkey_pack_params_t *params,
			       void *buffer)
{
	return uct_sctp_dpdk_md_pack(memh, buffer);
}
#else
static inline ucs_status_t
uct_sctp_dpdk_compat_mkey_pack(uct_md_h md, uct_mem_h memh,
			       const uct_md_mkey_pack_params_t *params,
			       void *buffer)
{
	return uct_sctp_dpdk_md_pack(memh, buffer);
}
#endif

/* The uct_md_ops_t members whose type or presence differs. */
#if UCT_SCTP_DPDK_UCX_AT_LEAST(1, 21)
#define UCT_SCTP_DPDK_COMPAT_MD_OPS                                            \
	.query = uct_sctp_dpdk_compat_md_query,                                \
	.mem_reg = uct_sctp_dpdk_compat_mem_reg,                               \
	.mkey_pack = uct_sctp_dpdk_compat_mkey_pack,                           \
	.mem_attach = UCT_SCTP_DPDK_UNSUPPORTED(uct_md_mem_attach_func_t),     \
	.mem_elem_pack =                                                       \
		UCT_SCTP_DPDK_UNSUPPORTED(uct_md_mem_elem_pack_func_t),        \
	.mem_elem_release = (uct_md_mem_elem_release_func_t)                   \
		ucs_empty_function
#elif UCT_SCTP_DPDK_UCX_AT_LEAST(1, 16)
#define UCT_SCTP_DPDK_COMPAT_MD_OPS                                            \
	.query = uct_sctp_dpdk_compat_md_query,                                \
	.mem_reg = uct_sctp_dpdk_compat_mem_reg,                               \
	.mkey_pack = uct_sctp_dpdk_compat_mkey_pack,                           \
	.mem_attach = UCT_SCTP_DPDK_UNSUPPORTED(uct_md_mem_attach_func_t)
#elif UCT_SCTP_DPDK_UCX_AT_LEAST(1, 14)
#define UCT_SCTP_DPDK_COMPAT_MD_OPS                                            \
	.query = uct_sctp_dpdk_compat_md_query,                                \
	.mem_reg = uct_sctp_dpdk_compat_mem_reg,                               \
	.mkey_pack = uct_sctp_dpdk_compat_mkey_pack,                           \
	.mem_attach = UCT_SCTP_DPDK_UNSUPPORTED(uct_md_mem_attach_func_t),     \
	.is_sockaddr_accessible = (uct_md_is_sockaddr_accessible_func_t)       \
		ucs_empty_function_return_zero_int
#else
#define UCT_SCTP_DPDK_COMPAT_MD_OPS                                            \
	.query = uct_sctp_dpdk_compat_md_query,                                \
	.mem_reg = uct_sctp_dpdk_compat_mem_reg,                               \
	.mkey_pack = uct_sctp_dpdk_compat_mkey_pack,                           \
	.is_sockaddr_accessible = (uct_md_is_sockaddr_accessible_func_t)       \
		ucs_empty_function_return_zero_int
#endif

/* The uct_component_t members that differ.  rkey_unpack: the params
 * (1.19+) name a system device to unpack on; our rkeys are plain
 * {addr, length, key} copies, the same on any device. */
#if UCT_SCTP_DPDK_UCX_AT_LEAST(1, 19)
static inline ucs_status_t
uct_sctp_dpdk_compat_rkey_unpack(uct_component_t *component,
				 const void *rkey_buffer,
				 const uct_rkey_unpack_params_t *params,
				 uct_rkey_t *rkey_p, void **handle_p)
{
	return uct_sctp_dpdk_rkey_unpack(rkey_buffer, rkey_p, handle_p);
}
#else
static inline ucs_status_t
uct_sctp_dpdk_compat_rkey_unpack(uct_component_t *component,
				 const void *rkey_buffer, uct_rkey_t *rkey_p,
				 void **handle_p)
{
	return uct_sctp_dpdk_rkey_unpack(rkey_buffer, rkey_p, handle_p);
}
#endif

/* rkey_compare (1.16+): two unpacked rkeys are equal when their {addr,
 * length, key} are (uct_base_rkey_compare compares the rkey handles,
 * which are our unpacked copies' addresses: not that). */
#if UCT_SCTP_DPDK_UCX_AT_LEAST(1, 16)
static inline ucs_status_t
uct_sctp_dpdk_compat_rkey_compare(uct_component_t *component, uct_rkey_t rkey1,
				  uct_rkey_t rkey2,
				  const uct_rkey_compare_params_t *params,
				  int *result)
{
	if (params->field_mask != 0 || result == NULL)
		return UCS_ERR_INVALID_PARAM;
	*result = uct_sctp_dpdk_rkey_cmp(rkey1, rkey2);
	return UCS_OK;
}
#define UCT_SCTP_DPDK_COMPAT_COMPONENT_OPS                                     \
	.rkey_unpack = uct_sctp_dpdk_compat_rkey_unpack,                       \
	.rkey_compare = uct_sctp_dpdk_compat_rkey_compare,
#else
#define UCT_SCTP_DPDK_COMPAT_COMPONENT_OPS                                     \
	.rkey_unpack = uct_sctp_dpdk_compat_rkey_unpack,
#endif

/* ---- interface -------------------------------------------------------- */

/* 1.16+: the public iface_is_reachable op is UCX's wrapper of the
 * internal v2 op, which is ours.  1.15: the v1 op is ours and UCX's
 * uct_base_iface_is_reachable_v2 wraps it.  1.13/1.14: only the v1 op. */
#if UCT_SCTP_DPDK_UCX_AT_LEAST(1, 16)
static inline int
uct_sctp_dpdk_compat_is_reachable_v2(const uct_iface_h tl_iface,
				     const uct_iface_is_reachable_params_t *params)
{
	if (!uct_iface_is_reachable_params_addrs_valid(params))
		return 0;
	if (!uct_sctp_dpdk_iface_reachable(tl_iface, params->device_addr,
					   params->iface_addr)) {
		if ((params->field_mask &
		     UCT_IFACE_IS_REACHABLE_FIELD_INFO_STRING) &&
		    params->info_string != NULL &&
		    (params->field_mask &
		     UCT_IFACE_IS_REACHABLE_FIELD_INFO_STRING_LENGTH) &&
		    params->info_string_length > 0)
			snprintf(params->info_string,
				 params->info_string_length,
				 "not on the port's subnet, or the "
				 "UCX_SCTP_DPDK_* settings both ends must "
				 "share differ");
		return 0;
	}
	return uct_iface_scope_is_reachable(tl_iface, params);
}
#define UCT_SCTP_DPDK_COMPAT_IFACE_IS_REACHABLE uct_base_iface_is_reachable
#else
#define UCT_SCTP_DPDK_COMPAT_IFACE_IS_REACHABLE uct_sctp_dpdk_iface_reachable
#endif

#if UCT_SCTP_DPDK_UCX_AT_LEAST(1, 16)
static inline int
uct_sctp_dpdk_compat_ep_is_connected(const uct_ep_h tl_ep,
				     const uct_ep_is_connected_params_t *params)
{
	const uint64_t need = UCT_EP_IS_CONNECTED_FIELD_DEVICE_ADDR |
			      UCT_EP_IS_CONNECTED_FIELD_IFACE_ADDR;

	if ((params->field_mask & need) != need)
		return 0;
	return uct_sctp_dpdk_ep_connected_to(tl_ep, params->device_addr,
					     params->iface_addr);
}
#endif

/* ep_invalidate: flags before 1.21, a params struct (no field defined)
 * from 1.21; neither asks for anything but the invalidation. */
#if UCT_SCTP_DPDK_UCX_AT_LEAST(1, 21)
static inline ucs_status_t
uct_sctp_dpdk_compat_ep_invalidate(uct_ep_h tl_ep,
				   const uct_ep_invalidate_params_t *params)
{
	return uct_sctp_dpdk_ep_invalidate(tl_ep);
}
#else
static inline ucs_status_t uct_sctp_dpdk_compat_ep_invalidate(uct_ep_h tl_ep,
							      unsigned flags)
{
	return uct_sctp_dpdk_ep_invalidate(tl_ep);
}
#endif

/* The uct_iface_internal_ops_t members that differ (connect-to-iface
 * only: no ep addresses, so no ep_connect_to_ep_v2; no device API, SGL
 * or outstanding-operation purge: "unsupported"). */
#if UCT_SCTP_DPDK_UCX_AT_LEAST(1, 23)
#define UCT_SCTP_DPDK_COMPAT_INTERNAL_OPS                                      \
	.iface_query_v2 = uct_iface_base_query_v2,                             \
	.ep_invalidate = uct_sctp_dpdk_compat_ep_invalidate,                   \
	.ep_connect_to_ep_v2 =                                                 \
		UCT_SCTP_DPDK_UNSUPPORTED(uct_ep_connect_to_ep_v2_func_t),     \
	.iface_is_reachable_v2 = uct_sctp_dpdk_compat_is_reachable_v2,         \
	.ep_is_connected = uct_sctp_dpdk_compat_ep_is_connected,               \
	.ep_get_device_ep =                                                    \
		UCT_SCTP_DPDK_UNSUPPORTED(uct_ep_get_device_ep_func_t),        \
	.ep_put_sgl_zcopy =                                                    \
		UCT_SCTP_DPDK_UNSUPPORTED(uct_ep_put_sgl_zcopy_func_t),        \
	.ep_get_sgl_zcopy =                                                    \
		UCT_SCTP_DPDK_UNSUPPORTED(uct_ep_get_sgl_zcopy_func_t),        \
	.ep_outstanding_purge =                                                \
		UCT_SCTP_DPDK_UNSUPPORTED(uct_ep_outstanding_purge_func_t),
#elif UCT_SCTP_DPDK_UCX_AT_LEAST(1, 16)
#define UCT_SCTP_DPDK_COMPAT_INTERNAL_OPS                                      \
	.ep_invalidate = uct_sctp_dpdk_compat_ep_invalidate,                   \
	.ep_connect_to_ep_v2 =                                                 \
		UCT_SCTP_DPDK_UNSUPPORTED(uct_ep_connect_to_ep_v2_func_t),     \
	.iface_is_reachable_v2 = uct_sctp_dpdk_compat_is_reachable_v2,         \
	.ep_is_connected = uct_sctp_dpdk_compat_ep_is_connected,
#elif UCT_SCTP_DPDK_UCX_AT_LEAST(1, 15)
#define UCT_SCTP_DPDK_COMPAT_INTERNAL_OPS                                      \
	.ep_invalidate = uct_sctp_dpdk_compat_ep_invalidate,                   \
	.ep_connect_to_ep_v2 =                                                 \
		UCT_SCTP_DPDK_UNSUPPORTED(uct_ep_connect_to_ep_v2_func_t),     \
	.iface_is_reachable_v2 = uct_base_iface_is_reachable_v2,
#elif UCT_SCTP_DPDK_UCX_AT_LEAST(1, 14)
#define UCT_SCTP_DPDK_COMPAT_INTERNAL_OPS                                      \
	.ep_invalidate = uct_sctp_dpdk_compat_ep_invalidate,                   \
	.ep_connect_to_ep_v2 =                                                 \
		UCT_SCTP_DPDK_UNSUPPORTED(uct_ep_connect_to_ep_v2_func_t),
#else
#define UCT_SCTP_DPDK_COMPAT_INTERNAL_OPS                                      \
	.ep_invalidate = uct_sctp_dpdk_compat_ep_invalidate,
#endif

#endif /* UCT_SCTP_DPDK_UCX_COMPAT_H */
