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
 *   tool:             a job workload's tool ("rt-migrate-test", "cyclictest",
 *                     "hackbench", "pi_stress", "pip_stress", "cyclicdeadline",
 *                     "stress-ng", "share", "slice", "wakeup",
 *                     "perf-bench-sched")
 *   workload_payload: the agent's workload frame (borrowed): stdout, stderr,
 *                     json_file (string or null), exit_code, timed_out, and
 *                     on a "schedstat" kernel schedstat_before/_after, whose
 *                     schedstat.* differences join the tool's metrics
 *   workload_spec:    the job's workload entry (borrowed; may be NULL): args,
 *                     maxerr_us
 * On success *ret_metrics is a new object {name: number} and *ret_details a
 * new object of tool-specific raw data (both owned by the caller). On failure
 * returns a negative errno, fills err (ERR_INVALID for bad output) and leaves
 * the outputs untouched. */
int metrics_from_workload(const char *tool, json_object *workload_payload,
			  json_object *workload_spec, json_object **ret_metrics,
			  json_object **ret_details, struct sl_error *err);

/* Why a workload run that exited non-zero failed, when its tool's output says
 * (pi_stress's deadlock watchdog): one sentence into buf (len bytes). false
 * when the tool or its output gives no reason. */
bool metrics_failure_reason(const char *tool, json_object *workload_payload, char *buf, size_t len);

/* The better direction of a metric: "lower", "higher" or "none" (static
 * string), as the tool's plug-in names it among the metrics it emits
 * (metrics-internal.h; load.* and schedstat.*, which any tool can carry,
 * are "none"). A tool without a plug-in (NULL too) or a metric its plug-in
 * does not emit is "none". */
const char *metrics_better(const char *tool, const char *metric);

/* Whether the tool's plug-in lists metric among those it emits (its own
 * names, load.* or schedstat.*), so its direction is the plug-in's word and
 * not the "none" a metric nobody listed falls back to. */
bool metrics_known(const char *tool, const char *metric);

/* A metric's default practical threshold, used when no gate gives one:
 * max(floor_abs, rel x |baseline median|). practical_gate marks the default
 * gates' latency and throughput metrics, whose threshold the host's A/A
 * calibration may widen only up to COMPARE_LATENCY_CAP (compare/compare.h). */
struct metric_threshold {
	double floor_abs;
	double rel;
	bool practical_gate;
};

/* The default threshold of a metric of a tool, as the tool's plug-in names
 * it: 50 % for what it marks a maximum or tail percentile, 25 % else, or
 * its own (rt-migrate-test's counts and start delays, share's CPU
 * fractions, the default gates' latency metrics). A tool without a plug-in
 * (NULL too) or a metric its plug-in does not emit gets 25 %. */
void metrics_default_threshold(const char *tool, const char *metric, struct metric_threshold *ret);

/* A load's CPU time over the measured window per CPU it should occupy,
 * from its frame's "load" object (docs/workloads.md "Loads"); *ret_ok is
 * false when the frame has none, it is out of bounds or the window was
 * too short to judge. */
double metrics_load_cpu_fraction(json_object *workload_payload, bool *ret_ok);

/* Whether the load whose frame is workload_payload did not load: its CPU
 * fraction is under the spec's min_cpu (0.5 when absent) or cannot be
 * read. Then one sentence into buf says why. false for a workload frame
 * without a "load" object. */
bool metrics_load_shortfall(json_object *workload_payload, json_object *workload_spec, char *buf,
			    size_t len);

/* rt-migrate-test's own --maxerr default in microseconds (rt-tests 2.4). */
#define RTMIGRATE_DEFAULT_MAXERR_US 1000
