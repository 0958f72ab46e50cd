/* run_bisection (run/bisection.h) on a commit range with mocked steps: the
 * step runner is a mock that judges a prefix by how many of the range's
 * patches its candidate kernel carries (fail from the culprit on), so the
 * test sees which jobs the bisection builds (the base plus the first k
 * commits, named after the series), that every step names its commit by
 * hash and subject, that the base's runs are offered for reuse, and the
 * answer (first_bad_commit, certain, builds, boots). The real steps are
 * e2e 46-bisect (patches) and 74-change-point-bisect (a commit range in the service). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "run/bisection.h"
#include "run/runner.h"
#include "run/series_runner.h"

#define KERNEL "{\"source\":\"debian:linux-source-6.1\",\"patches\":[{\"series\":\"linux-6.1\"}]}"
#define WL     "[{\"tool\":\"rt-migrate-test\",\"args\":[\"-p\",\"60\",\"3\"]}]"

struct mock {
	size_t culprit;	     /* the first commit whose prefix fails */
	size_t inconclusive; /* a prefix that stays inconclusive, or 0 */
	size_t calls, reused;
	size_t prefixes[8];
};

static json_object *get(json_object *o, const char *k)
{
	json_object *v = NULL;
	return json_object_object_get_ex(o, k, &v) ? v : NULL;
}

/* A result as the runner writes it, as far as the bisection reads it. */
static json_object *result_of(const char *verdict, size_t candidate_runs, size_t base_runs)
{
	char text[1024];
	snprintf(text, sizeof(text),
		 "{\"verdict\":\"%s\",\"job\":{\"baseline\":\"baseline\"},"
		 "\"verdict_reasons\":[\"because\"],\"kernels\":{\"patched\":{\"cached\":false}},"
		 "\"comparisons\":[{\"variant\":\"patched\",\"metric\":\"inversions\","
		 "\"gated\":true,\"verdict\":\"%s\"}],"
		 "\"variants\":{\"baseline\":{\"runs\":[]},\"patched\":{\"runs\":[]}}}",
		 verdict, strcmp(verdict, "fail") == 0 ? "regressed" : "unchanged");
	json_object *r = json_tokener_parse(text);
	for (size_t i = 0; i < base_runs + candidate_runs; i++) {
		char key[32];
		bool base = i < base_runs;
		snprintf(key, sizeof(key), "%s#%zu", base ? "baseline" : "patched",
			 base ? i : i - base_runs);
		json_object *run = json_object_new_object();
		json_object_object_add(run, "key", json_object_new_string(key));
		json_object_array_add(
		    get(get(get(r, "variants"), base ? "baseline" : "patched"), "runs"), run);
	}
	return r;
}

static int step_run(void *userdata, json_object *expanded, const char *step_dir,
		    json_object *(*lookup_run)(void *, const char *), void *lookup_userdata,
		    json_object **ret_result)
{
	struct mock *m = userdata;
	/* the candidate is the base's own patches (the built-in series) plus k */
	size_t base_n =
	    json_object_array_length(get(get(get(expanded, "kernels"), "base"), "patches"));
	size_t k =
	    json_object_array_length(get(get(get(expanded, "kernels"), "patched"), "patches")) -
	    base_n;
	assert_true(m->calls < 8);
	m->prefixes[m->calls++] = k;
	char dir[32];
	snprintf(dir, sizeof(dir), "/bisect-%zu", k);
	assert_non_null(strstr(step_dir, dir));
	/* the base's runs of the whole series are offered for reuse */
	for (int i = 0; i < 3; i++) {
		char key[32];
		snprintf(key, sizeof(key), "baseline#%d", i);
		json_object *run = lookup_run(lookup_userdata, key);
		assert_non_null(run);
		json_object_put(run);
	}
	const char *v = k == m->inconclusive ? "inconclusive" : k >= m->culprit ? "fail" : "pass";
	*ret_result = result_of(v, 3, 3);
	return 0;
}

static json_object *spec_of(size_t n)
{
	json_object *spec = json_tokener_parse("{\"name\":\"range\",\"base\":" KERNEL
					       ",\"patches\":[],\"workloads\":" WL "}");
	for (size_t i = 0; i < n; i++) {
		char name[64], content[128];
		snprintf(name, sizeof(name), "%04zu-commit-%zu.patch", i + 1, i + 1);
		snprintf(content, sizeof(content), "--- a/f%zu\n+++ b/f%zu\n@@ -1 +1 @@\n-a\n+b\n",
			 i, i);
		json_object *p = json_object_new_object();
		json_object_object_add(p, "name", json_object_new_string(name));
		json_object_object_add(p, "content", json_object_new_string(content));
		json_object_array_add(get(spec, "patches"), p);
	}
	return spec;
}

