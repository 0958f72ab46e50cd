/* libFuzzer target: a multipart/form-data POST /v1/jobs body, through the
 * service's own HTTP server (service/server/http.c: libmicrohttpd's post
 * processor and schedlab's part handling, http_jobs.c: the job, patch and
 * mbox parts and their limits). The server runs in this process on
 * 127.0.0.1 with a fresh store; the input is the body (boundary "XyZ"),
 * sent with its Content-Length on a new connection. The job expansion is a
 * fake that refuses every job once the form was read, so nothing is queued.
 * Checks, for any body: the server answers (no crash, leak or hang); the
 * status is 400, 413 or 415, never 5xx or a success; the answer is a JSON
 * error with a message; the server still answers the next request. */
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "server/config.h"
#include "server/http.h"
#include "server/queue.h"
#include "server/store.h"
#include "util/fs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NO_JOB "The fuzz target runs no job."

static int refuse_expand(json_object *spec, enum job_origin origin, const char *base_dir,
			 const struct job_limits *limits, json_object **ret, struct sl_error *err)
{
	(void)spec;
	(void)origin;
	(void)base_dir;
	(void)limits;
	(void)ret;
	return error_set(err, ERR_INVALID, EINVAL, NO_JOB);
}

static int no_runner(const struct runner_config *cfg, json_object *spec, const char *job_dir,
		     const struct runner_hooks *h, json_object **ret_result, struct sl_error *err)
{
	(void)cfg;
	(void)spec;
	(void)job_dir;
	(void)h;
	(void)ret_result;
	return error_set(err, ERR_INTERNAL, EINVAL, "no runner");
}

static void quiet(const char *line)
{
	(void)line;
}

static uint16_t port;
static char dir[] = "/tmp/fuzz_multipart.XXXXXX";

/* The store's directory goes when the process exits (libFuzzer ends with
 * exit(), the server's threads with it). */
static void remove_dir(void)
{
	fs_rm_rf(dir, NULL);
}

/* Starts the server once; it lives as long as the process. */
static void server_start(void)
{
	struct sl_error err = {0};
	struct service_config *cfg = NULL;
	struct store *store = NULL;
	struct queue *queue = NULL;
	struct http_server *srv = NULL;
	assert(mkdtemp(dir));
	atexit(remove_dir);
	assert(service_config_new(&cfg, &err) == 0);
	json_object *c =
	    json_tokener_parse("{\"listen\":\"127.0.0.1:0\",\"limits\":{\"max_body_bytes\":131072,"
			       "\"max_patches\":8,\"max_patch_bytes\":16384}}");
	assert(service_config_apply(cfg, c, &err) == 0);
	json_object_put(c);
	assert(store_open(dir, &store, &err) == 0);
	struct queue_opts qo = {.store = store, .runner = no_runner, .workers = 1, .log = quiet};
	assert(queue_new(&qo, &queue, &err) == 0);
	struct http_server_opts ho = {
	    .config = cfg, .store = store, .queue = queue, .expand = refuse_expand, .log = quiet};
	if (http_server_new(&ho, &srv, &err) < 0) {
		fprintf(stderr, "fuzz_multipart: %s\n", err.message);
		abort();
	}
	port = http_server_port(srv);
}

/* libFuzzer's SIGALRM (its timeout watch, every few seconds) is installed
 * without SA_RESTART, so any blocking call here can end with EINTR, a
 * connect() that waits on the accept queue of a server the sanitizers slow
 * down included (a slow 2-core machine aborted here once). An interrupted
 * connect goes
 * on in the kernel; its outcome is read with poll() and SO_ERROR. Local
 * ports used up (EADDRNOTAVAIL) are waited out. Returns 0 or -1 (errno). */
