/* Nightly without a server: the git source allow-list
 * (job/source_policy.c), the config's schedules, git_sources and webhooks
 * (server/config_nightly.c), the nightly clock's once-per-slot rule over a real
 * store (server/nightly_clock.c; the queue runs no job), and the webhook's
 * payload, key and signature (server/webhook.c). The e2e test
 * 72-nightly does the same with the real service, HTTP and a receiver. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <math.h>
#include <sqlite3.h>

#include "job/source_policy.h"
#include "report/trend.h"
#include "server/store_trend.h"
#include "server/config.h"
#include "server/queue.h"
#include "server/nightly_clock.h"
#include "server/store.h"
#include "server/webhook.h"
#include "util/fs.h"

static char tmp[200];

/* tmpl with every "@T@" replaced by the test's directory. */
static const char *subst(const char *tmpl, char *out, size_t size)
{
	size_t n = 0;
	for (const char *p = tmpl; *p && n + 1 < size;) {
		if (strncmp(p, "@T@", 3) == 0) {
			n += (size_t)snprintf(out + n, size - n, "%s", tmp);
			p += 3;
		} else
			out[n++] = *p++;
	}
	out[n < size ? n : size - 1] = '\0';
	return out;
}

static int setup(void **state)
{
	(void)state;
	snprintf(tmp, sizeof(tmp), "%s/schedlab-nightly.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : P_tmpdir);
	assert_non_null(mkdtemp(tmp));
	char p[PATH_MAX + 64];
	snprintf(p, sizeof(p), "%s/allowed/tree/sub", tmp);
	assert_int_equal(fs_mkdir_p(p, NULL), 0);
	snprintf(p, sizeof(p), "%s/allowed-not", tmp);
	assert_int_equal(fs_mkdir_p(p, NULL), 0);
	snprintf(p, sizeof(p), "%s/outside", tmp);
	assert_int_equal(fs_mkdir_p(p, NULL), 0);
	char link[PATH_MAX + 64];
	snprintf(link, sizeof(link), "%s/allowed/escape", tmp);
	assert_int_equal(symlink("../outside", link), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	return system(cmd) == 0 ? 0 : -1;
}

/* ---- the allow-list ---- */

static int policy(const char *tmpl, char **ret)
{
	char allowed[PATH_MAX + 16], src[4096];
	snprintf(allowed, sizeof(allowed), "%s/allowed", tmp);
	char *real = realpath(allowed, NULL);
	char *const dirs[] = {real};
	subst(tmpl, src, sizeof(src));
	struct sl_error err = {0};
	*ret = NULL;
	int r = job_source_policy_check(src, dirs, 1, "$.kernels.base", ret, &err);
	if (r < 0) {
		assert_string_equal(err.path, "$.kernels.base.source");
		assert_null(strstr(err.message, tmp)); /* no host path in the answer */
	}
	free(real);
	return r;
}

static void test_policy(void **state)
{
	(void)state;
	char *out = NULL;
	assert_int_equal(policy("git:@T@/allowed/tree@main", &out), 0);
	assert_non_null(strstr(out, "/allowed/tree@main"));
	free(out);
	assert_int_equal(policy("git:@T@/allowed@v6.12", &out), 0);
	free(out);
	/* ".." that stays inside is fine, and becomes the real path */
	assert_int_equal(policy("git:@T@/allowed/tree/sub/..@HEAD~1", &out), 0);
	assert_null(strstr(out, ".."));
	free(out);
	/* escapes: outside, a sibling sharing the prefix, "..", a symlink */
	assert_int_equal(policy("git:@T@/outside@main", &out), -EINVAL);
	assert_int_equal(policy("git:@T@/allowed-not@main", &out), -EINVAL);
	assert_int_equal(policy("git:@T@/allowed/../outside@main", &out), -EINVAL);
	assert_int_equal(policy("git:@T@/allowed/escape@main", &out), -EINVAL);
	/* missing, relative, refs that are options or escapes */
	assert_int_equal(policy("git:@T@/allowed/none@main", &out), -EINVAL);
	assert_int_equal(policy("git:relative@T@@main", &out), -EINVAL);
	assert_int_equal(policy("git:@T@/allowed/tree@-main", &out), -EINVAL);
	assert_int_equal(policy("git:@T@/allowed/tree@a..b", &out), -EINVAL);
	assert_int_equal(policy("git:@T@/allowed/tree@", &out), -EINVAL);
	assert_int_equal(policy("git:@T@/allowed/tree", &out), -EINVAL);
	assert_int_equal(policy("tarball:@T@/allowed/x.tar", &out), -EINVAL);
	/* no allow-list: no git tree at all */
	struct sl_error err = {0};
	assert_int_equal(job_source_policy_check("git:/srv/x@main", NULL, 0, "$.k", &out, &err),
			 -EINVAL);
	assert_non_null(strstr(err.message, "git_sources"));
}

/* ---- the config ---- */

static int apply(const char *json, struct service_config **ret, struct sl_error *err)
{
	json_object *o = json_tokener_parse(json);
	assert_non_null(o);
	assert_int_equal(service_config_new(ret, err), 0);
	(*ret)->config_dir = strdup(tmp);
	int r = service_config_apply(*ret, o, err);
	json_object_put(o);
	return r;
}

static void expect_config_error(const char *json, const char *path, const char *words)
{
	struct service_config *c = NULL;
	struct sl_error err = {0};
	char text[4096];
	subst(json, text, sizeof(text));
	assert_true(apply(text, &c, &err) < 0); /* -EINVAL, or -ENOENT for a missing file */
	if (strcmp(err.path, path) != 0 || !strstr(err.message, words))
		fail_msg("%s: got path '%s', message '%s'", text, err.path, err.message);
	service_config_free(c);
}

#define GIT_JOB                                                                                    \
	"{\"base\": {\"source\": \"git:@T@/allowed/tree@HEAD\"}, \"patches\": [], "                \
	"\"workloads\": [{\"tool\": \"rt-migrate-test\", \"args\": [\"3\"]}], \"repeat\": 1}"

static void test_config(void **state)
{
	(void)state;
	char text[4096], path[PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/job.json", tmp);
	char job[2048];
	subst(GIT_JOB, job, sizeof(job));
	assert_int_equal(fs_write_file_atomic(path, job, strlen(job), NULL), 0);
	subst("{\"git_sources\": [\"@T@/allowed/tree/..\"],"
	      " \"schedules\": [{\"name\": \"n1\", \"job\": \"job.json\", \"at\": \"30 2 * * *\","
	      "  \"source_ref\": \"main\"}],"
	      " \"webhooks\": [{\"url\": \"https://hooks.example.org/x\", \"secret\": \"s\"}]}",
	      text, sizeof(text));
	struct service_config *c = NULL;
	struct sl_error err = {0};
	if (apply(text, &c, &err) < 0)
		fail_msg("%s", err.message);
	assert_int_equal(c->n_schedules, 1);
	assert_string_equal(c->schedules[0].name, "n1");
	/* the schedule's name is the job's: the trend series */
	assert_string_equal(
	    json_object_get_string(json_object_object_get(c->schedules[0].job, "name")), "n1");
	const char *src = json_object_get_string(
	    json_object_object_get(json_object_object_get(c->schedules[0].job, "base"), "source"));
	assert_non_null(strstr(src, "/allowed/tree@main")); /* source_ref replaced HEAD */
	assert_int_equal(c->n_git_sources, 1);
	assert_null(strstr(c->git_sources[0], "..")); /* resolved */
	assert_int_equal(c->limits.n_git_sources, 1);
	assert_int_equal(c->n_webhooks, 1);
	service_config_free(c);

	expect_config_error(
	    "{\"schedules\": [{\"name\": \"a\", \"job\": {}, \"at\": \"0 25 * * *\"}]}",
	    "schedules[0].at", "hour");
	expect_config_error(
	    "{\"schedules\": [{\"name\": \"a b\", \"job\": {}, \"at\": \"* * * * *\"}]}",
	    "schedules[0].name", "letters");
	expect_config_error("{\"schedules\": [{\"name\": \"a\", \"job\": {}, \"at\": \"* * * * *\","
			    " \"when\": 1}]}",
			    "schedules[0].when", "Unknown");
	expect_config_error("{\"schedules\": [{\"name\": \"a\", \"at\": \"* * * * *\"}]}",
			    "schedules[0].job", "missing");
	expect_config_error("{\"schedules\": [{\"name\": \"a\", \"job\": \"none.json\","
			    " \"at\": \"* * * * *\"}]}",
			    "", "none.json");
	/* a Debian job has no git source for source_ref to move */
	expect_config_error("{\"schedules\": [{\"name\": \"a\", \"job\": {\"base\": {}},"
			    " \"at\": \"* * * * *\", \"source_ref\": \"main\"}]}",
			    "schedules[0].source_ref", "git:");
	/* nor an option or a path escape as the ref (job_source_ref_valid) */
	expect_config_error("{\"schedules\": [{\"name\": \"a\", \"job\": {},"
			    " \"at\": \"* * * * *\", \"source_ref\": \"--upload-pack=x\"}]}",
			    "schedules[0].source_ref", "git ref");
	expect_config_error("{\"schedules\": [{\"name\": \"a\", \"job\": {},"
			    " \"at\": \"* * * * *\", \"source_ref\": \"a/../b\"}]}",
			    "schedules[0].source_ref", "git ref");
	expect_config_error("{\"git_sources\": [\"@T@/allowed\"], \"schedules\": ["
			    "{\"name\": \"a\", \"job\": {\"base\": {}, \"patches\": []},"
			    " \"at\": \"* * * * *\"},"
			    "{\"name\": \"a\", \"job\": {}, \"at\": \"* * * * *\"}]}",
			    "schedules[1].name", "twice");
	expect_config_error("{\"git_sources\": [\"@T@/none\"]}", "git_sources[0]", "directory");
	expect_config_error("{\"git_sources\": [\"relative\"]}", "git_sources[0]", "absolute");
	expect_config_error("{\"webhooks\": [{\"url\": \"file:///etc/passwd\"}]}",
			    "webhooks[0].url", "http");
	expect_config_error("{\"webhooks\": [{\"url\": \"http://x\", \"secret\": \"\"}]}",
			    "webhooks[0].secret", "1-");
	/* the schedule's job is expanded at load: a git job needs git_sources */
	snprintf(
	    text, sizeof(text),
	    "{\"schedules\": [{\"name\": \"a\", \"job\": \"job.json\", \"at\": \"* * * * *\"}]}");
	assert_int_equal(apply(text, &c, &err), -EINVAL);
	assert_non_null(strstr(err.message, "schedules[0].job"));
	service_config_free(c);
}

/* ---- the scheduler over a real store ---- */

static int no_runner(const struct runner_config *cfg, json_object *spec, const char *job_dir,
		     const struct runner_hooks *h, json_object **ret_result, struct sl_error *err)
{
	(void)cfg, (void)spec, (void)job_dir, (void)h, (void)ret_result;
	return error_set(err, ERR_INTERNAL, EIO, "not in this test");
}

static int64_t jobs_in(struct store *st)
{
	_cleanup_json_ json_object *jobs = NULL;
	int64_t total = -1;
	assert_int_equal(store_job_list(st, NULL, 10, 0, &jobs, &total, NULL), 0);
	return total;
}

static void test_nightly_clock_once_per_slot(void **state)
{
	(void)state;
	char text[4096], dir[PATH_MAX + 16];
	snprintf(dir, sizeof(dir), "%s/state", tmp);
	subst("{\"git_sources\": [\"@T@/allowed\"], \"schedules\": [{\"name\": \"every-min\","
	      " \"job\": " GIT_JOB ", \"at\": \"* * * * *\"}]}",
	      text, sizeof(text));
	struct service_config *c = NULL;
	struct sl_error err = {0};
	if (apply(text, &c, &err) < 0)
		fail_msg("%s", err.message);
	struct store *st = NULL;
	assert_int_equal(store_open(dir, &st, &err), 0);
	struct queue *q = NULL;
	struct queue_opts qo = {.store = st, .runner = no_runner, .workers = 1};
	assert_int_equal(queue_new(&qo, &q, &err), 0); /* never started: no job runs */
	struct nightly_clock_opts so = {.config = c, .store = st, .queue = q};
	struct nightly_clock *s = NULL;

	/* 30 s past a slot: first sight records it, runs nothing */
	time_t now = time(NULL);
	long base = (long)(now - now % 60 + 60 * 60 + 30 - now);
	nightly_clock_set_offset(base);
	assert_int_equal(nightly_clock_start(&so, &s, &err), 0);
	assert_int_equal(jobs_in(st), 0);
	_cleanup_json_ json_object *list = nightly_clock_list_json(c, st, &err);
	json_object *e = json_object_array_get_idx(json_object_object_get(list, "schedules"), 0);
	assert_true(json_object_is_type(json_object_object_get(e, "last_run"), json_type_null));
	nightly_clock_free(s);

	/* 5 slots later, at start: one job, not five */
	nightly_clock_set_offset(base + 300);
	assert_int_equal(nightly_clock_start(&so, &s, &err), 0);
	assert_int_equal(jobs_in(st), 1);
	nightly_clock_free(s);
	/* the same slot again: nothing */
	assert_int_equal(nightly_clock_start(&so, &s, &err), 0);
	assert_int_equal(jobs_in(st), 1);
	/* the thread sees the next slot come */
	nightly_clock_set_offset(base + 360);
	for (int i = 0; i < 40 && jobs_in(st) < 2; i++)
		usleep(100000);
	assert_int_equal(jobs_in(st), 2);
	nightly_clock_free(s);

	struct store_schedule_state ss;
	assert_int_equal(store_schedule_get(st, "every-min", &ss, &err), 0);
	assert_true(ss.found);
	assert_int_equal(ss.last_slot % 60, 0);
	_cleanup_json_ json_object *jobs = NULL;
	int64_t total = 0;
	assert_int_equal(store_job_list(st, NULL, 1, 0, &jobs, &total, &err), 0);
	json_object *j0 = json_object_array_get_idx(jobs, 0);
	assert_string_equal(json_object_get_string(json_object_object_get(j0, "name")),
			    "every-min");
	assert_string_equal(json_object_get_string(json_object_object_get(j0, "id")),
			    ss.last_job_id);
	nightly_clock_set_offset(0);
	queue_free(q);
	store_free(st);
	service_config_free(c);
}

/* ---- the webhook ---- */

static void test_webhook_payload(void **state)
{
	(void)state;
	json_object *cp = json_tokener_parse(
	    "{\"series\": \"n1\", \"variant\": \"patched\", \"baseline\": false,"
	    " \"workload\": \"rt-migrate-test\", \"metric\": \"latency_us.max\","
	    " \"direction\": \"up\", \"magnitude\": {\"change\": 10.0, \"ci_lo\": 8.0, \"ci_hi\": "
	    "12.0},"
	    " \"last_night_before\": {\"time\": \"2026-11-14T02:30:00Z\","
	    "  \"job_id\": \"0123456789abcdef0123456789abcdef\", \"commit\": null},"
	    " \"first_night_after\": {\"time\": \"2026-11-15T02:30:00Z\","
	    "  \"job_id\": \"fedcba9876543210fedcba9876543210\", \"commit\": null},"
	    " \"commit_range\": null}");
	assert_non_null(cp);
	json_object *p = webhook_payload(cp);
	assert_string_equal(json_object_get_string(json_object_object_get(p, "event")),
			    "change_point");
	assert_string_equal(json_object_get_string(json_object_object_get(p, "series")), "n1");
	json_object *jobs = json_object_object_get(json_object_object_get(p, "links"), "jobs");
	assert_int_equal(json_object_array_length(jobs), 2);
	assert_string_equal(json_object_get_string(json_object_array_get_idx(jobs, 1)),
			    "/v1/jobs/fedcba9876543210fedcba9876543210");
	/* a job id that is not one is not linked */
	json_object_object_add(json_object_object_get(cp, "first_night_after"), "job_id",
			       json_object_new_string("../../etc"));
	json_object *p2 = webhook_payload(cp);
	assert_int_equal(json_object_array_length(
			     json_object_object_get(json_object_object_get(p2, "links"), "jobs")),
			 1);
	json_object_put(p2);
	json_object_put(p);
	json_object_put(cp);

	/* RFC 4231 test case 2 */
	char sig[WEBHOOK_SIGNATURE_MAX];
	const char *data = "what do ya want for nothing?";
	webhook_signature("Jefe", data, strlen(data), sig);
	assert_string_equal(
	    sig, "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

/* ---- the trend's commit ranges ---- */

static void test_trend_commit_range(void **state)
{
	(void)state;
	char dir[PATH_MAX], db_path[PATH_MAX + 16];
	snprintf(dir, sizeof(dir), "%s/trend", tmp);
	struct store *st = NULL;
	struct sl_error err = {0};
	assert_int_equal(store_open(dir, &st, &err), 0); /* the real schema */
	store_free(st);
	snprintf(db_path, sizeof(db_path), "%s/schedlab.db", dir);
	sqlite3 *db = NULL;
	assert_int_equal(sqlite3_open(db_path, &db), SQLITE_OK);
	sqlite3_stmt *ins = NULL;
	assert_int_equal(
	    sqlite3_prepare_v2(db,
			       "INSERT INTO comparisons(job_id, job_name, finished_at, variant, "
			       "workload, metric, baseline_median, candidate_median, change, "
			       "verdict, source_commit, owner) VALUES (?,?2,?,'patched','w','m',"
			       "100,?,0,'unchanged',?,'schedule:' || ?2)",
			       -1, &ins, NULL),
	    SQLITE_OK);
	/* 30 nights, +10 % from night 15, a small deterministic wobble; the
	 * same series under another name must not be mixed in */
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < 30; i++) {
			char id[48], when[32], commit[56];
			snprintf(id, sizeof(id), "%031x%d", i, k);
			snprintf(when, sizeof(when), "2026-11-%02dT02:30:00Z", i + 1);
			snprintf(commit, sizeof(commit), "%039x%d", i, k);
			double v = (i < 15 ? 100 : 110) + 1.5 * sin(i * 2.3);
			sqlite3_reset(ins);
			sqlite3_bind_text(ins, 1, id, -1, SQLITE_TRANSIENT);
			sqlite3_bind_text(ins, 2, k ? "other" : "s", -1, SQLITE_STATIC);
			sqlite3_bind_text(ins, 3, when, -1, SQLITE_TRANSIENT);
			sqlite3_bind_double(ins, 4, k ? 100 : v);
			sqlite3_bind_text(ins, 5, commit, -1, SQLITE_TRANSIENT);
			assert_int_equal(sqlite3_step(ins), SQLITE_DONE);
		}
	sqlite3_finalize(ins);
	sqlite3_close(db);

	time_t now = 1796000000; /* 2026-11-30 */
	_cleanup_json_ json_object *cps = NULL;
	assert_int_equal(store_trend_change_points(dir, "s", 3650L * 86400, now, &cps, &err), 0);
	assert_int_equal(json_object_array_length(cps), 1);
	json_object *cp = json_object_array_get_idx(cps, 0);
	assert_string_equal(json_object_get_string(json_object_object_get(cp, "series")), "s");
	assert_string_equal(json_object_get_string(json_object_object_get(cp, "direction")), "up");
	json_object *range = json_object_object_get(cp, "commit_range");
	char want[56];
	snprintf(want, sizeof(want), "%039x%d", 14, 0);
	assert_string_equal(json_object_get_string(json_object_object_get(range, "from")), want);
	snprintf(want, sizeof(want), "%039x%d", 15, 0);
	assert_string_equal(json_object_get_string(json_object_object_get(range, "to")), want);
	_cleanup_json_ json_object *none = NULL;
	assert_int_equal(store_trend_change_points(dir, "other", 3650L * 86400, now, &none, &err),
			 0);
	assert_int_equal(json_object_array_length(none), 0);

	_cleanup_free_ char *html = NULL;
	assert_int_equal(store_trend_html_at(dir, 3650L * 86400, now, &html, &err), 0);
	char shown[64];
	snprintf(shown, sizeof(shown), ">%.12s..", "00000000000000000000000000000000000000e0");
	assert_non_null(strstr(html, shown));
}

/* ---- tenancy: a series is a (owner, name) ---- */

/* A schedule's nights, flat, and a token's jobs under the schedule's name
 * that jump by 30 % at night 15: the schedule's series has no change point
 * (the token's rows do not join it) and the token's rows are a series of
 * their own, "s@alice", whose change point names its owner. Rows of a job
 * the store no longer has (owner '') are a third series, not the
 * schedule's. */
static void test_trend_tenancy(void **state)
{
	(void)state;
	char dir[PATH_MAX], db_path[PATH_MAX + 16];
	snprintf(dir, sizeof(dir), "%s/tenancy", tmp);
	struct store *st = NULL;
	struct sl_error err = {0};
	assert_int_equal(store_open(dir, &st, &err), 0);
	store_free(st);
	snprintf(db_path, sizeof(db_path), "%s/schedlab.db", dir);
	sqlite3 *db = NULL;
	assert_int_equal(sqlite3_open(db_path, &db), SQLITE_OK);
	sqlite3_stmt *ins = NULL;
	assert_int_equal(
	    sqlite3_prepare_v2(db,
			       "INSERT INTO comparisons(job_id, job_name, finished_at, variant, "
			       "workload, metric, baseline_median, candidate_median, change, "
			       "verdict, owner) VALUES (?,'s',?,'patched','w','m',100,?,0,"
			       "'unchanged',?)",
			       -1, &ins, NULL),
	    SQLITE_OK);
	static const char *const owners[] = {"schedule:s", "alice", ""};
	for (int k = 0; k < 3; k++)
		for (int i = 0; i < 30; i++) {
			char id[48], when[32];
			snprintf(id, sizeof(id), "%031x%d", i, k);
			snprintf(when, sizeof(when), "2026-11-%02dT0%d:30:00Z", i + 1, 2 + k);
			double v = 100 + 1.5 * sin(i * 2.3);
			if (k > 0 && i >= 15)
				v += 30;
			sqlite3_reset(ins);
			sqlite3_bind_text(ins, 1, id, -1, SQLITE_TRANSIENT);
			sqlite3_bind_text(ins, 2, when, -1, SQLITE_TRANSIENT);
			sqlite3_bind_double(ins, 3, v);
			sqlite3_bind_text(ins, 4, owners[k], -1, SQLITE_STATIC);
			assert_int_equal(sqlite3_step(ins), SQLITE_DONE);
		}
	sqlite3_finalize(ins);
	sqlite3_close(db);

	time_t now = 1796000000;
	_cleanup_json_ json_object *night = NULL, *token = NULL, *gone = NULL, *all = NULL;
	assert_int_equal(store_trend_change_points(dir, "s", 3650L * 86400, now, &night, &err), 0);
	assert_int_equal(json_object_array_length(night), 0);
	assert_int_equal(
	    store_trend_change_points(dir, "s@alice", 3650L * 86400, now, &token, &err), 0);
	assert_int_equal(json_object_array_length(token), 1);
	json_object *cp = json_object_array_get_idx(token, 0);
	assert_string_equal(json_object_get_string(json_object_object_get(cp, "series")),
			    "s@alice");
	assert_string_equal(json_object_get_string(json_object_object_get(cp, "owner")), "alice");
	assert_string_equal(json_object_get_string(json_object_object_get(cp, "name")), "s");
	assert_int_equal(store_trend_change_points(dir, "s@-", 3650L * 86400, now, &gone, &err), 0);
	assert_int_equal(json_object_array_length(gone), 1);
	/* every series: two change points, none of them the schedule's */
	assert_int_equal(store_trend_change_points(dir, NULL, 3650L * 86400, now, &all, &err), 0);
	assert_int_equal(json_object_array_length(all), 2);
	for (size_t i = 0; i < 2; i++) {
		json_object *c = json_object_array_get_idx(all, i);
		assert_string_not_equal(json_object_get_string(json_object_object_get(c, "series")),
					"s");
	}
	/* the ids themselves */
	char id[160];
	trend_series_id("schedule:s", "s", id, sizeof(id));
	assert_string_equal(id, "s");
	trend_series_id("schedule:t", "s", id, sizeof(id));
	assert_string_equal(id, "s@schedule:t");
	trend_series_id("bob", "s", id, sizeof(id));
	assert_string_equal(id, "s@bob");
}

/* Schema 5 on a store from before it: each comparison takes its job's
 * owner, one whose job is gone gets ''. The store is made at schema 4 by
 * taking schema 5 off a new one (the column, its index and the version). */
static void test_owner_migration(void **state)
{
	(void)state;
	char dir[PATH_MAX], db_path[PATH_MAX + 16];
	snprintf(dir, sizeof(dir), "%s/migration", tmp);
	struct store *st = NULL;
	struct sl_error err = {0};
	assert_int_equal(store_open(dir, &st, &err), 0);
	_cleanup_json_ json_object *spec = json_tokener_parse("{\"name\": \"s\"}");
	struct store_new_job nj = {
	    .name = "s", .owner = "schedule:s", .spec = spec, .expanded = spec};
	char night[48], token[48];
	snprintf(night, sizeof(night), "%032x", 1);
	snprintf(token, sizeof(token), "%032x", 2);
	assert_int_equal(store_job_submit(st, night, &nj, &err), 0);
	nj.owner = "alice";
	assert_int_equal(store_job_submit(st, token, &nj, &err), 0);
	store_free(st);
	snprintf(db_path, sizeof(db_path), "%s/schedlab.db", dir);
	sqlite3 *db = NULL;
	assert_int_equal(sqlite3_open(db_path, &db), SQLITE_OK);
	char sql[1024];
	snprintf(sql, sizeof(sql),
		 "DROP INDEX comparisons_owner_series;"
		 "ALTER TABLE comparisons DROP COLUMN owner;"
		 "DELETE FROM schema_version WHERE version >= 5;"
		 "INSERT INTO comparisons(job_id, job_name, finished_at, variant, workload, metric)"
		 " VALUES ('%s', 's', '2026-11-01T02:30:00Z', 'patched', 'w', 'm'),"
		 " ('%s', 's', '2026-11-01T03:30:00Z', 'patched', 'w', 'm'),"
		 " ('%032x', 's', '2026-11-01T04:30:00Z', 'patched', 'w', 'm');",
		 night, token, 3);
	char *msg = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s", msg);
	sqlite3_close(db);
	assert_int_equal(store_open(dir, &st, &err), 0); /* migrates to 5 */
	store_free(st);
	assert_int_equal(sqlite3_open(db_path, &db), SQLITE_OK);
	sqlite3_stmt *q = NULL;
	assert_int_equal(
	    sqlite3_prepare_v2(db,
			       "SELECT group_concat(owner, ',') FROM (SELECT owner FROM "
			       "comparisons ORDER BY finished_at)",
			       -1, &q, NULL),
	    SQLITE_OK);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(q, 0), "schedule:s,alice,");
	sqlite3_finalize(q);
	sqlite3_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_policy),
	    cmocka_unit_test(test_config),
	    cmocka_unit_test(test_nightly_clock_once_per_slot),
	    cmocka_unit_test(test_webhook_payload),
	    cmocka_unit_test(test_trend_commit_range),
	    cmocka_unit_test(test_trend_tenancy),
	    cmocka_unit_test(test_owner_migration),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
