/* SPDX-License-Identifier: Apache-2.0 */
/* hipdouble.c: a test double of libamdhip64, for testing drivers/hip without
 * an AMD GPU. The driver is pointed at it through [driver.hip] library.
 *
 * It exports the HIP functions the driver uses, with the real C signatures
 * (from the HIP headers when the build has ROCm 5's, see hip_decls.h), and
 * behaves as HIP documents them: return codes, out-parameters written only on
 * success, a current device per thread, modules bound to the device current
 * when they are loaded, streams and events to theirs. Device memory is host
 * memory. Code objects are read for real: the ELF note's AMDGPU metadata
 * gives the target, the kernels, their argument layout (the kernel argument
 * segment of a launch is built from kernelParams exactly as the runtime does)
 * and the values hipFuncGetAttribute reports.
 *
 * Configuration (the devices, the JIT log of a failed load), faults, call
 * counts and violations: struct hipdouble_state (hipdouble.h), set by the
 * test in-process through tests/doubles/double.h.
 *
 * Built twice: HIPDOUBLE_ROCM=6 exports everything; HIPDOUBLE_ROCM=5 only
 * what ROCm 5.2 exports (no hipGetDevicePropertiesR0600,
 * hipModuleLaunchCooperativeKernel or hipDrvLaunchKernelEx).
 *
 * Misuse real HIP would crash on or silently mishandle (a kernel launched on
 * a device other than its module's, a function looked up with another device
 * current, a module unloaded while launches of it are queued) is refused or
 * recorded as a violation the tests check. A launch stays queued until a
 * synchronize covers it: hipStreamSynchronize of its stream,
 * hipEventSynchronize of an event recorded after it there, and
 * hipDeviceSynchronize or hipFree (which synchronizes implicitly) on its
 * device. */
#include <elf.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/hip/hip_decls.h"
#include "tests/hip/hipdouble.h"

#ifndef HIPDOUBLE_ROCM
#define HIPDOUBLE_ROCM 6
#endif
#ifndef EM_AMDGPU
#define EM_AMDGPU 224
#endif
#define NT_AMDGPU_METADATA 32

#define HD_EXPORT __attribute__((visibility("default")))
#define HD_MAX_DEVICES 8

/* ------------------------------------------------------------------ state */

struct hd_device {
    char arch[64];      /* gcnArchName */
    char name[96];
    char pci[32];
    int warp, cus, threads, shared, optin, coop, cluster, uuid;
    uint64_t memory, used;
};

struct hd_alloc {
    char *base;
    size_t size;
    int device;
    struct hd_alloc *next;
};

struct hd_stream {
    int device;
    unsigned flags;
    int capturing;      /* between hipStreamBeginCapture and hipStreamEndCapture */
    struct hd_stream *next;
};

struct hd_event {
    int device;
    unsigned flags;
    int recorded;
    double stamp_ms;
    uint64_t seq;       /* the launches queued before it when recorded */
    hipStream_t stream;
    struct hd_event *next;
};

struct hd_module;

/* A launch not yet covered by a synchronize. */
struct hd_pending {
    const struct hd_module *module;
    int device;
    hipStream_t stream;
    uint64_t seq;
};

#define HD_MAX_PENDING 1024

struct hd_kernel {
    char name[128];
    unsigned nargs; /* explicit arguments (not hidden_*) */
    unsigned offset[HIPDOUBLE_MAX_ARGS], size[HIPDOUBLE_MAX_ARGS];
    unsigned kernarg_size, max_threads, private_size, group_size, vgprs, wavefront;
    struct hd_module *module;
};

struct hd_module {
    int device;
    char target[64]; /* the processor of amdhsa.target: "gfx942" */
    unsigned nkernels;
    struct hd_kernel *kernels;
    struct hd_module *next;
};

#define HD_MAX_LAUNCHES 4096

static struct hipdouble_state st; /* its common.lock guards hd too */
static struct {
    int ndevices;
    struct hd_device devices[HD_MAX_DEVICES];
    struct hd_alloc *allocs;
    struct hd_stream *streams;
    struct hd_event *events;
    struct hd_module *modules;
    struct hipdouble_launch *launches;
    unsigned nlaunches;
    struct hd_pending pending[HD_MAX_PENDING];
    unsigned npending;
    uint64_t seq; /* launches so far */
} hd;

/* Completes the queued launches of device `device` (-1: any) and stream `stream` (all_streams: any) up to seq;
 * called with the lock held. */
static void pending_done(int device, hipStream_t stream, int all_streams, uint64_t upto)
{
    unsigned kept = 0;
    for (unsigned i = 0; i < hd.npending; i++) {
        const struct hd_pending *p = &hd.pending[i];
        if (!((device < 0 || p->device == device) && (all_streams || p->stream == stream) && p->seq <= upto))
            hd.pending[kept++] = *p;
    }
    hd.npending = kept;
}

static _Thread_local int hd_current; /* HIP's current device: 0 for a new thread */

static void lock(void)
{
    pthread_mutex_lock(&st.common.lock);
}

static void unlock(void)
{
    pthread_mutex_unlock(&st.common.lock);
}

/* A breach of HIP's rules; the caller holds the lock. */
#define violation(...) trd_double_violation_locked(&st.common, __VA_ARGS__)

/* Counts the call; returns the code a fault injects for it, or hipSuccess. */
static hipError_t enter(const char *fn)
{
    return (hipError_t)trd_double_enter(&st.common, fn);
}

#define ENTER(fn)                                                                                    \
    do {                                                                                             \
        hipError_t injected_ = enter(fn);                                                            \
        if (injected_ != hipSuccess)                                                                 \
            return injected_;                                                                        \
    } while (0)

static int valid_device(int d)
{
    return d >= 0 && d < hd.ndevices;
}

static int handle_device(hipDevice_t h)
{
    int d = h - HIPDOUBLE_HANDLE(0);
    return valid_device(d) ? d : -1;
}

static struct hd_stream *find_stream(hipStream_t s)
{
    for (struct hd_stream *p = hd.streams; p; p = p->next)
        if ((hipStream_t)p == s)
            return p;
    return NULL;
}

static struct hd_event *find_event(hipEvent_t e)
{
    for (struct hd_event *p = hd.events; p; p = p->next)
        if ((hipEvent_t)p == e)
            return p;
    return NULL;
}

static struct hd_module *find_module(hipModule_t m)
{
    for (struct hd_module *p = hd.modules; p; p = p->next)
        if ((hipModule_t)p == m)
            return p;
    return NULL;
}

static struct hd_kernel *find_function(hipFunction_t f)
{
    for (struct hd_module *p = hd.modules; p; p = p->next)
        for (unsigned k = 0; k < p->nkernels; k++)
            if ((hipFunction_t)&p->kernels[k] == f)
                return &p->kernels[k];
    return NULL;
}

/* The allocation holding [p, p + size), or NULL. */
static struct hd_alloc *find_alloc(const void *p, size_t size)
{
    const char *c = p;
    for (struct hd_alloc *a = hd.allocs; a; a = a->next)
        if (c >= a->base && c < a->base + a->size)
            return size <= (size_t)(a->base + a->size - c) ? a : NULL;
    return NULL;
}

/* ------------------------------------------------------------- the config */

