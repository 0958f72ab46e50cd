/* JUnit XML agrees with the verdict: a failure only for a gated regression,
 * a failed candidate run and a kernel that did not build (docs/contracts.md
 * A), plus the verdict's own testcase; ungated regressions, failed baseline
 * runs and noisy runs left out go to <system-out>; undecided gates and
 * skipped runs are <skipped>. And escaping of every hostile string (markup,
 * quotes, control characters, invalid UTF-8). */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "report/junit.h"
#include "helpers/result_fixture.h"

static const char *RESULT =
    "{\"job\":{\"name\":\"ci<&>\",\"baseline\":\"baseline\"},"
    "\"variants\":{"
    " \"baseline\":{\"runs\":["
    "  {\"key\":\"baseline#0\",\"status\":\"ok\",\"duration_seconds\":9.5},"
    "  {\"key\":\"baseline#1\",\"status\":\"hung\",\"duration_seconds\":60,"
    "   \"reason\":\"no output for 60 s\",\"console_excerpt\":\"BUG: <soft lockup> & \\\"x\\\" "
    "'y'\\u0001 end\"}]},"
    " \"patched\\\"><x\":{\"runs\":["
    "  {\"key\":\"p#0\",\"status\":\"panic\",\"duration_seconds\":3,"
    "   \"reason\":\"Kernel panic - not syncing\",\"console_excerpt\":\"<0>panic & \\u0001\"},"
    "  {\"key\":\"p#1\",\"status\":\"ok\",\"duration_seconds\":9}]}},"
    "\"comparisons\":["
    " {\"variant\":\"patched\\\"><x\",\"workload\":\"rt-migrate-test\",\"metric\":\"inversions\","
    "  \"baseline\":{\"median\":3},\"candidate\":{\"median\":5},\"change\":2,\"change_pct\":66.7,"
    "  \"ci95\":[1,4],\"p_value\":0.04,\"gated\":true,\"threshold\":1,\"verdict\":\"regressed\"},"
    " {\"variant\":\"patched\\\"><x\",\"workload\":\"cyclictest\",\"metric\":\"latency_us.max\","
    "  \"baseline\":{\"median\":300},\"candidate\":{\"median\":900},\"change\":600,"
    "  \"ci95\":[400,700],\"p_value\":0.008,\"gated\":false,\"threshold\":150,"
    "  \"verdict\":\"regressed\"},"
    " {\"variant\":\"patched\\\"><x\",\"workload\":\"cyclictest\",\"metric\":\"latency_us.avg\","
    "  \"baseline\":{\"median\":100},\"candidate\":{\"median\":140},\"change\":40,"
    "  \"ci95\":[-5,60],\"p_value\":0.3,\"gated\":true,\"threshold\":25,"
    "  \"verdict\":\"inconclusive\"},"
    " {\"variant\":\"patched\\\"><x\",\"workload\":\"cyclictest\",\"metric\":\"latency_us.p99\","
    "  \"baseline\":{\"median\":300},\"candidate\":{\"median\":200},\"change\":-100,"
    "  \"ci95\":null,\"verdict\":\"improved\"}],"
    "\"verdict\":\"fail\",\"verdict_reasons\":[\"Gated metric 'inversions' regressed.\","
    "\"Run 'p#0' ended with status 'panic'.\"]}";

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

static char *junit(const char *text)
{
	_cleanup_json_ json_object *r = json_tokener_parse(text);
	assert_non_null(r);
	result_fixture_complete(r);
	char *xml = NULL;
	struct sl_error err = {0};
	if (junit_from_result(r, &xml, &err) < 0)
		fail_msg("junit_from_result: %s", err.message);
	assert_non_null(xml);
	return xml;
}

/* The text of the testcase named name (from its '<testcase' to its end). */
static char *testcase(const char *xml, const char *name)
{
	char needle[256];
	snprintf(needle, sizeof(needle), "\" name=\"%s\"", name);
	const char *p = strstr(xml, needle);
	if (!p)
		fail_msg("no testcase %s in\n%s", name, xml);
	while (p > xml && strncmp(p, "<testcase", 9) != 0)
		p--;
	const char *end = strstr(p, "</testcase>");
	assert_non_null(end);
	return strndup(p, (size_t)(end - p));
}

