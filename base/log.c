/* SPDX-License-Identifier: Apache-2.0 */
/* log.c: silent unless asked (TRIDENT_LOG, [runtime] log_level, the API). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/error.h"
#include "base/log.h"
#include "base/util.h"

static atomic_int log_level = TRD_LOG_OFF;
static atomic_int level_set_by_api = 0;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t sink_lock = PTHREAD_MUTEX_INITIALIZER;
static trd_log_fn sink_fn;
static void *sink_user;

static const char *const level_names[] = {"off", "error", "warn", "info", "debug"};

const char *trd_log_level_name(int32_t level)
{
    if (level < 0 || level > TRD_LOG_DEBUG)
        return "?";
    return level_names[level];
}

int32_t trd_log_parse_level(const char *text)
{
    if (!text)
        return -1;
    for (int32_t i = 0; i <= TRD_LOG_DEBUG; i++)
        if (strcasecmp(text, level_names[i]) == 0)
            return i;
    if (strcasecmp(text, "warning") == 0)
        return TRD_LOG_WARN;
    if (text[0] >= '0' && text[0] <= '4' && text[1] == '\0')
        return text[0] - '0';
    return -1;
}

/* Hands one formatted message to the callback or stderr. Never calls back into the level logic: env_init runs
 * inside pthread_once and must not re-enter it. */
static void emit(int32_t level, const char *msg)
{
    pthread_mutex_lock(&sink_lock);
    if (sink_fn)
        sink_fn(sink_user, level, msg);
    else
        fprintf(stderr, "trident: %s: %s\n", level_names[level], msg);
    pthread_mutex_unlock(&sink_lock);
}

static void env_init(void)
{
    const char *v = trd_getenv("TRIDENT_LOG");
    if (!v || atomic_load(&level_set_by_api))
        return;
    int32_t l = trd_log_parse_level(v);
    if (l < 0) {
        atomic_store(&log_level, TRD_LOG_WARN);
        char shown[96], msg[256];
        trd_quote(v, strlen(v), shown, sizeof shown);
        snprintf(msg, sizeof msg,
                 "TRIDENT_LOG='%s' is not a log level (expected off, error, warn, info, debug or 0-4): using warn",
                 shown);
        emit(TRD_LOG_WARN, msg);
        return;
    }
    atomic_store(&log_level, l);
}

void trd_log_init_from_env(void)
{
    pthread_once(&env_once, env_init);
}

TRD_API trd_status_t trd_log_set_level(int32_t level)
{
    if (level < TRD_LOG_OFF || level > TRD_LOG_DEBUG)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "log level %d is not one of 0 (off) .. 4 (debug)",
                             level);
    trd_log_init_from_env();
    atomic_store(&level_set_by_api, 1);
    atomic_store(&log_level, level);
    return TRD_OK;
}

TRD_API int32_t trd_log_get_level(void)
{
    trd_log_init_from_env();
    return atomic_load(&log_level);
}

TRD_API trd_status_t trd_log_set_callback(trd_log_fn fn, void *user)
{
    pthread_mutex_lock(&sink_lock);
    sink_fn = fn;
    sink_user = user;
    pthread_mutex_unlock(&sink_lock);
    return TRD_OK;
}

void trd_vlog(int32_t level, const char *fmt, va_list ap)
{
    trd_log_init_from_env();
    if (level > atomic_load(&log_level) || level <= TRD_LOG_OFF)
        return;
    char msg[2048];
    vsnprintf(msg, sizeof msg, fmt, ap);
    emit(level, msg);
}

void trd_log(int32_t level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    trd_vlog(level, fmt, ap);
    va_end(ap);
}

TRD_API void trd_driver_log(int32_t level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    trd_vlog(level, fmt, ap);
    va_end(ap);
}

/* Called by the runtime when [runtime] log_level is configured: the API and
 * TRIDENT_LOG (which the configuration also carries) keep precedence. */
void trd_log_apply_config(int32_t level)
{
    trd_log_init_from_env();
    if (!atomic_load(&level_set_by_api) && level >= 0)
        atomic_store(&log_level, level);
}
