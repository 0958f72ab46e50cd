/* The summary table: the threshold of every comparison and why a change
 * larger than it is "unchanged"; kernels that did not build (contract A in
 * docs/contracts.md), not-built variants and fail-fast skips; which gates
 * the verdict used (the job's, the defaults, or none by opt-out). Results
 * are hand-written to follow the contract exactly. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "report/summary.h"
#include "helpers/result_fixture.h"

static char *summary(const char *text)
{
	_cleanup_json_ json_object *r = json_tokener_parse(text);
	assert_non_null(r);
	result_fixture_complete(r);
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	assert_non_null(f);
	struct sl_error err = {0};
	if (summary_print(f, r, &err) < 0)
		fail_msg("summary_print: %s", err.message);
	fclose(f);
	return out;
}

static void expect(const char *out, const char *needle)
{
	if (!strstr(out, needle))
		fail_msg("summary lacks '%s':\n%s", needle, out);
}

#define CMP(metric, change, lo, hi, thr, p, verdict, gated)                                        \
	"{\"variant\":\"patched\",\"workload\":\"rt-migrate-test\",\"metric\":\"" metric "\","     \
	"\"baseline\":{\"median\":1},\"candidate\":{\"median\":2},\"change\":" change              \
	",\"ci95\":[" lo "," hi "],\"p_value\":" p ",\"alpha\":0.05,\"threshold\":" thr            \
	",\"gated\":" gated ",\"verdict\":\"" verdict "\"}"

static void test_thresholds_and_unchanged(void **state)
{
	(void)state;
	_cleanup_free_ char *out = summary(
	    "{\"job\":{\"name\":\"j\",\"baseline\":\"baseline\",\"gates\":[{\"workload\":"
	    "\"rt-migrate-test\",\"metric\":\"inversions\",\"default\":true}]},"
	    "\"variants\":{\"baseline\":{\"runs\":[]},\"patched\":{\"runs\":[]}},"
	    "\"comparisons\":[" CMP(
		"inversion_max_us", "-24145", "-24864", "-4686", "6036", "0.008", "unchanged",
		"false") "," CMP("start_delay_us.prio61.avg", "-8741", "-9420", "-7333", "2823",
				 "0.1", "unchanged",
				 "false") "," CMP("inversions", "0.5", "0", "1", "1", "1",
						  "unchanged",
						  "true") "," CMP("slice_us.max", "900", "400",
								  "1200", "500", "0.03",
								  "regressed",
								  "false") "],"
									   "\"verdict\":\"pass\","
									   "\"verdict_reasons\":["
									   "\"No gated metric "
									   "regressed.\"]}");
	/* An older result's line: a large change whose interval does not clear the
	 * threshold, now with the threshold and the reason beside it. */
	expect(out, "-24145  [-24864, -4686]  0.008  \u00b16036     unchanged (CI reaches within "
		    "\u00b16036)\n");
	/* Beyond the threshold but the test did not reach alpha. */
	expect(out, "\u00b12823     unchanged (p 0.1 above alpha 0.05)\n");
	/* Small changes and decided ones carry no note. */
	expect(out, "\u00b11        unchanged\n");
	expect(out, "\u00b1500      regressed\n");
	/* Gated first. */
	assert_true(strstr(out, "inversions *") < strstr(out, "inversion_max_us"));
	/* the % change beside the absolute one when the comparison has it */
	_cleanup_free_ char *pct =
	    summary("{\"job\":{\"name\":\"j\",\"baseline\":\"baseline\",\"gates\":[]},"
		    "\"variants\":{\"baseline\":{\"runs\":[]},\"patched\":{\"runs\":[]}},"
		    "\"comparisons\":[{\"variant\":\"patched\",\"workload\":\"cyclictest-loaded\","
		    "\"metric\":\"latency_us.p99.9\",\"baseline\":{\"median\":400},\"candidate\":"
		    "{\"median\":3000},\"change\":2600,\"change_pct\":650,\"ci95\":[2000,3000],"
		    "\"p_value\":0.008,\"threshold\":100,\"gated\":false,\"verdict\":\"changed\"}],"
		    "\"verdict\":\"pass\",\"verdict_reasons\":[]}");
	expect(pct, " 400       3000     2600 (+650.0%)  [2000, 3000]");
	expect(out, "gates: the workloads' defaults (docs/workloads.md): "
		    "rt-migrate-test/inversions\n");
}

