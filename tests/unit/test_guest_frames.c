/* Frames from the guest, without a guest: the strict parse of a payload
 * (guest_payload_parse), frames popped into a run's state, and the outcome
 * filled from that state. No libvirt connection is made. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "guest/guest-internal.h"
#include "guest/guest.h"
#include "util/fs.h"

/* The signature of tests/data/console/hang-nmi-6.1.txt. */
#define HANG_TITLE "hang in push_rt_task"

/* Parses text as frame 1 of kind "workload"; returns the object (new ref)
 * or NULL with msg filled. */
static json_object *parse(const char *text, size_t len, char *msg, size_t msglen)
{
	struct frame f = {.kind = "workload", .payload = (char *)text, .len = len};
	msg[0] = '\0';
	return guest_payload_parse(&f, 1, msg, msglen);
}

static void expect_rejected(const char *text, size_t len, const char *needle)
{
	char msg[256];
	json_object *o = parse(text, len, msg, sizeof(msg));
	if (o)
		fail_msg("accepted '%s'", text);
	if (!strstr(msg, "The payload of frame 1 ('workload')") || !strstr(msg, needle))
		fail_msg("'%s': message '%s' lacks '%s'", text, msg, needle);
}

static void test_payload_accepts_strict_json(void **state)
{
	(void)state;
	static const char *good[] = {
	    "{\"a\":[1,2.5,{\"b\":\"\xc3\xa9\"}],\"cmdline:\":\"x\",\"n\":null}",
	    "[]",
	    "\"text\"",
	    "[1e+06,-0.5,true]",
	    "{\"a\":1}\n", /* whitespace after the value is JSON */
	    "12",	   /* a bare number ends with the payload */
	};
	for (size_t i = 0; i < ELEMENTSOF(good); i++) {
		char msg[256];
		json_object *o = parse(good[i], strlen(good[i]), msg, sizeof(msg));
		if (!o)
			fail_msg("rejected '%s': %s", good[i], msg);
		assert_string_equal(msg, "");
		json_object_put(o);
	}
}

#define CASE(text, needle)                                                                         \
	{                                                                                          \
		text, sizeof(text) - 1, needle                                                     \
	}

static void test_payload_rejects_lenient_json(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		size_t len;
		const char *needle;
	} bad[] = {
	    /* json-c takes 'a' as a key even when strict; a value it refuses. */
	    CASE("{\"a\":'x'}", "not valid JSON at offset 5"),
	    CASE("{'a':1}", "must be in double quotes"),
	    CASE("[1,]", "not valid JSON at offset"),
	    CASE("{\"a\":1} x", "bytes after its JSON value"),
	    CASE("\"\xff\"", "not valid UTF-8 at offset 1"),
	    CASE("\"\xc3\"", "not valid UTF-8"),
	    /* overlong '/' */
	    CASE("\"\xc0\xaf\"", "not valid UTF-8 at offset 1"),
	    CASE("{\"a\":", "cut off"),
	    CASE("", "cut off"),
	    CASE("null", "it is null"),
	    CASE("null ", "it is null"),
	    CASE("[1]\0[2]", "NUL byte at offset 3"),
	    /* The byte offset of the error is named. */
	    CASE("[1, 2, x]", "at offset 7"),
	};
	for (size_t i = 0; i < ELEMENTSOF(bad); i++)
		expect_rejected(bad[i].text, bad[i].len, bad[i].needle);
}

static void test_payload_depth_bound(void **state)
{
	(void)state;
	char deep[2 * (GUEST_PAYLOAD_DEPTH + 1) + 1], ok[2 * (GUEST_PAYLOAD_DEPTH - 1) + 1];
	size_t n = GUEST_PAYLOAD_DEPTH + 1;
	memset(deep, '[', n);
	memset(deep + n, ']', n);
	deep[2 * n] = '\0';
	expect_rejected(deep, 2 * n, "not valid JSON at offset");

	n = GUEST_PAYLOAD_DEPTH - 1;
	memset(ok, '[', n);
	memset(ok + n, ']', n);
	ok[2 * n] = '\0';
	char msg[256];
	json_object *o = parse(ok, 2 * n, msg, sizeof(msg));
	if (!o)
		fail_msg("rejected %zu levels: %s", n, msg);
	json_object_put(o);
}

/* Feeds one encoded frame to the state's parser. */
static void feed_frame(struct guest_state *s, const char *kind, const char *payload)
{
	char buf[512];
	size_t len = strlen(payload);
	int n = snprintf(buf, sizeof(buf), "\nSLFRAME v1 %s %zu %08x\n%s\nSLEND\n", kind, len,
			 (unsigned)frame_crc32(payload, len), payload);
	assert_true(n > 0 && (size_t)n < sizeof(buf));
	frame_parser_feed(s->fp, buf, (size_t)n);
	guest_state_pop_frames(s);
}

/* A new state, with no console log. */
static struct guest_state *new_state(void)
{
	struct sl_error err = {0};
	struct guest_state *s = guest_state_new(NULL, &err);
	if (!s)
		fail_msg("%s", err.message);
	return s;
}

