/*
 * mpi.c — the WaitIO-MPI conversion layer (waitio_mpi.h): MPI argument lists mapped onto WaitIO
 * groups, requests and the collectives of src/coll. Counts are elements of a datatype; tags are
 * non-negative ints; statuses are int[WAITIO_STATUS_SIZE].
 */
#define WIO_LOG_SUBSYS WIO_SUB_MPI /* this file logs as "mpi" (WAITIO_LOG=mpi=LEVEL) */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "waitio_mpi.h"
#include "core/api_lock.h"
#include "coll/coll.h"
#include "coll/datatype.h"
#include "core/engine.h"
#include "core/settings.h"
#include "mpi/mpi_internal.h"
#include "mpi/dtype.h"
#include "mpi/devstage.h"

/* the library's group ids (waitio.h: from WAITIO_GID_RESERVED up) */
#define GID_UNIVERSE 0x7ffffff0
#define GID_PBHEADS 0x7ffffff1
#define DEFAULT_TIMEOUT 60

static wio_group *universe, *pbheads;
static wio_engine *groups_engine; /* the engine the cached groups belong to */

static int ensure_init(void)
{
    if (waitio_initialized()) {
        if (groups_engine != wio_engine_current) { /* finalized and initialised again */
            universe = pbheads = NULL;
            groups_engine = wio_engine_current;
        }
        return 0;
    }
    /* validated by the registry: a bad value is said and the default used */
    int timeout = (int)wio_setting_num("WAITIO_INIT_TIMEOUT", DEFAULT_TIMEOUT);
    int rc = waitio_init(timeout);
    if (!rc) {
        universe = pbheads = NULL;
        groups_engine = wio_engine_current;
    }
    return rc;
}

static int all_ranks(int pb, int rank) { (void)pb; (void)rank; return 1; }
static int rank_zero(int pb, int rank) { (void)pb; return rank == 0; }

static int make_universe(wio_group **slot, uint32_t gid, waitio_filter_func_t f, WAITIO_MPI_Comm *commp)
{
    if (!commp)
        return wio_fail(WAITIO_ERR_ARG, "NULL communicator pointer");
    int rc = ensure_init();
    if (rc)
        return rc;
    if (!*slot) {
        wio_engine *e = wio_engine_current;
        waitio_filter_func_t *funcs = malloc(sizeof *funcs * (size_t)e->npb);
        int *order = malloc(sizeof *order * (size_t)e->npb);
        if (!funcs || !order) {
            free(funcs);
            free(order);
            return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
        }
        for (int p = 0; p < e->npb; p++) {
            funcs[p] = f;
            order[p] = p + 1;
        }
        rc = wio_group_create_func(e, (int)gid, funcs, order, slot);
        free(funcs);
        free(order);
        if (rc)
            return rc;
    }
    *commp = (WAITIO_MPI_Comm)*slot;
    return 0;
}

int waitio_create_universe(WAITIO_MPI_Comm *commp)
{
    WIO_API_GUARD();
    return make_universe(&universe, GID_UNIVERSE, all_ranks, commp);
}

int waitio_create_universe_pbhead(WAITIO_MPI_Comm *commp)
{
    WIO_API_GUARD();
    return make_universe(&pbheads, GID_PBHEADS, rank_zero, commp);
}

int waitio_create_pbgroup(waitio_group_t *grpp, int pbid)
{
    WIO_API_GUARD();
    if (!grpp)
        return wio_fail(WAITIO_ERR_ARG, "NULL group pointer");
    int rc = ensure_init();
    if (rc)
        return rc;
    wio_engine *e = wio_engine_current;
    if (pbid < 0 || pbid >= e->npb)
        return wio_fail(WAITIO_ERR_ARG, "PB %d does not exist (the instance has %d PBs)", pbid, e->npb);
    wio_group *g = wio_group_find(e, (uint32_t)WAITIO_GID_PBGROUP(pbid));
    if (!g) {
        waitio_filter_func_t *funcs = calloc((size_t)e->npb, sizeof *funcs);
        int *order = calloc((size_t)e->npb, sizeof *order);
        rc = funcs && order ? 0 : wio_fail(WAITIO_ERR_NOMEM, "out of memory");
        if (!rc) {
            funcs[pbid] = all_ranks; /* the other PBs' entries stay NULL: no members */
            order[pbid] = 1;
            rc = wio_group_create_func(e, WAITIO_GID_PBGROUP(pbid), funcs, order, &g);
        }
        free(funcs);
        free(order);
        if (rc)
            return rc;
    }
    *grpp = (waitio_group_t)g;
    return 0;
}

