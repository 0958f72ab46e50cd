/* The REST API; see http.h. Per-request state lives in the connection
 * closure (*con_cls) and is freed in the completion callback, after
 * libmicrohttpd's largepost.c example. Request bodies are bounded by
 * max_body_bytes; patch parts by the job limits. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "util/version.h"
#include "server/http.h"
#include "guest/hostpool.h"
#include "report/report.h"
#include "report/trend.h"
#include "util/fs.h"

#define RESULT_MAX_BYTES (64u * 1024 * 1024)
#define LOG_FILE_TAIL	 (4u * 1024 * 1024)
#define LOG_TOTAL_MAX	 (32u * 1024 * 1024)
#define EVENTS_BATCH	 64
#define SSE_KEEPALIVE_S	 15
#define LIST_LIMIT_MAX	 500
#define JOB_NAME_MAX	 128

struct http_server {
	struct http_server_opts opts;
	struct MHD_Daemon *daemon;
	uint16_t port;
	atomic_int stopping;
};

struct request;
typedef enum MHD_Result (*route_fn)(struct http_server *srv, struct MHD_Connection *conn,
				    struct request *req);

struct route {
	const char *method;
	const char *path; /* segments; "{id}" captures a job id */
	unsigned role;	  /* 0: no token needed */
	route_fn fn;
};

struct part {
	char *key;
	char *filename;
	char *data;
	size_t len, cap;
};

struct request {
	const struct route *route;
	char id[STORE_ID_LEN + 1];
	unsigned status;
	bool multipart;
	char *body;
	size_t body_len, body_cap;
	struct MHD_PostProcessor *pp;
	struct part *parts;
	size_t n_parts;
	size_t total;
	bool failed; /* upload rejected: err says why, answered at the end */
	struct sl_error err;
};

static void slog(struct http_server *srv, const char *fmt, ...) _printf_(2, 3);
static void slog(struct http_server *srv, const char *fmt, ...)
{
	char line[1200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (srv->opts.log)
		srv->opts.log(line);
	else
		fprintf(stderr, "schedlab-http: %s\n", line);
}

/* ---- responses ---- */

static enum MHD_Result respond_buf(struct MHD_Connection *conn, struct request *req,
				   unsigned status, const char *type, const void *data, size_t len,
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
	if (req)
		req->status = status;
	enum MHD_Result r = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return r;
}

static enum MHD_Result respond_json(struct MHD_Connection *conn, struct request *req,
				    unsigned status, json_object *o)
{
	const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
								 JSON_C_TO_STRING_NOSLASHESCAPE);
	return respond_buf(conn, req, status, "application/json", text, strlen(text),
			   MHD_RESPMEM_MUST_COPY);
}

static enum MHD_Result respond_error(struct MHD_Connection *conn, struct request *req,
				     const struct sl_error *err)
{
	_cleanup_json_ json_object *o = error_to_json(err);
	return respond_json(conn, req, (unsigned)error_http_status(err->kind), o);
}

static enum MHD_Result respond_errorf(struct MHD_Connection *conn, struct request *req,
				      enum error_kind kind, const char *path, const char *fmt, ...)
    _printf_(5, 6);
static enum MHD_Result respond_errorf(struct MHD_Connection *conn, struct request *req,
				      enum error_kind kind, const char *path, const char *fmt, ...)
{
	struct sl_error err = {0};
	char msg[sizeof(err.message)];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	error_set_path(&err, kind, path, "%s", msg);
	return respond_error(conn, req, &err);
}

static json_object *job_links(const char *id)
{
	json_object *l = json_object_new_object();
	static const char *const names[] = {"result", "log", "events", "report"};
	char buf[128];
	snprintf(buf, sizeof(buf), "/v1/jobs/%s", id);
	json_object_object_add(l, "self", json_object_new_string(buf));
	for (size_t i = 0; i < ELEMENTSOF(names); i++) {
		snprintf(buf, sizeof(buf), "/v1/jobs/%s/%s", id, names[i]);
		json_object_object_add(l, names[i], json_object_new_string(buf));
	}
	return l;
}

/* Strict decimal parse of a query argument into [min, max]. */
static int query_int(struct MHD_Connection *conn, const char *name, long min, long max, long def,
		     long *ret, struct sl_error *err)
{
	const char *v = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, name);
	if (!v) {
		*ret = def;
		return 0;
	}
	char *end = NULL;
	errno = 0;
	long n = strtol(v, &end, 10);
	if (!*v || *end || errno || n < min || n > max)
		return error_set_path(err, ERR_INVALID, name,
				      "Query parameter '%s' must be an integer in %ld..%ld.", name,
				      min, max);
	*ret = n;
	return 0;
}

/* ---- POST /v1/jobs ---- */

bool http_patch_name_valid(const char *name)
{
	if (!name || !name[0] || name[0] == '.')
		return false;
	size_t i;
	for (i = 0; name[i]; i++) {
		char c = name[i];
		if (i >= 128)
			return false;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-' || c == '+'))
			return false;
	}
	return true;
}

/* Inline patches and config fragments name files in the job directory:
 * check every name before the spec goes anywhere else. */
