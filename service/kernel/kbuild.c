/* Kernel builds: the orchestration of one build (lock the key, reuse or
 * extract the tree, patch, configure, make, move the artifact into the
 * cache), the top of kernel/'s build files: it calls the files below it
 * (docs/architecture.md, "Inside kernel/"), none calls it. See kbuild.h and
 * docs/kernel-builds.md for the layout under the cache directory. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "kernel/kbuild.h"
#include "kernel/kbuild-internal.h"
#include "kernel/sched_names.h"
#include "util/cmd.h"
#include "util/fs.h"
#include "util/parse.h"
#include "util/sandbox.h"
#include "util/time.h"
#include "proto/utf8.h"

static int write_text(const char *path, const char *text, struct sl_error *err)
{
	return fs_write_file_atomic(path, text, strlen(text), err);
}

void kbuild_failure_clear(struct kbuild_failure *f)
{
	if (!f)
		return;
	free(f->log_excerpt);
	memset(f, 0, sizeof(*f));
}

static int tree_make(struct build_ctx *b, struct sl_error *err)
{
	_cleanup_free_ char *oarg = NULL, *jarg = NULL;
	int jobs = b->o->jobs > 0 ? b->o->jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (jobs < 1)
		jobs = 1;
	if (asprintf(&oarg, "O=%s", kbuild_obj_seen(b)) < 0 || asprintf(&jarg, "-j%d", jobs) < 0)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	/* the estimate of a debug kernel's object directory is its own */
	_cleanup_free_ char *est_path = NULL;
	if (b->s->debug ? asprintf(&est_path, "%s.objects", b->tree.obj_trusted) < 0
			: !(est_path = fs_path_join(b->tree.dir, "objects")))
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	_cleanup_free_ char *est = NULL;
	struct sl_error ignored;
	b->log.estimate = KBUILD_DEFAULT_OBJECTS;
	long objects;
	if (fs_read_file(est_path, 64, &est, NULL, &ignored) == 0) {
		est[strcspn(est, "\n")] = '\0';
		if (parse_int(est, 101, LONG_MAX, &objects) == 0)
			b->log.estimate = (unsigned long)objects;
	}
	b->log.objects = 0;
	b->log.percent = 0;
	b->log.last_error[0] = '\0';
	kbuild_log(&b->log, "building bzImage with %d jobs", jobs);
	/* only a build from an empty object dir is a good estimate for the next cold one */
	_cleanup_free_ char *vmlinux = fs_path_join(b->tree.obj, "vmlinux");
	bool full = !fs_exists(vmlinux);
	char *const argv[] = {"make", oarg, jarg, "CC=ccache gcc", "bzImage", NULL};
	int ex = 0;
	int r = kbuild_run_step(b, KBUILD_SANDBOX_MAKE, argv, b->tree.src, KBUILD_MAKE_TIMEOUT_S,
				&ex, NULL, err);
	if (r < 0)
		return r;
	if (ex != 0) {
		r = error_set(err, ERR_BUILD, EIO, "The kernel build failed (make exit %d): %s", ex,
			      b->log.last_error[0] ? b->log.last_error : "see the build log");
		snprintf(err->code, sizeof(err->code), "build_failed");
		return r;
	}
	/* an untrusted build's count is not the next trusted build's estimate */
	if (full && b->log.objects > 100 && b->tree.obj == b->tree.obj_trusted) {
		char n[32];
		snprintf(n, sizeof(n), "%lu\n", b->log.objects);
		write_text(est_path, n, &ignored);
	}
	b->log.percent = 100;
	return 0;
}

/* An untrusted sandboxed build (kernel_spec.untrusted) starts from a copy of
 * the tree's object directory and makes only in it: whatever its Makefiles
 * plant there (an object with a new mtime that make would take as up to
 * date) goes with the copy, and the directory trusted builds reuse is never
 * bound into its sandbox. The copy keeps mtimes (cp -a), so the build stays
 * incremental; reflinks where the file system has them. */
