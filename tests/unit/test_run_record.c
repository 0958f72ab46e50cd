/* run_record_fill(): frames from the agent become workload records with
 * metrics, and every way a run can go wrong becomes status "error" with a
 * reason. Uses real rt-migrate-test output from tests/data/rt-tests/. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <string.h>
#include <cmocka.h>

#include "helpers/job_fixture.h"
#include "run/run_record.h"
#include "util/fs.h"

static json_object *get(json_object *o, const char *k)
{
	json_object *v = NULL;
	json_object_object_get_ex(o, k, &v);
	return v;
}

static char *golden(const char *name)
{
	char *data = NULL;
	_cleanup_free_ char *p = fs_path_join("data/rt-tests", name);
	assert_int_equal(fs_read_file(p, 1 << 20, &data, NULL, NULL), 0);
	return data;
}

static struct job *spec(void)
{
	struct job *job =
	    job_fixture("{\"name\":\"t\",\"baseline\":\"a\",\"kernels\":" JOB_FIXTURE_KERNELS ","
			"\"variants\":{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\"}},"
			"\"workloads\":[{\"name\":\"rtm\",\"tool\":\"rt-migrate-test\","
			"\"args\":[\"-p\",\"60\",\"-l\",\"20\",\"3\"]}]}");
	assert_non_null(job);
	return job;
}

static json_object *frame(const char *kind, json_object *payload)
{
	json_object *f = json_object_new_object();
	json_object_object_add(f, "kind", json_object_new_string(kind));
	json_object_object_add(f, "payload", payload);
	return f;
}

static json_object *workload_payload(int exit_code, bool timed_out)
{
	_cleanup_free_ char *out = golden("rtmigrate-p60-l20-t3.stdout");
	_cleanup_free_ char *js = golden("rtmigrate-p60-l20-t3.json");
	json_object *p = json_object_new_object();
	json_object_object_add(p, "index", json_object_new_int(0));
	json_object_object_add(p, "exit_code", json_object_new_int(exit_code));
	json_object_object_add(p, "timed_out", json_object_new_boolean(timed_out));
	json_object_object_add(p, "stdout", json_object_new_string(out));
	json_object_object_add(p, "stderr", json_object_new_string("boom\n"));
	json_object_object_add(p, "json_file", json_object_new_string(js));
	return p;
}

static json_object *summary(const char *feature_error)
{
	char text[512];
	snprintf(text, sizeof(text),
		 "{\"uname\":\"6.1.0\",\"features\":{\"requested\":[\"NO_RT_PUSH\"],"
		 "\"applied\":[\"NO_RT_PUSH\"],\"errors\":[%s%s%s]},\"errors\":[]}",
		 feature_error ? "\"" : "", feature_error ? feature_error : "",
		 feature_error ? "\"" : "");
	return json_tokener_parse(text);
}

static json_object *new_run(void)
{
	json_object *run = json_object_new_object();
	json_object_object_add(run, "status", json_object_new_string("ok"));
	return run;
}

static void test_ok_run_gets_metrics(void **state)
{
	(void)state;
	struct job *s = spec();
	json_object *run = new_run(), *frames = json_object_new_array();
	json_object_array_add(frames, frame("workload", workload_payload(0, false)));
	json_object_array_add(frames, frame("summary", summary(NULL)));
	run_record_fill(run, s, frames);
	assert_string_equal(json_object_get_string(get(run, "status")), "ok");
	json_object *w = json_object_array_get_idx(get(run, "workloads"), 0);
	assert_string_equal(json_object_get_string(get(w, "status")), "ok");
	assert_non_null(get(get(w, "metrics"), "inversions"));
	assert_string_equal(
	    json_object_get_string(json_object_array_get_idx(get(run, "features_applied"), 0)),
	    "NO_RT_PUSH");
	json_object_put(run);
	json_object_put(frames);
	job_free(s);
}

/* A schedstat kernel whose agent could not read taskstats: the run is ok
 * and says why the tasks' run delays are missing; an overlong reason from
 * the guest is not copied. */
