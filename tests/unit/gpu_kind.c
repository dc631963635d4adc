/*
 * gpu_kind.c — unit test of src/gpu/cuda.c, each case in a child process of its own (the driver
 * is loaded once per process):
 *  - no driver (WAITIO_CUDA_LIBRARY names no file): every pointer is host memory, copies are
 *    memcpy, what needs the driver fails with WAITIO_ERR_DEVICE and says why;
 *  - the forced-device test hook without a driver: the kind check itself fails cleanly;
 *  - the driver's test double (FAKE_CUDA_PATH, tests/gpu/fake_cuda.c): device and host kinds,
 *    allocation ranges cached (a second check asks the driver nothing), a range running past
 *    its allocation refused, copies both ways, IPC export offsets, streams, the staging pool.
 */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"
#include "core/common.h"
#include "gpu/gpu.h"

static void no_driver(void)
{
    setenv("WAITIO_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
    CHECK(wio_gpu_available() == 0);
    char a[64] = "hello", b[64] = {0};
    wio_mem_kind k = WIO_MEM_CUDA;
    int dev = 5;
    CHECK(wio_gpu_mem_kind(a, sizeof a, &k, &dev) == 0 && k == WIO_MEM_HOST && dev == -1);
    CHECK(wio_gpu_mem_kind(NULL, 0, &k, NULL) == 0 && k == WIO_MEM_HOST);
    CHECK(wio_gpu_copy(b, a, sizeof a) == 0 && !strcmp(b, "hello"));
    void *p = (void *)1;
    CHECK(wio_gpu_alloc(64, &p) == WAITIO_ERR_DEVICE && p == NULL);
    CHECK(strstr(waitio_error_message(), "CUDA driver") != NULL);
    CHECK(wio_gpu_host_alloc(64, &p) == WAITIO_ERR_DEVICE);
    wio_gpu_ipc_handle h;
    size_t off;
    CHECK(wio_gpu_ipc_export(a, &h, &off) == WAITIO_ERR_DEVICE);
    wio_gpu_stream *s;
    CHECK(wio_gpu_stream_create(&s) == WAITIO_ERR_DEVICE && s == NULL);
    CHECK(wio_gpu_bounce_get(100, &p) == 0 && p != NULL); /* ordinary memory */
    if (p)
        memset(p, 1, 100);
    wio_gpu_bounce_put(p, 100);
    CHECK(strcmp(waitio_strerror(WAITIO_ERR_DEVICE), "unknown error code") != 0);
    wio_gpu_ipc_close_peer(3);
    wio_gpu_release_all();
}

static void forced_without_driver(void)
{
    setenv("WAITIO_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
    setenv("WAITIO_TEST_GPU_FORCE_DEVICE", "1", 1);
    char a[16];
    wio_mem_kind k = WIO_MEM_CUDA;
    CHECK(wio_gpu_mem_kind(a, sizeof a, &k, NULL) == WAITIO_ERR_DEVICE);
    CHECK(k == WIO_MEM_HOST);
    CHECK(strstr(waitio_error_message(), "no CUDA driver") != NULL);
}

static void fake_driver(void)
{
    setenv("WAITIO_CUDA_LIBRARY", FAKE_CUDA_PATH, 1);
    CHECK(wio_gpu_available() == 1);
    const size_t len = 1 << 20;
    void *d = NULL;
    REQUIRE(wio_gpu_alloc(len, &d) == 0 && d != NULL);
    wio_gpu_counters c0, c1;
    wio_gpu_get_counters(&c0);
    wio_mem_kind k;
    int dev = -5;
    CHECK(wio_gpu_mem_kind(d, len, &k, &dev) == 0 && k == WIO_MEM_CUDA && dev == 0);
    CHECK(wio_gpu_mem_kind((char *)d + 1000, 100, &k, NULL) == 0 && k == WIO_MEM_CUDA);
    wio_gpu_get_counters(&c1);
    CHECK(c1.attr_queries == c0.attr_queries + 1); /* the second check hit the cached range */
    CHECK(wio_gpu_mem_kind((char *)d + len - 10, 100, &k, NULL) == WAITIO_ERR_ARG);
    /* host memory: host, and cached by its pages */
    char *h = malloc(3 * 4096);
    REQUIRE(h != NULL);
    CHECK(wio_gpu_mem_kind(h, 3 * 4096, &k, &dev) == 0 && k == WIO_MEM_HOST && dev == -1);
    wio_gpu_get_counters(&c0);
    CHECK(wio_gpu_mem_kind(h + 5, 100, &k, NULL) == 0 && k == WIO_MEM_HOST);
    wio_gpu_get_counters(&c1);
    CHECK(c1.attr_queries == c0.attr_queries);
    /* copies both ways through the device */
    for (int i = 0; i < 3 * 4096; i++)
        h[i] = (char)(i * 7);
    char *back = calloc(1, 3 * 4096);
    REQUIRE(back != NULL);
    CHECK(wio_gpu_copy((char *)d + 17, h, 3 * 4096) == 0);
    CHECK(wio_gpu_copy(back, (char *)d + 17, 3 * 4096) == 0);
    CHECK(memcmp(back, h, 3 * 4096) == 0);
    /* IPC export: the allocation's handle and the pointer's offset in it */
    wio_gpu_ipc_handle ih;
    size_t off = 0;
    CHECK(wio_gpu_ipc_export((char *)d + 4242, &ih, &off) == 0 && off == 4242);
    CHECK(wio_gpu_ipc_export(h, &ih, &off) == WAITIO_ERR_ARG);
    /* an asynchronous copy on a stream */
    wio_gpu_stream *s = NULL;
    REQUIRE(wio_gpu_stream_create(&s) == 0 && s != NULL);
    memset(back, 0, 3 * 4096);
    int done = 0;
    CHECK(wio_gpu_copy_async(back, (char *)d + 17, 4096, s) == 0);
    CHECK(wio_gpu_stream_sync(s) == 0 && wio_gpu_stream_done(s, &done) == 0 && done == 1);
    CHECK(memcmp(back, h, 4096) == 0);
    wio_gpu_stream_destroy(s);
    /* the staging pool: pinned buffers (host memory) while they last, then ordinary memory */
    void *b[6];
    for (int i = 0; i < 6; i++) {
        CHECK(wio_gpu_bounce_get(4096, &b[i]) == 0 && b[i] != NULL);
        CHECK(wio_gpu_mem_kind(b[i], 4096, &k, NULL) == 0 && k == WIO_MEM_HOST);
        memset(b[i], i, 4096);
    }
    for (int i = 0; i < 6; i++)
        wio_gpu_bounce_put(b[i], 4096);
    /* freed: forgotten, and a new allocation is seen afresh */
    CHECK(wio_gpu_free(d) == 0);
    void *d2 = NULL;
    CHECK(wio_gpu_alloc(64, &d2) == 0);
    CHECK(wio_gpu_mem_kind(d2, 64, &k, NULL) == 0 && k == WIO_MEM_CUDA);
    CHECK(wio_gpu_free(d2) == 0);
    wio_gpu_release_all();
    free(h);
    free(back);
}

static int in_child(const char *name, void (*fn)(void))
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        fn();
        exit(check_report(name));
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "%s: failed (status %d)\n", name, st);
        return 1;
    }
    return 0;
}

int main(void)
{
    int bad = in_child("gpu_kind no driver", no_driver);
    bad |= in_child("gpu_kind forced device without driver", forced_without_driver);
    bad |= in_child("gpu_kind fake driver", fake_driver);
    return bad;
}
