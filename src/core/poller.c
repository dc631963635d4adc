/*
 * poller.c — the event loop shared by all transports of a process: one epoll set for their
 * descriptors, the polled sources (rings, files) that epoll cannot watch, the sleep handshake
 * around blocking, and the periodic tick. See poller.h for the pacing rules.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>
#include "core/common.h"
#include "core/poller.h"

#define MAX_EVENTS 64
#define CLOCK_EVERY 16 /* while polling, the clock is read every 16th epoll round */
#define YIELD_EPOLL_PERIOD 0.001 /* a waiter that yields its core runs epoll at least this often */
/* Polling without blocking also runs epoll once this many milliseconds (of the coarse clock,
 * a few nanoseconds to read) passed since the last round: a program that calls waitio_test or
 * waitio_iprobe every 20 ms would otherwise see its sockets once in 1024 calls (20 s). */
#define EPOLL_MAX_GAP_MS 2

#define MAX_POLLING 8 /* sources with a poll hook: one per transport instance */

struct wio_poller {
    int epfd;
    wio_list sources;
    wio_poll_source *polling[MAX_POLLING]; /* the sources with a poll hook, for the hot loop */
    int npolling;
    int data_fds;              /* descriptors carrying data: epoll more often */
    int polled;                /* connections that need polling (rings, files) */
    unsigned polls_since_epoll;
    unsigned epolls_since_clock;
    int64_t last_epoll_ms;     /* coarse clock at the last epoll round */
    double next_tick;
    double next_yield_epoll;   /* wio_poller_yielding: when to force the next epoll round */
    int tick_due;
    int running;               /* re-entry guard: callbacks must not run the loop */
    wio_poll_fd *parked[WIO_POLL_MAX_PARKED]; /* out of the epoll set (wio_poller_park) */
    int nparked;
};

int wio_poller_create(wio_poller **out)
{
    wio_poller *p = calloc(1, sizeof *p);
    if (!p)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory creating the poller");
    p->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (p->epfd < 0) {
        int e = errno;
        free(p);
        return wio_fail(WAITIO_ERR_SYS, "epoll_create1: %s", strerror(e));
    }
    wio_list_init(&p->sources);
    *out = p;
    return 0;
}

void wio_poller_destroy(wio_poller *p)
{
    if (!p)
        return;
    WIO_ASSERT(!p->running);
    close(p->epfd);
    free(p);
}

int wio_poller_add(wio_poller *p, wio_poll_fd *pf, int fd, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.ptr = pf};
    pf->fd = fd;
    pf->events = events;
    pf->parked = 0;
    if (epoll_ctl(p->epfd, EPOLL_CTL_ADD, fd, &ev) != 0)
        return wio_fail(WAITIO_ERR_SYS, "epoll_ctl(ADD): %s", strerror(errno));
    return 0;
}

int wio_poller_mod(wio_poller *p, wio_poll_fd *pf, uint32_t events)
{
    if (pf->events == events)
        return 0;
    if (pf->parked) { /* armed when it goes back into the set */
        pf->events = events;
        return 0;
    }
    struct epoll_event ev = {.events = events, .data.ptr = pf};
    if (epoll_ctl(p->epfd, EPOLL_CTL_MOD, pf->fd, &ev) != 0)
        return wio_fail(WAITIO_ERR_SYS, "epoll_ctl(MOD): %s", strerror(errno));
    pf->events = events;
    return 0;
}

static void parked_remove(wio_poller *p, wio_poll_fd *pf)
{
    for (int i = 0; i < p->nparked; i++)
        if (p->parked[i] == pf) {
            p->parked[i] = p->parked[--p->nparked];
            break;
        }
    pf->parked = 0;
}

void wio_poller_del(wio_poller *p, wio_poll_fd *pf)
{
    if (pf->parked) {
        parked_remove(p, pf); /* not in the set */
        return;
    }
    if (pf->fd >= 0)
        (void)epoll_ctl(p->epfd, EPOLL_CTL_DEL, pf->fd, NULL); /* closing the fd removes it anyway */
}

