/* A bisection of a failing series on the statistical verdict (see
 * bisection.h; docs/testing-your-patch.md "Which patch did it"). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "run/bisect_search.h"
#include "run/bisection.h"
#include "run/runner.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/macro.h"

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;
	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* Runs of the baseline already measured, by run key ("baseline#3"): every
 * step compares against the same base kernel with the same workloads, so
 * its baseline runs are the same experiment and are not booted again. */
struct run_pool {
	json_object *runs; /* run key -> run */
	int reused;	   /* lookups answered, this step */
	const char *baseline;
};

static void pool_add(struct run_pool *pool, json_object *result)
{
	json_object *runs = get(get(get(result, "variants"), pool->baseline), "runs");
	for (size_t i = 0; runs && i < json_object_array_length(runs); i++) {
		json_object *run = json_object_array_get_idx(runs, i);
		const char *key = json_object_get_string(get(run, "key"));
		if (key && !get(pool->runs, key))
			json_object_object_add(pool->runs, key, json_object_get(run));
	}
}

static json_object *pool_lookup(void *userdata, const char *run_key)
{
	struct run_pool *pool = userdata;
	json_object *run = get(pool->runs, run_key);
	if (!run)
		return NULL;
	pool->reused++;
	return json_object_get(run);
}

static int count_runs(json_object *result)
{
	int n = 0;
	json_object_object_foreach(get(result, "variants"), name, v)
	{
		(void)name;
		json_object *runs = get(v, "runs");
		n += runs ? (int)json_object_array_length(runs) : 0;
	}
	return n;
}

/* A result's verdict as the search counts it (summary_exit_code's rule:
 * anything but pass, fail or inconclusive is an error). */
static enum bisect_verdict verdict_of(json_object *result)
{
	const char *v = json_object_get_string(get(result, "verdict"));
	if (v && strcmp(v, "pass") == 0)
		return BISECT_GOOD;
	if (v && strcmp(v, "fail") == 0)
		return BISECT_BAD;
	if (v && strcmp(v, "inconclusive") == 0)
		return BISECT_INCONCLUSIVE;
	return BISECT_ERROR;
}

static const char *verdict_word(enum bisect_verdict v)
{
	static const char *const words[] = {"pass", "fail", "inconclusive", "error"};
	return words[v];
}

static void say(const struct bisection_input *in, const char *fmt, ...) _printf_(2, 3);
static void say(const struct bisection_input *in, const char *fmt, ...)
{
	if (!in->say)
		return;
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	in->say(in->step_userdata, line);
}

/* The gated comparisons of a step, short: what decided it. */
static json_object *gated_comparisons(json_object *result)
{
	json_object *out = json_object_new_array();
	json_object *cmps = get(result, "comparisons");
	for (size_t i = 0; cmps && i < json_object_array_length(cmps); i++) {
		json_object *c = json_object_array_get_idx(cmps, i), *g = get(c, "gated");
		if (!g || !json_object_get_boolean(g))
			continue;
		json_object *s = json_object_new_object();
		static const char *const keys[] = {"variant", "workload", "metric", "verdict",
						   "change",  "ci95",	  "p_value"};
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			if (get(c, keys[k]))
				json_object_object_add(s, keys[k],
						       json_object_get(get(c, keys[k])));
		json_object_array_add(out, s);
	}
	return out;
}

