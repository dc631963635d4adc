! fortran_mod_ext.f90 -- the module forms (use waitio, built without -fallow-argument-mismatch)
! of Sendrecv, Sendrecv_replace, Iprobe/Probe/Get_count/Get_elements, Waitany/Waitsome/Testany/
! Testall/Testsome, Comm_split/dup/group/create_group/free, Group_incl/size/rank/free and
! Ibcast/Iallreduce/Ibarrier, plus some of the same routines through their external _f names
! (waitio_mpi_sendrecv_f, waitio_mpi_comm_split_f, ...): every value checked against what the
! senders computed, 1-based indices and WAITIO_MPI_UNDEFINED where MPI's Fortran binding has them.
! Prints "fortran_mod_ext rank R: errors E (N processes)".
program fortran_mod_ext
  use waitio
  implicit none
  integer, parameter :: nreq = 4
  integer :: ierr, univ, me, n, next, prev, i, k, errs, cnt, idx, outc, half, hrank, hsize
  integer :: st(WAITIO_STATUS_SIZE), sts(WAITIO_STATUS_SIZE, nreq), ids(nreq)
  integer :: req(WAITIO_REQUEST_SIZE, nreq), r1(WAITIO_REQUEST_SIZE), r2(WAITIO_REQUEST_SIZE)
  integer :: sbuf(300), rbuf(300), got(50, nreq), total, expect
  integer :: split, dup, wgroup, group, cg, gsize, grank, ranks(2)
  real(kind=8) :: d(40), dsum(40)
  logical :: flag
  integer :: bc(25)


  errs = 0
  bc = 0
  call WAITIO_INIT(60, ierr)
  call WAITIO_CREATE_UNIVERSE(univ, ierr)
  if (ierr /= 0) stop 'WAITIO_CREATE_UNIVERSE failed'
  call WAITIO_MPI_Comm_rank(univ, me, ierr)
  call WAITIO_MPI_Comm_size(univ, n, ierr)
  next = mod(me + 1, n)
  prev = mod(me + n - 1, n)

  ! Sendrecv around the ring (module form), then the _f form the other way
  do i = 1, 300
    sbuf(i) = me * 1000 + i
  end do
  rbuf = -1
  call WAITIO_MPI_Sendrecv(sbuf, 300, WAITIO_MPI_INTEGER, next, 11, rbuf, 300, WAITIO_MPI_INTEGER, &
                           prev, WAITIO_MPI_ANY_TAG, univ, st, ierr)
  call check(ierr == 0 .and. st(WAITIO_MPI_SOURCE) == prev .and. st(WAITIO_MPI_TAG) == 11 .and. &
             st(WAITIO_MPI_COUNT) == 1200, 'sendrecv status')
  do i = 1, 300
    call check(rbuf(i) == prev * 1000 + i, 'sendrecv data')
  end do
  call waitio_mpi_sendrecv_f(sbuf, 300, WAITIO_MPI_INTEGER, prev, 12, rbuf, 300, WAITIO_MPI_INTEGER, &
                             next, 12, univ, st, ierr)
  call check(ierr == 0 .and. rbuf(7) == next * 1000 + 7, 'sendrecv_f')

  ! Sendrecv_replace
  do i = 1, 40
    d(i) = me + i / 4.0d0
  end do
  call WAITIO_MPI_Sendrecv_replace(d, 40, WAITIO_MPI_DOUBLE_PRECISION, next, 13, prev, 13, univ, &
                                   st, ierr)
  call check(ierr == 0 .and. d(40) == prev + 10.0d0 .and. d(1) == prev + 0.25d0, 'sendrecv_replace')

  ! Probe, Iprobe, Get_count, Get_elements: 37 integers from prev, found before they are received
  call WAITIO_MPI_Isend(sbuf, 37, WAITIO_MPI_INTEGER, next, 14, univ, r1, ierr)
  flag = .false.
  do while (.not. flag)
    call WAITIO_MPI_Iprobe(WAITIO_MPI_ANY_SOURCE, 14, univ, flag, st, ierr)
  end do
  call check(st(WAITIO_MPI_SOURCE) == prev .and. st(WAITIO_MPI_COUNT) == 148, 'iprobe status')
  call WAITIO_MPI_Get_count(st, WAITIO_MPI_INTEGER, cnt, ierr)
  call check(cnt == 37, 'get_count integer')
  call WAITIO_MPI_Get_count(st, WAITIO_MPI_DOUBLE_PRECISION, cnt, ierr)
  call check(cnt == WAITIO_MPI_UNDEFINED, 'get_count undefined')
  call WAITIO_MPI_Get_elements(st, WAITIO_MPI_INTEGER, cnt, ierr)
  call check(cnt == 37, 'get_elements')
  call WAITIO_MPI_Probe(prev, WAITIO_MPI_ANY_TAG, univ, st, ierr)
  call check(ierr == 0 .and. st(WAITIO_MPI_TAG) == 14, 'probe')
  call WAITIO_MPI_Recv(rbuf, 37, WAITIO_MPI_INTEGER, prev, 14, univ, st, ierr)
  call check(rbuf(37) == prev * 1000 + 37, 'probed message')
  call WAITIO_MPI_Wait(r1, st, ierr)

  ! Waitany: nreq receives from prev, each of 50 integers; index is 1-based
  do k = 1, nreq
    call WAITIO_MPI_Irecv(got(:, k), 50, WAITIO_MPI_INTEGER, prev, 20 + k, univ, req(1, k), ierr)
  end do
  call send_all(20)
  do k = 1, nreq
    call WAITIO_MPI_Waitany(nreq, req, idx, st, ierr)
    call check(ierr == 0 .and. idx >= 1 .and. idx <= nreq, 'waitany index')
    if (idx >= 1 .and. idx <= nreq) call check(st(WAITIO_MPI_TAG) == 20 + idx, 'waitany status')
  end do
  call WAITIO_MPI_Waitany(nreq, req, idx, st, ierr)
  call check(idx == WAITIO_MPI_UNDEFINED .and. st(WAITIO_MPI_SOURCE) == WAITIO_MPI_ANY_SOURCE, &
             'waitany with none active')
  call check_got(20)

  ! Waitsome, then Testsome until none is active
  do k = 1, nreq
    call WAITIO_MPI_Irecv(got(:, k), 50, WAITIO_MPI_INTEGER, prev, 30 + k, univ, req(1, k), ierr)
  end do
  call send_all(30)
  total = 0
  do while (total < nreq)
    call WAITIO_MPI_Waitsome(nreq, req, outc, ids, sts, ierr)
    call check(ierr == 0 .and. outc >= 1, 'waitsome')
    do i = 1, outc
      call check(sts(WAITIO_MPI_TAG, i) == 30 + ids(i), 'waitsome status')
    end do
    total = total + outc
  end do
  call WAITIO_MPI_Testsome(nreq, req, outc, ids, sts, ierr)
  call check(outc == WAITIO_MPI_UNDEFINED, 'testsome with none active')
  call check_got(30)

  ! Testany and Testall
  do k = 1, nreq
    call WAITIO_MPI_Irecv(got(:, k), 50, WAITIO_MPI_INTEGER, prev, 40 + k, univ, req(1, k), ierr)
  end do
  call send_all(40)
  flag = .false.
  do while (.not. flag)
    call WAITIO_MPI_Testany(nreq, req, idx, flag, st, ierr)
  end do
  call check(idx >= 1 .and. idx <= nreq, 'testany index')
  flag = .false.
  do while (.not. flag)
    call WAITIO_MPI_Testall(nreq, req, flag, sts, ierr)
  end do
  call check(ierr == 0, 'testall')
  call WAITIO_MPI_Testany(nreq, req, idx, flag, st, ierr)
  call check(flag .and. idx == WAITIO_MPI_UNDEFINED, 'testany with none active')
  call check_got(40)

  ! communicators: split by halves (keys reverse the order), dup, a group of two
  half = me / ((n + 1) / 2)
  call WAITIO_MPI_Comm_split(univ, half, -me, split, ierr)
  call WAITIO_MPI_Comm_rank(split, hrank, ierr)
  call WAITIO_MPI_Comm_size(split, hsize, ierr)
  call WAITIO_MPI_Allreduce(me, total, 1, WAITIO_MPI_INTEGER, WAITIO_MPI_SUM, split, ierr)
  expect = 0
  do i = 0, n - 1
    if (i / ((n + 1) / 2) == half) expect = expect + i
  end do
  call check(ierr == 0 .and. total == expect, 'allreduce on split')
  call WAITIO_MPI_Barrier(split, ierr)
  call WAITIO_MPI_Comm_free(split, ierr)
  call check(ierr == 0 .and. split == WAITIO_MPI_COMM_NULL, 'comm_free')
  call waitio_mpi_comm_split_f(univ, WAITIO_MPI_UNDEFINED, 0, split, ierr)
  call check(ierr == 0 .and. split == WAITIO_MPI_COMM_NULL, 'split_f with undefined color')
  call WAITIO_MPI_Comm_dup(univ, dup, ierr)
  call WAITIO_MPI_Bcast(bc, 25, WAITIO_MPI_INTEGER, 0, dup, ierr)
  call WAITIO_MPI_Comm_group(dup, wgroup, ierr)
  call WAITIO_MPI_Group_size(wgroup, gsize, ierr)
  call check(gsize == n, 'group_size')
  ranks(1) = n - 1
  ranks(2) = 0
  call WAITIO_MPI_Group_incl(wgroup, 2, ranks, group, ierr)
  call WAITIO_MPI_Group_rank(group, grank, ierr)
  if (me == n - 1) call check(grank == 0, 'group_rank first')
  if (me == 0) call check(grank == 1, 'group_rank second')
  if (me /= 0 .and. me /= n - 1) call check(grank == WAITIO_MPI_UNDEFINED, 'group_rank outside')
  if (grank /= WAITIO_MPI_UNDEFINED) then
    call WAITIO_MPI_Comm_create_group(univ, group, 5, cg, ierr)
    call WAITIO_MPI_Allreduce(me + 1, total, 1, WAITIO_MPI_INTEGER, WAITIO_MPI_SUM, cg, ierr)
    call check(ierr == 0 .and. total == n + 1, 'allreduce on create_group')
    call WAITIO_MPI_Comm_free(cg, ierr)
  end if
  call WAITIO_MPI_Group_free(group, ierr)
  call check(ierr == 0 .and. group == WAITIO_MPI_GROUP_NULL, 'group_free')
  call WAITIO_MPI_Group_free(wgroup, ierr)
  call WAITIO_MPI_Comm_free(dup, ierr)

  ! non-blocking collectives: Ibcast completed by Wait, Iallreduce by Test, Ibarrier by Waitall
  if (me == 1) then
    do i = 1, 25
      bc(i) = 7 * i
    end do
  end if
  call WAITIO_MPI_Ibcast(bc, 25, WAITIO_MPI_INTEGER, 1, univ, r1, ierr)
  do i = 1, 40
    d(i) = me * i
  end do
  call WAITIO_MPI_Iallreduce(d, dsum, 40, WAITIO_MPI_DOUBLE_PRECISION, WAITIO_MPI_SUM, univ, r2, ierr)
  call WAITIO_MPI_Ibarrier(univ, req(1, 1), ierr)
  call waitio_mpi_ibarrier_f(univ, req(1, 2), ierr)
  call WAITIO_MPI_Wait(r1, st, ierr)
  call check(ierr == 0 .and. bc(25) == 175 .and. bc(1) == 7, 'ibcast')
  flag = .false.
  do while (.not. flag)
    call WAITIO_MPI_Test(r2, flag, st, ierr)
  end do
  call check(ierr == 0 .and. dsum(40) == 40.0d0 * (n * (n - 1) / 2), 'iallreduce')
  call WAITIO_MPI_Waitall(2, req, sts, ierr)
  call check(ierr == 0, 'ibarrier')

  call WAITIO_MPI_Comm_size(univ, n, ierr)
  write (*, '(a,i0,a,i0,a,i0,a)') 'fortran_mod_ext rank ', me, ': errors ', errs, ' (', n, ' processes)'
  call WAITIO_FINALIZE(ierr)

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      errs = errs + 1
      write (*, '(a,i0,a,a)') 'fortran_mod_ext rank ', me, ': FAILED ', what
    end if
  end subroutine

  ! nreq messages of 50 integers to next, tags base+1 .. base+nreq, contents from (me, tag)
  subroutine send_all(base)
    integer, intent(in) :: base
    integer :: s(50, nreq), sreq(WAITIO_REQUEST_SIZE, nreq), ss(WAITIO_STATUS_SIZE, nreq), q, j
    do q = 1, nreq
      do j = 1, 50
        s(j, q) = me * 100000 + (base + q) * 100 + j
      end do
      call WAITIO_MPI_Isend(s(:, q), 50, WAITIO_MPI_INTEGER, next, base + q, univ, sreq(1, q), ierr)
    end do
    call WAITIO_MPI_Waitall(nreq, sreq, ss, ierr)
  end subroutine

  subroutine check_got(base)
    integer, intent(in) :: base
    integer :: q, j
    do q = 1, nreq
      do j = 1, 50
        call check(got(j, q) == prev * 100000 + (base + q) * 100 + j, 'received data')
      end do
    end do
  end subroutine
end program fortran_mod_ext
