C     code1_file.f -- Code-1 of the heat-coupling example, original file-coupled version: the
C     (time, source) series goes to s1.out, which Code-2 and Code-3 read (polling for lines).
C     Same computation as code1_waitio.f.
      implicit REAL*8(A-H,O-Z)
      real(kind=8) :: Interval
      include 'mpif.h'

      call MPI_Init(ierr)
      open (11,file='s1.dat',status='unknown')
      read (11,*) ITERmax, Period, Interval, Val
      close (11)
      open (12,file='s1.out.tmp',status='unknown')
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
        flush (12)
      enddo
      close (12)
C     publish the whole file at once so that readers never see a partial line
      call rename('s1.out.tmp', 's1.out')
      write (*,'(a,i6,a)') '##Code-1 (file): wrote ', nstep, ' steps'
      call MPI_Finalize(ierr)
      stop
      end
