/* SPDX-License-Identifier: Apache-2.0 */
/* triton_cache.c: a kernel straight from Triton's cache: <name>.json plus the
 * binaries beside it, and the signature read from <name>.ttir. */
#include <dirent.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/internal.h"

#define MAX_METADATA (16u << 20)
#define MAX_IMAGE ((size_t)1 << 30)

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Nothing has the name (a file of an entry that is simply absent); a directory, FIFO, device, link loop or dangling
 * link under it is something, and reading it says what is wrong. */
static int absent(const char *path)
{
    struct stat st;
    return lstat(path, &st) != 0 && (errno == ENOENT || errno == ENOTDIR);
}

/* An optional file of the entry: *data NULL when absent, else its bytes; anything under the name that is not a
 * readable regular file is an error naming it (never skipped, never read forever or waited on). */
static trd_status_t read_optional(const char *path, size_t max, char **data, size_t *size)
{
    if (absent(path)) {
        *data = NULL;
        *size = 0;
        return TRD_OK;
    }
    return trd_file_read(path, max, data, size);
}

/* Finds the metadata file of the entry: the path itself, or the one kernel
 * in a directory (or `name`'s). */
static trd_status_t find_json(const char *path, const char *name, char **json_path)
{
    if (!is_dir(path)) {
        *json_path = trd_strdup(path);
        return *json_path ? TRD_OK : trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
    }
    if (name) {
        char *p = trd_asprintf("%s/%s.json", path, name);
        if (!p)
            return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
        if (absent(p)) {
            trd_status_t st = trd_error_set(TRD_ERR_NOT_FOUND, "Triton cache entry '%s' has no %s.json", path, name);
            free(p);
            return st;
        }
        *json_path = p;
        return TRD_OK;
    }
    DIR *d = opendir(path);
    if (!d)
        return trd_error_set(TRD_ERR_IO, "cannot read directory '%s': %s", path, strerror(errno));
    char *found = NULL;
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".json") != 0 || strncmp(e->d_name, "__grp__", 7) == 0)
            continue;
        count++;
        if (!found)
            found = trd_strndup(e->d_name, n - 5);
    }
    closedir(d);
    if (count != 1) {
        trd_status_t st = count == 0
            ? trd_error_set(TRD_ERR_NOT_FOUND, "'%s' holds no Triton kernel metadata (<name>.json)", path)
            : trd_error_set(TRD_ERR_INVALID_ARGUMENT, "'%s' holds %d kernels: name the one to load", path, count);
        free(found);
        return st;
    }
    if (!found)
        return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
    *json_path = trd_asprintf("%s/%s.json", path, found);
    free(found);
    return *json_path ? TRD_OK : trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
}

static trd_status_t add_image(struct trd_kernel_src *src, const char *dir, const struct trd_meta *meta,
                              const char *ext, int32_t format)
{
    char *p = trd_asprintf("%s/%s%s", dir, meta->name, ext);
    if (!p)
        return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
    char *data = NULL;
    size_t size = 0;
    trd_status_t st = read_optional(p, MAX_IMAGE, &data, &size);
    if (st == TRD_OK && !data) {
        free(p);
        return TRD_OK;
    }
    if (st == TRD_OK && size == 0)
        st = trd_error_set(TRD_ERR_FORMAT, "'%s' is empty", p);
    if (st == TRD_OK) {
        int32_t sniffed = trd_format_sniff(data, size, NULL);
        if (sniffed != format && !(format == TRD_FORMAT_SPIRV && sniffed == TRD_FORMAT_UNKNOWN))
            st = trd_error_set(TRD_ERR_FORMAT, "'%s' is not a %s image (its bytes look like %s)", p,
                               trd_format_name(format), trd_format_name(sniffed));
    }
    char why[256];
    if (st == TRD_OK && !trd_image_check(format, data, size, meta->name, why, sizeof why))
        st = trd_error_set(TRD_ERR_FORMAT, "'%s' is damaged: %s", p, why);
    if (st != TRD_OK) {
        free(data);
        free(p);
        return st;
    }
    struct trd_target *t = &src->targets[src->ntargets];
    memset(t, 0, sizeof *t);
    t->format = format;
    t->image = (uint8_t *)data;
    t->size = size;
    trd_sha256(data, size, t->sha256);
    st = trd_meta_copy(meta, &t->meta);
    if (st != TRD_OK) {
        free(data);
        free(p);
        return st;
    }
    src->ntargets++;
    free(p);
    return TRD_OK;
}

