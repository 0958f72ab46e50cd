/* The job endpoints: POST /v1/jobs (JSON or multipart/form-data with patch
 * and mbox parts), GET /v1/jobs, GET and DELETE /v1/jobs/{id}, and the result and
 * HTML report of a finished job. Patch parts are bounded by the job
 * limits; every inline file name is checked before the spec goes on. */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "server/http.h"
#include "server/http-internal.h"
#include "server/admission.h"
#include "compare/sequential.h"
#include "server/submit_checks.h"
#include "job/patchset.h"
#include "report/report.h"
#include "util/fs.h"
#include "util/parse.h"

#define RESULT_MAX_BYTES (64u * 1024 * 1024)
#define LIST_LIMIT_MAX	 500
#define RETENTION_BATCH	 64 /* jobs purged per submission at most */

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
	long n;
	if (parse_int(v, min, max, &n) < 0)
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

/* The patch list a form part adds to: "patch" or "mbox" (and "patches")
 * the CI shorthand's patches, "patch:KERNEL" or "mbox:KERNEL" that kernel's
 * patches (created when absent). kernel is NULL for the shorthand. */
static int part_target(json_object *spec, const char *part_key, const char *kernel,
		       json_object **ret_list, char path[160], struct sl_error *err)
{
	json_object *list = NULL, *parent = spec;
	if (!kernel)
		snprintf(path, 160, "$.patches");
	else {
		json_object *kernels = NULL;
		snprintf(path, 160, "$.kernels.%.64s", kernel);
		if (!json_object_object_get_ex(spec, "kernels", &kernels) ||
		    !json_object_object_get_ex(kernels, kernel, &parent) ||
		    !json_object_is_type(parent, json_type_object))
			return error_set_path(
			    err, ERR_INVALID, path,
			    "Form part '%.64s' names kernel '%.64s', which the job "
			    "does not define.",
			    part_key, kernel);
		snprintf(path, 160, "$.kernels.%.64s.patches", kernel);
	}
	if (!json_object_object_get_ex(parent, "patches", &list)) {
		list = json_object_new_array();
		json_object_object_add(parent, "patches", list);
	}
	if (!json_object_is_type(list, json_type_array))
		return error_set_path(err, ERR_INVALID, path, "'%s' must be an array.", path);
	*ret_list = list;
	return 0;
}

/* Adds a patch part to the spec: "patch" (or "patches") to the CI
 * shorthand's patches, "patch:KERNEL" to that kernel's patches. */
static int add_patch_part(json_object *spec, const struct part *p, const char *kernel,
			  struct sl_error *err)
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
	int r = part_target(spec, p->key, kernel, &list, path, err);
	if (r < 0)
		return r;
	json_object *patch = json_object_new_object();
	json_object_object_add(patch, "name", json_object_new_string(name));
	json_object_object_add(patch, "content",
			       json_object_new_string_len(p->data ? p->data : "", (int)p->len));
	json_object_array_add(list, patch);
	return 0;
}

/* Adds an "mbox" part (a series in one file: git format-patch --stdout, b4,
 * a list archive) split by patchset_from_mbox(): its patches in order, the
 * cover letter dropped. A single patch or plain diff keeps the upload's
 * file name when that is a plain file name. Returns the number added. */
