/* The service's persistent job store: one SQLite database in WAL mode at
 * <state>/schedlab.db, plus per-job files under <state>/jobs/<id>/ (logs,
 * result.json written atomically).
 *
 * Tables: jobs, runs (each finished run, stored as it completes, so a
 * restarted job resumes without redoing it), events (progress and status
 * changes, replayed by Server-Sent Events with Last-Event-ID), comparisons
 * (flattened from each finished result for the nightly trend report),
 * kernel_builds (build times for /metrics), blobs and job_blobs (inline
 * patches stored once by content hash, store_blobs.c) and schema_version
 * (migrations). Retention (store_retention.c) empties old finished jobs.
 *
 * Concurrency: one connection per store, serialized by a mutex inside the
 * store, so every function here may be called from any thread. Other
 * processes (the trend report) may read the database at the same time: WAL
 * mode lets readers proceed during writes, and a 5 s busy timeout absorbs
 * short write locks. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include "util/error.h"

#define STORE_ID_LEN 32 /* 128 random bits as lowercase hex */

struct store;
struct counters;

/* Opens (creating if needed) <state_dir>/schedlab.db, migrates it to the
 * current schema version and creates <state_dir>/jobs. */
int store_open(const char *state_dir, struct store **ret_store, struct sl_error *err);
/* Closes the database. NULL is a no-op. */
void store_free(struct store *s);

/* 1 when id is exactly STORE_ID_LEN lowercase hex digits: the only form
 * that is ever turned into a path or a query parameter. */
bool store_id_valid(const char *id);
/* Writes a fresh id (128 bits from getrandom) and its NUL into ret_id. */
int store_id_new(char ret_id[STORE_ID_LEN + 1], struct sl_error *err);
/* The state directory the store was opened with (borrowed). */
const char *store_state_dir(const struct store *s);
/* malloc'd "<state>/jobs/<id>"; NULL when id is not valid. */
char *store_job_dir(const struct store *s, const char *id);
/* 1 for done, failed and cancelled. */
bool store_status_is_final(const char *status);
/* 1 for the statuses a job can have. */
bool store_status_valid(const char *status);

/* A job as submitted (every pointer borrowed). */
struct store_new_job {
	const char *name;
	const char *owner; /* the token's name ("" without tokens) */
	int priority;
	json_object *spec, *expanded;
	long long budget_s; /* job_budget_s(), counted by the daily quota */
	long long bytes;    /* the spec's size, counted by the bytes quota */
	/* A scheduled job (nightly_clock.c): the schedule's row records
	 * schedule_slot and the job in the same transaction, so a slot is
	 * enqueued once even if the service dies between the two. */
	const char *schedule; /* NULL: not scheduled */
	int64_t schedule_slot;
	/* A change point's bisection (change_point_bisect.h): the link to the
	 * change point (its key) is stored in the same transaction; a second
	 * bisection of one change point fails with ERR_CONFLICT (-EEXIST). */
	const char *change_point;    /* NULL: none */
	json_object *bisect_commits; /* the range's [{commit, subject}] */
};
/* Inserts a queued job and its "status" event in one transaction; inline
 * patches go to the blobs table once by content hash (store_blobs.c). The
 * job directory is made when the job starts (queue.c), so a submission
 * killed half-way leaves no directory without a row. */
int store_job_submit(struct store *s, const char *id, const struct store_new_job *j,
		     struct sl_error *err);
/* store_job_submit without owner, budget or bytes (tests, tools). */
int store_job_create(struct store *s, const char *id, const char *name, int priority,
		     json_object *spec, json_object *expanded, struct sl_error *err);
/* The owner recorded for a job (a token name, "" without tokens) into
 * ret_owner; ERR_NOT_FOUND for an unknown id. */
int store_job_owner(struct store *s, const char *id, char ret_owner[80], struct sl_error *err);

/* What admission.c counts, for one owner. */
struct store_usage {
	int queued_total;	/* queued jobs of every owner */
	int queued_owner;	/* queued jobs of this owner */
	long long bytes_owner;	/* stored_bytes of this owner's jobs not purged */
	long long budget_owner; /* budget_s of this owner's jobs submitted since
				 * since_unix, except those cancelled before
				 * they started */
	long long oldest_unix;	/* submitted_unix of the oldest of those, 0: none */
};
int store_usage(struct store *s, const char *owner, long long since_unix,
		struct store_usage *ret_usage, struct sl_error *err);
