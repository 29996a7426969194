dnl XLA FFI handlers: built against the FFI header that jaxlib ships.
AC_DEFUN([TRD_XLA_FFI], [
  AC_ARG_WITH([xla-ffi],
    [AS_HELP_STRING([--with-xla-ffi=DIR], [directory holding xla/ffi/api/c_api.h (default: ask python3's jax)])],
    [], [with_xla_ffi=auto])
  AS_IF([test "x$with_xla_ffi" = xauto], [
    AC_MSG_CHECKING([for the XLA FFI header through jax.ffi.include_dir()])
    with_xla_ffi=`${PYTHON:-python3} -c "import jax.ffi; print(jax.ffi.include_dir())" 2>/dev/null`
    AS_IF([test -n "$with_xla_ffi"], [AC_MSG_RESULT([$with_xla_ffi])], [AC_MSG_RESULT([no])])
  ])
  XLA_FFI_CPPFLAGS=
  trd_xla_ffi=no
  AS_IF([test "x$with_xla_ffi" != xno && test -n "$with_xla_ffi"], [
    save_CPPFLAGS=$CPPFLAGS
    CPPFLAGS="$CPPFLAGS -I$with_xla_ffi"
    AC_CHECK_HEADER([xla/ffi/api/c_api.h], [XLA_FFI_CPPFLAGS="-isystem $with_xla_ffi"; trd_xla_ffi=yes])
    CPPFLAGS=$save_CPPFLAGS
  ])
  AS_IF([test "x$trd_xla_ffi" = xno],
    [AC_MSG_NOTICE([skipping the XLA FFI handlers: xla/ffi/api/c_api.h not found (pip install jaxlib, or --with-xla-ffi=DIR)])],
    [AC_DEFINE([TRD_HAVE_XLA_FFI], [1], [Define to 1 when the XLA FFI handlers are built])])
  AC_SUBST([XLA_FFI_CPPFLAGS])
  AM_CONDITIONAL([BUILD_XLA_FFI], [test "x$trd_xla_ffi" = xyes])
])
