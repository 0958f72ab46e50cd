/* kernel/tree_guard + kernel_tree_patch with the real patch(1) on a small
 * tree (no sandbox, no kernel): a patch whose revert exits 0 but moves a
 * line (a hunk whose new side also matches, unchanged, in another
 * function, so patch -R picks that place by the hunk's line number; with
 * --fuzz=0 as with the default fuzz) leaves the tree pristine all the same;
 * so does a kill -9 after patch -R and before the applied list is rewritten,
 * or after the patch and before the list says so. Pristine is compared by
 * the SHA-256 of every file of the tree. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "kernel/kbuild-internal.h"
#include "kernel/kbuild.h"
#include "util/fs.h"
#include "util/hash.h"

/* f() and g() share the lines around where f() has unlock(): the patch
 * drops it from f(), and its new side then matches f() and g() alike. */
static const char lock_c[] = "void f(void)\n{\n\tlock();\n\twork();\n\tunlock();\n\tdone();\n"
			     "\treturn;\n\tend();\n}\n\nvoid g(void)\n{\n\tlock();\n\twork();\n"
			     "\tdone();\n\treturn;\n\tend();\n}\n";
/* "+11": where patch -R looks first, g()'s "{" */
static const char moving_patch[] = "--- a/lock.c\n+++ b/lock.c\n@@ -2,7 +11,6 @@\n {\n \tlock();\n"
				   " \twork();\n-\tunlock();\n \tdone();\n \treturn;\n \tend();\n";
/* an honest patch: its revert comes back to pristine */
static const char plain_patch[] = "--- a/lock.c\n+++ b/lock.c\n@@ -1,4 +1,4 @@\n-void f(void)\n"
				  "+void f(int x)\n {\n \tlock();\n \twork();\n";

struct fx {
	char dir[64];
	char *cache, *tree, *tarball, *patch;
	struct kbuild_opts o;
	struct kernel_spec s;
	struct key_inputs k;
	char *patches[2];
	char sha[HASH_HEX_LEN];
	struct build_ctx b;
};

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void run(const char *cmd)
{
	assert_int_equal(system(cmd), 0);
}

/* The digest of every file under dir: names, contents, in name order. */
static void tree_digest(const char *dir, char out[HASH_HEX_LEN])
{
	char *cmd = NULL;
	assert_true(asprintf(&cmd,
			     "cd '%s' && find . -type f -o -type l | LC_ALL=C sort | "
			     "while read -r f; do sha256sum \"$f\"; done | sha256sum",
			     dir) > 0);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(out, HASH_HEX_LEN, p));
	pclose(p);
	free(cmd);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_tree_guard.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	f->cache = fs_path_join(f->dir, "cache");
	f->tree = fs_path_join(f->cache, "trees/t");
	f->tarball = fs_path_join(f->dir, "linux.tar.gz");
	f->patch = fs_path_join(f->dir, "evil.patch");
	char *cmd = NULL;
	assert_true(asprintf(&cmd, "mkdir -p '%s/linux-1.0' '%s'", f->dir, f->tree) > 0);
	run(cmd);
	free(cmd);
	char *lock = NULL, *mk = NULL;
	assert_true(asprintf(&lock, "%s/linux-1.0/lock.c", f->dir) > 0);
	assert_true(asprintf(&mk, "%s/linux-1.0/Makefile", f->dir) > 0);
	write_text(lock, lock_c);
	write_text(mk, "VERSION = 1\nPATCHLEVEL = 0\nSUBLEVEL = 0\n");
	free(lock);
	free(mk);
	assert_true(asprintf(&cmd, "tar -czf '%s' -C '%s' linux-1.0", f->tarball, f->dir) > 0);
	run(cmd);
	free(cmd);

	f->o = (struct kbuild_opts){.cache_dir = f->cache, .log_fd = -1, .no_sandbox = true};
	f->s.source = f->tarball;
	f->s.patches = f->patches;
	f->k.src.kind = SOURCE_TARBALL;
	snprintf(f->k.src.path, sizeof(f->k.src.path), "%s", f->tarball);
	f->k.patch_sha = &f->sha;
	f->b = (struct build_ctx){.o = &f->o,
				  .s = &f->s,
				  .k = &f->k,
				  .cache_dir = f->cache,
				  .log = {.o = &f->o, .fd = -1}};
	f->b.tree.dir = f->tree;
	f->b.tree.src = fs_path_join(f->tree, "src");
	f->b.tree.obj = fs_path_join(f->tree, "obj");
	f->b.tree.obj_trusted = f->b.tree.obj;
	struct sl_error err = {0};
	assert_int_equal(kernel_tree_extract(&f->b, &err), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	struct sl_error err;
	unsetenv("SCHEDLAB_TEST_TREE_CRASH");
	fs_rm_rf(f->dir, &err);
	free(f->cache);
	free(f->tree);
	free(f->tarball);
	free(f->patch);
	free(f->b.tree.src);
	free(f->b.tree.obj);
	free(f);
	return 0;
}

