/* The trend page (report/trend.h): a table of change points, a table of
 * regressions on the night each first appeared, and one chart per series,
 * workload and metric with each variant's candidate median, its band and
 * the baseline median over time. The analysis is trend_changepoint.c's;
 * the rows come from the store (server/store_trend.c). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "report/svg.h"
#include "report/trend-internal.h"
#include "report/trend.h"

/* What the page shows of g's series: its id, or the jobs' name alone when
 * no owner tells series of that name apart (a schedule's own, a store from
 * before owners, jobs without one). */
static const char *shown(const struct series_group *g)
{
	return g->legacy || !g->owner[0] || !strchr(g->job_name, '@') ? g->name : g->job_name;
}

static void put_date(struct html_buf *o, time_t t)
{
	struct tm tm;
	char s[32];

	gmtime_r(&t, &tm);
	strftime(s, sizeof(s), "%Y-%m-%d %H:%M", &tm);
	html_buf_puts(o, s);
}

static int chart(struct html_buf *o, const struct series_group *g, int *chart_id)
{
	_cleanup_svg_plot_ struct svg_plot *p = svg_plot_new(1080, 280);
	char variants[TREND_MAX_VARIANTS][TEXT_MAX];
	size_t n_var = 0;
	_cleanup_free_ char *title = NULL;
	_cleanup_free_ double *x = calloc(g->n, sizeof(double));
	_cleanup_free_ double *y = calloc(g->n, sizeof(double));
	_cleanup_free_ double *lo = calloc(g->n, sizeof(double));
	_cleanup_free_ double *hi = calloc(g->n, sizeof(double));

	if (!p || !x || !y || !lo || !hi)
		return -ENOMEM;
	for (size_t i = 0; i < g->n; i++) {
		bool seen = false;
		for (size_t k = 0; k < n_var; k++)
			seen = seen || strcmp(variants[k], g->pts[i].variant) == 0;
		if (!seen && n_var < TREND_MAX_VARIANTS)
			strcpy(variants[n_var++], g->pts[i].variant);
	}
	if (asprintf(&title, "%.80s \xc2\xb7 %.60s \xc2\xb7 %.80s", shown(g), g->workload,
		     g->metric) < 0)
		return -ENOMEM;
	svg_plot_title(p, title);
	svg_plot_x_axis(p, SVG_TIME, "finished (UTC)");
	svg_plot_y_axis(p, SVG_LINEAR, g->metric);

	/* The baseline median once per job run (the first variant's row). */
	int sb = svg_plot_add_series(p, "baseline median", 0, true);
	size_t nb = 0;
	for (size_t i = 0; i < g->n; i++)
		if (strcmp(g->pts[i].variant, variants[0]) == 0 && isfinite(g->pts[i].base)) {
			x[nb] = (double)g->pts[i].t;
			y[nb++] = g->pts[i].base;
		}
	svg_plot_line(p, sb, x, y, nb);

	for (size_t k = 0; k < n_var; k++) {
		char name[TEXT_MAX + 32];
		size_t n = 0, nband = 0;
		snprintf(name, sizeof(name), "%s median, 95%% CI", variants[k]);
		int s = svg_plot_add_series(p, name, (int)(k % 6) + 1, false);
		for (size_t i = 0; i < g->n; i++) {
			const struct point *pt = &g->pts[i];
			if (strcmp(pt->variant, variants[k]) != 0 || !isfinite(pt->cand))
				continue;
			x[n] = (double)pt->t;
			y[n] = pt->cand;
			/* ci is the interval of the change; around the baseline
			 * median it is the plausible range of the candidate's. */
			if (isfinite(pt->base) && isfinite(pt->ci_lo) && isfinite(pt->ci_hi)) {
				lo[n] = pt->base + pt->ci_lo;
				hi[n] = pt->base + pt->ci_hi;
				nband++;
			} else {
				lo[n] = hi[n] = pt->cand;
			}
			n++;
		}
		if (nband)
			svg_plot_band(p, s, x, lo, hi, n);
		svg_plot_line(p, s, x, y, n);
	}
	if (g->regressions) {
		int sr = svg_plot_add_series(p, "regression first seen", 5, false);
		size_t n = 0;
		for (size_t i = 0; i < g->n; i++)
			if (trend_first_regressed(g, i) && isfinite(g->pts[i].cand)) {
				x[n] = (double)g->pts[i].t;
				y[n++] = g->pts[i].cand;
			}
		svg_plot_points(p, sr, x, y, n, SVG_MARK_TRIANGLE);
	}
	if (g->n_cps) {
		int sc = svg_plot_add_series(p, "change point", 6, true);
		for (size_t i = 0; i < g->n_cps; i++) {
			char label[TEXT_MAX + 32];
			snprintf(label, sizeof(label), "%.60s %+.3g%s",
				 g->cps[i].variant ? g->cps[i].variant : "baseline",
				 g->cps[i].cp.change,
				 g->cps[i].baseline_too ? " (baseline too)" : "");
			svg_plot_vline(p, sc, (double)g->cps[i].after->t, label);
		}
	}
	html_buf_printf(o, "<figure id=\"trend-%d\">\n", ++*chart_id);
	svg_plot_render_to(p, o);
	html_buf_printf(o, "<figcaption>%zu comparisons", g->n);
	if (g->undecided) /* a point the runs could not decide is not "no change" */
		html_buf_printf(o, "; %zu undecided (the runs could not tell)", g->undecided);
	if (g->regressions)
		html_buf_printf(o, "; %zu regression%s first seen (\xe2\x96\xb2)", g->regressions,
				g->regressions == 1 ? "" : "s");
	if (g->n_cps)
		html_buf_printf(o, "; %zu change point%s (dashed vertical line%s)", g->n_cps,
				g->n_cps == 1 ? "" : "s", g->n_cps == 1 ? "" : "s");
	html_buf_puts(o, ".</figcaption>\n</figure>\n");
	return 0;
}

