/* SPDX-License-Identifier: Apache-2.0 */
/* module.c: building a kernel image into a Level Zero module and kernel.
 *
 * Build flags start from the metadata's build_flags (Triton's Intel compiler
 * puts its own there: the GRF mode it compiled for, -cl-opt-disable when
 * TRITON_INTEL_DISABLE_IGC_OPT was set, ...) and add what the load options
 * ask for:
 *   grf_mode 128|256|512  -> -cl-intel-<n>-GRF-per-thread (replacing a GRF
 *                            flag of the metadata: IGC takes one GRF mode)
 *   grf_mode auto         -> -cl-intel-enable-auto-large-GRF-mode
 *   debug                 -> -g
 * No optimisation-level flag is added: XPUOptions has no such field, and
 * Triton's Intel launcher passes the metadata's flags unchanged.
 *
 * The kernel's argument list is checked against what a Triton launch passes
 * (the signature's parameters, then the global and profile scratch pointers,
 * then, for kernels built with a dynamic shared-memory parameter, the
 * shared-local-memory argument) using numKernelArgs, as Triton's Intel
 * launcher does to decide whether to bind that last argument. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "drivers/levelzero/levelzero.h"

static const char *const zdrv_grf_flags[] = {
    "-cl-intel-128-GRF-per-thread",
    "-cl-intel-256-GRF-per-thread",
    "-cl-intel-512-GRF-per-thread",
    "-cl-intel-enable-auto-large-GRF-mode",
};

static int zdrv_is_grf_flag(const char *tok, size_t n)
{
    for (size_t i = 0; i < sizeof zdrv_grf_flags / sizeof zdrv_grf_flags[0]; i++)
        if (strlen(zdrv_grf_flags[i]) == n && strncmp(zdrv_grf_flags[i], tok, n) == 0)
            return 1;
    return 0;
}

static int zdrv_has_token(const char *flags, const char *want)
{
    size_t wn = strlen(want);
    for (const char *s = flags; *s;) {
        while (*s == ' ' || *s == '\t' || *s == '\n')
            s++;
        size_t n = strcspn(s, " \t\n");
        if (n == wn && strncmp(s, want, n) == 0)
            return 1;
        s += n;
    }
    return 0;
}

/* Appends `tok` to buf (space separated). Returns 0 when it does not fit. */
static int zdrv_append_token(char *buf, size_t cap, const char *tok, size_t n)
{
    size_t len = strlen(buf);
    if (len + (len ? 1 : 0) + n + 1 > cap)
        return 0;
    if (len)
        buf[len++] = ' ';
    memcpy(buf + len, tok, n);
    buf[len + n] = '\0';
    return 1;
}

/* The metadata's build_flags, or "" (the metadata is canonical JSON the core checked). */
static char *zdrv_metadata_flags(const char *metadata)
{
    char *out = NULL;
    json_t *root = metadata ? json_loads(metadata, 0, NULL) : NULL;
    json_t *bf = root ? json_object_get(root, "build_flags") : NULL;
    const char *s = json_is_string(bf) ? json_string_value(bf) : "";
    size_t n = strlen(s);
    if ((out = malloc(n + 1)))
        memcpy(out, s, n + 1);
    json_decref(root);
    return out;
}