/* The spec's patches: text (one patch) or none. */
static void want(struct fx *f, const char *text)
{
	f->patches[0] = NULL;
	f->k.npatches = 0;
	if (!text)
		return;
	write_text(f->patch, text);
	hash_buf_hex(text, strlen(text), f->sha);
	f->patches[0] = f->patch;
	f->patches[1] = NULL;
	f->k.npatches = 1;
}

static int patch_tree(struct fx *f, struct sl_error *err)
{
	return kernel_tree_patch(&f->b, err);
}

/* kernel_tree_patch in a child that $SCHEDLAB_TEST_TREE_CRASH kills at
 * where: it must die of SIGKILL there. */
static void patch_and_crash(struct fx *f, const char *where)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		setenv("SCHEDLAB_TEST_TREE_CRASH", where, 1);
		alarm(30);
		struct sl_error err = {0};
		_exit(patch_tree(f, &err) < 0 ? 2 : 0);
	}
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);
}

static void assert_pristine(struct fx *f, const char *pristine)
{
	char now[HASH_HEX_LEN];
	tree_digest(f->b.tree.src, now);
	if (strcmp(now, pristine) != 0) {
		char *cmd = NULL;
		assert_true(asprintf(&cmd,
				     "cd '%s' && diff -u ../../../../linux-1.0/lock.c lock.c >&2",
				     f->b.tree.src) > 0);
		if (system(cmd) != 0)
			fprintf(stderr, "(the tree above differs from the pristine source)\n");
		free(cmd);
		fail_msg("the tree is not pristine");
	}
}

/* Reproduces the move with plain patch(1) first, so the case is real:
 * dry run, apply and revert all exit 0 and lock.c differs after. */
static void test_revert_moves_a_line(void **state)
{
	struct fx *f = *state;
	char *cmd = NULL;
	write_text(f->patch, moving_patch);
	assert_true(asprintf(&cmd,
			     "set -e; d=$(mktemp -d); cp '%s/linux-1.0/lock.c' $d/; cd $d; "
			     "for fz in 2 0; do cp '%s/linux-1.0/lock.c' .; "
			     "patch -s -p1 --fuzz=$fz --dry-run --batch --forward -i '%s'; "
			     "patch -s -p1 --fuzz=$fz --batch --forward -i '%s'; "
			     "patch -s -p1 -R --fuzz=$fz --batch -i '%s'; "
			     "! cmp -s lock.c '%s/linux-1.0/lock.c'; done; rm -rf $d",
			     f->dir, f->dir, f->patch, f->patch, f->patch, f->dir) > 0);
	run(cmd);
	free(cmd);

	char pristine[HASH_HEX_LEN];
	tree_digest(f->b.tree.src, pristine);
	struct sl_error err = {0};
	want(f, moving_patch);
	assert_int_equal(patch_tree(f, &err), 0);
	want(f, NULL); /* a trusted base build: no patches */
	assert_int_equal(patch_tree(f, &err), 0);
	assert_pristine(f, pristine);
}

/* kill -9 after patch -R ran and before the list was rewritten: the next
 * build must not run patch -R again (which, with the list still naming the
 * patch, re-applied it: "Unreversed patch detected! Ignoring -R."). */
