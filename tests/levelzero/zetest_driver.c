/* SPDX-License-Identifier: Apache-2.0 */
/* zetest_driver.c: a Level Zero driver library for the tests (zetest.h says
 * what it does and how it is configured).
 *
 * The real loader 1.8.12 asks a driver for every ze, zet and zes dispatch
 * table (ze_lib's zeInit/zetInit/zesInit): one missing table and zeInit
 * returns ZE_RESULT_ERROR_UNINITIALIZED. This library therefore exports all
 * 53 zeGet*ProcAddrTable functions; the tables of features it does not
 * implement are left NULL, which the loader reports as unsupported.
 *
 * It checks what the Level Zero specification asks of an application and
 * records each breach as a violation (and fails the call where a real driver
 * would): argument indices and sizes against the SPIR-V kernel's parameters,
 * the shared-local-memory argument's NULL value, group sizes against the
 * device limits, every argument set before a launch, kernels launched only
 * on compute queue groups, imports linked before kernels are created,
 * objects destroyed in a valid order, and no command list or kernel handle
 * used by two threads at once.
 *
 * Commands execute at append time, but count as running until the host has
 * seen them complete: an event signalled by a later command of the list
 * (a barrier waits for every earlier one) found signalled by
 * zeEventHostSynchronize or zeEventQueryStatus. Destroying a kernel, a
 * command list or an event, or freeing memory (without the blocking free
 * policy), that a command not yet seen complete uses is a violation: the
 * specification asks that the device no longer reference it. */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <level_zero/ze_ddi.h>
#include <level_zero/zes_ddi.h>
#include <level_zero/zet_ddi.h>

#include "tests/levelzero/zetest.h"
#include "tests/levelzero/zetest_spirv.h"

#define EXPORT __attribute__((visibility("default")))

/* ------------------------------------------------------------------ state */

/* zt.common.lock guards the driver's objects and all of zt; every entry point takes it first (LOCK), and counts
 * the call and logs violations with it held. */
static struct zetest_state zt;
static uint64_t zt_clock;
static int zt_clock_set;
static _Thread_local int zt_held; /* this thread holds the lock: what inject and violate require */

#define LOCK() (pthread_mutex_lock(&zt.common.lock), zt_held = 1)
#define UNLOCK() (zt_held = 0, pthread_mutex_unlock(&zt.common.lock))

/* The configuration's defaults and an empty record; live counts survive (a leak stays visible). */
static void defaults(void)
{
    char live[sizeof zt - offsetof(struct zetest_state, live_contexts)]; /* the counts, last in the struct */
    memcpy(live, &zt.live_contexts, sizeof live);
    memset((char *)&zt + sizeof zt.common, 0, sizeof zt - sizeof zt.common);
    memcpy(&zt.live_contexts, live, sizeof live);
    zt.devices = 1;
    snprintf(zt.name, sizeof zt.name, "Intel(R) Data Center GPU Max 1100");
    zt.vendor_id = 0x8086;
    zt.sub_groups[0] = 16, zt.sub_groups[1] = 32, zt.nsub_groups = 2;
    zt.timer_hz = 19200000;
    zt.timer_start = 1000;
    zt.timer_bits = 64;
    zt.ticks_per_launch = 19200;
    zt_clock_set = 0;
}

TRD_DOUBLE_DEFINE(zt, "zetest_driver", defaults)

/* An entry point that counts or logs without the lock is a bug of this double: stop at it. */
static void require_lock(const char *what)
{
    if (!zt_held) {
        fprintf(stderr, "zetest_driver: %s without the lock\n", what);
        abort();
    }
}

#define violate(...) (require_lock("a violation logged"), trd_double_violation_locked(&zt.common, __VA_ARGS__))

/* Counts the call; returns the result a fault injects for it, or ZE_RESULT_SUCCESS. */
static ze_result_t inject(const char *call)
{
    require_lock(call);
    return (ze_result_t)trd_double_enter_locked(&zt.common, call);
}

/* ---------------------------------------------------------------- objects */

enum {
    M_DRIVER = 0x7a740001,
    M_DEVICE,
    M_CONTEXT,
    M_LIST,
    M_POOL,
    M_EVENT,
    M_MODULE,
    M_LOG,
    M_KERNEL
};

struct zt_obj {
    uint32_t magic;
};

struct zt_driver {
    uint32_t magic;
};

struct zt_device {
    uint32_t magic;
    uint32_t index;
};

struct zt_context {
    uint32_t magic;
    int32_t children; /* lists, pools, modules and allocations made in it */
};

struct zt_list {
    uint32_t magic;
    struct zt_context *ctx;
    uint32_t device;
    uint32_t ordinal;
    int pending;      /* a command was appended after the last barrier */
    atomic_int users; /* calls inside right now */
    uint64_t id;      /* never reused, unlike the address */
    uint64_t seq;     /* commands appended */
    uint64_t done;    /* the last one the host has seen complete */
    struct zt_list *next_live;
};

/* A use of an object by a command: list `list` (0: none), command `seq`. */
struct zt_use {
    uint64_t list;
    uint64_t seq;
};

struct zt_pool {
    uint32_t magic;
    struct zt_context *ctx;
    uint32_t count;
    uint32_t flags;
    int32_t events;
};

struct zt_event {
    uint32_t magic;
    struct zt_pool *pool;
    int signaled;
    struct zt_use signal; /* the command that signals it */
};

struct zt_module {
    uint32_t magic;
    struct zt_context *ctx;
    uint32_t device;
    int native;
    int linked;
    int32_t kernels;
    struct spv_info spv;
};

struct zt_log {
    uint32_t magic;
    char *text;
};

struct zt_kernel {
    uint32_t magic;
    struct zt_module *mod;
    const struct spv_entry *entry; /* NULL for a native module */
    char name[64];
    uint32_t group[3];
    int group_set;
    uint32_t nargs;
    struct zetest_arg args[ZETEST_MAX_ARGS];
    /* Who changed each argument (and the group size, slot ZETEST_MAX_ARGS)
     * and when, to see two threads' argument setting interleave. */
    pthread_t setter[ZETEST_MAX_ARGS + 1];
    uint64_t seq[ZETEST_MAX_ARGS + 1];
    uint64_t appended; /* zt_seq at the last append */
    atomic_int users;
    struct zt_use last; /* its last launch */
};

struct zt_alloc {
    char *base;
    size_t size;
    int kind; /* ze_memory_type_t */
    struct zt_context *ctx;
    struct zt_alloc *next;
    struct zt_use last; /* the last command that read or wrote it */
};

static struct zt_driver zt_the_driver = {M_DRIVER};
static struct zt_device zt_devices[2] = {{M_DEVICE, 0}, {M_DEVICE, 1}};
static struct zt_alloc *zt_allocs;
static struct zt_list *zt_lists; /* live ones */
static uint64_t zt_list_ids;

/* 1 when the use's command may still run: its list lives and the host has
 * not seen the command complete. */
static int running(struct zt_use u)
{
    for (struct zt_list *l = zt_lists; l && u.list; l = l->next_live)
        if (l->id == u.list)
            return u.seq > l->done;
    return 0;
}

/* The host saw the command of `u` complete. */
static void seen_complete(struct zt_use u)
{
    for (struct zt_list *l = zt_lists; l && u.list; l = l->next_live)
        if (l->id == u.list && u.seq > l->done)
            l->done = u.seq;
}

static int is(const void *h, uint32_t magic)
{
    return h && ((const struct zt_obj *)h)->magic == magic;
}

static ze_result_t bad_handle(const char *call)
{
    violate("%s: invalid or destroyed handle", call);
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
}

#define CHECK_HANDLE(h, m)                                                                             \
    do {                                                                                               \
        if (!is((h), (m))) {                                                                           \
            ze_result_t r_ = bad_handle(__func__);                                                     \
            UNLOCK();                                                                                  \
            return r_;                                                                                 \
        }                                                                                              \
    } while (0)

#define RETURN(r)                                                                                      \
    do {                                                                                               \
        ze_result_t r__ = (r);                                                                         \
        UNLOCK();                                                                                      \
        return r__;                                                                                    \
    } while (0)

static void kill_obj(void *h)
{
    ((struct zt_obj *)h)->magic = 0;
    free(h);
}

static struct zt_alloc *find_alloc(const void *p)
{
    for (struct zt_alloc *a = zt_allocs; a; a = a->next)
        if ((const char *)p >= a->base && (const char *)p < a->base + a->size)
            return a;
    return NULL;
}

/* ---------------------------------------------------------------- devices */

struct zt_devdesc {
    const char *name;
    uint32_t vendor, device_id;
    uint32_t slices, subslices, eus, threads, simd;
    uint32_t sub_groups[8], nsub_groups;
    uint32_t max_group, slm;
    uint32_t max_count[3];
    uint64_t heaps[2];
    uint32_t nheaps;
    uint32_t pci[4];
    uint32_t compute_group; /* which queue group has compute */
};

static uint32_t ndevices(void)
{
    return zt.devices > 2 ? 2 : zt.devices;
}

