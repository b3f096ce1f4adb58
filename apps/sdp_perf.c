/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdp_perf.c - one endpoint of sdp-perf: SCTP message latency and goodput
 * between two processes, each with one dataplane port, one usrsctp endpoint
 * (sg_*) and one association, all on one core.
 *
 *   client                                      server
 *     sg_connect ----------------------------->  (accepts)
 *     START {test, size, count, streams, seed} -> allocate, READY
 *     <--------------------------------------- READY
 *   lat: PING seq ---------------------------->  PONG seq (same size, sent
 *        <-------------------------------------  before the PING is verified)
 *   bw:  DATA seq 0..count-1, round robin over the streams, as fast as
 *        sg_send takes them (-EAGAIN: poll, retry; above the send buffer:
 *        -EINPROGRESS, next one after the send completes)
 *     FIN ------------------------------------>  (bw: after the last DATA)
 *     <--------------------------------------- RESULT {verified, ...}
 *     sg_disconnect <------------------------>  SHUTDOWN on both sides
 *
 * Control messages travel on their own stream (the last one, index
 * --streams), ordered; data uses streams 0..--streams-1.
 *
 * Verification: both ends build the same pattern from the client's seed
 * (splitmix64 words).  Message seq carries seq as its PPID and, from offset
 * off(seq) in the pattern, its bytes; a message of at least HDR_BYTES starts
 * with {magic, seq, len, CRC32c of the bytes after the header} instead of
 * the first pattern bytes.  The receiver checks the length, the header,
 * every byte against the pattern (memcmp per received segment) and the
 * CRC32c (per segment, combined across segments), so a byte that is
 * damaged, shifted, from another message or missing is caught.  It also
 * checks each seq arrives exactly once and, when ordered, in order on its
 * stream.  The end-to-end CRC is always ISA-L's, independent of the CRC
 * back-end that protects the SCTP packets on the wire (--crc).
 *
 * Output: a human summary, or with --json one JSON object on stdout.  Exit
 * status: 0 verified, 1 verification failed or the association was lost,
 * 2 usage, 3 set-up failed.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>


#include "sg.h"

#define PERF_MAGIC 0x53445046u /* "SDPF" */
#define HDR_BYTES 16u
#define PATTERN_SPAN 4093u   /* message offsets cycle over a prime */
#define CTL_START 1u
#define CTL_READY 2u
#define CTL_FIN 3u
#define CTL_RESULT 4u
#define TEST_LAT 1u
#define TEST_BW 2u
#define MAX_SIZE (16u << 20)
#define MAX_COUNT (1u << 20)	   /* bitmap of seen seqs stays small */
#define DEFAULT_TOTAL (256ull << 20)
#define SEND_BATCH 64		   /* sg_send calls between polls */
#define RECV_BURST 32
#define FIN_GRACE_S 30		   /* server: data still due after FIN and
				      no message for this long */

struct msg_hdr {
	uint32_t magic;
	uint32_t seq;
	uint32_t len;	/* whole message, header included */
	uint32_t crc;	/* CRC32c (ISA-L) of bytes [HDR_BYTES, len) */
} __attribute__((packed));

struct ctl_start {
	uint32_t magic;
	uint32_t test;
	uint32_t size;
	uint32_t streams;
	uint32_t unordered;
	uint32_t pad;
	uint64_t count;	/* data messages, warm-up included */
	uint64_t seed;
} __attribute__((packed));

struct ctl_result {
	uint32_t magic;
	uint32_t pad;
	uint64_t msgs_ok;
	uint64_t bytes_ok;
	uint64_t bad;	    /* wrong length, header, pattern or CRC */
	uint64_t dup;	    /* seq seen before or out of range */
	uint64_t order_err; /* ordered stream delivered out of order */
	uint64_t missing;   /* never arrived */
	uint64_t recv_ns;   /* first to last data message */
	uint64_t crc_drops; /* dataplane SCTP CRC32c drops so far */
} __attribute__((packed));

struct opts {
	const char *dp;
	const char *sg;
	const char *crc;
	uint32_t peer_ip_be;
	uint16_t peer_port;
	bool server;
	bool json;
	bool busy;
	bool unordered;
	uint32_t test;
	uint32_t size;
	uint64_t count;	  /* 0 = from total */
	uint64_t total_bytes;
	uint32_t streams;
	uint64_t warmup;  /* lat: exchanges not measured; UINT64_MAX = auto */
	uint64_t seed;
	uint32_t idle_exit_ms;
	uint32_t deadline_s;
};

/* Verification state of a receiver. */
struct verify {
	uint64_t msgs_ok, bytes_ok, bad, dup, order_err;
	uint64_t first_tsc, last_tsc;
	uint8_t *seen;	      /* bitmap, one bit per seq */
	uint64_t *next_seq;   /* per data stream: next seq when ordered */
};

