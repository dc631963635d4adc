/* boot_table_shm.c — unit test of the per-host address-table segment (src/boot/boot_shm.c,
 * docs/protocol.md "The table, once per host"): a table published and taken back is the same
 * bytes and leaves nothing behind once unlinked; a TABLE_REF parses back; references of an
 * impossible length, table length, a foreign name or odd characters are refused; a segment whose
 * bytes or length differ from the reference, or with group/other permissions, fails with a
 * message; a segment that does not exist asks for the TABLE instead (1). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"
#include "boot/boot.h"
#include "core/common.h"
#include "transport/shm_ring.h"

static void fill(uint8_t *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        t[i] = (uint8_t)(i * 7 + 3);
}

static int exists(const char *name)
{
    int fd = shm_open(name, O_RDONLY, 0);
    if (fd < 0)
        return 0;
    close(fd);
    return 1;
}

static void test_roundtrip(void)
{
    size_t n = 100000;
    uint8_t *t = malloc(n), md[WIO_BOOT_DIGEST_LEN], *back = NULL;
    REQUIRE(t);
    fill(t, n);
    CHECK(wio_boot_table_digest(t, n, md) == 0);
    wio_boot_ref r, parsed;
    REQUIRE(wio_boot_shm_publish(t, n, md, &r) == 0);
    uint8_t wire[WIO_TABLE_REF_MAX];
    size_t len = wio_boot_ref_encode(&r, wire);
    CHECK(len <= WIO_TABLE_REF_MAX);
    CHECK(wio_boot_parse_ref(wire, len, &parsed) == NULL);
    CHECK(strcmp(parsed.name, r.name) == 0 && parsed.table_len == n);
    CHECK(wio_boot_shm_take(&parsed, &back) == 0 && back && memcmp(back, t, n) == 0);
    free(back);
    struct stat st;
    int fd = shm_open(r.name, O_RDONLY, 0);
    CHECK(fd >= 0 && fstat(fd, &st) == 0 && (st.st_mode & 0777) == 0600);
    if (fd >= 0)
        close(fd);

    /* a second segment never reuses the name (O_EXCL, random) */
    wio_boot_ref r2;
    CHECK(wio_boot_shm_publish(t, n, md, &r2) == 0 && strcmp(r2.name, r.name) != 0);
    wio_boot_shm_unlink(r2.name);

    /* the digest covers every byte: the last one changed */
    fd = shm_open(r.name, O_RDWR, 0);
    uint8_t x = (uint8_t)(t[n - 1] ^ 1);
    CHECK(fd >= 0 && pwrite(fd, &x, 1, (off_t)n - 1) == 1);
    CHECK(wio_boot_shm_take(&parsed, &back) == WAITIO_ERR_PROTO && !back);
    CHECK(strstr(waitio_error_message(), "SHA-256") != NULL);
    /* a length that differs from the reference */
    CHECK(fd >= 0 && ftruncate(fd, (off_t)n - 1) == 0);
    CHECK(wio_boot_shm_take(&parsed, &back) == WAITIO_ERR_PROTO && !back);
    /* readable by others */
    CHECK(fd >= 0 && ftruncate(fd, (off_t)n) == 0 && fchmod(fd, 0644) == 0);
    CHECK(wio_boot_shm_take(&parsed, &back) == WAITIO_ERR_PROTO && !back);
    if (fd >= 0)
        close(fd);
    wio_boot_shm_unlink(r.name);
    CHECK(!exists(r.name));
    /* gone: the process asks for the TABLE instead */
    CHECK(wio_boot_shm_take(&parsed, &back) == 1 && !back);
    free(t);
}

static void test_parse(void)
{
    wio_boot_ref r = {.table_len = 1000}, out;
    char stem[40]; /* as shm_ring.c's: the names stay within WIO_TABLE_SHM_NAME_MAX */
    wio_shm_name_stem(stem, sizeof stem);
    snprintf(r.name, sizeof r.name, "%stabc", stem);
    uint8_t wire[WIO_TABLE_REF_MAX + 8];
    size_t len = wio_boot_ref_encode(&r, wire);
    CHECK(wio_boot_parse_ref(wire, len, &out) == NULL);
    CHECK(wio_boot_parse_ref(wire, 8 + WIO_BOOT_DIGEST_LEN, &out) != NULL);  /* no name */
    CHECK(wio_boot_parse_ref(wire, WIO_TABLE_REF_MAX + 1, &out) != NULL);    /* too long */
    wio_put_le64(wire, (uint64_t)WIO_TABLE_MAX + 1);                           /* table too big */
    CHECK(wio_boot_parse_ref(wire, len, &out) != NULL);
    wio_put_le64(wire, 1000);
    const char *bad[] = {"/etc/passwd", "/waitio-999999-1-n1-tabc", "/other-0-1-n1-tabc"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(r.name, sizeof r.name, "%s", bad[i]);
        len = wio_boot_ref_encode(&r, wire);
        CHECK(wio_boot_parse_ref(wire, len, &out) != NULL);
    }
    snprintf(r.name, sizeof r.name, "%st/../x", stem); /* our prefix, then a path */
    len = wio_boot_ref_encode(&r, wire);
    CHECK(wio_boot_parse_ref(wire, len, &out) != NULL);
}

int main(void)
{
    test_roundtrip();
    test_parse();
    return check_report("boot_table_shm");
}
