/*
 * sec_rma_target.c — the processes of the one-sided security tests (sec_rma_free.sh,
 * sec_rma_flood.sh). The target is PB 0 (one process); a key holder that speaks the protocol
 * itself (tests/scripts/wio_attack.py rma-*) is PB 1 and joins the target's window on group 5;
 * it learns the window's id from the target's record in the creation's allgather. Roles:
 *
 *   target free MIB        group 5 is all three PBs, ranked PB 2 (a plain member, the barrier's
 *                          root), PB 0, PB 1: so the target's part of the free's barrier sends
 *                          nothing to the attacker, whose reply could delay it. Exposes MIB MiB of
 *                          its own memory, every byte 'A', as the window and frees it at once
 *                          (the attacker starts a GET of all of it and reads the reply slowly).
 *                          As soon as waitio_win_free returns the memory is the program's again:
 *                          it writes 'Z' over all of it, as a program reusing it would, then
 *                          serves until the attacker's message (tag 99) and checks that nothing
 *                          wrote into the memory after the free. Prints "freed after S s" and
 *                          "bytes written after the free: N".
 *   member-free            PB 2 of that case: joins the window with 1 MiB, frees it.
 *   target flood MIB       exposes MIB MiB the same way, and 1 MiB of a known pattern as a window
 *                          of group 6 ({PB 0, PB 2}) for a well-behaved member; prints "ready",
 *                          then serves until the member reports (tag 7): "served the member".
 *   member GOFILE          PB 2: joins the group 6 window, waits until GOFILE exists (the attack
 *                          is over), reads the target's part with a blocking get, checks every
 *                          byte, reports (tag 7), frees the window. Prints "member ok".
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "testutil.h"
#include "waitio_rma.h"

#define LEGIT_SIZE ((size_t)1 << 20)

static int everyone(int pb, int rank) { (void)pb; (void)rank; return 1; }
static int nobody(int pb, int rank) { (void)pb; (void)rank; return 0; }

/* Group gid of PB 0 and PB `other` (the instance has two PBs, or three). */
static waitio_group_t pair_group(int gid, int other)
{
    waitio_filter_func_t f[3] = {everyone, nobody, nobody};
    int order[3] = {1, 2, 3};
    f[other] = everyone;
    waitio_group_t g = waitio_create_group(gid, f, order);
    if (!g)
        TU_FAIL("group %d: %s", gid, waitio_error_message());
    return g;
}

/* Group 5 of the free case: PB 2, PB 0, PB 1 in that order. */
static waitio_group_t free_group(void)
{
    waitio_filter_func_t f[3] = {everyone, everyone, everyone};
    int order[3] = {2, 3, 1};
    waitio_group_t g = waitio_create_group(5, f, order);
    if (!g)
        TU_FAIL("group 5: %s", waitio_error_message());
    return g;
}

static uint8_t pattern(size_t i) { return (uint8_t)(i * 7 + 3); }

static uint8_t *map_filled(size_t size, int byte)
{
    uint8_t *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        TU_FAIL("cannot map %zu bytes", size);
    memset(p, byte, size);
    return p;
}

/* Serves (the library progresses in waitio_test) until a message with tag arrives from rank 1
 * of g or `secs` pass; 1 if it came, 0 if not, -1 if that process is gone. */
static int serve_until(waitio_group_t g, int src, unsigned long tag, double secs)
{
    char buf[16];
    waitio_req_t r;
    if (waitio_irecv(g, src, buf, sizeof buf, tag, &r))
        return -1;
    double end = tu_now() + secs;
    int done = 0;
    while (!done && tu_now() < end) {
        if (waitio_test(&r, &done))
            return -1;
        if (!done)
            usleep(1000);
    }
    return done;
}

