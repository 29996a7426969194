/* SPDX-License-Identifier: Apache-2.0 */
/* checks.h: row helpers shared by the option tables. */
#ifndef TRD_OPTIONS_CHECKS_H
#define TRD_OPTIONS_CHECKS_H

#include "options/table.h"

const char *trd_check_pow2(const struct trd_options *o, const struct trd_value *v, char *buf, size_t cap);
const char *trd_check_no_control(const struct trd_options *o, const struct trd_value *v, char *buf, size_t cap);
const char *trd_check_extern_libs(const struct trd_options *o, const struct trd_value *v, char *buf, size_t cap);
/* instrumentation_mode: no control characters, and none of the modes whose kernels take launch
 * parameters trident does not pass (GSan's state pointers, Triton 3.8 and newer). */
const char *trd_check_instrumentation(const struct trd_options *o, const struct trd_value *v, char *buf, size_t cap);
/* gfx major version of the options' arch (gfx942 -> 9). 0 when not gfx. */
int trd_options_gfx(const struct trd_options *o, int *major);
/* Sorts items in place and fills v with them. */
int trd_value_set_sorted(struct trd_value *v, const char **items, uint32_t n);

#define TRD_NO_RANGE 1, 0

#endif
