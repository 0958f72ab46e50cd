#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "compare/noise.h"
#include "compare/result_model.h"
#include "report/summary.h"
#include "util/version.h"
#include "util/json_get.h"

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

/* fmt_num() of a typed number: "-" when the model says it was absent or
 * null. */
static void fmt_d(char *buf, size_t len, bool has, double d)
{
	if (!has) {
		snprintf(buf, len, "-");
		return;
	}
	if (fabs(d) >= 1000 || d == floor(d))
		snprintf(buf, len, "%.0f", d);
	else
		snprintf(buf, len, "%.2f", d);
}

#define HAS_C(c, name) model_has(MODEL_COMPARISON, &(c)->has, name)
#define HAS_R(r, name) model_has(MODEL_RUN, &(r)->has, name)
#define HAS_V(v, name) model_has(MODEL_VARIANT, &(v)->has, name)

/* An int64 as json_object_get_int() gave it before the model: clamped. */
static int clamp_int(int64_t v)
{
	return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int)v;
}

/* Up to max_lines lines of text, each indented; a longer text ends with
 * how many lines were left out. */
static void print_lines(FILE *f, const char *indent, const char *text, int max_lines)
{
	int n = 0;
	for (const char *p = text; p && *p; n++) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (n == max_lines) {
			int rest = 0;
			for (const char *q = p; q && *q; q = strchr(q, '\n'), q = q ? q + 1 : NULL)
				rest++;
			fprintf(f, "%s... (%d more line(s) in the result's log_excerpt)\n", indent,
				rest);
			return;
		}
		fprintf(f, "%s%.*s\n", indent, (int)(len > 200 ? 200 : len), p);
		p = nl ? nl + 1 : NULL;
	}
}

/* Contract A (docs/contracts.md): one block per kernel that did not build. */
static void print_build_failures(FILE *f, const struct model_result *m)
{
	int header = 0;
	json_object *kernels = m->kernels;
	if (!json_object_is_type(kernels, json_type_object))
		return;
	json_object_object_foreach(kernels, name, k)
	{
		json_object *b = json_member(k, "build");
		const char *status = json_member_text(b, "status", NULL);
		if (!b || (status && strcmp(status, "ok") == 0))
			continue;
		if (!header)
			fprintf(f, "\nKernels that did not build\n");
		header = true;
		fprintf(f, "  %s: %s", name, status ? status : "unknown");
		if (json_member(b, "patch"))
			fprintf(f, " (patch %s)", json_member_text(b, "patch", ""));
		if (json_member(b, "option"))
			fprintf(f, " (option %s)", json_member_text(b, "option", ""));
		fputc('\n', f);
		if (json_member(b, "message"))
			fprintf(f, "    %s\n", json_member_text(b, "message", ""));
		print_lines(f, "    | ", json_member_text(b, "log_excerpt", NULL), 12);
	}
}

/* The guest's shape, and the topology and sched domains its first run read
 * back (docs/guests.md "Topology"). */
