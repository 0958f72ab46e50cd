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
#include "job/jsonschema.h"
#include "job/schema_files.h"
#include "guest/console_events.h"
#include "run/placement.h"
#include "run/result.h"
#include "run/run_record.h"
#include "run/run_skip.h"

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
	assert_string_equal(
	    keys, "schema,job,kernels,environment,order,variants,placement,"
		  "comparisons,verdict,verdict_reasons,signatures,started_at,finished_at");
	assert_string_equal(json_object_get_string(get(result, "schema")), "schedlab.result/v1");
	assert_true(json_object_get_boolean(get(get(get(result, "kernels"), "k"), "cached")));
	assert_string_equal(
	    json_object_get_string(get(get(get(get(result, "kernels"), "k"), "build"), "status")),
	    "ok");
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

/* baseline "base" on kernel kb, candidates "p1" on kp and "p2" on kq */
static const char *three_kernels =
    "{\"name\":\"t\",\"baseline\":\"base\",\"repeat\":3,\"kernels\":{"
    "\"kb\":{\"source\":\"debian:linux-source-6.1\"},"
    "\"kp\":{\"source\":\"debian:linux-source-6.1\"},"
    "\"kq\":{\"source\":\"debian:linux-source-6.1\"}},"
    "\"variants\":{\"base\":{\"kernel\":\"kb\"},\"p1\":{\"kernel\":\"kp\"},"
    "\"p2\":{\"kernel\":\"kq\"}},"
    "\"workloads\":[{\"tool\":\"rt-migrate-test\"}],\"gates\":[]}";

#define KEY_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

static void add_built(json_object *result, const char *name)
{
	struct kbuild_artifact art = {.cached = true, .meta = json_object_new_object()};
	json_object_object_add(art.meta, "key", json_object_new_string(KEY_A));
	result_add_kernel(result, name, &art);
	json_object_put(art.meta);
}

static void add_failed(json_object *result, const char *name, const char *code, const char *message)
{
	struct sl_error err = {.kind = ERR_BUILD};
	snprintf(err.code, sizeof(err.code), "%s", code);
	snprintf(err.message, sizeof(err.message), "%s", message);
	struct kbuild_failure f = {.key = KEY_A, .patch = "0002-x.patch", .option = "CONFIG_KVM"};
	f.log_excerpt = strdup("checking file kernel/sched/rt.c\nHunk #1 FAILED at 1925.");
	result_add_kernel_failed(result, name, "debian:linux-source-6.1", &err, &f);
	kbuild_failure_clear(&f);
}

static void assert_schema_valid(json_object *result)
{
	_cleanup_json_ json_object *schema = NULL;
	struct sl_error err = {0};
	assert_int_equal(schema_load("result", &schema, &err), 0);
	if (jsonschema_validate(schema, result, &err) < 0)
		fail_msg("%s\n%s", err.message,
			 json_object_to_json_string_ext(result, JSON_C_TO_STRING_PRETTY));
}

static const char *reason_at(json_object *result, size_t i)
{
	json_object *r = get(result, "verdict_reasons");
	assert_true(i < json_object_array_length(r));
	return json_object_get_string(json_object_array_get_idx(r, i));
}

/* No candidate kernel built: nothing is compared, the verdict is fail, one
 * reason per variant names the kernel, the status and the detail, and the
 * document is valid. */
static void test_nothing_built(void **state)
{
	(void)state;
	_cleanup_job_ struct job *job = job_fixture(three_kernels);
	assert_non_null(job);
	_cleanup_json_ json_object *result = result_new(job);
	add_built(result, "kb");
	add_failed(result, "kp", "patch_does_not_apply",
		   "patch 5/5 '0002-x.patch' does not apply: file 'kernel/sched/rt.c' hunk #1 "
		   "FAILED at line 1925.");
	add_failed(result, "kq", "config_option_dropped",
		   "config option 'CONFIG_KVM=y' from 'x.config' was dropped by Kconfig.");
	json_object *kp = get(get(result, "kernels"), "kp");
	char keys[512];
	keys_of(kp, keys, sizeof(keys));
	assert_string_equal(keys, "key,source,build");
	keys_of(get(kp, "build"), keys, sizeof(keys));
	assert_string_equal(keys, "status,message,patch,log_excerpt");
	keys_of(get(get(get(result, "kernels"), "kq"), "build"), keys, sizeof(keys));
	assert_string_equal(keys, "status,message,option,log_excerpt");

	struct run_skip *s = run_skip_new(job);
	run_skip_kernel_not_built(s, "kp");
	run_skip_kernel_not_built(s, "kq");
	assert_true(run_skip_stopped(s));
	result_set_environment(result, NULL, NULL);
	result_begin_runs(result, job, NULL, 0);
	struct run_key *order = NULL;
	size_t n = 0;
	assert_int_equal(placement_order(job, &order, &n), 0);
	for (size_t i = 0; i < n; i++)
		run_skip_take(s, &order[i]);
	free(order);
	run_skip_describe(s, result);
	run_skip_free(s);
	assert_int_equal(result_compare(result, job, NULL), 0);
	result_finish(result, "2024-01-01T00:00:00Z", "2024-01-01T00:01:00Z");

	assert_null(get(get(result, "environment"), "accelerator"));
	assert_string_equal(json_object_get_string(get(result, "verdict")), "fail");
	assert_int_equal(json_object_array_length(get(result, "comparisons")), 0);
	assert_int_equal(json_object_array_length(get(result, "verdict_reasons")), 3);
	assert_string_equal(reason_at(result, 0),
			    "variant 'p1': kernel 'kp' did not build (patch_does_not_apply): patch "
			    "5/5 '0002-x.patch' does not apply: file 'kernel/sched/rt.c' hunk #1 "
			    "FAILED at line 1925.");
	assert_string_equal(reason_at(result, 1),
			    "variant 'p2': kernel 'kq' did not build (config_option_dropped): "
			    "config option 'CONFIG_KVM=y' from 'x.config' was dropped by Kconfig.");
	assert_non_null(strstr(reason_at(result, 2), "Variant 'base': 3 run(s) skipped: no "
						     "non-baseline variant was built"));
	assert_schema_valid(result);
}

