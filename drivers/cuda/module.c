/* SPDX-License-Identifier: Apache-2.0 */
/* module.c: loading a kernel for a device. cubins load directly; PTX is
 * compiled by the driver's JIT linker with the load-stage options (maxnreg,
 * debug, enable_fp_fusion, ptx_options), linked with extern_libs, and the
 * result kept in the disk cache. Launch attributes are computed once here. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "drivers/cuda/cuda_driver.h"

#define LOG_SIZE 8192
/* an extern library (libdevice, a user's cubin archive): far below this */
#define EXTERN_LIB_MAX ((size_t)1 << 30)

/* The JIT options a load applies, gathered from the option table. */
struct jit {
    CUjit_option keys[16];
    void *vals[16];
    unsigned n;
    char info[LOG_SIZE];
    char error[LOG_SIZE];
    char summary[512];  /* what shapes the result, for the cache key */
};

static void jit_add(struct jit *j, CUjit_option k, uintptr_t v)
{
    for (unsigned i = 0; i < j->n; i++)
        if (j->keys[i] == k) {
            j->vals[i] = (void *)v;
            return;
        }
    j->keys[j->n] = k;
    j->vals[j->n] = (void *)v;
    j->n++;
}

static void jit_logs(struct jit *j)
{
    j->info[0] = j->error[0] = '\0';
    jit_add(j, CU_JIT_INFO_LOG_BUFFER, (uintptr_t)j->info);
    jit_add(j, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, LOG_SIZE);
    jit_add(j, CU_JIT_ERROR_LOG_BUFFER, (uintptr_t)j->error);
    jit_add(j, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, LOG_SIZE);
}

/* ptxas flags the driver's JIT has an option for; anything else is refused
 * rather than silently dropped. */
