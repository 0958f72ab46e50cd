/* verdict-peers: schedlab's decision rule against the peers' rules on the
 * same real runs (bench/verdict-peers.sh runs it; docs/statistics.md,
 * "schedlab's rule against the peers' rules").
 *
 * Like verdict-resample, it pools the runs that bench/verdict-accuracy.sh
 * stored and replays simulated jobs whose runs are drawn with replacement
 * from the pools: A/A jobs draw both sides from the A/A runs, planted jobs
 * the candidate from the planted jobs' candidates. Every rule sees the same
 * drawn runs of a job (the first n of each side, n as the rule asks):
 *   schedlab, 5 a side       compare_result_calibrated(), one look at 5;
 *   schedlab, adaptive       the same at the looks of MIN..MAX
 *                            (compare_look_schedule), stopping as the runner
 *                            does when no gated metric is inconclusive;
 *   lkp, mmtests, PerfCompare, Firecracker   5 a side (compare/peer_rules.h);
 *   Pinpoint                 10 a side, 10 more while it answers unknown, to 30.
 * schedlab's rule is called through its public API with the stored job, its
 * default gates rebuilt from today's suite table (suite_add_default_gates),
 * so a change to the rule or to the default gates shows on a rerun.
 * Power: A/A jobs whose candidate values of one metric are multiplied by
 * (1 + s) (the worse direction), for each shift s; detection is the share of
 * jobs whose answer is a change toward worse, "false pass" the share called
 * unchanged (schedlab) or same (a peer).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>

#include "compare/compare.h"
#include "compare/peer_rules.h"
#include "compare/resample.h"
#include "compare/sequential.h"
#include "job/job.h"
#include "metrics/metrics.h"
#include "util/json.h"
#include "util/parse.h"

#define MAX_RESULTS 256
#define MAX_METRICS 8
#define MAX_SHIFTS  12
#define MAX_DRAW    30 /* Pinpoint's last look */

enum rule {
	R_SCHEDLAB5,
	R_SCHEDLAB_ADAPTIVE,
	R_LKP,
	R_MMTESTS,
	R_PINPOINT,
	R_PERFCOMPARE,
	R_FIRECRACKER,
	N_RULES,
};

static const char *const rule_names[N_RULES] = {
    "schedlab, 5 a side", "schedlab, adaptive", "lkp-tests",   "mmtests",
    "Pinpoint",		  "PerfCompare",	"Firecracker",
};

/* One rule's answers for one metric over the simulated jobs. */
struct tally {
	int worse, better, same, undecided, jobs;
	int inconclusive; /* schedlab: the gate undecided on its worse side */
	long runs;	  /* runs a side, summed over the jobs */
};

struct metric {
	char tool[64], workload[64], name[128];
	const char *better; /* static, metrics_better() */
	struct tally aa[N_RULES], planted[N_RULES];
	struct tally shifted[MAX_SHIFTS][N_RULES];
};

struct sim {
	struct job *job5, *jobA; /* the stored job at 5 a side and adaptive */
	json_object *calibration;
	const char *bname, *cname;
	struct metric m[MAX_METRICS];
	int n_metrics;
	double shifts[MAX_SHIFTS];
	int n_shifts;
	gsl_rng *rng;
};

/* One simulated job's drawn runs (new references, owned). */
struct draw {
	json_object *base[MAX_DRAW], *cand[MAX_DRAW];
};

static void draw_free(struct draw *d)
{
	for (int i = 0; i < MAX_DRAW; i++) {
		json_object_put(d->base[i]);
		json_object_put(d->cand[i]);
	}
}

static int draw_job(const struct sim *s, const struct resample_pool *base,
		    const struct resample_pool *cand, struct draw *d)
{
	memset(d, 0, sizeof(*d));
	for (int i = 0; i < MAX_DRAW; i++) {
		d->base[i] = resample_draw(base, s->rng, s->bname, i);
		d->cand[i] = resample_draw(cand, s->rng, s->cname, i);
		if (!d->base[i] || !d->cand[i])
			return -ENOMEM;
	}
	return 0;
}

