/* run_attribution (run/attribution.h) with mocked steps: the step runner is
 * a mock whose candidate's inversions depend on which patches its kernel
 * carries (patch 2 of 3 adds 6 inversions, the others nothing), so the test
 * sees every prefix but the whole measured once, the base's runs offered
 * for reuse, each patch's own change judged by the job's comparison rules
 * (patch 2 regressed, patches 1 and 3 not decided, each against the
 * prefix before it), carried_by naming patch 2, and a step error kept as status
 * "error". The real steps are e2e 73-commit-range. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <pthread.h>
#include <unistd.h>

#include "run/attribution.h"
#include "run/runner.h"
#include "run/series_runner.h"

#define KERNEL "{\"source\":\"debian:linux-source-6.1\",\"patches\":[{\"series\":\"linux-6.1\"}]}"
#define WL                                                                                         \
	"[{\"name\":\"rt-migrate-test\",\"tool\":\"rt-migrate-test\",\"args\":[\"-p\",\"60\","     \
	"\"3\"]}]"
#define GATES "[{\"workload\":\"rt-migrate-test\",\"metric\":\"inversions\",\"threshold\":0}]"
#define RUNS  5

struct mock {
	size_t culprit; /* the patch that adds inversions */
	size_t fail_at; /* a prefix whose step errors, or 0 */
	size_t calls, reused;
	size_t prefixes[8];
	/* the prebuild (run/prefix_prebuild.h) */
	pthread_mutex_t lock;
	size_t builds, active, max_active;
	bool built[8];
	size_t no_build; /* a prefix whose kernel does not build, or 0 */
	size_t builds_at_first_step;
};

static json_object *get(json_object *o, const char *k)
{
	json_object *v = NULL;
	return json_object_object_get_ex(o, k, &v) ? v : NULL;
}

/* A run; inversions < 0: its workload reported no metric. */
static json_object *run_of(const char *variant, size_t i, int inversions)
{
	char text[512], metrics[64] = "";
	if (inversions >= 0)
		snprintf(metrics, sizeof(metrics), "\"inversions\":%d", inversions);
	snprintf(text, sizeof(text),
		 "{\"key\":\"%s#%zu\",\"status\":\"ok\",\"workloads\":[{\"name\":"
		 "\"rt-migrate-test\",\"status\":\"ok\",\"metrics\":{%s}}]}",
		 variant, i, metrics);
	return json_tokener_parse(text);
}

/* A result with the base's runs (0 to 1 inversions; none measured when
 * base_unmeasured) and a candidate's of base + extra inversions, as far as
 * the attribution reads it; its job is set by the caller that has one. */
static bool base_unmeasured;
static json_object *result_of(const char *verdict, int extra)
{
	json_object *r = json_tokener_parse("{\"job\":{\"baseline\":\"baseline\"},"
					    "\"kernels\":{\"patched\":{\"cached\":false}},"
					    "\"variants\":{\"baseline\":{\"runs\":[]},"
					    "\"patched\":{\"runs\":[]}}}");
	json_object_object_add(r, "verdict", json_object_new_string(verdict));
	for (size_t i = 0; i < RUNS; i++) {
		json_object_array_add(get(get(get(r, "variants"), "baseline"), "runs"),
				      run_of("baseline", i, base_unmeasured ? -1 : (int)(i % 2)));
		json_object_array_add(get(get(get(r, "variants"), "patched"), "runs"),
				      run_of("patched", i, (int)(i % 2) + extra));
	}
	return r;
}

/* How many patches of the series a step's job carries. */
static size_t prefix_of(json_object *expanded)
{
	json_object *kernels = get(expanded, "kernels");
	return json_object_array_length(get(get(kernels, "patched"), "patches")) -
	       json_object_array_length(get(get(kernels, "base"), "patches"));
}

static void assert_step_dir(const char *step_dir, size_t k)
{
	char dir[32];
	snprintf(dir, sizeof(dir), "/per-patch-%zu", k);
	assert_non_null(strstr(step_dir, dir));
}

