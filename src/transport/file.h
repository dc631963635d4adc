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
/* What a segment's MAC binds besides its bytes: the stream's direction ('c' connector ->
 * acceptor, 'a' acceptor -> connector), its writer and its reader, so that a segment copied
 * into the other direction's directory (or another process's inbox) fails its MAC. */
#define WIO_SEG_BIND_SIZE 16
void wio_file_seg_bind(char dir, uint32_t writer, uint32_t reader, uint8_t out[WIO_SEG_BIND_SIZE]);
/* Checks segment file fd before a byte of it is used: a regular file, header, the stream and
 * position it claims, its size, its MAC over bind || payload || header. The payload is read
 * once, into *payload (malloc'd, no larger than the file), and the MAC is checked over that
 * copy: what is parsed is what was checked. Returns 0, or -1 with *why. The reader's path, and
 * the segment fuzzer's (tests/fuzz/fuzz_segment.c). */
int wio_file_seg_verify(int fd, uint64_t nonce, uint64_t seq, const uint8_t bind[WIO_SEG_BIND_SIZE],
                        struct wio_mac *m, uint8_t **payload, wio_seg_hdr *h, const char **why);

#endif
