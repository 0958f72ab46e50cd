/* A user's own sched_ext scheduler, built against a job's kernel; see
 * scx_user_build.h and docs/sched-ext.md. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kernel/kbuild-internal.h"
#include "kernel/kbuild.h"
#include "kernel/scx_user_build.h"
#include "util/cmd.h"
#include "util/fs.h"
#include "util/sandbox.h"

/* What the scratch copy takes from the tree (relative to its root): the
 * Makefile of tools/sched_ext includes tools/build and tools/scripts, builds
 * libbpf (tools/lib/bpf, tools/include, tools/arch; its helper header comes
 * from scripts/bpf_doc.py) and bpftool (tools/bpf/bpftool, which compiles
 * kernel/bpf/disasm.c); scripts/extract-vmlinux gives the bzImage's BTF. A
 * patch touching any of them must be the tree's current one. */
static const char *const tree_parts[] = {
    "tools/sched_ext",
    "tools/lib",
    "tools/include",
    "tools/arch",
    "tools/build",
    "tools/scripts",
    "tools/bpf",
    "kernel/bpf/disasm.c",
    "kernel/bpf/disasm.h",
    "scripts/bpf_doc.py",
    "scripts/extract-vmlinux",
};

/* The last lines of the build's output, with the scratch directory's path
 * taken out, and the first compiler error with the lines after it. */
struct out_state {
	int log_fd;
	const struct kbuild_opts *o;
	const char *scratch; /* the scratch directory's absolute path */
	char first[512];     /* the first "error:" line and up to 3 after it */
	int first_lines;
	char tail[8][160]; /* a ring of the last lines */
	size_t n;
	enum sched_ext_source_file *file; /* where first is, when make fails (may be NULL) */
};

/* line with "<scratch>/src/tools/sched_ext/" dropped, every other mention of
 * <scratch> written as "<build>", and bytes outside printable ASCII as '?':
 * the user's file names stay as they wrote them, no host path leaves. */
static void clean_line(const char *scratch, const char *line, char *out, size_t len)
{
	char sched_dir[PATH_MAX + 32];
	snprintf(sched_dir, sizeof(sched_dir), "%s/src/tools/sched_ext/", scratch);
	size_t sl = strlen(scratch), dl = strlen(sched_dir), o = 0;
	for (const char *p = line; *p && o + 8 < len;) {
		if (strncmp(p, sched_dir, dl) == 0)
			p += dl;
		else if (strncmp(p, scratch, sl) == 0) {
			o += (size_t)snprintf(out + o, len - o, "<build>");
			p += sl;
		} else {
			unsigned char c = (unsigned char)*p++;
			out[o++] = c == '\t' || (c >= 0x20 && c < 0x7f) ? (char)c : '?';
		}
	}
	out[o] = '\0';
}

static void on_line(void *ud, const char *raw)
{
	struct out_state *st = ud;
	char line[1024];
	clean_line(st->scratch, raw, line, sizeof(line));
	if (st->log_fd >= 0)
		dprintf(st->log_fd, "%s\n", line);
	if (st->o->log_fd >= 0)
		dprintf(st->o->log_fd, "%s\n", line);
	if (st->o->progress)
		st->o->progress(st->o->userdata, 50, line);
	kbuild_trunc_printf(st->tail[st->n++ % 8], sizeof(st->tail[0]), "%s", line);
	if (!st->first[0] && strstr(line, "error:")) {
		kbuild_trunc_printf(st->first, sizeof(st->first), "%s", line);
		st->first_lines = 1;
	} else if (st->first_lines > 0 && st->first_lines <= 3) {
		size_t n = strlen(st->first);
		kbuild_trunc_printf(st->first + n, sizeof(st->first) - n, "\n%s", line);
		st->first_lines++;
	}
}

static int cancelled(void *ud)
{
	struct out_state *st = ud;
	return st->o->cancelled ? st->o->cancelled(st->o->userdata) : 0;
}

void scx_user_key(const char *kernel_key, const char *clang_version,
		  const struct scx_user_source *src, char out[HASH_HEX_LEN])
{
	struct hash_ctx *h = hash_new();
	hash_update_str(h, SCX_USER_KEY_VERSION);
	hash_update_str(h, kernel_key);
	hash_update_str(h, clang_version);
	hash_update_str(h, src->name);
	hash_update_str(h, src->bpf);
	hash_update_str(h, src->loader);
	hash_final_hex(h, out);
}

