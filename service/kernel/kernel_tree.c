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
	struct fs_untrusted u =
	    kbuild_untrusted(&b->sandbox, "top Makefile", KBUILD_MAX_MAKEFILE_BYTES);
	int r = fs_read_untrusted(b->tree.src, "Makefile", &u, &text, NULL, err);
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
	_cleanup_free_ char *tmp = fs_path_join(b->tree.dir, "src.tmp");
	_cleanup_free_ char *applied = fs_path_join(b->tree.dir, "applied");
	_cleanup_free_ char *obj = fs_path_join(b->tree.dir, "obj");
	_cleanup_free_ char *debug_objs = fs_path_join(b->tree.dir, KBUILD_DEBUG_OBJS);
	fs_rm_rf(b->tree.src, &ignored);
	fs_rm_rf(obj, &ignored);
	fs_rm_rf(debug_objs, &ignored);
	if (b->tree.obj != b->tree.obj_trusted)
		fs_rm_rf(b->tree.obj, &ignored);
	fs_rm_rf(applied, &ignored);
	int r = fs_rm_rf(tmp, err);
	if (r < 0)
		return r;
	r = fs_mkdir_p(tmp, err);
	if (r < 0)
		return r;
	const struct source *src = &b->k->src;
	int ex = 0;
	kbuild_log(&b->log, "extracting '%s'", src->kind == SOURCE_GIT ? src->ref : src->path);
	if (src->kind == SOURCE_GIT) {
		_cleanup_free_ char *tar = fs_path_join(b->tree.dir, "git-archive.tar");
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
	if (rename(tmp, b->tree.src) < 0)
		return error_set(err, ERR_INTERNAL, errno, "Cannot rename '%s': %s.", tmp,
				 strerror(errno));
	r = fs_mkdir_p(applied, err);
	if (r < 0 || (r = fs_mkdir_p(b->tree.obj, err)) < 0)
		return r;
	/* tar ran as the host's user; the sandboxed steps write src and obj */
	r = kbuild_sandbox_own(&b->sandbox, b->tree.src, err);
	return r < 0 ? r : kbuild_sandbox_own(&b->sandbox, b->tree.obj, err);
}

/* What patch(1) said about a failed (dry) run, as "file 'F' hunk #N FAILED
 * at L" or the reason it gave up. */
void kernel_tree_patch_explain(const char *out, char *buf, size_t len)
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
	_cleanup_free_ char *list = fs_path_join(b->tree.dir, "applied/list");
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
	_cleanup_free_ char *list = fs_path_join(b->tree.dir, "applied/list");
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
	return fs_path_join(b->tree.dir, name);
}

static int extract_again(struct build_ctx *b, const char *why, struct sl_error *err)
{
	kbuild_log(&b->log, "%s; extracting the source again", why);
	return kernel_tree_extract(b, err);
}

/* After a crash (applied/step is there): the hashes of the patch in flight
 * say whether it is in the tree or not, and the list is made to say so;
 * neither side, or no manifest, is a tree extracted again. The list is
 * never trusted over the files. */
static int tree_recover(struct build_ctx *b, struct sl_error *err)
{
	_cleanup_free_ char *applied = fs_path_join(b->tree.dir, "applied");
	char step[16], sha[HASH_HEX_LEN], bad[256], why[512];
	size_t idx = 0;
	int r = tree_guard_step_read(applied, step, &idx, sha);
	if (r == 0)
		return 0;
	if (r < 0)
		return extract_again(b, "the journal of the cached tree is unreadable", err);
	struct tree_manifest m;
	struct sl_error ignored;
	if (tree_guard_load(applied, idx, &m, &ignored) < 0)
		return extract_again(b, "a patch step was cut short before its files were hashed",
				     err);
	enum tree_side side = tree_guard_side(b->tree.src, &m, bad, sizeof(bad));
	tree_guard_free(&m);
	_cleanup_strv_free_ char **have = NULL;
	size_t nhave = 0;
	if (side == TREE_NEITHER || applied_list_read(b, &have, &nhave) < 0 || nhave < idx) {
		kbuild_trunc_printf(why, sizeof(why),
				    "the %s of patch %zu was cut short and '%s' is on neither side "
				    "of it",
				    step, idx + 1, bad);
		return extract_again(b, why, err);
	}
	char **list = calloc(idx + 2, sizeof(char *));
	if (!list)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	for (size_t i = 0; i < idx; i++)
		list[i] = have[i];
	list[idx] = sha;
	r = applied_list_write(b, list, idx + (side == TREE_AFTER), err);
	free(list);
	if (r < 0 || (r = tree_guard_step_done(applied, err)) < 0)
		return r;
	kbuild_log(&b->log, "the %s of patch %zu was cut short; its files show it %s", step,
		   idx + 1, side == TREE_AFTER ? "applied" : "not applied");
	return 0;
}

