/* SPDX-License-Identifier: Apache-2.0 */
/* bench_graph: what a kernel costs inside a CUDA graph, by how the graph
 * holds it: the part of the command-buffer gap between XLA's own kernels and
 * an FFI custom call that belongs to how XLA records each.
 *
 * XLA records its own kernels as kernel nodes; it records an FFI custom call
 * (CustomCallCmd::RecordXlaFfiCall) by running the handler under stream
 * capture into a nested command buffer and adding that as a child-graph node
 * (ChildCommandType::kCloned). Each row is one graph of CHAIN dependent
 * launches of the same one-program Triton add (tests/fixtures add_fp32, its
 * cubin: the kernel trident.jax's 256-chain runs), replayed REPLAYS times;
 * per node = replay time / CHAIN (host time of cuGraphLaunch to the end of a
 * stream sync), median of the replays, the rows interleaved.
 *
 *   kernel nodes            cuGraphAddKernelNode per launch (XLA's own kernels)
 *   child graphs            a one-kernel-node child graph per launch (an FFI call as XLA records it)
 *   captured trident        a child graph per launch, captured from trd_kernel_launch on the
 *                           capturing stream (exactly what trident's handler does under XLA's trace)
 *   flat capture            the whole chain captured from trd_kernel_launch (kernel nodes again)
 *
 * A second table times what XLA does on a command-buffer update (when an
 * allocation a command uses moved since the last execution, e.g. a temporary
 * buffer at another address): a kernel node of its own gets new parameters
 * (cuGraphExecKernelNodeSetParams), a custom call is traced again (its handler
 * runs under stream capture into a new graph) and that graph replaces the
 * child node's (cuGraphExecChildGraphNodeSetParams). Each replay first updates
 * every node of the chain, its buffers alternating between two outputs, the
 * custom-call rows traced from a bare cuLaunchKernel (the least a handler can
 * do) and from trd_prepared_launch (what trident's handler does). The
 * difference between those two is the handler's part; between the bare
 * capture and the kernel node, XLA's way of recording a custom call.
 *
 *   bench_graph [FIXTURES_DIR]      (default: $TRD_SRCDIR/tests/fixtures/triton/cuda)
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <trident/trident.h>

#define BENCH_NAME "bench_graph"
#include "bench/bench_util.h"

#define CHAIN 256
#define REPLAYS 200
#define ROWS 4
#define UROWS 3
#define ELEMS 1000 /* the add's n: one program of the fixture's BLOCK 1024, masked */


static struct {
    CUresult (*ctxSet)(CUcontext);
    CUresult (*retain)(CUcontext *, CUdevice);
    CUresult (*modLoad)(CUmodule *, const void *);
    CUresult (*getFn)(CUfunction *, CUmodule, const char *);
    CUresult (*streamCreate)(CUstream *, unsigned);
    CUresult (*sync)(CUstream);
    CUresult (*graphCreate)(CUgraph *, unsigned);
    CUresult (*addKernel)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, const CUDA_KERNEL_NODE_PARAMS *);
    CUresult (*addChild)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, CUgraph);
    CUresult (*instantiate)(CUgraphExec *, CUgraph, unsigned long long);
    CUresult (*graphLaunch)(CUgraphExec, CUstream);
    CUresult (*execDestroy)(CUgraphExec);
    CUresult (*graphDestroy)(CUgraph);
    CUresult (*beginCapture)(CUstream, CUstreamCaptureMode);
    CUresult (*endCapture)(CUstream, CUgraph *);
    CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                       void **, void **);
    CUresult (*execKernelSet)(CUgraphExec, CUgraphNode, const CUDA_KERNEL_NODE_PARAMS *);
    CUresult (*execChildSet)(CUgraphExec, CUgraphNode, CUgraph);
    CUresult (*htod)(CUdeviceptr, const void *, size_t);
    CUresult (*dtoh)(void *, CUdeviceptr, size_t);
} cu;

static void load_cu(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h) {
        printf("SKIP: bench_graph: no libcuda: %s\n", dlerror());
        exit(77);
    }
