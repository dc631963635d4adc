! mpmd_world.f90 -- the Fortran program of tests/scripts/mpmd_world.sh: one application of a
! one-job MPMD launch, checking that MPI_COMM_WORLD is its own processes through each Fortran
! binding (docs/launcher.md, "MPMD: what MPI_COMM_WORLD means"), then coupling through WaitIO.
! The same three rounds as tests/progs/mpi_mpmd_world.c (round 1 with mpif.h, 2 with `use mpi`,
! 3 with `use mpi_f08`): size and rank of the world, MPI_Comm_compare with itself, a split and a
! dup, MPI_APPNUM and the name read on it, an allreduce of rank-dependent values over it; and,
! unless --whole, a send to rank <size> with MPI_ERRORS_RETURN set on the world, which must fail.
! Then a ring over the WaitIO universe, every byte checked.
! Arguments: --app A --layout N0,N1,... [--whole]. Prints "mpmd_world Fortran app A rank r: ok".
module mpmd_world_expect
  implicit none
  integer :: app = -1, expect_size = 0, expect_first = 0, bad = 0, wrank = -1
  integer(8) :: expect_sum = 0
  logical :: whole = .false.
contains
  subroutine fail(round, what, got)
    integer, intent(in) :: round, got
    character(len=*), intent(in) :: what
    write (0, '(a,i0,a,i0,a,i0,a,a,a,i0)') 'mpmd_world Fortran[app ', app, ' rank ', wrank, &
      '] round ', round, ': ERROR: ', what, ': ', got
    bad = bad + 1
  end subroutine fail

  subroutine check_rank(round, size, rank)
    integer, intent(in) :: round, size, rank
    wrank = rank
    if (size /= expect_size) call fail(round, 'world size', size)
    if (rank < expect_first .or. rank >= expect_first + expect_size) call fail(round, 'world rank', rank)
  end subroutine check_rank

  subroutine check_sums(round, sums, size)
    integer(8), intent(in) :: sums(2)
    integer, intent(in) :: round, size
    if (sums(1) /= expect_sum) call fail(round, 'allreduce over the world (sum)', int(sums(1)))
    if (sums(2) /= size) call fail(round, 'allreduce over the world (count)', int(sums(2)))
  end subroutine check_sums
end module mpmd_world_expect

