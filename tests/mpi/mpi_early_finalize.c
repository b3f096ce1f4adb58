/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_early_finalize.c - a rank that finalizes while its peer is still
 * receiving: rank 0 sends N small messages (blocking MPI_Send,
 * or Isend + Waitall with --isend) to rank 1 and calls MPI_Finalize at
 * once; rank 1 receives them slowly (a short sleep every --slow-every
 * messages) and checks every value and the order.  The job must end, and
 * rank 1 prints "N passed, 0 failed" (the format of mpi_check) after
 * checking every message; the launcher's deadline catches a hang.
 *
 *   mpi_early_finalize [--count N] [--isend] [--size BYTES]
 *                      [--slow-every K] [--slow-us US]
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void sleep_us(long us)
{
	struct timespec ts = {us / 1000000, (us % 1000000) * 1000};

	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	int rank, nprocs, count = 300, use_isend = 0, slow_every = 50;
	long slow_us = 20000;
	size_t size = 8, words, i;
	int a, k, bad = 0;
	uint64_t *buf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	for (a = 1; a < argc; a++) {
		if (strcmp(argv[a], "--count") == 0 && a + 1 < argc)
			count = atoi(argv[++a]);
		else if (strcmp(argv[a], "--isend") == 0)
			use_isend = 1;
		else if (strcmp(argv[a], "--size") == 0 && a + 1 < argc)
			size = strtoul(argv[++a], NULL, 0);
		else if (strcmp(argv[a], "--slow-every") == 0 && a + 1 < argc)
			slow_every = atoi(argv[++a]);
		else if (strcmp(argv[a], "--slow-us") == 0 && a + 1 < argc)
			slow_us = atol(argv[++a]);
		else {
			if (rank == 0)
				fprintf(stderr, "unknown argument %s\n",
					argv[a]);
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
	}
	if (nprocs != 2 || count < 1 || size < 8) {
		if (rank == 0)
			fprintf(stderr, "needs 2 ranks, --count >= 1, "
				"--size >= 8\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	words = size / 8;
	buf = calloc((size_t)count, words * 8);
	if (buf == NULL)
		MPI_Abort(MPI_COMM_WORLD, 3);
	/* Both ranks have their transport up before the test starts: a
	 * ping from rank 0, so the association is set up by one side. */
	if (rank == 0) {
		MPI_Send(&count, 1, MPI_INT, 1, 4, MPI_COMM_WORLD);
		MPI_Recv(&a, 1, MPI_INT, 1, 4, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
	} else {
		MPI_Recv(&a, 1, MPI_INT, 0, 4, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		MPI_Send(&a, 1, MPI_INT, 0, 4, MPI_COMM_WORLD);
	}
	if (rank == 0) {
		MPI_Request *reqs = calloc((size_t)count, sizeof(*reqs));

		for (k = 0; k < count; k++)
			for (i = 0; i < words; i++)
				buf[(size_t)k * words + i] =
					((uint64_t)k << 32) | i;
		for (k = 0; k < count; k++) {
			if (use_isend)
				MPI_Isend(buf + (size_t)k * words, (int)size,
					  MPI_BYTE, 1, 5, MPI_COMM_WORLD,
					  &reqs[k]);
			else
				MPI_Send(buf + (size_t)k * words, (int)size,
					 MPI_BYTE, 1, 5, MPI_COMM_WORLD);
		}
		if (use_isend)
			MPI_Waitall(count, reqs, MPI_STATUSES_IGNORE);
		free(reqs);
		/* Finalize at once, while rank 1 is still receiving. */
	} else {
		for (k = 0; k < count; k++) {
			uint64_t *m = buf + (size_t)k * words;

			if (slow_every > 0 && k % slow_every == 0)
				sleep_us(slow_us);
			MPI_Recv(m, (int)size, MPI_BYTE, 0, 5, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			for (i = 0; i < words; i++)
				if (m[i] != (((uint64_t)k << 32) | i)) {
					bad++;
					break;
				}
		}
		printf("%s early-finalize: %d messages of %zu bytes %s, "
		       "%d wrong\n", bad ? "FAIL" : "ok  ", count, size,
		       use_isend ? "Isend" : "Send", bad);
		printf("%d passed, %d failed\n", bad ? 0 : 1, bad ? 1 : 0);
		fflush(stdout);
	}
	free(buf);
	MPI_Finalize();
	return bad ? 1 : 0;
}
