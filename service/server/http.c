/* The REST API; see http.h. This file runs the daemon and each request's
 * life: per-request state lives in the connection closure (*con_cls) and is
 * freed in the completion callback, after libmicrohttpd's largepost.c
 * example. It routes (http_routes.c), checks the bearer token, reads the
 * body within max_body_bytes and hands the request to its handler
 * (http_jobs.c, http_streams.c, http_metrics.c).
 *
 * Threads: libmicrohttpd's own polling threads (http_threads of them, epoll
 * on Linux), not one per connection, so idle and slow connections cost a
 * descriptor and a little memory, no thread. A handler that blocks (SQLite,
 * patch parsing, the report) holds up only the connections of its polling
 * thread. The limits against a client that holds connections open:
 * max_connections in all, max_connections_per_ip per address, the request
 * deadline (http_conns.c) and the idle timeout; event streams are
 * suspended while idle (http_streams.c). */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "server/http.h"
#include "server/http-internal.h"
#include "server/counters.h"
#include "util/json.h"
#include "util/parse.h"

void http_log(struct http_server *srv, const char *fmt, ...)
{
	char line[1200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (srv->opts->log)
		srv->opts->log(line);
	else
		fprintf(stderr, "schedlab-http: %s\n", line);
}

/* libmicrohttpd's own messages (MHD_OPTION_EXTERNAL_LOGGER), at most
 * MHD_LOG_BURST a second: a flood of refused connections must not flood
 * the log. The count of those dropped is logged with the next one let
 * through. */
#define MHD_LOG_BURST 5
/* fmt is libmicrohttpd's own format string, never a client's. */
__attribute__((format(printf, 2, 0))) static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct http_server *srv = cls;
	char line[400];
	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = '\0';
	long now = (long)time(NULL);
	pthread_mutex_lock(&srv->conns_lock);
	if (now != srv->mhd_log_second) {
		srv->mhd_log_second = now;
		srv->mhd_log_count = 0;
	}
	bool show = srv->mhd_log_count++ < MHD_LOG_BURST;
	unsigned long dropped = show ? srv->mhd_log_dropped : 0;
	if (show)
		srv->mhd_log_dropped = 0;
	else
		srv->mhd_log_dropped++;
	pthread_mutex_unlock(&srv->conns_lock);
	if (show && dropped)
		http_log(srv, "libmicrohttpd: %s (and %lu similar messages not shown)", line,
			 dropped);
	else if (show)
		http_log(srv, "libmicrohttpd: %s", line);
}

/* ---- responses ---- */

void http_request_answered(struct request *req, unsigned status)
{
	req->status = status;
	if (req->counters)
		counters_http(req->counters, req->route ? req->route->method : NULL,
			      req->route ? req->route->path : NULL, status);
}

enum MHD_Result http_respond_buf(struct MHD_Connection *conn, struct request *req, unsigned status,
				 const char *type, const void *data, size_t len,
				 enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(len, (void *)data, mode);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	if (status == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
					"Bearer realm=\"schedlab\"");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED && req && req->allow[0])
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, req->allow);
	if (req)
		http_request_answered(req, status);
	enum MHD_Result r = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return r;
}

enum MHD_Result http_respond_json(struct MHD_Connection *conn, struct request *req, unsigned status,
				  json_object *o)
{
	const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
								 JSON_C_TO_STRING_NOSLASHESCAPE);
	return http_respond_buf(conn, req, status, "application/json", text, strlen(text),
				MHD_RESPMEM_MUST_COPY);
}

enum MHD_Result http_respond_error(struct MHD_Connection *conn, struct request *req,
				   const struct sl_error *err)
{
	_cleanup_json_ json_object *o = error_to_json(err);
	return http_respond_json(conn, req, (unsigned)error_http_status(err->kind), o);
}

enum MHD_Result http_respond_errorf(struct MHD_Connection *conn, struct request *req,
				    enum error_kind kind, const char *path, const char *fmt, ...)
{
	struct sl_error err = {0};
	char msg[sizeof(err.message)];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	error_set_path(&err, kind, path, "%s", msg);
	return http_respond_error(conn, req, &err);
}

/* ---- request bodies ---- */

json_object *http_parse_json(const char *text, size_t len, const char *what, size_t max_values,
			     struct sl_error *err)
{
	/* The caller bounded the body already (max_body_bytes, the store).
	 * The values are bounded here: a body of small values would cost
	 * json-c about 36 times its size (bench/body-memory.sh "values"); a
	 * job's spec holds a few hundred, its patches are strings. */
	const struct json_limits lim = {.max_bytes = SIZE_MAX, .max_values = max_values};
	json_object *o = NULL;

