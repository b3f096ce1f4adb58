/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdp_mpi_proxy.c - proxy patterns of real MPI applications: every step
 * computes (spins, no MPI call) for --compute-us, then communicates.  The
 * figure that matters is the time spent inside MPI per step: a transport
 * that only moves data while the process is inside MPI shows it here, where
 * a ping-pong (which never leaves MPI) does not.
 *
 *   --pattern halo      --neighbours K exchanges per step with ranks
 *                       r+-1, r+-2, ... (with 2 ranks all K with the
 *                       other one; MPI_Irecv, MPI_Send, MPI_Wait, as
 *                       LAMMPS' ghost-atom exchange does), --size bytes each
 *   --pattern alltoall  MPI_Alltoall of --size bytes per pair
 *   --pattern allreduce MPI_Allreduce of --size bytes (doubles, sum)
 *   --pattern small     --msgs non-blocking messages of --size bytes to and
 *                       from every other rank, then MPI_Waitall
 *
 * Every received byte is checked against the sender's pattern (rank, step,
 * neighbour, offset); a wrong byte fails the run (exit 1).  Output: one JSON
 * object on rank 0's stdout: wall time, mean communication time per step
 * (the slowest rank's), and its median over steps; what a job's size costs:
 * the slowest rank's MPI_Init, its first step (which connects the ranks:
 * UCX opens endpoints on first use), and each rank's memory after the
 * steps (/proc/self/status: peak RSS, anonymous and shared resident KiB,
 * the largest and the mean over ranks).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int rank, nranks;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The computation: CPU busy for us microseconds, no MPI call. */
static void compute(double us)
{
	double end = now_s() + us * 1e-6;
	volatile uint64_t x = 0;

	while (now_s() < end)
		for (int i = 0; i < 64; i++)
			x += (uint64_t)i * 2654435761u;
}

static uint8_t pat(int src, int step, int k, size_t i)
{
	return (uint8_t)(src * 131 + step * 31 + k * 7 + i * 40503u + (i >> 9));
}

static void fill(uint8_t *b, size_t n, int src, int step, int k)
{
	for (size_t i = 0; i < n; i++)
		b[i] = pat(src, step, k, i);
}

static void check(const uint8_t *b, size_t n, int src, int step, int k,
		  const char *what)
{
	for (size_t i = 0; i < n; i++) {
		if (b[i] != pat(src, step, k, i)) {
			fprintf(stderr,
				"sdp-mpi-proxy: rank %d: %s from %d step %d "
				"part %d: byte %zu is 0x%02x, expected 0x%02x\n",
				rank, what, src, step, k, i, b[i],
				pat(src, step, k, i));
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	}
}

/* KiB of one "Key:   N kB" line of /proc/self/status, 0 if absent. */
static double status_kib(const char *key)
{
	char line[256];
	size_t n = strlen(key);
	double v = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, key, n) == 0 && line[n] == ':') {
			v = strtod(line + n + 1, NULL);
			break;
		}
	fclose(f);
	return v;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: sdp-mpi-proxy [--pattern halo|alltoall|allreduce|small]"
		" [--size BYTES] [--compute-us US] [--steps N] [--neighbours K]"
		" [--msgs M] [--label TEXT]\n");
	MPI_Abort(MPI_COMM_WORLD, 2);
}

