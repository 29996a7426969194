/* SPDX-License-Identifier: Apache-2.0 */
/* driver_double.c: the driver-ABI-2 test double (driver_double.h says how a
 * test sets its facts and reads its record). Its devices are backed by host
 * memory; it reaches the core only through the services table, as every
 * driver does, and logs each breach of trident/driver.h's contract that it
 * can see as a violation. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <trident/driver.h>

#include "drivers/common/services.h"
#include "tests/drivers/driver_double.h"

static struct tdd_state st;

static void defaults(void)
{
    char live[sizeof st - offsetof(struct tdd_state, live_drivers)]; /* the counts, last in the struct, survive: */
    memcpy(live, &st.live_drivers, sizeof live);                    /* a leak stays visible */
    memset((char *)&st + sizeof st.common, 0, sizeof st - sizeof st.common);
    memcpy(&st.live_drivers, live, sizeof live);
    snprintf(st.name, sizeof st.name, "tdd");
    snprintf(st.backend, sizeof st.backend, "cuda");
    snprintf(st.arch, sizeof st.arch, "sm90");
    st.devices = 1;
    for (unsigned i = 0; i < TDD_MAX_DEVICES; i++)
        snprintf(st.pci[i], sizeof st.pci[i], "0000:%02x:00.0", 0x80 + i);
    st.abi_version = TRD_DRV_ABI_VERSION;
    st.table_size = sizeof(trd_driver_ops_t);
}

TRD_DOUBLE_DEFINE(st, "driver_double", defaults)

/* Counts the call; returns the error a fault injects for it (a trd_status_t), with a message naming it. */
#define ENTER(call)                                                                                              \
    do {                                                                                                         \
        long injected_ = trd_double_enter(&st.common, call);                                                     \
        if (injected_)                                                                                           \
            return trd_drv_error((trd_status_t)injected_, "%s: %s: injected status %ld", st.name, call,          \
                                 injected_);                                                                     \
    } while (0)

#define violation(...) trd_double_violation(&st.common, __VA_ARGS__)

/* Adds d to a live count; a count below zero is an object released twice or never given. */
static void live(int32_t *count, int d, const char *what)
{
    pthread_mutex_lock(&st.common.lock);
    *count += d;
    if (*count < 0)
        trd_double_violation_locked(&st.common, "%s released more often than created", what);
    pthread_mutex_unlock(&st.common.lock);
}

struct tdd_device {
    unsigned ordinal;
};

struct tdd_stream {
    void *native; /* the caller's, or the stream itself */
};

/* ---------------------------------------------------------------- devices */

static int tdd_driver_token;

static trd_status_t tdd_init(const trd_driver_init_args_t *args, void **out)
{
    trd_status_t s = trd_drv_bind(args);
    if (s != TRD_OK)
        return s;
    if (args->abi_version != st.abi_version)
        violation("init: run at driver ABI %u, the module's is %u", args->abi_version, st.abi_version);
    ENTER("init");
    if (st.note[0])
        snprintf(args->note, args->note_cap, "%s", st.note);
    live(&st.live_drivers, 1, "driver");
    *out = &tdd_driver_token;
    return TRD_OK;
}

static void tdd_fini(void *d)
{
    if (d != &tdd_driver_token)
        violation("fini: %p is not the driver init gave", d);
    pthread_mutex_lock(&st.common.lock);
    if (st.live_devices || st.live_modules || st.live_allocs || st.live_streams || st.live_events)
        trd_double_violation_locked(&st.common,
                                    "fini with objects alive: %d devices, %d modules, %d allocations, %d streams, "
                                    "%d events",
                                    st.live_devices, st.live_modules, st.live_allocs, st.live_streams,
                                    st.live_events);
    pthread_mutex_unlock(&st.common.lock);
    live(&st.live_drivers, -1, "driver");
}

static trd_status_t tdd_device_count(void *d, uint32_t *n)
{
    (void)d;
    ENTER("device_count");
    *n = st.devices;
    return TRD_OK;
}

/* Names live as long as the module: device_props' strings must outlast fini. */
static char names[TDD_MAX_DEVICES][64];

static trd_status_t tdd_device_props(void *d, uint32_t ordinal, trd_device_props_t *p)
{
    (void)d;
    ENTER("device_props");
    if (ordinal >= st.devices || ordinal >= TDD_MAX_DEVICES) {
        violation("device_props(%u) of a driver with %u devices", ordinal, st.devices);
        return trd_drv_error(TRD_ERR_NOT_FOUND, "%s: no device %u", st.name, ordinal);
    }
    snprintf(names[ordinal], sizeof names[ordinal], "Test GPU %s #%u", st.arch, ordinal);
    p->kind = TRD_DEVICE_GPU;
    p->name = names[ordinal];
    p->vendor = "trident tests";
    p->arch = st.arch;
    p->pci_bus_id = st.pci[ordinal][0] ? st.pci[ordinal] : NULL;
    p->warp_size = 32;
    p->compute_units = 100 + ordinal;
    p->max_threads_per_block = 1024;
    p->memory_bytes = (uint64_t)(16 + ordinal) << 30;
    p->max_shared_per_block = 48 << 10;
    p->max_shared_per_block_optin = 227 << 10;
    return TRD_OK;
}

