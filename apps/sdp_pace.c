/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdp_pace.c - one endpoint of sdp-pace: measures how precisely frames are
 * spaced by the dataplane's pacer, by no limiter at all, or by a token
 * bucket served from a timer tick (DPDK's rte_meter refilled every
 * --tb-tick-us, like a TBF driven by a 1000 Hz timer: the limiter seed 001
 * shows bursting).
 *
 *   sender  --limiter pace: frames go through the port's pacer (rate=)
 *           --limiter none: as fast as the port takes them
 *           --limiter tb:   a frame leaves when the token bucket is green;
 *                           the bucket is only looked at once per tick
 *   receiver: timestamps every arrival on the TSC (busy polling), then
 *           reports the achieved wire rate, the inter-arrival gap
 *           distribution against the ideal gap, the largest burst beyond
 *           the schedule and the rate over time.
 *
 * The sender stamps each frame with the TSC in an ethdev TX callback, i.e.
 * at the moment it is handed to the PMD: the receiver computes the
 * inter-DEPARTURE gaps from those stamps (what the pacer controls) and also
 * reports arrival-based figures (what the receiver's polling adds).
 *
 * Frames are IPv4 protocol 253 carrying {magic, seq, tx_tsc}; the wire size of a
 * frame counts preamble, FCS and inter-frame gap (pace_wire_bytes), the
 * unit the pacer's rate is expressed in.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_meter.h>

#include "dp.h"
#include "pace.h"

#define MAGIC 0x53445041u /* "SDPA" */
#define T_DATA 1
#define T_FIN 2
#define BIN_MS 10	  /* rate-over-time bin */

struct frame_hdr {
	uint32_t magic;
	uint32_t type;
	uint64_t seq;
	uint64_t tx_tsc;	/* stamped as the frame is handed to the PMD */
} __attribute__((packed));

#define HDR_OFF (14 + 20) /* Ethernet + IPv4 in front of frame_hdr */

enum limiter { LIM_PACE, LIM_NONE, LIM_TB };

struct opts {
	const char *dp;
	uint32_t peer_ip_be;
	bool rx;
	enum limiter lim;
	uint64_t rate_bps;	/* target, wire bit/s (for tb and reports) */
	uint64_t count;
	uint32_t size;		/* IPv4 payload bytes */
	uint32_t tb_tick_us;
	uint32_t tb_burst_us;
	uint32_t idle_exit_ms;
	const char *series;	/* receiver: write arrival gaps here */
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
		"usage: sdp-pace-ep --dp 'dev=... ip=...' (--rx | --peer IP) "
		"[options]\n"
		"  --rx               receive and measure\n"
		"  --peer IP          send to IP\n"
		"  --limiter L        pace (the dataplane pacer; set rate= in "
		"--dp), none, tb (token bucket on a timer tick)\n"
		"  --rate BPS         target wire rate (reports; tb rate)\n"
		"  --count N          frames (default 20000)\n"
		"  --size B           IPv4 payload bytes, 16..mtu-20 "
		"(default 1480: 1514-byte frames)\n"
		"  --tb-tick-us T     token bucket served every T us "
		"(default 1000)\n"
		"  --tb-burst-us T    bucket depth in us at the rate "
		"(default 1000)\n"
		"  --idle-exit-ms T   receiver gives up after T ms idle\n"
		"  --series FILE      receiver: write gap_ns per frame\n");
}

static uint32_t frame_bytes(uint32_t payload)
{
	return payload + 20 + 14;
}

static int send_frame(struct dp_port *port, uint32_t dst, uint32_t size,
		      uint32_t type, uint64_t seq, uint64_t now)
{
	struct rte_mbuf *m = dp_pkt_alloc(port);
	struct frame_hdr h = { MAGIC, type, seq, 0 };
	uint8_t *p;

	if (m == NULL)
		return -ENOBUFS;
	p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)size);
	if (p == NULL) {
		dp_pkt_free(m);
		return -EMSGSIZE;
	}
	memset(p + sizeof(h), 0x5a, size - sizeof(h));
	memcpy(p, &h, sizeof(h));
	return dp_port_send(port, dst, DP_IPPROTO_EXP, m, now);
}

