/* share charts: the CPU fraction per uid against the fraction expected. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/report-internal.h"
#include "util/parse.h"
#include "util/json_get.h"

#define MAX_UIDS 16

/* The expected fraction of uid from details (any of the names the share
 * tool may use), keyed by the uid or by the metric name. */
static bool share_expected(json_object *details, const char *uid, double *ret)
{
	static const char *const keys[] = {"expected", "expected_fraction", "expected_fractions"};
	char metric[64];

	snprintf(metric, sizeof(metric), "cpu_fraction.%s", uid);
	for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
		json_object *e = json_member(details, keys[i]);
		if (json_member_number(e, uid, ret) || json_member_number(e, metric, ret))
			return true;
	}
	return false;
}

/* A uid's number for sorting; a name that is not one sorts last. */
static long uid_value(const char *uid)
{
	long v;
	return parse_int(uid, 0, LONG_MAX, &v) == 0 ? v : LONG_MAX;
}

int charts_share(struct html_buf *o, struct report_ctx *c, const char *workload)
{
	char uids[MAX_UIDS][24];
	char labels[MAX_UIDS][32];
	const char *cats[MAX_UIDS];
	size_t n_uids = 0;
	bool any_target = false;

	for (size_t i = 0; i < c->n_names; i++) {
		const struct model_workload *w[REPORT_MAX_RUNS];
		size_t nw = charts_ok_workloads(c, i, workload, w, REPORT_MAX_RUNS);
		for (size_t j = 0; j < nw; j++) {
			json_object *wm = w[j]->metrics;
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
		for (size_t b = a; b > 0 && uid_value(uids[b - 1]) > uid_value(uids[b]); b--) {
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
		const struct model_workload *w[REPORT_MAX_RUNS];
		size_t nw = charts_ok_workloads(c, i, workload, w, REPORT_MAX_RUNS);
		int s = charts_add_variant_series(p, c, i);
		if (s < 0)
			break;
		for (size_t k = 0; k < n_uids; k++) {
			char m[64];
			struct charts_values v = {0};
			double t;
			snprintf(m, sizeof(m), "cpu_fraction.%s", uids[k]);
			charts_metric_values(c, i, workload, m, &v);
			if (v.n)
				svg_plot_bar(p, s, k, charts_values_median(&v));
			charts_values_done(&v);
			for (size_t j = 0; j < nw; j++)
				if (share_expected(w[j]->details, uids[k], &t)) {
					svg_plot_bar_target(p, s, k, t);
					any_target = true;
					break;
				}
		}
	}
	charts_section_begin(o, workload, "share", "fair share per user");
	charts_figure_begin(o, c);
	charts_figure_end(
	    o, p,
	    any_target ? "Median CPU fraction per uid over the ok runs; the black line "
			 "marks the fraction that the uid\xe2\x80\x99s share (cgroup weight) "
			 "promises."
		       : "Median CPU fraction per uid over the ok runs (the result holds "
			 "no expected fractions).");
	html_buf_puts(o, "</section>\n");
	return 1;
}
