/*
 * ucx_rcache.c — the ucx transport's cache of memory registrations: the buffers a rendezvous
 * offers to be read in place (rdv_pack) and the windows one-sided operations reach. Registering
 * memory with UCX (ucp_mem_map) and packing its remote key cost microseconds to milliseconds on
 * RDMA hardware, so a buffer sent from again and again is registered once.
 *
 * A registration names virtual addresses, and the pages behind them change when the program
 * unmaps them (free of a large block, munmap, mremap, brk shrinking): UCX's memory hooks (UCM)
 * report such unmaps, and the entries they overlap are dropped before their next use. The hook
 * may run in any thread inside the unmapping call, so it only marks entries (atomically); the
 * transport's own thread unregisters them. The table has a fixed size, allocated once, so the
 * hook never sees it move; when it is full, the least recently used entry goes (a receiver that
 * still reads from it then fails that read and the message travels as DATA frames instead).
 */
#define WIO_UCX_INTERNAL
#define WIO_LOG_SUBSYS WIO_SUB_UCX /* this file logs as "ucx" (WAITIO_LOG=ucx=LEVEL) */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <ucm/api/ucm.h>
#include "transport/ucx.h"
#include "core/common.h"

enum { ENTRY_FREE = 0, ENTRY_BUSY = 1, ENTRY_STALE = 2 };

typedef struct rcache_entry {
    _Atomic int state;
    uintptr_t start, end;     /* [start, end) */
    ucp_mem_h memh;
    void *rkey;
    size_t rkey_len;
    uint64_t used;            /* LRU stamp */
} rcache_entry;

struct ucx_reg_cache {
    ucx_tp *t;
    size_t n;
    uint64_t clock;
    int hooked;
    unsigned long hits, misses;
    _Atomic unsigned long invalidated; /* entries the hook marked (any thread) */
    rcache_entry e[];
};

static void on_unmap(ucm_event_type_t type, ucm_event_t *ev, void *arg)
{
    struct ucx_reg_cache *rc = arg;
    uintptr_t a, b;
    if (type == UCM_EVENT_VM_UNMAPPED) {
        a = (uintptr_t)ev->vm_unmapped.address;
        b = a + ev->vm_unmapped.size;
    } else {
        return;
    }
    for (size_t i = 0; i < rc->n; i++) {
        rcache_entry *x = &rc->e[i];
        int expect = ENTRY_BUSY;
        if (atomic_load(&x->state) == ENTRY_BUSY && x->start < b && a < x->end &&
            atomic_compare_exchange_strong(&x->state, &expect, ENTRY_STALE))
            atomic_fetch_add(&rc->invalidated, 1);
    }
}

int wio_ucx_rcache_create(ucx_tp *t, size_t max_entries, struct ucx_reg_cache **out)
{
    struct ucx_reg_cache *rc = calloc(1, sizeof *rc + max_entries * sizeof(rcache_entry));
    if (!rc)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory for the ucx registration cache");
    rc->t = t;
    rc->n = max_entries;
    for (size_t i = 0; i < max_entries; i++)
        atomic_init(&rc->e[i].state, ENTRY_FREE);
    /* Without the hook (UCM disabled by UCX_MEM_EVENTS=no) a registration cannot be trusted
     * past one use: rendezvous then offer nothing to read in place (DATA frames instead). */
    rc->hooked = ucm_set_event_handler(UCM_EVENT_VM_UNMAPPED, 0, on_unmap, rc) == UCS_OK;
    if (!rc->hooked)
        wio_debug("ucx: no memory hooks: large messages travel as DATA frames");
    *out = rc;
    return 0;
}

static void entry_drop(struct ucx_reg_cache *rc, rcache_entry *x)
{
    if (x->rkey)
        ucp_rkey_buffer_release(x->rkey);
    if (x->memh)
        ucp_mem_unmap(rc->t->context, x->memh);
    x->rkey = NULL;
    x->memh = NULL;
    atomic_store(&x->state, ENTRY_FREE);
}

void wio_ucx_rcache_destroy(struct ucx_reg_cache *rc)
{
    if (!rc)
        return;
    /* what tests/scripts/ucx_dlopen.sh reads: the hooks work although UCX was loaded late */
    wio_debug("ucx: registration cache: %lu hits, %lu misses, %lu invalidated by unmaps (memory "
              "hooks %s)", rc->hits, rc->misses, atomic_load(&rc->invalidated), rc->hooked ? "on" : "off");
    if (rc->hooked)
        ucm_unset_event_handler(UCM_EVENT_VM_UNMAPPED, on_unmap, rc);
    for (size_t i = 0; i < rc->n; i++)
        if (atomic_load(&rc->e[i].state) != ENTRY_FREE)
            entry_drop(rc, &rc->e[i]);
    free(rc);
}

/* The entry to fill: a free one, else the least recently used (unregistered first). */
static rcache_entry *entry_slot(struct ucx_reg_cache *rc)
{
    rcache_entry *victim = NULL;
    for (size_t i = 0; i < rc->n; i++) {
        rcache_entry *x = &rc->e[i];
        int st = atomic_load(&x->state);
        if (st == ENTRY_FREE)
            return x;
        if (st == ENTRY_STALE) {
            entry_drop(rc, x);
            return x;
        }
        if (!victim || x->used < victim->used)
            victim = x;
    }
    entry_drop(rc, victim);
    return victim;
}

static int entry_register(struct ucx_reg_cache *rc, rcache_entry *x, uintptr_t start, uintptr_t end)
{
    ucp_mem_map_params_t mp = {
        .field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH,
        .address = (void *)start,
        .length = end - start,
    };
    if (ucp_mem_map(rc->t->context, &mp, &x->memh) != UCS_OK) {
        x->memh = NULL;
        return -1;
    }
    if (ucp_rkey_pack(rc->t->context, x->memh, &x->rkey, &x->rkey_len) != UCS_OK) {
        ucp_mem_unmap(rc->t->context, x->memh);
        x->memh = NULL;
        x->rkey = NULL;
        return -1;
    }
    x->start = start;
    x->end = end;
    atomic_store(&x->state, ENTRY_BUSY);
    return 0;
}

int wio_ucx_rcache_get(struct ucx_reg_cache *rc, const void *addr, size_t len, const void **rkey,
                       size_t *rkey_len)
{
    uintptr_t a = (uintptr_t)addr, b = a + len;
    if (len == 0 || b < a || !rc->hooked)
        return -1;
    rc->clock++;
    for (size_t i = 0; i < rc->n; i++) {
        rcache_entry *x = &rc->e[i];
        if (atomic_load(&x->state) == ENTRY_BUSY && x->start <= a && b <= x->end) {
            x->used = rc->clock;
            rc->hits++;
            *rkey = x->rkey;
            *rkey_len = x->rkey_len;
            return 0;
        }
    }
    rc->misses++;
    rcache_entry *x = entry_slot(rc);
    /* whole pages: a neighbouring buffer on the same pages then hits the same entry */
    uintptr_t page = 4096;
    if (entry_register(rc, x, a & ~(page - 1), (b + page - 1) & ~(page - 1)) != 0)
        return -1;
    x->used = rc->clock;
    *rkey = x->rkey;
    *rkey_len = x->rkey_len;
    return 0;
}