wio_engine *wio_mpi_engine(void)
{
    if (!wio_engine_current)
        wio_fail(WAITIO_ERR_STATE, "WaitIO is not initialised");
    return wio_engine_current;
}

int waitio_mpi_comm_rank(WAITIO_MPI_Comm comm, int *rank) { return waitio_group_rank(comm, rank); }
int waitio_mpi_comm_size(WAITIO_MPI_Comm comm, int *size) { return waitio_group_size(comm, size); }

/* waitio_mpi_type_size: dtype.c, with the derived types */

double waitio_mpi_wtime(void) { return wio_now(); }

/* The data bytes of count elements (predefined or committed derived datatype). */
int wio_mpi_bytes(int count, WAITIO_MPI_Datatype datatype, size_t *bytes)
{
    const wio_mpi_dt *t;
    int rc = wio_mpi_dt_get(datatype, &t);
    if (rc)
        return rc;
    if (count < 0)
        return wio_fail(WAITIO_ERR_ARG, "negative count %d", count);
    *bytes = (size_t)count * t->size;
    return 0;
}

int wio_mpi_tag(int tag, int allow_any, unsigned long *out)
{
    if (allow_any && tag == WAITIO_MPI_ANY_TAG) {
        *out = WAITIO_ANY_TAG;
        return 0;
    }
    if (tag < 0)
        return wio_fail(WAITIO_ERR_ARG, "tag %d is negative", tag);
    *out = (unsigned long)tag;
    return 0;
}

/* A contiguous type goes straight from and into the caller's buffer; any other is packed into a
 * buffer of its own, which the request's record (dtype.c) frees — and for a receive unpacks —
 * when a wait or test of the layer sees it complete. */
static int p2p_post(int send, void *buf, int count, WAITIO_MPI_Datatype datatype, int peer,
                    unsigned long tag, WAITIO_MPI_Comm comm, WAITIO_MPI_Request *request)
{
    const wio_mpi_dt *t;
    int rc = wio_mpi_dt_get(datatype, &t);
    if (rc)
        return rc;
    if (count < 0)
        return wio_fail(WAITIO_ERR_ARG, "negative count %d", count);
    size_t bytes = (size_t)count * t->size;
    if (t->contig) {
        char *p = bytes ? (char *)buf + t->true_lb : buf;
        return send ? waitio_isend(comm, peer, p, bytes, tag, request)
                    : waitio_irecv(comm, peer, p, bytes, tag, request);
    }
    char *tmp = malloc(bytes ? bytes : 1);
    if (!tmp)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory packing %zu bytes", bytes);
    if (send)
        wio_mpi_dt_pack(t, buf, (size_t)count, tmp);
    rc = send ? waitio_isend(comm, peer, tmp, bytes, tag, request)
              : waitio_irecv(comm, peer, tmp, bytes, tag, request);
    if (!rc && (rc = wio_mpi_pending_add(request, tmp, buf, (size_t)count, t, !send)) != 0) {
        /* no record (out of memory): the buffer must outlive the transfer, so finish it here */
        if (!send)
            waitio_cancel(request);
        waitio_wait(request);
    }
    if (rc)
        free(tmp);
    return rc;
}

int waitio_mpi_isend(const void *buf, int count, WAITIO_MPI_Datatype datatype, int dest, int tag,
                     WAITIO_MPI_Comm comm, WAITIO_MPI_Request *request)
{
    WIO_API_GUARD();
    unsigned long t = 0;
    int rc = wio_mpi_tag(tag, 0, &t);
    return rc ? rc : p2p_post(1, (void *)buf, count, datatype, dest, t, comm, request);
}

int waitio_mpi_irecv(void *buf, int count, WAITIO_MPI_Datatype datatype, int source, int tag,
                     WAITIO_MPI_Comm comm, WAITIO_MPI_Request *request)
{
    WIO_API_GUARD();
    unsigned long t = 0;
    int rc = wio_mpi_tag(tag, 1, &t);
    return rc ? rc : p2p_post(0, buf, count, datatype, source, t, comm, request);
}

int waitio_mpi_send(const void *buf, int count, WAITIO_MPI_Datatype datatype, int dest, int tag,
                    WAITIO_MPI_Comm comm)
{
    WAITIO_MPI_Request r;
    int rc = waitio_mpi_isend(buf, count, datatype, dest, tag, comm, &r);
    return rc ? rc : waitio_mpi_wait(&r, WAITIO_MPI_STATUS_IGNORE);
}

