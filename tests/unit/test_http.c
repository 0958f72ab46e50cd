/* The HTTP layer in-process: a real libmicrohttpd server on 127.0.0.1 with a
 * free port, the real store and queue, a fake runner and a fake job_expand;
 * requests through the real client (libcurl). Covers auth (401/403), body
 * limits (413), content types (415), validation errors (400 with a path),
 * submit JSON and multipart (patch and mbox parts), status, result (409 before done), log, events
 * with Last-Event-ID, cancel, list paging, metrics, path traversal, the
 * route table against results-schema/openapi.yaml, event streams that hold
 * no thread each (counted in /proc/self/task) and their per-token cap, and
 * the request deadline against a client that trickles its header. */
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <setjmp.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "compare/calibration.h"
#include "server/config.h"
#include "server/http.h"
#include "cli/httpclient.h"
#include "util/disk.h"
#include "util/fs.h"

#define TOKEN_ALL  "test-token-all-roles-0123456789"
#define TOKEN_READ "test-token-read-only-0123456789"

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static int spec_int(json_object *spec, const char *k, int def)
{
	json_object *v = NULL;
	return json_object_object_get_ex(spec, k, &v) ? json_object_get_int(v) : def;
}

static int fake_runner(const struct runner_config *cfg, json_object *spec, const char *job_dir,
		       const struct runner_hooks *h, json_object **ret_result, struct sl_error *err)
{
	(void)cfg;
	int n = spec_int(spec, "runs", 2), ms = spec_int(spec, "sleep_ms", 20);
	_cleanup_free_ char *log = fs_path_join(job_dir, "build.log");
	fs_write_file_atomic(log, "make: fake build\n", 17, NULL);
	/* What materialize.c writes for an inline patch named "evil.log". */
	_cleanup_free_ char *kdir = fs_path_join(job_dir, "kernels/k");
	_cleanup_free_ char *evil = fs_path_join(kdir, "0001-evil.log");
	fs_mkdir_p(kdir, NULL);
	fs_write_file_atomic(evil, "==> build.log <==\nFORGED\n", 25, NULL);
	for (int i = 0; i < n; i++) {
		char key[32];
		snprintf(key, sizeof(key), "baseline#%d", i);
		json_object *old = h->lookup_run(h->userdata, key);
		if (old) {
			json_object_put(old);
			continue;
		}
		struct runner_progress p = {.phase = "running",
					    .percent = 100.0 * i / n,
					    .run_index = i + 1,
					    .run_total = n,
					    .message = key};
		h->progress(h->userdata, &p);
		for (int t = 0; t < ms; t += 5) {
			if (h->cancelled(h->userdata))
				return error_set(err, ERR_CANCELLED, ECANCELED, "Cancelled.");
			sleep_ms(5);
		}
		_cleanup_json_ json_object *run = json_object_new_object();
		json_object_object_add(run, "status", json_object_new_string("ok"));
		json_object_object_add(run, "boot_seconds", json_object_new_double(1.25));
		h->run_done(h->userdata, key, run);
	}
	json_object *result = json_object_new_object();
	json_object_object_add(result, "schema", json_object_new_string("schedlab.result/v1"));
	json_object_object_add(result, "verdict", json_object_new_string("pass"));
	/* One comparison, so that the store indexes it and GET /v1/trend shows it. */
	json_object_object_add(result, "job", json_tokener_parse("{\"name\": \"nightly-<b>\"}"));
	json_object_object_add(
	    result, "comparisons",
	    json_tokener_parse("[{\"variant\": \"patched\", \"workload\": \"cyclictest\", "
			       "\"metric\": \"latency_us.p99\", \"baseline\": {\"median\": 80}, "
			       "\"candidate\": {\"median\": 60}, \"change\": -20, "
			       "\"ci95\": [-30, -10], \"p_value\": 0.05, "
			       "\"verdict\": \"improved\"}]"));
	*ret_result = result;
	return 0;
}

/* Rejects a spec with "bad"; otherwise the expanded spec is a copy. */
static int fake_expand(json_object *spec, enum job_origin origin, const char *base_dir,
		       const struct job_limits *limits, json_object **ret, struct sl_error *err)
{
	(void)base_dir;
	assert_int_equal(origin, JOB_ORIGIN_SERVICE);
	assert_non_null(limits);
	if (json_object_object_get_ex(spec, "bad", NULL))
		return error_set_path(err, ERR_INVALID, "$.bad", "Field 'bad' is not allowed.");
	json_object *copy = NULL;
	json_object_deep_copy(spec, &copy, NULL);
	*ret = copy;
	return 0;
}

static int fake_report(json_object *result, char **ret_html, struct sl_error *err)
{
	(void)err;
	*ret_html = strdup(json_object_get_string(json_object_object_get(result, "verdict")));
	return 0;
}

#define KEY64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

