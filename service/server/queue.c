/* The job queue and its workers; see queue.h. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "compare/result_model.h"
#include "server/queue.h"
#include "util/fs.h"
#include "util/time.h"

struct queue_entry {
	char id[STORE_ID_LEN + 1];
	int priority;
	bool front;
	unsigned long long seq;
};

/* One running job: the runner hooks' userdata. */
struct job_ctx {
	struct queue *q;
	char id[STORE_ID_LEN + 1];
	atomic_int cancel;   /* DELETE or shutdown */
	atomic_int shutdown; /* shutdown: re-queue instead of cancelling */
	char status[16];
	char last_progress[512];
	double last_progress_at; /* time_monotonic_s() */
	struct job_ctx *next;
};

struct queue {
	struct queue_opts opts;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct queue_entry *entries;
	size_t n_entries, cap_entries;
	unsigned long long next_seq;
	struct job_ctx *running;
	size_t n_running;
	pthread_t *threads;
	int n_threads;
	bool stop;
};

static void qlog(struct queue *q, const char *fmt, ...) _printf_(2, 3);
static void qlog(struct queue *q, const char *fmt, ...)
{
	char line[1200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (q->opts.log)
		q->opts.log(line);
	else
		fprintf(stderr, "schedlab-queue: %s\n", line);
}

/* a runs before b. */
static bool entry_before(const struct queue_entry *a, const struct queue_entry *b)
{
	if (a->front != b->front)
		return a->front;
	if (a->priority != b->priority)
		return a->priority > b->priority;
	return a->seq < b->seq;
}

/* Caller holds the lock. */
static int push_locked(struct queue *q, const char *id, int priority, bool front,
		       struct sl_error *err)
{
	if (!store_id_valid(id))
		return error_set(err, ERR_INVALID, EINVAL, "Job id '%.64s' is not valid.", id);
	if (q->n_entries == q->cap_entries) {
		size_t cap = q->cap_entries ? q->cap_entries * 2 : 16;
		struct queue_entry *n = realloc(q->entries, cap * sizeof(*n));
		if (!n)
			return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		q->entries = n;
		q->cap_entries = cap;
	}
	struct queue_entry *e = &q->entries[q->n_entries++];
	snprintf(e->id, sizeof(e->id), "%s", id);
	e->priority = priority;
	e->front = front;
	e->seq = q->next_seq++;
	return 0;
}

/* Caller holds the lock; index of the next entry, or -1. */
static ssize_t best_locked(struct queue *q)
{
	ssize_t best = -1;
	for (size_t i = 0; i < q->n_entries; i++)
		if (best < 0 || entry_before(&q->entries[i], &q->entries[best]))
			best = (ssize_t)i;
	return best;
}

static void remove_locked(struct queue *q, size_t i)
{
	memmove(&q->entries[i], &q->entries[i + 1], (q->n_entries - i - 1) * sizeof(q->entries[0]));
	q->n_entries--;
}

int queue_new(const struct queue_opts *opts, struct queue **ret_queue, struct sl_error *err)
{
	if (!opts->store || !opts->runner)
		return error_set(err, ERR_INTERNAL, EINVAL,
				 "The queue needs a store and a runner.");
	struct queue *q = calloc(1, sizeof(*q));
	if (!q)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	q->opts = *opts;
	if (q->opts.workers <= 0)
		q->opts.workers = 2;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->cond, NULL);
	_cleanup_json_ json_object *queued = NULL;
	int r = store_queued_jobs(opts->store, &queued, err);
	if (r < 0)
		goto fail;
	size_t n = json_object_array_length(queued);
	for (size_t i = 0; i < n; i++) {
		json_object *j = json_object_array_get_idx(queued, i), *v;
		json_object_object_get_ex(j, "id", &v);
		const char *id = json_object_get_string(v);
		json_object_object_get_ex(j, "priority", &v);
		int prio = json_object_get_int(v);
		json_object_object_get_ex(j, "front", &v);
		if ((r = push_locked(q, id, prio, json_object_get_boolean(v), err)) < 0)
			goto fail;
	}
	*ret_queue = q;
	return 0;
fail:
	queue_free(q);
	return r;
}