struct perf {
	const struct opts *o;
	struct dp_port *port;
	struct sg_ep *ep;
	struct dp_idle idle;
	sg_assoc_t assoc;
	bool up, lost, shut, cant_start;
	/* the test, as agreed by START */
	uint32_t test, size, streams;
	bool unordered;
	uint64_t count, seed;
	uint8_t *pattern;	  /* MAX(size) + PATTERN_SPAN bytes */
	struct msg_hdr hdr;	  /* header of the message being sent: stays
				   * put while a large send is in progress */
	uint32_t hdr_seq;	  /* seq whose CRC hdr holds; UINT32_MAX none */
	struct verify v;
	uint64_t deadline_tsc;
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
		"usage: sdp-perf-ep --dp 'dev=... ip=...' (--server | --peer IP)"
		" [options]\n"
		"  --server          accept one test from a client, then exit\n"
		"  --peer IP         run the test against the server at IP\n"
		"  --peer-port N     server's SCTP port (default 5000)\n"
		"  --test lat|bw     ping-pong latency or streaming goodput "
		"(default lat)\n"
		"  --size B          message bytes, 1..16M (default 8)\n"
		"  --count N         messages (lat: exchanges), 1..%u\n"
		"  --total B         bw: bytes to send when --count is not given "
		"(default 256M;\n"
		"                    the count is capped at %u messages)\n"
		"  --streams N       data streams, round robin, 1..1024 "
		"(default 1; one more\n"
		"                    carries control messages)\n"
		"  --unordered       send data unordered\n"
		"  --crc NAME        dataplane CRC32c back-end: auto|isal|sse42|"
		"table|offload|none\n"
		"  --warmup N        lat: exchanges before measuring (default "
		"count/10, <= 100)\n"
		"  --seed N          pattern seed (default from the clock)\n"
		"  --busy            never sleep when idle (idle_sleep_us=0)\n"
		"  --sg 'k=v ...'    SCTP layer keys (below)\n"
		"  --idle-exit-ms T  server: give up after T ms without a client "
		"(default 60000)\n"
		"  --deadline-s S    abandon the run after S s (default 900)\n"
		"  --json            machine-readable result\n"
		"dataplane keys (--dp):\n%s%s",
		MAX_COUNT, MAX_COUNT, dp_config_help(), sg_config_help());
}

/* ---- CRC32c across segments ------------------------------------------ */

/*
 * crc(A || B) from crc(A), crc(B) and len(B): multiply crc(A) by x^(8 len B)
 * modulo the (reflected) Castagnoli polynomial, as zlib's crc32_combine
 * does for its polynomial.  Lets the receiver CRC each segment in place.
 */
#define CRC32C_POLY 0x82f63b78u

static uint32_t gf2_mulmod(uint32_t a, uint32_t b)
{
	uint32_t m = 1u << 31, p = 0;

	for (;;) {
		if (a & m) {
			p ^= b;
			if ((a & (m - 1)) == 0)
				break;
		}
		m >>= 1;
		b = (b & 1) ? (b >> 1) ^ CRC32C_POLY : b >> 1;
	}
	return p;
}

static uint32_t x2n_table[32]; /* x^(2^n) mod P */

static void crc_combine_init(void)
{
	uint32_t p = 1u << 30; /* x^1 */
	int n;

	x2n_table[0] = p;
	for (n = 1; n < 32; n++)
		x2n_table[n] = p = gf2_mulmod(p, p);
}

static uint32_t crc32c_combine(uint32_t crc_a, uint32_t crc_b,
			       uint64_t len_b)
{
	uint32_t p = 1u << 31; /* x^0 */
	unsigned int k = 3;    /* bytes -> bits */

	for (; len_b != 0; len_b >>= 1, k++)
		if (len_b & 1)
			p = gf2_mulmod(x2n_table[k & 31], p);
	return gf2_mulmod(p, crc_a) ^ crc_b;
}

static bool crc_combine_selftest(void)
{
	static const char s[] = "123456789";
	uint32_t a = dp_crc32c(DP_CRC_ISAL, s, 4);
	uint32_t b = dp_crc32c(DP_CRC_ISAL, s + 4, 5);

	return crc32c_combine(a, b, 5) == 0xE3069283u;
}

/* ---- pattern ---------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int pattern_make(struct perf *p)
{
	size_t words = ((size_t)p->size + PATTERN_SPAN + 7) / 8, i;
	uint64_t x = p->seed;
	uint64_t *w;

	free(p->pattern);
	w = malloc(words * 8);
	if (w == NULL)
		return -ENOMEM;
	for (i = 0; i < words; i++)
		w[i] = splitmix64(&x);
	p->pattern = (uint8_t *)w;
	return 0;
}

/* Where message seq's bytes start in the pattern (unaligned on purpose:
 * a message shifted by a few bytes does not match). */
static uint32_t pattern_off(uint32_t seq)
{
	return (uint32_t)(((uint64_t)seq * 2654435761u) % PATTERN_SPAN);
}

/* ---- events and polling ----------------------------------------------- */

static unsigned int pump(struct perf *p)
{
	struct sg_event ev;
	unsigned int work = sg_poll(p->ep, dp_tsc());

	while (sg_next_event(p->ep, &ev) == 0) {
		work++;
		switch (ev.type) {
		case SG_EV_UP:
			p->assoc = ev.assoc;
			p->up = true;
			break;
		case SG_EV_SEND_DONE:
			break;
		case SG_EV_SHUTDOWN:
			if (ev.assoc == p->assoc)
				p->shut = true;
			break;
		case SG_EV_CANT_START:
			p->cant_start = true;
			break;
		default: /* LOST, RESTART, SEND_FAILED: the test is void */
			if (p->up && ev.assoc == p->assoc) {
				fprintf(stderr, "sdp-perf: association %u: %s "
					"(error %u)\n", ev.assoc,
					sg_event_name(ev.type), ev.error);
				p->lost = true;
			}
			break;
		}
	}
	dp_idle_update(&p->idle, work + dp_port_tx_pending(p->port));
	return work;
}

static bool timed_out(const struct perf *p)
{
	return stop || dp_tsc() > p->deadline_tsc;
}

/* ---- sending ------------------------------------------------------------ */

static int send_ctl(struct perf *p, uint32_t type, const void *body,
		    uint32_t len)
{
	struct iovec iov = { (void *)(uintptr_t)body, len };
	int rc;

	while ((rc = sg_send(p->ep, p->assoc, (uint16_t)p->streams, 0, type,
			     &iov, 1)) == -EAGAIN) {
		if (timed_out(p) || p->lost)
			return -ETIMEDOUT;
		pump(p);
	}
	return rc;
}

