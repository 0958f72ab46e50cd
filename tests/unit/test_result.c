/* The result document as the runner assembles it: placement_order() for
 * result.order, result_* and run_record_* for the pieces, in the key order
 * the runner has always written (readers and golden files see it). No
 * guests: the guest's outcome is made up. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <cmocka.h>

#include "helpers/job_fixture.h"
#include "run/placement.h"
#include "run/result.h"
#include "run/run_record.h"

static const char *spec_text =
    "{\"name\":\"t\",\"baseline\":\"base\",\"repeat\":3,\"kernels\":" JOB_FIXTURE_KERNELS ","
    "\"variants\":{\"base\":{\"kernel\":\"k\",\"features\":[\"NO_RT_PUSH\"]},"
    "\"push\":{\"kernel\":\"k\",\"features\":[\"RT_PUSH\"]},"
    "\"wake\":{\"kernel\":\"k\",\"features\":[]}},"
    "\"workloads\":[{\"tool\":\"rt-migrate-test\"}]}";

static json_object *get(json_object *o, const char *k)
{
	json_object *v = NULL;
	json_object_object_get_ex(o, k, &v);
	return v;
}

/* The object's keys, comma-separated, in order. */
static void keys_of(json_object *o, char *buf, size_t len)
{
	buf[0] = '\0';
	json_object_object_foreach(o, k, v)
	{
		(void)v;
		size_t n = strlen(buf);
		snprintf(buf + n, len - n, "%s%s", n ? "," : "", k);
	}
}

static void test_order_interleaves(void **state)
{
	(void)state;
	_cleanup_job_ struct job *job = job_fixture(spec_text);
	assert_non_null(job);
	struct run_key *keys = NULL;
	size_t n = 0;
	assert_int_equal(placement_order(job, &keys, &n), 0);
	const char *want[] = {"base#0", "push#0", "wake#0", "wake#1", "push#1",
			      "base#1", "base#2", "push#2", "wake#2"};
	assert_int_equal(n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < n; i++) {
		char buf[RUN_KEY_STRLEN];
		assert_string_equal(run_key_format(&keys[i], buf), want[i]);
	}
	free(keys);
	/* Rounds [4, 6): the fifth round starts with the last variant. */
	assert_int_equal(placement_order_rounds(job, 4, 6, &keys, &n), 0);
	assert_int_equal(n, 6);
	char buf[RUN_KEY_STRLEN];
	assert_string_equal(run_key_format(&keys[0], buf), "base#4");
	assert_string_equal(run_key_format(&keys[3], buf), "wake#5");
	free(keys);
	assert_int_equal(placement_order_rounds(job, 2, 2, &keys, &n), 0);
	assert_int_equal(n, 0);
	free(keys);
}

static json_object *made_up_run(const struct job *job, const struct run_key *k, const char *host,
				bool remote)
{
	char id[RUN_RECORD_ID_LEN], key[RUN_KEY_STRLEN];
	run_record_id("/jobs/j1", run_key_format(k, key), id);
	assert_int_equal(strlen(id), RUN_RECORD_ID_LEN - 1);
	json_object *run = run_record_new(k, id, host, "2024-01-01T00:00:00Z");
	if (remote) {
		struct volume_ref kv = {.name = "kernel-abc", .uploaded = true, .bytes = 10},
				  iv = {.name = "initrd-def", .seconds = 0.5};
		run_record_add_volumes(run, &kv, &iv);
	}
	char console[6000];
	memset(console, 'c', sizeof(console) - 1);
	console[sizeof(console) - 1] = '\0';
	struct guest_outcome out = {
	    .status = "hung",
	    .reason = (char *)"the deadline passed",
	    .console_tail = console,
	    .frames = json_object_new_array(),
	    .agent_start_s = 1.5,
	};
	run_record_set_outcome(run, job, "tcg", &out, 3.0);
	json_object_put(out.frames);
	return run;
}

