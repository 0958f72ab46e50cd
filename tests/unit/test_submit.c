/* `schedlab submit` in-process against a real libmicrohttpd server on a free
 * loopback port, with the real store and queue and a fake runner whose
 * verdict the job names: the exit codes of --gate, wait and result --gate
 * (0 pass, 1 fail, 3 inconclusive, 2 a failed job), the outputs (-o, --junit,
 * --report), status, cancel of a running and of a finished job, the
 * SCHEDLAB_SERVER/SCHEDLAB_TOKEN defaults and the flags over them, a stalled
 * server (a socket that never answers) against --stall-timeout, and SIGINT
 * during --wait cancelling the job. */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "cli/cli.h"
#include "cli/httpclient.h"
#include "server/http.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/time.h"

#define TOKEN "test-token-submit-0123456789abcdef"

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

/* Sleeps sleep_ms (cancellable), fails when the spec says "error", and
 * answers the verdict the spec names. */
static int fake_runner(const struct runner_config *cfg, json_object *spec, const char *job_dir,
		       const struct runner_hooks *h, json_object **ret_result, struct sl_error *err)
{
	(void)cfg;
	(void)job_dir;
	int ms = spec_int(spec, "sleep_ms", 10);
	struct runner_progress p = {.phase = "running", .percent = 50, .message = "fake"};
	h->progress(h->userdata, &p);
	for (int t = 0; t < ms; t += 5) {
		if (h->cancelled(h->userdata))
			return error_set(err, ERR_CANCELLED, ECANCELED, "Cancelled.");
		sleep_ms(5);
	}
	json_object *v = NULL;
	json_object_object_get_ex(spec, "verdict", &v);
	const char *verdict = v ? json_object_get_string(v) : "pass";
	if (strcmp(verdict, "error") == 0)
		return error_set(err, ERR_INFRA, EIO, "The fake host is down.");
	json_object *result = json_object_new_object();
	json_object_object_add(result, "schema", json_object_new_string("schedlab.result/v1"));
	json_object_object_add(result, "job", json_tokener_parse("{\"name\": \"t\"}"));
	json_object_object_add(result, "variants", json_object_new_object());
	json_object_object_add(result, "comparisons", json_object_new_array());
	json_object_object_add(result, "verdict", json_object_new_string(verdict));
	/* the rest of what result.schema.json requires: the client parses the
	 * result (compare/result_model.h) before it prints or gates on it */
	json_object_object_add(result, "environment", json_object_new_object());
	json_object_object_add(result, "verdict_reasons", json_object_new_array());
	*ret_result = result;
	return 0;
}

static int fake_expand(json_object *spec, enum job_origin origin, const char *base_dir,
		       const struct job_limits *limits, json_object **ret, struct sl_error *err)
{
	(void)origin;
	(void)base_dir;
	(void)limits;
	(void)err;
	json_object *copy = NULL;
	json_object_deep_copy(spec, &copy, NULL);
	*ret = copy;
	return 0;
}

struct fixture {
	char dir[64];
	char url[64];
	struct service_config *cfg;
	struct store *store;
	struct queue *queue;
	struct http_server *srv;
	struct httpclient *client;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_submit.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	struct sl_error err = {0};
	assert_int_equal(service_config_new(&f->cfg, &err), 0);
	_cleanup_json_ json_object *c = json_tokener_parse(
	    "{\"listen\":\"127.0.0.1:0\",\"tokens\":[{\"token\":\"" TOKEN "\"}]}");
	assert_int_equal(service_config_apply(f->cfg, c, &err), 0);
	assert_int_equal(store_open(f->dir, &f->store, &err), 0);
	struct queue_opts qo = {.store = f->store, .runner = fake_runner, .workers = 1};
	assert_int_equal(queue_new(&qo, &f->queue, &err), 0);
	assert_int_equal(queue_start(f->queue, &err), 0);
	struct http_server_opts ho = {
	    .config = f->cfg, .store = f->store, .queue = f->queue, .expand = fake_expand};
	if (http_server_new(&ho, &f->srv, &err) < 0)
		fail_msg("http_server_new: %s", err.message);
	snprintf(f->url, sizeof(f->url), "http://127.0.0.1:%u", http_server_port(f->srv));
	assert_int_equal(httpclient_new(f->url, TOKEN, &f->client, &err), 0);
	setenv("SCHEDLAB_SERVER", f->url, 1);
	setenv("SCHEDLAB_TOKEN", TOKEN, 1);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	unsetenv("SCHEDLAB_SERVER");
	unsetenv("SCHEDLAB_TOKEN");
	httpclient_free(f->client);
	http_server_free(f->srv);
	queue_free(f->queue);
	store_free(f->store);
	service_config_free(f->cfg);
	fs_rm_rf(f->dir, NULL);
	free(f);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	return 0;
}

