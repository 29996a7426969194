dnl SPDX-License-Identifier: Apache-2.0
dnl HIP driver: declares the small, version-stable subset of the HIP ABI it uses
dnl (drivers/hip/hip_abi.h), so it builds everywhere; libamdhip64 is dlopened at run time.
dnl The HIP test double is built against the real HIP headers where they exist.
AC_DEFUN([TRD_DRIVER_HIP], [
  TRD_DRIVER_SWITCH([hip], [AMD HIP])
  trd_driver_hip_missing=
  AC_ARG_WITH([hip],
    [AS_HELP_STRING([--with-hip=DIR], [ROCm/HIP prefix holding include/hip/hip_runtime_api.h, used by the tests only (default: /usr)])],
    [], [with_hip=/usr])
  save_CPPFLAGS=$CPPFLAGS
  CPPFLAGS="$CPPFLAGS -I$with_hip/include -D__HIP_PLATFORM_AMD__"
  AC_CHECK_HEADER([hip/hip_runtime_api.h], [have_hip_headers=yes], [have_hip_headers=no])
  CPPFLAGS=$save_CPPFLAGS
  HIP_CPPFLAGS="-I$with_hip/include -D__HIP_PLATFORM_AMD__"
  AC_SUBST([HIP_CPPFLAGS])
  AM_CONDITIONAL([HAVE_HIP_HEADERS], [test "x$have_hip_headers" = xyes])
  TRD_DRIVER_RESULT([hip], [yes])
])