/* The metric's value in an ok run's ok workload, or NAN. */
static json_object *metric_slot(json_object *run, const struct metric *m, const char **key)
{
	const char *status = json_object_get_string(json_object_object_get(run, "status"));
	if (!status || strcmp(status, "ok") != 0)
		return NULL;
	json_object *wls = json_object_object_get(run, "workloads");
	for (size_t i = 0; wls && i < json_object_array_length(wls); i++) {
		json_object *w = json_object_array_get_idx(wls, i);
		const char *name = json_object_get_string(json_object_object_get(w, "name"));
		const char *ws = json_object_get_string(json_object_object_get(w, "status"));
		if (!name || strcmp(name, m->workload) != 0 || !ws || strcmp(ws, "ok") != 0)
			continue;
		json_object *metrics = json_object_object_get(w, "metrics");
		json_object *v = json_object_object_get(metrics, m->name);
		if (!v || !(json_object_is_type(v, json_type_double) ||
			    json_object_is_type(v, json_type_int)))
			return NULL;
		*key = m->name;
		return metrics;
	}
	return NULL;
}

static size_t values_of(json_object *const *runs, int n, const struct metric *m, double *out)
{
	size_t k = 0;
	for (int i = 0; i < n; i++) {
		const char *key;
		json_object *metrics = metric_slot(runs[i], m, &key);
		if (metrics)
			out[k++] = json_object_get_double(json_object_object_get(metrics, key));
	}
	return k;
}

/* Multiplies the metric in every candidate run by f (f = 1 restores it
 * only if the caller kept the originals: it saves and puts them back). */
static void shift_candidates(struct draw *d, const struct metric *m, const double *orig, double f)
{
	for (int i = 0; i < MAX_DRAW; i++) {
		const char *key;
		json_object *metrics = metric_slot(d->cand[i], m, &key);
		if (metrics)
			json_object_object_add(metrics, key, json_object_new_double(orig[i] * f));
	}
}

static void save_candidates(struct draw *d, const struct metric *m, double *orig)
{
	for (int i = 0; i < MAX_DRAW; i++) {
		const char *key;
		json_object *metrics = metric_slot(d->cand[i], m, &key);
		orig[i] =
		    metrics ? json_object_get_double(json_object_object_get(metrics, key)) : NAN;
	}
}

/* Worse: a change toward the metric's worse side (any change when it has
 * no better direction). */
static void count(struct tally *t, enum peer_answer a, int sign, const char *better, int runs)
{
	int worse_sign = strcmp(better, "higher") == 0 ? -1 : 1;
	t->jobs++;
	t->runs += runs;
	if (a == PEER_SAME)
		t->same++;
	else if (a == PEER_UNDECIDED)
		t->undecided++;
	else if (strcmp(better, "none") == 0 || sign == worse_sign)
		t->worse++;
	else
		t->better++;
}

/* schedlab's word as a peer answer: regressed (or changed, for a metric
 * without a better direction) is a change for the worse (*worse set),
 * improved one for the better, unchanged is same, anything else
 * (inconclusive, undecided) undecided. */
static enum peer_answer schedlab_answer(const char *v, bool *worse)
{
	*worse = v && (strcmp(v, "regressed") == 0 || strcmp(v, "changed") == 0);
	if (*worse || (v && strcmp(v, "improved") == 0))
		return PEER_CHANGED;
	return v && strcmp(v, "unchanged") == 0 ? PEER_SAME : PEER_UNDECIDED;
}

/* One look of schedlab's rule on the first n runs a side. *ret_cmps is new. */
static int schedlab_look(const struct sim *s, const struct job *job, struct draw *d, int n,
			 json_object **ret_cmps)
{
	_cleanup_json_ json_object *variants = json_object_new_object();
	json_object *bv = json_object_new_object(), *cv = json_object_new_object();
	json_object *bruns = json_object_new_array(), *cruns = json_object_new_array();
	for (int i = 0; i < n; i++) {
		json_object_array_add(bruns, json_object_get(d->base[i]));
		json_object_array_add(cruns, json_object_get(d->cand[i]));
	}
	json_object_object_add(bv, "runs", bruns);
	json_object_object_add(cv, "runs", cruns);
	json_object_object_add(variants, s->bname, bv);
	json_object_object_add(variants, s->cname, cv);
	_cleanup_json_ json_object *reasons = NULL;
	char verdict[16];
	struct sl_error err = {0};
	if (compare_result_calibrated(job, variants, s->calibration, ret_cmps, verdict, &reasons,
				      &err) < 0) {
		fprintf(stderr, "verdict-peers: %s\n", err.message);
		return -1;
	}
	return 0;
}

