/*
 * shmem_spec_teams_ctx.c — the scenarios of the OpenSHMEM 1.5 specification's team and context
 * examples: shmem_team_split_strided (the even PEs), shmem_team_translate_pe, shmem_team_split_2D
 * (a grid split twice, the middle team destroyed, reductions on the row and column teams),
 * shmem_sync (teams of every 2nd and 3rd PE), shmem_team_context (a context per team, puts to a
 * team neighbour, an atomic through a context of another team), shmem_ctx_pipelined_reduce (two
 * contexts alternating), shmem_ctx (threads of SHMEM_THREAD_MULTIPLE taking tasks with private
 * contexts), shmem_ctx_invalid (a thread-local context starting as SHMEM_CTX_INVALID) and, made
 * well-defined, amo_scenario_1 (atomics through a context of SHMEM_TEAM_SHARED). The threads are
 * POSIX threads where the examples use OpenMP. All values are exact and checked on every PE.
 */
#include <pthread.h>
#include <stdint.h>
#include "shmtest.h"

#define LEN 8192
#define PLEN 512
#define THREADS 2
#define NTASKS 200
#define COUNT 4096

static int g_x;
static int g_ival2, g_ival3, g_isum;
static int g_in[LEN], g_out[LEN];
static long g_task_cntr;
static uint64_t g_shared_x;

static void teams_split(int me, int n)
{
    st_phase = "team_split_strided example";
    shmem_team_t evens = SHMEM_TEAM_INVALID;
    int rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (n + 1) / 2, NULL, 0, &evens);
    ST_CHECK(rc == 0, "split_strided returned %d", rc);
    ST_CHECK((evens != SHMEM_TEAM_INVALID) == (me % 2 == 0), "membership of PE %d", me);
    if (evens != SHMEM_TEAM_INVALID) {
        ST_CHECK(shmem_team_n_pes(evens) == (n + 1) / 2 && shmem_team_my_pe(evens) == me / 2,
                 "team %d of %d", shmem_team_my_pe(evens), shmem_team_n_pes(evens));
        st_phase = "team_translate_pe example";
        int t_pe = shmem_team_my_pe(evens);
        ST_CHECK(shmem_team_translate_pe(evens, t_pe, SHMEM_TEAM_WORLD) == me, "team -> world");
        for (int pe = 0; pe < n; pe++)
            ST_CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, pe, evens) == (pe % 2 ? -1 : pe / 2),
                     "world %d -> team", pe);
        /* a collective on the split team: the sum of the members' numbers */
        static int v, sum;
        v = me;
        ST_CHECK(shmem_int_sum_reduce(evens, &sum, &v, 1) == 0, "sum_reduce on the team");
        int k = (n + 1) / 2;
        ST_CHECK(sum == k * (k - 1), "team sum %d, expected %d", sum, k * (k - 1));
        shmem_team_destroy(evens);
    } else {
        ST_CHECK(shmem_team_my_pe(evens) == -1 && shmem_team_n_pes(evens) == -1, "queries of an invalid team");
    }
    shmem_barrier_all();
}

static void teams_2d(int me, int n)
{
    st_phase = "team_split_2D example";
    shmem_team_t xteam, yzteam, yteam, zteam;
    ST_CHECK(shmem_team_split_2d(SHMEM_TEAM_WORLD, 2, NULL, 0, &xteam, NULL, 0, &yzteam) == 0, "first split");
    int yz = shmem_team_my_pe(yzteam);
    ST_CHECK(shmem_team_my_pe(xteam) == me % 2 && yz == me / 2, "x %d yz %d", shmem_team_my_pe(xteam), yz);
    /* a reduction on each axis: the row (PEs 2r, 2r+1) and the column (x, x+2, ...) */
    static int v, rsum, csum;
    v = me;
    shmem_int_sum_reduce(xteam, &rsum, &v, 1);
    shmem_int_sum_reduce(yzteam, &csum, &v, 1);
    int row = me / 2 * 2, rwant = row + (row + 1 < n ? row + 1 : 0), cwant = 0;
    for (int pe = me % 2; pe < n; pe += 2)
        cwant += pe;
    ST_CHECK(rsum == rwant && csum == cwant, "row sum %d (want %d), column sum %d (want %d)", rsum, rwant, csum,
             cwant);
    ST_CHECK(shmem_team_split_2d(yzteam, 2, NULL, 0, &yteam, NULL, 0, &zteam) == 0, "second split");
    shmem_team_destroy(yzteam);
    ST_CHECK(shmem_team_my_pe(yteam) == yz % 2 && shmem_team_my_pe(zteam) == yz / 2, "y %d z %d",
             shmem_team_my_pe(yteam), shmem_team_my_pe(zteam));
    shmem_team_sync(zteam);
    shmem_team_destroy(zteam);
    shmem_team_destroy(yteam);
    shmem_team_destroy(xteam);
    shmem_barrier_all();
}

