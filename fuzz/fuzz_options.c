/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_options: option values of every type: the input is "backend\nname\nvalue". */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char *name = strchr(text, '\n');
    char *value = name ? strchr(name + 1, '\n') : NULL;
    if (value) {
        *name++ = '\0';
        *value++ = '\0';
        trd_options_t *o;
        if (trd_options_create(text, &o) == TRD_OK) {
            if (trd_options_set(o, name, value) == TRD_OK) {
                char buf[8192];
                size_t len;
                trd_options_get(o, name, buf, sizeof buf, &len);
                trd_options_serialize(o, buf, sizeof buf, &len);
            }
            trd_options_destroy(o);
        }
    }
    free(text);
    return 0;
}