/* Run the port until everything queued has left. */
static void drain(struct dp_port *port, uint64_t hz)
{
	uint64_t end = dp_tsc() + hz * 5;

	while (dp_port_tx_pending(port) && dp_tsc() < end && !stop) {
		dp_port_poll(port, dp_tsc());
		dp_port_flush(port, dp_tsc());
	}
}

/* ethdev TX callback: stamp departure time into our data frames. */
static uint16_t stamp_tx(uint16_t port_id, uint16_t queue,
			 struct rte_mbuf **pkts, uint16_t n, void *arg)
{
	uint64_t now = rte_rdtsc();
	uint16_t i;

	(void)port_id;
	(void)queue;
	(void)arg;
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct frame_hdr *h;

		if (rte_pktmbuf_data_len(m) < HDR_OFF + sizeof(*h) ||
		    RTE_MBUF_CLONED(m))
			continue;
		h = rte_pktmbuf_mtod_offset(m, struct frame_hdr *, HDR_OFF);
		if (h->magic == MAGIC)
			h->tx_tsc = now;
	}
	return n;
}

static int run_tx(struct dp_port *port, const struct opts *o)
{
	uint64_t hz = dp_tsc_hz(), sent = 0, t0, t1, next_tick;
	uint64_t tick = hz / 1000000 * o->tb_tick_us;
	uint32_t wire = pace_wire_bytes(frame_bytes(o->size));
	struct rte_meter_srtcm_profile prof;
	struct rte_meter_srtcm meter;
	struct dp_stats st;
	int i;

	if (rte_eth_add_tx_callback(dp_port_id(port), 0, stamp_tx, NULL) ==
	    NULL) {
		fprintf(stderr, "sdp-pace: cannot add the tx timestamp "
			"callback (DPDK built without RTE_ETHDEV_RXTX_CALLBACKS?)"
			"\n");
		return 2;
	}
	if (o->lim == LIM_TB) {
		struct rte_meter_srtcm_params prm = {
			.cir = o->rate_bps / 8,
			.cbs = o->rate_bps / 8 / 1000000 * o->tb_burst_us,
			.ebs = 0,
		};

		/* like Linux TBF, the bucket must hold a couple of frames or
		 * it throws tokens away between ticks */
		if (prm.cbs < 2 * wire)
			prm.cbs = 2 * wire;
		if (rte_meter_srtcm_profile_config(&prof, &prm) != 0 ||
		    rte_meter_srtcm_config(&meter, &prof) != 0) {
			fprintf(stderr, "sdp-pace: token bucket config "
				"rejected (rate %" PRIu64 ")\n", o->rate_bps);
			return 2;
		}
	}
	/* Let the receiver learn our MAC and get ready. */
	for (i = 0; i < 20 && !stop; i++) {
		uint64_t until = dp_tsc() + hz / 20;

		send_frame(port, o->peer_ip_be, o->size, T_FIN + 1, 0,
			   dp_tsc());
		while (dp_tsc() < until)
			dp_port_poll(port, dp_tsc());
		dp_port_flush(port, dp_tsc());
	}
	drain(port, hz);
	t0 = dp_tsc();
	next_tick = t0;
	while (sent < o->count && !stop) {
		uint64_t now = dp_tsc();

		switch (o->lim) {
		case LIM_TB:
			if ((int64_t)(now - next_tick) < 0)
				break;
			next_tick += tick;
			/* one tick: everything the bucket allows */
			while (sent < o->count &&
			       rte_meter_srtcm_color_blind_check(
				       &meter, &prof, now, wire) ==
				       RTE_COLOR_GREEN) {
				if (send_frame(port, o->peer_ip_be, o->size,
					       T_DATA, sent, now) != 0)
					break;
				sent++;
			}
			dp_port_flush(port, now);
			break;
		case LIM_PACE:
			/* keep the pacer's fifo fed, at most 256 queued */
			while (sent < o->count &&
			       dp_port_tx_queued(port) < 256) {
				if (send_frame(port, o->peer_ip_be, o->size,
					       T_DATA, sent, now) != 0)
					break;
				sent++;
			}
			break;
		case LIM_NONE:
			while (sent < o->count) {
				if (send_frame(port, o->peer_ip_be, o->size,
					       T_DATA, sent, now) != 0)
					break;
				sent++;
				if (sent % 32 == 0)
					break;
			}
			dp_port_flush(port, now);
			break;
		}
		dp_port_poll(port, dp_tsc());
	}
	drain(port, hz);
	t1 = dp_tsc();
	for (i = 0; i < 10; i++) {
		send_frame(port, o->peer_ip_be, 64, T_FIN, sent, dp_tsc());
		dp_port_flush(port, dp_tsc());
		rte_delay_us_block(1000);
		dp_port_poll(port, dp_tsc());
	}
	dp_port_stats(port, &st);
	printf("{\"role\": \"tx\", \"sent\": %" PRIu64 ", \"seconds\": %.6f, "
	       "\"pace_late\": %" PRIu64 ", \"pace_clamps\": %" PRIu64
	       ", \"gap_frames\": %" PRIu64 ", \"pace_drops\": %" PRIu64
	       ", \"tx_pkts\": %" PRIu64
	       ", \"tx_drops\": %" PRIu64 "}\n", sent,
	       (double)(t1 - t0) / hz, st.pace_late, st.pace_clamps,
	       st.gap_frames, st.pace_drops, st.tx_pkts,
	       st.drops[DP_DROP_TX_FULL] + st.drops[DP_DROP_HOLD_FULL]);
	return 0;
}

