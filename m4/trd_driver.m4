dnl TRD_DRIVER_SWITCH(name, description): --enable-NAME=yes|no|auto (auto by default).
dnl Sets enable_NAME. A driver's own configure.m4 decides what "auto" finds.
AC_DEFUN([TRD_DRIVER_SWITCH], [
  AC_ARG_ENABLE([$1],
    [AS_HELP_STRING([--enable-$1=yes|no|auto], [build the $2 driver module (default: auto)])],
    [], [enable_$1=auto])
  AS_CASE(["$enable_$1"], [yes|no|auto], [],
    [AC_MSG_ERROR([--enable-$1 takes yes, no or auto, not '$enable_$1'])])
])

dnl TRD_DRIVER_RESULT(name, found): sets trd_driver_NAME and the BUILD_DRIVER_NAME
dnl conditional; a missing dependency is an error only when the driver was asked for.
AC_DEFUN([TRD_DRIVER_RESULT], [
  AS_IF([test "x$enable_$1" = xno], [trd_driver_$1=no],
        [test "x$2" = xyes], [trd_driver_$1=yes],
        [test "x$enable_$1" = xyes], [AC_MSG_ERROR([the $1 driver was requested but $trd_driver_$1_missing])],
        [trd_driver_$1=no
         AC_MSG_NOTICE([skipping the $1 driver: $trd_driver_$1_missing])])
  AM_CONDITIONAL(m4_toupper([BUILD_DRIVER_$1]), [test "x$trd_driver_$1" = xyes])
])
