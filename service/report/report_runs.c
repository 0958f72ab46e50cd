/* The runs of the job report: one table row per run, and the failed runs
 * with their reason, kernel events and console excerpt. */
#include <string.h>

#include "report/report-internal.h"
#include "util/json_get.h"

static bool run_failed(const struct model_run *run)
{
	if (strcmp(run->status, "ok") != 0)
		return true;
	for (size_t i = 0; i < run->n_workloads; i++)
		if (strcmp(run->workloads[i].status, "ok") != 0)
			return true;
	return false;
}

void report_section_runs(struct html_buf *o, struct report_ctx *c)
{
	char n[HTML_NUM_MAX];

	html_buf_puts(o, "<section id=\"runs\">\n<h2>Runs</h2>\n<table>\n<tr><th>run</th>"
			 "<th>status</th><th>host</th><th>accelerator</th><th>started</th>"
			 "<th class=\"num\">boot</th><th class=\"num\">duration</th>"
			 "<th class=\"num\" title=\"share of the run its vCPUs waited for a host "
			 "CPU\">vCPU wait</th><th>workloads</th></tr>\n");
	for (size_t i = 0; i < c->n_names; i++) {
		const struct model_variant *v = c->vars[i];
		for (size_t j = 0; j < v->n_runs && j < REPORT_MAX_RUNS; j++) {
			const struct model_run *run = &v->runs[j];
			double d;

			html_buf_puts(o, "<tr><td>");
			report_put_str_or_dash(o, run->key);
			html_buf_puts(o, "</td><td>");
			report_badge(o, run->status);
			/* the variant's sched_ext scheduler as the run read it back */
			json_object *scx = run->sched_ext;
			if (scx) {
				html_buf_puts(o, " <span class=\"scx\">");
				report_put_str_or_dash(o, json_member_string(scx, "scheduler"));
				html_buf_puts(o, ": ");
				report_put_str_or_dash(o, json_member_string(scx, "state"));
				html_buf_puts(o, " / ");
				report_put_str_or_dash(o, json_member_string(scx, "ops"));
				if (json_member_string(scx, "exit_reason") &&
				    strcmp(run->status, "sched_ext_failed") == 0) {
					html_buf_puts(o, "; exit: ");
					report_put_str_or_dash(
					    o, json_member_string(scx, "exit_reason"));
				}
				html_buf_puts(o, "</span>");
			}
			html_buf_puts(o, "</td><td>");
			report_put_str_or_dash(o, run->host);
			/* docs/guests.md "Pinning": where a pinned guest ran */
			json_object *pin = run->pinning;
			json_object *pv = json_member_array(pin, "vcpus");
			if (json_object_get_boolean(json_member(pin, "pinned")) && pv) {
				html_buf_puts(o, "<br><span class=\"pin\">vCPUs on host CPU");
				for (size_t k = 0; k < json_object_array_length(pv) && k < 64; k++)
					html_buf_printf(
					    o, "%s%d", k ? "," : " ",
					    json_object_get_int(json_object_array_get_idx(pv, k)));
				html_buf_puts(o, ", emulator on ");
				report_put_str_or_dash(o, json_member_string(pin, "emulator"));
				html_buf_puts(o, "</span>");
			}
			html_buf_puts(o, "</td><td>");
			report_put_str_or_dash(o, run->accelerator);
			html_buf_puts(o, "</td><td>");
			report_put_str_or_dash(o, run->started_at);
			html_buf_puts(o, "</td><td class=\"num\">");
			if (report_run_num(run, "boot_seconds", run->boot_seconds, &d))
				html_buf_printf(o, "%s s", html_fmt_fixed(d, 1, n));
			html_buf_puts(o, "</td><td class=\"num\">");
			if (report_run_num(run, "duration_seconds", run->duration_seconds, &d))
				html_buf_printf(o, "%s s", html_fmt_fixed(d, 1, n));
			html_buf_puts(o, "</td><td class=\"num\">");
			if (json_member_number(run->host_interference, "vcpu_wait_pct", &d))
				html_buf_printf(o, "%s %%", html_fmt_fixed(d, 1, n));
			if (run->noisy) {
				html_buf_puts(o, " ");
				report_badge(o, "noisy");
			}
			html_buf_puts(o, "</td><td>");
			for (size_t k = 0; k < run->n_workloads && k < 32; k++) {
				const struct model_workload *w = &run->workloads[k];
				const char *ws = w->status;
				if (k)
					html_buf_puts(o, ", ");
				report_put_str_or_dash(o, w->name);
				if (strcmp(ws, "ok") != 0) {
					html_buf_puts(o, " ");
					report_badge(o, ws);
				}
			}
			html_buf_puts(o, "</td></tr>\n");
		}
	}
	html_buf_puts(o, "</table>\n</section>\n");
}

