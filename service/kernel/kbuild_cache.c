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
#include <sys/statvfs.h>
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
	int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
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

int kbuild_lock_take(const char *path, const struct kbuild_opts *o, struct kbuild_log *log,
		     int *ret_fd, struct sl_error *err)
{
	bool said = false;
	for (;;) {
		int r = kbuild_lock_try(path, ret_fd, err);
		if (r != 0)
			return r < 0 ? r : 0;
		if (log && !said) {
			kbuild_log(log, "waiting for another build holding '%s'", path);
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
	if (a->pinned)
		close(a->pin_fd);
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
	/* The pin: a shared lock on last-used for as long as the artifact is
	 * loaded, so eviction (which needs it exclusively) leaves a kernel a
	 * job is booting alone. Taken before the files are looked at: an
	 * entry evicted meanwhile is then seen as gone. */
	_cleanup_free_ char *stamp = fs_path_join(dir, "last-used");
	a->pin_fd = open(stamp, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	/* a cache another user made: a read-only descriptor takes a lock too */
	if (a->pin_fd < 0 && errno == EACCES)
		a->pin_fd = open(stamp, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (a->pin_fd < 0)
		return -ENOENT; /* no directory (yet), or no longer */
	a->pinned = true;
	if (flock(a->pin_fd, LOCK_SH) < 0)
		return error_set(err, ERR_INTERNAL, errno, "Cannot lock '%s': %s.", stamp,
				 strerror(errno));
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

/* One evictable thing: an artifact kernels/<key>/ or a tree area
 * trees/<id>[.<n>]/, with the lock whose holder uses it. */
struct entry {
	char *dir;	/* what goes */
	char *lock;	/* "<dir>.lock": held by a build of it */
	bool is_kernel; /* a kernel also has its pin, dir/last-used (shared-locked by users) */
	time_t used;	/* last-used's mtime, else the directory's */
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
	if (x->used != y->used)
		return x->used < y->used ? -1 : 1;
	return strcmp(x->dir, y->dir); /* a stable order for equal stamps */
}

/* A kernel's key (64 hex digits), or a tree area's name (16 hex digits,
 * then ".<n>" for area n >= 1): the names the cache made itself. Anything
 * else in the folder (locks, .tmp, .evicted, failed logs) is not a whole
 * entry. */
static bool entry_name(const char *name, bool kernel)
{
	size_t hex = strspn(name, "0123456789abcdef");
	if (kernel)
		return hex == 64 && name[64] == '\0';
	if (hex != 16)
		return false;
	if (name[16] == '\0')
		return true;
	return name[16] == '.' && name[17] && strspn(name + 17, "0123456789") == strlen(name + 17);
}

static int entries_add(struct entry **v, size_t *n, const char *folder, bool kernel,
		       const char *keep)
{
	DIR *d = opendir(folder);
	if (!d)
		return 0;
	struct dirent *de;
	int r = 0;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		/* what an eviction stopped half-way (a crash) left behind */
		if (len > 8 && strcmp(de->d_name + len - 8, ".evicted") == 0) {
			_cleanup_free_ char *left = fs_path_join(folder, de->d_name);
			struct sl_error ignored;
			fs_rm_rf(left, &ignored);
			continue;
		}
		if (!entry_name(de->d_name, kernel) || (keep && strcmp(de->d_name, keep) == 0))
			continue;
		_cleanup_free_ char *dir = fs_path_join(folder, de->d_name);
		_cleanup_free_ char *stamp = fs_path_join(dir, "last-used");
		struct stat st;
		if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		time_t used = st.st_mtim.tv_sec;
		if (stat(stamp, &st) == 0)
			used = st.st_mtim.tv_sec;
		struct entry *nv = realloc(*v, (*n + 1) * sizeof(**v));
		if (!nv) {
			r = -ENOMEM;
			break;
		}
		*v = nv;
		struct entry *e = &(*v)[*n];
		*e = (struct entry){.is_kernel = kernel, .used = used};
		if (asprintf(&e->lock, "%s.lock", dir) < 0) {
			r = -ENOMEM;
			break;
		}
		e->dir = TAKE_PTR(dir);
		e->bytes = dir_bytes(e->dir);
		(*n)++;
	}
	closedir(d);
	return r;
}

/* Takes fd's lock exclusively without waiting: false when someone holds it
 * (a build, or for a kernel's pin a job that has it loaded). */
static bool lock_now(const char *path, int *ret_fd)
{
	int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? (*ret_fd = -1, true) : false;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		close(fd);
		return false;
	}
	*ret_fd = fd;
	return true;
}

/* Removes e when nobody uses it: its build lock free, and for a kernel its
 * pin free too. Renamed first: a reader sees a whole entry or none. */
static bool entry_remove(const struct entry *e)
{
	_cleanup_close_ int lock_fd = -1, pin_fd = -1;
	_cleanup_free_ char *pin = e->is_kernel ? fs_path_join(e->dir, "last-used") : NULL;
	/* The build lock is created if need be, so a build that starts now
	 * waits for the removal instead of racing it. */
	lock_fd = open(e->lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lock_fd < 0 || flock(lock_fd, LOCK_EX | LOCK_NB) < 0)
		return false;
	if (pin && !lock_now(pin, &pin_fd))
		return false;
	_cleanup_free_ char *gone = NULL;
	struct sl_error ignored;
	if (asprintf(&gone, "%s.evicted", e->dir) < 0 || rename(e->dir, gone) < 0)
		return false;
	fs_rm_rf(gone, &ignored);
	return true;
}

static unsigned long long (*statvfs_size_hook)(const char *path);

void kbuild_cache_set_size_hook(unsigned long long (*fn)(const char *path))
{
	statvfs_size_hook = fn;
}

unsigned long long kbuild_cache_default_max(const char *cache_dir)
{
	unsigned long long size = 0;
	struct statvfs st;
	if (statvfs_size_hook)
		size = statvfs_size_hook(cache_dir);
	else if (statvfs(cache_dir, &st) == 0)
		size = (unsigned long long)st.f_blocks * st.f_frsize;
	return size / 100 * KBUILD_CACHE_DEFAULT_PERCENT;
}

void kbuild_cache_evict(const char *cache_dir, const char *keep, unsigned long long max)
{
	if (max == KBUILD_CACHE_UNLIMITED)
		return;
	if (!max)
		max = kbuild_cache_default_max(cache_dir);
	if (!max)
		return;
	_cleanup_free_ char *kernels = fs_path_join(cache_dir, "kernels");
	_cleanup_free_ char *trees = fs_path_join(cache_dir, "trees");
	struct entry *v = NULL;
	size_t n = 0;
	entries_add(&v, &n, kernels, true, keep);
	entries_add(&v, &n, trees, false, NULL);
	unsigned long long total = 0;
	for (size_t i = 0; i < n; i++)
		total += v[i].bytes;
	if (n)
		qsort(v, n, sizeof(*v), entry_cmp);
	/* Kernels and trees in one least-recently-used order: a tree no build
	 * used for longer than any cached kernel goes before them. A kernel
	 * that is kept (just built) or in use is skipped, and so is a locked
	 * tree (a build in it). */
	for (size_t i = 0; i < n && total > max; i++)
		if (entry_remove(&v[i]))
			total -= v[i].bytes;
	for (size_t i = 0; i < n; i++) {
		free(v[i].dir);
		free(v[i].lock);
	}
	free(v);
}
