/* host.c: the host CPU driver. Kernels are native shared objects loaded from
 * memory; each program of the grid is one call (host_kernel.h). */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "drivers/host/host.h"

#ifndef HAVE_MEMFD_CREATE
#define HAVE_MEMFD_CREATE 0
#endif

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
    *out = dev;
    return TRD_OK;
}

static void host_device_close(void *device)
{
    struct host_device *dev = device;
    host_pool_stop(&dev->pool);
    free(dev);
}

/* dlopen()s an in-memory shared object through an anonymous file. */
static void *open_image(const void *image, uint64_t size, const char *label, char *err, size_t errcap)
{
    int fd = -1;
    char path[64];
#if HAVE_MEMFD_CREATE
    fd = memfd_create("trident-host-kernel", MFD_CLOEXEC);
#endif
    char tmpl[] = "/tmp/trident-kernel-XXXXXX";
    int temp = 0;
    if (fd < 0) {
        fd = mkstemp(tmpl);
        temp = 1;
    }
    if (fd < 0) {
        snprintf(err, errcap, "cannot create a file for %s: %s", label, strerror(errno));
        return NULL;
    }
    const char *p = image;
    uint64_t left = size;
    while (left > 0) {
        ssize_t w = write(fd, p, (size_t)left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            snprintf(err, errcap, "cannot write %s's image: %s", label, strerror(errno));
            close(fd);
            if (temp)
                unlink(tmpl);
            return NULL;
        }
        p += w;
        left -= (uint64_t)w;
    }
    if (temp)
        snprintf(path, sizeof path, "%s", tmpl);
    else
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        const char *e = dlerror();
        snprintf(err, errcap, "the host image of %s does not load: %s", label, e ? e : "dlopen failed");
    }
    close(fd);
    if (temp)
        unlink(tmpl);
    return dl;
}

static trd_status_t host_module_load(void *device, const trd_driver_module_desc_t *d, void **out,
                                     trd_load_info_t *info)
{
    if (d->format != TRD_FORMAT_HOST_SO)
        return trd_driver_error(TRD_ERR_UNSUPPORTED, "the host driver runs shared objects, not format %d", d->format);
    char err[512];
    if (!host_image_check(d->image, d->image_size, err, sizeof err))
        return trd_driver_error(TRD_ERR_FORMAT, "the host image of %s does not load: %s", d->label, err);
    void *dl = open_image(d->image, d->image_size, d->label, err, sizeof err);
    if (!dl)
        return trd_driver_error(TRD_ERR_FORMAT, "%s", err);
    trd_host_kernel_fn *fn;
    *(void **)&fn = dlsym(dl, d->entry);
    if (!fn) {
        dlclose(dl);
        return trd_driver_error(TRD_ERR_NOT_FOUND, "the host image of %s exports no function '%s'", d->label, d->entry);
    }
    struct host_module *m = calloc(1, sizeof *m);
    if (!m) {
        dlclose(dl);
        return trd_driver_error(TRD_ERR_NO_MEMORY, "out of memory");
    }
    m->dev = device;
    m->dl = dl;
    m->fn = fn;
    snprintf(m->label, sizeof m->label, "%s", d->label);
    m->num_params = d->num_params;
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

static void host_module_unload(void *module)
{
    struct host_module *m = module;
    if (!m)
        return;
    dlclose(m->dl);
    free(m);
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
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
    job.total = (uint64_t)grid[0] * grid[1] * grid[2];
    uint32_t workers = pool->nthreads + 1;
    job.grain = m->sequential ? job.total : m->grain ? m->grain : (job.total + 4 * workers - 1) / (4 * workers);
    if (job.grain == 0)
        job.grain = 1;
    atomic_init(&job.next, 0);
    atomic_init(&job.done, 0);
    atomic_init(&job.fault.sig, 0);
    job.catch_faults = m->catch_faults;
    pthread_mutex_lock(&pool->submit);
    /* Scratch: one slice per program, from the device's arena (reused). */
    job.gstride = m->gs_size ? align_up(m->gs_size, m->gs_align) : 0;
    job.pstride = m->ps_size ? align_up(m->ps_size, m->ps_align) : 0;
    uint64_t need_g = gscratch ? 0 : job.gstride * job.total;
    uint64_t need_p = pscratch ? 0 : job.pstride * job.total;
    uint64_t need = align_up(need_g, 64) + need_p;
    if (need > pool->scratch_cap) {
        char *p = NULL;
        if (posix_memalign((void **)&p, 64, (size_t)need) != 0) {
            pthread_mutex_unlock(&pool->submit);
            return trd_driver_error(TRD_ERR_NO_MEMORY, "cannot allocate %llu bytes of scratch",
                                    (unsigned long long)need);
        }
        free(pool->scratch);
        pool->scratch = p;
        pool->scratch_cap = need;
    }
    job.gscratch = gscratch ? gscratch : (job.gstride ? pool->scratch : NULL);
    job.pscratch = pscratch ? pscratch : (job.pstride ? pool->scratch + align_up(need_g, 64) : NULL);
    host_pool_run(pool, &job);
    pthread_mutex_unlock(&pool->submit);
    if (atomic_load_explicit(&job.fault.sig, memory_order_relaxed))
        return host_fault_error(&job.fault, grid);
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
    (void)device;
    void *p = NULL;
    if (posix_memalign(&p, 256, (size_t)size) != 0)
        return trd_driver_error(TRD_ERR_NO_MEMORY, "cannot allocate %llu bytes of host memory",
                                (unsigned long long)size);
    *ptr = p;
    return TRD_OK;
}

static void host_mem_free(void *device, void *ptr)
{
    (void)device;
    free(ptr);
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
    pthread_mutex_init(&e->lock, NULL);
    pthread_cond_init(&e->changed, NULL);
    *out = e;
    return TRD_OK;
}

static void host_event_destroy(void *event)
{
    struct host_event *e = event;
    if (!e)
        return;
    pthread_cond_destroy(&e->changed);
    pthread_mutex_destroy(&e->lock);
    free(e);
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
        host_event_complete(e);
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
    pthread_mutex_unlock(&e->lock);
    return TRD_OK;
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
