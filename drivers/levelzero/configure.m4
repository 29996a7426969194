dnl SPDX-License-Identifier: Apache-2.0
dnl Level Zero driver: needs ze_api.h (Debian: libze-dev); libze_loader is dlopened at run time.
AC_DEFUN([TRD_DRIVER_LEVELZERO], [
  TRD_DRIVER_SWITCH([levelzero], [Intel Level Zero])
  AC_ARG_WITH([levelzero],
    [AS_HELP_STRING([--with-levelzero=DIR], [prefix holding include/level_zero/ze_api.h (default: /usr)])],
    [], [with_levelzero=/usr])
  LEVELZERO_CPPFLAGS=
  trd_driver_levelzero_missing=
  AS_IF([test "x$enable_levelzero" != xno], [
    save_CPPFLAGS=$CPPFLAGS
    CPPFLAGS="$CPPFLAGS -I$with_levelzero/include"
    AC_CHECK_HEADER([level_zero/ze_api.h], [LEVELZERO_CPPFLAGS="-I$with_levelzero/include"; found=yes],
      [found=no; trd_driver_levelzero_missing="level_zero/ze_api.h not found under $with_levelzero/include (Debian: libze-dev)"])
    CPPFLAGS=$save_CPPFLAGS
  ], [found=no])
  AC_SUBST([LEVELZERO_CPPFLAGS])
  TRD_DRIVER_RESULT([levelzero], [$found])
])
