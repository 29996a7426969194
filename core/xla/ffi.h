/* ffi.h: what the XLA handler's files share. */
#ifndef TRD_CORE_XLA_FFI_H
#define TRD_CORE_XLA_FFI_H

#include <xla/ffi/api/c_api.h>

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

#endif
