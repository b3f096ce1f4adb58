/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_report.h - the verdicts of the MPI check programs (mpi_check.c,
 * mpi_rma.c): a check passes when it passed on every rank; rank 0 prints
 * "ok   NAME" or "FAIL NAME" at once and, before MPI_Finalize, "N passed,
 * M failed" (what tests/integration/test_mpi.py reads).  Header-only:
 * each program is one file.
 */
#ifndef SDP_TESTS_MPI_REPORT_H
#define SDP_TESTS_MPI_REPORT_H

#include <mpi.h>
#include <stdio.h>

static int report_passed, report_failed;

/* Collective over MPI_COMM_WORLD: every rank gives its own result. */
static void report(const char *name, int ok_local)
{
	int ok = 0, me = 0;

	MPI_Allreduce(&ok_local, &ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	if (me == 0) {
		printf("%s %s\n", ok ? "ok  " : "FAIL", name);
		fflush(stdout);
	}
	if (ok)
		report_passed++;
	else
		report_failed++;
}

/* Rank 0 prints the totals.  @return the exit status: 0 all passed. */
static int report_totals(void)
{
	int me = 0;

	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	if (me == 0)
		printf("%d passed, %d failed\n", report_passed, report_failed);
	return report_failed != 0;
}

#endif /* SDP_TESTS_MPI_REPORT_H */
