/* The strict JSON entry point (service/util/json.c) and the member
 * accessors every stage reads its documents with (util/json_get.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/json.h"
#include "util/json_get.h"

/* Parses s (of len bytes) and expects failure with r, kind and a message
 * holding every NULL-terminated fragment. */
static void expect_fail(const char *s, size_t len, const struct json_limits *lim, int r,
			enum error_kind kind, ...)
{
	struct sl_error err = {0};
	json_object *o = (json_object *)1;
	va_list ap;

	assert_int_equal(json_parse_strict(s, len, lim, "request body", &o, &err), r);
	assert_ptr_equal(o, (json_object *)1);
	assert_int_equal(err.kind, kind);
	assert_string_equal(err.path, "$");
	assert_true(strncmp(err.message, "The request body ", 17) == 0);
	assert_int_equal(err.message[strlen(err.message) - 1], '.');
	va_start(ap, kind);
	for (const char *frag = va_arg(ap, const char *); frag; frag = va_arg(ap, const char *))
		if (!strstr(err.message, frag))
			fail_msg("'%s' not in '%s'", frag, err.message);
	va_end(ap);
}

static void test_good_input(void **state)
{
	static const char *const good[] = {"{\"a\": [1, 2.5, true, null, \"x\"]}",
					   "  {}\n",
					   "[]",
					   "123",
					   "\"caf\xc3\xa9\"",
					   "\"it's\"",
					   "[\"\\\"'\"]",
					   "{\"emoji\": \"\xf0\x9f\x98\x80\"}\r\n\t ",
					   "-0.5e3",
					   "null"};
	(void)state;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		/* "null" is the one good input that gives NULL */
		struct sl_error err = {0};
		json_object *o = NULL;
		int r = json_parse_strict(good[i], strlen(good[i]), NULL, "request body", &o, &err);
		if (r < 0)
			fail_msg("'%s': %s", good[i], err.message);
		json_object_put(o);
	}
	/* Not NUL-terminated: only len bytes count. */
	json_object *o = NULL;
	assert_int_equal(json_parse_strict("{\"n\":42}GARBAGE", 8, NULL, "x", &o, NULL), 0);
	assert_int_equal(json_object_get_int(json_object_object_get(o, "n")), 42);
	json_object_put(o);
	o = NULL;
	assert_int_equal(json_parse_strict("42}", 2, NULL, "x", &o, NULL), 0);
	assert_int_equal(json_object_get_int(o), 42);
	json_object_put(o);
}

static void test_bad_utf8(void **state)
{
	(void)state;
	/* a lone continuation byte, an overlong '/', a surrogate, a cut-off sequence */
	expect_fail("{\"a\": \"\x80\"}", 10, NULL, -EINVAL, ERR_INVALID,
		    "is not valid UTF-8 at offset 7.", NULL);
	expect_fail("\"\xc0\xaf\"", 4, NULL, -EINVAL, ERR_INVALID, "UTF-8 at offset 1", NULL);
	expect_fail("\"\xed\xa0\x80\"", 5, NULL, -EINVAL, ERR_INVALID, "UTF-8 at offset 1", NULL);
	expect_fail("\"\xf4\x90\x80\x80\"", 6, NULL, -EINVAL, ERR_INVALID, "UTF-8", NULL);
	expect_fail("\"\xe2\x82\"", 4, NULL, -EINVAL, ERR_INVALID, "UTF-8 at offset 1", NULL);
}

static void test_not_strict(void **state)
{
	(void)state;
	/* what json_tokener_parse() would let through */
	expect_fail("{'a': 1}", 8, NULL, -EINVAL, ERR_INVALID, "offset 1", "double quotes", NULL);
	expect_fail("[\"a\\\"\", 'b']", 12, NULL, -EINVAL, ERR_INVALID, "offset 8", NULL);
	expect_fail("[1, 2,]", 7, NULL, -EINVAL, ERR_INVALID, "not valid JSON", NULL);
	expect_fail("{\"a\": 1 /* c */}", 16, NULL, -EINVAL, ERR_INVALID, "offset 8", NULL);
	expect_fail("", 0, NULL, -EINVAL, ERR_INVALID, "offset 0", "unexpected end of data", NULL);
	expect_fail("  \n ", 4, NULL, -EINVAL, ERR_INVALID, "unexpected end of data", NULL);
	expect_fail("{\"a\": ", 6, NULL, -EINVAL, ERR_INVALID, "unexpected end of data", NULL);
}

