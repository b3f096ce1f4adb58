/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sctp_dpdk_status.c - the one place where a negative errno of the dp_ and sg_
 * layers becomes a ucs_status_t (STYLE.md: ucx-tl speaks only
 * ucs_status_t).  -EAGAIN and -ENOBUFS are back-pressure
 * (UCS_ERR_NO_RESOURCE: the caller queues a pending request).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sctp_dpdk.h"

#include <ucs/debug/log.h>

#include <errno.h>

ucs_status_t sdp_status_from_errno(int err)
{
	switch (err) {
	case 0:
		return UCS_OK;
	case -EAGAIN:
	case -ENOBUFS:
		return UCS_ERR_NO_RESOURCE;
	case -EINPROGRESS:
		return UCS_INPROGRESS;
	case -EINVAL:
		return UCS_ERR_INVALID_PARAM;
	case -ENOMEM:
		return UCS_ERR_NO_MEMORY;
	case -ENODEV:
		return UCS_ERR_NO_DEVICE;
	case -EHOSTUNREACH:
	case -ENOTCONN:
		return UCS_ERR_UNREACHABLE;
	case -ETIMEDOUT:
		return UCS_ERR_TIMED_OUT;
	case -EMSGSIZE:
		return UCS_ERR_EXCEEDS_LIMIT;
	case -EADDRINUSE:
		return UCS_ERR_BUSY;
	case -EALREADY:
		return UCS_ERR_ALREADY_EXISTS;
	case -ENOSPC:
		return UCS_ERR_EXCEEDS_LIMIT;
	default:
		return UCS_ERR_IO_ERROR;
	}
}
