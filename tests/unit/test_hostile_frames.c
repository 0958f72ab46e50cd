/* Hostile frames from a guest, through the path the runner takes: serial
 * bytes into the guest stage's parser (guest_state_pop_frames), the outcome
 * (guest_outcome_fill), and the run record (run_record_set_outcome, which
 * calls run_record_fill). Whatever the guest sends, the run ends as "error"
 * with a reason naming the frame and the field, never an abort, and the
 * record stays valid, bounded JSON. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "guest/guest-internal.h"
#include "guest/guest.h"
#include "helpers/job_fixture.h"
#include "run/agent_frames.h"
#include "run/run_record.h"
#include "util/json.h"

#define GOOD_WORKLOAD                                                                              \
	"{\"index\":0,\"exit_code\":0,\"signal\":0,\"timed_out\":false,"                           \
	"\"stdout\":\"Running in process mode with 10 groups using 40 file descriptors each "      \
	"(== 400 tasks)\\nEach sender will pass 100 messages of 100 bytes\\nTime: 0.123\\n\","     \
	"\"stderr\":\"\",\"json_file\":null,\"error\":null}"
#define GOOD_SUMMARY                                                                               \
	"{\"uname\":\"6.1.0\",\"features\":{\"applied\":[],\"errors\":[]},\"errors\":[]}"

static void feed(struct guest_state *s, const char *kind, const char *payload, size_t len)
{
	char head[96];
	int n = snprintf(head, sizeof(head), "\nSLFRAME v1 %s %zu %08x\n", kind, len,
			 (unsigned)frame_crc32(payload, len));
	frame_parser_feed(s->fp, head, (size_t)n);
	frame_parser_feed(s->fp, payload, len);
	frame_parser_feed(s->fp, "\nSLEND\n", 7);
	guest_state_pop_frames(s);
}

static void feed_str(struct guest_state *s, const char *kind, const char *payload)
{
	feed(s, kind, payload, strlen(payload));
}

/* The run record the runner would store for what was fed (new reference). */
static json_object *run_of(struct guest_state *s, const struct job *job)
{
	struct guest_outcome *o = calloc(1, sizeof(*o));
	assert_non_null(o);
	pthread_mutex_lock(&s->lock);
	guest_outcome_fill(s, o, false, 60, false, 0);
	pthread_mutex_unlock(&s->lock);
	struct run_key key = {.repeat = 0};
	snprintf(key.variant, sizeof(key.variant), "a");
	json_object *run =
	    run_record_new(&key, "0123456789abcdef", "local", "2026-01-01T00:00:00Z");
	run_record_set_outcome(run, job, "tcg", o, 1.0);
	guest_outcome_free(o);
	return run;
}

static struct job *one_workload_job(void)
{
	struct job *job = job_fixture(
	    "{\"name\":\"t\",\"baseline\":\"a\",\"kernels\":" JOB_FIXTURE_KERNELS ","
	    "\"variants\":{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\"}},"
	    "\"workloads\":[{\"name\":\"hb\",\"tool\":\"hackbench\",\"args\":[\"-p\"]}]}");
	assert_non_null(job);
	return job;
}

/* The record is an error whose reason holds needle, and it serializes to
 * JSON that the strict parser takes back (valid UTF-8, finite numbers) and
 * that is not larger than max_bytes. */
static void expect_run_error(json_object *run, const char *needle, size_t max_bytes)
{
	json_object *st = json_object_object_get(run, "status");
	json_object *reason = json_object_object_get(run, "reason");
	const char *text = json_object_to_json_string_ext(run, JSON_C_TO_STRING_PLAIN);
	if (strcmp(json_object_get_string(st), "error") != 0 || !reason ||
	    !strstr(json_object_get_string(reason), needle))
		fail_msg("want an error with '%s', got %.600s", needle, text);
	size_t len = strlen(text);
	if (len > max_bytes)
		fail_msg("the run record is %zu bytes, over %zu", len, max_bytes);
	json_object *back = NULL;
	struct sl_error err = {0};
	if (json_parse_strict(text, len, NULL, "run record", &back, &err) < 0)
		fail_msg("the run record does not parse back: %s", err.message);
	json_object_put(back);
}

/* One summary payload (with a good workload frame before it). */
static void summary_case(const char *payload, const char *needle)
{
	struct job *job = one_workload_job();
	struct sl_error err = {0};
	struct guest_state *s = guest_state_new(NULL, &err);
	assert_non_null(s);
	feed_str(s, "hello", "{\"agent\":\"schedlab-agent\"}");
	feed_str(s, "workload", GOOD_WORKLOAD);
	feed_str(s, "summary", payload);
	json_object *run = run_of(s, job);
	expect_run_error(run, needle, 64 * 1024);
	json_object_put(run);
	guest_state_free(s);
	job_free(job);
}

