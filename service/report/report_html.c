/* The per-job HTML report, report_html(): header with the verdict, kernels,
 * environment and variants here; the comparison table (report_compare.c),
 * per-workload charts (charts_<tool>.c), the runs and the failed runs with
 * their console (report_runs.c) from their own files. */
#include <errno.h>
#include <string.h>

#include "report/report-internal.h"
#include "util/json_get.h"

/* A short form of a hex digest: its first 12 characters, escaped. */
static void put_short_hash(struct html_buf *o, const char *hex)
{
	if (!hex) {
		html_buf_puts(o, "\xe2\x80\x93");
		return;
	}
	html_buf_puts(o, "<code title=\"");
	html_buf_escape(o, hex);
	html_buf_puts(o, "\">");
	html_buf_escape_n(o, hex, strnlen(hex, 12));
	html_buf_puts(o, "</code>");
}

/* The distinct run hosts, in run order. */
static size_t collect_hosts(const struct report_ctx *c, const char **hosts, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < c->n_names; i++) {
		const struct model_variant *v = c->vars[i];
		for (size_t j = 0; j < v->n_runs && j < REPORT_MAX_RUNS; j++) {
			const char *h = v->runs[j].host;
			bool seen = false;
			if (!h)
				continue;
			for (size_t k = 0; k < n; k++)
				seen = seen || strcmp(hosts[k], h) == 0;
			if (!seen && n < max)
				hosts[n++] = h;
		}
	}
	return n;
}

/* The provenance at a glance: each kernel (source, version, patch count,
 * config hash), the accelerator and the hosts. The sections below have the
 * details. */
static void header_facts(struct html_buf *o, struct report_ctx *c)
{
	json_object *kernels = c->m->kernels;
	const char *accel = json_member_string(c->m->environment, "accelerator");
	const char *hosts[8];
	size_t n_hosts = collect_hosts(c, hosts, ELEMENTSOF(hosts)), shown = 0;

	if (kernels && json_object_is_type(kernels, json_type_object)) {
		json_object_object_foreach(kernels, kname, k)
		{
			json_object *patches = json_member_array(k, "patches");
			size_t np = patches ? json_object_array_length(patches) : 0;
			if (shown++ >= 4)
				break;
			html_buf_puts(o, "<p class=\"meta\">kernel <b>");
			html_buf_escape(o, kname);
			html_buf_puts(o, "</b>: ");
			report_put_str_or_dash(o, json_member_string(k, "source"));
			html_buf_puts(o, " ");
			report_put_str_or_dash(o, json_member_string(k, "source_version"));
			html_buf_printf(o, " + %zu patch%s \xc2\xb7 config ", np,
					np == 1 ? "" : "es");
			put_short_hash(o, json_member_string(k, "config_sha256"));
			/* A debug kernel's timings measure its checks too
			 * (docs/kernel-bugs.md, "The debug variant"). */
			if (json_member_string(k, "debug")) {
				html_buf_puts(o, " \xc2\xb7 <b>debug build (");
				html_buf_escape(o, json_member_string(k, "debug"));
				html_buf_puts(o,
					      ")</b>: its timings include the debug checks, not a "
					      "production kernel's figures");
			}
			html_buf_puts(o, "</p>\n");
		}
	}
	html_buf_puts(o, "<p class=\"meta\">accelerator <b>");
	report_put_str_or_dash(o, accel);
	html_buf_puts(o, "</b>");
	if (accel && strcmp(accel, "tcg") == 0)
		html_buf_puts(o, " (software emulation: absolute latencies are inflated; compare "
				 "variants within this job)");
	html_buf_puts(o, n_hosts == 1 ? " \xc2\xb7 host " : " \xc2\xb7 hosts ");
	for (size_t i = 0; i < n_hosts; i++) {
		if (i)
			html_buf_puts(o, ", ");
		html_buf_escape(o, hosts[i]);
	}
	if (n_hosts == 0)
		html_buf_puts(o, "\xe2\x80\x93");
	html_buf_puts(o, "</p>\n");
}

