/* The cache's eviction order (kbuild_cache_evict): kernel artifacts and
 * source tree areas in one least-recently-used order; never the kept key,
 * a kernel a loaded artifact pins, or a tree whose lock a build holds; the
 * default bound as a share of the filesystem (a fake size through the
 * hook); no bound at all with KBUILD_CACHE_UNLIMITED. Entries are made by
 * hand with known sizes and stamps; test_kbuild covers eviction after real
 * (dry-run) builds. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <cmocka.h>
#include <unistd.h>

#include "kernel/kbuild-internal.h"
#include "kernel/kbuild.h"
#include "util/fs.h"

#define ENTRY_BYTES (64 * 1024)

struct fixture {
	char dir[64];
	char *kernels, *trees;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_kbuild_cache.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	f->kernels = fs_path_join(f->dir, "kernels");
	f->trees = fs_path_join(f->dir, "trees");
	assert_int_equal(mkdir(f->kernels, 0700), 0);
	assert_int_equal(mkdir(f->trees, 0700), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	kbuild_cache_set_size_hook(NULL);
	fs_rm_rf(f->dir, NULL);
	free(f->kernels);
	free(f->trees);
	free(f);
	return 0;
}

static void write_bytes(const char *path, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	char buf[4096];
	memset(buf, 'x', sizeof(buf));
	for (size_t done = 0; done < n; done += sizeof(buf))
		assert_int_equal(write(fd, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	close(fd);
}

/* An entry of ENTRY_BYTES whose last-used stamp is `age` seconds old. A
 * kernel is complete (meta.json, bzImage), so kbuild_cache_load takes it. */
static char *entry(const char *folder, const char *name, int age, bool kernel)
{
	char *dir = fs_path_join(folder, name);
	assert_int_equal(mkdir(dir, 0700), 0);
	_cleanup_free_ char *data = fs_path_join(dir, kernel ? "bzImage" : "blob");
	write_bytes(data, ENTRY_BYTES);
	if (kernel) {
		_cleanup_free_ char *meta = fs_path_join(dir, "meta.json");
		assert_int_equal(fs_write_file_atomic(meta, "{}", 2, NULL), 0);
	}
	_cleanup_free_ char *stamp = fs_path_join(dir, "last-used");
	write_bytes(stamp, 0);
	struct timespec t[2] = {{time(NULL) - age, 0}, {time(NULL) - age, 0}};
	assert_int_equal(utimensat(AT_FDCWD, stamp, t, 0), 0);
	return dir;
}

static char *kernel_entry(struct fixture *f, char c, int age)
{
	char key[65];
	memset(key, c, 64);
	key[64] = '\0';
	return entry(f->kernels, key, age, true);
}

static char *tree_entry(struct fixture *f, const char *name, int age)
{
	return entry(f->trees, name, age, false);
}

/* Somewhat more than n entries' worth (directories and stamps use blocks too). */
static unsigned long long room_for(int n)
{
	return (unsigned long long)n * ENTRY_BYTES + n * 16 * 1024ULL;
}

static void test_lru_order_across_kernels_and_trees(void **state)
{
	struct fixture *f = *state;
	char *k_old = kernel_entry(f, 'a', 500);
	char *t_old = tree_entry(f, "0123456789abcdef", 400);
	char *k_mid = kernel_entry(f, 'b', 300);
	char *t_area = tree_entry(f, "0123456789abcdef.1", 200);
	char *k_new = kernel_entry(f, 'c', 100);
	/* not the cache's own names: never counted, never removed */
	char *stray = tree_entry(f, "not-a-tree", 1000);
	kbuild_cache_evict(f->dir, NULL, room_for(3));
	assert_false(fs_exists(k_old));
	assert_false(fs_exists(t_old));
	assert_true(fs_exists(k_mid));
	assert_true(fs_exists(t_area));
	assert_true(fs_exists(k_new));
	assert_true(fs_exists(stray));
	/* one more to go: the next oldest is the kernel b */
	kbuild_cache_evict(f->dir, NULL, room_for(2));
	assert_false(fs_exists(k_mid));
	assert_true(fs_exists(t_area));
	assert_true(fs_exists(k_new));
	free(k_old), free(t_old), free(k_mid), free(t_area), free(k_new), free(stray);
}

