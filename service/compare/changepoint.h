/* Change points in a series of nights: where the level of a metric moved
 * and stayed moved, judged over the whole series rather than night by
 * night. The method is E-Divisive means (Matteson and James, 2014: the
 * energy statistic with exponent 1, hierarchical bisection) with a
 * permutation test for each split, as MongoDB's signal processing uses it,
 * plus a minimum magnitude so a significant but negligible shift is not an
 * alarm. docs/statistics.md "Change points across nights" has the method,
 * the defaults and their measured false-alarm rate (bench/changepoint.sh). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define CHANGEPOINT_MAX_POINTS 240 /* the newest points of a series that are judged */
#define CHANGEPOINT_MAX_FOUND  8   /* change points reported per series */

struct changepoint_opts {
	double alpha;		    /* permutation p-value a split must reach (0.01) */
	unsigned permutations;	    /* permutations per test (499) */
	size_t min_segment;	    /* points on each side of a split, at least (3) */
	double min_relative_change; /* |change| / |median before| at least (0.05) */
	uint64_t seed;		    /* the permutations' seed: same input, same answer */
};

/* One change point: the series' level differs from index `at` on. */
struct changepoint {
	size_t at;		/* first point after the change (1 <= at < n) */
	size_t from, to;	/* the segments compared: [from, at) and [at, to) */
	double before, after;	/* segment medians */
	double change;		/* after - before */
	double relative_change; /* change / |before|; inf when before is 0 */
	double ci_lo, ci_hi;	/* 95% bootstrap interval of the change */
	double p;		/* permutation p-value of the split when found */
};

/* The defaults above. */
void changepoint_opts_default(struct changepoint_opts *ret);

/* Finds the change points of x[0..n) in time order (x is not modified),
 * at most max of them into ret[], their count in *ret_n. Series shorter
 * than 2 * min_segment have none. Only the newest CHANGEPOINT_MAX_POINTS
 * points are judged; indices still refer to x. Returns 0, or -EINVAL for a
 * non-finite value or bad options, -ENOMEM. */
int changepoint_detect(const double *x, size_t n, const struct changepoint_opts *opts,
		       struct changepoint *ret, size_t max, size_t *ret_n);
