/* The trend's analysis (report/trend-internal.h): each series' points in
 * time order, the regressions that first appeared, and the change points
 * of every variant's candidate medians and of the baseline's, found by
 * compare/changepoint.c. Rendering is elsewhere (trend_html.c,
 * trend_json.c). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare/changepoint.h"
#include "report/trend-internal.h"
#include "report/trend.h"
#include "util/macro.h"

bool trend_first_regressed(const struct series_group *g, size_t i)
{
	if (strcmp(g->pts[i].verdict, "regressed") != 0)
		return false;
	for (size_t j = i; j-- > 0;)
		if (strcmp(g->pts[j].variant, g->pts[i].variant) == 0)
			return strcmp(g->pts[j].verdict, "regressed") != 0;
	return true;
}

const struct trend_bisection *trend_bisection_of(const struct trend *t,
						 const struct series_group *g,
						 const struct trend_cp *c, char ret_key[65])
{
	if (trend_change_point_key(g->job_name, c->variant, g->workload, g->metric,
				   c->after->job_id, ret_key) < 0)
		return NULL;
	for (size_t i = 0; i < t->n_bis; i++)
		if (strcmp(t->bis[i].key, ret_key) == 0)
			return &t->bis[i];
	return NULL;
}

/* Change points of one series of points (in time order): the candidate
 * medians of `variant`, or with base set the baseline medians of the
 * points of `variant` (one per job run). Appends to g->cps. */
static int detect_series(struct series_group *g, const char *variant, bool base)
{
	_cleanup_free_ double *v = malloc((g->n ? g->n : 1) * sizeof(double));
	_cleanup_free_ const struct point **at = malloc((g->n ? g->n : 1) * sizeof(*at));
	struct changepoint cps[CHANGEPOINT_MAX_FOUND];
	struct changepoint_opts o;
	size_t n = 0, found = 0;

	if (!v || !at)
		return -ENOMEM;
	for (size_t i = 0; i < g->n; i++) {
		double x = base ? g->pts[i].base : g->pts[i].cand;
		if (strcmp(g->pts[i].variant, variant) != 0 || !isfinite(x))
			continue;
		at[n] = &g->pts[i];
		v[n++] = x;
	}
	changepoint_opts_default(&o);
	int r = changepoint_detect(v, n, &o, cps, CHANGEPOINT_MAX_FOUND, &found);
	if (r == -ENOMEM)
		return r;
	if (r < 0) /* values are finite and options the defaults: cannot happen */
		return 0;
	for (size_t i = 0; i < found && g->n_cps < TREND_MAX_CPS; i++)
		g->cps[g->n_cps++] = (struct trend_cp){
		    .before = at[cps[i].at - 1],
		    .after = at[cps[i].at],
		    .variant = base ? NULL : at[cps[i].at]->variant,
		    .cp = cps[i],
		};
	return 0;
}

/* Each variant's candidate series and the baseline's series (taken from
 * the first variant's rows: one baseline median per job run). A
 * candidate change whose nights overlap a baseline change of the same sign
 * is marked: the host or the baseline kernel moved too, not only the code
 * under test. */
static int detect_change_points(struct series_group *g)
{
	const char *seen[TREND_MAX_VARIANTS];
	size_t n_var = 0;
	int r;

	for (size_t i = 0; i < g->n; i++) {
		bool dup = false;
		for (size_t k = 0; k < n_var; k++)
			dup = dup || strcmp(seen[k], g->pts[i].variant) == 0;
		if (!dup && n_var < TREND_MAX_VARIANTS)
			seen[n_var++] = g->pts[i].variant;
	}
	for (size_t k = 0; k < n_var; k++)
		if ((r = detect_series(g, seen[k], false)) < 0)
			return r;
	size_t cand = g->n_cps;
	if (n_var && (r = detect_series(g, seen[0], true)) < 0)
		return r;
	for (size_t i = 0; i < cand; i++)
		for (size_t j = cand; j < g->n_cps; j++) {
			const struct trend_cp *c = &g->cps[i], *b = &g->cps[j];
			if (b->after->t >= c->before->t && b->before->t <= c->after->t &&
			    (b->cp.change > 0) == (c->cp.change > 0))
				g->cps[i].baseline_too = true;
		}
	return 0;
}

static int cmp_point(const void *a, const void *b)
{
	const struct point *x = a, *y = b;
	int r;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	r = strcmp(x->variant, y->variant);
	return r ? r : strcmp(x->job_id, y->job_id);
}

int trend_analyse(struct trend *t, struct sl_error *err)
{
	if (t->analysed)
		return 0;
	for (size_t i = 0; i < t->n; i++) {
		struct series_group *g = &t->g[i];
		/* The store orders integer times before text ones: sort by
		 * the parsed time. */
		qsort(g->pts, g->n, sizeof(struct point), cmp_point);
		for (size_t j = 0; j < g->n; j++) {
			g->regressions += trend_first_regressed(g, j);
			g->undecided += strcmp(g->pts[j].verdict, "undecided") == 0 ||
					strcmp(g->pts[j].verdict, "inconclusive") == 0;
		}
		if (detect_change_points(g) < 0)
			return error_set(err, ERR_INTERNAL, ENOMEM,
					 "Out of memory while looking for the change points of "
					 "'%s' %s %s.",
					 g->job_name, g->workload, g->metric);
	}
	t->analysed = true;
	return 0;
}
