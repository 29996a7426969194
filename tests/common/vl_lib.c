/* SPDX-License-Identifier: Apache-2.0 */
/* vl_lib.c: a stand-in vendor library for drivers/common's loader test, built
 * as vl_full (every symbol), vl_broken (lacks the required vl_launch) and
 * vl_noopt (the required ones only). The values tell which copy answered. */
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