/* the sync example: teams of every 2nd PE from 2 and every 3rd from 3, a put around each */
static void teams_sync(int me, int n)
{
    st_phase = "sync example (teams)";
    shmem_team_t twos = SHMEM_TEAM_INVALID, threes = SHMEM_TEAM_INVALID;
    g_x = 10101;
    shmem_barrier_all();
    if (n > 2)
        shmem_team_split_strided(SHMEM_TEAM_WORLD, 2, 2, (n - 1) / 2, NULL, 0, &twos);
    if (n > 3)
        shmem_team_split_strided(SHMEM_TEAM_WORLD, 3, 3, (n - 1) / 3, NULL, 0, &threes);
    if (twos != SHMEM_TEAM_INVALID) {
        int t = shmem_team_my_pe(twos), k = shmem_team_n_pes(twos);
        shmem_int_p(&g_x, 2, shmem_team_translate_pe(twos, (t + 1) % k, SHMEM_TEAM_WORLD));
        shmem_quiet();
        shmem_team_sync(twos);
    }
    shmem_team_sync(SHMEM_TEAM_WORLD);
    if (threes != SHMEM_TEAM_INVALID) {
        int t = shmem_team_my_pe(threes), k = shmem_team_n_pes(threes);
        shmem_int_p(&g_x, 3, shmem_team_translate_pe(threes, (t + 1) % k, SHMEM_TEAM_WORLD));
        shmem_quiet();
        shmem_team_sync(threes);
    }
    int want = me && me % 3 == 0 ? 3 : me && me % 2 == 0 ? 2 : 10101;
    ST_CHECK(g_x == want, "x = %d, expected %d", g_x, want);
    shmem_barrier_all();
    if (twos != SHMEM_TEAM_INVALID)
        shmem_team_destroy(twos);
    if (threes != SHMEM_TEAM_INVALID)
        shmem_team_destroy(threes);
}

/* the team_context example: a context per team; team-relative PE numbers through each */
static shmem_ctx_t team_ctx(shmem_team_t team)
{
    shmem_ctx_t ctx = SHMEM_CTX_INVALID;
    if (team == SHMEM_TEAM_INVALID)
        return ctx;
    ST_CHECK(shmem_team_create_ctx(team, 0, &ctx) == 0 && ctx != SHMEM_CTX_INVALID, "team_create_ctx");
    shmem_team_t back = SHMEM_TEAM_INVALID;
    ST_CHECK(shmem_ctx_get_team(ctx, &back) == 0 && back == team, "ctx_get_team");
    return ctx;
}

static void send_to_neighbor(shmem_ctx_t ctx, int *val)
{
    shmem_team_t team;
    shmem_ctx_get_team(ctx, &team);
    int pe = shmem_team_my_pe(team), k = shmem_team_n_pes(team);
    shmem_ctx_int_put(ctx, val, &pe, 1, (pe + 1) % k);
}

