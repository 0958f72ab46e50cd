/* The store's nightly tables: schedules (each schedule's last
 * slot and job), change_points (those already alerted) and
 * webhook_deliveries (every attempt). See store.h. */
#include <errno.h>
#include <string.h>

#include "server/store.h"
#include "server/store-internal.h"
#include "util/time.h"
#include "util/json_get.h"

static void copy_col(sqlite3_stmt *st, int i, char *buf, size_t size)
{
	const unsigned char *v = sqlite3_column_text(st, i);
	snprintf(buf, size, "%s", v ? (const char *)v : "");
}

int store_schedule_get(struct store *s, const char *name, struct store_schedule_state *ret,
		       struct sl_error *err)
{
	STORE_LOCK(s);
	memset(ret, 0, sizeof(*ret));
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_db_prepare(s,
				 "SELECT last_slot, last_job_id, last_run_at, last_error FROM "
				 "schedules WHERE name = ?;",
				 &st, err);
	if (r < 0)
		return r;
	bind_text(st, 1, name);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return 0;
	if (rc != SQLITE_ROW)
		return store_db_error(s, err, "read a schedule");
	ret->found = true;
	ret->last_slot = sqlite3_column_int64(st, 0);
	copy_col(st, 1, ret->last_job_id, sizeof(ret->last_job_id));
	copy_col(st, 2, ret->last_run_at, sizeof(ret->last_run_at));
	copy_col(st, 3, ret->last_error, sizeof(ret->last_error));
	return 0;
}

int store_schedule_mark(struct store *s, const char *name, int64_t slot, const char *error,
			struct sl_error *err)
{
	STORE_LOCK(s);
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r =
	    store_db_prepare(s,
			     "INSERT INTO schedules(name, last_slot, last_error) VALUES (?,?,?) "
			     "ON CONFLICT(name) DO UPDATE SET last_slot = excluded.last_slot, "
			     "last_error = excluded.last_error;",
			     &st, err);
	if (r < 0)
		return r;
	bind_text(st, 1, name);
	sqlite3_bind_int64(st, 2, slot);
	bind_text(st, 3, error);
	if (sqlite3_step(st) != SQLITE_DONE)
		return store_db_error(s, err, "record a schedule's slot");
	return 0;
}

int store_schedule_claim_locked(struct store *s, const char *name, int64_t slot, const char *job_id,
				const char *now, struct sl_error *err)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_db_prepare(
	    s,
	    "INSERT INTO schedules(name, last_slot, last_job_id, last_run_at, last_error) "
	    "VALUES (?,?,?,?,NULL) ON CONFLICT(name) DO UPDATE SET last_slot = "
	    "excluded.last_slot, last_job_id = excluded.last_job_id, last_run_at = "
	    "excluded.last_run_at, last_error = NULL;",
	    &st, err);
	if (r < 0)
		return r;
	bind_text(st, 1, name);
	sqlite3_bind_int64(st, 2, slot);
	bind_text(st, 3, job_id);
	bind_text(st, 4, now);
	if (sqlite3_step(st) != SQLITE_DONE)
		return store_db_error(s, err, "record a schedule's job");
	return 0;
}

int store_change_point_claim(struct store *s, const char *key, const char *series,
			     json_object *payload, bool *ret_new, struct sl_error *err)
{
	STORE_LOCK(s);
	char now[TIME_ISO8601_MAX];
	time_now_iso8601(now);
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_db_prepare(s,
				 "INSERT OR IGNORE INTO change_points(key, series, detected_at, "
				 "payload_json) VALUES (?,?,?,?);",
				 &st, err);
	if (r < 0)
		return r;
	bind_text(st, 1, key);
	bind_text(st, 2, series);
	bind_text(st, 3, now);
	bind_json(st, 4, payload);
	if (sqlite3_step(st) != SQLITE_DONE)
		return store_db_error(s, err, "record a change point");
	*ret_new = sqlite3_changes(s->db) == 1;
	if (*ret_new)
		counters_change_points(s->counters, 1);
	return 0;
}