static void test_depth_bomb(void **state)
{
	size_t n = 100000;
	char *s = malloc(2 * n);
	(void)state;

	assert_non_null(s);
	memset(s, '[', n);
	memset(s + n, ']', n);
	expect_fail(s, 2 * n, NULL, -EINVAL, ERR_INVALID, "nesting too deep", NULL);
	/* exactly at a small limit is fine, one more is not */
	struct json_limits lim = {.max_depth = 3};
	json_object *o = NULL;
	assert_int_equal(json_parse_strict("[[[1]]]", 7, &lim, "x", &o, NULL), 0);
	json_object_put(o);
	expect_fail("[[[[1]]]]", 9, &lim, -EINVAL, ERR_INVALID, "nesting too deep", "offset 4",
		    NULL);
	free(s);
}

static void test_oversized(void **state)
{
	struct json_limits lim = {.max_bytes = 8};
	json_object *o = NULL;
	(void)state;

	assert_int_equal(json_parse_strict("[1,2,3,4]", 9, &lim, "x", &o, NULL), -E2BIG);
	assert_null(o);
	expect_fail("[1,2,3,4]", 9, &lim, -E2BIG, ERR_TOO_LARGE, "9 bytes", "limit of 8 bytes",
		    NULL);
	assert_int_equal(json_parse_strict("[1,2,3]", 7, &lim, "x", &o, NULL), 0);
	json_object_put(o);
}

/* A body of small values is refused by its value count before json-c
 * builds an object per value; commas and brackets inside strings do not
 * count. */
static void test_too_many_values(void **state)
{
	(void)state;
	/* the array and its five numbers: six */
	const struct json_limits lim = {.max_values = 6};
	json_object *o = NULL;
	struct sl_error err = {0};
	assert_int_equal(json_parse_strict("[1,2,3,4,5]", 11, &lim, "body", &o, &err), 0);
	json_object_put(o);
	o = NULL;
	assert_int_equal(json_parse_strict("[1,2,3,4,5,6]", 13, &lim, "body", &o, &err), -E2BIG);
	assert_null(o);
	assert_int_equal(err.kind, ERR_TOO_LARGE);
	assert_non_null(strstr(err.message, "more than 6 JSON values"));
	const char *s = "{\"a\":\"[,,,{,,,[,,,\"}";
	assert_int_equal(json_parse_strict(s, strlen(s), &lim, "body", &o, &err), 0);
	json_object_put(o);
	/* no bound by default */
	o = NULL;
	assert_int_equal(json_parse_strict("[1,2,3,4,5,6]", 13, NULL, "body", &o, &err), 0);
	json_object_put(o);
}

static void test_trailing_garbage(void **state)
{
	(void)state;
	expect_fail("{} x", 4, NULL, -EINVAL, ERR_INVALID, "bytes after its JSON value", "offset 3",
		    NULL);
	expect_fail("{}{}", 4, NULL, -EINVAL, ERR_INVALID, "offset 2", NULL);
	expect_fail("1 2", 3, NULL, -EINVAL, ERR_INVALID, "offset 2", NULL);
	expect_fail("[1]\n]", 5, NULL, -EINVAL, ERR_INVALID, "offset 4", NULL);
}

static void test_nul_byte(void **state)
{
	(void)state;
	expect_fail("{\"a\":\"b\0c\"}", 11, NULL, -EINVAL, ERR_INVALID, "NUL byte", "offset 7",
		    NULL);
	/* a NUL after the value is still a NUL, not the end */
	expect_fail("{}\0", 3, NULL, -EINVAL, ERR_INVALID, "NUL byte", "offset 2", NULL);
}

static void test_offset_and_line(void **state)
{
	struct sl_error err = {0};
	json_object *o = NULL;
	const char *s = "{\n  \"a\": 1,\n  \"b\": tru\n}";
	(void)state;

	assert_int_equal(json_parse_strict(s, strlen(s), NULL, "job file 'x.json'", &o, &err),
			 -EINVAL);
	assert_non_null(strstr(err.message, "The job file 'x.json' is not valid JSON at offset "));
	assert_non_null(strstr(err.message, "(line 3, column "));
	/* NULL err is fine */
	assert_int_equal(json_parse_strict("{", 1, NULL, "x", &o, NULL), -EINVAL);
	assert_null(o);
}

