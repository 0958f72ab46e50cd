/* The cache key of a kernel spec: what the source is (a tarball's sha256, a
 * git commit), the compiler, and the contents of the fragment and the
 * patches in order (see kbuild.h). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kernel/kbuild.h"
#include "kernel/kbuild-internal.h"
#include "util/cmd.h"
#include "util/fs.h"
#include "util/hash.h"

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

static pthread_mutex_t compiler_lock = PTHREAD_MUTEX_INITIALIZER;
static char compiler_memo[256];

/* The first line of `gcc --version`, remembered for the process; a dry run
 * (tests) asks every time so that its answer may change. */
static int compiler_version(char out[256], struct sl_error *err)
{
	bool dry = cmd_dry_run_active();
	pthread_mutex_lock(&compiler_lock);
	if (!compiler_memo[0] || dry) {
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
		snprintf(out, 256, "%s", outp);
		if (!dry)
			snprintf(compiler_memo, sizeof(compiler_memo), "%s", outp);
	} else
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

void kbuild_key_inputs_done(struct key_inputs *k)
{
	free(k->patch_sha);
	k->patch_sha = NULL;
}

int kbuild_source_check(const char *source, struct sl_error *err)
{
	struct source src;
	return source_parse(source, &src, err);
}

int kbuild_key_compute(const char *cache_dir, const struct kernel_spec *s, struct key_inputs *k,
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
	if (s->debug && s->debug_config) {
		r = file_sha256_bounded(s->debug_config, KBUILD_MAX_CONFIG_BYTES,
					"debug config fragment", k->debug_sha, err);
		if (r < 0)
			return r;
	}
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
	/* Only a debug kernel hashes more: every other key stays what it was. */
	if (k->debug_sha[0]) {
		hash_update_str(h, "debug");
		hash_update_str(h, s->debug);
		hash_update_str(h, k->debug_sha);
	}
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
	int r = kbuild_key_compute(cache_dir ? cache_dir : def, s, &k, err);
	if (r >= 0)
		memcpy(ret_key, k.key, HASH_HEX_LEN);
	kbuild_key_inputs_done(&k);
	return r;
}

int kbuild_key(const struct kernel_spec *s, char ret_key[65], struct sl_error *err)
{
	return kbuild_key_in(NULL, s, ret_key, err);
}
