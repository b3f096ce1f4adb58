/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_streams.c - MPI's ordering rules over the transport's stream map
 * (UCX_SCTP_DPDK_STREAM_TAG_MASK), run by tests/integration/
 * test_mpi_streams.py under loss.
 *
 * Every rank but 0 sends ROUNDS rounds to rank 0; each round one message
 * on each of NCOMM communicators (MPI_Comm_dup of WORLD), sizes cycling
 * through 8 B, 30 KB (eager, several fragments) and 300 KB (rendezvous),
 * every fourth small one synchronous (eager sync), tags cycling 1..5, the
 * payload naming (source, communicator, round) and filled with a pattern.
 * Rank 0 receives them in a different communicator order than sent, so
 * other communicators' messages wait as unexpected:
 *
 *   --any-tag (legal with any mapping but a tag one): per communicator,
 *     MPI_ANY_SOURCE + MPI_ANY_TAG; the rounds of each source must come in
 *     send order (non-overtaking) with the tag they were sent with.
 *   default: per communicator and tag, a specific source; the rounds of
 *     each (source, tag) in order (legal with the tag mapping too).
 *
 * Prints one line per check and "N passed, M failed" from rank 0.
 *
 *   mpi_streams [--any-tag] [--rounds N] [--comms N]
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_COMMS 32
#define BIG 300000
#define NTAGS 5

static const int sizes[3] = {8, 30000, BIG};

static int msg_size(int r, int c)
{
	return sizes[(r + c) % 3];
}

static int msg_tag(int r)
{
	return 1 + r % NTAGS;
}

static uint8_t pat(int src, int c, int r, size_t i)
{
	return (uint8_t)(src * 131 + c * 31 + r * 7 + i * 13 + (i >> 9));
}

static void fill(uint8_t *b, int n, int src, int c, int r)
{
	int hdr[3] = {src, c, r};
	int i;

	for (i = 0; i < n; i++)
		b[i] = pat(src, c, r, (size_t)i);
	memcpy(b, hdr, n < (int)sizeof(hdr) ? (size_t)n : sizeof(hdr));
}

/* Checks one received message against what (src, c, r) sent. */
static int verify(const uint8_t *b, int n, int src, int c, int r)
{
	int hdr[3], i;

	if (n != msg_size(r, c))
		return 0;
	if (n >= (int)sizeof(hdr)) {
		memcpy(hdr, b, sizeof(hdr));
		if (hdr[0] != src || hdr[1] != c || hdr[2] != r)
			return 0;
	}
	for (i = (int)sizeof(hdr); i < n; i++)
		if (b[i] != pat(src, c, r, (size_t)i))
			return 0;
	return 1;
}

int main(int argc, char **argv)
{
	int rank, nprocs, ncomm = 10, rounds = 30, any_tag = 0, i, c, r, t;
	int bad = 0, ok = 0, total = 0, nsrc;
	MPI_Comm comms[MAX_COMMS];
	uint8_t *buf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--any-tag") == 0)
			any_tag = 1;
		else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (strcmp(argv[i], "--comms") == 0 && i + 1 < argc)
			ncomm = atoi(argv[++i]);
	}
	if (ncomm < 1 || ncomm > MAX_COMMS || rounds < 1 || nprocs < 2) {
		if (rank == 0)
			fprintf(stderr, "mpi_streams: --comms 1..%d, --rounds "
				">= 1, at least 2 ranks\n", MAX_COMMS);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	for (c = 0; c < ncomm; c++)
		MPI_Comm_dup(MPI_COMM_WORLD, &comms[c]);
	nsrc = nprocs - 1;

	if (rank != 0) {
		int n = rounds * ncomm, k = 0;
		MPI_Request *req = malloc(sizeof(*req) * (size_t)n);
		uint8_t **bufs = malloc(sizeof(*bufs) * (size_t)n);

		for (r = 0; r < rounds; r++) {
			for (c = 0; c < ncomm; c++, k++) {
				int sz = msg_size(r, c);

				bufs[k] = malloc((size_t)sz);
				fill(bufs[k], sz, rank, c, r);
				if (sz == 8 && r % 4 == 0)
					MPI_Issend(bufs[k], sz, MPI_BYTE, 0,
						   msg_tag(r), comms[c],
						   &req[k]);
				else
					MPI_Isend(bufs[k], sz, MPI_BYTE, 0,
						  msg_tag(r), comms[c],
						  &req[k]);
			}
		}
		MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
		for (k = 0; k < n; k++)
			free(bufs[k]);
		free(bufs);
		free(req);
	} else {
		buf = malloc(BIG);
		/* receive communicators in reverse order of sending */
		for (c = ncomm - 1; c >= 0; c--) {
			if (any_tag) {
				int next[64] = {0};

				for (i = 0; i < rounds * nsrc; i++) {
					MPI_Status st;
					int n, src;

					MPI_Recv(buf, BIG, MPI_BYTE,
						 MPI_ANY_SOURCE, MPI_ANY_TAG,
						 comms[c], &st);
					MPI_Get_count(&st, MPI_BYTE, &n);
					src = st.MPI_SOURCE;
					r = next[src]++;
					total++;
					if (st.MPI_TAG == msg_tag(r) &&
					    verify(buf, n, src, c, r))
						ok++;
					else if (bad++ < 5)
						printf("comm %d src %d: message "
						       "%d out of order or "
						       "corrupt (tag %d, %d "
						       "B)\n", c, src, r,
						       st.MPI_TAG, n);
				}
				continue;
			}
			for (t = NTAGS; t >= 1; t--) {
				int src;

				for (src = 1; src < nprocs; src++) {
					for (r = t - 1; r < rounds;
					     r += NTAGS) {
						MPI_Status st;
						int n;

						MPI_Recv(buf, BIG, MPI_BYTE,
							 src, t, comms[c],
							 &st);
						MPI_Get_count(&st, MPI_BYTE,
							      &n);
						total++;
						if (verify(buf, n, src, c, r))
							ok++;
						else if (bad++ < 5)
							printf("comm %d src %d "
							       "tag %d: "
							       "message %d "
							       "out of order "
							       "or corrupt\n",
							       c, src, t, r);
					}
				}
			}
		}
		free(buf);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		int pass = (total == rounds * ncomm * nsrc) && ok == total;

		printf("%s %s: %d of %d messages in order and intact "
		       "(%d communicators, %d senders)\n",
		       pass ? "ok  " : "FAIL",
		       any_tag ? "any_tag_order" : "tag_order", ok, total,
		       ncomm, nsrc);
		printf("%d passed, %d failed\n", pass, !pass);
		fflush(stdout);
		bad = !pass;
	}
	for (c = 0; c < ncomm; c++)
		MPI_Comm_free(&comms[c]);
	MPI_Finalize();
	return bad;
}
