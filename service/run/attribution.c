/* Per-patch attribution (see attribution.h; docs/testing-your-patch.md
 * "What each patch did"). */
#include <errno.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "compare/compare.h"
#include "run/attribution.h"
#include "run/prefix_prebuild.h"
#include "run/prefix_step.h"
#include "util/json.h"
#include "util/macro.h"
#include "util/json_get.h"

/* The name of result's one candidate variant (the shorthand's "patched"),
 * or NULL. */
static const char *candidate_name(json_object *result, const char *baseline)
{
	json_object_object_foreach(json_member(result, "variants"), name, v)
	{
		(void)v;
		if (strcmp(name, baseline) != 0)
			return name;
	}
	return NULL;
}

/* A variants object with before's runs as the baseline and after's as the
 * candidate (new; the runs borrowed by reference). */
static json_object *pair_of(const char *baseline, json_object *before, const char *candidate,
			    json_object *after)
{
	json_object *variants = json_object_new_object();
	json_object *b = json_object_new_object(), *a = json_object_new_object();
	json_object_object_add(b, "runs", json_object_get(before));
	json_object_object_add(a, "runs", json_object_get(after));
	json_object_object_add(variants, baseline, b);
	json_object_object_add(variants, candidate, a);
	return variants;
}

/* The gated comparisons of one patch's own change, short, with the two
 * medians as from and to (a new array). */
static json_object *added_of(json_object *comparisons)
{
	json_object *out = json_object_new_array();
	for (size_t i = 0; i < json_object_array_length(comparisons); i++) {
		json_object *c = json_object_array_get_idx(comparisons, i);
		if (!json_object_get_boolean(json_member(c, "gated")))
			continue;
		json_object *s = json_object_new_object();
		static const char *const keys[] = {"workload",	 "metric", "verdict", "change",
						   "change_pct", "ci95",   "p_value", "better"};
		for (size_t k = 0; k < ELEMENTSOF(keys); k++)
			if (json_member(c, keys[k]))
				json_object_object_add(s, keys[k],
						       json_object_get(json_member(c, keys[k])));
		json_object_object_add(
		    s, "from", json_object_get(json_member(json_member(c, "baseline"), "median")));
		json_object_object_add(
		    s, "to", json_object_get(json_member(json_member(c, "candidate"), "median")));
		json_object_array_add(out, s);
	}
	return out;
}

static bool decided(const char *verdict)
{
	return verdict && (strcmp(verdict, "improved") == 0 || strcmp(verdict, "regressed") == 0);
}

/* The carried_by entry for added comparison a of step (a new object). */
static json_object *carried_entry(json_object *step, json_object *a)
{
	json_object *o = json_object_new_object();
	static const char *const from_a[] = {"workload", "metric"};
	static const char *const from_step[] = {"patches", "last_patch", "commit"};
	static const char *const from_a_after[] = {"verdict", "change", "ci95", "p_value"};
	for (size_t k = 0; k < ELEMENTSOF(from_a); k++)
		json_object_object_add(o, from_a[k], json_object_get(json_member(a, from_a[k])));
	for (size_t k = 0; k < ELEMENTSOF(from_step); k++)
		if (json_member(step, from_step[k]))
			json_object_object_add(o, from_step[k],
					       json_object_get(json_member(step, from_step[k])));
	for (size_t k = 0; k < ELEMENTSOF(from_a_after); k++)
		json_object_object_add(o, from_a_after[k],
				       json_object_get(json_member(a, from_a_after[k])));
	return o;
}

/* Per gated metric any step compared, the patch whose own change was
 * decided and largest in magnitude, in the order the metrics first appear
 * (a new array; a metric no patch decided is left out). */
static json_object *carried_by(json_object *steps)
{
	json_object *out = json_object_new_array();
	_cleanup_json_ json_object *at = json_object_new_object(); /* "w\nm" -> index in out */
	for (size_t s = 0; s < json_object_array_length(steps); s++) {
		json_object *step = json_object_array_get_idx(steps, s),
			    *added = json_member(step, "added");
		for (size_t i = 0; added && i < json_object_array_length(added); i++) {
			json_object *a = json_object_array_get_idx(added, i);
			const char *w = json_object_get_string(json_member(a, "workload"));
			const char *m = json_object_get_string(json_member(a, "metric"));
			if (!w || !m || !decided(json_object_get_string(json_member(a, "verdict"))))
				continue;
			char key[512];
			snprintf(key, sizeof(key), "%s\n%s", w, m);
			json_object *idx = json_member(at, key);
			if (!idx) {
				json_object_object_add(
				    at, key,
				    json_object_new_int((int)json_object_array_length(out)));
				json_object_array_add(out, carried_entry(step, a));
				continue;
			}
			size_t j = (size_t)json_object_get_int(idx);
			double have = json_object_get_double(
			    json_member(json_object_array_get_idx(out, j), "change"));
			if (fabs(json_object_get_double(json_member(a, "change"))) > fabs(have))
				json_object_array_put_idx(out, j, carried_entry(step, a));
		}
	}
	return out;
}

/* Compares the runs of before and after (each a variants' runs array) by
 * the job's rules and adds the patch's own change to step as "added". */
