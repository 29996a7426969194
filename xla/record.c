/* SPDX-License-Identifier: Apache-2.0 */
/* record.c: the RECORD stage (FFI API 0.4 with the record extension: jaxlib 0.11.2 and newer).
 *
 * Without it XLA puts a command-buffer-compatible custom call into its CUDA graph by capturing EXECUTE into a
 * child graph: a node that blocks XLA's programmatic dependent launch (PDL) edges on both sides and is traced
 * again whenever the call's buffers move. With it, the handler makes each trident launch a kernel node of XLA's
 * own graph (create_launch: the image loaded on the device, grid, block, cluster, shared memory, PDL, every
 * parameter: buffers and null pointers as device pointers, scalars and tensor maps by value, Triton's two
 * scratch pointers last) and, when XLA updates the graph for new buffers, gives the node the new addresses
 * (update_launch). What it cannot record (record_blocker) it hands back to stream capture
 * (request_stream_capture), which runs EXECUTE as before.
 *
 * jax's register_ffi_target builds a bundle without the record handler, so trd_xla_cuda_record_register
 * registers one more target, TRD_XLA_TARGET_RECORD, with it: through the CUDA runtime's own API table, which
 * the CUDA handlers' metadata query kept at their registration (ffi.c, xla_platform_api). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xla/ffi.h"

/* trd_xla_cuda_record_register's refusal: libtrident's message of the calling thread (trd_error_message). */
#define REFUSE(...) (xla_fail(TRD_ERR_UNSUPPORTED, __VA_ARGS__), trd_error_message())

#if XLA_HAVE_RECORD

/* The record extension's versions this file knows: 0.1 (jaxlib 0.11.2) and 0.2 (0.12: FUNCTION_PTR added; the
 * structures used here are 0.1's). */
#define RECORD_MINOR_OLDEST 1

/* Blocks of a cluster beyond which CUDA needs the non-portable cluster attribute, which XLA's node lacks. */
#define PORTABLE_CLUSTER 8

/* Why the slot's launch cannot become one kernel node (XLA captures EXECUTE instead), or NULL. */
static const char *record_blocker(const struct xla_call *c, const struct xla_slot *s,
                                  const trd_prepared_native_t *n, char *buf, size_t cap)
{
    if (!s || !atomic_load_explicit(&s->checked, memory_order_acquire))
        return "not executed on this device yet (its first execution loads the kernel, checks the buffers and "
               "chooses an autotuned call's candidate)";
    const struct xla_cand *cand = s->run.cand;
    if (cand->nzero)
        return "it zeroes results before the launch (a memset the record API has no node for)";
    if (!cand->grid[0] || !cand->grid[1] || !cand->grid[2])
        return "its grid is empty (nothing to launch)";
    if (n->format != TRD_FORMAT_CUBIN) {
        snprintf(buf, cap, "the image loaded on %s is not a cubin (format %d): XLA would compile it again without "
                 "trident's load options", s->uri, n->format);
        return buf;
    }
    if (n->flags & TRD_NATIVE_COOPERATIVE)
        return "a cooperative launch (the record API has no attribute for it)";
    if (n->cluster[0] > PORTABLE_CLUSTER)
        return "a cluster of more than 8 blocks (a non-portable size, which XLA's node does not allow)";
    for (int k = 0; k < 2; k++)
        if (s->run.scratch_need[k] && c->scratch[k] < 0)
            return "it needs scratch the call passes no buffer for (the driver's arena is per stream)";
    return NULL;
}

/* One argument of the node, 4 bytes: its kind (PLAN_*) in bits 0-1; for a value its size less one in bits 2-4 and
 * its index in the plan's values from bit 5; for an operand or result, the frame's index from bit 5. */
enum { PLAN_VALUE, PLAN_NULL, PLAN_OPERAND, PLAN_RESULT };
#define PLAN_INDEX_MAX ((1u << 27) - 1)
_Static_assert(XLA_MAX_PARAMS + 2 <= PLAN_INDEX_MAX, "a plan argument's value index holds every argument's");

static uint32_t plan_arg(int kind, uint32_t size, uint32_t index)
{
    return (uint32_t)kind | (size ? size - 1 : 0) << 2 | index << 5;
}

/* The kind of the launch's argument k (record_args' list): a parameter taken from an operand or result, or
 * Triton's scratch pointer k - nparams from a scratch result; a null pointer; or (PLAN_VALUE) a value (a scalar or
 * a tensor map). */
