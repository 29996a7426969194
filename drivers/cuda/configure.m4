dnl SPDX-License-Identifier: Apache-2.0
dnl CUDA driver: needs only cuda.h to build; libcuda is dlopened at run time.
AC_DEFUN([TRD_DRIVER_CUDA], [
  TRD_DRIVER_SWITCH([cuda], [NVIDIA CUDA])
  AC_ARG_WITH([cuda],
    [AS_HELP_STRING([--with-cuda=DIR], [CUDA toolkit holding include/cuda.h (default: /usr/local/cuda)])],
    [], [with_cuda=/usr/local/cuda])
  CUDA_CPPFLAGS=
  trd_driver_cuda_missing=
  AS_IF([test "x$enable_cuda" != xno], [
    save_CPPFLAGS=$CPPFLAGS
    CPPFLAGS="$CPPFLAGS -I$with_cuda/include"
    AC_CHECK_HEADER([cuda.h], [CUDA_CPPFLAGS="-isystem $with_cuda/include"; found=yes],
      [found=no; trd_driver_cuda_missing="cuda.h not found under $with_cuda/include (use --with-cuda=DIR)"])
    CPPFLAGS=$save_CPPFLAGS
  ], [found=no])
  AC_SUBST([CUDA_CPPFLAGS])
  TRD_DRIVER_RESULT([cuda], [$found])
])
