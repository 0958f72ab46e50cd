/* The service's runner for a job that walks its series (see
 * series_runner.h). */
#include <errno.h>
#include <stdbool.h>

#include "run/attribution.h"
#include "run/bisection.h"
#include "run/runner.h"
#include "run/series_runner.h"
#include "util/json.h"
#include "util/json_get.h"

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

/* Builds a prefix's kernels ahead (run/prefix_prebuild.h), from a
 * builder thread: only the job's cancel hook, no progress (the builder
 * says when each starts and ends), always with runner_build_job: only
 * with cfg->build_slots > 1 (run/prefix_prebuild.h), so never for a unit
 * test's mock runner, which runs without a config. */
static int worker_step_build(void *userdata, json_object *expanded, const char *step_dir,
			     int *ret_built)
{
	struct worker_step *w = userdata;
	struct runner_hooks h = {
	    .userdata = w,
	    .cancelled = w->outer && w->outer->cancelled ? step_cancelled : NULL,
	};
	struct sl_error err = {0};
	return runner_build_job(w->cfg, expanded, step_dir, &h, ret_built, &err) < 0 ? -EIO : 0;
}

int run_job_and_bisect_with(bisection_runner_fn runner, const struct runner_config *cfg,
			    json_object *expanded, const char *job_dir,
			    const struct runner_hooks *hooks, json_object **ret_result,
			    struct sl_error *err)
{
	int r = runner(cfg, expanded, job_dir, hooks, ret_result, err);
	json_object *want = json_member(expanded, "bisect"),
		    *per_patch = json_member(expanded, "per_patch");
	bool attribute = per_patch && json_object_get_boolean(per_patch);
	if (r < 0 || (!attribute && (!want || !json_object_get_boolean(want))))
		return r;
	struct worker_step w = {.runner = runner, .cfg = cfg, .outer = hooks};
	struct series_input in = {.spec = expanded,
				  .expanded = true,
				  .origin = JOB_ORIGIN_SERVICE,
				  .job_dir = job_dir,
				  .commits = json_member(expanded, "commits"),
				  .step_run = worker_step_run,
				  .step_build = worker_step_build,
				  .build_slots = cfg ? cfg->build_slots : 1,
				  .step_userdata = &w};
	return attribute ? run_attribution(&in, *ret_result) : run_bisection(&in, *ret_result);
}

int run_job_and_bisect(const struct runner_config *cfg, json_object *expanded, const char *job_dir,
		       const struct runner_hooks *hooks, json_object **ret_result,
		       struct sl_error *err)
{
	return run_job_and_bisect_with(runner_run_job, cfg, expanded, job_dir, hooks, ret_result,
				       err);
}
