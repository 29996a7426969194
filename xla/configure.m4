dnl SPDX-License-Identifier: Apache-2.0
dnl libtrident_xla, the XLA FFI handlers: --enable-xla=yes|no|auto (auto: built when jaxlib's FFI header,
dnl xla/ffi/api/c_api.h, is found). libtrident itself is the same with or without it.
AC_DEFUN([TRD_XLA], [
  TRD_SWITCH([xla], [build libtrident_xla, the XLA FFI handlers])
  AC_ARG_WITH([xla-ffi],
    [AS_HELP_STRING([--with-xla-ffi=DIR], [directory holding xla/ffi/api/c_api.h (default: python3's jaxlib's)])],
    [], [with_xla_ffi=auto])
  XLA_FFI_CPPFLAGS=
  found=no
  trd_xla_missing="xla/ffi/api/c_api.h not found (pip install jaxlib, or --with-xla-ffi=DIR)"
  AS_IF([test "x$enable_xla" != xno && test "x$with_xla_ffi" = xauto], [
    dnl jaxlib's include/ (what jax.ffi.include_dir() names), found without importing jax: jaxlib alone has it
    AC_MSG_CHECKING([for jaxlib's include directory])
    with_xla_ffi=`${PYTHON:-python3} -c "import importlib.util as u, os; s = u.find_spec('jaxlib'); \
print(os.path.join(list(s.submodule_search_locations)[[0]], 'include'))" 2>/dev/null`
    AS_IF([test -n "$with_xla_ffi"], [AC_MSG_RESULT([$with_xla_ffi])], [AC_MSG_RESULT([no])])
  ])
  AS_IF([test "x$enable_xla" != xno && test "x$with_xla_ffi" != xno && test -n "$with_xla_ffi"], [
    save_CPPFLAGS=$CPPFLAGS
    CPPFLAGS="$CPPFLAGS -I$with_xla_ffi"
    AC_CHECK_HEADER([xla/ffi/api/c_api.h], [XLA_FFI_CPPFLAGS="-isystem $with_xla_ffi"; found=yes],
      [trd_xla_missing="xla/ffi/api/c_api.h not found under $with_xla_ffi"])
    CPPFLAGS=$save_CPPFLAGS
  ])
  AC_SUBST([XLA_FFI_CPPFLAGS])
  TRD_SWITCH_RESULT([xla], [$found], [trd_xla], [BUILD_XLA], [libtrident_xla (the XLA handlers)])
])