static void parse_device(char *spec, int i)
{
    struct hd_device *d = &hd.devices[i];
    memset(d, 0, sizeof *d);
    d->memory = HIPDOUBLE_MEMORY(i);
    d->shared = d->optin = HIPDOUBLE_SHARED;
    d->threads = HIPDOUBLE_THREADS;
    d->uuid = 1;
    snprintf(d->pci, sizeof d->pci, "0000:%02x:00.0", HIPDOUBLE_PCI_BUS(i));
    char *save = NULL;
    char *tok = strtok_r(spec, "/", &save);
    snprintf(d->arch, sizeof d->arch, "%s", tok ? tok : "gfx942");
    tok = strtok_r(NULL, "/", &save);
    d->warp = tok ? atoi(tok) : 64;
    tok = strtok_r(NULL, "/", &save);
    d->cus = tok ? atoi(tok) : 304;
    while ((tok = strtok_r(NULL, "/", &save))) {
        if (strcmp(tok, "coop") == 0)
            d->coop = 1;
        else if (strcmp(tok, "cluster") == 0)
            d->cluster = 1;
        else if (strcmp(tok, "nouuid") == 0)
            d->uuid = 0;
        else if (strncmp(tok, "mem=", 4) == 0)
            d->memory = strtoull(tok + 4, NULL, 0);
        else if (strncmp(tok, "shared=", 7) == 0)
            d->shared = atoi(tok + 7);
        else if (strncmp(tok, "optin=", 6) == 0)
            d->optin = atoi(tok + 6);
        else if (strncmp(tok, "threads=", 8) == 0)
            d->threads = atoi(tok + 8);
        else if (strncmp(tok, "pci=", 4) == 0)
            snprintf(d->pci, sizeof d->pci, "%s", tok + 4);
    }
    char base[sizeof d->arch];
    snprintf(base, sizeof base, "%.*s", (int)strcspn(d->arch, ":"), d->arch);
    snprintf(d->name, sizeof d->name, "hipdouble %s #%d", base, i);
}

static void configure(void)
{
    char buf[sizeof st.devices];
    snprintf(buf, sizeof buf, "%s", st.devices);
    hd.ndevices = 0;
    char *save = NULL;
    for (char *spec = strtok_r(buf, ",", &save); spec && hd.ndevices < HD_MAX_DEVICES;
         spec = strtok_r(NULL, ",", &save))
        parse_device(spec, hd.ndevices++);
}

/* ------------------------------------------------------ code object reader */

/* A minimal MessagePack reader for the AMDGPU metadata note. */
struct mp {
    const uint8_t *p, *end;
    int bad;
};

enum { MP_NIL, MP_BOOL, MP_INT, MP_STR, MP_ARRAY, MP_MAP, MP_OTHER };

struct mp_val {
    int type;
    int64_t i;
    const char *s;
    uint32_t len;
};

static uint64_t mp_be(struct mp *r, unsigned n)
{
    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = 1;
        return 0;
    }
    uint64_t v = 0;
    for (unsigned k = 0; k < n; k++)
        v = v << 8 | *r->p++;
    return v;
}

static void mp_bytes(struct mp *r, uint64_t n, const char **s)
{
    if (r->bad || (uint64_t)(r->end - r->p) < n) {
        r->bad = 1;
        return;
    }
    *s = (const char *)r->p;
    r->p += n;
}

static void mp_next(struct mp *r, struct mp_val *v)
{
    memset(v, 0, sizeof *v);
    v->type = MP_OTHER;
    unsigned c = (unsigned)mp_be(r, 1);
    if (r->bad)
        return;
    const char *ignored;
    if (c <= 0x7f || c >= 0xe0) {
        v->type = MP_INT;
        v->i = c <= 0x7f ? (int64_t)c : (int64_t)(int8_t)c;
    } else if ((c & 0xf0) == 0x80 || c == 0xde || c == 0xdf) {
        v->type = MP_MAP;
        v->len = (c & 0xf0) == 0x80 ? (c & 0x0f) : (uint32_t)mp_be(r, c == 0xde ? 2 : 4);
    } else if ((c & 0xf0) == 0x90 || c == 0xdc || c == 0xdd) {
        v->type = MP_ARRAY;
        v->len = (c & 0xf0) == 0x90 ? (c & 0x0f) : (uint32_t)mp_be(r, c == 0xdc ? 2 : 4);
    } else if ((c & 0xe0) == 0xa0 || (c >= 0xd9 && c <= 0xdb)) {
        v->type = MP_STR;
        v->len = (c & 0xe0) == 0xa0 ? (c & 0x1f) : (uint32_t)mp_be(r, c == 0xd9 ? 1 : c == 0xda ? 2 : 4);
        mp_bytes(r, v->len, &v->s);
    } else if (c == 0xc0) {
        v->type = MP_NIL;
    } else if (c == 0xc2 || c == 0xc3) {
        v->type = MP_BOOL;
        v->i = c == 0xc3;
    } else if (c >= 0xcc && c <= 0xcf) {
        v->type = MP_INT;
        v->i = (int64_t)mp_be(r, 1u << (c - 0xcc));
    } else if (c >= 0xd0 && c <= 0xd3) {
        unsigned n = 1u << (c - 0xd0);
        uint64_t u = mp_be(r, n);
        v->type = MP_INT;
        v->i = n == 8 ? (int64_t)u : (int64_t)(u ^ (UINT64_C(1) << (8 * n - 1))) - (INT64_C(1) << (8 * n - 1));
    } else if (c == 0xca || c == 0xcb) {
        mp_be(r, c == 0xca ? 4 : 8);
    } else if (c >= 0xc4 && c <= 0xc6) {
        mp_bytes(r, mp_be(r, 1u << (c - 0xc4)), &ignored);
    } else if (c >= 0xd4 && c <= 0xd8) {
        mp_bytes(r, 1 + (1u << (c - 0xd4)), &ignored);
    } else if (c >= 0xc7 && c <= 0xc9) {
        mp_bytes(r, 1 + mp_be(r, 1u << (c - 0xc7)), &ignored);
    } else {
        r->bad = 1;
    }
}

static void mp_skip(struct mp *r, int depth)
{
    struct mp_val v;
    mp_next(r, &v);
    if (depth > 32) {
        r->bad = 1;
        return;
    }
    uint64_t items = v.type == MP_ARRAY ? v.len : v.type == MP_MAP ? 2ull * v.len : 0;
    for (uint64_t k = 0; k < items && !r->bad; k++)
        mp_skip(r, depth + 1);
}

static int mp_key(const struct mp_val *k, const char *name)
{
    return k->type == MP_STR && k->len == strlen(name) && memcmp(k->s, name, k->len) == 0;
}

static int mp_uint(struct mp *r, unsigned *out)
{
    struct mp_val v;
    mp_next(r, &v);
    if (v.type != MP_INT || v.i < 0 || v.i > UINT32_MAX)
        return 0;
    *out = (unsigned)v.i;
    return 1;
}