static void section_header(struct html_buf *o, struct report_ctx *c)
{
	json_object *job = c->m->job;
	const char *name = json_member_string(job, "name");
	const char *verdict = c->m->verdict;
	const char *desc = json_member_string(job, "description");
	const char *started = c->m->started_at;
	const char *finished = c->m->finished_at;
	json_object *reasons = c->m->verdict_reasons;

	html_buf_puts(o, "<header class=\"top\" id=\"verdict\">\n<div class=\"badge big v-");
	html_buf_puts(o, verdict && (strcmp(verdict, "pass") == 0 || strcmp(verdict, "fail") == 0 ||
				     strcmp(verdict, "inconclusive") == 0)
			     ? verdict
			     : "unknown");
	html_buf_puts(o, "\">");
	if (verdict) {
		for (const char *s = verdict; *s; s++) {
			char u = (*s >= 'a' && *s <= 'z') ? (char)(*s - 'a' + 'A') : *s;
			html_buf_escape_n(o, &u, 1);
		}
	} else {
		html_buf_puts(o, "NO VERDICT");
	}
	html_buf_puts(o, "</div>\n<div>\n<h1>");
	report_put_str_or_dash(o, name);
	html_buf_puts(o, "</h1>\n");
	if (desc) {
		html_buf_puts(o, "<p class=\"desc\">");
		html_buf_escape(o, desc);
		html_buf_puts(o, "</p>\n");
	}
	html_buf_puts(o, "<p class=\"meta\">schedlab job report \xc2\xb7 started ");
	report_put_str_or_dash(o, started);
	html_buf_puts(o, " \xc2\xb7 finished ");
	report_put_str_or_dash(o, finished);
	html_buf_puts(o, "</p>\n");
	header_facts(o, c);
	html_buf_puts(o, "</div>\n</header>\n");
	if (reasons && json_object_array_length(reasons) > 0) {
		html_buf_puts(o, "<ul class=\"reasons\">\n");
		for (size_t i = 0; i < json_object_array_length(reasons) && i < 100; i++) {
			json_object *r = json_object_array_get_idx(reasons, i);
			if (!json_object_is_type(r, json_type_string))
				continue;
			html_buf_puts(o, "<li>");
			html_buf_escape(o, json_object_get_string(r));
			html_buf_puts(o, "</li>\n");
		}
		html_buf_puts(o, "</ul>\n");
	}
}

/* Contract A (docs/contracts.md): a kernel that did not build is a result.
 * One block per such kernel, first on the page after the verdict: its
 * status, the patch or option, the message and the log excerpt. */
static void section_build_failures(struct html_buf *o, struct report_ctx *c)
{
	json_object *kernels = c->m->kernels;
	size_t shown = 0;

	if (!kernels)
		return;
	json_object_object_foreach(kernels, kname, k)
	{
		json_object *b = json_member_object(k, "build");
		const char *status = json_member_string(b, "status");
		if (!b || (status && strcmp(status, "ok") == 0))
			continue;
		if (shown++ == 0)
			html_buf_puts(o,
				      "<section id=\"build-failures\">\n<h2>Kernels that did not "
				      "build</h2>\n");
		if (shown > 32)
			break;
		html_buf_puts(o, "<div class=\"run\">\n<h3>");
		html_buf_escape(o, kname);
		html_buf_puts(o, " ");
		report_badge(o, status ? status : "failed");
		html_buf_puts(o, "</h3>\n");
		if (json_member_string(b, "patch")) {
			html_buf_puts(o, "<p>patch <code>");
			html_buf_escape(o, json_member_string(b, "patch"));
			html_buf_puts(o, "</code></p>\n");
		}
		if (json_member_string(b, "option")) {
			html_buf_puts(o, "<p>option <code>");
			html_buf_escape(o, json_member_string(b, "option"));
			html_buf_puts(o, "</code></p>\n");
		}
		if (json_member_string(b, "message")) {
			html_buf_puts(o, "<p>");
			html_buf_escape(o, json_member_string(b, "message"));
			html_buf_puts(o, "</p>\n");
		}
		if (json_member_string(b, "log_excerpt"))
			report_put_pre(o, json_member_string(b, "log_excerpt"));
		html_buf_puts(o, "</div>\n");
	}
	if (shown)
		html_buf_puts(o, "</section>\n");
}

