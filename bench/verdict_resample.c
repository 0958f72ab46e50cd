/* verdict-resample: the decision rule's error rates on real guest runs, by
 * resampling (bench/verdict-resample.sh runs it; docs/statistics.md).
 *
 * bench/verdict-accuracy.sh leaves, per host load, A/A jobs (the base kernel
 * against itself) and planted jobs (the base against base + a planted
 * regression) with every run they booted. Real A/A jobs take minutes each,
 * so their false-positive rate is known only to within tens of percent. This
 * tool pools those real runs and replays many simulated jobs through the
 * production rule: each job draws its runs with replacement from the pools,
 * looks at the adaptive repeat schedule of the stored job
 * (compare_look_schedule), compares with compare_result_calibrated() and the
 * stored job and calibration, and stops as the runner does (no gated metric
 * inconclusive) or at the last look.
 *   A/A:     both sides drawn from the A/A runs (one kernel);
 *   planted: the baseline drawn from the A/A runs and the planted jobs'
 *            baselines, the candidate from the planted jobs' candidates.
 * Drawing runs independently assumes runs are exchangeable: drift between
 * jobs (a host busier one hour than the next) is not in it, which is why the
 * real jobs' counts are quoted beside it.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>

#include "compare/compare.h"
#include "compare/resample.h"
#include "compare/sequential.h"
#include "job/job.h"
#include "util/json.h"
#include "util/parse.h"

#define MAX_METRICS 16

struct pool {
	json_object **runs; /* borrowed from the results (their details dropped) */
	size_t n, cap;
};

struct tally {
	char metric[128];
	int improved, regressed, unchanged, inconclusive;
};

struct outcome {
	struct tally m[MAX_METRICS];
	int n_metrics;
	int pass, fail, inconclusive_jobs;
	long rounds;
};

static void usage(FILE *f)
{
	fprintf(
	    f, "Usage: verdict-resample [--jobs N] [--seed S] [--hogs H] DIR\n\n"
	       "Replays N simulated A/A and N planted jobs through schedlab's decision rule,\n"
	       "drawing their runs from the real runs that bench/verdict-accuracy.sh stored\n"
	       "in DIR (aa-*-hogH.result.json, planted-*-hogH.result.json), and prints the\n"
	       "false-positive and detection rates with 95 %% Clopper-Pearson bounds.\n\n"
	       "  --jobs N   simulated jobs of each kind (default 2000, at most 100000)\n"
	       "  --seed S   the random seed (default 1)\n"
	       "  --hogs H   the host load pass to pool: busy loops beside the jobs (default 0)\n");
}

static int pool_add(struct pool *p, json_object *run)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 64;
		json_object **n = realloc(p->runs, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		p->runs = n;
		p->cap = cap;
	}
	p->runs[p->n++] = run;
	return 0;
}

/* Adds every run of the result's variant (baseline or the other one). */
static void pool_variant(struct pool *p, json_object *result, bool baseline, const char *bname)
{
	json_object *variants = json_object_object_get(result, "variants");
	json_object_object_foreach(variants, vname, v)
	{
		if ((strcmp(vname, bname) == 0) != baseline)
			continue;
		json_object *runs = json_object_object_get(v, "runs");
		for (size_t i = 0; runs && i < json_object_array_length(runs); i++) {
			/* The workloads' raw details are not compared: drawn runs are
			 * copied many times, so they go. */
			json_object *run = json_object_array_get_idx(runs, i);
			json_object *wls = json_object_object_get(run, "workloads");
			for (size_t w = 0; wls && w < json_object_array_length(wls); w++)
				json_object_object_del(json_object_array_get_idx(wls, w),
						       "details");
			pool_add(p, run);
		}
	}
}

/* A run drawn from pool, renamed as round r of variant vname. */
static json_object *draw(const struct pool *p, gsl_rng *rng, const char *vname, int r)
{
	json_object *copy = NULL;
	json_object_deep_copy(p->runs[gsl_rng_uniform_int(rng, p->n)], &copy, NULL);
	char key[64];
	snprintf(key, sizeof(key), "%s#%d", vname, r);
	json_object_object_add(copy, "key", json_object_new_string(key));
	json_object_object_add(copy, "repeat", json_object_new_int(r));
	return copy;
}

static struct tally *tally_of(struct outcome *o, const char *metric)
{
	for (int i = 0; i < o->n_metrics; i++)
		if (strcmp(o->m[i].metric, metric) == 0)
			return &o->m[i];
	if (o->n_metrics == MAX_METRICS)
		return NULL;
	struct tally *t = &o->m[o->n_metrics++];
	snprintf(t->metric, sizeof(t->metric), "%s", metric);
	return t;
}

/* One simulated job: runs added look by look until no gated comparison is
 * inconclusive or the verdict is fail, as the runner stops. */