static int add_mbox_part(json_object *spec, const struct part *p, const char *kernel,
			 const struct job_limits *lim, struct sl_error *err)
{
	const char *def = http_patch_name_valid(p->filename) ? p->filename : "mbox.patch";
	_cleanup_json_ json_object *patches = NULL;
	int r = patchset_from_mbox(p->data ? p->data : "", p->len, def, &patches, err);
	if (r < 0) {
		if (!err->path[0])
			snprintf(err->path, sizeof(err->path), "%s", p->key);
		error_prefix(err, "Form part '%.64s'", p->key);
		return r;
	}
	json_object *list = NULL;
	char path[160];
	if ((r = part_target(spec, p->key, kernel, &list, path, err)) < 0)
		return r;
	size_t n = json_object_array_length(patches);
	for (size_t i = 0; i < n; i++) {
		json_object *patch = json_object_array_get_idx(patches, i), *content = NULL;
		if (json_object_object_get_ex(patch, "content", &content) &&
		    (size_t)json_object_get_string_len(content) > lim->max_patch_bytes)
			return error_set_path(
			    err, ERR_TOO_LARGE, p->key,
			    "Patch %zu of the mbox in form part '%.64s' is %d bytes, over the "
			    "limit of %zu.",
			    i + 1, p->key, json_object_get_string_len(content),
			    lim->max_patch_bytes);
		json_object_array_add(list, json_object_get(patch));
	}
	return (int)n;
}

/* Splits a form part's key into its kind ("patch", "mbox") and the kernel
 * after ':' (NULL for the shorthand). */
static int part_kind(const struct part *p, bool *ret_mbox, const char **ret_kernel,
		     struct sl_error *err)
{
	const char *k = p->key;
	if (strcmp(k, "patch") == 0 || strcmp(k, "patches") == 0 || strcmp(k, "mbox") == 0) {
		*ret_mbox = k[0] == 'm';
		*ret_kernel = NULL;
		return 0;
	}
	if (strncmp(k, "patch:", 6) == 0 || strncmp(k, "mbox:", 5) == 0) {
		*ret_mbox = k[0] == 'm';
		*ret_kernel = strchr(k, ':') + 1;
		return 0;
	}
	return error_set_path(err, ERR_INVALID, k,
			      "Form part '%.64s' is not 'job', 'patch', 'patch:KERNEL', 'mbox' or "
			      "'mbox:KERNEL'.",
			      k);
}

static int spec_from_multipart(struct http_server *srv, struct request *req, json_object **ret_spec,
			       struct sl_error *err)
{
	const struct job_limits *lim = &srv->opts->config->limits;
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
		bool mbox = false;
		const char *kernel = NULL;
		int r = part_kind(&req->parts[i], &mbox, &kernel, err);
		if (r < 0)
			return r;
		patches++;
		/* An mbox is bounded by the body limit; its patches one by one. */
		if (!mbox && req->parts[i].len > lim->max_patch_bytes)
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
	_cleanup_json_ json_object *spec = http_parse_json(job->data ? job->data : "", job->len,
							   "job part", HTTP_JSON_MAX_VALUES, err);
	if (!spec)
		return -EINVAL;
	if (!json_object_is_type(spec, json_type_object))
		return error_set_path(err, ERR_INVALID, "$", "The job must be a JSON object.");
	/* The patch parts first, in order, then the mboxes: --patch files and
	 * an --mbox append in the order `schedlab submit` documents. */
	size_t total = 0;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < req->n_parts; i++) {
			const struct part *p = &req->parts[i];
			bool mbox = false;
			const char *kernel = NULL;
			if (p == job || part_kind(p, &mbox, &kernel, err) < 0 ||
			    mbox != (pass == 1))
				continue;
			int r = mbox ? add_mbox_part(spec, p, kernel, lim, err)
				     : add_patch_part(spec, p, kernel, err);
			if (r < 0)
				return r;
			total += mbox ? (size_t)r : 1;
			if (total > (size_t)lim->max_patches)
				return error_set_path(err, ERR_INVALID, "patches",
						      "The form has more than %d patches (its "
						      "mbox parts split).",
						      lim->max_patches);
		}
	*ret_spec = TAKE_PTR(spec);
	return 0;
}

