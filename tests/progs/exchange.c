/*
 * exchange.c — the plain-process (no MPI) build of mpi_exchange.c: the same phases and checks;
 * the PB-local rank and size come from WAITIO_PB_RANK / WAITIO_PB_SIZE (or another launcher's
 * variables). Used by mp_manual, where PBs are started by hand without waitiorun.
 */
#define TU_NO_MPI 1
#include "mpi_exchange.c"