static int read_arg(struct mp *r, struct hd_kernel *k)
{
    struct mp_val m, key, val;
    mp_next(r, &m);
    if (m.type != MP_MAP)
        return 0;
    unsigned offset = 0, size = 0;
    int hidden = 0;
    for (uint32_t i = 0; i < m.len && !r->bad; i++) {
        mp_next(r, &key);
        if (mp_key(&key, ".offset")) {
            if (!mp_uint(r, &offset))
                return 0;
        } else if (mp_key(&key, ".size")) {
            if (!mp_uint(r, &size))
                return 0;
        } else if (mp_key(&key, ".value_kind")) {
            mp_next(r, &val);
            hidden = val.type == MP_STR && val.len > 7 && memcmp(val.s, "hidden_", 7) == 0;
        } else {
            mp_skip(r, 0);
        }
    }
    if (hidden)
        return 1; /* filled by the runtime, not from kernelParams */
    if (k->nargs >= HIPDOUBLE_MAX_ARGS || size == 0 || offset + size > HIPDOUBLE_KERNARG_BYTES)
        return 0;
    k->offset[k->nargs] = offset;
    k->size[k->nargs] = size;
    k->nargs++;
    return 1;
}

static int read_kernel(struct mp *r, struct hd_kernel *k)
{
    struct mp_val m, key, val;
    mp_next(r, &m);
    if (m.type != MP_MAP)
        return 0;
    for (uint32_t i = 0; i < m.len && !r->bad; i++) {
        mp_next(r, &key);
        if (mp_key(&key, ".name")) {
            mp_next(r, &val);
            if (val.type != MP_STR || val.len >= sizeof k->name)
                return 0;
            memcpy(k->name, val.s, val.len);
            k->name[val.len] = '\0';
        } else if (mp_key(&key, ".args")) {
            mp_next(r, &val);
            if (val.type != MP_ARRAY)
                return 0;
            for (uint32_t a = 0; a < val.len; a++)
                if (!read_arg(r, k))
                    return 0;
        } else if (mp_key(&key, ".kernarg_segment_size")) {
            if (!mp_uint(r, &k->kernarg_size))
                return 0;
        } else if (mp_key(&key, ".max_flat_workgroup_size")) {
            if (!mp_uint(r, &k->max_threads))
                return 0;
        } else if (mp_key(&key, ".private_segment_fixed_size")) {
            if (!mp_uint(r, &k->private_size))
                return 0;
        } else if (mp_key(&key, ".group_segment_fixed_size")) {
            if (!mp_uint(r, &k->group_size))
                return 0;
        } else if (mp_key(&key, ".vgpr_count")) {
            if (!mp_uint(r, &k->vgprs))
                return 0;
        } else if (mp_key(&key, ".wavefront_size")) {
            if (!mp_uint(r, &k->wavefront))
                return 0;
        } else {
            mp_skip(r, 0);
        }
    }
    return k->name[0] && k->max_threads && k->kernarg_size <= HIPDOUBLE_KERNARG_BYTES;
}

static int read_metadata(const uint8_t *p, size_t n, struct hd_module *m)
{
    struct mp r = {p, p + n, 0};
    struct mp_val top, key, val;
    mp_next(&r, &top);
    if (top.type != MP_MAP)
        return 0;
    for (uint32_t i = 0; i < top.len && !r.bad; i++) {
        mp_next(&r, &key);
        if (mp_key(&key, "amdhsa.target")) {
            mp_next(&r, &val);
            /* "amdgcn-amd-amdhsa--gfx942[:features]" */
            const char *dash = val.type == MP_STR ? memchr(val.s, '-', val.len) : NULL;
            size_t pre = strlen("amdgcn-amd-amdhsa--");
            if (!dash || val.len <= pre || memcmp(val.s, "amdgcn-amd-amdhsa--", pre) != 0)
                return 0;
            size_t len = val.len - pre;
            const char *colon = memchr(val.s + pre, ':', len);
            if (colon)
                len = (size_t)(colon - (val.s + pre));
            if (len >= sizeof m->target)
                return 0;
            memcpy(m->target, val.s + pre, len);
            m->target[len] = '\0';
        } else if (mp_key(&key, "amdhsa.kernels")) {
            mp_next(&r, &val);
            if (val.type != MP_ARRAY || val.len == 0 || val.len > 64)
                return 0;
            m->kernels = calloc(val.len, sizeof *m->kernels);
            if (!m->kernels)
                return 0;
            m->nkernels = val.len;
            for (uint32_t k = 0; k < val.len; k++) {
                m->kernels[k].module = m;
                if (!read_kernel(&r, &m->kernels[k]))
                    return 0;
            }
        } else {
            mp_skip(&r, 0);
        }
    }
    return !r.bad && m->target[0] && m->nkernels;
}

/* Reads an AMDGPU code object: 1 when it is one, with its metadata. Like
 * HIP, it learns the image's size from the ELF headers. */
static int read_code_object(const void *image, struct hd_module *m)
{
    const uint8_t *b = image;
    Elf64_Ehdr eh;
    memcpy(&eh, b, sizeof eh);
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_machine != EM_AMDGPU || eh.e_shentsize != sizeof(Elf64_Shdr) ||
        eh.e_shoff == 0 || eh.e_shnum == 0 || eh.e_shoff > (64u << 20))
        return 0;
    for (unsigned s = 0; s < eh.e_shnum; s++) {
        Elf64_Shdr sh;
        memcpy(&sh, b + eh.e_shoff + (size_t)s * sizeof sh, sizeof sh);
        if (sh.sh_type != SHT_NOTE || sh.sh_offset > (64u << 20) || sh.sh_size > (1u << 20))
            continue;
        const uint8_t *p = b + sh.sh_offset, *end = p + sh.sh_size;
        while ((size_t)(end - p) >= sizeof(Elf64_Nhdr)) {
            Elf64_Nhdr nh;
            memcpy(&nh, p, sizeof nh);
            size_t name_at = sizeof nh, desc_at = name_at + ((nh.n_namesz + 3u) & ~3u);
            size_t next = desc_at + ((nh.n_descsz + 3u) & ~3u);
            if (next > (size_t)(end - p))
                break;
            if (nh.n_type == NT_AMDGPU_METADATA && nh.n_namesz == 7 && memcmp(p + name_at, "AMDGPU", 7) == 0)
                return read_metadata(p + desc_at, nh.n_descsz, m);
            p += next;
        }
    }
    return 0;
}

static void module_free(struct hd_module *m)
{
    free(m->kernels);
    free(m);
}

/* --------------------------------------------------------------- devices */

HD_EXPORT hipError_t hipInit(unsigned int flags)
{
    ENTER("hipInit");
    if (flags != 0)
        return hipErrorInvalidValue;
    lock();
    configure();
    int n = hd.ndevices;
    unlock();
    return n ? hipSuccess : hipErrorInvalidDevice; /* ROCm without a GPU */
}

HD_EXPORT hipError_t hipRuntimeGetVersion(int *version)
{
    ENTER("hipRuntimeGetVersion");
    if (!version)
        return hipErrorInvalidValue;
    *version = HIPDOUBLE_ROCM >= 6 ? 60342134 : 50221153;
    return hipSuccess;
}

HD_EXPORT hipError_t hipGetDeviceCount(int *count)
{
    ENTER("hipGetDeviceCount");
    if (!count)
        return hipErrorInvalidValue;
    lock();
    *count = hd.ndevices; /* ROCm writes 0 and fails when there is none */
    int n = hd.ndevices;
    unlock();
    return n ? hipSuccess : hipErrorNoDevice;
}