	if (json_parse_strict(text, len, &lim, what, &o, err) < 0)
		return NULL;
	if (!o)
		error_set_path(err, ERR_INVALID, "$",
			       "The %s is not valid JSON here: it is null, not a value.", what);
	return o;
}

static void parts_free(struct request *req)
{
	for (size_t i = 0; i < req->n_parts; i++) {
		free(req->parts[i].key);
		free(req->parts[i].filename);
		free(req->parts[i].data);
	}
	free(req->parts);
	req->parts = NULL;
	req->n_parts = 0;
}

void http_request_drop_body(struct request *req)
{
	parts_free(req);
	free(req->body);
	req->body = NULL;
	req->body_len = req->body_cap = 0;
}

/* A buffer's next capacity for need bytes: doubling, but never past the
 * body's announced length (limit + 1 for the NUL; limit 0: unknown), so a
 * body of n bytes takes about n, not up to 2n. */
static size_t grow_cap(size_t cap, size_t need, size_t limit)
{
	if (!cap)
		cap = limit ? limit + 1 : 4096;
	while (cap < need)
		cap *= 2;
	if (limit && cap > limit + 1 && need <= limit + 1)
		cap = limit + 1;
	return cap;
}

static enum MHD_Result post_iterator(void *cls, enum MHD_ValueKind kind, const char *key,
				     const char *filename, const char *content_type,
				     const char *transfer_encoding, const char *data, uint64_t off,
				     size_t size)
{
	(void)kind;
	(void)content_type;
	(void)transfer_encoding;
	struct request *req = cls;
	if (req->failed)
		return MHD_NO;
	struct part *p = req->n_parts ? &req->parts[req->n_parts - 1] : NULL;
	if (off == 0 || !p || strcmp(p->key, key ? key : "") != 0) {
		/* A new part. The part count is bounded by the patch limit plus
		 * the job part; checked where the limits are known (finish). */
		if (req->n_parts >= 1024) {
			error_set(&req->err, ERR_INVALID, EINVAL,
				  "The request has more than 1024 form parts.");
			req->failed = true;
			return MHD_NO;
		}
		/* the part before is complete: give back its slack */
		if (p && p->cap > p->len + 1) {
			char *d = realloc(p->data, p->len + 1);
			if (d) {
				p->data = d;
				p->cap = p->len + 1;
			}
		}
		struct part *n = realloc(req->parts, (req->n_parts + 1) * sizeof(*n));
		if (!n)
			goto oom;
		req->parts = n;
		p = &req->parts[req->n_parts++];
		memset(p, 0, sizeof(*p));
		p->key = strdup(key ? key : "");
		p->filename = filename ? strdup(filename) : NULL;
		if (!p->key || (filename && !p->filename))
			goto oom;
	}
	/* p was set above whenever it was NULL. */
	// cppcheck-suppress nullPointerRedundantCheck
	if (p->len + size + 1 > p->cap) {
		/* a part is at most what is left of the announced body */
		size_t left = req->expected > req->consumed ? req->expected - req->consumed : 0;
		size_t cap = grow_cap(p->cap ? p->cap : 4096, p->len + size + 1, p->len + left);
		char *d = realloc(p->data, cap);
		if (!d)
			goto oom;
		p->data = d;
		p->cap = cap;
	}
	if (size)
		memcpy(p->data + p->len, data, size);
	p->len += size;
	p->data[p->len] = '\0';
	return MHD_YES;
oom:
	error_set(&req->err, ERR_INTERNAL, ENOMEM, "Out of memory reading the form.");
	req->failed = true;
	return MHD_NO;
}

/* ---- the request lifecycle ---- */

static void request_free(struct request *req)
{
	if (!req)
		return;
	if (req->pp)
		MHD_destroy_post_processor(req->pp);
	parts_free(req);
	free(req->body);
	free(req);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)toe;
	http_conns_request_done(conn);
	request_free(*con_cls);
	*con_cls = NULL;
}

/* First call of a request: route, authorize, set up the body reader.
 * Returns MHD_YES to continue, or the result of an early response. */