static int check_inline_names(json_object *list, const char *path, struct sl_error *err)
{
	if (!list || !json_object_is_type(list, json_type_array))
		return 0;
	size_t n = json_object_array_length(list);
	for (size_t i = 0; i < n; i++) {
		json_object *p = json_object_array_get_idx(list, i), *name = NULL;
		if (!json_object_is_type(p, json_type_object) ||
		    !json_object_object_get_ex(p, "name", &name))
			continue;
		char where[200];
		snprintf(where, sizeof(where), "%s[%zu].name", path, i);
		if (!json_object_is_type(name, json_type_string) ||
		    !http_patch_name_valid(json_object_get_string(name)))
			return error_set_path(
			    err, ERR_INVALID, where,
			    "Patch name '%.128s' at '%s' is not a plain file name "
			    "(letters, digits, '.', '_', '-', '+'; no '/').",
			    json_object_get_string(name), where);
	}
	return 0;
}

static int check_spec_names(json_object *spec, struct sl_error *err)
{
	json_object *v = NULL, *kernels = NULL;
	int r;
	if (json_object_object_get_ex(spec, "patches", &v) &&
	    (r = check_inline_names(v, "$.patches", err)) < 0)
		return r;
	json_object *base = NULL;
	if (json_object_object_get_ex(spec, "base", &base) &&
	    json_object_is_type(base, json_type_object) &&
	    json_object_object_get_ex(base, "patches", &v) &&
	    (r = check_inline_names(v, "$.base.patches", err)) < 0)
		return r;
	if (json_object_object_get_ex(spec, "kernels", &kernels) &&
	    json_object_is_type(kernels, json_type_object)) {
		json_object_object_foreach(kernels, kname, k)
		{
			char path[160];
			if (!json_object_is_type(k, json_type_object))
				continue;
			if (json_object_object_get_ex(k, "patches", &v)) {
				snprintf(path, sizeof(path), "$.kernels.%.64s.patches", kname);
				if ((r = check_inline_names(v, path, err)) < 0)
					return r;
			}
			json_object *cfg = NULL;
			if (json_object_object_get_ex(k, "config", &cfg) &&
			    json_object_is_type(cfg, json_type_object) &&
			    json_object_object_get_ex(cfg, "fragments", &v)) {
				snprintf(path, sizeof(path), "$.kernels.%.64s.config.fragments",
					 kname);
				if ((r = check_inline_names(v, path, err)) < 0)
					return r;
			}
		}
	}
	return 0;
}