HD_EXPORT hipError_t hipDeviceGet(hipDevice_t *device, int ordinal)
{
    ENTER("hipDeviceGet");
    if (!device)
        return hipErrorInvalidValue;
    lock();
    int ok = valid_device(ordinal);
    unlock();
    if (!ok)
        return hipErrorInvalidDevice;
    *device = HIPDOUBLE_HANDLE(ordinal);
    return hipSuccess;
}

HD_EXPORT hipError_t hipDeviceGetName(char *name, int len, hipDevice_t device)
{
    ENTER("hipDeviceGetName");
    if (!name || len <= 0)
        return hipErrorInvalidValue;
    lock();
    int d = handle_device(device);
    if (d >= 0)
        snprintf(name, (size_t)len, "%s", hd.devices[d].name);
    unlock();
    return d >= 0 ? hipSuccess : hipErrorInvalidDevice;
}

static int pci_part(const char *pci, int which)
{
    unsigned v[4] = {0, 0, 0, 0};
    sscanf(pci, "%x:%x:%x.%x", &v[0], &v[1], &v[2], &v[3]);
    return (int)v[which];
}

HD_EXPORT hipError_t hipDeviceGetAttribute(int *value, hipDeviceAttribute_t attr, int device)
{
    ENTER("hipDeviceGetAttribute");
    if (!value)
        return hipErrorInvalidValue;
    lock();
    if (!valid_device(device)) {
        unlock();
        return hipErrorInvalidDevice;
    }
    const struct hd_device *d = &hd.devices[device];
    int v, ok = 1;
    switch ((int)attr) {
    case hipDeviceAttributeCooperativeLaunch: v = d->coop; break;
    case hipDeviceAttributeComputeCapabilityMajor: v = atoi(d->arch + 3) / 100; break;
    case hipDeviceAttributeComputeCapabilityMinor: v = atoi(d->arch + 3) % 100 / 10; break;
    case hipDeviceAttributeMaxThreadsPerBlock: v = d->threads; break;
    case hipDeviceAttributeMultiprocessorCount: v = d->cus; break;
    case hipDeviceAttributePciBusId: v = pci_part(d->pci, 1); break;
    case hipDeviceAttributePciDeviceId: v = pci_part(d->pci, 2); break;
    case hipDeviceAttributePciDomainID: v = pci_part(d->pci, 0); break;
    case hipDeviceAttributeMaxSharedMemoryPerBlock: v = d->shared; break;
    case hipDeviceAttributeSharedMemPerBlockOptin: v = d->optin; break;
    case hipDeviceAttributeWarpSize: v = d->warp; break;
    default: ok = 0; v = 0; break;
    }
    unlock();
    if (!ok)
        return hipErrorInvalidValue;
    *value = v;
    return hipSuccess;
}

HD_EXPORT hipError_t hipDeviceTotalMem(size_t *bytes, hipDevice_t device)
{
    ENTER("hipDeviceTotalMem");
    if (!bytes)
        return hipErrorInvalidValue;
    lock();
    int d = handle_device(device);
    if (d >= 0)
        *bytes = (size_t)hd.devices[d].memory;
    unlock();
    return d >= 0 ? hipSuccess : hipErrorInvalidDevice;
}

HD_EXPORT hipError_t hipDeviceGetPCIBusId(char *pciBusId, int len, int device)
{
    ENTER("hipDeviceGetPCIBusId");
    if (!pciBusId || len < 13) /* "dddd:bb:dd.f" and its NUL */
        return hipErrorInvalidValue;
    lock();
    int ok = valid_device(device);
    if (ok)
        snprintf(pciBusId, (size_t)len, "%s", hd.devices[device].pci);
    unlock();
    return ok ? hipSuccess : hipErrorInvalidDevice;
}

HD_EXPORT hipError_t hipDeviceGetUuid(hipUUID *uuid, hipDevice_t device)
{
    ENTER("hipDeviceGetUuid");
    if (!uuid)
        return hipErrorInvalidValue;
    lock();
    int d = handle_device(device);
    if (d >= 0)
        for (int k = 0; k < 16; k++)
            uuid->bytes[k] = hd.devices[d].uuid ? (char)HIPDOUBLE_UUID_BYTE(d, k) : 0;
    unlock();
    return d >= 0 ? hipSuccess : hipErrorInvalidDevice;
}

/* Both layouts carry the same facts. */
#define FILL_PROPS(p, d)                                                                             \
    do {                                                                                             \
        snprintf((p)->name, sizeof (p)->name, "%s", (d)->name);                                      \
        (p)->totalGlobalMem = (size_t)(d)->memory;                                                   \
        (p)->sharedMemPerBlock = (size_t)(d)->shared;                                                \
        (p)->warpSize = (d)->warp;                                                                   \
        (p)->maxThreadsPerBlock = (d)->threads;                                                      \
        (p)->multiProcessorCount = (d)->cus;                                                         \
        (p)->pciDomainID = pci_part((d)->pci, 0);                                                    \
        (p)->pciBusID = pci_part((d)->pci, 1);                                                       \
        (p)->pciDeviceID = pci_part((d)->pci, 2);                                                    \
        (p)->cooperativeLaunch = (d)->coop;                                                          \
        snprintf((p)->gcnArchName, sizeof (p)->gcnArchName, "%s", (d)->arch);                        \
    } while (0)

HD_EXPORT hipError_t hipGetDeviceProperties(hd_props_r0000 *prop, int device)
{
    ENTER("hipGetDeviceProperties");
    if (!prop)
        return hipErrorInvalidValue;
    lock();
    int ok = valid_device(device);
    if (ok) {
        memset(prop, 0, sizeof *prop);
        FILL_PROPS(prop, &hd.devices[device]);
    }
    unlock();
    return ok ? hipSuccess : hipErrorInvalidDevice;
}

#if HIPDOUBLE_ROCM >= 6
hipError_t hipGetDevicePropertiesR0600(hd_props_r0600 *prop, int device);
HD_EXPORT hipError_t hipGetDevicePropertiesR0600(hd_props_r0600 *prop, int device)
{
    ENTER("hipGetDevicePropertiesR0600");
    if (!prop)
        return hipErrorInvalidValue;
    lock();
    int ok = valid_device(device);
    if (ok) {
        const struct hd_device *d = &hd.devices[device];
        memset(prop, 0, sizeof *prop);
        FILL_PROPS(prop, d);
        prop->sharedMemPerBlockOptin = (size_t)d->optin;
        prop->clusterLaunch = d->cluster;
        for (int k = 0; k < 16; k++)
            prop->uuid.bytes[k] = d->uuid ? (char)HIPDOUBLE_UUID_BYTE(device, k) : 0;
    }
    unlock();
    return ok ? hipSuccess : hipErrorInvalidDevice;
}
#endif

HD_EXPORT hipError_t hipSetDevice(int device)
{
    ENTER("hipSetDevice");
    lock();
    int ok = valid_device(device);
    unlock();
    if (!ok)
        return hipErrorInvalidDevice;
    hd_current = device;
    return hipSuccess;
}

HD_EXPORT hipError_t hipGetDevice(int *device)
{
    ENTER("hipGetDevice");
    if (!device)
        return hipErrorInvalidValue;
    *device = hd_current;
    return hipSuccess;
}

