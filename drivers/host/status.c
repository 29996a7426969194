/* SPDX-License-Identifier: Apache-2.0 */
/* status.c: the host's failures as trd_status_t with their message. Its
 * "vendor errors" are the signals of a kernel that faulted (fault.c catches
 * them); a launch's failure is written to a buffer rather than to the
 * thread's error, since a stream's executor reports it later, from another
 * thread (stream.c). */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>

#include "drivers/host/host.h"

trd_status_t host_fail(char *out, size_t cap, trd_status_t status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, cap, fmt, ap);
    va_end(ap);
    return status;
}

static const char *describe(int sig, int code)
{
    switch (sig) {
    case SIGSEGV:
        return code == SEGV_ACCERR ? "SIGSEGV, a protected address" : "SIGSEGV, an address not mapped";
    case SIGBUS:
        return code == BUS_ADRALN ? "SIGBUS, a misaligned address" : "SIGBUS, an address beyond a mapped object";
    case SIGFPE:
        return code == FPE_INTDIV ? "SIGFPE, an integer division by zero"
             : code == FPE_INTOVF ? "SIGFPE, an integer overflow"
                                  : "SIGFPE, an arithmetic fault";
    default:
        return "SIGILL, an illegal instruction";
    }
}

trd_status_t host_fault_error(const struct host_fault *f, const uint32_t grid[3], const char *where, char *why)
{
    int sig = atomic_load_explicit(&f->sig, memory_order_relaxed);
    uint64_t gx = grid[0], gxy = (uint64_t)grid[0] * grid[1];
    uint64_t r = f->program % gxy;
    const char *meaning = sig == SIGSEGV || sig == SIGBUS ? TRD_DRIVER_FAULT_HINT
                        : sig == SIGFPE ? "an integer division by zero or overflow in the kernel's code"
                                        : "the image may be built for a newer CPU than this one";
    return host_fail(why, HOST_MESSAGE_BYTES, TRD_ERR_DEVICE,
                     "program (%llu,%llu,%llu) of the %ux%ux%u grid faulted (%s, at 0x%llx%s%s): %s; the programs "
                     "still to run were skipped and the outputs are not to be trusted",
                     (unsigned long long)(r % gx), (unsigned long long)(r / gx), (unsigned long long)(f->program / gxy),
                     grid[0], grid[1], grid[2], describe(sig, f->code), (unsigned long long)f->addr,
                     *where ? ", " : "", where, meaning);
}
