/* schedstat.* metrics (service/metrics/schedstat.c) from two /proc/schedstat
 * snapshots: the differences per CPU and per domain level, the two versions'
 * idle-type orders (15: idle, busy, newly idle; 16: busy, idle, newly idle),
 * the dispatcher adding them to a workload's own metrics with better
 * direction none, and snapshots that must be refused. Real snapshots from a
 * schedstat guest are in tests/data/workloads/ (see the README there). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "metrics/metrics.h"
#include "metrics/metrics-internal.h"
#include "util/fs.h"

static double num(json_object *m, const char *name)
{
	json_object *v = NULL;
	if (!json_object_object_get_ex(m, name, &v))
		fail_msg("metric '%s' missing in %s", name, json_object_to_json_string(m));
	return json_object_get_double(v);
}

/* A snapshot of 2 CPUs with one domain each; k scales the counters, and the
 * load-balance counts of idle-type slot s are 10 * (s + 1) * k. */
static void snap(char *buf, size_t len, int version, unsigned k)
{
	size_t at = (size_t)snprintf(buf, len, "version %d\ntimestamp 100\n", version);
	for (int c = 0; c < 2; c++) {
		at += (size_t)snprintf(buf + at, len - at, "cpu%d 0 0 %u 0 %u %u 0 %u 0\n", c,
				       100 * k, 50 * k, 20 * k, 3000000u * k);
		at += (size_t)snprintf(buf + at, len - at, "domain0 3");
		for (int s = 0; s < 3; s++)
			/* lb_count, balanced, failed, imbalance, gained, hot, nobusyq, nobusyg */
			at += (size_t)snprintf(buf + at, len - at, " %u 0 %u 0 %u 0 0 0",
					       10 * (s + 1) * k, k, (s + 1) * k);
		at += (size_t)snprintf(buf + at, len - at, " 0 0 %u 0 0 0 0 0 0 %u %u 0\n", k,
				       7 * k, 2 * k);
	}
}

static void test_differences_v15(void **state)
{
	(void)state;
	char a[4096], b[4096];
	snap(a, sizeof(a), 15, 1);
	snap(b, sizeof(b), 15, 3);
	_cleanup_json_ json_object *m = json_object_new_object();
	struct sl_error err = {0};
	if (metrics_schedstat(a, strlen(a), b, strlen(b), m, &err) < 0)
		fail_msg("%s", err.message);
	assert_true(num(m, "schedstat.cpu1.switches") == 200);
	assert_true(num(m, "schedstat.cpu0.ttwu") == 100);
	assert_true(num(m, "schedstat.cpu0.ttwu_local") == 40);
	assert_true(num(m, "schedstat.cpu0.ttwu_remote") == 60);
	assert_true(num(m, "schedstat.cpu0.run_delay_ms") == 6);
	assert_true(num(m, "schedstat.run_delay_ms") == 12);
	assert_true(num(m, "schedstat.ttwu_remote") == 120);
	/* version 15: slot 0 is idle, slot 1 busy; summed over 2 CPUs */
	assert_true(num(m, "schedstat.domain0.lb_count.idle") == 40);
	assert_true(num(m, "schedstat.domain0.lb_count.busy") == 80);
	assert_true(num(m, "schedstat.domain0.lb_count.newidle") == 120);
	assert_true(num(m, "schedstat.domain0.lb_gained.busy") == 8);
	assert_true(num(m, "schedstat.domain0.ttwu_wake_remote") == 28);
	assert_true(num(m, "schedstat.domain0.ttwu_move_affine") == 8);
	/* gained 2 * (2 + 4 + 6) plus alb_pushed 2 * 2 */
	assert_true(num(m, "schedstat.lb_migrations") == 28);
	assert_int_equal(json_object_object_length(m), 2 * 5 + 11 + 3);
}

static void test_v16_swaps_idle_and_busy(void **state)
{
	(void)state;
	char a[4096], b[4096];
	snap(a, sizeof(a), 16, 1);
	snap(b, sizeof(b), 16, 3);
	_cleanup_json_ json_object *m = json_object_new_object();
	struct sl_error err = {0};
	if (metrics_schedstat(a, strlen(a), b, strlen(b), m, &err) < 0)
		fail_msg("%s", err.message);
	assert_true(num(m, "schedstat.domain0.lb_count.busy") == 40);
	assert_true(num(m, "schedstat.domain0.lb_count.idle") == 80);
}

