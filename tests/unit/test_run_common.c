/* The CLI's path handling (cli/run_common.c): paths made absolute against
 * the cwd, kernel sources made absolute against a job file's directory, the
 * default job directory, and the --base forms of schedlab test and kernel
 * tree. Runs in a temporary directory of its own. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cli/run_common.h"
#include "util/fs.h"

static char cwd[PATH_MAX];

static int setup(void **state)
{
	(void)state;
	static char tmpl[PATH_MAX];
	const char *tmp = getenv("TMPDIR");
	snprintf(tmpl, sizeof(tmpl), "%s/test_run_common.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(tmpl) || chdir(tmpl) < 0 || !getcwd(cwd, sizeof(cwd)))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	struct sl_error err;
	if (chdir("/") < 0)
		return -1;
	return fs_rm_rf(cwd, &err);
}

static void expect_abs(const char *in, const char *rel_to_cwd)
{
	_cleanup_free_ char *got = cli_path_absolute(in);
	_cleanup_free_ char *want = NULL;
	if (rel_to_cwd[0] == '/')
		want = strdup(rel_to_cwd);
	else
		assert_true(asprintf(&want, "%s%s%s", cwd, *rel_to_cwd ? "/" : "", rel_to_cwd) > 0);
	assert_non_null(got);
	assert_string_equal(got, want);
}

static void test_path_absolute(void **state)
{
	(void)state;
	expect_abs("build/jobs/x", "build/jobs/x");
	expect_abs("./a//b/./c/", "a/b/c");
	expect_abs(".", "");
	expect_abs("../up", "../up"); /* ".." stays: a symlink may be on the way */
	expect_abs("/abs/./p", "/abs/p");
	expect_abs("/", "/");
	assert_null(cli_path_absolute(""));
	assert_null(cli_path_absolute(NULL));
}

/* The options run, test and rerun share: applied, refused with a message,
 * or left to the command. */
static void test_run_option(void **state)
{
	(void)state;
	struct cli_run_opts o = {0};
	assert_int_equal(cli_run_option("t", 'o', "r.json", &o), 1);
	assert_string_equal(o.output, "r.json");
	assert_int_equal(cli_run_option("t", CLI_OPT_ACCEL, "tcg", &o), 1);
	assert_string_equal(o.cfg.accel, "tcg");
	assert_int_equal(cli_run_option("t", CLI_OPT_ACCEL, "xen", &o), -1);
	assert_string_equal(o.cfg.accel, "tcg");
	assert_int_equal(cli_run_option("t", 'j', "4", &o), 1);
	assert_int_equal(o.cfg.build_jobs, 4);
	assert_int_equal(cli_run_option("t", 'j', "0", &o), -1);
	assert_int_equal(cli_run_option("t", 'j', "9x", &o), -1);
	assert_false(o.cfg.build_no_sandbox);
	assert_int_equal(cli_run_option("t", CLI_OPT_NO_SANDBOX, NULL, &o), 1);
	assert_true(o.cfg.build_no_sandbox);
	assert_int_equal(cli_run_option("t", CLI_OPT_BUILD_TIMEOUT, "90", &o), 1);
	assert_int_equal(o.cfg.build_timeout_s, 90);
	assert_int_equal(cli_run_option("t", CLI_OPT_BUILD_TIMEOUT, "0", &o), -1);
	assert_int_equal(o.cfg.build_jobs, 4);
	assert_int_equal(cli_run_option("t", CLI_OPT_JOB_DIR, "d", &o), 1);
	assert_string_equal(o.job_dir, "d");
	assert_int_equal(cli_run_option("t", 'q', NULL, &o), 1);
	assert_true(o.quiet);
	assert_int_equal(cli_run_option("t", 'h', NULL, &o), 0);
	assert_int_equal(cli_run_option("t", CLI_OPT_FIRST_FREE, "x", &o), 0);
}

static void test_default_job_dir(void **state)
{
	(void)state;
	_cleanup_free_ char *d = cli_default_job_dir("my-job");
	_cleanup_free_ char *prefix = NULL;
	assert_true(asprintf(&prefix, "%s/build/jobs/my-job-", cwd) > 0);
	assert_non_null(d);
	assert_true(strncmp(d, prefix, strlen(prefix)) == 0);
	/* YYYYmmddTHHMMSSZ */
	assert_int_equal(strlen(d) - strlen(prefix), 16);
	assert_int_equal(d[strlen(d) - 1], 'Z');
}

