/* The REST API client; see httpclient.h. */
#include <curl/curl.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli/httpclient.h"
#include "util/parse.h"

struct httpclient {
	char *base;
	char *auth_header;
	char *cacert; /* NULL: the system's CA store */
	long connect_s, stall_s;
	const volatile sig_atomic_t *interrupt;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

int httpclient_new(const char *base_url, const char *token, struct httpclient **ret_client,
		   struct sl_error *err)
{
	if (strncmp(base_url, "http://", 7) != 0 && strncmp(base_url, "https://", 8) != 0)
		return error_set(err, ERR_INVALID, EINVAL,
				 "Server URL '%.200s' does not start with http:// or https://.",
				 base_url);
	for (const char *p = token; p && *p; p++)
		if ((unsigned char)*p < 0x21 || *p == 0x7f)
			return error_set(err, ERR_INVALID, EINVAL,
					 "The token contains spaces or control characters.");
	pthread_once(&curl_once, curl_init_once);
	struct httpclient *c = calloc(1, sizeof(*c));
	if (!c)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	c->base = strdup(base_url);
	size_t n = strlen(c->base);
	while (n > 0 && c->base[n - 1] == '/')
		c->base[--n] = '\0';
	if (token && *token && asprintf(&c->auth_header, "Authorization: Bearer %s", token) < 0)
		c->auth_header = NULL;
	c->connect_s = HTTPCLIENT_CONNECT_TIMEOUT_S;
	c->stall_s = HTTPCLIENT_STALL_TIMEOUT_S;
	*ret_client = c;
	return 0;
}

void httpclient_set_timeouts(struct httpclient *c, long connect_s, long stall_s)
{
	if (connect_s > 0)
		c->connect_s = connect_s;
	if (stall_s > 0)
		c->stall_s = stall_s;
}

int httpclient_set_cacert(struct httpclient *c, const char *path, struct sl_error *err)
{
	free(c->cacert);
	c->cacert = NULL;
	if (!path || !*path)
		return 0;
	if (access(path, R_OK) < 0)
		return error_set(err, ERR_INVALID, errno,
				 "Cannot read CA certificate file '%.200s': %s.", path,
				 strerror(errno));
	c->cacert = strdup(path);
	return c->cacert ? 0 : error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
}

void httpclient_set_interrupt(struct httpclient *c, const volatile sig_atomic_t *flag)
{
	c->interrupt = flag;
}

static bool interrupted(const struct httpclient *c)
{
	return c->interrupt && *c->interrupt;
}

/* libcurl calls this about once a second even when nothing moves. */
static int xferinfo(void *userdata, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		    curl_off_t ulnow)
{
	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	return interrupted(userdata) ? 1 : 0;
}

/* The options every transfer shares: timeouts, protocols, interruption. */
static void common_opts(struct httpclient *c, CURL *h, long stall_s)
{
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, c->connect_s);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, stall_s);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
	if (c->cacert)
		curl_easy_setopt(h, CURLOPT_CAINFO, c->cacert);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, xferinfo);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, c);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
}

static int interrupted_error(struct sl_error *err)
{
	return error_set(err, ERR_CANCELLED, EINTR, "Interrupted.");
}

void httpclient_free(struct httpclient *c)
{
	if (!c)
		return;
	free(c->base);
	free(c->cacert);
	if (c->auth_header)
		explicit_bzero(c->auth_header, strlen(c->auth_header));
	free(c->auth_header);
	free(c);
}

void httpclient_response_clear(struct httpclient_response *resp)
{
	free(resp->body);
	memset(resp, 0, sizeof(*resp));
}

struct sink {
	char *buf;
	size_t len, cap;
	bool too_large;
};

static size_t sink_write(char *data, size_t size, size_t nmemb, void *userdata)
{
	struct sink *s = userdata;
	size_t n = size * nmemb;
	if (s->len + n + 1 > HTTPCLIENT_BODY_MAX) {
		s->too_large = true;
		return 0;
	}
	if (s->len + n + 1 > s->cap) {
		size_t cap = s->cap ? s->cap : 16384;
		while (cap < s->len + n + 1)
			cap *= 2;
		char *b = realloc(s->buf, cap);
		if (!b)
			return 0;
		s->buf = b;
		s->cap = cap;
	}
	memcpy(s->buf + s->len, data, n);
	s->len += n;
	s->buf[s->len] = '\0';
	return n;
}

static void curl_cleanupp(CURL **h)
{
	if (*h)
		curl_easy_cleanup(*h);
}
static void slist_freep(struct curl_slist **l)
{
	if (*l)
		curl_slist_free_all(*l);
}

static char *make_url(struct httpclient *c, const char *path)
{
	char *url = NULL;
	if (asprintf(&url, "%s%s", c->base, path) < 0)
		return NULL;
	return url;
}

