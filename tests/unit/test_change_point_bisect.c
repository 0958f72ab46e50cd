/* From change point to culprit without a server: the
 * bisection job's spec and the request's checks over a real git tree
 * (server/change_point_bisect.c), the store's link between change point and
 * job (one bisection per change point, in the job's own transaction), the
 * answer recorded when the job ends, and how the trend shows it (the key,
 * GET /v1/change-points' "bisection", the page's link). The e2e test
 * 74-change-point-bisect does the same with the real service and HTTP. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <sqlite3.h>

#include "job/job.h"
#include "report/trend.h"
#include "server/store_trend.h"
#include "server/change_point_bisect.h"
#include "server/queue.h"
#include "server/config.h"
#include "server/store.h"
#include "server/webhook.h"
#include "util/fs.h"

static char tmp[200];
static char commit[4][48]; /* the tree's commits, oldest first: base, one, two, three */

static void sh(const char *fmt, ...) _printf_(1, 2);
static void sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (system(cmd) != 0)
		fail_msg("command failed: %s", cmd);
}

static int setup(void **state)
{
	(void)state;
	snprintf(tmp, sizeof(tmp), "%s/schedlab-cpbisect.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : P_tmpdir);
	assert_non_null(mkdtemp(tmp));
	/* a small git tree: a base commit and three commits on it */
	const char *git = "GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null git -c user.name=t "
			  "-c user.email=t@example.org";
	sh("mkdir -p '%s/allowed/tree' && cd '%s/allowed/tree' && git init -q -b main && "
	   "echo base >f && git add f && %s commit -qm base",
	   tmp, tmp, git);
	static const char *const subjects[] = {"one", "two", "three"};
	for (int i = 0; i < 3; i++)
		sh("cd '%s/allowed/tree' && echo %s >>f && %s commit -qam %s", tmp, subjects[i],
		   git, subjects[i]);
	for (int i = 0; i < 4; i++) {
		char cmd[512];
		snprintf(cmd, sizeof(cmd), "git -C '%s/allowed/tree' rev-parse HEAD~%d", tmp,
			 3 - i);
		FILE *f = popen(cmd, "r");
		assert_non_null(f);
		assert_non_null(fgets(commit[i], sizeof(commit[i]), f));
		commit[i][strcspn(commit[i], "\n")] = '\0';
		pclose(f);
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	return system(cmd) == 0 ? 0 : -1;
}

/* The night job as a service stores it (expanded), its candidate kernel on
 * the test's tree (git) or a Debian package. */
static json_object *night(bool git)
{
	char src[PATH_MAX + 64], text[8192];
	if (git)
		snprintf(src, sizeof(src), "git:%s/allowed/tree@main", tmp);
	else
		snprintf(src, sizeof(src), "debian:linux-source-6.1");
	snprintf(
	    text, sizeof(text),
	    "{\"name\": \"s\", \"kernels\": {\"base\": {\"source\": \"debian:linux-source-6.1\"},"
	    " \"patched\": {\"source\": \"%s\", \"patches\": [],"
	    " \"config\": {\"builtin\": \"linux-6.1\"}}},"
	    " \"variants\": {\"baseline\": {\"kernel\": \"base\"}, \"patched\": {\"kernel\": "
	    "\"patched\"}},"
	    " \"baseline\": \"baseline\", \"repeat\": 4,"
	    " \"workloads\": [{\"name\": \"w\", \"tool\": \"rt-migrate-test\", \"args\": "
	    "[\"3\"]}]}",
	    src);
	json_object *o = json_tokener_parse(text);
	assert_non_null(o);
	return o;
}

static json_object *change_point(const char *from, const char *to)
{
	char text[1024];
	snprintf(text, sizeof(text),
		 "{\"key\": \"%064d\", \"series\": \"s\", \"variant\": \"patched\","
		 " \"workload\": \"w\", \"metric\": \"m\","
		 " \"first_night_after\": {\"job_id\": \"%032d\"},"
		 " \"commit_range\": {\"from\": \"%s\", \"to\": \"%s\"}}",
		 7, 1, from, to);
	json_object *o = json_tokener_parse(text);
	assert_non_null(o);
	return o;
}

static const char *jget(json_object *o, const char *key)
{
	json_object *v = NULL;
	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : NULL;
}

static void expect_refused(json_object *cp, json_object *nt, enum error_kind kind, const char *path)
{
	_cleanup_json_ json_object *spec = NULL, *commits = NULL;
	struct sl_error err = {0};
	assert_true(change_point_bisect_spec(cp, nt, 200, &spec, &commits, &err) < 0);
	assert_int_equal(err.kind, kind);
	assert_string_equal(err.path, path);
	if (strstr(err.message, tmp))
		fail_msg("the error names a host path: %s", err.message);
}

static void test_spec(void **state)
{
	(void)state;
	_cleanup_json_ json_object *nt = night(true);
	_cleanup_json_ json_object *cp = change_point(commit[0], commit[3]);
	_cleanup_json_ json_object *spec = NULL, *commits = NULL;
	struct sl_error err = {0};
	if (change_point_bisect_spec(cp, nt, 200, &spec, &commits, &err) < 0)
		fail_msg("%s", err.message);
	char want[PATH_MAX + 128];
	snprintf(want, sizeof(want), "git:%s/allowed/tree@%s", tmp, commit[0]);
	json_object *base = json_object_object_get(spec, "base");
	assert_string_equal(jget(base, "source"), want);
	/* the night's candidate kernel, its config kept */
	assert_non_null(json_object_object_get(base, "config"));
	assert_string_equal(jget(spec, "name"), "bisect-s");
	assert_int_equal(json_object_array_length(json_object_object_get(spec, "patches")), 3);
	assert_int_equal(json_object_array_length(commits), 3);
	for (int i = 0; i < 3; i++)
		assert_string_equal(jget(json_object_array_get_idx(commits, i), "commit"),
				    commit[i + 1]);
	assert_string_equal(jget(json_object_array_get_idx(commits, 1), "subject"), "two");
	assert_true(json_object_get_boolean(json_object_object_get(spec, "bisect")));
	/* the night's 4 repeats are too few to decide a step: 5 to 8, adaptive */
	json_object *rep = json_object_object_get(spec, "repeat");
	assert_int_equal(json_object_get_int(json_object_object_get(rep, "min")), 5);
	assert_int_equal(json_object_get_int(json_object_object_get(rep, "max")), 8);
	json_object *gates = json_object_object_get(spec, "gates");
	assert_int_equal(json_object_array_length(gates), 1);
	assert_string_equal(jget(json_object_array_get_idx(gates, 0), "workload"), "w");
	assert_string_equal(jget(json_object_array_get_idx(gates, 0), "metric"), "m");
	json_object *wls = json_object_object_get(spec, "workloads");
	assert_int_equal(json_object_array_length(wls), 1);
	/* a service job like any: the allow-list holds for it */
	char allowed[PATH_MAX + 16];
	snprintf(allowed, sizeof(allowed), "%s/allowed", tmp);
	_cleanup_free_ char *real = realpath(allowed, NULL);
	char *const dirs[] = {real};
	struct job_limits lim = *job_default_limits();
	lim.git_sources = dirs;
	lim.n_git_sources = 1;
	_cleanup_json_ json_object *expanded = NULL;
	if (job_expand_json(spec, JOB_ORIGIN_SERVICE, NULL, &lim, &expanded, &err) < 0)
		fail_msg("%s at %s", err.message, err.path);
	assert_int_equal(json_object_array_length(json_object_object_get(expanded, "commits")), 3);
	lim.n_git_sources = 0; /* not allowed: refused like any job */
	_cleanup_json_ json_object *refused = NULL;
	assert_true(job_expand_json(spec, JOB_ORIGIN_SERVICE, NULL, &lim, &refused, &err) < 0);

	/* enough repeats are kept; an adaptive night's higher maximum too */
	json_object_object_add(nt, "repeat", json_object_new_int(6));
	_cleanup_json_ json_object *s6 = NULL, *c6 = NULL;
	assert_int_equal(change_point_bisect_spec(cp, nt, 200, &s6, &c6, &err), 0);
	assert_int_equal(json_object_get_int(json_object_object_get(s6, "repeat")), 6);
	json_object_object_add(nt, "repeat", json_tokener_parse("{\"min\": 2, \"max\": 12}"));
	_cleanup_json_ json_object *s12 = NULL, *c12 = NULL;
	assert_int_equal(change_point_bisect_spec(cp, nt, 200, &s12, &c12, &err), 0);
	rep = json_object_object_get(s12, "repeat");
	assert_int_equal(json_object_get_int(json_object_object_get(rep, "min")), 5);
	assert_int_equal(json_object_get_int(json_object_object_get(rep, "max")), 12);

	/* the request's checks */
	_cleanup_json_ json_object *none = change_point(commit[0], commit[3]);
	json_object_object_add(none, "commit_range", NULL);
	expect_refused(none, nt, ERR_CONFLICT, "commit_range");
	_cleanup_json_ json_object *deb = night(false);
	expect_refused(cp, deb, ERR_CONFLICT, "source");
	_cleanup_json_ json_object *other = change_point(commit[0], commit[3]);
	json_object_object_add(other, "workload", json_object_new_string("nosuch"));
	expect_refused(other, nt, ERR_CONFLICT, "workload");
	_cleanup_json_ json_object *reversed = change_point(commit[3], commit[0]);
	expect_refused(reversed, nt, ERR_INVALID, "commit_range");
	_cleanup_json_ json_object *unknown =
	    change_point("1111111111111111111111111111111111111111", commit[3]);
	expect_refused(unknown, nt, ERR_INVALID, "commit_range");
	_cleanup_json_ json_object *empty = change_point(commit[2], commit[2]);
	expect_refused(empty, nt, ERR_INVALID, "commit_range");
	_cleanup_json_ json_object *bad = change_point("not-a-commit", commit[3]);
	expect_refused(bad, nt, ERR_CONFLICT, "commit_range");
	/* the range limit */
	_cleanup_json_ json_object *s2 = NULL, *c2 = NULL;
	assert_true(change_point_bisect_spec(cp, nt, 2, &s2, &c2, &err) < 0);
	assert_string_equal(err.path, "commit_range");
}

/* 30 nights of series, +10 % from night 15, its commits the night's
 * index (job ids from first_id on); returns the first night after's job id
 * in after_id. */
static void seed(const char *dir, const char *series, int first_id, char after_id[48])
{
	char db_path[PATH_MAX + 16];
	snprintf(db_path, sizeof(db_path), "%s/schedlab.db", dir);
	sqlite3 *db = NULL;
	assert_int_equal(sqlite3_open(db_path, &db), SQLITE_OK);
	sqlite3_stmt *ins = NULL;
	assert_int_equal(
	    sqlite3_prepare_v2(db,
			       "INSERT INTO comparisons(job_id, job_name, finished_at, variant, "
			       "workload, metric, baseline_median, candidate_median, change, "
			       "verdict, source_commit, owner) VALUES (?1,?5,?2,'patched','w','m',"
			       "100,?3,0,'unchanged',?4,'schedule:' || ?5)",
			       -1, &ins, NULL),
	    SQLITE_OK);
	for (int i = 0; i < 30; i++) {
		char id[48], when[32], c[56];
		snprintf(id, sizeof(id), "%032x", first_id + i);
		snprintf(when, sizeof(when), "2026-11-%02dT02:30:00Z", i + 1);
		snprintf(c, sizeof(c), "%040x", i);
		sqlite3_reset(ins);
		sqlite3_bind_text(ins, 1, id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(ins, 2, when, -1, SQLITE_TRANSIENT);
		sqlite3_bind_double(ins, 3, (i < 15 ? 100 : 110) + 1.5 * sin(i * 2.3));
		sqlite3_bind_text(ins, 4, c, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(ins, 5, series, -1, SQLITE_TRANSIENT);
		assert_int_equal(sqlite3_step(ins), SQLITE_DONE);
		if (i == 15)
			snprintf(after_id, 48, "%s", id);
	}
	sqlite3_finalize(ins);
	sqlite3_close(db);
}

/* The state the store's change_point_bisections row of key holds ("" for
 * none), read as the trend reads it: from the database file. */
static const char *bisection_state(const char *dir, const char *key)
{
	static char state[32];
	char db_path[PATH_MAX + 16];
	snprintf(db_path, sizeof(db_path), "%s/schedlab.db", dir);
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	assert_int_equal(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db,
					    "SELECT COALESCE(state, '') FROM "
					    "change_point_bisections WHERE key = ?",
					    -1, &st, NULL),
			 SQLITE_OK);
	sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
	state[0] = '\0';
	if (sqlite3_step(st) == SQLITE_ROW)
		snprintf(state, sizeof(state), "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(db);
	return state;
}

static int64_t jobs_in(struct store *st)
{
	_cleanup_json_ json_object *jobs = NULL;
	int64_t total = -1;
	assert_int_equal(store_job_list(st, NULL, 10, 0, &jobs, &total, NULL), 0);
	return total;
}

static void test_store_link(void **state)
{
	(void)state;
	char dir[PATH_MAX], after[48];
	snprintf(dir, sizeof(dir), "%s/state", tmp);
	struct store *st = NULL;
	struct sl_error err = {0};
	assert_int_equal(store_open(dir, &st, &err), 0);
	seed(dir, "s", 0, after);
	time_t now = 1796000000; /* 2026-11-30 */

	/* the change point's key */
	_cleanup_json_ json_object *cps = NULL;
	assert_int_equal(store_trend_change_points(dir, "s", 3650L * 86400, now, &cps, &err), 0);
	assert_int_equal(json_object_array_length(cps), 1);
	json_object *cp = json_object_array_get_idx(cps, 0);
	const char *key = jget(cp, "key");
	char want[65];
	trend_change_point_key("s", "patched", "w", "m", after, want);
	assert_string_equal(key, want);
	assert_true(json_object_is_type(json_object_object_get(cp, "bisection"), json_type_null));

	/* the job and its link, in one transaction */
	_cleanup_json_ json_object *spec = json_tokener_parse("{\"name\": \"bisect-s\"}");
	_cleanup_json_ json_object *commits = json_tokener_parse(
	    "[{\"commit\": \"a\", \"subject\": \"one\"}, {\"commit\": \"b\", \"subject\": "
	    "\"two\"}]");
	struct store_new_job nj = {.name = "bisect-s",
				   .spec = spec,
				   .expanded = spec,
				   .change_point = key,
				   .bisect_commits = commits};
	char id[STORE_ID_LEN + 1], id2[STORE_ID_LEN + 1];
	assert_int_equal(store_id_new(id, &err), 0);
	assert_int_equal(store_job_submit(st, id, &nj, &err), 0);
	assert_int_equal(jobs_in(st), 1);
	/* a second bisection of it: refused, naming the first; no job stored */
	assert_int_equal(store_id_new(id2, &err), 0);
	assert_true(store_job_submit(st, id2, &nj, &err) < 0);
	assert_int_equal(err.kind, ERR_CONFLICT);
	assert_string_equal(err.path, "change_point");
	assert_non_null(strstr(err.message, id));
	assert_int_equal(jobs_in(st), 1);

	/* the check before any git work gives the same answer */
	err = (struct sl_error){0};
	assert_true(store_bisection_none(st, key, &err) < 0);
	assert_int_equal(err.kind, ERR_CONFLICT);
	assert_string_equal(err.path, "change_point");
	assert_non_null(strstr(err.message, id));
	assert_int_equal(store_bisection_none(st, want + 1, &err), 0);
	assert_string_equal(bisection_state(dir, key), "");
	char k2[65];
	assert_int_equal(store_bisection_of_job(st, id, k2, &err), 0);
	assert_string_equal(k2, key);
	assert_int_equal(store_bisection_of_job(st, after, k2, &err), -ENOENT);

	/* while it runs, the trend shows the job's status */
	_cleanup_json_ json_object *cps2 = NULL;
	assert_int_equal(store_trend_change_points(dir, "s", 3650L * 86400, now, &cps2, &err), 0);
	json_object *bj = json_object_object_get(json_object_array_get_idx(cps2, 0), "bisection");
	assert_string_equal(jget(bj, "job_id"), id);
	assert_string_equal(jget(bj, "state"), "queued");
	assert_true(
	    json_object_is_type(json_object_object_get(bj, "first_bad_commit"), json_type_null));

	/* the job's result is stored: the answer is there at once, before the
	 * job's status is final, with no webhook thread (store_result_index) */
	char result[1024];
	snprintf(result, sizeof(result),
		 "{\"verdict\": \"fail\", \"bisection\": {\"status\": \"found\","
		 " \"first_bad_commit\": \"%s\", \"first_bad_subject\": \"two <b>\","
		 " \"certain\": true, \"steps\": [{}, {}]}}",
		 commit[2]);
	_cleanup_json_ json_object *res = json_tokener_parse(result);
	assert_non_null(res);
	assert_int_equal(store_result_index(st, id, res, &err), 0);
	_cleanup_json_ json_object *cps3 = NULL;
	assert_int_equal(store_trend_change_points(dir, "s", 3650L * 86400, now, &cps3, &err), 0);
	bj = json_object_object_get(json_object_array_get_idx(cps3, 0), "bisection");
	assert_string_equal(jget(bj, "state"), "found");
	assert_string_equal(jget(bj, "first_bad_commit"), commit[2]);
	assert_string_equal(jget(bj, "first_bad_subject"), "two <b>");
	assert_true(json_object_get_boolean(json_object_object_get(bj, "certain")));
	assert_int_equal(json_object_get_int(json_object_object_get(bj, "steps")), 2);
	assert_int_equal(store_job_finish(st, id, "done", "fail", NULL, &err), 0);
	assert_string_equal(bisection_state(dir, key), "found");

	/* another change point over the same commits shares the job: its
	 * answer is the job's; a key with a bisection cannot share */
	char shared[65];
	snprintf(shared, sizeof(shared), "%064d", 99);
	assert_int_equal(store_bisection_share(st, shared, id, commits, &err), 0);
	assert_int_equal(store_result_index(st, id, res, &err), 0);
	assert_string_equal(bisection_state(dir, shared), "found");
	assert_true(store_bisection_share(st, shared, id, commits, &err) < 0);
	assert_int_equal(err.kind, ERR_CONFLICT);
	assert_int_equal(store_bisection_of_job(st, id, k2, &err), 0);

	/* a bisection is found by its series, variant and commit range once
	 * its change point is claimed; another variant, the baseline (NULL) or
	 * other commits find none */
	json_object *range = json_object_object_get(cp, "commit_range");
	const char *from = jget(range, "from"), *to = jget(range, "to");
	char found[STORE_ID_LEN + 1];
	json_object *fc = NULL;
	assert_int_equal(store_bisection_of_range(st, "s", "patched", from, to, found, &fc, &err),
			 -ENOENT);
	bool is_new = false;
	assert_int_equal(store_change_point_claim(st, key, "s", cp, &is_new, &err), 0);
	assert_true(is_new);
	assert_int_equal(store_bisection_of_range(st, "s", "patched", from, to, found, &fc, &err),
			 0);
	assert_string_equal(found, id);
	assert_int_equal(json_object_array_length(fc), 2);
	json_object_put(fc);
	assert_int_equal(store_bisection_of_range(st, "s", "other", from, to, found, &fc, &err),
			 -ENOENT);
	assert_int_equal(store_bisection_of_range(st, "s", NULL, from, to, found, &fc, &err),
			 -ENOENT);
	assert_int_equal(store_bisection_of_range(st, "s", "patched", to, from, found, &fc, &err),
			 -ENOENT);
	assert_int_equal(store_bisection_of_range(st, "t", "patched", from, to, found, &fc, &err),
			 -ENOENT);

	/* the page links the change point to the job's report, naming the
	 * culprit (escaped) */
	_cleanup_free_ char *html = NULL;
	assert_int_equal(store_trend_html_at(dir, 3650L * 86400, now, &html, &err), 0);
	char link[128], culprit[64];
	snprintf(link, sizeof(link), "href=\"/v1/jobs/%s/report\"", id);
	snprintf(culprit, sizeof(culprit), ">%.12s</code> two &lt;b&gt;", commit[2]);
	assert_non_null(strstr(html, link));
	assert_non_null(strstr(html, culprit));

	/* a failed bisection job stores no result: its status is the state */
	char after2[48];
	seed(dir, "s2", 100, after2);
	_cleanup_json_ json_object *cps4 = NULL;
	assert_int_equal(store_trend_change_points(dir, "s2", 3650L * 86400, now, &cps4, &err), 0);
	assert_int_equal(json_object_array_length(cps4), 1);
	struct store_new_job nj2 = nj;
	nj2.name = "bisect-s2";
	nj2.change_point = jget(json_object_array_get_idx(cps4, 0), "key");
	char id3[STORE_ID_LEN + 1];
	assert_int_equal(store_id_new(id3, &err), 0);
	assert_int_equal(store_job_submit(st, id3, &nj2, &err), 0);
	assert_int_equal(store_job_finish(st, id3, "failed", NULL, NULL, &err), 0);
	_cleanup_free_ char *html2 = NULL;
	assert_int_equal(store_trend_html_at(dir, 3650L * 86400, now, &html2, &err), 0);
	assert_non_null(strstr(html2, "bisection failed"));

	/* a cancelled bisection is not found for its range: a new one may start */
	json_object *cp4 = json_object_array_get_idx(cps4, 0);
	json_object *r4 = json_object_object_get(cp4, "commit_range");
	bool new4 = false;
	assert_int_equal(store_change_point_claim(st, nj2.change_point, "s2", cp4, &new4, &err), 0);
	char f4[STORE_ID_LEN + 1];
	json_object *c4 = NULL;
	assert_int_equal(store_bisection_of_range(st, "s2", "patched", jget(r4, "from"),
						  jget(r4, "to"), f4, &c4, &err),
			 0);
	json_object_put(c4);
	char sql[512];
	snprintf(sql, sizeof(sql), "UPDATE jobs SET status = 'cancelled' WHERE id = '%s';", id3);
	{
		char db_path[PATH_MAX + 16];
		snprintf(db_path, sizeof(db_path), "%s/schedlab.db", dir);
		sqlite3 *db = NULL;
		assert_int_equal(sqlite3_open(db_path, &db), SQLITE_OK);
		assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
		sqlite3_close(db);
	}
	assert_int_equal(store_bisection_of_range(st, "s2", "patched", jget(r4, "from"),
						  jget(r4, "to"), f4, &c4, &err),
			 -ENOENT);

	/* a range of one commit is not bisected: a failing job names it, a
	 * passing one found no regression, an inconclusive one says so */
	static const char *const verdicts[] = {"fail", "pass", "inconclusive"};
	static const char *const states[] = {"found", "no_regression", "inconclusive"};
	for (int k = 0; k < 3; k++) {
		char key1[65];
		snprintf(key1, sizeof(key1), "%064d", k + 1);
		_cleanup_json_ json_object *one =
		    json_tokener_parse("[{\"commit\": \"c\", \"subject\": \"only\"}]");
		struct store_new_job nj1 = {.name = "bisect-t",
					    .spec = spec,
					    .expanded = spec,
					    .change_point = key1,
					    .bisect_commits = one};
		char id1[STORE_ID_LEN + 1];
		assert_int_equal(store_id_new(id1, &err), 0);
		assert_int_equal(store_job_submit(st, id1, &nj1, &err), 0);
		_cleanup_json_ json_object *r1 = json_object_new_object();
		json_object_object_add(r1, "verdict", json_object_new_string(verdicts[k]));
		assert_int_equal(store_result_index(st, id1, r1, &err), 0);
		assert_string_equal(bisection_state(dir, key1), states[k]);
	}
	store_free(st);
}

/* The webhook thread's log, for test_webhook_without_queue. */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char log_text[4096];

static void log_line(const char *line)
{
	pthread_mutex_lock(&log_lock);
	size_t n = strlen(log_text);
	snprintf(log_text + n, sizeof(log_text) - n, "%s\n", line);
	pthread_mutex_unlock(&log_lock);
}

static bool log_has(const char *needle)
{
	pthread_mutex_lock(&log_lock);
	bool has = strstr(log_text, needle) != NULL;
	pthread_mutex_unlock(&log_lock);
	return has;
}

/* With "bisect_change_points" and no queue set (a job that ends before
 * the queue is, or after it is unset for shutdown), the new change point
 * is recorded and its bisection is logged as skipped, not dropped
 * silently. */
static void test_webhook_without_queue(void **state)
{
	(void)state;
	char dir[PATH_MAX], after[48];
	snprintf(dir, sizeof(dir), "%s/state-noqueue", tmp);
	struct store *st = NULL;
	struct sl_error err = {0};
	assert_int_equal(store_open(dir, &st, &err), 0);
	seed(dir, "s", 0, after);
	/* the last night's job row: the webhook judges its series */
	char last[48];
	snprintf(last, sizeof(last), "%032x", 29);
	_cleanup_json_ json_object *spec = json_tokener_parse(
	    "{\"name\": \"s\", \"gates\": [{\"workload\": \"w\", \"metric\": \"m\"}]}");
	struct store_new_job nj = {
	    .name = "s", .owner = "schedule:s", .spec = spec, .expanded = spec};
	assert_int_equal(store_job_submit(st, last, &nj, &err), 0);
	assert_int_equal(store_job_finish(st, last, "done", "pass", NULL, &err), 0);

	struct service_config *c = NULL;
	assert_int_equal(service_config_new(&c, &err), 0);
	c->bisect_change_points = true;
	struct webhooks *w = NULL;
	const struct webhook_opts o = {.config = c, .store = st, .log = log_line};
	assert_int_equal(webhooks_start(&o, &w, &err), 0);
	webhooks_set_queue(w, NULL);
	webhooks_job_ended(w, last);
	for (int i = 0; i < 200 && !log_has("not bisected"); i++)
		usleep(50 * 1000);
	if (!log_has("not bisected: the job queue is not running"))
		fail_msg("log: %s", log_text);
	assert_true(log_has("new change point"));

	/* a night whose job gates nothing of the change point's: alerted, not
	 * bisected by itself, and the log says why */
	char after3[48], last3[48];
	seed(dir, "s3", 200, after3);
	snprintf(last3, sizeof(last3), "%032x", 200 + 29);
	_cleanup_json_ json_object *spec3 = json_tokener_parse("{\"name\": \"s3\", \"gates\": []}");
	struct store_new_job nj3 = {
	    .name = "s3", .owner = "schedule:s3", .spec = spec3, .expanded = spec3};
	assert_int_equal(store_job_submit(st, last3, &nj3, &err), 0);
	assert_int_equal(store_job_finish(st, last3, "done", "pass", NULL, &err), 0);
	webhooks_job_ended(w, last3);
	for (int i = 0; i < 200 && !log_has("not bisected by itself"); i++)
		usleep(50 * 1000);
	webhooks_free(w);
	if (!log_has("not bisected by itself: w m is not one of the night job's gates"))
		fail_msg("log: %s", log_text);
	service_config_free(c);
	store_free(st);
}

static int no_runner(const struct runner_config *cfg, json_object *spec, const char *job_dir,
		     const struct runner_hooks *hooks, json_object **ret_result,
		     struct sl_error *err)
{
	(void)cfg, (void)spec, (void)job_dir, (void)hooks, (void)ret_result;
	return error_set(err, ERR_INTERNAL, EINVAL, "no runner in this test");
}

/* A job of owner, named "s", whose expanded spec is the git night with
 * "w m" gated, stored and ended "done"; or left queued. */
static void night_job(struct store *st, const char *id, const char *owner, bool end)
{
	_cleanup_json_ json_object *spec = night(true);
	json_object_object_add(spec, "gates",
			       json_tokener_parse("[{\"workload\": \"w\", \"metric\": \"m\"}]"));
	struct store_new_job nj = {.name = "s", .owner = owner, .spec = spec, .expanded = spec};
	struct sl_error err = {0};
	assert_int_equal(store_job_submit(st, id, &nj, &err), 0);
	if (end)
		assert_int_equal(store_job_finish(st, id, "done", "pass", NULL, &err), 0);
}

/* Tenancy (docs/service.md "Tenancy"): the schedule "s"'s nights move at
 * night 15 over real commits; a token ("alice") posts a job also named
 * "s". Its end judges its own series, "s@alice", which has no rows: no
 * change point, no bisection. The schedule's last night finds the change
 * point, and its bisection is charged to "schedule:s" under its quotas:
 * with one of its jobs queued and max_queued_per_token 1, it is refused
 * with the quota's reason (before, it ran as "change-point:s", unchecked). */
static void test_webhook_tenancy(void **state)
{
	(void)state;
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/state-tenancy", tmp);
	struct store *st = NULL;
	struct sl_error err = {0};
	assert_int_equal(store_open(dir, &st, &err), 0);
	char db_path[PATH_MAX + 16];
	snprintf(db_path, sizeof(db_path), "%s/schedlab.db", dir);
	sqlite3 *db = NULL;
	assert_int_equal(sqlite3_open(db_path, &db), SQLITE_OK);
	sqlite3_stmt *ins = NULL;
	assert_int_equal(
	    sqlite3_prepare_v2(db,
			       "INSERT INTO comparisons(job_id, job_name, finished_at, variant, "
			       "workload, metric, baseline_median, candidate_median, change, "
			       "verdict, source_commit, owner) VALUES (?1,'s',?2,'patched','w','m',"
			       "100,?3,0,'unchanged',?4,'schedule:s')",
			       -1, &ins, NULL),
	    SQLITE_OK);
	for (int i = 0; i < 30; i++) {
		char id[48], when[32];
		snprintf(id, sizeof(id), "%032x", 500 + i);
		snprintf(when, sizeof(when), "2026-11-%02dT02:30:00Z", i + 1);
		sqlite3_reset(ins);
		sqlite3_bind_text(ins, 1, id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(ins, 2, when, -1, SQLITE_TRANSIENT);
		sqlite3_bind_double(ins, 3, (i < 15 ? 100 : 110) + 1.5 * sin(i * 2.3));
		sqlite3_bind_text(ins, 4, commit[i < 15 ? 0 : 3], -1, SQLITE_STATIC);
		assert_int_equal(sqlite3_step(ins), SQLITE_DONE);
	}
	sqlite3_finalize(ins);
	sqlite3_close(db);
	char after[48], last[48], queued[48], token[48];
	snprintf(after, sizeof(after), "%032x", 500 + 15);
	snprintf(last, sizeof(last), "%032x", 500 + 29);
	snprintf(queued, sizeof(queued), "%032x", 600);
	snprintf(token, sizeof(token), "%032x", 601);
	night_job(st, after, "schedule:s", true);
	night_job(st, last, "schedule:s", true);
	night_job(st, queued, "schedule:s", false);
	night_job(st, token, "alice", true);

	struct service_config *c = NULL;
	assert_int_equal(service_config_new(&c, &err), 0);
	c->bisect_change_points = true;
	c->quotas.max_queued_per_token = 1;
	char allowed[PATH_MAX + 16];
	snprintf(allowed, sizeof(allowed), "%s/allowed", tmp);
	_cleanup_free_ char *real = realpath(allowed, NULL);
	char *dirs[] = {real};
	c->limits.git_sources = dirs;
	c->limits.n_git_sources = 1;
	struct queue *q = NULL;
	struct queue_opts qo = {.store = st, .runner = no_runner, .workers = 1};
	assert_int_equal(queue_new(&qo, &q, &err), 0); /* never started */
	pthread_mutex_lock(&log_lock);
	log_text[0] = '\0';
	pthread_mutex_unlock(&log_lock);
	struct webhooks *w = NULL;
	const struct webhook_opts o = {.config = c, .store = st, .log = log_line};
	assert_int_equal(webhooks_start(&o, &w, &err), 0);
	webhooks_set_queue(w, q);
	webhooks_job_ended(w, token);
	webhooks_job_ended(w, last);
	for (int i = 0; i < 200 && !log_has("bisect"); i++)
		usleep(50 * 1000);
	usleep(200 * 1000);
	webhooks_set_queue(w, NULL);
	webhooks_free(w);
	queue_free(q);
	c->limits.n_git_sources = 0;
	c->limits.git_sources = NULL;
	service_config_free(c);
	if (!log_has("series 's': new change point") || log_has("series 's@alice'") ||
	    !log_has("not bisected: This token has 1 queued jobs, its limit is 1."))
		fail_msg("log: %s", log_text);
	/* the change point is the schedule's, claimed once */
	char want[65];
	trend_change_point_key("s", "patched", "w", "m", after, want);
	char line[96];
	snprintf(line, sizeof(line), "series 's': new change point %.12s", want);
	assert_true(log_has(line));
	const char *first = strstr(log_text, "new change point");
	assert_null(strstr(first + 1, "new change point"));
	store_free(st);
}

static void test_config(void **state)
{
	(void)state;
	static const struct {
		const char *json;
		int ok, value;
	} cases[] = {
	    {"{}", 1, 0},
	    {"{\"bisect_change_points\": true}", 1, 1},
	    {"{\"bisect_change_points\": false}", 1, 0},
	    {"{\"bisect_change_points\": \"yes\"}", 0, 0},
	    {"{\"bisect_change_points\": 1}", 0, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct service_config *c = NULL;
		struct sl_error err = {0};
		assert_int_equal(service_config_new(&c, &err), 0);
		json_object *o = json_tokener_parse(cases[i].json);
		int r = service_config_apply(c, o, &err);
		json_object_put(o);
		if (cases[i].ok) {
			assert_int_equal(r, 0);
			assert_int_equal(c->bisect_change_points, cases[i].value);
		} else {
			assert_true(r < 0);
			assert_string_equal(err.path, "bisect_change_points");
		}
		service_config_free(c);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_config),	    cmocka_unit_test(test_spec),
	    cmocka_unit_test(test_store_link),	    cmocka_unit_test(test_webhook_without_queue),
	    cmocka_unit_test(test_webhook_tenancy),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
