/* SPDX-License-Identifier: Apache-2.0 */
/* error.h: the calling thread's message of the last failure, which trd_error_message() returns. Every layer sets
 * it through these; the drivers, outside libtrident, through trd_driver_error (trident/driver.h). */
#ifndef TRD_BASE_ERROR_H
#define TRD_BASE_ERROR_H

#include <stdarg.h>

#include <trident/driver.h>
#include <trident/trident.h>

/* Sets the thread-local message and returns status. */
trd_status_t trd_error_set(trd_status_t status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
trd_status_t trd_error_vset(trd_status_t status, const char *fmt, va_list ap);
/* Prefixes the current message with context: "loading kernel X: <old>". */
trd_status_t trd_error_wrap(trd_status_t status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void trd_error_clear(void);

#endif
