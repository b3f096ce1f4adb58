/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_arp.c - libFuzzer harness: ARP input on a real port
 * (dp_arp_port_input: parse, trust, learn, answer, release held packets),
 * interleaved with sends to unresolved neighbours (requests, held packets)
 * and timer ticks (retries, failures).
 *
 * Input: records.  Byte 0 of a record selects:
 *   0 raw frame:   length byte, then that many frame bytes
 *   1 built ARP:   7 bytes: opcode bit, sender host, target-is-us bit,
 *                  sender MAC == Ethernet source bit, MAC byte, two spare
 *   2 send:        1 byte host: a packet to 10.0.0.<host>
 *   3 tick:        1 byte: advance time by that many quarter retries
 * State is reset after every input.
 *
 * Invariants (abort otherwise): the cache's used count equals its non-free
 * slots and each entry is found from its home slot (probe runs intact);
 * holds and the TX buffer stay within their arrays; after the reset every
 * mbuf is back in the pool.
 */
#include <string.h>

#include "fuzz_port.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned int baseline;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_port_open("arp_retries=3");
	/* the small table of this build fills and evicts (arp_max= would
	 * let it grow past the records an input can make) */
	if (dp_arp_table_set_max(&fuzz_port->arp, DP_ARP_MAX_ENTRIES) != 0)
		abort();
	fuzz_drain_nic();
	baseline = rte_mempool_in_use_count(fuzz_port->pool);
	return 0;
}

static void check_table(const struct dp_arp_table *t)
{
	uint32_t i, used = 0;

	for (i = 0; i <= t->mask; i++) {
		const struct dp_arp_entry *e = &t->e[i];

		if (e->state == DP_ARP_FREE)
			continue;
		used++;
		if (dp_arp_find((struct dp_arp_table *)t, e->ip_be) != e)
			abort();
	}
	if (used != t->nb_used || used > t->max_entries ||
	    t->mask + 1 != DP_ARP_SIZE)
		abort();
}

/* No destination holds more than DP_ARP_HOLD_DEST frames. */
static int hold_per_dest_ok(const struct dp_port *port)
{
	uint32_t i, j, n;

	for (i = 0; i < port->nb_hold; i++) {
		for (j = 0, n = 0; j < port->nb_hold; j++)
			n += port->hold[j].ip_be == port->hold[i].ip_be;
		if (n > DP_ARP_HOLD_DEST)
			return 0;
	}
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dp_port *port = fuzz_port;
	uint64_t now = 1000000;
	size_t i = 0;

	while (i < size) {
		uint8_t op = data[i++] % 4;

		if (op == 0 && i < size) {
			size_t n = data[i++];

			if (n > size - i)
				n = size - i;
			struct rte_mbuf *m = fuzz_mbuf(data + i, n);
			i += n;
			if (m != NULL)
				dp_arp_port_input(port, m, now);
		} else if (op == 1 && size - i >= 7) {
			const uint8_t *r = data + i;
			struct rte_ether_addr sha = { { 0x02, 0, 0, 0, 1, r[4] } };
			struct rte_ether_addr src = sha;
			uint8_t f[DP_ARP_FRAME_LEN];
			struct rte_ether_hdr *eth = (struct rte_ether_hdr *)f;

			if (!(r[3] & 1))
				src.addr_bytes[5] ^= 0x55;
			dp_arp_build(f, (r[0] & 1) ? 2 : 1, &sha,
				     rte_cpu_to_be_32(0x0a000000u | r[1]),
				     &port->fctx.mac,
				     (r[2] & 1) ? FUZZ_IP_BE
						: rte_cpu_to_be_32(0x0a000000u |
								   r[6]));
			eth->src_addr = src;
			eth->dst_addr = port->fctx.mac;
			i += 7;
			struct rte_mbuf *m = fuzz_mbuf(f, sizeof(f));
			if (m != NULL)
				dp_arp_port_input(port, m, now);
		} else if (op == 2 && i < size) {
			struct rte_mbuf *m = rte_pktmbuf_alloc(port->pool);

			if (m == NULL)
				abort();
			rte_pktmbuf_append(m, 32);
			dp_port_send(port, rte_cpu_to_be_32(0x0a000000u |
							    data[i]),
				     DP_IPPROTO_EXP, m, now);
			i++;
		} else if (op == 3 && i < size) {
			now += (data[i++] + 1) * (port->arp.retry_tsc / 4 + 1);
			dp_arp_port_tick(port, now);
		} else {
			break;
		}
		if (port->nb_hold > DP_ARP_HOLD ||
		    port->txq[0].nb_tx > DP_BURST || !hold_per_dest_ok(port))
			abort();
		fuzz_drain_nic();
	}
	check_table(&port->arp);
	/* reset: everything the input left behind goes back to the pool */
	dp_port_flush(port, now);
	fuzz_drain_nic();
	dp_arp_port_release(port);
	{
		struct dp_arp_table old = port->arp;

		dp_arp_table_fini(&port->arp);
		if (dp_arp_table_init(&port->arp, old.ttl_tsc, old.retry_tsc,
				      old.max_tries) != 0 ||
		    dp_arp_table_set_max(&port->arp, old.max_entries) != 0)
			abort();
	}
	if (rte_mempool_in_use_count(port->pool) != baseline)
		abort();
	return 0;
}
