/*
 * config.c — reads the environment into a wio_config: instance layout (SPEC §3), the PB-local
 * rank and size from WaitIO's or the launcher's variables, and the tuning knobs (docs/tuning.md).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "common.h"
#include "frame.h"
#include "settings.h"
#include "transport/shm_ring.h"
#include "transport/transport.h"

#define DEFAULT_MASTER_PORT 27182
#define DEFAULT_EAGER_LIMIT (256u << 10)
/* 256 KiB: over loopback TCP an 8 MiB transfer in 512 KiB frames took 748-1452 us (bimodal)
 * against 823-929 us in 256 KiB frames and 953-1050 in 128 KiB (3 alternating rounds; raw TCP
 * 979-1164); shared memory and files unchanged */
#define DEFAULT_CHUNK_SIZE (256u << 10)
#define DEFAULT_UNEXPECTED_MAX ((size_t)256 << 20)
#define DEFAULT_MAXFILE ((size_t)64 << 20)
#define DEFAULT_HYBRID_THRESHOLD 524288 /* the original's */

int wio_parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || s[0] == '-')
        return -1;
    unsigned long long mult = 1;
    switch (*end) {
    case 'k': case 'K': mult = 1ull << 10; end++; break;
    case 'm': case 'M': mult = 1ull << 20; end++; break;
    case 'g': case 'G': mult = 1ull << 30; end++; break;
    default: break;
    }
    if (*end == 'i' || *end == 'B' || *end == 'b')
        end += (*end == 'i' && (end[1] == 'B' || end[1] == 'b')) ? 2 : 1;
    if (*end != '\0' || v > (~0ull) / mult)
        return -1;
    *out = (size_t)(v * mult);
    return 0;
}

/* WaitIO's own variables may not be set to "": that is a job script's mistake (a variable
 * expanded from nothing), never a value. Returns the value, NULL when unset or on error (*rc). */
static const char *env_value(const char *name, int *rc)
{
    const char *v = wio_env(name); /* the registry: src/core/settings.c */
    *rc = 0;
    if (v && !*v && !strncmp(name, "WAITIO_", 7)) {
        *rc = wio_fail(WAITIO_ERR_ENV, "%s is set but empty: give it a value or unset it", name);
        return NULL;
    }
    return v && *v ? v : NULL;
}

/* Reads integer variable `name` into *out if set; fails on garbage or out-of-range values. */
static int env_int(const char *name, int lo, int hi, int *out, int *found)
{
    int rc;
    const char *v = env_value(name, &rc);
    if (found)
        *found = 0;
    if (!v)
        return rc;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end != '\0' || x < lo || x > hi)
        return wio_fail(WAITIO_ERR_ENV, "%s='%s' is not an integer in [%d, %d]", name, v, lo, hi);
    *out = (int)x;
    if (found)
        *found = 1;
    return 0;
}

static int env_long(const char *name, long lo, long hi, long *out)
{
    int v = 0, found = 0, rc = env_int(name, (int)lo, (int)hi, &v, &found);
    if (!rc && found)
        *out = v;
    return rc;
}

static int env_size(const char *name, size_t lo, size_t hi, size_t *out)
{
    int rc;
    const char *v = env_value(name, &rc);
    if (!v)
        return rc;
    size_t x;
    if (wio_parse_size(v, &x) != 0 || x < lo || x > hi)
        return wio_fail(WAITIO_ERR_ENV, "%s='%s' is not a size in [%zu, %zu]", name, v, lo, hi);
    *out = x;
    return 0;
}

static int env_double(const char *name, double lo, double hi, double *out)
{
    int rc;
    const char *v = env_value(name, &rc);
    if (!v)
        return rc;
    char *end;
    double x = strtod(v, &end);
    if (end == v || *end != '\0' || !(x >= lo && x <= hi))
        return wio_fail(WAITIO_ERR_ENV, "%s='%s' is not a number in [%g, %g]", name, v, lo, hi);
    *out = x;
    return 0;
}

