/* compare_result(): per-metric verdicts, the overall verdict and its reasons,
 * on small hand-built results and on tests/data/result-example.json. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "compare/compare.h"
#include "compare/sequential.h"
#include "helpers/job_fixture.h"
#include "job/jsonschema.h"
#include "job/schema_files.h"
#include "util/fs.h"
#include "util/json.h"

static json_object *get(json_object *o, const char *k)
{
	json_object *v = NULL;
	json_object_object_get_ex(o, k, &v);
	return v;
}

/* One ok run with one workload whose metrics are name=value pairs. */
static json_object *run(const char *key, const char *status, const char *workload, const char *tool,
			int nmetrics, ...)
{
	json_object *r = json_object_new_object();
	json_object_object_add(r, "key", json_object_new_string(key));
	json_object_object_add(r, "repeat", json_object_new_int(0));
	json_object_object_add(r, "status", json_object_new_string(status));
	if (strcmp(status, "ok") != 0)
		json_object_object_add(r, "reason",
				       json_object_new_string("the kernel panicked in "
							      "pick_next_task_rt"));
	json_object *w = json_object_new_object(), *m = json_object_new_object();
	json_object_object_add(w, "name", json_object_new_string(workload));
	json_object_object_add(w, "tool", json_object_new_string(tool));
	json_object_object_add(w, "status", json_object_new_string("ok"));
	va_list ap;
	va_start(ap, nmetrics);
	for (int i = 0; i < nmetrics; i++) {
		const char *name = va_arg(ap, const char *);
		double v = va_arg(ap, double);
		json_object_object_add(m, name, json_object_new_double(v));
	}
	va_end(ap);
	json_object_object_add(w, "metrics", m);
	json_object *wls = json_object_new_array();
	json_object_array_add(wls, w);
	json_object_object_add(r, "workloads", wls);
	return r;
}

static void add_run(json_object *variants, const char *variant, json_object *r)
{
	json_object *v = get(variants, variant);
	if (!v) {
		v = json_object_new_object();
		json_object_object_add(v, "kernel", json_object_new_string("sched"));
		json_object_object_add(v, "runs", json_object_new_array());
		json_object_object_add(variants, variant, v);
	}
	json_object_array_add(get(v, "runs"), r);
}

/* n baseline and n patched runs of one metric: base[i] and cand[i]. */
static void add_pairs(json_object *variants, const char *workload, const char *tool,
		      const char *metric, const double *base, const double *cand, int n)
{
	for (int i = 0; i < n; i++) {
		char k[32];
		snprintf(k, sizeof(k), "baseline#%d", i);
		add_run(variants, "baseline", run(k, "ok", workload, tool, 1, metric, base[i]));
		snprintf(k, sizeof(k), "patched#%d", i);
		add_run(variants, "patched", run(k, "ok", workload, tool, 1, metric, cand[i]));
	}
}

/* A job with workloads rtm, ct and sh, the baseline "baseline", gates_json
 * and extra members (", \"noise_policy\": ..." or ""). */
static struct job *job_with(const char *gates_json, const char *extra)
{
	char buf[1024];
	snprintf(buf, sizeof(buf),
		 "{\"name\": \"t\", \"baseline\": \"baseline\", \"kernels\": " JOB_FIXTURE_KERNELS
		 ", \"variants\": {\"baseline\": {\"kernel\": \"k\"}, \"patched\": {\"kernel\": "
		 "\"k\"}}, \"workloads\": ["
		 "{\"name\": \"rtm\", \"tool\": \"rt-migrate-test\", \"timeout_s\": 10}, "
		 "{\"name\": \"ct\", \"tool\": \"cyclictest\", \"timeout_s\": 10}, "
		 "{\"name\": \"sh\", \"tool\": \"share\", \"timeout_s\": 10}], "
		 "\"gates\": %s%s}",
		 gates_json, extra);
	struct job *job = job_fixture(buf);
	assert_non_null(job);
	return job;
}

static struct job *spec_with_gates(const char *gates_json)
{
	return job_with(gates_json, "");
}

static json_object *find_cmp(json_object *cmps, const char *variant, const char *metric)
{
	for (size_t i = 0; i < json_object_array_length(cmps); i++) {
		json_object *c = json_object_array_get_idx(cmps, i);
		if (strcmp(json_object_get_string(get(c, "variant")), variant) == 0 &&
		    strcmp(json_object_get_string(get(c, "metric")), metric) == 0)
			return c;
	}
	fail_msg("no comparison for %s/%s", variant, metric);
	return NULL;
}

static const char *verdict_of(json_object *cmps, const char *variant, const char *metric)
{
	return json_object_get_string(get(find_cmp(cmps, variant, metric), "verdict"));
}

static bool reasons_contain(json_object *reasons, const char *needle)
{
	for (size_t i = 0; i < json_object_array_length(reasons); i++)
		if (strstr(json_object_get_string(json_object_array_get_idx(reasons, i)), needle))
			return true;
	return false;
}

/* Seed 009 at repeat 2: baseline inversions 3 and 5, patched 0 and 0. The
 * shift lies beyond the threshold, but 2 runs against 2 cannot reach
 * p <= 0.05 (the smallest p is 1/3) nor bound a 90 % interval: the gated
 * metric is inconclusive, so is the job, and the ungated one is undecided,
 * neither changed nor unchanged. */
