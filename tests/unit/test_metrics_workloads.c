/* The parsers of hackbench, pi_stress, pip_stress, cyclicdeadline,
 * stress-ng, perf bench sched and the wakeup probe, on golden output captured from real runs
 * in a schedlab guest (tests/data/rt-tests/ and tests/data/workloads/, see
 * the READMEs there), plus garbage that must give a clean error, the better
 * directions and pi_stress's deadlock reason. */
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

static char *golden(const char *dir_name, const char *name)
{
	_cleanup_free_ char *root = fs_data_dir();
	_cleanup_free_ char *sub = fs_path_join("tests/data", dir_name);
	_cleanup_free_ char *dir = fs_path_join(root, sub);
	_cleanup_free_ char *path = fs_path_join(dir, name);
	char *data = NULL;
	struct sl_error err = {0};
	if (fs_read_file(path, 8 << 20, &data, NULL, &err) < 0)
		fail_msg("cannot read %s: %s", path, err.message);
	return data;
}

static double num(json_object *m, const char *name)
{
	json_object *v = NULL;
	if (!json_object_object_get_ex(m, name, &v))
		fail_msg("metric '%s' missing in %s", name, json_object_to_json_string(m));
	return json_object_get_double(v);
}

static void test_hackbench_golden(void **state)
{
	(void)state;
	_cleanup_free_ char *t = golden("rt-tests", "hackbench-thread-pipe-g2-f5-l100.stdout");
	_cleanup_json_ json_object *m = NULL, *d = NULL;
	struct sl_error err = {0};
	if (metrics_hackbench(t, strlen(t), &m, &d, &err) < 0)
		fail_msg("%s", err.message);
	assert_true(num(m, "time_s") == 0.166);
	/* 2 groups x 5 senders x 5 receivers x 100 loops */
	assert_true(num(d, "messages") == 5000);
	assert_true(fabs(num(m, "messages_per_s") - 5000 / 0.166) < 0.01);
	assert_string_equal(json_object_get_string(json_object_object_get(d, "mode")), "threaded");
	assert_true(num(d, "tasks") == 20);

	_cleanup_free_ char *p = golden("rt-tests", "hackbench-process-pipe-g4-f10-l50.stdout");
	_cleanup_json_ json_object *m2 = NULL, *d2 = NULL;
	if (metrics_hackbench(p, strlen(p), &m2, &d2, &err) < 0)
		fail_msg("%s", err.message);
	assert_true(num(m2, "time_s") == 3.828);
	assert_true(num(d2, "messages") == 4 * 10 * 10 * 50);
	assert_true(num(d2, "fds") == 10);
}

static void test_hackbench_bad(void **state)
{
	(void)state;
	/* The guest has no sockets: hackbench without -p prints no time. */
	_cleanup_free_ char *t = golden("rt-tests", "hackbench-process-socket-nonet.stdout");
	json_object *m = NULL, *d = NULL;
	struct sl_error err = {0};
	assert_true(metrics_hackbench(t, strlen(t), &m, &d, &err) < 0);
	assert_non_null(strstr(err.message, "0 'Time:' lines"));
	assert_null(m);
	const char *bad[] = {"Time: x\n",	   "Time: -1\n",	  "Time: 1e400\n",
			     "Time: 1\nTime: 2\n", "Time: 99999999999\n", "",
			     "Time: \n",	   "Time: 1.0.0\n"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err = (struct sl_error){0};
		if (metrics_hackbench(bad[i], strlen(bad[i]), &m, &d, &err) == 0)
			fail_msg("accepted '%s'", bad[i]);
		assert_true(err.message[0] != '\0');
	}
	/* a NUL inside is rejected */
	assert_true(metrics_hackbench("Time: 1\0\n", 9, &m, &d, &err) < 0);
}

