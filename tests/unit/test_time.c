/* Clocks and timestamps (service/util/time.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "util/time.h"

static void test_monotonic(void **state)
{
	(void)state;
	uint64_t n0 = time_monotonic_ns();
	double s0 = time_monotonic_s();
	struct timespec d = {.tv_nsec = 2000000};
	nanosleep(&d, NULL);
	uint64_t n1 = time_monotonic_ns();
	double s1 = time_monotonic_s();
	assert_true(n1 - n0 >= 2000000);
	assert_true(s1 - s0 >= 0.002);
	/* the two agree on the same clock */
	assert_true(s1 - (double)n1 / 1e9 < 0.5 && s1 - (double)n1 / 1e9 > -0.5);
}

static void test_iso8601(void **state)
{
	char buf[TIME_ISO8601_MAX];
	(void)state;

	assert_string_equal(time_iso8601(0, buf), "1970-01-01T00:00:00Z");
	assert_string_equal(time_iso8601(1767182400, buf), "2025-12-31T12:00:00Z");
	assert_ptr_equal(time_now_iso8601(buf), buf);
	assert_int_equal(strlen(buf), 20);
	assert_int_equal(buf[10], 'T');
	assert_int_equal(buf[19], 'Z');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_monotonic),
	    cmocka_unit_test(test_iso8601),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
