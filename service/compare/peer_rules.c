/* Other tools' decision rules, for replaying them on schedlab's runs
 * (peer_rules.h). Each is written from the peer's published behaviour
 * (../shared/PEERS.md names the files); where the peer's code and its
 * description differ, the comment says which is followed. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "compare/peer_rules.h"
#include "compare/stats.h"
#include "util/macro.h"

#define PERMUTATION_EXACT_MAX 20000 /* splits enumerated; above, sampled */
#define PERMUTATION_RESAMPLES 9999  /* what scipy.stats.permutation_test draws by default */

static bool sample_ok(const double *v, size_t n)
{
	if (!v || n == 0 || n > STATS_MAX_VALUES)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(v[i]))
			return false;
	return true;
}

static int check(const double *a, size_t na, const double *b, size_t nb, struct peer_verdict *ret)
{
	if (!ret || !sample_ok(a, na) || !sample_ok(b, nb))
		return -EINVAL;
	return 0;
}

static double mean_of(const double *v, size_t n)
{
	return gsl_stats_mean(v, 1, n);
}

static int sign_of(double d)
{
	return d > 0 ? 1 : d < 0 ? -1 : 0;
}

const char *peer_answer_name(enum peer_answer a)
{
	switch (a) {
	case PEER_SAME:
		return "same";
	case PEER_CHANGED:
		return "changed";
	default:
		return "undecided";
	}
}

/* A sorted copy of v (caller frees), or NULL. */
static double *sorted_copy(const double *v, size_t n)
{
	double *s = malloc(n * sizeof(*s));
	if (!s)
		return NULL;
	memcpy(s, v, n * sizeof(*s));
	gsl_sort(s, 1, n);
	return s;
}

/* ---- lkp-tests ---------------------------------------------------------- */

/* lkp drops n / 32 values (at most 3) from each end before it takes min,
 * middle and max: nothing below 32 samples, which is every schedlab job. */
static void lkp_summary(const double *sorted, size_t n, double *min, double *mid, double *max)
{
	size_t margin = n >> 5 < 3 ? n >> 5 : 3;
	const double *v = sorted + margin;
	size_t m = n - 2 * margin;
	*min = v[0];
	*mid = v[m / 2];
	*max = v[m - 1];
}

int peer_lkp(const double *a, size_t na, const double *b, size_t nb, bool key,
	     struct peer_verdict *ret)
{
	if (check(a, na, b, nb, ret) < 0)
		return -EINVAL;
	struct peer_verdict v = {.answer = PEER_SAME, .p = NAN};
	/* lkp compares a non-failure metric only when a side has 3 samples. */
	if (na < 3 && nb < 3) {
		*ret = v;
		return 0;
	}
	_cleanup_free_ double *sa = sorted_copy(a, na), *sb = sorted_copy(b, nb);
	if (!sa || !sb)
		return -ENOMEM;
	double min_a, mid_a, max_a, min_b, mid_b, max_b;
	lkp_summary(sa, na, &min_a, &mid_a, &max_a);
	lkp_summary(sb, nb, &min_b, &mid_b, &max_b);
	v.sign = sign_of(mid_b - mid_a);
	/* lib/stats.rb's default test: one side's min above the other's middle
	 * value, and its middle value above the other's max. A partial
	 * separation of the ranges, not a complete one. */
	bool up = min_b > mid_a && mid_b > max_a;
	bool down = min_a > mid_b && mid_a > max_b;
	if (!up && !down) {
		*ret = v;
		return 0;
	}
	/* The ratio of the larger middle value to the smaller (5 when the
	 * smaller is not positive, as lkp caps it). lkp ignores 1 % or less
	 * everywhere and, per PEERS.md, under 5 % for metrics that are not
	 * key (the lib/stats.rb read has 10 % there; no gated metric is
	 * affected, as gated metrics are key). */
	double hi = fmax(mid_a, mid_b), lo = fmin(mid_a, mid_b);
	double ratio = lo > 0 ? hi / lo : 5.0;
	if (ratio > 1.01 && (key || ratio > 1.05))
		v.answer = PEER_CHANGED;
	*ret = v;
	return 0;
}

/* ---- mmtests ------------------------------------------------------------ */

/* The 95 % half-width t(0.975, n - 1) * s / sqrt(n), s with n - 1. */
static double mmtests_half_width(const double *v, size_t n)
{
	double s = gsl_stats_sd(v, 1, n);
	return gsl_cdf_tdist_Qinv(0.025, (double)(n - 1)) * s / sqrt((double)n);
}

