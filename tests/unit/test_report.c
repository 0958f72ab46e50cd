/* The per-job report (section presence, chart count, escaping of every user
 * string in a hostile result, bad input) and the trend report (regressions
 * flagged once where they first appear, the window, store errors). Run from
 * tests/ (tests/run.sh does). */
#include <errno.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <sqlite3.h>
#include <cmocka.h>

#include "report/report.h"
#include "server/store.h"
#include "report/trend.h"
#include "server/store_trend.h"
#include "util/fs.h"
#include "helpers/result_fixture.h"

static json_object *load(const char *path)
{
	_cleanup_free_ char *text = NULL;
	struct sl_error err = {0};

	if (fs_read_file(path, 16 << 20, &text, NULL, &err) < 0)
		fail_msg("%s", err.message);
	json_object *o = json_tokener_parse(text);
	if (!o)
		fail_msg("'%s' is not JSON", path);
	return o;
}

static char *render(const char *path)
{
	_cleanup_json_ json_object *r = load(path);
	struct sl_error err = {0};
	char *html = NULL;

	if (report_html(r, &html, &err) < 0)
		fail_msg("report_html(%s): %s", path, err.message);
	return html;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* Every tag in the page is one the report writes, and no tag carries an
 * event handler or a URL attribute: user text cannot have become markup. */
static void assert_only_report_markup(const char *html)
{
	static const char *const allowed[] = {
	    "html",   "head",	  "meta",	"title", "style",   "body",    "main", "header",
	    "div",    "h1",	  "h2",		"h3",	 "p",	    "ul",      "li",   "section",
	    "table",  "tr",	  "th",		"td",	 "span",    "code",    "b",    "br",
	    "pre",    "figure",	  "figcaption", "svg",	 "rect",    "text",    "line", "path",
	    "circle", "polyline", "polygon",	"g",	 "details", "summary",
	};

	for (const char *p = html; (p = strchr(p, '<')); p++) {
		const char *q = p + 1, *end = strchr(p, '>');
		char name[32] = "";
		bool ok = false;

		assert_non_null(end);
		if (*q == '!')
			continue;
		if (*q == '/')
			q++;
		size_t n = strspn(q, "abcdefghijklmnopqrstuvwxyz0123456789");
		if (n == 0 || n >= sizeof(name))
			fail_msg("unexpected markup at byte %td: '%.40s'", p - html, p);
		memcpy(name, q, n);
		name[n] = '\0';
		for (size_t i = 0; i < ELEMENTSOF(allowed); i++)
			ok = ok || strcmp(name, allowed[i]) == 0;
		if (!ok)
			fail_msg("unexpected tag <%s> at byte %td: '%.60s'", name, p - html, p);
		for (const char *a = q; a < end; a++) {
			if ((a[0] == ' ' || a[0] == '/') && a[1] == 'o' && a[2] == 'n')
				fail_msg("event handler attribute in '%.*s'", (int)(end - p + 1),
					 p);
			if (strncmp(a, " src=", 5) == 0 || strncmp(a, " href=", 6) == 0 ||
			    strncmp(a, " data=", 6) == 0)
				fail_msg("URL attribute in '%.*s'", (int)(end - p + 1), p);
		}
	}
}

/* The page of result r (borrowed), checked to hold only the report's own
 * markup; the caller frees it. */
static char *render_result(json_object *r)
{
	struct sl_error err = {0};
	char *html = NULL;
	if (report_html(r, &html, &err) < 0)
		fail_msg("report_html: %s", err.message);
	assert_only_report_markup(html);
	return html;
}

static void test_sections(void **state)
{
	(void)state;
	_cleanup_free_ char *html = render("data/report/result.json");

	assert_only_report_markup(html);
	assert_non_null(strstr(html, "<!DOCTYPE html>"));
	assert_non_null(strstr(html, "Content-Security-Policy"));
	assert_null(strstr(html, "<script"));
	for (const char *const *id =
		 (const char *const[]){"verdict", "comparisons", "variants", "kernels",
				       "environment", "runs", "failed-runs", NULL};
	     *id; id++) {
		char needle[64];
		snprintf(needle, sizeof(needle), "id=\"%s\"", *id);
		if (!strstr(html, needle))
			fail_msg("section %s is missing", *id);
	}
	/* rt-migrate-test: start delay + inversions; cyclictest histogram;
	 * share; slice. */
	assert_int_equal(count(html, "<svg "), 5);
	assert_int_equal(count(html, "<figure id=\"chart-"), 5);
	assert_non_null(strstr(html, "data-tool=\"cyclictest\""));
	assert_non_null(strstr(html, "cyclictest latency histogram"));
	assert_non_null(strstr(html, "data-tool=\"share\""));
	assert_non_null(strstr(html, "expected fraction"));
	assert_non_null(strstr(html, "patched predicted 2000"));
	assert_non_null(strstr(html, "baseline p99 "));
	/* Header: verdict, kernel provenance, the TCG note. */
	assert_non_null(strstr(html, "v-fail\">FAIL</div>"));
	assert_non_null(strstr(html, "0001-sched-rt-add-RT_PUSH-feature.patch"));
	assert_non_null(strstr(html, ">9a0b1c2d3e4f</code>"));
	assert_non_null(strstr(html, ">0c1d2e3f4a5b</code>"));
	assert_non_null(strstr(html, "6.1.158"));
	assert_non_null(strstr(html, "TCG inflates absolute latencies"));
	/* Comparison table: gated rows with their badges. */
	assert_non_null(strstr(html, "<span class=\"tag\">gate</span>"));
	assert_non_null(strstr(html, "<span class=\"badge v-improved\">"));
	/* The failed run with its events and console, escaped in <pre>. */
	assert_non_null(strstr(html, "<span class=\"badge v-panic\">"));
	assert_non_null(strstr(html, "Kernel panic - not syncing"));
	assert_non_null(strstr(html, "[    6.104900]  &lt;TASK&gt;"));
}

/* Contract A (docs/contracts.md) and the thresholds: a hand-written result
 * with a kernel that did not build (its excerpt hostile), a not-built
 * variant, fail-fast skips, and a large change that is unchanged. */
static void test_build_failure_and_thresholds(void **state)
{
	(void)state;
	_cleanup_json_ json_object *r = json_tokener_parse(
	    "{\"schema\":\"schedlab.result/v1\",\"job\":{\"name\":\"ci\",\"baseline\":"
	    "\"baseline\",\"variants\":{}},"
	    "\"kernels\":{\"base\":{\"source\":\"debian:linux-source-6.1\",\"build\":"
	    "{\"status\":\"ok\"}},\"patched\":{\"source\":\"debian:linux-source-6.1\","
	    "\"build\":{\"status\":\"patch_does_not_apply\",\"message\":\"patch "
	    "0005-my.patch does not apply (hunk #1 FAILED at 1925 in kernel/sched/rt.c)\","
	    "\"patch\":\"0005-<b>my.patch\",\"log_excerpt\":\"Hunk #1 FAILED at 1925.\\n"
	    "</pre><script>alert(1)</script>\"}}},"
	    "\"variants\":{\"baseline\":{\"kernel\":\"base\",\"runs\":[{\"key\":"
	    "\"baseline#0\",\"status\":\"ok\"}],\"skipped_runs\":3,\"skipped_reason\":"
	    "\"run other#0 hung\"},\"patched\":{\"kernel\":\"patched\",\"not_built\":true,"
	    "\"runs\":[]},\"other\":{\"kernel\":\"base\",\"runs\":[{\"key\":\"other#0\","
	    "\"status\":\"ok\"}]}},"
	    "\"comparisons\":[{\"variant\":\"other\",\"workload\":\"rt-migrate-test\","
	    "\"metric\":\"inversion_max_us\",\"baseline\":{\"median\":24145,\"n\":5},"
	    "\"candidate\":{\"median\":0,\"n\":5},\"change\":-24145,\"ci95\":[-24864,"
	    "-4686],\"p_value\":0.008,\"alpha\":0.05,\"threshold\":6036,\"relative\":true,"
	    "\"gated\":false,\"verdict\":\"unchanged\"}],"
	    "\"verdict\":\"fail\",\"verdict_reasons\":[\"variant 'patched': kernel 'patched' "
	    "did not build (patch_does_not_apply): patch 0005-my.patch does not apply\"]}");
	assert_non_null(r);
	_cleanup_free_ char *html = NULL;
	struct sl_error err = {0};
	result_fixture_complete(r);
	if (report_html(r, &html, &err) < 0)
		fail_msg("%s", err.message);
	assert_only_report_markup(html);
	assert_null(strstr(html, "<script"));
	const char *sec = strstr(html, "<section id=\"build-failures\">");
	assert_non_null(sec);
	/* Right after the verdict, before the comparisons. */
	assert_true(sec < strstr(html, "id=\"comparisons\""));
	assert_non_null(strstr(sec, "<h3>patched <span class=\"badge v-patch_does_not_apply\">"));
	assert_non_null(strstr(sec, "<p>patch <code>0005-&lt;b&gt;my.patch</code></p>"));
	assert_non_null(strstr(sec, "<p>patch 0005-my.patch does not apply (hunk #1 FAILED at "
				    "1925 in kernel/sched/rt.c)</p>"));
	assert_non_null(strstr(sec, "<pre>Hunk #1 FAILED at 1925.\n&lt;/pre&gt;&lt;script&gt;"
				    "alert(1)&lt;/script&gt;</pre>"));
	/* Only the kernel that failed has a block. */
	assert_null(strstr(sec, "<h3>base"));
	/* The variants table: not built, and the fail-fast skips. */
	assert_non_null(strstr(html, "0 / 0 <span class=\"badge v-not_built\">"));
	assert_non_null(strstr(html, "3 skipped: run other#0 hung"));
	/* The threshold column, relative marked, and why -24145 is unchanged. */
	assert_non_null(strstr(html, "<th class=\"num\" title=\"the smallest change that "
				     "counts\">threshold</th>"));
	assert_non_null(strstr(html,
			       "<td class=\"num\" title=\"relative: a fraction of the baseline "
			       "median\">\xc2\xb1"
			       "6036</td>"));
	assert_non_null(strstr(html, "<span class=\"muted\">(CI reaches within "
				     "\xc2\xb1"
				     "6036)</span>"));
}

/* result.attribution: a section with the patch that carried each decided
 * change and one row per patch and gated metric, names escaped. */
static void test_attribution_section(void **state)
{
	(void)state;
	_cleanup_json_ json_object *r = load("data/result-example.json");
	json_object *a = json_tokener_parse(
	    "{\"status\":\"done\",\"patches\":2,\"builds\":1,\"boots\":5,\"steps\":["
	    "{\"patches\":1,\"last_patch\":\"0001-<a>.patch\",\"verdict\":\"pass\","
	    "\"comparisons\":[],\"added\":[{\"workload\":\"rtm\",\"metric\":\"inversions\","
	    "\"verdict\":\"unchanged\",\"change\":0,\"ci95\":[0,0],\"from\":0,\"to\":0}],"
	    "\"boots\":5},{\"patches\":2,\"last_patch\":\"0002-b.patch\",\"verdict\":"
	    "\"fail\",\"comparisons\":[],\"added\":[{\"workload\":\"rtm\",\"metric\":"
	    "\"inversions\",\"verdict\":\"regressed\",\"change\":7,\"ci95\":[5,9],"
	    "\"p_value\":0.008,\"from\":0,\"to\":7}],\"boots\":0}],\"carried_by\":[{"
	    "\"workload\":\"rtm\",\"metric\":\"inversions\",\"patches\":2,\"last_patch\":"
	    "\"0002-b.patch\",\"verdict\":\"regressed\"}]}");
	assert_non_null(a);
	json_object_object_add(r, "attribution", a);
	_cleanup_free_ char *html = render_result(r);
	const char *sec = strstr(html, "<section id=\"attribution\">");
	assert_non_null(sec);
	assert_non_null(strstr(sec, "rtm inversions: regressed by patch 2 (<code>0002-b.patch"));
	assert_non_null(strstr(sec, "<code>0001-&lt;a&gt;.patch</code>"));
	assert_non_null(strstr(sec, "<td class=\"num\">+7</td><td class=\"num\">[5, 9]</td>"));
}

/* schedstat rows leave the main table for a section of their own, per
 * variant and workload, beside the workload's own verdicts; the per-CPU
 * rows that did not change are folded. */
static void test_schedstat_section(void **state)
{
	(void)state;
	_cleanup_json_ json_object *r = load("data/result-example.json");
	json_object *cmps = NULL;
	assert_true(json_object_object_get_ex(r, "comparisons", &cmps));
	static const char *const rows[][2] = {{"schedstat.lb_migrations", "changed"},
					      {"schedstat.cpu0.ttwu", "unchanged"},
					      {"schedstat.cpu1.ttwu<b>", "changed"}};
	for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
		char text[512];
		snprintf(text, sizeof(text),
			 "{\"variant\":\"patched\",\"workload\":\"rt-migrate-test\",\"metric\":"
			 "\"%s\",\"baseline\":{\"median\":17,\"n\":3},\"candidate\":{\"median\":"
			 "32,\"n\":3},\"change\":15,\"ci95\":[3,25],\"p_value\":0.01,\"threshold\":"
			 "0,\"better\":\"none\",\"gated\":false,\"verdict\":\"%s\"}",
			 rows[i][0], rows[i][1]);
		json_object_array_add(cmps, json_tokener_parse(text));
	}
	_cleanup_free_ char *html = render_result(r);
	const char *main_table = strstr(html, "<section id=\"comparisons\">");
	const char *sec = strstr(html, "<section id=\"schedstat\">");
	assert_non_null(main_table);
	assert_non_null(sec);
	assert_true(sec > main_table);
	/* not in the main table, which points to them */
	const char *pointer = strstr(main_table, "3 schedstat rows are in");
	assert_non_null(pointer);
	assert_true(pointer < sec);
	assert_true(strstr(main_table, "<code>schedstat.") > sec);
	assert_true(strstr(html, "<code>schedstat.lb_migrations</code>") > sec);
	assert_non_null(strstr(sec, "<h3>patched / rt-migrate-test</h3>"));
	assert_non_null(strstr(sec, "schedstat.cpu1.ttwu&lt;b&gt;"));
	const char *fold = strstr(sec, "1 per-CPU and per-domain rows that did not move");
	assert_non_null(fold);
	assert_true(strstr(sec, "<code>schedstat.cpu0.ttwu</code>") > fold);
}

