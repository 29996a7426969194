/* SPDX-License-Identifier: Apache-2.0 */
/* ffi.c: XLA custom-call handlers (typed FFI, a stage bundle).
 *
 * INSTANTIATE (once per executable) decodes the attributes into a call state:
 * the kernel of each candidate (one, or an autotuned call's several; bundles
 * shared through a content-addressed cache), the grids, where each kernel
 * parameter comes from, the scalars already packed. The first EXECUTE on a
 * device loads the kernel for it (its own driver, so a host with several GPU
 * models works), checks the buffers' types once, and for an autotuned call
 * chooses a candidate (autotune.c). After that EXECUTE copies the packed
 * parameters to the stack, puts the buffer addresses in, encodes the launched
 * candidate's tensor maps there (tma.c), zeroes what must be zeroed and
 * launches on XLA's stream: no parsing, no hashing, no lock, no heap
 * allocation, nothing that waits, so that it can be captured into a CUDA
 * graph.
 *
 * Everything goes through libtrident's public API: kernels prepared for a
 * device (trd_kernel_prepare, which checks the grid and overflow-checks the
 * scratch bytes) and launched from the packed parameters on XLA's stream
 * (trd_prepared_launch), trd_device_memset for zeroing, trd_stream_wrap over
 * XLA's stream once per stream, trd_device_tensor_map_encode for tensor maps,
 * trd_stream_capturing for graph captures.
 *
 * The files: ffi.c (this one) the FFI's errors and metadata; decode.c
 * INSTANTIATE's attribute decoding into the call state; run.c EXECUTE, with
 * the per-device slots and their stream wraps; cache.c the kernel cache and
 * the state type's registry; autotune.c an autotuned call's choice (through
 * libtrident's tuner); tma.c tensor maps; attrs.c attribute getters;
 * record.c the RECORD stage. */
#include <stdio.h>
#include <string.h>

#include "xla/ffi.h"

/* -------------------------------------------------------------- errors */

XLA_FFI_Error *xla_error(const XLA_FFI_Api *api, XLA_FFI_Error_Code code, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    XLA_FFI_Error_Create_Args a = {XLA_FFI_Error_Create_Args_STRUCT_SIZE, NULL, msg, code};
    return api->XLA_FFI_Error_Create(&a);
}

XLA_FFI_Error_Code xla_errc(trd_status_t st)
{
    switch (st) {
    case TRD_ERR_INVALID_ARGUMENT:
    case TRD_ERR_FORMAT: return XLA_FFI_Error_Code_INVALID_ARGUMENT;
    case TRD_ERR_NOT_FOUND:
    case TRD_ERR_NO_DEVICE: return XLA_FFI_Error_Code_NOT_FOUND;
    case TRD_ERR_UNSUPPORTED: return XLA_FFI_Error_Code_UNIMPLEMENTED;
    case TRD_ERR_NO_MEMORY:
    case TRD_ERR_LIMIT: return XLA_FFI_Error_Code_RESOURCE_EXHAUSTED;
    default: return XLA_FFI_Error_Code_INTERNAL;
    }
}

trd_status_t xla_wrap(trd_status_t st, const char *fmt, ...)
{
    char prefix[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    return xla_fail(st, "%s: %s", prefix, trd_error_message());
}

/* ------------------------------------------------------------ metadata */

const char *xla_platform_name(int platform)
{
    return platform == PLATFORM_CUDA ? "cuda" : platform == PLATFORM_ROCM ? "rocm" : "cpu";
}

const char *xla_backend_of(int platform)
{
    return platform == PLATFORM_CUDA ? "cuda" : platform == PLATFORM_ROCM ? "hip" : "host";
}

int xla_api_negotiate(const XLA_FFI_Api *api, XLA_FFI_Api_Version *out, char *err, size_t cap)
{
    int major = api->api_version.major_version, minor = api->api_version.minor_version;
    if (major != XLA_FFI_API_MAJOR || minor < XLA_API_MINOR_OLDEST) {
        snprintf(err, cap,
                 "trident: this XLA speaks FFI API %d.%d; libtrident_xla was built against API %d.%d and works with "
                 "%d.%d to %d.%d (jaxlib 0.10.2 or newer)",
                 major, minor, XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR, XLA_FFI_API_MAJOR, XLA_API_MINOR_OLDEST,
                 XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR);
        return 0;
    }
    *out = (XLA_FFI_Api_Version){XLA_FFI_Api_Version_STRUCT_SIZE, NULL, XLA_FFI_API_MAJOR,
                                 XLA_MIN(minor, XLA_FFI_API_MINOR)};
    return 1;
}

/* The runtime's API table of each platform, from its metadata query at registration: the CUDA plugin's own (it
 * keeps its own handler registry), through which record.c registers the record bundle. */
_Atomic(const XLA_FFI_Api *) xla_platform_api[PLATFORM_COUNT];

int xla_metadata_query(XLA_FFI_CallFrame *f, int platform, int constructs_state, XLA_FFI_Error **out)
{
    xla_internal_ext *e = f->extension_start;
    while (e && e->type != XLA_FFI_Extension_Metadata)
        e = e->next;
    if (!e)
        return 0;
    XLA_FFI_Metadata *m = ((XLA_FFI_Metadata_Extension *)e)->metadata;
    char why[256];
    if (!xla_api_negotiate(f->api, &m->api_version, why, sizeof why)) {
        *out = xla_error(f->api, XLA_FFI_Error_Code_FAILED_PRECONDITION, "%s", why);
        return 1;
    }
    atomic_store(&xla_platform_api[platform], f->api);
    m->traits = XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE;
    *out = NULL;
    if (m->struct_size >= offsetof(XLA_FFI_Metadata, state_type_id) + sizeof(XLA_FFI_TypeId)) {
        if (constructs_state && xla_state_id[platform].type_id == 0)
            *out = xla_error(f->api, XLA_FFI_Error_Code_FAILED_PRECONDITION,
                         "trident: register the state type (trd_xla_%s_type_id) with jax.ffi.register_ffi_type before "
                         "the handlers",
                         xla_platform_name(platform));
        m->state_type_id = constructs_state ? xla_state_id[platform] : (XLA_FFI_TypeId){0};
    }
    return 1;
}
