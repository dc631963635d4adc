/*
 * fortran_ext.c — Fortran bindings of p2p_ext.c, completion.c, comm.c and icoll.c, in the form
 * of fortran.c: one C function NAME_f per routine (declared in waitio_mpi.h), exported also as
 * NAME_ and NAME_f_ (WIO_FORTRAN_ALIASES), every argument by reference.
 *
 * MPI's Fortran conventions where they differ from C: indices of Waitany/Testany/Waitsome/
 * Testsome are 1-based (WAITIO_MPI_UNDEFINED stays -1); flags are default LOGICALs (written as
 * the 4-byte 1 or 0 that gfortran's .TRUE./.FALSE. are); groups are default INTEGER handles like
 * communicators (this file's table); comm_free and group_free set the handle to 0.
 * Request arrays are INTEGER req(WAITIO_REQUEST_SIZE, n), copied into aligned C requests and
 * back, since the caller's INTEGER(4) arrays need not be 8-byte aligned.
 */
#define WIO_LOG_SUBSYS WIO_SUB_MPI /* this file logs as "mpi" (WAITIO_LOG=mpi=LEVEL) */
#include <stdlib.h>
#include <string.h>
#include "mpi/dtype.h" /* wio_fortran_buf: Fortran's WAITIO_MPI_IN_PLACE */
#include "mpi/mpi_internal.h"

