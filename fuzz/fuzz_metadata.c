/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_metadata: Triton's metadata JSON reader on arbitrary bytes. */
#include <stddef.h>
#include <stdint.h>

#include "core/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct trd_meta m;
    if (trd_meta_parse((const char *)data, size, "fuzz", &m) == TRD_OK)
        trd_meta_free(&m);
    return 0;
}
