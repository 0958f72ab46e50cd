/* Bisection of a failing series on the statistical verdict (`schedlab test
 * --bisect`, on by default for a series of two or more patches): prefixes
 * of the series are built and measured against the same base with the
 * job's own rules (suite, gates, adaptive repeats), in a binary search for
 * the first prefix that fails. The base's runs measured so far are reused
 * by run key; a prefix that does not build or hangs fails like any job; an
 * inconclusive prefix counts as good and makes the answer uncertain. The
 * answer goes into result.bisection {status, first_bad, first_bad_patch,
 * first_bad_commit, first_bad_subject, commits (a commit range),
 * certain, steps[{patches, last_patch, commit, subject, verdict, uncertain, decided_by,
 * comparisons, built, boots, reused_runs, job_dir}], builds, boots}.
 * docs/testing-your-patch.md "Which patch did it" is the user's side. */
#pragma once

#include <stdbool.h>

#include "cli/run_common.h"
#include "util/json.h"

struct bisect_input {
	json_object *spec; /* the job as `schedlab test` wrote it (borrowed): all the patches */
	const char *cwd;   /* where relative sources in spec resolve */
	/* a commit range's commits [{"commit", "subject"}], one per patch of
	 * spec, oldest first (borrowed), or NULL: steps then name them */
	json_object *commits;
	bool enabled;
};

/* A cli_result_fn: when result failed and the series has two patches or
 * more, bisects and adds result.bisection. Returns 0; a step that errors
 * ends the search with status "error" (the steps so far are kept). */
int cli_bisect(void *userdata, const struct cli_run_ctx *ctx, json_object *result);
