/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_rma.c - MPI one-sided checks for the sctp_dpdk transport (run by
 * tests/integration/test_mpi.py under sdp-mpirun; Open MPI's osc ucx and
 * MPICH's ch4:ucx RMA map MPI_Put/MPI_Get onto UCT put/get, which the
 * transport emulates over SCTP messages).
 *
 * Every rank exposes a window; each check writes or reads every other
 * rank's window and verifies every byte:
 *
 *   put_fence     MPI_Put 1 B..max into each peer, MPI_Win_fence
 *   get_fence     MPI_Get 1 B..max from each peer, MPI_Win_fence
 *   acc_fence     MPI_Accumulate(MPI_SUM) of int64 from every rank
 *   put_lock      MPI_Win_lock(EXCLUSIVE) / MPI_Put / MPI_Win_unlock,
 *                 read back with MPI_Get under MPI_LOCK_SHARED
 *   flush         MPI_Win_lock_all, MPI_Put + MPI_Win_flush, then MPI_Get
 *                 of the same bytes sees them (remote completion)
 *
 * Rank 0 prints one line per check and "N passed, M failed".
 *
 *   mpi_rma [--max-size BYTES]
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_report.h"

static int rank, nprocs;

static uint8_t pat(uint64_t seed, uint64_t i)
{
	return (uint8_t)((seed * 2654435761u + i * 40503u + (i >> 9)) & 0xff);
}

/* Sizes 1, 7, 64, ... up to @max (x4 steps plus max). */
static size_t next_size(size_t s, size_t max)
{
	if (s >= max)
		return 0;
	s = s < 7 ? 7 : s * 4 + 3;
	return s > max ? max : s;
}

/* Window layout: nprocs slots of max bytes; slot r is written by rank r. */
static int check_put_fence(uint8_t *win_mem, MPI_Win win, size_t max)
{
	uint8_t *src = malloc(max);
	size_t s, i;
	int ok = 1, p;

	for (s = 1; s != 0; s = next_size(s, max)) {
		for (i = 0; i < max; i++)
			src[i] = pat(s * 131 + rank, i);
		memset(win_mem, 0, max * nprocs);
		MPI_Win_fence(0, win);
		for (p = 0; p < nprocs; p++)
			if (p != rank)
				MPI_Put(src, (int)s, MPI_BYTE, p,
					(MPI_Aint)(rank * max), (int)s,
					MPI_BYTE, win);
		MPI_Win_fence(0, win);
		for (p = 0; p < nprocs; p++) {
			if (p == rank)
				continue;
			for (i = 0; i < s; i++)
				if (win_mem[p * max + i] != pat(s * 131 + p, i))
					break;
			if (i != s || (s < max && win_mem[p * max + s] != 0)) {
				fprintf(stderr, "rank %d: put_fence %zu B from "
					"%d wrong at byte %zu\n", rank, s, p, i);
				ok = 0;
			}
		}
	}
	free(src);
	return ok;
}

static int check_get_fence(uint8_t *win_mem, MPI_Win win, size_t max)
{
	uint8_t *dst = malloc(max);
	size_t s, i;
	int ok = 1, p;

	for (s = 1; s != 0; s = next_size(s, max)) {
		/* My slot 0 holds my pattern; everybody reads it. */
		for (i = 0; i < max; i++)
			win_mem[i] = pat(s * 7 + rank, i);
		MPI_Win_fence(0, win); /* written before anybody reads */
		for (p = 0; p < nprocs; p++) {
			if (p == rank)
				continue;
			memset(dst, 0, max);
			MPI_Get(dst, (int)s, MPI_BYTE, p, 0, (int)s, MPI_BYTE,
				win);
			/* Every rank runs nprocs - 1 of these per size. */
			MPI_Win_fence(0, win);
			for (i = 0; i < s; i++)
				if (dst[i] != pat(s * 7 + p, i))
					break;
			if (i != s) {
				fprintf(stderr, "rank %d: get_fence %zu B from "
					"%d wrong at byte %zu\n", rank, s, p, i);
				ok = 0;
			}
		}
	}
	free(dst);
	return ok;
}

static int check_acc_fence(uint8_t *win_mem, MPI_Win win, size_t max)
{
	size_t n = max / sizeof(int64_t), i;
	int64_t *src = malloc(n * sizeof(int64_t));
	int64_t *w = (int64_t *)win_mem, want;
	int ok = 1, p;

	memset(win_mem, 0, n * sizeof(int64_t));
	for (i = 0; i < n; i++)
		src[i] = (int64_t)(i * 3 + rank + 1);
	MPI_Win_fence(0, win);
	for (p = 0; p < nprocs; p++)
		MPI_Accumulate(src, (int)n, MPI_INT64_T, p, 0, (int)n,
			       MPI_INT64_T, MPI_SUM, win);
	MPI_Win_fence(0, win);
	for (i = 0; i < n; i++) {
		want = (int64_t)(i * 3 * nprocs) +
		       (int64_t)nprocs * (nprocs + 1) / 2;
		if (w[i] != want) {
			fprintf(stderr, "rank %d: accumulate element %zu is "
				"%lld, expected %lld\n", rank, i,
				(long long)w[i], (long long)want);
			ok = 0;
			break;
		}
	}
	MPI_Win_fence(0, win);
	free(src);
	return ok;
}

