dnl The host CPU driver is the embedded default: always built.
AC_DEFUN([TRD_DRIVER_HOST], [
  AC_CHECK_FUNCS([memfd_create])
])
