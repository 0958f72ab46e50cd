/* Suites and default gates: the workloads a job gets when it names a suite
 * ("suite": "rt" | "latency" | "fair" | "all" | "debug") instead of listing them, the
 * variant settings a suite needs, and the metrics each workload tool gates
 * on when a job names no gates. One table each, in suite.c; docs/workloads.md
 * documents them (keep the two in step). */
#pragma once

#include <stdbool.h>

#include "util/error.h"

/* The repeat a job with a suite and no "repeat" gets: 5, the fewest runs a
 * side at which a gated metric can be decided with one overlapping pair
 * (docs/statistics.md); at 3 a gate can never come out regressed. */
#define SUITE_DEFAULT_REPEAT 5

/* Whether name is a suite. */
bool suite_known(const char *name);

/* The "debug" suite: the workloads of "all" on debug kernels. The debug
 * preset it gives every variant that sets none, or NULL for the other
 * suites (and NULL name). docs/kernel-bugs.md "The debug variant". */
const char *suite_debug_preset(const char *name);

/* Whether the suite gates metrics by default: every suite but "debug",
 * whose verdict is the kernel bug signatures' (a lockdep kernel's timings
 * measure lockdep). */
bool suite_gates_metrics(const char *name);

/* Whether name is a debug preset this build knows ("lockdep"). */
bool suite_debug_known(const char *name);

/* A new array of the suite's workloads (job.schema.json workload objects,
 * with name, tool, args and timeout_s), or NULL when name is not a suite. */
json_object *suite_workloads(const char *name);

/* A new object of per-uid CPU shares ({"1000": 2048, ...}) that the suite
 * applies to every variant that sets no uid_shares, or NULL when the suite
 * needs none (or name is not a suite). */
json_object *suite_uid_shares(const char *name);

/* Appends to gates (an array, borrowed) the default gates of one expanded
 * workload w (its name, tool and args): {"workload", "metric", "default":
 * true} each, thresholds left to the metric's default (compare/compare.c).
 * under_load: w runs beside the job's loads (it is listed after the first
 * of them); gates that do not hold under load are left out.
 * Returns how many it appended. */
int suite_add_default_gates_at(json_object *w, json_object *gates, bool under_load);
/* The same for a workload that does not run under load. */
int suite_add_default_gates(json_object *w, json_object *gates);
