/* The per-patch attribution section of the per-job report:
 * result.attribution (schedlab test --per-patch), one row per patch and
 * gated metric with the patch's own change, and which patch carried each
 * decided change. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "report/report-internal.h"
#include "report/report.h"
#include "util/json_get.h"

/* A number cell (with its sign when signed), or a dash for null. */
static void num_cell(struct html_buf *o, json_object *c, const char *key, bool signed_)
{
	double v = 0;
	html_buf_puts(o, "<td class=\"num\">");
	if (json_member_number(c, key, &v))
		html_buf_printf(o, signed_ ? "%+.3g" : "%.3g", v);
	else
		html_buf_puts(o, "&ndash;");
	html_buf_puts(o, "</td>");
}

void report_section_attribution(struct html_buf *o, struct report_ctx *c)
{
	json_object *a = c->m->attribution;
	json_object *steps = json_member_array(a, "steps");
	json_object *by = json_member_array(a, "carried_by");
	double builds = 0, boots = 0;

	if (!a)
		return;
	json_member_number(a, "builds", &builds);
	json_member_number(a, "boots", &boots);
	html_buf_puts(o, "<section id=\"attribution\">\n<h2>What each patch did</h2>\n<p>");
	for (size_t i = 0; by && i < json_object_array_length(by) && i < 64; i++) {
		json_object *e = json_object_array_get_idx(by, i);
		double k = 0;
		json_member_number(e, "patches", &k);
		report_put_str_or_dash(o, json_member_string(e, "workload"));
		html_buf_puts(o, " ");
		report_put_str_or_dash(o, json_member_string(e, "metric"));
		html_buf_puts(o, ": ");
		report_put_str_or_dash(o, json_member_string(e, "verdict"));
		html_buf_printf(o, " by patch %.0f (<code>", k);
		report_put_str_or_dash(o, json_member_string(e, "commit")
					      ? json_member_string(e, "commit")
					      : json_member_string(e, "last_patch"));
		html_buf_puts(o, "</code>). ");
	}
	if (!by || json_object_array_length(by) == 0)
		html_buf_puts(o, "No patch's own change in a gated metric was decided. ");
	if (json_member_string(a, "status") &&
	    strcmp(json_member_string(a, "status"), "error") == 0)
		html_buf_puts(o, "<b>Incomplete: a step ended in an error.</b> ");
	html_buf_printf(o,
			"%.0f kernel build(s), %.0f boot(s). Each patch's own change is its "
			"prefix's runs against the prefix before it (medians, 95%% interval of "
			"the difference); the prefix's verdict is against the base.</p>\n"
			"<table>\n<tr><th class=\"num\">patch</th><th>adds</th><th>prefix</th>"
			"<th>workload</th><th>metric</th><th class=\"num\">before</th>"
			"<th class=\"num\">with it</th><th class=\"num\">change</th>"
			"<th class=\"num\">95%% CI</th><th class=\"num\">p</th><th>own change</th>"
			"</tr>\n",
			builds, boots);
	for (size_t i = 0; steps && i < json_object_array_length(steps) && i < 200; i++) {
		json_object *s = json_object_array_get_idx(steps, i);
		json_object *added = json_member_array(s, "added");
		size_t rows = added ? json_object_array_length(added) : 0;
		double k = 0;
		json_member_number(s, "patches", &k);
		for (size_t j = 0; j < (rows ? rows : 1) && j < 32; j++) {
			json_object *e = rows ? json_object_array_get_idx(added, j) : NULL;
			html_buf_printf(o, "<tr><td class=\"num\">%.0f</td><td>", k);
			report_step_name(o, s);
			html_buf_puts(o, "</td><td>");
			report_badge(o, json_member_string(s, "verdict")
					    ? json_member_string(s, "verdict")
					    : "error");
			html_buf_puts(o, "</td><td>");
			report_put_str_or_dash(o, json_member_string(e, "workload"));
			html_buf_puts(o, "</td><td>");
			report_put_str_or_dash(o, json_member_string(e, "metric"));
			html_buf_puts(o, "</td>");
			num_cell(o, e, "from", false);
			num_cell(o, e, "to", false);
			num_cell(o, e, "change", true);
			json_object *ci = json_member_array(e, "ci95");
			double lo = 0, hi = 0;
			if (ci && json_object_array_length(ci) == 2) {
				lo = json_object_get_double(json_object_array_get_idx(ci, 0));
				hi = json_object_get_double(json_object_array_get_idx(ci, 1));
				html_buf_printf(o, "<td class=\"num\">[%.3g, %.3g]</td>", lo, hi);
			} else {
				html_buf_puts(o, "<td class=\"num\">&ndash;</td>");
			}
			num_cell(o, e, "p_value", false);
			html_buf_puts(o, "<td>");
			if (e)
				report_badge(o, json_member_string(e, "verdict")
						    ? json_member_string(e, "verdict")
						    : "inconclusive");
			html_buf_puts(o, "</td></tr>\n");
		}
	}
	html_buf_puts(o, "</table>\n</section>\n");
}