static void section_kernels(struct html_buf *o, struct report_ctx *c)
{
	json_object *kernels = c->m->kernels;
	size_t shown = 0;

	html_buf_puts(o, "<section id=\"kernels\">\n<h2>Kernels</h2>\n");
	if (!kernels || !json_object_is_type(kernels, json_type_object)) {
		html_buf_puts(o,
			      "<p class=\"muted\">The result lists no kernels.</p>\n</section>\n");
		return;
	}
	html_buf_puts(o, "<table>\n<tr><th>kernel</th><th>source</th><th>version</th>"
			 "<th>patches (sha256)</th><th>config sha256</th><th>compiler</th>"
			 "<th class=\"num\">build</th></tr>\n");
	json_object_object_foreach(kernels, kname, k)
	{
		json_object *patches = json_member_array(k, "patches");
		char n[HTML_NUM_MAX];
		double secs;
		json_object *cached = json_member(k, "cached");

		if (shown++ >= 32)
			break;
		html_buf_puts(o, "<tr><td><b>");
		html_buf_escape(o, kname);
		html_buf_puts(o, "</b></td><td>");
		report_put_str_or_dash(o, json_member_string(k, "source"));
		html_buf_puts(o, "</td><td>");
		report_put_str_or_dash(o, json_member_string(k, "source_version"));
		html_buf_puts(o, "</td><td>");
		if (!patches || json_object_array_length(patches) == 0)
			html_buf_puts(o, "<span class=\"muted\">none</span>");
		for (size_t i = 0; patches && i < json_object_array_length(patches); i++) {
			json_object *p = json_object_array_get_idx(patches, i);
			if (i == 60) {
				html_buf_printf(o, "<span class=\"muted\">and %zu more</span>",
						json_object_array_length(patches) - i);
				break;
			}
			html_buf_printf(o, "%zu. ", i + 1);
			report_put_str_or_dash(o, json_member_string(p, "name"));
			html_buf_puts(o, " ");
			put_short_hash(o, json_member_string(p, "sha256"));
			html_buf_puts(o, "<br>");
		}
		html_buf_puts(o, "</td><td>");
		put_short_hash(o, json_member_string(k, "config_sha256"));
		if (json_member_string(k, "debug")) {
			html_buf_puts(o, "<br><b>debug build: ");
			html_buf_escape(o, json_member_string(k, "debug"));
			html_buf_puts(o, "</b> ");
			put_short_hash(o, json_member_string(k, "debug_config_sha256"));
		}
		html_buf_puts(o, "</td><td>");
		report_put_str_or_dash(o, json_member_string(k, "compiler"));
		html_buf_puts(o, "</td><td class=\"num\">");
		if (json_member_number(k, "build_seconds", &secs))
			html_buf_printf(o, "%s s", html_fmt_fixed(secs, 1, n));
		if (cached && json_object_get_boolean(cached))
			html_buf_puts(o, " (cached)");
		const char *bst = json_member_string(json_member_object(k, "build"), "status");
		if (bst && strcmp(bst, "ok") != 0) {
			html_buf_puts(o, " ");
			report_badge(o, bst);
		}
		html_buf_puts(o, "</td></tr>\n");
	}
	html_buf_puts(o, "</table>\n</section>\n");
}

static void section_environment(struct html_buf *o, struct report_ctx *c)
{
	json_object *env = c->m->environment;
	const char *accel = json_member_string(env, "accelerator");
	const char *hosts[16];
	size_t n_hosts = 0;
	double cores;
	char n[HTML_NUM_MAX];
	static const struct {
		const char *key, *label;
	} rows[] = {
	    {"qemu_version", "QEMU"},
	    {"libvirt_version", "libvirt"},
	    {"host_kernel", "host kernel"},
	    {"schedlab_version", "schedlab"},
	};

	n_hosts = collect_hosts(c, hosts, ELEMENTSOF(hosts));
	html_buf_puts(o, "<section id=\"environment\">\n<h2>Environment</h2>\n<table>\n"
			 "<tr><th>accelerator</th><td>");
	report_put_str_or_dash(o, accel);
	html_buf_puts(o, "</td></tr>\n<tr><th>hosts</th><td>");
	for (size_t i = 0; i < n_hosts; i++) {
		if (i)
			html_buf_puts(o, ", ");
		html_buf_escape(o, hosts[i]);
	}
	if (n_hosts == 0)
		html_buf_puts(o, "\xe2\x80\x93");
	html_buf_puts(o, "</td></tr>\n<tr><th>host cores</th><td>");
	if (json_member_number(env, "host_cores", &cores))
		html_buf_puts(o, html_fmt_fixed(cores, 0, n));
	else
		html_buf_puts(o, "\xe2\x80\x93");
	html_buf_puts(o, "</td></tr>\n");
	for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
		html_buf_printf(o, "<tr><th>%s</th><td>", rows[i].label);
		report_put_str_or_dash(o, json_member_string(env, rows[i].key));
		html_buf_puts(o, "</td></tr>\n");
	}
	html_buf_puts(o, "</table>\n");
	if (accel && strcmp(accel, "tcg") == 0)
		html_buf_puts(o,
			      "<p class=\"note\">The guests ran under QEMU TCG (software "
			      "emulation). TCG inflates absolute latencies several times and makes "
			      "them noisier: compare the variants of this job with each other, not "
			      "with numbers from real hardware or other hosts.</p>\n");
	html_buf_puts(o, "</section>\n");
}

