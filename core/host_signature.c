/* SPDX-License-Identifier: Apache-2.0 */
/* host_signature.c: the signature a host kernel image declares for its entry
 * (TRD_HOST_KERNEL_SIGNATURE in host_kernel.h: an ELF note), read without
 * loading the image, and checked against the kernel's, so that a native twin
 * whose parameters differ from the Triton kernel's is refused instead of
 * reading its arguments wrongly. */
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <trident/host_kernel.h>

#include "core/internal.h"

#define OWNER "trident"

/* The note for `entry` among one SHT_NOTE section's notes: its signature text, or NULL. */
static const char *note_signature(Elf_Data *data, const char *entry, size_t *len)
{
    size_t off = 0, next, name_off, desc_off;
    GElf_Nhdr nh;
    size_t elen = strlen(entry);
    while (off < data->d_size && (next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
        const char *owner = (const char *)data->d_buf + name_off;
        const char *desc = (const char *)data->d_buf + desc_off;
        off = next;
        if (nh.n_type != TRD_HOST_NOTE_SIGNATURE || nh.n_namesz != sizeof OWNER || memcmp(owner, OWNER, sizeof OWNER))
            continue;
        /* desc: "entry\0signature\0" */
        if (nh.n_descsz < elen + 2 || memcmp(desc, entry, elen) != 0 || desc[elen] != '\0')
            continue;
        const char *sig = desc + elen + 1;
        size_t room = nh.n_descsz - elen - 1;
        const char *end = memchr(sig, '\0', room);
        *len = end ? (size_t)(end - sig) : room;
        return sig;
    }
    return NULL;
}

trd_status_t trd_host_signature_read(const void *image, size_t size, const char *entry, const char *what,
                                     struct trd_signature *out, int *found)
{
    if (elf_version(EV_CURRENT) == EV_NONE)
        return trd_error_set(TRD_ERR_INTERNAL, "libelf is unusable: %s", elf_errmsg(-1));
    Elf *e = elf_memory((char *)image, size); /* read only */
    if (!e || elf_kind(e) != ELF_K_ELF) {
        if (e)
            elf_end(e);
        return trd_error_set(TRD_ERR_FORMAT, "%s: not an ELF image", what);
    }
    trd_status_t st = TRD_OK;
    const char *sig = NULL;
    size_t len = 0;
    for (Elf_Scn *scn = elf_nextscn(e, NULL); scn && !sig; scn = elf_nextscn(e, scn)) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
            continue;
        if (sh.sh_offset > size || sh.sh_size > size - sh.sh_offset) {
            st = trd_error_set(TRD_ERR_FORMAT, "%s: a note section extends past the image's %zu bytes", what, size);
            break;
        }
        Elf_Data *data = elf_getdata(scn, NULL);
        if (data && data->d_buf)
            sig = note_signature(data, entry, &len);
    }
    if (st == TRD_OK && sig) {
        char *text = malloc(len + 1);
        char label[600];
        if (!text) {
            st = trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
        } else {
            memcpy(text, sig, len);
            text[len] = '\0';
            snprintf(label, sizeof label, "%s: the signature it declares for '%s' (TRD_HOST_KERNEL_SIGNATURE)", what,
                     entry);
            st = trd_signature_parse(text, label, out);
            free(text);
        }
    }
    elf_end(e);
    if (st == TRD_OK)
        *found = sig != NULL;
    return st;
}

/* Triton IR is signless (a u32 parameter reads i32 in its .ttir): integers compare by width. */
static int32_t signless(int32_t t)
{
    switch (t) {
    case TRD_T_U1: return TRD_T_I1;
    case TRD_T_U8: return TRD_T_I8;
    case TRD_T_U16: return TRD_T_I16;
    case TRD_T_U32: return TRD_T_I32;
    case TRD_T_U64: return TRD_T_I64;
    default: return t;
    }
}

/* The same launch parameters: types in order, constexpr entries (not passed) skipped; names may differ. */
static int same_launch_types(const struct trd_signature *a, const struct trd_signature *b)
{
    uint32_t i = 0, j = 0;
    for (;;) {
        while (i < a->count && a->params[i].type == TRD_T_CONSTEXPR)
            i++;
        while (j < b->count && b->params[j].type == TRD_T_CONSTEXPR)
            j++;
        if (i == a->count || j == b->count)
            return i == a->count && j == b->count;
        const struct trd_param *p = &a->params[i++], *q = &b->params[j++];
        if (signless(p->type) != signless(q->type) ||
            (p->type == TRD_T_PTR && signless(p->elem) != signless(q->elem)))
            return 0;
    }
}

trd_status_t trd_host_signatures_check(struct trd_kernel_src *src)
{
    char what[300];
    snprintf(what, sizeof what, "the host image of kernel '%s'", src->name);
    for (uint32_t t = 0; t < src->ntargets; t++) {
        const struct trd_target *tg = &src->targets[t];
        if (tg->format != TRD_FORMAT_HOST_SO)
            continue;
        struct trd_signature declared;
        int found = 0;
        trd_status_t st = trd_host_signature_read(tg->image, (size_t)tg->size, src->name, what, &declared, &found);
        if (st != TRD_OK)
            return st;
        if (!found)
            continue;
        if (!src->sig.canonical) {
            src->sig = declared; /* a raw host image: its declaration is the signature */
            continue;
        }
        int same = same_launch_types(&src->sig, &declared);
        if (!same)
            st = trd_error_set(TRD_ERR_INVALID_ARGUMENT,
                               "kernel '%s': its host image declares %s(%s) (TRD_HOST_KERNEL_SIGNATURE), the kernel's "
                               "signature is (%s): the parameters differ",
                               src->name, src->name, declared.canonical, src->sig.canonical);
        trd_signature_free(&declared);
        if (!same)
            return st;
    }
    return TRD_OK;
}
