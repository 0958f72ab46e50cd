/* Summaries, a bootstrap CI of the difference of medians and the
 * Mann-Whitney U test, with GSL. See stats.h and docs/statistics.md. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "compare/stats.h"
#include "util/macro.h"

#define MW_EXACT_MAX 20 /* n1 + n2 up to which the permutation test is exact */

static bool all_finite(const double *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(v[i]))
			return false;
	return true;
}

int stats_summarize(const double *values, size_t n, struct stats_summary *ret)
{
	if (!values || n == 0 || n > STATS_MAX_VALUES || !all_finite(values, n))
		return -EINVAL;
	_cleanup_free_ double *s = malloc(n * sizeof(*s));
	if (!s)
		return -ENOMEM;
	memcpy(s, values, n * sizeof(*s));
	gsl_sort(s, 1, n);
	ret->n = n;
	ret->median = gsl_stats_median_from_sorted_data(s, 1, n);
	/* GSL's quantile is Hyndman-Fan type 7: (n-1)p between order statistics. */
	ret->q1 = gsl_stats_quantile_from_sorted_data(s, 1, n, 0.25);
	ret->q3 = gsl_stats_quantile_from_sorted_data(s, 1, n, 0.75);
	ret->iqr = ret->q3 - ret->q1;
	ret->mean = gsl_stats_mean(s, 1, n);
	ret->min = s[0];
	ret->max = s[n - 1];
	return 0;
}

static double resampled_median(gsl_rng *rng, const double *v, size_t n, double *scratch)
{
	for (size_t i = 0; i < n; i++)
		scratch[i] = v[gsl_rng_uniform_int(rng, n)];
	gsl_sort(scratch, 1, n);
	return gsl_stats_median_from_sorted_data(scratch, 1, n);
}

int stats_bootstrap_median_diff_ci(const double *a, size_t na, const double *b, size_t nb,
				   uint64_t seed, double ret_ci[2])
{
	if (!a || !b || na == 0 || nb == 0 || na > STATS_MAX_VALUES || nb > STATS_MAX_VALUES ||
	    !all_finite(a, na) || !all_finite(b, nb))
		return -EINVAL;
	_cleanup_free_ double *diffs = malloc(STATS_BOOTSTRAP * sizeof(*diffs));
	_cleanup_free_ double *scratch = malloc((na > nb ? na : nb) * sizeof(*scratch));
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	if (!diffs || !scratch || !rng) {
		gsl_rng_free(rng);
		return -ENOMEM;
	}
	/* mt19937 takes 32 bits of seed: fold the 64. */
	gsl_rng_set(rng, (unsigned long)((seed ^ (seed >> 32)) & 0xffffffffUL));
	for (size_t i = 0; i < STATS_BOOTSTRAP; i++) {
		double ma = resampled_median(rng, a, na, scratch);
		double mb = resampled_median(rng, b, nb, scratch);
		diffs[i] = mb - ma;
	}
	gsl_rng_free(rng);
	gsl_sort(diffs, 1, STATS_BOOTSTRAP);
	ret_ci[0] = gsl_stats_quantile_from_sorted_data(diffs, 1, STATS_BOOTSTRAP, 0.025);
	ret_ci[1] = gsl_stats_quantile_from_sorted_data(diffs, 1, STATS_BOOTSTRAP, 0.975);
	return 0;
}

/* U of sample x against y: pairs with x > y, ties counting one half. */
static double mw_u(const double *x, size_t nx, const double *y, size_t ny)
{
	double u = 0;
	for (size_t i = 0; i < nx; i++)
		for (size_t j = 0; j < ny; j++)
			u += x[i] > y[j] ? 1.0 : (x[i] == y[j] ? 0.5 : 0.0);
	return u;
}

/* Exact permutation p-value: every way of splitting the pooled values into
 * groups of na and nb, counting splits whose U is at least as far from its
 * mean as the observed one. Handles ties exactly (midranks). */
