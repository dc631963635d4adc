/* mpi_vendor_probe.c — preprocessed (never compiled) by adapters/CMakeLists.txt with each MPI
 * compiler wrapper found: the lines left say which MPI the wrapper's mpi.h belongs to, which
 * names the adapter built with it (libwaitio_adapter_<vendor>). Derivatives of MPICH define
 * MPICH_VERSION too, so they are tested first. */
#include <mpi.h>
#if defined(I_MPI_VERSION)
waitio_mpi_vendor=intelmpi waitio_mpi_version=I_MPI_VERSION
#elif defined(MVAPICH2_VERSION)
waitio_mpi_vendor=mvapich waitio_mpi_version=MVAPICH2_VERSION
#elif defined(MVAPICH_VERSION)
waitio_mpi_vendor=mvapich waitio_mpi_version=MVAPICH_VERSION
#elif defined(CRAY_MPICH_VERSION)
waitio_mpi_vendor=craympich waitio_mpi_version=CRAY_MPICH_VERSION
#elif defined(MPICH_VERSION)
waitio_mpi_vendor=mpich waitio_mpi_version=MPICH_VERSION
#elif defined(OPEN_MPI)
waitio_mpi_vendor=openmpi waitio_mpi_version=OMPI_MAJOR_VERSION OMPI_MINOR_VERSION OMPI_RELEASE_VERSION
#elif defined(MSMPI_VER)
waitio_mpi_vendor=msmpi
#else
waitio_mpi_vendor=mpi
#endif
