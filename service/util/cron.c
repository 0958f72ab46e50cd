/* Cron-like expressions in UTC; see cron.h for the grammar and the
 * day-of-month / day-of-week rule. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/cron.h"

#define CRON_HORIZON_S (8LL * 366 * 86400) /* a leap day fits twice */

struct field {
	const char *name;
	int min, max;
};

static const struct field fields[5] = {
    {"minute", 0, 59}, {"hour", 0, 23},	      {"day-of-month", 1, 31},
    {"month", 1, 12},  {"day-of-week", 0, 7},
};

/* A decimal number of at most 2 digits at *p; advances *p. */
static int number(const char **p, int *ret)
{
	const char *s = *p;
	int n = 0, digits = 0;
	while (isdigit((unsigned char)*s) && digits < 3) {
		n = n * 10 + (*s - '0');
		s++;
		digits++;
	}
	if (digits == 0 || digits > 2)
		return -EINVAL;
	*p = s;
	*ret = n;
	return 0;
}

/* One comma-separated item of field f ("*", "a", "a-b", each with an
 * optional "/step") into the bit set *bits. */
static int parse_item(const char *item, const struct field *f, uint64_t *bits, const char *path,
		      struct sl_error *err)
{
	const char *p = item;
	int lo = f->min, hi = f->max, step = 1;
	bool star = false, range = false;
	if (*p == '*') {
		star = true;
		p++;
	} else {
		if (number(&p, &lo) < 0)
			return error_set_path(err, ERR_INVALID, path,
					      "Field %s: '%s' is not *, a number, a range a-b or a "
					      "step */n.",
					      f->name, item);
		hi = lo;
		if (*p == '-') {
			p++;
			range = true;
			if (number(&p, &hi) < 0)
				return error_set_path(
				    err, ERR_INVALID, path,
				    "Field %s: the range '%s' has no number after "
				    "'-'.",
				    f->name, item);
		}
	}
	if (*p == '/') {
		p++;
		if (number(&p, &step) < 0 || step < 1 || step > f->max)
			return error_set_path(err, ERR_INVALID, path,
					      "Field %s: the step in '%s' must be 1..%d.", f->name,
					      item, f->max);
		if (!star && !range)
			hi = f->max; /* "a/n": from a to the field's end, as cron has it */
	}
	if (*p)
		return error_set_path(err, ERR_INVALID, path,
				      "Field %s: '%s' is not *, a number, a range a-b or a step "
				      "*/n.",
				      f->name, item);
	if (lo < f->min || hi > f->max || lo > hi)
		return error_set_path(err, ERR_INVALID, path,
				      "Field %s: '%s' is outside %d..%d or a backward range.",
				      f->name, item, f->min, f->max);
	for (int v = lo; v <= hi; v += step)
		*bits |= 1ULL << v;
	return 0;
}

static int parse_field(char *text, const struct field *f, uint64_t *bits, const char *path,
		       struct sl_error *err)
{
	char *save = NULL;
	*bits = 0;
	if (text[0] == ',' || text[strlen(text) - 1] == ',' || strstr(text, ",,"))
		return error_set_path(err, ERR_INVALID, path, "Field %s: '%s' has an empty item.",
				      f->name, text);
	for (char *item = strtok_r(text, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		int r = parse_item(item, f, bits, path, err);
		if (r < 0)
			return r;
	}
	return 0;
}

int cron_parse(const char *text, const char *path, struct cron *ret, struct sl_error *err)
{
	if (!text || strlen(text) > CRON_TEXT_MAX)
		return error_set_path(err, ERR_INVALID, path,
				      "A schedule must be a text of at most %d characters.",
				      CRON_TEXT_MAX);
	char buf[CRON_TEXT_MAX + 1];
	snprintf(buf, sizeof(buf), "%s", text);
	char *parts[6] = {0}, *save = NULL;
	size_t n = 0;
	for (char *t = strtok_r(buf, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
		if (n == 5)
			return error_set_path(err, ERR_INVALID, path,
					      "'%s' has more than 5 fields (minute hour "
					      "day-of-month month day-of-week).",
					      text);
		parts[n++] = t;
	}
	if (n != 5)
		return error_set_path(err, ERR_INVALID, path,
				      "'%s' has %zu fields, not 5 (minute hour day-of-month month "
				      "day-of-week).",
				      text, n);
	struct cron c = {0};
	uint64_t bits[5];
	for (size_t i = 0; i < 5; i++) {
		int r = parse_field(parts[i], &fields[i], &bits[i], path, err);
		if (r < 0)
			return r;
	}
	c.minutes = bits[0];
	c.hours = (uint32_t)bits[1];
	c.mdays = (uint32_t)bits[2];
	c.months = (uint16_t)bits[3];
	c.wdays = (uint8_t)((bits[4] | (bits[4] >> 7)) & 0x7f); /* 7 is Sunday too */
	c.mday_any = parts[2][0] == '*';
	c.wday_any = parts[4][0] == '*';
	if (cron_next(&c, 0) < 0)
		return error_set_path(err, ERR_INVALID, path,
				      "'%s' never fires: field day-of-month names no day its "
				      "months have.",
				      text);
	*ret = c;
	return 0;
}

static bool day_matches(const struct cron *c, const struct tm *tm)
{
	bool mday = c->mdays & (1U << tm->tm_mday);
	bool wday = c->wdays & (1U << tm->tm_wday);
	if (c->mday_any || c->wday_any)
		return mday && wday;
	return mday || wday; /* both restricted: either, as cron has it */
}

time_t cron_next(const struct cron *c, time_t t)
{
	long long limit = (long long)t + CRON_HORIZON_S;
	t = t - ((t % 60) + 60) % 60 + 60;
	while ((long long)t <= limit) {
		struct tm tm;
		if (!gmtime_r(&t, &tm))
			return -1;
		if (!(c->months & (1U << (tm.tm_mon + 1)))) {
			tm.tm_mon++;
			tm.tm_mday = 1;
			tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
			t = timegm(&tm);
		} else if (!day_matches(c, &tm)) {
			tm.tm_mday++;
			tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
			t = timegm(&tm);
		} else if (!(c->hours & (1U << tm.tm_hour))) {
			tm.tm_hour++;
			tm.tm_min = tm.tm_sec = 0;
			t = timegm(&tm);
		} else if (!(c->minutes & (1ULL << tm.tm_min))) {
			t += 60;
		} else {
			return t;
		}
	}
	return -1;
}

time_t cron_prev(const struct cron *c, time_t t)
{
	long long limit = (long long)t - CRON_HORIZON_S;
	t = t - ((t % 60) + 60) % 60;
	while ((long long)t >= limit) {
		struct tm tm;
		if (!gmtime_r(&t, &tm))
			return -1;
		if (!(c->months & (1U << (tm.tm_mon + 1)))) {
			tm.tm_mday = 1;
			tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
			t = timegm(&tm) - 60; /* the last minute of the month before */
		} else if (!day_matches(c, &tm)) {
			tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
			t = timegm(&tm) - 60;
		} else if (!(c->hours & (1U << tm.tm_hour))) {
			tm.tm_min = tm.tm_sec = 0;
			t = timegm(&tm) - 60;
		} else if (!(c->minutes & (1ULL << tm.tm_min))) {
			t -= 60;
		} else {
			return t;
		}
	}
	return -1;
}
