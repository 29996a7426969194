/* SPDX-License-Identifier: Apache-2.0 */
/* version.c: what the loaded library is. */
#include <stdlib.h>

#include "core/internal.h"

TRD_API uint32_t trd_version(void)
{
    return TRD_VERSION;
}

TRD_API const char *trd_version_string(void)
{
    return TRD_VERSION_STRING;
}

TRD_API uint32_t trd_abi_version(void)
{
    return TRD_ABI_VERSION;
}

TRD_API void trd_free(void *ptr)
{
    free(ptr);
}