/* Performs h, filling resp from the sink. */
static int perform(struct httpclient *c, CURL *h, const char *url, struct sink *s,
		   struct httpclient_response *resp, struct sl_error *err)
{
	char ebuf[CURL_ERROR_SIZE] = "";
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, ebuf);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink_write);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, s);
	common_opts(c, h, c->stall_s);
	if (interrupted(c))
		return interrupted_error(err);
	CURLcode rc = curl_easy_perform(h);
	if (rc != CURLE_OK) {
		free(s->buf);
		if (rc == CURLE_ABORTED_BY_CALLBACK)
			return interrupted_error(err);
		if (rc == CURLE_OPERATION_TIMEDOUT)
			return error_set(err, ERR_INFRA, ETIMEDOUT,
					 "Request to '%.200s' timed out: %s (connect timeout "
					 "%ld s, stall timeout %ld s).",
					 url, ebuf[0] ? ebuf : curl_easy_strerror(rc), c->connect_s,
					 c->stall_s);
		if (s->too_large)
			return error_set(err, ERR_TOO_LARGE, EFBIG,
					 "The response from '%.200s' is larger than %u bytes.", url,
					 HTTPCLIENT_BODY_MAX);
		return error_set(err, ERR_INFRA, EIO, "Request to '%.200s' failed: %s.", url,
				 ebuf[0] ? ebuf : curl_easy_strerror(rc));
	}
	memset(resp, 0, sizeof(*resp));
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp->status);
	char *ct = NULL;
	curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct);
	snprintf(resp->content_type, sizeof(resp->content_type), "%s", ct ? ct : "");
	resp->body = s->buf ? s->buf : strdup("");
	resp->len = s->len;
	return 0;
}

int httpclient_request(struct httpclient *c, const char *method, const char *path,
		       const char *content_type, const void *body, size_t len,
		       struct httpclient_response *resp, struct sl_error *err)
{
	_cleanup_(curl_cleanupp) CURL *h = curl_easy_init();
	_cleanup_(slist_freep) struct curl_slist *hdr = NULL;
	_cleanup_free_ char *url = make_url(c, path);
	_cleanup_free_ char *ct = NULL;
	if (!h || !url)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	if (strcmp(method, "HEAD") == 0)
		curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	if (c->auth_header)
		hdr = curl_slist_append(hdr, c->auth_header);
	if (body) {
		if (asprintf(&ct, "Content-Type: %s", content_type ? content_type : "") < 0)
			return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		hdr = curl_slist_append(hdr, ct);
		hdr = curl_slist_append(hdr, "Expect:");
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	}
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	struct sink s = {0};
	return perform(c, h, url, &s, resp, err);
}

static void mime_freep(curl_mime **m)
{
	if (*m)
		curl_mime_free(*m);
}

int httpclient_post_multipart(struct httpclient *c, const char *path, const char *job_json,
			      char *const *patches, size_t n_patches, const char *mbox,
			      struct httpclient_response *resp, struct sl_error *err)
{
	_cleanup_(curl_cleanupp) CURL *h = curl_easy_init();
	_cleanup_(slist_freep) struct curl_slist *hdr = NULL;
	_cleanup_free_ char *url = make_url(c, path);
	if (!h || !url)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	_cleanup_(mime_freep) curl_mime *mime = curl_mime_init(h);
	curl_mimepart *part = curl_mime_addpart(mime);
	curl_mime_name(part, "job");
	curl_mime_data(part, job_json, CURL_ZERO_TERMINATED);
	curl_mime_type(part, "application/json");
	for (size_t i = 0; i < n_patches; i++) {
		part = curl_mime_addpart(mime);
		curl_mime_name(part, "patch");
		if (curl_mime_filedata(part, patches[i]) != CURLE_OK)
			return error_set(err, ERR_INVALID, ENOENT, "Cannot read patch '%.200s'.",
					 patches[i]);
		curl_mime_type(part, "text/x-diff");
	}
	if (mbox) {
		part = curl_mime_addpart(mime);
		curl_mime_name(part, "mbox");
		if (curl_mime_filedata(part, mbox) != CURLE_OK)
			return error_set(err, ERR_INVALID, ENOENT, "Cannot read mbox '%.200s'.",
					 mbox);
		curl_mime_type(part, "application/mbox");
	}
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_MIMEPOST, mime);
	if (c->auth_header)
		hdr = curl_slist_append(hdr, c->auth_header);
	hdr = curl_slist_append(hdr, "Expect:");
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	struct sink s = {0};
	return perform(c, h, url, &s, resp, err);
}

/* ---- Server-Sent Events ---- */

