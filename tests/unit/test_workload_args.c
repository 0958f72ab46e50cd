/* The per-tool argument rules (service/job/workload_args.c): accepted forms,
 * bounds, required options, the output options schedlab adds itself, and
 * that errors name the argument's JSON path. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "job/workload_args.h"

static int check(const char *tool, const char *args_json, struct sl_error *err)
{
	json_object *a = json_tokener_parse(args_json);
	assert_non_null(a);
	*err = (struct sl_error){0};
	int r = workload_args_check(tool, a, "$.workloads[1]", err);
	json_object_put(a);
	return r;
}

static void ok(const char *tool, const char *args_json)
{
	struct sl_error err;
	if (check(tool, args_json, &err) < 0)
		fail_msg("%s %s refused: %s", tool, args_json, err.message);
}

static void bad(const char *tool, const char *args_json, const char *path, const char *why)
{
	struct sl_error err;
	if (check(tool, args_json, &err) == 0)
		fail_msg("%s %s accepted", tool, args_json);
	assert_int_equal(err.kind, ERR_INVALID);
	if (strcmp(err.path, path) != 0)
		fail_msg("%s %s: path '%s', expected '%s'", tool, args_json, err.path, path);
	if (!strstr(err.message, why))
		fail_msg("%s %s: '%s' does not say '%s'", tool, args_json, err.message, why);
}

static void test_hackbench(void **state)
{
	(void)state;
	ok("hackbench", "[\"-p\"]");
	ok("hackbench", "[\"--pipe\", \"-T\", \"-g\", \"4\", \"--fds=10\", \"-l\", \"200\"]");
	ok("hackbench", "[\"-p\", \"-g4\", \"-s\", \"65536\"]");
	bad("hackbench", "[]", "$.workloads[1].args", "no networking");
	bad("hackbench", "[\"-g\", \"2\"]", "$.workloads[1].args", "must use pipes");
	bad("hackbench", "[\"-p\", \"-i\"]", "$.workloads[1].args[1]", "not one schedlab accepts");
	bad("hackbench", "[\"-p\", \"-g\", \"65\"]", "$.workloads[1].args[2]", "from 1 to 64");
	bad("hackbench", "[\"-p\", \"-g\", \"-1\"]", "$.workloads[1].args[2]", "whole number");
	bad("hackbench", "[\"-p\", \"-g\", \"+3\"]", "$.workloads[1].args[2]", "whole number");
	bad("hackbench", "[\"-p\", \"-l\"]", "$.workloads[1].args[1]", "needs a number");
	bad("hackbench", "[\"-p\", \"-g=4\"]", "$.workloads[1].args[1]", "whole number");
	bad("hackbench", "[\"-p\", \"-p\"]", "$.workloads[1].args[1]", "twice");
	bad("hackbench", "[\"-p\", \"-g\", \"64\", \"-f\", \"64\"]", "$.workloads[1].args",
	    "8192 tasks");
	bad("hackbench", "[\"-p\", \"extra\"]", "$.workloads[1].args[1]", "not one");
	bad("hackbench", "[\"-p\", \"--pipes\"]", "$.workloads[1].args[1]", "not one");
	bad("hackbench", "[\"-p\", \"--pipe=1\"]", "$.workloads[1].args[1]", "not one");
}

static void test_rt_tests(void **state)
{
	(void)state;
	ok("pi_stress", "[\"-D\", \"5\", \"-q\"]");
	ok("pi_stress", "[\"--inversions=1000\", \"-g\", \"2\"]");
	bad("pi_stress", "[\"-q\"]", "$.workloads[1].args", "runs until it is killed");
	bad("pi_stress", "[\"-D\", \"5\", \"-p\"]", "$.workloads[1].args[2]", "not one");
	bad("pi_stress", "[\"-D\", \"5m\"]", "$.workloads[1].args[1]", "whole number");
	bad("pi_stress", "[\"-D\", \"5\", \"--json=/tmp/x\"]", "$.workloads[1].args[2]",
	    "schedlab's own");
	ok("pip_stress", "[]");
	bad("pip_stress", "[\"-h\"]", "$.workloads[1].args[0]", "accepted: none");
	ok("cyclicdeadline", "[\"-D\", \"3\", \"-t\", \"2\", \"-i\", \"1000\", \"-q\"]");
	bad("cyclicdeadline", "[\"-t\", \"1\"]", "$.workloads[1].args", "--duration");
	bad("cyclicdeadline", "[\"-D\", \"3\", \"-i\", \"99\"]", "$.workloads[1].args[3]",
	    "from 100 to 1000000");
	bad("cyclicdeadline", "[\"-D\", \"3\", \"-b\", \"100\"]", "$.workloads[1].args[2]",
	    "not one");
}

static void test_stress_ng_and_wakeup(void **state)
{
	(void)state;
	ok("stress-ng", "[\"--switch\", \"1\", \"--mutex=2\", \"-t\", \"5\", \"--metrics\"]");
	ok("stress-ng", "[\"--yield\", \"0\", \"--yield-ops\", \"1000\", \"--timeout=10\", "
			"\"--metrics-brief\"]");
	bad("stress-ng", "[\"--yield\", \"1\", \"-t\", \"5\"]", "$.workloads[1].args",
	    "no metrics");
	bad("stress-ng", "[\"--switch\", \"1\", \"--metrics\"]", "$.workloads[1].args",
	    "--timeout");
	bad("stress-ng", "[\"-t\", \"5\", \"--metrics\"]", "$.workloads[1].args",
	    "at least one stressor");
	bad("stress-ng", "[\"--cpu\", \"1\", \"-t\", \"5\"]", "$.workloads[1].args[0]", "not one");
	bad("stress-ng", "[\"--switch\", \"1\", \"-t\", \"5\", \"--yaml\", \"/x\"]",
	    "$.workloads[1].args[4]", "schedlab's own");
	bad("stress-ng", "[\"--switch\", \"65\", \"-t\", \"5\", \"--metrics\"]",
	    "$.workloads[1].args[1]", "from 0 to 64");
	ok("wakeup", "[]");
	ok("wakeup", "[\"--message-threads\", \"2\", \"--workers=4\", \"--seconds\", \"10\"]");
	bad("wakeup", "[\"--seconds\", \"0.5\"]", "$.workloads[1].args[1]", "whole number");
	bad("wakeup", "[\"--workers\", \"0\"]", "$.workloads[1].args[1]", "from 1 to 64");
	/* tools without rules take anything */
	ok("rt-migrate-test", "[\"-p\", \"60\", \"3\"]");
	ok("share", "[\"--anything\"]");
}