/* The crafted frame of the report, and wrong types at every level the host
 * reads. */
static void test_summary_wrong_types(void **state)
{
	(void)state;
	static const struct {
		const char *payload, *needle;
	} cases[] = {
	    {"{\"errors\":{\"x\":1}}",
	     "The agent's summary frame: payload.errors is an object, not an array."},
	    {"{\"features\":{\"errors\":{\"x\":1}}}",
	     "The agent's summary frame: payload.features.errors is an object, not an array."},
	    {"{\"features\":[1]}", "payload.features is an array, not an object"},
	    {"{\"tunables\":{\"errors\":[1]}}",
	     "payload.tunables.errors[0] is an integer, not a string"},
	    {"{\"cgroups\":{\"errors\":\"x\"}}",
	     "payload.cgroups.errors is a string, not an array"},
	    {"{\"features\":{\"applied\":[{\"a\":1}]}}",
	     "payload.features.applied[0] is an object, not a string"},
	    {"[]", "The agent's summary frame: payload is an array, not an object."},
	    {"\"summary\"", "payload is a string, not an object"},
	    {"{\"uname\":[\"6.1\"]}", "payload.uname is an array, not a string"},
	    {"{\"taskstats_error\":7}", "payload.taskstats_error is an integer, not a string"},
	    {"{\"topology\":\"2x2\"}", "payload.topology is a string, not an object"},
	    {"{\"topology\":{\"cpus\":\"2\"}}",
	     "payload.topology.cpus is a string, not an integer"},
	    {"{\"topology\":{\"cores\":1e300}}",
	     "payload.topology.cores is a number, not an integer"},
	    {"{\"topology\":{\"threads\":-5}}", "payload.topology.threads is -5, outside 0..4096"},
	    {"{\"topology\":{\"sched_domains\":{\"MC\":1}}}",
	     "payload.topology.sched_domains is an object, not an array"},
	    {"{\"topology\":{\"numa\":{\"0\":1}}}",
	     "payload.topology.numa is an object, not an array"},
	    {"{\"topology\":{\"numa\":[5]}}",
	     "payload.topology.numa[0] is an integer, not an object"},
	    {"{\"topology\":{\"numa\":[{\"node\":\"0\",\"cpus\":\"0\"}]}}",
	     "payload.topology.numa[0].node is a string, not an integer"},
	    {"{\"sched_ext\":true}", "payload.sched_ext is true or false, not an object"},
	    {"{\"sched_ext\":{\"state\":[]}}", "payload.sched_ext.state is an array, not a string"},
	    {"{\"sched_ext\":{\"enable_ms\":1.5}}",
	     "payload.sched_ext.enable_ms is a number, not an integer"},
	    {"{\"errors\":[\"a\\u0000b\"]}", "payload.errors[0] holds a NUL character"},
	};
	for (size_t i = 0; i < ELEMENTSOF(cases); i++)
		summary_case(cases[i].payload, cases[i].needle);
}

/* A payload of n bytes: {"KEY":"xxx...x"} (free it). */
static char *long_string_payload(const char *before, const char *key, size_t n, const char *after)
{
	size_t len = strlen(before) + strlen(key) + n + strlen(after) + 16;
	char *p = malloc(len);
	assert_non_null(p);
	int k = snprintf(p, len, "%s\"%s\":\"", before, key);
	memset(p + k, 'x', n);
	snprintf(p + k + n, len - (size_t)k - n, "\"%s", after);
	return p;
}

/* Huge arrays, over-long strings, NaN and infinities, deep nesting. */
static void test_summary_sizes_and_numbers(void **state)
{
	(void)state;
	char *p = long_string_payload("{\"errors\":[],", "uname", 5000, "}");
	summary_case(p, "payload.uname is 5000 bytes long, over the limit of 512");
	free(p);

	/* 300 errors: over the count of a list */
	char buf[8192] = "{\"errors\":[";
	for (int i = 0; i < 300; i++)
		strcat(buf, i ? ",\"e\"" : "\"e\"");
	strcat(buf, "]}");
	summary_case(buf, "payload.errors has 300 items, over the limit of 256");

	/* 5000 small integers: over the values a payload may hold, refused
	 * before json-c spends memory on them */
	size_t cap = 16 + 2 * 5000;
	char *many = malloc(cap);
	assert_non_null(many);
	strcpy(many, "{\"errors\":[");
	for (int i = 0; i < 5000; i++)
		strcat(many, i ? ",1" : "1");
	strcat(many, "]}");
	summary_case(many, "The payload of frame 3 ('summary') holds more than 4096 JSON values "
			   "(arrays, objects and their members).");
	free(many);

	char err[2100] = "{\"errors\":[\"";
	memset(err + strlen(err), 'e', 2000);
	strcpy(err + 12 + 2000, "\"]}");
	summary_case(err, "payload.errors[0] is 2000 bytes long, over the limit of 1024");

	summary_case("{\"topology\":{\"cpus\":NaN}}", "holds the number NaN, which is not finite");
	summary_case("{\"topology\":{\"cpus\":Infinity}}", "which is not finite");
	summary_case("{\"topology\":{\"cpus\":-1e999}}", "holds the number -1e999");
	summary_case("{\"topology\":{\"cpus\":99999999999999999999999}}",
		     "payload.topology.cpus is 18446744073709551615, outside 0..4096");

	char deep[200] = "{\"errors\":";
	for (int i = 0; i < 40; i++)
		strcat(deep, "[");
	for (int i = 0; i < 40; i++)
		strcat(deep, "]");
	strcat(deep, "}");
	summary_case(deep, "The payload of frame 3 ('summary') is not valid JSON");
}