static void test_inversions_undecided_at_repeat_2(void **state)
{
	(void)state;
	_cleanup_job_ struct job *spec = spec_with_gates(
	    "[{\"workload\": \"rtm\", \"metric\": \"inversions\", \"threshold\": 0}]");
	_cleanup_json_ json_object *variants = json_object_new_object();
	add_run(variants, "baseline",
		run("baseline#0", "ok", "rtm", "rt-migrate-test", 2, "inversions", 3.0,
		    "inversion_max_us", 20011.0));
	add_run(variants, "patched",
		run("patched#0", "ok", "rtm", "rt-migrate-test", 2, "inversions", 0.0,
		    "inversion_max_us", 0.0));
	add_run(variants, "baseline",
		run("baseline#1", "ok", "rtm", "rt-migrate-test", 2, "inversions", 5.0,
		    "inversion_max_us", 24140.0));
	add_run(variants, "patched",
		run("patched#1", "ok", "rtm", "rt-migrate-test", 2, "inversions", 0.0,
		    "inversion_max_us", 0.0));
	_cleanup_json_ json_object *cmps = NULL, *reasons = NULL;
	char verdict[16];
	struct sl_error err = {0};
	assert_int_equal(compare_result(spec, variants, &cmps, verdict, &reasons, &err), 0);
	assert_string_equal(verdict, "inconclusive");
	assert_string_equal(verdict_of(cmps, "patched", "inversions"), "inconclusive");
	assert_string_equal(verdict_of(cmps, "patched", "inversion_max_us"), "undecided");
	json_object *c = find_cmp(cmps, "patched", "inversions");
	assert_true(json_object_get_boolean(get(c, "gated")));
	assert_int_equal(json_object_get_int(get(c, "change")), -4);
	assert_true(json_object_get_double(get(c, "change_pct")) == -100.0);
	/* The Hodges-Lehmann shift: the median of -3, -3, -5, -5. No interval. */
	assert_int_equal(json_object_get_int(get(c, "estimate")), -4);
	assert_null(get(c, "ci95"));
	assert_true(fabs(json_object_get_double(get(c, "p_value")) - 1.0 / 3) < 1e-9);
	assert_true(fabs(json_object_get_double(get(c, "min_p")) - 1.0 / 3) < 1e-9);
	assert_true(fabs(json_object_get_double(get(c, "alpha")) - 0.05) < 1e-12);
	assert_true(json_object_get_double(get(c, "cliffs_delta")) == -1.0);
	assert_string_equal(json_object_get_string(get(c, "better")), "lower");
	assert_false(
	    json_object_get_boolean(get(find_cmp(cmps, "patched", "inversion_max_us"), "gated")));
	assert_true(reasons_contain(reasons, "'inversions' of workload 'rtm' in variant 'patched' "
					     "is inconclusive: 2 v 2 runs cannot reach p <= 0.05 "
					     "(smallest p 0.33)"));
	assert_true(reasons_contain(reasons, "no change can be shown below 4 runs a side"));
	assert_string_equal(json_object_get_string(get(c, "undecided_reason")),
			    "2 v 2 runs cannot reach p <= 0.05 (smallest p 0.33)");
}

/* The same effect at 4 runs a side reaches the level: improved. */
static void test_inversions_improved_at_repeat_4(void **state)
{
	(void)state;
	_cleanup_job_ struct job *spec = spec_with_gates(
	    "[{\"workload\": \"rtm\", \"metric\": \"inversions\", \"threshold\": 0}]");
	_cleanup_json_ json_object *variants = json_object_new_object();
	const double base[] = {3, 5, 11, 7}, cand[] = {0, 0, 1, 0};
	add_pairs(variants, "rtm", "rt-migrate-test", "inversions", base, cand, 4);
	_cleanup_json_ json_object *cmps = NULL, *reasons = NULL;
	char verdict[16];
	struct sl_error err = {0};
	assert_int_equal(compare_result(spec, variants, &cmps, verdict, &reasons, &err), 0);
	assert_string_equal(verdict, "pass");
	assert_string_equal(verdict_of(cmps, "patched", "inversions"), "improved");
	json_object *c = find_cmp(cmps, "patched", "inversions");
	assert_true(json_object_get_double(get(c, "p_value")) <= 0.05);
	assert_true(reasons_contain(reasons, "'inversions' of workload 'rtm' improved"));
}

static void test_regression_fails(void **state)
{
	(void)state;
	_cleanup_job_ struct job *spec =
	    spec_with_gates("[{\"workload\": \"rtm\", \"metric\": \"inversions\"}]");
	_cleanup_json_ json_object *variants = json_object_new_object();
	const double base[] = {0, 0, 0, 1, 0}, cand[] = {2, 4, 3, 3, 6};
	add_pairs(variants, "rtm", "rt-migrate-test", "inversions", base, cand, 5);
	_cleanup_json_ json_object *cmps = NULL, *reasons = NULL;
	char verdict[16];
	struct sl_error err = {0};
	assert_int_equal(compare_result(spec, variants, &cmps, verdict, &reasons, &err), 0);
	assert_string_equal(verdict, "fail");
	assert_string_equal(verdict_of(cmps, "patched", "inversions"), "regressed");
	assert_true(reasons_contain(reasons, "Gated metric 'inversions' of workload 'rtm' "
					     "regressed in variant 'patched' (median 3 against 0"));
	/* A change of 3 under a gate threshold of 10 is no regression: the
	 * interval's worse end stays within 10. */
	_cleanup_job_ struct job *spec5 = spec_with_gates(
	    "[{\"workload\": \"rtm\", \"metric\": \"inversions\", \"threshold\": 10}]");
	_cleanup_json_ json_object *cmps5 = NULL, *reasons5 = NULL;
	assert_int_equal(compare_result(spec5, variants, &cmps5, verdict, &reasons5, &err), 0);
	assert_string_equal(verdict, "pass");
	assert_string_equal(verdict_of(cmps5, "patched", "inversions"), "unchanged");

	/* The first three runs alone: beyond the threshold, but 3 against 3
	 * cannot reach 0.05. Undecided is never a pass. */
	_cleanup_json_ json_object *v3 = json_object_new_object();
	add_pairs(v3, "rtm", "rt-migrate-test", "inversions", base, cand, 3);
	_cleanup_json_ json_object *cmps3 = NULL, *reasons3 = NULL;
	assert_int_equal(compare_result(spec, v3, &cmps3, verdict, &reasons3, &err), 0);
	assert_string_equal(verdict, "inconclusive");
	assert_string_equal(verdict_of(cmps3, "patched", "inversions"), "inconclusive");
	assert_true(reasons_contain(reasons3, "3 v 3 runs cannot reach p <= 0.05"));
}

