/* SPDX-License-Identifier: Apache-2.0 */
/* intern.c: kernel names that streams and events may still refer to after
 * their kernel is gone (trd_stream.last_kernel): kept for the process. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/intern.h"

struct interned {
    struct interned *next;
    char text[];
};
static pthread_mutex_t interned_lock = PTHREAD_MUTEX_INITIALIZER;
static struct interned *interned;

const char *trd_name_intern(const char *name)
{
    pthread_mutex_lock(&interned_lock);
    struct interned *i;
    for (i = interned; i && strcmp(i->text, name) != 0; i = i->next)
        ;
    if (!i && (i = malloc(sizeof *i + strlen(name) + 1)) != NULL) {
        strcpy(i->text, name);
        i->next = interned;
        interned = i;
    }
    pthread_mutex_unlock(&interned_lock);
    return i ? i->text : NULL;
}
