/* The store's query API for the trend (server/store_trend.h): the only
 * SQL that reads comparisons and bisections for report/trend*.c, with the
 * reading of stores older than the current schema. */
#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/store_trend.h"
#include "util/fs.h"
#include "util/macro.h"

static void db_closep(sqlite3 **db)
{
	sqlite3_close(*db);
}

static void stmt_finalizep(sqlite3_stmt **st)
{
	sqlite3_finalize(*st);
}

static double column_num(sqlite3_stmt *st, int i)
{
	int type = sqlite3_column_type(st, i);

	if (type != SQLITE_INTEGER && type != SQLITE_FLOAT)
		return NAN;
	return sqlite3_column_double(st, i);
}

/* finished_at as written by every version: RFC 3339 text, or a number of
 * seconds (milliseconds when large) in hand-made and older stores. */
static bool column_time(sqlite3_stmt *st, int i, time_t *ret)
{
	int type = sqlite3_column_type(st, i);

	if (type == SQLITE_INTEGER || type == SQLITE_FLOAT) {
		double v = sqlite3_column_double(st, i);
		if (v > 1e12) /* milliseconds */
			v /= 1000;
		*ret = (time_t)v;
		return true;
	}
	if (type == SQLITE_TEXT)
		return trend_parse_time((const char *)sqlite3_column_text(st, i), ret) == 0;
	return false;
}

static const char *column_text(sqlite3_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st, i);
}

static int open_ro(const char *state_dir, sqlite3 **ret, char **ret_path, struct sl_error *err)
{
	_cleanup_free_ char *path = fs_path_join(state_dir, "schedlab.db");
	sqlite3 *db = NULL;

	if (!path)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	if (!fs_exists(path))
		return error_set(err, ERR_NOT_FOUND, ENOENT, "The store '%s' does not exist.",
				 path);
	int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL);
	if (rc != SQLITE_OK) {
		int r =
		    error_set(err, ERR_INTERNAL, EIO, "Cannot open the store '%s' read-only: %s.",
			      path, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
		sqlite3_close(db);
		return r;
	}
	/* the service may hold a short write lock (WAL checkpoints) */
	sqlite3_busy_timeout(db, 5000);
	*ret = db;
	*ret_path = TAKE_PTR(path);
	return 0;
}

/* The comparisons query for the newest schema the store has: schema 3
 * added source_commit, schema 5 owner (store.c's migrations). The file is
 * read-only here, so an older store is read as it is, not migrated: a
 * column it lacks reads as NULL, and without owners the rows group by job
 * name alone, as they did then. */
static int prepare_comparisons(sqlite3 *db, const char *path, bool by_job, sqlite3_stmt **ret,
			       struct sl_error *err)
{
	static const char *const cols[][2] = {
	    {"source_commit", "owner"}, {"source_commit", "NULL"}, {"NULL", "NULL"}};
	char sql[640];

	for (size_t k = 0; k < ELEMENTSOF(cols); k++) {
		snprintf(sql, sizeof(sql),
			 "SELECT job_id, job_name, finished_at, variant, workload, metric, "
			 "baseline_median, candidate_median, change, ci_lo, ci_hi, p_value, "
			 "verdict, %s, %s FROM comparisons %s"
			 "ORDER BY %s, job_name, workload, metric, finished_at, variant LIMIT ?1",
			 cols[k][0], cols[k][1], by_job ? "WHERE job_name = ?2 " : "", cols[k][1]);
		if (sqlite3_prepare_v2(db, sql, -1, ret, NULL) == SQLITE_OK)
			return 0;
	}
	return error_set(err, ERR_INVALID, EINVAL,
			 "The store '%s' has no readable comparisons table: %s.", path,
			 sqlite3_errmsg(db));
}

static int read_comparisons(sqlite3 *db, const char *path, time_t since, const char *job_name,
			    const struct store_trend_visitor *v, struct sl_error *err)
{
	_cleanup_(stmt_finalizep) sqlite3_stmt *st = NULL;
	int r = prepare_comparisons(db, path, job_name != NULL, &st, err), rc;

	if (r < 0)
		return r;
	sqlite3_bind_int(st, 1, TREND_MAX_ROWS);
	if (job_name)
		sqlite3_bind_text(st, 2, job_name, -1, SQLITE_TRANSIENT);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct trend_row row = {
		    .job_id = column_text(st, 0),
		    .job_name = column_text(st, 1),
		    .variant = column_text(st, 3),
		    .workload = column_text(st, 4),
		    .metric = column_text(st, 5),
		    .base = column_num(st, 6),
		    .cand = column_num(st, 7),
		    .change = column_num(st, 8),
		    .ci_lo = column_num(st, 9),
		    .ci_hi = column_num(st, 10),
		    .p = column_num(st, 11),
		    .verdict = column_text(st, 12),
		    .commit = column_text(st, 13),
		    .owner = column_text(st, 14),
		};
		/* a time no version writes is no night of the trend */
		if (!column_time(st, 2, &row.t) || row.t < since)
			continue;
		if ((r = v->row(&row, v->userdata, err)) < 0)
			return r;
	}
	if (rc != SQLITE_DONE)
		return error_set(err, ERR_INTERNAL, EIO,
				 "Reading the comparisons of '%s' failed: %s.", path,
				 sqlite3_errmsg(db));
	return 0;
}