static int step_run(void *userdata, json_object *expanded, const char *step_dir,
		    json_object *(*lookup_run)(void *, const char *), void *lookup_userdata,
		    json_object **ret_result)
{
	struct mock *m = userdata;
	size_t k = prefix_of(expanded);
	assert_true(m->calls < 8);
	if (m->calls == 0)
		m->builds_at_first_step = m->builds;
	m->prefixes[m->calls++] = k;
	assert_step_dir(step_dir, k);
	json_object *run = lookup_run(lookup_userdata, "baseline#0");
	assert_non_null(run);
	json_object_put(run);
	if (k == m->fail_at)
		return -1;
	*ret_result = result_of(k >= m->culprit ? "fail" : "pass", k >= m->culprit ? 6 : 0);
	return 0;
}

/* A step's kernels built ahead, from a builder thread: counts how many
 * run at once. */
static int step_build(void *userdata, json_object *expanded, const char *step_dir, int *ret_built)
{
	struct mock *m = userdata;
	size_t k = prefix_of(expanded);
	assert_step_dir(step_dir, k);
	pthread_mutex_lock(&m->lock);
	m->active++;
	if (m->active > m->max_active)
		m->max_active = m->active;
	pthread_mutex_unlock(&m->lock);
	usleep(100 * 1000);
	pthread_mutex_lock(&m->lock);
	m->active--;
	m->builds++;
	m->built[k] = true;
	pthread_mutex_unlock(&m->lock);
	*ret_built = k == m->no_build ? -1 : 1;
	return 0;
}

static json_object *spec_of(size_t n)
{
	json_object *spec = json_tokener_parse("{\"name\":\"series\",\"base\":" KERNEL
					       ",\"patches\":[],\"workloads\":" WL
					       ",\"gates\":" GATES ",\"repeat\":5}");
	for (size_t i = 0; i < n; i++) {
		char name[64], content[128];
		snprintf(name, sizeof(name), "%04zu-patch-%zu.patch", i + 1, i + 1);
		snprintf(content, sizeof(content), "--- a/f%zu\n+++ b/f%zu\n@@ -1 +1 @@\n-a\n+b\n",
			 i, i);
		json_object *p = json_object_new_object();
		json_object_object_add(p, "name", json_object_new_string(name));
		json_object_object_add(p, "content", json_object_new_string(content));
		json_object_array_add(get(spec, "patches"), p);
	}
	return spec;
}

/* The expanded job of spec (a new reference): what result.job holds. */
static json_object *expanded_of(json_object *spec)
{
	json_object *expanded = NULL;
	struct sl_error err = {0};
	if (job_expand_json(spec, JOB_ORIGIN_SERVICE, NULL, NULL, &expanded, &err) < 0)
		fail_msg("%s: %s", err.path, err.message);
	return expanded;
}

static json_object *attribute_slots(struct mock *m, size_t n, json_object *whole, int slots)
{
	json_object *spec = spec_of(n);
	json_object_object_add(whole, "job", expanded_of(spec));
	pthread_mutex_init(&m->lock, NULL);
	struct series_input in = {.spec = spec,
				  .origin = JOB_ORIGIN_SERVICE,
				  .job_dir = "jobdir",
				  .step_run = step_run,
				  .step_build = step_build,
				  .build_slots = slots,
				  .step_userdata = m};
	assert_int_equal(run_attribution(&in, whole), 0);
	json_object *a = json_object_get(get(whole, "attribution"));
	json_object_put(whole);
	json_object_put(spec);
	pthread_mutex_destroy(&m->lock);
	return a;
}

static json_object *attribute(struct mock *m, size_t n, json_object *whole)
{
	return attribute_slots(m, n, whole, 0);
}

static json_object *added_inversions(json_object *a, size_t step)
{
	json_object *added = get(json_object_array_get_idx(get(a, "steps"), step), "added");
	assert_int_equal(json_object_array_length(added), 1);
	json_object *c = json_object_array_get_idx(added, 0);
	assert_string_equal(json_object_get_string(get(c, "metric")), "inversions");
	return c;
}

static bool decided(json_object *c)
{
	const char *v = json_object_get_string(get(c, "verdict"));
	return strcmp(v, "regressed") == 0 || strcmp(v, "improved") == 0;
}

