/* The streaming endpoints: GET /v1/jobs/{id}/log (every *.log under the
 * job directory, each tail-bounded, read as the client takes it) and GET /v1/jobs/{id}/events
 * (Server-Sent Events from the store's event log, resumed with
 * Last-Event-ID).
 *
 * An event stream holds no thread: when it has nothing to send, its content
 * reader suspends the connection (MHD_suspend_connection, so libmicrohttpd
 * neither polls it nor times it out), and the store's event hook
 * (http_streams_job_event, called as each event of the job is recorded)
 * or the ticker (a keepalive comment after SSE_KEEPALIVE_S idle, which also
 * finds clients that went away) resumes it. Lost wake-ups: the reader
 * clears s->pending before it reads the store and suspends only if no
 * event was hooked since, both under streams_lock; the hook runs under the
 * store's lock, so a read that starts after it sees the event. Each token
 * holds at most max_streams_per_token streams (429 beyond). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/time.h"

#include "server/http.h"
#include "server/http-internal.h"
#include "util/fs.h"
#include "util/parse.h"

#define LOG_FILE_TAIL (4u * 1024 * 1024)
#define LOG_TOTAL_MAX (32u * 1024 * 1024)
/* Log files one response lists at most (their names are all it holds in
 * memory besides one file descriptor). */
#define LOG_MAX_FILES	1024
#define LOG_BLOCK	(64u * 1024)
#define EVENTS_BATCH	64
#define SSE_KEEPALIVE_S 15

/* ---- GET /v1/jobs/{id}/log ----
 *
 * Streamed: the response holds the list of the job's *.log files and reads
 * the current one in blocks as the client takes them, so a slow or stalled
 * reader costs a file descriptor and a few KiB, not the whole text (up to
 * LOG_TOTAL_MAX). Each file is sent as "==> REL <==\n", its last
 * LOG_FILE_TAIL bytes as they were when the stream reached it, and "\n". */

struct log_stream {
	char *root;
	char **files; /* relative paths, in order */
	size_t n, next;
	int fd;	    /* the file being sent, or -1 */
	off_t left; /* its bytes still to send */
	char head[PATH_MAX + 64];
	size_t head_len, head_pos;
	size_t total; /* file bytes sent, at most LOG_TOTAL_MAX */
};

