/* SPDX-License-Identifier: Apache-2.0 */
/* driver_double_open.c: the tests' side of the driver double
 * (driver_double.h): a copy of the built module per file name, opened and
 * configured before a runtime loads it. */
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/drivers/driver_double.h"
#include "tests/testutil.h"

#define TDD_MAX_FILES 16

/* Check's asserts work only inside a test, and a test program may open the double in main (test_xla): a failure
 * here says why on stderr and exits 1 (in a test: reported as its early exit). */
#define REQUIRE(cond, ...)                                                                                       \
    do {                                                                                                         \
        if (!(cond)) {                                                                                           \
            fprintf(stderr, "driver double: " __VA_ARGS__);                                                      \
            fputc('\n', stderr);                                                                                 \
            exit(1);                                                                                             \
        }                                                                                                        \
    } while (0)

/* The copies this process opened (a forked test inherits its parent's, still open). */
static struct {
    char file[64];
    char path[4096];
    void *dl;
    struct tdd_state *st;
} opened[TDD_MAX_FILES];
static unsigned nopened;
static pid_t made_by; /* the process that made this process's directory */
static char dir[4096];

const char *tdd_path(const char *file)
{
    for (unsigned i = 0; i < nopened; i++)
        if (!strcmp(opened[i].file, file))
            return opened[i].path;
    if (made_by != getpid()) {
        snprintf(dir, sizeof dir, "%s/tests/home/doubles.%ld", tu_builddir(), (long)getpid());
        mkdir(tu_path("%s/tests/home", tu_builddir()), 0755); /* made by an earlier test, or now */
        REQUIRE(mkdir(dir, 0755) == 0 || errno == EEXIST, "mkdir %s: %s", dir, strerror(errno));
        made_by = getpid();
    }
    return tu_path("%s/%s.so", dir, file);
}

/* Copies the built double to path through a temporary file (a new inode: a new object for dlopen). */
static void copy_module(const char *path)
{
    const char *src = tu_path("%s/tests/drivers/.libs/driver_double.so", tu_builddir());
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *in = fopen(src, "rb"), *out = fopen(tmp, "wb");
    REQUIRE(in && out, "copy %s to %s: %s", src, tmp, strerror(errno));
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        REQUIRE(fwrite(buf, 1, n, out) == n, "write %s: %s", tmp, strerror(errno));
    REQUIRE(!ferror(in), "read %s: %s", src, strerror(errno));
    fclose(in);
    REQUIRE(fclose(out) == 0, "write %s: %s", tmp, strerror(errno));
    REQUIRE(rename(tmp, path) == 0, "rename %s: %s", tmp, strerror(errno));
}

struct tdd_state *tdd_open(const char *file, const char **path)
{
    for (unsigned i = 0; i < nopened; i++)
        if (!strcmp(opened[i].file, file)) {
            trd_double_reset_dl(opened[i].dl);
            if (path)
                *path = opened[i].path;
            return opened[i].st;
        }
    REQUIRE(nopened < TDD_MAX_FILES && strlen(file) < sizeof opened[0].file, "%s: too many files, or a long name",
            file);
    const char *p = tdd_path(file);
    copy_module(p);
    char err[512];
    void *dl = NULL;
    struct tdd_state *st = trd_double_open(p, sizeof *st, &dl, err, sizeof err);
    REQUIRE(st != NULL, "%s", err);
    snprintf(opened[nopened].file, sizeof opened[nopened].file, "%s", file);
    snprintf(opened[nopened].path, sizeof opened[nopened].path, "%s", p);
    opened[nopened].dl = dl;
    opened[nopened].st = st;
    nopened++;
    if (path)
        *path = opened[nopened - 1].path;
    return st;
}

struct tdd_state *tdd_get(const char *file)
{
    for (unsigned i = 0; i < nopened; i++)
        if (!strcmp(opened[i].file, file))
            return opened[i].st;
    REQUIRE(0, "%s was not opened", file);
    return NULL;
}

struct tdd_state *tdd_facts(struct tdd_state *st, const char *name, const char *backend, const char *arch,
                            unsigned devices, const char *pci0)
{
    pthread_mutex_lock(&st->common.lock);
    snprintf(st->name, sizeof st->name, "%s", name);
    snprintf(st->backend, sizeof st->backend, "%s", backend);
    snprintf(st->arch, sizeof st->arch, "%s", arch);
    st->devices = devices;
    if (pci0)
        snprintf(st->pci[0], sizeof st->pci[0], "%s", pci0);
    pthread_mutex_unlock(&st->common.lock);
    return st;
}

const char *tdd_paths(const char *const *files, unsigned n)
{
    static char buf[8192];
    buf[0] = '\0';
    for (unsigned i = 0; i < n; i++)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", i ? ":" : "", tdd_path(files[i]));
    return buf;
}

void tdd_assert_clean(struct tdd_state *st)
{
    unsigned n = trd_double_violation_count(&st->common);
    ck_assert_msg(n == 0, "%s: %u contract violations, the first: %s", st->name, n,
                  trd_double_violation_get(&st->common, 0));
    ck_assert_msg(!st->live_drivers && !st->live_devices && !st->live_modules && !st->live_allocs &&
                      !st->live_streams && !st->live_events,
                  "%s alive: %d drivers, %d devices, %d modules, %d allocations, %d streams, %d events", st->name,
                  st->live_drivers, st->live_devices, st->live_modules, st->live_allocs, st->live_streams,
                  st->live_events);
}

/* The copies go with the process that made them (an open module's file may be unlinked). */
__attribute__((destructor)) static void tdd_remove(void)
{
    if (made_by != getpid())
        return;
    for (unsigned i = 0; i < nopened; i++)
        if (!strncmp(opened[i].path, dir, strlen(dir)) && opened[i].path[strlen(dir)] == '/')
            unlink(opened[i].path);
    rmdir(dir);
}
