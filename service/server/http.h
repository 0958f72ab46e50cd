/* The REST API (libmicrohttpd: a few epoll threads, idle event streams
 * suspended; docs/service.md "Connections and TLS"):
 *
 *   POST   /v1/jobs                 submit (application/json, or multipart/form-data
 *                                   with a "job" part and patch file parts)
 *   GET    /v1/jobs                 list (?status=&limit=&offset=)
 *   GET    /v1/jobs/{id}            status and progress
 *   DELETE /v1/jobs/{id}            cancel
 *   GET    /v1/jobs/{id}/result     the result document (409 until done)
 *   GET    /v1/jobs/{id}/log        build and console logs, text/plain
 *   GET    /v1/jobs/{id}/events     Server-Sent Events (Last-Event-ID resumes)
 *   GET    /v1/jobs/{id}/report     HTML report
 *   GET    /v1/trend                the nightly trend page (?since=30d)
 *   GET    /v1/schedules            the schedules, last and next runs
 *   GET    /v1/change-points        the trend's change points as JSON
 *   GET    /v1/health               liveness
 *   GET    /metrics                 Prometheus text format 0.0.4
 *
 * results-schema/openapi.yaml describes the same routes; a unit test checks
 * that the two agree. Errors are {"error":{"code","message","path"}} with the
 * status from error_http_status(). */
#pragma once

#include <stdint.h>
#include "job/job.h"
#include "server/queue.h"
#include "server/config.h"
#include "server/store.h"
#include "util/error.h"

/* The signature of job_expand_json, so unit tests can inject a fake. */
typedef int (*http_expand_fn)(json_object *spec, enum job_origin origin, const char *base_dir,
			      const struct job_limits *limits, json_object **ret_expanded,
			      struct sl_error *err);
/* The signature of report_html. */
typedef int (*http_report_fn)(json_object *result, char **ret_html, struct sl_error *err);

struct http_server_opts {
	const struct service_config *config; /* borrowed: listen, tokens, limits */
	struct store *store;		     /* borrowed */
	struct queue *queue;		     /* borrowed */
	http_expand_fn expand;		     /* NULL: job_expand_json */
	http_report_fn report;		     /* NULL: report_html */
	void (*log)(const char *line);	     /* NULL: stderr */
	const char *data_dir;		     /* guest-kernel/'s parent; NULL: fs_data_dir() */
};

struct http_server;

/* Binds config->listen and starts serving. Without tokens it refuses any
 * address but loopback (ERR_FORBIDDEN) and logs that authentication is off. */
int http_server_new(const struct http_server_opts *opts, struct http_server **ret_server,
		    struct sl_error *err);
/* The bound port (useful with port 0). */
uint16_t http_server_port(const struct http_server *srv);
/* Stops serving (open event streams end) and frees. NULL is a no-op. */
void http_server_free(struct http_server *srv);

/* The route table, for the test that compares it with openapi.yaml: the
 * number of routes, and the method and path template ("/v1/jobs/{id}") of
 * route i. */
size_t http_route_count(void);
void http_route_get(size_t i, const char **ret_method, const char **ret_path);

/* 1 when name is a safe patch file name: 1..128 of [A-Za-z0-9._+-], not
 * starting with '.'; so never a path. */
bool http_patch_name_valid(const char *name);

/* What a request body or a form's job part may hold in JSON values
 * (json_limits.max_values): a job's spec holds a few hundred. */
#define HTTP_JSON_MAX_VALUES 20000

/* json_parse_strict() of len bytes of untrusted text (a request body, a
 * multipart part, a stored result) with no size limit of its own (the caller
 * bounded it), the default depth and at most max_values values (0: no
 * bound); a bare `null` is an error too. Returns a new reference, or NULL
 * with err naming what ("request body") and the offset. */
json_object *http_parse_json(const char *text, size_t len, const char *what, size_t max_values,
			     struct sl_error *err);
