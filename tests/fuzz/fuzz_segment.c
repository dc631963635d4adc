/* fuzz_segment.c — libFuzzer harness of what the file transport and start-up through the
 * directory read from files that anyone with write access to the directory could have made:
 * the input becomes a segment file (first byte even) checked by wio_file_seg_verify, or a record
 * file (first byte odd) read by wio_file_read_record_at. Nothing may crash or leak, and:
 *   - a record is never accepted (the corpus has none made with the harness's key, and a valid
 *     MAC cannot be forged by mutation);
 *   - a segment is checked as stream 0x1122334455667788, position 0, from process 1 to process 0,
 *     in the direction bit 1 of the first byte names (0: connector -> acceptor 'c', 1: acceptor
 *     -> connector 'a'). One is accepted only with a MAC the harness recomputes itself with the
 *     key over binding || payload || header (the corpus has such segments, from make_corpus.py),
 *     it is then refused in the other direction (the MAC binds it: no replay from A->B as B->A),
 *     and the payload handed back is exactly the file's bytes that were checked. */
#include <fcntl.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/auth.h"
#include "transport/file.h"
#include "transport/file_dir.h"

#define NONCE 0x1122334455667788ull

static char dir[64];
static int dir_fd = -1;
static const uint8_t key[WIO_PROOF_LEN] = "fuzz-file-key-0123456789abcdef!";

/* What the writer would have MACed: HMAC(key, bind || payload || header), independently of
 * the code under test. 1 if the file's trailing MAC is that. */
static int genuine(const uint8_t *file, size_t n, char direction)
{
    if (n < WIO_SEG_HDR_SIZE + WIO_SEG_MAC_SIZE)
        return 0;
    size_t plen = n - WIO_SEG_HDR_SIZE - WIO_SEG_MAC_SIZE;
    uint8_t *msg = malloc(WIO_SEG_BIND_SIZE + plen + WIO_SEG_HDR_SIZE), out[EVP_MAX_MD_SIZE];
    unsigned int outl = 0;
    if (!msg)
        abort();
    wio_file_seg_bind(direction, 1, 0, msg);
    memcpy(msg + WIO_SEG_BIND_SIZE, file + WIO_SEG_HDR_SIZE, plen);
    memcpy(msg + WIO_SEG_BIND_SIZE + plen, file, WIO_SEG_HDR_SIZE);
    if (!HMAC(EVP_sha256(), key, sizeof key, msg, WIO_SEG_BIND_SIZE + plen + WIO_SEG_HDR_SIZE, out, &outl))
        abort();
    free(msg);
    return memcmp(out, file + n - WIO_SEG_MAC_SIZE, WIO_SEG_MAC_SIZE) == 0;
}

static int verify_as(int fd, char direction, uint8_t **payload, wio_seg_hdr *h)
{
    wio_mac *m;
    uint8_t bind[WIO_SEG_BIND_SIZE];
    const char *why;
    if (wio_mac_new(&m, key) != 0)
        abort();
    wio_file_seg_bind(direction, 1, 0, bind);
    int rc = wio_file_seg_verify(fd, NONCE, 0, bind, m, payload, h, &why);
    wio_mac_free(m);
    if (rc != 0 && (!why || *payload))
        abort(); /* a refusal says why and hands nothing back */
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/wio-fuzz-seg-%d", (int)getpid());
        if (mkdir(dir, 0700) != 0 || (dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
            abort();
    }
    if (size < 1)
        return 0;
    const char *name = (data[0] & 1) ? "rec" : "seg";
    int fd = openat(dir_fd, name, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, data + 1, size - 1) != (ssize_t)(size - 1))
        abort();
    if (data[0] & 1) {
        uint8_t *body = NULL;
        size_t len = 0;
        const char *why;
        if (wio_file_read_record_at(dir_fd, "rec", 1 << 20, key, &body, &len, &why) == 0)
            abort(); /* would need a MAC made with the key */
        free(body);
    } else {
        char direction = (data[0] & 2) ? 'a' : 'c', other = direction == 'c' ? 'a' : 'c';
        uint8_t *payload = NULL;
        wio_seg_hdr h;
        if (verify_as(fd, direction, &payload, &h) == 0) {
            if (!genuine(data + 1, size - 1, direction))
                abort(); /* accepted without a MAC made with the key for this direction */
            if (h.len != size - 1 - WIO_SEG_HDR_SIZE - WIO_SEG_MAC_SIZE ||
                memcmp(payload, data + 1 + WIO_SEG_HDR_SIZE, h.len) != 0)
                abort(); /* the bytes handed on are not the bytes checked */
            uint8_t *again = NULL;
            if (verify_as(fd, other, &again, &h) == 0)
                abort(); /* the same segment valid in the other direction: replayable */
        }
        free(payload);
    }
    close(fd);
    return 0;
}