struct sse_reader {
	char line[65536];
	size_t line_len;
	bool line_overflow;
	char *data;
	size_t data_len;
	char type[64];
	int64_t id;
	int (*on_event)(void *, int64_t, const char *, const char *);
	void *userdata;
	bool stop;
	long status;
	CURL *h;
};

static void sse_dispatch(struct sse_reader *r)
{
	if (r->data && !r->stop &&
	    r->on_event(r->userdata, r->id, r->type[0] ? r->type : "message", r->data))
		r->stop = true;
	free(r->data);
	r->data = NULL;
	r->data_len = 0;
	r->type[0] = '\0';
}

static void sse_line(struct sse_reader *r, const char *line)
{
	if (!line[0]) {
		sse_dispatch(r);
		return;
	}
	if (line[0] == ':')
		return;
	const char *colon = strchr(line, ':');
	size_t fl = colon ? (size_t)(colon - line) : strlen(line);
	const char *val = colon ? colon + 1 : "";
	if (*val == ' ')
		val++;
	if (fl == 4 && strncmp(line, "data", 4) == 0) {
		size_t vl = strlen(val);
		if (r->data_len + vl + 2 > 16u * 1024 * 1024)
			return;
		char *d = realloc(r->data, r->data_len + vl + 2);
		if (!d)
			return;
		r->data = d;
		if (r->data_len)
			r->data[r->data_len++] = '\n';
		memcpy(r->data + r->data_len, val, vl + 1);
		r->data_len += vl;
	} else if (fl == 5 && strncmp(line, "event", 5) == 0)
		snprintf(r->type, sizeof(r->type), "%s", val);
	else if (fl == 2 && strncmp(line, "id", 2) == 0) {
		long id = 0;
		/* An id that is not a number keeps the last good one for Last-Event-ID. */
		if (parse_int(val, 0, LONG_MAX, &id) == 0)
			r->id = id;
	}
}

static size_t sse_write(char *data, size_t size, size_t nmemb, void *userdata)
{
	struct sse_reader *r = userdata;
	size_t n = size * nmemb;
	if (!r->status)
		curl_easy_getinfo(r->h, CURLINFO_RESPONSE_CODE, &r->status);
	for (size_t i = 0; i < n && !r->stop; i++) {
		char ch = data[i];
		if (ch == '\r')
			continue;
		if (ch == '\n') {
			r->line[r->line_len] = '\0';
			if (!r->line_overflow)
				sse_line(r, r->line);
			r->line_len = 0;
			r->line_overflow = false;
			continue;
		}
		if (r->line_len + 1 >= sizeof(r->line)) {
			r->line_overflow = true;
			continue;
		}
		r->line[r->line_len++] = ch;
	}
	return r->stop ? 0 : n;
}

int httpclient_events(struct httpclient *c, const char *path, int64_t last_id,
		      int (*on_event)(void *userdata, int64_t id, const char *type,
				      const char *data),
		      void *userdata, long *ret_status, struct sl_error *err)
{
	_cleanup_(curl_cleanupp) CURL *h = curl_easy_init();
	_cleanup_(slist_freep) struct curl_slist *hdr = NULL;
	_cleanup_free_ char *url = make_url(c, path);
	struct sse_reader *r = calloc(1, sizeof(*r));
	if (!h || !url || !r) {
		free(r);
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	}
	r->on_event = on_event;
	r->userdata = userdata;
	r->h = h;
	char idh[64];
	if (last_id > 0) {
		snprintf(idh, sizeof(idh), "Last-Event-ID: %lld", (long long)last_id);
		hdr = curl_slist_append(hdr, idh);
	}
	if (c->auth_header)
		hdr = curl_slist_append(hdr, c->auth_header);
	hdr = curl_slist_append(hdr, "Accept: text/event-stream");
	char ebuf[CURL_ERROR_SIZE] = "";
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sse_write);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, ebuf);
	/* The server sends a keepalive every 15 s: a shorter stall limit would
	 * cut a healthy stream. */
	common_opts(c, h,
		    c->stall_s > HTTPCLIENT_EVENTS_STALL_MIN_S ? c->stall_s
							       : HTTPCLIENT_EVENTS_STALL_MIN_S);
	if (interrupted(c)) {
		free(r);
		return interrupted_error(err);
	}
	CURLcode rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
	if (ret_status)
		*ret_status = r->status;
	bool stopped = r->stop;
	free(r->data);
	free(r);
	if (rc == CURLE_ABORTED_BY_CALLBACK)
		return interrupted_error(err);
	if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && stopped))
		return error_set(err, ERR_INFRA, EIO, "Event stream '%.200s' failed: %s.", url,
				 ebuf[0] ? ebuf : curl_easy_strerror(rc));
	return 0;
}
