/* Suites, default gates and the explicit opt-out (job/suite.h, job.c), and
 * CLI kernel sources made absolute. Uses the real job schema. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "job/job.h"
#include "job/job-internal.h"
#include "job/suite.h"
#include "util/fs.h"

#define KERNEL	     "{\"source\":\"debian:linux-source-6.1\",\"patches\":[{\"series\":\"linux-6.1\"}]}"
#define SHORT(extra) "{\"name\":\"ci\",\"base\":" KERNEL ",\"patches\":[]" extra "}"
#define FULL(variants, extra)                                                                      \
	"{\"name\":\"t\",\"kernels\":{\"k\":" KERNEL "},\"variants\":" variants                    \
	",\"baseline\":\"a\"" extra "}"

static json_object *expand_ok(const char *text, enum job_origin origin, const char *base_dir)
{
	json_object *spec = json_tokener_parse(text);
	assert_non_null(spec);
	json_object *out = NULL;
	struct sl_error err = {0};
	if (job_expand_json(spec, origin, base_dir, NULL, &out, &err) < 0)
		fail_msg("%s: %s: %s", text, err.path, err.message);
	json_object_put(spec);
	return out;
}

static void expect_error(const char *text, const char *path, const char *needle)
{
	json_object *spec = json_tokener_parse(text);
	assert_non_null(spec);
	json_object *out = NULL;
	struct sl_error err = {0};
	if (job_expand_json(spec, JOB_ORIGIN_SERVICE, NULL, NULL, &out, &err) == 0)
		fail_msg("expected an error at %s for %s", path, text);
	if (strcmp(err.path, path) != 0)
		fail_msg("error path '%s' (%s), expected '%s'", err.path, err.message, path);
	if (needle && !strstr(err.message, needle))
		fail_msg("message '%s' lacks '%s'", err.message, needle);
	json_object_put(spec);
}

/* "tool/metric[*]" of every gate, '*' marking a default one, joined by ' '. */
static void gate_list(json_object *expanded, char *buf, size_t sz)
{
	json_object *gates = json_member_array(expanded, "gates");
	buf[0] = '\0';
	for (size_t i = 0; gates && i < json_object_array_length(gates); i++) {
		json_object *g = json_object_array_get_idx(gates, i);
		json_object *d = json_member(g, "default");
		size_t l = strlen(buf);
		snprintf(buf + l, sz - l, "%s%s/%s%s", i ? " " : "",
			 json_member_string(g, "workload"), json_member_string(g, "metric"),
			 d && json_object_get_boolean(d) ? "*" : "");
	}
}

static const char *workload_names(json_object *expanded, char *buf, size_t sz)
{
	json_object *wls = json_member_array(expanded, "workloads");
	buf[0] = '\0';
	for (size_t i = 0; wls && i < json_object_array_length(wls); i++) {
		size_t l = strlen(buf);
		snprintf(buf + l, sz - l, "%s%s", i ? " " : "",
			 json_member_string(json_object_array_get_idx(wls, i), "name"));
	}
	return buf;
}

/* The debug preset (docs/kernel-bugs.md "The debug variant"): on a
 * kernel, on a variant (a debug copy of a kernel other variants boot
 * normally), through the shorthand's base, and the debug suite. */
