/* What the report's charts share; the charts themselves are one file per
 * tool (charts_<tool>.c), all drawn with svg.h. Data come from each ok run's
 * workload "metrics" and "details"; details are tool-specific and optional,
 * so every chart has a fallback built from the metrics alone. The
 * histograms serve cyclictest latency and slice lengths alike. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/report-internal.h"
#include "util/json_get.h"

#define LOG_BINS_DECADE 10

void charts_values_push(struct charts_values *x, double d)
{
	if (x->failed || !isfinite(d) || x->n >= SVG_MAX_POINTS)
		return;
	if (x->n == x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 64;
		double *v = reallocarray(x->v, cap, sizeof(double));
		if (!v) {
			x->failed = true;
			return;
		}
		x->v = v;
		x->cap = cap;
	}
	x->v[x->n++] = d;
}

void charts_values_done(struct charts_values *x)
{
	free(x->v);
	x->v = NULL;
	x->n = x->cap = 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double charts_values_median(struct charts_values *x)
{
	if (x->n == 0 || x->failed) /* not all values: no median */
		return NAN;
	qsort(x->v, x->n, sizeof(double), cmp_double);
	return x->n % 2 ? x->v[x->n / 2] : (x->v[x->n / 2 - 1] + x->v[x->n / 2]) / 2;
}

/* The workload objects named `workload` of variant i's ok runs, in run
 * order: up to max of them into out; returns how many. */
size_t charts_ok_workloads(const struct report_ctx *c, size_t vi, const char *workload,
			   const struct model_workload **out, size_t max)
{
	const struct model_variant *v = c->vars[vi];
	size_t n = 0;

	for (size_t j = 0; j < v->n_runs && j < REPORT_MAX_RUNS; j++) {
		const struct model_run *run = &v->runs[j];
		if (strcmp(run->status, "ok") != 0)
			continue;
		for (size_t k = 0; k < run->n_workloads; k++) {
			const struct model_workload *w = &run->workloads[k];
			if (strcmp(w->name, workload) == 0 && strcmp(w->status, "ok") == 0 &&
			    n < max) {
				out[n++] = w;
				break;
			}
		}
	}
	return n;
}

/* metric's values over variant i's ok runs: from "metrics", else a number
 * of that name in "details" (the slice tool keeps its min and p50 there). */
void charts_metric_values(const struct report_ctx *c, size_t vi, const char *workload,
			  const char *metric, struct charts_values *out)
{
	const struct model_workload *w[REPORT_MAX_RUNS];
	size_t n = charts_ok_workloads(c, vi, workload, w, REPORT_MAX_RUNS);
	double d;

	for (size_t i = 0; i < n; i++)
		if (json_member_number(w[i]->metrics, metric, &d) ||
		    json_member_number(w[i]->details, metric, &d))
			charts_values_push(out, d);
}

bool charts_any_metric(const struct report_ctx *c, const char *workload, const char *metric)
{
	for (size_t i = 0; i < c->n_names; i++) {
		struct charts_values v = {0};
		charts_metric_values(c, i, workload, metric, &v);
		bool any = v.n > 0;
		charts_values_done(&v);
		if (any)
			return true;
	}
	return false;
}

void charts_figure_begin(struct html_buf *o, struct report_ctx *c)
{
	html_buf_printf(o, "<figure id=\"chart-%d\">\n", ++c->chart_id);
}

/* Renders p, then the caption (already HTML), and closes the figure. */
void charts_figure_end(struct html_buf *o, struct svg_plot *p, const char *caption_html)
{
	svg_plot_render_to(p, o);
	html_buf_printf(o, "<figcaption>%s</figcaption>\n</figure>\n", caption_html);
}

void charts_section_begin(struct html_buf *o, const char *workload, const char *tool,
			  const char *what)
{
	html_buf_puts(o, "<section class=\"workload\" data-tool=\"");
	html_buf_escape(o, tool);
	html_buf_puts(o, "\">\n<h2>");
	html_buf_escape(o, workload);
	if (strcmp(workload, tool) != 0) {
		html_buf_puts(o, " (");
		html_buf_escape(o, tool);
		html_buf_puts(o, ")");
	}
	html_buf_printf(o, ": %s</h2>\n", what);
}

