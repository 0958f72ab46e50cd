/* The comparison table of the job report: one row per (variant, workload,
 * metric) with the change, its confidence interval and the verdict; gated
 * rows first, per-thread rows folded into a <details> of their own; the
 * schedstat rows apart, beside their workload's own verdicts ("what
 * moved"). */
#include <math.h>
#include <string.h>

#include "report/report-internal.h"
#include "report/summary.h"
#include "util/json_get.h"

/* Whether field name of cmp is a finite number, into *ret. */
static bool cmp_num(const struct model_comparison *cmp, const char *name, double v, double *ret)
{
	*ret = v;
	return report_cmp_has(cmp, name) && isfinite(v);
}

static void put_change(struct html_buf *o, const struct model_comparison *cmp)
{
	char n[HTML_NUM_MAX], p[HTML_NUM_MAX];
	double d, pct;

	if (!cmp_num(cmp, "change", cmp->change, &d)) {
		html_buf_puts(o, "\xe2\x80\x93");
		return;
	}
	html_buf_printf(o, "%s%s", d > 0 ? "+" : "", html_fmt_value(d, n));
	if (cmp_num(cmp, "change_pct", cmp->change_pct, &pct)) {
		html_fmt_fixed(pct, fabs(pct) >= 100 ? 0 : 1, p);
		html_buf_printf(o, " (%s%s%%)", pct > 0 ? "+" : "", p);
	}
}

static void put_ci(struct html_buf *o, const struct model_comparison *cmp)
{
	json_object *ci = cmp->ci95;
	char a[HTML_NUM_MAX], b[HTML_NUM_MAX];

	if (!json_object_is_type(ci, json_type_array) || json_object_array_length(ci) != 2) {
		html_buf_puts(o, "\xe2\x80\x93");
		return;
	}
	double lo = json_object_get_double(json_object_array_get_idx(ci, 0));
	double hi = json_object_get_double(json_object_array_get_idx(ci, 1));
	html_buf_printf(o, "[%s, %s]", html_fmt_value(lo, a), html_fmt_value(hi, b));
}

static void put_comparison_row(struct html_buf *o, const struct model_comparison *cmp, bool gated)
{
	const char *better = cmp->better;
	double nb = 0, nc = 0;

	html_buf_printf(o, "<tr%s><td>", gated ? " class=\"gated\"" : "");
	report_put_str_or_dash(o, cmp->variant);
	html_buf_puts(o, "</td><td>");
	report_put_str_or_dash(o, cmp->workload);
	html_buf_puts(o, "</td><td><code>");
	report_put_str_or_dash(o, cmp->metric);
	html_buf_puts(o, "</code>");
	if (gated)
		html_buf_puts(o, "<span class=\"tag\">gate</span>");
	if (better && (strcmp(better, "lower") == 0 || strcmp(better, "higher") == 0))
		html_buf_printf(o, " <span class=\"muted\" title=\"%s is better\">%s</span>",
				better, better[0] == 'l' ? "\xe2\x86\x93" : "\xe2\x86\x91");
	html_buf_puts(o, "</td><td class=\"num\">");
	report_put_value(o, cmp->baseline, "median");
	html_buf_puts(o, "</td><td class=\"num\">");
	report_put_value(o, cmp->candidate, "median");
	html_buf_puts(o, "</td><td class=\"num\">");
	put_change(o, cmp);
	html_buf_puts(o, "</td><td class=\"num\">");
	put_ci(o, cmp);
	html_buf_puts(o, "</td><td class=\"num\">");
	char pb[HTML_NUM_MAX];
	double pv;
	html_buf_puts(o, cmp_num(cmp, "p_value", cmp->p_value, &pv) ? html_fmt_value(pv, pb)
								    : "\xe2\x80\x93");
	json_member_number(cmp->baseline, "n", &nb);
	json_member_number(cmp->candidate, "n", &nc);
	html_buf_printf(o, "</td><td class=\"num\">%.0f/%.0f</td><td class=\"num\"", nb, nc);
	/* The threshold the verdict used, and why an undecided row is
	 * undecided: without it such a row reads as a bug. */
	char thr[HTML_NUM_MAX], note[208];
	double t;
	bool have_thr = cmp_num(cmp, "threshold", cmp->threshold, &t);
	if (have_thr && cmp->relative)
		html_buf_puts(o, " title=\"relative: a fraction of the baseline median\"");
	html_buf_puts(o, ">");
	if (have_thr)
		html_buf_printf(o, "\xc2\xb1%s", html_fmt_value(t, thr));
	else
		html_buf_puts(o, "\xe2\x80\x93");
	html_buf_puts(o, "</td><td>");
	report_badge(o, cmp->verdict);
	summary_unchanged_note(cmp, have_thr ? thr : "?", note, sizeof(note));
	if (note[0]) {
		html_buf_puts(o, "<br><span class=\"muted\">");
		html_buf_escape(o, note + 1); /* without the leading space */
		html_buf_puts(o, "</span>");
	}
	html_buf_puts(o, "</td></tr>\n");
}