/* Composes the build flags (see the top of this file) into *out (malloc'ed). */
static trd_status_t zdrv_build_flags(const trd_driver_module_desc_t *desc, char **out, uint32_t *registers)
{
    char mode[32] = "default";
    size_t len = 0;
    if (trd_drv_options_get(desc->options, "grf_mode", mode, sizeof mode, &len) != TRD_OK)
        snprintf(mode, sizeof mode, "default");
    int32_t debug = 0;
    if (trd_drv_options_get_bool(desc->options, "debug", &debug) != TRD_OK)
        debug = 0;
    const char *grf = NULL;
    if (strcmp(mode, "128") == 0)
        grf = zdrv_grf_flags[0];
    else if (strcmp(mode, "256") == 0)
        grf = zdrv_grf_flags[1];
    else if (strcmp(mode, "512") == 0)
        grf = zdrv_grf_flags[2];
    else if (strcmp(mode, "auto") == 0)
        grf = zdrv_grf_flags[3];
    char *meta = zdrv_metadata_flags(desc->metadata);
    if (!meta)
        return trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory");
    size_t cap = strlen(meta) + 64;
    char *flags = calloc(1, cap);
    if (!flags) {
        free(meta);
        return trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory");
    }
    for (const char *s = meta; *s;) {
        while (*s == ' ' || *s == '\t' || *s == '\n')
            s++;
        size_t n = strcspn(s, " \t\n");
        if (n && !(grf && zdrv_is_grf_flag(s, n)))
            zdrv_append_token(flags, cap, s, n);
        s += n;
    }
    free(meta);
    if (grf)
        zdrv_append_token(flags, cap, grf, strlen(grf));
    if (debug && !zdrv_has_token(flags, "-g"))
        zdrv_append_token(flags, cap, "-g", 2);
    *registers = zdrv_has_token(flags, zdrv_grf_flags[2])   ? 512
                 : zdrv_has_token(flags, zdrv_grf_flags[1]) ? 256
                 : zdrv_has_token(flags, zdrv_grf_flags[0]) ? 128
                                                  : 0;
    *out = flags;
    return TRD_OK;
}

/* The text of a build or link log (NULL-safe, malloc'ed, never NULL on success). */
/* A build or link log's text, trailing blanks trimmed (an empty string when there is none; NULL only when out
 * of memory); the log is destroyed. */
static char *zdrv_log_take(const struct zdrv_api *api, ze_module_build_log_handle_t log)
{
    size_t n = 0;
    char *text = NULL;
    if (log && api->zeModuleBuildLogGetString(log, &n, NULL) == ZE_RESULT_SUCCESS && n > 0 && n < (64u << 20) &&
        (text = calloc(1, n + 1)) && api->zeModuleBuildLogGetString(log, &n, text) != ZE_RESULT_SUCCESS)
        text[0] = '\0';
    if (!text && (text = malloc(1)))
        text[0] = '\0';
    if (log)
        api->zeModuleBuildLogDestroy(log);
    size_t len = text ? strlen(text) : 0;
    while (len && (text[len - 1] == '\n' || text[len - 1] == ' '))
        text[--len] = '\0';
    return text;
}

static const char *zdrv_format_name(ze_module_format_t f)
{
    return f == ZE_MODULE_FORMAT_NATIVE ? "native binary" : "SPIR-V";
}

/* zeModuleCreate with the build log in the error. */
static trd_status_t zdrv_create_module(struct zdrv_device *dev, ze_module_format_t format, const void *image,
                                       size_t size, const char *flags, const char *what, ze_module_handle_t *out)
{
    const struct zdrv_api *api = dev->api;
    ze_module_desc_t md = {
        .stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
        .format = format,
        .inputSize = size,
        .pInputModule = image,
        .pBuildFlags = flags,
    };
    ze_module_build_log_handle_t log = NULL;
    ze_module_handle_t mod = NULL;
    ze_result_t r = api->zeModuleCreate(dev->ctx, dev->info->device, &md, &mod, &log);
    if (r == ZE_RESULT_SUCCESS) {
        if (log)
            api->zeModuleBuildLogDestroy(log);
        *out = mod;
        return TRD_OK;
    }
    char *text = zdrv_log_take(api, log);
    size_t tl = text ? strlen(text) : 0;
    trd_status_t st = trd_drv_error(zdrv_status(r) == TRD_OK ? TRD_ERR_DEVICE : zdrv_status(r),
                                       "zeModuleCreate failed: %s (0x%08x) building %s as %s with flags \"%s\", "
                                       "build log: %.3000s%s",
                                       zdrv_result_name(r), (unsigned)r, what, zdrv_format_name(format), flags,
                                       tl ? text : "(empty)", tl > 3000 ? " [...]" : "");
    free(text);
    return st;
}

