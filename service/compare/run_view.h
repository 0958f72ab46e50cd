/* A variant's run records (result.schema.json #/$defs/run) read once
 * through the result model (result_model.h), the way the comparison and
 * the calibration both need them. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "compare/result_model.h"
#include "util/error.h"

/* Bound on the runs of one variant a view reads. */
#define RUN_VIEW_MAX_RUNS 100000

struct run_view {
	struct model_run *runs;
	size_t n;
};

/* Reads runs (a borrowed array of run records; NULL or not an array reads
 * as no runs) with model_run_read(): a run may be partial, but a member of
 * the wrong type or over its bounds is ERR_INVALID, prefixed with what
 * ("Variant 'patched'") and the run's index. Strings and untyped members
 * stay borrowed from runs, which must outlive the view. */
int run_view_read(json_object *runs, const char *what, struct run_view *ret, struct sl_error *err);
void run_view_free(struct run_view *v);

/* Whether run's status is "ok". */
bool run_view_ok(const struct model_run *run);

/* The workload of run named name when it counts for the comparisons (no
 * status, or "ok"), else NULL. */
const struct model_workload *run_view_ok_workload(const struct model_run *run, const char *name);
