/* SPDX-License-Identifier: Apache-2.0 */
/* fault.h: a host kernel that faults (SIGSEGV, SIGBUS, SIGFPE, SIGILL raised
 * by its own instructions) fails its launch instead of killing the process.
 *
 * Each thread that runs kernels owns a slot of a process-wide table, claimed
 * on its first launch and released when it exits; a worker arms its slot with
 * a frame on its stack around each kernel call. The handler finds the
 * faulting thread's slot by its thread id (no thread-local storage: the
 * handler may not touch it, libtrident being dlopen'ed) and jumps back to the
 * frame when one is armed; every other signal goes on to the handler
 * installed before (or the default action). Arming is one store: no lock, no
 * allocation, no system call. */
#ifndef TRD_DRIVER_HOST_FAULT_H
#define TRD_DRIVER_HOST_FAULT_H

#include <setjmp.h>
#include <stdatomic.h>
#include <stdint.h>

/* What a worker records while it runs programs; lives on its stack. The
 * fields written between sigsetjmp and the jump are volatile (C11 7.13.2.1). */
struct host_fault_frame {
    sigjmp_buf jump;
    volatile uint64_t program;       /* the linear index of the program being run */
    volatile uint64_t start, end;    /* the chunk being run */
    volatile int sig, code;
    void *volatile addr;
};

/* The first fault of one launch. */
struct host_fault {
    atomic_int sig;    /* 0 until a program faults; then the signal */
    int code;          /* si_code */
    uint64_t program;  /* linear index (x fastest) */
    uintptr_t addr;    /* si_addr */
};

/* A thread's entry in the table. */
struct host_fault_slot {
    _Atomic int tid;                                 /* 0: free */
    struct host_fault_frame *_Atomic frame;          /* armed: inside a kernel call */
};

/* Installs the handlers (once per process; later calls return at once) and
 * keeps this code mapped for as long as the process lives. 0 on failure. */
int host_fault_install(void);

/* The calling thread's slot, claimed on its first call; NULL when the table
 * is full (the thread's kernels then run unguarded). */
struct host_fault_slot *host_fault_slot(void);

static inline void host_fault_arm(struct host_fault_slot *s, struct host_fault_frame *f)
{
    atomic_store_explicit(&s->frame, f, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst); /* armed before the call's first instruction */
}

static inline void host_fault_disarm(struct host_fault_slot *s)
{
    atomic_signal_fence(memory_order_seq_cst);
    atomic_store_explicit(&s->frame, NULL, memory_order_relaxed);
}

/* After the handler's jump to f: records the fault as the launch's first
 * (unless another program faulted before) and unblocks the signal, which the
 * jump out of the handler left blocked. */
void host_fault_caught(struct host_fault_frame *f, struct host_fault *first);

#endif
