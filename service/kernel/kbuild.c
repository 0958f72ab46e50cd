/* Kernel builds and their content-addressed cache (see kbuild.h and
 * docs/kernel-builds.md for the layout under the cache directory). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>

#include "kernel/kbuild.h"
#include "util/cmd.h"
#include "util/fs.h"
#include "util/hash.h"

#define KBUILD_KEY_VERSION	"schedlab-kbuild-v1"
#define KBUILD_MAX_CONFIG_LINES 4096
/* A cold tinyconfig+fragment build compiles about this many objects; the
 * real count of the last full build replaces it (trees/<id>/objects). */
#define KBUILD_DEFAULT_OBJECTS 1100
#define KBUILD_MAKE_TIMEOUT_S  3600
#define KBUILD_STEP_TIMEOUT_S  600

static struct kbuild_test_hooks test_hooks;

/* snprintf for messages where cutting the text short is fine. */
static void trunc_printf(char *buf, size_t len, const char *fmt, ...) _printf_(3, 4);
static void trunc_printf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

void kbuild_set_test_hooks(const struct kbuild_test_hooks *h)
{
	if (h)
		test_hooks = *h;
	else
		memset(&test_hooks, 0, sizeof(test_hooks));
}

/* ---- the spec ---- */

void kernel_spec_free(struct kernel_spec *s)
{
	if (!s)
		return;
	free(s->source);
	strv_free(s->patches);
	free(s->config);
	free(s);
}

static void kernel_spec_freep(struct kernel_spec **s)
{
	kernel_spec_free(*s);
}

/* Joins a relative path onto base and checks that it names a regular file. */
static int resolve_file(const char *base_dir, const char *p, const char *field, char **ret,
			struct sl_error *err)
{
	if (!*p || strlen(p) >= PATH_MAX)
		return error_set_path(err, ERR_INVALID, field,
				      "The path in '%s' is empty or too long.", field);
	_cleanup_free_ char *joined =
	    p[0] == '/' || !base_dir ? strdup(p) : fs_path_join(base_dir, p);
	if (!joined)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	char real[PATH_MAX];
	struct stat st;
	if (!realpath(joined, real) || stat(real, &st) < 0) {
		int e = errno;
		error_set_path(err, e == ENOENT ? ERR_NOT_FOUND : ERR_INVALID, field,
			       "The file '%s' named in '%s' cannot be used: %s.", joined, field,
			       strerror(e));
		err->errnum = e;
		return -e;
	}
	if (!S_ISREG(st.st_mode))
		return error_set_path(err, ERR_INVALID, field,
				      "The path '%s' named in '%s' is not a regular file.", joined,
				      field);
	*ret = strdup(real);
	if (!*ret)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	return 0;
}

static int patches_push(char ***v, size_t *n, char *p, struct sl_error *err)
{
	if (*n >= KBUILD_MAX_PATCHES) {
		free(p);
		return error_set_path(err, ERR_TOO_LARGE, "patches",
				      "A kernel spec may name at most %d patches.",
				      KBUILD_MAX_PATCHES);
	}
	char **nv = realloc(*v, (*n + 2) * sizeof(char *));
	if (!nv) {
		free(p);
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	}
	*v = nv;
	nv[(*n)++] = p;
	nv[*n] = NULL;
	return 0;
}

static int series_read(const char *series, char ***v, size_t *n, struct sl_error *err)
{
	_cleanup_free_ char *data = NULL;
	int r = fs_read_file(series, KBUILD_MAX_SERIES_BYTES, &data, NULL, err);
	if (r < 0)
		return error_prefix(err, "Cannot read the series file");
	_cleanup_free_ char *dir = strdup(series);
	if (!dir)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	char *save = NULL;
	unsigned lineno = 0;
	for (char *line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		lineno++;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		while (*line == ' ' || *line == '\t')
			line++;
		size_t len = strlen(line);
		while (len > 0 &&
		       (line[len - 1] == ' ' || line[len - 1] == '\t' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (!len)
			continue;
		/* quilt series may carry options like "-p1"; only -p1 is supported */
		char *sp = strpbrk(line, " \t");
		if (sp) {
			*sp++ = '\0';
			while (*sp == ' ' || *sp == '\t')
				sp++;
			if (strcmp(sp, "-p1") != 0)
				return error_set_path(err, ERR_INVALID, "series",
						      "Series file '%s' line %u has an unsupported "
						      "option '%s' (only -p1).",
						      series, lineno, sp);
		}
		char *p = NULL;
		r = resolve_file(dir, line, "series", &p, err);
		if (r < 0)
			return error_prefix(err, "Series file '%s' line %u", series, lineno);
		r = patches_push(v, n, p, err);
		if (r < 0)
			return r;
	}
	return 0;
}

int kernel_spec_from_json(json_object *spec, const char *base_dir, struct kernel_spec **ret,
			  struct sl_error *err)
{
	if (!spec || !json_object_is_type(spec, json_type_object))
		return error_set_path(err, ERR_INVALID, "$",
				      "A kernel spec must be a JSON object.");
	_cleanup_(kernel_spec_freep) struct kernel_spec *s = calloc(1, sizeof(*s));
	if (!s)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	size_t n = 0;
	int r;

	json_object_object_foreach(spec, key, val)
	{
		if (strcmp(key, "source") == 0) {
			if (!json_object_is_type(val, json_type_string))
				return error_set_path(
				    err, ERR_INVALID, "$.source",
				    "The kernel spec's 'source' must be a string.");
			const char *src = json_object_get_string(val);
			if (strncmp(src, "tarball:", 8) == 0 && src[8] != '/') {
				/* relative tarball paths are relative to the spec */
				_cleanup_free_ char *abs = NULL;
				r = resolve_file(base_dir, src + 8, "$.source", &abs, err);
				if (r < 0)
					return r;
				if (asprintf(&s->source, "tarball:%s", abs) < 0)
					return error_set(err, ERR_INTERNAL, ENOMEM,
							 "Out of memory.");
			} else if (!(s->source = strdup(src)))
				return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		} else if (strcmp(key, "patches") == 0) {
			if (!json_object_is_type(val, json_type_array))
				return error_set_path(err, ERR_INVALID, "$.patches",
						      "The kernel spec's 'patches' must be an "
						      "array of paths.");
			size_t len = json_object_array_length(val);
			for (size_t i = 0; i < len; i++) {
				json_object *e = json_object_array_get_idx(val, i);
				char field[64];
				snprintf(field, sizeof(field), "$.patches[%zu]", i);
				if (!json_object_is_type(e, json_type_string))
					return error_set_path(err, ERR_INVALID, field,
							      "'%s' must be a path string.", field);
				char *p = NULL;
				r = resolve_file(base_dir, json_object_get_string(e), field, &p,
						 err);
				if (r < 0)
					return r;
				r = patches_push(&s->patches, &n, p, err);
				if (r < 0)
					return r;
			}
		} else if (strcmp(key, "series") == 0) {
			if (!json_object_is_type(val, json_type_string))
				return error_set_path(err, ERR_INVALID, "$.series",
						      "The kernel spec's 'series' must be a path.");
			_cleanup_free_ char *series = NULL;
			r = resolve_file(base_dir, json_object_get_string(val), "$.series", &series,
					 err);
			if (r < 0)
				return r;
			r = series_read(series, &s->patches, &n, err);
			if (r < 0)
				return r;
		} else if (strcmp(key, "config") == 0) {
			if (!json_object_is_type(val, json_type_string))
				return error_set_path(err, ERR_INVALID, "$.config",
						      "The kernel spec's 'config' must be a path.");
			r = resolve_file(base_dir, json_object_get_string(val), "$.config",
					 &s->config, err);
			if (r < 0)
				return r;
		} else
			return error_set_path(err, ERR_INVALID, key,
					      "Unknown field '%s' in the kernel spec (known: "
					      "source, patches, series, config).",
					      key);
	}
	if (!s->source)
		return error_set_path(err, ERR_INVALID, "$.source",
				      "The kernel spec has no 'source'.");
	if (!s->config)
		return error_set_path(err, ERR_INVALID, "$.config",
				      "The kernel spec has no 'config' fragment.");
	if (!s->patches) {
		s->patches = calloc(1, sizeof(char *));
		if (!s->patches)
			return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	}
	*ret = TAKE_PTR(s);
	return 0;
}

/* ---- sources ---- */

enum source_kind { SOURCE_DEBIAN, SOURCE_TARBALL, SOURCE_GIT };

struct source {
	enum source_kind kind;
	char path[PATH_MAX]; /* the tarball or the git tree */
	char ref[256];	     /* git only */
	char identity[512];  /* what the key covers: kind + content hash or commit */
	char tree_id[17];    /* 16 hex digits of sha256(identity): trees/<tree_id>/ */
};

static bool name_ok(const char *s, const char *extra)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr(extra, *s)))
			return false;
	return true;
}