int waitio_mpi_recv(void *buf, int count, WAITIO_MPI_Datatype datatype, int source, int tag,
                    WAITIO_MPI_Comm comm)
{
    WAITIO_MPI_Request r;
    int rc = waitio_mpi_irecv(buf, count, datatype, source, tag, comm, &r);
    return rc ? rc : waitio_mpi_wait(&r, WAITIO_MPI_STATUS_IGNORE);
}

void wio_mpi_fill_status(const waitio_req_t *r, int *status)
{
    if (!status)
        return;
    status[WAITIO_MPI_SOURCE] = r->status.source;
    status[WAITIO_MPI_TAG] = r->status.tag == WAITIO_ANY_TAG ? -1 : (int)r->status.tag;
    status[WAITIO_MPI_ERROR] = r->status.error;
    status[WAITIO_MPI_COUNT] = r->status.len > 0x7fffffff ? 0x7fffffff : (int)r->status.len;
}

int waitio_mpi_wait(WAITIO_MPI_Request *request, int *status)
{
    if (wio_mpi_icoll_owns(request)) /* a non-blocking collective (icoll.c) */
        return wio_mpi_icoll_wait(request, status);
    WIO_API_GUARD();
    int rc = waitio_wait(request);
    wio_mpi_fill_status(request, status);
    return wio_mpi_req_done(request, rc); /* a packed receive is unpacked (dtype.c) */
}

int waitio_mpi_test(WAITIO_MPI_Request *request, int *flag, int *status)
{
    if (wio_mpi_icoll_owns(request)) /* a non-blocking collective (icoll.c) */
        return wio_mpi_icoll_test(request, flag, status);
    WIO_API_GUARD();
    int rc = waitio_test(request, flag);
    if (flag && *flag) {
        wio_mpi_fill_status(request, status);
        rc = wio_mpi_req_done(request, rc); /* a packed receive is unpacked (dtype.c) */
    }
    return rc;
}

int waitio_mpi_waitall(int count, WAITIO_MPI_Request *array_of_requests, int *array_of_statuses)
{
    wio_mpi_icoll_waitall(count, array_of_requests); /* non-blocking collectives (icoll.c) */
    WIO_API_GUARD();
    int rc = waitio_waitall(count, array_of_requests);
    for (int i = 0; i < count; i++) {
        if (array_of_statuses)
            wio_mpi_fill_status(&array_of_requests[i], array_of_statuses + WAITIO_STATUS_SIZE * i);
        rc = wio_mpi_req_done(&array_of_requests[i], rc); /* packed receives (dtype.c) */
    }
    return rc;
}

/* ---- collectives ---- */

static int count_ok(int count)
{
    return count >= 0 ? 0 : wio_fail(WAITIO_ERR_ARG, "negative count %d", count);
}

int waitio_mpi_barrier(WAITIO_MPI_Comm comm)
{
    WIO_API_GUARD();
    wio_engine *e = wio_mpi_engine();
    return e ? wio_mpi_hier_barrier(e, comm) : WAITIO_ERR_STATE;
}

/* ---- device (GPU) buffers in collectives (docs/transports.md, "GPU memory") ----
 * A collective whose buffer is device memory runs on host copies (devstage.c: inputs copied in
 * before, outputs copied back after; reductions run on the host). ONE(count, type) is the
 * layout of one block; BLOCKS(n, count, type) of n equal blocks back to back; VBLOCKS that of
 * the v-variants' counts and displacements. */
#define ONE(c, t) (&(wio_mpi_layout){.n = 1, .count = (c), .dtype = (t)})
#define BLOCKS(nb, c, t) (&(wio_mpi_layout){.n = (nb), .count = (c), .dtype = (t)})
#define VBLOCKS(nb, cs, ds, t) (&(wio_mpi_layout){.n = (nb), .counts = (cs), .displs = (ds), .dtype = (t)})
#define OUT_FLAGS(sendbuf) wio_mpi_dev_out_flags(sendbuf)

static int comm_size(WAITIO_MPI_Comm comm) { return comm ? ((wio_group *)comm)->size : 0; }
static int comm_rank(WAITIO_MPI_Comm comm) { return comm ? ((wio_group *)comm)->my_rank : -1; }

int waitio_mpi_bcast(void *buffer, int count, WAITIO_MPI_Datatype datatype, int root,
                     WAITIO_MPI_Comm comm)
{
    WIO_API_GUARD();
    wio_engine *e = wio_mpi_engine();
    int rc = e ? count_ok(count) : WAITIO_ERR_STATE;
    wio_mpi_dev d;
    void *buf;
    int flags = comm_rank(comm) == root ? WIO_MPI_DEV_IN : WIO_MPI_DEV_OUT;
    if (rc || (rc = wio_mpi_dev_open1(&d, buffer, count, datatype, flags, &buf)))
        return rc;
    rc = wio_mpi_v_bcast(e, comm, buf, count, datatype, root); /* vcoll.c */
    return wio_mpi_dev_close(&d, rc);
}