HD_EXPORT hipError_t hipDeviceSynchronize(void)
{
    ENTER("hipDeviceSynchronize");
    lock();
    pending_done(hd_current, NULL, 1, UINT64_MAX);
    unlock();
    return hipSuccess;
}

static const struct {
    int code;
    const char *name;
} error_names[] = {
    {0, "hipSuccess"}, {1, "hipErrorInvalidValue"}, {2, "hipErrorOutOfMemory"},
    {3, "hipErrorNotInitialized"}, {35, "hipErrorInsufficientDriver"}, {9, "hipErrorInvalidConfiguration"}, {21, "hipErrorInvalidMemcpyDirection"},
    {100, "hipErrorNoDevice"}, {101, "hipErrorInvalidDevice"}, {200, "hipErrorInvalidImage"},
    {201, "hipErrorInvalidContext"}, {209, "hipErrorNoBinaryForGpu"}, {218, "hipErrorInvalidKernelFile"},
    {400, "hipErrorInvalidHandle"}, {500, "hipErrorNotFound"}, {600, "hipErrorNotReady"},
    {700, "hipErrorIllegalAddress"}, {701, "hipErrorLaunchOutOfResources"}, {710, "hipErrorAssert"},
    {719, "hipErrorLaunchFailure"}, {720, "hipErrorCooperativeLaunchTooLarge"},
    {801, "hipErrorNotSupported"}, {1054, "hipErrorInvalidClusterSize"},
};

HD_EXPORT const char *hipGetErrorName(hipError_t error)
{
    enter("hipGetErrorName");
    for (size_t i = 0; i < sizeof error_names / sizeof *error_names; i++)
        if (error_names[i].code == (int)error)
            return error_names[i].name;
    return "hipErrorUnknown";
}

HD_EXPORT const char *hipGetErrorString(hipError_t error)
{
    enter("hipGetErrorString");
    switch ((int)error) {
    case 0: return "no error";
    case 2: return "out of memory";
    case 100: return "no ROCm-capable device is detected";
    case 101: return "invalid device ordinal";
    case 200: return "device kernel image is invalid";
    case 209: return "no kernel image is available for execution on the device";
    case 500: return "named symbol not found";
    case 801: return "operation not supported";
    default: return hipGetErrorName(error); /* as ROCm 5 does for every code */
    }
}

/* ---------------------------------------------------------------- modules */

HD_EXPORT hipError_t hipModuleLoadDataEx(hipModule_t *module, const void *image, unsigned int numOptions,
                                         hipJitOption *options, void **optionValues)
{
    hipError_t injected = enter("hipModuleLoadDataEx");
    if (!module || !image || (numOptions && (!options || !optionValues)))
        return hipErrorInvalidValue;
    char *errlog = NULL;
    size_t errcap = 0;
    for (unsigned i = 0; i < numOptions; i++) {
        int o = (int)options[i];
        if (o < 0 || o >= hipJitOptionNumOptions)
            return hipErrorInvalidValue;
        if (o == hipJitOptionErrorLogBuffer)
            errlog = optionValues[i];
        else if (o == hipJitOptionErrorLogBufferSizeBytes)
            errcap = (size_t)(uintptr_t)optionValues[i];
    }
    lock();
    const char *log = st.jit_log;
    unlock();
    if (injected != hipSuccess) {
        if (log && errlog && errcap > 0)
            snprintf(errlog, errcap, "%s", log);
        return injected;
    }
    struct hd_module *m = calloc(1, sizeof *m);
    if (!m)
        return hipErrorOutOfMemory;
    m->device = hd_current;
    hipError_t e = hipSuccess;
    char why[256] = "";
    lock();
    if (!valid_device(m->device)) {
        e = hipErrorInvalidDevice;
    } else if (!read_code_object(image, m)) {
        e = hipErrorInvalidImage;
        snprintf(why, sizeof why, "not an AMDGPU code object");
    } else {
        const struct hd_device *d = &hd.devices[m->device];
        size_t n = strcspn(d->arch, ":");
        if (strlen(m->target) != n || strncmp(m->target, d->arch, n) != 0) {
            e = hipErrorNoBinaryForGpu;
            snprintf(why, sizeof why, "the code object is for %s, device %d is %.*s", m->target, m->device, (int)n,
                     d->arch);
        }
    }
    if (e == hipSuccess) {
        m->next = hd.modules;
        hd.modules = m;
    }
    unlock();
    if (e != hipSuccess) {
        module_free(m);
        if (log && errlog && errcap > 0)
            snprintf(errlog, errcap, "%s%s%s", log, *why ? ": " : "", why);
        return e;
    }
    *module = (hipModule_t)m;
    return hipSuccess;
}

HD_EXPORT hipError_t hipModuleUnload(hipModule_t module)
{
    ENTER("hipModuleUnload");
    lock();
    struct hd_module **pp = &hd.modules;
    while (*pp && (hipModule_t)*pp != module)
        pp = &(*pp)->next;
    struct hd_module *m = *pp;
    if (m)
        *pp = m->next;
    unsigned queued = 0, kept = 0;
    for (unsigned i = 0; m && i < hd.npending; i++) {
        if (hd.pending[i].module == m)
            queued++;
        else
            hd.pending[kept++] = hd.pending[i];
    }
    if (m)
        hd.npending = kept;
    unlock();
    if (!m)
        return hipErrorInvalidHandle;
    if (queued) /* the lock released: the logging one */
        trd_double_violation(&st.common, "hipModuleUnload: %u launches of its kernels are still queued (not yet synchronized)", queued);
    module_free(m);
    return hipSuccess;
}

HD_EXPORT hipError_t hipModuleGetFunction(hipFunction_t *function, hipModule_t module, const char *kname)
{
    ENTER("hipModuleGetFunction");
    if (!function || !kname)
        return hipErrorInvalidValue;
    lock();
    struct hd_module *m = find_module(module);
    hipError_t e = hipErrorNotFound;
    if (!m) {
        e = hipErrorInvalidHandle;
    } else if (m->device != hd_current) {
        /* ROCm aborts: "Device mismatch from where this module is loaded" */
        violation("hipModuleGetFunction('%s') with device %d current, its module loaded on device %d", kname,
                  hd_current, m->device);
        e = hipErrorInvalidDevice;
    } else {
        for (unsigned k = 0; k < m->nkernels; k++)
            if (strcmp(m->kernels[k].name, kname) == 0) {
                *function = (hipFunction_t)&m->kernels[k];
                e = hipSuccess;
            }
    }
    unlock();
    return e;
}

