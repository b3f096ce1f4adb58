/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seed003_xfer.c - seed 003's experiment (Mohammed et al.): the time to
 * move one large message from rank 0 to rank 1, for several sizes.  Used
 * by bench/seed003.py, which runs it over 1, 2 and 3 rails.
 *
 *   seed003-xfer-<impl> [--sizes-mb 20,24,28,32,36,40] [--reps N]
 *                       [--warmup W] [--min-seconds S]
 *
 * --min-seconds S: after the timed repetitions of a size, keep moving
 * (and verifying) transfers of it until S seconds have passed since the
 * size started, so a job outlasts events scheduled in wall-clock time
 * (tests/integration/test_failover.py: a rail cut and restored).
 *
 * A transfer is one MPI_Send of S MB (10^6 bytes) from rank 0 matched by
 * one MPI_Recv on rank 1, which answers with one byte once the message is
 * complete; rank 0 times MPI_Send to the answer (so the time covers the
 * whole message arriving, plus one small message back).  A barrier
 * precedes every transfer.  Each transfer carries a pattern derived from
 * (size, repetition, word index); rank 1 checks every word after answering,
 * outside the timed region, so a fast wrong answer fails.
 *
 * Output (rank 0, stdout): one JSON object per line per size:
 *   size_mb, bytes, reps, warmup, times_ms (each measured transfer),
 *   median_ms, min_ms, mbit_s (bytes / median), extra_reps (untimed
 *   transfers for --min-seconds), errors (words that did not match on
 *   rank 1 over every repetition of this size).
 * Exit status: 0, 1 on a verification error, 2 on a usage error.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEED003_MAX_SIZES 16
#define SEED003_MB 1000000L