static void test_build_failures_and_skips(void **state)
{
	(void)state;
	_cleanup_free_ char *out = summary(
	    "{\"job\":{\"name\":\"ci\",\"baseline\":\"baseline\",\"gates\":[],\"gates_opt_out\":"
	    "true},"
	    "\"kernels\":{\"base\":{\"build\":{\"status\":\"ok\"}},"
	    " \"patched\":{\"build\":{\"status\":\"patch_does_not_apply\",\"message\":\"patch "
	    "0005-my.patch does not apply (hunk #1 FAILED at 1925 in kernel/sched/rt.c)\","
	    "\"patch\":\"0005-my.patch\",\"log_excerpt\":\"l1\\nl2\\nl3\\nl4\\nl5\\nl6\\nl7\\nl8\\n"
	    "l9\\nl10\\nl11\\nl12\\nl13\\nl14\"}},"
	    " \"cfg\":{\"build\":{\"status\":\"config_option_dropped\",\"message\":\"Kconfig "
	    "dropped CONFIG_FOO.\",\"option\":\"CONFIG_FOO\",\"log_excerpt\":\"CONFIG_FOO=y\"}}},"
	    "\"variants\":{\"baseline\":{\"kernel\":\"base\",\"runs\":[{\"key\":\"baseline#0\","
	    "\"status\":\"ok\"}],\"skipped_runs\":4,\"skipped_reason\":\"every candidate failed\"},"
	    " \"patched\":{\"kernel\":\"patched\",\"not_built\":true,\"runs\":[]},"
	    " \"other\":{\"kernel\":\"base\",\"runs\":[{\"key\":\"other#0\",\"status\":\"hung\","
	    "\"reason\":\"no output for 60 s\"}],\"skipped_runs\":2,\"skipped_reason\":\"run "
	    "other#0 hung\"}},"
	    "\"comparisons\":[],\"verdict\":\"fail\",\"verdict_reasons\":[\"variant 'patched': "
	    "kernel 'patched' did not build (patch_does_not_apply): patch 0005-my.patch does not "
	    "apply (hunk #1 FAILED at 1925 in kernel/sched/rt.c)\"]}");
	expect(out,
	       "\nKernels that did not build\n  patched: patch_does_not_apply (patch "
	       "0005-my.patch)\n    patch 0005-my.patch does not apply (hunk #1 FAILED at 1925 "
	       "in kernel/sched/rt.c)\n    | l1\n");
	/* The first lines of the excerpt, and how many more there are. */
	expect(out, "    | l12\n    | ... (2 more line(s) in the result's log_excerpt)\n");
	assert_null(strstr(out, "| l13"));
	expect(out, "  cfg: config_option_dropped (option CONFIG_FOO)\n    Kconfig dropped "
		    "CONFIG_FOO.\n    | CONFIG_FOO=y\n");
	assert_null(strstr(out, "  base: ok"));
	expect(out, "  patched              not built (kernel 'patched': patch_does_not_apply)\n");
	expect(out, "    skipped 4 run(s): every candidate failed\n");
	expect(out, "    other#0: no output for 60 s\n    skipped 2 run(s): run other#0 hung\n");
	expect(out, "  (none: no metric was measured in both the baseline and another variant)\n");
	expect(out, "gates: none: the job opted out (\"gates\": []); only failed runs and new "
		    "kernel bug signatures fail it\n");
	expect(out, "verdict: fail\n  - variant 'patched': kernel 'patched' did not build");
}

