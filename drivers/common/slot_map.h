/* SPDX-License-Identifier: Apache-2.0 */
/* slot_map.h: the native-stream slot map. A driver keeps per-stream state
 * (the scratch arena) for streams trident does not own, keyed by the
 * vendor's handle: a slot is claimed once, with a compare-and-swap, on the
 * handle's first launch, and kept until the device closes (the caller may
 * reuse the handle; a freed one that the vendor hands out again finds its old
 * slot). No lock and no allocation: the launch path calls it. */
#ifndef TRD_DRIVERS_COMMON_SLOT_MAP_H
#define TRD_DRIVERS_COMMON_SLOT_MAP_H

#include <stdatomic.h>
#include <stdint.h>

#define TRD_SLOT_MAP_SLOTS 64

typedef struct trd_slot_map {
    _Atomic(uintptr_t) key[TRD_SLOT_MAP_SLOTS]; /* 0: free */
} trd_slot_map_t;

void trd_slot_map_init(trd_slot_map_t *m);
/* The slot of handle (NULL, a default stream, is a handle like any other),
 * claimed on first use; -1 when all TRD_SLOT_MAP_SLOTS are taken by others. */
int trd_slot_map_find(trd_slot_map_t *m, const void *handle);

#endif /* TRD_DRIVERS_COMMON_SLOT_MAP_H */
