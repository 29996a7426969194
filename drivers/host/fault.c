/* SPDX-License-Identifier: Apache-2.0 */
/* fault.c: catching the faults of host kernels (fault.h).
 *
 * Only a fault raised by an instruction (si_code > 0) on a thread inside a
 * kernel call is caught; a signal sent with kill() or raise(), or a fault
 * anywhere else, goes to the handler installed before ours, or gets the
 * default action (the process dies with that signal, as it would have
 * without trident). What the kernel wrote before it faulted stays written:
 * the launch's error (status.c) says its outputs are not to be trusted. */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "drivers/host/fault.h"

/* Threads that run kernels at once: the pools' workers, the streams' executors and the callers of synchronous
 * launches. A thread beyond them runs its kernels unguarded. */
#define SLOTS 4096
static struct host_fault_slot slots[SLOTS];
static pthread_key_t slot_key;
static _Thread_local struct host_fault_slot *my_slot;

static const int caught[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
#define NCAUGHT (sizeof caught / sizeof caught[0])
static struct sigaction previous[NCAUGHT];
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int installed;

static void pass_on(int sig, siginfo_t *si, void *uc)
{
    size_t k = 0;
    while (k < NCAUGHT && caught[k] != sig)
        k++;
    if (k == NCAUGHT)
        return;
    const struct sigaction *p = &previous[k];
    if (p->sa_flags & SA_SIGINFO) {
        p->sa_sigaction(sig, si, uc);
        return;
    }
    if (p->sa_handler == SIG_IGN && si->si_code <= 0)
        return; /* a sent signal that was ignored stays ignored */
    if (p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN) {
        p->sa_handler(sig);
        return;
    }
    /* the default action (also for an ignored fault, as the kernel does): a fault re-executes its instruction
     * when the handler returns and now kills; a sent signal is raised again, pending until we return */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    if (si->si_code <= 0)
        raise(sig);
}

/* Async-signal-safe: a system call and atomic loads. */
static struct host_fault_frame *armed_frame(struct host_fault_slot **slot)
{
    int tid = (int)gettid();
    for (int k = 0; k < SLOTS; k++)
        if (atomic_load_explicit(&slots[k].tid, memory_order_relaxed) == tid) {
            *slot = &slots[k];
            return atomic_load_explicit(&slots[k].frame, memory_order_relaxed);
        }
    return NULL;
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
    struct host_fault_slot *slot = NULL;
    struct host_fault_frame *f = si && si->si_code > 0 ? armed_frame(&slot) : NULL;
    if (f) {
        atomic_store_explicit(&slot->frame, NULL, memory_order_relaxed);
        f->sig = sig;
        f->code = si->si_code;
        f->addr = si->si_addr;
        siglongjmp(f->jump, 1);
    }
    pass_on(sig, si, uc);
}

/* A thread's exit frees its slot. */
static void release_slot(void *slot)
{
    struct host_fault_slot *s = slot;
    atomic_store_explicit(&s->frame, NULL, memory_order_relaxed);
    atomic_store_explicit(&s->tid, 0, memory_order_release);
}

struct host_fault_slot *host_fault_slot(void)
{
    if (my_slot)
        return my_slot;
    int tid = (int)gettid();
    for (int k = 0; k < SLOTS; k++) {
        int expected = 0;
        if (atomic_load_explicit(&slots[k].tid, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_strong_explicit(&slots[k].tid, &expected, tid, memory_order_acq_rel,
                                                    memory_order_relaxed)) {
            if (pthread_setspecific(slot_key, &slots[k]) != 0) {
                release_slot(&slots[k]);
                return NULL;
            }
            return my_slot = &slots[k];
        }
    }
    return NULL;
}

static void install(void)
{
    /* the handler must outlive a dlclose of the object it lives in (libtrident or trident_host.so; a program
     * linking the code statically is never unloaded: its link map has no name) */
    Dl_info info;
    struct link_map *lm = NULL;
    if (!dladdr1((void *)on_signal, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm ||
        (lm->l_name[0] && !dlopen(lm->l_name, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE)) ||
        pthread_key_create(&slot_key, release_slot) != 0)
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (size_t k = 0; k < NCAUGHT; k++)
        if (sigaction(caught[k], &sa, &previous[k]) != 0)
            return;
    installed = 1;
}

int host_fault_install(void)
{
    pthread_once(&once, install);
    return installed;
}

void host_fault_caught(struct host_fault_frame *f, struct host_fault *first)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, f->sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    int expected = 0;
    if (atomic_compare_exchange_strong_explicit(&first->sig, &expected, f->sig, memory_order_relaxed,
                                                memory_order_relaxed)) {
        /* published to the submitter by the release of the job's done count */
        first->code = f->code;
        first->program = f->program;
        first->addr = (uintptr_t)f->addr;
    }
}