static int zdrv_is_spirv(const uint8_t *b, size_t n)
{
    return n >= 20 && ((b[0] == 0x03 && b[1] == 0x02 && b[2] == 0x23 && b[3] == 0x07) ||
                       (b[0] == 0x07 && b[1] == 0x23 && b[2] == 0x02 && b[3] == 0x03));
}

static int zdrv_is_zebin(const uint8_t *b, size_t n)
{
    return n >= 20 && b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F' &&
           ((unsigned)b[18] | (unsigned)b[19] << 8) == 205; /* EM_INTELGT */
}

static int zdrv_is_bitcode(const uint8_t *b, size_t n)
{
    return n >= 4 && ((b[0] == 'B' && b[1] == 'C' && b[2] == 0xc0 && b[3] == 0xde) ||
                      (b[0] == 0xde && b[1] == 0xc0 && b[2] == 0x17 && b[3] == 0x0b));
}

static trd_status_t zdrv_read_file(const char *path, const char *what, uint8_t **data, size_t *size)
{
    char *buf, msg[1024];
    trd_status_t st = trd_file_load(path, (size_t)256 << 20, &buf, size, msg, sizeof msg);
    if (st != TRD_OK)
        return trd_drv_error(st, "%s: %s", what, msg);
    *data = (uint8_t *)buf;
    return TRD_OK;
}

/* Builds the extern_libs modules ("name=/path,..."): SPIR-V or native images
 * linked to the kernel with zeModuleDynamicLink. LLVM bitcode (Triton's
 * libdevice) is skipped: Triton links it into the SPIR-V at compile time and
 * Level Zero cannot build bitcode. */
static trd_status_t zdrv_build_libs(struct zdrv_module *m, const trd_driver_module_desc_t *desc, const char *flags)
{
    char small[1024];
    char *text = small;
    size_t len = 0;
    trd_status_t st = trd_drv_options_get(desc->options, "extern_libs", small, sizeof small, &len);
    if (st == TRD_ERR_BUFFER_TOO_SMALL) {
        if (!(text = malloc(len + 1)))
            return trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory");
        st = trd_drv_options_get(desc->options, "extern_libs", text, len + 1, &len);
    }
    if (st != TRD_OK || strcmp(text, "none") == 0 || !*text) {
        if (text != small)
            free(text);
        return TRD_OK; /* none, or not an option of this table */
    }
    st = TRD_OK;
    for (char *item = text; item && *item && st == TRD_OK;) {
        char *comma = strchr(item, ',');
        if (comma)
            *comma = '\0';
        char *eq = strchr(item, '=');
        const char *name = item, *path = eq ? eq + 1 : "";
        if (eq)
            *eq = '\0';
        char what[96];
        snprintf(what, sizeof what, "extern_libs '%.64s'", name);
        uint8_t *data = NULL;
        size_t size = 0;
        if ((st = zdrv_read_file(path, what, &data, &size)) != TRD_OK)
            break;
        ze_module_format_t fmt = ZE_MODULE_FORMAT_IL_SPIRV;
        if (zdrv_is_bitcode(data, size)) {
            trd_drv_log(TRD_LOG_INFO,
                           "levelzero: %s (%s) is LLVM bitcode: skipped (Triton links it at compile time)", what,
                           path);
            free(data);
            item = comma ? comma + 1 : NULL;
            continue;
        }
        if (zdrv_is_zebin(data, size)) {
            fmt = ZE_MODULE_FORMAT_NATIVE;
        } else if (!zdrv_is_spirv(data, size)) {
            free(data);
            st = trd_drv_error(TRD_ERR_FORMAT, "%s: %s is neither SPIR-V nor a native (zebin) binary", what, path);
            break;
        }
        if (!m->dev->api->zeModuleDynamicLink) {
            free(data);
            st = trd_drv_error(TRD_ERR_UNSUPPORTED, "%s: the Level Zero loader has no zeModuleDynamicLink", what);
            break;
        }
        ze_module_handle_t *grown = realloc(m->libs, (m->nlibs + 1) * sizeof *grown);
        if (!grown) {
            free(data);
            st = trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory");
            break;
        }
        m->libs = grown;
        st = zdrv_create_module(m->dev, fmt, data, size, flags, what, &m->libs[m->nlibs]);
        free(data);
        if (st == TRD_OK)
            m->nlibs++;
        item = comma ? comma + 1 : NULL;
    }
    if (text != small)
        free(text);
    return st;
}

