/* The shared source tree under <cache>/trees/<tree_id>/: src/ (extracted
 * once per source, patched in place), obj/ (make O=) and applied/ (copies of
 * the applied patches and their list), so that a change to the last patch
 * rebuilds only what it touches. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/kbuild-internal.h"
#include "util/fs.h"
#include "util/parse.h"

int kernel_tree_read_version(struct build_ctx *b, struct sl_error *err)
{
	_cleanup_free_ char *text = NULL;
	/* a patch could have made it anything */
	struct fs_untrusted u = kbuild_untrusted(b, "top Makefile", KBUILD_MAX_MAKEFILE_BYTES);
	int r = fs_read_untrusted(b->src, "Makefile", &u, &text, NULL, err);
	if (r < 0)
		return error_prefix(err, "The kernel source has no readable top Makefile");
	long v[3] = {-1, -1, -1};
	const char *names[3] = {"VERSION = ", "PATCHLEVEL = ", "SUBLEVEL = "};
	for (int i = 0; i < 3; i++) {
		for (char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
			if (strncmp(p, names[i], strlen(names[i])) == 0) {
				char num[16];
				const char *val = p + strlen(names[i]);
				snprintf(num, sizeof(num), "%.*s", (int)strcspn(val, " \t\r\n"),
					 val);
				if (parse_int(num, 0, INT_MAX, &v[i]) < 0)
					return error_set(err, ERR_BUILD, EINVAL,
							 "The kernel source's Makefile has '%.*s "
							 "%.16s', which is not a number.",
							 (int)strlen(names[i]) - 1, names[i], num);
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

/* A fresh tree always gets fresh object directories (obj/, every debug
 * kernel's and an untrusted build's copy, which starts empty too): tar
 * restores old mtimes, and make would keep objects built from files that
 * differ. */
int kernel_tree_extract(struct build_ctx *b, struct sl_error *err)
{
	struct sl_error ignored;
	_cleanup_free_ char *tmp = fs_path_join(b->tree, "src.tmp");
	_cleanup_free_ char *applied = fs_path_join(b->tree, "applied");
	_cleanup_free_ char *obj = fs_path_join(b->tree, "obj");
	_cleanup_free_ char *debug_objs = fs_path_join(b->tree, KBUILD_DEBUG_OBJS);
	fs_rm_rf(b->src, &ignored);
	fs_rm_rf(obj, &ignored);
	fs_rm_rf(debug_objs, &ignored);
	if (b->obj != b->obj_trusted)
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
	kbuild_log(b, "extracting '%s'", src->kind == SOURCE_GIT ? src->ref : src->path);
	if (src->kind == SOURCE_GIT) {
		_cleanup_free_ char *tar = fs_path_join(b->tree, "git-archive.tar");
		_cleanup_free_ char *outopt = NULL;
		if (asprintf(&outopt, "--output=%s", tar) < 0)
			return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		const char *commit = src->identity + strlen("git-commit:");
		char *const a1[] = {"git",	    "-C",   (char *)src->path, "archive",
				    "--format=tar", outopt, (char *)commit,    NULL};
		r = kbuild_run_step(b, KBUILD_ON_HOST, a1, NULL, KBUILD_STEP_TIMEOUT_S, &ex, NULL,
				    err);
		if (r >= 0 && ex != 0)
			r = error_set(err, ERR_BUILD, EIO,
				      "'git archive' of '%s' failed (exit %d).", src->path, ex);
		if (r < 0)
			return r;
		char *const a2[] = {"tar", "-xf", tar, "-C", tmp, NULL};
		r = kbuild_run_step(b, KBUILD_ON_HOST, a2, NULL, KBUILD_STEP_TIMEOUT_S, &ex, NULL,
				    err);
		unlink(tar);
	} else {
		char *const a[] = {
		    "tar", "-xf", (char *)src->path, "-C", tmp, "--strip-components=1", NULL};
		r = kbuild_run_step(b, KBUILD_ON_HOST, a, NULL, KBUILD_STEP_TIMEOUT_S, &ex, NULL,
				    err);
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
	if (r < 0 || (r = fs_mkdir_p(b->obj, err)) < 0)
		return r;
	/* tar ran as the host's user; the sandboxed steps write src and obj */
	r = kbuild_sandbox_own(b, b->src, err);
	return r < 0 ? r : kbuild_sandbox_own(b, b->obj, err);
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
			kbuild_trunc_printf(file, sizeof(file), "%s", f);
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
	return fs_write_file_atomic(list, text, strlen(text), err);
}

static char *applied_copy_path(struct build_ctx *b, size_t i)
{
	char name[64];
	kbuild_trunc_printf(name, sizeof(name), "applied/%04zu.patch", i);
	return fs_path_join(b->tree, name);
}

/* Brings tree/src to pristine + the spec's patches: reverts only the applied
 * patches that differ from the wanted ones (so a change to the last patch
 * rebuilds only what it touches), then applies the rest, each dry-run first. */
int kernel_tree_patch(struct build_ctx *b, struct sl_error *err)
{
	_cleanup_strv_free_ char **have = NULL;
	size_t nhave = 0;
	int r = applied_list_read(b, &have, &nhave);
	if (r < 0) {
		kbuild_log(b, "the patch state of the cached tree is unreadable; extracting again");
		r = kernel_tree_extract(b, err);
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
		r = kbuild_run_step(b, KBUILD_SANDBOX_PATCH, argv, b->src, KBUILD_STEP_TIMEOUT_S,
				    &ex, NULL, err);
		if (r < 0)
			return r;
		if (ex != 0) {
			kbuild_log(b, "reverting an old patch failed; extracting the source again");
			r = kernel_tree_extract(b, err);
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
		kbuild_log(b, "reusing %zu already applied patch(es)", same);

	char **shas = calloc(nwant + 1, sizeof(char *));
	if (!shas)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	for (size_t i = 0; i < nwant; i++)
		shas[i] = b->k->patch_sha[i];
	for (size_t i = same; i < nwant; i++) {
		const char *name = kbuild_base_name(b->s->patches[i]);
		/* patch reads the copy in applied/: the sandbox sees that
		 * directory, not wherever the job keeps its files */
		_cleanup_free_ char *copy = applied_copy_path(b, i);
		r = kbuild_copy_file(b->s->patches[i], copy, err);
		if (r < 0)
			goto out;
		const char *patch = copy;
		_cleanup_free_ char *outp = NULL;
		int ex = 0;
		char *const dry[] = {"patch",	"-p1",	       "--dry-run",
				     "--batch", "--forward",   "--no-backup-if-mismatch",
				     "-i",	(char *)patch, NULL};
		r = kbuild_run_step(b, KBUILD_SANDBOX_PATCH, dry, b->src, KBUILD_STEP_TIMEOUT_S,
				    &ex, &outp, err);
		if (r < 0)
			goto out;
		if (ex != 0) {
			char why[600];
			patch_explain(outp, why, sizeof(why));
			r = error_set(err, ERR_BUILD, EINVAL,
				      "patch %zu/%zu '%s' does not apply: %s.", i + 1, nwant, name,
				      why);
			snprintf(err->code, sizeof(err->code), "patch_does_not_apply");
			kbuild_trunc_printf(b->failed_patch, sizeof(b->failed_patch), "%s", name);
			kbuild_log(b, "%s", err->message);
			goto out;
		}
		char *const real[] = {
		    "patch", "-p1",	    "--batch", "--forward", "--no-backup-if-mismatch",
		    "-i",    (char *)patch, NULL};
		free(outp);
		outp = NULL;
		r = kbuild_run_step(b, KBUILD_SANDBOX_PATCH, real, b->src, KBUILD_STEP_TIMEOUT_S,
				    &ex, &outp, err);
		if (r < 0)
			goto out;
		if (ex != 0) {
			/* dry run passed: the tree is now in an unknown state */
			_cleanup_free_ char *list = fs_path_join(b->tree, "applied/list");
			fs_write_file_atomic(list, "unknown\n", 8, err);
			r = error_set(err, ERR_BUILD, EIO,
				      "patch %zu/%zu '%s' passed its dry run but failed (exit %d).",
				      i + 1, nwant, name, ex);
			snprintf(err->code, sizeof(err->code), "patch_does_not_apply");
			kbuild_trunc_printf(b->failed_patch, sizeof(b->failed_patch), "%s", name);
			kbuild_log(b, "%s", err->message);
			goto out;
		}
		r = applied_list_write(b, shas, i + 1, err);
		if (r < 0)
			goto out;
		kbuild_log(b, "patch %zu/%zu '%s' applied", i + 1, nwant, name);
	}
	r = 0;
out:
	free(shas);
	return r;
}
