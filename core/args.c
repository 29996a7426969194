/* SPDX-License-Identifier: Apache-2.0 */
/* args.c: launch arguments checked against the kernel's signature, then
 * packed as the vendor APIs take them (an array of pointers to values). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"

static const char *kind_name(int32_t kind)
{
    switch (kind) {
    case TRD_ARG_INT: return "an integer";
    case TRD_ARG_UINT: return "an unsigned integer";
    case TRD_ARG_FLOAT: return "a float";
    case TRD_ARG_PTR: return "a pointer";
    case TRD_ARG_BUFFER: return "a buffer";
    case TRD_ARG_BITS: return "raw bits";
    default: return "an unknown kind";
    }
}

static trd_status_t arg_error(const trd_kernel_t *k, uint32_t index, const struct trd_param *p,
                              const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static trd_status_t arg_error(const trd_kernel_t *k, uint32_t index, const struct trd_param *p,
                              const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    char type[TRD_PARAM_TYPE_MAX];
    trd_param_type(p, type, sizeof type);
    return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "kernel '%s' argument %u%s%s%s (%s): %s", k->src.name, index,
                         p->name ? " '" : "", p->name ? p->name : "", p->name ? "'" : "", type, what);
}

static int is_float(int32_t type)
{
    return type == TRD_T_FP16 || type == TRD_T_BF16 || type == TRD_T_FP32 || type == TRD_T_FP64;
}

static int is_fp8(int32_t type)
{
    return type >= TRD_T_FP8E4NV && type <= TRD_T_FP8E5B16;
}

/* Packs one argument into *slot (8 bytes, zeroed). */
static trd_status_t pack_one(const trd_kernel_t *k, const trd_device_t *dev, uint32_t index,
                             const struct trd_param *p, const trd_arg_t *a, uint64_t *slot, void **param)
{
    *param = slot;
    if (p->type == TRD_T_PTR) {
        if (a->kind == TRD_ARG_PTR) {
            memcpy(slot, &a->value.ptr, sizeof(void *));
            return TRD_OK;
        }
        if (a->kind == TRD_ARG_BUFFER) {
            const trd_buffer_t *b = a->value.buffer;
            if (!b)
                return arg_error(k, index, p, "the buffer is NULL");
            if (b->dev != dev)
                return arg_error(k, index, p, "the buffer is on %s, the launch on %s", b->dev->uri, dev->uri);
            memcpy(slot, &b->ptr, sizeof(void *));
            return TRD_OK;
        }
        return arg_error(k, index, p, "expects a pointer or a buffer, got %s", kind_name(a->kind));
    }
    if (p->type == TRD_T_NVTMADESC) {
        if (a->kind != TRD_ARG_PTR || !a->value.ptr)
            return arg_error(k, index, p, "expects a pointer to a 128-byte CUtensorMap, got %s", kind_name(a->kind));
        *param = a->value.ptr;
        return TRD_OK;
    }
    int64_t lo;
    uint64_t hi;
    if (trd_scalar_int_range(p->type, &lo, &hi)) {
        uint64_t bits;
        if (a->kind == TRD_ARG_INT) {
            if (a->value.i < lo || (a->value.i >= 0 && (uint64_t)a->value.i > hi))
                return arg_error(k, index, p, "the value %lld is out of range (%lld .. %llu)", (long long)a->value.i,
                                 (long long)lo, (unsigned long long)hi);
            bits = (uint64_t)a->value.i;
        } else if (a->kind == TRD_ARG_UINT) {
            /* An explicitly unsigned value may fill the signless IR type of the same width. */
            uint64_t uhi = hi;
            if (lo < 0 && p->size < 8)
                uhi = (UINT64_C(1) << (8 * p->size)) - 1;
            else if (lo < 0)
                uhi = UINT64_MAX;
            if (a->value.u > uhi)
                return arg_error(k, index, p, "the value %llu is out of range (0 .. %llu)",
                                 (unsigned long long)a->value.u, (unsigned long long)uhi);
            bits = a->value.u;
        } else if (a->kind == TRD_ARG_BITS) {
            if (p->size < 8 && (a->value.bits >> (8 * p->size)))
                return arg_error(k, index, p, "the bit pattern 0x%llx has more than %u bytes",
                                 (unsigned long long)a->value.bits, p->size);
            bits = a->value.bits;
        } else {
            return arg_error(k, index, p, "expects an integer, got %s", kind_name(a->kind));
        }
        memcpy(slot, &bits, p->size); /* little-endian: the low bytes */
        return TRD_OK;
    }
    if (is_float(p->type) || is_fp8(p->type)) {
        if (a->kind == TRD_ARG_BITS) {
            if (p->size < 8 && (a->value.bits >> (8 * p->size)))
                return arg_error(k, index, p, "the bit pattern 0x%llx has more than %u bytes",
                                 (unsigned long long)a->value.bits, p->size);
            memcpy(slot, &a->value.bits, p->size);
            return TRD_OK;
        }
        if (is_fp8(p->type))
            return arg_error(k, index, p, "fp8 scalars are passed as raw bits (TRD_ARG_BITS), got %s",
                             kind_name(a->kind));
        double v;
        if (a->kind == TRD_ARG_FLOAT)
            v = a->value.f;
        else if (a->kind == TRD_ARG_INT)
            v = (double)a->value.i;
        else if (a->kind == TRD_ARG_UINT)
            v = (double)a->value.u;
        else
            return arg_error(k, index, p, "expects a float, got %s", kind_name(a->kind));
        double max = p->type == TRD_T_FP16 ? 65504.0 : p->type == TRD_T_BF16 ? 3.3895313892515355e38
                   : p->type == TRD_T_FP32 ? (double)FLT_MAX : DBL_MAX;
        if (isfinite(v) && fabs(v) > max && p->type != TRD_T_FP64)
            return arg_error(k, index, p, "the value %g overflows %s", v, trd_scalar_name(p->type));
        trd_float_store(p->type, v, slot);
        return TRD_OK;
    }
    return arg_error(k, index, p, "unsupported parameter type");
}

