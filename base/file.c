/* file.c: bounded reads of regular files, refusing FIFOs, devices and directories before reading a byte. */
#include "base/file.h"

#include <errno.h>
#include <fcntl.h>
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

int trd_file_open_regular(const char *path, size_t max, size_t *size, trd_status_t *st, char *msg, size_t cap)
{
    /* O_NONBLOCK: opening a FIFO without a writer would wait forever; the check below refuses it anyway */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        int e = errno;
        *st = e == ENOENT || e == ENOTDIR ? TRD_ERR_NOT_FOUND : TRD_ERR_IO;
        snprintf(msg, cap, "cannot open '%s': %s", path, strerror(e));
        return -1;
    }
    struct stat sb;
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

trd_status_t trd_file_load(const char *path, size_t max, char **data, size_t *size, char *msg, size_t cap)
{
    trd_status_t st;
    size_t n;
    int fd = trd_file_open_regular(path, max, &n, &st, msg, cap);
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