int peer_mmtests(const double *a, size_t na, const double *b, size_t nb, struct peer_verdict *ret)
{
	if (check(a, na, b, nb, ret) < 0)
		return -EINVAL;
	double d = mean_of(b, nb) - mean_of(a, na);
	struct peer_verdict v = {.answer = PEER_SAME, .sign = sign_of(d), .p = NAN};
	if (na >= 2 && nb >= 2 && fabs(d) > mmtests_half_width(a, na) + mmtests_half_width(b, nb))
		v.answer = PEER_CHANGED;
	*ret = v;
	return 0;
}

/* ---- Kolmogorov-Smirnov and Pinpoint ------------------------------------ */

/* Q(lambda), the Kolmogorov distribution's survival function, by its
 * alternating series. The terms fall fast for lambda above about 0.3;
 * below, the series has not settled after 100 terms and the answer is 1
 * (the test sees no difference), as Numerical Recipes' probks does. */
static double kolmogorov_q(double lambda)
{
	if (lambda < 1e-8)
		return 1.0;
	double sum = 0, sign = 1;
	for (int k = 1; k <= 100; k++) {
		double term = sign * 2.0 * exp(-2.0 * k * k * lambda * lambda);
		sum += term;
		if (fabs(term) <= 1e-10 * fabs(sum) || fabs(term) <= 1e-300)
			return fmin(fmax(sum, 0.0), 1.0);
		sign = -sign;
	}
	return 1.0;
}

int peer_kolmogorov_smirnov(const double *a, size_t na, const double *b, size_t nb, double *ret_d,
			    double *ret_p)
{
	if (!ret_d || !ret_p || !sample_ok(a, na) || !sample_ok(b, nb))
		return -EINVAL;
	_cleanup_free_ double *sa = sorted_copy(a, na), *sb = sorted_copy(b, nb);
	if (!sa || !sb)
		return -ENOMEM;
	/* Walk both sorted samples; at each distinct value step past every copy
	 * of it on both sides before comparing the two empirical CDFs, so ties
	 * across the samples do not open a false gap. */
	size_t i = 0, j = 0;
	double d = 0;
	while (i < na && j < nb) {
		double x = fmin(sa[i], sb[j]);
		while (i < na && sa[i] <= x)
			i++;
		while (j < nb && sb[j] <= x)
			j++;
		d = fmax(d, fabs((double)i / (double)na - (double)j / (double)nb));
	}
	double e = sqrt((double)na * (double)nb / (double)(na + nb));
	*ret_d = d;
	*ret_p = kolmogorov_q((e + 0.12 + 0.11 / e) * d);
	return 0;
}

/* Pinpoint's high thresholds at magnitude 1.0 IQR (its default when a job
 * names no comparison magnitude) for sample counts 1..30, from
 * thresholds.py's performance table. A count above 30 takes the last. */
static const double pinpoint_high_1iqr[] = {
    1.000, .6986, 1.000, .8853, 1.000, .9362, .8984, .7930, .6589, .5708,
    .4701, .4026, .3299, .2803, .2291, .1936, .1480, .1250, .1021, .0811,
    .0663, .0529, .0433, .0346, .0284, .0228, .0178, .0143, .0118, .0091,
};

double peer_pinpoint_high_threshold(size_t n)
{
	size_t last = ELEMENTSOF(pinpoint_high_1iqr);
	return pinpoint_high_1iqr[(n < 1 ? 1 : n > last ? last : n) - 1];
}

int peer_pinpoint(const double *a, size_t na, const double *b, size_t nb, const char *better,
		  struct peer_verdict *ret)
{
	if (check(a, na, b, nb, ret) < 0)
		return -EINVAL;
	double p_mw, d, p_ks;
	if (stats_mann_whitney(a, na, b, nb, &p_mw) < 0 ||
	    peer_kolmogorov_smirnov(a, na, b, nb, &d, &p_ks) < 0)
		return -EINVAL;
	double diff = mean_of(b, nb) - mean_of(a, na);
	struct peer_verdict v = {.sign = sign_of(diff), .p = fmin(p_mw, p_ks)};
	/* job_state.py: with an improvement direction known, a mean moving
	 * toward it is "same" before any test. */
	if (better && ((strcmp(better, "lower") == 0 && diff < 0) ||
		       (strcmp(better, "higher") == 0 && diff > 0)))
		v.answer = PEER_SAME;
	else if (v.p <= 0.01)
		v.answer = PEER_CHANGED;
	else if (v.p > peer_pinpoint_high_threshold((na + nb) / 2))
		v.answer = PEER_SAME;
	else
		v.answer = PEER_UNDECIDED;
	*ret = v;
	return 0;
}