/*
 * Offer data message @seq to sg_send once.  The caller must not call this
 * while sg_send_busy(): p->hdr belongs to the large send in progress.
 * @return sg_send's result.
 */
static int send_data(struct perf *p, uint32_t seq)
{
	const uint8_t *src = p->pattern + pattern_off(seq);
	uint16_t stream = (uint16_t)(seq % p->streams);
	uint32_t flags = p->unordered ? SG_SEND_UNORDERED : 0;
	struct iovec iov[2];
	int n = 1;

	if (p->size < HDR_BYTES) {
		iov[0].iov_base = (void *)(uintptr_t)src;
		iov[0].iov_len = p->size;
	} else {
		if (p->hdr_seq != seq) {
			p->hdr.magic = PERF_MAGIC;
			p->hdr.seq = seq;
			p->hdr.len = p->size;
			p->hdr.crc = dp_crc32c(DP_CRC_ISAL, src + HDR_BYTES,
					       p->size - HDR_BYTES);
			p->hdr_seq = seq;
		}
		iov[0].iov_base = &p->hdr;
		iov[0].iov_len = HDR_BYTES;
		if (p->size > HDR_BYTES) {
			iov[1].iov_base = (void *)(uintptr_t)(src + HDR_BYTES);
			iov[1].iov_len = p->size - HDR_BYTES;
			n = 2;
		}
	}
	return sg_send(p->ep, p->assoc, stream, flags, seq, iov, n);
}

/* Send @seq, polling through back-pressure. @return 0 or -errno. */
static int send_data_wait(struct perf *p, uint32_t seq)
{
	int rc;

	for (;;) {
		if (p->lost || timed_out(p))
			return -ETIMEDOUT;
		if (sg_send_busy(p->ep)) {
			pump(p);
			continue;
		}
		rc = send_data(p, seq);
		if (rc == 0 || rc == -EINPROGRESS)
			return 0;
		if (rc != -EAGAIN) {
			fprintf(stderr, "sdp-perf: sg_send seq %u: %s\n", seq,
				strerror(-rc));
			return rc;
		}
		pump(p);
	}
}

/* ---- receiving and verification --------------------------------------- */

static int verify_init(struct perf *p)
{
	struct verify *v = &p->v;
	uint32_t s;

	memset(v, 0, sizeof(*v));
	v->seen = calloc((p->count + 7) / 8, 1);
	v->next_seq = calloc(p->streams, sizeof(*v->next_seq));
	if (v->seen == NULL || v->next_seq == NULL)
		return -ENOMEM;
	for (s = 0; s < p->streams; s++)
		v->next_seq[s] = s;
	return 0;
}

static void verify_free(struct verify *v)
{
	free(v->seen);
	free(v->next_seq);
	v->seen = NULL;
	v->next_seq = NULL;
}

/* @return true when every byte of @m is what the sender of @seq wrote. */
static bool msg_bytes_ok(const struct perf *p, const struct sg_msg_desc *m,
			 uint32_t seq)
{
	const uint8_t *ref = p->pattern + pattern_off(seq);
	bool has_hdr = p->size >= HDR_BYTES, crc_started = false;
	uint8_t hdr_bytes[HDR_BYTES];
	const struct sg_msg_desc *s;
	struct msg_hdr h;
	uint32_t pos = 0, crc = 0;

	if (m->msg_len != p->size || (m->flags & SG_MSG_PARTIAL) != 0)
		return false;
	for (s = m; s != NULL; s = s->next) {
		uint32_t i = 0, n = s->len;

		if (pos + n > p->size)
			return false;
		while (has_hdr && pos < HDR_BYTES && i < n)
			hdr_bytes[pos++] = s->data[i++];
		if (i == n)
			continue;
		if (memcmp(s->data + i, ref + pos, n - i) != 0)
			return false;
		if (has_hdr) {
			uint32_t c = dp_crc32c(DP_CRC_ISAL, s->data + i, n - i);

			crc = crc_started ? crc32c_combine(crc, c, n - i) : c;
			crc_started = true;
		}
		pos += n - i;
	}
	if (pos != p->size)
		return false;
	if (!has_hdr)
		return true;
	memcpy(&h, hdr_bytes, sizeof(h));
	if (!crc_started)
		crc = dp_crc32c(DP_CRC_ISAL, hdr_bytes, 0);
	return h.magic == PERF_MAGIC && h.seq == seq && h.len == p->size &&
	       h.crc == crc;
}

/* Account data message @m (not released here). @return its seq, or
 * UINT32_MAX when it is not a valid data message of this test. */
static uint32_t verify_msg(struct perf *p, const struct sg_msg_desc *m)
{
	struct verify *v = &p->v;
	uint32_t seq = m->ppid;
	uint64_t now = dp_tsc();

	if (v->first_tsc == 0)
		v->first_tsc = now;
	v->last_tsc = now;
	if (seq >= p->count || m->stream != seq % p->streams ||
	    (v->seen[seq / 8] & (1u << (seq % 8))) != 0) {
		v->dup++;
		return UINT32_MAX;
	}
	v->seen[seq / 8] |= (uint8_t)(1u << (seq % 8));
	if (!p->unordered) {
		if (seq != v->next_seq[m->stream])
			v->order_err++;
		v->next_seq[m->stream] = (uint64_t)seq + p->streams;
	}
	if (!msg_bytes_ok(p, m, seq)) {
		v->bad++;
		return UINT32_MAX;
	}
	v->msgs_ok++;
	v->bytes_ok += m->msg_len;
	return seq;
}