/* The first line of "clang-16 --version" in buf. */
static int clang_version(char *buf, size_t len, struct sl_error *err)
{
	char *const argv[] = {KBUILD_SCX_CLANG, "--version", NULL};
	struct cmd_opts co = {.timeout_s = 60, .log_fd = -1, .capture_max = 4096};
	_cleanup_free_ char *out = NULL;
	int ex = 0;
	int r = cmd_run(argv, &co, &ex, &out, err);
	if (r < 0 || ex != 0 || !out || !out[0]) {
		r = error_set(err, ERR_BUILD, ENOENT,
			      "%s, which compiles sched_ext programs, does not run here (the "
			      "Debian package clang-16).",
			      KBUILD_SCX_CLANG);
		snprintf(err->code, sizeof(err->code), "build_failed");
		return r;
	}
	out[strcspn(out, "\n")] = '\0';
	snprintf(buf, len, "%s", out);
	return 0;
}

/* Whether the patch at path changes a file of tree_parts. */
static bool patch_touches_parts(const char *path)
{
	_cleanup_free_ char *text = NULL;
	struct sl_error ignored;
	if (fs_read_file(path, 64 << 20, &text, NULL, &ignored) < 0)
		return true; /* unreadable: assume the worst */
	for (char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, "+++ ", 4) != 0 && strncmp(l, "--- ", 4) != 0)
			continue;
		const char *f = l + 4;
		const char *slash = strchr(f, '/');
		if (slash && (size_t)(slash - f) <= 1)
			f = slash + 1; /* a/ b/ */
		for (size_t i = 0; i < ELEMENTSOF(tree_parts); i++)
			if (strncmp(f, tree_parts[i], strlen(tree_parts[i])) == 0)
				return true;
	}
	return false;
}

/* Under the tree's lock: copies tree_parts of the tree's source into
 * scratch/src. The tree holds the last kernel built from it; when that is not
 * a's (other patches), the copy is still a's when neither patch set touches
 * tree_parts, else the build is refused. */
static int copy_tree_parts(const struct kbuild_opts *o, const char *cache_dir,
			   const struct kernel_spec *s, const char *scratch, struct sl_error *err)
{
	struct key_inputs k;
	int r = kbuild_key_compute(cache_dir, s, &k, err);
	if (r < 0) {
		kbuild_key_inputs_done(&k);
		return r;
	}
	_cleanup_free_ char *trees = fs_path_join(cache_dir, "trees");
	_cleanup_free_ char *tree = fs_path_join(trees, k.src.tree_id);
	_cleanup_free_ char *src = fs_path_join(tree, "src");
	_cleanup_free_ char *mk = fs_path_join(src, "Makefile");
	_cleanup_free_ char *lock = NULL;
	_cleanup_close_ int lock_fd = -1;
	if (asprintf(&lock, "%s.lock", tree) < 0)
		lock = NULL;
	r = lock ? kbuild_lock_take(lock, o, NULL, &lock_fd, err)
		 : error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	if (r >= 0 && !fs_exists(mk))
		r = error_set(err, ERR_INTERNAL, ENOENT,
			      "The kernel's source tree is not in the cache (its kernel came "
			      "from the cache alone); build the kernel once more with a fresh "
			      "cache entry.");
	if (r >= 0 && !kbuild_tree_has_patches(tree, &k)) {
		bool touched = false;
		for (size_t i = 0; s->patches && s->patches[i]; i++)
			touched = touched || patch_touches_parts(s->patches[i]);
		_cleanup_free_ char *applied = fs_path_join(tree, "applied");
		for (int i = 0; i < 10000 && !touched; i++) {
			char name[32];
			snprintf(name, sizeof(name), "%04d.patch", i);
			_cleanup_free_ char *p = fs_path_join(applied, name);
			if (!fs_exists(p))
				break;
			touched = patch_touches_parts(p);
		}
		if (touched) {
			r = error_set(err, ERR_BUILD, EBUSY,
				      "The kernel's shared source tree holds another patch set "
				      "now, and one of the two changes tools/ (which a sched_ext "
				      "program is built with); run the job again once no other "
				      "build uses the tree.");
			snprintf(err->code, sizeof(err->code), "build_failed");
		}
	}
	_cleanup_free_ char *dest = fs_path_join(scratch, "src");
	if (r >= 0)
		r = fs_mkdir_p(dest, err);
	if (r >= 0) {
		char *argv[4 + ELEMENTSOF(tree_parts) + 1] = {"cp", "-a", "--parents"};
		size_t n = 3;
		for (size_t i = 0; i < ELEMENTSOF(tree_parts); i++)
			argv[n++] = (char *)tree_parts[i];
		argv[n++] = dest;
		argv[n] = NULL;
		struct cmd_opts co = {
		    .cwd = src, .timeout_s = 300, .log_fd = -1, .capture_max = 2048};
		_cleanup_free_ char *out = NULL;
		int ex = 0;
		r = cmd_run(argv, &co, &ex, &out, err);
		if (r >= 0 && ex != 0)
			r = error_set(err, ERR_INTERNAL, EIO,
				      "Cannot copy tools/ of the kernel tree for the sched_ext "
				      "build (cp exit %d).",
				      ex);
	}
	kbuild_key_inputs_done(&k);
	return r;
}

