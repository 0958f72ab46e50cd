/* Job rows of the store: creation, reads and listing, status transitions,
 * the queue order, stored runs and the event log that Server-Sent Events
 * replay. Status changes and their "status" events are written under one
 * lock, so a reader never sees one without the other. */
#include <errno.h>
#include <string.h>

#include "server/store.h"
#include "server/store-internal.h"
#include "util/time.h"
#include "util/fs.h"
#include "util/redact.h"
#include <time.h>

/* Caller holds the lock. */
static int event_add_locked(struct store *s, const char *id, const char *type, json_object *data,
			    int64_t *ret_event_id, struct sl_error *err)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_db_prepare(
	    s, "INSERT INTO events(job_id, ts, type, data_json) VALUES (?,?,?,?);", &st, err);
	if (r < 0)
		return r;
	char now[TIME_ISO8601_MAX];
	time_now_iso8601(now);
	bind_text(st, 1, id);
	bind_text(st, 2, now);
	bind_text(st, 3, type);
	bind_json(st, 4, data);
	if (sqlite3_step(st) != SQLITE_DONE)
		return store_db_error(s, err, "record an event");
	if (ret_event_id)
		*ret_event_id = sqlite3_last_insert_rowid(s->db);
	if (s->event_hook)
		s->event_hook(s->event_hook_cls, id);
	return 0;
}

void store_set_event_hook(struct store *s, void (*fn)(void *cls, const char *job_id), void *cls)
{
	STORE_LOCK(s);
	s->event_hook = fn;
	s->event_hook_cls = cls;
}

int store_event_add(struct store *s, const char *id, const char *type, json_object *data,
		    int64_t *ret_event_id, struct sl_error *err)
{
	STORE_LOCK(s);
	return event_add_locked(s, id, type, data, ret_event_id, err);
}

static int status_event_locked(struct store *s, const char *id, const char *status,
			       const char *verdict, struct sl_error *err)
{
	_cleanup_json_ json_object *d = json_object_new_object();
	json_object_object_add(d, "status", json_object_new_string(status));
	if (verdict)
		json_object_object_add(d, "verdict", json_object_new_string(verdict));
	return event_add_locked(s, id, "status", d, NULL, err);
}

int store_job_submit(struct store *s, const char *id, const struct store_new_job *j,
		     struct sl_error *err)
{
	if (!store_id_valid(id))
		return error_set(err, ERR_INVALID, EINVAL, "Job id '%.64s' is not valid.", id);
	STORE_LOCK(s);
	int r = store_db_exec(s, "BEGIN IMMEDIATE;", err);
	if (r < 0)
		return r;
	_cleanup_json_ json_object *spec = NULL, *expanded = NULL;
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	if ((r = store_blobs_put_locked(s, id, j->spec, &spec, err)) < 0 ||
	    (r = store_blobs_put_locked(s, id, j->expanded, &expanded, err)) < 0 ||
	    (r = store_db_prepare(s,
				  "INSERT INTO jobs(id, name, status, priority, spec_json, "
				  "expanded_json, created_at, owner, submitted_unix, budget_s, "
				  "stored_bytes) VALUES (?,?,'queued',?,?,?,?,?,?,?,?);",
				  &st, err)) < 0)
		goto fail;
	char now[TIME_ISO8601_MAX];
	time_now_iso8601(now);
	bind_text(st, 1, id);
	bind_text(st, 2, j->name ? j->name : "");
	sqlite3_bind_int(st, 3, j->priority);
	bind_json(st, 4, spec);
	bind_json(st, 5, expanded);
	bind_text(st, 6, now);
	bind_text(st, 7, j->owner ? j->owner : "");
	sqlite3_bind_int64(st, 8, (sqlite3_int64)time(NULL));
	sqlite3_bind_int64(st, 9, j->budget_s);
	sqlite3_bind_int64(st, 10, j->bytes);
	if (sqlite3_step(st) != SQLITE_DONE) {
		r = store_db_error(s, err, "store a new job");
		goto fail;
	}
	if ((r = status_event_locked(s, id, "queued", NULL, err)) < 0 ||
	    (j->schedule && (r = store_schedule_claim_locked(s, j->schedule, j->schedule_slot, id,
							     now, err)) < 0) ||
	    (j->change_point && (r = store_bisection_link_locked(
				     s, j->change_point, id, j->bisect_commits, now, err)) < 0) ||
	    (r = store_db_exec(s, "COMMIT;", err)) < 0)
		goto fail;
	counters_job_status(s->counters, NULL, "queued");
	return 0;
fail:
	store_db_exec(s, "ROLLBACK;", NULL);
	return r;
}

