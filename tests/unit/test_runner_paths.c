/* runner_run_job() end to end with the scripted guest of
 * helpers/fake_guest.h in place of libvirt and a placeholder kernel in place
 * of a build: the result JSON and the order of the runs the guest saw, for
 * adaptive looks, noisy reruns, error and crash retries, fail fast and
 * interleaving. The libvirt test driver stands in for the host. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "helpers/fake_guest.h"
#include "job/job.h"
#include "run/runner.h"
#include "util/fs.h"
#include "util/json_get.h"

static struct fake_guest fg;
static char workdir[64];

/* One work directory for the group: its cache keeps the base initramfs,
 * which every test's job shares (building it is most of a job's time). */
static int group_setup(void **state)
{
	(void)state;
	snprintf(workdir, sizeof(workdir), "/tmp/runner-paths-XXXXXX");
	return mkdtemp(workdir) ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	fs_rm_rf(workdir, NULL);
	return 0;
}

static int setup(void **state)
{
	(void)state;
	fake_guest_begin(&fg);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fake_guest_end(&fg);
	return 0;
}

/* The result of the job of variants a (baseline) and b running hackbench,
 * with extra members (JSON text after a comma, or "") such as repeat. */
static json_object *run_job(const char *extra)
{
	char text[2048];
	snprintf(text, sizeof(text),
		 "{\"name\":\"t\",\"baseline\":\"a\",\"accelerator\":\"tcg\","
		 "\"kernels\":{\"k\":{\"source\":\"debian:linux-source-6.1\"},"
		 "\"k2\":{\"source\":\"debian:linux-source-6.1\"}},"
		 "\"variants\":{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k2\"}},"
		 "\"guest\":{\"pinning\":\"off\"},"
		 "\"workloads\":[{\"name\":\"hb\",\"tool\":\"hackbench\","
		 "\"args\":[\"--pipe\",\"-g\",\"2\"]}]%s%s}",
		 extra[0] ? "," : "", extra);
	json_object *spec = json_tokener_parse(text);
	assert_non_null(spec);
	json_object *expanded = NULL;
	struct sl_error err = {0};
	if (job_expand_json(spec, JOB_ORIGIN_SERVICE, NULL, NULL, &expanded, &err) < 0)
		fail_msg("job_expand_json: %s: %s", err.path, err.message);
	json_object_put(spec);
	_cleanup_free_ char *cache = fs_path_join(workdir, "cache");
	static int jobs;
	char name[32];
	snprintf(name, sizeof(name), "job-%d", jobs++);
	_cleanup_free_ char *job_dir = fs_path_join(workdir, name);
	struct runner_config cfg = {
	    .cache_dir = cache,
	    .data_dir = "..", /* the tests run in tests/: build/agent is the repo's */
	    .libvirt_uri = "test:///default",
	    .accel = "tcg",
	    .guest_slots = 1,
	};
	json_object *result = NULL;
	if (runner_run_job(&cfg, expanded, job_dir, NULL, &result, &err) < 0)
		fail_msg("runner_run_job: %s: %s", err.path, err.message);
	json_object_put(expanded);
	return result;
}

static json_object *variant_run(json_object *result, const char *variant, int repeat)
{
	json_object *runs =
	    json_member(json_member(json_member(result, "variants"), variant), "runs");
	json_object *found = NULL;
	for (size_t i = 0; runs && i < json_object_array_length(runs); i++) {
		json_object *r = json_object_array_get_idx(runs, i);
		if (json_object_get_int(json_member(r, "repeat")) == repeat)
			found = r; /* the last: a rerun replaces nothing, it adds */
	}
	return found;
}

static const char *str(json_object *o, const char *k)
{
	const char *s = json_object_get_string(json_member(o, k));
	return s ? s : "(none)";
}

static int count_runs(json_object *result, const char *variant)
{
	json_object *runs =
	    json_member(json_member(json_member(result, "variants"), variant), "runs");
	return runs ? (int)json_object_array_length(runs) : 0;
}

/* result.order as "a#0 b#0 ...": the runs in the order they were booted */
static const char *order(json_object *result)
{
	static char buf[4096];
	size_t len = 0;
	json_object *o = json_member(result, "order");
	buf[0] = '\0';
	for (size_t i = 0; o && i < json_object_array_length(o); i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? " " : "",
					json_object_get_string(json_object_array_get_idx(o, i)));
	return buf;
}

static int repeats_int(json_object *result, const char *k)
{
	return json_object_get_int(json_member(json_member(result, "repeats"), k));
}

static size_t n_looks(json_object *result)
{
	return json_object_array_length(json_member(json_member(result, "repeats"), "looks"));
}

/* Baseline and candidate alternate in balanced pairs (ABBA), and the result
 * lists the runs as the guest saw them, each with the metric it sent. */
static void test_interleaved(void **state)
{
	(void)state;
	fake_guest_variant(&fg, "a", 1.0, 2);
	fake_guest_variant(&fg, "b", 2.0, 2);
	json_object *r = run_job("\"repeat\":3");
	assert_string_equal(fake_guest_seen(&fg), "a#0 b#0 b#1 a#1 a#2 b#2");
	assert_string_equal(order(r), fake_guest_seen(&fg));
	json_object *b0 = variant_run(r, "b", 0);
	assert_string_equal(str(b0, "status"), "ok");
	json_object *wl = json_object_array_get_idx(json_member(b0, "workloads"), 0);
	assert_float_equal(
	    json_object_get_double(json_member(json_member(wl, "metrics"), "time_s")), 1.96,
	    1e-9); /* b's first run: the low end of its spread */
	/* b takes twice as long, but 3 v 3 runs cannot reach p <= 0.05 */
	assert_string_equal(str(r, "verdict"), "inconclusive");
	json_object_put(r);
}

