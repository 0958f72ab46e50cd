/* Helpers the metric plug-ins share: number formatting, metric names and a
 * strict parser for the JSON a tool wrote. See metrics-internal.h. */
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"
#include "metrics/metrics-internal.h"
#include "util/json.h"
#include "util/json_get.h"

json_object *metrics_number(double v)
{
	if (v == floor(v) && fabs(v) < 9007199254740992.0)
		return json_object_new_int64((int64_t)v);
	/* The value kept is the value written: a result stores 10 significant
	 * digits, and a comparison made now must equal one re-made later from
	 * the stored runs (rerun, the service's store, a reader checking it). */
	char buf[32];
	snprintf(buf, sizeof(buf), "%.10g", v);
	return json_object_new_double_s(strtod(buf, NULL), buf);
}

bool metrics_name_ok(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n > METRICS_MAX_NAME)
		return false;
	for (const char *c = name; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_' ||
		      *c == '.'))
			return false;
	return true;
}

int metrics_parse_json(const char *text, size_t len, const char *what, json_object **ret,
		       struct sl_error *err)
{
	const struct json_limits lim = {.max_bytes = METRICS_MAX_JSON_BYTES,
					.max_values = METRICS_MAX_JSON_VALUES};
	json_object *o = NULL;
	int r = json_parse_strict(text, len, &lim, what, &o, err);
	if (r < 0)
		return r;
	if (!json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return error_set(err, ERR_INVALID, 0, "The %s is not a JSON object.", what);
	}
	*ret = o;
	return 0;
}

int metrics_each_line(const char *text, size_t len, const char *what,
		      int (*fn)(const char *line, size_t line_len, void *ctx), void *ctx,
		      struct sl_error *err)
{
	if (len > METRICS_MAX_JSON_BYTES)
		return error_set(err, ERR_INVALID, 0, "The %s is larger than %d bytes.", what,
				 METRICS_MAX_JSON_BYTES);
	if (memchr(text, '\0', len))
		return error_set(err, ERR_INVALID, 0, "The %s holds a NUL byte.", what);
	size_t at = 0;
	while (at < len) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t end = nl ? (size_t)(nl - text) : len;
		size_t n = end - at;
		if (n > 0 && text[at + n - 1] == '\r')
			n--;
		int r = fn(text + at, n, ctx);
		if (r)
			return r;
		at = end + 1;
	}
	return 0;
}

int metrics_parse_nonneg(const char *s, size_t len, double *ret)
{
	char buf[33];
	if (len == 0 || len >= sizeof(buf) || s[0] == '.')
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		if (!strchr("0123456789.", s[i]) || s[i] == '\0')
			return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	char *end = NULL;
	errno = 0;
	double v = strtod(buf, &end);
	if (errno || *end || !isfinite(v))
		return -EINVAL;
	*ret = v;
	return 0;
}

const struct metrics_name *metrics_name_find(const struct metrics_name *names, size_t n,
					     const char *metric)
{
	for (size_t i = 0; metric && i < n; i++)
		if (fnmatch(names[i].pattern, metric, 0) == 0)
			return &names[i];
	return NULL;
}
