/* JUnit XML from a result; see junit.h for the shape and the rules. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "compare/result_model.h"
#include "report/junit.h"
#include "util/json_get.h"
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

#define HAS_C(c, name) model_has(MODEL_COMPARISON, &(c)->has, name)

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
static void write_comparisons(FILE *f, const struct model_result *m, const char *vname,
			      struct junit_counts *n)
{
	for (size_t i = 0; i < m->n_comparisons; i++) {
		const struct model_comparison *c = &m->comparisons[i];
		if (strcmp(c->variant, vname) != 0)
			continue;
		json_object *b = c->baseline, *k = c->candidate;
		const char *verdict = c->verdict;
		bool gated = c->gated;
		n->tests++;
		testcase_open(f, vname, c->workload, c->metric);
		fputs(">\n", f);
		char thr[48], ci[80], pct[48] = "", summary[840];
		if (HAS_C(c, "change_pct"))
			snprintf(pct, sizeof(pct), " (%+.1f%%)", c->change_pct);
		snprintf(thr, sizeof(thr), "%g", HAS_C(c, "threshold") ? c->threshold : 0);
		json_object *jci = c->ci95;
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
		property(f, "relative", c->relative ? "true" : "false");
		fputs("      </properties>\n", f);
		/* An undecided row says why, as the summary table does, so a
		 * CI page never reads "no change" where the data said "don't
		 * know". */
		char why[200] = "";
		if (c->undecided_reason)
			snprintf(why, sizeof(why), " (%.180s)", c->undecided_reason);
		snprintf(summary, sizeof(summary),
			 "%s%s%s: baseline median %g, candidate median %g, change %+g%s, "
			 "%s %s, threshold \u00b1%s, p=%.3g",
			 verdict, why, gated ? "" : " (not gated)",
			 json_member_number_or(b, "median", 0),
			 json_member_number_or(k, "median", 0), HAS_C(c, "change") ? c->change : 0,
			 pct, HAS_C(c, "ci_method") ? "interval" : "95% CI", ci, thr,
			 HAS_C(c, "p_value") ? c->p_value : 1);
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
static void write_runs(FILE *f, const struct model_variant *v, bool candidate, const char *policy,
		       struct junit_counts *n)
{
	const char *vname = v->name;
	for (size_t i = 0; i < v->n_runs; i++) {
		const struct model_run *r = &v->runs[i];
		const char *status = r->status;
		const char *reason = r->reason;
		double t =
		    model_has(MODEL_RUN, &r->has, "duration_seconds") ? r->duration_seconds : 0;
		n->time += t;
		n->tests++;
		testcase_open(f, vname, "runs", r->key);
		fprintf(f, " time=\"%.3f\">\n", t);
		char msg[1200];
		bool ok = strcmp(status, "ok") == 0;
		if (r->noisy && !kernel_failed(status) && strcmp(policy, "keep") != 0) {
			snprintf(
			    msg, sizeof(msg),
			    "%s, noisy: its vCPUs waited %.1f %% of the run for a host CPU%s%s",
			    status, json_member_number_or(r->host_interference, "vcpu_wait_pct", 0),
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
					r->console_excerpt ? r->console_excerpt : msg);
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
	int skipped = model_has(MODEL_VARIANT, &v->has, "skipped_runs") ? (int)v->skipped_runs : 0;
	if (skipped > 0) {
		char msg[600];
		snprintf(msg, sizeof(msg), "%d run(s) skipped: %s", skipped,
			 v->skipped_reason ? v->skipped_reason : "no reason given");
		n->tests++;
		testcase_open(f, vname, "runs", "skipped runs");
		fputs(">\n", f);
		element(f, "skipped", NULL, msg, NULL);
		fputs("    </testcase>\n", f);
	}
	if (json_object_is_type(v->not_built, json_type_boolean) &&
	    json_object_get_boolean(v->not_built)) {
		n->tests++;
		testcase_open(f, vname, NULL, "runs");
		fputs(">\n", f);
		char msg[300];
		snprintf(msg, sizeof(msg),
			 "not run: kernel '%s' did not build (its testcase in suite 'kernels' "
			 "has the failure)",
			 v->kernel);
		element(f, "skipped", NULL, msg, NULL);
		fputs("    </testcase>\n", f);
	}
}

/* One <testcase> per kernel with a build record (docs/contracts.md A). */
static void write_kernels(FILE *f, json_object *kernels, struct junit_counts *n)
{
	json_object_object_foreach(kernels, kname, k)
	{
		json_object *build = json_member(k, "build");
		if (!build)
			continue;
		const char *status = json_member_string(build, "status")
					 ? json_member_string(build, "status")
					 : "unknown";
		n->tests++;
		/* A kernel from the cache took no time in this job. */
		json_object *cached = json_member(k, "cached");
		bool from_cache = json_object_is_type(cached, json_type_boolean) &&
				  json_object_get_boolean(cached);
		double t = from_cache ? 0 : json_member_number_or(k, "build_seconds", 0);
		n->time += t;
		testcase_open(f, "kernels", NULL, kname);
		fprintf(f, " time=\"%.3f\">\n", t);
		if (strcmp(status, "ok") == 0) {
			system_out(f, from_cache ? "built (from the cache)" : "built");
		} else {
			n->failures++;
			const char *message = json_member_string(build, "message")
						  ? json_member_string(build, "message")
						  : "the kernel did not build";
			_cleanup_free_ char *text = NULL;
			const char *patch = json_member_string(build, "patch"),
				   *option = json_member_string(build, "option");
			if (asprintf(&text, "%s\n%s%s%s%s%s--- log excerpt ---\n%s", message,
				     patch ? "patch: " : "", patch ? patch : "",
				     option ? "option: " : "", option ? option : "",
				     patch || option ? "\n" : "",
				     json_member_string(build, "log_excerpt")
					 ? json_member_string(build, "log_excerpt")
					 : "(none)") < 0)
				text = NULL;
			element(f, "failure", status, message, text ? text : message);
		}
		fputs("    </testcase>\n", f);
	}
}

/* The verdict itself, so the report is red exactly when the job failed. */
static void write_verdict(FILE *f, const struct model_result *m, struct junit_counts *n)
{
	const char *verdict = m->verdict;
	json_object *reasons = m->verdict_reasons;
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
static void write_signatures(FILE *f, const struct model_result *m, struct junit_counts *n)
{
	for (size_t i = 0; i < m->n_signatures; i++) {
		const struct model_signature *s = &m->signatures[i];
		const char *title = s->title ? s->title : "?";
		const char *kind = s->kind ? s->kind : "bug";
		size_t n_new = s->new_in ? json_object_array_length(s->new_in) : 0;
		n->tests++;
		testcase_open(f, "signatures", kind, title);
		fputs(">\n", f);
		char msg[800];
		int w = snprintf(msg, sizeof(msg), "%s [%s]%s%s: %d run(s), %s", title, kind,
				 s->location ? " at " : "", s->location ? s->location : "",
				 (int)s->runs,
				 n_new ? "never in the baseline; in" : "seen in the baseline too");
		for (size_t k = 0; k < n_new && w > 0 && (size_t)w < sizeof(msg); k++)
			w += snprintf(msg + w, sizeof(msg) - (size_t)w, " '%s'",
				      json_object_get_string(json_item(s->new_in, k)));
		const char *excerpt = s->first.excerpt;
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
	const struct model_result *m;
	const struct model_variant *v;
	const char *policy;
	bool candidate;
};

static void fill_variant(FILE *f, void *ctx, struct junit_counts *n)
{
	struct variant_ctx *c = ctx;
	write_comparisons(f, c->m, c->v->name, n);
	write_runs(f, c->v, c->candidate, c->policy, n);
}

static void fill_kernels(FILE *f, void *ctx, struct junit_counts *n)
{
	write_kernels(f, ctx, n);
}

static void fill_verdict(FILE *f, void *ctx, struct junit_counts *n)
{
	write_verdict(f, ctx, n);
}

int junit_from_result(json_object *result, char **ret_xml, struct sl_error *err)
{
	struct model_result m = {0};
	if (!json_object_is_type(result, json_type_object))
		return error_set(err, ERR_INVALID, EINVAL, "The result is not a JSON object.");
	int r = model_result_parse(result, &m, err);
	if (r < 0)
		return r;
	r = junit_from_model(&m, ret_xml);
	model_result_free(&m);
	if (r < 0)
		return error_set(err, ERR_INTERNAL, -r, "Out of memory while writing JUnit XML.");
	return 0;
}

int junit_from_model(const struct model_result *m, char **ret_xml)
{
	json_object *job = m->job, *kernels = m->kernels;
	const char *baseline = json_member_string(job, "baseline");
	const char *policy = json_member_string(job, "noise_policy");
	if (!baseline)
		baseline = "baseline";
	if (!policy)
		policy = "exclude";
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
	for (size_t i = 0; r == 0 && i < m->n_variants; i++) {
		const struct model_variant *v = &m->variants[i];
		struct variant_ctx c = {
		    .m = m, .v = v, .policy = policy, .candidate = strcmp(v->name, baseline) != 0};
		r = write_suite(f, v->name, fill_variant, &c, &total);
	}
	if (r == 0 && m->n_signatures > 0)
		r = write_suite(f, "signatures", fill_signatures, (void *)m, &total);
	if (r == 0)
		r = write_suite(f, "verdict", fill_verdict, (void *)m, &total);
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
	junit_escape(f, json_member_string(job, "name") ? json_member_string(job, "name") : "job");
	fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"0\" time=\"%.3f\">\n", total.tests,
		total.failures, total.time);
	fwrite(body, 1, body_len, f);
	fputs("</testsuites>\n", f);
	fclose(f);
	free(body);
	*ret_xml = doc;
	return 0;
}