static int own_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)flag;
	(void)ftw;
	if ((st->st_uid != SANDBOX_UID || st->st_gid != SANDBOX_UID) &&
	    lchown(path, SANDBOX_UID, SANDBOX_UID) < 0)
		return errno ? errno : EIO;
	return 0;
}

static int write_sources(const char *scratch, const struct scx_user_source *src,
			 struct sl_error *err)
{
	_cleanup_free_ char *dir = fs_path_join(scratch, "src/tools/sched_ext");
	_cleanup_free_ char *bpf = NULL, *loader = NULL;
	if (asprintf(&bpf, "%s/%s.bpf.c", dir, src->name) < 0 ||
	    asprintf(&loader, "%s/%s.c", dir, src->name) < 0)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	int r = fs_write_file_atomic(bpf, src->bpf, strlen(src->bpf), err);
	return r < 0 ? r : fs_write_file_atomic(loader, src->loader, strlen(src->loader), err);
}

/* The failure's message: make's exit, the first compiler error with its
 * context, and the last lines when they say something else. */
static int build_failed(struct out_state *st, const char *name, int ex, struct sl_error *err)
{
	char msg[1000];
	size_t at = (size_t)snprintf(
	    msg, sizeof(msg), "The sched_ext scheduler '%s' did not build (make exit %d):", name,
	    ex);
	if (st->first[0])
		at += (size_t)snprintf(msg + at, sizeof(msg) - at, "\n%s", st->first);
	size_t from = st->n > 3 ? st->n - 3 : 0;
	for (size_t i = from; i < st->n && at < sizeof(msg); i++)
		if (!strstr(st->first, st->tail[i % 8]))
			at += (size_t)snprintf(msg + at, sizeof(msg) - at, "\n%s", st->tail[i % 8]);
	int r = error_set(err, ERR_BUILD, EIO, "%s", msg);
	snprintf(err->code, sizeof(err->code), "build_failed");
	if (st->file)
		*st->file = sched_ext_source_error_file(name, st->first);
	return r;
}

/* In scratch: the bzImage's vmlinux (its BTF), then make of the new
 * example, sandboxed unless o->no_sandbox. */
