/* Metrics from one workload's output in one run.
 *
 * The input is the agent's workload frame (docs/contracts.md section 2) and is
 * untrusted: every parser here is strict, bounds what it reads, and turns
 * garbage, truncated output and absurd numbers into a clean ERR_INVALID.
 * Metric names and their better direction are API (docs/contracts.md section
 * 6); docs/statistics.md says how each is computed. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

/* Limits on what a guest can make us keep. */
#define METRICS_MAX_COUNT      512     /* metrics per workload */
#define METRICS_MAX_ITERATIONS 100000  /* rt-migrate-test loops kept in details */
#define METRICS_MAX_THREADS    256     /* cyclictest threads */
#define METRICS_MAX_HIST_US    1000000 /* cyclictest histogram buckets */

/* Computes the metrics of one workload run.
 *   tool:             "rt-migrate-test", "cyclictest", "share" or "slice"
 *   workload_payload: the agent's workload frame (borrowed): stdout, stderr,
 *                     json_file (string or null), exit_code, timed_out
 *   workload_spec:    the job's workload entry (borrowed; may be NULL): args,
 *                     maxerr_us
 * On success *ret_metrics is a new object {name: number} and *ret_details a
 * new object of tool-specific raw data (both owned by the caller). On failure
 * returns a negative errno, fills err (ERR_INVALID for bad output) and leaves
 * the outputs untouched. */
int metrics_from_workload(const char *tool, json_object *workload_payload,
			  json_object *workload_spec, json_object **ret_metrics,
			  json_object **ret_details, struct sl_error *err);

/* The better direction of a metric: "lower", "higher" or "none" (static
 * string). Unknown metrics are "lower" when their name says latency, delay,
 * wait or error, else "none". */
const char *metrics_better(const char *tool, const char *metric);

/* rt-migrate-test's own --maxerr default in microseconds (rt-tests 2.4). */
#define RTMIGRATE_DEFAULT_MAXERR_US 1000

/* Per-tool parsers, exposed for the unit tests; same contract as above. */
int metrics_rtmigrate(const char *stdout_text, size_t stdout_len, const char *json_text,
		      long maxerr_us, json_object **ret_metrics, json_object **ret_details,
		      struct sl_error *err);
int metrics_cyclictest(const char *stdout_text, size_t stdout_len, const char *json_text,
		       json_object **ret_metrics, json_object **ret_details, struct sl_error *err);
/* share/slice: the tool printed one JSON object with a "metrics" object. */
int metrics_own_tool(const char *stdout_text, size_t stdout_len, json_object **ret_metrics,
		     json_object **ret_details, struct sl_error *err);

/* ---- helpers shared by the metrics_*.c parsers ---- */

#define METRICS_MAX_JSON_BYTES (4 * 1024 * 1024)

/* A metric value for JSON: integral values as integers, others with 10
 * significant digits (no 4859.5200000000004 in results). */
json_object *metrics_number(double v);
/* 1 if name is a valid metric name: [a-z0-9_.]{1,128}. */
bool metrics_name_ok(const char *name);
/* Parses text (len bytes, untrusted) as exactly one JSON object; what names
 * the text in error messages ("cyclictest's JSON file"). */
int metrics_parse_json(const char *text, size_t len, const char *what, json_object **ret,
		       struct sl_error *err);
