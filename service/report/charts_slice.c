/* slice charts: the slice-length histograms against the predicted slice;
 * without histograms, per-run boxes of slice lengths and waits. */
#include <math.h>
#include <string.h>

#include "report/report-internal.h"
#include "util/json_get.h"

static bool slice_predicted(json_object *details, double *ret)
{
	double ns;

	if (json_member_number(details, "predicted_slice_us", ret) ||
	    json_member_number(details, "predicted_us", ret))
		return true;
	if (json_member_number(details, "predicted_slice_ns", &ns) ||
	    json_member_number(details, "predicted_ns", &ns)) {
		*ret = ns / 1000;
		return true;
	}
	return false;
}

int charts_slice(struct html_buf *o, struct report_ctx *c, const char *workload)
{
	static const char *const metrics[] = {"slice_us.min", "slice_us.p50", "slice_us.mean",
					      "slice_us.p99", "slice_us.max", "wait_us.p50",
					      "wait_us.p99"};
	static const char *const labels[] = {"slice min", "slice p50", "slice mean", "slice p99",
					     "slice max", "wait p50",  "wait p99"};
	static const char *const mark_names[] = {"predicted"};
	struct charts_values predicted[REPORT_MAX_VARIANTS] = {0};
	struct charts_hist h[REPORT_MAX_VARIANTS] = {0};
	bool any_hist = false;
	int drawn;

	for (size_t i = 0; i < c->n_names; i++) {
		const struct model_workload *w[REPORT_MAX_RUNS];
		size_t nw = charts_ok_workloads(c, i, workload, w, REPORT_MAX_RUNS);
		for (size_t j = 0; j < nw; j++) {
			double d;
			any_hist = charts_hist_from_details(&h[i], w[j]->details) || any_hist;
			if (predicted[i].n == 0 && slice_predicted(w[j]->details, &d))
				charts_values_push(&predicted[i], d);
		}
	}
	charts_section_begin(o, workload, "slice", "CFS slice lengths");
	if (any_hist)
		drawn =
		    charts_histograms(o, c, h, "slice length histogram", "slice length (\xc2\xb5s)",
				      predicted, mark_names, 1,
				      "Lengths of the uninterrupted run segments of the busy "
				      "threads, all ok runs per variant; dashed lines: the slice "
				      "the scheduler\xe2\x80\x99s tunables predict.");
	else
		drawn = charts_metric_boxes(
		    o, c, workload, "slice lengths and waits per run", "\xc2\xb5s", SVG_LOG10,
		    metrics, labels, ELEMENTSOF(metrics), predicted, "predicted",
		    "The busy threads\xe2\x80\x99 uninterrupted run segments (slices) and their "
		    "waits, summarised per run: each dot is one run\xe2\x80\x99s quantile (boxes "
		    "with 4 or more runs); dashed lines: the slice the scheduler\xe2\x80\x99s "
		    "tunables predict.");
	for (size_t i = 0; i < c->n_names; i++) {
		free(h[i].counts);
		charts_values_done(&predicted[i]);
	}
	html_buf_puts(o, "</section>\n");
	return drawn;
}
