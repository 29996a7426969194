/* SPDX-License-Identifier: Apache-2.0 */
/* cache.c: the on-disk cache of JIT results (PTX -> cubin), so that a fresh
 * process does not pay the PTX compilation again. Entries are written
 * atomically (a temporary file, then rename) in a private (0700) directory.
 * An entry proves what it holds rather than trusting its name: it carries its
 * key, its length and a checksum of both, so that a torn, corrupted, swapped
 * or copied entry is detected and rebuilt. Only what this user alone may have
 * written is read: an entry of another user, writable by group or others or a
 * symbolic link is rebuilt, and a directory of another user or writable by
 * others disables the cache for the process with one warning, as does one that
 * cannot be made. */
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

#define MAGIC "TRDJIT02"
#define HEADER 32 /* magic, key length, payload size, FNV-1a 64 of the key and the payload */
#define KEY_MAX 512

static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static uint64_t entry_sum(const char *key, size_t klen, const void *data, size_t n)
{
    return fnv1a(fnv1a(0xcbf29ce484222325ull, key, klen), data, n);
}

static void warn_once(struct cuda_driver *drv, const char *fmt, const char *a, const char *b)
{
    if (atomic_exchange(&drv->cache_warned, 1) == 0)
        trd_drv_log(TRD_LOG_WARN, fmt, a, b);
}

/* <dir>/cuda, created private; 0 when it cannot be used safely. */
static int cache_dir(struct cuda_driver *drv, const char *dir, char *out, size_t cap)
{
    if (atomic_load(&drv->cache_warned))
        return 0; /* disabled after a failure */
    if (snprintf(out, cap, "%s/cuda", dir) >= (int)cap)
        return 0;
    char msg[1024];
    if (trd_file_mkdirs(out, 0700, msg, sizeof msg) != TRD_OK || trd_file_dir_private(out, msg, sizeof msg) != TRD_OK) {
        warn_once(drv, "JIT cache disabled: %s%s", msg, "");
        return 0;
    }
    return 1;
}

int cuda_cache_read(struct cuda_driver *drv, const char *dir, const char *key, void **data, size_t *size)
{
    char d[4096], path[4352];
    size_t klen = strlen(key);
    if (!dir || klen > KEY_MAX || !cache_dir(drv, dir, d, sizeof d))
        return 0;
    snprintf(path, sizeof path, "%s/%s.cubin", d, key);
    /* a FIFO or device planted in the cache is refused without blocking, like any corrupted entry; so is an entry
     * someone else could have written */
    trd_status_t fst = TRD_OK;
    char msg[512], held[KEY_MAX];
    size_t fsize = 0;
    int fd = trd_file_open_private(path, (size_t)1 << 31, &fsize, &fst, msg, sizeof msg);
    if (fd < 0 && fst == TRD_ERR_NOT_FOUND)
        return 0;
    unsigned char head[HEADER];
    void *buf = NULL;
    int ok = 0;
    if (fd >= 0 && fsize >= HEADER + klen && read(fd, head, HEADER) == HEADER && memcmp(head, MAGIC, 8) == 0) {
        uint64_t kn, n, sum;
        memcpy(&kn, head + 8, 8);
        memcpy(&n, head + 16, 8);
        memcpy(&sum, head + 24, 8);
        /* the key it holds must be the one asked for: an entry renamed or copied is another kernel's code */
        if (kn == klen && n == (uint64_t)fsize - HEADER - klen && read(fd, held, klen) == (ssize_t)klen &&
            memcmp(held, key, klen) == 0 && (buf = malloc(n ? n : 1)) && read(fd, buf, n) == (ssize_t)n &&
            entry_sum(key, klen, buf, n) == sum)
            ok = 1;
    }
    if (fd >= 0)
        close(fd);
    if (!ok) {
        free(buf);
        if (fd < 0 && fst == TRD_ERR_STATE) /* msg names it and why */
            trd_drv_log(TRD_LOG_WARN, "JIT cache entry ignored: %s; rebuilding it", msg);
        else
            trd_drv_log(TRD_LOG_INFO, "JIT cache entry %s is corrupted or another kernel's: rebuilding it", path);
        unlink(path);
        return 0;
    }
    *data = buf;
    *size = fsize - HEADER - klen;
    return 1;
}

void cuda_cache_write(struct cuda_driver *drv, const char *dir, const char *key, const void *data, size_t size)
{
    char d[4096], path[4352];
    size_t klen = strlen(key);
    if (!dir || klen > KEY_MAX || !cache_dir(drv, dir, d, sizeof d))
        return;
    snprintf(path, sizeof path, "%s/%s.cubin", d, key);
    unsigned char *entry = malloc(HEADER + klen + size);
    if (!entry)
        return; /* only a later recompilation lost */
    uint64_t kn = klen, n = size, sum = entry_sum(key, klen, data, size);
    memcpy(entry, MAGIC, 8);
    memcpy(entry + 8, &kn, 8);
    memcpy(entry + 16, &n, 8);
    memcpy(entry + 24, &sum, 8);
    memcpy(entry + HEADER, key, klen);
    memcpy(entry + HEADER + klen, data, size);
    char msg[1024];
    if (trd_file_store(path, entry, HEADER + klen + size, 0600, msg, sizeof msg) != TRD_OK)
        warn_once(drv, "JIT cache disabled: %s%s", msg, "");
    free(entry);
}
