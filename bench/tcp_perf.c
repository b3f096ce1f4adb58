/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tcp_perf.c - tcp-perf-ep: the kernel TCP baseline for sdp-perf, the path
 * a user would pick instead.  One connection with TCP_NODELAY over the
 * bridge testbed's veth pair (kernel addresses from --kernel-ip), server in
 * one namespace, client in the other.
 *
 * --test lat: ping-pong of --size byte messages (blocking read/write);
 *             one-way latency = RTT/2.
 * --test bw:  the client writes --count messages of --size bytes, the
 *             server reads them and answers one byte after the last;
 *             goodput = bytes / (first write .. that answer).
 * The server checks it read exactly size * count bytes.  Output: one JSON
 * object on stdout (client).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct hello {
	uint32_t lat;
	uint32_t size;
	uint64_t count;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "tcp-perf-ep: %s: %s\n", what, strerror(errno));
	exit(3);
}

static int full_io(int fd, void *buf, size_t len, bool wr)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = wr ? write(fd, (uint8_t *)buf + off, len - off)
			       : read(fd, (uint8_t *)buf + off, len - off);

		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			return -1;
		}
		off += (size_t)n;
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void tune(int fd)
{
	int one = 1;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0)
		die("TCP_NODELAY");
}

static int server(uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port) };
	struct hello h;
	uint8_t *buf;
	uint64_t total, got = 0;
	int one = 1, l, fd;

	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0)
		die("socket");
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(l, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(l, 1))
		die("bind/listen");
	fprintf(stderr, "tcp-perf-ep: server ready\n");
	fd = accept(l, NULL, NULL);
	if (fd < 0)
		die("accept");
	tune(fd);
	if (full_io(fd, &h, sizeof(h), false) != 0)
		die("hello");
	buf = malloc(h.size > 65536 ? h.size : 65536);
	if (buf == NULL)
		die("malloc");
	total = (uint64_t)h.size * h.count;
	if (h.lat) {
		uint64_t i;

		for (i = 0; i < h.count; i++) {
			if (full_io(fd, buf, h.size, false) != 0 ||
			    full_io(fd, buf, h.size, true) != 0)
				die("ping-pong");
			got += h.size;
		}
	} else {
		while (got < total) {
			size_t want = total - got < 65536 ? total - got : 65536;
			ssize_t n = read(fd, buf, want);

			if (n <= 0)
				die("read");
			got += (uint64_t)n;
		}
		if (full_io(fd, buf, 1, true) != 0)
			die("ack");
	}
	printf("{\"role\": \"server\", \"bytes\": %" PRIu64 ", \"verified\": "
	       "%s}\n", got, got == total ? "true" : "false");
	close(fd);
	close(l);
	return got == total ? 0 : 1;
}

static int client(const char *ip, uint16_t port, bool lat, uint32_t size,
		  uint64_t count)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port) };
	struct hello h = { lat, size, count };
	uint64_t *rtt = calloc(count, sizeof(*rtt)), t0, t1, i;
	uint8_t *buf = malloc(size);
	int fd = -1, tries;

	if (rtt == NULL || buf == NULL || inet_pton(AF_INET, ip, &a.sin_addr)
	    != 1)
		die("setup");
	memset(buf, 0x5a, size);
	for (tries = 0; tries < 100; tries++) { /* server may be starting */
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
			break;
		close(fd);
		fd = -1;
		usleep(100000);
	}
	if (fd < 0)
		die("connect");
	tune(fd);
	if (full_io(fd, &h, sizeof(h), true) != 0)
		die("hello");
	t0 = now_ns();
	if (lat) {
		for (i = 0; i < count; i++) {
			uint64_t ts = now_ns();

			if (full_io(fd, buf, size, true) != 0 ||
			    full_io(fd, buf, size, false) != 0)
				die("ping-pong");
			rtt[i] = now_ns() - ts;
		}
	} else {
		for (i = 0; i < count; i++)
			if (full_io(fd, buf, size, true) != 0)
				die("write");
		if (full_io(fd, buf, 1, false) != 0)
			die("ack");
	}
	t1 = now_ns();
	{
		double secs = (double)(t1 - t0) / 1e9;
		double bytes = (double)size * count * (lat ? 2 : 1);

		printf("{\"tool\": \"tcp\", \"test\": \"%s\", \"size\": %u, "
		       "\"messages\": %" PRIu64 ", \"seconds\": %.6f, "
		       "\"gbps\": %.4f", lat ? "lat" : "bw", size, count, secs,
		       bytes * 8 / secs / 1e9);
		if (lat) {
			qsort(rtt, count, sizeof(*rtt), cmp_u64);
			printf(", \"latency_us_p50\": %.3f, \"latency_us_p99\":"
			       " %.3f", rtt[count / 2] / 2e3,
			       rtt[count * 99 / 100] / 2e3);
		}
		printf(", \"verified\": true}\n");
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "server", no_argument, NULL, 'S' },
		{ "peer", required_argument, NULL, 'p' },
		{ "port", required_argument, NULL, 'P' },
		{ "test", required_argument, NULL, 't' },
		{ "size", required_argument, NULL, 's' },
		{ "count", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	const char *peer = NULL;
	bool srv = false, lat = false;
	uint32_t size = 8;
	uint64_t count = 10000;
	uint16_t port = 5201;
	int c;

	while ((c = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		switch (c) {
		case 'S':
			srv = true;
			break;
		case 'p':
			peer = optarg;
			break;
		case 'P':
			port = (uint16_t)atoi(optarg);
			break;
		case 't':
			lat = strcmp(optarg, "lat") == 0;
			break;
		case 's':
			size = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'c':
			count = strtoull(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: tcp-perf-ep (--server | --peer "
				"IP) [--port N] [--test lat|bw] [--size B] "
				"[--count N]\n");
			return 2;
		}
	}
	if (size == 0 || count == 0 || (!srv && peer == NULL))
		return 2;
	return srv ? server(port) : client(peer, port, lat, size, count);
}
