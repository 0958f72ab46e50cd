/* run_skip: which runs still run. Variants whose kernel did not build, fail
 * fast after a hung, panicked or crashed candidate run (but not after a
 * noisy hung one the policy leaves out), the job stopping when no candidate
 * is left, and what lands in result.variants. No guests: runs are made up. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <string.h>
#include <cmocka.h>

#include "helpers/job_fixture.h"
#include "run/result.h"
#include "run/run_skip.h"

/* baseline "base" on kernel kb, candidates "p1" on kp and "p2" on kq */
#define THREE_KERNELS                                                                              \
	"{\"name\":\"t\",\"baseline\":\"base\",\"repeat\":3,\"kernels\":{"                         \
	"\"kb\":{\"source\":\"debian:linux-source-6.1\"},"                                         \
	"\"kp\":{\"source\":\"debian:linux-source-6.1\"},"                                         \
	"\"kq\":{\"source\":\"debian:linux-source-6.1\"}},"                                        \
	"\"variants\":{\"base\":{\"kernel\":\"kb\"},\"p1\":{\"kernel\":\"kp\"},"                   \
	"\"p2\":{\"kernel\":\"kq\"}},"                                                             \
	"\"workloads\":[{\"tool\":\"rt-migrate-test\"}]%s}"

static struct job *job_of(const char *extra)
{
	char text[2048];
	snprintf(text, sizeof(text), THREE_KERNELS, extra);
	struct job *job = job_fixture(text);
	assert_non_null(job);
	return job;
}

static struct run_key key(const char *variant, int repeat)
{
	struct run_key k;
	assert_int_equal(run_key_init(variant, repeat, &k), 0);
	return k;
}

static json_object *run_with(const char *status, bool noisy)
{
	json_object *run = json_object_new_object();
	json_object_object_add(run, "status", json_object_new_string(status));
	json_object_object_add(run, "noisy", json_object_new_boolean(noisy));
	return run;
}

/* Tells s that the run of variant#repeat ended with status. */
static bool ended(struct run_skip *s, const char *variant, int repeat, const char *status,
		  bool noisy)
{
	struct run_key k = key(variant, repeat);
	json_object *run = run_with(status, noisy);
	bool stopped = run_skip_run_ended(s, &k, run);
	json_object_put(run);
	return stopped;
}

static bool take(struct run_skip *s, const char *variant, int repeat)
{
	struct run_key k = key(variant, repeat);
	return run_skip_take(s, &k);
}

static json_object *get(json_object *o, const char *k)
{
	json_object *v = NULL;
	json_object_object_get_ex(o, k, &v);
	return v;
}

/* result.variants as the runner leaves it after run_skip_describe(). */
static json_object *described(const struct job *job, const struct run_skip *s)
{
	json_object *result = result_new(job);
	result_begin_runs(result, job, NULL, 0);
	run_skip_describe(s, result);
	return result;
}

static void test_not_built(void **state)
{
	(void)state;
	_cleanup_job_ struct job *job = job_of("");
	struct run_skip *s = run_skip_new(job);
	assert_non_null(s);
	assert_false(run_skip_stopped(s));
	run_skip_kernel_not_built(s, "kp");
	assert_true(run_skip_not_built(s, "p1"));
	assert_false(run_skip_not_built(s, "p2"));
	assert_false(run_skip_stopped(s)); /* p2 still runs */
	assert_true(take(s, "p1", 0));
	assert_false(take(s, "p2", 0));
	assert_false(take(s, "base", 0));
	/* a not-built variant's runs are not "skipped runs": it has none */
	json_object *r = described(job, s);
	json_object *p1 = get(get(r, "variants"), "p1");
	assert_true(json_object_get_boolean(get(p1, "not_built")));
	assert_int_equal(json_object_array_length(get(p1, "runs")), 0);
	assert_null(get(p1, "skipped_runs"));
	assert_null(get(get(get(r, "variants"), "p2"), "not_built"));
	json_object_put(r);

	/* the last candidate's kernel fails too: the job stops before it starts */
	run_skip_kernel_not_built(s, "kq");
	assert_true(run_skip_stopped(s));
	assert_true(take(s, "base", 0));
	assert_true(take(s, "p2", 0));
	assert_true(take(s, "base", 1));
	r = described(job, s);
	json_object *base = get(get(r, "variants"), "base");
	assert_int_equal(json_object_get_int(get(base, "skipped_runs")), 2);
	assert_non_null(strstr(json_object_get_string(get(base, "skipped_reason")),
			       "no non-baseline variant was built"));
	assert_null(get(base, "not_built"));
	assert_null(get(get(get(r, "variants"), "p2"), "skipped_runs"));
	json_object_put(r);
	run_skip_free(s);
	run_skip_free(NULL);
}