static int untrusted_obj_copy(struct build_ctx *b, struct sl_error *err)
{
	_cleanup_free_ char *copy = fs_path_join(b->tree.dir, KBUILD_UNTRUSTED_OBJ);
	if (!copy)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	int r = fs_rm_rf(copy, err);
	if (r < 0)
		return r;
	kbuild_log(&b->log, "untrusted input: make runs in a copy of the object directory");
	char *const argv[] = {"cp", "-a", "--reflink=auto", b->tree.obj_trusted, copy, NULL};
	int ex = 0;
	double t0 = time_monotonic_s();
	r = kbuild_run_step(b, KBUILD_ON_HOST, argv, b->tree.dir, KBUILD_STEP_TIMEOUT_S, &ex, NULL,
			    err);
	if (r < 0)
		return r;
	if (ex != 0)
		return error_set(err, ERR_INTERNAL, EIO,
				 "Cannot copy the kernel tree's object directory (cp exit %d).",
				 ex);
	kbuild_log(&b->log, "copied the object directory in %.1f s", time_monotonic_s() - t0);
	b->tree.obj = TAKE_PTR(copy);
	return 0;
}

/* The marker of a complete trusted build (KBUILD_OBJ_COMPLETE) in the
 * object directory trusted builds reuse. */
static char *obj_marker_path(const struct build_ctx *b)
{
	return fs_path_join(b->tree.obj_trusted, KBUILD_OBJ_COMPLETE);
}

/* What the object directory's .config and vmlinux are (mtime and size):
 * every make that links and every configuration changes one of them. */
