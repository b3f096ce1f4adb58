/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_finalize_drain.c - the last messages before MPI_Finalize arrive
 * (run by tests/integration/test_mpi.py with 2 ranks).
 *
 * MPICH's MPI_Finalize closes (flushes) every UCX endpoint, then blocks in
 * an out-of-band PMI barrier without UCX progress.  A user-space stack
 * that stops polling there neither sends what it still queues nor
 * acknowledges what came in, so the transport's flush must not complete
 * before the association is quiet:
 *
 *   1. rank 1 Isends LARGE bytes (default 3 MiB, under usrsctp's 4 MiB send
 *      buffer) to rank 0, which starts its ANY_SOURCE receive only after a
 *      barrier (the pattern of MPICH's test/mpi pt2pt/precv_anysrc).  Rank
 *      1's Wait returns once usrsctp holds the bytes, most of them still
 *      behind the congestion window; if its flush returned then, rank 1
 *      would sit in the PMI barrier with them and rank 0 would wait
 *      forever.
 *   2. then one small message from rank 1 to rank 0, the last thing before
 *      MPI_Finalize: one packet, which rank 0's stack acknowledges only
 *      after the delayed-SACK time.  If rank 0 stopped polling before
 *      that, rank 1's flush would wait until its retransmissions give the
 *      association up (seconds; "association ... lost" at
 *      UCX_LOG_LEVEL=diag).
 *
 * Either last message also arrives alone in the receiver's iface RX queue
 * after everything before it was drained: with the queue's counter left
 * uninitialised (heap garbage, e.g. -1) it stayed there forever.
 *
 * Every byte is verified.  Rank 0 prints "N passed, M failed" before
 * MPI_Finalize; the exit status is non-zero on failure.
 *
 *   mpi_finalize_drain [LARGE_BYTES]
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SMALL_BYTES 64

static uint8_t pat(uint64_t seed, uint64_t i)
{
	return (uint8_t)((seed * 2654435761u + i * 40503u + (i >> 9)) & 0xff);
}

static int verify(const uint8_t *buf, size_t len, uint64_t seed)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (buf[i] != pat(seed, i)) {
			fprintf(stderr, "byte %zu of %zu: 0x%02x, expected "
				"0x%02x\n", i, len, buf[i], pat(seed, i));
			return 0;
		}
	}
	return 1;
}

int main(int argc, char **argv)
{
	size_t large = argc > 1 ? strtoull(argv[1], NULL, 0) : 3u << 20;
	int rank, nprocs, ok_large = 1, ok_small = 1, failed;
	uint8_t *buf, small[SMALL_BYTES];
	MPI_Request req;
	MPI_Status st;
	size_t i;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	buf = malloc(large ? large : 1);
	if (nprocs != 2 || large == 0 || large > INT32_MAX || buf == NULL) {
		if (rank == 0)
			fprintf(stderr, "mpi_finalize_drain: needs 2 ranks and "
				"1 <= LARGE_BYTES <= 2^31-1 (got %d ranks, "
				"%zu bytes)\n", nprocs, large);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}

	/* 1. large message, receive posted late from ANY_SOURCE */
	if (rank == 0) {
		memset(buf, 0, large);
		MPI_Recv_init(buf, (int)large, MPI_BYTE, MPI_ANY_SOURCE,
			      MPI_ANY_TAG, MPI_COMM_WORLD, &req);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Start(&req);
		MPI_Wait(&req, &st);
		MPI_Request_free(&req);
		ok_large = st.MPI_SOURCE == 1 && st.MPI_TAG == 1 &&
			   verify(buf, large, 1);
	} else {
		for (i = 0; i < large; i++)
			buf[i] = pat(1, i);
		MPI_Isend(buf, (int)large, MPI_BYTE, 0, 1, MPI_COMM_WORLD,
			  &req);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Wait(&req, MPI_STATUS_IGNORE);
	}

	/* 2. one packet, the last thing before MPI_Finalize */
	if (rank == 0) {
		memset(small, 0, sizeof(small));
		MPI_Recv(small, sizeof(small), MPI_BYTE, 1, 2, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		ok_small = verify(small, sizeof(small), 2);
		failed = !ok_large + !ok_small;
		printf("%s large message (%zu bytes) received before "
		       "MPI_Finalize\n", ok_large ? "ok  " : "FAIL", large);
		printf("%s last small message received before MPI_Finalize\n",
		       ok_small ? "ok  " : "FAIL");
		printf("%d passed, %d failed\n", 2 - failed, failed);
		fflush(stdout);
	} else {
		for (i = 0; i < sizeof(small); i++)
			small[i] = pat(2, i);
		MPI_Send(small, sizeof(small), MPI_BYTE, 0, 2, MPI_COMM_WORLD);
	}
	free(buf);
	MPI_Finalize();
	return rank == 0 && !(ok_large && ok_small);
}