/* result.bisection: a section after the verdict with the answer, each
 * step's verdict and boots, and hostile patch names escaped. */
static void test_bisection_section(void **state)
{
	(void)state;
	_cleanup_json_ json_object *r = load("data/result-example.json");
	json_object *b = json_tokener_parse(
	    "{\"status\":\"found\",\"first_bad\":2,\"first_bad_patch\":\"0002-<b>x.patch\","
	    "\"patches\":3,\"certain\":true,\"builds\":2,\"boots\":10,\"steps\":["
	    "{\"patches\":1,\"last_patch\":\"0001-a.patch\",\"verdict\":\"pass\","
	    "\"uncertain\":false,\"decided_by\":[\"No gated metric regressed.\"],"
	    "\"comparisons\":[],\"boots\":5,\"reused_runs\":5},"
	    "{\"patches\":2,\"last_patch\":\"0002-<b>x.patch\",\"verdict\":\"fail\","
	    "\"uncertain\":false,\"decided_by\":[\"inversions regressed\"],"
	    "\"comparisons\":[],\"boots\":5,\"reused_runs\":5}]}");
	assert_non_null(b);
	json_object_object_add(r, "bisection", b);
	_cleanup_free_ char *html = render_result(r);
	const char *sec = strstr(html, "<section id=\"bisection\">");
	assert_non_null(sec);
	assert_true(sec < strstr(html, "id=\"comparisons\""));
	assert_non_null(strstr(sec, "ends at patch 2 of 3: <code>0002-&lt;b&gt;x.patch</code>."));
	assert_non_null(strstr(sec, "2 kernel build(s), 10 boot(s)"));
	assert_non_null(strstr(sec, "<tr><td class=\"num\">1</td><td><code>0001-a.patch</code>"));
	assert_non_null(strstr(sec, "inversions regressed</td></tr>"));
	assert_null(strstr(sec, "uncertain"));

	/* a commit range: the answer and each step name the commit, escaped */
	_cleanup_json_ json_object *rc = load("data/result-example.json");
	json_object *bc = json_tokener_parse(
	    "{\"status\":\"found\",\"first_bad\":2,\"first_bad_patch\":\"0002-x.patch\","
	    "\"first_bad_commit\":\"b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2\","
	    "\"first_bad_subject\":\"sched: <i>b</i>\",\"commits\":[],"
	    "\"patches\":3,\"certain\":true,\"builds\":2,\"boots\":10,\"steps\":["
	    "{\"patches\":1,\"last_patch\":\"0001-a.patch\",\"commit\":\"<a1a1a1a1a1a1a1\","
	    "\"subject\":\"sched: a\",\"verdict\":\"pass\",\"uncertain\":false,"
	    "\"decided_by\":[],\"comparisons\":[],\"boots\":5,\"reused_runs\":5}]}");
	assert_non_null(bc);
	json_object_object_add(rc, "bisection", bc);
	_cleanup_free_ char *h2 = render_result(rc);
	sec = strstr(h2, "<section id=\"bisection\">");
	assert_non_null(sec);
	assert_non_null(strstr(sec, "The first failing commit is 2 of 3: <code>"
				    "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2</code> sched: "
				    "&lt;i&gt;b&lt;/i&gt;."));
	assert_non_null(strstr(sec, "<td><code>&lt;a1a1a1a1a1a</code> sched: a</td>"));
}