static void test_pi_stress_golden(void **state)
{
	(void)state;
	_cleanup_free_ char *o = golden("rt-tests", "pistress-g2-d3.stdout");
	_cleanup_free_ char *j = golden("rt-tests", "pistress-g2-d3.json");
	_cleanup_json_ json_object *m = NULL, *d = NULL;
	struct sl_error err = {0};
	if (metrics_pi_stress(o, strlen(o), j, &m, &d, &err) < 0)
		fail_msg("%s", err.message);
	assert_true(num(m, "inversions_completed") == 17000);
	assert_true(num(d, "duration_s") == 4);
	/* without the JSON file: the stdout summary */
	_cleanup_free_ char *q = golden("rt-tests", "pistress-q-d3.stdout");
	_cleanup_json_ json_object *m2 = NULL, *d2 = NULL;
	if (metrics_pi_stress(q, strlen(q), NULL, &m2, &d2, &err) < 0)
		fail_msg("%s", err.message);
	assert_true(num(m2, "inversions_completed") == 24489);
	json_object *m3 = NULL, *d3 = NULL;
	assert_true(metrics_pi_stress("", 0, NULL, &m3, &d3, &err) < 0);
	assert_true(metrics_pi_stress("", 0, "{\"inversion\": -3}", &m3, &d3, &err) < 0);
	assert_true(metrics_pi_stress("", 0, "{\"inversion\": \"7\"}", &m3, &d3, &err) < 0);
	assert_true(metrics_pi_stress("", 0, "[1]", &m3, &d3, &err) < 0);
	assert_null(m3);
}

static void test_pi_stress_deadlock_reason(void **state)
{
	(void)state;
	/* What pi_stress's watchdog prints (rt-tests 2.4, pi_stress.c) */
	_cleanup_json_ json_object *p = json_tokener_parse(
	    "{\"stdout\": \"Starting PI Stress Test\\n\", \"stderr\": \"ERROR: WATCHDOG "
	    "triggered: group 1 is deadlocked!\\nERROR: reporter stopping due to watchdog "
	    "event\\n\", \"exit_code\": 0, \"signal\": 15}");
	char why[256];
	assert_true(metrics_failure_reason("pi_stress", p, why, sizeof(why)));
	assert_non_null(strstr(why, "deadlock"));
	assert_non_null(strstr(why, "group 1"));
	_cleanup_json_ json_object *q = json_tokener_parse(
	    "{\"stdout\": \"Total inversion performed: 3\\n\", \"stderr\": \"\"}");
	assert_false(metrics_failure_reason("pi_stress", q, why, sizeof(why)));
	assert_false(metrics_failure_reason("hackbench", p, why, sizeof(why)));
	assert_false(metrics_failure_reason("pi_stress", NULL, why, sizeof(why)));

	/* cyclicdeadline's calibration under a stalled vCPU, seen in the guest */
	_cleanup_json_ json_object *cd = json_tokener_parse(
	    "{\"stdout\": \"Using all CPUS\\ninterval: 6000:10000\\n\", \"stderr\": \"FATAL: "
	    "Failed to perform task within runtime: Missed by 6019 us\\n\", \"exit_code\": 1}");
	assert_true(metrics_failure_reason("cyclicdeadline", cd, why, sizeof(why)));
	assert_string_equal(why, "cyclicdeadline stopped: Failed to perform task within runtime: "
				 "Missed by 6019 us");
}

static void test_pip_stress(void **state)
{
	(void)state;
	_cleanup_free_ char *o = golden("rt-tests", "pipstress.stdout");
	_cleanup_json_ json_object *m = NULL, *d = NULL;
	struct sl_error err = {0};
	if (metrics_pip_stress(o, strlen(o), &m, &d, &err) < 0)
		fail_msg("%s", err.message);
	assert_true(num(m, "inversion_handled") == 0);
	const char *yes = "Successfully used priority inheritance to handle an inversion\n";
	_cleanup_json_ json_object *m2 = NULL, *d2 = NULL;
	assert_int_equal(metrics_pip_stress(yes, strlen(yes), &m2, &d2, &err), 0);
	assert_true(num(m2, "inversion_handled") == 1);
	json_object *m3 = NULL, *d3 = NULL;
	assert_true(metrics_pip_stress("", 0, &m3, &d3, &err) < 0);
	const char *both = "No inversion incurred\nNo inversion incurred\n";
	assert_true(metrics_pip_stress(both, strlen(both), &m3, &d3, &err) < 0);
}

