/*
 * shmem_threads.c — SHMEM_THREAD_MULTIPLE: shmem_init_thread grants it and shmem_query_thread
 * reports it; then 4 threads per PE at once:
 *   mix       each thread puts a pattern into its slot of a heap array and of a global array on
 *             the next PE, quiets, reads both back with blocking gets (every byte checked), adds
 *             to a counter on the next PE with fetch_add (the values each PE's threads fetched
 *             are exactly 0..total-1: no add lost or doubled), and passes a token round the ring
 *             of PEs through a put and a wait_until (its own slot per thread);
 *   barrier   one thread of each PE enters shmem_barrier_all (PE 0 at once, the others after a
 *             flag from the previous PE) while the flag each PE's next one waits for is put by
 *             another thread of this PE only later: a barrier that held WaitIO's lock while it
 *             waits would keep that put, and with it the next PE and the barrier, from ever
 *             happening;
 *   get-loop  one thread reads a global on the next PE with blocking gets until it holds a value
 *             that another thread of the same PE puts there only later (the getter must not
 *             keep the putter out).
 * After the threads end, each PE checks what the previous PE's threads left in its arrays. The
 * globals go through WaitIO on every transport; the heap too over tcp or with WAITIO_RMA_DIRECT=0.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include "shmtest.h"

#define NT 4      /* worker threads per PE */
#define ROUNDS 12
#define M 48      /* longs per thread's slot */
#define ADDS 40   /* fetch_adds per thread and round */

static long g_slot[NT][M];    /* global: the data window */
static long g_token[NT];      /* the ring token, one per thread index */
static long g_flag;           /* barrier phase: set by the previous PE */
static long g_getme;          /* get-loop phase: set on this PE by the previous PE's putter */
static long g_counter;        /* fetch_add target (added to by the previous PE's threads) */

static long *h_slot;          /* heap: NT * M longs */
static atomic_long errors;
static int me, npes, right, left;
static long fetched[NT][ROUNDS * ADDS];

