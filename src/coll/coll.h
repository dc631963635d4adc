/*
 * coll.h — collective operations on any group, built on the engine's point-to-point in the
 * group's collective context (never matching user messages). Counts are in elements of dtype;
 * displacements too. Every member must call the same collectives in the same order.
 */
#ifndef WIO_COLL_H
#define WIO_COLL_H

#include <stddef.h>
#include "core/engine.h"

#define WIO_IN_PLACE ((void *)1)

enum wio_coll_alg { WIO_COLL_AUTO = 0, WIO_COLL_LINEAR, WIO_COLL_TREE, WIO_COLL_RING };

int wio_coll_barrier(wio_engine *e, wio_group *g);
int wio_coll_bcast(wio_engine *e, wio_group *g, void *buf, size_t count, int dtype, int root);
int wio_coll_reduce(wio_engine *e, wio_group *g, const void *sbuf, void *rbuf, size_t count,
                    int dtype, int op, int root);
int wio_coll_allreduce(wio_engine *e, wio_group *g, const void *sbuf, void *rbuf, size_t count,
                       int dtype, int op);
int wio_coll_gatherv(wio_engine *e, wio_group *g, const void *sbuf, size_t scount, void *rbuf,
                     const int *rcounts, const int *displs, int dtype, int root);
int wio_coll_scatterv(wio_engine *e, wio_group *g, const void *sbuf, const int *scounts,
                      const int *displs, void *rbuf, size_t rcount, int dtype, int root);
int wio_coll_allgather(wio_engine *e, wio_group *g, const void *sbuf, void *rbuf, size_t count,
                       int dtype);
int wio_coll_alltoall(wio_engine *e, wio_group *g, const void *sbuf, void *rbuf, size_t count,
                      int dtype);
/* One collective step of its own: len bytes to group rank peer and as many from it (both call
 * it with each other as peer). */
int wio_coll_exchange(wio_engine *e, wio_group *g, int peer, const void *sbuf, void *rbuf, size_t len);
/* The algorithm chosen for the next collectives (WAITIO_COLL_ALG: auto|linear|tree|ring). */
int wio_coll_algorithm(void);
/* Whether wio_coll_allreduce takes its one-round algorithm (every rank sends to every other)
 * for `bytes` per rank: the hierarchical choice on one host defers to it. */
int wio_coll_allreduce_in_one_round(const wio_engine *e, const wio_group *g, size_t bytes);

#endif