/* Worse at the level asked (e2e 73 in CI: HEAD 0 -> 6.5 inversions, p
 * 0.0016, threshold 1; some runs of a bimodal regression show 0 or 1
 * inversions). Until December 2026 the whole interval had to clear the
 * threshold, so this was inconclusive; the rule now decides on the shift's
 * estimate, 6.5, far beyond 1: regressed. With the shift at the threshold
 * and p below alpha the interval crosses it: inconclusive, with that
 * reason. */
static void test_worse_beyond_threshold_regresses(void **state)
{
	(void)state;
	_cleanup_job_ struct job *spec =
	    spec_with_gates("[{\"workload\": \"rtm\", \"metric\": \"inversions\"}]");
	_cleanup_json_ json_object *variants = json_object_new_object();
	const double base[] = {0, 0, 0, 0, 0, 0, 0, 0}, cand[] = {0, 1, 1, 6, 7, 9, 10, 12};
	add_pairs(variants, "rtm", "rt-migrate-test", "inversions", base, cand, 8);
	_cleanup_json_ json_object *cmps = NULL, *reasons = NULL;
	char verdict[16];
	struct sl_error err = {0};
	assert_int_equal(compare_result(spec, variants, &cmps, verdict, &reasons, &err), 0);
	json_object *c = find_cmp(cmps, "patched", "inversions");
	assert_true(json_object_get_double(get(c, "estimate")) == 6.5);
	assert_true(json_object_get_double(get(c, "p_value")) <= 0.05);
	assert_string_equal(verdict, "fail");
	assert_string_equal(verdict_of(cmps, "patched", "inversions"), "regressed");

	const double near[] = {0, 0, 1, 1, 1, 1, 2, 2};
	_cleanup_json_ json_object *v2 = json_object_new_object();
	add_pairs(v2, "rtm", "rt-migrate-test", "inversions", base, near, 8);
	_cleanup_json_ json_object *cmps2 = NULL, *reasons2 = NULL;
	assert_int_equal(compare_result(spec, v2, &cmps2, verdict, &reasons2, &err), 0);
	c = find_cmp(cmps2, "patched", "inversions");
	print_message("estimate %g, p %g\n", json_object_get_double(get(c, "estimate")),
		      json_object_get_double(get(c, "p_value")));
	assert_true(json_object_get_double(get(c, "p_value")) <= 0.05);
	assert_string_equal(verdict, "inconclusive");
	assert_string_equal(verdict_of(cmps2, "patched", "inversions"), "inconclusive");
	assert_string_equal(json_object_get_string(get(c, "undecided_reason")),
			    "interval crosses ±1");
}

/* The A/A split that the percentile bootstrap alone calls a change one time
 * in ten (tests/e2e/07-compare-aa.sh saw it): [7, 4, 6] against [2, 3, 3]. */
static void test_aa_complete_separation_is_not_a_change(void **state)
{
	(void)state;
	_cleanup_job_ struct job *spec = spec_with_gates(
	    "[{\"workload\": \"rtm\", \"metric\": \"inversions\", \"threshold\": 0}]");
	_cleanup_json_ json_object *variants = json_object_new_object();
	const double base[] = {7, 4, 6}, cand[] = {2, 3, 3};
	for (int i = 0; i < 3; i++) {
		char k[32];
		snprintf(k, sizeof(k), "baseline#%d", i);
		add_run(variants, "baseline",
			run(k, "ok", "rtm", "rt-migrate-test", 2, "inversions", base[i],
			    "inversion_max_us", 20000.0 + base[i]));
		snprintf(k, sizeof(k), "again#%d", i);
		add_run(variants, "again",
			run(k, "ok", "rtm", "rt-migrate-test", 2, "inversions", cand[i],
			    "inversion_max_us", 20000.0 + cand[i]));
	}
	_cleanup_json_ json_object *cmps = NULL, *reasons = NULL;
	char verdict[16];
	struct sl_error err = {0};
	assert_int_equal(compare_result(spec, variants, &cmps, verdict, &reasons, &err), 0);
	/* Non-inferiority at 0.05: all three candidate values below all three
	 * baseline ones happens 1 time in 20 when the candidate is as bad as
	 * the threshold, so the gate passes; an improvement is not shown
	 * (p 0.1), so the comparison is undecided, not improved. */
	assert_string_equal(verdict_of(cmps, "again", "inversions"), "undecided");
	assert_string_equal(verdict, "pass");
	for (size_t i = 0; i < json_object_array_length(cmps); i++) {
		const char *v =
		    json_object_get_string(get(json_object_array_get_idx(cmps, i), "verdict"));
		assert_true(strcmp(v, "improved") != 0 && strcmp(v, "regressed") != 0);
	}
}

/* A/A: four boots of one stock kernel, measured when the project began
 * (cyclictest avg 169-257 us, max 6.8-17.3 ms, min 25-40 us), split
 * between two names in every one of the 6 ways: nothing may come out
 * changed, and nothing unchanged either: 2 runs a side bound no interval,
 * so equivalence cannot be shown. */
