/* SPDX-License-Identifier: Apache-2.0 */
/* launch.c: the launch: queued on a stream (stream.c), or run now on the
 * calling thread and the device's pool (pool.c), with one slice of scratch a
 * program from the pool's arena. The arena grows under the pool's submit
 * lock, which one launch holds at a time: no allocation once it is large
 * enough. */
#include <stdlib.h>
#include <string.h>

#include "drivers/common/arith.h"
#include "drivers/common/scratch.h"
#include "drivers/host/host.h"

trd_status_t host_execute(struct host_module *m, const uint32_t grid[3], void *const *args, void *gscratch,
                          void *pscratch, uint64_t gbytes, uint64_t pbytes, char *why)
{
    struct host_pool *pool = &m->dev->pool;
    struct host_job job;
    memset(&job, 0, sizeof job);
    job.fn = m->fn;
    job.args = args;
    memcpy(job.grid, grid, sizeof job.grid);
    if (__builtin_mul_overflow((uint64_t)grid[0] * grid[1], grid[2], &job.total))
        return host_fail(why, HOST_MESSAGE_BYTES, TRD_ERR_LIMIT, "a grid of %u x %u x %u programs: more than 2^64",
                         grid[0], grid[1], grid[2]);
    uint32_t workers = pool->nthreads + 1;
    job.grain = m->sequential ? job.total : m->grain ? m->grain : (job.total + 4 * workers - 1) / (4 * workers);
    if (job.grain == 0)
        job.grain = 1;
    atomic_init(&job.next, 0);
    atomic_init(&job.done, 0);
    atomic_init(&job.fault.sig, 0);
    job.catch_faults = m->catch_faults;
    /* Scratch the caller did not pass: the core's figures, from the device's arena (reused); global, then
     * profile at 64 bytes */
    job.gstride = m->gstride;
    job.pstride = m->pstride;
    uint64_t need_g = gscratch ? 0 : gbytes, need_p = pscratch ? 0 : pbytes, off_p = 0, need = 0;
    if (!trd_align_up_u64(need_g, 64, &off_p) || !trd_add_u64(off_p, need_p, &need))
        return host_fail(why, HOST_MESSAGE_BYTES, TRD_ERR_LIMIT,
                         "the scratch of %llu programs (%llu + %llu bytes each) overflows 64 bits",
                         (unsigned long long)job.total, (unsigned long long)job.gstride,
                         (unsigned long long)job.pstride);
    uint64_t memory = m->dev->drv->memory;
    if (memory && need > memory)
        return host_fail(why, HOST_MESSAGE_BYTES, TRD_ERR_NO_MEMORY,
                         "cannot allocate %llu bytes of scratch (%llu programs x %llu bytes): more than the host's "
                         "%llu bytes of memory",
                         (unsigned long long)need, (unsigned long long)job.total,
                         (unsigned long long)(job.gstride + job.pstride), (unsigned long long)memory);
    pthread_mutex_lock(&pool->submit);
    if (need > pool->scratch_cap) {
        char *p = NULL;
        if (posix_memalign((void **)&p, 64, (size_t)need) != 0) {
            pthread_mutex_unlock(&pool->submit);
            return host_fail(why, HOST_MESSAGE_BYTES, TRD_ERR_NO_MEMORY,
                             "cannot allocate %llu bytes of scratch (%llu programs x %llu bytes)",
                             (unsigned long long)need, (unsigned long long)job.total,
                             (unsigned long long)(job.gstride + job.pstride));
        }
        free(pool->scratch);
        pool->scratch = p;
        pool->scratch_cap = need;
    }
    job.gscratch = gscratch ? gscratch : (job.gstride ? pool->scratch : NULL);
    job.pscratch = pscratch ? pscratch : (job.pstride ? pool->scratch + off_p : NULL);
    host_pool_run(pool, &job);
    pthread_mutex_unlock(&pool->submit);
    if (atomic_load_explicit(&job.fault.sig, memory_order_relaxed)) {
        char where[512];
        host_memory_describe(&m->dev->drv->mem, job.fault.addr, m->pointers, m->num_pointers, args, where,
                             sizeof where);
        return host_fault_error(&job.fault, grid, where, why);
    }
    return TRD_OK;
}

trd_status_t host_launch_now(struct host_module *m, const trd_driver_launch_t *l, const uint64_t scratch[2])
{
    char why[HOST_MESSAGE_BYTES];
    trd_status_t st =
        host_execute(m, l->grid, l->params, l->global_scratch, l->profile_scratch, scratch[0], scratch[1], why);
    return st == TRD_OK ? TRD_OK : trd_drv_error(st, "%s", why);
}

trd_status_t host_launch(void *module, void *stream, void *native, const trd_driver_launch_t *l)
{
    struct host_module *m = module;
    /* the scratch to allocate is the core's figure, where the launch wants any */
    uint64_t scratch[2] = {0, 0};
    if ((m->gstride && !l->global_scratch) || (m->pstride && !l->profile_scratch)) {
        trd_status_t st = trd_scratch_bytes_given(l, m->label);
        if (st != TRD_OK)
            return st;
        scratch[0] = l->global_scratch_bytes;
        scratch[1] = l->profile_scratch_bytes;
    }
    if (!stream)
        stream = native; /* a host stream's native handle is itself */
    if (stream)
        return host_stream_launch(stream, m, l, scratch);
    return host_launch_now(m, l, scratch);
}
