/* A bisection of a failing series on the statistical verdict (issue 18),
 * for every caller: `schedlab test --bisect` (cli/bisect.c) and, later, the
 * service's workers. Prefixes of the series (the shorthand job's patches,
 * or a commit range's commits as patches) are built and measured against
 * the same base with the job's own rules (suite, gates, adaptive repeats),
 * by the binary search of run/bisect_search.h. The base's runs measured so
 * far are reused by run key; a prefix that does not build or hangs fails
 * like any job; an inconclusive prefix counts as good and makes the answer
 * uncertain. The answer goes into result.bisection {status, first_bad,
 * first_bad_patch, first_bad_commit, first_bad_subject, commits (a commit
 * range), certain, steps[{patches, last_patch, commit, subject, verdict,
 * uncertain, decided_by, comparisons, built, boots, reused_runs, job_dir}],
 * builds, boots}. How a step runs is the caller's (step_run): the CLI
 * prints progress, a worker would report it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "job/job.h"
#include "util/error.h"
#include "util/json.h"

/* Runs one step's expanded job (borrowed) in step_dir, asking lookup_run
 * (with lookup_userdata) for runs already measured; on success *ret_result
 * is a new reference to its result. Returns 0, or < 0 when the step could
 * not run (the caller has said why). */
typedef int (*bisection_step_fn)(void *userdata, json_object *expanded, const char *step_dir,
				 json_object *(*lookup_run)(void *, const char *),
				 void *lookup_userdata, json_object **ret_result);

struct bisection_input {
	json_object *spec; /* the shorthand job (borrowed): base + all the patches */
	/* spec is the expanded form of a shorthand job (kernels "base" and
	 * "patched", the stored form a worker has): a step keeps the base's
	 * own patches and the first k of the series, and is not expanded
	 * again */
	bool expanded;
	enum job_origin origin;
	const char *cwd;		 /* where relative sources in spec resolve (CLI) */
	const struct job_limits *limits; /* for job_expand_json; NULL: the defaults */
	const char *job_dir;		 /* the steps run in job_dir/bisect-K */
	json_object *commits;		 /* a commit range's [{commit, subject}] or NULL */
	bisection_step_fn step_run;
	void *step_userdata;
	/* One line of progress ("[bisect] ..."); may be NULL. */
	void (*say)(void *userdata, const char *line);
};

/* When result (the whole series' result) failed and the series has two
 * patches or more, bisects and adds result.bisection. Returns 0; a step
 * that errors ends the search with status "error" (the steps so far are
 * kept). */
int run_bisection(const struct bisection_input *in, json_object *result);

/* The signature of runner_run_job (run/runner.h). */
struct runner_config;
struct runner_hooks;
typedef int (*bisection_runner_fn)(const struct runner_config *cfg, json_object *expanded,
				   const char *job_dir, const struct runner_hooks *hooks,
				   json_object **ret_result, struct sl_error *err);

/* The service's runner: runner_run_job, then, when the expanded job asks
 * for it ("bisect": true; its "commits" name the steps) and its result
 * failed, run_bisection on it, each step a job of its own under
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