struct fixture {
	char dir[64];
	struct service_config *cfg;
	struct store *store;
	struct queue *queue;
	struct http_server *srv;
	struct httpclient *all, *read, *anon;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_http.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	struct sl_error err = {0};
	assert_int_equal(service_config_new(&f->cfg, &err), 0);
	_cleanup_json_ json_object *c = json_tokener_parse(
	    "{\"listen\":\"127.0.0.1:0\",\"tokens\":[{\"token\":\"" TOKEN_ALL "\"},"
	    "{\"token\":\"" TOKEN_READ "\",\"roles\":[\"read\"]}],"
	    "\"limits\":{\"max_body_bytes\":65536,\"max_patches\":3,\"max_patch_bytes\":1000},"
	    "\"max_connections_per_ip\":48}");
	assert_int_equal(service_config_apply(f->cfg, c, &err), 0);
	assert_int_equal(store_open(f->dir, &f->store, &err), 0);
	struct queue_opts qo = {.store = f->store, .runner = fake_runner, .workers = 2};
	assert_int_equal(queue_new(&qo, &f->queue, &err), 0);
	assert_int_equal(queue_start(f->queue, &err), 0);
	struct http_server_opts ho = {.config = f->cfg,
				      .store = f->store,
				      .queue = f->queue,
				      .expand = fake_expand,
				      .report = fake_report};
	if (http_server_new(&ho, &f->srv, &err) < 0)
		fail_msg("http_server_new: %s", err.message);
	assert_true(http_server_port(f->srv) > 0);
	char base[64];
	snprintf(base, sizeof(base), "http://127.0.0.1:%u", http_server_port(f->srv));
	assert_int_equal(httpclient_new(base, TOKEN_ALL, &f->all, &err), 0);
	assert_int_equal(httpclient_new(base, TOKEN_READ, &f->read, &err), 0);
	assert_int_equal(httpclient_new(base, NULL, &f->anon, &err), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	httpclient_free(f->all);
	httpclient_free(f->read);
	httpclient_free(f->anon);
	http_server_free(f->srv);
	queue_free(f->queue);
	store_free(f->store);
	service_config_free(f->cfg);
	fs_rm_rf(f->dir, NULL);
	free(f);
	return 0;
}

/* Request; returns the status, and the parsed JSON body in *ret (if not NULL). */
static long req(struct httpclient *c, const char *method, const char *path, const char *ctype,
		const char *body, json_object **ret)
{
	struct httpclient_response r = {0};
	struct sl_error err = {0};
	if (httpclient_request(c, method, path, ctype, body, body ? strlen(body) : 0, &r, &err) < 0)
		fail_msg("%s %s: %s", method, path, err.message);
	long st = r.status;
	if (ret)
		*ret = json_tokener_parse(r.body);
	httpclient_response_clear(&r);
	return st;
}

static const char *jstr(json_object *o, const char *a, const char *b)
{
	json_object *v = NULL;
	if (!json_object_object_get_ex(o, a, &v))
		return NULL;
	if (b && !json_object_object_get_ex(v, b, &v))
		return NULL;
	return json_object_get_string(v);
}

static void submit(struct fixture *f, const char *spec, char id[33])
{
	_cleanup_json_ json_object *o = NULL;
	long st = req(f->all, "POST", "/v1/jobs", "application/json", spec, &o);
	if (st != 202)
		fail_msg("submit: %ld %s", st, json_object_get_string(o));
	snprintf(id, 33, "%s", jstr(o, "id", NULL));
	assert_true(store_id_valid(id));
	char self[80];
	snprintf(self, sizeof(self), "/v1/jobs/%s", id);
	assert_string_equal(jstr(o, "links", "self"), self);
}

static void wait_status(struct fixture *f, const char *id, const char *status)
{
	char path[80];
	snprintf(path, sizeof(path), "/v1/jobs/%s", id);
	for (int i = 0; i < 500; i++) {
		_cleanup_json_ json_object *o = NULL;
		assert_int_equal(req(f->read, "GET", path, NULL, NULL, &o), 200);
		if (strcmp(jstr(o, "status", NULL), status) == 0)
			return;
		sleep_ms(20);
	}
	fail_msg("job %s never became %s", id, status);
}

/* Every filesystem has 1 MiB free. */
static int tiny_statvfs(const char *path, struct statvfs *st)
{
	(void)path;
	memset(st, 0, sizeof(*st));
	st->f_frsize = 4096;
	st->f_blocks = 1 << 20;
	st->f_bavail = 256;
	return 0;
}

/* Below the free-space floor the service says so without a token, with
 * the reason and without a path, and /metrics carries the gauge. */
static void test_health_low_disk(void **state)
{
	struct fixture *f = *state;
	_cleanup_json_ json_object *h = NULL, *ok = NULL;
	struct httpclient_response m = {0};
	assert_int_equal(req(f->anon, "GET", "/v1/health", NULL, NULL, &ok), 200);
	assert_false(json_object_get_boolean(
	    json_object_object_get(json_object_object_get(ok, "disk"), "below_floor")));
	disk_set_statvfs_hook(tiny_statvfs);
	assert_int_equal(req(f->anon, "GET", "/v1/health", NULL, NULL, &h), 200);
	assert_int_equal(httpclient_request(f->read, "GET", "/metrics", NULL, NULL, 0, &m, NULL),
			 0);
	disk_set_statvfs_hook(NULL);
	assert_int_equal(m.status, 200);
	assert_string_equal(jstr(h, "status", NULL), "degraded");
	json_object *d = json_object_object_get(h, "disk");
	assert_true(json_object_get_boolean(json_object_object_get(d, "below_floor")));
	const char *why = json_object_get_string(json_object_object_get(d, "reason"));
	assert_non_null(strstr(why, "below the floor min_free_bytes"));
	assert_null(strchr(why, '/'));
	assert_int_equal(json_object_get_int64(json_object_object_get(d, "state_free_bytes")),
			 1024 * 1024);
	assert_non_null(strstr(m.body, "schedlab_disk_below_floor 1"));
	assert_non_null(strstr(m.body, "schedlab_disk_free_bytes{fs=\"state\"} 1048576"));
	httpclient_response_clear(&m);
}

static void test_health_auth(void **state)
{
	struct fixture *f = *state;
	_cleanup_json_ json_object *h = NULL, *e = NULL;
	assert_int_equal(req(f->anon, "GET", "/v1/health", NULL, NULL, &h), 200);
	assert_string_equal(jstr(h, "status", NULL), "ok");
	assert_int_equal(req(f->anon, "GET", "/v1/jobs", NULL, NULL, &e), 401);
	assert_string_equal(jstr(e, "error", "code"), "unauthorized");
	assert_int_equal(req(f->read, "GET", "/v1/jobs", NULL, NULL, NULL), 200);
	assert_int_equal(req(f->read, "POST", "/v1/jobs", "application/json", "{}", NULL), 403);
	struct httpclient *bad = NULL;
	char base[64];
	snprintf(base, sizeof(base), "http://127.0.0.1:%u", http_server_port(f->srv));
	assert_int_equal(httpclient_new(base, TOKEN_ALL "x", &bad, NULL), 0);
	assert_int_equal(req(bad, "GET", "/v1/jobs", NULL, NULL, NULL), 401);
	httpclient_free(bad);
	assert_int_equal(req(f->anon, "GET", "/metrics", NULL, NULL, NULL), 401);
	assert_int_equal(req(f->read, "GET", "/nope", NULL, NULL, NULL), 404);
	assert_int_equal(req(f->read, "PUT", "/v1/jobs", "application/json", "{}", NULL), 405);
}

/* GET /v1/calibration lists the calibrations in the service's cache (read
 * role), and /v1/health counts them with the newest one's age. */
static void test_calibration_endpoint(void **state)
{
	struct fixture *f = *state;
	struct sl_error err = {0};
	free(f->cfg->cache_dir);
	f->cfg->cache_dir = strdup(f->dir);
	_cleanup_json_ json_object *h0 = NULL;
	assert_int_equal(req(f->anon, "GET", "/v1/health", NULL, NULL, &h0), 200);
	assert_int_equal(json_object_get_int(json_object_object_get(
			     json_object_object_get(h0, "calibration"), "count")),
			 0);
	_cleanup_json_ json_object *doc = json_tokener_parse(
	    "{\"schema\": \"" CALIBRATION_SCHEMA "\", \"key\": \"" KEY64 "\", "
	    "\"kernel\": \"" KEY64 "\", \"made_at\": \"2026-12-04T19:00:00Z\", \"boots\": 6, "
	    "\"host\": {\"hostname\": \"h\", \"cpu_model\": \"c\", \"accel\": \"tcg\"}, "
	    "\"workload\": {\"name\": \"rtm\", \"tool\": \"rt-migrate-test\"}, "
	    "\"metrics\": {\"inversions\": {\"spread\": 2}}}");
	assert_non_null(doc);
	assert_int_equal(calibration_save(f->dir, doc, &err), 0);
	_cleanup_json_ json_object *l = NULL, *h = NULL;
	assert_int_equal(req(f->anon, "GET", "/v1/calibration", NULL, NULL, NULL), 401);
	assert_int_equal(req(f->read, "GET", "/v1/calibration", NULL, NULL, &l), 200);
	json_object *cals = json_object_object_get(l, "calibrations");
	assert_int_equal(json_object_array_length(cals), 1);
	json_object *c0 = json_object_array_get_idx(cals, 0);
	assert_string_equal(jstr(c0, "key", NULL), KEY64);
	assert_string_equal(jstr(c0, "workload", NULL), "rtm");
	assert_true(json_object_get_int64(json_object_object_get(c0, "age_s")) > 0);
	assert_int_equal(req(f->anon, "GET", "/v1/health", NULL, NULL, &h), 200);
	json_object *hc = json_object_object_get(h, "calibration");
	assert_int_equal(json_object_get_int(json_object_object_get(hc, "count")), 1);
	assert_string_equal(jstr(hc, "newest_made_at", NULL), "2026-12-04T19:00:00Z");
}

static void test_bad_input(void **state)
{
	struct fixture *f = *state;
	_cleanup_json_ json_object *e1 = NULL, *e2 = NULL, *e3 = NULL;
	assert_int_equal(req(f->all, "POST", "/v1/jobs", "text/plain", "{}", NULL), 415);
	assert_int_equal(req(f->all, "POST", "/v1/jobs", "application/json", "{\"name\":", &e1),
			 400);
	assert_string_equal(jstr(e1, "error", "path"), "$");
	assert_int_equal(req(f->all, "POST", "/v1/jobs", "application/json", "{} x", NULL), 400);
	assert_int_equal(req(f->all, "POST", "/v1/jobs", "application/json", "[1]", NULL), 400);
	assert_int_equal(req(f->all, "POST", "/v1/jobs", "application/json", "{\"bad\":1}", &e2),
			 400);
	assert_string_equal(jstr(e2, "error", "path"), "$.bad");
	assert_int_equal(req(f->all, "POST", "/v1/jobs", "application/json",
			     "{\"patches\":[{\"name\":\"../../etc/passwd\",\"content\":\"x\"}]}",
			     &e3),
			 400);
	assert_string_equal(jstr(e3, "error", "path"), "$.patches[0].name");
	assert_int_equal(req(f->all, "POST", "/v1/jobs", "application/json",
			     "{\"base\":{\"patches\":[{\"name\":\"a/b\",\"content\":\"\"}]}}",
			     NULL),
			 400);
	assert_int_equal(
	    req(f->all, "POST", "/v1/jobs", "application/json",
		"{\"kernels\":{\"k\":{\"patches\":[{\"name\":\"..\",\"content\":\"\"}]}}}", NULL),
	    400);
	assert_int_equal(req(f->all, "POST", "/v1/jobs", "application/json", "{\"name\":5}", NULL),
			 400);
	assert_int_equal(
	    req(f->all, "POST", "/v1/jobs?priority=1000", "application/json", "{}", NULL), 400);
	/* Over max_body_bytes (64 KiB here). */
	size_t n = 70000;
	char *big = malloc(n + 1);
	memset(big, ' ', n);
	big[0] = '{';
	big[n - 1] = '}';
	big[n] = '\0';
	assert_int_equal(req(f->all, "POST", "/v1/jobs", "application/json", big, NULL), 413);
	free(big);
	/* Ids are validated before any use: no path traversal. */
	long st = req(f->read, "GET", "/v1/jobs/..%2F..%2Fetc%2Fpasswd", NULL, NULL, NULL);
	assert_true(st == 400 || st == 404);
	assert_int_equal(req(f->read, "GET", "/v1/jobs/..%2F..%2Fetc/log", NULL, NULL, NULL), 404);
	assert_int_equal(req(f->read, "GET", "/v1/jobs/%2E%2E/result", NULL, NULL, NULL), 400);
	assert_int_equal(req(f->read, "GET", "/v1/jobs/ABCDEF/log", NULL, NULL, NULL), 400);
	assert_int_equal(
	    req(f->read, "GET", "/v1/jobs/0123456789abcdef0123456789abcdef", NULL, NULL, NULL),
	    404);
	assert_int_equal(req(f->read, "GET", "/v1/jobs?limit=0", NULL, NULL, NULL), 400);
	assert_int_equal(req(f->read, "GET", "/v1/jobs?status=bogus", NULL, NULL, NULL), 400);
}

struct seen {
	int n;
	int64_t last_id;
	char last_status[16];
	bool saw_run;
};

static int on_event(void *userdata, int64_t id, const char *type, const char *data)
{
	struct seen *s = userdata;
	s->n++;
	s->last_id = id;
	_cleanup_json_ json_object *d = json_tokener_parse(data);
	assert_non_null(d);
	if (strcmp(type, "status") == 0)
		snprintf(s->last_status, sizeof(s->last_status), "%s", jstr(d, "status", NULL));
	if (strcmp(type, "run") == 0)
		s->saw_run = true;
	return 0;
}

static void test_submit_follow_result(void **state)
{
	struct fixture *f = *state;
	char id[33], path[128];
	submit(f, "{\"name\":\"t\",\"runs\":3,\"sleep_ms\":200}", id);
	snprintf(path, sizeof(path), "/v1/jobs/%s/result", id);
	_cleanup_json_ json_object *e = NULL;
	assert_int_equal(req(f->read, "GET", path, NULL, NULL, &e), 409);
	assert_string_equal(jstr(e, "error", "code"), "conflict");
	/* Events until the job is final: the stream ends by itself. */
	struct seen s = {0};
	long st = 0;
	snprintf(path, sizeof(path), "/v1/jobs/%s/events", id);
	assert_int_equal(httpclient_events(f->read, path, 0, on_event, &s, &st, NULL), 0);
	assert_int_equal(st, 200);
	assert_string_equal(s.last_status, "done");
	assert_true(s.saw_run);
	assert_true(s.n >= 6);
	/* Resuming after the last event: nothing new, the stream ends. */
	struct seen s2 = {0};
	assert_int_equal(httpclient_events(f->read, path, s.last_id, on_event, &s2, &st, NULL), 0);
	assert_int_equal(s2.n, 0);
	struct seen s3 = {0};
	assert_int_equal(httpclient_events(f->read, path, s.last_id - 1, on_event, &s3, &st, NULL),
			 0);
	assert_int_equal(s3.n, 1);

	_cleanup_json_ json_object *job = NULL, *res = NULL;
	snprintf(path, sizeof(path), "/v1/jobs/%s", id);
	assert_int_equal(req(f->read, "GET", path, NULL, NULL, &job), 200);
	assert_string_equal(jstr(job, "status", NULL), "done");
	assert_string_equal(jstr(job, "verdict", NULL), "pass");
	assert_non_null(jstr(job, "finished_at", NULL));
	snprintf(path, sizeof(path), "/v1/jobs/%s/result", id);
	assert_int_equal(req(f->read, "GET", path, NULL, NULL, &res), 200);
	assert_string_equal(jstr(res, "schema", NULL), "schedlab.result/v1");

	struct httpclient_response r = {0};
	snprintf(path, sizeof(path), "/v1/jobs/%s/log", id);
	assert_int_equal(httpclient_request(f->read, "GET", path, NULL, NULL, 0, &r, NULL), 0);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.content_type, "text/plain"));
	assert_non_null(strstr(r.body, "==> build.log <=="));
	assert_non_null(strstr(r.body, "make: fake build"));
	/* A patch named evil.log is an input, not a log: no forged section. */
	assert_null(strstr(r.body, "FORGED"));
	httpclient_response_clear(&r);
	snprintf(path, sizeof(path), "/v1/jobs/%s/report", id);
	assert_int_equal(httpclient_request(f->read, "GET", path, NULL, NULL, 0, &r, NULL), 0);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.content_type, "text/html"));
	assert_string_equal(r.body, "pass");
	httpclient_response_clear(&r);

	/* The trend page reads the comparisons that the queue indexed in the store. */
	assert_int_equal(
	    httpclient_request(f->read, "GET", "/v1/trend?since=30d", NULL, NULL, 0, &r, NULL), 0);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.content_type, "text/html"));
	assert_non_null(strstr(r.body, "nightly-&lt;b&gt;"));
	assert_non_null(strstr(r.body, "latency_us.p99"));
	assert_null(strstr(r.body, "nightly-<b>"));
	httpclient_response_clear(&r);
	_cleanup_json_ json_object *terr = NULL;
	assert_int_equal(req(f->read, "GET", "/v1/trend?since=soon", NULL, NULL, &terr), 400);
	assert_string_equal(jstr(terr, "error", "path"), "since");

	/* Counted when answered: the trend's 400 just before is in. */
	assert_int_equal(httpclient_request(f->read, "GET", "/metrics", NULL, NULL, 0, &r, NULL),
			 0);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body, "schedlab_jobs{status=\"done\"} 1\n"));
	assert_non_null(strstr(r.body, "schedlab_queue_depth 0\n"));
	assert_non_null(strstr(r.body, "schedlab_runs_total{status=\"ok\"} 3\n"));
	assert_non_null(strstr(r.body, "schedlab_boot_seconds_bucket{le=\"2\"} 3\n"));
	assert_non_null(strstr(r.body, "schedlab_boot_seconds_bucket{le=\"1\"} 0\n"));
	assert_non_null(strstr(r.body, "# TYPE schedlab_build_seconds histogram"));
	/* Counted as it happened: the finished job, this test's requests by
	 * route template (never the raw URL), the job's wait in the queue. */
	assert_non_null(
	    strstr(r.body, "schedlab_jobs_finished_total{status=\"done\",verdict=\"pass\"} 1\n"));
	assert_non_null(strstr(r.body, "schedlab_http_requests_total{method=\"POST\","
				       "route=\"/v1/jobs\",code=\"202\"} 1\n"));
	assert_non_null(strstr(r.body, "route=\"/v1/jobs/{id}/result\",code=\"200\"}"));
	assert_non_null(strstr(r.body, "route=\"/v1/trend\",code=\"400\"} 1\n"));
	assert_null(strstr(r.body, "route=\"/v1/jobs/0"));
	assert_non_null(strstr(r.body, "schedlab_queue_wait_seconds_count 1\n"));
	assert_non_null(strstr(r.body, "schedlab_build_info{version=\""));
	/* resets of the "service start" counters are visible: when it started */
	const char *pst = strstr(r.body, "\nprocess_start_time_seconds ");
	assert_non_null(pst);
	double started = strtod(pst + 28, NULL);
	assert_true(started > (double)time(NULL) - 600 && started <= (double)time(NULL) + 1);
	assert_non_null(strstr(r.body, "schedlab_http_event_streams 0\n"));
	httpclient_response_clear(&r);
}

