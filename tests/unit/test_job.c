/* job_expand(): the examples, the CI shorthand, defaults, and the errors
 * that name a JSON path. Uses the real results-schema/job.schema.json. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "job/job.h"
#include "util/fs.h"

static json_object *field(json_object *o, const char *k)
{
	json_object *v = NULL;
	json_object_object_get_ex(o, k, &v);
	return v;
}

static json_object *load_example(const char *name)
{
	_cleanup_free_ char *root = fs_data_dir();
	_cleanup_free_ char *ex = fs_path_join(root, "examples");
	_cleanup_free_ char *path = fs_path_join(ex, name);
	json_object *o = json_object_from_file(path);
	assert_non_null(o);
	return o;
}

static void expect_error(const char *text, enum job_origin origin, const char *path,
			 const char *needle)
{
	json_object *spec = json_tokener_parse(text);
	assert_non_null(spec);
	json_object *out = NULL;
	struct sl_error err = {0};
	int r = job_expand(spec, origin, ".", NULL, &out, &err);
	if (r == 0)
		fail_msg("expected an error at %s for %s", path, text);
	assert_null(out);
	if (strcmp(err.path, path) != 0)
		fail_msg("error path '%s' (message '%s'), expected '%s'", err.path, err.message,
			 path);
	if (needle && !strstr(err.message, needle))
		fail_msg("message '%s' lacks '%s'", err.message, needle);
	json_object_put(spec);
}

#define KERNEL "{\"source\":\"debian:linux-source-6.1\",\"patches\":[{\"series\":\"linux-6.1\"}]}"
#define WL     "[{\"tool\":\"rt-migrate-test\",\"args\":[\"-p\",\"60\",\"3\"]}]"
#define JOB(variants, extra)                                                                       \
	"{\"name\":\"t\",\"kernels\":{\"k\":" KERNEL "},\"variants\":" variants                    \
	",\"baseline\":\"a\",\"workloads\":" WL extra "}"

static void test_examples_expand(void **state)
{
	(void)state;
	const char *names[] = {"seed-reproduction.json", "seed-reproduction-short.json",
			       "ablation.json", "ci-shorthand.json"};
	for (size_t i = 0; i < ELEMENTSOF(names); i++) {
		json_object *spec = load_example(names[i]);
		json_object *out = NULL;
		struct sl_error err = {0};
		if (job_expand(spec, JOB_ORIGIN_SERVICE, NULL, NULL, &out, &err) < 0)
			fail_msg("%s: %s: %s", names[i], err.path, err.message);
		assert_non_null(field(out, "variants"));
		assert_non_null(field(out, "baseline"));
		assert_int_equal(json_object_get_int(field(field(out, "guest"), "vcpus")), 2);
		json_object_put(out);
		json_object_put(spec);
	}
}

static void test_shorthand_and_defaults(void **state)
{
	(void)state;
	json_object *spec = json_tokener_parse(
	    "{\"name\":\"ci\",\"base\":" KERNEL ",\"patches\":[{\"name\":\"fix.patch\","
	    "\"content\":\"--- a/x\\n+++ b/x\\n\"}],\"workloads\":" WL "}");
	json_object *out = NULL;
	struct sl_error err = {0};
	assert_int_equal(job_expand(spec, JOB_ORIGIN_SERVICE, NULL, NULL, &out, &err), 0);
	json_object *kernels = field(out, "kernels");
	assert_int_equal(json_object_array_length(field(field(kernels, "base"), "patches")), 1);
	json_object *pp = field(field(kernels, "patched"), "patches");
	assert_int_equal(json_object_array_length(pp), 2);
	assert_string_equal(json_object_get_string(field(json_object_array_get_idx(pp, 1), "name")),
			    "fix.patch");
	assert_string_equal(json_object_get_string(field(out, "baseline")), "baseline");
	assert_string_equal(
	    json_object_get_string(field(field(field(out, "variants"), "patched"), "kernel")),
	    "patched");
	json_object *w = json_object_array_get_idx(field(out, "workloads"), 0);
	assert_string_equal(json_object_get_string(field(w, "name")), "rt-migrate-test");
	assert_int_equal(json_object_get_int(field(w, "timeout_s")), 120);
	assert_int_equal(json_object_get_int(field(out, "repeat")), 3);
	assert_int_equal(json_object_get_int(field(field(out, "guest"), "memory_mb")), 512);
	json_object_put(out);
	json_object_put(spec);
}

static void test_cli_path_is_inlined(void **state)
{
	(void)state;
	char dir[] = "/tmp/schedlab-test-job-XXXXXX";
	assert_non_null(mkdtemp(dir));
	_cleanup_free_ char *p = fs_path_join(dir, "my.patch");
	assert_int_equal(fs_write_file_atomic(p, "hello\n", 6, NULL), 0);
	json_object *spec = json_tokener_parse("{\"name\":\"ci\",\"base\":" KERNEL
					       ",\"patches\":[{\"path\":\"my.patch\"}],"
					       "\"workloads\":" WL "}");
	json_object *out = NULL;
	struct sl_error err = {0};
	assert_int_equal(job_expand(spec, JOB_ORIGIN_CLI, dir, NULL, &out, &err), 0);
	json_object *pp = field(field(field(out, "kernels"), "patched"), "patches");
	json_object *item = json_object_array_get_idx(pp, 1);
	assert_string_equal(json_object_get_string(field(item, "name")), "my.patch");
	assert_string_equal(json_object_get_string(field(item, "content")), "hello\n");
	json_object_put(out);
	/* The service never reads local files. */
	assert_true(job_expand(spec, JOB_ORIGIN_SERVICE, dir, NULL, &out, &err) < 0);
	assert_non_null(strstr(err.message, "Local file paths"));
	json_object_put(spec);
	fs_rm_rf(dir, NULL);
}

