/* check.h — minimal assertion helpers for the unit tests (each test is one ctest test). */
#ifndef WIO_TEST_CHECK_H
#define WIO_TEST_CHECK_H
#include <stdio.h>
#include <stdlib.h>

static int check_failures, check_count;
#define CHECK(cond) do { check_count++; if (!(cond)) { check_failures++; \
    fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); } } while (0)
/* REQUIRE: a failure after which going on would hang or crash the test (e.g. releasing requests
 * still in flight) ends it at once, reported like a failed CHECK. */
#define REQUIRE(cond) do { check_count++; if (!(cond)) { \
    fprintf(stderr, "%s:%d: REQUIRE failed: %s (stopping)\n", __FILE__, __LINE__, #cond); \
    exit(1); } } while (0)
static inline int check_report(const char *name)
{
    printf("%s: %d checks, %d failed\n", name, check_count, check_failures);
    return check_failures ? 1 : 0;
}
#endif