static void test_multipart(void **state)
{
	struct fixture *f = *state;
	char p1[128], p2[128], p3[128];
	snprintf(p1, sizeof(p1), "%s/0001-rt-push.patch", f->dir);
	snprintf(p2, sizeof(p2), "%s/..evil.patch", f->dir);
	snprintf(p3, sizeof(p3), "%s/big.patch", f->dir);
	assert_int_equal(fs_write_file_atomic(p1, "--- a/x\n+++ b/x\n", 16, NULL), 0);
	assert_int_equal(fs_write_file_atomic(p2, "x", 1, NULL), 0);
	char big[2000];
	memset(big, 'a', sizeof(big));
	assert_int_equal(fs_write_file_atomic(p3, big, sizeof(big), NULL), 0);
	struct httpclient_response r = {0};
	char *one[] = {p1};
	assert_int_equal(httpclient_post_multipart(f->all, "/v1/jobs",
						   "{\"name\":\"mp\",\"runs\":0,\"patches\":[]}",
						   one, 1, NULL, &r, NULL),
			 0);
	if (r.status != 202)
		fail_msg("multipart: %ld %s", r.status, r.body);
	_cleanup_json_ json_object *o = json_tokener_parse(r.body);
	httpclient_response_clear(&r);
	_cleanup_json_ json_object *spec = NULL;
	assert_int_equal(store_job_expanded(f->store, jstr(o, "id", NULL), &spec, NULL), 0);
	json_object *patches = json_object_object_get(spec, "patches");
	assert_int_equal(json_object_array_length(patches), 1);
	json_object *p = json_object_array_get_idx(patches, 0);
	assert_string_equal(jstr(p, "name", NULL), "0001-rt-push.patch");
	assert_string_equal(jstr(p, "content", NULL), "--- a/x\n+++ b/x\n");

	char *evil[] = {p2};
	assert_int_equal(
	    httpclient_post_multipart(f->all, "/v1/jobs", "{}", evil, 1, NULL, &r, NULL), 0);
	assert_int_equal(r.status, 400);
	httpclient_response_clear(&r);
	char *bigp[] = {p3};
	assert_int_equal(
	    httpclient_post_multipart(f->all, "/v1/jobs", "{}", bigp, 1, NULL, &r, NULL), 0);
	assert_int_equal(r.status, 413);
	httpclient_response_clear(&r);
	char *many[] = {p1, p1, p1, p1};
	assert_int_equal(
	    httpclient_post_multipart(f->all, "/v1/jobs", "{}", many, 4, NULL, &r, NULL), 0);
	assert_int_equal(r.status, 400);
	httpclient_response_clear(&r);
	assert_int_equal(
	    httpclient_post_multipart(f->all, "/v1/jobs", "{\"a\":", NULL, 0, NULL, &r, NULL), 0);
	assert_int_equal(r.status, 400);
	httpclient_response_clear(&r);
}

