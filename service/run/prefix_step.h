/* One step of a walk over the prefixes of a series, shared by
 * the bisection (run/bisection.c: which prefix first fails) and the
 * per-patch attribution (run/attribution.c: what each patch adds): the
 * job of the base plus the first k patches of the series, run by the
 * caller's step_run against the same base, with the base's runs measured
 * so far reused by run key (the same kernel, workloads and round: the same
 * experiment, not booted again). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "job/job.h"
#include "run/bisect_search.h"
#include "util/json.h"
#include "util/macro.h"

/* Runs one step's expanded job (borrowed) in step_dir, asking lookup_run
 * (with lookup_userdata) for runs already measured; on success *ret_result
 * is a new reference to its result. Returns 0, or < 0 when the step could
 * not run (the caller has said why). */
typedef int (*series_step_fn)(void *userdata, json_object *expanded, const char *step_dir,
			      json_object *(*lookup_run)(void *, const char *),
			      void *lookup_userdata, json_object **ret_result);

/* Builds one step's kernels (expanded, borrowed) in step_dir and runs
 * nothing; *ret_built: kernels built, 0 all cache hits, -1 a kernel did not
 * build. Returns 0, or < 0 when it could not (the caller has said why). May
 * be called from several threads at once. */
typedef int (*series_build_fn)(void *userdata, json_object *expanded, const char *step_dir,
			       int *ret_built);

/* What a walk over a series' prefixes is given: the bisection's and the
 * attribution's input. */
struct series_input {
	json_object *spec; /* the shorthand job (borrowed): base + all the patches */
	/* spec is the expanded form of a shorthand job (kernels "base" and
	 * "patched", the stored form a worker has): a step keeps the base's
	 * own patches and the first k of the series, and is not expanded
	 * again */
	bool expanded;
	enum job_origin origin;
	const char *cwd;		 /* where relative sources in spec resolve (CLI) */
	const struct job_limits *limits; /* for job_expand_json; NULL: the defaults */
	const char *job_dir;		 /* the steps run in job_dir/bisect-K (per-patch-K) */
	json_object *commits;		 /* a commit range's [{commit, subject}] or NULL */
	series_step_fn step_run;
	/* With build_slots > 1, the attribution builds its prefixes' kernels
	 * that many at once before it measures them (run/prefix_prebuild.h);
	 * NULL or <= 1: each step builds its own when it runs. */
	series_build_fn step_build;
	int build_slots;
	void *step_userdata;
	/* One line of progress ("[bisect] ...", "[per-patch] ..."); may be NULL. */
	void (*say)(void *userdata, const char *line);
};

/* The baseline's runs measured so far, by run key ("baseline#3"). */
struct prefix_pool {
	json_object *runs; /* run key -> run */
	int reused;	   /* lookups answered during the last step */
	const char *baseline;
};

/* A pool holding the baseline runs of result (the whole series' result,
 * borrowed; its job.baseline names the baseline variant). */
void prefix_pool_init(struct prefix_pool *pool, json_object *result);
void prefix_pool_free(struct prefix_pool *pool);

/* The series' patches (a new reference): the shorthand's "patches", or
 * those the expanded shorthand's kernel "patched" adds to kernel "base";
 * NULL when the spec is not of either shape. */
json_object *prefix_series_patches(const struct series_input *in);

/* Runs the first k (1 <= k <= n) patches of patches against the base, in
 * in->job_dir/DIR-k, saying "[TAG] the first k of n ..." first. On success
 * *ret_step is a new step object {patches, last_patch, commit, subject,
 * verdict, uncertain, decided_by, comparisons, build, built, boots,
 * reused_runs, job_dir}, *ret_verdict its verdict and, when ret_result is
 * not NULL, *ret_result a new reference to the step's whole result.
 * Returns < 0 when the step could not run (already said why). */
int prefix_step_run(const struct series_input *in, struct prefix_pool *pool, json_object *patches,
		    size_t k, const char *tag, const char *dir, json_object **ret_step,
		    enum bisect_verdict *ret_verdict, json_object **ret_result);

/* The job of the base plus the first k patches (a new reference), or NULL
 * (said why, tag prefixing the line). */
json_object *prefix_step_job(const struct series_input *in, json_object *patches, size_t k,
			     const char *tag);
/* in->job_dir/DIR-k, where the step of the first k runs (malloc'd). */
char *prefix_step_dir(const struct series_input *in, const char *dir, size_t k);

/* A result's verdict as a walk counts it: pass, fail, inconclusive, and
 * anything else an error (summary_exit_code's rule). */
enum bisect_verdict prefix_verdict(json_object *result);

/* The gated ones of a comparisons array (borrowed; NULL: none), short:
 * {variant, workload, metric, verdict, change, ci95, p_value} (a new
 * array). */
json_object *prefix_gated_comparisons(json_object *comparisons);

/* The number of runs in result, every variant's. */
int prefix_count_runs(json_object *result);

/* One line of progress through in->say (nothing when it is NULL). */
void prefix_say(const struct series_input *in, const char *fmt, ...) _printf_(2, 3);
