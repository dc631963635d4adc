C     fortran_exchange.f -- fixed-form Fortran test: ring exchange and collectives over the
C     universe through the conversion layer, with implicit REAL*8 as old codes have it.
C     The communicator variable is undeclared (implicitly REAL*8): the library reads and
C     writes it as a 4-byte INTEGER handle.
      implicit REAL*8(A-H,O-Z)
      include 'mpif.h'
      include 'waitio_mpif.h'
      integer ierr, myrank, nprocs, ipb, npb, iright, ileft, i, ibad
      integer(kind=4) ireq(WAITIO_REQUEST_SIZE,2)
      integer(kind=4) ista(WAITIO_STATUS_SIZE,2)
      real*8 sbuf(100), rbuf(100), tot(100)
      integer isum, iall(64)

      call MPI_Init(ierr)
      call WAITIO_CREATE_UNIVERSE(WAITIO_UNIV_COMM, ierr)
      if (ierr.ne.0) stop 1
      call WAITIO_GROUP_RANK(WAITIO_UNIV_COMM, myrank, ierr)
      call WAITIO_GROUP_SIZE(WAITIO_UNIV_COMM, nprocs, ierr)
      call WAITIO_PB_RANK(ipb, ierr)
      call WAITIO_PB_SIZE(npb, ierr)
      iright = mod(myrank + 1, nprocs)
      ileft = mod(myrank + nprocs - 1, nprocs)
      ibad = 0
      do i = 1, 100
        sbuf(i) = dble(myrank * 1000 + i)
      enddo
      call WAITIO_MPI_Irecv(rbuf, 100, WAITIO_MPI_DOUBLE_PRECISION,
     &     ileft, 11, WAITIO_UNIV_COMM, ireq(1,1), ierr)
      if (ierr.ne.0) goto 100
      call WAITIO_MPI_Isend(sbuf, 100, WAITIO_MPI_DOUBLE_PRECISION,
     &     iright, 11, WAITIO_UNIV_COMM, ireq(1,2), ierr)
      if (ierr.ne.0) goto 100
      call WAITIO_MPI_Waitall(2, ireq, ista, ierr)
      if (ierr.ne.0) goto 100
      do i = 1, 100
        if (rbuf(i).ne.dble(ileft * 1000 + i)) ibad = ibad + 1
      enddo
      if (ista(WAITIO_MPI_SOURCE,1).ne.ileft) ibad = ibad + 1
      if (ista(WAITIO_MPI_COUNT,1).ne.800) ibad = ibad + 1
      call WAITIO_MPI_Allreduce(sbuf, tot, 100,
     &     WAITIO_MPI_DOUBLE_PRECISION, WAITIO_MPI_SUM,
     &     WAITIO_UNIV_COMM, ierr)
      if (ierr.ne.0) goto 100
      do i = 1, 100
        x = dble(1000 * nprocs * (nprocs - 1) / 2 + nprocs * i)
        if (tot(i).ne.x) ibad = ibad + 1
      enddo
      isum = 0
      call WAITIO_MPI_Reduce(myrank, isum, 1, WAITIO_MPI_INTEGER,
     &     WAITIO_MPI_SUM, 0, WAITIO_UNIV_COMM, ierr)
      if (myrank.eq.0 .and. isum.ne.nprocs*(nprocs-1)/2) ibad = ibad+1
      isum = 0
      if (myrank.eq.nprocs-1) isum = 4242
      call WAITIO_MPI_Bcast(isum, 1, WAITIO_MPI_INTEGER, nprocs-1,
     &     WAITIO_UNIV_COMM, ierr)
      if (isum.ne.4242) ibad = ibad + 1
      call WAITIO_MPI_Allgather(myrank, 1, WAITIO_MPI_INTEGER, iall, 1,
     &     WAITIO_MPI_INTEGER, WAITIO_UNIV_COMM, ierr)
      do i = 1, nprocs
        if (iall(i).ne.i-1) ibad = ibad + 1
      enddo
      call WAITIO_MPI_Barrier(WAITIO_UNIV_COMM, ierr)
      if (ierr.ne.0) goto 100
      call WAITIO_FINALIZE(ierr)
      if (myrank.eq.0) write(*,'(a,i0,a,i0,a,i0)')
     &   'fortran_exchange (fixed form): ', nprocs,
     &   ' processes in ', npb, ' PBs, errors ', ibad
      call MPI_Finalize(ierr)
      if (ibad.ne.0) stop 7
      stop
 100  continue
      write(*,*) 'fortran_exchange: WaitIO error', ierr
      call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
      end
