/* The nightly clock's thread: once a second, each schedule whose latest slot
 * (cron_prev of now) is past its recorded last slot gets its job enqueued
 * (see nightly_clock.h for the rules). */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/nightly_clock.h"
#include "server/submit_checks.h"
#include "util/redact.h"
#include "util/time.h"

static atomic_long clock_offset;

time_t nightly_clock_now(void)
{
	return time(NULL) + (time_t)atomic_load(&clock_offset);
}

void nightly_clock_set_offset(long seconds)
{
	atomic_store(&clock_offset, seconds);
}

struct nightly_clock {
	struct nightly_clock_opts opts;
	int64_t *last_slot; /* per schedule, as recorded in the store */
	pthread_t thread;
	bool running;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
};

static void slog(const struct nightly_clock *s, const char *fmt, ...) _printf_(2, 3);
static void slog(const struct nightly_clock *s, const char *fmt, ...)
{
	char line[1200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (s->opts.log)
		s->opts.log(line);
	else
		fprintf(stderr, "schedlab: %s\n", line);
}

/* Expands, checks, stores (with the slot, in one transaction) and queues
 * the schedule's job. */
static int enqueue(struct nightly_clock *s, const struct service_schedule *sch, int64_t slot,
		   char id[STORE_ID_LEN + 1], struct sl_error *err)
{
	const struct service_config *c = s->opts.config;
	_cleanup_json_ json_object *expanded = NULL;
	int r = job_expand_json(sch->job, JOB_ORIGIN_SERVICE, NULL, &c->limits, &expanded, err);
	if (r < 0 || (r = submit_checks(expanded, s->opts.data_dir, err)) < 0)
		return r;
	char owner[80];
	snprintf(owner, sizeof(owner), "schedule:%s", sch->name);
	const char *text = json_object_to_json_string_ext(sch->job, JSON_C_TO_STRING_PLAIN);
	const struct store_new_job nj = {
	    .name = sch->name,
	    .owner = owner,
	    .priority = 0,
	    .spec = sch->job,
	    .expanded = expanded,
	    .budget_s = job_budget_s(expanded),
	    .bytes = (long long)strlen(text),
	    .schedule = sch->name,
	    .schedule_slot = slot,
	};
	if ((r = store_id_new(id, err)) < 0 ||
	    (r = store_job_submit(s->opts.store, id, &nj, err)) < 0)
		return r;
	return queue_push(s->opts.queue, id, 0, false, err);
}

/* One pass over the schedules at time now. */
static void tick(struct nightly_clock *s, time_t now)
{
	const struct service_config *c = s->opts.config;
	for (size_t i = 0; i < c->n_schedules; i++) {
		const struct service_schedule *sch = &c->schedules[i];
		time_t due = cron_prev(&sch->cron, now);
		if (due < 0 || (int64_t)due <= s->last_slot[i])
			continue;
		char when[TIME_ISO8601_MAX], id[STORE_ID_LEN + 1] = "";
		time_iso8601(due, when);
		struct sl_error err = {0};
		if (enqueue(s, sch, due, id, &err) < 0) {
			slog(s, "schedule '%s': slot %s not enqueued: %s", sch->name, when,
			     err.message);
			/* GET /v1/schedules shows it to read tokens: no host paths */
			char shown[sizeof(err.message)];
			redact_host_paths(err.message, shown, sizeof(shown));
			struct sl_error err2 = {0};
			if (store_schedule_mark(s->opts.store, sch->name, due, shown, &err2) < 0)
				slog(s, "schedule '%s': %s", sch->name, err2.message);
		} else {
			slog(s, "schedule '%s': slot %s enqueued as job %s", sch->name, when, id);
		}
		s->last_slot[i] = due; /* a failed slot is not retried every second */
	}
}

static void *thread_main(void *arg)
{
	struct nightly_clock *s = arg;
	pthread_mutex_lock(&s->lock);
	while (!s->stop) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&s->cond, &s->lock, &ts);
		if (s->stop)
			break;
		pthread_mutex_unlock(&s->lock);
		tick(s, nightly_clock_now());
		pthread_mutex_lock(&s->lock);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

int nightly_clock_start(const struct nightly_clock_opts *opts, struct nightly_clock **ret,
			struct sl_error *err)
{
	struct nightly_clock *s = calloc(1, sizeof(*s));
	size_t n = opts->config->n_schedules;
	if (!s || !(s->last_slot = calloc(n ? n : 1, sizeof(*s->last_slot)))) {
		free(s);
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	}
	s->opts = *opts;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	time_t now = nightly_clock_now();
	for (size_t i = 0; i < n; i++) {
		const struct service_schedule *sch = &opts->config->schedules[i];
		struct store_schedule_state st;
		int r = store_schedule_get(opts->store, sch->name, &st, err);
		if (r < 0) {
			nightly_clock_free(s);
			return r;
		}
		if (st.found) {
			s->last_slot[i] = st.last_slot;
			continue;
		}
		/* First sight: the current slot counts as handled. */
		time_t due = cron_prev(&sch->cron, now);
		s->last_slot[i] = due < 0 ? 0 : due;
		if ((r = store_schedule_mark(opts->store, sch->name, s->last_slot[i], NULL, err)) <
		    0) {
			nightly_clock_free(s);
			return r;
		}
		char next[TIME_ISO8601_MAX];
		slog(s, "schedule '%s' ('%s'): new, first slot %s", sch->name, sch->at,
		     time_iso8601(cron_next(&sch->cron, now), next));
	}
	tick(s, now); /* the slots missed while the service was down, once */
	if (n) {
		if (pthread_create(&s->thread, NULL, thread_main, s) != 0) {
			nightly_clock_free(s);
			return error_set(err, ERR_INTERNAL, EAGAIN,
					 "Cannot start the nightly clock's thread.");
		}
		s->running = true;
	}
	*ret = s;
	return 0;
}

void nightly_clock_free(struct nightly_clock *s)
{
	if (!s)
		return;
	if (s->running) {
		pthread_mutex_lock(&s->lock);
		s->stop = true;
		pthread_cond_signal(&s->cond);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->thread, NULL);
	}
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->cond);
	free(s->last_slot);
	free(s);
}