static uint64_t verify_missing(const struct perf *p)
{
	uint64_t got = 0, i;

	if (p->v.seen == NULL) /* no test was started */
		return p->count;
	for (i = 0; i < p->count; i++)
		got += (p->v.seen[i / 8] >> (i % 8)) & 1;
	return p->count - got;
}

/* Copy a (small) control message out of its chain. @return bytes. */
static uint32_t ctl_copy(const struct sg_msg_desc *m, void *buf,
			 uint32_t cap)
{
	uint32_t off = 0;

	for (; m != NULL && off < cap; m = m->next) {
		uint32_t n = m->len < cap - off ? m->len : cap - off;

		memcpy((uint8_t *)buf + off, m->data, n);
		off += n;
	}
	return off;
}

/* ---- report ------------------------------------------------------------ */

static void print_stats_json(const struct perf *p, FILE *f)
{
	struct sg_stats sg;
	struct dp_stats dp;
	char buf[2048];

	sg_ep_stats(p->ep, &sg);
	dp_port_stats(p->port, &dp);
	fprintf(f, "\"sg\": {\"msgs_out\": %" PRIu64 ", \"bytes_out\": %" PRIu64
		", \"msgs_in\": %" PRIu64 ", \"bytes_in\": %" PRIu64
		", \"pkts_in\": %" PRIu64 ", \"pkts_out\": %" PRIu64
		", \"rx_copies\": %" PRIu64 ", \"rx_copy_input_bytes\": %" PRIu64
		", \"rx_copy_recv_bytes\": %" PRIu64
		", \"rx_backpressure\": %" PRIu64
		", \"tx_backpressure\": %" PRIu64 ", \"tx_drops\": %" PRIu64
		", \"tx_nobufs\": %" PRIu64
		", \"rx_not_sctp\": %" PRIu64 ", \"timer_runs\": %" PRIu64
		", \"crc_drops\": %" PRIu64 ", \"tx_direct_pkts\": %" PRIu64
		", \"tx_copy_bytes\": %" PRIu64 ", \"tx_chain_pkts\": %" PRIu64
		", \"tx_chain_ref_bytes\": %" PRIu64
		", \"tx_chain_copy_bytes\": %" PRIu64
		", \"tx_direct_bytes\": %" PRIu64 ", \"rx_ext_pkts\": %" PRIu64
		", \"rx_ext_bytes\": %" PRIu64 ", \"rx_ext_pool_low\": %" PRIu64
		", \"peer_gone_aborts\": %" PRIu64 ", \"tx_chain_segs\": %"
		PRIu64 ", \"tx_cluster_bytes\": %" PRIu64 ", \"tx_clusters_held\": %"
		PRIu64 "}, ",
		sg.msgs_out, sg.bytes_out, sg.msgs_in, sg.bytes_in, sg.pkts_in,
		sg.pkts_out, sg.rx_copies, sg.rx_copy_input_bytes,
		sg.rx_copy_recv_bytes, sg.rx_backpressure,
		sg.tx_backpressure, sg.tx_drops, sg.tx_nobufs, sg.rx_not_sctp,
		sg.timer_runs, sg.crc_drops, sg.tx_direct_pkts,
		sg.tx_copy_bytes, sg.tx_chain_pkts, sg.tx_chain_ref_bytes,
		sg.tx_chain_copy_bytes, sg.tx_direct_bytes, sg.rx_ext_pkts,
		sg.rx_ext_bytes, sg.rx_ext_pool_low, sg.peer_gone_aborts,
		sg.tx_chain_segs, sg.tx_cluster_bytes, sg.tx_clusters_held);
	sg_stack_stats_json(buf, sizeof(buf));
	fprintf(f, "\"usrsctp\": {%s}, ", buf);
	dp_stats_json(&dp, buf, sizeof(buf));
	fprintf(f, "\"dp\": {\"crc\": \"%s\", %s}",
		dp_crc_name(dp_port_crc(p->port)), buf);
}

static void result_fill(struct perf *p, struct ctl_result *r)
{
	struct sg_stats sg;

	sg_ep_stats(p->ep, &sg);
	memset(r, 0, sizeof(*r));
	r->magic = PERF_MAGIC;
	r->msgs_ok = p->v.msgs_ok;
	r->bytes_ok = p->v.bytes_ok;
	r->bad = p->v.bad;
	r->dup = p->v.dup;
	r->order_err = p->v.order_err;
	r->missing = verify_missing(p);
	r->recv_ns = p->v.first_tsc == 0
			     ? 0
			     : (uint64_t)((double)(p->v.last_tsc -
						   p->v.first_tsc) *
					  1e9 / (double)dp_tsc_hz());
	r->crc_drops = sg.crc_drops;
}

static bool result_clean(const struct ctl_result *r, uint64_t count)
{
	return r->msgs_ok == count && r->bad == 0 && r->dup == 0 &&
	       r->order_err == 0 && r->missing == 0;
}

static void print_result_json(const char *name, const struct ctl_result *r,
			      FILE *f)
{
	fprintf(f, "\"%s\": {\"msgs_ok\": %" PRIu64 ", \"bytes_ok\": %" PRIu64
		", \"bad\": %" PRIu64 ", \"dup\": %" PRIu64
		", \"order_err\": %" PRIu64 ", \"missing\": %" PRIu64
		", \"recv_seconds\": %.6f, \"crc_drops\": %" PRIu64 "}, ",
		name, r->msgs_ok, r->bytes_ok, r->bad, r->dup, r->order_err,
		r->missing, (double)r->recv_ns / 1e9, r->crc_drops);
}

/* ---- server ------------------------------------------------------------ */

