! SPDX-License-Identifier: BSD-3-Clause
!
! test_mpi_pace_f.f90 - the Fortran entry points of libsdp_pace_mpi, from
! gfortran with mpif.h, run by test_mpi_pace.sh with the fake transport and
! the coll lib preloaded, SDP_PACE_MAXRATE=10G and
! SDP_FAKE_TRANSPORT_TRACE=1.  Ends with one MPI_ALLTOALL so the script can
! see in the trace whether the Fortran binding reaches the C wrapper.
program test_mpi_pace_f
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, nranks, i, failures, total
  integer(kind=8) :: rate
  integer, allocatable :: sendbuf(:), recvbuf(:)

  failures = 0
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nranks, ierr)

  call sdp_pace_set_limit(MPI_COMM_WORLD, 32, ierr)
  call check(ierr == MPI_SUCCESS, 'set_limit')
  call sdp_pace_get_matb(MPI_COMM_WORLD, rate, ierr)
  call check(ierr == MPI_SUCCESS .and. rate == 312500000_8, 'get_matb B/32')
  call sdp_pace_get_maxrate(rate, ierr)
  call check(ierr == MPI_SUCCESS .and. rate == 10000000000_8, 'maxrate')
  call sdp_pace_matb_bps(1, 32, rate, ierr)
  call check(ierr == MPI_SUCCESS .and. rate == 625000000_8, 'B/(N/2)')
  call sdp_pace_set_matb(MPI_COMM_WORLD, -1_8, ierr)
  call check(ierr == MPI_ERR_ARG, 'negative rate')
  call sdp_pace_set_limit(MPI_COMM_WORLD, 0, ierr)
  call check(ierr == MPI_ERR_ARG, 'nsenders 0')
  call sdp_pace_set_matb(MPI_COMM_WORLD, 1000000000_8, ierr)
  call check(ierr == MPI_SUCCESS, 'set_matb 1G')
  call sdp_pace_get_matb(MPI_COMM_WORLD, rate, ierr)
  call check(ierr == MPI_SUCCESS .and. rate == 1000000000_8, 'get_matb 1G')

  allocate(sendbuf(nranks), recvbuf(nranks))
  do i = 1, nranks
    sendbuf(i) = rank * 100 + (i - 1)
  end do
  call MPI_ALLTOALL(sendbuf, 1, MPI_INTEGER, recvbuf, 1, MPI_INTEGER, &
                    MPI_COMM_WORLD, ierr)
  call check(ierr == MPI_SUCCESS, 'alltoall')
  do i = 1, nranks
    call check(recvbuf(i) == (i - 1) * 100 + rank, 'alltoall data')
  end do

  call MPI_ALLREDUCE(failures, total, 1, MPI_INTEGER, MPI_SUM, &
                     MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (total == 0) then
      print '(a)', 'fortran: ok'
    else
      print '(a,i0,a)', 'fortran: FAILED (', total, ' failed checks)'
    end if
  end if
  call MPI_FINALIZE(ierr)
  if (total /= 0) stop 1

contains

  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    if (.not. cond) then
      failures = failures + 1
      print '(a,i0,2a)', 'rank ', rank, ': FAIL ', what
    end if
  end subroutine check

end program test_mpi_pace_f
