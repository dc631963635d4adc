! fortran_mod_exchange.f90 -- the Fortran module (use waitio, no include, built without
! -fallow-argument-mismatch): buffers of several types and ranks (a REAL*8 scalar, a 2-D
! INTEGER array, COMPLEX*16, REAL*4, CHARACTER) through point-to-point and every collective,
! each value checked; a strided array section and a count beyond the buffer are refused with
! WAITIO_ERR_ARG (1) before anything is sent.
program fortran_mod_exchange
  use waitio
  implicit none
  integer, parameter :: nf = 1000
  integer :: ierr, univ, pbg, me, n, pb, npb, prank, psize, next, prev, i, j, errs, k
  integer :: req(WAITIO_REQUEST_SIZE, 6), sta(WAITIO_STATUS_SIZE, 6), st(WAITIO_STATUS_SIZE)
  real(kind=8) :: x, y
  integer :: grid(50, 40), got(50, 40), sums(50, 40)
  complex(kind=8) :: z(7), zin(7)
  real(kind=4), allocatable :: f(:)
  character(len=16) :: word, wordin
  integer, allocatable :: all(:), counts(:), displs(:), tosend(:), back(:)
  integer :: one, piece

  errs = 0
  call WAITIO_INIT(60, ierr)
  call WAITIO_CREATE_UNIVERSE(univ, ierr)
  if (ierr /= 0) stop 'WAITIO_CREATE_UNIVERSE failed'
  call WAITIO_MPI_Comm_rank(univ, me, ierr)
  call WAITIO_MPI_Comm_size(univ, n, ierr)
  call WAITIO_PB_RANK(pb, ierr)
  call WAITIO_PB_SIZE(npb, ierr)
  call WAITIO_CREATE_PBGROUP(pbg, pb, ierr)
  call WAITIO_GROUP_RANK(pbg, prank, ierr)
  call WAITIO_GROUP_SIZE(pbg, psize, ierr)
  next = mod(me + 1, n)
  prev = mod(me + n - 1, n)

  ! point to point around the ring: a scalar, a 2-D array, a complex array
  x = 1000.0d0 * me + 0.5d0
  do j = 1, 40
    do i = 1, 50
      grid(i, j) = me * 100000 + j * 100 + i
    end do
  end do
  do i = 1, 7
    z(i) = cmplx(me, -i, kind=8)
  end do
  call WAITIO_MPI_Irecv(y, 1, WAITIO_MPI_DOUBLE_PRECISION, prev, 1, univ, req(1,1), ierr)
  call WAITIO_MPI_Irecv(got, 2000, WAITIO_MPI_INTEGER, prev, 2, univ, req(1,2), ierr)
  call WAITIO_MPI_Irecv(zin, 7, WAITIO_MPI_DOUBLE_COMPLEX, prev, 3, univ, req(1,3), ierr)
  call WAITIO_MPI_Isend(x, 1, WAITIO_MPI_DOUBLE_PRECISION, next, 1, univ, req(1,4), ierr)
  call WAITIO_MPI_Isend(grid, 2000, WAITIO_MPI_INTEGER, next, 2, univ, req(1,5), ierr)
  call WAITIO_MPI_Isend(z, 7, WAITIO_MPI_DOUBLE_COMPLEX, next, 3, univ, req(1,6), ierr)
  call WAITIO_MPI_Waitall(6, req, sta, ierr)
  if (ierr /= 0) stop 'WAITIO_MPI_Waitall failed'
  if (y /= 1000.0d0 * prev + 0.5d0) errs = errs + 1
  do j = 1, 40
    do i = 1, 50
      if (got(i, j) /= prev * 100000 + j * 100 + i) errs = errs + 1
    end do
  end do
  do i = 1, 7
    if (zin(i) /= cmplx(prev, -i, kind=8)) errs = errs + 1
  end do
  if (sta(WAITIO_MPI_SOURCE, 2) /= prev .or. sta(WAITIO_MPI_COUNT, 2) /= 8000) errs = errs + 1

  ! blocking, a CHARACTER buffer, status and WAITIO_MPI_Wait / WAITIO_WAIT
  write (word, '(a,i0)') 'from ', me
  call WAITIO_MPI_Isend(word, 16, WAITIO_MPI_CHARACTER, next, 4, univ, req(1,1), ierr)
  call WAITIO_MPI_Recv(wordin, 16, WAITIO_MPI_CHARACTER, prev, 4, univ, st, ierr)
  call WAITIO_MPI_Wait(req(1,1), sta(1,1), ierr)
  write (word, '(a,i0)') 'from ', prev
  if (wordin /= word .or. st(WAITIO_MPI_COUNT) /= 16) errs = errs + 1
  call WAITIO_MPI_Irecv(one, 1, WAITIO_MPI_INTEGER, next, 5, univ, req(1,2), ierr)
  call WAITIO_MPI_Send(me, 1, WAITIO_MPI_INTEGER, prev, 5, univ, ierr)
  call WAITIO_WAIT(req(1,2), ierr)
  if (ierr /= 0 .or. one /= next) errs = errs + 1

  ! collectives
  allocate (f(nf))
  f = -1.0
  if (me == n - 1) f = [(real(i, 4) / 4.0, i = 1, nf)]
  call WAITIO_MPI_Bcast(f, nf, WAITIO_MPI_REAL, n - 1, univ, ierr)
  if (any(f /= [(real(i, 4) / 4.0, i = 1, nf)])) errs = errs + 1
  grid = me
  call WAITIO_MPI_Allreduce(grid, sums, 2000, WAITIO_MPI_INTEGER, WAITIO_MPI_SUM, univ, ierr)
  if (any(sums /= n * (n - 1) / 2)) errs = errs + 1
  sums = -1
  call WAITIO_MPI_Reduce(grid, sums, 2000, WAITIO_MPI_INTEGER, WAITIO_MPI_MAX, 0, univ, ierr)
  if (me == 0 .and. any(sums /= n - 1)) errs = errs + 1
  allocate (all(n), counts(n), displs(n), tosend(n), back(n))
  call WAITIO_MPI_Allgather(me, 1, WAITIO_MPI_INTEGER, all, 1, WAITIO_MPI_INTEGER, univ, ierr)
  if (any(all /= [(k, k = 0, n - 1)])) errs = errs + 1
  all = -1
  call WAITIO_MPI_Gather(me * 3, 1, WAITIO_MPI_INTEGER, all, 1, WAITIO_MPI_INTEGER, 0, univ, ierr)
  if (me == 0 .and. any(all /= [(3 * k, k = 0, n - 1)])) errs = errs + 1
  counts = 1
  displs = [(n - 1 - k, k = 0, n - 1)]
  call WAITIO_MPI_Gatherv(me, 1, WAITIO_MPI_INTEGER, all, counts, displs, WAITIO_MPI_INTEGER, 0, &
       univ, ierr)
  if (me == 0 .and. any(all /= [(n - 1 - k, k = 0, n - 1)])) errs = errs + 1
  tosend = [(50 + k, k = 0, n - 1)]
  call WAITIO_MPI_Scatter(tosend, 1, WAITIO_MPI_INTEGER, piece, 1, WAITIO_MPI_INTEGER, 0, univ, ierr)
  if (piece /= 50 + me) errs = errs + 1
  call WAITIO_MPI_Scatterv(tosend, counts, displs, WAITIO_MPI_INTEGER, piece, 1, &
       WAITIO_MPI_INTEGER, 0, univ, ierr)
  if (piece /= 50 + n - 1 - me) errs = errs + 1
  tosend = [(me * 10 + k, k = 0, n - 1)]
  call WAITIO_MPI_Alltoall(tosend, 1, WAITIO_MPI_INTEGER, back, 1, WAITIO_MPI_INTEGER, univ, ierr)
  if (any(back /= [(k * 10 + me, k = 0, n - 1)])) errs = errs + 1
  one = -1
  if (prank == 0) one = 700 + pb
  call WAITIO_MPI_Bcast(one, 1, WAITIO_MPI_INTEGER, 0, pbg, ierr)
  if (one /= 700 + pb) errs = errs + 1
  call WAITIO_MPI_Barrier(univ, ierr)
  call WAITIO_BARRIER(pbg, ierr)

  ! refused before anything is sent: a strided section, a count beyond the buffer
  call WAITIO_MPI_Isend(grid(1:50:2, 1), 25, WAITIO_MPI_INTEGER, next, 9, univ, req(1,1), ierr)
  if (ierr /= 1) errs = errs + 1
  call WAITIO_MPI_Send(x, 2, WAITIO_MPI_DOUBLE_PRECISION, next, 9, univ, ierr)
  if (ierr /= 1) errs = errs + 1

  write (*, '(a,i0,a,i0,a,i0,a,i0,a)') 'fortran_mod_exchange PB ', pb, ' rank ', prank, ': errors ', &
       errs, ' (', n, ' processes)'
  call WAITIO_FINALIZE(ierr)
  if (errs /= 0) stop 1
end program fortran_mod_exchange
