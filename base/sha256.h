/* SPDX-License-Identifier: Apache-2.0 */
/* sha256.h: SHA-256 (FIPS 180-4) for image hashes and cache keys. No state: the driver modules and libtrident_xla
 * link it too. */
#ifndef TRD_BASE_SHA256_H
#define TRD_BASE_SHA256_H

#include <stddef.h>
#include <stdint.h>

void trd_sha256(const void *data, size_t len, uint8_t out[32]);
void trd_hex(const uint8_t *bytes, size_t n, char *out); /* out: 2n+1 */

#endif
