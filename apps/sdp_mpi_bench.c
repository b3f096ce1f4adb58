/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdp_mpi_bench.c - MPI latency and bandwidth sweep between ranks 0 and 1
 * (the demo, and the MPI benchmark of docs/BENCHMARKS.md).
 *
 *   latency:   ping-pong, one-way time = round trip / 2, median of the
 *              iterations (and p99), per size
 *   bandwidth: rank 0 sends a window of --window non-blocking messages,
 *              rank 1 answers each window with one byte; MB/s per size;
 *              about 256 MiB per size, --bw-mib M for M MiB (profiles)
 *
 * Every message is checked: the receiver verifies the pattern of the last
 * message of every size (and its length), so a fast wrong answer fails.
 * Output: a table, or with --json one JSON object per line per size.
 * --netdev IFACE: rank 0 also prints the bytes each rank's kernel
 * interface IFACE sent and received during the run (/sys/class/net: the
 * rank's namespace's view under sdp-rank), e.g. to show that a UCX tcp
 * baseline crossed the veths and not the host's loopback.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank;

/* IFACE's statistics counter NAME (tx_bytes, rx_bytes); -1 if unreadable */
static long long netdev_counter(const char *iface, const char *name)
{
	char path[256];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/%s", iface,
		 name);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static uint8_t pat(uint64_t seed, uint64_t i)
{
	return (uint8_t)((seed * 2654435761u + i * 40503u + (i >> 9)) & 0xff);
}

static void fill(uint8_t *b, size_t n, uint64_t seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = pat(seed, i);
}

static int verify(const uint8_t *b, size_t n, uint64_t seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i] != pat(seed, i))
			return 0;
	return 1;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int iters_for(size_t size, int max_iters)
{
	long it = (long)((64u << 20) / (size + 64));

	if (it > max_iters)
		it = max_iters;
	return it < 10 ? 10 : (int)it;
}