static int target_free(size_t size)
{
    waitio_group_t g = free_group();
    uint8_t *mem = map_filled(size, 'A');
    waitio_win_t w;
    TU_CHECK(waitio_win_create(g, mem, size, &w));
    printf("window ready\n");
    fflush(stdout);
    double t0 = tu_now();
    int rc = waitio_win_free(w);
    printf("freed after %.2f s (%s)\n", tu_now() - t0, rc ? waitio_strerror(rc) : "ok");
    fflush(stdout);
    memset(mem, 'Z', size); /* the program's memory again */
    int came = serve_until(g, 2, 99, 20);
    size_t written = 0;
    for (size_t i = 0; i < size; i++)
        written += mem[i] != 'Z';
    printf("attacker finished: %s\nbytes written after the free: %zu\n",
           came > 0 ? "yes" : came < 0 ? "no, it is gone" : "no", written);
    fflush(stdout);
    munmap(mem, size);
    waitio_finalize();
    return written ? 1 : 0;
}

static int target_flood(size_t size)
{
    waitio_group_t ga = pair_group(5, 1);
    uint8_t *mem = map_filled(size, 'A');
    waitio_win_t wa, wl;
    TU_CHECK(waitio_win_create(ga, mem, size, &wa));
    waitio_group_t gl = pair_group(6, 2);
    uint8_t *legit = map_filled(LEGIT_SIZE, 0);
    for (size_t i = 0; i < LEGIT_SIZE; i++)
        legit[i] = pattern(i);
    TU_CHECK(waitio_win_create(gl, legit, LEGIT_SIZE, &wl));
    printf("ready\n");
    fflush(stdout);
    if (serve_until(gl, 1, 7, 100) != 1)
        TU_FAIL("the member never reported");
    printf("served the member\n");
    fflush(stdout);
    TU_CHECK(waitio_win_free(wl));
    /* the attacker's window is never freed (its free is collective): finalize retires it */
    waitio_finalize();
    return 0;
}

static int member_free(void)
{
    waitio_group_t g = free_group();
    uint8_t *mine = map_filled(LEGIT_SIZE, 'M');
    waitio_win_t w;
    TU_CHECK(waitio_win_create(g, mine, LEGIT_SIZE, &w));
    TU_CHECK(waitio_win_free(w));
    waitio_finalize();
    printf("member ok\n");
    return 0;
}

static int member(const char *gofile)
{
    waitio_group_t gl = pair_group(6, 2);
    uint8_t *mine = map_filled(LEGIT_SIZE, 0);
    waitio_win_t wl;
    TU_CHECK(waitio_win_create(gl, mine, LEGIT_SIZE, &wl));
    struct stat st;
    while (stat(gofile, &st) != 0)
        usleep(20000);
    uint8_t *got = map_filled(LEGIT_SIZE, 0);
    double t0 = tu_now();
    TU_CHECK(waitio_get(wl, 0, 0, got, LEGIT_SIZE));
    size_t bad = 0;
    for (size_t i = 0; i < LEGIT_SIZE; i++)
        bad += got[i] != pattern(i);
    if (bad)
        TU_FAIL("%zu bytes of the target's window read wrong", bad);
    printf("member read the target's 1 MiB in %.3f s\n", tu_now() - t0);
    char msg[4] = "ok";
    waitio_req_t r;
    TU_CHECK(waitio_isend(gl, 0, msg, sizeof msg, 7, &r));
    TU_CHECK(waitio_wait(&r));
    TU_CHECK(waitio_win_free(wl));
    TU_CHECK(waitio_finalize());
    printf("member ok\n");
    return 0;
}

int main(int argc, char **argv)
{
    tu_set_name(argv[0]);
    tu_alarm(120);
    if (argc < 2)
        TU_FAIL("usage: sec_rma_target target free|flood MIB | member GOFILE | member-free");
    TU_CHECK(waitio_init(30));
    if (!strcmp(argv[1], "member-free"))
        return member_free();
    if (argc < 3)
        TU_FAIL("usage: sec_rma_target target free|flood MIB | member GOFILE | member-free");
    if (!strcmp(argv[1], "member"))
        return member(argv[2]);
    if (argc < 4)
        TU_FAIL("usage: sec_rma_target target free|flood MIB");
    size_t size = (size_t)atol(argv[3]) << 20;
    if (!strcmp(argv[2], "free"))
        return target_free(size);
    if (!strcmp(argv[2], "flood"))
        return target_flood(size);
    TU_FAIL("unknown mode %s", argv[2]);
}