static void test_aa_unchanged(void **state)
{
	(void)state;
	const double avg[4] = {169, 257, 214, 198}, max[4] = {6800, 17300, 9100, 12400},
		     min[4] = {25, 40, 31, 28}, p99[4] = {610, 1400, 880, 990};
	const double d61[4] = {96, 310, 122, 140}, d60min[4] = {20210, 20390, 20250, 20330};
	static const int splits[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
	for (int s = 0; s < 6; s++) {
		_cleanup_job_ struct job *spec = spec_with_gates("[]");
		_cleanup_json_ json_object *variants = json_object_new_object();
		for (int i = 0; i < 4; i++) {
			bool base = i == splits[s][0] || i == splits[s][1];
			char k[32];
			snprintf(k, sizeof(k), "%s#%d", base ? "baseline" : "again", i);
			add_run(variants, base ? "baseline" : "again",
				run(k, "ok", "ct", "cyclictest", 4, "latency_us.avg", avg[i],
				    "latency_us.max", max[i], "latency_us.min", min[i],
				    "latency_us.p99", p99[i]));
			snprintf(k, sizeof(k), "%s#%d", base ? "baseline" : "again", i + 4);
			add_run(variants, base ? "baseline" : "again",
				run(k, "ok", "rtm", "rt-migrate-test", 3, "inversions", 0.0,
				    "start_delay_us.prio61.max", d61[i],
				    "start_delay_us.prio60.min", d60min[i]));
		}
		_cleanup_json_ json_object *cmps = NULL, *reasons = NULL;
		char verdict[16];
		struct sl_error err = {0};
		assert_int_equal(compare_result(spec, variants, &cmps, verdict, &reasons, &err), 0);
		assert_string_equal(verdict, "pass");
		assert_int_equal(json_object_array_length(cmps), 7);
		for (size_t i = 0; i < json_object_array_length(cmps); i++) {
			json_object *c = json_object_array_get_idx(cmps, i);
			const char *v = json_object_get_string(get(c, "verdict"));
			if (strcmp(v, "undecided") != 0)
				fail_msg("split %d: %s is %s (%s)", s,
					 json_object_get_string(get(c, "metric")), v,
					 json_object_to_json_string(c));
		}
	}
}

static void test_candidate_run_failure_fails(void **state)
{
	(void)state;
	_cleanup_job_ struct job *spec = spec_with_gates("[]");
	_cleanup_json_ json_object *variants = json_object_new_object();
	add_run(variants, "baseline",
		run("baseline#0", "ok", "ct", "cyclictest", 1, "latency_us.avg", 200.0));
	add_run(variants, "baseline",
		run("baseline#1", "hung", "ct", "cyclictest", 1, "latency_us.avg", 1e9));
	add_run(variants, "patched",
		run("patched#0", "panic", "ct", "cyclictest", 1, "latency_us.avg", 10.0));
	add_run(variants, "patched",
		run("patched#1", "ok", "ct", "cyclictest", 1, "latency_us.avg", 190.0));
	_cleanup_json_ json_object *cmps = NULL, *reasons = NULL;
	char verdict[16];
	struct sl_error err = {0};
	assert_int_equal(compare_result(spec, variants, &cmps, verdict, &reasons, &err), 0);
	assert_string_equal(verdict, "fail");
	assert_true(reasons_contain(reasons, "Run 'patched#0' of variant 'patched' ended with "
					     "status 'panic': the kernel panicked in "
					     "pick_next_task_rt."));
	assert_true(reasons_contain(reasons, "Baseline run 'baseline#1' ended with status "
					     "'hung'"));
	/* Values of runs that are not ok are left out: 1 against 1. */
	json_object *c = find_cmp(cmps, "patched", "latency_us.avg");
	assert_int_equal(json_object_get_int(get(get(c, "baseline"), "n")), 1);
	assert_string_equal(json_object_get_string(get(c, "verdict")), "undecided");
	assert_string_equal(json_object_get_string(get(c, "undecided_reason")),
			    "too few values (1 v 1)");
	assert_null(get(c, "ci95"));
}

/* A job that names no gates is gated by its workloads' defaults
 * (job/suite.h): a planted inversions regression fails it. "gates": []
 * opts out: the same data passes, and the reasons say the job opted out. */
static void test_default_gates_and_opt_out(void **state)
{
	(void)state;
	static const double base[] = {0, 0, 1, 0, 0}, cand[] = {6, 5, 7, 4, 6};
	for (int opt_out = 0; opt_out < 2; opt_out++) {
		char text[1024];
		snprintf(text, sizeof(text),
			 "{\"name\": \"t\", \"kernels\": " JOB_FIXTURE_KERNELS
			 ", \"variants\": {\"baseline\": {\"kernel\": \"k\"}, \"patched\": "
			 "{\"kernel\": \"k\"}}, \"workloads\": [{\"name\": \"rtm\", \"tool\": "
			 "\"rt-migrate-test\", \"timeout_s\": 10}]%s}",
			 opt_out ? ", \"gates\": []" : "");
		_cleanup_job_ struct job *job = job_fixture(text);
		assert_non_null(job);
		assert_int_equal(job->n_gates, opt_out ? 0 : 1);
		assert_int_equal(job->gates_opt_out, opt_out);
		_cleanup_json_ json_object *variants = json_object_new_object();
		add_pairs(variants, "rtm", "rt-migrate-test", "inversions", base, cand, 5);
		_cleanup_json_ json_object *cmps = NULL, *reasons = NULL;
		char verdict[16];
		struct sl_error err = {0};
		assert_int_equal(compare_result(job, variants, &cmps, verdict, &reasons, &err), 0);
		json_object *c = find_cmp(cmps, "patched", "inversions");
		assert_string_equal(json_object_get_string(get(c, "verdict")), "regressed");
		if (!opt_out) {
			assert_string_equal(verdict, "fail");
			assert_true(json_object_get_boolean(get(c, "gated")));
			/* The metric's default threshold: one inversion. */
			assert_int_equal(json_object_get_int(get(c, "threshold")), 1);
			assert_true(reasons_contain(reasons,
						    "Gated metric 'inversions' of workload "
						    "'rtm' regressed in variant 'patched'"));
		} else {
			assert_string_equal(verdict, "pass");
			assert_false(json_object_get_boolean(get(c, "gated")));
			assert_true(reasons_contain(reasons, "No gates: the job opted out"));
		}
	}
}

/* A variant whose kernel did not build (docs/contracts.md A) has no runs
 * and no comparisons; it fails the job without the "has no runs" and
 * "cannot be judged" reasons (the runner gives the build reason). */
static void test_not_built_variant(void **state)
{
	(void)state;
	_cleanup_job_ struct job *job = spec_with_gates("[{\"workload\": \"rtm\", \"metric\": "
							"\"inversions\"}]");
	_cleanup_json_ json_object *variants = json_object_new_object();
	static const double v[] = {0, 0, 0};
	add_pairs(variants, "rtm", "rt-migrate-test", "inversions", v, v, 3);
	json_object *p = get(variants, "patched");
	json_object_object_add(p, "runs", json_object_new_array());
	json_object_object_add(p, "not_built", json_object_new_boolean(1));
	_cleanup_json_ json_object *cmps = NULL, *reasons = NULL;
	char verdict[16];
	struct sl_error err = {0};
	assert_int_equal(compare_result(job, variants, &cmps, verdict, &reasons, &err), 0);
	assert_string_equal(verdict, "fail");
	assert_int_equal(json_object_array_length(cmps), 0);
	assert_false(reasons_contain(reasons, "has no runs"));
	assert_false(reasons_contain(reasons, "cannot be judged"));
}

static void test_relative_gate_and_inconclusive(void **state)
{
	(void)state;
	_cleanup_job_ struct job *spec =
	    spec_with_gates("[{\"workload\": \"ct\", \"metric\": \"latency_us.avg\", "
			    "\"threshold\": 0.1, \"relative\": true}]");
	/* A clear 50 % regression against a 10 % gate. */
	_cleanup_json_ json_object *v1 = json_object_new_object();
	const double b1[] = {100, 102, 101, 99, 103}, c1[] = {150, 152, 151, 149, 153};
	/* Far too noisy to tell: CI spans both -10 % and +10 %. */
	_cleanup_json_ json_object *v2 = json_object_new_object();
	const double b2[] = {100, 300, 200}, c2[] = {50, 400, 210};
	for (int i = 0; i < 5; i++) {
		char k[32];
		snprintf(k, sizeof(k), "baseline#%d", i);
		add_run(v1, "baseline",
			run(k, "ok", "ct", "cyclictest", 1, "latency_us.avg", b1[i]));
		if (i < 3)
			add_run(v2, "baseline",
				run(k, "ok", "ct", "cyclictest", 1, "latency_us.avg", b2[i]));
		snprintf(k, sizeof(k), "patched#%d", i);
		add_run(v1, "patched",
			run(k, "ok", "ct", "cyclictest", 1, "latency_us.avg", c1[i]));
		if (i < 3)
			add_run(v2, "patched",
				run(k, "ok", "ct", "cyclictest", 1, "latency_us.avg", c2[i]));
	}
	_cleanup_json_ json_object *cmps = NULL, *reasons = NULL, *cmps2 = NULL, *reasons2 = NULL;
	char verdict[16];
	struct sl_error err = {0};
	assert_int_equal(compare_result(spec, v1, &cmps, verdict, &reasons, &err), 0);
	assert_string_equal(verdict, "fail");
	json_object *c = find_cmp(cmps, "patched", "latency_us.avg");
	assert_string_equal(json_object_get_string(get(c, "verdict")), "regressed");
	assert_true(fabs(json_object_get_double(get(c, "threshold")) - 10.1) < 1e-9);
	assert_true(json_object_get_boolean(get(c, "relative")));

	assert_int_equal(compare_result(spec, v2, &cmps2, verdict, &reasons2, &err), 0);
	assert_string_equal(verdict, "inconclusive");
	assert_string_equal(verdict_of(cmps2, "patched", "latency_us.avg"), "inconclusive");
	assert_true(reasons_contain(reasons2, "'latency_us.avg' of workload 'ct' in variant "
					      "'patched' is inconclusive"));
}

static void test_missing_gate_metric_and_direction_none(void **state)
{
	(void)state;
	_cleanup_job_ struct job *spec =
	    spec_with_gates("[{\"workload\": \"sh\", \"metric\": \"share_error\"}]");
	_cleanup_json_ json_object *variants = json_object_new_object();
	const double fb[] = {0.50, 0.51, 0.52, 0.49}, fc[] = {0.66, 0.67, 0.65, 0.68};
	add_pairs(variants, "sh", "share", "cpu_fraction.1000", fb, fc, 4);
	_cleanup_json_ json_object *cmps = NULL, *reasons = NULL;
	char verdict[16];
	struct sl_error err = {0};
	assert_int_equal(compare_result(spec, variants, &cmps, verdict, &reasons, &err), 0);
	assert_string_equal(verdict_of(cmps, "patched", "cpu_fraction.1000"), "changed");
	assert_string_equal(
	    json_object_get_string(get(find_cmp(cmps, "patched", "cpu_fraction.1000"), "better")),
	    "none");
	/* share_error was gated but never reported. */
	assert_string_equal(verdict, "inconclusive");
	assert_true(reasons_contain(reasons, "Gated metric 'share_error' of workload 'sh' has no "
					     "values"));
}

static void test_bad_input(void **state)
{
	(void)state;
	_cleanup_job_ struct job *spec = spec_with_gates("[]");
	_cleanup_json_ json_object *variants = json_tokener_parse("{\"other\": {\"runs\": []}}");
	json_object *cmps = NULL, *reasons = NULL;
	char verdict[16];
	struct sl_error err = {0};
	assert_true(compare_result(spec, variants, &cmps, verdict, &reasons, &err) < 0);
	assert_int_equal(err.kind, ERR_INVALID);
	assert_non_null(strstr(err.message, "'baseline'"));
	assert_null(cmps);
	assert_true(compare_result(spec, NULL, &cmps, verdict, &reasons, &err) < 0);
}

/* The example result: its stored comparisons are what compare_result()
 * computes, and the whole document validates against result.schema.json. */
static void test_result_example(void **state)
{
	(void)state;
	_cleanup_free_ char *root = fs_data_dir();
	_cleanup_free_ char *path = fs_path_join(root, "tests/data/result-example.json");
	_cleanup_json_ json_object *res = NULL, *schema = NULL, *cmps = NULL, *reasons = NULL;
	struct sl_error err = {0};
	assert_int_equal(json_read_file_strict(path, 16 << 20, NULL, &res, &err), 0);
	char verdict[16];
	_cleanup_job_ struct job *job = NULL;
	assert_int_equal(job_from_expanded(get(res, "job"), &job, &err), 0);
	assert_int_equal(compare_result(job, get(res, "variants"), &cmps, verdict, &reasons, &err),
			 0);
	/* SCHEDLAB_UPDATE_GOLDEN=1 writes what the code computes into the
	 * example (then review the diff); the test still checks it after. */
	if (getenv("SCHEDLAB_UPDATE_GOLDEN")) {
		json_object_object_add(res, "comparisons", json_object_get(cmps));
		json_object_object_add(res, "verdict_reasons", json_object_get(reasons));
		json_object_object_add(res, "verdict", json_object_new_string(verdict));
		assert_int_equal(json_object_to_file_ext(path, res,
							 JSON_C_TO_STRING_PRETTY |
							     JSON_C_TO_STRING_SPACED |
							     JSON_C_TO_STRING_NOSLASHESCAPE),
				 0);
	}
	assert_string_equal(verdict, json_object_get_string(get(res, "verdict")));
	/* json-c keeps a parsed number's text, so equal documents print equally. */
	_cleanup_free_ char *want =
	    strdup(json_object_to_json_string_ext(get(res, "comparisons"), JSON_C_TO_STRING_PLAIN));
	const char *got = json_object_to_json_string_ext(cmps, JSON_C_TO_STRING_PLAIN);
	if (strcmp(want, got) != 0)
		fail_msg("comparisons differ from the example's; computed:\n%s", got);
	assert_true(json_object_equal(reasons, get(res, "verdict_reasons")));
	assert_int_equal(schema_load("result", &schema, &err), 0);
	json_object_object_add(res, "comparisons", json_object_get(cmps));
	if (jsonschema_validate(schema, res, &err) < 0)
		fail_msg("%s", err.message);
}

/* Every golden result's comparisons, verdict and reasons as compare_result()
 * computes them, byte for byte against tests/data/compare/, recorded from
 * the code before compare/ read run records through the result model. */
static void test_golden_comparisons(void **state)
{
	(void)state;
	static const char *const goldens[][2] = {
	    {"tests/data/result-example.json", "tests/data/compare/result-example.json"},
	    {"tests/data/report/result.json", "tests/data/compare/report-result.json"},
	    {"tests/data/report/real-rtmigrate.json", "tests/data/compare/real-rtmigrate.json"},
	    {"tests/data/report/hostile.json", "tests/data/compare/hostile.json"},
	};
	_cleanup_free_ char *root = fs_data_dir();
	for (size_t g = 0; g < sizeof(goldens) / sizeof(goldens[0]); g++) {
		_cleanup_free_ char *in = fs_path_join(root, goldens[g][0]);
		_cleanup_free_ char *out = fs_path_join(root, goldens[g][1]);
		_cleanup_json_ json_object *res = NULL, *cmps = NULL, *reasons = NULL, *got = NULL;
		_cleanup_free_ char *want = NULL;
		struct sl_error err = {0};
		assert_int_equal(json_read_file_strict(in, 16 << 20, NULL, &res, &err), 0);
		assert_int_equal(fs_read_file(out, 16 << 20, &want, NULL, &err), 0);
		_cleanup_job_ struct job *job = NULL;
		assert_int_equal(job_from_expanded(get(res, "job"), &job, &err), 0);
		char verdict[16];
		if (compare_result(job, get(res, "variants"), &cmps, verdict, &reasons, &err) < 0)
			fail_msg("%s: %s", goldens[g][0], err.message);
		got = json_object_new_object();
		json_object_object_add(got, "comparisons", TAKE_PTR(cmps));
		json_object_object_add(got, "verdict", json_object_new_string(verdict));
		json_object_object_add(got, "verdict_reasons", TAKE_PTR(reasons));
		const char *text = json_object_to_json_string_ext(
		    got, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
		size_t wl = strlen(want);
		if (wl > 0 && want[wl - 1] == '\n')
			want[--wl] = '\0';
		if (strcmp(text, want) != 0)
			fail_msg("%s: the comparisons differ from %s; computed:\n%s", goldens[g][0],
				 goldens[g][1], text);
	}
}

/* A run record compare/ reads through the model: a member of the wrong
 * type is an error naming the variant, the run and the member, not a run
 * quietly read as failed. */
static void test_malformed_run_is_refused(void **state)
{
	(void)state;
	_cleanup_job_ struct job *spec = spec_with_gates("[]");
	_cleanup_json_ json_object *variants = json_tokener_parse(
	    "{\"baseline\": {\"runs\": [{\"key\": \"baseline#0\", \"repeat\": 0, "
	    "\"status\": \"ok\", \"workloads\": [{\"name\": \"rtm\", \"tool\": "
	    "\"rt-migrate-test\", \"status\": 7}]}]}, \"patched\": {\"runs\": []}}");
	json_object *cmps = NULL, *reasons = NULL;
	char verdict[16];
	struct sl_error err = {0};
	assert_true(compare_result(spec, variants, &cmps, verdict, &reasons, &err) < 0);
	assert_int_equal(err.kind, ERR_INVALID);
	assert_non_null(strstr(err.message, "Variant 'baseline', run 0"));
	assert_non_null(strstr(err.message, "workloads[0].status"));
	assert_null(cmps);
}

/* run (returned) with the vCPU wait and the noisy mark the runner records. */
static json_object *with_wait(json_object *run, double wait_pct, bool noisy)
{
	json_object *hi = json_object_new_object();
	json_object_object_add(hi, "vcpu_wait_pct", json_object_new_double(wait_pct));
	json_object_object_add(run, "host_interference", hi);
	json_object_object_add(run, "noisy", json_object_new_boolean(noisy));
	return run;
}

/* Runs the host starved: left out under "exclude" (a hung one is not a
 * kernel failure), counted under "keep", a failure under "fail". */
static void test_noisy_runs(void **state)
{
	(void)state;
	for (int policy = 0; policy < 3; policy++) {
		char extra[64];
		snprintf(extra, sizeof(extra), ", \"noise_policy\": \"%s\"",
			 policy == 0   ? "exclude"
			 : policy == 1 ? "keep"
				       : "fail");
		_cleanup_job_ struct job *spec =
		    job_with("[{\"workload\": \"rtm\", \"metric\": \"inversions\"}]", extra);
		assert_int_equal(spec->noise_policy, policy == 0   ? JOB_NOISE_EXCLUDE
						     : policy == 1 ? JOB_NOISE_KEEP
								   : JOB_NOISE_FAIL);
		_cleanup_json_ json_object *variants = json_object_new_object();
		const double base[] = {0, 0, 0, 0, 0}, cand[] = {0, 0, 0, 0, 9};
		for (int r = 0; r < 5; r++) {
			char k[32];
			snprintf(k, sizeof(k), "baseline#%d", r);
			add_run(variants, "baseline",
				run(k, "ok", "rtm", "rt-migrate-test", 1, "inversions", base[r]));
			snprintf(k, sizeof(k), "patched#%d", r);
			json_object *cr = run(k, r == 3 ? "hung" : "ok", "rtm", "rt-migrate-test",
					      1, "inversions", cand[r]);
			if (r >= 3) /* Runs 3 (hung) and 4 (9 inversions) waited for the host. */
				with_wait(cr, 41.5, true);
			add_run(variants, "patched", cr);
		}
		_cleanup_json_ json_object *cmps = NULL, *reasons = NULL;
		char verdict[16];
		struct sl_error err = {0};
		assert_int_equal(compare_result(spec, variants, &cmps, verdict, &reasons, &err), 0);
		json_object *c = find_cmp(cmps, "patched", "inversions");
		int n = json_object_get_int(get(get(c, "candidate"), "n"));
		if (policy == 0) {
			/* 3 clean runs against 5: no change shown, not a hang either. */
			assert_int_equal(n, 3);
			assert_string_not_equal(verdict, "fail");
			assert_true(
			    reasons_contain(reasons, "waited 41.5 % of the run for a host CPU"));
		} else if (policy == 1) {
			/* Kept: the hung run fails the job as any hang does. */
			assert_int_equal(n, 4);
			assert_string_equal(verdict, "fail");
		} else {
			assert_string_equal(verdict, "fail");
			assert_true(
			    reasons_contain(reasons, "the job fails (noise_policy 'fail')"));
		}
	}
}

/* A candidate run whose sched_ext scheduler failed fails the job even when
 * the host was busy (docs/sched-ext.md): a loader that does not load is not
 * the host's doing. */
static void test_sched_ext_failed_counts_when_noisy(void **state)
{
	(void)state;
	_cleanup_job_ struct job *spec =
	    job_with("[{\"workload\": \"rtm\", \"metric\": \"inversions\"}]", "");
	_cleanup_json_ json_object *variants = json_object_new_object();
	for (int r = 0; r < 3; r++) {
		char k[32];
		snprintf(k, sizeof(k), "baseline#%d", r);
		add_run(variants, "baseline",
			run(k, "ok", "rtm", "rt-migrate-test", 1, "inversions", 0));
		snprintf(k, sizeof(k), "patched#%d", r);
		json_object *cr = run(k, r == 0 ? "sched_ext_failed" : "ok", "rtm",
				      "rt-migrate-test", 1, "inversions", 0);
		if (r == 0)
			with_wait(cr, 45.7, true);
		add_run(variants, "patched", cr);
	}
	_cleanup_json_ json_object *cmps = NULL, *reasons = NULL;
	char verdict[16];
	struct sl_error err = {0};
	assert_int_equal(compare_result(spec, variants, &cmps, verdict, &reasons, &err), 0);
	assert_string_equal(verdict, "fail");
	assert_true(reasons_contain(reasons, "ended with status 'sched_ext_failed'"));
}

/* A deadlocked guest spins its vCPUs, which then wait for a host CPU by the
 * guest's own doing: a noisy hung candidate run counts as the kernel's hang
 * when the baseline's runs on the same host were quiet, and is left out as
 * the host's when they were starved too. */
static void test_noisy_hang_on_quiet_host(void **state)
{
	(void)state;
	for (int starved = 0; starved < 2; starved++) {
		_cleanup_job_ struct job *spec =
		    job_with("[{\"workload\": \"rtm\", \"metric\": \"inversions\"}]", "");
		_cleanup_json_ json_object *variants = json_object_new_object();
		for (int r = 0; r < 2; r++) {
			char k[32];
			snprintf(k, sizeof(k), "baseline#%d", r);
			add_run(
			    variants, "baseline",
			    with_wait(run(k, "ok", "rtm", "rt-migrate-test", 1, "inversions", 0),
				      starved ? 40.0 : 11.2, starved));
			snprintf(k, sizeof(k), "patched#%d", r);
			add_run(
			    variants, "patched",
			    with_wait(run(k, "hung", "rtm", "rt-migrate-test", 1, "inversions", 0),
				      47.1, true));
		}
		_cleanup_json_ json_object *cmps = NULL, *reasons = NULL;
		char verdict[16];
		struct sl_error err = {0};
		assert_int_equal(compare_result(spec, variants, &cmps, verdict, &reasons, &err), 0);
		if (!starved) {
			assert_string_equal(verdict, "fail");
			assert_true(reasons_contain(reasons, "ended with status 'hung'"));
			assert_true(reasons_contain(reasons, "the hang counts"));
		} else {
			assert_string_not_equal(verdict, "fail");
			assert_false(reasons_contain(reasons, "the hang counts"));
		}
	}
}

/* The error rate the rule promises, measured by simulation (as Pinpoint
 * calibrates its thresholds): A/A jobs whose two variants draw from one
 * continuous distribution, gated with threshold 0 (any shown change counts).
 * At 3 runs a side no job may call a change (min_p 0.1 > alpha); at 5 the
 * false-change rate must stay near alpha (0.05; the bound allows 3 standard
 * errors over 400 jobs). The old interval-only rule called 10 % at 3. */
static double simulated_false_rate(int n, int jobs, unsigned seed)
{
	_cleanup_job_ struct job *spec = spec_with_gates(
	    "[{\"workload\": \"ct\", \"metric\": \"latency_us.avg\", \"threshold\": 0}]");
	srand(seed);
	int false_calls = 0;
	for (int j = 0; j < jobs; j++) {
		_cleanup_json_ json_object *variants = json_object_new_object();
		for (int r = 0; r < n; r++)
			for (int side = 0; side < 2; side++) {
				char k[32];
				/* Uniform draws: continuous, so no ties. */
				double v = 100.0 + 50.0 * ((double)rand() / RAND_MAX);
				snprintf(k, sizeof(k), "%s#%d", side ? "patched" : "baseline", r);
				add_run(variants, side ? "patched" : "baseline",
					run(k, "ok", "ct", "cyclictest", 1, "latency_us.avg", v));
			}
		_cleanup_json_ json_object *cmps = NULL, *reasons = NULL;
		char verdict[16];
		struct sl_error err = {0};
		assert_int_equal(compare_result(spec, variants, &cmps, verdict, &reasons, &err), 0);
		const char *v = verdict_of(cmps, "patched", "latency_us.avg");
		false_calls += strcmp(v, "improved") == 0 || strcmp(v, "regressed") == 0;
		if (n <= 3) /* a false regression is impossible here, so no A/A fails */
			assert_string_not_equal(verdict, "fail");
	}
	return (double)false_calls / jobs;
}

/* The same with adaptive repeats 3..20: data added round by round, a look
 * at each count of the schedule at its per-look level, stopping as the
 * runner does (no gated comparison inconclusive). Over all looks the false
 * change rate must stay near alpha. */
static double simulated_adaptive_false_rate(int jobs, unsigned seed, double *ret_mean_rounds)
{
	_cleanup_job_ struct job *spec =
	    job_with("[{\"workload\": \"ct\", \"metric\": \"latency_us.avg\", \"threshold\": 0}]",
		     ", \"repeat\": {\"min\": 3, \"max\": 20}");
	int looks[COMPARE_MAX_LOOKS];
	size_t n_looks = compare_look_schedule(3, 20, looks, COMPARE_MAX_LOOKS);
	srand(seed);
	int false_calls = 0;
	long rounds_total = 0;
	for (int j = 0; j < jobs; j++) {
		_cleanup_json_ json_object *variants = json_object_new_object();
		int rounds = 0;
		for (size_t li = 0; li < n_looks; li++) {
			for (; rounds < looks[li]; rounds++)
				for (int side = 0; side < 2; side++) {
					char k[32];
					double v = 100.0 + 50.0 * ((double)rand() / RAND_MAX);
					snprintf(k, sizeof(k), "%s#%d",
						 side ? "patched" : "baseline", rounds);
					add_run(variants, side ? "patched" : "baseline",
						run(k, "ok", "ct", "cyclictest", 1,
						    "latency_us.avg", v));
				}
			_cleanup_json_ json_object *cmps = NULL, *reasons = NULL;
			char verdict[16];
			struct sl_error err = {0};
			assert_int_equal(
			    compare_result(spec, variants, &cmps, verdict, &reasons, &err), 0);
			const char *v = verdict_of(cmps, "patched", "latency_us.avg");
			if (strcmp(v, "improved") == 0 || strcmp(v, "regressed") == 0) {
				false_calls++;
				break;
			}
			if (strcmp(v, "inconclusive") != 0)
				break;
		}
		rounds_total += rounds;
	}
	*ret_mean_rounds = (double)rounds_total / jobs;
	return (double)false_calls / jobs;
}

static void test_simulated_aa_error_rate(void **state)
{
	(void)state;
	double at3 = simulated_false_rate(3, 400, 1);
	double at5 = simulated_false_rate(5, 400, 2);
	double rounds;
	double adaptive = simulated_adaptive_false_rate(400, 3, &rounds);
	print_message("simulated A/A false-change rate: %.3f at 3 runs a side, %.3f at 5, %.3f "
		      "adaptive 3..20 (%.1f rounds on average)\n",
		      at3, at5, adaptive, rounds);
	assert_true(at3 == 0.0);
	assert_true(at5 <= 0.05 + 3 * sqrt(0.05 * 0.95 / 400));
	assert_true(adaptive <= 0.05 + 3 * sqrt(0.05 * 0.95 / 400));
}

/* The planted regression a busy host let through as "unchanged": the
 * interval [0, 5] allows a regression of 5 inversions, so the gate cannot
 * pass; it is inconclusive (more runs, or a quieter host, would decide). */
static void test_plausible_regression_is_not_a_pass(void **state)
{
	(void)state;
	_cleanup_job_ struct job *spec =
	    spec_with_gates("[{\"workload\": \"rtm\", \"metric\": \"inversions\"}]");
	_cleanup_json_ json_object *variants = json_object_new_object();
	const double base[] = {1, 0, 0, 0}, cand[] = {3, 3, 0, 5};
	add_pairs(variants, "rtm", "rt-migrate-test", "inversions", base, cand, 4);
	_cleanup_json_ json_object *cmps = NULL, *reasons = NULL;
	char verdict[16];
	struct sl_error err = {0};
	assert_int_equal(compare_result(spec, variants, &cmps, verdict, &reasons, &err), 0);
	assert_string_equal(verdict_of(cmps, "patched", "inversions"), "inconclusive");
	assert_string_equal(verdict, "inconclusive");
	/* The default threshold of inversions is one inversion. */
	assert_int_equal(
	    json_object_get_int(get(find_cmp(cmps, "patched", "inversions"), "threshold")), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_inversions_undecided_at_repeat_2),
	    cmocka_unit_test(test_inversions_improved_at_repeat_4),
	    cmocka_unit_test(test_aa_complete_separation_is_not_a_change),
	    cmocka_unit_test(test_regression_fails),
	    cmocka_unit_test(test_worse_beyond_threshold_regresses),
	    cmocka_unit_test(test_aa_unchanged),
	    cmocka_unit_test(test_candidate_run_failure_fails),
	    cmocka_unit_test(test_default_gates_and_opt_out),
	    cmocka_unit_test(test_not_built_variant),
	    cmocka_unit_test(test_relative_gate_and_inconclusive),
	    cmocka_unit_test(test_missing_gate_metric_and_direction_none),
	    cmocka_unit_test(test_bad_input),
	    cmocka_unit_test(test_noisy_runs),
	    cmocka_unit_test(test_noisy_hang_on_quiet_host),
	    cmocka_unit_test(test_sched_ext_failed_counts_when_noisy),
	    cmocka_unit_test(test_plausible_regression_is_not_a_pass),
	    cmocka_unit_test(test_simulated_aa_error_rate),
	    cmocka_unit_test(test_result_example),
	    cmocka_unit_test(test_golden_comparisons),
	    cmocka_unit_test(test_malformed_run_is_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