static enum MHD_Result request_begin(struct http_server *srv, struct MHD_Connection *conn,
				     const char *url, const char *method, struct request *req,
				     bool *ret_answered)
{
	enum MHD_Result r = http_route_request(conn, method, url, req, ret_answered);
	if (*ret_answered)
		return r;
	*ret_answered = true;
	const struct service_config *cfg = srv->opts->config;
	req->admin = cfg->n_tokens == 0;
	if (req->route->role && cfg->n_tokens > 0) {
		const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
							       MHD_HTTP_HEADER_AUTHORIZATION);
		const struct service_token *t = NULL;
		if (auth && strncasecmp(auth, "Bearer ", 7) == 0)
			t = service_config_token_find(cfg, auth + 7);
		/* A known token without the role (even with none) is 403. */
		if (!t)
			return http_respond_errorf(conn, req, ERR_UNAUTHORIZED, NULL,
						   "A valid bearer token is required.");
		req->token = t;
		req->token_index = (int)(t - cfg->tokens);
		req->admin = t->roles & SERVICE_ROLE_ADMIN;
		unsigned roles = t->roles;
		if (!(roles & req->route->role))
			return http_respond_errorf(
			    conn, req, ERR_FORBIDDEN, NULL, "The token lacks the '%s' role.",
			    req->route->role == SERVICE_ROLE_SUBMIT ? "submit" : "read");
	}
	if (req->route->body) {
		const char *ct = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_CONTENT_TYPE);
		const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (cl) {
			unsigned long long n;
			if (parse_uint64(cl, cfg->max_body_bytes, &n) < 0)
				return http_respond_errorf(
				    conn, req, ERR_TOO_LARGE, NULL,
				    "The request body is larger than %zu bytes.",
				    cfg->max_body_bytes);
			req->expected = (size_t)n;
		}
		size_t n = ct ? strcspn(ct, ";") : 0;
		while (n > 0 && ct[n - 1] == ' ')
			n--;
		if (ct && n == 16 && strncasecmp(ct, "application/json", 16) == 0)
			req->multipart = false;
		else if (ct && n == 19 && strncasecmp(ct, "multipart/form-data", 19) == 0) {
			req->multipart = true;
			req->pp = MHD_create_post_processor(conn, 64 * 1024, post_iterator, req);
			if (!req->pp)
				return http_respond_errorf(
				    conn, req, ERR_INVALID, NULL,
				    "The multipart/form-data body has no valid "
				    "boundary.");
		} else
			return http_respond_errorf(
			    conn, req, ERR_UNSUPPORTED, NULL,
			    "Content type '%.64s' is not application/json or "
			    "multipart/form-data.",
			    ct ? ct : "(none)");
	}
	*ret_answered = false;
	return MHD_YES;
}

/* Takes one piece of the body, within max_body_bytes. */
static void request_body(struct http_server *srv, struct request *req, const char *data,
			 size_t size)
{
	if (req->failed || !req->route->body)
		return;
	req->total += size;
	if (req->total > srv->opts->config->max_body_bytes) {
		error_set(&req->err, ERR_TOO_LARGE, E2BIG,
			  "The request body is larger than %zu bytes.",
			  srv->opts->config->max_body_bytes);
		req->failed = true;
		return;
	}
	if (req->multipart) {
		req->consumed = req->total - size;
		if (MHD_post_process(req->pp, data, size) != MHD_YES && !req->failed) {
			error_set(&req->err, ERR_INVALID, EINVAL,
				  "The multipart/form-data body is malformed.");
			req->failed = true;
		}
		return;
	}
	if (req->body_len + size + 1 > req->body_cap) {
		size_t cap = grow_cap(req->body_cap, req->body_len + size + 1, req->expected);
		char *b = realloc(req->body, cap);
		if (!b) {
			error_set(&req->err, ERR_INTERNAL, ENOMEM, "Out of memory.");
			req->failed = true;
			return;
		}
		req->body = b;
		req->body_cap = cap;
	}
	memcpy(req->body + req->body_len, data, size);
	req->body_len += size;
	req->body[req->body_len] = '\0';
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **con_cls)
{
	(void)version;
	struct http_server *srv = cls;
	struct request *req = *con_cls;
	if (!req) {
		req = calloc(1, sizeof(*req));
		if (!req)
			return MHD_NO;
		*con_cls = req;
		req->token_index = -1;
		req->counters = store_counters(srv->opts->store);
		bool answered;
		enum MHD_Result r = request_begin(srv, conn, url, method, req, &answered);
		if (answered && req->status >= 400)
			http_log(srv, "%s %.200s -> %u", method, url, req->status);
		if (answered) {
			/* libmicrohttpd reads no more of an early-answered request. */
			http_conns_request_arrived(conn);
			return r;
		}
		return MHD_YES;
	}
	if (req->status) {
		*upload_data_size = 0; /* answered early: the rest is dropped */
		return MHD_YES;
	}
	if (*upload_data_size) {
		request_body(srv, req, upload_data, *upload_data_size);
		*upload_data_size = 0;
		return MHD_YES;
	}
	http_conns_request_arrived(conn);
	enum MHD_Result r;
	if (req->failed)
		r = http_respond_error(conn, req, &req->err);
	else
		r = req->route->fn(srv, conn, req);
	if (req->status >= 400 || strcmp(method, "GET") != 0)
		http_log(srv, "%s %.200s -> %u", method, url, req->status);
	return r;
}

