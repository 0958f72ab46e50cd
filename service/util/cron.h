/* Cron-like schedule expressions in UTC: five fields, "minute hour
 * day-of-month month day-of-week", each "*", a number, a range "a-b", a
 * step "*" "/n" or "a-b/n" or "a/n" (a to the field's end), or a comma list
 * of those. Day of week is 0-7 (0 and 7 are Sunday). As in cron, when both
 * day-of-month and day-of-week are restricted (neither starts with '*'), a
 * day matches when EITHER matches; otherwise both must. No names (JAN,
 * MON), no @daily: a config states the fields. UTC has no DST, so every
 * slot happens exactly once. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "util/error.h"

#define CRON_TEXT_MAX 128

struct cron {
	uint64_t minutes; /* bit i: minute i (0-59) */
	uint32_t hours;	  /* bit i: hour i (0-23) */
	uint32_t mdays;	  /* bit i: day of month i (1-31) */
	uint16_t months;  /* bit i: month i (1-12) */
	uint8_t wdays;	  /* bit i: weekday i (0-6, Sunday 0) */
	bool mday_any;	  /* day-of-month field starts with '*' */
	bool wday_any;	  /* day-of-week field starts with '*' */
};

/* Parses text into *ret. On error, err's path is `path` and the message
 * names the field ("minute", "hour", "day-of-month", "month",
 * "day-of-week") and the reason. An expression that never fires (such as
 * "0 0 30 2 *") is an error too. Returns 0 or -EINVAL. */
int cron_parse(const char *text, const char *path, struct cron *ret, struct sl_error *err);
/* The first slot strictly after t (seconds since the epoch, UTC), or -1
 * when none comes within 8 years. */
time_t cron_next(const struct cron *c, time_t t);
/* The last slot at or before t, or -1 when none came within 8 years. */
time_t cron_prev(const struct cron *c, time_t t);