static json_object *gated_cmp(json_object *cmps, const struct metric *m)
{
	for (size_t i = 0; i < json_object_array_length(cmps); i++) {
		json_object *c = json_object_array_get_idx(cmps, i);
		const char *w = json_object_get_string(json_object_object_get(c, "workload"));
		const char *name = json_object_get_string(json_object_object_get(c, "metric"));
		if (w && name && strcmp(w, m->workload) == 0 && strcmp(name, m->name) == 0)
			return c;
	}
	return NULL;
}

static void count_schedlab(struct tally *t, json_object *cmps, const struct metric *m, int runs)
{
	json_object *c = gated_cmp(cmps, m);
	bool worse;
	enum peer_answer a = schedlab_answer(
	    c ? json_object_get_string(json_object_object_get(c, "verdict")) : NULL, &worse);
	int worse_sign = strcmp(m->better, "higher") == 0 ? -1 : 1;
	count(t, a, worse ? worse_sign : -worse_sign, m->better, runs);
	const char *v = c ? json_object_get_string(json_object_object_get(c, "verdict")) : NULL;
	if (v && strcmp(v, "inconclusive") == 0)
		t->inconclusive++;
}

/* schedlab adaptive: looks until no gated comparison is undecided or one
 * regressed (the job failed), as service/run/runner.c stops. */
static int schedlab_adaptive(const struct sim *s, struct draw *d, json_object **ret_cmps,
			     int *ret_runs)
{
	int looks[COMPARE_MAX_LOOKS];
	size_t n_looks =
	    compare_look_schedule(s->jobA->repeat_min, s->jobA->repeat, looks, COMPARE_MAX_LOOKS);
	for (size_t li = 0; li < n_looks; li++) {
		json_object *cmps = NULL;
		if (schedlab_look(s, s->jobA, d, looks[li], &cmps) < 0)
			return -1;
		bool undecided = false, regressed = false;
		for (size_t i = 0; i < json_object_array_length(cmps); i++) {
			json_object *c = json_object_array_get_idx(cmps, i);
			const char *v =
			    json_object_get_string(json_object_object_get(c, "verdict"));
			bool worse;
			if (!json_object_get_boolean(json_object_object_get(c, "gated")))
				continue;
			if (schedlab_answer(v, &worse) == PEER_UNDECIDED)
				undecided = true;
			if (v && strcmp(v, "regressed") == 0)
				regressed = true;
		}
		if (!undecided || regressed || li + 1 == n_looks) {
			*ret_cmps = cmps;
			*ret_runs = looks[li];
			return 0;
		}
		json_object_put(cmps);
	}
	return -1;
}

/* The peers on one metric of one drawn job. */
static int peers_on(struct draw *d, const struct metric *m, struct tally *t)
{
	double a[MAX_DRAW], b[MAX_DRAW];
	size_t na = values_of(d->base, 5, m, a), nb = values_of(d->cand, 5, m, b);
	struct peer_verdict v;
	if (na == 0 || nb == 0)
		return 0; /* no value on a side: no rule can answer */
	if (peer_lkp(a, na, b, nb, true, &v) < 0)
		return -1;
	count(&t[R_LKP], v.answer, v.sign, m->better, 5);
	if (peer_mmtests(a, na, b, nb, &v) < 0)
		return -1;
	count(&t[R_MMTESTS], v.answer, v.sign, m->better, 5);
	if (peer_perfcompare(a, na, b, nb, &v) < 0)
		return -1;
	count(&t[R_PERFCOMPARE], v.answer, v.sign, m->better, 5);
	if (peer_firecracker(a, na, b, nb, &v) < 0)
		return -1;
	count(&t[R_FIRECRACKER], v.answer, v.sign, m->better, 5);
	int n = 10;
	for (;; n += 10) {
		na = values_of(d->base, n, m, a);
		nb = values_of(d->cand, n, m, b);
		if (peer_pinpoint(a, na, b, nb, m->better, &v) < 0)
			return -1;
		if (v.answer != PEER_UNDECIDED || n + 10 > MAX_DRAW)
			break;
	}
	count(&t[R_PINPOINT], v.answer, v.sign, m->better, n);
	return 0;
}

