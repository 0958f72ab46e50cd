/* The tree patches apply to, as a git repository. See kernel_export.h. */
#include <dirent.h>
#include <stdarg.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "kernel/kernel_export.h"
#include "util/cmd.h"
#include "util/fs.h"

#define EXPORT_STEP_TIMEOUT_S 1800

/* The identity commits made here carry (the patches' own authors stay).
 * gc.auto 0: `git add` of a kernel leaves some 80 000 loose objects, and
 * every commit or `git am` below would start a detached `git gc --auto`
 * that repacks them for minutes after the export returned, beside the
 * guests of the job the user starts next (their runs came out noisy).
 * The export packs the tree itself, in the foreground, instead. */
static char *const git_env[] = {
    "GIT_CONFIG_COUNT=1",
    "GIT_CONFIG_KEY_0=gc.auto",
    "GIT_CONFIG_VALUE_0=0",
    "GIT_AUTHOR_NAME=schedlab",
    "GIT_AUTHOR_EMAIL=schedlab@localhost",
    "GIT_COMMITTER_NAME=schedlab",
    "GIT_COMMITTER_EMAIL=schedlab@localhost",
    "GIT_CONFIG_NOSYSTEM=1",
    "GIT_TERMINAL_PROMPT=0",
    "GIT_EDITOR=true",
    NULL,
};

static void say(const struct kernel_export_opts *o, const char *fmt, ...) _printf_(2, 3);
static void say(const struct kernel_export_opts *o, const char *fmt, ...)
{
	if (!o || !o->progress)
		return;
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	o->progress(o->userdata, line);
}

/* What an error names after the program: git's subcommand past a
 * "-c key=value", else the first argument. */
static const char *verb(char *const argv[])
{
	if (argv[1] && strcmp(argv[1], "-c") == 0 && argv[2] && argv[3])
		return argv[3];
	return argv[1] ? argv[1] : "";
}

/* Runs argv in cwd with the git identity above; a non-zero exit is an
 * error (kind) with the output's tail, unless ret_exit is given. */
static int run(char *const argv[], const char *cwd, enum error_kind kind, int *ret_exit,
	       char **ret_out, struct sl_error *err)
{
	struct cmd_opts co = {.cwd = cwd,
			      .env_extra = git_env,
			      .timeout_s = EXPORT_STEP_TIMEOUT_S,
			      .log_fd = -1,
			      .capture_max = 4096};
	_cleanup_free_ char *out = NULL;
	int ex = 0;
	int r = cmd_run(argv, &co, &ex, &out, err);
	if (r < 0)
		return error_prefix(err, "'%s %s'", argv[0], verb(argv));
	if (ret_exit) {
		*ret_exit = ex;
		if (ret_out)
			*ret_out = TAKE_PTR(out);
		return 0;
	}
	if (ex != 0) {
		size_t n = out ? strlen(out) : 0;
		while (n > 0 && out[n - 1] == '\n')
			out[--n] = '\0';
		const char *tail = out && n > 600 ? out + n - 600 : out;
		return error_set(err, kind, EIO, "'%s %s' failed (exit %d): %s", argv[0],
				 verb(argv), ex, tail && *tail ? tail : "(no output)");
	}
	if (ret_out)
		*ret_out = TAKE_PTR(out);
	return 0;
}

static int dir_check_empty(const char *dir, struct sl_error *err)
{
	DIR *d = opendir(dir);
	if (!d) {
		if (errno == ENOENT)
			return fs_mkdir_p(dir, err);
		return error_set(err, ERR_INVALID, errno, "Cannot open the directory '%s': %s.",
				 dir, strerror(errno));
	}
	struct dirent *e;
	bool empty = true;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			empty = false;
	closedir(d);
	if (!empty)
		return error_set(err, ERR_CONFLICT, EEXIST,
				 "The directory '%s' is not empty; give a new or an empty one.",
				 dir);
	return 0;
}

