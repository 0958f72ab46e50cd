/* The client side of the REST API (libcurl): plain requests, multipart job
 * submission with patch files, and a Server-Sent Events reader. Used by
 * `schedlab submit` and by the HTTP unit tests. Response bodies are capped
 * (HTTPCLIENT_BODY_MAX); the server is not trusted to bound them.
 *
 * Timeouts (docs/ci.md): connecting gives up after connect_s seconds, and a
 * request during which no byte moves for stall_s seconds fails (libcurl's
 * low-speed limit, 1 byte/s), so a service that accepts and never answers
 * cannot hang a CI job. An event stream allows at least
 * HTTPCLIENT_EVENTS_STALL_MIN seconds, since the service sends a keepalive
 * every 15 s. */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "util/error.h"

#define HTTPCLIENT_BODY_MAX	      (128u * 1024 * 1024)
#define HTTPCLIENT_CONNECT_TIMEOUT_S  10
#define HTTPCLIENT_STALL_TIMEOUT_S    60
#define HTTPCLIENT_EVENTS_STALL_MIN_S 20

struct httpclient;

struct httpclient_response {
	long status;
	char *body; /* NUL-terminated, malloc'd */
	size_t len;
	char content_type[128];
};

/* base_url: "http://HOST:PORT" (http or https, no trailing path needed).
 * token (may be NULL) is sent as "Authorization: Bearer TOKEN"; it must not
 * contain control characters. */
int httpclient_new(const char *base_url, const char *token, struct httpclient **ret_client,
		   struct sl_error *err);
void httpclient_free(struct httpclient *c);
/* Sets the connect and stall timeouts in seconds (> 0; defaults
 * HTTPCLIENT_CONNECT_TIMEOUT_S and HTTPCLIENT_STALL_TIMEOUT_S). */
void httpclient_set_timeouts(struct httpclient *c, long connect_s, long stall_s);
/* Trusts the PEM CA certificates in the file at path (copied; NULL: the
 * system's store) for https:// servers, e.g. a service's self-signed
 * certificate. The peer and its host name are always verified. */
int httpclient_set_cacert(struct httpclient *c, const char *path, struct sl_error *err);
/* While *flag (borrowed; NULL: none) is nonzero, a transfer in progress is
 * abandoned within about a second and new ones fail at once, with
 * ERR_CANCELLED. A signal handler sets the flag: SIGINT stops a wait. */
void httpclient_set_interrupt(struct httpclient *c, const volatile sig_atomic_t *flag);

/* One request: method, path ("/v1/jobs"), optional body with content_type.
 * Any HTTP status is a success here (see resp->status); transport failures
 * are ERR_INFRA. Clear resp with httpclient_response_clear. */
int httpclient_request(struct httpclient *c, const char *method, const char *path,
		       const char *content_type, const void *body, size_t len,
		       struct httpclient_response *resp, struct sl_error *err);
/* POST path as multipart/form-data: a "job" part (job_json), one "patch"
 * file part per path in patches (n_patches), and an "mbox" file part when
 * mbox is not NULL (the service splits it into patches). */
int httpclient_post_multipart(struct httpclient *c, const char *path, const char *job_json,
			      char *const *patches, size_t n_patches, const char *mbox,
			      struct httpclient_response *resp, struct sl_error *err);
void httpclient_response_clear(struct httpclient_response *resp);

/* Follows a Server-Sent Events stream at path, calling on_event for each
 * event (data is the joined data lines); a nonzero return stops. last_id > 0
 * sends Last-Event-ID. Returns 0 when the server ends the stream or the
 * callback stops it; *ret_status (may be NULL) is the HTTP status. */
int httpclient_events(struct httpclient *c, const char *path, int64_t last_id,
		      int (*on_event)(void *userdata, int64_t id, const char *type,
				      const char *data),
		      void *userdata, long *ret_status, struct sl_error *err);
