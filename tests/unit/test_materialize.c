/* materialize_kernel(): a CLI job's patch named by a path relative to the job
 * file's directory (not the current one) ends up, through job_expand()'s
 * inlining, as an absolute path under the job's working directory with the
 * file's content; built-in series and fragments come from the data dir. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "run/materialize.h"
#include "util/fs.h"

#define PATCH "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"

static void test_relative_patch_becomes_absolute(void **state)
{
	(void)state;
	char tmpl[] = "/tmp/schedlab-materialize-XXXXXX";
	assert_non_null(mkdtemp(tmpl));
	_cleanup_free_ char *tmp = realpath(tmpl, NULL);
	_cleanup_free_ char *data_dir = fs_data_dir();
	_cleanup_free_ char *jobs = fs_path_join(tmp, "jobs");
	_cleanup_free_ char *patch = fs_path_join(jobs, "fix.patch");
	assert_int_equal(fs_mkdir_p(jobs, NULL), 0);
	assert_int_equal(fs_write_file_atomic(patch, PATCH, strlen(PATCH), NULL), 0);

	/* The job file lives in jobs/; the current directory is elsewhere. */
	_cleanup_json_ json_object *spec = json_tokener_parse(
	    "{\"name\":\"t\",\"baseline\":\"a\",\"kernels\":{\"k\":{\"source\":"
	    "\"debian:linux-source-6.1\",\"patches\":[{\"series\":\"linux-6.1\"},"
	    "{\"path\":\"fix.patch\"}],\"config\":{\"content\":\"CONFIG_X=y\\n\"}}},"
	    "\"variants\":{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\"}},"
	    "\"workloads\":[{\"tool\":\"cyclictest\"}]}");
	assert_non_null(spec);
	_cleanup_job_ struct job *job = NULL;
	struct sl_error err = {0};
	if (job_expand(spec, JOB_ORIGIN_CLI, jobs, NULL, &job, &err) < 0)
		fail_msg("%s: %s", err.path, err.message);

	char cwd[PATH_MAX];
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(tmp), 0);
	struct kernel_spec *ks = NULL;
	/* A relative job directory: the spec's paths are absolute all the same. */
	int r = materialize_kernel(&job->kernels[0], "work", data_dir, &ks, &err);
	assert_int_equal(chdir(cwd), 0);
	if (r < 0)
		fail_msg("%s: %s", err.path, err.message);

	size_t n = 0;
	while (ks->patches[n])
		n++;
	assert_true(n >= 2);
	for (size_t i = 0; i < n; i++)
		assert_true(ks->patches[i][0] == '/');
	/* The built-in series first, from the data dir; then the inlined patch. */
	_cleanup_free_ char *gk = fs_path_join(data_dir, "guest-kernel");
	_cleanup_free_ char *gk_real = realpath(gk, NULL);
	assert_non_null(gk_real);
	assert_memory_equal(ks->patches[0], gk_real, strlen(gk_real));
	char want[PATH_MAX];
	snprintf(want, sizeof(want), "%s/work/kernels/k/%04zu-fix.patch", tmp, (size_t)2);
	assert_string_equal(ks->patches[n - 1], want);
	_cleanup_free_ char *text = NULL;
	assert_int_equal(fs_read_file(ks->patches[n - 1], 1 << 20, &text, NULL, NULL), 0);
	assert_string_equal(text, PATCH);
	/* An unnamed inline config is 0000-config. */
	snprintf(want, sizeof(want), "%s/work/kernels/k/0000-config", tmp);
	assert_string_equal(ks->config, want);
	assert_string_equal(ks->source, "debian:linux-source-6.1");
	/* a user's patch: built in a copy of the tree's objects */
	assert_true(ks->untrusted);

	kernel_spec_free(ks);
	assert_int_equal(fs_rm_rf(tmp, NULL), 0);
}

/* The job text expanded for the service and its first kernel materialized
 * under tmp; fails the test on any error. */
