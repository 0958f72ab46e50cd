/* Guest initramfs images with libarchive: see initramfs.h. */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "kernel/elfdeps.h"
#include "kernel/initramfs.h"
#include "util/fs.h"
#include "util/hash.h"

#define MAX_WORKLOADS 64

/* Debian's rt-tests programs schedlab runs: small, and they need only libc,
 * libpthread, librt and libnuma. stress-ng (8 MiB and 25 libraries) is not
 * here: a job that runs it adds it (run_plan.c). */
static const char *const default_tools[] = {"/usr/bin/rt-migrate-test",
					    "/usr/bin/cyclictest",
					    "/usr/bin/hackbench",
					    "/usr/bin/pi_stress",
					    "/usr/bin/pip_stress",
					    "/usr/bin/cyclicdeadline",
					    NULL};

/* The directories the agent mounts on or writes to, always present. */
static const char *const base_dirs[] = {"proc", "sys", "dev", "tmp", "schedlab", NULL};

const char *const *initramfs_default_tools(void)
{
	return default_tools;
}

struct entry {
	char *image; /* in-image path without the leading '/' */
	char *host;  /* host file whose content it gets */
};

struct entries {
	struct entry *v;
	size_t n, cap;
};

static void entries_clear(struct entries *e)
{
	for (size_t i = 0; i < e->n; i++) {
		free(e->v[i].image);
		free(e->v[i].host);
	}
	free(e->v);
	e->v = NULL;
	e->n = e->cap = 0;
}

static int entries_add(struct entries *e, const char *image, const char *host, struct sl_error *err)
{
	while (*image == '/')
		image++;
	for (size_t i = 0; i < e->n; i++)
		if (strcmp(e->v[i].image, image) == 0)
			return error_set(err, ERR_INVALID, EEXIST,
					 "Both '%s' and '%s' would be '/%s' in the initramfs.",
					 e->v[i].host, host, image);
	if (e->n == e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 32;
		struct entry *v = realloc(e->v, cap * sizeof(*v));
		if (!v)
			return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		e->v = v;
		e->cap = cap;
	}
	e->v[e->n].image = strdup(image);
	e->v[e->n].host = strdup(host);
	if (!e->v[e->n].image || !e->v[e->n].host) {
		free(e->v[e->n].image);
		free(e->v[e->n].host);
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	}
	e->n++;
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->image, ((const struct entry *)b)->image);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int add_workloads(struct entries *e, const char *dir, struct sl_error *err)
{
	DIR *d = opendir(dir);
	char *names[MAX_WORKLOADS];
	size_t n = 0;
	struct dirent *de;
	int r = 0;

	if (!d)
		return errno == ENOENT ? 0
				       : error_set(err, ERR_INTERNAL, errno,
						   "Cannot open the workloads directory '%s': %s.",
						   dir, strerror(errno));
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char *p = fs_path_join(dir, de->d_name);
		struct stat st;
		/* Only executables: build/workloads also holds make's .d files. */
		if (stat(p, &st) < 0 || !S_ISREG(st.st_mode) || !(st.st_mode & S_IXUSR)) {
			free(p);
			continue;
		}
		free(p);
		if (n == MAX_WORKLOADS) {
			r = error_set(err, ERR_TOO_LARGE, E2BIG,
				      "The workloads directory '%s' holds more than %d programs.",
				      dir, MAX_WORKLOADS);
			break;
		}
		names[n] = strdup(de->d_name);
		if (!names[n]) {
			r = error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
			break;
		}
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(char *), cmp_str);
	for (size_t i = 0; i < n; i++) {
		if (r >= 0) {
			_cleanup_free_ char *host = fs_path_join(dir, names[i]);
			_cleanup_free_ char *image = fs_path_join(INITRAMFS_WORKLOAD_DIR, names[i]);
			r = entries_add(e, image, host, err);
		}
		free(names[i]);
	}
	return r;
}

