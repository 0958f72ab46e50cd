/* The retention thread. See retention_timer.h. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/retention_timer.h"

/* Jobs purged per store call: the store's lock is let go between batches,
 * so workers and requests are not held up by a long pass. */
#define RETENTION_TIMER_BATCH 64

struct retention_timer {
	const struct service_config *config;
	struct store *store;
	void (*log)(const char *line);
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop;
};

static void timer_log(struct retention_timer *t, const char *line)
{
	if (t->log)
		t->log(line);
	else
		fprintf(stderr, "%s\n", line);
}

static bool stopping(struct retention_timer *t)
{
	pthread_mutex_lock(&t->lock);
	bool s = t->stop;
	pthread_mutex_unlock(&t->lock);
	return s;
}

static void pass(struct retention_timer *t)
{
	const struct service_retention *r = &t->config->retention;
	int total = 0, purged;
	do {
		struct sl_error err = {0};
		purged = 0;
		if (store_purge_finished(t->store, r->finished_max_age_s, r->drop_results,
					 RETENTION_TIMER_BATCH, &purged, &err) < 0) {
			char line[1100];
			snprintf(line, sizeof(line), "retention: %s", err.message);
			timer_log(t, line);
			break;
		}
		total += purged;
	} while (purged == RETENTION_TIMER_BATCH && !stopping(t));
	if (total) {
		char line[128];
		snprintf(line, sizeof(line), "retention: purged %d finished job(s)", total);
		timer_log(t, line);
	}
}

static void *timer_main(void *arg)
{
	struct retention_timer *t = arg;
	for (;;) {
		struct timespec until;
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += t->config->retention.interval_s;
		pthread_mutex_lock(&t->lock);
		while (!t->stop && pthread_cond_timedwait(&t->wake, &t->lock, &until) != ETIMEDOUT)
			;
		bool stop = t->stop;
		pthread_mutex_unlock(&t->lock);
		if (stop)
			return NULL;
		pass(t);
	}
}

int retention_timer_start(const struct service_config *config, struct store *store,
			  void (*log)(const char *line), struct retention_timer **ret,
			  struct sl_error *err)
{
	*ret = NULL;
	if (config->retention.interval_s <= 0)
		return 0;
	struct retention_timer *t = calloc(1, sizeof(*t));
	if (!t)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	t->config = config;
	t->store = store;
	t->log = log;
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&t->wake, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&t->lock, NULL);
	int r = pthread_create(&t->thread, NULL, timer_main, t);
	if (r != 0) {
		pthread_cond_destroy(&t->wake);
		pthread_mutex_destroy(&t->lock);
		free(t);
		return error_set(err, ERR_INTERNAL, r, "Cannot start the retention thread: %s.",
				 strerror(r));
	}
	*ret = t;
	return 0;
}

void retention_timer_free(struct retention_timer *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	t->stop = true;
	pthread_cond_signal(&t->wake);
	pthread_mutex_unlock(&t->lock);
	pthread_join(t->thread, NULL);
	pthread_cond_destroy(&t->wake);
	pthread_mutex_destroy(&t->lock);
	free(t);
}
