/* E-Divisive means with a permutation test; see changepoint.h. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>

#include "compare/changepoint.h"
#include "compare/stats.h"
#include "util/macro.h"

void changepoint_opts_default(struct changepoint_opts *ret)
{
	*ret = (struct changepoint_opts){
	    .alpha = 0.01,
	    .permutations = 499,
	    .min_segment = 3,
	    .min_relative_change = 0.05,
	    .seed = 0x5ced1ab5ULL,
	};
}

/* The best split of v[0..n) by the energy statistic with exponent 1
 * (Matteson and James, section 2.2): over a change at t and a right end
 * kappa, with m = t points left and k = kappa - t right,
 *   Q(t, kappa) = m k / (m + k) * (2/(m k) sum|L-R| - sum|L-L'|/C(m,2)
 *                                  - sum|R-R'|/C(k,2)),
 * for min_seg <= m, k. The right end lets a segment that holds a second
 * change (a step up and back down) still show the first. w is an
 * (n + 1) x (n + 1) table of within-sums w[a][b] = sum over a <= i < j < b
 * of |v_i - v_j|, built in O(n^2). Returns false when no split is
 * allowed. */
static bool best_split(const double *v, size_t n, size_t min_seg, double *w, size_t *ret_t,
		       double *ret_q)
{
	size_t stride = n + 1;
#define W(a, b) w[(a)*stride + (b)]

	if (min_seg < 2 || n < 2 * min_seg)
		return false;
	for (size_t a = 0; a <= n; a++) {
		W(a, a) = 0;
		if (a < n)
			W(a, a + 1) = 0;
	}
	for (size_t b = 1; b < n; b++) {
		double s = 0;
		for (size_t a = b; a-- > 0;) {
			s += fabs(v[a] - v[b]);
			W(a, b + 1) = W(a, b) + s;
		}
	}
	double best = -INFINITY;
	size_t best_t = 0;
	for (size_t t = min_seg; t + min_seg <= n; t++) {
		double m = (double)t, left = W(0, t) / (m * (m - 1) / 2);
		for (size_t kappa = t + min_seg; kappa <= n; kappa++) {
			double k = (double)(kappa - t);
			double cross = W(0, kappa) - W(0, t) - W(t, kappa);
			double e = 2 * cross / (m * k) - left - W(t, kappa) / (k * (k - 1) / 2);
			double q = m * k / (m + k) * e;
			if (q > best) {
				best = q;
				best_t = t;
			}
		}
	}
#undef W
	*ret_t = best_t;
	*ret_q = best;
	return true;
}

static double median_of(const double *v, size_t n)
{
	struct stats_summary s;
	return stats_summarize(v, n, &s) == 0 ? s.median : NAN;
}

/* Mid-ranks of v[0..n) into ret (ties share their average rank). The
 * statistic is computed on ranks, so one outlier night weighs no more than
 * any other night above the level; medians and intervals use the values. */
static int ranks(const double *v, size_t n, double *ret)
{
	_cleanup_free_ size_t *idx = malloc(n * sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	gsl_sort_index(idx, v, 1, n);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j + 1 < n && v[idx[j + 1]] == v[idx[i]])
			j++;
		for (size_t k = i; k <= j; k++)
			ret[idx[k]] = (double)(i + j) / 2 + 1;
		i = j + 1;
	}
	return 0;
}

static double relative(double before, double change)
{
	if (change == 0)
		return 0;
	if (before == 0)
		return change > 0 ? INFINITY : -INFINITY;
	return change / fabs(before);
}

/* The permutation p-value of the best split of v[0..n) whose statistic is
 * q: the share of shuffles (and the data itself) whose best split is at
 * least as strong. It stops as soon as the answer is known to exceed
 * alpha, so a flat series costs few shuffles. */
static double permutation_p(gsl_rng *rng, const double *v, size_t n, double q,
			    const struct changepoint_opts *o, double *scratch, double *w)
{
	size_t at_least = 0, t;
	double qp;
	/* p = (at_least + 1) / (R + 1) <= alpha needs at_least <= limit. */
	size_t limit = (size_t)floor(o->alpha * (o->permutations + 1)) - 1;

	memcpy(scratch, v, n * sizeof(*v));
	for (unsigned r = 0; r < o->permutations; r++) {
		gsl_ran_shuffle(rng, scratch, n, sizeof(*scratch));
		if (best_split(scratch, n, o->min_segment, w, &t, &qp) && qp >= q - 1e-12 * fabs(q))
			if (++at_least > limit)
				return (double)(at_least + 1) / (r + 2); /* > alpha, early */
	}
	return (double)(at_least + 1) / (o->permutations + 1);
}

