/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_check.c - MPI end-to-end checks for the sctp_dpdk transport (run by
 * tests/integration/test_mpi.py under sdp-mpirun with 2 or 4 ranks).
 *
 * Each check verifies data, not just completion: ping-pong of 0 B..16 MiB
 * with a per-size pattern; Barrier; Bcast; Allreduce; Alltoall and
 * Alltoallv; MPI_ANY_SOURCE / MPI_ANY_TAG; non-overtaking order for one tag;
 * thousands of outstanding Isend/Irecv.  Rank 0 prints one line per check
 * and a final "N passed, M failed"; the exit status is non-zero on failure.
 *
 *   mpi_check [--max-size BYTES] [--iters N] [--only NAME]
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
	return (uint8_t)((seed * 2654435761u + i * 40503u + (i >> 11)) & 0xff);
}

static int check_pingpong(size_t max_size, int iters)
{
	uint8_t *buf = malloc(max_size ? max_size : 1);
	int ok = 1;
	size_t size;

	if (nprocs < 2 || buf == NULL)
		return 0;
	for (size = 0; size <= max_size; size = size ? size * 4 : 1) {
		int it;

		for (it = 0; it < iters && rank < 2; it++) {
			uint64_t seed = size * 131 + (uint64_t)it;
			size_t i;

			if (rank == 0) {
				for (i = 0; i < size; i++)
					buf[i] = pat(seed, i);
				MPI_Send(buf, (int)size, MPI_BYTE, 1, 7,
					 MPI_COMM_WORLD);
				memset(buf, 0, size);
				MPI_Recv(buf, (int)size, MPI_BYTE, 1, 8,
					 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				for (i = 0; i < size; i++)
					if (buf[i] != pat(seed + 1, i)) {
						ok = 0;
						break;
					}
			} else {
				MPI_Status st;
				int cnt;

				MPI_Recv(buf, (int)size, MPI_BYTE, 0, 7,
					 MPI_COMM_WORLD, &st);
				MPI_Get_count(&st, MPI_BYTE, &cnt);
				if ((size_t)cnt != size)
					ok = 0;
				for (i = 0; i < size; i++)
					if (buf[i] != pat(seed, i)) {
						ok = 0;
						break;
					}
				for (i = 0; i < size; i++)
					buf[i] = pat(seed + 1, i);
				MPI_Send(buf, (int)size, MPI_BYTE, 0, 8,
					 MPI_COMM_WORLD);
			}
		}
		if (size == max_size)
			break;
		if (size * 4 > max_size && size != max_size)
			size = max_size / 4; /* end exactly at max_size */
	}
	free(buf);
	return ok;
}

static int check_collectives(void)
{
	int ok = 1, i, v = rank + 1, sum = 0, root;
	int *sb = malloc(sizeof(int) * nprocs * 64);
	int *rb = malloc(sizeof(int) * nprocs * 64);
	int *scnt = malloc(sizeof(int) * nprocs), *sdis = malloc(sizeof(int) * nprocs);
	int *rcnt = malloc(sizeof(int) * nprocs), *rdis = malloc(sizeof(int) * nprocs);
	double big[4096];

	MPI_Barrier(MPI_COMM_WORLD);
	for (root = 0; root < nprocs; root++) {
		for (i = 0; i < 4096; i++)
			big[i] = rank == root ? root * 1e6 + i : -1;
		MPI_Bcast(big, 4096, MPI_DOUBLE, root, MPI_COMM_WORLD);
		for (i = 0; i < 4096; i++)
			if (big[i] != root * 1e6 + i)
				ok = 0;
	}
	MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (sum != nprocs * (nprocs + 1) / 2)
		ok = 0;
	/* Alltoall: 64 ints per peer */
	for (i = 0; i < nprocs * 64; i++)
		sb[i] = rank * 100000 + i;
	MPI_Alltoall(sb, 64, MPI_INT, rb, 64, MPI_INT, MPI_COMM_WORLD);
	for (i = 0; i < nprocs * 64; i++) {
		int src = i / 64;

		if (rb[i] != src * 100000 + rank * 64 + i % 64)
			ok = 0;
	}
	/* Alltoallv: peer p gets p+1 ints */
	{
		int off = 0;

		for (i = 0; i < nprocs; i++) {
			scnt[i] = i + 1;
			sdis[i] = off;
			off += i + 1;
		}
		for (i = 0; i < off; i++)
			sb[i] = rank * 1000 + i;
		off = 0;
		for (i = 0; i < nprocs; i++) {
			rcnt[i] = rank + 1;
			rdis[i] = off;
			off += rank + 1;
		}
		MPI_Alltoallv(sb, scnt, sdis, MPI_INT, rb, rcnt, rdis,
			      MPI_INT, MPI_COMM_WORLD);
		for (i = 0; i < nprocs; i++) {
			int k;

			for (k = 0; k <= rank; k++)
				if (rb[rdis[i] + k] !=
				    i * 1000 + (rank * (rank + 1)) / 2 + k)
					ok = 0;
		}
	}
	free(sb);
	free(rb);
	free(scnt);
	free(sdis);
	free(rcnt);
	free(rdis);
	return ok;
}

static int check_any_source_tag(void)
{
	int ok = 1, i;

	if (rank == 0) {
		int seen = 0;

		for (i = 1; i < nprocs; i++) {
			int v;
			MPI_Status st;

			MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
				 MPI_COMM_WORLD, &st);
			if (v != st.MPI_SOURCE * 10 ||
			    st.MPI_TAG != 100 + st.MPI_SOURCE)
				ok = 0;
			seen |= 1 << st.MPI_SOURCE;
		}
		if (seen != ((1 << nprocs) - 2))
			ok = 0;
	} else {
		int v = rank * 10;

		MPI_Send(&v, 1, MPI_INT, 0, 100 + rank, MPI_COMM_WORLD);
	}
	return ok;
}

