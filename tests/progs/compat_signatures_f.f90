! compat_signatures_f.f90 -- a Fortran program written for the original WaitIO (include
! 'waitio_mpif.h', external subroutines, no interfaces): it calls the original's short lists,
! waitio_mpi_gather_f(sendbuf, recvbuf, count, datatype, root, comm, ierr) and
! waitio_mpi_allgather_f(sendbuf, recvbuf, count, datatype, comm, ierr), next to MPI's full lists
! (WAITIO_MPI_Gather, WAITIO_MPI_Allgather), and ends with `call waitio_finalize_f(1000)`, a
! literal, as the original's coupler does. Every received element is checked (every byte: the
! values fill all four). tests/progs/fortran_mod_compat.f90 runs the same steps through the
! module, in the other PB of tests/scripts/compat_signatures.sh.
program compat_signatures_f
  implicit none
  include 'waitio_mpif.h'
  integer, parameter :: maxcount = 4099
  integer :: univ, ierr, me, n, errs, r, cnt, root, step, i
  integer, allocatable :: sbuf(:), rbuf(:)
  integer :: counts(3) = (/ 1, 777, maxcount /)

  errs = 0
  call WAITIO_CREATE_UNIVERSE(univ, ierr)
  if (ierr /= 0) stop 2
  call WAITIO_GROUP_RANK(univ, me, ierr)
  call WAITIO_GROUP_SIZE(univ, n, ierr)
  allocate (sbuf(maxcount), rbuf(maxcount * n))
  do r = 1, 3
    cnt = counts(r)
    root = mod(r, n)
    step = 10 * r
    call fill(step)
    call waitio_mpi_gather_f(sbuf, rbuf, cnt, WAITIO_MPI_INTEGER, root, univ, ierr)
    if (me == root) call check(step, 'waitio_mpi_gather_f')
    call fill(step + 1)
    call waitio_mpi_allgather_f(sbuf, rbuf, cnt, WAITIO_MPI_INTEGER, univ, ierr)
    call check(step + 1, 'waitio_mpi_allgather_f')
    call fill(step + 2)
    call WAITIO_MPI_Gather(sbuf, cnt, WAITIO_MPI_INTEGER, rbuf, cnt, WAITIO_MPI_INTEGER, root, &
                           univ, ierr)
    if (me == root) call check(step + 2, 'WAITIO_MPI_Gather')
    call fill(step + 3)
    call WAITIO_MPI_Allgather(sbuf, cnt, WAITIO_MPI_INTEGER, rbuf, cnt, WAITIO_MPI_INTEGER, univ, ierr)
    call check(step + 3, 'WAITIO_MPI_Allgather')
  end do
  write (*, '(a,i0,a,i0,a,i0)') 'compat_signatures_f ', me, ': errors ', errs, ', processes ', n
  deallocate (sbuf, rbuf)
  call waitio_finalize_f(1000)
  if (errs /= 0) stop 1

contains

  integer function val(src, i, s)
    integer, intent(in) :: src, i, s
    val = src * 16777259 + i * 65599 + s * 257 + 1
  end function

  subroutine fill(s)
    integer, intent(in) :: s
    do i = 1, cnt
      sbuf(i) = val(me, i, s)
    end do
    rbuf = -1
  end subroutine

  subroutine check(s, what)
    integer, intent(in) :: s
    character(*), intent(in) :: what
    integer :: src
    if (ierr /= 0) then
      write (*, '(a,a,i0)') what, ': ierr ', ierr
      errs = errs + 1
      return
    end if
    do src = 0, n - 1
      do i = 1, cnt
        if (rbuf(src * cnt + i) /= val(src, i, s)) then
          write (*, '(a,a,i0,a,i0)') what, ': wrong element ', i, ' from ', src
          errs = errs + 1
          return
        end if
      end do
    end do
  end subroutine
end program compat_signatures_f