/* "auto" -> -1, else an integer in [0, 1]. */
static int env_auto_bool(const char *name, int *out)
{
    const char *v = wio_env(name);
    if (v && strcmp(v, "auto") == 0) {
        *out = -1;
        return 0;
    }
    int rc = env_int(name, 0, 1, out, NULL);
    if (rc)
        return wio_fail(WAITIO_ERR_ENV, "%s='%s' is not 0, 1 or auto", name, v);
    return 0;
}

static int env_string(const char *name, char *dst, size_t cap, const char *dflt)
{
    int rc;
    const char *v = env_value(name, &rc);
    if (rc)
        return rc;
    if (!v)
        v = dflt;
    if (strlen(v) >= cap)
        return wio_fail(WAITIO_ERR_ENV, "%s is too long (at most %zu characters)", name, cap - 1);
    memcpy(dst, v, strlen(v) + 1);
    return 0;
}

/* The original's file and hybrid modes (SPEC §6): WAITIO_COMM_TYPE and its companions, with
 * the misspelling WAITIO_HYBRID_THRESHOULD that real job scripts use. */
static int load_file_mode(wio_config *c)
{
    const char *v = wio_env("WAITIO_COMM_TYPE");
    int rc;
    c->comm_type = WIO_COMM_SOCKET;
    if (v && *v) {
        if (strcmp(v, "socket") == 0)
            c->comm_type = WIO_COMM_SOCKET;
        else if (strcmp(v, "file") == 0)
            c->comm_type = WIO_COMM_FILE;
        else if (strcmp(v, "hybrid") == 0)
            c->comm_type = WIO_COMM_HYBRID;
        else if (strcmp(v, "verbs") == 0)
            c->comm_type = WIO_COMM_VERBS;
        else
            return wio_fail(WAITIO_ERR_ENV, "WAITIO_COMM_TYPE='%s' is not socket, file, hybrid or verbs", v);
    }
    c->maxfile = DEFAULT_MAXFILE;
    c->hybrid_threshold = DEFAULT_HYBRID_THRESHOLD;
    c->file_poll_max = 0.01;
    const char *thr = wio_env("WAITIO_HYBRID_THRESHOLD") && *wio_env("WAITIO_HYBRID_THRESHOLD")
                          ? "WAITIO_HYBRID_THRESHOLD" : "WAITIO_HYBRID_THRESHOULD";
    double poll_ms = c->file_poll_max * 1e3;
    if ((rc = env_string("WAITIO_SCRATCH_DIR", c->scratch_dir, sizeof c->scratch_dir, "")) ||
        (rc = env_size("WAITIO_MAXFILE_SIZE_PER_PROC", 4096, (size_t)1 << 40, &c->maxfile)) ||
        (rc = env_size(thr, 1, (size_t)1 << 40, &c->hybrid_threshold)) ||
        (rc = env_double("WAITIO_FILE_POLL_MS", 0.01, 10000, &poll_ms)) ||
        (rc = env_int("WAITIO_FILE_FSYNC", 0, 1, &c->file_fsync, NULL)) ||
        (rc = env_int("WAITIO_FILE_UNSAFE_DIR", 0, 1, &c->file_unsafe_dir, NULL)))
        return rc;
    c->file_poll_max = poll_ms * 1e-3;
    const char *job = wio_env("WAITIO_JOB_ID");
    if (!job || !*job)
        job = getenv("COUPLER_JOB_ID");
    if (job && *job) {
        if (strlen(job) >= sizeof c->job_id || strchr(job, '/') || strcmp(job, ".") == 0 || strcmp(job, "..") == 0)
            return wio_fail(WAITIO_ERR_ENV, "the job id '%s' (WAITIO_JOB_ID or COUPLER_JOB_ID) must be a "
                            "file name of at most %zu characters", job, sizeof c->job_id - 1);
        memcpy(c->job_id, job, strlen(job) + 1);
    }
    return 0;
}

/* WAITIO_TRANSPORTS wins; else WAITIO_COMM_TYPE picks: socket = shm,tcp; file = file; hybrid =
 * shm,tcp for the messages (shm,ucx,tcp when built with UCX: UCX between hosts) and file for
 * large messages' data; verbs = ucx restricted to RDMA and shared memory (transport/ucx.c). */