static int plan_kind(const struct xla_call *c, const struct xla_slot *s, uint32_t k)
{
    if (k >= c->nparams)
        return xla_run_scratch_result(c, &s->run, (int)(k - c->nparams)) >= 0 ? PLAN_RESULT : PLAN_NULL;
    switch (c->params[k].kind) {
    case TRD_XLA_ARG_OPERAND:
        return PLAN_OPERAND;
    case TRD_XLA_ARG_RESULT:
        return PLAN_RESULT;
    case TRD_XLA_ARG_NULL:
        return PLAN_NULL;
    default:
        return PLAN_VALUE;
    }
}

/* The launch's kernel arguments: buffers and null pointers as device pointers, everything else by value from
 * storage/maps. (XLA copies each host value into an allocation of its own at every create and update; a device
 * pointer it only stores.) */
struct record_args {
    uint64_t storage[XLA_MAX_PARAMS];
    void *params[XLA_MAX_PARAMS];
    xla_tma_bytes maps[XLA_TMA_MAX];
    XLA_FFI_KernelArg args[XLA_MAX_PARAMS + 2];
    XLA_FFI_KernelArgs list;
};

static trd_status_t record_args(XLA_FFI_CallFrame *f, const struct xla_call *c, const struct xla_slot *s,
                                struct record_args *ra)
{
    trd_status_t st = xla_run_params(f, c, s, &s->run, ra->storage, ra->maps, ra->params);
    if (st != TRD_OK)
        return st;
    uint32_t n = 0;
    for (uint32_t i = 0; i < c->nparams; i++) {
        if (plan_kind(c, s, i) != PLAN_VALUE) {
            void *ptr;
            memcpy(&ptr, ra->params[i], sizeof ptr);
            ra->args[n++] = (XLA_FFI_KernelArg){ptr, 0, XLA_FFI_KernelArgType_DevicePtr};
        } else {
            ra->args[n++] = (XLA_FFI_KernelArg){ra->params[i], c->params[i].info.size,
                                                XLA_FFI_KernelArgType_HostValue};
        }
    }
    const XLA_FFI_Buffer *scratch[2];
    xla_run_scratch(f, c, &s->run, scratch);
    for (int k = 0; k < 2; k++)
        ra->args[n++] = (XLA_FFI_KernelArg){scratch[k] ? scratch[k]->data : NULL, 0, XLA_FFI_KernelArgType_DevicePtr};
    ra->list = (XLA_FFI_KernelArgs){ra->args, n};
    return TRD_OK;
}

/* The slot's first kernel node, as an update needs it: the argument list create_launch got, as 4 bytes an
 * argument, then its values (scalars) copied, 8 bytes each. An update comes after a whole execution, when every
 * line of the call's state is cold: it reads this block (an add's arguments and value: 40 bytes) and the frame's
 * buffers, nothing else of the call; and where the block fits the call's hot line (struct xla_hot_plan) and the
 * ordinal is the first recorded, only that line. */
struct xla_record_plan {
    uint32_t nargs, nvalues;
    uint32_t words[]; /* nargs arguments (plan_arg), then nvalues values from an even word: 8-byte aligned */
};
_Static_assert(offsetof(struct xla_record_plan, words) % 8 == 0 && offsetof(struct xla_hot_plan, words) % 8 == 0,
               "a plan's values are 8-byte aligned");

/* Words of a plan of n arguments and v values. */
static size_t plan_words(uint32_t n, uint32_t v)
{
    return (n + 1u) / 2u * 2u + 2u * (size_t)v;
}

/* The plan of the list create_launch got (l): its values copied, each device pointer's buffer named by the call's
 * parameters (operand or result, index) or scratch results. NULL for a call of tensor maps (an update encodes
 * them again from the new addresses: record_args), a value wider than 8 bytes (none is today), an index past
 * PLAN_INDEX_MAX or out of memory (the update takes record_args too). */
