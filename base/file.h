/* SPDX-License-Identifier: Apache-2.0 */
/* file.h: reading files whose paths come from users (kernels, metadata, configuration, caches, libraries), and
 * writing files atomically. No state: built into libtrident and every module that needs it (the driver modules,
 * libtrident_xla), so that all of them refuse the same inputs the same way:
 * only regular files, never blocking on a FIFO or a device, never more than the caller's limit. */
#ifndef TRD_BASE_FILE_H
#define TRD_BASE_FILE_H

#include <stddef.h>

#include <trident/trident.h>

/* Reads the whole regular file at path (at most max bytes) into a malloc'ed buffer with a NUL after the data.
 * On failure returns TRD_ERR_NOT_FOUND, TRD_ERR_IO (not a regular file, a read error), TRD_ERR_LIMIT or
 * TRD_ERR_NO_MEMORY, writes a message naming the path into msg (cap bytes), and leaves *data and *size alone. */
trd_status_t trd_file_load(const char *path, size_t max, char **data, size_t *size, char *msg, size_t cap);

/* Opens path for reading without blocking on a FIFO, and refuses anything but a regular file of at most max
 * bytes. Returns the descriptor (blocking again, close-on-exec) and its size, or -1 with the status in *st and a
 * message in msg. */
int trd_file_open_regular(const char *path, size_t max, size_t *size, trd_status_t *st, char *msg, size_t cap);

/* The same for a file of a cache, which only this user may have written: also refuses (TRD_ERR_STATE, before
 * reading a byte) a symbolic link, a file of another user, and one that group or others may write. */
int trd_file_open_private(const char *path, size_t max, size_t *size, trd_status_t *st, char *msg, size_t cap);
trd_status_t trd_file_load_private(const char *path, size_t max, char **data, size_t *size, char *msg, size_t cap);
/* path is a directory of this user's that group and others may not write (one they may only read is made 0700):
 * TRD_OK; else TRD_ERR_NOT_FOUND (absent), TRD_ERR_STATE (another user's, or writable by others: what it holds
 * may be planted) or TRD_ERR_IO, with a message naming it in msg. */
trd_status_t trd_file_dir_private(const char *path, char *msg, size_t cap);

/* Writes a file atomically: a temporary of its own beside it, then a rename; safe for concurrent writers (of
 * this process or another). On failure returns TRD_ERR_IO with a message naming the path in msg. */
trd_status_t trd_file_store(const char *path, const void *data, size_t size, int mode, char *msg, size_t cap);
/* mkdir -p, with `mode` for the directories it creates. On failure TRD_ERR_IO with a message in msg. */
trd_status_t trd_file_mkdirs(const char *path, int mode, char *msg, size_t cap);

/* "a directory", "a FIFO", "a character device", ... for a st_mode that is not a regular file. */
const char *trd_file_kind(unsigned int mode);

#endif
