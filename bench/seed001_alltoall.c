/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seed001_alltoall.c - the communication of NPB IS without its computation:
 * iterations of MPI_Alltoall with a fixed per-peer size, back to back, so
 * that every rank sends to every other rank at once (the incast pattern of
 * seed 001, Takano et al.).  Used by bench/seed001.py.
 *
 *   seed001-alltoall-<impl> [--bytes B] [--iters N] [--warmup W]
 *
 * B is the size of the block each rank sends to each peer (bytes, rounded
 * down to a multiple of 8).  Every block carries a pattern derived from
 * (iteration, source, destination, word index); the receiver checks every
 * word of every block after each iteration, outside the timed region, so a
 * fast wrong answer fails.
 *
 * Output (rank 0, stdout): one JSON object:
 *   np, bytes_per_peer, iters, warmup,
 *   total_s   wall time of the measured loop (barrier to barrier, the
 *             verification included; it is a few us per block),
 *   iter_s    per iteration, the slowest rank's MPI_Alltoall time,
 *   p50_s, p99_s, max_s   of iter_s,
 *   errors    words that did not match, summed over the ranks.
 * Exit status: 0, 1 on a verification error, 2 on a usage error.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t word(uint64_t it, uint64_t src, uint64_t dst, uint64_t i)
{
	uint64_t x = (it << 48) ^ (src << 32) ^ (dst << 24) ^ i;

	/* splitmix64 finaliser: every word differs, cheap to check */
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(const double *sorted, int n, double p)
{
	int k = (int)(p * (n - 1) + 0.5);

	return sorted[k < n ? k : n - 1];
}

static int usage(int rank)
{
	if (rank == 0)
		fprintf(stderr, "usage: seed001-alltoall [--bytes B] "
				"[--iters N] [--warmup W]\n");
	return 2;
}

int main(int argc, char **argv)
{
	long bytes = 262144, iters = 20, warmup = 2;
	uint64_t *sbuf, *rbuf, errors = 0, all_errors = 0;
	double *t_iter, *t_max, t0, t1;
	int rank, np, i, p;
	size_t words, w;
	long it;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	for (i = 1; i < argc; i++) {
		long *dst = NULL;

		if (strcmp(argv[i], "--bytes") == 0)
			dst = &bytes;
		else if (strcmp(argv[i], "--iters") == 0)
			dst = &iters;
		else if (strcmp(argv[i], "--warmup") == 0)
			dst = &warmup;
		if (dst == NULL || i + 1 >= argc) {
			MPI_Finalize();
			return usage(rank);
		}
		*dst = strtol(argv[++i], NULL, 0);
	}
	words = (size_t)bytes / 8;
	if (words == 0 || iters < 1 || warmup < 0 ||
	    words * np > (size_t)1 << 30) {
		MPI_Finalize();
		return usage(rank);
	}
	sbuf = malloc(words * np * 8);
	rbuf = malloc(words * np * 8);
	t_iter = calloc((size_t)iters, sizeof(*t_iter));
	t_max = calloc((size_t)iters, sizeof(*t_max));
	if (sbuf == NULL || rbuf == NULL || t_iter == NULL || t_max == NULL) {
		fprintf(stderr, "rank %d: out of memory (%ld bytes per peer)\n",
			rank, bytes);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (it = -warmup; it < iters; it++) {
		uint64_t tag = (uint64_t)(it + warmup);
		double a;

		if (it == 0) {
			MPI_Barrier(MPI_COMM_WORLD);
			t0 = MPI_Wtime();
		}
		for (p = 0; p < np; p++)
			for (w = 0; w < words; w++)
				sbuf[p * words + w] = word(tag, rank, p, w);
		memset(rbuf, 0, words * np * 8);
		a = MPI_Wtime();
		MPI_Alltoall(sbuf, (int)words, MPI_UINT64_T, rbuf, (int)words,
			     MPI_UINT64_T, MPI_COMM_WORLD);
		if (it >= 0)
			t_iter[it] = MPI_Wtime() - a;
		for (p = 0; p < np; p++)
			for (w = 0; w < words; w++)
				errors += rbuf[p * words + w] !=
					  word(tag, p, rank, w);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	t1 = MPI_Wtime();

	MPI_Reduce(t_iter, t_max, (int)iters, MPI_DOUBLE, MPI_MAX, 0,
		   MPI_COMM_WORLD);
	MPI_Reduce(&errors, &all_errors, 1, MPI_UINT64_T, MPI_SUM, 0,
		   MPI_COMM_WORLD);
	if (rank == 0) {
		double *sorted = malloc(iters * sizeof(*sorted));

		if (sorted == NULL)
			MPI_Abort(MPI_COMM_WORLD, 1);
		memcpy(sorted, t_max, iters * sizeof(*sorted));
		qsort(sorted, iters, sizeof(*sorted), cmp_dbl);
		printf("{\"np\": %d, \"bytes_per_peer\": %zu, \"iters\": %ld, "
		       "\"warmup\": %ld, \"total_s\": %.6f, \"p50_s\": %.6f, "
		       "\"p99_s\": %.6f, \"max_s\": %.6f, \"errors\": %llu, "
		       "\"iter_s\": [",
		       np, words * 8, iters, warmup, t1 - t0,
		       pct(sorted, iters, 0.5), pct(sorted, iters, 0.99),
		       sorted[iters - 1], (unsigned long long)all_errors);
		for (it = 0; it < iters; it++)
			printf("%s%.6f", it ? ", " : "", t_max[it]);
		printf("]}\n");
		fflush(stdout);
		free(sorted);
		if (all_errors != 0)
			fprintf(stderr, "seed001-alltoall: %llu words wrong\n",
				(unsigned long long)all_errors);
	}
	free(sbuf);
	free(rbuf);
	free(t_iter);
	free(t_max);
	MPI_Finalize();
	return all_errors != 0 && rank == 0;
}
