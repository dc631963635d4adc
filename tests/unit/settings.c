/* settings.c — unit test of the registry of settings (src/core/settings.c):
 *  - the table: unique names, a subsystem and a description for each, subsystems contiguous
 *    (waitio-info --all groups by them), every default accepted by its own validator;
 *  - the registry agrees with config.c, which parses the strict numeric variables itself: for
 *    each of them, the bounds, one past each bound and garbage are accepted or refused alike by
 *    wio_setting_check and wio_config_load, and a refusal carries the same message;
 *  - wio_setting_str: the environment's value when valid (source: environment), the default when
 *    unset, empty or invalid (source: default);
 *  - suggestions for misspelled names (WAITIO_TRANSPORT -> WAITIO_TRANSPORTS, WAITIO_TRACE_DIR ->
 *    WAITIO_TRACE), none for a name far from all. */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "core/common.h"
#include "core/settings.h"

extern char **environ;

/* Nothing of the caller's environment may change what config.c sees. */
static void clear_waitio_env(void)
{
    for (int again = 1; again;) {
        again = 0;
        for (char **e = environ; *e; e++) {
            const char *eq = strchr(*e, '=');
            if (!strncmp(*e, "WAITIO_", 7) && eq) {
                char name[256];
                snprintf(name, sizeof name, "%.*s", (int)(eq - *e), *e);
                unsetenv(name);
                again = 1;
                break;
            }
        }
    }
}

static void check_table(void)
{
    size_t n;
    const wio_setting *t = wio_settings(&n);
    CHECK(n >= 60);
    for (size_t i = 0; i < n; i++) {
        char why[512];
        CHECK(t[i].doc && *t[i].doc && t[i].subsystem && *t[i].subsystem);
        CHECK(wio_setting_find(t[i].name) == &t[i]); /* unique: the first of the name is this one */
        if (t[i].dflt && wio_setting_check(&t[i], t[i].dflt, why, sizeof why) != 0) {
            fprintf(stderr, "the default of %s is refused: %s\n", t[i].name, why);
            CHECK(0);
        }
        for (size_t j = 0; j + 1 < i; j++) /* a subsystem that ended does not come back */
            if (!strcmp(t[j].subsystem, t[i].subsystem) && strcmp(t[i - 1].subsystem, t[i].subsystem)) {
                fprintf(stderr, "%s: subsystem %s is split in the table\n", t[i].name, t[i].subsystem);
                CHECK(0);
                break;
            }
    }
}

/* value for NAME: the registry and config.c must agree (see the top). */
static void agree(const wio_setting *s, const char *value)
{
    char why[512];
    int registry_ok = wio_setting_check(s, value, why, sizeof why) == 0;
    setenv(s->name, value, 1);
    if (!strcmp(s->name, "WAITIO_PB_SIZE"))
        setenv("WAITIO_PB_RANK", "0", 1); /* the size is read with a rank */
    if (!strcmp(s->name, "WAITIO_PBID"))
        setenv("WAITIO_NPB", "65536", 1);
    wio_config c;
    int rc = wio_config_load(&c);
    const char *msg = rc ? waitio_error_message() : "";
    char mine[300];
    if (*value)
        snprintf(mine, sizeof mine, "%s='%s'", s->name, value);
    else
        snprintf(mine, sizeof mine, "%s is set but empty", s->name);
    int config_ok = rc == 0 || !strstr(msg, mine); /* refused for another reason (PBID < NPB) */
    if (registry_ok != config_ok || (!registry_ok && strcmp(why, msg) != 0)) {
        fprintf(stderr, "%s=%s: registry %s (%s), config.c %s (%s)\n", s->name, value,
                registry_ok ? "accepts" : "refuses", registry_ok ? "" : why, config_ok ? "accepts" : "refuses", msg);
        CHECK(0);
    }
    check_count++;
    unsetenv(s->name);
    unsetenv("WAITIO_PB_RANK");
    unsetenv("WAITIO_NPB");
}

