/* The report's charts, one function per tool, all drawn with svg.c. Data
 * come from each ok run's workload "metrics" and "details"; details are
 * tool-specific and optional, so every chart has a fallback built from the
 * metrics alone. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "report/svg.h"

#define CHART_WIDTH	1080
#define CHART_HEIGHT	360
#define MAX_UIDS	16
#define LOG_BINS_DECADE 10

/* A capped, growable list of values. */
struct values {
	double *v;
	size_t n, cap;
};

static void values_push(struct values *x, double d)
{
	if (!isfinite(d) || x->n >= SVG_MAX_POINTS)
		return;
	if (x->n == x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 64;
		double *v = realloc(x->v, cap * sizeof(double));
		if (!v)
			abort();
		x->v = v;
		x->cap = cap;
	}
	x->v[x->n++] = d;
}

static void values_done(struct values *x)
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

static double values_median(struct values *x)
{
	if (x->n == 0)
		return NAN;
	qsort(x->v, x->n, sizeof(double), cmp_double);
	return x->n % 2 ? x->v[x->n / 2] : (x->v[x->n / 2 - 1] + x->v[x->n / 2]) / 2;
}

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;

	if (!o || !json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

/* An object member, or NULL when absent or not an object (the foreach
 * macro must never see anything else). */
static json_object *get_object(json_object *o, const char *key)
{
	json_object *v = get(o, key);

	return v && json_object_is_type(v, json_type_object) ? v : NULL;
}

static bool is_number(json_object *v)
{
	return v &&
	       (json_object_is_type(v, json_type_int) ||
		json_object_is_type(v, json_type_double)) &&
	       isfinite(json_object_get_double(v));
}

/* The workload objects named `workload` of variant i's ok runs, in run
 * order: up to max of them into out; returns how many. */
static size_t ok_workloads(const struct report_ctx *c, size_t vi, const char *workload,
			   json_object **out, size_t max)
{
	json_object *runs = get(get(c->variants, c->names[vi]), "runs");
	size_t n = 0;

	if (!runs || !json_object_is_type(runs, json_type_array))
		return 0;
	for (size_t j = 0; j < json_object_array_length(runs) && j < REPORT_MAX_RUNS; j++) {
		json_object *run = json_object_array_get_idx(runs, j);
		json_object *wls = get(run, "workloads");
		const char *st = report_str(run, "status");
		if (!st || strcmp(st, "ok") != 0 || !wls ||
		    !json_object_is_type(wls, json_type_array))
			continue;
		for (size_t k = 0; k < json_object_array_length(wls); k++) {
			json_object *w = json_object_array_get_idx(wls, k);
			const char *name = report_str(w, "name"), *ws = report_str(w, "status");
			if (name && strcmp(name, workload) == 0 && ws && strcmp(ws, "ok") == 0 &&
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
static void metric_values(const struct report_ctx *c, size_t vi, const char *workload,
			  const char *metric, struct values *out)
{
	json_object *w[REPORT_MAX_RUNS];
	size_t n = ok_workloads(c, vi, workload, w, REPORT_MAX_RUNS);
	double d;

	for (size_t i = 0; i < n; i++)
		if (report_num(get(w[i], "metrics"), metric, &d) ||
		    report_num(get(w[i], "details"), metric, &d))
			values_push(out, d);
}

static bool any_metric(const struct report_ctx *c, const char *workload, const char *metric)
{
	for (size_t i = 0; i < c->n_names; i++) {
		struct values v = {0};
		metric_values(c, i, workload, metric, &v);
		bool any = v.n > 0;
		values_done(&v);
		if (any)
			return true;
	}
	return false;
}

static void figure_begin(struct html_buf *o, struct report_ctx *c)
{
	html_buf_printf(o, "<figure id=\"chart-%d\">\n", ++c->chart_id);
}

/* Renders p, then the caption (already HTML), and closes the figure. */
static void figure_end(struct html_buf *o, struct svg_plot *p, const char *caption_html)
{
	svg_plot_render_to(p, o);
	html_buf_printf(o, "<figcaption>%s</figcaption>\n</figure>\n", caption_html);
}

static void section_begin(struct html_buf *o, const char *workload, const char *tool,
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

static int add_variant_series(struct svg_plot *p, const struct report_ctx *c, size_t vi)
{
	return svg_plot_add_series(p, c->names[vi], report_variant_color(c, vi), vi > 0);
}

/* ---- histograms (cyclictest latency, slice lengths) ---- */

/* A dense histogram: counts[i] samples of value i * bucket. */
struct hist {
	double *counts;
	size_t n;
	double bucket;
};

static void hist_add(struct hist *h, double value, double count)
{
	if (!isfinite(value) || value < 0 || !isfinite(count) || count <= 0)
		return;
	double idx = floor(value / h->bucket);
	if (idx >= REPORT_MAX_HIST_BUCKETS)
		return;
	size_t i = (size_t)idx;
	if (i >= h->n) {
		double *c = realloc(h->counts, (i + 1) * sizeof(double));
		if (!c)
			abort();
		memset(c + h->n, 0, (i + 1 - h->n) * sizeof(double));
		h->counts = c;
		h->n = i + 1;
	}
	h->counts[i] += count;
}

/* Accepts the shapes a tool's details may use for one histogram:
 * {"bucket_us": b, "counts": [...]}, [[value, count], ...] or [count, ...]
 * (index = value in µs). Returns whether anything was added. */
static bool hist_parse(struct hist *h, json_object *j)
{
	json_object *counts = j;
	double bucket = 1;
	bool any = false;

	if (j && json_object_is_type(j, json_type_object)) {
		counts = get(j, "counts");
		if (!report_num(j, "bucket_us", &bucket) || bucket <= 0)
			bucket = 1;
	}
	if (!counts || !json_object_is_type(counts, json_type_array))
		return false;
	if (h->bucket <= 0)
		h->bucket = bucket;
	for (size_t i = 0; i < json_object_array_length(counts) && i < REPORT_MAX_HIST_BUCKETS;
	     i++) {
		json_object *e = json_object_array_get_idx(counts, i);
		if (is_number(e)) {
			hist_add(h, (double)i * bucket, json_object_get_double(e));
			any = true;
		} else if (e && json_object_is_type(e, json_type_array) &&
			   json_object_array_length(e) == 2 &&
			   is_number(json_object_array_get_idx(e, 0)) &&
			   is_number(json_object_array_get_idx(e, 1))) {
			hist_add(h, json_object_get_double(json_object_array_get_idx(e, 0)),
				 json_object_get_double(json_object_array_get_idx(e, 1)));
			any = true;
		}
	}
	return any;
}

/* Adds every histogram in details: "histogram", or per thread "histograms". */
static bool hist_from_details(struct hist *h, json_object *details)
{
	json_object *per = get(details, "histograms");
	bool any = hist_parse(h, get(details, "histogram"));

	for (size_t i = 0; per && json_object_is_type(per, json_type_array) &&
			   i < json_object_array_length(per) && i < 256;
	     i++)
		any = hist_parse(h, json_object_array_get_idx(per, i)) || any;
	return any;
}

/* Draws the variants' histograms on log-spaced bins (latencies span
 * decades under TCG), with per-variant marks. Returns 1 if drawn. */
static int chart_histograms(struct html_buf *o, struct report_ctx *c, struct hist *h,
			    const char *title, const char *xlabel, struct values *marks,
			    const char *const *mark_names, size_t n_marks, const char *caption)
{
	_cleanup_svg_plot_ struct svg_plot *p = NULL;
	double vmin = INFINITY, vmax = 0;

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
	if (!edges || !bins)
		abort();
	for (size_t k = 0; k <= nb; k++)
		edges[k] = pow(10, e_lo + (double)k / LOG_BINS_DECADE);

	p = svg_plot_new(CHART_WIDTH, CHART_HEIGHT);
	svg_plot_title(p, title);
	svg_plot_x_axis(p, SVG_LOG10, xlabel);
	svg_plot_y_axis(p, SVG_LOG10, "samples per bin");
	for (size_t i = 0; i < c->n_names; i++) {
		int s = add_variant_series(p, c, i);
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
	figure_begin(o, c);
	figure_end(o, p, caption);
	return 1;
}

/* Boxes of per-run metric values: one category per metric, one box per
 * variant. Returns 1 if drawn. */
static int chart_metric_boxes(struct html_buf *o, struct report_ctx *c, const char *workload,
			      const char *title, const char *ylabel, enum svg_scale scale,
			      const char *const *metrics, const char *const *labels, size_t n,
			      struct values *hlines, const char *hline_name, const char *caption)
{
	_cleanup_svg_plot_ struct svg_plot *p = svg_plot_new(CHART_WIDTH, CHART_HEIGHT);
	const char *cats[SVG_MAX_CATEGORIES];
	const char *used[SVG_MAX_CATEGORIES];
	size_t n_cats = 0;

	for (size_t m = 0; m < n && n_cats < SVG_MAX_CATEGORIES; m++)
		if (any_metric(c, workload, metrics[m])) {
			cats[n_cats] = labels[m];
			used[n_cats++] = metrics[m];
		}
	if (n_cats == 0)
		return 0;
	svg_plot_title(p, title);
	svg_plot_y_axis(p, scale, ylabel);
	svg_plot_x_categories(p, cats, n_cats);
	for (size_t i = 0; i < c->n_names; i++) {
		int s = add_variant_series(p, c, i);
		if (s < 0)
			break;
		for (size_t m = 0; m < n_cats; m++) {
			struct values v = {0};
			metric_values(c, i, workload, used[m], &v);
			if (v.n)
				svg_plot_box(p, s, m, v.v, v.n);
			values_done(&v);
		}
		if (hlines && hlines[i].n) {
			char label[160], num[HTML_NUM_MAX];
			snprintf(label, sizeof(label), "%.60s %s %s", c->names[i], hline_name,
				 html_fmt_value(hlines[i].v[0], num));
			svg_plot_hline(p, s, hlines[i].v[0], label);
		}
	}
	figure_begin(o, c);
	figure_end(o, p, caption);
	return 1;
}

/* ---- cyclictest ---- */

static int charts_cyclictest(struct html_buf *o, struct report_ctx *c, const char *workload)
{
	static const char *const metrics[] = {"latency_us.min",	  "latency_us.p50",
					      "latency_us.avg",	  "latency_us.p99",
					      "latency_us.p99.9", "latency_us.max"};
	static const char *const labels[] = {"min", "p50", "avg", "p99", "p99.9", "max"};
	static const char *const mark_names[] = {"p99", "max"};
	struct hist h[REPORT_MAX_VARIANTS] = {0};
	struct values marks[REPORT_MAX_VARIANTS * 2] = {0};
	double overflow = 0;
	bool any_hist = false;
	int drawn;

	for (size_t i = 0; i < c->n_names; i++) {
		json_object *w[REPORT_MAX_RUNS];
		size_t n = ok_workloads(c, i, workload, w, REPORT_MAX_RUNS);
		struct values p99 = {0}, max = {0};

		for (size_t j = 0; j < n; j++) {
			json_object *det = get(w[j], "details");
			json_object *ov = get(det, "overflows");
			any_hist = hist_from_details(&h[i], det) || any_hist;
			for (size_t k = 0; ov && json_object_is_type(ov, json_type_array) &&
					   k < json_object_array_length(ov);
			     k++)
				if (is_number(json_object_array_get_idx(ov, k)))
					overflow += json_object_get_double(
					    json_object_array_get_idx(ov, k));
		}
		metric_values(c, i, workload, "latency_us.p99", &p99);
		metric_values(c, i, workload, "latency_us.max", &max);
		if (p99.n)
			values_push(&marks[i * 2], values_median(&p99));
		if (max.n) {
			qsort(max.v, max.n, sizeof(double), cmp_double);
			values_push(&marks[i * 2 + 1], max.v[max.n - 1]);
		}
		values_done(&p99);
		values_done(&max);
	}
	section_begin(o, workload, "cyclictest", "wakeup latency");
	if (any_hist) {
		struct html_buf *cap = html_buf_new();
		html_buf_puts(cap, "Latency histograms of all ok runs per variant, overlaid, on "
				   "logarithmic axes (bins of 1/10 decade). Dashed lines mark each "
				   "variant\xe2\x80\x99s p99 (median over runs) and its largest "
				   "max.");
		if (overflow > 0)
			html_buf_printf(cap,
					" %.0f samples above the histogram\xe2\x80\x99s range "
					"are counted in the metrics but not drawn.",
					overflow);
		drawn =
		    chart_histograms(o, c, h, "cyclictest latency histogram", "latency (\xc2\xb5s)",
				     marks, mark_names, 2, html_buf_data(cap));
		html_buf_free(cap);
	} else {
		drawn = chart_metric_boxes(
		    o, c, workload, "cyclictest latency per run", "latency (\xc2\xb5s)", SVG_LOG10,
		    metrics, labels, ELEMENTSOF(metrics), NULL, NULL,
		    "The result holds no per-bucket histogram, so each dot is one run\xe2\x80\x99s "
		    "latency statistic (boxes: quartiles over runs, when there are 4 or more).");
	}
	for (size_t i = 0; i < c->n_names; i++) {
		free(h[i].counts);
		values_done(&marks[i * 2]);
		values_done(&marks[i * 2 + 1]);
	}
	html_buf_puts(o, "</section>\n");
	return drawn;
}

/* ---- rt-migrate-test ---- */

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* The distinct priorities, ascending, named by start_delay_us.prio<P>.max
 * metrics of any ok run. */
static size_t rtm_priorities(const struct report_ctx *c, const char *workload, int *prios,
			     size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < c->n_names; i++) {
		json_object *w[REPORT_MAX_RUNS];
		size_t nw = ok_workloads(c, i, workload, w, REPORT_MAX_RUNS);
		for (size_t j = 0; j < nw; j++) {
			json_object *wm = get_object(w[j], "metrics");
			if (!wm)
				continue;
			json_object_object_foreach(wm, name, val)
			{
				static const char prefix[] = "start_delay_us.prio";
				char *end = NULL;
				bool seen = false;
				(void)val;
				if (strncmp(name, prefix, sizeof(prefix) - 1) != 0)
					continue;
				/* RT priorities are 1..99; anything else is not one. */
				long lp = strtol(name + sizeof(prefix) - 1, &end, 10);
				if (end == name + sizeof(prefix) - 1 || strcmp(end, ".max") != 0 ||
				    lp < 0 || lp > 99)
					continue;
				int prio = (int)lp;
				for (size_t k = 0; k < n; k++)
					seen = seen || prios[k] == prio;
				if (!seen && n < max)
					prios[n++] = prio;
			}
		}
	}
	qsort(prios, n, sizeof(int), cmp_int);
	return n;
}

/* Maps each column of details.iterations to its priority's category via
 * details.priorities (one per task; tasks may share one). False when the
 * run lacks them or names a priority without a category. */
static bool rtm_columns(json_object *details, const int *prios, size_t n_prios, size_t *cols,
			size_t *ret_n)
{
	json_object *pr = get(details, "priorities");
	size_t n;

	if (!pr || !json_object_is_type(pr, json_type_array) || !get(details, "iterations") ||
	    !json_object_is_type(get(details, "iterations"), json_type_array))
		return false;
	n = json_object_array_length(pr);
	if (n == 0 || n > 64)
		return false;
	for (size_t k = 0; k < n; k++) {
		json_object *e = json_object_array_get_idx(pr, k);
		size_t cat = n_prios;
		if (!e || !json_object_is_type(e, json_type_int))
			return false;
		for (size_t m = 0; m < n_prios; m++)
			if (prios[m] == json_object_get_int(e))
				cat = m;
		if (cat == n_prios)
			return false;
		cols[k] = cat;
	}
	*ret_n = n;
	return true;
}

static int charts_rtmigrate(struct html_buf *o, struct report_ctx *c, const char *workload)
{
	int prios[SVG_MAX_CATEGORIES] = {0};
	size_t n_prios = rtm_priorities(c, workload, prios, 16);
	int drawn = 0;
	bool per_iteration = false;
	double maxerr = NAN;

	section_begin(o, workload, "rt-migrate-test", "RT task migration");
	if (n_prios > 0) {
		_cleanup_svg_plot_ struct svg_plot *p = svg_plot_new(CHART_WIDTH, CHART_HEIGHT);
		char names[16][32];
		const char *cats[16];

		for (size_t k = 0; k < n_prios; k++) {
			snprintf(names[k], sizeof(names[k]), "prio %d", prios[k]);
			cats[k] = names[k];
		}
		svg_plot_title(p, "start delay per priority");
		svg_plot_y_axis(p, SVG_LOG10, "start delay (\xc2\xb5s)");
		svg_plot_x_categories(p, cats, n_prios);
		for (size_t i = 0; i < c->n_names; i++) {
			json_object *w[REPORT_MAX_RUNS];
			size_t nw = ok_workloads(c, i, workload, w, REPORT_MAX_RUNS);
			struct values v[16] = {0};
			int s = add_variant_series(p, c, i);
			if (s < 0)
				break;
			for (size_t j = 0; j < nw; j++) {
				json_object *det = get(w[j], "details");
				double me;
				if (report_num(det, "maxerr_us", &me))
					maxerr = me;
				/* Per-iteration delays only when their columns are
				 * known to be these priorities. */
				size_t cols[64], n_cols = 0;
				if (rtm_columns(det, prios, n_prios, cols, &n_cols)) {
					json_object *it = get(det, "iterations");
					per_iteration = true;
					for (size_t r = 0; r < json_object_array_length(it); r++) {
						json_object *row = json_object_array_get_idx(it, r);
						if (!row ||
						    !json_object_is_type(row, json_type_array))
							continue;
						for (size_t k = 0;
						     k < n_cols &&
						     k < json_object_array_length(row);
						     k++) {
							json_object *e =
							    json_object_array_get_idx(row, k);
							if (is_number(e))
								values_push(
								    &v[cols[k]],
								    json_object_get_double(e));
						}
					}
				} else {
					for (size_t k = 0; k < n_prios; k++) {
						char m[64];
						double d;
						snprintf(m, sizeof(m), "start_delay_us.prio%d.max",
							 prios[k]);
						if (report_num(get(w[j], "metrics"), m, &d))
							values_push(&v[k], d);
					}
				}
			}
			for (size_t k = 0; k < n_prios; k++) {
				if (v[k].n)
					svg_plot_box(p, s, k, v[k].v, v[k].n);
				values_done(&v[k]);
			}
		}
		if (isfinite(maxerr) && maxerr > 0) {
			char label[64], num[HTML_NUM_MAX];
			snprintf(label, sizeof(label), "maxerr %s \xc2\xb5s",
				 html_fmt_value(maxerr, num));
			svg_plot_hline(p, -1, maxerr, label);
		}
		figure_begin(o, c);
		figure_end(o, p,
			   per_iteration
			       ? "Start delay of each priority\xe2\x80\x99s task in every "
				 "iteration of every ok run (one dot each; boxes: quartiles, "
				 "whiskers: range, thick line: median). A high-priority task "
				 "that waits a whole run period while a lower one runs is the "
				 "priority inversion that RT push removes."
			       : "Largest start delay per priority in each ok run (one dot per "
				 "run); the result holds no per-iteration delays.");
		drawn++;
	}

	/* Inversions per repeat: one category per repeat index. */
	if (any_metric(c, workload, "inversions")) {
		_cleanup_svg_plot_ struct svg_plot *p = svg_plot_new(CHART_WIDTH, 300);
		char names[50][16];
		const char *cats[50];
		int max_repeat = -1;

		for (size_t i = 0; i < c->n_names; i++) {
			json_object *runs = get(get(c->variants, c->names[i]), "runs");
			for (size_t j = 0;
			     runs && json_object_is_type(runs, json_type_array) &&
			     j < json_object_array_length(runs) && j < REPORT_MAX_RUNS;
			     j++) {
				double r;
				if (report_num(json_object_array_get_idx(runs, j), "repeat", &r) &&
				    r >= 0 && r < 50 && (int)r > max_repeat)
					max_repeat = (int)r;
			}
		}
		for (int r = 0; r <= max_repeat; r++) {
			snprintf(names[r], sizeof(names[r]), "#%d", r);
			cats[r] = names[r];
		}
		svg_plot_title(p, "priority inversions per repeat");
		svg_plot_y_axis(p, SVG_LINEAR, "inversions");
		svg_plot_y_include(p, 1);
		svg_plot_bar_labels(p, true);
		svg_plot_x_categories(p, cats, (size_t)(max_repeat + 1));
		for (size_t i = 0; i < c->n_names; i++) {
			json_object *runs = get(get(c->variants, c->names[i]), "runs");
			int s = add_variant_series(p, c, i);
			if (s < 0)
				break;
			for (size_t j = 0;
			     runs && json_object_is_type(runs, json_type_array) &&
			     j < json_object_array_length(runs) && j < REPORT_MAX_RUNS;
			     j++) {
				json_object *run = json_object_array_get_idx(runs, j);
				json_object *wls = get(run, "workloads");
				double r, d;
				if (!report_num(run, "repeat", &r) || r < 0 || r > max_repeat)
					continue;
				for (size_t k = 0;
				     wls && json_object_is_type(wls, json_type_array) &&
				     k < json_object_array_length(wls);
				     k++) {
					json_object *w = json_object_array_get_idx(wls, k);
					const char *name = report_str(w, "name");
					if (name && strcmp(name, workload) == 0 &&
					    report_num(get(w, "metrics"), "inversions", &d))
						svg_plot_bar(p, s, (size_t)r, d);
				}
			}
		}
		figure_begin(o, c);
		figure_end(o, p,
			   "Iterations in which a task started more than maxerr after a "
			   "lower-priority task had already started, per run (bar per "
			   "variant and repeat; no bar: no value for that run).");
		drawn++;
	}
	html_buf_puts(o, "</section>\n");
	return drawn;
}

/* ---- share ---- */

/* The expected fraction of uid from details (any of the names the share
 * tool may use), keyed by the uid or by the metric name. */
static bool share_expected(json_object *details, const char *uid, double *ret)
{
	static const char *const keys[] = {"expected", "expected_fraction", "expected_fractions"};
	char metric[64];

	snprintf(metric, sizeof(metric), "cpu_fraction.%s", uid);
	for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
		json_object *e = get(details, keys[i]);
		if (report_num(e, uid, ret) || report_num(e, metric, ret))
			return true;
	}
	return false;
}

static int charts_share(struct html_buf *o, struct report_ctx *c, const char *workload)
{
	char uids[MAX_UIDS][24];
	char labels[MAX_UIDS][32];
	const char *cats[MAX_UIDS];
	size_t n_uids = 0;
	bool any_target = false;

	for (size_t i = 0; i < c->n_names; i++) {
		json_object *w[REPORT_MAX_RUNS];
		size_t nw = ok_workloads(c, i, workload, w, REPORT_MAX_RUNS);
		for (size_t j = 0; j < nw; j++) {
			json_object *wm = get_object(w[j], "metrics");
			if (!wm)
				continue;
			json_object_object_foreach(wm, name, val)
			{
				(void)val;
				const char *u = name + strlen("cpu_fraction.");
				bool seen = false;
				if (strncmp(name, "cpu_fraction.", 13) != 0 || strlen(u) >= 24)
					continue;
				for (size_t k = 0; k < n_uids; k++)
					seen = seen || strcmp(uids[k], u) == 0;
				if (!seen && n_uids < MAX_UIDS)
					strcpy(uids[n_uids++], u);
			}
		}
	}
	if (n_uids == 0)
		return 0;
	/* Numeric uid order. */
	for (size_t a = 1; a < n_uids; a++)
		for (size_t b = a; b > 0 && atol(uids[b - 1]) > atol(uids[b]); b--) {
			char t[24];
			strcpy(t, uids[b]);
			strcpy(uids[b], uids[b - 1]);
			strcpy(uids[b - 1], t);
		}
	for (size_t k = 0; k < n_uids; k++) {
		snprintf(labels[k], sizeof(labels[k]), "uid %.23s", uids[k]);
		cats[k] = labels[k];
	}

	_cleanup_svg_plot_ struct svg_plot *p = svg_plot_new(CHART_WIDTH, CHART_HEIGHT);
	svg_plot_title(p, "CPU fraction per uid");
	svg_plot_y_axis(p, SVG_LINEAR, "fraction of the CPU time");
	svg_plot_y_range(p, 0, 1);
	svg_plot_x_categories(p, cats, n_uids);
	svg_plot_target_label(p, "expected fraction");
	svg_plot_bar_labels(p, true);
	for (size_t i = 0; i < c->n_names; i++) {
		json_object *w[REPORT_MAX_RUNS];
		size_t nw = ok_workloads(c, i, workload, w, REPORT_MAX_RUNS);
		int s = add_variant_series(p, c, i);
		if (s < 0)
			break;
		for (size_t k = 0; k < n_uids; k++) {
			char m[64];
			struct values v = {0};
			double t;
			snprintf(m, sizeof(m), "cpu_fraction.%s", uids[k]);
			metric_values(c, i, workload, m, &v);
			if (v.n)
				svg_plot_bar(p, s, k, values_median(&v));
			values_done(&v);
			for (size_t j = 0; j < nw; j++)
				if (share_expected(get(w[j], "details"), uids[k], &t)) {
					svg_plot_bar_target(p, s, k, t);
					any_target = true;
					break;
				}
		}
	}
	section_begin(o, workload, "share", "fair share per user");
	figure_begin(o, c);
	figure_end(o, p,
		   any_target
		       ? "Median CPU fraction per uid over the ok runs; the black line "
			 "marks the fraction that the uid\xe2\x80\x99s share (cgroup weight) "
			 "promises."
		       : "Median CPU fraction per uid over the ok runs (the result holds "
			 "no expected fractions).");
	html_buf_puts(o, "</section>\n");
	return 1;
}

/* ---- slice ---- */

static bool slice_predicted(json_object *details, double *ret)
{
	double ns;

	if (report_num(details, "predicted_slice_us", ret) ||
	    report_num(details, "predicted_us", ret))
		return true;
	if (report_num(details, "predicted_slice_ns", &ns) ||
	    report_num(details, "predicted_ns", &ns)) {
		*ret = ns / 1000;
		return true;
	}
	return false;
}

static int charts_slice(struct html_buf *o, struct report_ctx *c, const char *workload)
{
	static const char *const metrics[] = {"slice_us.min", "slice_us.p50", "slice_us.mean",
					      "slice_us.p99", "slice_us.max", "wait_us.p50",
					      "wait_us.p99"};
	static const char *const labels[] = {"slice min", "slice p50", "slice mean", "slice p99",
					     "slice max", "wait p50",  "wait p99"};
	static const char *const mark_names[] = {"predicted"};
	struct values predicted[REPORT_MAX_VARIANTS] = {0};
	struct hist h[REPORT_MAX_VARIANTS] = {0};
	bool any_hist = false;
	int drawn;

	for (size_t i = 0; i < c->n_names; i++) {
		json_object *w[REPORT_MAX_RUNS];
		size_t nw = ok_workloads(c, i, workload, w, REPORT_MAX_RUNS);
		for (size_t j = 0; j < nw; j++) {
			double d;
			any_hist = hist_from_details(&h[i], get(w[j], "details")) || any_hist;
			if (predicted[i].n == 0 && slice_predicted(get(w[j], "details"), &d))
				values_push(&predicted[i], d);
		}
	}
	section_begin(o, workload, "slice", "CFS slice lengths");
	if (any_hist)
		drawn =
		    chart_histograms(o, c, h, "slice length histogram", "slice length (\xc2\xb5s)",
				     predicted, mark_names, 1,
				     "Lengths of the uninterrupted run segments of the busy "
				     "threads, all ok runs per variant; dashed lines: the slice "
				     "the scheduler\xe2\x80\x99s tunables predict.");
	else
		drawn = chart_metric_boxes(
		    o, c, workload, "slice lengths and waits per run", "\xc2\xb5s", SVG_LOG10,
		    metrics, labels, ELEMENTSOF(metrics), predicted, "predicted",
		    "The busy threads\xe2\x80\x99 uninterrupted run segments (slices) and their "
		    "waits, summarised per run: each dot is one run\xe2\x80\x99s quantile (boxes "
		    "with 4 or more runs); dashed lines: the slice the scheduler\xe2\x80\x99s "
		    "tunables predict.");
	for (size_t i = 0; i < c->n_names; i++) {
		free(h[i].counts);
		values_done(&predicted[i]);
	}
	html_buf_puts(o, "</section>\n");
	return drawn;
}

int report_charts_workload(struct html_buf *o, struct report_ctx *c, const char *workload,
			   const char *tool)
{
	if (strcmp(tool, "cyclictest") == 0)
		return charts_cyclictest(o, c, workload);
	if (strcmp(tool, "rt-migrate-test") == 0)
		return charts_rtmigrate(o, c, workload);
	if (strcmp(tool, "share") == 0)
		return charts_share(o, c, workload);
	if (strcmp(tool, "slice") == 0)
		return charts_slice(o, c, workload);
	return 0;
}