static int cmp_group(const void *a, const void *b)
{
	const struct series_group *x = a, *y = b;
	int r = strcmp(x->job_name, y->job_name);

	if (r)
		return r;
	/* Within a job, metrics that regressed or changed level come first. */
	bool xr = x->regressions > 0 || x->n_cps > 0, yr = y->regressions > 0 || y->n_cps > 0;
	if (xr != yr)
		return xr ? -1 : 1;
	r = strcmp(x->workload, y->workload);
	return r ? r : strcmp(x->metric, y->metric);
}

/* The commits between the two nights of a change point: `git log A..B`
 * holds the suspects. Shortened to 12 digits; the title has them whole. */
static void put_commit_range(struct html_buf *o, const struct trend_cp *c)
{
	const char *a = c->before->commit, *b = c->after->commit;
	if (!trend_commit_valid(a) || !trend_commit_valid(b)) {
		html_buf_puts(o, "<span class=\"muted\">unknown</span>");
		return;
	}
	html_buf_puts(o, "<code class=\"commits\" title=\"");
	html_buf_escape(o, a);
	html_buf_puts(o, "..");
	html_buf_escape(o, b);
	html_buf_printf(o, "\">%.12s..%.12s</code>", a, b);
	if (strcmp(a, b) == 0)
		html_buf_puts(o, " <b>(same commit)</b>");
}

/* The change point's bisection: a link to its job's report, naming the
 * first bad commit once found, else the job's state. */
static void put_bisection(struct html_buf *o, const struct trend *t, const struct series_group *g,
			  const struct trend_cp *c)
{
	char key[65];
	const struct trend_bisection *b = trend_bisection_of(t, g, c, key);
	if (!b) {
		html_buf_puts(o, "<span class=\"muted\">not bisected</span>");
		return;
	}
	html_buf_puts(o, "<a class=\"bisection\" href=\"/v1/jobs/");
	html_buf_escape(o, b->job_id);
	html_buf_puts(o, "/report\">");
	if (strcmp(b->state, "found") == 0 && trend_commit_valid(b->first_bad_commit)) {
		html_buf_printf(o, "<code class=\"culprit\" title=\"%s\">%.12s</code> ",
				b->first_bad_commit, b->first_bad_commit);
		html_buf_escape(o, b->first_bad_subject);
		if (b->certain == 0)
			html_buf_puts(o, " (uncertain)");
	} else {
		html_buf_puts(o, "bisection ");
		html_buf_escape(o, b->state[0] ? b->state : "unknown");
	}
	html_buf_puts(o, "</a>");
}

