dnl SPDX-License-Identifier: Apache-2.0
dnl The host CPU driver is built one way: into libtrident (the default), or with --enable-host-module as a driver
dnl module (trident_host.so, found and loaded as the others are), never both: one copy in a process.
AC_DEFUN([TRD_DRIVER_HOST], [
  AC_CHECK_FUNCS([memfd_create])
  AC_ARG_ENABLE([host-module],
    [AS_HELP_STRING([--enable-host-module], [build the host CPU driver as a module, trident_host.so, instead of into libtrident])],
    [], [enable_host_module=no])
  AS_CASE(["$enable_host_module"], [yes], [trd_driver_host=module; TRD_HOST_EMBEDDED=0],
    [no], [trd_driver_host=embedded; TRD_HOST_EMBEDDED=1],
    [AC_MSG_ERROR([--enable-host-module takes yes or no, not '$enable_host_module'])])
  AC_SUBST([TRD_HOST_EMBEDDED])
  AM_CONDITIONAL([HOST_MODULE], [test "x$enable_host_module" = xyes])
])