static void test_hostile_members(void **state)
{
	(void)state;
	/* In the members the model keeps untyped, wrong types are shown as
	 * missing, never trusted or crashed on. */
	_cleanup_free_ char *out =
	    summary("{\"kernels\":{\"k\":{\"build\":{\"status\":7,\"log_excerpt\":[1]}}},"
		    "\"variants\":{\"v\":{\"not_built\":\"yes\"}},"
		    "\"comparisons\":[{\"variant\":\"v\",\"workload\":\"w\",\"metric\":\"m\","
		    "\"verdict\":\"unchanged\",\"ci95\":[1]}],"
		    "\"job\":{\"gates\":{}}}");
	expect(out, "Kernels that did not build\n  k: 7\n");
	expect(out, "gates: none; only failed runs and new kernel bug signatures fail the job\n");
	/* A typed member of the wrong type is refused, with its path, before
	 * anything is printed. */
	static const char *const bad[] = {
	    "{\"variants\":{\"v\":{\"skipped_runs\":\"x\"}}}",
	    "{\"comparisons\":[{\"variant\":\"v\",\"workload\":\"w\",\"metric\":\"m\","
	    "\"change\":\"big\"}]}",
	};
	static const char *const paths[] = {"variants.v.skipped_runs", "comparisons[0].change"};
	for (size_t i = 0; i < 2; i++) {
		_cleanup_json_ json_object *r = json_tokener_parse(bad[i]);
		assert_non_null(r);
		result_fixture_complete(r);
		char *text = NULL;
		size_t len = 0;
		struct sl_error err = {0};
		FILE *f = open_memstream(&text, &len);
		assert_non_null(f);
		assert_int_equal(summary_print(f, r, &err), -EINVAL);
		fclose(f);
		assert_int_equal(len, 0);
		free(text);
		if (!strstr(err.message, paths[i]))
			fail_msg("'%s' does not name %s", err.message, paths[i]);
	}
}

/* The calibration a result used is named, with its key and age. */
static void test_calibration_named(void **state)
{
	(void)state;
	_cleanup_free_ char *out =
	    summary("{\"variants\":{},\"comparisons\":[],\"verdict\":\"pass\",\"calibration\":[{"
		    "\"workload\":\"rtm\",\"key\":\"0123456789abcdef0123\",\"made_at\":"
		    "\"2026-12-04T19:00:00Z\",\"boots\":6,\"host\":{\"hostname\":\"h1\"}}]}");
	expect(out, "calibration: workload 'rtm': default thresholds from the A/A calibration "
		    "0123456789ab made 2026-12-04T19:00:00Z (6 boots on h1)\n");
}

/* The noise limit and where it came from, under the repeats line. */
static void test_noise_limit(void **state)
{
	(void)state;
#define REP(extra)                                                                                 \
	"{\"variants\":{},\"comparisons\":[],\"verdict\":\"pass\",\"repeats\":{\"min\":5,"         \
	"\"max\":12,\"rounds_run\":5,\"noisy_reruns\":0,\"alpha_per_look\":0.0167,"                \
	"\"stopped\":\"every gated metric was decided\"" extra "}}"
	_cleanup_free_ char *cal =
	    summary(REP(",\"noise_limit_pct\":12.4,\"noise_limit_source\":"
			"\"calibration\",\"calibration_vcpu_wait_pct_p90\":6.2"));
	expect(cal, "noise limit: a run whose vCPUs waited over 12.4 % for a host CPU while other "
		    "processes took over 10 % of it, or one beside other processes that took "
		    "over 40 %, is noisy (from the A/A calibration: 9 in 10 of its runs waited at "
		    "most 6.2 %)\n");
	_cleanup_free_ char *job = summary(REP(",\"noise_limit_pct\":40,\"noise_limit_source\":"
					       "\"job\""));
	expect(
	    job,
	    "over 40 % for a host CPU while other processes took over 10 % of it, or one "
	    "beside other processes that took over 40 %, is noisy (the job's noise_limit_pct)\n");
	_cleanup_free_ char *def = summary(REP(",\"noise_limit_pct\":25"));
	expect(def, "over 25 % for a host CPU while other processes took over 10 % of it, or one "
		    "beside other processes that took over 40 %, is noisy (the default; `schedlab "
		    "calibrate` sets "
		    "one for this host)\n");
	_cleanup_free_ char *none = summary(REP(""));
	assert_null(strstr(none, "noise limit"));
#undef REP
}

