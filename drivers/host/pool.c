/* SPDX-License-Identifier: Apache-2.0 */
/* pool.c: a device's worker threads run the programs of one launch at a
 * time, taking them in chunks from a shared counter. */
#include <stdlib.h>
#include <string.h>

#include "drivers/host/host.h"

static void run_chunks(struct host_job *j)
{
    trd_host_program_t prog;
    memset(&prog, 0, sizeof prog);
    prog.struct_size = sizeof prog;
    prog.abi_version = TRD_HOST_KERNEL_ABI_VERSION;
    prog.num_programs[0] = j->grid[0];
    prog.num_programs[1] = j->grid[1];
    prog.num_programs[2] = j->grid[2];
    const uint64_t gx = j->grid[0], gxy = (uint64_t)j->grid[0] * j->grid[1];
    struct host_fault_frame fr;
    struct host_fault_slot *slot = j->catch_faults ? host_fault_slot() : NULL;
    if (sigsetjmp(fr.jump, 0) != 0) {
        /* a program of the chunk faulted (fault.c jumped here): the chunk counts as done */
        host_fault_caught(&fr, &j->fault);
        atomic_fetch_add_explicit(&j->done, fr.end - fr.start, memory_order_release);
    }
    for (;;) {
        uint64_t start = atomic_fetch_add_explicit(&j->next, j->grain, memory_order_relaxed);
        if (start >= j->total)
            break;
        uint64_t end = start + j->grain < j->total ? start + j->grain : j->total;
        /* after a fault the remaining chunks are skipped */
        for (uint64_t i = start; i < end && !atomic_load_explicit(&j->fault.sig, memory_order_relaxed); i++) {
            /* program ids in Triton's order: x fastest */
            prog.pid[2] = (uint32_t)(i / gxy);
            uint64_t r = i % gxy;
            prog.pid[1] = (uint32_t)(r / gx);
            prog.pid[0] = (uint32_t)(r % gx);
            prog.global_scratch = j->gscratch ? j->gscratch + i * j->gstride : NULL;
            prog.profile_scratch = j->pscratch ? j->pscratch + i * j->pstride : NULL;
            if (slot) {
                fr.start = start;
                fr.end = end;
                fr.program = i;
                host_fault_arm(slot, &fr);
                j->fn(j->args, &prog);
                host_fault_disarm(slot);
            } else {
                j->fn(j->args, &prog);
            }
        }
        atomic_fetch_add_explicit(&j->done, end - start, memory_order_release);
    }
}

static void *worker(void *arg)
{
    struct host_pool *p = arg;
    uint64_t seen = 0;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->stop && (p->generation == seen || !p->job))
            pthread_cond_wait(&p->wake, &p->lock);
        if (p->stop)
            break;
        seen = p->generation;
        struct host_job *j = p->job;
        p->busy++;
        pthread_mutex_unlock(&p->lock);
        run_chunks(j);
        pthread_mutex_lock(&p->lock);
        if (--p->busy == 0)
            pthread_cond_broadcast(&p->finished);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

int host_pool_start(struct host_pool *p, uint32_t nthreads)
{
    memset(p, 0, sizeof *p);
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->finished, NULL);
    pthread_mutex_init(&p->submit, NULL);
    /* the submitting thread is one of the workers */
    uint32_t extra = nthreads > 1 ? nthreads - 1 : 0;
    if (extra) {
        p->threads = calloc(extra, sizeof *p->threads);
        if (!p->threads)
            return 0;
    }
    for (uint32_t i = 0; i < extra; i++) {
        if (pthread_create(&p->threads[i], NULL, worker, p) != 0)
            break;
        p->nthreads++;
    }
    return 1;
}

void host_pool_stop(struct host_pool *p)
{
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (uint32_t i = 0; i < p->nthreads; i++)
        pthread_join(p->threads[i], NULL);
    free(p->threads);
    free(p->scratch);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->finished);
    pthread_mutex_destroy(&p->lock);
    pthread_mutex_destroy(&p->submit);
}

void host_pool_run(struct host_pool *p, struct host_job *j)
{
    if (p->nthreads == 0 || j->total <= j->grain) {
        run_chunks(j);
        return;
    }
    pthread_mutex_lock(&p->lock);
    p->job = j;
    p->generation++;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    run_chunks(j);
    /* the job lives on our stack: wait until no worker touches it */
    pthread_mutex_lock(&p->lock);
    while (p->busy > 0 || atomic_load_explicit(&j->done, memory_order_acquire) < j->total)
        pthread_cond_wait(&p->finished, &p->lock);
    p->job = NULL;
    pthread_mutex_unlock(&p->lock);
}
