/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdp_trace.c - the trace ring of sdp_trace.h: allocated from a constructor
 * when SDP_TRACE names a file, written there at exit.  Compiled only with
 * meson -Dtrace=true.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sdp.h"
#include "sdp_trace.h"

#define TRACE_RING_LOG2 21 /* 2 M events, 32 MiB */

struct sdp_trace_ev *sdp_trace_ring;
uint32_t sdp_trace_mask;
uint64_t sdp_trace_n;
static char trace_path[512];
static uint64_t start_tsc, start_ns; /* to calibrate the TSC at exit */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static const char *const stage_names[SDP_TR_STAGE_MAX] = {
	"uct_send", "sendv", "conn_output", "port_send", "tx_burst",
	"rx_burst", "conninput", "recv", "am_handler",
};

static void trace_dump(void)
{
	uint64_t first, i;
	FILE *f;

	if (sdp_trace_ring == NULL)
		return;
	f = fopen(trace_path, "w");
	if (f == NULL) {
		fprintf(stderr, "sdp_trace: cannot write %s: %m\n",
			trace_path);
		return;
	}
	/* first line: the TSC rate over the run, for the merger */
	fprintf(f, "# tsc_hz %.0f pid %d\n",
		(double)(__rdtsc() - start_tsc) * 1e9 /
			(double)(mono_ns() - start_ns),
		(int)getpid());
	first = sdp_trace_n > sdp_trace_mask + 1
			? sdp_trace_n - (sdp_trace_mask + 1)
			: 0;
	for (i = first; i < sdp_trace_n; i++) {
		const struct sdp_trace_ev *e =
			&sdp_trace_ring[i & sdp_trace_mask];

		fprintf(f, "%lu %s %u\n", (unsigned long)e->tsc,
			e->stage < SDP_TR_STAGE_MAX ? stage_names[e->stage]
						    : "?",
			e->arg);
	}
	fclose(f);
}

__attribute__((constructor)) void sdp_trace_init(void)
{
	const char *p = getenv("SDP_TRACE");
	size_t n = 0;

	if (p == NULL || *p == '\0' || sdp_trace_ring != NULL)
		return;
	/* '%p' -> pid: the two ranks of a job share the environment */
	for (; *p != '\0' && n + 12 < sizeof(trace_path); p++) {
		if (p[0] == '%' && p[1] == 'p') {
			n += (size_t)snprintf(trace_path + n,
					      sizeof(trace_path) - n, "%d",
					      (int)getpid());
			p++;
			continue;
		}
		trace_path[n++] = *p;
	}
	trace_path[n] = '\0';
	sdp_trace_ring = calloc((size_t)1 << TRACE_RING_LOG2,
				sizeof(*sdp_trace_ring));
	if (sdp_trace_ring == NULL)
		return;
	sdp_trace_mask = (1u << TRACE_RING_LOG2) - 1;
	start_tsc = __rdtsc();
	start_ns = mono_ns();
	atexit(trace_dump);
}
