/* SPDX-License-Identifier: Apache-2.0 */
/* host.h: the host CPU driver's parts: its structs and the functions each
 * file gives the others (drivers/null/README.md's layout). Kernels are native
 * shared objects loaded from memory; each program of the grid is one call
 * (trident/host_kernel.h), spread over a device's pool of threads. Like every
 * driver module it reaches the core only through the services table
 * (drivers/common/services.h), built into libtrident or not. */
#ifndef TRD_DRIVER_HOST_H
#define TRD_DRIVER_HOST_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <trident/driver.h>
#include <trident/host_kernel.h>

#include "drivers/common/services.h"
#include "drivers/host/fault.h"
#include "drivers/host/memory.h"

/* One launch being run by a pool. Lives on the submitter's stack. */
struct host_job {
    trd_host_kernel_fn *fn;
    void *const *args;
    uint32_t grid[3];
    uint64_t total;
    uint64_t grain;
    char *gscratch;   /* global scratch base, gstride bytes a program */
    uint64_t gstride;
    char *pscratch;
    uint64_t pstride;
    atomic_uint_fast64_t next;
    atomic_uint_fast64_t done;
    struct host_fault fault;  /* the first program that faulted; the others are skipped */
    int catch_faults;         /* [driver.host] catch_faults */
};

/* A device's worker threads; the submitting thread works too. */
struct host_pool {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_cond_t finished;
    struct host_job *job;
    uint64_t generation;
    uint32_t busy;          /* workers inside the current job */
    int stop;
    uint32_t nthreads;
    pthread_t *threads;
    pthread_mutex_t submit; /* one job at a time per device */
    char *scratch;          /* grown under `submit` */
    uint64_t scratch_cap;
};

int host_pool_start(struct host_pool *p, uint32_t nthreads);
void host_pool_stop(struct host_pool *p);
/* Runs every program of the job; returns when all have returned. Takes
 * `submit` itself unless the caller holds it (held = 1). */
void host_pool_run(struct host_pool *p, struct host_job *job);

struct host_driver {
    uint32_t ndevices;
    uint32_t threads;       /* per device */
    int catch_faults;       /* a kernel's fault fails its launch (fault.h); else it kills the process */
    struct host_memory mem; /* the buffers of every device (memory.h) */
    char cpu_name[128];
    char vendor[64];
    char arch[32];
    uint64_t memory;
};

struct host_stream;

struct host_device {
    struct host_driver *drv;
    uint32_t ordinal;
    struct host_pool pool;
    /* The device's streams, so that freeing memory can wait for the work
     * queued on any of them (trd_buffer_free's promise). */
    pthread_mutex_t streams_lock;
    struct host_stream *streams;
};

/* A loaded kernel. It lives while the core holds it and while launches of it
 * are queued: each queued launch holds a reference, so that unloading with
 * launches still queued leaves the code mapped until the last has run. */
struct host_module {
    struct host_device *dev;
    void *dl;
    int fd;                 /* the memory file dl was loaded from (its name is /proc/self/fd/<fd>), or -1 */
    trd_host_kernel_fn *fn;
    atomic_uint refs;
    uint32_t num_params;
    int sequential;         /* the debug option */
    int catch_faults;       /* the driver's, once the handlers are installed */
    uint64_t grain;
    uint64_t gstride, pstride; /* scratch a program: its size rounded up to its alignment */
    char label[128];        /* "kernel 'add_kernel'", for messages */
    struct host_pointer_param *pointers;  /* to name the buffer a fault hit */
    uint32_t num_pointers;
};

/* Drops one reference; the last unloads the code. */
void host_module_release(struct host_module *m);

#define HOST_RING 64
#define HOST_TASK_BYTES 4096
#define HOST_TASK_PARAMS 512

enum host_task_kind { TASK_LAUNCH = 1, TASK_COPY, TASK_SET, TASK_EVENT };

struct host_event;

struct host_task {
    int kind;
    struct host_module *mod;
    uint32_t grid[3];
    uint32_t nparams;
    void *params[HOST_TASK_PARAMS + TRD_DRIVER_EXTRA_PARAMS];
    uint8_t storage[HOST_TASK_BYTES];
    void *dst;
    const void *src;
    uint64_t size;
    uint8_t value;
    struct host_event *event;
    void *gscratch, *pscratch;
    uint64_t gbytes, pbytes;  /* the core's scratch figures (trd_driver_launch_t) */
};

/* Messages of failed queued work, kept until reported. */
#define HOST_FAILURE_BYTES 512

struct host_stream {
    struct host_device *dev;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    struct host_task *ring;   /* HOST_RING slots, allocated at creation */
    uint64_t head, tail;      /* tail: next to run; head: next free */
    int stop;
    /* The first failure of queued work since the last report: the work queued
     * after it is skipped until host_stream_sync reports it (trident.h). */
    trd_status_t failed;
    char failure[HOST_FAILURE_BYTES];
    pthread_t thread;
    struct host_stream *next; /* in dev->streams */
};