/* result.attribution (--per-patch): each patch's own change per gated
 * metric and which patch carried it; a walk cut short says so. */
static void test_attribution(void **state)
{
	(void)state;
	_cleanup_free_ char *out =
	    summary("{\"job\":{\"name\":\"s\"},\"verdict\":\"fail\",\"attribution\":{\"status\":"
		    "\"done\",\"patches\":2,\"builds\":1,\"boots\":5,\"steps\":[{\"patches\":1,"
		    "\"last_patch\":\"0001-a.patch\",\"verdict\":\"pass\",\"comparisons\":[],"
		    "\"added\":[{\"workload\":\"rtm\",\"metric\":\"inversions\",\"verdict\":"
		    "\"unchanged\",\"change\":0,\"ci95\":[0,0],\"p_value\":1,\"from\":0,\"to\":0}],"
		    "\"boots\":5},{\"patches\":2,\"last_patch\":\"0002-b.patch\",\"verdict\":"
		    "\"fail\",\"comparisons\":[],\"added\":[{\"workload\":\"rtm\",\"metric\":"
		    "\"inversions\",\"verdict\":\"regressed\",\"change\":7,\"ci95\":[5,9],"
		    "\"p_value\":0.008,\"from\":0,\"to\":7}],\"boots\":0}],\"carried_by\":[{"
		    "\"workload\":\"rtm\",\"metric\":\"inversions\",\"patches\":2,\"last_patch\":"
		    "\"0002-b.patch\",\"verdict\":\"regressed\"}]}}");
	expect(out, "What each patch did (2 patches; 1 build(s), 5 boot(s);");
	expect(out, "   2 0002-b.patch (prefix: fail)\n");
	expect(out, "rtm              inversions                          0 -> 7              +7 "
		    "[5, 9] p 0.008: regressed\n");
	expect(out, "  rtm inversions: regressed by patch 2 (0002-b.patch)\n");
	_cleanup_free_ char *cut =
	    summary("{\"job\":{\"name\":\"s\"},\"verdict\":\"fail\",\"attribution\":{\"status\":"
		    "\"error\",\"patches\":3,\"builds\":0,\"boots\":0,\"steps\":[{\"patches\":1,"
		    "\"last_patch\":\"0001-a.patch\",\"verdict\":\"inconclusive\",\"added\":[],"
		    "\"added_reasons\":[\"Run 'p#0' was noisy.\",\"Too few clean runs.\"]}],"
		    "\"carried_by\":[]}}");
	expect(cut, "       own change not judged: Too few clean runs.\n");
	expect(cut, "  no patch's own change in a gated metric was decided\n");
	expect(cut, "  incomplete: a step ended in an error");
}

/* result.bisection: every step with its verdict, and the answer; an
 * uncertain answer says so. The HTML report's section is in test_report. */