#define LONG60 "k12345678901234567890123456789012345678901234567890123456789"
static void test_debug_variants(void **state)
{
	(void)state;
	/* A variant asks: its kernel, booted normally by the baseline, gets a
	 * debug copy "k-lockdep" (once, for two such variants). */
	json_object *j = expand_ok(FULL("{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\","
					"\"debug\":\"lockdep\"},\"c\":{\"kernel\":\"k\","
					"\"debug\":\"lockdep\",\"features\":[\"NO_RT_PUSH\"]}}",
					",\"suite\":\"rt\""),
				   JOB_ORIGIN_SERVICE, NULL);
	json_object *kernels = json_member(j, "kernels");
	assert_int_equal(json_object_object_length(kernels), 2);
	assert_null(json_member_string(json_member(kernels, "k"), "debug"));
	json_object *dk = json_member(kernels, "k-lockdep");
	assert_non_null(dk);
	assert_string_equal(json_member_string(dk, "debug"), "lockdep");
	assert_string_equal(json_member_string(json_member(dk, "config"), "builtin"), "linux-6.1");
	json_object *vs = json_member(j, "variants");
	assert_string_equal(json_member_string(json_member(vs, "a"), "kernel"), "k");
	assert_null(json_member_string(json_member(vs, "a"), "debug"));
	assert_string_equal(json_member_string(json_member(vs, "b"), "kernel"), "k-lockdep");
	assert_string_equal(json_member_string(json_member(vs, "c"), "kernel"), "k-lockdep");
	char buf[512];
	gate_list(j, buf, sizeof(buf));
	assert_string_equal(buf, "rt-migrate-test/inversions*"); /* --debug keeps the gates */
	struct job *job = NULL;
	struct sl_error err = {0};
	assert_int_equal(job_from_expanded(j, &job, &err), 0);
	assert_null(job_find_kernel(job, "k")->debug);
	assert_string_equal(job_find_kernel(job, "k-lockdep")->debug, "lockdep");
	assert_string_equal(job_find_variant(job, "b")->kernel->name, "k-lockdep");
	job_free(job);
	json_object_put(j);

	/* Every variant of a kernel asks: the kernel itself is the debug one. */
	j = expand_ok(FULL("{\"a\":{\"kernel\":\"k\",\"debug\":\"lockdep\"},\"b\":{"
			   "\"kernel\":\"k\",\"debug\":\"lockdep\"}}",
			   ",\"suite\":\"rt\""),
		      JOB_ORIGIN_SERVICE, NULL);
	assert_int_equal(json_object_object_length(json_member(j, "kernels")), 1);
	assert_string_equal(
	    json_member_string(json_member(json_member(j, "kernels"), "k"), "debug"), "lockdep");
	json_object_put(j);

	/* The shorthand's base (schedlab test --debug): both kernels, every variant. */
	j = expand_ok("{\"name\":\"ci\",\"base\":{\"source\":\"debian:linux-source-6.1\","
		      "\"debug\":\"lockdep\"},\"patches\":[],\"suite\":\"latency\"}",
		      JOB_ORIGIN_SERVICE, NULL);
	kernels = json_member(j, "kernels");
	assert_string_equal(json_member_string(json_member(kernels, "base"), "debug"), "lockdep");
	assert_string_equal(json_member_string(json_member(kernels, "patched"), "debug"),
			    "lockdep");
	assert_string_equal(
	    json_member_string(json_member(json_member(j, "variants"), "patched"), "debug"),
	    "lockdep");
	json_object_put(j);

	/* The debug suite: all workloads, debug kernels, no metric gates. */
	j = expand_ok(SHORT(",\"suite\":\"debug\""), JOB_ORIGIN_SERVICE, NULL);
	kernels = json_member(j, "kernels");
	assert_int_equal(json_object_object_length(kernels), 2);
	assert_string_equal(json_member_string(json_member(kernels, "base"), "debug"), "lockdep");
	assert_string_equal(json_member_string(json_member(kernels, "patched"), "debug"),
			    "lockdep");
	assert_int_equal(json_object_array_length(json_member(j, "workloads")), 4);
	assert_int_equal(json_object_array_length(json_member(j, "gates")), 0);
	/* no gates because the suite adds none, not an opt-out; and the stored
	 * form expands to itself (before, it came back opted out: fuzz_job) */
	assert_false(json_object_get_boolean(json_member(j, "gates_opt_out")));
	assert_non_null(json_member(j, "gates_opt_out"));
	assert_non_null(
	    json_member(json_member(json_member(j, "variants"), "baseline"), "uid_shares"));
	json_object *again = NULL;
	assert_int_equal(job_expand_json(j, JOB_ORIGIN_SERVICE, NULL, NULL, &again, &err), 0);
	assert_true(json_object_equal(j, again));
	assert_int_equal(job_from_expanded(again, &job, &err), 0);
	assert_false(job->gates_opt_out);
	job_free(job);
	json_object_put(again);
	json_object_put(j);
	assert_string_equal(suite_debug_preset("debug"), "lockdep");
	assert_null(suite_debug_preset("all"));
	assert_true(suite_debug_known("lockdep"));
	assert_false(suite_debug_known("kasan"));

	/* Refused: an unknown preset; a debug copy whose name is taken. */
	expect_error(FULL("{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\","
			  "\"debug\":\"kasan\"}}",
			  ",\"suite\":\"rt\""),
		     "$.variants.b.debug", NULL);
	expect_error("{\"name\":\"t\",\"kernels\":{\"k\":" KERNEL ",\"k-lockdep\":" KERNEL
		     "},\"variants\":{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\","
		     "\"debug\":\"lockdep\"}},\"baseline\":\"a\",\"suite\":\"rt\"}",
		     "$.variants.b.debug", "uses for another kernel");
	/* a 60-character kernel name: "<name>-lockdep" would pass JOB_NAME_MAX */
	expect_error("{\"name\":\"t\",\"kernels\":{\"" LONG60 "\":" KERNEL
		     "},\"variants\":{\"a\":{\"kernel\":\"" LONG60 "\"},\"b\":{\"kernel\":\"" LONG60
		     "\",\"debug\":\"lockdep\"}},\"baseline\":\"a\",\"suite\":\"rt\"}",
		     "$.variants.b.debug", "longer than 64 characters");
}