static void devdesc(uint32_t i, struct zt_devdesc *d)
{
    memset(d, 0, sizeof *d);
    if (i == 0) {
        /* Like a Data Center GPU Max 1100: 56 Xe cores of 8 EUs. */
        d->name = zt.name;
        d->vendor = zt.vendor_id;
        d->device_id = 0x0bda;
        d->slices = 1, d->subslices = 56, d->eus = 8, d->threads = 8, d->simd = 16;
        d->nsub_groups = zt.nsub_groups < ZETEST_MAX_SUB_GROUPS ? zt.nsub_groups : ZETEST_MAX_SUB_GROUPS;
        memcpy(d->sub_groups, zt.sub_groups, d->nsub_groups * sizeof *d->sub_groups);
        d->max_group = 1024, d->slm = 128 * 1024;
        d->max_count[0] = 0xffffffffu, d->max_count[1] = 65535, d->max_count[2] = 65535;
        d->heaps[0] = UINT64_C(48) << 30, d->nheaps = 1;
        d->pci[0] = 0, d->pci[1] = 0x3a, d->pci[2] = 0, d->pci[3] = 0;
        d->compute_group = 1; /* group 0 is copy-only, as on parts with link copy engines */
    } else {
        /* Like an Arc A770: 32 Xe cores of 16 EUs, no SIMD32 here. */
        d->name = "Intel(R) Arc(TM) A770 Graphics";
        d->vendor = 0x8086, d->device_id = 0x56a0;
        d->slices = 8, d->subslices = 4, d->eus = 16, d->threads = 8, d->simd = 8;
        d->sub_groups[0] = 8, d->sub_groups[1] = 16, d->nsub_groups = 2;
        d->max_group = 512, d->slm = 64 * 1024;
        d->max_count[0] = 0xffffffffu, d->max_count[1] = 65535, d->max_count[2] = 65535;
        d->heaps[0] = UINT64_C(15) << 30, d->heaps[1] = UINT64_C(1) << 30, d->nheaps = 2;
        d->pci[0] = 1, d->pci[1] = 0x03, d->pci[2] = 0, d->pci[3] = 0;
        d->compute_group = 0;
    }
}

static uint32_t max_sub_group(const struct zt_devdesc *d)
{
    uint32_t m = 0;
    for (uint32_t i = 0; i < d->nsub_groups; i++)
        if (d->sub_groups[i] > m)
            m = d->sub_groups[i];
    return m;
}

static ze_api_version_t api_version(void)
{
    if (zt.api_1_1)
        return ZE_API_VERSION_1_1;
    return ZE_API_VERSION_1_4;
}

static int offers_pci(void)
{
    return !zt.no_pci;
}

static int offers_free_policy(void)
{
    return !zt.no_free_policy;
}

static uint64_t timer_hz(void)
{
    return zt.timer_hz;
}

static uint64_t clock_now(void)
{
    if (!zt_clock_set) {
        zt_clock = zt.timer_start;
        zt_clock_set = 1;
    }
    uint64_t bits = zt.timer_bits;
    return bits >= 64 ? zt_clock : zt_clock & ((UINT64_C(1) << bits) - 1);
}

/* ----------------------------------------------------------------- global */

static ze_result_t zt_init(ze_init_flags_t flags)
{
    LOCK();
    zt.init_calls++;
    zt.init_flags = flags;
    uint64_t forced = zt.init_result;
    if (forced)
        RETURN((ze_result_t)forced);
    if (flags && !(flags & ZE_INIT_FLAG_GPU_ONLY))
        RETURN(ZE_RESULT_ERROR_UNINITIALIZED); /* a GPU driver asked for other devices only */
    RETURN(inject("zeInit"));
}

/* ----------------------------------------------------------------- driver */

