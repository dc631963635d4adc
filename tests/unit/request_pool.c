/* request_pool.c — unit test of the request pool: slots are recycled with a new generation,
 * stale and forged ids are refused, and a recycled request reads like a new one (the pool
 * resets fields one by one instead of clearing the whole struct, so a field added without a
 * reset would leak state from the previous request: caught here). */
#include <stddef.h>
#include <string.h>
#include "check.h"
#include "core/engine.h"

static wio_engine eng;

/* Bytes that req alloc does not write: run the reset over two different fillings and compare. */
static void test_recycled_request_is_clean(void)
{
    uint8_t first[sizeof(wio_req_impl)], second[sizeof(wio_req_impl)];
    uint8_t *fills[2] = {first, second};
    const uint8_t pattern[2] = {0xa5, 0x5a};
    uint32_t slot = 0;
    for (int k = 0; k < 2; k++) {
        wio_req_impl *r = wio_req_alloc(&eng, WIO_REQ_SEND);
        CHECK(r != NULL);
        if (!r)
            return;
        slot = r->slot;
        uint32_t gen = r->gen;
        wio_req_release(&eng, r);
        memset(r, pattern[k], sizeof *r); /* whatever the last user left */
        r->slot = slot;
        r->gen = gen + 1;
        r->state = WIO_RS_FREE;
        wio_req_impl *again = wio_req_alloc(&eng, WIO_REQ_RECV);
        CHECK(again == r);
        memcpy(fills[k], r, sizeof *r);
        CHECK(again->kind == WIO_REQ_RECV && again->item.owner == again);
        CHECK(!wio_list_linked(&again->link) && !wio_list_linked(&again->item.link));
        CHECK(again->status.error == 0 && again->buf == NULL && again->grp == NULL);
        wio_req_release(&eng, again);
    }
    /* Outside the two wire buffers (always encoded before use), bytes left as they were can
     * only be padding: short runs. A forgotten 8-byte field shows as a run of 8. */
    size_t item = offsetof(wio_req_impl, item), wire = item + offsetof(wio_send_item, wire);
    size_t cma = offsetof(wio_req_impl, rdv_wire), left = 0, run = 0, longest = 0;
    for (size_t i = 0; i < sizeof(wio_req_impl); i++) {
        int in_wire = (i >= wire && i < wire + WIO_FRAME_HDR_SIZE) ||
                      (i >= cma && i < cma + WIO_RDV_DESC_MAX);
        int kept = !in_wire && first[i] != second[i];
        left += (size_t)kept;
        run = kept ? run + 1 : 0;
        longest = run > longest ? run : longest;
    }
    printf("request: %zu bytes, %zu not reset outside the wire buffers (longest run %zu)\n",
           sizeof(wio_req_impl), left, longest);
    CHECK(longest < 8);
    CHECK(left <= 32);
    /* every field that must read as zero does */
    wio_req_impl *r = wio_req_alloc(&eng, WIO_REQ_SEND);
    CHECK(r && r->slot == slot && r->msg_len == 0 && r->received == 0 && r->unexp == NULL &&
          r->cts_trunc == 0 && r->rdv_offered == 0 && r->rdv_done == 0 && r->item.total == 0 &&
          r->item.chunk == 0 && r->item.offset == 0 && r->item.in_flight == 0 &&
          r->item.done == NULL && r->item.h.flags == 0 && r->item.h.len == 0);
    if (r)
        wio_req_release(&eng, r);
}

static void test_ids(void)
{
    wio_req_impl *a = wio_req_alloc(&eng, WIO_REQ_SEND);
    CHECK(a != NULL);
    if (!a)
        return;
    CHECK(wio_req_lookup(&eng, wio_req_id(a)) == NULL); /* not findable before it has a state */
    a->state = WIO_RS_SEND_EAGER;
    uint64_t id = wio_req_id(a);
    CHECK(wio_req_lookup(&eng, id) == a);
    CHECK(wio_req_lookup(&eng, id ^ (1ull << 32)) == NULL); /* wrong generation */
    CHECK(wio_req_lookup(&eng, (id & ~0xffffffffull) | 0xfffffu) == NULL); /* no such slot */
    wio_req_release(&eng, a);
    CHECK(wio_req_lookup(&eng, id) == NULL); /* stale */
    wio_req_impl *b = wio_req_alloc(&eng, WIO_REQ_SEND);
    CHECK(b == a && wio_req_id(b) != id);
    /* many at once: the pool grows and every slot is distinct */
    wio_req_impl *many[300];
    for (int i = 0; i < 300; i++) {
        many[i] = wio_req_alloc(&eng, WIO_REQ_RECV);
        CHECK(many[i] != NULL && many[i] != b);
        if (many[i])
            many[i]->state = WIO_RS_RECV_POSTED;
    }
    for (int i = 0; i < 300; i++)
        CHECK(many[i] && wio_req_lookup(&eng, wio_req_id(many[i])) == many[i]);
    for (int i = 0; i < 300; i++)
        if (many[i])
            wio_req_release(&eng, many[i]);
    wio_req_release(&eng, b);
}

int main(void)
{
    test_recycled_request_is_clean();
    test_ids();
    wio_req_pool_free(&eng);
    return check_report("request_pool");
}
