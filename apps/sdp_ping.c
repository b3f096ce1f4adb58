/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdp_ping.c - one endpoint of sdp-ping: raw IPv4 frames (protocol 253,
 * RFC 3692 experimental) between two dataplane ports, after ARP.
 *
 * The server echoes every probe back in the same mbuf (zero copy: the new
 * headers are prepended where the old ones were).  The client keeps up to
 * --window probes in flight, verifies every echoed payload byte (sequence-
 * derived pattern plus a CRC32c over the whole payload), and reports RTT
 * percentiles, packets per second and loss.  A probe not echoed within
 * --timeout-ms is counted lost; a probe whose payload is wrong is counted
 * corrupt (never "received").
 *
 *   client                               server
 *     PING(seq, tsc, pattern) ------------> echo as PONG
 *     <------------------------------------
 *     FIN ---------------------------------> print stats, FIN_ACK, exit
 *
 * Output: a human summary, or with --json one JSON object on stdout.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "dp.h"

#define MAGIC 0x53445050u /* "SDPP" */
#define T_PING 1
#define T_PONG 2
#define T_FIN 3
#define T_FIN_ACK 4
#define MAX_WINDOW 4096
/* Probe slots, indexed by seq: far more than the window, so a lost probe
 * waiting for its timeout does not stall the ones after it. */
#define NB_SLOTS 65536u

struct probe_hdr {
	uint32_t magic;
	uint32_t type;
	uint64_t seq;
	uint64_t tx_tsc;
	uint32_t len;	 /* payload bytes including this header */
	uint32_t crc;	 /* CRC32c of the payload with crc = 0 */
} __attribute__((packed));

struct opts {
	const char *dp;
	uint32_t peer_ip_be;
	bool server;
	bool json;
	uint64_t count;
	uint32_t size;
	uint32_t window;
	uint32_t timeout_ms;
	uint32_t idle_exit_ms;
	bool reflector;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sdp-ping-ep --dp 'dev=... ip=...' (--server | --peer IP)"
		" [options]\n"
		"  --server          echo probes until FIN or --idle-exit-ms\n"
		"  --peer IP         send probes to IP (client)\n"
		"  --count N         probes to send (default 10000)\n"
		"  --size B          payload bytes, 32..MTU-20 (default 64)\n"
		"  --window W        probes in flight, 1..%d (default 1: "
		"ping-pong)\n"
		"  --timeout-ms T    a probe is lost after T ms (default 1000)\n"
		"  --idle-exit-ms T  server: exit after T ms without probes "
		"(default 60000)\n"
		"  --reflector       client: the peer is a plain reflector that "
		"swaps addresses\n"
		"                    but keeps the probe type (e.g. dpdk-testpmd "
		"--forward-mode=5tswap):\n"
		"                    accept echoed PINGs as PONGs and an echoed "
		"FIN as FIN_ACK\n"
		"  --json            machine-readable result\n"
		"dataplane keys (--dp):\n%s",
		MAX_WINDOW, dp_config_help());
}

static uint8_t pattern_byte(uint64_t seq, uint32_t i)
{
	return (uint8_t)((seq * 131u + i * 7u + (i >> 8)) & 0xff);
}

static void fill_probe(uint8_t *p, uint32_t len, uint32_t type, uint64_t seq,
		       uint64_t tsc)
{
	struct probe_hdr h = { MAGIC, type, seq, tsc, len, 0 };
	uint32_t i;

	for (i = sizeof(h); i < len; i++)
		p[i] = pattern_byte(seq, i);
	/* The CRC covers the body; the header is checked field by field and
	 * the body pattern depends on seq, so a damaged seq shows too. */
	h.crc = dp_crc32c(DP_CRC_ISAL, p + sizeof(h), len - sizeof(h));
	memcpy(p, &h, sizeof(h));
}

/* @return true when the payload is exactly what fill_probe wrote. */
static bool check_probe(const uint8_t *p, uint32_t len, struct probe_hdr *h)
{
	uint32_t i;

	if (len < sizeof(*h))
		return false;
	memcpy(h, p, sizeof(*h));
	if (h->magic != MAGIC || h->len != len ||
	    h->crc != dp_crc32c(DP_CRC_ISAL, p + sizeof(*h), len - sizeof(*h)))
		return false;
	for (i = sizeof(*h); i < len; i++)
		if (p[i] != pattern_byte(h->seq, i))
			return false;
	return true;
}