json_object *http_parse_json(const char *text, size_t len, const char *what, struct sl_error *err)
{
	json_tokener *tok = json_tokener_new_ex(64);
	if (!tok) {
		error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		return NULL;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	json_object *o = json_tokener_parse_ex(tok, text, (int)len);
	enum json_tokener_error e = json_tokener_get_error(tok);
	if (!o && e == json_tokener_continue)
		e = json_tokener_error_parse_eof;
	if (o && e == json_tokener_success && json_tokener_get_parse_end(tok) < len) {
		/* Trailing bytes after the value. */
		size_t end = json_tokener_get_parse_end(tok);
		while (end < len && (text[end] == ' ' || text[end] == '\n' || text[end] == '\r' ||
				     text[end] == '\t'))
			end++;
		if (end < len) {
			json_object_put(o);
			o = NULL;
			error_set_path(err, ERR_INVALID, "$",
				       "The %s has bytes after its JSON value, at offset %zu.",
				       what, end);
			json_tokener_free(tok);
			return NULL;
		}
	}
	if (!o || e != json_tokener_success) {
		error_set_path(err, ERR_INVALID, "$", "The %s is not valid JSON at offset %zu: %s.",
			       what, json_tokener_get_parse_end(tok), json_tokener_error_desc(e));
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
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
		size_t cap = p->cap ? p->cap : 4096;
		while (cap < p->len + size + 1)
			cap *= 2;
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

/* Adds a patch part to the spec: "patch" (or "patches") to the CI
 * shorthand's patches, "patch:KERNEL" to that kernel's patches. */
static int add_patch_part(json_object *spec, const struct part *p, struct sl_error *err)
{
	const char *name = p->filename;
	if (!http_patch_name_valid(name))
		return error_set_path(
		    err, ERR_INVALID, p->key,
		    "Patch file name '%.128s' in form part '%.64s' is not a plain "
		    "file name (letters, digits, '.', '_', '-', '+'; no '/').",
		    name ? name : "", p->key);
	if (memchr(p->data ? p->data : "", '\0', p->len))
		return error_set_path(err, ERR_INVALID, p->key,
				      "Patch '%s' contains NUL bytes; a patch must be text.", name);
	json_object *list = NULL;
	char path[160];
	if (strcmp(p->key, "patch") == 0 || strcmp(p->key, "patches") == 0) {
		snprintf(path, sizeof(path), "$.patches");
		if (!json_object_object_get_ex(spec, "patches", &list)) {
			list = json_object_new_array();
			json_object_object_add(spec, "patches", list);
		}
	} else if (strncmp(p->key, "patch:", 6) == 0) {
		const char *kname = p->key + 6;
		json_object *kernels = NULL, *k = NULL;
		snprintf(path, sizeof(path), "$.kernels.%.64s", kname);
		if (!json_object_object_get_ex(spec, "kernels", &kernels) ||
		    !json_object_object_get_ex(kernels, kname, &k) ||
		    !json_object_is_type(k, json_type_object))
			return error_set_path(
			    err, ERR_INVALID, path,
			    "Form part '%.64s' names kernel '%.64s', which the job "
			    "does not define.",
			    p->key, kname);
		snprintf(path, sizeof(path), "$.kernels.%.64s.patches", kname);
		if (!json_object_object_get_ex(k, "patches", &list)) {
			list = json_object_new_array();
			json_object_object_add(k, "patches", list);
		}
	} else
		return error_set_path(err, ERR_INVALID, p->key,
				      "Form part '%.64s' is not 'job', 'patch' or 'patch:KERNEL'.",
				      p->key);
	if (!json_object_is_type(list, json_type_array))
		return error_set_path(err, ERR_INVALID, path, "'%s' must be an array.", path);
	json_object *patch = json_object_new_object();
	json_object_object_add(patch, "name", json_object_new_string(name));
	json_object_object_add(patch, "content",
			       json_object_new_string_len(p->data ? p->data : "", (int)p->len));
	json_object_array_add(list, patch);
	return 0;
}

static int spec_from_multipart(struct http_server *srv, struct request *req, json_object **ret_spec,
			       struct sl_error *err)
{
	const struct job_limits *lim = &srv->opts.config->limits;
	const struct part *job = NULL;
	size_t patches = 0;
	for (size_t i = 0; i < req->n_parts; i++) {
		if (strcmp(req->parts[i].key, "job") == 0) {
			if (job)
				return error_set_path(err, ERR_INVALID, "job",
						      "The form has more than one 'job' part.");
			job = &req->parts[i];
			continue;
		}
		patches++;
		if (req->parts[i].len > lim->max_patch_bytes)
			return error_set_path(err, ERR_TOO_LARGE, req->parts[i].key,
					      "Patch '%.128s' is %zu bytes, over the limit of %zu.",
					      req->parts[i].filename ? req->parts[i].filename : "",
					      req->parts[i].len, lim->max_patch_bytes);
	}
	if (!job)
		return error_set_path(err, ERR_INVALID, "job",
				      "The form has no 'job' part with the job's JSON.");
	if ((int)patches > lim->max_patches)
		return error_set_path(err, ERR_INVALID, "patches",
				      "The form has %zu patches, over the limit of %d.", patches,
				      lim->max_patches);
	_cleanup_json_ json_object *spec =
	    http_parse_json(job->data ? job->data : "", job->len, "job part", err);
	if (!spec)
		return -EINVAL;
	if (!json_object_is_type(spec, json_type_object))
		return error_set_path(err, ERR_INVALID, "$", "The job must be a JSON object.");
	for (size_t i = 0; i < req->n_parts; i++) {
		if (&req->parts[i] == job)
			continue;
		int r = add_patch_part(spec, &req->parts[i], err);
		if (r < 0)
			return r;
	}
	*ret_spec = TAKE_PTR(spec);
	return 0;
}

static enum MHD_Result h_submit(struct http_server *srv, struct MHD_Connection *conn,
				struct request *req)
{
	struct sl_error err = {0};
	long priority;
	if (query_int(conn, "priority", -100, 100, 0, &priority, &err) < 0)
		return respond_error(conn, req, &err);
	_cleanup_json_ json_object *spec = NULL, *expanded = NULL;
	if (req->multipart) {
		if (spec_from_multipart(srv, req, &spec, &err) < 0)
			return respond_error(conn, req, &err);
	} else {
		spec = http_parse_json(req->body ? req->body : "", req->body_len, "request body",
				       &err);
		if (!spec)
			return respond_error(conn, req, &err);
		if (!json_object_is_type(spec, json_type_object))
			return respond_errorf(conn, req, ERR_INVALID, "$",
					      "The job must be a JSON object.");
	}
	if (check_spec_names(spec, &err) < 0)
		return respond_error(conn, req, &err);
	json_object *name_o = NULL;
	const char *name = "";
	if (json_object_object_get_ex(spec, "name", &name_o)) {
		if (!json_object_is_type(name_o, json_type_string) ||
		    json_object_get_string_len(name_o) > JOB_NAME_MAX)
			return respond_errorf(conn, req, ERR_INVALID, "$.name",
					      "The job's name must be a string of at most %d "
					      "characters.",
					      JOB_NAME_MAX);
		name = json_object_get_string(name_o);
	}
	http_expand_fn expand = srv->opts.expand ? srv->opts.expand : job_expand_json;
	if (expand(spec, JOB_ORIGIN_SERVICE, NULL, &srv->opts.config->limits, &expanded, &err) < 0)
		return respond_error(conn, req, &err);
	char id[STORE_ID_LEN + 1];
	if (store_id_new(id, &err) < 0 ||
	    store_job_create(srv->opts.store, id, name, (int)priority, spec, expanded, &err) < 0 ||
	    queue_push(srv->opts.queue, id, (int)priority, false, &err) < 0)
		return respond_error(conn, req, &err);
	slog(srv, "job %s submitted: name '%s', priority %ld", id, name, priority);
	_cleanup_json_ json_object *o = json_object_new_object();
	json_object_object_add(o, "id", json_object_new_string(id));
	json_object_object_add(o, "status", json_object_new_string("queued"));
	json_object_object_add(o, "links", job_links(id));
	return respond_json(conn, req, MHD_HTTP_ACCEPTED, o);
}

/* ---- GET /v1/jobs, /v1/jobs/{id}, DELETE ---- */

static enum MHD_Result h_list(struct http_server *srv, struct MHD_Connection *conn,
			      struct request *req)
{
	struct sl_error err = {0};
	long limit, offset;
	const char *status = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "status");
	if (status && !store_status_valid(status))
		return respond_errorf(conn, req, ERR_INVALID, "status",
				      "Query parameter 'status' is '%.32s', not a job status.",
				      status);
	if (query_int(conn, "limit", 1, LIST_LIMIT_MAX, 50, &limit, &err) < 0 ||
	    query_int(conn, "offset", 0, INT_MAX, 0, &offset, &err) < 0)
		return respond_error(conn, req, &err);
	_cleanup_json_ json_object *jobs = NULL;
	int64_t total = 0;
	if (store_job_list(srv->opts.store, status, (int)limit, (int)offset, &jobs, &total, &err) <
	    0)
		return respond_error(conn, req, &err);
	size_t n = json_object_array_length(jobs);
	for (size_t i = 0; i < n; i++) {
		json_object *j = json_object_array_get_idx(jobs, i);
		json_object_object_add(
		    j, "links", job_links(json_object_get_string(json_object_object_get(j, "id"))));
	}
	_cleanup_json_ json_object *o = json_object_new_object();
	json_object_object_add(o, "jobs", TAKE_PTR(jobs));
	json_object_object_add(o, "total", json_object_new_int64(total));
	json_object_object_add(o, "limit", json_object_new_int((int)limit));
	json_object_object_add(o, "offset", json_object_new_int((int)offset));
	return respond_json(conn, req, MHD_HTTP_OK, o);
}

static enum MHD_Result h_get(struct http_server *srv, struct MHD_Connection *conn,
			     struct request *req)
{
	struct sl_error err = {0};
	_cleanup_json_ json_object *job = NULL;
	if (store_job_get(srv->opts.store, req->id, &job, &err) < 0)
		return respond_error(conn, req, &err);
	json_object_object_add(job, "links", job_links(req->id));
	return respond_json(conn, req, MHD_HTTP_OK, job);
}

static enum MHD_Result h_cancel(struct http_server *srv, struct MHD_Connection *conn,
				struct request *req)
{
	struct sl_error err = {0};
	enum queue_cancel_outcome out;
	if (queue_cancel(srv->opts.queue, req->id, &out, &err) < 0)
		return respond_error(conn, req, &err);
	_cleanup_json_ json_object *job = NULL;
	if (store_job_get(srv->opts.store, req->id, &job, &err) < 0)
		return respond_error(conn, req, &err);
	json_object_object_add(job, "cancel_requested",
			       json_object_new_boolean(out == QUEUE_CANCEL_REQUESTED));
	json_object_object_add(job, "links", job_links(req->id));
	return respond_json(conn, req, out == QUEUE_CANCELLED ? MHD_HTTP_OK : MHD_HTTP_ACCEPTED,
			    job);
}

/* Reads the result file of a job that is done; ERR_CONFLICT before. */
static int read_result(struct http_server *srv, const char *id, char **ret_text, size_t *ret_len,
		       struct sl_error *err)
{
	_cleanup_json_ json_object *job = NULL;
	int r = store_job_get(srv->opts.store, id, &job, err);
	if (r < 0)
		return r;
	const char *status = json_object_get_string(json_object_object_get(job, "status"));
	if (strcmp(status, "done") != 0)
		return error_set(err, ERR_CONFLICT, EBUSY,
				 "Job '%s' is %s; its result exists once it is done.", id, status);
	_cleanup_free_ char *dir = store_job_dir(srv->opts.store, id);
	_cleanup_free_ char *path = fs_path_join(dir, "result.json");
	return fs_read_file(path, RESULT_MAX_BYTES, ret_text, ret_len, err);
}

static enum MHD_Result h_result(struct http_server *srv, struct MHD_Connection *conn,
				struct request *req)
{
	struct sl_error err = {0};
	char *text = NULL;
	size_t len = 0;
	if (read_result(srv, req->id, &text, &len, &err) < 0)
		return respond_error(conn, req, &err);
	/* MHD frees the buffer with the response. */
	return respond_buf(conn, req, MHD_HTTP_OK, "application/json", text, len,
			   MHD_RESPMEM_MUST_FREE);
}

static enum MHD_Result h_report(struct http_server *srv, struct MHD_Connection *conn,
				struct request *req)
{
	struct sl_error err = {0};
	http_report_fn report = srv->opts.report ? srv->opts.report : report_html;
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	if (read_result(srv, req->id, &text, &len, &err) < 0)
		return respond_error(conn, req, &err);
	_cleanup_json_ json_object *result = http_parse_json(text, len, "stored result", &err);
	if (!result)
		return respond_error(conn, req, &err);
	char *html = NULL;
	if (report(result, &html, &err) < 0)
		return respond_error(conn, req, &err);
	return respond_buf(conn, req, MHD_HTTP_OK, "text/html; charset=utf-8", html, strlen(html),
			   MHD_RESPMEM_MUST_FREE);
}

/* ---- GET /v1/trend ---- */

/* The nightly trend page, the same one `schedlab trend` writes, over
 * ?since= (default 30d) read from this service's own store. */
static enum MHD_Result h_trend(struct http_server *srv, struct MHD_Connection *conn,
			       struct request *req)
{
	struct sl_error err = {0};
	const char *since = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "since");
	long seconds = 30L * 86400;
	if (since && (strlen(since) > 32 || trend_parse_duration(since, &seconds) < 0))
		return respond_errorf(conn, req, ERR_INVALID, "since",
				      "Query parameter 'since' is '%.32s', not a duration such as "
				      "'30d', '12h', '90m' or '3600s'.",
				      since);
	char *html = NULL;
	if (trend_html(store_state_dir(srv->opts.store), seconds, &html, &err) < 0)
		return respond_error(conn, req, &err);
	return respond_buf(conn, req, MHD_HTTP_OK, "text/html; charset=utf-8", html, strlen(html),
			   MHD_RESPMEM_MUST_FREE);
}

/* ---- GET /v1/jobs/{id}/log ---- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Appends the *.log files under dir (depth <= 2, no symlinks followed) to f,
 * each with a header, the tail of each at most LOG_FILE_TAIL bytes. */
static void append_logs(FILE *f, const char *root, const char *rel, int depth, size_t *total)
{
	_cleanup_free_ char *dir = rel[0] ? fs_path_join(root, rel) : strdup(root);
	DIR *d = opendir(dir);
	if (!d)
		return;
	char **names = NULL;
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(d)) && n < 4096) {
		if (de->d_name[0] == '.')
			continue;
		char **nn = realloc(names, (n + 1) * sizeof(*nn));
		if (!nn)
			break;
		names = nn;
		names[n++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		if (!names[i])
			continue;
		_cleanup_free_ char *path = fs_path_join(dir, names[i]);
		_cleanup_free_ char *relpath =
		    rel[0] ? fs_path_join(rel, names[i]) : strdup(names[i]);
		struct stat st;
		if (lstat(path, &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode) && depth < 2) {
			append_logs(f, root, relpath, depth + 1, total);
			continue;
		}
		size_t nl = strlen(names[i]);
		if (!S_ISREG(st.st_mode) || nl < 5 || strcmp(names[i] + nl - 4, ".log") != 0)
			continue;
		if (*total >= LOG_TOTAL_MAX)
			break;
		_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			continue;
		off_t start =
		    st.st_size > (off_t)LOG_FILE_TAIL ? st.st_size - (off_t)LOG_FILE_TAIL : 0;
		fprintf(f, "==> %s <==%s\n", relpath,
			start ? " (tail: earlier bytes omitted)" : "");
		if (lseek(fd, start, SEEK_SET) < 0)
			continue;
		char buf[65536];
		ssize_t k;
		while ((k = read(fd, buf, sizeof(buf))) > 0 && *total < LOG_TOTAL_MAX) {
			fwrite(buf, 1, (size_t)k, f);
			*total += (size_t)k;
		}
		fputc('\n', f);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static enum MHD_Result h_log(struct http_server *srv, struct MHD_Connection *conn,
			     struct request *req)
{
	struct sl_error err = {0};
	_cleanup_json_ json_object *job = NULL;
	if (store_job_get(srv->opts.store, req->id, &job, &err) < 0)
		return respond_error(conn, req, &err);
	_cleanup_free_ char *dir = store_job_dir(srv->opts.store, req->id);
	char *text = NULL;
	size_t len = 0, total = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return respond_errorf(conn, req, ERR_INTERNAL, NULL, "Out of memory.");
	append_logs(f, dir, "", 0, &total);
	fclose(f);
	return respond_buf(conn, req, MHD_HTTP_OK, "text/plain; charset=utf-8", text, len,
			   MHD_RESPMEM_MUST_FREE);
}

/* ---- GET /v1/jobs/{id}/events: Server-Sent Events ---- */

struct sse {
	struct http_server *srv;
	char id[STORE_ID_LEN + 1];
	int64_t last_id;
	char *buf;
	size_t len, pos;
	bool done;
};

static void sse_free(void *cls)
{
	struct sse *s = cls;
	free(s->buf);
	free(s);
}

/* Formats the events after last_id into s->buf; returns how many, or < 0. */
static int sse_fill(struct sse *s)
{
	_cleanup_json_ json_object *events = NULL;
	if (store_events_after(s->srv->opts.store, s->id, s->last_id, EVENTS_BATCH, &events, NULL) <
	    0)
		return -EIO;
	size_t n = json_object_array_length(events);
	if (n == 0)
		return 0;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(events, i);
		int64_t eid = json_object_get_int64(json_object_object_get(e, "id"));
		json_object *data = json_object_object_get(e, "data");
		fprintf(f, "id: %" PRId64 "\nevent: %s\ndata: %s\n\n", eid,
			json_object_get_string(json_object_object_get(e, "type")),
			data ? json_object_to_json_string_ext(data, JSON_C_TO_STRING_PLAIN) : "{}");
		s->last_id = eid;
	}
	fclose(f);
	free(s->buf);
	s->buf = text;
	s->len = len;
	s->pos = 0;
	return (int)n;
}

static bool sse_job_final(struct sse *s)
{
	_cleanup_json_ json_object *job = NULL;
	if (store_job_get(s->srv->opts.store, s->id, &job, NULL) < 0)
		return true;
	return store_status_is_final(json_object_get_string(json_object_object_get(job, "status")));
}

/* Blocks (thread per connection) until there is something to send. */
static ssize_t sse_read(void *cls, uint64_t pos, char *out, size_t max)
{
	(void)pos;
	struct sse *s = cls;
	int idle_ms = 0;
	while (s->pos >= s->len) {
		if (s->done || atomic_load(&s->srv->stopping))
			return MHD_CONTENT_READER_END_OF_STREAM;
		int n = sse_fill(s);
		if (n < 0)
			return MHD_CONTENT_READER_END_WITH_ERROR;
		if (n > 0)
			break;
		if (sse_job_final(s)) {
			/* The final status event is written with the status, in
			 * one locked step: one more look finds it. */
			n = sse_fill(s);
			s->done = true;
			if (n <= 0)
				return MHD_CONTENT_READER_END_OF_STREAM;
			break;
		}
		struct timespec ts = {0, 200 * 1000 * 1000};
		nanosleep(&ts, NULL);
		idle_ms += 200;
		if (idle_ms >= SSE_KEEPALIVE_S * 1000) {
			/* A comment line: finds clients that went away. */
			free(s->buf);
			s->buf = strdup(": keepalive\n\n");
			s->len = s->buf ? strlen(s->buf) : 0;
			s->pos = 0;
			idle_ms = 0;
		}
	}
	size_t k = s->len - s->pos < max ? s->len - s->pos : max;
	memcpy(out, s->buf + s->pos, k);
	s->pos += k;
	return (ssize_t)k;
}

static enum MHD_Result h_events(struct http_server *srv, struct MHD_Connection *conn,
				struct request *req)
{
	struct sl_error err = {0};
	_cleanup_json_ json_object *job = NULL;
	if (store_job_get(srv->opts.store, req->id, &job, &err) < 0)
		return respond_error(conn, req, &err);
	int64_t last = 0;
	const char *h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Last-Event-ID");
	if (h) {
		char *end = NULL;
		errno = 0;
		long long v = strtoll(h, &end, 10);
		if (!*h || *end || errno || v < 0)
			return respond_errorf(conn, req, ERR_INVALID, "Last-Event-ID",
					      "Header 'Last-Event-ID' must be a non-negative "
					      "integer.");
		last = v;
	}
	struct sse *s = calloc(1, sizeof(*s));
	if (!s)
		return respond_errorf(conn, req, ERR_INTERNAL, NULL, "Out of memory.");
	s->srv = srv;
	snprintf(s->id, sizeof(s->id), "%s", req->id);
	s->last_id = last;
	struct MHD_Response *resp =
	    MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, sse_read, s, sse_free);
	if (!resp) {
		sse_free(s);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	req->status = MHD_HTTP_OK;
	enum MHD_Result r = MHD_queue_response(conn, MHD_HTTP_OK, resp);
	MHD_destroy_response(resp);
	return r;
}

/* ---- health and metrics ---- */

static enum MHD_Result h_health(struct http_server *srv, struct MHD_Connection *conn,
				struct request *req)
{
	_cleanup_json_ json_object *o = json_object_new_object();
	json_object_object_add(o, "status", json_object_new_string("ok"));
	json_object_object_add(o, "version", json_object_new_string(SCHEDLAB_VERSION));
	json_object_object_add(o, "queue_depth",
			       json_object_new_int64((int64_t)queue_depth(srv->opts.queue)));
	json_object_object_add(o, "running",
			       json_object_new_int64((int64_t)queue_running(srv->opts.queue)));
	json_object_object_add(o, "workers", json_object_new_int(srv->opts.config->workers));
	return respond_json(conn, req, MHD_HTTP_OK, o);
}

static void metric_histogram(FILE *f, const char *name, const char *help, json_object *values,
			     const double *bounds, size_t nb)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
	size_t n = values ? json_object_array_length(values) : 0;
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += json_object_get_double(json_object_array_get_idx(values, i));
	for (size_t b = 0; b < nb; b++) {
		size_t c = 0;
		for (size_t i = 0; i < n; i++)
			if (json_object_get_double(json_object_array_get_idx(values, i)) <=
			    bounds[b])
				c++;
		fprintf(f, "%s_bucket{le=\"%g\"} %zu\n", name, bounds[b], c);
	}
	fprintf(f, "%s_bucket{le=\"+Inf\"} %zu\n%s_sum %.3f\n%s_count %zu\n", name, n, name, sum,
		name, n);
}

