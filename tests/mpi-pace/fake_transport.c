/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fake_transport.c - stands in for libuct_sctp_dpdk.so in the mpi-pace
 * tests: exports the transport contract of sdp_pace_mpi.h and records
 * every rate applied, in order, in memory.
 *
 * Loaded with LD_PRELOAD like the real transport.  Tests reach the log
 * through dlsym(RTLD_DEFAULT, "sdp_fake_transport_log"), so a run without
 * the fake links and starts the same way.  With SDP_FAKE_TRANSPORT_TRACE=1
 * every set is also printed on stderr ("sdp_fake_transport: set <bps>"),
 * for callers that cannot reach the log (the Fortran test).  Rates above
 * SDP_FAKE_TRANSPORT_LINK_BPS (default 100G) are rejected with -EINVAL, as
 * the real transport rejects rates above the link rate.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SDP_PACE_NO_MPI
#include "sdp_pace_mpi.h"

#define FAKE_LOG_MAX 256
#define FAKE_LINK_DEFAULT_BPS UINT64_C(100000000000)

/* Exported for the tests (looked up with dlsym). */
size_t sdp_fake_transport_log(uint64_t *rates_bps, size_t max);
void sdp_fake_transport_log_clear(void);
void sdp_fake_transport_fail_next(unsigned int skip, int err);
size_t sdp_fake_transport_dest_log(uint64_t *rates_bps, size_t max);
/* The contract. */
int sdp_transport_set_rate_bps(uint64_t rate_bps);
uint64_t sdp_transport_get_rate_bps(void);
int sdp_transport_set_dest_default_rate_bps(uint64_t rate_bps);
uint64_t sdp_transport_get_dest_default_rate_bps(void);

static uint64_t fake_rate_bps;		    /* current rate, bit/s */
static uint64_t fake_log_bps[FAKE_LOG_MAX]; /* applied rates, in order */
static size_t fake_log_len;		    /* entries in fake_log_bps */
static int fake_fail_err;		    /* a set returns this if < 0 */
static unsigned int fake_fail_skip;	    /* successful sets before it */
static uint64_t fake_dest_bps;		    /* per-destination default */
static uint64_t fake_dest_log_bps[FAKE_LOG_MAX]; /* its sets, in order */
static size_t fake_dest_log_len;

int sdp_transport_set_rate_bps(uint64_t rate_bps)
{
	const char *link_text = getenv("SDP_FAKE_TRANSPORT_LINK_BPS");
	uint64_t link_bps = link_text != NULL ?
				    strtoull(link_text, NULL, 10) :
				    FAKE_LINK_DEFAULT_BPS;
	int err = fake_fail_err;

	if (err < 0 && fake_fail_skip == 0) {
		fake_fail_err = 0;
		return err;
	}
	if (err < 0)
		fake_fail_skip--;
	if (rate_bps > link_bps) {
		fprintf(stderr, "sdp_fake_transport: rate %" PRIu64 " bit/s "
			"above the link rate %" PRIu64 "\n", rate_bps, link_bps);
		return -EINVAL;
	}
	fake_rate_bps = rate_bps;
	if (fake_log_len < FAKE_LOG_MAX)
		fake_log_bps[fake_log_len++] = rate_bps;
	if (getenv("SDP_FAKE_TRANSPORT_TRACE") != NULL)
		fprintf(stderr, "sdp_fake_transport: set %" PRIu64 "\n",
			rate_bps);
	return 0;
}

uint64_t sdp_transport_get_rate_bps(void)
{
	return fake_rate_bps;
}

size_t sdp_fake_transport_log(uint64_t *rates_bps, size_t max)
{
	size_t n = fake_log_len < max ? fake_log_len : max;

	memcpy(rates_bps, fake_log_bps, n * sizeof(*rates_bps));
	return fake_log_len;
}

void sdp_fake_transport_log_clear(void)
{
	fake_log_len = 0;
	fake_dest_log_len = 0;
}

/* The per-destination default: logged apart from the total. */
int sdp_transport_set_dest_default_rate_bps(uint64_t rate_bps)
{
	fake_dest_bps = rate_bps;
	if (fake_dest_log_len < FAKE_LOG_MAX)
		fake_dest_log_bps[fake_dest_log_len++] = rate_bps;
	return 0;
}

uint64_t sdp_transport_get_dest_default_rate_bps(void)
{
	return fake_dest_bps;
}

size_t sdp_fake_transport_dest_log(uint64_t *rates_bps, size_t max)
{
	size_t n = fake_dest_log_len < max ? fake_dest_log_len : max;

	memcpy(rates_bps, fake_dest_log_bps, n * sizeof(*rates_bps));
	return fake_dest_log_len;
}

/* Let skip sets succeed, then fail one with err (a negative errno). */
void sdp_fake_transport_fail_next(unsigned int skip, int err)
{
	fake_fail_skip = skip;
	fake_fail_err = err;
}