static void test_bisection(void **state)
{
	(void)state;
	const char *steps =
	    "\"steps\":[{\"patches\":2,\"last_patch\":\"0002-b.patch\",\"verdict\":\"fail\","
	    "\"uncertain\":false,\"decided_by\":[],\"comparisons\":[],\"boots\":5,"
	    "\"reused_runs\":5},{\"patches\":1,\"last_patch\":\"0001-a.patch\",\"verdict\":"
	    "\"inconclusive\",\"uncertain\":true,\"decided_by\":[],\"comparisons\":[],"
	    "\"boots\":8,\"reused_runs\":5}]";
	char text[2048];
	snprintf(text, sizeof(text),
		 "{\"job\":{\"name\":\"s\",\"baseline\":\"baseline\"},\"verdict\":\"fail\","
		 "\"bisection\":{\"status\":\"found\",\"first_bad\":2,\"first_bad_patch\":"
		 "\"0002-b.patch\",\"patches\":4,\"certain\":false,\"builds\":2,\"boots\":13,%s}}",
		 steps);
	_cleanup_free_ char *out = summary(text);
	expect(out, "Bisection of the 4 patches (2 build(s), 13 boot(s)):");
	expect(out, "  first  2 (up to 0002-b.patch): fail, 5 boot(s), 5 run(s) reused");
	expect(out, "  first  1 (up to 0001-a.patch): inconclusive (uncertain), 8 boot(s)");
	expect(out, "  first failing patch: 2 of 4, 0002-b.patch (uncertain:");
	snprintf(text, sizeof(text),
		 "{\"job\":{\"name\":\"s\"},\"verdict\":\"fail\",\"bisection\":{\"status\":"
		 "\"error\",\"first_bad\":null,\"patches\":3,\"certain\":false,\"builds\":0,"
		 "\"boots\":0,\"steps\":[]}}");
	_cleanup_free_ char *err = summary(text);
	expect(err, "no answer: a step ended in an error");
	/* a commit range (schedlab test --range): commits by hash and subject */
	snprintf(text, sizeof(text),
		 "{\"job\":{\"name\":\"s\"},\"verdict\":\"fail\",\"bisection\":{\"status\":"
		 "\"found\",\"first_bad\":2,\"first_bad_patch\":\"0002-b.patch\","
		 "\"first_bad_commit\":\"%s\",\"first_bad_subject\":\"sched: b\","
		 "\"commits\":[],\"patches\":3,\"certain\":true,\"builds\":2,\"boots\":10,"
		 "\"steps\":[{\"patches\":1,\"last_patch\":\"0001-a.patch\",\"commit\":\"%s\","
		 "\"subject\":\"sched: a\",\"verdict\":\"pass\",\"uncertain\":false,"
		 "\"decided_by\":[],\"comparisons\":[],\"boots\":5,\"reused_runs\":5}]}}",
		 "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2",
		 "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1");
	_cleanup_free_ char *range = summary(text);
	expect(range, "Bisection of the 3 commits (2 build(s), 10 boot(s)):");
	expect(range, "  first  1 (up to a1a1a1a1a1a1 sched: a): pass, 5 boot(s)");
	expect(range, "  first failing commit: 2 of 3, b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2 "
		      "sched: b\n");
}

/* A sched_ext variant: each run's state/ops, an ejection's end state and
 * the run's reason (docs/sched-ext.md). */
static void test_guest_topology(void **state)
{
	(void)state;
	_cleanup_free_ char *out = summary(
	    "{\"job\":{\"name\":\"t\",\"baseline\":\"baseline\",\"guest\":{\"vcpus\":4,"
	    "\"memory_mb\":512,\"topology\":{\"sockets\":2,\"cores\":2,\"threads\":1},"
	    "\"numa\":[{\"cpus\":\"0-1\",\"memory_mb\":256},{\"cpus\":\"2-3\",\"memory_mb\":256}]}}"
	    ","
	    "\"variants\":{\"baseline\":{\"kernel\":\"k\",\"runs\":[{\"key\":\"baseline#0\","
	    "\"status\":\"ok\",\"topology\":{\"cpus\":4,\"sockets\":2,\"cores\":2,"
	    "\"threads\":1,\"sched_domains\":[\"MC\",\"DIE\"]}}]}},"
	    "\"comparisons\":[],\"verdict\":\"inconclusive\",\"verdict_reasons\":[]}");
	expect(out, "  guest: 4 vCPU(s), 512 MiB, 2 socket(s) x 2 core(s) x 1 thread(s), NUMA "
		    "nodes 0-1/256 MiB 2-3/256 MiB; sched domains MC DIE\n");
	assert_null(strstr(out, "pinning:"));

	/* docs/guests.md "Pinning": how many runs were pinned and where, or why
	 * none was. */
	const char *head = "{\"job\":{\"name\":\"t\",\"baseline\":\"b\",\"guest\":{\"vcpus\":1,"
			   "\"memory_mb\":512}},\"variants\":{\"b\":{\"kernel\":\"k\",\"runs\":[";
	const char *tail = "]}},\"comparisons\":[],\"verdict\":\"pass\",\"verdict_reasons\":[]}";
	char text[2048];
	snprintf(text, sizeof(text),
		 "%s{\"key\":\"b#0\",\"status\":\"ok\",\"pinning\":{\"pinned\":false,\"reason\":"
		 "\"busy\"}},{\"key\":\"b#1\",\"status\":\"ok\",\"pinning\":{\"pinned\":true,"
		 "\"vcpus\":[3],\"emulator\":\"0-2\",\"applied\":[\"3\"]}}%s",
		 head, tail);
	_cleanup_free_ char *some = summary(text);
	expect(some, "  pinning: 1 of 2 run(s) pinned, e.g. vCPUs on host CPU(s) 3, emulator on "
		     "0-2\n");
	snprintf(text, sizeof(text),
		 "%s{\"key\":\"b#0\",\"status\":\"ok\",\"pinning\":{\"pinned\":false,\"reason\":"
		 "\"guest.pinning is off\"}}%s",
		 head, tail);
	_cleanup_free_ char *none = summary(text);
	expect(none, "  pinning: none (guest.pinning is off)\n");
}

