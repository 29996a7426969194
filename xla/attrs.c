/* SPDX-License-Identifier: Apache-2.0 */
/* attrs.c: decoding the custom call's attributes (sorted by name by XLA), and
 * XLA's element types. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xla/ffi.h"

static int find(struct xla_attrs *a, const char *name, XLA_FFI_AttrType want, void **out)
{
    size_t n = strlen(name);
    for (int64_t i = 0; i < a->attrs->size; i++) {
        const XLA_FFI_ByteSpan *s = a->attrs->names[i];
        if (s->len != n || memcmp(s->ptr, name, n) != 0)
            continue;
        if (a->attrs->types[i] != want) {
            snprintf(a->err, sizeof a->err, "attribute '%s' has the wrong type (%d, expected %d)", name,
                     (int)a->attrs->types[i], (int)want);
            return 0;
        }
        *out = a->attrs->attrs[i];
        return 1;
    }
    snprintf(a->err, sizeof a->err, "attribute '%s' is missing", name);
    return 0;
}

int xla_attr_present(struct xla_attrs *a, const char *name)
{
    size_t n = strlen(name);
    for (int64_t i = 0; i < a->attrs->size; i++)
        if (a->attrs->names[i]->len == n && memcmp(a->attrs->names[i]->ptr, name, n) == 0)
            return 1;
    return 0;
}

int xla_attr_string(struct xla_attrs *a, const char *name, const char **data, size_t *len)
{
    void *p;
    if (!find(a, name, XLA_FFI_AttrType_STRING, &p))
        return 0;
    const XLA_FFI_ByteSpan *s = p;
    *data = s->ptr;
    *len = s->len;
    return 1;
}

static int int_of(XLA_FFI_DataType t, const void *base, size_t i, int64_t *out)
{
    switch (t) {
    case XLA_FFI_DataType_S8: *out = ((const int8_t *)base)[i]; return 1;
    case XLA_FFI_DataType_S16: *out = ((const int16_t *)base)[i]; return 1;
    case XLA_FFI_DataType_S32: *out = ((const int32_t *)base)[i]; return 1;
    case XLA_FFI_DataType_S64: *out = ((const int64_t *)base)[i]; return 1;
    case XLA_FFI_DataType_U8: *out = ((const uint8_t *)base)[i]; return 1;
    case XLA_FFI_DataType_U16: *out = ((const uint16_t *)base)[i]; return 1;
    case XLA_FFI_DataType_U32: *out = ((const uint32_t *)base)[i]; return 1;
    case XLA_FFI_DataType_U64: {
        uint64_t v = ((const uint64_t *)base)[i];
        if (v > INT64_MAX)
            return 0;
        *out = (int64_t)v;
        return 1;
    }
    default: return 0;
    }
}

static const XLA_FFI_Array *find_ints(struct xla_attrs *a, const char *name, size_t cap)
{
    void *p;
    if (!find(a, name, XLA_FFI_AttrType_ARRAY, &p))
        return NULL;
    const XLA_FFI_Array *arr = p;
    if (arr->size > cap) {
        snprintf(a->err, sizeof a->err, "attribute '%s' has %zu elements, more than %zu", name, arr->size, cap);
        return NULL;
    }
    return arr;
}

static int ints_of(struct xla_attrs *a, const char *name, const XLA_FFI_Array *arr, int64_t *out)
{
    for (size_t i = 0; i < arr->size; i++)
        if (!int_of(arr->dtype, arr->data, i, &out[i])) {
            snprintf(a->err, sizeof a->err, "attribute '%s' is not an array of integers (dtype %s)", name,
                     xla_dtype_name(arr->dtype));
            return 0;
        }
    return 1;
}

int xla_attr_ints(struct xla_attrs *a, const char *name, int64_t *out, size_t cap, size_t *count)
{
    const XLA_FFI_Array *arr = find_ints(a, name, cap);
    if (!arr || !ints_of(a, name, arr, out))
        return 0;
    *count = arr->size;
    return 1;
}

int xla_attr_ints_new(struct xla_attrs *a, const char *name, size_t cap, int64_t **out, size_t *count)
{
    const XLA_FFI_Array *arr = find_ints(a, name, cap);
    if (!arr)
        return 0;
    int64_t *v = malloc((arr->size ? arr->size : 1) * sizeof *v);
    if (!v) {
        snprintf(a->err, sizeof a->err, "out of memory reading attribute '%s' (%zu elements)", name, arr->size);
        return 0;
    }
    if (!ints_of(a, name, arr, v)) {
        free(v);
        return 0;
    }
    *out = v;
    *count = arr->size;
    return 1;
}

int xla_attr_int(struct xla_attrs *a, const char *name, int64_t *out)
{
    void *p;
    if (!find(a, name, XLA_FFI_AttrType_SCALAR, &p))
        return 0;
    const XLA_FFI_Scalar *s = p;
    if (!int_of(s->dtype, s->value, 0, out)) {
        snprintf(a->err, sizeof a->err, "attribute '%s' is not an integer (dtype %s)", name, xla_dtype_name(s->dtype));
        return 0;
    }
    return 1;
}

static const struct {
    XLA_FFI_DataType t;
    const char *triton;
    size_t bytes;
    const char *name;
} dtypes[] = {
    {XLA_FFI_DataType_PRED, "i1", 1, "bool"},          {XLA_FFI_DataType_S8, "i8", 1, "int8"},
    {XLA_FFI_DataType_S16, "i16", 2, "int16"},         {XLA_FFI_DataType_S32, "i32", 4, "int32"},
    {XLA_FFI_DataType_S64, "i64", 8, "int64"},         {XLA_FFI_DataType_U8, "u8", 1, "uint8"},
    {XLA_FFI_DataType_U16, "u16", 2, "uint16"},        {XLA_FFI_DataType_U32, "u32", 4, "uint32"},
    {XLA_FFI_DataType_U64, "u64", 8, "uint64"},        {XLA_FFI_DataType_F16, "fp16", 2, "float16"},
    {XLA_FFI_DataType_BF16, "bf16", 2, "bfloat16"},    {XLA_FFI_DataType_F32, "fp32", 4, "float32"},
    {XLA_FFI_DataType_F64, "fp64", 8, "float64"},      {XLA_FFI_DataType_F8E5M2, "fp8e5", 1, "float8_e5m2"},
    {XLA_FFI_DataType_F8E4M3FN, "fp8e4nv", 1, "float8_e4m3fn"},
    {XLA_FFI_DataType_F8E4M3B11FNUZ, "fp8e4b15", 1, "float8_e4m3b11fnuz"},
    {XLA_FFI_DataType_F8E4M3FNUZ, "fp8e4b8", 1, "float8_e4m3fnuz"},
    {XLA_FFI_DataType_F8E5M2FNUZ, "fp8e5b16", 1, "float8_e5m2fnuz"},
    {XLA_FFI_DataType_C64, NULL, 8, "complex64"},      {XLA_FFI_DataType_C128, NULL, 16, "complex128"},
};

const char *xla_dtype_triton(XLA_FFI_DataType t)
{
    for (size_t i = 0; i < XLA_ARRAY_SIZE(dtypes); i++)
        if (dtypes[i].t == t)
            return dtypes[i].triton;
    return NULL;
}

size_t xla_dtype_bytes(XLA_FFI_DataType t)
{
    for (size_t i = 0; i < XLA_ARRAY_SIZE(dtypes); i++)
        if (dtypes[i].t == t)
            return dtypes[i].bytes;
    return 0;
}

const char *xla_dtype_name(XLA_FFI_DataType t)
{
    for (size_t i = 0; i < XLA_ARRAY_SIZE(dtypes); i++)
        if (dtypes[i].t == t)
            return dtypes[i].name;
    return t == XLA_FFI_DataType_TOKEN ? "token" : "an unsupported type";
}
