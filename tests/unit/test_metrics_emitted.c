/* Every metric name a plug-in's parser emits on the golden output in
 * tests/data/rt-tests/ and tests/data/workloads/ is one the plug-in lists
 * (metrics_known()). A metric nobody lists falls back to direction "none",
 * which compare/ never gates on: so a parser that starts emitting a new
 * metric fails here until its plug-in states the metric's direction. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "metrics/metrics.h"
#include "util/fs.h"

/* One golden run: the tool and its frame's texts (file names under
 * tests/data/; NULL when the frame has none). */
struct golden_run {
	const char *tool, *stdout_file, *json_file, *stderr_file;
	/* a hackbench run on a "schedstat" kernel: the snapshots around it */
	bool schedstat;
};

static const struct golden_run runs[] = {
    {.tool = "rt-migrate-test",
     .stdout_file = "rt-tests/rtmigrate-p10-l8-t4.stdout",
     .json_file = "rt-tests/rtmigrate-p10-l8-t4.json"},
    {.tool = "rt-migrate-test",
     .stdout_file = "rt-tests/rtmigrate-p60-l20-t3.stdout",
     .json_file = "rt-tests/rtmigrate-p60-l20-t3.json"},
    {.tool = "rt-migrate-test",
     .stdout_file = "rt-tests/rtmigrate-p60-l5-t3.stdout",
     .json_file = "rt-tests/rtmigrate-p60-l5-t3.json"},
    {.tool = "cyclictest",
     .stdout_file = "rt-tests/cyclictest-t1-h2000.stdout",
     .json_file = "rt-tests/cyclictest-t1-h2000.json"},
    {.tool = "cyclictest",
     .stdout_file = "rt-tests/cyclictest-t2-h2000.stdout",
     .json_file = "rt-tests/cyclictest-t2-h2000.json"},
    {.tool = "cyclicdeadline",
     .stdout_file = "rt-tests/cyclicdeadline-t1-i10000.stdout",
     .json_file = "rt-tests/cyclicdeadline-t1-i10000.json"},
    {.tool = "cyclicdeadline",
     .stdout_file = "rt-tests/cyclicdeadline-t2-i1000.stdout",
     .json_file = "rt-tests/cyclicdeadline-t2-i1000.json"},
    {.tool = "hackbench", .stdout_file = "rt-tests/hackbench-process-pipe-g4-f10-l50.stdout"},
    {.tool = "hackbench", .stdout_file = "rt-tests/hackbench-thread-pipe-g2-f5-l100.stdout"},
    {.tool = "hackbench",
     .stdout_file = "rt-tests/hackbench-thread-pipe-g2-f5-l100.stdout",
     .schedstat = true},
    {.tool = "pi_stress",
     .stdout_file = "rt-tests/pistress-g2-d3.stdout",
     .json_file = "rt-tests/pistress-g2-d3.json"},
    {.tool = "pi_stress",
     .stdout_file = "rt-tests/pistress-q-d3.stdout",
     .json_file = "rt-tests/pistress-q-d3.json"},
    {.tool = "pi_stress", .stdout_file = "rt-tests/pistress-q-d3.stdout"},
    {.tool = "pip_stress", .stdout_file = "rt-tests/pipstress.stdout"},
    {.tool = "perf-bench-sched",
     .stdout_file = "workloads/perf-bench-sched-messaging-p-g2-l20.stdout"},
    {.tool = "perf-bench-sched",
     .stdout_file = "workloads/perf-bench-sched-messaging-p-t-g2-l20.stdout"},
    {.tool = "perf-bench-sched", .stdout_file = "workloads/perf-bench-sched-pipe-T-l5000.stdout"},
    {.tool = "perf-bench-sched", .stdout_file = "workloads/perf-bench-sched-pipe-l5000.stdout"},
    {.tool = "stress-ng",
     .json_file = "workloads/stress-ng-switch-mutex-futex-yield.yaml",
     .stderr_file = "workloads/stress-ng-switch-mutex-futex-yield.stderr"},
    {.tool = "wakeup", .stdout_file = "workloads/wakeup-m2-w2.stdout"},
};

/* The text of tests/data/name, as a new JSON string. */
static json_object *golden(const char *name)
{
	_cleanup_free_ char *root = fs_data_dir();
	_cleanup_free_ char *sub = fs_path_join("tests/data", name);
	_cleanup_free_ char *path = fs_path_join(root, sub);
	_cleanup_free_ char *data = NULL;
	struct sl_error err = {0};
	if (fs_read_file(path, 8 << 20, &data, NULL, &err) < 0)
		fail_msg("cannot read %s: %s", path, err.message);
	return json_object_new_string(data);
}

static json_object *frame_of(const struct golden_run *g)
{
	json_object *p = json_object_new_object();
	json_object_object_add(
	    p, "stdout", g->stdout_file ? golden(g->stdout_file) : json_object_new_string(""));
	json_object_object_add(p, "json_file", g->json_file ? golden(g->json_file) : NULL);
	json_object_object_add(
	    p, "stderr", g->stderr_file ? golden(g->stderr_file) : json_object_new_string(""));
	json_object_object_add(p, "exit_code", json_object_new_int(0));
	json_object_object_add(p, "timed_out", json_object_new_boolean(0));
	if (g->schedstat) {
		json_object_object_add(p, "schedstat_before",
				       golden("workloads/schedstat-6.1-2x2-hackbench.before"));
		json_object_object_add(p, "schedstat_after",
				       golden("workloads/schedstat-6.1-2x2-hackbench.after"));
	}
	return p;
}

static void test_every_emitted_metric_is_listed(void **state)
{
	(void)state;
	size_t checked = 0, unlisted = 0;
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		const struct golden_run *g = &runs[i];
		_cleanup_json_ json_object *payload = frame_of(g);
		_cleanup_json_ json_object *m = NULL, *d = NULL;
		struct sl_error err = {0};
		if (metrics_from_workload(g->tool, payload, NULL, &m, &d, &err) < 0)
			fail_msg("%s on %s: %s", g->tool,
				 g->stdout_file ? g->stdout_file : g->json_file, err.message);
		assert_true(json_object_object_length(m) > 0);
		json_object_object_foreach(m, name, v)
		{
			(void)v;
			checked++;
			if (!metrics_known(g->tool, name)) {
				print_error("%s emits '%s', which its plug-in does not list\n",
					    g->tool, name);
				unlisted++;
			}
		}
	}
	assert_int_equal(unlisted, 0);
	/* the golden output is not vacuous: the schedstat run alone has dozens */
	assert_true(checked > 50);
}

/* The lookup itself: a listed name, a family any tool carries, and names
 * nobody lists. */
static void test_known(void **state)
{
	(void)state;
	assert_true(metrics_known("cyclictest", "latency_us.p99"));
	assert_true(metrics_known("hackbench", "schedstat.run_delay_ms"));
	assert_true(metrics_known("hackbench", "load.iterations"));
	assert_false(metrics_known("hackbench", "no_such_metric"));
	assert_false(metrics_known("no-such-tool", "time_s"));
	assert_false(metrics_known(NULL, "time_s"));
	assert_false(metrics_known("hackbench", NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_emitted_metric_is_listed),
	    cmocka_unit_test(test_known),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
