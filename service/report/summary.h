/* The human-readable end of a job: a table of runs and comparisons, and the
 * verdict as an exit code. Shared by `schedlab run` and `schedlab submit`. */
#pragma once

#include <stdbool.h>
#include <stdio.h>
#include "compare/result_model.h"
#include "util/error.h"
#include "util/macro.h"

/* Prints the run outcomes per variant, the comparison table (gated metrics
 * first) and the verdict with its reasons. result is borrowed and parsed
 * once (model_result_parse()); a result that does not parse prints nothing
 * and is that ERR_INVALID naming the field. */
int summary_print(FILE *f, json_object *result, struct sl_error *err);
/* The same from a parsed result (borrowed). */
void summary_print_model(FILE *f, const struct model_result *m);

/* The note beside comparison c's verdict (borrowed; docs/statistics.md
 * section 3): " (REASON)" from its undecided_reason, e.g. " (interval
 * crosses ±28.75)"; for a result from before December 2026 (no ci_method)
 * whose "unchanged" row had a change larger than its threshold, " (CI
 * reaches within ±T)", T being thr_text, or " (p P above alpha A)". ""
 * otherwise. Shared by the summary and the HTML report. */
void summary_unchanged_note(const struct model_comparison *c, const char *thr_text, char *buf,
			    size_t sz);

/* Whether metric is a schedstat counter (docs/workloads.md "schedstat"):
 * the summary and the report show those apart from the workloads' own
 * metrics, under "what moved". */
bool summary_schedstat_metric(const char *metric);
/* Whether schedstat comparison c (borrowed) is shown unfolded: one of the
 * totals (schedstat.run_delay_ms, .ttwu_remote, .lb_migrations: no CPU or
 * domain in the name) or one whose interval cleared its threshold
 * (verdict "changed"). */
bool summary_schedstat_shown(const struct model_comparison *c);
/* Whether comparisons a and b (borrowed) are of the same variant and
 * workload. */
bool summary_same_group(const struct model_comparison *a, const struct model_comparison *b);
/* Whether comparison i of m (borrowed) is the first schedstat row of its
 * variant and workload: where "what moved" starts that group's block. */
bool summary_schedstat_group_start(const struct model_result *m, size_t i);
/* Whether comparison c (borrowed) is one of its workload's own rows worth
 * naming beside the schedstat block: not schedstat, and decided or gated. */
bool summary_schedstat_own_row(const struct model_comparison *c);

/* result.bisection (schedlab test --bisect, borrowed; NULL: nothing):
 * each step and the answer. */
void summary_print_bisection(FILE *f, json_object *bisection);

/* result.attribution (schedlab test --per-patch, borrowed; NULL: nothing):
 * per patch, its own change in each gated metric, and which patch carried
 * each decided change. */
void summary_print_attribution(FILE *f, json_object *attribution);

/* EXIT_PASS, EXIT_FAIL or EXIT_INCONCLUSIVE from result.verdict (result
 * borrowed, parsed with model_result_parse()); EXIT_ERROR when the verdict
 * is unknown or the result does not parse. */
int summary_exit_code(json_object *result);
/* The same from a parsed result (borrowed). */
int summary_exit_code_model(const struct model_result *m);