static int source_parse(const char *src, struct source *out, struct sl_error *err)
{
	memset(out, 0, sizeof(*out));
	if (strncmp(src, "debian:", 7) == 0) {
		const char *pkg = src + 7;
		/* only Debian's linux-source-X.Y packages: the path is derived from it */
		if (strncmp(pkg, "linux-source-", 13) != 0 || !name_ok(pkg + 13, ".") ||
		    strlen(pkg) > 64)
			return error_set_path(err, ERR_INVALID, "$.source",
					      "Kernel source '%s' is not a Debian linux-source "
					      "package (e.g. 'debian:linux-source-6.1').",
					      src);
		out->kind = SOURCE_DEBIAN;
		snprintf(out->path, sizeof(out->path), "/usr/src/%s.tar.xz", pkg);
		if (!fs_exists(out->path))
			return error_set_path(err, ERR_NOT_FOUND, "$.source",
					      "Kernel source '%s' needs '%s': install the Debian "
					      "package '%s'.",
					      src, out->path, pkg);
	} else if (strncmp(src, "tarball:", 8) == 0) {
		out->kind = SOURCE_TARBALL;
		if (src[8] != '/' || strlen(src + 8) >= sizeof(out->path))
			return error_set_path(
			    err, ERR_INVALID, "$.source",
			    "Kernel source '%s' must name an absolute tarball path.", src);
		snprintf(out->path, sizeof(out->path), "%s", src + 8);
		if (!fs_exists(out->path))
			return error_set_path(err, ERR_NOT_FOUND, "$.source",
					      "Kernel source tarball '%s' does not exist.",
					      out->path);
	} else if (strncmp(src, "git:", 4) == 0) {
		out->kind = SOURCE_GIT;
		const char *at = strrchr(src + 4, '@');
		if (src[4] != '/' || !at || (size_t)(at - (src + 4)) >= sizeof(out->path) ||
		    strlen(at + 1) >= sizeof(out->ref) || !name_ok(at + 1, "._-/^~") ||
		    at[1] == '-')
			return error_set_path(
			    err, ERR_INVALID, "$.source",
			    "Kernel source '%s' must look like 'git:/path/to/tree@ref'.", src);
		memcpy(out->path, src + 4, (size_t)(at - (src + 4)));
		snprintf(out->ref, sizeof(out->ref), "%s", at + 1);
	} else
		return error_set_path(err, ERR_INVALID, "$.source",
				      "Kernel source '%s' is not one of 'debian:PACKAGE', "
				      "'tarball:PATH' or 'git:PATH@REF'.",
				      src);
	return 0;
}

/* sha256 of a tarball, remembered under <cache>/sources/ by path, size and
 * mtime: hashing 130 MB on every request would cost about a second. */
