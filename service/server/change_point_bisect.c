/* A change point's bisection: the job's spec, its start and its answer
 * (see change_point_bisect.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/change_point_bisect.h"
#include "server/admission.h"
#include "server/submit_checks.h"
#include "job/commit_range.h"
#include "job/job.h"
#include "report/trend.h"
#include "server/store_trend.h"
#include "util/json_get.h"
#include "util/redact.h"

#define TREND_WINDOW_S (3650L * 86400) /* the whole store, as the trend's maximum */

/* The kernel the change point measured on the night job: its variant's
 * (the baseline's for a baseline change point). */
static json_object *night_kernel(json_object *cp, json_object *night)
{
	const char *variant = json_member_string(cp, "variant");
	if (!variant)
		variant = json_member_string(night, "baseline");
	const char *kernel =
	    variant
		? json_member_string(json_member(json_member(night, "variants"), variant), "kernel")
		: NULL;
	return kernel ? json_member(json_member(night, "kernels"), kernel) : NULL;
}

/* The night's workload entry named like the change point's. */
static json_object *night_workload(json_object *night, const char *name)
{
	json_object *list = json_member(night, "workloads");
	for (size_t i = 0; name && list && i < json_object_array_length(list); i++) {
		json_object *w = json_object_array_get_idx(list, i);
		const char *n = json_member_string(w, "name");
		if (n && strcmp(n, name) == 0)
			return w;
	}
	return NULL;
}

/* The bisection's repeats: the night's when they start at
 * CHANGE_POINT_BISECT_MIN_REPEAT or more, else adaptive from that minimum
 * to CHANGE_POINT_BISECT_MAX_REPEAT (or the night's maximum, if higher). A
 * night may be a cheap sentinel of one boot a side; a step of the
 * bisection must decide, and 3 against 3 cannot reach p < 0.05
 * (docs/statistics.md). */
static json_object *bisect_repeat(json_object *night_repeat)
{
	bool adaptive = json_object_is_type(night_repeat, json_type_object);
	int lo = adaptive ? json_object_get_int(json_member(night_repeat, "min"))
			  : json_object_get_int(night_repeat);
	int hi = adaptive ? json_object_get_int(json_member(night_repeat, "max")) : lo;
	if (lo >= CHANGE_POINT_BISECT_MIN_REPEAT) {
		json_object *c = NULL;
		json_object_deep_copy(night_repeat, &c, NULL);
		return c;
	}
	json_object *r = json_object_new_object();
	json_object_object_add(r, "min", json_object_new_int(CHANGE_POINT_BISECT_MIN_REPEAT));
	json_object_object_add(r, "max",
			       json_object_new_int(hi > CHANGE_POINT_BISECT_MAX_REPEAT
						       ? hi
						       : CHANGE_POINT_BISECT_MAX_REPEAT));
	return r;
}

int change_point_bisect_spec(json_object *cp, json_object *night, size_t max_commits,
			     json_object **ret_spec, json_object **ret_commits,
			     struct sl_error *err)
{
	json_object *range = json_member(cp, "commit_range");
	const char *from = json_member_string(range, "from"), *to = json_member_string(range, "to");
	if (!from || !to || !trend_commit_valid(from) || !trend_commit_valid(to))
		return error_set_path(err, ERR_CONFLICT, "commit_range",
				      "The change point has no commit range: the commits of its "
				      "two nights are not both known.");
	json_object *kernel = night_kernel(cp, night);
	const char *source = json_member_string(kernel, "source");
	const char *at = source ? strrchr(source, '@') : NULL;
	if (!source || strncmp(source, "git:", 4) != 0 || !at || at == source + 4)
		return error_set_path(err, ERR_CONFLICT, "source",
				      "The change point's kernel is not a git source "
				      "(git:TREE@REF): there is no tree to bisect.");
	const char *workload = json_member_string(cp, "workload"),
		   *metric = json_member_string(cp, "metric");
	json_object *wl = night_workload(night, workload);
	if (!wl || !metric)
		return error_set_path(err, ERR_CONFLICT, "workload",
				      "The night's job has no workload '%.64s'.",
				      workload ? workload : "");

