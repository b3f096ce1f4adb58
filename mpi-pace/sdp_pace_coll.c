/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdp_pace_coll.c - rate-managed MPI_Alltoall and MPI_Alltoallv without
 * code changes (seed 001: GridMPI's rate-managed collectives), as a PMPI
 * interposition library loaded with LD_PRELOAD.
 *
 * Each wrapped call brackets the real one:
 *
 *   prev = transport rate                  sdp_pace_get_matb()
 *   set B/N                                sdp_pace_set_matb()
 *   ret = PMPI_Alltoall[v](...)
 *   set prev                               always, even if ret failed
 *
 * N is the size of the communicator (its local group for an
 * intercommunicator), not the number of hosts the seed uses: here every
 * process has its own transport and pacer, so with all N processes
 * sending at B/N the aggregate stays at B however they are spread over
 * hosts.  SDP_PACE_COLL_NSENDERS overrides N (e.g. with the processes of
 * one cluster when only those share the bottleneck).  SDP_PACE_COLL=0
 * turns the wrappers into plain pass-throughs; SDP_PACE_MAXRATE (B) is
 * required otherwise.
 *
 * SDP_PACE_COLL_PER=dest paces each destination at B/N instead of the
 * process's total (sdp_pace_set_dest_matb; the total is left as it is):
 * for a topology where every receiver has its own bottleneck of B, each
 * of a receiver's N senders gets B/N of it, and a sender's destinations
 * do not share one B/N.  "process" (the default) is the seed's B/N total.
 *
 * A rate that cannot be applied (B unset, transport not loaded, rate
 * rejected) is a launch error: the collective is not run and the error
 * class goes through the communicator's error handler, as MPI errors do,
 * so the default MPI_ERRORS_ARE_FATAL stops the job instead of running it
 * unpaced.  The cause was logged once where detected.  The process has one
 * rate: concurrent collectives on several threads race for it.
 *
 * Fortran: MPICH's Fortran bindings call MPI_Alltoall, so its Fortran
 * codes are paced by the C wrappers.  Open MPI's call PMPI_Alltoall
 * directly, so its variant (SDP_PACE_COLL_FORTRAN) also wraps the mpif.h /
 * `use mpi` entry points mpi_alltoall_ and mpi_alltoallv_ (gfortran
 * mangling), passing through to pmpi_alltoall[v]_ found with RTLD_NEXT.
 * `use mpi_f08` calls are not wrapped.
 */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sdp.h"
#include "sdp_pace_mpi.h"

/* Environment of the wrappers, read once per process. */
static pthread_once_t coll_once = PTHREAD_ONCE_INIT;
static int coll_env_err;       /* MPI_SUCCESS or MPI_ERR_OTHER */
static int coll_enabled;       /* SDP_PACE_COLL is unset or 1 */
static int coll_nsenders;      /* SDP_PACE_COLL_NSENDERS; 0: comm size */
static int coll_per_dest;      /* SDP_PACE_COLL_PER=dest */

/* One wrapped call's saved rate. */
struct coll_pace {
	int active;	   /* B/N was applied; restore on exit */
	uint64_t prev_bps; /* rate before the call, bit/s */
};

static void coll_env_parse(void)
{
	const char *text = getenv(SDP_PACE_ENV_COLL);
	uint64_t n;

	coll_env_err = MPI_SUCCESS;
	coll_enabled = 1;
	if (text != NULL && strcmp(text, "0") == 0) {
		coll_enabled = 0;
	} else if (text != NULL && strcmp(text, "1") != 0) {
		SDP_LOG(ERR, PACE, "%s='%s' is invalid; set 1 to pace "
			"MPI_Alltoall/MPI_Alltoallv at B/N or 0 to disable",
			SDP_PACE_ENV_COLL, text);
		coll_env_err = MPI_ERR_OTHER;
		return;
	}
	text = getenv(SDP_PACE_ENV_COLL_PER);
	coll_per_dest = 0;
	if (text != NULL && strcmp(text, "dest") == 0) {
		coll_per_dest = 1;
	} else if (text != NULL && strcmp(text, "process") != 0) {
		SDP_LOG(ERR, PACE, "%s='%s' is invalid; set process to pace "
			"the process's total at B/N, or dest to pace each "
			"destination at B/N", SDP_PACE_ENV_COLL_PER, text);
		coll_env_err = MPI_ERR_OTHER;
		return;
	}
	text = getenv(SDP_PACE_ENV_COLL_NSENDERS);
	coll_nsenders = 0;
	if (text == NULL)
		return;
	if (sdp_parse_u64(text, 1, &n) != 0 || n < 1 || n > INT_MAX) {
		SDP_LOG(ERR, PACE, "%s='%s' is invalid; set the number of "
			"processes sharing the link (1..%d), or unset it to "
			"use the communicator size", SDP_PACE_ENV_COLL_NSENDERS,
			text, INT_MAX);
		coll_env_err = MPI_ERR_OTHER;
		return;
	}
	coll_nsenders = (int)n;
}

static int coll_raise(MPI_Comm comm, int err)
{
	PMPI_Comm_call_errhandler(comm, err);
	return err;
}

/*
 * Save the current rate and apply B/N.  MPI_SUCCESS with active 0 means
 * "run unpaced": disabled, or a comm the real call will reject itself.
 */
static int coll_enter(MPI_Comm comm, struct coll_pace *pace)
{
	uint64_t matb_bps;
	int nsenders, ret;

	pace->active = 0;
	if (comm == MPI_COMM_NULL)
		return MPI_SUCCESS;
	pthread_once(&coll_once, coll_env_parse);
	if (coll_env_err != MPI_SUCCESS)
		return coll_env_err;
	if (!coll_enabled)
		return MPI_SUCCESS;
	nsenders = coll_nsenders;
	if (nsenders == 0 && PMPI_Comm_size(comm, &nsenders) != MPI_SUCCESS)
		return MPI_SUCCESS;
	ret = sdp_pace_matb_bps(SDP_PACE_MATB_B_N, nsenders, &matb_bps);
	if (ret != MPI_SUCCESS)
		return ret;
	ret = coll_per_dest ? sdp_pace_get_dest_matb(comm, &pace->prev_bps)
			    : sdp_pace_get_matb(comm, &pace->prev_bps);
	if (ret != MPI_SUCCESS)
		return ret;
	ret = coll_per_dest ? sdp_pace_set_dest_matb(comm, matb_bps)
			    : sdp_pace_set_matb(comm, matb_bps);
	if (ret != MPI_SUCCESS)
		return ret;
	pace->active = 1;
	return MPI_SUCCESS;
}

/* Restore the saved rate; the real call's error wins over ours. */
static int coll_exit(MPI_Comm comm, const struct coll_pace *pace, int ret)
{
	int err;

	if (!pace->active)
		return ret;
	err = coll_per_dest ? sdp_pace_set_dest_matb(comm, pace->prev_bps)
			    : sdp_pace_set_matb(comm, pace->prev_bps);
	if (ret != MPI_SUCCESS || err == MPI_SUCCESS)
		return ret;
	return coll_raise(comm, err);
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
		 void *recvbuf, int recvcount, MPI_Datatype recvtype,
		 MPI_Comm comm)
{
	struct coll_pace pace;
	int ret = coll_enter(comm, &pace);

	if (ret != MPI_SUCCESS)
		return coll_raise(comm, ret);
	ret = PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
			    recvtype, comm);
	return coll_exit(comm, &pace, ret);
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[],
		  const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
		  const int recvcounts[], const int rdispls[],
		  MPI_Datatype recvtype, MPI_Comm comm)
{
	struct coll_pace pace;
	int ret = coll_enter(comm, &pace);

	if (ret != MPI_SUCCESS)
		return coll_raise(comm, ret);
	ret = PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
			     recvcounts, rdispls, recvtype, comm);
	return coll_exit(comm, &pace, ret);
}