/* The seconds until the owner's budget used since since_unix drops to at
 * most target (their jobs leave the window oldest first); -1 if it never
 * does. */
int store_budget_frees_in(struct store *s, const char *owner, long long since_unix,
			  long long target, long long *ret_seconds, struct sl_error *err);

/* Retention (store_retention.c): finished jobs that finished more than
 * max_age_s ago lose their job directory, runs, events, specs and patches;
 * their result moves into the row (or is dropped too, with the row, when
 * drop_results). At most limit jobs per call; *ret_count (may be NULL) gets
 * how many. Freed pages go back to the file (incremental vacuum). */
int store_purge_finished(struct store *s, long long max_age_s, bool drop_results, int limit,
			 int *ret_count, struct sl_error *err);
/* The result a purged job kept in its row: malloc'd text, or -ENOENT. */
int store_job_result_kept(struct store *s, const char *id, char **ret_text, size_t *ret_len,
			  struct sl_error *err);
/* Removes job directories that have no row (a submission killed before
 * this version made the directory only at start). Called by store_open. */
int store_sweep_orphan_dirs(struct store *s, struct sl_error *err);
/* The job as the API shows it, a new reference: {id, name, status,
 * priority, progress, created_at, started_at, finished_at, verdict, error}.
 * ERR_NOT_FOUND (-ENOENT) for an unknown id. */
int store_job_get(struct store *s, const char *id, json_object **ret_job, struct sl_error *err);
/* A new reference to the expanded spec of a job. */
int store_job_expanded(struct store *s, const char *id, json_object **ret_expanded,
		       struct sl_error *err);
/* A page of jobs, newest first, optionally filtered by status (NULL: all):
 * a new reference to an array of job objects, plus the total that match. */
int store_job_list(struct store *s, const char *status, int limit, int offset,
		   json_object **ret_jobs, int64_t *ret_total, struct sl_error *err);
/* Sets a non-final status (building, booting, running, comparing, queued);
 * the first non-queued status sets started_at. Records a "status" event only
 * when the status changes. */
int store_job_set_status(struct store *s, const char *id, const char *status, struct sl_error *err);
/* Stores the progress object (borrowed) and records a "progress" event. */
int store_job_set_progress(struct store *s, const char *id, json_object *progress,
			   struct sl_error *err);
/* Moves the job to a final status (done, failed, cancelled) with an
 * optional verdict and error object (borrowed, may be NULL); sets
 * finished_at and records a "status" event. A job already final is left
 * alone and -EALREADY (ERR_CONFLICT) returned. */
int store_job_finish(struct store *s, const char *id, const char *status, const char *verdict,
		     json_object *error, struct sl_error *err);
/* Puts a job back into the queue ahead of the others (a restart or a
 * shutdown interrupted it); records a "status" event. */
int store_job_requeue_front(struct store *s, const char *id, struct sl_error *err);
/* After a restart: every job left building, booting, running or comparing
 * is re-queued at the front. *ret_count (may be NULL) gets how many. */
int store_requeue_interrupted(struct store *s, int *ret_count, struct sl_error *err);
/* The queued jobs in queue order (front first, then priority, then age):
 * a new reference to an array of {id, priority, front, seq}. */
int store_queued_jobs(struct store *s, json_object **ret_jobs, struct sl_error *err);

/* Stores a finished run (borrowed) under its key ("<variant>#<repeat>").
 * Storing a key twice keeps the first: a run is never redone or lost. */
int store_run_put(struct store *s, const char *id, const char *run_key, json_object *run,
		  struct sl_error *err);
/* A new reference to a stored run, or -ENOENT (ERR_NOT_FOUND). */
int store_run_get(struct store *s, const char *id, const char *run_key, json_object **ret_run,
		  struct sl_error *err);
/* Number of stored runs of a job. */
int store_run_count(struct store *s, const char *id, int *ret_count, struct sl_error *err);

/* Appends an event; data (borrowed) may be NULL. *ret_event_id may be NULL. */
int store_event_add(struct store *s, const char *id, const char *type, json_object *data,
		    int64_t *ret_event_id, struct sl_error *err);