static int add_own_change(const struct job *job, json_object *result, const char *baseline,
			  const char *candidate, json_object *before, json_object *after,
			  json_object *step)
{
	struct sl_error err = {0};
	_cleanup_json_ json_object *pair = pair_of(baseline, before, candidate, after);
	json_object *comparisons = NULL, *reasons = NULL;
	char verdict[16];
	int r = compare_result_calibrated(job, pair, json_member(result, "calibration"),
					  &comparisons, verdict, &reasons, &err);
	if (r < 0)
		return r;
	json_object_object_add(step, "added", added_of(comparisons));
	/* why, in the comparison's own sentences: what was left out as noisy,
	 * and why a gated metric could not be judged */
	json_object_object_add(step, "added_verdict", json_object_new_string(verdict));
	json_object_object_add(step, "added_reasons", reasons);
	json_object_put(comparisons);
	return 0;
}

int run_attribution(const struct series_input *in, json_object *result)
{
	_cleanup_json_ json_object *patches = prefix_series_patches(in);
	size_t n = patches ? json_object_array_length(patches) : 0;
	struct job *job = NULL;

	if (n < 2)
		return 0;
	/* the job as run (result.job: the expanded spec), typed for the
	 * comparison rules */
	struct sl_error err = {0};
	if (job_from_expanded(json_member(result, "job"), &job, &err) < 0)
		return -EINVAL;
	struct prefix_pool pool;
	prefix_pool_init(&pool, result);
	const char *candidate = candidate_name(result, pool.baseline);
	json_object *steps = json_object_new_array();
	json_object *before =
	    json_member(json_member(json_member(result, "variants"), pool.baseline), "runs");
	_cleanup_json_ json_object *held = NULL; /* the last step's result: before's owner */
	int builds = 0, boots = 0;
	bool error = !candidate;

	prefix_say(in, "[per-patch] measuring each of the %zu %s on its own", n,
		   in->commits ? "commits" : "patches");
	/* every prefix but the whole series (measured already), built ahead
	 * when build slots allow */
	int *prebuilt = calloc(n, sizeof(int)), n_prebuilt = 0;
	if (!prebuilt)
		error = true;
	else if (candidate)
		n_prebuilt =
		    prefix_prebuild(in, patches, n - 1, "per-patch", "per-patch", prebuilt);
	for (size_t k = 1; k <= n && !error; k++) {
		json_object *step = NULL, *step_result = NULL;
		enum bisect_verdict v;
		if (k < n) {
			if (prefix_step_run(in, &pool, patches, k, "per-patch", "per-patch", &step,
					    &v, &step_result) < 0) {
				error = true;
				break;
			}
			if (prebuilt[k - 1] > 0) {
				/* built ahead, so its step found it in the cache */
				json_object_object_add(step, "built",
						       json_object_new_boolean(true));
				json_object_object_add(step, "prebuilt",
						       json_object_new_boolean(true));
			}
			builds += json_object_get_boolean(json_member(step, "built"));
			boots += json_object_get_int(json_member(step, "boots"));
		} else {
			/* the whole series: its result is already measured */
			step = json_object_new_object();
			json_object *last = json_object_array_get_idx(patches, n - 1);
			json_object *commit =
			    in->commits ? json_object_array_get_idx(in->commits, n - 1) : NULL;
			json_object_object_add(step, "patches", json_object_new_int((int)n));
			json_object_object_add(step, "last_patch",
					       json_object_get(json_member(last, "name")));
			if (commit) {
				json_object_object_add(
				    step, "commit", json_object_get(json_member(commit, "commit")));
				json_object_object_add(
				    step, "subject",
				    json_object_get(json_member(commit, "subject")));
			}
			json_object_object_add(step, "verdict",
					       json_object_get(json_member(result, "verdict")));
			json_object_object_add(
			    step, "comparisons",
			    prefix_gated_comparisons(json_member(result, "comparisons")));
			json_object_object_add(step, "built", json_object_new_boolean(false));
			json_object_object_add(step, "boots", json_object_new_int(0));
			json_object_object_add(step, "reused_runs", json_object_new_int(0));
			step_result = json_object_get(result);
		}
		json_object *after = json_member(
		    json_member(json_member(step_result, "variants"), candidate), "runs");
		if (add_own_change(job, result, pool.baseline, candidate, before, after, step) < 0)
			error = true;
		json_object_array_add(steps, step);
		json_object_put(held);
		held = step_result;
		before = after;
	}

	json_object *a = json_object_new_object();
	json_object_object_add(a, "status", json_object_new_string(error ? "error" : "done"));
	json_object_object_add(a, "patches", json_object_new_int((int)n));
	if (in->commits)
		json_object_object_add(a, "commits", json_object_get(in->commits));
	json_object_object_add(
	    a, "rule",
	    json_object_new_string("every prefix measured against the base with the job's own "
				   "repeats (the base's runs reused); a patch's own change is its "
				   "prefix's runs against the prefix before it (the first patch's "
				   "against the base) by the job's comparison rules; carried_by "
				   "names, per gated metric, the patch whose own change was "
				   "decided and largest"));
	json_object_object_add(a, "carried_by", carried_by(steps));
	json_object_object_add(a, "steps", steps);
	json_object_object_add(a, "builds", json_object_new_int(builds));
	json_object_object_add(a, "boots", json_object_new_int(boots));
	json_object_object_add(
	    a, "build_slots",
	    json_object_new_int(in->build_slots > 1 && in->step_build ? in->build_slots : 1));
	json_object_object_add(a, "prebuilt", json_object_new_int(n_prebuilt));
	json_object_object_add(result, "attribution", a);
	free(prebuilt);
	prefix_pool_free(&pool);
	job_free(job);
	return 0;
}
