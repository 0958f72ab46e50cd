/* JUnit XML: one suite per variant, a failure per regressed comparison, an
 * error per run that did not end ok (with its console excerpt), totals on
 * the root, and escaping of every hostile string (markup, quotes, control
 * characters, invalid UTF-8). */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "report/junit.h"

static const char *RESULT =
    "{\"job\":{\"name\":\"ci<&>\"},"
    "\"variants\":{"
    " \"baseline\":{\"runs\":["
    "  {\"key\":\"baseline#0\",\"status\":\"ok\",\"duration_seconds\":9.5},"
    "  {\"key\":\"baseline#1\",\"status\":\"hung\",\"duration_seconds\":60,"
    "   \"reason\":\"no output for 60 s\",\"console_excerpt\":\"BUG: <soft lockup> & \\\"x\\\" "
    "'y'\\u0001 end\"}]},"
    " \"patched\\\"><x\":{\"runs\":["
    "  {\"key\":\"p#0\",\"status\":\"panic\",\"duration_seconds\":3,"
    "   \"reason\":\"Kernel panic - not syncing\"},"
    "  {\"key\":\"p#1\",\"status\":\"ok\",\"duration_seconds\":9}]}},"
    "\"comparisons\":["
    " {\"variant\":\"patched\\\"><x\",\"workload\":\"rt-migrate-test\",\"metric\":\"inversions\","
    "  \"baseline\":{\"median\":3},\"candidate\":{\"median\":5},\"change\":2,\"change_pct\":66.7,"
    "  \"p_value\":0.04,\"verdict\":\"regressed\"},"
    " {\"variant\":\"patched\\\"><x\",\"workload\":\"cyclictest\",\"metric\":\"latency_us.p99\","
    "  \"baseline\":{\"median\":300},\"candidate\":{\"median\":200},\"change\":-100,"
    "  \"verdict\":\"improved\"}],"
    "\"verdict\":\"fail\"}";

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

static void test_shape(void **state)
{
	(void)state;
	_cleanup_json_ json_object *r = json_tokener_parse(RESULT);
	assert_non_null(r);
	_cleanup_free_ char *xml = NULL;
	assert_int_equal(junit_from_result(r, &xml), 0);
	assert_non_null(strstr(xml, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites "
				    "name=\"schedlab ci&lt;&amp;&gt;\" tests=\"6\" "
				    "failures=\"1\" errors=\"2\""));
	assert_int_equal(count(xml, "<testsuite "), 2);
	assert_int_equal(count(xml, "<testcase "), 6);
	assert_int_equal(count(xml, "<failure "), 1);
	assert_int_equal(count(xml, "<error "), 2);
	assert_non_null(strstr(xml, "<testsuite name=\"baseline\" tests=\"2\" failures=\"0\" "
				    "errors=\"1\" time=\"69.500\">"));
	assert_non_null(strstr(xml, "<testsuite name=\"patched&quot;&gt;&lt;x\" tests=\"4\" "
				    "failures=\"1\" errors=\"1\""));
	assert_non_null(strstr(xml, "name=\"inversions\">\n      <failure type=\"regressed\" "
				    "message=\"regressed: baseline median 3, candidate median 5"));
	assert_non_null(strstr(xml, "<error type=\"hung\" message=\"hung: no output for 60 s\">"
				    "BUG: &lt;soft lockup&gt; &amp; &quot;x&quot; &#39;y&#39;"
				    "\xef\xbf\xbd end</error>"));
	assert_non_null(strstr(xml, "<error type=\"panic\" message=\"panic: Kernel panic - not "
				    "syncing\">panic: Kernel panic - not syncing</error>"));
	/* Nothing of the hostile strings survives raw. */
	assert_null(strstr(xml, "<soft"));
	assert_null(strstr(xml, "\"><x"));
	assert_null(strchr(xml, '\x01'));
}

static void test_empty_and_bad(void **state)
{
	(void)state;
	_cleanup_json_ json_object *r = json_object_new_object();
	_cleanup_free_ char *xml = NULL;
	assert_int_equal(junit_from_result(r, &xml), 0);
	assert_non_null(strstr(xml, "tests=\"0\" failures=\"0\" errors=\"0\""));
	_cleanup_json_ json_object *a = json_object_new_array();
	char *none = NULL;
	assert_int_equal(junit_from_result(a, &none), -EINVAL);
	assert_null(none);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_shape),
	    cmocka_unit_test(test_empty_and_bad),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
