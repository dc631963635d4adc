/*
 * idle.c — the plain-process (no MPI) build of mpi_idle.c (the late PB and the sleeper of
 * mp_idle_wait).
 */
#define TU_NO_MPI 1
#include "mpi_idle.c"
