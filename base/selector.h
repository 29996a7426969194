/* SPDX-License-Identifier: Apache-2.0 */
/* selector.h: the device-selector grammar (trd_runtime_device_find's, [device "..."] sections'), over the public
 * device properties. */
#ifndef TRD_BASE_SELECTOR_H
#define TRD_BASE_SELECTOR_H

#include <trident/trident.h>

/* 1 when the device matches the selector, 0 when not, -1 when the selector is malformed (message set). */
int trd_props_match(const trd_device_props_t *props, const char *selector);

#endif