static int tarball_sha256(const char *cache_dir, const char *path, char out[HASH_HEX_LEN],
			  struct sl_error *err)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return error_set(err, ERR_NOT_FOUND, errno,
				 "Cannot stat the kernel source '%s': %s.", path, strerror(errno));
	char stamp[128];
	snprintf(stamp, sizeof(stamp), "%lld %lld.%09ld", (long long)st.st_size,
		 (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	char ph[HASH_HEX_LEN];
	hash_buf_hex(path, strlen(path), ph);
	_cleanup_free_ char *dir = fs_path_join(cache_dir, "sources");
	_cleanup_free_ char *memo = NULL;
	if (asprintf(&memo, "%s/%s", dir, ph) < 0)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	_cleanup_free_ char *old = NULL;
	struct sl_error ignored;
	if (fs_read_file(memo, 4096, &old, NULL, &ignored) == 0) {
		/* "<stamp>\n<sha256>\n" */
		size_t sl = strlen(stamp);
		if (strncmp(old, stamp, sl) == 0 && old[sl] == '\n' && strlen(old + sl + 1) >= 64) {
			memcpy(out, old + sl + 1, 64);
			out[64] = '\0';
			return 0;
		}
	}
	int r = hash_file_hex(path, out, err);
	if (r < 0)
		return r;
	r = fs_mkdir_p(dir, err);
	if (r < 0)
		return r;
	_cleanup_free_ char *text = NULL;
	if (asprintf(&text, "%s\n%s\n", stamp, out) < 0)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	return fs_write_file_atomic(memo, text, strlen(text), err);
}

static int source_identify(const char *cache_dir, struct source *src, struct sl_error *err)
{
	char h[HASH_HEX_LEN];
	int r;
	switch (src->kind) {
	case SOURCE_DEBIAN:
	case SOURCE_TARBALL:
		r = tarball_sha256(cache_dir, src->path, h, err);
		if (r < 0)
			return r;
		snprintf(src->identity, sizeof(src->identity), "tarball-sha256:%s", h);
		break;
	case SOURCE_GIT: {
		char rev[300];
		snprintf(rev, sizeof(rev), "%s^{commit}", src->ref);
		char *const argv[] = {"git",	  "-C",	     src->path, "rev-parse",
				      "--verify", "--quiet", rev,	NULL};
		struct cmd_opts o = {.log_fd = -1, .capture_max = 4096, .timeout_s = 60};
		_cleanup_free_ char *outp = NULL;
		int ex = 0;
		r = cmd_run(argv, &o, &ex, &outp, err);
		if (r < 0)
			return r;
		size_t len = strspn(outp, "0123456789abcdef");
		if (ex != 0 || (len != 40 && len != 64))
			return error_set_path(err, ERR_NOT_FOUND, "$.source",
					      "Git ref '%s' does not name a commit in '%s'.",
					      src->ref, src->path);
		outp[len] = '\0';
		snprintf(src->identity, sizeof(src->identity), "git-commit:%s", outp);
		break;
	}
	}
	hash_buf_hex(src->identity, strlen(src->identity), h);
	memcpy(src->tree_id, h, 16);
	src->tree_id[16] = '\0';
	return 0;
}

/* ---- the key ---- */

static pthread_mutex_t compiler_lock = PTHREAD_MUTEX_INITIALIZER;
static char compiler_memo[256];

static int compiler_version(char out[256], struct sl_error *err)
{
	if (test_hooks.compiler_version) {
		snprintf(out, 256, "%s", test_hooks.compiler_version);
		return 0;
	}
	pthread_mutex_lock(&compiler_lock);
	if (!compiler_memo[0]) {
		char *const argv[] = {"gcc", "--version", NULL};
		struct cmd_opts o = {.log_fd = -1, .capture_max = 4096, .timeout_s = 30};
		_cleanup_free_ char *outp = NULL;
		int ex = 0;
		int r = cmd_run(argv, &o, &ex, &outp, err);
		if (r >= 0 && ex != 0)
			r = error_set(err, ERR_INFRA, EIO, "'gcc --version' failed (exit %d).", ex);
		if (r < 0) {
			pthread_mutex_unlock(&compiler_lock);
			return r;
		}
		outp[strcspn(outp, "\n")] = '\0';
		snprintf(compiler_memo, sizeof(compiler_memo), "%s", outp);
	}
	snprintf(out, 256, "%s", compiler_memo);
	pthread_mutex_unlock(&compiler_lock);
	return 0;
}

static int file_sha256_bounded(const char *path, size_t max, const char *what,
			       char out[HASH_HEX_LEN], struct sl_error *err)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return error_set(err, ERR_NOT_FOUND, errno, "Cannot read %s '%s': %s.", what, path,
				 strerror(errno));
	if ((unsigned long long)st.st_size > max)
		return error_set(err, ERR_TOO_LARGE, EFBIG, "The %s '%s' is larger than %zu bytes.",
				 what, path, max);
	return hash_file_hex(path, out, err);
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* The key, plus what meta.json records about the inputs. */
struct key_inputs {
	struct source src;
	char compiler[256];
	char config_sha[HASH_HEX_LEN];
	size_t npatches;
	char (*patch_sha)[HASH_HEX_LEN];
	char key[HASH_HEX_LEN];
};

static void key_inputs_done(struct key_inputs *k)
{
	free(k->patch_sha);
	k->patch_sha = NULL;
}

static int key_compute(const char *cache_dir, const struct kernel_spec *s, struct key_inputs *k,
		       struct sl_error *err)
{
	memset(k, 0, sizeof(*k));
	int r = source_parse(s->source, &k->src, err);
	if (r < 0)
		return r;
	r = source_identify(cache_dir, &k->src, err);
	if (r < 0)
		return r;
	r = compiler_version(k->compiler, err);
	if (r < 0)
		return r;
	r = file_sha256_bounded(s->config, KBUILD_MAX_CONFIG_BYTES, "config fragment",
				k->config_sha, err);
	if (r < 0)
		return r;
	for (char **p = s->patches; p && *p; p++)
		k->npatches++;
	k->patch_sha = calloc(k->npatches + 1, sizeof(*k->patch_sha));
	if (!k->patch_sha)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	struct hash_ctx *h = hash_new();
	hash_update_str(h, KBUILD_KEY_VERSION);
	hash_update_str(h, k->src.identity);
	hash_update_str(h, k->compiler);
	hash_update_str(h, k->config_sha);
	char count[32];
	snprintf(count, sizeof(count), "%zu", k->npatches);
	hash_update_str(h, count);
	for (size_t i = 0; i < k->npatches; i++) {
		r = file_sha256_bounded(s->patches[i], KBUILD_MAX_PATCH_BYTES, "patch",
					k->patch_sha[i], err);
		if (r < 0) {
			hash_free(h);
			return r;
		}
		hash_update_str(h, k->patch_sha[i]);
	}
	hash_final_hex(h, k->key);
	return 0;
}

int kbuild_key_in(const char *cache_dir, const struct kernel_spec *s, char ret_key[65],
		  struct sl_error *err)
{
	_cleanup_free_ char *def = cache_dir ? NULL : fs_default_cache_dir();
	struct key_inputs k;
	int r = key_compute(cache_dir ? cache_dir : def, s, &k, err);
	if (r >= 0)
		memcpy(ret_key, k.key, HASH_HEX_LEN);
	key_inputs_done(&k);
	return r;
}

int kbuild_key(const struct kernel_spec *s, char ret_key[65], struct sl_error *err)
{
	return kbuild_key_in(NULL, s, ret_key, err);
}

/* ---- small file helpers ---- */

static int copy_file(const char *from, const char *to, struct sl_error *err)
{
	_cleanup_close_ int in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return error_set(err, ERR_INTERNAL, errno, "Cannot open '%s': %s.", from,
				 strerror(errno));
	_cleanup_close_ int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0)
		return error_set(err, ERR_INTERNAL, errno, "Cannot create '%s': %s.", to,
				 strerror(errno));
	char buf[65536];
	for (;;) {
		ssize_t k = read(in, buf, sizeof(buf));
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return error_set(err, ERR_INTERNAL, errno, "Cannot read '%s': %s.", from,
					 strerror(errno));
		if (k == 0)
			break;
		for (ssize_t off = 0; off < k;) {
			ssize_t w = write(out, buf + off, (size_t)(k - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				return error_set(err, ERR_INTERNAL, errno, "Cannot write '%s': %s.",
						 to, strerror(errno));
			off += w;
		}
	}
	return 0;
}

static int write_text(const char *path, const char *text, struct sl_error *err)
{
	return fs_write_file_atomic(path, text, strlen(text), err);
}

/* The last-used stamp that LRU eviction sorts by. */
static void touch_used(const char *dir)
{
	_cleanup_free_ char *p = fs_path_join(dir, "last-used");
	int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0) {
		futimens(fd, NULL);
		close(fd);
	}
}

struct build_ctx;
static void build_log(struct build_ctx *b, const char *fmt, ...) _printf_(2, 3);

/* Takes an exclusive flock on path, polling so that a cancel can stop the
 * wait; says once in the log (b may be NULL) that it waits. */
static int lock_take(const char *path, const struct kbuild_opts *o, struct build_ctx *b,
		     int *ret_fd, struct sl_error *err)
{
	bool said = false;
	_cleanup_close_ int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return error_set(err, ERR_INTERNAL, errno, "Cannot open the lock '%s': %s.", path,
				 strerror(errno));
	for (;;) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			break;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return error_set(err, ERR_INTERNAL, errno, "Cannot lock '%s': %s.", path,
					 strerror(errno));
		if (b && !said) {
			build_log(b, "waiting for another build holding '%s'", path);
			said = true;
		}
		if (o && o->cancelled && o->cancelled(o->userdata))
			return error_set(err, ERR_CANCELLED, ECANCELED,
					 "Cancelled while waiting for the lock '%s'.", path);
		usleep(200 * 1000);
	}
	*ret_fd = TAKE_FD(fd);
	return 0;
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

/* Loads a complete artifact directory; -ENOENT when it is not (yet) there. */
static int artifact_load(const char *dir, const char *key, struct kbuild_artifact **ret,
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
	_cleanup_free_ char *text = NULL;
	int r = fs_read_file(a->meta_path, 1024 * 1024, &text, NULL, err);
	if (r < 0)
		return r;
	a->meta = json_tokener_parse(text);
	if (!a->meta || !json_object_is_type(a->meta, json_type_object))
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
static void cache_evict(const char *kernels, const char *keep, unsigned long long max)
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

/* ---- the real build ---- */

struct build_ctx {
	const struct kbuild_opts *o;
	const struct kernel_spec *s;
	const struct key_inputs *k;
	const char *cache_dir;
	char *tree, *src, *obj;
	int log_fd;		/* the artifact's build.log */
	unsigned long objects;	/* compiled so far in this make */
	unsigned long estimate; /* expected objects for a full build */
	double percent;
	char last_error[512];
	char source_version[64];
};

static void build_log(struct build_ctx *b, const char *fmt, ...) _printf_(2, 3);
static void build_log(struct build_ctx *b, const char *fmt, ...)
{
	char line[1040] = "schedlab: ";
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line + 10, sizeof(line) - 10, fmt, ap);
	va_end(ap);
	if (b->log_fd >= 0)
		dprintf(b->log_fd, "%s\n", line);
	if (b->o->log_fd >= 0)
		dprintf(b->o->log_fd, "%s\n", line);
	if (b->o->progress)
		b->o->progress(b->o->userdata, b->percent, line);
}

static void build_on_line(void *ud, const char *line)
{
	struct build_ctx *b = ud;
	if (b->o->log_fd >= 0)
		dprintf(b->o->log_fd, "%s\n", line);
	if (strncmp(line, "  CC ", 5) == 0 || strncmp(line, "  AS ", 5) == 0) {
		b->objects++;
		double p = 100.0 * (double)b->objects / (double)(b->estimate ? b->estimate : 1);
		b->percent = p > 99.0 ? 99.0 : p;
	}
	if (strstr(line, "error:") || strstr(line, "Error ") || strstr(line, "*** "))
		if (!b->last_error[0] || strstr(line, "error:"))
			snprintf(b->last_error, sizeof(b->last_error), "%s", line);
	if (b->o->progress)
		b->o->progress(b->o->userdata, b->percent, line);
}

static int build_cancelled(void *ud)
{
	struct build_ctx *b = ud;
	return b->o->cancelled ? b->o->cancelled(b->o->userdata) : 0;
}

/* Runs one step; its output goes to build.log (and the caller's log). */
static int build_run(struct build_ctx *b, char *const argv[], const char *cwd, int timeout_s,
		     int *ret_exit, char **ret_output, struct sl_error *err)
{
	_cleanup_free_ char *ccache_dir = fs_path_join(b->cache_dir, "ccache");
	_cleanup_free_ char *e1 = NULL, *e2 = NULL;
	if (asprintf(&e1, "CCACHE_DIR=%s", ccache_dir) < 0 ||
	    asprintf(&e2, "CCACHE_BASEDIR=%s", b->cache_dir) < 0)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	/* Fixed build identity: uname -v does not change between identical builds. */
	char *env[] = {e1,
		       e2,
		       "KBUILD_BUILD_USER=schedlab",
		       "KBUILD_BUILD_HOST=schedlab",
		       "KBUILD_BUILD_TIMESTAMP=schedlab",
		       "LC_ALL=C",
		       NULL};
	struct cmd_opts co = {
	    .cwd = cwd,
	    .env_extra = env,
	    .timeout_s = timeout_s,
	    .log_fd = b->log_fd,
	    .capture_max = ret_output ? 64 * 1024 : 0,
	    .on_line = build_on_line,
	    .userdata = b,
	    .cancelled = build_cancelled,
	};
	return cmd_run(argv, &co, ret_exit, ret_output, err);
}

static int read_source_version(struct build_ctx *b, struct sl_error *err)
{
	_cleanup_free_ char *mk = fs_path_join(b->src, "Makefile");
	_cleanup_free_ char *text = NULL;
	int r = fs_read_file(mk, 1024 * 1024, &text, NULL, err);
	if (r < 0)
		return error_prefix(err, "The kernel source has no readable top Makefile");
	long v[3] = {-1, -1, -1};
	const char *names[3] = {"VERSION = ", "PATCHLEVEL = ", "SUBLEVEL = "};
	for (int i = 0; i < 3; i++) {
		for (char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
			if (strncmp(p, names[i], strlen(names[i])) == 0) {
				v[i] = strtol(p + strlen(names[i]), NULL, 10);
				break;
			}
		if (v[i] < 0)
			return error_set(err, ERR_BUILD, EINVAL,
					 "The kernel source's Makefile has no '%.*s' line.",
					 (int)strlen(names[i]) - 3, names[i]);
	}
	snprintf(b->source_version, sizeof(b->source_version), "%ld.%ld.%ld", v[0], v[1], v[2]);
	return 0;
}

/* Extracts the source into tree/src (and starts an empty tree/obj). A fresh
 * tree always gets a fresh obj: tar restores old mtimes, and make would keep
 * objects built from files that differ. */
static int tree_extract(struct build_ctx *b, struct sl_error *err)
{
	struct sl_error ignored;
	_cleanup_free_ char *tmp = fs_path_join(b->tree, "src.tmp");
	_cleanup_free_ char *applied = fs_path_join(b->tree, "applied");
	fs_rm_rf(b->src, &ignored);
	fs_rm_rf(b->obj, &ignored);
	fs_rm_rf(applied, &ignored);
	int r = fs_rm_rf(tmp, err);
	if (r < 0)
		return r;
	r = fs_mkdir_p(tmp, err);
	if (r < 0)
		return r;
	const struct source *src = &b->k->src;
	int ex = 0;
	build_log(b, "extracting '%s'", src->kind == SOURCE_GIT ? src->ref : src->path);
	if (src->kind == SOURCE_GIT) {
		_cleanup_free_ char *tar = fs_path_join(b->tree, "git-archive.tar");
		_cleanup_free_ char *outopt = NULL;
		if (asprintf(&outopt, "--output=%s", tar) < 0)
			return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		const char *commit = src->identity + strlen("git-commit:");
		char *const a1[] = {"git",	    "-C",   (char *)src->path, "archive",
				    "--format=tar", outopt, (char *)commit,    NULL};
		r = build_run(b, a1, NULL, KBUILD_STEP_TIMEOUT_S, &ex, NULL, err);
		if (r >= 0 && ex != 0)
			r = error_set(err, ERR_BUILD, EIO,
				      "'git archive' of '%s' failed (exit %d).", src->path, ex);
		if (r < 0)
			return r;
		char *const a2[] = {"tar", "-xf", tar, "-C", tmp, NULL};
		r = build_run(b, a2, NULL, KBUILD_STEP_TIMEOUT_S, &ex, NULL, err);
		unlink(tar);
	} else {
		char *const a[] = {
		    "tar", "-xf", (char *)src->path, "-C", tmp, "--strip-components=1", NULL};
		r = build_run(b, a, NULL, KBUILD_STEP_TIMEOUT_S, &ex, NULL, err);
	}
	if (r < 0)
		return r;
	_cleanup_free_ char *mk = fs_path_join(tmp, "Makefile");
	if (ex != 0 || !fs_exists(mk))
		return error_set(err, ERR_BUILD, EIO,
				 "Extracting the kernel source '%s' failed (exit %d) or gave no "
				 "top-level Makefile.",
				 b->s->source, ex);
	if (rename(tmp, b->src) < 0)
		return error_set(err, ERR_INTERNAL, errno, "Cannot rename '%s': %s.", tmp,
				 strerror(errno));
	r = fs_mkdir_p(applied, err);
	if (r < 0)
		return r;
	return fs_mkdir_p(b->obj, err);
}

/* What patch(1) said about a failed (dry) run, as "file 'F' hunk #N FAILED
 * at L" or the reason it gave up. */
static void patch_explain(const char *out, char *buf, size_t len)
{
	char file[256] = "", header_file[256] = "";
	int failed = 0;
	buf[0] = '\0';
	const char *line = out;
	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);
		char l[512];
		snprintf(l, sizeof(l), "%.*s", (int)(n < sizeof(l) - 1 ? n : sizeof(l) - 1), line);
		const char *f = NULL;
		if (strncmp(l, "checking file ", 14) == 0)
			f = l + 14;
		else if (strncmp(l, "patching file ", 14) == 0)
			f = l + 14;
		if (f)
			trunc_printf(file, sizeof(file), "%s", f);
		if (strncmp(l, "|--- ", 5) == 0 || strncmp(l, "|+++ ", 5) == 0) {
			/* the header patch(1) shows for a missing file; strip the a/ b/ */
			const char *p = l + 5;
			const char *slash = strchr(p, '/');
			if (slash && strcmp(p, "/dev/null") != 0) {
				size_t m = strcspn(slash + 1, " \t");
				snprintf(header_file, sizeof(header_file), "%.*s", (int)m,
					 slash + 1);
			}
		}
		int hunk = 0;
		long at = 0;
		if (sscanf(l, "Hunk #%d FAILED at %ld", &hunk, &at) == 2) {
			if (!failed++)
				snprintf(buf, len, "file '%s' hunk #%d FAILED at line %ld", file,
					 hunk, at);
		} else if (strstr(l, "can't find file to patch")) {
			/* patch(1) shows the diff header naming the file after this line */
			header_file[0] = '\0';
		} else if (strncmp(l, "No file to patch.", 17) == 0) {
			if (!failed++)
				snprintf(buf, len,
					 "file '%s' hunk #1: the file does not exist in this tree",
					 header_file[0] ? header_file : "?");
		} else if (strstr(l, "Reversed (or previously applied) patch detected")) {
			if (!failed++)
				snprintf(buf, len,
					 "file '%s' looks already patched (reversed or "
					 "previously applied)",
					 file);
		} else if (strncmp(l, "patch: **** ", 12) == 0 && !buf[0]) {
			failed++;
			snprintf(buf, len, "%s", l + 12);
		}
		line = nl ? nl + 1 : NULL;
	}
	if (failed > 1) {
		size_t u = strlen(buf);
		snprintf(buf + u, len - u, " (%d problems in all)", failed);
	}
	if (!buf[0])
		snprintf(buf, len, "patch(1) failed without saying which hunk");
}