static trd_status_t tdd_device_open(void *d, uint32_t ordinal, void **out)
{
    (void)d;
    ENTER("device_open");
    if (ordinal >= st.devices) {
        violation("device_open(%u) of a driver with %u devices", ordinal, st.devices);
        return trd_drv_error(TRD_ERR_NOT_FOUND, "%s: no device %u", st.name, ordinal);
    }
    struct tdd_device *dev = calloc(1, sizeof *dev);
    if (!dev)
        return trd_drv_error(TRD_ERR_NO_MEMORY, "%s: out of memory", st.name);
    dev->ordinal = ordinal;
    live(&st.live_devices, 1, "device");
    *out = dev;
    return TRD_OK;
}

static void tdd_device_close(void *dev)
{
    live(&st.live_devices, -1, "device");
    free(dev);
}

/* ---------------------------------------------------------------- modules */

static trd_status_t tdd_module_load(void *device, const trd_driver_module_desc_t *d, void **out,
                                    trd_load_info_t *info)
{
    struct tdd_device *dev = device;
    ENTER("module_load");
    if (d->struct_size < offsetof(trd_driver_module_desc_t, metadata) + sizeof d->metadata || !d->options)
        violation("module_load: a desc of %u bytes, options %p (never NULL)", d->struct_size, (void *)d->options);
    int *m = malloc(sizeof *m);
    if (!m)
        return trd_drv_error(TRD_ERR_NO_MEMORY, "%s: out of memory", st.name);
    pthread_mutex_lock(&st.common.lock);
    st.loads++;
    st.ordinal = dev->ordinal;
    for (unsigned i = 0; i < TDD_MAX_OPTIONS; i++) {
        size_t len = 0;
        st.option_values[i][0] = '\0';
        if (st.options[i][0] && d->options &&
            trd_drv_options_get(d->options, st.options[i], st.option_values[i], sizeof st.option_values[i],
                                &len) != TRD_OK)
            st.option_values[i][0] = '\0';
    }
    st.num_warps = d->num_warps;
    st.num_ctas = d->num_ctas;
    st.shared = d->shared;
    st.warp_size = d->warp_size;
    st.flags = d->flags;
    st.num_params = d->num_params;
    pthread_mutex_unlock(&st.common.lock);
    info->registers = 32;
    info->spills = 0;
    info->max_threads_per_block = 1024;
    live(&st.live_modules, 1, "module");
    *m = (int)dev->ordinal;
    *out = m;
    return TRD_OK;
}

static void tdd_module_unload(void *m)
{
    pthread_mutex_lock(&st.common.lock);
    st.unloads++;
    pthread_mutex_unlock(&st.common.lock);
    live(&st.live_modules, -1, "module");
    free(m);
}

/* The launch path (launch, mem_copy, mem_set, stream_capturing): no lock, no allocation (driver_double.h). */
static trd_status_t tdd_launch(void *module, void *stream, void *native, const trd_driver_launch_t *l)
{
    (void)module;
    if (!l->grid[0] && !l->grid[1] && !l->grid[2])
        violation("launch: an empty grid (the core skips those)");
    if (l->num_params && (!l->params || !l->param_sizes))
        violation("launch: %u parameters without their values or sizes", l->num_params);
    st.launches++;
    memcpy(st.grid, l->grid, sizeof st.grid);
    st.nparams = l->num_params;
    st.had_native = stream == NULL;
    st.native = native;
    for (uint32_t i = 0; i < l->num_params && i < TDD_MAX_PARAMS; i++) {
        st.sizes[i] = l->param_sizes[i];
        memset(st.bytes[i], 0, sizeof st.bytes[i]);
        memcpy(st.bytes[i], l->params[i], l->param_sizes[i] < 16 ? l->param_sizes[i] : 16);
    }
    return TRD_OK;
}

/* ----------------------------------------------------------------- memory */

static trd_status_t tdd_mem_alloc(void *dev, uint64_t size, void **p)
{
    (void)dev;
    ENTER("mem_alloc");
    void *q = malloc(size ? size : 1);
    if (!q)
        return trd_drv_error(TRD_ERR_NO_MEMORY, "%s: cannot allocate %llu bytes", st.name, (unsigned long long)size);
    live(&st.live_allocs, 1, "allocation");
    *p = q;
    return TRD_OK;
}

static void tdd_mem_free(void *dev, void *p)
{
    (void)dev;
    live(&st.live_allocs, -1, "allocation");
    free(p);
}