static void expect_refused(const char *a, const char *b, const char *why)
{
	_cleanup_json_ json_object *m = json_object_new_object();
	json_object_object_add(m, "own", json_object_new_int(1));
	struct sl_error err = {0};
	if (metrics_schedstat(a, strlen(a), b, strlen(b), m, &err) == 0)
		fail_msg("accepted %s -> %s", a, b);
	assert_int_equal(err.kind, ERR_INVALID);
	if (!strstr(err.message, why))
		fail_msg("'%s' does not say '%s'", err.message, why);
	assert_int_equal(json_object_object_length(m), 1); /* unchanged */
}

static void test_refused(void **state)
{
	(void)state;
	char a[4096], b[4096], c[4096];
	snap(a, sizeof(a), 15, 2);
	snap(b, sizeof(b), 15, 1);
	expect_refused(a, b, "went down");
	snap(c, sizeof(c), 16, 3);
	expect_refused(a, c, "differ");
	expect_refused("version 17\ncpu0 1 0 1 1 1 1 1 1 1\n", a, "version 15");
	expect_refused("version 15\n", a, "no version or no CPU");
	expect_refused("version 15\ncpu0 1 0 1 1 1 1 1 1\n", a, "9 whole numbers");
	expect_refused("version 15\ncpu0 1 0 1 1 1 1 1 1 1 1\n", a, "9 whole numbers");
	expect_refused("version 15\ncpu0 1 0 1 1 1 1 1 1 -1\n", a, "9 whole numbers");
	expect_refused("version 15\ncpu0 1 0 1 1 1 1 1 1 99999999999999999999999\n", a,
		       "9 whole numbers");
	expect_refused("version 15\ncpu1 1 0 1 1 1 1 1 1 1\n", a, "out of order");
	expect_refused("version 15\ndomain0 3 1\n", a, "before any CPU");
	expect_refused("version 15\ncpu0 1 0 1 1 1 1 1 1 1\ndomain1 3 1\n", a, "out of order");
	expect_refused("version 15\ncpu0 1 0 1 1 1 1 1 1 1\ndomain0 3 1 2\n", a,
		       "36 whole numbers");
	expect_refused("version 15\nrunqueue 1\n", a, "neither");
	/* ttwu_local above ttwu */
	expect_refused("version 15\ncpu0 0 0 0 0 1 1 0 0 0\n",
		       "version 15\ncpu0 0 0 0 0 2 3 0 0 0\n", "local wake-ups");
	/* 65 CPUs */
	static char big[65 * 64 + 32];
	size_t at = (size_t)snprintf(big, sizeof(big), "version 15\n");
	for (int i = 0; i < 65; i++)
		at += (size_t)snprintf(big + at, sizeof(big) - at, "cpu%d 0 0 0 0 0 0 0 0 0\n", i);
	expect_refused(big, big, "beyond 64 CPUs");
	/* a NUL inside */
	const char nul[] = "version 15\n\0cpu0 0 0 0 0 0 0 0 0 0\n";
	_cleanup_json_ json_object *m = json_object_new_object();
	struct sl_error err = {0};
	assert_true(metrics_schedstat(nul, sizeof(nul) - 1, a, strlen(a), m, &err) < 0);
}

static char *golden(const char *name)
{
	_cleanup_free_ char *root = fs_data_dir();
	_cleanup_free_ char *dir = fs_path_join(root, "tests/data/workloads");
	_cleanup_free_ char *path = fs_path_join(dir, name);
	char *data = NULL;
	struct sl_error err = {0};
	if (fs_read_file(path, 1 << 20, &data, NULL, &err) < 0)
		fail_msg("cannot read %s: %s", path, err.message);
	return data;
}

/* Real snapshots around hackbench in a 2 x 2 x 1 guest of the 6.1
 * schedstat kernel (version 15; domain0 MC, domain1 DIE). */