static void test_shape(void **state)
{
	(void)state;
	_cleanup_free_ char *xml = junit(RESULT);
	/* Failures: the gated regression, the candidate's panic, the verdict. */
	assert_non_null(strstr(xml, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites "
				    "name=\"schedlab ci&lt;&amp;&gt;\" tests=\"9\" "
				    "failures=\"3\" errors=\"0\""));
	assert_int_equal(count(xml, "<testsuite "), 3);
	assert_int_equal(count(xml, "<testcase "), 9);
	assert_int_equal(count(xml, "<failure "), 3);
	assert_int_equal(count(xml, "<error "), 0);
	assert_int_equal(count(xml, "<skipped "), 1);
	assert_non_null(strstr(xml, "<testsuite name=\"baseline\" tests=\"2\" failures=\"0\" "
				    "errors=\"0\" time=\"69.500\">"));
	assert_non_null(strstr(xml, "<testsuite name=\"patched&quot;&gt;&lt;x\" tests=\"6\" "
				    "failures=\"2\" errors=\"0\""));

	_cleanup_free_ char *inv = testcase(xml, "inversions");
	assert_non_null(strstr(inv, "<property name=\"gated\" value=\"true\"/>"));
	assert_non_null(strstr(inv, "<failure type=\"regressed\" message=\"regressed: baseline "
				    "median 3, candidate median 5, change +2 (+66.7%), 95% CI "
				    "[1, 4], threshold \u00b11, p=0.04\">"));
	/* An ungated regression is reported, not failed: exit 0 stays green. */
	_cleanup_free_ char *max = testcase(xml, "latency_us.max");
	assert_null(strstr(max, "<failure"));
	assert_non_null(strstr(max, "<system-out>regressed (not gated): baseline median 300"));
	assert_non_null(strstr(max, "does not fail the verdict</system-out>"));
	assert_non_null(strstr(max, "<property name=\"threshold\" value=\"150\"/>"));
	/* A gate that was not decided is skipped, with the numbers. */
	_cleanup_free_ char *avg = testcase(xml, "latency_us.avg");
	assert_non_null(strstr(avg, "<skipped message=\"inconclusive: baseline median 100, "
				    "candidate median 140, change +40, 95% CI [-5, 60], "
				    "threshold \u00b125"));
	_cleanup_free_ char *p99 = testcase(xml, "latency_us.p99");
	assert_non_null(strstr(p99, "95% CI none"));
	assert_null(strstr(p99, "<failure"));

	/* A failed baseline run does not fail the job: system-out. */
	_cleanup_free_ char *b1 = testcase(xml, "baseline#1");
	assert_null(strstr(b1, "<failure"));
	assert_non_null(strstr(b1, "<system-out>hung: no output for 60 s (a baseline run"));
	/* A candidate's panic does, with its console (escaped). */
	_cleanup_free_ char *p0 = testcase(xml, "p#0");
	assert_non_null(strstr(p0, "<failure type=\"panic\" message=\"panic: Kernel panic - not "
				   "syncing\">&lt;0&gt;panic &amp; \xef\xbf\xbd</failure>"));
	_cleanup_free_ char *verdict = testcase(xml, "verdict");
	assert_non_null(strstr(verdict, "<failure type=\"fail\" message=\"verdict fail&#10;- "
					"Gated metric &#39;inversions&#39; regressed."));
	/* Nothing of the hostile strings survives raw. */
	assert_null(strstr(xml, "<soft"));
	assert_null(strstr(xml, "\"><x"));
	assert_null(strchr(xml, '\x01'));
}

/* Contract A: a kernel that did not build is a result, and its testcase
 * carries the failure with the status, the patch and the log excerpt; its
 * variant's runs are skipped, not failed a second time. */
