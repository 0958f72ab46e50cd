/* The walks over a series' prefixes in the printed summary: the
 * bisection's steps and answer, and the per-patch attribution's table. */
#include <stdbool.h>
#include <string.h>

#include "report/summary.h"

static json_object *get(json_object *o, const char *k)
{
	json_object *v = NULL;
	return o && json_object_object_get_ex(o, k, &v) ? v : NULL;
}

static const char *str(json_object *o, const char *k, const char *def)
{
	json_object *v = get(o, k);
	return v ? json_object_get_string(v) : def;
}

static bool is_true(json_object *o, const char *k)
{
	json_object *v = get(o, k);
	return json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
}

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
	if (get(s, "commit"))
		snprintf(buf, sz, "%.12s %.48s", str(s, "commit", "?"), str(s, "subject", ""));
	else
		snprintf(buf, sz, "%.60s", str(s, "last_patch", "?"));
}

/* result.bisection (schedlab test --bisect): each step and the answer. */
void summary_print_bisection(FILE *f, json_object *b)
{
	if (!b)
		return;
	json_object *steps = get(b, "steps");
	size_t n = steps ? json_object_array_length(steps) : 0;
	int total = get(b, "patches") ? json_object_get_int(get(b, "patches")) : 0;
	bool commits = get(b, "commits") != NULL; /* a commit range: name commits */
	fprintf(f, "Bisection of the %d %s (%d build(s), %d boot(s)):\n", total,
		commits ? "commits" : "patches",
		get(b, "builds") ? json_object_get_int(get(b, "builds")) : 0,
		get(b, "boots") ? json_object_get_int(get(b, "boots")) : 0);
	for (size_t i = 0; i < n; i++) {
		json_object *s = json_object_array_get_idx(steps, i);
		char upto[128];
		step_name(s, upto, sizeof(upto));
		fprintf(f, "  first %2d (up to %s): %s%s, %d boot(s), %d run(s) reused\n",
			json_object_get_int(get(s, "patches")), upto, str(s, "verdict", "?"),
			is_true(s, "uncertain") ? " (uncertain)" : "",
			json_object_get_int(get(s, "boots")),
			json_object_get_int(get(s, "reused_runs")));
	}
	if (strcmp(str(b, "status", ""), "found") == 0 && get(b, "first_bad_commit"))
		fprintf(f, "  first failing commit: %d of %d, %s %s%s\n",
			json_object_get_int(get(b, "first_bad")), total,
			str(b, "first_bad_commit", "?"), str(b, "first_bad_subject", ""),
			is_true(b, "certain") ? ""
					      : " (uncertain: a step was inconclusive and "
						"counted good)");
	else if (strcmp(str(b, "status", ""), "found") == 0)
		fprintf(f, "  first failing patch: %d of %d, %s%s\n",
			json_object_get_int(get(b, "first_bad")), total,
			str(b, "first_bad_patch", "?"),
			is_true(b, "certain") ? ""
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
	json_object *steps = get(a, "steps");
	size_t n = steps ? json_object_array_length(steps) : 0;
	fprintf(f,
		"What each patch did (%d %s; %d build(s), %d boot(s); each patch's own change:\n"
		"its prefix against the one before, medians; the prefix's verdict is "
		"against the base):\n",
		json_object_get_int(get(a, "patches")), get(a, "commits") ? "commits" : "patches",
		json_object_get_int(get(a, "builds")), json_object_get_int(get(a, "boots")));
	for (size_t i = 0; i < n; i++) {
		json_object *s = json_object_array_get_idx(steps, i), *added = get(s, "added");
		char name[128];
		step_name(s, name, sizeof(name));
		fprintf(f, "  %2d %s (prefix: %s)\n", json_object_get_int(get(s, "patches")), name,
			str(s, "verdict", "?"));
		json_object *why = get(s, "added_reasons");
		size_t nwhy = why ? json_object_array_length(why) : 0;
		if ((!added || json_object_array_length(added) == 0) && nwhy > 0)
			fprintf(f, "       own change not judged: %s\n",
				json_object_get_string(json_object_array_get_idx(why, nwhy - 1)));
		for (size_t k = 0; added && k < json_object_array_length(added); k++) {
			json_object *c = json_object_array_get_idx(added, k);
			json_object *ci = get(c, "ci95");
			char from[32], to[32], ch[32], lo[32], hi[32], p[32];
			num(from, sizeof(from), get(c, "from"));
			num(to, sizeof(to), get(c, "to"));
			signed_num(ch, sizeof(ch), get(c, "change"));
			num(lo, sizeof(lo), json_object_array_get_idx(ci, 0));
			num(hi, sizeof(hi), json_object_array_get_idx(ci, 1));
			num(p, sizeof(p), get(c, "p_value"));
			fprintf(f, "       %-16s %-28s %8s -> %-8s %8s [%s, %s] p %s: %s\n",
				str(c, "workload", "?"), str(c, "metric", "?"), from, to, ch, lo,
				hi, p, str(c, "verdict", "?"));
		}
	}
	json_object *by = get(a, "carried_by");
	for (size_t i = 0; by && i < json_object_array_length(by); i++) {
		json_object *c = json_object_array_get_idx(by, i);
		fprintf(f, "  %s %s: %s by patch %d (%s)\n", str(c, "workload", "?"),
			str(c, "metric", "?"), str(c, "verdict", "?"),
			json_object_get_int(get(c, "patches")),
			get(c, "commit") ? str(c, "commit", "?") : str(c, "last_patch", "?"));
	}
	if (by && json_object_array_length(by) == 0)
		fprintf(f, "  no patch's own change in a gated metric was decided\n");
	if (strcmp(str(a, "status", ""), "error") == 0)
		fprintf(f, "  incomplete: a step ended in an error (see its job_dir)\n");
	fputc('\n', f);
}
