/* SPDX-License-Identifier: Apache-2.0 */
/* host.c: the host CPU driver. Kernels are native shared objects loaded from
 * memory; each program of the grid is one call (host_kernel.h). */
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
#include <sys/utsname.h>
#include <unistd.h>

#include "drivers/common/arith.h"
#include "drivers/host/host.h"

static void read_cpuinfo(struct host_driver *d)
{
    snprintf(d->cpu_name, sizeof d->cpu_name, "host CPU");
    snprintf(d->vendor, sizeof d->vendor, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    int got_name = 0, got_vendor = 0;
    while (fgets(line, sizeof line, f) && !(got_name && got_vendor)) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        char *v = colon + 1;
        while (*v == ' ' || *v == '\t')
            v++;
        v[strcspn(v, "\n")] = '\0';
        if (!got_name && strncmp(line, "model name", 10) == 0) {
            snprintf(d->cpu_name, sizeof d->cpu_name, "%s", v);
            got_name = 1;
        } else if (!got_vendor && strncmp(line, "vendor_id", 9) == 0) {
            snprintf(d->vendor, sizeof d->vendor, "%s", v);
            got_vendor = 1;
        }
    }
    fclose(f);
}

static trd_status_t host_init(const trd_driver_init_args_t *args, void **out)
{
    struct host_driver *d = calloc(1, sizeof *d);
    if (!d)
        return trd_driver_error(TRD_ERR_NO_MEMORY, "out of memory");
    d->ndevices = 1;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    d->threads = ncpu > 0 ? (uint32_t)ncpu : 1;
    const char *v;
    if (args->config_get && (v = args->config_get(args->config_ctx, "devices")))
        d->ndevices = (uint32_t)strtoul(v, NULL, 10); /* validated by the option table */
    if (args->config_get && (v = args->config_get(args->config_ctx, "threads")) && strtoul(v, NULL, 10) > 0)
        d->threads = (uint32_t)strtoul(v, NULL, 10);
    d->catch_faults = !(args->config_get && (v = args->config_get(args->config_ctx, "catch_faults")) &&
                        strcmp(v, "false") == 0);
    host_memory_init(&d->mem, args->config_get && (v = args->config_get(args->config_ctx, "guarded_buffers"))
                                  ? strtoll(v, NULL, 10) : -1);
    read_cpuinfo(d);
    struct utsname u;
    snprintf(d->arch, sizeof d->arch, "%.31s", uname(&u) == 0 ? u.machine : "unknown");
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    d->memory = pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize : 0;
    if (d->ndevices == 0 && args->note)
        snprintf(args->note, args->note_cap, "0 devices: [driver.host] devices = 0");
    *out = d;
    return TRD_OK;
}

static void host_fini(void *driver)
{
    host_memory_fini(&((struct host_driver *)driver)->mem);
    free(driver);
}

static trd_status_t host_device_count(void *driver, uint32_t *count)
{
    *count = ((struct host_driver *)driver)->ndevices;
    return TRD_OK;
}

static trd_status_t host_device_props(void *driver, uint32_t ordinal, trd_device_props_t *p)
{
    struct host_driver *d = driver;
    if (ordinal >= d->ndevices)
        return trd_driver_error(TRD_ERR_NOT_FOUND, "host device %u does not exist", ordinal);
    p->kind = TRD_DEVICE_CPU;
    p->name = d->cpu_name;
    p->vendor = d->vendor;
    p->arch = d->arch;
    p->pci_bus_id = NULL;
    p->warp_size = 1;
    p->compute_units = d->threads;
    p->max_threads_per_block = 1024;
    p->memory_bytes = d->memory;
    p->max_shared_per_block = 0;
    p->max_shared_per_block_optin = 0;
    return TRD_OK;
}

