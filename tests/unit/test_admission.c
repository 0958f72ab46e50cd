/* Admission: priority above 0 needs admin (403 naming the
 * field); the global queue cap, per-token queued jobs, guest-seconds per
 * day and stored bytes answer ERR_QUOTA (429) naming the limit with a
 * Retry-After; admin tokens skip the per-token quotas; only a job's owner
 * or an admin may cancel it. Also the submit-time checks (unknown Debian
 * source, series, config: 400 with the field, no host path) and the
 * redaction of host paths from failed jobs' errors. Real store. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "server/admission.h"
#include "server/submit_checks.h"
#include "util/fs.h"
#include "util/redact.h"

struct fixture {
	char dir[64];
	struct store *s;
	struct service_config *c;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_admission.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	assert_int_equal(store_open(f->dir, &f->s, NULL), 0);
	assert_int_equal(service_config_new(&f->c, NULL), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	store_free(f->s);
	service_config_free(f->c);
	fs_rm_rf(f->dir, NULL);
	free(f);
	return 0;
}

/* admission_check then, when admitted, the job stored as the server does. */
static int submit(struct fixture *f, const char *owner, bool admin, int priority, long long budget,
		  long long bytes, char id[STORE_ID_LEN + 1], int *retry, struct sl_error *err)
{
	const struct admission_request a = {.owner = owner,
					    .admin = admin,
					    .priority = priority,
					    .budget_s = budget,
					    .bytes = bytes};
	_cleanup_json_ json_object *spec = json_tokener_parse("{\"name\":\"x\"}");
	const struct store_new_job nj = {.name = "x",
					 .owner = owner,
					 .priority = priority,
					 .spec = spec,
					 .expanded = spec,
					 .budget_s = budget,
					 .bytes = bytes};
	int r = admission_check(f->c, f->s, &a, retry, err);
	if (r >= 0 && (r = store_id_new(id, err)) >= 0)
		r = store_job_submit(f->s, id, &nj, err);
	admission_done();
	return r;
}

static void expect_quota(struct fixture *f, const char *owner, long long budget, long long bytes,
			 const char *limit)
{
	char id[STORE_ID_LEN + 1];
	int retry = -1;
	struct sl_error err = {0};
	assert_true(submit(f, owner, false, 0, budget, bytes, id, &retry, &err) < 0);
	assert_int_equal(err.kind, ERR_QUOTA);
	assert_int_equal(error_http_status(err.kind), 429);
	assert_string_equal(err.path, limit);
	assert_true(retry >= 1);
}

static void test_priority_needs_admin(void **state)
{
	struct fixture *f = *state;
	char id[STORE_ID_LEN + 1];
	int retry = 0;
	struct sl_error err = {0};
	assert_true(submit(f, "alice", false, 5, 10, 10, id, &retry, &err) < 0);
	assert_int_equal(err.kind, ERR_FORBIDDEN);
	assert_string_equal(err.path, "priority");
	assert_int_equal(submit(f, "alice", false, -5, 10, 10, id, &retry, &err), 0);
	assert_int_equal(submit(f, "root", true, 5, 10, 10, id, &retry, &err), 0);
}

static void test_queue_limits(void **state)
{
	struct fixture *f = *state;
	f->c->quotas.max_queued_per_token = 2;
	f->c->quotas.max_queued_total = 3;
	f->c->quotas.retry_after_s = 7;
	char id[STORE_ID_LEN + 1], first[STORE_ID_LEN + 1];
	int retry = 0;
	struct sl_error err = {0};
	assert_int_equal(submit(f, "alice", false, 0, 10, 10, first, &retry, &err), 0);
	assert_int_equal(submit(f, "alice", false, 0, 10, 10, id, &retry, &err), 0);
	expect_quota(f, "alice", 10, 10, "quotas.max_queued_per_token");
	assert_int_equal(submit(f, "bob", false, 0, 10, 10, id, &retry, &err), 0);
	expect_quota(f, "carol", 10, 10, "quotas.max_queued_total");
	/* The cap holds for admins too; the per-token limit does not. */
	assert_true(submit(f, "root", true, 0, 10, 10, id, &retry, &err) < 0);
	assert_string_equal(err.path, "quotas.max_queued_total");
	assert_int_equal(retry, 7);
	/* A cancelled job frees its slot. */
	assert_int_equal(store_job_finish(f->s, first, "cancelled", NULL, NULL, &err), 0);
	assert_int_equal(submit(f, "alice", false, 0, 10, 10, id, &retry, &err), 0);
}