static int collect(const struct initramfs_inputs *in, struct entries *e, struct sl_error *err)
{
	const char *const *tools = in->tools ? in->tools : default_tools;
	const char *bins[2 + 64];
	size_t nb = 0;
	_cleanup_strv_free_ char **libs = NULL;
	int r;

	if (!in->agent)
		return error_set(err, ERR_INVALID, EINVAL, "No agent binary was given.");
	r = entries_add(e, "init", in->agent, err);
	if (r < 0)
		return r;
	bins[nb++] = in->agent;
	for (size_t i = 0; tools[i]; i++) {
		if (nb + 1 >= ELEMENTSOF(bins))
			return error_set(err, ERR_TOO_LARGE, E2BIG, "Too many tools were given.");
		const char *base = strrchr(tools[i], '/');
		_cleanup_free_ char *image = fs_path_join("usr/bin", base ? base + 1 : tools[i]);
		r = entries_add(e, image, tools[i], err);
		if (r < 0)
			return r;
		bins[nb++] = tools[i];
	}
	for (size_t i = 0; i < in->n_files; i++) {
		if (nb + 1 >= ELEMENTSOF(bins))
			return error_set(err, ERR_TOO_LARGE, E2BIG,
					 "Too many programs were given.");
		r = entries_add(e, in->files[i].image, in->files[i].host, err);
		if (r < 0)
			return r;
		bins[nb++] = in->files[i].host;
	}
	bins[nb] = NULL;
	if (in->workloads_dir) {
		r = add_workloads(e, in->workloads_dir, err);
		if (r < 0)
			return r;
	}
	r = elfdeps_resolve(bins, NULL, &libs, err);
	if (r < 0)
		return r;
	for (size_t i = 0; libs[i]; i++) {
		r = entries_add(e, libs[i], libs[i], err);
		if (r < 0)
			return r;
	}
	qsort(e->v, e->n, sizeof(*e->v), cmp_entry);
	return 0;
}

static int archive_fail(struct archive *a, const char *what, struct sl_error *err)
{
	int e = archive_errno(a);
	return error_set(err, ERR_INTERNAL, e > 0 ? e : EIO, "Cannot write %s: %s.", what,
			 archive_error_string(a) ? archive_error_string(a) : "unknown error");
}

static struct archive *archive_new_cpio_gz(void)
{
	struct archive *a = archive_write_new();
	if (!a)
		return NULL;
	if (archive_write_set_format_cpio_newc(a) != ARCHIVE_OK ||
	    archive_write_add_filter_gzip(a) != ARCHIVE_OK ||
	    /* Small archives must not be padded to 10 KiB blocks. */
	    archive_write_set_bytes_per_block(a, 0) != ARCHIVE_OK) {
		archive_write_free(a);
		return NULL;
	}
	return a;
}

static int write_header(struct archive *a, const char *path, mode_t type, mode_t perm, int64_t size,
			dev_t rdev, struct sl_error *err)
{
	struct archive_entry *ae = archive_entry_new();
	if (!ae)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	archive_entry_set_pathname(ae, path);
	archive_entry_set_filetype(ae, type);
	archive_entry_set_perm(ae, perm);
	archive_entry_set_uid(ae, 0);
	archive_entry_set_gid(ae, 0);
	archive_entry_set_mtime(ae, 0, 0); /* reproducible images */
	archive_entry_set_nlink(ae, type == AE_IFDIR ? 2 : 1);
	archive_entry_set_size(ae, type == AE_IFREG ? size : 0);
	if (type == AE_IFCHR)
		archive_entry_set_rdev(ae, rdev);
	int r = archive_write_header(a, ae);
	archive_entry_free(ae);
	if (r != ARCHIVE_OK)
		return archive_fail(a, path, err);
	return 0;
}