/* Every rule on one drawn job, on metric only (or every metric when only
 * is -1); rows[i] is metric i's row of N_RULES tallies. */
static int rules_on(const struct sim *s, struct draw *d, int only, struct tally **rows)
{
	_cleanup_json_ json_object *c5 = NULL, *cA = NULL;
	int runs_a;
	if (schedlab_look(s, s->job5, d, 5, &c5) < 0 || schedlab_adaptive(s, d, &cA, &runs_a) < 0)
		return -1;
	for (int i = 0; i < s->n_metrics; i++) {
		if (only >= 0 && i != only)
			continue;
		count_schedlab(&rows[i][R_SCHEDLAB5], c5, &s->m[i], 5);
		count_schedlab(&rows[i][R_SCHEDLAB_ADAPTIVE], cA, &s->m[i], runs_a);
		if (peers_on(d, &s->m[i], rows[i]) < 0)
			return -1;
	}
	return 0;
}

/* Power: each metric's candidate values shifted by each s, one metric at a
 * time (the others as drawn), then put back. */
static int power_on(struct sim *s, struct draw *d)
{
	struct tally *rows[MAX_METRICS];
	for (int i = 0; i < s->n_metrics; i++) {
		double orig[MAX_DRAW];
		save_candidates(d, &s->m[i], orig);
		double dir = strcmp(s->m[i].better, "higher") == 0 ? -1 : 1;
		for (int k = 0; k < s->n_shifts; k++) {
			shift_candidates(d, &s->m[i], orig, 1 + dir * s->shifts[k]);
			rows[i] = s->m[i].shifted[k];
			if (rules_on(s, d, i, rows) < 0)
				return -1;
		}
		shift_candidates(d, &s->m[i], orig, 1);
	}
	return 0;
}

static int simulate(struct sim *s, const struct resample_pool *aa, const struct resample_pool *base,
		    const struct resample_pool *planted, int jobs)
{
	struct tally *rows[MAX_METRICS];
	for (int j = 0; j < jobs; j++) {
		struct draw d;
		int r = draw_job(s, aa, aa, &d);
		for (int i = 0; i < s->n_metrics; i++)
			rows[i] = s->m[i].aa;
		if (r == 0)
			r = rules_on(s, &d, -1, rows);
		if (r == 0)
			r = power_on(s, &d);
		draw_free(&d);
		if (r == 0 && planted->n) {
			r = draw_job(s, base, planted, &d);
			for (int i = 0; i < s->n_metrics; i++)
				rows[i] = s->m[i].planted;
			if (r == 0)
				r = rules_on(s, &d, -1, rows);
			draw_free(&d);
		}
		if (r < 0)
			return -1;
	}
	return 0;
}

static double pct(int x, int n)
{
	return n ? 100.0 * x / n : 0.0;
}

/* ---- output ------------------------------------------------------------- */

static void print_rates(const struct sim *s, bool have_planted)
{
	printf("\n%-20s %-24s %-28s %9s %5s | %-28s %9s %5s\n", "rule", "metric",
	       "A/A: false changes [95 % CI]", "undecided", "runs", "planted: detected [95 % CI]",
	       "undecided", "runs");
	for (int i = 0; i < s->n_metrics; i++) {
		const struct metric *m = &s->m[i];
		for (int r = 0; r < N_RULES; r++) {
			const struct tally *a = &m->aa[r], *p = &m->planted[r];
			double ca[2], cp[2];
			int fp = a->worse + a->better;
			resample_cp95(fp, a->jobs, ca);
			resample_cp95(p->worse, p->jobs, cp);
			printf("%-20s %-24s %6.1f %% [%5.1f, %5.1f]      %7.1f %% %5.1f",
			       rule_names[r], m->name, pct(fp, a->jobs), ca[0], ca[1],
			       pct(a->undecided, a->jobs),
			       a->jobs ? (double)a->runs / a->jobs : 0.0);
			if (have_planted)
				printf(" | %6.1f %% [%5.1f, %5.1f]      %7.1f %% %5.1f",
				       pct(p->worse, p->jobs), cp[0], cp[1],
				       pct(p->undecided, p->jobs),
				       p->jobs ? (double)p->runs / p->jobs : 0.0);
			printf("\n");
		}
	}
	/* "undecided" above lumps a gate that passes one-sided (no regression
	 * beyond its threshold) with one that is inconclusive, which makes the
	 * job inconclusive: what a user of a harmless patch sees. */
	printf("\nschedlab's gates left inconclusive (the job then is), A/A:");
	for (int i = 0; i < s->n_metrics; i++)
		printf(" %s %.1f %% (5 a side), %.1f %% (adaptive)%s", s->m[i].name,
		       pct(s->m[i].aa[R_SCHEDLAB5].inconclusive, s->m[i].aa[R_SCHEDLAB5].jobs),
		       pct(s->m[i].aa[R_SCHEDLAB_ADAPTIVE].inconclusive,
			   s->m[i].aa[R_SCHEDLAB_ADAPTIVE].jobs),
		       i + 1 < s->n_metrics ? ";" : "\n");
}

