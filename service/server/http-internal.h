/* What the REST API's files share: the server, the per-request state that
 * lives in libmicrohttpd's connection closure, the route table's entry, the
 * response helpers and the handlers the route table points at.
 *
 *   http.c          daemon start/stop, request lifecycle, auth, body reading
 *   http_routes.c   the route table, matching, 404/405 and bad ids
 *   http_jobs.c     submit, list, get, cancel, result, report
 *   http_streams.c  the log and the Server-Sent Events stream
 *   http_metrics.c  health, Prometheus /metrics and the trend page
 *   http_conns.c    per-connection state, the request deadline, the ticker
 *   http_nightly.c  the schedules and the change points as JSON, and a
 *                   change point's bisection on request
 *   http_calibration.c  the host's A/A calibrations (/v1/calibration)
 *
 * Not for use outside service/server/http*.c; http.h is the public API.
 * This header does not include http.h (the files include both), so the
 * include graph stays acyclic. */
#pragma once

#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "server/config.h"
#include "server/store.h"
#include "util/error.h"

struct http_server_opts;

struct http_conn;
struct sse;

struct http_server {
	struct http_server_opts *opts; /* owned: a copy of http_server_new's opts */
	struct MHD_Daemon *daemon;
	uint16_t port;
	atomic_int stopping; /* set by http_server_free: event streams end */

	/* http_conns.c: every open connection, and the ticker thread that
	 * closes the ones past their request deadline and wakes idle event
	 * streams for their keepalive. */
	pthread_mutex_t conns_lock;
	pthread_cond_t ticker_cond;
	struct http_conn *conns;
	pthread_t ticker;
	bool ticker_running;
	atomic_ullong deadline_closed; /* connections closed by the deadline */
	long mhd_log_second;	       /* http.c's rate limit of libmicrohttpd's */
	unsigned mhd_log_count;	       /* messages, under conns_lock */
	unsigned long mhd_log_dropped;

	/* http_streams.c: the open event streams (suspended while idle) and
	 * how many each token holds ([n_tokens]: no token, auth off). */
	pthread_mutex_t streams_lock;
	struct sse *streams;
	unsigned *streams_per_token;
	atomic_ullong streams_refused;
	/* The wall clock at http_server_new(), as /metrics'
	 * process_start_time_seconds: counters kept since service start
	 * restart from 0 with it, and Prometheus sees when. */
	double started_unix;
	/* http_metrics.c: a bounded probe of each libvirt daemon the service
	 * runs guests on, for /v1/health (guest/libvirt_probe.h). */
	struct libvirt_probe **probes;
	size_t n_probes;
};

struct request;
typedef enum MHD_Result (*route_fn)(struct http_server *srv, struct MHD_Connection *conn,
				    struct request *req);

struct route {
	const char *method;
	const char *path; /* segments; "{id}" captures a job id, "{key}" a change point's */
	unsigned role;	  /* 0: no token needed */
	bool body;	  /* reads a request body (JSON or multipart) */
	route_fn fn;
};

/* One multipart/form-data part, as read so far. */
struct part {
	char *key;
	char *filename;
	char *data;
	size_t len, cap;
};

/* Per-request state, in *con_cls from the first call to the completion
 * callback. */
struct request {
	const struct route *route;
	int token_index;	   /* the bearer token's index in the config, -1: none */
	char id[STORE_ID_LEN + 1]; /* the validated {id}, when the route has one */
	char key[65];		   /* the validated {key} (a change point's), likewise */
	unsigned status; /* the status answered, 0 before: set with http_request_answered() */
	struct counters *counters; /* the store's, where the answer is counted */
	char allow[64];		   /* a 405's Allow header: the path's methods */
	bool multipart;
	char *body;
	size_t body_len, body_cap;
	struct MHD_PostProcessor *pp;
	struct part *parts;
	size_t n_parts;
	size_t total;
	/* The Content-Length (0: not given), at most max_body_bytes: the body
	 * buffer is sized from it and a part's never grows past it. */
	size_t expected;
	size_t consumed; /* body bytes before the chunk being post-processed */
	bool failed;	 /* upload rejected: err says why, answered at the end */
	/* Who asks: the matched token (NULL without tokens or on an open
	 * route); admin without tokens (loopback only) or with the role. */
	const struct service_token *token;
	bool admin;
	struct sl_error err;
};

/* ---- http_conns.c ---- */

/* MHD_OPTION_NOTIFY_CONNECTION: tracks each connection from accept to close. */
void http_conns_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
		       enum MHD_ConnectionNotificationCode code);
/* The request on conn has fully arrived (headers and body) and is being
 * answered: the deadline no longer applies to it. */
void http_conns_request_arrived(struct MHD_Connection *conn);
/* The response on conn is done: the next request's deadline starts now. */
void http_conns_request_done(struct MHD_Connection *conn);
/* Starts and stops the ticker thread (once a second: the deadline, then
 * http_streams_tick). */
int http_conns_start(struct http_server *srv, struct sl_error *err);
void http_conns_stop(struct http_server *srv);
/* Open connections now. */
size_t http_conns_count(struct http_server *srv);

/* ---- http_streams.c ---- */

/* Sets up and tears down the stream registry (before the daemon starts;
 * after every stream was resumed and the daemon stopped). */
int http_streams_init(struct http_server *srv, struct sl_error *err);
void http_streams_fini(struct http_server *srv);
/* The store's event hook: wakes the streams of job_id. */
void http_streams_job_event(void *cls, const char *job_id);
/* From the ticker: wakes streams idle for the keepalive period. */
void http_streams_tick(struct http_server *srv);
/* Wakes every stream so that it ends (srv->stopping is set). */
void http_streams_wake_all(struct http_server *srv);
/* Open event streams now. */
size_t http_streams_count(struct http_server *srv);