#define SYM(field, name)                                                                               \
    do {                                                                                               \
        if (!(*(void **)&cu.field = dlsym(h, name))) {                                                 \
            fprintf(stderr, "bench_graph: libcuda has no %s\n", name);                                 \
            exit(1);                                                                                   \
        }                                                                                              \
    } while (0)
    SYM(ctxSet, "cuCtxSetCurrent");
    SYM(retain, "cuDevicePrimaryCtxRetain");
    SYM(modLoad, "cuModuleLoadData");
    SYM(getFn, "cuModuleGetFunction");
    SYM(streamCreate, "cuStreamCreate");
    SYM(sync, "cuStreamSynchronize");
    SYM(graphCreate, "cuGraphCreate");
    SYM(addKernel, "cuGraphAddKernelNode_v2");
    SYM(addChild, "cuGraphAddChildGraphNode");
    SYM(instantiate, "cuGraphInstantiateWithFlags");
    SYM(graphLaunch, "cuGraphLaunch");
    SYM(execDestroy, "cuGraphExecDestroy");
    SYM(graphDestroy, "cuGraphDestroy");
    SYM(beginCapture, "cuStreamBeginCapture_v2");
    SYM(endCapture, "cuStreamEndCapture");
    SYM(launch, "cuLaunchKernel");
    SYM(execKernelSet, "cuGraphExecKernelNodeSetParams_v2");
    SYM(execChildSet, "cuGraphExecChildGraphNodeSetParams");
    SYM(htod, "cuMemcpyHtoD_v2");
    SYM(dtoh, "cuMemcpyDtoH_v2");
#undef SYM
}

struct setup {
    CUfunction fn;
    CUstream s;
    void **params;
    trd_kernel_t *k;
    trd_launch_t launch;
    trd_prepared_t *prep;
};