static void test_sched_ext(void **state)
{
	(void)state;
	_cleanup_free_ char *out = summary(
	    "{\"job\":{\"name\":\"scx\",\"baseline\":\"baseline\"},"
	    "\"variants\":{\"baseline\":{\"kernel\":\"k\",\"runs\":[{\"key\":\"baseline#0\","
	    "\"status\":\"ok\"}]},"
	    " \"simple\":{\"kernel\":\"k\",\"runs\":[{\"key\":\"simple#0\",\"status\":\"ok\","
	    "\"sched_ext\":{\"scheduler\":\"scx_simple\",\"state\":\"enabled\",\"ops\":"
	    "\"simple\",\"state_end\":\"enabled\"}},{\"key\":\"simple#1\",\"status\":"
	    "\"sched_ext_failed\",\"reason\":\"sched_ext ejected the scheduler 'scx_simple' "
	    "during the run: runnable task stall\",\"sched_ext\":{\"scheduler\":\"scx_simple\","
	    "\"state\":\"enabled\",\"ops\":\"simple\",\"state_end\":\"disabled\"}}]}},"
	    "\"comparisons\":[],\"verdict\":\"fail\",\"verdict_reasons\":[]}");
	expect(out, "  simple               ok sched_ext_failed\n");
	expect(out, "    sched_ext scx_simple: enabled/simple enabled/simple->disabled\n");
	expect(out, "    simple#1: sched_ext ejected the scheduler 'scx_simple' during the run: "
		    "runnable task stall\n");
	assert_null(strstr(out, "sched_ext scx_simple: enabled/simple\n    baseline"));
}

/* schedstat rows (docs/workloads.md "schedstat") are not in the main
 * table: they come after it per variant and workload, beside the
 * workload's own decided rows, with the totals and what changed shown and
 * the per-CPU rest counted. */
#define SS(metric, verdict)                                                                        \
	"{\"variant\":\"nq\",\"workload\":\"hackbench\",\"metric\":\"" metric "\","                \
	"\"baseline\":{\"median\":17},\"candidate\":{\"median\":32},\"change\":15,"                \
	"\"change_pct\":88.2,\"ci95\":[3,25],\"p_value\":0.01,\"alpha\":0.05,\"threshold\":0,"     \
	"\"gated\":false,\"verdict\":\"" verdict "\"}"

