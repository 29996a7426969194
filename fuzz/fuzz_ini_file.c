/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_ini_file: whole trident.ini files through the file reader (trd_config_load_file), checking what was
 * parsed, not only that parsing survived:
 *  - a file and the same bytes as a string give the same entries and the same number of errors;
 *  - every accepted entry, written back as `[section]` / `key = value`, loads again without an error and gives the
 *    same value: what the configuration stores is always a valid configuration. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/internal.h"
#include "base/util.h"

struct counts {
    uint32_t errors;
};

static void count(void *user, int32_t level, const char *file, uint32_t line, const char *message)
{
    (void)file;
    (void)line;
    (void)message;
    if (level == TRD_LOG_ERROR)
        ((struct counts *)user)->errors++;
}

static trd_config_t *load(const char *path, const char *text, struct counts *n)
{
    trd_config_t *c;
    if (trd_config_create(0, &c) != TRD_OK)
        return NULL;
    trd_config_set_diag(c, count, n);
    if (path)
        trd_config_load_file(c, path);
    else
        trd_config_load_string(c, text, "fuzz.ini");
    return c;
}

static int same_entries(const trd_config_t *a, const trd_config_t *b)
{
    uint32_t na = 0, nb = 0;
    trd_config_entry_count(a, &na);
    trd_config_entry_count(b, &nb);
    if (na != nb)
        return 0;
    for (uint32_t i = 0; i < na; i++) {
        trd_config_entry_t ea = {.struct_size = sizeof ea}, eb = {.struct_size = sizeof eb};
        trd_config_entry_get(a, i, &ea);
        trd_config_entry_get(b, i, &eb);
        if (strcmp(ea.section, eb.section) || strcmp(ea.key, eb.key) || strcmp(ea.value, eb.value))
            return 0;
    }
    return 1;
}

/* The entries as an ini text, one section header per entry. */
static char *dump(const trd_config_t *c)
{
    struct trd_str s;
    trd_str_init(&s);
    uint32_t n = 0;
    trd_config_entry_count(c, &n);
    for (uint32_t i = 0; i < n; i++) {
        trd_config_entry_t e = {.struct_size = sizeof e};
        trd_config_entry_get(c, i, &e);
        trd_str_appendf(&s, "[%s]\n%s = %s\n", e.section, e.key, e.value);
    }
    trd_str_append(&s, "");
    return trd_str_take(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("fuzz.ini", MFD_CLOEXEC);
    if (fd < 0)
        return 0;
    if (write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return 0;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    struct counts nf = {0}, ns = {0}, nr = {0};
    trd_config_t *file = load(path, NULL, &nf);
    close(fd);
    if (!file)
        return 0;
    if (!memchr(data, '\0', size)) {
        char *text = trd_strndup((const char *)data, size);
        trd_config_t *str = text ? load(NULL, text, &ns) : NULL;
        if (str && (!same_entries(file, str) || nf.errors != ns.errors)) {
            fprintf(stderr, "file and string parses differ (%u vs %u errors)\n", nf.errors, ns.errors);
            abort();
        }
        trd_config_destroy(str);
        free(text);
    }
    char *again = dump(file);
    if (again) {
        trd_config_t *round = load(NULL, again, &nr);
        if (round && (nr.errors || !same_entries(file, round))) {
            fprintf(stderr, "accepted entries do not load again (%u errors):\n%s\n", nr.errors, again);
            abort();
        }
        trd_config_destroy(round);
        free(again);
    }
    trd_config_destroy(file);
    return 0;
}