static int read_bisections(sqlite3 *db, const struct store_trend_visitor *v, struct sl_error *err)
{
	_cleanup_(stmt_finalizep) sqlite3_stmt *st = NULL;
	int r;

	/* A store from before schema 4 has no such table, and no bisections. */
	if (sqlite3_prepare_v2(db,
			       "SELECT b.key, b.job_id, COALESCE(b.state, j.status, ''), "
			       "b.first_bad_commit, b.first_bad_subject, b.certain, b.steps "
			       "FROM change_point_bisections b LEFT JOIN jobs j ON j.id = b.job_id "
			       "ORDER BY b.created_at DESC LIMIT ?1;",
			       -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_int(st, 1, TREND_MAX_BISECTIONS);
	while (sqlite3_step(st) == SQLITE_ROW) {
		struct trend_bisection_row b = {
		    .key = column_text(st, 0),
		    .job_id = column_text(st, 1),
		    .state = column_text(st, 2),
		    .first_bad_commit = column_text(st, 3),
		    .first_bad_subject = column_text(st, 4),
		    .certain =
			sqlite3_column_type(st, 5) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 5),
		    .steps = sqlite3_column_int(st, 6),
		};
		if ((r = v->bisection(&b, v->userdata, err)) < 0)
			return r;
	}
	return 0;
}

int store_trend_read(const char *state_dir, time_t since, const char *job_name,
		     const struct store_trend_visitor *v, struct sl_error *err)
{
	_cleanup_(db_closep) sqlite3 *db = NULL;
	_cleanup_free_ char *path = NULL;
	int r = open_ro(state_dir, &db, &path, err);

	if (r < 0)
		return r;
	r = read_comparisons(db, path, since, job_name, v, err);
	if (r < 0)
		return r;
	return read_bisections(db, v, err);
}

struct into_trend {
	struct trend *t;
	const char *only_series;
};

static int add_row(const struct trend_row *row, void *userdata, struct sl_error *err)
{
	struct into_trend *in = userdata;
	int r = trend_add_row(in->t, row, in->only_series, err);
	return r < 0 ? r : 0;
}

static int add_bisection(const struct trend_bisection_row *b, void *userdata, struct sl_error *err)
{
	struct into_trend *in = userdata;
	return trend_add_bisection(in->t, b, err);
}

/* The trend of the window, one series' (only_series) or all. */
static int load(const char *state_dir, const char *only_series, long since_seconds, time_t now,
		struct trend **ret, struct sl_error *err)
{
	char job[256] = "";

	if (!state_dir || since_seconds <= 0)
		return error_set(err, ERR_INVALID, EINVAL,
				 "The trend needs a state directory and a positive window.");
	_cleanup_trend_ struct trend *t = trend_new();
	if (!t)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	/* a series id is NAME or NAME@OWNER: the query keeps NAME's rows,
	 * trend_add_row the series' */
	if (only_series)
		snprintf(job, sizeof(job), "%.*s", (int)strcspn(only_series, "@"), only_series);
	struct into_trend in = {t, only_series};
	struct store_trend_visitor v = {add_row, add_bisection, &in};
	int r = store_trend_read(state_dir, now - since_seconds, only_series ? job : NULL, &v, err);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(t);
	return 0;
}

int store_trend_html_at(const char *state_dir, long since_seconds, time_t now, char **ret_html,
			struct sl_error *err)
{
	_cleanup_trend_ struct trend *t = NULL;
	int r = load(state_dir, NULL, since_seconds, now, &t, err);
	if (r < 0)
		return r;
	return trend_render_html(t, since_seconds, now, ret_html, err);
}

int store_trend_html(const char *state_dir, long since_seconds, char **ret_html,
		     struct sl_error *err)
{
	return store_trend_html_at(state_dir, since_seconds, time(NULL), ret_html, err);
}

int store_trend_change_points(const char *state_dir, const char *series, long since_seconds,
			      time_t now, json_object **ret, struct sl_error *err)
{
	_cleanup_trend_ struct trend *t = NULL;
	int r = load(state_dir, series, since_seconds, now, &t, err);
	if (r < 0)
		return r;
	return trend_change_points(t, ret, err);
}
