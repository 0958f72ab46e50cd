/* Comparisons and verdicts. The rules (docs/statistics.md sections 2-4):
 *
 *  - values: one per ok run whose workload is ok and reported the metric;
 *  - change = median(candidate) - median(baseline), for reading; decisions use
 *    the Hodges-Lehmann shift (the median of the pairwise differences) and
 *    its distribution-free interval at 1 - 2 x alpha, which inverts the
 *    Mann-Whitney test and so covers at least that often at every n (stored
 *    as "ci95" for older readers, its level in "ci_level");
 *  - thr = the gate's threshold, or the metric's default (its metrics
 *    plug-in's, metrics_default_threshold()), widened by
 *    the host's A/A calibration (latency gates: at most to 20 %); relative
 *    thresholds are multiplied by |median(baseline)|;
 *  - the verdict (compare/decide.c): regressed / improved / changed when the
 *    Mann-Whitney p <= alpha and the shift lies beyond thr; unchanged when
 *    the whole interval lies within +-thr (equivalence at alpha); otherwise
 *    undecided with a reason. A gate fails on regressed, passes when the
 *    interval's worse end is within thr (or improved), and is otherwise
 *    inconclusive, which is also the gated comparison's verdict.
 *
 * Overall: fail if a candidate run is not ok or a gated metric regressed;
 * inconclusive if a gated metric is inconclusive or has no values; else pass. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare/calibration.h"
#include "compare/compare.h"
#include "compare/decide.h"
#include "metrics/metrics.h"
#include "compare/noise.h"
#include "compare/run_view.h"
#include "compare/sequential.h"
#include "compare/stats.h"
#include "util/json_get.h"

/* One variant of the result, its runs read once through the result model
 * (run_view.h). */
struct cmp_variant {
	const char *name;
	json_object *json; /* borrowed: the variant's object in the result */
	struct run_view view;
};

struct cmp_ctx {
	const struct job *job;
	const char *baseline;
	json_object *comparisons, *reasons;
	json_object *calibration; /* result.calibration (borrowed) or NULL */
	double alpha;		  /* the level a test must reach for a change to count */
	enum job_noise_policy noise;
	double noise_limit;
	int n_excluded;	    /* noisy runs left out of the comparisons */
	double max_wait;    /* the highest vCPU wait among them, % */
	double max_others;  /* the highest share other processes took among them, % */
	double base_wait;   /* the baseline's median vCPU wait over its ok runs, or NAN */
	double base_others; /* the same runs' median share taken by other processes, or NAN */
	bool fail, inconclusive;
};

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

static const struct job_gate *find_gate(struct cmp_ctx *c, const char *workload, const char *metric)
{
	for (size_t i = 0; i < c->job->n_gates; i++) {
		const struct job_gate *g = &c->job->gates[i];
		if (strcmp(g->workload, workload) == 0 && strcmp(g->metric, metric) == 0)
			return g;
	}
	return NULL;
}

/* The values of one metric over a variant's ok runs (less the noisy ones
 * when the policy excludes them); returns the count. */
