/* The one clock module: monotonic time for durations and timeouts, wall
 * time for timestamps people read. */
#pragma once

#include <stdint.h>
#include <time.h>

/* Size of the buffer time_now_iso8601 fills, NUL included. */
#define TIME_ISO8601_MAX 32

/* CLOCK_MONOTONIC in seconds, for measuring durations. */
double time_monotonic_s(void);
/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t time_monotonic_ns(void);
/* The clock's time seconds (>= 0) from now, as pthread_cond_timedwait wants
 * its deadline (CLOCK_REALTIME, or the clock the condition was made with). */
struct timespec time_deadline(clockid_t clock, double seconds);

/* Writes t as UTC "2026-01-31T12:00:00Z" (the result and store timestamp
 * format) into buf and returns buf. */
char *time_iso8601(time_t t, char buf[static TIME_ISO8601_MAX]);
/* time_iso8601 of the current wall-clock time. */
char *time_now_iso8601(char buf[static TIME_ISO8601_MAX]);