static void test_suites_expand(void **state)
{
	(void)state;
	static const struct {
		const char *suite, *workloads, *gates;
		bool shares;
	} want[] = {
	    {"rt", "rt-migrate-test", "rt-migrate-test/inversions*", false},
	    {"latency", "cyclictest", "cyclictest/latency_us.p99* cyclictest/latency_us.avg*",
	     false},
	    {"fair", "share slice", "share/share_error* slice/slice_overrun_us.mean*", true},
	    {"under-load", "hackbench-load burn-load cyclictest-loaded rt-migrate-test-loaded",
	     "hackbench-load/loops_per_s* burn-load/ops_per_s* cyclictest-loaded/latency_us.p99* "
	     "cyclictest-loaded/latency_us.avg*",
	     false},
	    {"all",
	     "rt-migrate-test cyclictest share slice hackbench-load burn-load cyclictest-loaded "
	     "rt-migrate-test-loaded",
	     "rt-migrate-test/inversions* cyclictest/latency_us.p99* cyclictest/latency_us.avg* "
	     "share/share_error* slice/slice_overrun_us.mean* hackbench-load/loops_per_s* "
	     "burn-load/ops_per_s* cyclictest-loaded/latency_us.p99* "
	     "cyclictest-loaded/latency_us.avg*",
	     true},
	};
	for (size_t i = 0; i < ELEMENTSOF(want); i++) {
		char text[512], names[512], gates[1024];
		/* The CI shorthand, as `schedlab test --suite S` writes it. */
		snprintf(text, sizeof(text), SHORT(",\"suite\":\"%s\""), want[i].suite);
		json_object *out = expand_ok(text, JOB_ORIGIN_SERVICE, NULL);
		assert_string_equal(json_member_string(out, "suite"), want[i].suite);
		assert_string_equal(workload_names(out, names, sizeof(names)), want[i].workloads);
		gate_list(out, gates, sizeof(gates));
		assert_string_equal(gates, want[i].gates);
		assert_null(json_member(out, "gates_opt_out"));
		/* A suite with no repeat runs enough to decide a gate. */
		assert_int_equal(json_object_get_int(json_member(out, "repeat")),
				 SUITE_DEFAULT_REPEAT);
		/* Both shorthand variants get the fair suite's unequal shares. */
		json_object *variants = json_member_object(out, "variants");
		json_object_object_foreach(variants, vname, v)
		{
			json_object *sh = json_member_object(v, "uid_shares");
			if (!want[i].shares) {
				assert_null(sh);
				continue;
			}
			if (!sh)
				fail_msg("suite %s: variant %s has no uid_shares", want[i].suite,
					 vname);
			assert_int_equal(json_member_int(sh, "1000", 0), 2048);
			assert_int_equal(json_member_int(sh, "1001", 0), 1024);
		}
		/* The typed job reads the same, and the expanded form expands to
		 * itself (a stored job can be run again). */
		_cleanup_job_ struct job *job = NULL;
		struct sl_error err = {0};
		assert_int_equal(job_from_expanded(out, &job, &err), 0);
		assert_string_equal(job->suite, want[i].suite);
		assert_true(job->n_gates >= 1);
		for (size_t g = 0; g < job->n_gates; g++) {
			const struct job_gate *gate = &job->gates[g];
			assert_true(gate->is_default);
			/* Every default gate takes the metric's default threshold
			 * (compare.c), latency_us.avg's 10 % included: until
			 * December 2026 it carried its own 50 %, which no host
			 * calibration could then narrow or cap. */
			assert_false(gate->has_threshold);
		}
		json_object *again = NULL;
		if (job_expand_json(out, JOB_ORIGIN_SERVICE, NULL, NULL, &again, &err) < 0)
			fail_msg("re-expanding suite %s: %s: %s", want[i].suite, err.path,
				 err.message);
		assert_true(json_object_equal(out, again));
		json_object_put(again);
		json_object_put(out);
	}
}