static void test_crash_after_revert(void **state)
{
	struct fx *f = *state;
	char pristine[HASH_HEX_LEN];
	tree_digest(f->b.tree.src, pristine);
	struct sl_error err = {0};
	want(f, plain_patch);
	assert_int_equal(patch_tree(f, &err), 0);
	want(f, NULL);
	patch_and_crash(f, "revert");
	assert_int_equal(patch_tree(f, &err), 0);
	assert_pristine(f, pristine);
	/* and the list agrees: applying it again works */
	want(f, plain_patch);
	assert_int_equal(patch_tree(f, &err), 0);
	want(f, NULL);
	assert_int_equal(patch_tree(f, &err), 0);
	assert_pristine(f, pristine);
}

/* The same state without the journal's crash hook: patch -R run by hand
 * with the list still naming the patch (what a kill -9 left before). */
static void test_reverted_but_listed(void **state)
{
	struct fx *f = *state;
	char pristine[HASH_HEX_LEN];
	tree_digest(f->b.tree.src, pristine);
	struct sl_error err = {0};
	want(f, plain_patch);
	assert_int_equal(patch_tree(f, &err), 0);
	char *cmd = NULL;
	assert_true(asprintf(&cmd, "cd '%s' && patch -s -p1 -R --batch -i '%s'", f->b.tree.src,
			     f->patch) > 0);
	run(cmd);
	free(cmd);
	want(f, NULL);
	assert_int_equal(patch_tree(f, &err), 0);
	assert_pristine(f, pristine);
}

/* kill -9 after the patch and before the list names it: the files show it
 * applied, so the next build reverts it (and the moving patch is caught
 * there too). */
static void test_crash_after_apply(void **state)
{
	struct fx *f = *state;
	char pristine[HASH_HEX_LEN];
	tree_digest(f->b.tree.src, pristine);
	struct sl_error err = {0};
	want(f, moving_patch);
	patch_and_crash(f, "apply");
	want(f, NULL);
	assert_int_equal(patch_tree(f, &err), 0);
	assert_pristine(f, pristine);
	want(f, plain_patch);
	patch_and_crash(f, "apply");
	assert_int_equal(patch_tree(f, &err), 0); /* recovery: applied */
	want(f, NULL);
	assert_int_equal(patch_tree(f, &err), 0);
	assert_pristine(f, pristine);
}

/* The files a dry run names: plain, renamed and copied (both names),
 * quoted; an absolute name or one with ".." is not hashed (patch refuses
 * those); each is hashed as it is now ("-": missing). */
static void test_manifest_names(void **state)
{
	struct fx *f = *state;
	struct tree_manifest m;
	struct sl_error err = {0};
	const char *out = "checking file lock.c\n"
			  "checking file new.c (renamed from Makefile)\n"
			  "checking file copy.c (copied from lock.c)\n"
			  "checking file 'odd name.c'\n"
			  "checking file /etc/passwd\n"
			  "checking file ../outside.c\n"
			  "Hunk #1 succeeded at 3.\n";
	assert_int_equal(tree_guard_from_dry_run(f->b.tree.src, out, &m, &err), 0);
	assert_int_equal(m.n, 5);
	const char *want_paths[] = {"lock.c", "new.c", "Makefile", "copy.c", "odd name.c"};
	for (size_t i = 0; i < m.n; i++)
		assert_string_equal(m.files[i].path, want_paths[i]);
	assert_int_equal(strlen(m.files[0].before), 64);
	assert_string_equal(m.files[1].before, "-");
	assert_string_equal(m.files[1].after, "?");
	assert_int_equal(tree_guard_side(f->b.tree.src, &m, NULL, 0), TREE_BEFORE);
	/* saved and loaded back the same */
	char *applied = fs_path_join(f->tree, "applied");
	struct tree_manifest back;
	assert_int_equal(tree_guard_save(applied, 7, &m, &err), 0);
	assert_int_equal(tree_guard_load(applied, 7, &back, &err), 0);
	assert_int_equal(back.n, m.n);
	for (size_t i = 0; i < m.n; i++) {
		assert_string_equal(back.files[i].path, m.files[i].path);
		assert_string_equal(back.files[i].before, m.files[i].before);
	}
	tree_guard_free(&back);
	tree_guard_free(&m);
	free(applied);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_revert_moves_a_line, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_crash_after_revert, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_reverted_but_listed, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_crash_after_apply, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_manifest_names, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
