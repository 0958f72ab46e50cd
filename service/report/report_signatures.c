/* The kernel bugs section of the job report: one row per signature
 * (docs/kernel-bugs.md) with its kind, title, file:line, runs per variant,
 * whether it fails the job, and its first excerpt. */
#include <string.h>

#include "report/report-internal.h"
#include "util/json_get.h"

#define REPORT_MAX_SIGNATURES 64

void report_section_signatures(struct html_buf *o, struct report_ctx *c)
{
	json_object *sigs = c->m->signatures;
	size_t n = sigs ? json_object_array_length(sigs) : 0;
	if (n == 0)
		return; /* results from before signatures, and clean jobs */
	html_buf_puts(o, "<section id=\"kernel-bugs\">\n<h2>Kernel bugs</h2>\n<table>\n<tr>"
			 "<th>kind</th><th>signature</th><th>where</th><th>runs</th>"
			 "<th>gate</th></tr>\n");
	for (size_t i = 0; i < n && i < REPORT_MAX_SIGNATURES; i++) {
		json_object *s = json_object_array_get_idx(sigs, i);
		json_object *new_in = json_member_array(s, "new_in");
		bool fails = new_in && json_object_array_length(new_in) > 0;
		html_buf_puts(o, "<tr><td>");
		report_put_str_or_dash(o, json_member_string(s, "kind"));
		html_buf_puts(o, "</td><td>");
		report_put_str_or_dash(o, json_member_string(s, "title"));
		html_buf_puts(o, "</td><td>");
		report_put_str_or_dash(o, json_member_string(s, "location"));
		html_buf_puts(o, "</td><td>");
		json_object *per = json_member_object(s, "variants");
		bool first = true;
		if (per) {
			json_object_object_foreach(per, vname, count)
			{
				html_buf_puts(o, first ? "" : ", ");
				html_buf_escape(o, vname);
				html_buf_printf(o, " %d", json_object_get_int(count));
				first = false;
			}
		}
		html_buf_puts(o, "</td><td>");
		report_badge(o, fails ? "fail" : "pass");
		html_buf_puts(o, fails ? " new against the baseline" : " in the baseline too");
		html_buf_puts(o, "</td></tr>\n");
	}
	html_buf_puts(o, "</table>\n");
	for (size_t i = 0; i < n && i < REPORT_MAX_SIGNATURES; i++) {
		json_object *s = json_object_array_get_idx(sigs, i);
		json_object *first = json_member_object(s, "first");
		html_buf_puts(o, "<h3>");
		report_put_str_or_dash(o, json_member_string(s, "title"));
		html_buf_puts(o, "</h3>\n<p>First seen in ");
		report_put_str_or_dash(o, json_member_string(first, "key"));
		html_buf_puts(o, "</p>\n");
		report_put_pre(o, json_member_string(first, "excerpt"));
	}
	html_buf_puts(o, "</section>\n");
}
