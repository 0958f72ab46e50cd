/* JUnit XML from a result; see junit.h for the shape and the rules. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "report/junit.h"
#include "util/escape.h"

struct junit_counts {
	int tests, failures;
	double time;
};

static void junit_sink(void *ctx, const char *s, size_t n)
{
	fwrite(s, 1, n, ctx);
}

/* Appends s to f escaped for XML text and attribute values; whitespace as
 * character references, so attribute values keep their line breaks. */
static void junit_escape(FILE *f, const char *s)
{
	if (s)
		escape_xml(s, strlen(s), ESCAPE_XML_WS, junit_sink, f);
}

static json_object *member(json_object *o, const char *k)
{
	json_object *v = NULL;
	return o && json_object_object_get_ex(o, k, &v) ? v : NULL;
}

static const char *str(json_object *o, const char *k)
{
	json_object *v = member(o, k);
	return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static double num(json_object *o, const char *k, double def)
{
	json_object *v = member(o, k);
	if (!(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
		return def;
	return json_object_get_double(v);
}

static bool flag(json_object *o, const char *k)
{
	json_object *v = member(o, k);
	return json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
}

/* <TAG type="TYPE" message="MESSAGE">TEXT</TAG>, or <TAG message=.../> without
 * text. type may be NULL. */
static void element(FILE *f, const char *tag, const char *type, const char *message,
		    const char *text)
{
	fprintf(f, "      <%s", tag);
	if (type) {
		fputs(" type=\"", f);
		junit_escape(f, type);
		fputc('"', f);
	}
	fputs(" message=\"", f);
	junit_escape(f, message);
	if (!text) {
		fputs("\"/>\n", f);
		return;
	}
	fputs("\">", f);
	junit_escape(f, text);
	fprintf(f, "</%s>\n", tag);
}

static void system_out(FILE *f, const char *text)
{
	fputs("      <system-out>", f);
	junit_escape(f, text);
	fputs("</system-out>\n", f);
}

static void testcase_open(FILE *f, const char *cls1, const char *cls2, const char *name)
{
	fputs("    <testcase classname=\"schedlab.", f);
	junit_escape(f, cls1);
	if (cls2) {
		fputc('.', f);
		junit_escape(f, cls2);
	}
	fputs("\" name=\"", f);
	junit_escape(f, name);
	fputs("\"", f);
}

static void property(FILE *f, const char *name, const char *value)
{
	fputs("        <property name=\"", f);
	junit_escape(f, name);
	fputs("\" value=\"", f);
	junit_escape(f, value);
	fputs("\"/>\n", f);
}

/* One <testcase> per comparison of variant vname. */
static void write_comparisons(FILE *f, json_object *cmps, const char *vname, struct junit_counts *n)
{
	size_t len = cmps ? json_object_array_length(cmps) : 0;
	for (size_t i = 0; i < len; i++) {
		json_object *c = json_object_array_get_idx(cmps, i);
		const char *variant = str(c, "variant");
		if (!variant || strcmp(variant, vname) != 0)
			continue;
		json_object *b = member(c, "baseline"), *k = member(c, "candidate");
		const char *verdict = str(c, "verdict") ? str(c, "verdict") : "unknown";
		bool gated = flag(c, "gated");
		n->tests++;
		testcase_open(f, vname, str(c, "workload") ? str(c, "workload") : "?",
			      str(c, "metric") ? str(c, "metric") : "?");
		fputs(">\n", f);
		char thr[48], ci[80], pct[48] = "", summary[840];
		if (member(c, "change_pct") &&
		    !json_object_is_type(member(c, "change_pct"), json_type_null))
			snprintf(pct, sizeof(pct), " (%+.1f%%)", num(c, "change_pct", 0));
		snprintf(thr, sizeof(thr), "%g", num(c, "threshold", 0));
		json_object *jci = member(c, "ci95");
		if (json_object_is_type(jci, json_type_array) && json_object_array_length(jci) == 2)
			snprintf(ci, sizeof(ci), "[%g, %g]",
				 json_object_get_double(json_object_array_get_idx(jci, 0)),
				 json_object_get_double(json_object_array_get_idx(jci, 1)));
		else
			snprintf(ci, sizeof(ci), "none");
		fputs("      <properties>\n", f);
		property(f, "gated", gated ? "true" : "false");
		property(f, "verdict", verdict);
		property(f, "threshold", thr);
		property(f, "relative", flag(c, "relative") ? "true" : "false");
		fputs("      </properties>\n", f);
		/* An undecided row says why, as the summary table does, so a
		 * CI page never reads "no change" where the data said "don't
		 * know". */
		char why[200] = "";
		if (str(c, "undecided_reason"))
			snprintf(why, sizeof(why), " (%.180s)", str(c, "undecided_reason"));
		snprintf(summary, sizeof(summary),
			 "%s%s%s: baseline median %g, candidate median %g, change %+g%s, "
			 "%s %s, threshold \u00b1%s, p=%.3g",
			 verdict, why, gated ? "" : " (not gated)", num(b, "median", 0),
			 num(k, "median", 0), num(c, "change", 0), pct,
			 member(c, "ci_method") ? "interval" : "95% CI", ci, thr,
			 num(c, "p_value", 1));
		if (gated && strcmp(verdict, "regressed") == 0) {
			n->failures++;
			element(f, "failure", "regressed", summary, summary);
		} else if (gated && strcmp(verdict, "inconclusive") == 0) {
			/* Not decided either way: neither a pass nor a failure. The
			 * verdict is inconclusive (exit 3) and says why. */
			element(f, "skipped", NULL, summary, NULL);
		} else {
			if (strcmp(verdict, "regressed") == 0)
				strncat(summary,
					"; reported only: an ungated metric does not fail "
					"the verdict",
					sizeof(summary) - strlen(summary) - 1);
			system_out(f, summary);
		}
		fputs("    </testcase>\n", f);
	}
}

/* Whether a run's status counts as the kernel's whatever the host did. */
static bool kernel_failed(const char *status)
{
	return status && (strcmp(status, "panic") == 0 || strcmp(status, "crashed") == 0 ||
			  strcmp(status, "sched_ext_failed") == 0);
}

/* One <testcase> per run of variant v; policy is the job's noise_policy. */
static void write_runs(FILE *f, json_object *v, const char *vname, bool candidate,
		       const char *policy, struct junit_counts *n)
{
	json_object *runs = member(v, "runs");
	size_t len =
	    json_object_is_type(runs, json_type_array) ? json_object_array_length(runs) : 0;
	for (size_t i = 0; i < len; i++) {
		json_object *r = json_object_array_get_idx(runs, i);
		const char *status = str(r, "status") ? str(r, "status") : "error";
		const char *reason = str(r, "reason");
		double t = num(r, "duration_seconds", 0);
		n->time += t;
		n->tests++;
		testcase_open(f, vname, "runs", str(r, "key") ? str(r, "key") : "run");
		fprintf(f, " time=\"%.3f\">\n", t);
		char msg[1200];
		bool ok = strcmp(status, "ok") == 0;
		if (flag(r, "noisy") && !kernel_failed(status) && strcmp(policy, "keep") != 0) {
			snprintf(
			    msg, sizeof(msg),
			    "%s, noisy: its vCPUs waited %.1f %% of the run for a host CPU%s%s",
			    status, num(member(r, "host_interference"), "vcpu_wait_pct", 0),
			    reason ? ": " : "", reason ? reason : "");
			if (candidate && strcmp(policy, "fail") == 0) {
				n->failures++;
				element(f, "failure", "noisy", msg, msg);
			} else {
				strncat(msg, "; left out of the comparisons",
					sizeof(msg) - strlen(msg) - 1);
				system_out(f, msg);
			}
		} else if (!ok) {
			snprintf(msg, sizeof(msg), "%s: %s", status,
				 reason ? reason : "the run did not finish");
			if (candidate) {
				n->failures++;
				element(f, "failure", status, msg,
					str(r, "console_excerpt") ? str(r, "console_excerpt")
								  : msg);
			} else {
				/* The baseline may be the buggy kernel: its failed runs
				 * are left out and do not fail the job. */
				strncat(msg,
					" (a baseline run: its values are left out; it does "
					"not fail the verdict)",
					sizeof(msg) - strlen(msg) - 1);
				system_out(f, msg);
			}
		}
		fputs("    </testcase>\n", f);
	}
	/* Fail fast (docs/contracts.md): the runs not made after a failure. */
	int skipped = (int)num(v, "skipped_runs", 0);
	if (skipped > 0) {
		char msg[600];
		snprintf(msg, sizeof(msg), "%d run(s) skipped: %s", skipped,
			 str(v, "skipped_reason") ? str(v, "skipped_reason") : "no reason given");
		n->tests++;
		testcase_open(f, vname, "runs", "skipped runs");
		fputs(">\n", f);
		element(f, "skipped", NULL, msg, NULL);
		fputs("    </testcase>\n", f);
	}
	if (flag(v, "not_built")) {
		n->tests++;
		testcase_open(f, vname, NULL, "runs");
		fputs(">\n", f);
		char msg[300];
		snprintf(msg, sizeof(msg),
			 "not run: kernel '%s' did not build (its testcase in suite 'kernels' "
			 "has the failure)",
			 str(v, "kernel") ? str(v, "kernel") : "?");
		element(f, "skipped", NULL, msg, NULL);
		fputs("    </testcase>\n", f);
	}
}

/* One <testcase> per kernel with a build record (docs/contracts.md A). */
static void write_kernels(FILE *f, json_object *kernels, struct junit_counts *n)
{
	json_object_object_foreach(kernels, kname, k)
	{
		json_object *build = member(k, "build");
		if (!build)
			continue;
		const char *status = str(build, "status") ? str(build, "status") : "unknown";
		n->tests++;
		/* A kernel from the cache took no time in this job. */
		double t = flag(k, "cached") ? 0 : num(k, "build_seconds", 0);
		n->time += t;
		testcase_open(f, "kernels", NULL, kname);
		fprintf(f, " time=\"%.3f\">\n", t);
		if (strcmp(status, "ok") == 0) {
			system_out(f, flag(k, "cached") ? "built (from the cache)" : "built");
		} else {
			n->failures++;
			const char *message = str(build, "message") ? str(build, "message")
								    : "the kernel did not build";
			_cleanup_free_ char *text = NULL;
			const char *patch = str(build, "patch"), *option = str(build, "option");
			if (asprintf(&text, "%s\n%s%s%s%s%s--- log excerpt ---\n%s", message,
				     patch ? "patch: " : "", patch ? patch : "",
				     option ? "option: " : "", option ? option : "",
				     patch || option ? "\n" : "",
				     str(build, "log_excerpt") ? str(build, "log_excerpt")
							       : "(none)") < 0)
				text = NULL;
			element(f, "failure", status, message, text ? text : message);
		}
		fputs("    </testcase>\n", f);
	}
}

/* The verdict itself, so the report is red exactly when the job failed. */
static void write_verdict(FILE *f, json_object *result, struct junit_counts *n)
{
	const char *verdict = str(result, "verdict") ? str(result, "verdict") : "unknown";
	json_object *reasons = member(result, "verdict_reasons");
	char *text = NULL;
	size_t text_len = 0;
	FILE *t = open_memstream(&text, &text_len);
	if (!t)
		return;
	fprintf(t, "verdict %s", verdict);
	size_t nr =
	    json_object_is_type(reasons, json_type_array) ? json_object_array_length(reasons) : 0;
	for (size_t i = 0; i < nr; i++) {
		const char *s = json_object_get_string(json_object_array_get_idx(reasons, i));
		fprintf(t, "\n- %s", s ? s : "");
	}
	fclose(t);
	n->tests++;
	testcase_open(f, "verdict", NULL, "verdict");
	fputs(">\n", f);
	if (strcmp(verdict, "pass") == 0)
		system_out(f, text);
	else if (strcmp(verdict, "inconclusive") == 0)
		element(f, "skipped", NULL, text, NULL);
	else {
		n->failures++;
		element(f, "failure", verdict, text, text);
	}
	fputs("    </testcase>\n", f);
	free(text);
}

/* One <testcase> per kernel bug signature (docs/kernel-bugs.md): a
 * <failure type="kernel_bug"> when a candidate shows it and the baseline
 * never did (it fails the verdict), <system-out> otherwise. */
static void write_signatures(FILE *f, json_object *sigs, struct junit_counts *n)
{
	size_t len =
	    json_object_is_type(sigs, json_type_array) ? json_object_array_length(sigs) : 0;
	for (size_t i = 0; i < len; i++) {
		json_object *s = json_object_array_get_idx(sigs, i);
		const char *title = str(s, "title") ? str(s, "title") : "?";
		const char *kind = str(s, "kind") ? str(s, "kind") : "bug";
		json_object *new_in = member(s, "new_in");
		size_t n_new = json_object_is_type(new_in, json_type_array)
				   ? json_object_array_length(new_in)
				   : 0;
		n->tests++;
		testcase_open(f, "signatures", kind, title);
		fputs(">\n", f);
		char msg[800];
		int w =
		    snprintf(msg, sizeof(msg), "%s [%s]%s%s: %d run(s), %s", title, kind,
			     str(s, "location") ? " at " : "",
			     str(s, "location") ? str(s, "location") : "", (int)num(s, "runs", 0),
			     n_new ? "never in the baseline; in" : "seen in the baseline too");
		for (size_t k = 0; k < n_new && w > 0 && (size_t)w < sizeof(msg); k++)
			w += snprintf(msg + w, sizeof(msg) - (size_t)w, " '%s'",
				      json_object_get_string(json_object_array_get_idx(new_in, k)));
		const char *excerpt = str(member(s, "first"), "excerpt");
		if (n_new) {
			n->failures++;
			element(f, "failure", "kernel_bug", msg, excerpt ? excerpt : msg);
		} else {
			system_out(f, msg);
		}
		fputs("    </testcase>\n", f);
	}
}

static void fill_signatures(FILE *f, void *ctx, struct junit_counts *n)
{
	write_signatures(f, ctx, n);
}

/* Writes one <testsuite> with the body that fill writes. */
typedef void (*suite_fill_t)(FILE *f, void *ctx, struct junit_counts *n);

static int write_suite(FILE *f, const char *name, suite_fill_t fill, void *ctx,
		       struct junit_counts *total)
{
	char *body = NULL;
	size_t len = 0;
	FILE *s = open_memstream(&body, &len);
	if (!s)
		return -ENOMEM;
	struct junit_counts n = {0};
	fill(s, ctx, &n);
	fclose(s);
	fputs("  <testsuite name=\"", f);
	junit_escape(f, name);
	fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"0\" time=\"%.3f\">\n", n.tests,
		n.failures, n.time);
	fwrite(body, 1, len, f);
	fputs("  </testsuite>\n", f);
	free(body);
	total->tests += n.tests;
	total->failures += n.failures;
	total->time += n.time;
	return 0;
}

struct variant_ctx {
	json_object *v, *cmps;
	const char *name, *policy;
	bool candidate;
};

static void fill_variant(FILE *f, void *ctx, struct junit_counts *n)
{
	struct variant_ctx *c = ctx;
	write_comparisons(f, c->cmps, c->name, n);
	write_runs(f, c->v, c->name, c->candidate, c->policy, n);
}

static void fill_kernels(FILE *f, void *ctx, struct junit_counts *n)
{
	write_kernels(f, ctx, n);
}

static void fill_verdict(FILE *f, void *ctx, struct junit_counts *n)
{
	write_verdict(f, ctx, n);
}

int junit_from_result(json_object *result, char **ret_xml)
{
	if (!json_object_is_type(result, json_type_object))
		return -EINVAL;
	json_object *variants = member(result, "variants"), *cmps = member(result, "comparisons");
	json_object *job = member(result, "job"), *kernels = member(result, "kernels");
	if (!json_object_is_type(cmps, json_type_array))
		cmps = NULL;
	const char *baseline = str(job, "baseline") ? str(job, "baseline") : "baseline";
	const char *policy = str(job, "noise_policy") ? str(job, "noise_policy") : "exclude";
	/* Suites are written to a second buffer first: the totals go on the
	 * root element. */
	char *body = NULL, *doc = NULL;
	size_t body_len = 0, doc_len = 0;
	FILE *f = open_memstream(&body, &body_len);
	if (!f)
		return -ENOMEM;
	struct junit_counts total = {0};
	int r = 0;
	if (json_object_is_type(kernels, json_type_object))
		r = write_suite(f, "kernels", fill_kernels, kernels, &total);
	if (r == 0 && json_object_is_type(variants, json_type_object)) {
		json_object_object_foreach(variants, vname, v)
		{
			struct variant_ctx c = {.v = v,
						.cmps = cmps,
						.name = vname,
						.policy = policy,
						.candidate = strcmp(vname, baseline) != 0};
			r = write_suite(f, vname, fill_variant, &c, &total);
			if (r < 0)
				break;
		}
	}
	json_object *sigs = member(result, "signatures");
	if (r == 0 && json_object_is_type(sigs, json_type_array) &&
	    json_object_array_length(sigs) > 0)
		r = write_suite(f, "signatures", fill_signatures, sigs, &total);
	if (r == 0 && member(result, "verdict"))
		r = write_suite(f, "verdict", fill_verdict, result, &total);
	fclose(f);
	if (r < 0) {
		free(body);
		return r;
	}
	f = open_memstream(&doc, &doc_len);
	if (!f) {
		free(body);
		return -ENOMEM;
	}
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"schedlab ", f);
	junit_escape(f, str(job, "name") ? str(job, "name") : "job");
	fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"0\" time=\"%.3f\">\n", total.tests,
		total.failures, total.time);
	fwrite(body, 1, body_len, f);
	fputs("</testsuites>\n", f);
	fclose(f);
	free(body);
	*ret_xml = doc;
	return 0;
}
