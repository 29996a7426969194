/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_signature: signatures in Triton's notation and in Triton IR. Whatever
 * parses must survive its canonical form: parse, print the canonical text,
 * parse that again, and the two parses must agree field by field (and the
 * canonical text be a fixed point); any difference aborts. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

static void fail(const char *input, const char *canonical, const char *what, uint32_t index)
{
    fprintf(stderr, "fuzz_signature: %s differs at entry %u\n  input: %.200s\n  canonical: %.200s\n", what, index,
            input, canonical);
    abort();
}

/* The launch-relevant fields, one by one: canonical text must mean the same signature. */
static void same(const struct trd_signature *a, const struct trd_signature *b, const char *input)
{
    if (!a->canonical || !b->canonical || strlen(a->canonical) != strlen(b->canonical) ||
        strcmp(a->canonical, b->canonical) != 0)
        fail(input, a->canonical ? a->canonical : "(null)", "the canonical text", 0);
    if (a->count != b->count)
        fail(input, a->canonical, "the entry count", a->count);
    if (a->num_params != b->num_params)
        fail(input, a->canonical, "the launch parameter count", a->num_params);
    uint32_t launched = 0;
    for (uint32_t i = 0; i < a->count; i++) {
        const struct trd_param *p = &a->params[i], *q = &b->params[i];
        if ((p->name == NULL) != (q->name == NULL) || (p->name && strcmp(p->name, q->name) != 0))
            fail(input, a->canonical, "the name", i);
        if (p->type != q->type || p->size != q->size || p->align != q->align)
            fail(input, a->canonical, "the type, size or alignment", i);
        if (p->type == TRD_T_PTR &&
            (p->elem != q->elem || p->base != q->base || p->depth != q->depth || p->depth < 1 ||
             p->depth > TRD_MAX_PTR_DEPTH || (p->depth > 1) != (p->elem == TRD_T_PTR) ||
             (p->depth == 1 && p->elem != p->base) || p->size != 8))
            fail(input, a->canonical, "the pointer", i);
        if (p->type != TRD_T_PTR && (p->depth != 0 || q->depth != 0))
            fail(input, a->canonical, "a scalar's depth", i);
        if (p->type == TRD_T_INVALID || (p->type == TRD_T_CONSTEXPR) != (p->size == 0))
            fail(input, a->canonical, "the kind", i);
        launched += p->type != TRD_T_CONSTEXPR;
    }
    if (launched != a->num_params)
        fail(input, a->canonical, "the launch parameters counted", launched);
}

static void round_trip(const struct trd_signature *sig, const char *input)
{
    struct trd_signature again;
    if (trd_signature_parse(sig->canonical, "canonical", &again) != TRD_OK) {
        fprintf(stderr, "fuzz_signature: the canonical text does not parse: %s\n  input: %.200s\n  canonical: %.200s\n",
                trd_error_message(), input, sig->canonical);
        abort();
    }
    same(sig, &again, input);
    /* and the merge of a signature with itself is itself */
    struct trd_signature merged;
    if (trd_signature_merge(sig, &again, "fuzz", &merged) != TRD_OK) {
        fprintf(stderr, "fuzz_signature: a signature contradicts itself: %s\n", trd_error_message());
        abort();
    }
    same(sig, &merged, input);
    trd_signature_free(&merged);
    trd_signature_free(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    struct trd_signature sig;
    if (trd_signature_from_ttir((const char *)data, size, NULL, "fuzz", &sig) == TRD_OK) {
        round_trip(&sig, text);
        trd_signature_free(&sig);
    }
    if (trd_signature_parse(text, "fuzz", &sig) == TRD_OK) {
        round_trip(&sig, text);
        trd_signature_free(&sig);
    }
    free(text);
    return 0;
}