	_cleanup_free_ char *tree = strndup(source + 4, (size_t)(at - source - 4));
	if (!tree)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	struct commit_range cr = {0};
	_cleanup_json_ json_object *patches = NULL, *commits = NULL;
	_cleanup_free_ char *from_source = NULL;
	int r = commit_range_set(&cr, tree, from, to, "commit_range", err);
	if (r >= 0)
		r = commit_range_bisect_inputs(&cr, max_commits, "commit_range", &patches, &commits,
					       &from_source, err);
	commit_range_done(&cr);
	if (r < 0) {
		/* The range's checks failed: the request's fault as any
		 * commit range's (400); the message names the field and the
		 * reason, not the tree's path. */
		char reason[sizeof(err->message)];
		redact_host_paths(err->message, reason, sizeof(reason));
		return error_set_path(err, ERR_INVALID, "commit_range",
				      "The commit range %.12s..%.12s cannot be bisected: %s", from,
				      to, reason);
	}

	json_object *spec = json_object_new_object();
	char name[JOB_NAME_MAX + 1];
	/* the jobs' name ("series" may be "NAME@OWNER", not a job name) */
	snprintf(name, sizeof(name), CHANGE_POINT_BISECT_PREFIX "%s",
		 json_member_string(cp, "name") ? json_member_string(cp, "name")
						: json_member_string(cp, "series"));
	json_object_object_add(spec, "name", json_object_new_string(name));
	char desc[256];
	snprintf(desc, sizeof(desc),
		 "Bisection of the change point %.64s (%s %s) over %.12s..%.12s",
		 json_member_string(cp, "key") ? json_member_string(cp, "key") : "", workload,
		 metric, from, to);
	json_object_object_add(spec, "description", json_object_new_string(desc));
	/* The night's candidate kernel (its config, its own patches) at FROM. */
	json_object *base = NULL;
	json_object_deep_copy(kernel, &base, NULL);
	json_object_object_add(base, "source", json_object_new_string(from_source));
	json_object_object_add(spec, "base", base);
	json_object_object_add(spec, "patches", TAKE_PTR(patches));
	json_object *wls = json_object_new_array();
	json_object *w = NULL;
	json_object_deep_copy(wl, &w, NULL);
	json_object_array_add(wls, w);
	json_object_object_add(spec, "workloads", wls);
	static const char *const copied[] = {"guest", "accelerator"};
	for (size_t i = 0; i < ELEMENTSOF(copied); i++)
		if (json_member(night, copied[i])) {
			json_object *c = NULL;
			json_object_deep_copy(json_member(night, copied[i]), &c, NULL);
			json_object_object_add(spec, copied[i], c);
		}
	json_object_object_add(spec, "repeat", bisect_repeat(json_member(night, "repeat")));
	json_object *gate = json_object_new_object();
	json_object_object_add(gate, "workload", json_object_new_string(workload));
	json_object_object_add(gate, "metric", json_object_new_string(metric));
	json_object_object_add(gate, "threshold", json_object_new_double(0));
	json_object_object_add(gate, "relative", json_object_new_boolean(false));
	json_object *gates = json_object_new_array();
	json_object_array_add(gates, gate);
	json_object_object_add(spec, "gates", gates);
	json_object_object_add(spec, "bisect", json_object_new_boolean(true));
	json_object_object_add(spec, "commits", json_object_get(commits));
	*ret_spec = spec;
	*ret_commits = TAKE_PTR(commits);
	return 0;
}