static trd_status_t parse_ptx_options(struct jit *j, const char *text, const char *label)
{
    const char *p = text;
    while (*p) {
        while (isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        const char *e = p;
        while (*e && !isspace((unsigned char)*e))
            e++;
        char tok[128];
        size_t n = (size_t)(e - p);
        if (n >= sizeof tok)
            return trd_drv_error(TRD_ERR_INVALID_ARGUMENT, "%s: ptx_options token '%.40s...' is too long", label, p);
        memcpy(tok, p, n);
        tok[n] = '\0';
        /* "--flag value" forms take the next token */
        const char *val = strchr(tok, '=');
        char next[64] = "";
        if (!val && (!strcmp(tok, "--opt-level") || !strcmp(tok, "--maxrregcount") || !strcmp(tok, "-maxrregcount") ||
                     !strcmp(tok, "--fmad") || !strcmp(tok, "-fmad"))) {
            const char *q = e;
            while (isspace((unsigned char)*q))
                q++;
            const char *qe = q;
            while (*qe && !isspace((unsigned char)*qe))
                qe++;
            snprintf(next, sizeof next, "%.*s", (int)(qe - q < 63 ? qe - q : 63), q);
            val = next;
            e = qe;
        } else if (val) {
            val++;
        }
        long v;
        char *end;
        if (tok[0] == '-' && tok[1] == 'O' && isdigit((unsigned char)tok[2]) && !tok[3]) {
            jit_add(j, CU_JIT_OPTIMIZATION_LEVEL, (uintptr_t)(tok[2] - '0'));
        } else if (!strncmp(tok, "--opt-level", 11) && val && (v = strtol(val, &end, 10)) >= 0 && v <= 4 && !*end) {
            jit_add(j, CU_JIT_OPTIMIZATION_LEVEL, (uintptr_t)v);
        } else if ((!strncmp(tok, "--maxrregcount", 14) || !strncmp(tok, "-maxrregcount", 13)) && val &&
                   (v = strtol(val, &end, 10)) >= 16 && v <= 255 && !*end) {
            jit_add(j, CU_JIT_MAX_REGISTERS, (uintptr_t)v);
        } else if (!strcmp(tok, "-lineinfo") || !strcmp(tok, "--generate-line-info")) {
            jit_add(j, CU_JIT_GENERATE_LINE_INFO, 1);
        } else if (!strcmp(tok, "-g") || !strcmp(tok, "--device-debug")) {
            jit_add(j, CU_JIT_GENERATE_DEBUG_INFO, 1);
        } else if ((!strncmp(tok, "--fmad", 6) || !strncmp(tok, "-fmad", 5)) && val &&
                   (!strcmp(val, "true") || !strcmp(val, "false"))) {
            jit_add(j, CU_JIT_FMA, !strcmp(val, "true"));
        } else if (!strcmp(tok, "-v") || !strcmp(tok, "--verbose")) {
            jit_add(j, CU_JIT_LOG_VERBOSE, 1);
        } else {
            return trd_drv_error(TRD_ERR_INVALID_ARGUMENT,
                                    "%s: ptx_options '%s' has no equivalent in the driver's PTX JIT (accepted: -O<0-4>, "
                                    "--opt-level=N, --maxrregcount=N, -lineinfo, -g, --fmad=true|false, -v)",
                                    label, tok);
        }
        p = e;
    }
    return TRD_OK;
}

static trd_status_t jit_from_options(struct jit *j, const trd_driver_module_desc_t *d)
{
    int64_t maxnreg = 0;
    int32_t debug = 0, fma = 1;
    char ptxopts[1024] = "";
    size_t len;
    int has_maxnreg = trd_drv_options_get_int(d->options, "maxnreg", &maxnreg) == TRD_OK;
    trd_drv_options_get_bool(d->options, "debug", &debug);
    trd_drv_options_get_bool(d->options, "enable_fp_fusion", &fma);
    if (trd_drv_options_get(d->options, "ptx_options", ptxopts, sizeof ptxopts, &len) != TRD_OK ||
        !strcmp(ptxopts, "none"))
        ptxopts[0] = '\0';
    if (has_maxnreg)
        jit_add(j, CU_JIT_MAX_REGISTERS, (uintptr_t)maxnreg);
    if (debug) {
        jit_add(j, CU_JIT_GENERATE_DEBUG_INFO, 1);
        jit_add(j, CU_JIT_GENERATE_LINE_INFO, 1);
    }
    if (!fma)
        jit_add(j, CU_JIT_FMA, 0);
    trd_status_t st = parse_ptx_options(j, ptxopts, d->label);
    if (st != TRD_OK)
        return st;
    snprintf(j->summary, sizeof j->summary, "maxnreg=%lld;debug=%d;fma=%d;ptx_options=%s",
             has_maxnreg ? (long long)maxnreg : -1LL, debug, fma, ptxopts);
    return TRD_OK;
}

static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* The input kind of a library for the driver's linker; -1 for LLVM bitcode,
 * which Triton links at compile time. */
static int link_input_type(const unsigned char *b, size_t n, int *ok)
{
    *ok = 1;
    if (n >= 4 && ((b[0] == 'B' && b[1] == 'C' && b[2] == 0xC0 && b[3] == 0xDE) ||
                   (b[0] == 0xDE && b[1] == 0xC0 && b[2] == 0x17 && b[3] == 0x0B)))
        return -1;
    if (n >= 8 && !memcmp(b, "!<arch>\n", 8))
        return CU_JIT_INPUT_LIBRARY;
    if (n >= 4 && b[0] == 0x50 && b[1] == 0xED && b[2] == 0x55 && b[3] == 0xBA)
        return CU_JIT_INPUT_FATBINARY;
    if (n >= 20 && !memcmp(b, "\x7f" "ELF", 4))
        return b[16] == 1 ? CU_JIT_INPUT_OBJECT : CU_JIT_INPUT_CUBIN; /* ET_REL: a relocatable object */
    for (size_t i = 0; i + 8 <= n && i < 4096; i++)
        if (!memcmp(b + i, ".version", 8))
            return CU_JIT_INPUT_PTX;
    *ok = 0;
    return 0;
}

/* extern_libs as "name=path,name=path" from the options; each library's
 * content is folded into the cache key. */
static trd_status_t link_libs(const struct cuda_api *api, CUlinkState ls, const trd_driver_module_desc_t *d,
                              uint64_t *key, int dry)
{
    char text[4096];
    size_t len;
    if (trd_drv_options_get(d->options, "extern_libs", text, sizeof text, &len) != TRD_OK || !strcmp(text, "none") ||
        !text[0])
        return TRD_OK;
    char *save = NULL;
    for (char *item = strtok_r(text, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq)
            continue;
        *eq = '\0';
        const char *name = item, *path = eq + 1;
        char *data, msg[1024];
        size_t size;
        trd_status_t rst = trd_file_load(path, EXTERN_LIB_MAX, &data, &size, msg, sizeof msg);
        if (rst != TRD_OK)
            return trd_drv_error(rst, "%s: extern_libs '%s': %s", d->label, name, msg);
        int ok;
        int type = link_input_type((const unsigned char *)data, size, &ok);
        *key = fnv1a(*key, name, strlen(name));
        *key = fnv1a(*key, data, size);
        if (!ok) {
            free(data);
            return trd_drv_error(TRD_ERR_FORMAT,
                                    "%s: extern_libs '%s' (%s) is not a cubin, PTX, fatbin, object or archive", d->label,
                                    name, path);
        }
        if (type < 0) {
            trd_drv_log(TRD_LOG_INFO, "%s: extern_libs '%s' is LLVM bitcode, linked by Triton at compile time",
                           d->label, name);
        } else if (!dry) {
            CUresult r = api->cuLinkAddData(ls, (CUjitInputType)type, data, size, name, 0, NULL, NULL);
            if (r != CUDA_SUCCESS) {
                free(data);
                return cuda_error(api, r, "%s: linking extern_libs '%s' (%s)", d->label, name, path);
            }
        }
        free(data);
    }
    return TRD_OK;
}

/* PTX -> cubin through the driver's linker (so the result can be cached). */
static trd_status_t jit_ptx(struct cuda_device *dev, const trd_driver_module_desc_t *d, struct jit *j, void **cubin,
                            size_t *size)
{
    const struct cuda_api *api = dev->api;
    CUlinkState ls;
    jit_logs(j);
    CUresult r = api->cuLinkCreate(j->n, j->keys, j->vals, &ls);
    if (r != CUDA_SUCCESS)
        return cuda_error(api, r, "%s: cuLinkCreate", d->label);
    /* the PTX must be NUL-terminated for the JIT */
    char *ptx = malloc(d->image_size + 1);
    if (!ptx) {
        api->cuLinkDestroy(ls);
        return trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory");
    }
    memcpy(ptx, d->image, d->image_size);
    ptx[d->image_size] = '\0';
    r = api->cuLinkAddData(ls, CU_JIT_INPUT_PTX, ptx, d->image_size + 1, d->entry, 0, NULL, NULL);
    free(ptx);
    trd_status_t st;
    if (r != CUDA_SUCCESS) {
        st = cuda_error(api, r, "%s: JIT-compiling the PTX for sm%d (log: %s)", d->label, dev->cc,
                        j->error[0] ? j->error : "empty");
        api->cuLinkDestroy(ls);
        return st;
    }
    uint64_t ignored = 0;
    if ((st = link_libs(api, ls, d, &ignored, 0)) != TRD_OK) {
        api->cuLinkDestroy(ls);
        return st;
    }
    void *out;
    size_t n;
    r = api->cuLinkComplete(ls, &out, &n);
    if (r != CUDA_SUCCESS) {
        st = cuda_error(api, r, "%s: linking for sm%d (log: %s)", d->label, dev->cc, j->error[0] ? j->error : "empty");
        api->cuLinkDestroy(ls);
        return st;
    }
    void *copy = malloc(n);
    if (copy)
        memcpy(copy, out, n);
    api->cuLinkDestroy(ls); /* owns `out` */
    if (!copy)
        return trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory");
    if (j->info[0])
        trd_drv_log(TRD_LOG_DEBUG, "%s: JIT log: %s", d->label, j->info);
    *cubin = copy;
    *size = n;
    return TRD_OK;
}

static int attr(const struct cuda_api *api, CUfunction f, CUfunction_attribute a)
{
    int v = 0;
    api->cuFuncGetAttribute(&v, a, f);
    return v;
}

static trd_status_t setup_function(struct cuda_device *dev, struct cuda_module *m, const trd_driver_module_desc_t *d,
                                   trd_load_info_t *info)
{
    const struct cuda_api *api = dev->api;
    CUfunction f = m->fn;
    int max_threads = attr(api, f, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    int static_shared = attr(api, f, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
    info->registers = (uint32_t)attr(api, f, CU_FUNC_ATTRIBUTE_NUM_REGS);
    info->spills = (uint32_t)attr(api, f, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES) / 4;
    info->max_threads_per_block = (uint32_t)max_threads;
    if (m->block > (uint32_t)max_threads)
        return trd_drv_error(TRD_ERR_LIMIT,
                                "%s: num_warps %u x warp_size %u = %u threads per block, more than the %d this function "
                                "allows on sm%d (it uses %u registers a thread)",
                                d->label, d->num_warps, d->warp_size, m->block, max_threads, dev->cc, info->registers);
    uint64_t total = (uint64_t)d->shared + (uint64_t)static_shared;
    if (total > (uint64_t)dev->shared_optin)
        return trd_drv_error(TRD_ERR_LIMIT,
                                "%s: needs %llu bytes of shared memory a block (%u dynamic + %d static), more than the "
                                "%d cuda:%d allows",
                                d->label, (unsigned long long)total, d->shared, static_shared, dev->shared_optin,
                                dev->ordinal);
    CUresult r;
    if (d->shared > 49152) {
        /* above 48 KiB a kernel must opt in, as Triton's launcher does */
        if ((r = api->cuFuncSetCacheConfig(f, CU_FUNC_CACHE_PREFER_SHARED)) != CUDA_SUCCESS ||
            (r = api->cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                         dev->shared_optin - static_shared)) != CUDA_SUCCESS)
            return cuda_error(api, r, "%s: opting in to %u bytes of dynamic shared memory", d->label, d->shared);
    }
    m->nattrs = 0;
    if (d->num_ctas > 1) {
        if (!dev->cluster)
            return trd_drv_error(TRD_ERR_UNSUPPORTED, "%s: num_ctas %u needs thread block clusters, which cuda:%d (sm%d) lacks",
                                    d->label, d->num_ctas, dev->ordinal, dev->cc);
        if (d->num_ctas > 8 &&
            (r = api->cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1)) != CUDA_SUCCESS)
            return cuda_error(api, r, "%s: allowing a non-portable cluster of %u", d->label, d->num_ctas);
        CUlaunchAttribute *a = &m->attrs[m->nattrs++];
        memset(a, 0, sizeof *a);
        a->id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        a->value.clusterDim.x = d->num_ctas;
        a->value.clusterDim.y = 1;
        a->value.clusterDim.z = 1;
        a = &m->attrs[m->nattrs++];
        memset(a, 0, sizeof *a);
        a->id = CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE;
        a->value.clusterSchedulingPolicyPreference = CU_CLUSTER_SCHEDULING_POLICY_SPREAD;
    }
    if (d->flags & TRD_MODULE_COOPERATIVE) {
        if (!dev->cooperative)
            return trd_drv_error(TRD_ERR_UNSUPPORTED, "%s: launch_cooperative_grid, but cuda:%d has no cooperative launch",
                                    d->label, dev->ordinal);
        int per_sm = 0;
        r = api->cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, f, (int)m->block, d->shared);
        if (r != CUDA_SUCCESS)
            return cuda_error(api, r, "%s: occupancy for a cooperative launch", d->label);
        m->coop_limit = (uint64_t)per_sm * (uint64_t)dev->sm_count;
        if (m->coop_limit == 0)
            return trd_drv_error(TRD_ERR_LIMIT, "%s: not one block of %u threads and %u bytes of shared memory fits an "
                                                   "SM of cuda:%d, so no cooperative launch is possible",
                                    d->label, m->block, d->shared, dev->ordinal);
        CUlaunchAttribute *a = &m->attrs[m->nattrs++];
        memset(a, 0, sizeof *a);
        a->id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
        a->value.cooperative = 1;
    }
    if (d->flags & TRD_MODULE_PDL) {
        if (dev->cc < 90)
            return trd_drv_error(TRD_ERR_UNSUPPORTED, "%s: launch_pdl needs compute capability 9.0, cuda:%d is sm%d",
                                    d->label, dev->ordinal, dev->cc);
        CUlaunchAttribute *a = &m->attrs[m->nattrs++];
        memset(a, 0, sizeof *a);
        a->id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        a->value.programmaticStreamSerializationAllowed = 1;
    }
    return TRD_OK;
}

