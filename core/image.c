/* SPDX-License-Identifier: Apache-2.0 */
/* image.c: kernel image formats, and which image suits which device. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

static const struct {
    int32_t format;
    const char *name;
    const char *backend;
    const char *ext;
} formats[] = {
    {TRD_FORMAT_CUBIN, "cubin", "cuda", ".cubin"},
    {TRD_FORMAT_PTX, "ptx", "cuda", ".ptx"},
    {TRD_FORMAT_FATBIN, "fatbin", "cuda", ".fatbin"},
    {TRD_FORMAT_HSACO, "hsaco", "hip", ".hsaco"},
    {TRD_FORMAT_SPIRV, "spirv", "xpu", ".spv"},
    {TRD_FORMAT_ZEBIN, "zebin", "xpu", ".zebin"},
    {TRD_FORMAT_HOST_SO, "so", "host", ".so"},
};

const char *trd_format_name(int32_t format)
{
    for (size_t i = 0; i < TRD_ARRAY_SIZE(formats); i++)
        if (formats[i].format == format)
            return formats[i].name;
    return "unknown";
}

int32_t trd_format_parse(const char *name)
{
    if (!name)
        return TRD_FORMAT_UNKNOWN;
    for (size_t i = 0; i < TRD_ARRAY_SIZE(formats); i++)
        if (strcmp(formats[i].name, name) == 0)
            return formats[i].format;
    if (strcmp(name, "spv") == 0)
        return TRD_FORMAT_SPIRV;
    if (strcmp(name, "host") == 0 || strcmp(name, "host_so") == 0)
        return TRD_FORMAT_HOST_SO;
    return TRD_FORMAT_UNKNOWN;
}

const char *trd_format_backend(int32_t format)
{
    for (size_t i = 0; i < TRD_ARRAY_SIZE(formats); i++)
        if (formats[i].format == format)
            return formats[i].backend;
    return "";
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

int32_t trd_format_sniff(const void *data, size_t size, const char *filename)
{
    const unsigned char *b = data;
    if (size >= 20 && b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F' && b[5] == 1) {
        unsigned machine = (unsigned)b[18] | (unsigned)b[19] << 8;
        switch (machine) {
        case 190: return TRD_FORMAT_CUBIN;   /* EM_CUDA */
        case 224: return TRD_FORMAT_HSACO;   /* EM_AMDGPU */
        case 205: return TRD_FORMAT_ZEBIN;   /* EM_INTELGT */
        case 62:                             /* EM_X86_64 */
        case 183:                            /* EM_AARCH64 */
        case 243:                            /* EM_RISCV */
            return TRD_FORMAT_HOST_SO;
        default: break;
        }
    }
    if (size >= 4) {
        uint32_t magic = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
        if (magic == 0xBA55ED50u)
            return TRD_FORMAT_FATBIN;
        if (magic == 0x07230203u)
            return TRD_FORMAT_SPIRV;
    }
    /* PTX is text with a .version directive near the top. */
    if (size > 0) {
        size_t n = TRD_MIN(size, (size_t)4096);
        for (size_t i = 0; i + 8 <= n; i++)
            if (memcmp(b + i, ".version", 8) == 0 && (i == 0 || b[i - 1] == '\n'))
                return TRD_FORMAT_PTX;
    }
    if (filename) {
        for (size_t i = 0; i < TRD_ARRAY_SIZE(formats); i++)
            if (ends_with(filename, formats[i].ext))
                return formats[i].format;
    }
    return TRD_FORMAT_UNKNOWN;
}

void trd_target_free(struct trd_target *t)
{
    if (!t)
        return;
    free(t->image);
    trd_meta_free(&t->meta);
    memset(t, 0, sizeof *t);
}

/* "sm90", "sm_90a", "90" -> 90; -1 when not a CUDA arch. */
static int cuda_cc(const char *arch)
{
    if (!arch)
        return -1;
    if (strncmp(arch, "sm", 2) == 0)
        arch += 2;
    if (*arch == '_')
        arch++;
    if (!isdigit((unsigned char)*arch))
        return -1;
    int v = 0;
    while (isdigit((unsigned char)*arch) && v < 100000)
        v = v * 10 + (*arch++ - '0');
    return v;
}

int trd_target_rank(const struct trd_target *t, const trd_device_props_t *props)
{
    const char *backend = t->meta.backend;
    if (!backend || !props->backend || strcmp(backend, props->backend) != 0)
        return 0;
    const char *arch = t->meta.arch ? t->meta.arch : "";
    switch (t->format) {
    case TRD_FORMAT_HOST_SO:
        return (!*arch || strcmp(arch, props->arch) == 0) ? 4 : 0;
    case TRD_FORMAT_CUBIN: {
        int img = cuda_cc(arch), dev = cuda_cc(props->arch);
        if (img < 0 || dev < 0)
            return 0;
        if (img == dev)
            return 4;
        /* sm_XY cubins run on the same major with a newer minor, except the
         * arch-specific ("a") code Triton emits from sm90 on. */
        if (img < 90 && img / 10 == dev / 10 && img % 10 <= dev % 10)
            return 3;
        return 0;
    }
    case TRD_FORMAT_FATBIN:
        return 3;
    case TRD_FORMAT_PTX: {
        int img = cuda_cc(arch), dev = cuda_cc(props->arch);
        if (img < 0 || *arch == '\0')
            return 2; /* unknown target: let the JIT decide */
        if (img >= 90)
            return img == dev ? 2 : 0;
        return img <= dev ? 2 : 0;
    }
    case TRD_FORMAT_HSACO:
        return strcmp(arch, props->arch) == 0 ? 4 : 0;
    case TRD_FORMAT_ZEBIN:
        return (!*arch || strcmp(arch, props->arch) == 0) ? 4 : 0;
    case TRD_FORMAT_SPIRV:
        return 2;
    default:
        return 0;
    }
}