/* The runs of the first variant of r with at least min runs. */
static json_object *example_runs(json_object *r, size_t min)
{
	json_object *variants = NULL, *runs = NULL;
	assert_true(json_object_object_get_ex(r, "variants", &variants));
	json_object_object_foreach(variants, vname, v)
	{
		(void)vname;
		if (json_object_object_get_ex(v, "runs", &runs) &&
		    json_object_array_length(runs) >= min)
			return runs;
	}
	fail_msg("no variant with %zu runs", min);
	return NULL;
}

/* A sched_ext run: scheduler, state and ops beside its status, the exit
 * reason of a failed one, escaped (docs/sched-ext.md). */
static void test_sched_ext_runs(void **state)
{
	(void)state;
	_cleanup_json_ json_object *r = load("data/result-example.json");
	json_object *runs = example_runs(r, 1);
	json_object *run = json_object_array_get_idx(runs, 0);
	json_object_object_add(run, "status", json_object_new_string("sched_ext_failed"));
	json_object_object_add(
	    run, "sched_ext",
	    json_tokener_parse("{\"scheduler\":\"scx_qmap\",\"state\":\"enabled\",\"ops\":"
			       "\"qmap\",\"state_end\":\"disabled\",\"exit_reason\":"
			       "\"scx_bpf_error (<b>boom)\"}"));
	_cleanup_free_ char *html = render_result(r);
	const char *sec = strstr(html, "<section id=\"runs\">");
	assert_non_null(sec);
	assert_non_null(strstr(sec, "<span class=\"scx\">scx_qmap: enabled / qmap; exit: "
				    "scx_bpf_error (&lt;b&gt;boom)</span>"));
}

/* A pinned run's host cell names its host CPUs (docs/guests.md "Pinning");
 * a floating run's shows the host alone; hostile text is escaped. */