int store_job_create(struct store *s, const char *id, const char *name, int priority,
		     json_object *spec, json_object *expanded, struct sl_error *err)
{
	const struct store_new_job j = {
	    .name = name, .owner = "", .priority = priority, .spec = spec, .expanded = expanded};
	return store_job_submit(s, id, &j, err);
}

/* Caller holds the lock. The one text column sql selects for job id
 * (bound to its one parameter) into buf; ERR_NOT_FOUND if no such job. */
static int job_column_locked(struct store *s, const char *id, const char *sql, char *buf,
			     size_t size, const char *what, struct sl_error *err)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_db_prepare(s, sql, &st, err);
	if (r < 0)
		return r;
	bind_text(st, 1, id);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return error_set(err, ERR_NOT_FOUND, ENOENT, "Job '%.64s' does not exist.", id);
	if (rc != SQLITE_ROW)
		return store_db_error(s, err, what);
	const unsigned char *v = sqlite3_column_text(st, 0);
	snprintf(buf, size, "%s", v ? (const char *)v : "");
	return 0;
}

int store_job_owner(struct store *s, const char *id, char ret_owner[80], struct sl_error *err)
{
	STORE_LOCK(s);
	return job_column_locked(s, id, "SELECT owner FROM jobs WHERE id = ?;", ret_owner, 80,
				 "read a job's owner", err);
}

int store_usage(struct store *s, const char *owner, long long since_unix,
		struct store_usage *ret_usage, struct sl_error *err)
{
	STORE_LOCK(s);
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_db_prepare(
	    s,
	    "SELECT (SELECT COUNT(*) FROM jobs WHERE status = 'queued'),"
	    " (SELECT COUNT(*) FROM jobs WHERE status = 'queued' AND owner = ?1),"
	    " (SELECT COALESCE(SUM(stored_bytes), 0) FROM jobs WHERE owner = ?1 AND purged_at IS "
	    "NULL),"
	    " (SELECT COALESCE(SUM(budget_s), 0) FROM jobs WHERE owner = ?1 AND submitted_unix >= "
	    "?2"
	    "  AND NOT (status = 'cancelled' AND started_at IS NULL)),"
	    " (SELECT COALESCE(MIN(submitted_unix), 0) FROM jobs WHERE owner = ?1 AND "
	    "submitted_unix >= ?2 AND NOT (status = 'cancelled' AND started_at IS NULL));",
	    &st, err);
	if (r < 0)
		return r;
	bind_text(st, 1, owner);
	sqlite3_bind_int64(st, 2, since_unix);
	if (sqlite3_step(st) != SQLITE_ROW)
		return store_db_error(s, err, "count a token's jobs");
	ret_usage->queued_total = sqlite3_column_int(st, 0);
	ret_usage->queued_owner = sqlite3_column_int(st, 1);
	ret_usage->bytes_owner = sqlite3_column_int64(st, 2);
	ret_usage->budget_owner = sqlite3_column_int64(st, 3);
	ret_usage->oldest_unix = sqlite3_column_int64(st, 4);
	return 0;
}

int store_budget_frees_in(struct store *s, const char *owner, long long since_unix,
			  long long target, long long *ret_seconds, struct sl_error *err)
{
	STORE_LOCK(s);
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_db_prepare(
	    s,
	    "SELECT submitted_unix, budget_s FROM jobs WHERE owner = ?1 AND submitted_unix >= ?2 "
	    "AND NOT (status = 'cancelled' AND started_at IS NULL) ORDER BY submitted_unix DESC;",
	    &st, err);
	if (r < 0)
		return r;
	bind_text(st, 1, owner);
	sqlite3_bind_int64(st, 2, since_unix);
	/* Newest first: the budget still counted once every older job has
	 * left the window; the first job that pushes it over target is the
	 * one that must leave. */
	long long kept = 0;
	int rc;
	*ret_seconds = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		kept += sqlite3_column_int64(st, 1);
		if (kept > target) {
			*ret_seconds = sqlite3_column_int64(st, 0) - since_unix + 1;
			break;
		}
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_db_error(s, err, "sum a token's budgets");
	if (target < 0)
		*ret_seconds = -1;
	return 0;
}

