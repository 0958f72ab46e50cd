/* The nightly clock: the thread that starts the service's scheduled jobs
 * (config "schedules"; nothing to do with the CPU schedulers the jobs
 * measure). It enqueues each schedule's job once per slot of its cron
 * expression (UTC).
 *
 * Once per slot, even across restarts: the store keeps each schedule's last
 * slot, written in the same transaction as the job it enqueued. A schedule
 * seen for the first time records the current slot without running it (its
 * first run is its next slot). Slots missed while the service was down are
 * run ONCE at start, as the latest of them, not once per missed slot: a
 * week-long outage must not queue seven nights of the same tree. An enqueue
 * that fails (a source gone, the job no longer valid) is logged and
 * recorded as the schedule's last_error; that slot is not retried. */
#pragma once

#include <time.h>

#include "server/config.h"
#include "server/queue.h"
#include "server/store.h"
#include "util/error.h"

struct nightly_clock_opts {
	const struct service_config *config; /* borrowed: schedules, limits */
	struct store *store;		     /* borrowed */
	struct queue *queue;		     /* borrowed */
	void (*log)(const char *line);	     /* NULL: stderr */
	const char *data_dir;		     /* guest-kernel/'s parent; NULL: fs_data_dir() */
};

struct nightly_clock;

/* Handles the slots due now (missed ones once) and starts the thread,
 * which looks again every second. No schedules: no thread. */
int nightly_clock_start(const struct nightly_clock_opts *opts, struct nightly_clock **ret,
			struct sl_error *err);
/* Stops the thread and frees. NULL is a no-op. */
void nightly_clock_free(struct nightly_clock *s);

/* The clock schedules follow: time(NULL) plus a test-only offset that
 * `schedlab serve` reads from SCHEDLAB_TEST_CLOCK_OFFSET_S (seconds,
 * docs/service.md "Schedules"); nothing in the API can change it. */
time_t nightly_clock_now(void);
void nightly_clock_set_offset(long seconds);

/* {"schedules": [{name, at, source_ref?, last_run: {job_id, time, slot} or
 * null, last_error?, next_run}], "now"}: what GET /v1/schedules answers,
 * from the config and the store. A new reference, or NULL with err set. */
json_object *nightly_clock_list_json(const struct service_config *config, struct store *store,
				     struct sl_error *err);