struct segment {
	size_t from, to;
	bool closed;
};

static int cmp_at(const void *a, const void *b)
{
	const struct changepoint *x = a, *y = b;
	return (x->at > y->at) - (x->at < y->at);
}

int changepoint_detect(const double *x, size_t n, const struct changepoint_opts *opts,
		       struct changepoint *ret, size_t max, size_t *ret_n)
{
	struct changepoint_opts o;
	struct segment seg[2 * CHANGEPOINT_MAX_FOUND + 2];
	size_t nseg = 0, found = 0;

	if (opts)
		o = *opts;
	else
		changepoint_opts_default(&o);
	if (!ret_n)
		return -EINVAL;
	*ret_n = 0;
	if ((!x && n) || (!ret && max) || o.min_segment < 2 || o.permutations < 19 ||
	    !(o.alpha > 0 && o.alpha < 1) || floor(o.alpha * (o.permutations + 1)) < 1 ||
	    !(o.min_relative_change >= 0))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return -EINVAL;
	if (max > CHANGEPOINT_MAX_FOUND)
		max = CHANGEPOINT_MAX_FOUND;

	size_t off = n > CHANGEPOINT_MAX_POINTS ? n - CHANGEPOINT_MAX_POINTS : 0;
	const double *v = x + off;
	size_t len = n - off;
	if (len < 2 * o.min_segment || max == 0)
		return 0;

	_cleanup_free_ double *scratch = malloc(len * sizeof(double));
	_cleanup_free_ double *rk = malloc(len * sizeof(double));
	_cleanup_free_ double *w = malloc((len + 1) * (len + 1) * sizeof(double));
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	if (!scratch || !rk || !w || !rng || ranks(v, len, rk) < 0) {
		gsl_rng_free(rng);
		return -ENOMEM;
	}
	gsl_rng_set(rng, (unsigned long)((o.seed ^ (o.seed >> 32)) & 0xffffffffUL));

	seg[nseg++] = (struct segment){0, len, false};
	while (found < max) {
		/* The open segment whose best split is strongest goes first. */
		size_t pick = SIZE_MAX, pick_t = 0;
		double pick_q = -INFINITY;
		for (size_t i = 0; i < nseg; i++) {
			size_t t;
			double q;
			if (seg[i].closed)
				continue;
			if (!best_split(rk + seg[i].from, seg[i].to - seg[i].from, o.min_segment, w,
					&t, &q)) {
				seg[i].closed = true;
				continue;
			}
			if (q > pick_q) {
				pick_q = q;
				pick = i;
				pick_t = t;
			}
		}
		if (pick == SIZE_MAX)
			break;

		struct segment s = seg[pick];
		size_t m = s.to - s.from, at = s.from + pick_t;
		double p = permutation_p(rng, rk + s.from, m, pick_q, &o, scratch, w);
		double before = median_of(v + s.from, at - s.from);
		double after = median_of(v + at, s.to - at);
		double rel = relative(before, after - before);
		if (p > o.alpha || !(fabs(rel) >= o.min_relative_change)) {
			seg[pick].closed = true;
			continue;
		}
		ret[found++] = (struct changepoint){.at = at, .p = p};
		seg[pick] = (struct segment){s.from, at, false};
		seg[nseg++] = (struct segment){at, s.to, false};
	}
	gsl_rng_free(rng);

	/* Report each change against its neighbours: the level between the
	 * previous change point and this one, and between this one and the
	 * next. */
	qsort(ret, found, sizeof(*ret), cmp_at);
	size_t ats[CHANGEPOINT_MAX_FOUND];
	for (size_t i = 0; i < found; i++)
		ats[i] = ret[i].at;
	for (size_t i = 0; i < found; i++) {
		struct changepoint *c = &ret[i];
		size_t from = i ? ats[i - 1] : 0, to = i + 1 < found ? ats[i + 1] : len;
		double ci[2] = {NAN, NAN};
		c->before = median_of(v + from, c->at - from);
		c->after = median_of(v + c->at, to - c->at);
		c->change = c->after - c->before;
		c->relative_change = relative(c->before, c->change);
		stats_bootstrap_median_diff_ci(v + from, c->at - from, v + c->at, to - c->at,
					       o.seed + c->at, ci);
		c->ci_lo = ci[0];
		c->ci_hi = ci[1];
		c->from = from + off;
		c->to = to + off;
		c->at += off;
	}
	*ret_n = found;
	return 0;
}
