/* SPDX-License-Identifier: Apache-2.0 */
/* test_driver.c: a driver module for the loader and runtime tests, built
 * several times with different TD_* macros (tests/Makefile.include):
 *
 *   TD_NAME      module name (URI scheme)           TD_BACKEND  backend ("cuda", ...)
 *   TD_ARCH      device arch ("sm90")               TD_DEVICES  devices it exposes
 *   TD_MODE      normal, or a fault: TD_NO_ENTRY, TD_BAD_ABI, TD_SMALL_TABLE,
 *                TD_NULL_FN, TD_INIT_FAIL, TD_INIT_UNSUPPORTED, TD_ZERO
 *   TD_PCI       PCI bus id of device 0 (to simulate one GPU seen by two drivers)
 *   TD_PRIORITY  the ops table's priority
 *   TD_CAPTURE   defined: the optional stream_capturing op, answering td_capturing
 *
 * Devices are backed by host memory. module_load and launch record what the
 * core passed (the options, the grid, the packed parameter bytes) in state a
 * test reads through the exported td_* symbols. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <trident/driver.h>

#include "tests/drivers/test_driver.h"

#define TD_NORMAL 0
#define TD_NO_ENTRY 1
#define TD_BAD_ABI 2
#define TD_SMALL_TABLE 3
#define TD_NULL_FN 4
#define TD_INIT_FAIL 5
#define TD_INIT_UNSUPPORTED 6
#define TD_ZERO 7

#ifndef TD_ABI
#define TD_ABI 1
#endif
#ifndef TD_MODE
#define TD_MODE TD_NORMAL
#endif
#ifndef TD_NAME
#define TD_NAME "tda"
#endif
#ifndef TD_BACKEND
#define TD_BACKEND "cuda"
#endif
#ifndef TD_ARCH
#define TD_ARCH "sm90"
#endif
#ifndef TD_DEVICES
#define TD_DEVICES 1
#endif
#ifndef TD_PRIORITY
#define TD_PRIORITY 0
#endif

#define EXPORT __attribute__((visibility("default")))

/* ---- what tests read ---- */
EXPORT struct td_record td_record;

struct td_device {
    unsigned ordinal;
};

struct td_module {
    unsigned ordinal;
};

static trd_status_t td_init(const trd_driver_init_args_t *args, void **out)
{
#if TD_MODE == TD_INIT_FAIL
    (void)args;
    (void)out;
    return trd_driver_error(TRD_ERR_DEVICE, "test driver " TD_NAME ": simulated init failure (error 999)");
#elif TD_MODE == TD_INIT_UNSUPPORTED
    (void)args;
    (void)out;
    return trd_driver_error(TRD_ERR_UNSUPPORTED, "test driver " TD_NAME ": libfake.so.1 not found (tried /x, /y)");
#else
#if TD_MODE == TD_ZERO
    snprintf(args->note, args->note_cap, "0 devices: fakeErrorNoDevice (100)");
#else
    (void)args;
#endif
    *out = &td_record;
    return TRD_OK;
#endif
}

static void td_fini(void *d)
{
    (void)d;
}

static trd_status_t td_device_count(void *d, uint32_t *n)
{
    (void)d;
#if TD_MODE == TD_ZERO
    *n = 0;
#else
    *n = TD_DEVICES;
#endif
    return TRD_OK;
}

static char names[8][64];
static char pcis[8][32];

static trd_status_t td_device_props(void *d, uint32_t ordinal, trd_device_props_t *p)
{
    (void)d;
    if (ordinal >= 8)
        return trd_driver_error(TRD_ERR_NOT_FOUND, "no device %u", ordinal);
    snprintf(names[ordinal], sizeof names[ordinal], "Test GPU %s #%u", TD_ARCH, ordinal);
    p->kind = TRD_DEVICE_GPU;
    p->name = names[ordinal];
    p->vendor = "trident tests";
    p->arch = TD_ARCH;
#ifdef TD_PCI
    snprintf(pcis[ordinal], sizeof pcis[ordinal], "%s", ordinal == 0 ? TD_PCI : "");
#else
    snprintf(pcis[ordinal], sizeof pcis[ordinal], "0000:%02x:00.0", 0x80 + ordinal);
#endif
    p->pci_bus_id = pcis[ordinal][0] ? pcis[ordinal] : NULL;
    p->warp_size = 32;
    p->compute_units = 100 + ordinal;
    p->max_threads_per_block = 1024;
    p->memory_bytes = (uint64_t)(16 + ordinal) << 30;
    p->max_shared_per_block = 48 << 10;
    p->max_shared_per_block_optin = 227 << 10;
    return TRD_OK;
}

static trd_status_t td_device_open(void *d, uint32_t ordinal, void **out)
{
    (void)d;
    struct td_device *dev = calloc(1, sizeof *dev);
    if (!dev)
        return trd_driver_error(TRD_ERR_NO_MEMORY, "oom");
    dev->ordinal = ordinal;
    *out = dev;
    return TRD_OK;
}

static void td_device_close(void *dev)
{
    free(dev);
}

static trd_status_t td_module_load(void *device, const trd_driver_module_desc_t *d, void **out, trd_load_info_t *info)
{
    struct td_device *dev = device;
    struct td_module *m = calloc(1, sizeof *m);
    if (!m)
        return trd_driver_error(TRD_ERR_NO_MEMORY, "oom");
    m->ordinal = dev->ordinal;
    td_record.loads++;
    td_record.ordinal = dev->ordinal;
    snprintf(td_record.arch, sizeof td_record.arch, "%s", TD_ARCH);
    size_t len = 0;
    if (trd_options_serialize(d->options, td_record.options, sizeof td_record.options, &len) != TRD_OK)
        td_record.options[0] = '\0';
    td_record.num_warps = d->num_warps;
    td_record.num_ctas = d->num_ctas;
    td_record.shared = d->shared;
    td_record.warp_size = d->warp_size;
    td_record.flags = d->flags;
    td_record.num_params = d->num_params;
    info->registers = 32;
    info->spills = 0;
    info->max_threads_per_block = 1024;
    *out = m;
    return TRD_OK;
}