static void team_context(int me, int n)
{
    st_phase = "team_context example";
    int n2 = (n + 1) / 2, n3 = (n + 2) / 3;
    shmem_team_t t2 = SHMEM_TEAM_INVALID, t3 = SHMEM_TEAM_INVALID;
    shmem_team_config_t conf = {.num_contexts = 1};
    g_ival2 = g_ival3 = -1;
    g_isum = 0;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, n2, &conf, SHMEM_TEAM_NUM_CONTEXTS, &t2);
    shmem_team_sync(SHMEM_TEAM_WORLD); /* between splits of one parent into overlapping teams */
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 3, n3, &conf, SHMEM_TEAM_NUM_CONTEXTS, &t3);
    if (t2 != SHMEM_TEAM_INVALID) {
        shmem_team_config_t got = {0};
        ST_CHECK(shmem_team_get_config(t2, SHMEM_TEAM_NUM_CONTEXTS, &got) == 0 && got.num_contexts == 1,
                 "get_config: num_contexts %d", got.num_contexts);
    }
    shmem_ctx_t c2 = team_ctx(t2), c3 = team_ctx(t3);
    if (c2 != SHMEM_CTX_INVALID)
        send_to_neighbor(c2, &g_ival2);
    if (c3 != SHMEM_CTX_INVALID)
        send_to_neighbor(c3, &g_ival3);
    if (c2 != SHMEM_CTX_INVALID)
        shmem_ctx_quiet(c2);
    if (c3 != SHMEM_CTX_INVALID)
        shmem_ctx_quiet(c3);
    shmem_team_sync(SHMEM_TEAM_WORLD);
    if (me % 2 == 0)
        ST_CHECK(g_ival2 == (me / 2 + n2 - 1) % n2, "ival2 = %d", g_ival2);
    if (me % 3 == 0)
        ST_CHECK(g_ival3 == (me / 3 + n3 - 1) % n3, "ival3 = %d", g_ival3);
    /* members of both add their values on PE 0 of the 3s team, named in the 2s team's numbers */
    if (c2 != SHMEM_CTX_INVALID && c3 != SHMEM_CTX_INVALID) {
        shmem_team_t s3, s2;
        shmem_ctx_get_team(c3, &s3);
        shmem_ctx_get_team(c2, &s2);
        int target = shmem_team_translate_pe(s3, 0, s2);
        ST_CHECK(target == 0, "PE 0 of the 3s team is %d in the 2s team", target);
        if (target >= 0)
            shmem_ctx_int_atomic_add(c2, &g_isum, g_ival2 + g_ival3, target);
        shmem_ctx_quiet(c2);
    }
    shmem_team_sync(SHMEM_TEAM_WORLD);
    if (me == 0) {
        int want = 0;
        for (int p = 0; p < n; p += 6)
            want += (p / 2 + n2 - 1) % n2 + (p / 3 + n3 - 1) % n3;
        ST_CHECK(g_isum == want, "isum = %d, expected %d", g_isum, want);
    }
    if (c2 != SHMEM_CTX_INVALID)
        shmem_ctx_destroy(c2);
    if (c3 != SHMEM_CTX_INVALID)
        shmem_ctx_destroy(c3);
    if (t2 != SHMEM_TEAM_INVALID)
        shmem_team_destroy(t2);
    if (t3 != SHMEM_TEAM_INVALID)
        shmem_team_destroy(t3);
    shmem_barrier_all();
}

