/* From change point to culprit (docs/service.md "From
 * change point to culprit"): a change point's commit range is bisected by
 * an ordinary service job, the CI shorthand with base = git:TREE@FROM (TREE
 * the git source of the change point's kernel on its first night after),
 * patches = the commits FROM..TO as inline patches, the change point's
 * workload and metric as the one gate, the night job's repeats (at least
 * CHANGE_POINT_BISECT_MIN_REPEAT a side, adaptive), "bisect":
 * true and the range's "commits". The worker bisects it (run/bisection.h);
 * the store links change point and job (change_point_bisections) and keeps
 * the job's answer when its result is stored (store_result_index). Started by POST
 * /v1/change-points/{key}/bisect (http_nightly.c) or, with the config's
 * "bisect_change_points", by the webhook thread for each change point it
 * records for the first time. */
#pragma once

#include <stdbool.h>

#include "server/config.h"
#include "server/queue.h"
#include "server/store.h"
#include "util/error.h"
#include "util/json.h"

/* The job's name: this prefix and the series (cut to JOB_NAME_MAX), so
 * its comparisons never join the series it bisects. */
#define CHANGE_POINT_BISECT_PREFIX "bisect-"
/* A step of a change point's bisection boots at least this many times a
 * side, adaptively up to the maximum (docs/service.md). */
#define CHANGE_POINT_BISECT_MIN_REPEAT 5
#define CHANGE_POINT_BISECT_MAX_REPEAT 8

/* The bisection job's shorthand spec for change point cp (an element of
 * store_trend_change_points, borrowed) whose first night after ran the
 * expanded job night (borrowed). Resolves the commit range in git (at
 * most max_commits commits). On success *ret_spec and *ret_commits
 * ([{commit, subject}]) are new references. Errors: ERR_CONFLICT at
 * "commit_range" when cp has none, at "source" when the change point's
 * kernel is not a git source, at "workload" when the night's job has no
 * workload of the change point's name; ERR_INVALID at "commit_range" when the range
 * fails commit_range_resolve's checks (the message names no host path). */
int change_point_bisect_spec(json_object *cp, json_object *night, size_t max_commits,
			     json_object **ret_spec, json_object **ret_commits,
			     struct sl_error *err);

struct change_point_bisect_request {
	const struct service_config *config; /* limits, quotas */
	struct store *store;
	struct queue *queue;
	const char *data_dir; /* submit_checks(); NULL: fs_data_dir() */
	const char *owner;    /* the token's name, or who started it */
	bool admission;	      /* quotas apply (a request), or not (the config's own) */
	bool admin;
};

/* Starts the bisection of change point cp (borrowed): the spec above,
 * expanded and checked as any service job (the git allow-list included),
 * admitted (when rq->admission), stored with its link and queued. On
 * success *ret_answer is {job_id, change_point, commits, links}. Errors as
 * change_point_bisect_spec, ERR_NOT_FOUND when the night's job is gone,
 * ERR_CONFLICT at "change_point" when the change point is bisected already
 * (naming the job), the expansion's and admission's (ERR_QUOTA with
 * *ret_retry_after_s). */
int change_point_bisect_start(const struct change_point_bisect_request *rq, json_object *cp,
			      json_object **ret_answer, int *ret_retry_after_s,
			      struct sl_error *err);

/* The change point with key (64 hex digits) among the store's, a new
 * reference; ERR_NOT_FOUND when none has it. */
int change_point_find(struct store *store, const char *key, json_object **ret_cp,
		      struct sl_error *err);
