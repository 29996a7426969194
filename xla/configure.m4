dnl SPDX-License-Identifier: Apache-2.0
dnl libtrident_xla, the XLA FFI handlers: --enable-xla=yes|no|auto (auto: built when jaxlib's FFI header,
dnl xla/ffi/api/c_api.h, is found). libtrident itself is the same with or without it.
dnl The header: --with-xla-ffi=DIR, else .xla-ffi/include in the source tree (scripts/xla-ffi-headers.sh fetches the
dnl newest jaxlib's there), else python3's jaxlib's. The library reports to each runtime the older of its API and the
dnl header's, so the newest header serves every jaxlib from 0.10.2 on; one older than API 0.4 (jaxlib 0.11.1)
dnl builds the handlers without the RECORD stage, with a warning.
AC_DEFUN([TRD_XLA], [
  TRD_SWITCH([xla], [build libtrident_xla, the XLA FFI handlers])
  AC_ARG_WITH([xla-ffi],
    [AS_HELP_STRING([--with-xla-ffi=DIR],
      [directory holding xla/ffi/api/c_api.h (default: .xla-ffi/include in the source tree, else python3's jaxlib's)])],
    [], [with_xla_ffi=auto])
  XLA_FFI_CPPFLAGS=
  found=no
  trd_xla_missing="xla/ffi/api/c_api.h not found (scripts/xla-ffi-headers.sh, pip install jaxlib, or --with-xla-ffi=DIR)"
  AS_IF([test "x$enable_xla" != xno && test "x$with_xla_ffi" = xauto], [
    dnl the newest header scripts/xla-ffi-headers.sh fetched, else jaxlib's include/ (what jax.ffi.include_dir()
    dnl names), found without importing jax: jaxlib alone has it
    AC_MSG_CHECKING([for the XLA FFI header])
    AS_IF([test -f "$srcdir/.xla-ffi/include/xla/ffi/api/c_api.h"],
      [with_xla_ffi=`cd "$srcdir/.xla-ffi/include" && pwd`],
      [with_xla_ffi=`${PYTHON:-python3} -c "import importlib.util as u, os; s = u.find_spec('jaxlib'); \
print(os.path.join(list(s.submodule_search_locations)[[0]], 'include'))" 2>/dev/null`])
    AS_IF([test -n "$with_xla_ffi"], [AC_MSG_RESULT([$with_xla_ffi])], [AC_MSG_RESULT([no])])
  ])
  AS_IF([test "x$enable_xla" != xno && test "x$with_xla_ffi" != xno && test -n "$with_xla_ffi"], [
    save_CPPFLAGS=$CPPFLAGS
    CPPFLAGS="$CPPFLAGS -I$with_xla_ffi"
    AC_CHECK_HEADER([xla/ffi/api/c_api.h], [XLA_FFI_CPPFLAGS="-isystem $with_xla_ffi"; found=yes],
      [trd_xla_missing="xla/ffi/api/c_api.h not found under $with_xla_ffi"])
    AS_IF([test "x$found" = xyes], [
      AC_COMPUTE_INT([trd_xla_minor], [XLA_FFI_API_MINOR], [#include <xla/ffi/api/c_api.h>], [trd_xla_minor=0])
      AC_MSG_CHECKING([the XLA FFI header's API version])
      AC_MSG_RESULT([0.$trd_xla_minor])
      AS_IF([test "$trd_xla_minor" -lt 3],
        [found=no; trd_xla_missing="the XLA FFI header under $with_xla_ffi is API 0.$trd_xla_minor; libtrident_xla needs 0.3 (jaxlib 0.10.2) or newer"],
        [test "$trd_xla_minor" -lt 4 || test ! -f "$with_xla_ffi/xla/ffi/api/record_c_api.h"],
        [AC_MSG_WARN([the XLA FFI header (API 0.$trd_xla_minor) has no RECORD stage: libtrident_xla is built without it (trident's calls stay child graphs in XLA's command buffers); scripts/xla-ffi-headers.sh fetches jaxlib 0.12's])])
    ])
    CPPFLAGS=$save_CPPFLAGS
  ])
  AC_SUBST([XLA_FFI_CPPFLAGS])
  TRD_SWITCH_RESULT([xla], [$found], [trd_xla], [BUILD_XLA], [libtrident_xla (the XLA handlers)])
])
