/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sctp_loop.c - sctp-loop-ep: usrsctp's own ceiling.  Two usrsctp sockets
 * in ONE process and one thread, connected over AF_CONN by an in-memory
 * packet FIFO instead of a NIC: what sdp-perf would reach if the dataplane,
 * the second process and the wire cost nothing.
 *
 *   client socket -sendv-> usrsctp -conn_output-> copy into FIFO
 *   main loop: FIFO -> usrsctp_conninput(other side) -> server socket
 *              -> usrsctp_recvv (and the reverse for SACKs / replies)
 *
 * conn_output runs inside usrsctp (also re-entrantly from conninput), so it
 * only copies the packet into the FIFO; the loop feeds packets back outside
 * any usrsctp call.  CRC32c: usrsctp's offload flag is set, so it neither
 * computes nor checks the CRC; with --crc isal the loop fills it with ISA-L
 * on output and checks it on input, as the dataplane does.  Socket options
 * match the sg layer's: SCTP_NODELAY, explicit EOR, the same send/receive
 * buffers, and --pathmtu as sg sets it: link MTU - 28 (IPv4 + the room sg
 * keeps for UDP encapsulation) - 12 (SCTP common header), e.g. 1460, 8960.
 *
 * --direct: usrsctp writes each packet into the FIFO slot's buffer itself
 * (usrsctp_set_conn_output_alloc, as sg does with its mbufs): no copy in
 * conn_output.
 * --chain: each packet of usrsctp's comes as its mbuf chain
 * (usrsctp_set_conn_output_chain, usrsctp-patches/0004, as sg sends
 * packets of tx_chain_min bytes and more): gathered into the FIFO slot
 * from usrsctp's buffers, as memif's TX gathers a chained mbuf into its
 * ring, then given back: one copy per byte where the default (conn_output
 * copying usrsctp's linear buffer) has two, as sg's 0002 path has (into
 * the mbuf, then memif's copy into the ring).
 * --rx-ext: usrsctp takes each packet in without copying it
 * (usrsctp_conninput_ext, usrsctp-patches/0003, as sg does with rx_ext):
 * it keeps the packet's buffer until the data are read and gives it back
 * through a callback.  Packet buffers come from a LIFO pool grown on
 * demand (like a DPDK mempool), so a buffer usrsctp keeps is not the
 * FIFO's to reuse.
 * --tx-cluster B: a send copies the user's data into buffers of up to B
 * bytes instead of 2048-byte clusters (usrsctp_set_tx_cluster_bytes,
 * usrsctp-patches/0005, as sg's tx_cluster); "chain_segs" counts the
 * pieces of the "chain_pkts" packets of 1024 bytes or more (--chain).
 * --test bw: --count messages of --size bytes, client to server, as fast
 * as usrsctp takes them; goodput = bytes received / time.
 * --test lat: ping-pong of --size messages; one-way latency = RTT/2.
 * --sack-delay MS: SCTP_DELAYED_SACK as sg sets it (0 = SACK every DATA
 * packet, the transport's default; else every 2nd packet or MS); without
 * it usrsctp's default (200 ms, every 2nd).  --max-burst N: SCTP_MAX_BURST
 * (0 = no limit; usrsctp's default 4).  --sack-immediate: every message
 * with SCTP_SACK_IMMEDIATELY, as sg sends it (sack_immediate=1): the
 * message's last packet carries the I bit and is SACKed at once.
 * Output: one JSON object on stdout.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <isa-l/crc.h>
#include <usrsctp.h>

#define FIFO_SLOTS_MAX 8192u	/* > send buffer / smallest packet */
#define SLOT_BYTES 9216u	/* largest SCTP packet (MTU 9000) */
#define SCTP_PORT 5001
#define CRC_OFF 8		/* checksum field in the common header */

struct pkt {
	uint8_t *data;		/* a SLOT_BYTES buffer of the pool */
	uint32_t len;
	uint8_t to;		/* 0 = client's address, 1 = server's */
};

/* Packet buffers: a LIFO stack, grown on demand up to BUFS_MAX. */
#define BUFS_MAX (2u * FIFO_SLOTS_MAX)
static uint8_t *buf_free[BUFS_MAX];
static uint32_t buf_nfree, buf_total;
static uint8_t *alloc_pending; /* given to usrsctp by conn_output_alloc */
static bool rx_ext;
static uint64_t ext_pkts, ext_held_max;

static uint8_t *buf_get(void)
{
	if (buf_nfree != 0)
		return buf_free[--buf_nfree];
	if (buf_total == BUFS_MAX)
		return NULL;
	buf_total++;
	return malloc(SLOT_BYTES);
}

static void buf_put(uint8_t *b)
{
	buf_free[buf_nfree++] = b;
}

static struct pkt *fifo;
/* --fifo-slots: the "wire" between the two sockets, a ring of packet slots
 * like a NIC's or memif's descriptor ring (1024 by default, memif's ring
 * size).  A ring of FIFO_SLOTS_MAX slots (75 MB) never stays in cache:
 * every packet was then written to and read from cold memory, and the
 * loop measured this VM's DRAM more than usrsctp (MTU 9000: ~15 against
 * ~19 Gbit/s with 1024 slots; no drops either way). */
static uint32_t fifo_slots = 1024;
static uint32_t fifo_head, fifo_tail; /* head: next out; tail: next in */
static uint64_t fifo_drops, pkts, crc_bad;
static bool use_crc;
static int sack_delay_ms = -1; /* -1: usrsctp's default (200 ms, every 2nd) */
static int max_burst = -1;     /* -1: usrsctp's default (4) */
static bool sack_immediate;    /* SCTP_SACK_IMMEDIATELY on every message */
static int addr_c = 0, addr_s = 1; /* AF_CONN handles: their addresses */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint32_t crc32c(const uint8_t *p, size_t len)
{
	return crc32_iscsi((unsigned char *)(uintptr_t)p, (int)len,
			   0xffffffffu) ^ 0xffffffffu;
}

/* --direct: usrsctp writes each packet straight into the FIFO's next slot
 * (usrsctp_set_conn_output_alloc, usrsctp-patches/0002), as the transport
 * has it write into a DPDK mbuf; conn_output then copies nothing. */
#ifdef USRSCTP_HAVE_CONN_OUTPUT_ALLOC
static void *conn_output_alloc(void *addr, size_t len)
{
	(void)addr;
	if (fifo_tail - fifo_head == fifo_slots || len > SLOT_BYTES)
		return NULL; /* malloc; conn_output drops it */
	alloc_pending = buf_get();
	return alloc_pending; /* NULL: malloc */
}

static void conn_output_free(void *addr, void *buf)
{
	(void)addr;
	if (buf == alloc_pending && buf != NULL)
		buf_put(buf); /* conn_output did not take it */
	alloc_pending = NULL;
}
#endif

static int conn_output(void *addr, void *buf, size_t len, uint8_t tos,
		       uint8_t set_df);

/* --chain: packets of 1024 bytes or more (sg's tx_chain_min) and their
 * pieces */
static uint64_t chain_pkts, chain_segs;

#ifdef USRSCTP_HAVE_CONN_OUTPUT_CHAIN
/* --chain: gather the pieces into the slot (conn_output then copies
 * nothing: the buffer is the slot), give the chain back. */
static int conn_output_chain(void *addr, const struct usrsctp_conn_seg *segs,
			     int nsegs, size_t len, uint8_t tos,
			     uint8_t set_df, void *chain)
{
	uint8_t *slot, *d;
	int i, rc;

	if (fifo_tail - fifo_head == fifo_slots || len > SLOT_BYTES)
		return USRSCTP_CONN_CHAIN_DECLINED; /* conn_output drops */
	/* a buffer of the pool, as --direct's (the slots own none since
	 * --rx-ext's pool: the slot's data pointer may be NULL) */
	slot = buf_get();
	if (slot == NULL)
		return USRSCTP_CONN_CHAIN_DECLINED;
	for (i = 0, d = slot; i < nsegs; i++) {
		memcpy(d, segs[i].base, segs[i].len);
		d += segs[i].len;
	}
	if (len >= 1024) {
		chain_pkts++;
		chain_segs += (uint64_t)nsegs;
	}
	alloc_pending = slot; /* conn_output takes it */
	rc = conn_output(addr, slot, len, tos, set_df);
	usrsctp_conn_chain_free(chain);
	return rc;
}
#endif

/* usrsctp's output: @addr is the SENDING side's handle; the buffer is
 * freed when we return, so copy it (unless it is the FIFO slot). */
static int conn_output(void *addr, void *buf, size_t len, uint8_t tos,
		       uint8_t set_df)
{
	struct pkt *p;

	(void)tos;
	(void)set_df;
	if (fifo_tail - fifo_head == fifo_slots || len > SLOT_BYTES) {
		fifo_drops++;
		return 0; /* lost, like a full NIC ring */
	}
	p = &fifo[fifo_tail % fifo_slots];
	if (buf != NULL && buf == alloc_pending) {
		p->data = buf; /* usrsctp wrote it there: take it */
		alloc_pending = NULL;
	} else {
		p->data = buf_get();
		if (p->data == NULL) {
			fifo_drops++;
			return 0;
		}
		memcpy(p->data, buf, len);
	}
	p->len = (uint32_t)len;
	p->to = addr == &addr_c ? 1 : 0;
	if (use_crc) {
		uint32_t c;

		memset(p->data + CRC_OFF, 0, 4);
		c = crc32c(p->data, len);
		memcpy(p->data + CRC_OFF, &c, 4); /* little-endian on x86, as
						   * RFC 4960 wants */
	}
	fifo_tail++;
	return 0;
}

#ifdef USRSCTP_HAVE_CONNINPUT_EXT
static uint64_t ext_held; /* --rx-ext: buffers usrsctp keeps now */

/* --rx-ext: usrsctp let go of a packet it kept. */
static void ext_free(void *buf, void *arg)
{
	(void)arg;
	ext_held--;
	buf_put(buf);
}
#endif

/* Feed at most @budget queued packets to their destination. */
static unsigned int fifo_drain(unsigned int budget)
{
	unsigned int n = 0;

	while (fifo_head != fifo_tail && n < budget) {
		struct pkt *p = &fifo[fifo_head % fifo_slots];

		fifo_head++;
		n++;
		pkts++;
		if (use_crc) {
			uint32_t got, want;

			memcpy(&got, p->data + CRC_OFF, 4);
			memset(p->data + CRC_OFF, 0, 4);
			want = crc32c(p->data, p->len);
			if (got != want) {
				crc_bad++;
				buf_put(p->data);
				continue;
			}
		}
		/* conninput may call conn_output, which appends behind us;
		 * the slot we read stays untouched until fifo_slots more. */
#ifdef USRSCTP_HAVE_CONNINPUT_EXT
		if (rx_ext) {
			ext_held++;
			if (ext_held > ext_held_max)
				ext_held_max = ext_held;
			if (usrsctp_conninput_ext(p->to ? (void *)&addr_s :
							  (void *)&addr_c,
						  p->data, p->len, 0,
						  ext_free, NULL) == 0) {
				ext_pkts++;
				continue;
			}
			ext_held--;
		}
#endif
		usrsctp_conninput(p->to ? (void *)&addr_s : (void *)&addr_c,
				  p->data, p->len, 0);
		buf_put(p->data);
	}
	return n;
}

static uint64_t timer_last_ns;

static void timers(void)
{
	uint64_t t = now_ns();

	if (t - timer_last_ns >= 1000000) {
		usrsctp_handle_timers((uint32_t)((t - timer_last_ns) /
						 1000000));
		timer_last_ns += (t - timer_last_ns) / 1000000 * 1000000;
	}
}

static void pump(void)
{
	fifo_drain(64);
	timers();
}

static void die(const char *what)
{
	fprintf(stderr, "sctp-loop-ep: %s: %s\n", what, strerror(errno));
	exit(3);
}

static struct socket *make_socket(void *addr, uint32_t buf_bytes,
				  uint32_t pathmtu)
{
	struct socket *so;
	struct sockaddr_conn sc;
	struct sctp_paddrparams pp;
	int one = 1, b = (int)buf_bytes;

	so = usrsctp_socket(AF_CONN, SOCK_STREAM, IPPROTO_SCTP, NULL, NULL, 0,
			    NULL);
	if (so == NULL)
		die("usrsctp_socket");
	usrsctp_set_non_blocking(so, 1);
	if (usrsctp_setsockopt(so, SOL_SOCKET, SO_SNDBUF, &b, sizeof(b)) ||
	    usrsctp_setsockopt(so, SOL_SOCKET, SO_RCVBUF, &b, sizeof(b)) ||
	    usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_NODELAY, &one,
			       sizeof(one)) ||
	    usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_EXPLICIT_EOR, &one,
			       sizeof(one)))
		die("usrsctp_setsockopt");
	memset(&pp, 0, sizeof(pp));
	pp.spp_address.ss_family = AF_CONN;
	pp.spp_flags = SPP_PMTUD_DISABLE;
	pp.spp_pathmtu = pathmtu;
	if (usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_PEER_ADDR_PARAMS, &pp,
			       sizeof(pp)))
		die("SCTP_PEER_ADDR_PARAMS");
	if (sack_delay_ms >= 0) {
		/* as sg sets it: 0 = SACK every DATA packet at once */
		struct sctp_sack_info sack;

		memset(&sack, 0, sizeof(sack));
		sack.sack_assoc_id = SCTP_FUTURE_ASSOC;
		sack.sack_delay = (uint32_t)sack_delay_ms;
		sack.sack_freq = sack_delay_ms == 0 ? 1 : 2;
		if (usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_DELAYED_SACK,
				       &sack, sizeof(sack)))
			die("SCTP_DELAYED_SACK");
	}
	if (max_burst >= 0) {
		struct sctp_assoc_value av;

		av.assoc_id = SCTP_FUTURE_ASSOC;
		av.assoc_value = (uint32_t)max_burst;
		if (usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_MAX_BURST, &av,
				       sizeof(av)))
			die("SCTP_MAX_BURST");
	}
	memset(&sc, 0, sizeof(sc));
	sc.sconn_family = AF_CONN;
	sc.sconn_port = htons(SCTP_PORT);
	sc.sconn_addr = addr;
	if (usrsctp_bind(so, (struct sockaddr *)&sc, sizeof(sc)) < 0)
		die("usrsctp_bind");
	return so;
}