/* The outcome of the run so far, as guest_run() fills it (new; free it). */
static struct guest_outcome *fill(struct guest_state *s)
{
	struct guest_outcome *o = calloc(1, sizeof(*o));
	assert_non_null(o);
	pthread_mutex_lock(&s->lock);
	guest_outcome_fill(s, o, false, 60, false, 0);
	pthread_mutex_unlock(&s->lock);
	return o;
}

static void test_frames_into_outcome(void **state)
{
	(void)state;
	struct guest_state *s = new_state();
	feed_frame(s, "hello", "{\"agent\":\"schedlab-agent\"}");
	feed_frame(s, "workload", "{\"index\":0,}");
	feed_frame(s, "summary", "{\"nr_cpus\":2}");
	assert_int_equal(s->n_frames, 3);
	assert_int_equal(s->payload_errors, 1);
	assert_true(s->hello && s->summary);
	assert_non_null(strstr(s->payload_error,
			       "The payload of frame 2 ('workload') is not valid JSON at offset"));

	struct guest_outcome *o = fill(s);
	assert_true(s->closed);
	assert_string_equal(o->status, "error");
	assert_string_equal(o->reason, s->payload_error);
	assert_int_equal(json_object_array_length(o->frames), 3);
	assert_non_null(o->summary);
	assert_int_equal(json_object_get_int(json_object_object_get(o->summary, "nr_cpus")), 2);
	json_object *bad = json_object_array_get_idx(o->frames, 1);
	assert_null(json_object_object_get(bad, "payload"));

	guest_outcome_free(o);
	guest_state_free(s);
}

static void test_frames_bounded(void **state)
{
	(void)state;
	struct guest_state *s = new_state();
	for (int i = 0; i < GUEST_MAX_FRAMES + 5; i++)
		feed_frame(s, "workload", "{}");
	assert_int_equal(s->n_frames, GUEST_MAX_FRAMES);
	assert_int_equal(s->dropped_frames, 5);
	assert_int_equal(s->payload_errors, 0);

	struct guest_outcome *o = fill(s);
	assert_string_equal(o->status, "error");
	assert_string_equal(o->reason,
			    "The guest sent more frames than the limit before its summary.");
	guest_outcome_free(o);
	guest_state_free(s);
}

/* Heartbeats (docs/contracts.md 2) arm the silence rule and are neither
 * kept nor counted against the frame limit; a run ended by the silence rule
 * is hung, not panic, with the hang's backtrace and a signature naming the
 * function the CPU was stuck in (docs/kernel-bugs.md). */
static void test_heartbeat_and_silence(void **state)
{
	(void)state;
	struct guest_state *s = new_state();
	feed_frame(s, "hello", "{\"agent\":\"schedlab-agent\"}");
	assert_false(s->heartbeat);
	guest_state_free(s);

	s = new_state();
	feed_frame(s, "hello", "{\"agent\":\"schedlab-agent\",\"heartbeat_s\":1}");
	assert_true(s->heartbeat);
	for (int i = 0; i < GUEST_MAX_FRAMES + 5; i++)
		feed_frame(s, "heartbeat", "{\"n\":1}");
	assert_int_equal(s->n_frames, 1);
	assert_int_equal(s->dropped_frames, 0);

	char *console = NULL;
	size_t len = 0;
	struct sl_error err = {0};
	if (fs_read_file("data/console/hang-nmi-6.1.txt", 1 << 20, &console, &len, &err) < 0)
		fail_msg("%s", err.message);
	console_events_begin_hang(s->ce, 31);
	console_events_feed(s->ce, console, len);
	free(console);
	struct guest_outcome *o = calloc(1, sizeof(*o));
	pthread_mutex_lock(&s->lock);
	guest_outcome_fill(s, o, true, 185, false, 31);
	pthread_mutex_unlock(&s->lock);
	assert_string_equal(o->status, "hung");
	assert_non_null(strstr(o->reason, "no heartbeat and no console output for 31 s"));
	json_object *hang = json_object_array_get_idx(o->events, 0);
	assert_string_equal(json_object_get_string(json_object_object_get(hang, "kind")), "hang");
	json_object *sig = json_object_object_get(hang, "signature");
	assert_string_equal(json_object_get_string(json_object_object_get(sig, "kind")), "hang");
	assert_string_equal(json_object_get_string(json_object_object_get(sig, "title")),
			    HANG_TITLE);
	/* The backtrace is in the excerpt; the NMI's panic is part of the hang. */
	assert_non_null(
	    strstr(json_object_get_string(json_object_object_get(hang, "excerpt")), "Call Trace:"));
	json_object *panic = json_object_array_get_idx(o->events, 1);
	assert_string_equal(json_object_get_string(json_object_object_get(panic, "kind")), "panic");
	assert_int_equal(json_object_get_int(json_object_object_get(panic, "part_of")), 0);
	guest_outcome_free(o);
	guest_state_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_payload_accepts_strict_json),
	    cmocka_unit_test(test_payload_rejects_lenient_json),
	    cmocka_unit_test(test_payload_depth_bound),
	    cmocka_unit_test(test_frames_into_outcome),
	    cmocka_unit_test(test_frames_bounded),
	    cmocka_unit_test(test_heartbeat_and_silence),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
