/* Bounded storage: a patch is stored once by content hash,
 * however many kernels, specs and jobs carry it, and read back whole;
 * retention takes a finished job's directory, runs, events, specs and
 * patches and keeps its result (or drops it with the row); 1000 jobs
 * submitted and cancelled leave the database bounded; a job directory
 * without a row is swept at open. Real SQLite store in a temp dir. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "server/store.h"
#include "util/fs.h"

struct fixture {
	char dir[64];
	struct store *s;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_store_ret.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	assert_int_equal(store_open(f->dir, &f->s, NULL), 0);
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

/* One integer from the database, read on a second connection. */
static long long sql_int(struct fixture *f, const char *sql)
{
	_cleanup_free_ char *path = fs_path_join(f->dir, "schedlab.db");
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	long long v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

/* Database plus WAL, in bytes. */
static long long store_bytes(struct fixture *f)
{
	long long total = 0;
	const char *names[] = {"schedlab.db", "schedlab.db-wal"};
	for (size_t i = 0; i < 2; i++) {
		_cleanup_free_ char *p = fs_path_join(f->dir, names[i]);
		struct stat st;
		if (stat(p, &st) == 0)
			total += st.st_size;
	}
	return total;
}

/* A job whose shorthand base and patched kernels both carry patch (as the
 * CI shorthand expands), in the spec and in the expanded spec. */
static json_object *spec_with(const char *patch)
{
	json_object *p = json_object_new_object();
	json_object_object_add(p, "name", json_object_new_string("fix.patch"));
	json_object_object_add(p, "content", json_object_new_string(patch));
	json_object *spec = json_object_new_object();
	json_object *kernels = json_object_new_object();
	for (int i = 0; i < 2; i++) {
		json_object *k = json_object_new_object(), *list = json_object_new_array();
		json_object_array_add(list, json_object_get(p));
		json_object_object_add(k, "patches", list);
		json_object_object_add(kernels, i ? "patched" : "base", k);
	}
	json_object_put(p);
	json_object_object_add(spec, "kernels", kernels);
	return spec;
}

static char *big_patch(size_t n, char fill)
{
	char *t = malloc(n + 1);
	memset(t, fill, n);
	t[n] = '\0';
	return t;
}

static void test_patch_stored_once(void **state)
{
	struct fixture *f = *state;
	_cleanup_free_ char *patch = big_patch(1 << 20, 'a');
	_cleanup_json_ json_object *spec = spec_with(patch);
	char a[STORE_ID_LEN + 1], b[STORE_ID_LEN + 1];
	assert_int_equal(store_id_new(a, NULL), 0);
	assert_int_equal(store_id_new(b, NULL), 0);
	assert_int_equal(store_job_create(f->s, a, "a", 0, spec, spec, NULL), 0);
	assert_int_equal(store_job_create(f->s, b, "b", 0, spec, spec, NULL), 0);
	/* Four copies per job, two jobs: one blob. */
	assert_int_equal(sql_int(f, "SELECT COUNT(*) FROM blobs;"), 1);
	assert_int_equal(sql_int(f, "SELECT SUM(length(content)) FROM blobs;"), 1 << 20);
	assert_true(sql_int(f, "SELECT MAX(length(spec_json) + length(expanded_json)) FROM jobs;") <
		    1024);
	_cleanup_json_ json_object *back = NULL;
	assert_int_equal(store_job_expanded(f->s, b, &back, NULL), 0);
	assert_true(json_object_equal(back, spec));
	/* The store grew by about one copy, not eight. */
	assert_true(store_bytes(f) < 3 * (1 << 20));
}

static void test_purge_keeps_result(void **state)
{
	struct fixture *f = *state;
	_cleanup_json_ json_object *spec = spec_with("--- a\n+++ b\n");
	_cleanup_json_ json_object *other = spec_with("only in the cancelled job\n");
	char done[STORE_ID_LEN + 1], gone[STORE_ID_LEN + 1], keep[STORE_ID_LEN + 1];
	struct sl_error err = {0};
	assert_int_equal(store_id_new(done, NULL), 0);
	assert_int_equal(store_id_new(gone, NULL), 0);
	assert_int_equal(store_id_new(keep, NULL), 0);
	assert_int_equal(store_job_create(f->s, done, "d", 0, spec, spec, NULL), 0);
	assert_int_equal(store_job_create(f->s, gone, "g", 0, other, other, NULL), 0);
	assert_int_equal(store_job_create(f->s, keep, "k", 0, spec, spec, NULL), 0);
	_cleanup_free_ char *dir = store_job_dir(f->s, done);
	_cleanup_free_ char *res = fs_path_join(dir, "result.json");
	assert_int_equal(fs_mkdir_p(dir, NULL), 0);
	assert_int_equal(fs_write_file_atomic(res, "{\"verdict\":\"pass\"}", 18, NULL), 0);
	_cleanup_json_ json_object *run = json_tokener_parse("{\"status\":\"ok\"}");
	assert_int_equal(store_run_put(f->s, done, "a#1", run, NULL), 0);
	assert_int_equal(store_job_finish(f->s, done, "done", "pass", NULL, NULL), 0);
	assert_int_equal(store_job_finish(f->s, gone, "cancelled", NULL, NULL, NULL), 0);
	/* Not old enough: nothing goes. */
	int n = -1;
	assert_int_equal(store_purge_finished(f->s, 3600, false, 100, &n, &err), 0);
	assert_int_equal(n, 0);
	assert_int_equal(store_purge_finished(f->s, 0, false, 100, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_false(fs_exists(dir));
	assert_int_equal(sql_int(f, "SELECT COUNT(*) FROM runs;"), 0);
	char sql[200];
	snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM events WHERE job_id IN ('%s','%s');", done,
		 gone);
	assert_int_equal(sql_int(f, sql), 0);
	/* The cancelled job's own patch is gone, the shared one stays for the
	 * queued job, which still reads it. */
	assert_int_equal(sql_int(f, "SELECT COUNT(*) FROM blobs;"), 1);
	_cleanup_json_ json_object *back = NULL;
	assert_int_equal(store_job_expanded(f->s, keep, &back, NULL), 0);
	assert_true(json_object_equal(back, spec));
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	assert_int_equal(store_job_result_kept(f->s, done, &text, &len, &err), 0);
	assert_string_equal(text, "{\"verdict\":\"pass\"}");
	_cleanup_json_ json_object *job = NULL;
	assert_int_equal(store_job_get(f->s, done, &job, &err), 0);
	assert_string_equal(json_object_get_string(json_object_object_get(job, "verdict")), "pass");
	/* drop_results: the row goes too. */
	assert_int_equal(store_job_finish(f->s, keep, "cancelled", NULL, NULL, NULL), 0);
	assert_int_equal(store_purge_finished(f->s, 0, true, 100, &n, &err), 0);
	assert_int_equal(n, 1);
	_cleanup_json_ json_object *none = NULL;
	assert_int_equal(store_job_get(f->s, keep, &none, &err), -ENOENT);
	assert_int_equal(sql_int(f, "SELECT COUNT(*) FROM blobs;"), 0);
}

/* Before retention ran at submission, 1000 submissions, each cancelled,
 * kept everything. With
 * retention at age 0 (what the service runs at each submission) the
 * database stays bounded even when every job carries its own 32 KiB
 * patch; without, it would hold 1000 of them. */
static void test_thousand_cancelled_bounded(void **state)
{
	struct fixture *f = *state;
	_cleanup_free_ char *patch = big_patch(32 * 1024, 'x');
	long long peak = 0;
	for (int i = 0; i < 1000; i++) {
		snprintf(patch, 16, "%08d", i); /* a distinct patch per job */
		patch[8] = 'x';
		_cleanup_json_ json_object *spec = spec_with(patch);
		char id[STORE_ID_LEN + 1];
		assert_int_equal(store_id_new(id, NULL), 0);
		assert_int_equal(store_job_create(f->s, id, "j", 0, spec, spec, NULL), 0);
		assert_int_equal(store_job_finish(f->s, id, "cancelled", NULL, NULL, NULL), 0);
		assert_int_equal(store_purge_finished(f->s, 0, false, 64, NULL, NULL), 0);
		long long b = store_bytes(f);
		peak = b > peak ? b : peak;
	}
	long long end = sql_int(f, "PRAGMA page_count;") * sql_int(f, "PRAGMA page_size;");
	print_message("1000 jobs with a 32 KiB patch each, submitted and cancelled: database "
		      "%lld bytes, with WAL at most %lld\n",
		      end, peak);
	assert_int_equal(sql_int(f, "SELECT COUNT(*) FROM blobs;"), 0);
	assert_int_equal(sql_int(f, "SELECT COUNT(*) FROM events;"), 0);
	assert_true(end < 1024 * 1024);
	assert_true(peak < 8 * 1024 * 1024);
}

static void test_orphan_dir_swept(void **state)
{
	struct fixture *f = *state;
	char id[STORE_ID_LEN + 1];
	assert_int_equal(store_id_new(id, NULL), 0);
	_cleanup_free_ char *dir = store_job_dir(f->s, id);
	assert_int_equal(fs_mkdir_p(dir, NULL), 0);
	_cleanup_free_ char *jobs = fs_path_join(f->dir, "jobs");
	_cleanup_free_ char *other = fs_path_join(jobs, "not-a-job-id");
	assert_int_equal(fs_mkdir_p(other, NULL), 0);
	store_free(f->s);
	assert_int_equal(store_open(f->dir, &f->s, NULL), 0);
	assert_false(fs_exists(dir));
	assert_true(fs_exists(other));
}

/* A failed job's error is shown by the API: the store keeps it without
 * host paths (the file named stays). */
static void test_failed_error_has_no_host_path(void **state)
{
	struct fixture *f = *state;
	char id[STORE_ID_LEN + 1];
	_cleanup_json_ json_object *spec = json_tokener_parse("{}");
	assert_int_equal(store_id_new(id, NULL), 0);
	assert_int_equal(store_job_create(f->s, id, "x", 0, spec, spec, NULL), 0);
	_cleanup_json_ json_object *e = json_tokener_parse(
	    "{\"code\":\"not_found\",\"message\":\"Kernel source 'debian:linux-source-9.9' "
	    "needs '/usr/src/linux-source-9.9.tar.xz'.\"}");
	assert_int_equal(store_job_finish(f->s, id, "failed", NULL, e, NULL), 0);
	_cleanup_json_ json_object *job = NULL;
	assert_int_equal(store_job_get(f->s, id, &job, NULL), 0);
	const char *msg = json_object_get_string(
	    json_object_object_get(json_object_object_get(job, "error"), "message"));
	assert_null(strstr(msg, "/usr/src"));
	assert_non_null(strstr(msg, "linux-source-9.9.tar.xz"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_patch_stored_once, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_purge_keeps_result, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_thousand_cancelled_bounded, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_orphan_dir_swept, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_failed_error_has_no_host_path, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