static trd_status_t zdrv_link_libs(struct zdrv_module *m)
{
    const struct zdrv_api *api = m->dev->api;
    ze_module_handle_t *all = calloc(m->nlibs + 1, sizeof *all);
    if (!all)
        return trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory");
    all[0] = m->module;
    memcpy(all + 1, m->libs, m->nlibs * sizeof *all);
    ze_module_build_log_handle_t log = NULL;
    ze_result_t r = api->zeModuleDynamicLink(m->nlibs + 1, all, &log);
    free(all);
    if (r == ZE_RESULT_SUCCESS) {
        if (log)
            api->zeModuleBuildLogDestroy(log);
        return TRD_OK;
    }
    char *text = zdrv_log_take(api, log);
    trd_status_t st = trd_drv_error(zdrv_status(r) == TRD_OK ? TRD_ERR_DEVICE : zdrv_status(r),
                                       "zeModuleDynamicLink failed: %s (0x%08x) linking the kernel with %u "
                                       "extern_libs module%s, link log: %.3000s",
                                       zdrv_result_name(r), (unsigned)r, m->nlibs, m->nlibs == 1 ? "" : "s",
                                       text && *text ? text : "(empty)");
    free(text);
    return st;
}

static trd_status_t zdrv_kernel_create(struct zdrv_module *m, ze_kernel_handle_t *out)
{
    ze_kernel_desc_t kd = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC, .flags = ZE_KERNEL_FLAG_FORCE_RESIDENCY,
                           .pKernelName = m->entry};
    ze_result_t r = m->dev->api->zeKernelCreate(m->module, &kd, out);
    if (r != ZE_RESULT_SUCCESS)
        return zdrv_fail(r, "zeKernelCreate", "creating the kernel object of entry '%s'", m->entry);
    return TRD_OK;
}

/* Group size and the shared-local-memory argument are the same for every
 * launch of a module: they are set once per kernel handle. */
static trd_status_t zdrv_kernel_configure(struct zdrv_module *m, ze_kernel_handle_t k)
{
    const struct zdrv_api *api = m->dev->api;
    ze_result_t r = api->zeKernelSetGroupSize(k, m->group_size, 1, 1);
    if (r != ZE_RESULT_SUCCESS)
        return zdrv_fail(r, "zeKernelSetGroupSize", "setting the group size to (%u, 1, 1)", m->group_size);
    if (m->slm_arg &&
        (r = api->zeKernelSetArgumentValue(k, m->num_params + 2, m->shared, NULL)) != ZE_RESULT_SUCCESS)
        return zdrv_fail(r, "zeKernelSetArgumentValue", "setting the %u-byte shared-local-memory argument",
                         m->shared);
    return TRD_OK;
}

trd_status_t zdrv_kernel_new(struct zdrv_module *m, ze_kernel_handle_t *out)
{
    ze_kernel_handle_t k;
    trd_status_t st = zdrv_kernel_create(m, &k);
    if (st != TRD_OK)
        return st;
    if ((st = zdrv_kernel_configure(m, k)) != TRD_OK) {
        m->dev->api->zeKernelDestroy(k);
        return st;
    }
    *out = k;
    return TRD_OK;
}

/* Decides from numKernelArgs whether the kernel takes the shared-local-memory
 * argument; fails when the count fits no Triton launch. */
