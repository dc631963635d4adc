/*
 * waitio-serv — publishes and looks up the master host for separately submitted batch jobs, so
 * that the original WaitIO job scripts work unchanged (SPEC §3):
 *   PB 0's job:      export WAITIO_MASTER_HOST=$(hostname); waitio-serv -d -m $WAITIO_MASTER_HOST
 *   other PBs' jobs: export WAITIO_MASTER_HOST=`waitio-serv -c`
 * The host is published in a file on a shared file system: $WAITIO_SERV_FILE, else
 * $WAITIO_RENDEZVOUS.host, else ~/.waitio/master_host. Plain C11 + POSIX.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: waitio-serv -d -m HOST   publish HOST as this user's WaitIO master host\n"
            "       waitio-serv -c [-t SECS] wait (default 600 s) for it and print it\n"
            "       waitio-serv -x           remove the published host (end of PB 0's job)\n"
            "The location is $WAITIO_SERV_FILE, else $WAITIO_RENDEZVOUS.host, else\n"
            "~/.waitio/master_host: it must be on a file system all jobs share.\n"
            "-d returns at once: the file carries the information, no daemon is needed.\n");
}

static int location(char *buf, size_t cap)
{
    const char *v = getenv("WAITIO_SERV_FILE");
    if (v && *v)
        return snprintf(buf, cap, "%s", v) < (int)cap ? 0 : -1;
    v = getenv("WAITIO_RENDEZVOUS");
    if (v && *v)
        return snprintf(buf, cap, "%s.host", v) < (int)cap ? 0 : -1;
    const char *home = getenv("HOME");
    if (!home || !*home)
        return -1;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/.waitio", home);
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return -1;
    return snprintf(buf, cap, "%s/master_host", dir) < (int)cap ? 0 : -1;
}

static int publish(const char *path, const char *host)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) {
        fprintf(stderr, "waitio-serv: cannot write %s: %s\n", tmp, strerror(errno));
        return 1;
    }
    size_t n = strlen(host);
    int ok = write(fd, host, n) == (ssize_t)n && write(fd, "\n", 1) == 1 && fsync(fd) == 0;
    close(fd);
    if (!ok || rename(tmp, path) != 0) {
        fprintf(stderr, "waitio-serv: cannot publish %s: %s\n", path, strerror(errno));
        unlink(tmp);
        return 1;
    }
    return 0;
}

static int wait_and_print(const char *path, double timeout)
{
    struct timespec pause = {0, 100 * 1000 * 1000};
    for (double waited = 0; waited <= timeout; waited += 0.1) {
        FILE *f = fopen(path, "r");
        if (f) {
            char host[1024];
            int got = fgets(host, sizeof host, f) != NULL;
            fclose(f);
            host[strcspn(host, "\r\n")] = '\0';
            if (got && host[0]) {
                printf("%s\n", host);
                return 0;
            }
        }
        nanosleep(&pause, NULL);
    }
    fprintf(stderr, "waitio-serv: no master host published in %s after %g s (has PB 0's job run "
            "'waitio-serv -d -m HOST'?)\n", path, timeout);
    return 1;
}

int main(int argc, char **argv)
{
    int mode = 0;
    const char *host = NULL;
    double timeout = 600;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-d") || !strcmp(argv[i], "-c") || !strcmp(argv[i], "-x"))
            mode = argv[i][1];
        else if (!strcmp(argv[i], "-m") && i + 1 < argc)
            host = argv[++i];
        else if (!strcmp(argv[i], "-t") && i + 1 < argc)
            timeout = atof(argv[++i]);
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    char path[4096];
    if (!mode || (mode == 'd' && !host)) {
        usage(stderr);
        return 2;
    }
    if (location(path, sizeof path) != 0) {
        fprintf(stderr, "waitio-serv: no place to publish the host (set WAITIO_SERV_FILE)\n");
        return 1;
    }
    if (mode == 'd')
        return publish(path, host);
    if (mode == 'x')
        return unlink(path) == 0 || errno == ENOENT ? 0 : 1;
    return wait_and_print(path, timeout);
}