#define MBOX_MSG(n, subject, file)                                                                 \
	"From 000000000000000000000000000000000000000" n " Mon Sep 17 00:00:00 2001\n"             \
	"From: A <a@example.org>\n"                                                                \
	"Date: Fri, 4 Dec 2026 12:00:00 +0000\n"                                                   \
	"Subject: [PATCH " n "/2] " subject "\n\n"                                                 \
	"Text.\n---\n"                                                                             \
	"diff --git a/" file " b/" file "\n"                                                       \
	"--- a/" file "\n+++ b/" file "\n@@ -1 +1 @@\n-old " n "\n+new " n "\n-- \n2.39.5\n\n"

/* An "mbox" part is split into its patches, after the "patch" parts; the
 * cover letter is dropped; the limits count the split patches. */
static void test_multipart_mbox(void **state)
{
	struct fixture *f = *state;
	char p1[128], mb[128], bad[128];
	snprintf(p1, sizeof(p1), "%s/extra.patch", f->dir);
	snprintf(mb, sizeof(mb), "%s/series.mbox", f->dir);
	snprintf(bad, sizeof(bad), "%s/cover-only.mbox", f->dir);
	assert_int_equal(fs_write_file_atomic(p1, "--- a/x\n+++ b/x\n", 16, NULL), 0);
	static const char mbox[] =
	    "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"
	    "From: A <a@example.org>\n"
	    "Date: Fri, 4 Dec 2026 12:00:00 +0000\n"
	    "Subject: [PATCH 0/2] the cover letter\n\nNo diff.\n\n" MBOX_MSG("1", "sched/rt: first",
									     "kernel/sched/rt.c")
		MBOX_MSG("2", "sched/fair: second", "kernel/sched/fair.c");
	assert_int_equal(fs_write_file_atomic(mb, mbox, strlen(mbox), NULL), 0);
	assert_int_equal(fs_write_file_atomic(bad, "Subject: hello\n\nno diff\n", 25, NULL), 0);
	struct httpclient_response r = {0};
	char *one[] = {p1};
	assert_int_equal(httpclient_post_multipart(f->all, "/v1/jobs",
						   "{\"name\":\"mbox\",\"runs\":0,\"patches\":[]}",
						   one, 1, mb, &r, NULL),
			 0);
	if (r.status != 202)
		fail_msg("mbox: %ld %s", r.status, r.body);
	_cleanup_json_ json_object *o = json_tokener_parse(r.body);
	httpclient_response_clear(&r);
	_cleanup_json_ json_object *spec = NULL;
	assert_int_equal(store_job_expanded(f->store, jstr(o, "id", NULL), &spec, NULL), 0);
	json_object *patches = json_object_object_get(spec, "patches");
	assert_int_equal(json_object_array_length(patches), 3);
	assert_string_equal(jstr(json_object_array_get_idx(patches, 0), "name", NULL),
			    "extra.patch");
	const char *n1 = jstr(json_object_array_get_idx(patches, 1), "name", NULL);
	const char *n2 = jstr(json_object_array_get_idx(patches, 2), "name", NULL);
	assert_true(strncmp(n1, "0001-", 5) == 0 && strstr(n1, "first"));
	assert_true(strncmp(n2, "0002-", 5) == 0 && strstr(n2, "second"));
	assert_non_null(
	    strstr(jstr(json_object_array_get_idx(patches, 2), "content", NULL), "+new 2\n"));

	/* No diff at all: 400 naming the part. */
	_cleanup_json_ json_object *e = NULL;
	assert_int_equal(httpclient_post_multipart(f->all, "/v1/jobs", "{\"patches\":[]}", NULL, 0,
						   bad, &r, NULL),
			 0);
	assert_int_equal(r.status, 400);
	e = json_tokener_parse(r.body);
	httpclient_response_clear(&r);
	assert_string_equal(jstr(e, "error", "path"), "mbox");
	/* Two --patch files and the mbox's two patches: over max_patches (3). */
	char *two[] = {p1, p1};
	assert_int_equal(
	    httpclient_post_multipart(f->all, "/v1/jobs", "{\"patches\":[]}", two, 2, mb, &r, NULL),
	    0);
	assert_int_equal(r.status, 400);
	httpclient_response_clear(&r);
}

