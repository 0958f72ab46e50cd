/* The trend's reading of the store (report/trend-internal.h): the
 * comparisons grouped into series, the change points' bisections, the
 * keys and series ids, and the store's times. */
#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/trend-internal.h"
#include "report/trend.h"
#include "util/hash.h"
#include "util/macro.h"

void trend_free(struct trend *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->g[i].pts);
	free(t->g);
	free(t->bis);
}

void trend_change_point_key(const char *series, const char *variant, const char *workload,
			    const char *metric, const char *after_job_id, char ret[65])
{
	struct hash_ctx *h = hash_new();
	const char *parts[] = {series, variant ? variant : "", workload, metric, after_job_id};
	for (size_t i = 0; i < ELEMENTSOF(parts); i++) {
		hash_update_str(h, parts[i]);
		hash_update_str(h, "\x1f"); /* a separator no name holds */
	}
	hash_final_hex(h, ret);
}

void trend_series_id(const char *owner, const char *job_name, char *ret, size_t len)
{
	/* the schedule of the same name: the nightly series, known by its
	 * name alone (its keys, alerts and bisections from before owners
	 * were kept stay valid) */
	if (owner && strncmp(owner, "schedule:", 9) == 0 && strcmp(owner + 9, job_name) == 0)
		snprintf(ret, len, "%s", job_name);
	else
		snprintf(ret, len, "%s@%s", job_name, owner && *owner ? owner : "-");
}

int trend_parse_time(const char *s, time_t *ret)
{
	struct tm tm = {0};
	int n = 0;

	if (!s || sscanf(s, "%4d-%2d-%2d%*1[T ]%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
			 &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6)
		return -EINVAL;
	s += n;
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++)
			;
	if (strcmp(s, "Z") != 0 && strcmp(s, "+00:00") != 0 && *s)
		return -EINVAL;
	if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
	    tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60)
		return -EINVAL;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	*ret = timegm(&tm);
	return 0;
}

static void copy_text(char *dst, size_t size, const unsigned char *src)
{
	size_t n = src ? strnlen((const char *)src, size - 1) : 0;

	/* Do not cut a UTF-8 sequence in half. */
	while (n > 0 && n == size - 1 && (src[n] & 0xc0) == 0x80)
		n--;
	memcpy(dst, src ? (const char *)src : "", n);
	dst[n] = '\0';
}

static double column_num(sqlite3_stmt *st, int i)
{
	int type = sqlite3_column_type(st, i);

	if (type != SQLITE_INTEGER && type != SQLITE_FLOAT)
		return NAN;
	return sqlite3_column_double(st, i);
}

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

static struct series_group *group_for(struct trend *t, const char *job, const char *wl,
				      const char *metric, const char *name, const char *owner)
{
	/* Rows arrive ordered by these keys, so the last group is the only
	 * candidate. */
	if (t->n > 0) {
		struct series_group *g = &t->g[t->n - 1];
		if (strcmp(g->job_name, job) == 0 && strcmp(g->workload, wl) == 0 &&
		    strcmp(g->metric, metric) == 0)
			return g;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		struct series_group *g = realloc(t->g, cap * sizeof(*g));
		if (!g)
			abort();
		t->g = g;
		t->cap = cap;
	}
	struct series_group *g = &t->g[t->n++];
	memset(g, 0, sizeof(*g));
	snprintf(g->job_name, sizeof(g->job_name), "%s", job);
	snprintf(g->name, sizeof(g->name), "%s", name);
	snprintf(g->owner, sizeof(g->owner), "%s", owner ? owner : "");
	g->legacy = !owner;
	snprintf(g->workload, sizeof(g->workload), "%s", wl);
	snprintf(g->metric, sizeof(g->metric), "%s", metric);
	return g;
}

/* The change points' bisections; a store from before the table has none. */
static void load_bisections(struct trend *t, sqlite3 *db)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db,
			       "SELECT b.key, b.job_id, COALESCE(b.state, j.status, ''), "
			       "b.first_bad_commit, b.first_bad_subject, b.certain, b.steps "
			       "FROM change_point_bisections b LEFT JOIN jobs j ON j.id = b.job_id "
			       "ORDER BY b.created_at DESC LIMIT ?1;",
			       -1, &st, NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		return;
	}
	sqlite3_bind_int(st, 1, TREND_MAX_BISECTIONS);
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (t->n_bis % 64 == 0) {
			struct trend_bisection *b =
			    realloc(t->bis, (t->n_bis + 64) * sizeof(*t->bis));
			if (!b)
				abort();
			t->bis = b;
		}
		struct trend_bisection *b = &t->bis[t->n_bis++];
		copy_text(b->key, sizeof(b->key), sqlite3_column_text(st, 0));
		copy_text(b->job_id, sizeof(b->job_id), sqlite3_column_text(st, 1));
		copy_text(b->state, sizeof(b->state), sqlite3_column_text(st, 2));
		copy_text(b->first_bad_commit, sizeof(b->first_bad_commit),
			  sqlite3_column_text(st, 3));
		copy_text(b->first_bad_subject, sizeof(b->first_bad_subject),
			  sqlite3_column_text(st, 4));
		b->certain =
		    sqlite3_column_type(st, 5) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 5);
		b->steps = sqlite3_column_int(st, 6);
	}
	sqlite3_finalize(st);
}