static json_object *ok_run(const char *variant, int repeat, const char *status)
{
	struct run_key k;
	assert_int_equal(run_key_init(variant, repeat, &k), 0);
	json_object *run = run_record_new(&k, "0123456789abcdef", "h1", "2024-01-01T00:00:00Z");
	json_object_object_add(run, "status", json_object_new_string(status));
	json_object_object_add(run, "workloads", json_object_new_array());
	return run;
}

/* One candidate not built, the other runs: the verdict fails on the build,
 * compare's "all is well" sentence goes, and the runs that were compared
 * keep their reasons; a failed-fast variant's skipped runs get one. */
static void test_one_not_built(void **state)
{
	(void)state;
	_cleanup_job_ struct job *job = job_fixture(three_kernels);
	assert_non_null(job);
	for (int hang = 0; hang < 2; hang++) {
		_cleanup_json_ json_object *result = result_new(job);
		add_built(result, "kb");
		add_failed(result, "kp", "build_failed",
			   "The kernel build failed (make exit 2): kernel/sched/rt.c:6:2: error: "
			   "#error planted build failure");
		add_built(result, "kq");
		struct run_skip *s = run_skip_new(job);
		run_skip_kernel_not_built(s, "kp");
		result_set_environment(result, NULL, "tcg");
		result_begin_runs(result, job, NULL, 0);
		struct run_key *order = NULL;
		size_t n = 0;
		assert_int_equal(placement_order(job, &order, &n), 0);
		for (size_t i = 0; i < n; i++) {
			if (run_skip_take(s, &order[i]))
				continue;
			bool fails = hang && strcmp(order[i].variant, "p2") == 0;
			json_object *run =
			    ok_run(order[i].variant, order[i].repeat, fails ? "hung" : "ok");
			run_skip_run_ended(s, &order[i], run);
			assert_int_equal(result_add_run(result, &order[i], run), 0);
		}
		free(order);
		run_skip_describe(s, result);
		run_skip_free(s);
		assert_int_equal(result_compare(result, job, NULL), 0);
		result_finish(result, "2024-01-01T00:00:00Z", "2024-01-01T00:01:00Z");

		assert_string_equal(json_object_get_string(get(result, "verdict")), "fail");
		json_object *v = get(result, "variants");
		assert_true(json_object_get_boolean(get(get(v, "p1"), "not_built")));
		assert_int_equal(json_object_array_length(get(get(v, "p1"), "runs")), 0);
		assert_non_null(strstr(reason_at(result, 0),
				       "variant 'p1': kernel 'kp' did not build (build_failed): "
				       "The kernel build failed (make exit 2)"));
		json_object *reasons = get(result, "verdict_reasons");
		for (size_t i = 0; i < json_object_array_length(reasons); i++)
			assert_null(strstr(reason_at(result, i), "every run of the candidate"));
		if (!hang) {
			assert_int_equal(json_object_array_length(get(get(v, "p2"), "runs")), 3);
			assert_int_equal(json_object_array_length(reasons), 1);
		} else {
			/* p2 hung at once: one run, two skipped, the baseline's
			 * last run skipped as the job stopped */
			assert_int_equal(json_object_array_length(get(get(v, "p2"), "runs")), 1);
			assert_int_equal(json_object_get_int(get(get(v, "p2"), "skipped_runs")), 2);
			assert_int_equal(json_object_get_int(get(get(v, "base"), "skipped_runs")),
					 2);
			bool said = false;
			for (size_t i = 0; i < json_object_array_length(reasons); i++)
				said |=
				    strcmp(reason_at(result, i),
					   "Variant 'p2': 2 run(s) skipped: run p2#0 hung.") == 0;
			assert_true(said);
		}
		assert_schema_valid(result);
	}
}

