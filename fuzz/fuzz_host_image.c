/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_host_image: the check a host kernel image passes before dlopen, and
 * the signature it declares (TRD_HOST_KERNEL_SIGNATURE's note), read without
 * loading it. What the reader returns must be a signature that reads back the
 * same from its canonical text. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "drivers/host/host.h"

static void check_declared(const uint8_t *data, size_t size, const char *entry)
{
    struct trd_signature sig, again;
    int found = -1;
    if (trd_host_signature_read(data, size, entry, "fuzz", &sig, &found) != TRD_OK) {
        if (found != -1)
            abort(); /* written on success only */
        return;
    }
    if (found != 0 && found != 1)
        abort();
    if (!found)
        return;
    if (!sig.canonical || sig.num_params > sig.count || trd_signature_parse(sig.canonical, "again", &again) != TRD_OK)
        abort();
    if (strcmp(again.canonical, sig.canonical) != 0 || again.count != sig.count || again.num_params != sig.num_params)
        abort();
    trd_signature_free(&again);
    trd_signature_free(&sig);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    host_image_check(data, size, err, sizeof err);
    check_declared(data, size, "add_kernel");
    check_declared(data, size, "");
    return 0;
}