static double mw_exact(const double *a, size_t na, const double *b, size_t nb, double u_obs)
{
	size_t n = na + nb;
	double pool[MW_EXACT_MAX], x[MW_EXACT_MAX], y[MW_EXACT_MAX];
	memcpy(pool, a, na * sizeof(double));
	memcpy(pool + na, b, nb * sizeof(double));
	double mu = (double)na * (double)nb / 2.0, d_obs = fabs(u_obs - mu);
	unsigned long total = 0, extreme = 0;
	/* Every bitmask of n bits with exactly na set (Gosper's hack); n <= 20
	 * gives at most C(20,10) = 184756 splits. */
	for (unsigned long mask = (1UL << na) - 1; mask < (1UL << n);) {
		size_t ix = 0, iy = 0;
		for (size_t i = 0; i < n; i++) {
			if (mask & (1UL << i))
				x[ix++] = pool[i];
			else
				y[iy++] = pool[i];
		}
		double d = fabs(mw_u(x, na, y, nb) - mu);
		total++;
		/* A tolerance: U is a multiple of 0.5, so 1e-9 only absorbs rounding. */
		if (d >= d_obs - 1e-9)
			extreme++;
		unsigned long c = mask & -mask, r = mask + c;
		mask = (((r ^ mask) >> 2) / c) | r;
	}
	return (double)extreme / (double)total;
}

/* Normal approximation with tie and continuity corrections. */
static double mw_normal(const double *a, size_t na, const double *b, size_t nb, double u_obs)
{
	size_t n = na + nb;
	_cleanup_free_ double *pool = malloc(n * sizeof(*pool));
	if (!pool)
		return NAN;
	memcpy(pool, a, na * sizeof(double));
	memcpy(pool + na, b, nb * sizeof(double));
	gsl_sort(pool, 1, n);
	double ties = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && pool[j] == pool[i])
			j++;
		double t = (double)(j - i);
		ties += t * t * t - t;
		i = j;
	}
	double n1 = (double)na, n2 = (double)nb, nn = (double)n;
	double mu = n1 * n2 / 2.0;
	double var = n1 * n2 / 12.0 * ((nn + 1.0) - ties / (nn * (nn - 1.0)));
	if (var <= 0)
		return 1.0; /* every value equal: no evidence of a difference */
	double z = (fabs(u_obs - mu) - 0.5) / sqrt(var);
	if (z <= 0)
		return 1.0;
	double p = erfc(z / M_SQRT2);
	return p > 1.0 ? 1.0 : p;
}

int stats_mann_whitney(const double *a, size_t na, const double *b, size_t nb, double *ret_p)
{
	if (!a || !b || na == 0 || nb == 0 || na > STATS_MAX_VALUES || nb > STATS_MAX_VALUES ||
	    !all_finite(a, na) || !all_finite(b, nb))
		return -EINVAL;
	double u = mw_u(a, na, b, nb);
	double p = na + nb <= MW_EXACT_MAX ? mw_exact(a, na, b, nb, u) : mw_normal(a, na, b, nb, u);
	if (isnan(p))
		return -ENOMEM;
	*ret_p = p;
	return 0;
}

