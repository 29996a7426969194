/* fuzz_host_image: the check a host kernel image passes before dlopen. */
#include <stddef.h>
#include <stdint.h>

#include "drivers/host/host.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    host_image_check(data, size, err, sizeof err);
    return 0;
}