static void test_cancel_and_list(void **state)
{
	struct fixture *f = *state;
	char a[33], b[33], c[33], path[80];
	submit(f, "{\"runs\":1,\"sleep_ms\":10000}", a);
	submit(f, "{\"runs\":1,\"sleep_ms\":10000}", b);
	submit(f, "{\"runs\":1,\"sleep_ms\":10000}", c);
	wait_status(f, a, "running");
	wait_status(f, b, "running");
	/* Two workers busy: c waits. */
	_cleanup_json_ json_object *list = NULL, *qlist = NULL;
	assert_int_equal(req(f->read, "GET", "/v1/jobs?limit=2&offset=0", NULL, NULL, &list), 200);
	assert_int_equal(json_object_get_int(json_object_object_get(list, "total")), 3);
	assert_int_equal(json_object_array_length(json_object_object_get(list, "jobs")), 2);
	assert_int_equal(req(f->read, "GET", "/v1/jobs?status=queued", NULL, NULL, &qlist), 200);
	assert_int_equal(json_object_get_int(json_object_object_get(qlist, "total")), 1);
	snprintf(path, sizeof(path), "/v1/jobs/%s", c);
	_cleanup_json_ json_object *cq = NULL, *ca = NULL;
	assert_int_equal(req(f->read, "DELETE", path, NULL, NULL, NULL), 403);
	assert_int_equal(req(f->all, "DELETE", path, NULL, NULL, &cq), 200);
	assert_string_equal(jstr(cq, "status", NULL), "cancelled");
	assert_int_equal(req(f->all, "DELETE", path, NULL, NULL, NULL), 409);
	snprintf(path, sizeof(path), "/v1/jobs/%s", a);
	assert_int_equal(req(f->all, "DELETE", path, NULL, NULL, &ca), 202);
	snprintf(path, sizeof(path), "/v1/jobs/%s", b);
	assert_int_equal(req(f->all, "DELETE", path, NULL, NULL, NULL), 202);
	wait_status(f, a, "cancelled");
	wait_status(f, b, "cancelled");
}