/* cli_submit with the arguments given, NULL-terminated. */
static int submit_cmd(const char *first, ...)
{
	char *argv[32] = {"submit"};
	int argc = 1;
	va_list ap;
	va_start(ap, first);
	for (const char *a = first; a && argc < 31; a = va_arg(ap, const char *))
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	return cli_submit(argc, argv);
}

static void post(struct fixture *f, const char *spec, char id[33])
{
	struct httpclient_response r = {0};
	assert_int_equal(httpclient_request(f->client, "POST", "/v1/jobs", "application/json", spec,
					    strlen(spec), &r, NULL),
			 0);
	if (r.status != 202)
		fail_msg("submit: %ld %s", r.status, r.body);
	_cleanup_json_ json_object *o = json_tokener_parse(r.body);
	httpclient_response_clear(&r);
	snprintf(id, 33, "%s", json_object_get_string(json_object_object_get(o, "id")));
}

static const char *job_status(struct fixture *f, const char *id, char buf[32])
{
	_cleanup_json_ json_object *job = NULL;
	assert_int_equal(store_job_get(f->store, id, &job, NULL), 0);
	snprintf(buf, 32, "%s", json_object_get_string(json_object_object_get(job, "status")));
	return buf;
}

static void wait_status(struct fixture *f, const char *id, const char *status)
{
	char buf[32];
	for (int i = 0; i < 1000; i++) {
		if (strcmp(job_status(f, id, buf), status) == 0)
			return;
		sleep_ms(10);
	}
	fail_msg("job %s is %s, never %s", id, buf, status);
}

static char *path_in(struct fixture *f, const char *name)
{
	return fs_path_join(f->dir, name);
}

static void test_gate_exit_codes(void **state)
{
	struct fixture *f = *state;
	static const struct {
		const char *verdict;
		int code;
	} cases[] = {{"pass", 0}, {"fail", 1}, {"inconclusive", 3}, {"error", 2}};
	_cleanup_free_ char *job = path_in(f, "job.json"), *out = path_in(f, "result.json"),
			    *junit = path_in(f, "junit.xml"), *report = path_in(f, "report.html");
	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		char spec[128];
		snprintf(spec, sizeof(spec), "{\"name\": \"g\", \"verdict\": \"%s\"}",
			 cases[i].verdict);
		assert_int_equal(fs_write_file_atomic(job, spec, strlen(spec), NULL), 0);
		unlink(out);
		int rc = submit_cmd(job, "--gate", "-o", out, "--junit", junit, "--report", report,
				    NULL);
		if (rc != cases[i].code)
			fail_msg("verdict %s: exit %d, expected %d", cases[i].verdict, rc,
				 cases[i].code);
		assert_int_equal(fs_exists(out), strcmp(cases[i].verdict, "error") != 0);
	}
	/* --wait without --gate: 0 whatever the verdict, 2 for a failed job. */
	assert_int_equal(fs_write_file_atomic(job, "{\"verdict\": \"fail\"}", 19, NULL), 0);
	assert_int_equal(submit_cmd(job, "--wait", NULL), 0);
	_cleanup_free_ char *text = NULL;
	assert_int_equal(fs_read_file(junit, 1 << 20, &text, NULL, NULL), 0);
	assert_non_null(strstr(text, "<testsuites"));
}

static void test_forms(void **state)
{
	struct fixture *f = *state;
	char a[33], b[33], buf[32];
	_cleanup_free_ char *out = path_in(f, "r.json");
	post(f, "{\"verdict\": \"inconclusive\"}", a);
	assert_int_equal(submit_cmd("status", a, NULL), 0);
	assert_int_equal(submit_cmd("wait", a, "-o", out, NULL), 3);
	_cleanup_json_ json_object *r = NULL;
	assert_int_equal(json_read_file_strict(out, 1 << 20, "r", &r, NULL), 0);
	assert_string_equal(json_object_get_string(json_object_object_get(r, "verdict")),
			    "inconclusive");
	unlink(out);
	assert_int_equal(submit_cmd("result", a, "-o", out, NULL), 0);
	assert_true(fs_exists(out));
	assert_int_equal(submit_cmd("result", a, "--gate", "-o", out, NULL), 3);
	assert_int_equal(submit_cmd("status", a, "--json", NULL), 0);
	/* A finished job cannot be cancelled. */
	assert_int_equal(submit_cmd("cancel", a, NULL), 2);

	/* A running job: no result yet, then cancelled. */
	post(f, "{\"sleep_ms\": 60000}", b);
	wait_status(f, b, "running");
	assert_int_equal(submit_cmd("result", b, NULL), 2);
	assert_int_equal(submit_cmd("cancel", b, "--wait", NULL), 0);
	assert_string_equal(job_status(f, b, buf), "cancelled");
	assert_int_equal(submit_cmd("wait", b, NULL), 2);

	/* Bad ids, unknown jobs, options that do not apply. */
	assert_int_equal(submit_cmd("status", "../etc", NULL), 2);
	assert_int_equal(submit_cmd("status", "0123456789abcdef0123456789abcdef", NULL), 2);
	assert_int_equal(submit_cmd("status", a, "--patch", "x.patch", NULL), 2);
	assert_int_equal(submit_cmd("status", NULL), 2);
	assert_int_equal(submit_cmd("wait", "--help", NULL), 0);
	assert_int_equal(submit_cmd("--stall-timeout", "0", "status", a, NULL), 2);
}