static void test_kernel_did_not_build(void **state)
{
	(void)state;
	_cleanup_free_ char *xml = junit(
	    "{\"job\":{\"name\":\"ci\",\"baseline\":\"baseline\"},"
	    "\"kernels\":{\"base\":{\"key\":\"k1\",\"cached\":true,\"build_seconds\":0.5,"
	    " \"build\":{\"status\":\"ok\"}},"
	    " \"patched\":{\"build\":{\"status\":\"patch_does_not_apply\","
	    "  \"message\":\"patch 0005-my.patch does not apply (hunk #1 FAILED at 1925 in "
	    "kernel/sched/rt.c)\",\"patch\":\"0005-my.patch\","
	    "  \"log_excerpt\":\"patching file kernel/sched/rt.c\\nHunk #1 FAILED at 1925 "
	    "<rej>\\n\"}},"
	    " \"opt\":{\"build\":{\"status\":\"config_option_dropped\",\"message\":\"CONFIG_FOO "
	    "was dropped\",\"option\":\"CONFIG_FOO\",\"log_excerpt\":\"x\"}}},"
	    "\"variants\":{\"baseline\":{\"kernel\":\"base\",\"runs\":[{\"key\":\"baseline#0\","
	    " \"status\":\"ok\",\"duration_seconds\":10}]},"
	    " \"patched\":{\"kernel\":\"patched\",\"not_built\":true,\"runs\":[]}},"
	    "\"comparisons\":[],\"verdict\":\"fail\",\"verdict_reasons\":[\"variant 'patched': "
	    "kernel 'patched' did not build (patch_does_not_apply): patch 0005-my.patch does not "
	    "apply (hunk #1 FAILED at 1925 in kernel/sched/rt.c)\"]}");
	assert_non_null(strstr(xml, "<testsuite name=\"kernels\" tests=\"3\" failures=\"2\""));
	_cleanup_free_ char *base = testcase(xml, "base");
	assert_null(strstr(base, "<failure"));
	/* From the cache: no build time in this job. */
	assert_non_null(strstr(base, "name=\"base\" time=\"0.000\""));
	assert_non_null(strstr(base, "built (from the cache)"));
	_cleanup_free_ char *k = testcase(xml, "patched");
	assert_non_null(strstr(k, "classname=\"schedlab.kernels\""));
	assert_non_null(strstr(
	    k, "<failure type=\"patch_does_not_apply\" message=\"patch 0005-my.patch does not "
	       "apply (hunk #1 FAILED at 1925 in kernel/sched/rt.c)\">patch 0005-my.patch does "
	       "not apply (hunk #1 FAILED at 1925 in kernel/sched/rt.c)&#10;patch: "
	       "0005-my.patch&#10;--- log excerpt ---&#10;patching file kernel/sched/rt.c&#10;"
	       "Hunk #1 FAILED at 1925 &lt;rej&gt;&#10;</failure>"));
	_cleanup_free_ char *opt = testcase(xml, "opt");
	assert_non_null(strstr(opt, "<failure type=\"config_option_dropped\""));
	assert_non_null(strstr(opt, "option: CONFIG_FOO&#10;"));
	_cleanup_free_ char *runs = testcase(xml, "runs");
	assert_non_null(strstr(runs, "classname=\"schedlab.patched\""));
	assert_non_null(strstr(runs, "<skipped message=\"not run: kernel &#39;patched&#39; did "
				     "not build"));
	/* Two kernels and the verdict. */
	assert_non_null(strstr(xml, "<testsuites name=\"schedlab ci\" tests=\"6\" "
				    "failures=\"3\" errors=\"0\""));
}

/* A passing verdict is never red: ungated regressions, noisy runs left out
 * and failed baseline runs are all reported without a failure. Fail-fast
 * skips are <skipped>; noise_policy "fail" makes a noisy candidate run a
 * failure, "keep" counts a noisy hang as a hang. */
static void test_pass_is_green_and_noise_policy(void **state)
{
	(void)state;
#define TMPL                                                                                       \
	"{\"job\":{\"name\":\"n\",\"baseline\":\"b\",\"noise_policy\":\"%s\"},"                    \
	"\"variants\":{\"b\":{\"runs\":[{\"key\":\"b#0\",\"status\":\"error\","                    \
	" \"reason\":\"agent lost\"}]},"                                                           \
	" \"c\":{\"runs\":[{\"key\":\"c#0\",\"status\":\"hung\",\"noisy\":true,"                   \
	"  \"host_interference\":{\"vcpu_wait_pct\":41.5}},"                                       \
	"  {\"key\":\"c#1\",\"status\":\"ok\",\"noisy\":true,"                                     \
	"  \"host_interference\":{\"vcpu_wait_pct\":30}}],"                                        \
	"  \"skipped_runs\":2,\"skipped_reason\":\"run c#0 hung\"}},"                              \
	"\"comparisons\":[{\"variant\":\"c\",\"workload\":\"w\",\"metric\":\"m\","                 \
	" \"gated\":false,\"verdict\":\"regressed\",\"ci95\":[1,2],\"threshold\":0.5}],"           \
	"\"verdict\":\"%s\",\"verdict_reasons\":[\"No gates: the job opted out.\"]}"
	char text[2048];
	snprintf(text, sizeof(text), TMPL, "exclude", "pass");
	_cleanup_free_ char *xml = junit(text);
	assert_int_equal(count(xml, "<failure"), 0);
	assert_non_null(strstr(xml, "failures=\"0\" errors=\"0\""));
	_cleanup_free_ char *c0 = testcase(xml, "c#0");
	assert_non_null(strstr(c0, "<system-out>hung, noisy: its vCPUs waited 41.5 % of the run "
				   "for a host CPU; left out of the comparisons</system-out>"));
	_cleanup_free_ char *sk = testcase(xml, "skipped runs");
	assert_non_null(strstr(sk, "<skipped message=\"2 run(s) skipped: run c#0 hung\"/>"));
	_cleanup_free_ char *v = testcase(xml, "verdict");
	assert_non_null(strstr(v, "<system-out>verdict pass&#10;- No gates: the job opted "
				  "out.</system-out>"));

	snprintf(text, sizeof(text), TMPL, "fail", "fail");
	_cleanup_free_ char *xf = junit(text);
	/* Both noisy candidate runs and the verdict. */
	assert_int_equal(count(xf, "<failure type=\"noisy\""), 2);
	assert_non_null(strstr(xf, "tests=\"6\" failures=\"3\""));

	snprintf(text, sizeof(text), TMPL, "keep", "fail");
	_cleanup_free_ char *xk = junit(text);
	_cleanup_free_ char *k0 = testcase(xk, "c#0");
	assert_non_null(strstr(k0, "<failure type=\"hung\""));

	snprintf(text, sizeof(text), TMPL, "exclude", "inconclusive");
	_cleanup_free_ char *xi = junit(text);
	assert_int_equal(count(xi, "<failure"), 0);
	_cleanup_free_ char *vi = testcase(xi, "verdict");
	assert_non_null(strstr(vi, "<skipped message=\"verdict inconclusive&#10;"));
}

