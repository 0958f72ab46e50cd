/* The job store: create and read jobs, status and progress events, runs
 * stored once, resume after an interruption, comparisons from a result,
 * WAL mode, and reopening an existing database (migrations idempotent). */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <sqlite3.h>
#include <string.h>
#include <cmocka.h>

#include "server/counters.h"
#include "server/store.h"
#include "util/fs.h"

struct fixture {
	char dir[64];
	struct store *s;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_store.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	struct sl_error err = {0};
	assert_int_equal(store_open(f->dir, &f->s, &err), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	store_free(f->s);
	fs_rm_rf(f->dir, NULL);
	free(f);
	return 0;
}

static const char *str(json_object *o, const char *k)
{
	json_object *v = NULL;
	if (!json_object_object_get_ex(o, k, &v) || !v)
		return NULL;
	return json_object_get_string(v);
}

static void new_job(struct store *s, char id[STORE_ID_LEN + 1], const char *name, int prio)
{
	struct sl_error err = {0};
	assert_int_equal(store_id_new(id, &err), 0);
	_cleanup_json_ json_object *spec = json_tokener_parse("{\"name\":\"x\",\"repeat\":1}");
	assert_int_equal(store_job_create(s, id, name, prio, spec, spec, &err), 0);
}

static void test_ids(void **state)
{
	(void)state;
	char a[STORE_ID_LEN + 1], b[STORE_ID_LEN + 1];
	assert_int_equal(store_id_new(a, NULL), 0);
	assert_int_equal(store_id_new(b, NULL), 0);
	assert_int_equal(strlen(a), STORE_ID_LEN);
	assert_true(store_id_valid(a));
	assert_string_not_equal(a, b);
	assert_false(store_id_valid("../../etc/passwd"));
	assert_false(store_id_valid(NULL));
	assert_false(store_id_valid(""));
	assert_false(store_id_valid("0123456789abcdef0123456789abcdeF"));
	assert_false(store_id_valid("0123456789abcdef0123456789abcdef0"));
	assert_false(store_id_valid("0123456789abcdef/123456789abcdef"));
	assert_true(store_id_valid("0123456789abcdef0123456789abcdef"));
}

static void test_wal_mode(void **state)
{
	struct fixture *f = *state;
	_cleanup_free_ char *db = fs_path_join(f->dir, "schedlab.db");
	sqlite3 *h = NULL;
	assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	sqlite3_stmt *st = NULL;
	assert_int_equal(sqlite3_prepare_v2(h, "PRAGMA journal_mode;", -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), "wal");
	sqlite3_finalize(st);
	/* The trend report depends on these exact column names. */
	assert_int_equal(
	    sqlite3_prepare_v2(h,
			       "SELECT job_id, job_name, finished_at, variant, workload, "
			       "metric, baseline_median, candidate_median, change, ci_lo, "
			       "ci_hi, p_value, verdict FROM comparisons;",
			       -1, &st, NULL),
	    SQLITE_OK);
	sqlite3_finalize(st);
	sqlite3_close(h);
}

static void test_create_get_status(void **state)
{
	struct fixture *f = *state;
	char id[STORE_ID_LEN + 1];
	new_job(f->s, id, "seed", 0);
	struct sl_error err = {0};
	_cleanup_json_ json_object *job = NULL;
	assert_int_equal(store_job_get(f->s, id, &job, &err), 0);
	assert_string_equal(str(job, "status"), "queued");
	assert_string_equal(str(job, "name"), "seed");
	assert_non_null(str(job, "created_at"));
	assert_null(str(job, "started_at"));
	/* The directory is made when the job starts (queue.c): a submission
	 * killed half-way leaves none without a row. */
	_cleanup_free_ char *dir = store_job_dir(f->s, id);
	assert_false(fs_exists(dir));
	assert_null(store_job_dir(f->s, "../x"));

	assert_int_equal(store_job_set_status(f->s, id, "building", &err), 0);
	_cleanup_json_ json_object *p = json_tokener_parse(
	    "{\"phase\":\"building\",\"percent\":50,\"run_index\":0,\"run_total\":2,"
	    "\"message\":\"make\"}");
	assert_int_equal(store_job_set_progress(f->s, id, p, &err), 0);
	assert_int_equal(store_job_set_status(f->s, id, "running", &err), 0);
	json_object_put(job);
	job = NULL;
	assert_int_equal(store_job_get(f->s, id, &job, &err), 0);
	assert_string_equal(str(job, "status"), "running");
	assert_non_null(str(job, "started_at"));
	json_object *prog = json_object_object_get(job, "progress");
	assert_string_equal(str(prog, "message"), "make");

	assert_int_equal(store_job_finish(f->s, id, "done", "pass", NULL, &err), 0);
	/* A final job stays final. */
	assert_int_equal(store_job_finish(f->s, id, "cancelled", NULL, NULL, &err), -EALREADY);
	assert_int_equal(err.kind, ERR_CONFLICT);
	assert_true(store_job_set_status(f->s, id, "running", &err) < 0);
	json_object_put(job);
	job = NULL;
	assert_int_equal(store_job_get(f->s, id, &job, &err), 0);
	assert_string_equal(str(job, "status"), "done");
	assert_string_equal(str(job, "verdict"), "pass");
	assert_non_null(str(job, "finished_at"));

	/* Events: queued, building, progress, running, done; resumable by id. */
	_cleanup_json_ json_object *ev = NULL;
	assert_int_equal(store_events_after(f->s, id, 0, 100, &ev, &err), 0);
	assert_int_equal(json_object_array_length(ev), 5);
	assert_string_equal(str(json_object_array_get_idx(ev, 2), "type"), "progress");
	json_object *last = json_object_array_get_idx(ev, 4);
	assert_string_equal(str(json_object_object_get(last, "data"), "status"), "done");
	int64_t third =
	    json_object_get_int64(json_object_object_get(json_object_array_get_idx(ev, 2), "id"));
	_cleanup_json_ json_object *rest = NULL;
	assert_int_equal(store_events_after(f->s, id, third, 100, &rest, &err), 0);
	assert_int_equal(json_object_array_length(rest), 2);

	_cleanup_json_ json_object *missing = NULL;
	assert_int_equal(store_job_get(f->s, "0123456789abcdef0123456789abcdef", &missing, &err),
			 -ENOENT);
	assert_int_equal(err.kind, ERR_NOT_FOUND);
}

static void test_runs_once(void **state)
{
	struct fixture *f = *state;
	char id[STORE_ID_LEN + 1];
	new_job(f->s, id, "runs", 0);
	struct sl_error err = {0};
	_cleanup_json_ json_object *r1 =
	    json_tokener_parse("{\"key\":\"baseline#0\",\"status\":\"ok\",\"boot_seconds\":1.5}");
	_cleanup_json_ json_object *r2 =
	    json_tokener_parse("{\"key\":\"baseline#0\",\"status\":\"hung\",\"boot_seconds\":9}");
	assert_int_equal(store_run_put(f->s, id, "baseline#0", r1, &err), 0);
	assert_int_equal(store_run_put(f->s, id, "baseline#0", r2, &err), 0);
	int n = -1;
	assert_int_equal(store_run_count(f->s, id, &n, &err), 0);
	assert_int_equal(n, 1);
	_cleanup_json_ json_object *got = NULL;
	assert_int_equal(store_run_get(f->s, id, "baseline#0", &got, &err), 0);
	assert_string_equal(str(got, "status"), "ok");
	_cleanup_json_ json_object *none = NULL;
	assert_int_equal(store_run_get(f->s, id, "patched#0", &none, &err), -ENOENT);
	_cleanup_json_ json_object *counts = NULL, *boots = NULL;
	assert_int_equal(store_run_counts(f->s, &counts, &err), 0);
	assert_int_equal(json_object_get_int(json_object_object_get(counts, "ok")), 1);
	assert_int_equal(store_boot_seconds(f->s, &boots, &err), 0);
	assert_int_equal(json_object_array_length(boots), 1);
	assert_true(json_object_get_double(json_object_array_get_idx(boots, 0)) == 1.5);
}

static char *counters_text(struct store *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	counters_write(store_counters(s), f);
	fclose(f);
	return text;
}

/* The /metrics counters follow each change as it is written and, after a
 * restart, start from what the database holds. */
static void test_counters(void **state)
{
	struct fixture *f = *state;
	struct sl_error err = {0};
	char a[STORE_ID_LEN + 1], b[STORE_ID_LEN + 1], c[STORE_ID_LEN + 1];
	new_job(f->s, a, "a", 0);
	new_job(f->s, b, "b", 0);
	new_job(f->s, c, "c", 0);
	assert_int_equal(store_job_set_status(f->s, a, "building", &err), 0);
	assert_int_equal(store_job_set_status(f->s, a, "running", &err), 0);
	assert_int_equal(store_job_finish(f->s, a, "done", "pass", NULL, &err), 0);
	assert_int_equal(store_job_set_status(f->s, b, "running", &err), 0);
	assert_int_equal(store_job_finish(f->s, b, "failed", NULL, NULL, &err), 0);
	_cleanup_json_ json_object *run =
	    json_tokener_parse("{\"status\":\"ok\",\"boot_seconds\":0.75}");
	_cleanup_json_ json_object *odd = json_tokener_parse("{\"status\":\"x\\\"y\"}");
	assert_int_equal(store_run_put(f->s, a, "baseline#0", run, &err), 0);
	assert_int_equal(store_run_put(f->s, a, "baseline#0", run, &err), 0); /* kept once */
	assert_int_equal(store_run_put(f->s, a, "baseline#1", odd, &err), 0);
	/* read through the result model: a status that is no string is
	 * refused, naming it, and neither stored nor counted */
	_cleanup_json_ json_object *typo = json_tokener_parse("{\"status\":5}");
	assert_true(store_run_put(f->s, a, "baseline#2", typo, &err) < 0);
	assert_non_null(strstr(err.message, "status"));
	_cleanup_json_ json_object *result =
	    json_tokener_parse("{\"kernels\":{\"k1\":{\"build_seconds\":42,\"cached\":false},"
			       "\"k2\":{\"build_seconds\":1,\"cached\":true}}}");
	assert_int_equal(store_result_index(f->s, a, result, &err), 0);
	for (int round = 0; round < 2; round++) {
		_cleanup_free_ char *t = counters_text(f->s);
		assert_non_null(strstr(t, "schedlab_jobs{status=\"queued\"} 1\n"));
		assert_non_null(strstr(t, "schedlab_jobs{status=\"running\"} 0\n"));
		assert_non_null(strstr(t, "schedlab_jobs{status=\"done\"} 1\n"));
		assert_non_null(strstr(t, "schedlab_jobs{status=\"failed\"} 1\n"));
		assert_non_null(strstr(
		    t, "schedlab_jobs_finished_total{status=\"done\",verdict=\"pass\"} 1\n"));
		assert_non_null(strstr(
		    t, "schedlab_jobs_finished_total{status=\"failed\",verdict=\"none\"} 1\n"));
		assert_non_null(strstr(t, "schedlab_runs_total{status=\"ok\"} 1\n"));
		/* A status outside the vocabulary is "other", never echoed. */
		assert_non_null(strstr(t, "schedlab_runs_total{status=\"other\"} 1\n"));
		assert_null(strstr(t, "x\\\"y"));
		assert_non_null(strstr(t, "schedlab_boot_seconds_bucket{le=\"1\"} 1\n"));
		assert_non_null(strstr(t, "schedlab_build_seconds_bucket{le=\"60\"} 1\n"));
		assert_non_null(strstr(t, "schedlab_kernel_cache_hits_total 1\n"));
		assert_non_null(strstr(t, "schedlab_kernel_cache_misses_total 1\n"));
		if (round == 0)
			/* a and b left the queue: two waits observed. */
			assert_non_null(strstr(t, "schedlab_queue_wait_seconds_count 2\n"));
		/* Restart: the same counts, seeded from the database. */
		store_free(f->s);
		f->s = NULL;
		assert_int_equal(store_open(f->dir, &f->s, &err), 0);
	}
}

static void test_resume_order(void **state)
{
	struct fixture *f = *state;
	struct sl_error err = {0};
	char a[STORE_ID_LEN + 1], b[STORE_ID_LEN + 1], c[STORE_ID_LEN + 1], d[STORE_ID_LEN + 1];
	new_job(f->s, a, "a", 0);
	new_job(f->s, b, "b", 5);
	new_job(f->s, c, "c", 0);
	new_job(f->s, d, "d", 0);
	assert_int_equal(store_job_set_status(f->s, c, "running", &err), 0);
	assert_int_equal(store_job_set_status(f->s, d, "building", &err), 0);
	assert_int_equal(store_job_finish(f->s, d, "failed", NULL, NULL, &err), 0);
	/* Restart: c was interrupted; it goes first, then b (priority), then a. */
	store_free(f->s);
	f->s = NULL;
	assert_int_equal(store_open(f->dir, &f->s, &err), 0);
	int n = 0;
	assert_int_equal(store_requeue_interrupted(f->s, &n, &err), 0);
	assert_int_equal(n, 1);
	_cleanup_json_ json_object *q = NULL;
	assert_int_equal(store_queued_jobs(f->s, &q, &err), 0);
	assert_int_equal(json_object_array_length(q), 3);
	assert_string_equal(str(json_object_array_get_idx(q, 0), "id"), c);
	assert_string_equal(str(json_object_array_get_idx(q, 1), "id"), b);
	assert_string_equal(str(json_object_array_get_idx(q, 2), "id"), a);
	_cleanup_json_ json_object *list = NULL;
	int64_t total = 0;
	assert_int_equal(store_job_list(f->s, "queued", 2, 0, &list, &total, &err), 0);
	assert_int_equal(total, 3);
	assert_int_equal(json_object_array_length(list), 2);
	_cleanup_json_ json_object *all = NULL;
	assert_int_equal(store_job_list(f->s, NULL, 10, 3, &all, &total, &err), 0);
	assert_int_equal(total, 4);
	assert_int_equal(json_object_array_length(all), 1);
}

static void test_result_index(void **state)
{
	struct fixture *f = *state;
	struct sl_error err = {0};
	char id[STORE_ID_LEN + 1];
	new_job(f->s, id, "cmp", 0);
	_cleanup_json_ json_object *result = json_tokener_parse(
	    "{\"job\":{\"name\":\"cmp-job\"},\"finished_at\":\"2026-12-03T09:00:00Z\","
	    "\"kernels\":{\"sched\":{\"build_seconds\":270.5,\"cached\":false},"
	    "\"other\":{\"build_seconds\":1,\"cached\":true}},"
	    "\"comparisons\":[{\"variant\":\"patched\",\"workload\":\"rt-migrate-test\","
	    "\"metric\":\"inversions\",\"baseline\":{\"median\":3},\"candidate\":{\"median\":0},"
	    "\"change\":-3,\"ci95\":[-4,-3],\"p_value\":0.1,\"verdict\":\"improved\"}]}");
	assert_non_null(result);
	assert_int_equal(store_result_index(f->s, id, result, &err), 0);
	/* Twice: rows are replaced, not doubled. */
	assert_int_equal(store_result_index(f->s, id, result, &err), 0);
	/* A result read through the model: a member of the wrong type is
	 * refused, naming it, and the rows stored before stay (COUNT below). */
	_cleanup_json_ json_object *bad = json_tokener_parse(
	    "{\"comparisons\":[{\"variant\":\"patched\",\"metric\":\"inversions\","
	    "\"verdict\":5}]}");
	assert_true(store_result_index(f->s, id, bad, &err) < 0);
	assert_int_equal(err.kind, ERR_INVALID);
	assert_non_null(strstr(err.message, "comparisons[0].verdict"));
	_cleanup_json_ json_object *builds = NULL;
	assert_int_equal(store_build_seconds(f->s, &builds, &err), 0);
	assert_int_equal(json_object_array_length(builds), 1);
	store_free(f->s);
	f->s = NULL;
	_cleanup_free_ char *db = fs_path_join(f->dir, "schedlab.db");
	sqlite3 *h = NULL;
	assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
	sqlite3_stmt *st = NULL;
	assert_int_equal(
	    sqlite3_prepare_v2(h,
			       "SELECT job_name, metric, baseline_median, "
			       "candidate_median, ci_lo, ci_hi, verdict, COUNT(*) FROM "
			       "comparisons;",
			       -1, &st, NULL),
	    SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), "cmp-job");
	assert_string_equal((const char *)sqlite3_column_text(st, 1), "inversions");
	assert_true(sqlite3_column_double(st, 2) == 3);
	assert_true(sqlite3_column_double(st, 3) == 0);
	assert_true(sqlite3_column_double(st, 4) == -4);
	assert_true(sqlite3_column_double(st, 5) == -3);
	assert_string_equal((const char *)sqlite3_column_text(st, 6), "improved");
	assert_int_equal(sqlite3_column_int(st, 7), 1);
	sqlite3_finalize(st);
	sqlite3_close(h);
	assert_int_equal(store_open(f->dir, &f->s, &err), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ids),
	    cmocka_unit_test_setup_teardown(test_wal_mode, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_create_get_status, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_runs_once, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_resume_order, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_counters, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_result_index, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