static void test_suite_settings_yield_to_the_job(void **state)
{
	(void)state;
	/* A variant's own uid_shares stay; only the others get the suite's. */
	json_object *out = expand_ok(
	    FULL("{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\",\"uid_shares\":{\"1000\":"
		 "1024}}}",
		 ",\"suite\":\"fair\",\"repeat\":2"),
	    JOB_ORIGIN_SERVICE, NULL);
	json_object *v = json_member_object(out, "variants");
	assert_int_equal(
	    json_member_int(json_member_object(json_member_object(v, "a"), "uid_shares"), "1000",
			    0),
	    2048);
	json_object *bs = json_member_object(json_member_object(v, "b"), "uid_shares");
	assert_int_equal(json_object_object_length(bs), 1);
	assert_int_equal(json_member_int(bs, "1000", 0), 1024);
	assert_int_equal(json_object_get_int(json_member(out, "repeat")), 2);
	json_object_put(out);

	/* The job's workloads replace the suite's; the defaults follow them. */
	out = expand_ok(SHORT(",\"suite\":\"all\",\"workloads\":[{\"tool\":\"cyclictest\","
			      "\"args\":[\"-l100\"]}]"),
			JOB_ORIGIN_SERVICE, NULL);
	char names[128], gates[256];
	assert_string_equal(workload_names(out, names, sizeof(names)), "cyclictest");
	/* No histogram, no p99: a default gate on a metric that cannot exist
	 * would leave every job inconclusive. */
	gate_list(out, gates, sizeof(gates));
	assert_string_equal(gates, "cyclictest/latency_us.avg*");
	json_object_put(out);

	for (const char *const *a =
		 (const char *const[]){"\"-h\",\"400\"", "\"-h400\"", "\"--histogram=400\"",
				       "\"-H\",\"9\"", NULL};
	     *a; a++) {
		char text[512];
		snprintf(text, sizeof(text),
			 SHORT(",\"workloads\":[{\"tool\":\"cyclictest\",\"args\":[%s]}]"), *a);
		out = expand_ok(text, JOB_ORIGIN_SERVICE, NULL);
		gate_list(out, gates, sizeof(gates));
		assert_string_equal(gates, "cyclictest/latency_us.p99* cyclictest/latency_us.avg*");
		json_object_put(out);
	}
}

/* The tools beyond the four suites': hackbench, cyclicdeadline and wakeup
 * gate by default; pi_stress, pip_stress and stress-ng do not. Their arguments are checked
 * while expanding (service/job/workload_args.c). */