static void print_power(const struct sim *s)
{
	for (int i = 0; i < s->n_metrics && s->n_shifts; i++) {
		const struct metric *m = &s->m[i];
		printf(
		    "\npower, %s (%s is better): A/A jobs with the candidate's values x (1 %s s);"
		    "\n  detected = called a change for the worse, false pass = called "
		    "unchanged (schedlab) or same (a peer)\n",
		    m->name, m->better, strcmp(m->better, "higher") == 0 ? "-" : "+");
		printf("  %-7s", "s");
		for (int r = 0; r < N_RULES; r++)
			printf(" %19s", rule_names[r]);
		printf("\n");
		for (int k = 0; k < s->n_shifts; k++) {
			printf("  %4.0f %% ", 100 * s->shifts[k]);
			for (int r = 0; r < N_RULES; r++) {
				const struct tally *t = &m->shifted[k][r];
				printf(" %5.1f %% (pass %4.1f)", pct(t->worse, t->jobs),
				       pct(t->same, t->jobs));
			}
			printf("\n");
		}
		printf("  %-7s", ">= 80 %");
		for (int r = 0; r < N_RULES; r++) {
			int k = 0;
			while (k < s->n_shifts &&
			       pct(m->shifted[k][r].worse, m->shifted[k][r].jobs) < 80.0)
				k++;
			if (k < s->n_shifts)
				printf(" %17.0f %%", 100 * s->shifts[k]);
			else
				printf(" %19s", "none");
		}
		printf("\n");
	}
}

/* ---- input -------------------------------------------------------------- */

/* The metrics the prepared job gates. */
static void metrics_from_gates(struct sim *s, json_object *job)
{
	json_object *gates = json_object_object_get(job, "gates");
	json_object *wls = json_object_object_get(job, "workloads");
	for (size_t i = 0; gates && i < json_object_array_length(gates); i++) {
		json_object *g = json_object_array_get_idx(gates, i);
		const char *gw = json_object_get_string(json_object_object_get(g, "workload"));
		const char *gm = json_object_get_string(json_object_object_get(g, "metric"));
		const char *tool = NULL;
		for (size_t k = 0; gw && wls && k < json_object_array_length(wls); k++) {
			json_object *w = json_object_array_get_idx(wls, k);
			const char *name =
			    json_object_get_string(json_object_object_get(w, "name"));
			if (name && strcmp(name, gw) == 0)
				tool = json_object_get_string(json_object_object_get(w, "tool"));
		}
		if (!gw || !gm || !tool || s->n_metrics == MAX_METRICS)
			continue;
		struct metric *m = &s->m[s->n_metrics++];
		snprintf(m->tool, sizeof(m->tool), "%s", tool);
		snprintf(m->workload, sizeof(m->workload), "%s", gw);
		snprintf(m->name, sizeof(m->name), "%s", gm);
		m->better = metrics_better(tool, gm);
	}
}

