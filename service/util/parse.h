/* Checked parsing of numbers and durations from outside input (command-line
 * options, query parameters, config values). Nothing is skipped: no leading
 * space, no trailing junk, no empty string. */
#pragma once

/* Ten years: the longest duration parse_duration accepts. */
#define PARSE_DURATION_MAX (3650L * 86400)

/* Parses a decimal integer ("-12", "+7", "300") into *ret. Returns 0, -EINVAL
 * (empty, not a number, trailing characters) or -ERANGE (outside
 * [min, max]); *ret is written only on success. */
int parse_int(const char *s, long min, long max, long *ret);

/* Like parse_int, for a size or count that may exceed a long: digits only,
 * no sign. Returns 0, -EINVAL or -ERANGE (above max). */
int parse_uint64(const char *s, unsigned long long max, unsigned long long *ret);

/* Parses a finite decimal floating-point number ("0.52", "-3", "1e3",
 * "1700000000.25") into *ret. Returns 0, -EINVAL (empty, not a number,
 * trailing characters, leading space, hex, "nan", "inf") or -ERANGE (too
 * large for a double); *ret is written only on success. */
int parse_double(const char *s, double *ret);

/* Parses a positive duration: digits with an optional unit, "30d", "12h",
 * "15m", "90s" or "120" (seconds), into seconds. Returns 0, -EINVAL (zero,
 * negative, no digits, unknown unit, trailing characters) or -ERANGE (over
 * PARSE_DURATION_MAX). */
int parse_duration(const char *s, long *ret_seconds);