static void test_new_tools_default_gates(void **state)
{
	(void)state;
	json_object *out = expand_ok(
	    SHORT(
		",\"workloads\":[{\"tool\":\"hackbench\",\"args\":[\"-p\"]},"
		"{\"tool\":\"pi_stress\",\"args\":[\"-D\",\"2\"]},{\"tool\":\"pip_stress\"},"
		"{\"tool\":\"cyclicdeadline\",\"args\":[\"-D\",\"2\"]},{\"tool\":"
		"\"stress-ng\",\"args\":[\"--yield\",\"1\",\"-t\",\"2\",\"--metrics\"]},{\"tool\":"
		"\"wakeup\"}]"),
	    JOB_ORIGIN_SERVICE, NULL);
	char gates[512];
	gate_list(out, gates, sizeof(gates));
	assert_string_equal(gates, "hackbench/time_s* cyclicdeadline/latency_us.avg* "
				   "wakeup/wakeup_latency_us.p50* wakeup/requests_per_s*");
	json_object_put(out);
	expect_error(SHORT(",\"workloads\":[{\"tool\":\"slice\"},{\"tool\":\"hackbench\","
			   "\"args\":[\"-g\",\"2\"]}]"),
		     "$.workloads[1].args", "pipes");
	/* perf-bench-sched gates on time_s; its benchmark is args[0] */
	out = expand_ok(SHORT(",\"workloads\":[{\"tool\":\"perf-bench-sched\",\"args\":["
			      "\"pipe\",\"-l\",\"10\"]}]"),
			JOB_ORIGIN_SERVICE, NULL);
	gate_list(out, gates, sizeof(gates));
	assert_string_equal(gates, "perf-bench-sched/time_s*");
	json_object_put(out);
	expect_error(SHORT(",\"workloads\":[{\"tool\":\"perf-bench-sched\",\"args\":["
			   "\"numa\"]}]"),
		     "$.workloads[0].args[0]", "messaging, pipe");
}

/* Loads (job/load.h): their default gate is their throughput, they get
 * the default min_cpu (half an even split), and what cannot be a load or
 * leaves nothing to measure is refused naming the field. */
static void test_loads_expand(void **state)
{
	(void)state;
	json_object *out = expand_ok(
	    SHORT(",\"workloads\":[{\"tool\":\"cyclictest\",\"args\":[\"-h\",\"100\"]},"
		  "{\"name\":\"hb\",\"tool\":\"hackbench\",\"args\":[\"-p\"],\"load\":true},"
		  "{\"name\":\"b\",\"tool\":\"burn\",\"load\":true,\"cpus\":[1]}]"),
	    JOB_ORIGIN_SERVICE, NULL);
	char gates[512];
	gate_list(out, gates, sizeof(gates));
	assert_string_equal(gates, "cyclictest/latency_us.p99* cyclictest/latency_us.avg* "
				   "hb/loops_per_s* b/ops_per_s*");
	json_object *wls = json_member_array(out, "workloads");
	assert_null(json_member(json_object_array_get_idx(wls, 0), "min_cpu"));
	assert_true(json_object_get_double(
			json_member(json_object_array_get_idx(wls, 1), "min_cpu")) == 0.25);
	/* the expanded form expands to itself */
	json_object *again = NULL;
	struct sl_error err = {0};
	assert_int_equal(job_expand_json(out, JOB_ORIGIN_SERVICE, NULL, NULL, &again, &err), 0);
	assert_true(json_object_equal(out, again));
	json_object_put(again);
	json_object_put(out);

	expect_error(SHORT(",\"workloads\":[{\"tool\":\"slice\"},{\"tool\":\"cyclictest\","
			   "\"load\":true}]"),
		     "$.workloads[1].load", "cannot be a load");
	expect_error(SHORT(",\"workloads\":[{\"tool\":\"burn\",\"load\":true}]"), "$.workloads",
		     "at least one measured");
	expect_error(SHORT(",\"workloads\":[{\"tool\":\"burn\"}]"), "$.workloads[0].args",
		     "only a load is stopped");
	expect_error(SHORT(",\"workloads\":[{\"tool\":\"slice\",\"min_cpu\":0.5}]"),
		     "$.workloads[0].min_cpu", "not a load");
	expect_error(SHORT(",\"workloads\":[{\"tool\":\"slice\"},{\"tool\":\"burn\","
			   "\"load\":true,\"args\":[\"--cpus\",\"1\"]}]"),
		     "$.workloads[1].args[0]", NULL);
}

