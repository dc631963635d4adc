/*
 * probe.c — waitio_iprobe / waitio_probe: whether a message that a receive would take has
 * arrived, without taking it. A message that no posted receive took waits in the unexpected
 * queue (match.c); probing looks there with the receive's matching rules and leaves the entry
 * where it is, so the next matching receive takes exactly the message the probe reported
 * (MPI's rule: a probe and the receive after it, from the same source and tag, see one message).
 * A rendezvous message is reported by its announcement (RTS), which carries its full length.
 */
#include "core/api_lock.h"
#include "core/engine.h"

typedef struct probe_key {
    wio_engine *e;
    wio_req_impl key;   /* a receive that is never posted: only its matching fields are set */
    wio_unexp *found;
    int err;            /* the named source was lost */
} probe_key;

static int probe_setup(wio_engine *e, waitio_group_t grp, int src, unsigned long tag, probe_key *p)
{
    wio_group *g = (wio_group *)grp;
    if (!g)
        return wio_fail(WAITIO_ERR_GROUP, "NULL group");
    if (g->my_rank == WAITIO_UNDEFINED)
        return wio_fail(WAITIO_ERR_NOT_MEMBER, "this process is not a member of group %u",
                        (unsigned)g->gid);
    if (src != WAITIO_ANY_SOURCE && (src < 0 || src >= g->size))
        return wio_fail(WAITIO_ERR_GROUP, "rank %d is outside group %u of size %d", src,
                        (unsigned)g->gid, g->size);
    uint32_t pid = src == WAITIO_ANY_SOURCE ? WIO_ID_BOOT : g->members[src];
    if (pid == e->my_id)
        return wio_fail(WAITIO_ERR_ARG, "receiving from oneself is not supported");
    *p = (probe_key){.e = e};
    p->key.grp = g;
    p->key.gid = g->gid | WIO_CTX_USER;
    p->key.rank = src;
    p->key.peer_id = pid;
    p->key.tag = tag;
    return 0;
}

/* Looks once; 1 when a message is there or the named source is gone. */
static int probe_ready(void *arg)
{
    probe_key *p = arg;
    p->found = wio_mq_peek_unexpected(&p->e->mq, &p->key);
    if (p->found)
        return 1;
    if (p->key.peer_id != WIO_ID_BOOT)
        p->err = wio_engine_peer_error(p->e, p->key.peer_id);
    return p->err != 0;
}

static void probe_status(const probe_key *p, waitio_status_t *status)
{
    if (!status)
        return;
    status->source = (int)p->found->src;
    status->tag = p->found->tag;
    status->len = (size_t)p->found->len;
    status->error = 0;
}

static int probe_lost(const probe_key *p)
{
    char who[96];
    wio_describe_process(p->e, p->key.peer_id, who, sizeof who);
    return wio_fail(p->err, "probe: %s is gone (%s)", who, waitio_strerror(p->err));
}

int waitio_iprobe(waitio_group_t grp, int src, unsigned long tag, int *flag, waitio_status_t *status)
{
    WIO_API_GUARD();
    wio_engine *e = wio_engine_current;
    if (!e)
        return wio_fail(WAITIO_ERR_STATE, "WaitIO is not initialised");
    if (!flag)
        return wio_fail(WAITIO_ERR_ARG, "NULL flag");
    *flag = 0;
    probe_key p;
    int rc = probe_setup(e, grp, src, tag, &p);
    if (!rc)
        rc = wio_engine_progress(e, 0);
    if (rc)
        return rc;
    if (!probe_ready(&p))
        return 0;
    if (!p.found)
        return probe_lost(&p);
    *flag = 1;
    probe_status(&p, status);
    return 0;
}

int waitio_probe(waitio_group_t grp, int src, unsigned long tag, waitio_status_t *status)
{
    WIO_API_GUARD();
    wio_engine *e = wio_engine_current;
    if (!e)
        return wio_fail(WAITIO_ERR_STATE, "WaitIO is not initialised");
    probe_key p;
    int rc = probe_setup(e, grp, src, tag, &p);
    if (rc)
        return rc;
    if (!probe_ready(&p) && (rc = wio_engine_wait_until(e, probe_ready, &p, 0)) != 0)
        return rc;
    if (!p.found)
        return probe_lost(&p);
    probe_status(&p, status);
    return 0;
}