static void test_run_record_keys(void **state)
{
	(void)state;
	_cleanup_job_ struct job *job = job_fixture(spec_text);
	assert_non_null(job);
	struct run_key k = {"push", 1};
	json_object *run = made_up_run(job, &k, "qemu+ssh://b/system", true);
	char keys[512];
	keys_of(run, keys, sizeof(keys));
	assert_string_equal(keys,
			    "key,run_id,repeat,status,host,started_at,volumes,accelerator,"
			    "reason,boot_seconds,duration_seconds,kernel_events,host_interference,"
			    "noisy,workloads,"
			    "console_excerpt");
	assert_string_equal(json_object_get_string(get(run, "key")), "push#1");
	assert_int_equal(json_object_get_int(get(run, "repeat")), 1);
	assert_string_equal(json_object_get_string(get(run, "status")), "hung");
	assert_int_equal(json_object_get_string_len(get(run, "console_excerpt")),
			 RUN_RECORD_CONSOLE_MAX);
	keys_of(get(get(run, "volumes"), "initrd"), keys, sizeof(keys));
	assert_string_equal(keys, "volume,uploaded,bytes,seconds");
	json_object_put(run);
}

static void test_document_keys(void **state)
{
	(void)state;
	_cleanup_job_ struct job *job = job_fixture(spec_text);
	assert_non_null(job);
	json_object *result = result_new(job);
	struct kbuild_artifact art = {.cached = true};
	result_add_kernel(result, "k", &art);
	result_set_environment(result, NULL, "tcg");
	struct run_key *order = NULL;
	size_t n = 0;
	assert_int_equal(placement_order(job, &order, &n), 0);
	result_begin_runs(result, job, order, n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(
		    result_add_run(result, &order[i],
				   made_up_run(job, &order[i], i % 2 ? "h2" : "h1", false)),
		    0);
	struct run_key stray = {"nope", 0};
	assert_int_equal(result_add_run(result, &stray, json_object_new_object()), -ENOENT);
	struct placement pl = {.job_host = -1, .retries = 2};
	placement_describe(&pl, result);
	assert_int_equal(result_compare(result, job, NULL), 0);
	result_finish(result, "2024-01-01T00:00:00Z", "2024-01-01T01:00:00Z");

	char keys[512];
	keys_of(result, keys, sizeof(keys));
	assert_string_equal(keys, "schema,job,kernels,environment,order,variants,placement,"
				  "comparisons,verdict,verdict_reasons,started_at,finished_at");
	assert_string_equal(json_object_get_string(get(result, "schema")), "schedlab.result/v1");
	assert_true(json_object_get_boolean(get(get(get(result, "kernels"), "k"), "cached")));
	assert_string_equal(
	    json_object_get_string(json_object_array_get_idx(get(result, "order"), 3)), "wake#1");
	json_object *push = get(get(result, "variants"), "push");
	keys_of(push, keys, sizeof(keys));
	assert_string_equal(keys, "kernel,features,runs");
	assert_int_equal(json_object_array_length(get(push, "runs")), 3);
	json_object *p = get(result, "placement");
	keys_of(p, keys, sizeof(keys));
	assert_string_equal(keys, "mode,crossed_hosts,hosts,retried_runs");
	assert_string_equal(json_object_get_string(get(p, "mode")), "together");
	assert_true(json_object_get_boolean(get(p, "crossed_hosts")));
	assert_int_equal(json_object_array_length(get(p, "hosts")), 2);
	assert_int_equal(json_object_get_int(get(p, "retried_runs")), 2);
	/* Every run hung: nothing to compare, so no pass. */
	assert_string_not_equal(json_object_get_string(get(result, "verdict")), "pass");
	/* The job as run, and each variant's kernel and features from it. */
	assert_ptr_equal(get(result, "job"), job->spec);
	assert_string_equal(json_object_get_string(get(push, "kernel")), "k");
	assert_string_equal(
	    json_object_get_string(json_object_array_get_idx(get(push, "features"), 0)), "RT_PUSH");
	free(order);
	json_object_put(result);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_order_interleaves),
	    cmocka_unit_test(test_run_record_keys),
	    cmocka_unit_test(test_document_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