#ifdef SDP_PACE_COLL_FORTRAN
typedef void (*fort_alltoall_fn)(char *sendbuf, MPI_Fint *sendcount,
				 MPI_Fint *sendtype, char *recvbuf,
				 MPI_Fint *recvcount, MPI_Fint *recvtype,
				 MPI_Fint *comm, MPI_Fint *ierr);
typedef void (*fort_alltoallv_fn)(char *sendbuf, MPI_Fint *sendcounts,
				  MPI_Fint *sdispls, MPI_Fint *sendtype,
				  char *recvbuf, MPI_Fint *recvcounts,
				  MPI_Fint *rdispls, MPI_Fint *recvtype,
				  MPI_Fint *comm, MPI_Fint *ierr);

void mpi_alltoall_(char *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype,
		   char *recvbuf, MPI_Fint *recvcount, MPI_Fint *recvtype,
		   MPI_Fint *comm, MPI_Fint *ierr);
void mpi_alltoallv_(char *sendbuf, MPI_Fint *sendcounts, MPI_Fint *sdispls,
		    MPI_Fint *sendtype, char *recvbuf, MPI_Fint *recvcounts,
		    MPI_Fint *rdispls, MPI_Fint *recvtype, MPI_Fint *comm,
		    MPI_Fint *ierr);