static int simulate(const struct job *job, json_object *calibration, const struct pool *base,
		    const struct pool *cand, gsl_rng *rng, struct outcome *o)
{
	int looks[COMPARE_MAX_LOOKS];
	size_t n_looks =
	    compare_look_schedule(job->repeat_min, job->repeat, looks, COMPARE_MAX_LOOKS);
	const char *bname = job->baseline->name;
	const char *cname = NULL;
	for (size_t i = 0; i < job->n_variants; i++)
		if (&job->variants[i] != job->baseline)
			cname = job->variants[i].name;
	_cleanup_json_ json_object *variants = json_object_new_object();
	json_object *bv = json_object_new_object(), *cv = json_object_new_object();
	json_object *bruns = json_object_new_array(), *cruns = json_object_new_array();
	json_object_object_add(bv, "runs", bruns);
	json_object_object_add(cv, "runs", cruns);
	json_object_object_add(variants, bname, bv);
	json_object_object_add(variants, cname, cv);
	int rounds = 0;
	for (size_t li = 0; li < n_looks; li++) {
		for (; rounds < looks[li]; rounds++) {
			json_object_array_add(bruns, draw(base, rng, bname, rounds));
			json_object_array_add(cruns, draw(cand, rng, cname, rounds));
		}
		_cleanup_json_ json_object *cmps = NULL, *reasons = NULL;
		char verdict[16];
		struct sl_error err = {0};
		if (compare_result_calibrated(job, variants, calibration, &cmps, verdict, &reasons,
					      &err) < 0) {
			fprintf(stderr, "verdict-resample: %s\n", err.message);
			return -1;
		}
		bool undecided = false;
		for (size_t i = 0; i < json_object_array_length(cmps); i++) {
			json_object *c = json_object_array_get_idx(cmps, i);
			const char *v =
			    json_object_get_string(json_object_object_get(c, "verdict"));
			if (json_object_get_boolean(json_object_object_get(c, "gated")) && v &&
			    strcmp(v, "inconclusive") == 0)
				undecided = true;
		}
		/* The runner goes on while a gate is undecided, unless the
		 * look's verdict is already fail (service/run/runner.c, "the
		 * job failed"): a false regression at an early look ends the
		 * job, and is counted, even when a later look would undo it. */
		if (undecided && li + 1 < n_looks && strcmp(verdict, "fail") != 0)
			continue;
		for (size_t i = 0; i < json_object_array_length(cmps); i++) {
			json_object *c = json_object_array_get_idx(cmps, i);
			if (!json_object_get_boolean(json_object_object_get(c, "gated")))
				continue;
			struct tally *t = tally_of(
			    o, json_object_get_string(json_object_object_get(c, "metric")));
			const char *v =
			    json_object_get_string(json_object_object_get(c, "verdict"));
			if (!t || !v)
				continue;
			t->improved += strcmp(v, "improved") == 0;
			t->regressed += strcmp(v, "regressed") == 0;
			t->unchanged += strcmp(v, "unchanged") == 0;
			t->inconclusive += strcmp(v, "inconclusive") == 0;
		}
		o->pass += strcmp(verdict, "pass") == 0;
		o->fail += strcmp(verdict, "fail") == 0;
		o->inconclusive_jobs += strcmp(verdict, "inconclusive") == 0;
		break;
	}
	o->rounds += rounds;
	return 0;
}

/* The p in [0, 1] where f(p) crosses 0.05, f monotone, by bisection: GSL's
 * inverse beta fails to converge for x close to n (1994 of 2000). */