static struct kernel_spec *materialize_first(const char *text, const char *tmp, bool *numa,
					     bool *schedstat)
{
	_cleanup_free_ char *data_dir = fs_data_dir();
	_cleanup_json_ json_object *spec = json_tokener_parse(text);
	assert_non_null(spec);
	_cleanup_job_ struct job *job = NULL;
	struct sl_error err = {0};
	if (job_expand(spec, JOB_ORIGIN_SERVICE, NULL, NULL, &job, &err) < 0)
		fail_msg("%s: %s", err.path, err.message);
	*numa = job->kernels[0].numa;
	*schedstat = job->kernels[0].schedstat;
	struct kernel_spec *ks = NULL;
	if (materialize_kernel(&job->kernels[0], tmp, data_dir, &ks, &err) < 0)
		fail_msg("%s: %s", err.path, err.message);
	return ks;
}

/* "schedstat": true: the kernel's fragment (built-in here) plus
 * CONFIG_SCHEDSTATS=y, written beside the job's other kernel files; the
 * built-in file itself is untouched. */
static void test_schedstat_fragment(void **state)
{
	(void)state;
	char tmpl[] = "/tmp/schedlab-materialize-XXXXXX";
	assert_non_null(mkdtemp(tmpl));
	_cleanup_free_ char *tmp = realpath(tmpl, NULL);
	_cleanup_free_ char *data_dir = fs_data_dir();
	bool numa, schedstat;
	struct kernel_spec *ks =
	    materialize_first("{\"name\":\"t\",\"baseline\":\"a\",\"kernels\":{\"k\":{\"source\":"
			      "\"debian:linux-source-6.1\",\"schedstat\":true}},"
			      "\"variants\":{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\"}},"
			      "\"workloads\":[{\"tool\":\"cyclictest\"}]}",
			      tmp, &numa, &schedstat);
	assert_true(schedstat && !numa);
	char want[PATH_MAX];
	snprintf(want, sizeof(want), "%s/kernels/k/schedstat.config", tmp);
	assert_string_equal(ks->config, want);
	_cleanup_free_ char *text = NULL, *builtin_text = NULL;
	assert_int_equal(fs_read_file(ks->config, 1 << 20, &text, NULL, NULL), 0);
	_cleanup_free_ char *gk = fs_path_join(data_dir, "guest-kernel/linux-6.1/schedlab.config");
	assert_int_equal(fs_read_file(gk, 1 << 20, &builtin_text, NULL, NULL), 0);
	size_t n = strlen(builtin_text);
	assert_memory_equal(text, builtin_text, n);
	assert_string_equal(text + n + (builtin_text[n - 1] != '\n'),
			    "# \"schedstat\": true (docs/workloads.md \"schedstat\")\n"
			    "CONFIG_SCHEDSTATS=y\n"
			    "# each exiting task's run delay, sent to the agent over taskstats "
			    "(generic\n# netlink: NET, no network device)\nCONFIG_NET=y\n"
			    "CONFIG_TASKSTATS=y\nCONFIG_TASK_DELAY_ACCT=y\n");
	assert_null(strstr(builtin_text, "CONFIG_SCHEDSTATS"));
	kernel_spec_free(ks);
	assert_int_equal(fs_rm_rf(tmp, NULL), 0);
}

/* guest.numa: every kernel of the job gets NUMA after its fragment (after
 * schedstat's lines when both), as numa.config. */
static void test_numa_fragment(void **state)
{
	(void)state;
	char tmpl[] = "/tmp/schedlab-materialize-XXXXXX";
	assert_non_null(mkdtemp(tmpl));
	_cleanup_free_ char *tmp = realpath(tmpl, NULL);
	bool numa, schedstat;
	struct kernel_spec *ks = materialize_first(
	    "{\"name\":\"t\",\"baseline\":\"a\",\"kernels\":{\"k\":{\"source\":"
	    "\"debian:linux-source-6.1\",\"schedstat\":true}},\"guest\":{\"vcpus\":2,\"numa\":"
	    "[{\"cpus\":\"0\",\"memory_mb\":256},{\"cpus\":\"1\",\"memory_mb\":256}]},"
	    "\"variants\":{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\"}},"
	    "\"workloads\":[{\"tool\":\"cyclictest\"}]}",
	    tmp, &numa, &schedstat);
	assert_true(schedstat && numa);
	char want[PATH_MAX];
	snprintf(want, sizeof(want), "%s/kernels/k/numa.config", tmp);
	assert_string_equal(ks->config, want);
	_cleanup_free_ char *text = NULL;
	assert_int_equal(fs_read_file(ks->config, 1 << 20, &text, NULL, NULL), 0);
	const char *ss = strstr(text, "CONFIG_SCHEDSTATS=y\n"),
		   *lines = strstr(text, "CONFIG_NUMA=y\n");
	assert_non_null(ss);
	assert_non_null(lines);
	assert_true(lines > ss);
	assert_non_null(strstr(lines, "CONFIG_X86_64_ACPI_NUMA=y\n"));
	kernel_spec_free(ks);
	assert_int_equal(fs_rm_rf(tmp, NULL), 0);
}