/* A 429: the error body and a Retry-After header. */
enum MHD_Result http_respond_quota(struct MHD_Connection *conn, struct request *req,
				   const struct sl_error *err, int retry_after_s)
{
	_cleanup_json_ json_object *o = error_to_json(err);
	const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
								 JSON_C_TO_STRING_NOSLASHESCAPE);
	struct MHD_Response *resp =
	    MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
	if (!resp)
		return MHD_NO;
	char retry[24];
	snprintf(retry, sizeof(retry), "%d", retry_after_s);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, retry);
	http_request_answered(req, MHD_HTTP_TOO_MANY_REQUESTS);
	enum MHD_Result r = MHD_queue_response(conn, MHD_HTTP_TOO_MANY_REQUESTS, resp);
	MHD_destroy_response(resp);
	return r;
}

/* The length of o's JSON text. The text is built in a wrapper that goes
 * with it: serialized on o itself, it would stay on o (json-c keeps it)
 * while the job is stored, a second copy of every patch. */
static long long json_text_size(json_object *o)
{
	json_object *w = json_object_new_array();
	if (!w)
		return 0;
	json_object_array_add(w, json_object_get(o));
	long long n = (long long)strlen(json_object_to_json_string_ext(w, JSON_C_TO_STRING_PLAIN));
	json_object_put(w);
	return n > 2 ? n - 2 : 0; /* without the wrapper's [ ] */
}

/* Admission (admission.h), then the job is stored and queued under the
 * admission lock. */
static enum MHD_Result admit_and_store(struct http_server *srv, struct MHD_Connection *conn,
				       struct request *req, const char *name, long priority,
				       json_object *spec, json_object *expanded, char id[])
{
	struct sl_error err = {0};
	const char *owner = req->token ? req->token->name : "";
	const struct admission_request a = {
	    .owner = owner,
	    .admin = req->admin,
	    .priority = (int)priority,
	    .budget_s = job_budget_s(expanded),
	    .bytes = json_text_size(spec),
	};
	const struct store_new_job nj = {
	    .name = name,
	    .owner = owner,
	    .priority = (int)priority,
	    .spec = spec,
	    .expanded = expanded,
	    .budget_s = a.budget_s,
	    .bytes = a.bytes,
	};
	int retry = 0;
	int r = admission_check(srv->opts->config, srv->opts->store, &a, &retry, &err);
	if (r >= 0 && (r = store_id_new(id, &err)) >= 0 &&
	    (r = store_job_submit(srv->opts->store, id, &nj, &err)) >= 0)
		r = queue_push(srv->opts->queue, id, (int)priority, false, &err);
	admission_done();
	if (r < 0)
		return err.kind == ERR_QUOTA ? http_respond_quota(conn, req, &err, retry)
					     : http_respond_error(conn, req, &err);
	return MHD_YES;
}

