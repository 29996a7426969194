/* SPDX-License-Identifier: Apache-2.0 */
/* intern.h: a process-wide table of strings that outlive whatever named them. */
#ifndef TRD_BASE_INTERN_H
#define TRD_BASE_INTERN_H

/* A copy of name that lives until the process exits, the same pointer for
 * equal names (so the set stays as small as the distinct kernel names);
 * NULL when out of memory. */
const char *trd_name_intern(const char *name);

#endif