/* ---- PerfCompare -------------------------------------------------------- */

int peer_perfcompare(const double *a, size_t na, const double *b, size_t nb,
		     struct peer_verdict *ret)
{
	if (check(a, na, b, nb, ret) < 0)
		return -EINVAL;
	double p, delta;
	if (stats_mann_whitney(a, na, b, nb, &p) < 0 ||
	    stats_cliffs_delta(a, na, b, nb, &delta) < 0)
		return -EINVAL;
	struct peer_verdict v = {.answer = PEER_SAME, .sign = sign_of(delta), .p = p};
	if (p <= 0.05 && fabs(delta) >= 0.2)
		v.answer = PEER_CHANGED;
	*ret = v;
	return 0;
}

/* ---- Firecracker -------------------------------------------------------- */

/* C(n, k) as a double (exact well past PERMUTATION_EXACT_MAX). */
static double choose(size_t n, size_t k)
{
	double c = 1;
	for (size_t i = 1; i <= k; i++)
		c = c * (double)(n - k + i) / (double)i;
	return c;
}

/* mean(b) - mean(a) falls as the sum of the values put on side a grows, so
 * counting splits by that sum is counting them by the statistic. */
struct perm_count {
	double observed, tol;
	long le, ge, total; /* splits whose a-sum is <= / >= the observed one */
};

static void perm_tally(struct perm_count *c, double sum_a)
{
	c->le += sum_a <= c->observed + c->tol;
	c->ge += sum_a >= c->observed - c->tol;
	c->total++;
}

/* Every way to pick the remaining k of side a from pool[from..n). */
static void perm_enumerate(const double *pool, size_t n, size_t from, size_t k, double sum,
			   struct perm_count *c)
{
	if (k == 0) {
		perm_tally(c, sum);
		return;
	}
	for (size_t i = from; i + k <= n; i++)
		perm_enumerate(pool, n, i + 1, k - 1, sum + pool[i], c);
}

int peer_firecracker(const double *a, size_t na, const double *b, size_t nb,
		     struct peer_verdict *ret)
{
	if (check(a, na, b, nb, ret) < 0)
		return -EINVAL;
	size_t n = na + nb;
	_cleanup_free_ double *pool = malloc(n * sizeof(*pool));
	if (!pool)
		return -ENOMEM;
	memcpy(pool, a, na * sizeof(*a));
	memcpy(pool + na, b, nb * sizeof(*b));
	double sum_a = 0, scale = 0;
	for (size_t i = 0; i < n; i++) {
		if (i < na)
			sum_a += pool[i];
		scale += fabs(pool[i]);
	}
	struct perm_count c = {.observed = sum_a, .tol = 1e-12 * fmax(scale, 1.0)};
	if (choose(n, na) <= PERMUTATION_EXACT_MAX) {
		perm_enumerate(pool, n, 0, na, 0, &c);
	} else {
		gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
		if (!rng)
			return -ENOMEM;
		gsl_rng_set(rng, 1);
		perm_tally(&c, sum_a); /* the observed split counts once, as scipy does */
		for (int r = 0; r < PERMUTATION_RESAMPLES; r++) {
			gsl_ran_shuffle(rng, pool, n, sizeof(*pool));
			double s = 0;
			for (size_t i = 0; i < na; i++)
				s += pool[i];
			perm_tally(&c, s);
		}
		gsl_rng_free(rng);
	}
	/* Two-sided: twice the smaller tail, at most 1. A small a-sum is a large
	 * mean(b) - mean(a). */
	double p = fmin(1.0, 2.0 * (double)(c.le < c.ge ? c.le : c.ge) / (double)c.total);
	double mean_a = mean_of(a, na), diff = mean_of(b, nb) - mean_a;
	struct peer_verdict v = {.answer = PEER_SAME, .sign = sign_of(diff), .p = p};
	if (p < 0.01 && fabs(diff) > 0.2 * fabs(mean_a))
		v.answer = PEER_CHANGED;
	*ret = v;
	return 0;
}