static void hex(const uint8_t *b, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[b[i] >> 4];
        out[2 * i + 1] = digits[b[i] & 15];
    }
    out[2 * n] = '\0';
}

trd_status_t cuda_module_load(void *device, const trd_driver_module_desc_t *d, void **out, trd_load_info_t *info)
{
    struct cuda_device *dev = device;
    const struct cuda_api *api = dev->api;
    if (d->format != TRD_FORMAT_CUBIN && d->format != TRD_FORMAT_PTX && d->format != TRD_FORMAT_FATBIN)
        return trd_drv_error(TRD_ERR_UNSUPPORTED, "%s: the CUDA driver loads cubin, PTX and fatbin, not format %d",
                                d->label, d->format);
    struct cuda_module *m = calloc(1, sizeof *m);
    struct jit *j = calloc(1, sizeof *j);
    if (!m || !j) {
        free(m);
        free(j);
        return trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory");
    }
    m->dev = dev;
    snprintf(m->label, sizeof m->label, "%s", d->label);
    m->num_ctas = d->num_ctas ? d->num_ctas : 1;
    m->block = d->num_warps * d->warp_size;
    m->shared = d->shared;
    trd_scratch_spec_from(&m->scratch, d, m->label);
    struct cuda_ctx_scope sc;
    trd_status_t st = cuda_ctx_enter(dev, &sc);
    if (st != TRD_OK) {
        free(j);
        free(m);
        return st;
    }
    void *cubin = NULL;
    size_t cubin_size = 0;
    const void *image = d->image;
    CUresult r;
    if (d->format == TRD_FORMAT_PTX) {
        if ((st = jit_from_options(j, d)) != TRD_OK)
            goto fail;
        /* key: image hash, JIT options, extern_libs content, device arch, driver version */
        uint64_t libs = 0xcbf29ce484222325ull;
        if ((st = link_libs(api, NULL, d, &libs, 1)) != TRD_OK)
            goto fail;
        uint64_t opts = fnv1a(libs, j->summary, strlen(j->summary));
        char key[200], ih[65];
        hex(d->image_hash, 32, ih);
        snprintf(key, sizeof key, "%s-%016llx-sm%d-%d", ih, (unsigned long long)opts, dev->cc, dev->drv->driver_version);
        if (cuda_cache_read(dev->drv, d->cache_dir, key, &cubin, &cubin_size)) {
            info->from_cache = 1;
        } else {
            if ((st = jit_ptx(dev, d, j, &cubin, &cubin_size)) != TRD_OK)
                goto fail;
            cuda_cache_write(dev->drv, d->cache_dir, key, cubin, cubin_size);
        }
        image = cubin;
    }
    j->n = 0;
    jit_logs(j);
    r = api->cuModuleLoadDataEx(&m->mod, image, j->n, j->keys, j->vals);
    free(cubin);
    if (r != CUDA_SUCCESS) {
        st = cuda_error(api, r, "cuModuleLoadDataEx for sm%d%s%s%s", dev->cc, j->error[0] ? " (log: " : "", j->error,
                        j->error[0] ? ")" : "");
        goto fail;
    }
    if ((r = api->cuModuleGetFunction(&m->fn, m->mod, d->entry)) != CUDA_SUCCESS) {
        st = cuda_error(api, r, "the module has no kernel '%s'", d->entry);
        api->cuModuleUnload(m->mod);
        goto fail;
    }
    if ((st = setup_function(dev, m, d, info)) != TRD_OK) {
        api->cuModuleUnload(m->mod);
        goto fail;
    }
    cuda_ctx_leave(dev, &sc);
    free(j);
    *out = m;
    return TRD_OK;
fail:
    cuda_ctx_leave(dev, &sc);
    free(j);
    free(m);
    return st;
}

void cuda_module_unload(void *module)
{
    struct cuda_module *m = module;
    if (!m)
        return;
    struct cuda_ctx_scope sc;
    if (cuda_ctx_enter(m->dev, &sc) == TRD_OK) {
        /* launches of it may still be queued, on any stream: unloading code under them is undefined */
        cuda_ctx_drain(m->dev, "before unloading a module");
        m->dev->api->cuModuleUnload(m->mod);
        cuda_ctx_leave(m->dev, &sc);
    }
    free(m);
}