static void ctx_set_status(struct job_ctx *c, const char *status)
{
	if (strcmp(c->status, status) == 0)
		return;
	struct sl_error err = {0};
	if (store_job_set_status(c->q->opts.store, c->id, status, &err) < 0)
		qlog(c->q, "job %s: %s", c->id, err.message);
	snprintf(c->status, sizeof(c->status), "%s", status);
}

static void hook_progress(void *userdata, const struct runner_progress *p)
{
	struct job_ctx *c = userdata;
	const char *phase = p->phase ? p->phase : "running";
	if (strcmp(phase, "building") == 0 || strcmp(phase, "booting") == 0 ||
	    strcmp(phase, "running") == 0 || strcmp(phase, "comparing") == 0)
		ctx_set_status(c, phase);
	_cleanup_json_ json_object *o = json_object_new_object();
	json_object_object_add(o, "phase", json_object_new_string(phase));
	json_object_object_add(o, "percent", json_object_new_double(p->percent));
	json_object_object_add(o, "run_index", json_object_new_int(p->run_index));
	json_object_object_add(o, "run_total", json_object_new_int(p->run_total));
	/* The message can quote guest or build output: keep it short. */
	char msg[256];
	snprintf(msg, sizeof(msg), "%s", p->message ? p->message : "");
	json_object_object_add(o, "message", json_object_new_string(msg));
	const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	if (strncmp(text, c->last_progress, sizeof(c->last_progress)) == 0)
		return;
	/* A chatty phase (build output) would flood the events table: at most
	 * four progress events a second, unless the phase or the run changed. */
	double now = time_monotonic_s();
	bool same_step = strstr(c->last_progress, phase) != NULL;
	char key[64];
	snprintf(key, sizeof(key), "\"run_index\":%d,", p->run_index);
	same_step = same_step && strstr(c->last_progress, key) != NULL;
	if (same_step && now - c->last_progress_at < 0.25)
		return;
	c->last_progress_at = now;
	snprintf(c->last_progress, sizeof(c->last_progress), "%s", text);
	struct sl_error err = {0};
	if (store_job_set_progress(c->q->opts.store, c->id, o, &err) < 0)
		qlog(c->q, "job %s: %s", c->id, err.message);
}

static json_object *hook_lookup_run(void *userdata, const char *run_key)
{
	struct job_ctx *c = userdata;
	json_object *run = NULL;
	struct sl_error err = {0};
	if (store_run_get(c->q->opts.store, c->id, run_key, &run, &err) < 0) {
		/* not stored before is the usual answer; anything else is said,
		 * and the run is done again rather than the job failed */
		if (err.kind != ERR_NOT_FOUND)
			qlog(c->q, "job %s: run '%s' is done again: %s", c->id, run_key,
			     err.message);
		return NULL;
	}
	qlog(c->q, "job %s: run '%s' was finished before, reusing it", c->id, run_key);
	return run;
}

static void hook_run_done(void *userdata, const char *run_key, json_object *run)
{
	struct job_ctx *c = userdata;
	struct sl_error err = {0};
	if (store_run_put(c->q->opts.store, c->id, run_key, run, &err) < 0) {
		qlog(c->q, "job %s: %s", c->id, err.message);
		return;
	}
	_cleanup_json_ json_object *d = json_object_new_object();
	json_object *st = NULL;
	json_object_object_add(d, "run_key", json_object_new_string(run_key));
	if (json_object_object_get_ex(run, "status", &st))
		json_object_object_add(d, "status", json_object_get(st));
	if (store_event_add(c->q->opts.store, c->id, "run", d, NULL, &err) < 0)
		qlog(c->q, "job %s: %s", c->id, err.message);
}

static int hook_cancelled(void *userdata)
{
	struct job_ctx *c = userdata;
	return atomic_load(&c->cancel);
}

