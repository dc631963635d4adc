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
  ! WAITIO_MPI_IN_PLACE: passed as the send buffer (the receive buffer of scatter(v) at the
  ! root), it means "in place" wherever MPI allows it; a variable the library knows by address
  integer(c_int), bind(C, name="waitio_mpi_fortran_in_place") :: WAITIO_MPI_IN_PLACE

  interface
    subroutine WAITIO_INIT(timeout, ierr) bind(C, name="waitio_init_f")
      import
      integer(c_int), intent(in) :: timeout
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_FINALIZE(ierr) bind(C, name="WAITIO_FINALIZE_f")
      import
      integer(c_int), intent(out) :: ierr
    end subroutine
    ! the original's: call waitio_finalize_f(1000) -- an input WaitIO neither reads nor writes
    subroutine waitio_finalize_f(timeout) bind(C, name="waitio_finalize_f")
      import
      integer(c_int), intent(in) :: timeout
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
    ! the original's short lists (WAITIO_MPI_Gather / _Allgather take MPI's)
    subroutine waitio_mpi_gather_f(sendbuf, recvbuf, count, datatype, root, comm, ierr) &
        bind(C, name="waitio_mpi_gather_f_cdesc")
      import
      type(*), dimension(..), intent(in) :: sendbuf
      type(*), dimension(..), intent(inout) :: recvbuf
      integer(c_int), intent(in) :: count, datatype, root, comm
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine waitio_mpi_allgather_f(sendbuf, recvbuf, count, datatype, comm, ierr) &
        bind(C, name="waitio_mpi_allgather_f_cdesc")
      import
      type(*), dimension(..), intent(in) :: sendbuf
      type(*), dimension(..), intent(inout) :: recvbuf
      integer(c_int), intent(in) :: count, datatype, comm
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
    ! ---- Sendrecv, completions, probes, communicators and groups, non-blocking collectives
    ! (src/mpi/fortran_ext.c). Indices are 1-based, flags default LOGICALs (4 bytes), groups
    ! INTEGER handles like communicators. Bound to the NAME_ aliases of the _f entry points, so
    ! that a program using the module may still call the external NAME_f forms.
    subroutine WAITIO_MPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, &
        recvcount, recvtype, source, recvtag, comm, status, ierr) &
        bind(C, name="waitio_mpi_sendrecv_cdesc")
      import
      type(*), dimension(..), intent(in) :: sendbuf
      type(*), dimension(..), intent(inout) :: recvbuf
      integer(c_int), intent(in) :: sendcount, sendtype, dest, sendtag
      integer(c_int), intent(in) :: recvcount, recvtype, source, recvtag, comm
      integer(c_int), intent(out) :: status(WAITIO_STATUS_SIZE)
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_MPI_Sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, &
        comm, status, ierr) bind(C, name="waitio_mpi_sendrecv_replace_cdesc")
      import
      type(*), dimension(..), intent(inout) :: buf
      integer(c_int), intent(in) :: count, datatype, dest, sendtag, source, recvtag, comm
      integer(c_int), intent(out) :: status(WAITIO_STATUS_SIZE)
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_MPI_Probe(source, tag, comm, status, ierr) bind(C, name="waitio_mpi_probe_")
      import
      integer(c_int), intent(in) :: source, tag, comm
      integer(c_int), intent(out) :: status(WAITIO_STATUS_SIZE)
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_MPI_Iprobe(source, tag, comm, flag, status, ierr) &
        bind(C, name="waitio_mpi_iprobe_")
      import
      integer(c_int), intent(in) :: source, tag, comm
      logical, intent(out) :: flag
      integer(c_int), intent(out) :: status(WAITIO_STATUS_SIZE)
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_MPI_Get_count(status, datatype, count, ierr) &
        bind(C, name="waitio_mpi_get_count_")
      import
      integer(c_int), intent(in) :: status(WAITIO_STATUS_SIZE), datatype
      integer(c_int), intent(out) :: count, ierr
    end subroutine
    subroutine WAITIO_MPI_Get_elements(status, datatype, count, ierr) &
        bind(C, name="waitio_mpi_get_elements_")
      import
      integer(c_int), intent(in) :: status(WAITIO_STATUS_SIZE), datatype
      integer(c_int), intent(out) :: count, ierr
    end subroutine
    subroutine WAITIO_MPI_Test(request, flag, status, ierr) bind(C, name="waitio_mpi_test_")
      import
      integer(c_int), intent(inout) :: request(WAITIO_REQUEST_SIZE)
      logical, intent(out) :: flag
      integer(c_int), intent(out) :: status(WAITIO_STATUS_SIZE)
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_MPI_Waitany(count, requests, index, status, ierr) &
        bind(C, name="waitio_mpi_waitany_")
      import
      integer(c_int), intent(in) :: count
      integer(c_int), intent(inout) :: requests(WAITIO_REQUEST_SIZE, *)
      integer(c_int), intent(out) :: index
      integer(c_int), intent(out) :: status(WAITIO_STATUS_SIZE)
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_MPI_Testany(count, requests, index, flag, status, ierr) &
        bind(C, name="waitio_mpi_testany_")
      import
      integer(c_int), intent(in) :: count
      integer(c_int), intent(inout) :: requests(WAITIO_REQUEST_SIZE, *)
      integer(c_int), intent(out) :: index
      logical, intent(out) :: flag
      integer(c_int), intent(out) :: status(WAITIO_STATUS_SIZE)
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_MPI_Testall(count, requests, flag, statuses, ierr) &
        bind(C, name="waitio_mpi_testall_")
      import
      integer(c_int), intent(in) :: count
      integer(c_int), intent(inout) :: requests(WAITIO_REQUEST_SIZE, *)
      logical, intent(out) :: flag
      integer(c_int), intent(out) :: statuses(WAITIO_STATUS_SIZE, *)
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_MPI_Waitsome(incount, requests, outcount, indices, statuses, ierr) &
        bind(C, name="waitio_mpi_waitsome_")
      import
      integer(c_int), intent(in) :: incount
      integer(c_int), intent(inout) :: requests(WAITIO_REQUEST_SIZE, *)
      integer(c_int), intent(out) :: outcount, indices(*)
      integer(c_int), intent(out) :: statuses(WAITIO_STATUS_SIZE, *)
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_MPI_Testsome(incount, requests, outcount, indices, statuses, ierr) &
        bind(C, name="waitio_mpi_testsome_")
      import
      integer(c_int), intent(in) :: incount
      integer(c_int), intent(inout) :: requests(WAITIO_REQUEST_SIZE, *)
      integer(c_int), intent(out) :: outcount, indices(*)
      integer(c_int), intent(out) :: statuses(WAITIO_STATUS_SIZE, *)
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_MPI_Comm_split(comm, color, key, newcomm, ierr) &
        bind(C, name="waitio_mpi_comm_split_")
      import
      integer(c_int), intent(in) :: comm, color, key
      integer(c_int), intent(out) :: newcomm, ierr
    end subroutine
    subroutine WAITIO_MPI_Comm_dup(comm, newcomm, ierr) bind(C, name="waitio_mpi_comm_dup_")
      import
      integer(c_int), intent(in) :: comm
      integer(c_int), intent(out) :: newcomm, ierr
    end subroutine
    subroutine WAITIO_MPI_Comm_create_group(comm, group, tag, newcomm, ierr) &
        bind(C, name="waitio_mpi_comm_create_group_")
      import
      integer(c_int), intent(in) :: comm, group, tag
      integer(c_int), intent(out) :: newcomm, ierr
    end subroutine
    subroutine WAITIO_MPI_Comm_free(comm, ierr) bind(C, name="waitio_mpi_comm_free_")
      import
      integer(c_int), intent(inout) :: comm
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_MPI_Comm_group(comm, group, ierr) bind(C, name="waitio_mpi_comm_group_")
      import
      integer(c_int), intent(in) :: comm
      integer(c_int), intent(out) :: group, ierr
    end subroutine
    subroutine WAITIO_MPI_Group_incl(group, n, ranks, newgroup, ierr) &
        bind(C, name="waitio_mpi_group_incl_")
      import
      integer(c_int), intent(in) :: group, n, ranks(*)
      integer(c_int), intent(out) :: newgroup, ierr
    end subroutine
    subroutine WAITIO_MPI_Group_free(group, ierr) bind(C, name="waitio_mpi_group_free_")
      import
      integer(c_int), intent(inout) :: group
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_MPI_Group_size(group, size, ierr) bind(C, name="waitio_mpi_group_size_")
      import
      integer(c_int), intent(in) :: group
      integer(c_int), intent(out) :: size, ierr
    end subroutine
    subroutine WAITIO_MPI_Group_rank(group, rank, ierr) bind(C, name="waitio_mpi_group_rank_")
      import
      integer(c_int), intent(in) :: group
      integer(c_int), intent(out) :: rank, ierr
    end subroutine
    subroutine WAITIO_MPI_Ibcast(buf, count, datatype, root, comm, request, ierr) &
        bind(C, name="waitio_mpi_ibcast_cdesc")
      import
      type(*), dimension(..), intent(inout), asynchronous :: buf
      integer(c_int), intent(in) :: count, datatype, root, comm
      integer(c_int), intent(out) :: request(WAITIO_REQUEST_SIZE)
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_MPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request, ierr) &
        bind(C, name="waitio_mpi_iallreduce_cdesc")
      import
      type(*), dimension(..), intent(in), asynchronous :: sendbuf
      type(*), dimension(..), intent(inout), asynchronous :: recvbuf
      integer(c_int), intent(in) :: count, datatype, op, comm
      integer(c_int), intent(out) :: request(WAITIO_REQUEST_SIZE)
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_MPI_Ibarrier(comm, request, ierr) bind(C, name="waitio_mpi_ibarrier_")
      import
      integer(c_int), intent(in) :: comm
      integer(c_int), intent(out) :: request(WAITIO_REQUEST_SIZE)
      integer(c_int), intent(out) :: ierr
    end subroutine
    ! ---- derived datatypes, user operations, v-collectives, scans (src/mpi/fortran_dtype.c;
    ! buffers through fortran_cdesc.c). Address-sized arguments are
    ! INTEGER(WAITIO_MPI_ADDRESS_KIND); handles default INTEGERs. Bound to the NAME_ aliases of
    ! the _f entry points, so that a program using the module may still call the NAME_f forms.
    subroutine WAITIO_MPI_Type_size(datatype, size, ierr) bind(C, name="waitio_mpi_type_size_")
      import
      integer(c_int), intent(in) :: datatype
      integer(c_int), intent(out) :: size, ierr
    end subroutine
    subroutine WAITIO_MPI_Type_contiguous(count, oldtype, newtype, ierr) &
        bind(C, name="waitio_mpi_type_contiguous_")
      import
      integer(c_int), intent(in) :: count, oldtype
      integer(c_int), intent(out) :: newtype, ierr
    end subroutine
    subroutine WAITIO_MPI_Type_vector(count, blocklength, stride, oldtype, newtype, ierr) &
        bind(C, name="waitio_mpi_type_vector_")
      import
      integer(c_int), intent(in) :: count, blocklength, stride, oldtype
      integer(c_int), intent(out) :: newtype, ierr
    end subroutine
    subroutine WAITIO_MPI_Type_create_hvector(count, blocklength, stride, oldtype, newtype, ierr) &
        bind(C, name="waitio_mpi_type_create_hvector_")
      import
      integer(c_int), intent(in) :: count, blocklength, oldtype
      integer(WAITIO_MPI_ADDRESS_KIND), intent(in) :: stride
      integer(c_int), intent(out) :: newtype, ierr
    end subroutine
    subroutine WAITIO_MPI_Type_indexed(count, blocklengths, displacements, oldtype, newtype, ierr) &
        bind(C, name="waitio_mpi_type_indexed_")
      import
      integer(c_int), intent(in) :: count, oldtype
      integer(c_int), intent(in) :: blocklengths(*), displacements(*)
      integer(c_int), intent(out) :: newtype, ierr
    end subroutine
    subroutine WAITIO_MPI_Type_create_struct(count, blocklengths, displacements, types, newtype, &
        ierr) bind(C, name="waitio_mpi_type_create_struct_")
      import
      integer(c_int), intent(in) :: count
      integer(c_int), intent(in) :: blocklengths(*), types(*)
      integer(WAITIO_MPI_ADDRESS_KIND), intent(in) :: displacements(*)
      integer(c_int), intent(out) :: newtype, ierr
    end subroutine
    subroutine WAITIO_MPI_Type_create_resized(oldtype, lb, extent, newtype, ierr) &
        bind(C, name="waitio_mpi_type_create_resized_")
      import
      integer(c_int), intent(in) :: oldtype
      integer(WAITIO_MPI_ADDRESS_KIND), intent(in) :: lb, extent
      integer(c_int), intent(out) :: newtype, ierr
    end subroutine
    subroutine WAITIO_MPI_Type_commit(datatype, ierr) bind(C, name="waitio_mpi_type_commit_")
      import
      integer(c_int), intent(inout) :: datatype
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_MPI_Type_free(datatype, ierr) bind(C, name="waitio_mpi_type_free_")
      import
      integer(c_int), intent(inout) :: datatype
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_MPI_Type_get_extent(datatype, lb, extent, ierr) &
        bind(C, name="waitio_mpi_type_get_extent_")
      import
      integer(c_int), intent(in) :: datatype
      integer(WAITIO_MPI_ADDRESS_KIND), intent(out) :: lb, extent
      integer(c_int), intent(out) :: ierr
    end subroutine
    ! The user function: SUBROUTINE F(INVEC, INOUTVEC, LEN, DATATYPE), MPI's Fortran form (not a
    ! BIND(C) interface: the entry point is the external waitio_mpi_op_create_).
    subroutine WAITIO_MPI_Op_create(user_fn, commute, op, ierr)
      external :: user_fn
      logical, intent(in) :: commute
      integer, intent(out) :: op, ierr
    end subroutine
    subroutine WAITIO_MPI_Op_free(op, ierr) bind(C, name="waitio_mpi_op_free_")
      import
      integer(c_int), intent(inout) :: op
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_MPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, &
        recvtype, comm, ierr) bind(C, name="waitio_mpi_allgatherv_cdesc")
      import
      type(*), dimension(..), intent(in) :: sendbuf
      type(*), dimension(..), intent(inout) :: recvbuf
      integer(c_int), intent(in) :: sendcount, sendtype, recvtype, comm
      integer(c_int), intent(in) :: recvcounts(*), displs(*)
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_MPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, &
        rdispls, recvtype, comm, ierr) bind(C, name="waitio_mpi_alltoallv_cdesc")
      import
      type(*), dimension(..), intent(in) :: sendbuf
      type(*), dimension(..), intent(inout) :: recvbuf
      integer(c_int), intent(in) :: sendcounts(*), sdispls(*), recvcounts(*), rdispls(*)
      integer(c_int), intent(in) :: sendtype, recvtype, comm
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_MPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, ierr) &
        bind(C, name="waitio_mpi_reduce_scatter_cdesc")
      import
      type(*), dimension(..), intent(in) :: sendbuf
      type(*), dimension(..), intent(inout) :: recvbuf
      integer(c_int), intent(in) :: recvcounts(*)
      integer(c_int), intent(in) :: datatype, op, comm
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_MPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, &
        ierr) bind(C, name="waitio_mpi_reduce_scatter_block_cdesc")
      import
      type(*), dimension(..), intent(in) :: sendbuf
      type(*), dimension(..), intent(inout) :: recvbuf
      integer(c_int), intent(in) :: recvcount, datatype, op, comm
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_MPI_Scan(sendbuf, recvbuf, count, datatype, op, comm, ierr) &
        bind(C, name="waitio_mpi_scan_cdesc")
      import
      type(*), dimension(..), intent(in) :: sendbuf
      type(*), dimension(..), intent(inout) :: recvbuf
      integer(c_int), intent(in) :: count, datatype, op, comm
      integer(c_int), intent(out) :: ierr
    end subroutine
    subroutine WAITIO_MPI_Exscan(sendbuf, recvbuf, count, datatype, op, comm, ierr) &
        bind(C, name="waitio_mpi_exscan_cdesc")
      import
      type(*), dimension(..), intent(in) :: sendbuf
      type(*), dimension(..), intent(inout) :: recvbuf
      integer(c_int), intent(in) :: count, datatype, op, comm
      integer(c_int), intent(out) :: ierr
    end subroutine
  end interface
end module waitio
