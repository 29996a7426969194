/* SPDX-License-Identifier: Apache-2.0 */
/* test_cuda_cache.c: the CUDA driver's JIT cache (drivers/cuda/cache.c) on its own, on any machine: an entry is
 * read back under its key only; one renamed, copied or swapped to another key's name, one of another user,
 * writable by group or others or a symbolic link, a FIFO, a link to /dev/zero or a directory where an entry should
 * be are misses (and never block); a directory others may write disables the cache. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "drivers/cuda/cuda_driver.h"
#include "tests/testutil.h"

static char root[] = "/tmp/trd_jitcache_XXXXXX";

static const char A[] = "the cubin of kernel A", B[] = "the cubin of kernel B, longer";
static const char KA[] = "aaaa-0000000000000001-sm90-12040", KB[] = "bbbb-0000000000000002-sm90-12040";

static const char *entry(const char *dir, const char *key)
{
    return tu_path("%s/cuda/%s.cubin", dir, key);
}

/* What the cache holds under key: its bytes (malloc'ed, NUL-terminated), or NULL for a miss. */
static char *read_key(struct cuda_driver *drv, const char *dir, const char *key)
{
    void *data = NULL;
    size_t size = 0;
    if (!cuda_cache_read(drv, dir, key, &data, &size))
        return NULL;
    char *s = calloc(1, size + 1);
    ck_assert_ptr_nonnull(s);
    memcpy(s, data, size);
    free(data);
    return s;
}

static void assert_holds(struct cuda_driver *drv, const char *dir, const char *key, const char *want)
{
    char *got = read_key(drv, dir, key);
    ck_assert_msg(want ? got && !strcmp(got, want) : got == NULL, "%s: read '%s', expected %s%s%s", key,
                  got ? got : "(miss)", want ? "'" : "", want ? want : "a miss", want ? "'" : "");
    free(got);
}

static const char *fresh(const char *name, struct cuda_driver *drv)
{
    memset(drv, 0, sizeof *drv);
    const char *dir = tu_path("%s/%s", root, name);
    cuda_cache_write(drv, dir, KA, A, sizeof A - 1);
    cuda_cache_write(drv, dir, KB, B, sizeof B - 1);
    assert_holds(drv, dir, KA, A);
    assert_holds(drv, dir, KB, B);
    return dir;
}

START_TEST(entries_read_back_under_their_key)
{
    struct cuda_driver drv;
    const char *dir = fresh("plain", &drv);
    struct stat st;
    ck_assert_int_eq(stat(tu_path("%s/cuda", dir), &st), 0);
    ck_assert_uint_eq(st.st_mode & 0777, 0700);
    ck_assert_int_eq(stat(entry(dir, KA), &st), 0);
    ck_assert_uint_eq(st.st_mode & 0777, 0600);
    assert_holds(&drv, dir, "cccc-0000000000000003-sm90-12040", NULL);
}
END_TEST

/* Swapped on disk, each key's entry holds the other kernel: both are misses (and rebuilt), never the other's code. */
START_TEST(swapped_entries_are_misses)
{
    struct cuda_driver drv;
    const char *dir = fresh("swapped", &drv);
    char a[4096], b[4096], t[4200];
    snprintf(a, sizeof a, "%s", entry(dir, KA));
    snprintf(b, sizeof b, "%s", entry(dir, KB));
    snprintf(t, sizeof t, "%s.swap", a);
    ck_assert_int_eq(rename(a, t), 0);
    ck_assert_int_eq(rename(b, a), 0);
    ck_assert_int_eq(rename(t, b), 0);
    assert_holds(&drv, dir, KA, NULL);
    assert_holds(&drv, dir, KB, NULL);
    ck_assert_int_eq(access(a, F_OK), -1); /* removed, to be written again */
    cuda_cache_write(&drv, dir, KA, A, sizeof A - 1);
    assert_holds(&drv, dir, KA, A);
}
END_TEST