static void test_cyclicdeadline_golden(void **state)
{
	(void)state;
	_cleanup_free_ char *j = golden("rt-tests", "cyclicdeadline-t2-i1000.json");
	_cleanup_json_ json_object *m = NULL, *d = NULL;
	struct sl_error err = {0};
	if (metrics_cyclicdeadline(j, &m, &d, &err) < 0)
		fail_msg("%s", err.message);
	assert_true(num(m, "latency_us.min") == 3);
	assert_true(num(m, "latency_us.max") == 993720);
	assert_true(num(m, "cycles") == 2008 + 1459);
	double avg = (446022.52 * 2008 + 361216.88 * 1459) / (2008 + 1459);
	assert_true(fabs(num(m, "latency_us.avg") - avg) < 0.01);

	_cleanup_free_ char *j1 = golden("rt-tests", "cyclicdeadline-t1-i10000.json");
	_cleanup_json_ json_object *m1 = NULL, *d1 = NULL;
	if (metrics_cyclicdeadline(j1, &m1, &d1, &err) < 0)
		fail_msg("%s", err.message);
	assert_true(num(m1, "latency_us.max") == 68371);
	assert_true(num(m1, "cycles") == 294);

	const char *bad[] = {
	    "{\"num_threads\": 2, \"thread\": {\"0\": {\"cycles\": 1, \"min\": 1, \"max\": 1, "
	    "\"avg\": 1}}}",
	    "{\"num_threads\": 1, \"thread\": {\"0\": {\"cycles\": 1, \"min\": -1, \"max\": 1, "
	    "\"avg\": 1}}}",
	    "{\"num_threads\": 1, \"thread\": {\"0\": {\"cycles\": 0, \"min\": 1, \"max\": 1, "
	    "\"avg\": 1}}}",
	    "{\"num_threads\": 1, \"thread\": {\"x\": {\"cycles\": 1, \"min\": 1, \"max\": 1, "
	    "\"avg\": 1}}}",
	    "{\"num_threads\": 0, \"thread\": {}}",
	    "{\"thread\": []}",
	    "not json",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_object *mx = NULL, *dx = NULL;
		if (metrics_cyclicdeadline(bad[i], &mx, &dx, &err) == 0)
			fail_msg("accepted %s", bad[i]);
	}
	json_object *mx = NULL, *dx = NULL;
	assert_true(metrics_cyclicdeadline(NULL, &mx, &dx, &err) < 0);
}

static void test_stress_ng_golden(void **state)
{
	(void)state;
	_cleanup_free_ char *y = golden("workloads", "stress-ng-switch-mutex-futex-yield.yaml");
	_cleanup_json_ json_object *m = NULL, *d = NULL;
	struct sl_error err = {0};
	if (metrics_stress_ng(y, &m, &d, &err) < 0)
		fail_msg("%s", err.message);
	assert_true(fabs(num(m, "bogo_ops_per_s.switch") - 149.018913) < 1e-6);
	/* 12773.747853, 5575790.917133 and 448831.437997 in the output: a
	 * metric keeps the 10 significant digits a result stores. */
	assert_true(fabs(num(m, "bogo_ops_per_cpu_s.mutex") - 12773.74785) < 1e-9);
	assert_true(fabs(num(m, "bogo_ops_per_s.futex") - 8.861369) < 1e-6);
	assert_true(fabs(num(m, "bogo_ops_per_s.yield") - 7488.586852) < 1e-6);
	assert_true(fabs(num(m, "ns_per_op.switch") - 5575790.917) < 1e-9);
	assert_true(fabs(num(m, "ns_per_op.yield") - 448831.438) < 1e-9);
	assert_false(json_object_object_get_ex(m, "ns_per_op.futex", NULL));
	assert_true(num(d, "bogo_ops.mutex") == 37887);
	assert_int_equal(json_object_object_length(m), 4 * 2 + 3);
}

