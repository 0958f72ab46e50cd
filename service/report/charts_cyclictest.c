/* cyclictest charts: the latency histograms of every variant overlaid, with
 * the p99 and maximum marked; without histograms, per-run boxes of the
 * latency metrics. A cyclictest under load is drawn beside the same tool
 * run idle in the same job (docs/reports.md). */
#include <stdio.h>
#include <string.h>

#include "report/report-internal.h"
#include "util/json_get.h"

/* The chart of one cyclictest workload: its histograms under title, or,
 * without them, per-run boxes under box_title. */
static int cyclictest_chart(struct html_buf *o, struct report_ctx *c, const char *workload,
			    const char *title, const char *box_title)
{
	static const char *const metrics[] = {"latency_us.min",	  "latency_us.p50",
					      "latency_us.avg",	  "latency_us.p99",
					      "latency_us.p99.9", "latency_us.max"};
	static const char *const labels[] = {"min", "p50", "avg", "p99", "p99.9", "max"};
	static const char *const mark_names[] = {"p99", "max"};
	struct charts_hist h[REPORT_MAX_VARIANTS] = {0};
	struct charts_values marks[REPORT_MAX_VARIANTS * 2] = {0};
	double overflow = 0;
	bool any_hist = false;
	int drawn;

	for (size_t i = 0; i < c->n_names; i++) {
		const struct model_workload *w[REPORT_MAX_RUNS];
		size_t n = charts_ok_workloads(c, i, workload, w, REPORT_MAX_RUNS);
		struct charts_values p99 = {0}, max = {0};

		for (size_t j = 0; j < n; j++) {
			json_object *det = w[j]->details;
			json_object *ov = json_member(det, "overflows");
			any_hist = charts_hist_from_details(&h[i], det) || any_hist;
			for (size_t k = 0; ov && json_object_is_type(ov, json_type_array) &&
					   k < json_object_array_length(ov);
			     k++)
				if (report_is_number(json_object_array_get_idx(ov, k)))
					overflow += json_object_get_double(
					    json_object_array_get_idx(ov, k));
		}
		charts_metric_values(c, i, workload, "latency_us.p99", &p99);
		charts_metric_values(c, i, workload, "latency_us.max", &max);
		if (p99.n)
			charts_values_push(&marks[i * 2], charts_values_median(&p99));
		if (max.n) {
			double m = max.v[0];
			for (size_t k = 1; k < max.n; k++)
				m = max.v[k] > m ? max.v[k] : m;
			charts_values_push(&marks[i * 2 + 1], m);
		}
		charts_values_done(&p99);
		charts_values_done(&max);
	}
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
		drawn = charts_histograms(o, c, h, title, "latency (\xc2\xb5s)", marks, mark_names,
					  2, html_buf_data(cap));
		if (html_buf_failed(cap)) /* the caption is missing: so is the report */
			html_buf_fail(o);
		html_buf_free(cap);
	} else {
		drawn = charts_metric_boxes(
		    o, c, workload, box_title, "latency (\xc2\xb5s)", SVG_LOG10, metrics, labels,
		    ELEMENTSOF(metrics), NULL, NULL,
		    "The result holds no per-bucket histogram, so each dot is one run\xe2\x80\x99s "
		    "latency statistic (boxes: quartiles over runs, when there are 4 or more).");
	}
	for (size_t i = 0; i < c->n_names; i++) {
		free(h[i].counts);
		charts_values_done(&marks[i * 2]);
		charts_values_done(&marks[i * 2 + 1]);
	}
	return drawn;
}

int charts_cyclictest(struct html_buf *o, struct report_ctx *c, const char *workload,
		      const char *idle_twin)
{
	char title[160];
	int drawn;

	if (!idle_twin) {
		charts_section_begin(o, workload, "cyclictest", "wakeup latency");
		drawn = cyclictest_chart(o, c, workload, "cyclictest latency histogram",
					 "cyclictest latency per run");
		html_buf_puts(o, "</section>\n");
		return drawn;
	}
	charts_section_begin(o, workload, "cyclictest", "wakeup latency under load, beside idle");
	html_buf_puts(o, "<div class=\"pair\">\n");
	snprintf(title, sizeof(title), "%.60s: under load", workload);
	drawn = cyclictest_chart(o, c, workload, title, title);
	snprintf(title, sizeof(title), "%.60s: idle (the same job)", idle_twin);
	drawn += cyclictest_chart(o, c, idle_twin, title, title);
	html_buf_puts(o, "</div>\n</section>\n");
	return drawn;
}
