/*
 * init_probe.c — calls waitio_init and checks what it returns, how long it took and what
 * waitio_error_message() says; optionally, after a successful start-up, exchanges a ring of
 * checked messages in the universe. Used by mp_init_timeout (missing PBs, missing master) and
 * mp_wrong_key (intruders with another key, key files). No MPI; the PB-local rank/size come from
 * WAITIO_PB_RANK/WAITIO_PB_SIZE.
 *
 * Usage: init_probe [--timeout S] [--expect CODE] [--min-secs X] [--max-secs Y]
 *                   [--msg 'a|b'] ... [--msg-soft 'a|b'] ... [--exchange] [--alarm S] [--label L]
 *   --expect CODE   SUCCESS, TIMEOUT, AUTH, KEY, ... (default SUCCESS)
 *   --msg ALTS      waitio_error_message() must contain one of the '|'-separated alternatives
 *                   (case-insensitive); repeatable
 *   --msg-soft ALTS the same, but a miss only prints a NOTE line (a wish, not a requirement)
 *   --min-secs/--max-secs  bounds on the time waitio_init took
 *   --exchange      after a successful init: ring exchange of 0, 1000 and 1 MiB + 3 bytes,
 *                   every byte checked, then waitio_finalize
 *   --hold FILE     with --exchange: before waitio_finalize, print "init_probe[L]: holding" and
 *                   wait until FILE exists (what sec_file_* tests do to the directory meanwhile)
 *   --hold-progress FILE  the same, but while waiting it keeps making progress (waitio_iprobe
 *                   every 20 ms), so that what is planted meanwhile is seen before finalize
 * After a failed waitio_init it also checks that the library is not initialised, that
 * waitio_finalize returns WAITIO_ERR_STATE and that no file descriptor was left open.
 * Prints "init_probe[L]: waitio_init returned CODE after T s: MESSAGE" and, when every check
 * passed, "init_probe[L]: ok". Exit status 0 if all checks passed, 1 otherwise, 2 on --alarm.
 */
#include <dirent.h>
#include <strings.h>
#include "testutil.h"

#define MAX_MSG 8

static const char *label = "";

/* one of the '|'-separated alternatives of alts occurs in text (case-insensitive) */
static int contains_any(const char *text, const char *alts)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", alts);
    for (char *save = NULL, *a = strtok_r(buf, "|", &save); a; a = strtok_r(NULL, "|", &save))
        if (strcasestr(text, a))
            return 1;
    return 0;
}

/* number of open file descriptors of this process */
static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1; /* the directory's own descriptor */
}

static const char *hold_file;
static int hold_progress;

static void hold(waitio_group_t u)
{
    if (!hold_file)
        return;
    printf("init_probe%s: holding\n", label);
    fflush(stdout);
    while (access(hold_file, F_OK) != 0) {
        int flag;
        if (hold_progress)
            TU_CHECK(waitio_iprobe(u, WAITIO_ANY_SOURCE, WAITIO_ANY_TAG, &flag, NULL));
        usleep(20000);
    }
}

static void ring_exchange(void)
{
    waitio_group_t u = tu_universe(11);
    int me, n;
    TU_CHECK(waitio_group_rank(u, &me));
    TU_CHECK(waitio_group_size(u, &n));
    if (n < 2) {
        hold(u);
        TU_CHECK(waitio_finalize());
        return;
    }
    static const size_t sizes[] = {0, 1000, (1u << 20) + 3};
    int right = (me + 1) % n, left = (me + n - 1) % n;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t len = sizes[i];
        uint64_t tag = 0x1000 + i;
        uint8_t *out = tu_xmalloc(len), *in = tu_xmalloc(len + TU_CANARY);
        tu_canary_set(in + len);
        tu_msg_fill(out, len, me, right, tag, 0, 0x1b);
        waitio_req_t r[2];
        tu_phase("ring exchange, %zu bytes", len);
        TU_CHECK(waitio_irecv(u, left, (char *)in, len, tag, &r[0]));
        TU_CHECK(waitio_isend(u, right, (char *)out, len, tag, &r[1]));
        TU_CHECK(waitio_waitall(2, r));
        char why[256];
        if (r[0].status.len != len || r[0].status.source != left)
            TU_FAIL("ring: message from rank %d: status len %zu source %d, expected %zu from %d",
                    left, r[0].status.len, r[0].status.source, len, left);
        if (!tu_msg_check(in, len, left, me, tag, 0, 0x1b, why, sizeof why))
            TU_FAIL("ring: %zu-byte message from rank %d, tag %#lx: %s", len, left,
                    (unsigned long)tag, why);
        if (!tu_canary_ok(in + len))
            TU_FAIL("ring: bytes past the receive buffer overwritten");
        free(out);
        free(in);
    }
    hold(u);
    tu_phase("waitio_finalize");
    TU_CHECK(waitio_finalize());
    printf("init_probe%s: ring exchange among %d processes ok\n", label, n);
}

