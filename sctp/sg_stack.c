/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sg_stack.c - usrsctp itself: one instance per process, initialised by the
 * first endpoint and shut down after the last.
 *
 * usrsctp_init_nothreads: no timer or receive threads (one iterator thread
 * remains inside usrsctp); timers advance only when sg_stack_timers() calls
 * usrsctp_handle_timers() with the milliseconds elapsed since the previous
 * call, measured in TSC cycles and carried over so no time is lost to
 * rounding.  The caller's poll loop is usrsctp's clock.
 *
 * CRC32c: usrsctp_enable_crc32c_offload() makes usrsctp neither compute nor
 * verify the SCTP checksum.  The dataplane does both (dp_port_send fills it,
 * dp_port_poll drops packets whose CRC is wrong before delivery), so every
 * packet reaching usrsctp_conninput has already been checked once.
 *
 * Invariant: every usrsctp call of the process runs on one thread.  The
 * one exception: usrsctp_conn_chain_free (usrsctp-patches/0004), from the
 * free callback of a chained TX mbuf, runs wherever the dataplane frees
 * it (a lane's thread too): m_freem, whose cluster reference counts are
 * atomic and whose memory is malloc's (SCTP_SIMPLE_ALLOCATOR).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <usrsctp.h>

#include "sg_internal.h"

#ifndef USRSCTP_HAVE_CONN_OUTPUT_ALLOC
#error "usrsctp lacks usrsctp_set_conn_output_alloc (scripts/usrsctp-patches/0002-conn-output-alloc.patch): run scripts/setup.sh, which rebuilds usrsctp with the project's patches"
#endif
#ifndef USRSCTP_HAVE_CONNINPUT_EXT
#error "usrsctp lacks usrsctp_conninput_ext (scripts/usrsctp-patches/0003-conninput-ext.patch): run scripts/setup.sh, which rebuilds usrsctp with the project's patches"
#endif
#ifndef USRSCTP_HAVE_CONN_OUTPUT_CHAIN
#error "usrsctp lacks usrsctp_set_conn_output_chain (scripts/usrsctp-patches/0004-conn-output-chain.patch): run scripts/setup.sh, which rebuilds usrsctp with the project's patches"
#endif
#ifndef USRSCTP_HAVE_TX_CLUSTER_BYTES
#error "usrsctp lacks usrsctp_set_tx_cluster_bytes (scripts/usrsctp-patches/0005-tx-cluster-bytes.patch): run scripts/setup.sh, which rebuilds usrsctp with the project's patches"
#endif
#ifndef USRSCTP_HAVE_SENDV_EXT
#error "usrsctp lacks usrsctp_sendv_ext (scripts/usrsctp-patches/0006-sendv-ext-zcopy.patch): run scripts/setup.sh, which rebuilds usrsctp with the project's patches"
#endif
#ifndef USRSCTP_HAVE_ZCOPY_DETACH
#error "usrsctp lacks usrsctp_zcopy_detach (scripts/usrsctp-patches/0009-zcopy-detach.patch): run scripts/setup.sh, which rebuilds usrsctp with the project's patches"
#endif

static unsigned int stack_refs;
static uint64_t tsc_per_ms;
static uint64_t timer_last_tsc;

/* usrsctp's debug printf (only with its SCTP_DEBUG build and debug_on). */
static void debug_printf(const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	SDP_LOG(DEBUG, SCTP, "usrsctp: %s", buf);
}

int sg_stack_get(void)
{
	if (stack_refs++ > 0)
		return 0;
	/* UDP port 0: usrsctp opens no kernel sockets; AF_CONN only. */
	usrsctp_init_nothreads(0, sg_conn_output, debug_printf);
	usrsctp_enable_crc32c_offload();
	/* Each packet is written into an mbuf of ours (no copy in
	 * sg_conn_output): scripts/usrsctp-patches/0002. */
	usrsctp_set_conn_output_alloc(sg_conn_output_alloc,
				      sg_conn_output_free);
	/* Packets of tx_chain_min bytes or more leave as usrsctp's own
	 * chain, without that copy: usrsctp-patches/0004. */
	usrsctp_set_conn_output_chain(sg_conn_output_chain);
	/* Explicit congestion notification needs the IP header's ECN bits,
	 * which the dataplane does not carry up. */
	usrsctp_sysctl_set_sctp_ecn_enable(0);
	tsc_per_ms = dp_tsc_hz() / 1000;
	if (tsc_per_ms == 0)
		tsc_per_ms = 1;
	timer_last_tsc = dp_tsc();
	SDP_LOG(INFO, SCTP, "usrsctp up: threadless, timers from the poll "
		"loop, crc32c by the dataplane");
	return 0;
}

void sg_stack_put(void)
{
	int i;

	if (stack_refs == 0) {
		SDP_LOG(WARN, SCTP, "usrsctp reference dropped twice");
		return;
	}
	if (--stack_refs > 0)
		return;
	/* Closed sockets are freed by usrsctp's timers: drive them until
	 * usrsctp_finish succeeds (bounded: 2 s of usrsctp time). */
	for (i = 0; i < 200; i++) {
		if (usrsctp_finish() == 0) {
			SDP_LOG(DEBUG, SCTP, "usrsctp down");
			if (sg_rx_ext_held_now() != 0)
				SDP_LOG(WARN, SCTP, "usrsctp down but %u "
					"received mbufs not given back "
					"(rx_ext): a leak in usrsctp; "
					"rx_ext=0 avoids it",
					sg_rx_ext_held_now());
			return;
		}
		usrsctp_handle_timers(10);
	}
	SDP_LOG(WARN, SCTP, "usrsctp_finish did not complete; usrsctp state "
		"stays allocated until exit");
}

unsigned int sg_stack_timers(uint64_t now_tsc)
{
	uint64_t ms;

	if (now_tsc - timer_last_tsc < tsc_per_ms)
		return 0;
	ms = (now_tsc - timer_last_tsc) / tsc_per_ms;
	timer_last_tsc += ms * tsc_per_ms;
	usrsctp_handle_timers(ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms);
	return 1;
}

int sg_stack_stats_json(char *buf, size_t len)
{
	struct sctpstat us;

	memset(&us, 0, sizeof(us));
	usrsctp_get_stat(&us);
	return snprintf(buf, len, "\"data_chunks_out\": %u, "
			"\"data_chunks_in\": %u, \"retrans_chunks\": %u, "
			"\"fast_retrans_chunks\": %u, \"t3_timeouts\": %u, "
			"\"dup_chunks_in\": %u, \"sacks_out\": %u, "
			"\"sacks_in\": %u, \"t3_window_probes\": %u",
			us.sctps_senddata, us.sctps_recvdata,
			us.sctps_sendretransdata, us.sctps_sendfastretrans,
			us.sctps_timodata, us.sctps_recvdupdata,
			us.sctps_sendsacks, us.sctps_recvsacks,
			us.sctps_timowindowprobe);
}