static size_t collect(struct cmp_ctx *c, const struct run_view *variant, const char *workload,
		      const char *metric, double *out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < variant->n && n < max; i++) {
		const struct model_run *run = &variant->runs[i];
		if (!run_view_ok(run) || (c->noise == JOB_NOISE_EXCLUDE && run->noisy))
			continue;
		const struct model_workload *w = run_view_ok_workload(run, workload);
		if (!w)
			continue;
		json_object *v = json_member(w->metrics, metric);
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

/* The threshold of one comparison: the gate's, or the metric's default
 * widened by the host's A/A calibration (compare/calibration.h) so a default
 * never sits inside this host's noise; a gate's own threshold is the user's
 * word. A latency gate's is widened to COMPARE_LATENCY_CAP of the baseline
 * median at most, so a noisy host cannot make it blind: *ret_capped gets
 * the calibrated threshold it would have had (NAN when not capped). */
struct threshold {
	double abs, spread, capped_from;
	bool relative;
	const char *source;
};

static void threshold_of(struct cmp_ctx *c, const struct job_gate *gate, const char *tool,
			 const char *workload, const char *metric, double base_median,
			 struct threshold *t)
{
	struct metric_threshold def;
	metrics_default_threshold(tool, metric, &def);
	double floor_abs = def.floor_abs, rel = def.rel;
	if (gate && gate->has_threshold) {
		floor_abs = gate->relative ? 0 : gate->threshold;
		rel = gate->relative ? gate->threshold : 0;
	}
	t->relative = rel > 0;
	t->abs = fmax(floor_abs, rel * fabs(base_median));
	t->spread = t->capped_from = NAN;
	t->source = gate && gate->has_threshold ? "gate" : "default";
	if (gate && gate->has_threshold)
		return;
	double cal = calibration_threshold(c->calibration, workload, metric, t->abs, &t->spread);
	if (!(cal > t->abs))
		return;
	double cap = def.practical_gate ? COMPARE_LATENCY_CAP * fabs(base_median) : INFINITY;
	if (cal > cap) {
		t->capped_from = cal;
		cal = fmax(cap, t->abs);
	}
	t->abs = cal;
	t->source = "calibration";
	t->relative = false;
}

/* The smallest n a side at which Mann-Whitney can reach alpha. */
static size_t runs_needed(double alpha)
{
	size_t n = 2;
	while (n < STATS_MAX_VALUES && stats_mann_whitney_min_p(n, n) > alpha)
		n++;
	return n;
}

/* The verdict's sentence about one gated comparison. */
static void gate_reason(struct cmp_ctx *c, const char *vname, const char *workload,
			const char *metric, const struct decision_input *in,
			const struct decision *d, double m0, double m1)
{
	char ev[400];
	const struct stats_shift *s = &in->shift;
	if (in->na >= 2 && in->nb >= 2)
		snprintf(ev, sizeof(ev),
			 "median %.6g against %.6g in '%s', shift %.6g, %.3g %% interval "
			 "[%.6g, %.6g], threshold %.6g, Mann-Whitney p %.3g at level %.3g",
			 m1, m0, c->baseline, s->estimate, 100 * s->level, s->lo, s->hi, in->thr,
			 in->p, in->alpha);
	else
		snprintf(ev, sizeof(ev),
			 "%zu value(s) against %zu in '%s', at least 2 a side "
			 "are needed",
			 in->nb, in->na, c->baseline);
	if (strcmp(d->verdict, "regressed") == 0) {
		c->fail = true;
		reason(c, "Gated metric '%s' of workload '%s' regressed in variant '%s' (%s).",
		       metric, workload, vname, ev);
	} else if (strcmp(d->verdict, "improved") == 0) {
		reason(c, "Gated metric '%s' of workload '%s' improved in variant '%s' (%s).",
		       metric, workload, vname, ev);
	} else if (strcmp(d->verdict, "inconclusive") == 0) {
		c->inconclusive = true;
		char more[160] = "; more repeats would decide it";
		if (in->min_p > in->alpha)
			snprintf(more, sizeof(more),
				 "; no change can be shown below %zu runs a side at this level",
				 runs_needed(in->alpha));
		reason(c,
		       "Gated metric '%s' of workload '%s' in variant '%s' is inconclusive: %s "
		       "(%s)%s.",
		       metric, workload, vname, d->reason, ev, more);
	}
}

static json_object *interval_json(const struct stats_shift *s)
{
	if (!s->bounded)
		return NULL;
	json_object *jci = json_object_new_array_ext(2);
	json_object_array_add(jci, jnum(s->lo));
	json_object_array_add(jci, jnum(s->hi));
	return jci;
}

static void add_comparison(struct cmp_ctx *c, const char *vname, const char *workload,
			   const char *metric, const double *a, size_t na, const double *b,
			   size_t nb, const struct decision_input *in, const struct threshold *t,
			   const struct decision *d)
{
	struct stats_summary sa, sb;
	stats_summarize(a, na, &sa);
	stats_summarize(b, nb, &sb);
	double change = sb.median - sa.median, delta = NAN;
	bool have_delta = stats_cliffs_delta(a, na, b, nb, &delta) == 0;
	bool have = na >= 2 && nb >= 2;
	const struct stats_shift *s = &in->shift;
	json_object *o = json_object_new_object();
	json_object_object_add(o, "variant", json_object_new_string(vname));
	json_object_object_add(o, "workload", json_object_new_string(workload));
	json_object_object_add(o, "metric", json_object_new_string(metric));
	json_object_object_add(o, "baseline", sample_json(a, na));
	json_object_object_add(o, "candidate", sample_json(b, nb));
	json_object_object_add(o, "change", jnum(change));
	json_object_object_add(o, "change_pct",
			       sa.median != 0 ? jnum(100.0 * change / fabs(sa.median)) : NULL);
	json_object_object_add(o, "estimate", have ? jnum(s->estimate) : NULL);
	json_object_object_add(o, "ci95", have ? interval_json(s) : NULL);
	json_object_object_add(o, "ci_level", have ? jnum(s->level) : NULL);
	json_object_object_add(o, "ci_method", json_object_new_string("hodges-lehmann"));
	json_object_object_add(o, "p_value", isfinite(in->p) ? jnum(in->p) : NULL);
	json_object_object_add(o, "better", json_object_new_string(in->better));
	json_object_object_add(o, "gated", json_object_new_boolean(in->gated));
	json_object_object_add(o, "threshold", jnum(t->abs));
	json_object_object_add(o, "relative", json_object_new_boolean(t->relative));
	json_object_object_add(o, "threshold_source", json_object_new_string(t->source));
	if (isfinite(t->spread))
		json_object_object_add(o, "aa_spread", jnum(t->spread));
	if (isfinite(t->capped_from))
		json_object_object_add(o, "threshold_capped_from", jnum(t->capped_from));
	json_object_object_add(o, "alpha", jnum(c->alpha));
	json_object_object_add(o, "min_p", jnum(in->min_p));
	json_object_object_add(o, "cliffs_delta", have_delta ? jnum(delta) : NULL);
	/* The smallest change this comparison could have shown: the threshold,
	 * or half the interval's width when the noise is wider than that. */
	json_object_object_add(o, "detectable_change",
			       have && s->bounded ? jnum(fmax(t->abs, (s->hi - s->lo) / 2)) : NULL);
	json_object_object_add(o, "verdict", json_object_new_string(d->verdict));
	if (d->reason[0])
		json_object_object_add(o, "undecided_reason", json_object_new_string(d->reason));
	json_object_array_add(c->comparisons, o);
}

static int compare_metric(struct cmp_ctx *c, const char *vname, const struct run_view *cand,
			  const struct run_view *base, const char *workload, const char *tool,
			  const char *metric)
{
	double a[STATS_MAX_VALUES], b[STATS_MAX_VALUES];
	size_t na = collect(c, base, workload, metric, a, STATS_MAX_VALUES);
	size_t nb = collect(c, cand, workload, metric, b, STATS_MAX_VALUES);
	if (na == 0 || nb == 0)
		return 0;

	const struct job_gate *gate = find_gate(c, workload, metric);
	struct stats_summary sa, sb;
	stats_summarize(a, na, &sa);
	stats_summarize(b, nb, &sb);
	struct threshold t;
	threshold_of(c, gate, tool, workload, metric, sa.median, &t);

	struct decision_input in = {.better = metrics_better(tool, metric),
				    .na = na,
				    .nb = nb,
				    .thr = t.abs,
				    .p = NAN,
				    .alpha = c->alpha,
				    .min_p = stats_mann_whitney_min_p(na, nb),
				    .gated = gate != NULL};
	if (na >= 2 && nb >= 2) {
		double p;
		if (stats_mann_whitney(a, na, b, nb, &p) == 0)
			in.p = p;
		/* alpha is two-sided; the interval's tails take alpha each, the
		 * two one-sided tests of equivalence at alpha. */
		if (stats_hl_shift(a, na, b, nb, fmin(c->alpha, 0.49), &in.shift) != 0)
			return -ENOMEM;
	}
	struct decision d;
	compare_decide(&in, &d);
	add_comparison(c, vname, workload, metric, a, na, b, nb, &in, &t, &d);
	if (!gate)
		return 0;
	if (isfinite(t.capped_from))
		reason(c,
		       "This host's A/A calibration would widen the threshold of gated metric "
		       "'%s' of workload '%s' to %.6g; it is capped at %.0f %% of the baseline "
		       "median, %.6g, so the gate can still see a regression of that size.",
		       metric, workload, t.capped_from, 100 * COMPARE_LATENCY_CAP, t.abs);
	gate_reason(c, vname, workload, metric, &in, &d, sa.median, sb.median);
	return 0;
}

/* Metric names of workload w in a variant's ok runs, in first-seen order, as
 * the keys of a new object. */
static json_object *metric_names(const struct run_view *variant, const char *workload)
{
	json_object *names = json_object_new_object();
	for (size_t i = 0; i < variant->n; i++) {
		const struct model_run *run = &variant->runs[i];
		if (!run_view_ok(run))
			continue;
		/* every ok run's workload of that name, whatever its status */
		const struct model_workload *w = model_run_workload(run, workload);
		json_object *m = w ? w->metrics : NULL;
		if (!m)
			continue;
		json_object_object_foreach(m, k, v_unused)
		{
			(void)v_unused;
			if (!json_member(names, k) &&
			    json_object_object_length(names) < METRICS_MAX_COUNT)
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

static void check_runs(struct cmp_ctx *c, const char *vname, const struct run_view *variant,
		       bool candidate)
{
	size_t n = variant->n;
	for (size_t i = 0; i < n; i++) {
		const struct model_run *run = &variant->runs[i];
		const char *key = run->key, *status = run->status;
		char tail[512];
		double wait = noise_model_wait_pct(run);
		double others = noise_model_others_pct(run);
		/* A panic or crash is the kernel's whatever the host did; a slow
		 * or hung run on a starved host is not. */
		/* So is a BPF scheduler that did not load or that sched_ext ejected
		 * (a stall past the 30 s watchdog, not a starved vCPU's doing). */
		bool kernel_failed =
		    status && (strcmp(status, "panic") == 0 || strcmp(status, "crashed") == 0 ||
			       strcmp(status, "sched_ext_failed") == 0);
		/* A candidate that hung while the baseline ran on a quiet host
		 * spun its own vCPUs into the wait: the hang is the kernel's. */
		bool own_hang = candidate && status && strcmp(status, "hung") == 0 && run->noisy &&
				noise_hang_is_kernels(c->base_wait, c->base_others, c->noise_limit);
		bool noisy = run->noisy && !kernel_failed && !own_hang;
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
				c->max_others = fmax(c->max_others, others);
			}
			char took[160] = "";
			if (isfinite(others))
				snprintf(took, sizeof(took),
					 " while other processes took %.1f %% of the host's CPU "
					 "time (over %.0f %% is noisy whatever the wait)",
					 others, NOISE_OTHERS_BUSY_PCT);
			reason(
			    c,
			    "Run '%s' of variant '%s' was noisy: its vCPUs waited %.1f %% of the "
			    "run for a host CPU (limit %.0f %%)%s, so %s.",
			    key ? key : "?", vname, wait, c->noise_limit, took,
			    c->noise == JOB_NOISE_FAIL && candidate
				? "the job fails (noise_policy 'fail')"
				: "its values are left out");
			/* A run the host starved is no evidence about the kernel, ok or not. */
			continue;
		}
		if (run_view_ok(run))
			continue;
		why_tail(tail, sizeof(tail), run->reason);
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
static json_object *workload_list(struct cmp_ctx *c, const struct run_view *base)
{
	json_object *list = json_object_new_object(); /* name -> tool */
	for (size_t i = 0; i < c->job->n_workloads; i++)
		json_object_object_add(list, c->job->workloads[i].name,
				       json_object_new_string(c->job->workloads[i].tool));
	if (json_object_object_length(list) > 0)
		return list;
	for (size_t i = 0; i < base->n; i++) {
		const struct model_run *run = &base->runs[i];
		for (size_t j = 0; j < run->n_workloads; j++) {
			const char *n = run->workloads[j].name, *t = run->workloads[j].tool;
			if (n && !json_member(list, n))
				json_object_object_add(list, n, json_object_new_string(t ? t : ""));
		}
	}
	return list;
}

static void free_variants(struct cmp_variant *vs, size_t n)
{
	for (size_t i = 0; vs && i < n; i++)
		run_view_free(&vs[i].view);
	free(vs);
}

int compare_result(const struct job *job, json_object *variants, json_object **ret_comparisons,
		   char ret_verdict[16], json_object **ret_reasons, struct sl_error *err)
{
	return compare_result_calibrated(job, variants, NULL, ret_comparisons, ret_verdict,
					 ret_reasons, err);
}

/* Each variant of variants (an object) with its runs read through the
 * model, in the result's order, into *ret (n_variants of them). */
static int read_variants(json_object *variants, struct cmp_variant **ret, size_t *ret_n,
			 struct sl_error *err)
{
	size_t n = (size_t)json_object_object_length(variants);
	struct cmp_variant *vs = calloc(n ? n : 1, sizeof(*vs));
	if (!vs)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory reading the variants.");
	size_t k = 0;
	int r = 0;
	json_object_object_foreach(variants, vname, variant)
	{
		char what[160];
		snprintf(what, sizeof(what), "Variant '%.64s'", vname);
		vs[k] = (struct cmp_variant){.name = vname, .json = variant};
		r = run_view_read(json_member(variant, "runs"), what, &vs[k].view, err);
		if (r < 0)
			break;
		k++;
	}
	if (r < 0) {
		free_variants(vs, k);
		return r;
	}
	*ret = vs;
	*ret_n = k;
	return 0;
}

/* One candidate variant against the baseline: its runs, each metric of
 * each workload, and the gates that found nothing to compare. */
static void compare_candidate(struct cmp_ctx *c, const struct cmp_variant *v,
			      const struct cmp_variant *base, json_object *wl)
{
	/* A variant whose kernel did not build (docs/contracts.md) has no
	 * runs and nothing to compare: it fails the job, and the runner
	 * gives the reason with the kernel's build status. */
	json_object *nb = json_member(v->json, "not_built");
	if (json_object_is_type(nb, json_type_boolean) && json_object_get_boolean(nb)) {
		c->fail = true;
		return;
	}
	check_runs(c, v->name, &v->view, true);
	json_object_object_foreach(wl, wname, jtool)
	{
		const char *tool = json_object_get_string(jtool);
		_cleanup_json_ json_object *names = metric_names(&base->view, wname);
		json_object_object_foreach(names, metric, unused)
		{
			(void)unused;
			compare_metric(c, v->name, &v->view, &base->view, wname, tool, metric);
		}
	}
	/* A gate with nothing to compare cannot pass. */
	for (size_t i = 0; i < c->job->n_gates; i++) {
		const char *w = c->job->gates[i].workload, *m = c->job->gates[i].metric;
		bool found = false;
		for (size_t j = 0; j < json_object_array_length(c->comparisons); j++) {
			json_object *cmp = json_object_array_get_idx(c->comparisons, j);
			if (strcmp(json_member_string(cmp, "variant"), v->name) == 0 &&
			    strcmp(json_member_string(cmp, "workload"), w) == 0 &&
			    strcmp(json_member_string(cmp, "metric"), m) == 0)
				found = true;
		}
		if (!found) {
			c->inconclusive = true;
			reason(c,
			       "Gated metric '%s' of workload '%s' has no values in both "
			       "variant '%s' and the baseline '%s', so it cannot be judged.",
			       m, w, v->name, c->baseline);
		}
	}
}

int compare_result_calibrated(const struct job *job, json_object *variants,
			      json_object *calibration, json_object **ret_comparisons,
			      char ret_verdict[16], json_object **ret_reasons, struct sl_error *err)
{
	struct cmp_ctx c = {
	    .job = job,
	    .calibration = calibration,
	    .baseline = job->baseline->name,
	    .alpha = compare_alpha(job),
	    .noise = job->noise_policy,
	    .noise_limit = job->noise_limit_pct,
	    .max_others = NAN,
	};
	if (!json_object_is_type(variants, json_type_object))
		return error_set(err, ERR_INVALID, 0, "The result has no variants to compare.");
	if (!json_object_is_type(json_member(variants, c.baseline), json_type_object))
		return error_set_path(
		    err, ERR_INVALID, "$.baseline",
		    "The baseline variant '%s' is not among the result's variants.", c.baseline);
	struct cmp_variant *vs = NULL;
	size_t n_vs = 0;
	int r = read_variants(variants, &vs, &n_vs, err);
	if (r < 0)
		return r;
	const struct cmp_variant *base = NULL;
	for (size_t i = 0; i < n_vs; i++)
		if (strcmp(vs[i].name, c.baseline) == 0)
			base = &vs[i];
	if (!base) { /* checked above; read_variants() reads every variant */
		free_variants(vs, n_vs);
		return error_set(err, ERR_INTERNAL, 0, "The baseline variant '%s' was not read.",
				 c.baseline);
	}

	_cleanup_json_ json_object *comparisons = json_object_new_array();
	_cleanup_json_ json_object *reasons = json_object_new_array();
	_cleanup_json_ json_object *wl = workload_list(&c, &base->view);
	c.comparisons = comparisons;
	c.reasons = reasons;

	c.base_wait = noise_model_wait_quantile(base->view.runs, base->view.n, 0.5);
	c.base_others = noise_model_others_quantile(base->view.runs, base->view.n, 0.5);
	check_runs(&c, c.baseline, &base->view, false);
	int ncand = 0;
	for (size_t i = 0; i < n_vs; i++) {
		if (&vs[i] == base)
			continue;
		ncand++;
		compare_candidate(&c, &vs[i], base, wl);
	}
	free_variants(vs, n_vs);
	if (ncand == 0)
		reason(&c,
		       "The job has only the baseline variant '%s'; there is nothing to "
		       "compare it with.",
		       c.baseline);

	if (c.inconclusive && c.n_excluded > 0) {
		char took[96] = "";
		if (isfinite(c.max_others))
			snprintf(took, sizeof(took),
				 " while other processes took up to %.1f %% of the host's CPU time",
				 c.max_others);
		reason(&c,
		       "The host got in the way: %d run(s) were left out because their vCPUs "
		       "waited up to %.1f %% of the run for a host CPU%s, which leaves too few "
		       "clean runs to decide; rerun on a quieter host or with more repeats.",
		       c.n_excluded, c.max_wait, took);
	}
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