static void test_culprit_carries_the_change(void **state)
{
	(void)state;
	struct mock m = {.culprit = 2};
	json_object *a = attribute(&m, 3, result_of("fail", 6));
	assert_non_null(a);
	/* prefixes 1 and 2 measured; 3 is the whole series' result */
	assert_int_equal(m.calls, 2);
	assert_int_equal(m.prefixes[0], 1);
	assert_int_equal(m.prefixes[1], 2);
	assert_string_equal(json_object_get_string(get(a, "status")), "done");
	assert_int_equal(json_object_array_length(get(a, "steps")), 3);
	/* each patch against the prefix before it (threshold 0 on a count:
	 * "no own change" is unchanged or inconclusive, never decided) */
	assert_false(decided(added_inversions(a, 0)));
	json_object *c2 = added_inversions(a, 1);
	assert_string_equal(json_object_get_string(get(c2, "verdict")), "regressed");
	assert_true(json_object_get_double(get(c2, "change")) > 5.0);
	assert_true(json_object_get_double(get(c2, "to")) >
		    json_object_get_double(get(c2, "from")));
	/* patch 3 against prefix 2, not against the base: nothing of its own */
	assert_false(decided(added_inversions(a, 2)));
	/* the prefixes' own verdicts against the base */
	assert_string_equal(
	    json_object_get_string(get(json_object_array_get_idx(get(a, "steps"), 1), "verdict")),
	    "fail");
	json_object *by = get(a, "carried_by");
	assert_int_equal(json_object_array_length(by), 1);
	json_object *e = json_object_array_get_idx(by, 0);
	assert_int_equal(json_object_get_int(get(e, "patches")), 2);
	assert_string_equal(json_object_get_string(get(e, "last_patch")), "0002-patch-2.patch");
	assert_string_equal(json_object_get_string(get(e, "verdict")), "regressed");
	assert_int_equal(json_object_get_int(get(a, "builds")), 2);
	json_object_put(a);
}

/* A passing series is attributed too (nothing decided: carried_by empty). */
static void test_passing_series(void **state)
{
	(void)state;
	struct mock m = {.culprit = 99};
	json_object *a = attribute(&m, 2, result_of("pass", 0));
	assert_non_null(a);
	assert_int_equal(m.calls, 1);
	assert_int_equal(json_object_array_length(get(a, "carried_by")), 0);
	json_object_put(a);
}

/* A step that errors ends the walk with status "error", its steps kept. */
static void test_step_error(void **state)
{
	(void)state;
	struct mock m = {.culprit = 3, .fail_at = 2};
	json_object *a = attribute(&m, 3, result_of("fail", 6));
	assert_non_null(a);
	assert_string_equal(json_object_get_string(get(a, "status")), "error");
	assert_int_equal(json_object_array_length(get(a, "steps")), 1);
	json_object_put(a);
}

/* One patch: nothing to attribute. */
static void test_single_patch(void **state)
{
	(void)state;
	struct mock m = {.culprit = 1};
	json_object *spec = spec_of(1), *whole = result_of("fail", 6);
	struct series_input in = {.spec = spec,
				  .origin = JOB_ORIGIN_SERVICE,
				  .job_dir = "jobdir",
				  .step_run = step_run,
				  .step_userdata = &m};
	assert_int_equal(run_attribution(&in, whole), 0);
	assert_null(get(whole, "attribution"));
	assert_int_equal(m.calls, 0);
	json_object_put(whole);
	json_object_put(spec);
}

/* A metric the first patch's comparison could not judge (the base
 * measured none of it) is still attributed to the later patch that
 * carries it: carried_by looks at every step, not the first one's. */
static void test_first_step_unjudged(void **state)
{
	(void)state;
	struct mock m = {.culprit = 2};
	base_unmeasured = true;
	json_object *a = attribute(&m, 3, result_of("fail", 6));
	base_unmeasured = false;
	assert_non_null(a);
	assert_int_equal(
	    json_object_array_length(get(json_object_array_get_idx(get(a, "steps"), 0), "added")),
	    0);
	json_object *by = get(a, "carried_by");
	assert_int_equal(json_object_array_length(by), 1);
	assert_int_equal(json_object_get_int(get(json_object_array_get_idx(by, 0), "patches")), 2);
	json_object_put(a);
}

