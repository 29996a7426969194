/* SPDX-License-Identifier: Apache-2.0 */
/* file.c: bounded reads of regular files, refusing FIFOs, devices and directories before reading a byte. */
#include "base/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *trd_file_kind(unsigned int mode)
{
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    return "not a regular file";
}

/* Why a file or directory with status sb is not this user's alone (another user's, or others may write it), or
 * NULL. */
static const char *untrusted(const struct stat *sb, char *why, size_t cap)
{
    if (sb->st_uid != geteuid())
        snprintf(why, cap, "belongs to another user (uid %lu)", (unsigned long)sb->st_uid);
    else if (sb->st_mode & 022)
        snprintf(why, cap, "is writable by group or others (mode %04o)", (unsigned)(sb->st_mode & 07777));
    else
        return NULL;
    return why;
}

static int open_checked(const char *path, size_t max, int private, size_t *size, trd_status_t *st, char *msg,
                        size_t cap)
{
    /* O_NONBLOCK: opening a FIFO without a writer would wait forever; the check below refuses it anyway */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (private ? O_NOFOLLOW : 0));
    if (fd < 0) {
        int e = errno;
        struct stat lsb;
        if (private && e == ELOOP && lstat(path, &lsb) == 0 && S_ISLNK(lsb.st_mode)) {
            *st = TRD_ERR_STATE;
            snprintf(msg, cap, "'%s' is a symbolic link", path);
            return -1;
        }
        *st = e == ENOENT || e == ENOTDIR ? TRD_ERR_NOT_FOUND : TRD_ERR_IO;
        snprintf(msg, cap, "cannot open '%s': %s", path, strerror(e));
        return -1;
    }
    struct stat sb;
    char why[96];
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        *st = TRD_ERR_IO;
        snprintf(msg, cap, "cannot stat '%s': %s", path, strerror(e));
        return -1;
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        *st = TRD_ERR_IO;
        snprintf(msg, cap, "'%s' is %s, not a regular file", path, trd_file_kind(sb.st_mode));
        return -1;
    }
    if (private && untrusted(&sb, why, sizeof why)) {
        close(fd);
        *st = TRD_ERR_STATE;
        snprintf(msg, cap, "'%s' %s", path, why);
        return -1;
    }
    if ((uint64_t)sb.st_size > max) {
        close(fd);
        *st = TRD_ERR_LIMIT;
        snprintf(msg, cap, "'%s' is %lld bytes, more than the %zu accepted", path, (long long)sb.st_size, max);
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    *size = (size_t)sb.st_size;
    return fd;
}

int trd_file_open_regular(const char *path, size_t max, size_t *size, trd_status_t *st, char *msg, size_t cap)
{
    return open_checked(path, max, 0, size, st, msg, cap);
}

int trd_file_open_private(const char *path, size_t max, size_t *size, trd_status_t *st, char *msg, size_t cap)
{
    return open_checked(path, max, 1, size, st, msg, cap);
}

static trd_status_t load(const char *path, size_t max, int private, char **data, size_t *size, char *msg,
                         size_t cap)
{
    trd_status_t st;
    size_t n;
    int fd = open_checked(path, max, private, &n, &st, msg, cap);
    if (fd < 0)
        return st;
    char *buf = malloc(n + 1);
    if (!buf) {
        close(fd);
        snprintf(msg, cap, "out of memory reading '%s' (%zu bytes)", path, n);
        return TRD_ERR_NO_MEMORY;
    }
    size_t got = 0;
    /* read one byte past the size fstat gave: a file that grew is caught, not cut */
    while (got <= n) {
        ssize_t r = read(fd, buf + got, n + 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            close(fd);
            snprintf(msg, cap, "cannot read '%s': %s", path, strerror(e));
            return TRD_ERR_IO;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (got != n) {
        free(buf);
        snprintf(msg, cap, "cannot read '%s': it %s while being read", path, got < n ? "shrank" : "grew");
        return TRD_ERR_IO;
    }
    buf[n] = '\0';
    *data = buf;
    *size = n;
    return TRD_OK;
}


trd_status_t trd_file_load(const char *path, size_t max, char **data, size_t *size, char *msg, size_t cap)
{
    return load(path, max, 0, data, size, msg, cap);
}

trd_status_t trd_file_load_private(const char *path, size_t max, char **data, size_t *size, char *msg, size_t cap)
{
    return load(path, max, 1, data, size, msg, cap);
}

trd_status_t trd_file_dir_private(const char *path, char *msg, size_t cap)
{
    struct stat sb;
    char why[96];
    if (stat(path, &sb) != 0) {
        int e = errno;
        snprintf(msg, cap, "cannot use directory '%s': %s", path, strerror(e));
        return e == ENOENT ? TRD_ERR_NOT_FOUND : TRD_ERR_IO;
    }
    if (!S_ISDIR(sb.st_mode)) {
        snprintf(msg, cap, "'%s' is not a directory", path);
        return TRD_ERR_IO;
    }
    if (untrusted(&sb, why, sizeof why)) {
        snprintf(msg, cap, "directory '%s' %s; its entries are ignored", path, why);
        return TRD_ERR_STATE;
    }
    if ((sb.st_mode & 077) && chmod(path, 0700) != 0) {
        snprintf(msg, cap, "cannot make directory '%s' private: %s", path, strerror(errno));
        return TRD_ERR_IO;
    }
    return TRD_OK;
}

trd_status_t trd_file_store(const char *path, const void *data, size_t size, int mode, char *msg, size_t cap)
{
    /* a temporary of this write's own (process, this copy of the code, sequence number): writers of one path, in
     * this process or another, never share one; the last rename wins whole */
    static atomic_ulong seq;
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%lx.%lu", path, (long)getpid(), (unsigned long)(uintptr_t)&seq,
                 atomic_fetch_add(&seq, 1)) >= (int)sizeof tmp) {
        snprintf(msg, cap, "cannot write '%s': the path is too long", path);
        return TRD_ERR_IO;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0) {
        snprintf(msg, cap, "cannot create '%s': %s", tmp, strerror(errno));
        return TRD_ERR_IO;
    }
    const char *p = data;
    size_t left = size;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            snprintf(msg, cap, "cannot write '%s': %s", tmp, w < 0 ? strerror(errno) : "short write");
            close(fd);
            unlink(tmp);
            return TRD_ERR_IO;
        }
        p += w;
        left -= (size_t)w;
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
        snprintf(msg, cap, "cannot write '%s': %s", tmp, strerror(errno));
        unlink(tmp);
        return TRD_ERR_IO;
    }
    if (rename(tmp, path) != 0) {
        snprintf(msg, cap, "cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
        unlink(tmp);
        return TRD_ERR_IO;
    }
    return TRD_OK;
}

trd_status_t trd_file_mkdirs(const char *path, int mode, char *msg, size_t cap)
{
    char p[4096];
    if (snprintf(p, sizeof p, "%s", path) >= (int)sizeof p) {
        snprintf(msg, cap, "cannot create directory '%s': the path is too long", path);
        return TRD_ERR_IO;
    }
    for (char *s = p + 1;; s++) {
        if (*s == '/' || *s == '\0') {
            char c = *s;
            *s = '\0';
            if (mkdir(p, (mode_t)mode) != 0 && errno != EEXIST) {
                snprintf(msg, cap, "cannot create directory '%s': %s", p, strerror(errno));
                return TRD_ERR_IO;
            }
            *s = c;
            if (c == '\0')
                break;
        }
    }
    return TRD_OK;
}
