/* commit_range (job/commit_range.h): parsing "git:TREE@BASE..HEAD" and its
 * errors, then resolving ranges of a real git repository made in a temp
 * dir (linear commits, a merge): the commits oldest first with hash and
 * subject, one patch per commit, and every refusal naming the field. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <limits.h>

#include "job/commit_range.h"
#include "util/cmd.h"
#include "util/fs.h"
#include "util/json.h"

static char repo[PATH_MAX];

static char *const git_env[] = {"GIT_AUTHOR_NAME=t",
				"GIT_AUTHOR_EMAIL=t@schedlab.invalid",
				"GIT_COMMITTER_NAME=t",
				"GIT_COMMITTER_EMAIL=t@schedlab.invalid",
				"GIT_AUTHOR_DATE=2026-01-01T00:00:00Z",
				"GIT_COMMITTER_DATE=2026-01-01T00:00:00Z",
				"GIT_CONFIG_NOSYSTEM=1",
				"GIT_CONFIG_GLOBAL=/dev/null",
				NULL};

/* git -C repo ARGS... must succeed; returns its output (caller frees). */
static char *git_ok(const char *first, ...)
{
	char *argv[16] = {"git", "-C", repo, (char *)first};
	size_t n = 4;
	va_list ap;
	va_start(ap, first);
	for (char *a; n < 15 && (a = va_arg(ap, char *));)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	struct cmd_opts o = {.log_fd = -1, .capture_max = 1 << 16, .env_extra = git_env};
	struct sl_error err = {0};
	char *out = NULL;
	int ex = -1;
	if (cmd_run(argv, &o, &ex, &out, &err) < 0 || ex != 0)
		fail_msg("git %s: exit %d %s %s", first, ex, err.message, out ? out : "");
	return out;
}

static void commit_file(const char *name, const char *text, const char *subject)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/%s", repo, name);
	struct sl_error err = {0};
	assert_int_equal(fs_write_file_atomic(path, text, strlen(text), &err), 0);
	free(git_ok("add", name, NULL));
	free(git_ok("commit", "-q", "-m", subject, NULL));
}

/* base -> one -> two (main); base -> side, merged into "merged" after two. */
static int setup(void **state)
{
	(void)state;
	const char *tmp = getenv("TMPDIR");
	snprintf(repo, sizeof(repo), "%s/test_commit_range.XXXXXX", tmp ? tmp : P_tmpdir);
	assert_non_null(mkdtemp(repo));
	free(git_ok("init", "-q", NULL));
	free(git_ok("checkout", "-q", "-b", "main", NULL));
	commit_file("a.c", "int a;\n", "base: the tree");
	free(git_ok("tag", "base", NULL));
	commit_file("a.c", "int a;\nint b;\n", "sched: one");
	commit_file("a.c", "int a;\nint b;\nint c;\n", "sched: two, the second commit");
	free(git_ok("checkout", "-q", "-b", "side", "base", NULL));
	commit_file("b.c", "int side;\n", "side: a change");
	/* a subject longer than COMMIT_RANGE_MAX_SUBJECT, of 2-byte characters */
	free(git_ok("checkout", "-q", "-b", "long", "main", NULL));
	char subject[400] = "a";
	for (int i = 0; i < 150; i++)
		strcat(subject, "\xc3\xa9");
	commit_file("c.c", "int c;\n", subject);
	free(git_ok("checkout", "-q", "-b", "merged", "main", NULL));
	free(git_ok("merge", "-q", "--no-edit", "side", NULL));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fs_rm_rf(repo, NULL);
	return 0;
}

static void parse_fails(const char *text, const char *needle)
{
	struct commit_range r;
	struct sl_error err = {0};
	assert_true(commit_range_parse(text, "--range", &r, &err) < 0);
	assert_string_equal(err.path, "--range");
	if (!strstr(err.message, needle))
		fail_msg("'%s': expected '%s' in '%s'", text, needle, err.message);
	commit_range_done(&r);
}

static void test_parse(void **state)
{
	(void)state;
	struct commit_range r;
	struct sl_error err = {0};
	assert_int_equal(commit_range_parse("git:linux@v6.1..HEAD", "$.range", &r, &err), 0);
	assert_string_equal(r.tree, "linux");
	assert_string_equal(r.base_ref, "v6.1");
	assert_string_equal(r.head_ref, "HEAD");
	commit_range_done(&r);
	/* the last '@' splits: a tree path may hold one */
	assert_int_equal(commit_range_parse("git:/a@b/tree@HEAD~3..origin/main", "f", &r, &err), 0);
	assert_string_equal(r.tree, "/a@b/tree");
	assert_string_equal(r.base_ref, "HEAD~3");
	assert_string_equal(r.head_ref, "origin/main");
	commit_range_done(&r);

	parse_fails("tree@a..b", "must look like");
	parse_fails("git:tree@HEAD", "must look like");
	parse_fails("git:@a..b", "must look like");
	parse_fails("git:tree@..HEAD", "refs of letters");
	parse_fails("git:tree@HEAD..", "refs of letters");
	parse_fails("git:tree@a...b", "refs of letters");
	parse_fails("git:tree@a..b..c", "refs of letters");
	parse_fails("git:tree@-x..HEAD", "refs of letters");
	parse_fails("git:tree@HEAD~1..--output=x", "refs of letters");
	parse_fails("git:tree@a..b;rm", "refs of letters");
	parse_fails("git:tree@a..b c", "refs of letters");
	parse_fails("git:tree@a../etc", "refs of letters");
	char longref[300];
	memset(longref, 'a', sizeof(longref));
	snprintf(longref, sizeof(longref), "git:t@a..%0250d", 1);
	parse_fails(longref, "refs of letters");
}