enum MHD_Result http_jobs_submit(struct http_server *srv, struct MHD_Connection *conn,
				 struct request *req)
{
	struct sl_error err = {0};
	long priority;
	if (query_int(conn, "priority", -100, 100, 0, &priority, &err) < 0)
		return http_respond_error(conn, req, &err);
	_cleanup_json_ json_object *spec = NULL, *expanded = NULL;
	if (req->multipart) {
		if (spec_from_multipart(srv, req, &spec, &err) < 0)
			return http_respond_error(conn, req, &err);
	} else {
		spec = http_parse_json(req->body ? req->body : "", req->body_len, "request body",
				       HTTP_JSON_MAX_VALUES, &err);
		if (!spec)
			return http_respond_error(conn, req, &err);
		if (!json_object_is_type(spec, json_type_object))
			return http_respond_errorf(conn, req, ERR_INVALID, "$",
						   "The job must be a JSON object.");
	}
	/* the upload is in spec now (bench/upload-memory.sh) */
	http_request_drop_body(req);
	if (check_spec_names(spec, &err) < 0)
		return http_respond_error(conn, req, &err);
	json_object *name_o = NULL;
	const char *name = "";
	if (json_object_object_get_ex(spec, "name", &name_o)) {
		if (!json_object_is_type(name_o, json_type_string) ||
		    json_object_get_string_len(name_o) > JOB_NAME_MAX)
			return http_respond_errorf(conn, req, ERR_INVALID, "$.name",
						   "The job's name must be a string of at most %d "
						   "characters.",
						   JOB_NAME_MAX);
		name = json_object_get_string(name_o);
	}
	http_expand_fn expand = srv->opts->expand ? srv->opts->expand : job_expand_json;
	if (expand(spec, JOB_ORIGIN_SERVICE, NULL, &srv->opts->config->limits, &expanded, &err) <
		0 ||
	    submit_checks(expanded, srv->opts->data_dir, &err) < 0)
		return http_respond_error(conn, req, &err);
	/* Finished jobs past their age go before a new one is stored. */
	const struct service_retention *ret = &srv->opts->config->retention;
	int purged = 0;
	if (store_purge_finished(srv->opts->store, ret->finished_max_age_s, ret->drop_results,
				 RETENTION_BATCH, &purged, &err) < 0)
		http_log(srv, "retention: %s", err.message);
	char id[STORE_ID_LEN + 1] = "";
	enum MHD_Result mr = admit_and_store(srv, conn, req, name, priority, spec, expanded, id);
	if (req->status)
		return mr;
	http_log(srv, "job %s submitted by '%s': name '%s', priority %ld", id,
		 req->token ? req->token->name : "", name, priority);
	_cleanup_json_ json_object *o = json_object_new_object();
	json_object_object_add(o, "id", json_object_new_string(id));
	json_object_object_add(o, "status", json_object_new_string("queued"));
	json_object_object_add(o, "links", job_links(id));
	/* Accepted, but told now when its repeats can never decide a gate. */
	_cleanup_job_ struct job *job = NULL;
	char warn[400];
	if (job_from_expanded(expanded, &job, &err) == 0 &&
	    compare_repeat_warning(job, warn, sizeof(warn))) {
		json_object *w = json_object_new_array();
		json_object_array_add(w, json_object_new_string(warn));
		json_object_object_add(o, "warnings", w);
	}
	return http_respond_json(conn, req, MHD_HTTP_ACCEPTED, o);
}

/* ---- GET /v1/jobs, /v1/jobs/{id}, DELETE ---- */

enum MHD_Result http_jobs_list(struct http_server *srv, struct MHD_Connection *conn,
			       struct request *req)
{
	struct sl_error err = {0};
	long limit, offset;
	const char *status = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "status");
	if (status && !store_status_valid(status))
		return http_respond_errorf(conn, req, ERR_INVALID, "status",
					   "Query parameter 'status' is '%.32s', not a job status.",
					   status);
	if (query_int(conn, "limit", 1, LIST_LIMIT_MAX, 50, &limit, &err) < 0 ||
	    query_int(conn, "offset", 0, INT_MAX, 0, &offset, &err) < 0)
		return http_respond_error(conn, req, &err);
	_cleanup_json_ json_object *jobs = NULL;
	int64_t total = 0;
	if (store_job_list(srv->opts->store, status, (int)limit, (int)offset, &jobs, &total, &err) <
	    0)
		return http_respond_error(conn, req, &err);
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
	return http_respond_json(conn, req, MHD_HTTP_OK, o);
}

enum MHD_Result http_jobs_get(struct http_server *srv, struct MHD_Connection *conn,
			      struct request *req)
{
	struct sl_error err = {0};
	_cleanup_json_ json_object *job = NULL;
	if (store_job_get(srv->opts->store, req->id, &job, &err) < 0)
		return http_respond_error(conn, req, &err);
	json_object_object_add(job, "links", job_links(req->id));
	return http_respond_json(conn, req, MHD_HTTP_OK, job);
}