static void test_stress_ng_bad(void **state)
{
	(void)state;
	const char *bad[] = {
	    "---\nsystem-info:\n  cpus: 2\n",
	    "metrics:\n    - stressor: Switch\n      bogo-ops: 1\n",
	    "metrics:\n      bogo-ops: 1\n",
	    "metrics:\n    - stressor: switch\n      bogo-ops: x\n",
	    "metrics:\n    - stressor: switch\n      bogo-ops: 1\n",
	    "metrics:\n    - stressor: a\n      bogo-ops: 1\n      bogo-ops-per-second-real-time: "
	    "1\n      bogo-ops-per-second-usr-sys-time: 1\n    - stressor: a\n",
	    "metrics:\n    - stressor: switch\n      bogo-ops-per-second-real-time: -1\n",
	    "metrics:\n    - stressor: \n",
	    "metrics:\n    - stressor: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
	    "metrics:\n    - stressor: switch\n      bogo-ops:1\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_object *m = NULL, *d = NULL;
		struct sl_error err = {0};
		if (metrics_stress_ng(bad[i], &m, &d, &err) == 0)
			fail_msg("accepted %s", bad[i]);
		assert_true(err.message[0] != '\0');
		assert_null(m);
	}
	/* 65 stressors are too many */
	char big[65 * 160] = "metrics:\n";
	for (int i = 0; i < 65; i++) {
		char e[160];
		snprintf(e, sizeof(e),
			 "    - stressor: s%d\n      bogo-ops: 1\n      "
			 "bogo-ops-per-second-real-time: 1\n      "
			 "bogo-ops-per-second-usr-sys-time: 1\n",
			 i);
		strcat(big, e);
	}
	json_object *m = NULL, *d = NULL;
	struct sl_error err = {0};
	assert_true(metrics_stress_ng(big, &m, &d, &err) < 0);
	assert_non_null(strstr(err.message, "64"));
}

static void test_wakeup_golden(void **state)
{
	(void)state;
	_cleanup_free_ char *o = golden("workloads", "wakeup-m2-w2.stdout");
	_cleanup_json_ json_object *payload = json_object_new_object();
	json_object_object_add(payload, "stdout", json_object_new_string(o));
	_cleanup_json_ json_object *m = NULL, *d = NULL;
	struct sl_error err = {0};
	if (metrics_from_workload("wakeup", payload, NULL, &m, &d, &err) < 0)
		fail_msg("%s", err.message);
	assert_true(num(m, "wakeup_latency_us.p50") == 52);
	assert_true(num(m, "wakeup_latency_us.p99.9") == 64307.2);
	assert_true(num(m, "requests_per_s") == 1335);
	assert_true(num(m, "wakeup_latency_us.p50") <= num(m, "wakeup_latency_us.p90"));
	assert_true(num(m, "wakeup_latency_us.p90") <= num(m, "wakeup_latency_us.p99"));
	assert_true(num(d, "requests") == 4005);
}

