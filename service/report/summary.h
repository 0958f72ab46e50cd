/* The human-readable end of a job: a table of runs and comparisons, and the
 * verdict as an exit code. Shared by `schedlab run` and `schedlab submit`. */
#pragma once

#include <stdio.h>
#include "util/macro.h"

/* Prints the run outcomes per variant, the comparison table (gated metrics
 * first) and the verdict with its reasons. result is borrowed. */
void summary_print(FILE *f, json_object *result);

/* EXIT_PASS, EXIT_FAIL or EXIT_INCONCLUSIVE from result.verdict; EXIT_ERROR
 * when it is missing or unknown. */
int summary_exit_code(json_object *result);