int wio_poller_park(wio_poller *p, wio_poll_fd *pf)
{
    if (pf->parked)
        return 0;
    if (pf->fd < 0 || p->nparked == WIO_POLL_MAX_PARKED || epoll_ctl(p->epfd, EPOLL_CTL_DEL, pf->fd, NULL) != 0)
        return -1;
    pf->parked = 1;
    p->parked[p->nparked++] = pf;
    return 0;
}

/* Before blocking: every parked descriptor back into the epoll set. One that cannot be put back
 * (out of kernel memory) stays parked; returns nonzero then, and the caller must not block. */
static int unpark_all(wio_poller *p)
{
    int stuck = 0;
    for (int i = 0; i < p->nparked;) {
        wio_poll_fd *pf = p->parked[i];
        struct epoll_event ev = {.events = pf->events, .data.ptr = pf};
        if (epoll_ctl(p->epfd, EPOLL_CTL_ADD, pf->fd, &ev) != 0) {
            wio_warn("epoll_ctl(ADD) of a parked descriptor: %s; polling it instead of blocking", strerror(errno));
            stuck = 1;
            i++;
            continue;
        }
        pf->parked = 0;
        p->parked[i] = p->parked[--p->nparked];
    }
    return stuck;
}

/* A round that runs epoll without blocking also looks at the parked descriptors, as epoll would
 * have. Their hooks may close others (and so unpark them): a snapshot, each checked again. */
static void poll_parked(wio_poller *p)
{
    wio_poll_fd *snap[WIO_POLL_MAX_PARKED];
    int n = p->nparked;
    memcpy(snap, p->parked, sizeof snap[0] * (size_t)n);
    for (int i = 0; i < n; i++)
        if (snap[i]->parked)
            snap[i]->ready(snap[i], EPOLLIN | (snap[i]->events & EPOLLOUT));
}

void wio_poller_add_source(wio_poller *p, wio_poll_source *s)
{
    wio_list_insert_tail(&p->sources, &s->link);
    if (s->poll) {
        WIO_ASSERT(p->npolling < MAX_POLLING);
        if (p->npolling < MAX_POLLING)
            p->polling[p->npolling++] = s;
    }
}

void wio_poller_del_source(wio_poller *p, wio_poll_source *s)
{
    if (!wio_list_linked(&s->link))
        return;
    wio_list_remove(&s->link);
    for (int i = 0; i < p->npolling; i++)
        if (p->polling[i] == s) {
            p->polling[i] = p->polling[--p->npolling];
            break;
        }
}

void wio_poller_data_fds(wio_poller *p, int delta) { p->data_fds += delta; }
void wio_poller_polled(wio_poller *p, int delta) { p->polled += delta; }
void wio_poller_tick_soon(wio_poller *p) { p->tick_due = 1; }

static int poll_sources(wio_poller *p)
{
    int busy = 0;
    for (int i = 0; i < p->npolling; i++)
        busy += p->polling[i]->poll(p->polling[i]->arg);
    return busy;
}

/* Before blocking: every source announces that we sleep (so writers ring the doorbell) and may
 * veto the sleep or shorten it. Returns the timeout to use. */
static int prepare_sleep(wio_poller *p, int timeout_ms)
{
    for (wio_list *l = p->sources.next; l != &p->sources; l = l->next) {
        wio_poll_source *s = WIO_CONTAINER_OF(l, wio_poll_source, link);
        if (s->prepare_sleep && s->prepare_sleep(s->arg, &timeout_ms))
            timeout_ms = 0;
    }
    return timeout_ms;
}

static void end_sleep(wio_poller *p)
{
    for (wio_list *l = p->sources.next; l != &p->sources; l = l->next) {
        wio_poll_source *s = WIO_CONTAINER_OF(l, wio_poll_source, link);
        if (s->end_sleep)
            s->end_sleep(s->arg);
    }
}

/* Reads the clock only every CLOCK_EVERY rounds while polling (it costs as much as a ring
 * check), always before or after a blocking wait, and when a tick was requested. */