/* Extracts the source into dir; *ret_what describes it for the commit. */
static int extract(const struct kernel_spec *s, const char *dir, const struct kernel_export_opts *o,
		   char **ret_what, struct sl_error *err)
{
	const char *src = s->source;
	_cleanup_free_ char *what = NULL;
	int r;
	if (strncmp(src, "debian:", 7) == 0 || strncmp(src, "tarball:", 8) == 0) {
		_cleanup_free_ char *tarball = NULL;
		if (src[0] == 'd') {
			const char *pkg = src + 7;
			if (!*pkg || strchr(pkg, '/') || pkg[0] == '.' || pkg[0] == '-')
				return error_set(err, ERR_INVALID, EINVAL,
						 "Kernel source '%s' names no Debian package.",
						 src);
			if (asprintf(&tarball, "/usr/src/%s.tar.xz", pkg) < 0)
				return -ENOMEM;
			if (!fs_exists(tarball))
				return error_set(
				    err, ERR_NOT_FOUND, ENOENT,
				    "Kernel source '%s' needs '%s': install the Debian "
				    "package '%s'.",
				    src, tarball, pkg);
			char *const q[] = {"dpkg-query", "-W", "-f=${Version}", (char *)pkg, NULL};
			_cleanup_free_ char *ver = NULL;
			int ex = 0;
			r = run(q, NULL, ERR_INTERNAL, &ex, &ver, err);
			if (r < 0)
				return r;
			if (asprintf(&what, "Debian package %s %s", pkg,
				     ex == 0 && ver && *ver ? ver : "(version unknown)") < 0)
				return -ENOMEM;
		} else {
			tarball = strdup(src + 8);
			if (!tarball || asprintf(&what, "the tarball %s",
						 strrchr(src + 8, '/') ? strrchr(src + 8, '/') + 1
								       : src + 8) < 0)
				return -ENOMEM;
		}
		say(o, "extracting '%s' (a minute or two)", tarball);
		char *const a[] = {"tar", "-xf", tarball, "-C", (char *)dir, "--strip-components=1",
				   NULL};
		r = run(a, NULL, ERR_BUILD, NULL, NULL, err);
		if (r < 0)
			return r;
	} else if (strncmp(src, "git:", 4) == 0) {
		const char *at = strrchr(src + 4, '@');
		if (!at || src[4] != '/' || at[1] == '-' || at[1] == '\0')
			return error_set(
			    err, ERR_INVALID, EINVAL,
			    "Kernel source '%s' must look like 'git:/path/to/tree@ref'.", src);
		_cleanup_free_ char *tree = strndup(src + 4, (size_t)(at - (src + 4)));
		_cleanup_free_ char *tar = fs_path_join(dir, ".schedlab-archive.tar");
		_cleanup_free_ char *outopt = NULL;
		if (!tree || asprintf(&outopt, "--output=%s", tar) < 0)
			return -ENOMEM;
		say(o, "exporting '%s' of '%s'", at + 1, tree);
		char *const a1[] = {"git",	    "-C",   tree,	    "archive",
				    "--format=tar", outopt, (char *)at + 1, NULL};
		r = run(a1, NULL, ERR_BUILD, NULL, NULL, err);
		if (r < 0)
			return r;
		char *const a2[] = {"tar", "-xf", tar, "-C", (char *)dir, NULL};
		r = run(a2, NULL, ERR_BUILD, NULL, NULL, err);
		unlink(tar);
		if (r < 0)
			return r;
		if (asprintf(&what, "%s", src) < 0)
			return -ENOMEM;
	} else
		return error_set(err, ERR_INVALID, EINVAL,
				 "Kernel source '%s' is not 'debian:PACKAGE', 'tarball:PATH' or "
				 "'git:PATH@REF'.",
				 src);
	_cleanup_free_ char *mk = fs_path_join(dir, "Makefile");
	if (!fs_exists(mk))
		return error_set(err, ERR_BUILD, EIO,
				 "The kernel source '%s' has no top-level Makefile.", src);
	*ret_what = TAKE_PTR(what);
	return 0;
}

/* One patch on top: git am keeps its author and message; when git cannot
 * apply it, patch -p1 (as the kernel build applies it) and a commit. */
