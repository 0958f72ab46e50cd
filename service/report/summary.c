#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "report/summary.h"
#include "util/version.h"

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

static void fmt_num(char *buf, size_t len, json_object *v)
{
	if (!v || json_object_is_type(v, json_type_null)) {
		snprintf(buf, len, "-");
		return;
	}
	double d = json_object_get_double(v);
	if (fabs(d) >= 1000 || d == floor(d))
		snprintf(buf, len, "%.0f", d);
	else
		snprintf(buf, len, "%.2f", d);
}

static void print_runs(FILE *f, json_object *result)
{
	fprintf(f, "\nRuns (%s, order: interleaved)\n",
		str(get(result, "environment"), "accelerator", "?"));
	json_object_object_foreach(get(result, "variants"), name, v)
	{
		json_object *runs = get(v, "runs");
		fprintf(f, "  %-20s", name);
		for (size_t i = 0; runs && i < json_object_array_length(runs); i++) {
			json_object *r = json_object_array_get_idx(runs, i);
			fprintf(f, " %s%s", str(r, "status", "?"),
				json_object_get_boolean(get(r, "noisy")) ? "(noisy)" : "");
		}
		fputc('\n', f);
		/* How long the vCPUs waited for a host CPU, per run: the host's part
		 * in what was measured (docs/statistics.md). */
		bool any = false;
		for (size_t i = 0; runs && i < json_object_array_length(runs); i++) {
			json_object *w =
			    get(get(json_object_array_get_idx(runs, i), "host_interference"),
				"vcpu_wait_pct");
			if (!json_object_is_type(w, json_type_double) &&
			    !json_object_is_type(w, json_type_int))
				continue;
			if (!any)
				fprintf(f, "  %-20s", "  vCPU wait %");
			any = true;
			fprintf(f, " %.1f", json_object_get_double(w));
		}
		if (any)
			fputc('\n', f);
		for (size_t i = 0; runs && i < json_object_array_length(runs); i++) {
			json_object *r = json_object_array_get_idx(runs, i);
			if (get(r, "reason"))
				fprintf(f, "    %s: %s\n", str(r, "key", "?"),
					str(r, "reason", ""));
		}
	}
}

static void print_comparison(FILE *f, json_object *c)
{
	char b[32], cand[32], ch[32], lo[32], hi[32], p[32], thr[32];
	fmt_num(b, sizeof(b), get(get(c, "baseline"), "median"));
	fmt_num(cand, sizeof(cand), get(get(c, "candidate"), "median"));
	fmt_num(ch, sizeof(ch), get(c, "change"));
	json_object *ci = get(c, "ci95");
	fmt_num(lo, sizeof(lo), ci ? json_object_array_get_idx(ci, 0) : NULL);
	fmt_num(hi, sizeof(hi), ci ? json_object_array_get_idx(ci, 1) : NULL);
	json_object *pv = get(c, "p_value");
	if (pv && !json_object_is_type(pv, json_type_null))
		snprintf(p, sizeof(p), "%.3f", json_object_get_double(pv));
	else
		snprintf(p, sizeof(p), "-");
	fmt_num(thr, sizeof(thr), get(c, "threshold"));
	char metric[80];
	snprintf(metric, sizeof(metric), "%s%s", str(c, "metric", "?"),
		 get(c, "gated") && json_object_get_boolean(get(c, "gated")) ? " *" : "");
	/* The threshold beside the verdict, so a large change that is
	 * "unchanged" reads as within it, not as a bug. */
	fprintf(f, "  %-14s %-16s %-30s %10s %10s %10s  [%s, %s] %6s  \u00b1%-8s %s\n",
		str(c, "variant", "?"), str(c, "workload", "?"), metric, b, cand, ch, lo, hi, p,
		thr, str(c, "verdict", "?"));
}

void summary_print(FILE *f, json_object *result)
{
	fprintf(f, "\nschedlab: %s\n", str(get(result, "job"), "name", "job"));
	print_runs(f, result);
	json_object *cmp = get(result, "comparisons");
	size_t n = cmp ? json_object_array_length(cmp) : 0;
	fprintf(f, "\nComparisons against baseline '%s' (medians; * = gated)\n",
		str(get(result, "job"), "baseline", "?"));
	fprintf(f, "  %-14s %-16s %-30s %10s %10s %10s  %s %6s  %-9s %s\n", "variant", "workload",
		"metric", "baseline", "candidate", "change", "[95% CI]", "p", "threshold",
		"verdict");
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n; i++) {
			json_object *c = json_object_array_get_idx(cmp, i);
			bool gated = get(c, "gated") && json_object_get_boolean(get(c, "gated"));
			if (gated == (pass == 0))
				print_comparison(f, c);
		}
	json_object *rep = get(result, "repeats");
	if (rep)
		fprintf(
		    f,
		    "\nrepeats: %d round(s) run (min %d, max %d, %d noisy rerun(s), level %.3g per "
		    "look): %s\n",
		    json_object_get_int(get(rep, "rounds_run")),
		    json_object_get_int(get(rep, "min")), json_object_get_int(get(rep, "max")),
		    json_object_get_int(get(rep, "noisy_reruns")),
		    json_object_get_double(get(rep, "alpha_per_look")), str(rep, "stopped", "?"));
	fprintf(f, "\nverdict: %s\n", str(result, "verdict", "?"));
	json_object *reasons = get(result, "verdict_reasons");
	for (size_t i = 0; reasons && i < json_object_array_length(reasons); i++)
		fprintf(f, "  - %s\n",
			json_object_get_string(json_object_array_get_idx(reasons, i)));
}

int summary_exit_code(json_object *result)
{
	const char *v = str(result, "verdict", "");
	if (strcmp(v, "pass") == 0)
		return EXIT_PASS;
	if (strcmp(v, "fail") == 0)
		return EXIT_FAIL;
	if (strcmp(v, "inconclusive") == 0)
		return EXIT_INCONCLUSIVE;
	return EXIT_ERROR;
}