/* Messages from one sender with one tag arrive in send order. */
static int check_non_overtaking(int n)
{
	int ok = 1, i;

	if (nprocs < 2)
		return 0;
	if (rank == 1) {
		/* mix sizes so eager and rendezvous paths interleave */
		static char big[300000];

		for (i = 0; i < n; i++) {
			if (i % 50 == 0) {
				memset(big, i & 0xff, sizeof(big));
				big[0] = (char)(i & 0x7f);
				MPI_Send(big, sizeof(big), MPI_BYTE, 0, 5,
					 MPI_COMM_WORLD);
			} else {
				MPI_Send(&i, sizeof(i), MPI_BYTE, 0, 5,
					 MPI_COMM_WORLD);
			}
		}
	} else if (rank == 0) {
		static char big[300000];

		for (i = 0; i < n; i++) {
			MPI_Status st;
			int cnt;

			MPI_Recv(big, sizeof(big), MPI_BYTE, 1, 5,
				 MPI_COMM_WORLD, &st);
			MPI_Get_count(&st, MPI_BYTE, &cnt);
			if (i % 50 == 0) {
				if (cnt != (int)sizeof(big) ||
				    big[0] != (char)(i & 0x7f))
					ok = 0;
			} else {
				int v;

				memcpy(&v, big, sizeof(v));
				if (cnt != (int)sizeof(int) || v != i)
					ok = 0;
			}
		}
	}
	return ok;
}

/* Every rank posts thousands of Irecv and Isend to every other rank. */
static int check_many_outstanding(int per_peer)
{
	int n = per_peer * (nprocs - 1), ok = 1, i, k = 0, p;
	MPI_Request *req = malloc(sizeof(*req) * 2 * (size_t)n);
	int *in = malloc(sizeof(int) * (size_t)n);
	int *out = malloc(sizeof(int) * (size_t)n);

	for (p = 0; p < nprocs; p++) {
		if (p == rank)
			continue;
		for (i = 0; i < per_peer; i++, k++) {
			in[k] = -1;
			MPI_Irecv(&in[k], 1, MPI_INT, p, i, MPI_COMM_WORLD,
				  &req[k]);
		}
	}
	k = 0;
	for (p = 0; p < nprocs; p++) {
		if (p == rank)
			continue;
		for (i = 0; i < per_peer; i++, k++) {
			out[k] = rank * 1000000 + i;
			MPI_Isend(&out[k], 1, MPI_INT, p, i, MPI_COMM_WORLD,
				  &req[n + k]);
		}
	}
	MPI_Waitall(2 * n, req, MPI_STATUSES_IGNORE);
	k = 0;
	for (p = 0; p < nprocs; p++) {
		if (p == rank)
			continue;
		for (i = 0; i < per_peer; i++, k++)
			if (in[k] != p * 1000000 + i)
				ok = 0;
	}
	free(req);
	free(in);
	free(out);
	return ok;
}

int main(int argc, char **argv)
{
	size_t max_size = 16u << 20;
	int iters = 3, i, rc;
	const char *only = NULL;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--max-size") == 0 && i + 1 < argc)
			max_size = strtoull(argv[++i], NULL, 0);
		else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
			iters = atoi(argv[++i]);
		else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
			only = argv[++i];
	}
#define RUN(name, expr)                                                       \
	do {                                                                  \
		if (only == NULL || strcmp(only, name) == 0)                  \
			report(name, (expr));                                 \
	} while (0)
	RUN("pingpong", check_pingpong(max_size, iters));
	RUN("collectives", check_collectives());
	RUN("any_source_any_tag", check_any_source_tag());
	RUN("non_overtaking", check_non_overtaking(500));
	RUN("many_outstanding", check_many_outstanding(2000));
	rc = report_totals();
	MPI_Finalize();
	return rc;
}