int charts_add_variant_series(struct svg_plot *p, const struct report_ctx *c, size_t vi)
{
	return svg_plot_add_series(p, c->names[vi], report_variant_color(c, vi), vi > 0);
}

static void hist_add(struct charts_hist *h, double value, double count)
{
	if (h->failed || !isfinite(value) || value < 0 || !isfinite(count) || count <= 0)
		return;
	double idx = floor(value / h->bucket);
	if (idx >= REPORT_MAX_HIST_BUCKETS)
		return;
	size_t i = (size_t)idx;
	if (i >= h->n) {
		double *c = reallocarray(h->counts, i + 1, sizeof(double));
		if (!c) {
			h->failed = true;
			return;
		}
		memset(c + h->n, 0, (i + 1 - h->n) * sizeof(double));
		h->counts = c;
		h->n = i + 1;
	}
	h->counts[i] += count;
}

/* Accepts the shapes a tool's details may use for one histogram:
 * {"bucket_us": b, "counts": [...]}, [[value, count], ...] or [count, ...]
 * (index = value in µs). Returns whether anything was added. */
static bool hist_parse(struct charts_hist *h, json_object *j)
{
	json_object *counts = j;
	double bucket = 1;
	bool any = false;

	if (j && json_object_is_type(j, json_type_object)) {
		counts = json_member(j, "counts");
		if (!json_member_number(j, "bucket_us", &bucket) || bucket <= 0)
			bucket = 1;
	}
	if (!counts || !json_object_is_type(counts, json_type_array))
		return false;
	if (h->bucket <= 0)
		h->bucket = bucket;
	for (size_t i = 0; i < json_object_array_length(counts) && i < REPORT_MAX_HIST_BUCKETS;
	     i++) {
		json_object *e = json_object_array_get_idx(counts, i);
		if (report_is_number(e)) {
			hist_add(h, (double)i * bucket, json_object_get_double(e));
			any = true;
		} else if (e && json_object_is_type(e, json_type_array) &&
			   json_object_array_length(e) == 2 &&
			   report_is_number(json_object_array_get_idx(e, 0)) &&
			   report_is_number(json_object_array_get_idx(e, 1))) {
			hist_add(h, json_object_get_double(json_object_array_get_idx(e, 0)),
				 json_object_get_double(json_object_array_get_idx(e, 1)));
			any = true;
		}
	}
	return any;
}

/* Adds every histogram in details: "histogram", or per thread "histograms". */
bool charts_hist_from_details(struct charts_hist *h, json_object *details)
{
	json_object *per = json_member(details, "histograms");
	bool any = hist_parse(h, json_member(details, "histogram"));

	for (size_t i = 0; per && json_object_is_type(per, json_type_array) &&
			   i < json_object_array_length(per) && i < 256;
	     i++)
		any = hist_parse(h, json_object_array_get_idx(per, i)) || any;
	return any;
}

/* Draws the variants' histograms on log-spaced bins (latencies span
 * decades under TCG), with per-variant marks. Returns 1 if drawn. */
