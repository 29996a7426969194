/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_bundle: the kernel bundle reader on arbitrary bytes. */
#include <stddef.h>
#include <stdint.h>

#include "core/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct trd_kernel_src src;
    if (trd_bundle_read(data, size, "fuzz", &src) == TRD_OK)
        trd_kernel_src_free(&src);
    return 0;
}