static void test_read_file(void **state)
{
	char path[] = "/tmp/test_json.XXXXXX";
	struct sl_error err = {0};
	json_object *o = NULL;
	(void)state;

	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "{\"k\": [1]}\n", 11), 11);
	close(fd);
	assert_int_equal(json_read_file_strict(path, 0, "job file", &o, &err), 0);
	assert_non_null(json_object_object_get(o, "k"));
	json_object_put(o);
	o = NULL;
	assert_int_equal(json_read_file_strict(path, 4, "job file", &o, &err), -EFBIG);
	assert_int_equal(err.kind, ERR_TOO_LARGE);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "{\"k\": [1,]}", 11), 11);
	close(fd);
	assert_int_equal(json_read_file_strict(path, 0, "job file", &o, &err), -EINVAL);
	assert_non_null(strstr(err.message, "The job file '"));
	assert_non_null(strstr(err.message, "' is not valid JSON at offset 9"));
	assert_null(o);
	unlink(path);
	assert_int_equal(json_read_file_strict(path, 0, NULL, &o, &err), -ENOENT);
	assert_int_equal(err.kind, ERR_NOT_FOUND);
}

/* json-c takes NaN, Infinity and 1e999 even when strict; JSON has none. */
static void test_nonfinite_numbers(void **state)
{
	(void)state;
	static const char *const bad[] = {"NaN", "[1,Infinity]", "{\"a\":[-Infinity]}",
					  "{\"a\":{\"b\":1e999}}", "-1e400"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_fail(bad[i], strlen(bad[i]), NULL, -EINVAL, ERR_INVALID, "holds the number",
			    "which is not finite", NULL);
	json_object *o = NULL;
	assert_int_equal(json_parse_strict("[1e308,-2.5e-300]", 17, NULL, "x", &o, NULL), 0);
	json_object_put(o);
}

/* max_values: counted before parsing, so a small input of many small values
 * is refused before json-c spends memory on it. */
static void test_value_bound(void **state)
{
	(void)state;
	assert_int_equal(json_value_count("1", 1), 1);
	assert_int_equal(json_value_count("[1,2,3]", 7), 4);
	/* brackets and commas inside strings are not values */
	assert_int_equal(json_value_count("[\"[,{\\\",\"]", 10), 2);
	const struct json_limits lim = {.max_values = 4};
	json_object *o = NULL;
	assert_int_equal(json_parse_strict("[1,2,3]", 7, &lim, "x", &o, NULL), 0);
	json_object_put(o);
	expect_fail("[1,2,3,4]", 9, &lim, -E2BIG, ERR_TOO_LARGE, "holds more than 4 JSON values",
		    NULL);
}

/* The accessors that replaced each file's own get(): NULL for a NULL or
 * non-object document, an absent member and a null one, never an assertion. */
static void test_member_accessors(void **state)
{
	(void)state;
	json_object *o = json_tokener_parse("{\"s\":\"x\",\"n\":1,\"z\":null,\"a\":[1]}");
	assert_non_null(o);
	assert_non_null(json_member(o, "n"));
	assert_null(json_member(o, "z"));
	assert_null(json_member(o, "missing"));
	assert_null(json_member(NULL, "n"));
	assert_null(json_member(json_member(o, "a"), "n"));
	assert_string_equal(json_member_string(o, "s"), "x");
	assert_null(json_member_string(o, "n"));
	assert_null(json_member_string(o, "z"));
	assert_null(json_member_string(o, "missing"));
	assert_null(json_member_string(NULL, "s"));
	assert_null(json_member_string(json_member(o, "s"), "s"));
	json_object_put(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_good_input),	     cmocka_unit_test(test_bad_utf8),
	    cmocka_unit_test(test_not_strict),	     cmocka_unit_test(test_depth_bomb),
	    cmocka_unit_test(test_oversized),	     cmocka_unit_test(test_trailing_garbage),
	    cmocka_unit_test(test_nul_byte),	     cmocka_unit_test(test_offset_and_line),
	    cmocka_unit_test(test_read_file),	     cmocka_unit_test(test_nonfinite_numbers),
	    cmocka_unit_test(test_value_bound),	     cmocka_unit_test(test_too_many_values),
	    cmocka_unit_test(test_member_accessors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