/* cyclictest's per-thread copies (latency_us.t<N>.*) repeat the overall
 * rows for one thread; they go into a folded table. */
static bool per_thread_metric(const char *metric)
{
	const char *t = metric ? strstr(metric, ".t") : NULL;

	return t && t[2] >= '0' && t[2] <= '9';
}

static const char comparison_head[] =
    "<table>\n<tr><th>variant</th><th>workload</th><th>metric</th>"
    "<th class=\"num\">baseline</th><th class=\"num\">candidate</th>"
    "<th class=\"num\">change</th>"
    "<th class=\"num\" title=\"the distribution-free interval of the shift the verdict used, "
    "at 1 - 2 alpha\">interval</th>"
    "<th class=\"num\">p</th><th class=\"num\">n</th>"
    "<th class=\"num\" title=\"the smallest change that counts\">threshold</th>"
    "<th>verdict</th></tr>\n";

void report_section_comparisons(struct html_buf *o, struct report_ctx *c)
{
	static const char *const verdicts[] = {"regressed",    "improved",  "changed",
					       "inconclusive", "undecided", "unchanged"};
	size_t n = c->m->n_comparisons, folded = 0;
	size_t counts[ELEMENTSOF(verdicts)] = {0};

	html_buf_puts(o, "<section id=\"comparisons\">\n<h2>Comparison with the baseline");
	if (c->baseline) {
		html_buf_puts(o, " \xe2\x80\x98");
		html_buf_escape(o, c->baseline);
		html_buf_puts(o, "\xe2\x80\x99");
	}
	html_buf_puts(o, "</h2>\n");
	if (n == 0) {
		html_buf_puts(o,
			      "<p class=\"muted\">No comparisons: no metric was measured in both "
			      "the baseline and another variant.</p>\n</section>\n");
		return;
	}
	size_t schedstat = 0;
	for (size_t i = 0; i < n && i < REPORT_MAX_ROWS; i++) {
		const struct model_comparison *cmp = &c->m->comparisons[i];
		const char *v = cmp->verdict;
		if (summary_schedstat_metric(cmp->metric)) {
			schedstat++;
			continue;
		}
		for (size_t k = 0; v && k < ELEMENTSOF(verdicts); k++)
			counts[k] += strcmp(v, verdicts[k]) == 0;
		folded += per_thread_metric(cmp->metric);
	}
	html_buf_puts(o, "<p>");
	for (size_t k = 0, shown = 0; k < ELEMENTSOF(verdicts); k++) {
		if (!counts[k])
			continue;
		if (shown++)
			html_buf_puts(o, " ");
		html_buf_printf(o, "%zu ", counts[k]);
		report_badge(o, verdicts[k]);
	}
	html_buf_puts(o, "</p>\n<p class=\"muted\">Medians over the ok runs; change = candidate "
			 "\xe2\x88\x92 baseline; interval: the distribution-free interval of the "
			 "shift (Hodges\xe2\x80\x93Lehmann) at 1 \xe2\x88\x92 2 alpha; p from a "
			 "two-sided Mann\xe2\x80\x93Whitney U test; n = ok runs of "
			 "baseline/candidate. A change counts when p reaches alpha and the shift "
			 "lies beyond \xc2\xb1threshold; unchanged only when the whole interval "
			 "lies within it; anything else is undecided, with its reason. Rows marked "
			 "<span class=\"tag\">gate</span> decide the verdict.</p>\n");
	if (schedstat)
		html_buf_printf(o,
				"<p class=\"muted\">%zu schedstat rows are in \u201cWhat moved: "
				"schedstat\u201d below.</p>\n",
				schedstat);
	html_buf_puts(o, comparison_head);
	/* Gated rows first: they are why the verdict is what it is. Then the
	 * rest, then the per-thread rows folded away. */
	for (int pass = 0; pass < 3; pass++) {
		if (pass == 2) {
			html_buf_puts(o, "</table>\n");
			if (folded == 0)
				break;
			html_buf_printf(o, "<details>\n<summary>%zu per-thread rows</summary>\n%s",
					folded, comparison_head);
		}
		for (size_t i = 0; i < n && i < REPORT_MAX_ROWS; i++) {
			const struct model_comparison *cmp = &c->m->comparisons[i];
			bool g = cmp->gated;
			bool thread = per_thread_metric(cmp->metric);
			int row_pass = g ? 0 : thread ? 2 : 1;

			if (row_pass == pass && !summary_schedstat_metric(cmp->metric))
				put_comparison_row(o, cmp, g);
		}
		if (pass == 2)
			html_buf_puts(o, "</table>\n</details>\n");
	}
	if (n > REPORT_MAX_ROWS)
		html_buf_printf(o, "<p class=\"muted\">The first %d of %zu rows.</p>\n",
				REPORT_MAX_ROWS, n);
	html_buf_puts(o, "</section>\n");
}