HD_EXPORT hipError_t hipFuncGetAttribute(int *value, hipFunction_attribute attrib, hipFunction_t hfunc)
{
    ENTER("hipFuncGetAttribute");
    if (!value)
        return hipErrorInvalidValue;
    lock();
    struct hd_kernel *k = find_function(hfunc);
    int v = 0;
    hipError_t e = hipSuccess;
    if (!k)
        e = hipErrorInvalidHandle;
    else if ((int)attrib == HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
        v = (int)k->max_threads;
    else if ((int)attrib == HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)
        v = (int)k->group_size;
    else if ((int)attrib == HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)
        v = (int)k->private_size;
    else if ((int)attrib == HIP_FUNC_ATTRIBUTE_NUM_REGS)
        v = (int)k->vgprs; /* ROCm reports the VGPRs */
    else if ((int)attrib < 0 || (int)attrib >= HIP_FUNC_ATTRIBUTE_MAX)
        e = hipErrorInvalidValue;
    unlock();
    if (e == hipSuccess)
        *value = v;
    return e;
}

/* ---------------------------------------------------------------- launches */

/* Checks and records one launch; called with the lock held. */
static hipError_t launch(const char *api, hipFunction_t f, const unsigned grid[3], const unsigned block[3],
                         unsigned shared, hipStream_t stream, void **params, void **extra, const unsigned cluster[3],
                         int cooperative)
{
    struct hd_kernel *k = find_function(f);
    if (!k)
        return hipErrorInvalidHandle;
    int device = hd_current;
    if (stream) {
        struct hd_stream *s = find_stream(stream);
        if (!s)
            return hipErrorInvalidHandle;
        device = s->device;
    }
    if (k->module->device != device) {
        violation("%s of '%s' on device %d, its module loaded on device %d", api, k->name, device,
                  k->module->device);
        return hipErrorInvalidDevice;
    }
    const struct hd_device *d = &hd.devices[device];
    if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0 || block[0] == 0 || block[1] == 0 || block[2] == 0)
        return hipErrorInvalidValue;
    uint64_t threads = (uint64_t)block[0] * block[1] * block[2];
    if (threads > (uint64_t)d->threads || threads > k->max_threads)
        return hipErrorInvalidConfiguration;
    for (int i = 0; i < 3; i++) /* "gridDim x blockDim >= 2^32 is not supported" */
        if ((uint64_t)grid[i] * block[i] >= (UINT64_C(1) << 32))
            return hipErrorInvalidConfiguration;
    if ((uint64_t)shared + k->group_size > (uint64_t)d->optin)
        return hipErrorInvalidValue;
    if ((params && extra) || (!params && !extra && k->nargs))
        return hipErrorInvalidValue;
    if (extra)
        return hipErrorNotSupported; /* the double takes kernelParams only */
    if (cooperative) {
        if (!d->coop)
            return hipErrorNotSupported;
        uint64_t resident = (uint64_t)d->cus * (2048 / threads ? 2048 / threads : 1);
        if ((uint64_t)grid[0] * grid[1] * grid[2] > resident)
            return hipErrorCooperativeLaunchTooLarge;
    }
    hd.seq++;
    if (hd.npending < HD_MAX_PENDING)
        hd.pending[hd.npending++] = (struct hd_pending){k->module, device, stream, hd.seq};
    if (st.nlaunches >= HD_MAX_LAUNCHES)
        return hipSuccess; /* runs, unrecorded */
    if (!hd.launches && !(hd.launches = calloc(HD_MAX_LAUNCHES, sizeof *hd.launches)))
        return hipErrorOutOfMemory;
    struct hipdouble_launch *l = &hd.launches[st.nlaunches++];
    memset(l, 0, sizeof *l);
    snprintf(l->api, sizeof l->api, "%s", api);
    snprintf(l->kernel, sizeof l->kernel, "%s", k->name);
    l->module_device = k->module->device;
    l->device = device;
    l->current_device = hd_current;
    l->stream = stream;
    memcpy(l->grid, grid, sizeof l->grid);
    memcpy(l->block, block, sizeof l->block);
    l->shared = shared;
    if (cluster)
        memcpy(l->cluster, cluster, sizeof l->cluster);
    l->cooperative = cooperative;
    l->nargs = k->nargs;
    l->kernarg_size = k->kernarg_size;
    /* The kernel argument segment, as the runtime fills it. */
    for (unsigned i = 0; i < k->nargs; i++) {
        l->arg_offset[i] = k->offset[i];
        l->arg_size[i] = k->size[i];
        memcpy(l->kernarg + k->offset[i], params[i], k->size[i]);
    }
    return hipSuccess;
}

HD_EXPORT hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gridDimX, unsigned int gridDimY,
                                           unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                           unsigned int blockDimZ, unsigned int sharedMemBytes, hipStream_t stream,
                                           void **kernelParams, void **extra)
{
    ENTER("hipModuleLaunchKernel");
    unsigned grid[3] = {gridDimX, gridDimY, gridDimZ}, block[3] = {blockDimX, blockDimY, blockDimZ};
    lock();
    hipError_t e = launch("hipModuleLaunchKernel", f, grid, block, sharedMemBytes, stream, kernelParams, extra, NULL, 0);
    unlock();
    return e;
}

#if HIPDOUBLE_ROCM >= 6
hipError_t hipModuleLaunchCooperativeKernel(hipFunction_t f, unsigned int gridDimX, unsigned int gridDimY,
                                            unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                            unsigned int blockDimZ, unsigned int sharedMemBytes, hipStream_t stream,
                                            void **kernelParams);
HD_EXPORT hipError_t hipModuleLaunchCooperativeKernel(hipFunction_t f, unsigned int gridDimX, unsigned int gridDimY,
                                                      unsigned int gridDimZ, unsigned int blockDimX,
                                                      unsigned int blockDimY, unsigned int blockDimZ,
                                                      unsigned int sharedMemBytes, hipStream_t stream,
                                                      void **kernelParams)
{
    ENTER("hipModuleLaunchCooperativeKernel");
    unsigned grid[3] = {gridDimX, gridDimY, gridDimZ}, block[3] = {blockDimX, blockDimY, blockDimZ};
    lock();
    hipError_t e = launch("hipModuleLaunchCooperativeKernel", f, grid, block, sharedMemBytes, stream, kernelParams,
                          NULL, NULL, 1);
    unlock();
    return e;
}

hipError_t hipDrvLaunchKernelEx(const hd_launch_config *config, hipFunction_t f, void **params, void **extra);
HD_EXPORT hipError_t hipDrvLaunchKernelEx(const hd_launch_config *config, hipFunction_t f, void **params,
                                          void **extra)
{
    ENTER("hipDrvLaunchKernelEx");
    if (!config || (config->numAttrs && !config->attrs))
        return hipErrorInvalidValue;
    unsigned grid[3] = {config->gridDimX, config->gridDimY, config->gridDimZ};
    unsigned block[3] = {config->blockDimX, config->blockDimY, config->blockDimZ};
    unsigned cluster[3] = {0, 0, 0};
    int cooperative = 0;
    hipError_t e = hipSuccess;
    lock();
    struct hd_kernel *k = find_function(f);
    int device = hd_current;
    if (config->hStream) {
        struct hd_stream *s = find_stream(config->hStream);
        device = s ? s->device : device;
    }
    for (unsigned i = 0; i < config->numAttrs && e == hipSuccess; i++) {
        const hd_launch_attribute *a = &config->attrs[i];
        if (a->id == hdLaunchAttributeCooperative) {
            cooperative = a->value.cooperative != 0;
        } else if (a->id == hdLaunchAttributeClusterDimension) {
            cluster[0] = a->value.clusterDim.x;
            cluster[1] = a->value.clusterDim.y;
            cluster[2] = a->value.clusterDim.z;
            if (valid_device(device) && !hd.devices[device].cluster)
                e = hipErrorNotSupported;
            else if (!cluster[0] || !cluster[1] || !cluster[2] || cluster[0] * cluster[1] * cluster[2] > 16 ||
                     grid[0] % cluster[0] || grid[1] % cluster[1] || grid[2] % cluster[2])
                e = HD_ERROR_INVALID_CLUSTER_SIZE;
        } else {
            e = hipErrorInvalidConfiguration; /* as ROCm does for attributes it does not know */
        }
    }
    if (e == hipSuccess && !k)
        e = hipErrorInvalidHandle;
    if (e == hipSuccess)
        e = launch("hipDrvLaunchKernelEx", f, grid, block, config->sharedMemBytes, config->hStream, params, extra,
                   cluster, cooperative);
    unlock();
    return e;
}
#endif

