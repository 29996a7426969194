// SPDX-License-Identifier: Apache-2.0
// A C program over an installed trident: the header's version is the library's, and a runtime finds the host
// device through the installed driver modules. Prints "trident VERSION: N devices, host:0 NAME".
#include <stdio.h>
#include <string.h>

#include <trident/trident.h>

int main(void) {
    if (strcmp(trd_version_string(), TRD_VERSION_STRING) != 0) {
        fprintf(stderr, "consumer: header %s, library %s\n", TRD_VERSION_STRING, trd_version_string());
        return 1;
    }
    trd_runtime_t *rt;
    trd_device_t *dev;
    uint32_t n;
    trd_device_props_t props = {.struct_size = sizeof props};
    if (trd_runtime_create(NULL, &rt) != TRD_OK) {
        fprintf(stderr, "consumer: %s\n", trd_error_message());
        return 1;
    }
    int rc = trd_runtime_device_count(rt, &n) != TRD_OK || trd_runtime_device_find(rt, "host:0", &dev) != TRD_OK ||
             trd_device_get_props(dev, &props) != TRD_OK;
    if (rc)
        fprintf(stderr, "consumer: %s\n", trd_error_message());
    else
        printf("trident %s: %u devices, host:0 %s\n", trd_version_string(), n, props.name);
    trd_runtime_destroy(rt);
    return rc;
}