static struct xla_record_plan *plan_make(const struct xla_call *c, const struct xla_slot *s,
                                         const XLA_FFI_KernelArgs *l)
{
    if (c->ntma || l->num_args < 0 || l->num_args > UINT16_MAX)
        return NULL;
    uint32_t n = (uint32_t)l->num_args, nvalues = 0;
    for (uint32_t k = 0; k < n; k++) {
        if (l->args[k].type == XLA_FFI_KernelArgType_HostValue &&
            (l->args[k].size < 1 || (uint64_t)l->args[k].size > sizeof(uint64_t)))
            return NULL;
        nvalues += plan_kind(c, s, k) == PLAN_VALUE;
    }
    /* whole cache lines: an update reads the block cold, and no line of it is shared */
    size_t bytes = sizeof(struct xla_record_plan) + plan_words(n, nvalues) * sizeof(uint32_t);
    struct xla_record_plan *p = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p)
        return NULL;
    memset(p, 0, bytes);
    p->nargs = n;
    p->nvalues = nvalues;
    unsigned char *values = (unsigned char *)(p->words + plan_words(n, 0));
    nvalues = 0;
    for (uint32_t k = 0; k < n; k++) {
        int kind = plan_kind(c, s, k);
        uint32_t size = 0, index = 0;
        if (kind == PLAN_VALUE) {
            size = (uint32_t)l->args[k].size;
            memcpy(values + 8 * nvalues, l->args[k].arg_address, size);
            index = nvalues++;
        } else if (kind != PLAN_NULL) {
            int64_t i = k < c->nparams ? c->params[k].index : xla_run_scratch_result(c, &s->run, (int)(k - c->nparams));
            if (i < 0 || i > PLAN_INDEX_MAX) {
                free(p);
                return NULL;
            }
            index = (uint32_t)i;
        }
        p->words[k] = plan_arg(kind, size, index);
    }
    return p;
}

/* The slot's plan: made with its first kernel node; a later creation (XLA making its command buffer again, on
 * this or another thread) finds the same contents and keeps the first. The ordinal's entry in the call gets it
 * too (the slot keeps owning it), and the call's hot line a copy where it fits and no other ordinal has it. */
static void plan_publish(struct xla_call *c, struct xla_slot *s, int32_t ordinal, const XLA_FFI_KernelArgs *l)
{
    struct xla_record_plan *none = NULL, *mine;
    if (!atomic_load_explicit(&s->plan, memory_order_relaxed) && (mine = plan_make(c, s, l)) &&
        !atomic_compare_exchange_strong_explicit(&s->plan, &none, mine, memory_order_release, memory_order_relaxed))
        free(mine);
    const struct xla_record_plan *p = atomic_load_explicit(&s->plan, memory_order_acquire);
    if (!p)
        return;
    atomic_store_explicit(&c->plan_by_ordinal[ordinal], p, memory_order_release);
    size_t words = plan_words(p->nargs, p->nvalues);
    int32_t free_line = -1;
    if (words <= XLA_HOT_WORDS && atomic_compare_exchange_strong_explicit(&c->hot.ordinal, &free_line, -2,
                                                                           memory_order_acquire, memory_order_relaxed)) {
        c->hot.nargs = (uint16_t)p->nargs;     /* at most XLA_HOT_WORDS arguments, and half as many values */
        c->hot.nvalues = (uint8_t)p->nvalues;
        memcpy(c->hot.words, p->words, words * sizeof(uint32_t));
        atomic_store_explicit(&c->hot.ordinal, ordinal, memory_order_release); /* the line, then whom it serves */
    }
}

/* The update's list: the plan's (nargs arguments in words, values after them) in args[nargs], with the frame's
 * addresses. */
static XLA_FFI_KernelArgs plan_fill(uint32_t nargs, const uint32_t *words, XLA_FFI_CallFrame *f,
                                    XLA_FFI_KernelArg *args)
{
    const unsigned char *values = (const unsigned char *)(words + plan_words(nargs, 0));
    for (uint32_t k = 0; k < nargs; k++) {
        uint32_t a = words[k], index = a >> 5;
        switch (a & 3) {
        case PLAN_VALUE:
            args[k] = (XLA_FFI_KernelArg){(void *)(values + 8 * index), ((a >> 2) & 7) + 1,
                                          XLA_FFI_KernelArgType_HostValue};
            break;
        case PLAN_NULL:
            args[k] = (XLA_FFI_KernelArg){NULL, 0, XLA_FFI_KernelArgType_DevicePtr};
            break;
        default: {
            const XLA_FFI_Buffer *b = (a & 3) == PLAN_RESULT ? f->rets.rets[index] : f->args.args[index];
            args[k] = (XLA_FFI_KernelArg){b->data, 0, XLA_FFI_KernelArgType_DevicePtr};
        }
        }
    }
    return (XLA_FFI_KernelArgs){args, nargs};
}

