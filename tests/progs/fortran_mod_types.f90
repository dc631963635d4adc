! fortran_mod_types.f90 -- derived datatypes, a user operation and the collectives beyond the
! basics through the Fortran module (use waitio, built without -fallow-argument-mismatch) and
! the `_f` entry points (waitio_mpi_allgatherv_f, waitio_mpi_type_size_f), over PBs of two MPIs (tests/scripts/mpi_types.sh): a row of a
! column-major matrix as a vector type resized to one element, gathered with Allgatherv into
! a contiguous array and back into the rows of a matrix; a non-commutative user operation
! (composition of maps x -> a x + b, in rank order) through Scan and, in place, Exscan;
! Reduce_scatter_block and Alltoallv of INTEGERs; Type_size through its _f form. Every value
! is checked against what it must be.
program fortran_mod_types
  use waitio
  implicit none
  integer :: ierr, univ, pbg, me, n, pb, prank, i, j, errs, vec, row, pair, op, sz
  integer(kind=WAITIO_MPI_ADDRESS_KIND) :: lb, ext
  integer :: a(4, 6), b(4, 6), mine(2), prefix(2), want(2)
  integer, allocatable :: full(:), counts(:), displs(:), sendv(:), recvv(:), sc(:), sd(:), rc(:), rd(:)
  external :: compose

  errs = 0
  call WAITIO_INIT(60, ierr)
  call WAITIO_CREATE_UNIVERSE(univ, ierr)
  if (ierr /= 0) stop 'WAITIO_CREATE_UNIVERSE failed'
  call WAITIO_MPI_Comm_rank(univ, me, ierr)
  call WAITIO_MPI_Comm_size(univ, n, ierr)
  call WAITIO_PB_RANK(pb, ierr)
  call WAITIO_CREATE_PBGROUP(pbg, pb, ierr)
  call WAITIO_GROUP_RANK(pbg, prank, ierr)
  if (n > 4) stop 'at most 4 processes: one matrix row each'

  ! a row of a(4,6): 6 INTEGERs 4 apart, resized to one INTEGER so that rows i and i+1 follow
  call WAITIO_MPI_Type_vector(6, 1, 4, WAITIO_MPI_INTEGER, vec, ierr)
  call WAITIO_MPI_Type_create_resized(vec, 0_WAITIO_MPI_ADDRESS_KIND, 4_WAITIO_MPI_ADDRESS_KIND, &
                                      row, ierr)
  call WAITIO_MPI_Type_commit(row, ierr)
  call WAITIO_MPI_Type_free(vec, ierr)
  if (ierr /= 0 .or. vec /= WAITIO_MPI_DATATYPE_NULL) errs = errs + 1
  call WAITIO_MPI_Type_get_extent(row, lb, ext, ierr)
  if (ierr /= 0 .or. lb /= 0 .or. ext /= 4) errs = errs + 1
  call waitio_mpi_type_size_f(row, sz, ierr)
  if (ierr /= 0 .or. sz /= 24) errs = errs + 1

  do j = 1, 6
    do i = 1, 4
      a(i, j) = me * 1000 + i * 10 + j
    end do
  end do
  ! every rank's row me+1, gathered as 6 contiguous INTEGERs per rank. The row starts at the
  ! element a(me+1,1): the _f form takes it as MPI does (by address, implicit interface); the
  ! module's form would see one INTEGER (a scalar's descriptor) and refuse a count that needs 84
  allocate(full(6 * n), counts(n), displs(n))
  counts = 6
  do i = 1, n
    displs(i) = 6 * (i - 1)
  end do
  call waitio_mpi_allgatherv_f(a(me + 1, 1), 1, row, full, counts, displs, WAITIO_MPI_INTEGER, univ, &
                               ierr)
  if (ierr /= 0) stop 'WAITIO_MPI_Allgatherv (row -> INTEGER) failed'
  do i = 0, n - 1
    do j = 1, 6
      if (full(6 * i + j) /= i * 1000 + (i + 1) * 10 + j) errs = errs + 1
    end do
  end do
  ! and back: 6 INTEGERs from each rank into row i+1 of b (displacement i rows = i INTEGERs)
  b = -1
  counts = 1
  do i = 1, n
    displs(i) = i - 1
  end do
  call WAITIO_MPI_Allgatherv(full(6 * me + 1:6 * me + 6), 6, WAITIO_MPI_INTEGER, b, counts, displs, &
                             row, univ, ierr)
  if (ierr /= 0) stop 'WAITIO_MPI_Allgatherv (INTEGER -> row) failed'
  do i = 1, 4
    do j = 1, 6
      if (i <= n) then
        if (b(i, j) /= (i - 1) * 1000 + i * 10 + j) errs = errs + 1
      else if (b(i, j) /= -1) then
        errs = errs + 1 ! a row nobody sent: untouched
      end if
    end do
  end do

  ! a non-commutative user operation: composition of x -> a x + b in rank order
  call WAITIO_MPI_Type_contiguous(2, WAITIO_MPI_INTEGER, pair, ierr)
  call WAITIO_MPI_Type_commit(pair, ierr)
  call WAITIO_MPI_Op_create(compose, .false., op, ierr)
  if (ierr /= 0) stop 'WAITIO_MPI_Op_create failed'
  mine = (/ 1 + mod(me, 2), me + 3 /)
  call WAITIO_MPI_Scan(mine, prefix, 1, pair, op, univ, ierr)
  call fold(me, want)
  if (ierr /= 0 .or. prefix(1) /= want(1) .or. prefix(2) /= want(2)) errs = errs + 1
  prefix = mine
  call WAITIO_MPI_Exscan(WAITIO_MPI_IN_PLACE, prefix, 1, pair, op, univ, ierr)
  if (me > 0) then
    call fold(me - 1, want)
    if (ierr /= 0 .or. prefix(1) /= want(1) .or. prefix(2) /= want(2)) errs = errs + 1
  end if
  call WAITIO_MPI_Op_free(op, ierr)
  if (ierr /= 0 .or. op /= WAITIO_MPI_OP_NULL) errs = errs + 1

  ! Reduce_scatter_block: element k of every rank is me + k; rank k gets their sum
  allocate(sendv(n), recvv(1))
  do i = 1, n
    sendv(i) = me + i
  end do
  call WAITIO_MPI_Reduce_scatter_block(sendv, recvv, 1, WAITIO_MPI_INTEGER, WAITIO_MPI_SUM, univ, ierr)
  if (ierr /= 0 .or. recvv(1) /= n * (n - 1) / 2 + n * (me + 1)) errs = errs + 1

  ! Alltoallv: rank me sends j+1 copies of 100*me+j to rank j
  allocate(sc(n), sd(n), rc(n), rd(n))
  deallocate(sendv, recvv)
  allocate(sendv(n * (n + 1) / 2), recvv(n * (me + 1)))
  do j = 0, n - 1
    sc(j + 1) = j + 1
    sd(j + 1) = j * (j + 1) / 2
    sendv(sd(j + 1) + 1:sd(j + 1) + j + 1) = 100 * me + j
    rc(j + 1) = me + 1
    rd(j + 1) = j * (me + 1)
  end do
  call WAITIO_MPI_Alltoallv(sendv, sc, sd, WAITIO_MPI_INTEGER, recvv, rc, rd, WAITIO_MPI_INTEGER, &
                            univ, ierr)
  do j = 0, n - 1
    do i = 1, me + 1
      if (recvv(j * (me + 1) + i) /= 100 * j + me) errs = errs + 1
    end do
  end do
  call WAITIO_MPI_Type_free(row, ierr)
  call WAITIO_MPI_Type_free(pair, ierr)
  deallocate(full, counts, displs, sendv, recvv, sc, sd, rc, rd) ! (a main program's are not freed)
  print '(a,i0,a,i0,a,i0,a,i0,a)', 'fortran_mod_types PB ', pb, ' rank ', prank, ': errors ', errs, &
    ' (', n, ' processes)'
  call WAITIO_FINALIZE(ierr)
  if (errs /= 0) stop 1
contains
  ! ranks 0..upto's pairs composed in rank order, as Scan must give
  subroutine fold(upto, res)
    integer, intent(in) :: upto
    integer, intent(out) :: res(2)
    integer :: r
    res = (/ 1, 3 /)
    do r = 1, upto
      res = (/ res(1) * (1 + mod(r, 2)), (1 + mod(r, 2)) * res(2) + r + 3 /)
    end do
  end subroutine
end program fortran_mod_types

! MPI's user function: inoutvec = invec op inoutvec, x -> a x + b applied in then inout
subroutine compose(invec, inoutvec, len, datatype)
  implicit none
  integer, intent(in) :: len, datatype
  integer, intent(in) :: invec(2, len)
  integer, intent(inout) :: inoutvec(2, len)
  integer :: k, na, nb
  do k = 1, len
    na = invec(1, k) * inoutvec(1, k)
    nb = inoutvec(1, k) * invec(2, k) + inoutvec(2, k)
    inoutvec(1, k) = na
    inoutvec(2, k) = nb
  end do
  if (datatype == 0) inoutvec(1, 1) = -999 ! never: the layer passes the pair type's handle
end subroutine
