/* A load's metrics (metrics/load.c): the means of its completed iterations'
 * metrics through the tool's own parser, load.cpu_fraction and the counts;
 * the floor that makes a load that did not load an error; and frames out
 * of bounds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "metrics/metrics.h"

#define HB(t)                                                                                      \
	"Running in process mode with 2 groups using 20 file descriptors each (== 40 tasks)\\n"    \
	"Each sender will pass 50 messages of 100 bytes\\nTime: " t "\\n"

static json_object *frame(const char *load)
{
	char text[4096];
	snprintf(text, sizeof(text),
		 "{\"exit_code\": 0, \"stdout\": \"\", \"timed_out\": false, \"load\": %s}", load);
	json_object *o = json_tokener_parse(text);
	assert_non_null(o);
	return o;
}

static double metric(json_object *m, const char *name)
{
	json_object *v = NULL;
	if (!json_object_object_get_ex(m, name, &v))
		fail_msg("no metric %s in %s", name, json_object_to_json_string(m));
	return json_object_get_double(v);
}

static void test_hackbench_load(void **state)
{
	(void)state;
	json_object *p = frame(
	    "{\"starts\": 4, \"completed\": 3, \"failures\": 0, \"cpu_us\": "
	    "3000000, \"window_ms\": 2000, \"cpus\": 2, \"outputs\": [\"" HB("0.5") "\", \"" HB(
		"1.0") "\", \"" HB("0.25") "\"], "
					   "\"json_files\": [null, null, null]}");
	json_object *m = NULL, *d = NULL;
	struct sl_error err = {0};
	if (metrics_from_workload("hackbench", p, NULL, &m, &d, &err) < 0)
		fail_msg("%s", err.message);
	/* loops per second: 50 / 0.5, 50 / 1.0, 50 / 0.25: mean 116.67 */
	assert_true(metric(m, "loops_per_s") > 116.6 && metric(m, "loops_per_s") < 116.7);
	assert_true(metric(m, "time_s") > 0.583 && metric(m, "time_s") < 0.584);
	assert_true(metric(m, "load.cpu_fraction") == 0.75);
	assert_true(metric(m, "load.iterations") == 3);
	assert_true(metric(m, "load.restarts") == 3);
	assert_true(metric(m, "load.failures") == 0);
	assert_string_equal(metrics_better("hackbench", "loops_per_s"), "higher");
	assert_string_equal(metrics_better("hackbench", "load.cpu_fraction"), "none");
	char why[300];
	assert_false(metrics_load_shortfall(p, NULL, why, sizeof(why)));
	json_object_put(m);
	json_object_put(d);
	json_object_put(p);

	/* the last iteration, ended by the stop, printed no Time: line */
	p = frame("{\"starts\": 3, \"completed\": 3, \"failures\": 0, \"cpu_us\": 3000000, "
		  "\"window_ms\": 2000, \"cpus\": 2, \"outputs\": [\"" HB("0.5") "\", \"" HB(
		      "1.0") "\", \"Running in process mode\\n\"]}");
	m = d = NULL;
	if (metrics_from_workload("hackbench", p, NULL, &m, &d, &err) < 0)
		fail_msg("%s", err.message);
	assert_true(metric(m, "loops_per_s") == 75);
	assert_int_equal(json_object_get_int(json_object_object_get(d, "load_iterations_parsed")),
			 2);
	json_object_put(m);
	json_object_put(d);
	json_object_put(p);
}