static void obj_stamp(const struct build_ctx *b, char out[128])
{
	static const char *const files[] = {".config", "vmlinux"};
	size_t n = 0;
	out[0] = '\0';
	for (size_t i = 0; i < 2; i++) {
		_cleanup_free_ char *p = fs_path_join(b->tree.obj_trusted, files[i]);
		struct stat st;
		if (!p || stat(p, &st) < 0)
			n += (size_t)snprintf(out + n, 128 - n, "- ");
		else
			n += (size_t)snprintf(out + n, 128 - n, "%lld.%09ld:%lld ",
					      (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
					      (long long)st.st_size);
	}
}

/* The key the marker holds into key, "" when there is none, it is not a
 * key, or .config or vmlinux changed since it was written (a build that
 * does not keep the marker, such as an older schedlab's or a manual make,
 * made there since). */
static void obj_marker_read(const struct build_ctx *b, char key[HASH_HEX_LEN])
{
	key[0] = '\0';
	_cleanup_free_ char *path = obj_marker_path(b);
	_cleanup_free_ char *text = NULL;
	struct sl_error ignored;
	if (!path || fs_read_file(path, 512, &text, NULL, &ignored) < 0)
		return;
	char stamp[128];
	obj_stamp(b, stamp);
	char *nl = strchr(text, '\n');
	if (!nl || strcmp(nl + 1, stamp) != 0)
		return;
	*nl = '\0';
	if (strlen(text) == HASH_HEX_LEN - 1 &&
	    strspn(text, "0123456789abcdef") == HASH_HEX_LEN - 1)
		memcpy(key, text, HASH_HEX_LEN);
}

/* Patch, configure and make in b->tree.obj for b->s and b->k. When that is the
 * directory trusted builds reuse, its marker goes before anything changes
 * the tree and comes back, naming b->k's key, only after make succeeded: a
 * build that fails or is killed half-way leaves obj/ unmarked. */
static int obj_make(struct build_ctx *b, struct sl_error *err)
{
	bool marks = b->tree.obj == b->tree.obj_trusted;
	_cleanup_free_ char *marker = obj_marker_path(b);
	if (!marker)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	if (marks && unlink(marker) < 0 && errno != ENOENT)
		return error_set(err, ERR_INTERNAL, errno, "Cannot remove '%s': %s.", marker,
				 strerror(errno));
	/* each step's time in the log: where a prefix build's time goes
	 * (docs/kernel-builds.md "Builds for many prefixes") */
	double t0 = time_monotonic_s();
	int r = kernel_tree_patch(b, err);
	if (r < 0)
		return r;
	double t1 = time_monotonic_s();
	r = kernel_config_apply(b, err);
	if (r < 0)
		return r;
	double t2 = time_monotonic_s();
	r = tree_make(b, err);
	if (r < 0)
		return r;
	kbuild_log(&b->log, "steps: patches %.1f s, configuration %.1f s, make bzImage %.1f s",
		   t1 - t0, t2 - t1, time_monotonic_s() - t2);
	if (!marks)
		return r;
	char stamp[128], text[256];
	obj_stamp(b, stamp);
	snprintf(text, sizeof(text), "%s\n%s", b->k->key, stamp);
	return write_text(marker, text, err);
}

/* Before an untrusted build copies the object directory: unless it holds
 * the complete build of the spec's trusted base (kernel_spec.base: the
 * built-in series and config, the kernel other jobs share), that base is
 * built there first, as any trusted build would be. Without this, when the
 * base kernel is a cache hit no trusted build ever runs in the tree, and
 * every untrusted build would recompile in its copy whatever obj/ lacks
 * (up to a whole kernel after a build stopped half-way). "Holds" is the
 * exact key: any other complete build (another trusted patch set, config or
 * compiler) is the base plus a difference each copy would rebuild again;
 * paid once here, it is kept. A base that fails to build (ERR_BUILD) is
 * logged and the untrusted build goes on from obj/ as it is; its own
 * patches decide its status. */
static int obj_refresh_base(struct build_ctx *b, struct sl_error *err)
{
	const struct kernel_spec *base = b->s->base;
	if (!base) {
		kbuild_log(&b->log, "no trusted base kernel known: the copy starts from the object "
				    "directory as it is");
		return 0;
	}
	struct key_inputs bk;
	int r = kbuild_key_compute(b->cache_dir, base, &bk, err);
	if (r < 0)
		goto out;
	char have[HASH_HEX_LEN];
	obj_marker_read(b, have);
	if (strcmp(bk.src.tree_id, b->k->src.tree_id) != 0) {
		kbuild_log(&b->log, "the trusted base kernel has another source: not built first");
		goto out;
	}
	if (strcmp(have, bk.key) == 0) {
		kbuild_log(&b->log, "the object directory holds the complete base kernel %s",
			   bk.key);
		goto out;
	}
	if (have[0])
		kbuild_log(&b->log,
			   "the object directory holds the complete kernel %s, not the base kernel "
			   "%s: building the base there first",
			   have, bk.key);
	else
		kbuild_log(&b->log,
			   "the object directory holds no complete build of the base kernel %s: "
			   "building it there first",
			   bk.key);
	const struct kernel_spec *s = b->s;
	const struct key_inputs *k = b->k;
	b->s = base;
	b->k = &bk;
	double t0 = time_monotonic_s();
	r = obj_make(b, err);
	b->s = s;
	b->k = k;
	if (r == 0)
		kbuild_log(&b->log, "built the base kernel in the object directory in %.1f s",
			   time_monotonic_s() - t0);
	else if (err && err->kind == ERR_BUILD) {
		kbuild_log(&b->log,
			   "the base kernel did not build (%s); going on from the object "
			   "directory as it is",
			   err->message);
		b->failed_patch[0] = '\0';
		b->failed_option[0] = '\0';
		r = 0;
	}
out:
	kbuild_key_inputs_done(&bk);
	return r;
}

static int tree_build(struct build_ctx *b, const char *out_dir, struct sl_error *err)
{
	int r;
	_cleanup_free_ char *mk = fs_path_join(b->tree.src, "Makefile");
	if (!fs_exists(mk)) {
		r = kernel_tree_extract(b, err);
		if (r < 0)
			return r;
	} else {
		kbuild_log(&b->log, "reusing the source tree '%s'", b->tree.src);
		if ((r = fs_mkdir_p(b->tree.obj, err)) < 0)
			return r;
	}
	if (b->sandbox.on) {
		_cleanup_free_ char *ccache = fs_path_join(b->cache_dir, "ccache");
		if (b->sandbox.as_root)
			kbuild_log(&b->log, "patch and make run in a sandbox as uid %d",
				   SANDBOX_UID);
		else
			kbuild_log(&b->log, "patch and make run in a sandbox");
		if ((r = fs_mkdir_p(ccache, err)) < 0 ||
		    (r = kbuild_sandbox_own(&b->sandbox, b->tree.src, err)) < 0 ||
		    (r = kbuild_sandbox_own(&b->sandbox, b->tree.obj, err)) < 0)
			return r;
	} else
		kbuild_log(&b->log, "patch and make run without a sandbox (--no-sandbox)");
	r = kernel_tree_read_version(b, err);
	if (r < 0)
		return r;
	if (b->sandbox.on && b->s->untrusted) {
		if ((r = obj_refresh_base(b, err)) < 0 || (r = untrusted_obj_copy(b, err)) < 0 ||
		    (r = kbuild_sandbox_own(&b->sandbox, b->tree.obj, err)) < 0)
			return r;
	}
	r = obj_make(b, err);
	if (r < 0)
		return r;
	r = kbuild_scx_build(b, out_dir, err);
	if (r < 0)
		return r;
	_cleanup_free_ char *bz_out = fs_path_join(out_dir, "bzImage");
	_cleanup_free_ char *cfg_out = fs_path_join(out_dir, "config");
	r = kbuild_copy_output(&b->sandbox, b->tree.obj, "arch/x86/boot/bzImage", "kernel image",
			       KBUILD_MAX_BZIMAGE_BYTES, bz_out, 0644, err);
	if (r < 0)
		return r;
	return kbuild_copy_output(&b->sandbox, b->tree.obj, ".config", "kernel .config",
				  KBUILD_MAX_DOTCONFIG_BYTES, cfg_out, 0644, err);
}

static int real_build(struct build_ctx *b, const char *out_dir, struct sl_error *err)
{
	/* A malformed fragment fails before the shared tree is touched. */
	_cleanup_free_ struct config_entry *frag = NULL;
	size_t nfrag = 0;
	int r = kernel_config_read_fragment(b->s, &frag, &nfrag, err);
	if (r < 0)
		return r;
	_cleanup_free_ char *trees = fs_path_join(b->cache_dir, "trees");
	_cleanup_close_ int lock_fd = -1;
	r = fs_mkdir_p(trees, err);
	if (r < 0 || (r = kbuild_area_take(b, trees, &lock_fd, err)) < 0)
		return r;
	b->tree.src = fs_path_join(b->tree.dir, "src");
	/* A debug kernel's objects live apart (objs-debug/NAME), so switching
	 * between normal and debug builds of the tree stays incremental on both
	 * sides; a fresh extraction removes them with obj/. */
	if (b->s->debug) {
		_cleanup_free_ char *dbg = fs_path_join(b->tree.dir, KBUILD_DEBUG_OBJS);
		b->tree.obj = fs_path_join(dbg, b->s->debug);
	} else
		b->tree.obj = fs_path_join(b->tree.dir, "obj");
	b->tree.obj_trusted = b->tree.obj;
	b->tree.src_seen = kbuild_area_seen(b, b->tree.src);
	b->tree.obj_trusted_seen = kbuild_area_seen(b, b->tree.obj_trusted);
	if (!b->tree.src || !b->tree.obj || !b->tree.src_seen || !b->tree.obj_trusted_seen)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	r = tree_build(b, out_dir, err);
	/* the copy goes while the tree's lock is still held */
	if (b->tree.obj != b->tree.obj_trusted) {
		struct sl_error ignored;
		fs_rm_rf(b->tree.obj, &ignored);
		free(b->tree.obj);
		b->tree.obj = b->tree.obj_trusted;
	}
	return r;
}

/* Renames the finished build tmp to the cache entry dir. An entry the cache
 * did not load because it lacks its sched_ext schedulers
 * (kbuild_cache_load(): built by an older schedlab) gets them from this
 * build instead; its kernel, of the same key, stays: another job may be
 * booting it. */
static int move_into_place(struct build_ctx *b, const char *tmp, const char *dir, const char *key,
			   struct sl_error *err)
{
	_cleanup_free_ char *scx_new = fs_path_join(tmp, KBUILD_SCX_DIR);
	_cleanup_free_ char *scx_old = fs_path_join(dir, KBUILD_SCX_DIR);
	const char *from = tmp, *to = dir;
	if (fs_exists(dir) && fs_exists(scx_new) && !fs_exists(scx_old)) {
		kbuild_log(&b->log, "adding the sched_ext schedulers to the cached kernel %s", key);
		from = scx_new;
		to = scx_old;
	}
	if (rename(from, to) < 0)
		return error_set(err, ERR_INTERNAL, errno, "Cannot move '%s' into place: %s.", from,
				 strerror(errno));
	if (from != tmp) {
		struct sl_error ignored;
		fs_rm_rf(tmp, &ignored);
	}
	return 0;
}

static void kbuild_artifact_freep(struct kbuild_artifact **a)
{
	kbuild_artifact_free(*a);
}

static json_object *meta_new(const struct build_ctx *b, double seconds)
{
	const struct key_inputs *k = b->k;
	const struct kernel_spec *s = b->s;
	const char *source_version = b->source_version;
	json_object *m = json_object_new_object();
	json_object_object_add(m, "key", json_object_new_string(k->key));
	json_object_object_add(m, "source", json_object_new_string(s->source));
	json_object_object_add(m, "source_version", json_object_new_string(source_version));
	/* the commit a git: source's ref named when it was built: the ref may
	 * move later, and the report must name what was really built */
	if (strncmp(k->src.identity, "git-commit:", 11) == 0)
		json_object_object_add(m, "source_commit",
				       json_object_new_string(k->src.identity + 11));
	json_object *pa = json_object_new_array();
	for (size_t i = 0; i < k->npatches; i++) {
		json_object *p = json_object_new_object();
		json_object_object_add(p, "name",
				       json_object_new_string(kbuild_base_name(s->patches[i])));
		json_object_object_add(p, "sha256", json_object_new_string(k->patch_sha[i]));
		json_object_array_add(pa, p);
	}
	json_object_object_add(m, "patches", pa);
	json_object_object_add(m, "config_sha256", json_object_new_string(k->config_sha));
	if (s->debug && k->debug_sha[0]) {
		json_object_object_add(m, "debug", json_object_new_string(s->debug));
		json_object_object_add(m, "debug_config_sha256",
				       json_object_new_string(k->debug_sha));
	}
	json_object_object_add(m, "compiler", json_object_new_string(k->compiler));
	/* one decimal: json-c would otherwise print all 17 digits */
	char secs[32];
	snprintf(secs, sizeof(secs), "%.1f", seconds);
	json_object_object_add(m, "build_seconds", json_object_new_double_s(seconds, secs));
	/* what held the sandboxed steps: the last one's (make bzImage) */
	if (b->sandbox.report.ran)
		json_object_object_add(m, "sandbox",
				       sandbox_report_json(&b->sandbox.report, b->sandbox.as_root));
	return m;
}

/* A kernel cached before builds kept the sched name lists (sched_names.h)
 * gets them from its tree when the tree holds exactly its patches, without
 * waiting for the tree's lock; they are written into its meta.json. Best
 * effort: otherwise its variants are not checked. */
static void names_backfill(const char *cache_dir, const struct key_inputs *k,
			   struct kbuild_artifact *a)
{
	if (!a->meta || json_object_object_get_ex(a->meta, "sched_features", NULL))
		return;
	_cleanup_free_ char *trees = fs_path_join(cache_dir, "trees");
	_cleanup_free_ char *tree = fs_path_join(trees, k->src.tree_id);
	_cleanup_free_ char *src = fs_path_join(tree, "src");
	_cleanup_free_ char *lock = NULL;
	if (asprintf(&lock, "%s.lock", tree) < 0)
		return;
	_cleanup_close_ int fd = open(lock, O_RDWR | O_CLOEXEC);
	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0 || !kbuild_tree_has_patches(tree, k))
		return;
	struct sl_error ignored;
	if (sched_names_from_tree(src, a->meta, &ignored) < 0 ||
	    !json_object_object_get_ex(a->meta, "sched_features", NULL))
		return;
	const char *text = json_object_to_json_string_ext(
	    a->meta, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
	fs_write_file_atomic(a->meta_path, text, strlen(text), &ignored);
}

/* The cache directory of o (or the default), created private and made
 * canonical: CCACHE_BASEDIR and the tree layout want a canonical path. */
static int cache_dir_open(const struct kbuild_opts *o, char **ret, struct sl_error *err)
{
	_cleanup_free_ char *cache_dir =
	    o->cache_dir ? strdup(o->cache_dir) : fs_default_cache_dir();
	if (!cache_dir)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	int r = fs_mkdir_private(cache_dir, err);
	if (r < 0)
		return r;
	char real[PATH_MAX];
	if (realpath(cache_dir, real)) {
		free(cache_dir);
		cache_dir = strdup(real);
		if (!cache_dir)
			return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	}
	*ret = TAKE_PTR(cache_dir);
	return 0;
}

/* A build failure (err of kind ERR_BUILD) made what callers rely on: one of
 * the three statuses in err->code, a sanitized message, and o->failure
 * filled in when the caller asked for it. */
static void failure_report(const struct build_ctx *b, struct sl_error *err)
{
	const struct kbuild_opts *o = b->o;
	if (!err->code[0])
		snprintf(err->code, sizeof(err->code), "build_failed");
	kbuild_log_sanitize_error(err);
	if (!o->failure)
		return;
	kbuild_failure_clear(o->failure);
	snprintf(o->failure->key, sizeof(o->failure->key), "%s", b->k->key);
	snprintf(o->failure->patch, sizeof(o->failure->patch), "%s", b->failed_patch);
	snprintf(o->failure->option, sizeof(o->failure->option), "%s", b->failed_option);
	o->failure->log_excerpt = kbuild_tail_excerpt(&b->log);
}

static void kbuild_tree_done(struct kbuild_tree *t)
{
	free(t->dir);
	free(t->src);
	free(t->obj);
	free(t->dir_seen);
	free(t->src_seen);
	free(t->obj_trusted_seen);
}

int kbuild_build(const struct kbuild_opts *o, const struct kernel_spec *s,
		 struct kbuild_artifact **ret, struct sl_error *err)
{
	static const struct kbuild_opts defaults = {.log_fd = -1};
	if (!o)
		o = &defaults;
	_cleanup_free_ char *cache_dir = NULL;
	int r = cache_dir_open(o, &cache_dir, err);
	if (r < 0)
		return r;

	struct key_inputs k;
	r = kbuild_key_compute(cache_dir, s, &k, err);
	if (r < 0) {
		kbuild_key_inputs_done(&k);
		return r;
	}
	_cleanup_free_ char *kernels = fs_path_join(cache_dir, "kernels");
	_cleanup_free_ char *dir = fs_path_join(kernels, k.key);
	_cleanup_free_ char *lock = NULL, *tmp = NULL, *failed_log = NULL, *log_path = NULL,
			    *meta_path = NULL;
	_cleanup_close_ int lock_fd = -1, log_fd = -1;
	struct build_ctx b = {.o = o,
			      .s = s,
			      .k = &k,
			      .cache_dir = cache_dir,
			      .log = {.o = o, .fd = -1},
			      .sandbox = {.on = !o->no_sandbox, .as_root = geteuid() == 0}};
	_cleanup_(kbuild_artifact_freep) struct kbuild_artifact *a = NULL;
	_cleanup_json_ json_object *meta = NULL;

	/* The fast path: a complete artifact is renamed into place atomically. */
	r = kbuild_cache_load(dir, k.key, &a, err);
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
	/* a dry run (util/cmd.h) runs nothing, so it needs no bwrap */
	if (b.sandbox.on && !cmd_dry_run_active() &&
	    (r = sandbox_check("build with --no-sandbox (the service: \"build_sandbox\": false)",
			       err)) < 0)
		goto cleanup;
	r = kbuild_lock_take(lock, o, NULL, &lock_fd, err);
	if (r < 0)
		goto cleanup;
	/* someone else may have built it while we waited */
	r = kbuild_cache_load(dir, k.key, &a, err);
	if (r == 0)
		goto hit;
	if (r != -ENOENT)
		goto cleanup;

	kbuild_cache_evict(cache_dir, k.key, o->cache_max_bytes); /* room for a tree first */
	if ((r = fs_rm_rf(tmp, err)) < 0 || (r = fs_mkdir_p(tmp, err)) < 0)
		goto cleanup;
	log_path = fs_path_join(tmp, "build.log");
	log_fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (log_fd < 0) {
		r = error_set(err, ERR_INTERNAL, errno, "Cannot create '%s': %s.", log_path,
			      strerror(errno));
		goto cleanup;
	}
	b.log.fd = log_fd;
	kbuild_log(&b.log, "building kernel %s from '%s' with %zu patch(es)", k.key, s->source,
		   k.npatches);
	double t0 = time_monotonic_s();
	r = real_build(&b, tmp, err);
	if (r < 0) {
		if (err && err->kind == ERR_BUILD)
			failure_report(&b, err);
		/* keep the log of the failure beside the cache entry for people */
		rename(log_path, failed_log);
		struct sl_error ignored;
		fs_rm_rf(tmp, &ignored);
		goto cleanup;
	}
	kbuild_log(&b.log, "built in %.1f s", time_monotonic_s() - t0);
	meta = meta_new(&b, time_monotonic_s() - t0);
	/* the names a variant's features and sched_tunables are checked against */
	struct sl_error names_err = {0};
	if (sched_names_from_tree(b.tree.src, meta, &names_err) < 0)
		kbuild_log(&b.log, "the sched feature and tunable names were not read: %s",
			   names_err.message);
	meta_path = fs_path_join(tmp, "meta.json");
	const char *text = json_object_to_json_string_ext(meta, JSON_C_TO_STRING_PRETTY |
								    JSON_C_TO_STRING_NOSLASHESCAPE);
	if ((r = write_text(meta_path, text, err)) < 0 ||
	    (r = move_into_place(&b, tmp, dir, k.key, err)) < 0)
		goto cleanup;
	unlink(failed_log);
	r = kbuild_cache_load(dir, k.key, &a, err);
	if (r < 0) {
		if (r == -ENOENT)
			r = error_set(err, ERR_INTERNAL, ENOENT,
				      "The kernel build left no artifact in '%s'.", dir);
		goto cleanup;
	}
	a->cached = false;
	kbuild_cache_touch(dir);
	kbuild_cache_evict(cache_dir, k.key, o->cache_max_bytes);
	*ret = TAKE_PTR(a);
	r = 0;
	goto cleanup;
hit:
	a->cached = true;
	/* a git build cached before meta.json recorded its commit: the key
	 * covers the commit, so it is this one */
	if (strncmp(k.src.identity, "git-commit:", 11) == 0 &&
	    !json_object_object_get_ex(a->meta, "source_commit", NULL))
		json_object_object_add(a->meta, "source_commit",
				       json_object_new_string(k.src.identity + 11));
	names_backfill(cache_dir, &k, a);
	kbuild_cache_touch(dir);
	*ret = TAKE_PTR(a);
	r = 0;
cleanup:
	kbuild_tree_done(&b.tree);
	kbuild_key_inputs_done(&k);
	return r;
}
