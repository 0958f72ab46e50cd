/* A bisection of a failing series on the statistical verdict,
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

#include "run/prefix_step.h"
#include "util/error.h"
#include "util/json.h"

/* When result (the whole series' result) failed and the series has two
 * patches or more, bisects and adds result.bisection. Returns 0; a step
 * that errors ends the search with status "error" (the steps so far are
 * kept). */
int run_bisection(const struct series_input *in, json_object *result);
