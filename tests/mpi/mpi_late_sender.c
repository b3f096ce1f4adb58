/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_late_sender.c - a peer that finishes early: rank 1 calls MPI_Finalize
 * at once, rank 0 sleeps --delay-ms and then sends it --count small
 * messages nobody will receive (MPI_ERRORS_RETURN), and finalizes.  The
 * late rank must not hang: each rank prints what it did, and rank 0
 * either finishes ("late sender: N of N sent, finalized") or reports the
 * MPI error of the send that failed ("late sender: send K failed: ...");
 * an error in MPI_Finalize itself aborts the job with the library's own
 * message.  The launcher's deadline is not what ends it: the test bounds
 * the job's wall time well below it.
 *
 *   mpi_late_sender [--count N] [--delay-ms MS]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
	int rank, a, i, count = 200, delay_ms = 2000, len = 0;
	char buf[64], err[MPI_MAX_ERROR_STRING];
	struct timespec ts;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (a = 1; a < argc; a++) {
		if (strcmp(argv[a], "--count") == 0 && a + 1 < argc)
			count = atoi(argv[++a]);
		else if (strcmp(argv[a], "--delay-ms") == 0 && a + 1 < argc)
			delay_ms = atoi(argv[++a]);
	}
	if (rank != 0) {
		printf("late sender: rank %d finalizing early\n", rank);
		fflush(stdout);
		MPI_Finalize();
		printf("late sender: rank %d left MPI_Finalize\n", rank);
		return 0;
	}
	ts.tv_sec = delay_ms / 1000;
	ts.tv_nsec = (long)(delay_ms % 1000) * 1000000;
	nanosleep(&ts, NULL);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	memset(buf, 0x42, sizeof(buf));
	for (i = 0; i < count; i++) {
		int rc = MPI_Send(buf, sizeof(buf), MPI_CHAR, 1, 5,
				  MPI_COMM_WORLD);

		if (rc != MPI_SUCCESS) {
			MPI_Error_string(rc, err, &len);
			printf("late sender: send %d failed: %s\n", i, err);
			break;
		}
	}
	if (i == count)
		printf("late sender: %d of %d sent\n", i, count);
	fflush(stdout);
	MPI_Finalize();
	printf("late sender: rank 0 finalized\n");
	return 0;
}
