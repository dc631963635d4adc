/* fuzz_segment.c — libFuzzer harness of what the file transport and start-up through the
 * directory read from files that anyone with write access to the directory could have made:
 * the input becomes a segment file (first byte even) checked by wio_file_seg_verify, or a record
 * file (first byte odd) read by wio_file_read_record. Nothing may crash, leak, or accept a file
 * whose MAC was not made with the key (a valid MAC cannot be forged by mutation). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/auth.h"
#include "transport/file.h"
#include "transport/file_dir.h"

static char dir[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t key[WIO_PROOF_LEN] = "fuzz-file-key-0123456789abcdef!";
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/wio-fuzz-seg-%d", (int)getpid());
        if (mkdir(dir, 0700) != 0)
            abort();
    }
    if (size < 1)
        return 0;
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, (data[0] & 1) ? "rec" : "seg");
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, data + 1, size - 1) != (ssize_t)(size - 1))
        abort();
    if (data[0] & 1) {
        uint8_t *body = NULL;
        size_t len = 0;
        const char *why;
        if (wio_file_read_record(dir, "rec", 1 << 20, key, &body, &len, &why) == 0)
            abort(); /* would need a MAC made with the key */
        free(body);
    } else {
        wio_mac *m;
        if (wio_mac_new(&m, key) != 0)
            abort();
        uint8_t *small = NULL;
        wio_seg_hdr h;
        const char *why;
        if (wio_file_seg_verify(fd, 0x1122334455667788ull, 0, m, &small, &h, &why) == 0)
            abort();
        free(small);
        wio_mac_free(m);
    }
    close(fd);
    return 0;
}
