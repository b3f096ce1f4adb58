/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sctp_dpdk.h - internal header of the UCT transport `sctp_dpdk`: the
 * component, its memory domain, and the interface, shared by the ucx-tl .c
 * files and the unit test (like UCX src/uct/tcp/tcp.h).
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
 */
#ifndef UCT_SCTP_DPDK_H
#define UCT_SCTP_DPDK_H

#include <uct/base/uct_iface.h>
#include <uct/base/uct_md.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Component, memory domain and transport name.  UCT_TL_NAME_MAX is 10, so
 * this 9-character name is the longest a transport can have. */
#define UCT_SCTP_DPDK_NAME "sctp_dpdk"

/* Environment prefix after "UCX_": UCX_SCTP_DPDK_DEVARGS, ... */
#define UCT_SCTP_DPDK_CONFIG_PREFIX "SCTP_DPDK_"

/* The single device: one DPDK port per process (see DESIGN.md). */
#define UCT_SCTP_DPDK_DEV_NAME "sdp0"

/* Placeholder performance figures until the data path measures its own. */
#define UCT_SCTP_DPDK_LATENCY_S 10e-6         /* one-way, seconds */
#define UCT_SCTP_DPDK_BANDWIDTH_BPS 1.25e9     /* bytes per second */
#define UCT_SCTP_DPDK_OVERHEAD_S 1e-6         /* per message, seconds */
#define UCT_SCTP_DPDK_AM_MAX_SHORT_BYTES 1024 /* < one SCTP DATA chunk */
#define UCT_SCTP_DPDK_AM_MAX_BCOPY_BYTES 8192

extern uct_component_t uct_sctp_dpdk_component;

typedef struct uct_sctp_dpdk_md_config {
	uct_md_config_t super;
} uct_sctp_dpdk_md_config_t;

typedef struct uct_sctp_dpdk_md {
	uct_md_t super;
} uct_sctp_dpdk_md_t;

/* Parsed from the environment by UCX; released after iface_open returns. */
typedef struct uct_sctp_dpdk_iface_config {
	uct_iface_config_t super;
	char *devargs; /* DPDK device string of the port; "" = unset */
} uct_sctp_dpdk_iface_config_t;

typedef struct uct_sctp_dpdk_iface {
	uct_base_iface_t super;
	struct {
		char *devargs; /* owned copy of the config value */
	} config;
} uct_sctp_dpdk_iface_t;

ucs_status_t uct_sctp_dpdk_query_devices(uct_md_h md,
					 uct_tl_device_resource_t **devices_p,
					 unsigned *num_devices_p);

#ifdef __cplusplus
}
#endif

#endif /* UCT_SCTP_DPDK_H */