static int write_file(struct archive *a, const struct entry *e, struct sl_error *err)
{
	_cleanup_close_ int fd = open(e->host, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char buf[65536];

	if (fd < 0 || fstat(fd, &st) < 0)
		return error_set(err, ERR_NOT_FOUND, errno, "Cannot read '%s': %s.", e->host,
				 strerror(errno));
	if (!S_ISREG(st.st_mode))
		return error_set(err, ERR_INVALID, EINVAL, "'%s' is not a regular file.", e->host);
	int r = write_header(a, e->image, AE_IFREG, (st.st_mode & 0111) ? 0755 : 0644, st.st_size,
			     0, err);
	if (r < 0)
		return r;
	int64_t left = st.st_size;
	while (left > 0) {
		ssize_t n = read(fd, buf, sizeof(buf) < (size_t)left ? sizeof(buf) : (size_t)left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return error_set(err, ERR_INTERNAL, n < 0 ? errno : EIO,
					 "Cannot read '%s': it is shorter than it was.", e->host);
		if (archive_write_data(a, buf, (size_t)n) != n)
			return archive_fail(a, e->image, err);
		left -= n;
	}
	return 0;
}

/* 1 if dir (no leading '/') is already in dirs[0..n). */
static int has_dir(char **dirs, size_t n, const char *dir)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(dirs[i], dir) == 0)
			return 1;
	return 0;
}

static int write_base(const char *path, const struct entries *e, struct sl_error *err)
{
	struct archive *a = archive_new_cpio_gz();
	_cleanup_strv_free_ char **dirs = NULL;
	size_t nd = 0, cap = e->n * 8 + ELEMENTSOF(base_dirs) + 1;
	int r = 0;

	if (!a)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Cannot set up libarchive.");
	dirs = calloc(cap, sizeof(char *));
	if (!dirs) {
		archive_write_free(a);
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	}
	for (size_t i = 0; base_dirs[i]; i++)
		dirs[nd++] = strdup(base_dirs[i]);
	/* Every parent directory of every file, so the kernel can create it. */
	for (size_t i = 0; i < e->n; i++) {
		char *p = strdup(e->v[i].image);
		char *s = p;
		while (p && (s = strchr(s, '/'))) {
			*s = '\0';
			if (!has_dir(dirs, nd, p) && nd + 1 < cap)
				dirs[nd++] = strdup(p);
			*s++ = '/';
		}
		free(p);
	}
	for (size_t i = 0; i < nd; i++)
		if (!dirs[i]) {
			archive_write_free(a);
			return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		}
	/* Sorted, a parent ("usr") always comes before its children ("usr/bin"). */
	qsort(dirs, nd, sizeof(char *), cmp_str);

	if (archive_write_open_filename(a, path) != ARCHIVE_OK) {
		r = archive_fail(a, path, err);
		goto out;
	}
	for (size_t i = 0; i < nd && r >= 0; i++)
		r = write_header(a, dirs[i], AE_IFDIR, strcmp(dirs[i], "tmp") == 0 ? 01777 : 0755,
				 0, 0, err);
	if (r >= 0)
		r = write_header(a, "dev/console", AE_IFCHR, 0600, 0, makedev(5, 1), err);
	for (size_t i = 0; i < e->n && r >= 0; i++)
		r = write_file(a, &e->v[i], err);
	if (r >= 0 && archive_write_close(a) != ARCHIVE_OK)
		r = archive_fail(a, path, err);
out:
	archive_write_free(a);
	return r;
}

/* The cache step of initramfs_base() for collected entries. */
static int base_from_entries(const char *cache_dir, const struct entries *e, char **ret_path,
			     struct sl_error *err)
{
	char hex[HASH_HEX_LEN], name[HASH_HEX_LEN + 16];
	int r;

	struct hash_ctx *h = hash_new();
	hash_update_str(h, INITRAMFS_FORMAT_VERSION);
	for (size_t i = 0; i < e->n; i++) {
		char fh[HASH_HEX_LEN];
		r = hash_file_hex(e->v[i].host, fh, err);
		if (r < 0) {
			hash_free(h);
			return r;
		}
		hash_update_str(h, e->v[i].image);
		hash_update_str(h, fh);
	}
	hash_final_hex(h, hex);

