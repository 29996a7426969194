/* SPDX-License-Identifier: Apache-2.0 */
/* cache.c: the on-disk cache of JIT results (PTX -> cubin), so that a fresh
 * process does not pay the PTX compilation again. Entries are written
 * atomically (a temporary file, then rename) in a private (0700) directory;
 * each carries its length and a checksum, so that a torn or corrupted entry
 * is detected and rebuilt. A directory that cannot be used disables the
 * cache for the process with one warning. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file.h"
#include "drivers/cuda/cuda_driver.h"

#define MAGIC "TRDJIT01"
#define HEADER 24 /* magic, payload size, FNV-1a 64 of the payload */

static uint64_t fnv1a(const void *data, size_t n)
{
    const unsigned char *p = data;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static void warn_once(struct cuda_driver *drv, const char *fmt, const char *a, const char *b)
{
    if (atomic_exchange(&drv->cache_warned, 1) == 0)
        trd_drv_log(TRD_LOG_WARN, fmt, a, b);
}

/* <dir>/cuda, created private; NULL when it cannot be used safely. */
static int cache_dir(struct cuda_driver *drv, const char *dir, char *out, size_t cap)
{
    if (atomic_load(&drv->cache_warned))
        return 0; /* disabled after a failure */
    if (snprintf(out, cap, "%s/cuda", dir) >= (int)cap)
        return 0;
    /* parents as well, each private when we create it */
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", out);
    for (char *s = tmp + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(tmp, 0700) != 0 && errno != EEXIST) {
            warn_once(drv, "JIT cache disabled: cannot create %s: %s", tmp, strerror(errno));
            return 0;
        }
        *s = '/';
    }
    if (mkdir(out, 0700) != 0 && errno != EEXIST) {
        warn_once(drv, "JIT cache disabled: cannot create %s: %s", out, strerror(errno));
        return 0;
    }
    struct stat st;
    if (stat(out, &st) != 0 || !S_ISDIR(st.st_mode)) {
        warn_once(drv, "JIT cache disabled: %s is not a directory%s", out, "");
        return 0;
    }
    if (st.st_uid != geteuid()) {
        warn_once(drv, "JIT cache disabled: %s belongs to another user%s", out, "");
        return 0;
    }
    if ((st.st_mode & 077) && chmod(out, 0700) != 0) {
        warn_once(drv, "JIT cache disabled: cannot make %s private: %s", out, strerror(errno));
        return 0;
    }
    return 1;
}

int cuda_cache_read(struct cuda_driver *drv, const char *dir, const char *key, void **data, size_t *size)
{
    char d[4096], path[4352];
    if (!dir || !cache_dir(drv, dir, d, sizeof d))
        return 0;
    snprintf(path, sizeof path, "%s/%s.cubin", d, key);
    /* a FIFO or device planted in the cache is refused without blocking, like any corrupted entry */
    trd_status_t fst;
    char msg[512];
    size_t fsize = 0;
    int fd = trd_file_open_regular(path, (size_t)1 << 31, &fsize, &fst, msg, sizeof msg);
    if (fd < 0 && fst == TRD_ERR_NOT_FOUND)
        return 0;
    unsigned char head[HEADER];
    void *buf = NULL;
    int ok = 0;
    if (fd >= 0 && fsize >= HEADER && read(fd, head, HEADER) == HEADER && memcmp(head, MAGIC, 8) == 0) {
        uint64_t n, sum;
        memcpy(&n, head + 8, 8);
        memcpy(&sum, head + 16, 8);
        if (n == (uint64_t)fsize - HEADER && (buf = malloc(n ? n : 1)) && read(fd, buf, n) == (ssize_t)n &&
            fnv1a(buf, n) == sum)
            ok = 1;
    }
    if (fd >= 0)
        close(fd);
    if (!ok) {
        free(buf);
        trd_drv_log(TRD_LOG_INFO, "JIT cache entry %s is corrupted: rebuilding it", path);
        unlink(path);
        return 0;
    }
    *data = buf;
    *size = fsize - HEADER;
    return 1;
}

void cuda_cache_write(struct cuda_driver *drv, const char *dir, const char *key, const void *data, size_t size)
{
    char d[4096], path[4352], tmp[4480];
    if (!dir || !cache_dir(drv, dir, d, sizeof d))
        return;
    snprintf(path, sizeof path, "%s/%s.cubin", d, key);
    snprintf(tmp, sizeof tmp, "%s.%ld.%lx.tmp", path, (long)getpid(), (unsigned long)pthread_self());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        warn_once(drv, "JIT cache disabled: cannot write in %s: %s", d, strerror(errno));
        return;
    }
    unsigned char head[HEADER];
    uint64_t n = size, sum = fnv1a(data, size);
    memcpy(head, MAGIC, 8);
    memcpy(head + 8, &n, 8);
    memcpy(head + 16, &sum, 8);
    int ok = write(fd, head, HEADER) == HEADER && write(fd, data, size) == (ssize_t)size;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        warn_once(drv, "JIT cache disabled: cannot write %s: %s", path, strerror(e));
    }
}
