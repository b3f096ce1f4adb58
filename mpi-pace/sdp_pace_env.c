/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdp_pace_env.c - B, the bandwidth shared by the senders, from the
 * environment variable SDP_PACE_MAXRATE.
 *
 * SDP_PACE_MAXRATE mirrors GridMPI's YAMPI_PSP_MAXRATE but is in bit/s with
 * an SI suffix (pace_rate_parse(): "10G", "2500M"), like every rate in this
 * project, where YAMPI_PSP_MAXRATE is in Kbytes/s.  It is read and checked
 * once per process, so a bad value is reported once, and the B attribute
 * can point at a value that never changes.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>

#include "pace.h"
#include "sdp.h"
#include "sdp_pace_internal.h"

static pthread_once_t maxrate_once = PTHREAD_ONCE_INIT;
static uint64_t maxrate_bps; /* B, bit/s; valid if maxrate_err is 0 */
static int maxrate_err;	     /* MPI_SUCCESS or MPI_ERR_OTHER */

static void maxrate_parse(void)
{
	const char *text = getenv(SDP_PACE_ENV_MAXRATE);

	maxrate_err = MPI_ERR_OTHER;
	if (text == NULL) {
		SDP_LOG(ERR, PACE,
			"%s is not set: set it to the bandwidth B shared by "
			"the senders, in bit/s with an SI suffix (e.g. "
			"%s=10G); it mirrors YAMPI_PSP_MAXRATE, which is in "
			"Kbytes/s", SDP_PACE_ENV_MAXRATE, SDP_PACE_ENV_MAXRATE);
		return;
	}
	if (pace_rate_parse(text, &maxrate_bps) != 0) {
		/* pace_rate_parse() logged the accepted form */
		SDP_LOG(ERR, PACE, "%s='%s' is invalid; set it to B in bit/s, "
			"e.g. %s=10G", SDP_PACE_ENV_MAXRATE, text,
			SDP_PACE_ENV_MAXRATE);
		return;
	}
	if (maxrate_bps == 0) {
		SDP_LOG(ERR, PACE, "%s=0 is invalid: B must be at least 1 "
			"bit/s, e.g. %s=10G; unset the variable and do not "
			"call sdp_pace_set_limit() to run unpaced",
			SDP_PACE_ENV_MAXRATE, SDP_PACE_ENV_MAXRATE);
		return;
	}
	SDP_LOG(DEBUG, PACE, "%s: B is %" PRIu64 " bit/s",
		SDP_PACE_ENV_MAXRATE, maxrate_bps);
	maxrate_err = MPI_SUCCESS;
}

int sdp_pace_env_maxrate(uint64_t *rate_bps_p)
{
	pthread_once(&maxrate_once, maxrate_parse);
	if (maxrate_err == MPI_SUCCESS)
		*rate_bps_p = maxrate_bps;
	return maxrate_err;
}
