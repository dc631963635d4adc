! fortran_code1_receiver.f90 -- receiver side for the Code-1 listing test (free form, in a
! module-using style): the PB head receives NSTEPS (time, source) pairs from Code-1 over the
! PB-heads communicator, checks source = Val*sin(time*pi/180) and increasing times, then
! finalizes, which makes Code-1 leave its loop through its "goto 100" path.
module coupling
  implicit none
  include 'waitio_mpif.h'
  integer :: WAITIO_SOLVER_COMM
end module coupling

program receiver
  use coupling
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, hrank, step, nsteps
  integer(kind=4) :: sta(WAITIO_STATUS_SIZE), req(WAITIO_REQUEST_SIZE, 2)
  real(kind=8) :: ttt, src, last, expect
  real(kind=8), parameter :: val = 100.d0
  character(len=16) :: arg

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  nsteps = 5
  if (command_argument_count() > 0) then
    call get_command_argument(1, arg)
    read (arg, *) nsteps
  end if
  call WAITIO_CREATE_UNIVERSE_PBHEAD(WAITIO_SOLVER_COMM, ierr)
  if (ierr /= 0) stop 1
  call WAITIO_GROUP_RANK(WAITIO_SOLVER_COMM, hrank, ierr)
  if (rank == 0) then
    last = -1.d0
    do step = 1, nsteps
      call WAITIO_MPI_Irecv(ttt, 1, WAITIO_MPI_DOUBLE_PRECISION, 0, 0, WAITIO_SOLVER_COMM, req(1,1), ierr)
      if (ierr /= 0) stop 2
      call WAITIO_MPI_Wait(req(1,1), sta, ierr)
      if (ierr /= 0) stop 3
      call WAITIO_MPI_Recv(src, 1, WAITIO_MPI_DOUBLE_PRECISION, 0, 0, WAITIO_SOLVER_COMM, sta, ierr)
      if (ierr /= 0) stop 4
      expect = val * sin(ttt * 4.d0 * atan(1.d0) / 180.d0)
      if (abs(src - expect) > 1.d-9 * max(1.d0, abs(expect)) .or. ttt <= last) then
        print *, 'receiver: wrong pair', ttt, src, expect
        stop 5
      end if
      if (sta(WAITIO_MPI_SOURCE) /= 0 .or. sta(WAITIO_MPI_COUNT) /= 8) then
        print *, 'receiver: wrong status', sta
        stop 6
      end if
      last = ttt
    end do
    print '(a,i0,a,i0,a)', 'receiver (PB head ', hrank, '): ', nsteps, ' pairs from Code-1 checked'
  end if
  call WAITIO_FINALIZE(ierr)
  call MPI_Finalize(ierr)
end program receiver
