/* The route table and dispatch: which handler serves a method and path,
 * and the 404, 405 and bad-id answers when none does. The table is the
 * one a unit test compares with results-schema/openapi.yaml. Routing comes
 * before authentication: an unknown path is a 404, a method the path does
 * not have a 405 with Allow, a malformed id a 400, with or without a token
 * (none of them tells anything about the store). */
#include <errno.h>
#include <string.h>

#include "server/http.h"
#include "server/http-internal.h"

static const struct route routes[] = {
    {"GET", "/v1/health", 0, false, http_metrics_health},
    {"GET", "/metrics", SERVICE_ROLE_READ, false, http_metrics_prometheus},
    {"POST", "/v1/jobs", SERVICE_ROLE_SUBMIT, true, http_jobs_submit},
    {"GET", "/v1/jobs", SERVICE_ROLE_READ, false, http_jobs_list},
    {"GET", "/v1/jobs/{id}", SERVICE_ROLE_READ, false, http_jobs_get},
    {"DELETE", "/v1/jobs/{id}", SERVICE_ROLE_SUBMIT, false, http_jobs_cancel},
    {"GET", "/v1/jobs/{id}/result", SERVICE_ROLE_READ, false, http_jobs_result},
    {"GET", "/v1/jobs/{id}/log", SERVICE_ROLE_READ, false, http_streams_log},
    {"GET", "/v1/jobs/{id}/events", SERVICE_ROLE_READ, false, http_streams_events},
    {"GET", "/v1/jobs/{id}/report", SERVICE_ROLE_READ, false, http_jobs_report},
    {"GET", "/v1/trend", SERVICE_ROLE_READ, false, http_metrics_trend},
    {"GET", "/v1/calibration", SERVICE_ROLE_READ, false, http_calibration_list},
    {"GET", "/v1/schedules", SERVICE_ROLE_READ, false, http_schedules_list},
    {"GET", "/v1/change-points", SERVICE_ROLE_READ, false, http_change_points_list},
    {"POST", "/v1/change-points/{key}/bisect", SERVICE_ROLE_SUBMIT, false,
     http_change_point_bisect},
};

size_t http_route_count(void)
{
	return ELEMENTSOF(routes);
}

void http_route_get(size_t i, const char **ret_method, const char **ret_path)
{
	*ret_method = routes[i].method;
	*ret_path = routes[i].path;
}

/* Matches url against a template; the {id} segment goes to id_out (not
 * validated here; up to 255 bytes kept). */
static bool path_match(const char *tmpl, const char *url, char *id_out, size_t id_size)
{
	while (*tmpl && *url) {
		size_t t = strncmp(tmpl, "{id}", 4) == 0    ? 4
			   : strncmp(tmpl, "{key}", 5) == 0 ? 5
							    : 0;
		if (t) {
			size_t n = strcspn(url, "/");
			snprintf(id_out, id_size, "%.*s", (int)n, url);
			if (n == 0)
				return false;
			url += n;
			tmpl += t;
			continue;
		}
		if (*tmpl != *url)
			return false;
		tmpl++;
		url++;
	}
	return *tmpl == '\0' && *url == '\0';
}

/* Finds the route. When none serves method on url but some route has the
 * path, allow gets the methods it has ("GET, HEAD, DELETE"), for 405. */
static const struct route *route_find(const char *method, const char *url, char *id, size_t id_size,
				      char *allow, size_t allow_size)
{
	allow[0] = '\0';
	for (size_t i = 0; i < ELEMENTSOF(routes); i++) {
		if (!path_match(routes[i].path, url, id, id_size))
			continue;
		if (strcmp(routes[i].method, method) == 0 ||
		    (strcmp(method, "HEAD") == 0 && strcmp(routes[i].method, "GET") == 0))
			return &routes[i];
		size_t n = strlen(allow);
		snprintf(allow + n, allow_size - n, "%s%s%s", n ? ", " : "", routes[i].method,
			 strcmp(routes[i].method, "GET") == 0 ? ", HEAD" : "");
	}
	return NULL;
}

enum MHD_Result http_route_request(struct MHD_Connection *conn, const char *method, const char *url,
				   struct request *req, bool *ret_answered)
{
	*ret_answered = true;
	char id[256] = "";
	req->route = route_find(method, url, id, sizeof(id), req->allow, sizeof(req->allow));
	if (!req->route) {
		if (req->allow[0]) {
			/* 405 has no error kind of its own: the body is the usual
			 * error with code "method_not_allowed"; http_respond_buf
			 * adds the Allow header. */
			struct sl_error err = {0};
			error_set(&err, ERR_INVALID, EINVAL,
				  "Method '%.16s' is not allowed on '%.200s'; it allows %s.",
				  method, url, req->allow);
			snprintf(err.code, sizeof(err.code), "method_not_allowed");
			_cleanup_json_ json_object *o = error_to_json(&err);
			return http_respond_json(conn, req, MHD_HTTP_METHOD_NOT_ALLOWED, o);
		}
		return http_respond_errorf(conn, req, ERR_NOT_FOUND, NULL,
					   "There is no resource at '%.200s'.", url);
	}
	if (strstr(req->route->path, "{id}")) {
		/* The only id ever used for a path or a query. */
		if (!store_id_valid(id))
			return http_respond_errorf(conn, req, ERR_INVALID, "id",
						   "Job id '%.64s' is not 32 lowercase hex digits.",
						   id);
		memcpy(req->id, id, STORE_ID_LEN + 1);
	}
	if (strstr(req->route->path, "{key}")) {
		/* a change point's key: 64 lowercase hex digits, nothing else */
		if (strlen(id) != 64 || strspn(id, "0123456789abcdef") != 64)
			return http_respond_errorf(
			    conn, req, ERR_INVALID, "key",
			    "Change point key '%.80s' is not 64 lowercase hex digits.", id);
		memcpy(req->key, id, sizeof(req->key));
	}
	*ret_answered = false;
	return MHD_YES;
}