/* An entry copied to another key's name. */
START_TEST(copied_entry_is_a_miss)
{
    struct cuda_driver drv;
    const char *dir = fresh("copied", &drv);
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", entry(dir, KA), entry(dir, KB));
    ck_assert_int_eq(system(cmd), 0);
    assert_holds(&drv, dir, KB, NULL);
    assert_holds(&drv, dir, KA, A);
}
END_TEST

/* Entries someone else could have written: another user's (when this test may make one), open to group or
 * others, a symbolic link to a good entry of this user's. */
START_TEST(planted_entries_are_misses)
{
    struct cuda_driver drv;
    const char *dir = fresh("planted", &drv);
    if (chown(entry(dir, KA), 4242, (gid_t)-1) == 0)
        assert_holds(&drv, dir, KA, NULL);
    dir = fresh("planted2", &drv);
    ck_assert_int_eq(chmod(entry(dir, KA), 0620), 0);
    assert_holds(&drv, dir, KA, NULL);
    ck_assert_int_eq(chmod(entry(dir, KB), 0602), 0);
    assert_holds(&drv, dir, KB, NULL);
    dir = fresh("planted3", &drv);
    char a[4096], kept[4200];
    snprintf(a, sizeof a, "%s", entry(dir, KA));
    snprintf(kept, sizeof kept, "%s/kept", dir);
    ck_assert_int_eq(rename(a, kept), 0);
    ck_assert_int_eq(symlink(kept, a), 0);
    assert_holds(&drv, dir, KA, NULL);
    assert_holds(&drv, dir, KB, B);
}
END_TEST

/* A FIFO, a link to /dev/zero and a directory where an entry should be: misses, at once. */
START_TEST(special_files_are_misses)
{
    struct cuda_driver drv;
    const char *dir = fresh("special", &drv);
    char a[4096], b[4096];
    snprintf(a, sizeof a, "%s", entry(dir, KA));
    snprintf(b, sizeof b, "%s", entry(dir, KB));
    ck_assert_int_eq(unlink(a), 0);
    ck_assert_int_eq(mkfifo(a, 0600), 0);
    ck_assert_int_eq(unlink(b), 0);
    ck_assert_int_eq(symlink("/dev/zero", b), 0);
    alarm(30); /* a blocked read fails the test instead of hanging it */
    assert_holds(&drv, dir, KA, NULL);
    assert_holds(&drv, dir, KB, NULL);
    unlink(a);
    ck_assert_int_eq(mkdir(a, 0700), 0);
    assert_holds(&drv, dir, KA, NULL);
    alarm(0);
}
END_TEST

/* A cache directory that group or others may write: nothing in it is read, and the cache is off for the driver. */
START_TEST(open_directory_disables_the_cache)
{
    struct cuda_driver drv;
    const char *dir = fresh("open", &drv);
    ck_assert_int_eq(chmod(tu_path("%s/cuda", dir), 0777), 0);
    assert_holds(&drv, dir, KA, NULL);
    ck_assert_int_eq(atomic_load(&drv.cache_warned), 1);
    dir = fresh("readable", &drv); /* one others may only read is made private, and used */
    ck_assert_int_eq(chmod(tu_path("%s/cuda", dir), 0755), 0);
    assert_holds(&drv, dir, KA, A);
    struct stat st;
    ck_assert_int_eq(stat(tu_path("%s/cuda", dir), &st), 0);
    ck_assert_uint_eq(st.st_mode & 0777, 0700);
}
END_TEST

int main(void)
{
    if (!mkdtemp(root))
        return 1;
    Suite *s = suite_create("cuda_cache");
    TCase *t = tcase_create("cuda_cache");
    tcase_add_test(t, entries_read_back_under_their_key);
    tcase_add_test(t, swapped_entries_are_misses);
    tcase_add_test(t, copied_entry_is_a_miss);
    tcase_add_test(t, planted_entries_are_misses);
    tcase_add_test(t, special_files_are_misses);
    tcase_add_test(t, open_directory_disables_the_cache);
    suite_add_tcase(s, t);
    int failed = tu_run(s);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    if (system(cmd) != 0)
        return 1;
    return failed;
}