trd_status_t trd_triton_cache_read(const char *path, const char *name, int read_signature, struct trd_kernel_src *out)
{
    char *json_path = NULL;
    trd_status_t st = find_json(path, name, &json_path);
    if (st != TRD_OK)
        return st;
    char *text = NULL;
    size_t len = 0;
    struct trd_meta meta;
    memset(&meta, 0, sizeof meta);
    struct trd_kernel_src src;
    memset(&src, 0, sizeof src);
    char *dir = NULL;
    if ((st = trd_file_read(json_path, MAX_METADATA, &text, &len)) != TRD_OK)
        goto done;
    char what[512];
    snprintf(what, sizeof what, "Triton metadata '%s'", json_path);
    if ((st = trd_meta_parse(text, len, what, &meta)) != TRD_OK)
        goto done;
    const char *slash = strrchr(json_path, '/');
    dir = slash ? trd_strndup(json_path, (size_t)(slash - json_path)) : trd_strdup(".");
    src.name = trd_strdup(meta.name);
    src.targets = calloc(3, sizeof *src.targets);
    if (!dir || !src.name || !src.targets) {
        st = trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    static const struct { const char *backend, *ext; int32_t format; } kinds[] = {
        {"cuda", ".cubin", TRD_FORMAT_CUBIN}, {"cuda", ".ptx", TRD_FORMAT_PTX},
        {"hip", ".hsaco", TRD_FORMAT_HSACO},   {"xpu", ".zebin", TRD_FORMAT_ZEBIN},
        {"xpu", ".spv", TRD_FORMAT_SPIRV},     {"host", ".so", TRD_FORMAT_HOST_SO}};
    for (size_t i = 0; i < TRD_ARRAY_SIZE(kinds); i++) {
        if (strcmp(kinds[i].backend, meta.backend) != 0)
            continue;
        if ((st = add_image(&src, dir, &meta, kinds[i].ext, kinds[i].format)) != TRD_OK)
            goto done;
    }
    if (src.ntargets == 0) {
        st = trd_error_set(TRD_ERR_NOT_FOUND, "Triton cache entry '%s': no %s binary beside the metadata (looked for %s/%s.*)",
                           json_path, meta.backend, dir, meta.name);
        goto done;
    }
    /* The signature: from the Triton IR, when it was kept and the caller gives none. */
    static const char *const irs[] = {".ttir", ".source"};
    for (size_t i = 0; read_signature && i < TRD_ARRAY_SIZE(irs); i++) {
        char *ir_path = trd_asprintf("%s/%s%s", dir, meta.name, irs[i]);
        if (!ir_path) {
            st = trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
            goto done;
        }
        char *ir = NULL;
        size_t irlen = 0;
        st = read_optional(ir_path, MAX_METADATA, &ir, &irlen);
        if (st == TRD_OK && ir) {
            char iwhat[600];
            snprintf(iwhat, sizeof iwhat, "Triton IR '%s'", ir_path);
            st = trd_signature_from_ttir(ir, irlen, meta.name, iwhat, &src.sig);
        }
        free(ir_path);
        int found = ir != NULL;
        free(ir);
        if (st != TRD_OK)
            goto done;
        if (found)
            break;
    }
done:
    free(dir);
    free(text);
    free(json_path);
    trd_meta_free(&meta);
    if (st != TRD_OK) {
        trd_kernel_src_free(&src);
        return st;
    }
    *out = src;
    return TRD_OK;
}