/* the pipelined reduction: stage p's puts on one context while stage p-1 is summed */
static void pipelined_reduce(int me, int n)
{
    st_phase = "ctx_pipelined_reduce example";
    int *pbuf[2];
    shmem_ctx_t ctx[2];
    pbuf[0] = shmem_malloc(PLEN * n * sizeof(int));
    pbuf[1] = shmem_malloc(PLEN * n * sizeof(int));
    int r0 = shmem_ctx_create(0, &ctx[0]), r1 = shmem_ctx_create(0, &ctx[1]);
    ST_CHECK(pbuf[0] && pbuf[1] && r0 == 0 && r1 == 0, "set-up");
    if (!pbuf[0] || !pbuf[1] || r0 || r1)
        return;
    for (int i = 0; i < LEN; i++) {
        g_in[i] = me * LEN + i;
        g_out[i] = 0;
    }
    int p_idx = 0, p = 0;
    for (int i = 1; i <= n; i++)
        shmem_put_nbi(ctx[p_idx], &pbuf[p_idx][PLEN * me], &g_in[PLEN * p], PLEN, (me + i) % n);
    for (p = 1; p < LEN / PLEN; p++) {
        p_idx ^= 1;
        for (int i = 1; i <= n; i++)
            shmem_put_nbi(ctx[p_idx], &pbuf[p_idx][PLEN * me], &g_in[PLEN * p], PLEN, (me + i) % n);
        shmem_ctx_quiet(ctx[p_idx ^ 1]);
        shmem_sync_all();
        for (int i = 0; i < n; i++)
            for (int j = 0; j < PLEN; j++)
                g_out[PLEN * (p - 1) + j] += pbuf[p_idx ^ 1][PLEN * i + j];
        shmem_sync_all(); /* the buffer just summed is the target of the next stage's puts */
    }
    shmem_ctx_quiet(ctx[p_idx]);
    shmem_sync_all();
    for (int i = 0; i < n; i++)
        for (int j = 0; j < PLEN; j++)
            g_out[PLEN * (p - 1) + j] += pbuf[p_idx][PLEN * i + j];
    for (int k = 0; k < LEN; k++) { /* sum over PEs q of q*LEN + k */
        int want = LEN * n * (n - 1) / 2 + n * k;
        if (g_out[k] != want) {
            ST_CHECK(0, "out[%d] = %d, expected %d", k, g_out[k], want);
            break;
        }
    }
    shmem_barrier_all();
    shmem_ctx_destroy(ctx[0]);
    shmem_ctx_destroy(ctx[1]);
    shmem_free(pbuf[1]);
    shmem_free(pbuf[0]);
}

/* the ctx example: threads take tasks from every PE's counter with private contexts */
struct task_arg {
    int me, n;
    long done;
};

static void *task_thread(void *p)
{
    struct task_arg *a = p;
    shmem_ctx_t ctx;
    if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) != 0) {
        ST_CHECK(0, "ctx_create(PRIVATE) in a thread");
        return NULL;
    }
    int task_pe = a->me;
    for (int pes_done = 0; pes_done < a->n; pes_done++) {
        long task = shmem_atomic_fetch_inc(ctx, &g_task_cntr, task_pe);
        while (task < NTASKS) {
            a->done++;
            task = shmem_atomic_fetch_inc(ctx, &g_task_cntr, task_pe);
        }
        task_pe = (task_pe + 1) % a->n;
    }
    shmem_ctx_destroy(ctx);
    return NULL;
}

static void ctx_tasks(int me, int n, int provided)
{
    st_phase = "ctx example (threads, private contexts)";
    ST_CHECK(provided == SHMEM_THREAD_MULTIPLE, "thread level %d, not SHMEM_THREAD_MULTIPLE", provided);
    if (provided != SHMEM_THREAD_MULTIPLE)
        return;
    g_task_cntr = 0;
    shmem_barrier_all();
    pthread_t th[THREADS];
    struct task_arg args[THREADS];
    for (int t = 0; t < THREADS; t++) {
        args[t] = (struct task_arg){me, n, 0};
        ST_CHECK(pthread_create(&th[t], NULL, task_thread, &args[t]) == 0, "pthread_create");
    }
    static long done, total;
    done = 0;
    for (int t = 0; t < THREADS; t++) {
        pthread_join(th[t], NULL);
        done += args[t].done;
    }
    shmem_barrier_all();
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, &total, &done, 1);
    ST_CHECK(total == (long)NTASKS * n, "%ld tasks done, expected %ld", total, (long)NTASKS * n);
    /* every thread of every PE over-fetched each counter exactly once */
    ST_CHECK(g_task_cntr == NTASKS + (long)THREADS * n, "counter %ld, expected %ld", g_task_cntr,
             NTASKS + (long)THREADS * n);
}

/* the ctx_invalid example: a library keeps one context per thread, SHMEM_CTX_INVALID until made */
static _Thread_local shmem_ctx_t thread_ctx = SHMEM_CTX_INVALID;
static int *g_src_bufs[1024], *g_dst_bufs[1024];

struct put_arg {
    int me, n, t;
};