int charts_histograms(struct html_buf *o, struct report_ctx *c, struct charts_hist *h,
		      const char *title, const char *xlabel, struct charts_values *marks,
		      const char *const *mark_names, size_t n_marks, const char *caption)
{
	_cleanup_svg_plot_ struct svg_plot *p = NULL;
	double vmin = INFINITY, vmax = 0;

	/* a histogram or mark short of values is not drawn, nor the report */
	for (size_t i = 0; i < c->n_names; i++)
		for (size_t m = 0; m < (marks ? n_marks : 0); m++)
			if (marks[i * n_marks + m].failed)
				h[i].failed = true;
	for (size_t i = 0; i < c->n_names; i++)
		if (h[i].failed) {
			html_buf_fail(o);
			return 0;
		}
	for (size_t i = 0; i < c->n_names; i++)
		for (size_t k = 0; k < h[i].n; k++)
			if (h[i].counts[k] > 0) {
				double v = k == 0 ? h[i].bucket * 0.5 : (double)k * h[i].bucket;
				vmin = fmin(vmin, v);
				vmax = fmax(vmax, v);
			}
	if (!(vmax > 0))
		return 0;
	double e_lo = floor(log10(vmin) * LOG_BINS_DECADE) / LOG_BINS_DECADE;
	size_t nb = (size_t)floor((log10(vmax) - e_lo) * LOG_BINS_DECADE + 1e-9) + 1;
	if (nb > 400)
		nb = 400;
	_cleanup_free_ double *edges = calloc(nb + 1, sizeof(double));
	_cleanup_free_ double *bins = calloc(nb, sizeof(double));
	if (!edges || !bins) {
		html_buf_fail(o);
		return 0;
	}
	for (size_t k = 0; k <= nb; k++)
		edges[k] = pow(10, e_lo + (double)k / LOG_BINS_DECADE);

	p = svg_plot_new(CHART_WIDTH, CHART_HEIGHT);
	svg_plot_title(p, title);
	svg_plot_x_axis(p, SVG_LOG10, xlabel);
	svg_plot_y_axis(p, SVG_LOG10, "samples per bin");
	for (size_t i = 0; i < c->n_names; i++) {
		int s = charts_add_variant_series(p, c, i);
		if (s < 0)
			break;
		memset(bins, 0, nb * sizeof(double));
		for (size_t k = 0; k < h[i].n; k++) {
			double v = k == 0 ? h[i].bucket * 0.5 : (double)k * h[i].bucket;
			if (h[i].counts[k] <= 0)
				continue;
			double b = floor((log10(v) - e_lo) * LOG_BINS_DECADE + 1e-9);
			size_t bi = b < 0 ? 0 : b >= (double)nb ? nb - 1 : (size_t)b;
			bins[bi] += h[i].counts[k];
		}
		if (h[i].n > 0)
			svg_plot_histogram(p, s, edges, bins, nb, SVG_HIST_STEP);
		for (size_t m = 0; m < n_marks; m++) {
			double v = marks[i * n_marks + m].n ? marks[i * n_marks + m].v[0] : NAN;
			char label[160], num[HTML_NUM_MAX];
			if (!isfinite(v))
				continue;
			snprintf(label, sizeof(label), "%.60s %s %s", c->names[i], mark_names[m],
				 html_fmt_value(v, num));
			svg_plot_vline(p, s, v, label);
		}
	}
	charts_figure_begin(o, c);
	charts_figure_end(o, p, caption);
	return 1;
}

/* Boxes of per-run metric values: one category per metric, one box per
 * variant. Returns 1 if drawn. */
int charts_metric_boxes(struct html_buf *o, struct report_ctx *c, const char *workload,
			const char *title, const char *ylabel, enum svg_scale scale,
			const char *const *metrics, const char *const *labels, size_t n,
			struct charts_values *hlines, const char *hline_name, const char *caption)
{
	_cleanup_svg_plot_ struct svg_plot *p = svg_plot_new(CHART_WIDTH, CHART_HEIGHT);
	const char *cats[SVG_MAX_CATEGORIES];
	const char *used[SVG_MAX_CATEGORIES];
	size_t n_cats = 0;

	for (size_t m = 0; m < n && n_cats < SVG_MAX_CATEGORIES; m++)
		if (charts_any_metric(c, workload, metrics[m])) {
			cats[n_cats] = labels[m];
			used[n_cats++] = metrics[m];
		}
	if (n_cats == 0)
		return 0;
	svg_plot_title(p, title);
	svg_plot_y_axis(p, scale, ylabel);
	svg_plot_x_categories(p, cats, n_cats);
	for (size_t i = 0; i < c->n_names; i++) {
		int s = charts_add_variant_series(p, c, i);
		if (s < 0)
			break;
		for (size_t m = 0; m < n_cats; m++) {
			struct charts_values v = {0};
			charts_metric_values(c, i, workload, used[m], &v);
			if (v.n)
				svg_plot_box(p, s, m, v.v, v.n);
			charts_values_done(&v);
		}
		if (hlines && hlines[i].n) {
			char label[160], num[HTML_NUM_MAX];
			snprintf(label, sizeof(label), "%.60s %s %s", c->names[i], hline_name,
				 html_fmt_value(hlines[i].v[0], num));
			svg_plot_hline(p, s, hlines[i].v[0], label);
		}
	}
	charts_figure_begin(o, c);
	charts_figure_end(o, p, caption);
	return 1;
}
