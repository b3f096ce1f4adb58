/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seed_pingpong.c - the MPI programs of bench/seeds.py (seeds 000 and 004),
 * between ranks 0 and 1, one tag, data verified.
 *
 *   pingpong  (seed 000, Table 5.1; seed 004's 4-byte latency)
 *             For each size of --sizes: rank 0 sends, rank 1 answers with
 *             the same size, for at least --min-iters round trips and
 *             --seconds, at most --max-iters.  Prints one JSON line per
 *             size: round trips, elapsed time, throughput in bytes/s
 *             (2 x size x round trips / elapsed: the bytes the ping-pong
 *             moved per second, i.e. size / one-way time), round-trip p50,
 *             p99 and max, and the round trips slower than --slow-x times
 *             the median (index and microseconds: where a packet was lost).
 *   stream    (seed 004, the cost of a loss)
 *             Rank 0 sends --count messages of --size bytes, one every
 *             --gap-us (waiting inside MPI, so the sender's stack makes
 *             progress), each carrying its send time (CLOCK_MONOTONIC: both
 *             ranks are on one host); rank 1 records each message's one-way
 *             time when its receive completes, in order.  Prints the
 *             median and, for every message slower than --slow-x times the
 *             median (a loss), its index, its time and how many messages
 *             behind it were slowed (one-way time above --slow-x x median)
 *             and by how much in total.
 *
 * Every message's first and last 8 bytes are checked, and the whole of the
 * last one, so a fast wrong answer fails (exit 1).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_SIZES 16
#define MAX_SLOW 64
#define TRACE_BEFORE 20 /* messages shown before the first loss */
#define TRACE_LEN 400

static int rank;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint8_t pat(uint64_t seed, uint64_t i)
{
	return (uint8_t)((seed * 2654435761u + i * 40503u + (i >> 9)) & 0xff);
}

static void fill(uint8_t *b, size_t n, uint64_t seed, int all)
{
	size_t i;

	if (all || n <= 16) {
		for (i = 0; i < n; i++)
			b[i] = pat(seed, i);
		return;
	}
	for (i = 0; i < 8; i++) {
		b[i] = pat(seed, i);
		b[n - 8 + i] = pat(seed, n - 8 + i);
	}
}

static int check(const uint8_t *b, size_t n, uint64_t seed, int all)
{
	size_t i;

	if (all || n <= 16) {
		for (i = 0; i < n; i++)
			if (b[i] != pat(seed, i))
				return 0;
		return 1;
	}
	for (i = 0; i < 8; i++)
		if (b[i] != pat(seed, i) || b[n - 8 + i] != pat(seed, n - 8 + i))
			return 0;
	return 1;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median_of(const double *v, int n)
{
	double *s = malloc(sizeof(double) * (size_t)(n ? n : 1));
	double m;

	memcpy(s, v, sizeof(double) * (size_t)n);
	qsort(s, (size_t)n, sizeof(double), cmp_dbl);
	m = n ? s[n / 2] : 0;
	free(s);
	return m;
}

/* One size: returns 1 if every message checked out. */
static int pingpong(uint8_t *buf, size_t size, double seconds, int min_iters,
		    int max_iters, double slow_x)
{
	double *rtt = malloc(sizeof(double) * (size_t)max_iters);
	double t_start = 0, t0, p50, p99, mx = 0, slow_sum_us = 0;
	int i, n = 0, ok = 1, go = 1, nslow = 0, warm = 3;
	uint8_t ctl[2];

	for (i = -warm;; i++) {
		uint64_t seed = size * 131 + (uint64_t)(i + warm);

		if (i == 0)
			t_start = now_s();
		if (rank == 0) {
			double el = i >= 0 ? now_s() - t_start : 0;

			go = i < 0 || (i < max_iters &&
				       (i < min_iters || el < seconds));
			ctl[0] = (uint8_t)go;
			MPI_Send(ctl, 1, MPI_BYTE, 1, 9, MPI_COMM_WORLD);
		} else {
			MPI_Recv(ctl, 1, MPI_BYTE, 0, 9, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			go = ctl[0];
		}
		if (!go)
			break;
		t0 = now_s();
		if (rank == 0) {
			fill(buf, size, seed, 0);
			MPI_Send(buf, (int)size, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
			MPI_Recv(buf, (int)size, MPI_BYTE, 1, 1, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			ok &= check(buf, size, seed + 1, 0);
		} else {
			MPI_Status st;
			int cnt;

			MPI_Recv(buf, (int)size, MPI_BYTE, 0, 1, MPI_COMM_WORLD,
				 &st);
			MPI_Get_count(&st, MPI_BYTE, &cnt);
			ok &= (size_t)cnt == size && check(buf, size, seed, 0);
			fill(buf, size, seed + 1, 0);
			MPI_Send(buf, (int)size, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
		}
		if (i >= 0)
			rtt[n++] = (now_s() - t0) * 1e6;
	}
	{
		double el = now_s() - t_start;
		double *s = malloc(sizeof(double) * (size_t)(n ? n : 1));

		/* one full-pattern exchange after the timed loop */
		if (rank == 0) {
			fill(buf, size, size * 7, 1);
			MPI_Send(buf, (int)size, MPI_BYTE, 1, 2, MPI_COMM_WORLD);
		} else {
			MPI_Recv(buf, (int)size, MPI_BYTE, 0, 2, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			ok &= check(buf, size, size * 7, 1);
		}
		memcpy(s, rtt, sizeof(double) * (size_t)n);
		qsort(s, (size_t)n, sizeof(double), cmp_dbl);
		p50 = n ? s[n / 2] : 0;
		p99 = n ? s[(n * 99) / 100] : 0;
		mx = n ? s[n - 1] : 0;
		free(s);
		{
			int all;

			MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND,
				      MPI_COMM_WORLD);
			ok = all;
		}
		if (rank == 0) {
			printf("{\"mode\": \"pingpong\", \"size\": %zu, "
			       "\"iters\": %d, \"elapsed_s\": %.6f, "
			       "\"throughput_Bps\": %.1f, \"rtt_us_p50\": %.2f,"
			       " \"rtt_us_p99\": %.2f, \"rtt_us_max\": %.2f, "
			       "\"slow\": [", size, n, el,
			       el > 0 ? 2.0 * (double)size * n / el : 0, p50,
			       p99, mx);
			for (i = 0; i < n; i++) {
				if (rtt[i] <= slow_x * p50)
					continue;
				slow_sum_us += rtt[i] - p50;
				if (nslow++ < MAX_SLOW)
					printf("%s[%d, %.1f]",
					       nslow > 1 ? ", " : "", i, rtt[i]);
			}
			printf("], \"nslow\": %d, \"slow_extra_us\": %.1f, "
			       "\"verified\": %s}\n", nslow, slow_sum_us,
			       ok ? "true" : "false");
			fflush(stdout);
		}
	}
	free(rtt);
	return ok;
}

static int stream(uint8_t *buf, size_t size, int count, double gap_us,
		  double slow_x)
{
	double *lat = rank == 1 ? malloc(sizeof(double) * (size_t)count) : NULL;
	int i, ok = 1, all;
	char ack = 0;

	if (size < 16)
		size = 16;
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		double next = now_s();

		for (i = 0; i < count; i++) {
			double t;
			int flag;

			/* wait in MPI (progress: SACKs, retransmissions), as
			 * a sender blocked in MPI would, not computing */
			while ((t = now_s()) < next)
				MPI_Iprobe(1, 7, MPI_COMM_WORLD, &flag,
					   MPI_STATUS_IGNORE);
			next += gap_us * 1e-6;
			fill(buf, size, (uint64_t)i, 0);
			memcpy(buf, &t, sizeof(t));
			MPI_Send(buf, (int)size, MPI_BYTE, 1, 5,
				 MPI_COMM_WORLD);
		}
		MPI_Recv(&ack, 1, MPI_BYTE, 1, 6, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
	} else {
		for (i = 0; i < count; i++) {
			double t_sent;

			MPI_Recv(buf, (int)size, MPI_BYTE, 0, 5,
				 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			lat[i] = now_s();
			memcpy(&t_sent, buf, sizeof(t_sent));
			lat[i] = (lat[i] - t_sent) * 1e6;
			ok &= buf[size - 1] == pat((uint64_t)i, size - 1);
		}
		MPI_Send(&ack, 1, MPI_BYTE, 0, 6, MPI_COMM_WORLD);
	}
	MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
	if (rank == 1) {
		double med = median_of(lat, count), thr = slow_x * med;
		int nev = 0, first = -1;

		double *srt = malloc(sizeof(double) * (size_t)count), sum = 0;

		memcpy(srt, lat, sizeof(double) * (size_t)count);
		qsort(srt, (size_t)count, sizeof(double), cmp_dbl);
		for (i = 0; i < count; i++)
			sum += lat[i];
		printf("{\"mode\": \"stream\", \"size\": %zu, \"count\": %d, "
		       "\"gap_us\": %.1f, \"oneway_us_p50\": %.2f, "
		       "\"oneway_us_p90\": %.2f, \"oneway_us_p99\": %.2f, "
		       "\"oneway_us_max\": %.2f, \"oneway_us_mean\": %.2f, "
		       "\"events\": [", size, count, gap_us, med,
		       srt[(count * 9) / 10], srt[(count * 99) / 100],
		       srt[count - 1], sum / count);
		free(srt);
		for (i = 0; i < count;) {
			int j = i + 1, behind = 0;
			double extra = 0;

			if (lat[i] <= thr) {
				i++;
				continue;
			}
			while (j < count && lat[j] > thr) {
				extra += lat[j] - med;
				behind++;
				j++;
			}
			if (first < 0)
				first = i > TRACE_BEFORE ? i - TRACE_BEFORE : 0;
			if (nev++ < MAX_SLOW)
				printf("%s{\"index\": %d, \"oneway_us\": %.1f, "
				       "\"behind\": %d, \"behind_extra_us\": "
				       "%.1f, \"behind_max_us\": %.1f}",
				       nev > 1 ? ", " : "", i, lat[i], behind,
				       extra, behind ? lat[i + 1] : 0.0);
			i = j;
		}
		printf("], \"nevents\": %d, \"trace_first\": %d, "
		       "\"trace_us\": [", nev, first < 0 ? 0 : first);
		/* the one-way times around the first loss, for a plot */
		for (i = first < 0 ? 0 : first; first >= 0 && i < count &&
		     i < first + TRACE_LEN; i++)
			printf("%s%.1f", i > first ? ", " : "", lat[i]);
		printf("], \"verified\": %s}\n", all ? "true" : "false");
		fflush(stdout);
	}
	free(lat);
	return all;
}

static void usage(void)
{
	if (rank == 0)
		fprintf(stderr,
			"usage: seed-pingpong pingpong [--sizes N,N,...] "
			"[--seconds S] [--min-iters N] [--max-iters N] "
			"[--slow-x X]\n"
			"       seed-pingpong stream [--size N] [--count N] "
			"[--gap-us G] [--slow-x X]\n");
}

int main(int argc, char **argv)
{
	size_t sizes[MAX_SIZES] = { 30720, 307200 }, size = 4, max_size = 0;
	int nsizes = 2, nprocs, i, ok = 1, min_iters = 20, max_iters = 100000;
	int count = 20000, stream_mode = 0;
	double seconds = 10, slow_x = 10, gap_us = 50;
	uint8_t *buf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	if (argc < 2 || (strcmp(argv[1], "pingpong") != 0 &&
			 strcmp(argv[1], "stream") != 0)) {
		usage();
		MPI_Finalize();
		return 2;
	}
	stream_mode = strcmp(argv[1], "stream") == 0;
	for (i = 2; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (v == NULL) {
			usage();
			MPI_Finalize();
			return 2;
		}
		i++;
		if (strcmp(a, "--sizes") == 0) {
			char *s = strdup(v), *tok, *save = NULL;

			nsizes = 0;
			for (tok = strtok_r(s, ",", &save);
			     tok && nsizes < MAX_SIZES;
			     tok = strtok_r(NULL, ",", &save))
				sizes[nsizes++] = strtoull(tok, NULL, 0);
			free(s);
		} else if (strcmp(a, "--size") == 0)
			size = strtoull(v, NULL, 0);
		else if (strcmp(a, "--seconds") == 0)
			seconds = atof(v);
		else if (strcmp(a, "--min-iters") == 0)
			min_iters = atoi(v);
		else if (strcmp(a, "--max-iters") == 0)
			max_iters = atoi(v);
		else if (strcmp(a, "--count") == 0)
			count = atoi(v);
		else if (strcmp(a, "--gap-us") == 0)
			gap_us = atof(v);
		else if (strcmp(a, "--slow-x") == 0)
			slow_x = atof(v);
		else {
			usage();
			MPI_Finalize();
			return 2;
		}
	}
	if (nprocs != 2 || nsizes == 0 || max_iters < 1 || min_iters < 1 ||
	    count < 1) {
		if (rank == 0)
			fprintf(stderr, "seed-pingpong: needs exactly 2 ranks, "
				"sizes, and positive counts\n");
		MPI_Finalize();
		return 2;
	}
	if (min_iters > max_iters)
		min_iters = max_iters;
	for (i = 0; i < nsizes; i++)
		if (sizes[i] > max_size)
			max_size = sizes[i];
	if (size > max_size)
		max_size = size;
	buf = malloc(max_size + 16);
	if (stream_mode)
		ok = stream(buf, size, count, gap_us, slow_x);
	else
		for (i = 0; i < nsizes; i++)
			ok &= pingpong(buf, sizes[i], seconds, min_iters,
				       max_iters, slow_x);
	free(buf);
	MPI_Finalize();
	return ok ? 0 : 1;
}