/* One workload payload (with a good summary after it). */
static void workload_case(const char *payload, const char *needle)
{
	struct job *job = one_workload_job();
	struct sl_error err = {0};
	struct guest_state *s = guest_state_new(NULL, &err);
	assert_non_null(s);
	feed_str(s, "workload", payload);
	feed_str(s, "summary", GOOD_SUMMARY);
	json_object *run = run_of(s, job);
	expect_run_error(run, needle, 64 * 1024);
	json_object_put(run);
	guest_state_free(s);
	job_free(job);
}

static void test_workload_wrong_types(void **state)
{
	(void)state;
	static const struct {
		const char *payload, *needle;
	} cases[] = {
	    {"{\"index\":\"0\"}", "The agent's workload frame (frame 1 of the run): payload.index "
				  "is a string, not an integer."},
	    {"{\"stdout\":\"\"}", "payload.index is missing"},
	    {"{\"index\":7}", "payload.index is 7, outside 0..0"},
	    {"{\"index\":0,\"exit_code\":{}}", "payload.exit_code is an object, not an integer"},
	    {"{\"index\":0,\"signal\":\"TERM\"}", "payload.signal is a string, not an integer"},
	    {"{\"index\":0,\"timed_out\":\"yes\"}",
	     "payload.timed_out is a string, not true or false"},
	    {"{\"index\":0,\"stdout\":123}", "payload.stdout is an integer, not a string"},
	    {"{\"index\":0,\"stderr\":[\"x\"]}", "payload.stderr is an array, not a string"},
	    {"{\"index\":0,\"json_file\":{\"a\":1}}",
	     "payload.json_file is an object, not a string"},
	    {"{\"index\":0,\"error\":1}", "payload.error is an integer, not a string"},
	    {"{\"index\":0,\"stdout\":\"a\\u0000b\"}", "payload.stdout holds a NUL character"},
	    {"{\"index\":0,\"schedstat_before\":[]}",
	     "payload.schedstat_before is an array, not a string"},
	    {"{\"index\":0,\"tasks_rusage\":[1]}",
	     "payload.tasks_rusage is an array, not an object"},
	    {"{\"index\":0,\"tasks_delay\":3}", "payload.tasks_delay is an integer, not an object"},
	    {"[0]", "payload is an array, not an object"},
	};
	for (size_t i = 0; i < ELEMENTSOF(cases); i++)
		workload_case(cases[i].payload, cases[i].needle);

	char *p = long_string_payload("{\"index\":0,", "stderr", AGENT_TEXT_MAX_BYTES + 1, "}");
	workload_case(p, "payload.stderr is 1048577 bytes long, over the limit of 1048576");
	free(p);
}

/* A reason and a stderr tail that quote a guest's text are cut where a
 * UTF-8 sequence starts: the stored result must stay valid UTF-8. */
static void test_guest_text_cut_on_utf8(void **state)
{
	(void)state;
	char payload[8192];
	char e_acute[1024] = "", tail[6000] = "";
	for (int i = 0; i < 333; i++)
		strcat(e_acute, "\xc3\xa9");
	for (int i = 0; i < 1501; i++)
		strcat(tail, "\xe2\x82\xac");
	snprintf(payload, sizeof(payload),
		 "{\"index\":0,\"exit_code\":1,\"stderr\":\"%s\",\"error\":\"%s\"}", tail, e_acute);
	workload_case(payload, "workload 'hb' could not run: \xc3\xa9");
	snprintf(payload, sizeof(payload), "{\"index\":0,\"exit_code\":1,\"stderr\":\"%s\"}", tail);
	workload_case(payload, "workload 'hb' exited with status 1");
}

/* Many small valid frames: over the run's budget of JSON values, the rest
 * is refused and the run is an error naming the frame. */
