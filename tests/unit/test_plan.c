/* plan_build(): features with the hrtick shorthand, rt-tests --json files,
 * maxerr, uid and timeouts; plan_deadline_s(). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <string.h>
#include <cmocka.h>

#include "helpers/job_fixture.h"
#include "run/run_plan.h"

static const char *spec_text =
    "{\"name\":\"t\",\"baseline\":\"base\",\"kernels\":" JOB_FIXTURE_KERNELS ",\"variants\":{"
    "\"base\":{\"kernel\":\"k\",\"features\":[\"NO_RT_PUSH\"],\"hrtick\":false},"
    "\"hr\":{\"kernel\":\"k\",\"features\":[\"HRTICK\"],\"hrtick\":false,"
    "\"uid_shares\":{\"1000\":2048},\"sched_tunables\":{\"latency_ns\":6000000}}},"
    "\"workloads\":["
    "{\"name\":\"rtm\",\"tool\":\"rt-migrate-test\",\"args\":[\"-p\",\"60\",\"3\"],"
    "\"timeout_s\":30,\"uid\":0,\"maxerr_us\":500},"
    "{\"name\":\"hogs\",\"tool\":\"share\",\"args\":[\"--seconds\",\"2\"],\"timeout_s\":20,"
    "\"uid\":1000}]}";

static json_object *field(json_object *o, const char *k)
{
	json_object *v = NULL;
	assert_true(json_object_object_get_ex(o, k, &v));
	return v;
}

static void test_features_and_argv(void **state)
{
	(void)state;
	_cleanup_job_ struct job *job = job_fixture(spec_text);
	assert_non_null(job);
	json_object *plan = NULL;
	struct sl_error err = {0};
	assert_int_equal(plan_build(job, "base", "r1", &plan, &err), 0);
	json_object *f = field(plan, "features");
	assert_int_equal(json_object_array_length(f), 2);
	assert_string_equal(json_object_get_string(json_object_array_get_idx(f, 1)), "NO_HRTICK");
	json_object *w0 = json_object_array_get_idx(field(plan, "workloads"), 0);
	json_object *argv = field(w0, "argv");
	assert_string_equal(json_object_get_string(json_object_array_get_idx(argv, 0)),
			    "/usr/bin/rt-migrate-test");
	assert_string_equal(json_object_get_string(json_object_array_get_idx(argv, 1)),
			    "--json=/tmp/w0.json");
	/* maxerr_us is schedlab's threshold, not passed to the tool. */
	assert_string_equal(json_object_get_string(json_object_array_get_idx(argv, 2)), "-p");
	assert_string_equal(json_object_get_string(field(w0, "json_out")), "/tmp/w0.json");
	json_object *w1 = json_object_array_get_idx(field(plan, "workloads"), 1);
	assert_int_equal(json_object_get_int(field(w1, "uid")), 1000);
	assert_false(json_object_object_get_ex(w1, "json_out", NULL));
	assert_int_equal(plan_deadline_s(plan, true), 90 + 35 + 25);
	json_object_put(plan);
}

static void test_explicit_hrtick_feature_wins(void **state)
{
	(void)state;
	_cleanup_job_ struct job *job = job_fixture(spec_text);
	assert_non_null(job);
	json_object *plan = NULL;
	assert_int_equal(plan_build(job, "hr", "r2", &plan, NULL), 0);
	json_object *f = field(plan, "features");
	assert_int_equal(json_object_array_length(f), 1);
	assert_string_equal(json_object_get_string(json_object_array_get_idx(f, 0)), "HRTICK");
	assert_int_equal(json_object_get_int(field(field(plan, "uid_shares"), "1000")), 2048);
	assert_int_equal(json_object_get_int(field(field(plan, "tunables"), "latency_ns")),
			 6000000);
	json_object_put(plan);
}

/* stress-ng writes YAML; it is in the initramfs only for jobs that run it. */
static void test_stress_ng_yaml_and_initramfs_tools(void **state)
{
	(void)state;
	_cleanup_job_ struct job *job =
	    job_fixture("{\"name\":\"t\",\"baseline\":\"a\",\"kernels\":" JOB_FIXTURE_KERNELS
			",\"variants\":{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\"}},"
			"\"workloads\":[{\"name\":\"hb\",\"tool\":\"hackbench\",\"args\":[\"-p\"],"
			"\"timeout_s\":30,\"uid\":0},{\"name\":\"sng\",\"tool\":\"stress-ng\","
			"\"args\":[\"--switch\",\"1\",\"-t\",\"2\",\"--metrics\"],\"timeout_s\":30,"
			"\"uid\":0}]}");
	assert_non_null(job);
	json_object *plan = NULL;
	assert_int_equal(plan_build(job, "a", "r4", &plan, NULL), 0);
	json_object *hb = json_object_array_get_idx(field(plan, "workloads"), 0);
	json_object *sng = json_object_array_get_idx(field(plan, "workloads"), 1);
	assert_false(json_object_object_get_ex(hb, "json_out", NULL));
	assert_string_equal(json_object_get_string(json_object_array_get_idx(field(hb, "argv"), 0)),
			    "/usr/bin/hackbench");
	json_object *argv = field(sng, "argv");
	assert_string_equal(json_object_get_string(json_object_array_get_idx(argv, 1)),
			    "--yaml=/tmp/w1.yaml");
	assert_string_equal(json_object_get_string(field(sng, "json_out")), "/tmp/w1.yaml");
	json_object_put(plan);

	const char *tools[16];
	size_t n = plan_initramfs_tools(job, tools, 16);
	assert_null(tools[n]);
	assert_string_equal(tools[n - 1], "/usr/bin/stress-ng");
	bool hackbench = false;
	for (size_t i = 0; i < n; i++)
		hackbench |= strcmp(tools[i], "/usr/bin/hackbench") == 0;
	assert_true(hackbench);

	_cleanup_job_ struct job *plain = job_fixture(spec_text);
	size_t m = plan_initramfs_tools(plain, tools, 16);
	assert_int_equal(m, n - 1);
	for (size_t i = 0; i < m; i++)
		assert_string_not_equal(tools[i], "/usr/bin/stress-ng");
}