/* One graph of CHAIN dependent launches, built the way `row` says. */
static CUgraph build(const struct setup *st, int row)
{
    CUgraph g;
    if (row == 3) { /* flat capture of trident's launches */
        CU(cu.beginCapture(st->s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
        for (int i = 0; i < CHAIN; i++)
            CHECK(trd_kernel_launch(st->k, &st->launch));
        CU(cu.endCapture(st->s, &g));
        return g;
    }
    CU(cu.graphCreate(&g, 0));
    CUDA_KERNEL_NODE_PARAMS kp = {.func = st->fn, .gridDimX = 1, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 128,
                                  .blockDimY = 1, .blockDimZ = 1, .kernelParams = st->params};
    CUgraphNode prev = NULL;
    for (int i = 0; i < CHAIN; i++) {
        CUgraphNode node;
        if (row == 0) {
            CU(cu.addKernel(&node, g, prev ? &prev : NULL, prev ? 1 : 0, &kp));
        } else {
            CUgraph child;
            if (row == 1) {
                CUgraphNode inner;
                CU(cu.graphCreate(&child, 0));
                CU(cu.addKernel(&inner, child, NULL, 0, &kp));
            } else {
                CU(cu.beginCapture(st->s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
                CHECK(trd_kernel_launch(st->k, &st->launch));
                CU(cu.endCapture(st->s, &child));
            }
            CU(cu.addChild(&node, g, prev ? &prev : NULL, prev ? 1 : 0, child)); /* the child is cloned */
            CU(cu.graphDestroy(child));
        }
        prev = node;
    }
    return g;
}

/* ---- updates: the second table ---- */

struct uchain {
    CUgraph g; /* kept: a node handle the updates name is the instantiated graph's */
    CUgraphExec ex;
    CUgraphNode node[CHAIN];
};

static CUDA_KERNEL_NODE_PARAMS kernel_params(const struct setup *st, void **p)
{
    return (CUDA_KERNEL_NODE_PARAMS){.func = st->fn, .gridDimX = 1, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 128,
                                     .blockDimY = 1, .blockDimZ = 1, .kernelParams = p};
}

/* A custom call's trace as XLA makes it: the launch captured into a graph of its own; row 1 launches with a bare
 * cuLaunchKernel, row 2 as trident's handler does (trd_prepared_launch with the packed parameters). */
static CUgraph trace(const struct setup *st, int row, void **p)
{
    CUgraph g;
    CU(cu.beginCapture(st->s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    if (row == 1) {
        CU(cu.launch(st->fn, 1, 1, 1, 128, 1, 1, 0, st->s, p, NULL));
    } else {
        trd_native_launch_t nl = {.struct_size = sizeof nl, .grid = {1, 1, 1}, .num_params = 4, .params = p,
                                  .native_stream = st->s};
        CHECK(trd_prepared_launch(st->prep, &nl));
    }
    CU(cu.endCapture(st->s, &g));
    return g;
}

static void ubuild(const struct setup *st, int row, void **p, struct uchain *c)
{
    CU(cu.graphCreate(&c->g, 0));
    CUDA_KERNEL_NODE_PARAMS kp = kernel_params(st, p);
    for (int i = 0; i < CHAIN; i++) {
        const CUgraphNode *dep = i ? &c->node[i - 1] : NULL;
        if (row == 0) {
            CU(cu.addKernel(&c->node[i], c->g, dep, i ? 1 : 0, &kp));
        } else {
            CUgraph child = trace(st, row, p);
            CU(cu.addChild(&c->node[i], c->g, dep, i ? 1 : 0, child));
            CU(cu.graphDestroy(child));
        }
    }
    CU(cu.instantiate(&c->ex, c->g, 0));
}

/* Every node gets the parameters p: new kernel-node parameters, or a new trace set into the child node. */
static void uupdate(const struct setup *st, int row, void **p, struct uchain *c)
{
    CUDA_KERNEL_NODE_PARAMS kp = kernel_params(st, p);
    for (int i = 0; i < CHAIN; i++) {
        if (row == 0) {
            CU(cu.execKernelSet(c->ex, c->node[i], &kp));
        } else {
            CUgraph child = trace(st, row, p);
            CU(cu.execChildSet(c->ex, c->node[i], child));
            CU(cu.graphDestroy(child));
        }
    }
}

/* Exits unless out (ELEMS floats) holds x + y and other holds only the fill pattern (the update moved the output). */
static void check_sum(const char *row, const float *x, const float *y, CUdeviceptr out, CUdeviceptr other)
{
    float got[ELEMS], untouched[ELEMS];
    CU(cu.dtoh(got, out, sizeof got));
    CU(cu.dtoh(untouched, other, sizeof untouched));
    for (int i = 0; i < ELEMS; i++) {
        if (got[i] != x[i] + y[i] || untouched[i] != -7.0f) {
            fprintf(stderr, "bench_graph: %s: element %d is %g (want %g), the other output's %g (want -7)\n", row, i,
                    (double)got[i], (double)(x[i] + y[i]), (double)untouched[i]);
            exit(1);
        }
    }
}

int main(int argc, char **argv)
{
    const char *src = getenv("TRD_SRCDIR");
    char fixtures[4096];
    snprintf(fixtures, sizeof fixtures, "%s", argc > 1 ? argv[1] : "");
    if (argc <= 1)
        snprintf(fixtures, sizeof fixtures, "%.3000s/tests/fixtures/triton/cuda", src ? src : ".");
    load_cu();
    trd_runtime_t *rt;
    CHECK(trd_runtime_create(NULL, &rt));
    trd_device_t *dev;
    if (trd_runtime_device_find(rt, "cuda:0", &dev) != TRD_OK) {
        printf("SKIP: bench_graph: no CUDA device (%s)\n", trd_error_message());
        trd_runtime_destroy(rt);
        return 77;
    }
    char path[8192];
    snprintf(path, sizeof path, "%.4000s/add_fp32", fixtures);
    struct setup st;
    trd_kernel_desc_t d = {.struct_size = sizeof d, .path = path};
    CHECK(trd_kernel_create(rt, &d, &st.k));
    CHECK(trd_kernel_load(st.k, dev, NULL));
    CUcontext ctx;
    CU(cu.retain(&ctx, 0));
    CU(cu.ctxSet(ctx));
    CU(cu.streamCreate(&st.s, CU_STREAM_NON_BLOCKING));
    snprintf(path, sizeof path, "%.4000s/add_fp32/add_kernel.cubin", fixtures);
    size_t cubin_size;
    void *cubin = slurp(path, &cubin_size);
    CUmodule mod;
    CU(cu.modLoad(&mod, cubin));
    CU(cu.getFn(&st.fn, mod, "add_kernel"));
    trd_buffer_t *b;
    CHECK(trd_buffer_alloc(dev, 4096 * 4, &b));
    void *base;
    CHECK(trd_buffer_address(b, &base));
    CUdeviceptr x = (CUdeviceptr)(uintptr_t)base, y = x + 4096, o = x + 8192, o2 = x + 12288, null = 0;
    int n = ELEMS;
    void *params[6] = {&x, &y, &o, &n, &null, &null}, *params2[6] = {&x, &y, &o2, &n, &null, &null};
    void **pset[2] = {params, params2};
    st.params = params;
    static float hx[ELEMS], hy[ELEMS], fill[ELEMS];
    srand(7);
    for (int i = 0; i < n; i++) {
        hx[i] = (float)rand() / (float)RAND_MAX * 2.0f - 1.0f;
        hy[i] = (float)rand() / (float)RAND_MAX * 2.0f - 1.0f;
        fill[i] = -7.0f;
    }
    CU(cu.htod(x, hx, sizeof hx));
    CU(cu.htod(y, hy, sizeof hy));
    CHECK(trd_kernel_prepare(st.k, dev, &st.prep));
    trd_arg_t args[4] = {trd_arg_ptr((void *)(uintptr_t)x), trd_arg_ptr((void *)(uintptr_t)y),
                         trd_arg_ptr((void *)(uintptr_t)o), trd_arg_int(n)};
    st.launch = (trd_launch_t){.struct_size = sizeof st.launch, .grid = {1, 1, 1}, .num_args = 4, .args = args,
                               .device = dev, .native_stream = st.s};
    static const char *names[ROWS] = {"kernel nodes (XLA's own kernels)",
                                      "child graphs of one kernel node (an FFI call as XLA records it)",
                                      "child graphs captured from trd_kernel_launch (trident's handler)",
                                      "flat capture of trd_kernel_launch"};
    CUgraphExec ex[ROWS];
    for (int r = 0; r < ROWS; r++) {
        CUgraph g = build(&st, r);
        CU(cu.instantiate(&ex[r], g, 0));
        CU(cu.graphDestroy(g));
    }
    static double t[ROWS][REPLAYS], tl[ROWS][REPLAYS];
    for (int round = 0; round < 2; round++) /* round 0 warms up */
        for (int i = 0; i < REPLAYS; i++)
            for (int k = 0; k < ROWS; k++) {
                int r = (k + i) % ROWS; /* rotate the order */
                double t0 = now_us();
                CU(cu.graphLaunch(ex[r], st.s));
                double t1 = now_us();
                CU(cu.sync(st.s));
                t[r][i] = (now_us() - t0) / CHAIN;
                tl[r][i] = (t1 - t0) / CHAIN;
            }
    printf("bench_graph: a CUDA graph of %d dependent launches of a one-program Triton add, %d replays each "
           "(interleaved); per node = replay / %d, median\n\n",
           CHAIN, REPLAYS, CHAIN);
    printf("| graph holds each launch as | per node | vs kernel nodes | cuGraphLaunch returned after, per node |\n"
           "|---|---|---|---|\n");
    double med[ROWS];
    for (int r = 0; r < ROWS; r++) {
        med[r] = median(t[r], REPLAYS);
        printf("| %s | %.3f us | %.3f | %.3f us |\n", names[r], med[r], med[r] / med[0], median(tl[r], REPLAYS));
    }
    for (int r = 0; r < ROWS; r++)
        CU(cu.execDestroy(ex[r]));

    static const char *unames[UROWS] = {"kernel nodes: new parameters (XLA's own kernels)",
                                        "child graphs: traced again from cuLaunchKernel (the least a handler does)",
                                        "child graphs: traced again from trd_prepared_launch (trident's handler)"};
    static struct uchain uc[UROWS];
    for (int r = 0; r < UROWS; r++)
        ubuild(&st, r, pset[0], &uc[r]);
    static double tu[UROWS][REPLAYS], tr[UROWS][REPLAYS];
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < REPLAYS; i++)
            for (int k = 0; k < UROWS; k++) {
                int r = (k + i) % UROWS;
                double t0 = now_us();
                uupdate(&st, r, pset[i & 1], &uc[r]);
                double t1 = now_us();
                CU(cu.graphLaunch(uc[r].ex, st.s));
                CU(cu.sync(st.s));
                tu[r][i] = (t1 - t0) / CHAIN;
                tr[r][i] = (now_us() - t1) / CHAIN;
            }
    /* each row's update takes effect: the output moves to the other buffer */
    for (int r = 0; r < UROWS; r++)
        for (int alt = 0; alt < 2; alt++) {
            CU(cu.htod(o, fill, sizeof fill));
            CU(cu.htod(o2, fill, sizeof fill));
            uupdate(&st, r, pset[alt], &uc[r]);
            CU(cu.graphLaunch(uc[r].ex, st.s));
            CU(cu.sync(st.s));
            check_sum(unames[r], hx, hy, alt ? o2 : o, alt ? o : o2);
        }
    printf("\nupdates: before each replay every node of the chain is updated (its output alternating between two "
           "buffers), as XLA updates a command buffer whose allocations moved; per node, median of %d; outputs "
           "checked\n\n",
           REPLAYS);
    printf("| each update of a node | update, per node | replay after it, per node | update + replay | vs kernel "
           "nodes |\n|---|---|---|---|---|\n");
    double mu[UROWS], mrp[UROWS];
    for (int r = 0; r < UROWS; r++) {
        mu[r] = median(tu[r], REPLAYS);
        mrp[r] = median(tr[r], REPLAYS);
        printf("| %s | %.3f us | %.3f us | %.3f us | %.3f |\n", unames[r], mu[r], mrp[r], mu[r] + mrp[r],
               (mu[r] + mrp[r]) / (mu[0] + mrp[0]));
    }
    printf("\nper custom call, XLA's tracing over its own kernel node: %+.3f us; trident's handler over a bare "
           "launch: %+.3f us\n",
           mu[1] + mrp[1] - mu[0] - mrp[0], mu[2] + mrp[2] - mu[1] - mrp[1]);
    for (int r = 0; r < UROWS; r++) {
        CU(cu.execDestroy(uc[r].ex));
        CU(cu.graphDestroy(uc[r].g));
    }
    trd_prepared_destroy(st.prep);
    trd_buffer_free(b);
    trd_kernel_destroy(st.k);
    free(cubin);
    trd_runtime_destroy(rt);
    return 0;
}
