/*
 * completion.c — the conversion layer's completion calls beyond wait/test/waitall: Waitany,
 * Waitsome, Testany, Testall, Testsome, with MPI's rules for inactive requests (index or outcount
 * WAITIO_MPI_UNDEFINED when none is active; an inactive request's status is empty: source and
 * tag ANY, error 0, count 0).
 *
 * Requests of any kind may be mixed: point-to-point ones, packed ones of derived datatypes, and
 * the non-blocking collectives of icoll.c. Which are complete is found without touching them
 * (Testall must leave every request alone unless all are complete); a complete one is then
 * finished through waitio_mpi_wait, which does what each kind needs (unpacking, the collective's
 * last step) and fills its status.
 */
#define WIO_LOG_SUBSYS WIO_SUB_MPI /* this file logs as "mpi" (WAITIO_LOG=mpi=LEVEL) */
#include "core/api_lock.h"
#include "mpi/mpi_internal.h"

enum { REQ_INACTIVE = -1, REQ_PENDING = 0, REQ_COMPLETE = 1 };

static int req_state(wio_engine *e, WAITIO_MPI_Request *r)
{
    if (wio_mpi_icoll_owns(r))
        return wio_mpi_icoll_done(r) ? REQ_COMPLETE : REQ_PENDING;
    int s = wio_req_user_state(e, r);
    return s < 0 ? REQ_INACTIVE : s ? REQ_COMPLETE : REQ_PENDING;
}

static void empty_status(int *status)
{
    if (!status)
        return;
    status[WAITIO_MPI_SOURCE] = WAITIO_MPI_ANY_SOURCE;
    status[WAITIO_MPI_TAG] = WAITIO_MPI_ANY_TAG;
    status[WAITIO_MPI_ERROR] = 0;
    status[WAITIO_MPI_COUNT] = 0;
}

static int *status_at(int *statuses, int k)
{
    return statuses ? statuses + (size_t)WAITIO_STATUS_SIZE * (size_t)k : NULL;
}

static int check_array(int count, const WAITIO_MPI_Request *reqs, const void *out)
{
    if (count < 0 || (count > 0 && !reqs) || !out)
        return wio_fail(WAITIO_ERR_ARG, "bad request array or result pointer");
    return 0;
}

typedef struct scan {
    wio_engine *e;
    WAITIO_MPI_Request *reqs;
    int count;
    int active, complete, first;  /* first: the lowest index of a complete request, or -1 */
} scan;

static void scan_now(scan *s)
{
    s->active = s->complete = 0;
    s->first = -1;
    for (int i = 0; i < s->count; i++) {
        int st = req_state(s->e, &s->reqs[i]);
        s->active += st != REQ_INACTIVE;
        if (st == REQ_COMPLETE) {
            if (s->first < 0)
                s->first = i;
            s->complete++;
        }
    }
}

static int any_complete(void *arg)
{
    scan *s = arg;
    scan_now(s);
    return s->complete > 0 || s->active == 0;
}

/* Sets up a scan; progress = 1 makes one progress round first (the tests), so that a test
 * called in a loop sees messages arrive. */
static int scan_start(scan *s, int count, WAITIO_MPI_Request *reqs, int progress)
{
    *s = (scan){.e = wio_mpi_engine(), .reqs = reqs, .count = count};
    if (!s->e)
        return WAITIO_ERR_STATE;
    int rc = progress ? wio_engine_progress(s->e, 0) : 0;
    if (!rc)
        scan_now(s);
    return rc;
}

/* Finishes every complete request (indices and statuses in index order); returns the first
 * error and sets *n to how many. */
static int finish_complete(scan *s, int *indices, int *statuses, int *n)
{
    int first_err = 0, k = 0;
    for (int i = 0; i < s->count; i++) {
        if (req_state(s->e, &s->reqs[i]) != REQ_COMPLETE)
            continue;
        int rc = waitio_mpi_wait(&s->reqs[i], status_at(statuses, k));
        if (rc && !first_err)
            first_err = rc;
        if (indices)
            indices[k] = i;
        k++;
    }
    *n = k;
    return first_err;
}

