/* The content-addressed cache under <cache>/kernels/: loading an artifact,
 * the locks that make concurrent builds of one key build once, and LRU
 * eviction (see kbuild.h and docs/kernel-builds.md). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kernel/kbuild.h"
#include "kernel/kbuild-internal.h"
#include "util/fs.h"
#include "util/json.h"

/* The last-used stamp that LRU eviction sorts by. */
void kbuild_cache_touch(const char *dir)
{
	_cleanup_free_ char *p = fs_path_join(dir, "last-used");
	int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0) {
		futimens(fd, NULL);
		close(fd);
	}
}

int kbuild_lock_try(const char *path, int *ret_fd, struct sl_error *err)
{
	_cleanup_close_ int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return error_set(err, ERR_INTERNAL, errno, "Cannot open the lock '%s': %s.", path,
				 strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EWOULDBLOCK || errno == EINTR)
			return 0;
		return error_set(err, ERR_INTERNAL, errno, "Cannot lock '%s': %s.", path,
				 strerror(errno));
	}
	*ret_fd = TAKE_FD(fd);
	return 1;
}

int kbuild_lock_take(const char *path, const struct kbuild_opts *o, struct build_ctx *b,
		     int *ret_fd, struct sl_error *err)
{
	bool said = false;
	for (;;) {
		int r = kbuild_lock_try(path, ret_fd, err);
		if (r != 0)
			return r < 0 ? r : 0;
		if (b && !said) {
			kbuild_log(b, "waiting for another build holding '%s'", path);
			said = true;
		}
		if (o && o->cancelled && o->cancelled(o->userdata))
			return error_set(err, ERR_CANCELLED, ECANCELED,
					 "Cancelled while waiting for the lock '%s'.", path);
		usleep(200 * 1000);
	}
}

/* ---- the artifact ---- */

void kbuild_artifact_free(struct kbuild_artifact *a)
{
	if (!a)
		return;
	free(a->dir);
	free(a->bzimage);
	free(a->config);
	free(a->log);
	free(a->meta_path);
	json_object_put(a->meta);
	free(a);
}

static void kbuild_artifact_freep(struct kbuild_artifact **a)
{
	kbuild_artifact_free(*a);
}

int kbuild_cache_load(const char *dir, const char *key, struct kbuild_artifact **ret,
		      struct sl_error *err)
{
	_cleanup_(kbuild_artifact_freep) struct kbuild_artifact *a = calloc(1, sizeof(*a));
	if (!a)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	snprintf(a->key, sizeof(a->key), "%s", key);
	a->dir = strdup(dir);
	a->bzimage = fs_path_join(dir, "bzImage");
	a->config = fs_path_join(dir, "config");
	a->log = fs_path_join(dir, "build.log");
	a->meta_path = fs_path_join(dir, "meta.json");
	if (!a->dir)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	if (!fs_exists(a->meta_path) || !fs_exists(a->bzimage))
		return -ENOENT;
	/* A sched_ext kernel is complete with its schedulers (kbuild_scx.c);
	 * one built before schedlab built them is rebuilt. */
	_cleanup_free_ char *scx = fs_path_join(dir, KBUILD_SCX_DIR);
	if (kbuild_config_has_scx(a->config) && !fs_exists(scx))
		return -ENOENT;
	int r = json_read_file_strict(a->meta_path, 1024 * 1024, "cached kernel's meta file",
				      &a->meta, err);
	if (r < 0 && r != -EINVAL)
		return r;
	if (r < 0 || !json_object_is_type(a->meta, json_type_object))
		return error_set(err, ERR_INTERNAL, EBADMSG,
				 "The cached kernel's '%s' is not a JSON object.", a->meta_path);
	*ret = TAKE_PTR(a);
	return 0;
}

/* ---- eviction ---- */

struct entry {
	char key[HASH_HEX_LEN];
	time_t used;
	unsigned long long bytes;
};

static unsigned long long walk_total;
static int walk_sum(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)p;
	(void)f;
	if (flag == FTW_F)
		walk_total += (unsigned long long)st->st_blocks * 512;
	return 0;
}

static pthread_mutex_t walk_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned long long dir_bytes(const char *dir)
{
	pthread_mutex_lock(&walk_lock);
	walk_total = 0;
	nftw(dir, walk_sum, 16, FTW_PHYS);
	unsigned long long t = walk_total;
	pthread_mutex_unlock(&walk_lock);
	return t;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	return x->used < y->used ? -1 : x->used > y->used;
}

/* Removes the least recently used artifacts until the kernels/ directory is
 * within max bytes. Never the one just returned (keep), and never one whose
 * lock someone holds (being built or looked up). Best effort: errors are
 * ignored, the cache is only a cache. */
void kbuild_cache_evict(const char *kernels, const char *keep, unsigned long long max)
{
	if (!max)
		return;
	DIR *d = opendir(kernels);
	if (!d)
		return;
	struct entry *v = NULL;
	size_t n = 0;
	unsigned long long total = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (strlen(de->d_name) != 64 || strspn(de->d_name, "0123456789abcdef") != 64)
			continue;
		_cleanup_free_ char *dir = fs_path_join(kernels, de->d_name);
		_cleanup_free_ char *stamp = fs_path_join(dir, "last-used");
		struct stat st;
		if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		time_t used = stat(stamp, &st) == 0 ? st.st_mtim.tv_sec : 0;
		struct entry *nv = realloc(v, (n + 1) * sizeof(*v));
		if (!nv)
			break;
		v = nv;
		memcpy(v[n].key, de->d_name, HASH_HEX_LEN);
		v[n].used = used;
		v[n].bytes = dir_bytes(dir);
		total += v[n].bytes;
		n++;
	}
	closedir(d);
	qsort(v, n, sizeof(*v), entry_cmp);
	for (size_t i = 0; i < n && total > max; i++) {
		if (strcmp(v[i].key, keep) == 0)
			continue;
		_cleanup_free_ char *lock = NULL;
		if (asprintf(&lock, "%s/%s.lock", kernels, v[i].key) < 0)
			break;
		int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0)
			continue;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			_cleanup_free_ char *dir = fs_path_join(kernels, v[i].key);
			struct sl_error ignored;
			/* rename first: a reader sees a whole artifact or none */
			_cleanup_free_ char *gone = NULL;
			if (asprintf(&gone, "%s.evicted", dir) >= 0 && rename(dir, gone) == 0 &&
			    fs_rm_rf(gone, &ignored) == 0)
				total -= v[i].bytes;
			unlink(lock);
		}
		close(fd);
	}
	free(v);
}