static int check_put_lock(uint8_t *win_mem, MPI_Win win, size_t max)
{
	uint8_t *src = malloc(max), *dst = malloc(max);
	int ok = 1, p = (rank + 1) % nprocs;
	size_t s, i;

	for (s = 1; s != 0; s = next_size(s, max)) {
		for (i = 0; i < s; i++)
			src[i] = pat(s * 13 + rank, i);
		/* Into my slot of my right neighbour's window. */
		MPI_Win_lock(MPI_LOCK_EXCLUSIVE, p, 0, win);
		MPI_Put(src, (int)s, MPI_BYTE, p, (MPI_Aint)(rank * max),
			(int)s, MPI_BYTE, win);
		MPI_Win_unlock(p, win);
		memset(dst, 0, s);
		MPI_Win_lock(MPI_LOCK_SHARED, p, 0, win);
		MPI_Get(dst, (int)s, MPI_BYTE, p, (MPI_Aint)(rank * max),
			(int)s, MPI_BYTE, win);
		MPI_Win_unlock(p, win);
		if (memcmp(src, dst, s) != 0) {
			fprintf(stderr, "rank %d: put_lock %zu B to %d read "
				"back wrong\n", rank, s, p);
			ok = 0;
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	/* What the left neighbour put last is in my window. */
	p = (rank + nprocs - 1) % nprocs;
	for (i = 0; i < max; i++)
		if (win_mem[p * max + i] != pat(max * 13 + p, i))
			break;
	if (i != max) {
		fprintf(stderr, "rank %d: put_lock data from %d wrong at byte "
			"%zu\n", rank, p, i);
		ok = 0;
	}
	MPI_Barrier(MPI_COMM_WORLD);
	free(src);
	free(dst);
	return ok;
}

static int check_flush(MPI_Win win, size_t max)
{
	uint8_t *src = malloc(max), *dst = malloc(max);
	int ok = 1, p = (rank + 1) % nprocs, k;
	size_t s = max < 65536 ? max : 65536, i;

	MPI_Win_lock_all(0, win);
	for (k = 0; k < 20; k++) {
		for (i = 0; i < s; i++)
			src[i] = pat(k * 17 + rank, i);
		MPI_Put(src, (int)s, MPI_BYTE, p, (MPI_Aint)(rank * max),
			(int)s, MPI_BYTE, win);
		MPI_Win_flush(p, win);
		memset(dst, 0, s);
		MPI_Get(dst, (int)s, MPI_BYTE, p, (MPI_Aint)(rank * max),
			(int)s, MPI_BYTE, win);
		MPI_Win_flush(p, win);
		if (memcmp(src, dst, s) != 0) {
			fprintf(stderr, "rank %d: flush round %d: get after "
				"put+flush saw old data\n", rank, k);
			ok = 0;
			break;
		}
	}
	MPI_Win_unlock_all(win);
	MPI_Barrier(MPI_COMM_WORLD);
	free(src);
	free(dst);
	return ok;
}

int main(int argc, char **argv)
{
	size_t max_size = 1u << 20;
	uint8_t *win_mem;
	MPI_Win win;
	int i, rc;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--max-size") == 0 && i + 1 < argc)
			max_size = strtoull(argv[++i], NULL, 0);
	if (nprocs < 2 || max_size < 64) {
		if (rank == 0)
			fprintf(stderr, "mpi_rma: needs 2+ ranks and "
				"--max-size >= 64\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	MPI_Alloc_mem((MPI_Aint)(max_size * nprocs), MPI_INFO_NULL, &win_mem);
	MPI_Win_create(win_mem, (MPI_Aint)(max_size * nprocs), 1,
		       MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	report("put_fence", check_put_fence(win_mem, win, max_size));
	report("get_fence", check_get_fence(win_mem, win, max_size));
	report("acc_fence", check_acc_fence(win_mem, win, max_size));
	report("put_lock", check_put_lock(win_mem, win, max_size));
	report("flush", check_flush(win, max_size));
	MPI_Win_free(&win);
	MPI_Free_mem(win_mem);
	rc = report_totals();
	MPI_Finalize();
	return rc;
}
