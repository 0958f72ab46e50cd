/* What the store's files share (store.c, store_jobs.c, store_index.c): the
 * store itself, its lock, and thin wrappers around SQLite statements. Not
 * for use outside service/server/store*.c.
 *
 * This header does not include store.h (store.c includes both), so the
 * include graph stays acyclic. */
#pragma once

#include <pthread.h>
#include <stdbool.h>
#include <sqlite3.h>
#include <stdint.h>

#include "compare/result_model.h"
#include "server/counters.h"
#include "util/error.h"
#include "util/json.h"

struct store {
	sqlite3 *db;
	char *state_dir;
	pthread_mutex_t lock; /* serializes every use of db */
	/* store_set_event_hook; under lock */
	void (*event_hook)(void *cls, const char *job_id);
	void *event_hook_cls;
	struct counters *counters; /* owned; counters.h has its own lock */
};

/* Seeds s->counters from the database; store_open calls it once
 * (store_index.c). */
int store_counters_seed(struct store *s, struct sl_error *err);

/* Sets err to "The job store failed to <what>: <sqlite message>." and
 * returns its negative errno (-EIO). */
int store_db_error(struct store *s, struct sl_error *err, const char *what);
/* Runs one or more SQL statements without results; 0 or a negative errno
 * with err set (err may be NULL). */
int store_db_exec(struct store *s, const char *sql, struct sl_error *err);
/* Prepares sql into *ret (the caller finalizes it, see _cleanup_stmt_);
 * 0 or a negative errno with err set. */
int store_db_prepare(struct store *s, const char *sql, sqlite3_stmt **ret, struct sl_error *err);

/* store_blobs.c, caller holding the lock: a new copy of doc (borrowed)
 * with each inline file's "content" moved into the blobs table under its
 * SHA-256 ("content_sha256" left in its place) and recorded for job_id;
 * the reverse, in place; and dropping job_id's references (and the blobs
 * no job refers to any more). */
int store_blobs_put_locked(struct store *s, const char *job_id, json_object *doc,
			   json_object **ret_slim, struct sl_error *err);
int store_blobs_load_locked(struct store *s, json_object *doc, struct sl_error *err);
int store_blobs_release_locked(struct store *s, const char *job_id, struct sl_error *err);

/* store_nightly.c, caller holding the lock inside a transaction: the
 * schedule's row says slot was run as job_id. */
int store_schedule_claim_locked(struct store *s, const char *name, int64_t slot, const char *job_id,
				const char *now, struct sl_error *err);
/* store_nightly.c, the same: links change point key to job_id (its
 * bisection); ERR_CONFLICT (-EEXIST) naming the job when one exists. */
int store_bisection_link_locked(struct store *s, const char *key, const char *job_id,
				json_object *commits, const char *now, struct sl_error *err);
/* store_nightly.c, the same: when job_id bisects a change point, its row
 * takes the answer from the job's result (borrowed, read through the
 * result model by store_result_index()): the state is the
 * result's bisection.status ("found", "error") with its first bad commit,
 * subject, certainty and steps; without a bisection "no_regression" for a
 * pass, "inconclusive", or for a fail "found" naming a range's only commit
 * ("error" for more). A job that ends with no result keeps no answer: its
 * status stands for it (server/store_trend.c). */
int store_bisection_answer_locked(struct store *s, const char *job_id,
				  const struct model_result *result, struct sl_error *err);

static inline void stmt_finalizep(sqlite3_stmt **st)
{
	if (*st)
		sqlite3_finalize(*st);
}
#define _cleanup_stmt_ _cleanup_(stmt_finalizep)

static inline void unlockp(pthread_mutex_t **m)
{
	if (*m)
		pthread_mutex_unlock(*m);
}
/* Holds the store's mutex until the end of the scope. */
#define STORE_LOCK(s)                                                                              \
	_cleanup_(unlockp) pthread_mutex_t *_lock_ = &(s)->lock;                                   \
	pthread_mutex_lock(_lock_)

/* Binds text, or NULL for a NULL pointer. */
static inline void bind_text(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

/* Binds o (borrowed) as plain JSON text, or NULL for a NULL pointer. */
static inline void bind_json(sqlite3_stmt *st, int i, json_object *o)
{
	if (o)
		sqlite3_bind_text(st, i, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
				  -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

/* A new reference to column i parsed as JSON; NULL for SQL NULL or text
 * that is not strict JSON. */
static inline json_object *column_json(sqlite3_stmt *st, int i)
{
	/* The store wrote it: no size limit beyond json-c's own. */
	const struct json_limits lim = {.max_bytes = SIZE_MAX};
	const char *t = (const char *)sqlite3_column_text(st, i);
	json_object *o = NULL;

	if (t)
		(void)json_parse_strict(t, (size_t)sqlite3_column_bytes(st, i), &lim, "stored JSON",
					&o, NULL);
	return o;
}

/* A new JSON string of column i; NULL for SQL NULL. */
static inline json_object *column_string(sqlite3_stmt *st, int i)
{
	const char *t = (const char *)sqlite3_column_text(st, i);
	return t ? json_object_new_string(t) : NULL;
}