static int run_make(const struct kbuild_opts *o, const char *scratch,
		    const struct scx_user_source *src, bool tools_only, struct out_state *st,
		    struct sl_error *err)
{
	int jobs = o->jobs > 0 ? o->jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);
	_cleanup_free_ char *script = NULL;
	/* tools_only: the Makefile's own targets for libbpf and bpftool (whose
	 * build wants VMLINUX_BTF too: the bzImage's vmlinux, extracted once) */
	if (asprintf(&script,
		     "%s mkdir -p out && exec make -C src/tools/sched_ext O=\"$PWD/out\" "
		     "VMLINUX_BTF=\"$PWD/vmlinux\" CLANG=%s c-sched-targets=%s -j%d %s",
		     "[ -s vmlinux ] || sh src/scripts/extract-vmlinux bzImage > vmlinux || { echo "
		     "'error: no vmlinux with BTF in the kernel image'; exit 1; };",
		     KBUILD_SCX_CLANG, src->name, jobs < 1 ? 1 : jobs,
		     tools_only ? "\"$PWD/out/build/obj/libbpf/libbpf.a\" "
				  "\"$PWD/out/build/sbin/bpftool\""
				: src->name) < 0)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	char *argv[] = {"sh", "-c", script, NULL};
	char *env[] = {"LC_ALL=C", NULL};
	int timeout = o->timeout_s > 0 && o->timeout_s < SCX_USER_TIMEOUT_S ? o->timeout_s
									    : SCX_USER_TIMEOUT_S;
	bool as_root = geteuid() == 0;
	struct cmd_opts co = {
	    .cwd = scratch,
	    .env_extra = env,
	    .timeout_s = timeout,
	    .log_fd = -1,
	    .on_line = on_line,
	    .userdata = st,
	    .cancelled = cancelled,
	};
	int ex = 0, r;
	if (!o->no_sandbox) {
		if (as_root) {
			r = nftw(scratch, own_one, 64, FTW_PHYS | FTW_MOUNT);
			if (r != 0)
				return error_set(err, ERR_INTERNAL, r > 0 ? r : errno,
						 "Cannot hand the sched_ext build to the sandbox's "
						 "uid %d.",
						 SANDBOX_UID);
		}
		struct sandbox_bind binds[] = {{.path = scratch, .writable = true}};
		struct sandbox_spec sp = {
		    .binds = binds,
		    .n_binds = 1,
		    .chdir = scratch,
		    .env = env,
		    .as_root = as_root,
		    .cpu_s = (unsigned long)timeout,
		    .as_bytes = KBUILD_SANDBOX_AS_BYTES,
		    .fsize_bytes = KBUILD_SANDBOX_FSIZE_BYTES,
		    .nproc = KBUILD_SANDBOX_NPROC,
		    .mem_bytes = KBUILD_SANDBOX_MEM_BYTES,
		    .cpus = o->jobs > 0 ? (unsigned long)o->jobs : 1,
		};
		co.cwd = NULL;
		r = sandbox_run(&sp, argv, &co, &ex, NULL, NULL, err);
	} else
		r = cmd_run(argv, &co, &ex, NULL, err);
	if (r < 0 && err->kind == ERR_TIMEOUT) {
		r = error_set(err, ERR_BUILD, ETIMEDOUT,
			      "The sched_ext scheduler '%s' did not build within %d s (the "
			      "build's time limit).",
			      src->name, timeout);
		snprintf(err->code, sizeof(err->code), "build_failed");
	}
	if (r < 0)
		return r;
	return ex != 0 ? build_failed(st, src->name, ex, err) : 0;
}

/* scratch/src from the kernel's kept copy of tree_parts (<tools>.src), or
 * else from its tree (copy_tree_parts(), which waits while a kernel build
 * holds the tree), then kept: later builds against this kernel need neither
 * the tree nor its lock. */
static int tree_parts_into(const struct kbuild_opts *o, const char *cache_dir,
			   const struct kernel_spec *s, const char *tools, const char *scratch,
			   struct sl_error *err)
{
	_cleanup_free_ char *kept = NULL, *tmp = NULL;
	_cleanup_free_ char *dest = fs_path_join(scratch, "src");
	if (asprintf(&kept, "%s.src", tools) < 0 ||
	    asprintf(&tmp, "%s.src.%d.tmp", tools, (int)getpid()) < 0)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	struct cmd_opts co = {.timeout_s = 300, .log_fd = -1, .capture_max = 1024};
	int ex = 0, r;
	if (fs_exists(kept)) {
		char *argv[] = {"cp", "-a", kept, dest, NULL};
		_cleanup_free_ char *out = NULL;
		r = cmd_run(argv, &co, &ex, &out, err);
		if (r < 0 || ex != 0)
			return r < 0 ? r
				     : error_set(
					   err, ERR_INTERNAL, EIO,
					   "Cannot copy the kept tools/ for the sched_ext build.");
		return 0;
	}
	time_t t0 = time(NULL);
	if ((r = copy_tree_parts(o, cache_dir, s, scratch, err)) < 0)
		return r;
	if (o->log_fd >= 0)
		dprintf(o->log_fd, "schedlab: copied tools/ from the kernel tree in %lld s\n",
			(long long)(time(NULL) - t0));
	char *argv[] = {"cp", "-a", dest, tmp, NULL};
	_cleanup_free_ char *out = NULL;
	struct sl_error ignored;
	if (cmd_run(argv, &co, &ex, &out, &ignored) < 0 || ex != 0 || rename(tmp, kept) < 0)
		fs_rm_rf(tmp, &ignored); /* best effort: the next build copies again */
	return 0;
}

/* The loader the sandbox left at built must be a regular file inside
 * scratch: not a symlink, nor under a symlinked directory, to a host file
 * that root would then copy into the cache and the guest. */
