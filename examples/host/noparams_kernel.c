/* SPDX-License-Identifier: Apache-2.0 */
/* noparams_kernel: a kernel without parameters (Triton's empty signature).
 * Having no memory to write, each program reports itself on stdout as
 * "noparams_kernel program X,Y,Z of GX,GY,GZ", one write(2) a line, so that
 * a test can check that every program ran once. */
#include <stdio.h>
#include <unistd.h>

#include <trident/host_kernel.h>

TRD_HOST_KERNEL(noparams_kernel)
{
    (void)args;
    const uint32_t *p = program->pid, *g = program->num_programs;
    char line[96];
    int n = snprintf(line, sizeof line, "noparams_kernel program %u,%u,%u of %u,%u,%u\n", p[0], p[1], p[2], g[0], g[1],
                     g[2]);
    if (n > 0 && write(1, line, (size_t)n) != n)
        return;
}
