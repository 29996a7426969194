/* SPDX-License-Identifier: Apache-2.0 */
/* formats.c: the table of kernel image formats (formats.h). */
#include <string.h>

#include "base/formats.h"
#include "base/util.h"

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

int32_t trd_format_of_extension(const char *filename)
{
    for (size_t i = 0; i < TRD_ARRAY_SIZE(formats); i++)
        if (ends_with(filename, formats[i].ext))
            return formats[i].format;
    return TRD_FORMAT_UNKNOWN;
}