/* An event lives while the caller holds it and while records of it are
 * queued (each holds a reference), so it may be destroyed at any time. */
struct host_event {
    struct host_device *dev;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    atomic_uint refs;
    uint64_t recorded;        /* times recorded */
    uint64_t completed;       /* times the stream passed it */
    double stamp_ms;
    trd_status_t failed;      /* the stream's failure when it passed the last record */
    char failure[HOST_FAILURE_BYTES];
};

/* Where a failure's message is written when it cannot go to the thread's
 * error at once: queued work reports it later, from another thread. */
#define HOST_MESSAGE_BYTES 1024

/* entry.c: the ops table; libtrident's loader starts the built-in driver
 * through this (a weak reference: NULL where the driver is a module). */
const trd_driver_ops_t *trd_host_driver_ops(void);
/* device.c */
trd_status_t host_init(const trd_driver_init_args_t *args, void **driver);
void host_fini(void *driver);
trd_status_t host_device_count(void *driver, uint32_t *count);
trd_status_t host_device_props(void *driver, uint32_t ordinal, trd_device_props_t *props);
trd_status_t host_device_open(void *driver, uint32_t ordinal, void **device);
void host_device_close(void *device);
/* memory.c (beside the guarded buffers of memory.h) */
trd_status_t host_mem_alloc(void *device, uint64_t size, void **ptr);
void host_mem_free(void *device, void *ptr);
trd_status_t host_mem_copy(void *device, void *dst, const void *src, uint64_t size, int32_t kind, void *stream);
trd_status_t host_mem_set(void *device, void *dst, uint8_t value, uint64_t size, void *stream);
/* stream.c */
trd_status_t host_stream_create(void *device, void **stream);
trd_status_t host_stream_wrap(void *device, void *native, void **stream);
void host_stream_destroy(void *stream);
/* Waits for the work queued so far, then reports (and clears) the stream's
 * failure, if any. */
trd_status_t host_stream_sync(void *stream);
void *host_stream_native(void *stream);
/* Waits for the work queued on every stream of the device so far. */
void host_device_drain(struct host_device *dev);
/* Enqueues a filled task (copied into the ring). */
trd_status_t host_stream_push(struct host_stream *s, const struct host_task *t);
/* Enqueues launch l; scratch: the bytes of each scratch to allocate (host_launch). */
trd_status_t host_stream_launch(struct host_stream *s, struct host_module *m, const trd_driver_launch_t *l,
                                const uint64_t scratch[2]);
/* event.c */
trd_status_t host_event_create(void *device, void **event);
void host_event_destroy(void *event);
trd_status_t host_event_record(void *event, void *stream);
trd_status_t host_event_sync(void *event);
trd_status_t host_event_elapsed(void *start, void *end, double *ms);
/* Stamps a recorded event with the time and marks one recording completed,
 * carrying the stream's failure (TRD_OK and NULL when none). */
void host_event_complete(struct host_event *e, trd_status_t failed, const char *failure);
/* Drops one reference; the last frees the event. */
void host_event_release(struct host_event *e);
/* module.c */
trd_status_t host_module_load(void *device, const trd_driver_module_desc_t *desc, void **module,
                              trd_load_info_t *info);
void host_module_unload(void *module);
/* Drops one reference; the last unloads the code. */
void host_module_release(struct host_module *m);
/* launch.c */
trd_status_t host_launch(void *module, void *stream, void *native, const trd_driver_launch_t *launch);
/* Runs one launch now on the calling thread + the pool, with the core's
 * scratch figures (trd_driver_launch_t's *_scratch_bytes). On failure the
 * message, which does not name the kernel (callers do), is written to why
 * (HOST_MESSAGE_BYTES), not to the thread's error: a stream reports it later. */
trd_status_t host_execute(struct host_module *m, const uint32_t grid[3], void *const *args, void *gscratch,
                          void *pscratch, uint64_t gbytes, uint64_t pbytes, char *why);
/* host_execute, its failure reported at once (to the thread's error). */
trd_status_t host_launch_now(struct host_module *m, const trd_driver_launch_t *l, const uint64_t scratch[2]);
/* status.c: failures as trd_status_t with their message. host_fail writes
 * the message to out (cut where it does not fit: a launch's can be longer
 * than a stream keeps) and returns status. */
trd_status_t host_fail(char *out, size_t cap, trd_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A kernel's fault: which program, which signal and what it means; `where` (may be "") says which buffer the
 * address belongs to (host_memory_describe). Written to why; returns TRD_ERR_DEVICE. */
trd_status_t host_fault_error(const struct host_fault *f, const uint32_t grid[3], const char *where, char *why);
/* elf_check.c: 1 when the image is a shared object for this host that lies
 * within its bytes; else 0 with the reason in err. */
int host_image_check(const void *image, uint64_t size, char *err, size_t cap);

#endif
