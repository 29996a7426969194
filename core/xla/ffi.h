/* ffi.h: what the XLA handler's files share. */
#ifndef TRD_CORE_XLA_FFI_H
#define TRD_CORE_XLA_FFI_H

#include <xla/ffi/api/c_api.h>

#include <trident/xla.h>

#include "core/internal.h"

/* Reads the call's attributes. Each getter returns 1 and fills its output when
 * the attribute is there with the right type; else 0 and `err` says why. */
struct xla_attrs {
    const XLA_FFI_Attrs *attrs;
    char err[512];
};

int xla_attr_string(struct xla_attrs *a, const char *name, const char **data, size_t *len);
/* An array of integers (S8 .. S64, U8 .. U64), converted to int64. */
int xla_attr_ints(struct xla_attrs *a, const char *name, int64_t *out, size_t cap, size_t *count);
int xla_attr_int(struct xla_attrs *a, const char *name, int64_t *out);

/* XLA dtype <-> trident scalar type. */
int32_t xla_dtype_scalar(XLA_FFI_DataType t);
size_t xla_dtype_bytes(XLA_FFI_DataType t);
const char *xla_dtype_name(XLA_FFI_DataType t);

/* tma.c: tensor-map parameters (arg_kind 4). */
#define XLA_TMA_MAX 16  /* per call */

struct xla_tma {
    uint32_t param;               /* the launch parameter it fills */
    int32_t base_kind;            /* 0 operand, 1 result */
    int64_t index;                /* of the base buffer */
    int fp4_padded;
    trd_tensor_map_desc_t desc;   /* all but the base address; label points at `label` */
    char label[160];              /* "kernel 'k' argument 3 'a_desc'" */
};

/* 128-byte maps as kernel parameters take them: 64-byte aligned. */
typedef struct {
    _Alignas(64) unsigned char bytes[TRD_TENSOR_MAP_BYTES];
} xla_tma_bytes;

/* INSTANTIATE: decodes and checks one record of the `tma` attribute (TRD_XLA_TMA_FIELDS values) for launch
 * parameter `param` of `kernel` (named pname, or NULL), whose base is buffer `index` (arg_index). */
trd_status_t xla_tma_decode(const int64_t *record, const char *kernel, uint32_t param, const char *pname,
                            int64_t index, struct xla_tma *out);
/* First EXECUTE on a device: the driver encodes tensor maps; the base buffer exists, has the map's element
 * size and holds every element the map reaches. */
trd_status_t xla_tma_check(XLA_FFI_CallFrame *f, const struct xla_tma *t, const trd_driver_ops_t *ops,
                           const char *device);
/* EXECUTE: encodes the n maps from the buffers' addresses into out[] and points params[] at them. */
trd_status_t xla_tma_encode(XLA_FFI_CallFrame *f, const struct xla_tma *maps, uint32_t n, const trd_driver_ops_t *ops,
                            void *device, xla_tma_bytes *out, void **params);

/* 1 when the call has the attribute (of any type). */
int xla_attr_present(struct xla_attrs *a, const char *name);

#endif
