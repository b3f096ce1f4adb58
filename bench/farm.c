/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * farm.c - seed 000's Bulk Processor Farm (Kamal 2005, ch. 5): a manager
 * (rank 0) hands out tasks to workers (every other rank).
 *
 *   worker                                manager
 *   REQ x outstanding (tag 1000) ------->  per REQ: `fanout` tasks of one
 *                                          random type (1 of 10), `size`
 *   <------ task (type t: comm t or tag t) bytes each, until `tasks` sent
 *   checks it, RES (tag 1001, 64 B) ---->  counts results
 *   after every `fanout` tasks: a new REQ
 *   <--------------------------- DONE (tag 1002) once every result is in
 *
 * A worker has one receive posted per task type and takes whichever task
 * arrives first (MPI_Waitany), so a task delayed by a lost packet holds up
 * only what the transport orders behind it.  --mode comm: one
 * communicator per task type (MPI_Comm_dup), task receives use
 * MPI_ANY_TAG (as the seed's workers did); --mode tag: one communicator,
 * one tag per type, no MPI_ANY_TAG anywhere (what the tag stream map
 * requires).  The manager's receives name their tag (REQ, RES).
 *
 * Rank 0 prints one JSON line: {"mode", "tasks", "size", "fanout",
 * "workers", "outstanding", "seconds", "tasks_per_s", "bad", "lat_ms",
 * "worker_idle_frac"}; "bad" counts tasks whose content was wrong (must be
 * 0).  Where the time goes: "lat_ms" (p50/p90/p99/max/mean) is each task's
 * delivery time, from the manager's MPI_Isend to the worker's completion
 * of its receive (CLOCK_MONOTONIC, one host; the k-th task of type t to
 * worker w is the k-th the worker receives on type t, as MPI does not let
 * messages of one communicator and tag overtake each other), so it holds
 * the sender's queue, the wire, loss recovery and any head-of-line wait;
 * "worker_idle_frac" is the share of its run time a worker spent waiting
 * for a task (mean over the workers that got tasks: with 300 KB tasks,
 * fanout 10 and 10 requests open, 200 tasks go to two workers in one
 * burst): with workers never idle, a task that
 * waits behind a lost one costs the run nothing.  "inorder_ms"
 * (mean/p99/max) is, per task, how much later it would have arrived had
 * it waited for every task sent before it to the same worker (one
 * ordered stream, the same arrival times): the head-of-line wait the
 * streams removed in this run (0 with one stream: nothing overtakes);
 * "inorder_frac" its share of the summed latency, "overtakes" the tasks
 * that arrived before an earlier-sent one; "inorder_wall_s" the wall
 * time per worker (mean over the workers that got tasks) during which
 * in-order delivery would have withheld a task that had arrived.
 *
 * --type-per task draws each task's type on its own (the seed: "each
 * task is assigned a different tag"; whether the tasks of one request
 * shared a type it does not say), so a request's F tasks spread over the
 * streams; the default (request) gives all F one type, one stream.
 * --work-us W: the worker computes W us (a busy loop) per task before
 * answering (the seed gives no figure; default 0).
 *
 *   farm [--mode comm|tag] [--tasks N] [--size BYTES] [--fanout F]
 *        [--outstanding R] [--types T] [--seed S] [--type-per task|request]
 *        [--work-us W]
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TAG_REQ 1000
#define TAG_RES 1001
#define TAG_DONE 1002
#define TAG_TRACE 1003
#define MAX_TYPES 64
#define SEND_RING 4096

typedef struct {
	int comm_mode;	/* 1: communicator per type; 0: tag per type */
	int tasks, size, fanout, outstanding, types;
	unsigned seed;
	int type_per_task;	/* 1: a type per task; 0: one per request */
	int work_us;		/* worker compute per task */
} farm_cfg_t;

static MPI_Comm type_comm[MAX_TYPES];

static MPI_Comm comm_of(const farm_cfg_t *c, int t)
{
	return c->comm_mode ? type_comm[t] : MPI_COMM_WORLD;
}

