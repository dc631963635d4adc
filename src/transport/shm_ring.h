/*
 * shm_ring.h — shared-memory segments holding two single-producer/single-consumer byte rings,
 * one per direction, for connections between processes on the same host (see shm_ring.c and
 * docs/protocol.md, "Shared memory").
 */
#ifndef WIO_SHM_RING_H
#define WIO_SHM_RING_H

#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

#define WIO_SHM_NAME_MAX 64
#define WIO_SHM_RING_MIN (64u << 10)
#define WIO_SHM_RING_MAX (256u << 20)
/* Where records start: a multiple of this (a power of two from 8 to 64; shm_ring.c says why 64).
 * A build-time choice, the same in every process of a job. */
#ifndef WIO_SHM_REC_ALIGN
#define WIO_SHM_REC_ALIGN 64u
#endif

typedef struct wio_shm_seg wio_shm_seg;

/* Writes "/waitio-<uid>-<pid>-n<pid namespace>-" into buf, the stem of every shared-memory name
 * this process creates (rings here, heap windows in rma/window.c). The namespace is in the name
 * because a pid means something only in its own pid namespace: the sweep of leftovers judges
 * only names of its own namespace, where kill(pid, 0) answers for the right process. */
void wio_shm_name_stem(char *buf, size_t cap);

/* Creates a new segment with rings of ring_size bytes (a power of two within the bounds);
 * name receives its name for the peer. The creator writes ring 0 and reads ring 1. */
int wio_shm_create(size_t ring_size, int fenced, wio_shm_seg **out, char name[WIO_SHM_NAME_MAX]);
/* Maps the peer's segment by name, checking that it is one of ours and has the announced ring
 * size; removes the name at once. The attacher writes ring 1 and reads ring 0. `fenced`: publish
 * with a barrier per record even where membarrier(2) would allow without (shm_ring.c). */
int wio_shm_attach(const char *name, size_t ring_size, int fenced, wio_shm_seg **out);
/* Removes the segment's name (the mapping stays); idempotent. */
void wio_shm_unlink(wio_shm_seg *s);
/* Unmaps (and unlinks if still named). */
void wio_shm_destroy(wio_shm_seg *s);

/* Writes one record holding as much of iov as fits (all of it when there is room); returns the
 * bytes written (0: ring full). *wake is set when the reader is asleep and needs a doorbell. */
size_t wio_shm_writev(wio_shm_seg *s, const struct iovec *iov, int iovcnt, int *wake);
/* A small record written in place: where the next record's bytes go — room (> 0) bytes, the rest
 * of the line the reader polls — or NULL when the ring cannot take a record there right now
 * (then wio_shm_writev, which also handles the end of the lap and a full ring). Nothing is
 * visible to the reader until wio_shm_commit_line(n), n <= room, publishes the first n bytes
 * written there; a reservation not committed costs nothing. */
uint8_t *wio_shm_reserve_line(wio_shm_seg *s, size_t *room);
void wio_shm_commit_line(wio_shm_seg *s, size_t n, int *wake);
/* The unread bytes of the record at the reader's position, in place (valid until consumed):
 * a pointer and *len > 0; NULL with *len 0 when nothing is published, NULL with *len (size_t)-1
 * when the ring holds something no writer of ours could have written. */
const uint8_t *wio_shm_peek(wio_shm_seg *s, size_t *len, int *wake);
/* n bytes of what wio_shm_peek returned were used (the record's space goes back to the writer
 * once all of it is). *wake is set when the writer waits for space and needs a doorbell. */
void wio_shm_consume(wio_shm_seg *s, size_t n, int *wake);
int wio_shm_readable(const wio_shm_seg *s);
/* Before blocking, in three steps over all segments: announce that we sleep (and, if want_space,
 * that we wait for space in the outgoing ring) — returns 1 when a peer publishes without
 * barriers, and then wio_shm_fence_peers must run (once for all segments) before the checks;
 * wio_shm_sleep_check returns 1 if there is already something to do (do not block).
 * wio_shm_fence_peers returns -1 if the barrier failed (then do not block either). */
int wio_shm_announce_sleep(wio_shm_seg *s, int want_space);
int wio_shm_fence_peers(void);
int wio_shm_sleep_check(wio_shm_seg *s, int want_space);
void wio_shm_end_sleep(wio_shm_seg *s);

/* Removes segments left behind by this user's processes that no longer exist. */
void wio_shm_sweep_stale(void);

#endif