/* Under the floor, with and without a failure: the reason says which. */
static void test_load_floor(void **state)
{
	(void)state;
	char why[300];
	json_object *spec = json_tokener_parse("{\"min_cpu\": 0.25}");
	json_object *p = frame("{\"starts\": 5, \"completed\": 0, \"failures\": 5, \"cpu_us\": "
			       "1000, \"window_ms\": 4000, \"cpus\": 2, \"last_failure\": "
			       "\"killed by signal 11\", \"outputs\": []}");
	assert_true(metrics_load_shortfall(p, spec, why, sizeof(why)));
	assert_non_null(strstr(why, "used 0 % of its 2 CPU(s)"));
	assert_non_null(strstr(why, "floor of 25 %"));
	assert_non_null(strstr(why, "signal 11"));
	json_object_put(p);
	p = frame("{\"starts\": 1, \"completed\": 0, \"failures\": 0, \"cpu_us\": 1500000, "
		  "\"window_ms\": 4000, \"cpus\": 2, \"outputs\": []}");
	assert_true(metrics_load_shortfall(p, spec, why, sizeof(why)));
	assert_non_null(strstr(why, "used 19 %"));
	assert_non_null(strstr(why, "slept or was starved"));
	json_object_put(p);
	/* at the floor it loaded */
	p = frame("{\"starts\": 1, \"completed\": 0, \"failures\": 0, \"cpu_us\": 2000000, "
		  "\"window_ms\": 4000, \"cpus\": 2, \"outputs\": []}");
	assert_false(metrics_load_shortfall(p, spec, why, sizeof(why)));
	json_object_put(p);
	/* a workload that is not a load has no floor */
	p = json_tokener_parse("{\"exit_code\": 0}");
	assert_false(metrics_load_shortfall(p, spec, why, sizeof(why)));
	json_object_put(p);
	json_object_put(spec);
}

static void test_load_out_of_bounds(void **state)
{
	(void)state;
	static const char *const bad[] = {
	    "{\"starts\": -1, \"completed\": 0, \"failures\": 0, \"cpu_us\": 0, \"window_ms\": "
	    "1000, "
	    "\"cpus\": 1, \"outputs\": []}",
	    "{\"starts\": 1, \"completed\": 0, \"failures\": 0, \"cpu_us\": 0, \"window_ms\": "
	    "1000, "
	    "\"cpus\": 0, \"outputs\": []}",
	    "{\"starts\": 1, \"completed\": 0, \"failures\": 0, \"cpu_us\": 0, \"window_ms\": "
	    "1000, "
	    "\"cpus\": 1, \"outputs\": [1]}",
	    "{\"starts\": 1, \"completed\": 0, \"failures\": 0, \"cpu_us\": 0, \"window_ms\": "
	    "1000, "
	    "\"cpus\": 1, \"outputs\": [\"x\"], \"json_files\": []}",
	    "{\"starts\": 1, \"completed\": 1, \"failures\": 0, \"cpu_us\": 0, \"window_ms\": "
	    "1000, "
	    "\"cpus\": 1, \"outputs\": [\"Time: x\\n\"]}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_object *p = frame(bad[i]);
		json_object *m = NULL, *d = NULL;
		struct sl_error err = {0};
		assert_true(metrics_from_workload("hackbench", p, NULL, &m, &d, &err) < 0);
		assert_null(m);
		assert_true(err.message[0] != '\0');
		json_object_put(p);
	}
}

/* burn's own JSON line, one iteration ended by SIGTERM. */
static void test_burn_load(void **state)
{
	(void)state;
	json_object *p =
	    frame("{\"starts\": 1, \"completed\": 1, \"failures\": 0, \"cpu_us\": 1900000, "
		  "\"window_ms\": "
		  "1000, \"cpus\": 2, \"outputs\": [\"{\\\"tool\\\":\\\"burn\\\",\\\"metrics\\\":{"
		  "\\\"ops_per_s\\\":4000,\\\"cpu_fraction\\\":0.9},\\\"details\\\":{}}\\n\"]}");
	json_object *m = NULL, *d = NULL;
	struct sl_error err = {0};
	if (metrics_from_workload("burn", p, NULL, &m, &d, &err) < 0)
		fail_msg("%s", err.message);
	assert_true(metric(m, "ops_per_s") == 4000);
	assert_true(metric(m, "load.cpu_fraction") == 0.95);
	assert_string_equal(metrics_better("burn", "ops_per_s"), "higher");
	json_object_put(m);
	json_object_put(d);
	json_object_put(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hackbench_load),
	    cmocka_unit_test(test_load_floor),
	    cmocka_unit_test(test_load_out_of_bounds),
	    cmocka_unit_test(test_burn_load),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
