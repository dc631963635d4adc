/* log_spec.c — unit test of WAITIO_LOG (src/core/log.c): the specs wio_log_spec_check accepts
 * and the reasons it gives for those it refuses; the levels wio_log_init_from_env gives each
 * subsystem (a base level, SUBSYS=LEVEL entries, the default); the macros filter by the calling
 * file's subsystem (this file logs as "boot"); and a written line carries the process, the
 * elapsed time, the subsystem and the level. */
#define WIO_LOG_SUBSYS WIO_SUB_BOOT
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "core/common.h"

static void check_ok(const char *spec)
{
    char why[256] = "untouched";
    int rc = wio_log_spec_check(spec, why, sizeof why);
    if (rc != 0)
        fprintf(stderr, "spec '%s' refused: %s\n", spec, why);
    CHECK(rc == 0);
}

static void check_bad(const char *spec, const char *reason)
{
    char why[256] = "";
    CHECK(wio_log_spec_check(spec, why, sizeof why) == -1);
    if (!strstr(why, reason))
        fprintf(stderr, "spec '%s': reason '%s' lacks '%s'\n", spec, why, reason);
    CHECK(strstr(why, reason) != NULL);
}

static void test_specs(void)
{
    check_ok("");
    check_ok("off");
    check_ok("NOTICE");
    check_ok("warn");
    check_ok("warn,boot=info");
    check_ok("boot=debug");
    check_ok(" info , net = debug ,core=off");
    check_ok("warn,");
    check_bad("inof", "'inof' is not a level (off, notice, error, warn, info, debug)");
    check_bad("warn,bogus=info", "'bogus' is not a subsystem (core, boot, net, tcp, shm, file, ucx, "
                                 "rma, shmem, mpi, coll, trace, gpu)");
    check_bad("boot=loud", "'loud' is not a level");
    check_bad("boot=", "'' is not a level");
    check_bad("=info", "'' is not a subsystem");
    CHECK(wio_log_spec_check("bogus", NULL, 0) == -1); /* no buffer: still answers */
}

static void set_log(const char *spec)
{
    if (spec)
        setenv("WAITIO_LOG", spec, 1);
    else
        unsetenv("WAITIO_LOG");
}

static void test_levels(void)
{
    set_log(NULL);
    REQUIRE(wio_log_init_from_env() == 0);
    for (int s = 0; s < WIO_SUB_COUNT; s++)
        CHECK(wio_log_levels[s] == WIO_LOG_NOTICE);
    CHECK(wio_log_on(WIO_LOG_NOTICE) && !wio_log_on(WIO_LOG_ERROR));

    set_log("warn,boot=debug,net=off");
    REQUIRE(wio_log_init_from_env() == 0);
    CHECK(wio_log_levels[WIO_SUB_BOOT] == WIO_LOG_DEBUG);
    CHECK(wio_log_levels[WIO_SUB_NET] == WIO_LOG_OFF);
    CHECK(wio_log_levels[WIO_SUB_TCP] == WIO_LOG_WARN);
    CHECK(wio_log_levels[WIO_SUB_CORE] == WIO_LOG_WARN);
    CHECK(wio_log_on(WIO_LOG_DEBUG)); /* this file is boot */

    set_log("tcp=info"); /* no base level: the default for the others */
    REQUIRE(wio_log_init_from_env() == 0);
    CHECK(wio_log_levels[WIO_SUB_TCP] == WIO_LOG_INFO);
    CHECK(wio_log_levels[WIO_SUB_BOOT] == WIO_LOG_NOTICE);

    set_log("warn,nope=info");
    CHECK(wio_log_init_from_env() == WAITIO_ERR_ENV);
    CHECK(strstr(waitio_error_message(), "WAITIO_LOG='warn,nope=info'") != NULL);
    CHECK(strstr(waitio_error_message(), "'nope' is not a subsystem") != NULL);
}

/* The line written for a boot debug message, read back from stderr redirected to a file. */
static void test_line(void)
{
    set_log("boot=debug");
    REQUIRE(wio_log_init_from_env() == 0);
    wio_log_set_identity(3, 7);
    char path[] = "/tmp/waitio-log-spec-XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    fflush(stderr);
    int saved = dup(2);
    REQUIRE(saved >= 0 && dup2(fd, 2) == 2);
    wio_debug("hello %d", 42);
    wio_info("shown too");
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char buf[512] = "";
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    close(fd);
    unlink(path);
    CHECK(n > 0);
    buf[n > 0 ? n : 0] = '\0';
    double t = -1;
    char sub[16] = "", level[16] = "", rest[64] = "";
    int pb = -1, rank = -1;
    int got = sscanf(buf, "waitio[PB %d rank %d +%lfs %15[a-z]] %15[A-Z]: %63[^\n]", &pb, &rank, &t,
                     sub, level, rest);
    if (got != 6)
        fprintf(stderr, "line not as expected: %s", buf);
    CHECK(got == 6 && pb == 3 && rank == 7 && t >= 0 && t < 60);
    CHECK(strcmp(sub, "boot") == 0 && strcmp(level, "DEBUG") == 0 && strcmp(rest, "hello 42") == 0);
    CHECK(strstr(buf, "boot] INFO: shown too\n") != NULL);
}

int main(void)
{
    test_specs();
    test_levels();
    test_line();
    return check_report("log_spec");
}
