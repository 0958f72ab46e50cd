/* The store's query API for the trend (server/store_trend.h) against real
 * SQLite files: a store at the current schema (made by store_open), stores
 * from before schema 3 (no source_commit), 4 (no bisections) and 5 (no
 * owner), one without a comparisons table and one that does not exist. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "server/store.h"
#include "server/store_trend.h"
#include "util/fs.h"

#define NOW 1796256000L /* 2026-12-03T00:00:00Z */

struct got_row {
	char job_id[40], job_name[40], variant[40], workload[40], metric[40], verdict[16];
	char owner[40], commit[72];
	bool owner_null, commit_null;
	time_t t;
	double base, cand, p;
};

struct got {
	struct got_row rows[16];
	size_t n;
	char bis_key[80], bis_state[16], bis_commit[72];
	int bis_certain, bis_steps;
	size_t n_bis;
	int fail_at; /* the row whose callback fails, -1: none */
};

static void copy(char *dst, size_t size, const char *s, bool *ret_null)
{
	if (ret_null)
		*ret_null = !s;
	snprintf(dst, size, "%s", s ? s : "");
}

static int on_row(const struct trend_row *r, void *userdata, struct sl_error *err)
{
	struct got *g = userdata;
	if ((int)g->n == g->fail_at)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Planted failure.");
	assert_true(g->n < 16);
	struct got_row *o = &g->rows[g->n++];
	copy(o->job_id, sizeof(o->job_id), r->job_id, NULL);
	copy(o->job_name, sizeof(o->job_name), r->job_name, NULL);
	copy(o->variant, sizeof(o->variant), r->variant, NULL);
	copy(o->workload, sizeof(o->workload), r->workload, NULL);
	copy(o->metric, sizeof(o->metric), r->metric, NULL);
	copy(o->verdict, sizeof(o->verdict), r->verdict, NULL);
	copy(o->owner, sizeof(o->owner), r->owner, &o->owner_null);
	copy(o->commit, sizeof(o->commit), r->commit, &o->commit_null);
	o->t = r->t;
	o->base = r->base;
	o->cand = r->cand;
	o->p = r->p;
	return 0;
}

static int on_bisection(const struct trend_bisection_row *b, void *userdata, struct sl_error *err)
{
	struct got *g = userdata;
	(void)err;
	if (g->n_bis++ == 0) {
		copy(g->bis_key, sizeof(g->bis_key), b->key, NULL);
		copy(g->bis_state, sizeof(g->bis_state), b->state, NULL);
		copy(g->bis_commit, sizeof(g->bis_commit), b->first_bad_commit, NULL);
		g->bis_certain = b->certain;
		g->bis_steps = b->steps;
	}
	return 0;
}

static void exec_sql(const char *dir, const char *sql)
{
	char path[128];
	sqlite3 *db;
	char *msg = NULL;

	snprintf(path, sizeof(path), "%s/schedlab.db", dir);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg);
	sqlite3_close(db);
}

static void read_all(const char *dir, time_t since, const char *job, struct got *g, int want)
{
	struct store_trend_visitor v = {on_row, on_bisection, g};
	struct sl_error err = {0};
	int r = store_trend_read(dir, since, job, &v, &err);
	if (r != want)
		fail_msg("store_trend_read: %d (%s), want %d", r, err.message, want);
}

static void mkdir_tmp(char dir[64])
{
	snprintf(dir, 64, "/tmp/test_store_trend.XXXXXX");
	assert_non_null(mkdtemp(dir));
}