/* The table of change points, every chart's, first on the page. */
static void change_point_table(struct html_buf *o, const struct trend *t, size_t total)
{
	html_buf_puts(o, "<section id=\"change-points\">\n<h2>Change points</h2>\n");
	if (total == 0) {
		html_buf_puts(o, "<p>No series changed level in this window (E-Divisive means, "
				 "permutation p \xe2\x89\xa4 0.01, at least 5 % and 3 nights a "
				 "side; docs/statistics.md).</p>\n</section>\n");
		return;
	}
	html_buf_puts(o, "<p class=\"muted\">Where a series' level moved and stayed moved, judged "
			 "over all its nights (E-Divisive means on ranks, permutation p "
			 "\xe2\x89\xa4 0.01, at least 5 % and 3 nights a side; "
			 "docs/statistics.md). <b>baseline too</b>: the baseline moved "
			 "between the same nights, so the host or the baseline kernel "
			 "changed, not only the code under test.</p>\n<table>\n"
			 "<tr><th>last night before (UTC)</th><th>first night after</th>"
			 "<th>job</th><th>series</th><th>workload</th><th>metric</th>"
			 "<th class=\"num\">before</th><th class=\"num\">after</th>"
			 "<th class=\"num\">change, 95% CI</th><th class=\"num\">p</th>"
			 "<th>job ids</th><th>commits</th><th>culprit (bisection)</th></tr>\n");
	for (size_t i = 0; i < t->n; i++) {
		const struct series_group *g = &t->g[i];
		for (size_t j = 0; j < g->n_cps; j++) {
			const struct trend_cp *c = &g->cps[j];
			char a[HTML_NUM_MAX], b[HTML_NUM_MAX], d[HTML_NUM_MAX], lo[HTML_NUM_MAX],
			    hi[HTML_NUM_MAX], pv[HTML_NUM_MAX];
			html_buf_puts(o, "<tr class=\"cp\"><td>");
			put_date(o, c->before->t);
			html_buf_puts(o, "</td><td>");
			put_date(o, c->after->t);
			html_buf_puts(o, "</td><td>");
			html_buf_escape(o, shown(g));
			html_buf_puts(o, "</td><td>");
			if (c->variant)
				html_buf_escape(o, c->variant);
			else
				html_buf_puts(o, "<b>baseline</b>");
			if (c->baseline_too)
				html_buf_puts(o, " <b>(baseline too)</b>");
			html_buf_puts(o, "</td><td>");
			html_buf_escape(o, g->workload);
			html_buf_puts(o, "</td><td><code>");
			html_buf_escape(o, g->metric);
			html_buf_printf(
			    o,
			    "</code></td><td class=\"num\">%s</td><td class=\"num\">%s</td>"
			    "<td class=\"num\">%s%s [%s, %s]</td><td class=\"num\">%s</td>"
			    "<td><code>",
			    html_fmt_value(c->cp.before, a), html_fmt_value(c->cp.after, b),
			    c->cp.change > 0 ? "+" : "", html_fmt_value(c->cp.change, d),
			    html_fmt_value(c->cp.ci_lo, lo), html_fmt_value(c->cp.ci_hi, hi),
			    html_fmt_value(c->cp.p, pv));
			html_buf_escape(o, c->before->job_id);
			html_buf_puts(o, "</code> \xe2\x86\x92 <code>");
			html_buf_escape(o, c->after->job_id);
			html_buf_puts(o, "</code></td><td>");
			put_commit_range(o, c);
			html_buf_puts(o, "</td><td>");
			put_bisection(o, t, g, c);
			html_buf_puts(o, "</td></tr>\n");
		}
	}
	html_buf_puts(o, "</table>\n</section>\n");
}

/* The regressions, each on the night it first appeared. */
static void regression_table(struct html_buf *o, const struct trend *t, size_t total)
{
	html_buf_puts(o, "<section id=\"regressions\">\n<h2>Regressions</h2>\n");
	if (total == 0) {
		html_buf_puts(o, "<p>No metric regressed in this window.</p>\n</section>\n");
		return;
	}
	html_buf_puts(o, "<p class=\"muted\">Each regression is listed once, on the first "
			 "job run where it appeared (a later run that regressed again "
			 "continues it).</p>\n<table>\n<tr><th>first seen (UTC)</th>"
			 "<th>job</th><th>variant</th><th>workload</th><th>metric</th>"
			 "<th class=\"num\">baseline</th><th class=\"num\">candidate</th>"
			 "<th class=\"num\">change</th><th>job id</th></tr>\n");
	for (size_t i = 0; i < t->n; i++) {
		const struct series_group *g = &t->g[i];
		for (size_t j = 0; j < g->n; j++) {
			const struct point *pt = &g->pts[j];
			char a[HTML_NUM_MAX], b[HTML_NUM_MAX], c[HTML_NUM_MAX];
			if (!trend_first_regressed(g, j))
				continue;
			html_buf_puts(o, "<tr><td>");
			put_date(o, pt->t);
			html_buf_puts(o, "</td><td>");
			html_buf_escape(o, shown(g));
			html_buf_puts(o, "</td><td>");
			html_buf_escape(o, pt->variant);
			html_buf_puts(o, "</td><td>");
			html_buf_escape(o, g->workload);
			html_buf_puts(o, "</td><td><code>");
			html_buf_escape(o, g->metric);
			html_buf_printf(o,
					"</code></td><td class=\"num\">%s</td>"
					"<td class=\"num\">%s</td><td class=\"num\">%s%s</td>"
					"<td><code>",
					html_fmt_value(pt->base, a), html_fmt_value(pt->cand, b),
					pt->change > 0 ? "+" : "", html_fmt_value(pt->change, c));
			html_buf_escape(o, pt->job_id);
			html_buf_puts(o, "</code></td></tr>\n");
		}
	}
	html_buf_puts(o, "</table>\n</section>\n");
}

