/* SPDX-License-Identifier: Apache-2.0 */
/* module.c: loading a kernel: the image is checked (elf_check.c), written to
 * an anonymous memory file (or a file in TMPDIR) and dlopen()ed from there;
 * the kernel's function, options and scratch slices are kept. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "drivers/common/arith.h"
#include "drivers/host/host.h"

/* The directory kernels are written to when there is no memfd_create: TMPDIR
 * (ignored in setuid programs), else /tmp. It must allow executing mapped
 * files (not mounted noexec). */
static const char *kernel_dir(const char **origin)
{
    const char *d = secure_getenv("TMPDIR");
    *origin = d && *d ? "TMPDIR" : "the default; set TMPDIR to choose another";
    return d && *d ? d : "/tmp";
}

/* 1 when dlopen(path) would return an object loaded earlier under that name
 * instead of loading the file. */
static int name_is_loaded(const char *path)
{
    void *dl = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (dl)
        dlclose(dl);
    return dl != NULL;
}

/* dlopen()s the image written to fd, reachable as `path`; on failure *st is
 * TRD_ERR_IO (writing) or TRD_ERR_FORMAT (loading). */
static void *open_written(int fd, const char *path, const void *image, uint64_t size, const char *label, char *err,
                          size_t errcap, trd_status_t *st)
{
    const char *p = image;
    uint64_t left = size;
    while (left > 0) {
        ssize_t w = write(fd, p, (size_t)left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            snprintf(err, errcap, "cannot write %s's image to %s: %s", label, path, strerror(errno));
            *st = TRD_ERR_IO;
            return NULL;
        }
        p += w;
        left -= (uint64_t)w;
    }
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        const char *e = dlerror();
        snprintf(err, errcap, "the host image of %s does not load: %s", label, e ? e : "dlopen failed");
        *st = TRD_ERR_FORMAT;
    }
    return dl;
}

/* Descriptors left to the program: a memory file numbered within this many of the descriptor limit is closed
 * once loaded instead of kept (its object's name may then come to name another file), so loaded kernels never
 * take a program's last descriptors. */
#define KEEP_RESERVE 256

static int may_keep(int fd)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 0;
    return rl.rlim_cur == RLIM_INFINITY || (rlim_t)fd + KEEP_RESERVE < rl.rlim_cur;
}

/* dlopen()s an in-memory shared object: through an anonymous memory file
 * where the kernel has memfd_create, else through a file in kernel_dir()
 * that is removed once loaded. *keep_fd: the memory file's descriptor, which
 * the caller closes after dlclose (else -1): the object is named
 * /proc/self/fd/N, and tools that read a loaded object by its name (a
 * sanitizer's symbolizer, a debugger, a profiler) would read another thread's
 * half-written kernel if N were closed and reused while the object is loaded
 * (kept unless may_keep says the program needs the descriptor more). */
static void *open_image(const void *image, uint64_t size, const char *label, char *err, size_t errcap,
                        trd_status_t *st, int *keep_fd)
{
    *keep_fd = -1;
    char memfd_why[128] = "";
#if HAVE_MEMFD_CREATE
    int mfd = memfd_create("trident-host-kernel", MFD_CLOEXEC);
    char mpath[64];
    /* dlopen returns an object already loaded under the same name, and the name "/proc/self/fd/N" comes back
     * once fd N is closed: move the file to a number no loaded object is named after */
    for (int tries = 0; mfd >= 0; tries++) {
        snprintf(mpath, sizeof mpath, "/proc/self/fd/%d", mfd);
        if (!name_is_loaded(mpath))
            break;
        int moved = tries < 64 ? fcntl(mfd, F_DUPFD_CLOEXEC, mfd + 1) : -1;
        close(mfd);
        mfd = moved;
    }
    if (mfd >= 0) {
        void *dl = open_written(mfd, mpath, image, size, label, err, errcap, st);
        if (dl && may_keep(mfd))
            *keep_fd = mfd;
        else
            close(mfd);
        return dl;
    }
    snprintf(memfd_why, sizeof memfd_why, " (memfd_create failed: %s)", strerror(errno));
#endif
    const char *origin;
    const char *dir = kernel_dir(&origin);
    char path[4096];
    if (snprintf(path, sizeof path, "%s/trident-kernel-XXXXXX", dir) >= (int)sizeof path) {
        snprintf(err, errcap, "cannot write %s's image: the kernel directory %s (%s) is a path too long%s", label,
                 dir, origin, memfd_why);
        *st = TRD_ERR_IO;
        return NULL;
    }
    char tmpl[4096];
    memcpy(tmpl, path, sizeof tmpl);
    int fd;
    while ((fd = mkstemp(path)) >= 0 && name_is_loaded(path)) { /* a name an earlier kernel still has */
        close(fd);
        unlink(path);
        memcpy(path, tmpl, sizeof path);
    }
    if (fd < 0) {
        snprintf(err, errcap,
                 "cannot write %s's image: cannot create a file in %s (%s): %s%s; it must be a writable directory "
                 "that allows running programs",
                 label, dir, origin, strerror(errno), memfd_why);
        *st = TRD_ERR_IO;
        return NULL;
    }
    void *dl = open_written(fd, path, image, size, label, err, errcap, st);
    close(fd);
    unlink(path);
    if (!dl) {
        struct statvfs vfs;
        int noexec = statvfs(dir, &vfs) == 0 && (vfs.f_flag & ST_NOEXEC);
        size_t n = strlen(err);
        snprintf(err + n, errcap - n, "; host kernels are written to %s (%s)%s%s", dir, origin,
                 noexec ? ", on a file system mounted noexec: choose a directory that allows running programs" : "",
                 memfd_why);
    }
    return dl;
}