/* Tries of one store write before a job's end gives up on it, and the first
 * pause between them (doubled each time): a full disk can get room back
 * (retention, cache eviction, an operator) within seconds. */
#define QUEUE_STORE_TRIES	     4
#define QUEUE_STORE_RETRY_MS_DEFAULT 250

static int finish_tries(struct queue *q, const char *id, const char *status, const char *verdict,
			json_object *error, struct sl_error *err)
{
	int pause_ms =
	    q->opts.store_retry_ms > 0 ? q->opts.store_retry_ms : QUEUE_STORE_RETRY_MS_DEFAULT;
	int r = 0;
	for (int i = 0; i < QUEUE_STORE_TRIES; i++) {
		if (i > 0) {
			struct timespec ts = {pause_ms / 1000, (long)(pause_ms % 1000) * 1000000L};
			nanosleep(&ts, NULL);
			pause_ms *= 2;
		}
		r = store_job_finish(q->opts.store, id, status, verdict, error, err);
		/* already final (a cancel won the race): nothing left to write */
		if (r >= 0 || (err && err->kind == ERR_CONFLICT))
			return 0;
	}
	return r;
}

/* Writes a job's final status; a store error is never dropped. The write is
 * retried a few times; when it still fails the job is marked failed with the
 * store's reason (a smaller write, retried too). Only when that fails as well
 * does the job stay running in the store, said loudly in the log: the next
 * start re-queues it (store_requeue_interrupted). Returns 0 when the status
 * that was asked for was stored. */
static int job_finish(struct queue *q, const char *id, const char *status, const char *verdict,
		      json_object *error)
{
	struct sl_error err = {0};
	if (finish_tries(q, id, status, verdict, error, &err) >= 0)
		return 0;
	qlog(q, "job %s: its status '%s' was not stored: %s", id, status, err.message);
	struct sl_error why = {0};
	error_set(&why, ERR_INTERNAL, EIO,
		  "The job ended (%s) but its status could not be stored: %s", status, err.message);
	_cleanup_json_ json_object *e = error_to_json(&why);
	struct sl_error err2 = {0};
	if (finish_tries(q, id, "failed", NULL, json_object_object_get(e, "error"), &err2) >= 0)
		qlog(q, "job %s marked failed: its status '%s' could not be stored", id, status);
	else
		qlog(q,
		     "job %s: no final status could be stored (%s); it stays running in the "
		     "store until the next start re-queues it",
		     id, err2.message);
	return -EIO;
}

