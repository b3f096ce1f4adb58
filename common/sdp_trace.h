/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdp_trace.h - stage timestamps for latency traces.
 *
 * With meson -Dtrace=true every SDP_TRACE(stage, arg) point stores
 * (rdtsc, stage, arg) in a per-process ring; at exit the ring is written
 * to the file named by the environment variable SDP_TRACE (a '%p' in it
 * becomes the pid), one "tsc stage arg" line per event.  Without
 * SDP_TRACE set a traced build records nothing (one predictable branch
 * per point).  Without -Dtrace the points compile to nothing: per-packet
 * tracing never costs a normal build anything (STYLE.md 4).
 *
 * The TSC is invariant and shared by the cores of this kind of machine,
 * so the dumps of two processes merge into one timeline
 * (scripts/trace-merge.py).  One thread per process records (the poll
 * loop and the UCT calls run on it); the ring is not thread safe.
 */
#ifndef SDP_TRACE_H
#define SDP_TRACE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Send path, then receive path, in the order a message meets them. */
enum sdp_trace_stage {
	SDP_TR_UCT_SEND = 0,  /* UCT AM/RMA op entered (arg: bytes) */
	SDP_TR_SENDV,	      /* usrsctp_sendv returned (arg: bytes taken) */
	SDP_TR_CONN_OUTPUT,   /* usrsctp handed a packet out (arg: bytes) */
	SDP_TR_PORT_SEND,     /* framed, in the TX buffer (arg: bytes) */
	SDP_TR_TX_BURST,      /* rte_eth_tx_burst returned (arg: frames) */
	SDP_TR_RX_BURST,      /* rte_eth_rx_burst returned >0 (arg: frames) */
	SDP_TR_CONNINPUT,     /* usrsctp_conninput returned (arg: bytes) */
	SDP_TR_RECV,	      /* usrsctp_recvv returned data (arg: bytes) */
	SDP_TR_AM_HANDLER,    /* AM handler about to run (arg: bytes) */
	SDP_TR_STAGE_MAX,
};

#ifdef SDP_TRACE_ENABLED
#include <x86intrin.h>

struct sdp_trace_ev {
	uint64_t tsc;
	uint32_t stage; /* enum sdp_trace_stage */
	uint32_t arg;
};

extern struct sdp_trace_ev *sdp_trace_ring; /* NULL: not recording */
extern uint32_t sdp_trace_mask;		    /* ring size - 1 */
extern uint64_t sdp_trace_n;		    /* events recorded */

void sdp_trace_init(void);

static inline void sdp_trace(enum sdp_trace_stage stage, uint64_t arg)
{
	struct sdp_trace_ev *e;

	if (__builtin_expect(sdp_trace_ring == NULL, 1))
		return;
	e = &sdp_trace_ring[sdp_trace_n++ & sdp_trace_mask];
	e->tsc = __rdtsc();
	e->stage = (uint32_t)stage;
	e->arg = (uint32_t)arg;
}
#define SDP_TRACE(stage, arg) sdp_trace(SDP_TR_##stage, (uint64_t)(arg))
#else
#define SDP_TRACE(stage, arg) ((void)0)
#endif

#ifdef __cplusplus
}
#endif

#endif /* SDP_TRACE_H */
