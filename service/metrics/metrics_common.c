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
	if (len > METRICS_MAX_JSON_BYTES)
		return error_set(err, ERR_INVALID, 0,
				 "The %s is %zu bytes long; at most %d are accepted.", what, len,
				 METRICS_MAX_JSON_BYTES);
	if (strnlen(text, len) != len)
		return error_set(err, ERR_INVALID, 0, "The %s contains a NUL byte.", what);
	json_tokener *tok = json_tokener_new();
	if (!tok)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	json_tokener_set_flags(tok, JSON_TOKENER_VALIDATE_UTF8);
	json_object *o = json_tokener_parse_ex(tok, text, (int)len);
	enum json_tokener_error jerr = json_tokener_get_error(tok);
	size_t end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (jerr == json_tokener_continue)
		return error_set(err, ERR_INVALID, 0,
				 "The %s is cut off: its JSON ends before the value is complete.",
				 what);
	if (jerr != json_tokener_success)
		return error_set(err, ERR_INVALID, 0, "The %s is not valid JSON: %s at byte %zu.",
				 what, json_tokener_error_desc(jerr), end);
	for (size_t i = end; i < len; i++)
		if (!strchr(" \t\r\n", text[i])) {
			json_object_put(o);
			return error_set(err, ERR_INVALID, 0,
					 "The %s has data after its JSON value (at byte %zu).",
					 what, i);
		}
	if (!json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return error_set(err, ERR_INVALID, 0, "The %s is not a JSON object.", what);
	}
	*ret = o;
	return 0;
}