struct timing {
	double secs, rate_bps;
	double gap_p1, gap_p50, gap_p99, gap_max; /* ns */
	double err_p50, err_p99;		   /* |gap - ideal|, ns */
	uint64_t max_burst;	/* frames closer than half the ideal gap */
	double bin_max_bps, bin_min_bps;	   /* BIN_MS bins */
};

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Gap statistics of @n timestamps @ts (TSC) of frames of @len bytes. */
static int analyse(const uint64_t *ts, const uint32_t *len, uint64_t n,
		   uint64_t hz, double ideal_ns, const char *series,
		   struct timing *t)
{
	double *gap = calloc(n, sizeof(*gap)), *err = calloc(n, sizeof(*err));
	double ns_per_tsc = 1e9 / (double)hz, bin_bytes = 0;
	uint64_t i, burst = 1, wire_total = 0, b0 = ts[0];
	uint64_t bin_tsc = hz / 1000 * BIN_MS;
	FILE *sf = series != NULL ? fopen(series, "w") : NULL;

	if (gap == NULL || err == NULL) {
		free(gap);
		free(err);
		return -ENOMEM;
	}
	memset(t, 0, sizeof(*t));
	t->max_burst = 1;
	t->bin_min_bps = 1e30;
	for (i = 1; i < n; i++) {
		double g = (double)(int64_t)(ts[i] - ts[i - 1]) * ns_per_tsc;
		uint32_t w = pace_wire_bytes(frame_bytes(len[i]));

		gap[i - 1] = g;
		err[i - 1] = fabs(g - ideal_ns);
		wire_total += w;
		if (ideal_ns > 0 && g < ideal_ns / 2) {
			if (++burst > t->max_burst)
				t->max_burst = burst;
		} else {
			burst = 1;
		}
		if (sf != NULL)
			fprintf(sf, "%.4f %.0f\n",
				(double)(ts[i] - ts[0]) * ns_per_tsc / 1e6, g);
		if (ts[i] - b0 >= bin_tsc) {
			double r = bin_bytes * 8 / ((double)(ts[i] - b0) / hz);

			if (r > t->bin_max_bps)
				t->bin_max_bps = r;
			if (r < t->bin_min_bps)
				t->bin_min_bps = r;
			b0 = ts[i];
			bin_bytes = 0;
		}
		bin_bytes += w;
	}
	if (sf != NULL)
		fclose(sf);
	if (t->bin_min_bps == 1e30)
		t->bin_min_bps = 0;
	t->secs = (double)(ts[n - 1] - ts[0]) / hz;
	t->rate_bps = t->secs > 0 ? (double)wire_total * 8 / t->secs : 0;
	qsort(gap, n - 1, sizeof(*gap), cmp_dbl);
	qsort(err, n - 1, sizeof(*err), cmp_dbl);
	t->gap_p1 = gap[(n - 1) / 100];
	t->gap_p50 = gap[(n - 1) / 2];
	t->gap_p99 = gap[(n - 1) * 99 / 100];
	t->gap_max = gap[n - 2];
	t->err_p50 = err[(n - 1) / 2];
	t->err_p99 = err[(n - 1) * 99 / 100];
	free(gap);
	free(err);
	return 0;
}

