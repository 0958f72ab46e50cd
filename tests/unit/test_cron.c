/* Cron-like expressions (service/util/cron.c): parsing, errors naming the
 * field, next and previous slots in UTC across month and year ends, and the
 * day-of-month / day-of-week OR rule. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "util/cron.h"
#include "util/time.h"

/* Seconds since the epoch of a UTC "YYYY-MM-DDTHH:MM:SSZ". */
static time_t at(const char *iso)
{
	struct tm tm = {0};
	assert_non_null(strptime(iso, "%Y-%m-%dT%H:%M:%SZ", &tm));
	return timegm(&tm);
}

static const char *iso(time_t t, char buf[TIME_ISO8601_MAX])
{
	return time_iso8601(t, buf);
}

static void expect_next(const char *expr, const char *from, const char *want)
{
	struct cron c;
	struct sl_error err = {0};
	char buf[TIME_ISO8601_MAX];
	assert_int_equal(cron_parse(expr, "at", &c, &err), 0);
	assert_string_equal(iso(cron_next(&c, at(from)), buf), want);
}

static void expect_prev(const char *expr, const char *from, const char *want)
{
	struct cron c;
	struct sl_error err = {0};
	char buf[TIME_ISO8601_MAX];
	assert_int_equal(cron_parse(expr, "at", &c, &err), 0);
	assert_string_equal(iso(cron_prev(&c, at(from)), buf), want);
}

static void expect_error(const char *expr, const char *field)
{
	struct cron c;
	struct sl_error err = {0};
	assert_int_equal(cron_parse(expr, "schedules[0].at", &c, &err), -EINVAL);
	assert_string_equal(err.path, "schedules[0].at");
	if (!strstr(err.message, field))
		fail_msg("'%s': message '%s' does not name '%s'", expr, err.message, field);
}

static void test_every_minute(void **state)
{
	(void)state;
	/* strictly after: a time on a slot gives the next one */
	expect_next("* * * * *", "2026-12-04T23:59:00Z", "2026-12-05T00:00:00Z");
	expect_next("* * * * *", "2026-12-04T23:58:59Z", "2026-12-04T23:59:00Z");
	/* at or before: a time on a slot is that slot */
	expect_prev("* * * * *", "2026-12-04T23:59:00Z", "2026-12-04T23:59:00Z");
	expect_prev("* * * * *", "2026-12-04T23:59:59Z", "2026-12-04T23:59:00Z");
}

static void test_nightly(void **state)
{
	(void)state;
	expect_next("30 2 * * *", "2026-12-04T02:30:00Z", "2026-12-05T02:30:00Z");
	expect_next("30 2 * * *", "2026-12-31T03:00:00Z", "2027-01-01T02:30:00Z");
	expect_prev("30 2 * * *", "2026-12-04T02:29:59Z", "2026-12-03T02:30:00Z");
	expect_prev("30 2 * * *", "2027-01-01T00:00:00Z", "2026-12-31T02:30:00Z");
	/* UTC has no DST: the last Sunday of March is an ordinary day */
	expect_next("30 2 * * *", "2026-03-29T00:00:00Z", "2026-03-29T02:30:00Z");
}

static void test_lists_ranges_steps(void **state)
{
	(void)state;
	expect_next("*/15 * * * *", "2026-12-04T10:46:00Z", "2026-12-04T11:00:00Z");
	expect_next("5,35 8-9 * * *", "2026-12-04T09:35:00Z", "2026-12-05T08:05:00Z");
	expect_next("0 1-23/6 * * *", "2026-12-04T07:00:00Z", "2026-12-04T13:00:00Z");
	/* "a/n" runs from a to the field's end */
	expect_next("50/5 * * * *", "2026-12-04T10:56:00Z", "2026-12-04T11:50:00Z");
	expect_prev("0 0 1 */3 *", "2026-12-04T00:00:00Z", "2026-10-01T00:00:00Z");
}

static void test_month_ends(void **state)
{
	(void)state;
	/* day 31 skips the months without one */
	expect_next("0 0 31 * *", "2026-01-31T00:00:00Z", "2026-03-31T00:00:00Z");
	expect_prev("0 0 31 * *", "2026-07-30T00:00:00Z", "2026-05-31T00:00:00Z");
	/* 29 February: the next leap year */
	expect_next("0 12 29 2 *", "2026-01-01T00:00:00Z", "2028-02-29T12:00:00Z");
	expect_prev("0 12 29 2 *", "2028-02-28T00:00:00Z", "2024-02-29T12:00:00Z");
	expect_next("59 23 28-31 2 *", "2027-02-28T23:59:00Z", "2028-02-28T23:59:00Z");
}

static void test_day_of_week(void **state)
{
	(void)state;
	/* 2026-12-04 is a Friday; 0 and 7 are both Sunday */
	expect_next("0 3 * * 1", "2026-12-04T00:00:00Z", "2026-12-07T03:00:00Z");
	expect_next("0 3 * * 0", "2026-12-04T00:00:00Z", "2026-12-06T03:00:00Z");
	expect_next("0 3 * * 7", "2026-12-04T00:00:00Z", "2026-12-06T03:00:00Z");
	expect_next("0 3 * * 1-5", "2026-12-04T04:00:00Z", "2026-12-07T03:00:00Z");
	/* both restricted: either matches (the 13th, or any Friday) */
	expect_next("0 0 13 * 5", "2026-12-04T01:00:00Z", "2026-12-11T00:00:00Z");
	expect_next("0 0 13 * 5", "2026-12-11T01:00:00Z", "2026-12-13T00:00:00Z");
	/* one of them '*': both must, so only the day of month counts */
	expect_next("0 0 13 * *", "2026-12-04T01:00:00Z", "2026-12-13T00:00:00Z");
	/* a step starting with '*' counts as unrestricted, as in cron */
	expect_next("0 0 */10 * 5", "2026-12-04T01:00:00Z", "2026-12-11T00:00:00Z");
	/* 30 February never comes, but the OR rule fires on Mondays */
	expect_next("0 0 30 2 1", "2026-12-04T00:00:00Z", "2027-02-01T00:00:00Z");
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("* * * *", "5");
	expect_error("* * * * * *", "5 fields");
	expect_error("60 * * * *", "minute");
	expect_error("* 24 * * *", "hour");
	expect_error("* * 0 * *", "day-of-month");
	expect_error("* * 32 * *", "day-of-month");
	expect_error("* * * 13 *", "month");
	expect_error("* * * JAN *", "month");
	expect_error("* * * * 8", "day-of-week");
	expect_error("* * * * 5-1", "day-of-week");
	expect_error("*/0 * * * *", "minute");
	expect_error("1,,2 * * * *", "minute");
	expect_error("1- * * * *", "minute");
	expect_error("* 1/ * * *", "hour");
	expect_error("0 0 30 2 *", "never fires");
	expect_error("0 0 31 4,6,9,11 *", "never fires");
	expect_error("", "0 fields");
	struct cron c;
	struct sl_error err = {0};
	assert_int_equal(cron_parse(NULL, "at", &c, &err), -EINVAL);
	char longer[CRON_TEXT_MAX + 8];
	memset(longer, '1', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	assert_int_equal(cron_parse(longer, "at", &c, &err), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_minute),       cmocka_unit_test(test_nightly),
	    cmocka_unit_test(test_lists_ranges_steps), cmocka_unit_test(test_month_ends),
	    cmocka_unit_test(test_day_of_week),	       cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
