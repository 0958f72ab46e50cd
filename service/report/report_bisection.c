/* The bisection section of the per-job report: result.bisection (schedlab
 * test --bisect), one row per step and the answer. */
#include <stdio.h>
#include <string.h>

#include "report/report-internal.h"
#include "report/report.h"
#include "util/json_get.h"

void report_step_name(struct html_buf *o, json_object *s)
{
	html_buf_puts(o, "<code>");
	if (json_member_string(s, "commit")) {
		char shortc[13];
		snprintf(shortc, sizeof(shortc), "%s", json_member_string(s, "commit"));
		html_buf_escape(o, shortc);
		html_buf_puts(o, "</code> ");
		report_put_str_or_dash(o, json_member_string(s, "subject"));
	} else {
		report_put_str_or_dash(o, json_member_string(s, "last_patch"));
		html_buf_puts(o, "</code>");
	}
}

void report_section_bisection(struct html_buf *o, struct report_ctx *c)
{
	json_object *b = c->m->bisection;
	json_object *steps = json_member_array(b, "steps");
	double first = 0, total = 0, builds = 0, boots = 0;
	json_object *certain = json_member(b, "certain");

	if (!b)
		return;
	json_member_number(b, "first_bad", &first);
	json_member_number(b, "patches", &total);
	json_member_number(b, "builds", &builds);
	json_member_number(b, "boots", &boots);
	html_buf_puts(o, "<section id=\"bisection\">\n<h2>Which patch did it</h2>\n<p>");
	if (json_member_string(b, "status") &&
	    strcmp(json_member_string(b, "status"), "found") == 0 &&
	    json_member_string(b, "first_bad_commit")) {
		/* a commit range (schedlab test --range): the commit by hash and subject */
		html_buf_printf(o, "The first failing commit is %.0f of %.0f: <code>", first,
				total);
		html_buf_escape(o, json_member_string(b, "first_bad_commit"));
		html_buf_puts(o, "</code> ");
		report_put_str_or_dash(o, json_member_string(b, "first_bad_subject"));
		if (!json_object_is_type(certain, json_type_boolean) ||
		    !json_object_get_boolean(certain))
			html_buf_puts(o, " <b>(uncertain: a step stayed inconclusive and was "
					 "counted good)</b>");
		html_buf_puts(o, ".");
	} else if (json_member_string(b, "status") &&
		   strcmp(json_member_string(b, "status"), "found") == 0) {
		html_buf_printf(o, "The first failing prefix ends at patch %.0f of %.0f: <code>",
				first, total);
		report_put_str_or_dash(o, json_member_string(b, "first_bad_patch"));
		html_buf_puts(o, "</code>");
		if (!json_object_is_type(certain, json_type_boolean) ||
		    !json_object_get_boolean(certain))
			html_buf_puts(o, " <b>(uncertain: a step stayed inconclusive and was "
					 "counted good)</b>");
		html_buf_puts(o, ".");
	} else {
		html_buf_puts(o, "No answer: a step ended in an error.");
	}
	html_buf_printf(o,
			" %.0f kernel build(s), %.0f boot(s); the base's runs were reused.</p>\n"
			"<table>\n<tr><th class=\"num\">patches</th><th>up to</th><th>verdict</th>"
			"<th class=\"num\">boots</th><th class=\"num\">reused runs</th>"
			"<th>decided by</th></tr>\n",
			builds, boots);
	for (size_t i = 0; steps && i < json_object_array_length(steps) && i < 64; i++) {
		json_object *s = json_object_array_get_idx(steps, i);
		json_object *why = json_member_array(s, "decided_by");
		double k = 0, sb = 0, reused = 0;
		json_member_number(s, "patches", &k);
		json_member_number(s, "boots", &sb);
		json_member_number(s, "reused_runs", &reused);
		html_buf_printf(o, "<tr><td class=\"num\">%.0f</td><td>", k);
		report_step_name(o, s);
		html_buf_puts(o, "</td><td>");
		report_badge(o, json_member_string(s, "verdict") ? json_member_string(s, "verdict")
								 : "error");
		html_buf_printf(o,
				"</td><td class=\"num\">%.0f</td><td class=\"num\">%.0f</td><td>",
				sb, reused);
		for (size_t j = 0; why && j < json_object_array_length(why) && j < 8; j++) {
			if (j)
				html_buf_puts(o, "<br>");
			html_buf_escape(o,
					json_object_get_string(json_object_array_get_idx(why, j)));
		}
		html_buf_puts(o, "</td></tr>\n");
	}
	html_buf_puts(o, "</table>\n</section>\n");
}
