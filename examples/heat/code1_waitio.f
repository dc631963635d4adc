C     code1_waitio.f -- Code-1 of the heat-coupling example (seed 000, "WaitIO: Program
C     Conversion Example"), WaitIO version: a point heat source. Each step it sends (time,
C     source) to the heads of Code-2 and Code-3 over the PB-heads communicator, exactly as the
C     seed's listing does, but with time = step * Interval instead of wall-clock time so that
C     runs are reproducible and comparable with the file-coupled version (code1_file.f).
      implicit REAL*8(A-H,O-Z)
      real(kind=8) :: Interval
      integer :: dest
      integer(kind=4 ), dimension(:,:), save,allocatable :: sta1
      integer(kind=4 ), dimension(:,:), save,allocatable :: req1

      include 'mpif.h'
      include 'waitio_mpif.h'

      call MPI_Init(ierr)
      open (11,file='s1.dat',status='unknown')
      read (11,*) ITERmax, Period, Interval, Val
      write (*,'(a,i8)')    '##ITERmax ', ITERmax
      write (*,'(a,1pe16.6)') '##Period ', Period
      write (*,'(a,1pe16.6)') '##Interval', Interval
      write (*,'(a,1pe16.6//)') '##Val   ', Val
      close (11)

      allocate (sta1(WAITIO_STATUS_SIZE,2*2))
      allocate (req1(WAITIO_REQUEST_SIZE,2*2))
      call WAITIO_CREATE_UNIVERSE_PBHEAD (WAITIO_SOLVER_COMM, ierr)
      if(ierr.ne.0) goto 100

      open (12,file='s1.out',status='unknown')
      pi = 4.d0*datan(1.d0)
      coef= pi/180.d0
      nstep = nint(Period/Interval)

      do istep= 1, nstep
        do iter= 1, ITERmax
          a= 1.d0
        enddo
        ttt= dble(istep) * Interval
        Source= Val * dsin(ttt*coef)
        write (12,'(2(1pe25.17))') ttt, Source
        if (mod(istep,5).eq.0) write (*,'(a,i4,a,f6.2,a,f9.4,a)')
     &     'Code-1 step', istep, ': sends time', ttt, ', source',
     &     Source, ' to Code-2 and Code-3'
        do dest=1, 2
          call WAITIO_MPI_Isend (ttt, 1,
     &          WAITIO_MPI_DOUBLE_PRECISION,
     &          dest, 0, WAITIO_SOLVER_COMM, req1(1,2*(dest-1)+1), ierr)
          if(ierr.ne.0) goto 100
          call WAITIO_MPI_Isend (Source, 1,
     &          WAITIO_MPI_DOUBLE_PRECISION,
     &          dest, 0, WAITIO_SOLVER_COMM, req1(1,2*(dest-1)+2), ierr)
          if(ierr.ne.0) goto 100
        enddo
        call WAITIO_MPI_Waitall (4, req1, sta1, ierr)
        if(ierr.ne.0) goto 100
      enddo
      write (*,'(a,i6,a)') '##Code-1: sent ', nstep, ' steps'
 100  continue
      if (ierr.ne.0) write (*,'(a,i4)') '##Code-1: stopped, ierr=', ierr
      close (12)
      call WAITIO_FINALIZE (ierr)
      call MPI_Finalize(ierr)
      stop
      end