int store_webhook_attempt(struct store *s, const char *key, const char *url, int attempt,
			  long http_status, const char *error, bool delivered, struct sl_error *err)
{
	STORE_LOCK(s);
	char now[TIME_ISO8601_MAX];
	time_now_iso8601(now);
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_db_prepare(s,
				 "INSERT INTO webhook_deliveries(change_key, url, attempt, ts, "
				 "http_status, error, delivered) VALUES (?,?,?,?,?,?,?);",
				 &st, err);
	if (r < 0)
		return r;
	bind_text(st, 1, key);
	bind_text(st, 2, url);
	sqlite3_bind_int(st, 3, attempt);
	bind_text(st, 4, now);
	if (http_status > 0)
		sqlite3_bind_int64(st, 5, http_status);
	else
		sqlite3_bind_null(st, 5);
	bind_text(st, 6, error);
	sqlite3_bind_int(st, 7, delivered ? 1 : 0);
	if (sqlite3_step(st) != SQLITE_DONE)
		return store_db_error(s, err, "record a webhook attempt");
	counters_webhook_attempt(s->counters, delivered, 1);
	return 0;
}

/* 0 when change point key has no bisection, else ERR_CONFLICT naming its
 * job. */
static int bisection_none_locked(struct store *s, const char *key, struct sl_error *err)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_db_prepare(s, "SELECT job_id FROM change_point_bisections WHERE key = ?;",
				 &st, err);
	if (r < 0)
		return r;
	bind_text(st, 1, key);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const unsigned char *v = sqlite3_column_text(st, 0);
		return error_set_path(err, ERR_CONFLICT, "change_point",
				      "The change point is bisected already, by job '%.32s'.",
				      v ? (const char *)v : "");
	}
	if (rc != SQLITE_DONE)
		return store_db_error(s, err, "read a change point's bisection");
	return 0;
}

int store_bisection_none(struct store *s, const char *key, struct sl_error *err)
{
	STORE_LOCK(s);
	return bisection_none_locked(s, key, err);
}

int store_bisection_link_locked(struct store *s, const char *key, const char *job_id,
				json_object *commits, const char *now, struct sl_error *err)
{
	int r = bisection_none_locked(s, key, err);
	if (r < 0)
		return r;
	_cleanup_stmt_ sqlite3_stmt *ins = NULL;
	if ((r = store_db_prepare(s,
				  "INSERT INTO change_point_bisections(key, job_id, commits, "
				  "created_at) VALUES (?,?,?,?);",
				  &ins, err)) < 0)
		return r;
	bind_text(ins, 1, key);
	bind_text(ins, 2, job_id);
	bind_text(ins, 3,
		  commits ? json_object_to_json_string_ext(commits, JSON_C_TO_STRING_PLAIN) : "[]");
	bind_text(ins, 4, now);
	if (sqlite3_step(ins) != SQLITE_DONE)
		return store_db_error(s, err, "record a change point's bisection");
	return 0;
}

int store_bisection_of_range(struct store *s, const char *series, const char *variant,
			     const char *from, const char *to, char *ret_job,
			     json_object **ret_commits, struct sl_error *err)
{
	STORE_LOCK(s);
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_db_prepare(
	    s,
	    "SELECT b.job_id, b.commits FROM change_point_bisections b"
	    " JOIN change_points c ON c.key = b.key JOIN jobs j ON j.id = b.job_id"
	    " WHERE c.series = ?1 AND json_extract(c.payload_json, '$.variant') IS ?2"
	    " AND json_extract(c.payload_json, '$.commit_range.from') = ?3"
	    " AND json_extract(c.payload_json, '$.commit_range.to') = ?4"
	    " AND j.status != 'cancelled' ORDER BY b.created_at LIMIT 1;",
	    &st, err);
	if (r < 0)
		return r;
	bind_text(st, 1, series);
	if (variant)
		bind_text(st, 2, variant);
	else
		sqlite3_bind_null(st, 2);
	bind_text(st, 3, from);
	bind_text(st, 4, to);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return -ENOENT;
	if (rc != SQLITE_ROW)
		return store_db_error(s, err, "read the bisections of a commit range");
	copy_col(st, 0, ret_job, STORE_ID_LEN + 1);
	const unsigned char *text = sqlite3_column_text(st, 1);
	*ret_commits = text ? json_tokener_parse((const char *)text) : NULL;
	return 0;
}

