/*
 * poller.h — the one event loop of a process's transports (nng's pollq, UCX's async context).
 *
 * Every transport instance registers with the engine's poller instead of owning an epoll set,
 * so one epoll_wait covers sockets of every transport, and blocking waits for all of them at
 * once. A transport registers two kinds of things:
 *   - descriptors (wio_poll_fd): sockets, inotify fds; their callback runs when epoll reports
 *     events;
 *   - a source (wio_poll_source): hooks for what epoll cannot see — shared-memory rings and
 *     files are polled on every progress call (poll), told before and after the process blocks
 *     (prepare_sleep / end_sleep, the doorbell protocol), called about every 50 ms with the
 *     time (tick: deadlines, heartbeats), and after each epoll round (after_epoll: freeing
 *     objects closed during callbacks).
 *
 * Pacing (measured on the shared-memory path, see docs/protocol.md "Polling"): when polling
 * without blocking and some connection needs polling (wio_poller_polled > 0), epoll_wait runs
 * only every WIO_POLL_EPOLL_EVERY calls while some descriptor carries data
 * (wio_poller_data_fds > 0), else every WIO_POLL_EPOLL_EVERY_IDLE calls: an epoll_wait costs
 * about ten ring checks on a VM. It also runs once 2 ms of the coarse clock passed since the
 * last one, so a program that tests now and then (every 20 ms, say) still sees its sockets.
 * With nothing to poll, every call is an epoll_wait.
 */
#ifndef WIO_POLLER_H
#define WIO_POLLER_H

#include <stdint.h>
#include "core/list.h"

#define WIO_POLL_EPOLL_EVERY 32
#define WIO_POLL_EPOLL_EVERY_IDLE 1024
#define WIO_POLL_TICK_PERIOD 0.05 /* seconds between ticks */

typedef struct wio_poller wio_poller;

typedef struct wio_poll_fd {
    int fd;
    uint32_t events;                             /* EPOLLIN / EPOLLOUT currently armed */
    void (*ready)(struct wio_poll_fd *pf, uint32_t events);
    void *arg;
    int parked;                                  /* out of the epoll set (wio_poller_park) */
} wio_poll_fd;

typedef struct wio_poll_source {
    wio_list link;
    void *arg;
    /* every progress call: handle what is ready; returns how many things made progress */
    int (*poll)(void *arg);
    /* before blocking up to *timeout_ms: return 1 if there is work (do not block); may lower
     * *timeout_ms (a file transport bounds it by its polling interval) */
    int (*prepare_sleep)(void *arg, int *timeout_ms);
    void (*end_sleep)(void *arg);
    void (*tick)(void *arg, double now);
    void (*after_epoll)(void *arg);
} wio_poll_source;

int wio_poller_create(wio_poller **out);
void wio_poller_destroy(wio_poller *p);

int wio_poller_add(wio_poller *p, wio_poll_fd *pf, int fd, uint32_t events);
int wio_poller_mod(wio_poller *p, wio_poll_fd *pf, uint32_t events);
void wio_poller_del(wio_poller *p, wio_poll_fd *pf);

/* Parking (a socket that a waiter reads directly, round after round — a tcp ping-pong): while
 * a descriptor is in an epoll set, every arriving segment also runs epoll's wake-up callback in
 * the sender's system call, 0.15-0.2 us of a 3.3 us loopback round trip. A parked descriptor
 * leaves the set: the poller calls its ready hook (EPOLLIN, and EPOLLOUT if armed) in every
 * round that runs epoll instead, and puts it back before the process blocks (a blocking
 * wio_poller_run, wio_poller_sleep_begin). At most WIO_POLL_MAX_PARKED at once; returns 0 when
 * parked (or already), -1 when not. mod and del work on a parked descriptor as on any. */
#define WIO_POLL_MAX_PARKED 4
int wio_poller_park(wio_poller *p, wio_poll_fd *pf);

void wio_poller_add_source(wio_poller *p, wio_poll_source *s);
void wio_poller_del_source(wio_poller *p, wio_poll_source *s);

/* Descriptors carrying data (not only connects and doorbells): epoll runs more often. */
void wio_poller_data_fds(wio_poller *p, int delta);
/* Connections that need polling (rings, files): sources' poll hooks run, and epoll is paced,
 * only while there are some. */
void wio_poller_polled(wio_poller *p, int delta);
/* Something happened outside a poll round that needs a tick soon (a synchronous connect
 * failure, a deadline that just passed). */
void wio_poller_tick_soon(wio_poller *p);

/* One round: sources polled, epoll when due (blocking up to timeout_ms if nothing was ready),
 * callbacks run, ticks when due. Returns the number of events handled, or -errcode. */
int wio_poller_run(wio_poller *p, int timeout_ms);

/* ---- for a progress thread that blocks outside the poller (src/rma/progress.c) ----
 * It sleeps in poll() on the epoll descriptor (readable when a registered descriptor is) with
 * the sources told, as around a blocking run; it consumes events only through wio_poller_run. */
int wio_poller_fd(const wio_poller *p);
/* Tells the sources that the process sleeps (doorbells armed); returns the timeout to sleep
 * (0: something is already waiting, do not sleep). */
int wio_poller_sleep_begin(wio_poller *p, int timeout_ms);
void wio_poller_sleep_end(wio_poller *p);
/* The next wio_poller_run calls epoll_wait whatever the pacing says. */
void wio_poller_epoll_soon(wio_poller *p);
/* A waiter about to give its core away (sched_yield), with the time it just read: at most every
 * millisecond, the next round runs epoll and the ticks that are due. The pacing by counts is for
 * spinning; between yields a round can take a scheduler slice, and 16384 of them (an epoll every
 * 1024 polls, the clock every 16th epoll) left handshake deadlines and listeners unserved for
 * seconds on an oversubscribed host. Every round, though, made each step of a collective there
 * cost an extra system call (flat 8 B allreduce of 8 processes on 2 cores: 22 -> 18.5 us). */
void wio_poller_yielding(wio_poller *p, double now);

#endif