int main(int argc, char **argv)
{
	const char *pattern = "halo", *label = "";
	size_t size = 160 * 1024;
	double compute_us = 1000;
	int steps = 200, neighbours = 4, msgs = 16;
	uint8_t *sbuf, *rbuf;
	double *comm_s, t0, wall;
	size_t per_step;

	double init_s = now_s(), first_s;

	MPI_Init(&argc, &argv);
	init_s = now_s() - init_s;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	for (int i = 1; i < argc; i++) {
		if (i + 1 >= argc)
			usage();
		if (!strcmp(argv[i], "--pattern"))
			pattern = argv[++i];
		else if (!strcmp(argv[i], "--size"))
			size = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--compute-us"))
			compute_us = atof(argv[++i]);
		else if (!strcmp(argv[i], "--steps"))
			steps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--neighbours"))
			neighbours = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--msgs"))
			msgs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--label"))
			label = argv[++i];
		else
			usage();
	}
	if (nranks < 2 || steps < 1 || neighbours < 1 || msgs < 1 || size < 8)
		usage();
	if (!strcmp(pattern, "allreduce"))
		size &= ~(size_t)7;
	per_step = size * (size_t)(!strcmp(pattern, "small") ?
				   msgs * nranks : nranks + neighbours);
	sbuf = malloc(per_step);
	rbuf = malloc(per_step);
	comm_s = calloc(steps, sizeof(*comm_s));
	if (!sbuf || !rbuf || !comm_s) {
		fprintf(stderr, "sdp-mpi-proxy: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = now_s();
	for (int s = 0; s < steps; s++) {
		double c0;

		compute(compute_us);
		if (!strcmp(pattern, "halo")) {
			for (int k = 0; k < neighbours; k++) {
				/* k-th exchange: with r+d and r-d, d = k/2+1
				 * (modulo the other ranks: never itself) */
				int d = (k / 2) % (nranks - 1) + 1;
				int to = (k & 1) ? (rank + nranks - d) % nranks
						 : (rank + d) % nranks;
				int from = (k & 1) ? (rank + d) % nranks
						   : (rank + nranks - d) % nranks;
				MPI_Request rq;

				fill(sbuf, size, rank, s, k);
				c0 = now_s();
				MPI_Irecv(rbuf, (int)size, MPI_BYTE, from, k,
					  MPI_COMM_WORLD, &rq);
				MPI_Send(sbuf, (int)size, MPI_BYTE, to, k,
					 MPI_COMM_WORLD);
				MPI_Wait(&rq, MPI_STATUS_IGNORE);
				comm_s[s] += now_s() - c0;
				check(rbuf, size, from, s, k, "halo");
			}
		} else if (!strcmp(pattern, "alltoall")) {
			for (int p = 0; p < nranks; p++)
				fill(sbuf + p * size, size, rank, s, p);
			c0 = now_s();
			MPI_Alltoall(sbuf, (int)size, MPI_BYTE, rbuf, (int)size,
				     MPI_BYTE, MPI_COMM_WORLD);
			comm_s[s] += now_s() - c0;
			for (int p = 0; p < nranks; p++)
				check(rbuf + p * size, size, p, s, rank,
				      "alltoall");
		} else if (!strcmp(pattern, "allreduce")) {
			size_t n = size / 8;
			double *in = (double *)sbuf, *out = (double *)rbuf;

			for (size_t i = 0; i < n; i++)
				in[i] = (double)(rank + 1) * (double)(i % 1000 + s);
			c0 = now_s();
			MPI_Allreduce(in, out, (int)n, MPI_DOUBLE, MPI_SUM,
				      MPI_COMM_WORLD);
			comm_s[s] += now_s() - c0;
			for (size_t i = 0; i < n; i++) {
				double want = (double)nranks * (nranks + 1) / 2 *
					      (double)(i % 1000 + s);
				if (out[i] != want) {
					fprintf(stderr,
						"sdp-mpi-proxy: rank %d: allreduce "
						"step %d element %zu is %g, expected %g\n",
						rank, s, i, out[i], want);
					MPI_Abort(MPI_COMM_WORLD, 1);
				}
			}
		} else if (!strcmp(pattern, "small")) {
			int nreq = 2 * msgs * (nranks - 1), q = 0;
			MPI_Request *rq = malloc(nreq * sizeof(*rq));

			c0 = now_s();
			for (int p = 0; p < nranks; p++) {
				if (p == rank)
					continue;
				for (int m = 0; m < msgs; m++)
					MPI_Irecv(rbuf + ((size_t)p * msgs + m) * size,
						  (int)size, MPI_BYTE, p, m,
						  MPI_COMM_WORLD, &rq[q++]);
			}
			for (int p = 0; p < nranks; p++) {
				if (p == rank)
					continue;
				for (int m = 0; m < msgs; m++) {
					uint8_t *b = sbuf +
						     ((size_t)p * msgs + m) * size;
					fill(b, size, rank, s, p * msgs + m);
					MPI_Isend(b, (int)size, MPI_BYTE, p, m,
						  MPI_COMM_WORLD, &rq[q++]);
				}
			}
			MPI_Waitall(q, rq, MPI_STATUSES_IGNORE);
			comm_s[s] += now_s() - c0;
			for (int p = 0; p < nranks; p++) {
				if (p == rank)
					continue;
				for (int m = 0; m < msgs; m++)
					check(rbuf + ((size_t)p * msgs + m) * size,
					      size, p, s, rank * msgs + m, "small");
			}
			free(rq);
		} else {
			usage();
		}
	}
	wall = now_s() - t0;
	first_s = comm_s[0];
	{
		/* the cost of the job's size: slowest MPI_Init and first
		 * step; memory per rank (largest, mean) */
		static const char *const keys[] = { "VmHWM", "RssAnon",
						    "RssShmem" };
		double mem[3], mem_max[3], mem_sum[3], init_max, first_max;

		for (int k = 0; k < 3; k++)
			mem[k] = status_kib(keys[k]);
		MPI_Reduce(mem, mem_max, 3, MPI_DOUBLE, MPI_MAX, 0,
			   MPI_COMM_WORLD);
		MPI_Reduce(mem, mem_sum, 3, MPI_DOUBLE, MPI_SUM, 0,
			   MPI_COMM_WORLD);
		MPI_Reduce(&init_s, &init_max, 1, MPI_DOUBLE, MPI_MAX, 0,
			   MPI_COMM_WORLD);
		MPI_Reduce(&first_s, &first_max, 1, MPI_DOUBLE, MPI_MAX, 0,
			   MPI_COMM_WORLD);
		if (rank == 0)
			printf("{\"label\": \"%s\", \"ranks\": %d, "
			       "\"init_s_max\": %.3f, \"first_step_s_max\": "
			       "%.3f, \"hwm_kib_max\": %.0f, "
			       "\"hwm_kib_mean\": %.0f, \"anon_kib_max\": %.0f, "
			       "\"anon_kib_mean\": %.0f, \"shmem_kib_max\": "
			       "%.0f, \"shmem_kib_mean\": %.0f}\n",
			       label, nranks, init_max, first_max, mem_max[0],
			       mem_sum[0] / nranks, mem_max[1],
			       mem_sum[1] / nranks, mem_max[2],
			       mem_sum[2] / nranks);
	}
	{
		double *all_comm = NULL, mean = 0, worst_mean = 0, med;
		double sum = 0, wall_max;

		for (int s = 0; s < steps; s++)
			sum += comm_s[s];
		mean = sum / steps;
		MPI_Reduce(&mean, &worst_mean, 1, MPI_DOUBLE, MPI_MAX, 0,
			   MPI_COMM_WORLD);
		MPI_Reduce(&wall, &wall_max, 1, MPI_DOUBLE, MPI_MAX, 0,
			   MPI_COMM_WORLD);
		qsort(comm_s, steps, sizeof(*comm_s), cmp_double);
		med = comm_s[steps / 2];
		if (rank == 0)
			all_comm = malloc(nranks * sizeof(*all_comm));
		MPI_Gather(&med, 1, MPI_DOUBLE, all_comm, 1, MPI_DOUBLE, 0,
			   MPI_COMM_WORLD);
		if (rank == 0) {
			double worst_med = 0;

			for (int p = 0; p < nranks; p++)
				if (all_comm[p] > worst_med)
					worst_med = all_comm[p];
			printf("{\"label\": \"%s\", \"pattern\": \"%s\", "
			       "\"ranks\": %d, \"size\": %zu, "
			       "\"compute_us\": %g, \"steps\": %d, "
			       "\"neighbours\": %d, \"msgs\": %d, "
			       "\"wall_s\": %.6f, \"comm_us_mean\": %.2f, "
			       "\"comm_us_median\": %.2f, \"verified\": true}\n",
			       label, pattern, nranks, size, compute_us, steps,
			       neighbours, msgs, wall_max, worst_mean * 1e6,
			       worst_med * 1e6);
			fflush(stdout);
			free(all_comm);
		}
	}
	free(sbuf);
	free(rbuf);
	free(comm_s);
	MPI_Finalize();
	return 0;
}