static void test_run_budget(void **state)
{
	(void)state;
	struct job *job = one_workload_job();
	struct sl_error err = {0};
	struct guest_state *s = guest_state_new(NULL, &err);
	assert_non_null(s);
	/* an unknown kind the host ignores, 4000 values each */
	char *p = malloc(2 * 4000 + 8);
	assert_non_null(p);
	size_t at = 0;
	p[at++] = '[';
	for (int i = 0; i < 3999; i++) {
		if (i)
			p[at++] = ',';
		p[at++] = '1';
	}
	p[at++] = ']';
	p[at] = '\0';
	for (int i = 0; i < 18; i++)
		feed_str(s, "extra", p);
	free(p);
	feed_str(s, "workload", GOOD_WORKLOAD);
	feed_str(s, "summary", GOOD_SUMMARY);
	assert_true(s->frame_values <= GUEST_FRAMES_MAX_VALUES);
	json_object *run = run_of(s, job);
	expect_run_error(run,
			 "The guest's frames went over the limit of 65536 JSON values per run at "
			 "frame 17 ('extra'",
			 64 * 1024);
	json_object_put(run);
	guest_state_free(s);

	/* bytes: nine frames of 3.8 MiB of text are over 32 MiB */
	s = guest_state_new(NULL, &err);
	assert_non_null(s);
	p = long_string_payload("{", "blob", 3900 * 1024, "}");
	for (int i = 0; i < 9; i++)
		feed_str(s, "extra", p);
	free(p);
	assert_true(s->frame_bytes <= GUEST_FRAMES_MAX_BYTES);
	run = run_of(s, job);
	expect_run_error(run, "over the limit of 33554432 payload bytes per run", 64 * 1024);
	json_object_put(run);
	guest_state_free(s);
	job_free(job);
}

/* The agent's errors are kept up to AGENT_ERRORS_KEPT, with a count of the
 * rest: a guest cannot make the stored record grow with its lists. */
static void test_agent_errors_bounded(void **state)
{
	(void)state;
	char buf[16384] = "{\"features\":{\"errors\":[";
	for (int i = 0; i < 250; i++)
		strcat(buf, i ? ",\"feature 'X' is not known\"" : "\"feature 'X' is not known\"");
	strcat(buf, "]},\"errors\":[\"one more\"]}");
	summary_case(buf, "the agent reported: feature 'X' is not known");
	struct job *job = one_workload_job();
	struct sl_error err = {0};
	struct guest_state *s = guest_state_new(NULL, &err);
	feed_str(s, "workload", GOOD_WORKLOAD);
	feed_str(s, "summary", buf);
	json_object *run = run_of(s, job);
	json_object *kept = json_object_object_get(run, "agent_errors");
	assert_int_equal(json_object_array_length(kept), AGENT_ERRORS_KEPT + 1);
	assert_string_equal(
	    json_object_get_string(json_object_array_get_idx(kept, AGENT_ERRORS_KEPT)),
	    "(219 more errors from the agent not kept)");
	json_object_put(run);
	guest_state_free(s);
	job_free(job);
}

/* What a well-behaved agent sends still makes an ok run. */
static void test_good_frames_stay_ok(void **state)
{
	(void)state;
	struct job *job = one_workload_job();
	struct sl_error err = {0};
	struct guest_state *s = guest_state_new(NULL, &err);
	feed_str(s, "hello", "{\"agent\":\"schedlab-agent\",\"heartbeat_s\":1}");
	feed_str(s, "workload", GOOD_WORKLOAD);
	feed_str(s, "summary",
		 "{\"uname\":\"6.1.0 #1 SMP x86_64\",\"nr_cpus\":2,\"features\":{\"requested\":[],"
		 "\"applied\":[\"HRTICK\"],\"errors\":[]},\"tunables\":{\"applied\":{},"
		 "\"errors\":[]},\"cgroups\":{\"uid_weights\":{},\"errors\":[]},"
		 "\"topology\":{\"cpus\":2,\"sockets\":1,\"cores\":2,\"threads\":1,"
		 "\"sched_domains\":null,\"numa\":null,\"errors\":[]},\"workloads\":1,"
		 "\"errors\":[],\"agent_version\":\"1\",\"orphans_reaped\":0}");
	json_object *run = run_of(s, job);
	const char *st = json_object_get_string(json_object_object_get(run, "status"));
	if (strcmp(st, "ok") != 0)
		fail_msg("%s", json_object_to_json_string(run));
	json_object_put(run);
	guest_state_free(s);
	job_free(job);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_summary_wrong_types),
	    cmocka_unit_test(test_summary_sizes_and_numbers),
	    cmocka_unit_test(test_workload_wrong_types),
	    cmocka_unit_test(test_guest_text_cut_on_utf8),
	    cmocka_unit_test(test_run_budget),
	    cmocka_unit_test(test_agent_errors_bounded),
	    cmocka_unit_test(test_good_frames_stay_ok),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