static void log_stream_free(void *cls)
{
	struct log_stream *ls = cls;
	if (!ls)
		return;
	if (ls->fd >= 0)
		close(ls->fd);
	for (size_t i = 0; i < ls->n; i++)
		free(ls->files[i]);
	free(ls->files);
	free(ls->root);
	free(ls);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Adds the *.log files under root/rel (depth <= 2, no symlinks followed, in
 * name order) to ls->files, at most LOG_MAX_FILES. */
static void log_collect(struct log_stream *ls, const char *rel, int depth)
{
	_cleanup_free_ char *dir = rel[0] ? fs_path_join(ls->root, rel) : strdup(ls->root);
	DIR *d = dir ? opendir(dir) : NULL;
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
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n && ls->n < LOG_MAX_FILES; i++) {
		if (!names[i])
			continue;
		_cleanup_free_ char *path = fs_path_join(dir, names[i]);
		char *relpath = rel[0] ? fs_path_join(rel, names[i]) : strdup(names[i]);
		struct stat st;
		size_t nl = strlen(names[i]);
		bool keep = false;
		if (relpath && lstat(path, &st) == 0) {
			/* kernels/ holds the job's inputs (materialize.c writes
			 * inline patches there by their submitted names): a
			 * patch named "evil.log" is not a log and must not fake
			 * a section. */
			if (S_ISDIR(st.st_mode) && depth < 2 &&
			    !(depth == 0 && strcmp(names[i], "kernels") == 0))
				log_collect(ls, relpath, depth + 1);
			else if (S_ISREG(st.st_mode) && nl >= 5 &&
				 strcmp(names[i] + nl - 4, ".log") == 0) {
				char **nf = realloc(ls->files, (ls->n + 1) * sizeof(*nf));
				if (nf) {
					ls->files = nf;
					ls->files[ls->n++] = relpath;
					keep = true;
				}
			}
		}
		if (!keep)
			free(relpath);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* Opens the next listed file that is still a regular file and sets its
 * header; false when none is left. */
static bool log_open_next(struct log_stream *ls)
{
	while (ls->next < ls->n) {
		const char *rel = ls->files[ls->next++];
		_cleanup_free_ char *path = fs_path_join(ls->root, rel);
		int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		struct stat st;
		if (fd < 0)
			continue;
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			close(fd);
			continue;
		}
		off_t start =
		    st.st_size > (off_t)LOG_FILE_TAIL ? st.st_size - (off_t)LOG_FILE_TAIL : 0;
		if (lseek(fd, start, SEEK_SET) < 0) {
			close(fd);
			continue;
		}
		ls->fd = fd;
		ls->left = st.st_size - start;
		int k = snprintf(ls->head, sizeof(ls->head), "==> %s <==%s\n", rel,
				 start ? " (tail: earlier bytes omitted)" : "");
		ls->head_len = k < 0			      ? 0
			       : (size_t)k < sizeof(ls->head) ? (size_t)k
							      : sizeof(ls->head) - 1;
		ls->head_pos = 0;
		return true;
	}
	return false;
}

static ssize_t log_read(void *cls, uint64_t pos, char *out, size_t max)
{
	(void)pos;
	struct log_stream *ls = cls;
	for (;;) {
		if (ls->head_pos < ls->head_len) {
			size_t k =
			    ls->head_len - ls->head_pos < max ? ls->head_len - ls->head_pos : max;
			memcpy(out, ls->head + ls->head_pos, k);
			ls->head_pos += k;
			return (ssize_t)k;
		}
		if (ls->fd >= 0) {
			size_t want = max;
			if ((off_t)want > ls->left)
				want = (size_t)ls->left;
			if (want > LOG_TOTAL_MAX - ls->total)
				want = LOG_TOTAL_MAX - ls->total;
			ssize_t k = want ? read(ls->fd, out, want) : 0;
			if (k < 0 && errno == EINTR)
				continue;
			if (k > 0) {
				ls->left -= k;
				ls->total += (size_t)k;
				return k;
			}
			/* the file's end (or it shrank, or the total is spent) */
			close(ls->fd);
			ls->fd = -1;
			ls->head[0] = '\n';
			ls->head_len = 1;
			ls->head_pos = 0;
			continue;
		}
		if (ls->total >= LOG_TOTAL_MAX || !log_open_next(ls))
			return MHD_CONTENT_READER_END_OF_STREAM;
	}
}

enum MHD_Result http_streams_log(struct http_server *srv, struct MHD_Connection *conn,
				 struct request *req)
{
	struct sl_error err = {0};
	_cleanup_json_ json_object *job = NULL;
	if (store_job_get(srv->opts->store, req->id, &job, &err) < 0)
		return http_respond_error(conn, req, &err);
	struct log_stream *ls = calloc(1, sizeof(*ls));
	if (!ls || !(ls->root = store_job_dir(srv->opts->store, req->id))) {
		free(ls);
		return http_respond_errorf(conn, req, ERR_INTERNAL, NULL, "Out of memory.");
	}
	ls->fd = -1;
	log_collect(ls, "", 0);
	struct MHD_Response *resp = MHD_create_response_from_callback(
	    MHD_SIZE_UNKNOWN, LOG_BLOCK, log_read, ls, log_stream_free);
	if (!resp) {
		log_stream_free(ls);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	http_request_answered(req, MHD_HTTP_OK);
	enum MHD_Result r = MHD_queue_response(conn, MHD_HTTP_OK, resp);
	MHD_destroy_response(resp);
	return r;
}

/* ---- GET /v1/jobs/{id}/events: Server-Sent Events ---- */

struct sse {
	struct sse *prev, *next; /* in srv->streams, under streams_lock */
	struct http_server *srv;
	struct MHD_Connection *conn;
	char id[STORE_ID_LEN + 1];
	int64_t last_id;
	char *buf;
	size_t len, pos;
	bool done;
	size_t token_slot;
	/* Under streams_lock: */
	bool suspended; /* MHD_suspend_connection was called, not yet resumed */
	bool pending;	/* an event of the job was recorded since the last read */
	bool keepalive; /* the ticker asks for a keepalive comment */
	double last_sent;
};

int http_streams_init(struct http_server *srv, struct sl_error *err)
{
	pthread_mutex_init(&srv->streams_lock, NULL);
	srv->streams_per_token =
	    calloc(srv->opts->config->n_tokens + 1, sizeof(*srv->streams_per_token));
	if (!srv->streams_per_token)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	store_set_event_hook(srv->opts->store, http_streams_job_event, srv);
	return 0;
}

void http_streams_fini(struct http_server *srv)
{
	if (!srv->streams_per_token)
		return;
	store_set_event_hook(srv->opts->store, NULL, NULL);
	free(srv->streams_per_token);
	srv->streams_per_token = NULL;
	pthread_mutex_destroy(&srv->streams_lock);
}

/* Caller holds streams_lock. */
static void sse_resume_locked(struct sse *s)
{
	if (!s->suspended)
		return;
	s->suspended = false;
	MHD_resume_connection(s->conn);
}

void http_streams_job_event(void *cls, const char *job_id)
{
	struct http_server *srv = cls;
	pthread_mutex_lock(&srv->streams_lock);
	for (struct sse *s = srv->streams; s; s = s->next) {
		if (strcmp(s->id, job_id) != 0)
			continue;
		s->pending = true;
		sse_resume_locked(s);
	}
	pthread_mutex_unlock(&srv->streams_lock);
}

void http_streams_tick(struct http_server *srv)
{
	double now = time_monotonic_s();
	pthread_mutex_lock(&srv->streams_lock);
	for (struct sse *s = srv->streams; s; s = s->next) {
		if (s->suspended && now - s->last_sent >= SSE_KEEPALIVE_S) {
			s->keepalive = true;
			sse_resume_locked(s);
		}
	}
	pthread_mutex_unlock(&srv->streams_lock);
}

void http_streams_wake_all(struct http_server *srv)
{
	if (!srv->streams_per_token)
		return;
	pthread_mutex_lock(&srv->streams_lock);
	for (struct sse *s = srv->streams; s; s = s->next)
		sse_resume_locked(s);
	pthread_mutex_unlock(&srv->streams_lock);
}

size_t http_streams_count(struct http_server *srv)
{
	size_t n = 0;
	pthread_mutex_lock(&srv->streams_lock);
	for (struct sse *s = srv->streams; s; s = s->next)
		n++;
	pthread_mutex_unlock(&srv->streams_lock);
	return n;
}

/* The response's free callback: the connection is done with the stream. */
static void sse_free(void *cls)
{
	struct sse *s = cls;
	struct http_server *srv = s->srv;
	pthread_mutex_lock(&srv->streams_lock);
	if (s->prev)
		s->prev->next = s->next;
	else
		srv->streams = s->next;
	if (s->next)
		s->next->prev = s->prev;
	srv->streams_per_token[s->token_slot]--;
	pthread_mutex_unlock(&srv->streams_lock);
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

/* Refills s->buf; 1 when there is something to send, 0 when the reader
 * suspended the connection (or must be called again), or an
 * MHD_CONTENT_READER_END_* code. Never blocks. */
static ssize_t sse_next(struct sse *s)
{
	struct http_server *srv = s->srv;
	if (s->done || atomic_load(&srv->stopping))
		return MHD_CONTENT_READER_END_OF_STREAM;
	pthread_mutex_lock(&srv->streams_lock);
	s->pending = false;
	bool keepalive = s->keepalive;
	s->keepalive = false;
	pthread_mutex_unlock(&srv->streams_lock);
	int n = sse_fill(s);
	if (n < 0)
		return MHD_CONTENT_READER_END_WITH_ERROR;
	if (n > 0)
		return 1;
	if (sse_job_final(s)) {
		/* The final status event is written with the status, in one
		 * locked step: one more look finds it. */
		n = sse_fill(s);
		s->done = true;
		return n > 0 ? 1 : MHD_CONTENT_READER_END_OF_STREAM;
	}
	if (keepalive) {
		/* A comment line: finds clients that went away. */
		free(s->buf);
		s->buf = strdup(": keepalive\n\n");
		s->len = s->buf ? strlen(s->buf) : 0;
		s->pos = 0;
		return s->len ? 1 : MHD_CONTENT_READER_END_WITH_ERROR;
	}
	pthread_mutex_lock(&srv->streams_lock);
	if (!s->pending && !atomic_load(&srv->stopping)) {
		s->suspended = true;
		MHD_suspend_connection(s->conn);
	}
	pthread_mutex_unlock(&srv->streams_lock);
	return 0;
}

static ssize_t sse_read(void *cls, uint64_t pos, char *out, size_t max)
{
	(void)pos;
	struct sse *s = cls;
	if (s->pos >= s->len) {
		ssize_t r = sse_next(s);
		if (r <= 0)
			return r;
	}
	size_t k = s->len - s->pos < max ? s->len - s->pos : max;
	memcpy(out, s->buf + s->pos, k);
	s->pos += k;
	s->last_sent = time_monotonic_s();
	return (ssize_t)k;
}

/* 429 with Retry-After: the token holds its share of streams. */
static enum MHD_Result respond_too_many_streams(struct MHD_Connection *conn, struct request *req,
						unsigned limit)
{
	char text[400];
	int n = snprintf(text, sizeof(text),
			 "{\"error\":{\"code\":\"too_many_requests\",\"message\":\"This token "
			 "holds %u open event streams, the limit (max_streams_per_token); close "
			 "one or retry later.\",\"path\":\"max_streams_per_token\"}}",
			 limit);
	struct MHD_Response *resp =
	    MHD_create_response_from_buffer((size_t)n, text, MHD_RESPMEM_MUST_COPY);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "15");
	http_request_answered(req, MHD_HTTP_TOO_MANY_REQUESTS);
	enum MHD_Result r = MHD_queue_response(conn, MHD_HTTP_TOO_MANY_REQUESTS, resp);
	MHD_destroy_response(resp);
	return r;
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
	s->conn = conn;
	snprintf(s->id, sizeof(s->id), "%s", req->id);
	s->last_id = last;
	s->last_sent = time_monotonic_s();
	s->token_slot =
	    req->token_index >= 0 ? (size_t)req->token_index : srv->opts->config->n_tokens;
	unsigned limit = (unsigned)srv->opts->config->max_streams_per_token;
	pthread_mutex_lock(&srv->streams_lock);
	if (srv->streams_per_token[s->token_slot] >= limit) {
		pthread_mutex_unlock(&srv->streams_lock);
		free(s);
		atomic_fetch_add(&srv->streams_refused, 1);
		return respond_too_many_streams(conn, req, limit);
	}
	srv->streams_per_token[s->token_slot]++;
	s->next = srv->streams;
	if (srv->streams)
		srv->streams->prev = s;
	srv->streams = s;
	pthread_mutex_unlock(&srv->streams_lock);
	/* From here on sse_free unlinks s, also when the response fails. */
	struct MHD_Response *resp =
	    MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, sse_read, s, sse_free);
	if (!resp) {
		sse_free(s);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	/* Reverse proxies (nginx) pass the stream through unbuffered. */
	MHD_add_response_header(resp, "X-Accel-Buffering", "no");
	http_request_answered(req, MHD_HTTP_OK);
	enum MHD_Result r = MHD_queue_response(conn, MHD_HTTP_OK, resp);
	MHD_destroy_response(resp);
	return r;
}
