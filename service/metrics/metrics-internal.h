/* What the metrics dispatcher (metrics.c) and its plug-ins share: the
 * plug-in interface, the per-tool parsers (exposed for the unit tests and
 * fuzz targets) and the helpers every parser uses. A plug-in is one file
 * (rtmigrate.c, cyclictest.c, own_tool.c) defining a struct metrics_plugin
 * that metrics.c lists in its table. Not for use outside service/metrics/
 * and its tests; the stages above use metrics.h. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"
#include "util/json_get.h"

#define METRICS_MAX_JSON_BYTES (4 * 1024 * 1024)
/* JSON values in a tool's JSON (json_value_count()): a real cyclictest JSON
 * file with two threads and a 20000-bucket histogram holds about 200, so
 * this is far above need and bounds what parsing one can cost (a few MB). */
#define METRICS_MAX_JSON_VALUES 65536
/* Bytes of a tool's "details" (share, slice, wakeup) kept in a run record,
 * as JSON: share's with 256 hogs is about 20 KiB. */
#define METRICS_MAX_DETAILS_BYTES (64 * 1024)
#define METRICS_MAX_NAME	  128 /* bytes in a metric name */

struct metric_threshold; /* metrics.h; not included, metrics.c includes this */

/* What one workload run left behind, as the agent reported it (all
 * borrowed, untrusted). */
struct metrics_output {
	const char *stdout_text; /* stdout_len bytes; NUL bytes are the parser's to reject */
	size_t stdout_len;
	const char *json_text;	 /* the tool's --json (or stress-ng's --yaml) file, or NULL */
	const char *stderr_text; /* "" when the agent sent none */
};

/* One name (or family of names) a plug-in emits, with what the stages
 * above read about it: its better direction and whether it is a maximum or
 * a tail percentile. Each plug-in lists every metric it emits, so the
 * direction comes from the code that knows the metric, not from its
 * spelling (a name the plug-in does not list has direction "none"). */
struct metrics_name {
	const char *pattern; /* an fnmatch(3) pattern, no flags: "latency_us.t*.max" */
	const char *better;  /* "lower", "higher" or "none" (a count that describes) */
	/* A maximum or tail percentile (.max, .p99, .p99.9): its default
	 * threshold is 50 % of the baseline median, not 25 %, as a tail moves
	 * between boots of one kernel far more than a centre does. */
	bool tail;
};

/* The first entry of names (n of them) whose pattern matches metric, or
 * NULL. */
const struct metrics_name *metrics_name_find(const struct metrics_name *names, size_t n,
					     const char *metric);

/* One tool's parser. */
struct metrics_plugin {
	const char *tool; /* the job's workload "tool" */
	/* Every metric its parser emits (metrics_better(),
	 * metrics_default_threshold()); n_names entries. */
	const struct metrics_name *names;
	size_t n_names;
	/* Same contract as metrics_from_workload(); workload_spec may be NULL. */
	int (*parse)(const struct metrics_output *out, json_object *workload_spec,
		     json_object **ret_metrics, json_object **ret_details, struct sl_error *err);
	/* Optional: a default threshold of one of its metrics other than the
	 * one its names entry gives (metrics_default_threshold() fills *t with
	 * that first), for metrics whose scale the relative rule does not fit. */
	void (*threshold)(const char *metric, struct metric_threshold *t);
	/* Optional: why a run that exited non-zero failed, from its output
	 * (one sentence into buf), or false when the output does not say. */
	bool (*failure_reason)(const struct metrics_output *out, char *buf, size_t len);
};

/* A plug-in's names table: .names and .n_names of struct metrics_plugin. */
#define METRICS_NAMES(tab) .names = (tab), .n_names = ELEMENTSOF(tab)

/* For a plug-in's threshold(): a default gate's latency metric, central
 * (an average, a median, a mean: 10 %) or its p99 (15 %), either may be
 * NULL; other metrics keep *t. Why those sizes: metrics.c. */
void metrics_latency_gate(const char *metric, const char *central, const char *p99,
			  struct metric_threshold *t);
/* A load's throughput gate (loops_per_s, burn's ops_per_s), relative. */
#define METRICS_LOAD_THROUGHPUT_REL 0.15
/* For a plug-in's threshold(): a default gate's throughput (or time for a
 * fixed amount of work) when metric is name: 10 % of the baseline median
 * measured idle, METRICS_LOAD_THROUGHPUT_REL for a load's; else *t is
 * kept. Why: metrics.c. */
void metrics_throughput_gate(const char *metric, const char *name, bool load,
			     struct metric_threshold *t);

extern const struct metrics_plugin metrics_plugin_rtmigrate;	    /* rtmigrate.c */
extern const struct metrics_plugin metrics_plugin_cyclictest;	    /* cyclictest.c */
extern const struct metrics_plugin metrics_plugin_share;	    /* own_tool.c */
extern const struct metrics_plugin metrics_plugin_slice;	    /* own_tool.c */
extern const struct metrics_plugin metrics_plugin_wakeup;	    /* own_tool.c */
extern const struct metrics_plugin metrics_plugin_burn;		    /* own_tool.c */
extern const struct metrics_plugin metrics_plugin_hackbench;	    /* hackbench.c */
extern const struct metrics_plugin metrics_plugin_pi_stress;	    /* pi_stress.c */
extern const struct metrics_plugin metrics_plugin_pip_stress;	    /* pi_stress.c */
extern const struct metrics_plugin metrics_plugin_cyclicdeadline;   /* cyclicdeadline.c */
extern const struct metrics_plugin metrics_plugin_stress_ng;	    /* stress_ng.c */
extern const struct metrics_plugin metrics_plugin_perf_bench_sched; /* perf_bench.c */

