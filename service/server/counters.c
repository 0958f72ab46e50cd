/* The service's counters; see counters.h. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/counters.h"
#include "util/macro.h"

/* One labelled family: up to COUNTERS_MAX_SERIES label sets, each a
 * preformatted label string ("status=\"done\"") and a value. */
struct family {
	struct {
		char labels[160];
		long long value;
	} series[COUNTERS_MAX_SERIES];
	size_t n;
};

#define MAX_BUCKETS 12
struct histogram {
	const double *bounds;
	size_t nb;
	unsigned long long buckets[MAX_BUCKETS]; /* not cumulative */
	unsigned long long count;
	double sum;
};

static const double build_bounds[] = {10, 30, 60, 120, 300, 600, 1200, 1800, 3600};
static const double boot_bounds[] = {0.25, 0.5, 1, 2, 5, 10, 30, 60, 120};
static const double wait_bounds[] = {1, 5, 15, 60, 300, 900, 3600, 14400, 86400};

struct counters {
	pthread_mutex_t lock;
	struct family jobs, finished, runs, http;
	long long cache_hits, cache_misses;
	struct histogram build, boot, wait;
	long long change_points, webhook_ok, webhook_failed, webhook_gave_up;
};

struct counters *counters_new(void)
{
	struct counters *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	pthread_mutex_init(&c->lock, NULL);
	c->build = (struct histogram){.bounds = build_bounds, .nb = ELEMENTSOF(build_bounds)};
	c->boot = (struct histogram){.bounds = boot_bounds, .nb = ELEMENTSOF(boot_bounds)};
	c->wait = (struct histogram){.bounds = wait_bounds, .nb = ELEMENTSOF(wait_bounds)};
	return c;
}

void counters_free(struct counters *c)
{
	if (!c)
		return;
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* v if it is one of the words in set (NULL-terminated), else "other". */
static const char *vocab(const char *v, const char *const *set)
{
	for (size_t i = 0; v && set[i]; i++)
		if (strcmp(v, set[i]) == 0)
			return set[i];
	return "other";
}

static const char *const statuses[] = {"queued", "building", "booting",	  "running", "comparing",
				       "done",	 "failed",   "cancelled", NULL};
static const char *const verdicts[] = {"pass", "fail", "inconclusive", "none", NULL};
static const char *const run_statuses[] = {
    "ok",      "hung",	      "panic",	 "crashed",	     "error", "killed",
    "timeout", "infra_error", "skipped", "sched_ext_failed", NULL};

/* Caller holds the lock. Adds n to the series with labels, creating it
 * (or, when the family is full, adding to the last one). */
static void family_add(struct family *f, const char *labels, long long n)
{
	for (size_t i = 0; i < f->n; i++)
		if (strcmp(f->series[i].labels, labels) == 0) {
			f->series[i].value += n;
			return;
		}
	if (f->n == COUNTERS_MAX_SERIES) {
		f->series[f->n - 1].value += n;
		return;
	}
	snprintf(f->series[f->n].labels, sizeof(f->series[0].labels), "%s", labels);
	f->series[f->n++].value = n;
}

static void histogram_observe(struct histogram *h, double v)
{
	if (!(v >= 0)) /* NaN or negative: not a duration */
		return;
	h->count++;
	h->sum += v;
	for (size_t b = 0; b < h->nb; b++)
		if (v <= h->bounds[b]) {
			h->buckets[b]++;
			break;
		}
}

void counters_job_status(struct counters *c, const char *old, const char *status)
{
	pthread_mutex_lock(&c->lock);
	char l[64];
	if (old) {
		snprintf(l, sizeof(l), "status=\"%s\"", vocab(old, statuses));
		family_add(&c->jobs, l, -1);
	}
	if (status) {
		snprintf(l, sizeof(l), "status=\"%s\"", vocab(status, statuses));
		family_add(&c->jobs, l, 1);
	}
	pthread_mutex_unlock(&c->lock);
}

void counters_job_status_add(struct counters *c, const char *status, long long n)
{
	char l[64];
	snprintf(l, sizeof(l), "status=\"%s\"", vocab(status, statuses));
	pthread_mutex_lock(&c->lock);
	family_add(&c->jobs, l, n);
	pthread_mutex_unlock(&c->lock);
}

void counters_job_finished(struct counters *c, const char *status, const char *verdict, long long n)
{
	char l[96];
	snprintf(l, sizeof(l), "status=\"%s\",verdict=\"%s\"", vocab(status, statuses),
		 vocab(verdict ? verdict : "none", verdicts));
	pthread_mutex_lock(&c->lock);
	family_add(&c->finished, l, n);
	pthread_mutex_unlock(&c->lock);
}

void counters_run(struct counters *c, const char *status, long long n)
{
	char l[64];
	snprintf(l, sizeof(l), "status=\"%s\"", vocab(status, run_statuses));
	pthread_mutex_lock(&c->lock);
	family_add(&c->runs, l, n);
	pthread_mutex_unlock(&c->lock);
}

void counters_boot_seconds(struct counters *c, double seconds)
{
	pthread_mutex_lock(&c->lock);
	histogram_observe(&c->boot, seconds);
	pthread_mutex_unlock(&c->lock);
}

void counters_kernel(struct counters *c, bool cached, long long n)
{
	pthread_mutex_lock(&c->lock);
	if (cached)
		c->cache_hits += n;
	else
		c->cache_misses += n;
	pthread_mutex_unlock(&c->lock);
}

void counters_build_seconds(struct counters *c, double seconds)
{
	pthread_mutex_lock(&c->lock);
	histogram_observe(&c->build, seconds);
	pthread_mutex_unlock(&c->lock);
}

void counters_queue_wait(struct counters *c, double seconds)
{
	pthread_mutex_lock(&c->lock);
	histogram_observe(&c->wait, seconds);
	pthread_mutex_unlock(&c->lock);
}

void counters_http(struct counters *c, const char *method, const char *route, unsigned code)
{
	char l[160];
	/* Route templates are the service's own constants; never a raw URL. */
	snprintf(l, sizeof(l), "method=\"%s\",route=\"%s\",code=\"%u\"", route ? method : "other",
		 route ? route : "unmatched", code % 1000);
	pthread_mutex_lock(&c->lock);
	family_add(&c->http, l, 1);
	pthread_mutex_unlock(&c->lock);
}

static void write_family(FILE *f, const char *name, const char *type, const char *help,
			 const struct family *fam, const char *const *always, const char *label)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
	/* The fixed vocabulary first, zeros included, so series do not appear
	 * and vanish between scrapes. */
	for (size_t i = 0; always && always[i]; i++) {
		char l[96];
		snprintf(l, sizeof(l), "%s=\"%s\"", label, always[i]);
		long long v = 0;
		for (size_t k = 0; k < fam->n; k++)
			if (strcmp(fam->series[k].labels, l) == 0)
				v = fam->series[k].value;
		fprintf(f, "%s{%s} %lld\n", name, l, v);
	}
	for (size_t k = 0; k < fam->n; k++) {
		bool listed = false;
		for (size_t i = 0; always && always[i]; i++) {
			char l[96];
			snprintf(l, sizeof(l), "%s=\"%s\"", label, always[i]);
			listed |= strcmp(fam->series[k].labels, l) == 0;
		}
		if (!listed)
			fprintf(f, "%s{%s} %lld\n", name, fam->series[k].labels,
				fam->series[k].value);
	}
}