static void put_string_array(struct html_buf *o, json_object *a)
{
	size_t n = a && json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;

	if (n == 0) {
		html_buf_puts(o, "<span class=\"muted\">none</span>");
		return;
	}
	for (size_t i = 0; i < n && i < 64; i++) {
		json_object *s = json_object_array_get_idx(a, i);
		if (i)
			html_buf_puts(o, " ");
		html_buf_puts(o, "<code>");
		html_buf_escape(
		    o, json_object_is_type(s, json_type_string) ? json_object_get_string(s) : "?");
		html_buf_puts(o, "</code>");
	}
}

static void put_int_map(struct html_buf *o, json_object *m)
{
	size_t shown = 0;

	if (!m || !json_object_is_type(m, json_type_object) || json_object_object_length(m) == 0) {
		html_buf_puts(o, "\xe2\x80\x93");
		return;
	}
	json_object_object_foreach(m, k, v)
	{
		char n[HTML_NUM_MAX];
		if (shown++ >= 64)
			break;
		if (shown > 1)
			html_buf_puts(o, ", ");
		html_buf_escape(o, k);
		html_buf_puts(o, "=");
		if (json_object_is_type(v, json_type_int) ||
		    json_object_is_type(v, json_type_double))
			html_buf_puts(o, html_fmt_value(json_object_get_double(v), n));
		else
			html_buf_puts(o, "?");
	}
}

static void section_variants(struct html_buf *o, struct report_ctx *c)
{
	json_object *job_variants = json_member(c->m->job, "variants");

	html_buf_puts(o,
		      "<section id=\"variants\">\n<h2>Variants</h2>\n<table>\n<tr><th>variant</th>"
		      "<th>kernel</th><th>sched features</th><th>tunables</th>"
		      "<th>uid shares</th><th class=\"num\">runs ok</th></tr>\n");
	for (size_t i = 0; i < c->n_names; i++) {
		const struct model_variant *v = c->vars[i];
		json_object *spec = json_member(job_variants, c->names[i]);
		json_object *features = v->features;
		size_t total = v->n_runs, ok = 0;

		for (size_t j = 0; j < total; j++)
			ok += strcmp(v->runs[j].status, "ok") == 0;
		html_buf_printf(
		    o, "<tr><td><span class=\"badge\" style=\"background:%s\">&nbsp;</span> <b>",
		    svg_palette(report_variant_color(c, i)));
		html_buf_escape(o, c->names[i]);
		html_buf_puts(o, "</b>");
		if (c->baseline && strcmp(c->names[i], c->baseline) == 0)
			html_buf_puts(o, " <span class=\"tag\">baseline</span>");
		html_buf_puts(o, "</td><td>");
		report_put_str_or_dash(o, v->kernel);
		html_buf_puts(o, "</td><td>");
		put_string_array(o, features ? features : json_member_array(spec, "features"));
		html_buf_puts(o, "</td><td>");
		put_int_map(o, json_member(spec, "sched_tunables"));
		html_buf_puts(o, "</td><td>");
		put_int_map(o, json_member(spec, "uid_shares"));
		html_buf_printf(o, "</td><td class=\"num\">%zu / %zu", ok, total);
		if (json_object_is_type(v->not_built, json_type_boolean) &&
		    json_object_get_boolean(v->not_built)) {
			html_buf_puts(o, " ");
			report_badge(o, "not_built");
		}
		if (model_has(MODEL_VARIANT, &v->has, "skipped_runs") && v->skipped_runs > 0) {
			html_buf_printf(
			    o, "<br><span class=\"muted\">%.0f skipped: ", (double)v->skipped_runs);
			report_put_str_or_dash(o, v->skipped_reason);
			html_buf_puts(o, "</span>");
		}
		html_buf_puts(o, "</td></tr>\n");
	}
	html_buf_puts(o, "</table>\n</section>\n");
}

/* The job's workloads (name, tool), or those of the first run that has any. */
/* Charts of one workload (by its name in the job and its tool); appends a
 * <section> when there is anything to draw. Returns the charts drawn. */
