/* What the report_*.c and charts*.c family shares; not an API (that is
 * report.h, which report_html.c and report_page.c implement).
 *
 *   report_ctx.c     reading the result: typed members, the variant order
 *   report_page.c    page scaffolding, badges and shared cell writers
 *   report_html.c    report_html(): header, kernels, environment, variants,
 *                    and the charts of each workload, by tool
 *   report_compare.c the comparison table
 *   report_runs.c    the runs and the failed runs
 *   report_signatures.c the kernel bug signatures
 *   report_interference.c  host interference per run, the calibration used
 *   charts.c         what every chart shares (values, figures, histograms)
 *   charts_<tool>.c  the charts of one tool
 *
 * Calls point one way, top down: report_html.c calls the sections and the
 * charts_<tool>() functions; those call charts.c, report_ctx.c and
 * report_page.c, which call nothing above them. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "compare/result_model.h"
#include "report/html.h"
#include "report/report.h"
#include "report/svg.h"
#include "util/json_get.h"

#define CHART_WIDTH  1080
#define CHART_HEIGHT 360

/* The parsed result's variants in display order: the baseline first, then
 * the others as the job lists them (or as stored), at most
 * REPORT_MAX_VARIANTS; names[i] is vars[i]->name. */
struct report_ctx {
	const struct model_result *m; /* borrowed */
	const char *baseline;
	const char *names[REPORT_MAX_VARIANTS];
	const struct model_variant *vars[REPORT_MAX_VARIANTS];
	size_t n_names;
	int chart_id;
};

/* ---- report_ctx.c: every json_object here is borrowed ---- */

/* Fills c from m (borrowed; c borrows from it). */
void report_ctx_init(struct report_ctx *c, const struct model_result *m);
/* The variant of m named name, or NULL. */
const struct model_variant *report_model_variant(const struct model_result *m, const char *name);
/* Whether field name of comparison c was present and not null. */
bool report_cmp_has(const struct model_comparison *c, const char *name);
/* Whether typed number field name (value v) of run r was present, not null
 * and finite, into *ret. */
bool report_run_num(const struct model_run *r, const char *name, double v, double *ret);
/* Whether v is a finite int or double. */
bool report_is_number(json_object *v);
/* The palette colour of variant i in every chart and table. */
int report_variant_color(const struct report_ctx *c, size_t i);

/* ---- report_page.c ---- */

/* A number member of sample for people, or a dash when absent. */
void report_put_value(struct html_buf *o, json_object *sample, const char *key);
/* s escaped, or a dash when NULL or empty. */
void report_put_str_or_dash(struct html_buf *o, const char *s);
/* text escaped in a <pre>, its last REPORT_MAX_CONSOLE bytes when longer
 * (report_runs.c). */
void report_put_pre(struct html_buf *o, const char *text);

/* ---- report_compare.c, report_runs.c: the sections they name ---- */

void report_section_comparisons(struct html_buf *o, struct report_ctx *c);
/* The schedstat rows per variant and workload, beside the workload's own
 * verdicts, when the result has any (report_compare.c). */
void report_section_schedstat(struct html_buf *o, struct report_ctx *c);
void report_section_runs(struct html_buf *o, struct report_ctx *c);
void report_section_failed(struct html_buf *o, struct report_ctx *c);
/* report_signatures.c: the kernel bug signatures, when the result has any. */
void report_section_signatures(struct html_buf *o, struct report_ctx *c);
/* report_interference.c: each run's vCPU wait as a strip per variant, the
 * noisy runs marked, and the A/A calibration used */
void report_section_interference(struct html_buf *o, struct report_ctx *c);
/* report_bisection.c: result.bisection, when present. */
/* A walk's step (bisection or attribution, borrowed): its commit (short)
 * and subject, or its last patch, escaped. */
void report_step_name(struct html_buf *o, json_object *step);
void report_section_bisection(struct html_buf *o, struct report_ctx *c);

/* report_attribution.c: result.attribution, when present. */
void report_section_attribution(struct html_buf *o, struct report_ctx *c);

/* ---- charts.c ---- */

/* A capped, growable list of values; zero-initialised is empty. */
struct charts_values {
	double *v;
	size_t n, cap;
	bool failed; /* out of memory: later values are dropped */
};

/* Appends d when finite and below SVG_MAX_POINTS values. */
void charts_values_push(struct charts_values *x, double d);
/* Frees the values and empties x. */
void charts_values_done(struct charts_values *x);
/* The median (sorts x), or NAN when empty. */
double charts_values_median(struct charts_values *x);

/* The workloads named `workload` of variant i's ok runs (borrowed from
 * the model), in run order: up to max of them into out; returns how many. */
size_t charts_ok_workloads(const struct report_ctx *c, size_t vi, const char *workload,
			   const struct model_workload **out, size_t max);
/* metric's values over variant i's ok runs: from "metrics", else a number
 * of that name in "details" (the slice tool keeps its min and p50 there). */
void charts_metric_values(const struct report_ctx *c, size_t vi, const char *workload,
			  const char *metric, struct charts_values *out);
/* Whether any variant has a value of metric. */
bool charts_any_metric(const struct report_ctx *c, const char *workload, const char *metric);

/* Opens <figure id="chart-N">. */
void charts_figure_begin(struct html_buf *o, struct report_ctx *c);
/* Renders p, then the caption (already HTML), and closes the figure. */
void charts_figure_end(struct html_buf *o, struct svg_plot *p, const char *caption_html);
/* Opens a workload's <section> with its heading; what is HTML. */
void charts_section_begin(struct html_buf *o, const char *workload, const char *tool,
			  const char *what);
/* Adds variant vi as a series of p in its colour; the baseline solid. */
int charts_add_variant_series(struct svg_plot *p, const struct report_ctx *c, size_t vi);

/* A dense histogram: counts[i] samples of value i * bucket. */
struct charts_hist {
	double *counts;
	size_t n;
	double bucket;
	bool failed; /* out of memory: charts_histograms fails its output */
};

/* Adds every histogram in details: "histogram", or per thread "histograms". */
bool charts_hist_from_details(struct charts_hist *h, json_object *details);
/* Draws the variants' histograms (h[i] for variant i) on log-spaced bins
 * (latencies span decades under TCG), with per-variant marks. Returns 1 if
 * drawn. */
int charts_histograms(struct html_buf *o, struct report_ctx *c, struct charts_hist *h,
		      const char *title, const char *xlabel, struct charts_values *marks,
		      const char *const *mark_names, size_t n_marks, const char *caption);
/* Boxes of per-run metric values: one category per metric, one box per
 * variant. Returns 1 if drawn. */
int charts_metric_boxes(struct html_buf *o, struct report_ctx *c, const char *workload,
			const char *title, const char *ylabel, enum svg_scale scale,
			const char *const *metrics, const char *const *labels, size_t n,
			struct charts_values *hlines, const char *hline_name, const char *caption);

/* ---- charts_<tool>.c: the charts of one tool; return the charts drawn ---- */

/* idle_twin: a cyclictest workload of the same job run idle, drawn beside
 * workload (run under load), or NULL. */
int charts_cyclictest(struct html_buf *o, struct report_ctx *c, const char *workload,
		      const char *idle_twin);
/* A load's throughput and CPU use per run, per variant (charts_load.c). */
int charts_load(struct html_buf *o, struct report_ctx *c, const char *workload, const char *tool);
int charts_rtmigrate(struct html_buf *o, struct report_ctx *c, const char *workload);
int charts_share(struct html_buf *o, struct report_ctx *c, const char *workload);
int charts_slice(struct html_buf *o, struct report_ctx *c, const char *workload);
