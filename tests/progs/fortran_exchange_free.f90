! fortran_exchange_free.f90 -- free-form Fortran test: the communicator lives in a module as a
! default INTEGER; exchanges and reductions across PBs; gatherv/scatter through the layer.
module solver_comm
  implicit none
  include 'waitio_mpif.h'
  integer :: WAITIO_SOLVER_COMM
end module solver_comm

program exchange_free
  use solver_comm
  implicit none
  include 'mpif.h'
  integer :: ierr, me, n, i, bad, right, left
  integer(kind=4) :: req(WAITIO_REQUEST_SIZE, 2), sta(WAITIO_STATUS_SIZE, 2)
  integer :: sendv(4), recvv(4), counts(64), displs(64), gathered(256), piece(3)
  real :: rsum, rin
  logical :: lin, lout

  call MPI_Init(ierr)
  call WAITIO_CREATE_UNIVERSE(WAITIO_SOLVER_COMM, ierr)
  if (ierr /= 0) stop 1
  call WAITIO_GROUP_RANK(WAITIO_SOLVER_COMM, me, ierr)
  call WAITIO_GROUP_SIZE(WAITIO_SOLVER_COMM, n, ierr)
  bad = 0
  right = mod(me + 1, n)
  left = mod(me + n - 1, n)
  sendv = (/ me, me * 2, me * 3, -me /)
  call WAITIO_MPI_Irecv(recvv, 4, WAITIO_MPI_INTEGER, WAITIO_MPI_ANY_SOURCE, 3, WAITIO_SOLVER_COMM, req(1,1), ierr)
  call WAITIO_MPI_Isend(sendv, 4, WAITIO_MPI_INTEGER, right, 3, WAITIO_SOLVER_COMM, req(1,2), ierr)
  call WAITIO_MPI_Waitall(2, req, sta, ierr)
  if (ierr /= 0) stop 2
  if (any(recvv /= (/ left, left * 2, left * 3, -left /))) bad = bad + 1
  if (sta(WAITIO_MPI_SOURCE, 1) /= left .or. sta(WAITIO_MPI_TAG, 1) /= 3) bad = bad + 1
  rin = real(me + 1)
  call WAITIO_MPI_Allreduce(rin, rsum, 1, WAITIO_MPI_REAL, WAITIO_MPI_MAX, WAITIO_SOLVER_COMM, ierr)
  if (rsum /= real(n)) bad = bad + 1
  lin = (me /= 1)
  call WAITIO_MPI_Allreduce(lin, lout, 1, WAITIO_MPI_LOGICAL, WAITIO_MPI_LAND, WAITIO_SOLVER_COMM, ierr)
  if (lout .neqv. (n < 2)) bad = bad + 1
  do i = 1, n
    counts(i) = mod(i - 1, 3) + 1
    displs(i) = 3 * (i - 1)
  end do
  piece = (/ 100 * me + 1, 100 * me + 2, 100 * me + 3 /)
  gathered = -1
  call WAITIO_MPI_Gatherv(piece, counts(me + 1), WAITIO_MPI_INTEGER, gathered, counts, displs, &
                          WAITIO_MPI_INTEGER, 0, WAITIO_SOLVER_COMM, ierr)
  if (me == 0) then
    do i = 1, n
      if (gathered(displs(i) + 1) /= 100 * (i - 1) + 1) bad = bad + 1
      if (counts(i) < 3 .and. gathered(displs(i) + 3) /= -1) bad = bad + 1
    end do
  end if
  call WAITIO_MPI_Scatter(gathered, 1, WAITIO_MPI_INTEGER, piece, 1, WAITIO_MPI_INTEGER, 0, &
                          WAITIO_SOLVER_COMM, ierr)
  ! rank me receives element me+1 of the gathered array: block me/3, offset mod(me,3)
  if (mod(me, 3) < counts(me / 3 + 1)) then
    if (piece(1) /= 100 * (me / 3) + mod(me, 3) + 1) bad = bad + 1
  else
    if (piece(1) /= -1) bad = bad + 1
  end if
  call WAITIO_MPI_Barrier(WAITIO_SOLVER_COMM, ierr)
  call WAITIO_FINALIZE(ierr)
  if (me == 0) print '(a,i0,a,i0)', 'fortran_exchange (free form): ', n, ' processes, errors ', bad
  call MPI_Finalize(ierr)
  if (bad /= 0) stop 7
end program exchange_free
