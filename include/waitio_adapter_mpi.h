/*
 * waitio_adapter_mpi.h — the per-MPI adapter (libwaitio_adapter_openmpi, _mpich, ...; SPEC §9).
 * Linking it is enough: waitio_init then uses MPI_COMM_WORLD as the PB's communicator if MPI is
 * initialised. Call waitio_mpi_adapter_init explicitly to use another communicator (one per PB,
 * holding exactly the PB's processes, before waitio_init).
 */
#ifndef WAITIO_ADAPTER_MPI_H
#define WAITIO_ADAPTER_MPI_H

#include <mpi.h>
#include "waitio_adapter.h"

#ifdef __cplusplus
extern "C" {
#endif

WAITIO_API int waitio_mpi_adapter_init(MPI_Comm pb_comm);
WAITIO_API const char *waitio_mpi_adapter_name(void);

#ifdef __cplusplus
}
#endif
#endif