static void test_env_defaults(void **state)
{
	struct fixture *f = *state;
	char a[33];
	post(f, "{}", a);
	wait_status(f, a, "done");
	/* The flags win over the environment. */
	setenv("SCHEDLAB_SERVER", "http://127.0.0.1:1", 1);
	assert_int_equal(submit_cmd("status", a, NULL), 2);
	assert_int_equal(submit_cmd("status", a, "--server", f->url, NULL), 0);
	setenv("SCHEDLAB_SERVER", f->url, 1);
	setenv("SCHEDLAB_TOKEN", "wrong-token-wrong-token-wrong", 1);
	assert_int_equal(submit_cmd("status", a, NULL), 2);
	assert_int_equal(submit_cmd("status", a, "--token", TOKEN, NULL), 0);
	unsetenv("SCHEDLAB_SERVER");
	assert_int_equal(submit_cmd("status", a, "--token", TOKEN, NULL), 2);
}

/* A listener that accepts (the kernel does, from its backlog) and never
 * answers: the request must fail after --stall-timeout, not hang. */
static void test_stalled_server(void **state)
{
	(void)state;
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(s >= 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(s, 8), 0);
	socklen_t l = sizeof(a);
	assert_int_equal(getsockname(s, (struct sockaddr *)&a, &l), 0);
	char url[64];
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", ntohs(a.sin_port));
	double t0 = time_monotonic_s();
	assert_int_equal(submit_cmd("status", "0123456789abcdef0123456789abcdef", "--server", url,
				    "--stall-timeout", "1", NULL),
			 2);
	double took = time_monotonic_s() - t0;
	assert_true(took >= 0.9 && took < 5);
	t0 = time_monotonic_s();
	assert_int_equal(submit_cmd("cancel", "0123456789abcdef0123456789abcdef", "--server", url,
				    "--stall-timeout", "2", NULL),
			 2);
	took = time_monotonic_s() - t0;
	assert_true(took >= 1.9 && took < 6);
	close(s);
}

static void *interrupt_later(void *arg)
{
	struct fixture *f = arg;
	/* Once the job runs, Ctrl-C. */
	for (int i = 0; i < 1000; i++) {
		_cleanup_json_ json_object *list = NULL;
		int64_t total = 0;
		if (store_job_list(f->store, "running", 10, 0, &list, &total, NULL) == 0 &&
		    total > 0)
			break;
		sleep_ms(10);
	}
	sleep_ms(300);
	kill(getpid(), SIGINT);
	return NULL;
}

static void test_interrupt_cancels(void **state)
{
	struct fixture *f = *state;
	_cleanup_free_ char *job = path_in(f, "long.json");
	assert_int_equal(fs_write_file_atomic(job, "{\"sleep_ms\": 60000}", 19, NULL), 0);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, interrupt_later, f), 0);
	double t0 = time_monotonic_s();
	int rc = submit_cmd(job, "--gate", NULL);
	pthread_join(t, NULL);
	assert_int_equal(rc, 2);
	assert_true(time_monotonic_s() - t0 < 30);
	_cleanup_json_ json_object *list = NULL;
	int64_t total = 0;
	assert_int_equal(store_job_list(f->store, NULL, 10, 0, &list, &total, NULL), 0);
	assert_int_equal(total, 1);
	const char *id = json_object_get_string(
	    json_object_object_get(json_object_array_get_idx(list, 0), "id"));
	wait_status(f, id, "cancelled");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_gate_exit_codes, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_forms, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_env_defaults, setup, teardown),
	    cmocka_unit_test(test_stalled_server),
	    cmocka_unit_test_setup_teardown(test_interrupt_cancels, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
