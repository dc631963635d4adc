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
#define WIO_LOG_SUBSYS WIO_SUB_BOOT /* this file logs as "boot" (WAITIO_LOG=boot=LEVEL) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "boot/boot.h"
#include "core/engine.h"
#include "core/settings.h"
#include "waitio_adapter.h"

/* One process's contribution to the table: pbid, PB rank, PB size, then its address entry's
 * fixed part; its extension travels in a second gather, padded to the job's longest (the
 * adapter's allgather takes one size for all), only when some process has one. */
#define JOB_HDR 12
#define JOB_ITEM (JOB_HDR + WIO_BOOT_ENTRY_LEN)
#define JOB_EXT_LEN(item) wio_get_le16((item) + JOB_HDR + WIO_BOOT_ENTRY_EXT_AT)
#define JOB_KEY_BYTES 32

/* WAITIO_PB_RANK/SIZE may be set in a one-job launch, but must agree with MPI. */
static int check_explicit(const char *name, int mpi_value)
{
    const char *v = wio_env(name);
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
    if (wio_env("WAITIO_KEY") || wio_env("WAITIO_KEY_FILE"))
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

/* Checks the gathered items (one per process of the job, its extension at ext + i * stride)
 * and encodes the table as the master would: npb, the PBs' sizes, then the entries PB by PB in
 * PB-rank order, each its fixed part and its extension. */
static int job_table(int npb, const uint8_t *items, const uint8_t *ext, size_t stride, int n,
                     uint8_t **table, size_t *len)
{
    int *size = calloc((size_t)npb, sizeof(int)), *seen = calloc((size_t)npb, sizeof(int));
    uint32_t *offset = calloc((size_t)npb, sizeof(uint32_t));
    int *slot_of = calloc((size_t)n, sizeof(int)); /* process id -> job item, -1: none yet */
    uint8_t *t = NULL;
    size_t bytes = 0;
    int rc = size && seen && offset && slot_of ? 0 : wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n && !rc; i++) {
        const uint8_t *it = items + (size_t)i * JOB_ITEM;
        uint32_t pb = wio_get_le32(it), psize = wio_get_le32(it + 8);
        if (pb >= (uint32_t)npb || psize == 0 || (size[pb] && (uint32_t)size[pb] != psize) ||
            JOB_EXT_LEN(it) > stride)
            rc = wio_fail(WAITIO_ERR_BOOT, "one-job launch: MPI process %d reports PB %u of size "
                          "%u, inconsistent with the job", i, (unsigned)pb, (unsigned)psize);
        else
            size[pb] = (int)psize, seen[pb]++, bytes += WIO_BOOT_ENTRY_LEN + JOB_EXT_LEN(it);
    }
    uint32_t total = 0;
    for (int p = 0; p < npb && !rc; p++) {
        if (seen[p] != size[p] || !size[p])
            rc = wio_fail(WAITIO_ERR_BOOT, "one-job launch: application %d has %d processes in "
                          "MPI but %d reported", p, size[p], seen[p]);
        offset[p] = total;
        total += (uint32_t)size[p];
    }
    for (int i = 0; i < n && !rc; i++) /* every process once: total == n */
        slot_of[i] = -1;
    for (int i = 0; i < n && !rc; i++) {
        const uint8_t *it = items + (size_t)i * JOB_ITEM;
        uint32_t pb = wio_get_le32(it), rank = wio_get_le32(it + 4);
        if (rank >= (uint32_t)size[pb] || slot_of[offset[pb] + rank] >= 0)
            rc = wio_fail(WAITIO_ERR_BOOT, "one-job launch: PB %u rank %u reported twice or "
                          "out of range", (unsigned)pb, (unsigned)rank);
        else
            slot_of[offset[pb] + rank] = i;
    }
    *len = 4 + 4 * (size_t)npb + bytes;
    if (!rc && *len > WIO_TABLE_MAX)
        rc = wio_fail(WAITIO_ERR_BOOT, "one-job launch: the address table would exceed 256 MiB");
    if (!rc && !(t = malloc(*len)))
        rc = wio_fail(WAITIO_ERR_NOMEM, "out of memory for the address table");
    if (!rc) {
        wio_put_le32(t, (uint32_t)npb);
        for (int p = 0; p < npb; p++)
            wio_put_le32(t + 4 + 4 * (size_t)p, (uint32_t)size[p]);
        uint8_t *q = t + 4 + 4 * (size_t)npb;
        for (int id = 0; id < n; id++) { /* process order */
            const uint8_t *it = items + (size_t)slot_of[id] * JOB_ITEM;
            size_t l = JOB_EXT_LEN(it);
            memcpy(q, it + JOB_HDR, WIO_BOOT_ENTRY_LEN);
            if (l)
                memcpy(q + WIO_BOOT_ENTRY_LEN, ext + (size_t)slot_of[id] * stride, l);
            q += WIO_BOOT_ENTRY_LEN + l;
        }
    }
    free(size);
    free(seen);
    free(offset);
    free(slot_of);
    if (rc) {
        free(t);
        return rc;
    }
    *table = t;
    return 0;
}