static void print_guest(FILE *f, const struct model_result *m)
{
	json_object *g = json_member(m->job, "guest");
	if (!g)
		return;
	fprintf(f, "  guest: %d vCPU(s), %d MiB", json_object_get_int(json_member(g, "vcpus")),
		json_object_get_int(json_member(g, "memory_mb")));
	json_object *t = json_member(g, "topology");
	if (t)
		fprintf(f, ", %d socket(s) x %d core(s) x %d thread(s)",
			json_object_get_int(json_member(t, "sockets")),
			json_object_get_int(json_member(t, "cores")),
			json_object_get_int(json_member(t, "threads")));
	json_object *numa = json_member(g, "numa");
	size_t n_numa =
	    json_object_is_type(numa, json_type_array) ? json_object_array_length(numa) : 0;
	for (size_t i = 0; i < n_numa && i < 8; i++) {
		json_object *cell = json_object_array_get_idx(numa, i);
		fprintf(f, "%s%.32s/%d MiB", i ? " " : ", NUMA nodes ",
			json_member_text(cell, "cpus", "?"),
			json_object_get_int(json_member(cell, "memory_mb")));
	}
	json_object *seen = NULL, *pinned_ex = NULL, *floating_ex = NULL;
	int pinned = 0, runs_seen = 0;
	for (size_t vi = 0; vi < m->n_variants; vi++) {
		const struct model_variant *v = &m->variants[vi];
		for (size_t i = 0; i < v->n_runs; i++) {
			const struct model_run *run = &v->runs[i];
			if (!seen)
				seen = run->topology;
			json_object *p = run->pinning;
			if (!p)
				continue;
			runs_seen++;
			if (json_member_true(p, "pinned")) {
				pinned++;
				pinned_ex = pinned_ex ? pinned_ex : p;
			} else {
				floating_ex = floating_ex ? floating_ex : p;
			}
		}
	}
	json_object *d = json_member(seen, "sched_domains");
	if (json_object_is_type(d, json_type_array) && json_object_array_length(d) > 0) {
		fprintf(f, "; sched domains");
		for (size_t i = 0; i < json_object_array_length(d); i++)
			fprintf(f, " %s", json_object_get_string(json_object_array_get_idx(d, i)));
	}
	fputc('\n', f);
	/* docs/guests.md "Pinning": how many runs were pinned, and where. */
	if (pinned_ex) {
		json_object *vc = json_member(pinned_ex, "vcpus");
		fprintf(f, "  pinning: %d of %d run(s) pinned, e.g. vCPUs on host CPU(s)", pinned,
			runs_seen);
		for (size_t i = 0; json_object_is_type(vc, json_type_array) &&
				   i < json_object_array_length(vc) && i < 64;
		     i++)
			fprintf(f, "%s%d", i ? "," : " ",
				json_object_get_int(json_object_array_get_idx(vc, i)));
		fprintf(f, ", emulator on %.64s\n", json_member_text(pinned_ex, "emulator", "?"));
	} else if (floating_ex) {
		fprintf(f, "  pinning: none (%.300s)\n",
			json_member_text(floating_ex, "reason", "?"));
	}
}

/* The debug preset ("lockdep") of the kernel variant vname booted, or NULL
 * for a normal build (result.kernels.K.debug, docs/kernel-bugs.md). */
static const char *variant_debug(const struct model_result *m, const struct model_variant *v)
{
	const char *kernel = v->kernel;
	json_object *d = kernel ? json_member(json_member(m->kernels, kernel), "debug") : NULL;
	return json_object_is_type(d, json_type_string) ? json_object_get_string(d) : NULL;
}

/* Which variants ran debug kernels: their timings include the checks
 * (lockdep on every lock taken under TCG), so nobody reads one as a
 * production kernel's latency. Nothing for a job of normal kernels. */
static void print_debug_kernels(FILE *f, const struct model_result *m)
{
	int n = 0;
	for (size_t vi = 0; vi < m->n_variants; vi++) {
		const struct model_variant *v = &m->variants[vi];
		const char *preset = variant_debug(m, v);
		if (!preset)
			continue;
		if (n == 0)
			fprintf(f, "\nDebug kernels:");
		if (n < 16)
			fprintf(f, "%s %.64s (kernel '%.64s', %.32s build)", n ? "," : "", v->name,
				v->kernel, preset);
		n++;
	}
	if (n > 16)
		fprintf(f, " and %d more", n - 16);
	if (n)
		fprintf(f,
			".\n  Debug builds check locking and sleeping as they run: their timings "
			"measure the checks too,\n  not a production kernel's latency "
			"(docs/kernel-bugs.md, \"The debug variant\").\n");
}

/* One variant's line of run statuses, then what each run adds: the vCPU
 * wait, the sched_ext state, the reason of one that failed. */