static void test_schedstat_apart(void **state)
{
	(void)state;
	_cleanup_free_ char *out = summary(
	    "{\"job\":{\"name\":\"ss\",\"baseline\":\"baseline\"},\"variants\":{},"
	    "\"comparisons\":["
	    "{\"variant\":\"nq\",\"workload\":\"hackbench\",\"metric\":\"time_s\","
	    "\"baseline\":{\"median\":1},\"candidate\":{\"median\":1.2},\"change\":0.2,"
	    "\"change_pct\":20,\"ci95\":[0.1,0.3],\"p_value\":0.01,\"alpha\":0.05,"
	    "\"threshold\":0.1,\"gated\":true,\"verdict\":\"regressed\"}," SS(
		"schedstat.lb_migrations",
		"changed") "," SS("schedstat.run_delay_ms",
				  "unchanged") "," SS("schedstat.cpu0.ttwu",
						      "unchanged") "," SS("schedstat.cpu1.ttwu",
									  "changed") "],"
										     "\"verdict\":"
										     "\"fail\","
										     "\"verdict_"
										     "reasons\":[]"
										     "}");
	const char *table = strstr(out, "Comparisons against");
	const char *moved = strstr(out, "schedstat: what moved");
	assert_non_null(table);
	assert_non_null(moved);
	assert_true(moved > table);
	/* nothing of schedstat in the main table */
	const char *first = strstr(out, "schedstat.");
	assert_true(first > moved);
	expect(moved, "  nq / hackbench: its own metrics: time_s regressed (+20%)\n");
	expect(moved, "schedstat.lb_migrations");
	expect(moved, "schedstat.run_delay_ms");
	expect(moved, "schedstat.cpu1.ttwu");
	assert_null(strstr(out, "schedstat.cpu0.ttwu"));
	expect(moved, "(1 more schedstat row(s) per CPU and domain, none changed");
}

/* Variants on debug kernels are named as such, with the preset on their
 * runs line, so a lockdep kernel's latency is not read as a production
 * figure; a job of normal kernels has no such note (docs/kernel-bugs.md). */
static void test_debug_kernels(void **state)
{
	(void)state;
	_cleanup_free_ char *out =
	    summary("{\"job\":{\"name\":\"dbg\",\"baseline\":\"baseline\"},"
		    "\"kernels\":{\"base\":{\"debug\":\"lockdep\"},\"patched\":{\"debug\":"
		    "\"lockdep\"},\"normal\":{}},"
		    "\"variants\":{\"baseline\":{\"kernel\":\"base\",\"runs\":[{\"key\":"
		    "\"baseline#0\",\"status\":\"ok\"}]},\"patched\":{\"kernel\":\"patched\","
		    "\"runs\":[{\"key\":\"patched#0\",\"status\":\"ok\"}]},\"plain\":{\"kernel\":"
		    "\"normal\",\"runs\":[{\"key\":\"plain#0\",\"status\":\"ok\"}]}},"
		    "\"comparisons\":[],\"verdict\":\"pass\",\"verdict_reasons\":[]}");
	expect(out, "\nDebug kernels: baseline (kernel 'base', lockdep build), patched (kernel "
		    "'patched', lockdep build).\n  Debug builds check locking");
	expect(out, "not a production kernel's latency");
	expect(out, "  baseline [lockdep]   ok\n");
	expect(out, "  patched [lockdep]    ok\n");
	expect(out, "  plain                ok\n");
	assert_null(strstr(out, "plain (kernel"));
	_cleanup_free_ char *normal =
	    summary("{\"job\":{\"name\":\"n\",\"baseline\":\"baseline\"},\"kernels\":{\"k\":{}},"
		    "\"variants\":{\"baseline\":{\"kernel\":\"k\",\"runs\":[]}},"
		    "\"comparisons\":[],\"verdict\":\"pass\",\"verdict_reasons\":[]}");
	assert_null(strstr(normal, "Debug kernels"));
	assert_null(strstr(normal, "baseline ["));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_thresholds_and_unchanged),
	    cmocka_unit_test(test_guest_topology),
	    cmocka_unit_test(test_build_failures_and_skips),
	    cmocka_unit_test(test_hostile_members),
	    cmocka_unit_test(test_calibration_named),
	    cmocka_unit_test(test_noise_limit),
	    cmocka_unit_test(test_bisection),
	    cmocka_unit_test(test_attribution),
	    cmocka_unit_test(test_sched_ext),
	    cmocka_unit_test(test_debug_kernels),
	    cmocka_unit_test(test_schedstat_apart),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
