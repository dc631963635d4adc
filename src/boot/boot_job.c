/*
 * boot_job.c — start-up of a one-job MPMD launch (`mpiexec -np 2 ./A : -np 1 ./B`, no instance
 * variables; docs/mpi-layer.md): the MPI job is the whole instance. The MPI adapter reports the
 * layout (application = PB, MPI_APPNUM = PBID, rank in the application's sub-communicator =
 * PB rank), one process makes a fresh instance key with OpenSSL's RAND and broadcasts it over
 * MPI, and the address table is gathered with MPI over the whole job: there is no master, no
 * port to configure, and every data connection still authenticates with the key. Owns the
 * decision whether a process is in that mode, and the start-up notice of an instance that was
 * probably not meant to have a single PB.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "boot/boot.h"
#include "core/engine.h"
#include "waitio_adapter.h"

/* One process's contribution to the table: pbid, PB rank, PB size, then its address entry. */
#define JOB_HDR 12
#define JOB_ITEM (JOB_HDR + WIO_BOOT_ENTRY_LEN)
#define JOB_KEY_BYTES 32

/* WAITIO_PB_RANK/SIZE may be set in a one-job launch, but must agree with MPI. */
static int check_explicit(const char *name, int mpi_value)
{
    const char *v = getenv(name);
    if (!v)
        return 0;
    if (atoi(v) != mpi_value)
        return wio_fail(WAITIO_ERR_ENV, "%s=%s but MPI says %d in this one-job launch (unset it: "
                        "the MPI job defines the PBs)", name, v, mpi_value);
    return 0;
}

int wio_job_configure(wio_config *c)
{
    const waitio_adapter_ops *a = wio_adapter();
    if (!a || a->job_npb < 1 || wio_config_instance_vars_set())
        return 0;
    int rc;
    if ((rc = check_explicit("WAITIO_PB_RANK", a->rank)) || (rc = check_explicit("WAITIO_PB_SIZE", a->size)))
        return rc;
    c->job = 1;
    c->npb = a->job_npb;
    c->pbid = a->job_pbid;
    c->local_rank = a->rank;
    c->local_size = a->size;
    c->local_source = "the MPI job (one-job launch: application = PB)";
    return 0;
}

int wio_job_key(wio_key *k, double timeout)
{
    if (getenv("WAITIO_KEY") || getenv("WAITIO_KEY_FILE"))
        return wio_key_load(k); /* variables win: an explicit key is used as given */
    const waitio_adapter_ops *a = wio_adapter();
    memset(k, 0, sizeof *k);
    uint8_t raw[JOB_KEY_BYTES] = {0};
    int rc = a->job_rank == 0 ? wio_random_bytes(raw, sizeof raw) : 0;
    /* every process takes part in the broadcast, even when rank 0's RAND failed: it sends zeros
     * and its error, and the others fail below rather than wait */
    uint8_t msg[1 + JOB_KEY_BYTES];
    msg[0] = (uint8_t)(rc != 0);
    memcpy(msg + 1, raw, sizeof raw);
    if (a->job_bcast(a->ctx, msg, sizeof msg, 0, timeout) != 0)
        rc = rc ? rc : wio_fail(WAITIO_ERR_TIMEOUT, "one-job launch: the instance key did not "
                                "arrive from MPI rank 0 within %g s", timeout);
    else if (msg[0])
        rc = rc ? rc : wio_fail(WAITIO_ERR_KEY, "one-job launch: MPI rank 0 could not generate "
                                "the instance key");
    if (!rc) {
        for (size_t i = 0; i < JOB_KEY_BYTES; i++)
            snprintf((char *)k->bytes + 2 * i, 3, "%02x", msg[1 + i]);
        k->len = 2 * JOB_KEY_BYTES;
        snprintf(k->source, sizeof k->source, "generated for this MPI job (one-job launch)");
    }
    memset(raw, 0, sizeof raw);
    memset(msg, 0, sizeof msg);
    return rc;
}

/* Checks the gathered items (one per process of the job) and encodes the table as the master
 * would: npb, the PBs' sizes, then the entries PB by PB in PB-rank order. */