/* ----------------------------------------------------------------- memory */

HD_EXPORT hipError_t hipMalloc(void **ptr, size_t size)
{
    ENTER("hipMalloc");
    if (!ptr)
        return hipErrorInvalidValue;
    if (size == 0) { /* documented: no allocation, *ptr NULL */
        *ptr = NULL;
        return hipSuccess;
    }
    lock();
    int device = hd_current;
    hipError_t e = hipSuccess;
    struct hd_alloc *a = NULL;
    if (!valid_device(device))
        e = hipErrorInvalidDevice;
    else if (size > hd.devices[device].memory - hd.devices[device].used)
        e = hipErrorOutOfMemory;
    else if (!(a = calloc(1, sizeof *a)) || posix_memalign((void **)&a->base, 256, size) != 0)
        e = hipErrorOutOfMemory;
    if (e == hipSuccess) {
        a->size = size;
        a->device = device;
        a->next = hd.allocs;
        hd.allocs = a;
        hd.devices[device].used += size;
    } else {
        free(a);
    }
    unlock();
    if (e == hipSuccess)
        *ptr = a->base;
    return e;
}

HD_EXPORT hipError_t hipFree(void *ptr)
{
    ENTER("hipFree");
    if (!ptr)
        return hipSuccess;
    lock();
    struct hd_alloc **pp = &hd.allocs;
    while (*pp && (*pp)->base != ptr)
        pp = &(*pp)->next;
    struct hd_alloc *a = *pp;
    if (a) {
        *pp = a->next;
        hd.devices[a->device].used -= a->size;
        pending_done(a->device, NULL, 1, UINT64_MAX); /* "performs an implicit device synchronization" */
    }
    unlock();
    if (!a)
        return hipErrorInvalidValue;
    free(a->base);
    free(a);
    return hipSuccess;
}

/* Checks a copy against its kind; called with the lock held. */
static hipError_t check_copy(void *dst, const void *src, size_t size, int kind)
{
    int dd = find_alloc(dst, size) != NULL, sd = find_alloc(src, size) != NULL;
    switch (kind) {
    case hipMemcpyHostToHost: return !dd && !sd ? hipSuccess : hipErrorInvalidValue;
    case hipMemcpyHostToDevice: return dd && !sd ? hipSuccess : hipErrorInvalidValue;
    case hipMemcpyDeviceToHost: return !dd && sd ? hipSuccess : hipErrorInvalidValue;
    case hipMemcpyDeviceToDevice: return dd && sd ? hipSuccess : hipErrorInvalidValue;
    case hipMemcpyDefault: return hipSuccess;
    default: return hipErrorInvalidMemcpyDirection;
    }
}

static hipError_t check_stream(hipStream_t stream)
{
    return !stream || find_stream(stream) ? hipSuccess : hipErrorInvalidHandle;
}

HD_EXPORT hipError_t hipMemcpy(void *dst, const void *src, size_t sizeBytes, hipMemcpyKind kind)
{
    ENTER("hipMemcpy");
    if (sizeBytes == 0)
        return hipSuccess;
    if (!dst || !src)
        return hipErrorInvalidValue;
    lock();
    hipError_t e = check_copy(dst, src, sizeBytes, (int)kind);
    unlock();
    if (e == hipSuccess)
        memmove(dst, src, sizeBytes);
    return e;
}

HD_EXPORT hipError_t hipMemcpyAsync(void *dst, const void *src, size_t sizeBytes, hipMemcpyKind kind,
                                    hipStream_t stream)
{
    ENTER("hipMemcpyAsync");
    if (sizeBytes == 0)
        return hipSuccess;
    if (!dst || !src)
        return hipErrorInvalidValue;
    lock();
    hipError_t e = check_stream(stream);
    if (e == hipSuccess)
        e = check_copy(dst, src, sizeBytes, (int)kind);
    unlock();
    if (e == hipSuccess)
        memmove(dst, src, sizeBytes);
    return e;
}

HD_EXPORT hipError_t hipMemset(void *dst, int value, size_t sizeBytes)
{
    ENTER("hipMemset");
    if (sizeBytes == 0)
        return hipSuccess;
    lock();
    hipError_t e = find_alloc(dst, sizeBytes) ? hipSuccess : hipErrorInvalidValue;
    unlock();
    if (e == hipSuccess)
        memset(dst, value, sizeBytes);
    return e;
}

HD_EXPORT hipError_t hipMemsetAsync(void *dst, int value, size_t sizeBytes, hipStream_t stream)
{
    ENTER("hipMemsetAsync");
    if (sizeBytes == 0)
        return hipSuccess;
    lock();
    hipError_t e = check_stream(stream);
    if (e == hipSuccess && !find_alloc(dst, sizeBytes))
        e = hipErrorInvalidValue;
    unlock();
    if (e == hipSuccess)
        memset(dst, value, sizeBytes);
    return e;
}

/* ---------------------------------------------------------------- streams */

HD_EXPORT hipError_t hipStreamCreateWithFlags(hipStream_t *stream, unsigned int flags)
{
    ENTER("hipStreamCreateWithFlags");
    if (!stream || (flags & ~(unsigned)hipStreamNonBlocking))
        return hipErrorInvalidValue;
    struct hd_stream *s = calloc(1, sizeof *s);
    if (!s)
        return hipErrorOutOfMemory;
    s->device = hd_current;
    s->flags = flags;
    lock();
    s->next = hd.streams;
    hd.streams = s;
    unlock();
    *stream = (hipStream_t)s;
    return hipSuccess;
}

HD_EXPORT hipError_t hipStreamDestroy(hipStream_t stream)
{
    ENTER("hipStreamDestroy");
    lock();
    struct hd_stream **pp = &hd.streams;
    while (*pp && (hipStream_t)*pp != stream)
        pp = &(*pp)->next;
    struct hd_stream *s = *pp;
    if (s)
        *pp = s->next;
    unlock();
    if (!s)
        return hipErrorInvalidHandle;
    free(s);
    return hipSuccess;
}

HD_EXPORT hipError_t hipStreamSynchronize(hipStream_t stream)
{
    ENTER("hipStreamSynchronize");
    lock();
    hipError_t e = check_stream(stream);
    struct hd_stream *s = stream ? find_stream(stream) : NULL;
    if (e == hipSuccess && s && s->capturing)
        e = hipErrorStreamCaptureUnsupported; /* a captured stream's work runs when the graph does */
    if (e == hipSuccess)
        pending_done(s ? s->device : hd_current, stream, 0, UINT64_MAX);
    unlock();
    return e;
}