static uint64_t word(uint64_t size_mb, uint64_t rep, uint64_t i)
{
	uint64_t x = (size_mb << 48) ^ (rep << 32) ^ i;

	/* splitmix64 finaliser: every word differs, cheap to check */
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static int usage(int rank)
{
	if (rank == 0)
		fprintf(stderr, "usage: seed003-xfer [--sizes-mb S1,S2,...] "
			"[--reps N] [--warmup W] [--min-seconds S]\n"
			"  sizes 1..1000 MB (at most %d), N 1..1000, W 0..100, "
			"S 0..3600\n",
			SEED003_MAX_SIZES);
	return 2;
}

static int parse_sizes(const char *text, long *sizes_mb, int *n_sizes)
{
	const char *p = text;
	char *end;
	long v;

	*n_sizes = 0;
	while (*p != '\0') {
		v = strtol(p, &end, 10);
		if (end == p || v < 1 || v > 1000 ||
		    *n_sizes == SEED003_MAX_SIZES)
			return -1;
		sizes_mb[(*n_sizes)++] = v;
		if (*end == ',')
			end++;
		else if (*end != '\0')
			return -1;
		p = end;
	}
	return *n_sizes > 0 ? 0 : -1;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* --min-seconds: after warmup + reps, keep transferring (verified, not
 * timed) until this long since the size started; rank 0 decides. */
static double min_seconds;
static long extra_reps;

/* One size: warmup + reps transfers; rank 0 fills times_s (reps). */
static uint64_t xfer_size(int rank, long size_mb, long reps, long warmup,
			  uint64_t *buf, double *times_s)
{
	size_t words = (size_t)(size_mb * SEED003_MB / 8), w;
	uint64_t errors = 0;
	double t0, t_start = MPI_Wtime();
	char ack = 0;
	long r;

	extra_reps = 0;
	for (r = 0;; r++) {
		if (r >= warmup + reps) {
			char more = 0;

			/* bounded: 100000 extra transfers at most */
			if (rank == 0)
				more = MPI_Wtime() - t_start < min_seconds &&
				       extra_reps < 100000;
			MPI_Bcast(&more, 1, MPI_CHAR, 0, MPI_COMM_WORLD);
			if (!more)
				break;
			extra_reps++;
		}
		if (rank == 0)
			for (w = 0; w < words; w++)
				buf[w] = word((uint64_t)size_mb, (uint64_t)r, w);
		else
			memset(buf, 0, words * 8);
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0) {
			t0 = MPI_Wtime();
			MPI_Send(buf, (int)(words * 8), MPI_BYTE, 1, 3, MPI_COMM_WORLD);
			MPI_Recv(&ack, 1, MPI_CHAR, 1, 4, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			if (r >= warmup && r < warmup + reps)
				times_s[r - warmup] = MPI_Wtime() - t0;
		} else if (rank == 1) {
			MPI_Recv(buf, (int)(words * 8), MPI_BYTE, 0, 3,
				 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(&ack, 1, MPI_CHAR, 0, 4, MPI_COMM_WORLD);
			for (w = 0; w < words; w++)
				if (buf[w] != word((uint64_t)size_mb, (uint64_t)r, w))
					errors++;
		}
	}
	return errors;
}

int main(int argc, char **argv)
{
	long sizes_mb[SEED003_MAX_SIZES] = { 20, 24, 28, 32, 36, 40 };
	long reps = 5, warmup = 1, max_mb = 0, *dst;
	int n_sizes = 6, rank, np, i, s;
	uint64_t *buf, errors, all_errors, total_errors = 0;
	double *times_s, *sorted;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	for (i = 1; i < argc; i++) {
		dst = NULL;
		if (strcmp(argv[i], "--sizes-mb") == 0 && i + 1 < argc) {
			if (parse_sizes(argv[++i], sizes_mb, &n_sizes) != 0) {
				MPI_Finalize();
				return usage(rank);
			}
			continue;
		}
		if (strcmp(argv[i], "--min-seconds") == 0 && i + 1 < argc) {
			min_seconds = strtod(argv[++i], NULL);
			if (!(min_seconds >= 0 && min_seconds <= 3600)) {
				MPI_Finalize();
				return usage(rank);
			}
			continue;
		}
		if (strcmp(argv[i], "--reps") == 0)
			dst = &reps;
		else if (strcmp(argv[i], "--warmup") == 0)
			dst = &warmup;
		if (dst == NULL || i + 1 >= argc) {
			MPI_Finalize();
			return usage(rank);
		}
		*dst = strtol(argv[++i], NULL, 0);
	}
	if (np < 2 || reps < 1 || reps > 1000 || warmup < 0 || warmup > 100) {
		if (rank == 0 && np < 2)
			fprintf(stderr, "seed003-xfer: needs 2 ranks (-np 2), "
				"got %d\n", np);
		MPI_Finalize();
		return usage(rank);
	}
	for (s = 0; s < n_sizes; s++)
		if (sizes_mb[s] > max_mb)
			max_mb = sizes_mb[s];
	buf = malloc((size_t)(max_mb * SEED003_MB));
	times_s = calloc((size_t)reps, sizeof(*times_s));
	sorted = calloc((size_t)reps, sizeof(*sorted));
	if (buf == NULL || times_s == NULL || sorted == NULL) {
		fprintf(stderr, "rank %d: out of memory (%ld MB)\n", rank,
			max_mb);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (s = 0; s < n_sizes; s++) {
		errors = rank <= 1 ? xfer_size(rank, sizes_mb[s], reps, warmup,
					       buf, times_s) : 0;
		all_errors = 0;
		MPI_Reduce(&errors, &all_errors, 1, MPI_UINT64_T, MPI_SUM, 0,
			   MPI_COMM_WORLD);
		total_errors += all_errors;
		if (rank != 0)
			continue;
		memcpy(sorted, times_s, (size_t)reps * sizeof(*sorted));
		qsort(sorted, (size_t)reps, sizeof(*sorted), cmp_dbl);
		double med = reps % 2 ? sorted[reps / 2] :
			(sorted[reps / 2 - 1] + sorted[reps / 2]) / 2;

		printf("{\"size_mb\": %ld, \"bytes\": %ld, \"reps\": %ld, "
		       "\"warmup\": %ld, \"times_ms\": [", sizes_mb[s],
		       sizes_mb[s] * SEED003_MB, reps, warmup);
		for (i = 0; i < reps; i++)
			printf("%s%.3f", i ? ", " : "", times_s[i] * 1e3);
		printf("], \"median_ms\": %.3f, \"min_ms\": %.3f, "
		       "\"mbit_s\": %.1f, \"extra_reps\": %ld, "
		       "\"errors\": %llu}\n", med * 1e3,
		       sorted[0] * 1e3, sizes_mb[s] * SEED003_MB * 8 / med / 1e6,
		       extra_reps, (unsigned long long)all_errors);
		fflush(stdout);
	}
	free(sorted);
	free(times_s);
	free(buf);
	MPI_Finalize();
	return total_errors ? 1 : 0;
}