/* The current schema, made by store_open's migrations. */
static void test_current_schema(void **state)
{
	(void)state;
	char dir[64];
	struct store *s = NULL;
	struct sl_error err = {0};
	struct got g = {.fail_at = -1};

	mkdir_tmp(dir);
	assert_int_equal(store_open(dir, &s, &err), 0);
	store_free(s);
	exec_sql(dir,
		 "INSERT INTO comparisons(job_id, job_name, finished_at, variant, workload, "
		 "metric, baseline_median, candidate_median, change, ci_lo, ci_hi, p_value, "
		 "verdict, source_commit, owner) VALUES "
		 "('j2', 'n', '2026-12-02T06:00:00Z', 'b', 'w', 'm', 1, 2, 1, 0, 2, 0.5, "
		 " 'regressed', 'c2', 'schedule:n'),"
		 "('j2', 'n', '2026-12-02T06:00:00Z', 'a', 'w', 'm', 1, NULL, NULL, NULL, NULL, "
		 " NULL, 'undecided', NULL, 'schedule:n'),"
		 "('j1', 'n', '2026-12-02 02:00:00.250+00:00', 'a', 'w', 'm', 3, 4, 1, 0, 2, 0.01, "
		 "'unchanged', "
		 " 'c1', 'schedule:n'),"
		 "('j3', 'n', '2026-12-02T07:00:00Z', 'a', 'w', 'm', 1, 1, 0, 0, 0, 1, "
		 " 'unchanged', NULL, 'alice'),"
		 "('j4', 'other', '2026-12-02T07:00:00Z', 'a', 'w', 'm', 1, 1, 0, 0, 0, 1, "
		 " 'unchanged', NULL, 'alice'),"
		 /* before the window */
		 "('j0', 'n', '2026-11-01T00:00:00Z', 'a', 'w', 'm', 1, 1, 0, 0, 0, 1, "
		 " 'unchanged', NULL, 'schedule:n'),"
		 /* no time any version writes */
		 "('jx', 'n', 'yesterday', 'a', 'w', 'm', 1, 1, 0, 0, 0, 1, 'unchanged', NULL, "
		 " 'schedule:n');"
		 "INSERT INTO jobs(id, name, status, spec_json, expanded_json, created_at) "
		 "VALUES ('bj', 'bisect', 'running', '{}', '{}', '2026-12-02T08:00:00Z');"
		 "INSERT INTO change_point_bisections(key, job_id, commits, created_at) "
		 "VALUES ('k1', 'bj', '[]', '2026-12-02T08:00:00Z');");

	read_all(dir, NOW - 7 * 86400, NULL, &g, 0);
	assert_int_equal(g.n, 5);
	/* owner first: "alice" < "schedule:n"; then job name */
	assert_string_equal(g.rows[0].job_id, "j3");
	assert_string_equal(g.rows[0].owner, "alice");
	assert_string_equal(g.rows[1].job_id, "j4");
	/* then by finished_at */
	assert_string_equal(g.rows[2].job_id, "j1");
	assert_int_equal(g.rows[2].t, 1796176800);
	assert_false(g.rows[2].owner_null);
	assert_string_equal(g.rows[2].owner, "schedule:n");
	assert_string_equal(g.rows[2].commit, "c1");
	assert_string_equal(g.rows[3].job_id, "j2");
	assert_string_equal(g.rows[3].variant, "a");
	assert_true(isnan(g.rows[3].cand) && isnan(g.rows[3].p));
	assert_true(g.rows[3].commit_null);
	assert_string_equal(g.rows[4].variant, "b");
	assert_string_equal(g.rows[4].commit, "c2");
	assert_int_equal(g.rows[4].t, NOW - 86400 + 6 * 3600);
	/* a bisection without an answer has its job's status */
	assert_int_equal(g.n_bis, 1);
	assert_string_equal(g.bis_key, "k1");
	assert_string_equal(g.bis_state, "running");
	assert_int_equal(g.bis_certain, -1);

	/* one job name's rows */
	struct got one = {.fail_at = -1};
	read_all(dir, NOW - 7 * 86400, "other", &one, 0);
	assert_int_equal(one.n, 1);
	assert_string_equal(one.rows[0].job_id, "j4");

	/* a callback's error stops the read and comes back */
	struct got stop = {.fail_at = 1};
	read_all(dir, NOW - 7 * 86400, NULL, &stop, -ENOMEM);
	assert_int_equal(stop.n, 1);
	assert_int_equal(stop.n_bis, 0);
	fs_rm_rf(dir, NULL);
}

