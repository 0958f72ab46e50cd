/* Statistics for comparing a candidate's values with a baseline's, over a
 * handful of repeats. Definitions and references: docs/statistics.md. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STATS_MAX_VALUES   1000	 /* per sample */
#define STATS_BOOTSTRAP	   10000 /* resamples */
#define STATS_HL_EXACT_MAX 80	 /* na + nb up to which the shift interval uses the exact U */

struct stats_summary {
	size_t n;
	double median, q1, q3, iqr, mean, min, max;
};

/* Summary of values[0..n) (n >= 1; not modified). Quantiles by linear
 * interpolation between order statistics (Hyndman-Fan type 7, what GSL's
 * gsl_stats_quantile_from_sorted_data and numpy's default compute).
 * Returns 0, or -EINVAL when n is 0 or above STATS_MAX_VALUES or a value is
 * not finite. */
int stats_summarize(const double *values, size_t n, struct stats_summary *ret);

/* The 95% percentile-bootstrap confidence interval of median(b) - median(a)
 * ("candidate minus baseline" when a is the baseline), from STATS_BOOTSTRAP
 * resamples of each sample with GSL's mt19937 seeded with seed. Returns 0 or
 * -EINVAL (an empty sample). */
int stats_bootstrap_median_diff_ci(const double *a, size_t na, const double *b, size_t nb,
				   uint64_t seed, double ret_ci[2]);

/* Two-sided Mann-Whitney U p-value for samples a and b. Exact (the
 * distribution of U enumerated by recursion) when na + nb <= 20 and there
 * are no ties; otherwise the normal approximation with tie correction and
 * continuity correction. Returns 0 or -EINVAL. */
int stats_mann_whitney(const double *a, size_t na, const double *b, size_t nb, double *ret_p);

/* A stable 64-bit seed from a string (FNV-1a), so every metric's bootstrap
 * is reproducible. */
uint64_t stats_seed_from_string(const char *s);

/* The smallest two-sided p-value that stats_mann_whitney() can return for
 * samples of na and nb values: 2 / C(na + nb, na) (both complete separations
 * out of every split), capped at 1. No data can do better, so a level below
 * it cannot be reached at this n: 3 against 3 gives 0.1. */
double stats_mann_whitney_min_p(size_t na, size_t nb);

/* Cliff's delta of b against a: (#{b > a} - #{b < a}) / (na * nb), in
 * [-1, 1]; 0 when the samples overlap evenly. Returns 0 or -EINVAL. */
int stats_cliffs_delta(const double *a, size_t na, const double *b, size_t nb, double *ret_delta);

/* The shift of b against a (candidate minus baseline) with the
 * distribution-free interval that inverts the Mann-Whitney test
 * (Hodges-Lehmann; docs/statistics.md section 2). */
struct stats_shift {
	double estimate; /* the median of the na * nb differences b_j - a_i */
	double lo, hi;	 /* the k-th smallest and k-th largest of them */
	double level;	 /* 1 - 2 * tail: the interval's coverage, at least */
	size_t rank;	 /* k; 0 when no k reaches the level (then lo, hi infinite) */
	bool bounded;	 /* lo and hi finite */
};

/* k for samples of na and nb values and a one-sided tail: the largest k with
 * P(U <= k - 1) <= tail under the null hypothesis, from U's exact
 * distribution when na + nb <= STATS_HL_EXACT_MAX, else its normal
 * approximation. 0 when even P(U = 0) = 1 / C(na + nb, na) exceeds tail: at
 * that n no interval at the level 1 - 2 * tail is bounded (2 against 2, or
 * 3 against 3 at tail 0.025). */
size_t stats_mw_shift_rank(size_t na, size_t nb, double tail);

/* The Hodges-Lehmann estimate and the interval [d_(k), d_(N+1-k)] of the
 * sorted pairwise differences d = b_j - a_i (N = na * nb, k from
 * stats_mw_shift_rank), whose coverage of a pure shift is at least 1 - 2 *
 * tail at every n for continuous data; with ties the closed interval is
 * kept, which errs on the side of covering. 0 < tail < 0.5. Returns 0,
 * -EINVAL or -ENOMEM. */
int stats_hl_shift(const double *a, size_t na, const double *b, size_t nb, double tail,
		   struct stats_shift *ret);