enum MHD_Result http_jobs_cancel(struct http_server *srv, struct MHD_Connection *conn,
				 struct request *req)
{
	struct sl_error err = {0};
	enum queue_cancel_outcome out;
	if (admission_may_cancel(srv->opts->store, req->id, req->token ? req->token->name : "",
				 req->admin, &err) < 0 ||
	    queue_cancel(srv->opts->queue, req->id, &out, &err) < 0)
		return http_respond_error(conn, req, &err);
	_cleanup_json_ json_object *job = NULL;
	if (store_job_get(srv->opts->store, req->id, &job, &err) < 0)
		return http_respond_error(conn, req, &err);
	json_object_object_add(job, "cancel_requested",
			       json_object_new_boolean(out == QUEUE_CANCEL_REQUESTED));
	json_object_object_add(job, "links", job_links(req->id));
	return http_respond_json(conn, req,
				 out == QUEUE_CANCELLED ? MHD_HTTP_OK : MHD_HTTP_ACCEPTED, job);
}

/* Reads the result file of a job that is done; ERR_CONFLICT before. */
static int read_result(struct http_server *srv, const char *id, char **ret_text, size_t *ret_len,
		       struct sl_error *err)
{
	_cleanup_json_ json_object *job = NULL;
	int r = store_job_get(srv->opts->store, id, &job, err);
	if (r < 0)
		return r;
	const char *status = json_object_get_string(json_object_object_get(job, "status"));
	if (strcmp(status, "done") != 0)
		return error_set(err, ERR_CONFLICT, EBUSY,
				 "Job '%s' is %s; its result exists once it is done.", id, status);
	_cleanup_free_ char *dir = store_job_dir(srv->opts->store, id);
	_cleanup_free_ char *path = fs_path_join(dir, "result.json");
	/* Past retention the result lives in the row (store_retention.c). */
	if (!fs_exists(path)) {
		r = store_job_result_kept(srv->opts->store, id, ret_text, ret_len, err);
		if (r < 0 && err->kind == ERR_NOT_FOUND) {
			http_log(srv, "job %s: %s", id, err->message);
			return error_set(err, ERR_INTERNAL, EIO,
					 "The result of job '%s' cannot be read.", id);
		}
		return r;
	}
	/* A done job without a readable result is the service's fault (500),
	 * and the client is not told this host's path: the log is. */
	if (fs_read_file(path, RESULT_MAX_BYTES, ret_text, ret_len, err) < 0) {
		http_log(srv, "job %s: %s", id, err->message);
		return error_set(err, ERR_INTERNAL, EIO, "The result of job '%s' cannot be read.",
				 id);
	}
	return 0;
}

enum MHD_Result http_jobs_result(struct http_server *srv, struct MHD_Connection *conn,
				 struct request *req)
{
	struct sl_error err = {0};
	char *text = NULL;
	size_t len = 0;
	if (read_result(srv, req->id, &text, &len, &err) < 0)
		return http_respond_error(conn, req, &err);
	/* MHD frees the buffer with the response. */
	return http_respond_buf(conn, req, MHD_HTTP_OK, "application/json", text, len,
				MHD_RESPMEM_MUST_FREE);
}

enum MHD_Result http_jobs_report(struct http_server *srv, struct MHD_Connection *conn,
				 struct request *req)
{
	struct sl_error err = {0};
	http_report_fn report = srv->opts->report ? srv->opts->report : report_html;
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	if (read_result(srv, req->id, &text, &len, &err) < 0)
		return http_respond_error(conn, req, &err);
	/* The stored result is the service's own: a result the report cannot
	 * use is a 500, not the client's 400. */
	_cleanup_json_ json_object *result = http_parse_json(text, len, "stored result", 0, &err);
	char *html = NULL;
	if (!result || report(result, &html, &err) < 0) {
		http_log(srv, "job %s: report: %s", req->id, err.message);
		return http_respond_errorf(conn, req, ERR_INTERNAL, NULL,
					   "The report of job '%s' cannot be made from its result.",
					   req->id);
	}
	return http_respond_buf(conn, req, MHD_HTTP_OK, "text/html; charset=utf-8", html,
				strlen(html), MHD_RESPMEM_MUST_FREE);
}