static void test_gates_explicit_and_opt_out(void **state)
{
	(void)state;
	/* Named gates are the job's, none marked default. */
	json_object *out =
	    expand_ok(SHORT(",\"suite\":\"rt\",\"gates\":[{\"workload\":\"rt-migrate-test\","
			    "\"metric\":\"inversion_max_us\",\"threshold\":5000}]"),
		      JOB_ORIGIN_SERVICE, NULL);
	char gates[256];
	gate_list(out, gates, sizeof(gates));
	assert_string_equal(gates, "rt-migrate-test/inversion_max_us");
	assert_null(json_member(out, "gates_opt_out"));
	json_object_put(out);

	/* "gates": [] opts out, and the expanded job says so. */
	out = expand_ok(SHORT(",\"suite\":\"rt\",\"gates\":[]"), JOB_ORIGIN_SERVICE, NULL);
	assert_int_equal(json_object_array_length(json_member_array(out, "gates")), 0);
	assert_true(json_object_get_boolean(json_member(out, "gates_opt_out")));
	_cleanup_job_ struct job *job = NULL;
	struct sl_error err = {0};
	assert_int_equal(job_from_expanded(out, &job, &err), 0);
	assert_int_equal(job->n_gates, 0);
	assert_true(job->gates_opt_out);
	/* ... and stays opted out when expanded again. */
	json_object *again = NULL;
	assert_int_equal(job_expand_json(out, JOB_ORIGIN_SERVICE, NULL, NULL, &again, &err), 0);
	assert_true(json_object_equal(out, again));
	json_object_put(again);
	json_object_put(out);

	expect_error(SHORT(",\"suite\":\"rt\",\"gates_opt_out\":true,\"gates\":[{\"workload\":"
			   "\"rt-migrate-test\",\"metric\":\"inversions\"}]"),
		     "$.gates_opt_out", "drop one or the other");
	expect_error(SHORT(""), "$.workloads", "required");
	expect_error(SHORT(",\"suite\":\"everything\""), "$.suite", NULL);
	expect_error(SHORT(",\"suite\":\"rt\",\"gates\":[{\"workload\":\"cyclictest\","
			   "\"metric\":\"latency_us.avg\"}]"),
		     "$.gates[0].workload", "not run");
}

/* A job stored before default gates existed: "gates": [] meant "none
 * given". It still loads, with no gates and not marked as opted out. */
static void test_old_expanded_job_loads(void **state)
{
	(void)state;
	json_object *old = json_tokener_parse(
	    "{\"name\":\"x\",\"kernels\":{\"k\":{\"source\":\"debian:linux-source-6.1\","
	    "\"patches\":[],\"config\":{\"builtin\":\"linux-6.1\"}}},\"guest\":{\"vcpus\":2,"
	    "\"memory_mb\":512},\"variants\":{\"a\":{\"kernel\":\"k\",\"features\":[]},\"b\":"
	    "{\"kernel\":\"k\",\"features\":[]}},\"baseline\":\"a\",\"workloads\":[{\"name\":"
	    "\"rtm\",\"tool\":\"rt-migrate-test\",\"args\":[],\"timeout_s\":60,\"uid\":0}],"
	    "\"repeat\":3,\"gates\":[],\"accelerator\":\"auto\"}");
	_cleanup_job_ struct job *job = NULL;
	struct sl_error err = {0};
	if (job_from_expanded(old, &job, &err) < 0)
		fail_msg("%s: %s", err.path, err.message);
	assert_int_equal(job->n_gates, 0);
	assert_false(job->gates_opt_out);
	assert_null(job->suite);
	json_object_put(old);

	/* Garbage in the new members is an error, not a guess. */
	const char *bad[] = {"\"gates_opt_out\":\"yes\"", "\"suite\":7"};
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		char text[1024];
		snprintf(text, sizeof(text),
			 "{\"name\":\"x\",\"kernels\":{\"k\":{\"source\":\"s\",\"patches\":[],"
			 "\"config\":{\"builtin\":\"b\"}}},\"guest\":{\"vcpus\":1,\"memory_mb\":"
			 "128},\"variants\":{\"a\":{\"kernel\":\"k\"}},\"baseline\":\"a\","
			 "\"workloads\":[],\"repeat\":1,\"gates\":[],%s}",
			 bad[i]);
		json_object *o = json_tokener_parse(text);
		assert_non_null(o);
		struct job *j = NULL;
		if (job_from_expanded(o, &j, &err) == 0)
			fail_msg("accepted %s", bad[i]);
		json_object_put(o);
	}
}