static int connect_loopback(int fd)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (int i = 0; i < 200; i++) {
		if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
			return 0;
		if (errno == EADDRNOTAVAIL) {
			usleep(10000);
			continue;
		}
		if (errno != EINTR && errno != EINPROGRESS && errno != EALREADY)
			return -1;
		struct pollfd p = {.fd = fd, .events = POLLOUT};
		int r;
		do
			r = poll(&p, 1, 10000);
		while (r < 0 && errno == EINTR);
		if (r == 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		int soerr = 0;
		socklen_t sl = sizeof(soerr);
		if (r < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
			return -1;
		if (soerr == 0)
			return 0;
		errno = soerr;
		return -1;
	}
	return -1;
}

/* Writes what the server takes: it may answer and close before it read
 * the whole body, which ends the sending, not the test. */
static void send_all(int fd, const uint8_t *buf, size_t len)
{
	for (size_t at = 0; at < len;) {
		ssize_t w = send(fd, buf + at, len - at, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		at += (size_t)w;
	}
}

static int last_connect_errno;

/* Sends one request, reads the whole answer into resp (NUL-terminated).
 * Returns the HTTP status, or 0 when there was none: the connect failed
 * (its errno kept in last_connect_errno) or the connection ended first. */
static int post(const char *method, const char *path, const char *ctype, const uint8_t *body,
		size_t len, char *resp, size_t cap)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert(fd >= 0);
	struct timeval tv = {.tv_sec = 10};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	/* Close with a reset: neither side keeps the connection in TIME_WAIT,
	 * which at a thousand connections a second would use up the local
	 * ports. */
	struct linger lg = {.l_onoff = 1, .l_linger = 0};
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	if (connect_loopback(fd) < 0) {
		last_connect_errno = errno;
		close(fd);
		return 0;
	}
	char head[256];
	int n = snprintf(head, sizeof(head),
			 "%s %s HTTP/1.1\r\nHost: fuzz\r\nContent-Type: %s\r\n"
			 "Content-Length: %zu\r\nConnection: close\r\n\r\n",
			 method, path, ctype, len);
	send_all(fd, (const uint8_t *)head, (size_t)n);
	/* the server may answer (and close) before it read the whole body */
	send_all(fd, body, len);
	size_t got = 0;
	for (;;) {
		ssize_t r = read(fd, resp + got, cap - 1 - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
		if (got == cap - 1)
			break;
	}
	close(fd);
	resp[got] = '\0';
	int status = 0;
	if (sscanf(resp, "HTTP/1.%*d %d", &status) != 1)
		return 0;
	return status;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char resp[1 << 16];
	if (!port)
		server_start();
	if (size > 128 * 1024)
		return 0;
	int st = post("POST", "/v1/jobs", "multipart/form-data; boundary=XyZ", data, size, resp,
		      sizeof(resp));
	if (st == 0) {
		/* The connection ended without an answer: the server may have
		 * answered early and closed with body bytes unread (the kernel
		 * then resets, dropping the answer), or refused the connection
		 * over the per-address limit while earlier ones were still
		 * being torn down, or its accept queue was full. What must
		 * hold is that it still serves, within 5 s. */
		last_connect_errno = 0;
		for (int i = 0; i < 100 && st != 200; i++) {
			if (i)
				usleep(50000);
			st = post("GET", "/v1/health", "text/plain", NULL, 0, resp, sizeof(resp));
		}
		if (st != 200) {
			fprintf(stderr, "fuzz_multipart: the server no longer answers (%s)\n",
				last_connect_errno ? strerror(last_connect_errno) : "no status");
			abort();
		}
		return 0;
	}
	if (st != 400 && st != 413 && st != 415) {
		fprintf(stderr, "fuzz_multipart: status %d\n%s\n", st, resp);
		abort();
	}
	const char *body = strstr(resp, "\r\n\r\n");
	assert(body);
	json_object *o = json_tokener_parse(body + 4);
	json_object *e = NULL, *m = NULL;
	if (!json_object_object_get_ex(o, "error", &e) ||
	    !json_object_object_get_ex(e, "message", &m) || json_object_get_string_len(m) == 0) {
		fprintf(stderr, "fuzz_multipart: status %d without an error message\n%s\n", st,
			resp);
		abort();
	}
	json_object_put(o);
	return 0;
}