static json_object *answer_json(const char *id, json_object *cp, json_object *commits)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "job_id", json_object_new_string(id));
	json_object_object_add(o, "change_point", json_object_get(json_member(cp, "key")));
	json_object_object_add(o, "commits", json_object_get(commits));
	json_object *links = json_object_new_object();
	static const char *const names[] = {"job", "result", "events", "report"};
	for (size_t i = 0; i < ELEMENTSOF(names); i++) {
		char buf[96];
		snprintf(buf, sizeof(buf), "/v1/jobs/%s%s%s", id, i ? "/" : "", i ? names[i] : "");
		json_object_object_add(links, names[i], json_object_new_string(buf));
	}
	json_object_object_add(links, "trend", json_object_new_string("/v1/trend"));
	json_object_object_add(o, "links", links);
	return o;
}

int change_point_bisect_start(const struct change_point_bisect_request *rq, json_object *cp,
			      json_object **ret_answer, int *ret_retry_after_s,
			      struct sl_error *err)
{
	const char *key = json_member_string(cp, "key");
	const char *night_id = json_member_string(json_member(cp, "first_night_after"), "job_id");
	if (!key || !night_id || !store_id_valid(night_id))
		return error_set_path(err, ERR_NOT_FOUND, "change_point",
				      "The change point's first night after is not a job of "
				      "this service.");
	/* A bisection that exists is named before any git work. */
	int r = store_bisection_none(rq->store, key, err);
	if (r < 0)
		return r;
	_cleanup_json_ json_object *night = NULL, *spec = NULL, *commits = NULL, *expanded = NULL;
	if ((r = store_job_expanded(rq->store, night_id, &night, err)) < 0) {
		if (err->kind == ERR_NOT_FOUND)
			return error_set_path(err, ERR_NOT_FOUND, "change_point",
					      "The job of the change point's first night after "
					      "is gone (retention).");
		return r;
	}
	const struct service_config *c = rq->config;
	if ((r = change_point_bisect_spec(cp, night, (size_t)c->limits.max_patches, &spec, &commits,
					  err)) < 0 ||
	    (r = job_expand_json(spec, JOB_ORIGIN_SERVICE, NULL, &c->limits, &expanded, err)) < 0 ||
	    (r = submit_checks(expanded, rq->data_dir, err)) < 0)
		return r;
	const char *name = json_member_string(spec, "name");
	long long bytes = (long long)strlen(json_object_to_json_string_ext(spec, 0));
	const struct store_new_job nj = {
	    .name = name,
	    .owner = rq->owner ? rq->owner : "",
	    .spec = spec,
	    .expanded = expanded,
	    .budget_s = job_budget_s(expanded),
	    .bytes = bytes,
	    .change_point = key,
	    .bisect_commits = commits,
	};
	char id[STORE_ID_LEN + 1] = "";
	if (rq->admission) {
		const struct admission_request a = {
		    .owner = nj.owner,
		    .admin = rq->admin,
		    .budget_s = nj.budget_s,
		    .bytes = bytes,
		};
		r = admission_check(c, rq->store, &a, ret_retry_after_s, err);
	}
	if (r >= 0 && (r = store_id_new(id, err)) >= 0 &&
	    (r = store_job_submit(rq->store, id, &nj, err)) >= 0)
		r = queue_push(rq->queue, id, 0, false, err);
	if (rq->admission)
		admission_done();
	if (r < 0)
		return r;
	*ret_answer = answer_json(id, cp, commits);
	return 0;
}

int change_point_find(struct store *store, const char *key, json_object **ret_cp,
		      struct sl_error *err)
{
	_cleanup_json_ json_object *all = NULL;
	int r = store_trend_change_points(store_state_dir(store), NULL, TREND_WINDOW_S, time(NULL),
					  &all, err);
	if (r < 0)
		return r;
	for (size_t i = 0; i < json_object_array_length(all); i++) {
		json_object *cp = json_object_array_get_idx(all, i);
		const char *k = json_member_string(cp, "key");
		if (k && strcmp(k, key) == 0) {
			*ret_cp = json_object_get(cp);
			return 0;
		}
	}
	return error_set_path(err, ERR_NOT_FOUND, "key", "No change point has the key '%.64s'.",
			      key);
}