/* Offer one message; @return true when usrsctp took it whole. */
static bool send_msg(struct socket *so, const uint8_t *buf, size_t len)
{
	struct sctp_sndinfo si;

	memset(&si, 0, sizeof(si));
	si.snd_flags = SCTP_EOR | (sack_immediate ? SCTP_SACK_IMMEDIATELY : 0);
	return usrsctp_sendv(so, buf, len, NULL, 0, &si, sizeof(si),
			     SCTP_SENDV_SNDINFO, 0) == (ssize_t)len;
}

/* Read what is there; @return complete messages, bytes in @bytes_p. */
static unsigned int recv_msgs(struct socket *so, uint8_t *buf, size_t cap,
			      uint64_t *bytes_p)
{
	unsigned int msgs = 0;

	for (;;) {
		struct sctp_rcvinfo ri;
		socklen_t ilen = sizeof(ri);
		unsigned int itype = 0;
		int flags = 0;
		ssize_t n = usrsctp_recvv(so, buf, cap, NULL, NULL, &ri, &ilen,
					  &itype, &flags);

		if (n <= 0)
			return msgs;
		*bytes_p += (uint64_t)n;
		if (flags & MSG_EOR)
			msgs++;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "test", required_argument, NULL, 't' },
		{ "size", required_argument, NULL, 's' },
		{ "count", required_argument, NULL, 'c' },
		{ "pathmtu", required_argument, NULL, 'm' },
		{ "buf", required_argument, NULL, 'b' },
		{ "crc", required_argument, NULL, 'r' },
		{ "fifo-slots", required_argument, NULL, 'f' },
		{ "sack-delay", required_argument, NULL, 'd' },
		{ "max-burst", required_argument, NULL, 'x' },
		{ "sack-immediate", no_argument, NULL, 'i' },
		{ "direct", no_argument, NULL, 'D' },
		{ "chain", no_argument, NULL, 'H' },
		{ "rx-ext", no_argument, NULL, 'X' },
		{ "tx-cluster", required_argument, NULL, 'T' },
		{ NULL, 0, NULL, 0 },
	};
	bool lat = false, direct = false, chain = false;
	uint32_t size = 65536, pathmtu = 1460, buf_bytes = 4u << 20;
	long tx_cluster = -1; /* --tx-cluster: usrsctp's default */
	uint64_t count = 4096, sent = 0, got_msgs = 0, got_bytes = 0, t0, t1;
	uint64_t *rtt = NULL, deadline;
	struct socket *sc, *sl, *ss = NULL;
	struct sockaddr_conn peer;
	uint8_t *tx, *rx;
	int c;

	while ((c = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		switch (c) {
		case 't':
			lat = strcmp(optarg, "lat") == 0;
			break;
		case 's':
			size = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'c':
			count = strtoull(optarg, NULL, 0);
			break;
		case 'm':
			pathmtu = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'b':
			buf_bytes = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'r':
			use_crc = strcmp(optarg, "isal") == 0;
			break;
		case 'f':
			fifo_slots = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'd':
			sack_delay_ms = atoi(optarg);
			break;
		case 'x':
			max_burst = atoi(optarg);
			break;
		case 'i':
			sack_immediate = true;
			break;
		case 'D':
			direct = true;
			break;
		case 'H':
			chain = true;
			break;
		case 'T':
			tx_cluster = strtol(optarg, NULL, 0);
			break;
		case 'X':
#ifdef USRSCTP_HAVE_CONNINPUT_EXT
			rx_ext = true;
			break;
#else
			fprintf(stderr, "sctp-loop-ep: --rx-ext needs the "
				"project's usrsctp (usrsctp-patches/0003); "
				"this binary uses another: use "
				"build/bench/sctp-loop-ep\n");
			return 2;
#endif
		default:
			fprintf(stderr, "usage: sctp-loop-ep [--test lat|bw] "
				"[--size B] [--count N] [--pathmtu B] [--buf B]"
				" [--crc none|isal] [--fifo-slots N]"
				" [--sack-delay MS] [--max-burst N]"
				" [--sack-immediate] [--direct] [--chain]"
				" [--rx-ext] [--tx-cluster B]\n");
			return 2;
		}
	}
	if (size == 0 || size > (16u << 20) || count == 0 ||
	    pathmtu + 12 > SLOT_BYTES || fifo_slots < 64 ||
	    fifo_slots > FIFO_SLOTS_MAX) {
		fprintf(stderr, "sctp-loop-ep: bad --size/--count/--pathmtu/"
			"--fifo-slots (64..%u)\n", FIFO_SLOTS_MAX);
		return 2;
	}
	fifo = calloc(fifo_slots, sizeof(*fifo));
	tx = malloc(size);
	rx = malloc(size > 65536 ? size : 65536);
	rtt = calloc(count, sizeof(*rtt));
	if (fifo == NULL || tx == NULL || rx == NULL || rtt == NULL)
		die("malloc");
	memset(tx, 0x5a, size);
	/* Touch every page before the clock starts: a 75 MB calloc is fresh
	 * mmap'd memory, and its first-touch page faults (one per 4 KiB the
	 * first time the ring wraps) were measured as usrsctp's time and
	 * depended on which allocator served the calloc. */
	memset(fifo, 0, (size_t)fifo_slots * sizeof(*fifo));
	for (uint32_t i = 0; i < fifo_slots; i++) {
		uint8_t *b = malloc(SLOT_BYTES);

		if (b == NULL)
			die("malloc");
		memset(b, 0, SLOT_BYTES);
		buf_total++;
		buf_put(b);
	}
	memset(rx, 0, size > 65536 ? size : 65536);
	memset(rtt, 0, count * sizeof(*rtt));

	usrsctp_init_nothreads(0, conn_output, NULL);
	usrsctp_enable_crc32c_offload();
	if (direct) {
#ifdef USRSCTP_HAVE_CONN_OUTPUT_ALLOC
		usrsctp_set_conn_output_alloc(conn_output_alloc,
					      conn_output_free);
#else
		fprintf(stderr, "sctp-loop-ep: --direct needs the project's "
			"usrsctp (usrsctp-patches/0002); this binary uses "
			"another: use build/bench/sctp-loop-ep\n");
		return 2;
#endif
	}
	if (chain) {
#ifdef USRSCTP_HAVE_CONN_OUTPUT_CHAIN
		usrsctp_set_conn_output_chain(conn_output_chain);
#else
		fprintf(stderr, "sctp-loop-ep: --chain needs the project's "
			"usrsctp (usrsctp-patches/0004); this binary uses "
			"another: use build/bench/sctp-loop-ep\n");
		return 2;
#endif
	}
	if (tx_cluster >= 0) {
#ifdef USRSCTP_HAVE_TX_CLUSTER_BYTES
		if (usrsctp_set_tx_cluster_bytes((uint32_t)tx_cluster) != 0) {
			fprintf(stderr, "sctp-loop-ep: --tx-cluster %ld: give "
				"0 or 2048..16777216\n", tx_cluster);
			return 2;
		}
#else
		fprintf(stderr, "sctp-loop-ep: --tx-cluster needs the "
			"project's usrsctp (usrsctp-patches/0005); this binary "
			"uses another: use build/bench/sctp-loop-ep\n");
		return 2;
#endif
	}
	usrsctp_sysctl_set_sctp_ecn_enable(0);
	timer_last_ns = now_ns();
	usrsctp_register_address(&addr_c);
	usrsctp_register_address(&addr_s);
	sc = make_socket(&addr_c, buf_bytes, pathmtu);
	sl = make_socket(&addr_s, buf_bytes, pathmtu);
	if (usrsctp_listen(sl, 1) < 0)
		die("usrsctp_listen");
	memset(&peer, 0, sizeof(peer));
	peer.sconn_family = AF_CONN;
	peer.sconn_port = htons(SCTP_PORT);
	/* AF_CONN addresses are link handles, not hosts: each side names the
	 * peer by its OWN handle (conn_output gets it back and we know where
	 * to deliver); the server learns &addr_s from conninput. */
	peer.sconn_addr = &addr_c;
	if (usrsctp_connect(sc, (struct sockaddr *)&peer, sizeof(peer)) < 0 &&
	    errno != EINPROGRESS)
		die("usrsctp_connect");
	deadline = now_ns() + 10000000000ull;
	while (ss == NULL) {
		pump();
		ss = usrsctp_accept(sl, NULL, NULL);
		if (now_ns() > deadline) {
			fprintf(stderr, "sctp-loop-ep: no association\n");
			return 1;
		}
	}
	usrsctp_set_non_blocking(ss, 1);
	while (!(usrsctp_get_events(sc) & SCTP_EVENT_WRITE))
		pump();

	deadline = now_ns() + 300000000000ull;
	t0 = now_ns();
	if (lat) {
		uint64_t i;

		for (i = 0; i < count && now_ns() < deadline; i++) {
			uint64_t ts = now_ns(), b = 0;

			while (!send_msg(sc, tx, size))
				pump();
			while (recv_msgs(ss, rx, size, &b) == 0)
				pump();
			while (!send_msg(ss, tx, size))
				pump();
			b = 0;
			while (recv_msgs(sc, rx, size, &b) == 0)
				pump();
			rtt[i] = now_ns() - ts;
			got_msgs++;
			got_bytes += size;
		}
		sent = i;
	} else {
		while (got_msgs < count && now_ns() < deadline) {
			if (sent < count && send_msg(sc, tx, size))
				sent++;
			fifo_drain(64);
			got_msgs += recv_msgs(ss, rx, 65536, &got_bytes);
			timers();
		}
	}
	t1 = now_ns();
	{
		double secs = (double)(t1 - t0) / 1e9;
		double gbps = (double)got_bytes * 8 / secs / 1e9 *
			      (lat ? 2 : 1);

		printf("{\"tool\": \"sctp-loop\", \"test\": \"%s\", \"size\": "
		       "%u, \"pathmtu\": %u, \"crc\": \"%s\", \"messages\": %"
		       PRIu64 ", \"bytes\": %" PRIu64 ", \"seconds\": %.6f, "
		       "\"gbps\": %.4f, \"packets\": %" PRIu64
		       ", \"fifo_drops\": %" PRIu64 ", \"crc_bad\": %" PRIu64
		       ", \"direct\": %s, \"chain\": %s, \"rx_ext\": %s"
		       ", \"rx_ext_pkts\": %" PRIu64 ", \"rx_ext_held_max\": %"
		       PRIu64 ", \"bufs\": %u, \"chain_pkts\": %" PRIu64
		       ", \"chain_segs\": %" PRIu64 ", \"tx_cluster\": %ld",
		       lat ? "lat" : "bw", size, pathmtu,
		       use_crc ? "isal" : "none", got_msgs, got_bytes, secs,
		       gbps, pkts, fifo_drops, crc_bad,
		       direct ? "true" : "false", chain ? "true" : "false",
		       rx_ext ? "true" : "false", ext_pkts, ext_held_max,
		       buf_total, chain_pkts, chain_segs, tx_cluster);
		if (lat && got_msgs > 0) {
			qsort(rtt, got_msgs, sizeof(*rtt), cmp_u64);
			printf(", \"latency_us_p50\": %.3f, \"latency_us_p99\":"
			       " %.3f", rtt[got_msgs / 2] / 2e3,
			       rtt[got_msgs * 99 / 100] / 2e3);
		}
		printf(", \"sack_delay_ms\": %d, \"sack_immediate\": %s",
		       sack_delay_ms, sack_immediate ? "true" : "false");
		printf(", \"verified\": %s}\n",
		       got_msgs == count ? "true" : "false");
	}
	usrsctp_close(ss);
	usrsctp_close(sc);
	usrsctp_close(sl);
	for (c = 0; c < 200 && usrsctp_finish() != 0; c++) {
		fifo_drain(fifo_slots);
		usrsctp_handle_timers(10);
	}
	return got_msgs == count ? 0 : 1;
}