/* One section per series, at most TREND_MAX_CHARTS charts in all. */
static int chart_sections(struct html_buf *o, const struct trend *t)
{
	const char *job = NULL;
	size_t charts = 0;
	int chart_id = 0, r;

	for (size_t i = 0; i < t->n; i++) {
		const struct series_group *g = &t->g[i];
		if (!job || strcmp(job, g->job_name) != 0) {
			if (job)
				html_buf_puts(o, "</section>\n");
			job = g->job_name;
			html_buf_puts(o, "<section class=\"job\">\n<h2>");
			html_buf_escape(o, shown(g));
			html_buf_puts(o, "</h2>\n");
		}
		if (charts >= TREND_MAX_CHARTS)
			continue;
		if ((r = chart(o, g, &chart_id)) < 0)
			return r;
		charts++;
	}
	if (job)
		html_buf_puts(o, "</section>\n");
	if (charts < t->n)
		html_buf_printf(o,
				"<p class=\"muted\">%zu of %zu series are drawn (at most %d "
				"charts; regressed metrics first within each job).</p>\n",
				charts, t->n, TREND_MAX_CHARTS);
	if (t->n == 0)
		html_buf_puts(o, "<p>The store holds no comparisons in this window.</p>\n");
	return 0;
}

static int render(struct html_buf *o, struct trend *t, long since_seconds, time_t now)
{
	size_t total_cps = 0, total_regressions = 0;
	time_t since = now - since_seconds;

	for (size_t i = 0; i < t->n; i++) {
		total_regressions += t->g[i].regressions;
		total_cps += t->g[i].n_cps;
	}
	if (t->n > 1)
		qsort(t->g, t->n, sizeof(*t->g), cmp_group);

	html_buf_printf(
	    o,
	    "<header class=\"top\" id=\"verdict\">\n<div class=\"badge big v-%s\">%s</div>\n"
	    "<div>\n<h1>schedlab trend</h1>\n<p class=\"meta\">",
	    total_regressions ? "fail" : "pass",
	    total_regressions ? "REGRESSIONS" : "NO REGRESSIONS");
	put_date(o, since);
	html_buf_puts(o, " \xe2\x80\x93 ");
	put_date(o, now);
	html_buf_printf(o,
			" UTC \xc2\xb7 %zu comparisons in %zu series \xc2\xb7 %zu change point%s"
			"</p>\n</div>\n</header>\n",
			t->rows, t->n, total_cps, total_cps == 1 ? "" : "s");
	change_point_table(o, t, total_cps);
	regression_table(o, t, total_regressions);
	return chart_sections(o, t);
}

int trend_render_html(struct trend *t, long since_seconds, time_t now, char **ret_html,
		      struct sl_error *err)
{
	if (since_seconds <= 0)
		return error_set(err, ERR_INVALID, EINVAL,
				 "The trend report needs a positive window, not %ld s.",
				 since_seconds);
	int r = trend_analyse(t, err);
	if (r < 0)
		return r;
	_cleanup_html_buf_ struct html_buf *o = html_buf_new();
	report_page_begin(o, "schedlab trend");
	if (render(o, t, since_seconds, now) < 0)
		return error_set(err, ERR_INTERNAL, ENOMEM,
				 "Out of memory while drawing the trend's charts.");
	report_page_end(o);
	char *html = html_buf_steal(TAKE_PTR(o));
	if (!html)
		return error_set(err, ERR_INTERNAL, ENOMEM,
				 "Out of memory while writing the trend page.");
	*ret_html = html;
	return 0;
}