static int applied_list_read(struct build_ctx *b, char ***ret, size_t *ret_n)
{
	_cleanup_free_ char *list = fs_path_join(b->tree, "applied/list");
	_cleanup_free_ char *text = NULL;
	struct sl_error ignored;
	*ret = NULL;
	*ret_n = 0;
	if (fs_read_file(list, 1024 * 1024, &text, NULL, &ignored) < 0)
		return fs_exists(list) ? -EIO : 0;
	char *save = NULL;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (strlen(l) != 64)
			return -EBADMSG;
		char **nv = realloc(*ret, (*ret_n + 2) * sizeof(char *));
		if (!nv)
			return -ENOMEM;
		*ret = nv;
		nv[(*ret_n)++] = strdup(l);
		nv[*ret_n] = NULL;
	}
	return 0;
}

static int applied_list_write(struct build_ctx *b, char **shas, size_t n, struct sl_error *err)
{
	_cleanup_free_ char *list = fs_path_join(b->tree, "applied/list");
	size_t len = n * 65 + 1;
	_cleanup_free_ char *text = calloc(1, len);
	if (!text)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	for (size_t i = 0; i < n; i++) {
		strcat(text, shas[i]);
		strcat(text, "\n");
	}
	return write_text(list, text, err);
}

static char *applied_copy_path(struct build_ctx *b, size_t i)
{
	char name[64];
	trunc_printf(name, sizeof(name), "applied/%04zu.patch", i);
	return fs_path_join(b->tree, name);
}

