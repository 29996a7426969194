/* SPDX-License-Identifier: Apache-2.0 */
/* module.c: loading a kernel image. The null driver accepts any image (it
 * never runs one) and keeps only the kernel's label; a real driver hands
 * desc->image to its vendor's loader, copies what it keeps (the image lives
 * only during this call), and fills info. */
#include <stdio.h>
#include <stdlib.h>

#include "drivers/null/null.h"

trd_status_t null_module_load(void *device, const trd_driver_module_desc_t *desc, void **out, trd_load_info_t *info)
{
    struct null_module *m = calloc(1, sizeof *m);
    if (!m)
        return trd_drv_error(TRD_ERR_NO_MEMORY, "null: out of memory");
    m->dev = device;
    snprintf(m->label, sizeof m->label, "%s", desc->label ? desc->label : "a kernel");
    info->registers = 0;
    info->spills = 0;
    info->max_threads_per_block = 1024;
    *out = m;
    return TRD_OK;
}

void null_module_unload(void *module)
{
    free(module);
}