static void test_pinned_runs(void **state)
{
	(void)state;
	_cleanup_json_ json_object *r = load("data/result-example.json");
	json_object *runs = example_runs(r, 2);
	json_object_object_add(json_object_array_get_idx(runs, 0), "pinning",
			       json_tokener_parse("{\"pinned\":true,\"vcpus\":[3,2],\"emulator\":"
						  "\"0-1<i>\",\"applied\":[\"3\",\"2\"]}"));
	json_object_object_add(json_object_array_get_idx(runs, 1), "pinning",
			       json_tokener_parse("{\"pinned\":false,\"reason\":\"few\"}"));
	_cleanup_free_ char *html = render_result(r);
	const char *sec = strstr(html, "<section id=\"runs\">");
	assert_non_null(sec);
	const char *pin = strstr(sec, "<span class=\"pin\">");
	assert_non_null(pin);
	assert_non_null(strstr(pin, "<span class=\"pin\">vCPUs on host CPU 3,2, emulator on "
				    "0-1&lt;i&gt;</span>"));
	assert_null(strstr(pin + 1, "<span class=\"pin\">"));
}

static void test_example_result(void **state)
{
	(void)state;
	/* The schema owner's example: no per-bucket histogram, so cyclictest
	 * falls back to the per-run strip plot. */
	_cleanup_free_ char *html = render("data/result-example.json");

	assert_only_report_markup(html);
	assert_int_equal(count(html, "<svg "), 3);
	assert_non_null(strstr(html, "cyclictest latency per run"));
	/* Per-thread rows are folded away, the overall ones are not. */
	const char *fold = strstr(html, "per-thread rows</summary>");
	assert_non_null(fold);
	assert_non_null(strstr(fold, "latency_us.t0."));
	assert_true(strstr(html, "latency_us.t0.") > fold);
	assert_non_null(strstr(html, "Every run and every workload in it finished ok."));
}

static void test_real_result(void **state)
{
	(void)state;
	/* A real result of the short seed reproduction (rt-migrate-test only,
	 * TCG, two repeats), as the runner wrote it. */
	_cleanup_free_ char *html = render("data/report/real-rtmigrate.json");

	assert_only_report_markup(html);
	assert_int_equal(count(html, "<svg "), 2);
	assert_int_equal(count(html, ">prio 6"), 3);
	assert_non_null(strstr(html, "Start delay of each priority\xe2\x80\x99s task in every"));
	assert_non_null(strstr(html, "maxerr 1000 \xc2\xb5s"));
	assert_non_null(strstr(html, "0004-sched-rt-add-the-RT_CPUPRI-sched-feature.patch"));
}

/* The kernel bugs section: one row per signature, the gate, the first
 * excerpt escaped; none without signatures. */
static void test_signatures_section(void **state)
{
	(void)state;
	_cleanup_json_ json_object *r = json_tokener_parse(
	    "{\"schema\":\"schedlab.result/v1\",\"job\":{\"name\":\"ci\",\"baseline\":"
	    "\"base\"},\"variants\":{\"base\":{\"runs\":[]},\"cand\":{\"runs\":[]}},"
	    "\"signatures\":[{\"id\":\"0123456789abcdef\",\"kind\":\"warn\",\"title\":"
	    "\"WARNING in push_rt_task\",\"location\":\"kernel/sched/rt.c:2124\",\"runs\":3,"
	    "\"reports\":3,\"variants\":{\"cand\":3},\"in_baseline\":false,\"new_in\":"
	    "[\"cand\"],\"first\":{\"variant\":\"cand\",\"key\":\"cand#0\",\"excerpt\":"
	    "\"WARNING: CPU: 1</pre><script>alert(1)</script>\"}}],"
	    "\"comparisons\":[],\"verdict\":\"fail\",\"verdict_reasons\":[\"x\"]}");
	assert_non_null(r);
	_cleanup_free_ char *html = NULL;
	struct sl_error err = {0};
	result_fixture_complete(r);
	if (report_html(r, &html, &err) < 0)
		fail_msg("%s", err.message);
	assert_only_report_markup(html);
	assert_null(strstr(html, "<script"));
	const char *sec = strstr(html, "<section id=\"kernel-bugs\">");
	assert_non_null(sec);
	assert_non_null(strstr(sec, "<td>warn</td><td>WARNING in push_rt_task</td><td>"
				    "kernel/sched/rt.c:2124</td><td>cand 3</td><td><span "
				    "class=\"badge v-fail\">"));
	assert_non_null(strstr(sec, "new against the baseline"));
	assert_non_null(strstr(sec, "&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;"));
	json_object_object_del(r, "signatures");
	_cleanup_free_ char *clean = NULL;
	assert_int_equal(report_html(r, &clean, &err), 0);
	assert_null(strstr(clean, "kernel-bugs"));
}

/* A debug kernel says so in the header and in the kernels table, so its
 * timings are not read as a production kernel's; a normal one does not. */
static void test_debug_kernel(void **state)
{
	(void)state;
	_cleanup_json_ json_object *r = json_tokener_parse(
	    "{\"schema\":\"schedlab.result/v1\",\"job\":{\"name\":\"dbg\",\"baseline\":"
	    "\"baseline\"},\"kernels\":{\"base\":{\"source\":\"debian:linux-source-6.1\","
	    "\"config_sha256\":\"32940f61150f5edc\",\"debug\":\"lockdep\","
	    "\"debug_config_sha256\":\"f083d2dc0e6464fb3fd0\"},\"normal\":{\"source\":"
	    "\"debian:linux-source-6.1\",\"config_sha256\":\"32940f61150f5edc\"}},"
	    "\"variants\":{\"baseline\":{\"kernel\":\"base\",\"runs\":[]}},"
	    "\"comparisons\":[],\"verdict\":\"pass\",\"verdict_reasons\":[]}");
	assert_non_null(r);
	_cleanup_free_ char *html = NULL;
	struct sl_error err = {0};
	result_fixture_complete(r);
	if (report_html(r, &html, &err) < 0)
		fail_msg("%s", err.message);
	assert_only_report_markup(html);
	const char *top = strstr(html, "kernel <b>base</b>");
	assert_non_null(top);
	assert_non_null(strstr(top, "<b>debug build (lockdep)</b>: its timings include the debug "
				    "checks, not a production kernel's figures</p>"));
	const char *normal = strstr(html, "kernel <b>normal</b>");
	assert_non_null(normal);
	assert_true(strstr(normal, "</p>") < strstr(normal, "debug build") ||
		    !strstr(normal, "debug build"));
	const char *table = strstr(html, "<section id=\"kernels\">");
	assert_non_null(table);
	assert_non_null(strstr(table, "<br><b>debug build: lockdep</b> <code title=\""
				      "f083d2dc0e6464fb3fd0\">f083d2dc0e64</code>"));
	assert_int_equal(count(table, "debug build"), 1);
}

