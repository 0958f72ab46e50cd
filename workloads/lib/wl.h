/* Helpers shared by schedlab's guest workloads (share, slice, crashme):
 * checked number parsing and the one-JSON-object result line. */
#pragma once

#include <json-c/json.h>

/* Parses a decimal unsigned integer of at most 10 digits, no sign, no
 * spaces, into *ret when it is <= max. 0 or -EINVAL. */
int wl_parse_uint(const char *s, unsigned long max, unsigned long *ret);

/* Parses a finite decimal number in [min, max] into *ret. 0 or -EINVAL. */
int wl_parse_double(const char *s, double min, double max, double *ret);

/* A json-c double that serializes with at most sig significant digits
 * ("0.2501", not "0.25009999999999999"). A NaN or infinity becomes null. */
json_object *wl_json_double(double v, int sig);

/* Prints {"tool":tool,"metrics":metrics,"details":details} as one line on
 * stdout and flushes. Takes ownership of metrics and details. */
void wl_print_result(const char *tool, json_object *metrics, json_object *details);