static enum MHD_Result h_metrics(struct http_server *srv, struct MHD_Connection *conn,
				 struct request *req)
{
	static const char *const job_statuses[] = {"queued",	"building", "booting", "running",
						   "comparing", "done",	    "failed",  "cancelled"};
	static const char *const run_statuses[] = {"ok", "hung", "panic", "crashed", "error"};
	static const double build_bounds[] = {10, 30, 60, 120, 300, 600, 1200, 1800, 3600};
	static const double boot_bounds[] = {0.25, 0.5, 1, 2, 5, 10, 30, 60, 120};
	struct sl_error err = {0};
	_cleanup_json_ json_object *jobs = NULL, *runs = NULL, *builds = NULL, *boots = NULL;
	if (store_job_counts(srv->opts.store, &jobs, &err) < 0 ||
	    store_run_counts(srv->opts.store, &runs, &err) < 0 ||
	    store_build_seconds(srv->opts.store, &builds, &err) < 0 ||
	    store_boot_seconds(srv->opts.store, &boots, &err) < 0)
		return respond_error(conn, req, &err);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return respond_errorf(conn, req, ERR_INTERNAL, NULL, "Out of memory.");
	fprintf(f,
		"# HELP schedlab_jobs Jobs in the store by status.\n# TYPE schedlab_jobs gauge\n");
	for (size_t i = 0; i < ELEMENTSOF(job_statuses); i++) {
		json_object *v = json_object_object_get(jobs, job_statuses[i]);
		fprintf(f, "schedlab_jobs{status=\"%s\"} %" PRId64 "\n", job_statuses[i],
			v ? json_object_get_int64(v) : 0);
	}
	fprintf(f,
		"# HELP schedlab_queue_depth Jobs waiting for a worker.\n"
		"# TYPE schedlab_queue_depth gauge\nschedlab_queue_depth %zu\n",
		queue_depth(srv->opts.queue));
	fprintf(f,
		"# HELP schedlab_jobs_running Jobs a worker is running.\n"
		"# TYPE schedlab_jobs_running gauge\nschedlab_jobs_running %zu\n",
		queue_running(srv->opts.queue));
	fprintf(f, "# HELP schedlab_runs_total Finished guest runs by status.\n"
		   "# TYPE schedlab_runs_total counter\n");
	for (size_t i = 0; i < ELEMENTSOF(run_statuses); i++) {
		json_object *v = json_object_object_get(runs, run_statuses[i]);
		fprintf(f, "schedlab_runs_total{status=\"%s\"} %" PRId64 "\n", run_statuses[i],
			v ? json_object_get_int64(v) : 0);
	}
	metric_histogram(f, "schedlab_build_seconds", "Kernel build time (cache misses).", builds,
			 build_bounds, ELEMENTSOF(build_bounds));
	metric_histogram(f, "schedlab_boot_seconds", "Guest boot time per run.", boots, boot_bounds,
			 ELEMENTSOF(boot_bounds));
	/* Hypervisor hosts' state and slots, when the config lists them. */
	if (srv->opts.config->hostpool)
		hostpool_write_metrics(srv->opts.config->hostpool, f);
	fclose(f);
	return respond_buf(conn, req, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", text,
			   len, MHD_RESPMEM_MUST_FREE);
}

