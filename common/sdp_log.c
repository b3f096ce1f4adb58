/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdp_log.c - the SDP_LOG front end: level filter, formatting into a bounded
 * buffer, and hand-off to the installed sink (stderr by default).
 */
#include <stdlib.h>
#include <string.h>

#include "sdp.h"

#define SDP_LOG_MSG_MAX 512

static const char *const comp_names[SDP_COMP_MAX] = {
	[SDP_COMP_DP] = "dp",
	[SDP_COMP_SCTP] = "sctp",
	[SDP_COMP_PACE] = "pace",
	[SDP_COMP_UCT] = "uct",
	[SDP_COMP_APP] = "app",
};

static const char *const level_names[] = {
	[SDP_LOG_ERR] = "error",
	[SDP_LOG_WARN] = "warn",
	[SDP_LOG_INFO] = "info",
	[SDP_LOG_DEBUG] = "debug",
};

static void stderr_sink(enum sdp_log_level level, enum sdp_log_comp comp,
			const char *msg)
{
	fprintf(stderr, "sdp.%s: %s: %s\n", sdp_log_comp_name(comp),
		level_names[level], msg);
}

static sdp_log_sink_t log_sink = stderr_sink;
static int log_level = -1; /* -1: not yet read from SDP_LOG_LEVEL */

void sdp_log_set_sink(sdp_log_sink_t sink)
{
	log_sink = sink != NULL ? sink : stderr_sink;
}

void sdp_log_set_level(enum sdp_log_level level)
{
	log_level = level;
}

enum sdp_log_level sdp_log_get_level(void)
{
	if (log_level < 0) {
		const char *env = getenv("SDP_LOG_LEVEL");
		int v = env != NULL ? atoi(env) : 0;

		log_level = (v >= SDP_LOG_ERR && v <= SDP_LOG_DEBUG) ?
				    v : SDP_LOG_INFO;
	}
	return (enum sdp_log_level)log_level;
}

const char *sdp_log_comp_name(enum sdp_log_comp comp)
{
	if ((unsigned int)comp >= SDP_COMP_MAX)
		return "?";
	return comp_names[comp];
}

void sdp_log(enum sdp_log_level level, enum sdp_log_comp comp,
	     const char *fmt, ...)
{
	char msg[SDP_LOG_MSG_MAX];
	va_list ap;

	if (level > sdp_log_get_level())
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_sink(level, comp, msg);
}

void sdp_assert_fail(const char *expr, const char *file, int line)
{
	fprintf(stderr, "sdp: assertion '%s' failed at %s:%d\n", expr, file,
		line);
	abort();
}