static void tick_sometimes(wio_poller *p, int blocked)
{
    if (!blocked && !p->tick_due && ++p->epolls_since_clock < CLOCK_EVERY)
        return;
    p->epolls_since_clock = 0;
    double now = wio_now();
    if (!p->tick_due && now < p->next_tick)
        return;
    p->tick_due = 0;
    p->next_tick = now + WIO_POLL_TICK_PERIOD;
    wio_list *l, *tmp;
    WIO_LIST_FOREACH_SAFE(l, tmp, &p->sources) {
        wio_poll_source *s = WIO_CONTAINER_OF(l, wio_poll_source, link);
        if (s->tick)
            s->tick(s->arg, now);
    }
}

static void after_epoll(wio_poller *p)
{
    wio_list *l, *tmp;
    WIO_LIST_FOREACH_SAFE(l, tmp, &p->sources) {
        wio_poll_source *s = WIO_CONTAINER_OF(l, wio_poll_source, link);
        if (s->after_epoll)
            s->after_epoll(s->arg);
    }
}

static int64_t coarse_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int run_epoll(wio_poller *p, int timeout_ms, int sleeping, int busy, int late)
{
    struct epoll_event ev[MAX_EVENTS];
    int n = epoll_wait(p->epfd, ev, MAX_EVENTS, timeout_ms);
    if (sleeping)
        end_sleep(p);
    if (n < 0) {
        if (errno == EINTR)
            return busy;
        return -wio_fail(WAITIO_ERR_SYS, "epoll_wait: %s", strerror(errno));
    }
    for (int i = 0; i < n; i++) {
        wio_poll_fd *pf = ev[i].data.ptr;
        pf->ready(pf, ev[i].events);
    }
    if (p->nparked)
        poll_parked(p);
    tick_sometimes(p, timeout_ms != 0 || late);
    after_epoll(p);
    return n + busy;
}

int wio_poller_run(wio_poller *p, int timeout_ms)
{
    WIO_ASSERT(!p->running); /* a callback must never run the loop it was called from */
    p->running = 1;
    int busy = p->polled ? poll_sources(p) : 0;
    int sleeping = 0;
    if (busy || (timeout_ms != 0 && p->nparked && unpark_all(p))) {
        timeout_ms = 0;
    } else if (timeout_ms != 0 && p->polled) {
        sleeping = 1;
        timeout_ms = prepare_sleep(p, timeout_ms);
    }
    unsigned every = p->data_fds > 0 ? WIO_POLL_EPOLL_EVERY : WIO_POLL_EPOLL_EVERY_IDLE;
    int rc, late = 0;
    if (timeout_ms == 0 && !sleeping && p->polled && ++p->polls_since_epoll < every &&
        !(late = coarse_ms() - p->last_epoll_ms >= EPOLL_MAX_GAP_MS)) {
        rc = busy;
    } else {
        p->polls_since_epoll = 0;
        rc = run_epoll(p, timeout_ms, sleeping, busy, late);
        p->last_epoll_ms = coarse_ms();
    }
    p->running = 0;
    return rc;
}

/* ---- for a progress thread (poller.h) ---- */

int wio_poller_fd(const wio_poller *p) { return p->epfd; }

int wio_poller_sleep_begin(wio_poller *p, int timeout_ms)
{
    WIO_ASSERT(!p->running);
    if (p->nparked && unpark_all(p))
        return 0;
    return p->polled ? prepare_sleep(p, timeout_ms) : timeout_ms;
}

void wio_poller_sleep_end(wio_poller *p)
{
    if (p->polled)
        end_sleep(p);
}

void wio_poller_epoll_soon(wio_poller *p) { p->polls_since_epoll = WIO_POLL_EPOLL_EVERY_IDLE; }

void wio_poller_yielding(wio_poller *p, double now)
{
    if (now < p->next_yield_epoll)
        return;
    p->next_yield_epoll = now + YIELD_EPOLL_PERIOD;
    p->polls_since_epoll = WIO_POLL_EPOLL_EVERY_IDLE;
    if (now >= p->next_tick)
        p->tick_due = 1;
}
