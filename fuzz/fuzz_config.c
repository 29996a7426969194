/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_config: trident.ini through inih and the option tables. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

static void quiet(void *user, int32_t level, const char *file, uint32_t line, const char *message)
{
    (void)user;
    (void)level;
    (void)file;
    (void)line;
    (void)message;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    trd_config_t *c;
    if (trd_config_create(0, &c) == TRD_OK) {
        trd_config_set_diag(c, quiet, NULL);
        trd_config_load_string(c, text, "fuzz.ini");
        trd_config_destroy(c);
    }
    free(text);
    return 0;
}