static void test_errors_name_the_path(void **state)
{
	(void)state;
	expect_error(JOB("{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"nope\"}}", ""),
		     JOB_ORIGIN_SERVICE, "$.variants.b", "'nope'");
	expect_error("{\"name\":\"t\",\"kernels\":{\"k\":" KERNEL "},\"variants\":{\"x\":{"
		     "\"kernel\":\"k\"},\"y\":{\"kernel\":\"k\"}},\"baseline\":\"a\","
		     "\"workloads\":" WL "}",
		     JOB_ORIGIN_SERVICE, "$.baseline", "'a'");
	expect_error(JOB("{\"a\":{\"kernel\":\"k\"}}", ""), JOB_ORIGIN_SERVICE, "$.variants",
		     "at least one other variant");
	expect_error(JOB("{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\"}}",
			 ",\"gates\":[{\"workload\":\"cyclictest\",\"metric\":\"x\","
			 "\"threshold\":1}]"),
		     JOB_ORIGIN_SERVICE, "$.gates[0].workload", "'cyclictest'");
	expect_error("{\"name\":\"ci\",\"base\":" KERNEL ",\"patches\":[{\"name\":\"../../etc/"
		     "passwd\",\"content\":\"x\"}],\"workloads\":" WL "}",
		     JOB_ORIGIN_SERVICE, "$.patches[0].name", NULL);
	expect_error(
	    JOB("{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\"}}", ",\"guest\":{\"vcpus\":65}"),
	    JOB_ORIGIN_SERVICE, "$.guest.vcpus", NULL);
	expect_error(JOB("{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\"}}",
			 ",\"repeat\":50,\"bogus\":1"),
		     JOB_ORIGIN_SERVICE, "$.bogus", "not an allowed member");
}

static void test_variant_settings_are_checked(void **state)
{
	(void)state;
	expect_error(JOB("{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\",\"uid_shares\":"
			 "{\"70000\":1024}}}",
			 ""),
		     JOB_ORIGIN_SERVICE, "$.variants.b.uid_shares.70000", "70000");
	expect_error(JOB("{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\",\"uid_shares\":"
			 "{\"1000\":0}}}",
			 ""),
		     JOB_ORIGIN_SERVICE, "$.variants.b.uid_shares.1000", NULL);
	expect_error(JOB("{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\",\"sched_tunables\":"
			 "{\"bogus_ns\":1}}}",
			 ""),
		     JOB_ORIGIN_SERVICE, "$.variants.b.sched_tunables.bogus_ns", "bogus_ns");
	expect_error(
	    JOB("{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\",\"hrtick\":\"yes\"}}", ""),
	    JOB_ORIGIN_SERVICE, "$.variants.b.hrtick", NULL);
}

static void test_guest_time_budget(void **state)
{
	(void)state;
	struct job_limits lim = *job_default_limits();
	lim.max_guest_seconds = 100;
	json_object *spec = json_tokener_parse(JOB("{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":"
						   "\"k\"}}",
						   ",\"repeat\":2"));
	json_object *out = NULL;
	struct sl_error err = {0};
	assert_true(job_expand(spec, JOB_ORIGIN_SERVICE, NULL, &lim, &out, &err) < 0);
	assert_string_equal(err.path, "$.repeat");
	assert_non_null(strstr(err.message, "over the limit of 100 s"));
	json_object_put(spec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_examples_expand),
	    cmocka_unit_test(test_shorthand_and_defaults),
	    cmocka_unit_test(test_cli_path_is_inlined),
	    cmocka_unit_test(test_errors_name_the_path),
	    cmocka_unit_test(test_variant_settings_are_checked),
	    cmocka_unit_test(test_guest_time_budget),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
