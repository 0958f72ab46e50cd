/* The nightly routes (docs/service.md "Nightly"):
 *   GET /v1/schedules       the config's schedules with their last run (job
 *                           id, time, slot) and next run (nightly_clock.h)
 *   GET /v1/change-points   the trend's change points as JSON, with their
 *                           nights, commit ranges and bisections
 *                           (server/store_trend.h)
 *   POST /v1/change-points/{key}/bisect
 *                           starts a change point's bisection
 *                           (change_point_bisect.h) */
#include <string.h>

#include "server/http.h"
#include "server/http-internal.h"
#include "server/change_point_bisect.h"
#include "server/nightly_clock.h"
#include "job/job.h"
#include "report/trend.h"
#include "server/store_trend.h"

#define CHANGE_POINTS_MAX 500 /* per answer; "truncated" says when more were found */

enum MHD_Result http_schedules_list(struct http_server *srv, struct MHD_Connection *conn,
				    struct request *req)
{
	struct sl_error err = {0};
	_cleanup_json_ json_object *o =
	    nightly_clock_list_json(srv->opts->config, srv->opts->store, &err);
	if (!o)
		return http_respond_error(conn, req, &err);
	return http_respond_json(conn, req, MHD_HTTP_OK, o);
}

enum MHD_Result http_change_points_list(struct http_server *srv, struct MHD_Connection *conn,
					struct request *req)
{
	struct sl_error err = {0};
	const char *series = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "series");
	long seconds = 0;
	if (http_query_since(conn, &seconds, &err) < 0)
		return http_respond_error(conn, req, &err);
	/* a series is a job name, or "NAME@OWNER" (trend_series_id) */
	if (series && (!series[0] || strlen(series) > JOB_NAME_MAX + 1 + 80))
		return http_respond_errorf(conn, req, ERR_INVALID, "series",
					   "Query parameter 'series' must be a job name of 1-%d "
					   "characters, or NAME@OWNER.",
					   JOB_NAME_MAX);
	_cleanup_json_ json_object *all = NULL;
	/* The store is the service's own: a failure is a 500, its message
	 * (which may name this host's paths) goes to the log only. */
	if (store_trend_change_points(store_state_dir(srv->opts->store), series, seconds,
				      time(NULL), &all, &err) < 0) {
		http_log(srv, "change points: %s", err.message);
		return http_respond_errorf(
		    conn, req, ERR_INTERNAL, NULL,
		    "The change points cannot be read from this service's store.");
	}
	size_t n = json_object_array_length(all);
	json_object *list = json_object_new_array();
	for (size_t i = 0; i < n && i < CHANGE_POINTS_MAX; i++)
		json_object_array_add(list, json_object_get(json_object_array_get_idx(all, i)));
	_cleanup_json_ json_object *o = json_object_new_object();
	json_object_object_add(o, "change_points", list);
	json_object_object_add(o, "truncated", json_object_new_boolean(n > CHANGE_POINTS_MAX));
	return http_respond_json(conn, req, MHD_HTTP_OK, o);
}

enum MHD_Result http_change_point_bisect(struct http_server *srv, struct MHD_Connection *conn,
					 struct request *req)
{
	struct sl_error err = {0};
	_cleanup_json_ json_object *cp = NULL, *answer = NULL;
	if (change_point_find(srv->opts->store, req->key, &cp, &err) < 0) {
		if (err.kind == ERR_NOT_FOUND)
			return http_respond_error(conn, req, &err);
		http_log(srv, "change points: %s", err.message);
		return http_respond_errorf(
		    conn, req, ERR_INTERNAL, NULL,
		    "The change points cannot be read from this service's store.");
	}
	const struct change_point_bisect_request rq = {
	    .config = srv->opts->config,
	    .store = srv->opts->store,
	    .queue = srv->opts->queue,
	    .data_dir = srv->opts->data_dir,
	    .owner = req->token ? req->token->name : "",
	    .admission = true,
	    .admin = req->admin,
	};
	int retry = 0;
	if (change_point_bisect_start(&rq, cp, &answer, &retry, &err) < 0) {
		if (err.kind == ERR_QUOTA)
			return http_respond_quota(conn, req, &err, retry);
		if (err.kind == ERR_INTERNAL) {
			http_log(srv, "change point %.12s: %s", req->key, err.message);
			return http_respond_errorf(conn, req, ERR_INTERNAL, NULL,
						   "The bisection could not be started.");
		}
		return http_respond_error(conn, req, &err);
	}
	http_log(srv, "change point %.12s: bisection job %s started by '%s'", req->key,
		 json_object_get_string(json_object_object_get(answer, "job_id")), rq.owner);
	return http_respond_json(conn, req, MHD_HTTP_ACCEPTED, answer);
}
