/* rt-migrate-test charts: the start delay per priority, and the priority
 * inversions per repeat. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report-internal.h"
#include "util/parse.h"
#include "util/json_get.h"

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
		const struct model_workload *w[REPORT_MAX_RUNS];
		size_t nw = charts_ok_workloads(c, i, workload, w, REPORT_MAX_RUNS);
		for (size_t j = 0; j < nw; j++) {
			json_object *wm = w[j]->metrics;
			if (!wm)
				continue;
			json_object_object_foreach(wm, name, val)
			{
				static const char prefix[] = "start_delay_us.prio";
				bool seen = false;
				char digits[16];
				long lp;
				(void)val;
				if (strncmp(name, prefix, sizeof(prefix) - 1) != 0)
					continue;
				/* "<prefix>60.max"; RT priorities are 1..99, anything else
				 * is not one. */
				const char *num = name + sizeof(prefix) - 1;
				size_t nd = strspn(num, "0123456789");
				if (nd == 0 || nd >= sizeof(digits) ||
				    strcmp(num + nd, ".max") != 0)
					continue;
				snprintf(digits, sizeof(digits), "%.*s", (int)nd, num);
				if (parse_int(digits, 0, 99, &lp) < 0)
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
	json_object *pr = json_member(details, "priorities");
	size_t n;

	if (!pr || !json_object_is_type(pr, json_type_array) ||
	    !json_member(details, "iterations") ||
	    !json_object_is_type(json_member(details, "iterations"), json_type_array))
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

/* The start delay per priority (prios, n_prios > 0 of them): per
 * iteration where the runs hold the iterations, else each run's largest. */
static void rtm_delay_chart(struct html_buf *o, struct report_ctx *c, const char *workload,
			    const int *prios, size_t n_prios)
{
	bool per_iteration = false;
	double maxerr = NAN;
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
		const struct model_workload *w[REPORT_MAX_RUNS];
		size_t nw = charts_ok_workloads(c, i, workload, w, REPORT_MAX_RUNS);
		struct charts_values v[16] = {0};
		int s = charts_add_variant_series(p, c, i);
		if (s < 0)
			break;
		for (size_t j = 0; j < nw; j++) {
			json_object *det = w[j]->details;
			double me;
			if (json_member_number(det, "maxerr_us", &me))
				maxerr = me;
			/* Per-iteration delays only when their columns are
			 * known to be these priorities. */
			size_t cols[64], n_cols = 0;
			if (rtm_columns(det, prios, n_prios, cols, &n_cols)) {
				json_object *it = json_member(det, "iterations");
				per_iteration = true;
				for (size_t r = 0; r < json_object_array_length(it); r++) {
					json_object *row = json_object_array_get_idx(it, r);
					if (!row || !json_object_is_type(row, json_type_array))
						continue;
					for (size_t k = 0;
					     k < n_cols && k < json_object_array_length(row); k++) {
						json_object *e = json_object_array_get_idx(row, k);
						if (report_is_number(e))
							charts_values_push(
							    &v[cols[k]], json_object_get_double(e));
					}
				}
			} else {
				for (size_t k = 0; k < n_prios; k++) {
					char m[64];
					double d;
					snprintf(m, sizeof(m), "start_delay_us.prio%d.max",
						 prios[k]);
					if (json_member_number(w[j]->metrics, m, &d))
						charts_values_push(&v[k], d);
				}
			}
		}
		for (size_t k = 0; k < n_prios; k++) {
			if (v[k].n)
				svg_plot_box(p, s, k, v[k].v, v[k].n);
			charts_values_done(&v[k]);
		}
	}
	if (isfinite(maxerr) && maxerr > 0) {
		char label[64], num[HTML_NUM_MAX];
		snprintf(label, sizeof(label), "maxerr %s \xc2\xb5s", html_fmt_value(maxerr, num));
		svg_plot_hline(p, -1, maxerr, label);
	}
	charts_figure_begin(o, c);
	charts_figure_end(o, p,
			  per_iteration
			      ? "Start delay of each priority\xe2\x80\x99s task in every "
				"iteration of every ok run (one dot each; boxes: quartiles, "
				"whiskers: range, thick line: median). A high-priority task "
				"that waits a whole run period while a lower one runs is the "
				"priority inversion that RT push removes."
			      : "Largest start delay per priority in each ok run (one dot per "
				"run); the result holds no per-iteration delays.");
}

/* Inversions per repeat: one category per repeat index. */
static void rtm_inversions_chart(struct html_buf *o, struct report_ctx *c, const char *workload)
{
	_cleanup_svg_plot_ struct svg_plot *p = svg_plot_new(CHART_WIDTH, 300);
	char names[50][16];
	const char *cats[50];
	int max_repeat = -1;

	for (size_t i = 0; i < c->n_names; i++) {
		const struct model_variant *v = c->vars[i];
		for (size_t j = 0; j < v->n_runs && j < REPORT_MAX_RUNS; j++) {
			int64_t r = v->runs[j].repeat;
			if (r >= 0 && r < 50 && (int)r > max_repeat)
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
		const struct model_variant *v = c->vars[i];
		int s = charts_add_variant_series(p, c, i);
		if (s < 0)
			break;
		for (size_t j = 0; j < v->n_runs && j < REPORT_MAX_RUNS; j++) {
			const struct model_run *run = &v->runs[j];
			int64_t r = run->repeat;
			double d;
			if (r < 0 || r > max_repeat)
				continue;
			for (size_t k = 0; k < run->n_workloads; k++) {
				const struct model_workload *w = &run->workloads[k];
				if (strcmp(w->name, workload) == 0 &&
				    json_member_number(w->metrics, "inversions", &d))
					svg_plot_bar(p, s, (size_t)r, d);
			}
		}
	}
	charts_figure_begin(o, c);
	charts_figure_end(o, p,
			  "Iterations in which a task started more than maxerr after a "
			  "lower-priority task had already started, per run (bar per "
			  "variant and repeat; no bar: no value for that run).");
}

int charts_rtmigrate(struct html_buf *o, struct report_ctx *c, const char *workload)
{
	int prios[SVG_MAX_CATEGORIES] = {0};
	size_t n_prios = rtm_priorities(c, workload, prios, 16);
	int drawn = 0;

	charts_section_begin(o, workload, "rt-migrate-test", "RT task migration");
	if (n_prios > 0) {
		rtm_delay_chart(o, c, workload, prios, n_prios);
		drawn++;
	}
	if (charts_any_metric(c, workload, "inversions")) {
		rtm_inversions_chart(o, c, workload);
		drawn++;
	}
	html_buf_puts(o, "</section>\n");
	return drawn;
}