static void test_hostile(void **state)
{
	(void)state;
	_cleanup_free_ char *html = render("data/report/hostile.json");

	assert_only_report_markup(html);
	assert_null(strstr(html, "<script"));
	assert_non_null(strstr(html, "<h1>&lt;script&gt;alert(1)&lt;/script&gt;</h1>"));
	assert_non_null(strstr(html, "<title>schedlab: &lt;script&gt;alert(1)&lt;/script&gt;"));
	assert_non_null(
	    strstr(html, "&quot;&gt;&lt;img src=x onerror=alert(2)&gt; &amp; \xef\xbf\xbd ctrl"));
	assert_non_null(strstr(html, "&lt;b onmouseover=alert(3)&gt;evil.patch"));
	assert_non_null(strstr(html, "&lt;/td&gt;&lt;script&gt;alert(4)&lt;/script&gt;"));
	assert_non_null(strstr(html, "&lt;iframe src=&quot;https://example.invalid/&quot;&gt;"));
	assert_non_null(strstr(html, "&lt;svg onload=alert(6)&gt;"));
	assert_non_null(strstr(html, "&lt;/li&gt;&lt;script&gt;alert(7)&lt;/script&gt;"));
	assert_non_null(strstr(html, "&quot;&gt;&lt;svg/onload=alert(8)&gt;"));
	assert_non_null(strstr(html, "&lt;/pre&gt;&lt;script&gt;alert(9)&lt;/script&gt;"));
	assert_non_null(strstr(html, "\xef\xbf\xbd[31mred"));
	assert_non_null(strstr(html, "&lt;style&gt;body{display:none}&lt;/style&gt;"));
	assert_non_null(strstr(html, "&lt;a href=x&gt;regressed&lt;/a&gt;"));
	assert_non_null(strstr(html, "&lt;embed src=x&gt;"));
	assert_non_null(strstr(html, "&lt;marquee&gt;host&lt;/marquee&gt;"));
	/* An unknown verdict is text, never a class name. */
	assert_null(strstr(html, "v-<"));
	assert_null(strstr(html, "v-&lt;"));
}

static void test_bad_input(void **state)
{
	(void)state;
	struct sl_error err = {0};
	char *html = NULL;
	_cleanup_json_ json_object *arr = json_object_new_array();
	_cleanup_json_ json_object *empty = json_object_new_object();
	_cleanup_json_ json_object *minimal = json_tokener_parse(
	    "{\"variants\": {\"a\": {\"runs\": [{\"status\": 7, \"workloads\": \"x\"}]}, "
	    "\"b\": 5}, \"comparisons\": {}, \"kernels\": [], \"job\": {\"workloads\": [1]}}");

	assert_int_equal(report_html(NULL, &html, &err), -EINVAL);
	assert_int_equal(report_html(arr, &html, &err), -EINVAL);
	assert_int_equal(err.kind, ERR_INVALID);
	/* The result is parsed once, strictly (model_result_parse): what the
	 * schema requires and the typed members' types are checked first, and
	 * the error names the field. */
	assert_int_equal(report_html(empty, &html, &err), -EINVAL);
	assert_non_null(strstr(err.message, "schema is missing"));
	assert_null(html);
	assert_non_null(minimal);
	result_fixture_complete(minimal);
	memset(&err, 0, sizeof(err));
	assert_int_equal(report_html(minimal, &html, &err), -EINVAL);
	assert_int_equal(err.kind, ERR_INVALID);
	assert_non_null(strstr(err.message, "The result document: "));
	assert_null(html);
	/* In the members the model keeps untyped, wrong types are shown as
	 * missing, not a crash. */
	_cleanup_json_ json_object *odd = json_tokener_parse(
	    "{\"variants\": {\"a\": {\"runs\": [{\"topology\": {\"sched_domains\": 3}, "
	    "\"workloads\": [{\"name\": \"w\", \"tool\": \"cyclictest\", \"status\": \"ok\", "
	    "\"metrics\": {\"latency_us.max\": \"x\"}, \"details\": {\"histogram\": 5}}]}]}}, "
	    "\"job\": {\"workloads\": [1, {\"name\": \"w\", \"tool\": \"cyclictest\"}], "
	    "\"guest\": []}, \"environment\": {\"accelerator\": 7}}");
	assert_non_null(odd);
	result_fixture_complete(odd);
	if (report_html(odd, &html, &err) < 0)
		fail_msg("%s", err.message);
	assert_only_report_markup(html);
	free(html);
}

static void test_shared_priorities(void **state)
{
	(void)state;
	/* rt-migrate-test -e: tasks may share a priority; each priority is one
	 * category and the columns are pooled into it. */
	static const char *const doc =
	    "{\"job\": {\"baseline\": \"a\", \"workloads\": [{\"name\": \"rtm\", "
	    "\"tool\": \"rt-migrate-test\"}]}, \"variants\": {\"a\": {\"runs\": [{\"key\": "
	    "\"a#0\", \"repeat\": 0, \"status\": \"ok\", \"workloads\": [{\"name\": \"rtm\", "
	    "\"tool\": \"rt-migrate-test\", \"status\": \"ok\", \"metrics\": "
	    "{\"start_delay_us.prio60.max\": 40, \"start_delay_us.prio61.max\": 9, "
	    "\"inversions\": 0}, \"details\": {\"priorities\": [60, 60, 61], \"iterations\": "
	    "[[11, 22, 3], [33, 40, 9]]}}]}]}}}";
	_cleanup_json_ json_object *r = json_tokener_parse(doc);
	_cleanup_free_ char *html = NULL;
	struct sl_error err = {0};

	assert_non_null(r);
	result_fixture_complete(r);
	assert_int_equal(report_html(r, &html, &err), 0);
	assert_only_report_markup(html);
	assert_int_equal(count(html, "<svg "), 2);
	assert_int_equal(count(html, ">prio 60</text>"), 1);
	assert_int_equal(count(html, ">prio 61</text>"), 1);
	/* Four dots for prio 60 (two tasks x two loops), two for prio 61. */
	const char *svg = strstr(html, "start delay per priority");
	assert_non_null(svg);
	assert_int_equal(count(svg, " r=\"2.5\"/>"), 6);
}

/* Type confusion everywhere: every value of the golden result (the first
 * few elements of each array) is replaced in turn by values of other types
 * and extremes; the report must render (sanitizers watch) and stay clean,
 * or refuse the result with an error that names the field. */
static json_object *replacement(unsigned k)
{
	switch (k % 7) {
	case 0:
		return NULL;
	case 1:
		return json_object_new_string("<x>\xff");
	case 2:
		return json_object_new_double(-1e308);
	case 3:
		return json_object_new_int64(INT64_MAX);
	case 4:
		return json_object_new_object();
	case 5:
		return json_object_new_array();
	default:
		return json_object_new_double(-0.5);
	}
}

