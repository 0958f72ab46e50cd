/* The kernel bugs section of the job report: one row per signature
 * (docs/kernel-bugs.md) with its kind, title, file:line, runs per variant,
 * whether it fails the job, and its first excerpt. */
#include <string.h>

#include "report/report-internal.h"
#include "util/json_get.h"

#define REPORT_MAX_SIGNATURES 64

void report_section_signatures(struct html_buf *o, struct report_ctx *c)
{
	size_t n = c->m->n_signatures;
	if (n == 0)
		return; /* results from before signatures, and clean jobs */
	html_buf_puts(o, "<section id=\"kernel-bugs\">\n<h2>Kernel bugs</h2>\n<table>\n<tr>"
			 "<th>kind</th><th>signature</th><th>where</th><th>runs</th>"
			 "<th>gate</th></tr>\n");
	for (size_t i = 0; i < n && i < REPORT_MAX_SIGNATURES; i++) {
		const struct model_signature *s = &c->m->signatures[i];
		bool fails = s->new_in && json_object_array_length(s->new_in) > 0;
		html_buf_puts(o, "<tr><td>");
		report_put_str_or_dash(o, s->kind);
		html_buf_puts(o, "</td><td>");
		report_put_str_or_dash(o, s->title);
		html_buf_puts(o, "</td><td>");
		report_put_str_or_dash(o, s->location);
		html_buf_puts(o, "</td><td>");
		json_object *per = s->variants;
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
		const struct model_signature *s = &c->m->signatures[i];
		html_buf_puts(o, "<h3>");
		report_put_str_or_dash(o, s->title);
		html_buf_puts(o, "</h3>\n<p>First seen in ");
		report_put_str_or_dash(o, s->first.key);
		html_buf_puts(o, "</p>\n");
		report_put_pre(o, s->first.excerpt);
	}
	html_buf_puts(o, "</section>\n");
}
