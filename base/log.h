/* SPDX-License-Identifier: Apache-2.0 */
/* log.h: trident's logger: silent unless TRIDENT_LOG, [runtime] log_level or the API turn it on. */
#ifndef TRD_BASE_LOG_H
#define TRD_BASE_LOG_H

#include <stdarg.h>
#include <stdint.h>

#include <trident/driver.h>
#include <trident/trident.h>

void trd_log(int32_t level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void trd_vlog(int32_t level, const char *fmt, va_list ap);
/* Parses "error|warn|info|debug|off" (or 0-4). Returns -1 when not a level. */
int32_t trd_log_parse_level(const char *text);
const char *trd_log_level_name(int32_t level);
/* Applies TRIDENT_LOG once per process, unless the API set a level first. */
void trd_log_init_from_env(void);
/* A configured [runtime] log_level: the API and TRIDENT_LOG keep precedence. */
void trd_log_apply_config(int32_t level);

#endif