int waitio_mpi_reduce(const void *sendbuf, void *recvbuf, int count, WAITIO_MPI_Datatype datatype,
                      WAITIO_MPI_Op op, int root, WAITIO_MPI_Comm comm)
{
    WIO_API_GUARD();
    wio_engine *e = wio_mpi_engine();
    int rc = e ? count_ok(count) : WAITIO_ERR_STATE;
    int at_root = comm_rank(comm) == root;
    wio_mpi_dev2 d;
    void *sb, *rb;
    if (rc || (rc = wio_mpi_dev_open2(&d, sendbuf, ONE(count, datatype), &sb, recvbuf,
                                      at_root ? ONE(count, datatype) : NULL, OUT_FLAGS(sendbuf), &rb)))
        return rc;
    rc = wio_mpi_v_reduce(e, comm, sb, rb, count, datatype, op, root);
    return wio_mpi_dev_close2(&d, rc);
}

int waitio_mpi_allreduce(const void *sendbuf, void *recvbuf, int count,
                         WAITIO_MPI_Datatype datatype, WAITIO_MPI_Op op, WAITIO_MPI_Comm comm)
{
    WIO_API_GUARD();
    wio_engine *e = wio_mpi_engine();
    int rc = e ? count_ok(count) : WAITIO_ERR_STATE;
    wio_mpi_dev2 d;
    void *sb, *rb;
    if (rc || (rc = wio_mpi_dev_open2(&d, sendbuf, ONE(count, datatype), &sb, recvbuf,
                                      ONE(count, datatype), OUT_FLAGS(sendbuf), &rb)))
        return rc;
    rc = wio_mpi_v_allreduce(e, comm, sb, rb, count, datatype, op);
    return wio_mpi_dev_close2(&d, rc);
}

/* The original's gather (and allgather below) take one count and one datatype for both sides:
 * the short lists its users call by the lower-case names; MPI's full lists are WAITIO_MPI_Gather
 * and WAITIO_MPI_Allgather (docs/mpi-layer.md, "The original's signatures"). */
int waitio_mpi_gather(const void *sendbuf, void *recvbuf, int count, WAITIO_MPI_Datatype datatype,
                      int root, WAITIO_MPI_Comm comm)
{
    return WAITIO_MPI_Gather(sendbuf, count, datatype, recvbuf, count, datatype, root, comm);
}

int waitio_mpi_allgather(const void *sendbuf, void *recvbuf, int count,
                         WAITIO_MPI_Datatype datatype, WAITIO_MPI_Comm comm)
{
    return WAITIO_MPI_Allgather(sendbuf, count, datatype, recvbuf, count, datatype, comm);
}

int WAITIO_MPI_Gather(const void *sendbuf, int sendcount, WAITIO_MPI_Datatype sendtype,
                      void *recvbuf, int recvcount, WAITIO_MPI_Datatype recvtype, int root,
                      WAITIO_MPI_Comm comm)
{
    WIO_API_GUARD();
    wio_engine *e = wio_mpi_engine();
    if (!e)
        return WAITIO_ERR_STATE; /* datatype-aware, IN_PLACE at the root: vcoll.c */
    int at_root = comm_rank(comm) == root, rc;
    wio_mpi_dev2 d;
    void *sb, *rb;
    if ((rc = wio_mpi_dev_open2(&d, sendbuf, ONE(sendcount, sendtype), &sb, recvbuf,
                                at_root ? BLOCKS(comm_size(comm), recvcount, recvtype) : NULL,
                                OUT_FLAGS(sendbuf), &rb)))
        return rc;
    rc = wio_mpi_v_gatherv(e, comm, sb, sendcount, sendtype, rb, recvcount, NULL, NULL, recvtype,
                           root);
    return wio_mpi_dev_close2(&d, rc);
}

int waitio_mpi_gatherv(const void *sendbuf, int sendcount, WAITIO_MPI_Datatype sendtype,
                       void *recvbuf, const int recvcounts[], const int displs[],
                       WAITIO_MPI_Datatype recvtype, int root, WAITIO_MPI_Comm comm)
{
    WIO_API_GUARD();
    wio_engine *e = wio_mpi_engine();
    if (!e)
        return WAITIO_ERR_STATE;
    int at_root = comm_rank(comm) == root, rc;
    wio_mpi_dev2 d;
    void *sb, *rb;
    if ((rc = wio_mpi_dev_open2(&d, sendbuf, ONE(sendcount, sendtype), &sb, recvbuf,
                                at_root ? VBLOCKS(comm_size(comm), recvcounts, displs, recvtype) : NULL,
                                OUT_FLAGS(sendbuf), &rb)))
        return rc;
    rc = wio_mpi_v_gatherv(e, comm, sb, sendcount, sendtype, rb, 0, recvcounts, displs, recvtype,
                           root);
    return wio_mpi_dev_close2(&d, rc);
}

