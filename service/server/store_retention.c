/* Retention: what a finished job keeps once it is old (store.h,
 * store_purge_finished), and the sweep of job directories without a row.
 * A purged job keeps its row (status, verdict, times, owner), its result
 * (moved from result.json into the row, unless drop_results, which drops
 * the row too) and its comparisons (the trend report); it loses its job
 * directory (logs, kernels, runs), its stored runs and events, its specs
 * and its references to patches, which go once no job refers to them. */
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <time.h>

#include "server/store.h"
#include "server/store-internal.h"
#include "util/fs.h"
#include "util/time.h"

#define RESULT_KEEP_MAX (64u * 1024 * 1024)
#define VACUUM_PAGES	4096

/* Caller holds the lock. The ids of up to limit jobs to purge. */
static int expired_locked(struct store *s, const char *cutoff, int limit, json_object *ids,
			  struct sl_error *err)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r =
	    store_db_prepare(s,
			     "SELECT id FROM jobs WHERE purged_at IS NULL AND finished_at IS NOT "
			     "NULL AND finished_at <= ? AND status IN ('done','failed',"
			     "'cancelled') ORDER BY finished_at LIMIT ?;",
			     &st, err);
	if (r < 0)
		return r;
	bind_text(st, 1, cutoff);
	sqlite3_bind_int(st, 2, limit);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		json_object_array_add(ids, column_string(st, 0));
	return rc == SQLITE_DONE ? 0 : store_db_error(s, err, "find expired jobs");
}

static int exec_id_locked(struct store *s, const char *sql, const char *id, const char *text,
			  struct sl_error *err)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_db_prepare(s, sql, &st, err);
	if (r < 0)
		return r;
	bind_text(st, 1, id);
	if (sqlite3_bind_parameter_count(st) >= 2)
		bind_text(st, 2, text);
	if (sqlite3_step(st) != SQLITE_DONE)
		return store_db_error(s, err, "purge an expired job");
	return 0;
}

/* Caller holds the lock. One job's purge, in one transaction; the
 * directory goes after the commit (a crash in between leaves a directory
 * that the sweep at the next start removes, never a row without data it
 * claims). */
static int purge_one_locked(struct store *s, const char *id, bool drop_results, const char *now,
			    struct sl_error *err)
{
	_cleanup_free_ char *dir = store_job_dir(s, id);
	_cleanup_free_ char *result_path = dir ? fs_path_join(dir, "result.json") : NULL;
	_cleanup_free_ char *result = NULL;
	if (!drop_results && result_path && fs_exists(result_path))
		(void)fs_read_file(result_path, RESULT_KEEP_MAX, &result, NULL, NULL);
	char status[32] = "";
	if (drop_results) {
		_cleanup_stmt_ sqlite3_stmt *st = NULL;
		if (store_db_prepare(s, "SELECT status FROM jobs WHERE id = ?;", &st, NULL) >= 0) {
			bind_text(st, 1, id);
			if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
				snprintf(status, sizeof(status), "%s",
					 (const char *)sqlite3_column_text(st, 0));
		}
	}
	int r = store_db_exec(s, "BEGIN IMMEDIATE;", err);
	if (r < 0)
		return r;
	if ((r = store_blobs_release_locked(s, id, err)) < 0 ||
	    (r = exec_id_locked(s, "DELETE FROM runs WHERE job_id = ?;", id, NULL, err)) < 0 ||
	    (r = exec_id_locked(s, "DELETE FROM events WHERE job_id = ?;", id, NULL, err)) < 0)
		goto fail;
	if (drop_results)
		r = exec_id_locked(s, "DELETE FROM jobs WHERE id = ?;", id, NULL, err);
	else {
		r = exec_id_locked(s,
				   "UPDATE jobs SET spec_json = '{}', expanded_json = '{}', "
				   "progress_json = NULL, stored_bytes = 0, purged_at = ?2 "
				   "WHERE id = ?1;",
				   id, now, err);
		if (r >= 0 && result)
			r = exec_id_locked(s, "UPDATE jobs SET result_json = ?2 WHERE id = ?1;", id,
					   result, err);
	}
	if (r < 0 || (r = store_db_exec(s, "COMMIT;", err)) < 0)
		goto fail;
	if (dir)
		(void)fs_rm_rf(dir, NULL);
	if (drop_results && status[0]) /* the row is gone: the jobs gauge follows */
		counters_job_status(s->counters, status, NULL);
	return 0;
fail:
	store_db_exec(s, "ROLLBACK;", NULL);
	return r;
}

int store_purge_finished(struct store *s, long long max_age_s, bool drop_results, int limit,
			 int *ret_count, struct sl_error *err)
{
	/* finished_at is time_now_iso8601()'s fixed-width form: text order is
	 * time order. */
	char cutoff[TIME_ISO8601_MAX], now[TIME_ISO8601_MAX];
	time_iso8601(time(NULL) - (time_t)max_age_s, cutoff);
	time_now_iso8601(now);
	STORE_LOCK(s);
	_cleanup_json_ json_object *ids = json_object_new_array();
	int r = expired_locked(s, cutoff, limit, ids, err);
	if (r < 0)
		return r;
	size_t n = json_object_array_length(ids);
	for (size_t i = 0; i < n; i++)
		if ((r = purge_one_locked(s,
					  json_object_get_string(json_object_array_get_idx(ids, i)),
					  drop_results, now, err)) < 0)
			return r;
	if (n > 0) {
		char sql[64];
		snprintf(sql, sizeof(sql), "PRAGMA incremental_vacuum(%d);", VACUUM_PAGES);
		if ((r = store_db_exec(s, sql, err)) < 0)
			return r;
	}
	if (ret_count)
		*ret_count = (int)n;
	return 0;
}

int store_job_result_kept(struct store *s, const char *id, char **ret_text, size_t *ret_len,
			  struct sl_error *err)
{
	STORE_LOCK(s);
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_db_prepare(s, "SELECT result_json FROM jobs WHERE id = ?;", &st, err);
	if (r < 0)
		return r;
	bind_text(st, 1, id);
	if (sqlite3_step(st) != SQLITE_ROW || sqlite3_column_type(st, 0) == SQLITE_NULL)
		return error_set(err, ERR_NOT_FOUND, ENOENT, "Job '%.64s' has no stored result.",
				 id);
	size_t len = (size_t)sqlite3_column_bytes(st, 0);
	char *text = malloc(len + 1);
	if (!text)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	memcpy(text, sqlite3_column_text(st, 0), len);
	text[len] = '\0';
	*ret_text = text;
	*ret_len = len;
	return 0;
}

int store_sweep_orphan_dirs(struct store *s, struct sl_error *err)
{
	_cleanup_free_ char *jobs = fs_path_join(s->state_dir, "jobs");
	DIR *d = opendir(jobs);
	if (!d)
		return 0;
	STORE_LOCK(s);
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_db_prepare(s, "SELECT purged_at IS NULL FROM jobs WHERE id = ?;", &st, err);
	if (r < 0) {
		closedir(d);
		return r;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!store_id_valid(de->d_name))
			continue;
		sqlite3_reset(st);
		bind_text(st, 1, de->d_name);
		int rc = sqlite3_step(st);
		/* No row, or a purged one: nothing refers to the directory. */
		if (rc == SQLITE_DONE || (rc == SQLITE_ROW && sqlite3_column_int(st, 0) == 0)) {
			_cleanup_free_ char *dir = fs_path_join(jobs, de->d_name);
			(void)fs_rm_rf(dir, NULL);
		}
	}
	closedir(d);
	return 0;
}