static void test_in_use_is_kept(void **state)
{
	struct fixture *f = *state;
	char *k_pinned = kernel_entry(f, 'a', 500);
	char *t_locked = tree_entry(f, "fedcba9876543210", 400);
	char *k_kept = kernel_entry(f, 'c', 300);
	char *k_free = kernel_entry(f, 'd', 100);
	/* a job has kernel a loaded: its artifact pins it */
	char key[65];
	memset(key, 'a', 64);
	key[64] = '\0';
	struct kbuild_artifact *a = NULL;
	assert_int_equal(kbuild_cache_load(k_pinned, key, &a, NULL), 0);
	/* a build holds the tree's lock */
	_cleanup_free_ char *lock = NULL;
	assert_true(asprintf(&lock, "%s.lock", t_locked) > 0);
	int lfd = open(lock, O_RDWR | O_CREAT, 0600);
	assert_true(lfd >= 0);
	assert_int_equal(flock(lfd, LOCK_EX), 0);
	char keep[65];
	memset(keep, 'c', 64);
	keep[64] = '\0';
	kbuild_cache_evict(f->dir, keep, 1);
	assert_true(fs_exists(k_pinned));
	assert_true(fs_exists(t_locked));
	assert_true(fs_exists(k_kept));
	assert_false(fs_exists(k_free));
	/* once they are let go, they go */
	kbuild_artifact_free(a);
	close(lfd);
	kbuild_cache_evict(f->dir, keep, 1);
	assert_false(fs_exists(k_pinned));
	assert_false(fs_exists(t_locked));
	assert_true(fs_exists(k_kept));
	free(k_pinned), free(t_locked), free(k_kept), free(k_free);
}

/* A kernel evicted between a reader's open and its lock is seen as gone. */
static void test_load_after_eviction(void **state)
{
	struct fixture *f = *state;
	char *k = kernel_entry(f, 'e', 10);
	kbuild_cache_evict(f->dir, NULL, 1);
	assert_false(fs_exists(k));
	char key[65];
	memset(key, 'e', 64);
	key[64] = '\0';
	struct kbuild_artifact *a = NULL;
	assert_int_equal(kbuild_cache_load(k, key, &a, NULL), -ENOENT);
	assert_null(a);
	free(k);
}

static unsigned long long fake_size;
static unsigned long long fake_fs_size(const char *path)
{
	(void)path;
	return fake_size;
}

static void test_default_and_unlimited(void **state)
{
	struct fixture *f = *state;
	char *k1 = kernel_entry(f, '1', 300);
	char *k2 = kernel_entry(f, '2', 200);
	char *t = tree_entry(f, "00000000000000ff", 100);
	/* a filesystem of four entries: the default (half) holds two */
	fake_size = room_for(4);
	kbuild_cache_set_size_hook(fake_fs_size);
	assert_int_equal(kbuild_cache_default_max(f->dir),
			 fake_size / 100 * KBUILD_CACHE_DEFAULT_PERCENT);
	kbuild_cache_evict(f->dir, NULL, KBUILD_CACHE_UNLIMITED);
	assert_true(fs_exists(k1));
	kbuild_cache_evict(f->dir, NULL, 0);
	assert_false(fs_exists(k1));
	assert_true(fs_exists(k2));
	assert_true(fs_exists(t));
	/* leftovers of an eviction a crash stopped are swept */
	_cleanup_free_ char *left = fs_path_join(f->trees, "00000000000000aa.evicted");
	assert_int_equal(mkdir(left, 0700), 0);
	kbuild_cache_evict(f->dir, NULL, 0);
	assert_false(fs_exists(left));
	free(k1), free(k2), free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_lru_order_across_kernels_and_trees, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_in_use_is_kept, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_load_after_eviction, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_default_and_unlimited, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