trd_status_t trd_grid_check(const uint32_t grid[3], const char *kernel)
{
    static const char axis[] = "xyz";
    for (int d = 0; d < 3; d++)
        if (grid[d] > INT32_MAX)
            return trd_error_set(TRD_ERR_INVALID_ARGUMENT,
                                 "kernel '%s': grid %ux%ux%u has %u programs along %c, more than 2^31-1 (Triton's "
                                 "program ids are i32)",
                                 kernel, grid[0], grid[1], grid[2], grid[d], axis[d]);
    uint64_t n;
    if (__builtin_mul_overflow((uint64_t)grid[0] * grid[1], (uint64_t)grid[2], &n) || n > INT64_MAX)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "kernel '%s': grid %ux%ux%u has more than 2^63-1 programs",
                             kernel, grid[0], grid[1], grid[2]);
    return TRD_OK;
}

trd_status_t trd_args_pack(const trd_kernel_t *k, const trd_device_t *dev, const trd_arg_t *args,
                           uint32_t num_args, uint64_t *storage, void **params, uint32_t *sizes)
{
    const struct trd_signature *sig = &k->src.sig;
    if (num_args != sig->num_params)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "kernel '%s' takes %u arguments (%s), the launch passes %u",
                             k->src.name, sig->num_params, sig->canonical, num_args);
    if (num_args && !args)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "kernel '%s': args is NULL", k->src.name);
    uint32_t j = 0;
    for (uint32_t i = 0; i < sig->count; i++) {
        const struct trd_param *p = &sig->params[i];
        if (p->type == TRD_T_CONSTEXPR)
            continue;
        storage[j] = 0;
        trd_status_t st = pack_one(k, dev, j, p, &args[j], &storage[j], &params[j]);
        if (st != TRD_OK)
            return st;
        sizes[j] = p->size;
        j++;
    }
    return TRD_OK;
}
