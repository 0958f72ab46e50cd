/* Helpers the metric plug-ins share: number formatting, metric names and a
 * strict parser for the JSON a tool wrote. See metrics-internal.h. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "metrics/metrics.h"
#include "metrics/metrics-internal.h"
#include "util/json.h"

json_object *metrics_get(json_object *o, const char *key)
{
	json_object *v = NULL;
	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

json_object *metrics_number(double v)
{
	if (v == floor(v) && fabs(v) < 9007199254740992.0)
		return json_object_new_int64((int64_t)v);
	char buf[32];
	snprintf(buf, sizeof(buf), "%.10g", v);
	return json_object_new_double_s(v, buf);
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
	const struct json_limits lim = {.max_bytes = METRICS_MAX_JSON_BYTES};
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
