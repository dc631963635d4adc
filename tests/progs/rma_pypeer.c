/*
 * rma_pypeer.c — the C PB of the Python binding's one-sided test (tests/python/pb_rma.py does the
 * same steps in Python; test_binding.py runs two Python PBs and this one): windows, get of every
 * member's part, fetch-add totals, put_signal + wait_until, remote calls answered by C and
 * Python handlers, fire-and-forget calls counted, a user window over a buffer.
 */
#include "testutil.h"
#include "waitio_mpi.h"
#include "waitio_rma.h"

static int calls;
static int64_t mine[64];

static int reverse(int origin, const void *args, size_t len, void *reply, size_t *reply_len, void *user)
{
    (void)origin;
    (void)user;
    if (len + 1 > *reply_len)
        return 1;
    for (size_t i = 0; i < len; i++)
        ((uint8_t *)reply)[i] = ((const uint8_t *)args)[len - 1 - i];
    ((uint8_t *)reply)[len] = 'C';
    *reply_len = len + 1;
    return 0;
}

static int count(int origin, const void *args, size_t len, void *reply, size_t *reply_len, void *user)
{
    (void)origin, (void)args, (void)len, (void)reply, (void)user;
    calls++;
    *reply_len = 0;
    return 0;
}

int main(int argc, char **argv)
{
    (void)argc;
    tu_set_name(argv[0]);
    tu_alarm(60);
    TU_CHECK(waitio_init(30));
    waitio_group_t world;
    int me, n;
    TU_CHECK(waitio_rma_world(&world));
    TU_CHECK(waitio_group_rank(world, &me));
    TU_CHECK(waitio_group_size(world, &n));
    TU_CHECK(waitio_rpc_register(5, reverse, NULL));
    TU_CHECK(waitio_rpc_register(7, count, NULL));
    waitio_win_t win;
    void *vb;
    TU_CHECK(waitio_win_allocate(world, 4096, &win, &vb));
    int64_t *a = vb;
    for (int i = 0; i < 64; i++)
        a[i] = me * 1000 + i;
    TU_CHECK(waitio_mpi_barrier(world));
    int64_t buf[64];
    for (int t = 0; t < n; t++) {
        TU_CHECK(waitio_get(win, t, 0, buf, sizeof buf));
        for (int i = 0; i < 64; i++)
            if (buf[i] != t * 1000 + i)
                TU_FAIL("part of %d, word %d: %lld", t, i, (long long)buf[i]);
    }
    for (int k = 0; k < 10; k++)
        for (int t = 0; t < n; t++) {
            int64_t add = me + 1, old;
            TU_CHECK(waitio_atomic(win, t, 64 * 8, WAITIO_AMO_ADD, WAITIO_AMO_INT64, &add, NULL, &old));
        }
    TU_CHECK(waitio_quiet());
    TU_CHECK(waitio_mpi_barrier(world));
    if (a[64] != 10 * n * (n + 1) / 2)
        TU_FAIL("counter %lld", (long long)a[64]);
    int to = (me + 1) % n, frm = (me + n - 1) % n;
    int64_t data[8];
    for (int i = 0; i < 8; i++)
        data[i] = me * 10 + i;
    TU_CHECK(waitio_put_signal(win, to, (size_t)(100 + 8 * me) * 8, data, sizeof data, win, 65 * 8, 1, WAITIO_SIGNAL_ADD));
    int64_t one = 1;
    TU_CHECK(waitio_wait_until(&a[65], WAITIO_AMO_INT64, WAITIO_CMP_GE, &one, 20));
    for (int i = 0; i < 8; i++)
        if (a[100 + 8 * frm + i] != frm * 10 + i)
            TU_FAIL("signalled data word %d: %lld", i, (long long)a[100 + 8 * frm + i]);
    char kinds[64] = "";
    for (int t = 0; t < n; t++) {
        uint8_t args[200], reply[201];
        size_t len = 2 * (50 + (size_t)t);
        for (size_t i = 0; i < len; i++)
            args[i] = (uint8_t)(i % 2 ? t : me);
        waitio_req_t rq;
        TU_CHECK(waitio_rpc(world, t, 5, args, len, reply, sizeof reply, &rq));
        TU_CHECK(waitio_wait(&rq));
        if (rq.status.len != len + 1)
            TU_FAIL("reply of %zu bytes from %d", rq.status.len, t);
        for (size_t i = 0; i < len; i++)
            if (reply[i] != args[len - 1 - i])
                TU_FAIL("reply from %d byte %zu", t, i);
        kinds[t] = (char)reply[len];
    }
    for (int t = 0; t < n; t++)
        if (t != me)
            TU_CHECK(waitio_rpc_ff(world, t, 7, "x", 1));
    double d = 2.5, dold = -1;
    TU_CHECK(waitio_atomic(win, to, 66 * 8, WAITIO_AMO_SWAP, WAITIO_AMO_DOUBLE, &d, NULL, &dold));
    TU_CHECK(waitio_quiet());
    TU_CHECK(waitio_mpi_barrier(world));
    if (calls != n - 1)
        TU_FAIL("%d fire-and-forget calls, expected %d", calls, n - 1);
    waitio_win_t uw;
    TU_CHECK(waitio_win_create(world, mine, (size_t)(16 + me) * 8, &uw));
    int64_t v = me + 100;
    TU_CHECK(waitio_put(uw, to, (size_t)(15 + to) * 8, &v, 8));
    TU_CHECK(waitio_get(uw, to, 0, buf, 16));
    TU_CHECK(waitio_flush(uw, to));
    TU_CHECK(waitio_mpi_barrier(world));
    if (mine[15 + me] != frm + 100)
        TU_FAIL("user window word %lld", (long long)mine[15 + me]);
    TU_CHECK(waitio_mpi_barrier(world));
    TU_CHECK(waitio_win_free(uw));
    TU_CHECK(waitio_win_free(win));
    printf("rma_pypeer ok: rank %d of %d, replies %s\n", me, n, kinds);
    TU_CHECK(waitio_finalize());
    return 0;
}
