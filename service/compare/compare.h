/* Comparisons of every non-baseline variant with the baseline, per workload
 * and metric, and the job's overall verdict. The rules are in
 * docs/statistics.md. */
#pragma once

#include "job/job.h"
#include "util/error.h"

/* Default thresholds when no gate names a metric. */
#define COMPARE_DEFAULT_RELATIVE 0.10 /* latencies and the like: 10% of the baseline median */
/* The most the A/A calibration may widen a default latency gate's threshold,
 * as a fraction of the baseline median: beyond it a gate could not see a
 * regression developers call one (docs/statistics.md section 3). */
#define COMPARE_LATENCY_CAP 0.20

/* job: the job as run (borrowed): baseline, gates, workloads, alpha, noise
 *   policy and limit.
 * variants: the result's variants object (borrowed): each variant's runs with
 *   status and workloads[].metrics. Only runs with status "ok" and workloads
 *   with status "ok" contribute values.
 * On success: *ret_comparisons a new array of comparison objects
 * (result.schema.json #/$defs/comparison), ret_verdict "pass", "fail" or
 * "inconclusive", *ret_reasons a new array of whole-sentence strings.
 * Errors: variants that are not an object or lack the job's baseline
 * (ERR_INVALID). */
int compare_result(const struct job *job, json_object *variants, json_object **ret_comparisons,
		   char ret_verdict[16], json_object **ret_reasons, struct sl_error *err);

/* compare_result() with the host's A/A calibration (a result's
 * "calibration" array, borrowed, or NULL; compare/calibration.h): a metric
 * with no gate threshold uses max(its default, the calibrated threshold),
 * and the comparison says where its threshold came from
 * ("threshold_source": "gate", "default" or "calibration"). */
int compare_result_calibrated(const struct job *job, json_object *variants,
			      json_object *calibration, json_object **ret_comparisons,
			      char ret_verdict[16], json_object **ret_reasons,
			      struct sl_error *err);
