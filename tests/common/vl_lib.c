/* SPDX-License-Identifier: Apache-2.0 */
/* vl_lib.c: a stand-in vendor library for drivers/common's loader test
 * (test_drivers_common). What that loader judges is which symbols a file
 * exports, which only a build decides (no run-time setting changes what
 * dlsym finds), so each library it tells apart is a build of its own:
 *   vl_full    every symbol: the usable library, optional vl_extra resolved;
 *   vl_broken  lacks the required vl_launch_v2 (but has vl_init): refused,
 *              naming the missing symbol, and the next candidate tried;
 *   vl_noopt   the required ones only: usable, vl_extra left NULL.
 * VL_ID is what vl_init returns: which copy answered. */
#include <trident/driver.h>

TRD_DRIVER_EXPORT int vl_init(void);
TRD_DRIVER_EXPORT int vl_init(void)
{
    return VL_ID;
}

#ifndef VL_BROKEN
TRD_DRIVER_EXPORT int vl_launch_v2(int x);
TRD_DRIVER_EXPORT int vl_launch_v2(int x)
{
    return x * 2 + VL_ID;
}
#endif

#if !defined(VL_BROKEN) && !defined(VL_NOOPT)
TRD_DRIVER_EXPORT int vl_extra(void);
TRD_DRIVER_EXPORT int vl_extra(void)
{
    return 7;
}
#endif