static int server_start(struct perf *p, const struct sg_msg_desc *m)
{
	struct ctl_start st;

	if (ctl_copy(m, &st, sizeof(st)) != sizeof(st) ||
	    st.magic != PERF_MAGIC ||
	    (st.test != TEST_LAT && st.test != TEST_BW) || st.size == 0 ||
	    st.size > MAX_SIZE || st.count == 0 || st.count > MAX_COUNT ||
	    st.streams == 0 || st.streams != p->streams) {
		fprintf(stderr, "sdp-perf: bad START (streams %u, ours %u: "
			"give both ends the same --streams)\n", st.streams,
			p->streams);
		return -EINVAL;
	}
	p->test = st.test;
	p->size = st.size;
	p->count = st.count;
	p->unordered = st.unordered != 0;
	p->seed = st.seed;
	p->hdr_seq = UINT32_MAX;
	if (pattern_make(p) != 0 || verify_init(p) != 0)
		return -ENOMEM;
	return 0;
}

static int run_server(struct perf *p)
{
	const struct opts *o = p->o;
	struct sg_msg_desc *msgs[RECV_BURST];
	uint64_t hz = dp_tsc_hz(), idle_tsc = hz / 1000 * o->idle_exit_ms;
	uint64_t t_begin = dp_tsc(), fin_tsc = 0, data_tsc = 0;
	uint64_t result_tsc = 0;
	struct ctl_result res;
	bool started = false, done = false, result_sent = false;
	uint32_t pong_seq = UINT32_MAX; /* lat: PONG still to send */
	int rc = 0;

	fprintf(stderr, "sdp-perf: server ready\n");
	memset(&res, 0, sizeof(res));
	while (!done && !p->lost && !timed_out(p)) {
		unsigned int n, i;

		pump(p);
		if (!p->up && dp_tsc() - t_begin > idle_tsc) {
			fprintf(stderr, "sdp-perf: no client within %u ms\n",
				o->idle_exit_ms);
			rc = 1;
			break;
		}
		if (pong_seq != UINT32_MAX && !sg_send_busy(p->ep)) {
			int s = send_data(p, pong_seq);

			if (s == 0 || s == -EINPROGRESS)
				pong_seq = UINT32_MAX;
			else if (s != -EAGAIN)
				p->lost = true;
		}
		n = sg_recv(p->ep, msgs, RECV_BURST);
		for (i = 0; i < n; i++) {
			struct sg_msg_desc *m = msgs[i];

			if (m->stream == p->streams) {
				if (m->ppid == CTL_START && !started) {
					if (server_start(p, m) != 0) {
						rc = 1;
						done = true;
					} else if (send_ctl(p, CTL_READY, "r",
							    1) == 0) {
						started = true;
						fprintf(stderr, "sdp-perf: test "
							"started\n");
					}
				} else if (m->ppid == CTL_FIN) {
					fin_tsc = dp_tsc();
				}
			} else if (started) {
				/* lat: answer first, verify after, so the
				 * RTT does not include our check */
				if (p->test == TEST_LAT &&
				    m->ppid < p->count) {
					int s = sg_send_busy(p->ep)
							? -EAGAIN
							: send_data(p, m->ppid);

					if (s == -EAGAIN)
						pong_seq = m->ppid;
					else if (s != 0 && s != -EINPROGRESS)
						p->lost = true;
				}
				verify_msg(p, m);
				data_tsc = dp_tsc();
			} else {
				p->v.dup++;
			}
			sg_msg_release(m);
		}
		/* The client's FIN leaves after its last sg_send: a full
		 * send buffer (16 MB in the WAN test, at 2% loss a few
		 * hundred KB/s) may still be on its way, so give up only
		 * when nothing arrived for FIN_GRACE_S (CI: 98 of 100 MiB
		 * messages reported 30 s after FIN, the rest still coming) */
		if (fin_tsc != 0 && !result_sent &&
		    (p->v.msgs_ok + p->v.bad >= p->count ||
		     dp_tsc() - RTE_MAX(fin_tsc, data_tsc) >
			     hz * FIN_GRACE_S)) {
			result_fill(p, &res);
			if (send_ctl(p, CTL_RESULT, &res, sizeof(res)) != 0)
				break;
			result_sent = true;
			result_tsc = dp_tsc();
		}
		if (result_sent && p->shut)
			done = true;
		if (result_sent && dp_tsc() - result_tsc > hz * 10)
			done = true; /* client never shut down: still report */
	}
	if (!result_sent)
		result_fill(p, &res);
	/* A client that read the result and left without completing the
	 * SHUTDOWN (its process ended first: ABORT, seen here as lost) took
	 * a clean result with it; a loss before the result voids the test. */
	if (!result_clean(&res, p->count) || !started ||
	    (p->lost && !result_sent))
		rc = 1;
	if (o->json) {
		printf("{\"role\": \"server\", \"test\": \"%s\", \"size\": %u, "
		       "\"messages\": %" PRIu64 ", \"verified\": %s, ",
		       p->test == TEST_BW ? "bw" : "lat", p->size, p->count,
		       rc == 0 ? "true" : "false");
		print_result_json("recv", &res, stdout);
		print_stats_json(p, stdout);
		printf("}\n");
	} else {
		printf("server: %" PRIu64 " of %" PRIu64 " messages verified "
		       "(%" PRIu64 " bad, %" PRIu64 " dup, %" PRIu64
		       " out of order, %" PRIu64 " missing)\n", res.msgs_ok,
		       p->count, res.bad, res.dup, res.order_err, res.missing);
	}
	return rc;
}

/* ---- client ------------------------------------------------------------ */