static void *put_thread(void *p)
{
    struct put_arg *a = p;
    if (thread_ctx == SHMEM_CTX_INVALID) /* register */
        if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &thread_ctx) && shmem_ctx_create(0, &thread_ctx))
            thread_ctx = SHMEM_CTX_DEFAULT;
    for (int i = a->t; i < a->n; i += THREADS)
        shmem_ctx_putmem(thread_ctx, g_dst_bufs[a->me], g_src_bufs[i], COUNT * sizeof(int), i);
    if (thread_ctx != SHMEM_CTX_DEFAULT) { /* unregister: destroying completes the puts */
        shmem_ctx_destroy(thread_ctx);
        thread_ctx = SHMEM_CTX_INVALID;
    }
    return NULL;
}

static void ctx_invalid(int me, int n, int provided)
{
    st_phase = "ctx_invalid example";
    if (provided != SHMEM_THREAD_MULTIPLE || n > 1024)
        return;
    for (int i = 0; i < n; i++) {
        g_src_bufs[i] = shmem_calloc(COUNT, sizeof(int));
        g_dst_bufs[i] = shmem_calloc(COUNT, sizeof(int));
        ST_CHECK(g_src_bufs[i] && g_dst_bufs[i], "calloc");
        for (int j = 0; g_src_bufs[i] && j < COUNT; j++)
            g_src_bufs[i][j] = (me << 20) + (i << 12) + j;
    }
    shmem_barrier_all();
    pthread_t th[THREADS];
    struct put_arg args[THREADS];
    for (int t = 0; t < THREADS; t++) {
        args[t] = (struct put_arg){me, n, t};
        ST_CHECK(pthread_create(&th[t], NULL, put_thread, &args[t]) == 0, "pthread_create");
    }
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    shmem_barrier_all();
    for (int q = 0; q < n; q++) /* PE q's block for me */
        for (int j = 0; j < COUNT; j++)
            if (g_dst_bufs[q][j] != (q << 20) + (me << 12) + j) {
                ST_CHECK(0, "block from PE %d [%d] = %x", q, j, g_dst_bufs[q][j]);
                break;
            }
    shmem_barrier_all();
    for (int i = n - 1; i >= 0; i--) {
        shmem_free(g_dst_bufs[i]);
        shmem_free(g_src_bufs[i]);
    }
}

/* amo_scenario_1 made well-defined: every PE increments through a context of the shared team */
static void shared_ctx_amo(void)
{
    st_phase = "amo scenario 1 (context of SHMEM_TEAM_SHARED)";
    g_shared_x = 0;
    shmem_barrier_all();
    shmem_ctx_t ctx;
    ST_CHECK(shmem_team_create_ctx(SHMEM_TEAM_SHARED, 0, &ctx) == 0, "team_create_ctx(SHARED)");
    shmem_ctx_uint64_atomic_inc(ctx, &g_shared_x, 0); /* PE 0 of the shared team */
    shmem_ctx_destroy(ctx);
    shmem_barrier_all();
    if (shmem_team_my_pe(SHMEM_TEAM_SHARED) == 0)
        ST_CHECK(g_shared_x == (uint64_t)shmem_team_n_pes(SHMEM_TEAM_SHARED), "x = %llu, shared team of %d",
                 (unsigned long long)g_shared_x, shmem_team_n_pes(SHMEM_TEAM_SHARED));
}

int main(void)
{
    (void)st_begin; /* its shmem_init is replaced by shmem_init_thread here */
    st_name = "shmem_spec_teams_ctx";
    signal(SIGALRM, st_alarm);
    alarm(60);
    int provided = -1;
    if (shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided) != 0) {
        fprintf(stderr, "shmem_spec_teams_ctx: shmem_init_thread failed\n");
        return 1;
    }
    int me = shmem_my_pe(), n = shmem_n_pes();
    teams_split(me, n);
    teams_2d(me, n);
    teams_sync(me, n);
    team_context(me, n);
    pipelined_reduce(me, n);
    ctx_tasks(me, n, provided);
    ctx_invalid(me, n, provided);
    shared_ctx_amo();
    return st_end();
}
