/* The job report's "Host interference" section: every run's vCPU wait as a
 * strip per variant (clean runs and noisy ones apart, the job's noise limit
 * as a line), which noisy runs were left out, and the A/A calibration the
 * thresholds came from (docs/statistics.md, "Host interference" and "A/A
 * calibration"). */
#include <string.h>

#include "report/report-internal.h"
#include "util/json_get.h"

/* Whether the job left noisy runs out: its noise_policy, "exclude" unless
 * it says otherwise. */
static bool excludes_noisy(struct report_ctx *c)
{
	const char *p = json_member_string(c->m->repeats, "noise_policy");
	if (!p)
		p = json_member_string(c->m->job, "noise_policy");
	return !p || strcmp(p, "exclude") == 0;
}

static void strip_plot(struct html_buf *o, struct report_ctx *c, bool exclude)
{
	_cleanup_svg_plot_ struct svg_plot *p = svg_plot_new(CHART_WIDTH, CHART_HEIGHT);
	const char *cats[REPORT_MAX_VARIANTS];
	size_t n_runs = 0, n_noisy = 0;
	double limit;
	char num[HTML_NUM_MAX];

	for (size_t i = 0; i < c->n_names; i++)
		cats[i] = c->names[i];
	svg_plot_title(p, "vCPU wait for a host CPU, per run");
	svg_plot_y_axis(p, SVG_LINEAR, "share of the run (%)");
	svg_plot_x_categories(p, cats, c->n_names);
	svg_plot_y_include(p, 0);
	int clean = svg_plot_add_series(p, "clean runs", 2, false);
	int noisy = svg_plot_add_series(p, exclude ? "noisy runs (left out)" : "noisy runs (kept)",
					5, false);
	for (size_t i = 0; i < c->n_names; i++) {
		const struct model_variant *v = c->vars[i];
		struct charts_values vc = {0}, vn = {0};
		for (size_t j = 0; j < v->n_runs && j < REPORT_MAX_RUNS; j++) {
			const struct model_run *run = &v->runs[j];
			double d;
			if (!json_member_number(run->host_interference, "vcpu_wait_pct", &d))
				continue;
			bool is_noisy = run->noisy;
			charts_values_push(is_noisy ? &vn : &vc, d);
			n_runs++;
			n_noisy += is_noisy;
		}
		if (vc.n && clean >= 0)
			svg_plot_strip(p, clean, i, vc.v, vc.n);
		if (vn.n && noisy >= 0)
			svg_plot_strip(p, noisy, i, vn.v, vn.n);
		charts_values_done(&vc);
		charts_values_done(&vn);
	}
	if (n_runs == 0) {
		html_buf_puts(o, "<p>No run measured its vCPU wait (results written before "
				 "schedlab measured host interference).</p>\n");
		return;
	}
	bool have_limit = json_member_number(c->m->repeats, "noise_limit_pct", &limit) ||
			  json_member_number(c->m->job, "noise_limit_pct", &limit);
	if (have_limit) {
		char label[64];
		snprintf(label, sizeof(label), "noise limit %s %%", html_fmt_value(limit, num));
		svg_plot_y_include(p, limit);
		svg_plot_hline(p, -1, limit, label);
	}
	html_buf_printf(o,
			"<figure id=\"interference-strip\" data-runs=\"%zu\" data-noisy=\"%zu\">\n",
			n_runs, n_noisy);
	svg_plot_render_to(p, o);
	html_buf_printf(o,
			"<figcaption>Each point is one run: the share of its wall time its "
			"vCPUs waited, runnable, for a host CPU (libvirt's vcpu.N.delay). "
			"%zu of %zu run(s) were noisy%s.</figcaption>\n</figure>\n",
			n_noisy, n_runs,
			n_noisy == 0 ? ""
			: exclude    ? " and left out of the comparisons (noise_policy exclude)"
				     : " and counted (noise_policy keep or fail)");
	json_object *rep = c->m->repeats;
	const char *src = json_member_string(rep, "noise_limit_source");
	double aa;
	if (have_limit && src && strcmp(src, "calibration") == 0 &&
	    json_member_number(rep, "calibration_vcpu_wait_pct_p90", &aa))
		html_buf_printf(o,
				"<p id=\"noise-limit\" data-source=\"calibration\">The noise limit "
				"came from this host's A/A calibration: 9 in 10 of its runs waited "
				"at most %s %% (docs/statistics.md, \"Host interference\").</p>\n",
				html_fmt_value(aa, num));
	else if (have_limit && src)
		html_buf_printf(
		    o, "<p id=\"noise-limit\" data-source=\"%s\">The noise limit is %s.</p>\n",
		    strcmp(src, "job") == 0 ? "job" : "default",
		    strcmp(src, "job") == 0 ? "the job's own noise_limit_pct"
					    : "the default (no A/A calibration of this "
					      "host gave one)");
}

static void calibration_table(struct html_buf *o, struct report_ctx *c)
{
	json_object *cal = c->m->calibration;
	size_t n = cal ? json_object_array_length(cal) : 0;

	if (n == 0) {
		html_buf_puts(o, "<p id=\"calibration\">No A/A calibration matched this host, "
				 "kernel and workloads: the thresholds are the metrics' defaults "
				 "(<code>schedlab calibrate</code> measures one).</p>\n");
		return;
	}
	html_buf_puts(o, "<h3 id=\"calibration\">A/A calibration used</h3>\n<p>Metrics without a "
			 "gate threshold used max(default, multiple &times; A/A spread).</p>\n"
			 "<table>\n<tr><th>workload</th><th>calibration</th><th>made at</th>"
			 "<th class=\"num\">boots</th><th>host</th><th>metrics</th></tr>\n");
	for (size_t i = 0; i < n && i < 64; i++) {
		json_object *e = json_object_array_get_idx(cal, i);
		json_object *host = json_member(e, "host");
		json_object *spreads = json_member_object(e, "spreads");
		const char *key = json_member_string(e, "key");
		double boots;
		html_buf_puts(o, "<tr><td>");
		report_put_str_or_dash(o, json_member_string(e, "workload"));
		html_buf_puts(o, "</td><td><code>");
		if (key)
			html_buf_printf(o, "%.12s", key);
		html_buf_puts(o, "</code></td><td>");
		report_put_str_or_dash(o, json_member_string(e, "made_at"));
		html_buf_puts(o, "</td><td class=\"num\">");
		if (json_member_number(e, "boots", &boots))
			html_buf_printf(o, "%.0f", boots);
		html_buf_puts(o, "</td><td>");
		report_put_str_or_dash(o, json_member_string(host, "hostname"));
		html_buf_puts(o, ", ");
		report_put_str_or_dash(o, json_member_string(host, "cpu_model"));
		html_buf_puts(o, ", ");
		report_put_str_or_dash(o, json_member_string(host, "accel"));
		html_buf_printf(o, "</td><td class=\"num\">%d</td></tr>\n",
				spreads ? json_object_object_length(spreads) : 0);
	}
	html_buf_puts(o, "</table>\n");
}

void report_section_interference(struct html_buf *o, struct report_ctx *c)
{
	html_buf_puts(o, "<section id=\"interference\">\n<h2>Host interference</h2>\n");
	strip_plot(o, c, excludes_noisy(c));
	calibration_table(o, c);
	html_buf_puts(o, "</section>\n");
}
