/* Checked integer, floating-point and duration parsing (service/util/parse.c). */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "util/parse.h"

static void test_parse_int(void **state)
{
	long v = 7;
	(void)state;

	assert_int_equal(parse_int("42", 0, 100, &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(parse_int("-5", -10, 10, &v), 0);
	assert_int_equal(v, -5);
	assert_int_equal(parse_int("+3", 0, 10, &v), 0);
	assert_int_equal(v, 3);
	assert_int_equal(parse_int("0", 0, 0, &v), 0);
	assert_int_equal(v, 0);
	v = 7;
	static const char *const bad[] = {"",  " 1",   "1 ",  "1x",  "x",   "-",
					  "+", "0x10", "1.5", "--1", "1e3", "\t2"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (parse_int(bad[i], LONG_MIN, LONG_MAX, &v) != -EINVAL)
			fail_msg("'%s' was not -EINVAL", bad[i]);
	assert_int_equal(parse_int(NULL, 0, 1, &v), -EINVAL);
	assert_int_equal(parse_int("101", 0, 100, &v), -ERANGE);
	assert_int_equal(parse_int("-1", 0, 100, &v), -ERANGE);
	assert_int_equal(parse_int("99999999999999999999", LONG_MIN, LONG_MAX, &v), -ERANGE);
	assert_int_equal(parse_int("-99999999999999999999", LONG_MIN, LONG_MAX, &v), -ERANGE);
	/* *ret is written only on success */
	assert_int_equal(v, 7);
}

static void test_parse_uint64(void **state)
{
	unsigned long long v = 7;
	(void)state;

	assert_int_equal(parse_uint64("18446744073709551615", ULLONG_MAX, &v), 0);
	assert_true(v == ULLONG_MAX);
	assert_int_equal(parse_uint64("1024", 1024, &v), 0);
	assert_int_equal(v, 1024);
	assert_int_equal(parse_uint64("1025", 1024, &v), -ERANGE);
	assert_int_equal(parse_uint64("18446744073709551616", ULLONG_MAX, &v), -ERANGE);
	assert_int_equal(parse_uint64("-1", ULLONG_MAX, &v), -EINVAL);
	assert_int_equal(parse_uint64("+1", ULLONG_MAX, &v), -EINVAL);
	assert_int_equal(parse_uint64("", ULLONG_MAX, &v), -EINVAL);
	assert_int_equal(parse_uint64("12k", ULLONG_MAX, &v), -EINVAL);
	assert_int_equal(v, 1024);
}

static void test_parse_duration(void **state)
{
	static const struct {
		const char *s;
		long seconds;
	} good[] = {
	    {"30d", 30L * 86400},
	    {"12h", 12 * 3600},
	    {"15m", 900},
	    {"90s", 90},
	    {"120", 120},
	    {"1", 1},
	    {"3650d", PARSE_DURATION_MAX},
	};
	long v = 0;
	(void)state;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		v = 0;
		assert_int_equal(parse_duration(good[i].s, &v), 0);
		assert_int_equal(v, good[i].seconds);
	}
	v = 7;
	static const char *const bad[] = {"",	  "d",	  "0",	  "0d",	  "-1d", "30x",
					  "30dd", "30 d", " 30d", "1.5h", "30D", NULL};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (parse_duration(bad[i], &v) != -EINVAL)
			fail_msg("'%s' was not -EINVAL", bad[i] ? bad[i] : "(null)");
	assert_int_equal(parse_duration("3651d", &v), -ERANGE);
	assert_int_equal(parse_duration("99999999999999999999999s", &v), -ERANGE);
	assert_int_equal(v, 7);
}

static void test_parse_double(void **state)
{
	static const char *const bad[] = {"",	  " 1",	  "1 ", "0x10", "nan", "inf",
					  "-inf", "1.5x", ".",	"e5",	"1e",  "--1"};
	double v = 7;
	(void)state;

	assert_int_equal(parse_double("0.52", &v), 0);
	assert_true(v == 0.52);
	assert_int_equal(parse_double("-3", &v), 0);
	assert_true(v == -3);
	assert_int_equal(parse_double("1700000000.25", &v), 0);
	assert_true(v == 1700000000.25);
	assert_int_equal(parse_double("1e3", &v), 0);
	assert_true(v == 1000);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (parse_double(bad[i], &v) != -EINVAL)
			fail_msg("accepted '%s'", bad[i]);
	v = 7;
	assert_int_equal(parse_double("1e999", &v), -ERANGE);
	assert_true(v == 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_int),
	    cmocka_unit_test(test_parse_uint64),
	    cmocka_unit_test(test_parse_duration),
	    cmocka_unit_test(test_parse_double),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