static void test_fail_fast(void **state)
{
	(void)state;
	_cleanup_job_ struct job *job = job_of("");
	struct run_skip *s = run_skip_new(job);
	/* ok and error runs, and any baseline run, stop nothing */
	assert_false(ended(s, "p1", 0, "ok", false));
	assert_false(ended(s, "p2", 0, "error", false));
	assert_false(ended(s, "base", 0, "hung", false));
	assert_false(ended(s, "base", 1, "panic", false));
	assert_false(take(s, "p1", 1));
	assert_false(take(s, "base", 2));
	assert_false(take(s, "nope", 0)); /* an unknown variant is never skipped */

	/* p1 hangs: its remaining runs are skipped, the job goes on with p2 */
	assert_false(ended(s, "p1", 1, "hung", false));
	assert_false(run_skip_stopped(s));
	assert_true(take(s, "p1", 2));
	assert_true(take(s, "p1", 3));
	assert_false(take(s, "p2", 2));
	assert_false(take(s, "base", 3));
	/* a second failure of a stopped variant changes nothing */
	assert_false(ended(s, "p1", 1, "panic", false));

	/* p2 panics: no candidate left, the job stops */
	assert_true(ended(s, "p2", 2, "panic", false));
	assert_true(run_skip_stopped(s));
	assert_true(take(s, "base", 4));
	assert_true(take(s, "p2", 3));
	json_object *r = described(job, s);
	json_object *v = get(r, "variants");
	assert_int_equal(json_object_get_int(get(get(v, "p1"), "skipped_runs")), 2);
	assert_string_equal(json_object_get_string(get(get(v, "p1"), "skipped_reason")),
			    "run p1#1 hung");
	assert_int_equal(json_object_get_int(get(get(v, "p2"), "skipped_runs")), 1);
	assert_string_equal(json_object_get_string(get(get(v, "p2"), "skipped_reason")),
			    "run p2#2 panicked");
	assert_int_equal(json_object_get_int(get(get(v, "base"), "skipped_runs")), 1);
	assert_string_equal(json_object_get_string(get(get(v, "base"), "skipped_reason")),
			    "every non-baseline variant failed (the last: run p2#2 panicked)");
	/* describe twice: the same document */
	run_skip_describe(s, r);
	assert_int_equal(json_object_get_int(get(get(v, "p1"), "skipped_runs")), 2);
	json_object_put(r);
	run_skip_free(s);
}

/* A run whose sched_ext scheduler failed stops its variant like a panic,
 * noisy or not (compare.c counts it whatever the host did). */
static void test_sched_ext_failed(void **state)
{
	(void)state;
	_cleanup_job_ struct job *job = job_of("");
	struct run_skip *s = run_skip_new(job);
	assert_false(ended(s, "p1", 1, "sched_ext_failed", true));
	assert_true(take(s, "p1", 2));
	json_object *r = described(job, s);
	assert_string_equal(
	    json_object_get_string(get(get(get(r, "variants"), "p1"), "skipped_reason")),
	    "run p1#1 lost its sched_ext scheduler");
	json_object_put(r);
	run_skip_free(s);
}

/* A crash counts; a noisy hung run counts only where the noise policy does
 * not leave it out (compare.c excludes it and the job reruns it). */
static void test_noisy_hang(void **state)
{
	(void)state;
	const struct {
		const char *extra;
		bool stops;
	} cases[] = {
	    {"", false},
	    {",\"noise_policy\":\"exclude\"", false},
	    {",\"noise_policy\":\"keep\"", true},
	    {",\"noise_policy\":\"fail\"", true},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		_cleanup_job_ struct job *job = job_of(cases[i].extra);
		struct run_skip *s = run_skip_new(job);
		assert_false(ended(s, "p1", 0, "hung", true));
		struct run_key k = key("p1", 1);
		assert_int_equal(run_skip_is_skipped(s, &k), cases[i].stops);
		/* a noisy crash is the kernel's, whatever the host did (and with
		 * p1 out too, the job stops) */
		assert_int_equal(ended(s, "p2", 0, "crashed", true), cases[i].stops);
		k = key("p2", 1);
		assert_true(run_skip_is_skipped(s, &k));
		run_skip_free(s);
	}
}

/* Under "exclude", a noisy hung run stops its variant once the baseline's
 * runs so far were quiet (their median vCPU wait within the limit): the
 * wait was the hung guest's own spinning. */
static void test_noisy_hang_after_quiet_baseline(void **state)
{
	(void)state;
	for (int quiet = 0; quiet < 2; quiet++) {
		_cleanup_job_ struct job *job = job_of("");
		struct run_skip *s = run_skip_new(job);
		struct run_key bk = key("base", 0);
		json_object *b = run_with("ok", !quiet);
		json_object *hi = json_object_new_object();
		json_object_object_add(hi, "vcpu_wait_pct",
				       json_object_new_double(quiet ? 11.8 : 40.0));
		json_object_object_add(b, "host_interference", hi);
		assert_false(run_skip_run_ended(s, &bk, b));
		json_object_put(b);
		assert_false(ended(s, "p1", 0, "hung", true));
		struct run_key k = key("p1", 1);
		assert_int_equal(run_skip_is_skipped(s, &k), quiet);
		run_skip_free(s);
	}
}

/* Not built and failed fast together: the job stops when both are out. */
static void test_not_built_then_fail_fast(void **state)
{
	(void)state;
	_cleanup_job_ struct job *job = job_of("");
	struct run_skip *s = run_skip_new(job);
	run_skip_kernel_not_built(s, "kq");
	assert_false(run_skip_stopped(s));
	assert_true(ended(s, "p1", 0, "crashed", false));
	assert_true(run_skip_stopped(s));
	assert_true(take(s, "base", 1));
	json_object *r = described(job, s);
	json_object *base = get(get(r, "variants"), "base");
	assert_string_equal(json_object_get_string(get(base, "skipped_reason")),
			    "every non-baseline variant failed (the last: run p1#0 crashed)");
	json_object_put(r);
	run_skip_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_not_built),
	    cmocka_unit_test(test_fail_fast),
	    cmocka_unit_test(test_noisy_hang),
	    cmocka_unit_test(test_sched_ext_failed),
	    cmocka_unit_test(test_noisy_hang_after_quiet_baseline),
	    cmocka_unit_test(test_not_built_then_fail_fast),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