#define JOB_COLUMNS                                                                                \
	"id, name, status, priority, progress_json, created_at, started_at, finished_at, "         \
	"verdict, error_json"

static json_object *job_from_row(sqlite3_stmt *st)
{
	json_object *j = json_object_new_object();
	json_object_object_add(j, "id", column_string(st, 0));
	json_object_object_add(j, "name", column_string(st, 1));
	json_object_object_add(j, "status", column_string(st, 2));
	json_object_object_add(j, "priority", json_object_new_int(sqlite3_column_int(st, 3)));
	json_object *p = column_json(st, 4);
	if (!p) {
		p = json_object_new_object();
		json_object_object_add(p, "phase", column_string(st, 2));
		json_object_object_add(p, "percent", json_object_new_double(0));
		json_object_object_add(p, "run_index", json_object_new_int(0));
		json_object_object_add(p, "run_total", json_object_new_int(0));
		json_object_object_add(p, "message", json_object_new_string(""));
	}
	json_object_object_add(j, "progress", p);
	json_object_object_add(j, "created_at", column_string(st, 5));
	json_object_object_add(j, "started_at", column_string(st, 6));
	json_object_object_add(j, "finished_at", column_string(st, 7));
	json_object_object_add(j, "verdict", column_string(st, 8));
	json_object_object_add(j, "error", column_json(st, 9));
	return j;
}

int store_job_get(struct store *s, const char *id, json_object **ret_job, struct sl_error *err)
{
	STORE_LOCK(s);
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_db_prepare(s, "SELECT " JOB_COLUMNS " FROM jobs WHERE id = ?;", &st, err);
	if (r < 0)
		return r;
	bind_text(st, 1, id);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return error_set(err, ERR_NOT_FOUND, ENOENT, "Job '%.64s' does not exist.", id);
	if (rc != SQLITE_ROW)
		return store_db_error(s, err, "read a job");
	*ret_job = job_from_row(st);
	return 0;
}

int store_job_expanded(struct store *s, const char *id, json_object **ret_expanded,
		       struct sl_error *err)
{
	STORE_LOCK(s);
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_db_prepare(s, "SELECT expanded_json FROM jobs WHERE id = ?;", &st, err);
	if (r < 0)
		return r;
	bind_text(st, 1, id);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return error_set(err, ERR_NOT_FOUND, ENOENT, "Job '%.64s' does not exist.", id);
	if (rc != SQLITE_ROW)
		return store_db_error(s, err, "read a job's spec");
	_cleanup_json_ json_object *e = column_json(st, 0);
	if (!e)
		return error_set(err, ERR_INTERNAL, EIO, "The stored spec of job '%s' is not JSON.",
				 id);
	if ((r = store_blobs_load_locked(s, e, err)) < 0)
		return r;
	*ret_expanded = TAKE_PTR(e);
	return 0;
}

int store_job_list(struct store *s, const char *status, int limit, int offset,
		   json_object **ret_jobs, int64_t *ret_total, struct sl_error *err)
{
	STORE_LOCK(s);
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	_cleanup_stmt_ sqlite3_stmt *ct = NULL;
	int r =
	    store_db_prepare(s,
			     "SELECT " JOB_COLUMNS " FROM jobs WHERE (?1 IS NULL OR status = ?1) "
			     "ORDER BY rowid DESC LIMIT ?2 OFFSET ?3;",
			     &st, err);
	if (r < 0)
		return r;
	if ((r = store_db_prepare(s, "SELECT COUNT(*) FROM jobs WHERE (?1 IS NULL OR status = ?1);",
				  &ct, err)) < 0)
		return r;
	bind_text(st, 1, status);
	sqlite3_bind_int(st, 2, limit);
	sqlite3_bind_int(st, 3, offset);
	bind_text(ct, 1, status);
	_cleanup_json_ json_object *arr = json_object_new_array();
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		json_object_array_add(arr, job_from_row(st));
	if (rc != SQLITE_DONE)
		return store_db_error(s, err, "list jobs");
	if (sqlite3_step(ct) != SQLITE_ROW)
		return store_db_error(s, err, "count jobs");
	if (ret_total)
		*ret_total = sqlite3_column_int64(ct, 0);
	*ret_jobs = TAKE_PTR(arr);
	return 0;
}