int main(int argc, char **argv)
{
    int timeout = 10, expect = WAITIO_SUCCESS, exchange = 0, nmsg = 0, nsoft = 0;
    double min_secs = -1, max_secs = -1;
    unsigned alarm_secs = 60;
    const char *msgs[MAX_MSG], *soft[MAX_MSG];
    static char labelbuf[80];
    tu_set_name(argv[0]);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--exchange")) { exchange = 1; continue; }
        if (!v)
            TU_FAIL("option %s needs a value", a);
        i++;
        if (!strcmp(a, "--timeout")) timeout = atoi(v);
        else if (!strcmp(a, "--expect")) {
            expect = tu_code_parse(v);
            if (expect < 0)
                TU_FAIL("unknown error code name %s", v);
        } else if (!strcmp(a, "--min-secs")) min_secs = atof(v);
        else if (!strcmp(a, "--max-secs")) max_secs = atof(v);
        else if (!strcmp(a, "--msg") && nmsg < MAX_MSG) msgs[nmsg++] = v;
        else if (!strcmp(a, "--msg-soft") && nsoft < MAX_MSG) soft[nsoft++] = v;
        else if (!strcmp(a, "--alarm")) alarm_secs = (unsigned)atoi(v);
        else if (!strcmp(a, "--hold")) hold_file = v;
        else if (!strcmp(a, "--hold-progress")) {
            hold_file = v;
            hold_progress = 1;
        }
        else if (!strcmp(a, "--label")) {
            snprintf(labelbuf, sizeof labelbuf, "[%s]", v);
            label = labelbuf;
        } else
            TU_FAIL("unknown option %s", a);
    }
    snprintf(tu_name, sizeof tu_name, "init_probe%s", label);
    tu_alarm(alarm_secs);
    tu_phase("waitio_init(%d), expecting %s", timeout, tu_code_name(expect));
    int fds_before = count_fds();
    double t0 = tu_now();
    int rc = waitio_init(timeout);
    double took = tu_now() - t0;
    const char *msg = rc ? waitio_error_message() : "";
    printf("init_probe%s: waitio_init returned %s after %.2f s%s%s\n", label, tu_code_name(rc), took,
           rc ? ": " : "", msg);
    fflush(stdout);
    int bad = 0;
    if (rc != expect) {
        fprintf(stderr, "init_probe%s: FAIL: waitio_init(%d) returned %s (%s), expected %s\n",
                label, timeout, tu_code_name(rc), waitio_strerror(rc), tu_code_name(expect));
        bad++;
    }
    if (min_secs >= 0 && took < min_secs) {
        fprintf(stderr, "init_probe%s: FAIL: waitio_init returned after %.2f s, before the "
                "expected %.2f s\n", label, took, min_secs);
        bad++;
    }
    if (max_secs >= 0 && took > max_secs) {
        fprintf(stderr, "init_probe%s: FAIL: waitio_init took %.2f s, more than %.2f s\n", label,
                took, max_secs);
        bad++;
    }
    for (int i = 0; i < nmsg; i++)
        if (!contains_any(msg, msgs[i])) {
            fprintf(stderr, "init_probe%s: FAIL: the error message \"%s\" does not mention %s\n",
                    label, msg, msgs[i]);
            bad++;
        }
    for (int i = 0; i < nsoft; i++)
        if (!contains_any(msg, soft[i]))
            printf("init_probe%s: NOTE: the error message \"%s\" does not mention %s "
                   "(desirable, not required)\n", label, msg, soft[i]);
    if (rc == WAITIO_SUCCESS) {
        int pb = -1, lr = -1;
        waitio_pb_rank(&pb);
        waitio_local_rank(&lr);
        tu_set_who(pb, lr);
        if (!waitio_initialized()) {
            fprintf(stderr, "init_probe%s: FAIL: waitio_initialized() = 0 after success\n", label);
            bad++;
        }
        if (exchange && !bad)
            ring_exchange();
        else
            TU_CHECK(waitio_finalize());
    } else {
        /* a failed init leaves the library uninitialised and usable for nothing else */
        if (waitio_initialized()) {
            fprintf(stderr, "init_probe%s: FAIL: waitio_initialized() = 1 after a failed "
                    "waitio_init\n", label);
            bad++;
        }
        int fds_after = count_fds();
        if (fds_before >= 0 && fds_after != fds_before) {
            fprintf(stderr, "init_probe%s: FAIL: %d file descriptors open before the failed "
                    "waitio_init, %d after (sockets/epoll left open)\n", label, fds_before,
                    fds_after);
            bad++;
        }
        int frc = waitio_finalize();
        if (frc != WAITIO_ERR_STATE) {
            fprintf(stderr, "init_probe%s: FAIL: waitio_finalize() after a failed waitio_init "
                    "returned %s, expected WAITIO_ERR_STATE\n", label, tu_code_name(frc));
            bad++;
        }
    }
    if (!bad)
        printf("init_probe%s: ok\n", label);
    fflush(stdout);
    return bad ? 1 : 0;
}