#define T_CHECK(cond, ...)                                                                         \
    do {                                                                                           \
        if (!(cond) && atomic_fetch_add(&errors, 1) < 30) {                                        \
            fprintf(stderr, "shmem_threads: PE %d: FAIL (%s:%d, %s): ", me, __FILE__, __LINE__,   \
                    st_phase);                                                                     \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

static long pattern(int pe, int t, int r, int i) { return ((long)pe << 40) ^ ((long)t << 32) ^ ((long)r << 16) ^ (i * 2654435761L); }

static void sleep_ms(int ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

static void *mix(void *arg)
{
    int t = (int)(intptr_t)arg;
    long out[M], back[M];
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < M; i++)
            out[i] = pattern(me, t, r, i);
        shmem_long_put(&h_slot[t * M], out, M, right);
        shmem_long_put(g_slot[t], out, M, right);
        shmem_quiet();
        memset(back, 0, sizeof back);
        shmem_long_get(back, &h_slot[t * M], M, right);
        for (int i = 0; i < M; i++)
            T_CHECK(back[i] == out[i], "heap slot %d[%d] on PE %d: %lx, expected %lx", t, i, right, back[i], out[i]);
        memset(back, 0, sizeof back);
        shmem_long_get(back, g_slot[t], M, right);
        for (int i = 0; i < M; i++)
            T_CHECK(back[i] == out[i], "global slot %d[%d] on PE %d: %lx, expected %lx", t, i, right, back[i], out[i]);
        for (int k = 0; k < ADDS; k++)
            fetched[t][r * ADDS + k] = shmem_long_atomic_fetch_add(&g_counter, 1, right);
        /* the token: this thread's slot on the next PE says round r+1, then wait for the
         * previous PE's thread t to say the same here */
        shmem_long_atomic_set(&g_token[t], r + 1, right);
        shmem_long_wait_until(&g_token[t], SHMEM_CMP_GE, r + 1);
    }
    return NULL;
}

static void *barrier_side(void *arg)
{
    (void)arg;
    if (me != 0)
        shmem_long_wait_until(&g_flag, SHMEM_CMP_EQ, 1);
    shmem_barrier_all();
    return NULL;
}

static void *flag_putter(void *arg)
{
    (void)arg;
    sleep_ms(30); /* the other thread is deep in its wait (past spinning and yielding) */
    if (right != 0)
        shmem_long_atomic_set(&g_flag, 1, right);
    return NULL;
}

static void *getter(void *arg)
{
    long want = (long)(intptr_t)arg;
    long seen = 0;
    for (unsigned n = 0; seen != want; n++)
        seen = shmem_long_g(&g_getme, right);
    return NULL;
}

static void *get_putter(void *arg)
{
    long v = (long)(intptr_t)arg;
    sleep_ms(20);
    shmem_long_p(&g_getme, v, right); /* the getter of this PE reads it there */
    shmem_quiet();
    return NULL;
}

static void run(void *(*fn[])(void *), void *args[], int n)
{
    pthread_t tid[NT];
    for (int i = 0; i < n; i++)
        if (pthread_create(&tid[i], NULL, fn[i], args[i]) != 0) {
            fprintf(stderr, "shmem_threads: PE %d: pthread_create failed\n", me);
            _exit(1);
        }
    for (int i = 0; i < n; i++)
        pthread_join(tid[i], NULL);
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

int main(void)
{
    (void)st_begin; /* shmem_init_thread instead of its shmem_init */
    st_name = "shmem_threads";
    signal(SIGALRM, st_alarm);
    alarm(40); /* before the script's deadline: a hang names its phase */
    int provided = -1;
    int rc = shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    right = (me + 1) % npes;
    left = (me + npes - 1) % npes;
    st_phase = "init_thread";
    ST_CHECK(rc == 0 && provided == SHMEM_THREAD_MULTIPLE, "shmem_init_thread: rc %d provided %d", rc, provided);
    int q = -1;
    shmem_query_thread(&q);
    ST_CHECK(q == SHMEM_THREAD_MULTIPLE, "shmem_query_thread: %d", q);
    h_slot = shmem_calloc(NT * M, sizeof(long));
    ST_CHECK(h_slot != NULL, "shmem_calloc");

    st_phase = "mix";
    void *(*mixes[NT])(void *) = {mix, mix, mix, mix};
    void *targs[NT];
    for (int t = 0; t < NT; t++)
        targs[t] = (void *)(intptr_t)t;
    run(mixes, targs, NT);
    shmem_barrier_all();
    ST_CHECK(g_counter == (long)NT * ROUNDS * ADDS, "counter %ld, expected %ld", g_counter, (long)NT * ROUNDS * ADDS);
    static long all[NT * ROUNDS * ADDS];
    memcpy(all, fetched, sizeof all);
    qsort(all, NT * ROUNDS * ADDS, sizeof(long), cmp_long);
    for (long i = 0; i < NT * ROUNDS * ADDS; i++)
        if (all[i] != i) {
            ST_CHECK(0, "the fetched values are not 0..%d: sorted[%ld] = %ld", NT * ROUNDS * ADDS - 1, i, all[i]);
            break;
        }
    for (int t = 0; t < NT; t++) {
        ST_CHECK(g_token[t] == ROUNDS, "token %d: %ld", t, g_token[t]);
        for (int i = 0; i < M; i++) {
            long want = pattern(left, t, ROUNDS - 1, i);
            ST_CHECK(h_slot[t * M + i] == want, "heap slot %d[%d]: %lx, expected %lx", t, i, h_slot[t * M + i], want);
            ST_CHECK(g_slot[t][i] == want, "global slot %d[%d]: %lx, expected %lx", t, i, g_slot[t][i], want);
        }
    }

    st_phase = "barrier while another thread must put";
    for (int rep = 0; rep < 2; rep++) {
        void *(*fns[2])(void *) = {barrier_side, flag_putter};
        void *none[2] = {NULL, NULL};
        run(fns, none, 2);
        g_flag = 0;
        shmem_barrier_all(); /* nobody sets it again before everyone reset it */
    }

    st_phase = "blocking gets while another thread must put";
    for (int rep = 1; rep <= 2; rep++) {
        void *(*fns[2])(void *) = {getter, get_putter};
        void *vals[2] = {(void *)(intptr_t)rep, (void *)(intptr_t)rep};
        run(fns, vals, 2);
        shmem_barrier_all();
        ST_CHECK(g_getme == rep, "get-loop value %ld, expected %d", g_getme, rep);
    }

    st_errors += atomic_load(&errors);
    shmem_free(h_slot);
    return st_end();
}
