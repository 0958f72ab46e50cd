/* Shared workload helpers; see wl.h. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/wl.h"

int wl_parse_uint(const char *s, unsigned long max, unsigned long *ret)
{
	char *end = NULL;
	size_t n = s ? strlen(s) : 0;

	if (n == 0 || n > 10 || strspn(s, "0123456789") != n)
		return -EINVAL;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return -EINVAL;
	*ret = v;
	return 0;
}

int wl_parse_double(const char *s, double min, double max, double *ret)
{
	char *end = NULL;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || *end || !isfinite(v) || v < min || v > max)
		return -EINVAL;
	*ret = v;
	return 0;
}

json_object *wl_json_double(double v, int sig)
{
	char buf[64];

	if (!isfinite(v))
		return NULL;
	snprintf(buf, sizeof(buf), "%.*g", sig, v);
	/* "%g" may print "1e+06": valid JSON, and json-c keeps the text */
	return json_object_new_double_s(v, buf);
}

void wl_print_result(const char *tool, json_object *metrics, json_object *details)
{
	json_object *out = json_object_new_object();

	json_object_object_add(out, "tool", json_object_new_string(tool));
	json_object_object_add(out, "metrics", metrics);
	json_object_object_add(out, "details", details);
	printf("%s\n", json_object_to_json_string_ext(out, JSON_C_TO_STRING_PLAIN |
							       JSON_C_TO_STRING_NOSLASHESCAPE));
	fflush(stdout);
	json_object_put(out);
}
