/* SPDX-License-Identifier: Apache-2.0 */
/* test_tune.c: kernels of several variants (TRIDENT_1.5: bundles that hold them, trd_kernel_variant) and the
 * tuner that chooses among them, through the public API on the host driver. The variants are one in-place kernel
 * built at two speeds (tests/host/tune_kernel.c) and a broken one (an image without the kernel's symbol, which
 * cannot load): the tuner must choose the fast one wherever it sits, leave the in-place output exactly as one
 * launch does, keep its choice in a file that later runtimes read (and ignore and replace a file that is garbage,
 * a FIFO, a directory or another tuner's), refuse bad keys, and benchmark once when two threads launch one key. */
#include <math.h>
#include <pthread.h>
#include <sys/stat.h>
#include <dirent.h>
#include <unistd.h>

#include "tests/testutil.h"

#define SIG "x:*fp32,n:i32,alpha:fp32"
#define N 3000
#define BLOCK 256
#define ALPHA 1.5f

static const char *tune_so(const char *which)
{
    return tu_path("%s/tests/host/.libs/tune_%s.so", tu_builddir(), which);
}

/* A bundle of the variants named ("slow", "fast", "broken"), in that order. */
static void *variants_bundle(const char *const *which, uint32_t n, uint64_t *size)
{
    void *images[8];
    trd_bundle_target_t targets[8];
    trd_bundle_variant_t vars[8];
    for (uint32_t i = 0; i < n; i++) {
        size_t len;
        images[i] = tu_read_file(strcmp(which[i], "broken") ? tune_so(which[i]) : tu_undeclared_kernel(), &len);
        targets[i] = (trd_bundle_target_t){.struct_size = sizeof targets[i], .format = TRD_FORMAT_HOST_SO,
                                           .arch = "x86_64", .image = images[i], .image_size = len};
        vars[i] = (trd_bundle_variant_t){.struct_size = sizeof vars[i], .num_targets = 1, .targets = &targets[i],
                                         .config = which[i]};
    }
    void *data;
    TU_OK(trd_bundle_write_variants("tune_kernel", SIG, vars, n, &data, size));
    for (uint32_t i = 0; i < n; i++)
        free(images[i]);
    return data;
}

static trd_kernel_t *variants_kernel(trd_runtime_t *rt, const char *const *which, uint32_t n)
{
    uint64_t size;
    void *data = variants_bundle(which, n, &size);
    trd_kernel_desc_t d = {.struct_size = sizeof d, .data = data, .size = size};
    trd_kernel_t *k;
    TU_OK(trd_kernel_create(rt, &d, &k));
    trd_free(data);
    return k;
}

/* ------------------------------------------------------------------ logs */

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char logged[16384];

static void on_log(void *user, int32_t level, const char *message)
{
    (void)user;
    (void)level;
    pthread_mutex_lock(&log_lock);
    size_t n = strlen(logged);
    snprintf(logged + n, sizeof logged - n, "%s\n", message);
    pthread_mutex_unlock(&log_lock);
}

static void log_start(void)
{
    logged[0] = '\0';
    TU_OK(trd_log_set_level(TRD_LOG_INFO));
    TU_OK(trd_log_set_callback(on_log, NULL));
}

static void log_stop(void)
{
    trd_log_set_callback(NULL, NULL);
    trd_log_set_level(TRD_LOG_WARN);
}