/* Updates the frame's kernel node from a plan, args[] holding its nargs. Logged where debug logging was on at the
 * call's last creation (the hot line says so: no call into the log on an update otherwise), naming no more than
 * the ordinal (scripts/record-probe.py counts these lines). */
static XLA_FFI_Error *plan_update(XLA_FFI_CallFrame *f, const XLA_FFI_RecordFrame *rf, const struct xla_call *c,
                                  uint32_t nargs, const uint32_t *words, XLA_FFI_KernelArg *args, int32_t ordinal)
{
    XLA_FFI_KernelArgs list = plan_fill(nargs, words, f, args);
    if (atomic_load_explicit(&c->hot.log_updates, memory_order_relaxed))
        xla_log(TRD_LOG_DEBUG, "record: kernel on XLA's device %d: kernel node updated", ordinal);
    return rf->api->update_launch(rf->record_ctx, rf->commands[0], &list);
}

/* The update from a plan too long for the hot line: a frame of its own for its list. */
static __attribute__((noinline)) XLA_FFI_Error *plan_update_long(XLA_FFI_CallFrame *f, const XLA_FFI_RecordFrame *rf,
                                                                 const struct xla_call *c,
                                                                 const struct xla_record_plan *p, int32_t ordinal)
{
    XLA_FFI_KernelArg args[XLA_MAX_PARAMS + 2];
    return plan_update(f, rf, c, p->nargs, p->words, args, ordinal);
}

/* What an update without a plan and a creation do (record() keeps to the plans: an update's work). */
static __attribute__((noinline)) XLA_FFI_Error *record_slow(XLA_FFI_CallFrame *f, const XLA_FFI_RecordFrame *rf,
                                                            struct xla_call *c, int32_t ordinal, int known, int update)
{
    const XLA_FFI_Api *api = f->api;
    XLA_FFI_Error *e;
    struct record_args ra;
    struct xla_slot *s = known ? atomic_load_explicit(&c->by_ordinal[ordinal], memory_order_acquire) : NULL;
    trd_status_t st;
    if (update && s && atomic_load_explicit(&s->recorded, memory_order_acquire) && *rf->num_commands == 1) {
        /* a kernel node of a call without a plan (tensor maps, encoded again from the new addresses) */
        if ((st = record_args(f, c, s, &ra)) != TRD_OK)
            return xla_error(api, xla_errc(st), "%s", trd_error_message());
        xla_log(TRD_LOG_DEBUG, "record: kernel '%s' on %s: kernel node updated", c->name, s->uri);
        return rf->api->update_launch(rf->record_ctx, rf->commands[0], &ra.list);
    }
    trd_prepared_native_t native = {.struct_size = sizeof native};
    st = s ? trd_prepared_native(s->run.prepared, &native) : TRD_OK;
    if (st != TRD_OK)
        return xla_error(api, xla_errc(st), "trident: %s", trd_error_message());
    char buf[256];
    const char *why = record_blocker(c, s, &native, buf, sizeof buf);
    /* an update of what was captured is captured again: one node per launch, made at creation only */
    if (!why && update)
        why = "its command buffer was made by stream capture";
    if (why) {
        xla_log(TRD_LOG_DEBUG, "record: kernel '%s' on XLA's device %d: %s; XLA captures its stream instead", c->name,
                ordinal, why);
        return rf->api->request_stream_capture(rf->record_ctx);
    }
    if ((st = record_args(f, c, s, &ra)) != TRD_OK)
        return xla_error(api, xla_errc(st), "%s", trd_error_message());
    if (*rf->num_commands >= rf->max_commands)
        return xla_error(api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED,
                         "kernel '%s': XLA's record frame holds %lld commands, no room for the launch", c->name,
                         (long long)rf->max_commands);
    const struct xla_cand *cand = s->run.cand;
    uint32_t cx = native.cluster[0] ? native.cluster[0] : 1;
    XLA_FFI_LaunchDims dims = {
        {(int32_t)((uint64_t)cand->grid[0] * cx), (int32_t)cand->grid[1], (int32_t)cand->grid[2]},
        {(int32_t)native.block[0], (int32_t)native.block[1], (int32_t)native.block[2]},
        {(int32_t)native.cluster[0], (int32_t)native.cluster[1], (int32_t)native.cluster[2]},
    };
    if ((uint64_t)cand->grid[0] * cx > 0x7fffffffu)
        return xla_error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "kernel '%s': grid x %u times %u CTAs exceeds 2^31-1", c->name, cand->grid[0], cx);
    const XLA_FFI_Command *cmd = NULL;
    if ((e = rf->api->create_launch(rf->record_ctx, native.entry, native.image, (int64_t)native.image_size,
                                    XLA_FFI_SourceFormat_CUBIN, dims, native.shared,
                                    (native.flags & TRD_NATIVE_PDL) != 0, &ra.list, NULL, 0, &cmd)) != NULL)
        return e;
    rf->commands[(*rf->num_commands)++] = cmd;
    atomic_store_explicit(&c->hot.log_updates, trd_log_get_level() >= TRD_LOG_DEBUG, memory_order_relaxed);
    plan_publish(c, s, ordinal, &ra.list);
    atomic_store_explicit(&s->recorded, 1, memory_order_release);
    xla_log(TRD_LOG_INFO, "record: kernel '%s' on %s recorded as a kernel node (grid %dx%dx%d, block %d, shared %u%s)",
            c->name, s->uri, dims.grid.x, dims.grid.y, dims.grid.z, dims.block.x, native.shared,
            native.flags & TRD_NATIVE_PDL ? ", PDL" : "");
    return NULL;
}