int waitio_mpi_scatter(const void *sendbuf, int sendcount, WAITIO_MPI_Datatype sendtype,
                       void *recvbuf, int recvcount, WAITIO_MPI_Datatype recvtype, int root,
                       WAITIO_MPI_Comm comm)
{
    WIO_API_GUARD();
    wio_engine *e = wio_mpi_engine();
    if (!e)
        return WAITIO_ERR_STATE;
    int at_root = comm_rank(comm) == root, rc;
    wio_mpi_dev2 d;
    void *sb, *rb;
    if ((rc = wio_mpi_dev_open2(&d, sendbuf, at_root ? BLOCKS(comm_size(comm), sendcount, sendtype) : NULL,
                                &sb, recvbuf, ONE(recvcount, recvtype), WIO_MPI_DEV_OUT, &rb)))
        return rc;
    rc = wio_mpi_v_scatterv(e, comm, sb, sendcount, NULL, NULL, sendtype, rb, recvcount, recvtype,
                            root);
    return wio_mpi_dev_close2(&d, rc);
}

int waitio_mpi_scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                        WAITIO_MPI_Datatype sendtype, void *recvbuf, int recvcount,
                        WAITIO_MPI_Datatype recvtype, int root, WAITIO_MPI_Comm comm)
{
    WIO_API_GUARD();
    wio_engine *e = wio_mpi_engine();
    if (!e)
        return WAITIO_ERR_STATE;
    if (!sendcounts != !displs)
        return wio_fail(WAITIO_ERR_ARG, "scatterv: counts without displacements");
    int at_root = comm_rank(comm) == root, rc;
    wio_mpi_dev2 d;
    void *sb, *rb;
    if ((rc = wio_mpi_dev_open2(&d, sendbuf,
                                at_root ? VBLOCKS(comm_size(comm), sendcounts, displs, sendtype) : NULL,
                                &sb, recvbuf, ONE(recvcount, recvtype), WIO_MPI_DEV_OUT, &rb)))
        return rc;
    rc = wio_mpi_v_scatterv(e, comm, sb, 0, sendcounts, displs, sendtype, rb, recvcount, recvtype,
                            root);
    return wio_mpi_dev_close2(&d, rc);
}

int WAITIO_MPI_Allgather(const void *sendbuf, int sendcount, WAITIO_MPI_Datatype sendtype,
                         void *recvbuf, int recvcount, WAITIO_MPI_Datatype recvtype,
                         WAITIO_MPI_Comm comm)
{
    WIO_API_GUARD();
    wio_engine *e = wio_mpi_engine();
    if (!e)
        return WAITIO_ERR_STATE;
    int rc;
    wio_mpi_dev2 d;
    void *sb, *rb;
    if ((rc = wio_mpi_dev_open2(&d, sendbuf, ONE(sendcount, sendtype), &sb, recvbuf,
                                BLOCKS(comm_size(comm), recvcount, recvtype), OUT_FLAGS(sendbuf), &rb)))
        return rc;
    rc = wio_mpi_v_allgatherv(e, comm, sb, sendcount, sendtype, rb, recvcount, NULL, NULL, recvtype);
    return wio_mpi_dev_close2(&d, rc);
}

int waitio_mpi_alltoall(const void *sendbuf, int sendcount, WAITIO_MPI_Datatype sendtype,
                        void *recvbuf, int recvcount, WAITIO_MPI_Datatype recvtype,
                        WAITIO_MPI_Comm comm)
{
    WIO_API_GUARD();
    wio_engine *e = wio_mpi_engine();
    if (!e)
        return WAITIO_ERR_STATE;
    int rc, n = comm_size(comm);
    wio_mpi_dev2 d;
    void *sb, *rb;
    if ((rc = wio_mpi_dev_open2(&d, sendbuf, BLOCKS(n, sendcount, sendtype), &sb, recvbuf,
                                BLOCKS(n, recvcount, recvtype), OUT_FLAGS(sendbuf), &rb)))
        return rc;
    rc = wio_mpi_v_alltoallv(e, comm, sb, sendcount, NULL, NULL, sendtype, rb, recvcount, NULL, NULL,
                             recvtype);
    return wio_mpi_dev_close2(&d, rc);
}
