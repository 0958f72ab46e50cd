/* Clocks and timestamps. See time.h. */
#include "util/time.h"

double time_monotonic_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

uint64_t time_monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct timespec time_deadline(clockid_t clock, double seconds)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	long long ns = (long long)ts.tv_nsec + (long long)(seconds * 1e9);
	ts.tv_sec += (time_t)(ns / 1000000000LL);
	ts.tv_nsec = (long)(ns % 1000000000LL);
	return ts;
}

char *time_iso8601(time_t t, char buf[static TIME_ISO8601_MAX])
{
	struct tm tm;

	if (!gmtime_r(&t, &tm) || strftime(buf, TIME_ISO8601_MAX, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		buf[0] = '\0';
	return buf;
}

char *time_now_iso8601(char buf[static TIME_ISO8601_MAX])
{
	return time_iso8601(time(NULL), buf);
}