/* Brings tree/src to pristine + the spec's patches: reverts only the applied
 * patches that differ from the wanted ones (so a change to the last patch
 * rebuilds only what it touches), then applies the rest, each dry-run first. */
static int tree_patch(struct build_ctx *b, struct sl_error *err)
{
	_cleanup_strv_free_ char **have = NULL;
	size_t nhave = 0;
	int r = applied_list_read(b, &have, &nhave);
	if (r < 0) {
		build_log(b, "the patch state of the cached tree is unreadable; extracting again");
		r = tree_extract(b, err);
		if (r < 0)
			return r;
		nhave = 0;
	}
	size_t nwant = b->k->npatches, same = 0;
	while (same < nhave && same < nwant && strcmp(have[same], b->k->patch_sha[same]) == 0)
		same++;
	for (size_t i = nhave; i > same; i--) {
		_cleanup_free_ char *copy = applied_copy_path(b, i - 1);
		char *const argv[] = {"patch",	  "-p1", "-R", "--batch", "--no-backup-if-mismatch",
				      "--silent", "-i",	 copy, NULL};
		int ex = 0;
		r = build_run(b, argv, b->src, KBUILD_STEP_TIMEOUT_S, &ex, NULL, err);
		if (r < 0)
			return r;
		if (ex != 0) {
			build_log(b, "reverting an old patch failed; extracting the source again");
			r = tree_extract(b, err);
			if (r < 0)
				return r;
			same = 0;
			nhave = 0;
			break;
		}
		unlink(copy);
		r = applied_list_write(b, have, i - 1, err);
		if (r < 0)
			return r;
	}
	if (nhave > same)
		nhave = same;
	if (same > 0)
		build_log(b, "reusing %zu already applied patch(es)", same);

	char **shas = calloc(nwant + 1, sizeof(char *));
	if (!shas)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	for (size_t i = 0; i < nwant; i++)
		shas[i] = b->k->patch_sha[i];
	for (size_t i = same; i < nwant; i++) {
		const char *patch = b->s->patches[i];
		_cleanup_free_ char *outp = NULL;
		int ex = 0;
		char *const dry[] = {"patch",	"-p1",	       "--dry-run",
				     "--batch", "--forward",   "--no-backup-if-mismatch",
				     "-i",	(char *)patch, NULL};
		r = build_run(b, dry, b->src, KBUILD_STEP_TIMEOUT_S, &ex, &outp, err);
		if (r < 0)
			goto out;
		if (ex != 0) {
			char why[600];
			patch_explain(outp, why, sizeof(why));
			r = error_set(err, ERR_BUILD, EINVAL,
				      "patch %zu/%zu '%s' does not apply: %s.", i + 1, nwant,
				      base_name(patch), why);
			snprintf(err->code, sizeof(err->code), "patch_does_not_apply");
			build_log(b, "%s", err->message);
			goto out;
		}
		char *const real[] = {
		    "patch", "-p1",	    "--batch", "--forward", "--no-backup-if-mismatch",
		    "-i",    (char *)patch, NULL};
		free(outp);
		outp = NULL;
		r = build_run(b, real, b->src, KBUILD_STEP_TIMEOUT_S, &ex, &outp, err);
		if (r < 0)
			goto out;
		if (ex != 0) {
			/* dry run passed: the tree is now in an unknown state */
			_cleanup_free_ char *list = fs_path_join(b->tree, "applied/list");
			write_text(list, "unknown\n", err);
			r = error_set(err, ERR_BUILD, EIO,
				      "patch %zu/%zu '%s' passed its dry run but failed (exit %d).",
				      i + 1, nwant, base_name(patch), ex);
			goto out;
		}
		_cleanup_free_ char *copy = applied_copy_path(b, i);
		r = copy_file(patch, copy, err);
		if (r < 0)
			goto out;
		r = applied_list_write(b, shas, i + 1, err);
		if (r < 0)
			goto out;
		build_log(b, "patch %zu/%zu '%s' applied", i + 1, nwant, base_name(patch));
	}
	r = 0;
out:
	free(shas);
	return r;
}

