/* The service's Prometheus counters, kept as events happen so that a
 * /metrics scrape reads memory under this module's own mutex and never
 * scans the store or takes the lock the workers need.
 *
 * The store owns one (store_counters()): it seeds the counts that must
 * survive a restart from the database once, at open (jobs by status, finished
 * jobs by status and verdict, runs by status, build and boot times, kernel
 * cache hits and misses), and updates them in the same functions that write
 * the rows. HTTP requests and queue wait are counted from process start.
 *
 * Label values come from the service's own vocabularies (statuses, verdicts,
 * route templates); anything else is counted as "other", and each labelled
 * family holds at most COUNTERS_MAX_SERIES series, so a client cannot grow
 * the page. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#define COUNTERS_MAX_SERIES 64

struct counters;

/* A zeroed set. NULL on out of memory. */
struct counters *counters_new(void);
void counters_free(struct counters *c);

/* A job moved from old (NULL: it was just created) to status (NULL: it was
 * deleted); keeps the schedlab_jobs{status} gauge. */
void counters_job_status(struct counters *c, const char *old, const char *status);
/* Adds n to the gauge of status (seeding from the store). */
void counters_job_status_add(struct counters *c, const char *status, long long n);
/* A job reached a final status with a verdict (NULL: none). */
void counters_job_finished(struct counters *c, const char *status, const char *verdict,
			   long long n);
/* A finished run with its status and boot time (< 0: unknown). */
void counters_run(struct counters *c, const char *status, long long n);
void counters_boot_seconds(struct counters *c, double seconds);
/* A kernel a job needed: taken from the cache, or built in seconds. */
void counters_kernel(struct counters *c, bool cached, long long n);
void counters_build_seconds(struct counters *c, double seconds);
/* A job waited seconds between submission and its first start. */
void counters_queue_wait(struct counters *c, double seconds);
/* One answered HTTP request: the route's method and template ("GET",
 * "/v1/jobs/{id}"; NULL for a request no route matched) and the status. */
void counters_http(struct counters *c, const char *method, const char *route, unsigned code);

/* Nightly: n new change points alerted on; a webhook attempt
 * that delivered (2xx) or not; a delivery given up after its retries. */
void counters_change_points(struct counters *c, long long n);
void counters_webhook_attempt(struct counters *c, bool delivered, long long n);
void counters_webhook_gave_up(struct counters *c, long long n);

/* Writes every family in Prometheus text format 0.0.4. */
void counters_write(struct counters *c, FILE *f);