/* Per-tool parsers, exposed for the unit tests; same contract as above. */
int metrics_rtmigrate(const char *stdout_text, size_t stdout_len, const char *json_text,
		      long maxerr_us, json_object **ret_metrics, json_object **ret_details,
		      struct sl_error *err);
int metrics_cyclictest(const char *stdout_text, size_t stdout_len, const char *json_text,
		       json_object **ret_metrics, json_object **ret_details, struct sl_error *err);
/* share/slice: the tool printed one JSON object with a "metrics" object. */
int metrics_own_tool(const char *stdout_text, size_t stdout_len, json_object **ret_metrics,
		     json_object **ret_details, struct sl_error *err);

/* hackbench: the "Time: S" line of its stdout. */
int metrics_hackbench(const char *stdout_text, size_t stdout_len, json_object **ret_metrics,
		      json_object **ret_details, struct sl_error *err);
/* pi_stress: its --json file ("inversion"), or its stdout's "Total inversion
 * performed" line when there is no file. */
int metrics_pi_stress(const char *stdout_text, size_t stdout_len, const char *json_text,
		      json_object **ret_metrics, json_object **ret_details, struct sl_error *err);
/* pip_stress: whether its stdout says priority inheritance handled an inversion. */
int metrics_pip_stress(const char *stdout_text, size_t stdout_len, json_object **ret_metrics,
		       json_object **ret_details, struct sl_error *err);
/* cyclicdeadline: its --json file's per-thread latencies. */
int metrics_cyclicdeadline(const char *json_text, json_object **ret_metrics,
			   json_object **ret_details, struct sl_error *err);
/* stress-ng: the "metrics:" list of its --yaml file. */
int metrics_stress_ng(const char *yaml_text, json_object **ret_metrics, json_object **ret_details,
		      struct sl_error *err);

/* perf-bench-sched: `perf bench sched messaging|pipe`'s stdout. */
int metrics_perf_bench_sched(const char *stdout_text, size_t stdout_len, json_object **ret_metrics,
			     json_object **ret_details, struct sl_error *err);

/* A load's metrics (load.c): each of its completed iterations in load (the
 * frame's "load" object, borrowed) through p's parser, the means of their
 * metrics and the load.* counts. Same contract as metrics_from_workload(). */
int metrics_load(const struct metrics_plugin *p, json_object *load, json_object *workload_spec,
		 json_object **ret_metrics, json_object **ret_details, struct sl_error *err);

/* The entry of a metric that load.c adds to any tool's (load.*), or NULL. */
const struct metrics_name *metrics_load_name(const char *metric);

/* The entry of a metric that schedstat.c adds to any tool's (schedstat.*),
 * or NULL. */
const struct metrics_name *metrics_schedstat_name(const char *metric);

/* schedstat (schedstat.c): adds the schedstat.* differences between two
 * /proc/schedstat snapshots to metrics. 0, or ERR_INVALID with metrics
 * unchanged. */
int metrics_schedstat(const char *before, size_t before_len, const char *after, size_t after_len,
		      json_object *metrics, struct sl_error *err);
/* The workload's tasks' rusage the agent sent with the snapshots
 * (tasks_rusage: {utime_us, stime_us, nvcsw, nivcsw}, borrowed) as
 * schedstat.tasks.cpu_ms, .switches_voluntary and .switches_involuntary
 * in metrics. 0, or ERR_INVALID naming the field with metrics unchanged. */
int metrics_tasks_rusage(json_object *rusage, json_object *metrics, struct sl_error *err);

/* The agent's taskstats sums over the workload's exited tasks (tasks_delay:
 * {tasks, run_delay_ns, run_delay_max_ns, timeslices, run_ns, dropped,
 * lost}, borrowed) as schedstat.tasks.{count, run_delay_ms,
 * run_delay_max_ms, timeslices, wait_per_slice_us}; none when exits were
 * lost. 0, or -1 naming the field that is out of bounds. */
int metrics_tasks_delay(json_object *td, json_object *metrics, struct sl_error *err);

/* ---- helpers shared by the plug-ins (metrics_common.c) ---- */

/* A metric value for JSON: integral values as integers, others with 10
 * significant digits (no 4859.5200000000004 in results). */
json_object *metrics_number(double v);
/* 1 if name is a valid metric name: [a-z0-9_.]{1,128}. */
bool metrics_name_ok(const char *name);
/* Splits text (len bytes, untrusted) into lines for a line parser: calls
 * fn(line, line_len, ctx) for each line (without its '\n'; a '\r' before it
 * is dropped) until fn returns non-zero, which it returns; 0 at the end.
 * A NUL byte in the text is ERR_INVALID (what names the text). */
int metrics_each_line(const char *text, size_t len, const char *what,
		      int (*fn)(const char *line, size_t line_len, void *ctx), void *ctx,
		      struct sl_error *err);
/* Parses a whole line field as a finite number >= 0 (at most 32 bytes,
 * digits, '.', no sign or exponent). 0 or -EINVAL. */
int metrics_parse_nonneg(const char *s, size_t len, double *ret);

/* Parses text (len bytes, untrusted, at most METRICS_MAX_JSON_BYTES) with
 * json_parse_strict() as exactly one JSON object; what names
 * the text in error messages ("cyclictest's JSON file"). */
int metrics_parse_json(const char *text, size_t len, const char *what, json_object **ret,
		       struct sl_error *err);