/* Caller holds the lock. Reads the status into buf; -ENOENT if no such job. */
static int status_locked(struct store *s, const char *id, char buf[16], struct sl_error *err)
{
	return job_column_locked(s, id, "SELECT status FROM jobs WHERE id = ?;", buf, 16,
				 "read a job's status", err);
}

/* Caller holds the lock. A job leaving the queue for the first time: its
 * wait since submission goes to the queue-wait histogram. */
static void observe_queue_wait_locked(struct store *s, const char *id)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	if (store_db_prepare(s,
			     "SELECT (julianday('now') - julianday(created_at)) * 86400.0 "
			     "FROM jobs WHERE id = ? AND started_at IS NULL;",
			     &st, NULL) < 0)
		return;
	bind_text(st, 1, id);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		counters_queue_wait(s->counters, sqlite3_column_double(st, 0));
}

int store_job_set_status(struct store *s, const char *id, const char *status, struct sl_error *err)
{
	if (!store_status_valid(status) || store_status_is_final(status))
		return error_set(err, ERR_INTERNAL, EINVAL,
				 "Status '%s' cannot be set without finishing the job.", status);
	STORE_LOCK(s);
	char old[16];
	int r = status_locked(s, id, old, err);
	if (r < 0)
		return r;
	if (strcmp(old, status) == 0)
		return 0;
	if (store_status_is_final(old))
		return error_set(err, ERR_CONFLICT, EALREADY, "Job '%s' is already %s.", id, old);
	if (strcmp(old, "queued") == 0)
		observe_queue_wait_locked(s, id);
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	if ((r = store_db_prepare(
		 s,
		 "UPDATE jobs SET status = ?2, started_at = CASE WHEN ?2 != 'queued' "
		 "THEN COALESCE(started_at, ?3) ELSE started_at END WHERE id = ?1;",
		 &st, err)) < 0)
		return r;
	char now[TIME_ISO8601_MAX];
	time_now_iso8601(now);
	bind_text(st, 1, id);
	bind_text(st, 2, status);
	bind_text(st, 3, now);
	if (sqlite3_step(st) != SQLITE_DONE)
		return store_db_error(s, err, "update a job's status");
	counters_job_status(s->counters, old, status);
	return status_event_locked(s, id, status, NULL, err);
}

int store_job_set_progress(struct store *s, const char *id, json_object *progress,
			   struct sl_error *err)
{
	STORE_LOCK(s);
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_db_prepare(s, "UPDATE jobs SET progress_json = ? WHERE id = ?;", &st, err);
	if (r < 0)
		return r;
	bind_json(st, 1, progress);
	bind_text(st, 2, id);
	if (sqlite3_step(st) != SQLITE_DONE)
		return store_db_error(s, err, "store a job's progress");
	return event_add_locked(s, id, "progress", progress, NULL, err);
}