struct config_entry {
	char name[128];
	char value[512]; /* "n" for "is not set" */
};

/* One fragment line: "CONFIG_X=value", "# CONFIG_X is not set", a comment or
 * blank; a value may be followed by "# why". Returns 1 for an entry, 0 for
 * nothing, -EINVAL for anything else. */
static int config_parse_line(const char *line, struct config_entry *e)
{
	while (*line == ' ' || *line == '\t')
		line++;
	size_t nlen;
	if (strncmp(line, "# CONFIG_", 9) == 0) {
		nlen = strspn(line + 2,
			      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
		if (nlen >= sizeof(e->name) || strncmp(line + 2 + nlen, " is not set", 11) != 0)
			return 0; /* an ordinary comment that starts with CONFIG_ */
		snprintf(e->name, sizeof(e->name), "%.*s", (int)nlen, line + 2);
		snprintf(e->value, sizeof(e->value), "n");
		return 1;
	}
	if (*line == '#' || *line == '\0' || *line == '\r')
		return 0;
	if (strncmp(line, "CONFIG_", 7) != 0)
		return -EINVAL;
	nlen = strspn(line, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
	if (nlen <= 7 || nlen >= sizeof(e->name) || line[nlen] != '=')
		return -EINVAL;
	snprintf(e->name, sizeof(e->name), "%.*s", (int)nlen, line);
	const char *v = line + nlen + 1, *end;
	if (*v == '"') {
		end = v + 1;
		while (*end && *end != '"') {
			if (*end == '\\' && end[1])
				end++;
			end++;
		}
		if (*end != '"')
			return -EINVAL;
		end++;
	} else
		end = v + strcspn(v, " \t#\r");
	if ((size_t)(end - v) >= sizeof(e->value) || end == v)
		return -EINVAL;
	snprintf(e->value, sizeof(e->value), "%.*s", (int)(end - v), v);
	const char *rest = end + strspn(end, " \t\r");
	if (*rest && *rest != '#')
		return -EINVAL;
	return 1;
}

static int config_parse(const char *text, const char *what, bool strict, struct config_entry **ret,
			size_t *ret_n, struct sl_error *err)
{
	struct config_entry *v = NULL;
	size_t n = 0;
	unsigned lineno = 0;
	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		lineno++;
		char buf[1024];
		if (len >= sizeof(buf)) {
			free(v);
			return error_set(err, ERR_INVALID, EINVAL,
					 "Config '%s' line %u is too long.", what, lineno);
		}
		memcpy(buf, line, len);
		buf[len] = '\0';
		struct config_entry e;
		int r = config_parse_line(buf, &e);
		if (r < 0 && strict) {
			free(v);
			return error_set(err, ERR_INVALID, EINVAL,
					 "Config fragment '%s' line %u is not 'CONFIG_NAME=value' "
					 "or '# CONFIG_NAME is not set': '%.80s'.",
					 what, lineno, buf);
		}
		if (r > 0) {
			if (n >= KBUILD_MAX_CONFIG_LINES * 4) {
				free(v);
				return error_set(err, ERR_TOO_LARGE, E2BIG,
						 "Config '%s' has too many options.", what);
			}
			struct config_entry *nv = realloc(v, (n + 1) * sizeof(*v));
			if (!nv) {
				free(v);
				return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
			}
			v = nv;
			v[n++] = e;
		}
		line = nl ? nl + 1 : NULL;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

static const char *config_lookup(const struct config_entry *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].name, name) == 0)
			return v[i].value;
	return "n";
}

/* tinyconfig, then the fragment on top, then olddefconfig; then every option
 * the fragment asked for must have the asked value. */