static void test_perf_bench_sched_golden(void **state)
{
	(void)state;
	struct sl_error err = {0};
	_cleanup_free_ char *p = golden("workloads", "perf-bench-sched-pipe-l5000.stdout");
	_cleanup_json_ json_object *m = NULL, *d = NULL;
	if (metrics_perf_bench_sched(p, strlen(p), &m, &d, &err) < 0)
		fail_msg("%s", err.message);
	assert_true(num(m, "time_s") == 4.796);
	assert_true(num(m, "usec_per_op") == 959.3122);
	assert_true(num(m, "ops_per_s") == 1042);
	assert_int_equal(json_object_object_length(m), 3);
	assert_string_equal(json_object_get_string(json_object_object_get(d, "benchmark")), "pipe");
	assert_string_equal(json_object_get_string(json_object_object_get(d, "mode")), "processes");
	assert_true(num(d, "operations") == 5000);

	_cleanup_free_ char *t = golden("workloads", "perf-bench-sched-pipe-T-l5000.stdout");
	_cleanup_json_ json_object *m2 = NULL, *d2 = NULL;
	if (metrics_perf_bench_sched(t, strlen(t), &m2, &d2, &err) < 0)
		fail_msg("%s", err.message);
	assert_true(num(m2, "usec_per_op") == 2001.459);
	assert_string_equal(json_object_get_string(json_object_object_get(d2, "mode")), "threads");

	_cleanup_free_ char *g = golden("workloads", "perf-bench-sched-messaging-p-g2-l20.stdout");
	_cleanup_json_ json_object *m3 = NULL, *d3 = NULL;
	if (metrics_perf_bench_sched(g, strlen(g), &m3, &d3, &err) < 0)
		fail_msg("%s", err.message);
	assert_true(num(m3, "time_s") == 2.596);
	assert_int_equal(json_object_object_length(m3), 1);
	assert_string_equal(json_object_get_string(json_object_object_get(d3, "benchmark")),
			    "messaging");
	assert_true(num(d3, "groups") == 2);
	assert_true(num(d3, "tasks") == 80);
	assert_true(num(d3, "senders_per_group") == 20);

	_cleanup_free_ char *h =
	    golden("workloads", "perf-bench-sched-messaging-p-t-g2-l20.stdout");
	_cleanup_json_ json_object *payload = json_object_new_object();
	json_object_object_add(payload, "stdout", json_object_new_string(h));
	_cleanup_json_ json_object *m4 = NULL, *d4 = NULL;
	if (metrics_from_workload("perf-bench-sched", payload, NULL, &m4, &d4, &err) < 0)
		fail_msg("%s", err.message);
	assert_true(num(m4, "time_s") == 0.293);
	assert_string_equal(json_object_get_string(json_object_object_get(d4, "mode")), "threads");
}

static void test_perf_bench_sched_bad(void **state)
{
	(void)state;
	const char *bad[] = {
	    "",
	    "     Total time: 0.1 [sec]\n",
	    "# Running 'sched/pipe' benchmark:\n",
	    "# Running 'sched/numa' benchmark:\n     Total time: 0.1 [sec]\n",
	    "# Running 'sched/pipe' benchmark:\n# Running 'sched/pipe' benchmark:\n"
	    "     Total time: 0.1 [sec]\n",
	    "# Running 'sched/pipe' benchmark:\n     Total time: 0.1 [sec]\n"
	    "     Total time: 0.2 [sec]\n",
	    "# Running 'sched/pipe' benchmark:\n     Total time: -1 [sec]\n",
	    "# Running 'sched/pipe' benchmark:\n     Total time: 1e3 [sec]\n",
	    "# Running 'sched/pipe' benchmark:\n     Total time: 0.1 sec\n",
	    "# Running 'sched/pipe' benchmark:\n     Total time: 9999999 [sec]\n",
	    "# Running 'sched/pipe' benchmark:\n     Total time: 0.1 [sec]\n   x usecs/op\n",
	    "# Running 'sched/pipe' benchmark:\n     Total time: 0.1 [sec]\n   1 ops/sec\n"
	    "   2 ops/sec\n",
	    "# Running 'sched/pipe' benchmark:\n     Total time: nan [sec]\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_object *m = NULL, *d = NULL;
		struct sl_error err = {0};
		if (metrics_perf_bench_sched(bad[i], strlen(bad[i]), &m, &d, &err) == 0)
			fail_msg("accepted %s", bad[i]);
		assert_true(err.message[0] != '\0');
		assert_null(m);
	}
	/* a NUL byte in the output */
	json_object *m = NULL, *d = NULL;
	struct sl_error err = {0};
	const char nul[] = "# Running 'sched/pipe' benchmark:\n\0     Total time: 0.1 [sec]\n";
	assert_true(metrics_perf_bench_sched(nul, sizeof(nul) - 1, &m, &d, &err) < 0);
	/* counts that are absurd are left out of the details, not trusted */
	const char *huge = "# Running 'sched/messaging' benchmark:\n"
			   "# 99999999999999999999 groups == 1 processes run\n"
			   "     Total time: 0.1 [sec]\n";
	assert_int_equal(metrics_perf_bench_sched(huge, strlen(huge), &m, &d, &err), 0);
	assert_false(json_object_object_get_ex(d, "groups", NULL));
	json_object_put(m);
	json_object_put(d);
}

