/* The streaming endpoints: GET /v1/jobs/{id}/log (every *.log under the
 * job directory, each tail-bounded) and GET /v1/jobs/{id}/events
 * (Server-Sent Events from the store's event log, resumed with
 * Last-Event-ID; one blocking reader per connection thread). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "server/http.h"
#include "server/http-internal.h"
#include "util/fs.h"
#include "util/parse.h"

#define LOG_FILE_TAIL	(4u * 1024 * 1024)
#define LOG_TOTAL_MAX	(32u * 1024 * 1024)
#define EVENTS_BATCH	64
#define SSE_KEEPALIVE_S 15

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
		/* kernels/ holds the job's inputs (materialize.c writes inline
		 * patches there by their submitted names): a patch named
		 * "evil.log" is not a log and must not fake a section. */
		if (S_ISDIR(st.st_mode) && depth == 0 && strcmp(names[i], "kernels") == 0)
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

enum MHD_Result http_streams_log(struct http_server *srv, struct MHD_Connection *conn,
				 struct request *req)
{
	struct sl_error err = {0};
	_cleanup_json_ json_object *job = NULL;
	if (store_job_get(srv->opts->store, req->id, &job, &err) < 0)
		return http_respond_error(conn, req, &err);
	_cleanup_free_ char *dir = store_job_dir(srv->opts->store, req->id);
	char *text = NULL;
	size_t len = 0, total = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return http_respond_errorf(conn, req, ERR_INTERNAL, NULL, "Out of memory.");
	append_logs(f, dir, "", 0, &total);
	fclose(f);
	return http_respond_buf(conn, req, MHD_HTTP_OK, "text/plain; charset=utf-8", text, len,
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
	if (store_events_after(s->srv->opts->store, s->id, s->last_id, EVENTS_BATCH, &events,
			       NULL) < 0)
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
	if (store_job_get(s->srv->opts->store, s->id, &job, NULL) < 0)
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

enum MHD_Result http_streams_events(struct http_server *srv, struct MHD_Connection *conn,
				    struct request *req)
{
	struct sl_error err = {0};
	_cleanup_json_ json_object *job = NULL;
	if (store_job_get(srv->opts->store, req->id, &job, &err) < 0)
		return http_respond_error(conn, req, &err);
	int64_t last = 0;
	const char *h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Last-Event-ID");
	if (h) {
		long v;
		if (parse_int(h, 0, LONG_MAX, &v) < 0)
			return http_respond_errorf(conn, req, ERR_INVALID, "Last-Event-ID",
						   "Header 'Last-Event-ID' must be a non-negative "
						   "integer.");
		last = v;
	}
	struct sse *s = calloc(1, sizeof(*s));
	if (!s)
		return http_respond_errorf(conn, req, ERR_INTERNAL, NULL, "Out of memory.");
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