static int send_probe(struct dp_port *port, uint32_t dst, uint32_t len,
		      uint32_t type, uint64_t seq, uint64_t now)
{
	struct rte_mbuf *m = dp_pkt_alloc(port);
	uint8_t *p;

	if (m == NULL)
		return -ENOBUFS;
	p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
	if (p == NULL) {
		dp_pkt_free(m);
		return -EMSGSIZE;
	}
	fill_probe(p, len, type, seq, now);
	return dp_port_send(port, dst, DP_IPPROTO_EXP, m, now);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void print_stats_json(const struct dp_stats *s, FILE *f)
{
	char buf[2048];

	dp_stats_json(s, buf, sizeof(buf));
	fprintf(f, "{%s}", buf);
}

static int run_server(struct dp_port *port, const struct opts *o,
		      const struct dp_config *cfg)
{
	struct rte_mbuf *pkts[32];
	struct dp_pkt_info info;
	struct dp_idle idle;
	uint64_t hz = dp_tsc_hz(), last = dp_tsc(), echoed = 0, bad = 0;
	uint64_t idle_tsc = hz / 1000 * o->idle_exit_ms;
	bool fin = false;
	struct dp_stats st;

	dp_idle_init(&idle, cfg->idle_polls, cfg->idle_sleep_us);
	fprintf(stderr, "sdp-ping: server ready\n");
	while (!stop && !fin) {
		uint64_t now = dp_tsc();
		unsigned int n, i, work;

		work = dp_port_poll(port, now);
		n = dp_port_recv(port, pkts, 32);
		for (i = 0; i < n; i++) {
			struct rte_mbuf *m = pkts[i];
			struct probe_hdr h;

			dp_pkt_info(m, &info);
			if (info.proto != DP_IPPROTO_EXP ||
			    rte_pktmbuf_data_len(m) < sizeof(h)) {
				bad++;
				dp_pkt_free(m);
				continue;
			}
			memcpy(&h, rte_pktmbuf_mtod(m, void *), sizeof(h));
			if (h.magic != MAGIC) {
				bad++;
				dp_pkt_free(m);
				continue;
			}
			if (h.type == T_FIN) {
				fin = true;
				dp_pkt_free(m);
				send_probe(port, info.src_ip_be, 64, T_FIN_ACK,
					   h.seq, now);
				continue;
			}
			/* Echo in place: the type is outside the CRC'd
			 * check on the client side only via the header, so
			 * rewrite it and keep the payload untouched. */
			h.type = T_PONG;
			memcpy(rte_pktmbuf_mtod(m, void *), &h,
			       offsetof(struct probe_hdr, seq));
			m->ol_flags = 0;
			dp_port_send(port, info.src_ip_be, DP_IPPROTO_EXP, m,
				     now);
			echoed++;
		}
		if (n != 0) {
			dp_port_flush(port, now);
			last = now;
		} else if (now - last > idle_tsc) {
			fprintf(stderr, "sdp-ping: server idle for %u ms, "
				"exiting\n", o->idle_exit_ms);
			break;
		}
		dp_idle_update(&idle, work + n + dp_port_tx_pending(port));
	}
	/* let the FIN_ACK leave */
	{
		uint64_t end = dp_tsc() + hz / 10;

		while (dp_tsc() < end) {
			dp_port_poll(port, dp_tsc());
			dp_port_flush(port, dp_tsc());
		}
	}
	dp_port_stats(port, &st);
	if (o->json) {
		printf("{\"role\": \"server\", \"echoed\": %" PRIu64
		       ", \"bad\": %" PRIu64 ", \"fin\": %s, \"stats\": ",
		       echoed, bad, fin ? "true" : "false");
		print_stats_json(&st, stdout);
		printf("}\n");
	} else {
		printf("server: echoed %" PRIu64 " probes, %" PRIu64
		       " foreign\n", echoed, bad);
		dp_stats_print(&st, stdout);
	}
	return fin || o->idle_exit_ms > 0 ? 0 : 1;
}

struct slot {
	uint64_t seq;
	uint64_t tx_tsc;
	bool busy;
};

static int run_client(struct dp_port *port, const struct opts *o,
		      const struct dp_config *cfg)
{
	struct rte_mbuf *pkts[32];
	struct slot *win = calloc(NB_SLOTS, sizeof(*win));
	uint64_t *rtt = calloc(o->count ? o->count : 1, sizeof(*rtt));
	uint64_t hz = dp_tsc_hz(), timeout = hz / 1000 * o->timeout_ms;
	uint64_t sent = 0, recvd = 0, lost = 0, corrupt = 0, dup = 0;
	uint64_t inflight = 0, oldest = 0, t0, t1, deadline;
	struct dp_idle idle;
	struct dp_stats st;
	bool fin_acked = false;
	int rc = 0;

	if (win == NULL || rtt == NULL) {
		free(win);
		free(rtt);
		return 1;
	}
	dp_idle_init(&idle, cfg->idle_polls, cfg->idle_sleep_us);
	/* Resolve the peer first so the first RTT is not an ARP RTT:
	 * a warm-up probe every 100 ms until one comes back. */
	deadline = dp_tsc() + hz * 10;
	for (bool up = false; !up && !stop;) {
		uint64_t now = dp_tsc(), until = now + hz / 10;
		unsigned int n;

		if (now > deadline) {
			fprintf(stderr, "sdp-ping: no answer from the peer "
				"within 10 s: is the server running?\n");
			free(win);
			free(rtt);
			return 2;
		}
		send_probe(port, o->peer_ip_be, 64, T_PING, UINT64_MAX, now);
		dp_port_flush(port, now);
		while (!up && dp_tsc() < until) {
			dp_port_poll(port, dp_tsc());
			n = dp_port_recv(port, pkts, 32);
			up = n > 0;
			while (n > 0)
				dp_pkt_free(pkts[--n]);
		}
	}

	t0 = dp_tsc();
	while (!stop && (sent < o->count || inflight > 0)) {
		uint64_t now = dp_tsc();
		unsigned int n, i, work;

		/* fill the window */
		while (sent < o->count && inflight < o->window) {
			struct slot *s = &win[sent % NB_SLOTS];

			if (s->busy)
				break;
			if (send_probe(port, o->peer_ip_be, o->size, T_PING,
				       sent, now) != 0)
				break;
			s->seq = sent;
			s->tx_tsc = now;
			s->busy = true;
			sent++;
			inflight++;
		}
		dp_port_flush(port, now);
		work = dp_port_poll(port, now);
		n = dp_port_recv(port, pkts, 32);
		now = dp_tsc();
		for (i = 0; i < n; i++) {
			struct probe_hdr h;
			const uint8_t *p = rte_pktmbuf_mtod(pkts[i], uint8_t *);
			uint32_t len = rte_pktmbuf_data_len(pkts[i]);
			struct slot *s;

			if (!check_probe(p, len, &h)) {
				corrupt++;
				dp_pkt_free(pkts[i]);
				continue;
			}
			dp_pkt_free(pkts[i]);
			if ((h.type != T_PONG &&
			     !(o->reflector && h.type == T_PING)) ||
			    h.seq >= o->count) {
				dup++; /* late ARP probe or stray */
				continue;
			}
			s = &win[h.seq % NB_SLOTS];
			if (!s->busy || s->seq != h.seq) {
				dup++; /* already timed out or duplicated */
				continue;
			}
			rtt[recvd++] = now - s->tx_tsc;
			s->busy = false;
			inflight--;
		}
		/* expire lost probes: all share one timeout and were sent in
		 * seq order, so the oldest outstanding one expires first */
		while (oldest < sent) {
			struct slot *s = &win[oldest % NB_SLOTS];

			if (s->busy && s->seq == oldest) {
				if (now - s->tx_tsc <= timeout)
					break;
				s->busy = false;
				inflight--;
				lost++;
			}
			oldest++;
		}
		dp_idle_update(&idle, work + n + dp_port_tx_pending(port));
	}
	t1 = dp_tsc();
	/* FIN with retries */
	for (deadline = dp_tsc() + hz * 2; !fin_acked && dp_tsc() < deadline;) {
		uint64_t now = dp_tsc(), until = now + hz / 20;
		unsigned int n;

		send_probe(port, o->peer_ip_be, 64, T_FIN, 0, now);
		dp_port_flush(port, now);
		while (!fin_acked && dp_tsc() < until) {
			dp_port_poll(port, dp_tsc());
			n = dp_port_recv(port, pkts, 32);
			while (n > 0) {
				struct probe_hdr h;

				n--;
				memcpy(&h, rte_pktmbuf_mtod(pkts[n], void *),
				       sizeof(h));
				if (h.magic == MAGIC &&
				    (h.type == T_FIN_ACK ||
				     (o->reflector && h.type == T_FIN)))
					fin_acked = true;
				dp_pkt_free(pkts[n]);
			}
		}
	}

	qsort(rtt, recvd, sizeof(*rtt), cmp_u64);
	dp_port_stats(port, &st);
	{
		double us = 1e6 / (double)hz, secs = (double)(t1 - t0) / hz;
		double p50 = recvd ? rtt[recvd / 2] * us : 0;
		double p99 = recvd ? rtt[(recvd * 99) / 100] * us : 0;
		double p999 = recvd ? rtt[(recvd * 999) / 1000] * us : 0;
		double pmin = recvd ? rtt[0] * us : 0;
		double pmax = recvd ? rtt[recvd - 1] * us : 0;
		double pps = secs > 0 ? (double)recvd / secs : 0;

		if (o->json) {
			printf("{\"role\": \"client\", \"size\": %u, "
			       "\"window\": %u, \"sent\": %" PRIu64
			       ", \"received\": %" PRIu64 ", \"verified\": %"
			       PRIu64 ", \"lost\": %" PRIu64
			       ", \"corrupt\": %" PRIu64 ", \"stray\": %"
			       PRIu64 ", \"rtt_us_min\": %.2f, "
			       "\"rtt_us_p50\": %.2f, \"rtt_us_p99\": %.2f, "
			       "\"rtt_us_p999\": %.2f, \"rtt_us_max\": %.2f, "
			       "\"pps\": %.0f, \"seconds\": %.3f, "
			       "\"fin_acked\": %s, \"stats\": ",
			       o->size, o->window, sent, recvd, recvd, lost,
			       corrupt, dup, pmin, p50, p99, p999, pmax, pps,
			       secs, fin_acked ? "true" : "false");
			print_stats_json(&st, stdout);
			printf("}\n");
		} else {
			printf("sdp-ping: %" PRIu64 " sent, %" PRIu64
			       " received and verified, %" PRIu64 " lost, %"
			       PRIu64 " corrupt\n", sent, recvd, lost,
			       corrupt);
			printf("rtt us: min %.2f p50 %.2f p99 %.2f p99.9 %.2f "
			       "max %.2f; %.0f pps over %.3f s\n", pmin, p50,
			       p99, p999, pmax, pps, secs);
			dp_stats_print(&st, stdout);
		}
	}
	/* detected corruption is the check working, not a failure; an
	 * unaccounted probe is */
	if (sent != recvd + lost || stop)
		rc = 1;
	free(win);
	free(rtt);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "dp", required_argument, NULL, 'd' },
		{ "server", no_argument, NULL, 's' },
		{ "peer", required_argument, NULL, 'p' },
		{ "count", required_argument, NULL, 'c' },
		{ "size", required_argument, NULL, 'S' },
		{ "window", required_argument, NULL, 'w' },
		{ "timeout-ms", required_argument, NULL, 't' },
		{ "idle-exit-ms", required_argument, NULL, 'i' },
		{ "json", no_argument, NULL, 'j' },
		{ "reflector", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { .count = 10000, .size = 64, .window = 1,
			  .timeout_ms = 1000, .idle_exit_ms = 60000 };
	/* static: struct dp_config is ~48 KB (static ARP table), not for the
	 * stack; main runs once. */
	static struct dp_config cfg;
	struct dp_port *port;
	uint64_t v;
	int c, rc;

	while ((c = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			o.dp = optarg;
			break;
		case 's':
			o.server = true;
			break;
		case 'p':
			if (dp_parse_ip(optarg, &o.peer_ip_be) != 0) {
				fprintf(stderr, "sdp-ping: --peer '%s' is not "
					"an IPv4 address\n", optarg);
				return 2;
			}
			break;
		case 'c':
		case 'S':
		case 'w':
		case 't':
		case 'i':
			if (sdp_parse_u64(optarg, 0, &v) != 0) {
				fprintf(stderr, "sdp-ping: option value '%s' "
					"is not a number\n", optarg);
				return 2;
			}
			if (c == 'c')
				o.count = v;
			else if (c == 'S')
				o.size = (uint32_t)v;
			else if (c == 'w')
				o.window = (uint32_t)v;
			else if (c == 't')
				o.timeout_ms = (uint32_t)v;
			else
				o.idle_exit_ms = (uint32_t)v;
			break;
		case 'j':
			o.json = true;
			break;
		case 'r':
			o.reflector = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (o.dp == NULL || (!o.server && o.peer_ip_be == 0)) {
		fprintf(stderr, "sdp-ping: --dp and one of --server or --peer "
			"are required\n");
		usage(stderr);
		return 2;
	}
	if (o.window < 1 || o.window > MAX_WINDOW) {
		fprintf(stderr, "sdp-ping: --window %u out of range: use "
			"1..%d\n", o.window, MAX_WINDOW);
		return 2;
	}
	if (dp_config_parse(o.dp, &cfg) != 0)
		return 2;
	if (o.size < sizeof(struct probe_hdr) || o.size + 20 > cfg.mtu) {
		fprintf(stderr, "sdp-ping: --size %u out of range: use %zu..%u "
			"(mtu %u - 20)\n", o.size, sizeof(struct probe_hdr),
			cfg.mtu - 20, cfg.mtu);
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (dp_start(&cfg, &port) != 0)
		return 3;
	rc = o.server ? run_server(port, &o, &cfg) : run_client(port, &o, &cfg);
	dp_stop(port);
	return rc;
}