static int resolve(const char *range, size_t max, struct commit_range *r, struct sl_error *err)
{
	char text[PATH_MAX + 128];
	snprintf(text, sizeof(text), "git:%s@%s", repo, range);
	assert_int_equal(commit_range_parse(text, "$.range", r, err), 0);
	return commit_range_resolve(r, max, "$.range", err);
}

static void resolve_fails(const char *range, size_t max, const char *needle)
{
	struct commit_range r;
	struct sl_error err = {0};
	assert_true(resolve(range, max, &r, &err) < 0);
	assert_string_equal(err.path, "$.range");
	if (!strstr(err.message, needle))
		fail_msg("'%s': expected '%s' in '%s'", range, needle, err.message);
	assert_null(strstr(err.message, repo)); /* no host path in the answer */
	commit_range_done(&r);
}

static void test_resolve(void **state)
{
	(void)state;
	struct commit_range r;
	struct sl_error err = {0};
	if (resolve("base..main", 10, &r, &err) < 0)
		fail_msg("%s", err.message);
	_cleanup_free_ char *head = git_ok("rev-parse", "main", NULL);
	_cleanup_free_ char *one = git_ok("rev-parse", "main~1", NULL);
	_cleanup_free_ char *base = git_ok("rev-parse", "base", NULL);
	assert_int_equal(r.n, 2);
	assert_memory_equal(r.head_commit, head, 40);
	assert_memory_equal(r.base_commit, base, 40);
	assert_memory_equal(r.commits[0].hash, one, 40);
	assert_memory_equal(r.commits[1].hash, head, 40);
	assert_string_equal(r.commits[0].subject, "sched: one");
	assert_string_equal(r.commits[1].subject, "sched: two, the second commit");

	_cleanup_json_ json_object *patches = NULL;
	if (commit_range_patches(&r, "$.range", &patches, &err) < 0)
		fail_msg("%s", err.message);
	assert_int_equal(json_object_array_length(patches), 2);
	json_object *p1 = json_object_array_get_idx(patches, 1), *v = NULL;
	assert_true(json_object_object_get_ex(p1, "content", &v));
	assert_non_null(strstr(json_object_get_string(v), "+int c;"));
	assert_null(strstr(json_object_get_string(v), "+int b;"));
	/* no git version footer: the patch (and the kernel key) is the commit's */
	assert_null(strstr(json_object_get_string(v), "\n-- \n"));
	_cleanup_json_ json_object *commits = commit_range_commits_json(&r);
	assert_string_equal(json_object_get_string(json_object_object_get(
				json_object_array_get_idx(commits, 0), "subject")),
			    "sched: one");
	commit_range_done(&r);

	/* a range of one */
	assert_int_equal(resolve("main~1..main", 1, &r, &err), 0);
	assert_int_equal(r.n, 1);
	commit_range_done(&r);

	/* a long subject is cut on a whole UTF-8 character */
	assert_int_equal(resolve("main..long", 1, &r, &err), 0);
	size_t sl = strlen(r.commits[0].subject);
	assert_int_equal(sl, 199);
	assert_memory_equal(r.commits[0].subject + sl - 2, "\xc3\xa9", 2);
	commit_range_done(&r);

	resolve_fails("base..main", 1, "holds 2 commits; at most 1");
	resolve_fails("main..base", 10, "BASE 'main' is not an ancestor of HEAD 'base'");
	resolve_fails("main..side", 10, "is not an ancestor");
	resolve_fails("main..main", 10, "holds no commits");
	resolve_fails("base..merged", 10, "merge commit");
	resolve_fails("nosuch..main", 10, "BASE 'nosuch' does not name a commit");
	resolve_fails("base..nosuch", 10, "HEAD 'nosuch' does not name a commit");
	resolve_fails("base..main~9", 10, "HEAD 'main~9' does not name a commit");

	/* a tree and refs given apart, and what a bisection needs of them:
	 * the patches, the commits and the base at BASE's commit */
	assert_int_equal(commit_range_set(&r, repo, "base", "main", "$.cr", &err), 0);
	_cleanup_json_ json_object *bp = NULL, *bc = NULL;
	_cleanup_free_ char *bbase = NULL, *want = NULL;
	if (commit_range_bisect_inputs(&r, 10, "$.cr", &bp, &bc, &bbase, &err) < 0)
		fail_msg("%s", err.message);
	assert_int_equal(json_object_array_length(bp), 2);
	assert_int_equal(json_object_array_length(bc), 2);
	assert_true(asprintf(&want, "git:%s@%.40s", repo, base) > 0);
	assert_string_equal(bbase, want);
	commit_range_done(&r);
	assert_true(commit_range_set(&r, repo, "-x", "main", "$.cr", &err) < 0);
	assert_string_equal(err.path, "$.cr");
	commit_range_done(&r);
	assert_true(commit_range_set(&r, "", "base", "main", "$.cr", &err) < 0);
	commit_range_done(&r);

	struct commit_range bad;
	assert_int_equal(commit_range_parse("git:relative@a..b", "f", &bad, &err), 0);
	assert_true(commit_range_resolve(&bad, 10, "f", &err) < 0);
	assert_string_equal(err.path, "f");
	assert_non_null(strstr(err.message, "not a directory"));
	commit_range_done(&bad);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse),
	    cmocka_unit_test(test_resolve),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