static void print_variant_runs(FILE *f, const struct model_result *m, const struct model_variant *v)
{
	const char *preset = variant_debug(m, v);
	if (preset) {
		char tagged[128];
		snprintf(tagged, sizeof(tagged), "%.64s [%.32s]", v->name, preset);
		fprintf(f, "  %-20s", tagged);
	} else {
		fprintf(f, "  %-20s", v->name);
	}
	if (json_object_is_type(v->not_built, json_type_boolean) &&
	    json_object_get_boolean(v->not_built)) {
		fprintf(f, " not built (kernel '%s': %s)\n", v->kernel,
			json_member_text(json_member(json_member(m->kernels, v->kernel), "build"),
					 "status", "did not build"));
		return;
	}
	for (size_t i = 0; i < v->n_runs; i++)
		fprintf(f, " %s%s", v->runs[i].status, v->runs[i].noisy ? "(noisy)" : "");
	fputc('\n', f);
	/* How long the vCPUs waited for a host CPU, per run: the host's part
	 * in what was measured (docs/statistics.md). */
	bool any = false;
	for (size_t i = 0; i < v->n_runs; i++) {
		json_object *w = json_member(v->runs[i].host_interference, "vcpu_wait_pct");
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
	/* The variant's sched_ext scheduler as each run read it back
	 * (docs/sched-ext.md): state/ops, and the exit reason of one
	 * that was ejected. */
	any = false;
	for (size_t i = 0; i < v->n_runs; i++) {
		json_object *x = v->runs[i].sched_ext;
		if (!x)
			continue;
		if (!any)
			fprintf(f, "    sched_ext %s:", json_member_text(x, "scheduler", "?"));
		any = true;
		const char *end = json_member_text(x, "state_end", NULL);
		fprintf(f, " %s/%s%s%s",
			*json_member_text(x, "state", "") ? json_member_text(x, "state", "") : "-",
			*json_member_text(x, "ops", "") ? json_member_text(x, "ops", "") : "-",
			end && strcmp(end, "enabled") != 0 ? "->" : "",
			end && strcmp(end, "enabled") != 0 ? end : "");
	}
	if (any)
		fputc('\n', f);
	for (size_t i = 0; i < v->n_runs; i++)
		if (HAS_R(&v->runs[i], "reason"))
			fprintf(f, "    %s: %s\n", v->runs[i].key, v->runs[i].reason);
	/* Fail fast: the runs left out after a hang, panic or crash. */
	if (HAS_V(v, "skipped_runs") && clamp_int(v->skipped_runs) > 0)
		fprintf(f, "    skipped %d run(s): %s\n", clamp_int(v->skipped_runs),
			v->skipped_reason ? v->skipped_reason : "no reason given");
}

static void print_runs(FILE *f, const struct model_result *m)
{
	fprintf(f, "\nRuns (%s, order: interleaved)\n",
		json_member_text(m->environment, "accelerator", "?"));
	print_guest(f, m);
	for (size_t vi = 0; vi < m->n_variants; vi++)
		print_variant_runs(f, m, &m->variants[vi]);
}

/* Which gates the verdict used: the job's, its workloads' defaults, or none
 * because it opted out (job.schema.json gates_opt_out). */
static void print_gates(FILE *f, json_object *job)
{
	json_object *gates = json_member(job, "gates");
	size_t n =
	    json_object_is_type(gates, json_type_array) ? json_object_array_length(gates) : 0;
	if (n == 0) {
		fprintf(f, "gates: none%s\n",
			json_member_true(job, "gates_opt_out")
			    ? ": the job opted out (\"gates\": []); only failed runs and new "
			      "kernel bug signatures fail it"
			    : "; only failed runs and new kernel bug signatures fail the job");
		return;
	}
	size_t n_default = 0;
	for (size_t i = 0; i < n; i++)
		n_default += json_member_true(json_object_array_get_idx(gates, i), "default");
	fprintf(f, "gates: %s:",
		n_default == n	 ? "the workloads' defaults (docs/workloads.md)"
		: n_default == 0 ? "the job's"
				 : "the job's and the workloads' defaults");
	for (size_t i = 0; i < n; i++) {
		json_object *g = json_object_array_get_idx(gates, i);
		fprintf(f, "%s %s/%s", i ? "," : "", json_member_text(g, "workload", "?"),
			json_member_text(g, "metric", "?"));
	}
	fputc('\n', f);
}

static bool number(json_object *v, double *out)
{
	if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
		return false;
	*out = json_object_get_double(v);
	return isfinite(*out);
}

/* A typed number that was present, not null and finite. */
static bool typed(const struct model_comparison *c, const char *name, double v, double *out)
{
	*out = v;
	return HAS_C(c, name) && isfinite(v);
}

void summary_unchanged_note(const struct model_comparison *c, const char *thr_text, char *buf,
			    size_t sz)
{
	buf[0] = '\0';
	/* The rule names its own reason (compare/decide.c): an undecided or
	 * inconclusive row says why, e.g. "interval crosses ±28.75". */
	const char *why = c->undecided_reason ? c->undecided_reason : "";
	if (*why) {
		snprintf(buf, sz, " (%s)", why);
		return;
	}
	/* A result from before December 2026 called "unchanged" what it could
	 * not tell; say so from its numbers. */
	if (HAS_C(c, "ci_method"))
		return;
	double change, thr, lo, hi, p, alpha;
	json_object *ci = c->ci95;
	if (strcmp(c->verdict, "unchanged") != 0 || !typed(c, "change", c->change, &change) ||
	    !typed(c, "threshold", c->threshold, &thr) || fabs(change) <= thr ||
	    !json_object_is_type(ci, json_type_array) || json_object_array_length(ci) != 2 ||
	    !number(json_object_array_get_idx(ci, 0), &lo) ||
	    !number(json_object_array_get_idx(ci, 1), &hi))
		return;
	if (lo > thr || hi < -thr) {
		if (typed(c, "p_value", c->p_value, &p) && typed(c, "alpha", c->alpha, &alpha))
			snprintf(buf, sz, " (p %.3g above alpha %.3g)", p, alpha);
		return;
	}
	snprintf(buf, sz, " (CI reaches within \u00b1%s)", thr_text);
}

static void print_comparison(FILE *f, const struct model_comparison *c)
{
	char b[32], cand[32], ch[32], lo[32], hi[32], p[32], thr[32];
	fmt_num(b, sizeof(b), json_member(c->baseline, "median"));
	fmt_num(cand, sizeof(cand), json_member(c->candidate, "median"));
	fmt_d(ch, sizeof(ch), HAS_C(c, "change"), c->change);
	/* the % change beside the absolute one, as latency numbers are quoted */
	char chp[48];
	if (HAS_C(c, "change_pct"))
		snprintf(chp, sizeof(chp), "%s (%+.1f%%)", ch, c->change_pct);
	else
		snprintf(chp, sizeof(chp), "%s", ch);
	json_object *ci = c->ci95;
	if (!json_object_is_type(ci, json_type_array) || json_object_array_length(ci) != 2)
		ci = NULL;
	fmt_num(lo, sizeof(lo), ci ? json_object_array_get_idx(ci, 0) : NULL);
	fmt_num(hi, sizeof(hi), ci ? json_object_array_get_idx(ci, 1) : NULL);
	if (HAS_C(c, "p_value"))
		snprintf(p, sizeof(p), "%.3f", c->p_value);
	else
		snprintf(p, sizeof(p), "-");
	fmt_d(thr, sizeof(thr), HAS_C(c, "threshold"), c->threshold);
	char metric[80], note[208];
	snprintf(metric, sizeof(metric), "%s%s", c->metric, c->gated ? " *" : "");
	/* The threshold beside the verdict, and why an undecided row is
	 * undecided, so that reads as the rule, not as a bug. */
	summary_unchanged_note(c, thr, note, sizeof(note));
	fprintf(f, "  %-14s %-16s %-30s %10s %10s %18s  [%s, %s] %6s  \u00b1%-8s %s%s\n",
		c->variant, c->workload, metric, b, cand, chp, lo, hi, p, thr, c->verdict, note);
}

bool summary_schedstat_metric(const char *metric)
{
	return metric && strncmp(metric, "schedstat.", 10) == 0;
}

bool summary_schedstat_shown(const struct model_comparison *c)
{
	const char *m = c->metric;
	if (!summary_schedstat_metric(m))
		return false;
	return strcmp(c->verdict, "changed") == 0 ||
	       (strncmp(m + 10, "cpu", 3) != 0 && strncmp(m + 10, "domain", 6) != 0);
}

bool summary_same_group(const struct model_comparison *a, const struct model_comparison *b)
{
	return strcmp(a->variant, b->variant) == 0 && strcmp(a->workload, b->workload) == 0;
}

bool summary_schedstat_group_start(const struct model_result *m, size_t i)
{
	const struct model_comparison *c = &m->comparisons[i];
	if (!summary_schedstat_metric(c->metric))
		return false;
	for (size_t k = 0; k < i; k++) {
		const struct model_comparison *e = &m->comparisons[k];
		if (summary_same_group(e, c) && summary_schedstat_metric(e->metric))
			return false;
	}
	return true;
}

bool summary_schedstat_own_row(const struct model_comparison *c)
{
	return !summary_schedstat_metric(c->metric) &&
	       (strcmp(c->verdict, "unchanged") != 0 || c->gated);
}

/* Why a metric moved: per variant and workload that has schedstat rows,
 * the workload's own decided or gated rows in one line, then the schedstat
 * totals and every schedstat row that changed, and how many more did not. */
static void print_schedstat(FILE *f, const struct model_result *m)
{
	size_t n = m->n_comparisons;
	int header = 0;
	for (size_t i = 0; i < n; i++) {
		const struct model_comparison *c = &m->comparisons[i];
		if (!summary_schedstat_group_start(m, i))
			continue;
		if (!header++)
			fprintf(f, "\nschedstat: what moved (not gated; docs/workloads.md "
				   "\"schedstat\")\n");
		fprintf(f, "  %s / %s: its own metrics:", c->variant, c->workload);
		int own = 0, folded = 0;
		for (size_t k = 0; k < n; k++) {
			const struct model_comparison *e = &m->comparisons[k];
			if (!summary_same_group(e, c) || !summary_schedstat_own_row(e))
				continue;
			char ch[32];
			fmt_d(ch, sizeof(ch), HAS_C(e, "change_pct"), e->change_pct);
			if (own++ < 6)
				fprintf(f, " %s %s (%s%s%%)", e->metric, e->verdict,
					ch[0] == '-' ? "" : "+", ch);
		}
		fprintf(f, "%s\n", own == 0 ? " unchanged" : own > 6 ? " ..." : "");
		for (size_t k = i; k < n; k++) {
			const struct model_comparison *e = &m->comparisons[k];
			if (!summary_same_group(e, c) || !summary_schedstat_metric(e->metric))
				continue;
			if (summary_schedstat_shown(e))
				print_comparison(f, e);
			else
				folded++;
		}
		if (folded)
			fprintf(f,
				"  (%d more schedstat row(s) per CPU and domain, none changed: in "
				"result.json and the report)\n",
				folded);
	}
}

void summary_print_model(FILE *f, const struct model_result *m)
{
	fprintf(f, "\nschedlab: %s\n", json_member_text(m->job, "name", "job"));
	print_debug_kernels(f, m);
	print_build_failures(f, m);
	print_runs(f, m);
	size_t n = m->n_comparisons;
	fprintf(f,
		"\nComparisons against baseline '%s' (medians; * = gated; interval: of the "
		"shift, at 1 - 2 alpha)\n",
		json_member_text(m->job, "baseline", "?"));
	fprintf(f, "  %-14s %-16s %-30s %10s %10s %18s  %s %6s  %-9s %s\n", "variant", "workload",
		"metric", "baseline", "candidate", "change", "[interval]", "p", "threshold",
		"verdict");
	if (n == 0)
		fprintf(f, "  (none: no metric was measured in both the baseline and another "
			   "variant)\n");
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n; i++) {
			const struct model_comparison *c = &m->comparisons[i];
			if (c->gated == (pass == 0) && !summary_schedstat_metric(c->metric))
				print_comparison(f, c);
		}
	print_schedstat(f, m);
	json_object *rep = m->repeats;
	if (rep)
		fprintf(
		    f,
		    "\nrepeats: %d round(s) run (min %d, max %d, %d noisy rerun(s), level %.3g per "
		    "look): %s\n",
		    json_object_get_int(json_member(rep, "rounds_run")),
		    json_object_get_int(json_member(rep, "min")),
		    json_object_get_int(json_member(rep, "max")),
		    json_object_get_int(json_member(rep, "noisy_reruns")),
		    json_object_get_double(json_member(rep, "alpha_per_look")),
		    json_member_text(rep, "stopped", "?"));
	json_object *lim = json_member(rep, "noise_limit_pct");
	if (lim) {
		const char *src = json_member_text(rep, "noise_limit_source", "");
		json_object *aa = json_member(rep, "calibration_vcpu_wait_pct_p90");
		fprintf(f,
			"noise limit: a run whose vCPUs waited over %.3g %% for a host CPU while "
			"other processes took over %.3g %% of it, or one beside other processes "
			"that took over %.3g %%, is noisy",
			json_object_get_double(lim), NOISE_OTHERS_LIMIT_PCT, NOISE_OTHERS_BUSY_PCT);
		if (strcmp(src, "calibration") == 0 && aa)
			fprintf(f,
				" (from the A/A calibration: 9 in 10 of its runs waited at most "
				"%.3g %%)\n",
				json_object_get_double(aa));
		else if (strcmp(src, "job") == 0)
			fprintf(f, " (the job's noise_limit_pct)\n");
		else
			fprintf(f, " (the default; `schedlab calibrate` sets one for this host)\n");
	}
	json_object *cal = m->calibration;
	for (size_t i = 0; json_object_is_type(cal, json_type_array) &&
			   i < json_object_array_length(cal) && i < 64;
	     i++) {
		json_object *e = json_object_array_get_idx(cal, i);
		fprintf(f,
			"calibration: workload '%s': default thresholds from the A/A calibration "
			"%.12s made %s (%d boots on %s)\n",
			json_member_text(e, "workload", "?"), json_member_text(e, "key", "?"),
			json_member_text(e, "made_at", "?"),
			json_object_get_int(json_member(e, "boots")),
			json_member_text(json_member(e, "host"), "hostname", "?"));
	}
	fputc('\n', f);
	summary_print_bisection(f, m->bisection);
	summary_print_attribution(f, m->attribution);
	print_gates(f, m->job);
	fprintf(f, "verdict: %s\n", m->verdict);
	json_object *reasons = m->verdict_reasons;
	for (size_t i = 0; reasons && i < json_object_array_length(reasons); i++)
		fprintf(f, "  - %s\n",
			json_object_get_string(json_object_array_get_idx(reasons, i)));
}

int summary_print(FILE *f, json_object *result, struct sl_error *err)
{
	struct model_result m = {0};
	int r = model_result_parse(result, &m, err);
	if (r < 0)
		return r;
	summary_print_model(f, &m);
	model_result_free(&m);
	return 0;
}

int summary_exit_code(json_object *result)
{
	struct model_result m = {0};
	if (model_result_parse(result, &m, NULL) < 0)
		return EXIT_ERROR;
	int code = summary_exit_code_model(&m);
	model_result_free(&m);
	return code;
}

int summary_exit_code_model(const struct model_result *m)
{
	const char *v = m->verdict;
	if (strcmp(v, "pass") == 0)
		return EXIT_PASS;
	if (strcmp(v, "fail") == 0)
		return EXIT_FAIL;
	if (strcmp(v, "inconclusive") == 0)
		return EXIT_INCONCLUSIVE;
	return EXIT_ERROR;
}
