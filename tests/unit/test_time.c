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

/* Deadlines carry nanoseconds into seconds, for whole and fractional waits. */
static void test_deadline(void **state)
{
	(void)state;
	const double waits[] = {0, 0.2, 0.999999999, 1.75, 60};
	for (size_t i = 0; i < sizeof(waits) / sizeof(waits[0]); i++) {
		struct timespec now, d = time_deadline(CLOCK_MONOTONIC, waits[i]);
		clock_gettime(CLOCK_MONOTONIC, &now);
		assert_true(d.tv_nsec >= 0 && d.tv_nsec < 1000000000L);
		double left =
		    (double)(d.tv_sec - now.tv_sec) + (double)(d.tv_nsec - now.tv_nsec) / 1e9;
		assert_true(left <= waits[i] + 1e-6);
		assert_true(left > waits[i] - 0.05);
	}
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
	    cmocka_unit_test(test_deadline),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
