/* SPDX-License-Identifier: Apache-2.0 */
/* undeclared_kernel: a host image that declares no signature (no TRD_HOST_KERNEL_SIGNATURE note), as an image
 * built before declarations existed, or a raw image of any other origin: whatever signature a test gives it is
 * taken as is. The tests that use it check signature parsing and argument checks that fail before any launch, so
 * the kernel does nothing. */
#include <trident/host_kernel.h>

TRD_HOST_KERNEL(undeclared_kernel)
{
    (void)args;
    (void)program;
}