/* Loads the comparisons since `since`; only_series (NULL: all) keeps one
 * series' (trend_series_id). A store from before the source_commit column
 * reads as if every commit were unknown; one from before the owner column
 * (schema 5) groups by job name alone, as it did then. */
int trend_load(struct trend *t, const char *db_path, time_t since, const char *only_series,
	       struct sl_error *err)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int r = 0, rc;
	char sql[640];
	/* the job name part of only_series, which the query filters on */
	char only_job[TEXT_MAX] = "";
	if (only_series)
		snprintf(only_job, sizeof(only_job), "%.*s", (int)strcspn(only_series, "@"),
			 only_series);
	static const char *const cols[][2] = {
	    {"source_commit", "owner"}, {"source_commit", "NULL"}, {"NULL", "NULL"}};

	rc = sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL);
	if (rc != SQLITE_OK) {
		r = error_set(err, ERR_INTERNAL, EIO, "Cannot open the store '%s' read-only: %s.",
			      db_path, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
		goto cleanup;
	}
	sqlite3_busy_timeout(db, 5000);
	for (size_t k = 0; k < ELEMENTSOF(cols); k++) {
		snprintf(sql, sizeof(sql),
			 "SELECT job_id, job_name, finished_at, variant, workload, metric, "
			 "baseline_median, candidate_median, change, ci_lo, ci_hi, p_value, "
			 "verdict, %s, %s FROM comparisons %s"
			 "ORDER BY %s, job_name, workload, metric, finished_at, variant LIMIT ?1",
			 cols[k][0], cols[k][1], only_series ? "WHERE job_name = ?2 " : "",
			 cols[k][1]);
		rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
		if (rc == SQLITE_OK)
			break;
	}
	if (rc != SQLITE_OK) {
		r = error_set(err, ERR_INVALID, EINVAL,
			      "The store '%s' has no readable comparisons table: %s.", db_path,
			      sqlite3_errmsg(db));
		goto cleanup;
	}
	sqlite3_bind_int(st, 1, TREND_MAX_ROWS);
	if (only_series)
		sqlite3_bind_text(st, 2, only_job, -1, SQLITE_TRANSIENT);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		char job[TEXT_MAX], wl[TEXT_MAX], metric[TEXT_MAX], owner[TEXT_MAX],
		    series[TEXT_MAX];
		struct point p = {0};

		if (!column_time(st, 2, &p.t) || p.t < since)
			continue;
		copy_text(p.job_id, sizeof(p.job_id), sqlite3_column_text(st, 0));
		copy_text(job, sizeof(job), sqlite3_column_text(st, 1));
		copy_text(p.variant, sizeof(p.variant), sqlite3_column_text(st, 3));
		copy_text(wl, sizeof(wl), sqlite3_column_text(st, 4));
		copy_text(metric, sizeof(metric), sqlite3_column_text(st, 5));
		p.base = column_num(st, 6);
		p.cand = column_num(st, 7);
		p.change = column_num(st, 8);
		p.ci_lo = column_num(st, 9);
		p.ci_hi = column_num(st, 10);
		p.p = column_num(st, 11);
		copy_text(p.verdict, sizeof(p.verdict), sqlite3_column_text(st, 12));
		copy_text(p.commit, sizeof(p.commit), sqlite3_column_text(st, 13));
		bool legacy = sqlite3_column_type(st, 14) == SQLITE_NULL;
		copy_text(owner, sizeof(owner), sqlite3_column_text(st, 14));
		if (legacy)
			memcpy(series, job, sizeof(series));
		else
			trend_series_id(owner, job, series, sizeof(series));
		if (only_series && strcmp(series, only_series) != 0)
			continue;

		struct series_group *g =
		    group_for(t, series, wl, metric, job, legacy ? NULL : owner);
		if (g->n == g->cap) {
			size_t cap = g->cap ? g->cap * 2 : 16;
			struct point *pts = realloc(g->pts, cap * sizeof(*pts));
			if (!pts)
				abort();
			g->pts = pts;
			g->cap = cap;
		}
		g->pts[g->n++] = p;
		t->rows++;
	}
	if (rc != SQLITE_DONE)
		r = error_set(err, ERR_INTERNAL, EIO, "Reading the comparisons of '%s' failed: %s.",
			      db_path, sqlite3_errmsg(db));
	else
		load_bisections(t, db);
cleanup:
	sqlite3_finalize(st);
	sqlite3_close(db);
	return r;
}