static void td_module_unload(void *m)
{
    td_record.unloads++;
    free(m);
}

__attribute__((unused)) static trd_status_t td_launch(void *module, void *stream, void *native,
                                                        const trd_driver_launch_t *l)
{
    (void)module;
    (void)stream;
    td_record.launches++;
    memcpy(td_record.grid, l->grid, sizeof td_record.grid);
    td_record.nparams = l->num_params;
    td_record.had_native = stream == NULL;
    td_record.native = native;
    for (uint32_t i = 0; i < l->num_params && i < 64; i++) {
        td_record.sizes[i] = l->param_sizes[i];
        memset(td_record.bytes[i], 0, sizeof td_record.bytes[i]);
        memcpy(td_record.bytes[i], l->params[i], l->param_sizes[i] < 16 ? l->param_sizes[i] : 16);
    }
    return TRD_OK;
}

static trd_status_t td_mem_alloc(void *dev, uint64_t size, void **p)
{
    (void)dev;
    *p = malloc(size);
    return *p ? TRD_OK : trd_driver_error(TRD_ERR_NO_MEMORY, "oom");
}

static void td_mem_free(void *dev, void *p)
{
    (void)dev;
    free(p);
}

static trd_status_t td_mem_copy(void *dev, void *dst, const void *src, uint64_t size, int32_t kind, void *s)
{
    (void)dev;
    (void)kind;
    (void)s;
    memmove(dst, src, size);
    return TRD_OK;
}

static trd_status_t td_mem_set(void *dev, void *dst, uint8_t v, uint64_t size, void *s)
{
    (void)dev;
    (void)s;
    memset(dst, v, size);
    return TRD_OK;
}

static int stream_token;

static trd_status_t td_stream_create(void *dev, void **s)
{
    (void)dev;
    *s = &stream_token;
    return TRD_OK;
}

static trd_status_t td_stream_wrap(void *dev, void *native, void **s)
{
    (void)dev;
    *s = native;
    return TRD_OK;
}

static void td_stream_destroy(void *s)
{
    (void)s;
}

static trd_status_t td_stream_sync(void *s)
{
    (void)s;
    return TRD_OK;
}

static void *td_stream_native(void *s)
{
    return s;
}

static trd_status_t td_event_create(void *dev, void **e)
{
    (void)dev;
    *e = calloc(1, sizeof(double));
    return *e ? TRD_OK : trd_driver_error(TRD_ERR_NO_MEMORY, "oom");
}

static void td_event_destroy(void *e)
{
    free(e);
}

static trd_status_t td_event_record(void *e, void *s)
{
    (void)s;
    *(double *)e += 1.0;
    return TRD_OK;
}

static trd_status_t td_event_sync(void *e)
{
    (void)e;
    return TRD_OK;
}

static trd_status_t td_event_elapsed(void *a, void *b, double *ms)
{
    *ms = *(double *)b - *(double *)a;
    return TRD_OK;
}

#ifdef TD_CAPTURE
/* Whether every stream is being captured into a graph (a test sets it). */
EXPORT int td_capturing;

static trd_status_t td_stream_capturing(void *s, int32_t *capturing)
{
    (void)s;
    *capturing = td_capturing;
    return TRD_OK;
}
#endif

static const trd_driver_ops_t ops = {
#if TD_MODE == TD_BAD_ABI
    .abi_version = 99,
#else
    .abi_version = TD_ABI, /* 1: a version-1 module, linking libtrident for trd_driver_error (a newer core runs it) */
#endif
#if TD_MODE == TD_SMALL_TABLE
    .struct_size = 24,
#else
    .struct_size = sizeof(trd_driver_ops_t),
#endif
    .name = TD_NAME,
    .backend = TD_BACKEND,
    .priority = TD_PRIORITY,
    .init = td_init,
    .fini = td_fini,
    .device_count = td_device_count,
    .device_props = td_device_props,
    .device_open = td_device_open,
    .device_close = td_device_close,
    .module_load = td_module_load,
    .module_unload = td_module_unload,
#if TD_MODE == TD_NULL_FN
    .launch = NULL,
#else
    .launch = td_launch,
#endif
    .mem_alloc = td_mem_alloc,
    .mem_free = td_mem_free,
    .mem_copy = td_mem_copy,
    .mem_set = td_mem_set,
    .stream_create = td_stream_create,
    .stream_wrap = td_stream_wrap,
    .stream_destroy = td_stream_destroy,
    .stream_sync = td_stream_sync,
    .stream_native = td_stream_native,
    .event_create = td_event_create,
    .event_destroy = td_event_destroy,
    .event_record = td_event_record,
    .event_sync = td_event_sync,
    .event_elapsed = td_event_elapsed,
#ifdef TD_CAPTURE
    .stream_capturing = td_stream_capturing,
#endif
};

#if TD_MODE != TD_NO_ENTRY
EXPORT const trd_driver_ops_t *trd_driver_entry(void);
EXPORT const trd_driver_ops_t *trd_driver_entry(void)
{
    return &ops;
}
#else
/* no entry symbol: the loader must say so */
EXPORT const void *not_the_entry(void);
EXPORT const void *not_the_entry(void)
{
    return &ops;
}
#endif