/* Two build slots: the kernels of prefixes 1..n-1 are built before any
 * step is measured, two at a time, and the steps say so; a prefix whose
 * kernel did not build ahead is built by its step as before. One slot (the
 * default) builds nothing ahead. */
static void test_prebuild(void **state)
{
	(void)state;
	struct mock m = {.culprit = 2, .no_build = 3};
	json_object *a = attribute_slots(&m, 4, result_of("fail", 6), 2);
	assert_non_null(a);
	assert_int_equal(m.builds, 3);
	assert_int_equal(m.builds_at_first_step, 3); /* all built before any step */
	assert_int_equal(m.max_active, 2);
	assert_true(m.built[1] && m.built[2] && m.built[3] && !m.built[4]);
	assert_int_equal(m.calls, 3);
	assert_int_equal(json_object_get_int(get(a, "build_slots")), 2);
	assert_int_equal(json_object_get_int(get(a, "prebuilt")), 2);
	json_object *steps = get(a, "steps");
	for (size_t i = 0; i < 4; i++) {
		json_object *p = get(json_object_array_get_idx(steps, i), "prebuilt");
		assert_true(i < 2 ? p && json_object_get_boolean(p) : !p);
	}
	/* the same answer as without building ahead */
	assert_int_equal(
	    json_object_get_int(get(json_object_array_get_idx(get(a, "carried_by"), 0), "patches")),
	    2);
	json_object_put(a);

	struct mock one = {.culprit = 2};
	a = attribute_slots(&one, 4, result_of("fail", 6), 1);
	assert_int_equal(one.builds, 0);
	assert_int_equal(json_object_get_int(get(a, "build_slots")), 1);
	assert_int_equal(json_object_get_int(get(a, "prebuilt")), 0);
	json_object_put(a);
}

static struct mock service_mock;

/* A runner_run_job: the job itself (the whole series) or a step. */
static int fake_runner(const struct runner_config *cfg, json_object *expanded, const char *job_dir,
		       const struct runner_hooks *hooks, json_object **ret_result,
		       struct sl_error *err)
{
	(void)cfg, (void)err;
	if (!strstr(job_dir, "/per-patch-")) {
		*ret_result = result_of("pass", 6); /* attributed whatever its verdict */
		json_object_object_add(*ret_result, "job", json_object_get(expanded));
		return 0;
	}
	assert_null(hooks->run_done);
	return step_run(&service_mock, expanded, job_dir, hooks->lookup_run, hooks->userdata,
			ret_result);
}

static json_object *service_job(size_t n, const char *flag)
{
	json_object *spec = spec_of(n), *expanded = NULL;
	struct sl_error err = {0};
	if (flag)
		json_object_object_add(spec, flag, json_object_new_boolean(true));
	assert_int_equal(job_expand_json(spec, JOB_ORIGIN_SERVICE, NULL, NULL, &expanded, &err), 0);
	json_object_put(spec);
	return expanded;
}

/* The service's runner attributes a job with "per_patch": true, and its
 * budget counts the n - 1 steps. */
static void test_service_per_patch(void **state)
{
	(void)state;
	_cleanup_json_ json_object *job = service_job(3, "per_patch");
	_cleanup_json_ json_object *plain = service_job(3, NULL);
	struct runner_hooks hooks = {0};
	json_object *result = NULL;
	struct sl_error err = {0};
	service_mock = (struct mock){.culprit = 2};
	assert_int_equal(
	    run_job_and_bisect_with(fake_runner, NULL, job, "jobdir", &hooks, &result, &err), 0);
	json_object *a = get(result, "attribution");
	assert_non_null(a);
	assert_null(get(result, "bisection"));
	assert_int_equal(service_mock.calls, 2);
	assert_int_equal(
	    json_object_get_int(get(json_object_array_get_idx(get(a, "carried_by"), 0), "patches")),
	    2);
	json_object_put(result);
	assert_int_equal(job_budget_s(job), 3 * job_budget_s(plain));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_culprit_carries_the_change),
	    cmocka_unit_test(test_passing_series),
	    cmocka_unit_test(test_step_error),
	    cmocka_unit_test(test_single_patch),
	    cmocka_unit_test(test_first_step_unjudged),
	    cmocka_unit_test(test_service_per_patch),
	    cmocka_unit_test(test_prebuild),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
