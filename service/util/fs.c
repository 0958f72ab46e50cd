#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <ftw.h>

#include "util/fs.h"

int fs_read_file(const char *path, size_t max, char **ret_data, size_t *ret_len,
		 struct sl_error *err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return error_set(err, errno == ENOENT ? ERR_NOT_FOUND : ERR_INTERNAL, errno,
				 "Cannot open '%s': %s.", path, strerror(errno));
	size_t cap = 4096, len = 0;
	_cleanup_free_ char *buf = malloc(cap + 1);
	if (!buf)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory reading '%s'.", path);
	for (;;) {
		if (len == cap) {
			if (cap > max)
				break;
			cap *= 2;
			char *n = realloc(buf, cap + 1);
			if (!n)
				return error_set(err, ERR_INTERNAL, ENOMEM,
						 "Out of memory reading '%s'.", path);
			buf = n;
		}
		ssize_t k = read(fd, buf + len, cap - len);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return error_set(err, ERR_INTERNAL, errno, "Cannot read '%s': %s.", path,
					 strerror(errno));
		}
		if (k == 0)
			break;
		len += (size_t)k;
	}
	if (len > max)
		return error_set(err, ERR_TOO_LARGE, EFBIG, "File '%s' is larger than %zu bytes.",
				 path, max);
	buf[len] = '\0';
	if (ret_len)
		*ret_len = len;
	*ret_data = TAKE_PTR(buf);
	return 0;
}

int fs_write_file_atomic(const char *path, const void *data, size_t len, struct sl_error *err)
{
	size_t n = strlen(path) + 32;
	_cleanup_free_ char *tmp = malloc(n);
	if (!tmp)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	snprintf(tmp, n, "%s.tmp.%d", path, (int)getpid());
	/* path's directory may be one a sandboxed build writes (obj/.config):
	 * a symlink planted at the temporary name is removed, never followed */
	if (unlink(tmp) < 0 && errno != ENOENT)
		return error_set(err, ERR_INTERNAL, errno, "Cannot remove '%s': %s.", tmp,
				 strerror(errno));
	_cleanup_close_ int fd =
	    open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return error_set(err, ERR_INTERNAL, errno, "Cannot create '%s': %s.", tmp,
				 strerror(errno));
	const char *p = data;
	while (len > 0) {
		ssize_t k = write(fd, p, len);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			unlink(tmp);
			return error_set(err, ERR_INTERNAL, e, "Cannot write '%s': %s.", tmp,
					 strerror(e));
		}
		p += k;
		len -= (size_t)k;
	}
	if (fsync(fd) < 0 || rename(tmp, path) < 0) {
		int e = errno;
		unlink(tmp);
		return error_set(err, ERR_INTERNAL, e, "Cannot replace '%s': %s.", path,
				 strerror(e));
	}
	/* the rename itself survives a power loss once its directory is synced */
	_cleanup_free_ char *dir = strdup(path);
	char *slash = dir ? strrchr(dir, '/') : NULL;
	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	_cleanup_close_ int dfd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	/* EINVAL: a filesystem that cannot sync a directory (nothing to do) */
	if (dfd < 0 || (fsync(dfd) < 0 && errno != EINVAL))
		return error_set(err, ERR_INTERNAL, errno, "Cannot sync the directory of '%s': %s.",
				 path, strerror(errno));
	return 0;
}

int fs_fsync_dir(const char *dir, struct sl_error *err)
{
	_cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) < 0)
		return error_set(err, ERR_INTERNAL, errno, "Cannot sync the directory '%s': %s.",
				 dir, strerror(errno));
	return 0;
}

int fs_mkdir_private(const char *path, struct sl_error *err)
{
	_cleanup_free_ char *parent = strdup(path);
	if (!parent)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	char *slash = strrchr(parent, '/');
	if (slash && slash != parent) {
		*slash = '\0';
		int r = fs_mkdir_p(parent, err);
		if (r < 0)
			return r;
	}
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return error_set(err, ERR_INTERNAL, errno, "Cannot create directory '%s': %s.",
				 path, strerror(errno));
	return 0;
}

int fs_mkdir_p(const char *path, struct sl_error *err)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return error_set(err, ERR_INVALID, ENAMETOOLONG, "Path '%s' is too long.", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return error_set(err, ERR_INTERNAL, errno,
					 "Cannot create directory '%s': %s.", buf, strerror(errno));
		*p = '/';
	}
	if (mkdir(buf, 0755) < 0 && errno != EEXIST)
		return error_set(err, ERR_INTERNAL, errno, "Cannot create directory '%s': %s.", buf,
				 strerror(errno));
	return 0;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p) < 0 && errno != ENOENT ? -1 : 0;
}

int fs_rm_rf(const char *path, struct sl_error *err)
{
	if (!path || !*path || strcmp(path, "/") == 0)
		return error_set(err, ERR_INTERNAL, EINVAL, "Refusing to remove '%s'.",
				 path ? path : "(null)");
	if (!fs_exists(path))
		return 0;
	if (nftw(path, rm_one, 32, FTW_DEPTH | FTW_PHYS) < 0)
		return error_set(err, ERR_INTERNAL, errno, "Cannot remove '%s': %s.", path,
				 strerror(errno));
	return 0;
}

char *fs_path_join(const char *a, const char *b)
{
	size_t la = strlen(a);
	while (la > 1 && a[la - 1] == '/')
		la--;
	while (*b == '/')
		b++;
	char *r = malloc(la + strlen(b) + 2);
	if (!r)
		abort();
	memcpy(r, a, la);
	r[la] = '/';
	strcpy(r + la + 1, b);
	return r;
}

int fs_exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

char *fs_default_cache_dir(void)
{
	const char *e = getenv("SCHEDLAB_CACHE");
	if (e && *e)
		return strdup(e);
	e = getenv("XDG_CACHE_HOME");
	if (e && *e)
		return fs_path_join(e, "schedlab");
	e = getenv("HOME");
	_cleanup_free_ char *cache = fs_path_join(e && *e ? e : "/root", ".cache");
	return fs_path_join(cache, "schedlab");
}

char *fs_data_dir(void)
{
	const char *e = getenv("SCHEDLAB_DATA_DIR");
	if (e && *e)
		return strdup(e);
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		/* build/schedlab or build/tests/test_x: walk up until guest-kernel/ shows. */
		for (int i = 0; i < 4; i++) {
			char *slash = strrchr(exe, '/');
			if (!slash || slash == exe)
				break;
			*slash = '\0';
			_cleanup_free_ char *probe = fs_path_join(exe, "guest-kernel");
			if (fs_exists(probe))
				return strdup(exe);
		}
	}
	return strdup("/usr/share/schedlab");
}