static int job_table(int npb, const uint8_t *items, int n, uint8_t **table, size_t *len)
{
    int *size = calloc((size_t)npb, sizeof(int)), *seen = calloc((size_t)npb, sizeof(int));
    uint32_t *offset = calloc((size_t)npb, sizeof(uint32_t));
    uint8_t *t = NULL;
    int rc = size && seen && offset ? 0 : wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n && !rc; i++) {
        const uint8_t *it = items + (size_t)i * JOB_ITEM;
        uint32_t pb = wio_get_le32(it), psize = wio_get_le32(it + 8);
        if (pb >= (uint32_t)npb || psize == 0 || (size[pb] && (uint32_t)size[pb] != psize))
            rc = wio_fail(WAITIO_ERR_BOOT, "one-job launch: MPI process %d reports PB %u of size "
                          "%u, inconsistent with the job", i, (unsigned)pb, (unsigned)psize);
        else
            size[pb] = (int)psize, seen[pb]++;
    }
    uint32_t total = 0;
    for (int p = 0; p < npb && !rc; p++) {
        if (seen[p] != size[p] || !size[p])
            rc = wio_fail(WAITIO_ERR_BOOT, "one-job launch: application %d has %d processes in "
                          "MPI but %d reported", p, size[p], seen[p]);
        offset[p] = total;
        total += (uint32_t)size[p];
    }
    *len = 4 + 4 * (size_t)npb + WIO_BOOT_ENTRY_LEN * (size_t)total;
    if (!rc && !(t = calloc(1, *len)))
        rc = wio_fail(WAITIO_ERR_NOMEM, "out of memory for the address table");
    if (!rc) {
        wio_put_le32(t, (uint32_t)npb);
        for (int p = 0; p < npb; p++)
            wio_put_le32(t + 4 + 4 * (size_t)p, (uint32_t)size[p]);
        uint8_t *entries = t + 4 + 4 * (size_t)npb;
        for (int i = 0; i < n && !rc; i++) {
            const uint8_t *it = items + (size_t)i * JOB_ITEM;
            uint32_t pb = wio_get_le32(it), rank = wio_get_le32(it + 4);
            uint8_t *slot = entries + (size_t)(offset[pb] + rank) * WIO_BOOT_ENTRY_LEN;
            if (rank >= (uint32_t)size[pb] || slot[0] != 0)
                rc = wio_fail(WAITIO_ERR_BOOT, "one-job launch: PB %u rank %u reported twice or "
                              "out of range", (unsigned)pb, (unsigned)rank);
            else
                memcpy(slot, it + JOB_HDR, WIO_BOOT_ENTRY_LEN);
        }
    }
    free(size);
    free(seen);
    free(offset);
    if (rc) {
        free(t);
        return rc;
    }
    *table = t;
    return 0;
}

int wio_boot_job(wio_engine *e, const uint8_t mine[WIO_BOOT_ENTRY_LEN], double timeout,
                 uint8_t **table, size_t *table_len)
{
    const waitio_adapter_ops *a = wio_adapter();
    uint8_t item[JOB_ITEM];
    wio_put_le32(item, (uint32_t)e->cfg.pbid);
    wio_put_le32(item + 4, (uint32_t)e->cfg.local_rank);
    wio_put_le32(item + 8, (uint32_t)e->cfg.local_size);
    memcpy(item + JOB_HDR, mine, WIO_BOOT_ENTRY_LEN);
    uint8_t *all = malloc((size_t)a->job_size * JOB_ITEM);
    if (!all)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    wio_info("start-up through MPI (one-job launch, %s): PB %d of %d, %d processes in the job",
             a->name ? a->name : "?", e->cfg.pbid, e->cfg.npb, a->job_size);
    int rc = 0;
    if (a->job_allgather(a->ctx, item, JOB_ITEM, all, timeout) != 0)
        rc = wio_fail(WAITIO_ERR_TIMEOUT, "one-job launch: the address table was not gathered "
                      "over MPI within %g s", timeout);
    else
        rc = job_table(e->cfg.npb, all, a->job_size, table, table_len);
    free(all);
    return rc;
}

void wio_job_notice(const wio_config *c)
{
    static int said;
    if (said || c->npb != 1 || c->npb_explicit || c->local_rank != 0)
        return;
    said = 1;
    if (wio_log_explicit && wio_log_level_current < WIO_LOG_WARN)
        return;
    wio_log_write(WIO_LOG_WARN, "%s: this is a single-PB instance. To couple programs, start them "
                  "together with waitiorun (waitiorun -- ./a : -- ./b), or in one mpiexec command "
                  "line with the MPI adapter linked (mpiexec -np 2 ./a : -np 1 ./b), or give each "
                  "job the instance variables (docs/user-guide.md). Set WAITIO_NPB=1 to run a "
                  "single PB on purpose (and silence this).",
                  c->job ? "one MPI application and no instance variables"
                         : "no instance variables (WAITIO_NPB, WAITIO_PBID, WAITIO_MASTER_HOST, "
                           "WAITIO_MASTER_PORT, WAITIO_RENDEZVOUS)");
}