static double bisect(double (*f)(int, int, double), int x, int n, bool increasing)
{
	double lo = 0, hi = 1;
	for (int i = 0; i < 100; i++) {
		double mid = (lo + hi) / 2;
		if ((f(x, n, mid) < 0.05) == increasing)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}
static double binom_le(int x, int n, double p) /* P(X <= x) */
{
	return gsl_cdf_binomial_P((unsigned)x, p, (unsigned)n);
}
static double binom_ge(int x, int n, double p) /* P(X >= x) */
{
	return x <= 0 ? 1.0 : gsl_cdf_binomial_Q((unsigned)(x - 1), p, (unsigned)n);
}

/* 95 % one-sided Clopper-Pearson bounds of x successes in n: the largest p
 * under which x or fewer has 5 % chance, the smallest under which x or more
 * has. */
static double cp_upper(int x, int n)
{
	return x >= n ? 1.0 : bisect(binom_le, x, n, false);
}
static double cp_lower(int x, int n)
{
	return x <= 0 ? 0.0 : bisect(binom_ge, x, n, true);
}

static void print_outcome(const char *kind, const struct outcome *o, int jobs, bool aa)
{
	printf("%-8s %d simulated jobs, %.1f runs a side on average; job verdicts: pass %d, "
	       "fail %d, inconclusive %d\n",
	       kind, jobs, (double)o->rounds / jobs, o->pass, o->fail, o->inconclusive_jobs);
	for (int i = 0; i < o->n_metrics; i++) {
		const struct tally *t = &o->m[i];
		printf("  %-24s improved %5d  regressed %5d  unchanged %5d  inconclusive %5d\n",
		       t->metric, t->improved, t->regressed, t->unchanged, t->inconclusive);
		if (aa) {
			int fp = t->improved + t->regressed;
			printf("  %-24s false positives %d of %d: %.2f %% (at most %.2f %%, "
			       "one-sided 95 %%)\n",
			       "", fp, jobs, 100.0 * fp / jobs, 100.0 * cp_upper(fp, jobs));
		}
	}
	if (!aa)
		printf("  detected (fail) %d of %d: %.2f %% (at least %.2f %%, one-sided 95 %%); "
		       "flagged inconclusive %d; passed %d\n",
		       o->fail, jobs, 100.0 * o->fail / jobs, 100.0 * cp_lower(o->fail, jobs),
		       o->inconclusive_jobs, o->pass);
}

/* An integer option in [min, max], or a line naming it and -1. */
static int opt_long(const char *name, const char *arg, long min, long max, long *ret)
{
	if (parse_int(arg, min, max, ret) == 0)
		return 0;
	fprintf(stderr, "verdict-resample: --%s needs an integer from %ld to %ld\n", name, min,
		max);
	return -1;
}

int main(int argc, char **argv)
{
	int jobs = 2000, hogs = 0;
	unsigned long seed = 1;
	static const struct option opts[] = {{"jobs", required_argument, NULL, 'j'},
					     {"seed", required_argument, NULL, 's'},
					     {"hogs", required_argument, NULL, 'g'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	int c;
	long v;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			if (opt_long("jobs", optarg, 1, 100000, &v) < 0)
				return 2;
			jobs = (int)v;
			break;
		case 's':
			if (opt_long("seed", optarg, 0, LONG_MAX, &v) < 0)
				return 2;
			seed = (unsigned long)v;
			break;
		case 'g':
			if (opt_long("hogs", optarg, 0, 1024, &v) < 0)
				return 2;
			hogs = (int)v;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind + 1 != argc) {
		usage(stderr);
		return 2;
	}
	gsl_set_error_handler_off(); /* a failed GSL call is an answer, not an abort */
	const char *dir = argv[optind];
	json_object *aa[256], *pl[256];
	int n_aa = resample_load_results(dir, "aa-", hogs, aa, 256);
	int n_pl = resample_load_results(dir, "planted-", hogs, pl, 256);
	if (n_aa < 0 || n_pl < 0) {
		fprintf(stderr, "verdict-resample: cannot read '%s'\n", dir);
		return 2;
	}
	if (n_aa == 0) {
		fprintf(stderr,
			"verdict-resample: no A/A results with %d hog(s) in '%s' "
			"(bench/verdict-accuracy.sh --out DIR makes them)\n",
			hogs, dir);
		return 2;
	}
	struct job *job = NULL, *pjob = NULL;
	struct sl_error err = {0};
	if (job_from_expanded(json_object_object_get(aa[0], "job"), &job, &err) < 0 ||
	    (n_pl && job_from_expanded(json_object_object_get(pl[0], "job"), &pjob, &err) < 0)) {
		fprintf(stderr, "verdict-resample: a stored job: %s\n", err.message);
		return 2;
	}
	struct pool aa_runs = {0}, base_runs = {0}, planted_runs = {0};
	for (int i = 0; i < n_aa; i++) {
		pool_variant(&aa_runs, aa[i], true, job->baseline->name);
		pool_variant(&aa_runs, aa[i], false, job->baseline->name);
		pool_variant(&base_runs, aa[i], true, job->baseline->name);
		pool_variant(&base_runs, aa[i], false, job->baseline->name);
	}
	for (int i = 0; i < n_pl; i++) {
		pool_variant(&base_runs, pl[i], true, pjob->baseline->name);
		pool_variant(&planted_runs, pl[i], false, pjob->baseline->name);
	}
	printf("pooled from '%s', %d hog(s): %d A/A jobs (%zu runs), %d planted jobs "
	       "(%zu candidate runs); repeat %d..%d, alpha %g; seed %lu\n",
	       dir, hogs, n_aa, aa_runs.n, n_pl, planted_runs.n, job->repeat_min, job->repeat,
	       job->alpha, seed);
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(rng, seed);
	struct outcome o_aa = {0}, o_pl = {0};
	json_object *cal = json_object_object_get(aa[0], "calibration");
	int rc = 0;
	for (int j = 0; j < jobs && rc == 0; j++)
		rc = simulate(job, cal, &aa_runs, &aa_runs, rng, &o_aa);
	if (rc == 0)
		print_outcome("A/A", &o_aa, jobs, true);
	if (rc == 0 && n_pl) {
		json_object *pcal = json_object_object_get(pl[0], "calibration");
		for (int j = 0; j < jobs && rc == 0; j++)
			rc = simulate(pjob, pcal, &base_runs, &planted_runs, rng, &o_pl);
		if (rc == 0)
			print_outcome("planted", &o_pl, jobs, false);
	}
	gsl_rng_free(rng);
	free(aa_runs.runs);
	free(base_runs.runs);
	free(planted_runs.runs);
	job_free(job);
	job_free(pjob);
	for (int i = 0; i < n_aa; i++)
		json_object_put(aa[i]);
	for (int i = 0; i < n_pl; i++)
		json_object_put(pl[i]);
	return rc == 0 ? 0 : 1;
}
