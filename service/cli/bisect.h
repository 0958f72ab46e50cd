/* `schedlab test --bisect` (on by default for a series of two or more
 * patches, and for a commit range): the CLI's thin caller of
 * run/bisection.h, which holds the search, the steps and the answer
 * (result.bisection); the CLI runs each step like `schedlab run` and prints
 * progress. docs/testing-your-patch.md "Which patch did it" is the user's
 * side, with "What each patch did" for --per-patch (run/attribution.h). */
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
	bool per_patch; /* --per-patch: run/attribution.h instead of the bisection */
};

/* A cli_result_fn: with per_patch, attributes each patch's own change
 * (result.attribution, whatever the verdict); otherwise, when result
 * failed and the series has two patches or more, bisects and adds
 * result.bisection. Returns 0; a step that errors
 * ends the search with status "error" (the steps so far are kept). */
int cli_bisect(void *userdata, const struct cli_run_ctx *ctx, json_object *result);
