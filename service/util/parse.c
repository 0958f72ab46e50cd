/* Checked integer and duration parsing. See parse.h. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/parse.h"

int parse_int(const char *s, long min, long max, long *ret)
{
	char *end = NULL;

	/* strtol would skip leading space; a number from outside starts at once. */
	if (!s || !(isdigit((unsigned char)s[0]) || s[0] == '-' || s[0] == '+'))
		return -EINVAL;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (end == s || *end || !isdigit((unsigned char)end[-1]))
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	if (errno)
		return -EINVAL;
	*ret = v;
	return 0;
}

int parse_uint64(const char *s, unsigned long long max, unsigned long long *ret)
{
	char *end = NULL;

	/* strtoull accepts "-1" and wraps it: digits only. */
	if (!s || !isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE || v > max)
		return -ERANGE;
	if (errno)
		return -EINVAL;
	*ret = v;
	return 0;
}

int parse_double(const char *s, double *ret)
{
	char *end = NULL;

	/* strtod takes leading space, hex, "nan" and "inf"; a number from outside
	 * is digits, a sign, a point and an exponent only. */
	if (!s || !*s || s[strspn(s, "0123456789+-.eE")] != '\0')
		return -EINVAL;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end)
		return -EINVAL;
	if (errno == ERANGE && (v > 1 || v < -1))
		return -ERANGE;
	if (!isfinite(v))
		return -ERANGE;
	*ret = v;
	return 0;
}

int parse_duration(const char *s, long *ret_seconds)
{
	long mult = 1, v = 0;
	size_t n = 0;

	if (!s)
		return -EINVAL;
	while (isdigit((unsigned char)s[n])) {
		if (v > PARSE_DURATION_MAX)
			return -ERANGE; /* keep going would overflow; already too long */
		v = v * 10 + (s[n] - '0');
		n++;
	}
	if (n == 0 || v <= 0)
		return -EINVAL;
	switch (s[n]) {
	case '\0':
		break;
	case 'd':
		mult = 86400;
		break;
	case 'h':
		mult = 3600;
		break;
	case 'm':
		mult = 60;
		break;
	case 's':
		break;
	default:
		return -EINVAL;
	}
	if (s[n] && s[n + 1])
		return -EINVAL;
	if (v > PARSE_DURATION_MAX / mult)
		return -ERANGE;
	*ret_seconds = v * mult;
	return 0;
}