/* One step: the base against the base plus the first k patches. */
static int run_step(const struct bisection_input *in, struct run_pool *pool, json_object *patches,
		    size_t k, json_object **ret_step, enum bisect_verdict *ret_verdict)
{
	struct sl_error err = {0};
	_cleanup_json_ json_object *spec = NULL, *expanded = NULL, *result = NULL;
	json_object *prefix = json_object_new_array();
	char name[96], dir[32];
	const char *last =
	    json_object_get_string(get(json_object_array_get_idx(patches, (size_t)k - 1), "name"));

	if (json_object_deep_copy(in->spec, &spec, NULL) < 0) {
		json_object_put(prefix);
		return -ENOMEM;
	}
	snprintf(name, sizeof(name), "%.50s-first-%zu", json_object_get_string(get(spec, "name")),
		 k);
	json_object_object_add(spec, "name", json_object_new_string(name));
	if (in->expanded) {
		/* the candidate kernel's patches: the base's own, then the first k */
		json_object_put(prefix);
		json_object *pp = get(get(get(spec, "kernels"), "patched"), "patches");
		size_t keep = json_object_array_length(pp) - json_object_array_length(patches) + k;
		json_object_array_del_idx(pp, keep, json_object_array_length(pp) - keep);
		expanded = TAKE_PTR(spec);
	} else {
		for (size_t i = 0; i < k; i++)
			json_object_array_add(
			    prefix, json_object_get(json_object_array_get_idx(patches, i)));
		json_object_object_add(spec, "patches", prefix);
		if (job_expand_json(spec, in->origin, in->cwd, in->limits, &expanded, &err) < 0) {
			say(in, "[bisect] the job of the first %zu patches: %s", k, err.message);
			return -EINVAL;
		}
	}
	snprintf(dir, sizeof(dir), "bisect-%zu", k);
	_cleanup_free_ char *step_dir = fs_path_join(in->job_dir, dir);
	if (!step_dir)
		return -ENOMEM;
	json_object *at = in->commits ? json_object_array_get_idx(in->commits, k - 1) : NULL;
	if (at)
		say(in, "[bisect] the first %zu of %zu commits (up to %.12s %s)", k,
		    json_object_array_length(patches), json_object_get_string(get(at, "commit")),
		    json_object_get_string(get(at, "subject")));
	else
		say(in, "[bisect] the first %zu of %zu patches (up to %s)", k,
		    json_object_array_length(patches), last ? last : "?");
	pool->reused = 0;
	if (in->step_run(in->step_userdata, expanded, step_dir, pool_lookup, pool, &result) < 0)
		return -EIO;
	pool_add(pool, result);

	enum bisect_verdict v = verdict_of(result);
	json_object *step = json_object_new_object();
	json_object_object_add(step, "patches", json_object_new_int((int)k));
	json_object_object_add(step, "last_patch", json_object_new_string(last ? last : ""));
	json_object *commit = in->commits ? json_object_array_get_idx(in->commits, k - 1) : NULL;
	if (commit) {
		json_object_object_add(step, "commit", json_object_get(get(commit, "commit")));
		json_object_object_add(step, "subject", json_object_get(get(commit, "subject")));
	}
	json_object_object_add(step, "verdict", json_object_new_string(verdict_word(v)));
	json_object_object_add(step, "uncertain",
			       json_object_new_boolean(v != BISECT_GOOD && v != BISECT_BAD));
	json_object *reasons = get(result, "verdict_reasons");
	json_object_object_add(step, "decided_by",
			       reasons ? json_object_get(reasons) : json_object_new_array());
	json_object_object_add(step, "comparisons", gated_comparisons(result));
	json_object *build = get(get(get(result, "kernels"), "patched"), "build");
	if (build)
		json_object_object_add(step, "build", json_object_get(build));
	json_object *cached = get(get(get(result, "kernels"), "patched"), "cached");
	json_object_object_add(
	    step, "built", json_object_new_boolean(!cached || !json_object_get_boolean(cached)));
	json_object_object_add(step, "boots",
			       json_object_new_int(count_runs(result) - pool->reused));
	json_object_object_add(step, "reused_runs", json_object_new_int(pool->reused));
	json_object_object_add(step, "job_dir", json_object_new_string(step_dir));
	*ret_step = step;
	*ret_verdict = v;
	return 0;
}

/* The state a measure callback needs between steps. */
struct search_ctx {
	const struct bisection_input *in;
	struct run_pool *pool;
	json_object *patches, *steps;
	int builds, boots;
};

static enum bisect_verdict measure_prefix(void *userdata, size_t k)
{
	struct search_ctx *s = userdata;
	json_object *step = NULL;
	enum bisect_verdict v = BISECT_ERROR;
	if (run_step(s->in, s->pool, s->patches, k, &step, &v) < 0)
		return BISECT_ERROR;
	s->builds += json_object_get_boolean(get(step, "built"));
	s->boots += json_object_get_int(get(step, "boots"));
	json_object_array_add(s->steps, step);
	return v;
}

/* The series' patches: the shorthand's "patches", or those the expanded
 * shorthand's kernel "patched" adds to kernel "base" (a new reference, or
 * NULL when the spec is not of that shape). */
static json_object *series_patches(const struct bisection_input *in)
{
	if (!in->expanded)
		return json_object_get(get(in->spec, "patches"));
	json_object *kernels = get(in->spec, "kernels");
	json_object *bp = get(get(kernels, "base"), "patches");
	json_object *pp = get(get(kernels, "patched"), "patches");
	size_t nb = bp ? json_object_array_length(bp) : 0;
	size_t np = pp ? json_object_array_length(pp) : 0;
	if (!pp || np < nb || json_object_object_length(kernels) != 2)
		return NULL;
	json_object *out = json_object_new_array();
	for (size_t i = nb; i < np; i++)
		json_object_array_add(out, json_object_get(json_object_array_get_idx(pp, i)));
	return out;
}