static int loader_check(const char *scratch, const char *built, struct sl_error *err)
{
	struct stat st;
	_cleanup_free_ char *real = realpath(built, NULL);
	size_t n = strlen(scratch);
	if (!real || strncmp(real, scratch, n) != 0 || real[n] != '/' || lstat(built, &st) < 0 ||
	    !S_ISREG(st.st_mode)) {
		int r = error_set(err, ERR_BUILD, EIO,
				  "The sched_ext build left no loader (a regular file) where the "
				  "Makefile puts it.");
		snprintf(err->code, sizeof(err->code), "build_failed");
		return r;
	}
	return 0;
}

/* The loader the sandboxed make left in scratch/out/build/bin/NAME to
 * tmp_loader (0755), as any file from a sandbox is taken (util/fs.h). */
static int copy_loader(const struct kbuild_opts *o, const char *scratch, const char *name,
		       const char *tmp_loader, struct sl_error *err)
{
	struct fs_untrusted u = {.what = "sched_ext loader",
				 .max = KBUILD_MAX_LOADER_BYTES,
				 .reader_uid = kbuild_reader_uid(!o->no_sandbox, geteuid() == 0)};
	_cleanup_free_ char *rel = fs_path_join("out/build/bin", name);
	int r = fs_copy_untrusted(scratch, rel, &u, tmp_loader, 0755, err);
	if (r < 0 && err && err->kind == ERR_BUILD)
		snprintf(err->code, sizeof(err->code), "build_failed");
	return r;
}

/* What the build makes before any user file: libbpf (its archive and
 * installed headers) and bpftool, relative to scratch/out/build. */
static const char *const tool_parts[] = {"obj/libbpf/libbpf.a", "include/bpf", "sbin/bpftool"};

/* Runs cp -a --parents of tool_parts from from/ into to/ (mtimes kept, so
 * make takes the copies as up to date against the tree's sources, which
 * cp -a copied with theirs; a tree whose tools/ changed since is newer and
 * rebuilds). 0 when every part was there. */
static int copy_tools(const char *from, const char *to, struct sl_error *err)
{
	char *argv[4 + ELEMENTSOF(tool_parts) + 1] = {"cp", "-a", "--parents"};
	size_t n = 3;
	for (size_t i = 0; i < ELEMENTSOF(tool_parts); i++) {
		_cleanup_free_ char *p = fs_path_join(from, tool_parts[i]);
		if (!fs_exists(p))
			return -ENOENT;
		argv[n++] = (char *)tool_parts[i];
	}
	argv[n++] = (char *)to;
	argv[n] = NULL;
	struct cmd_opts co = {.cwd = from, .timeout_s = 120, .log_fd = -1, .capture_max = 1024};
	_cleanup_free_ char *out = NULL;
	int ex = 0;
	int r = fs_mkdir_p(to, err);
	if (r >= 0)
		r = cmd_run(argv, &co, &ex, &out, err);
	return r < 0 ? r : ex != 0 ? -EIO : 0;
}

/* After a build that got past libbpf and bpftool (also one whose program
 * then failed), keeps them in tools (once: a rename of a complete copy), so
 * the next build against this kernel, another program or a fix of this one,
 * skips them. Best effort. */
static void save_tools(const char *scratch, const char *tools)
{
	_cleanup_free_ char *from = fs_path_join(scratch, "out/build");
	_cleanup_free_ char *tmp = NULL;
	struct sl_error ignored;
	if (fs_exists(tools) || asprintf(&tmp, "%s.%d.tmp", tools, (int)getpid()) < 0)
		return;
	if (copy_tools(from, tmp, &ignored) < 0 || rename(tmp, tools) < 0)
		fs_rm_rf(tmp, &ignored);
}

/* The build in scratch into tmp/NAME (the entry's directory before its
 * rename); tools: the kernel's cached libbpf and bpftool (save_tools()). */