static XLA_FFI_Error *record(XLA_FFI_CallFrame *f, int platform)
{
    XLA_FFI_Error *e;
    if (xla_metadata_query(f, platform, 0, &e))
        return e;
    const XLA_FFI_Api *api = f->api;
    if (!XLA_API_HAS(api, XLA_FFI_InvokeContext_FindExtension))
        return xla_error(api, XLA_FFI_Error_Code_UNIMPLEMENTED,
                         "trident_kernel_call: this XLA (FFI API %d.%d) has no record extension",
                         api->api_version.major_version, api->api_version.minor_version);
    XLA_FFI_InvokeContext_FindExtension_Args fa = {XLA_FFI_InvokeContext_FindExtension_Args_STRUCT_SIZE, NULL,
                                                   f->ctx, XLA_FFI_Extension_Record, NULL};
    if ((e = api->XLA_FFI_InvokeContext_FindExtension(&fa)) != NULL)
        return e;
    if (!fa.extension)
        return xla_error(api, XLA_FFI_Error_Code_FAILED_PRECONDITION,
                         "trident_kernel_call: the RECORD stage came without XLA's record extension");
    const XLA_FFI_ExtensionId *id = &fa.extension->id;
    if (id->major_version != XLA_FFI_Extension_Record_MajorVersion || id->minor_version < RECORD_MINOR_OLDEST ||
        id->minor_version > XLA_FFI_Extension_Record_MinorVersion)
        return xla_error(api, XLA_FFI_Error_Code_UNIMPLEMENTED,
                         "trident_kernel_call: XLA's record extension is version %d.%d; libtrident_xla knows %d.%d to "
                         "%d.%d (set TRIDENT_XLA_RECORD=0 to leave the call to stream capture)",
                         id->major_version, id->minor_version, XLA_FFI_Extension_Record_MajorVersion,
                         RECORD_MINOR_OLDEST, XLA_FFI_Extension_Record_MajorVersion,
                         XLA_FFI_Extension_Record_MinorVersion);
    const XLA_FFI_RecordFrame *rf = ((const XLA_FFI_Record_Extension *)fa.extension)->record_frame;
    XLA_FFI_State_Get_Args ga = {XLA_FFI_State_Get_Args_STRUCT_SIZE, NULL, f->ctx,
                                 XLA_FFI_ExecutionStage_INSTANTIATE, &xla_state_id[platform], NULL};
    if ((e = api->XLA_FFI_State_Get(&ga)) != NULL)
        return e;
    struct xla_call *c = ga.state;
    if (!c)
        return xla_error(api, XLA_FFI_Error_Code_FAILED_PRECONDITION,
                         "trident_kernel_call: RECORD without the call's state (INSTANTIATE did not run)");
    int32_t ordinal = -1;
    xla_device_ordinal(f, &ordinal);
    int known = ordinal >= 0 && ordinal < XLA_MAX_ORDINALS;
    int update = rf->action == XLA_FFI_RecordAction_Update;
    if (update && known && *rf->num_commands == 1) {
        /* a kernel node this handler made (its slot's plan is published after the first): what blocks one
         * (record_blocker) does not come back once a slot passed it, so only the addresses are read again. An
         * update comes after a whole execution, when each line of the call's state is cold (H200: a miss costs
         * about 0.1 us): it reads the call's hot line (the first ordinal's plan, where it fits), else the
         * ordinal's line of the call and the plan; no other fact of the launch, in a small frame */
        if (atomic_load_explicit(&c->hot.ordinal, memory_order_acquire) == ordinal) {
            XLA_FFI_KernelArg args[XLA_HOT_WORDS];
            return plan_update(f, rf, c, c->hot.nargs, c->hot.words, args, ordinal);
        }
        const struct xla_record_plan *p = atomic_load_explicit(&c->plan_by_ordinal[ordinal], memory_order_acquire);
        if (p)
            return plan_update_long(f, rf, c, p, ordinal);
    }
    return record_slow(f, rf, c, ordinal, known, update);
}