int run_bisection(const struct bisection_input *in, json_object *result)
{
	_cleanup_json_ json_object *patches = series_patches(in);
	size_t n = patches ? json_object_array_length(patches) : 0;

	if (n < 2 || verdict_of(result) != BISECT_BAD)
		return 0;
	struct run_pool pool = {.runs = json_object_new_object(),
				.baseline =
				    json_object_get_string(get(get(result, "job"), "baseline"))};
	if (!pool.baseline)
		pool.baseline = "baseline";
	pool_add(&pool, result);

	struct search_ctx s = {
	    .in = in, .pool = &pool, .patches = patches, .steps = json_object_new_array()};
	say(in, "[bisect] the series of %zu %s failed: looking for the first one that fails", n,
	    in->commits ? "commits" : "patches");
	struct bisect_answer a;
	bisect_search(n, measure_prefix, &s, &a);

	json_object *b = json_object_new_object();
	if (a.error) {
		json_object_object_add(b, "first_bad", NULL);
		json_object_object_add(b, "status", json_object_new_string("error"));
	} else {
		json_object *p = json_object_array_get_idx(patches, a.first_bad - 1);
		json_object_object_add(b, "status", json_object_new_string("found"));
		json_object_object_add(b, "first_bad", json_object_new_int((int)a.first_bad));
		json_object_object_add(b, "first_bad_patch", json_object_get(get(p, "name")));
		json_object *c =
		    in->commits ? json_object_array_get_idx(in->commits, a.first_bad - 1) : NULL;
		if (c) {
			json_object_object_add(b, "first_bad_commit",
					       json_object_get(get(c, "commit")));
			json_object_object_add(b, "first_bad_subject",
					       json_object_get(get(c, "subject")));
		}
	}
	json_object_object_add(b, "patches", json_object_new_int((int)n));
	if (in->commits)
		json_object_object_add(b, "commits", json_object_get(in->commits));
	json_object_object_add(b, "certain", json_object_new_boolean(a.certain));
	json_object_object_add(
	    b, "rule",
	    json_object_new_string("binary search over prefixes of the series, each judged by the "
				   "job's own verdict rules and repeats; a prefix that fails to "
				   "build or hangs is bad; an inconclusive prefix counts good and "
				   "makes the answer uncertain"));
	json_object_object_add(b, "steps", s.steps);
	json_object_object_add(b, "builds", json_object_new_int(s.builds));
	json_object_object_add(b, "boots", json_object_new_int(s.boots));
	json_object_object_add(result, "bisection", b);
	json_object_put(pool.runs);
	return 0;
}

/* A step run by the service's runner: the job's progress and cancel hooks,
 * the bisection's run pool for lookups. */
struct worker_step {
	bisection_runner_fn runner;
	const struct runner_config *cfg;
	const struct runner_hooks *outer;
	json_object *(*lookup_run)(void *, const char *);
	void *lookup_userdata;
};

static void step_progress(void *userdata, const struct runner_progress *p)
{
	struct worker_step *w = userdata;
	w->outer->progress(w->outer->userdata, p);
}

static int step_cancelled(void *userdata)
{
	struct worker_step *w = userdata;
	return w->outer->cancelled(w->outer->userdata);
}

static json_object *step_lookup(void *userdata, const char *run_key)
{
	struct worker_step *w = userdata;
	return w->lookup_run(w->lookup_userdata, run_key);
}

static int worker_step_run(void *userdata, json_object *expanded, const char *step_dir,
			   json_object *(*lookup_run)(void *, const char *), void *lookup_userdata,
			   json_object **ret_result)
{
	struct worker_step *w = userdata;
	w->lookup_run = lookup_run;
	w->lookup_userdata = lookup_userdata;
	struct runner_hooks h = {
	    .userdata = w,
	    .progress = w->outer && w->outer->progress ? step_progress : NULL,
	    .cancelled = w->outer && w->outer->cancelled ? step_cancelled : NULL,
	    .lookup_run = step_lookup,
	};
	struct sl_error err = {0};
	return w->runner(w->cfg, expanded, step_dir, &h, ret_result, &err) < 0 ? -EIO : 0;
}

int run_job_and_bisect_with(bisection_runner_fn runner, const struct runner_config *cfg,
			    json_object *expanded, const char *job_dir,
			    const struct runner_hooks *hooks, json_object **ret_result,
			    struct sl_error *err)
{
	int r = runner(cfg, expanded, job_dir, hooks, ret_result, err);
	json_object *want = get(expanded, "bisect");
	if (r < 0 || !want || !json_object_get_boolean(want))
		return r;
	struct worker_step w = {.runner = runner, .cfg = cfg, .outer = hooks};
	struct bisection_input in = {.spec = expanded,
				     .expanded = true,
				     .origin = JOB_ORIGIN_SERVICE,
				     .job_dir = job_dir,
				     .commits = get(expanded, "commits"),
				     .step_run = worker_step_run,
				     .step_userdata = &w};
	return run_bisection(&in, *ret_result);
}

int run_job_and_bisect(const struct runner_config *cfg, json_object *expanded, const char *job_dir,
		       const struct runner_hooks *hooks, json_object **ret_result,
		       struct sl_error *err)
{
	return run_job_and_bisect_with(runner_run_job, cfg, expanded, job_dir, hooks, ret_result,
				       err);
}
