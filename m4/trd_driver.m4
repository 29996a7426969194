dnl SPDX-License-Identifier: Apache-2.0
dnl TRD_SWITCH(name, help): --enable-NAME=yes|no|auto (auto by default). Sets enable_NAME; the caller's
dnl configure.m4 decides what "auto" finds.
AC_DEFUN([TRD_SWITCH], [
  AC_ARG_ENABLE([$1],
    [AS_HELP_STRING([--enable-$1=yes|no|auto], [$2 (default: auto)])],
    [], [enable_$1=auto])
  AS_CASE(["$enable_$1"], [yes|no|auto], [],
    [AC_MSG_ERROR([--enable-$1 takes yes, no or auto, not '$enable_$1'])])
])

dnl TRD_SWITCH_RESULT(name, found, variable, conditional, what): sets VARIABLE to yes or no and the
dnl CONDITIONAL; a missing dependency (said in $VARIABLE_missing) is an error only when asked for (yes).
AC_DEFUN([TRD_SWITCH_RESULT], [
  AS_IF([test "x$enable_$1" = xno], [$3=no],
        [test "x$2" = xyes], [$3=yes],
        [test "x$enable_$1" = xyes], [AC_MSG_ERROR([$5 was requested but $$3_missing])],
        [$3=no
         AC_MSG_NOTICE([skipping $5: $$3_missing])])
  AM_CONDITIONAL([$4], [test "x$$3" = xyes])
])

dnl TRD_DRIVER_SWITCH(name, description): a driver module's switch.
AC_DEFUN([TRD_DRIVER_SWITCH], [TRD_SWITCH([$1], [build the $2 driver module])])

dnl TRD_DRIVER_RESULT(name, found): sets trd_driver_NAME and the BUILD_DRIVER_NAME conditional.
AC_DEFUN([TRD_DRIVER_RESULT],
  [TRD_SWITCH_RESULT([$1], [$2], [trd_driver_$1], m4_toupper([BUILD_DRIVER_$1]), [the $1 driver])])