static const char *str(json_object *o, const char *k)
{
	json_object *v = NULL;
	json_object_object_get_ex(o, k, &v);
	return v ? json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN |
							 JSON_C_TO_STRING_NOSLASHESCAPE)
		 : "";
}

static void test_base_from_arg(void **state)
{
	(void)state;
	struct sl_error err = {0};
	json_object *k = NULL;
	assert_int_equal(cli_base_from_arg(NULL, &k, &err), 0);
	assert_string_equal(str(k, "source"), "\"debian:linux-source-6.1\"");
	assert_string_equal(str(k, "patches"), "[{\"series\":\"linux-6.1\"}]");
	assert_string_equal(str(k, "config"), "{\"builtin\":\"linux-6.1\"}");
	json_object_put(k);
	assert_int_equal(cli_base_from_arg("debian:linux-source-6.1", &k, &err), 0);
	assert_string_equal(str(k, "patches"), "[]");
	assert_string_equal(str(k, "config"), "{\"builtin\":\"linux-6.1\"}");
	json_object_put(k);
	/* the 6.12 base: stock 6.12 with its own fragment (sched_ext, BTF) */
	assert_int_equal(cli_base_from_arg("debian:linux-source-6.12", &k, &err), 0);
	assert_string_equal(str(k, "source"), "\"debian:linux-source-6.12\"");
	assert_string_equal(str(k, "patches"), "[]");
	assert_string_equal(str(k, "config"), "{\"builtin\":\"linux-6.12\"}");
	json_object_put(k);

	FILE *f = fopen("l.tar.xz", "w");
	fclose(f);
	assert_int_equal(cli_base_from_arg("tarball:l.tar.xz", &k, &err), 0);
	_cleanup_free_ char *want = NULL;
	assert_true(asprintf(&want, "\"tarball:%s/l.tar.xz\"", cwd) > 0);
	assert_string_equal(str(k, "source"), want);
	json_object_put(k);
	assert_true(cli_base_from_arg("tarball:missing.tar.xz", &k, &err) < 0);
	assert_int_equal(err.kind, ERR_NOT_FOUND);
	assert_true(cli_base_from_arg("git:nowhere", &k, &err) < 0);
	assert_non_null(strstr(err.message, "git:PATH@REF"));
	assert_true(cli_base_from_arg("nonsense", &k, &err) < 0);
	assert_string_equal(err.path, "--base");

	/* FILE.json: relative paths made absolute against the file's dir. */
	const char *base_json = "{\"source\": \"tarball:l.tar\", \"patches\": [{\"series\": "
				"\"linux-6.1\"}, {\"path\": \"p/my.patch\"}], \"config\": "
				"{\"path\": \"c.config\"}}";
	assert_int_equal(fs_mkdir_p("sub", &err), 0);
	assert_int_equal(fs_write_file_atomic("sub/base.json", base_json, strlen(base_json), &err),
			 0);
	assert_int_equal(cli_base_from_arg("sub/base.json", &k, &err), 0);
	_cleanup_free_ char *want_src = NULL, *want_p = NULL, *want_c = NULL;
	assert_true(asprintf(&want_src, "\"tarball:%s/sub/l.tar\"", cwd) > 0);
	assert_true(asprintf(&want_p,
			     "[{\"series\":\"linux-6.1\"},{\"path\":\"%s/sub/p/my.patch\"}]",
			     cwd) > 0);
	assert_true(asprintf(&want_c, "{\"path\":\"%s/sub/c.config\"}", cwd) > 0);
	assert_string_equal(str(k, "source"), want_src);
	assert_string_equal(str(k, "patches"), want_p);
	assert_string_equal(str(k, "config"), want_c);
	json_object_put(k);
	assert_int_equal(fs_write_file_atomic("sub/bad.json", "[1]", 3, &err), 0);
	assert_true(cli_base_from_arg("sub/bad.json", &k, &err) < 0);
	assert_non_null(strstr(err.message, "kernel object"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_path_absolute),
	    cmocka_unit_test(test_run_option),
	    cmocka_unit_test(test_default_job_dir),
	    cmocka_unit_test(test_base_from_arg),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