/* ---- raw connections: event streams and the request deadline ---- */

static int threads_now(void)
{
	DIR *d = opendir("/proc/self/task");
	assert_non_null(d);
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

static int raw_connect(struct fixture *f)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons(http_server_port(f->srv)),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* Reads what fd has within ms into buf (NUL-terminated, appended at *len);
 * returns 0 on end of stream or reset, 1 when the time ran out. */
static int raw_read(int fd, char *buf, size_t cap, size_t *len, int ms, const char *until)
{
	double end = ms / 1000.0;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		double left =
		    end - ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9);
		if (left <= 0 || (until && strstr(buf, until)))
			return 1;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, (int)(left * 1000) + 1) <= 0)
			continue;
		ssize_t k = read(fd, buf + *len, cap - 1 - *len);
		if (k <= 0)
			return 0;
		*len += (size_t)k;
		buf[*len] = '\0';
	}
}

static int open_stream(struct fixture *f, const char *id, const char *token, char *buf, size_t cap)
{
	int fd = raw_connect(f);
	char rq[256];
	int n = snprintf(rq, sizeof(rq),
			 "GET /v1/jobs/%s/events HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer "
			 "%s\r\n\r\n",
			 id, token);
	assert_int_equal(write(fd, rq, (size_t)n), n);
	size_t len = 0;
	buf[0] = '\0';
	raw_read(fd, buf, cap, &len, 5000, "\r\n\r\n");
	return fd;
}

/* A body of more JSON values than a job can hold is refused before json-c
 * builds an object per value (413 naming the count). */
