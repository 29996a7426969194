/* SPDX-License-Identifier: Apache-2.0 */
/* run_report.c: what `trident run` prints (text, or one JSON object with
 * --json) and the --dump files. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file.h"
#include "tools/run.h"

static const char *fill_name(const struct arg_spec *s, const struct param *p, char *buf, size_t cap)
{
    char v[VALUE_TEXT];
    switch (s->fill) {
    case FILL_SEQ: return "seq";
    case FILL_RAND: snprintf(buf, cap, "rand:%llu", (unsigned long long)s->seed); return buf;
    case FILL_CONST:
        value_text(s->value, p->type, v, sizeof v);
        snprintf(buf, cap, "const:%s", v);
        return buf;
    case FILL_FILE: snprintf(buf, cap, "file:%s", s->path); return buf;
    default: return "zero";
    }
}

/* DIR/arg<i>.bin, a regular file: one already there that is not (a FIFO, a device) is refused, not written to or
 * waited on. */
static int dump(const struct run_report *r, uint32_t i, char *file, size_t cap)
{
    snprintf(file, cap, "%s/arg%u.bin", r->o->dump, i);
    int fd = open(file, O_WRONLY | O_CREAT | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0644);
    struct stat st;
    /* a FIFO without a reader fails the open (ENXIO); one with a reader, or a device, opens */
    if (fd >= 0 ? fstat(fd, &st) == 0 && !S_ISREG(st.st_mode) : stat(file, &st) == 0 && !S_ISREG(st.st_mode)) {
        fprintf(stderr, "trident: --dump: '%s' is %s, not a regular file\n", file, trd_file_kind(st.st_mode));
        if (fd >= 0)
            close(fd);
        return CLI_FAIL;
    }
    FILE *f = fd >= 0 && ftruncate(fd, 0) == 0 ? fdopen(fd, "wb") : NULL;
    uint64_t bytes = r->counts[i] * r->params[i].elem;
    int ok = f && fwrite(r->result[i], 1, (size_t)bytes, f) == bytes;
    if (f && fclose(f) != 0)
        ok = 0;
    else if (!f && fd >= 0)
        close(fd);
    if (!ok) {
        fprintf(stderr, "trident: --dump: cannot write '%s': %s\n", file, strerror(errno));
        return CLI_FAIL;
    }
    return 0;
}

/* A value in JSON: integers as integers (a u64 above 2^63-1, which JSON parsers' integers may not hold, as its
 * decimal string), floats as numbers, NaN and the infinities (which JSON has not) as "nan", "inf", "-inf". */
static json_t *value_json(trd_arg_t v, const char *type)
{
    char text[VALUE_TEXT];
    switch (v.kind) {
    case TRD_ARG_INT: return json_integer(v.value.i);
    case TRD_ARG_FLOAT:
        if (isfinite(v.value.f))
            return json_real(v.value.f);
        break;
    default:
        if (v.value.bits <= INT64_MAX)
            return json_integer((json_int_t)v.value.bits);
        break;
    }
    value_text(v, type, text, sizeof text);
    return json_string(text);
}

static json_t *stats_json(const struct run_report *r)
{
    const struct run_stats *s = r->stats;
    json_t *t = json_pack("{s:s, s:I, s:I, s:f, s:f, s:f, s:f, s:f}", "clock", "device events", "warmup",
                          (json_int_t)r->o->warmup, "launches", (json_int_t)s->n, "min_ms", s->min, "median_ms",
                          s->median, "mean_ms", s->mean, "max_ms", s->max, "stddev_ms", s->stddev);
    return t;
}

static json_t *check_json(const struct run_report *r, uint32_t c)
{
    const struct check_spec *ck = &r->o->checks[c];
    const struct check_result *res = &r->checks[c];
    const char *type = r->params[ck->arg].type;
    json_t *first = json_array();
    for (uint32_t k = 0; k < res->nshown; k++)
        json_array_append_new(first, json_pack("{s:I, s:o, s:o}", "index", (json_int_t)res->shown[k].index, "got",
                                               value_json(res->shown[k].got, type), "expected",
                                               value_json(res->shown[k].expected, type)));
    return json_pack("{s:I, s:s, s:s, s:s, s:f, s:b, s:I, s:I, s:f, s:f, s:b, s:o}", "arg", (json_int_t)ck->arg,
                     "name", r->params[ck->arg].name, "reference", ck->ref, "kind",
                     ck->is_expr ? "expression" : "file", "rtol", res->rtol, "nan_equal", ck->nan_equal, "elements",
                     (json_int_t)res->elements, "mismatches", (json_int_t)res->mismatches, "max_abs_error",
                     res->max_abs, "max_rel_error", res->max_rel, "ok", res->mismatches == 0, "first_mismatches",
                     first);
}