/* Result file, comparisons index and final status of a finished job. */
static void job_succeeded(struct job_ctx *c, const char *job_dir, json_object *result)
{
	struct sl_error err = {0};
	_cleanup_free_ char *path = fs_path_join(job_dir, "result.json");
	const char *text = json_object_to_json_string_ext(
	    result, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
	if (fs_write_file_atomic(path, text, strlen(text), &err) < 0) {
		_cleanup_json_ json_object *e = error_to_json(&err);
		qlog(c->q, "job %s failed: %s", c->id, err.message);
		job_finish(c->q, c->id, "failed", NULL, json_object_object_get(e, "error"));
		return;
	}
	if (store_result_index(c->q->opts.store, c->id, result, &err) < 0)
		qlog(c->q, "job %s: %s", c->id, err.message);
	/* the runner's result, read through the model (partial: a series
	 * job's result has no variants of its own) */
	struct model_result m;
	char verdict[32] = "inconclusive";
	if (model_result_read(result, &m, &err) == 0) {
		if (m.verdict)
			snprintf(verdict, sizeof(verdict), "%s", m.verdict);
		model_result_free(&m);
	} else
		qlog(c->q, "job %s: %s", c->id, err.message);
	if (job_finish(c->q, c->id, "done", verdict, NULL) >= 0)
		qlog(c->q, "job %s done: verdict %s", c->id, verdict);
}

static void run_one(struct queue *q, struct job_ctx *c)
{
	struct sl_error err = {0};
	_cleanup_json_ json_object *expanded = NULL, *result = NULL;
	_cleanup_free_ char *job_dir = store_job_dir(q->opts.store, c->id);
	int r = store_job_expanded(q->opts.store, c->id, &expanded, &err);
	if (r >= 0)
		r = fs_mkdir_p(job_dir, &err);
	if (r < 0) {
		_cleanup_json_ json_object *e = error_to_json(&err);
		qlog(q, "job %s failed: %s", c->id, err.message);
		job_finish(q, c->id, "failed", NULL, json_object_object_get(e, "error"));
		return;
	}
	snprintf(c->status, sizeof(c->status), "queued");
	/* Started: the runner reports its real phases from here on. */
	ctx_set_status(c, "building");
	qlog(q, "job %s started", c->id);
	struct runner_hooks hooks = {
	    .userdata = c,
	    .progress = hook_progress,
	    .lookup_run = hook_lookup_run,
	    .run_done = hook_run_done,
	    .cancelled = hook_cancelled,
	};
	r = q->opts.runner(&q->opts.runner_cfg, expanded, job_dir, &hooks, &result, &err);
	if (r >= 0 && result) {
		job_succeeded(c, job_dir, result);
		return;
	}
	if (r >= 0)
		error_set(&err, ERR_INTERNAL, EIO, "The runner returned no result.");
	if (atomic_load(&c->shutdown)) {
		/* not stored: it is still running in the store, which the next
		 * start re-queues at the front all the same */
		struct sl_error rq = {0};
		if (store_job_requeue_front(q->opts.store, c->id, &rq) < 0)
			qlog(q,
			     "job %s interrupted by shutdown, not re-queued in the store (%s): "
			     "the next start re-queues it",
			     c->id, rq.message);
		else
			qlog(q, "job %s interrupted by shutdown: re-queued", c->id);
	} else if (atomic_load(&c->cancel) || err.kind == ERR_CANCELLED) {
		if (job_finish(q, c->id, "cancelled", NULL, NULL) >= 0)
			qlog(q, "job %s cancelled", c->id);
	} else {
		_cleanup_json_ json_object *e = error_to_json(&err);
		qlog(q, "job %s failed: %s", c->id, err.message);
		job_finish(q, c->id, "failed", NULL, json_object_object_get(e, "error"));
	}
}

static void *worker_main(void *arg)
{
	struct queue *q = arg;
	for (;;) {
		pthread_mutex_lock(&q->lock);
		while (!q->stop && q->n_entries == 0)
			pthread_cond_wait(&q->cond, &q->lock);
		if (q->stop) {
			pthread_mutex_unlock(&q->lock);
			return NULL;
		}
		ssize_t i = best_locked(q);
		struct job_ctx *c = calloc(1, sizeof(*c));
		if (!c) {
			pthread_mutex_unlock(&q->lock);
			qlog(q, "out of memory starting a job");
			sleep(1);
			continue;
		}
		c->q = q;
		snprintf(c->id, sizeof(c->id), "%s", q->entries[i].id);
		remove_locked(q, (size_t)i);
		c->next = q->running;
		q->running = c;
		q->n_running++;
		pthread_mutex_unlock(&q->lock);

		run_one(q, c);
		if (q->opts.ended && !atomic_load(&c->shutdown))
			q->opts.ended(q->opts.ended_cls, c->id);

		pthread_mutex_lock(&q->lock);
		for (struct job_ctx **p = &q->running; *p; p = &(*p)->next)
			if (*p == c) {
				*p = c->next;
				break;
			}
		q->n_running--;
		pthread_mutex_unlock(&q->lock);
		free(c);
	}
}

int queue_start(struct queue *q, struct sl_error *err)
{
	q->threads = calloc((size_t)q->opts.workers, sizeof(pthread_t));
	if (!q->threads)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	for (int i = 0; i < q->opts.workers; i++) {
		int r = pthread_create(&q->threads[i], NULL, worker_main, q);
		if (r != 0)
			return error_set(err, ERR_INTERNAL, r, "Cannot start a queue worker: %s.",
					 strerror(r));
		q->n_threads++;
	}
	return 0;
}

void queue_free(struct queue *q)
{
	if (!q)
		return;
	pthread_mutex_lock(&q->lock);
	q->stop = true;
	for (struct job_ctx *c = q->running; c; c = c->next) {
		atomic_store(&c->shutdown, 1);
		atomic_store(&c->cancel, 1);
	}
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
	for (int i = 0; i < q->n_threads; i++)
		pthread_join(q->threads[i], NULL);
	free(q->threads);
	free(q->entries);
	pthread_cond_destroy(&q->cond);
	pthread_mutex_destroy(&q->lock);
	free(q);
}

int queue_push(struct queue *q, const char *id, int priority, bool front, struct sl_error *err)
{
	pthread_mutex_lock(&q->lock);
	int r = push_locked(q, id, priority, front, err);
	if (r >= 0)
		pthread_cond_signal(&q->cond);
	pthread_mutex_unlock(&q->lock);
	return r;
}

int queue_cancel(struct queue *q, const char *id, enum queue_cancel_outcome *ret_outcome,
		 struct sl_error *err)
{
	bool was_queued = false;
	pthread_mutex_lock(&q->lock);
	for (struct job_ctx *c = q->running; c; c = c->next)
		if (strcmp(c->id, id) == 0) {
			atomic_store(&c->cancel, 1);
			pthread_mutex_unlock(&q->lock);
			/* A worker writes a job's final status before it leaves
			 * the running list: a job that just ended is final in the
			 * store and answers ERR_CONFLICT, as any ended job does. */
			_cleanup_json_ json_object *row = NULL;
			const char *status = NULL;
			int r = store_job_get(q->opts.store, id, &row, err);
			if (r < 0)
				return r;
			json_object *v = NULL;
			if (json_object_object_get_ex(row, "status", &v))
				status = json_object_get_string(v);
			if (status && store_status_is_final(status))
				return error_set(err, ERR_CONFLICT, EALREADY,
						 "Job '%s' is already %s.", id, status);
			qlog(q, "job %s: cancel requested", id);
			*ret_outcome = QUEUE_CANCEL_REQUESTED;
			return 0;
		}
	for (size_t i = 0; i < q->n_entries; i++)
		if (strcmp(q->entries[i].id, id) == 0) {
			remove_locked(q, i);
			was_queued = true;
			break;
		}
	pthread_mutex_unlock(&q->lock);
	/* Queued, or held by the store only: finishing it in the store is what
	 * decides; a job already final answers ERR_CONFLICT here. */
	int r = store_job_finish(q->opts.store, id, "cancelled", NULL, NULL, err);
	if (r < 0)
		return r;
	qlog(q, "job %s cancelled%s", id, was_queued ? " while queued" : "");
	*ret_outcome = QUEUE_CANCELLED;
	return 0;
}

size_t queue_depth(struct queue *q)
{
	pthread_mutex_lock(&q->lock);
	size_t n = q->n_entries;
	pthread_mutex_unlock(&q->lock);
	return n;
}

size_t queue_running(struct queue *q)
{
	pthread_mutex_lock(&q->lock);
	size_t n = q->n_running;
	pthread_mutex_unlock(&q->lock);
	return n;
}

json_object *queue_snapshot(struct queue *q)
{
	pthread_mutex_lock(&q->lock);
	size_t n = q->n_entries;
	struct queue_entry *copy = malloc((n ? n : 1) * sizeof(*copy));
	if (copy)
		memcpy(copy, q->entries, n * sizeof(*copy));
	pthread_mutex_unlock(&q->lock);
	json_object *arr = json_object_new_array();
	if (!copy)
		return arr;
	/* Selection order, the same rule the workers use. */
	for (size_t k = 0; k < n; k++) {
		size_t best = k;
		for (size_t i = k + 1; i < n; i++)
			if (entry_before(&copy[i], &copy[best]))
				best = i;
		struct queue_entry t = copy[k];
		copy[k] = copy[best];
		copy[best] = t;
		json_object_array_add(arr, json_object_new_string(copy[k].id));
	}
	free(copy);
	return arr;
}