int store_job_finish(struct store *s, const char *id, const char *status, const char *verdict,
		     json_object *error, struct sl_error *err)
{
	if (!store_status_is_final(status))
		return error_set(err, ERR_INTERNAL, EINVAL, "Status '%s' is not final.", status);
	STORE_LOCK(s);
	char old[16];
	int r = status_locked(s, id, old, err);
	if (r < 0)
		return r;
	if (store_status_is_final(old))
		return error_set(err, ERR_CONFLICT, EALREADY, "Job '%s' is already %s.", id, old);
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	if ((r = store_db_prepare(s,
				  "UPDATE jobs SET status = ?2, verdict = ?3, error_json = ?4, "
				  "finished_at = ?5, queue_front = 0 WHERE id = ?1;",
				  &st, err)) < 0)
		return r;
	char now[TIME_ISO8601_MAX];
	time_now_iso8601(now);
	bind_text(st, 1, id);
	bind_text(st, 2, status);
	bind_text(st, 3, verdict);
	/* The error is shown by the API: no host paths in it. */
	_cleanup_json_ json_object *shown = NULL;
	json_object *msg = NULL;
	if (error && json_object_deep_copy(error, &shown, NULL) == 0 &&
	    json_object_object_get_ex(shown, "message", &msg) &&
	    json_object_is_type(msg, json_type_string)) {
		char clean[2048];
		redact_host_paths(json_object_get_string(msg), clean, sizeof(clean));
		json_object_object_add(shown, "message", json_object_new_string(clean));
	}
	bind_json(st, 4, shown ? shown : error);
	bind_text(st, 5, now);
	/* The status and its event in one transaction: a write that fails half
	 * way (a full disk) leaves the job as it was, so the caller's retry
	 * finds it unfinished rather than "already done" with no event. */
	if ((r = store_db_exec(s, "BEGIN IMMEDIATE;", err)) < 0)
		return r;
	if (sqlite3_step(st) != SQLITE_DONE)
		r = store_db_error(s, err, "finish a job");
	else
		r = status_event_locked(s, id, status, verdict, err);
	if (r >= 0)
		r = store_db_exec(s, "COMMIT;", err);
	if (r < 0) {
		store_db_exec(s, "ROLLBACK;", NULL);
		return r;
	}
	counters_job_status(s->counters, old, status);
	counters_job_finished(s->counters, status, verdict, 1);
	return 0;
}

int store_job_requeue_front(struct store *s, const char *id, struct sl_error *err)
{
	STORE_LOCK(s);
	char old[16];
	int r = status_locked(s, id, old, err);
	if (r < 0)
		return r;
	if (store_status_is_final(old))
		return error_set(err, ERR_CONFLICT, EALREADY, "Job '%s' is already %s.", id, old);
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	if ((r = store_db_prepare(
		 s, "UPDATE jobs SET status = 'queued', queue_front = 1 WHERE id = ?;", &st, err)) <
	    0)
		return r;
	bind_text(st, 1, id);
	if (sqlite3_step(st) != SQLITE_DONE)
		return store_db_error(s, err, "re-queue a job");
	counters_job_status(s->counters, old, "queued");
	return status_event_locked(s, id, "queued", NULL, err);
}

int store_requeue_interrupted(struct store *s, int *ret_count, struct sl_error *err)
{
	_cleanup_json_ json_object *ids = json_object_new_array();
	{
		STORE_LOCK(s);
		_cleanup_stmt_ sqlite3_stmt *st = NULL;
		int r =
		    store_db_prepare(s,
				     "SELECT id FROM jobs WHERE status IN "
				     "('building','booting','running','comparing') ORDER BY rowid;",
				     &st, err);
		if (r < 0)
			return r;
		int rc;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW)
			json_object_array_add(ids, column_string(st, 0));
		if (rc != SQLITE_DONE)
			return store_db_error(s, err, "find interrupted jobs");
	}
	size_t n = json_object_array_length(ids);
	for (size_t i = 0; i < n; i++) {
		int r = store_job_requeue_front(
		    s, json_object_get_string(json_object_array_get_idx(ids, i)), err);
		if (r < 0)
			return r;
	}
	if (ret_count)
		*ret_count = (int)n;
	return 0;
}

int store_queued_jobs(struct store *s, json_object **ret_jobs, struct sl_error *err)
{
	STORE_LOCK(s);
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_db_prepare(
	    s,
	    "SELECT id, priority, queue_front, rowid FROM jobs WHERE status = 'queued' "
	    "ORDER BY queue_front DESC, priority DESC, rowid ASC;",
	    &st, err);
	if (r < 0)
		return r;
	_cleanup_json_ json_object *arr = json_object_new_array();
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_object *j = json_object_new_object();
		json_object_object_add(j, "id", column_string(st, 0));
		json_object_object_add(j, "priority",
				       json_object_new_int(sqlite3_column_int(st, 1)));
		json_object_object_add(j, "front",
				       json_object_new_boolean(sqlite3_column_int(st, 2)));
		json_object_object_add(j, "seq",
				       json_object_new_int64(sqlite3_column_int64(st, 3)));
		json_object_array_add(arr, j);
	}
	if (rc != SQLITE_DONE)
		return store_db_error(s, err, "list queued jobs");
	*ret_jobs = TAKE_PTR(arr);
	return 0;
}

