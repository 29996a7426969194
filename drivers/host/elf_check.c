/* SPDX-License-Identifier: Apache-2.0 */
/* elf_check.c: a host kernel image is checked before dlopen: a truncated or
 * damaged shared object would otherwise be mapped and crash the process
 * (SIGBUS) on first touch of a page past its end. libelf reads the headers;
 * the checks here are the ones dlopen skips. */
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>

#include "drivers/host/host.h"

#if defined(__x86_64__)
#define HOST_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define HOST_MACHINE EM_AARCH64
#elif defined(__riscv)
#define HOST_MACHINE EM_RISCV
#else
#define HOST_MACHINE EM_NONE
#endif

int host_image_check(const void *image, uint64_t size, char *err, size_t cap)
{
    if (elf_version(EV_CURRENT) == EV_NONE) {
        snprintf(err, cap, "libelf is unusable: %s", elf_errmsg(-1));
        return 0;
    }
    Elf *e = elf_memory((char *)image, (size_t)size); /* read only */
    if (!e) {
        snprintf(err, cap, "not an ELF image: %s", elf_errmsg(-1));
        return 0;
    }
    int ok = 0;
    GElf_Ehdr eh;
    size_t nph = 0;
    if (elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh)) {
        snprintf(err, cap, "not an ELF image");
    } else if (eh.e_type != ET_DYN) {
        snprintf(err, cap, "an ELF file of type %u, not a shared object", (unsigned)eh.e_type);
    } else if (HOST_MACHINE != EM_NONE && eh.e_machine != HOST_MACHINE) {
        snprintf(err, cap, "built for ELF machine %u, this host is machine %u", (unsigned)eh.e_machine,
                 (unsigned)HOST_MACHINE);
    } else if (elf_getphdrnum(e, &nph) != 0 || nph == 0) {
        snprintf(err, cap, "its program headers are missing or damaged");
    } else {
        int loads = 0, dynamic = 0;
        ok = 1;
        for (size_t i = 0; i < nph && ok; i++) {
            GElf_Phdr ph;
            if (!gelf_getphdr(e, (int)i, &ph)) {
                snprintf(err, cap, "program header %zu is damaged", i);
                ok = 0;
            } else if (ph.p_offset > size || ph.p_filesz > size - ph.p_offset) {
                snprintf(err, cap, "segment %zu (bytes %llu .. %llu) extends past the image's %llu bytes (truncated?)", i,
                         (unsigned long long)ph.p_offset, (unsigned long long)(ph.p_offset + ph.p_filesz),
                         (unsigned long long)size);
                ok = 0;
            } else {
                loads += ph.p_type == PT_LOAD;
                dynamic += ph.p_type == PT_DYNAMIC;
            }
        }
        if (ok && (!loads || !dynamic)) {
            snprintf(err, cap, "it has no loadable or no dynamic segment");
            ok = 0;
        }
    }
    elf_end(e);
    return ok;
}