static int workload_charts(struct html_buf *o, struct report_ctx *c, const char *workload,
			   const char *tool, bool load, const char *idle_twin)
{
	if (load)
		return charts_load(o, c, workload, tool);
	if (strcmp(tool, "cyclictest") == 0)
		return charts_cyclictest(o, c, workload, idle_twin);
	if (strcmp(tool, "rt-migrate-test") == 0)
		return charts_rtmigrate(o, c, workload);
	if (strcmp(tool, "share") == 0)
		return charts_share(o, c, workload);
	if (strcmp(tool, "slice") == 0)
		return charts_slice(o, c, workload);
	return 0;
}

/* The workloads to chart: the job's (name, tool, load), or those of the
 * first run that has any; at most 32. Returns how many. */
static size_t chart_workloads(const struct report_ctx *c, const char **names, const char **tools,
			      bool *loads)
{
	json_object *wls = json_member_array(c->m->job, "workloads");
	size_t n = 0;

	if (wls) {
		for (size_t i = 0; i < json_object_array_length(wls) && i < 32; i++) {
			json_object *w = json_object_array_get_idx(wls, i);
			json_object *lj = json_member(w, "load");
			names[n] = json_member_string(w, "name");
			tools[n] = json_member_string(w, "tool");
			loads[n++] = json_object_is_type(lj, json_type_boolean) &&
				     json_object_get_boolean(lj);
		}
		return n;
	}
	for (size_t i = 0; i < c->n_names; i++) {
		const struct model_variant *v = c->vars[i];
		for (size_t j = 0; j < v->n_runs; j++) {
			const struct model_run *run = &v->runs[j];
			/* a run record's "workloads" present, even empty, is
			 * the list, as the job's would be */
			if (!model_has(MODEL_RUN, &run->has, "workloads"))
				continue;
			for (size_t k = 0; k < run->n_workloads && k < 32; k++) {
				names[n] = run->workloads[k].name;
				tools[n] = run->workloads[k].tool;
				/* not in the schema: kept among the extra members */
				json_object *lj = json_member(run->workloads[k].extra, "load");
				loads[n++] = json_object_is_type(lj, json_type_boolean) &&
					     json_object_get_boolean(lj);
			}
			return n;
		}
	}
	return 0;
}

static int section_charts(struct html_buf *o, struct report_ctx *c)
{
	const char *names[32], *tools[32];
	bool loads[32];
	size_t n = chart_workloads(c, names, tools, loads);
	int charts = 0;

	/* the loads run beside the workloads listed after the first of them
	 * (docs/workloads.md "Loads"); a cyclictest there is drawn beside the
	 * first cyclictest listed before it, which ran idle */
	const char *idle_ct = NULL;
	bool loaded = false;
	for (size_t i = 0; i < n; i++) {
		const char *name = names[i], *tool = tools[i];
		bool load = loads[i];
		loaded |= load;
		if (name && tool && !loaded && !idle_ct && strcmp(tool, "cyclictest") == 0)
			idle_ct = name;
		if (name && tool)
			charts += workload_charts(o, c, name, tool, load, loaded ? idle_ct : NULL);
	}
	return charts;
}

int report_html(json_object *result, char **ret_html, struct sl_error *err)
{
	struct model_result m = {0};

	if (!result || !json_object_is_type(result, json_type_object))
		return error_set(err, ERR_INVALID, EINVAL, "The result is not a JSON object.");
	int r = model_result_parse(result, &m, err);
	if (r < 0)
		return r;
	r = report_html_model(&m, ret_html, err);
	model_result_free(&m);
	return r;
}

int report_html_model(const struct model_result *m, char **ret_html, struct sl_error *err)
{
	struct report_ctx c;
	_cleanup_html_buf_ struct html_buf *o = NULL;
	_cleanup_free_ char *title = NULL;
	const char *name;

	report_ctx_init(&c, m);
	name = json_member_string(m->job, "name");
	if (asprintf(&title, "schedlab: %.200s (%s)", name ? name : "unnamed job", m->verdict) < 0)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");

	o = html_buf_new();
	report_page_begin(o, title);
	section_header(o, &c);
	section_build_failures(o, &c);
	report_section_signatures(o, &c);
	report_section_bisection(o, &c);
	report_section_attribution(o, &c);
	report_section_comparisons(o, &c);
	report_section_schedstat(o, &c);
	section_charts(o, &c);
	section_variants(o, &c);
	section_kernels(o, &c);
	section_environment(o, &c);
	report_section_interference(o, &c);
	report_section_runs(o, &c);
	report_section_failed(o, &c);
	report_page_end(o);
	char *html = html_buf_steal(TAKE_PTR(o));
	if (!html)
		return error_set(err, ERR_INTERNAL, ENOMEM,
				 "Out of memory while writing the report.");
	*ret_html = html;
	return 0;
}
