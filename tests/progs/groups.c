/*
 * groups.c — the plain-process (no MPI) build of mpi_groups.c, used as the third PB of
 * mp_groups; its PB-local rank/size come from WAITIO_PB_RANK/WAITIO_PB_SIZE (default 0/1).
 */
#define TU_NO_MPI 1
#include "mpi_groups.c"