static trd_status_t zdrv_check_args(struct zdrv_module *m, uint32_t nargs)
{
    uint32_t expected = m->num_params + 2;
    if (nargs == 0) { /* not reported: Triton's rule of shared > 0 */
        m->slm_arg = m->shared > 0;
        return TRD_OK;
    }
    if (nargs == expected) {
        m->slm_arg = 0; /* shared memory, if any, is allocated statically in the module */
        return TRD_OK;
    }
    if (nargs == expected + 1 && m->shared > 0) {
        m->slm_arg = 1;
        return TRD_OK;
    }
    return trd_drv_error(TRD_ERR_FORMAT,
                            "the kernel takes %u arguments, but a Triton launch passes %u: its %u parameters, the "
                            "global and profile scratch pointers%s (is the signature right?)",
                            nargs, expected + (m->shared > 0 ? 1 : 0), m->num_params,
                            m->shared > 0 ? ", and a shared-local-memory argument" : "");
}

static int zdrv_has_sub_group_size(const ze_device_compute_properties_t *c, uint32_t size)
{
    uint32_t n = c->numSubGroupSizes < ZE_SUBGROUPSIZE_COUNT ? c->numSubGroupSizes : ZE_SUBGROUPSIZE_COUNT;
    if (n == 0)
        return 1; /* not reported: let the build decide */
    for (uint32_t i = 0; i < n; i++)
        if (c->subGroupSizes[i] == size)
            return 1;
    return 0;
}

/* Checks the launch geometry the metadata implies against the device. */
static trd_status_t zdrv_check_geometry(const struct zdrv_device *dev, const trd_driver_module_desc_t *desc)
{
    const ze_device_compute_properties_t *c = &dev->info->compute;
    if (desc->num_ctas != 1)
        return trd_drv_error(TRD_ERR_UNSUPPORTED, "num_ctas is %u: Intel GPUs run num_ctas 1 only", desc->num_ctas);
    if (!zdrv_has_sub_group_size(c, desc->warp_size))
        return trd_drv_error(TRD_ERR_UNSUPPORTED,
                                "the kernel was compiled for %u threads per warp, not a sub-group size of levelzero:%u",
                                desc->warp_size, dev->ordinal);
    uint64_t group = (uint64_t)desc->num_warps * desc->warp_size;
    if (group > c->maxGroupSizeX || group > c->maxTotalGroupSize)
        return trd_drv_error(TRD_ERR_LIMIT,
                                "num_warps %u x threads_per_warp %u = %llu work-items per group, more than "
                                "levelzero:%u allows (%u in x, %u in all)",
                                desc->num_warps, desc->warp_size, (unsigned long long)group, dev->ordinal,
                                c->maxGroupSizeX, c->maxTotalGroupSize);
    if (desc->shared > c->maxSharedLocalMemory)
        return trd_drv_error(TRD_ERR_LIMIT, "the kernel needs %u bytes of shared local memory; levelzero:%u has %u",
                                desc->shared, dev->ordinal, c->maxSharedLocalMemory);
    return TRD_OK;
}

static char *zdrv_dup_str(const char *s)
{
    size_t n = strlen(s ? s : "");
    char *p = malloc(n + 1);
    if (p)
        memcpy(p, s ? s : "", n + 1);
    return p;
}

void zdrv_module_unload(void *module)
{
    struct zdrv_module *m = module;
    if (!m)
        return;
    const struct zdrv_api *api = m->dev->api;
    /* queued launches may still reference the kernels and the module */
    zdrv_device_drain(m->dev, "before unloading a module");
    for (int i = ZDRV_KSLOTS - 1; i >= 0; i--) {
        if (m->slots[i].kernel)
            api->zeKernelDestroy(m->slots[i].kernel);
        pthread_mutex_destroy(&m->slots[i].lock);
    }
    if (m->module)
        api->zeModuleDestroy(m->module);
    for (uint32_t i = m->nlibs; i-- > 0;)
        api->zeModuleDestroy(m->libs[i]);
    free(m->libs);
    free(m->entry);
    free(m);
}