/* The pointer parameters and their names, from a core that passes them, so that a fault can name its buffer. */
static int keep_pointers(struct host_module *m, const trd_driver_module_desc_t *d)
{
    if (d->struct_size < offsetof(trd_driver_module_desc_t, params) + sizeof d->params || !d->params)
        return 1;
    uint32_t n = 0;
    for (uint32_t i = 0; i < d->num_params; i++)
        n += d->params[i].kind == TRD_PARAM_POINTER;
    if (n == 0 || !(m->pointers = calloc(n, sizeof *m->pointers)))
        return n == 0;
    for (uint32_t i = 0; i < d->num_params; i++) {
        if (d->params[i].kind != TRD_PARAM_POINTER)
            continue;
        struct host_pointer_param *p = &m->pointers[m->num_pointers++];
        p->index = i;
        if (d->params[i].name && !(p->name = strdup(d->params[i].name)))
            return 0;
    }
    return 1;
}

trd_status_t host_module_load(void *device, const trd_driver_module_desc_t *d, void **out,
                              trd_load_info_t *info)
{
    if (d->format != TRD_FORMAT_HOST_SO)
        return trd_drv_error(TRD_ERR_UNSUPPORTED, "the host driver runs shared objects, not format %d", d->format);
    char err[512];
    if (!host_image_check(d->image, d->image_size, err, sizeof err))
        return trd_drv_error(TRD_ERR_FORMAT, "the host image of %s does not load: %s", d->label, err);
    trd_status_t st = TRD_OK;
    int fd;
    void *dl = open_image(d->image, d->image_size, d->label, err, sizeof err, &st, &fd);
    if (!dl)
        return trd_drv_error(st, "%s", err);
    trd_host_kernel_fn *fn;
    *(void **)&fn = dlsym(dl, d->entry);
    struct host_module *m = fn ? calloc(1, sizeof *m) : NULL;
    if (!m) {
        dlclose(dl);
        if (fd >= 0)
            close(fd);
        return fn ? trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory")
                  : trd_drv_error(TRD_ERR_NOT_FOUND, "the host image of %s exports no function '%s'", d->label,
                                  d->entry);
    }
    m->dev = device;
    m->dl = dl;
    m->fd = fd;
    m->fn = fn;
    atomic_init(&m->refs, 1);
    snprintf(m->label, sizeof m->label, "%s", d->label);
    m->num_params = d->num_params;
    if (!keep_pointers(m, d)) {
        host_module_release(m);
        return trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory");
    }
    /* a program's slice of each scratch; the launch's total is the core's figure */
    if (!trd_align_up_u64(d->global_scratch_size, d->global_scratch_align ? d->global_scratch_align : 1,
                          &m->gstride) ||
        !trd_align_up_u64(d->profile_scratch_size, d->profile_scratch_align ? d->profile_scratch_align : 1,
                          &m->pstride)) {
        host_module_release(m);
        return trd_drv_error(TRD_ERR_LIMIT, "the scratch a program of %s needs does not fit 64 bits", d->label);
    }
    m->catch_faults = m->dev->drv->catch_faults && host_fault_install();
    if (m->dev->drv->catch_faults && !m->catch_faults)
        trd_drv_log(TRD_LOG_WARN, "host: cannot install the fault handlers: a fault of %s kills the process",
                    m->label);
    int32_t dbg = 0;
    int64_t grain = 0;
    if (trd_drv_options_get_bool(d->options, "debug", &dbg) == TRD_OK)
        m->sequential = dbg;
    if (trd_drv_options_get_int(d->options, "grain", &grain) == TRD_OK)
        m->grain = (uint64_t)grain;
    info->registers = 0;
    info->spills = 0;
    info->max_threads_per_block = 0; /* no block on the host */
    *out = m;
    return TRD_OK;
}

void host_module_release(struct host_module *m)
{
    if (atomic_fetch_sub_explicit(&m->refs, 1, memory_order_acq_rel) != 1)
        return;
    dlclose(m->dl);
    if (m->fd >= 0)
        close(m->fd);
    for (uint32_t i = 0; i < m->num_pointers; i++)
        free(m->pointers[i].name);
    free(m->pointers);
    free(m);
}

/* Launches still queued keep the code loaded (host_module_release). */
void host_module_unload(void *module)
{
    if (module)
        host_module_release(module);
}