static trd_status_t host_device_open(void *driver, uint32_t ordinal, void **out)
{
    struct host_driver *d = driver;
    struct host_device *dev = calloc(1, sizeof *dev);
    if (!dev)
        return trd_driver_error(TRD_ERR_NO_MEMORY, "out of memory");
    dev->drv = d;
    dev->ordinal = ordinal;
    if (!host_pool_start(&dev->pool, d->threads)) {
        free(dev);
        return trd_driver_error(TRD_ERR_NO_MEMORY, "cannot start %u worker threads", d->threads);
    }
    pthread_mutex_init(&dev->streams_lock, NULL);
    *out = dev;
    return TRD_OK;
}

static void host_device_close(void *device)
{
    struct host_device *dev = device;
    pthread_mutex_destroy(&dev->streams_lock);
    host_pool_stop(&dev->pool);
    free(dev);
}

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

static trd_status_t host_module_load(void *device, const trd_driver_module_desc_t *d, void **out,
                                     trd_load_info_t *info)
{
    if (d->format != TRD_FORMAT_HOST_SO)
        return trd_driver_error(TRD_ERR_UNSUPPORTED, "the host driver runs shared objects, not format %d", d->format);
    char err[512];
    if (!host_image_check(d->image, d->image_size, err, sizeof err))
        return trd_driver_error(TRD_ERR_FORMAT, "the host image of %s does not load: %s", d->label, err);
    trd_status_t st = TRD_OK;
    int fd;
    void *dl = open_image(d->image, d->image_size, d->label, err, sizeof err, &st, &fd);
    if (!dl)
        return trd_driver_error(st, "%s", err);
    trd_host_kernel_fn *fn;
    *(void **)&fn = dlsym(dl, d->entry);
    struct host_module *m = fn ? calloc(1, sizeof *m) : NULL;
    if (!m) {
        dlclose(dl);
        if (fd >= 0)
            close(fd);
        return fn ? trd_driver_error(TRD_ERR_NO_MEMORY, "out of memory")
                  : trd_driver_error(TRD_ERR_NOT_FOUND, "the host image of %s exports no function '%s'", d->label,
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
        return trd_driver_error(TRD_ERR_NO_MEMORY, "out of memory");
    }
    m->catch_faults = m->dev->drv->catch_faults && host_fault_install();
    if (m->dev->drv->catch_faults && !m->catch_faults)
        trd_driver_log(TRD_LOG_WARN, "host: cannot install the fault handlers: a fault of %s kills the process",
                       m->label);
    int32_t dbg = 0;
    int64_t grain = 0;
    if (trd_options_get_bool(d->options, "debug", &dbg) == TRD_OK)
        m->sequential = dbg;
    if (trd_options_get_int(d->options, "grain", &grain) == TRD_OK)
        m->grain = (uint64_t)grain;
    m->gs_size = d->global_scratch_size;
    m->gs_align = d->global_scratch_align ? d->global_scratch_align : 1;
    m->ps_size = d->profile_scratch_size;
    m->ps_align = d->profile_scratch_align ? d->profile_scratch_align : 1;
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
static void host_module_unload(void *module)
{
    if (module)
        host_module_release(module);
}

trd_status_t host_execute(struct host_module *m, const uint32_t grid[3], void *const *args, void *gscratch,
                          void *pscratch)
{
    struct host_pool *pool = &m->dev->pool;
    struct host_job job;
    memset(&job, 0, sizeof job);
    job.fn = m->fn;
    job.args = args;
    memcpy(job.grid, grid, sizeof job.grid);
    if (__builtin_mul_overflow((uint64_t)grid[0] * grid[1], grid[2], &job.total))
        return trd_driver_error(TRD_ERR_LIMIT, "a grid of %u x %u x %u programs: more than 2^64", grid[0], grid[1],
                                grid[2]);
    uint32_t workers = pool->nthreads + 1;
    job.grain = m->sequential ? job.total : m->grain ? m->grain : (job.total + 4 * workers - 1) / (4 * workers);
    if (job.grain == 0)
        job.grain = 1;
    atomic_init(&job.next, 0);
    atomic_init(&job.done, 0);
    atomic_init(&job.fault.sig, 0);
    job.catch_faults = m->catch_faults;
    /* Scratch: one slice per program, from the device's arena (reused). */
    uint64_t need_g = 0, need_p = 0, off_p = 0, need = 0; /* global, then profile at 64 bytes */
    if (!trd_align_up_u64(m->gs_size, m->gs_align, &job.gstride) ||
        !trd_align_up_u64(m->ps_size, m->ps_align, &job.pstride) ||
        (!gscratch && !trd_mul_u64(job.gstride, job.total, &need_g)) ||
        (!pscratch && !trd_mul_u64(job.pstride, job.total, &need_p)) || !trd_align_up_u64(need_g, 64, &off_p) ||
        !trd_add_u64(off_p, need_p, &need))
        return trd_driver_error(TRD_ERR_LIMIT, "the scratch of %llu programs (%llu + %llu bytes each) overflows 64 bits",
                                (unsigned long long)job.total, (unsigned long long)job.gstride,
                                (unsigned long long)job.pstride);
    uint64_t memory = m->dev->drv->memory;
    if (memory && need > memory)
        return trd_driver_error(TRD_ERR_NO_MEMORY,
                                "cannot allocate %llu bytes of scratch (%llu programs x %llu bytes): more than the "
                                "host's %llu bytes of memory",
                                (unsigned long long)need, (unsigned long long)job.total,
                                (unsigned long long)(job.gstride + job.pstride), (unsigned long long)memory);
    pthread_mutex_lock(&pool->submit);
    if (need > pool->scratch_cap) {
        char *p = NULL;
        if (posix_memalign((void **)&p, 64, (size_t)need) != 0) {
            pthread_mutex_unlock(&pool->submit);
            return trd_driver_error(TRD_ERR_NO_MEMORY, "cannot allocate %llu bytes of scratch (%llu programs x %llu "
                                    "bytes)", (unsigned long long)need, (unsigned long long)job.total,
                                    (unsigned long long)(job.gstride + job.pstride));
        }
        free(pool->scratch);
        pool->scratch = p;
        pool->scratch_cap = need;
    }
    job.gscratch = gscratch ? gscratch : (job.gstride ? pool->scratch : NULL);
    job.pscratch = pscratch ? pscratch : (job.pstride ? pool->scratch + off_p : NULL);
    host_pool_run(pool, &job);
    pthread_mutex_unlock(&pool->submit);
    if (atomic_load_explicit(&job.fault.sig, memory_order_relaxed)) {
        char where[512];
        host_memory_describe(&m->dev->drv->mem, job.fault.addr, m->pointers, m->num_pointers, args, where,
                             sizeof where);
        return host_fault_error(&job.fault, grid, where);
    }
    return TRD_OK;
}

static trd_status_t host_launch(void *module, void *stream, void *native, const trd_driver_launch_t *l)
{
    struct host_module *m = module;
    if (!stream)
        stream = native; /* a host stream's native handle is itself */
    if (stream)
        return host_stream_launch(stream, m, l);
    return host_execute(m, l->grid, l->params, l->global_scratch, l->profile_scratch);
}

static trd_status_t host_mem_alloc(void *device, uint64_t size, void **ptr)
{
    return host_memory_alloc(&((struct host_device *)device)->drv->mem, size, ptr);
}

/* Queued copies and launches may still use the memory: wait for them first,
 * as cudaFree and hipFree do. */
static void host_mem_free(void *device, void *ptr)
{
    struct host_device *dev = device;
    host_device_drain(dev);
    host_memory_free(&dev->drv->mem, ptr);
}

static trd_status_t host_mem_copy(void *device, void *dst, const void *src, uint64_t size, int32_t kind, void *stream)
{
    (void)device;
    (void)kind;
    if (!stream) {
        memmove(dst, src, (size_t)size);
        return TRD_OK;
    }
    struct host_task t = {.kind = TASK_COPY, .dst = dst, .src = src, .size = size};
    return host_stream_push(stream, &t);
}

static trd_status_t host_mem_set(void *device, void *dst, uint8_t value, uint64_t size, void *stream)
{
    (void)device;
    if (!stream) {
        memset(dst, value, (size_t)size);
        return TRD_OK;
    }
    struct host_task t = {.kind = TASK_SET, .dst = dst, .value = value, .size = size};
    return host_stream_push(stream, &t);
}

static trd_status_t host_stream_wrap(void *device, void *native, void **out)
{
    (void)device;
    (void)native;
    (void)out;
    return trd_driver_error(TRD_ERR_UNSUPPORTED, "host streams are trident's own: there is no foreign one to wrap");
}

static trd_status_t host_event_create(void *device, void **out)
{
    struct host_event *e = calloc(1, sizeof *e);
    if (!e)
        return trd_driver_error(TRD_ERR_NO_MEMORY, "out of memory");
    e->dev = device;
    atomic_init(&e->refs, 1);
    pthread_mutex_init(&e->lock, NULL);
    pthread_cond_init(&e->changed, NULL);
    *out = e;
    return TRD_OK;
}

/* Records still queued keep the event alive (host_event_release). */
static void host_event_destroy(void *event)
{
    if (event)
        host_event_release(event);
}

static trd_status_t host_event_record(void *event, void *stream)
{
    struct host_event *e = event;
    pthread_mutex_lock(&e->lock);
    e->recorded++;
    pthread_mutex_unlock(&e->lock);
    if (!stream) {
        /* NULL-stream work has run by now (launches, copies and sets without a stream are synchronous):
         * the event completes here, which is how XLA's CPU handlers time launches */
        host_event_complete(e, TRD_OK, NULL);
        return TRD_OK;
    }
    struct host_task t = {.kind = TASK_EVENT, .event = e};
    return host_stream_push(stream, &t);
}

static trd_status_t host_event_sync(void *event)
{
    struct host_event *e = event;
    pthread_mutex_lock(&e->lock);
    while (e->completed < e->recorded)
        pthread_cond_wait(&e->changed, &e->lock);
    trd_status_t st = e->failed;
    if (st != TRD_OK)
        trd_driver_error(st, "%s", e->failure);
    pthread_mutex_unlock(&e->lock);
    return st;
}

static trd_status_t host_event_elapsed(void *start, void *end, double *ms)
{
    struct host_event *a = start, *b = end;
    double ta, tb;
    uint64_t ra, ca, rb, cb;
    pthread_mutex_lock(&a->lock);
    ta = a->stamp_ms;
    ra = a->recorded;
    ca = a->completed;
    pthread_mutex_unlock(&a->lock);
    pthread_mutex_lock(&b->lock);
    tb = b->stamp_ms;
    rb = b->recorded;
    cb = b->completed;
    pthread_mutex_unlock(&b->lock);
    if (ra == 0 || rb == 0)
        return trd_driver_error(TRD_ERR_STATE, "an event was never recorded");
    if (ca < ra || cb < rb)
        return trd_driver_error(TRD_ERR_STATE, "an event has not completed yet: synchronize it first");
    *ms = tb - ta;
    return TRD_OK;
}

static const trd_driver_ops_t ops = {
    .abi_version = TRD_DRIVER_ABI_VERSION,
    .struct_size = sizeof(trd_driver_ops_t),
    .name = "host",
    .backend = "host",
    .priority = 0,
    .init = host_init,
    .fini = host_fini,
    .device_count = host_device_count,
    .device_props = host_device_props,
    .device_open = host_device_open,
    .device_close = host_device_close,
    .module_load = host_module_load,
    .module_unload = host_module_unload,
    .launch = host_launch,
    .mem_alloc = host_mem_alloc,
    .mem_free = host_mem_free,
    .mem_copy = host_mem_copy,
    .mem_set = host_mem_set,
    .stream_create = host_stream_create,
    .stream_wrap = host_stream_wrap,
    .stream_destroy = host_stream_destroy,
    .stream_sync = host_stream_sync,
    .stream_native = host_stream_native,
    .event_create = host_event_create,
    .event_destroy = host_event_destroy,
    .event_record = host_event_record,
    .event_sync = host_event_sync,
    .event_elapsed = host_event_elapsed,
};

const trd_driver_ops_t *trd_host_driver_ops(void)
{
    return &ops;
}
