/* Guest agent: plan parsing and validation, UTF-8 cleaning and the
 * tail-keeping capture buffer. The agent's sources are compiled in here. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agent/plan.c"
#include "agent/util.c"

static const char good_plan[] =
    "{\"run_id\": \"r-0123abcd\","
    " \"features\": [\"NO_RT_PUSH\", \"NO_RT_WAKEUP_PLACE\", \"NO_HRTICK\"],"
    " \"tunables\": {\"base_slice_ns\": 3000000},"
    " \"uid_shares\": {\"1000\": 1024, \"1001\": 2048},"
    " \"workloads\": [{\"name\": \"rt-migrate-test\","
    "   \"argv\": [\"/usr/bin/rt-migrate-test\", \"--json=/tmp/w0.json\", \"-p\", \"60\"],"
    "   \"json_out\": \"/tmp/w0.json\", \"timeout_s\": 60, \"uid\": 0},"
    "  {\"name\": \"share\", \"argv\": [\"/schedlab/bin/share\"], \"uid\": 1000}]}\n";

static void test_parse_contract_example(void **state)
{
	struct agent_plan *p = NULL;
	char err[512] = "";
	(void)state;

	assert_int_equal(agent_plan_parse(good_plan, strlen(good_plan), &p, err, sizeof(err)), 0);
	assert_string_equal(p->run_id, "r-0123abcd");
	assert_int_equal(p->n_features, 3);
	assert_string_equal(p->features[2], "NO_HRTICK");
	assert_int_equal(p->n_tunables, 1);
	assert_string_equal(p->tunables[0].name, "base_slice_ns");
	assert_int_equal(p->tunables[0].value, 3000000);
	assert_int_equal(p->n_shares, 2);
	assert_int_equal(p->n_workloads, 2);
	assert_int_equal(p->workloads[0].argc, 4);
	assert_null(p->workloads[0].argv[4]);
	assert_string_equal(p->workloads[0].json_out, "/tmp/w0.json");
	assert_int_equal(p->workloads[0].timeout_s, 60);
	/* defaults */
	assert_int_equal(p->workloads[1].timeout_s, PLAN_DEFAULT_TIMEOUT_S);
	assert_int_equal(p->workloads[1].uid, 1000);
	assert_null(p->workloads[1].json_out);
	agent_plan_free(p);
	agent_plan_free(NULL);
}

static void test_sched_ext_plan(void **state)
{
	(void)state;
	static const char text[] =
	    "{\"sched_ext\": {\"scheduler\": \"scx_central\", \"argv\": "
	    "[\"/usr/lib/schedlab/sched_ext/k/scx_central\", \"-c\", \"1\"]}, \"workloads\": []}";
	struct agent_plan *p = NULL;
	char err[256] = "";
	assert_int_equal(agent_plan_parse(text, strlen(text), &p, err, sizeof(err)), 0);
	assert_string_equal(p->scx_scheduler, "scx_central");
	assert_int_equal(p->scx_argc, 3);
	assert_string_equal(p->scx_argv[2], "1");
	assert_null(p->scx_argv[3]);
	assert_false(p->schedstat);
	agent_plan_free(p);
	static const char ss[] = "{\"schedstat\": true, \"workloads\": []}";
	assert_int_equal(agent_plan_parse(ss, strlen(ss), &p, err, sizeof(err)), 0);
	assert_true(p->schedstat);
	agent_plan_free(p);
}

static void test_minimal_plan(void **state)
{
	struct agent_plan *p = NULL;
	const char *text = "{\"workloads\": []}";
	(void)state;

	assert_int_equal(agent_plan_parse(text, strlen(text), &p, NULL, 0), 0);
	assert_string_equal(p->run_id, "");
	assert_int_equal(p->n_workloads + p->n_features + p->n_tunables + p->n_shares, 0);
	agent_plan_free(p);
}

struct bad_case {
	const char *json;
	const char *expect; /* in the message */
};