void report_section_schedstat(struct html_buf *o, struct report_ctx *c)
{
	const struct model_comparison *cmps = c->m->comparisons;
	size_t n = c->m->n_comparisons;
	if (n > REPORT_MAX_ROWS)
		n = REPORT_MAX_ROWS;
	bool any = false;
	for (size_t i = 0; i < n && !any; i++)
		any = summary_schedstat_metric(cmps[i].metric);
	if (!any)
		return;
	html_buf_puts(o, "<section id=\"schedstat\">\n<h2>What moved: schedstat</h2>\n"
			 "<p class=\"muted\">The kernel's scheduler statistics around each "
			 "workload (docs/workloads.md \u201cschedstat\u201d): runqueue waits, "
			 "wake-ups, load balancing. Not gated; they say why the workload's own "
			 "metrics moved. Shown: the totals and every row whose interval cleared "
			 "its threshold (changed); the per-CPU and per-domain rest is "
			 "folded.</p>\n");
	for (size_t i = 0; i < n; i++) {
		if (!summary_schedstat_group_start(c->m, i))
			continue;
		const struct model_comparison *cmp = &cmps[i];
		html_buf_puts(o, "<h3>");
		report_put_str_or_dash(o, cmp->variant);
		html_buf_puts(o, " / ");
		report_put_str_or_dash(o, cmp->workload);
		html_buf_puts(o, "</h3>\n<p>Its own metrics:");
		size_t own = 0, folded = 0;
		for (size_t k = 0; k < n; k++) {
			const struct model_comparison *e = &cmps[k];
			if (!summary_same_group(e, cmp) || !summary_schedstat_own_row(e))
				continue;
			html_buf_puts(o, own++ ? ", <code>" : " <code>");
			report_put_str_or_dash(o, e->metric);
			html_buf_puts(o, "</code> ");
			report_badge(o, e->verdict);
			html_buf_puts(o, " ");
			put_change(o, e);
		}
		html_buf_puts(o, own ? "</p>\n" : " unchanged.</p>\n");
		html_buf_puts(o, comparison_head);
		for (int pass = 0; pass < 2; pass++) {
			if (pass == 1) {
				html_buf_puts(o, "</table>\n");
				if (folded == 0)
					break;
				html_buf_printf(
				    o,
				    "<details>\n<summary>%zu per-CPU and per-domain rows "
				    "that did not move</summary>\n%s",
				    folded, comparison_head);
			}
			for (size_t k = i; k < n; k++) {
				const struct model_comparison *e = &cmps[k];
				if (!summary_same_group(e, cmp) ||
				    !summary_schedstat_metric(e->metric))
					continue;
				bool shown = summary_schedstat_shown(e);
				folded += pass == 0 && !shown;
				if (shown == (pass == 0))
					put_comparison_row(o, e, false);
			}
			if (pass == 1)
				html_buf_puts(o, "</table>\n</details>\n");
		}
	}
	html_buf_puts(o, "</section>\n");
}
