/* Alerts: after each job ends, its series (the job's name) is
 * judged again with the trend's change-point detection (report/trend.h);
 * each change point not seen before is recorded in the store (once) and
 * POSTed as JSON to every URL of the config's "webhooks". All of it runs
 * in one background thread, so a worker only hands over the job id: a slow
 * or dead receiver never holds a job up. Each delivery is tried up to
 * WEBHOOK_ATTEMPTS times with exponential backoff, every attempt recorded
 * in the store's webhook_deliveries. docs/service.md "Webhooks" has the
 * payload and the signature. */
#pragma once

#include <stddef.h>

#include "server/config.h"
#include "server/queue.h"
#include "server/store.h"
#include "util/error.h"

#define WEBHOOK_ATTEMPTS      5	  /* per URL and change point */
#define WEBHOOK_BACKOFF_S     1	  /* then 2, 4, 8 s */
#define WEBHOOK_TIMEOUT_S     10  /* per attempt, connecting included */
#define WEBHOOK_QUEUE_MAX     256 /* ended jobs waiting to be judged */
#define WEBHOOK_SIGNATURE_MAX 72  /* "sha256=" and 64 hex digits, NUL */

struct webhooks;

struct webhook_opts {
	const struct service_config *config; /* borrowed: webhooks */
	struct store *store;		     /* borrowed */
	void (*log)(const char *line);	     /* NULL: stderr */
	int backoff_s;			     /* 0: WEBHOOK_BACKOFF_S */
	/* the config's "bisect_change_points": where the bisections go
	 * (NULL: none started, logged); webhooks_set_queue sets it once the
	 * queue exists */
	struct queue *queue;
};

/* Starts the background thread. */
int webhooks_start(const struct webhook_opts *opts, struct webhooks **ret, struct sl_error *err);
/* Stops it (a delivery in progress finishes its attempt; waiting retries
 * are dropped) and frees. NULL is a no-op. */
void webhooks_free(struct webhooks *w);
/* Sets opts.queue (the queue is made after the webhooks: it calls
 * webhooks_job_ended), under a lock the thread holds while it starts a
 * bisection: it waits for one in progress, so NULL before queue_free()
 * means the queue is no longer used. A change point judged while the
 * queue is NULL (a job that ended before the queue was set, or after it
 * was unset) is logged as not bisected. */
void webhooks_set_queue(struct webhooks *w, struct queue *queue);
/* A job ended: judge its series in the background. Never blocks for
 * long; beyond WEBHOOK_QUEUE_MAX waiting jobs it is dropped and logged.
 * Fits queue_opts.ended. */
void webhooks_job_ended(void *w, const char *job_id);

/* The POSTed document for one change point (cp: an element of
 * store_trend_change_points, borrowed): {"event": "change_point", and cp's
 * members, "links": {"trend": "/v1/trend", "jobs": [before's, after's]}}.
 * A new reference. */
json_object *webhook_payload(json_object *cp);
/* "sha256=" and the hex HMAC-SHA256 of body under secret, the value of
 * the X-Schedlab-Signature-256 header. */
void webhook_signature(const char *secret, const char *body, size_t len,
		       char ret[WEBHOOK_SIGNATURE_MAX]);