static void test_dispatch_and_better(void **state)
{
	(void)state;
	assert_string_equal(metrics_better("hackbench", "time_s"), "lower");
	assert_string_equal(metrics_better("hackbench", "messages_per_s"), "higher");
	assert_string_equal(metrics_better("pi_stress", "inversions_completed"), "higher");
	assert_string_equal(metrics_better("pip_stress", "inversion_handled"), "none");
	assert_string_equal(metrics_better("cyclicdeadline", "latency_us.max"), "lower");
	/* it emits no percentiles: a name it does not emit has no direction */
	assert_string_equal(metrics_better("cyclicdeadline", "latency_us.p99"), "none");
	assert_string_equal(metrics_better("cyclicdeadline", "cycles"), "none");
	assert_string_equal(metrics_better("stress-ng", "bogo_ops_per_s.switch"), "higher");
	assert_string_equal(metrics_better("stress-ng", "bogo_ops_per_cpu_s.mutex"), "higher");
	assert_string_equal(metrics_better("stress-ng", "ns_per_op.yield"), "lower");
	assert_string_equal(metrics_better("wakeup", "wakeup_latency_us.p99.9"), "lower");
	assert_string_equal(metrics_better("wakeup", "request_latency_us.p50"), "lower");
	assert_string_equal(metrics_better("wakeup", "requests_per_s"), "higher");
	assert_string_equal(metrics_better("perf-bench-sched", "time_s"), "lower");
	assert_string_equal(metrics_better("perf-bench-sched", "usec_per_op"), "lower");
	assert_string_equal(metrics_better("perf-bench-sched", "ops_per_s"), "higher");
	/* the rt-migrate-test rule is unchanged */
	assert_string_equal(metrics_better("rt-migrate-test", "inversions"), "lower");

	/* stress-ng's YAML and cyclicdeadline's JSON come in as json_file */
	_cleanup_free_ char *y = golden("workloads", "stress-ng-switch-mutex-futex-yield.yaml");
	_cleanup_json_ json_object *payload = json_object_new_object();
	json_object_object_add(payload, "stdout", json_object_new_string(""));
	json_object_object_add(payload, "json_file", json_object_new_string(y));
	_cleanup_json_ json_object *m = NULL, *d = NULL;
	struct sl_error err = {0};
	if (metrics_from_workload("stress-ng", payload, NULL, &m, &d, &err) < 0)
		fail_msg("%s", err.message);
	assert_true(num(m, "bogo_ops_per_s.switch") > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hackbench_golden),
	    cmocka_unit_test(test_hackbench_bad),
	    cmocka_unit_test(test_pi_stress_golden),
	    cmocka_unit_test(test_pi_stress_deadlock_reason),
	    cmocka_unit_test(test_pip_stress),
	    cmocka_unit_test(test_cyclicdeadline_golden),
	    cmocka_unit_test(test_stress_ng_golden),
	    cmocka_unit_test(test_stress_ng_bad),
	    cmocka_unit_test(test_wakeup_golden),
	    cmocka_unit_test(test_perf_bench_sched_golden),
	    cmocka_unit_test(test_perf_bench_sched_bad),
	    cmocka_unit_test(test_dispatch_and_better),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
