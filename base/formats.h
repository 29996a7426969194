/* SPDX-License-Identifier: Apache-2.0 */
/* formats.h: the kernel image formats (enum trd_image_format), each with its name, backend and file extension: the
 * one table of them. libtrident names, parses and recognises formats by it (core/image.c), the CLI links its own
 * copy (libtrident_pure) to name them, and python/tests/test_c_abi.py holds trident's Python table to it. */
#ifndef TRD_BASE_FORMATS_H
#define TRD_BASE_FORMATS_H

#include <stdint.h>

#include <trident/trident.h>

/* "cubin", "ptx", ...; "unknown" for TRD_FORMAT_UNKNOWN and any value that is no format. */
const char *trd_format_name(int32_t format);
/* The format a name gives (a table name, or "spv", "host", "host_so"), or TRD_FORMAT_UNKNOWN (also for NULL). */
int32_t trd_format_parse(const char *name);
/* The backend a format belongs to ("cuda" for cubin/ptx/fatbin ...); "" for none. */
const char *trd_format_backend(int32_t format);
/* The format whose file extension ends filename (".cubin", ".spv", ...), or TRD_FORMAT_UNKNOWN. */
int32_t trd_format_of_extension(const char *filename);

#endif
