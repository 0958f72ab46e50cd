/* A load's charts (docs/workloads.md "Loads"): its throughput per run and
 * its CPU use over the measured window, one box per variant, so a patch
 * that buys latency with throughput shows beside the latency. */
#include <string.h>

#include "report/report-internal.h"

int charts_load(struct html_buf *o, struct report_ctx *c, const char *workload, const char *tool)
{
	static const struct {
		const char *tool, *metric, *label, *unit;
	} throughput[] = {
	    {"hackbench", "loops_per_s", "loops/s", "loops per second (per sender)"},
	    {"burn", "ops_per_s", "ops/s", "operations per second"},
	    {"perf-bench-sched", "time_s", "time", "seconds per run (lower is better)"},
	};
	static const char *const cpu[] = {"load.cpu_fraction"};
	static const char *const cpu_label[] = {"CPU used"};
	int drawn = 0;

	charts_section_begin(o, workload, tool, "load throughput");
	html_buf_puts(o, "<div class=\"pair\">\n");
	for (size_t i = 0; i < ELEMENTSOF(throughput); i++) {
		if (strcmp(throughput[i].tool, tool) != 0)
			continue;
		const char *const m[] = {throughput[i].metric};
		const char *const l[] = {throughput[i].label};
		drawn += charts_metric_boxes(
		    o, c, workload, "load throughput per run", throughput[i].unit, SVG_LINEAR, m, l,
		    1, NULL, NULL,
		    "The load\xe2\x80\x99s throughput in each run, the mean over its completed "
		    "iterations while it ran beside the measured workloads (boxes: quartiles over "
		    "runs, when there are 4 or more).");
	}
	drawn += charts_metric_boxes(
	    o, c, workload, "load CPU use per run", "fraction of the CPUs it should occupy",
	    SVG_LINEAR, cpu, cpu_label, 1, NULL, NULL,
	    "Its CPU time over the measured window per CPU it was meant to occupy; a run under "
	    "the load\xe2\x80\x99s min_cpu is an error, never an idle measurement.");
	html_buf_puts(o, "</div>\n</section>\n");
	return drawn;
}