static void test_rejects(void **state)
{
	static const struct bad_case cases[] = {
	    {"", "ends in the middle"},
	    {"{\"workloads\": [", "ends in the middle"},
	    {"[]", "must be a JSON object"},
	    {"{\"workloads\": []} x", "at byte 18"},
	    {"{\"workloads\": [], \"workloads\": [}", "not valid JSON"},
	    {"{}", "no 'workloads'"},
	    {"{\"features\": \"HRTICK\", \"workloads\": []}", "'features' must be an array"},
	    {"{\"features\": [\"hrtick\"], \"workloads\": []}", "features[0]"},
	    {"{\"features\": [\"HR TICK\"], \"workloads\": []}", "features[0]"},
	    {"{\"tunables\": {\"../x\": 1}, \"workloads\": []}", "may not contain '/' or '..'"},
	    {"{\"tunables\": {\"a/b\": 1}, \"workloads\": []}", "'a/b'"},
	    {"{\"tunables\": {\"..\": 1}, \"workloads\": []}", "'..'"},
	    {"{\"tunables\": {\"x\": \"1\"}, \"workloads\": []}",
	     "'tunables.x' must be an integer"},
	    {"{\"uid_shares\": {\"-1\": 1024}, \"workloads\": []}", "invalid uid '-1'"},
	    {"{\"uid_shares\": {\"abc\": 1024}, \"workloads\": []}", "invalid uid 'abc'"},
	    {"{\"uid_shares\": {\"1000\": 0}, \"workloads\": []}", "share from 1"},
	    {"{\"sched_ext\": {\"argv\": [\"/x\"]}, \"workloads\": []}", "sched_ext.scheduler"},
	    {"{\"schedstat\": 1, \"workloads\": []}", "'schedstat' must be true or false"},
	    {"{\"sched_ext\": {\"scheduler\": \"scx/simple\", \"argv\": [\"/x\"]}, "
	     "\"workloads\": []}",
	     "sched_ext.scheduler"},
	    {"{\"sched_ext\": {\"scheduler\": \"scx_simple\", \"argv\": []}, \"workloads\": []}",
	     "sched_ext.argv"},
	    {"{\"sched_ext\": {\"scheduler\": \"scx_simple\", \"argv\": [\"scx_simple\"]}, "
	     "\"workloads\": []}",
	     "sched_ext.argv[0]' must be an absolute path"},
	    {"{\"sched_ext\": {\"scheduler\": \"scx_simple\", \"argv\": [\"/x\", 3]}, "
	     "\"workloads\": []}",
	     "sched_ext.argv[1]"},
	    {"{\"workloads\": [{\"argv\": [\"/bin/true\"]}]}", "workloads[0].name"},
	    {"{\"workloads\": [{\"name\": \"x\", \"argv\": []}]}", "non-empty array"},
	    {"{\"workloads\": [{\"name\": \"x\", \"argv\": [\"true\"]}]}", "absolute path"},
	    {"{\"workloads\": [{\"name\": \"x\", \"argv\": [\"/bin/true\", 1]}]}", "argv[1]"},
	    {"{\"workloads\": [{\"name\": \"x\", \"argv\": [\"/bin/a\\u0000b\"]}]}", "NUL byte"},
	    {"{\"workloads\": [{\"name\": \"x\", \"argv\": [\"/bin/true\"], \"timeout_s\": -1}]}",
	     "timeout_s"},
	    {"{\"workloads\": [{\"name\": \"x\", \"argv\": [\"/bin/true\"], \"uid\": -1}]}",
	     "invalid uid"},
	    {"{\"workloads\": [{\"name\": \"x\", \"argv\": [\"/bin/true\"], \"json_out\": "
	     "\"rel\"}]}",
	     "json_out"},
	    {"{\"run_id\": 5, \"workloads\": []}", "run_id"},
	    {"{\"workloads\": [], \"x\": \"\xff\"}", "not valid JSON"},
	    /* json-c alone lets an overlong '/' and a surrogate through */
	    {"{\"workloads\": [], \"x\": \"\xc0\xaf\"}", "byte 24: invalid UTF-8"},
	    {"{\"workloads\": [], \"x\": \"\xed\xa0\x80\"}", "byte 24: invalid UTF-8"},
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct agent_plan *p = NULL;
		char err[512] = "";
		int r =
		    agent_plan_parse(cases[i].json, strlen(cases[i].json), &p, err, sizeof(err));
		if (r >= 0 || !strstr(err, cases[i].expect))
			fail_msg("case %zu '%s': r=%d, message '%s', expected '%s'", i,
				 cases[i].json, r, err, cases[i].expect);
		assert_null(p);
	}
}