/* Graph capture: only the state a caller can query (EndCapture gives no graph). */
HD_EXPORT hipError_t hipStreamBeginCapture(hipStream_t stream, hipStreamCaptureMode mode)
{
    ENTER("hipStreamBeginCapture");
    (void)mode;
    lock();
    struct hd_stream *s = stream ? find_stream(stream) : NULL;
    hipError_t e = !stream ? hipErrorStreamCaptureUnsupported : !s ? hipErrorInvalidHandle : hipSuccess;
    if (e == hipSuccess && s->capturing)
        e = hipErrorInvalidValue;
    if (e == hipSuccess)
        s->capturing = 1;
    unlock();
    return e;
}

HD_EXPORT hipError_t hipStreamEndCapture(hipStream_t stream, hipGraph_t *graph)
{
    ENTER("hipStreamEndCapture");
    if (!graph)
        return hipErrorInvalidValue;
    lock();
    struct hd_stream *s = stream ? find_stream(stream) : NULL;
    hipError_t e = !s ? hipErrorInvalidHandle : !s->capturing ? hipErrorInvalidValue : hipSuccess;
    if (e == hipSuccess)
        s->capturing = 0;
    unlock();
    if (e == hipSuccess)
        *graph = NULL;
    return e;
}

HD_EXPORT hipError_t hipStreamIsCapturing(hipStream_t stream, hipStreamCaptureStatus *status)
{
    ENTER("hipStreamIsCapturing");
    if (!status)
        return hipErrorInvalidValue;
    lock();
    hipError_t e = check_stream(stream);
    struct hd_stream *s = stream ? find_stream(stream) : NULL;
    int capturing = s && s->capturing;
    unlock();
    if (e == hipSuccess)
        *status = capturing ? hipStreamCaptureStatusActive : hipStreamCaptureStatusNone;
    return e;
}

/* ----------------------------------------------------------------- events */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

HD_EXPORT hipError_t hipEventCreateWithFlags(hipEvent_t *event, unsigned flags)
{
    ENTER("hipEventCreateWithFlags");
    if (!event || (flags & ~0x7u))
        return hipErrorInvalidValue;
    struct hd_event *ev = calloc(1, sizeof *ev);
    if (!ev)
        return hipErrorOutOfMemory;
    ev->device = hd_current;
    ev->flags = flags;
    lock();
    ev->next = hd.events;
    hd.events = ev;
    unlock();
    *event = (hipEvent_t)ev;
    return hipSuccess;
}

HD_EXPORT hipError_t hipEventDestroy(hipEvent_t event)
{
    ENTER("hipEventDestroy");
    lock();
    struct hd_event **pp = &hd.events;
    while (*pp && (hipEvent_t)*pp != event)
        pp = &(*pp)->next;
    struct hd_event *ev = *pp;
    if (ev)
        *pp = ev->next;
    unlock();
    if (!ev)
        return hipErrorInvalidHandle;
    free(ev);
    return hipSuccess;
}

HD_EXPORT hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream)
{
    ENTER("hipEventRecord");
    lock();
    struct hd_event *ev = find_event(event);
    struct hd_stream *s = stream ? find_stream(stream) : NULL;
    hipError_t e = hipSuccess;
    if (!ev || (stream && !s))
        e = hipErrorInvalidHandle;
    else if ((s ? s->device : hd_current) != ev->device)
        e = hipErrorInvalidHandle; /* an event records on a stream of its own device */
    if (e == hipSuccess) {
        ev->recorded = 1;
        ev->stamp_ms = now_ms();
        ev->seq = hd.seq;
        ev->stream = stream;
    }
    unlock();
    return e;
}

HD_EXPORT hipError_t hipEventSynchronize(hipEvent_t event)
{
    ENTER("hipEventSynchronize");
    lock();
    struct hd_event *ev = find_event(event);
    if (ev && ev->recorded)
        pending_done(ev->device, ev->stream, 0, ev->seq);
    unlock();
    return ev ? hipSuccess : hipErrorInvalidHandle;
}

HD_EXPORT hipError_t hipEventElapsedTime(float *ms, hipEvent_t start, hipEvent_t stop)
{
    ENTER("hipEventElapsedTime");
    if (!ms)
        return hipErrorInvalidValue;
    lock();
    struct hd_event *a = find_event(start), *b = find_event(stop);
    hipError_t e = hipSuccess;
    if (!a || !b || a->device != b->device || ((a->flags | b->flags) & hipEventDisableTiming) || !a->recorded ||
        !b->recorded)
        e = hipErrorInvalidHandle;
    float v = e == hipSuccess ? (float)(b->stamp_ms - a->stamp_ms) : 0.0f;
    unlock();
    if (e == hipSuccess)
        *ms = v;
    return e;
}

/* ------------------------------------------------------------- inspection */

static int hipdouble_launch_get(unsigned index, struct hipdouble_launch *out)
{
    lock();
    int ok = index < st.nlaunches && index < HD_MAX_LAUNCHES;
    if (ok)
        *out = hd.launches[index];
    unlock();
    return ok;
}

static int hipdouble_current_device(void)
{
    return hd_current;
}

static unsigned hipdouble_live(const char *what)
{
    unsigned n = 0;
    lock();
    if (strcmp(what, "allocations") == 0)
        for (struct hd_alloc *a = hd.allocs; a; a = a->next)
            n++;
    else if (strcmp(what, "streams") == 0)
        for (struct hd_stream *s = hd.streams; s; s = s->next)
            n++;
    else if (strcmp(what, "events") == 0)
        for (struct hd_event *e = hd.events; e; e = e->next)
            n++;
    else if (strcmp(what, "modules") == 0)
        for (struct hd_module *m = hd.modules; m; m = m->next)
            n++;
    unlock();
    return n;
}

static int hipdouble_allocation(const void *ptr, void **base, uint64_t *size, int *device)
{
    lock();
    struct hd_alloc *a = find_alloc(ptr, 1);
    if (a) {
        *base = a->base;
        *size = a->size;
        *device = a->device;
    }
    unlock();
    return a != NULL;
}

static int hipdouble_stream_info(const void *stream, int *device, unsigned *flags)
{
    lock();
    struct hd_stream *s = find_stream((hipStream_t)stream);
    if (s) {
        *device = s->device;
        *flags = s->flags;
    }
    unlock();
    return s != NULL;
}

static void defaults(void)
{
    st.launch_get = hipdouble_launch_get;
    st.current_device = hipdouble_current_device;
    st.live = hipdouble_live;
    st.allocation = hipdouble_allocation;
    st.stream_info = hipdouble_stream_info;
    st.devices[0] = '\0';
    st.jit_log = NULL;
    st.nlaunches = 0;
    hd.npending = 0;
}

TRD_DOUBLE_DEFINE(st, "hipdouble", defaults)

/* Frees what the process left behind, so that leak checkers see the
 * double's own state as released. */
__attribute__((destructor)) static void hipdouble_fini(void)
{
    while (hd.allocs) {
        struct hd_alloc *a = hd.allocs;
        hd.allocs = a->next;
        free(a->base);
        free(a);
    }
    while (hd.streams) {
        struct hd_stream *s = hd.streams;
        hd.streams = s->next;
        free(s);
    }
    while (hd.events) {
        struct hd_event *e = hd.events;
        hd.events = e->next;
        free(e);
    }
    while (hd.modules) {
        struct hd_module *m = hd.modules;
        hd.modules = m->next;
        module_free(m);
    }
    free(hd.launches);
    hd.launches = NULL;
}
