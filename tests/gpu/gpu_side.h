/*
 * gpu_side.h — what the two-sided GPU test programs (gpu_p2p.c, gpu_pipe.c) share: a buffer of
 * either kind (device memory from the test's own driver handle, gpu_testdrv.h, or host memory)
 * and one checked exchange between two processes. Header-only; include after gpu_testdrv.h and
 * testutil.h.
 */
#ifndef WAITIO_GPU_SIDE_H
#define WAITIO_GPU_SIDE_H

#define CANARY 64

typedef struct side {
    int dev;      /* device memory */
    uint8_t *mem; /* the buffer (a device pointer when dev) */
} side;

static void side_alloc(side *s, int dev, size_t cap)
{
    s->dev = dev;
    s->mem = dev ? td_alloc(cap) : tu_xmalloc(cap);
}

static void side_free(side *s)
{
    if (s->dev)
        td_free(s->mem);
    else
        free(s->mem);
}

static void side_put(side *s, size_t off, const uint8_t *src, size_t n)
{
    if (s->dev)
        td_put(s->mem + off, src, n);
    else
        memcpy(s->mem + off, src, n);
}

static void side_get(side *s, size_t off, uint8_t *dst, size_t n)
{
    if (s->dev)
        td_get(dst, s->mem + off, n);
    else
        memcpy(dst, s->mem + off, n);
}

/* One exchange: both send len bytes to each other (tag), from snd's kind into rcv's, at random
 * offsets; every byte is checked, and the CANARY bytes after the receive must stay intact. */
static void exchange(waitio_group_t g, int me, int peer, side *snd, side *rcv, size_t len, uint64_t tag,
                     uint32_t seq, uint64_t salt, uint8_t *host, uint8_t *check, tu_rng *rng)
{
    size_t soff = (size_t)tu_rng_below(rng, 64), roff = (size_t)tu_rng_below(rng, 64);
    tu_msg_fill(host, len, me, peer, tag, seq, salt);
    side_put(snd, soff, host, len);
    uint8_t canary[CANARY];
    for (int i = 0; i < CANARY; i++)
        canary[i] = (uint8_t)(0x5a ^ i ^ seq);
    side_put(rcv, roff + len, canary, CANARY);
    waitio_req_t reqs[2];
    TU_CHECK(waitio_irecv(g, peer, (char *)rcv->mem + roff, len, tag, &reqs[0]));
    TU_CHECK(waitio_isend(g, peer, (char *)snd->mem + soff, len, tag, &reqs[1]));
    TU_CHECK(waitio_waitall(2, reqs));
    if (reqs[0].status.len != len)
        TU_ERR("seq %u: received %zu bytes, expected %zu", seq, (size_t)reqs[0].status.len, len);
    side_get(rcv, roff, check, len + CANARY);
    char why[256];
    if (!tu_msg_check(check, len, peer, me, tag, seq, salt, why, sizeof why))
        TU_ERR("seq %u, %zu bytes (%s -> %s): %s", seq, len, snd->dev ? "device" : "host",
               rcv->dev ? "device" : "host", why);
    if (memcmp(check + len, canary, CANARY) != 0)
        TU_ERR("seq %u, %zu bytes: written past the receive buffer's end", seq, len);
}

#endif