#define WIO_FORTRAN_ALIASES(name)                                                               \
    WAITIO_API extern __typeof__(name##_f) name##_ __attribute__((alias(#name "_f")));       \
    WAITIO_API extern __typeof__(name##_f) name##_f_ __attribute__((alias(#name "_f")));

#define FREQ_INTS WAITIO_REQUEST_SIZE
#define MAX_GROUP_HANDLES 1024

/* ---- group handles (1-based; 0 is WAITIO_MPI_GROUP_NULL) ---- */

static WAITIO_MPI_Group group_handles[MAX_GROUP_HANDLES];

static int group_handle_new(WAITIO_MPI_Group g, int *handle)
{
    for (int i = 0; i < MAX_GROUP_HANDLES; i++)
        if (!group_handles[i]) {
            group_handles[i] = g;
            int h = i + 1;
            memcpy(handle, &h, sizeof h);
            return 0;
        }
    return wio_fail(WAITIO_ERR_NOMEM, "more than %d Fortran groups", MAX_GROUP_HANDLES);
}

static WAITIO_MPI_Group *group_slot(const int *handle)
{
    int h;
    memcpy(&h, handle, sizeof h);
    return h >= 1 && h <= MAX_GROUP_HANDLES && group_handles[h - 1] ? &group_handles[h - 1] : NULL;
}

static WAITIO_MPI_Group group_of(const int *handle)
{
    WAITIO_MPI_Group *s = group_slot(handle);
    return s ? *s : WAITIO_MPI_GROUP_NULL;
}

/* ---- requests ---- */

/* count requests from the caller's array (NULL with *ierr set on failure; count 0: not NULL) */
static waitio_req_t *reqs_load(const int *freqs, int count, int *ierr)
{
    if (count < 0) {
        *ierr = wio_fail(WAITIO_ERR_ARG, "negative request count %d", count);
        return NULL;
    }
    waitio_req_t *r = malloc(sizeof *r * (size_t)(count ? count : 1));
    if (!r) {
        *ierr = wio_fail(WAITIO_ERR_NOMEM, "out of memory");
        return NULL;
    }
    for (int i = 0; i < count; i++)
        memcpy(&r[i], freqs + FREQ_INTS * i, sizeof r[i]);
    return r;
}

static void reqs_store(int *freqs, waitio_req_t *r, int count)
{
    for (int i = 0; i < count; i++)
        memcpy(freqs + FREQ_INTS * i, &r[i], sizeof r[i]);
    free(r);
}

static int one_based(int index) { return index == WAITIO_MPI_UNDEFINED ? index : index + 1; }

static void set_logical(int *flag, int value)
{
    int v = value != 0;
    memcpy(flag, &v, sizeof v);
}

/* ---- point-to-point ---- */

void waitio_mpi_sendrecv_f(const void *sbuf, const int *scount, const int *stype, const int *dest,
                           const int *stag, void *rbuf, const int *rcount, const int *rtype,
                           const int *source, const int *rtag, const int *comm, int *status,
                           int *ierr)
{
    *ierr = waitio_mpi_sendrecv(sbuf, *scount, *stype, *dest, *stag, rbuf, *rcount, *rtype,
                                *source, *rtag, wio_fortran_comm(comm), status);
}
WIO_FORTRAN_ALIASES(waitio_mpi_sendrecv)

void waitio_mpi_sendrecv_replace_f(void *buf, const int *count, const int *datatype,
                                   const int *dest, const int *stag, const int *source,
                                   const int *rtag, const int *comm, int *status, int *ierr)
{
    *ierr = waitio_mpi_sendrecv_replace(buf, *count, *datatype, *dest, *stag, *source, *rtag,
                                        wio_fortran_comm(comm), status);
}
WIO_FORTRAN_ALIASES(waitio_mpi_sendrecv_replace)

void waitio_mpi_probe_f(const int *source, const int *tag, const int *comm, int *status, int *ierr)
{
    *ierr = waitio_mpi_probe(*source, *tag, wio_fortran_comm(comm), status);
}
WIO_FORTRAN_ALIASES(waitio_mpi_probe)

void waitio_mpi_iprobe_f(const int *source, const int *tag, const int *comm, int *flag,
                         int *status, int *ierr)
{
    int f = 0;
    *ierr = waitio_mpi_iprobe(*source, *tag, wio_fortran_comm(comm), &f, status);
    set_logical(flag, f);
}
WIO_FORTRAN_ALIASES(waitio_mpi_iprobe)

void waitio_mpi_get_count_f(const int *status, const int *datatype, int *count, int *ierr)
{
    *ierr = waitio_mpi_get_count(status, *datatype, count);
}
WIO_FORTRAN_ALIASES(waitio_mpi_get_count)

void waitio_mpi_get_elements_f(const int *status, const int *datatype, int *count, int *ierr)
{
    *ierr = waitio_mpi_get_elements(status, *datatype, count);
}
WIO_FORTRAN_ALIASES(waitio_mpi_get_elements)

/* ---- completion ---- */

void waitio_mpi_test_f(int *req, int *flag, int *status, int *ierr)
{
    waitio_req_t *r = reqs_load(req, 1, ierr);
    int f = 0;
    if (!r)
        return;
    *ierr = waitio_mpi_test(r, &f, status);
    reqs_store(req, r, 1);
    set_logical(flag, f);
}
WIO_FORTRAN_ALIASES(waitio_mpi_test)

void waitio_mpi_waitany_f(const int *count, int *reqs, int *index, int *status, int *ierr)
{
    waitio_req_t *r = reqs_load(reqs, *count, ierr);
    int i = WAITIO_MPI_UNDEFINED;
    if (!r)
        return;
    *ierr = waitio_mpi_waitany(*count, r, &i, status);
    reqs_store(reqs, r, *count);
    *index = one_based(i);
}
WIO_FORTRAN_ALIASES(waitio_mpi_waitany)

void waitio_mpi_testany_f(const int *count, int *reqs, int *index, int *flag, int *status,
                          int *ierr)
{
    waitio_req_t *r = reqs_load(reqs, *count, ierr);
    int i = WAITIO_MPI_UNDEFINED, f = 0;
    if (!r)
        return;
    *ierr = waitio_mpi_testany(*count, r, &i, &f, status);
    reqs_store(reqs, r, *count);
    *index = one_based(i);
    set_logical(flag, f);
}
WIO_FORTRAN_ALIASES(waitio_mpi_testany)

void waitio_mpi_testall_f(const int *count, int *reqs, int *flag, int *statuses, int *ierr)
{
    waitio_req_t *r = reqs_load(reqs, *count, ierr);
    int f = 0;
    if (!r)
        return;
    *ierr = waitio_mpi_testall(*count, r, &f, statuses);
    reqs_store(reqs, r, *count);
    set_logical(flag, f);
}
WIO_FORTRAN_ALIASES(waitio_mpi_testall)

static void some_f(int (*fn)(int, WAITIO_MPI_Request *, int *, int *, int *), const int *incount,
                   int *reqs, int *outcount, int *indices, int *statuses, int *ierr)
{
    waitio_req_t *r = reqs_load(reqs, *incount, ierr);
    if (!r)
        return;
    *ierr = fn(*incount, r, outcount, indices, statuses);
    reqs_store(reqs, r, *incount);
    for (int k = 0; *outcount != WAITIO_MPI_UNDEFINED && k < *outcount; k++)
        indices[k] += 1;
}

void waitio_mpi_waitsome_f(const int *incount, int *reqs, int *outcount, int *indices,
                           int *statuses, int *ierr)
{
    some_f(waitio_mpi_waitsome, incount, reqs, outcount, indices, statuses, ierr);
}
WIO_FORTRAN_ALIASES(waitio_mpi_waitsome)

void waitio_mpi_testsome_f(const int *incount, int *reqs, int *outcount, int *indices,
                           int *statuses, int *ierr)
{
    some_f(waitio_mpi_testsome, incount, reqs, outcount, indices, statuses, ierr);
}
WIO_FORTRAN_ALIASES(waitio_mpi_testsome)

/* ---- communicators and groups ---- */

/* A new communicator's handle, or 0 (WAITIO_MPI_COMM_NULL) for none. */
static int comm_out(int rc, WAITIO_MPI_Comm c, int *newcomm)
{
    int zero = 0;
    if (rc)
        return rc;
    if (!c) {
        memcpy(newcomm, &zero, sizeof zero);
        return 0;
    }
    return wio_fortran_comm_handle(c, newcomm);
}

void waitio_mpi_comm_split_f(const int *comm, const int *color, const int *key, int *newcomm,
                             int *ierr)
{
    WAITIO_MPI_Comm c = WAITIO_MPI_COMM_NULL;
    int rc = waitio_mpi_comm_split(wio_fortran_comm(comm), *color, *key, &c);
    *ierr = comm_out(rc, c, newcomm);
}
WIO_FORTRAN_ALIASES(waitio_mpi_comm_split)

void waitio_mpi_comm_dup_f(const int *comm, int *newcomm, int *ierr)
{
    WAITIO_MPI_Comm c = WAITIO_MPI_COMM_NULL;
    int rc = waitio_mpi_comm_dup(wio_fortran_comm(comm), &c);
    *ierr = comm_out(rc, c, newcomm);
}
WIO_FORTRAN_ALIASES(waitio_mpi_comm_dup)

void waitio_mpi_comm_create_group_f(const int *comm, const int *group, const int *tag,
                                    int *newcomm, int *ierr)
{
    WAITIO_MPI_Comm c = WAITIO_MPI_COMM_NULL;
    int rc = waitio_mpi_comm_create_group(wio_fortran_comm(comm), group_of(group), *tag, &c);
    *ierr = comm_out(rc, c, newcomm);
}
WIO_FORTRAN_ALIASES(waitio_mpi_comm_create_group)

void waitio_mpi_comm_free_f(int *comm, int *ierr)
{
    WAITIO_MPI_Comm c = wio_fortran_comm(comm);
    *ierr = waitio_mpi_comm_free(&c);
    if (!*ierr)
        memset(comm, 0, sizeof(int));
}
WIO_FORTRAN_ALIASES(waitio_mpi_comm_free)

void waitio_mpi_comm_group_f(const int *comm, int *group, int *ierr)
{
    WAITIO_MPI_Group g = WAITIO_MPI_GROUP_NULL;
    *ierr = waitio_mpi_comm_group(wio_fortran_comm(comm), &g);
    if (!*ierr && (*ierr = group_handle_new(g, group)) != 0)
        waitio_mpi_group_free(&g);
}
WIO_FORTRAN_ALIASES(waitio_mpi_comm_group)

void waitio_mpi_group_incl_f(const int *group, const int *n, const int *ranks, int *newgroup,
                             int *ierr)
{
    WAITIO_MPI_Group g = WAITIO_MPI_GROUP_NULL;
    *ierr = waitio_mpi_group_incl(group_of(group), *n, ranks, &g);
    if (!*ierr && (*ierr = group_handle_new(g, newgroup)) != 0)
        waitio_mpi_group_free(&g);
}
WIO_FORTRAN_ALIASES(waitio_mpi_group_incl)

void waitio_mpi_group_free_f(int *group, int *ierr)
{
    WAITIO_MPI_Group *slot = group_slot(group);
    if (!slot) {
        *ierr = wio_fail(WAITIO_ERR_ARG, "not a group handle");
        return;
    }
    *ierr = waitio_mpi_group_free(slot);
    memset(group, 0, sizeof(int));
}
WIO_FORTRAN_ALIASES(waitio_mpi_group_free)

void waitio_mpi_group_size_f(const int *group, int *size, int *ierr)
{
    *ierr = waitio_mpi_group_size(group_of(group), size);
}
WIO_FORTRAN_ALIASES(waitio_mpi_group_size)

void waitio_mpi_group_rank_f(const int *group, int *rank, int *ierr)
{
    *ierr = waitio_mpi_group_rank(group_of(group), rank);
}
WIO_FORTRAN_ALIASES(waitio_mpi_group_rank)

/* ---- non-blocking collectives ---- */

static void req_out(int rc, const waitio_req_t *r, int *req, int *ierr)
{
    *ierr = rc;
    if (!rc)
        memcpy(req, r, sizeof *r);
}

void waitio_mpi_ibcast_f(void *buf, const int *count, const int *datatype, const int *root,
                         const int *comm, int *req, int *ierr)
{
    waitio_req_t r;
    int rc = waitio_mpi_ibcast(buf, *count, *datatype, *root, wio_fortran_comm(comm), &r);
    req_out(rc, &r, req, ierr);
}
WIO_FORTRAN_ALIASES(waitio_mpi_ibcast)

void waitio_mpi_iallreduce_f(const void *sbuf, void *rbuf, const int *count, const int *datatype,
                             const int *op, const int *comm, int *req, int *ierr)
{
    waitio_req_t r;
    int rc = waitio_mpi_iallreduce(wio_fortran_buf(sbuf), rbuf, *count, *datatype, *op,
                                   wio_fortran_comm(comm), &r);
    req_out(rc, &r, req, ierr);
}
WIO_FORTRAN_ALIASES(waitio_mpi_iallreduce)

void waitio_mpi_ibarrier_f(const int *comm, int *req, int *ierr)
{
    waitio_req_t r;
    int rc = waitio_mpi_ibarrier(wio_fortran_comm(comm), &r);
    req_out(rc, &r, req, ierr);
}
WIO_FORTRAN_ALIASES(waitio_mpi_ibarrier)
