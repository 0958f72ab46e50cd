/* Reading and copying files from a directory an untrusted process could
 * write (a sandboxed kernel build's object directory, a tree an untrusted
 * patch changed). See fs.h. The directory named as root is trusted (the
 * host made it and its parent); every path component below it is not: a
 * symbolic link there could point at a host file, a FIFO would block the
 * reader forever, a device would never end. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "util/fs.h"

static bool openat2_off; /* fs_untrusted_force_fallback() */

void fs_untrusted_force_fallback(bool on)
{
	openat2_off = on;
}

/* The same flags for every open: no symlink followed, no blocking open of a
 * FIFO, nothing inherited by a child. */
#define UNTRUSTED_OPEN_FLAGS (O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)

/* Opens rel below the directory dirfd with no symlink anywhere in it, one
 * component at a time (kernels without openat2, or a seccomp filter that
 * refuses it). rel is relative and has no "." or ".." component. */
static int open_by_components(int dirfd, const char *rel)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof(buf), "%s", rel) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	int cur = dirfd;
	char *save = NULL;
	char *part = strtok_r(buf, "/", &save);
	while (part) {
		char *next = strtok_r(NULL, "/", &save);
		int flags =
		    next ? O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC : UNTRUSTED_OPEN_FLAGS;
		int fd = openat(cur, part, flags);
		int e = errno;
		if (cur != dirfd)
			close(cur);
		if (fd < 0)
			return -(e == ENOTDIR && next ? ELOOP : e);
		cur = fd;
		part = next;
	}
	return cur == dirfd ? -EINVAL : cur;
}

/* rel is relative, not empty, and has no "." or ".." component. */
static bool rel_is_plain(const char *rel)
{
	if (!rel[0] || rel[0] == '/')
		return false;
	for (const char *p = rel; *p;) {
		size_t n = strcspn(p, "/");
		if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p += n;
		p += strspn(p, "/");
	}
	return true;
}

static int open_beneath(const char *root, const char *rel)
{
	int dirfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return -errno;
	int fd = -ENOSYS;
	if (!openat2_off) {
		struct open_how how = {
		    .flags = UNTRUSTED_OPEN_FLAGS,
		    .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
		};
		long r = syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));
		fd = r < 0 ? -errno : (int)r;
		/* ENOSYS: before Linux 5.6; EPERM: a container's seccomp filter */
		if (fd == -EPERM)
			fd = -ENOSYS;
	}
	if (fd == -ENOSYS)
		fd = open_by_components(dirfd, rel);
	close(dirfd);
	return fd;
}

/* Whether the uid reader may read a file with st (owner bits for its owner,
 * else the bits for others; the group is not trusted to be reader's). */
static bool readable_by(const struct stat *st, long reader)
{
	if (reader < 0)
		return true;
	if (st->st_uid == (uid_t)reader)
		return (st->st_mode & S_IRUSR) != 0;
	return (st->st_mode & S_IROTH) != 0;
}