trd_status_t zdrv_module_load(void *device, const trd_driver_module_desc_t *desc, void **out, trd_load_info_t *info)
{
    struct zdrv_device *dev = device;
    const struct zdrv_api *api = dev->api;
    ze_module_format_t format;
    if (desc->format == TRD_FORMAT_SPIRV)
        format = ZE_MODULE_FORMAT_IL_SPIRV;
    else if (desc->format == TRD_FORMAT_ZEBIN)
        format = ZE_MODULE_FORMAT_NATIVE;
    else
        return trd_drv_error(TRD_ERR_UNSUPPORTED,
                                "the levelzero driver loads SPIR-V and zebin images, not format %d", desc->format);
    trd_status_t st = zdrv_check_geometry(dev, desc);
    if (st != TRD_OK)
        return st;
    struct zdrv_module *m = calloc(1, sizeof *m);
    if (!m)
        return trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory");
    for (int i = 0; i < ZDRV_KSLOTS; i++)
        pthread_mutex_init(&m->slots[i].lock, NULL);
    m->dev = dev;
    m->num_params = desc->num_params;
    m->group_size = desc->num_warps * desc->warp_size;
    m->shared = desc->shared;
    snprintf(m->label, sizeof m->label, "%s on levelzero:%u", desc->label, dev->ordinal);
    trd_scratch_spec_from(&m->scratch, desc, m->label);
    m->entry = zdrv_dup_str(desc->entry);
    char *flags = NULL;
    uint32_t grf = 0;
    if (!m->entry) {
        st = trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory");
        goto fail;
    }
    if ((st = zdrv_build_flags(desc, &flags, &grf)) != TRD_OK)
        goto fail;
    if ((st = zdrv_build_libs(m, desc, flags)) != TRD_OK)
        goto fail;
    if ((st = zdrv_create_module(dev, format, desc->image, (size_t)desc->image_size, flags, "the kernel",
                                 &m->module)) != TRD_OK)
        goto fail;
    if (m->nlibs && (st = zdrv_link_libs(m)) != TRD_OK)
        goto fail;
    ze_kernel_handle_t k;
    if ((st = zdrv_kernel_create(m, &k)) != TRD_OK)
        goto fail;
    m->slots[0].kernel = k;
    ze_kernel_properties_t kp = {.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES};
    ze_result_t r = api->zeKernelGetProperties(k, &kp);
    if (r != ZE_RESULT_SUCCESS) {
        st = zdrv_fail(r, "zeKernelGetProperties", "reading the kernel's properties");
        goto fail;
    }
    if (kp.requiredSubgroupSize && kp.requiredSubgroupSize != desc->warp_size) {
        st = trd_drv_error(TRD_ERR_FORMAT,
                              "the kernel requires sub-group size %u, but its metadata says %u threads per warp: the "
                              "group size would be wrong",
                              kp.requiredSubgroupSize, desc->warp_size);
        goto fail;
    }
    if ((st = zdrv_check_args(m, kp.numKernelArgs)) != TRD_OK || (st = zdrv_kernel_configure(m, k)) != TRD_OK)
        goto fail;
    /* Spills in Triton's unit (CUDA's LOCAL_SIZE_BYTES / 4): dwords per
     * work-item. spillMemSize is bytes per hardware thread, which runs a
     * sub-group, so divide by 4 x the sub-group size (as Triton's Intel
     * driver.c does); the byte count itself when the size is unknown. */
    uint32_t simd = kp.requiredSubgroupSize ? kp.requiredSubgroupSize
                    : kp.maxSubgroupSize    ? kp.maxSubgroupSize
                                            : desc->warp_size;
    info->spills = simd ? kp.spillMemSize / (4 * simd) : kp.spillMemSize;
    info->registers = grf; /* GRF registers per thread when the flags fix the mode, else 0 (unknown) */
    info->max_threads_per_block = dev->info->compute.maxTotalGroupSize;
    info->from_cache = 0;
    free(flags);
    *out = m;
    return TRD_OK;
fail:
    free(flags);
    zdrv_module_unload(m);
    return st;
}
