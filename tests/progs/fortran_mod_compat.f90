! fortran_mod_compat.f90 -- the steps of compat_signatures_f.f90 through the module (`use
! waitio`, explicit interfaces): the original's short lists waitio_mpi_gather_f /
! waitio_mpi_allgather_f, MPI's WAITIO_MPI_Gather / WAITIO_MPI_Allgather, and
! `call waitio_finalize_f(1000)` with a literal. It runs as the other PB of
! tests/scripts/compat_signatures.sh, so both programs make the same calls in the same order.
program fortran_mod_compat
  use waitio
  implicit none
  character(*), parameter :: label = 'fortran_mod_compat'
  include 'compat_signatures_steps.inc'
end program fortran_mod_compat