static int build_into(const struct kbuild_opts *o, const char *cache_dir,
		      const struct kernel_spec *s, const struct kbuild_artifact *a,
		      const struct scx_user_source *src, const char *key, const char *scratch,
		      const char *tmp, const char *tools, enum sched_ext_source_file *file,
		      struct sl_error *err)
{
	_cleanup_free_ char *bz = fs_path_join(scratch, "bzImage");
	_cleanup_free_ char *log_path = fs_path_join(tmp, "build.log");
	_cleanup_free_ char *tmp_loader = fs_path_join(tmp, src->name);
	_cleanup_free_ char *built = NULL;
	if (asprintf(&built, "%s/out/build/bin/%s", scratch, src->name) < 0)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	int r;
	if (!o->no_sandbox &&
	    (r = sandbox_check("build with --no-sandbox (the service: \"build_sandbox\": false)",
			       err)) < 0)
		return r;
	if ((r = fs_mkdir_p(scratch, err)) < 0 || (r = fs_mkdir_p(tmp, err)) < 0 ||
	    (r = tree_parts_into(o, cache_dir, s, tools, scratch, err)) < 0 ||
	    (r = kbuild_copy_file(a->bzimage, bz, err)) < 0)
		return r;
	_cleanup_close_ int log_fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	struct out_state st = {.log_fd = log_fd, .o = o, .scratch = scratch, .file = file};
	if (o->log_fd >= 0)
		dprintf(o->log_fd, "schedlab: building the sched_ext scheduler '%s' (key %.12s)\n",
			src->name, key);
	_cleanup_free_ char *out_build = fs_path_join(scratch, "out/build");
	struct sl_error ignored;
	bool had_tools = copy_tools(tools, out_build, &ignored) == 0;
	if (o->log_fd >= 0 && had_tools)
		dprintf(o->log_fd, "schedlab: libbpf and bpftool from the kernel's cache entry\n");
	/* libbpf and bpftool before the user's files are there: what is kept
	 * for other jobs never saw them */
	if (!had_tools) {
		if ((r = run_make(o, scratch, src, true, &st, err)) < 0)
			return r;
		save_tools(scratch, tools);
	}
	if ((r = write_sources(scratch, src, err)) < 0 ||
	    (r = run_make(o, scratch, src, false, &st, err)) < 0 ||
	    (r = loader_check(scratch, built, err)) < 0 ||
	    (r = copy_loader(o, scratch, src->name, tmp_loader, err)) < 0)
		return r;
	return 0;
}

int scx_user_build(const struct kbuild_opts *o, const struct kernel_spec *s,
		   const struct kbuild_artifact *a, const struct scx_user_source *src,
		   char **ret_loader, enum sched_ext_source_file *ret_file, struct sl_error *err)
{
	char clang[256], key[HASH_HEX_LEN];
	if (ret_file)
		*ret_file = SCHED_EXT_FILE_NONE;
	int r = clang_version(clang, sizeof(clang), err);
	if (r < 0)
		return r;
	scx_user_key(a->key, clang, src, key);
	_cleanup_free_ char *cache_dir =
	    o->cache_dir ? realpath(o->cache_dir, NULL) : fs_default_cache_dir();
	_cleanup_free_ char *scx = fs_path_join(a->dir, KBUILD_SCX_DIR);
	_cleanup_free_ char *users = fs_path_join(scx, SCX_USER_DIR);
	_cleanup_free_ char *dir = fs_path_join(users, key);
	_cleanup_free_ char *loader = fs_path_join(dir, src->name);
	_cleanup_free_ char *lock = NULL, *tmp = NULL, *scratch = NULL, *root = NULL;
	if (!cache_dir || !loader || asprintf(&lock, "%s.lock", dir) < 0 ||
	    asprintf(&tmp, "%s.tmp", dir) < 0 || !(root = fs_path_join(cache_dir, "scx-user")) ||
	    asprintf(&scratch, "%s/%.16s.build", root, key) < 0)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	if ((r = fs_mkdir_p(users, err)) < 0)
		return r;
	_cleanup_close_ int lock_fd = -1;
	if ((r = kbuild_lock_take(lock, o, NULL, &lock_fd, err)) < 0)
		return r;
	if (fs_exists(loader)) {
		*ret_loader = TAKE_PTR(loader);
		return 0;
	}
	struct sl_error ignored;
	fs_rm_rf(scratch, &ignored);
	fs_rm_rf(tmp, &ignored);
	/* libbpf and bpftool depend on the tree and the compilers only */
	char tools_key[HASH_HEX_LEN];
	struct scx_user_source none = {"", "", ""};
	scx_user_key(a->key, clang, &none, tools_key);
	_cleanup_free_ char *tools = NULL;
	if (asprintf(&tools, "%s/tools-%.16s", users, tools_key) < 0)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	r = build_into(o, cache_dir, s, a, src, key, scratch, tmp, tools, ret_file, err);
	fs_rm_rf(scratch, &ignored);
	if (r >= 0 && rename(tmp, dir) < 0)
		r = error_set(err, ERR_INTERNAL, errno,
			      "Cannot move the sched_ext loader into the cache: %s.",
			      strerror(errno));
	if (r < 0) {
		fs_rm_rf(tmp, &ignored);
		return r;
	}
	*ret_loader = TAKE_PTR(loader);
	return 0;
}