static void test_body_values_bounded(void **state)
{
	struct fixture *f = *state;
	size_t n = HTTP_JSON_MAX_VALUES + 10;
	char *body = malloc(2 * n + 16);
	size_t k = (size_t)sprintf(body, "{\"x\":[");
	for (size_t i = 0; i < n; i++)
		k += (size_t)sprintf(body + k, i ? ",0" : "0");
	strcpy(body + k, "]}");
	_cleanup_json_ json_object *e = NULL;
	assert_int_equal(req(f->all, "POST", "/v1/jobs", "application/json", body, &e), 413);
	assert_non_null(strstr(jstr(e, "error", "message"), "JSON values"));
	free(body);
}

/* GET /log is streamed (chunked, no Content-Length: nothing is built in
 * memory first), each file's tail only, in name order, through
 * subdirectories; a stalled reader gets what fits the socket and the rest
 * once it reads again. */
static void test_log_streamed(void **state)
{
	struct fixture *f = *state;
	char id[33];
	submit(f, "{\"runs\":1,\"sleep_ms\":10}", id);
	wait_status(f, id, "done");
	_cleanup_free_ char *dir = store_job_dir(f->store, id);
	_cleanup_free_ char *runs = fs_path_join(dir, "runs/r1");
	_cleanup_free_ char *big = fs_path_join(runs, "console.log");
	assert_int_equal(fs_mkdir_p(runs, NULL), 0);
	size_t n = 6u * 1024 * 1024;
	char *text = malloc(n);
	memset(text, 'a', n);
	memcpy(text + n - 4, "END\n", 4);
	assert_int_equal(fs_write_file_atomic(big, text, n, NULL), 0);
	free(text);
	int fd = raw_connect(f);
	char rq[256];
	int k = snprintf(rq, sizeof(rq),
			 "GET /v1/jobs/%s/log HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer "
			 "%s\r\n\r\n",
			 id, TOKEN_READ);
	assert_int_equal(write(fd, rq, (size_t)k), k);
	char head[4096] = "";
	size_t len = 0;
	raw_read(fd, head, sizeof(head), &len, 5000, "\r\n\r\n");
	assert_non_null(strstr(head, "HTTP/1.1 200"));
	assert_non_null(strcasestr(head, "Transfer-Encoding: chunked"));
	assert_null(strcasestr(head, "Content-Length"));
	close(fd);
	struct httpclient_response r = {0};
	char path[80];
	snprintf(path, sizeof(path), "/v1/jobs/%s/log", id);
	assert_int_equal(httpclient_request(f->read, "GET", path, NULL, NULL, 0, &r, NULL), 0);
	assert_int_equal(r.status, 200);
	const char *b = strstr(r.body, "==> build.log <==\nmake: fake build\n");
	const char *c =
	    strstr(r.body, "==> runs/r1/console.log <== (tail: earlier bytes omitted)\n");
	assert_non_null(b);
	assert_non_null(c);
	assert_true(b < c);
	assert_non_null(strstr(c, "aaaEND\n\n"));
	assert_true(r.len < 4u * 1024 * 1024 + 4096);
	assert_true(r.len > 4u * 1024 * 1024);
	httpclient_response_clear(&r);
}

/* N open event streams cost no thread each; beyond max_streams_per_token a
 * token gets 429 with Retry-After; a status change reaches every suspended
 * stream, which then ends. */
static void test_streams_hold_no_thread(void **state)
{
	struct fixture *f = *state;
	enum { N = 40 };
	f->cfg->max_streams_per_token = N;
	char id[33], buf[4096];
	submit(f, "{\"runs\":1,\"sleep_ms\":60000}", id);
	wait_status(f, id, "running");
	sleep_ms(200);
	int before = threads_now();
	int fds[N];
	for (int i = 0; i < N; i++) {
		fds[i] = open_stream(f, id, TOKEN_READ, buf, sizeof(buf));
		if (!strstr(buf, "200 OK") || !strstr(buf, "text/event-stream"))
			fail_msg("stream %d: %s", i, buf);
	}
	sleep_ms(300);
	int after = threads_now();
	print_message("threads: %d before, %d with %d open event streams\n", before, after, N);
	assert_true(after - before <= 2);
	/* One more with the same token: refused; another token still has room. */
	int over = open_stream(f, id, TOKEN_READ, buf, sizeof(buf));
	if (!strstr(buf, "HTTP/1.1 429") || !strstr(buf, "Retry-After:"))
		fail_msg("stream over the cap: %s", buf);
	size_t len = strlen(buf);
	raw_read(over, buf, sizeof(buf), &len, 2000, "}}");
	assert_non_null(strstr(buf, "\"path\":\"max_streams_per_token\""));
	close(over);
	int other = open_stream(f, id, TOKEN_ALL, buf, sizeof(buf));
	assert_non_null(strstr(buf, "200 OK"));
	close(other);
	/* Cancel: every suspended stream is woken, sends the final status and
	 * ends (the last chunk of the chunked body). */
	char path[80];
	snprintf(path, sizeof(path), "/v1/jobs/%s", id);
	assert_int_equal(req(f->all, "DELETE", path, NULL, NULL, NULL), 202);
	for (int i = 0; i < N; i++) {
		len = 0;
		buf[0] = '\0';
		raw_read(fds[i], buf, sizeof(buf), &len, 10000, "\r\n0\r\n\r\n");
		if (!strstr(buf, "\r\n0\r\n\r\n"))
			fail_msg("stream %d did not end after the cancel: %s", i, buf);
		assert_non_null(strstr(buf, "\"status\":\"cancelled\""));
		close(fds[i]);
	}
	/* The slots are free again. */
	sleep_ms(200);
	int again = open_stream(f, id, TOKEN_READ, buf, sizeof(buf));
	assert_non_null(strstr(buf, "200 OK"));
	close(again);
}

/* A header trickled one byte at a time is cut at request_deadline_s, though
 * each byte comes well within the idle timeout; a request that arrives in
 * time on the same kind of connection is answered. */