static void test_guest_seconds_and_bytes(void **state)
{
	struct fixture *f = *state;
	f->c->quotas.guest_seconds_per_day = 1000;
	f->c->quotas.max_bytes_per_token = 5000;
	char id[STORE_ID_LEN + 1], a[STORE_ID_LEN + 1];
	int retry = 0;
	struct sl_error err = {0};
	assert_int_equal(submit(f, "alice", false, 0, 600, 100, a, &retry, &err), 0);
	expect_quota(f, "alice", 600, 100, "quotas.guest_seconds_per_day");
	assert_true(submit(f, "alice", false, 0, 600, 100, id, &retry, &err) < 0);
	/* The job that must leave the 24 h window was submitted just now. */
	assert_in_range(retry, 86000, 86401);
	/* Another token has its own budget; a job over the quota on its own
	 * can never pass: 400. */
	assert_int_equal(submit(f, "bob", false, 0, 600, 100, id, &retry, &err), 0);
	assert_true(submit(f, "carol", false, 0, 1001, 100, id, &retry, &err) < 0);
	assert_int_equal(err.kind, ERR_INVALID);
	/* Cancelled before it started: the budget is given back. */
	assert_int_equal(store_job_finish(f->s, a, "cancelled", NULL, NULL, &err), 0);
	assert_int_equal(submit(f, "alice", false, 0, 600, 100, id, &retry, &err), 0);
	/* Bytes. */
	expect_quota(f, "bob", 1, 4950, "quotas.max_bytes_per_token");
	assert_int_equal(submit(f, "root", true, 0, 1, 1 << 20, id, &retry, &err), 0);
}

static void test_cancel_ownership(void **state)
{
	struct fixture *f = *state;
	char id[STORE_ID_LEN + 1];
	int retry = 0;
	struct sl_error err = {0};
	assert_int_equal(submit(f, "alice", false, 0, 1, 1, id, &retry, &err), 0);
	assert_int_equal(admission_may_cancel(f->s, id, "alice", false, &err), 0);
	assert_true(admission_may_cancel(f->s, id, "bob", false, &err) < 0);
	assert_int_equal(err.kind, ERR_FORBIDDEN);
	assert_int_equal(admission_may_cancel(f->s, id, "root", true, &err), 0);
	assert_true(
	    admission_may_cancel(f->s, "0123456789abcdef0123456789abcdef", "root", true, &err) < 0);
	assert_int_equal(err.kind, ERR_NOT_FOUND);
}

static void expect_submit_check(const char *kernel, const char *path, const char *data_dir)
{
	char text[512];
	snprintf(text, sizeof(text), "{\"kernels\":{\"k\":%s}}", kernel);
	_cleanup_json_ json_object *e = json_tokener_parse(text);
	assert_non_null(e);
	struct sl_error err = {0};
	int r = submit_checks(e, data_dir, &err);
	if (!path) {
		if (r < 0)
			fail_msg("%s: %s", err.path, err.message);
		return;
	}
	assert_true(r < 0);
	assert_int_equal(err.kind, ERR_INVALID);
	assert_string_equal(err.path, path);
	assert_null(strchr(err.message, '/'));
}

static void test_submit_checks(void **state)
{
	struct fixture *f = *state;
	/* A data directory with one series and one config. */
	_cleanup_free_ char *gk = fs_path_join(f->dir, "guest-kernel");
	_cleanup_free_ char *one = fs_path_join(gk, "one");
	assert_int_equal(fs_mkdir_p(one, NULL), 0);
	_cleanup_free_ char *series = fs_path_join(one, "series");
	_cleanup_free_ char *cfg = fs_path_join(one, "schedlab.config");
	assert_int_equal(fs_write_file_atomic(series, "", 0, NULL), 0);
	assert_int_equal(fs_write_file_atomic(cfg, "", 0, NULL), 0);
	expect_submit_check("{\"patches\":[{\"series\":\"one\"}],\"config\":{\"builtin\":\"one\"}}",
			    NULL, f->dir);
	expect_submit_check("{\"patches\":[{\"series\":\"one\"},{\"series\":\"two\"}]}",
			    "$.kernels.k.patches[1].series", f->dir);
	expect_submit_check("{\"config\":{\"builtin\":\"nope\"}}", "$.kernels.k.config.builtin",
			    f->dir);
	expect_submit_check("{\"patches\":[{\"series\":\"..\"}]}", "$.kernels.k.patches[0].series",
			    f->dir);
	expect_submit_check("{\"source\":\"debian:linux-source-0.0\"}", "$.kernels.k.source",
			    f->dir);
	expect_submit_check("{\"source\":\"debian:bash\"}", "$.kernels.k.source", f->dir);
}

static void test_redact_host_paths(void **state)
{
	(void)state;
	char out[512];
	redact_host_paths("Kernel source 'debian:linux-source-9.9' needs '/usr/src/"
			  "linux-source-9.9.tar.xz': install it.",
			  out, sizeof(out));
	assert_string_equal(out, "Kernel source 'debian:linux-source-9.9' needs "
				 "'<host>/linux-source-9.9.tar.xz': install it.");
	redact_host_paths("Cannot resolve /srv/state/jobs/ab/kernels/k: No such file.", out,
			  sizeof(out));
	assert_string_equal(out, "Cannot resolve <host>/k: No such file.");
	redact_host_paths("patch 0001-a.patch at $.kernels.k does not apply (1/2 hunks)", out,
			  sizeof(out));
	assert_string_equal(out, "patch 0001-a.patch at $.kernels.k does not apply (1/2 hunks)");
	redact_host_paths("/a/b", out, 4);
	assert_int_equal(strlen(out), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_priority_needs_admin, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_queue_limits, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_guest_seconds_and_bytes, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_cancel_ownership, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_submit_checks, setup, teardown),
	    cmocka_unit_test(test_redact_host_paths),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