/* perf-bench-sched: the benchmark first, then its own options. */
static void test_perf_bench_sched(void **state)
{
	(void)state;
	ok("perf-bench-sched", "[\"messaging\", \"-p\"]");
	ok("perf-bench-sched",
	   "[\"messaging\", \"--pipe\", \"-t\", \"-g\", \"50\", \"--nr_loops=100\"]");
	ok("perf-bench-sched", "[\"pipe\", \"-l\", \"1000\", \"-T\"]");
	ok("perf-bench-sched", "[\"pipe\", \"--loop=100000000\"]");
	bad("perf-bench-sched", "[]", "$.workloads[1].args", "messaging, pipe");
	bad("perf-bench-sched", "[\"-p\"]", "$.workloads[1].args[0]", "'-p' is not one");
	bad("perf-bench-sched", "[\"numa\", \"-l\", \"1\"]", "$.workloads[1].args[0]",
	    "accepted: messaging, pipe");
	bad("perf-bench-sched", "[\"messaging\"]", "$.workloads[1].args", "must use pipes");
	bad("perf-bench-sched", "[\"messaging\", \"-p\", \"-g\", \"51\"]", "$.workloads[1].args[3]",
	    "from 1 to 50");
	bad("perf-bench-sched", "[\"messaging\", \"-p\", \"-f\", \"10\"]", "$.workloads[1].args[2]",
	    "not one");
	bad("perf-bench-sched", "[\"messaging\", \"-p\", \"messaging\"]", "$.workloads[1].args[2]",
	    "not one");
	bad("perf-bench-sched", "[\"pipe\"]", "$.workloads[1].args", "--loop");
	bad("perf-bench-sched", "[\"pipe\", \"-l\", \"0\"]", "$.workloads[1].args[2]",
	    "from 1 to 100000000");
	/* pipe's options are not messaging's */
	bad("perf-bench-sched", "[\"pipe\", \"-l\", \"10\", \"-p\"]", "$.workloads[1].args[3]",
	    "not one");
	bad("perf-bench-sched", "[\"pipe\", \"-l\", \"10\", \"-G\", \"a,b\"]",
	    "$.workloads[1].args[3]", "not one");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hackbench),
	    cmocka_unit_test(test_rt_tests),
	    cmocka_unit_test(test_stress_ng_and_wakeup),
	    cmocka_unit_test(test_perf_bench_sched),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