TRD_API void *trd_xla_cuda_record(void *f)
{
    return record(f, PLATFORM_CUDA);
}

static const char *record_register(void)
{
    const XLA_FFI_Api *api = atomic_load(&xla_platform_api[PLATFORM_CUDA]);
    if (!api)
        return REFUSE("the CUDA handlers are not registered yet (their registration gives XLA's API table)");
    int minor = api->api_version.minor_version;
    if (minor < 4)
        return REFUSE("this XLA speaks FFI API %d.%d, which has no RECORD stage (0.4: jaxlib 0.11.1 and newer)",
                      api->api_version.major_version, minor);
    if (minor > XLA_FFI_API_MINOR)
        return REFUSE("this XLA speaks FFI API %d.%d, newer than the %d.%d libtrident_xla was built against: its "
                      "record extension may have changed (rebuild against its header)",
                      api->api_version.major_version, minor, XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR);
    if (!XLA_API_HAS(api, XLA_FFI_Handler_Register))
        return REFUSE("this XLA's API table has no XLA_FFI_Handler_Register");
    XLA_FFI_Handler_Register_Args a = {
        XLA_FFI_Handler_Register_Args_STRUCT_SIZE,
        NULL,
        {TRD_XLA_TARGET_RECORD, strlen(TRD_XLA_TARGET_RECORD)},
        {"CUDA", 4},
        {.instantiate = (XLA_FFI_Handler *)trd_xla_cuda_instantiate,
         .execute = (XLA_FFI_Handler *)trd_xla_cuda_execute,
         .record = (XLA_FFI_Handler *)trd_xla_cuda_record},
        XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE,
    };
    XLA_FFI_Error *e = api->XLA_FFI_Handler_Register(&a);
    if (!e)
        return NULL;
    const char *msg = "(no message)";
    XLA_FFI_Error_GetDetails_Args d = {XLA_FFI_Error_GetDetails_Args_STRUCT_SIZE, NULL, e, NULL, 0};
    if (XLA_API_HAS(api, XLA_FFI_Error_GetDetails)) {
        api->XLA_FFI_Error_GetDetails(&d);
        msg = d.message ? d.message : msg;
    }
    xla_fail(TRD_ERR_UNSUPPORTED, "XLA refused the registration of %s: %s", TRD_XLA_TARGET_RECORD, msg);
    XLA_FFI_Error_Destroy_Args da = {XLA_FFI_Error_Destroy_Args_STRUCT_SIZE, NULL, e};
    api->XLA_FFI_Error_Destroy(&da);
    return trd_error_message();
}

#else /* an FFI header without the RECORD stage: the same symbols, refusing */

TRD_API void *trd_xla_cuda_record(void *f)
{
    XLA_FFI_CallFrame *frame = f;
    XLA_FFI_Error *e;
    if (xla_metadata_query(frame, PLATFORM_CUDA, 0, &e))
        return e;
    return xla_error(frame->api, XLA_FFI_Error_Code_UNIMPLEMENTED,
                     "trident_kernel_call: libtrident_xla was built against XLA FFI API %d.%d headers, which have no "
                     "RECORD stage",
                     XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR);
}

static const char *record_register(void)
{
    return REFUSE("libtrident_xla was built against XLA FFI API %d.%d headers, which have no RECORD stage (build "
                  "against jaxlib 0.11.2's or newer: scripts/xla-ffi-headers.sh)",
                  XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR);
}

#endif

TRD_API const char *trd_xla_cuda_record_register(void)
{
    return record_register();
}

TRD_API int32_t trd_xla_ffi_version(void)
{
    return XLA_FFI_API_MAJOR * 1000 + XLA_FFI_API_MINOR;
}
