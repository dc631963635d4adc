! waitio_module.f90 -- the Fortran module `waitio` (use waitio): the constants of waitio_mpif.h
! and an explicit interface for every subroutine it documents (docs/mpi-layer.md), so that the
! compiler checks every call: a missing ierr or a wrong argument type is a compile error.
! Buffers are TYPE(*), DIMENSION(..): any type and rank, a scalar too, passes without
! -fallow-argument-mismatch; the library receives a descriptor (src/mpi/fortran_cdesc.c) and
! refuses non-contiguous arrays. Communicators are INTEGER (default kind, 4 bytes), requests
! INTEGER req(WAITIO_REQUEST_SIZE) (one of a req(WAITIO_REQUEST_SIZE, n) array: req(1,k)),
! statuses INTEGER sta(WAITIO_STATUS_SIZE). The other routines bind to the same C entry points
! as the upper-case subroutines of waitio_mpif.h (src/mpi/fortran.c).
! Programs use either this module or include 'waitio_mpif.h', not both in one scope.
module waitio
  use, intrinsic :: iso_c_binding, only: c_int
  implicit none
  private :: c_int
  include 'waitio_mpif.h'

  interface
    subroutine WAITIO_INIT(timeout, ierr) bind(C, name="waitio_init_f")
      import
      integer(c_int), intent(in) :: timeout
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_FINALIZE(ierr) bind(C, name="waitio_finalize_f")
      import
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_CREATE_UNIVERSE(comm, ierr) bind(C, name="waitio_create_universe_f")
      import
      integer(c_int), intent(out) :: comm, ierr
    end subroutine
    subroutine WAITIO_CREATE_UNIVERSE_PBHEAD(comm, ierr) bind(C, name="waitio_create_universe_pbhead_f")
      import
      integer(c_int), intent(out) :: comm, ierr
    end subroutine
    subroutine WAITIO_CREATE_PBGROUP(comm, pbid, ierr) bind(C, name="waitio_create_pbgroup_f")
      import
      integer(c_int), intent(out) :: comm
      integer(c_int), intent(in) :: pbid
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_GROUP_RANK(comm, rank, ierr) bind(C, name="waitio_group_rank_f")
      import
      integer(c_int), intent(in) :: comm
      integer(c_int), intent(out) :: rank, ierr
    end subroutine
    subroutine WAITIO_GROUP_SIZE(comm, size, ierr) bind(C, name="waitio_group_size_f")
      import
      integer(c_int), intent(in) :: comm
      integer(c_int), intent(out) :: size, ierr
    end subroutine
    subroutine WAITIO_PB_RANK(pbid, ierr) bind(C, name="waitio_pb_rank_f")
      import
      integer(c_int), intent(out) :: pbid, ierr
    end subroutine
    subroutine WAITIO_PB_SIZE(npb, ierr) bind(C, name="waitio_pb_size_f")
      import
      integer(c_int), intent(out) :: npb, ierr
    end subroutine
    subroutine WAITIO_WAIT(request, ierr) bind(C, name="waitio_wait_f")
      import
      integer(c_int), intent(inout) :: request(WAITIO_REQUEST_SIZE)
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_BARRIER(comm, ierr) bind(C, name="waitio_barrier_f")
      import
      integer(c_int), intent(in) :: comm
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_MPI_Comm_rank(comm, rank, ierr) bind(C, name="waitio_mpi_comm_rank_f")
      import
      integer(c_int), intent(in) :: comm
      integer(c_int), intent(out) :: rank, ierr
    end subroutine
    subroutine WAITIO_MPI_Comm_size(comm, size, ierr) bind(C, name="waitio_mpi_comm_size_f")
      import
      integer(c_int), intent(in) :: comm
      integer(c_int), intent(out) :: size, ierr
    end subroutine
    subroutine WAITIO_MPI_Isend(buf, count, datatype, dest, tag, comm, request, ierr) &
        bind(C, name="waitio_mpi_isend_cdesc")
      import
      type(*), dimension(..), intent(in), asynchronous :: buf
      integer(c_int), intent(in) :: count, datatype, dest, tag, comm
      integer(c_int), intent(out) :: request(WAITIO_REQUEST_SIZE)
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_MPI_Irecv(buf, count, datatype, source, tag, comm, request, ierr) &
        bind(C, name="waitio_mpi_irecv_cdesc")
      import
      type(*), dimension(..), intent(inout), asynchronous :: buf
      integer(c_int), intent(in) :: count, datatype, source, tag, comm
      integer(c_int), intent(out) :: request(WAITIO_REQUEST_SIZE)
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_MPI_Send(buf, count, datatype, dest, tag, comm, ierr) &
        bind(C, name="waitio_mpi_send_cdesc")
      import
      type(*), dimension(..), intent(in) :: buf
      integer(c_int), intent(in) :: count, datatype, dest, tag, comm
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_MPI_Recv(buf, count, datatype, source, tag, comm, status, ierr) &
        bind(C, name="waitio_mpi_recv_cdesc")
      import
      type(*), dimension(..), intent(inout) :: buf
      integer(c_int), intent(in) :: count, datatype, source, tag, comm
      integer(c_int), intent(out) :: status(WAITIO_STATUS_SIZE)
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_MPI_Wait(request, status, ierr) bind(C, name="waitio_mpi_wait_f")
      import
      integer(c_int), intent(inout) :: request(WAITIO_REQUEST_SIZE)
      integer(c_int), intent(out) :: status(WAITIO_STATUS_SIZE)
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_MPI_Waitall(count, requests, statuses, ierr) bind(C, name="waitio_mpi_waitall_f")
      import
      integer(c_int), intent(in) :: count
      integer(c_int), intent(inout) :: requests(WAITIO_REQUEST_SIZE, *)
      integer(c_int), intent(out) :: statuses(WAITIO_STATUS_SIZE, *)
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_MPI_Barrier(comm, ierr) bind(C, name="waitio_mpi_barrier_f")
      import
      integer(c_int), intent(in) :: comm
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_MPI_Bcast(buf, count, datatype, root, comm, ierr) &
        bind(C, name="waitio_mpi_bcast_cdesc")
      import
      type(*), dimension(..), intent(inout) :: buf
      integer(c_int), intent(in) :: count, datatype, root, comm
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_MPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm, ierr) &
        bind(C, name="waitio_mpi_reduce_cdesc")
      import
      type(*), dimension(..), intent(in) :: sendbuf
      type(*), dimension(..), intent(inout) :: recvbuf
      integer(c_int), intent(in) :: count, datatype, op, root, comm
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_MPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm, ierr) &
        bind(C, name="waitio_mpi_allreduce_cdesc")
      import
      type(*), dimension(..), intent(in) :: sendbuf
      type(*), dimension(..), intent(inout) :: recvbuf
      integer(c_int), intent(in) :: count, datatype, op, comm
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_MPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, &
        root, comm, ierr) bind(C, name="waitio_mpi_gather_cdesc")
      import
      type(*), dimension(..), intent(in) :: sendbuf
      type(*), dimension(..), intent(inout) :: recvbuf
      integer(c_int), intent(in) :: sendcount, sendtype, recvcount, recvtype, root, comm
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_MPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, &
        recvtype, root, comm, ierr) bind(C, name="waitio_mpi_gatherv_cdesc")
      import
      type(*), dimension(..), intent(in) :: sendbuf
      type(*), dimension(..), intent(inout) :: recvbuf
      integer(c_int), intent(in) :: sendcount, sendtype, recvtype, root, comm
      integer(c_int), intent(in) :: recvcounts(*), displs(*)
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_MPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, &
        root, comm, ierr) bind(C, name="waitio_mpi_scatter_cdesc")
      import
      type(*), dimension(..), intent(in) :: sendbuf
      type(*), dimension(..), intent(inout) :: recvbuf
      integer(c_int), intent(in) :: sendcount, sendtype, recvcount, recvtype, root, comm
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_MPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, &
        recvtype, root, comm, ierr) bind(C, name="waitio_mpi_scatterv_cdesc")
      import
      type(*), dimension(..), intent(in) :: sendbuf
      type(*), dimension(..), intent(inout) :: recvbuf
      integer(c_int), intent(in) :: sendcounts(*), displs(*)
      integer(c_int), intent(in) :: sendtype, recvcount, recvtype, root, comm
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_MPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, &
        comm, ierr) bind(C, name="waitio_mpi_allgather_cdesc")
      import
      type(*), dimension(..), intent(in) :: sendbuf
      type(*), dimension(..), intent(inout) :: recvbuf
      integer(c_int), intent(in) :: sendcount, sendtype, recvcount, recvtype, comm
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_MPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, &
        comm, ierr) bind(C, name="waitio_mpi_alltoall_cdesc")
      import
      type(*), dimension(..), intent(in) :: sendbuf
      type(*), dimension(..), intent(inout) :: recvbuf
      integer(c_int), intent(in) :: sendcount, sendtype, recvcount, recvtype, comm
      integer(c_int), intent(out) :: ierr
    end subroutine
  end interface
end module waitio