int store_bisection_share(struct store *s, const char *key, const char *job_id,
			  json_object *commits, struct sl_error *err)
{
	STORE_LOCK(s);
	char now[TIME_ISO8601_MAX];
	time_now_iso8601(now);
	return store_bisection_link_locked(s, key, job_id, commits, now, err);
}

int store_bisection_of_job(struct store *s, const char *job_id, char ret_key[65],
			   struct sl_error *err)
{
	STORE_LOCK(s);
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_db_prepare(s, "SELECT key FROM change_point_bisections WHERE job_id = ?;",
				 &st, err);
	if (r < 0)
		return r;
	bind_text(st, 1, job_id);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return -ENOENT;
	if (rc != SQLITE_ROW)
		return store_db_error(s, err, "read a job's change point");
	copy_col(st, 0, ret_key, 65);
	return 0;
}

int store_bisection_answer_locked(struct store *s, const char *job_id,
				  const struct model_result *result, struct sl_error *err)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_db_prepare(s, "SELECT commits FROM change_point_bisections WHERE job_id = ?;",
				 &st, err);
	if (r < 0)
		return r;
	bind_text(st, 1, job_id);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return 0; /* not a bisection */
	if (rc != SQLITE_ROW)
		return store_db_error(s, err, "read a job's change point");
	const unsigned char *text = sqlite3_column_text(st, 0);
	_cleanup_json_ json_object *commits = text ? json_tokener_parse((const char *)text) : NULL;

	json_object *b = result->bisection;
	json_object *certain = json_member(b, "certain"), *steps = json_member(b, "steps");
	const char *state = NULL, *first_bad = NULL, *subject = NULL;
	int is_certain = -1, n_steps = 0;
	if (b) {
		state = json_member_string(b, "status") ? json_member_string(b, "status") : "error";
		first_bad = json_member_string(b, "first_bad_commit");
		subject = json_member_string(b, "first_bad_subject");
		is_certain = certain ? json_object_get_boolean(certain) : -1;
		n_steps = json_object_is_type(steps, json_type_array)
			      ? (int)json_object_array_length(steps)
			      : 0;
	} else {
		/* Not bisected: the whole range passed (or stayed
		 * inconclusive), or the range is one commit, which is the
		 * answer when the job's verdict is fail. */
		const char *verdict = result->verdict;
		json_object *only = json_object_is_type(commits, json_type_array) &&
					    json_object_array_length(commits) == 1
					? json_object_array_get_idx(commits, 0)
					: NULL;
		if (verdict && strcmp(verdict, "pass") == 0)
			state = "no_regression";
		else if (!verdict || strcmp(verdict, "fail") != 0)
			state = "inconclusive";
		else if (only) {
			state = "found";
			first_bad = json_member_string(only, "commit");
			subject = json_member_string(only, "subject");
			is_certain = 1;
		} else
			state = "error";
	}
	_cleanup_stmt_ sqlite3_stmt *up = NULL;
	if ((r = store_db_prepare(
		 s,
		 "UPDATE change_point_bisections SET state = ?, first_bad_commit = "
		 "?, first_bad_subject = ?, certain = ?, steps = ? WHERE job_id = ?;",
		 &up, err)) < 0)
		return r;
	bind_text(up, 1, state);
	bind_text(up, 2, first_bad);
	bind_text(up, 3, subject);
	if (is_certain < 0)
		sqlite3_bind_null(up, 4);
	else
		sqlite3_bind_int(up, 4, is_certain);
	sqlite3_bind_int(up, 5, n_steps);
	bind_text(up, 6, job_id);
	if (sqlite3_step(up) != SQLITE_DONE)
		return store_db_error(s, err, "record a bisection's answer");
	return 0;
}
