/* The service's runner for a job that walks its series: a
 * CI shorthand with "bisect": true is bisected when it fails
 * (run/bisection.h), one with "per_patch": true is attributed patch by
 * patch whatever its verdict (run/attribution.h). serve_cmd.c hands
 * run_job_and_bisect to the queue as its runner. */
#pragma once

#include "job/job.h"
#include "util/error.h"
#include "util/json.h"

/* The signature of runner_run_job (run/runner.h). */
struct runner_config;
struct runner_hooks;
typedef int (*bisection_runner_fn)(const struct runner_config *cfg, json_object *expanded,
				   const char *job_dir, const struct runner_hooks *hooks,
				   json_object **ret_result, struct sl_error *err);

/* The service's runner: runner_run_job, then, when the expanded job asks
 * for it ("bisect": true; its "commits" name the steps) and its result
 * failed, run_bisection on it (or, when it asks for "per_patch": true,
 * run_attribution whatever its verdict: run/attribution.h), each step a job of its own under
 * job_dir/bisect-K run by runner_run_job with the progress and cancel
 * hooks only (a step's run keys are the job's own: its runs must not be
 * stored as the job's). The same arguments and errors as runner_run_job;
 * the answer is result.bisection. */
int run_job_and_bisect(const struct runner_config *cfg, json_object *expanded, const char *job_dir,
		       const struct runner_hooks *hooks, json_object **ret_result,
		       struct sl_error *err);
/* The same with another runner for the job and its steps (unit tests). */
int run_job_and_bisect_with(bisection_runner_fn runner, const struct runner_config *cfg,
			    json_object *expanded, const char *job_dir,
			    const struct runner_hooks *hooks, json_object **ret_result,
			    struct sl_error *err);
