/*
 * file.h — the file transport's row: frames through segment files in a directory that the PBs
 * share (file.c), for systems whose nodes share storage but no network path.
 */
#ifndef WIO_FILE_H
#define WIO_FILE_H

#include "core/frame.h"
#include "transport/transport.h"

extern const wio_transport_ops wio_transport_file;

struct wio_mac;
/* Checks segment file fd before a byte of it is used: header, the stream and position it
 * claims, its size, its MAC. Returns 0 (a payload of up to 64 KiB is read into *small,
 * malloc'd; larger ones are served from the file), or -1 with *why. The reader's path, and the
 * segment fuzzer's (tests/fuzz/fuzz_segment.c). */
int wio_file_seg_verify(int fd, uint64_t nonce, uint64_t seq, struct wio_mac *m, uint8_t **small,
                        wio_seg_hdr *h, const char **why);

#endif
