/* The command runner every step of a kernel build goes through
 * (kbuild-internal.h): the fixed build environment, the step's output into
 * the build log (paths of the shared tree taken out, progress counted, the
 * first compiler error kept) and a step past its time limit made a build
 * failure. Below it only the log (kbuild_log.c) and the sandbox
 * (kbuild_sandbox.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/kbuild.h"
#include "kernel/kbuild-internal.h"
#include "util/cmd.h"
#include "util/fs.h"

/* line with every "<tree>/src/" taken out and any other mention of the
 * tree's directory ("make[1]: Entering directory '<tree>/obj'") written as
 * "<tree>": gcc names files by the absolute path of the shared tree, which
 * says nothing to the patch's author and would put this host's cache path
 * into results. malloc'd, or NULL when there is nothing to take out (or no
 * memory). */
static char *tree_relative_to(const char *src, const char *line)
{
	if (!src)
		return NULL;
	const char *slash = strrchr(src, '/');
	size_t sl = strlen(src), rl = slash && slash != src ? (size_t)(slash - src) : sl;
	if (!memmem(line, strlen(line), src, rl))
		return NULL;
	/* "<tree>" may be longer than the root it stands for. */
	char *out = malloc(3 * strlen(line) + 8), *o = out;
	if (!out)
		return NULL;
	for (const char *p = line; *p;) {
		if (strncmp(p, src, sl) == 0 && p[sl] == '/')
			p += sl + 1;
		else if (strncmp(p, src, rl) == 0) {
			o = stpcpy(o, "<tree>");
			p += rl;
		} else
			*o++ = *p++;
	}
	*o = '\0';
	return out;
}

/* Both the source as the host has it and as sandboxed steps see it (a
 * work area's own path first: area 0's, a prefix of "<id>.1", would
 * otherwise eat part of it; kbuild_area.c). */
static char *tree_relative(const struct build_ctx *b, const char *line)
{
	char *host = tree_relative_to(b->tree.src, line);
	if (!b->tree.src_seen || !b->tree.src || strcmp(b->tree.src, b->tree.src_seen) == 0)
		return host;
	char *seen = tree_relative_to(b->tree.src_seen, host ? host : line);
	if (!seen)
		return host;
	free(host);
	return seen;
}

static void build_on_line(void *ud, const char *raw)
{
	struct build_ctx *b = ud;
	_cleanup_free_ char *rel = tree_relative(b, raw);
	const char *line = rel ? rel : raw;
	kbuild_log_tail(&b->log, line);
	if (b->o->log_fd >= 0)
		dprintf(b->o->log_fd, "%s\n", line);
	if (strncmp(line, "  CC ", 5) == 0 || strncmp(line, "  AS ", 5) == 0) {
		b->log.objects++;
		double p = 100.0 * (double)b->log.objects /
			   (double)(b->log.estimate ? b->log.estimate : 1);
		b->log.percent = p > 99.0 ? 99.0 : p;
	}
	if (!b->log.first_error[0] && strstr(line, "error:")) {
		snprintf(b->log.first_error, sizeof(b->log.first_error), "%s", line);
		b->log.first_error_lines = 1;
	} else if (b->log.first_error_lines > 0 &&
		   b->log.first_error_lines <= FIRST_ERROR_CONTEXT) {
		size_t n = strlen(b->log.first_error);
		snprintf(b->log.first_error + n, sizeof(b->log.first_error) - n, "\n%s", line);
		b->log.first_error_lines++;
	}
	if (strstr(line, "error:") || strstr(line, "Error ") || strstr(line, "*** "))
		if (!b->log.last_error[0] || strstr(line, "error:"))
			snprintf(b->log.last_error, sizeof(b->log.last_error), "%s", line);
	if (b->o->progress)
		b->o->progress(b->o->userdata, b->log.percent, line);
}

static int build_cancelled(void *ud)
{
	struct build_ctx *b = ud;
	return b->o->cancelled ? b->o->cancelled(b->o->userdata) : 0;
}

int kbuild_run_step(struct build_ctx *b, enum kbuild_where where, char *const argv[],
		    const char *cwd, int timeout_s, int *ret_exit, char **ret_output,
		    struct sl_error *err)
{
	_cleanup_free_ char *ccache_dir = fs_path_join(b->cache_dir, "ccache");
	_cleanup_free_ char *e1 = NULL, *e2 = NULL;
	if (asprintf(&e1, "CCACHE_DIR=%s", ccache_dir) < 0 ||
	    asprintf(&e2, "CCACHE_BASEDIR=%s", b->cache_dir) < 0)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	bool sandboxed = b->sandbox.on && where != KBUILD_ON_HOST;
	/* Fixed build identity: uname -v does not change between identical
	 * builds (KBUILD_BUILD_VERSION: else the "#N" of uname -v counts the
	 * links of the tree's obj/, and two builds of one key differ in it and
	 * in the build id). In the sandbox ccache only reads: a build must not plant
	 * objects other builds would take (docs/kernel-builds.md). */
	char *env[] = {e1,
		       e2,
		       "KBUILD_BUILD_USER=schedlab",
		       "KBUILD_BUILD_HOST=schedlab",
		       "KBUILD_BUILD_TIMESTAMP=schedlab",
		       "KBUILD_BUILD_VERSION=1",
		       "LC_ALL=C",
		       sandboxed ? "CCACHE_READONLY=1" : NULL,
		       "CCACHE_TEMPDIR=/tmp",
		       NULL};
	if (b->o->timeout_s > 0 && b->o->timeout_s < timeout_s)
		timeout_s = b->o->timeout_s;
	struct cmd_opts co = {
	    .cwd = cwd,
	    .env_extra = env,
	    .timeout_s = timeout_s,
	    .log_fd = b->log.fd,
	    .capture_max = ret_output ? KBUILD_CAPTURE_MAX : 0,
	    .on_line = build_on_line,
	    .userdata = b,
	    .cancelled = build_cancelled,
	};
	b->log.tail_len = 0;
	b->log.first_error[0] = '\0';
	b->log.first_error_lines = 0;
	int r;
	if (sandboxed)
		r = kbuild_run_sandboxed(b, where, argv, cwd, timeout_s, &co, ret_exit, ret_output,
					 err);
	else
		r = cmd_run(argv, &co, ret_exit, ret_output, err);
	if (r < 0 && err && err->kind == ERR_TIMEOUT) {
		/* the build's own doing, not the host's: a build failure */
		kbuild_log(&b->log, "'%s' did not finish within %d s and was stopped", argv[0],
			   timeout_s);
		r = error_set(err, ERR_BUILD, ETIMEDOUT,
			      "The kernel build step '%s' did not finish within %d s (the build's "
			      "time limit) and was stopped.",
			      argv[0], timeout_s);
		snprintf(err->code, sizeof(err->code), "build_failed");
	}
	return r;
}
