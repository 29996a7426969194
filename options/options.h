/* SPDX-License-Identifier: Apache-2.0 */
/* options.h: what the layers above options/ use of it, beyond the public trd_options_* and trd_config_* API.
 * options/ knows devices only by their public properties. */
#ifndef TRD_OPTIONS_OPTIONS_H
#define TRD_OPTIONS_OPTIONS_H

#include <trident/trident.h>

/* Sets on dst every option src set explicitly (same backend). */
trd_status_t trd_options_merge(trd_options_t *dst, const trd_options_t *src);
/* Options for a device of these properties: derived defaults resolved from them, then the configuration's
 * [backend.X] and [device "..."] values applied (config may be NULL). */
trd_status_t trd_options_for_props(const trd_device_props_t *props, const trd_config_t *config,
                                   trd_options_t **out);
/* Why kernels compiled with this instrumentation_mode cannot be launched by trident, or NULL. */
const char *trd_instrumentation_unsupported(const char *mode);
/* A configured value's text, or NULL when unset. */
const char *trd_config_value(const trd_config_t *config, const char *section, const char *key);
/* The value of the first [device "..."] section matching a device's properties: NULL when none. */
const char *trd_config_device_value(const trd_config_t *config, const trd_device_props_t *props,
                                    const char *key, const char **origin);

#endif
