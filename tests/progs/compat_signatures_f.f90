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
  character(*), parameter :: label = 'compat_signatures_f'
  include 'compat_signatures_steps.inc'
end program compat_signatures_f