static int choose_transports(wio_config *c)
{
    const char *v = wio_env("WAITIO_TRANSPORTS");
    c->transports_set = v && *v;
    if (c->transports_set)
        return env_string("WAITIO_TRANSPORTS", c->transports, sizeof c->transports, "");
#ifdef WAITIO_HAVE_UCX
    /* UCX is loaded at run time (transport/ucx_sym.c): hybrid uses it between hosts when it
     * loads, and plain sockets when this node has no UCX (verbs, which needs it, fails). */
    const char *hybrid = "shm,ucx,tcp";
    const char *no_ucx = c->comm_type == WIO_COMM_HYBRID ? wio_ucx_load_error() : NULL;
    if (no_ucx) {
        wio_info("WAITIO_COMM_TYPE=hybrid without ucx: %s", no_ucx);
        hybrid = "shm,tcp";
    }
#else
    const char *hybrid = "shm,tcp";
#endif
    if (c->comm_type == WIO_COMM_VERBS) {
#ifndef WAITIO_HAVE_UCX
        return wio_fail(WAITIO_ERR_ENV, "WAITIO_COMM_TYPE=verbs needs the ucx transport, and this "
                        "WaitIO was built without UCX (install UCX, e.g. libucx-dev, and rebuild; "
                        "or use WAITIO_COMM_TYPE=socket)");
#else
        memcpy(c->transports, "ucx", 4);
        return 0;
#endif
    }
    const char *list = c->comm_type == WIO_COMM_FILE ? "file" : c->comm_type == WIO_COMM_HYBRID ? hybrid : "shm,tcp";
    memcpy(c->transports, list, strlen(list) + 1);
    if (c->comm_type != WIO_COMM_SOCKET && !c->scratch_dir[0])
        return wio_fail(WAITIO_ERR_ENV, "WAITIO_COMM_TYPE=%s needs WAITIO_SCRATCH_DIR, the directory "
                        "shared by all PBs", c->comm_type == WIO_COMM_FILE ? "file" : "hybrid");
    return 0;
}

