/* The trend's change points as the API serves them (report/trend.h
 * trend_change_points; GET /v1/change-points, the webhook and the
 * bisection of a change point read them). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/trend-internal.h"
#include "report/trend.h"
#include "util/macro.h"

static json_object *night_json(const struct point *p)
{
	char buf[32];
	struct tm tm;
	json_object *o = json_object_new_object();
	gmtime_r(&p->t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_object_object_add(o, "time", json_object_new_string(buf));
	json_object_object_add(o, "job_id", json_object_new_string(p->job_id));
	json_object_object_add(
	    o, "commit", trend_commit_valid(p->commit) ? json_object_new_string(p->commit) : NULL);
	return o;
}

static json_object *num_json(double v)
{
	return isfinite(v) ? json_object_new_double(v) : NULL;
}

static json_object *bisection_json(const struct trend_bisection *b)
{
	if (!b)
		return NULL;
	json_object *o = json_object_new_object();
	bool found = strcmp(b->state, "found") == 0 && trend_commit_valid(b->first_bad_commit);
	json_object_object_add(o, "job_id", json_object_new_string(b->job_id));
	json_object_object_add(o, "state", json_object_new_string(b->state));
	json_object_object_add(o, "first_bad_commit",
			       found ? json_object_new_string(b->first_bad_commit) : NULL);
	json_object_object_add(o, "first_bad_subject",
			       found ? json_object_new_string(b->first_bad_subject) : NULL);
	json_object_object_add(o, "certain",
			       b->certain < 0 ? NULL : json_object_new_boolean(b->certain));
	json_object_object_add(o, "steps", json_object_new_int(b->steps));
	char link[128];
	snprintf(link, sizeof(link), "/v1/jobs/%s/report", b->job_id);
	json_object_object_add(o, "report", json_object_new_string(link));
	return o;
}

static json_object *cp_json(const struct trend *t, const struct series_group *g,
			    const struct trend_cp *c)
{
	char key[65];
	const struct trend_bisection *b = trend_bisection_of(t, g, c, key);
	json_object *o = json_object_new_object(), *m = json_object_new_object();
	if (!o || !m || !key[0]) { /* out of memory: the caller says so */
		json_object_put(o);
		json_object_put(m);
		return NULL;
	}
	json_object_object_add(o, "key", json_object_new_string(key));
	json_object_object_add(o, "series", json_object_new_string(g->job_name));
	json_object_object_add(o, "name", json_object_new_string(g->name));
	json_object_object_add(o, "owner", g->legacy ? NULL : json_object_new_string(g->owner));
	json_object_object_add(o, "variant",
			       c->variant ? json_object_new_string(c->variant) : NULL);
	json_object_object_add(o, "baseline", json_object_new_boolean(c->variant == NULL));
	json_object_object_add(o, "workload", json_object_new_string(g->workload));
	json_object_object_add(o, "metric", json_object_new_string(g->metric));
	json_object_object_add(o, "direction",
			       json_object_new_string(c->cp.change > 0 ? "up" : "down"));
	json_object_object_add(m, "before", num_json(c->cp.before));
	json_object_object_add(m, "after", num_json(c->cp.after));
	json_object_object_add(m, "change", num_json(c->cp.change));
	json_object_object_add(m, "relative_change", num_json(c->cp.relative_change));
	json_object_object_add(m, "ci_lo", num_json(c->cp.ci_lo));
	json_object_object_add(m, "ci_hi", num_json(c->cp.ci_hi));
	json_object_object_add(m, "p", num_json(c->cp.p));
	json_object_object_add(o, "magnitude", m);
	json_object_object_add(o, "baseline_too", json_object_new_boolean(c->baseline_too));
	json_object_object_add(o, "last_night_before", night_json(c->before));
	json_object_object_add(o, "first_night_after", night_json(c->after));
	json_object *range = NULL;
	if (trend_commit_valid(c->before->commit) && trend_commit_valid(c->after->commit)) {
		range = json_object_new_object();
		json_object_object_add(range, "from", json_object_new_string(c->before->commit));
		json_object_object_add(range, "to", json_object_new_string(c->after->commit));
	}
	json_object_object_add(o, "commit_range", range);
	json_object_object_add(o, "bisection", bisection_json(b));
	return o;
}

int trend_change_points(struct trend *t, json_object **ret, struct sl_error *err)
{
	int r = trend_analyse(t, err);
	if (r < 0)
		return r;
	_cleanup_json_ json_object *list = json_object_new_array();
	if (!list)
		return error_set(err, ERR_INTERNAL, ENOMEM,
				 "Out of memory while listing the trend's change points.");
	for (size_t i = 0; i < t->n; i++) {
		const struct series_group *g = &t->g[i];
		for (size_t j = 0; j < g->n_cps; j++) {
			json_object *cp = cp_json(t, g, &g->cps[j]);
			if (!cp || json_object_array_add(list, cp) < 0) {
				json_object_put(cp);
				return error_set(err, ERR_INTERNAL, ENOMEM,
						 "Out of memory while listing the trend's "
						 "change points.");
			}
		}
	}
	*ret = TAKE_PTR(list);
	return 0;
}