json_object *nightly_clock_list_json(const struct service_config *config, struct store *store,
				     struct sl_error *err)
{
	time_t now = nightly_clock_now();
	char buf[TIME_ISO8601_MAX];
	_cleanup_json_ json_object *list = json_object_new_array();
	for (size_t i = 0; i < config->n_schedules; i++) {
		const struct service_schedule *sch = &config->schedules[i];
		struct store_schedule_state st;
		if (store_schedule_get(store, sch->name, &st, err) < 0)
			return NULL;
		json_object *o = json_object_new_object();
		json_object_array_add(list, o);
		json_object_object_add(o, "name", json_object_new_string(sch->name));
		json_object_object_add(o, "at", json_object_new_string(sch->at));
		if (sch->source_ref)
			json_object_object_add(o, "source_ref",
					       json_object_new_string(sch->source_ref));
		json_object *last = NULL;
		if (st.found && st.last_job_id[0]) {
			last = json_object_new_object();
			json_object_object_add(last, "job_id",
					       json_object_new_string(st.last_job_id));
			json_object_object_add(last, "time",
					       json_object_new_string(st.last_run_at));
			json_object_object_add(
			    last, "slot",
			    json_object_new_string(time_iso8601((time_t)st.last_slot, buf)));
		}
		json_object_object_add(o, "last_run", last);
		if (st.found && st.last_error[0])
			json_object_object_add(o, "last_error",
					       json_object_new_string(st.last_error));
		time_t next = cron_next(&sch->cron, now);
		json_object_object_add(o, "next_run",
				       next < 0 ? NULL
						: json_object_new_string(time_iso8601(next, buf)));
	}
	json_object *o = json_object_new_object();
	json_object_object_add(o, "schedules", TAKE_PTR(list));
	json_object_object_add(o, "now", json_object_new_string(time_iso8601(now, buf)));
	return o;
}