static int tree_configure(struct build_ctx *b, struct sl_error *err)
{
	_cleanup_free_ char *frag_text = NULL;
	int r = fs_read_file(b->s->config, KBUILD_MAX_CONFIG_BYTES, &frag_text, NULL, err);
	if (r < 0)
		return r;
	_cleanup_free_ struct config_entry *frag = NULL;
	size_t nfrag = 0;
	r = config_parse(frag_text, base_name(b->s->config), true, &frag, &nfrag, err);
	if (r < 0)
		return r;
	if (nfrag > KBUILD_MAX_CONFIG_LINES)
		return error_set(err, ERR_TOO_LARGE, E2BIG,
				 "Config fragment '%s' has more than %d options.",
				 base_name(b->s->config), KBUILD_MAX_CONFIG_LINES);

	_cleanup_free_ char *oarg = NULL;
	if (asprintf(&oarg, "O=%s", b->obj) < 0)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	int ex = 0;
	build_log(b, "configuring: tinyconfig + '%s' (%zu options)", base_name(b->s->config),
		  nfrag);
	char *const tiny[] = {"make", "-s", oarg, "tinyconfig", NULL};
	r = build_run(b, tiny, b->src, KBUILD_STEP_TIMEOUT_S, &ex, NULL, err);
	if (r >= 0 && ex != 0)
		r = error_set(err, ERR_BUILD, EIO, "'make tinyconfig' failed (exit %d): %s", ex,
			      b->last_error);
	if (r < 0)
		return r;

	/* Merge: the fragment's options replace the same ones in .config. */
	_cleanup_free_ char *dotconfig = fs_path_join(b->obj, ".config");
	_cleanup_free_ char *base = NULL;
	size_t base_len = 0;
	r = fs_read_file(dotconfig, 16 * 1024 * 1024, &base, &base_len, err);
	if (r < 0)
		return r;
	size_t cap = base_len + nfrag * 700 + 64;
	_cleanup_free_ char *merged = malloc(cap);
	if (!merged)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	size_t mlen = 0;
	for (const char *line = base; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) + 1 : strlen(line);
		char buf[1024];
		snprintf(buf, sizeof(buf), "%.*s", (int)(len < sizeof(buf) ? len : sizeof(buf) - 1),
			 line);
		buf[strcspn(buf, "\n")] = '\0';
		struct config_entry e;
		bool replaced = false;
		if (config_parse_line(buf, &e) > 0)
			for (size_t i = 0; i < nfrag; i++)
				if (strcmp(frag[i].name, e.name) == 0) {
					replaced = true;
					break;
				}
		if (!replaced) {
			memcpy(merged + mlen, line, len);
			mlen += len;
			if (line[len - 1] != '\n')
				merged[mlen++] = '\n';
		}
		line = nl ? nl + 1 : NULL;
	}
	for (size_t i = 0; i < nfrag; i++) {
		int k = strcmp(frag[i].value, "n") == 0
			    ? snprintf(merged + mlen, cap - mlen, "# %s is not set\n", frag[i].name)
			    : snprintf(merged + mlen, cap - mlen, "%s=%s\n", frag[i].name,
				       frag[i].value);
		mlen += (size_t)k;
	}
	r = fs_write_file_atomic(dotconfig, merged, mlen, err);
	if (r < 0)
		return r;
	char *const old[] = {"make", "-s", oarg, "olddefconfig", NULL};
	r = build_run(b, old, b->src, KBUILD_STEP_TIMEOUT_S, &ex, NULL, err);
	if (r >= 0 && ex != 0)
		r = error_set(err, ERR_BUILD, EIO, "'make olddefconfig' failed (exit %d): %s", ex,
			      b->last_error);
	if (r < 0)
		return r;

	_cleanup_free_ char *final = NULL;
	r = fs_read_file(dotconfig, 16 * 1024 * 1024, &final, NULL, err);
	if (r < 0)
		return r;
	_cleanup_free_ struct config_entry *got = NULL;
	size_t ngot = 0;
	r = config_parse(final, ".config", false, &got, &ngot, err);
	if (r < 0)
		return r;
	int bad = 0;
	char first[700] = "";
	for (size_t i = 0; i < nfrag; i++) {
		const char *actual = config_lookup(got, ngot, frag[i].name);
		if (strcmp(actual, frag[i].value) == 0)
			continue;
		char asked[700];
		if (strcmp(frag[i].value, "n") == 0)
			snprintf(asked, sizeof(asked), "# %s is not set", frag[i].name);
		else
			snprintf(asked, sizeof(asked), "%s=%s", frag[i].name, frag[i].value);
		char msg[900];
		if (strcmp(actual, "n") == 0)
			trunc_printf(msg, sizeof(msg),
				     "config option '%s' from '%s' was dropped by Kconfig (unmet "
				     "dependencies?)",
				     asked, base_name(b->s->config));
		else
			trunc_printf(msg, sizeof(msg),
				     "config option '%s' from '%s' became '%s=%s' after Kconfig "
				     "(unmet dependencies, a range or a choice?)",
				     asked, base_name(b->s->config), frag[i].name, actual);
		build_log(b, "%s", msg);
		if (!bad++)
			trunc_printf(first, sizeof(first), "%s", msg);
	}
	if (bad) {
		r = error_set(err, ERR_BUILD, EINVAL, "%s%s.", first,
			      bad > 1 ? " (and more: see the build log)" : "");
		snprintf(err->code, sizeof(err->code), "config_option_dropped");
		return r;
	}
	return 0;
}

static int tree_make(struct build_ctx *b, struct sl_error *err)
{
	_cleanup_free_ char *oarg = NULL, *jarg = NULL;
	int jobs = b->o->jobs > 0 ? b->o->jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (jobs < 1)
		jobs = 1;
	if (asprintf(&oarg, "O=%s", b->obj) < 0 || asprintf(&jarg, "-j%d", jobs) < 0)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	_cleanup_free_ char *est_path = fs_path_join(b->tree, "objects");
	_cleanup_free_ char *est = NULL;
	struct sl_error ignored;
	b->estimate = KBUILD_DEFAULT_OBJECTS;
	if (fs_read_file(est_path, 64, &est, NULL, &ignored) == 0 && atol(est) > 100)
		b->estimate = (unsigned long)atol(est);
	b->objects = 0;
	b->percent = 0;
	b->last_error[0] = '\0';
	build_log(b, "building bzImage with %d jobs", jobs);
	/* only a build from an empty object dir is a good estimate for the next cold one */
	_cleanup_free_ char *vmlinux = fs_path_join(b->obj, "vmlinux");
	bool full = !fs_exists(vmlinux);
	char *const argv[] = {"make", oarg, jarg, "CC=ccache gcc", "bzImage", NULL};
	int ex = 0;
	int r = build_run(b, argv, b->src, KBUILD_MAKE_TIMEOUT_S, &ex, NULL, err);
	if (r < 0)
		return r;
	if (ex != 0) {
		r = error_set(err, ERR_BUILD, EIO, "The kernel build failed (make exit %d): %s", ex,
			      b->last_error[0] ? b->last_error : "see the build log");
		snprintf(err->code, sizeof(err->code), "kernel_build_failed");
		return r;
	}
	if (full && b->objects > 100) {
		char n[32];
		snprintf(n, sizeof(n), "%lu\n", b->objects);
		write_text(est_path, n, &ignored);
	}
	b->percent = 100;
	return 0;
}

static int real_build(struct build_ctx *b, const char *out_dir, struct sl_error *err)
{
	/* A malformed fragment fails before the shared tree is touched. */
	_cleanup_free_ char *frag_text = NULL;
	_cleanup_free_ struct config_entry *frag = NULL;
	size_t nfrag = 0;
	int r = fs_read_file(b->s->config, KBUILD_MAX_CONFIG_BYTES, &frag_text, NULL, err);
	if (r < 0)
		return r;
	r = config_parse(frag_text, base_name(b->s->config), true, &frag, &nfrag, err);
	if (r < 0)
		return r;
	_cleanup_free_ char *trees = fs_path_join(b->cache_dir, "trees");
	b->tree = fs_path_join(trees, b->k->src.tree_id);
	b->src = fs_path_join(b->tree, "src");
	b->obj = fs_path_join(b->tree, "obj");
	_cleanup_free_ char *lock = NULL;
	if (asprintf(&lock, "%s.lock", b->tree) < 0)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	r = fs_mkdir_p(b->tree, err);
	if (r < 0)
		return r;
	_cleanup_close_ int lock_fd = -1;
	r = lock_take(lock, b->o, b, &lock_fd, err);
	if (r < 0)
		return r;
	_cleanup_free_ char *mk = fs_path_join(b->src, "Makefile");
	if (!fs_exists(mk)) {
		r = tree_extract(b, err);
		if (r < 0)
			return r;
	} else
		build_log(b, "reusing the source tree '%s'", b->src);
	r = read_source_version(b, err);
	if (r < 0)
		return r;
	r = tree_patch(b, err);
	if (r < 0)
		return r;
	r = tree_configure(b, err);
	if (r < 0)
		return r;
	r = tree_make(b, err);
	if (r < 0)
		return r;
	_cleanup_free_ char *bz = fs_path_join(b->obj, "arch/x86/boot/bzImage");
	_cleanup_free_ char *cfg = fs_path_join(b->obj, ".config");
	_cleanup_free_ char *bz_out = fs_path_join(out_dir, "bzImage");
	_cleanup_free_ char *cfg_out = fs_path_join(out_dir, "config");
	r = copy_file(bz, bz_out, err);
	if (r < 0)
		return r;
	return copy_file(cfg, cfg_out, err);
}

