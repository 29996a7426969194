/* fuzz_signature: signatures in Triton's notation and in Triton IR. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct trd_signature sig;
    if (trd_signature_from_ttir((const char *)data, size, NULL, "fuzz", &sig) == TRD_OK)
        trd_signature_free(&sig);
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    if (trd_signature_parse(text, "fuzz", &sig) == TRD_OK)
        trd_signature_free(&sig);
    free(text);
    return 0;
}