subroutine round_mpif(round)
  use mpmd_world_expect
  implicit none
  include 'mpif.h'
  integer, intent(in) :: round
  integer :: ierr, size, rank, cmp, split, dup, x
  integer(kind=MPI_ADDRESS_KIND) :: appnum
  logical :: flag
  integer(8) :: mine(2), sums(2)
  character(len=MPI_MAX_OBJECT_NAME) :: name
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call check_rank(round, size, rank)
  call MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, cmp, ierr)
  if (cmp /= MPI_IDENT) call fail(round, 'compare(world, world)', cmp)
  call MPI_Comm_split(MPI_COMM_WORLD, 0, rank, split, ierr)
  call MPI_Comm_compare(MPI_COMM_WORLD, split, cmp, ierr)
  if (cmp /= MPI_CONGRUENT) call fail(round, 'compare(world, split of world)', cmp)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call MPI_Comm_compare(dup, MPI_COMM_WORLD, cmp, ierr)
  if (cmp /= MPI_CONGRUENT) call fail(round, 'compare(dup of world, world)', cmp)
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, appnum, flag, ierr)
  if (.not. flag .or. appnum /= app) call fail(round, 'MPI_APPNUM on the world', int(appnum))
  name = ''
  call MPI_Comm_get_name(MPI_COMM_WORLD, name, x, ierr)
  if (trim(name) /= 'MPI_COMM_WORLD') call fail(round, 'the world''s name is '//trim(name), x)
  mine = (/ int(rank + 1, 8) + 1000_8 * app, 1_8 /)
  call MPI_Allreduce(mine, sums, 2, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check_sums(round, sums, size)
  call MPI_Comm_free(split, ierr)
  call MPI_Comm_free(dup, ierr)
  if (whole) return
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  x = 1
  call MPI_Send(x, 1, MPI_INTEGER, size, 0, MPI_COMM_WORLD, ierr)
  if (ierr == MPI_SUCCESS) call fail(round, 'a send to the rank after the world''s last', size)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL, ierr)
end subroutine round_mpif

subroutine round_mod(round)
  use mpi
  use mpmd_world_expect
  implicit none
  integer, intent(in) :: round
  integer :: ierr, size, rank, cmp, split, dup
  integer(kind=MPI_ADDRESS_KIND) :: appnum
  logical :: flag
  integer(8) :: mine(2), sums(2)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call check_rank(round, size, rank)
  call MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, cmp, ierr)
  if (cmp /= MPI_IDENT) call fail(round, 'compare(world, world)', cmp)
  call MPI_Comm_split(MPI_COMM_WORLD, 0, rank, split, ierr)
  call MPI_Comm_compare(MPI_COMM_WORLD, split, cmp, ierr)
  if (cmp /= MPI_CONGRUENT) call fail(round, 'compare(world, split of world)', cmp)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call MPI_Comm_compare(dup, MPI_COMM_WORLD, cmp, ierr)
  if (cmp /= MPI_CONGRUENT) call fail(round, 'compare(dup of world, world)', cmp)
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, appnum, flag, ierr)
  if (.not. flag .or. appnum /= app) call fail(round, 'MPI_APPNUM on the world', int(appnum))
  mine = (/ int(rank + 1, 8) + 1000_8 * app, 1_8 /)
  call MPI_Allreduce(mine, sums, 2, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check_sums(round, sums, size)
  call MPI_Comm_free(split, ierr)
  call MPI_Comm_free(dup, ierr)
end subroutine round_mod

subroutine round_f08(round)
  use mpi_f08
  use mpmd_world_expect
  implicit none
  integer, intent(in) :: round
  integer :: ierr, size, rank, cmp, x, namelen
  type(MPI_Comm) :: split, dup
  integer(kind=MPI_ADDRESS_KIND) :: appnum
  logical :: flag
  integer(8) :: mine(2), sums(2)
  character(len=MPI_MAX_OBJECT_NAME) :: name
  call MPI_Comm_size(MPI_COMM_WORLD, size)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call check_rank(round, size, rank)
  call MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, cmp)
  if (cmp /= MPI_IDENT) call fail(round, 'compare(world, world)', cmp)
  call MPI_Comm_split(MPI_COMM_WORLD, 0, rank, split)
  call MPI_Comm_compare(MPI_COMM_WORLD, split, cmp)
  if (cmp /= MPI_CONGRUENT) call fail(round, 'compare(world, split of world)', cmp)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  call MPI_Comm_compare(dup, MPI_COMM_WORLD, cmp)
  if (cmp /= MPI_CONGRUENT) call fail(round, 'compare(dup of world, world)', cmp)
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, appnum, flag)
  if (.not. flag .or. appnum /= app) call fail(round, 'MPI_APPNUM on the world', int(appnum))
  name = ''
  call MPI_Comm_get_name(MPI_COMM_WORLD, name, namelen)
  if (trim(name) /= 'MPI_COMM_WORLD') call fail(round, 'the world''s name is '//trim(name), namelen)
  mine = (/ int(rank + 1, 8) + 1000_8 * app, 1_8 /)
  call MPI_Allreduce(mine, sums, 2, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD)
  call check_sums(round, sums, size)
  call MPI_Comm_free(split)
  call MPI_Comm_free(dup)
  if (whole) return
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
  x = 1
  call MPI_Send(x, 1, MPI_INTEGER, size, 0, MPI_COMM_WORLD, ierr)
  if (ierr == MPI_SUCCESS) call fail(round, 'a send to the rank after the world''s last', size)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL)
end subroutine round_f08