static void test_golden_6_1_2x2(void **state)
{
	(void)state;
	_cleanup_free_ char *a = golden("schedstat-6.1-2x2-hackbench.before");
	_cleanup_free_ char *b = golden("schedstat-6.1-2x2-hackbench.after");
	_cleanup_json_ json_object *m = json_object_new_object();
	struct sl_error err = {0};
	if (metrics_schedstat(a, strlen(a), b, strlen(b), m, &err) < 0)
		fail_msg("%s", err.message);
	double delay = 0, remote = 0;
	for (int c = 0; c < 4; c++) {
		char n[64];
		snprintf(n, sizeof(n), "schedstat.cpu%d.run_delay_ms", c);
		delay += num(m, n);
		snprintf(n, sizeof(n), "schedstat.cpu%d.ttwu_remote", c);
		remote += num(m, n);
		snprintf(n, sizeof(n), "schedstat.cpu%d.switches", c);
		assert_true(num(m, n) > 0);
	}
	assert_false(json_object_object_get_ex(m, "schedstat.cpu4.switches", NULL));
	assert_true(json_object_object_get_ex(m, "schedstat.domain1.lb_count.idle", NULL));
	assert_false(json_object_object_get_ex(m, "schedstat.domain2.lb_count.idle", NULL));
	assert_true(fabs(num(m, "schedstat.run_delay_ms") - delay) < 1e-6 * (1 + delay));
	assert_true(num(m, "schedstat.ttwu_remote") == remote);
	/* as the run's result recorded them */
	assert_true(num(m, "schedstat.domain0.lb_count.idle") == 70);
	assert_true(num(m, "schedstat.domain0.lb_gained.busy") == 10);
	assert_true(num(m, "schedstat.domain1.ttwu_move_affine") == 14);
	assert_true(num(m, "schedstat.ttwu_remote") == 68);
	assert_true(num(m, "schedstat.lb_migrations") == 41);
	assert_true(fabs(num(m, "schedstat.run_delay_ms") - 3210.434126) < 1e-6);
}

/* The dispatcher adds schedstat.* to the tool's own metrics when the
 * workload frame carries both snapshots. */
static void test_dispatch(void **state)
{
	(void)state;
	char a[4096], b[4096];
	snap(a, sizeof(a), 15, 1);
	snap(b, sizeof(b), 15, 2);
	_cleanup_json_ json_object *payload = json_object_new_object();
	json_object_object_add(payload, "stdout", json_object_new_string("Time: 0.5\n"));
	json_object_object_add(payload, "schedstat_before", json_object_new_string(a));
	json_object_object_add(payload, "schedstat_after", json_object_new_string(b));
	_cleanup_json_ json_object *m = NULL, *d = NULL;
	struct sl_error err = {0};
	if (metrics_from_workload("hackbench", payload, NULL, &m, &d, &err) < 0)
		fail_msg("%s", err.message);
	assert_true(num(m, "time_s") == 0.5);
	assert_true(num(m, "schedstat.cpu0.switches") == 100);
	assert_string_equal(metrics_better("hackbench", "schedstat.cpu0.run_delay_ms"), "none");
	assert_string_equal(metrics_better("hackbench", "schedstat.domain0.lb_failed.idle"),
			    "none");
	/* the workload's tasks' rusage, sent with the snapshots */
	json_object_object_add(
	    payload, "tasks_rusage",
	    json_tokener_parse("{\"utime_us\":1500,\"stime_us\":2500,\"nvcsw\":40,\"nivcsw\":7}"));
	json_object *m3 = NULL, *d3 = NULL;
	if (metrics_from_workload("hackbench", payload, NULL, &m3, &d3, &err) < 0)
		fail_msg("%s", err.message);
	assert_true(num(m3, "schedstat.tasks.cpu_ms") == 4);
	assert_true(num(m3, "schedstat.tasks.switches_voluntary") == 40);
	assert_true(num(m3, "schedstat.tasks.switches_involuntary") == 7);
	json_object_put(m3);
	json_object_put(d3);
	static const char *const bad[] = {
	    "{\"utime_us\":-1,\"stime_us\":0,\"nvcsw\":0,\"nivcsw\":0}",
	    "{\"utime_us\":0,\"stime_us\":0,\"nvcsw\":\"x\",\"nivcsw\":0}",
	    "{\"utime_us\":0,\"stime_us\":0,\"nvcsw\":0}", "[]"};
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		json_object_object_add(payload, "tasks_rusage", json_tokener_parse(bad[i]));
		json_object *m4 = NULL, *d4 = NULL;
		assert_true(metrics_from_workload("hackbench", payload, NULL, &m4, &d4, &err) < 0);
		assert_null(m4);
		assert_non_null(strstr(err.message, "tasks_rusage"));
	}
	json_object_object_del(payload, "tasks_rusage");
	/* the tasks' run delays as they exited (taskstats) */