/* The next definition of a Fortran profiling entry (libmpi_mpifh). */
static void *fort_next(void **cache, const char *name)
{
	void *fn = __atomic_load_n(cache, __ATOMIC_RELAXED);

	if (fn != NULL)
		return fn;
	fn = dlsym(RTLD_NEXT, name);
	__atomic_store_n(cache, fn, __ATOMIC_RELAXED);
	if (fn == NULL)
		SDP_LOG(ERR, PACE, "%s not found after libsdp_pace_coll: link "
			"the Fortran program with Open MPI's mpif90", name);
	return fn;
}

void mpi_alltoall_(char *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype,
		   char *recvbuf, MPI_Fint *recvcount, MPI_Fint *recvtype,
		   MPI_Fint *comm, MPI_Fint *ierr)
{
	static void *next_cache; /* pmpi_alltoall_ */
	fort_alltoall_fn next_fn;
	MPI_Comm c_comm = PMPI_Comm_f2c(*comm);
	struct coll_pace pace;
	int ret;

	*(void **)&next_fn = fort_next(&next_cache, "pmpi_alltoall_");
	if (next_fn == NULL) {
		*ierr = coll_raise(c_comm, MPI_ERR_OTHER);
		return;
	}
	ret = coll_enter(c_comm, &pace);
	if (ret != MPI_SUCCESS) {
		*ierr = coll_raise(c_comm, ret);
		return;
	}
	next_fn(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
		comm, ierr);
	*ierr = coll_exit(c_comm, &pace, *ierr);
}

void mpi_alltoallv_(char *sendbuf, MPI_Fint *sendcounts, MPI_Fint *sdispls,
		    MPI_Fint *sendtype, char *recvbuf, MPI_Fint *recvcounts,
		    MPI_Fint *rdispls, MPI_Fint *recvtype, MPI_Fint *comm,
		    MPI_Fint *ierr)
{
	static void *next_cache; /* pmpi_alltoallv_ */
	fort_alltoallv_fn next_fn;
	MPI_Comm c_comm = PMPI_Comm_f2c(*comm);
	struct coll_pace pace;
	int ret;

	*(void **)&next_fn = fort_next(&next_cache, "pmpi_alltoallv_");
	if (next_fn == NULL) {
		*ierr = coll_raise(c_comm, MPI_ERR_OTHER);
		return;
	}
	ret = coll_enter(c_comm, &pace);
	if (ret != MPI_SUCCESS) {
		*ierr = coll_raise(c_comm, ret);
		return;
	}
	next_fn(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
		rdispls, recvtype, comm, ierr);
	*ierr = coll_exit(c_comm, &pace, *ierr);
}
#endif /* SDP_PACE_COLL_FORTRAN */