static int client_connect(struct perf *p)
{
	const struct opts *o = p->o;
	sg_assoc_t a = 0;
	int rc;

	/* The server may still be waiting for its link: on CANT_START (INIT
	 * retries exhausted) try again until the deadline. */
	while (!p->up) {
		if (timed_out(p))
			return -ETIMEDOUT;
		p->cant_start = false;
		rc = sg_connect(p->ep, o->peer_ip_be, o->peer_port, &a);
		if (rc != 0 && rc != -EALREADY) {
			fprintf(stderr, "sdp-perf: sg_connect: %s\n",
				strerror(-rc));
			return rc;
		}
		while (!p->up && !p->cant_start && !timed_out(p))
			pump(p);
	}
	return 0;
}

/* Wait for a control message of @type; copy its body to @buf. */
static int client_wait_ctl(struct perf *p, uint32_t type, void *buf,
			   uint32_t cap, uint64_t *when_tsc)
{
	struct sg_msg_desc *msgs[RECV_BURST];

	for (;;) {
		unsigned int n, i;
		int found = 0;

		if (p->lost || timed_out(p))
			return -ETIMEDOUT;
		pump(p);
		n = sg_recv(p->ep, msgs, RECV_BURST);
		for (i = 0; i < n; i++) {
			if (msgs[i]->stream == p->streams &&
			    msgs[i]->ppid == type && !found) {
				*when_tsc = dp_tsc();
				if (buf != NULL)
					ctl_copy(msgs[i], buf, cap);
				found = 1;
			} else {
				p->v.dup++; /* nothing else is expected */
			}
			sg_msg_release(msgs[i]);
		}
		if (found)
			return 0;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Ping-pong: @rtt gets one TSC delta per measured exchange. */
static int client_lat(struct perf *p, uint64_t warmup, uint64_t *rtt,
		      uint64_t *t0_p, uint64_t *t1_p)
{
	struct sg_msg_desc *msgs[RECV_BURST];
	uint64_t seq;

	for (seq = 0; seq < p->count; seq++) {
		uint64_t t_send, t_recv = 0;
		bool got = false;

		if (seq == warmup)
			*t0_p = dp_tsc();
		t_send = dp_tsc();
		if (send_data_wait(p, (uint32_t)seq) != 0)
			return -1;
		while (!got) {
			unsigned int n, i;

			if (p->lost || timed_out(p))
				return -1;
			pump(p);
			n = sg_recv(p->ep, msgs, RECV_BURST);
			if (n != 0)
				t_recv = dp_tsc();
			for (i = 0; i < n; i++) {
				if (msgs[i]->stream < p->streams &&
				    verify_msg(p, msgs[i]) == seq)
					got = true;
				else if (msgs[i]->stream >= p->streams)
					p->v.dup++;
				sg_msg_release(msgs[i]);
			}
		}
		if (seq >= warmup)
			rtt[seq - warmup] = t_recv - t_send;
	}
	*t1_p = dp_tsc();
	return 0;
}

static int client_bw(struct perf *p, uint64_t *t0_p)
{
	uint64_t seq = 0;

	*t0_p = dp_tsc();
	while (seq < p->count) {
		unsigned int k;

		if (p->lost || timed_out(p))
			return -1;
		for (k = 0; k < SEND_BATCH && seq < p->count; k++) {
			int rc;

			if (sg_send_busy(p->ep))
				break;
			rc = send_data(p, (uint32_t)seq);
			if (rc == -EAGAIN)
				break;
			if (rc != 0 && rc != -EINPROGRESS) {
				fprintf(stderr, "sdp-perf: sg_send seq %" PRIu64
					": %s\n", seq, strerror(-rc));
				return -1;
			}
			seq++;
		}
		pump(p);
	}
	/* the last large send must be fully handed over before FIN */
	while (sg_send_busy(p->ep)) {
		if (p->lost || timed_out(p))
			return -1;
		pump(p);
	}
	return 0;
}

static int run_client(struct perf *p)
{
	const struct opts *o = p->o;
	uint64_t hz = dp_tsc_hz(), warmup = 0, t0 = 0, t1 = 0, t_ready = 0;
	uint64_t t_result = 0, measured;
	uint64_t *rtt = NULL;
	struct ctl_start st;
	struct ctl_result res;
	bool ok = false, have_result = false;
	double secs = 0, gbps = 0, us = 1e6 / (double)hz;
	int rc;

	p->hdr_seq = UINT32_MAX;
	if (o->test == TEST_LAT) {
		warmup = o->warmup != UINT64_MAX
				 ? o->warmup
				 : (p->count / 10 < 100 ? p->count / 10 : 100);
		p->count += warmup;
	}
	if (p->count > MAX_COUNT) {
		fprintf(stderr, "sdp-perf: %" PRIu64 " messages (warm-up "
			"included) above %u: lower --count\n", p->count,
			MAX_COUNT);
		return 2;
	}
	measured = p->count - warmup;
	rtt = calloc(measured ? measured : 1, sizeof(*rtt));
	if (rtt == NULL || pattern_make(p) != 0 || verify_init(p) != 0) {
		free(rtt);
		return 3;
	}
	memset(&res, 0, sizeof(res));
	rc = client_connect(p);
	if (rc != 0) {
		fprintf(stderr, "sdp-perf: no association with the server: "
			"%s\n", strerror(-rc));
		goto out;
	}
	memset(&st, 0, sizeof(st));
	st.magic = PERF_MAGIC;
	st.test = p->test;
	st.size = p->size;
	st.streams = p->streams;
	st.unordered = p->unordered;
	st.count = p->count;
	st.seed = p->seed;
	if (send_ctl(p, CTL_START, &st, sizeof(st)) != 0 ||
	    client_wait_ctl(p, CTL_READY, NULL, 0, &t_ready) != 0) {
		fprintf(stderr, "sdp-perf: server did not accept the test\n");
		goto out;
	}
	if (p->test == TEST_LAT)
		rc = client_lat(p, warmup, rtt, &t0, &t1);
	else
		rc = client_bw(p, &t0);
	if (rc != 0) {
		fprintf(stderr, "sdp-perf: test aborted after %" PRIu64
			" verified messages\n", p->v.msgs_ok);
		goto out;
	}
	if (send_ctl(p, CTL_FIN, "f", 1) != 0 ||
	    client_wait_ctl(p, CTL_RESULT, &res, sizeof(res),
			    &t_result) != 0) {
		fprintf(stderr, "sdp-perf: no RESULT from the server\n");
		goto out;
	}
	if (p->test == TEST_BW)
		t1 = t_result; /* the server has verified the last byte */
	have_result = true;
	ok = result_clean(&res, p->count) && !p->lost &&
	     (p->test == TEST_BW ||
	      (p->v.msgs_ok == p->count && p->v.bad == 0 &&
	       p->v.dup == 0 && p->v.order_err == 0));
	sg_disconnect(p->ep, p->assoc);
	{
		uint64_t end = dp_tsc() + hz * 5;

		while (!p->shut && !p->lost && dp_tsc() < end && !stop)
			pump(p);
	}
out:
	if (p->test == TEST_LAT) {
		/* t0..t1: the measured exchanges only */
		secs = t1 > t0 && t0 != 0 ? (double)(t1 - t0) / hz : 0;
		gbps = secs > 0 ? (double)measured * p->size * 2 * 8 / secs /
					  1e9
				: 0;
	} else {
		secs = t1 > t0 && have_result ? (double)(t1 - t0) / hz : 0;
		gbps = secs > 0 ? (double)res.bytes_ok * 8 / secs / 1e9 : 0;
	}
	qsort(rtt, ok ? measured : 0, sizeof(*rtt), cmp_u64);
	if (o->json) {
		printf("{\"role\": \"client\", \"test\": \"%s\", \"size\": %u, "
		       "\"streams\": %u, \"unordered\": %s, \"mtu\": %u, "
		       "\"busy\": %s, \"messages\": %" PRIu64 ", \"bytes\": %"
		       PRIu64 ", \"seconds\": %.6f, \"gbps\": %.4f, "
		       "\"verified\": %s, ",
		       p->test == TEST_BW ? "bw" : "lat", p->size, p->streams,
		       p->unordered ? "true" : "false", dp_port_mtu(p->port),
		       o->busy ? "true" : "false", p->count,
		       (uint64_t)p->count * p->size, secs, gbps,
		       ok ? "true" : "false");
		if (p->test == TEST_LAT && ok && measured > 0) {
			printf("\"warmup\": %" PRIu64 ", \"latency_us_p50\": "
			       "%.3f, \"latency_us_p99\": %.3f, \"rtt_us_min\":"
			       " %.3f, \"rtt_us_p50\": %.3f, \"rtt_us_p99\": "
			       "%.3f, \"rtt_us_max\": %.3f, ", warmup,
			       rtt[measured / 2] * us / 2,
			       rtt[measured * 99 / 100] * us / 2, rtt[0] * us,
			       rtt[measured / 2] * us,
			       rtt[measured * 99 / 100] * us,
			       rtt[measured - 1] * us);
		} else {
			printf("\"latency_us_p50\": null, \"latency_us_p99\": "
			       "null, ");
		}
		printf("\"recv_local\": {\"msgs_ok\": %" PRIu64 ", \"bad\": %"
		       PRIu64 ", \"dup\": %" PRIu64 ", \"order_err\": %" PRIu64
		       "}, ", p->v.msgs_ok, p->v.bad, p->v.dup,
		       p->v.order_err);
		print_result_json("peer", &res, stdout);
		print_stats_json(p, stdout);
		printf("}\n");
	} else {
		printf("sdp-perf %s: %" PRIu64 " messages of %u B over %u "
		       "stream(s)%s, %s\n",
		       p->test == TEST_BW ? "bw" : "lat", p->count, p->size,
		       p->streams, p->unordered ? " unordered" : "",
		       ok ? "all verified" : "VERIFICATION FAILED");
		if (p->test == TEST_LAT && ok && measured > 0)
			printf("  one-way latency us: p50 %.3f p99 %.3f "
			       "(rtt p50 %.3f p99 %.3f)\n",
			       rtt[measured / 2] * us / 2,
			       rtt[measured * 99 / 100] * us / 2,
			       rtt[measured / 2] * us,
			       rtt[measured * 99 / 100] * us);
		printf("  %.4f Gbit/s over %.3f s\n", gbps, secs);
		printf("  server: %" PRIu64 " ok, %" PRIu64 " bad, %" PRIu64
		       " dup, %" PRIu64 " out of order, %" PRIu64
		       " missing\n", res.msgs_ok, res.bad, res.dup,
		       res.order_err, res.missing);
	}
	free(rtt);
	return ok ? 0 : 1;
}

/* ---- main -------------------------------------------------------------- */

static int parse_u64_opt(const char *name, const char *text, uint64_t lo,
			 uint64_t hi, uint64_t *v_p)
{
	if (sdp_parse_u64(text, 0, v_p) != 0 || *v_p < lo || *v_p > hi) {
		fprintf(stderr, "sdp-perf: %s '%s' out of range: use %" PRIu64
			"..%" PRIu64 "\n", name, text, lo, hi);
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "dp", required_argument, NULL, 'd' },
		{ "sg", required_argument, NULL, 'g' },
		{ "server", no_argument, NULL, 's' },
		{ "peer", required_argument, NULL, 'p' },
		{ "peer-port", required_argument, NULL, 'P' },
		{ "test", required_argument, NULL, 'T' },
		{ "size", required_argument, NULL, 'S' },
		{ "count", required_argument, NULL, 'c' },
		{ "total", required_argument, NULL, 'B' },
		{ "streams", required_argument, NULL, 'n' },
		{ "unordered", no_argument, NULL, 'u' },
		{ "crc", required_argument, NULL, 'C' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "seed", required_argument, NULL, 'e' },
		{ "busy", no_argument, NULL, 'b' },
		{ "idle-exit-ms", required_argument, NULL, 'i' },
		{ "deadline-s", required_argument, NULL, 'D' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { .peer_port = 5000, .test = TEST_LAT, .size = 8,
			  .total_bytes = DEFAULT_TOTAL, .streams = 1,
			  .warmup = UINT64_MAX, .idle_exit_ms = 60000,
			  .deadline_s = 900 };
	struct perf p;
	/* static: struct dp_config is ~48 KB (static ARP table), not for the
	 * stack; main runs once. */
	static struct dp_config cfg;
	struct sg_config scfg;
	uint64_t v;
	int c, rc;

	memset(&p, 0, sizeof(p));
	o.seed = dp_tsc() ^ ((uint64_t)getpid() << 32);
	while ((c = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		rc = 0;
		switch (c) {
		case 'd':
			o.dp = optarg;
			break;
		case 'g':
			o.sg = optarg;
			break;
		case 's':
			o.server = true;
			break;
		case 'p':
			if (dp_parse_ip(optarg, &o.peer_ip_be) != 0) {
				fprintf(stderr, "sdp-perf: --peer '%s' is not "
					"an IPv4 address\n", optarg);
				return 2;
			}
			break;
		case 'P':
			rc = parse_u64_opt("--peer-port", optarg, 1, 65535, &v);
			o.peer_port = (uint16_t)v;
			break;
		case 'T':
			if (strcmp(optarg, "lat") == 0) {
				o.test = TEST_LAT;
			} else if (strcmp(optarg, "bw") == 0) {
				o.test = TEST_BW;
			} else {
				fprintf(stderr, "sdp-perf: --test '%s': use lat "
					"or bw\n", optarg);
				return 2;
			}
			break;
		case 'S':
			rc = parse_u64_opt("--size", optarg, 1, MAX_SIZE, &v);
			o.size = (uint32_t)v;
			break;
		case 'c':
			rc = parse_u64_opt("--count", optarg, 1, MAX_COUNT,
					   &o.count);
			break;
		case 'B':
			rc = parse_u64_opt("--total", optarg, 1, 1ull << 40,
					   &o.total_bytes);
			break;
		case 'n':
			rc = parse_u64_opt("--streams", optarg, 1, 1024, &v);
			o.streams = (uint32_t)v;
			break;
		case 'u':
			o.unordered = true;
			break;
		case 'C':
			o.crc = optarg;
			break;
		case 'w':
			rc = parse_u64_opt("--warmup", optarg, 0, MAX_COUNT,
					   &o.warmup);
			break;
		case 'e':
			rc = parse_u64_opt("--seed", optarg, 0, UINT64_MAX,
					   &o.seed);
			break;
		case 'b':
			o.busy = true;
			break;
		case 'i':
			rc = parse_u64_opt("--idle-exit-ms", optarg, 1,
					   3600000, &v);
			o.idle_exit_ms = (uint32_t)v;
			break;
		case 'D':
			rc = parse_u64_opt("--deadline-s", optarg, 1, 86400,
					   &v);
			o.deadline_s = (uint32_t)v;
			break;
		case 'j':
			o.json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
		if (rc != 0)
			return 2;
	}
	if (o.dp == NULL || (!o.server && o.peer_ip_be == 0)) {
		fprintf(stderr, "sdp-perf: --dp and one of --server or --peer "
			"are required\n");
		usage(stderr);
		return 2;
	}
	crc_combine_init();
	if (!crc_combine_selftest()) {
		fprintf(stderr, "sdp-perf: CRC32c combine self-test failed\n");
		return 3;
	}
	if (dp_config_parse(o.dp, &cfg) != 0 ||
	    sg_config_parse(o.sg, &scfg) != 0)
		return 2;
	if (o.crc != NULL && dp_crc_parse(o.crc, &cfg.crc) != 0) {
		fprintf(stderr, "sdp-perf: --crc '%s': use auto, offload, isal,"
			" sse42, table or none\n", o.crc);
		return 2;
	}
	if (o.busy)
		cfg.idle_sleep_us = 0;
	/* data streams plus the control stream */
	scfg.streams = (uint16_t)(o.streams + 1);
	if (o.size > scfg.max_msg_bytes) {
		fprintf(stderr, "sdp-perf: --size %u above the SCTP layer's "
			"max_msg %u: raise max_msg= in --sg\n", o.size,
			scfg.max_msg_bytes);
		return 2;
	}
	if (sg_config_check(&scfg) != 0)
		return 2;

	p.o = &o;
	p.test = o.test;
	p.size = o.size;
	p.streams = o.streams;
	p.unordered = o.unordered;
	p.seed = o.seed;
	p.count = o.count != 0 ? o.count
	       : o.test == TEST_LAT ? 10000
				    : (o.total_bytes + o.size - 1) / o.size;
	if (p.count > MAX_COUNT)
		p.count = MAX_COUNT; /* documented cap of --total */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	if (dp_start(&cfg, &p.port) != 0)
		return 3;
	if (sg_ep_open(p.port, &scfg, &p.ep) != 0) {
		rc = 3;
		goto err_port;
	}
	dp_idle_init(&p.idle, cfg.idle_polls, cfg.idle_sleep_us);
	p.deadline_tsc = dp_tsc() + dp_tsc_hz() * o.deadline_s;
	rc = o.server ? run_server(&p) : run_client(&p);
	verify_free(&p.v);
	free(p.pattern);
	sg_ep_close(p.ep);
err_port:
	dp_stop(p.port);
	return rc;
}