uint64_t stats_seed_from_string(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (; s && *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return h;
}

double stats_mann_whitney_min_p(size_t na, size_t nb)
{
	if (na == 0 || nb == 0)
		return 1.0;
	/* C(na + nb, k) for the smaller k, in floating point: exact for every
	 * n this project sees, and monotone beyond. */
	size_t k = na < nb ? na : nb, n = na + nb;
	double c = 1.0;
	for (size_t i = 1; i <= k; i++)
		c = c * (double)(n - k + i) / (double)i;
	double p = 2.0 / c;
	return p > 1.0 ? 1.0 : p;
}

int stats_cliffs_delta(const double *a, size_t na, const double *b, size_t nb, double *ret_delta)
{
	if (!a || !b || na == 0 || nb == 0 || na > STATS_MAX_VALUES || nb > STATS_MAX_VALUES ||
	    !all_finite(a, na) || !all_finite(b, nb))
		return -EINVAL;
	double more = 0, less = 0;
	for (size_t i = 0; i < nb; i++)
		for (size_t j = 0; j < na; j++) {
			more += b[i] > a[j];
			less += b[i] < a[j];
		}
	*ret_delta = (more - less) / ((double)na * (double)nb);
	return 0;
}

/* C(na + nb, na) in floating point (see stats_mann_whitney_min_p). */
static double choose(size_t na, size_t nb)
{
	size_t k = na < nb ? na : nb, n = na + nb;
	double c = 1.0;
	for (size_t i = 1; i <= k; i++)
		c = c * (double)(n - k + i) / (double)i;
	return c;
}

size_t stats_mw_shift_rank(size_t na, size_t nb, double tail)
{
	if (na == 0 || nb == 0 || !(tail > 0) || tail >= 0.5)
		return 0;
	size_t m = na < nb ? na : nb, n = na < nb ? nb : na, deg = m * n;
	if (na + nb > STATS_HL_EXACT_MAX) {
		/* The normal approximation of U (mean mn/2, variance
		 * mn(m+n+1)/12), rounded down so the coverage errs high. */
		double mu = (double)deg / 2.0;
		double sd = sqrt((double)deg * (double)(m + n + 1) / 12.0);
		double k = floor(mu - gsl_cdf_ugaussian_Qinv(tail) * sd);
		return k < 1 ? 0 : (size_t)k;
	}
	/* The exact null distribution of U: the number of splits with U = u
	 * is the coefficient of q^u in the Gaussian binomial [m+n choose m]_q
	 * = prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i). The lower tail is what
	 * is needed, and its coefficients are small integers that doubles hold
	 * exactly. */
	_cleanup_free_ double *c = calloc(deg + 1, sizeof(*c));
	if (!c)
		return 0;
	c[0] = 1;
	for (size_t i = 1; i <= m; i++) {
		for (size_t j = deg; j >= n + i; j--)
			c[j] -= c[j - n - i];
		for (size_t j = i; j <= deg; j++)
			c[j] += c[j - i];
	}
	double total = choose(na, nb), cum = 0;
	size_t k = 0; /* the largest k with P(U <= k - 1) <= tail */
	for (size_t u = 0; u <= deg; u++) {
		cum += c[u];
		if (cum / total > tail * (1 + 1e-12))
			break;
		k = u + 1;
	}
	return k;
}

int stats_hl_shift(const double *a, size_t na, const double *b, size_t nb, double tail,
		   struct stats_shift *ret)
{
	if (!a || !b || na == 0 || nb == 0 || na > STATS_MAX_VALUES || nb > STATS_MAX_VALUES ||
	    !all_finite(a, na) || !all_finite(b, nb) || !(tail > 0) || tail >= 0.5)
		return -EINVAL;
	size_t total = na * nb;
	_cleanup_free_ double *d = malloc(total * sizeof(*d));
	if (!d)
		return -ENOMEM;
	for (size_t j = 0, x = 0; j < nb; j++)
		for (size_t i = 0; i < na; i++)
			d[x++] = b[j] - a[i];
	gsl_sort(d, 1, total);
	size_t k = stats_mw_shift_rank(na, nb, tail);
	ret->estimate = gsl_stats_median_from_sorted_data(d, 1, total);
	ret->rank = k;
	ret->level = 1.0 - 2.0 * tail;
	ret->bounded = k >= 1 && k <= total - k + 1;
	/* d is 0-based: the k-th smallest is d[k - 1], the k-th largest d[total - k]. */
	ret->lo = ret->bounded ? d[k - 1] : -INFINITY;
	ret->hi = ret->bounded ? d[total - k] : INFINITY;
	return 0;
}