static void test_limits(void **state)
{
	struct agent_plan *p = NULL;
	char err[512] = "";
	char *big;
	size_t n = 0;
	(void)state;

	/* more features than allowed */
	big = malloc(16 * (PLAN_MAX_FEATURES + 2) + 64);
	n += (size_t)sprintf(big + n, "{\"workloads\": [], \"features\": [");
	for (int i = 0; i <= PLAN_MAX_FEATURES; i++)
		n += (size_t)sprintf(big + n, "%s\"F%d\"", i ? "," : "", i);
	n += (size_t)sprintf(big + n, "]}");
	assert_int_equal(agent_plan_parse(big, n, &p, err, sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "more than the limit"));
	free(big);

	/* a plan over the size limit is refused before parsing */
	assert_int_equal(agent_plan_parse("{}", PLAN_MAX_BYTES + 1, &p, err, sizeof(err)), -E2BIG);
	assert_null(p);

	/* deep nesting is refused by the tokener's depth limit */
	big = malloc(200);
	memset(big, '[', 100);
	assert_true(agent_plan_parse(big, 100, &p, err, sizeof(err)) < 0);
	free(big);
}

static void test_tunable_names(void **state)
{
	(void)state;
	assert_true(agent_plan_tunable_name_valid("latency_ns"));
	assert_true(agent_plan_tunable_name_valid("base_slice_ns"));
	assert_false(agent_plan_tunable_name_valid(""));
	assert_false(agent_plan_tunable_name_valid("."));
	assert_false(agent_plan_tunable_name_valid(".."));
	assert_false(agent_plan_tunable_name_valid("a/b"));
	assert_false(agent_plan_tunable_name_valid("a..b"));
	assert_false(agent_plan_tunable_name_valid("a b"));
	assert_false(agent_plan_tunable_name_valid("a\nb"));
	assert_true(agent_plan_feature_name_valid("NO_HRTICK"));
	assert_false(agent_plan_feature_name_valid("NO-HRTICK"));
	assert_false(agent_plan_feature_name_valid(""));
}

static void test_utf8_clean(void **state)
{
	char *s;
	(void)state;

	s = agent_utf8_clean("plain \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 17);
	assert_string_equal(s, "plain \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	free(s);
	/* NUL, a lone continuation, a truncated sequence, an overlong '/',
	 * a surrogate and a code point past U+10FFFF */
	s = agent_utf8_clean("a\0b\x80"
			     "c\xe2\x82"
			     "d\xc0\xaf"
			     "e\xed\xa0\x80"
			     "f\xf4\x90\x80\x80",
			     19);
	assert_int_equal(strlen(s), 19);
	assert_string_equal(s, "a?b?c??d??e???f????");
	free(s);
}

static void test_tail_buf(void **state)
{
	struct tail_buf t;
	size_t len;
	char *s;
	(void)state;

	assert_int_equal(tail_buf_init(&t, 8), 0);
	tail_buf_append(&t, "abc", 3);
	s = tail_buf_take(&t, &len);
	assert_string_equal(s, "abc");
	assert_false(tail_buf_truncated(&t));
	free(s);
	tail_buf_append(&t, "defgh", 5); /* exactly full */
	s = tail_buf_take(&t, &len);
	assert_string_equal(s, "abcdefgh");
	assert_false(tail_buf_truncated(&t));
	free(s);
	tail_buf_append(&t, "ij", 2); /* wraps */
	s = tail_buf_take(&t, &len);
	assert_string_equal(s, "cdefghij");
	assert_true(tail_buf_truncated(&t));
	free(s);
	tail_buf_append(&t, "0123456789XYZ", 13); /* longer than the buffer */
	s = tail_buf_take(&t, &len);
	assert_int_equal(len, 8);
	assert_string_equal(s, "56789XYZ");
	free(s);
	for (int i = 0; i < 100; i++)
		tail_buf_append(&t, "x", 1);
	tail_buf_append(&t, "END", 3);
	s = tail_buf_take(&t, NULL);
	assert_string_equal(s, "xxxxxEND");
	free(s);
	tail_buf_done(&t);
}

static void test_agent_path(void **state)
{
	char *p;
	(void)state;

	p = agent_path("", "/sys/x");
	assert_string_equal(p, "/sys/x");
	free(p);
	p = agent_path("/tmp/root/", "/sys/x");
	assert_string_equal(p, "/tmp/root/sys/x");
	free(p);
	p = agent_path("/", "/sys/x");
	assert_string_equal(p, "/sys/x");
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_contract_example),
	    cmocka_unit_test(test_minimal_plan),
	    cmocka_unit_test(test_sched_ext_plan),
	    cmocka_unit_test(test_rejects),
	    cmocka_unit_test(test_limits),
	    cmocka_unit_test(test_tunable_names),
	    cmocka_unit_test(test_utf8_clean),
	    cmocka_unit_test(test_tail_buf),
	    cmocka_unit_test(test_agent_path),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