static trd_status_t tdd_mem_copy(void *dev, void *dst, const void *src, uint64_t size, int32_t kind, void *s)
{
    (void)dev;
    (void)kind;
    (void)s;
    memmove(dst, src, size);
    return TRD_OK;
}

static trd_status_t tdd_mem_set(void *dev, void *dst, uint8_t v, uint64_t size, void *s)
{
    (void)dev;
    (void)s;
    memset(dst, v, size);
    return TRD_OK;
}

/* ---------------------------------------------------------- streams, events */

static trd_status_t stream_new(void *native, void **out)
{
    struct tdd_stream *s = calloc(1, sizeof *s);
    if (!s)
        return trd_drv_error(TRD_ERR_NO_MEMORY, "%s: out of memory", st.name);
    s->native = native ? native : s;
    live(&st.live_streams, 1, "stream");
    *out = s;
    return TRD_OK;
}

static trd_status_t tdd_stream_create(void *dev, void **s)
{
    (void)dev;
    ENTER("stream_create");
    return stream_new(NULL, s);
}

static trd_status_t tdd_stream_wrap(void *dev, void *native, void **s)
{
    (void)dev;
    ENTER("stream_wrap");
    return stream_new(native, s);
}

static void tdd_stream_destroy(void *s)
{
    live(&st.live_streams, -1, "stream");
    free(s);
}

static trd_status_t tdd_stream_sync(void *s)
{
    (void)s;
    ENTER("stream_sync");
    return TRD_OK;
}

static void *tdd_stream_native(void *s)
{
    return ((struct tdd_stream *)s)->native;
}

static trd_status_t tdd_stream_capturing(void *s, int32_t *capturing)
{
    (void)s;
    *capturing = st.capturing;
    return TRD_OK;
}

/* An event holds the times it was recorded, so that elapsed time is the records between two events. */
static trd_status_t tdd_event_create(void *dev, void **e)
{
    (void)dev;
    ENTER("event_create");
    double *t = calloc(1, sizeof *t);
    if (!t)
        return trd_drv_error(TRD_ERR_NO_MEMORY, "%s: out of memory", st.name);
    live(&st.live_events, 1, "event");
    *e = t;
    return TRD_OK;
}

static void tdd_event_destroy(void *e)
{
    live(&st.live_events, -1, "event");
    free(e);
}

static trd_status_t tdd_event_record(void *e, void *s)
{
    (void)s;
    ENTER("event_record");
    *(double *)e += 1.0;
    return TRD_OK;
}

static trd_status_t tdd_event_sync(void *e)
{
    (void)e;
    ENTER("event_sync");
    return TRD_OK;
}

static trd_status_t tdd_event_elapsed(void *a, void *b, double *ms)
{
    ENTER("event_elapsed");
    *ms = *(double *)b - *(double *)a;
    return TRD_OK;
}

/* ------------------------------------------------------------------ entry */

static const trd_driver_ops_t base = {
    .init = tdd_init,
    .fini = tdd_fini,
    .device_count = tdd_device_count,
    .device_props = tdd_device_props,
    .device_open = tdd_device_open,
    .device_close = tdd_device_close,
    .module_load = tdd_module_load,
    .module_unload = tdd_module_unload,
    .launch = tdd_launch,
    .mem_alloc = tdd_mem_alloc,
    .mem_free = tdd_mem_free,
    .mem_copy = tdd_mem_copy,
    .mem_set = tdd_mem_set,
    .stream_create = tdd_stream_create,
    .stream_wrap = tdd_stream_wrap,
    .stream_destroy = tdd_stream_destroy,
    .stream_sync = tdd_stream_sync,
    .stream_native = tdd_stream_native,
    .event_create = tdd_event_create,
    .event_destroy = tdd_event_destroy,
    .event_record = tdd_event_record,
    .event_sync = tdd_event_sync,
    .event_elapsed = tdd_event_elapsed,
};

/* The table as the facts say, built when the core asks for it (the facts are set before a runtime loads it). */
static trd_driver_ops_t ops;

TRD_DRIVER_EXPORT const trd_driver_ops_t *trd_driver_entry(uint32_t offered);
TRD_DRIVER_EXPORT const trd_driver_ops_t *trd_driver_entry(uint32_t offered)
{
    pthread_mutex_lock(&st.common.lock);
    if (offered != TRD_DRIVER_ABI_VERSION)
        trd_double_violation_locked(&st.common, "entry: offered driver ABI %u, this header's is %u", offered,
                                    TRD_DRIVER_ABI_VERSION);
    ops = base;
    ops.abi_version = st.abi_version;
    ops.struct_size = st.table_size;
    ops.name = st.name;
    ops.backend = st.backend;
    ops.priority = st.priority;
    if (st.no_launch)
        ops.launch = NULL;
    if (st.capture)
        ops.stream_capturing = tdd_stream_capturing;
    pthread_mutex_unlock(&st.common.lock);
    return &ops;
}