int fs_open_untrusted(const char *root, const char *rel, const struct fs_untrusted *u, int *ret_fd,
		      size_t *ret_size, struct sl_error *err)
{
	const char *what = u->what ? u->what : "file";
	if (!rel_is_plain(rel))
		return error_set(err, ERR_INTERNAL, EINVAL,
				 "The %s '%s' is not a plain relative path below '%s'.", what, rel,
				 root);
	int fd = open_beneath(root, rel);
	if (fd < 0) {
		int e = -fd;
		if (e == ENOENT)
			return error_set(err, ERR_NOT_FOUND, e, "The %s '%s/%s' does not exist.",
					 what, root, rel);
		if (e == ELOOP || e == EXDEV)
			return error_set(err, ERR_BUILD, e,
					 "The %s '%s/%s' is a symbolic link or lies under one; "
					 "refused (files from an untrusted build are never "
					 "followed).",
					 what, root, rel);
		return error_set(err, ERR_INTERNAL, e, "Cannot open the %s '%s/%s': %s.", what,
				 root, rel, strerror(e));
	}
	_cleanup_close_ int owned = fd;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return error_set(err, ERR_INTERNAL, errno, "Cannot stat the %s '%s/%s': %s.", what,
				 root, rel, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return error_set(err, ERR_BUILD, EINVAL,
				 "The %s '%s/%s' is not a regular file (a %s); refused.", what,
				 root, rel,
				 S_ISFIFO(st.st_mode)	? "FIFO"
				 : S_ISDIR(st.st_mode)	? "directory"
				 : S_ISCHR(st.st_mode)	? "character device"
				 : S_ISBLK(st.st_mode)	? "block device"
				 : S_ISSOCK(st.st_mode) ? "socket"
							: "special file");
	if (!readable_by(&st, u->reader_uid))
		return error_set(err, ERR_BUILD, EACCES,
				 "The %s '%s/%s' (owner uid %ld, mode %04o) is not readable by "
				 "the build's user (uid %ld); refused.",
				 what, root, rel, (long)st.st_uid, (unsigned)(st.st_mode & 07777),
				 u->reader_uid);
	if ((unsigned long long)st.st_size > u->max)
		return error_set(err, ERR_BUILD, EFBIG,
				 "The %s '%s/%s' has %lld bytes, more than its limit of %zu; "
				 "refused.",
				 what, root, rel, (long long)st.st_size, u->max);
	/* a regular file: reads block no more */
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	if (ret_size)
		*ret_size = (size_t)st.st_size;
	*ret_fd = TAKE_FD(owned);
	return 0;
}

/* Reads fd (the file root/rel) into buf up to max + 1 bytes: a file that
 * grew past its fstat size is still caught. */
static int read_capped(int fd, const char *root, const char *rel, const struct fs_untrusted *u,
		       char **ret, size_t *ret_len, struct sl_error *err)
{
	size_t cap = 4096, len = 0;
	_cleanup_free_ char *buf = malloc(cap + 1);
	if (!buf)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	for (;;) {
		if (len == cap) {
			if (cap > u->max)
				break;
			cap *= 2;
			char *n = realloc(buf, cap + 1);
			if (!n)
				return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
			buf = n;
		}
		ssize_t k = read(fd, buf + len, cap - len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return error_set(err, ERR_INTERNAL, errno,
					 "Cannot read the %s '%s/%s': %s.",
					 u->what ? u->what : "file", root, rel, strerror(errno));
		if (k == 0)
			break;
		len += (size_t)k;
	}
	if (len > u->max)
		return error_set(err, ERR_BUILD, EFBIG,
				 "The %s '%s/%s' grew past its limit of %zu bytes while read; "
				 "refused.",
				 u->what ? u->what : "file", root, rel, u->max);
	buf[len] = '\0';
	*ret_len = len;
	*ret = TAKE_PTR(buf);
	return 0;
}

int fs_read_untrusted(const char *root, const char *rel, const struct fs_untrusted *u,
		      char **ret_data, size_t *ret_len, struct sl_error *err)
{
	_cleanup_close_ int fd = -1;
	int r = fs_open_untrusted(root, rel, u, &fd, NULL, err);
	if (r < 0)
		return r;
	size_t len = 0;
	char *data = NULL;
	r = read_capped(fd, root, rel, u, &data, &len, err);
	if (r < 0)
		return r;
	if (ret_len)
		*ret_len = len;
	*ret_data = data;
	return 0;
}

int fs_copy_untrusted(const char *root, const char *rel, const struct fs_untrusted *u,
		      const char *to, mode_t mode, struct sl_error *err)
{
	_cleanup_close_ int in = -1;
	int r = fs_open_untrusted(root, rel, u, &in, NULL, err);
	if (r < 0)
		return r;
	/* to is the host's; O_NOFOLLOW all the same, and the mode set even
	 * when it existed before */
	_cleanup_close_ int out =
	    open(to, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);
	if (out < 0)
		return error_set(err, ERR_INTERNAL, errno, "Cannot create '%s': %s.", to,
				 strerror(errno));
	if (fchmod(out, mode) < 0)
		return error_set(err, ERR_INTERNAL, errno, "Cannot set the mode of '%s': %s.", to,
				 strerror(errno));
	char buf[65536];
	size_t total = 0;
	for (;;) {
		ssize_t k = read(in, buf, sizeof(buf));
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			r = error_set(err, ERR_INTERNAL, errno, "Cannot read the %s '%s/%s': %s.",
				      u->what ? u->what : "file", root, rel, strerror(errno));
		else if (k > 0 && (total += (size_t)k) > u->max)
			r = error_set(err, ERR_BUILD, EFBIG,
				      "The %s '%s/%s' grew past its limit of %zu bytes while "
				      "copied; refused.",
				      u->what ? u->what : "file", root, rel, u->max);
		if (r < 0 || k == 0)
			break;
		for (ssize_t off = 0; off < k;) {
			ssize_t w = write(out, buf + off, (size_t)(k - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				r = error_set(err, ERR_INTERNAL, errno, "Cannot write '%s': %s.",
					      to, strerror(errno));
				break;
			}
			off += w;
		}
		if (r < 0)
			break;
	}
	if (r < 0)
		unlink(to);
	return r;
}
