/* Comparisons and verdicts. The rules (docs/statistics.md):
 *
 *  - values: one per ok run whose workload is ok and reported the metric;
 *  - change = median(candidate) - median(baseline); ci95 = bootstrap CI of it;
 *  - thr = the gate's threshold, or the metric's default (below); relative
 *    thresholds are multiplied by |median(baseline)|;
 *  - with fewer than 2 values on either side: inconclusive;
 *  - regressed / improved: the whole CI lies beyond thr on the worse / better
 *    side (so the CI excludes 0 and the change exceeds thr) and the
 *    Mann-Whitney p is at most alpha; for metrics with no better direction
 *    either side is "changed"; beyond thr without p <= alpha is undecided:
 *    inconclusive when gated, else unchanged;
 *  - inconclusive: a gated metric whose CI's worse end lies beyond thr (a
 *    regression larger than thr is not ruled out);
 *  - otherwise unchanged.
 *
 * Overall: fail if a candidate run is not ok or a gated metric regressed;
 * inconclusive if a gated metric is inconclusive or has no values; else pass. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "compare/calibration.h"
#include "compare/compare.h"
#include "metrics/metrics.h"
#include "compare/noise.h"
#include "compare/run_view.h"
#include "compare/sequential.h"
#include "compare/stats.h"

struct cmp_ctx {
	const struct job *job;
	json_object *variants;
	const char *baseline;
	json_object *comparisons, *reasons;
	json_object *calibration; /* result.calibration (borrowed) or NULL */
	double alpha;		  /* the level a test must reach for a change to count */
	enum job_noise_policy noise;
	double noise_limit;
	int n_excluded;	  /* noisy runs left out of the comparisons */
	double max_wait;  /* the highest vCPU wait among them, % */
	double base_wait; /* the baseline's median vCPU wait over its ok runs, or NAN */
	bool fail, inconclusive;
};

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;
	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static const char *get_str(json_object *o, const char *key)
{
	json_object *v = get(o, key);
	return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static void reason(struct cmp_ctx *c, const char *fmt, ...) _printf_(2, 3);
static void reason(struct cmp_ctx *c, const char *fmt, ...)
{
	char buf[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	json_object_array_add(c->reasons, json_object_new_string(buf));
}

/* A number for JSON: integral values as integers, others with 10 significant
 * digits, so reports do not show 0.10000000000000001. */
static json_object *jnum(double v)
{
	if (!isfinite(v))
		return NULL;
	if (v == floor(v) && fabs(v) < 9007199254740992.0)
		return json_object_new_int64((int64_t)v);
	char buf[32];
	snprintf(buf, sizeof(buf), "%.10g", v);
	return json_object_new_double_s(v, buf);
}

static void fmt(char *buf, size_t sz, double v)
{
	snprintf(buf, sz, "%.6g", v);
}

/* The default threshold of a metric with no gate (or a gate without one):
 * max(floor, rel x |baseline median|). Chosen from the A/A spread under TCG
 * in DESIGN.md: minimum and average latencies vary by about 20 to 50 % between
 * boots of one kernel, the maximum by 2.5x (docs/statistics.md). */
static void default_threshold(const char *metric, double *floor_abs, double *rel)
{
	size_t len = strlen(metric);
	bool is_max, is_p99;
#define ENDS_WITH(s) (len >= strlen(s) && strcmp(metric + len - strlen(s), s) == 0)
	is_max = ENDS_WITH(".max") || ENDS_WITH(".p99.9");
	is_p99 = ENDS_WITH(".p99");
#undef ENDS_WITH
	/* A relative threshold must stay well below 100 %: a lower-is-better
	 * metric cannot improve by more than its whole value. */
	*floor_abs = 0;
	*rel = is_max || is_p99 ? 0.5 : 0.25;
	if (strcmp(metric, "inversions") == 0) {
		/* One inversion: a gate on counts with a margin of 0 could never
		 * pass a noisy A/A ([0,0,0,0] against [0,0,0,1] allows +1). */
		*floor_abs = 1;
		*rel = 0;
	} else if (strcmp(metric, "inversion_max_us") == 0 ||
		   strncmp(metric, "start_delay_us.", 15) == 0) {
		/* rt-migrate-test's own maxerr: below 1 ms a start delay is not news. */
		*floor_abs = RTMIGRATE_DEFAULT_MAXERR_US;
	} else if (strncmp(metric, "cpu_fraction.", 13) == 0 ||
		   strcmp(metric, "share_error") == 0) {
		*floor_abs = 0.05;
		*rel = 0;
	}
}

static const struct job_gate *find_gate(struct cmp_ctx *c, const char *workload, const char *metric)
{
	for (size_t i = 0; i < c->job->n_gates; i++) {
		const struct job_gate *g = &c->job->gates[i];
		if (strcmp(g->workload, workload) == 0 && strcmp(g->metric, metric) == 0)
			return g;
	}
	return NULL;
}

static bool run_ok(json_object *run)
{
	const char *s = get_str(run, "status");
	return s && strcmp(s, "ok") == 0;
}

/* The values of one metric over a variant's ok runs (less the noisy ones
 * when the policy excludes them); returns the count. */
static size_t collect(struct cmp_ctx *c, json_object *variant, const char *workload,
		      const char *metric, double *out, size_t max)
{
	size_t n = 0;
	json_object *runs = get(variant, "runs");
	for (size_t i = 0; json_object_is_type(runs, json_type_array) &&
			   i < json_object_array_length(runs) && n < max;
	     i++) {
		json_object *run = json_object_array_get_idx(runs, i);
		if (!run_ok(run) || (c->noise == JOB_NOISE_EXCLUDE && noise_run_is_noisy(run)))
			continue;
		json_object *w = run_view_workload(run, workload);
		const char *ws = get_str(w, "status");
		if (!w || (ws && strcmp(ws, "ok") != 0))
			continue;
		json_object *v = get(get(w, "metrics"), metric);
		if (!json_object_is_type(v, json_type_int) &&
		    !json_object_is_type(v, json_type_double))
			continue;
		double d = json_object_get_double(v);
		if (isfinite(d))
			out[n++] = d;
	}
	return n;
}

static json_object *sample_json(const double *v, size_t n)
{
	json_object *o = json_object_new_object();
	struct stats_summary s = {0};
	bool have = n > 0 && stats_summarize(v, n, &s) == 0;
	json_object_object_add(o, "n", json_object_new_int64((int64_t)n));
	json_object_object_add(o, "median", have ? jnum(s.median) : NULL);
	json_object_object_add(o, "iqr", have ? jnum(s.iqr) : NULL);
	json_object_object_add(o, "mean", have ? jnum(s.mean) : NULL);
	json_object_object_add(o, "min", have ? jnum(s.min) : NULL);
	json_object_object_add(o, "max", have ? jnum(s.max) : NULL);
	json_object *vals = json_object_new_array_ext((int)n);
	for (size_t i = 0; i < n; i++)
		json_object_array_add(vals, jnum(v[i]));
	json_object_object_add(o, "values", vals);
	return o;
}

/* The evidence one comparison is decided on. */
struct decision_input {
	const char *better;
	size_t na, nb;
	double ci[2], thr;
	double p, alpha; /* the Mann-Whitney p (NAN: none) and the level it must reach */
	bool gated;
};

/* Decides one comparison; see the rules at the top. *ret_undecided is set
 * when the interval lies beyond the threshold but the test did not reach
 * alpha (at this n it may not be able to). */
static const char *decide(const struct decision_input *in, bool *ret_undecided)
{
	*ret_undecided = false;
	if (in->na < 2 || in->nb < 2)
		return "inconclusive";
	double lo = in->ci[0], hi = in->ci[1], thr = in->thr;
	bool above = lo > thr, below = hi < -thr;
	const char *shown = NULL;
	if (strcmp(in->better, "none") == 0) {
		if (above || below)
			shown = "changed";
	} else if (strcmp(in->better, "lower") == 0) {
		shown = below ? "improved" : above ? "regressed" : NULL;
	} else {
		shown = above ? "improved" : below ? "regressed" : NULL;
	}
	if (shown) {
		if (isfinite(in->p) && in->p <= in->alpha)
			return shown;
		/* The interval alone is not a test: with 3 runs a side it excludes 0
		 * whenever the samples separate, which two identical variants do
		 * one time in ten. Undecided is not unchanged where a decision is
		 * asked for. */
		*ret_undecided = true;
		return in->gated ? "inconclusive" : "unchanged";
	}
	/* A gate asks "did it get worse by more than thr?". It passes only when
	 * the interval rules that out: its worse end within thr. An interval
	 * that still allows a larger regression is inconclusive, however much
	 * of it lies on the better side (a busy host once let a planted
	 * regression, inversions [1,0,0,0] -> [3,3,0,5], CI [0, 5], pass as
	 * unchanged under a rule that only looked at intervals straddling both
	 * thresholds). An ungated metric without a shown change is simply
	 * unchanged: nothing was asked. */
	if (in->gated) {
		double worse = strcmp(in->better, "lower") == 0	   ? hi
			       : strcmp(in->better, "higher") == 0 ? -lo
								   : fmax(hi, -lo);
		if (worse > thr)
			return "inconclusive";
	}
	return "unchanged";
}

/* The whole interval on the worse side of no change (better = none: on
 * either side). */
static bool worse_side(const char *better, const double ci[2])
{
	if (strcmp(better, "lower") == 0)
		return ci[0] > 0;
	if (strcmp(better, "higher") == 0)
		return ci[1] < 0;
	return ci[0] > 0 || ci[1] < 0;
}

static int compare_metric(struct cmp_ctx *c, const char *vname, json_object *cand,
			  json_object *base, const char *workload, const char *tool,
			  const char *metric)
{
	double a[STATS_MAX_VALUES], b[STATS_MAX_VALUES];
	size_t na = collect(c, base, workload, metric, a, STATS_MAX_VALUES);
	size_t nb = collect(c, cand, workload, metric, b, STATS_MAX_VALUES);
	if (na == 0 || nb == 0)
		return 0;

	const struct job_gate *gate = find_gate(c, workload, metric);
	double floor_abs, rel;
	default_threshold(metric, &floor_abs, &rel);
	if (gate && gate->has_threshold) {
		floor_abs = gate->relative ? 0 : gate->threshold;
		rel = gate->relative ? gate->threshold : 0;
	}
	bool relative = rel > 0;
	struct stats_summary sa, sb;
	stats_summarize(a, na, &sa);
	stats_summarize(b, nb, &sb);
	double abs_thr = fmax(floor_abs, rel * fabs(sa.median)), spread = NAN;
	const char *thr_source = gate && gate->has_threshold ? "gate" : "default";
	/* A gate's own threshold is the user's word; a default never sits
	 * inside this host's A/A noise (compare/calibration.h). */
	if (!(gate && gate->has_threshold)) {
		double cal =
		    calibration_threshold(c->calibration, workload, metric, abs_thr, &spread);
		if (cal > abs_thr) {
			abs_thr = cal;
			thr_source = "calibration";
			relative = false;
		}
	}
	double change = sb.median - sa.median;

	char key[512];
	snprintf(key, sizeof(key), "%s/%s/%s", vname, workload, metric);
	double ci[2] = {NAN, NAN}, p = NAN;
	bool have_ci =
	    na >= 2 && nb >= 2 &&
	    stats_bootstrap_median_diff_ci(a, na, b, nb, stats_seed_from_string(key), ci) == 0;
	bool have_p = na >= 2 && nb >= 2 && stats_mann_whitney(a, na, b, nb, &p) == 0;
	const char *better = metrics_better(tool, metric);
	struct decision_input in = {.better = better,
				    .na = na,
				    .nb = nb,
				    .ci = {ci[0], ci[1]},
				    .thr = abs_thr,
				    .p = have_p ? p : NAN,
				    .alpha = c->alpha,
				    .gated = gate != NULL};
	bool undecided = false;
	const char *verdict = have_ci ? decide(&in, &undecided) : "inconclusive";
	double min_p = stats_mann_whitney_min_p(na, nb), delta = NAN;
	bool have_delta = stats_cliffs_delta(a, na, b, nb, &delta) == 0;

	json_object *o = json_object_new_object();
	json_object_object_add(o, "variant", json_object_new_string(vname));
	json_object_object_add(o, "workload", json_object_new_string(workload));
	json_object_object_add(o, "metric", json_object_new_string(metric));
	json_object_object_add(o, "baseline", sample_json(a, na));
	json_object_object_add(o, "candidate", sample_json(b, nb));
	json_object_object_add(o, "change", jnum(change));
	json_object_object_add(o, "change_pct",
			       sa.median != 0 ? jnum(100.0 * change / fabs(sa.median)) : NULL);
	if (have_ci) {
		json_object *jci = json_object_new_array_ext(2);
		json_object_array_add(jci, jnum(ci[0]));
		json_object_array_add(jci, jnum(ci[1]));
		json_object_object_add(o, "ci95", jci);
	} else
		json_object_object_add(o, "ci95", NULL);
	json_object_object_add(o, "p_value", have_p ? jnum(p) : NULL);
	json_object_object_add(o, "better", json_object_new_string(better));
	json_object_object_add(o, "gated", json_object_new_boolean(gate != NULL));
	json_object_object_add(o, "threshold", jnum(abs_thr));
	json_object_object_add(o, "relative", json_object_new_boolean(relative));
	json_object_object_add(o, "threshold_source", json_object_new_string(thr_source));
	if (isfinite(spread))
		json_object_object_add(o, "aa_spread", jnum(spread));
	json_object_object_add(o, "alpha", jnum(c->alpha));
	json_object_object_add(o, "min_p", jnum(min_p));
	json_object_object_add(o, "cliffs_delta", have_delta ? jnum(delta) : NULL);
	/* The smallest change this comparison could have shown: the threshold,
	 * or half the interval's width when the noise is wider than that. */
	json_object_object_add(o, "detectable_change",
			       have_ci ? jnum(fmax(abs_thr, (ci[1] - ci[0]) / 2)) : NULL);
	json_object_object_add(o, "verdict", json_object_new_string(verdict));
	json_object_array_add(c->comparisons, o);

	if (!gate)
		return 0;
	char m0[32], m1[32], lo[32], hi[32], t[32];
	fmt(m0, sizeof(m0), sa.median);
	fmt(m1, sizeof(m1), sb.median);
	fmt(lo, sizeof(lo), ci[0]);
	fmt(hi, sizeof(hi), ci[1]);
	fmt(t, sizeof(t), abs_thr);
	if (strcmp(verdict, "regressed") == 0) {
		c->fail = true;
		reason(c,
		       "Gated metric '%s' of workload '%s' regressed in variant '%s': median %s "
		       "against %s in '%s' (95%% CI of the change [%s, %s], threshold %s, "
		       "Mann-Whitney p %.3g at level %.3g).",
		       metric, workload, vname, m1, m0, c->baseline, lo, hi, t, p, c->alpha);
	} else if (strcmp(verdict, "inconclusive") == 0 && undecided) {
		c->inconclusive = true;
		char ps[32], as[32], mps[32];
		fmt(ps, sizeof(ps), p);
		fmt(as, sizeof(as), c->alpha);
		fmt(mps, sizeof(mps), min_p);
		if (min_p > c->alpha)
			reason(
			    c,
			    "Gated metric '%s' of workload '%s' in variant '%s' is undecided: the "
			    "95%% CI of the change [%s, %s] lies beyond the threshold %s, but %zu "
			    "run(s) against %zu cannot reach the level %s (the smallest possible "
			    "Mann-Whitney p is %s, this one %s); more repeats are needed.",
			    metric, workload, vname, lo, hi, t, nb, na, as, mps, ps);
		else
			reason(
			    c,
			    "Gated metric '%s' of workload '%s' in variant '%s' is undecided: the "
			    "95%% CI of the change [%s, %s] lies beyond the threshold %s, but the "
			    "Mann-Whitney p %s does not reach the level %s; more repeats would "
			    "decide it.",
			    metric, workload, vname, lo, hi, t, ps, as);
	} else if (strcmp(verdict, "inconclusive") == 0) {
		c->inconclusive = true;
		if (!have_ci)
			reason(
			    c,
			    "Gated metric '%s' of workload '%s' in variant '%s' is inconclusive: "
			    "it has %zu value(s) against %zu in '%s', and at least 2 on each "
			    "side are needed.",
			    metric, workload, vname, nb, na, c->baseline);
		else if (have_p && p <= c->alpha && worse_side(better, ci))
			/* worse at the level asked, but by how much is not yet
			 * clear: the better end does not clear the threshold */
			reason(
			    c,
			    "Gated metric '%s' of workload '%s' in variant '%s' is inconclusive: "
			    "it got worse (median %s against %s, Mann-Whitney p %.3g at level "
			    "%.3g), but the 95%% CI of the change [%s, %s] does not clear the "
			    "threshold %s, so a change no larger than the threshold is not ruled "
			    "out; more repeats would narrow it.",
			    metric, workload, vname, m1, m0, p, c->alpha, lo, hi, t);
		else
			reason(
			    c,
			    "Gated metric '%s' of workload '%s' in variant '%s' is inconclusive: "
			    "the 95%% CI of the change [%s, %s] still allows a regression larger "
			    "than the threshold %s; more repeats would narrow it.",
			    metric, workload, vname, lo, hi, t);
	} else if (strcmp(verdict, "improved") == 0) {
		reason(c,
		       "Gated metric '%s' of workload '%s' improved in variant '%s': median %s "
		       "against %s in '%s' (95%% CI of the change [%s, %s]).",
		       metric, workload, vname, m1, m0, c->baseline, lo, hi);
	}
	return 0;
}

/* Metric names of workload w in a variant's ok runs, in first-seen order, as
 * the keys of a new object. */
static json_object *metric_names(json_object *variant, const char *workload)
{
	json_object *names = json_object_new_object();
	json_object *runs = get(variant, "runs");
	for (size_t i = 0;
	     json_object_is_type(runs, json_type_array) && i < json_object_array_length(runs);
	     i++) {
		json_object *run = json_object_array_get_idx(runs, i);
		if (!run_ok(run))
			continue;
		json_object *m = get(run_view_workload(run, workload), "metrics");
		if (!json_object_is_type(m, json_type_object))
			continue;
		json_object_object_foreach(m, k, v_unused)
		{
			(void)v_unused;
			if (!get(names, k) && json_object_object_length(names) < METRICS_MAX_COUNT)
				json_object_object_add(names, k, json_object_new_boolean(1));
		}
	}
	return names;
}

/* ": why." or "." for the end of a sentence about a run. */
static void why_tail(char *buf, size_t sz, const char *why)
{
	if (!why || !*why) {
		snprintf(buf, sz, ".");
		return;
	}
	size_t l = strlen(why);
	snprintf(buf, sz, ": %.400s%s", why, why[l - 1] == '.' ? "" : ".");
}

static void check_runs(struct cmp_ctx *c, const char *vname, json_object *variant, bool candidate)
{
	json_object *runs = get(variant, "runs");
	size_t n = json_object_is_type(runs, json_type_array) ? json_object_array_length(runs) : 0;
	for (size_t i = 0; i < n; i++) {
		json_object *run = json_object_array_get_idx(runs, i);
		const char *key = get_str(run, "key"), *status = get_str(run, "status");
		char tail[512];
		double wait = noise_run_wait_pct(run);
		/* A panic or crash is the kernel's whatever the host did; a slow
		 * or hung run on a starved host is not. */
		/* So is a BPF scheduler that did not load or that sched_ext ejected
		 * (a stall past the 30 s watchdog, not a starved vCPU's doing). */
		bool kernel_failed =
		    status && (strcmp(status, "panic") == 0 || strcmp(status, "crashed") == 0 ||
			       strcmp(status, "sched_ext_failed") == 0);
		/* A candidate that hung while the baseline ran on a quiet host
		 * spun its own vCPUs into the wait: the hang is the kernel's. */
		bool own_hang = candidate && status && strcmp(status, "hung") == 0 &&
				noise_run_is_noisy(run) &&
				noise_hang_is_kernels(c->base_wait, c->noise_limit);
		bool noisy = noise_run_is_noisy(run) && !kernel_failed && !own_hang;
		if (own_hang)
			reason(
			    c,
			    "Run '%s' of variant '%s' hung with its vCPUs waiting %.1f %% of the "
			    "run, but the baseline's runs waited %.1f %% (median) on the same "
			    "host: the wait is the hung guest's own spinning, so the hang "
			    "counts.",
			    key ? key : "?", vname, wait, c->base_wait);
		if (noisy && c->noise != JOB_NOISE_KEEP) {
			if (c->noise == JOB_NOISE_FAIL && candidate)
				c->fail = true;
			else {
				c->n_excluded++;
				c->max_wait = fmax(c->max_wait, wait);
			}
			reason(
			    c,
			    "Run '%s' of variant '%s' was noisy: its vCPUs waited %.1f %% of the "
			    "run for a host CPU (limit %.0f %%), so %s.",
			    key ? key : "?", vname, wait, c->noise_limit,
			    c->noise == JOB_NOISE_FAIL && candidate
				? "the job fails (noise_policy 'fail')"
				: "its values are left out");
			/* A run the host starved is no evidence about the kernel, ok or not. */
			continue;
		}
		if (run_ok(run))
			continue;
		why_tail(tail, sizeof(tail), get_str(run, "reason"));
		if (candidate) {
			c->fail = true;
			reason(c, "Run '%s' of variant '%s' ended with status '%s'%s",
			       key ? key : "?", vname, status ? status : "unknown", tail);
		} else
			reason(c,
			       "Baseline run '%s' ended with status '%s', so its values are left "
			       "out%s",
			       key ? key : "?", status ? status : "unknown", tail);
	}
	if (n == 0) {
		c->inconclusive = true;
		reason(c, "Variant '%s' has no runs.", vname);
	}
}

/* The workloads to compare: the job's, in order, else whatever the runs name. */
static json_object *workload_list(struct cmp_ctx *c, json_object *base)
{
	json_object *list = json_object_new_object(); /* name -> tool */
	for (size_t i = 0; i < c->job->n_workloads; i++)
		json_object_object_add(list, c->job->workloads[i].name,
				       json_object_new_string(c->job->workloads[i].tool));
	if (json_object_object_length(list) > 0)
		return list;
	json_object *runs = get(base, "runs");
	for (size_t i = 0;
	     json_object_is_type(runs, json_type_array) && i < json_object_array_length(runs);
	     i++) {
		json_object *wls = get(json_object_array_get_idx(runs, i), "workloads");
		for (size_t j = 0;
		     json_object_is_type(wls, json_type_array) && j < json_object_array_length(wls);
		     j++) {
			json_object *w = json_object_array_get_idx(wls, j);
			const char *n = get_str(w, "name"), *t = get_str(w, "tool");
			if (n && !get(list, n))
				json_object_object_add(list, n, json_object_new_string(t ? t : ""));
		}
	}
	return list;
}

int compare_result(const struct job *job, json_object *variants, json_object **ret_comparisons,
		   char ret_verdict[16], json_object **ret_reasons, struct sl_error *err)
{
	return compare_result_calibrated(job, variants, NULL, ret_comparisons, ret_verdict,
					 ret_reasons, err);
}

int compare_result_calibrated(const struct job *job, json_object *variants,
			      json_object *calibration, json_object **ret_comparisons,
			      char ret_verdict[16], json_object **ret_reasons, struct sl_error *err)
{
	struct cmp_ctx c = {
	    .job = job,
	    .variants = variants,
	    .calibration = calibration,
	    .baseline = job->baseline->name,
	    .alpha = compare_alpha(job),
	    .noise = job->noise_policy,
	    .noise_limit = job->noise_limit_pct,
	};
	if (!json_object_is_type(variants, json_type_object))
		return error_set(err, ERR_INVALID, 0, "The result has no variants to compare.");
	json_object *base = get(variants, c.baseline);
	if (!json_object_is_type(base, json_type_object))
		return error_set_path(
		    err, ERR_INVALID, "$.baseline",
		    "The baseline variant '%s' is not among the result's variants.", c.baseline);

	_cleanup_json_ json_object *comparisons = json_object_new_array();
	_cleanup_json_ json_object *reasons = json_object_new_array();
	_cleanup_json_ json_object *wl = workload_list(&c, base);
	c.comparisons = comparisons;
	c.reasons = reasons;

	c.base_wait = noise_runs_median_wait(get(base, "runs"));
	check_runs(&c, c.baseline, base, false);
	int ncand = 0;
	json_object_object_foreach(variants, vname, variant)
	{
		if (strcmp(vname, c.baseline) == 0)
			continue;
		ncand++;
		/* A variant whose kernel did not build (docs/contracts.md) has no
		 * runs and nothing to compare: it fails the job, and the runner
		 * gives the reason with the kernel's build status. */
		json_object *nb = get(variant, "not_built");
		if (json_object_is_type(nb, json_type_boolean) && json_object_get_boolean(nb)) {
			c.fail = true;
			continue;
		}
		check_runs(&c, vname, variant, true);
		json_object_object_foreach(wl, wname, jtool)
		{
			const char *tool = json_object_get_string(jtool);
			_cleanup_json_ json_object *names = metric_names(base, wname);
			json_object_object_foreach(names, metric, unused)
			{
				(void)unused;
				compare_metric(&c, vname, variant, base, wname, tool, metric);
			}
		}
		/* A gate with nothing to compare cannot pass. */
		for (size_t i = 0; i < job->n_gates; i++) {
			const char *w = job->gates[i].workload, *m = job->gates[i].metric;
			bool found = false;
			for (size_t j = 0; j < json_object_array_length(comparisons); j++) {
				json_object *cmp = json_object_array_get_idx(comparisons, j);
				if (strcmp(get_str(cmp, "variant"), vname) == 0 &&
				    strcmp(get_str(cmp, "workload"), w) == 0 &&
				    strcmp(get_str(cmp, "metric"), m) == 0)
					found = true;
			}
			if (!found) {
				c.inconclusive = true;
				reason(
				    &c,
				    "Gated metric '%s' of workload '%s' has no values in both "
				    "variant '%s' and the baseline '%s', so it cannot be judged.",
				    m, w, vname, c.baseline);
			}
		}
	}
	if (ncand == 0)
		reason(&c,
		       "The job has only the baseline variant '%s'; there is nothing to "
		       "compare it with.",
		       c.baseline);

	if (c.inconclusive && c.n_excluded > 0)
		reason(&c,
		       "The host got in the way: %d run(s) were left out because their vCPUs "
		       "waited up to %.1f %% of the run for a host CPU, which leaves too few "
		       "clean runs to decide; rerun on a quieter host or with more repeats.",
		       c.n_excluded, c.max_wait);
	const char *verdict = c.fail ? "fail" : c.inconclusive ? "inconclusive" : "pass";
	if (!c.fail && !c.inconclusive) {
		if (job->n_gates == 0 && job->gates_opt_out)
			reason(&c, "No gates: the job opted out (\"gates\": []), so only failed "
				   "runs could fail it, and every run of the candidate variants "
				   "was ok.");
		else if (job->n_gates == 0)
			reason(&c, "No metric is gated and every run of the candidate variants "
				   "was ok.");
		else
			reason(&c, "No gated metric regressed and every run of the candidate "
				   "variants was ok.");
	}
	snprintf(ret_verdict, 16, "%s", verdict);
	*ret_comparisons = TAKE_PTR(comparisons);
	*ret_reasons = TAKE_PTR(reasons);
	return 0;
}
