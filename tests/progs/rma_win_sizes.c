/*
 * rma_win_sizes.c — issue 25 item 5: window creation with sizes that overflow fails with
 * WAITIO_ERR_ARG on every member, collectively, and nothing hangs (tests/scripts/sec_win_sizes.sh).
 * Before the fix waitio_win_allocate(g, SIZE_MAX - 4094) succeeded with base NULL and size
 * SIZE_MAX (the page-rounded stride wrapped to 0): every member could then read and write any
 * address of the others. Cases, every process of the world group calling each:
 *   A  waitio_win_allocate(SIZE_MAX - 4094)            all: WAITIO_ERR_ARG
 *   B  waitio_win_allocate(SIZE_MAX)                   all: WAITIO_ERR_ARG
 *   C  waitio_win_allocate(PTRDIFF_MAX - 100)          all: WAITIO_ERR_ARG (no window that large)
 *   D  rank 0 SIZE_MAX - 4094, the others 4096         all: WAITIO_ERR_ARG (no hang)
 *   E  waitio_win_create(UINTPTR_MAX - 100, 4096)      all: WAITIO_ERR_ARG (wraps around)
 *   F  rank 0 as E, the others a valid buffer          all: WAITIO_ERR_ARG (no hang)
 *   G  normal heap and user windows afterwards: put to the next rank, read back, byte for byte.
 * Where a case wrongly succeeds, the program shows what that window gives: the next rank reads
 * a private buffer of the others (not in any window) through it. Prints "rma_win_sizes ok: N".
 */
#include <stdint.h>
#include <stddef.h>
#include "testutil.h"
#include "waitio_mpi.h"
#include "waitio_rma.h"

static waitio_group_t world;
static int me, n;
static char secret[64];               /* in no window */

static void barrier(void) { TU_CHECK(waitio_mpi_barrier(world)); }

/* A window that should not exist: the next rank reads rank (me+1)%n's secret through it at the
 * secret's absolute address (learnt from a legitimate user window), then everyone frees it. */
static void show_escape(waitio_win_t w, const char *what)
{
    uint64_t addr = (uint64_t)(uintptr_t)secret, theirs = 0;
    waitio_win_t aw;
    TU_CHECK(waitio_win_create(world, &addr, sizeof addr, &aw));
    int to = (me + 1) % n;
    TU_CHECK(waitio_get(aw, to, 0, &theirs, sizeof theirs));
    char got[64] = "";
    size_t base_size = 0;
    void *b = NULL;
    waitio_win_base(w, &b, &base_size);
    int rc = waitio_get(w, to, (size_t)theirs, got, sizeof got - 1);
    TU_ERR("%s succeeded (base %p, size %zu); reading rank %d's private memory through it: %s%s", what, b,
           base_size, to, rc ? waitio_strerror(rc) : "OK, got: ", rc ? "" : got);
    barrier();
    TU_CHECK(waitio_win_free(aw));
    TU_CHECK(waitio_win_free(w));
}

static void expect_alloc(const char *name, size_t size, int want)
{
    tu_phase("%s: waitio_win_allocate(%zu)", name, size);
    waitio_win_t w = NULL;
    void *base = (void *)1;
    double t0 = tu_now();
    int rc = waitio_win_allocate(world, size, &w, &base);
    printf("rma_win_sizes: rank %d case %s: waitio_win_allocate(%zu) = %s (%.3f s)\n", me, name, size,
           rc ? tu_code_name(rc) : "OK", tu_now() - t0);
    if (!rc) {
        show_escape(w, name);
        return;
    }
    if (rc != want)
        TU_ERR("case %s: waitio_win_allocate(%zu) failed with %s, expected %s (%s)", name, size,
               tu_code_name(rc), tu_code_name(want), waitio_error_message());
}

static void expect_create(const char *name, void *base, size_t size, int want)
{
    tu_phase("%s: waitio_win_create(%p, %zu)", name, base, size);
    waitio_win_t w = NULL;
    int rc = waitio_win_create(world, base, size, &w);
    printf("rma_win_sizes: rank %d case %s: waitio_win_create(%p, %zu) = %s\n", me, name, base, size,
           rc ? tu_code_name(rc) : "OK");
    if (!rc) {
        show_escape(w, name);
        return;
    }
    if (rc != want)
        TU_ERR("case %s: waitio_win_create failed with %s, expected %s (%s)", name, tu_code_name(rc),
               tu_code_name(want), waitio_error_message());
}

static void normal_windows(void)
{
    tu_phase("G: normal windows");
    int to = (me + 1) % n, from = (me + n - 1) % n;
    waitio_win_t w, u;
    void *vb;
    static uint8_t user[4096];
    TU_CHECK(waitio_win_allocate(world, 4096, &w, &vb));
    TU_CHECK(waitio_win_create(world, user, sizeof user, &u));
    uint8_t pat[4096], back[4096];
    for (size_t i = 0; i < sizeof pat; i++)
        pat[i] = (uint8_t)(i * 7 + me);
    TU_CHECK(waitio_put(w, to, 0, pat, sizeof pat));
    TU_CHECK(waitio_put(u, to, 0, pat, sizeof pat));
    TU_CHECK(waitio_quiet());
    barrier();
    const uint8_t *hb = vb;
    for (size_t i = 0; i < sizeof pat; i++)
        if (hb[i] != (uint8_t)(i * 7 + from) || user[i] != (uint8_t)(i * 7 + from)) {
            TU_ERR("normal window byte %zu: heap %u, user %u, expected %u", i, hb[i], user[i], (uint8_t)(i * 7 + from));
            break;
        }
    TU_CHECK(waitio_get(w, to, 0, back, sizeof back));
    if (memcmp(back, pat, sizeof pat))
        TU_ERR("heap window read back differs");
    TU_CHECK(waitio_get(u, to, 0, back, sizeof back));
    if (memcmp(back, pat, sizeof pat))
        TU_ERR("user window read back differs");
    barrier();
    TU_CHECK(waitio_win_free(u));
    TU_CHECK(waitio_win_free(w));
}

int main(int argc, char **argv)
{
    (void)argc;
    tu_set_name(argv[0]);
    tu_alarm(50);
    tu_rma_start(&world, &me, &n);
    snprintf(secret, sizeof secret, "PRIVATE-OF-RANK-%d", me);
    expect_alloc("A", SIZE_MAX - 4094, WAITIO_ERR_ARG);
    expect_alloc("B", SIZE_MAX, WAITIO_ERR_ARG);
    expect_alloc("C", (size_t)PTRDIFF_MAX - 100, WAITIO_ERR_ARG);
    expect_alloc("D", me == 0 ? SIZE_MAX - 4094 : 4096, WAITIO_ERR_ARG);
    expect_create("E", (void *)(UINTPTR_MAX - 100), 4096, WAITIO_ERR_ARG);
    static uint8_t ok_buf[4096];
    expect_create("F", me == 0 ? (void *)(UINTPTR_MAX - 100) : (void *)ok_buf, 4096, WAITIO_ERR_ARG);
    normal_windows();
    barrier();
    TU_CHECK(waitio_finalize());
    if (tu_errors)
        return 1;
    if (me == 0)
        printf("rma_win_sizes ok: %d processes\n", n);
    return 0;
}