int waitio_mpi_waitany(int count, WAITIO_MPI_Request array_of_requests[], int *index, int *status)
{
    WIO_API_GUARD();
    scan s;
    int rc = check_array(count, array_of_requests, index);
    if (!rc)
        rc = scan_start(&s, count, array_of_requests, 0);
    if (rc)
        return rc;
    *index = WAITIO_MPI_UNDEFINED;
    if (!any_complete(&s) && (rc = wio_engine_wait_until(s.e, any_complete, &s, 0)) != 0)
        return rc;
    if (!s.active) {
        empty_status(status);
        return 0;
    }
    *index = s.first;
    return waitio_mpi_wait(&array_of_requests[s.first], status);
}

int waitio_mpi_testany(int count, WAITIO_MPI_Request array_of_requests[], int *index, int *flag,
                       int *status)
{
    WIO_API_GUARD();
    scan s;
    int rc = check_array(count, array_of_requests, index);
    if (!rc && !flag)
        rc = wio_fail(WAITIO_ERR_ARG, "NULL flag");
    if (!rc)
        rc = scan_start(&s, count, array_of_requests, 1);
    if (rc)
        return rc;
    *index = WAITIO_MPI_UNDEFINED;
    *flag = s.active == 0 || s.complete > 0;
    if (!s.active) {
        empty_status(status);
        return 0;
    }
    if (!s.complete)
        return 0;
    *index = s.first;
    return waitio_mpi_wait(&array_of_requests[s.first], status);
}

/* Complete only when every active request is: then each is finished (inactive ones get empty
 * statuses); otherwise nothing changes. */
int waitio_mpi_testall(int count, WAITIO_MPI_Request array_of_requests[], int *flag,
                       int *array_of_statuses)
{
    WIO_API_GUARD();
    scan s;
    int rc = check_array(count, array_of_requests, flag);
    if (!rc)
        rc = scan_start(&s, count, array_of_requests, 1);
    if (rc)
        return rc;
    *flag = s.complete == s.active;
    if (!*flag)
        return 0;
    int first_err = 0;
    for (int i = 0; i < count; i++) {
        int *st = status_at(array_of_statuses, i);
        if (req_state(s.e, &array_of_requests[i]) == REQ_INACTIVE) {
            empty_status(st);
            continue;
        }
        rc = waitio_mpi_wait(&array_of_requests[i], st);
        if (rc && !first_err)
            first_err = rc;
    }
    return first_err;
}

/* Waitsome (block = 1) and Testsome: every request that has completed, or none. */
static int some_complete(int incount, WAITIO_MPI_Request array_of_requests[], int *outcount,
                         int array_of_indices[], int *array_of_statuses, int block)
{
    scan s;
    int rc = check_array(incount, array_of_requests, outcount);
    if (!rc && incount > 0 && !array_of_indices)
        rc = wio_fail(WAITIO_ERR_ARG, "NULL array of indices");
    if (!rc)
        rc = scan_start(&s, incount, array_of_requests, !block);
    if (rc)
        return rc;
    *outcount = WAITIO_MPI_UNDEFINED;
    if (block && !any_complete(&s) && (rc = wio_engine_wait_until(s.e, any_complete, &s, 0)) != 0)
        return rc;
    if (!s.active)
        return 0;
    return finish_complete(&s, array_of_indices, array_of_statuses, outcount);
}

int waitio_mpi_waitsome(int incount, WAITIO_MPI_Request array_of_requests[], int *outcount,
                        int array_of_indices[], int *array_of_statuses)
{
    WIO_API_GUARD();
    return some_complete(incount, array_of_requests, outcount, array_of_indices, array_of_statuses, 1);
}

int waitio_mpi_testsome(int incount, WAITIO_MPI_Request array_of_requests[], int *outcount,
                        int array_of_indices[], int *array_of_statuses)
{
    WIO_API_GUARD();
    return some_complete(incount, array_of_requests, outcount, array_of_indices, array_of_statuses, 0);
}