/* cyclictest's stdout histogram goes to /dev/null (the metrics read its
 * JSON file) before the job's args; a load carries load, nice and cpus. */
static void test_cyclictest_and_load_argv(void **state)
{
	(void)state;
	_cleanup_job_ struct job *job =
	    job_fixture("{\"name\":\"t\",\"baseline\":\"a\",\"kernels\":" JOB_FIXTURE_KERNELS
			",\"variants\":{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\"}},"
			"\"workloads\":[{\"name\":\"b\",\"tool\":\"burn\",\"load\":true,"
			"\"nice\":19,\"cpus\":[1]},{\"name\":\"ct\",\"tool\":\"cyclictest\","
			"\"args\":[\"-h\",\"100\"]}]}");
	assert_non_null(job);
	json_object *plan = NULL;
	assert_int_equal(plan_build(job, "a", "r6", &plan, NULL), 0);
	json_object *b = json_object_array_get_idx(field(plan, "workloads"), 0);
	json_object *ct = json_object_array_get_idx(field(plan, "workloads"), 1);
	assert_string_equal(json_object_to_json_string(field(ct, "argv")),
			    "[ \"\\/usr\\/bin\\/cyclictest\", \"--json=\\/tmp\\/w1.json\", "
			    "\"--histfile=\\/dev\\/null\", \"-h\", \"100\" ]");
	assert_false(json_object_object_get_ex(ct, "load", NULL));
	assert_true(json_object_get_boolean(field(b, "load")));
	assert_int_equal(json_object_get_int(field(b, "nice")), 19);
	assert_string_equal(json_object_to_json_string(field(b, "cpus")), "[ 1 ]");
	json_object_put(plan);
}

/* perf-bench-sched runs `perf bench sched <job's args>`; perf is in the
 * initramfs only for jobs that run it. */
static void test_perf_bench_sched_argv(void **state)
{
	(void)state;
	_cleanup_job_ struct job *job =
	    job_fixture("{\"name\":\"t\",\"baseline\":\"a\",\"kernels\":" JOB_FIXTURE_KERNELS
			",\"variants\":{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\"}},"
			"\"workloads\":[{\"name\":\"pb\",\"tool\":\"perf-bench-sched\","
			"\"args\":[\"pipe\",\"-l\",\"10\"],\"timeout_s\":30,\"uid\":0}]}");
	assert_non_null(job);
	json_object *plan = NULL;
	assert_int_equal(plan_build(job, "a", "r5", &plan, NULL), 0);
	json_object *pb = json_object_array_get_idx(field(plan, "workloads"), 0);
	assert_false(json_object_object_get_ex(pb, "json_out", NULL));
	assert_string_equal(
	    json_object_to_json_string(field(pb, "argv")),
	    "[ \"\\/usr\\/bin\\/perf\", \"bench\", \"sched\", \"pipe\", \"-l\", \"10\" ]");
	json_object_put(plan);
	const char *tools[16];
	size_t n = plan_initramfs_tools(job, tools, 16);
	assert_string_equal(tools[n - 1], "/usr/bin/perf");
	_cleanup_job_ struct job *plain = job_fixture(spec_text);
	size_t m = plan_initramfs_tools(plain, tools, 16);
	assert_int_equal(m, n - 1);
	for (size_t i = 0; i < m; i++)
		assert_string_not_equal(tools[i], "/usr/bin/perf");
}

/* "schedstat": true on a kernel reaches the plan of the variants that boot it. */
static void test_schedstat_plan(void **state)
{
	(void)state;
	_cleanup_job_ struct job *job = job_fixture(
	    "{\"name\":\"t\",\"baseline\":\"a\",\"kernels\":{\"k\":{\"source\":\"debian:linux-"
	    "source-6.1\",\"schedstat\":true},\"p\":{\"source\":\"debian:linux-source-6.1\"}},"
	    "\"variants\":{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"p\"}},"
	    "\"workloads\":[{\"name\":\"hb\",\"tool\":\"hackbench\",\"args\":[\"-p\"],"
	    "\"timeout_s\":30,\"uid\":0}]}");
	assert_non_null(job);
	json_object *plan = NULL;
	assert_int_equal(plan_build(job, "a", "r6", &plan, NULL), 0);
	assert_true(json_object_get_boolean(field(plan, "schedstat")));
	json_object_put(plan);
	assert_int_equal(plan_build(job, "b", "r7", &plan, NULL), 0);
	assert_false(json_object_object_get_ex(plan, "schedstat", NULL));
	json_object_put(plan);
}

static void test_unknown_variant(void **state)
{
	(void)state;
	_cleanup_job_ struct job *job = job_fixture(spec_text);
	assert_non_null(job);
	json_object *plan = NULL;
	struct sl_error err = {0};
	assert_true(plan_build(job, "nope", "r3", &plan, &err) < 0);
	assert_non_null(strstr(err.message, "'nope'"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_features_and_argv),
	    cmocka_unit_test(test_explicit_hrtick_feature_wins),
	    cmocka_unit_test(test_stress_ng_yaml_and_initramfs_tools),
	    cmocka_unit_test(test_perf_bench_sched_argv),
	    cmocka_unit_test(test_cyclictest_and_load_argv),
	    cmocka_unit_test(test_schedstat_plan),
	    cmocka_unit_test(test_unknown_variant),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
