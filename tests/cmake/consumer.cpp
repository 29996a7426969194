// SPDX-License-Identifier: Apache-2.0
// The C++ twin of consumer.c: trident.h compiles as C++ and links through trident::trident. Prints
// "trident VERSION: N devices, host:0 NAME".
#include <cstdio>
#include <memory>
#include <string>

#include <trident/trident.h>

int main() {
    if (std::string(trd_version_string()) != TRD_VERSION_STRING) {
        std::fprintf(stderr, "consumer: header %s, library %s\n", TRD_VERSION_STRING, trd_version_string());
        return 1;
    }
    trd_runtime_t *raw = nullptr;
    if (trd_runtime_create(nullptr, &raw) != TRD_OK) {
        std::fprintf(stderr, "consumer: %s\n", trd_error_message());
        return 1;
    }
    std::unique_ptr<trd_runtime_t, decltype(&trd_runtime_destroy)> rt(raw, trd_runtime_destroy);
    uint32_t n = 0;
    trd_device_t *dev = nullptr;
    trd_device_props_t props{};
    props.struct_size = sizeof props;
    if (trd_runtime_device_count(rt.get(), &n) != TRD_OK || trd_runtime_device_find(rt.get(), "host:0", &dev) != TRD_OK ||
        trd_device_get_props(dev, &props) != TRD_OK) {
        std::fprintf(stderr, "consumer: %s\n", trd_error_message());
        return 1;
    }
    std::printf("trident %s: %u devices, host:0 %s\n", trd_version_string(), n, props.name);
    return 0;
}