static void write_histogram(FILE *f, const char *name, const char *help, const struct histogram *h)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
	unsigned long long cum = 0;
	for (size_t b = 0; b < h->nb; b++) {
		cum += h->buckets[b];
		fprintf(f, "%s_bucket{le=\"%g\"} %llu\n", name, h->bounds[b], cum);
	}
	fprintf(f, "%s_bucket{le=\"+Inf\"} %llu\n%s_sum %.3f\n%s_count %llu\n", name, h->count,
		name, h->sum, name, h->count);
}

void counters_change_points(struct counters *c, long long n)
{
	pthread_mutex_lock(&c->lock);
	c->change_points += n;
	pthread_mutex_unlock(&c->lock);
}

void counters_webhook_attempt(struct counters *c, bool delivered, long long n)
{
	pthread_mutex_lock(&c->lock);
	if (delivered)
		c->webhook_ok += n;
	else
		c->webhook_failed += n;
	pthread_mutex_unlock(&c->lock);
}

void counters_webhook_gave_up(struct counters *c, long long n)
{
	pthread_mutex_lock(&c->lock);
	c->webhook_gave_up += n;
	pthread_mutex_unlock(&c->lock);
}

void counters_write(struct counters *c, FILE *f)
{
	static const char *const job_statuses[] = {"queued",  "building",  "booting",
						   "running", "comparing", "done",
						   "failed",  "cancelled", NULL};
	static const char *const run_shown[] = {"ok", "hung", "panic", "crashed", "error", NULL};
	pthread_mutex_lock(&c->lock);
	write_family(f, "schedlab_jobs", "gauge", "Jobs in the store by status.", &c->jobs,
		     job_statuses, "status");
	write_family(f, "schedlab_jobs_finished_total", "counter",
		     "Jobs that reached a final status, by status and verdict.", &c->finished, NULL,
		     NULL);
	write_family(f, "schedlab_runs_total", "counter", "Finished guest runs by status.",
		     &c->runs, run_shown, "status");
	write_histogram(f, "schedlab_build_seconds", "Kernel build time (cache misses).",
			&c->build);
	write_histogram(f, "schedlab_boot_seconds", "Guest boot time per run.", &c->boot);
	write_histogram(f, "schedlab_queue_wait_seconds",
			"Time from submission to a job's first start (since the service "
			"started).",
			&c->wait);
	fprintf(f,
		"# HELP schedlab_kernel_cache_hits_total Kernels a job needed that the cache "
		"held.\n# TYPE schedlab_kernel_cache_hits_total counter\n"
		"schedlab_kernel_cache_hits_total %lld\n"
		"# HELP schedlab_kernel_cache_misses_total Kernels a job needed that were "
		"built.\n# TYPE schedlab_kernel_cache_misses_total counter\n"
		"schedlab_kernel_cache_misses_total %lld\n",
		c->cache_hits, c->cache_misses);
	write_family(f, "schedlab_http_requests_total", "counter",
		     "Answered HTTP requests by route template and status (since the service "
		     "started).",
		     &c->http, NULL, NULL);
	fprintf(f,
		"# HELP schedlab_change_points_total Change points found in a series after a job "
		"finished (each once; docs/service.md Webhooks).\n"
		"# TYPE schedlab_change_points_total counter\n"
		"schedlab_change_points_total %lld\n"
		"# HELP schedlab_webhook_attempts_total Webhook POSTs by outcome (delivered: a "
		"2xx answer).\n# TYPE schedlab_webhook_attempts_total counter\n"
		"schedlab_webhook_attempts_total{outcome=\"delivered\"} %lld\n"
		"schedlab_webhook_attempts_total{outcome=\"failed\"} %lld\n"
		"# HELP schedlab_webhook_gave_up_total Webhook deliveries given up after every "
		"retry.\n# TYPE schedlab_webhook_gave_up_total counter\n"
		"schedlab_webhook_gave_up_total %lld\n",
		c->change_points, c->webhook_ok, c->webhook_failed, c->webhook_gave_up);
	pthread_mutex_unlock(&c->lock);
}