/* ---- routing ---- */

static const struct route routes[] = {
    {"GET", "/v1/health", 0, h_health},
    {"GET", "/metrics", SERVICE_ROLE_READ, h_metrics},
    {"POST", "/v1/jobs", SERVICE_ROLE_SUBMIT, h_submit},
    {"GET", "/v1/jobs", SERVICE_ROLE_READ, h_list},
    {"GET", "/v1/jobs/{id}", SERVICE_ROLE_READ, h_get},
    {"DELETE", "/v1/jobs/{id}", SERVICE_ROLE_SUBMIT, h_cancel},
    {"GET", "/v1/jobs/{id}/result", SERVICE_ROLE_READ, h_result},
    {"GET", "/v1/jobs/{id}/log", SERVICE_ROLE_READ, h_log},
    {"GET", "/v1/jobs/{id}/events", SERVICE_ROLE_READ, h_events},
    {"GET", "/v1/jobs/{id}/report", SERVICE_ROLE_READ, h_report},
    {"GET", "/v1/trend", SERVICE_ROLE_READ, h_trend},
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
		if (strncmp(tmpl, "{id}", 4) == 0) {
			size_t n = strcspn(url, "/");
			snprintf(id_out, id_size, "%.*s", (int)n, url);
			if (n == 0)
				return false;
			url += n;
			tmpl += 4;
			continue;
		}
		if (*tmpl != *url)
			return false;
		tmpl++;
		url++;
	}
	return *tmpl == '\0' && *url == '\0';
}

