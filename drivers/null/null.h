/* SPDX-License-Identifier: Apache-2.0 */
/* null.h: the skeleton driver's parts. drivers/null is the driver to copy
 * for a new vendor (README.md, "Adding a driver"): every file is the one a
 * real driver has, with the vendor's calls left out. It serves one fake
 * device whose memory is host memory and fails every launch, naming why. */
#ifndef TRD_DRIVER_NULL_H
#define TRD_DRIVER_NULL_H

#include <stdint.h>

#include <trident/driver.h>

#include "drivers/common/services.h"

/* A real driver keeps its vendor library (trd_vlib_t) and api table here. */
struct null_driver {
    uint32_t ndevices;
};

struct null_device {
    struct null_driver *drv;
    uint32_t ordinal;
};

struct null_module {
    struct null_device *dev;
    char label[128]; /* "kernel 'add_kernel'", for messages */
};

/* device.c */
trd_status_t null_init(const trd_driver_init_args_t *args, void **driver);
void null_fini(void *driver);
trd_status_t null_device_count(void *driver, uint32_t *count);
trd_status_t null_device_props(void *driver, uint32_t ordinal, trd_device_props_t *props);
trd_status_t null_device_open(void *driver, uint32_t ordinal, void **device);
void null_device_close(void *device);
/* memory.c */
trd_status_t null_mem_alloc(void *device, uint64_t size, void **ptr);
void null_mem_free(void *device, void *ptr);
trd_status_t null_mem_copy(void *device, void *dst, const void *src, uint64_t size, int32_t kind, void *stream);
trd_status_t null_mem_set(void *device, void *dst, uint8_t value, uint64_t size, void *stream);
/* stream.c */
trd_status_t null_stream_create(void *device, void **stream);
trd_status_t null_stream_wrap(void *device, void *native, void **stream);
void null_stream_destroy(void *stream);
trd_status_t null_stream_sync(void *stream);
void *null_stream_native(void *stream);
/* event.c */
trd_status_t null_event_create(void *device, void **event);
void null_event_destroy(void *event);
trd_status_t null_event_record(void *event, void *stream);
trd_status_t null_event_sync(void *event);
trd_status_t null_event_elapsed(void *start, void *end, double *ms);
/* module.c */
trd_status_t null_module_load(void *device, const trd_driver_module_desc_t *desc, void **module,
                              trd_load_info_t *info);
void null_module_unload(void *module);
/* launch.c */
trd_status_t null_launch(void *module, void *stream, void *native, const trd_driver_launch_t *launch);
/* status.c: the vendor's error codes as trd_status_t, with the message. */
trd_status_t null_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The null "vendor's" error codes (a real driver has its library's). */
#define NULL_ERROR_NO_KERNELS 1
#define NULL_ERROR_OUT_OF_MEMORY 2

#endif /* TRD_DRIVER_NULL_H */
