/*
 * coll_tune.h — which path a collective on the universe takes (docs/tuning.md, "Collective
 * paths"): from the table a site wrote with waitio-tune when it has the instance's shape, else
 * from a cost model whose parameters are measured once, cheaply, on the machine the job runs on.
 * hier.c asks; coll_tune.c answers. Every process of the universe gets the same answer for the
 * same call (the inputs are agreed on), since they must all take the same path.
 */
#ifndef WAITIO_COLL_TUNE_H
#define WAITIO_COLL_TUNE_H
#include <stddef.h>
#include "core/engine.h"

/* The operations whose path is chosen per call. */
enum wio_coll_op { WIO_COLL_OP_BCAST, WIO_COLL_OP_REDUCE, WIO_COLL_OP_ALLREDUCE, WIO_COLL_OP_BARRIER,
                   WIO_COLL_OP_COUNT };

/* The paths (the values of WAITIO_COLL_PATH_* in waitio_mpi.h):
 *   FLAT       WaitIO's own algorithms between all processes (src/coll);
 *   HIER       each PB's MPI inside the PB, the PB heads over WaitIO;
 *   PAIRED     allreduce: the PB's MPI allreduce, then same-rank processes of the PBs combine
 *              by recursive doubling over WaitIO;
 *   SEGMENTED  allreduce: reduce-scatter inside each PB, same-rank processes exchange the
 *              pieces, allgather inside each PB;
 *   PIPELINE   bcast: the heads' WaitIO transfer in segments overlapping the PBs' broadcasts. */
enum wio_coll_path { WIO_COLL_PATH_FLAT_ = 0, WIO_COLL_PATH_HIER_ = 1, WIO_COLL_PATH_PAIRED_ = 2,
                     WIO_COLL_PATH_SEGMENTED_ = 3, WIO_COLL_PATH_PIPELINE_ = 4, WIO_COLL_PATH_COUNT_ };

/* The path for op on `bytes` per process, among the paths in `allowed` (a mask of 1 << path;
 * hier.c gives the ones possible for this group and this call; FLAT is always among them).
 * The first call on the whole instance (every process of the universe makes it) agrees the
 * ranking of the paths: process 0 reads the table or, without one that fits, all measure the
 * model's parameters; process 0 sends the ranking to the PB heads, which broadcast it in their PB. */
int wio_coll_tune_choose(wio_engine *e, wio_group *g, enum wio_coll_op op, size_t bytes, unsigned allowed);

/* ---- names, size classes, rankings ---- */

const char *wio_coll_op_name(int op);      /* "bcast", ...; NULL out of range */
const char *wio_coll_path_name(int path);  /* "flat", ...; NULL out of range */

/* Size class of a message: 0 for 0-1 bytes, else floor(log2(bytes)), at most CLASSES - 1. */
#define WIO_COLL_CLASSES 48
int wio_coll_size_class(size_t bytes);

/* For each operation and size class, every path, cheapest first: what all processes agree on.
 * from_table[op]: 1 when the table gave op's ranking, 0 when the model did. */
typedef struct wio_coll_order {
    unsigned char path[WIO_COLL_OP_COUNT][WIO_COLL_CLASSES][WIO_COLL_PATH_COUNT_];
    unsigned char from_table[WIO_COLL_OP_COUNT];
} wio_coll_order;

/* The first path of o's ranking for (op, bytes) in `allowed`; FLAT when none is. */
int wio_coll_order_pick(const wio_coll_order *o, enum wio_coll_op op, size_t bytes, unsigned allowed);

/* ---- the table a site writes with waitio-tune (docs/tuning.md, "Collective tables") ---- */

#define WIO_COLL_TABLE_LINE_MAX 255       /* characters per line, the newline excluded */
#define WIO_COLL_TABLE_FILE_MAX (64u << 10)
#define WIO_COLL_TABLE_SIZES 64           /* measured sizes per operation */
#define WIO_COLL_TABLE_MAX_BYTES (1ull << 40)

/* What a table was measured on and an instance runs as. ppb: processes in every PB (0: the
 * instance's PBs differ in size; no table matches it); one_host: every process on one host. */
typedef struct wio_coll_shape {
    int npb, ppb, one_host;
} wio_coll_shape;

typedef struct wio_coll_table {
    wio_coll_shape shape;
    char mpi[32];                         /* informational: the MPI it was measured with */
    int nsizes[WIO_COLL_OP_COUNT];        /* 0: the table says nothing about that operation */
    size_t bytes[WIO_COLL_OP_COUNT][WIO_COLL_TABLE_SIZES];               /* ascending */
    double usec[WIO_COLL_OP_COUNT][WIO_COLL_TABLE_SIZES][WIO_COLL_PATH_COUNT_]; /* 0: not measured */
} wio_coll_table;

/* Parses text[0..len) strictly; name is the file name for messages. 0, or -1 with
 * "NAME:LINE: what is wrong" in why[cap] (t is then undefined). */
int wio_coll_table_parse(const char *text, size_t len, const char *name, wio_coll_table *t, char *why,
                         size_t cap);
/* Reads and parses the file `path` (at most WIO_COLL_TABLE_FILE_MAX bytes). */
int wio_coll_table_load(const char *path, wio_coll_table *t, char *why, size_t cap);
/* Whether t was measured on shape s. */
int wio_coll_table_matches(const wio_coll_table *t, const wio_coll_shape *s);
/* Fills o's ranking of each operation the table measured (from_table[op] = 1): for each size
 * class, the nearest measured size (log scale), its measured paths fastest first, then the
 * unmeasured ones (never chosen while a measured one is allowed: FLAT always is). */
void wio_coll_table_order(const wio_coll_table *t, wio_coll_order *o);

/* ---- the model (docs/tuning.md, "The model") ---- */

/* What the first collective measures, in seconds: inside each PB through its MPI (per call, at
 * the head, of a few calls back to back closed by a barrier; the slowest PB's figure), and
 * between the heads over WaitIO (one way, half the best round trip, the slowest pair). */
enum { WIO_COLL_M_BARRIER, WIO_COLL_M_BCAST_S, WIO_COLL_M_BCAST_L, WIO_COLL_M_REDUCE_S, WIO_COLL_M_REDUCE_L,
       WIO_COLL_M_ALLREDUCE_S, WIO_COLL_M_ALLREDUCE_L, WIO_COLL_M_COUNT };
#define WIO_COLL_M_SMALL 8u           /* bytes of the small measurements */
#define WIO_COLL_M_LARGE (64u << 10)  /* and of the large ones */
typedef struct wio_coll_params {
    int npb, ppb, nprocs, one_host, oversubscribed; /* ppb: the largest PB */
    double pb[WIO_COLL_M_COUNT];
    double link_small, link_large;
    /* the flat bcast and reduce as they ran on the whole instance (8 B, 64 KiB each; have_flat
     * 0: not measured, lg N link hops instead) */
    double flat_bcast[2], flat_reduce[2];
    int have_flat;
} wio_coll_params;

/* The modelled time of op on `bytes` per process along path (seconds). */
double wio_coll_model_cost(const wio_coll_params *p, enum wio_coll_op op, int path, size_t bytes);
/* Fills o's ranking of every operation the table did not give (from_table[op] == 0). */
void wio_coll_model_order(const wio_coll_params *p, wio_coll_order *o);

#endif