/* ---- main --------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(
	    f, "Usage: verdict-peers [--jobs N] [--seed S] [--hogs H] [--workload W]\n"
	       "                     [--adaptive MIN:MAX] [--shifts LIST] [--planted-dir D] DIR\n\n"
	       "Replays N simulated A/A and planted jobs, drawn from the runs that\n"
	       "bench/verdict-accuracy.sh stored in DIR, through schedlab's rule (5 a side and\n"
	       "adaptive) and the peers' (compare/peer_rules.h), and prints per rule and gated\n"
	       "metric the false-change and detection rates with 95 %% Clopper-Pearson\n"
	       "intervals, the runs a side and the undecided share; then the power table.\n\n"
	       "  --jobs N         simulated jobs of each kind (default 300, at most 100000)\n"
	       "  --seed S         the random seed (default 1)\n"
	       "  --hogs H         the host load pass: busy loops beside the jobs (default 0)\n"
	       "  --workload W     keep only workload W and its gates (as --suite latency or rt)\n"
	       "  --adaptive A:B   schedlab's adaptive repeats (default 5:20, schedlab test's)\n"
	       "  --shifts LIST    power: candidate shifts in percent (default 5,10,15,20,30,50;\n"
	       "                   \"none\" skips the power replay)\n"
	       "  --planted-dir D  take the planted jobs from D instead of DIR\n");
}

static int parse_shifts(const char *arg, struct sim *s)
{
	s->n_shifts = 0;
	if (strcmp(arg, "none") == 0)
		return 0;
	_cleanup_free_ char *copy = strdup(arg);
	char *save = NULL;
	for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t;
	     t = strtok_r(NULL, ",", &save)) {
		long v;
		if (s->n_shifts == MAX_SHIFTS || parse_int(t, 1, 500, &v) < 0)
			return -1;
		s->shifts[s->n_shifts++] = v / 100.0;
	}
	return s->n_shifts ? 0 : -1;
}

static struct job *job_for(json_object *stored, const char *workload, int min, int max,
			   json_object **ret_json)
{
	_cleanup_json_ json_object *j = resample_job_json(stored, workload, min, max);
	struct job *job = NULL;
	struct sl_error err = {0};
	if (!j || job_from_expanded(j, &job, &err) < 0) {
		fprintf(stderr, "verdict-peers: the stored job: %s\n",
			j ? err.message : "no memory");
		return NULL;
	}
	if (ret_json)
		*ret_json = json_object_get(j);
	return job;
}

int main(int argc, char **argv)
{
	static struct sim s; /* large: the tallies */
	int jobs = 300, hogs = 0, amin = 5, amax = 20;
	unsigned long seed = 1;
	const char *workload = NULL, *pdir = NULL;
	parse_shifts("5,10,15,20,30,50", &s);
	static const struct option opts[] = {{"jobs", required_argument, NULL, 'j'},
					     {"seed", required_argument, NULL, 's'},
					     {"hogs", required_argument, NULL, 'g'},
					     {"workload", required_argument, NULL, 'w'},
					     {"adaptive", required_argument, NULL, 'a'},
					     {"shifts", required_argument, NULL, 'S'},
					     {"planted-dir", required_argument, NULL, 'p'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	int c, li = 0;
	long v, v2;
	while ((c = getopt_long(argc, argv, "h", opts, &li)) != -1) {
		const char *colon = c == 'a' ? strchr(optarg, ':') : NULL;
		char head[16];
		bool ok = true;
		switch (c) {
		case 'j':
			ok = parse_int(optarg, 1, 100000, &v) == 0;
			jobs = (int)v;
			break;
		case 's':
			ok = parse_int(optarg, 0, LONG_MAX, &v) == 0;
			seed = (unsigned long)v;
			break;
		case 'g':
			ok = parse_int(optarg, 0, 1024, &v) == 0;
			hogs = (int)v;
			break;
		case 'w':
			workload = optarg;
			break;
		case 'p':
			pdir = optarg;
			break;
		case 'S':
			ok = parse_shifts(optarg, &s) == 0;
			break;
		case 'a':
			ok = colon && colon - optarg < (long)sizeof(head);
			if (ok) {
				snprintf(head, sizeof(head), "%.*s", (int)(colon - optarg), optarg);
				ok = parse_int(head, 1, MAX_DRAW, &v) == 0 &&
				     parse_int(colon + 1, v, MAX_DRAW, &v2) == 0;
				amin = (int)v;
				amax = (int)v2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
		if (!ok) {
			fprintf(stderr, "verdict-peers: bad --%s '%s' (see --help)\n",
				opts[li].name, optarg);
			return 2;
		}
	}
	if (optind + 1 != argc) {
		usage(stderr);
		return 2;
	}
	gsl_set_error_handler_off(); /* a failed GSL call is an answer, not an abort */
	const char *dir = argv[optind];
	json_object *aa[MAX_RESULTS], *pl[MAX_RESULTS];
	int n_aa = resample_load_results(dir, "aa-", hogs, aa, MAX_RESULTS);
	int n_pl = resample_load_results(pdir ? pdir : dir, "planted-", hogs, pl, MAX_RESULTS);
	if (n_aa < 0 || n_pl < 0) {
		fprintf(stderr, "verdict-peers: cannot read '%s'\n", n_aa < 0 ? dir : pdir);
		return 2;
	}
	if (n_aa == 0) {
		fprintf(stderr,
			"verdict-peers: no A/A results with %d hog(s) in '%s' "
			"(bench/verdict-accuracy.sh --out DIR makes them)\n",
			hogs, dir);
		return 2;
	}
	json_object *stored = json_object_object_get(aa[0], "job");
	_cleanup_json_ json_object *job_json = NULL;
	s.job5 = job_for(stored, workload, 5, 5, &job_json);
	s.jobA = job_for(stored, workload, amin, amax, NULL);
	if (!s.job5 || !s.jobA)
		return 2;
	metrics_from_gates(&s, job_json);
	if (s.n_metrics == 0) {
		fprintf(stderr, "verdict-peers: the job gates no metric%s%s\n",
			workload ? " of workload " : "", workload ? workload : "");
		return 2;
	}
	s.bname = s.job5->baseline->name;
	for (size_t i = 0; i < s.job5->n_variants; i++)
		if (&s.job5->variants[i] != s.job5->baseline)
			s.cname = s.job5->variants[i].name;
	s.calibration = json_object_object_get(aa[0], "calibration");
	struct resample_keep keep[MAX_METRICS];
	for (int i = 0; i < s.n_metrics; i++)
		keep[i] = (struct resample_keep){s.m[i].workload, s.m[i].name};
	size_t nk = (size_t)s.n_metrics;
	struct resample_pool aa_runs = {0}, base_runs = {0}, planted_runs = {0};
	int rc = 0;
	for (int i = 0; i < n_aa && rc == 0; i++)
		rc = resample_pool_add(&aa_runs, aa[i], true, keep, nk) |
		     resample_pool_add(&aa_runs, aa[i], false, keep, nk) |
		     resample_pool_add(&base_runs, aa[i], true, keep, nk) |
		     resample_pool_add(&base_runs, aa[i], false, keep, nk);
	for (int i = 0; i < n_pl && rc == 0; i++)
		rc = resample_pool_add(&base_runs, pl[i], true, keep, nk) |
		     resample_pool_add(&planted_runs, pl[i], false, keep, nk);
	if (rc != 0 || !s.cname || aa_runs.n == 0) {
		fprintf(stderr, "verdict-peers: the stored results hold no runs to pool\n");
		return 2;
	}
	printf("pooled from '%s'%s%s, %d hog(s): %d A/A jobs (%zu runs), %d planted jobs (%zu "
	       "candidate runs); workload %s; schedlab adaptive %d..%d; %d jobs of each kind, "
	       "seed %lu\n",
	       dir, pdir ? ", planted from " : "", pdir ? pdir : "", hogs, n_aa, aa_runs.n, n_pl,
	       planted_runs.n, workload ? workload : "all", amin, amax, jobs, seed);
	s.rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(s.rng, seed);
	rc = simulate(&s, &aa_runs, &base_runs, &planted_runs, jobs);
	if (rc == 0) {
		print_rates(&s, planted_runs.n > 0);
		print_power(&s);
	}
	gsl_rng_free(s.rng);
	resample_pool_free(&aa_runs);
	resample_pool_free(&base_runs);
	resample_pool_free(&planted_runs);
	job_free(s.job5);
	job_free(s.jobA);
	for (int i = 0; i < n_aa; i++)
		json_object_put(aa[i]);
	for (int i = 0; i < n_pl; i++)
		json_object_put(pl[i]);
	return rc == 0 ? 0 : 1;
}