static int run_rx(struct dp_port *port, const struct opts *o,
		  const struct dp_config *cfg)
{
	uint64_t hz = dp_tsc_hz(), n = 0, expect_seq = 0, lost = 0;
	uint64_t *arr = calloc(o->count + 1, sizeof(*arr));
	uint64_t *dep = calloc(o->count + 1, sizeof(*dep));
	uint32_t *len = calloc(o->count + 1, sizeof(*len));
	uint64_t last = dp_tsc(), idle_tsc = hz / 1000 * o->idle_exit_ms;
	struct rte_mbuf *pkts[64];
	bool fin = false, started = false;
	struct dp_stats st;

	if (arr == NULL || len == NULL || dep == NULL)
		return 1;
	fprintf(stderr, "sdp-pace: receiver ready\n");
	while (!stop && !fin) {
		uint64_t now = dp_tsc();
		unsigned int k, i;

		dp_port_poll(port, now);
		k = dp_port_recv(port, pkts, 64);
		for (i = 0; i < k; i++) {
			struct frame_hdr h;

			if (rte_pktmbuf_data_len(pkts[i]) < sizeof(h)) {
				dp_pkt_free(pkts[i]);
				continue;
			}
			memcpy(&h, rte_pktmbuf_mtod(pkts[i], void *),
			       sizeof(h));
			if (h.magic == MAGIC && h.type == T_FIN)
				fin = true;
			else if (h.magic == MAGIC && h.type == T_DATA &&
				 n <= o->count) {
				if (h.seq != expect_seq)
					lost += h.seq > expect_seq
							? h.seq - expect_seq
							: 0;
				expect_seq = h.seq + 1;
				arr[n] = now;
				dep[n] = h.tx_tsc;
				len[n] = rte_pktmbuf_data_len(pkts[i]);
				n++;
				started = true;
			}
			dp_pkt_free(pkts[i]);
		}
		if (k != 0)
			last = now;
		else if (now - last > idle_tsc && (started || o->idle_exit_ms))
			break;
	}
	dp_port_stats(port, &st);
	if (n < 2) {
		printf("{\"role\": \"rx\", \"received\": %" PRIu64 "}\n", n);
		free(arr);
		free(dep);
		free(len);
		return 1;
	}
	{
		struct timing d, r;
		uint32_t wire = pace_wire_bytes(frame_bytes(len[0]));
		double ideal_ns = o->rate_bps ? (double)wire * 8e9 /
						      (double)o->rate_bps
					      : 0;
		int rc1 = analyse(dep, len, n, hz, ideal_ns, o->series, &d);
		int rc2 = analyse(arr, len, n, hz, ideal_ns, NULL, &r);

		if (rc1 != 0 || rc2 != 0) {
			free(arr);
			free(dep);
			free(len);
			return 1;
		}
		printf("{\"role\": \"rx\", \"received\": %" PRIu64
		       ", \"lost\": %" PRIu64 ", \"seconds\": %.6f, "
		       "\"rate_bps\": %.0f, \"target_bps\": %" PRIu64
		       ", \"rate_error_pct\": %.4f, \"ideal_gap_ns\": %.1f, "
		       "\"frame_wire_bytes\": %u, "
		       "\"gap_ns_p1\": %.0f, \"gap_ns_p50\": %.0f"
		       ", \"gap_ns_p99\": %.0f, \"gap_ns_max\": %.0f, "
		       "\"gap_err_ns_p50\": %.0f, \"gap_err_ns_p99\": %.0f"
		       ", \"max_burst\": %" PRIu64 ", \"rate_bin_ms\": %d, "
		       "\"rate_bin_max_bps\": %.0f, \"rate_bin_min_bps\": "
		       "%.0f, \"arrival\": {\"rate_bps\": %.0f, "
		       "\"gap_err_ns_p50\": %.0f, \"gap_err_ns_p99\": %.0f, "
		       "\"max_burst\": %" PRIu64 "}, "
		       "\"gap_frames_dropped\": %" PRIu64 "}\n",
		       n, lost, d.secs, d.rate_bps, o->rate_bps,
		       o->rate_bps ? (d.rate_bps - (double)o->rate_bps) *
					     100.0 / (double)o->rate_bps
				   : 0.0,
		       ideal_ns, wire, d.gap_p1, d.gap_p50, d.gap_p99,
		       d.gap_max, d.err_p50, d.err_p99, d.max_burst, BIN_MS,
		       d.bin_max_bps, d.bin_min_bps, r.rate_bps, r.err_p50,
		       r.err_p99, r.max_burst, st.drops[DP_DROP_GAP_FRAME]);
	}
	free(dep);
	(void)cfg;
	free(arr);
	free(len);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "dp", required_argument, NULL, 'd' },
		{ "rx", no_argument, NULL, 'r' },
		{ "peer", required_argument, NULL, 'p' },
		{ "limiter", required_argument, NULL, 'l' },
		{ "rate", required_argument, NULL, 'R' },
		{ "count", required_argument, NULL, 'c' },
		{ "size", required_argument, NULL, 'S' },
		{ "tb-tick-us", required_argument, NULL, 't' },
		{ "tb-burst-us", required_argument, NULL, 'b' },
		{ "idle-exit-ms", required_argument, NULL, 'i' },
		{ "series", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { .lim = LIM_PACE, .count = 20000, .size = 1480,
			  .tb_tick_us = 1000, .tb_burst_us = 1000,
			  .idle_exit_ms = 10000 };
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
		case 'r':
			o.rx = true;
			break;
		case 'p':
			if (dp_parse_ip(optarg, &o.peer_ip_be) != 0) {
				fprintf(stderr, "sdp-pace: --peer '%s' is not "
					"an IPv4 address\n", optarg);
				return 2;
			}
			break;
		case 'l':
			if (strcmp(optarg, "pace") == 0)
				o.lim = LIM_PACE;
			else if (strcmp(optarg, "none") == 0)
				o.lim = LIM_NONE;
			else if (strcmp(optarg, "tb") == 0)
				o.lim = LIM_TB;
			else {
				fprintf(stderr, "sdp-pace: --limiter '%s': use"
					" pace, none or tb\n", optarg);
				return 2;
			}
			break;
		case 'R':
			if (pace_rate_parse(optarg, &o.rate_bps) != 0)
				return 2;
			break;
		case 's':
			o.series = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'c':
		case 'S':
		case 't':
		case 'b':
		case 'i':
			if (sdp_parse_u64(optarg, 0, &v) != 0) {
				fprintf(stderr, "sdp-pace: '%s' is not a "
					"number\n", optarg);
				return 2;
			}
			if (c == 'c')
				o.count = v;
			else if (c == 'S')
				o.size = (uint32_t)v;
			else if (c == 't')
				o.tb_tick_us = (uint32_t)v;
			else if (c == 'b')
				o.tb_burst_us = (uint32_t)v;
			else
				o.idle_exit_ms = (uint32_t)v;
			break;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (o.dp == NULL || (!o.rx && o.peer_ip_be == 0)) {
		usage(stderr);
		return 2;
	}
	if (dp_config_parse(o.dp, &cfg) != 0)
		return 2;
	if (o.size < sizeof(struct frame_hdr) || o.size + 20 > cfg.mtu) {
		fprintf(stderr, "sdp-pace: --size %u: use 16..%u\n", o.size,
			cfg.mtu - 20);
		return 2;
	}
	if (o.lim == LIM_TB && (o.rate_bps == 0 || o.tb_tick_us == 0)) {
		fprintf(stderr, "sdp-pace: --limiter tb needs --rate and "
			"--tb-tick-us > 0\n");
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (dp_start(&cfg, &port) != 0)
		return 3;
	rc = o.rx ? run_rx(port, &o, &cfg) : run_tx(port, &o);
	dp_stop(port);
	return rc;
}