static int latency(uint8_t *buf, size_t size, int iters, double *p50,
		   double *p99)
{
	double *t = malloc(sizeof(double) * (size_t)iters);
	int i, ok = 1, warm = 5;

	for (i = -warm; i < iters; i++) {
		double t0 = MPI_Wtime();
		uint64_t seed = size + (uint64_t)(i + warm);

		if (rank == 0) {
			if (i == iters - 1)
				fill(buf, size, seed);
			MPI_Send(buf, (int)size, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
			MPI_Recv(buf, (int)size, MPI_BYTE, 1, 2, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			if (i == iters - 1 && !verify(buf, size, seed + 1))
				ok = 0;
		} else {
			MPI_Status st;
			int cnt;

			MPI_Recv(buf, (int)size, MPI_BYTE, 0, 1, MPI_COMM_WORLD,
				 &st);
			MPI_Get_count(&st, MPI_BYTE, &cnt);
			if (i == iters - 1) {
				if ((size_t)cnt != size || !verify(buf, size, seed))
					ok = 0;
				fill(buf, size, seed + 1);
			}
			MPI_Send(buf, (int)size, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
		}
		if (i >= 0)
			t[i] = (MPI_Wtime() - t0) / 2 * 1e6;
	}
	qsort(t, (size_t)iters, sizeof(double), cmp_dbl);
	*p50 = t[iters / 2];
	*p99 = t[(iters * 99) / 100];
	free(t);
	return ok;
}

static int bandwidth(uint8_t *buf, size_t size, int window, int reps,
		     double *mbps)
{
	MPI_Request *req = malloc(sizeof(*req) * (size_t)window);
	uint8_t *rbuf = rank == 1 ? malloc(size * (size_t)window + 1) : NULL;
	double t0 = 0;
	int r, w, ok = 1;
	char ack = 0;

	for (r = -1; r < reps; r++) {
		if (r == 0)
			t0 = MPI_Wtime();
		if (rank == 0) {
			if (r == reps - 1)
				fill(buf, size, size * 7);
			for (w = 0; w < window; w++)
				MPI_Isend(buf, (int)size, MPI_BYTE, 1, 3,
					  MPI_COMM_WORLD, &req[w]);
			MPI_Waitall(window, req, MPI_STATUSES_IGNORE);
			MPI_Recv(&ack, 1, MPI_BYTE, 1, 4, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		} else {
			for (w = 0; w < window; w++)
				MPI_Irecv(rbuf + (size_t)w * size, (int)size,
					  MPI_BYTE, 0, 3, MPI_COMM_WORLD,
					  &req[w]);
			MPI_Waitall(window, req, MPI_STATUSES_IGNORE);
			if (r == reps - 1 &&
			    !verify(rbuf + (size_t)(window - 1) * size, size,
				    size * 7))
				ok = 0;
			MPI_Send(&ack, 1, MPI_BYTE, 0, 4, MPI_COMM_WORLD);
		}
	}
	*mbps = (double)size * window * reps / (MPI_Wtime() - t0) / 1e6;
	free(req);
	free(rbuf);
	return ok;
}

int main(int argc, char **argv)
{
	size_t max_size = 4u << 20, min_size = 0, size;
	int nprocs, i, json = 0, window = 32, max_iters = 2000, all_ok = 1;
	int bw = 1;
	double bw_bytes = 256.0 * 1048576; /* per size: --bw-mib (profiles) */
	uint8_t *buf;
	const char *netdev = NULL;
	long long nd[4] = {0, 0, 0, 0};

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (strcmp(argv[i], "--max-size") == 0 && i + 1 < argc)
			max_size = strtoull(argv[++i], NULL, 0);
		else if (strcmp(argv[i], "--window") == 0 && i + 1 < argc)
			window = atoi(argv[++i]);
		else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
			max_iters = atoi(argv[++i]);
		else if (strcmp(argv[i], "--min-size") == 0 && i + 1 < argc)
			min_size = strtoull(argv[++i], NULL, 0);
		else if (strcmp(argv[i], "--bw-mib") == 0 && i + 1 < argc)
			bw_bytes = atof(argv[++i]) * 1048576;
		else if (strcmp(argv[i], "--no-bw") == 0)
			bw = 0; /* latency only (traces, quick sweeps) */
		else if (strcmp(argv[i], "--netdev") == 0 && i + 1 < argc)
			netdev = argv[++i];
	}
	if (netdev != NULL) {
		nd[0] = netdev_counter(netdev, "tx_bytes");
		nd[1] = netdev_counter(netdev, "rx_bytes");
	}
	if (nprocs < 2) {
		if (rank == 0)
			fprintf(stderr, "sdp-mpi-bench: needs 2 ranks\n");
		MPI_Finalize();
		return 2;
	}
	buf = malloc(max_size + 1);
	if (rank == 0 && !json)
		printf("%10s %12s %12s %12s %s\n", "bytes", "lat_p50_us",
		       "lat_p99_us", "bw_MB/s", "verified");
	for (size = min_size; size <= max_size; size = size ? size * 2 : 1) {
		double p50 = 0, p99 = 0, mbps = 0;
		int ok = 1, all;
		int iters = iters_for(size, max_iters);
		double want = bw_bytes / ((double)(size + 256) * window);
		int reps = want > 1e6 ? 1000000 : (int)want;

		if (reps < 3)
			reps = 3;
		if (reps > 200 && bw_bytes <= 256.0 * 1048576)
			reps = 200;
		if (rank < 2) {
			ok &= latency(buf, size, iters, &p50, &p99);
			if (size >= 1 && bw)
				ok &= bandwidth(buf, size, window, reps, &mbps);
		}
		MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
		all_ok &= all;
		if (rank == 0) {
			if (json)
				printf("{\"size\": %zu, \"latency_us_p50\": %.3f,"
				       " \"latency_us_p99\": %.3f, \"bw_mbps\": "
				       "%.2f, \"verified\": %s}\n", size, p50,
				       p99, mbps, all ? "true" : "false");
			else
				printf("%10zu %12.2f %12.2f %12.1f %s\n", size,
				       p50, p99, mbps, all ? "yes" : "NO");
			fflush(stdout);
		}
		if (size == max_size)
			break;
	}
	free(buf);
	if (netdev != NULL) {
		long long *all_nd = malloc(sizeof(nd) * nprocs);
		int r;

		nd[2] = netdev_counter(netdev, "tx_bytes");
		nd[3] = netdev_counter(netdev, "rx_bytes");
		MPI_Gather(nd, 4, MPI_LONG_LONG, all_nd, 4, MPI_LONG_LONG, 0,
			   MPI_COMM_WORLD);
		for (r = 0; rank == 0 && r < nprocs; r++) {
			long long *c = all_nd + 4 * r;

			if (c[0] < 0 || c[2] < 0)
				printf("netdev %s rank %d: unreadable\n", netdev,
				       r);
			else
				printf("netdev %s rank %d: tx_bytes %lld "
				       "rx_bytes %lld\n", netdev, r,
				       c[2] - c[0], c[3] - c[1]);
		}
		free(all_nd);
	}
	MPI_Finalize();
	return all_ok ? 0 : 1;
}