/* Calls fn(cls, job_id) as each event is recorded (any type, any job),
 * with the store's lock held: fn must not block or call the store. The
 * HTTP server wakes the job's event streams with it. fn NULL removes it. */
void store_set_event_hook(struct store *s, void (*fn)(void *cls, const char *job_id), void *cls);
/* Events of a job with an id greater than after_id, oldest first, at most
 * limit: a new reference to an array of {id, ts, type, data}. */
int store_events_after(struct store *s, const char *id, int64_t after_id, int limit,
		       json_object **ret_events, struct sl_error *err);

/* Fills comparisons (one row per result comparison) and kernel_builds from
 * a finished result (borrowed), and, when the job bisects a change point,
 * its answer (change_point_bisections), in one transaction. Replaces
 * earlier rows of the same job. */
int store_result_index(struct store *s, const char *id, json_object *result, struct sl_error *err);

/* The service's /metrics counters (counters.h), kept by the store as rows
 * change and seeded from the database at open. Borrowed; lives as long as
 * the store. */
struct counters *store_counters(struct store *s);

/* New references: {status: count} for jobs and for runs (counts from the
 * database; the counters are seeded with them at open). */
int store_job_counts(struct store *s, json_object **ret_counts, struct sl_error *err);
int store_run_counts(struct store *s, json_object **ret_counts, struct sl_error *err);
/* Arrays of doubles: build seconds of kernels that were really built (not
 * taken from the cache), and boot seconds of every stored run. */
int store_build_seconds(struct store *s, json_object **ret_values, struct sl_error *err);
int store_boot_seconds(struct store *s, json_object **ret_values, struct sl_error *err);

/* ---- nightly (store_nightly.c) ---- */

/* A schedule's row: the last slot handled (run, or skipped at first
 * sight), and its last job. */
struct store_schedule_state {
	bool found;
	int64_t last_slot; /* seconds since the epoch */
	char last_job_id[STORE_ID_LEN + 1];
	char last_run_at[32];
	char last_error[512];
};
int store_schedule_get(struct store *s, const char *name, struct store_schedule_state *ret,
		       struct sl_error *err);
/* Records slot as handled without a job: the first sight of a schedule, or
 * an enqueue that failed (error, may be NULL). */
int store_schedule_mark(struct store *s, const char *name, int64_t slot, const char *error,
			struct sl_error *err);
/* Records a change point (key: series, variant, workload, metric and the
 * first night after) with its payload; *ret_new is false when it was
 * recorded before (already alerted). */
int store_change_point_claim(struct store *s, const char *key, const char *series,
			     json_object *payload, bool *ret_new, struct sl_error *err);
/* A change point's bisection (change_point_bisect.h). The
 * link is made by store_job_submit (store_new_job.change_point), the answer
 * by store_result_index when the job's result is stored.
 * store_bisection_none: 0 when change point key has no bisection,
 * ERR_CONFLICT at "change_point" naming its job when it has one (the
 * error store_job_submit gives a second link). */
int store_bisection_none(struct store *s, const char *key, struct sl_error *err);
/* The bisection job started for a change point of series and variant
 * (NULL: the baseline's) over the commits from..to, cancelled ones left out,
 * into ret_job (STORE_ID_LEN + 1) with its commits (a new reference);
 * -ENOENT when none. */
int store_bisection_of_range(struct store *s, const char *series, const char *variant,
			     const char *from, const char *to, char *ret_job,
			     json_object **ret_commits, struct sl_error *err);
/* Links change point key to the bisection job job_id started for another
 * change point over the same commits (its answer becomes key's too);
 * ERR_CONFLICT when key has a bisection already. */
int store_bisection_share(struct store *s, const char *key, const char *job_id,
			  json_object *commits, struct sl_error *err);
/* The change point job_id bisects (the first, when it bisects several),
 * into ret_key; -ENOENT when none. */
int store_bisection_of_job(struct store *s, const char *job_id, char ret_key[65],
			   struct sl_error *err);
/* One webhook attempt: http_status 0 when no answer came. */
int store_webhook_attempt(struct store *s, const char *key, const char *url, int attempt,
			  long http_status, const char *error, bool delivered,
			  struct sl_error *err);