static ze_result_t zt_driver_get(uint32_t *count, ze_driver_handle_t *drivers)
{
    LOCK();
    if (!count)
        RETURN(ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    ze_result_t r = inject("zeDriverGet");
    if (r)
        RETURN(r);
    if (*count == 0 || !drivers) {
        *count = 1;
        RETURN(ZE_RESULT_SUCCESS);
    }
    drivers[0] = (ze_driver_handle_t)&zt_the_driver;
    *count = 1;
    RETURN(ZE_RESULT_SUCCESS);
}

static ze_result_t zt_driver_api_version(ze_driver_handle_t h, ze_api_version_t *v)
{
    LOCK();
    CHECK_HANDLE(h, M_DRIVER);
    *v = api_version();
    RETURN(ZE_RESULT_SUCCESS);
}

static ze_result_t zt_driver_props(ze_driver_handle_t h, ze_driver_properties_t *p)
{
    LOCK();
    CHECK_HANDLE(h, M_DRIVER);
    if (!p || p->stype != ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES)
        RETURN(ZE_RESULT_ERROR_INVALID_ARGUMENT);
    memset(p->uuid.id, 0x5a, sizeof p->uuid.id);
    p->driverVersion = 0x01030000;
    for (ze_base_properties_t *n = p->pNext; n; n = n->pNext) {
        if (n->stype == ZE_STRUCTURE_TYPE_DRIVER_MEMORY_FREE_EXT_PROPERTIES) {
            if (!offers_free_policy())
                violate("zeDriverGetProperties: memory free properties asked without the extension");
            else
                ((ze_driver_memory_free_ext_properties_t *)n)->freePolicies =
                    ZE_DRIVER_MEMORY_FREE_POLICY_EXT_FLAG_BLOCKING_FREE |
                    ZE_DRIVER_MEMORY_FREE_POLICY_EXT_FLAG_DEFER_FREE;
        }
    }
    RETURN(ZE_RESULT_SUCCESS);
}

static ze_result_t zt_driver_ipc(ze_driver_handle_t h, ze_driver_ipc_properties_t *p)
{
    LOCK();
    CHECK_HANDLE(h, M_DRIVER);
    p->flags = 0;
    RETURN(ZE_RESULT_SUCCESS);
}

static ze_result_t zt_driver_extensions(ze_driver_handle_t h, uint32_t *count, ze_driver_extension_properties_t *p)
{
    LOCK();
    CHECK_HANDLE(h, M_DRIVER);
    const char *names[3];
    uint32_t versions[3], n = 0;
    if (offers_pci())
        names[n] = ZE_PCI_PROPERTIES_EXT_NAME, versions[n++] = ZE_PCI_PROPERTIES_EXT_VERSION_1_0;
    if (offers_free_policy())
        names[n] = ZE_MEMORY_FREE_POLICIES_EXT_NAME, versions[n++] = ZE_MEMORY_FREE_POLICIES_EXT_VERSION_1_0;
    names[n] = ZE_LINKAGE_INSPECTION_EXT_NAME, versions[n++] = ZE_LINKAGE_INSPECTION_EXT_VERSION_1_0;
    if (*count == 0 || !p) {
        *count = n;
        RETURN(ZE_RESULT_SUCCESS);
    }
    uint32_t k = *count < n ? *count : n;
    for (uint32_t i = 0; i < k; i++) {
        snprintf(p[i].name, sizeof p[i].name, "%s", names[i]);
        p[i].version = versions[i];
    }
    *count = k;
    RETURN(ZE_RESULT_SUCCESS);
}

static ze_result_t zt_driver_ext_fn(ze_driver_handle_t h, const char *name, void **fn)
{
    (void)h;
    (void)name;
    *fn = NULL;
    return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
}

/* ----------------------------------------------------------------- device */

static ze_result_t zt_device_get(ze_driver_handle_t h, uint32_t *count, ze_device_handle_t *devs)
{
    LOCK();
    CHECK_HANDLE(h, M_DRIVER);
    uint32_t n = ndevices();
    if (*count == 0 || !devs) {
        *count = n;
        RETURN(ZE_RESULT_SUCCESS);
    }
    uint32_t k = *count < n ? *count : n;
    for (uint32_t i = 0; i < k; i++)
        devs[i] = (ze_device_handle_t)&zt_devices[i];
    *count = k;
    RETURN(ZE_RESULT_SUCCESS);
}

static ze_result_t zt_sub_devices(ze_device_handle_t h, uint32_t *count, ze_device_handle_t *subs)
{
    (void)h;
    (void)subs;
    *count = 0;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zt_device_props(ze_device_handle_t h, ze_device_properties_t *p)
{
    LOCK();
    CHECK_HANDLE(h, M_DEVICE);
    ze_result_t r = inject("zeDeviceGetProperties");
    if (r)
        RETURN(r);
    if (p->stype == ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2 && api_version() < ZE_API_VERSION_1_2)
        RETURN(ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION); /* a 1.1 driver does not know that stype */
    if (p->stype != ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES && p->stype != ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2)
        RETURN(ZE_RESULT_ERROR_INVALID_ARGUMENT);
    struct zt_devdesc d;
    devdesc(((struct zt_device *)h)->index, &d);
    p->type = ZE_DEVICE_TYPE_GPU;
    p->vendorId = d.vendor;
    p->deviceId = d.device_id;
    p->flags = 0;
    p->subdeviceId = 0;
    p->coreClockRate = 1550;
    p->maxMemAllocSize = d.heaps[0];
    p->maxHardwareContexts = 64;
    p->maxCommandQueuePriority = 0;
    p->numThreadsPerEU = d.threads;
    p->physicalEUSimdWidth = d.simd;
    p->numEUsPerSubslice = d.eus;
    p->numSubslicesPerSlice = d.subslices;
    p->numSlices = d.slices;
    uint64_t hz = timer_hz();
    p->timerResolution = p->stype == ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2 ? hz : (1000000000 + hz / 2) / hz;
    p->timestampValidBits = zt.timer_bits;
    p->kernelTimestampValidBits = 32;
    for (int i = 0; i < ZE_MAX_DEVICE_UUID_SIZE; i++)
        p->uuid.id[i] = (uint8_t)(0x10 * (((struct zt_device *)h)->index + 1) + i);
    snprintf(p->name, sizeof p->name, "%s", d.name);
    RETURN(ZE_RESULT_SUCCESS);
}

static ze_result_t zt_compute_props(ze_device_handle_t h, ze_device_compute_properties_t *p)
{
    LOCK();
    CHECK_HANDLE(h, M_DEVICE);
    if (p->stype != ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES)
        RETURN(ZE_RESULT_ERROR_INVALID_ARGUMENT);
    struct zt_devdesc d;
    devdesc(((struct zt_device *)h)->index, &d);
    p->maxTotalGroupSize = d.max_group;
    p->maxGroupSizeX = d.max_group;
    p->maxGroupSizeY = d.max_group;
    p->maxGroupSizeZ = d.max_group;
    p->maxGroupCountX = d.max_count[0];
    p->maxGroupCountY = d.max_count[1];
    p->maxGroupCountZ = d.max_count[2];
    p->maxSharedLocalMemory = d.slm;
    p->numSubGroupSizes = d.nsub_groups;
    memset(p->subGroupSizes, 0, sizeof p->subGroupSizes);
    for (uint32_t i = 0; i < d.nsub_groups && i < ZE_SUBGROUPSIZE_COUNT; i++)
        p->subGroupSizes[i] = d.sub_groups[i];
    RETURN(ZE_RESULT_SUCCESS);
}

static ze_command_queue_group_property_flags_t group_flags(uint32_t device, uint32_t ordinal)
{
    struct zt_devdesc d;
    devdesc(device, &d);
    if (ordinal == d.compute_group)
        return ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE | ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY |
               ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COOPERATIVE_KERNELS;
    return ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
}

static ze_result_t zt_queue_groups(ze_device_handle_t h, uint32_t *count, ze_command_queue_group_properties_t *p)
{
    LOCK();
    CHECK_HANDLE(h, M_DEVICE);
    uint32_t n = 2;
    if (*count == 0 || !p) {
        *count = n;
        RETURN(ZE_RESULT_SUCCESS);
    }
    uint32_t k = *count < n ? *count : n;
    for (uint32_t i = 0; i < k; i++) {
        if (p[i].stype != ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES)
            RETURN(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        p[i].flags = group_flags(((struct zt_device *)h)->index, i);
        p[i].maxMemoryFillPatternSize = 16;
        p[i].numQueues = (p[i].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE) ? 1 : 2;
    }
    *count = k;
    RETURN(ZE_RESULT_SUCCESS);
}

static ze_result_t zt_memory_props(ze_device_handle_t h, uint32_t *count, ze_device_memory_properties_t *p)
{
    LOCK();
    CHECK_HANDLE(h, M_DEVICE);
    struct zt_devdesc d;
    devdesc(((struct zt_device *)h)->index, &d);
    if (*count == 0 || !p) {
        *count = d.nheaps;
        RETURN(ZE_RESULT_SUCCESS);
    }
    uint32_t k = *count < d.nheaps ? *count : d.nheaps;
    for (uint32_t i = 0; i < k; i++) {
        if (p[i].stype != ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES)
            RETURN(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        p[i].flags = 0;
        p[i].maxClockRate = 3200;
        p[i].maxBusWidth = 4096;
        p[i].totalSize = d.heaps[i];
        snprintf(p[i].name, sizeof p[i].name, i ? "LMEM1" : "HBM");
    }
    *count = k;
    RETURN(ZE_RESULT_SUCCESS);
}

static ze_result_t zt_pci_props(ze_device_handle_t h, ze_pci_ext_properties_t *p)
{
    LOCK();
    CHECK_HANDLE(h, M_DEVICE);
    if (!offers_pci()) {
        violate("zeDevicePciGetPropertiesExt called though the driver does not offer %s", ZE_PCI_PROPERTIES_EXT_NAME);
        RETURN(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    }
    if (p->stype != ZE_STRUCTURE_TYPE_PCI_EXT_PROPERTIES)
        RETURN(ZE_RESULT_ERROR_INVALID_ARGUMENT);
    struct zt_devdesc d;
    devdesc(((struct zt_device *)h)->index, &d);
    p->address.domain = d.pci[0];
    p->address.bus = d.pci[1];
    p->address.device = d.pci[2];
    p->address.function = d.pci[3];
    p->maxSpeed.genVersion = 4;
    p->maxSpeed.width = 16;
    p->maxSpeed.maxBandwidth = 31500000000;
    RETURN(ZE_RESULT_SUCCESS);
}

static ze_result_t zt_device_status(ze_device_handle_t h)
{
    return is(h, M_DEVICE) ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
}

/* ---------------------------------------------------------------- context */

static ze_result_t zt_context_create(ze_driver_handle_t h, const ze_context_desc_t *desc, ze_context_handle_t *out)
{
    LOCK();
    CHECK_HANDLE(h, M_DRIVER);
    if (!desc || desc->stype != ZE_STRUCTURE_TYPE_CONTEXT_DESC)
        RETURN(ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ze_result_t r = inject("zeContextCreate");
    if (r)
        RETURN(r);
    struct zt_context *c = calloc(1, sizeof *c);
    c->magic = M_CONTEXT;
    zt.live_contexts++;
    *out = (ze_context_handle_t)c;
    RETURN(ZE_RESULT_SUCCESS);
}

static ze_result_t zt_context_destroy(ze_context_handle_t h)
{
    LOCK();
    CHECK_HANDLE(h, M_CONTEXT);
    struct zt_context *c = (struct zt_context *)h;
    if (c->children)
        violate("zeContextDestroy: %d objects or allocations of the context are still alive", c->children);
    zt.live_contexts--;
    kill_obj(c);
    RETURN(ZE_RESULT_SUCCESS);
}

static ze_result_t zt_context_status(ze_context_handle_t h)
{
    return is(h, M_CONTEXT) ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
}

/* ----------------------------------------------------------------- events */

static ze_result_t zt_pool_create(ze_context_handle_t h, const ze_event_pool_desc_t *desc, uint32_t ndev,
                                  ze_device_handle_t *devs, ze_event_pool_handle_t *out)
{
    LOCK();
    CHECK_HANDLE(h, M_CONTEXT);
    if (!desc || desc->stype != ZE_STRUCTURE_TYPE_EVENT_POOL_DESC || desc->count == 0)
        RETURN(ZE_RESULT_ERROR_INVALID_ARGUMENT);
    for (uint32_t i = 0; i < ndev; i++)
        if (!is(devs[i], M_DEVICE))
            RETURN(bad_handle(__func__));
    ze_result_t r = inject("zeEventPoolCreate");
    if (r)
        RETURN(r);
    struct zt_pool *p = calloc(1, sizeof *p);
    p->magic = M_POOL;
    p->ctx = (struct zt_context *)h;
    p->count = desc->count;
    p->flags = desc->flags;
    p->ctx->children++;
    zt.live_pools++;
    *out = (ze_event_pool_handle_t)p;
    RETURN(ZE_RESULT_SUCCESS);
}

static ze_result_t zt_pool_destroy(ze_event_pool_handle_t h)
{
    LOCK();
    CHECK_HANDLE(h, M_POOL);
    struct zt_pool *p = (struct zt_pool *)h;
    if (p->events)
        violate("zeEventPoolDestroy: %d events of the pool are still alive", p->events);
    p->ctx->children--;
    zt.live_pools--;
    kill_obj(p);
    RETURN(ZE_RESULT_SUCCESS);
}

static ze_result_t zt_event_create(ze_event_pool_handle_t h, const ze_event_desc_t *desc, ze_event_handle_t *out)
{
    LOCK();
    CHECK_HANDLE(h, M_POOL);
    struct zt_pool *p = (struct zt_pool *)h;
    if (!desc || desc->stype != ZE_STRUCTURE_TYPE_EVENT_DESC || desc->index >= p->count)
        RETURN(ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ze_result_t r = inject("zeEventCreate");
    if (r)
        RETURN(r);
    struct zt_event *e = calloc(1, sizeof *e);
    e->magic = M_EVENT;
    e->pool = p;
    p->events++;
    zt.live_events++;
    *out = (ze_event_handle_t)e;
    RETURN(ZE_RESULT_SUCCESS);
}

static ze_result_t zt_event_destroy(ze_event_handle_t h)
{
    LOCK();
    CHECK_HANDLE(h, M_EVENT);
    struct zt_event *e = (struct zt_event *)h;
    if (running(e->signal))
        violate("zeEventDestroy: a command that signals the event has not been seen complete");
    e->pool->events--;
    zt.live_events--;
    kill_obj(e);
    RETURN(ZE_RESULT_SUCCESS);
}

static ze_result_t zt_event_signal(ze_event_handle_t h)
{
    LOCK();
    CHECK_HANDLE(h, M_EVENT);
    ((struct zt_event *)h)->signaled = 1;
    RETURN(ZE_RESULT_SUCCESS);
}

/* Commands run at append time: an event not signalled by then never will be. */
static ze_result_t zt_event_sync(ze_event_handle_t h, uint64_t timeout)
{
    LOCK();
    CHECK_HANDLE(h, M_EVENT);
    ze_result_t r = inject("zeEventHostSynchronize"); /* a kernel's page fault: ZE_RESULT_ERROR_DEVICE_LOST */
    if (r)
        RETURN(r);
    if (((struct zt_event *)h)->signaled) {
        seen_complete(((struct zt_event *)h)->signal);
        RETURN(ZE_RESULT_SUCCESS);
    }
    if (timeout == UINT64_MAX)
        violate("zeEventHostSynchronize: waiting forever on an event nothing will signal");
    RETURN(ZE_RESULT_NOT_READY);
}

static ze_result_t zt_event_query(ze_event_handle_t h)
{
    LOCK();
    CHECK_HANDLE(h, M_EVENT);
    struct zt_event *e = (struct zt_event *)h;
    if (e->signaled)
        seen_complete(e->signal);
    RETURN(e->signaled ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY);
}

static ze_result_t zt_event_reset(ze_event_handle_t h)
{
    LOCK();
    CHECK_HANDLE(h, M_EVENT);
    ((struct zt_event *)h)->signaled = 0;
    RETURN(ZE_RESULT_SUCCESS);
}

/* Signals h (may be NULL) as the list's latest command. */
static ze_result_t signal_event(const struct zt_list *l, ze_event_handle_t h)
{
    if (!h)
        return ZE_RESULT_SUCCESS;
    if (!is(h, M_EVENT))
        return bad_handle("signal event");
    ((struct zt_event *)h)->signaled = 1;
    ((struct zt_event *)h)->signal = (struct zt_use){l->id, l->seq};
    return ZE_RESULT_SUCCESS;
}

/* Marks the allocation holding p (if any) as used by the list's latest command. */
static void use_memory(const struct zt_list *l, const void *p)
{
    struct zt_alloc *a = find_alloc(p);
    if (a)
        a->last = (struct zt_use){l->id, l->seq};
}

/* ----------------------------------------------------------------- memory */

static int pow2_or_zero(size_t a)
{
    return (a & (a - 1)) == 0;
}

static ze_result_t alloc_common(ze_context_handle_t h, size_t size, size_t align, int kind, void **out)
{
    if (size == 0)
        return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
    if (!pow2_or_zero(align))
        return ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
    size_t a = align > 64 ? align : 64;
    struct zt_alloc *al = calloc(1, sizeof *al);
    al->base = aligned_alloc(a, (size + a - 1) / a * a);
    if (!al->base) {
        free(al);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    memset(al->base, 0xcd, size); /* fresh device memory is not zero */
    al->size = size;
    al->kind = kind;
    al->ctx = (struct zt_context *)h;
    al->ctx->children++;
    al->next = zt_allocs;
    zt_allocs = al;
    zt.live_allocs++;
    *out = al->base;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zt_alloc_device(ze_context_handle_t h, const ze_device_mem_alloc_desc_t *desc, size_t size,
                                   size_t align, ze_device_handle_t dev, void **out)
{
    LOCK();
    CHECK_HANDLE(h, M_CONTEXT);
    CHECK_HANDLE(dev, M_DEVICE);
    if (!desc || desc->stype != ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC)
        RETURN(ZE_RESULT_ERROR_INVALID_ARGUMENT);
    struct zt_devdesc d;
    devdesc(((struct zt_device *)dev)->index, &d);
    if (desc->ordinal >= d.nheaps)
        RETURN(ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ze_result_t r = inject("zeMemAllocDevice");
    if (r)
        RETURN(r);
    r = alloc_common(h, size, align, ZE_MEMORY_TYPE_DEVICE, out);
    if (r == ZE_RESULT_SUCCESS)
        zt.device_allocs++;
    RETURN(r);
}

static ze_result_t zt_alloc_host(ze_context_handle_t h, const ze_host_mem_alloc_desc_t *desc, size_t size,
                                 size_t align, void **out)
{
    LOCK();
    CHECK_HANDLE(h, M_CONTEXT);
    if (!desc || desc->stype != ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC)
        RETURN(ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ze_result_t r = inject("zeMemAllocHost");
    if (r)
        RETURN(r);
    RETURN(alloc_common(h, size, align, ZE_MEMORY_TYPE_HOST, out));
}

static ze_result_t zt_alloc_shared(ze_context_handle_t h, const ze_device_mem_alloc_desc_t *ddesc,
                                   const ze_host_mem_alloc_desc_t *hdesc, size_t size, size_t align,
                                   ze_device_handle_t dev, void **out)
{
    LOCK();
    CHECK_HANDLE(h, M_CONTEXT);
    (void)dev;
    if (!ddesc || !hdesc)
        RETURN(ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    RETURN(alloc_common(h, size, align, ZE_MEMORY_TYPE_SHARED, out));
}

static ze_result_t free_common(ze_context_handle_t h, void *ptr, const char *call, int blocking)
{
    struct zt_alloc **pp = &zt_allocs;
    while (*pp && (*pp)->base != ptr)
        pp = &(*pp)->next;
    if (!*pp) {
        violate("%s(%p): not the start of an allocation", call, ptr);
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    struct zt_alloc *a = *pp;
    if (a->ctx != (struct zt_context *)h)
        violate("%s(%p): freed through another context than it was allocated in", call, ptr);
    if (!blocking && running(a->last))
        violate("%s(%p): a command that uses the memory has not been seen complete", call, ptr);
    *pp = a->next;
    a->ctx->children--;
    free(a->base);
    free(a);
    zt.live_allocs--;
    zt.frees++;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zt_free(ze_context_handle_t h, void *ptr)
{
    LOCK();
    CHECK_HANDLE(h, M_CONTEXT);
    RETURN(free_common(h, ptr, "zeMemFree", 0));
}

static ze_result_t zt_free_ext(ze_context_handle_t h, const ze_memory_free_ext_desc_t *desc, void *ptr)
{
    LOCK();
    CHECK_HANDLE(h, M_CONTEXT);
    if (!offers_free_policy())
        violate("zeMemFreeExt called though the driver does not offer %s", ZE_MEMORY_FREE_POLICIES_EXT_NAME);
    if (!desc || desc->stype != ZE_STRUCTURE_TYPE_MEMORY_FREE_EXT_DESC)
        RETURN(ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ze_result_t r = free_common(h, ptr, "zeMemFreeExt",
                                (desc->freePolicy & ZE_DRIVER_MEMORY_FREE_POLICY_EXT_FLAG_BLOCKING_FREE) != 0);
    if (r == ZE_RESULT_SUCCESS && (desc->freePolicy & ZE_DRIVER_MEMORY_FREE_POLICY_EXT_FLAG_BLOCKING_FREE))
        zt.frees_blocking++;
    RETURN(r);
}

static ze_result_t zt_alloc_props(ze_context_handle_t h, const void *ptr, ze_memory_allocation_properties_t *p,
                                  ze_device_handle_t *dev)
{
    LOCK();
    CHECK_HANDLE(h, M_CONTEXT);
    struct zt_alloc *a = find_alloc(ptr);
    p->type = a ? (ze_memory_type_t)a->kind : ZE_MEMORY_TYPE_UNKNOWN;
    p->id = a ? (uint64_t)(uintptr_t)a->base : 0;
    p->pageSize = 65536;
    if (dev)
        *dev = a && a->kind != ZE_MEMORY_TYPE_HOST ? (ze_device_handle_t)&zt_devices[0] : NULL;
    RETURN(ZE_RESULT_SUCCESS);
}

static ze_result_t zt_address_range(ze_context_handle_t h, const void *ptr, void **base, size_t *size)
{
    LOCK();
    CHECK_HANDLE(h, M_CONTEXT);
    struct zt_alloc *a = find_alloc(ptr);
    if (!a)
        RETURN(ZE_RESULT_ERROR_INVALID_ARGUMENT);
    if (base)
        *base = a->base;
    if (size)
        *size = a->size;
    RETURN(ZE_RESULT_SUCCESS);
}

/* A range a command reads or writes: within one allocation, or plain host
 * memory (a copy's host side). */
static int range_ok(const char *what, const void *p, size_t size, int must_be_allocation)
{
    if (!p) {
        violate("%s: NULL pointer", what);
        return 0;
    }
    struct zt_alloc *a = find_alloc(p);
    if (!a) {
        if (must_be_allocation)
            violate("%s: %p is not memory of this driver", what, p);
        return !must_be_allocation;
    }
    if ((const char *)p + size > a->base + a->size) {
        violate("%s: %zu bytes at %p run past the end of a %zu-byte allocation", what, size, p, a->size);
        return 0;
    }
    return 1;
}

/* ---------------------------------------------------------- command lists */

static ze_result_t zt_list_create(ze_context_handle_t h, ze_device_handle_t dev, const ze_command_list_desc_t *desc,
                                  ze_command_list_handle_t *out)
{
    (void)h;
    (void)dev;
    (void)desc;
    (void)out;
    return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE; /* only immediate lists here */
}

static ze_result_t zt_list_create_immediate(ze_context_handle_t h, ze_device_handle_t dev,
                                            const ze_command_queue_desc_t *desc, ze_command_list_handle_t *out)
{
    LOCK();
    CHECK_HANDLE(h, M_CONTEXT);
    CHECK_HANDLE(dev, M_DEVICE);
    if (!desc || desc->stype != ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC || desc->ordinal >= 2 || desc->index > 0)
        RETURN(ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ze_result_t r = inject("zeCommandListCreateImmediate");
    if (r)
        RETURN(r);
    struct zt_list *l = calloc(1, sizeof *l);
    l->magic = M_LIST;
    l->ctx = (struct zt_context *)h;
    l->device = ((struct zt_device *)dev)->index;
    l->ordinal = desc->ordinal;
    atomic_init(&l->users, 0);
    l->id = ++zt_list_ids;
    l->next_live = zt_lists;
    zt_lists = l;
    l->ctx->children++;
    zt.live_lists++;
    *out = (ze_command_list_handle_t)l;
    RETURN(ZE_RESULT_SUCCESS);
}

static ze_result_t zt_list_destroy(ze_command_list_handle_t h)
{
    LOCK();
    CHECK_HANDLE(h, M_LIST);
    struct zt_list *l = (struct zt_list *)h;
    if (l->seq > l->done)
        violate("zeCommandListDestroy: %llu commands of the list have not been seen complete",
                (unsigned long long)(l->seq - l->done));
    for (struct zt_list **p = &zt_lists; *p; p = &(*p)->next_live)
        if (*p == l) {
            *p = l->next_live;
            break;
        }
    l->ctx->children--;
    zt.live_lists--;
    kill_obj(l);
    RETURN(ZE_RESULT_SUCCESS);
}

/* Entry to an append: detects two threads in one list at once (the count is
 * taken before the driver lock, so a second caller is seen while it waits). */
static int list_enter(ze_command_list_handle_t h)
{
    if (!is(h, M_LIST))
        return 1;
    return atomic_fetch_add(&((struct zt_list *)h)->users, 1);
}

static void list_leave(ze_command_list_handle_t h)
{
    if (is(h, M_LIST))
        atomic_fetch_sub(&((struct zt_list *)h)->users, 1);
}

/* An ordinary command: runs now; counted as unordered when an earlier command
 * was appended after the list's last barrier (the specification orders
 * commands of a list only through barriers). */
static void command(struct zt_list *l, ze_event_handle_t signal)
{
    if (l->pending)
        zt.unordered++;
    l->pending = 1;
    l->seq++;
    signal_event(l, signal);
}

#define LIST_PROLOGUE(h)                                                                               \
    int busy_ = list_enter(h);                                                                         \
    LOCK();                                                                                            \
    if (busy_)                                                                                         \
        violate("%s: command list used from two threads at once", __func__);                         \
    if (!is((h), M_LIST)) {                                                                            \
        ze_result_t r_ = bad_handle(__func__);                                                         \
        UNLOCK();                                                                                      \
        list_leave(h);                                                                                 \
        return r_;                                                                                     \
    }                                                                                                  \
    struct zt_list *l = (struct zt_list *)(h)

#define LIST_RETURN(h, r)                                                                              \
    do {                                                                                               \
        ze_result_t r___ = (r);                                                                        \
        UNLOCK();                                                                                      \
        list_leave(h);                                                                                 \
        return r___;                                                                                   \
    } while (0)

static ze_result_t zt_barrier(ze_command_list_handle_t h, ze_event_handle_t signal, uint32_t nwait,
                              ze_event_handle_t *waits)
{
    (void)waits;
    LIST_PROLOGUE(h);
    if (nwait)
        LIST_RETURN(h, ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    ze_result_t r = inject("zeCommandListAppendBarrier");
    if (r)
        LIST_RETURN(h, r);
    l->pending = 0; /* with no wait events it waits for every earlier command */
    zt.barriers++;
    l->seq++;
    LIST_RETURN(h, signal_event(l, signal));
}

static ze_result_t zt_copy(ze_command_list_handle_t h, void *dst, const void *src, size_t size,
                           ze_event_handle_t signal, uint32_t nwait, ze_event_handle_t *waits)
{
    (void)nwait;
    (void)waits;
    LIST_PROLOGUE(h);
    ze_result_t r = inject("zeCommandListAppendMemoryCopy");
    if (r)
        LIST_RETURN(h, r);
    if (!range_ok("zeCommandListAppendMemoryCopy destination", dst, size, 0) ||
        !range_ok("zeCommandListAppendMemoryCopy source", src, size, 0))
        LIST_RETURN(h, ZE_RESULT_ERROR_INVALID_ARGUMENT);
    memmove(dst, src, size);
    zt.copies++;
    command(l, signal);
    use_memory(l, dst);
    use_memory(l, src);
    LIST_RETURN(h, ZE_RESULT_SUCCESS);
}

static ze_result_t zt_fill(ze_command_list_handle_t h, void *dst, const void *pattern, size_t psize, size_t size,
                           ze_event_handle_t signal, uint32_t nwait, ze_event_handle_t *waits)
{
    (void)nwait;
    (void)waits;
    LIST_PROLOGUE(h);
    ze_result_t r = inject("zeCommandListAppendMemoryFill");
    if (r)
        LIST_RETURN(h, r);
    if (!pattern || psize == 0 || !pow2_or_zero(psize) || psize > 16 || size % psize)
        LIST_RETURN(h, ZE_RESULT_ERROR_INVALID_SIZE);
    if (!range_ok("zeCommandListAppendMemoryFill destination", dst, size, 1))
        LIST_RETURN(h, ZE_RESULT_ERROR_INVALID_ARGUMENT);
    for (size_t i = 0; i < size; i += psize)
        memcpy((char *)dst + i, pattern, psize);
    zt.fills++;
    command(l, signal);
    use_memory(l, dst);
    LIST_RETURN(h, ZE_RESULT_SUCCESS);
}

static ze_result_t zt_timestamp(ze_command_list_handle_t h, uint64_t *dst, ze_event_handle_t signal, uint32_t nwait,
                                ze_event_handle_t *waits)
{
    (void)nwait;
    (void)waits;
    LIST_PROLOGUE(h);
    if (!range_ok("zeCommandListAppendWriteGlobalTimestamp destination", dst, sizeof *dst, 1))
        LIST_RETURN(h, ZE_RESULT_ERROR_INVALID_ARGUMENT);
    *dst = clock_now();
    zt.timestamps++;
    command(l, signal);
    use_memory(l, dst);
    LIST_RETURN(h, ZE_RESULT_SUCCESS);
}

static ze_result_t zt_signal(ze_command_list_handle_t h, ze_event_handle_t e)
{
    LIST_PROLOGUE(h);
    command(l, e);
    LIST_RETURN(h, ZE_RESULT_SUCCESS);
}

static ze_result_t zt_wait_events(ze_command_list_handle_t h, uint32_t n, ze_event_handle_t *events)
{
    (void)n;
    (void)events;
    LIST_PROLOGUE(h);
    (void)l;
    LIST_RETURN(h, ZE_RESULT_SUCCESS);
}

/* ---------------------------------------------------------------- modules */

static struct zt_log *new_log(const char *text)
{
    struct zt_log *g = calloc(1, sizeof *g);
    g->magic = M_LOG;
    g->text = strdup(text ? text : "");
    zt.live_logs++;
    return g;
}

static const char *const known_flags[] = {
    "-cl-intel-128-GRF-per-thread", "-cl-intel-256-GRF-per-thread", "-cl-intel-512-GRF-per-thread",
    "-cl-intel-enable-auto-large-GRF-mode", "-g", "-cl-opt-disable", "-cl-fp32-correctly-rounded-divide-sqrt",
    "-cl-mad-enable", "-cl-fast-relaxed-math", "-cl-intel-greater-than-4GB-buffer-required",
};

/* IGC's view of the options: every one known, at most one GRF mode. */
static const char *check_flags(const char *flags, char *why, size_t cap)
{
    int grf = 0;
    for (const char *s = flags ? flags : ""; *s;) {
        while (*s == ' ')
            s++;
        size_t n = strcspn(s, " ");
        if (!n)
            break;
        int known = 0;
        for (size_t i = 0; i < sizeof known_flags / sizeof known_flags[0]; i++)
            if (strlen(known_flags[i]) == n && strncmp(known_flags[i], s, n) == 0) {
                known = 1;
                grf += i < 4;
            }
        if (!known) {
            snprintf(why, cap, "error: unknown build option '%.*s'", (int)n, s);
            return why;
        }
        s += n;
    }
    if (grf > 1) {
        snprintf(why, cap, "error: %d GRF modes requested in '%s': pick one", grf, flags);
        return why;
    }
    return NULL;
}

static int is_native(const uint8_t *b, size_t n)
{
    return n >= 64 && b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F' && b[4] == 2 &&
           ((unsigned)b[18] | (unsigned)b[19] << 8) == 205;
}

static ze_result_t zt_module_create(ze_context_handle_t h, ze_device_handle_t dev, const ze_module_desc_t *desc,
                                    ze_module_handle_t *out, ze_module_build_log_handle_t *log)
{
    LOCK();
    CHECK_HANDLE(h, M_CONTEXT);
    CHECK_HANDLE(dev, M_DEVICE);
    if (!desc || desc->stype != ZE_STRUCTURE_TYPE_MODULE_DESC || !desc->pInputModule)
        RETURN(ZE_RESULT_ERROR_INVALID_ARGUMENT);
    struct zetest_build *b = zt.builds < ZETEST_MAX_BUILDS ? &zt.build[zt.builds++] : NULL;
    if (b) {
        snprintf(b->flags, sizeof b->flags, "%s", desc->pBuildFlags ? desc->pBuildFlags : "");
        b->format = desc->format;
        b->size = (uint32_t)desc->inputSize;
        b->context = (uint64_t)(uintptr_t)h;
    }
    char why[600] = "";
    ze_result_t r = inject("zeModuleCreate");
    struct zt_module *m = calloc(1, sizeof *m);
    m->magic = M_MODULE;
    m->ctx = (struct zt_context *)h;
    m->device = ((struct zt_device *)dev)->index;
    m->native = desc->format == ZE_MODULE_FORMAT_NATIVE;
    if (r) {
        snprintf(why, sizeof why, "%s", zt.build_log[0] ? zt.build_log : "error: injected build failure");
    } else if (desc->format == ZE_MODULE_FORMAT_IL_SPIRV) {
        const char *e = spv_parse(desc->pInputModule, desc->inputSize, &m->spv);
        if (e) {
            snprintf(why, sizeof why, "error: %s", e);
            r = ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
        } else if (check_flags(desc->pBuildFlags, why, sizeof why)) {
            r = ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
        }
    } else if (desc->format == ZE_MODULE_FORMAT_NATIVE) {
        if (!is_native(desc->pInputModule, desc->inputSize)) {
            snprintf(why, sizeof why, "error: not an Intel GPU ELF (zebin)");
            r = ZE_RESULT_ERROR_INVALID_NATIVE_BINARY;
        } else {
            m->linked = 1;
        }
    } else {
        r = ZE_RESULT_ERROR_INVALID_ENUMERATION;
    }
    if (log)
        *log = (ze_module_build_log_handle_t)new_log(why);
    if (r) {
        if (b)
            b->failed = 1;
        kill_obj(m);
        *out = NULL;
        RETURN(r);
    }
    m->linked = m->linked || m->spv.nimports == 0;
    m->ctx->children++;
    zt.live_modules++;
    *out = (ze_module_handle_t)m;
    RETURN(ZE_RESULT_SUCCESS);
}

static ze_result_t zt_module_destroy(ze_module_handle_t h)
{
    LOCK();
    CHECK_HANDLE(h, M_MODULE);
    struct zt_module *m = (struct zt_module *)h;
    if (m->kernels)
        violate("zeModuleDestroy: %d kernels of the module are still alive", m->kernels);
    m->ctx->children--;
    zt.live_modules--;
    kill_obj(m);
    RETURN(ZE_RESULT_SUCCESS);
}

static int exports(const struct zt_module *m, const char *name)
{
    for (uint32_t i = 0; i < m->spv.nexports; i++)
        if (strcmp(m->spv.exports[i], name) == 0)
            return 1;
    return 0;
}

static ze_result_t zt_module_link(uint32_t n, ze_module_handle_t *mods, ze_module_build_log_handle_t *log)
{
    LOCK();
    char why[600] = "";
    ze_result_t r = ZE_RESULT_SUCCESS;
    for (uint32_t i = 0; i < n; i++)
        CHECK_HANDLE(mods[i], M_MODULE);
    for (uint32_t i = 0; i < n && !r; i++) {
        struct zt_module *m = (struct zt_module *)mods[i];
        if (m->ctx != ((struct zt_module *)mods[0])->ctx)
            violate("zeModuleDynamicLink: modules of two contexts");
        if (m->linked)
            continue;
        for (uint32_t k = 0; k < m->spv.nimports && !r; k++) {
            int found = 0;
            for (uint32_t j = 0; j < n; j++)
                found += j != i && exports((struct zt_module *)mods[j], m->spv.imports[k]);
            if (found != 1) {
                snprintf(why, sizeof why, "error: %s symbol '%s'", found ? "ambiguous" : "undefined",
                         m->spv.imports[k]);
                r = ZE_RESULT_ERROR_MODULE_LINK_FAILURE;
            }
        }
    }
    if (!r) {
        for (uint32_t i = 0; i < n; i++)
            ((struct zt_module *)mods[i])->linked = 1;
        zt.links++;
        zt.link_modules = n;
    }
    if (log)
        *log = (ze_module_build_log_handle_t)new_log(why);
    RETURN(r);
}

static ze_result_t zt_kernel_names(ze_module_handle_t h, uint32_t *count, const char **names)
{
    LOCK();
    CHECK_HANDLE(h, M_MODULE);
    struct zt_module *m = (struct zt_module *)h;
    if (*count == 0 || !names) {
        *count = m->spv.nentries;
        RETURN(ZE_RESULT_SUCCESS);
    }
    uint32_t k = *count < m->spv.nentries ? *count : m->spv.nentries;
    for (uint32_t i = 0; i < k; i++)
        names[i] = m->spv.entries[i].name;
    *count = k;
    RETURN(ZE_RESULT_SUCCESS);
}

static ze_result_t zt_module_props(ze_module_handle_t h, ze_module_properties_t *p)
{
    LOCK();
    CHECK_HANDLE(h, M_MODULE);
    struct zt_module *m = (struct zt_module *)h;
    p->flags = m->linked ? 0 : ZE_MODULE_PROPERTY_FLAG_IMPORTS;
    RETURN(ZE_RESULT_SUCCESS);
}

static ze_result_t zt_log_destroy(ze_module_build_log_handle_t h)
{
    LOCK();
    CHECK_HANDLE(h, M_LOG);
    free(((struct zt_log *)h)->text);
    zt.live_logs--;
    kill_obj(h);
    RETURN(ZE_RESULT_SUCCESS);
}

static ze_result_t zt_log_string(ze_module_build_log_handle_t h, size_t *size, char *buf)
{
    LOCK();
    CHECK_HANDLE(h, M_LOG);
    const char *t = ((struct zt_log *)h)->text;
    size_t n = strlen(t) + 1;
    if (!buf) {
        *size = n;
        RETURN(ZE_RESULT_SUCCESS);
    }
    if (*size < n)
        RETURN(ZE_RESULT_ERROR_INVALID_SIZE);
    memcpy(buf, t, n);
    *size = n;
    RETURN(ZE_RESULT_SUCCESS);
}

/* ---------------------------------------------------------------- kernels */

static ze_result_t zt_kernel_create(ze_module_handle_t h, const ze_kernel_desc_t *desc, ze_kernel_handle_t *out)
{
    LOCK();
    CHECK_HANDLE(h, M_MODULE);
    struct zt_module *m = (struct zt_module *)h;
    if (!desc || desc->stype != ZE_STRUCTURE_TYPE_KERNEL_DESC || !desc->pKernelName)
        RETURN(ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ze_result_t r = inject("zeKernelCreate");
    if (r)
        RETURN(r);
    const struct spv_entry *e = NULL;
    if (!m->native && !(e = spv_find(&m->spv, desc->pKernelName)))
        RETURN(ZE_RESULT_ERROR_INVALID_KERNEL_NAME);
    if (!m->linked)
        RETURN(ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED);
    struct zt_kernel *k = calloc(1, sizeof *k);
    k->magic = M_KERNEL;
    k->mod = m;
    k->entry = e;
    snprintf(k->name, sizeof k->name, "%s", desc->pKernelName);
    k->nargs = e ? e->nparams : 0;
    atomic_init(&k->users, 0);
    m->kernels++;
    zt.live_kernels++;
    *out = (ze_kernel_handle_t)k;
    RETURN(ZE_RESULT_SUCCESS);
}

static ze_result_t zt_kernel_destroy(ze_kernel_handle_t h)
{
    LOCK();
    CHECK_HANDLE(h, M_KERNEL);
    struct zt_kernel *k = (struct zt_kernel *)h;
    if (running(k->last))
        violate("zeKernelDestroy: a launch of kernel '%s' has not been seen complete", k->name);
    k->mod->kernels--;
    zt.live_kernels--;
    kill_obj(k);
    RETURN(ZE_RESULT_SUCCESS);
}

static int kernel_enter(ze_kernel_handle_t h)
{
    return is(h, M_KERNEL) ? atomic_fetch_add(&((struct zt_kernel *)h)->users, 1) : 0;
}

static void kernel_leave(ze_kernel_handle_t h)
{
    if (is(h, M_KERNEL))
        atomic_fetch_sub(&((struct zt_kernel *)h)->users, 1);
}

static uint64_t zt_seq;

/* Kernel state is per handle: records who changed slot i (an argument, or
 * the group size) and when. */
static void kernel_changed(struct zt_kernel *k, uint32_t i)
{
    k->setter[i] = pthread_self();
    k->seq[i] = ++zt_seq;
}

/* At an append by this thread: once it began setting this launch's state,
 * no other thread may have changed any of it (they interleaved). State set
 * before (say, when the kernel was prepared) is fine. */
static void check_interleaving(struct zt_kernel *k)
{
    pthread_t self = pthread_self();
    uint64_t first = 0;
    for (uint32_t i = 0; i <= ZETEST_MAX_ARGS; i++)
        if (k->seq[i] > k->appended && pthread_equal(k->setter[i], self) && (!first || k->seq[i] < first))
            first = k->seq[i];
    for (uint32_t i = 0; first && i <= ZETEST_MAX_ARGS; i++)
        if (k->seq[i] > first && !pthread_equal(k->setter[i], self))
            violate("zeCommandListAppendLaunchKernel: %s of kernel '%s' was changed by another thread while this "
                    "one was setting up its launch",
                    i == ZETEST_MAX_ARGS ? "the group size" : "an argument", k->name);
    k->appended = ++zt_seq;
}

static ze_result_t zt_group_size(ze_kernel_handle_t h, uint32_t x, uint32_t y, uint32_t z)
{
    int busy = kernel_enter(h);
    LOCK();
    if (busy)
        violate("zeKernelSetGroupSize: kernel used from two threads at once");
    if (!is(h, M_KERNEL)) {
        UNLOCK();
        kernel_leave(h);
        return bad_handle(__func__);
    }
    struct zt_kernel *k = (struct zt_kernel *)h;
    struct zt_devdesc d;
    devdesc(k->mod->device, &d);
    ze_result_t r = ZE_RESULT_SUCCESS;
    if (!x || !y || !z || x > d.max_group || y > d.max_group || z > d.max_group ||
        (uint64_t)x * y * z > d.max_group)
        r = ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
    else if (k->entry && k->entry->subgroup_size && x % k->entry->subgroup_size)
        violate("zeKernelSetGroupSize: %u work-items is not a whole number of the kernel's %u-wide sub-groups", x,
                k->entry->subgroup_size);
    if (!r) {
        k->group[0] = x, k->group[1] = y, k->group[2] = z;
        k->group_set = 1;
        kernel_changed(k, ZETEST_MAX_ARGS);
    }
    UNLOCK();
    kernel_leave(h);
    return r;
}

static ze_result_t zt_set_arg(ze_kernel_handle_t h, uint32_t index, size_t size, const void *value)
{
    int busy = kernel_enter(h);
    LOCK();
    if (busy)
        violate("zeKernelSetArgumentValue: kernel used from two threads at once");
    if (!is(h, M_KERNEL)) {
        UNLOCK();
        kernel_leave(h);
        return bad_handle(__func__);
    }
    struct zt_kernel *k = (struct zt_kernel *)h;
    ze_result_t r = inject("zeKernelSetArgumentValue");
    if (!r && (index >= ZETEST_MAX_ARGS || (k->entry && index >= k->entry->nparams)))
        r = ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX;
    if (!r && k->entry) {
        const struct spv_param *p = &k->entry->params[index];
        if (p->kind == SPV_PARAM_LOCAL) {
            if (value) {
                violate("zeKernelSetArgumentValue: argument %u of '%s' is local memory: its value must be NULL", index,
                        k->name);
                r = ZE_RESULT_ERROR_INVALID_ARGUMENT;
            } else if (size == 0) {
                r = ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
            }
        } else if (size != p->size) {
            violate("zeKernelSetArgumentValue: argument %u of '%s' takes %u bytes, not %zu", index, k->name, p->size,
                    size);
            r = ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
        }
    }
    if (!r) {
        struct zetest_arg *a = &k->args[index];
        a->set = 1;
        a->size = (uint32_t)size;
        a->null_value = value == NULL;
        memset(a->bytes, 0, sizeof a->bytes);
        if (value)
            memcpy(a->bytes, value, size < sizeof a->bytes ? size : sizeof a->bytes);
        if (!k->entry && index + 1 > k->nargs)
            k->nargs = index + 1;
        kernel_changed(k, index);
    }
    UNLOCK();
    kernel_leave(h);
    return r;
}

static ze_result_t zt_kernel_props(ze_kernel_handle_t h, ze_kernel_properties_t *p)
{
    LOCK();
    CHECK_HANDLE(h, M_KERNEL);
    if (p->stype != ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES)
        RETURN(ZE_RESULT_ERROR_INVALID_ARGUMENT);
    struct zt_kernel *k = (struct zt_kernel *)h;
    struct zt_devdesc d;
    devdesc(k->mod->device, &d);
    p->numKernelArgs = k->entry ? k->entry->nparams : 0;
    p->requiredGroupSizeX = p->requiredGroupSizeY = p->requiredGroupSizeZ = 0;
    p->requiredNumSubGroups = 0;
    p->requiredSubgroupSize = k->entry ? k->entry->subgroup_size : 0;
    p->maxSubgroupSize = p->requiredSubgroupSize ? p->requiredSubgroupSize : max_sub_group(&d);
    p->maxNumSubgroups = p->maxSubgroupSize ? d.max_group / p->maxSubgroupSize : 0;
    p->localMemSize = 0;
    p->privateMemSize = 0;
    p->spillMemSize = zt.spill_bytes;
    memset(&p->uuid, 0, sizeof p->uuid);
    RETURN(ZE_RESULT_SUCCESS);
}

static ze_result_t zt_kernel_name(ze_kernel_handle_t h, size_t *size, char *name)
{
    LOCK();
    CHECK_HANDLE(h, M_KERNEL);
    const char *n = ((struct zt_kernel *)h)->name;
    if (!name) {
        *size = strlen(n) + 1;
        RETURN(ZE_RESULT_SUCCESS);
    }
    snprintf(name, *size, "%s", n);
    RETURN(ZE_RESULT_SUCCESS);
}

/* ---------------------------------------------------------------- launches */

static void *arg_ptr(const struct zt_kernel *k, uint32_t i)
{
    void *p;
    memcpy(&p, k->args[i].bytes, sizeof p);
    return p;
}

/* Runs the fixture kernels (tests/fixtures/spirv/) on the host, as the
 * OpenCL C source says, so that a test can check data end to end. */
static ze_result_t emulate(struct zt_kernel *k, const ze_group_count_t *c)
{
    uint64_t groups = c->groupCountX;
    if (strcmp(k->name, "add_kernel") == 0 && k->entry) {
        const float *x = arg_ptr(k, 0), *y = arg_ptr(k, 1);
        float *out = arg_ptr(k, 2);
        int32_t n;
        memcpy(&n, k->args[3].bytes, 4);
        uint64_t used = n > 0 ? (uint64_t)n : 0;
        if (used > groups * 1024)
            used = groups * 1024;
        if (!used)
            return ZE_RESULT_SUCCESS;
        if (!range_ok("add_kernel x", x, used * 4, 1) || !range_ok("add_kernel y", y, used * 4, 1) ||
            !range_ok("add_kernel out", out, used * 4, 1))
            return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        for (uint64_t i = 0; i < used; i++)
            out[i] = x[i] + y[i];
        return ZE_RESULT_SUCCESS;
    }
    if (strcmp(k->name, "slm_kernel") == 0 && k->entry) {
        const float *x = arg_ptr(k, 0);
        float *out = arg_ptr(k, 1);
        int32_t n;
        float alpha;
        int64_t stride;
        memcpy(&n, k->args[2].bytes, 4);
        memcpy(&alpha, k->args[3].bytes, 4);
        memcpy(&stride, k->args[4].bytes, 8);
        if (k->args[7].size < 256 * sizeof(float)) {
            violate("slm_kernel: its local buffer holds %u bytes, the kernel uses %zu", k->args[7].size,
                    256 * sizeof(float));
            return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        }
        uint64_t used = n > 0 ? (uint64_t)n : 0;
        if (used > groups * 256)
            used = groups * 256;
        if (!used)
            return ZE_RESULT_SUCCESS;
        if (!range_ok("slm_kernel x", x, used * 4, 1) || !range_ok("slm_kernel out", out, used * 4, 1))
            return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        for (uint64_t i = 0; i < used; i++)
            out[i] = alpha * x[i] + (float)stride;
        return ZE_RESULT_SUCCESS;
    }
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zt_launch(ze_command_list_handle_t h, ze_kernel_handle_t kh, const ze_group_count_t *count,
                             ze_event_handle_t signal, uint32_t nwait, ze_event_handle_t *waits)
{
    (void)nwait;
    (void)waits;
    int kbusy = kernel_enter(kh);
    LIST_PROLOGUE(h);
    if (kbusy)
        violate("zeCommandListAppendLaunchKernel: kernel used from two threads at once");
    ze_result_t r = ZE_RESULT_SUCCESS;
    if (!is(kh, M_KERNEL)) {
        r = bad_handle(__func__);
        goto out;
    }
    struct zt_kernel *k = (struct zt_kernel *)kh;
    if ((r = inject("zeCommandListAppendLaunchKernel")))
        goto out;
    if (!count) {
        r = ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        goto out;
    }
    if (!(group_flags(l->device, l->ordinal) & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE)) {
        violate("zeCommandListAppendLaunchKernel: command queue group %u of device %u has no compute", l->ordinal,
                l->device);
        r = ZE_RESULT_ERROR_INVALID_ARGUMENT;
        goto out;
    }
    check_interleaving(k);
    if (!k->group_set) {
        violate("zeCommandListAppendLaunchKernel: kernel '%s' has no group size", k->name);
        r = ZE_RESULT_ERROR_INVALID_ARGUMENT;
        goto out;
    }
    for (uint32_t i = 0; i < k->nargs; i++)
        if (!k->args[i].set) {
            violate("zeCommandListAppendLaunchKernel: argument %u of '%s' was never set", i, k->name);
            r = ZE_RESULT_ERROR_INVALID_ARGUMENT;
            goto out;
        }
    struct zt_devdesc d;
    devdesc(l->device, &d);
    if (count->groupCountX > d.max_count[0] || count->groupCountY > d.max_count[1] ||
        count->groupCountZ > d.max_count[2]) {
        r = ZE_RESULT_ERROR_INVALID_ARGUMENT;
        goto out;
    }
    if (zt.launches < ZETEST_MAX_LAUNCHES) {
        struct zetest_launch *rec = &zt.launch[zt.launches];
        memset(rec, 0, sizeof *rec);
        rec->list = (uint64_t)(uintptr_t)h;
        rec->list_context = (uint64_t)(uintptr_t)l->ctx;
        rec->list_ordinal = l->ordinal;
        rec->list_immediate = 1;
        rec->kernel = (uint64_t)(uintptr_t)kh;
        rec->kernel_context = (uint64_t)(uintptr_t)k->mod->ctx;
        snprintf(rec->name, sizeof rec->name, "%s", k->name);
        memcpy(rec->group, k->group, sizeof rec->group);
        rec->count[0] = count->groupCountX;
        rec->count[1] = count->groupCountY;
        rec->count[2] = count->groupCountZ;
        rec->nargs = k->nargs;
        memcpy(rec->args, k->args, sizeof rec->args);
        rec->ordered = !l->pending;
    }
    zt.launches++;
    if ((r = emulate(k, count)) == ZE_RESULT_SUCCESS && zt.launches <= ZETEST_MAX_LAUNCHES)
        zt.launch[zt.launches - 1].emulated = !k->mod->native && k->entry &&
                                            (!strcmp(k->name, "add_kernel") || !strcmp(k->name, "slm_kernel"));
    if (!zt_clock_set)
        (void)clock_now();
    zt_clock += zt.ticks_per_launch;
    command(l, signal);
    k->last = (struct zt_use){l->id, l->seq};
    for (uint32_t i = 0; i < k->nargs; i++)
        if (k->args[i].size == sizeof(void *) && !k->args[i].null_value) {
            void *p;
            memcpy(&p, k->args[i].bytes, sizeof p);
            use_memory(l, p);
        }
out:
    UNLOCK();
    list_leave(h);
    kernel_leave(kh);
    return r;
}

/* ------------------------------------------------------------ dispatch */

static ze_result_t check_version(ze_api_version_t v, const void *table)
{
    if (!table)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (ZE_MAJOR_VERSION(v) != 1)
        return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;
    return ZE_RESULT_SUCCESS;
}

ze_result_t zeGetGlobalProcAddrTable(ze_api_version_t v, ze_global_dditable_t *t)
{
    ze_result_t r = check_version(v, t);
    if (r)
        return r;
    memset(t, 0, sizeof *t);
    t->pfnInit = zt_init;
    return ZE_RESULT_SUCCESS;
}

ze_result_t zeGetDriverProcAddrTable(ze_api_version_t v, ze_driver_dditable_t *t)
{
    ze_result_t r = check_version(v, t);
    if (r)
        return r;
    memset(t, 0, sizeof *t);
    t->pfnGet = zt_driver_get;
    t->pfnGetApiVersion = zt_driver_api_version;
    t->pfnGetProperties = zt_driver_props;
    t->pfnGetIpcProperties = zt_driver_ipc;
    t->pfnGetExtensionProperties = zt_driver_extensions;
    t->pfnGetExtensionFunctionAddress = zt_driver_ext_fn;
    return ZE_RESULT_SUCCESS;
}

ze_result_t zeGetDeviceProcAddrTable(ze_api_version_t v, ze_device_dditable_t *t)
{
    ze_result_t r = check_version(v, t);
    if (r)
        return r;
    memset(t, 0, sizeof *t);
    t->pfnGet = zt_device_get;
    t->pfnGetSubDevices = zt_sub_devices;
    t->pfnGetProperties = zt_device_props;
    t->pfnGetComputeProperties = zt_compute_props;
    t->pfnGetCommandQueueGroupProperties = zt_queue_groups;
    t->pfnGetMemoryProperties = zt_memory_props;
    t->pfnGetStatus = zt_device_status;
    t->pfnPciGetPropertiesExt = zt_pci_props;
    return ZE_RESULT_SUCCESS;
}

ze_result_t zeGetContextProcAddrTable(ze_api_version_t v, ze_context_dditable_t *t)
{
    ze_result_t r = check_version(v, t);
    if (r)
        return r;
    memset(t, 0, sizeof *t);
    t->pfnCreate = zt_context_create;
    t->pfnDestroy = zt_context_destroy;
    t->pfnGetStatus = zt_context_status;
    return ZE_RESULT_SUCCESS;
}

ze_result_t zeGetCommandListProcAddrTable(ze_api_version_t v, ze_command_list_dditable_t *t)
{
    ze_result_t r = check_version(v, t);
    if (r)
        return r;
    memset(t, 0, sizeof *t);
    t->pfnCreate = zt_list_create;
    t->pfnCreateImmediate = zt_list_create_immediate;
    t->pfnDestroy = zt_list_destroy;
    t->pfnAppendBarrier = zt_barrier;
    t->pfnAppendMemoryCopy = zt_copy;
    t->pfnAppendMemoryFill = zt_fill;
    t->pfnAppendWriteGlobalTimestamp = zt_timestamp;
    t->pfnAppendSignalEvent = zt_signal;
    t->pfnAppendWaitOnEvents = zt_wait_events;
    t->pfnAppendLaunchKernel = zt_launch;
    return ZE_RESULT_SUCCESS;
}

ze_result_t zeGetEventPoolProcAddrTable(ze_api_version_t v, ze_event_pool_dditable_t *t)
{
    ze_result_t r = check_version(v, t);
    if (r)
        return r;
    memset(t, 0, sizeof *t);
    t->pfnCreate = zt_pool_create;
    t->pfnDestroy = zt_pool_destroy;
    return ZE_RESULT_SUCCESS;
}

ze_result_t zeGetEventProcAddrTable(ze_api_version_t v, ze_event_dditable_t *t)
{
    ze_result_t r = check_version(v, t);
    if (r)
        return r;
    memset(t, 0, sizeof *t);
    t->pfnCreate = zt_event_create;
    t->pfnDestroy = zt_event_destroy;
    t->pfnHostSignal = zt_event_signal;
    t->pfnHostSynchronize = zt_event_sync;
    t->pfnQueryStatus = zt_event_query;
    t->pfnHostReset = zt_event_reset;
    return ZE_RESULT_SUCCESS;
}

ze_result_t zeGetModuleProcAddrTable(ze_api_version_t v, ze_module_dditable_t *t)
{
    ze_result_t r = check_version(v, t);
    if (r)
        return r;
    memset(t, 0, sizeof *t);
    t->pfnCreate = zt_module_create;
    t->pfnDestroy = zt_module_destroy;
    t->pfnDynamicLink = zt_module_link;
    t->pfnGetKernelNames = zt_kernel_names;
    t->pfnGetProperties = zt_module_props;
    return ZE_RESULT_SUCCESS;
}

ze_result_t zeGetModuleBuildLogProcAddrTable(ze_api_version_t v, ze_module_build_log_dditable_t *t)
{
    ze_result_t r = check_version(v, t);
    if (r)
        return r;
    memset(t, 0, sizeof *t);
    t->pfnDestroy = zt_log_destroy;
    t->pfnGetString = zt_log_string;
    return ZE_RESULT_SUCCESS;
}

ze_result_t zeGetKernelProcAddrTable(ze_api_version_t v, ze_kernel_dditable_t *t)
{
    ze_result_t r = check_version(v, t);
    if (r)
        return r;
    memset(t, 0, sizeof *t);
    t->pfnCreate = zt_kernel_create;
    t->pfnDestroy = zt_kernel_destroy;
    t->pfnSetGroupSize = zt_group_size;
    t->pfnSetArgumentValue = zt_set_arg;
    t->pfnGetProperties = zt_kernel_props;
    t->pfnGetName = zt_kernel_name;
    return ZE_RESULT_SUCCESS;
}

ze_result_t zeGetMemProcAddrTable(ze_api_version_t v, ze_mem_dditable_t *t)
{
    ze_result_t r = check_version(v, t);
    if (r)
        return r;
    memset(t, 0, sizeof *t);
    t->pfnAllocShared = zt_alloc_shared;
    t->pfnAllocDevice = zt_alloc_device;
    t->pfnAllocHost = zt_alloc_host;
    t->pfnFree = zt_free;
    t->pfnFreeExt = zt_free_ext;
    t->pfnGetAllocProperties = zt_alloc_props;
    t->pfnGetAddressRange = zt_address_range;
    return ZE_RESULT_SUCCESS;
}

/* Tables of features this driver does not have: present (the loader needs
 * every one) and empty. */
#define ZT_EMPTY_TABLES(X)                                                                             \
    X(zeGetDeviceExpProcAddrTable, ze_device_exp_dditable_t)                                           \
    X(zeGetCommandQueueProcAddrTable, ze_command_queue_dditable_t)                                     \
    X(zeGetImageProcAddrTable, ze_image_dditable_t)                                                    \
    X(zeGetImageExpProcAddrTable, ze_image_exp_dditable_t)                                             \
    X(zeGetFenceProcAddrTable, ze_fence_dditable_t)                                                    \
    X(zeGetEventExpProcAddrTable, ze_event_exp_dditable_t)                                             \
    X(zeGetKernelExpProcAddrTable, ze_kernel_exp_dditable_t)                                           \
    X(zeGetSamplerProcAddrTable, ze_sampler_dditable_t)                                                \
    X(zeGetPhysicalMemProcAddrTable, ze_physical_mem_dditable_t)                                       \
    X(zeGetVirtualMemProcAddrTable, ze_virtual_mem_dditable_t)                                         \
    X(zeGetFabricVertexExpProcAddrTable, ze_fabric_vertex_exp_dditable_t)                              \
    X(zeGetFabricEdgeExpProcAddrTable, ze_fabric_edge_exp_dditable_t)                                  \
    X(zetGetDeviceProcAddrTable, zet_device_dditable_t)                                                \
    X(zetGetContextProcAddrTable, zet_context_dditable_t)                                              \
    X(zetGetCommandListProcAddrTable, zet_command_list_dditable_t)                                     \
    X(zetGetModuleProcAddrTable, zet_module_dditable_t)                                                \
    X(zetGetKernelProcAddrTable, zet_kernel_dditable_t)                                                \
    X(zetGetMetricGroupProcAddrTable, zet_metric_group_dditable_t)                                     \
    X(zetGetMetricGroupExpProcAddrTable, zet_metric_group_exp_dditable_t)                              \
    X(zetGetMetricProcAddrTable, zet_metric_dditable_t)                                                \
    X(zetGetMetricStreamerProcAddrTable, zet_metric_streamer_dditable_t)                               \
    X(zetGetMetricQueryPoolProcAddrTable, zet_metric_query_pool_dditable_t)                            \
    X(zetGetMetricQueryProcAddrTable, zet_metric_query_dditable_t)                                     \
    X(zetGetTracerExpProcAddrTable, zet_tracer_exp_dditable_t)                                         \
    X(zetGetDebugProcAddrTable, zet_debug_dditable_t)                                                  \
    X(zesGetDriverProcAddrTable, zes_driver_dditable_t)                                                \
    X(zesGetDeviceProcAddrTable, zes_device_dditable_t)                                                \
    X(zesGetSchedulerProcAddrTable, zes_scheduler_dditable_t)                                          \
    X(zesGetPerformanceFactorProcAddrTable, zes_performance_factor_dditable_t)                         \
    X(zesGetPowerProcAddrTable, zes_power_dditable_t)                                                  \
    X(zesGetFrequencyProcAddrTable, zes_frequency_dditable_t)                                          \
    X(zesGetEngineProcAddrTable, zes_engine_dditable_t)                                                \
    X(zesGetStandbyProcAddrTable, zes_standby_dditable_t)                                              \
    X(zesGetFirmwareProcAddrTable, zes_firmware_dditable_t)                                            \
    X(zesGetMemoryProcAddrTable, zes_memory_dditable_t)                                                \
    X(zesGetFabricPortProcAddrTable, zes_fabric_port_dditable_t)                                       \
    X(zesGetTemperatureProcAddrTable, zes_temperature_dditable_t)                                      \
    X(zesGetPsuProcAddrTable, zes_psu_dditable_t)                                                      \
    X(zesGetFanProcAddrTable, zes_fan_dditable_t)                                                      \
    X(zesGetLedProcAddrTable, zes_led_dditable_t)                                                      \
    X(zesGetRasProcAddrTable, zes_ras_dditable_t)                                                      \
    X(zesGetDiagnosticsProcAddrTable, zes_diagnostics_dditable_t)

#define ZT_EMPTY_TABLE(fn, type)                                                                       \
    ze_result_t fn(ze_api_version_t v, type *t)                                                        \
    {                                                                                                  \
        ze_result_t r = check_version(v, t);                                                           \
        if (r)                                                                                         \
            return r;                                                                                  \
        memset(t, 0, sizeof *t);                                                                       \
        return ZE_RESULT_SUCCESS;                                                                      \
    }
ZT_EMPTY_TABLES(ZT_EMPTY_TABLE)