static json_object *meta_new(const struct key_inputs *k, const struct kernel_spec *s,
			     const char *source_version, double seconds)
{
	json_object *m = json_object_new_object();
	json_object_object_add(m, "key", json_object_new_string(k->key));
	json_object_object_add(m, "source", json_object_new_string(s->source));
	json_object_object_add(m, "source_version", json_object_new_string(source_version));
	json_object *pa = json_object_new_array();
	for (size_t i = 0; i < k->npatches; i++) {
		json_object *p = json_object_new_object();
		json_object_object_add(p, "name", json_object_new_string(base_name(s->patches[i])));
		json_object_object_add(p, "sha256", json_object_new_string(k->patch_sha[i]));
		json_object_array_add(pa, p);
	}
	json_object_object_add(m, "patches", pa);
	json_object_object_add(m, "config_sha256", json_object_new_string(k->config_sha));
	json_object_object_add(m, "compiler", json_object_new_string(k->compiler));
	/* one decimal: json-c would otherwise print all 17 digits */
	char secs[32];
	snprintf(secs, sizeof(secs), "%.1f", seconds);
	json_object_object_add(m, "build_seconds", json_object_new_double_s(seconds, secs));
	return m;
}

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int kbuild_build(const struct kbuild_opts *o, const struct kernel_spec *s,
		 struct kbuild_artifact **ret, struct sl_error *err)
{
	static const struct kbuild_opts defaults = {.log_fd = -1};
	if (!o)
		o = &defaults;
	_cleanup_free_ char *cache_dir =
	    o->cache_dir ? strdup(o->cache_dir) : fs_default_cache_dir();
	if (!cache_dir)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	int r = fs_mkdir_p(cache_dir, err);
	if (r < 0)
		return r;
	/* CCACHE_BASEDIR and the tree layout want a canonical path */
	char real[PATH_MAX];
	if (realpath(cache_dir, real)) {
		free(cache_dir);
		cache_dir = strdup(real);
		if (!cache_dir)
			return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	}

	struct key_inputs k;
	r = key_compute(cache_dir, s, &k, err);
	if (r < 0) {
		key_inputs_done(&k);
		return r;
	}
	_cleanup_free_ char *kernels = fs_path_join(cache_dir, "kernels");
	_cleanup_free_ char *dir = fs_path_join(kernels, k.key);
	_cleanup_free_ char *lock = NULL, *tmp = NULL, *failed_log = NULL, *log_path = NULL,
			    *meta_path = NULL;
	_cleanup_close_ int lock_fd = -1, log_fd = -1;
	struct build_ctx b = {.o = o, .s = s, .k = &k, .cache_dir = cache_dir, .log_fd = -1};
	_cleanup_(kbuild_artifact_freep) struct kbuild_artifact *a = NULL;
	_cleanup_json_ json_object *meta = NULL;

	/* The fast path: a complete artifact is renamed into place atomically. */
	r = artifact_load(dir, k.key, &a, err);
	if (r == 0)
		goto hit;
	if (r != -ENOENT)
		goto cleanup;
	r = fs_mkdir_p(kernels, err);
	if (r < 0)
		goto cleanup;
	if (asprintf(&lock, "%s.lock", dir) < 0 || asprintf(&tmp, "%s.tmp", dir) < 0 ||
	    asprintf(&failed_log, "%s.failed.log", dir) < 0) {
		r = error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		goto cleanup;
	}
	r = lock_take(lock, o, NULL, &lock_fd, err);
	if (r < 0)
		goto cleanup;
	/* someone else may have built it while we waited */
	r = artifact_load(dir, k.key, &a, err);
	if (r == 0)
		goto hit;
	if (r != -ENOENT)
		goto cleanup;

	r = fs_rm_rf(tmp, err);
	if (r < 0 || (r = fs_mkdir_p(tmp, err)) < 0)
		goto cleanup;
	log_path = fs_path_join(tmp, "build.log");
	log_fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (log_fd < 0) {
		r = error_set(err, ERR_INTERNAL, errno, "Cannot create '%s': %s.", log_path,
			      strerror(errno));
		goto cleanup;
	}
	b.log_fd = log_fd;
	build_log(&b, "building kernel %s from '%s' with %zu patch(es)", k.key, s->source,
		  k.npatches);
	double t0 = mono_s();
	if (test_hooks.build) {
		r = test_hooks.build(test_hooks.userdata, s, tmp, err);
		snprintf(b.source_version, sizeof(b.source_version), "test");
	} else
		r = real_build(&b, tmp, err);
	if (r < 0) {
		/* keep the log of the failure beside the cache entry for people */
		rename(log_path, failed_log);
		struct sl_error ignored;
		fs_rm_rf(tmp, &ignored);
		goto cleanup;
	}
	build_log(&b, "built in %.1f s", mono_s() - t0);
	meta = meta_new(&k, s, b.source_version, mono_s() - t0);
	meta_path = fs_path_join(tmp, "meta.json");
	const char *text = json_object_to_json_string_ext(meta, JSON_C_TO_STRING_PRETTY |
								    JSON_C_TO_STRING_NOSLASHESCAPE);
	r = write_text(meta_path, text, err);
	if (r < 0)
		goto cleanup;
	if (rename(tmp, dir) < 0) {
		r = error_set(err, ERR_INTERNAL, errno, "Cannot move '%s' into place: %s.", tmp,
			      strerror(errno));
		goto cleanup;
	}
	unlink(failed_log);
	r = artifact_load(dir, k.key, &a, err);
	if (r < 0) {
		if (r == -ENOENT)
			r = error_set(err, ERR_INTERNAL, ENOENT,
				      "The kernel build left no artifact in '%s'.", dir);
		goto cleanup;
	}
	a->cached = false;
	touch_used(dir);
	cache_evict(kernels, k.key, o->cache_max_bytes);
	*ret = TAKE_PTR(a);
	r = 0;
	goto cleanup;
hit:
	a->cached = true;
	touch_used(dir);
	*ret = TAKE_PTR(a);
	r = 0;
cleanup:
	free(b.tree);
	free(b.src);
	free(b.obj);
	key_inputs_done(&k);
	return r;
}