static void print_text_header(const struct run_report *r)
{
    const struct run_stats *s = r->stats;
    printf("kernel %s (%s) on %s (%s, %s), %s image\n", r->ki->name, r->ki->signature, r->dp->uri, r->dp->name,
           r->dp->arch, trd_format_name(r->li->format));
    printf("grid %ux%ux%u, block %u threads, shared %u B, registers %u, spills %u\n", r->o->grid[0], r->o->grid[1],
           r->o->grid[2], r->li->block_size, r->li->shared, r->li->registers, r->li->spills);
    printf("load %.3f ms; %llu warm-up launch%s, then %llu timed on the device's clock (events):\n", r->load_ms,
           (unsigned long long)r->o->warmup, r->o->warmup == 1 ? "" : "es", (unsigned long long)s->n);
    printf("time median %.4f ms, min %.4f, mean %.4f, max %.4f, stddev %.4f (%.1f%%)\n", s->median, s->min, s->mean,
           s->max, s->stddev, s->mean > 0 ? 100.0 * s->stddev / s->mean : 0.0);
    if (r->bytes && s->median > 0)
        printf("bandwidth %.2f GB/s (%llu bytes a launch%s, at the median)\n", (double)r->bytes / (s->median * 1e6),
               (unsigned long long)r->bytes, r->o->bytes_given ? "" : ": every buffer read or written once");
    printf("outputs after the %s launch\n", r->o->after_last ? "last" : "first");
}

int run_report(const struct run_report *r)
{
    const struct run_opts *o = r->o;
    json_t *report = NULL, *bufs = NULL;
    if (o->json) {
        report = json_pack("{s:s, s:s, s:s, s:s, s:[iii], s:f, s:I, s:I, s:o, s:I, s:o, s:s}", "kernel", r->ki->name,
                           "signature", r->ki->signature, "device", r->dp->uri, "format",
                           trd_format_name(r->li->format), "grid", o->grid[0], o->grid[1], o->grid[2], "load_ms",
                           r->load_ms, "registers", (json_int_t)r->li->registers, "spills", (json_int_t)r->li->spills,
                           "timing", stats_json(r), "bytes", (json_int_t)r->bytes, "gbps",
                           r->bytes && r->stats->median > 0 ? json_real((double)r->bytes / (r->stats->median * 1e6))
                                                            : json_null(),
                           "outputs_after", o->after_last ? "last" : "first");
        bufs = json_array();
    } else {
        print_text_header(r);
    }
    for (uint32_t i = 0; i < o->nargs; i++) {
        if (r->specs[i].kind != ARG_BUFFER)
            continue;
        char fill[4200];
        json_t *b = o->json ? json_pack("{s:I, s:s, s:s, s:I, s:I, s:s}", "arg", (json_int_t)i, "name",
                                        r->params[i].name, "type", r->params[i].type, "count",
                                        (json_int_t)r->counts[i], "bytes",
                                        (json_int_t)(r->counts[i] * r->params[i].elem), "fill",
                                        fill_name(&r->specs[i], &r->params[i], fill, sizeof fill))
                            : NULL;
        if (o->dump) {
            char file[4200];
            if (dump(r, i, file, sizeof file)) {
                json_decref(b);
                json_decref(bufs);
                json_decref(report);
                return CLI_FAIL;
            }
            if (b)
                json_object_set_new(b, "file", json_string(file));
        }
        if (o->print) {
            uint64_t n = o->print < r->counts[i] ? o->print : r->counts[i];
            json_t *vals = b ? json_array() : NULL;
            if (!b)
                printf("arg %u%s%s (*%s):", i, r->params[i].name[0] ? " " : "", r->params[i].name, r->params[i].type);
            for (uint64_t e = 0; e < n; e++) {
                trd_arg_t v = elem_read(r->result[i], (size_t)e, r->params[i].type);
                char text[VALUE_TEXT];
                if (vals) {
                    json_array_append_new(vals, value_json(v, r->params[i].type));
                } else {
                    value_text(v, r->params[i].type, text, sizeof text);
                    printf(" %s", text);
                }
            }
            if (vals)
                json_object_set_new(b, "values", vals);
            else
                printf("%s\n", n < r->counts[i] ? " ..." : "");
        }
        if (b)
            json_array_append_new(bufs, b);
    }
    if (!o->json) {
        for (uint32_t c = 0; c < o->nchecks; c++) {
            const struct check_result *res = &r->checks[c];
            printf("check %s: %llu of %llu elements differ (rtol %g; max error %g, relative %g)\n", o->checks[c].text,
                   (unsigned long long)res->mismatches, (unsigned long long)res->elements, res->rtol, res->max_abs,
                   res->max_rel);
        }
        return CLI_OK;
    }
    json_t *checks = json_array();
    for (uint32_t c = 0; c < o->nchecks; c++)
        json_array_append_new(checks, check_json(r, c));
    json_object_set_new(report, "buffers", bufs);
    json_object_set_new(report, "checks", checks);
    return cli_print_json(report);
}

uint32_t run_report_mismatches(const struct run_report *r)
{
    uint32_t failed = 0;
    for (uint32_t c = 0; c < r->o->nchecks; c++) {
        const struct check_result *res = &r->checks[c];
        if (!res->mismatches)
            continue;
        failed++;
        fprintf(stderr, "trident: --check %s: %llu of %llu elements differ beyond rtol %g:", r->o->checks[c].text,
                (unsigned long long)res->mismatches, (unsigned long long)res->elements, res->rtol);
        const char *type = r->params[r->o->checks[c].arg].type;
        for (uint32_t k = 0; k < res->nshown; k++) {
            char got[VALUE_TEXT], want[VALUE_TEXT];
            value_text(res->shown[k].got, type, got, sizeof got);
            value_text(res->shown[k].expected, type, want, sizeof want);
            fprintf(stderr, "%s [%llu] %s, expected %s", k ? "," : "", (unsigned long long)res->shown[k].index, got,
                    want);
        }
        fprintf(stderr, "%s\n", res->mismatches > res->nshown ? ", ..." : "");
    }
    return failed;
}