static int apply_one(const char *dir, const char *patch, size_t i, size_t n,
		     const struct kernel_export_opts *o, struct sl_error *err)
{
	const char *name = strrchr(patch, '/') ? strrchr(patch, '/') + 1 : patch;
	char *const am[] = {"git", "am", "-q", "--no-3way", (char *)patch, NULL};
	int ex = 0;
	int r = run(am, dir, ERR_BUILD, &ex, NULL, err);
	if (r < 0)
		return r;
	if (ex == 0) {
		say(o, "patch %zu/%zu '%s' committed (git am)", i, n, name);
		return 0;
	}
	char *const abort_am[] = {"git", "am", "--abort", NULL};
	r = run(abort_am, dir, ERR_BUILD, &ex, NULL, err);
	if (r < 0)
		return r;
	char *const p[] = {
	    "patch", "-p1",	    "--batch", "--forward", "--no-backup-if-mismatch",
	    "-i",    (char *)patch, NULL};
	_cleanup_free_ char *out = NULL;
	r = run(p, dir, ERR_BUILD, &ex, &out, err);
	if (r < 0)
		return r;
	if (ex != 0)
		return error_set(err, ERR_BUILD, EINVAL,
				 "patch %zu/%zu '%s' does not apply (git am and patch -p1 both "
				 "failed): %.600s",
				 i, n, name, out ? out : "");
	char *const add[] = {"git", "add", "-A", "-f", NULL};
	r = run(add, dir, ERR_BUILD, NULL, NULL, err);
	if (r < 0)
		return r;
	_cleanup_free_ char *msg = NULL;
	if (asprintf(&msg,
		     "%s\n\nApplied with 'patch -p1', as schedlab's kernel build applies it\n"
		     "('git am' could not apply it).",
		     name) < 0)
		return -ENOMEM;
	char *const commit[] = {"git", "commit", "-q", "--allow-empty", "-m", msg, NULL};
	r = run(commit, dir, ERR_BUILD, NULL, NULL, err);
	if (r < 0)
		return r;
	say(o, "patch %zu/%zu '%s' committed (patch -p1)", i, n, name);
	return 0;
}

int kernel_export_git(const struct kernel_spec *s, const char *dir,
		      const struct kernel_export_opts *o, struct sl_error *err)
{
	if (!dir || dir[0] != '/')
		return error_set(err, ERR_INVALID, EINVAL, "The tree directory must be absolute.");
	int r = dir_check_empty(dir, err);
	if (r < 0)
		return r;
	_cleanup_free_ char *what = NULL;
	r = extract(s, dir, o, &what, err);
	if (r < 0)
		return r;
	say(o, "making the base commit (git add of the whole tree)");
	char *const init[] = {"git", "init", "-q", (char *)dir, NULL};
	char *const crlf[] = {"git", "config", "core.autocrlf", "false", NULL};
	/* -f: the tree is the source as shipped, .gitignore'd files included.
	 * core.bigFileThreshold=1 streams every blob into one pack as it is
	 * added, where loose objects would need a repack afterwards: on a
	 * 6.1 tree 47 to 48 s, against 33 to 34 s for a loose add plus 47 to
	 * 73 s for its `git repack -a` (bench/export_pack.sh, 2-core host at
	 * load 1, side by side). */
	char *const add[] = {"git", "-c", "core.bigFileThreshold=1", "add", "-A", "-f", NULL};
	if ((r = run(init, NULL, ERR_INTERNAL, NULL, NULL, err)) < 0 ||
	    (r = run(crlf, dir, ERR_INTERNAL, NULL, NULL, err)) < 0 ||
	    (r = run(add, dir, ERR_INTERNAL, NULL, NULL, err)) < 0)
		return r;
	_cleanup_free_ char *msg = NULL;
	if (asprintf(&msg,
		     "Base: %s\n\nThe kernel source schedlab builds (source '%s'), as extracted, "
		     "before\nany patch.",
		     what, s->source) < 0)
		return -ENOMEM;
	char *const commit[] = {"git", "commit", "-q", "-m", msg, NULL};
	if ((r = run(commit, dir, ERR_INTERNAL, NULL, NULL, err)) < 0)
		return r;
	size_t n = 0;
	while (s->patches && s->patches[n])
		n++;
	for (size_t i = 0; i < n; i++)
		if ((r = apply_one(dir, s->patches[i], i + 1, n, o, err)) < 0)
			return r;
	char *const tag[] = {"git", "tag", KERNEL_EXPORT_TAG, NULL};
	if ((r = run(tag, dir, ERR_INTERNAL, NULL, NULL, err)) < 0)
		return r;
	/* No loose object left (the trees, the commits), so the user's first
	 * commit in the tree starts no auto-gc: git counts loose objects
	 * against gc.auto's 6700, and a 6.1 tree has some 5000 directories.
	 * A pack of those is a second or two. */
	char *const pack[] = {"git", "repack", "-d", "-q", NULL};
	return run(pack, dir, ERR_INTERNAL, NULL, NULL, err);
}