static int tag_of(const farm_cfg_t *c, int t)
{
	return c->comm_mode ? 0 : t;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Per-task delivery times: sent[w][t][k] at the manager. */
typedef struct {
	double *sent;	/* [nworkers][types][tasks] */
	int *nsent;	/* [nworkers][types] */
	double lat_ms[5], idle_frac;
	/* in-order cost: per task, how much later it would have been
	 * delivered had it waited for every task sent before it to the same
	 * worker (one ordered stream, the same arrivals); mean, p99, max,
	 * and its share of the summed latency; tasks delivered before an
	 * earlier-sent one */
	double hol_ms[3], hol_frac;
	long overtakes;
	/* wall time, per worker (mean), during which in-order delivery
	 * would have withheld at least one task that had arrived: the union
	 * of [arrival, arrival + in-order cost) over its tasks; as a share
	 * of the run, what the streams could save at most for a worker that
	 * has nothing else to do */
	double hol_wall_s;
} farm_trace_t;

typedef struct {
	double snd, rcv;
} farm_pair_t;

static int cmp_pair(const void *a, const void *b)
{
	const farm_pair_t *x = a, *y = b;

	return (x->snd > y->snd) - (x->snd < y->snd);
}

static uint8_t pat(int t, size_t i)
{
	return (uint8_t)(t * 37 + i * 11 + (i >> 8));
}

static double manager(const farm_cfg_t *c, int nworkers, long *bad_p,
		      farm_trace_t *tr)
{
	uint8_t *task[MAX_TYPES];
	MPI_Request ring[SEND_RING], rq[2];
	int nring = 0, sent = 0, results = 0, t, i, w, idx, req_buf, k;
	char res_buf[64];
	long bad = 0;
	double t0;
	MPI_Status st;

	for (t = 0; t < c->types; t++) {
		task[t] = malloc((size_t)c->size);
		for (i = 0; i < c->size; i++)
			task[t][i] = pat(t, (size_t)i);
		if (c->size >= 4)
			memcpy(task[t], &t, sizeof(t));
	}
	srand(c->seed);
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	MPI_Irecv(&req_buf, 1, MPI_INT, MPI_ANY_SOURCE, TAG_REQ,
		  MPI_COMM_WORLD, &rq[0]);
	MPI_Irecv(res_buf, sizeof(res_buf), MPI_BYTE, MPI_ANY_SOURCE,
		  TAG_RES, MPI_COMM_WORLD, &rq[1]);
	while (results < c->tasks) {
		MPI_Waitany(2, rq, &idx, &st);
		if (idx == 1) {
			int ok;

			memcpy(&ok, res_buf, sizeof(ok));
			bad += !ok;
			results++;
			MPI_Irecv(res_buf, sizeof(res_buf), MPI_BYTE,
				  MPI_ANY_SOURCE, TAG_RES, MPI_COMM_WORLD,
				  &rq[1]);
			continue;
		}
		w = st.MPI_SOURCE;
		t = rand() % c->types;
		for (k = 0; k < c->fanout && sent < c->tasks; k++, sent++) {
			if (nring == SEND_RING) {
				MPI_Waitall(nring, ring, MPI_STATUSES_IGNORE);
				nring = 0;
			}
			if (c->type_per_task && k > 0)
				t = rand() % c->types;
			int *ns = &tr->nsent[(w - 1) * c->types + t];

			tr->sent[((size_t)(w - 1) * c->types + t) * c->tasks +
				 *ns] = now_s();
			(*ns)++;
			MPI_Isend(task[t], c->size, MPI_BYTE, w, tag_of(c, t),
				  comm_of(c, t), &ring[nring++]);
		}
		MPI_Irecv(&req_buf, 1, MPI_INT, MPI_ANY_SOURCE, TAG_REQ,
			  MPI_COMM_WORLD, &rq[0]);
	}
	MPI_Waitall(nring, ring, MPI_STATUSES_IGNORE);
	t0 = MPI_Wtime() - t0;
	for (w = 1; w <= nworkers; w++)
		MPI_Send(NULL, 0, MPI_BYTE, w, TAG_DONE, MPI_COMM_WORLD);
	MPI_Cancel(&rq[0]);
	MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
	MPI_Cancel(&rq[1]);
	MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
	for (t = 0; t < c->types; t++)
		free(task[t]);
	*bad_p = bad;
	return t0;
}

/* After the run: each worker's receive times and idle time, matched with
 * the send times into latency percentiles. */
static void manager_trace(const farm_cfg_t *c, int nworkers, double secs,
			  farm_trace_t *tr)
{
	double *lat = malloc(sizeof(double) * (size_t)c->tasks);
	double *rcv = malloc(sizeof(double) * (size_t)c->tasks);
	double *hol = malloc(sizeof(double) * (size_t)c->tasks);
	farm_pair_t *pr = malloc(sizeof(farm_pair_t) * (size_t)c->tasks);
	double idle, sum = 0, idle_sum = 0, hol_sum = 0, runmax, wall_sum = 0;
	int n = 0, w, t, k, cnt, busy = 0, n0, j;
	MPI_Status st;

	tr->overtakes = 0;

	for (w = 1; w <= nworkers; w++) {
		MPI_Recv(&idle, 1, MPI_DOUBLE, w, TAG_TRACE, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		n0 = n;
		for (t = 0; t < c->types; t++) {
			const double *snd = &tr->sent[((size_t)(w - 1) *
						       c->types + t) * c->tasks];

			MPI_Recv(rcv, c->tasks, MPI_DOUBLE, w, TAG_TRACE,
				 MPI_COMM_WORLD, &st);
			MPI_Get_count(&st, MPI_DOUBLE, &cnt);
			for (k = 0; k < cnt &&
			     k < tr->nsent[(w - 1) * c->types + t]; k++) {
				pr[n].snd = snd[k];
				pr[n].rcv = rcv[k];
				lat[n] = (rcv[k] - snd[k]) * 1e3;
				sum += lat[n++];
			}
		}
		/* this worker's tasks in send order: the wait in-order
		 * delivery would add to each */
		qsort(&pr[n0], (size_t)(n - n0), sizeof(*pr), cmp_pair);
		runmax = 0;
		for (j = n0; j < n; j++) {
			hol[j] = runmax > pr[j].rcv ?
					 (runmax - pr[j].rcv) * 1e3 : 0;
			tr->overtakes += hol[j] > 0;
			hol_sum += hol[j];
			/* a task withheld until runmax: the worker would
			 * have had it no earlier than that */
			if (hol[j] > 0) {
				pr[j].snd = pr[j].rcv;
				pr[j].rcv = runmax;
			} else {
				pr[j].snd = pr[j].rcv; /* empty interval */
			}
			if (runmax < pr[j].snd)
				runmax = pr[j].snd;
		}
		/* union of the withheld intervals [snd, rcv) */
		qsort(&pr[n0], (size_t)(n - n0), sizeof(*pr), cmp_pair);
		{
			double end = 0, wall = 0;

			for (j = n0; j < n; j++) {
				if (pr[j].rcv <= pr[j].snd)
					continue;
				if (pr[j].snd >= end) {
					wall += pr[j].rcv - pr[j].snd;
					end = pr[j].rcv;
				} else if (pr[j].rcv > end) {
					wall += pr[j].rcv - end;
					end = pr[j].rcv;
				}
			}
			wall_sum += wall;
		}
		if (n > n0) { /* a worker that got no task was never idle */
			idle_sum += idle;
			busy++;
		}
	}
	memset(tr->lat_ms, 0, sizeof(tr->lat_ms));
	memset(tr->hol_ms, 0, sizeof(tr->hol_ms));
	tr->hol_frac = 0;
	tr->hol_wall_s = 0;
	if (n > 0) {
		qsort(lat, (size_t)n, sizeof(double), cmp_double);
		tr->lat_ms[0] = lat[n / 2];
		tr->lat_ms[1] = lat[(size_t)n * 9 / 10];
		tr->lat_ms[2] = lat[(size_t)n * 99 / 100];
		tr->lat_ms[3] = lat[n - 1];
		tr->lat_ms[4] = sum / n;
		tr->hol_ms[0] = hol_sum / n;
		tr->hol_frac = sum > 0 ? hol_sum / sum : 0;
		qsort(hol, (size_t)n, sizeof(double), cmp_double);
		tr->hol_ms[1] = hol[(size_t)n * 99 / 100];
		tr->hol_ms[2] = hol[n - 1];
	}
	tr->hol_wall_s = busy > 0 ? wall_sum / busy : 0;
	tr->idle_frac = secs > 0 && busy > 0 ? idle_sum / busy / secs : 0;
	free(lat);
	free(rcv);
	free(hol);
	free(pr);
}

static void worker(const farm_cfg_t *c)
{
	MPI_Request rq[MAX_TYPES + 1];
	uint8_t *buf[MAX_TYPES];
	int t, i, idx, done_count = 0, req = 0, n, nrcv[MAX_TYPES] = {0};
	double *rcv = malloc(sizeof(double) * (size_t)c->types * c->tasks);
	double idle = 0, w0;
	char res[64];
	MPI_Status st;

	for (t = 0; t < c->types; t++) {
		buf[t] = malloc((size_t)c->size);
		MPI_Irecv(buf[t], c->size, MPI_BYTE, 0,
			  c->comm_mode ? MPI_ANY_TAG : tag_of(c, t),
			  comm_of(c, t), &rq[t]);
	}
	MPI_Irecv(NULL, 0, MPI_BYTE, 0, TAG_DONE, MPI_COMM_WORLD,
		  &rq[c->types]);
	MPI_Barrier(MPI_COMM_WORLD);
	for (i = 0; i < c->outstanding; i++)
		MPI_Send(&req, 1, MPI_INT, 0, TAG_REQ, MPI_COMM_WORLD);
	for (;;) {
		int ok = 1, v = 0;

		w0 = now_s();
		MPI_Waitany(c->types + 1, rq, &idx, &st);
		if (idx == c->types)
			break; /* DONE */
		rcv[(size_t)idx * c->tasks + nrcv[idx]] = now_s();
		idle += rcv[(size_t)idx * c->tasks + nrcv[idx]++] - w0;
		MPI_Get_count(&st, MPI_BYTE, &n);
		/* check the task: its type, and a sample of its bytes */
		if (n != c->size)
			ok = 0;
		if (c->size >= 4) {
			memcpy(&v, buf[idx], sizeof(v));
			if (v != idx)
				ok = 0;
		}
		for (i = 4; i < n; i += 997)
			if (buf[idx][i] != pat(idx, (size_t)i))
				ok = 0;
		if (c->work_us > 0) {
			/* compute, driving MPI's progress meanwhile as a
			 * kernel stack would (acks, the next tasks) */
			double until = now_s() + c->work_us * 1e-6;
			int flag;

			while (now_s() < until)
				MPI_Iprobe(0, TAG_DONE, MPI_COMM_WORLD, &flag,
					   MPI_STATUS_IGNORE);
		}
		memset(res, 0, sizeof(res));
		memcpy(res, &ok, sizeof(ok));
		MPI_Send(res, sizeof(res), MPI_BYTE, 0, TAG_RES,
			 MPI_COMM_WORLD);
		MPI_Irecv(buf[idx], c->size, MPI_BYTE, 0,
			  c->comm_mode ? MPI_ANY_TAG : tag_of(c, idx),
			  comm_of(c, idx), &rq[idx]);
		if (++done_count % c->fanout == 0)
			MPI_Send(&req, 1, MPI_INT, 0, TAG_REQ, MPI_COMM_WORLD);
	}
	for (t = 0; t < c->types; t++) {
		MPI_Cancel(&rq[t]);
		MPI_Wait(&rq[t], MPI_STATUS_IGNORE);
		free(buf[t]);
	}
	MPI_Send(&idle, 1, MPI_DOUBLE, 0, TAG_TRACE, MPI_COMM_WORLD);
	for (t = 0; t < c->types; t++)
		MPI_Send(&rcv[(size_t)t * c->tasks], nrcv[t], MPI_DOUBLE, 0,
			 TAG_TRACE, MPI_COMM_WORLD);
	free(rcv);
}

int main(int argc, char **argv)
{
	farm_cfg_t c = {1, 2000, 30000, 1, 10, 10, 1, 0, 0};
	int rank, nprocs, i, t;
	long bad = 0;
	double s;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	for (i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--mode") == 0)
			c.comm_mode = strcmp(argv[i + 1], "tag") != 0;
		else if (strcmp(argv[i], "--tasks") == 0)
			c.tasks = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--size") == 0)
			c.size = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--fanout") == 0)
			c.fanout = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--outstanding") == 0)
			c.outstanding = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--types") == 0)
			c.types = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--seed") == 0)
			c.seed = (unsigned)atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--type-per") == 0)
			c.type_per_task = strcmp(argv[i + 1], "task") == 0;
		else if (strcmp(argv[i], "--work-us") == 0)
			c.work_us = atoi(argv[i + 1]);
	}
	if (nprocs < 2 || c.types < 1 || c.types > MAX_TYPES ||
	    c.fanout < 1 || c.outstanding < 1 || c.tasks < 1 || c.size < 0 ||
	    c.work_us < 0) {
		if (rank == 0)
			fprintf(stderr, "farm: needs >= 2 ranks, --types "
				"1..%d, --fanout/--outstanding/--tasks >= 1, --work-us "
				">= 0\n",
				MAX_TYPES);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	for (t = 0; c.comm_mode && t < c.types; t++)
		MPI_Comm_dup(MPI_COMM_WORLD, &type_comm[t]);
	if (rank == 0) {
		farm_trace_t tr;

		tr.sent = malloc(sizeof(double) * (size_t)(nprocs - 1) *
				 c.types * c.tasks);
		tr.nsent = calloc((size_t)(nprocs - 1) * c.types, sizeof(int));
		s = manager(&c, nprocs - 1, &bad, &tr);
		manager_trace(&c, nprocs - 1, s, &tr);
		printf("{\"mode\": \"%s\", \"tasks\": %d, \"size\": %d, "
		       "\"fanout\": %d, \"workers\": %d, \"outstanding\": %d, "
		       "\"types\": %d, \"type_per\": \"%s\", \"work_us\": %d, "
		       "\"seconds\": %.4f, \"tasks_per_s\": "
		       "%.1f, \"bad\": %ld, \"lat_ms\": {\"p50\": %.2f, "
		       "\"p90\": %.2f, \"p99\": %.2f, \"max\": %.2f, "
		       "\"mean\": %.2f}, \"worker_idle_frac\": %.3f, "
		       "\"inorder_ms\": {\"mean\": %.2f, \"p99\": %.2f, "
		       "\"max\": %.2f}, \"inorder_frac\": %.4f, "
		       "\"overtakes\": %ld, \"inorder_wall_s\": %.4f}\n",
		       c.comm_mode ? "comm" : "tag", c.tasks, c.size, c.fanout,
		       nprocs - 1, c.outstanding, c.types,
		       c.type_per_task ? "task" : "request", c.work_us, s,
		       c.tasks / s,
		       bad, tr.lat_ms[0], tr.lat_ms[1], tr.lat_ms[2],
		       tr.lat_ms[3], tr.lat_ms[4], tr.idle_frac, tr.hol_ms[0],
		       tr.hol_ms[1], tr.hol_ms[2], tr.hol_frac, tr.overtakes,
		       tr.hol_wall_s);
		free(tr.sent);
		free(tr.nsent);
		fflush(stdout);
	} else {
		worker(&c);
	}
	for (t = 0; c.comm_mode && t < c.types; t++)
		MPI_Comm_free(&type_comm[t]);
	MPI_Finalize();
	return bad != 0;
}