#define OLD_COMPARISONS                                                                            \
	"CREATE TABLE comparisons(job_id TEXT, job_name TEXT, finished_at, variant TEXT, "         \
	"workload TEXT, metric TEXT, baseline_median REAL, candidate_median REAL, change REAL, "   \
	"ci_lo REAL, ci_hi REAL, p_value REAL, verdict TEXT"
#define OLD_ROW "'j1', 'n', '2026-12-02T06:00:00Z', 'a', 'w', 'm', 1, 2, 1, 0, 2, 0.5, 'regressed'"

/* Schemas 1 and 2: no source_commit, no owner, no bisections. */
static void test_before_schema_3(void **state)
{
	(void)state;
	char dir[64];
	struct got g = {.fail_at = -1};

	mkdir_tmp(dir);
	/* hand-made stores of then also hold times as numbers of seconds or
	 * milliseconds; SQLite sorts them before text */
	exec_sql(dir, OLD_COMPARISONS "); INSERT INTO comparisons VALUES (" OLD_ROW ");"
				      "INSERT INTO comparisons VALUES ('j0', 'n', 1796176800000, "
				      "'a', 'w', 'm', 1, 1, 0, 0, 0, 1, 'unchanged');");
	read_all(dir, NOW - 86400, NULL, &g, 0);
	assert_int_equal(g.n, 2);
	assert_string_equal(g.rows[0].job_id, "j0");
	assert_int_equal(g.rows[0].t, 1796176800);
	memmove(&g.rows[0], &g.rows[1], sizeof(g.rows[0]));
	assert_true(g.rows[0].commit_null);
	assert_true(g.rows[0].owner_null);
	assert_string_equal(g.rows[0].verdict, "regressed");
	assert_true(g.rows[0].cand == 2);
	assert_int_equal(g.n_bis, 0);
	fs_rm_rf(dir, NULL);
}

/* Schema 4: commits and bisections, no owner yet. */
static void test_before_schema_5(void **state)
{
	(void)state;
	char dir[64];
	struct got g = {.fail_at = -1};

	mkdir_tmp(dir);
	exec_sql(dir,
		 OLD_COMPARISONS ", source_commit TEXT);"
				 "INSERT INTO comparisons VALUES (" OLD_ROW ", 'c1');"
				 "CREATE TABLE jobs(id TEXT, status TEXT);"
				 "CREATE TABLE change_point_bisections(key TEXT, job_id TEXT, "
				 "commits TEXT, created_at TEXT, state TEXT, "
				 "first_bad_commit TEXT, first_bad_subject TEXT, certain "
				 "INTEGER, steps INTEGER);"
				 "INSERT INTO change_point_bisections VALUES ('k', 'bj', '[]', "
				 "'2026-12-02T08:00:00Z', 'found', 'c1', 's', 1, 3);");
	read_all(dir, NOW - 86400, "n", &g, 0);
	assert_int_equal(g.n, 1);
	assert_string_equal(g.rows[0].commit, "c1");
	assert_true(g.rows[0].owner_null);
	assert_int_equal(g.n_bis, 1);
	assert_string_equal(g.bis_state, "found");
	assert_string_equal(g.bis_commit, "c1");
	assert_int_equal(g.bis_certain, 1);
	assert_int_equal(g.bis_steps, 3);
	fs_rm_rf(dir, NULL);
}

static void test_errors(void **state)
{
	(void)state;
	char dir[64];
	struct got g = {.fail_at = -1};

	mkdir_tmp(dir);
	read_all(dir, 0, NULL, &g, -ENOENT);
	exec_sql(dir, "CREATE TABLE other(x);");
	read_all(dir, 0, NULL, &g, -EINVAL);
	assert_int_equal(g.n, 0);
	fs_rm_rf(dir, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_current_schema),
	    cmocka_unit_test(test_before_schema_3),
	    cmocka_unit_test(test_before_schema_5),
	    cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