/* Only built-in series and configs make a trusted spec; an inline config
 * alone is untrusted (its strings reach make through auto.conf). An
 * untrusted spec's base keeps the built-in series and takes the built-in
 * config in place of an inline one. */
static void test_untrusted_marks(void **state)
{
	(void)state;
	char tmpl[] = "/tmp/schedlab-materialize-XXXXXX";
	assert_non_null(mkdtemp(tmpl));
	_cleanup_free_ char *tmp = realpath(tmpl, NULL);
	_cleanup_free_ char *data_dir = fs_data_dir();
	static const char *const configs[] = {"{\"builtin\":\"linux-6.1\"}",
					      "{\"content\":\"CONFIG_X=y\\n\"}",
					      "{\"builtin\":\"linux-6.1\"}"};
	static const char *const extra[] = {"", "", ",{\"name\":\"x.patch\",\"content\":\"x\"}"};
	_cleanup_free_ char *gk = fs_path_join(data_dir, "guest-kernel/linux-6.1");
	_cleanup_free_ char *builtin_cfg = fs_path_join(gk, "schedlab.config");
	for (int i = 0; i < 3; i++) {
		char text[1024];
		snprintf(text, sizeof(text),
			 "{\"name\":\"t\",\"baseline\":\"a\",\"kernels\":{\"k\":{\"source\":"
			 "\"debian:linux-source-6.1\",\"patches\":[{\"series\":\"linux-6.1\"}%s],"
			 "\"config\":%s}},\"variants\":{\"a\":{\"kernel\":\"k\"},"
			 "\"b\":{\"kernel\":\"k\"}},\"workloads\":[{\"tool\":\"cyclictest\"}]}",
			 extra[i], configs[i]);
		_cleanup_json_ json_object *spec = json_tokener_parse(text);
		assert_non_null(spec);
		_cleanup_job_ struct job *job = NULL;
		struct sl_error err = {0};
		if (job_expand(spec, JOB_ORIGIN_CLI, tmp, NULL, &job, &err) < 0)
			fail_msg("%s: %s", err.path, err.message);
		struct kernel_spec *ks = NULL;
		if (materialize_kernel(&job->kernels[0], tmp, data_dir, &ks, &err) < 0)
			fail_msg("%s: %s", err.path, err.message);
		assert_int_equal(ks->untrusted, i > 0);
		/* the trusted base: the built-in series and config, nothing inline */
		if (i == 0)
			assert_null(ks->base);
		else {
			assert_non_null(ks->base);
			assert_false(ks->base->untrusted);
			assert_null(ks->base->base);
			assert_string_equal(ks->base->source, ks->source);
			assert_string_equal(ks->base->config, builtin_cfg);
			size_t n = 0, nb = 0;
			while (ks->patches[n])
				n++;
			while (ks->base->patches[nb])
				nb++;
			assert_true(nb > 0);
			assert_int_equal(nb, i == 2 ? n - 1 : n);
			for (size_t p = 0; p < nb; p++)
				assert_string_equal(ks->base->patches[p], ks->patches[p]);
		}
		kernel_spec_free(ks);
	}
	assert_int_equal(fs_rm_rf(tmp, NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_relative_patch_becomes_absolute),
	    cmocka_unit_test(test_schedstat_fragment),
	    cmocka_unit_test(test_numa_fragment),
	    cmocka_unit_test(test_untrusted_marks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