static void test_taskstats_error_recorded(void **state)
{
	(void)state;
	struct job *s = spec();
	char longer[400];
	memset(longer, 'x', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	const char *reasons[] = {
	    "no taskstats family (CONFIG_TASKSTATS): No such file or directory", longer};
	for (size_t i = 0; i < 2; i++) {
		json_object *run = new_run(), *frames = json_object_new_array();
		json_object *sum = summary(NULL);
		json_object_object_add(sum, "taskstats", json_object_new_boolean(0));
		json_object_object_add(sum, "taskstats_error", json_object_new_string(reasons[i]));
		json_object_array_add(frames, frame("workload", workload_payload(0, false)));
		json_object_array_add(frames, frame("summary", sum));
		run_record_fill(run, s, frames);
		assert_string_equal(json_object_get_string(get(run, "status")), "ok");
		const char *got = json_object_get_string(get(run, "taskstats_error"));
		assert_string_equal(got, i == 0 ? reasons[0] : "(the agent's reason was too long)");
		json_object_put(run);
		json_object_put(frames);
	}
	job_free(s);
}

static void expect_error(json_object *frames, const char *needle)
{
	struct job *s = spec();
	json_object *run = new_run();
	run_record_fill(run, s, frames);
	assert_string_equal(json_object_get_string(get(run, "status")), "error");
	const char *reason = json_object_get_string(get(run, "reason"));
	if (!strstr(reason, needle))
		fail_msg("reason '%s' lacks '%s'", reason, needle);
	json_object_put(run);
	json_object_put(frames);
	job_free(s);
}

static void test_failures_become_errors(void **state)
{
	(void)state;
	json_object *f = json_object_new_array();
	json_object_array_add(f, frame("summary", summary(NULL)));
	expect_error(f, "sent no result frame");

	f = json_object_new_array();
	json_object_array_add(f, frame("workload", workload_payload(0, false)));
	expect_error(f, "no summary frame");

	f = json_object_new_array();
	json_object_array_add(f, frame("workload", workload_payload(0, true)));
	json_object_array_add(f, frame("summary", summary(NULL)));
	expect_error(f, "timed out");

	f = json_object_new_array();
	json_object_array_add(f, frame("workload", workload_payload(3, false)));
	json_object_array_add(f, frame("summary", summary(NULL)));
	expect_error(f, "exited with status 3");

	f = json_object_new_array();
	json_object_array_add(f, frame("workload", workload_payload(0, false)));
	json_object_array_add(f, frame("summary", summary("feature 'RT_FOO' is not known")));
	expect_error(f, "RT_FOO");

	/* killed by a signal with exit code 0: still a failure */
	json_object *killed = workload_payload(0, false);
	json_object_object_add(killed, "signal", json_object_new_int(15));
	f = json_object_new_array();
	json_object_array_add(f, frame("workload", killed));
	json_object_array_add(f, frame("summary", summary(NULL)));
	expect_error(f, "was killed by signal 15");

	json_object *garbage = workload_payload(0, false);
	json_object_object_add(garbage, "stdout", json_object_new_string("\x01\x02 garbage"));
	json_object_object_add(garbage, "json_file", json_object_new_string("{not json"));
	f = json_object_new_array();
	json_object_array_add(f, frame("workload", garbage));
	json_object_array_add(f, frame("summary", summary(NULL)));
	expect_error(f, "does not parse");
}

/* guest.numa read back: the guest's nodes are recorded (lists re-formatted,
 * memory in MiB, hostile entries left out), and nodes other than the job's
 * make the run an error naming both. */
static void test_numa_read_back(void **state)
{
	(void)state;
	for (int pass = 0; pass < 3; pass++) {
		struct job *s = spec();
		s->guest.n_numa = 2;
		s->guest.numa[0].cpus = 1;
		s->guest.numa[1].cpus = 2;
		json_object *sum = summary(NULL);
		const char *numa =
		    pass == 0	? "[{\"node\":0,\"cpus\":\"0\",\"memory_kb\":262144},"
				  "{\"node\":1,\"cpus\":\"1\\n\",\"memory_kb\":1},"
				  "{\"node\":99,\"cpus\":\"0\"},{\"node\":2,\"cpus\":\"<x>\"}]"
		    : pass == 1 ? "[{\"node\":0,\"cpus\":\"0-1\",\"memory_kb\":524288}]"
				: "null";
		char text[512];
		snprintf(text, sizeof(text),
			 "{\"cpus\":2,\"sockets\":2,\"cores\":1,\"threads\":1,"
			 "\"numa\":%s}",
			 numa);
		json_object_object_add(sum, "topology", json_tokener_parse(text));
		json_object *run = new_run(), *frames = json_object_new_array();
		json_object_array_add(frames, frame("workload", workload_payload(0, false)));
		json_object_array_add(frames, frame("summary", sum));
		run_record_fill(run, s, frames);
		json_object *rec = get(get(run, "topology"), "numa");
		const char *status = json_object_get_string(get(run, "status"));
		if (pass == 0) {
			assert_string_equal(status, "ok");
			assert_string_equal(
			    json_object_to_json_string_ext(rec, JSON_C_TO_STRING_PLAIN),
			    "[{\"node\":0,\"cpus\":\"0\",\"memory_mb\":256},"
			    "{\"node\":1,\"cpus\":\"1\",\"memory_mb\":0}]");
		} else {
			assert_string_equal(status, "error");
			const char *want = pass == 1
					       ? "the guest saw 1 NUMA node(s) (0-1), not the "
						 "job's guest.numa 2 (0 | 1)"
					       : "the guest saw 0 NUMA node(s) (none)";
			const char *reason = json_object_get_string(get(run, "reason"));
			if (!strstr(reason, want))
				fail_msg("reason '%s' lacks '%s'", reason, want);
		}
		json_object_put(run);
		json_object_put(frames);
		job_free(s);
	}
}

/* pi_stress's watchdog: the run fails, and the reason says deadlock. */
static void test_pi_stress_deadlock_reason(void **state)
{
	(void)state;
	struct job *s =
	    job_fixture("{\"name\":\"t\",\"baseline\":\"a\",\"kernels\":" JOB_FIXTURE_KERNELS ","
			"\"variants\":{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\"}},"
			"\"workloads\":[{\"name\":\"pi\",\"tool\":\"pi_stress\","
			"\"args\":[\"-D\",\"5\"]}]}");
	assert_non_null(s);
	json_object *p = json_object_new_object();
	json_object_object_add(p, "index", json_object_new_int(0));
	json_object_object_add(p, "exit_code", json_object_new_int(0));
	json_object_object_add(p, "signal", json_object_new_int(15));
	json_object_object_add(p, "stdout", json_object_new_string("Starting PI Stress Test\n"));
	json_object_object_add(
	    p, "stderr",
	    json_object_new_string("ERROR: WATCHDOG triggered: group 0 is deadlocked!\n"));
	json_object *frames = json_object_new_array(), *run = new_run();
	json_object_array_add(frames, frame("workload", p));
	json_object_array_add(frames, frame("summary", summary(NULL)));
	run_record_fill(run, s, frames);
	assert_string_equal(json_object_get_string(get(run, "status")), "error");
	const char *reason = json_object_get_string(get(run, "reason"));
	if (!strstr(reason, "was killed by signal 15: pi_stress found a deadlock") ||
	    !strstr(reason, "group 0"))
		fail_msg("reason '%s'", reason);
	json_object *w = json_object_array_get_idx(get(run, "workloads"), 0);
	assert_string_equal(json_object_get_string(get(w, "status")), "failed");
	json_object_put(run);
	json_object_put(frames);
	job_free(s);
}

/* A load (docs/workloads.md "Loads") under its CPU floor makes the run an
 * error naming it; one above it gets its throughput and load.* metrics. */
static void test_load_floor(void **state)
{
	(void)state;
	struct job *s =
	    job_fixture("{\"name\":\"t\",\"baseline\":\"a\",\"kernels\":" JOB_FIXTURE_KERNELS ","
			"\"variants\":{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\"}},"
			"\"workloads\":[{\"name\":\"burn\",\"tool\":\"burn\",\"load\":true},"
			"{\"name\":\"rtm\",\"tool\":\"rt-migrate-test\","
			"\"args\":[\"-p\",\"60\",\"-l\",\"20\",\"3\"]}]}");
	assert_non_null(s);
	for (int pass = 0; pass < 2; pass++) {
		/* 2 CPUs for 4 s: 0.4 CPU s is 5 %, 6 CPU s 75 % (floor 50 %) */
		char text[512];
		snprintf(text, sizeof(text),
			 "{\"index\":0,\"exit_code\":0,\"signal\":0,\"timed_out\":false,"
			 "\"stdout\":\"\",\"error\":null,\"load\":{\"starts\":1,\"completed\":1,"
			 "\"failures\":0,\"cpu_us\":%d,\"window_ms\":4000,\"cpus\":2,"
			 "\"outputs\":[\"{\\\"metrics\\\":{\\\"ops_per_s\\\":500}}\\n\"]}}",
			 pass ? 6000000 : 400000);
		json_object *p = json_tokener_parse(text);
		assert_non_null(p);
		json_object *rtm = workload_payload(0, false);
		json_object_object_add(rtm, "index", json_object_new_int(1));
		json_object *frames = json_object_new_array(), *run = new_run();
		json_object_array_add(frames, frame("workload", rtm));
		json_object_array_add(frames, frame("workload", p));
		json_object_array_add(frames, frame("summary", summary(NULL)));
		run_record_fill(run, s, frames);
		json_object *w = json_object_array_get_idx(get(run, "workloads"), 0);
		if (pass == 0) {
			assert_string_equal(json_object_get_string(get(run, "status")), "error");
			const char *reason = json_object_get_string(get(run, "reason"));
			if (!strstr(reason,
				    "load 'burn' did not load: it used 5 % of its 2 CPU(s)"))
				fail_msg("reason '%s'", reason);
			assert_string_equal(json_object_get_string(get(w, "status")), "error");
		} else {
			assert_string_equal(json_object_get_string(get(run, "status")), "ok");
			json_object *m = get(w, "metrics");
			assert_true(json_object_get_double(get(m, "ops_per_s")) == 500);
			assert_true(json_object_get_double(get(m, "load.cpu_fraction")) == 0.75);
		}
		json_object_put(run);
		json_object_put(frames);
	}
	job_free(s);
}

/* "pinning" (docs/guests.md "Pinning"): the choice and what libvirt applied,
 * or the reason; a pinned run whose applied lists differ becomes an error,
 * one libvirt could not read back stays ok. */
static void test_pinning_record(void **state)
{
	(void)state;
	struct guest_pinning pin = {.pinned = true, .n_vcpus = 2, .vcpu_cpu = {3, 2}};
	snprintf(pin.emulator, sizeof(pin.emulator), "0-1");
	json_object *run = json_tokener_parse("{\"status\":\"ok\"}");
	json_object *applied = json_tokener_parse("[\"3\",\"2\"]");
	run_record_set_pinning(run, &pin, applied);
	assert_string_equal(json_object_to_json_string_ext(json_object_object_get(run, "pinning"),
							   JSON_C_TO_STRING_PLAIN),
			    "{\"pinned\":true,\"vcpus\":[3,2],\"emulator\":\"0-1\",\"applied\":"
			    "[\"3\",\"2\"]}");
	assert_string_equal(json_object_get_string(json_object_object_get(run, "status")), "ok");
	json_object_put(run);

	run = json_tokener_parse("{\"status\":\"ok\"}");
	run_record_set_pinning(run, &pin, NULL);
	assert_string_equal(json_object_get_string(json_object_object_get(run, "status")), "ok");
	json_object_put(run);

	json_object_put(applied);
	applied = json_tokener_parse("[\"3\",\"0-3\"]");
	run = json_tokener_parse("{\"status\":\"ok\"}");
	run_record_set_pinning(run, &pin, applied);
	assert_string_equal(json_object_get_string(json_object_object_get(run, "status")), "error");
	assert_non_null(strstr(json_object_get_string(json_object_object_get(run, "reason")),
			       "pinning.applied"));
	json_object_put(run);
	json_object_put(applied);

	struct guest_pinning off = {.n_vcpus = 2};
	snprintf(off.reason, sizeof(off.reason), "guest.pinning is off");
	run = json_tokener_parse("{\"status\":\"ok\"}");
	run_record_set_pinning(run, &off, NULL);
	assert_string_equal(json_object_to_json_string_ext(json_object_object_get(run, "pinning"),
							   JSON_C_TO_STRING_PLAIN),
			    "{\"pinned\":false,\"reason\":\"guest.pinning is off\"}");
	json_object_put(run);
}

static void test_first_failure_is_kept(void **state)
{
	(void)state;
	json_object *run = new_run();
	run_record_fail(run, "hung", "deadline passed");
	run_record_fail(run, "error", "later");
	assert_string_equal(json_object_get_string(get(run, "status")), "hung");
	assert_string_equal(json_object_get_string(get(run, "reason")), "deadline passed");
	json_object_put(run);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ok_run_gets_metrics),
	    cmocka_unit_test(test_taskstats_error_recorded),
	    cmocka_unit_test(test_failures_become_errors),
	    cmocka_unit_test(test_numa_read_back),
	    cmocka_unit_test(test_pinning_record),
	    cmocka_unit_test(test_pi_stress_deadlock_reason),
	    cmocka_unit_test(test_load_floor),
	    cmocka_unit_test(test_first_failure_is_kept),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
