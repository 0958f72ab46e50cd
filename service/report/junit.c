/* JUnit XML from a result; see junit.h. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "report/junit.h"
#include "util/escape.h"

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

static const char *str(json_object *o, const char *k)
{
	json_object *v = NULL;
	if (!o || !json_object_object_get_ex(o, k, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static double num(json_object *o, const char *k, double def)
{
	json_object *v = NULL;
	if (!o || !json_object_object_get_ex(o, k, &v) ||
	    !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
		return def;
	return json_object_get_double(v);
}

static bool run_failed(const char *status)
{
	return status && strcmp(status, "ok") != 0;
}

/* One <testcase> per comparison of variant vname. */
static void write_comparisons(FILE *f, json_object *cmps, const char *vname, int *failures)
{
	size_t n = cmps ? json_object_array_length(cmps) : 0;
	for (size_t i = 0; i < n; i++) {
		json_object *c = json_object_array_get_idx(cmps, i), *b = NULL, *k = NULL;
		const char *variant = str(c, "variant");
		if (!variant || strcmp(variant, vname) != 0)
			continue;
		json_object_object_get_ex(c, "baseline", &b);
		json_object_object_get_ex(c, "candidate", &k);
		const char *verdict = str(c, "verdict") ? str(c, "verdict") : "unknown";
		fputs("    <testcase classname=\"schedlab.", f);
		junit_escape(f, vname);
		fputc('.', f);
		junit_escape(f, str(c, "workload"));
		fputs("\" name=\"", f);
		junit_escape(f, str(c, "metric"));
		fputs("\">\n", f);
		char summary[512];
		snprintf(summary, sizeof(summary),
			 "%s: baseline median %g, candidate median %g, change %+g (%+.1f%%), "
			 "p=%.3g",
			 verdict, num(b, "median", 0), num(k, "median", 0), num(c, "change", 0),
			 num(c, "change_pct", 0), num(c, "p_value", 1));
		if (strcmp(verdict, "regressed") == 0) {
			(*failures)++;
			fputs("      <failure type=\"regressed\" message=\"", f);
			junit_escape(f, summary);
			fputs("\">", f);
			junit_escape(f, summary);
			fputs("</failure>\n", f);
		} else {
			fputs("      <system-out>", f);
			junit_escape(f, summary);
			fputs("</system-out>\n", f);
		}
		fputs("    </testcase>\n", f);
	}
}

/* One <testcase> per run of variant v. */
static void write_runs(FILE *f, json_object *v, const char *vname, int *errors, double *time)
{
	json_object *runs = NULL;
	if (!json_object_object_get_ex(v, "runs", &runs) ||
	    !json_object_is_type(runs, json_type_array))
		return;
	size_t n = json_object_array_length(runs);
	for (size_t i = 0; i < n; i++) {
		json_object *r = json_object_array_get_idx(runs, i);
		const char *status = str(r, "status") ? str(r, "status") : "error";
		double t = num(r, "duration_seconds", 0);
		*time += t;
		fputs("    <testcase classname=\"schedlab.", f);
		junit_escape(f, vname);
		fputs(".runs\" name=\"", f);
		junit_escape(f, str(r, "key") ? str(r, "key") : "run");
		fprintf(f, "\" time=\"%.3f\">\n", t);
		if (run_failed(status)) {
			(*errors)++;
			char msg[1200];
			snprintf(msg, sizeof(msg), "%s: %s", status,
				 str(r, "reason") ? str(r, "reason") : "the run did not finish");
			fputs("      <error type=\"", f);
			junit_escape(f, status);
			fputs("\" message=\"", f);
			junit_escape(f, msg);
			fputs("\">", f);
			junit_escape(f,
				     str(r, "console_excerpt") ? str(r, "console_excerpt") : msg);
			fputs("</error>\n", f);
		}
		fputs("    </testcase>\n", f);
	}
}

static size_t count_tests(json_object *v, json_object *cmps, const char *vname)
{
	size_t n = 0;
	json_object *runs = NULL;
	if (json_object_object_get_ex(v, "runs", &runs) &&
	    json_object_is_type(runs, json_type_array))
		n += json_object_array_length(runs);
	size_t nc = cmps ? json_object_array_length(cmps) : 0;
	for (size_t i = 0; i < nc; i++) {
		const char *variant = str(json_object_array_get_idx(cmps, i), "variant");
		n += variant && strcmp(variant, vname) == 0;
	}
	return n;
}

int junit_from_result(json_object *result, char **ret_xml)
{
	if (!json_object_is_type(result, json_type_object))
		return -EINVAL;
	json_object *variants = NULL, *cmps = NULL, *job = NULL;
	json_object_object_get_ex(result, "variants", &variants);
	json_object_object_get_ex(result, "comparisons", &cmps);
	json_object_object_get_ex(result, "job", &job);
	if (cmps && !json_object_is_type(cmps, json_type_array))
		cmps = NULL;
	/* Suites are written to a second buffer first: the totals go on the
	 * root element. */
	char *body = NULL, *doc = NULL;
	size_t body_len = 0, doc_len = 0;
	FILE *f = open_memstream(&body, &body_len);
	if (!f)
		return -ENOMEM;
	int tests = 0, failures = 0, errors = 0;
	double total_time = 0;
	if (variants && json_object_is_type(variants, json_type_object)) {
		json_object_object_foreach(variants, vname, v)
		{
			int vf = 0, ve = 0;
			double vt = 0;
			char *suite = NULL;
			size_t suite_len = 0;
			FILE *s = open_memstream(&suite, &suite_len);
			if (!s) {
				fclose(f);
				free(body);
				return -ENOMEM;
			}
			write_comparisons(s, cmps, vname, &vf);
			write_runs(s, v, vname, &ve, &vt);
			fclose(s);
			size_t nt = count_tests(v, cmps, vname);
			fputs("  <testsuite name=\"", f);
			junit_escape(f, vname);
			fprintf(f,
				"\" tests=\"%zu\" failures=\"%d\" errors=\"%d\" time=\"%.3f\">\n",
				nt, vf, ve, vt);
			fwrite(suite, 1, suite_len, f);
			fputs("  </testsuite>\n", f);
			free(suite);
			tests += (int)nt;
			failures += vf;
			errors += ve;
			total_time += vt;
		}
	}
	fclose(f);
	f = open_memstream(&doc, &doc_len);
	if (!f) {
		free(body);
		return -ENOMEM;
	}
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"schedlab ", f);
	junit_escape(f, str(job, "name") ? str(job, "name") : "job");
	fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"%d\" time=\"%.3f\">\n", tests,
		failures, errors, total_time);
	fwrite(body, 1, body_len, f);
	fputs("</testsuites>\n", f);
	fclose(f);
	free(body);
	*ret_xml = doc;
	return 0;
}