static void check_against_config(void)
{
    size_t n;
    const wio_setting *t = wio_settings(&n);
    int tried = 0;
    for (size_t i = 0; i < n; i++) {
        const wio_setting *s = &t[i];
        if (!(s->flags & WIO_SETF_STRICT) || (s->type != WIO_SET_INT && s->type != WIO_SET_SIZE &&
                                             s->type != WIO_SET_NUMBER && s->type != WIO_SET_BOOL))
            continue;
        char v[64];
        double step = s->type == WIO_SET_NUMBER ? (s->hi > 0 ? s->hi : 1) : 1;
        snprintf(v, sizeof v, "%.10g", s->lo), agree(s, v);
        snprintf(v, sizeof v, "%.10g", s->hi), agree(s, v);
        snprintf(v, sizeof v, "%.10g", s->hi + step), agree(s, v);
        if (s->lo > 0)
            snprintf(v, sizeof v, "%.10g", s->type == WIO_SET_NUMBER ? s->lo / 2 : s->lo - 1), agree(s, v);
        agree(s, "12abc");
        agree(s, "");
        tried++;
    }
    CHECK(tried >= 25);
    printf("settings: %d strict numeric variables agree with config.c\n", tried);
}

static void check_lookup(void)
{
    int source = -1;
    const char *v = wio_setting_str("WAITIO_COLL_ALG", &source);
    CHECK(v && !strcmp(v, "auto") && source == WIO_FROM_DEFAULT);
    setenv("WAITIO_COLL_ALG", "Ring", 1);
    v = wio_setting_str("WAITIO_COLL_ALG", &source);
    CHECK(v && !strcmp(v, "Ring") && source == WIO_FROM_ENV);
    setenv("WAITIO_COLL_ALG", "fastest", 1);
    v = wio_setting_str("WAITIO_COLL_ALG", &source);
    CHECK(v && !strcmp(v, "auto") && source == WIO_FROM_DEFAULT);
    setenv("WAITIO_COLL_ALG", "", 1);
    v = wio_setting_str("WAITIO_COLL_ALG", &source);
    CHECK(v && !strcmp(v, "auto") && source == WIO_FROM_DEFAULT);
    unsetenv("WAITIO_COLL_ALG");
    CHECK(wio_setting_num("WAITIO_INIT_TIMEOUT", 1) == 60);
    setenv("WAITIO_INIT_TIMEOUT", "7", 1);
    CHECK(wio_setting_num("WAITIO_INIT_TIMEOUT", 1) == 7);
    setenv("WAITIO_INIT_TIMEOUT", "-3", 1);
    CHECK(wio_setting_num("WAITIO_INIT_TIMEOUT", 1) == 60);
    unsetenv("WAITIO_INIT_TIMEOUT");
    CHECK(wio_setting_num("WAITIO_PROGRESS_THREAD", 5) == -1); /* auto */
    CHECK(wio_setting_str("WAITIO_RMA_MAX_QUEUED", NULL) == NULL); /* no default: computed */
}

static void check_suggest(void)
{
    static const char *const pairs[][2] = {
        {"WAITIO_TRANSPORT", "WAITIO_TRANSPORTS"}, {"WAITIO_INIT_TIMOUT", "WAITIO_INIT_TIMEOUT"},
        {"WAITIO_TRACE_DIR", "WAITIO_TRACE"},      {"WAITIO_EAGERLIMIT", "WAITIO_EAGER_LIMIT"},
        {"WAITIO_NBP", "WAITIO_NPB"},              {"WAITIO_COMMTYPE", "WAITIO_COMM_TYPE"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        const char *got = wio_setting_suggest(pairs[i][0]);
        if (!got || strcmp(got, pairs[i][1])) {
            fprintf(stderr, "suggestion for %s: %s, expected %s\n", pairs[i][0], got ? got : "(none)", pairs[i][1]);
            CHECK(0);
        }
        check_count++;
    }
    CHECK(wio_setting_suggest("WAITIO_QQQQQQQQQQQQ") == NULL);
}

int main(void)
{
    clear_waitio_env();
    check_table();
    check_against_config();
    check_lookup();
    check_suggest();
    return check_report("settings");
}