int http_server_new(const struct http_server_opts *opts, struct http_server **ret_server,
		    struct sl_error *err)
{
	struct sockaddr_storage addr;
	socklen_t alen;
	bool loopback;
	int r = service_config_parse_listen(opts->config->listen, &addr, &alen, &loopback, err);
	if (r < 0)
		return r;
	struct http_server *srv = calloc(1, sizeof(*srv));
	if (srv) {
		pthread_mutex_init(&srv->conns_lock, NULL);
		srv->opts = malloc(sizeof(*srv->opts));
	}
	if (!srv || !srv->opts) {
		http_server_free(srv);
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	}
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	srv->started_unix = (double)now.tv_sec + (double)now.tv_nsec / 1e9;
	*srv->opts = *opts;
	if (http_health_init(srv) < 0) {
		http_server_free(srv);
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	}
	if (opts->config->n_tokens == 0) {
		if (!loopback) {
			http_server_free(srv);
			return error_set(err, ERR_FORBIDDEN, EPERM,
					 "No tokens are configured, so the service refuses to "
					 "listen on '%s': only loopback addresses are allowed "
					 "without authentication.",
					 opts->config->listen);
		}
		http_log(srv,
			 "no tokens are configured: authentication is off and the service "
			 "listens on loopback '%s' only",
			 opts->config->listen);
	}
	const struct service_config *cfg = opts->config;
	if ((r = http_streams_init(srv, err)) < 0 || (r = http_conns_start(srv, err)) < 0) {
		http_server_free(srv);
		return r;
	}
	/* epoll with a pool of polling threads; suspend/resume for the event
	 * streams. Defaults and their reasons: docs/service.md "Connections". */
	unsigned flags =
	    MHD_USE_AUTO_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
	if (addr.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	struct MHD_OptionItem tls[3] = {{MHD_OPTION_END, 0, NULL}};
	if (cfg->tls_cert) {
		flags |= MHD_USE_TLS;
		tls[0] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, cfg->tls_cert};
		tls[1] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, cfg->tls_key};
	}
	srv->daemon = MHD_start_daemon(
	    flags, 0, NULL, NULL, on_request, srv, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, srv,
	    MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr, MHD_OPTION_NOTIFY_COMPLETED,
	    on_completed, srv, MHD_OPTION_NOTIFY_CONNECTION, http_conns_notify, srv,
	    MHD_OPTION_THREAD_POOL_SIZE, (unsigned)cfg->http_threads, MHD_OPTION_CONNECTION_LIMIT,
	    (unsigned)cfg->max_connections, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
	    (unsigned)cfg->max_connections_per_ip, MHD_OPTION_CONNECTION_TIMEOUT,
	    (unsigned)cfg->idle_timeout_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(256 * 1024),
	    MHD_OPTION_ARRAY, tls, MHD_OPTION_END);
	if (!srv->daemon) {
		http_server_free(srv);
		if (cfg->tls_cert)
			return error_set(
			    err, ERR_INFRA, EADDRINUSE,
			    "Cannot listen on '%s' with TLS: the address is in use or "
			    "not available, or 'tls_cert'/'tls_key' are not a matching "
			    "PEM certificate and key.",
			    cfg->listen);
		return error_set(err, ERR_INFRA, EADDRINUSE,
				 "Cannot listen on '%s': the address is in use or not "
				 "available.",
				 opts->config->listen);
	}
	const union MHD_DaemonInfo *info =
	    MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_BIND_PORT);
	srv->port = info ? info->port : 0;
	*ret_server = srv;
	return 0;
}

uint16_t http_server_port(const struct http_server *srv)
{
	return srv->port;
}

void http_server_free(struct http_server *srv)
{
	if (!srv)
		return;
	/* Stop the ticker (it sets stopping), then resume every idle event
	 * stream so that each ends: libmicrohttpd must not be stopped with
	 * suspended connections. */
	http_conns_stop(srv);
	atomic_store(&srv->stopping, 1);
	http_streams_wake_all(srv);
	if (srv->daemon)
		MHD_stop_daemon(srv->daemon);
	http_streams_fini(srv);
	if (srv->opts)
		http_health_fini(srv);
	pthread_mutex_destroy(&srv->conns_lock);
	free(srv->opts);
	free(srv);
}
