/* The walks over a series' prefixes in the printed summary: the
 * bisection's steps and answer, and the per-patch attribution's table. */
#include <stdbool.h>
#include <string.h>

#include "report/summary.h"
#include "util/json_get.h"

/* A number of a comparison, or "-" (null or missing). */
static void num(char *buf, size_t sz, json_object *v)
{
	if (!v || json_object_is_type(v, json_type_null))
		snprintf(buf, sz, "-");
	else
		snprintf(buf, sz, "%.3g", json_object_get_double(v));
}

/* A change with its sign, or "-". */
static void signed_num(char *buf, size_t sz, json_object *v)
{
	if (!v || json_object_is_type(v, json_type_null))
		snprintf(buf, sz, "-");
	else
		snprintf(buf, sz, "%+.3g", json_object_get_double(v));
}

/* A step's name: its commit and subject, or its last patch. */
static void step_name(json_object *s, char *buf, size_t sz)
{
	if (json_member(s, "commit"))
		snprintf(buf, sz, "%.12s %.48s", json_member_text(s, "commit", "?"),
			 json_member_text(s, "subject", ""));
	else
		snprintf(buf, sz, "%.60s", json_member_text(s, "last_patch", "?"));
}

/* result.bisection (schedlab test --bisect): each step and the answer. */
void summary_print_bisection(FILE *f, json_object *b)
{
	if (!b)
		return;
	json_object *steps = json_member(b, "steps");
	size_t n = steps ? json_object_array_length(steps) : 0;
	int total = json_member(b, "patches") ? json_object_get_int(json_member(b, "patches")) : 0;
	bool commits = json_member(b, "commits") != NULL; /* a commit range: name commits */
	fprintf(f, "Bisection of the %d %s (%d build(s), %d boot(s)):\n", total,
		commits ? "commits" : "patches",
		json_member(b, "builds") ? json_object_get_int(json_member(b, "builds")) : 0,
		json_member(b, "boots") ? json_object_get_int(json_member(b, "boots")) : 0);
	for (size_t i = 0; i < n; i++) {
		json_object *s = json_object_array_get_idx(steps, i);
		char upto[128];
		step_name(s, upto, sizeof(upto));
		fprintf(f, "  first %2d (up to %s): %s%s, %d boot(s), %d run(s) reused\n",
			json_object_get_int(json_member(s, "patches")), upto,
			json_member_text(s, "verdict", "?"),
			json_member_true(s, "uncertain") ? " (uncertain)" : "",
			json_object_get_int(json_member(s, "boots")),
			json_object_get_int(json_member(s, "reused_runs")));
	}
	if (strcmp(json_member_text(b, "status", ""), "found") == 0 &&
	    json_member(b, "first_bad_commit"))
		fprintf(f, "  first failing commit: %d of %d, %s %s%s\n",
			json_object_get_int(json_member(b, "first_bad")), total,
			json_member_text(b, "first_bad_commit", "?"),
			json_member_text(b, "first_bad_subject", ""),
			json_member_true(b, "certain") ? ""
						       : " (uncertain: a step was inconclusive and "
							 "counted good)");
	else if (strcmp(json_member_text(b, "status", ""), "found") == 0)
		fprintf(f, "  first failing patch: %d of %d, %s%s\n",
			json_object_get_int(json_member(b, "first_bad")), total,
			json_member_text(b, "first_bad_patch", "?"),
			json_member_true(b, "certain") ? ""
						       : " (uncertain: a step was inconclusive and "
							 "counted good)");
	else
		fprintf(f, "  no answer: a step ended in an error (see its job_dir)\n");
	fputc('\n', f);
}

void summary_print_attribution(FILE *f, json_object *a)
{
	if (!a)
		return;
	json_object *steps = json_member(a, "steps");
	size_t n = steps ? json_object_array_length(steps) : 0;
	fprintf(f,
		"What each patch did (%d %s; %d build(s), %d boot(s); each patch's own change:\n"
		"its prefix against the one before, medians; the prefix's verdict is "
		"against the base):\n",
		json_object_get_int(json_member(a, "patches")),
		json_member(a, "commits") ? "commits" : "patches",
		json_object_get_int(json_member(a, "builds")),
		json_object_get_int(json_member(a, "boots")));
	for (size_t i = 0; i < n; i++) {
		json_object *s = json_object_array_get_idx(steps, i),
			    *added = json_member(s, "added");
		char name[128];
		step_name(s, name, sizeof(name));
		fprintf(f, "  %2d %s (prefix: %s)\n",
			json_object_get_int(json_member(s, "patches")), name,
			json_member_text(s, "verdict", "?"));
		json_object *why = json_member(s, "added_reasons");
		size_t nwhy = why ? json_object_array_length(why) : 0;
		if ((!added || json_object_array_length(added) == 0) && nwhy > 0)
			fprintf(f, "       own change not judged: %s\n",
				json_object_get_string(json_object_array_get_idx(why, nwhy - 1)));
		for (size_t k = 0; added && k < json_object_array_length(added); k++) {
			json_object *c = json_object_array_get_idx(added, k);
			json_object *ci = json_member(c, "ci95");
			char from[32], to[32], ch[32], lo[32], hi[32], p[32];
			num(from, sizeof(from), json_member(c, "from"));
			num(to, sizeof(to), json_member(c, "to"));
			signed_num(ch, sizeof(ch), json_member(c, "change"));
			num(lo, sizeof(lo), json_object_array_get_idx(ci, 0));
			num(hi, sizeof(hi), json_object_array_get_idx(ci, 1));
			num(p, sizeof(p), json_member(c, "p_value"));
			fprintf(f, "       %-16s %-28s %8s -> %-8s %8s [%s, %s] p %s: %s\n",
				json_member_text(c, "workload", "?"),
				json_member_text(c, "metric", "?"), from, to, ch, lo, hi, p,
				json_member_text(c, "verdict", "?"));
		}
	}
	json_object *by = json_member(a, "carried_by");
	for (size_t i = 0; by && i < json_object_array_length(by); i++) {
		json_object *c = json_object_array_get_idx(by, i);
		fprintf(f, "  %s %s: %s by patch %d (%s)\n", json_member_text(c, "workload", "?"),
			json_member_text(c, "metric", "?"), json_member_text(c, "verdict", "?"),
			json_object_get_int(json_member(c, "patches")),
			json_member(c, "commit") ? json_member_text(c, "commit", "?")
						 : json_member_text(c, "last_patch", "?"));
	}
	if (by && json_object_array_length(by) == 0)
		fprintf(f, "  no patch's own change in a gated metric was decided\n");
	if (strcmp(json_member_text(a, "status", ""), "error") == 0)
		fprintf(f, "  incomplete: a step ended in an error (see its job_dir)\n");
	fputc('\n', f);
}