static int log_count(const char *needle)
{
    int n = 0;
    for (const char *p = logged; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

/* --------------------------------------------------------------- launches */

struct run {
    trd_runtime_t *rt;
    trd_device_t *host;
    trd_stream_t *s;
    trd_buffer_t *bx;
    float x[N], want[N];
    trd_arg_t args[3];
    trd_launch_t l;
    trd_tuned_launch_t tl;
    uint32_t grid[3];
};

static void run_setup(struct run *r, trd_runtime_t *rt, uint64_t seed, const char *key)
{
    r->rt = rt;
    TU_OK(trd_runtime_device_find(rt, "host:0", &r->host));
    TU_OK(trd_stream_create(r->host, &r->s));
    tu_fill_f32(r->x, N, seed);
    for (int i = 0; i < N; i++)
        r->want[i] = r->x[i] * ALPHA + 1.0f;
    TU_OK(trd_buffer_alloc(r->host, sizeof r->x, &r->bx));
    TU_OK(trd_buffer_write(r->bx, 0, r->x, sizeof r->x, NULL));
    r->args[0] = trd_arg_buffer(r->bx);
    r->args[1] = trd_arg_int(N);
    r->args[2] = trd_arg_float(ALPHA);
    r->l = (trd_launch_t){.struct_size = sizeof r->l, .grid = {(N + BLOCK - 1) / BLOCK, 1, 1}, .num_args = 3,
                          .args = r->args, .stream = r->s};
    r->tl = (trd_tuned_launch_t){.struct_size = sizeof r->tl, .key = key, .key_size = (uint32_t)strlen(key),
                                 .launch = &r->l};
}

/* Every element is x * alpha + 1, computed once: the benchmark's launches left no trace. */
static void run_check(struct run *r)
{
    float got[N];
    TU_OK(trd_stream_synchronize(r->s));
    TU_OK(trd_buffer_read(r->bx, 0, got, sizeof got, NULL));
    for (int i = 0; i < N; i++)
        ck_assert_msg(got[i] == r->want[i], "x[%d] = %g, expected %g (from %g)", i, got[i], r->want[i], r->x[i]);
}

static void run_free(struct run *r)
{
    trd_buffer_free(r->bx);
    trd_stream_destroy(r->s);
}

static trd_tuner_t *tuner_of(trd_kernel_t *k, uint32_t flags)
{
    static const uint32_t written[] = {0};
    trd_tuner_desc_t d = {.struct_size = sizeof d, .flags = flags, .kernel = k, .num_written = 1, .written = written};
    trd_tuner_t *t;
    TU_OK(trd_tuner_create(&d, &t));
    return t;
}

/* ------------------------------------------------------------------ tests */

START_TEST(bundle_of_variants)
{
    trd_runtime_t *rt = tu_runtime(NULL, NULL);
    static const char *const which[] = {"slow", "fast", "broken"};
    uint64_t size;
    uint8_t *data = variants_bundle(which, 3, &size);
    ck_assert_int_eq(data[8], 2); /* format version 2 */
    trd_kernel_desc_t d = {.struct_size = sizeof d, .data = data, .size = size};
    trd_kernel_t *k;
    TU_OK(trd_kernel_create(rt, &d, &k));
    uint32_t n = 0;
    TU_OK(trd_kernel_variant_count(k, &n));
    ck_assert_uint_eq(n, 3);
    for (uint32_t v = 0; v < 3; v++) {
        trd_variant_info_t vi = {.struct_size = sizeof vi};
        TU_OK(trd_kernel_variant(k, v, &vi));
        trd_kernel_t *vk = vi.kernel;
        ck_assert_uint_eq(vi.index, v);
        ck_assert_str_eq(vi.config, which[v]);
        ck_assert_str_eq(vi.grid, "");
        ck_assert(v ? vk != k : vk == k);
        trd_kernel_info_t ki = {.struct_size = sizeof ki};
        TU_OK(trd_kernel_get_info(vk, &ki));
        ck_assert_str_eq(ki.name, "tune_kernel");
        ck_assert_uint_eq(ki.num_targets, 1);
        trd_target_info_t ti = {.struct_size = sizeof ti};
        TU_OK(trd_kernel_target_info(vk, 0, &ti));
        size_t len;
        void *img = tu_read_file(v == 2 ? tu_undeclared_kernel() : tune_so(which[v]), &len);
        ck_assert(ti.size == len && memcmp(ti.image, img, len) == 0);
        free(img);
        uint32_t sub = 0;
        TU_OK(trd_kernel_variant_count(vk, &sub));
        ck_assert_uint_eq(sub, v ? 1 : 3); /* variant 0 is the kernel */
    }
    trd_variant_info_t vi = {.struct_size = sizeof vi};
    TU_FAILS(trd_kernel_variant(k, 3, &vi), TRD_ERR_NOT_FOUND, "has 3 variants: no variant 3");
    vi.struct_size = 8;
    TU_FAILS(trd_kernel_variant(k, 0, &vi), TRD_ERR_VERSION, "trd_variant_info_t");
    /* the kernel itself is variant 0: a caller that knows nothing of variants launches the slow one */
    struct run r;
    run_setup(&r, rt, 11, "unused");
    TU_OK(trd_kernel_launch(k, &r.l));
    run_check(&r);
    run_free(&r);
    trd_kernel_destroy(k);
    trd_free(data);
    /* one variant without a config is the old format, byte for byte */
    size_t len;
    void *img = tu_read_file(tune_so("fast"), &len);
    trd_bundle_target_t t = {.struct_size = sizeof t, .format = TRD_FORMAT_HOST_SO, .arch = "x86_64", .image = img,
                             .image_size = len};
    trd_bundle_variant_t one = {.struct_size = sizeof one, .num_targets = 1, .targets = &t};
    void *a, *b;
    uint64_t asz, bsz;
    TU_OK(trd_bundle_write("tune_kernel", SIG, &t, 1, &a, &asz));
    TU_OK(trd_bundle_write_variants("tune_kernel", SIG, &one, 1, &b, &bsz));
    ck_assert(asz == bsz && memcmp(a, b, asz) == 0 && ((uint8_t *)a)[8] == 1);
    trd_free(a);
    trd_free(b);
    /* bad variants */
    trd_bundle_variant_t bad[2] = {one, one};
    bad[1].num_targets = 0;
    TU_FAILS(trd_bundle_write_variants("tune_kernel", SIG, bad, 2, &a, &asz), TRD_ERR_INVALID_ARGUMENT,
             "bundle variant 1 holds 1 .. 64 targets, not 0");
    TU_FAILS(trd_bundle_write_variants("tune_kernel", SIG, bad, 0, &a, &asz), TRD_ERR_INVALID_ARGUMENT,
             "1 .. 64 variants, not 0");
    free(img);
    trd_runtime_destroy(rt);
}
END_TEST

START_TEST(tuner_refuses)
{
    trd_runtime_t *rt = tu_runtime(NULL, NULL);
    static const char *const which[] = {"fast", "slow"};
    trd_kernel_t *k = variants_kernel(rt, which, 2);
    trd_kernel_t *add = tu_host_kernel_create(rt, "add_kernel", "x:*fp32,y:*fp32,out:*fp32,n:i32", NULL);
    trd_kernel_t *both[] = {k, add};
    trd_tuner_desc_t d = {.struct_size = sizeof d, .variants = both, .num_variants = 2};
    trd_tuner_t *t;
    TU_FAILS(trd_tuner_create(&d, &t), TRD_ERR_INVALID_ARGUMENT, "has 'x:*fp32,y:*fp32,out:*fp32,n:i32'");
    ck_assert(strstr(trd_error_message(), SIG) != NULL);
    static const uint32_t scalar[] = {1};
    d = (trd_tuner_desc_t){.struct_size = sizeof d, .kernel = k, .num_written = 1, .written = scalar};
    TU_FAILS(trd_tuner_create(&d, &t), TRD_ERR_INVALID_ARGUMENT, "written[0] = 1 is not a pointer parameter");
    t = tuner_of(k, TRD_TUNER_MEMORY_ONLY);
    struct run r;
    run_setup(&r, rt, 12, "k");
    char big[TRD_TUNE_KEY_MAX + 1];
    memset(big, 'k', sizeof big);
    r.tl.key = big;
    r.tl.key_size = sizeof big;
    TU_FAILS(trd_tuner_launch(t, &r.tl, NULL), TRD_ERR_INVALID_ARGUMENT, "a tuning key has 1 .. 1024 bytes, not 1025");
    r.tl.key_size = 0;
    TU_FAILS(trd_tuner_launch(t, &r.tl, NULL), TRD_ERR_INVALID_ARGUMENT, "not 0");
    /* trd_tuner_choice takes the same keys: a bad one is bad input, not a key with no choice yet */
    uint32_t kept = 7;
    TU_FAILS(trd_tuner_choice(t, big, sizeof big, r.host, &kept), TRD_ERR_INVALID_ARGUMENT,
             "a tuning key has 1 .. 1024 bytes, not 1025");
    TU_FAILS(trd_tuner_choice(t, big, 0, r.host, &kept), TRD_ERR_INVALID_ARGUMENT, "not 0");
    ck_assert_uint_eq(kept, 7);
    /* a written pointer given as an address needs its bytes */
    void *addr;
    TU_OK(trd_buffer_address(r.bx, &addr));
    r.args[0] = trd_arg_ptr(addr);
    r.tl.key_size = 1;
    TU_FAILS(trd_tuner_launch(t, &r.tl, NULL), TRD_ERR_INVALID_ARGUMENT, "written_bytes");
    uint64_t bytes = sizeof r.x;
    r.tl.written_bytes = &bytes;
    uint32_t chosen = 9;
    TU_OK(trd_tuner_launch(t, &r.tl, &chosen));
    ck_assert_uint_eq(chosen, 0);
    run_check(&r);
    run_free(&r);
    trd_tuner_destroy(t);
    trd_kernel_destroy(add);
    trd_kernel_destroy(k);
    trd_runtime_destroy(rt);
}
END_TEST

/* The fast variant wherever it sits; the broken one counts as infinitely slow; the in-place output is exact. */
START_TEST(tuner_chooses_fastest)
{
    trd_runtime_t *rt = tu_runtime(NULL, NULL);
    static const char *const which[] = {"slow", "broken", "fast"};
    trd_kernel_t *k = variants_kernel(rt, which, 3);
    trd_tuner_t *t = tuner_of(k, TRD_TUNER_MEMORY_ONLY);
    struct run r;
    run_setup(&r, rt, 13, "n=3000 chooses");
    double times[3];
    uint32_t best = 9;
    TU_OK(trd_tuner_benchmark(t, &r.tl, times, 3, &best));
    ck_assert_uint_eq(best, 2);
    ck_assert_msg(isinf(times[1]) && isfinite(times[0]) && isfinite(times[2]) && times[2] < times[0],
                  "times %g %g %g", times[0], times[1], times[2]);
    /* the benchmark leaves the buffer as it was */
    float got[N];
    TU_OK(trd_buffer_read(r.bx, 0, got, sizeof got, NULL));
    ck_assert(memcmp(got, r.x, sizeof got) == 0);
    log_start();
    uint32_t chosen = 9;
    TU_OK(trd_tuner_launch(t, &r.tl, &chosen));
    log_stop();
    ck_assert_uint_eq(chosen, 2);
    ck_assert_msg(log_count("variant 2 of 3 chosen by benchmark") == 1, "%s", logged);
    ck_assert_msg(log_count("variant 1 cannot run") == 1, "%s", logged);
    run_check(&r);
    /* later launches run the choice: applied once more */
    chosen = 9;
    TU_OK(trd_tuner_launch(t, &r.tl, &chosen));
    ck_assert_uint_eq(chosen, 2);
    for (int i = 0; i < N; i++)
        r.want[i] = r.want[i] * ALPHA + 1.0f;
    run_check(&r);
    run_free(&r);
    trd_tuner_destroy(t);
    trd_kernel_destroy(k);
    trd_runtime_destroy(rt);
}
END_TEST

START_TEST(tuner_none_can_run)
{
    trd_runtime_t *rt = tu_runtime(NULL, NULL);
    static const char *const which[] = {"broken", "broken"};
    trd_kernel_t *k = variants_kernel(rt, which, 2);
    trd_tuner_t *t = tuner_of(k, TRD_TUNER_MEMORY_ONLY);
    struct run r;
    run_setup(&r, rt, 14, "none");
    TU_FAILS(trd_tuner_launch(t, &r.tl, NULL), TRD_ERR_NOT_FOUND, "none of its 2 variants can run on host:0");
    /* nothing ran: the buffer is as it was */
    memcpy(r.want, r.x, sizeof r.x);
    run_check(&r);
    run_free(&r);
    trd_tuner_destroy(t);
    trd_kernel_destroy(k);
    trd_runtime_destroy(rt);
}
END_TEST

/* The name of the one file under dir/tune. */
static void tune_file(const char *dir, char *name, size_t cap)
{
    DIR *d = opendir(tu_path("%s/tune", dir));
    ck_assert_msg(d != NULL, "no %s/tune", dir);
    struct dirent *e;
    int found = 0;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.') {
            snprintf(name, cap, "%s", e->d_name);
            found++;
        }
    closedir(d);
    ck_assert_int_eq(found, 1);
}

/* One runtime with its cache directory, whose tune/<name> holds what `make` puts there (make NULL: nothing);
 * returns the variant a first launch chose, after checking its output. */
static uint32_t launch_with_file(const char *tag, const char *name, void (*make)(const char *path))
{
    const char *dir = tu_scratch_dir(tag);
    char ini[4200];
    snprintf(ini, sizeof ini, "[runtime]\ncache_dir = %s\n", dir);
    trd_runtime_t *rt = tu_runtime(NULL, ini);
    if (make) {
        ck_assert_int_eq(mkdir(tu_path("%s/tune", dir), 0700), 0);
        make(tu_path("%s/tune/%s", dir, name));
    }
    static const char *const which[] = {"slow", "broken", "fast"};
    trd_kernel_t *k = variants_kernel(rt, which, 3);
    trd_tuner_t *t = tuner_of(k, 0);
    struct run r;
    run_setup(&r, rt, 15, "files");
    uint32_t chosen = 9;
    log_start();
    TU_OK(trd_tuner_launch(t, &r.tl, &chosen));
    log_stop();
    run_check(&r);
    run_free(&r);
    trd_tuner_destroy(t);
    trd_kernel_destroy(k);
    trd_runtime_destroy(rt);
    return chosen;
}

static char kept[8192];

static void make_garbage(const char *path)
{
    FILE *f = fopen(path, "w");
    fputs("{\"format\": \"trident-tune\", \"choice\": ", f);
    fclose(f);
}

static void make_fifo(const char *path)
{
    ck_assert_int_eq(mkfifo(path, 0600), 0);
}

static void make_dir(const char *path)
{
    ck_assert_int_eq(mkdir(path, 0700), 0);
}

/* What the first runtime kept, with the slow variant chosen: read, it decides. */
static void make_slow_choice(const char *path)
{
    char *p = strstr(kept, "\"choice\": 2");
    ck_assert_msg(p != NULL, "%s", kept);
    p[10] = '0';
    FILE *f = fopen(path, "w");
    fputs(kept, f);
    fclose(f);
    p[10] = '2';
}

/* What the first runtime kept, with the first character of a string field's value changed. */
static void write_kept_changed(const char *path, const char *field)
{
    char needle[64];
    snprintf(needle, sizeof needle, "\"%s\": \"", field);
    char *p = strstr(kept, needle);
    ck_assert_msg(p != NULL, "%s", kept);
    p += strlen(needle);
    char saved = *p;
    *p = saved == '0' ? '1' : '0';
    FILE *f = fopen(path, "w");
    fputs(kept, f);
    fclose(f);
    *p = saved;
}

/* Another key's choice under this key's name (copied or renamed): ignored with a warning, replaced. */
static void make_other_key(const char *path)
{
    write_kept_changed(path, "key_sha256");
}

/* Another user's or a group-writable file: not believed (a cache holds only what this user alone wrote). */
static void make_group_writable(const char *path)
{
    make_slow_choice(path);
    ck_assert_int_eq(chmod(path, 0666), 0);
}

/* Another tuner's (other variants): ignored without a warning, replaced. */
static void make_foreign(const char *path)
{
    write_kept_changed(path, "digest");
}

static const char *home_dir(const char *tag)
{
    return tu_path("%s/tests/home/%s.%ld", tu_builddir(), tag, (long)getpid());
}

START_TEST(tuner_cache_files)
{
    /* a first runtime keeps its choice in the cache directory */
    char name[512];
    ck_assert_uint_eq(launch_with_file("tune-first", NULL, NULL), 2);
    const char *dir = home_dir("tune-first");
    tune_file(dir, name, sizeof name);
    ck_assert_msg(strncmp(name, "tune_kernel-", 12) == 0 && strstr(name, "-x86_64.json"), "%s", name);
    char *text = tu_read_file(tu_path("%s/tune/%s", dir, name), &(size_t){0});
    snprintf(kept, sizeof kept, "%s", text);
    free(text);
    ck_assert_msg(strstr(kept, "\"choice\": 2") && strstr(kept, "\"format\": \"trident-tune\"") &&
                      strstr(kept, "\"configs\": [") && strstr(kept, "null"),
                  "%s", kept);
    /* a later runtime reads it: a kept choice of the slow variant is obeyed */
    ck_assert_uint_eq(launch_with_file("tune-kept", name, make_slow_choice), 0);
    ck_assert_msg(log_count("variant 0 of 3, from ") == 1, "%s", logged);
    /* garbage, a FIFO, a directory: ignored with a warning, the benchmark chooses; the file replaced but where a
     * directory stands (kept in memory then, said so) */
    void (*bad[])(const char *) = {make_garbage, make_fifo, make_dir, make_foreign, make_other_key,
                                   make_group_writable};
    const char *warns[] = {"which is not a choice trident wrote", "FIFO", "directory", NULL, "holds the choice of key",
                           "ignoring the kept choice"};
    for (size_t i = 0; i < TU_LEN(bad); i++) {
        char tag[32];
        snprintf(tag, sizeof tag, "tune-bad%zu", i);
        uint32_t chosen = launch_with_file(tag, name, bad[i]);
        ck_assert_msg(chosen == 2, "case %zu: variant %u chosen: %s", i, chosen, logged);
        ck_assert_msg(log_count("chosen by benchmark") == 1, "%s", logged);
        if (warns[i])
            ck_assert_msg(strstr(logged, warns[i]) != NULL, "case %zu: %s", i, logged);
        else
            ck_assert_msg(strstr(logged, "was chosen among other variants") != NULL, "%s", logged);
        const char *path = tu_path("%s/tune/%s", home_dir(tag), name);
        struct stat st;
        ck_assert_int_eq(stat(path, &st), 0);
        if (bad[i] == make_dir) {
            ck_assert(S_ISDIR(st.st_mode));
            ck_assert_msg(strstr(logged, "kept in this process's memory only") != NULL, "%s", logged);
        } else {
            text = tu_read_file(path, &(size_t){0});
            ck_assert_msg(strstr(text, "\"choice\": 2") != NULL, "%s", text);
            free(text);
        }
    }
}
END_TEST

/* A caller that launches each variant itself (TRIDENT_1.6, as libtrident_xla does): the tuner calls its launch_fn
 * for the benchmark's launches and the chosen one's, keeps the choice under the caller's cache directory for its
 * identity bytes, names things in the caller's words, and trd_tuner_choice tells what it keeps. */
struct own_launch {
    trd_kernel_t *k;
    const trd_launch_t *l;
    unsigned calls[3];
};

static trd_status_t own_launch(void *user, uint32_t v)
{
    struct own_launch *o = user;
    trd_variant_info_t vi = {.struct_size = sizeof vi};
    trd_status_t st = trd_kernel_variant(o->k, v, &vi);
    o->calls[v < 3 ? v : 0]++;
    return st == TRD_OK ? trd_kernel_launch(vi.kernel, o->l) : st;
}

static uint32_t own_tuned_launch(trd_runtime_t *rt, trd_kernel_t *k, const char *dir, const char *identity,
                                 struct own_launch *o)
{
    static const uint32_t written[] = {0};
    trd_tuner_desc_t d = {.struct_size = sizeof d, .kernel = k, .num_written = 1, .written = written,
                          .cache_dir = dir, .identity = identity, .identity_size = (uint32_t)strlen(identity),
                          .log_name = "autotune", .variant_noun = "candidate"};
    trd_tuner_t *t;
    TU_OK(trd_tuner_create(&d, &t));
    struct run r;
    run_setup(&r, rt, 16, "own launch");
    *o = (struct own_launch){.k = k, .l = &r.l};
    r.tl.launch_fn = own_launch;
    r.tl.user = o;
    uint32_t chosen = 9, kept_v = 9;
    TU_FAILS(trd_tuner_choice(t, r.tl.key, r.tl.key_size, r.host, &kept_v), TRD_ERR_NOT_FOUND, "no candidate is");
    TU_OK(trd_tuner_launch(t, &r.tl, &chosen));
    run_check(&r);
    TU_OK(trd_tuner_choice(t, r.tl.key, r.tl.key_size, r.host, &kept_v));
    ck_assert_uint_eq(kept_v, chosen);
    run_free(&r);
    trd_tuner_destroy(t);
    return chosen;
}

START_TEST(tuner_caller_launch)
{
    trd_runtime_t *rt = tu_runtime(NULL, NULL);
    static const char *const which[] = {"slow", "broken", "fast"};
    trd_kernel_t *k = variants_kernel(rt, which, 3);
    const char *dir = tu_scratch_dir("tune-own");
    struct own_launch o;
    log_start();
    ck_assert_uint_eq(own_tuned_launch(rt, k, dir, "grids A", &o), 2);
    /* every variant that loads through the caller's launch (the broken one cannot load), the benchmark's and
     * the chosen one */
    ck_assert_msg(o.calls[0] > 0 && o.calls[1] == 0 && o.calls[2] > 1, "%u %u %u", o.calls[0], o.calls[1],
                  o.calls[2]);
    ck_assert_msg(log_count("autotune: kernel 'tune_kernel' on host:0: candidate 2 of 3 chosen by benchmark on the "
                            "call's buffers") == 1 &&
                      log_count("candidate 1 cannot run") == 1,
                  "%s", logged);
    char name[512];
    tune_file(dir, name, sizeof name);
    char *text = tu_read_file(tu_path("%s/tune/%s", dir, name), &(size_t){0});
    ck_assert_msg(strstr(text, "\"choice\": 2") != NULL, "%s", text);
    free(text);
    /* another tuner, the same identity: the choice from memory, no benchmark, only the chosen launch */
    logged[0] = '\0';
    ck_assert_uint_eq(own_tuned_launch(rt, k, dir, "grids A", &o), 2);
    ck_assert_msg(o.calls[0] == 0 && o.calls[1] == 0 && o.calls[2] == 1, "%u %u %u", o.calls[0], o.calls[1],
                  o.calls[2]);
    ck_assert_msg(log_count("candidate 2 of 3, from this process's memory") == 1, "%s", logged);
    /* another identity: not that choice (chosen again, the file replaced) */
    logged[0] = '\0';
    ck_assert_uint_eq(own_tuned_launch(rt, k, dir, "grids B", &o), 2);
    ck_assert_msg(o.calls[0] > 0 && log_count("chosen by benchmark") == 1, "%s", logged);
    log_stop();
    /* a caller of TRIDENT_1.5 (its structs without the fields TRIDENT_1.6 added) is served as before */
    {
        static const uint32_t written[] = {0};
        trd_tuner_desc_t d15 = {.struct_size = offsetof(trd_tuner_desc_t, cache_dir), .flags = TRD_TUNER_MEMORY_ONLY,
                                .kernel = k, .num_written = 1, .written = written};
        trd_tuner_t *t15;
        TU_OK(trd_tuner_create(&d15, &t15));
        struct run r;
        run_setup(&r, rt, 17, "TRIDENT_1.5");
        r.tl.struct_size = offsetof(trd_tuned_launch_t, launch_fn);
        uint32_t chosen = 9;
        TU_OK(trd_tuner_launch(t15, &r.tl, &chosen));
        ck_assert_uint_eq(chosen, 2);
        run_check(&r);
        /* a struct_size that covers launch_fn but not its user: launch_fn is not called with bytes beyond the
         * caller's struct (the pair came together, in TRIDENT_1.6) */
        struct own_launch never = {0};
        r.tl.launch_fn = own_launch;
        r.tl.user = &never;
        r.tl.struct_size = offsetof(trd_tuned_launch_t, user);
        TU_OK(trd_tuner_launch(t15, &r.tl, &chosen));
        ck_assert_msg(never.calls[0] + never.calls[1] + never.calls[2] == 0, "launch_fn was called");
        ck_assert_uint_eq(chosen, 2);
        r.tl.launch_fn = NULL;
        r.tl.user = NULL;
        r.tl.struct_size = offsetof(trd_tuned_launch_t, launch_fn) - 1;
        TU_FAILS(trd_tuner_launch(t15, &r.tl, &chosen), TRD_ERR_VERSION, "trd_tuned_launch_t.struct_size");
        run_free(&r);
        trd_tuner_destroy(t15);
    }
    /* words a log line cannot hold */
    trd_tuner_desc_t d = {.struct_size = sizeof d, .kernel = k, .log_name = "Bad Name"};
    trd_tuner_t *t;
    TU_FAILS(trd_tuner_create(&d, &t), TRD_ERR_INVALID_ARGUMENT, "log_name 'Bad Name' is not 1 to 32");
    /* a reserved field set: a later release may give it a meaning this one would ignore */
    d = (trd_tuner_desc_t){.struct_size = sizeof d, .kernel = k, .reserved = 1};
    TU_FAILS(trd_tuner_create(&d, &t), TRD_ERR_INVALID_ARGUMENT, "reserved is 1; it must be 0");
    trd_kernel_destroy(k);
    trd_runtime_destroy(rt);
}
END_TEST

/* A cache directory so long that a choice file's path would not fit: the choice is kept in memory, said once. */
START_TEST(tuner_path_too_long)
{
    trd_runtime_t *rt = tu_runtime(NULL, NULL);
    static const char *const which[] = {"slow", "fast"};
    trd_kernel_t *k = variants_kernel(rt, which, 2);
    static char dir[4100];
    memset(dir, 'd', sizeof dir - 1);
    dir[0] = '/';
    static const uint32_t written[] = {0};
    trd_tuner_desc_t d = {.struct_size = sizeof d, .kernel = k, .num_written = 1, .written = written, .cache_dir = dir};
    trd_tuner_t *t;
    TU_OK(trd_tuner_create(&d, &t));
    log_start();
    for (int i = 0; i < 2; i++) {
        struct run r;
        run_setup(&r, rt, 40 + (uint64_t)i, i ? "long-b" : "long-a");
        uint32_t chosen = 9;
        TU_OK(trd_tuner_launch(t, &r.tl, &chosen));
        ck_assert_uint_eq(chosen, 1);
        run_check(&r);
        run_free(&r);
    }
    log_stop();
    ck_assert_msg(log_count("choices are kept in this process's memory only") == 1 &&
                      log_count("chosen by benchmark") == 2,
                  "%s", logged);
    trd_tuner_destroy(t);
    trd_kernel_destroy(k);
    trd_runtime_destroy(rt);
}
END_TEST

/* Variants with launch dimensions rules: a tuned launch without grids launches each with its rule's grid (the
 * launch's own grid, 1, would cover one block only), and trd_kernel_variant_grid evaluates them. */
START_TEST(tuner_grid_rules)
{
    trd_runtime_t *rt = tu_runtime(NULL, NULL);
    size_t lens[2];
    void *imgs[2] = {tu_read_file(tune_so("slow"), &lens[0]), tu_read_file(tune_so("fast"), &lens[1])};
    trd_bundle_target_t t[2];
    trd_bundle_variant_t v[2];
    for (int i = 0; i < 2; i++) {
        t[i] = (trd_bundle_target_t){.struct_size = sizeof t[i], .format = TRD_FORMAT_HOST_SO, .arch = "x86_64",
                                     .image = imgs[i], .image_size = lens[i]};
        v[i] = (trd_bundle_variant_t){.struct_size = sizeof v[i], .num_targets = 1, .targets = &t[i],
                                      .config = "BLOCK=256", .grid = i ? "cdiv(n, BLOCK)" : "(n + BLOCK - 1) / BLOCK, 1"};
    }
    void *data;
    uint64_t size;
    TU_OK(trd_bundle_write_variants("tune_kernel", SIG, v, 2, &data, &size));
    trd_kernel_desc_t d = {.struct_size = sizeof d, .data = data, .size = size};
    trd_kernel_t *k;
    TU_OK(trd_kernel_create(rt, &d, &k));
    trd_free(data);
    free(imgs[0]);
    free(imgs[1]);
    trd_variant_info_t vi = {.struct_size = sizeof vi};
    TU_OK(trd_kernel_variant(k, 1, &vi));
    ck_assert_str_eq(vi.grid, "cdiv(n, BLOCK)");
    struct run r;
    run_setup(&r, rt, 31, "rules");
    uint32_t g[3] = {0};
    for (uint32_t i = 0; i < 2; i++) {
        TU_OK(trd_kernel_variant_grid(k, i, r.args, 3, g));
        ck_assert(g[0] == (N + BLOCK - 1) / BLOCK && g[1] == 1 && g[2] == 1);
    }
    trd_arg_t bad[3] = {r.args[0], trd_arg_float(3000), r.args[2]};
    TU_FAILS(trd_kernel_variant_grid(k, 0, bad, 3, g), TRD_ERR_INVALID_ARGUMENT, "is not an integer");
    bad[1] = trd_arg_int(-1000);
    TU_FAILS(trd_kernel_variant_grid(k, 0, bad, 3, g), TRD_ERR_INVALID_ARGUMENT, "gives -2 programs");
    TU_FAILS(trd_kernel_variant_grid(k, 2, r.args, 3, g), TRD_ERR_NOT_FOUND, "no variant 2");
    trd_tuner_t *t2 = tuner_of(k, TRD_TUNER_MEMORY_ONLY);
    r.l.grid[0] = 1; /* the rules decide */
    uint32_t chosen = 9;
    TU_OK(trd_tuner_launch(t2, &r.tl, &chosen));
    ck_assert_uint_eq(chosen, 1);
    run_check(&r);
    run_free(&r);
    trd_tuner_destroy(t2);
    trd_kernel_destroy(k);
    /* a kernel without rules */
    k = variants_kernel(rt, (const char *const[]){"fast"}, 1);
    TU_FAILS(trd_kernel_variant_grid(k, 0, NULL, 0, g), TRD_ERR_NOT_FOUND, "has no launch dimensions rule");
    trd_kernel_destroy(k);
    trd_runtime_destroy(rt);
}
END_TEST

/* ------------------------------------------------ two threads, one benchmark */

struct racer {
    trd_tuner_t *t;
    trd_runtime_t *rt;
    pthread_barrier_t *go;
    uint64_t seed;
    uint32_t chosen;
    int ok;
};

static void *race(void *arg)
{
    struct racer *a = arg;
    struct run *r = malloc(sizeof *r);
    run_setup(r, a->rt, a->seed, "raced key");
    pthread_barrier_wait(a->go);
    a->ok = trd_tuner_launch(a->t, &r->tl, &a->chosen) == TRD_OK;
    if (a->ok)
        run_check(r);
    run_free(r);
    free(r);
    return NULL;
}

START_TEST(tuner_two_threads)
{
    trd_runtime_t *rt = tu_runtime(NULL, NULL);
    static const char *const which[] = {"slow", "fast"};
    trd_kernel_t *k = variants_kernel(rt, which, 2);
    trd_tuner_t *t = tuner_of(k, TRD_TUNER_MEMORY_ONLY);
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, 2);
    struct racer a[2] = {{.t = t, .rt = rt, .go = &go, .seed = 21}, {.t = t, .rt = rt, .go = &go, .seed = 22}};
    pthread_t th[2];
    log_start();
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, race, &a[i]), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    log_stop();
    pthread_barrier_destroy(&go);
    ck_assert(a[0].ok && a[1].ok);
    ck_assert_uint_eq(a[0].chosen, 1);
    ck_assert_uint_eq(a[1].chosen, 1);
    ck_assert_msg(log_count("chosen by benchmark") == 1, "%s", logged);
    trd_tuner_destroy(t);
    trd_kernel_destroy(k);
    trd_runtime_destroy(rt);
}
END_TEST

/* examples/tune_matmul on its bundle of three host variants: every element of c checked by the example itself. */
START_TEST(example_tune_matmul)
{
    char cmd[4200], out[8192];
    snprintf(cmd, sizeof cmd, "cd '%s' && ./examples/tune_matmul examples/tune_matmul.trdb 96 80 72 2>&1", tu_builddir());
    FILE *p = popen(cmd, "r");
    ck_assert(p != NULL);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    ck_assert_msg(st == 0, "%s", out);
    ck_assert_msg(strstr(out, "3 variants") && strstr(out, "every element verified") && strstr(out, "tuned: variant"),
                  "%s", out);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("tune");
    TCase *tc = tcase_create("tune");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, bundle_of_variants);
    tcase_add_test(tc, tuner_refuses);
    tcase_add_test(tc, tuner_chooses_fastest);
    tcase_add_test(tc, tuner_none_can_run);
    tcase_add_test(tc, tuner_cache_files);
    tcase_add_test(tc, tuner_two_threads);
    tcase_add_test(tc, tuner_grid_rules);
    tcase_add_test(tc, tuner_caller_launch);
    tcase_add_test(tc, tuner_path_too_long);
    tcase_add_test(tc, example_tune_matmul);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run(suite());
}