/* Renders root or refuses it; returns whether it rendered. */
static bool render_or_refuse(json_object *root)
{
	struct sl_error err = {0};
	char *html = NULL;
	int r = report_html(root, &html, &err);

	if (r < 0) {
		assert_int_equal(r, -EINVAL);
		assert_null(html);
		assert_non_null(strstr(err.message, "The result document: "));
		return false;
	}
	assert_null(strstr(html, "<x>"));
	free(html);
	return true;
}

static void mutate_walk(json_object *root, json_object *o, unsigned *counter)
{
	if (json_object_is_type(o, json_type_object)) {
		json_object_object_foreach(o, key, val)
		{
			for (unsigned r = 0; r < 2; r++) {
				unsigned k = (*counter)++;
				json_object *saved = json_object_get(val);
				json_object_object_add(o, key, replacement(k));
				render_or_refuse(root);
				json_object_object_add(o, key, saved);
			}
			mutate_walk(root, val, counter);
		}
	} else if (json_object_is_type(o, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(o) && i < 2; i++) {
			json_object *val = json_object_array_get_idx(o, i);
			unsigned k = (*counter)++;
			json_object *saved = json_object_get(val);
			json_object_array_put_idx(o, i, replacement(k));
			render_or_refuse(root);
			json_object_array_put_idx(o, i, saved);
			mutate_walk(root, val, counter);
		}
	}
}

static void test_type_confusion(void **state)
{
	(void)state;
	_cleanup_json_ json_object *r = load("data/report/result.json");
	json_object *variants = json_object_object_get(r, "variants");
	unsigned counter = 0;

	/* The variants object itself must stay an object (that is an error). */
	json_object_object_foreach(r, key, val)
	{
		if (val == variants)
			mutate_walk(r, val, &counter);
		else {
			json_object *saved = json_object_get(val);
			json_object_object_add(r, key, replacement(counter++));
			render_or_refuse(r);
			json_object_object_add(r, key, saved);
			mutate_walk(r, val, &counter);
		}
	}
	assert_true(counter > 200);
}

/* ---- trend ---- */

#define NOW 1796277600L /* 2026-12-03T06:00:00Z */

struct trend_fixture {
	char dir[64];
};

static void exec_sql(sqlite3 *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg);
}