/* PB-local rank/size: WaitIO's own variables first, then the launchers' (SPEC §3). */
static int load_local_rank(wio_config *c)
{
    static const struct { const char *rank, *size; } sources[] = {
        {"WAITIO_PB_RANK", "WAITIO_PB_SIZE"},
        {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
        {"PMI_RANK", "PMI_SIZE"},
        {"PMIX_RANK", "OMPI_COMM_WORLD_SIZE"},
        {"SLURM_PROCID", "SLURM_NTASKS"},
    };
    for (size_t i = 0; i < sizeof sources / sizeof sources[0]; i++) {
        int rank = 0, size = 0, have_rank, have_size, rc;
        if ((rc = env_int(sources[i].rank, 0, 1 << 24, &rank, &have_rank)))
            return rc;
        if (!have_rank)
            continue;
        if ((rc = env_int(sources[i].size, 1, 1 << 24, &size, &have_size)))
            return rc;
        if (!have_size)
            continue;
        if (rank >= size)
            return wio_fail(WAITIO_ERR_ENV, "%s=%d is not below %s=%d", sources[i].rank, rank,
                            sources[i].size, size);
        c->local_rank = rank;
        c->local_size = size;
        c->local_source = sources[i].rank;
        return 0;
    }
    c->local_rank = 0;
    c->local_size = 1;
    c->local_source = "default (single process)";
    return 0;
}

/* ---- Slurm heterogeneous jobs (docs/launcher.md, "Slurm"): PB = het-job component ----------
 * In `srun -n2 ./sim : -n3 ./ana`, or `srun --het-group=K ...` inside a het allocation, Slurm
 * tells no task its component (22.05: no such variable), only each component's nodes
 * (SLURM_JOB_NODELIST_HET_GROUP_K; PACK_GROUP before 20.02) and the step's nodes and tasks per
 * node. A task's component is the one whose nodes hold the task's node: components that share
 * a node cannot be told apart, and then WAITIO_PBID must be given. SLURM_* stay plain getenv:
 * they are Slurm's, not settings of ours. */
#define SLURM_MAX_NODES 65536
#define SLURM_MAX_COMP 256
#define MASTER_HOST_CAP sizeof(((wio_config *)0)->master_host)

/* Calls fn(host, arg) for each host of a Slurm host list ("a,n[01-03,7]-ib"); returns fn's first
 * non-zero result, -1 when the list is malformed (or has more than one bracket per name). */
static int hostlist_each(const char *list, int (*fn)(const char *host, void *arg), void *arg)
{
    char item[256], host[300];
    const char *p = list;
    while (*p) {
        size_t n = 0;
        int depth = 0;
        while (p[n] && (depth || p[n] != ',')) {
            depth += p[n] == '[' ? 1 : p[n] == ']' ? -1 : 0;
            n++;
        }
        if (n == 0 || n >= sizeof item || depth)
            return -1;
        memcpy(item, p, n);
        item[n] = '\0';
        p += n + (p[n] == ',');
        char *lb = strchr(item, '['), *rb = lb ? strchr(lb, ']') : NULL;
        if (!lb) {
            int rc = fn(item, arg);
            if (rc)
                return rc;
            continue;
        }
        if (!rb || strchr(rb, '['))
            return -1;
        *lb = *rb = '\0';
        char *save = NULL;
        for (char *r = strtok_r(lb + 1, ",", &save); r; r = strtok_r(NULL, ",", &save)) {
            char *dash = strchr(r, '-'), *end;
            unsigned long lo = strtoul(r, &end, 10), hi = lo;
            if (end == r || (dash ? end != dash : *end))
                return -1;
            if (dash && (hi = strtoul(dash + 1, &end, 10), end == dash + 1 || *end || hi < lo))
                return -1;
            if (hi - lo > SLURM_MAX_NODES)
                return -1;
            int width = (int)(dash ? (size_t)(dash - r) : strlen(r));
            for (unsigned long v = lo; v <= hi; v++) {
                snprintf(host, sizeof host, "%s%0*lu%s", item, width, v, rb + 1);
                int rc = fn(host, arg);
                if (rc)
                    return rc;
            }
        }
    }
    return 0;
}

static int host_matches(const char *host, void *name) { return strcmp(host, name) == 0; }
static int host_first(const char *host, void *out)
{
    snprintf(out, MASTER_HOST_CAP, "%s", host);
    return 1;
}

/* Component K's node list: SLURM_JOB_NODELIST_HET_GROUP_K (PACK_GROUP in older Slurm). */
static const char *slurm_group_nodes(int k)
{
    char name[64];
    snprintf(name, sizeof name, "SLURM_JOB_NODELIST_HET_GROUP_%d", k);
    const char *v = getenv(name);
    if (!v) {
        snprintf(name, sizeof name, "SLURM_JOB_NODELIST_PACK_GROUP_%d", k);
        v = getenv(name);
    }
    return v;
}

/* The component holding NODE: >= 0; -1 none; -2 more than one (a shared node). */
static int slurm_component_of(const char *node, int ncomp)
{
    int found = -1;
    for (int k = 0; k < ncomp; k++) {
        const char *nodes = slurm_group_nodes(k);
        if (nodes && hostlist_each(nodes, host_matches, (void *)node) == 1) {
            if (found >= 0)
                return -2;
            found = k;
        }
    }
    return found;
}

/* The step's task counts per node ("2(x3),1" = 2,2,2,1) into counts[]; the number, -1 if bad. */
static int slurm_tasks_per_node(const char *s, int *counts, int cap)
{
    int n = 0;
    while (*s) {
        char *end;
        long c = strtol(s, &end, 10), times = 1;
        if (end == s || c < 0)
            return -1;
        if (!strncmp(end, "(x", 2)) {
            times = strtol(end + 2, &end, 10);
            if (times < 1 || *end++ != ')')
                return -1;
        }
        for (long i = 0; i < times; i++) {
            if (n >= cap)
                return -1;
            counts[n++] = (int)c;
        }
        if (*end && *end != ',')
            return -1;
        s = *end ? end + 1 : end;
    }
    return n;
}

struct step_walk {
    const int *counts;
    int ncounts, at, ncomp, mine, only_mine;
    int *sizes;
};

/* Adds each step node's task count to its component's size. */
static int step_node(const char *host, void *arg)
{
    struct step_walk *w = arg;
    if (w->at >= w->ncounts)
        return -1;
    int k = slurm_component_of(host, w->ncomp);
    if (k < 0)
        return -1;
    w->sizes[k] += w->counts[w->at++];
    w->only_mine &= k == w->mine;
    return 0;
}

/* PB rank and size of this task: its step is either its component's alone (srun --het-group=K:
 * SLURM_PROCID counts in the component) or the whole het step (srun A : B: SLURM_PROCID counts
 * over every component, component 0's tasks first). */
static int slurm_het_rank(wio_config *c, int ncomp)
{
    const char *nodes = getenv("SLURM_STEP_NODELIST"), *tpn = getenv("SLURM_STEP_TASKS_PER_NODE");
    int procid = 0, ntasks = 0, have, rc;
    if (!nodes || !tpn)
        return wio_fail(WAITIO_ERR_ENV, "Slurm heterogeneous job: SLURM_STEP_NODELIST or "
                        "SLURM_STEP_TASKS_PER_NODE is missing (start the PBs with srun)");
    if ((rc = env_int("SLURM_PROCID", 0, 1 << 24, &procid, &have)) || !have ||
        (rc = env_int("SLURM_STEP_NUM_TASKS", 1, 1 << 24, &ntasks, &have)) || !have)
        return rc ? rc : wio_fail(WAITIO_ERR_ENV, "Slurm heterogeneous job: SLURM_PROCID or "
                                  "SLURM_STEP_NUM_TASKS is missing (start the PBs with srun)");
    int *counts = calloc(SLURM_MAX_NODES, sizeof *counts), sizes[SLURM_MAX_COMP] = {0};
    if (!counts)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    struct step_walk w = {counts, 0, 0, ncomp, c->pbid, 1, sizes};
    w.ncounts = slurm_tasks_per_node(tpn, counts, SLURM_MAX_NODES);
    int bad = w.ncounts < 1 || hostlist_each(nodes, step_node, &w) != 0 || w.at != w.ncounts;
    free(counts);
    if (bad)
        return wio_fail(WAITIO_ERR_ENV, "Slurm heterogeneous job: cannot map the step's nodes "
                        "(SLURM_STEP_NODELIST=%s, SLURM_STEP_TASKS_PER_NODE=%s) to components; "
                        "set WAITIO_PBID and WAITIO_NPB", nodes, tpn);
    int offset = 0;
    for (int k = 0; !w.only_mine && k < c->pbid; k++)
        offset += sizes[k];
    c->local_size = w.only_mine ? ntasks : sizes[c->pbid];
    c->local_rank = procid - offset;
    if (c->local_rank < 0 || c->local_rank >= c->local_size)
        return wio_fail(WAITIO_ERR_ENV, "Slurm heterogeneous job: task %d is not among component "
                        "%d's %d tasks", procid, c->pbid, c->local_size);
    c->local_source = w.only_mine ? "Slurm: SLURM_PROCID in the component's own step"
                                  : "Slurm: SLURM_PROCID in the heterogeneous step, less the "
                                    "tasks of the components before";
    return 0;
}

/* Number of components of the Slurm het job this process runs in; 0 when it runs in none. */
static int slurm_het_size(void)
{
    const char *v = getenv("SLURM_HET_SIZE");
    if (!v)
        v = getenv("SLURM_PACK_SIZE");
    int n = v ? atoi(v) : 0;
    return n >= 2 && n <= SLURM_MAX_COMP && getenv("SLURM_PROCID") ? n : 0;
}

/* PB = component, PB ranks from Slurm, master = first node of component 0 on port 27182 plus
 * the job id modulo 1000 (het jobs that share a first node then do not collide). Applies when
 * neither WAITIO_NPB nor WAITIO_PBID is set; WAITIO_MASTER_HOST/PORT and WAITIO_PB_RANK/SIZE
 * still win one by one. */
static int config_from_slurm(wio_config *c)
{
    int ncomp = slurm_het_size();
    if (!ncomp || wio_env("WAITIO_NPB") || wio_env("WAITIO_PBID"))
        return 0;
    const char *node = getenv("SLURMD_NODENAME");
    int k = node ? slurm_component_of(node, ncomp) : -1;
    if (k < 0)
        return wio_fail(WAITIO_ERR_ENV, "Slurm heterogeneous job of %d components: %s; give each "
                        "component its PB with WAITIO_PBID (srun --export=ALL,WAITIO_PBID=K) and "
                        "WAITIO_NPB=%d", ncomp, !node ? "SLURMD_NODENAME is not set"
                        : k == -2 ? "this node belongs to several components, which share it"
                        : "no SLURM_JOB_NODELIST_HET_GROUP_K lists this node", ncomp);
    c->npb = ncomp;
    c->npb_explicit = 1;
    c->pbid = k;
    int rc = strcmp(c->local_source, "WAITIO_PB_RANK") ? slurm_het_rank(c, ncomp) : 0;
    if (rc)
        return rc;
    const char *nodes0 = slurm_group_nodes(0);
    if (!c->master_set && (!nodes0 || hostlist_each(nodes0, host_first, c->master_host) != 1))
        return wio_fail(WAITIO_ERR_ENV, "Slurm heterogeneous job: component 0's node list is "
                        "missing or malformed (SLURM_JOB_NODELIST_HET_GROUP_0)");
    c->master_set = 1;
    int job = 0, have = 0;
    if (!wio_env("WAITIO_MASTER_PORT") && !(rc = env_int("SLURM_JOB_ID", 0, 1 << 30, &job, &have)) && have)
        c->master_port = DEFAULT_MASTER_PORT + job % 1000;
    return rc;
}

/* The variables that describe an instance; with none of them set, a process is either part of a
 * one-job MPMD launch (through the MPI adapter) or a PB of its own. */
static const char *const instance_vars[] = {"WAITIO_NPB", "WAITIO_PBID", "WAITIO_MASTER_HOST",
                                            "WAITIO_MASTER_PORT", "WAITIO_RENDEZVOUS"};

int wio_config_instance_vars_set(void)
{
    int n = 0;
    for (size_t i = 0; i < sizeof instance_vars / sizeof instance_vars[0]; i++)
        n += wio_env(instance_vars[i]) != NULL;
    /* a Slurm het job describes the instance too: each component is a PB of its own, never a
     * one-job MPMD launch (config_from_slurm) */
    return n + (slurm_het_size() > 0);
}

int wio_config_load(wio_config *c)
{
    int rc;
    memset(c, 0, sizeof *c);
    c->master_set = wio_env("WAITIO_MASTER_HOST") && *wio_env("WAITIO_MASTER_HOST");
    c->npb = 1;
    c->master_port = DEFAULT_MASTER_PORT;
    c->eager_limit = DEFAULT_EAGER_LIMIT;
    c->chunk_size = DEFAULT_CHUNK_SIZE;
    c->eager_credit = 0; /* auto: see wio_config_credit_per_peer */
    c->unexpected_max = DEFAULT_UNEXPECTED_MAX;
    c->spin_us = 50;
    c->yield_us = 2000;
    c->connect_timeout = 30;
    c->handshake_timeout = 5;
    c->max_handshakes = 64;
    c->finalize_timeout = 5;
    c->peer_timeout = 30;
    c->shm_ring = 1u << 20;
    c->single_copy = -1;
    c->max_procs = (int)WIO_PROCS_DEFAULT;
    if ((rc = env_int("WAITIO_NPB", 1, 1 << 16, &c->npb, &c->npb_explicit)) ||
        (rc = env_int("WAITIO_PBID", 0, 1 << 16, &c->pbid, NULL)) ||
        (rc = env_int("WAITIO_MASTER_PORT", 1, 65535, &c->master_port, NULL)) ||
        (rc = env_string("WAITIO_MASTER_HOST", c->master_host, sizeof c->master_host, "127.0.0.1")) ||
        (rc = env_string("WAITIO_RENDEZVOUS", c->rendezvous, sizeof c->rendezvous, "")) ||
        (rc = env_string("WAITIO_IFACE", c->iface, sizeof c->iface, "")) ||
        (rc = load_file_mode(c)) || (rc = choose_transports(c)) ||
        (rc = env_size("WAITIO_SHM_RING", WIO_SHM_RING_MIN, WIO_SHM_RING_MAX, &c->shm_ring)) ||
        (rc = env_size("WAITIO_EAGER_LIMIT", 0, WIO_EAGER_HARD_MAX, &c->eager_limit)) ||
        (rc = env_size("WAITIO_CHUNK_SIZE", 4096, WIO_CHUNK_HARD_MAX, &c->chunk_size)) ||
        (rc = env_size("WAITIO_EAGER_CREDIT", 0, (size_t)1 << 31, &c->eager_credit)) ||
        (rc = env_size("WAITIO_UNEXPECTED_MAX", 0, (size_t)1 << 40, &c->unexpected_max)) ||
        (rc = env_double("WAITIO_SPIN_US", 0, 1e7, &c->spin_us)) ||
        (rc = env_double("WAITIO_YIELD_US", 0, 1e7, &c->yield_us)) ||
        (rc = env_double("WAITIO_CONNECT_TIMEOUT", 0.1, 1e6, &c->connect_timeout)) ||
        (rc = env_double("WAITIO_HANDSHAKE_TIMEOUT", 0.1, 1e6, &c->handshake_timeout)) ||
        (rc = env_int("WAITIO_MAX_HANDSHAKES", 1, 1 << 20, &c->max_handshakes, NULL)) ||
        (rc = env_int("WAITIO_BIND_ALL", 0, 1, &c->bind_all, NULL)) ||
        (rc = env_int("WAITIO_SHM_FENCED", 0, 1, &c->shm_fenced, NULL)) ||
        (rc = env_double("WAITIO_FINALIZE_TIMEOUT", 0, 1e6, &c->finalize_timeout)) ||
        (rc = env_double("WAITIO_PEER_TIMEOUT", 1, 1e6, &c->peer_timeout)) ||

        (rc = env_long("WAITIO_MAX_CONNECTIONS", 0, 1 << 24, &c->max_connections)) ||
        (rc = env_auto_bool("WAITIO_SINGLE_COPY", &c->single_copy)) ||
        (rc = env_string("WAITIO_TRACE", c->trace_dir, sizeof c->trace_dir, "")) ||
        (rc = env_int("WAITIO_STATS", 0, 1, &c->stats, NULL)) ||
        (rc = env_int("WAITIO_MAX_PROCS", 1, (int)WIO_PROCS_MAX, &c->max_procs, NULL)) ||
        (rc = load_local_rank(c)) || (rc = config_from_slurm(c)))
        return rc;
    if (c->shm_ring & (c->shm_ring - 1))
        return wio_fail(WAITIO_ERR_ENV, "WAITIO_SHM_RING=%zu is not a power of two", c->shm_ring);
    if (c->pbid >= c->npb)
        return wio_fail(WAITIO_ERR_ENV, "WAITIO_PBID=%d is not below WAITIO_NPB=%d", c->pbid, c->npb);
    return 0;
}

uint32_t wio_config_max_conns(const wio_config *c)
{
    uint32_t n = (uint32_t)c->max_connections;
    struct rlimit rl;
    if (!n && getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        /* keep some for the program */
        n = rl.rlim_cur > 128 ? (uint32_t)(rl.rlim_cur - 64) : rl.rlim_cur > 16 ? (uint32_t)(rl.rlim_cur / 2) : 8;
    return n;
}

size_t wio_config_credit_per_peer(const wio_config *c, uint32_t npeers)
{
    if (c->eager_credit)
        return c->eager_credit;
    size_t share = c->unexpected_max / (npeers ? npeers : 1);
    size_t cap = (size_t)4 << 20;
    return share < cap ? share : cap;
}