/* Adaptive repeats: clearly separated metrics decide the gate at the
 * first look (5 rounds), and the runs stop there. */
static void test_adaptive_decided_stops_at_first_look(void **state)
{
	(void)state;
	fake_guest_variant(&fg, "a", 1.0, 2);
	fake_guest_variant(&fg, "b", 2.0, 2);
	json_object *r = run_job("\"repeat\":{\"min\":5,\"max\":20}");
	assert_int_equal(n_looks(r), 1);
	assert_int_equal(repeats_int(r, "rounds_run"), 5);
	assert_string_equal(str(json_member(r, "repeats"), "stopped"),
			    "every gated metric was decided");
	assert_int_equal(fg.n_seen, 10);
	assert_string_equal(str(r, "verdict"), "fail");
	json_object_put(r);
}

/* Adaptive repeats: the same median but a spread too wide to decide runs
 * on from look to look up to the largest repeat count. */
static void test_adaptive_undecided_runs_on(void **state)
{
	(void)state;
	fake_guest_variant(&fg, "a", 1.0, 80);
	fake_guest_variant(&fg, "b", 1.0, 80);
	json_object *r = run_job("\"repeat\":{\"min\":5,\"max\":10}");
	assert_true(n_looks(r) > 1);
	assert_int_equal(repeats_int(r, "rounds_run"), 10);
	assert_int_equal(fg.n_seen, 20);
	assert_string_equal(str(json_member(r, "repeats"), "stopped"),
			    "the largest repeat count was reached with a gated metric undecided");
	assert_string_equal(order(r), fake_guest_seen(&fg));
	json_object_put(r);
}

/* A noisy run is marked, left out, and its round run once more. */
static void test_noisy_round_rerun(void **state)
{
	(void)state;
	fake_guest_script(&fg, "b#1", FAKE_GUEST_NOISY);
	json_object *r = run_job("\"repeat\":3");
	assert_string_equal(fake_guest_seen(&fg), "a#0 b#0 b#1 a#1 a#2 b#2 b#3 a#3");
	assert_true(json_object_get_boolean(json_member(variant_run(r, "b", 1), "noisy")));
	assert_false(json_object_get_boolean(json_member(variant_run(r, "b", 3), "noisy")));
	assert_int_equal(repeats_int(r, "rounds_run"), 4);
	assert_int_equal(repeats_int(r, "noisy_reruns"), 1);
	json_object_put(r);
}

/* A host noisy throughout: reruns stop at the bound (the repeat count). */
static void test_noisy_reruns_bounded(void **state)
{
	(void)state;
	for (int i = 0; i < 40; i++)
		fake_guest_script(&fg, NULL, FAKE_GUEST_NOISY);
	json_object *r = run_job("\"repeat\":3");
	assert_int_equal(repeats_int(r, "noisy_reruns"), 3);
	assert_int_equal(repeats_int(r, "rounds_run"), 6);
	assert_int_equal(fg.n_seen, 12);
	assert_string_equal(str(r, "verdict"), "inconclusive");
	json_object_put(r);
}

/* A transport error is schedlab's, not the kernel's: the run boots once
 * more, and the second outcome stands with the first in retry_of. */
static void test_error_retried_once(void **state)
{
	(void)state;
	fake_guest_script(&fg, "b#0", FAKE_GUEST_ERROR);
	json_object *r = run_job("\"repeat\":3");
	assert_string_equal(fake_guest_seen(&fg), "a#0 b#0 b#0 b#1 a#1 a#2 b#2");
	json_object *b0 = variant_run(r, "b", 0);
	assert_string_equal(str(b0, "status"), "ok");
	assert_string_equal(str(json_member(b0, "retry_of"), "status"), "error");
	assert_int_equal(count_runs(r, "b"), 3);
	json_object_put(r);
}

/* A crash whose retry fails too is kept: one retry only. */
static void test_crash_retry_fails_stays(void **state)
{
	(void)state;
	fake_guest_script(&fg, "b#0", FAKE_GUEST_CRASHED);
	fake_guest_script(&fg, "b#0", FAKE_GUEST_ERROR);
	json_object *r = run_job("\"repeat\":3");
	assert_string_equal(fake_guest_seen(&fg), "a#0 b#0 b#0 b#1 a#1 a#2 b#2");
	json_object *b0 = variant_run(r, "b", 0);
	assert_string_equal(str(b0, "status"), "error");
	assert_string_equal(str(json_member(b0, "retry_of"), "status"), "crashed");
	json_object_put(r);
}

/* A hung candidate is the kernel's: never retried, it skips the rest of its
 * variant, and with no other candidate left the job stops and fails. */
static void test_hung_fails_fast(void **state)
{
	(void)state;
	fake_guest_script(&fg, "b#1", FAKE_GUEST_HUNG);
	json_object *r = run_job("\"repeat\":3");
	assert_string_equal(fake_guest_seen(&fg), "a#0 b#0 b#1");
	assert_string_equal(str(variant_run(r, "b", 1), "status"), "hung");
	assert_null(json_member(variant_run(r, "b", 1), "retry_of"));
	assert_null(variant_run(r, "b", 2));
	assert_string_equal(str(r, "verdict"), "fail");
	json_object_put(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_interleaved, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_adaptive_decided_stops_at_first_look, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_adaptive_undecided_runs_on, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_noisy_round_rerun, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_noisy_reruns_bounded, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_error_retried_once, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_crash_retry_fails_stays, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_hung_fails_fast, setup, teardown),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