/* Reverts the applied patch index (have[index]) and checks that every file
 * it touched is back to its hash from before it was applied: with offsets
 * (and fuzz, which is off) patch -R can revert a hunk somewhere else and
 * exit 0. 1 when the tree was extracted again instead. */
static int tree_revert(struct build_ctx *b, size_t index, char **have, struct sl_error *err)
{
	_cleanup_free_ char *applied = fs_path_join(b->tree.dir, "applied");
	_cleanup_free_ char *copy = applied_copy_path(b, index);
	struct tree_manifest m;
	struct sl_error ignored;
	char bad[256], why[512];
	if (tree_guard_load(applied, index, &m, &ignored) < 0) {
		int r =
		    extract_again(b, "an applied patch has no record of the files it touched", err);
		return r < 0 ? r : 1;
	}
	int r = tree_guard_step_write(applied, "revert", index, have[index], err);
	if (r < 0) {
		tree_guard_free(&m);
		return r;
	}
	char *const argv[] = {"patch",	  "-p1",       "-R",	   "--batch",
			      "--fuzz=0", "--forward", "--silent", "--no-backup-if-mismatch",
			      "-i",	  copy,	       NULL};
	int ex = 0;
	r = kbuild_run_step(b, KBUILD_SANDBOX_PATCH, argv, b->tree.src, KBUILD_STEP_TIMEOUT_S, &ex,
			    NULL, err);
	tree_guard_crash_point("revert");
	enum tree_side side =
	    r < 0 ? TREE_NEITHER : tree_guard_side(b->tree.src, &m, bad, sizeof(bad));
	tree_guard_free(&m);
	if (r < 0)
		return r;
	if (ex != 0 || side != TREE_BEFORE) {
		if (ex != 0)
			kbuild_trunc_printf(why, sizeof(why),
					    "reverting patch %zu failed (exit %d)", index + 1, ex);
		else
			kbuild_trunc_printf(why, sizeof(why),
					    "reverting patch %zu exited 0 but left '%s' differing "
					    "from before the patch",
					    index + 1, bad);
		r = extract_again(b, why, err);
		return r < 0 ? r : 1;
	}
	_cleanup_free_ char *mname = NULL;
	if (asprintf(&mname, "%s/%04zu.files", applied, index) < 0)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	unlink(copy);
	unlink(mname);
	r = applied_list_write(b, have, index, err);
	return r < 0 ? r : tree_guard_step_done(applied, err);
}

/* The patch's dry run failed: the error naming its file and hunk. */
static int patch_refused(struct build_ctx *b, size_t i, size_t n, const char *name, const char *why,
			 struct sl_error *err)
{
	int r = error_set(err, ERR_BUILD, EINVAL, "patch %zu/%zu '%s' does not apply: %s.", i + 1,
			  n, name, why);
	snprintf(err->code, sizeof(err->code), "patch_does_not_apply");
	kbuild_trunc_printf(b->failed_patch, sizeof(b->failed_patch), "%s", name);
	kbuild_log(&b->log, "%s", err->message);
	return r;
}

/* Applies patch i of the spec: a dry run, the hashes of the files it names
 * (applied/NNNN.files) and the step written down, the patch, the hashes
 * after it; then the list. No fuzz: a hunk applies where its whole context
 * is. */