	_cleanup_free_ char *dir = fs_path_join(cache_dir, "initramfs");
	r = fs_mkdir_p(dir, err);
	if (r < 0)
		return r;
	snprintf(name, sizeof(name), "%s.cpio.gz", hex);
	_cleanup_free_ char *path = fs_path_join(dir, name);
	if (fs_exists(path)) {
		*ret_path = TAKE_PTR(path);
		return 0;
	}
	_cleanup_free_ char *tmp = NULL;
	if (asprintf(&tmp, "%s.tmp.%d.%lx", path, (int)getpid(), (unsigned long)pthread_self()) <
	    0) {
		tmp = NULL;
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	}
	r = write_base(tmp, e, err);
	if (r >= 0 && rename(tmp, path) < 0)
		r = error_set(err, ERR_INTERNAL, errno, "Cannot rename '%s' to '%s': %s.", tmp,
			      path, strerror(errno));
	if (r < 0) {
		unlink(tmp);
		return r;
	}
	*ret_path = TAKE_PTR(path);
	return 1;
}

int initramfs_base(const char *cache_dir, const struct initramfs_inputs *in, char **ret_path,
		   struct sl_error *err)
{
	struct entries e = {0};
	int r = collect(in, &e, err);
	if (r >= 0)
		r = base_from_entries(cache_dir, &e, ret_path, err);
	entries_clear(&e);
	return r;
}

int initramfs_write_plan(int fd, json_object *plan, struct sl_error *err)
{
	const char *text = json_object_to_json_string_ext(plan, JSON_C_TO_STRING_PLAIN);
	size_t len = text ? strlen(text) : 0;
	int r;

	if (!text || len > INITRAMFS_MAX_PLAN)
		return error_set(err, ERR_TOO_LARGE, E2BIG,
				 "The plan is %zu bytes, more than the limit of %u.", len,
				 INITRAMFS_MAX_PLAN);
	struct archive *a = archive_new_cpio_gz();
	if (!a)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Cannot set up libarchive.");
	if (archive_write_open_fd(a, fd) != ARCHIVE_OK) {
		r = archive_fail(a, "the plan archive", err);
		goto out;
	}
	r = write_header(a, "schedlab", AE_IFDIR, 0755, 0, 0, err);
	if (r >= 0)
		r = write_header(a, &INITRAMFS_PLAN_PATH[1], AE_IFREG, 0644, (int64_t)len, 0, err);
	if (r >= 0 && archive_write_data(a, text, len) != (la_ssize_t)len)
		r = archive_fail(a, INITRAMFS_PLAN_PATH, err);
	if (r >= 0 && archive_write_close(a) != ARCHIVE_OK)
		r = archive_fail(a, "the plan archive", err);
out:
	archive_write_free(a);
	return r;
}

int initramfs_with_plan(const char *base_path, json_object *plan, const char *out_path,
			struct sl_error *err)
{
	_cleanup_close_ int in = open(base_path, O_RDONLY | O_CLOEXEC);
	_cleanup_close_ int out = -1;
	char buf[65536];
	int r;

	if (in < 0)
		return error_set(err, ERR_NOT_FOUND, errno, "Cannot open the initramfs '%s': %s.",
				 base_path, strerror(errno));
	out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0)
		return error_set(err, ERR_INTERNAL, errno, "Cannot create '%s': %s.", out_path,
				 strerror(errno));
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return error_set(err, ERR_INTERNAL, errno, "Cannot read '%s': %s.",
					 base_path, strerror(errno));
		if (n == 0)
			break;
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				return error_set(err, ERR_INTERNAL, errno, "Cannot write '%s': %s.",
						 out_path, strerror(errno));
			off += w;
		}
	}
	r = initramfs_write_plan(out, plan, err);
	if (r < 0)
		return error_prefix(err, "Cannot append the plan to '%s'", out_path);
	return 0;
}
