/*
 * mpi_world.h — the MPMD world of the MPI adapter (adapters/mpi/mpi_world.c): in a one-job MPMD
 * launch MPI_COMM_WORLD means the program's own processes. Shared by mpi_world.c, the adapter
 * and the wrappers that tools/gen-mpi-world-wrappers.py generates for every MPI routine taking a
 * communicator. Nothing here is exported from the adapter library.
 */
#ifndef WAITIO_MPI_WORLD_H
#define WAITIO_MPI_WORLD_H

#include <dlfcn.h>
#include <mpi.h>
#include <stddef.h>
#include <string.h>

#define WIO_HIDDEN __attribute__((visibility("hidden")))

/* What the world handle stands for: MPI_COMM_WORLD itself, except in a one-job MPMD launch,
 * where it is the program's part of the world (an MPI_Comm_split by MPI_APPNUM). */
extern WIO_HIDDEN MPI_Comm wio_world_comm;
/* The Fortran handles of the world (-1, which no Fortran handle equals, while not translated)
 * and of the program's communicator. */
extern WIO_HIDDEN MPI_Fint wio_world_f, wio_app_f;

/* The one check every wrapper makes: a single compare of the handle. */
#define WIO_WORLD_C(c) do { if ((c) == MPI_COMM_WORLD) (c) = wio_world_comm; } while (0)
#define WIO_WORLD_F(c) do { if (*(c) == wio_world_f) (c) = &wio_app_f; } while (0)
/* A Fortran wrapper calls the next definition of its own symbol (MPI's Fortran library). */
#define WIO_NEXT(ptr, name) do { void *sym_ = dlsym(RTLD_NEXT, name); memcpy(&(ptr), &sym_, sizeof sym_); } while (0)

/* Keys of the attributes MPI predefines on MPI_COMM_WORLD only (MPI_TAG_UB, MPI_APPNUM, ...). */
WIO_HIDDEN int wio_world_predefined_key(int keyval);
/* After MPI is initialised (MPI_Init wrappers, the adapter's start-up, Python): builds the
 * program's communicator if this is a one-job MPMD launch and WAITIO_MPMD_WORLD is not 0. Runs
 * once; collective over the real world, so every process of the job must reach it first. */
WIO_HIDDEN void wio_world_start(void);
/* Generated: resolves the next definitions of the wrapped Fortran entry points. */
WIO_HIDDEN void wio_world_resolve_fortran(void);
/* Nonzero (and why) when the program runs another MPI than the adapter's (waitio_adapter_mpi.c). */
WIO_HIDDEN int wio_check_library(char *why, size_t cap);
/* Waits for req, sleeping between tests; timeout > 0: gives up after it (-1). */
WIO_HIDDEN int wio_wait_idle(MPI_Request *req, double timeout);

#endif