static int run_put_locked(struct store *s, const char *id, const char *run_key, json_object *run,
			  const struct model_run *m, struct sl_error *err);

int store_run_put(struct store *s, const char *id, const char *run_key, json_object *run,
		  struct sl_error *err)
{
	/* Read through the result model first: what the counters take from
	 * it is typed, and a record with a member of the wrong type is refused
	 * before it is stored. */
	struct model_run m;
	int r = model_run_read(run, &m, err);
	if (r < 0)
		return r;
	r = run_put_locked(s, id, run_key, run, &m, err);
	model_run_free(&m);
	return r;
}

static int run_put_locked(struct store *s, const char *id, const char *run_key, json_object *run,
			  const struct model_run *m, struct sl_error *err)
{
	STORE_LOCK(s);
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r =
	    store_db_prepare(s,
			     "INSERT OR IGNORE INTO runs(job_id, run_key, run_json, finished_at) "
			     "VALUES (?,?,?,?);",
			     &st, err);
	if (r < 0)
		return r;
	char now[TIME_ISO8601_MAX];
	time_now_iso8601(now);
	bind_text(st, 1, id);
	bind_text(st, 2, run_key);
	bind_json(st, 3, run);
	bind_text(st, 4, now);
	if (sqlite3_step(st) != SQLITE_DONE)
		return store_db_error(s, err, "store a finished run");
	if (sqlite3_changes(s->db) == 1) { /* not a key stored before */
		counters_run(s->counters, m->status ? m->status : "unknown", 1);
		if (model_has(MODEL_RUN, &m->has, "boot_seconds"))
			counters_boot_seconds(s->counters, m->boot_seconds);
	}
	return 0;
}

int store_run_get(struct store *s, const char *id, const char *run_key, json_object **ret_run,
		  struct sl_error *err)
{
	STORE_LOCK(s);
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_db_prepare(s, "SELECT run_json FROM runs WHERE job_id = ? AND run_key = ?;",
				 &st, err);
	if (r < 0)
		return r;
	bind_text(st, 1, id);
	bind_text(st, 2, run_key);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return error_set(err, ERR_NOT_FOUND, ENOENT,
				 "Run '%.64s' of job '%.64s' is not stored.", run_key, id);
	if (rc != SQLITE_ROW)
		return store_db_error(s, err, "read a stored run");
	json_object *run = column_json(st, 0);
	if (!run)
		return error_set(err, ERR_INTERNAL, EIO, "Stored run '%.64s' is not JSON.",
				 run_key);
	*ret_run = run;
	return 0;
}

int store_run_count(struct store *s, const char *id, int *ret_count, struct sl_error *err)
{
	STORE_LOCK(s);
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_db_prepare(s, "SELECT COUNT(*) FROM runs WHERE job_id = ?;", &st, err);
	if (r < 0)
		return r;
	bind_text(st, 1, id);
	if (sqlite3_step(st) != SQLITE_ROW)
		return store_db_error(s, err, "count runs");
	*ret_count = sqlite3_column_int(st, 0);
	return 0;
}

int store_events_after(struct store *s, const char *id, int64_t after_id, int limit,
		       json_object **ret_events, struct sl_error *err)
{
	STORE_LOCK(s);
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_db_prepare(
	    s,
	    "SELECT id, ts, type, data_json FROM events WHERE job_id = ? AND id > ? "
	    "ORDER BY id LIMIT ?;",
	    &st, err);
	if (r < 0)
		return r;
	bind_text(st, 1, id);
	sqlite3_bind_int64(st, 2, after_id);
	sqlite3_bind_int(st, 3, limit);
	_cleanup_json_ json_object *arr = json_object_new_array();
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_object *e = json_object_new_object();
		json_object_object_add(e, "id", json_object_new_int64(sqlite3_column_int64(st, 0)));
		json_object_object_add(e, "ts", column_string(st, 1));
		json_object_object_add(e, "type", column_string(st, 2));
		json_object_object_add(e, "data", column_json(st, 3));
		json_object_array_add(arr, e);
	}
	if (rc != SQLITE_DONE)
		return store_db_error(s, err, "read events");
	*ret_events = TAKE_PTR(arr);
	return 0;
}