void report_put_pre(struct html_buf *o, const char *text)
{
	size_t len = strlen(text);

	html_buf_puts(o, "<pre>");
	if (len > REPORT_MAX_CONSOLE) {
		/* The end of a console is where the failure is. */
		const char *start = text + len - REPORT_MAX_CONSOLE;
		while (((unsigned char)*start & 0xc0) == 0x80)
			start++;
		html_buf_printf(o, "[%zu earlier bytes not shown]\n", (size_t)(start - text));
		html_buf_escape(o, start);
	} else {
		html_buf_escape(o, text);
	}
	html_buf_puts(o, "</pre>\n");
}

/* A failed run's kernel events: kind, headline or console line, excerpt. */
static void put_kernel_events(struct html_buf *o, const struct model_run *run)
{
	if (run->n_kernel_events == 0)
		return;
	html_buf_printf(o, "<p>Kernel events (%zu):</p>\n<ul>\n", run->n_kernel_events);
	for (size_t k = 0; k < run->n_kernel_events && k < REPORT_MAX_EVENTS; k++) {
		const struct model_kernel_event *ev = &run->kernel_events[k];
		html_buf_puts(o, "<li><b>");
		report_put_str_or_dash(o, ev->kind);
		html_buf_puts(o, "</b>");
		if (json_object_is_type(ev->line, json_type_string)) {
			html_buf_puts(o, ": <code>");
			html_buf_escape(o, json_object_get_string(ev->line));
			html_buf_puts(o, "</code>");
		} else if (report_is_number(ev->line)) {
			html_buf_printf(o, " at console line %.0f",
					json_object_get_double(ev->line));
		}
		if (ev->excerpt) {
			html_buf_puts(o, "\n");
			report_put_pre(o, ev->excerpt);
		}
		html_buf_puts(o, "</li>\n");
	}
	html_buf_puts(o, "</ul>\n");
}

void report_section_failed(struct html_buf *o, struct report_ctx *c)
{
	size_t failed = 0;

	html_buf_puts(o, "<section id=\"failed-runs\">\n<h2>Failed runs</h2>\n");
	for (size_t i = 0; i < c->n_names; i++) {
		const struct model_variant *v = c->vars[i];
		for (size_t j = 0; j < v->n_runs && j < REPORT_MAX_RUNS; j++) {
			const struct model_run *run = &v->runs[j];
			const char *reason = run->reason;
			const char *console = run->console_excerpt;

			if (!run_failed(run))
				continue;
			failed++;
			html_buf_puts(o, "<div class=\"run\">\n<h3>");
			report_put_str_or_dash(o, run->key);
			html_buf_puts(o, " ");
			report_badge(o, run->status);
			html_buf_puts(o, "</h3>\n");
			if (reason) {
				html_buf_puts(o, "<p>");
				html_buf_escape(o, reason);
				html_buf_puts(o, "</p>\n");
			}
			for (size_t k = 0; k < run->n_workloads && k < 32; k++) {
				const struct model_workload *w = &run->workloads[k];
				if (strcmp(w->status, "ok") == 0)
					continue;
				html_buf_puts(o, "<p>Workload \xe2\x80\x98");
				report_put_str_or_dash(o, w->name);
				html_buf_puts(o, "\xe2\x80\x99 ");
				report_badge(o, w->status);
				if (model_has(MODEL_WORKLOAD, &w->has, "exit_code"))
					html_buf_printf(o, " exit code %.0f", (double)w->exit_code);
				if (w->reason) {
					html_buf_puts(o, ": ");
					html_buf_escape(o, w->reason);
				}
				html_buf_puts(o, "</p>\n");
			}
			put_kernel_events(o, run);
			if (console) {
				html_buf_puts(o, "<p>Console (last lines):</p>\n");
				report_put_pre(o, console);
			}
			html_buf_puts(o, "</div>\n");
		}
	}
	if (failed == 0)
		html_buf_puts(o, "<p>Every run and every workload in it finished ok.</p>\n");
	html_buf_puts(o, "</section>\n");
}