/* A run whose console printed text (the scanner's events, signatures in). */
static json_object *run_printing(const char *variant, int repeat, const char *text)
{
	json_object *run = ok_run(variant, repeat, "ok");
	struct console_events *ce = console_events_new();
	console_events_feed(ce, text, strlen(text));
	console_events_finish(ce);
	json_object_object_add(run, "kernel_events", console_events_to_json(ce));
	console_events_free(ce);
	return run;
}

/* Kernel bug signatures (docs/kernel-bugs.md): the same WARNING in three
 * candidate runs is one signature counted three times and fails the job by
 * name; one the baseline shows too is listed and does not. */
static void test_signatures_gate(void **state)
{
	(void)state;
	_cleanup_job_ struct job *job = job_fixture(spec_text);
	assert_non_null(job);
	static const char *const warn_push =
	    "[ 1.0] WARNING: CPU: 1 PID: 17 at kernel/sched/rt.c:2124 push_rt_task+0x1/0x2\n";
	static const char *const warn_both =
	    "[ 2.0] WARNING: CPU: 0 PID: 9 at kernel/sched/core.c:77 set_task_cpu+0x1/0x2\n";
	for (int planted = 0; planted < 2; planted++) {
		_cleanup_json_ json_object *result = result_new(job);
		add_built(result, "k");
		result_set_environment(result, NULL, "tcg");
		result_begin_runs(result, job, NULL, 0);
		for (int r = 0; r < 3; r++) {
			struct run_key k;
			assert_int_equal(run_key_init("base", r, &k), 0);
			result_add_run(result, &k,
				       run_printing("base", r, r == 0 ? warn_both : ""));
			assert_int_equal(run_key_init("push", r, &k), 0);
			result_add_run(result, &k,
				       run_printing("push", r, planted ? warn_push : "booted\n"));
			assert_int_equal(run_key_init("wake", r, &k), 0);
			result_add_run(result, &k,
				       run_printing("wake", r, r == 1 ? warn_both : ""));
		}
		assert_int_equal(result_compare(result, job, NULL), 0);
		result_finish(result, "2024-01-01T00:00:00Z", "2024-01-01T00:01:00Z");
		json_object *sigs = get(result, "signatures");
		json_object *reasons = get(result, "verdict_reasons");
		assert_int_equal(json_object_array_length(sigs), planted ? 2 : 1);
		json_object *both = json_object_array_get_idx(sigs, 0);
		assert_string_equal(json_object_get_string(get(both, "title")),
				    "WARNING in set_task_cpu");
		assert_true(json_object_get_boolean(get(both, "in_baseline")));
		assert_int_equal(json_object_get_int(get(both, "runs")), 2);
		assert_int_equal(json_object_array_length(get(both, "new_in")), 0);
		assert_string_equal(json_object_get_string(get(get(both, "first"), "variant")),
				    "base");
		/* Each run names its signatures by id. */
		json_object *base0 =
		    json_object_array_get_idx(get(get(get(result, "variants"), "base"), "runs"), 0);
		assert_string_equal(
		    json_object_get_string(json_object_array_get_idx(get(base0, "signatures"), 0)),
		    json_object_get_string(get(both, "id")));
		if (!planted) {
			assert_string_not_equal(json_object_get_string(get(result, "verdict")),
						"fail");
			for (size_t i = 0; i < json_object_array_length(reasons); i++)
				assert_null(strstr(reason_at(result, i), "kernel bug"));
		} else {
			json_object *push = json_object_array_get_idx(sigs, 1);
			assert_string_equal(json_object_get_string(get(push, "kind")), "warn");
			assert_string_equal(json_object_get_string(get(push, "location")),
					    "kernel/sched/rt.c:2124");
			assert_int_equal(json_object_get_int(get(push, "runs")), 3);
			assert_int_equal(json_object_get_int(get(get(push, "variants"), "push")),
					 3);
			assert_false(json_object_get_boolean(get(push, "in_baseline")));
			assert_string_equal(json_object_get_string(
						json_object_array_get_idx(get(push, "new_in"), 0)),
					    "push");
			assert_non_null(
			    strstr(json_object_get_string(get(get(push, "first"), "excerpt")),
				   "push_rt_task+0x1/0x2"));
			assert_string_equal(json_object_get_string(get(result, "verdict")), "fail");
			bool said = false;
			for (size_t i = 0; i < json_object_array_length(reasons); i++) {
				said |=
				    strstr(
					reason_at(result, i),
					"Variant 'push': kernel bug 'WARNING in push_rt_task' "
					"(warn, kernel/sched/rt.c:2124) in 3 run(s), never in the "
					"baseline 'base'") != NULL;
				assert_null(
				    strstr(reason_at(result, i), "WARNING in set_task_cpu"));
			}
			assert_true(said);
		}
		assert_schema_valid(result);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_order_interleaves), cmocka_unit_test(test_run_record_keys),
	    cmocka_unit_test(test_document_keys),     cmocka_unit_test(test_nothing_built),
	    cmocka_unit_test(test_one_not_built),     cmocka_unit_test(test_signatures_gate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