static void add_row(sqlite3 *db, const char *job, long t, bool text_time, const char *metric,
		    double base, double cand, const char *verdict)
{
	sqlite3_stmt *st;
	char iso[32], id[32];
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(id, sizeof(id), "j-%ld", t);
	assert_int_equal(sqlite3_prepare_v2(db,
					    "INSERT INTO comparisons VALUES (?, ?, ?, 'patched', "
					    "'cyclictest', ?, ?, ?, ?, ?, ?, 0.04, ?)",
					    -1, &st, NULL),
			 SQLITE_OK);
	sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, job, -1, SQLITE_STATIC);
	if (text_time)
		sqlite3_bind_text(st, 3, iso, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_int64(st, 3, t);
	sqlite3_bind_text(st, 4, metric, -1, SQLITE_STATIC);
	sqlite3_bind_double(st, 5, base);
	sqlite3_bind_double(st, 6, cand);
	sqlite3_bind_double(st, 7, cand - base);
	sqlite3_bind_double(st, 8, cand - base - 10);
	sqlite3_bind_double(st, 9, cand - base + 10);
	sqlite3_bind_text(st, 10, verdict, -1, SQLITE_STATIC);
	assert_int_equal(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
}

static int trend_setup(void **state)
{
	struct trend_fixture *f = calloc(1, sizeof(*f));
	sqlite3 *db;
	_cleanup_free_ char *path = NULL;
	/* nightly p99: unchanged, then a regression on day 4 that lasts two
	 * nights, a good night, and a new regression on day 7. */
	static const char *const verdicts[10] = {
	    "unchanged", "unchanged", "unchanged", "unchanged", "regressed",
	    "regressed", "unchanged", "regressed", "unchanged", "improved",
	};

	strcpy(f->dir, "/tmp/test_report.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	path = fs_path_join(f->dir, "schedlab.db");
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	exec_sql(db,
		 "CREATE TABLE comparisons(job_id TEXT, job_name TEXT, finished_at, variant "
		 "TEXT, workload TEXT, metric TEXT, baseline_median REAL, candidate_median REAL, "
		 "change REAL, ci_lo REAL, ci_hi REAL, p_value REAL, verdict TEXT)");
	for (int d = 0; d < 10; d++) {
		long t = NOW - (10 - d) * 86400L + 3600;
		add_row(db, "nightly", t, d % 2 == 0, "latency_us.p99", 800 + d,
			verdicts[d][0] == 'r' ? 1000 + d : 805, verdicts[d]);
		add_row(db, "nightly", t, d % 2 == 1, "latency_us.avg", 200, 201, "unchanged");
	}
	/* Outside a 30-day window: must not be listed. */
	add_row(db, "nightly", NOW - 40 * 86400L, true, "latency_us.max", 1, 2, "regressed");
	add_row(db, "<script>alert(1)</script>", NOW - 86400L, true, "latency_us.max", 1, 9,
		"regressed");
	sqlite3_close(db);
	*state = f;
	return 0;
}

static int trend_teardown(void **state)
{
	struct trend_fixture *f = *state;

	fs_rm_rf(f->dir, NULL);
	free(f);
	return 0;
}

static void test_trend(void **state)
{
	struct trend_fixture *f = *state;
	_cleanup_free_ char *html = NULL;
	struct sl_error err = {0};

	assert_int_equal(store_trend_html_at(f->dir, 30 * 86400L, NOW, &html, &err), 0);
	if (getenv("DUMP_TREND"))
		fs_write_file_atomic(getenv("DUMP_TREND"), html, strlen(html), &err);
	assert_only_report_markup(html);
	assert_null(strstr(html, "<script"));
	/* Three series in the window: nightly p99, nightly avg, the hostile one. */
	assert_int_equal(count(html, "<svg "), 3);
	/* Regressions: day 4 and day 7 of nightly, and the hostile job's; the
	 * second night of the first streak is not a new regression. */
	assert_int_equal(count(html, "<tr><td>2026-"), 3);
	assert_non_null(strstr(html, "<tr><td>2026-11-27 07:00</td><td>nightly</td>"));
	assert_non_null(strstr(html, "<tr><td>2026-11-30 07:00</td><td>nightly</td>"));
	assert_null(strstr(html, "<tr><td>2026-11-28 07:00</td>"));
	assert_non_null(strstr(html, "&lt;script&gt;alert(1)&lt;/script&gt;"));
	assert_non_null(strstr(html, "regression first seen"));
	assert_non_null(strstr(html, "v-fail\">REGRESSIONS</div>"));
	/* The max series is outside a 30-day window but inside 60 days. */
	assert_null(strstr(html, "2026-10-24"));
	free(html);
	html = NULL;
	assert_int_equal(store_trend_html_at(f->dir, 60 * 86400L, NOW, &html, &err), 0);
	assert_int_equal(count(html, "<tr><td>2026-"), 4);
	free(html);
	html = NULL;
	/* A one-hour window holds nothing. */
	assert_int_equal(store_trend_html_at(f->dir, 3600, NOW, &html, &err), 0);
	assert_non_null(strstr(html, "No metric regressed in this window."));
	assert_int_equal(count(html, "<svg "), 0);
}

/* 30 nights of p99 around 800 with a deterministic wobble of about 3 %
 * (an A/A-like spread) and a 10 % step at night 15 in the candidate; a flat
 * avg series; and, in a second job, a step in the baseline too. The change
 * point table lists the p99 step once, between nights 14 and 15, the flat
 * series not at all, and marks the second job's step "baseline too". */
static void test_trend_change_points(void **state)
{
	(void)state;
	char dir[64] = "/tmp/test_report.XXXXXX";
	_cleanup_free_ char *path = NULL, *html = NULL;
	struct sl_error err = {0};
	sqlite3 *db;

	assert_non_null(mkdtemp(dir));
	path = fs_path_join(dir, "schedlab.db");
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	exec_sql(db,
		 "CREATE TABLE comparisons(job_id TEXT, job_name TEXT, finished_at, variant "
		 "TEXT, workload TEXT, metric TEXT, baseline_median REAL, candidate_median REAL, "
		 "change REAL, ci_lo REAL, ci_hi REAL, p_value REAL, verdict TEXT)");
	for (int d = 0; d < 30; d++) {
		long t = NOW - (30 - d) * 86400L + 3600;
		double wobble = 24 * sin(d * 1.7) + 8 * cos(d * 5.3);
		add_row(db, "steps", t, false, "latency_us.p99", 800 + wobble / 2,
			(d >= 14 ? 880 : 800) + wobble, "unchanged");
		add_row(db, "steps", t, true, "latency_us.avg", 200, 200 + wobble / 4, "unchanged");
		add_row(db, "host-moved", t + 600, false, "latency_us.p99",
			(d >= 20 ? 900 : 800) + wobble, (d >= 20 ? 900 : 800) + wobble / 2,
			"unchanged");
	}
	sqlite3_close(db);
	assert_int_equal(store_trend_html_at(dir, 40 * 86400L, NOW, &html, &err), 0);
	if (getenv("DUMP_TREND"))
		fs_write_file_atomic(getenv("DUMP_TREND"), html, strlen(html), &err);
	assert_only_report_markup(html);
	/* Night index 14 is 16 days before NOW, at 07:00. */
	assert_non_null(strstr(html, "<tr class=\"cp\"><td>2026-11-16 07:00</td><td>2026-11-17 "
				     "07:00</td><td>steps</td><td>patched</td>"));
	assert_non_null(strstr(html, "<tr class=\"cp\"><td>2026-11-22 07:10</td><td>2026-11-23 "
				     "07:10</td><td>host-moved</td><td>patched <b>(baseline "
				     "too)</b></td>"));
	assert_int_equal(count(html, "<tr class=\"cp\"><td>"), 3); /* + host-moved's baseline */
	assert_null(strstr(html, "<code>latency_us.avg</code></td><td class=\"num\">"));
	assert_non_null(strstr(html, "3 change points"));
	assert_non_null(strstr(html, "change point"));
	fs_rm_rf(dir, NULL);
}

static void test_trend_errors(void **state)
{
	struct trend_fixture *f = *state;
	struct sl_error err = {0};
	char *html = NULL;
	char dir[64] = "/tmp/test_report.XXXXXX";
	sqlite3 *db;

	assert_int_equal(
	    store_trend_html_at("/nonexistent-schedlab-state", 86400, NOW, &html, &err), -ENOENT);
	assert_int_equal(err.kind, ERR_NOT_FOUND);
	assert_int_equal(store_trend_html_at(f->dir, 0, NOW, &html, &err), -EINVAL);
	assert_non_null(mkdtemp(dir));
	_cleanup_free_ char *path = fs_path_join(dir, "schedlab.db");
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	exec_sql(db, "CREATE TABLE jobs(id TEXT)");
	sqlite3_close(db);
	assert_int_equal(store_trend_html_at(dir, 86400, NOW, &html, &err), -EINVAL);
	assert_int_equal(err.kind, ERR_INVALID);
	assert_non_null(strstr(err.message, "comparisons"));
	assert_null(html);
	fs_rm_rf(dir, NULL);
}

/* The real store fills the table the trend report reads: index the golden
 * result as six nightly jobs, with cyclictest's p99 regressed on nights 3
 * and 4, and render the trend from that store. */
static void test_trend_real_store(void **state)
{
	(void)state;
	char dir[64] = "/tmp/test_report.XXXXXX";
	struct sl_error err = {0};
	struct store *s = NULL;
	_cleanup_free_ char *html = NULL;

	assert_non_null(mkdtemp(dir));
	if (store_open(dir, &s, &err) < 0)
		fail_msg("store_open: %s", err.message);
	for (int night = 0; night < 6; night++) {
		_cleanup_json_ json_object *r = load("data/report/result.json");
		json_object *cmps = json_object_object_get(r, "comparisons");
		char id[STORE_ID_LEN + 1], iso[32];
		time_t t = NOW - (6 - night) * 86400L;
		struct tm tm;

		gmtime_r(&t, &tm);
		strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%M:%SZ", &tm);
		json_object_object_add(r, "finished_at", json_object_new_string(iso));
		for (size_t i = 0; i < json_object_array_length(cmps); i++) {
			json_object *c = json_object_array_get_idx(cmps, i);
			const char *m = json_object_get_string(json_object_object_get(c, "metric"));
			if (strcmp(m, "latency_us.p99") == 0)
				json_object_object_add(
				    c, "verdict",
				    json_object_new_string(night == 3 || night == 4 ? "regressed"
										    : "unchanged"));
		}
		assert_int_equal(store_id_new(id, &err), 0);
		if (store_result_index(s, id, r, &err) < 0)
			fail_msg("store_result_index: %s", err.message);
	}
	/* The service keeps its store open (WAL) while the trend is read. */
	assert_int_equal(store_trend_html_at(dir, 30 * 86400L, NOW, &html, &err), 0);
	store_free(s);
	assert_only_report_markup(html);
	/* One chart per (job, workload, metric) of the golden's 11 comparisons. */
	assert_int_equal(count(html, "<svg "), 11);
	assert_int_equal(count(html, "<tr><td>2026-"), 1);
	assert_non_null(strstr(html,
			       "<tr><td>2026-11-30 06:00</td><td>seed-reproduction-full</td>"
			       "<td>patched</td><td>cyclictest</td><td><code>latency_us.p99"));
	assert_non_null(strstr(html, "66 comparisons in 11 series"));
	fs_rm_rf(dir, NULL);
}

static void test_trend_parsing(void **state)
{
	(void)state;
	time_t t;

	assert_int_equal(trend_parse_time("2026-12-03T06:00:00Z", &t), 0);
	assert_int_equal((long)t, NOW);
	assert_int_equal(trend_parse_time("2026-12-03 06:00:00.250+00:00", &t), 0);
	assert_int_equal((long)t, NOW);
	assert_int_equal(trend_parse_time("2026-12-03T06:00:00+02:00", &t), -EINVAL);
	assert_int_equal(trend_parse_time("2026-13-03T06:00:00Z", &t), -EINVAL);
	assert_int_equal(trend_parse_time("yesterday", &t), -EINVAL);
}

/* Host interference: each run's vCPU wait as a strip per variant, noisy runs
 * apart and named left out under the default policy, the noise limit, and
 * the calibration used with its (hostile) host name escaped; without
 * measurements or calibration the section says so. */
static void test_interference_and_calibration(void **state)
{
	(void)state;
	_cleanup_json_ json_object *r = load("data/report/result.json");
	const double waits[] = {3.5, 41.2, 6.0, 4.1, 5.2, 28.9};
	size_t k = 0;
	json_object_object_foreach(json_object_object_get(r, "variants"), vname, v)
	{
		(void)vname;
		json_object *runs = json_object_object_get(v, "runs");
		for (size_t i = 0; runs && i < json_object_array_length(runs) && k < 6; i++, k++) {
			json_object *run = json_object_array_get_idx(runs, i);
			json_object *hi = json_object_new_object();
			json_object_object_add(hi, "vcpu_wait_pct",
					       json_object_new_double(waits[k]));
			json_object_object_add(run, "host_interference", hi);
			json_object_object_add(run, "noisy",
					       json_object_new_boolean(waits[k] > 25));
		}
	}
	json_object *rep = json_object_new_object();
	json_object_object_add(rep, "noise_policy", json_object_new_string("exclude"));
	json_object_object_add(rep, "noise_limit_pct", json_object_new_double(25));
	json_object_object_add(r, "repeats", rep);
	struct sl_error err = {0};
	char *html = NULL;
	assert_int_equal(report_html(r, &html, &err), 0);
	assert_non_null(strstr(html, "<figure id=\"interference-strip\" data-runs=\"6\" "
				     "data-noisy=\"2\">"));
	assert_non_null(strstr(html, "noisy runs (left out)"));
	assert_non_null(strstr(html, "noise limit 25 %"));
	assert_non_null(strstr(html, "2 of 6 run(s) were noisy and left out"));
	assert_non_null(strstr(html, "No A/A calibration matched"));
	assert_null(strstr(html, "id=\"noise-limit\"")); /* an older result: no source */
	free(html);
	json_object_object_add(rep, "noise_limit_source", json_object_new_string("default"));
	assert_int_equal(report_html(r, &html, &err), 0);
	assert_non_null(strstr(html, "<p id=\"noise-limit\" data-source=\"default\">"));
	free(html);

	json_object *cal = json_object_new_array(), *e = json_object_new_object();
	json_object *host = json_object_new_object(), *sp = json_object_new_object();
	json_object_object_add(e, "workload", json_object_new_string("rtm"));
	json_object_object_add(
	    e, "key",
	    json_object_new_string(
		"abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789"));
	json_object_object_add(e, "made_at", json_object_new_string("2026-12-04T19:00:00Z"));
	json_object_object_add(e, "boots", json_object_new_int(6));
	json_object_object_add(host, "hostname", json_object_new_string("<script>x</script>"));
	json_object_object_add(host, "cpu_model", json_object_new_string("Test CPU"));
	json_object_object_add(host, "accel", json_object_new_string("tcg"));
	json_object_object_add(e, "host", host);
	json_object_object_add(sp, "inversions", json_object_new_double(2));
	json_object_object_add(e, "spreads", sp);
	json_object_array_add(cal, e);
	json_object_object_add(r, "calibration", cal);
	json_object_object_add(rep, "noise_policy", json_object_new_string("keep"));
	json_object_object_add(rep, "noise_limit_pct", json_object_new_double(12.4));
	json_object_object_add(rep, "noise_limit_source", json_object_new_string("calibration"));
	json_object_object_add(rep, "calibration_vcpu_wait_pct_p90", json_object_new_double(6.2));
	assert_int_equal(report_html(r, &html, &err), 0);
	assert_only_report_markup(html);
	assert_non_null(strstr(html, "noise limit 12.4 %"));
	assert_non_null(strstr(html,
			       "data-source=\"calibration\">The noise limit came from this "
			       "host's A/A calibration: 9 in 10 of its runs waited at most 6.2 %"));
	assert_non_null(strstr(html, "<h3 id=\"calibration\">A/A calibration used</h3>"));
	assert_non_null(strstr(html, "<code>abcdef012345</code></td><td>2026-12-04T19:00:00Z"));
	assert_non_null(strstr(html, "&lt;script&gt;x&lt;/script&gt;, Test CPU, tcg"));
	assert_non_null(strstr(html, "noisy runs (kept)"));
	free(html);

	_cleanup_json_ json_object *plain = load("data/report/result.json");
	assert_int_equal(report_html(plain, &html, &err), 0);
	assert_non_null(strstr(html, "<section id=\"interference\">"));
	assert_non_null(strstr(html, "No run measured its vCPU wait"));
	assert_null(strstr(html, "interference-strip"));
	free(html);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sections),
	    cmocka_unit_test(test_interference_and_calibration),
	    cmocka_unit_test(test_build_failure_and_thresholds),
	    cmocka_unit_test(test_example_result),
	    cmocka_unit_test(test_bisection_section),
	    cmocka_unit_test(test_attribution_section),
	    cmocka_unit_test(test_schedstat_section),
	    cmocka_unit_test(test_real_result),
	    cmocka_unit_test(test_hostile),
	    cmocka_unit_test(test_signatures_section),
	    cmocka_unit_test(test_bad_input),
	    cmocka_unit_test(test_shared_priorities),
	    cmocka_unit_test(test_type_confusion),
	    cmocka_unit_test_setup_teardown(test_trend, trend_setup, trend_teardown),
	    cmocka_unit_test(test_trend_change_points),
	    cmocka_unit_test_setup_teardown(test_trend_errors, trend_setup, trend_teardown),
	    cmocka_unit_test(test_trend_real_store),
	    cmocka_unit_test(test_trend_parsing),
	    cmocka_unit_test(test_sched_ext_runs),
	    cmocka_unit_test(test_pinned_runs),
	    cmocka_unit_test(test_debug_kernel),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
