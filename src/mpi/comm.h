/* comm.h — the conversion layer's own communicators (comm.c) and their hierarchical path
 * (comm_hier.c). */
#ifndef WIO_MPI_COMM_H
#define WIO_MPI_COMM_H

#include "core/engine.h"

typedef struct wio_mpi_comm {
    struct wio_mpi_comm *next;
    wio_group *g;
    uint32_t heads_gid;      /* the id of its PB heads' group */
    /* The hierarchical path (comm_hier.c): the members of each PB form a part, in order of
     * first appearance in the communicator; a part's first member is its head. */
    int hier;                /* every member agreed its part has an MPI communicator */
    void *sub;               /* the adapter's communicator of this process's part */
    wio_group *heads;        /* the parts' heads, part by part */
    int *part_of;            /* group rank -> its part (= its head's rank in heads) */
    int *sub_rank_of;        /* group rank -> its rank in its part */
} wio_mpi_comm;

/* The record of a communicator made by split/dup/create_group, or NULL. */
wio_mpi_comm *wio_mpi_comm_of(const wio_group *g);
/* At creation, by every member: the parts, the heads' group, the PB part's MPI communicator,
 * and the members' agreement on whether all of that exists (c->hier). */
int wio_mpi_comm_hier_setup(wio_engine *e, wio_mpi_comm *c);
/* At Comm_free: frees what setup made. */
void wio_mpi_comm_hier_teardown(wio_engine *e, wio_mpi_comm *c);

#endif