program mpmd_world
  use mpmd_world_expect
  implicit none
  include 'mpif.h'
  include 'waitio_mpif.h'
  integer :: ierr, i, k, p, napps, n, total, first, pb, u, me, nu, nxt, prv, lin, lout, wsize
  integer :: layout(16)
  integer(8) :: weight
  character(len=64) :: arg
  integer(kind=4) :: req(WAITIO_REQUEST_SIZE, 2), sta(WAITIO_STATUS_SIZE, 2)
  integer(1), allocatable :: bufin(:), bufout(:)

  napps = 0
  i = 1
  do while (i <= command_argument_count())
    call get_command_argument(i, arg)
    if (arg == '--app') then
      i = i + 1
      call get_command_argument(i, arg)
      read (arg, *) app
    else if (arg == '--layout') then
      i = i + 1
      call get_command_argument(i, arg)
      p = 1
      do while (p <= len_trim(arg))
        k = index(arg(p:), ',')
        if (k == 0) k = len_trim(arg(p:)) + 1
        napps = napps + 1
        read (arg(p:p + k - 2), *) layout(napps)
        p = p + k
      end do
    else if (arg == '--whole') then
      whole = .true.
    end if
    i = i + 1
  end do
  if (app < 0 .or. app >= napps) stop 2
  total = 0
  first = 0
  weight = 0
  do k = 1, napps
    if (k - 1 < app) first = first + layout(k)
    total = total + layout(k)
    weight = weight + 1000_8 * (k - 1) * layout(k)
  end do
  n = layout(app + 1)
  if (whole) then
    expect_size = total
    expect_first = first
    expect_sum = int(total, 8) * (total + 1) / 2 + weight
  else
    expect_size = n
    expect_first = 0
    expect_sum = int(n, 8) * (n + 1) / 2 + 1000_8 * app * n
  end if

  call MPI_Init(ierr)
  call round_mpif(1)
  call round_mod(2)
  call round_f08(3)

  call WAITIO_INIT(60, ierr)
  if (ierr /= 0) stop 3
  call WAITIO_PB_RANK(pb, ierr)
  if (pb /= app) call fail(0, 'WaitIO PB', pb)
  call WAITIO_CREATE_UNIVERSE(u, ierr)
  call WAITIO_GROUP_RANK(u, me, ierr)
  call WAITIO_GROUP_SIZE(u, nu, ierr)
  nxt = mod(me + 1, nu)
  prv = mod(me + nu - 1, nu)
  lout = 1000 + 37 * me
  lin = 1000 + 37 * prv
  allocate (bufout(lout), bufin(lin))
  do i = 1, lout
    bufout(i) = int(ring_byte(me, i - 1), 1)
  end do
  bufin = 0
  call WAITIO_MPI_Irecv(bufin, lin, WAITIO_MPI_BYTE, prv, 21, u, req(1, 1), ierr)
  call WAITIO_MPI_Isend(bufout, lout, WAITIO_MPI_BYTE, nxt, 21, u, req(1, 2), ierr)
  call WAITIO_MPI_Waitall(2, req, sta, ierr)
  if (ierr /= 0) stop 4
  k = 0
  do i = 1, lin
    if (int(bufin(i), 4) /= ring_byte(prv, i - 1)) k = k + 1
  end do
  if (k /= 0) call fail(0, 'bytes differ in the message from universe rank', prv)
  call MPI_Comm_size(MPI_COMM_WORLD, wsize, ierr)
  if (bad == 0) then
    print '(a,i0,a,i0,a,i0,a)', 'mpmd_world Fortran app ', app, ' rank ', wrank, ': ok (world ', wsize, ')'
  else
    print '(a,i0,a,i0,a)', 'mpmd_world Fortran app ', app, ' rank ', wrank, ': FAILED'
  end if
  call WAITIO_FINALIZE(ierr)
  call MPI_Finalize(ierr)
  if (bad /= 0) stop 1

contains
  ! byte i of the ring message from universe rank src, as a signed byte's value (the C and Python
  ! programs use the same formula, unsigned)
  integer function ring_byte(src, i)
    integer, intent(in) :: src, i
    ring_byte = mod(src * 31 + i * 7, 251)
    if (ring_byte > 127) ring_byte = ring_byte - 256
  end function ring_byte
end program mpmd_world
