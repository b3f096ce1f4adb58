/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_port.h - shared by the harnesses that need a real port: one EAL
 * (no hugepages) and one net_ring loopback port, opened once per fuzzing
 * process.  What the port transmits comes back on its RX queue.
 */
#ifndef FUZZ_PORT_H
#define FUZZ_PORT_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <rte_ethdev.h>

#include "dp_internal.h"

#define FUZZ_IP_BE RTE_BE32(0x0a000001) /* 10.0.0.1/16 */

static struct dp_port *fuzz_port;

static void fuzz_port_close(void)
{
	dp_stop(fuzz_port);
}

static void fuzz_port_open(const char *extra)
{
	/* static: ~48 KB (static ARP table); called once. */
	static struct dp_config cfg;
	char text[512];

	/* run.sh's job (SDP_FUZZ_JOB) in the prefix: a harness that is
	 * interrupted or crashes leaves its runtime dir (libFuzzer ends
	 * those with _Exit), and run.sh removes its job's on exit */
	const char *job = getenv("SDP_FUZZ_JOB");

	snprintf(text, sizeof(text),
		 "dev=net_ring0 ip=10.0.0.1/16 mem=256 link_wait_ms=2000 "
		 "rx_ring=1024 prefix=sdp-fuzz-%s%s%d %s", job ? job : "",
		 job ? "-" : "", (int)getpid(), extra);
	if (dp_config_parse(text, &cfg) != 0 || dp_start(&cfg, &fuzz_port) != 0) {
		fprintf(stderr, "fuzz: cannot open a net_ring port (%s): "
			"needs root for the EAL\n", text);
		exit(1);
	}
	atexit(fuzz_port_close);
}

/* Free whatever the port sent (it loops back to its RX queue). */
static void fuzz_drain_nic(void)
{
	struct rte_mbuf *pkts[DP_BURST];
	uint16_t k;

	while ((k = rte_eth_rx_burst(fuzz_port->port_id, 0, pkts,
				     DP_BURST)) > 0)
		rte_pktmbuf_free_bulk(pkts, k);
}

/* An mbuf from the port's pool holding @len bytes of @frame. */
static struct rte_mbuf *fuzz_mbuf(const uint8_t *frame, size_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(fuzz_port->pool);
	char *p;

	if (m == NULL)
		abort(); /* a leak in an earlier input */
	p = rte_pktmbuf_append(m, (uint16_t)len);
	if (p == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memcpy(p, frame, len);
	return m;
}

#endif /* FUZZ_PORT_H */
