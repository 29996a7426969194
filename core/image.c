/* SPDX-License-Identifier: Apache-2.0 */
/* image.c: kernel images: the format a file's bytes suggest, whether an image is whole, and which image suits
 * which device (the table of formats, their names and extensions, is base/formats.c). */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

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
    return filename ? trd_format_of_extension(filename) : TRD_FORMAT_UNKNOWN;
}

/* 0, with the reason written to why. */
static int refuse(char *why, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int refuse(char *why, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, cap, fmt, ap);
    va_end(ap);
    return 0;
}

static uint64_t le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* An ELF64 of `machine` whose program and section header tables and every section with bytes lie inside the file,
 * and whose bytes name the kernel (a NUL-terminated symbol name). */
static int elf_check(const unsigned char *b, size_t size, unsigned machine, const char *name, char *why, size_t cap)
{
    if (size < 64 || memcmp(b, "\x7f" "ELF", 4) != 0)
        return refuse(why, cap, "not an ELF file (%zu bytes)", size);
    if (b[4] != 2 || b[5] != 1)
        return refuse(why, cap, "not a 64-bit little-endian ELF");
    if (le(b + 18, 2) != machine)
        return refuse(why, cap, "an ELF for machine %u, not %u", (unsigned)le(b + 18, 2), machine);
    uint64_t phoff = le(b + 32, 8), shoff = le(b + 40, 8);
    uint64_t phent = le(b + 54, 2), phnum = le(b + 56, 2), shent = le(b + 58, 2), shnum = le(b + 60, 2);
    if (phnum && (phent < 56 || phoff > size || phent * phnum > size - phoff))
        return refuse(why, cap, "truncated: its program header table ends past its %zu bytes", size);
    if (!shnum)
        return refuse(why, cap, "an ELF without sections");
    if (shent < 64 || shoff > size || shent * shnum > size - shoff)
        return refuse(why, cap, "truncated: its section header table ends past its %zu bytes", size);
    for (uint64_t i = 0; i < shnum; i++) {
        const unsigned char *sh = b + shoff + i * shent;
        uint64_t off = le(sh + 24, 8), len = le(sh + 32, 8);
        if (le(sh + 4, 4) != 8 /* SHT_NOBITS */ && (off > size || len > size - off))
            return refuse(why, cap, "truncated: section %llu ends past its %zu bytes", (unsigned long long)i,
                          size);
    }
    if (!memmem(b, size, name, strlen(name) + 1))
        return refuse(why, cap, "it does not name the kernel '%s'", name);
    return 1;
}

/* PTX text with .version and .target directives, the kernel's .entry and balanced braces. */
static int ptx_check(const char *t, size_t size, const char *name, char *why, size_t cap)
{
    while (size && t[size - 1] == '\0')
        size--;
    if (memchr(t, '\0', size))
        return refuse(why, cap, "not PTX: it holds NUL bytes");
    long depth = 0;
    for (size_t i = 0; i < size; i++)
        depth += t[i] == '{' ? 1 : t[i] == '}' ? -1 : 0;
    if (!memmem(t, size, ".version", 8) || !memmem(t, size, ".target", 7))
        return refuse(why, cap, "not PTX: no .version or .target directive");
    size_t n = strlen(name);
    int entry = 0;
    for (const char *p = t; !entry && (p = memmem(p, size - (size_t)(p - t), ".entry", 6)) != NULL; p += 6) {
        const char *q = p + 6, *end = t + size;
        while (q < end && isspace((unsigned char)*q))
            q++;
        if ((size_t)(end - q) > n && memcmp(q, name, n) == 0) {
            for (q += n; q < end && isspace((unsigned char)*q); q++)
                ;
            entry = q < end && *q == '(';
        }
    }
    if (!entry)
        return refuse(why, cap, "no .entry of the kernel '%s' (truncated, or another kernel's)", name);
    if (depth != 0)
        return refuse(why, cap, "truncated: its braces do not balance");
    return 1;
}

int trd_image_check(int32_t format, const void *data, size_t size, const char *name, char *why, size_t cap)
{
    const unsigned char *b = data;
    if (!size)
        return refuse(why, cap, "empty");
    switch (format) {
    case TRD_FORMAT_CUBIN: return elf_check(b, size, 190, name, why, cap);
    case TRD_FORMAT_HSACO: return elf_check(b, size, 224, name, why, cap);
    case TRD_FORMAT_ZEBIN: return elf_check(b, size, 205, name, why, cap);
    case TRD_FORMAT_PTX: return ptx_check(data, size, name, why, cap);
    case TRD_FORMAT_SPIRV:
        if (size < 20 || size % 4 || le(b, 4) != 0x07230203u)
            return refuse(why, cap, "not SPIR-V (no magic, or not whole 32-bit words)");
        return 1;
    default: return 1;
    }
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