#define TD(tasks, delay, max, dropped, lost)                                                       \
	"{\"tasks\":" tasks ",\"run_delay_ns\":" delay ",\"run_delay_max_ns\":" max                \
	",\"timeslices\":40,\"run_ns\":9000000,\"records\":12,\"dropped\":" dropped                \
	",\"lost\":" lost ",\"version\":13,\"max_comm\":\"hackbench\"}"
	json_object_object_add(payload, "tasks_delay",
			       json_tokener_parse(TD("8", "6000000", "2500000", "0", "false")));
	json_object *m5 = NULL, *d5 = NULL;
	if (metrics_from_workload("hackbench", payload, NULL, &m5, &d5, &err) < 0)
		fail_msg("%s", err.message);
	assert_true(num(m5, "schedstat.tasks.count") == 8);
	assert_true(num(m5, "schedstat.tasks.run_delay_ms") == 6);
	assert_true(num(m5, "schedstat.tasks.run_delay_max_ms") == 2.5);
	assert_true(num(m5, "schedstat.tasks.timeslices") == 40);
	assert_true(num(m5, "schedstat.tasks.wait_per_slice_us") == 150);
	assert_string_equal(metrics_better("hackbench", "schedstat.tasks.run_delay_ms"), "none");
	json_object_put(m5);
	json_object_put(d5);
	/* exits lost or dropped: no sums over part of the tasks */
	static const char *const partial[] = {TD("8", "6000000", "2500000", "0", "true"),
					      TD("8", "6000000", "2500000", "3", "false")};
	for (size_t i = 0; i < ELEMENTSOF(partial); i++) {
		json_object_object_add(payload, "tasks_delay", json_tokener_parse(partial[i]));
		json_object *m6 = NULL, *d6 = NULL;
		if (metrics_from_workload("hackbench", payload, NULL, &m6, &d6, &err) < 0)
			fail_msg("%s", err.message);
		assert_null(json_object_object_get(m6, "schedstat.tasks.run_delay_ms"));
		assert_non_null(json_object_object_get(m6, "schedstat.cpu0.switches"));
		json_object_put(m6);
		json_object_put(d6);
	}
	static const char *const bad_td[] = {TD("-1", "0", "0", "0", "false"),
					     TD("8", "10", "20", "0", "false"),
					     TD("0", "10", "0", "0", "false"),
					     TD("8", "10", "0", "0", "\"no\""),
					     TD("8", "4611686018427387905", "0", "0", "false"),
					     "{}"};
	for (size_t i = 0; i < ELEMENTSOF(bad_td); i++) {
		json_object_object_add(payload, "tasks_delay", json_tokener_parse(bad_td[i]));
		json_object *m7 = NULL, *d7 = NULL;
		assert_true(metrics_from_workload("hackbench", payload, NULL, &m7, &d7, &err) < 0);
		assert_null(m7);
		assert_non_null(strstr(err.message, "tasks_delay"));
	}
	json_object_object_del(payload, "tasks_delay");
	/* a bad snapshot fails the workload's parse, naming schedstat */
	json_object_object_add(payload, "schedstat_after", json_object_new_string("garbage"));
	json_object *m2 = NULL, *d2 = NULL;
	assert_true(metrics_from_workload("hackbench", payload, NULL, &m2, &d2, &err) < 0);
	assert_null(m2);
	assert_non_null(strstr(err.message, "schedstat"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_differences_v15), cmocka_unit_test(test_v16_swaps_idle_and_busy),
	    cmocka_unit_test(test_refused),	    cmocka_unit_test(test_golden_6_1_2x2),
	    cmocka_unit_test(test_dispatch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