static json_object *commits_of(size_t n)
{
	json_object *a = json_object_new_array();
	for (size_t i = 0; i < n; i++) {
		char hash[41], subject[64];
		memset(hash, 'a' + (int)i, 40);
		hash[40] = '\0';
		snprintf(subject, sizeof(subject), "sched: commit %zu", i + 1);
		json_object *c = json_object_new_object();
		json_object_object_add(c, "commit", json_object_new_string(hash));
		json_object_object_add(c, "subject", json_object_new_string(subject));
		json_object_array_add(a, c);
	}
	return a;
}

static json_object *bisect_with(struct mock *m, size_t n, const char *whole_verdict,
				bool with_commits)
{
	json_object *spec = spec_of(n), *commits = with_commits ? commits_of(n) : NULL;
	json_object *whole = result_of(whole_verdict, 3, 3);
	struct series_input in = {.spec = spec,
				  .origin = JOB_ORIGIN_SERVICE,
				  .job_dir = "jobdir",
				  .commits = commits,
				  .step_run = step_run,
				  .step_userdata = m};
	assert_int_equal(run_bisection(&in, whole), 0);
	json_object *b = json_object_get(get(whole, "bisection"));
	json_object_put(whole);
	json_object_put(spec);
	json_object_put(commits);
	return b;
}

static json_object *bisect(struct mock *m, size_t n, const char *whole_verdict)
{
	return bisect_with(m, n, whole_verdict, true);
}

/* A patch series (no commits, as `schedlab test --bisect` gives): the same
 * answer, by patch name, and no commit members (it aborted in json-c when
 * the commit lookups ran on the missing list). */
static void test_patch_series(void **state)
{
	(void)state;
	struct mock m = {.culprit = 2};
	json_object *b = bisect_with(&m, 3, "fail", false);
	assert_non_null(b);
	assert_int_equal(json_object_get_int(get(b, "first_bad")), 2);
	assert_string_equal(json_object_get_string(get(b, "first_bad_patch")),
			    "0002-commit-2.patch");
	assert_null(get(b, "first_bad_commit"));
	assert_null(get(json_object_array_get_idx(get(b, "steps"), 0), "commit"));
	json_object_put(b);
}