/* A CLI job's tarball: and git: sources are relative to the job file, and
 * absolute in the expanded job; the service keeps refusing them. */
static void test_cli_sources_made_absolute(void **state)
{
	(void)state;
	static const struct {
		const char *src, *base_dir, *want; /* want: NULL = base_dir + rest */
	} cases[] = {
	    {"tarball:linux.tar.xz", "/srv/jobs", "tarball:/srv/jobs/linux.tar.xz"},
	    {"tarball:/abs/linux.tar.xz", "/srv/jobs", "tarball:/abs/linux.tar.xz"},
	    {"git:../tree@v6.1", "/srv/jobs", "git:/srv/jobs/../tree@v6.1"},
	    {"git:tree@a@b", "/srv/jobs", "git:/srv/jobs/tree@a@b"},
	    {"git:/abs/tree@HEAD", "/srv/jobs", "git:/abs/tree@HEAD"},
	    {"debian:linux-source-6.1", "/srv/jobs", "debian:linux-source-6.1"},
	};
	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		char text[512];
		snprintf(text, sizeof(text),
			 "{\"name\":\"ci\",\"base\":{\"source\":\"%s\"},\"patches\":[],"
			 "\"suite\":\"rt\"}",
			 cases[i].src);
		json_object *out = expand_ok(text, JOB_ORIGIN_CLI, cases[i].base_dir);
		json_object *k = json_member_object(out, "kernels");
		assert_string_equal(json_member_string(json_member_object(k, "base"), "source"),
				    cases[i].want);
		assert_string_equal(json_member_string(json_member_object(k, "patched"), "source"),
				    cases[i].want);
		json_object_put(out);
	}
	/* A relative base_dir is taken from the working directory. */
	_cleanup_free_ char *cwd = getcwd(NULL, 0);
	assert_non_null(cwd);
	json_object *out = expand_ok(
	    "{\"name\":\"ci\",\"base\":{\"source\":\"tarball:l.tar\"},\"patches\":[],\"suite\":"
	    "\"rt\"}",
	    JOB_ORIGIN_CLI, "jobs");
	char want[4096];
	snprintf(want, sizeof(want), "tarball:%s/jobs/l.tar", cwd);
	assert_string_equal(
	    json_member_string(json_member_object(json_member_object(out, "kernels"), "base"),
			       "source"),
	    want);
	json_object_put(out);
	expect_error("{\"name\":\"ci\",\"base\":{\"source\":\"tarball:l.tar\"},\"patches\":[],"
		     "\"suite\":\"rt\"}",
		     "$.kernels.base.source", "Debian");
}

/* The job `schedlab test PATCH` makes with no options (the all suite, 5 to
 * 20 rounds) fits the default limits: its worst-case budget is under
 * max_guest_seconds. A suite that grows past it would make the default
 * command refuse itself. */
static void test_default_test_job_fits(void **state)
{
	(void)state;
	json_object *out = expand_ok(SHORT(",\"suite\":\"all\",\"repeat\":{\"min\":5,\"max\":20}"),
				     JOB_ORIGIN_CLI, NULL);
	long long budget = job_budget_s(out);
	assert_true(budget > 0);
	assert_true(budget <= job_default_limits()->max_guest_seconds);
	json_object_put(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_suites_expand),
	    cmocka_unit_test(test_debug_variants),
	    cmocka_unit_test(test_suite_settings_yield_to_the_job),
	    cmocka_unit_test(test_new_tools_default_gates),
	    cmocka_unit_test(test_loads_expand),
	    cmocka_unit_test(test_gates_explicit_and_opt_out),
	    cmocka_unit_test(test_old_expanded_job_loads),
	    cmocka_unit_test(test_cli_sources_made_absolute),
	    cmocka_unit_test(test_default_test_job_fits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
