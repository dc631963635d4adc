! fortran_f_entry.f90 -- the original's Fortran-callable C entry points called from Fortran as
! its own modules call them (implicit interfaces: CALL waitio_mpi_isend_f(...)), beside the
! upper-case WAITIO_CREATE_PBGROUP, WAITIO_WAIT and WAITIO_BARRIER: a ring over the universe
! checked value by value, a send/recv pair, allreduce, and a bcast inside each PB's group.
program fortran_f_entry
  implicit none
  include 'waitio_mpif.h'
  integer, parameter :: cnt = 20000
  integer :: ierr, univ, pbg, me, n, pb, npb, prank, psize, next, prev, i, bad, errs
  integer :: word, total, got
  integer(kind=4) :: req(WAITIO_REQUEST_SIZE, 2), sta(WAITIO_STATUS_SIZE, 2)
  real(kind=8), allocatable :: out(:), in(:)

  errs = 0
  call waitio_init_f(60, ierr)
  if (ierr /= 0) stop 'waitio_init_f failed'
  call waitio_create_universe_f(univ, ierr)
  call waitio_group_rank_f(univ, me, ierr)
  call waitio_group_size_f(univ, n, ierr)
  call waitio_pb_rank_f(pb, ierr)
  call waitio_pb_size_f(npb, ierr)
  call WAITIO_CREATE_PBGROUP(pbg, pb, ierr)
  if (ierr /= 0) stop 'WAITIO_CREATE_PBGROUP failed'
  call waitio_group_rank_f(pbg, prank, ierr)
  call waitio_group_size_f(pbg, psize, ierr)

  allocate(out(cnt), in(cnt))
  do i = 1, cnt
    out(i) = me * 100000.0d0 + i
  end do
  next = mod(me + 1, n)
  prev = mod(me + n - 1, n)
  call waitio_mpi_irecv_f(in, cnt, WAITIO_MPI_DOUBLE_PRECISION, prev, 3, univ, req(1,1), ierr)
  call waitio_mpi_isend_f(out, cnt, WAITIO_MPI_DOUBLE_PRECISION, next, 3, univ, req(1,2), ierr)
  call waitio_mpi_waitall_f(2, req, sta, ierr)
  if (ierr /= 0) stop 'waitio_mpi_waitall_f failed'
  bad = 0
  do i = 1, cnt
    if (in(i) /= prev * 100000.0d0 + i) bad = bad + 1
  end do
  if (bad /= 0 .or. sta(WAITIO_MPI_SOURCE, 1) /= prev .or. sta(WAITIO_MPI_COUNT, 1) /= 8 * cnt) then
    print *, 'ring: bad values', bad, ' status', sta(:, 1)
    errs = errs + 1
  end if

  ! WAITIO_WAIT (no status) on a receive, a blocking send and receive
  call waitio_mpi_irecv_f(got, 1, WAITIO_MPI_INTEGER, prev, 4, univ, req(1,1), ierr)
  call waitio_mpi_send_f(me, 1, WAITIO_MPI_INTEGER, next, 4, univ, ierr)
  call WAITIO_WAIT(req(1,1), ierr)
  if (ierr /= 0 .or. got /= prev) errs = errs + 1
  call waitio_mpi_isend_f(me, 1, WAITIO_MPI_INTEGER, prev, 5, univ, req(1,2), ierr)
  call waitio_mpi_recv_f(got, 1, WAITIO_MPI_INTEGER, next, 5, univ, sta(1,1), ierr)
  call waitio_wait_f(req(1,2), ierr)
  if (ierr /= 0 .or. got /= next) errs = errs + 1

  call waitio_mpi_allreduce_f(me, total, 1, WAITIO_MPI_INTEGER, WAITIO_MPI_SUM, univ, ierr)
  if (ierr /= 0 .or. total /= n * (n - 1) / 2) errs = errs + 1
  word = -1
  if (prank == 0) word = 1000 + pb
  call waitio_mpi_bcast_f(word, 1, WAITIO_MPI_INTEGER, 0, pbg, ierr)
  if (ierr /= 0 .or. word /= 1000 + pb) errs = errs + 1
  call waitio_mpi_barrier_f(pbg, ierr)
  call WAITIO_BARRIER(univ, ierr)
  call waitio_barrier_f(univ, ierr)
  if (ierr /= 0) errs = errs + 1

  write (*, '(a,i0,a,i0,a,i0,a,i0,a,i0)') 'fortran_f_entry PB ', pb, ' rank ', prank, &
       ': errors ', errs, ', PB size ', psize, ', universe ', n
  call waitio_finalize_f(1000)  ! the original's call: a literal, never written
  if (errs /= 0) stop 1
end program fortran_f_entry