static int tree_apply(struct build_ctx *b, size_t i, char **shas, struct sl_error *err)
{
	size_t nwant = b->k->npatches;
	const char *name = kbuild_base_name(b->s->patches[i]);
	_cleanup_free_ char *applied = fs_path_join(b->tree.dir, "applied");
	/* patch reads the copy in applied/: the sandbox sees that directory,
	 * not wherever the job keeps its files */
	_cleanup_free_ char *copy = applied_copy_path(b, i);
	int r = kbuild_copy_file(b->s->patches[i], copy, err);
	if (r < 0)
		return r;
	_cleanup_free_ char *outp = NULL;
	int ex = 0;
	char *const dry[] = {"patch",
			     "-p1",
			     "--dry-run",
			     "--batch",
			     "--fuzz=0",
			     "--forward",
			     "--no-backup-if-mismatch",
			     "-i",
			     copy,
			     NULL};
	r = kbuild_run_step(b, KBUILD_SANDBOX_PATCH, dry, b->tree.src, KBUILD_STEP_TIMEOUT_S, &ex,
			    &outp, err);
	if (r < 0)
		return r;
	if (ex != 0) {
		char why[600];
		kernel_tree_patch_explain(outp, why, sizeof(why));
		return patch_refused(b, i, nwant, name, why, err);
	}
	/* the dry run's output is kept as its tail: a cut list of files would
	 * leave some unchecked */
	if (outp && strlen(outp) >= KBUILD_CAPTURE_MAX - 1)
		return patch_refused(b, i, nwant, name,
				     "it touches more files than its dry run can list", err);
	struct tree_manifest m;
	r = tree_guard_from_dry_run(b->tree.src, outp ? outp : "", &m, err);
	if (r < 0)
		return r;
	if ((r = tree_guard_save(applied, i, &m, err)) < 0 ||
	    (r = tree_guard_step_write(applied, "apply", i, shas[i], err)) < 0)
		goto out;
	char *const real[] = {"patch",	  "-p1",       "--batch",
			      "--fuzz=0", "--forward", "--no-backup-if-mismatch",
			      "-i",	  copy,	       NULL};
	free(outp);
	outp = NULL;
	r = kbuild_run_step(b, KBUILD_SANDBOX_PATCH, real, b->tree.src, KBUILD_STEP_TIMEOUT_S, &ex,
			    &outp, err);
	tree_guard_crash_point("apply");
	if (r < 0)
		goto out;
	if (ex != 0) {
		/* dry run passed: the tree is now in an unknown state */
		_cleanup_free_ char *list = fs_path_join(b->tree.dir, "applied/list");
		fs_write_file_atomic(list, "unknown\n", 8, err);
		tree_guard_step_done(applied, err);
		r = error_set(err, ERR_BUILD, EIO,
			      "patch %zu/%zu '%s' passed its dry run but failed (exit %d).", i + 1,
			      nwant, name, ex);
		snprintf(err->code, sizeof(err->code), "patch_does_not_apply");
		kbuild_trunc_printf(b->failed_patch, sizeof(b->failed_patch), "%s", name);
		kbuild_log(&b->log, "%s", err->message);
		goto out;
	}
	tree_guard_hash_after(b->tree.src, &m);
	if ((r = tree_guard_save(applied, i, &m, err)) < 0 ||
	    (r = applied_list_write(b, shas, i + 1, err)) < 0 ||
	    (r = tree_guard_step_done(applied, err)) < 0)
		goto out;
	kbuild_log(&b->log, "patch %zu/%zu '%s' applied", i + 1, nwant, name);
out:
	tree_guard_free(&m);
	return r;
}

/* Brings tree/src to pristine + the spec's patches: finishes a step a crash
 * cut short, reverts only the applied patches that differ from the wanted
 * ones (so a change to the last patch rebuilds only what it touches), then
 * applies the rest, each dry-run first (docs/kernel-builds.md "A tree no
 * patch can poison"). */
int kernel_tree_patch(struct build_ctx *b, struct sl_error *err)
{
	int r = tree_recover(b, err);
	if (r < 0)
		return r;
	_cleanup_strv_free_ char **have = NULL;
	size_t nhave = 0;
	r = applied_list_read(b, &have, &nhave);
	if (r < 0) {
		r = extract_again(b, "the patch state of the cached tree is unreadable", err);
		if (r < 0)
			return r;
		nhave = 0;
	}
	size_t nwant = b->k->npatches, same = 0;
	while (same < nhave && same < nwant && strcmp(have[same], b->k->patch_sha[same]) == 0)
		same++;
	for (size_t i = nhave; i > same; i--) {
		r = tree_revert(b, i - 1, have, err);
		if (r < 0)
			return r;
		if (r > 0) {
			same = 0;
			nhave = 0;
			break;
		}
	}
	if (nhave > same)
		nhave = same;
	if (same > 0)
		kbuild_log(&b->log, "reusing %zu already applied patch(es)", same);

	char **shas = calloc(nwant + 1, sizeof(char *));
	if (!shas)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	for (size_t i = 0; i < nwant; i++)
		shas[i] = b->k->patch_sha[i];
	r = 0;
	for (size_t i = same; i < nwant && r >= 0; i++)
		r = tree_apply(b, i, shas, err);
	free(shas);
	return r < 0 ? r : 0;
}