static void test_empty_and_bad(void **state)
{
	(void)state;
	/* The result is parsed once, strictly: an empty object lacks what the
	 * schema requires, and the error names the first member missing. */
	_cleanup_json_ json_object *r = json_object_new_object();
	char *none = NULL;
	struct sl_error err = {0};
	assert_int_equal(junit_from_result(r, &none, &err), -EINVAL);
	assert_null(none);
	assert_non_null(strstr(err.message, "schema is missing"));
	_cleanup_json_ json_object *a = json_object_new_array();
	assert_int_equal(junit_from_result(a, &none, NULL), -EINVAL);
	assert_null(none);
	/* A typed member of the wrong type is refused with its path... */
	_cleanup_json_ json_object *bad =
	    json_tokener_parse("{\"schema\":1,\"job\":{},\"environment\":{},\"verdict\":\"pass\","
			       "\"verdict_reasons\":[],\"comparisons\":[],\"variants\":{\"v\":"
			       "{\"kernel\":\"k\",\"runs\":{}}}}");
	memset(&err, 0, sizeof(err));
	assert_int_equal(junit_from_result(bad, &none, &err), -EINVAL);
	assert_non_null(strstr(err.message, "variants.v.runs"));
	/* ...an untyped one (a kernel's build record) is read, not trusted. */
	_cleanup_free_ char *odd = junit("{\"kernels\":{\"k\":{\"build\":{\"status\":7}}}}");
	assert_non_null(strstr(odd, "<failure type=\"unknown\""));
}

/* Kernel bug signatures (docs/kernel-bugs.md): one new in a candidate is a
 * failure with its first excerpt; one the baseline shows too is not. */
static void test_signatures(void **state)
{
	(void)state;
	_cleanup_free_ char *xml = junit(
	    "{\"job\":{\"name\":\"ci\",\"baseline\":\"base\"},"
	    "\"variants\":{\"base\":{\"runs\":[]},\"cand\":{\"runs\":[]}},"
	    "\"signatures\":["
	    " {\"id\":\"0123456789abcdef\",\"kind\":\"warn\",\"title\":\"WARNING in "
	    "push_rt_task\",\"location\":\"kernel/sched/rt.c:2124\",\"runs\":3,\"reports\":3,"
	    "  \"variants\":{\"cand\":3},\"in_baseline\":false,\"new_in\":[\"cand\"],"
	    "  \"first\":{\"variant\":\"cand\",\"excerpt\":\"WARNING: CPU: 1 <x>\"}},"
	    " {\"id\":\"fedcba9876543210\",\"kind\":\"lockdep\",\"title\":\"possible deadlock "
	    "in f\",\"runs\":2,\"reports\":2,\"variants\":{\"base\":1,\"cand\":1},"
	    "  \"in_baseline\":true,\"new_in\":[],\"first\":{\"variant\":\"base\","
	    "\"excerpt\":\"x\"}}],"
	    "\"comparisons\":[],\"verdict\":\"fail\",\"verdict_reasons\":[\"k\"]}");
	assert_non_null(strstr(xml, "<testsuite name=\"signatures\" tests=\"2\" failures=\"1\""));
	_cleanup_free_ char *w = testcase(xml, "WARNING in push_rt_task");
	assert_non_null(strstr(w, "classname=\"schedlab.signatures.warn\""));
	assert_non_null(
	    strstr(w, "<failure type=\"kernel_bug\" message=\"WARNING in push_rt_task "
		      "[warn] at kernel/sched/rt.c:2124: 3 run(s), never in the "
		      "baseline; in &#39;cand&#39;\">WARNING: CPU: 1 &lt;x&gt;</failure>"));
	_cleanup_free_ char *l = testcase(xml, "possible deadlock in f");
	assert_null(strstr(l, "<failure"));
	assert_non_null(strstr(l, "seen in the baseline too"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_shape),
	    cmocka_unit_test(test_kernel_did_not_build),
	    cmocka_unit_test(test_pass_is_green_and_noise_policy),
	    cmocka_unit_test(test_empty_and_bad),
	    cmocka_unit_test(test_signatures),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
