/* The service's job queue and its workers.
 *
 * Order: jobs re-queued after an interruption (restart, shutdown) first,
 * then higher priority first, then first in, first out. N worker threads
 * (default 2) each take the next job and run it through a runner function
 * (runner_run_job in the service; a fake in unit tests), with hooks that
 * store progress, events and each finished run in the store, so that a
 * restarted job resumes from its finished runs. Concurrency of kernel builds
 * and guests is bounded inside the runner (runner_config build_slots and
 * guest_slots), not here. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include "run/runner.h"
#include "server/store.h"
#include "util/error.h"

/* The signature of runner_run_job. */
typedef int (*queue_runner_fn)(const struct runner_config *cfg, json_object *expanded_spec,
			       const char *job_dir, const struct runner_hooks *hooks,
			       json_object **ret_result, struct sl_error *err);

struct queue_opts {
	struct store *store;		 /* borrowed; must outlive the queue */
	queue_runner_fn runner;		 /* required */
	struct runner_config runner_cfg; /* copied; its strings are borrowed */
	int workers;			 /* <= 0: 2 */
	/* Where the queue logs one line per job event; may be NULL (stderr). */
	void (*log)(const char *line);
	/* Called by the worker once a job it ran ended (done, failed or
	 * cancelled; not when shutdown re-queued it); may be NULL. Must not
	 * block (webhook.c hands the id to its own thread). */
	void (*ended)(void *cls, const char *job_id);
	void *ended_cls;
	/* The first pause before a failed store write of a job's end is tried
	 * again (doubled each try, 4 tries); <= 0: 250 ms. Tests shorten it. */
	int store_retry_ms;
};

enum queue_cancel_outcome {
	QUEUE_CANCELLED,	/* it was queued: it is cancelled now */
	QUEUE_CANCEL_REQUESTED, /* it is running: the runner's cancelled hook fires */
};

struct queue;

/* Creates a queue and loads the jobs the store holds as queued, in their
 * order. Workers start with queue_start(). */
int queue_new(const struct queue_opts *opts, struct queue **ret_queue, struct sl_error *err);
/* Starts the worker threads. */
int queue_start(struct queue *q, struct sl_error *err);
/* Stops the workers: running jobs are told to cancel and, once their runner
 * returns, re-queued at the front in the store (not cancelled), so the next
 * start resumes them. Then frees the queue. NULL is a no-op. */
void queue_free(struct queue *q);

/* Adds a job the store already holds as queued. front: ahead of all others. */
int queue_push(struct queue *q, const char *id, int priority, bool front, struct sl_error *err);
/* Cancels a job: a queued one at once (status cancelled), a running one by
 * its runner's cancelled hook. ERR_CONFLICT for a job already finished,
 * ERR_NOT_FOUND for an unknown one. */
int queue_cancel(struct queue *q, const char *id, enum queue_cancel_outcome *ret_outcome,
		 struct sl_error *err);
/* Jobs waiting (not running). */
size_t queue_depth(struct queue *q);
/* Jobs running now. */
size_t queue_running(struct queue *q);
/* The waiting jobs' ids in the order they will run: a new reference to an
 * array of strings. */
json_object *queue_snapshot(struct queue *q);