/* The second gather: every process's extension padded to the longest of the job (stride). */
static int job_gather_ext(const waitio_adapter_ops *a, const uint8_t *all, const uint8_t *mine,
                          size_t mine_len, double timeout, uint8_t **ext, size_t *stride)
{
    size_t longest = 0;
    for (int i = 0; i < a->job_size; i++) {
        size_t l = JOB_EXT_LEN(all + (size_t)i * JOB_ITEM);
        longest = l > longest ? l : longest;
    }
    *ext = NULL;
    *stride = longest;
    if (!longest) /* nobody has an extension: no second gather, as everyone sees */
        return 0;
    if (longest > WIO_PROC_EXT_MAX)
        return wio_fail(WAITIO_ERR_BOOT, "one-job launch: an address extension of %zu bytes", longest);
    uint8_t pad[WIO_PROC_EXT_MAX] = {0};
    memcpy(pad, mine + WIO_BOOT_ENTRY_LEN, mine_len - WIO_BOOT_ENTRY_LEN);
    /* every process computed the same longest from the same items: all take part */
    if (!(*ext = malloc((size_t)a->job_size * longest)))
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory"); /* the others then time out */
    if (a->job_allgather(a->ctx, pad, longest, *ext, timeout) != 0)
        return wio_fail(WAITIO_ERR_TIMEOUT, "one-job launch: the address extensions were not "
                        "gathered over MPI within %g s", timeout);
    return 0;
}

int wio_boot_job(wio_engine *e, const uint8_t *mine, size_t mine_len, double timeout,
                 uint8_t **table, size_t *table_len)
{
    const waitio_adapter_ops *a = wio_adapter();
    uint8_t item[JOB_ITEM];
    wio_put_le32(item, (uint32_t)e->cfg.pbid);
    wio_put_le32(item + 4, (uint32_t)e->cfg.local_rank);
    wio_put_le32(item + 8, (uint32_t)e->cfg.local_size);
    memcpy(item + JOB_HDR, mine, WIO_BOOT_ENTRY_LEN);
    uint8_t *all = malloc((size_t)a->job_size * JOB_ITEM), *ext = NULL;
    if (!all)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    wio_info("start-up through MPI (one-job launch, %s): PB %d of %d, %d processes in the job",
             a->name ? a->name : "?", e->cfg.pbid, e->cfg.npb, a->job_size);
    int rc = 0;
    size_t stride = 0;
    if (a->job_allgather(a->ctx, item, JOB_ITEM, all, timeout) != 0)
        rc = wio_fail(WAITIO_ERR_TIMEOUT, "one-job launch: the address table was not gathered "
                      "over MPI within %g s", timeout);
    else if (!(rc = job_gather_ext(a, all, mine, mine_len, timeout, &ext, &stride)))
        rc = job_table(e->cfg.npb, all, ext, stride, a->job_size, table, table_len);
    free(all);
    free(ext);
    return rc;
}

void wio_job_notice(const wio_config *c)
{
    static int said;
    if (said || c->npb != 1 || c->npb_explicit || c->local_rank != 0)
        return;
    said = 1;
    wio_notice("%s: this is a single-PB instance. To couple programs, start them "
               "together with waitiorun (waitiorun -- ./a : -- ./b), or in one mpiexec command "
               "line with the MPI adapter linked (mpiexec -np 2 ./a : -np 1 ./b), or give each "
               "job the instance variables (docs/user-guide.md). Set WAITIO_NPB=1 to run a "
               "single PB on purpose (and silence this).",
               c->job ? "one MPI application and no instance variables"
                      : "no instance variables (WAITIO_NPB, WAITIO_PBID, WAITIO_MASTER_HOST, "
                        "WAITIO_MASTER_PORT, WAITIO_RENDEZVOUS)");
}