static void test_request_deadline(void **state)
{
	struct fixture *f = *state;
	f->cfg->request_deadline_s = 2;
	int fd = raw_connect(f);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	const char *hdr = "GET /v1/health HTTP/1.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	bool closed = false;
	for (size_t i = 0; hdr[i] && !closed; i++) {
		if (send(fd, hdr + i, 1, MSG_NOSIGNAL) != 1)
			closed = true;
		char b[64];
		size_t len = 0;
		b[0] = '\0';
		if (raw_read(fd, b, sizeof(b), &len, 250, NULL) == 0)
			closed = true;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double took = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	print_message("trickled header closed after %.2f s (deadline 2 s)\n", took);
	assert_true(closed);
	assert_true(took >= 1.9 && took < 6.0); /* the ticker runs twice a second */
	close(fd);
	/* A prompt request still works. */
	assert_int_equal(req(f->anon, "GET", "/v1/health", NULL, NULL, NULL), 200);
}

/* One address holds at most max_connections_per_ip connections: the ones
 * beyond are closed at once; closing them frees the slots. */
static void test_per_ip_limit(void **state)
{
	struct fixture *f = *state;
	enum { N = 60 };
	int fds[N], open_n = 0;
	for (int i = 0; i < N; i++)
		fds[i] = raw_connect(f);
	sleep_ms(300);
	for (int i = 0; i < N; i++) {
		char b[64];
		size_t len = 0;
		b[0] = '\0';
		open_n += raw_read(fds[i], b, sizeof(b), &len, 20, NULL);
	}
	print_message("%d of %d idle connections from one address kept (limit 48)\n", open_n, N);
	assert_true(open_n <= 48 && open_n >= 40);
	for (int i = 0; i < N; i++)
		close(fds[i]);
	sleep_ms(200);
	assert_int_equal(req(f->anon, "GET", "/v1/health", NULL, NULL, NULL), 200);
}

/* Every route is in openapi.yaml and every path+method there is served. */
static void test_openapi_agrees(void **state)
{
	(void)state;
	_cleanup_free_ char *text = NULL;
	if (fs_read_file("../results-schema/openapi.yaml", 1 << 20, &text, NULL, NULL) < 0)
		assert_int_equal(
		    fs_read_file("results-schema/openapi.yaml", 1 << 20, &text, NULL, NULL), 0);
	/* Line scan: "  /path:" under "paths:", then "    get:" etc. */
	char doc[64][2][64];
	size_t n = 0;
	bool in_paths = false;
	char cur[64] = "";
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		if (strncmp(line, "paths:", 6) == 0) {
			in_paths = true;
			continue;
		}
		if (in_paths && line[0] != ' ' && line[0] != '#')
			in_paths = false;
		if (!in_paths)
			continue;
		if (strncmp(line, "  /", 3) == 0 && line[3 + strcspn(line + 3, ":")] == ':') {
			snprintf(cur, sizeof(cur), "%.*s", (int)strcspn(line + 2, ":"), line + 2);
			continue;
		}
		static const char *const methods[] = {"get", "post", "delete", "put", "patch"};
		for (size_t m = 0; m < ELEMENTSOF(methods); m++) {
			char want[16];
			snprintf(want, sizeof(want), "    %s:", methods[m]);
			if (strcmp(line, want) == 0 && n < 64) {
				for (size_t k = 0; methods[m][k]; k++)
					doc[n][0][k] = (char)(methods[m][k] - 32);
				doc[n][0][strlen(methods[m])] = '\0';
				snprintf(doc[n][1], sizeof(doc[n][1]), "%s", cur);
				n++;
			}
		}
	}
	assert_int_equal(n, http_route_count());
	for (size_t i = 0; i < http_route_count(); i++) {
		const char *method, *path;
		http_route_get(i, &method, &path);
		bool found = false;
		for (size_t k = 0; k < n; k++)
			found |= strcmp(doc[k][0], method) == 0 && strcmp(doc[k][1], path) == 0;
		if (!found)
			fail_msg("route %s %s is not in openapi.yaml", method, path);
	}
}

static void test_listen_policy(void **state)
{
	(void)state;
	struct service_config *cfg = NULL;
	assert_int_equal(service_config_new(&cfg, NULL), 0);
	free(cfg->listen);
	cfg->listen = strdup("0.0.0.0:0");
	struct http_server_opts ho = {.config = cfg};
	struct http_server *srv = NULL;
	struct sl_error err = {0};
	assert_true(http_server_new(&ho, &srv, &err) < 0);
	assert_non_null(strstr(err.message, "only loopback"));
	struct sockaddr_storage a;
	socklen_t l;
	bool lo;
	assert_int_equal(service_config_parse_listen("[::1]:8080", &a, &l, &lo, NULL), 0);
	assert_true(lo);
	assert_int_equal(service_config_parse_listen("10.0.0.1:80", &a, &l, &lo, NULL), 0);
	assert_false(lo);
	assert_true(service_config_parse_listen("localhost", &a, &l, &lo, NULL) < 0);
	assert_true(service_config_parse_listen("1.2.3.4:70000", &a, &l, &lo, NULL) < 0);
	service_config_free(cfg);
	assert_true(http_patch_name_valid("0001-sched-rt_push+x.patch"));
	assert_false(http_patch_name_valid("../../etc/passwd"));
	assert_false(http_patch_name_valid(".hidden"));
	assert_false(http_patch_name_valid("a/b"));
	assert_false(http_patch_name_valid(""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_health_auth, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_health_low_disk, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_log_streamed, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_body_values_bounded, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_calibration_endpoint, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bad_input, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_submit_follow_result, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_multipart, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_multipart_mbox, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_cancel_and_list, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_streams_hold_no_thread, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_request_deadline, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_per_ip_limit, setup, teardown),
	    cmocka_unit_test(test_openapi_agrees),
	    cmocka_unit_test(test_listen_policy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