/* ---- http.c ---- */

/* Hands one formatted line to opts.log, or to stderr. */
void http_log(struct http_server *srv, const char *fmt, ...) _printf_(2, 3);

/* Records the status of the answer being queued and counts it
 * (schedlab_http_requests_total) now, not when libmicrohttpd completes the
 * request: a client that reads the answer and scrapes /metrics next must
 * see it counted. */
void http_request_answered(struct request *req, unsigned status);
/* Queues a response of len bytes of data with the given content type and
 * records status in req (may be NULL). mode says who frees data, as in
 * MHD_create_response_from_buffer. A 405 carries req->allow as Allow. */
enum MHD_Result http_respond_buf(struct MHD_Connection *conn, struct request *req, unsigned status,
				 const char *type, const void *data, size_t len,
				 enum MHD_ResponseMemoryMode mode);
/* Frees the request's body and form parts once the handler has what it
 * needs from them: an upload is not held twice while it is stored. */
void http_request_drop_body(struct request *req);
/* Queues o (borrowed) as an application/json response. */
enum MHD_Result http_respond_json(struct MHD_Connection *conn, struct request *req, unsigned status,
				  json_object *o);
/* Queues the error body of err with the status of its kind. */
enum MHD_Result http_respond_error(struct MHD_Connection *conn, struct request *req,
				   const struct sl_error *err);
/* Queues an error of kind, with path (may be NULL) and a formatted message. */
enum MHD_Result http_respond_errorf(struct MHD_Connection *conn, struct request *req,
				    enum error_kind kind, const char *path, const char *fmt, ...)
    _printf_(5, 6);

/* ---- http_routes.c ---- */

/* Routes method and url: sets req->route, and req->id or req->key when the
 * route has "{id}" or "{key}". Returns MHD_YES with *ret_answered false
 * when a route matched; otherwise the result of a 404, 405 or bad-id
 * response, *ret_answered true. */
enum MHD_Result http_route_request(struct MHD_Connection *conn, const char *method, const char *url,
				   struct request *req, bool *ret_answered);

/* The handlers the route table points at (route_fn), by the file that
 * defines them. */

/* ---- http_jobs.c ---- */
enum MHD_Result http_jobs_submit(struct http_server *srv, struct MHD_Connection *conn,
				 struct request *req);
enum MHD_Result http_jobs_list(struct http_server *srv, struct MHD_Connection *conn,
			       struct request *req);
enum MHD_Result http_jobs_get(struct http_server *srv, struct MHD_Connection *conn,
			      struct request *req);
enum MHD_Result http_jobs_cancel(struct http_server *srv, struct MHD_Connection *conn,
				 struct request *req);
enum MHD_Result http_jobs_result(struct http_server *srv, struct MHD_Connection *conn,
				 struct request *req);
enum MHD_Result http_jobs_report(struct http_server *srv, struct MHD_Connection *conn,
				 struct request *req);
/* A 429 (ERR_QUOTA): the error body and a Retry-After header. */
enum MHD_Result http_respond_quota(struct MHD_Connection *conn, struct request *req,
				   const struct sl_error *err, int retry_after_s);

/* ---- http_streams.c: the handlers ---- */
enum MHD_Result http_streams_log(struct http_server *srv, struct MHD_Connection *conn,
				 struct request *req);
enum MHD_Result http_streams_events(struct http_server *srv, struct MHD_Connection *conn,
				    struct request *req);

/* ---- http_nightly.c ---- */
/* GET /v1/schedules and GET /v1/change-points. */
enum MHD_Result http_schedules_list(struct http_server *srv, struct MHD_Connection *conn,
				    struct request *req);
enum MHD_Result http_change_points_list(struct http_server *srv, struct MHD_Connection *conn,
					struct request *req);
/* POST /v1/change-points/{key}/bisect (the job it starts:
 * change_point_bisect.h). */
enum MHD_Result http_change_point_bisect(struct http_server *srv, struct MHD_Connection *conn,
					 struct request *req);

/* ---- http_calibration.c ---- */
/* GET /v1/calibration, and the summary /v1/health carries ({count,
 * newest_made_at, newest_age_s}; a new object). */
enum MHD_Result http_calibration_list(struct http_server *srv, struct MHD_Connection *conn,
				      struct request *req);
json_object *http_calibration_summary(struct http_server *srv);

/* ---- http_metrics.c ---- */
/* One libvirt probe per hypervisor host of the config (or its one
 * libvirt_uri): -ENOMEM on failure. fini: NULL-safe parts. */
int http_health_init(struct http_server *srv);
void http_health_fini(struct http_server *srv);
/* GET /v1/health and GET /metrics (Prometheus text). */
enum MHD_Result http_metrics_health(struct http_server *srv, struct MHD_Connection *conn,
				    struct request *req);
enum MHD_Result http_metrics_prometheus(struct http_server *srv, struct MHD_Connection *conn,
					struct request *req);
/* The query parameter "since", a duration (util/parse.h), into seconds:
 * HTTP_SINCE_DEFAULT_S when absent; ERR_INVALID at "since" when it is not
 * a duration. GET /v1/trend and GET /v1/change-points. */
#define HTTP_SINCE_DEFAULT_S (30L * 86400)
int http_query_since(struct MHD_Connection *conn, long *ret_seconds, struct sl_error *err);
/* GET /v1/trend: the trend page (report/trend.h). */
enum MHD_Result http_metrics_trend(struct http_server *srv, struct MHD_Connection *conn,
				   struct request *req);
