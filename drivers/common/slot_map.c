/* SPDX-License-Identifier: Apache-2.0 */
/* slot_map.c: trd_slot_map_find (slot_map.h): open addressing from the
 * handle's hash, so that a handle is usually found at its first probe. */
#include "drivers/common/slot_map.h"

void trd_slot_map_init(trd_slot_map_t *m)
{
    for (int i = 0; i < TRD_SLOT_MAP_SLOTS; i++)
        atomic_init(&m->key[i], 0);
}

int trd_slot_map_find(trd_slot_map_t *m, const void *handle)
{
    /* 0 marks a free slot: the NULL handle gets a key no pointer has */
    uintptr_t key = handle ? (uintptr_t)handle : UINTPTR_MAX;
    unsigned start = (unsigned)((((uint64_t)key >> 4) * UINT64_C(0x9e3779b97f4a7c15)) >> 58) % TRD_SLOT_MAP_SLOTS;
    for (int i = 0; i < TRD_SLOT_MAP_SLOTS; i++) {
        int at = (int)((start + (unsigned)i) % TRD_SLOT_MAP_SLOTS);
        uintptr_t cur = atomic_load_explicit(&m->key[at], memory_order_acquire);
        if (!cur) {
            uintptr_t expected = 0;
            if (atomic_compare_exchange_strong_explicit(&m->key[at], &expected, key, memory_order_acq_rel,
                                                        memory_order_acquire))
                return at;
            cur = expected; /* another thread claimed it first */
        }
        if (cur == key)
            return at;
    }
    return -1;
}
