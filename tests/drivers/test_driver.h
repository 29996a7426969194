/* SPDX-License-Identifier: Apache-2.0 */
/* test_driver.h: what the test driver modules (test_driver.c) record for the
 * tests, which read it through the exported symbol td_record. */
#ifndef TRD_TESTS_TEST_DRIVER_H
#define TRD_TESTS_TEST_DRIVER_H

struct td_record {
    unsigned loads, launches, unloads;
    char options[8192];          /* trd_options_serialize of the last load */
    char arch[32];               /* the device arch the last load was for */
    unsigned ordinal;            /* the device of the last load */
    unsigned num_warps, num_ctas, shared, warp_size, flags, num_params;
    unsigned grid[3];
    unsigned nparams;
    unsigned sizes[64];
    unsigned char bytes[64][16]; /* each parameter's value bytes */
    int had_native;              /* the last launch came with a native stream */
    void *native;
};

#endif