static void test_names_the_commit(void **state)
{
	(void)state;
	struct mock m = {.culprit = 2};
	json_object *b = bisect(&m, 3, "fail");
	assert_non_null(b);
	assert_int_equal(m.calls, 2);
	assert_int_equal(m.prefixes[0], 1);
	assert_int_equal(m.prefixes[1], 2);
	assert_string_equal(json_object_get_string(get(b, "status")), "found");
	assert_int_equal(json_object_get_int(get(b, "first_bad")), 2);
	assert_string_equal(json_object_get_string(get(b, "first_bad_commit")),
			    "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
	assert_string_equal(json_object_get_string(get(b, "first_bad_subject")), "sched: commit 2");
	assert_string_equal(json_object_get_string(get(b, "first_bad_patch")),
			    "0002-commit-2.patch");
	assert_true(json_object_get_boolean(get(b, "certain")));
	assert_int_equal(json_object_array_length(get(b, "commits")), 3);
	json_object *steps = get(b, "steps");
	assert_int_equal(json_object_array_length(steps), 2);
	json_object *s0 = json_object_array_get_idx(steps, 0),
		    *s1 = json_object_array_get_idx(steps, 1);
	assert_string_equal(json_object_get_string(get(s0, "commit")),
			    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	assert_string_equal(json_object_get_string(get(s0, "subject")), "sched: commit 1");
	assert_string_equal(json_object_get_string(get(s0, "verdict")), "pass");
	assert_string_equal(json_object_get_string(get(s1, "verdict")), "fail");
	assert_false(json_object_get_boolean(get(s1, "uncertain")));
	/* 3 base runs reused, 3 candidate runs booted, per step */
	assert_int_equal(json_object_get_int(get(s0, "reused_runs")), 3);
	assert_int_equal(json_object_get_int(get(s0, "boots")), 3);
	assert_int_equal(json_object_get_int(get(b, "boots")), 6);
	assert_int_equal(json_object_get_int(get(b, "builds")), 2);
	json_object_put(b);
}

static void test_inconclusive_and_no_bisection(void **state)
{
	(void)state;
	struct mock m = {.culprit = 3, .inconclusive = 2};
	json_object *b = bisect(&m, 4, "fail");
	assert_int_equal(json_object_get_int(get(b, "first_bad")), 3);
	assert_false(json_object_get_boolean(get(b, "certain")));
	assert_true(json_object_get_boolean(
	    get(json_object_array_get_idx(get(b, "steps"), 0), "uncertain")));
	json_object_put(b);
	/* a series that passed, or of one commit, is not bisected */
	struct mock p = {.culprit = 1};
	assert_null(bisect(&p, 3, "pass"));
	assert_null(bisect(&p, 1, "fail"));
	assert_int_equal(p.calls, 0);
}

/* ---- the service's runner: the job, then its bisection ---- */

static struct mock fake;
static int outer_cookie;

static void outer_progress(void *userdata, const struct runner_progress *p)
{
	(void)p;
	assert_ptr_equal(userdata, &outer_cookie);
}

static void outer_run_done(void *userdata, const char *key, json_object *run)
{
	(void)userdata, (void)key, (void)run;
}

/* A runner_run_job: the job (kernel "patched" with every patch) or a step. */
static int fake_runner(const struct runner_config *cfg, json_object *expanded, const char *job_dir,
		       const struct runner_hooks *hooks, json_object **ret_result,
		       struct sl_error *err)
{
	(void)cfg, (void)err;
	json_object *k = get(expanded, "kernels");
	size_t n = json_object_array_length(get(get(k, "patched"), "patches")) -
		   json_object_array_length(get(get(k, "base"), "patches"));
	if (!strstr(job_dir, "/bisect-")) { /* the job itself: its own hooks */
		assert_ptr_equal(hooks->userdata, &outer_cookie);
		assert_non_null(hooks->run_done);
		*ret_result = result_of(n >= fake.culprit ? "fail" : "pass", 3, 3);
		return 0;
	}
	/* a step: no run_done (its runs are not the job's), the pool's lookups */
	assert_null(hooks->run_done);
	assert_non_null(hooks->lookup_run);
	if (hooks->progress)
		hooks->progress(hooks->userdata, &(struct runner_progress){.phase = "running"});
	return step_run(&fake, expanded, job_dir, hooks->lookup_run, hooks->userdata, ret_result);
}

static json_object *service_job(size_t n, bool bisect, size_t n_commits)
{
	json_object *spec = spec_of(n), *commits = commits_of(n_commits);
	json_object_object_add(spec, "bisect", json_object_new_boolean(bisect));
	json_object_object_add(spec, "commits", commits);
	json_object *expanded = NULL;
	struct sl_error err = {0};
	int r = job_expand_json(spec, JOB_ORIGIN_SERVICE, NULL, NULL, &expanded, &err);
	json_object_put(spec);
	if (r < 0) {
		assert_string_equal(err.path, "$.commits");
		return NULL;
	}
	return expanded;
}

static void test_service_runner(void **state)
{
	(void)state;
	struct runner_hooks hooks = {
	    .userdata = &outer_cookie, .progress = outer_progress, .run_done = outer_run_done};
	_cleanup_json_ json_object *job = service_job(4, true, 4);
	assert_non_null(job);
	fake = (struct mock){.culprit = 3};
	json_object *result = NULL;
	struct sl_error err = {0};
	assert_int_equal(
	    run_job_and_bisect_with(fake_runner, NULL, job, "jobdir", &hooks, &result, &err), 0);
	json_object *b = get(result, "bisection");
	assert_non_null(b);
	assert_int_equal(json_object_get_int(get(b, "first_bad")), 3);
	assert_string_equal(json_object_get_string(get(b, "first_bad_subject")), "sched: commit 3");
	assert_int_equal(fake.calls, 2); /* prefixes 2 and 3 */
	assert_int_equal(fake.prefixes[0], 2);
	assert_int_equal(fake.prefixes[1], 3);
	json_object_put(result);

	/* without "bisect": true the job is only run */
	_cleanup_json_ json_object *plain = service_job(4, false, 4);
	fake = (struct mock){.culprit = 3};
	assert_int_equal(
	    run_job_and_bisect_with(fake_runner, NULL, plain, "jobdir", &hooks, &result, &err), 0);
	assert_null(get(result, "bisection"));
	assert_int_equal(fake.calls, 0);
	json_object_put(result);

	/* the budget counts the steps it may take: ceil(log2 4) = 2 more jobs */
	assert_true(job_budget_s(plain) > 0);
	assert_int_equal(job_budget_s(job), 3 * job_budget_s(plain));

	/* "commits" must name one commit per patch */
	assert_null(service_job(4, true, 3));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_service_runner),
	    cmocka_unit_test(test_names_the_commit),
	    cmocka_unit_test(test_patch_series),
	    cmocka_unit_test(test_inconclusive_and_no_bisection),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