/* Finds the route; *ret_path_matched tells a 405 from a 404. */
static const struct route *route_find(const char *method, const char *url, char *id, size_t id_size,
				      bool *ret_path_matched)
{
	*ret_path_matched = false;
	for (size_t i = 0; i < ELEMENTSOF(routes); i++) {
		if (!path_match(routes[i].path, url, id, id_size))
			continue;
		*ret_path_matched = true;
		if (strcmp(routes[i].method, method) == 0 ||
		    (strcmp(method, "HEAD") == 0 && strcmp(routes[i].method, "GET") == 0))
			return &routes[i];
	}
	return NULL;
}

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
	(void)conn;
	(void)toe;
	request_free(*con_cls);
	*con_cls = NULL;
}

/* First call of a request: route, authorize, set up the body reader.
 * Returns MHD_YES to continue, or the result of an early response. */
static enum MHD_Result request_begin(struct http_server *srv, struct MHD_Connection *conn,
				     const char *url, const char *method, struct request *req,
				     bool *ret_answered)
{
	*ret_answered = true;
	char id[256] = "";
	bool path_matched;
	req->route = route_find(method, url, id, sizeof(id), &path_matched);
	if (!req->route) {
		if (path_matched)
			return respond_errorf(conn, req, ERR_INVALID, NULL,
					      "Method '%.16s' is not allowed on '%.200s'.", method,
					      url);
		return respond_errorf(conn, req, ERR_NOT_FOUND, NULL,
				      "There is no resource at '%.200s'.", url);
	}
	if (strstr(req->route->path, "{id}")) {
		/* The only id ever used for a path or a query. */
		if (!store_id_valid(id))
			return respond_errorf(conn, req, ERR_INVALID, "id",
					      "Job id '%.64s' is not 32 lowercase hex digits.", id);
		memcpy(req->id, id, STORE_ID_LEN + 1);
	}
	const struct service_config *cfg = srv->opts.config;
	if (req->route->role && cfg->n_tokens > 0) {
		const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
							       MHD_HTTP_HEADER_AUTHORIZATION);
		unsigned roles = 0;
		if (auth && strncasecmp(auth, "Bearer ", 7) == 0)
			roles = service_config_token_roles(cfg, auth + 7);
		if (!roles)
			return respond_errorf(conn, req, ERR_UNAUTHORIZED, NULL,
					      "A valid bearer token is required.");
		if (!(roles & req->route->role))
			return respond_errorf(
			    conn, req, ERR_FORBIDDEN, NULL, "The token lacks the '%s' role.",
			    req->route->role == SERVICE_ROLE_SUBMIT ? "submit" : "read");
	}
	if (req->route->fn == h_submit) {
		const char *ct = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_CONTENT_TYPE);
		const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (cl) {
			char *end = NULL;
			errno = 0;
			unsigned long long n = strtoull(cl, &end, 10);
			if (errno || (end && *end) || n > cfg->max_body_bytes)
				return respond_errorf(conn, req, ERR_TOO_LARGE, NULL,
						      "The request body is larger than %zu bytes.",
						      cfg->max_body_bytes);
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
				return respond_errorf(conn, req, ERR_INVALID, NULL,
						      "The multipart/form-data body has no valid "
						      "boundary.");
		} else
			return respond_errorf(conn, req, ERR_UNSUPPORTED, NULL,
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
	if (req->failed || req->route->fn != h_submit)
		return;
	req->total += size;
	if (req->total > srv->opts.config->max_body_bytes) {
		error_set(&req->err, ERR_TOO_LARGE, E2BIG,
			  "The request body is larger than %zu bytes.",
			  srv->opts.config->max_body_bytes);
		req->failed = true;
		return;
	}
	if (req->multipart) {
		if (MHD_post_process(req->pp, data, size) != MHD_YES && !req->failed) {
			error_set(&req->err, ERR_INVALID, EINVAL,
				  "The multipart/form-data body is malformed.");
			req->failed = true;
		}
		return;
	}
	if (req->body_len + size + 1 > req->body_cap) {
		size_t cap = req->body_cap ? req->body_cap : 16384;
		while (cap < req->body_len + size + 1)
			cap *= 2;
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
		bool answered;
		enum MHD_Result r = request_begin(srv, conn, url, method, req, &answered);
		if (answered && req->status >= 400)
			slog(srv, "%s %.200s -> %u", method, url, req->status);
		if (answered)
			return r;
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
	enum MHD_Result r;
	if (req->failed)
		r = respond_error(conn, req, &req->err);
	else
		r = req->route->fn(srv, conn, req);
	if (req->status >= 400 || strcmp(method, "GET") != 0)
		slog(srv, "%s %.200s -> %u", method, url, req->status);
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
	if (!srv)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	srv->opts = *opts;
	if (opts->config->n_tokens == 0) {
		if (!loopback) {
			free(srv);
			return error_set(err, ERR_FORBIDDEN, EPERM,
					 "No tokens are configured, so the service refuses to "
					 "listen on '%s': only loopback addresses are allowed "
					 "without authentication.",
					 opts->config->listen);
		}
		slog(srv,
		     "no tokens are configured: authentication is off and the service "
		     "listens on loopback '%s' only",
		     opts->config->listen);
	}
	unsigned flags =
	    MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
	if (addr.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	srv->daemon = MHD_start_daemon(
	    flags, 0, NULL, NULL, on_request, srv, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
	    MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv, MHD_OPTION_CONNECTION_LIMIT, 256u,
	    MHD_OPTION_CONNECTION_TIMEOUT, 120u, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
	    (size_t)(256 * 1024), MHD_OPTION_END);
	if (!srv->daemon) {
		free(srv);
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
	atomic_store(&srv->stopping, 1);
	if (srv->daemon)
		MHD_stop_daemon(srv->daemon);
	free(srv);
}
